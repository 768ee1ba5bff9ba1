//! Gap recovery: a run whose finite paths fall short of a bound on the finite roots tracks
//! its paths at infinity again, the most finite-looking first, with their last stretch in
//! double-double, until the bound is reached or a budget is spent.
//!
//! A path to a finite root of huge norm looks like a path to infinity down to
//! `s ≈ |y_n*|^{1/v}` (`y_n*` the root's homogenizing coordinate, `v` the valuation of the
//! face system it follows there). i1 (PHCpack's demo database, 66 roots, 20 of norm
//! 5e2–3.8e11) from its total-degree start has 19–20 such paths, stopped as diverging at
//! s ≈ 1e-8 with valuations 0.22–0.59 and κ = 90–5,300; tracked on in double-double from
//! their checkpoints they reach their roots in 15–110 steps. The system
//! `1e-12·x³ + xy − 1, y² − z − 1, xz² + y − 3` (12 roots, 8 of norm 1e6) loses its 8 from
//! the polyhedral start as well: stopped at valuation 1/2 with κ ≈ 2. No test at the stop
//! tells such paths from the paths that do diverge (cyclic-7's 2,010 paths to its
//! positive-dimensional set at infinity stop as well conditioned), so the count decides
//! whether to look:
//!
//! - **Gap signal.** The isolated roots in C^n, counted with multiplicity, are at most the
//!   stable mixed volume (Huber–Sturmfels; Li–Wang), and a path ends at an isolated root
//!   only as one of its multiplicity's paths. A polyhedral start is held to its own path
//!   count; a total-degree or m-hom start to `max(mixed volume, stable mixed volume)`
//!   (cheap beside the run; the larger guards against an undercount of either), taken
//!   from `--start auto`'s choice when it computed it. Where the finite endpoints
//!   (nonsingular solutions, and singular ones with their paths) reach it, nothing is
//!   tracked again: cyclic-7, katsura-n, eco-n.
//! - **Order.** Candidates are the paths put at infinity by an estimate
//!   ([`crate::post::Endpoint::at_infinity_by_estimate`]), most finite-looking first
//!   ([`plausible_order`]); for a polyhedral start only those below
//!   [`super::VERIFY_DIVERGING_COND`] (recovery verifies the others).
//! - **Re-tracking.** Each is tracked again from its start point as in the first pass,
//!   refined as in a recovery round (its stretch from the checkpoint in double-double, then
//!   Newton in double-double) with the first pass's pace limit on the double-double
//!   tracking ([`crate::post::Refiner::paced`]): a path that does diverge crawls and gives
//!   up after a few hundred steps. Every such path ends as the refinement classifies it: a
//!   root (nonsingular or singular), or at infinity or failed with the double-double
//!   tracking's outcome in its reason. Its line is a recovery line (`attempt` 1).
//! - **Budget.** Batches of growing size ([`FIRST_BATCH`], doubling), until the bound is
//!   reached, the candidates run out, two batches in a row of [`FRUITLESS_BATCH`] paths or
//!   more give no new nonsingular solution, the batches' steps (double and double-double) pass
//!   [`step_budget`] of the first pass's steps, or [`path_cap`] paths were tracked.
//!
//! The summary's `phases.gap_recovery` says what it did. Unlike [`super::fallback`], no root
//! of another start is handed to a path: every root found here ends its own path.

use crate::post::Endpoint;
use serde::Serialize;

/// The first batch of re-tracked candidates; each further batch doubles.
pub const FIRST_BATCH: usize = 16;

/// The gap recovery's steps (double and double-double together) stop at this share of
/// the first pass's steps…
pub const STEP_SHARE: f64 = 0.1;
/// …or at this many, when that is more (small runs).
pub const STEP_FLOOR: u64 = 50_000;

/// The step budget of a gap recovery after a first pass of `first_pass_steps` steps.
pub fn step_budget(first_pass_steps: u64) -> u64 {
    ((first_pass_steps as f64 * STEP_SHARE) as u64).max(STEP_FLOOR)
}

/// The most paths a gap recovery tracks again in a run of `paths` paths: `max(64,
/// paths/32)` for total-degree and m-hom starts (i1, seed 1: its 20 paths to roots of huge
/// norm are among the 414 best-conditioned of 55,324 candidates; 59,049/32 = 1,845), and for
/// polyhedral ones, whose paths diverge only where the coefficients are special, the
/// [`super::verify_diverging_max`] of their verification.
pub fn path_cap(paths: u64, polyhedral: bool) -> u64 {
    if polyhedral {
        super::verify_diverging_max(paths)
    } else {
        (paths / 32).max(64)
    }
}

