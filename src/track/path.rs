//! One path's state machine: start refinement → (RK4 stages 2–4 → Newton corrections)* → end.

use super::options::TrackerOptions;
use super::start_point::StartPoint;
use crate::endgame::cauchy::{loop_cap, Cauchy, LoopEnd, MAX_ROUNDS};
use crate::endgame::{homogenizing_valuation, VALUATION_TOL};
use crate::eval::Residual;

/// Endgame samples are taken each time `s = τ_end − τ` shrinks by this factor.
pub const SAMPLE_RATIO: f64 = 3.0;
/// Newton steps below `NOISE_FACTOR · κ · ε` (κ the condition estimate) are rounding noise:
/// such a step counts as converged and is not asked to contract.
pub const NOISE_FACTOR: f64 = 8.0;

/// A Newton correction that stops contracting below this size is taken as converged to the
/// rounding level of the linear solve.
pub const STAGNATION_TOL: f64 = 1e-6;

/// A log-mode path switches to projective coordinates once `max_j Re z_j − min_j Re z_j`
/// (with `z_n = 0`) is at most this: the coordinates then differ by at most e^30 ≈ 1e13.
pub const LOG_SWITCH_SPREAD: f64 = 30.0;
/// A polyhedral path, projective before the endgame zone, goes back to log coordinates when
/// its coordinates spread over more than this (in `ln`; e^33 ≈ 2e14; the tracker's
/// `to_log_spread`): a path passing close to toric infinity at some t < 1 (eco-n's do, with
/// coordinates down to 1e-17 of the largest) is tracked there with every coordinate to full
/// relative accuracy. Not for total-degree and m-hom starts: their paths to infinity can
/// spread hierarchically (eco-8: 1e-2, 1e-11, 1e-33, 1e-97, …) and in log coordinates
/// stalled in the endgame zone.
pub const TO_LOG_SPREAD: f64 = 33.0;
/// A step that would take a projective path from below [`TO_LOG_SPREAD`] to beyond it by
/// more than this (in `ln`) is rejected (halved) rather than switched there: at the spread
/// 37 that one step of eco-10 seed 4 reached, the smallest coordinates (8e-17 of the
/// largest) had no correct digit left and Newton in log coordinates diverged.
pub const TO_LOG_OVERSHOOT: f64 = 1.0;
/// In the endgame zone the switch happens whenever the coordinates are representable.
pub const LOG_SWITCH_SPREAD_ENDGAME: f64 = 600.0;

/// A path in the endgame zone that takes this many steps without halving `s = τ_end − τ`
/// stalls: it stops, and post-processing tracks its last stretch in double-double
/// ([`super::dd`]). Paths to chandra-12's solutions of norm 1e8 (κ ≈ 1e15) crawled at steps
/// of 5e-19 at s = 6e-14 until the 20,000-step limit, ~5 s per path on two cores; a
/// nonsingular path halves `s` every few steps.
pub const STALL_STEPS: u32 = 1000;
/// ... and a path in the zone whose last [`TINY_STEP_RUN`] steps were each shorter than
/// `TINY_STEP · s` stalls too, without waiting for [`STALL_STEPS`]: at that pace halving
/// `s` takes ~70,000 steps. chandra-12 (seed 2, CPU reference of resident tracking) path
/// 1473 took 984 steps of 1e-17 at s = 1.2e-10 (κ ≈ 1e8, first corrections 1e-6 however
/// short the step, the point drifting along the near-kernel of the Jacobian) before the
/// stall rule handed it to double-double tracking: on the GPU, the last 90 ms of the run
/// were that one path on one core.
pub const TINY_STEP: f64 = 1e-5;
/// See [`TINY_STEP`].
pub const TINY_STEP_RUN: u32 = 32;
/// The reason of a path stopped as diverging begins with this (the others stalled).
pub const DIVERGING: &str = "diverging";
/// A diverging path is stopped once `s = τ_end − τ` is below this.
pub const DIVERGENCE_S: f64 = 1e-8;
/// Endgame samples kept per path (the newest).
pub const MAX_SAMPLES: usize = 4;

/// A condition estimate at which a step's Newton correction in double is all rounding
/// (`κ·ε ≈ 1`): the double tracker cannot follow a path there.
pub const DOUBLE_COND_LIMIT: f64 = 1.0 / f64::EPSILON;
/// [`beyond_double`] judges only points whose condition estimate is at least this: below
/// it the growth of κ between samples says little (the QR estimate can be low by one or two
/// orders of magnitude).
pub const BEYOND_DOUBLE_MIN_COND: f64 = 1e5;
/// ... and only a growth `κ ∼ s^{−k}` with `k` at least this on both of the last two
/// pairs of samples.
pub const BEYOND_DOUBLE_MIN_RATE: f64 = 0.5;

/// The rule that stops a path heading to infinity once double precision cannot take it to
/// the divergence test at [`DIVERGENCE_S`] (used by [`PathState`] at its endgame samples):
/// `conds` holds `(s, κ)` at the last three samples (newest last) and `samples` the samples
/// themselves. The homogenizing coordinate's valuation is positive (`> 2·VALUATION_TOL`) on
/// the last two pairs of samples, κ grows like `s^{−k}` with `k ≥`
/// [`BEYOND_DOUBLE_MIN_RATE`] on both pairs of `conds`, the newest κ is at least
/// [`BEYOND_DOUBLE_MIN_COND`], and κ extrapolated with the smaller `k` to `s =`
/// [`DIVERGENCE_S`] reaches [`DOUBLE_COND_LIMIT`]. Returns the newest valuation and `k`.
/// `s = τ_end − τ` of a sample: `tau_end` is the tracker's. Both step machines apply it:
/// [`PathState`] and the resident slots (`track::resident::slot`, `kernels/track.cu`).
///
/// Without the rule such a path goes on until its steps underflow where `κ·ε` swamps them,
/// and is then put at infinity by the same valuation estimate: cyclic-12's paths towards the
/// positive-dimensional sets at infinity (27 % of its 500,352 paths) have `κ ∼ s^{−2}` to
/// `s^{−5.6}` and then take 300–4,600 steps each (regular paths 114): on its first 400 paths
/// (seed 1), 81 % of the first pass's steps.
/// A path to a finite solution of huge norm mimics a diverging one only while
/// `s > 1/‖x‖`, and its κ stays below what double resolves until then (the double tracker
/// takes chandra-12's paths to their solutions of norm 1e8 down to s ≈ 1e-13); with the
/// rule chandra-12 and chandra-13 take the same steps, path for path.
pub fn beyond_double(
    conds: &[(f64, f64)],
    samples: &[(f64, Vec<C64>)],
    tau_end: f64,
) -> Option<(f64, f64)> {
    let (k, m) = (samples.len(), conds.len());
    if k < 3 || m < 3 {
        return None;
    }
    let v1 = homogenizing_valuation(&samples[k - 3..k - 1], tau_end)?;
    let v2 = homogenizing_valuation(&samples[k - 2..], tau_end)?;
    if v1.min(v2) <= 2.0 * VALUATION_TOL {
        return None;
    }
    let rate = |(s1, c1): (f64, f64), (s2, c2): (f64, f64)| (c2 / c1).ln() / (s1 / s2).ln();
    let r = rate(conds[m - 3], conds[m - 2]).min(rate(conds[m - 2], conds[m - 1]));
    let (s, cond) = conds[m - 1];
    let reach = cond.ln() + r * (s / DIVERGENCE_S).ln();
    (r >= BEYOND_DOUBLE_MIN_RATE
        && cond >= BEYOND_DOUBLE_MIN_COND
        && reach >= DOUBLE_COND_LIMIT.ln())
    .then_some((v2, r))
}

/// The homogenizing coordinate's valuation between the last two endgame samples `(τ, y)`
/// (`s = τ_end − τ`) is above `2·VALUATION_TOL`: the path heads to infinity, or to a finite
/// point of huge norm that it reaches only at much smaller `s` (both step machines).
pub(crate) fn heading_to_infinity(samples: &[(f64, Vec<C64>)], tau_end: f64) -> bool {
    homogenizing_valuation(samples, tau_end).is_some_and(|v| v > 2.0 * VALUATION_TOL)
}

/// The reason of a path stopped as diverging by [`stable_divergence`] (valuation `v`),
/// whichever step machine stopped it.
pub fn diverging_reason(v: f64) -> String {
    format!("{DIVERGING} (valuation {v:.3})")
}

