//! Gap recovery: a run whose finite paths fall short of a bound on the finite roots tracks
//! its paths at infinity again, the most finite-looking first, with their last stretch in
//! double-double, until the bound is reached or a budget is spent.
//!
//! A path to a finite root of huge norm looks like a path to infinity down to
//! `s ≈ |y_n*|^{1/v}` (`y_n*` the root's homogenizing coordinate, `v` the valuation of the
//! face system it follows there). i1 (PHCpack's demo database, 66 roots, 20 of norm
//! 5e2–3.8e11) from its total-degree start has 19–20 such paths, stopped as diverging at
//! s ≈ 1e-8 with valuations 0.22–0.59 and κ = 90–2e4; tracked on in double-double from
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
//!   [`super::VERIFY_DIVERGING_COND`] (recovery verifies the others); for an m-hom start
//!   every path at infinity ([`Candidate::of_any`]), re-tracked with the switch to log
//!   coordinates in the endgame zone: the sparse chain's m-hom paths (n = 7–8) reach t = 1
//!   at infinity where their coordinates leave projective range near the target.
//! - **Re-tracking.** Each is tracked again from its start point as in the first pass,
//!   refined as in a recovery round (its stretch from the checkpoint in double-double, then
//!   Newton in double-double) with the first pass's pace limit on the double-double
//!   tracking ([`crate::post::Refiner::paced`]): a path that does diverge crawls and gives
//!   up after a few hundred steps. Every such path ends as the refinement classifies it: a
//!   root (nonsingular or singular), or at infinity or failed with the double-double
//!   tracking's outcome in its reason. Its line is a recovery line (`attempt` 1).
//! - **Budget.** Batches of growing size ([`FIRST_BATCH`], doubling), until the bound is
//!   reached, the candidates run out, the batches' steps (double and double-double) pass
//!   [`step_budget`] of the first pass's steps, or [`path_cap`] paths were tracked; and, while
//!   no candidate has given a new nonsingular solution, after two batches in a row of
//!   [`FRUITLESS_BATCH`] paths or more that give none, once the candidates stopped at a
//!   well-conditioned point ([`FRUITLESS_COND`], total-degree and m-hom starts) were all
//!   tracked again. A recovery that has found roots
//!   goes on to its budget: the gap is (at least partly) roots of huge norm, and their paths
//!   are spread along the order by the roots' own conditioning ([`FRUITLESS_BATCH`]).
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
        e.at_infinity_by_estimate().then(|| Candidate::at(e))
    }

    /// `e` as a candidate, when it is at infinity at all: by an estimate, or reached at t = 1
    /// with `y_n = 0` to rounding (an m-hom start's, [`Watch::every_at_infinity`]).
    pub fn of_any(e: &Endpoint) -> Option<Candidate> {
        (e.status == crate::post::Status::AtInfinity).then(|| Candidate::at(e))
    }

    /// [`Candidate::of_any`] when `every_at_infinity`, else [`Candidate::of`].
    pub fn of_start(e: &Endpoint, every_at_infinity: bool) -> Option<Candidate> {
        if every_at_infinity {
            Candidate::of_any(e)
        } else {
            Candidate::of(e)
        }
    }

    fn at(e: &Endpoint) -> Candidate {
        Candidate {
            path: e.path,
            valuation: e.valuation.unwrap_or(f64::NAN),
            condition: e.condition,
        }
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
/// nonsingular solution end a gap recovery that has found none yet: the bound is not met
/// by roots of huge norm there, but by a deficiency of the system (cyclic-8's curve, whose
/// singular points count towards the bound until the local dimension test names them,
/// 2,543 of 2,560 before the recovery; reimer-4's 36 roots of 120). Once it has found a
/// root, fruitless batches do not end it: a path to a root of huge norm stops where its
/// condition estimate is the root's own (it follows a nonsingular point of the homotopy),
/// and those roots' conditions spread over orders of magnitude, while the candidates
/// between them are the many paths to singular points at infinity not yet ill-conditioned
/// at their stop. i1 from a total-degree start with unit start coefficients, seed 2: 17
/// roots among the first 187 candidates by condition (κ ≤ 1e3), none in the next 821, the
/// root of norm 3.8e11 at 1,031 (κ = 2e4, valuation 0.587), found in the batch that the
/// path cap ends (1,845 paths, 539,213 steps).
pub const FRUITLESS_BATCH: usize = 64;
/// See [`FRUITLESS_BATCH`].
pub const FRUITLESS_BATCHES: u32 = 2;
/// Fruitless batches end a recovery only once the candidates stopped at a condition
/// estimate up to this were tracked again (or the budget is spent): such a stop is a
/// nonsingular point of the homotopy, where a path to a finite root may be (while one to a
/// singular point at infinity grows ill-conditioned). Cyclic-8 from the total-degree start,
/// seed 1: 11 roots of norm 15.7 (κ ≈ 400) are reached by paths stopped as diverging at
/// s ≈ 1e-8 (valuation 0.126–0.128, the face they follow down to s ≈ 1e-11) with κ = 16–26,
/// at places 463–882 of 37,595 candidates, behind paths to infinity with κ ≥ 2.3; two
/// fruitless batches (240 paths) had ended the recovery without them.
/// Total-degree and m-hom starts only ([`fruitless_cond`]): a polyhedral start's paths
/// diverge only where the coefficients are special, and its candidates are few.
pub const FRUITLESS_COND: f64 = 1e2;

/// The condition up to which the candidates are all tracked again before fruitless batches
/// may end a recovery ([`FRUITLESS_COND`]); none for a polyhedral start.
pub fn fruitless_cond(polyhedral: bool) -> f64 {
    if polyhedral {
        0.0
    } else {
        FRUITLESS_COND
    }
}

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

/// What the gap recovery asks of its solve.
pub trait Retrack {
    /// Tracks the paths `ids` (sorted) again as a recovery round of the gap recovery (see
    /// the module doc: the first pass's tracker, the last stretch in double-double, paced),
    /// their endpoints into the run's tally and observer; returns their steps.
    fn retrack(&mut self, ids: &[u64]) -> crate::error::Result<u64>;
    /// How many of `ids` end at finite points now.
    fn finite_among(&mut self, ids: &[u64]) -> u64;
    /// The run's finite roots with multiplicity and its nonsingular solutions now
    /// ([`crate::report::Tally::finite_with_multiplicity`]).
    fn finite_with_multiplicity(&mut self) -> (u64, u64);
}

/// The gap recovery of a run short of `bound` finite roots with multiplicity (`before`:
/// its finite roots with multiplicity and nonsingular solutions, as
/// [`Retrack::finite_with_multiplicity`] counts them): `candidates` tracked again by `run`
/// in batches, most plausible first, within `budget` steps and `most` paths (see the module
/// doc).
pub fn recover(
    candidates: Vec<Candidate>,
    bound: u64,
    before: (u64, u64),
    (budget, most): (u64, u64),
    wait_cond: f64,
    run: &mut dyn Retrack,
) -> crate::error::Result<GapRecovery> {
    let clock = std::time::Instant::now();
    let (finite, mut nonsingular) = before;
    let mut g = GapRecovery {
        bound,
        finite_before: finite,
        finite_after: finite,
        candidates: candidates.len() as u64,
        budget,
        ..Default::default()
    };
    // The candidates first in the order that the fruitless batches may not end it before.
    let well_conditioned = candidates
        .iter()
        .filter(|c| c.condition <= wait_cond)
        .count() as u64;
    let mut order = plausible_order(candidates).into_iter();
    let mut batch = FIRST_BATCH;
    // Batches in a row that gave no new nonsingular solution, and whether any batch did.
    let (mut fruitless, mut fruitful) = (0, false);
    g.stopped = loop {
        if g.finite_after >= bound {
            break "bound reached";
        }
        if g.steps >= budget || g.retracked >= most {
            break "budget spent";
        }
        if !fruitful && fruitless >= FRUITLESS_BATCHES && g.retracked >= well_conditioned {
            break "batches found nothing";
        }
        let take = batch.min((most - g.retracked) as usize);
        let mut ids: Vec<u64> = order.by_ref().take(take).collect();
        if ids.is_empty() {
            break "no candidate left";
        }
        batch *= 2;
        ids.sort_unstable();
        g.steps += run.retrack(&ids)?;
        g.retracked += ids.len() as u64;
        g.found += run.finite_among(&ids);
        let (finite, now) = run.finite_with_multiplicity();
        fruitful |= now > nonsingular;
        fruitless = if ids.len() >= FRUITLESS_BATCH && now <= nonsingular {
            fruitless + 1
        } else {
            0
        };
        (g.finite_after, nonsingular) = (finite, now);
    }
    .into();
    g.seconds = clock.elapsed().as_secs_f64();
    Ok(g)
}

/// The observer of a first pass: the candidates and the steps of its endpoints, each
/// endpoint passed on to `inner`.
pub(super) struct Watch<'o> {
    pub inner: &'o mut dyn super::Observer,
    pub candidates: Vec<Candidate>,
    pub steps: u64,
    /// Every path at infinity is a candidate ([`Candidate::of_any`]), not only those put
    /// there by an estimate.
    pub every_at_infinity: bool,
}

