//! The tracker's settings ([`TrackerOptions`]) and the targets and reasons they name.

use crate::eval::Residual;

/// The predictor error target near toric infinity (`path::Regime::NearToricInfinity`):
/// 1e-6, tighter than the loose regime's target (with 1e-5, eco-10 seed 6 loses its path 103
/// at the switch to log coordinates).
pub const NEAR_TORIC_INFINITY_ETA: f64 = 1e-6;

/// The predictor error target that re-tracking round `k` divides by `100^k`
/// ([`TrackerOptions::tightened`]): 1e-6. The first pass's looser target
/// ([`TrackerOptions::eta_target`]) is for speed; a pair of chandra-12's paths that jumped inside a
/// cluster of huge-norm solutions (seed 4, resident slots) separated only at 1e-8.
pub const RETRACK_ETA: f64 = 1e-6;

/// Tracking parameters. Defaults are tuned for double precision on the benchmark families.
#[derive(Clone, Debug)]
pub struct TrackerOptions {
    /// End of the path parameter (τ = 0 is t = 1).
    pub tau_end: f64,
    /// First step size.
    pub h_initial: f64,
    pub h_max: f64,
    /// Steps may also reach `h_max_rel·|τ|` (far from τ = 0 the path is nearly constant in
    /// log scale: polyhedral paths start at τ₀ ≈ −10⁷ for small lift gaps).
    pub h_max_rel: f64,
    /// Smallest step before the path stops (relative to max(1, |τ|)).
    pub h_min: f64,
    /// Target size of the first Newton correction (predictor error) in the loose regime
    /// (`path::Regime::Loose`: before the endgame zone, coordinates not spread). 1e-4 by
    /// default: against 1e-6 it cuts the steps per path by about 40 % (katsura-10 210 → 131,
    /// eco-10 190 → 96, cyclic-7 100 → 58) with the same solution counts on the benchmark
    /// families; the paths that then jump (close pairs of solutions, katsura-10 seed 1) are
    /// re-tracked ([`Self::tightened`]). Steps are still rejected above `eta_max` (1e-3).
    pub eta_target: f64,
    /// The same in the endgame zone `τ > endgame_tau` and on Cauchy loops
    /// (`path::Regime::Endgame`): 1e-6, where the valuations of `y_n`, the singularity
    /// test and the endpoint decisions read the points. 1e-5 there saves katsura-10 a tenth
    /// of its steps (131 per path against 147), but chandra-13 on the H200 loses more
    /// solutions in clusters of huge-norm ones (4,086 + 4 at ∞ + 6 duplicate paths
    /// against 4,091 + 2 + 3).
    pub eta_target_endgame: f64,
    /// Reject the step when the first Newton correction exceeds this.
    pub eta_max: f64,
    /// Newton converged when the correction is below this (relative, ‖y‖ = 1).
    pub corrector_tol: f64,
    pub max_corrector_iters: u32,
    /// Newton iterations allowed to refine a start point.
    pub max_refine_iters: u32,
    /// Give up after this many steps (accepted + rejected).
    pub max_steps: u32,
    /// τ above which a path is in the endgame zone (samples are kept for valuations).
    pub endgame_tau: f64,
    /// Paths tracked at once.
    pub batch: usize,
    /// Before the endgame zone a projective path whose coordinates spread over more than
    /// this (in `ln`) goes back to log coordinates (`path::TO_LOG_SPREAD` for polyhedral
    /// homotopies, whose paths may pass close to toric infinity at t < 1; infinite, i.e.
    /// never, by default).
    pub to_log_spread: f64,
    /// Residual precision of the Newton corrections ([`Residual::Adaptive`]; the last
    /// recovery round uses [`Residual::DoubleDouble`]).
    pub residual: Residual,
    /// Stop a path heading to infinity once double precision cannot take it to the
    /// divergence test (`path::beyond_double`). On by default, off in the recovery rounds
    /// ([`Self::tightened`]): they verify such estimates (where few paths have them), and
    /// track the path on to where double gives out, as before the rule.
    pub stop_beyond_double: bool,
    /// Resident slots take a path heading to infinity past `ZONE_COND` to its end themselves
    /// (`resident::slot::EXIT_STOPPED`) instead of handing it to the host tracker, which
    /// tracked its whole endgame zone again; so do they with a path in double-double mode
    /// whose step size underflows once its valuation has settled
    /// (`path::settled_valuation`). On by default, off in the recovery rounds
    /// ([`Self::tightened`]), which track such paths on the host as before.
    pub slots_finish_diverging: bool,
    /// Polyhedral paths go to log coordinates where their smallest projective coordinate
    /// loses its digits (`path::TO_LOG_ROUNDING`). On by default and in the first
    /// recovery round, off from the second on ([`Self::tightened`]): chandra-16 (seed 1)
    /// path 31675 switched so where another path's sheet passes it, and the pair,
    /// re-tracked, ended on one solution; the sparse chain (n = 8, seeds 1 and 3) has a
    /// path that only the first round's re-tracking, with the switch, brings to its root.
    pub rounding_switch: bool,
    /// The same switch inside the endgame zone too, where a projective path would otherwise
    /// stay projective, and a log path there goes back to projective coordinates only where
    /// its smallest coordinate keeps `path::FROM_LOG_ROUNDING`. Off by default: on the
    /// first pass it changes which paths the endgame's tests stop early (tests/endgame.rs).
    /// The solver sets it for paths that failed in an earlier recovery round
    /// ([`crate::solver::ZONE_SWITCH_FROM_ROUND`]): cyclic-13's 13 paths 1267331, 1267333,
    /// …, 1267355 (seed 1) enter the zone at s = 0.1 with projective coordinates spread over
    /// e^21–e^23 at condition 5e7–2.5e8, where Newton stops contracting in double and in
    /// double-double from their checkpoint; with the switch they reach 13 distinct
    /// nonsingular solutions (condition 5.5e4).
    pub zone_rounding_switch: bool,
    /// Paths still running at this instant stop ([`TIME_BOUND_REASON`]): the recovery
    /// rounds' time bound. `None`: no bound.
    pub deadline: Option<std::time::Instant>,
}