/// The reason of a path that took [`STALL_STEPS`] steps without halving `s`, stopped at `s`,
/// whichever step machine stopped it.
pub fn stalled_reason(s: f64) -> String {
    format!("stalled ({STALL_STEPS} steps at s = {s:.1e})")
}

/// The reason of a path stopped by [`beyond_double`] (valuation `v`, growth `k`) at `s`
/// with condition estimate `cond`, whichever step machine stopped it.
pub fn beyond_double_reason(v: f64, k: f64, s: f64, cond: f64) -> String {
    format!(
        "{DIVERGING} (valuation {v:.3}; condition {cond:.1e} at s = {s:.1e}, growing like \
         s^-{k:.1}: beyond double precision before s = {DIVERGENCE_S:.0e})"
    )
}

/// A path in the endgame zone looks singular (and switches to the Cauchy endgame) when the
/// Euler direction grows like `s^α` with `α` below this on the last two pairs of samples: a
/// path with winding number `c` has `|dy/ds| ∼ s^{1/c − 1}`, a nonsingular one `α ≥ 0`.
pub const SINGULAR_SLOPE: f64 = -0.2;
/// ... and the estimates agree to this (the Puiseux expansion dominates: no other
/// branch point near the loops to come).
pub const SLOPE_AGREEMENT: f64 = 0.1;
/// ... on this many successive pairs of samples (four samples, `s` shrinking 27-fold).
/// With two: 55 of chandra-10's 512 paths, all to nonsingular but
/// ill-conditioned endpoints, showed two agreeing slopes; their loops all closed with
/// winding number 1 and cost a tenth of the run's steps. With three, 5 paths loop, and
/// cyclic-8's singular endpoints still take the endgame (582 against 588 Cauchy endpoints,
/// same counts).
pub const TRIGGER_SLOPES: usize = 3;
/// ... and both lie above `1/c_max − 1` with `c_max` = [`MAX_TRIGGER_WINDING`]: a Puiseux
/// branch has `α = 1/c − 1 > −1`, while `α ≤ −1` (seen down to −1.6 on chandra-8, whose
/// endpoints are all nonsingular with condition numbers up to 1e11) means the path passes
/// a branch point of nearby sheets at about the current `s`; loops there go through those
/// sheets (chandra-8 seed 1: 24 loops, 7,700 steps, for one path).
pub const MIN_TRIGGER_SLOPE: f64 = 1.0 / MAX_TRIGGER_WINDING - 1.0;
/// A loop (one turn of a Cauchy round) that needs more steps than this passes near branch
/// points of other sheets: the round is given up. A loop in the Puiseux regime is smooth
/// in the loop parameter and takes about one step per segment (cyclic-8: 20 steps per loop
/// at the median and the 90th percentile, 85 at most); chandra-9's nonsingular but
/// ill-conditioned endpoints take 300 per loop, and a dozen loops, without this cap.
pub const LOOP_STEP_BUDGET: u32 = 8 * crate::endgame::cauchy::SAMPLES_PER_LOOP as u32;
/// Largest winding number whose slope starts the Cauchy endgame (see [`MIN_TRIGGER_SLOPE`]);
/// a path with a larger one is tracked along the real axis to its end instead.
pub const MAX_TRIGGER_WINDING: f64 = 12.0;
/// A Cauchy estimate is used when a later round failed only if it is this accurate.
pub const USABLE_ACCURACY: f64 = 1e-6;
/// On the real path a step is accepted after one Newton correction `η₁` when the error it
/// leaves, predicted as `ONE_CORRECTION_SAFETY · ω · max(1, κ/κ_ω) · η₁²` from Newton's
/// quadratic constant `ω = η₂/η₁²` measured at an earlier step (at condition `κ_ω`; κ the
/// condition now), is below the corrector's tolerance: the second correction would only
/// confirm it. The Kantorovich bound for a correction of size η is `ω·η²/2`; the factor
/// covers ω's drift between steps. Measured on the traces of chandra-10, katsura-10 and
/// cyclic-7: with the ω of the previous step and this factor, 4 of ~38,000
/// steps in the endgame zone that the rule accepts left more than the tolerance.
pub const ONE_CORRECTION_SAFETY: f64 = 4.0;
/// At most this many successive steps are accepted after one correction; the next takes a
/// second one, which measures ω again.
pub const ONE_CORRECTION_RUN: u32 = 3;
/// ... and at a projective point the predicted error must also be below this fraction of the
/// smallest coordinate's modulus. The tolerance is absolute (`‖y‖ = 1`), while a second
/// correction leaves ~`ω·η₂²`, far below it: small coordinates (the homogenizing one at a
/// solution of huge norm, `y_n ≈ 1e-10` for `x − 1e10·y, y² − 1`) keep their digits only
/// through it, and the valuations and the at-infinity test read them. In log coordinates
/// the error is relative already.
pub const ONE_CORRECTION_RELATIVE: f64 = 1e-6;
use num_complex::Complex64 as C64;

/// The divergence rule of [`PathState`] (and of the resident slots in double-double mode,
/// `track::resident::slot`): the homogenizing coordinate's valuation has settled
/// ([`settled_valuation`]) by the time the newest sample is at `s = τ_end − τ ≤`
/// [`DIVERGENCE_S`]; returns the newest estimate.
pub fn stable_divergence(samples: &[(f64, Vec<C64>)], tau_end: f64) -> Option<f64> {
    let (newest, _) = samples.last()?;
    if tau_end - newest > DIVERGENCE_S {
        return None;
    }
    settled_valuation(samples, tau_end)
}

/// The homogenizing coordinate's valuation, estimated on the last three pairs of `samples`
/// (four samples), is clearly positive (`> 2·VALUATION_TOL`) and stable to 0.01, wherever
/// the samples are; returns the newest estimate. On cyclic-12 the paths to its sets at
/// infinity settle at 1/3 to 0.002; chandra-12's paths to its solutions of norm ~1e7
/// wander (0.04–0.76 in their last estimates) until they reach them.
pub fn settled_valuation(samples: &[(f64, Vec<C64>)], tau_end: f64) -> Option<f64> {
    let k = samples.len();
    if k < 4 {
        return None;
    }
    let v0 = homogenizing_valuation(&samples[k - 4..k - 2], tau_end)?;
    let v1 = homogenizing_valuation(&samples[k - 3..k - 1], tau_end)?;
    let v2 = homogenizing_valuation(&samples[k - 2..], tau_end)?;
    let stable = (v0 - v1).abs() < 0.01 && (v1 - v2).abs() < 0.01;
    (v2 > 2.0 * VALUATION_TOL && stable).then_some(v2)
}

/// How tracking of a path ended.
#[derive(Clone, Debug, PartialEq)]
pub enum TrackCode {
    /// Reached τ_end; the point is corrected there.
    Reached,
    /// Stopped inside the endgame zone (typically a singular endpoint or one at infinity);
    /// the reason says why.
    StoppedInEndgame(String),
    /// The Cauchy endgame gave the endpoint: winding number and the relative difference of
    /// its last two estimates (∞ when only one round closed).
    Cauchy { winding: u32, accuracy: f64 },
    /// Gave up before the endgame zone.
    Failed(String),
}

impl TrackCode {
    /// Stopped in the endgame zone other than as diverging (step underflow, too many steps,
    /// stalled): its refinement tracks it again from its checkpoint in double-double
    /// (`post::Refiner::process`).
    pub fn stopped_short(&self) -> bool {
        matches!(self, TrackCode::StoppedInEndgame(r) if !r.starts_with(DIVERGING))
    }
}

/// A finished path as the tracker hands it to post-processing.
#[derive(Clone, Debug)]
pub struct PathEnd {
    pub path: u64,
    /// Homogeneous coordinates, ‖y‖ = 1, at `tau`.
    pub y: Vec<C64>,
    pub tau: f64,
    pub code: TrackCode,
    pub accepted: u32,
    pub rejected: u32,
    /// Condition estimate of the last direction matrix.
    pub cond: f64,
    /// `(τ, y)` samples in the endgame zone, oldest first (see [`SAMPLE_RATIO`]).
    pub samples: Vec<(f64, Vec<C64>)>,
    /// The last accepted point `(τ, y)` on the real path with `s = −τ ≥`
    /// [`super::dd::DD_CHECKPOINT_S`]: where a tracking in double-double starts.
    pub checkpoint: Option<(f64, Vec<C64>)>,
    /// The path's own lifts (see [`super::StartPoint::lifts`]).
    pub lifts: Option<std::sync::Arc<[f64]>>,
}

