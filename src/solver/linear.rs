//! A square linear system `A·x + c = 0` answered without a homotopy: one LU with partial
//! pivoting, iterative refinement with residuals `−(A·x + c)` summed in double-double, and
//! the condition number of the point estimated from the same factors.
//!
//! The total-degree start of a linear system has one path, the straight line to this point;
//! but the homotopy, the evaluator and the refiner are tables built for tracking (dense in
//! `n` per equation and per path), and building them cost 25 s at n = 300 and over 100 s at
//! n = 500, against well under a second for one LU.
//!
//! The point is classified as the refiner ([`crate::post::Refiner`]) would classify it:
//! nonsingular when its relative residual is below [`RESIDUAL_TOL`] and its condition below
//! [`SINGULAR_COND`], or below [`NEWTON_COND_MAX`] where refinement converged at a fast rate.
//! Anything else (a matrix singular to working precision, a refinement that does not
//! settle) is left to the tracker, which decides singular points and points at infinity.

use crate::eval::dd::Cdd;
use crate::linalg::small::{lu_factor, lu_solve};
use crate::post::{Endpoint, Status, NEWTON_COND_MAX, RESIDUAL_TOL, SINGULAR_COND};
use crate::system::System;
use num_complex::Complex64 as C64;

/// Refinement steps at most: each gains about `log10(1/(κ·ε))` digits, so two reach the
/// rounding level up to κ ≈ 1e8 and three up to 1e11.
const REFINE_STEPS: usize = 4;

/// Power-iteration steps of each extreme singular value in [`condition_estimate`].
const POWER_STEPS: usize = 12;

/// The text every endpoint solved here carries in its `reason`.
pub const DIRECT_REASON: &str =
    "a linear system: solved by one LU with iterative refinement; no path tracked";

/// A square system whose equations all have degree ≤ 1 and no negative exponents.
pub fn is_linear(system: &System) -> bool {
    system.equations.len() == system.n()
        && system
            .equations
            .iter()
            .all(|f| f.degree() <= 1 && !f.is_laurent())
}

/// `A` (row-major `n × n`) and `c` of a square system whose equations all have degree ≤ 1
/// and no negative exponents; `None` otherwise.
pub fn affine_parts(system: &System) -> Option<(Vec<C64>, Vec<C64>)> {
    let n = system.n();
    if !is_linear(system) {
        return None;
    }
    let mut a = vec![C64::new(0.0, 0.0); n * n];
    let mut c = vec![C64::new(0.0, 0.0); n];
    for (k, f) in system.equations.iter().enumerate() {
        for t in &f.terms {
            match t.exponents.iter().position(|&e| e != 0) {
                Some(j) => a[k * n + j] += t.coeff,
                None => c[k] += t.coeff,
            }
        }
    }
    Some((a, c))
}

/// LU factors `P·A = L·U` of a square matrix ([`lu_factor`]: column-major in place).
struct Lu {
    n: usize,
    /// Column-major factors.
    lu: Vec<C64>,
    piv: Vec<usize>,
}

impl Lu {
    /// Factors `a` (row-major `n × n`); `None` at a zero pivot or a non-finite entry.
    fn new(n: usize, a: &[C64]) -> Option<Lu> {
        let mut lu = vec![C64::new(0.0, 0.0); n * n];
        for i in 0..n {
            for j in 0..n {
                lu[j * n + i] = a[i * n + j];
            }
        }
        let mut piv = vec![0; n];
        let ratio = lu_factor(n, &mut lu, &mut piv);
        let finite = lu.iter().all(|z| z.re.is_finite() && z.im.is_finite());
        (ratio.is_finite() && finite).then_some(Lu { n, lu, piv })
    }

    /// `A⁻¹·b` in place.
    fn solve(&self, b: &mut [C64]) {
        lu_solve(self.n, &self.lu, &self.piv, b, 1);
    }

