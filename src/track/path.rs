//! One path's state machine: start refinement → (RK4 stages 2–4 → Newton corrections)* → end.

use super::{StartPoint, TrackerOptions};
use crate::endgame::{homogenizing_valuation, VALUATION_TOL};

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
/// In the endgame zone the switch happens whenever the coordinates are representable.
pub const LOG_SWITCH_SPREAD_ENDGAME: f64 = 600.0;

/// A diverging path is stopped once `s = τ_end − τ` is below this.
pub const DIVERGENCE_S: f64 = 1e-8;
/// Endgame samples kept per path (the newest).
pub const MAX_SAMPLES: usize = 4;
use num_complex::Complex64 as C64;

/// How tracking of a path ended.
#[derive(Clone, Debug, PartialEq)]
pub enum TrackCode {
    /// Reached τ_end; the point is corrected there.
    Reached,
    /// Stopped inside the endgame zone (typically a singular endpoint or one at infinity);
    /// the reason says why.
    StoppedInEndgame(String),
    /// Gave up before the endgame zone.
    Failed(String),
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
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Refine(u32),
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
    cond: f64,
    /// Affine log coordinates `z = (log x, 0)` instead of projective `y`.
    log: bool,
    /// The path's own lifts (polyhedral cells), see [`super::StartPoint::lifts`].
    pub lifts: Option<std::sync::Arc<[f64]>>,
    /// The point the next round evaluates.
    pub eval_y: Vec<C64>,
    pub eval_tau: f64,
}

fn norm(v: &[C64]) -> f64 {
    v.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt()
}

fn normalize(v: &mut [C64]) {
    let s = norm(v);
    if s > 0.0 && s.is_finite() {
        v.iter_mut().for_each(|z| *z /= s);
    }
}

fn finite(v: &[C64]) -> bool {
    v.iter().all(|z| z.re.is_finite() && z.im.is_finite())
}

/// `out = y + c·d`
fn axpy(out: &mut Vec<C64>, y: &[C64], c: f64, d: &[C64]) {
    out.clear();
    out.extend(y.iter().zip(d).map(|(a, b)| a + b * c));
}

impl PathState {
    pub fn new(s: StartPoint, opts: &TrackerOptions) -> PathState {
        let nh = s.y.len();
        let mut y = s.y;
        if !s.log {
            normalize(&mut y);
        }
        let zero = vec![C64::new(0.0, 0.0); nh];
        PathState {
            path: s.path,
            eval_y: y.clone(),
            eval_tau: s.tau,
            y,
            tau: s.tau,
            h: opts.h_initial.max(0.01 * s.tau.abs()),
            h_try: opts.h_initial,
            phase: Phase::Refine(0),
            k: [zero.clone(), zero.clone(), zero.clone(), zero.clone()],
            yc: zero,
            eta_first: 0.0,
            eta_prev: 0.0,
            accepted: 0,
            rejected: 0,
            samples: Vec::new(),
            cond: 1.0,
            log: s.log,
            lifts: s.lifts,
        }
    }

    /// True while the path is tracked in log coordinates.
    pub fn is_log(&self) -> bool {
        self.log
    }