/// The kind of a path's reason, for counting reasons: its first 40 characters with every
/// run of digits, decimal point and exponent letter squeezed to `#` ("h = 1.2e-15" and
/// "h = 3e-16" both give "h = #-#").
pub fn reason_kind(reason: &str) -> String {
    let mut w: String = reason
        .chars()
        .take(40)
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect();
    while let Some(i) = w.find("##").or(w.find("#.#")).or(w.find("#e")) {
        let len = if w[i..].starts_with("#.#") { 3 } else { 2 };
        w.replace_range(i..i + len, "#");
    }
    w
}

/// The reason of a path stopped by [`TrackerOptions::deadline`].
pub const TIME_BOUND_REASON: &str = "time bound of the recovery round reached";

impl TrackerOptions {
    /// Why a path that took `steps` steps (accepted + rejected) must stop now: its step
    /// budget ([`Self::max_steps`]) or the time bound ([`Self::deadline`]) is spent.
    pub fn budget_spent(&self, steps: u32) -> Option<&'static str> {
        if steps >= self.max_steps {
            Some("too many steps")
        } else if self
            .deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
        {
            Some(TIME_BOUND_REASON)
        } else {
            None
        }
    }

    /// Tighter settings for re-tracking suspect paths: round `k ≥ 1` tracks with predictor
    /// error targets [`RETRACK_ETA`]`/100^k` everywhere (steps ~2.5^k shorter), divides the
    /// rejection threshold by `10^k`, allows `4^k` times more steps, and does not stop paths
    /// beyond double precision early ([`Self::stop_beyond_double`]) nor in the resident slots
    /// ([`Self::slots_finish_diverging`]).
    pub fn tightened(&self, k: u32) -> TrackerOptions {
        let mut o = self.clone();
        let base = RETRACK_ETA.min(o.eta_target).min(o.eta_target_endgame);
        o.eta_target = base / 100f64.powi(k as i32);
        o.eta_target_endgame = o.eta_target;
        o.eta_max /= 10f64.powi(k as i32);
        o.max_steps = o.max_steps.saturating_mul(4u32.pow(k));
        o.h_initial /= 10f64.powi(k as i32);
        o.stop_beyond_double = false;
        o.slots_finish_diverging = false;
        o.rounding_switch = k < 2;
        o
    }
}

impl Default for TrackerOptions {
    fn default() -> Self {
        TrackerOptions {
            tau_end: 0.0,
            h_initial: 0.5,
            h_max: 4.0,
            h_max_rel: 0.5,
            h_min: 1e-14,
            eta_target: 1e-4,
            eta_target_endgame: 1e-6,
            eta_max: 1e-3,
            corrector_tol: 1e-9,
            max_corrector_iters: 3,
            max_refine_iters: 10,
            max_steps: 20_000,
            endgame_tau: -0.1,
            batch: 4096,
            to_log_spread: f64::INFINITY,
            residual: Residual::Adaptive,
            stop_beyond_double: true,
            slots_finish_diverging: true,
            rounding_switch: true,
            zone_rounding_switch: false,
            deadline: None,
        }
    }
}
