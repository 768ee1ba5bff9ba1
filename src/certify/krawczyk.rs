//! The Krawczyk test: a proof that a box holds exactly one root of a square system.
//!
//! For `F: C^n → C^n`, a point `x̃`, any matrix `Y` and a box `X ∋ x̃`, the Krawczyk operator
//!
//! `K(X) = x̃ − Y·F(x̃) + (I − Y·J(X))·(X − x̃)`
//!
//! (`J(X)` an enclosure of the Jacobian over `X`, everything in interval arithmetic) holds
//! every root of `F` in `X`; if `K(X) ⊆ int X`, then `Y` and every matrix of `J(X)` are
//! nonsingular and `X` holds exactly one root, which lies in `K(X)` (Krawczyk 1969; Moore
//! 1977; Rump 1983 for the strict-inclusion form). Complex boxes are rectangles per
//! coordinate, read as boxes in `R^{2n}`; the argument is the same (Rump 2010, §13).
//!
//! Here `x̃` is the approximate solution as given (not refined: the certificate speaks of the
//! coordinates the user holds), `Y ≈ J(x̃)^{-1}` in floating point, `X = x̃ + r·([−1, 1] +
//! i[−1, 1])^n`, and `r` is tried at a few multiples of the Newton step `‖Y·F(x̃)‖`, the idea
//! of Rump's ε-inflation (verifynlss) and of HomotopyContinuation.jl's `certify`
//! (Breiding, Rose, Timme 2020), up to [`MAX_RADIUS`].
//!
//! Realness: when the coefficients are real, `F(x̄) = conj F(x)`, so the conjugate of a root
//! is a root. A box equal to its own conjugate (real parts any, imaginary parts `[−h, h]`)
//! that holds exactly one root therefore holds a real one. A solution is certified real when
//! such a box, centred at `Re x̃`, passes the test and contains the box `X` of the first
//! test (so that both hold the same root).

use super::complex::{box_interior, box_subset, CBox, CInterval};
use super::eval::IntervalSystem;
use super::interval::Interval;
use crate::post::dedup::sup_norm;
use crate::system::System;
use nalgebra::DMatrix;
use num_complex::Complex64 as C64;
use std::ops::{Add, Mul, Sub};

/// The largest half-width tried, relative to `1 + ‖x̃‖∞`: a certificate says that a root
/// lies within this of the coordinates, so a point off by more than this is not certified
/// even where a wider box would hold a single root.
pub const MAX_RADIUS: f64 = 1e-6;
/// Multiples of the Newton step (or of the rounding floor) tried as half-widths.
pub const RADIUS_FACTORS: [f64; 4] = [2.0, 8.0, 64.0, 1024.0];

/// What the Krawczyk test proved about one approximate solution.
#[derive(Clone, Debug)]
pub struct Certificate {
    /// Half-width `r` of the box around the given coordinates that holds exactly one root
    /// (per coordinate, real and imaginary part).
    pub radius: f64,
    /// The box `X` itself.
    pub region: CBox,
    /// `K(X) ⊆ X`: a tighter enclosure of the root.
    pub enclosure: CBox,
    /// The root is real (proved; see the module notes).
    pub real: bool,
    /// Proved by the test with a double-double centre ([`super::dd_krawczyk`]), the double
    /// test having failed.
    pub double_double: bool,
}

/// `Y ≈ J(x)^{-1}` from the floating-point Jacobian (`Polynomial::gradient`); `None` when
/// the matrix is numerically singular or a value is not finite.
pub(super) fn approximate_inverse(system: &System, x: &[C64]) -> Option<DMatrix<C64>> {
    let n = x.len();
    let mut j = DMatrix::<C64>::zeros(n, n);
    for (k, f) in system.equations.iter().enumerate() {
        for (col, g) in f.gradient(x).into_iter().enumerate() {
            j[(k, col)] = g;
        }
    }
    let y = j.try_inverse()?;
    y.iter()
        .all(|z| z.re.is_finite() && z.im.is_finite())
        .then_some(y)
}

/// `Y·v` for a point matrix and an interval vector.
pub(super) fn mat_vec(y: &DMatrix<C64>, v: &[CInterval]) -> Vec<CInterval> {
    let n = v.len();
    (0..n)
        .map(|i| (0..n).fold(CInterval::ZERO, |acc, k| acc.add(v[k].scale(y[(i, k)]))))
        .collect()
}