impl PathEnd {
    /// Path `path` ended at `(y, τ)` with `code`, with no steps, samples or checkpoint
    /// recorded (endpoints made outside the tracker: benchmarks, tests).
    pub fn bare(path: u64, y: Vec<C64>, tau: f64, code: TrackCode) -> PathEnd {
        PathEnd {
            path,
            y,
            tau,
            code,
            accepted: 0,
            rejected: 0,
            cond: 1.0,
            samples: Vec::new(),
            checkpoint: None,
            lifts: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Refine(u32),
    /// One Newton correction at a point already on the path (entering or leaving a Cauchy
    /// loop), then the next step.
    Resume,
    Stage(u8),
    Correct(u32),
}

/// State of one path in the batch.
pub struct PathState {
    pub path: u64,
    y: Vec<C64>,
    tau: f64,
    /// Proposed step size (before clipping to a checkpoint).
    h: f64,
    /// Step size of the current attempt (clipped).
    h_try: f64,
    phase: Phase,
    k: [Vec<C64>; 4],
    yc: Vec<C64>,
    eta_first: f64,
    eta_prev: f64,
    accepted: u32,
    rejected: u32,
    samples: Vec<(f64, Vec<C64>)>,
    /// `(s, κ)` at the last three samples this tracker took (not those handed over by
    /// [`Self::with_history`]), oldest first: see [`beyond_double`].
    sample_conds: Vec<(f64, f64)>,
    /// See [`PathEnd::checkpoint`].
    checkpoint: Option<(f64, Vec<C64>)>,
    cond: f64,
    /// Affine log coordinates `z = (log x, 0)` instead of projective `y`.
    log: bool,
    /// The path's own lifts (polyhedral cells), see [`super::StartPoint::lifts`].
    pub lifts: Option<std::sync::Arc<[f64]>>,
    /// Largest lift of the path (its own or the homotopy's): loops of radius `s` see
    /// oscillations `e^{i·s·ω}`, so the Cauchy endgame waits for `s·ω_max ≤ 1`.
    max_lift: f64,
    /// The point the next round evaluates.
    pub eval_y: Vec<C64>,
    pub eval_tau: C64,
    /// `(s, ‖dy/dτ‖)` at the last endgame samples (newest last, at most [`TRIGGER_SLOPES`] + 1).
    slopes: Vec<(f64, f64)>,
    /// The newest slope estimate of [`Self::looks_singular`] (sets the endgame's loop cap).
    slope: f64,
    /// The Cauchy endgame, once started.
    cauchy: Option<Box<Cauchy>>,
    /// True while going around a Cauchy loop: `tau` is then the loop parameter `u`
    /// (one unit per segment) and `τ = cauchy.tau_at(u)`.
    looping: bool,
    /// The Cauchy endgame gave up on this path (no return within its loops): not retried.
    cauchy_failed: bool,
    /// dτ/du of the current step (1 on the real path; the segment's vector on a loop).
    dtau: C64,
    /// Steps (accepted + rejected) when the current loop began.
    loop_began: u32,
    /// `s = τ_end − τ` when it last halved on the real path in the endgame zone, and the
    /// steps (accepted + rejected) taken by then (see [`STALL_STEPS`]).
    halved_s: f64,
    halved_at: u32,
    /// Consecutive steps in the zone shorter than `TINY_STEP · s` (see [`TINY_STEP`]).
    tiny_steps: u32,
    /// Newton's quadratic constant on the real path, measured at the last step with a
    /// second correction: `ω = η₂/η₁²` (∞ before the first; see [`ONE_CORRECTION_SAFETY`]),
    /// and the condition estimate it was measured at.
    omega: f64,
    omega_cond: f64,
    /// Steps accepted after one correction since `omega` was measured.
    unconfirmed: u32,
    /// τ of the path's last change of coordinates (its refinement there is no start
    /// point's).
    switched_at: Option<f64>,
}

/// First corrections up to this multiple of the rounding level `noise = NOISE_FACTOR·κ·ε`
/// say nothing about the step in the endgame zone (see `step_factor`): the QR estimate of
/// κ can be low by one or two orders of magnitude. On chandra-12 (CPU reference of resident
/// tracking, seed 1), 1, 2, 4, 8 and 16 left its longest host path at 1,073, 688, 576, 387
/// and 901 steps; with 8, seeds 1–3 took 10–44 % fewer host evaluations than before the rule.
pub const UNRESOLVED_NOISE: f64 = 8.0;

/// Step-size factor after an accepted step whose first correction was `eta_first`, with
/// `noise = NOISE_FACTOR·κ·ε` the rounding level of the step's solve:
/// `0.9·(eta_target/eta_first)^{1/5}` in [1/2, 2] (the RK4 predictor's error is O(h⁵)).
///
/// In the endgame zone (`zone`: the new point has `τ > endgame_tau`, off the Cauchy loops)
/// the goal is never below `noise`, and a first correction up to `UNRESOLVED_NOISE · noise`
/// doubles the step. Newton cannot tell a predictor error below `κ·ε` from rounding; points
/// are accepted at that level (`tol = max(corrector_tol, noise)`), so the next step's first
/// correction is about `noise` however short the step, and it says nothing against the
/// step. Aiming below it halved the step at every step: chandra-12's paths to its solutions
/// of norm ~1e8 (κ ≈ 5e9, noise 1e-5, the endgame's target 1e-6) crawled at s ≈ 1e-13 with
/// steps of 1e-18 until the stall rule stopped them 1,000 steps later.
///
/// Not before the zone: there a path passes near singular points and goes on, and a point
/// accepted at the rounding level can leave Newton's basin for the next step. cyclic-10
/// `--torus` seed 1, paths 13970–13979, with the recovery's tightened targets: at
/// τ = −0.44 (κ ≈ 1e9) the doubled steps left a point from which no step contracted.
/// The rule of both step machines and of `kernels/track.cu`.
pub(crate) fn step_factor(eta_first: f64, eta_target: f64, noise: f64, zone: bool) -> f64 {
    let goal = if zone {
        if eta_first <= UNRESOLVED_NOISE * noise {
            return 2.0;
        }
        eta_target.max(noise)
    } else {
        eta_target
    };
    (0.9 * (goal / eta_first.max(1e-300)).powf(0.2)).clamp(0.5, 2.0)
}

/// Newton's corrections have converged to `tol` when the last one, `eta` (iteration `it`),
/// is below it, or, in [`Regime::Loose`] (`loose`), from the second correction on, when
/// the error left after it is: with the contraction `θ = eta/eta_prev` that error is about
/// `θ·eta`, so `eta² ≤ tol·eta_prev`. A first correction of 1e-4 followed by 1e-8 then
/// leaves ~1e-12 and the step is accepted without a third evaluation (10 % of the
/// evaluations on katsura-10). Elsewhere every accepted point keeps the full accuracy
/// (`eta ≤ tol`, then ~1e-16 left). The rule of both step machines and of
/// `kernels/track.cu`.
pub(crate) fn newton_converged(eta: f64, eta_prev: f64, it: u32, tol: f64, loose: bool) -> bool {
    eta <= tol || (loose && it >= 2 && eta * eta <= tol * eta_prev)
}

/// The smallest coordinate modulus of a projective point over the largest below which the
/// path (before the endgame zone) is [`Regime::NearToricInfinity`]. eco-n's paths pass near
/// toric infinity (coordinates down to 1e-17 of the largest) and switch to log coordinates at
/// [`TO_LOG_SPREAD`]; approached with the loose target, eco-10 seeds 4 and 6 reached the
/// switch with their smallest coordinates wrong, and Newton in log coordinates diverged.
pub const LOOSE_MIN_RATIO: f64 = 1e-10;

/// How precisely a path is tracked at a point (the rule of both step machines and of
/// `kernels/track.cu`, where it is `rt_regime`'s 0, 1, 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
    /// Before the endgame zone, coordinates not spread: the predictor target
    /// [`super::TrackerOptions::eta_target`] and `newton_converged`'s shortcut.
    Loose,
    /// In the endgame zone, or on a Cauchy loop: [`super::TrackerOptions::eta_target_endgame`]
    /// and full Newton convergence (the valuations of `y_n` and the endpoint decisions read
    /// these points).
    Endgame,
    /// Projective coordinates spread beyond [`LOOSE_MIN_RATIO`] before the endgame zone:
    /// [`super::NEAR_TORIC_INFINITY_ETA`] and full Newton convergence.
    NearToricInfinity,
}

impl Regime {
    /// The predictor error target of a step from a point in this regime.
    pub fn eta_target(self, opts: &TrackerOptions) -> f64 {
        match self {
            Regime::Loose => opts.eta_target,
            Regime::Endgame => opts.eta_target_endgame,
            Regime::NearToricInfinity => opts
                .eta_target_endgame
                .min(super::options::NEAR_TORIC_INFINITY_ETA),
        }
    }
}

/// The [`Regime`] at the point `y`, `tau` (`log`: affine log coordinates; `looping`: on a
/// Cauchy loop).
pub(crate) fn regime(
    y: &[C64],
    log: bool,
    looping: bool,
    tau: f64,
    opts: &TrackerOptions,
) -> Regime {
    if looping || tau > opts.endgame_tau {
        return Regime::Endgame;
    }
    if log {
        return Regime::Loose;
    }
    let (lo, hi) = y.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), z| {
        let a = z.norm_sqr();
        (lo.min(a), hi.max(a))
    });
    if lo < LOOSE_MIN_RATIO * LOOSE_MIN_RATIO * hi {
        Regime::NearToricInfinity
    } else {
        Regime::Loose
    }
}

