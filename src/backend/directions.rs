//! What a direction solve gives back per point ([`DirectionsOut`]).

use num_complex::Complex64 as C64;

/// Per-point results of [`super::Backend::directions`] (slices of length `p·N`, `p·N`, `p`).
pub struct DirectionsOut<'a> {
    pub euler: &'a mut [C64],
    pub newton: &'a mut [C64],
    /// Cheap condition estimate of the direction matrix (∞ when singular).
    pub cond: &'a mut [f64],
}
