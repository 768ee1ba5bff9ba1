//! Local dimension test: is a singular solution isolated, or a point of a
//! positive-dimensional component of `V(F)`?
//!
//! A point `x*` of a component `Z` of dimension `d ≥ 1` has solutions of `F` arbitrarily
//! close to it on every hyperplane near it: `Z ∩ H` is not empty for a hyperplane `H` at
//! distance `δ` from `x*` (small `δ`), and lies within `O(δ)` of `x*`. An isolated
//! solution has none: by the Łojasiewicz inequality `‖F(x)‖ ≥ c·‖x − x*‖^L` near it, with
//! `L ≤ μ` its multiplicity, so on such an `H` the residual stays above `c·δ^μ`.
//!
//! The test ([`sample_nearby`]): a random hyperplane `H: a·(x − x*) = δ·s·ω` (`‖a‖₂ = 1`,
//! `|ω| = 1`, `s = 1 + ‖x*‖∞`) and a start on `H` in the null space `N` of the row-scaled
//! Jacobian at `x*` (the tangent directions of `Z` lie in `N`), then Gauss–Newton on the
//! overdetermined `[F; H]` with minimum-norm steps (truncated SVD). It succeeds when the
//! relative residual ([`System::relative_residual`]) falls to [`SAMPLE_RESIDUAL`] within
//! `FAR·δ·s` of `x*`, and Gauss–Newton with residuals in double-double then brings it to
//! [`SAMPLE_RESIDUAL_DD`] (`confirm_dd`: double precision cannot tell the disc of
//! numerical roots around a root of high multiplicity from a curve). That is a point of
//! `V(F)` other than `x*`, which for a random `H` no isolated solution gives. Trials stop at the first success; a trial fails when Newton
//! stalls (no 10 % decrease of the residual in [`STALL_ITERATIONS`] steps), leaves the ball,
//! or runs out of [`MAX_ITERATIONS`].
//!
//! `δ` comes from the cluster's `m` paths: an isolated solution reached by `m` paths of a
//! generic homotopy has multiplicity `μ = m`, so `δ = 10^{−8/m}` (within
//! [`DELTA_MIN`]…[`DELTA_MAX`]) keeps `δ^μ ≥ 1e-8`, four orders above the success
//! threshold. At a node of a curve (two branches through `x*`), Gauss–Newton from a point
//! between the branches can stall at a nonzero local minimum of `‖[F; H]‖` (cyclic-8: about
//! half of the trials at its double points); trials are repeated with new `H` and start.
//! How many follows the first-order part of the Bates–Hauenstein–Peterson–Sommese local
//! dimension test (SIAM J. Numer. Anal. 47, 2009): the dual space of the local ring at an
//! isolated solution has dimension `μ`, and its part of order ≤ 1 already has dimension
//! `1 + corank J(x*)`. When that exceeds `m`, `x*` cannot be isolated (if the `m` paths
//! are all there are) and [`TRIALS_NOT_ISOLATED`] are spent before giving up; otherwise
//! [`TRIALS_MAYBE_ISOLATED`]. Only a sample found decides `positive_dimensional`: a cluster
//! whose paths were partly lost keeps its status `singular`.
//!
//! [`relabel`] applies the test to every singular cluster of a solve whose endpoints are
//! all singular (a cluster holding a nonsingular endpoint is isolated) and whose paths are
//! few enough for the residual to tell ([`decides`]: at most 15).

use crate::eval::dd::Cdd;
use crate::post::{Endpoint, Status};
use crate::system::System;
use nalgebra::DMatrix;
use num_complex::Complex64 as C64;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