/// The Krawczyk operator `K(X)` at centre `x` with `Y·F(x)` already enclosed in `yf`.
fn krawczyk_operator(
    isys: &IntervalSystem,
    x: &[C64],
    y: &DMatrix<C64>,
    yf: &[CInterval],
    region: &[CInterval],
) -> CBox {
    let n = x.len();
    let jac = isys.jacobian(region);
    // M = I − Y·J(X), row by row: row i of Y·J is Σ_k Y[i,k]·J[k,·].
    let offsets: Vec<CInterval> = region
        .iter()
        .zip(x)
        .map(|(b, &c)| b.sub(CInterval::point(c)))
        .collect();
    let mut row = vec![CInterval::ZERO; n];
    (0..n)
        .map(|i| {
            row.iter_mut().for_each(|v| *v = CInterval::ZERO);
            for k in 0..n {
                let yik = y[(i, k)];
                for (v, jk) in row.iter_mut().zip(&jac[k * n..(k + 1) * n]) {
                    *v = v.add(jk.scale(yik));
                }
            }
            let mut acc = CInterval::point(x[i]).sub(yf[i]);
            for (j, (v, d)) in row.iter().zip(&offsets).enumerate() {
                let m = if i == j {
                    CInterval::ONE.sub(*v)
                } else {
                    CInterval {
                        re: -v.re,
                        im: -v.im,
                    }
                };
                acc = acc.add(m.mul(*d));
            }
            acc
        })
        .collect()
}

/// Tries the Krawczyk test on boxes built by `make_box(r)` for each candidate half-width
/// `r`; returns the first `(r, X, K(X))` with `K(X) ⊆ int X` and `accept(X)`.
fn first_proof(
    isys: &IntervalSystem,
    x: &[C64],
    y: &DMatrix<C64>,
    yf: &[CInterval],
    radii: &[f64],
    make_box: impl Fn(f64) -> CBox,
    accept: impl Fn(&[CInterval]) -> bool,
) -> Option<(f64, CBox, CBox)> {
    radii.iter().find_map(|&r| {
        let region = make_box(r);
        if !accept(&region) {
            return None;
        }
        let k = krawczyk_operator(isys, x, y, yf, &region);
        box_interior(&k, &region).then_some((r, region, k))
    })
}

/// Candidate half-widths: multiples of `max(step, floor)`, below the cap, then the cap.
pub(super) fn radii(step: f64, floor: f64, cap: f64) -> Vec<f64> {
    let base = step.max(floor);
    RADIUS_FACTORS
        .iter()
        .map(|f| f * base)
        .filter(|&r| r <= cap)
        .collect()
}

/// `Y` and `Y·F(x)` (enclosed) at the point `x`, and the step size `max_i |Y·F(x)|_i`.
fn newton_step(
    system: &System,
    isys: &IntervalSystem,
    x: &[C64],
) -> Option<(DMatrix<C64>, Vec<CInterval>, f64)> {
    let y = approximate_inverse(system, x)?;
    let point: Vec<CInterval> = x.iter().map(|&z| CInterval::point(z)).collect();
    let yf = mat_vec(&y, &isys.values(&point));
    let step = yf.iter().map(|z| z.mag()).fold(0.0, f64::max);
    step.is_finite().then_some((y, yf, step))
}

/// The Krawczyk test at the approximate solution `x` of `system` (`isys` is the same system
/// prepared for interval evaluation): a [`Certificate`] when some box around `x` provably
/// holds exactly one root, else `None`.
pub fn certify_point(system: &System, isys: &IntervalSystem, x: &[C64]) -> Option<Certificate> {
    if x.len() != isys.n() || x.iter().any(|z| !(z.re.is_finite() && z.im.is_finite())) {
        return None;
    }
    let scale = 1.0 + sup_norm(x);
    let cap = MAX_RADIUS * scale;
    // Below a few ulps of the largest coordinate, x̃ − Y·F(x̃) cannot fit inside X.
    let floor = 4.0 * f64::EPSILON * scale;
    let (y, yf, step) = newton_step(system, isys, x)?;
    let (radius, region, enclosure) = first_proof(
        isys,
        x,
        &y,
        &yf,
        &radii(step, floor, cap),
        |r| x.iter().map(|&z| CInterval::around(z, r)).collect(),
        |_| true,
    )?;
    let real = isys.real_coefficients
        && (self_conjugate(&region) || certify_real(system, isys, x, &region, cap, floor));
    Some(Certificate {
        radius,
        region,
        enclosure,
        real,
        double_double: false,
    })
}

/// The box equals its conjugate: every imaginary part is `[−h, h]` (so for a point with
/// zero imaginary parts the first test already proves realness).
pub(super) fn self_conjugate(region: &[CInterval]) -> bool {
    region.iter().all(|b| b.im.lo == -b.im.hi)
}

