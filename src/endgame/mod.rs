//! Endgame decisions for paths that stop before t = 1.
//!
//! Near `t = 1` a path is a Puiseux series in `s = 1 − t ≈ −τ`: each homogeneous coordinate
//! behaves like `|y_j(s)| ≈ C_j s^{v_j}` with a rational valuation `v_j` (relative to the
//! largest coordinate). A path whose homogenizing coordinate has `v_n > 0` goes to infinity;
//! `v_n = 0` means a finite endpoint. The tracker records samples at checkpoints
//! `s = 0.1·10^{−k/2}`; the valuation is estimated from consecutive samples as
//! `Δ log|y_n| / Δ log s`.
//!
//! Paths that look singular in the endgame zone switch to the Cauchy endgame ([`cauchy`]):
//! loops around `t = 1` give the winding number and the endpoint as a Cauchy integral,
//! accurate where Newton at `t = 1` is not.

pub mod cauchy;

use num_complex::Complex64 as C64;

/// Valuations below this are taken as 0 (finite endpoint): a winding number above
/// `1 / VALUATION_TOL` cannot be told from a finite endpoint by this estimate.
pub const VALUATION_TOL: f64 = 0.04;

/// Estimated valuation of the homogenizing coordinate (the last one) from the last two
/// samples `(τ, y)`; `None` with fewer than two samples.
pub fn homogenizing_valuation(samples: &[(f64, Vec<C64>)], tau_end: f64) -> Option<f64> {
    if samples.len() < 2 {
        return None;
    }
    let rel = |y: &[C64]| {
        let norm = y.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        (y[y.len() - 1].norm() / norm).max(f64::MIN_POSITIVE)
    };
    let (t1, y1) = &samples[samples.len() - 2];
    let (t2, y2) = &samples[samples.len() - 1];
    let (s1, s2) = ((tau_end - t1).abs(), (tau_end - t2).abs());
    if s1 <= 0.0 || s2 <= 0.0 || s1 == s2 {
        return None;
    }
    Some((rel(y1).ln() - rel(y2).ln()) / (s1.ln() - s2.ln()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valuation_of_a_puiseux_path() {
        // y(s) = (1, 0.01 s^{1/3}) → valuation 1/3 of the last coordinate.
        let samples: Vec<(f64, Vec<C64>)> = [1e-3, 1e-4]
            .iter()
            .map(|&s: &f64| {
                (
                    -s,
                    vec![C64::new(1.0, 0.0), C64::new(0.01 * s.powf(1.0 / 3.0), 0.0)],
                )
            })
            .collect();
        let v = homogenizing_valuation(&samples, 0.0).unwrap();
        assert!((v - 1.0 / 3.0).abs() < 1e-3, "v = {v}");
        // finite endpoint: constant last coordinate
        let samples: Vec<(f64, Vec<C64>)> = [1e-3, 1e-4]
            .iter()
            .map(|&s: &f64| (-s, vec![C64::new(1.0 + s, 0.0), C64::new(0.5, 0.0)]))
            .collect();
        assert!(homogenizing_valuation(&samples, 0.0).unwrap().abs() < VALUATION_TOL);
    }
}