/// A sample point is on `V(F)` when its relative residual is at most this: Gauss–Newton
/// at a point of a reduced component converges quadratically to ~1e-16.
pub const SAMPLE_RESIDUAL: f64 = 1e-12;
/// Smallest distance (relative to `1 + ‖x*‖∞`) of the hyperplane from the point: far
/// above the accuracy of a singular endpoint (1e-8 and better).
pub const DELTA_MIN: f64 = 1e-3;
/// Largest distance of the hyperplane from the point.
pub const DELTA_MAX: f64 = 0.1;
/// `δ = 10^{−DELTA_EXPONENT/m}` for a cluster of `m` paths: `δ^m = 1e-8`.
pub const DELTA_EXPONENT: f64 = 8.0;
/// Singular values of the row-scaled Jacobian at most this span the null space `N`.
pub const NULL_TOL: f64 = 1e-8;
/// Trials when `1 + corank J > m` (the point cannot be an isolated solution of
/// multiplicity `m`).
pub const TRIALS_NOT_ISOLATED: usize = 24;
/// Trials otherwise.
pub const TRIALS_MAYBE_ISOLATED: usize = 4;
/// Gauss–Newton steps per trial at most.
pub const MAX_ITERATIONS: usize = 40;
/// A trial stops when the residual has not decreased by 10 % in this many steps.
pub const STALL_ITERATIONS: usize = 4;
/// A trial stops when its point is farther than `FAR·δ·s` from `x*`.
pub const FAR: f64 = 10.0;
/// A sample is confirmed when its relative residual in double-double falls to this
/// (`confirm_dd`).
pub const SAMPLE_RESIDUAL_DD: f64 = 1e-24;
/// Refinement steps with residuals in double-double at most.
pub const DD_ITERATIONS: usize = 6;
/// Relative truncation of the singular values in the minimum-norm step.
const STEP_RCOND: f64 = 1e-12;

/// Whether a solve runs the test: yes unless the environment sets
/// `PATHTRACK_LOCAL_DIMENSION=0` (for comparisons, and for `solve --witness` tests).
pub fn enabled() -> bool {
    std::env::var("PATHTRACK_LOCAL_DIMENSION").map_or(true, |v| v != "0")
}

/// A point of `V(F)` found near `x*`.
#[derive(Clone, Debug)]
pub struct Sample {
    pub point: Vec<C64>,
    /// The hyperplane's distance from `x*`, relative to `1 + ‖x*‖∞`.
    pub delta: f64,
    /// Trials run (the last one succeeded).
    pub trials: usize,
}

/// `F(x)` divided row by row by [`crate::system::Polynomial::size_at`], the Jacobian with
/// the same rows scaled, and the relative residual `max_k |f_k(x)|/size_k(x)`.
fn scaled(system: &System, x: &[C64]) -> (Vec<C64>, DMatrix<C64>, f64) {
    let n = x.len();
    let m = system.equations.len();
    let mut f = Vec::with_capacity(m);
    let mut j = DMatrix::<C64>::zeros(m, n);
    let mut res = 0.0f64;
    for (k, p) in system.equations.iter().enumerate() {
        let w = p.size_at(x);
        let w = if w > 0.0 && w.is_finite() { w } else { 1.0 };
        let v = p.eval(x) / w;
        res = res.max(v.norm());
        f.push(v);
        for (c, g) in p.gradient(x).into_iter().enumerate() {
            j[(k, c)] = g / w;
        }
    }
    (f, j, res)
}

/// A complex number with real and imaginary parts uniform in [−1, 1).
fn random_c64(rng: &mut impl Rng) -> C64 {
    C64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0))
}

/// `‖a − b‖∞`.
fn sup_dist(a: &[C64], b: &[C64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(u, v)| (u - v).norm())
        .fold(0.0, f64::max)
}

/// Largest extent (relative to `1 + ‖x‖∞`) that [`rounding_extent`] probes.
pub const EXTENT_MAX: f64 = 8.0;
/// First radius (relative) that [`rounding_extent`] probes; a smaller extent counts as 0.
pub const EXTENT_MIN: f64 = 1e-6;
/// Bisections of the last doubling in [`rounding_extent`]: the extent to 1/16 of itself.
pub const EXTENT_BISECTIONS: usize = 4;

