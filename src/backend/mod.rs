//! The boundary between the tracker and the hardware: a batch of points `(y_i, τ_i)` goes in,
//! extended Jacobians or the Euler and Newton directions come out. The tracker never looks
//! behind it, so the CPU and CUDA backends are interchangeable.
//!
//! Directions (T. Chen §2.3, §6): for each point the square system
//! `[∂H/∂y; y*] [E N] = [−∂H/∂τ  −H; 0  0]` gives the Euler direction `E = dy/dτ` and the
//! Newton step `N`, both orthogonal to `y` (projective tracking on the unit sphere).

pub mod cpu;
pub mod cuda;
pub mod directions;
#[cfg(test)]
mod tests;

pub use directions::DirectionsOut;

use crate::error::Result;
use crate::eval::Points;
use crate::homotopy::Homotopy;
use num_complex::Complex64 as C64;

pub trait Backend: Send {
    /// Short name for reports ("cpu", "cuda").
    fn name(&self) -> String;
    /// Loads the homotopy every later call refers to.
    fn set_homotopy(&mut self, h: &Homotopy) -> Result<()>;
    /// One line on how the loaded homotopy's device code was obtained (the CUDA backend:
    /// NVRTC seconds, units, cache hits), for the summary; `None` for the CPU.
    fn setup_note(&self) -> Option<String> {
        None
    }
    /// The PCI bus id of the GPU the backend runs on (for [`crate::gpu::nvml`]); `None` for
    /// the CPU.
    fn pci_bus_id(&self) -> Option<String> {
        None
    }
    /// Extended Jacobians `[D_y H, D_τ H, H]`, `p × n × (N+2)`, each equation scaled by a
    /// positive factor (see [`crate::eval`]).
    fn extended_jacobians(&mut self, pts: &Points<'_>, out: &mut [C64]) -> Result<()>;
    /// Euler and Newton directions at `p` points. A point in log mode is given in affine log
    /// coordinates `z` (N entries, `z_n = 0`), and its directions are `dz/dτ` and the Newton
    /// step in `z`, with the last entry 0 (see [`fill_direction_system`]).
    fn directions(&mut self, pts: &Points<'_>, out: DirectionsOut<'_>) -> Result<()>;
    /// Resident slots where whole paths are tracked ([`crate::track::resident`]), when the
    /// backend has them and they are switched on; `None`: the tracker's rounds go through
    /// [`Backend::directions`].
    fn resident(&mut self) -> Option<&mut dyn crate::track::resident::api::ResidentTracker> {
        None
    }
    /// The host threads the tracker may use to advance a round's paths (the CPU backend's
    /// pool, so that `--threads` bounds them too); `None`: on the calling thread.
    fn host_pool(&self) -> Option<std::sync::Arc<rayon::ThreadPool>> {
        None
    }
    /// The number of paths the next [`Backend::set_homotopy`]'s solve tracks (the
    /// `--backend auto` choice weighs it, [`AutoBackend`]); ignored by the others.
    fn expect_paths(&mut self, _paths: u128) {}
    /// Paths at once the tracker should use with the loaded homotopy, when this backend
    /// chooses it (`--backend auto` without `--batch`: [`GPU_BATCH`] on the GPU, the
    /// tracker's default on the CPU); `None`: the tracker options' own.
    fn preferred_batch(&self) -> Option<usize> {
        None
    }
    /// A batch certifier for `system` on this backend's device (the Krawczyk test of
    /// [`crate::certify`] as one GPU batch, [`crate::certify::cuda`]); `None`: certification
    /// runs on the host's cores.
    fn certifier(
        &self,
        _system: &crate::system::System,
    ) -> Result<Option<Box<dyn crate::certify::BatchCertifier>>> {
        Ok(None)
    }
}

/// Default paths at once on the GPU.
pub const GPU_BATCH: usize = 65536;

/// Seconds the GPU needs before its first step: opening the device and compiling the
/// homotopy's kernels (small systems with `--backend auto` took 1.0–2.7 s on an H100, mostly
/// NVRTC compilation). A solve the CPU finishes sooner stays on the CPU. A first figure,
/// to be measured on the device (docs/performance.md).
pub const GPU_STARTUP_SECONDS: f64 = 1.0;

/// Steps per path of the estimate (measured means on one thread, seed 1: 19–75 for
/// total-degree paths of noon-6, katsura-9, cyclic-7, 50–126 for polyhedral paths of
/// noon-6, cyclic-7, eco-9, katsura-9).
pub const STEPS_PER_PATH: f64 = 80.0;

/// Host seconds of one path-step for `n` unknowns and `terms` columns of the homotopy:
/// `B + A·(terms·(n+3) + (n+1)³)`, the evaluation's products and the direction solve's LU
/// over a fixed cost per step. `A`, `B` fitted to one thread of this project's 2-core
/// machine: 14 µs per step for noon-6's total-degree homotopy (n = 6, 54 columns), 20 µs
/// for katsura-9's (n = 10, 130 columns).
pub fn step_seconds(n: usize, terms: usize) -> f64 {
    const A: f64 = 2.7e-9;
    const B: f64 = 11.7e-6;
    let nh = (n + 1) as f64;
    B + A * (terms as f64 * (n as f64 + 3.0) + nh * nh * nh)
}

/// Estimated CPU seconds of a solve: `paths ×` [`STEPS_PER_PATH`] `×` [`step_seconds`]
/// over `threads` threads.
pub fn cpu_seconds_estimate(paths: u128, n: usize, terms: usize, threads: usize) -> f64 {
    paths as f64 * STEPS_PER_PATH * step_seconds(n, terms) / threads.max(1) as f64
}

/// `--backend auto`'s rule: the CPU when its estimated seconds
/// ([`cpu_seconds_estimate`]) are below the GPU's start-up (`gpu_startup`, normally
/// [`GPU_STARTUP_SECONDS`]).
pub fn cpu_is_enough(
    paths: u128,
    n: usize,
    terms: usize,
    threads: usize,
    gpu_startup: f64,
) -> bool {
    cpu_seconds_estimate(paths, n, terms, threads) < gpu_startup
}

/// Makes a backend on first use.
pub type BackendMaker = Box<dyn FnMut() -> Result<Box<dyn Backend>> + Send>;

/// `--backend auto`: for each homotopy ([`Backend::set_homotopy`]) the CPU when
/// [`cpu_is_enough`] for the paths announced by [`Backend::expect_paths`], else the GPU,
/// falling back to the CPU with a notice on stderr when no GPU opens. Each backend is made
/// on its first use, so a run that stays on the CPU never opens the GPU.
pub struct AutoBackend {
    make_cpu: BackendMaker,
    make_gpu: BackendMaker,
    cpu: Option<Box<dyn Backend>>,
    /// The GPU backend, or why it did not open (asked once).
    gpu: Option<std::result::Result<Box<dyn Backend>, String>>,
    /// CPU threads (for the estimate).
    threads: usize,
    /// `--batch`, when given (else the chosen backend's default).
    batch: Option<usize>,
    paths: Option<u128>,
    use_gpu: bool,
}

impl AutoBackend {
    /// `threads`: the CPU backend's threads (0: all cores); `batch`: `--batch`, if given.
    pub fn new(
        make_cpu: BackendMaker,
        make_gpu: BackendMaker,
        threads: usize,
        batch: Option<usize>,
    ) -> AutoBackend {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads
        };
        AutoBackend {
            make_cpu,
            make_gpu,
            cpu: None,
            gpu: None,
            threads,
            batch,
            paths: None,
            use_gpu: false,
        }
    }

