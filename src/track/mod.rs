//! Batch path tracker (predictor–corrector in τ = log t, projective coordinates).
//!
//! Every path is a small state machine ([`path::PathState`]) that, in each round, names one
//! point `(y, τ)` it needs the directions at. A round gathers those points for the whole
//! batch, makes ONE call to [`Backend::directions`] (one batched evaluation + one unified
//! Euler/Newton solve per point), and advances every path with its result. Paths in
//! different phases (start refinement, Runge–Kutta stages, Newton corrections) share the
//! same round, so the batch stays full; finished paths leave and new start points stream in.
//!
//! Per step: RK4 predictor along the Euler direction (stage 1 reuses the directions of the
//! last corrector iteration), then Newton corrections at the new τ. Step control: the first
//! Newton correction `η₁` measures the predictor error (`≈ C h⁵`); the next step is
//! `h·clamp(0.9 (η_target/η₁)^{1/5}, ½, 2)`; a step is rejected (h halved) when `η₁` is too
//! large, Newton does not contract, or does not converge within the allowed iterations.

pub mod dd;
pub mod path;
pub mod resident;

use crate::backend::{Backend, DirectionsOut};
use crate::error::Result;
use crate::eval::{Points, Residual};
use crate::homotopy::Homotopy;
use num_complex::Complex64 as C64;
pub use path::{PathEnd, PathState, TrackCode};

/// The predictor error target near toric infinity ([`path::Regime::NearToricInfinity`]):
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
    /// ([`path::Regime::Loose`]: before the endgame zone, coordinates not spread). 1e-4 by
    /// default: against 1e-6 it cuts the steps per path by about 40 % (katsura-10 210 → 131,
    /// eco-10 190 → 96, cyclic-7 100 → 58) with the same solution counts on the benchmark
    /// families; the paths that then jump (close pairs of solutions, katsura-10 seed 1) are
    /// re-tracked ([`Self::tightened`]). Steps are still rejected above `eta_max` (1e-3).
    pub eta_target: f64,
    /// The same in the endgame zone `τ > endgame_tau` and on Cauchy loops
    /// ([`path::Regime::Endgame`]): 1e-6, where the valuations of `y_n`, the singularity
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
    /// this (in `ln`) goes back to log coordinates ([`path::TO_LOG_SPREAD`] for polyhedral
    /// homotopies, whose paths may pass close to toric infinity at t < 1; infinite, i.e.
    /// never, by default).
    pub to_log_spread: f64,
    /// Residual precision of the Newton corrections ([`Residual::Adaptive`]; the last
    /// recovery round uses [`Residual::DoubleDouble`]).
    pub residual: Residual,
    /// Stop a path heading to infinity once double precision cannot take it to the
    /// divergence test ([`path::beyond_double`]). On by default, off in the recovery rounds
    /// ([`Self::tightened`]): they verify such estimates (where few paths have them), and
    /// track the path on to where double gives out, as before the rule.
    pub stop_beyond_double: bool,
    /// Resident slots take a path heading to infinity past `ZONE_COND` to its end themselves
    /// (`resident::slot::EXIT_STOPPED`) instead of handing it to the host tracker, which
    /// tracked its whole endgame zone again; so do they with a path in double-double mode
    /// whose step size underflows once its valuation has settled
    /// ([`path::settled_valuation`]). On by default, off in the recovery rounds
    /// ([`Self::tightened`]), which track such paths on the host as before.
    pub slots_finish_diverging: bool,
    /// Polyhedral paths go to log coordinates where their smallest projective coordinate
    /// loses its digits ([`path::TO_LOG_ROUNDING`]). On by default and in the first
    /// recovery round, off from the second on ([`Self::tightened`]): chandra-16 (seed 1)
    /// path 31675 switched so where another path's sheet passes it, and the pair,
    /// re-tracked, ended on one solution; the sparse chain (n = 8, seeds 1 and 3) has a
    /// path that only the first round's re-tracking, with the switch, brings to its root.
    pub rounding_switch: bool,
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

    /// The predictor error target of a step from a point in `regime`.
    pub fn eta_target_at(&self, regime: path::Regime) -> f64 {
        match regime {
            path::Regime::Loose => self.eta_target,
            path::Regime::Endgame => self.eta_target_endgame,
            path::Regime::NearToricInfinity => self.eta_target_endgame.min(NEAR_TORIC_INFINITY_ETA),
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
            deadline: None,
        }
    }
}