    /// `A⁻ᴴ·b` in place: `Aᴴ = Uᴴ·Lᴴ·P`, so `Uᴴ·s = b` (forward), `Lᴴ·t = s` (backward,
    /// unit diagonal), then the row swaps undone in reverse order.
    fn solve_adjoint(&self, b: &mut [C64]) {
        let (n, lu) = (self.n, &self.lu);
        // Entry (i, j) of the factors is lu[j·n + i]: U for i ≤ j, L below.
        for k in 0..n {
            let mut s = b[k];
            let col = &lu[k * n..(k + 1) * n];
            for i in 0..k {
                s -= col[i].conj() * b[i];
            }
            b[k] = s / col[k].conj();
        }
        for k in (0..n).rev() {
            let mut s = b[k];
            let col = &lu[k * n..(k + 1) * n];
            for i in k + 1..n {
                s -= col[i].conj() * b[i];
            }
            b[k] = s;
        }
        for (k, &p) in self.piv.iter().enumerate().rev() {
            b.swap(k, p);
        }
    }
}

/// `−(A·x + c)` with every product and sum in double-double, rounded to double at the end.
fn residual(n: usize, a: &[C64], c: &[C64], x: &[C64]) -> Vec<C64> {
    let xd: Vec<Cdd> = x.iter().map(|&v| Cdd::from(v)).collect();
    a.chunks_exact(n)
        .zip(c)
        .map(|(row, &ck)| {
            let s = row.iter().zip(&xd).fold(Cdd::from(ck), |s, (&akj, &xj)| {
                s.add(Cdd::from(akj).mul(xj))
            });
            -s.to_c64()
        })
        .collect()
}

fn norm_inf(v: &[C64]) -> f64 {
    v.iter().map(|z| z.norm()).fold(0.0, f64::max)
}

fn norm2(v: &[C64]) -> f64 {
    v.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt()
}

/// Fixed start vector of the power iterations (unit-modulus entries stepped by the golden
/// angle), so that the estimate is reproducible.
fn probe(n: usize) -> Vec<C64> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..n)
        .map(|i| C64::from_polar(1.0, golden * (i as f64 + 1.0)))
        .collect()
}

/// The matrix of [`crate::post::Refiner`]'s condition number at the unit point `y` of `x`:
/// `[J_y; y*]`, row k of the homogenized Jacobian `(a_k, c_k)` divided by its Bombieri–Weyl
/// weight (for degree 1 the 2-norm of the row), last row `ȳ`. Row-major `(n+1) × (n+1)`.
fn projective_matrix(n: usize, a: &[C64], c: &[C64], y: &[C64]) -> Vec<C64> {
    let nh = n + 1;
    let mut m = vec![C64::new(0.0, 0.0); nh * nh];
    for k in 0..n {
        let row = &mut m[k * nh..(k + 1) * nh];
        row[..n].copy_from_slice(&a[k * n..(k + 1) * n]);
        row[n] = c[k];
        let w = norm2(row);
        row.iter_mut().for_each(|z| *z /= w);
    }
    for j in 0..nh {
        m[n * nh + j] = y[j].conj();
    }
    m
}

/// `M·v` for row-major square `m`.
fn mul(m: &[C64], v: &[C64]) -> Vec<C64> {
    m.chunks_exact(v.len())
        .map(|row| row.iter().zip(v).map(|(a, b)| a * b).sum())
        .collect()
}

/// `Mᴴ·v` for row-major square `m`.
fn mul_adjoint(m: &[C64], v: &[C64]) -> Vec<C64> {
    let mut out = vec![C64::new(0.0, 0.0); v.len()];
    for (row, &vi) in m.chunks_exact(v.len()).zip(v) {
        for (o, a) in out.iter_mut().zip(row) {
            *o += a.conj() * vi;
        }
    }
    out
}