    /// Whether the loaded homotopy runs on the GPU.
    pub fn on_gpu(&self) -> bool {
        self.use_gpu && matches!(self.gpu, Some(Ok(_)))
    }

    fn active(&mut self) -> Result<&mut Box<dyn Backend>> {
        if self.use_gpu {
            if let Some(Ok(g)) = &mut self.gpu {
                return Ok(g);
            }
        }
        if self.cpu.is_none() {
            self.cpu = Some((self.make_cpu)()?);
        }
        Ok(self.cpu.as_mut().expect("made above"))
    }
}

impl Backend for AutoBackend {
    fn name(&self) -> String {
        match (&self.gpu, &self.cpu) {
            (Some(Ok(g)), _) if self.use_gpu => g.name(),
            (_, Some(c)) => c.name(),
            _ => "cpu".into(),
        }
    }

    fn expect_paths(&mut self, paths: u128) {
        self.paths = Some(paths);
    }

    fn preferred_batch(&self) -> Option<usize> {
        if self.batch.is_some() {
            return None;
        }
        Some(if self.on_gpu() {
            GPU_BATCH
        } else {
            crate::track::options::TrackerOptions::default().batch
        })
    }

    fn set_homotopy(&mut self, h: &Homotopy) -> Result<()> {
        // Without an announced count (a caller that does not announce one), the GPU.
        let cpu = self.paths.is_some_and(|p| {
            cpu_is_enough(p, h.n, h.term_count(), self.threads, GPU_STARTUP_SECONDS)
        });
        self.use_gpu = !cpu;
        if self.use_gpu && self.gpu.is_none() {
            let g = (self.make_gpu)().map_err(|e| e.to_string());
            // Without an NVIDIA driver no GPU was expected: the summary's backend says cpu.
            if let Err(e) = &g {
                if crate::gpu::device::driver_present() {
                    eprintln!("pathtrack: no usable GPU ({e}); tracking on the CPU");
                }
            }
            self.gpu = Some(g);
        }
        self.active()?.set_homotopy(h)
    }