    /// Spread `max Re z − min Re z` of the log coordinates (with `z_n = 0`).
    fn log_spread(&self) -> f64 {
        let (lo, hi) = self
            .y
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), z| {
                (a.min(z.re), b.max(z.re))
            });
        hi - lo
    }

    /// Leaves log coordinates: `y = e^{z − max Re z}` normalized (tiny coordinates may
    /// underflow to 0, which projective tracking handles).
    fn to_projective(&mut self) {
        let hi = self.y.iter().fold(f64::NEG_INFINITY, |a, z| a.max(z.re));
        for z in self.y.iter_mut() {
            *z = (*z - hi).exp();
        }
        normalize(&mut self.y);
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
        }
    }

    /// Target of the next step.
    fn target(&self, opts: &TrackerOptions) -> f64 {
        opts.tau_end
    }

    /// In the endgame zone, keeps `(τ, y)` each time `s = τ_end − τ` has shrunk by
    /// [`SAMPLE_RATIO`] since the last sample (at most [`MAX_SAMPLES`], the newest).
    fn sample(&mut self, opts: &TrackerOptions) {
        if self.tau <= opts.endgame_tau {
            return;
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
            self.samples.push((self.tau, self.y.clone()));
        }
    }

    /// A path whose homogenizing coordinate has a clearly positive valuation, stable over the
    /// last three estimates (four samples) at `s ≤ DIVERGENCE_S`, goes to infinity: no need
    /// to track it further. A finite endpoint whose homogenizing coordinate is tiny (a
    /// solution of huge norm) looks like valuation 1 until `s` falls below that coordinate
    /// (seen on chandra-6 at s = 1e-6, and on cyclic-6 a fast path mimicked 1/6 at 1e-3), so
    /// `DIVERGENCE_S` matches [`crate::post::INFINITY_TOL`].
    fn diverging(&self) -> Option<f64> {
        let k = self.samples.len();
        if k < 4 || self.samples[k - 1].0 < -DIVERGENCE_S {
            return None;
        }
        let v0 = homogenizing_valuation(&self.samples[k - 4..k - 2], 0.0)?;
        let v1 = homogenizing_valuation(&self.samples[k - 3..k - 1], 0.0)?;
        let v2 = homogenizing_valuation(&self.samples[k - 2..], 0.0)?;
        let stable = (v0 - v1).abs() < 0.01 && (v1 - v2).abs() < 0.01;
        (v2 > 2.0 * VALUATION_TOL && stable).then_some(v2)
    }

    /// Begins a step attempt from (y, τ) with k1 known: the stage-2 point.
    fn begin_step(&mut self, opts: &TrackerOptions) {
        let room = self.target(opts) - self.tau;
        self.h_try = self.h.min(room);
        self.phase = Phase::Stage(2);
        let (y, k1) = (&self.y, &self.k[0]);
        axpy(&mut self.eval_y, y, 0.5 * self.h_try, k1);
        self.eval_tau = self.tau + 0.5 * self.h_try;
    }

    /// Rejects the current attempt: halves the step, or stops the path when it underflows.
    fn reject(&mut self, opts: &TrackerOptions, why: &str) -> Option<PathEnd> {
        self.rejected += 1;
        self.h = 0.5 * self.h_try;
        if self.h < opts.h_min * self.tau.abs().max(1.0) {
            let reason = format!("step size underflow ({why})");
            return Some(self.stop(opts, reason));
        }
        if self.accepted + self.rejected >= opts.max_steps {
            return Some(self.stop(opts, "too many steps".into()));
        }
        self.begin_step(opts);
        None
    }

    fn stop(&mut self, opts: &TrackerOptions, reason: String) -> PathEnd {
        if self.tau > opts.endgame_tau {
            self.finish(TrackCode::StoppedInEndgame(reason))
        } else {
            self.finish(TrackCode::Failed(reason))
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
                    return Some(self.finish(TrackCode::Failed("singular start point".into())));
                }
                let eta = norm(newton);
                self.y.iter_mut().zip(newton).for_each(|(a, b)| *a += b);
                if !self.log {
                    normalize(&mut self.y);
                }
                self.cond = cond;
                if eta <= opts.corrector_tol * 1e-2
                    || (it + 1 >= opts.max_refine_iters && eta <= opts.corrector_tol)
                {
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
                        axpy(&mut self.eval_y, y, c, kk);
                        self.eval_tau = self.tau + c;
                        self.phase = Phase::Stage(s as u8 + 1);
                    }
                    _ => {
                        let w = h / 6.0;
                        for j in 0..self.y.len() {
                            self.yc[j] = self.y[j]
                                + (self.k[0][j]
                                    + (self.k[1][j] + self.k[2][j]) * 2.0
                                    + self.k[3][j])
                                    * w;
                        }
                        self.eval_y.copy_from_slice(&self.yc);
                        self.eval_tau = self.tau + h;
                        self.phase = Phase::Correct(1);
                    }
                }
                None
            }
            Phase::Correct(it) => {
                if !ok {
                    return self.reject(opts, "non-finite Newton step");
                }
                let eta = norm(newton);
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
                self.eta_prev = eta;
                self.yc.iter_mut().zip(newton).for_each(|(a, b)| *a += b);
                if eta <= opts.corrector_tol.max(noise) || stagnated {
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
                    let ratio = (opts.eta_target / self.eta_first.max(1e-300)).powf(0.2);
                    let factor = (0.9 * ratio).clamp(0.5, 2.0);
                    let base = if clipped {
                        self.h.max(self.h_try)
                    } else {
                        self.h_try
                    };
                    self.h = (base * factor).min(opts.h_max.max(opts.h_max_rel * self.tau.abs()));
                    if self.tau >= opts.tau_end {
                        return Some(self.finish(TrackCode::Reached));
                    }
                    if self.log {
                        let limit = if self.tau > opts.endgame_tau {
                            LOG_SWITCH_SPREAD_ENDGAME
                        } else {
                            LOG_SWITCH_SPREAD
                        };
                        if self.log_spread() <= limit {
                            // New coordinates: directions must be recomputed there.
                            self.to_projective();
                            self.phase = Phase::Refine(0);
                            self.eval_y.copy_from_slice(&self.y);
                            self.eval_tau = self.tau;
                            return None;
                        }
                    }
                    self.sample(opts);
                    if let Some(v) = self.diverging() {
                        return Some(self.finish(TrackCode::StoppedInEndgame(format!(
                            "diverging (valuation {v:.3})"
                        ))));
                    }
                    if self.accepted + self.rejected >= opts.max_steps {
                        return Some(self.stop(opts, "too many steps".into()));
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