/// A start point at parameter `tau`: homogeneous coordinates `y` (any scale), or, with
/// `log`, affine log coordinates `z = (log x, 0)` (polyhedral start points, whose `x` may
/// leave double range at τ₀). A log-mode path switches to projective coordinates as soon as
/// its coordinates are representable (see [`path::LOG_SWITCH_SPREAD`]).
#[derive(Clone, Debug)]
pub struct StartPoint {
    pub path: u64,
    pub y: Vec<C64>,
    pub tau: f64,
    pub log: bool,
    /// The path's own lifts (one per column of the homotopy's `Â`), shared by the paths of
    /// one polyhedral cell; `None`: the homotopy's lifts.
    pub lifts: Option<std::sync::Arc<[f64]>>,
    /// Steps (accepted, rejected) the path took before this point (a path continued by the
    /// host after resident tracking); (0, 0) for a start point.
    pub steps: (u32, u32),
}

/// Counters of one tracking run.
#[derive(Clone, Debug, Default)]
pub struct TrackStats {
    pub rounds: u64,
    pub evaluations: u64,
}

/// Tracks every start point to the end of `homotopy` (already loaded in `backend`); `on_end`
/// is called for each path as it finishes (in a deterministic order). A backend with
/// resident slots ([`Backend::resident`]) tracks through them ([`resident::track_resident`]),
/// unless `opts` asks for double-double residuals everywhere (the slots work in double).
pub fn track_all(
    backend: &mut dyn Backend,
    homotopy: &Homotopy,
    opts: &TrackerOptions,
    starts: &mut dyn Iterator<Item = StartPoint>,
    on_end: &mut dyn FnMut(PathEnd) -> Result<()>,
) -> Result<TrackStats> {
    if opts.residual != Residual::DoubleDouble {
        if let Some(rt) = backend.resident() {
            return resident::track_resident(rt, homotopy, opts, starts, on_end);
        }
    }
    let (nh, m) = (homotopy.nh(), homotopy.term_count());
    let default_lifts = homotopy.lifts();
    let max_lift = homotopy.max_lift();
    let mut active: Vec<PathState> = Vec::with_capacity(opts.batch);
    let mut stats = TrackStats::default();
    let mut exhausted = false;
    let mut round = Round::default();
    let pool = backend.host_pool();
    let pool = pool.as_deref();
    loop {
        while !exhausted && active.len() < opts.batch {
            match starts.next() {
                Some(s) => active.push(PathState::new(s, opts, max_lift)),
                None => exhausted = true,
            }
        }
        if active.is_empty() {
            break;
        }
        stats.rounds += 1;
        stats.evaluations += active.len() as u64;
        let mut dirs = |pts: &Points<'_>, out: DirectionsOut<'_>| backend.directions(pts, out);
        round.run(
            &mut dirs,
            pool,
            &mut active,
            nh,
            m,
            &default_lifts,
            opts,
            on_end,
        )?;
    }
    Ok(stats)
}

/// Rounds of at least this many paths advance them on the backend's pool: on 16 threads
/// the paths' steps, done one after another, were the serial part of a round (katsura-10:
/// 0.17 s of 1.74 s on 2 threads of the container).
pub const PARALLEL_ADVANCE: usize = 256;
/// Paths per rayon task when advancing in parallel.
const ADVANCE_GRAIN: usize = 32;

/// Buffers of one round: the points every path of a batch names, and their directions.
#[derive(Default)]
pub(crate) struct Round {
    ys: Vec<C64>,
    taus: Vec<C64>,
    logs: Vec<bool>,
    lifts: Vec<f64>,
    /// The lifts each row of `lifts` holds, kept alive so that a row is copied again only
    /// when the path in it has other lifts (`None`: the homotopy's, or not filled: copied).
    /// A polyhedral path's lifts are its cell's, `m` per path: copying them every round was
    /// 2.4 % of chandra-10's time on one thread.
    lift_rows: Vec<Option<std::sync::Arc<[f64]>>>,
    residual: Vec<Residual>,
    eu: Vec<C64>,
    ne: Vec<C64>,
    co: Vec<f64>,
}

/// Computes the directions of a round (a backend's, or the host's in resident tracking).
pub(crate) type DirectionsFn<'a> = dyn FnMut(&Points<'_>, DirectionsOut<'_>) -> Result<()> + 'a;