/// A projective coordinate within this factor of the largest has its Newton corrections
/// measured absolutely (as `‖Δy‖` with `‖y‖ = 1`); a smaller one relative to its own size
/// times this (`correction_size`).
pub const RELATIVE_SCALE: f64 = 1e-2;

/// The size of a Newton correction `dy` at the point `y` that the corrector's tolerances and
/// the step control read: in log coordinates `‖Δz‖` (relative already); at a projective
/// point the weighted norm `(Σ_j |Δy_j|²/w_j²)^{1/2}` with
/// `w_j = clamp(|y_j| / (RELATIVE_SCALE·max_k |y_k|), lo, 1)`, where
/// `lo = NOISE_FACTOR·κ·ε / corrector_tol` (κ the condition estimate `cond`): each
/// coordinate is held to a relative accuracy, down to the size where its rounding error
/// `κ·ε` reaches the tolerance. Where the coordinates are within [`RELATIVE_SCALE`] of each
/// other this is `‖Δy‖`. The absolute norm alone let a path of the sparse chain
/// `x_k·x_{k+1}^9 − 1, x_{n−1}^10 − 1` (n = 4, polyhedral) take corrections of 1e-6 at
/// coordinates of 1e-6 as converged (Newton "stagnating" below [`STAGNATION_TOL`]): the path
/// left the homotopy at τ ≈ −2.8 and ended nowhere near a solution. The rule of both step
/// machines and of `kernels/track.cu` (`rt_correction_size`).
pub(crate) fn correction_size(
    dy: &[C64],
    y: &[C64],
    log: bool,
    cond: f64,
    corrector_tol: f64,
) -> f64 {
    let top = y.iter().fold(0.0f64, |m, z| m.max(z.norm()));
    if log || !(top > 0.0 && top.is_finite()) {
        return norm(dy);
    }
    let lo = (NOISE_FACTOR * cond * f64::EPSILON / corrector_tol).min(1.0);
    let unit = RELATIVE_SCALE * top;
    dy.iter()
        .zip(y)
        .map(|(d, v)| {
            let w = (v.norm() / unit).clamp(lo, 1.0);
            d.norm_sqr() / (w * w)
        })
        .sum::<f64>()
        .sqrt()
}

/// A start refinement has converged when a correction `eta` (iteration `it`, the previous
/// one `eta_prev`) is below `tol·1e-2`; or below `tol` once Newton no longer halves its
/// corrections (it reached its rounding level: the sparse chain's polyhedral start points
/// at n = 8 have terms of size e^20 that cancel, and their refinement hovered at 2e-10 with
/// its tenth and last correction 1.7e-9: "start point did not converge"); or below `tol` at
/// the last iteration (`last`). The rule of both step machines and of `kernels/track.cu`.
pub(crate) fn refine_converged(eta: f64, eta_prev: f64, it: u32, last: bool, tol: f64) -> bool {
    eta <= tol * 1e-2 || (eta <= tol && (last || (it >= 1 && eta > 0.5 * eta_prev)))
}

/// Euclidean norm.
pub(crate) fn norm(v: &[C64]) -> f64 {
    v.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt()
}

/// Scales `v` to unit norm (left as it is when its norm is 0 or not finite).
pub(crate) fn normalize(v: &mut [C64]) {
    let s = norm(v);
    if s > 0.0 && s.is_finite() {
        v.iter_mut().for_each(|z| *z /= s);
    }
}

pub(crate) fn finite(v: &[C64]) -> bool {
    v.iter().all(|z| z.re.is_finite() && z.im.is_finite())
}

/// Leaves affine log coordinates: `y = e^{z − max Re z}` normalized (tiny coordinates may
/// underflow to 0, which projective tracking handles).
pub(crate) fn log_to_projective(z: &mut [C64]) {
    let hi = z.iter().fold(f64::NEG_INFINITY, |a, v| a.max(v.re));
    for v in z.iter_mut() {
        *v = (*v - hi).exp();
    }
    normalize(z);
}

/// True when the projective point `y` spreads over more than `spread` (in `ln`, see
/// [`TO_LOG_SPREAD`]), none of its coordinates zero: the smallest have lost most of their
/// digits.
pub(crate) fn wants_log(y: &[C64], spread: f64) -> bool {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for z in y {
        let a = z.norm();
        if a == 0.0 {
            return false;
        }
        (lo, hi) = (lo.min(a), hi.max(a));
    }
    (hi / lo).ln() > spread
}

/// Projective `y` (no zero coordinate) to affine log coordinates `z_j = log(y_j / y_n)`,
/// so that `z_n = 0` (the inverse of [`log_to_projective`] up to scale).
pub(crate) fn projective_to_log(y: &mut [C64]) {
    let yn = *y.last().expect("a homogeneous point");
    for v in y.iter_mut() {
        *v = (*v / yn).ln();
    }
    *y.last_mut().expect("a homogeneous point") = C64::new(0.0, 0.0);
}

/// The relative rounding error `NOISE_FACTOR·κ·ε·e^σ` of the smallest coordinate of a
/// projective point whose coordinates spread over `σ` (in `ln`), at condition `cond`:
/// the solve's absolute error `κ·ε` on a coordinate `e^σ` times smaller than the largest.
pub(crate) fn smallest_rounding(cond: f64, spread: f64) -> f64 {
    NOISE_FACTOR * cond * f64::EPSILON * spread.exp()
}

/// `max_j ln|y_j| − min_j ln|y_j|` of a projective point (∞ with a zero coordinate), or
/// `max_j Re z_j − min_j Re z_j` of a point in log coordinates (`log`).
pub(crate) fn spread(y: &[C64], log: bool) -> f64 {
    if log {
        let (lo, hi) = y
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), z| {
                (a.min(z.re), b.max(z.re))
            });
        return hi - lo;
    }
    let (lo, hi) = y.iter().fold((f64::INFINITY, 0.0f64), |(a, b), z| {
        let m = z.norm();
        (a.min(m), b.max(m))
    });
    if lo > 0.0 {
        (hi / lo).ln()
    } else {
        f64::INFINITY
    }
}

