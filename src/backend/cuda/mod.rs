//! CUDA backend (T. Chen, "GPU-accelerated path tracker for polyhedral homotopy", §5–§7):
//! the batch of points goes to the device, where
//!
//! 1. `Z ← log Y` (τ appended) — kernel `log_points`;
//! 2. `exp(Ẑ Â)` with the per-equation shift — kernel `eval_exp`, term-major so that it is
//!    directly the operand of
//! 3. one cuBLAS ZGEMM per equation block, `J_k = E_k · B_kᵀ`, written in place into the
//!    extended-Jacobian array, which is equation-major on the device (`JAC_ROW` in
//!    kernels/common.cuh: the rows of one equation for consecutive points are contiguous;
//!    mixed supports: no zeros multiplied);
//!    alternatively [`EvalMethod::Fused`] does 2–3 in one kernel with register accumulators;
//! 4. `diag(e^{−z}, 1, 1)`, the row equilibration and the unified Euler/Newton solve in one
//!    batched Gauss–Jordan kernel (`gj_directions`, one warp segment per point), or with
//!    [`SolveMethod::Qr`] by `cublasZgeqrfBatched` between two small kernels ([`qr`]).
//!
//! Polyhedral paths: points in log mode (`Points::log_mode`, given as `z = log y`) skip the
//! `log` and the `e^{−z}` scaling and get the last row `e_nᵀ`; points with their own lifts
//! (`Points::lifts`, p × M, uploaded per chunk) use them in the exponent row of `exp(ẐÂ)`
//! and in the ∂h/∂τ column, which is then formed per point (in the fused and generated
//! kernels, or by kernel `tau_column` after the cuBLAS products). One batch may mix modes.
//!
//! Rounds of at most [`HOST_ROUND`] points (the tail of a run, a few hard paths left) are
//! computed on the host by [`HostDirections`]: a device round trip costs more than their
//! work. Points near t = 1 whose Gauss–Jordan condition estimate exceeds
//! [`HOST_RESOLVE_COND`] are solved again on the host, where the residual is recomputed in
//! double-double when its rounding would show in the Newton step (see
//! [`crate::backend::cpu::DD_STEP_NOISE`]); the kernels work in double only.
//!
//! Sizes are compile-time constants of the NVRTC module built in
//! [`Backend::set_homotopy`]. Batches larger than the device memory holds are cut into
//! chunks sized from free memory; an allocation failure halves the chunk and retries.
//! Design notes and measurements: docs/cuda.md, docs/performance.md.

pub mod kernels;
pub mod qr;
pub mod resident;
pub mod step;

use super::cpu::{wants_dd, HostDirections, CHUNK};
use super::{Backend, DirectionsOut};
use crate::error::{Error, Result};
use crate::eval::EvalLayout;
use crate::eval::Points;
use crate::gpu::blas::{Blas, Op};
use crate::gpu::device;
use crate::gpu::{cuda_err, DBuf, Device};
use crate::homotopy::Homotopy;
use cudarc::driver::{LaunchConfig, PushKernelArg};
use kernels::Kernels;
use num_complex::Complex64 as C64;

/// How the extended Jacobian is formed on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalMethod {
    /// `exp(Ẑ Â)` kernel, then one cuBLAS ZGEMM per equation block (the seed's route).
    #[value(help = "exp(Z A) kernel, then one cuBLAS ZGEMM per equation block")]
    Cublas,
    /// One kernel per (point, equation) forming the row with register accumulators.
    Fused,
    /// Like `Fused`, with the homotopy's exponents and coefficients compiled into the
    /// kernel as literals (zero exponents cost nothing); `Fused` beyond
    /// [`kernels::MAX_GEN_TERMS`] terms. Compiled at [`Backend::set_homotopy`] only when
    /// selected before it (the generated source makes NVRTC slower).
    #[value(help = "like fused, with the exponents and coefficients compiled into the kernel")]
    Generated,
}

/// How the Euler/Newton direction system is solved on the device (both give the same
/// outputs: directions p × N and a condition estimate per point).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SolveMethod {
    /// Kernel `gj_directions`: Gauss–Jordan with partial pivoting, one warp segment per
    /// point, everything in registers.
    #[value(name = "gj")]
    GaussJordan,
    /// The seed's route: `cublasZgeqrfBatched` (Householder QR of every point's matrix),
    /// then `Qᴴ` and the back substitution in kernel `qr_directions` ([`qr`]).
    #[value(
        name = "qr",
        help = "batched Householder QR in cuBLAS, then the back substitution in a kernel"
    )]
    Qr,
}

/// Threads per block of the per-point kernels.
const BLOCK: u32 = 128;

/// The homotopy loaded on the device.
struct Loaded {
    /// The homotopy's layout on the host (for [`HostDirections`]).
    layout: EvalLayout,
    n: usize,
    nn: usize,
    m: usize,
    /// (first term, number of terms) of each equation block.
    blocks: Vec<(usize, usize)>,
    k: Kernels,
    /// `Â` term-major, `M × (N+1)` reals.
    ahat: DBuf,
    /// `B_kᵀ` stacked, `M × (N+2)` complex.
    bt: DBuf,
    /// Largest chunk of points the free memory held when the homotopy was loaded.
    max_points: usize,
    /// Whether [`Buffers`] carry the QR workspace ([`SolveMethod::Qr`]).
    qr: bool,
    /// How the kernels were compiled (or taken from the cache) and loaded, in one line
    /// ([`crate::gpu::Compiled::summary`]).
    compile: String,
}