/// 2-norm condition number `σ_max/σ_min` of row-major `m` (`nh × nh`), estimated by
/// `POWER_STEPS` steps of the power method on `MᴴM` and on `(MᴴM)⁻¹` (through the LU of
/// `m`). Both are lower bounds of their singular values' ratio that converge to it, within a
/// small factor after a few steps; infinite where the LU meets a zero pivot.
pub fn condition_estimate(nh: usize, m: &[C64]) -> f64 {
    let Some(lu) = Lu::new(nh, m) else {
        return f64::INFINITY;
    };
    let normalize = |v: &mut Vec<C64>| {
        let s = norm2(v);
        v.iter_mut().for_each(|z| *z /= s);
        s
    };
    let mut v = probe(nh);
    normalize(&mut v);
    let mut smax = 0.0f64;
    for _ in 0..POWER_STEPS {
        let mut w = mul_adjoint(m, &mul(m, &v));
        smax = normalize(&mut w).sqrt();
        v = w;
    }
    let mut v = probe(nh);
    normalize(&mut v);
    let mut inv = 0.0f64;
    for _ in 0..POWER_STEPS {
        let mut w = v.clone();
        lu.solve_adjoint(&mut w);
        lu.solve(&mut w);
        inv = normalize(&mut w).sqrt();
        v = w;
    }
    let k = smax * inv;
    if k.is_finite() {
        k
    } else {
        f64::INFINITY
    }
}

/// The one solution of a square linear system as a nonsingular endpoint of path 0 (no steps,
/// [`DIRECT_REASON`]); `None` when the system is not linear and square, or when its point is
/// not decided nonsingular here (see the module's documentation).
pub fn solve(system: &System) -> Option<Endpoint> {
    let n = system.n();
    let (a, c) = affine_parts(system)?;
    let lu = Lu::new(n, &a)?;
    let mut x: Vec<C64> = c.iter().map(|&v| -v).collect();
    lu.solve(&mut x);
    // Refinement: x ← x + A⁻¹·(−(A·x + c)) with the residual in double-double, while the
    // corrections shrink; `last` and `ratio` as in the refiner's Newton.
    let (mut last, mut ratio) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..REFINE_STEPS {
        let mut dx = residual(n, &a, &c, &x);
        lu.solve(&mut dx);
        let eta = norm_inf(&dx) / (1.0 + norm_inf(&x));
        if !eta.is_finite() || eta >= last {
            break;
        }
        x.iter_mut().zip(&dx).for_each(|(v, d)| *v += d);
        if last.is_finite() && last > 0.0 {
            ratio = eta / last;
        }
        last = eta;
        if eta <= 1e-16 {
            break;
        }
    }
    if !x.iter().all(|v| v.re.is_finite() && v.im.is_finite()) {
        return None;
    }
    let mut y: Vec<C64> = x.iter().copied().chain([C64::new(1.0, 0.0)]).collect();
    let s = norm2(&y);
    y.iter_mut().for_each(|v| *v /= s);
    let condition = condition_estimate(n + 1, &projective_matrix(n, &a, &c, &y));
    let residual = system.relative_residual(&x);
    let converged = last <= 1e-14 && (ratio <= 0.1 || (ratio.is_infinite() && last <= 1e-15));
    let nonsingular = residual < RESIDUAL_TOL
        && (condition < SINGULAR_COND || (condition < NEWTON_COND_MAX && converged));
    if !nonsingular {
        return None;
    }
    let mut e = Endpoint::new(0, Status::Nonsingular);
    e.reason = Some(DIRECT_REASON.into());
    e.projective = y;
    e.coordinates = Some(x);
    e.residual = residual;
    e.condition = condition;
    e.rank = Some(n);
    e.error = last;
    Some(e)
}