/// Before the endgame zone a projective path of a polyhedral homotopy (finite
/// `to_log_spread`) spread over more than this (in `ln`, e^9.2 = 1e4) goes to log
/// coordinates once its smallest coordinate's relative rounding error
/// (`smallest_rounding`) exceeds [`TO_LOG_ROUNDING`], whatever [`TO_LOG_SPREAD`] says
/// On the first pass only ([`super::TrackerOptions::rounding_switch`]).
pub const ROUNDING_SWITCH_MIN_SPREAD: f64 = 9.2;
/// See [`ROUNDING_SWITCH_MIN_SPREAD`]. The sparse chain `x_k·x_{k+1}^9 − 1,
/// x_{n−1}^10 − 1` (n = 4, polyhedral start) has paths whose `ln|x_0|` rises to 100 (n = 8:
/// 1.7e6) at τ ≈ −0.7 and falls back to 0 at t = 1: tracked projectively to the spread 33 of
/// [`TO_LOG_SPREAD`], their smallest coordinates (κ ≈ 800 in projective coordinates, 9 in
/// log coordinates) had no digit left well before it, and every path was lost.
pub const TO_LOG_ROUNDING: f64 = 1e-8;
/// ... and such a path, in log coordinates before the endgame zone, goes back to projective
/// ones only where its smallest coordinate would keep a relative rounding error below this
/// (κ the log coordinates' estimate): a hundred times below [`TO_LOG_ROUNDING`], so that
/// paths do not switch back and forth.
pub const FROM_LOG_ROUNDING: f64 = 1e-10;

/// In the endgame zone a path of a polyhedral homotopy in log coordinates spread over more
/// than [`LOG_SWITCH_SPREAD`] goes to projective ones (below [`LOG_SWITCH_SPREAD_ENDGAME`])
/// only where its smallest coordinate keeps a relative rounding error below this. The
/// sparse chain (n = 6…8) enters the zone spread over e^1000 and more: switched at e^600,
/// its smallest coordinates underflowed in the evaluation and every direction was
/// non-finite.
pub const ZONE_FROM_LOG_ROUNDING: f64 = 1e-6;

/// True when a path at `τ` (after an accepted step, condition estimate `cond`) changes
/// coordinates: from log (`log`) to projective once `max_j Re z_j − min_j Re z_j` is at
/// most [`LOG_SWITCH_SPREAD`] ([`LOG_SWITCH_SPREAD_ENDGAME`] in the endgame zone) and, on a
/// polyhedral homotopy, the smallest coordinate would keep its digits
/// ([`FROM_LOG_ROUNDING`] before the zone; [`ZONE_FROM_LOG_ROUNDING`] in it, above
/// [`LOG_SWITCH_SPREAD`]); from projective back to log before the endgame zone when
/// [`wants_log`] at the tracker's `to_log_spread`, or (polyhedral homotopies) when the
/// smallest coordinate has lost its digits ([`TO_LOG_ROUNDING`]). The rule of both step
/// machines (`PathState`, the resident `Slot`) and of `kernels/track.cu`.
pub(crate) fn switches_coordinates(
    y: &[C64],
    log: bool,
    tau: f64,
    cond: f64,
    opts: &TrackerOptions,
) -> bool {
    let zone = tau > opts.endgame_tau;
    let polyhedral = opts.to_log_spread.is_finite();
    let loses_digits = |sp: f64| {
        sp.is_finite()
            && sp > ROUNDING_SWITCH_MIN_SPREAD
            && smallest_rounding(cond, sp) > TO_LOG_ROUNDING
    };
    if log {
        let sp = spread(y, true);
        if zone && polyhedral && opts.zone_rounding_switch {
            sp <= LOG_SWITCH_SPREAD_ENDGAME && smallest_rounding(cond, sp) <= FROM_LOG_ROUNDING
        } else if zone {
            sp <= LOG_SWITCH_SPREAD_ENDGAME
                && (!polyhedral
                    || sp <= LOG_SWITCH_SPREAD
                    || smallest_rounding(cond, sp) <= ZONE_FROM_LOG_ROUNDING)
        } else {
            sp <= LOG_SWITCH_SPREAD
                && (!polyhedral || smallest_rounding(cond, sp) <= FROM_LOG_ROUNDING)
        }
    } else if zone {
        polyhedral && opts.zone_rounding_switch && loses_digits(spread(y, false))
    } else {
        tau < opts.endgame_tau
            && polyhedral
            && (wants_log(y, opts.to_log_spread)
                || opts.rounding_switch && loses_digits(spread(y, false)))
    }
}

/// True when an accepted step to `tau_next` ending at the projective point `y` would pass
/// the switch to log coordinates by more than [`TO_LOG_OVERSHOOT`] (the rule of both step
/// machines and of `kernels/track.cu`).
pub(crate) fn overshoots_log_switch(
    y: &[C64],
    log: bool,
    tau_next: f64,
    opts: &TrackerOptions,
) -> bool {
    !log && tau_next < opts.endgame_tau && wants_log(y, opts.to_log_spread + TO_LOG_OVERSHOOT)
}

/// Converts `y` to the other coordinates: log to projective when `log`, else projective to
/// log (see [`switches_coordinates`]).
pub(crate) fn switch_coordinates(y: &mut [C64], log: bool) {
    if log {
        log_to_projective(y);
    } else {
        projective_to_log(y);
    }
}

/// `out = y + c·d`
fn axpy(out: &mut Vec<C64>, y: &[C64], c: C64, d: &[C64]) {
    out.clear();
    out.extend(y.iter().zip(d).map(|(a, b)| a + b * c));
}

impl PathState {
    /// A path from its start point; `default_max_lift` is the largest lift of the homotopy
    /// (for paths without their own lifts).
    pub fn new(s: StartPoint, opts: &TrackerOptions, default_max_lift: f64) -> PathState {
        let nh = s.y.len();
        let mut y = s.y;
        if !s.log {
            normalize(&mut y);
        }
        let zero = vec![C64::new(0.0, 0.0); nh];
        PathState {
            path: s.path,
            eval_y: y.clone(),
            eval_tau: C64::new(s.tau, 0.0),
            y,
            tau: s.tau,
            h: opts.h_initial.max(0.01 * s.tau.abs()),
            h_try: opts.h_initial,
            phase: Phase::Refine(0),
            k: [zero.clone(), zero.clone(), zero.clone(), zero.clone()],
            yc: zero,
            eta_first: 0.0,
            eta_prev: 0.0,
            accepted: s.steps.0,
            rejected: s.steps.1,
            samples: Vec::new(),
            sample_conds: Vec::new(),
            checkpoint: None,
            cond: 1.0,
            log: s.log,
            max_lift: s
                .lifts
                .as_ref()
                .map(|l| l.iter().fold(0.0f64, |m, &v| m.max(v.abs())))
                .unwrap_or(default_max_lift),
            lifts: s.lifts,
            slopes: Vec::new(),
            slope: -1.0,
            cauchy: None,
            looping: false,
            cauchy_failed: false,
            dtau: C64::new(1.0, 0.0),
            loop_began: 0,
            halved_s: f64::INFINITY,
            halved_at: 0,
            tiny_steps: 0,
            omega: f64::INFINITY,
            omega_cond: 1.0,
            unconfirmed: 0,
            switched_at: None,
        }
    }

    /// The same path with the endgame samples, the double-double checkpoint
    /// ([`PathEnd::checkpoint`]) and the step size of the tracker it comes from (a resident
    /// slot that stopped in the endgame zone): the valuations, the endgame's tracking in
    /// double-double and the step control go on from them. Without `h` the first step
    /// would try `h_initial`, which from `s ≈ 1e-7` is a jump to `τ_end`; with it the point
    /// is taken as on the path (one Newton correction, `Phase::Resume`).
    pub fn with_history(
        mut self,
        samples: Vec<(f64, Vec<C64>)>,
        checkpoint: Option<(f64, Vec<C64>)>,
        h: Option<f64>,
    ) -> PathState {
        self.samples = samples;
        self.checkpoint = checkpoint;
        if let Some(h) = h {
            self.h = h;
            // On the path already: one correction, not a start point's refinement to 1e-11
            // (ill-conditioned points stall at ~1e-9 and would fail as start points).
            self.phase = Phase::Resume;
        }
        self
    }

    /// The residual precision of the next evaluation: a Runge–Kutta stage uses only its
    /// Euler direction; the others the tracker's setting.
    pub fn residual(&self, opts: &TrackerOptions) -> Residual {
        match self.phase {
            Phase::Stage(_) => Residual::EulerOnly,
            _ => opts.residual,
        }
    }

    /// True while the path is tracked in log coordinates.
    pub fn is_log(&self) -> bool {
        self.log
    }

    /// Leaves log coordinates: `y = e^{z − max Re z}` normalized (tiny coordinates may
    /// underflow to 0, which projective tracking handles).
    fn to_projective(&mut self) {
        log_to_projective(&mut self.y);
        self.log = false;
    }