impl Round {
    /// Gathers the point each path of `active` needs, makes ONE call to `directions`, and
    /// advances every path with its result (gathering and advancing on `pool` for rounds of
    /// at least [`PARALLEL_ADVANCE`] paths: each path's step is its own, so the threads
    /// change no bit); finished paths leave `active`, and reach `on_end`, in order.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run(
        &mut self,
        directions: &mut DirectionsFn<'_>,
        pool: Option<&rayon::ThreadPool>,
        active: &mut Vec<PathState>,
        nh: usize,
        m: usize,
        default_lifts: &[f64],
        opts: &TrackerOptions,
        on_end: &mut dyn FnMut(PathEnd) -> Result<()>,
    ) -> Result<()> {
        let p = active.len();
        let zero = C64::new(0.0, 0.0);
        self.ys.resize(p * nh, zero);
        self.taus.resize(p, zero);
        self.eu.resize(p * nh, zero);
        self.ne.resize(p * nh, zero);
        self.co.resize(p, 0.0);
        self.logs.resize(p, false);
        self.residual.resize(p, Residual::Adaptive);
        let own_lifts = active.iter().any(|s| s.lifts.is_some());
        self.lifts.resize(if own_lifts { p * m } else { 0 }, 0.0);
        self.lift_rows.resize(if own_lifts { p } else { 0 }, None);
        let pool = pool.filter(|pool| p >= PARALLEL_ADVANCE && pool.current_num_threads() > 1);
        // Per path: its point, τ, coordinates, residual and (polyhedral) lifts.
        let point =
            |s: &PathState, y: &mut [C64], tau: &mut C64, log: &mut bool, r: &mut Residual| {
                y.copy_from_slice(&s.eval_y);
                *tau = s.eval_tau;
                *log = s.is_log();
                *r = s.residual(opts);
            };
        let lifts =
            |s: &PathState, row: &mut [f64], held: &mut Option<std::sync::Arc<[f64]>>| match &s
                .lifts
            {
                Some(l) if held.as_ref().is_some_and(|h| std::sync::Arc::ptr_eq(h, l)) => {}
                Some(l) => {
                    row.copy_from_slice(l);
                    *held = Some(l.clone());
                }
                None => {
                    row.copy_from_slice(default_lifts);
                    *held = None;
                }
            };
        match pool {
            Some(pool) => {
                use rayon::prelude::*;
                pool.install(|| {
                    active
                        .par_iter()
                        .zip(self.ys.par_chunks_mut(nh))
                        .zip(self.taus.par_iter_mut())
                        .zip(self.logs.par_iter_mut())
                        .zip(self.residual.par_iter_mut())
                        .with_min_len(ADVANCE_GRAIN)
                        .for_each(|((((s, y), t), l), r)| point(s, y, t, l, r));
                    if own_lifts {
                        active
                            .par_iter()
                            .zip(self.lifts.par_chunks_mut(m))
                            .zip(self.lift_rows.par_iter_mut())
                            .with_min_len(ADVANCE_GRAIN)
                            .for_each(|((s, row), held)| lifts(s, row, held));
                    }
                });
            }
            None => {
                for (i, s) in active.iter().enumerate() {
                    let y = &mut self.ys[i * nh..(i + 1) * nh];
                    point(
                        s,
                        y,
                        &mut self.taus[i],
                        &mut self.logs[i],
                        &mut self.residual[i],
                    );
                    if own_lifts {
                        let row = &mut self.lifts[i * m..(i + 1) * m];
                        lifts(s, row, &mut self.lift_rows[i]);
                    }
                }
            }
        }
        let pts = Points {
            ys: &self.ys,
            taus: &self.taus,
            log_mode: Some(&self.logs),
            lifts: own_lifts.then_some(&self.lifts[..]),
            residual: Some(&self.residual),
        };
        directions(
            &pts,
            DirectionsOut {
                euler: &mut self.eu,
                newton: &mut self.ne,
                cond: &mut self.co,
            },
        )?;
        let (eu, ne, co) = (&self.eu, &self.ne, &self.co);
        let step = |(i, s): (usize, &mut PathState)| {
            let r = i * nh..(i + 1) * nh;
            s.advance(&eu[r.clone()], &ne[r], co[i], opts)
        };
        let ends: Vec<Option<PathEnd>> = match pool {
            Some(pool) => {
                use rayon::prelude::*;
                pool.install(|| {
                    active
                        .par_iter_mut()
                        .enumerate()
                        .with_min_len(ADVANCE_GRAIN)
                        .map(step)
                        .collect()
                })
            }
            _ => active.iter_mut().enumerate().map(step).collect(),
        };
        // Ended paths leave in order (the others stay where they are: no moves for most).
        let mut ends = ends.into_iter();
        let mut handed = Ok(());
        active.retain(|_| match ends.next().flatten() {
            Some(end) => {
                if handed.is_ok() {
                    handed = on_end(end);
                }
                false
            }
            None => true,
        });
        handed
    }
}
