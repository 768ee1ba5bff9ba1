//! Where a path starts ([`StartPoint`]).

use num_complex::Complex64 as C64;

/// A start point at parameter `tau`: homogeneous coordinates `y` (any scale), or, with
/// `log`, affine log coordinates `z = (log x, 0)` (polyhedral start points, whose `x` may
/// leave double range at τ₀). A log-mode path switches to projective coordinates as soon as
/// its coordinates are representable (see [`super::path::LOG_SWITCH_SPREAD`]).
#[derive(Clone, Debug)]
pub struct StartPoint {
    pub path: u64,
    pub y: Vec<C64>,
    pub tau: f64,
    pub log: bool,
    /// The path's own lifts (one per column of the homotopy's `Â`), shared by the paths of
    /// one polyhedral cell; `None`: the homotopy's lifts.
    pub lifts: Option<std::sync::Arc<[f64]>>,
    /// Steps (accepted, rejected) the path took before this point (a path continued by the
    /// host after resident tracking); (0, 0) for a start point.
    pub steps: (u32, u32),
}