    fn finish(&mut self, code: TrackCode) -> PathEnd {
        if self.log {
            self.to_projective();
        }
        PathEnd {
            path: self.path,
            y: std::mem::take(&mut self.y),
            tau: self.tau,
            code,
            accepted: self.accepted,
            rejected: self.rejected,
            cond: self.cond,
            samples: std::mem::take(&mut self.samples),
            checkpoint: self.checkpoint.take(),
            lifts: self.lifts.clone(),
        }
    }

    /// Target of the next step: the next loop vertex, the next Cauchy round's radius, the
    /// start of the endgame zone (so that no step jumps over it: the endgame's samples and
    /// valuations are taken inside), or the end.
    fn target(&self, opts: &TrackerOptions) -> f64 {
        match &self.cauchy {
            Some(_) if self.looping => self.tau.floor() + 1.0,
            Some(c) => c.next_round_tau(),
            None if self.tau < opts.endgame_tau => opts.endgame_tau,
            None => opts.tau_end,
        }
    }

    /// τ at the path parameter `u` (`u` itself off the loops).
    fn tau_at(&self, u: f64) -> C64 {
        match &self.cauchy {
            Some(c) if self.looping => c.tau_at(u),
            _ => C64::new(u, 0.0),
        }
    }

    /// Records `(s, ‖dy/dτ‖)` at an endgame sample; true when the path looks singular
    /// (see [`SINGULAR_SLOPE`], [`SLOPE_AGREEMENT`]).
    fn looks_singular(&mut self, opts: &TrackerOptions) -> bool {
        let s = opts.tau_end - self.tau;
        let e = norm(&self.k[0]);
        if self.slopes.len() == TRIGGER_SLOPES + 1 {
            self.slopes.remove(0);
        }
        self.slopes.push((s, e));
        if self.slopes.len() <= TRIGGER_SLOPES
            || s * self.max_lift > 1.0
            || self.heading_to_infinity()
        {
            return false;
        }
        let slope = |a: &(f64, f64), b: &(f64, f64)| {
            (b.1.max(1e-300) / a.1.max(1e-300)).ln() / (b.0 / a.0).ln()
        };
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for w in self.slopes.windows(2) {
            let a = slope(&w[0], &w[1]);
            (lo, hi) = (lo.min(a), hi.max(a));
            self.slope = a;
        }
        lo > MIN_TRIGGER_SLOPE && hi < SINGULAR_SLOPE && hi - lo < SLOPE_AGREEMENT
    }

    /// The homogenizing coordinate still shrinks like `s^v` with `v > 2·VALUATION_TOL`: the
    /// path heads to infinity, or to a finite point of huge norm that it reaches only at
    /// much smaller `s`. The Cauchy endgame is for finite endpoints: around such a path its
    /// loops enclose the branch points of that late approach, and its estimate (a point at
    /// infinity, with winding numbers like 7 or 21 on cyclic-7) would lose the solution.
    fn heading_to_infinity(&self) -> bool {
        heading_to_infinity(&self.samples, 0.0)
    }

    /// Starts a Cauchy round at the current point (real τ): Newton there, then the loop.
    fn enter_loop(&mut self) {
        let tau = self.tau;
        self.halved_s = f64::INFINITY;
        self.tiny_steps = 0;
        match &mut self.cauchy {
            Some(c) => c.begin_round(&self.y, tau),
            None => {
                let cap = loop_cap(self.slope);
                self.cauchy = Some(Box::new(Cauchy::new(&self.y, tau, cap)))
            }
        }
        self.looping = true;
        self.loop_began = self.accepted + self.rejected;
        self.tau = 0.0;
        self.h = 0.5;
        self.resume();
    }

    /// Evaluates the directions at the current point before the next step.
    fn resume(&mut self) {
        self.phase = Phase::Resume;
        self.eval_y.copy_from_slice(&self.y);
        self.eval_tau = self.tau_at(self.tau);
    }

    /// The path's end from the Cauchy estimate (when it is usable: converged, or two rounds
    /// that agree to [`USABLE_ACCURACY`]).
    fn finish_cauchy(&mut self) -> Option<PathEnd> {
        let c = self.cauchy.as_ref()?;
        if !(c.converged() || c.accuracy <= USABLE_ACCURACY) {
            return None;
        }
        let y = c.endpoint()?;
        let code = TrackCode::Cauchy {
            winding: c.winding,
            accuracy: c.accuracy,
        };
        self.y = y;
        self.log = false;
        self.tau = 0.0;
        Some(self.finish(code))
    }

    /// After an accepted step on a loop: takes the vertex sample, closes loops and rounds.
    fn loop_vertex(&mut self) -> Option<PathEnd> {
        let u = self.tau;
        if u != u.round() {
            return None;
        }
        let k = crate::endgame::cauchy::SAMPLES_PER_LOOP as f64;
        let c = self.cauchy.as_mut().expect("looping implies an endgame");
        if u.rem_euclid(k) != 0.0 {
            c.add_sample(&self.y);
            return None;
        }
        let end = c.end_loop(&self.y);
        let done = c.converged() || c.rounds >= MAX_ROUNDS;
        match end {
            LoopEnd::Again => {
                self.loop_began = self.accepted + self.rejected;
                None
            }
            LoopEnd::Closed if !done => {
                // Back on the real path at the loop's start, on to the next radius.
                let c = self.cauchy.as_ref().expect("looping implies an endgame");
                (self.y, self.tau, self.h) = (c.y_start.clone(), c.vertices[0].re, 0.2 * c.s0);
                self.looping = false;
                self.resume();
                None
            }
            LoopEnd::Closed | LoopEnd::TooManyLoops => self.end_endgame(),
        }
    }

    /// In the endgame zone, keeps `(τ, y)` each time `s = τ_end − τ` has shrunk by
    /// [`SAMPLE_RATIO`] since the last sample (at most [`MAX_SAMPLES`], the newest).
    fn sample(&mut self, opts: &TrackerOptions) -> bool {
        if self.tau <= opts.endgame_tau {
            return false;
        }
        let s = opts.tau_end - self.tau;
        let due = match self.samples.last() {
            None => true,
            Some((t, _)) => (opts.tau_end - t) >= SAMPLE_RATIO * s,
        };
        if due {
            if self.samples.len() == MAX_SAMPLES {
                self.samples.remove(0);
            }
            // Projective, whatever the coordinates the path is in: the valuations read y_n.
            let mut y = self.y.clone();
            if self.log {
                log_to_projective(&mut y);
            }
            self.samples.push((self.tau, y));
            if self.sample_conds.len() == 3 {
                self.sample_conds.remove(0);
            }
            self.sample_conds.push((s, self.cond));
        }
        due
    }

    /// A path whose homogenizing coordinate has a clearly positive valuation, stable over the
    /// last three estimates (four samples) at `s ≤ DIVERGENCE_S`, goes to infinity: no need
    /// to track it further. A finite endpoint whose homogenizing coordinate is tiny (a
    /// solution of huge norm) looks like valuation 1 until `s` falls below that coordinate
    /// (seen on chandra-6 at s = 1e-6, and on cyclic-6 a fast path mimicked 1/6 at 1e-3), so
    /// `DIVERGENCE_S` matches [`crate::post::INFINITY_TOL`].
    fn diverging(&self) -> Option<f64> {
        stable_divergence(&self.samples, 0.0)
    }

    /// Gives the Cauchy endgame up (loops that do not close, estimates that do not agree,
    /// a loop that cannot be tracked): the path goes on along the real axis from the last
    /// loop's start, as if the endgame had never started.
    fn abandon_cauchy(&mut self, y_start: Vec<C64>, tau0: f64, s0: f64) {
        self.y = y_start;
        self.tau = tau0;
        self.h = 0.2 * s0;
        self.looping = false;
        self.cauchy = None;
        self.cauchy_failed = true;
        self.resume();
    }

    /// Ends the endgame (its last round done, no return within the loop cap, or a loop over
    /// its [`LOOP_STEP_BUDGET`]): the last closed round's estimate when it is usable, else
    /// the real path from the round's start, without the endgame.
    fn end_endgame(&mut self) -> Option<PathEnd> {
        if let Some(end) = self.finish_cauchy() {
            return Some(end);
        }
        let c = self.cauchy.as_ref().expect("looping implies an endgame");
        let (y, tau0, s0) = (c.y_start.clone(), c.vertices[0].re, c.s0);
        self.abandon_cauchy(y, tau0, s0);
        None
    }

