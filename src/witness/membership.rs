//! The homotopy membership test (Sommese–Verschelde–Wampler, "Numerical irreducible
//! decomposition using projections from points on the components", 2001, and the book of
//! Sommese–Wampler): a point `p` with `F(p) = 0` lies on the pure `d`-dimensional part
//! `Z_d` iff
//! moving the slices `L` of its witness set to the parallel slices `L_p` through `p`
//! (`A x − A p = 0`) takes some witness point to `p`. The witness point whose path ends at
//! `p` names the irreducible component `p` lies on.

use super::excess::{dd_relative_residual, EXCESS_RESIDUAL_TOL};
use super::moving::{nearest_within, relative_distance, Moved, Mover};
use super::slices::{random_unit, Slices};
use super::{rng, Stream, WitnessSet};
use crate::error::Result;
use crate::system::System;
use num_complex::Complex64 as C64;

/// A moved witness point within this distance ([`relative_distance`]) of `p` reaches it.
/// Points of singular solution sets are known to ~1e-8 and worse; distinct points of a
/// generic slice are O(1) apart.
pub const MEMBER_TOL: f64 = 1e-6;

/// The largest distance at which a moved witness point may still be matched with `p`,
/// however ill-conditioned ([`match_tolerance`]): distinct points of a generic slice are
/// O(1) apart.
pub const MATCH_TOL_MAX: f64 = 1e-3;

/// Failed paths of [`on_set_by_all_points`] are tracked again at most this many times,
/// each with another `γ`, while no moved point matches.
pub const MOVE_RETRIES: usize = 5;

/// Singular values of the row-scaled Jacobian of `[R·F; L_p]` at `p` above this make `p` a
/// nonsingular solution, for [`on_set_by_one_path`].
pub const ONE_PATH_RANK_TOL: f64 = 1e-6;

/// The witness point of `w` whose component holds `p` ([`on_set_by_all_points`]), trying
/// [`on_set_by_one_path`] first; `None` at once where `p` is no zero of `R·F` (relative
/// residual in double-double above [`EXCESS_RESIDUAL_TOL`]).
pub fn on_set(
    mover: &mut Mover<'_>,
    w: &WitnessSet,
    p: &[C64],
    seed: u64,
) -> Result<Option<usize>> {
    let fixed = mover.target(&Slices {
        coefficients: Vec::new(),
        constants: Vec::new(),
    });
    if dd_relative_residual(&fixed, p) > EXCESS_RESIDUAL_TOL {
        return Ok(None);
    }
    match on_set_by_one_path(mover, w, p, seed)? {
        Some(i) => Ok(Some(i)),
        None => on_set_by_all_points(mover, w, p, seed),
    }
}

/// `p` (a zero of `R·F`) tracked from the slices through it to `w`'s, when `p` is a
/// nonsingular solution of `[R·F; L_p]` (see the module doc): the witness point it reaches, or `None` (no answer:
/// `p` is singular there, or on no component of `Z_d`, or the path failed).
pub fn on_set_by_one_path(
    mover: &mut Mover<'_>,
    w: &WitnessSet,
    p: &[C64],
    seed: u64,
) -> Result<Option<usize>> {
    if w.dimension == 0 || w.points.is_empty() {
        return Ok(nearest_within(&w.points, p, MEMBER_TOL));
    }
    let through = Slices::through(w.slices.coefficients.clone(), p);
    let n = p.len();
    if crate::post::numerical_rank(&mover.target(&through), p, ONE_PATH_RANK_TOL) < n {
        return Ok(None);
    }
    let gamma = random_unit(&mut rng(seed, Stream::Membership));
    let moved = mover.move_points(&through, &w.slices, gamma, &[p.to_vec()])?;
    Ok(moved[0]
        .x
        .as_ref()
        .and_then(|x| nearest_within(&w.points, x, MEMBER_TOL)))
}

/// At most this many Gauss–Newton steps: near a singular point of `V(G)` they converge
/// linearly, halving the distance at worst.
const PROJECTION_STEPS: usize = 100;

/// A Gauss–Newton step is taken only where it lowers the relative residual by this factor
/// at least.
const PROJECTION_GAIN: f64 = 0.9;

/// The projected point is used only within this relative distance of the point given: the
/// points it serves are known to ~1e-3 at worst, and farther steps left their neighbourhood.
pub const PROJECTION_MAX_MOVE: f64 = 1e-2;

