//! GPU backend of the row reduction over Z/p, p < 2^31 prime, `u32` words
//! (`kernels/rref_zp.cu`, compiled by NVRTC with the prime as a `#define`).
//!
//! Two algorithms, both Gauss–Jordan on a row-major device matrix without row swaps (the
//! final row order is gathered at the end), both picking as pivot the candidate of
//! smallest input row index with a non-zero entry — the CPU engine's rule, so the result
//! (RREF, pivots, row order, pivot values) equals [`super::echelonize`]'s exactly:
//!
//! * [`GpuAlgo::Columns`]: a kernel sequence per column as in Linac (pivot search,
//!   multipliers and pivot inverse, pivot-row scaling, rank-1 elimination of every other
//!   row with a non-zero multiplier). The pivot index lives in device memory; kernels of
//!   a free column exit at once, so the host never waits inside the loop.
//! * [`GpuAlgo::Blocked`]: panels of 64 or 128 columns. The panel is factored with the
//!   per-column sequence on a column-major copy of its columns (candidate rows only) and
//!   full-width pivot rows kept mutually reduced; the trailing update `R ← R − M·P` of
//!   every other row is one FP64 DGEMM that is exact: with `M` balanced
//!   (|m| < 2^30) split as `m = d0 + 2^16·d1` (|d0| ≤ 2^15, |d1| ≤ 2^14 + 1) and
//!   `P' = 2^16·P mod p`, `[d0 | d1] · [P ; P'] ≡ M·P (mod p)` and every partial sum is an
//!   integer below `k·3·2^44 ≤ 3·2^51 < 2^53` for `k ≤ 128` pivots. An epilogue kernel
//!   reduces mod p and subtracts.

use super::dense::Matrix;
use super::echelon::Echelon;
use super::field::Zp32;
use crate::error::{Error, Result};
use crate::gpu::{cuda_err, guarded, DBuf, Device, Timer};
use cudarc::cublas::{result as br, sys as bsys};
use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use std::time::Instant;

const SOURCE: &str = include_str!("../../../kernels/rref_zp.cu");

/// Largest panel width of the blocked algorithm (the DGEMM exactness bound allows up to 170).
pub const PANEL: usize = 128;

/// `ctl[0]` value when no pivot was found.
pub(super) const NONE: u32 = u32::MAX;

const THREADS: u32 = 256;

/// Which GPU algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GpuAlgo {
    /// `Columns` below [`CudaRref::auto_blocked_from`] columns, `Blocked` from there on.
    #[value(help = "columns for narrow matrices, blocked for wide ones")]
    Auto,
    /// One kernel sequence per column (Linac's scheme).
    Columns,
    /// Panels of up to [`PANEL`] columns with an exact FP64 DGEMM trailing update.
    #[value(help = "panels of columns with an exact FP64 DGEMM trailing update")]
    Blocked,
}

/// Seconds spent in each phase of one [`CudaRref::rref_zp32`] call.
#[derive(Clone, Copy, Debug, Default)]
pub struct GpuTimes {
    /// Host→device copy of the matrix.
    pub upload: f64,
    /// The elimination and the final row gather (device events).
    pub compute: f64,
    /// Device→host copy of the result.
    pub download: f64,
    /// Wall time of the whole call (without kernel compilation).
    pub total: f64,
    /// Which algorithm ran.
    pub blocked: bool,
}

const K_NAMES: [&str; 15] = [
    "panel_gather",
    "panel_search",
    "panel_pivot_row",
    "panel_pivot_scale",
    "panel_eliminate",
    "panel_step_end",
    "build_m",
    "build_p",
    "apply_update",
    "write_pivots",
    "col_search",
    "col_mults",
    "col_scale",
    "col_eliminate",
    "col_step_end",
];
const GATHER: &str = "gather_rows";

struct Kernels {
    p: u32,
    f: Vec<CudaFunction>,
    gather: CudaFunction,
}

