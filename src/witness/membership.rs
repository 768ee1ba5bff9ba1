//! The homotopy membership test (Sommese–Verschelde–Wampler, "Numerical irreducible
//! decomposition using projections from points on the components", 2001, and the book of
//! Sommese–Wampler): a point `p` with `F(p) = 0` lies on the pure `d`-dimensional part
//! `Z_d` iff
//! moving the slices `L` of its witness set to the parallel slices `L_p` through `p`
//! (`A x − A p = 0`) takes some witness point to `p`. The witness point whose path ends at
//! `p` names the irreducible component `p` lies on.

use super::excess::{dd_relative_residual, EXCESS_RESIDUAL_TOL};
use super::moving::{nearest_within, relative_distance, Mover};
use super::slices::{random_unit, Slices};
use super::{rng, Stream, WitnessSet};
use crate::error::Result;
use num_complex::Complex64 as C64;

/// A moved witness point within this distance ([`relative_distance`]) of `p` reaches it.
/// Points of singular solution sets are known to ~1e-8 and worse; distinct points of a
/// generic slice are O(1) apart.
pub const MEMBER_TOL: f64 = 1e-6;

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

/// The index of the witness point of `w` whose path, as the slices move to pass through
/// `p`, ends at `p`; `None` when no path does (`p` is not on `Z_d`). `w`'s own randomized
/// equations are `mover.fixed`.
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
    let through = Slices::through(w.slices.coefficients.clone(), p);
    let gamma = random_unit(&mut rng(seed, Stream::Membership));
    let moved = mover.move_points(&w.slices, &through, gamma, &w.points)?;
    Ok(moved
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.x.as_ref().map(|x| (i, relative_distance(x, p))))
        .filter(|&(_, d)| d <= MEMBER_TOL)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i))
}