    /// Begins a step attempt from (y, τ) with k1 known: the stage-2 point.
    fn begin_step(&mut self, opts: &TrackerOptions) {
        let room = self.target(opts) - self.tau;
        self.h_try = self.h.min(room);
        self.dtau = match &self.cauchy {
            Some(c) if self.looping => c.dtau_at(self.tau),
            _ => C64::new(1.0, 0.0),
        };
        self.phase = Phase::Stage(2);
        let (y, k1) = (&self.y, &self.k[0]);
        axpy(&mut self.eval_y, y, self.dtau * (0.5 * self.h_try), k1);
        self.eval_tau = self.tau_at(self.tau + 0.5 * self.h_try);
    }

    /// Rejects the current attempt: halves the step, or stops the path when it underflows.
    fn reject(&mut self, opts: &TrackerOptions, why: &str) -> Option<PathEnd> {
        self.rejected += 1;
        self.h = 0.5 * self.h_try;
        let scale = if self.looping {
            1.0
        } else {
            self.tau.abs().max(1.0)
        };
        if self.h < opts.h_min * scale {
            let reason = format!("step size underflow ({why})");
            return self.stop(opts, reason);
        }
        if let Some(why) = opts.budget_spent(self.accepted + self.rejected) {
            return self.stop(opts, why.into());
        }
        self.begin_step(opts);
        None
    }

    fn stop(&mut self, opts: &TrackerOptions, reason: String) -> Option<PathEnd> {
        if let Some(end) = self.finish_cauchy() {
            return Some(end); // the last closed round's estimate
        }
        if let Some(c) = self.cauchy.as_ref() {
            if self.looping && !self.cauchy_failed {
                let (y, tau0, s0) = (c.y_start.clone(), c.vertices[0].re, c.s0);
                self.abandon_cauchy(y, tau0, s0);
                return None;
            }
        }
        Some(if self.tau > opts.endgame_tau {
            self.finish(TrackCode::StoppedInEndgame(reason))
        } else {
            self.finish(TrackCode::Failed(reason))
        })
    }

    /// True when the first correction `eta` (at condition `cond`) leaves an error below
    /// `tol`, and below [`ONE_CORRECTION_RELATIVE`] of the smallest coordinate, by the
    /// prediction of [`ONE_CORRECTION_SAFETY`]; never on a Cauchy loop (its vertices enter
    /// the estimate), nor more than [`ONE_CORRECTION_RUN`] steps after ω was measured.
    fn one_correction_suffices(&self, eta: f64, cond: f64, tol: f64) -> bool {
        if self.looping || self.unconfirmed >= ONE_CORRECTION_RUN || !self.omega.is_finite() {
            return false;
        }
        let drift = (cond / self.omega_cond).max(1.0);
        let left = ONE_CORRECTION_SAFETY * self.omega * drift * eta * eta;
        let smallest = if self.log {
            f64::INFINITY
        } else {
            self.yc.iter().fold(f64::INFINITY, |m, z| m.min(z.norm()))
        };
        left <= tol && left <= ONE_CORRECTION_RELATIVE * smallest
    }

    /// Steps are capped at one segment on a loop; on the real path by `h_max` and
    /// `h_max_rel·|τ|`.
    fn step_cap(&self, opts: &TrackerOptions) -> f64 {
        if self.looping {
            1.0
        } else {
            opts.h_max.max(opts.h_max_rel * self.tau.abs())
        }
    }