/// The whole solve of a square linear system when [`solve`] decides its point: the summary
/// of path 0 of the total-degree start, with the run's plan (`--paths`, shards, finished
/// endpoints, a feed) applied to that one path. `None` (nothing reported yet) when the
/// system is not linear or its point is left to the tracker.
#[allow(clippy::too_many_arguments)]
pub(super) fn solved(
    system: &System,
    opts: &super::SolveOptions,
    backend: &dyn crate::backend::Backend,
    obs: &mut dyn super::Observer,
    clock: std::time::Instant,
    warnings: Vec<String>,
    root_counts: serde_json::Map<String, serde_json::Value>,
    start_reason: Option<String>,
) -> crate::error::Result<Option<crate::report::Summary>> {
    use crate::report::progress::Phase;
    let Some(endpoint) = solve(system) else {
        return Ok(None);
    };
    super::limits::check(system, 1, opts.only.as_deref(), &opts.limits)?;
    // The paths of this run: those a feed hands out, or the plan's, or `--paths`, or path 0.
    let ids: Vec<u64> = match &opts.plan.feed {
        Some(feed) => {
            let mut ids = Vec::new();
            while let Some(batch) = feed.0.next(1)? {
                ids.extend(batch);
            }
            ids
        }
        None => opts
            .plan
            .first_pass(1, opts.only.as_deref())?
            .or_else(|| opts.only.clone())
            .unwrap_or_else(|| vec![0]),
    };
    let start_system = clock.elapsed().as_secs_f64();
    obs.total(ids.len() as u128);
    obs.phase(Phase::FirstPass {
        paths: ids.len() as u64,
    });
    let mut tally = crate::report::Tally::default();
    opts.plan.done().iter().for_each(|e| tally.add(e));
    if ids.contains(&0) {
        tally.add(&endpoint);
        obs.endpoint(&endpoint)?;
    }
    let c = tally.counts();
    let failed_reasons = tally.failed_reasons();
    let mut summary = crate::report::Summary {
        system: system.name.clone(),
        variables: system.n(),
        paths: ids.len() as u64 + opts.plan.done().len() as u64,
        finite: c.nonsingular + c.singular,
        nonsingular: c.nonsingular,
        singular: c.singular,
        at_infinity: c.at_infinity,
        outside_torus: None,
        positive_dimensional: c.positive_dimensional,
        real: c.real,
        real_nonsingular: c.real_nonsingular,
        real_singular: c.real_singular,
        failed: c.failed,
        failed_reasons,
        duplicate_paths: c.duplicate_paths,
        recovered: 0,
        retracked: 0,
        retracked_early: 0,
        seconds: clock.elapsed().as_secs_f64(),
        phases: crate::report::Phases {
            start_system,
            ..Default::default()
        },
        backend: backend.name(),
        kernels: backend.setup_note(),
        start: super::StartKind::TotalDegree.name().into(),
        start_reason,
        seed: opts.seed,
        root_counts,
        warnings,
        attention: Vec::new(),
        solutions: tally.into_solutions(),
    };
    summary.attention = crate::report::attention(&summary);
    Ok(Some(summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The estimate against the singular values of nalgebra's SVD, on matrices of known
    /// condition `U·diag(σ)·V` (random unitary factors from QR).
    #[test]
    fn the_condition_estimate_is_close_to_the_svd() {
        use rand::{Rng, SeedableRng};
        for (nh, seed, kappa) in [(5, 1u64, 10.0f64), (30, 2, 1e6), (80, 3, 1e11)] {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut unitary = || {
                let g = nalgebra::DMatrix::<C64>::from_fn(nh, nh, |_, _| {
                    C64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0))
                });
                g.qr().q()
            };
            let (u, v) = (unitary(), unitary());
            let sigma = nalgebra::DMatrix::<C64>::from_fn(nh, nh, |i, j| {
                let s = kappa.powf(-(i as f64) / (nh - 1) as f64);
                C64::new(if i == j { s } else { 0.0 }, 0.0)
            });
            let m = u * sigma * v;
            let row_major: Vec<C64> = (0..nh * nh).map(|k| m[(k / nh, k % nh)]).collect();
            let est = condition_estimate(nh, &row_major);
            assert!(
                est <= kappa * 1.01 && est >= kappa / 10.0,
                "nh = {nh}: estimate {est:.3e}, condition {kappa:.1e}"
            );
        }
    }

    /// The adjoint solve inverts `Aᴴ`.
    #[test]
    fn the_adjoint_solve_inverts_the_adjoint() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let n = 9;
        let a: Vec<C64> = (0..n * n)
            .map(|_| C64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
            .collect();
        let lu = Lu::new(n, &a).unwrap();
        let b = probe(n);
        let mut z = b.clone();
        lu.solve_adjoint(&mut z);
        let back = mul_adjoint(&a, &z);
        let err = back
            .iter()
            .zip(&b)
            .map(|(u, v)| (u - v).norm())
            .fold(0.0, f64::max);
        assert!(err < 1e-12, "‖Aᴴz − b‖ = {err:.1e}");
    }
}