impl Loaded {
    fn nz(&self) -> usize {
        self.nn + 1
    }
    fn w(&self) -> usize {
        self.nn + 2
    }
    fn ext_len(&self) -> usize {
        self.n * self.w()
    }
    /// Device bytes per resident point (all buffers of [`Buffers`], lifts included).
    fn bytes_per_point(&self) -> usize {
        16 * (4 * self.nn + 2 + self.nz() + self.m + self.ext_len())
            + 8 * self.m
            + 10
            + if self.qr {
                qr::QrWork::bytes_per_point(self.nn)
            } else {
                0
            }
    }
}

/// Per-point device buffers, sized for `cap` points.
pub(crate) struct Buffers {
    cap: usize,
    y: DBuf,
    tau: DBuf,
    z: DBuf,
    e: DBuf,
    jac: DBuf,
    euler: DBuf,
    newton: DBuf,
    cond: DBuf,
    y1: DBuf,
    tau1: DBuf,
    /// Per-point log-mode flags (one byte each).
    logm: DBuf,
    /// Per-point selection of the double-double residual (one byte each,
    /// [`CudaBackend::directions_on_device`]).
    ddsel: DBuf,
    /// Per-point lifts, `cap × M` (one entry when allocated without them).
    lifts: DBuf,
    has_lifts: bool,
    /// The workspace of [`SolveMethod::Qr`] (absent with Gauss–Jordan).
    qr: Option<qr::QrWork>,
}

pub struct CudaBackend {
    blas: Blas,
    loaded: Option<Loaded>,
    bufs: Option<Buffers>,
    eval_method: EvalMethod,
    solve_method: SolveMethod,
    /// Cap on points per device chunk (0: from free memory).
    chunk_limit: usize,
    dev: Device,
    /// Small rounds and ill-conditioned points near t = 1, on the host's cores.
    host: HostDirections,
    /// Condition estimate above which points near t = 1 are re-solved by [`HostDirections`]
    /// ([`HOST_RESOLVE_COND`]); `None`: no host offload at all (tests of the kernels).
    host_offload: Option<f64>,
    /// Whole paths tracked in device-resident slots ([`crate::track::resident`]).
    resident_on: bool,
    slots: Option<resident::Slots>,
    /// The host's own paths of a resident run get their directions here from this many on
    /// ([`crate::track::resident::host_on_device_min`]; `usize::MAX`: never).
    host_on_device_min: usize,
    /// The homotopy loaded, for [`Self::side`].
    homotopy: Option<Homotopy>,
    /// A second backend on the same device, with its own stream and buffers, that computes
    /// the directions of a resident run's host paths while the slots iterate on this one's
    /// stream (made at the first such round).
    side: Option<Box<CudaBackend>>,
}

/// Rounds of at most this many points are computed on the host (one CPU chunk).
pub const HOST_ROUND: usize = CHUNK;

/// Points with `Re τ ≥` [`crate::backend::cpu::ACCURATE_RESIDUAL_TAU`] whose condition estimate exceeds this are
/// solved again on the host: `ε·Σ|terms|/row scale ≥ ε`, so below `DD_STEP_NOISE/ε ≈ 450`
/// the host would not recompute the residual either
/// ([`crate::backend::cpu::DD_STEP_NOISE`]).
pub const HOST_RESOLVE_COND: f64 = 4e2;

