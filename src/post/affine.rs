//! Refinement in affine coordinates, for endpoints whose homogeneous coordinates the
//! projective refinement cannot evaluate: at the unit point `y = (x, 1)/‖(x, 1)‖` a term of
//! degree `d` has size about `‖(x, 1)‖^{−d}`, below the smallest double (`2^{−1074}`) once
//! `d·ln‖(x, 1)‖ > 744`. `x^d + x² − 1` has its `d` simple roots near the unit circle, where
//! `‖(x, 1)‖ ≈ √2`: from `d ≈ 2,150` on every term of the projective Jacobian underflows to
//! 0, Newton's corrections are not finite and the condition number is infinite, and all
//! `d` roots were reported singular (d = 5,000). In affine coordinates the same roots have
//! terms of size 1 and Newton converges quadratically.

use crate::system::{monomial_partials, PartialScratch, System};
use num_complex::Complex64 as C64;

/// Below this (natural log) the largest term of a homogeneous equation at the unit point is
/// within a few orders of the smallest normal double (`ln 2^{−1022} ≈ −708`).
pub const UNDERFLOW_LN: f64 = -650.0;

/// True when some equation of the homogenized target (terms with their exponents over
/// `y`) has all its terms below `e^UNDERFLOW_LN` at `y` (in modulus): its projective
/// evaluation has no digits left.
pub fn projective_underflows<'a>(
    mut equations: impl Iterator<Item = &'a [crate::homotopy::HomTerm]>,
    y: &[C64],
) -> bool {
    let ln: Vec<f64> = y.iter().map(|v| v.norm().ln()).collect();
    equations.any(|eq| {
        let top = eq
            .iter()
            .map(|t| {
                t.coeff.norm().ln()
                    + t.exponents
                        .iter()
                        .zip(&ln)
                        .filter(|(&e, _)| e != 0)
                        .map(|(&e, l)| e as f64 * l)
                        .sum::<f64>()
            })
            .fold(f64::NEG_INFINITY, f64::max);
        top < UNDERFLOW_LN
    })
}

/// What [`refine`] found.
pub struct AffineNewton {
    pub x: Vec<C64>,
    /// The last correction, relative to `1 + ‖x‖∞`.
    pub eta: f64,
    /// The condition number of the Jacobian with row `k` divided by its largest absolute
    /// derivative `max_j Σ_a |c_a|·a_j·|x^{a − e_j}|·s_j` and column `j` multiplied by
    /// `s_j = max(1, |x_j|)` (invariant under scaling any equation).
    pub cond: f64,
}

/// Newton in affine coordinates on `system` from `x` (at most `iters` corrections, stopping
/// when they no longer contract).
pub fn refine(system: &System, x: &[C64], iters: usize) -> Option<AffineNewton> {
    let n = x.len();
    let mut x = x.to_vec();
    let mut eta = f64::INFINITY;
    for _ in 0..iters {
        let f = system.eval(&x);
        let j = jacobian(system, &x);
        let m = nalgebra::DMatrix::<C64>::from_fn(n, n, |r, c| j[r][c]);
        let rhs = nalgebra::DVector::<C64>::from_fn(n, |r, _| -f[r]);
        let dx = m.lu().solve(&rhs)?;
        let scale = 1.0 + x.iter().map(|v| v.norm()).fold(0.0, f64::max);
        let e = dx.iter().map(|v| v.norm()).fold(0.0, f64::max) / scale;
        if !e.is_finite() || (e >= eta && e > 1e-14) {
            break;
        }
        x.iter_mut().zip(dx.iter()).for_each(|(a, d)| *a += d);
        eta = e;
        if e < 1e-16 {
            break;
        }
    }
    if !eta.is_finite() {
        return None;
    }
    let cond = condition(system, &x);
    Some(AffineNewton { x, eta, cond })
}

/// `∂f_k/∂x_j` at `x`.
fn jacobian(system: &System, x: &[C64]) -> Vec<Vec<C64>> {
    system.equations.iter().map(|f| f.gradient(x)).collect()
}

/// See [`AffineNewton::cond`].
fn condition(system: &System, x: &[C64]) -> f64 {
    let n = x.len();
    let s: Vec<f64> = x.iter().map(|v| v.norm().max(1.0)).collect();
    let xa: Vec<f64> = x.iter().map(|v| v.norm()).collect();
    let mut m = nalgebra::DMatrix::<C64>::zeros(n, n);
    let mut scratch = PartialScratch::default();
    for (k, f) in system.equations.iter().enumerate() {
        let g = f.gradient(x);
        // Σ_a |c_a|·|a_j|·|x^{a−e_j}|, scaled as the column.
        let mut abs = vec![0.0f64; n];
        for t in &f.terms {
            let c = t.coeff.norm();
            monomial_partials(&t.exponents, &xa, &mut scratch, |j, e, d| {
                abs[j] += c * (e as f64).abs() * d;
            });
        }
        abs.iter_mut().zip(&s).for_each(|(a, sj)| *a *= sj);
        let w = abs.iter().fold(0.0f64, |a, &b| a.max(b));
        if !(w > 0.0 && w.is_finite()) {
            return f64::INFINITY;
        }
        for j in 0..n {
            m[(k, j)] = g[j] * s[j] / w;
        }
    }
    let sv = m.singular_values();
    let (mx, mn) = sv
        .iter()
        .fold((0.0f64, f64::INFINITY), |(a, b), &v| (a.max(v), b.min(v)));
    if mn == 0.0 || !mn.is_finite() || !mx.is_finite() {
        f64::INFINITY
    } else {
        mx / mn
    }
}
