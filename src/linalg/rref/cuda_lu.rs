//! Reference timing for the f64 GPU row reduction: cuSOLVER's dense LU with partial
//! pivoting (`cusolverDnDgetrf`) of the same matrix on the same device
//! (`pathtrack bench rref --field f64 --backend cuda`). Not used by the engine itself.

use super::cuda::CudaRref;
use super::dense::Matrix;
use crate::error::{Error, Result};
use crate::gpu::{cuda_err, guarded, Timer};
use cudarc::cusolver::{result as sr, sys as ss};

/// One `getrf` measurement.
#[derive(Clone, Debug)]
pub struct GetrfTimes {
    /// Median device time (events) of `cusolverDnDgetrf` over the repetitions, seconds.
    pub seconds: f64,
    /// `log |det A| = Σ log |U_ii|` from the factors (for a cross-check of the RREF's
    /// pivot values).
    pub log_abs_det: f64,
    /// `devInfo` of the last call (0: success; i > 0: U_ii = 0).
    pub info: i32,
}

impl CudaRref {
    /// LU factorization with partial pivoting of the square `a` by cuSOLVER, timed
    /// `reps` times (after one untimed warm-up call; the matrix is uploaded again before
    /// each call, outside the timed region). `a` is passed row-major, i.e. cuSOLVER
    /// factors `Aᵀ` (same cost, same |det|). `Error::Cuda` naming the cause when
    /// libcusolver is missing or a call fails.
    pub fn getrf_f64(&mut self, a: &Matrix<f64>, reps: usize) -> Result<GetrfTimes> {
        let n = a.rows;
        if a.cols != n || n == 0 {
            return Err(Error::Usage(format!(
                "getrf: {} × {} is not a non-empty square matrix",
                a.rows, a.cols
            )));
        }
        let ni = i32::try_from(n).map_err(|_| Error::Usage(format!("getrf: n = {n}")))?;
        guarded("cuSOLVER getrf", || {
            self.dev.bind()?;
            let h = sr::dn_create().map_err(|e| cuda_err("cusolverDnCreate", e))?;
            struct H(ss::cusolverDnHandle_t);
            impl Drop for H {
                fn drop(&mut self) {
                    let _ = unsafe { sr::dn_destroy(self.0) };
                }
            }
            let h = H(h);
            unsafe { sr::dn_set_stream(h.0, self.dev.stream.cu_stream() as ss::cudaStream_t) }
                .map_err(|e| cuda_err("cusolverDnSetStream", e))?;
            let d = self.dev.alloc::<f64>(n * n)?;
            let mut lwork = 0i32;
            unsafe {
                ss::cusolverDnDgetrf_bufferSize(h.0, ni, ni, d.ptr as *mut f64, ni, &mut lwork)
            }
            .result()
            .map_err(|e| cuda_err("cusolverDnDgetrf_bufferSize", e))?;
            let work = self.dev.alloc::<f64>(lwork.max(1) as usize)?;
            let ipiv = self.dev.alloc::<i32>(n)?;
            let info = self.dev.alloc::<i32>(1)?;
            let timer = Timer::new(&self.dev)?;
            let mut times = Vec::new();
            for rep in 0..=reps.max(1) {
                self.dev.htod(&d, &a.data)?;
                self.dev.sync()?;
                timer.start(&self.dev)?;
                unsafe {
                    ss::cusolverDnDgetrf(
                        h.0,
                        ni,
                        ni,
                        d.ptr as *mut f64,
                        ni,
                        work.ptr as *mut f64,
                        ipiv.ptr as *mut i32,
                        info.ptr as *mut i32,
                    )
                }
                .result()
                .map_err(|e| cuda_err("cusolverDnDgetrf", e))?;
                let ms = timer.stop_ms(&self.dev)?;
                if rep > 0 {
                    times.push(ms / 1e3);
                }
            }
            let mut inf = [0i32; 1];
            self.dev.dtoh(&mut inf, &info)?;
            let mut lu = vec![0f64; n * n];
            self.dev.dtoh(&mut lu, &d)?;
            let log_abs_det = (0..n).map(|i| lu[i * n + i].abs().ln()).sum();
            times.sort_by(|x, y| x.total_cmp(y));
            Ok(GetrfTimes {
                seconds: times[times.len() / 2],
                log_abs_det,
                info: inf[0],
            })
        })
    }
}