#[derive(Clone, Copy)]
enum K {
    PanelGather = 0,
    PanelSearch,
    PanelPivotRow,
    PanelPivotScale,
    PanelEliminate,
    PanelStepEnd,
    BuildM,
    BuildP,
    ApplyUpdate,
    WritePivots,
    ColSearch,
    ColMults,
    ColScale,
    ColEliminate,
    ColStepEnd,
}

/// A cuBLAS handle bound to the device's stream (DGEMM only).
pub(super) struct Dgemm {
    handle: bsys::cublasHandle_t,
}

impl Dgemm {
    fn new(dev: &Device) -> Result<Dgemm> {
        dev.bind()?;
        let handle = br::create_handle().map_err(|e| cuda_err("cublasCreate", e))?;
        let d = Dgemm { handle };
        unsafe { br::set_stream(handle, dev.stream.cu_stream() as bsys::cudaStream_t) }
            .map_err(|e| cuda_err("cublasSetStream", e))?;
        Ok(d)
    }

    /// Row-major `C (rows × cols, ld ldc) ← A (rows × k, ld lda) · B (k × cols, ld ldb)`,
    /// i.e. column-major `Cᵀ = Bᵀ Aᵀ`.
    ///
    /// # Safety
    /// Live device addresses large enough for the shapes.
    #[allow(clippy::too_many_arguments)]
    unsafe fn rowmajor(
        &self,
        rows: usize,
        cols: usize,
        k: usize,
        a: u64,
        lda: usize,
        b: u64,
        ldb: usize,
        c: u64,
        ldc: usize,
    ) -> Result<()> {
        let i = |v: usize| {
            i32::try_from(v).map_err(|_| cuda_err("cublasDgemm", format!("{v} exceeds i32")))
        };
        let (one, zero) = (1.0f64, 0.0f64);
        let nn = bsys::cublasOperation_t::CUBLAS_OP_N;
        bsys::cublasDgemm_v2(
            self.handle,
            nn,
            nn,
            i(cols)?,
            i(rows)?,
            i(k)?,
            &one,
            b as *const f64,
            i(ldb)?,
            a as *const f64,
            i(lda)?,
            &zero,
            c as *mut f64,
            i(ldc)?,
        )
        .result()
        .map_err(|e| cuda_err("cublasDgemm", e))
    }
}

impl Dgemm {
    /// Column-major `C (m × n, ld ldc) ← α A (m × k, ld lda) · B (k × n, ld ldb) + β C`,
    /// real (`complex == false`, α, β real parts only) or complex (ZGEMM on interleaved
    /// pairs).
    ///
    /// # Safety
    /// Live device addresses large enough for the shapes.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn gemm_cm(
        &self,
        complex: bool,
        m: usize,
        n: usize,
        k: usize,
        alpha: f64,
        a: u64,
        lda: usize,
        b: u64,
        ldb: usize,
        beta: f64,
        c: u64,
        ldc: usize,
    ) -> Result<()> {
        let i = |v: usize| {
            i32::try_from(v).map_err(|_| cuda_err("cublas gemm", format!("{v} exceeds i32")))
        };
        let nn = bsys::cublasOperation_t::CUBLAS_OP_N;
        if complex {
            let al = bsys::double2 { x: alpha, y: 0.0 };
            let be = bsys::double2 { x: beta, y: 0.0 };
            bsys::cublasZgemm_v2(
                self.handle,
                nn,
                nn,
                i(m)?,
                i(n)?,
                i(k)?,
                &al,
                a as *const bsys::cuDoubleComplex,
                i(lda)?,
                b as *const bsys::cuDoubleComplex,
                i(ldb)?,
                &be,
                c as *mut bsys::cuDoubleComplex,
                i(ldc)?,
            )
            .result()
            .map_err(|e| cuda_err("cublasZgemm", e))
        } else {
            bsys::cublasDgemm_v2(
                self.handle,
                nn,
                nn,
                i(m)?,
                i(n)?,
                i(k)?,
                &alpha,
                a as *const f64,
                i(lda)?,
                b as *const f64,
                i(ldb)?,
                &beta,
                c as *mut f64,
                i(ldc)?,
            )
            .result()
            .map_err(|e| cuda_err("cublasDgemm", e))
        }
    }
}