    fn setup_note(&self) -> Option<String> {
        match &self.gpu {
            Some(Ok(g)) if self.use_gpu => g.setup_note(),
            _ => None,
        }
    }

    fn pci_bus_id(&self) -> Option<String> {
        match &self.gpu {
            Some(Ok(g)) if self.use_gpu => g.pci_bus_id(),
            _ => None,
        }
    }

    fn extended_jacobians(&mut self, pts: &Points<'_>, out: &mut [C64]) -> Result<()> {
        self.active()?.extended_jacobians(pts, out)
    }

    fn directions(&mut self, pts: &Points<'_>, out: DirectionsOut<'_>) -> Result<()> {
        self.active()?.directions(pts, out)
    }

    fn resident(&mut self) -> Option<&mut dyn crate::track::resident::api::ResidentTracker> {
        self.active().ok()?.resident()
    }

    fn certifier(
        &self,
        system: &crate::system::System,
    ) -> Result<Option<Box<dyn crate::certify::BatchCertifier>>> {
        match &self.gpu {
            Some(Ok(g)) if self.use_gpu => g.certifier(system),
            _ => Ok(None),
        }
    }

    fn host_pool(&self) -> Option<std::sync::Arc<rayon::ThreadPool>> {
        match (&self.gpu, &self.cpu) {
            (Some(Ok(g)), _) if self.use_gpu => g.host_pool(),
            (_, Some(c)) => c.host_pool(),
            _ => None,
        }
    }
}

/// Copies the rows of one point's extended Jacobian into the direction system
/// `a = [∂H/∂y; y*]` (N×N, column-major as [`crate::linalg::small::qr_solve`] takes it)
/// and `b = [−∂H/∂τ  −H; 0 0]` (N×2), equilibrating each equation row by its largest
/// `|∂h_k/∂y_j|` (row scaling changes neither solution nor directions, and keeps the QR
/// accurate when a coordinate tends to 0 and `∂h/∂y_j = ∂h/∂z_j / y_j` dwarfs the rest of
/// the row).
///
/// In log mode (`log = true`) the rows hold `∂h_k/∂z_j`, the homogenizing coordinate is fixed
/// (`z_n = 0`: affine log coordinates) and the last row is `e_nᵀ` instead of `y*`.
pub fn fill_direction_system(
    n: usize,
    ext: &[C64],
    y: &[C64],
    log: bool,
    a: &mut [C64],
    b: &mut [C64],
) {
    let nh = n + 1;
    let w = nh + 2;
    for k in 0..n {
        let row = &ext[k * w..(k + 1) * w];
        let s = row_scale(row, n, log);
        for j in 0..nh {
            a[j * nh + k] = row[j] * s;
        }
        set_rhs_row(b, k, row, s);
    }
    b[n * 2] = C64::new(0.0, 0.0);
    b[n * 2 + 1] = C64::new(0.0, 0.0);
    for j in 0..nh {
        a[j * nh + n] = if log {
            C64::new(if j == n { 1.0 } else { 0.0 }, 0.0)
        } else {
            y[j].conj()
        };
    }
    if log {
        for k in 0..n {
            a[n * nh + k] = C64::new(0.0, 0.0);
        }
    }
}

/// The equilibration factor of equation row `row` (`∂h_k/∂y_0 … ∂h_k/∂τ, h_k`): one over its
/// largest `|∂h_k/∂y_j|` (over the first `n` columns in log mode), 1 when that is 0 or not
/// finite.
fn row_scale(row: &[C64], n: usize, log: bool) -> f64 {
    let cols = if log { n } else { n + 1 };
    // max |z| as the root of max |z|² (no hypot per entry), unless |z|² leaves range.
    let r2 = row[..cols].iter().map(|z| z.norm_sqr()).fold(0.0, f64::max);
    let r = if r2 > 1e-300 && r2 < 1e300 {
        r2.sqrt()
    } else {
        row[..cols].iter().map(|z| z.norm()).fold(0.0, f64::max)
    };
    if r > 0.0 && r.is_finite() {
        1.0 / r
    } else {
        1.0
    }
}

/// The right-hand sides `[−∂H/∂τ −H; 0 0]` of [`fill_direction_system`] (`N × 2`
/// row-major), each row equilibrated as the matrix's.
fn fill_direction_rhs(n: usize, ext: &[C64], log: bool, b: &mut [C64]) {
    let w = n + 3;
    for k in 0..n {
        let row = &ext[k * w..(k + 1) * w];
        set_rhs_row(b, k, row, row_scale(row, n, log));
    }
    b[n * 2] = C64::new(0.0, 0.0);
    b[n * 2 + 1] = C64::new(0.0, 0.0);
}