/// How far from `x`, relative to `s = 1 + ‖x‖∞`, the target system stays a zero to the
/// rounding of its evaluation ([`crate::post::rounding_ratio`] at most
/// [`crate::post::STALLED_ROUNDING_FACTOR`]) along the null direction `v` of the row-scaled
/// Jacobian: the largest `r` such that the points `x + ρ·s·ω·v`, `ω ∈ {1, −1, i, −i}`, are
/// zeros to rounding for `ρ = EXTENT_MIN·2^k ≤ r` on some ray (the last step bisected). Near
/// an isolated root of multiplicity μ the residual grows like `dist^μ`, so these points fill
/// a region of radius about `(2^μ·ε)^{1/μ}·s` (0.6 around the root of the expanded
/// `(x − 1)^31`) in which double precision cannot place the root: an endpoint there is
/// known to no better than its extent. 0 at a double or triple root (`ε^{1/2}`, `ε^{1/3}`
/// are below `EXTENT_MIN`) and on a curve (off its tangent line the residual grows like
/// `dist²`). `None` when `x` is no zero to rounding, or when a ray does not leave the region
/// within [`EXTENT_MAX`] (a line of zeros: no bounded region).
pub fn rounding_extent(system: &System, x: &[C64]) -> Option<f64> {
    use crate::post::{rounding_ratio, STALLED_ROUNDING_FACTOR};
    let zero = |p: &[C64]| rounding_ratio(system, p) <= STALLED_ROUNDING_FACTOR;
    if x.is_empty() || !zero(x) {
        return None;
    }
    let (_, j, _) = scaled(system, x);
    let svd = j.svd(false, true);
    let v_t = svd.v_t.as_ref()?;
    // The right singular vector of the smallest singular value; fewer equations than
    // variables leave a null space of dimension ≥ 1 beside it: no bounded region.
    if svd.singular_values.len() < x.len() {
        return None;
    }
    let k = (0..svd.singular_values.len())
        .min_by(|&a, &b| svd.singular_values[a].total_cmp(&svd.singular_values[b]))?;
    let v: Vec<C64> = v_t.row(k).iter().map(|z| z.conj()).collect();
    let s = 1.0 + x.iter().map(|z| z.norm()).fold(0.0, f64::max);
    let mut extent = 0.0f64;
    let mut p = x.to_vec();
    for w in [C64::new(1.0, 0.0), C64::new(-1.0, 0.0), C64::i(), -C64::i()] {
        let mut inside = |r: f64| {
            for ((pi, xi), vi) in p.iter_mut().zip(x).zip(&v) {
                *pi = xi + w * vi * (r * s);
            }
            zero(&p)
        };
        let mut r = EXTENT_MIN;
        while inside(r) {
            if r > EXTENT_MAX {
                return None;
            }
            r *= 2.0;
        }
        if r == EXTENT_MIN {
            continue;
        }
        // The boundary between r/2 (inside) and r (outside), to 2^-EXTENT_BISECTIONS of r.
        let (mut lo, mut hi) = (0.5 * r, r);
        for _ in 0..EXTENT_BISECTIONS {
            let mid = 0.5 * (lo + hi);
            if inside(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        extent = extent.max(lo);
    }
    Some(extent)
}

/// Whether the test can tell an isolated solution of multiplicity `paths` from a point of
/// a component. On a hyperplane at relative distance `δ` (`δ·s` with `s = 1 + ‖x*‖∞`) the
/// expanded `(x − x*)^μ` leaves the residual `(δ·s)^μ` against terms whose moduli sum to at
/// most `((2 + δ)·s)^μ`: a relative residual down to `(δ/(2 + δ))^μ`. Only where that is
/// four orders above [`SAMPLE_RESIDUAL_DD`] at the farthest hyperplane ([`DELTA_MAX`]) does
/// a confirmed sample exclude an isolated solution: `μ ≤ 15`. The expanded `(x − 1)^29`
/// with `x + 2y − 3` gave confirmed samples 0.09 from its root (relative residual 1e-39),
/// and its 29 paths were called positive-dimensional; a larger cluster keeps its status
/// `singular`.
pub fn decides(paths: usize) -> bool {
    (DELTA_MAX / (2.0 + DELTA_MAX)).powi(paths.min(i32::MAX as usize) as i32)
        >= 1e4 * SAMPLE_RESIDUAL_DD
}

/// Hyperplane distance for a cluster of `paths` paths (see the module doc).
pub fn delta_for(paths: usize) -> f64 {
    10f64
        .powf(-DELTA_EXPONENT / paths.max(1) as f64)
        .clamp(DELTA_MIN, DELTA_MAX)
}

/// Looks for a point of `V(F)` near `x` (a singular solution reached by `paths` paths) on
/// random hyperplanes at distance `δ`, `3δ`, `10δ`, … (at most [`DELTA_MAX`]) from it;
/// `None` when every trial failed (see the module doc).
pub fn sample_nearby(
    system: &System,
    x: &[C64],
    paths: usize,
    rng: &mut impl Rng,
) -> Option<Sample> {
    let n = x.len();
    // One nonzero polynomial in one variable has isolated roots only.
    if n <= 1 || system.equations.is_empty() {
        return None;
    }
    let (_, j, _) = scaled(system, x);
    let svd = j.svd(false, true);
    let v_t = svd.v_t.as_ref()?;
    // Right singular vectors of the smallest singular values span N (at least one).
    let mut sv: Vec<(f64, usize)> = svd
        .singular_values
        .iter()
        .enumerate()
        .map(|(i, &s)| (s, i))
        .collect();
    sv.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Rows beyond the equations' count (more variables than equations) are null too.
    let corank = (sv.iter().filter(|(s, _)| *s <= NULL_TOL).count() + n.saturating_sub(sv.len()))
        .clamp(1, n);
    let null: Vec<Vec<C64>> = sv
        .iter()
        .take(corank.min(sv.len()))
        .map(|&(_, i)| v_t.row(i).iter().map(|z| z.conj()).collect())
        .collect();
    let trials = if 1 + corank > paths {
        TRIALS_NOT_ISOLATED
    } else {
        TRIALS_MAYBE_ISOLATED
    };
    let scale = 1.0 + x.iter().map(|z| z.norm()).fold(0.0, f64::max);
    let delta0 = delta_for(paths);
    for t in 0..trials {
        let delta = (delta0 * [1.0, 3.0, 10.0][t % 3]).min(DELTA_MAX);
        if let Some(point) = trial(system, x, &null, delta, scale, rng) {
            return Some(Sample {
                point,
                delta,
                trials: t + 1,
            });
        }
    }
    None
}

/// One trial: Gauss–Newton on `[F; a·(y − x) − δ·s·ω]` from a point of the hyperplane
/// in `x + span(null)`.
fn trial(
    system: &System,
    x: &[C64],
    null: &[Vec<C64>],
    delta: f64,
    scale: f64,
    rng: &mut impl Rng,
) -> Option<Vec<C64>> {
    let n = x.len();
    let mut a: Vec<C64> = (0..n).map(|_| random_c64(rng)).collect();
    let norm = a.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
    a.iter_mut().for_each(|z| *z /= norm);
    let omega = C64::from_polar(1.0, rng.random_range(0.0..std::f64::consts::TAU));
    let target = omega * (delta * scale);
    // A random direction in the null space, scaled onto the hyperplane.
    let mut v = vec![C64::new(0.0, 0.0); n];
    for b in null {
        let c = random_c64(rng);
        v.iter_mut().zip(b).for_each(|(vi, bi)| *vi += c * bi);
    }
    let av: C64 = a.iter().zip(&v).map(|(p, q)| p * q).sum();
    if av.norm() == 0.0 || !av.norm().is_finite() {
        return None;
    }
    let k = target / av;
    let mut y: Vec<C64> = x.iter().zip(&v).map(|(xi, vi)| xi + k * vi).collect();
    let m = system.equations.len();
    let (mut best, mut since) = (f64::INFINITY, 0);
    for _ in 0..MAX_ITERATIONS {
        if sup_dist(&y, x) > FAR * delta * scale {
            return None;
        }
        let (f, j, res) = scaled(system, &y);
        if !res.is_finite() {
            return None;
        }
        if res <= SAMPLE_RESIDUAL {
            return confirm_dd(system, x, &a, target, &y).then_some(y);
        }
        if res < 0.9 * best {
            (best, since) = (res, 0);
        } else {
            since += 1;
            if since >= STALL_ITERATIONS {
                return None;
            }
        }
        let mut big = DMatrix::<C64>::zeros(m + 1, n);
        big.view_mut((0, 0), (m, n)).copy_from(&j);
        let mut rhs = nalgebra::DVector::<C64>::zeros(m + 1);
        for (i, fi) in f.iter().enumerate() {
            rhs[i] = -fi;
        }
        let mut h = -target;
        for (c, (ac, (yc, xc))) in a.iter().zip(y.iter().zip(x)).enumerate() {
            big[(m, c)] = *ac;
            h += ac * (yc - xc);
        }
        rhs[m] = -h;
        let svd = big.svd(true, true);
        let cut = STEP_RCOND * svd.singular_values.max();
        let step = svd.solve(&rhs, cut).ok()?;
        y.iter_mut().zip(step.iter()).for_each(|(yi, s)| *yi += s);
    }
    None
}

/// The sample `y` (residual at most [`SAMPLE_RESIDUAL`] in double) is refined by
/// Gauss–Newton with `[F; H]` evaluated in double-double (steps from the Jacobian in double):
/// true when its relative residual falls to [`SAMPLE_RESIDUAL_DD`]. Near an isolated root of
/// multiplicity `μ` double precision sees a disc of radius about `(2^μ·ε)^{1/μ}` of
/// numerical roots (0.2 for the expanded `(x − 1)^16`), a set of dimension 1 to Newton in
/// double; in double-double the residual there stays at `|x − x*|^μ`.
fn confirm_dd(system: &System, x: &[C64], a: &[C64], target: C64, y: &[C64]) -> bool {
    let n = x.len();
    let m = system.equations.len();
    let mut yd: Vec<Cdd> = y.iter().map(|&v| Cdd::from(v)).collect();
    let xd: Vec<Cdd> = x.iter().map(|&v| Cdd::from(v)).collect();
    for _ in 0..DD_ITERATIONS {
        let y64: Vec<C64> = yd.iter().map(|v| v.to_c64()).collect();
        let mut rhs = nalgebra::DVector::<C64>::zeros(m + 1);
        let mut big = DMatrix::<C64>::zeros(m + 1, n);
        let mut res = 0.0f64;
        for (k, p) in system.equations.iter().enumerate() {
            let w = p.size_at(&y64);
            let w = if w > 0.0 && w.is_finite() { w } else { 1.0 };
            let Some(v) = dd_value(p, &yd) else {
                return false;
            };
            let v = v.to_c64() / w;
            res = res.max(v.norm());
            rhs[k] = -v;
            for (c, g) in p.gradient(&y64).into_iter().enumerate() {
                big[(k, c)] = g / w;
            }
        }
        if !res.is_finite() {
            return false;
        }
        if res <= SAMPLE_RESIDUAL_DD {
            return true;
        }
        let mut h = Cdd::from(-target);
        for (c, ac) in a.iter().enumerate() {
            big[(m, c)] = *ac;
            h = h.add(Cdd::from(*ac).mul(yd[c].sub(xd[c])));
        }
        rhs[m] = -h.to_c64();
        let svd = big.svd(true, true);
        let cut = STEP_RCOND * svd.singular_values.max();
        let Ok(step) = svd.solve(&rhs, cut) else {
            return false;
        };
        yd.iter_mut()
            .zip(step.iter())
            .for_each(|(yi, s)| *yi = yi.add(Cdd::from(*s)));
    }
    false
}

/// `f(y)` in double-double at a double-double point; `None` at a zero coordinate under a
/// negative exponent.
fn dd_value(f: &crate::system::Polynomial, y: &[Cdd]) -> Option<Cdd> {
    let mut sum = Cdd::ZERO;
    for t in &f.terms {
        let mut v = Cdd::from(t.coeff);
        for (yj, &e) in y.iter().zip(&t.exponents) {
            if e > 0 {
                v = v.mul(yj.powi(e as u32));
            } else if e < 0 {
                if yj.to_c64() == C64::new(0.0, 0.0) {
                    return None;
                }
                v = v.div(yj.powi((-e) as u32));
            }
        }
        sum = sum.add(v);
    }
    Some(sum)
}

/// The singular clusters (each its point and endpoints, all singular:
/// `report::Tally::singular_clusters`) that [`sample_nearby`] finds on a
/// positive-dimensional component, as endpoints to record: each of their paths with
/// status [`Status::PositiveDimensional`], `attempt` as given (the line follows the run's
/// other lines of the path), and the sample in its reason. Each cluster draws from its own
/// random stream (`seed`, its first path), so the verdicts do not depend on the threads.
/// Runs on the current rayon pool.
pub fn relabel(
    system: &System,
    clusters: Vec<(Vec<C64>, Vec<Endpoint>)>,
    seed: u64,
    attempt: u8,
) -> Vec<Endpoint> {
    let clusters: Vec<Vec<Endpoint>> = clusters
        .into_par_iter()
        .filter_map(|(x, ends)| {
            if !decides(ends.len()) {
                return None;
            }
            let first = ends.iter().map(|e| e.path).min()?;
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(first);
            let sample = sample_nearby(system, &x, paths_at_one_point(&ends), &mut rng)?;
            let d = sup_dist(&sample.point, &x)
                / (1.0 + x.iter().map(|z| z.norm()).fold(0.0, f64::max));
            let why = format!(
                "on a positive-dimensional component: local dimension test found a solution \
                 at relative distance {d:.1e} on a random hyperplane (trial {}, δ = {:.0e})",
                sample.trials, sample.delta
            );
            Some(
                ends.into_iter()
                    .map(|mut e| {
                        e.status = Status::PositiveDimensional;
                        e.attempt = attempt;
                        e.reason = Some(why.clone());
                        e
                    })
                    .collect(),
            )
        })
        .collect();
    let mut out: Vec<Endpoint> = clusters.into_iter().flatten().collect();
    out.sort_by_key(|e| e.path);
    out
}

/// The multiplicity a cluster's endpoints allow: its size `m`, or 1 when two of them are
/// distinct points of `V(F)`: relative residuals `r₁, r₂` at most [`SAMPLE_RESIDUAL`] at
/// relative distance `D` with `(D/2)^m ≥ SPREAD_MARGIN·max(r₁, r₂, ε)`. Near an isolated
/// root of multiplicity `μ ≤ m` the residual grows like `dist^μ` (the module doc), so one of
/// them would have a residual above `(D/2)^m`; each is then a point reached by one path,
/// which a generic homotopy gives only at a nonsingular root or on a positive-dimensional
/// component. The test then spends [`TRIALS_NOT_ISOLATED`] trials rather than
/// [`TRIALS_MAYBE_ISOLATED`]: at a node of a curve about half of the trials stall, and
/// 4 trials left 2 of cyclic-8's double points (total-degree start, seed 2, two paths each,
/// 1e-4 apart at residuals 1e-16) `singular`.
fn paths_at_one_point(ends: &[Endpoint]) -> usize {
    let m = ends.len();
    let pts: Vec<(&[C64], f64)> = ends
        .iter()
        .filter(|e| e.residual <= SAMPLE_RESIDUAL)
        .filter_map(|e| Some((e.coordinates.as_deref()?, e.residual.max(f64::EPSILON))))
        .collect();
    let spread = pts.iter().enumerate().any(|(i, (a, ra))| {
        pts[i + 1..].iter().any(|(b, rb)| {
            let scale = 1.0 + a.iter().map(|z| z.norm()).fold(0.0, f64::max);
            let d = sup_dist(a, b) / scale;
            (d / 2.0).powi(m as i32) >= SPREAD_MARGIN * ra.max(*rb)
        })
    });
    if spread {
        1
    } else {
        m
    }
}

/// See [`paths_at_one_point`]: the margin of the residuals below `(D/2)^m` (that of the
/// test itself: `δ^m = 1e-8` against [`SAMPLE_RESIDUAL`]).
pub const SPREAD_MARGIN: f64 = 1e4;

#[cfg(test)]
mod tests {
    use super::*;

    /// Two paths at distinct points of the line `x = 0` (residual 0) count as one path
    /// each; two at one point, or at points whose residuals are too large for their
    /// distance (an isolated double root's approximations), as a cluster of two.
    #[test]
    fn distinct_points_of_a_cluster_count_once() {
        let at = |x: [f64; 2], residual: f64| Endpoint {
            coordinates: Some(vec![c(x[0]), c(x[1])]),
            residual,
            ..Endpoint::new(0, Status::Singular)
        };
        assert_eq!(
            paths_at_one_point(&[at([0.0, 0.3], 0.0), at([0.0, 0.3002], 1e-16)]),
            1
        );
        assert_eq!(
            paths_at_one_point(&[at([0.0, 0.3], 0.0), at([0.0, 0.3], 0.0)]),
            2
        );
        assert_eq!(
            paths_at_one_point(&[at([1e-8, 0.3], 1e-16), at([-1e-8, 0.3], 1e-16)]),
            2
        );
        assert_eq!(
            paths_at_one_point(&[at([1e-4, 0.3], 1e-9), at([-1e-4, 0.3], 1e-9)]),
            2
        );
    }

    fn sys(eqs: &[&str], vars: &[&str]) -> System {
        let vars: Vec<String> = vars.iter().map(|v| v.to_string()).collect();
        let text = format!(
            "variables: [{}]\nequations:\n{}",
            vars.join(", "),
            eqs.iter()
                .map(|e| format!("  - \"{e}\"\n"))
                .collect::<String>()
        );
        crate::system::parse_str(&text, "test").unwrap()
    }

    fn rng() -> rand_chacha::ChaCha8Rng {
        rand_chacha::ChaCha8Rng::seed_from_u64(1)
    }

    fn c(re: f64) -> C64 {
        C64::new(re, 0.0)
    }

    /// `x·(x − 1), x·(y − 2)`: the line `x = 0` and the point (1, 2). A point of the line
    /// (its Jacobian has rank 1 there) gives a sample on the line; the sample solves F.
    #[test]
    fn finds_points_of_a_line() {
        let s = sys(&["x*(x - 1)", "x*(y - 2)"], &["x", "y"]);
        let p = [c(0.0), C64::new(0.3, -0.7)];
        let got = sample_nearby(&s, &p, 1, &mut rng()).expect("on the line");
        assert!(got.point[0].norm() < 1e-12, "{:?}", got.point);
        assert!(s.relative_residual(&got.point) <= SAMPLE_RESIDUAL);
        assert!(sup_dist(&got.point, &p) >= got.delta * 0.5);
    }

    /// cbms1's origin (`x³ − yz, y³ − xz, z³ − xy`: an isolated solution of multiplicity
    /// 11, Jacobian 0 there) has no solution nearby; nor has a double root `x² = 0, y = 0`.
    #[test]
    fn isolated_singular_points_give_no_sample() {
        let cbms1 = sys(&["x^3 - y*z", "y^3 - x*z", "z^3 - x*y"], &["x", "y", "z"]);
        let o = [c(0.0), c(0.0), c(0.0)];
        for m in [1, 2, 11] {
            assert!(
                sample_nearby(&cbms1, &o, m, &mut rng()).is_none(),
                "m = {m}"
            );
        }
        let double = sys(&["x^2", "y - x"], &["x", "y"]);
        assert!(sample_nearby(&double, &[c(0.0), c(0.0)], 2, &mut rng()).is_none());
    }

    /// A surface (`x·z, y·z, (z − 1)·z·x`: the plane z = 0 and the line x = y = 0) is
    /// found from its points too: the hyperplane cuts it in a curve, and minimum-norm steps
    /// land on it.
    #[test]
    fn finds_points_of_a_plane() {
        let s = sys(&["x*z", "y*z", "(z - 1)*z*x"], &["x", "y", "z"]);
        let plane = [c(0.5), C64::new(-0.2, 0.4), c(0.0)];
        let got = sample_nearby(&s, &plane, 1, &mut rng()).expect("on the plane");
        assert!(s.relative_residual(&got.point) <= SAMPLE_RESIDUAL);
    }

    /// The expanded `(x − 1)^16` (with `y = 1`): in double precision every point within
    /// 0.2 of the root solves it to rounding, a disc that Newton in double takes for a
    /// curve; double-double tells the isolated root.
    #[test]
    fn a_root_of_multiplicity_16_is_isolated() {
        let binom = |k: u32| (1..=k).fold(1.0f64, |a, i| a * (16 - k + i) as f64 / i as f64);
        let eq: Vec<String> = (0..=16u32)
            .map(|k| {
                format!(
                    "{}*x^{k}",
                    binom(k) * if (16 - k) % 2 == 0 { 1.0 } else { -1.0 }
                )
            })
            .collect();
        let eq = eq.join(" + ");
        let s = sys(&[&eq, "y - 1"], &["x", "y"]);
        let root = [c(1.0), c(1.0)];
        assert!(sample_nearby(&s, &root, 16, &mut rng()).is_none());
    }

    /// The region of zeros to rounding: about `(2^μ·ε)^{1/μ}·(1 + ‖x‖∞)` around the
    /// expanded `(x − 1)^μ`'s root (μ = 16, 31; `3x − y − 2` makes the null direction
    /// `(1, 3)/√10`), none at a double root or on a curve off a straight line, no bound on a
    /// line of zeros, and nothing at a point that is no zero to rounding.
    #[test]
    fn rounding_extent_is_the_region_double_precision_cannot_resolve() {
        let power = |mu: u32| {
            let binom = |k: u32| (1..=k).fold(1.0f64, |a, i| a * (mu - k + i) as f64 / i as f64);
            (0..=mu)
                .map(|k| {
                    let c = binom(k) * if (mu - k) % 2 == 0 { 1.0 } else { -1.0 };
                    format!("{c}*x^{k}")
                })
                .collect::<Vec<_>>()
                .join(" + ")
        };
        let root = [c(1.0), c(1.0)];
        for mu in [16u32, 31] {
            let s = sys(&[&power(mu), "3*x - y - 2"], &["x", "y"]);
            let e = rounding_extent(&s, &root).expect("a bounded region");
            // Along (1, 3)/√10 the x-distance is e·s/√10 with s = 2.
            let dx = e * 2.0 / 10f64.sqrt();
            let disc = (2f64.powi(mu as i32) * f64::EPSILON).powf(1.0 / mu as f64);
            assert!(
                dx > 0.3 * disc && dx < 3.0 * disc,
                "μ = {mu}: {dx} against {disc}"
            );
            // (x, y) = (3, 7) is no zero to rounding.
            assert_eq!(rounding_extent(&s, &[c(3.0), c(7.0)]), None);
        }
        let double = sys(&["x^2 - 2*x + 1", "y - x"], &["x", "y"]);
        assert_eq!(rounding_extent(&double, &root), Some(0.0));
        let circle = sys(&["x^2 + y^2 - 2", "x^2 + y^2 - 2"], &["x", "y"]);
        assert_eq!(rounding_extent(&circle, &root), Some(0.0));
        let line = sys(&["x - y", "2*x - 2*y"], &["x", "y"]);
        assert_eq!(rounding_extent(&line, &root), None);
    }

    /// Clusters of up to 15 paths are tested, larger ones not.
    #[test]
    fn the_test_decides_up_to_multiplicity_15() {
        assert!((1..=15).all(decides));
        assert!(!(16..100).any(decides));
    }

    #[test]
    fn delta_keeps_the_isolated_residual_above_the_threshold() {
        for m in 1..40 {
            let d = delta_for(m);
            assert!((DELTA_MIN..=DELTA_MAX).contains(&d));
            assert!(d.powi(m as i32) >= 0.99e-8 || d == DELTA_MAX, "m = {m}");
        }
    }
}