// The handle is only used through `&mut CudaRref` (one thread at a time), after binding the
// device's context on that thread; cuBLAS allows a handle to move between host threads.
unsafe impl Send for Dgemm {}

impl Drop for Dgemm {
    fn drop(&mut self) {
        let _ = unsafe { br::destroy_handle(self.handle) };
    }
}

/// The GPU row-reduction engine on one device; kernels are compiled once per prime.
pub struct CudaRref {
    pub(super) dev: Device,
    pub(super) blas: Dgemm,
    kernels: Option<Kernels>,
    /// Compiled `kernels/rref_gen.cu` modules, keyed by their `#define` header.
    pub(super) gen: Vec<(String, Vec<CudaFunction>)>,
    /// `GpuAlgo::Auto` uses `Blocked` for matrices with at least this many columns
    /// (default 3000; on an H100 both take the same time at n = 2000 and `Blocked` is
    /// 3× faster at 5000).
    pub auto_blocked_from: usize,
    /// Seconds of the last NVRTC compilation (0 when cached).
    pub compile_seconds: f64,
    /// Panel width of the blocked algorithm, 1..=[`PANEL`]; 0 (the default) picks
    /// [`CudaRref::auto_panel`].
    pub panel: usize,
}

pub(super) fn grid(x: usize, y: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (
            (x.div_ceil(THREADS as usize)).max(1) as u32,
            y.clamp(1, 65535) as u32,
            1,
        ),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

pub(super) fn one_thread() -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Sign of a permutation by cycle counting.
pub(super) fn perm_sign(perm: &[usize]) -> i8 {
    let mut seen = vec![false; perm.len()];
    let mut sign = 1i8;
    for s in 0..perm.len() {
        let mut len = 0;
        let mut i = s;
        while !seen[i] {
            seen[i] = true;
            i = perm[i];
            len += 1;
        }
        if len > 0 && len % 2 == 0 {
            sign = -sign;
        }
    }
    sign
}

macro_rules! launch {
    ($self:expr, $k:expr, $cfg:expr; $($arg:expr),*) => {{
        let kk = $self.kernels.as_ref().ok_or_else(|| Error::Internal("rref kernels not loaded".into()))?;
        let f = &kk.f[$k as usize];
        let mut b = $self.dev.stream.launch_builder(f);
        $( b.arg(&$arg); )*
        unsafe { b.launch($cfg) }
            .map_err(|e| cuda_err(&format!("cuLaunchKernel({})", K_NAMES[$k as usize]), e))?;
    }};
}

/// Device buffers of one call.
struct Bufs {
    a: DBuf,
    state: DBuf,
    ctl: DBuf,
    pcols: DBuf,
    prows: DBuf,
    pvals: DBuf,
}

impl CudaRref {
    /// Opens GPU `ordinal` and creates the cuBLAS handle; `Error::Cuda` (never a panic)
    /// without CUDA or without the device.
    pub fn new(ordinal: usize) -> Result<CudaRref> {
        let dev = Device::open(ordinal)?;
        let blas = guarded("creating the cuBLAS handle", || Dgemm::new(&dev))?;
        Ok(CudaRref {
            dev,
            blas,
            kernels: None,
            gen: Vec::new(),
            auto_blocked_from: 3000,
            compile_seconds: 0.0,
            panel: 0,
        })
    }

    /// The panel width used for `n` columns: [`Self::panel`] when set, else 64 below
    /// 15000 columns and 128 from there (on an H100, 64 was fastest at n = 5000 and
    /// 10000, 128 at n = 20000).
    pub fn auto_panel(&self, n: usize) -> usize {
        match self.panel {
            0 if n >= 15000 => PANEL,
            0 => 64,
            b => b.clamp(1, PANEL),
        }
    }

    /// Device name and compute capability.
    pub fn device_description(&self) -> String {
        format!(
            "{} (compute capability {}.{})",
            self.dev.name, self.dev.cc.0, self.dev.cc.1
        )
    }

    fn load(&mut self, p: u32) -> Result<()> {
        if self.kernels.as_ref().is_some_and(|k| k.p == p) {
            self.compile_seconds = 0.0;
            return Ok(());
        }
        let t = Instant::now();
        let src = format!("#define P {p}u\n#define BMAX {PANEL}\n{SOURCE}");
        let mut names: Vec<&str> = K_NAMES.to_vec();
        names.push(GATHER);
        let mut f = crate::gpu::compile(&self.dev, &src, "rref_zp.cu", &names)?;
        let gather = f
            .pop()
            .ok_or_else(|| Error::Internal("gather_rows missing".into()))?;
        self.kernels = Some(Kernels { p, f, gather });
        self.compile_seconds = t.elapsed().as_secs_f64();
        Ok(())
    }

    /// Reduced row echelon form of `a` over `f` on the GPU: the same matrix and
    /// [`Echelon`] (pivots, rank, row order, pivot values, sign; tolerance 0, det_scale 1)
    /// as [`super::echelonize`] with the default options. Errors (no panic) when an entry
    /// is not reduced mod p, the shape exceeds u32 indices or the device fails.
    pub fn rref_zp32(
        &mut self,
        f: &Zp32,
        a: &Matrix<u32>,
        algo: GpuAlgo,
    ) -> Result<(Matrix<u32>, Echelon<u32>, GpuTimes)> {
        let p = f.prime();
        let (m, n) = (a.rows, a.cols);
        if a.data.len() != m * n {
            return Err(Error::Usage(format!(
                "rref --backend cuda: matrix data has {} entries, expected {m} × {n}",
                a.data.len()
            )));
        }
        if let Some(idx) = a.data.iter().position(|&x| x >= p) {
            return Err(Error::Usage(format!(
                "rref --backend cuda: entry ({}, {}) = {} is not reduced mod {p}",
                idx / n.max(1) + 1,
                idx % n.max(1) + 1,
                a.data[idx]
            )));
        }
        if m >= (1 << 31) || n >= (1 << 31) || m.saturating_mul(n) >= (1 << 40) {
            return Err(Error::Usage(format!(
                "rref --backend cuda: {m} × {n} exceeds the supported size"
            )));
        }
        let mut times = GpuTimes::default();
        if m == 0 || n == 0 {
            let e = Echelon {
                pivots: vec![],
                rank: 0,
                row_perm: (0..m).collect(),
                pivot_values: vec![],
                perm_sign: 1,
                tolerance: 0.0,
                det_scale: 1,
            };
            return Ok((a.clone(), e, times));
        }
        guarded("rref on the GPU", || {
            self.load(p)?;
            let blocked = match algo {
                GpuAlgo::Columns => false,
                GpuAlgo::Blocked => true,
                GpuAlgo::Auto => n >= self.auto_blocked_from,
            };
            times.blocked = blocked;
            let t_all = Instant::now();
            let r = m.min(n).max(PANEL);
            let bufs = Bufs {
                a: self.dev.alloc::<u32>(m * n)?,
                state: self.dev.alloc::<u8>(m)?,
                ctl: self.dev.alloc::<u32>(4)?,
                pcols: self.dev.alloc::<u32>(r)?,
                prows: self.dev.alloc::<u32>(r)?,
                pvals: self.dev.alloc::<u32>(r)?,
            };
            self.dev.htod(&bufs.a, &a.data)?;
            self.dev.fill_bytes(&bufs.state, 0)?;
            self.dev.sync()?;
            times.upload = t_all.elapsed().as_secs_f64();
            let timer = Timer::new(&self.dev)?;
            timer.start(&self.dev)?;
            let (pivots, prows, pvals) = if blocked {
                self.blocked(&bufs, m, n)?
            } else {
                self.columns(&bufs, m, n)?
            };
            // Final order: pivot rows by pivot column, then the others in input order.
            let mut is_piv = vec![false; m];
            for &r in &prows {
                is_piv[r] = true;
            }
            let mut row_perm = prows.clone();
            row_perm.extend((0..m).filter(|&r| !is_piv[r]));
            let perm32: Vec<u32> = row_perm.iter().map(|&r| r as u32).collect();
            let perm_d = self.dev.alloc::<u32>(m)?;
            self.dev.htod(&perm_d, &perm32)?;
            let out = self.dev.alloc::<u32>(m * n)?;
            {
                let kk = self
                    .kernels
                    .as_ref()
                    .ok_or_else(|| Error::Internal("no kernels".into()))?;
                let (ap, op, pp) = (bufs.a.ptr, out.ptr, perm_d.ptr);
                let (m32, n32) = (m as u32, n as u32);
                let mut b = self.dev.stream.launch_builder(&kk.gather);
                b.arg(&ap).arg(&op).arg(&m32).arg(&n32).arg(&pp);
                unsafe { b.launch(grid(n, m)) }
                    .map_err(|e| cuda_err("cuLaunchKernel(gather_rows)", e))?;
            }
            times.compute = timer.stop_ms(&self.dev)? / 1e3;
            let t_down = Instant::now();
            let mut data = vec![0u32; m * n];
            self.dev.dtoh(&mut data, &out)?;
            times.download = t_down.elapsed().as_secs_f64();
            times.total = t_all.elapsed().as_secs_f64();
            let rank = pivots.len();
            let e = Echelon {
                perm_sign: perm_sign(&row_perm),
                pivots,
                rank,
                row_perm,
                pivot_values: pvals,
                tolerance: 0.0,
                det_scale: 1,
            };
            Ok((Matrix::from_vec(m, n, data), e, times))
        })
    }

    /// Reads `ctl[1]` and the first `k` recorded pivots.
    fn read_pivots(&self, b: &Bufs) -> Result<(Vec<u32>, Vec<u32>, Vec<u32>)> {
        let mut ctl = [0u32; 4];
        self.dev.dtoh(&mut ctl, &b.ctl)?;
        let k = ctl[1] as usize;
        let mut pc = vec![0u32; k];
        let mut pr = vec![0u32; k];
        let mut pv = vec![0u32; k];
        self.dev.dtoh(&mut pc, &b.pcols)?;
        self.dev.dtoh(&mut pr, &b.prows)?;
        self.dev.dtoh(&mut pv, &b.pvals)?;
        Ok((pc, pr, pv))
    }

    /// Linac's scheme: one kernel sequence per column.
    #[allow(clippy::type_complexity)]
    fn columns(
        &mut self,
        b: &Bufs,
        m: usize,
        n: usize,
    ) -> Result<(Vec<usize>, Vec<usize>, Vec<u32>)> {
        let mult = self.dev.alloc::<u32>(m)?;
        self.dev.htod(&b.ctl, &[NONE, 0, 0, 0])?;
        let (a, st, ctl, pc, pr, pv, mu) = (
            b.a.ptr,
            b.state.ptr,
            b.ctl.ptr,
            b.pcols.ptr,
            b.prows.ptr,
            b.pvals.ptr,
            mult.ptr,
        );
        let (m32, n32, above) = (m as u32, n as u32, 1u32);
        for c in 0..n {
            // Stop once every row is a pivot row (checked every 256 columns).
            if c % 256 == 255 {
                let mut h = [0u32; 4];
                self.dev.dtoh(&mut h, &b.ctl)?;
                if h[1] as usize >= m {
                    break;
                }
            }
            let c32 = c as u32;
            launch!(self, K::ColSearch, grid(m, 1); a, st, m32, n32, c32, ctl);
            launch!(self, K::ColMults, grid(m, 1); a, st, m32, n32, c32, above, ctl, mu, pv);
            launch!(self, K::ColScale, grid(n - c, 1); a, n32, c32, ctl);
            launch!(self, K::ColEliminate, grid(n - c, m); a, m32, n32, c32, ctl, mu);
            launch!(self, K::ColStepEnd, one_thread(); c32, ctl, st, pc, pr);
        }
        let (pcs, prs, pvs) = self.read_pivots(b)?;
        Ok((
            pcs.iter().map(|&x| x as usize).collect(),
            prs.iter().map(|&x| x as usize).collect(),
            pvs,
        ))
    }

    /// Blocked Gauss–Jordan with the exact DGEMM trailing update.
    #[allow(clippy::type_complexity)]
    fn blocked(
        &mut self,
        b: &Bufs,
        m: usize,
        n: usize,
    ) -> Result<(Vec<usize>, Vec<usize>, Vec<u32>)> {
        let q = self.dev.alloc::<u32>(m * PANEL)?;
        let pm = self.dev.alloc::<u32>(PANEL * n)?;
        let xs = self.dev.alloc::<u32>(PANEL)?;
        let nrow = self.dev.alloc::<u32>(n)?;
        let mst = self.dev.alloc::<f64>(m * 2 * PANEL)?;
        let pst = self.dev.alloc::<f64>(2 * PANEL * n)?;
        // The DGEMM output is computed in column chunks of at most 2 GiB.
        let chunk = ((1usize << 28) / m).max(PANEL).min(n);
        let cbuf = self.dev.alloc::<f64>(m * chunk)?;
        let (a, st, ctl, pc, pr, pv) = (
            b.a.ptr,
            b.state.ptr,
            b.ctl.ptr,
            b.pcols.ptr,
            b.prows.ptr,
            b.pvals.ptr,
        );
        let (qp, pmp, xsp, msp, psp, cp) = (q.ptr, pm.ptr, xs.ptr, mst.ptr, pst.ptr, cbuf.ptr);
        let nrp = nrow.ptr;
        let (m32, n32, above) = (m as u32, n as u32, 1u32);
        let mut pivots = Vec::new();
        let mut prows = Vec::new();
        let mut pvals = Vec::new();
        let mut c0 = 0;
        let panel = self.auto_panel(n);
        while c0 < n && pivots.len() < m {
            let bw = panel.min(n - c0);
            let w = n - c0;
            let (c032, bw32, w32) = (c0 as u32, bw as u32, w as u32);
            self.dev.htod(&b.ctl, &[NONE, 0, 0, 0])?;
            launch!(self, K::PanelGather, grid(m * bw, 1); a, qp, m32, n32, c032, bw32);
            for j in 0..bw {
                let j32 = j as u32;
                launch!(self, K::PanelSearch, grid(m, 1); qp, st, m32, j32, ctl);
                launch!(self, K::PanelPivotRow, grid(w, 1); a, n32, c032, w32, j32, ctl, pc, pmp, nrp, xsp, pv);
                launch!(self, K::PanelPivotScale, grid(w, j + 1); w32, ctl, pmp, nrp, xsp);
                launch!(self, K::PanelEliminate, grid(m, (bw - j - 1).max(1)); qp, st, m32, bw32, w32, j32, ctl, pmp);
                launch!(self, K::PanelStepEnd, one_thread(); j32, ctl, st, pc, pr);
            }
            let (pcs, prs, pvs) = self.read_pivots(b)?;
            let k = pcs.len();
            if k > 0 {
                let k32 = k as u32;
                launch!(self, K::BuildM, grid(m * k, 1); a, st, m32, n32, c032, k32, above, pc, msp);
                launch!(self, K::BuildP, grid(k * w, 1); pmp, k32, w32, psp);
                let mut s = 0;
                while s < w {
                    let cw = chunk.min(w - s);
                    // C (m × cw) = Mst (m × 2k) · Pst[:, s..s+cw] (2k × w).
                    unsafe {
                        self.blas
                            .rowmajor(m, cw, 2 * k, msp, 2 * k, pst.at::<f64>(s), w, cp, cw)?
                    };
                    let (s32, cw32) = (s as u32, cw as u32);
                    launch!(self, K::ApplyUpdate, grid(cw, m); a, st, m32, n32, c032, s32, cw32, above, cp);
                    s += cw;
                }
                let mut cfg = grid(w, 1);
                cfg.grid_dim.1 = k32;
                launch!(self, K::WritePivots, cfg; a, st, n32, c032, w32, k32, pr, pmp);
                pivots.extend(pcs.iter().map(|&j| c0 + j as usize));
                prows.extend(prs.iter().map(|&r| r as usize));
                pvals.extend(pvs);
            }
            c0 += bw;
        }
        Ok((pivots, prows, pvals))
    }
}