/// Row `k` of the right-hand sides: `−∂h_k/∂τ` and `−h_k` (the last two entries of `row`)
/// times the row's factor `s`.
fn set_rhs_row(b: &mut [C64], k: usize, row: &[C64], s: f64) {
    let w = row.len();
    b[k * 2] = -row[w - 2] * s;
    b[k * 2 + 1] = -row[w - 1] * s;
}

/// One point's direction system: `a` (N×N column-major) and the two right-hand sides `b`
/// (N×2 row-major), sized on use (`DirectionSystem::sized`). The QR route
/// ([`solve_directions_one`]) needs nothing else.
#[derive(Clone, Debug, Default)]
pub struct DirectionSystem {
    a: Vec<C64>,
    b: Vec<C64>,
}

impl DirectionSystem {
    /// The matrix and right-hand sides for `nh` unknowns.
    fn sized(&mut self, nh: usize) -> (&mut [C64], &mut [C64]) {
        self.a.resize(nh * nh, C64::new(0.0, 0.0));
        self.b.resize(nh * 2, C64::new(0.0, 0.0));
        (&mut self.a, &mut self.b)
    }
}

/// Scratch of one point's LU direction solve: the direction system and, after
/// [`solve_directions_lu`], its factors (in place of the matrix) and pivots, which
/// [`resolve_directions_lu`] reuses.
#[derive(Clone, Debug, Default)]
pub struct LuScratch {
    system: DirectionSystem,
    piv: Vec<usize>,
}

/// The tracker's direction solve on the host: fills the direction system of one point from
/// its extended Jacobian, factors it by LU with partial pivoting into `s` (kept for
/// [`resolve_directions_lu`]) and solves; returns the pivot-ratio condition estimate
/// (as the GPU's Gauss–Jordan kernel).
pub fn solve_directions_lu(
    n: usize,
    ext: &[C64],
    y: &[C64],
    log: bool,
    s: &mut LuScratch,
    euler: &mut [C64],
    newton: &mut [C64],
) -> f64 {
    let nh = n + 1;
    s.piv.resize(nh, 0);
    let piv = &mut s.piv;
    let (a, b) = s.system.sized(nh);
    solve_directions_with(n, ext, y, log, a, b, euler, newton, |a, b| {
        let cond = crate::linalg::small::lu_factor(nh, a, piv);
        crate::linalg::small::lu_solve(nh, a, piv, b, 2);
        cond
    })
}

/// [`solve_directions_lu`] again after only `ext`'s last column (`h`) changed: only the
/// right-hand sides are filled again, and solved with the factors in `s` (the row scaling
/// depends on the Jacobian alone).
pub fn resolve_directions_lu(
    n: usize,
    ext: &[C64],
    log: bool,
    s: &mut LuScratch,
    euler: &mut [C64],
    newton: &mut [C64],
) {
    let sys = &mut s.system;
    fill_direction_rhs(n, ext, log, &mut sys.b);
    crate::linalg::small::lu_solve(n + 1, &sys.a, &s.piv, &mut sys.b, 2);
    split_directions(&sys.b, euler, newton);
}

/// The two solution columns of the direction system (`N × 2` row-major).
fn split_directions(b: &[C64], euler: &mut [C64], newton: &mut [C64]) {
    for (j, (e, w)) in euler.iter_mut().zip(newton.iter_mut()).enumerate() {
        (*e, *w) = (b[j * 2], b[j * 2 + 1]);
    }
}

/// Fills the direction system of one point from its extended Jacobian and solves it by QR
/// (post-processing's Newton at t = 1, the reference of the CUDA QR route); returns the
/// condition estimate from R's diagonal.
pub fn solve_directions_one(
    n: usize,
    ext: &[C64],
    y: &[C64],
    log: bool,
    s: &mut DirectionSystem,
    euler: &mut [C64],
    newton: &mut [C64],
) -> f64 {
    let nh = n + 1;
    let (a, b) = s.sized(nh);
    solve_directions_with(n, ext, y, log, a, b, euler, newton, |a, b| {
        crate::linalg::small::qr_solve(nh, a, b, 2)
    })
}

/// Fills the direction system, solves it in place with `solve` (which returns the condition
/// estimate) and splits the solution into the two directions.
#[allow(clippy::too_many_arguments)]
fn solve_directions_with(
    n: usize,
    ext: &[C64],
    y: &[C64],
    log: bool,
    a: &mut [C64],
    b: &mut [C64],
    euler: &mut [C64],
    newton: &mut [C64],
    solve: impl FnOnce(&mut [C64], &mut [C64]) -> f64,
) -> f64 {
    fill_direction_system(n, ext, y, log, a, b);
    let cond = solve(a, b);
    split_directions(b, euler, newton);
    cond
}
