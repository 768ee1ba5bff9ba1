//! The cuBLAS calls: one handle bound to the device's stream, a Result-returning ZGEMM
//! (cudarc's safe `Gemm` trait has no complex types, so this wraps `cublasZgemm_v2` of its
//! `sys` layer once) and the batched Householder QR `cublasZgeqrfBatched`.

use crate::error::{Error, Result};
use crate::gpu::device::{cuda_err, Device};
use cudarc::cublas::{result as br, sys as bsys};
use num_complex::Complex64 as C64;

/// `op(X)` of a GEMM operand.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    N,
    T,
}

pub struct Blas {
    handle: bsys::cublasHandle_t,
}

// SAFETY: the handle is used from one thread at a time (the backend is `Send`, not `Sync`).
unsafe impl Send for Blas {}

impl Blas {
    pub fn new(dev: &Device) -> Result<Blas> {
        dev.bind()?;
        let handle = br::create_handle().map_err(|e| cuda_err("cublasCreate", e))?;
        let b = Blas { handle };
        unsafe { br::set_stream(handle, dev.stream.cu_stream() as bsys::cudaStream_t) }
            .map_err(|e| cuda_err("cublasSetStream", e))?;
        Ok(b)
    }

    /// Column-major `C (m×n) ← α op(A) op(B) + β C` on device addresses.
    ///
    /// # Safety
    /// The addresses must be live device allocations large enough for the given shapes and
    /// leading dimensions.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn zgemm(
        &self,
        ta: Op,
        tb: Op,
        m: usize,
        n: usize,
        k: usize,
        alpha: C64,
        a: u64,
        lda: usize,
        b: u64,
        ldb: usize,
        beta: C64,
        c: u64,
        ldc: usize,
    ) -> Result<()> {
        let op = |o: Op| match o {
            Op::N => bsys::cublasOperation_t::CUBLAS_OP_N,
            Op::T => bsys::cublasOperation_t::CUBLAS_OP_T,
        };
        let dim = |v: usize, what: &str| {
            i32::try_from(v)
                .map_err(|_| cuda_err("cublasZgemm", format!("{what} = {v} exceeds i32")))
        };
        let al = bsys::double2 {
            x: alpha.re,
            y: alpha.im,
        };
        let be = bsys::double2 {
            x: beta.re,
            y: beta.im,
        };
        bsys::cublasZgemm_v2(
            self.handle,
            op(ta),
            op(tb),
            dim(m, "m")?,
            dim(n, "n")?,
            dim(k, "k")?,
            &al,
            a as *const bsys::cuDoubleComplex,
            dim(lda, "lda")?,
            b as *const bsys::cuDoubleComplex,
            dim(ldb, "ldb")?,
            &be,
            c as *mut bsys::cuDoubleComplex,
            dim(ldc, "ldc")?,
        )
        .result()
        .map_err(|e| cuda_err("cublasZgemm", e))
    }

    /// Batched Householder QR (LAPACK's `zgeqrf` convention) of `batch` column-major
    /// `m × n` matrices in place: `R` on and above the diagonal, the reflectors
    /// `H_k = I − τ_k v_k v_kᴴ` (`v_k(k) = 1` implicit) below it, `τ` in the tau vectors.
    /// `a_array` and `tau_array` are device arrays of `batch` device addresses (one per
    /// matrix, of leading dimension `lda`, and one per vector of `min(m, n)` entries).
    /// Queued on the handle's stream.
    ///
    /// # Safety
    /// Both pointer arrays must be live device allocations of at least `batch` addresses,
    /// each naming a live device allocation large enough for its matrix or vector.
    pub unsafe fn zgeqrf_batched(
        &self,
        m: usize,
        n: usize,
        a_array: u64,
        lda: usize,
        tau_array: u64,
        batch: usize,
    ) -> Result<()> {
        let dim = |v: usize, what: &str| {
            i32::try_from(v)
                .map_err(|_| cuda_err("cublasZgeqrfBatched", format!("{what} = {v} exceeds i32")))
        };
        let mut info: std::ffi::c_int = 0;
        bsys::cublasZgeqrfBatched(
            self.handle,
            dim(m, "m")?,
            dim(n, "n")?,
            a_array as *const *mut bsys::cuDoubleComplex,
            dim(lda, "lda")?,
            tau_array as *const *mut bsys::cuDoubleComplex,
            &mut info,
            dim(batch, "batchSize")?,
        )
        .result()
        .map_err(|e| cuda_err("cublasZgeqrfBatched", format!("{e} (info = {info})")))?;
        if info != 0 {
            return Err(Error::Cuda(format!(
                "cublasZgeqrfBatched failed: info = {info} (argument {} invalid; m = {m}, n = {n}, lda = {lda}, batch = {batch})",
                -info
            )));
        }
        Ok(())
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        let _ = unsafe { br::destroy_handle(self.handle) };
    }
}