/// What a gap recovery did (the summary's `phases.gap_recovery`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct GapRecovery {
    /// The bound on the finite roots with multiplicity the run was held to.
    pub bound: u64,
    /// Finite roots with multiplicity before and after.
    pub finite_before: u64,
    pub finite_after: u64,
    /// Paths put at infinity by an estimate when it began.
    pub candidates: u64,
    /// Paths tracked again, and how many of them now end at finite points.
    pub retracked: u64,
    pub found: u64,
    /// Steps of those trackings, in double and in double-double.
    pub steps: u64,
    /// The step budget ([`step_budget`]).
    pub budget: u64,
    /// Why it stopped: "bound reached", "budget spent" ([`step_budget`], [`path_cap`]),
    /// "batches found nothing" ([`FRUITLESS_BATCH`]), "no candidate left".
    pub stopped: String,
    pub seconds: f64,
}

/// A path put at infinity by an estimate in the first pass.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub path: u64,
    /// The homogenizing coordinate's valuation at the stop (NaN if none).
    pub valuation: f64,
    /// The condition estimate there.
    pub condition: f64,
}

impl Candidate {
    /// `e` as a candidate, when it is at infinity by an estimate.
    pub fn of(e: &Endpoint) -> Option<Candidate> {
        e.at_infinity_by_estimate().then(|| Candidate {
            path: e.path,
            valuation: e.valuation.unwrap_or(f64::NAN),
            condition: e.condition,
        })
    }
}

/// The mixed volume and the stable mixed volume of `system` (lifting drawn from `seed`):
/// the gap signal's bound is the larger. `None` when either cannot be computed.
pub fn root_bound(system: &crate::system::System, seed: u64, threads: usize) -> Option<(u64, u64)> {
    use crate::start::polyhedral;
    let s = polyhedral::Supports::from_system(system).ok()?;
    let mv = polyhedral::mixed_volume_of(&s, seed, threads)
        .ok()?
        .mixed_volume;
    let smv = polyhedral::stable_mixed_volume_of(&s, seed, threads)
        .ok()?
        .stable_volume;
    Some((u64::try_from(mv).ok()?, u64::try_from(smv).ok()?))
}

/// [`FRUITLESS_BATCHES`] batches in a row of at least this many paths that give no new
/// nonsingular solution end the gap recovery: the bound is not met by roots of huge norm
/// there, but by a deficiency of the system (cyclic-8's curve, whose singular points count
/// towards the bound until the local dimension test names them, 2,543 of 2,560 before the
/// recovery; reimer-4's 36 roots of 120). i1 (seed 1) finds new roots in each of its batches
/// (16, 32, 64, 128 and 256 paths); seed 2 none in its batch of 256 (48 → 65 of 66 before).
pub const FRUITLESS_BATCH: usize = 64;
/// See [`FRUITLESS_BATCH`].
pub const FRUITLESS_BATCHES: u32 = 2;

/// The candidates' paths, most finite-looking first: by the condition estimate at the stop,
/// smallest first (NaN last; ties by path). A path to a finite root stays near a
/// nonsingular point of the homotopy, while one to a singular point at infinity (winding
/// number `w ≥ 2`, fractional valuation) has κ growing like `s^{−(1 − 1/w)}`. i1 (seed 1):
/// its 20 paths to roots of norm 5e2–3.8e11 are among the first 414 of 55,324 candidates by
/// κ, against the first 2,922 by the valuation.
pub fn plausible_order(mut candidates: Vec<Candidate>) -> Vec<u64> {
    let key = |c: &Candidate| {
        if c.condition.is_nan() {
            f64::INFINITY
        } else {
            c.condition
        }
    };
    candidates.sort_by(|a, b| key(a).total_cmp(&key(b)).then(a.path.cmp(&b.path)));
    candidates.into_iter().map(|c| c.path).collect()
}

/// The observer of a first pass: the candidates and the steps of its endpoints, each
/// endpoint passed on to `inner`.
pub(super) struct Watch<'o> {
    pub inner: &'o mut dyn super::Observer,
    pub candidates: Vec<Candidate>,
    pub steps: u64,
}

impl super::Observer for Watch<'_> {
    fn total(&mut self, paths: u128) {
        self.inner.total(paths)
    }

    fn endpoint(&mut self, e: &Endpoint) -> crate::error::Result<()> {
        self.steps += e.steps() as u64;
        self.candidates.extend(Candidate::of(e));
        self.inner.endpoint(e)
    }

    fn phase(&mut self, phase: crate::report::progress::Phase) {
        self.inner.phase(phase)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Well-conditioned stops first, unknown conditions last, ties by path.
    #[test]
    fn candidates_in_order_of_condition() {
        let c = |path, condition| Candidate {
            path,
            valuation: 0.5,
            condition,
        };
        let order = plausible_order(vec![
            c(4, f64::NAN),
            c(3, 1e10),
            c(9, 90.0),
            c(1, 5e3),
            c(2, 90.0),
        ]);
        assert_eq!(order, vec![2, 9, 1, 3, 4]);
    }

    #[test]
    fn the_budget_is_a_share_with_a_floor() {
        assert_eq!(step_budget(0), STEP_FLOOR);
        assert_eq!(step_budget(10_000_000), 1_000_000);
    }
}
