//! The boundary between the tracker and the hardware: a batch of points `(y_i, τ_i)` goes in,
//! extended Jacobians or the Euler and Newton directions come out. The tracker never looks
//! behind it, so the CPU and CUDA backends are interchangeable.
//!
//! Directions (T. Chen §2.3, §6): for each point the square system
//! `[∂H/∂y; y*] [E N] = [−∂H/∂τ  −H; 0  0]` gives the Euler direction `E = dy/dτ` and the
//! Newton step `N`, both orthogonal to `y` (projective tracking on the unit sphere).

pub mod cpu;
pub mod cuda;

use crate::error::Result;
use crate::eval::Points;
use crate::homotopy::Homotopy;
use num_complex::Complex64 as C64;

/// Per-point results of [`Backend::directions`] (slices of length `p·N`, `p·N`, `p`).
pub struct DirectionsOut<'a> {
    pub euler: &'a mut [C64],
    pub newton: &'a mut [C64],
    /// Cheap condition estimate of the direction matrix (∞ when singular).
    pub cond: &'a mut [f64],
}

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
    fn resident(&mut self) -> Option<&mut dyn crate::track::resident::ResidentTracker> {
        None
    }
    /// The host threads the tracker may use to advance a round's paths (the CPU backend's
    /// pool, so that `--threads` bounds them too); `None`: on the calling thread.
    fn host_pool(&self) -> Option<std::sync::Arc<rayon::ThreadPool>> {
        None
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
/// (N×2 row-major), sized on use ([`DirectionSystem::sized`]). The QR route
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