    /// Consumes the directions at `(eval_y, eval_tau)`; returns the path's end when it is done.
    pub fn advance(
        &mut self,
        euler: &[C64],
        newton: &[C64],
        cond: f64,
        opts: &TrackerOptions,
    ) -> Option<PathEnd> {
        let ok = finite(euler) && finite(newton) && cond.is_finite();
        match self.phase {
            Phase::Refine(it) => {
                if !ok {
                    let why = match self.switched_at {
                        // Not the start point: the point the path reached, in its new
                        // coordinates (coordinates far below the largest underflow there).
                        Some(tau) => format!(
                            "non-finite directions after the switch to {} coordinates at τ = {tau:.3e}",
                            if self.log { "log" } else { "projective" }
                        ),
                        None => "singular start point".into(),
                    };
                    return Some(self.finish(TrackCode::Failed(why)));
                }
                let eta = norm(newton);
                self.y.iter_mut().zip(newton).for_each(|(a, b)| *a += b);
                if !self.log {
                    normalize(&mut self.y);
                }
                self.cond = cond;
                let last = it + 1 >= opts.max_refine_iters;
                let converged = refine_converged(eta, self.eta_prev, it, last, opts.corrector_tol);
                self.eta_prev = eta;
                if converged {
                    self.k[0].copy_from_slice(euler);
                    self.begin_step(opts);
                } else if it + 1 >= opts.max_refine_iters {
                    return Some(self.finish(TrackCode::Failed(format!(
                        "start point did not converge (last Newton step {eta:.1e})"
                    ))));
                } else {
                    self.phase = Phase::Refine(it + 1);
                    self.eval_y.copy_from_slice(&self.y);
                }
                None
            }
            Phase::Resume => {
                if !ok {
                    return self.stop(opts, "non-finite direction".into());
                }
                self.y.iter_mut().zip(newton).for_each(|(a, b)| *a += b);
                if !self.log {
                    normalize(&mut self.y);
                }
                self.cond = cond;
                self.k[0].copy_from_slice(euler);
                self.begin_step(opts);
                None
            }
            Phase::Stage(s) => {
                if !ok {
                    return self.reject(opts, "non-finite direction");
                }
                let s = s as usize;
                self.k[s - 1].copy_from_slice(euler);
                let h = self.h_try;
                match s {
                    2 | 3 => {
                        let c = if s == 2 { 0.5 * h } else { h };
                        let (y, kk) = (&self.y, &self.k[s - 1]);
                        axpy(&mut self.eval_y, y, self.dtau * c, kk);
                        self.eval_tau = self.tau_at(self.tau + c);
                        self.phase = Phase::Stage(s as u8 + 1);
                    }
                    _ => {
                        let w = self.dtau * (h / 6.0);
                        for j in 0..self.y.len() {
                            self.yc[j] = self.y[j]
                                + (self.k[0][j]
                                    + (self.k[1][j] + self.k[2][j]) * 2.0
                                    + self.k[3][j])
                                    * w;
                        }
                        self.eval_y.copy_from_slice(&self.yc);
                        self.eval_tau = self.tau_at(self.tau + h);
                        self.phase = Phase::Correct(1);
                    }
                }
                None
            }
            Phase::Correct(it) => {
                if !ok {
                    return self.reject(opts, "non-finite Newton step");
                }
                let eta = correction_size(newton, &self.yc, self.log, cond, opts.corrector_tol);
                // Newton cannot resolve steps below the rounding level κ·ε of the solve.
                let noise = NOISE_FACTOR * cond * f64::EPSILON;
                if it == 1 {
                    self.eta_first = eta;
                    if eta > opts.eta_max {
                        return self.reject(opts, "predictor too far from the path");
                    }
                } else if eta > 0.5 * self.eta_prev && eta > noise.max(STAGNATION_TOL) {
                    return self.reject(opts, "Newton did not contract");
                }
                // Stagnation far below the predictor error: the rounding level of the solve
                // (the QR estimate of κ can be low by orders of magnitude).
                let stagnated = it >= 2 && eta > 0.5 * self.eta_prev && eta <= STAGNATION_TOL;
                let loose = regime(
                    &self.yc,
                    self.log,
                    self.looping,
                    self.tau + self.h_try,
                    opts,
                ) == Regime::Loose;
                let tol = opts.corrector_tol.max(noise);
                let small = newton_converged(eta, self.eta_prev, it, tol, loose)
                    || (it == 1 && self.one_correction_suffices(eta, cond, tol));
                if it == 2 && !self.looping {
                    self.omega = eta / (self.eta_prev * self.eta_prev).max(1e-300);
                    self.omega_cond = cond;
                    self.unconfirmed = 0;
                } else if it == 1 && small && !self.looping {
                    self.unconfirmed += 1;
                }
                self.eta_prev = eta;
                self.yc.iter_mut().zip(newton).for_each(|(a, b)| *a += b);
                if (small || stagnated)
                    && overshoots_log_switch(&self.yc, self.log, self.tau + self.h_try, opts)
                {
                    return self.reject(opts, "step overshot the switch to log coordinates");
                }
                if small || stagnated {
                    // Accept.
                    self.accepted += 1;
                    self.cond = cond;
                    std::mem::swap(&mut self.y, &mut self.yc);
                    if !self.log {
                        normalize(&mut self.y);
                    }
                    self.k[0].copy_from_slice(euler);
                    let target = self.target(opts);
                    let clipped = self.h_try < self.h;
                    self.tau += self.h_try;
                    if self.h_try >= target - (self.tau - self.h_try) {
                        self.tau = target; // land exactly on the checkpoint / end
                    }
                    let here = regime(&self.y, self.log, self.looping, self.tau, opts);
                    let eta_target = here.eta_target(opts);
                    let zone = !self.looping && self.tau > opts.endgame_tau;
                    let factor = step_factor(self.eta_first, eta_target, noise, zone);
                    let base = if clipped {
                        self.h.max(self.h_try)
                    } else {
                        self.h_try
                    };
                    self.h = (base * factor).min(self.step_cap(opts));
                    if self.looping {
                        if let Some(end) = self.loop_vertex() {
                            return Some(end);
                        }
                        if self.phase == Phase::Resume {
                            return None;
                        }
                        if let Some(why) = opts.budget_spent(self.accepted + self.rejected) {
                            return self.stop(opts, why.into());
                        }
                        if self.accepted + self.rejected - self.loop_began > LOOP_STEP_BUDGET {
                            return self.end_endgame();
                        }
                        self.begin_step(opts);
                        return None;
                    }
                    if self.tau >= opts.tau_end {
                        return Some(self.finish(TrackCode::Reached));
                    }
                    if switches_coordinates(&self.y, self.log, self.tau, self.cond, opts) {
                        // New coordinates: directions must be recomputed there.
                        switch_coordinates(&mut self.y, self.log);
                        self.log = !self.log;
                        self.switched_at = Some(self.tau);
                        self.omega = f64::INFINITY;
                        self.phase = Phase::Refine(0);
                        self.eval_y.copy_from_slice(&self.y);
                        self.eval_tau = C64::new(self.tau, 0.0);
                        return None;
                    }
                    if self.tau > opts.endgame_tau {
                        let (s, steps) = (opts.tau_end - self.tau, self.accepted + self.rejected);
                        if self.h_try < TINY_STEP * (s + self.h_try) {
                            self.tiny_steps += 1;
                        } else {
                            self.tiny_steps = 0;
                        }
                        if s <= 0.5 * self.halved_s {
                            (self.halved_s, self.halved_at) = (s, steps);
                        } else if steps - self.halved_at >= STALL_STEPS {
                            return self.stop(opts, stalled_reason(s));
                        }
                        if self.tiny_steps >= TINY_STEP_RUN {
                            let why = format!(
                                "stalled ({TINY_STEP_RUN} steps shorter than {TINY_STEP:.0e}·s at s = {s:.1e})"
                            );
                            return self.stop(opts, why);
                        }
                    }
                    if !self.log && opts.tau_end - self.tau >= super::dd::DD_CHECKPOINT_S {
                        match &mut self.checkpoint {
                            Some((t, y)) => {
                                *t = self.tau;
                                y.copy_from_slice(&self.y);
                            }
                            None => self.checkpoint = Some((self.tau, self.y.clone())),
                        }
                    }
                    let sampled = self.sample(opts);
                    if !self.log {
                        if let Some(c) = &self.cauchy {
                            if self.tau >= c.next_round_tau() {
                                if self.heading_to_infinity() {
                                    // Not a finite endpoint after all: the real path decides.
                                    self.cauchy = None;
                                    self.cauchy_failed = true;
                                } else {
                                    self.enter_loop();
                                    return None;
                                }
                            }
                        } else if sampled && !self.cauchy_failed && self.looks_singular(opts) {
                            self.enter_loop();
                            return None;
                        }
                    }
                    if let Some(v) = self.diverging() {
                        return Some(self.finish(TrackCode::StoppedInEndgame(diverging_reason(v))));
                    }
                    if sampled && self.cauchy.is_none() && opts.stop_beyond_double {
                        let beyond = beyond_double(&self.sample_conds, &self.samples, opts.tau_end);
                        if let Some((v, k)) = beyond {
                            let (s, cond) = (opts.tau_end - self.tau, self.cond);
                            let why = beyond_double_reason(v, k, s, cond);
                            return Some(self.finish(TrackCode::StoppedInEndgame(why)));
                        }
                    }
                    if let Some(why) = opts.budget_spent(self.accepted + self.rejected) {
                        return self.stop(opts, why.into());
                    }
                    self.begin_step(opts);
                    None
                } else if it >= opts.max_corrector_iters {
                    self.reject(opts, "Newton did not converge")
                } else {
                    self.phase = Phase::Correct(it + 1);
                    self.eval_y.copy_from_slice(&self.yc);
                    None
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A projective point whose smallest coordinate is e^-22 of the largest, as cyclic-13's
    /// failing paths had at the zone's entry.
    fn spread_point() -> Vec<C64> {
        let mut y = vec![
            C64::new(0.7, 0.1),
            C64::new(2.8e-10, 1e-11),
            C64::new(0.3, -0.4),
        ];
        normalize(&mut y);
        y
    }

    fn polyhedral() -> TrackerOptions {
        TrackerOptions {
            to_log_spread: TO_LOG_SPREAD,
            ..TrackerOptions::default()
        }
    }

    /// In the endgame zone a projective point that lost its digits (condition 1e8, spread
    /// e^22: relative rounding ~1e1 in its smallest coordinate) goes to log coordinates only
    /// with the zone switch, and only for a polyhedral homotopy; before the zone the
    /// first-pass rounding switch takes it there either way.
    #[test]
    fn the_zone_switch_takes_a_projective_path_that_lost_its_digits_to_log_coordinates() {
        let y = spread_point();
        let (cond, zone_tau, before_tau) = (1e8, -0.05, -0.5);
        let plain = polyhedral();
        let zone = TrackerOptions {
            zone_rounding_switch: true,
            ..polyhedral()
        };
        assert!(!switches_coordinates(&y, false, zone_tau, cond, &plain));
        assert!(switches_coordinates(&y, false, zone_tau, cond, &zone));
        assert!(switches_coordinates(&y, false, before_tau, cond, &plain));
        // A point spread over less than ROUNDING_SWITCH_MIN_SPREAD stays projective.
        let mut near = vec![C64::new(0.7, 0.1), C64::new(1e-2, 0.0), C64::new(0.3, -0.4)];
        normalize(&mut near);
        assert!(!switches_coordinates(&near, false, zone_tau, cond, &zone));
        // Total-degree and m-hom homotopies never go to log coordinates in the zone.
        let td = TrackerOptions {
            zone_rounding_switch: true,
            ..TrackerOptions::default()
        };
        assert!(!switches_coordinates(&y, false, zone_tau, cond, &td));
    }

    /// A log path in the zone spread over e^22 goes back to projective coordinates at once
    /// without the zone switch (below [`LOG_SWITCH_SPREAD`]); with it, only where its
    /// smallest coordinate would keep [`FROM_LOG_ROUNDING`], so that the two rules do not
    /// send a path back and forth.
    #[test]
    fn with_the_zone_switch_a_log_path_returns_to_projective_only_where_digits_are_kept() {
        let mut z = spread_point();
        projective_to_log(&mut z);
        let zone_tau = -0.05;
        let plain = polyhedral();
        let zone = TrackerOptions {
            zone_rounding_switch: true,
            ..polyhedral()
        };
        assert!(switches_coordinates(&z, true, zone_tau, 1e8, &plain));
        assert!(!switches_coordinates(&z, true, zone_tau, 1e8, &zone));
        // Spread over e^4.3 at condition 1 (rounding 1e-13), it goes back.
        let mut near = vec![C64::new(0.7, 0.1), C64::new(1e-2, 0.0), C64::new(0.3, -0.4)];
        normalize(&mut near);
        projective_to_log(&mut near);
        assert!(switches_coordinates(&near, true, zone_tau, 1.0, &zone));
    }
}