fn grid1(threads: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (threads.div_ceil(BLOCK as usize).max(1) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn i32_of(p: usize) -> Result<i32> {
    i32::try_from(p).map_err(|_| Error::Internal(format!("chunk of {p} points exceeds i32")))
}

/// Device operands of one batched direction solve: the extended Jacobians `jac` (n × p × W,
/// equation-major, before the `diag(e^{−z})` scaling), the points `y` (p × N), per-point
/// log-mode flags `logm` (0 for none), and the outputs `euler`, `newton` (p × N) and `cond`
/// (p).
#[derive(Clone, Copy, Debug)]
struct SolveOperands {
    jac: u64,
    y: u64,
    logm: u64,
    euler: u64,
    newton: u64,
    cond: u64,
}

impl CudaBackend {
    /// Opens GPU `device`. Fails with `Error::Cuda` (never panics) when the CUDA libraries,
    /// the driver or the device are missing.
    pub fn new(device: usize) -> Result<CudaBackend> {
        Self::open(device, false)
    }

    /// [`Self::new`], its stream at the device's highest priority where `high`.
    fn open(device: usize, high: bool) -> Result<CudaBackend> {
        let dev = Device::open_with(device, high)?;
        let blas = device::guarded("creating the cuBLAS handle", || Blas::new(&dev))?;
        Ok(CudaBackend {
            blas,
            loaded: None,
            bufs: None,
            eval_method: EvalMethod::Fused,
            solve_method: SolveMethod::GaussJordan,
            chunk_limit: 0,
            dev,
            host: HostDirections::new(0)?,
            host_offload: Some(HOST_RESOLVE_COND),
            resident_on: true,
            slots: None,
            host_on_device_min: crate::track::resident::host_on_device_min(),
            homotopy: None,
            side: None,
        })
    }

    /// The host's own paths of a resident run get their directions on the device while
    /// they are at least `n` (`usize::MAX`: always on the host's cores).
    pub fn set_host_on_device_min(&mut self, n: usize) {
        self.host_on_device_min = n;
    }

    /// "NVIDIA H100 80GB HBM3 (device 0, sm_90)".
    pub fn device_description(&self) -> String {
        format!(
            "{} (device {}, sm_{}{})",
            self.dev.name, self.dev.ordinal, self.dev.cc.0, self.dev.cc.1
        )
    }

    pub fn set_eval_method(&mut self, m: EvalMethod) {
        if m != self.eval_method {
            self.bufs = None; // the exp buffer exists only for the cuBLAS route
        }
        self.eval_method = m;
    }

    pub fn eval_method(&self) -> EvalMethod {
        self.eval_method
    }

    /// Selects the direction solve of [`Backend::directions`], resident tracking and
    /// `bench step`. [`SolveMethod::Qr`] needs a workspace of `N(N+3)` complex values per
    /// point, allocated with the buffers; the chunk size sized at
    /// [`Backend::set_homotopy`] follows the change.
    pub fn set_solve_method(&mut self, m: SolveMethod) {
        self.solve_method = m;
        if let Some(l) = self.loaded.as_mut() {
            let qr = m == SolveMethod::Qr;
            if l.qr != qr {
                let before = l.bytes_per_point();
                l.qr = qr;
                l.max_points =
                    (l.max_points as f64 * before as f64 / l.bytes_per_point() as f64) as usize;
                l.max_points = l.max_points.clamp(1, 1 << 22);
            }
        }
    }

    pub fn solve_method(&self) -> SolveMethod {
        self.solve_method
    }

    /// Registers and local-memory bytes per thread of the main kernels (compiler report).
    pub fn kernel_report(&self) -> String {
        let Some(l) = &self.loaded else {
            return String::new();
        };
        let mut v = Vec::new();
        let mut add = |name: &str, f: &cudarc::driver::CudaFunction| {
            v.push(format!(
                "{name}: {} regs, {} B local",
                f.num_regs().unwrap_or(-1),
                f.local_size_bytes().unwrap_or(-1)
            ))
        };
        add("eval_exp", &l.k.eval_exp);
        add("eval_fused", &l.k.eval_fused);
        if let Some(g) = &l.k.eval_gen {
            add("eval_gen", g);
        }
        match self.solve_method {
            SolveMethod::GaussJordan => add("gj_directions", &l.k.gj_directions),
            SolveMethod::Qr => {
                add("qr_build", &l.k.qr_build);
                add("qr_directions", &l.k.qr_directions);
            }
        }
        v.push(l.compile.clone());
        v.join("; ")
    }

    /// Points the device buffers hold now (`None` before the first evaluation): after an
    /// out-of-memory halving, less than a call asked for.
    pub fn buffer_points(&self) -> Option<usize> {
        self.bufs.as_ref().map(|b| b.cap)
    }

    /// Caps the points per device chunk (tests use this to exercise chunking).
    pub fn set_chunk_limit(&mut self, points: usize) {
        self.chunk_limit = points;
    }

    /// `None`: every point's directions come from the kernels, none from the host (for
    /// tests that compare the kernels with the CPU backend); `Some(c)`: small rounds on the
    /// host, and points near t = 1 re-solved there above condition estimate `c` (see the
    /// module's doc; default [`HOST_RESOLVE_COND`]).
    pub fn set_host_offload(&mut self, resolve_cond: Option<f64>) {
        self.host_offload = resolve_cond;
    }

    fn loaded(&self) -> Result<&Loaded> {
        self.loaded
            .as_ref()
            .ok_or_else(|| Error::Internal("CUDA backend used before set_homotopy".into()))
    }

    /// Points per chunk for a call with `p` points.
    fn chunk_for(&self, p: usize) -> Result<usize> {
        let l = self.loaded()?;
        let mut c = p.min(l.max_points).max(1);
        if self.chunk_limit > 0 {
            c = c.min(self.chunk_limit);
        }
        Ok(c)
    }

    /// Makes the buffers hold at least `want` points (and their lift rows when `lifts`);
    /// when the device is out of memory ([`Error::DeviceMemory`]) halves the request (down
    /// to 1) and returns the capacity obtained; any other failure is returned at once.
    fn ensure(&mut self, want: usize, lifts: bool) -> Result<usize> {
        if let Some(b) = &self.bufs {
            let qr_ok = b.qr.is_some() || self.solve_method != SolveMethod::Qr;
            if b.cap >= want && (b.has_lifts || !lifts) && qr_ok {
                return Ok(want);
            }
        }
        self.bufs = None;
        let mut cap = want;
        loop {
            match self.alloc_buffers(cap, lifts) {
                Ok(b) => {
                    self.bufs = Some(b);
                    return Ok(cap);
                }
                Err(Error::DeviceMemory(_)) if cap > 1 => {
                    cap /= 2;
                    if let Some(l) = self.loaded.as_mut() {
                        l.max_points = l.max_points.min(cap);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn alloc_buffers(&self, cap: usize, lifts: bool) -> Result<Buffers> {
        let l = self.loaded()?;
        let d = &self.dev;
        Ok(Buffers {
            cap,
            y: d.alloc::<C64>(cap * l.nn)?,
            tau: d.alloc::<C64>(cap)?,
            z: d.alloc::<C64>(cap * l.nz())?,
            e: d.alloc::<C64>(if self.eval_method == EvalMethod::Cublas {
                cap * l.m
            } else {
                1
            })?,
            jac: d.alloc::<C64>(cap * l.ext_len())?,
            euler: d.alloc::<C64>(cap * l.nn)?,
            newton: d.alloc::<C64>(cap * l.nn)?,
            cond: d.alloc::<f64>(cap)?,
            y1: d.alloc::<C64>(cap * l.nn)?,
            tau1: d.alloc::<C64>(cap)?,
            logm: d.alloc::<u8>(cap)?,
            ddsel: d.alloc::<u8>(cap)?,
            lifts: d.alloc::<f64>(if lifts { cap * l.m } else { 1 })?,
            has_lifts: lifts,
            qr: match self.solve_method {
                SolveMethod::Qr => Some(qr::QrWork::new(d, cap, l.nn)?),
                SolveMethod::GaussJordan => None,
            },
        })
    }

    /// Fills every per-point device buffer with NaN bytes (tests: unwritten outputs show).
    pub fn poison_device_buffers(&mut self) -> Result<()> {
        if let Some(b) = &self.bufs {
            for buf in [
                &b.y, &b.tau, &b.z, &b.e, &b.jac, &b.euler, &b.newton, &b.cond, &b.y1, &b.tau1,
                &b.logm, &b.ddsel, &b.lifts,
            ] {
                self.dev.fill_bytes(buf, 0xff)?;
            }
            for buf in b.qr.iter().flat_map(|w| w.data()) {
                self.dev.fill_bytes(buf, 0xff)?;
            }
            self.dev.sync()?;
        }
        Ok(())
    }

    /// Queues kernels/dd_residual.cu over `p` points at device addresses `y`, `tau` whose
    /// extended Jacobians (from `z`, the evaluation's `log_points` output) are in `jac`: the
    /// residual column of the points `modes` selects, recomputed in double-double.
    #[allow(clippy::too_many_arguments)]
    fn queue_dd_residual(
        &self,
        p: usize,
        y: u64,
        tau: u64,
        pk: PointKinds,
        modes: DdModes,
        z: u64,
        jac: u64,
    ) -> Result<()> {
        let l = self.loaded()?;
        // DD_WARPS = 4 warps per block, one point and equation each
        let cfg = LaunchConfig {
            grid_dim: (p.div_ceil(4) as u32, l.n as u32, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        let (ahat, bt, pi) = (l.ahat.ptr, l.bt.ptr, i32_of(p)?);
        unsafe {
            self.dev
                .stream
                .launch_builder(&l.k.dd_residual)
                .arg(&modes.status)
                .arg(&modes.ddm)
                .arg(&pk.logm)
                .arg(&modes.phase)
                .arg(&y)
                .arg(&tau)
                .arg(&pk.lifts)
                .arg(&z)
                .arg(&ahat)
                .arg(&bt)
                .arg(&jac)
                .arg(&pi)
                .launch(cfg)
        }
        .map(|_| ())
        .map_err(|e| cuda_err("cuLaunchKernel(dd_residual)", e))
    }

    /// The extended Jacobians of [`Backend::extended_jacobians`] with the residual column of
    /// every projective point computed in double-double on the device (kernels/dd_residual.cu,
    /// what the resident slots in double-double mode use; the host's counterpart is
    /// `backend::cpu::accurate_residual`).
    pub fn extended_jacobians_dd(&mut self, pts: &Points<'_>, out: &mut [C64]) -> Result<()> {
        self.extended_jacobians_with(pts, out, true)
    }

    /// [`Backend::extended_jacobians`], with the residual column in double-double where `dd`.
    fn extended_jacobians_with(
        &mut self,
        pts: &Points<'_>,
        out: &mut [C64],
        dd: bool,
    ) -> Result<()> {
        let (ys, taus) = (pts.ys, pts.taus);
        let el = self.loaded()?.ext_len();
        self.check_sizes(ys, taus, el, out.len())?;
        self.check_kinds(pts)?;
        let (nn, n) = (self.loaded()?.nn, self.loaded()?.n);
        self.for_chunks(pts, |this, done, q, pk| {
            let b = this.bufs.as_ref().unwrap();
            this.queue_eval(q, b.y.ptr, b.tau.ptr, pk, b.z.ptr, b.e.ptr, b.jac.ptr)?;
            if dd {
                let all = DdModes::default();
                this.queue_dd_residual(q, b.y.ptr, b.tau.ptr, pk, all, b.z.ptr, b.jac.ptr)?;
            }
            let l = this.loaded()?;
            let (pi, y, jac, logm) = (i32_of(q)?, b.y.ptr, b.jac.ptr, pk.logm);
            unsafe {
                this.dev
                    .stream
                    .launch_builder(&l.k.scale_ext)
                    .arg(&y)
                    .arg(&logm)
                    .arg(&jac)
                    .arg(&pi)
                    .launch(grid1(q * n * nn))
            }
            .map_err(|e| cuda_err("cuLaunchKernel(scale_ext)", e))?;
            // the device's equation-major rows to `out`'s point-major ones
            let w = el / n;
            let mut host = vec![C64::new(0.0, 0.0); q * el];
            this.dev.dtoh(&mut host, &b.jac)?;
            let out = &mut out[done * el..(done + q) * el];
            for (k, rows) in host.chunks_exact(q * w).enumerate() {
                for (i, row) in rows.chunks_exact(w).enumerate() {
                    out[i * el + k * w..i * el + (k + 1) * w].copy_from_slice(row);
                }
            }
            Ok(())
        })
    }

    /// Runs `chunk(self, done, q, kinds)` over `pts` in chunks `done .. done + q` that fit
    /// the device buffers ([`Self::chunk_for`], [`Self::ensure`]), each chunk's points
    /// uploaded first ([`Self::upload_points`], which gives their kinds).
    fn for_chunks(
        &mut self,
        pts: &Points<'_>,
        mut chunk: impl FnMut(&mut Self, usize, usize, PointKinds) -> Result<()>,
    ) -> Result<()> {
        let p = pts.taus.len();
        let mut done = 0;
        while done < p {
            let want = self.chunk_for(p - done)?;
            let q = self.ensure(want, pts.lifts.is_some())?;
            self.dev.bind()?;
            let pk = self.upload_points(pts, done, q)?;
            chunk(self, done, q, pk)?;
            done += q;
        }
        Ok(())
    }

    /// Queues the extended Jacobians (before the `diag(e^{−z})` scaling) of `p` points at
    /// device addresses `y`, `tau` into `jac`, with scratch `z` and `e`. `pk` says which
    /// points are in log mode and which lifts they carry (device addresses, 0 for none).
    #[allow(clippy::too_many_arguments)]
    fn queue_eval(
        &self,
        p: usize,
        y: u64,
        tau: u64,
        pk: PointKinds,
        z: u64,
        e: u64,
        jac: u64,
    ) -> Result<()> {
        let l = self.loaded()?;
        let s = &self.dev.stream;
        let pi = i32_of(p)?;
        let (logm, lifts) = (pk.logm, pk.lifts);
        unsafe {
            s.launch_builder(&l.k.log_points)
                .arg(&y)
                .arg(&tau)
                .arg(&logm)
                .arg(&z)
                .arg(&pi)
                .launch(grid1(p * l.nz()))
        }
        .map_err(|e| cuda_err("cuLaunchKernel(log_points)", e))?;
        let cfg2 = LaunchConfig {
            grid_dim: (p.div_ceil(BLOCK as usize) as u32, l.n as u32, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        // eval_fused / eval_gen: EV_THREADS = 64 points per block
        let cfg64 = LaunchConfig {
            grid_dim: (p.div_ceil(64) as u32, l.n as u32, 1),
            block_dim: (64, 1, 1),
            shared_mem_bytes: 0,
        };
        let (ahat, bt) = (l.ahat.ptr, l.bt.ptr);
        let method = match (self.eval_method, &l.k.eval_gen) {
            (EvalMethod::Generated, None) => EvalMethod::Fused,
            (m, _) => m,
        };
        match method {
            EvalMethod::Generated if lifts != 0 => unsafe {
                s.launch_builder(l.k.eval_gen_lift.as_ref().unwrap())
                    .arg(&z)
                    .arg(&lifts)
                    .arg(&jac)
                    .arg(&pi)
                    .launch(cfg64)
            }
            .map(|_| ())
            .map_err(|e| cuda_err("cuLaunchKernel(eval_gen_lift)", e))?,
            EvalMethod::Generated => unsafe {
                s.launch_builder(l.k.eval_gen.as_ref().unwrap())
                    .arg(&z)
                    .arg(&jac)
                    .arg(&pi)
                    .launch(cfg64)
            }
            .map(|_| ())
            .map_err(|e| cuda_err("cuLaunchKernel(eval_gen)", e))?,
            EvalMethod::Fused => unsafe {
                s.launch_builder(&l.k.eval_fused)
                    .arg(&z)
                    .arg(&ahat)
                    .arg(&bt)
                    .arg(&lifts)
                    .arg(&jac)
                    .arg(&pi)
                    .launch(cfg64)
            }
            .map(|_| ())
            .map_err(|e| cuda_err("cuLaunchKernel(eval_fused)", e))?,
            EvalMethod::Cublas => {
                unsafe {
                    s.launch_builder(&l.k.eval_exp)
                        .arg(&z)
                        .arg(&ahat)
                        .arg(&lifts)
                        .arg(&e)
                        .arg(&pi)
                        .launch(cfg2)
                }
                .map_err(|e| cuda_err("cuLaunchKernel(eval_exp)", e))?;
                let w = l.w();
                let one = C64::new(1.0, 0.0);
                let zero = C64::new(0.0, 0.0);
                for (k, &(start, len)) in l.blocks.iter().enumerate() {
                    // column-major J_k (W × p, ld W: equation k's rows of the
                    // equation-major jac) = B_kᵀ-as-(W × m_k) · E_kᵀ,
                    // E_k stored p × m_k column-major (ld p).
                    unsafe {
                        self.blas.zgemm(
                            Op::N,
                            Op::T,
                            w,
                            p,
                            len,
                            one,
                            bt + (start * w * 16) as u64,
                            w,
                            e + (start * p * 16) as u64,
                            p,
                            zero,
                            jac + (k * p * w * 16) as u64,
                            w,
                        )?;
                    }
                }
                if lifts != 0 {
                    unsafe {
                        s.launch_builder(&l.k.tau_column)
                            .arg(&e)
                            .arg(&bt)
                            .arg(&lifts)
                            .arg(&jac)
                            .arg(&pi)
                            .launch(cfg2)
                    }
                    .map_err(|e| cuda_err("cuLaunchKernel(tau_column)", e))?;
                }
            }
        }
        Ok(())
    }

    /// Queues the directions of `p` points at `y`, `tau` (device) into `euler`, `newton`,
    /// `cond`, using the backend's scratch buffers.
    #[allow(clippy::too_many_arguments)]
    fn queue_directions(
        &self,
        p: usize,
        y: u64,
        tau: u64,
        pk: PointKinds,
        euler: u64,
        newton: u64,
        cond: u64,
    ) -> Result<()> {
        let b = self
            .bufs
            .as_ref()
            .ok_or_else(|| Error::Internal("CUDA buffers not allocated".into()))?;
        self.queue_eval(p, y, tau, pk, b.z.ptr, b.e.ptr, b.jac.ptr)?;
        self.queue_solve(
            p,
            SolveOperands {
                jac: b.jac.ptr,
                y,
                logm: pk.logm,
                euler,
                newton,
                cond,
            },
        )
    }

    /// Queues the direction solve of the selected [`SolveMethod`] of `p` points.
    fn queue_solve(&self, p: usize, o: SolveOperands) -> Result<()> {
        match self.solve_method {
            SolveMethod::GaussJordan => self.queue_gj(p, o),
            SolveMethod::Qr => self.queue_qr(p, o),
        }
    }

    /// Queues the Gauss–Jordan direction solve of `p` points.
    fn queue_gj(&self, p: usize, o: SolveOperands) -> Result<()> {
        let SolveOperands {
            jac,
            y,
            logm,
            euler,
            newton,
            cond,
        } = o;
        let l = self.loaded()?;
        let pi = i32_of(p)?;
        unsafe {
            self.dev
                .stream
                .launch_builder(&l.k.gj_directions)
                .arg(&jac)
                .arg(&y)
                .arg(&logm)
                .arg(&euler)
                .arg(&newton)
                .arg(&cond)
                .arg(&pi)
                .launch({
                    let threads = kernels::gj_threads(l.k.seg);
                    let groups = p.div_ceil(threads / l.k.seg);
                    let blocks = if kernels::gj_persistent(l.k.seg) {
                        groups.min(l.k.gj_resident_blocks)
                    } else {
                        groups
                    };
                    LaunchConfig {
                        grid_dim: (blocks.max(1) as u32, 1, 1),
                        block_dim: (threads as u32, 1, 1),
                        shared_mem_bytes: 0,
                    }
                })
        }
        .map_err(|e| cuda_err("cuLaunchKernel(gj_directions)", e))?;
        Ok(())
    }

    fn check_sizes(
        &self,
        ys: &[C64],
        taus: &[C64],
        per_point_out: usize,
        out: usize,
    ) -> Result<()> {
        let l = self.loaded()?;
        let p = taus.len();
        if ys.len() != p * l.nn || out != p * per_point_out {
            return Err(Error::Internal(format!(
                "CUDA backend: {} coordinates, {p} parameters, {out} outputs do not match N = {}",
                ys.len(),
                l.nn
            )));
        }
        Ok(())
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> String {
        "cuda".into()
    }

    fn certifier(
        &self,
        system: &crate::system::System,
    ) -> Result<Option<Box<dyn crate::certify::BatchCertifier>>> {
        let c = crate::certify::cuda::GpuCertifier::new(self.dev.ordinal, system)?;
        Ok(Some(Box::new(c)))
    }

    fn setup_note(&self) -> Option<String> {
        self.loaded.as_ref().map(|l| l.compile.clone())
    }

    fn set_homotopy(&mut self, h: &Homotopy) -> Result<()> {
        self.slots = None;
        self.bufs = None;
        self.loaded = None;
        self.side = None;
        self.homotopy = Some(h.clone());
        let layout = EvalLayout::new(h);
        let (n, nn, m) = (layout.n, layout.nh, layout.m);
        if layout.blocks.iter().any(|b| b.len == 0) {
            return Err(Error::Usage(
                "the homotopy has an equation without terms".into(),
            ));
        }
        let mut bstart: Vec<usize> = layout.blocks.iter().map(|b| b.start).collect();
        bstart.push(m);
        let (k, compiled) = device::guarded("compiling the CUDA kernels", || {
            kernels::build(
                &self.dev,
                &layout,
                &bstart,
                self.eval_method == EvalMethod::Generated,
            )
        })?;
        let compile = compiled.summary();
        let nz = nn + 1;
        // Â term-major: column c of the row-major (N+1) × M matrix.
        let mut ahat = vec![0.0f64; m * nz];
        for c in 0..m {
            for j in 0..nz {
                ahat[c * nz + j] = layout.a_hat[j * m + c];
            }
        }
        let bt: Vec<C64> = layout
            .blocks
            .iter()
            .flat_map(|b| b.bt.iter().copied())
            .collect();
        let d_ahat = self.dev.alloc::<f64>(ahat.len())?;
        self.dev.htod(&d_ahat, &ahat)?;
        let d_bt = self.dev.alloc::<C64>(bt.len())?;
        self.dev.htod(&d_bt, &bt)?;
        self.dev.sync()?;
        let mut loaded = Loaded {
            n,
            nn,
            m,
            blocks: layout.blocks.iter().map(|b| (b.start, b.len)).collect(),
            k,
            ahat: d_ahat,
            bt: d_bt,
            max_points: 1,
            qr: self.solve_method == SolveMethod::Qr,
            compile,
            layout,
        };
        let (free, _) = self.dev.mem_info()?;
        loaded.max_points =
            ((free as f64 * 0.7) as usize / loaded.bytes_per_point()).clamp(1, 1 << 22);
        self.loaded = Some(loaded);
        Ok(())
    }

    fn extended_jacobians(&mut self, pts: &Points<'_>, out: &mut [C64]) -> Result<()> {
        self.extended_jacobians_with(pts, out, false)
    }

    fn directions(&mut self, pts: &Points<'_>, mut out: DirectionsOut<'_>) -> Result<()> {
        let (nn, p) = self.check_directions(pts, &out)?;
        if self.host_offload.is_some() && p <= HOST_ROUND {
            let Some(l) = self.loaded.as_ref() else {
                return Err(Error::Internal("backend used before set_homotopy".into()));
            };
            self.host.run(&l.layout, pts, out);
            return Ok(());
        }
        self.for_chunks(pts, |this, done, q, pk| {
            let b = this.bufs.as_ref().unwrap();
            this.queue_directions(
                q,
                b.y.ptr,
                b.tau.ptr,
                pk,
                b.euler.ptr,
                b.newton.ptr,
                b.cond.ptr,
            )?;
            this.download_directions(done, q, nn, &mut out)
        })?;
        if let Some(c) = self.host_offload {
            self.resolve_on_host(pts, out, |pts, i, cond| wants_dd(pts, i, || !(cond <= c)));
        }
        Ok(())
    }

    fn pci_bus_id(&self) -> Option<String> {
        Some(self.dev.pci_bus_id.clone())
    }

    fn resident(&mut self) -> Option<&mut dyn crate::track::resident::ResidentTracker> {
        if self.resident_on {
            Some(self)
        } else {
            None
        }
    }
}

impl CudaBackend {
    /// [`Backend::directions`] with the residuals that the host would take in double-double
    /// computed in double-double on the device (kernels/dd_residual.cu, complex τ included:
    /// the points of Cauchy loops): every point asking for
    /// [`crate::eval::Residual::DoubleDouble`], and every [`crate::eval::Residual::Adaptive`]
    /// point with `Re τ ≥` [`crate::backend::cpu::ACCURATE_RESIDUAL_TAU`] (all of them: on
    /// the device the host's noise test costs about what the residual does). Only points
    /// whose condition estimate is not finite are solved again on the host. This is how the
    /// host's own paths of a resident run (endgames, Cauchy loops) get their directions
    /// ([`crate::track::resident::ResidentTracker::device_directions`]): their evaluations
    /// are most of a large solve's work.
    pub fn directions_on_device(
        &mut self,
        pts: &Points<'_>,
        mut out: DirectionsOut<'_>,
    ) -> Result<()> {
        use crate::backend::cpu::ACCURATE_RESIDUAL_TAU;
        use crate::eval::Residual;
        let (nn, p) = self.check_directions(pts, &out)?;
        let selected: Vec<u8> = (0..p)
            .map(|i| {
                let dd = !pts.is_log(i)
                    && match pts.residual(i) {
                        Residual::EulerOnly => false,
                        Residual::DoubleDouble => true,
                        Residual::Adaptive => pts.taus[i].re >= ACCURATE_RESIDUAL_TAU,
                    };
                dd as u8
            })
            .collect();
        self.for_chunks(pts, |this, done, q, pk| {
            let b = this.bufs.as_ref().unwrap();
            this.queue_eval(q, b.y.ptr, b.tau.ptr, pk, b.z.ptr, b.e.ptr, b.jac.ptr)?;
            let sel = &selected[done..done + q];
            if sel.iter().any(|&v| v != 0) {
                this.dev.htod(&b.ddsel, sel)?;
                let modes = DdModes {
                    ddm: b.ddsel.ptr,
                    ..DdModes::default()
                };
                this.queue_dd_residual(q, b.y.ptr, b.tau.ptr, pk, modes, b.z.ptr, b.jac.ptr)?;
            }
            this.queue_solve(
                q,
                SolveOperands {
                    jac: b.jac.ptr,
                    y: b.y.ptr,
                    logm: pk.logm,
                    euler: b.euler.ptr,
                    newton: b.newton.ptr,
                    cond: b.cond.ptr,
                },
            )?;
            this.download_directions(done, q, nn, &mut out)
        })?;
        self.resolve_on_host(pts, out, |_, _, cond| !cond.is_finite());
        Ok(())
    }

    /// [`Self::directions_on_device`] on [`Self::side`]'s stream, made (and given the
    /// homotopy: its kernels come from the cache that this backend's compilation filled)
    /// on the first call.
    pub(crate) fn directions_beside(
        &mut self,
        pts: &Points<'_>,
        out: DirectionsOut<'_>,
    ) -> Result<()> {
        if self.side.is_none() {
            let h = self
                .homotopy
                .as_ref()
                .ok_or_else(|| Error::Internal("CUDA backend used before set_homotopy".into()))?;
            // Its stream at the highest priority: its small rounds, which the host waits
            // for, go before the slots' next kernels.
            let mut side = CudaBackend::open(self.dev.ordinal, true)?;
            side.resident_on = false;
            side.solve_method = self.solve_method;
            side.eval_method = self.eval_method;
            side.set_homotopy(h)?;
            self.side = Some(Box::new(side));
        }
        let side = self.side.as_mut().expect("made above");
        side.dev.bind()?;
        side.directions_on_device(pts, out)
    }

    /// Checks the points' kinds and the outputs' sizes of a directions call; returns
    /// (coordinates per point, points).
    fn check_directions(
        &self,
        pts: &Points<'_>,
        out: &DirectionsOut<'_>,
    ) -> Result<(usize, usize)> {
        let nn = self.loaded()?.nn;
        self.check_sizes(pts.ys, pts.taus, nn, out.euler.len())?;
        self.check_kinds(pts)?;
        let p = pts.taus.len();
        if out.newton.len() != p * nn || out.cond.len() != p {
            return Err(Error::Internal("CUDA backend: output sizes".into()));
        }
        Ok((nn, p))
    }

    /// Copies the directions of chunk `done .. done + q` from the buffers into `out`.
    fn download_directions(
        &self,
        done: usize,
        q: usize,
        nn: usize,
        out: &mut DirectionsOut<'_>,
    ) -> Result<()> {
        let b = self
            .bufs
            .as_ref()
            .ok_or_else(|| Error::Internal("CUDA buffers not allocated".into()))?;
        self.dev
            .dtoh(&mut out.euler[done * nn..(done + q) * nn], &b.euler)?;
        self.dev
            .dtoh(&mut out.newton[done * nn..(done + q) * nn], &b.newton)?;
        self.dev.dtoh(&mut out.cond[done..done + q], &b.cond)
    }

    /// Solves again on the host the points that `pick(pts, i, condition estimate)` selects
    /// (see the module's doc).
    fn resolve_on_host(
        &mut self,
        pts: &Points<'_>,
        out: DirectionsOut<'_>,
        pick: impl Fn(&Points<'_>, usize, f64) -> bool,
    ) {
        let Some(l) = self.loaded.as_ref() else {
            return;
        };
        let (nn, m) = (l.nn, l.m);
        let idx: Vec<usize> = (0..pts.len())
            .filter(|&i| pick(pts, i, out.cond[i]))
            .collect();
        if idx.is_empty() {
            return;
        }
        let q = idx.len();
        let ys: Vec<C64> = idx
            .iter()
            .flat_map(|&i| pts.ys[i * nn..(i + 1) * nn].iter().copied())
            .collect();
        let taus: Vec<C64> = idx.iter().map(|&i| pts.taus[i]).collect();
        let lifts: Option<Vec<f64>> = pts.lifts.map(|lf| {
            idx.iter()
                .flat_map(|&i| lf[i * m..(i + 1) * m].iter().copied())
                .collect()
        });
        let residual: Vec<_> = idx.iter().map(|&i| pts.residual(i)).collect();
        let sub = Points {
            ys: &ys,
            taus: &taus,
            log_mode: None,
            lifts: lifts.as_deref(),
            residual: Some(&residual),
        };
        let (mut eu, mut ne, mut co) = (
            vec![C64::new(0.0, 0.0); q * nn],
            vec![C64::new(0.0, 0.0); q * nn],
            vec![0.0; q],
        );
        self.host.run(
            &l.layout,
            &sub,
            DirectionsOut {
                euler: &mut eu,
                newton: &mut ne,
                cond: &mut co,
            },
        );
        for (r, &i) in idx.iter().enumerate() {
            out.euler[i * nn..(i + 1) * nn].copy_from_slice(&eu[r * nn..(r + 1) * nn]);
            out.newton[i * nn..(i + 1) * nn].copy_from_slice(&ne[r * nn..(r + 1) * nn]);
            out.cond[i] = co[r];
        }
    }
}

/// Device addresses of the per-point kind data of a chunk: log-mode flags and lift rows
/// (0: none, every point projective / with the homotopy's lifts).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PointKinds {
    logm: u64,
    lifts: u64,
}

/// Device addresses of the per-slot data that selects the points of [`CudaBackend::queue_dd_residual`]:
/// status bytes, double-double mode bytes and step-machine phases (0 each: every point).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DdModes {
    pub status: u64,
    pub ddm: u64,
    pub phase: u64,
}

impl CudaBackend {
    /// `log_mode` has one flag and `lifts` one row of M per point.
    fn check_kinds(&self, pts: &Points<'_>) -> Result<()> {
        let (p, m) = (pts.taus.len(), self.loaded()?.m);
        if let Some(lm) = pts.log_mode {
            if lm.len() != p {
                return Err(Error::Internal(format!(
                    "CUDA backend: {} log-mode flags for {p} points",
                    lm.len()
                )));
            }
        }
        if let Some(l) = pts.lifts {
            if l.len() != p * m {
                return Err(Error::Internal(format!(
                    "CUDA backend: {} lifts for {p} points of {m} terms",
                    l.len()
                )));
            }
        }
        Ok(())
    }

    /// Uploads points `done .. done + q` (coordinates, τ, log-mode flags where any is set,
    /// lift rows where given) into the buffers.
    fn upload_points(&self, pts: &Points<'_>, done: usize, q: usize) -> Result<PointKinds> {
        let l = self.loaded()?;
        let (nn, m) = (l.nn, l.m);
        let b = self
            .bufs
            .as_ref()
            .ok_or_else(|| Error::Internal("CUDA buffers not allocated".into()))?;
        self.dev.htod(&b.y, &pts.ys[done * nn..(done + q) * nn])?;
        self.dev.htod(&b.tau, &pts.taus[done..done + q])?;
        let mut pk = PointKinds::default();
        if let Some(lm) = pts.log_mode.map(|lm| &lm[done..done + q]) {
            if lm.iter().any(|&v| v) {
                // a bool is one byte, 0 or 1: the kernels read it as unsigned char
                self.dev.htod(&b.logm, lm)?;
                pk.logm = b.logm.ptr;
            }
        }
        if let Some(lifts) = pts.lifts {
            self.dev.htod(&b.lifts, &lifts[done * m..(done + q) * m])?;
            pk.lifts = b.lifts.ptr;
        }
        Ok(pk)
    }
}