impl super::Observer for Watch<'_> {
    fn total(&mut self, paths: u128) {
        self.inner.total(paths)
    }

    fn endpoint(&mut self, e: &Endpoint) -> crate::error::Result<()> {
        self.steps += e.steps() as u64;
        self.candidates
            .extend(Candidate::of_start(e, self.every_at_infinity));
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

    /// A mock run: `roots` are the candidates whose re-tracking ends at a new nonsingular
    /// root; every re-tracked path costs 100 steps.
    struct Mock {
        roots: Vec<u64>,
        finite: u64,
        tracked: Vec<u64>,
    }

    impl Retrack for Mock {
        fn retrack(&mut self, ids: &[u64]) -> crate::error::Result<u64> {
            self.tracked.extend_from_slice(ids);
            self.finite += ids.iter().filter(|p| self.roots.contains(p)).count() as u64;
            Ok(100 * ids.len() as u64)
        }
        fn finite_among(&mut self, ids: &[u64]) -> u64 {
            ids.iter().filter(|p| self.roots.contains(p)).count() as u64
        }
        fn finite_with_multiplicity(&mut self) -> (u64, u64) {
            (self.finite, self.finite)
        }
    }

    /// Candidates 0..n, path p with condition p (the order is the paths').
    fn ordered(n: u64) -> Vec<Candidate> {
        (0..n)
            .map(|p| Candidate {
                path: p,
                valuation: 0.5,
                condition: 1.0 + p as f64,
            })
            .collect()
    }

    /// [`recover`] over 5,000 candidates in order of condition, bound 66, against a mock
    /// whose finite count starts at `finite` and whose paths `roots` are roots; `limits`:
    /// (step budget, path cap).
    fn recover_mock(roots: Vec<u64>, finite: u64, limits: (u64, u64)) -> (GapRecovery, Mock) {
        recover_mock_of(ordered(5000), 66, roots, finite, limits, FRUITLESS_COND)
    }

    /// [`recover`] of `candidates` towards `bound` on a [`Mock`] whose `roots` are found
    /// when tracked again, `finite` before.
    fn recover_mock_of(
        candidates: Vec<Candidate>,
        bound: u64,
        roots: Vec<u64>,
        finite: u64,
        limits: (u64, u64),
        fruitless_cond: f64,
    ) -> (GapRecovery, Mock) {
        let mut run = Mock {
            roots,
            finite,
            tracked: Vec::new(),
        };
        let before = run.finite_with_multiplicity();
        let g = recover(candidates, bound, before, limits, fruitless_cond, &mut run).unwrap();
        (g, run)
    }

    /// i1 seed 2's shape: roots early in the order, two fruitless batches (256 and 512
    /// paths), and the last root at 1,031; found within the path cap, and not beyond it.
    #[test]
    fn a_fruitful_recovery_goes_on_past_fruitless_batches() {
        let mut roots: Vec<u64> = (0..17).map(|k| 11 * k).collect();
        roots.push(1031);
        let (g, _) = recover_mock(roots, 48, (u64::MAX, 1845));
        assert_eq!((g.finite_after, g.found), (66, 18), "{g:?}");
        assert_eq!(g.stopped, "bound reached");
        assert_eq!(g.retracked, 1845, "{g:?}");
        let (g, _) = recover_mock(vec![1, 2, 1900], 48, (u64::MAX, 1845));
        assert_eq!((g.finite_after, g.retracked), (50, 1845), "{g:?}");
        assert_eq!(g.stopped, "budget spent");
    }

    /// A recovery that finds nothing stops after two fruitless batches of 64 paths or more
    /// (16 + 32 + 64 + 128 paths), and any recovery at its step budget.
    #[test]
    fn a_fruitless_recovery_stops_after_two_large_batches() {
        let (g, run) = recover_mock(vec![10_000], 30, (u64::MAX, 1845));
        assert_eq!(g.stopped, "batches found nothing");
        assert_eq!((g.retracked, g.found), (240, 0), "{g:?}");
        assert_eq!(run.tracked, (0..240).collect::<Vec<_>>());
        let (g, _) = recover_mock(vec![1, 2, 3], 30, (4_000, 1845));
        assert_eq!(g.stopped, "budget spent");
        assert_eq!((g.retracked, g.steps), (48, 4_800), "{g:?}");
    }

    /// Cyclic-8 seed 1's shape (total-degree start): 1,000 candidates stopped at κ = 2.3–32
    /// (well conditioned, [`FRUITLESS_COND`]), the roots at places 463, 473 and 882: two
    /// fruitless batches do not end the recovery before them; it goes on to the path cap.
    #[test]
    fn fruitless_batches_wait_for_the_well_conditioned_candidates() {
        let candidates: Vec<Candidate> = (0..3000)
            .map(|p| Candidate {
                path: p,
                valuation: 0.126,
                condition: 2.3 + 0.03 * p as f64 + if p >= 1000 { 1e3 } else { 0.0 },
            })
            .collect();
        let roots = vec![463, 473, 882];
        let limits = (u64::MAX, 1260);
        let (g, _) = recover_mock_of(
            candidates.clone(),
            2560,
            roots.clone(),
            2543,
            limits,
            fruitless_cond(false),
        );
        assert_eq!((g.found, g.finite_after), (3, 2546), "{g:?}");
        assert_eq!((g.retracked, g.stopped.as_str()), (1260, "budget spent"));
        // A polyhedral start's recovery does not wait.
        let (g, _) = recover_mock_of(candidates, 2560, roots, 2543, limits, fruitless_cond(true));
        assert_eq!((g.found, g.retracked), (0, 240), "{g:?}");
    }

    #[test]
    fn the_budget_is_a_share_with_a_floor() {
        assert_eq!(step_budget(0), STEP_FLOOR);
        assert_eq!(step_budget(10_000_000), 1_000_000);
    }
}