/// `p` moved onto the zeros of `g` by Gauss–Newton with minimum-norm steps,
/// `x ← x − J(x)⁺ g(x)` (the pseudo-inverse from the singular values of the `m × n`
/// Jacobian, those below `1e-13·σ_max` taken as zero), each step taken only where it
/// lowers the relative residual ([`System::relative_residual`]) by [`PROJECTION_GAIN`]: a
/// point of `V(G)` near `p`. Near a smooth point of `V(G)` the steps converge
/// quadratically; near a singular one (where components meet: the endpoints of paths that
/// end on a positive-dimensional solution set, known to ~1e-4 there) linearly. A point
/// that is a zero to rounding does not move (a step through small singular values there
/// is rounding amplified). Returns `p` itself where the steps leave it by more than
/// [`PROJECTION_MAX_MOVE`].
pub fn onto_zeros(g: &System, p: &[C64]) -> Vec<C64> {
    let (m, n) = (g.equations.len(), p.len());
    let residual = |x: &[C64]| g.relative_residual(x);
    let mut x = p.to_vec();
    let mut r = residual(&x);
    for _ in 0..PROJECTION_STEPS {
        if r == 0.0 {
            break;
        }
        let values = nalgebra::DVector::from_iterator(m, g.eval(&x).into_iter().map(|v| -v));
        let rows: Vec<Vec<C64>> = g.equations.iter().map(|f| f.gradient(&x)).collect();
        let jacobian = nalgebra::DMatrix::from_fn(m, n, |i, j| rows[i][j]);
        let svd = jacobian.svd(true, true);
        let cut = 1e-13 * svd.singular_values.max();
        let Ok(step) = svd.solve(&values, cut) else {
            break;
        };
        let y: Vec<C64> = x.iter().zip(step.iter()).map(|(x, s)| x + s).collect();
        let ry = residual(&y);
        if !(ry <= PROJECTION_GAIN * r) {
            break;
        }
        (x, r) = (y, ry);
    }
    if relative_distance(&x, p) <= PROJECTION_MAX_MOVE {
        x
    } else {
        p.to_vec()
    }
}

/// How far a moved witness point `x` (its endpoint `e`) may be from `p` and still be `p`:
/// [`MEMBER_TOL`], or the first-order error bound `κ(x)·max(r(x), r(p), ε)` where that is
/// larger (at most [`MATCH_TOL_MAX`]). A zero of the square system `[G; L_p]` with relative
/// residual `r` lies within about `κ·r` of the solution it approximates, `κ` the
/// row-scaled condition number there; `p` is a zero of it too, and near a point of `Z_d`
/// where the slices cut the set at a small angle (cyclic-9's surface where coordinates of
/// size 40 and 1e-3 meet, `κ ≈ 1e12`) the two agree to 1e-5 only.
fn match_tolerance(e: &crate::post::Endpoint, residual_p: f64) -> f64 {
    let r = e.residual.max(residual_p).max(f64::EPSILON);
    let bound = e.condition * r;
    if bound.is_finite() {
        bound.clamp(MEMBER_TOL, MATCH_TOL_MAX)
    } else {
        MEMBER_TOL
    }
}

/// The index of the witness point of `w` whose path, as the slices move to pass through
/// `p`, ends at `p`; `None` when no path does (`p` is not on `Z_d`). `w`'s own randomized
/// equations are `mover.fixed`. `p` is first moved onto their zeros ([`onto_zeros`]): a
/// singular point of a positive-dimensional solution set is known to ~1e-4 only, while
/// the moved witness points land on the set to the rounding. A moved point matches `p`
/// within [`match_tolerance`]; while none does, the paths that failed are tracked again
/// with another `γ` ([`MOVE_RETRIES`]): the one path that reaches `p` is all the test has.
pub fn on_set_by_all_points(
    mover: &mut Mover<'_>,
    w: &WitnessSet,
    p: &[C64],
    seed: u64,
) -> Result<Option<usize>> {
    if w.dimension == 0 {
        return Ok(nearest_within(&w.points, p, MEMBER_TOL));
    }
    if w.points.is_empty() {
        return Ok(None);
    }
    let fixed = mover.target(&Slices {
        coefficients: Vec::new(),
        constants: Vec::new(),
    });
    let p = &onto_zeros(&fixed, p);
    let through = Slices::through(w.slices.coefficients.clone(), p);
    let residual_p = dd_relative_residual(&mover.target(&through), p);
    let nearest = |moved: &[Moved]| {
        moved
            .iter()
            .enumerate()
            .filter_map(|(i, m)| {
                let d = relative_distance(m.x.as_ref()?, p);
                (d <= match_tolerance(&m.endpoint, residual_p)).then_some((i, d))
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    };
    let mut r = rng(seed, Stream::Membership);
    let mut moved = mover.move_points(&w.slices, &through, random_unit(&mut r), &w.points)?;
    for _ in 0..MOVE_RETRIES {
        let failed: Vec<usize> = (0..moved.len()).filter(|&i| moved[i].x.is_none()).collect();
        if failed.is_empty() || nearest(&moved).is_some() {
            break;
        }
        let starts: Vec<Vec<C64>> = failed.iter().map(|&i| w.points[i].clone()).collect();
        let again = mover.move_points(&w.slices, &through, random_unit(&mut r), &starts)?;
        for (i, m) in failed.into_iter().zip(again) {
            moved[i] = m;
        }
    }
    Ok(nearest(&moved))
}