/// The second test for realness (module notes): a conjugation-invariant box around `Re x`
/// that contains `region` and passes the Krawczyk test.
fn certify_real(
    system: &System,
    isys: &IntervalSystem,
    x: &[C64],
    region: &[CInterval],
    cap: f64,
    floor: f64,
) -> bool {
    let im = x.iter().map(|z| z.im.abs()).fold(0.0, f64::max);
    let half_width = region.iter().map(|b| b.half_width()).fold(0.0, f64::max);
    if im + half_width > cap {
        return false;
    }
    let c: Vec<C64> = x.iter().map(|z| C64::new(z.re, 0.0)).collect();
    let Some((y, yf, step)) = newton_step(system, isys, &c) else {
        return false;
    };
    first_proof(
        isys,
        &c,
        &y,
        &yf,
        &real_radii(im + half_width, step, floor, cap),
        |r| real_box(&c, r),
        |b| box_subset(region, b),
    )
    .is_some()
}

/// Half-widths for the realness test around a point `reach` (its largest imaginary part
/// plus the region's half-width) from the region's far side: first those that may contain
/// the region (checked exactly by the caller), then the usual [`radii`] from `step`; none
/// above `cap`, increasing.
pub(super) fn real_radii(reach: f64, step: f64, floor: f64, cap: f64) -> Vec<f64> {
    let mut v: Vec<f64> = [1.25 * reach, 2.0 * reach]
        .into_iter()
        .chain(radii(step.max(reach), floor, cap))
        .filter(|&r| r <= cap)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The self-conjugate box of half-width `r` around the real point `c`: `Re` in
/// `c ± r`, `Im` in `[−r, r]`.
pub(super) fn real_box(c: &[C64], r: f64) -> Vec<CInterval> {
    c.iter()
        .map(|z| CInterval {
            re: Interval::around(z.re, r),
            im: Interval::symmetric(r),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::parse_str;

    fn univariate(eq: &str) -> System {
        parse_str(
            &format!("variables: [x]\nequations:\n  - \"{eq}\"\n"),
            "t.yaml",
        )
        .unwrap()
    }

    fn certify(sys: &System, x: &[C64]) -> Option<Certificate> {
        certify_point(sys, &IntervalSystem::new(sys), x)
    }

    /// `x² − 2`: both roots certified real, in boxes that contain ±√2 and whose enclosure
    /// is tight; the radius is a few times the Newton step, far below the cap.
    #[test]
    fn square_roots_of_two_are_certified_real() {
        let sys = univariate("x^2 - 2");
        for s in [1.0, -1.0] {
            let c = certify(&sys, &[C64::new(s * 2f64.sqrt(), 0.0)]).expect("certified");
            assert!(c.real);
            assert!(c.radius < 1e-14, "radius {}", c.radius);
            assert!(c.enclosure[0].re.contains(s * 2f64.sqrt()));
        }
    }

    /// `x² + 1`: the roots ±i are certified and not real (the real box around Re x = 0
    /// would have to reach ±i, beyond the cap).
    #[test]
    fn imaginary_roots_are_certified_and_not_real() {
        let sys = univariate("x^2 + 1");
        for s in [1.0, -1.0] {
            let c = certify(&sys, &[C64::new(0.0, s)]).expect("certified");
            assert!(!c.real);
        }
    }

    /// A point with a tiny imaginary part (1e-12) at a real root is certified real.
    #[test]
    fn a_real_root_with_roundoff_in_its_imaginary_part_is_real() {
        let sys = univariate("x^3 - 2*x + 0.5");
        let mut x = C64::new(0.5, 1e-12);
        for _ in 0..60 {
            x -= (x * x * x - 2.0 * x + 0.5) / (3.0 * x * x - 2.0);
        }
        x.im = 1e-12;
        let c = certify(&sys, &[x]).expect("certified");
        assert!(c.real);
    }

    /// Complex coefficients: nothing is certified real, even at a real root.
    #[test]
    fn complex_coefficients_certify_no_realness() {
        let sys = univariate("(1+2*i)*x - (1+2*i)");
        let c = certify(&sys, &[C64::new(1.0, 0.0)]).expect("certified");
        assert!(!c.real);
    }

    /// A double root is never certified (every box around it holds two roots counted with
    /// multiplicity, and its Jacobian vanishes there), however close the point.
    #[test]
    fn a_double_root_is_not_certified() {
        let sys = univariate("x^2 - 2*x + 1");
        for d in [0.0, 1e-12, 1e-9, 1e-6, 1e-3] {
            assert!(
                certify(&sys, &[C64::new(1.0 + d, d)]).is_none(),
                "offset {d}"
            );
        }
    }

    /// Laurent terms: `x + 1/x − 2.5` has roots 2 and 1/2.
    #[test]
    fn laurent_roots_are_certified() {
        let sys = univariate("x + x^-1 - 2.5");
        for r in [2.0, 0.5] {
            assert!(certify(&sys, &[C64::new(r, 0.0)]).expect("certified").real);
        }
    }
}
