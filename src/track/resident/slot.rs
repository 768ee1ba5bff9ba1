//! The per-path step machine of resident tracking, on the host: the reference that the
//! device kernel `rt_advance` (kernels/track.cu) mirrors line for line.
//!
//! It is [`crate::track::PathState`] without the endgame: start refinement, RK4 stages 2–4
//! and Newton corrections on the real τ axis, the same step control, the switch from log to
//! projective coordinates. A path that enters the endgame zone (`τ ≥ endgame_tau`) keeps
//! its entry point and goes on towards `τ_end`; it ends here only when it gets there
//! without trouble ([`EXIT_REACHED`]). Trouble in the zone — a condition estimate above
//! [`ZONE_COND`], [`ZONE_STEPS`] steps without halving `s = τ_end − τ`, a step-size
//! underflow — hands the path back to the host tracker from its entry point
//! ([`EXIT_HANDOFF`]), whose endgames (Cauchy loops, valuations, double-double residuals)
//! take it from there. A homogenizing coordinate that still shrinks like `s^v` with
//! `v > 2·VALUATION_TOL` between the last two endgame samples once `s ≤ DIVERGENCE_S` (a
//! diverging path, or one towards a solution of huge norm: the host's rule) hands it back
//! from late in the zone, its oldest endgame sample ([`EXIT_CONTINUE`]) — unless the
//! backend computes residuals in double-double ([`Slot::new`]'s `dd_residuals`): then the
//! slot goes back to that sample itself and tracks on in *double-double mode* (so does a
//! slot whose condition estimate exceeds [`ZONE_COND`] at `s ≤` [`DD_ENTRY_S`]), its Newton
//! corrections computed with a double-double residual ([`Slot::residual`]), as the host
//! tracker does near such solutions (mixed-precision iterative refinement: the Jacobian in
//! double, the residual `H` in double-double). In that mode the condition bound is
//! [`ZONE_COND_DD`], trouble hands the path over from the point it went back to, and a
//! valuation that stays positive ([`stable_divergence`], the host's rule) ends it as
//! diverging ([`EXIT_DIVERGED`]); on the first pass, a step-size underflow once the
//! valuation has settled ([`settled_valuation`]) ends it too ([`EXIT_STOPPED`]). On
//! chandra-12 about 1,000 paths per seed (to solutions of norm 1e4–1e8, κ up to 1e14) are
//! in this case: left to the host, they would be most of its rounds.
//! Outside double-double mode a path heading to infinity whose condition estimate grows
//! too fast for double precision to reach the divergence test ([`beyond_double`], the host
//! tracker's rule, from the condition estimates kept with the samples) ends here as
//! diverging ([`EXIT_BEYOND_DOUBLE`]): without it such paths would go on until their
//! estimate passed [`ZONE_COND`], and the host would track their zone again. A path still heading
//! to infinity when its estimate passes [`ZONE_COND`] at `s >` [`DD_ENTRY_S`] stays in its
//! slot on the first pass ([`Slot::carry`]) and ends there as the host tracker would end it
//! ([`EXIT_STOPPED`]).
//! Failures before the zone end the path ([`EXIT_FAILED`] + reason).

use super::{SlotExit, ZONE_COND, ZONE_STEPS, ZONE_STEPS_TO_INFINITY};
use crate::endgame::homogenizing_valuation;
use crate::eval::Residual;
use crate::track::dd::DD_CHECKPOINT_S;
use crate::track::path::{
    beyond_double, beyond_double_reason, correction_size, finite, heading_to_infinity,
    log_to_projective, newton_converged, norm, normalize, overshoots_log_switch, refine_converged,
    regime, settled_valuation, stable_divergence, stalled_reason, step_factor, switch_coordinates,
    switches_coordinates, Regime, DIVERGENCE_S, MAX_SAMPLES, NOISE_FACTOR, SAMPLE_RATIO,
    STAGNATION_TOL,
};
use crate::track::{TrackCode, TrackerOptions};
use num_complex::Complex64 as C64;

/// Slot holds no path.
pub const SLOT_EMPTY: u8 = 0;
/// Slot holds a path being tracked.
pub const SLOT_ACTIVE: u8 = 1;
/// The path reached `τ_end`.
pub const EXIT_REACHED: u8 = 2;
/// The path goes back to the host from its endgame-zone entry point.
pub const EXIT_HANDOFF: u8 = 3;
/// The path goes back to the host from late in the zone: the divergence rule, at
/// `s ≤ DIVERGENCE_S`, hands it over from its oldest endgame sample (see
/// `Snapshot::from_oldest_sample`). Sent back from the zone entry instead, these paths
/// (1,033 of chandra-12's 1,143 hand-overs, towards its solutions of norm ≳ 1e8) would have
/// the host track their whole zone again: ~1,000 evaluations each.
pub const EXIT_CONTINUE: u8 = 4;
/// In double-double mode: the homogenizing coordinate's valuation stayed positive
/// ([`stable_divergence`]): the path ends as diverging, as the host tracker ends it.
pub const EXIT_DIVERGED: u8 = 5;
/// Outside double-double mode, in projective coordinates, on the first pass
/// (`TrackerOptions::stop_beyond_double`): the host's rule [`beyond_double`] on the
/// samples and their condition estimates says double precision cannot take the path to the
/// divergence test: it ends as diverging, as the host tracker ends it. Without this exit,
/// cyclic-12's paths to its positive-dimensional sets at infinity (a quarter of its
/// 500,352) go to the host at `κ > ZONE_COND`, which tracks their whole zone again: 363 of
/// the GPU's 369 s first pass.
pub const EXIT_BEYOND_DOUBLE: u8 = 6;
/// In double-double mode a path in the zone goes back to the host when its condition
/// estimate exceeds this (ZONE_COND otherwise): with the residual in double-double Newton
/// still converges, at the rate `κ·ε` per correction, and chandra-12's solutions of huge
/// norm have κ up to 1e14.
pub const ZONE_COND_DD: f64 = 1e13;
/// A path in the zone whose condition estimate exceeds [`ZONE_COND`] at `s = τ_end − τ ≤`
/// this enters double-double mode (from its oldest sample) instead of going back to the
/// host from its zone entry. chandra-12's paths to solutions of norm 1e4–1e8 cross 1e8 at
/// s = 1e-11…1e-7 (50–75 per seed; tracking their whole zone again would be half of the
/// host's remaining evaluations). Paths to singular endpoints typically cross it earlier and keep
/// the host's Cauchy endgame from the zone entry; cyclic-8 (seeds 1–3), whose paths end on
/// a curve of solutions, finds the same 960 distinct well-conditioned solutions and the
/// same counts of finite and at-infinity endpoints either way.
pub const DD_ENTRY_S: f64 = 1e-6;
/// The path failed before the endgame zone; `EXIT_FAILED + r` with `r` an index of
/// [`FAIL_REASONS`].
pub const EXIT_FAILED: u8 = 16;
/// A path the slot carried ([`Slot::carry`]) stopped in the endgame zone as the host tracker
/// stops it: `EXIT_STOPPED + r` with `r` an index of [`FAIL_REASONS`] (its step size
/// underflowed, too many steps), [`STOP_STALLED`] or [`STOP_DIVERGED`]; the host gets a
/// `TrackCode::StoppedInEndgame` with the host's wording, and post-processing treats it as
/// the host's own (double-double tracking from the checkpoint of a stalled path, Newton at
/// t = 1 in double-double). cyclic-12's paths to its positive-dimensional sets at infinity
/// cross `ZONE_COND` at s = 3e-6…1.5e-2; handed to the host from their zone entry, they are
/// most of the host's work on the GPU (host rounds 275 of the 282 s first pass, ~30,000
/// paths ending in "Newton did not contract" after ~1,200 steps each).
///
/// Also, on the first pass, a path in double-double mode whose step size underflows once
/// its homogenizing coordinate's valuation has settled ([`settled_valuation`]): the host,
/// tracking it again from where the mode went back to, stops it the same way. On
/// cyclic-12 (seed 1, paths 40000–41499) those were 16 of the 21 hand-overs outside the
/// tail: valuation 1/3 to 0.002, underflow ("Newton did not contract") at s = 4e-9…4e-8,
/// κ = 6e9…3e11; the host stopped 14 of them by the same underflow at s = 1e-8…4e-8 and
/// 2 as diverging, and all 16 ended at infinity. chandra-12's double-double underflows
/// (39 per seed, at s ≈ 1e-14 on their way to solutions of norm ~1e7, all nonsingular in
/// the end) have unsettled valuations and still go to the host.
pub const EXIT_STOPPED: u8 = 32;
/// `EXIT_STOPPED + STOP_STALLED`: [`crate::track::path::STALL_STEPS`] steps without halving
/// `s` (the host's stall rule).
pub const STOP_STALLED: u8 = 9;
/// `EXIT_STOPPED + STOP_DIVERGED`: [`stable_divergence`] (the host's divergence rule).
pub const STOP_DIVERGED: u8 = 10;

/// Why a path failed, by code `status − EXIT_FAILED` (the host tracker's wording).
pub const FAIL_REASONS: [&str; 9] = [
    "singular start point",
    "start point did not converge",
    "step size underflow (non-finite direction)",
    "step size underflow (non-finite Newton step)",
    "step size underflow (predictor too far from the path)",
    "step size underflow (Newton did not contract)",
    "step size underflow (Newton did not converge)",
    "too many steps",
    "step size underflow (step overshot the switch to log coordinates)",
];
const F_SINGULAR_START: u8 = 0;
const F_START: u8 = 1;
const F_NONFINITE_DIR: u8 = 2;
const F_NONFINITE_NEWTON: u8 = 3;
const F_PREDICTOR: u8 = 4;
const F_CONTRACT: u8 = 5;
const F_CONVERGE: u8 = 6;
const F_STEPS: u8 = 7;
const F_OVERSHOOT: u8 = 8;

/// Phases: `Refine(it)` = it (< 100), `Stage(s)` = 100 + s, `Correct(it)` = 200 + it.
const STAGE: u32 = 100;
const CORRECT: u32 = 200;

/// One slot of the resident batch.
#[derive(Clone, Debug)]
pub struct Slot {
    pub status: u8,
    phase: u32,
    /// Current point (affine log coordinates while `log`).
    pub y: Vec<C64>,
    yc: Vec<C64>,
    k: [Vec<C64>; 4],
    /// The point the next iteration evaluates.
    pub eval_y: Vec<C64>,
    pub eval_tau: f64,
    pub tau: f64,
    h: f64,
    h_try: f64,
    eta_first: f64,
    eta_prev: f64,
    pub cond: f64,
    pub accepted: u32,
    pub rejected: u32,
    pub log: bool,
    /// The point `(τ, y, log)` where the path entered the endgame zone, once it has.
    pub entry: Option<(f64, Vec<C64>, bool)>,
    /// In the zone: `s = τ_end − τ` when it last halved, and the steps (accepted +
    /// rejected) taken by then.
    halved_s: f64,
    halved_at: u32,
    /// Endgame samples `(τ, y)`, oldest first (as [`crate::track::PathState`]'s).
    pub samples: Vec<(f64, Vec<C64>)>,
    /// The condition estimate at each sample (same order), for [`beyond_double`].
    pub sample_conds: Vec<f64>,
    /// The backend can compute this slot's residuals in double-double.
    dd_residuals: bool,
    /// Double-double mode (see the module's doc): Newton corrections with a double-double
    /// residual, since the slot went back to its oldest sample.
    pub dd: bool,
    /// Carrying a path heading to infinity past [`ZONE_COND`] (on the first pass,
    /// `TrackerOptions::slots_finish_diverging`; outside double-double mode): its estimate
    /// passed [`ZONE_COND`] at `s >` [`DD_ENTRY_S`] while the homogenizing coordinate's
    /// valuation between the last two samples was above `2·VALUATION_TOL`. The slot then
    /// goes on in double as the host tracker would (with no bound on the estimate, not even
    /// [`ZONE_COND_DD`]) and ends the path itself ([`EXIT_STOPPED`]): its step size
    /// underflows, it stalls, or the host's divergence rule ([`stable_divergence`]) or
    /// [`beyond_double`] ends it. Once the valuation is no longer positive, or at `τ_end`,
    /// the path goes to the host from its zone entry, as a path not carried does.
    pub carry: bool,
}

impl Slot {
    /// A path from its start point (`y` normalized unless `log`), with `accepted` and
    /// `rejected` steps already taken; `dd_residuals`: the backend computes the residuals
    /// that [`Slot::residual`] asks for in double-double.
    pub fn new(
        y: &[C64],
        tau: f64,
        log: bool,
        steps: (u32, u32),
        dd_residuals: bool,
        opts: &TrackerOptions,
    ) -> Slot {
        let nh = y.len();
        let mut y = y.to_vec();
        if !log {
            normalize(&mut y);
        }
        let zero = vec![C64::new(0.0, 0.0); nh];
        Slot {
            status: SLOT_ACTIVE,
            phase: 0,
            eval_y: y.clone(),
            eval_tau: tau,
            y,
            yc: zero.clone(),
            k: [zero.clone(), zero.clone(), zero.clone(), zero],
            tau,
            h: opts.h_initial.max(0.01 * tau.abs()),
            h_try: opts.h_initial,
            eta_first: 0.0,
            eta_prev: 0.0,
            cond: 1.0,
            accepted: steps.0,
            rejected: steps.1,
            log,
            entry: None,
            halved_s: f64::INFINITY,
            halved_at: 0,
            samples: Vec::new(),
            sample_conds: Vec::new(),
            dd_residuals,
            dd: false,
            carry: false,
        }
    }

    /// The precision of the residual at the next evaluation: double-double for the start
    /// refinement and the Newton corrections of double-double mode, else double (a
    /// Runge–Kutta stage needs only the Euler direction).
    pub fn residual(&self) -> Residual {
        if self.dd && !self.log && (self.phase < STAGE || self.phase >= CORRECT) {
            Residual::DoubleDouble
        } else {
            Residual::EulerOnly
        }
    }

    /// Enters double-double mode: back to the oldest endgame sample (where the host would
    /// have gone on from, `Snapshot::from_oldest_sample`), with the step size scaled by `s`,
    /// that sample as the only one and as the zone entry (the point a later hand-over and
    /// the double-double checkpoint go back to) when `s ≥ DD_CHECKPOINT_S`; the point is
    /// refined there first.
    fn enter_dd(&mut self, opts: &TrackerOptions) {
        let (tau0, y0) = self.samples[0].clone();
        let (s0, s) = (opts.tau_end - tau0, opts.tau_end - self.tau);
        if s > 0.0 {
            self.h *= s0 / s;
        }
        if s0 >= DD_CHECKPOINT_S {
            self.entry = Some((tau0, y0.clone(), false));
        }
        self.samples.truncate(1);
        self.sample_conds.truncate(1);
        self.y.copy_from_slice(&y0);
        self.eval_y.copy_from_slice(&y0);
        self.tau = tau0;
        self.eval_tau = tau0;
        self.halved_s = f64::INFINITY;
        self.dd = true;
        self.phase = 0;
    }

    fn target(&self, opts: &TrackerOptions) -> f64 {
        if self.tau < opts.endgame_tau {
            opts.endgame_tau
        } else {
            opts.tau_end
        }
    }

    fn steps(&self) -> u32 {
        self.accepted + self.rejected
    }

    fn begin_step(&mut self, opts: &TrackerOptions) {
        self.h_try = self.h.min(self.target(opts) - self.tau);
        self.phase = STAGE + 2;
        let c = 0.5 * self.h_try;
        for j in 0..self.y.len() {
            self.eval_y[j] = self.y[j] + self.k[0][j] * c;
        }
        self.eval_tau = self.tau + c;
    }

    /// Ends the path: stopped in the zone where the slot carries it, else handed back from
    /// its entry point once in the zone, failed before.
    fn stop(&mut self, reason: u8) {
        self.status = if self.carry {
            EXIT_STOPPED + reason
        } else if self.entry.is_some() {
            EXIT_HANDOFF
        } else {
            EXIT_FAILED + reason
        };
    }

    fn reject(&mut self, opts: &TrackerOptions, reason: u8) {
        self.rejected += 1;
        self.h = 0.5 * self.h_try;
        if self.h < opts.h_min * self.tau.abs().max(1.0) {
            if self.settled_in_dd(opts) {
                self.status = EXIT_STOPPED + reason;
                return;
            }
            return self.stop(reason);
        }
        if self.steps() >= opts.max_steps {
            return self.stop(F_STEPS);
        }
        self.begin_step(opts);
    }

    /// Consumes the directions at `(eval_y, eval_tau)`.
    pub fn advance(&mut self, euler: &[C64], newton: &[C64], cond: f64, opts: &TrackerOptions) {
        if self.status != SLOT_ACTIVE {
            return;
        }
        let ok = finite(euler) && finite(newton) && cond.is_finite();
        let nh = self.y.len();
        if self.phase < STAGE {
            let it = self.phase;
            if !ok {
                return self.stop(F_SINGULAR_START);
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
                self.stop(F_START);
            } else {
                self.phase = it + 1;
                self.eval_y.copy_from_slice(&self.y);
            }
            return;
        }
        if self.phase < CORRECT {
            if !ok {
                return self.reject(opts, F_NONFINITE_DIR);
            }
            let s = (self.phase - STAGE) as usize;
            self.k[s - 1].copy_from_slice(euler);
            let h = self.h_try;
            if s < 4 {
                let c = if s == 2 { 0.5 * h } else { h };
                for j in 0..nh {
                    self.eval_y[j] = self.y[j] + self.k[s - 1][j] * c;
                }
                self.eval_tau = self.tau + c;
                self.phase += 1;
            } else {
                let w = h / 6.0;
                for j in 0..nh {
                    self.yc[j] = self.y[j]
                        + (self.k[0][j] + (self.k[1][j] + self.k[2][j]) * 2.0 + self.k[3][j]) * w;
                }
                self.eval_y.copy_from_slice(&self.yc);
                self.eval_tau = self.tau + h;
                self.phase = CORRECT + 1;
            }
            return;
        }
        let it = self.phase - CORRECT;
        if !ok {
            return self.reject(opts, F_NONFINITE_NEWTON);
        }
        let eta = correction_size(newton, &self.yc, self.log, cond, opts.corrector_tol);
        let noise = NOISE_FACTOR * cond * f64::EPSILON;
        if it == 1 {
            self.eta_first = eta;
            if eta > opts.eta_max {
                return self.reject(opts, F_PREDICTOR);
            }
        } else if eta > 0.5 * self.eta_prev && eta > noise.max(STAGNATION_TOL) {
            return self.reject(opts, F_CONTRACT);
        }
        let stagnated = it >= 2 && eta > 0.5 * self.eta_prev && eta <= STAGNATION_TOL;
        let loose = regime(&self.yc, self.log, false, self.tau + self.h_try, opts) == Regime::Loose;
        let tol = opts.corrector_tol.max(noise);
        let converged = newton_converged(eta, self.eta_prev, it, tol, loose);
        self.eta_prev = eta;
        self.yc.iter_mut().zip(newton).for_each(|(a, b)| *a += b);
        if !(converged || stagnated) {
            if it >= opts.max_corrector_iters {
                return self.reject(opts, F_CONVERGE);
            }
            self.phase += 1;
            self.eval_y.copy_from_slice(&self.yc);
            return;
        }
        if overshoots_log_switch(&self.yc, self.log, self.tau + self.h_try, opts) {
            return self.reject(opts, F_OVERSHOOT);
        }
        // Accepted.
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
            self.tau = target;
        }
        let here = regime(&self.y, self.log, false, self.tau, opts);
        let zone = self.tau > opts.endgame_tau;
        let factor = step_factor(self.eta_first, here.eta_target(opts), noise, zone);
        let base = if clipped {
            self.h.max(self.h_try)
        } else {
            self.h_try
        };
        let cap = opts.h_max.max(opts.h_max_rel * self.tau.abs());
        // A carried path never steps to τ_end (at most half the way there): its steps double
        // while the Newton corrections are at the rounding level κ·ε (no double-double
        // residual in the slot tells a real correction from rounding), and such an arrival is
        // no endpoint to trust. It goes on sampling until the divergence rule, a stall or an
        // underflow ends it.
        let cap = if self.carry {
            cap.min(0.5 * (opts.tau_end - self.tau))
        } else {
            cap
        };
        self.h = (base * factor).min(cap);
        if self.tau >= opts.tau_end {
            if self.log {
                log_to_projective(&mut self.y);
                self.log = false;
            }
            // A carried path that gets to τ_end goes to the host from its zone entry, as
            // before the slots carried such paths: steps double while the Newton corrections
            // are at the rounding level κ·ε, and such an arrival is no endpoint to trust
            // (the slot's double-double mode took cyclic-12 seed 1's path 41176, heading to
            // infinity with valuation 1/3 down to s = 1e-8, to τ_end that way, and
            // post-processing called it a singular solution).
            self.status = if self.carry {
                EXIT_HANDOFF
            } else {
                EXIT_REACHED
            };
            return;
        }
        if switches_coordinates(&self.y, self.log, self.tau, self.cond, opts) {
            // New coordinates: refine there (phase 0) before the next step.
            switch_coordinates(&mut self.y, self.log);
            self.log = !self.log;
            self.phase = 0;
            self.eval_y.copy_from_slice(&self.y);
            self.eval_tau = self.tau;
            return;
        }
        if self.tau >= opts.endgame_tau {
            let s = opts.tau_end - self.tau;
            if self.entry.is_none() {
                self.entry = Some((self.tau, self.y.clone(), self.log));
            }
            if self.halved_s == f64::INFINITY || s <= 0.5 * self.halved_s {
                (self.halved_s, self.halved_at) = (s, self.steps());
            }
            let heading = self.heading_to_infinity(opts.tau_end);
            if self.carry && !heading {
                // No longer heading to infinity: the host tracker decides, from the zone
                // entry, as it did before the slots carried such paths.
                self.status = EXIT_HANDOFF;
                return;
            }
            self.carry = opts.slots_finish_diverging
                && !self.dd
                && heading
                && (self.carry || (self.cond > ZONE_COND && s > DD_ENTRY_S));
            let limit = if self.dd { ZONE_COND_DD } else { ZONE_COND };
            let stall = if heading {
                ZONE_STEPS_TO_INFINITY
            } else {
                ZONE_STEPS
            };
            let stalled = self.steps() - self.halved_at >= stall;
            if self.carry {
                // No bound on the condition estimate, as on the host. With the bound 1e13
                // (ZONE_COND_DD), cyclic-12's carried paths past it go back to the host,
                // which tracks them again from the zone entry only to stop them by an
                // underflow or the divergence rule and put them at infinity (seed 1, paths
                // 300432–300443).
                if stalled {
                    return self.stop(STOP_STALLED);
                }
            } else if self.cond > limit || stalled {
                let ill = self.cond > ZONE_COND && s <= DD_ENTRY_S;
                if ill && !self.dd && self.dd_residuals && !self.log && !self.samples.is_empty() {
                    return self.enter_dd(opts);
                }
                self.status = EXIT_HANDOFF;
                return;
            }
        }
        if self.tau > opts.endgame_tau {
            let s = opts.tau_end - self.tau;
            let due = match self.samples.last() {
                None => true,
                Some((t, _)) => (opts.tau_end - t) >= SAMPLE_RATIO * s,
            };
            if due {
                if self.samples.len() == MAX_SAMPLES {
                    self.samples.remove(0);
                    self.sample_conds.remove(0);
                }
                self.samples.push((self.tau, self.y.clone()));
                self.sample_conds.push(self.cond);
                if self.dd {
                    if stable_divergence(&self.samples, opts.tau_end).is_some() {
                        self.status = EXIT_DIVERGED;
                        return;
                    }
                } else if self.carry {
                    // The host tracker's rules, in its order.
                    if stable_divergence(&self.samples, opts.tau_end).is_some() {
                        return self.stop(STOP_DIVERGED);
                    }
                    if opts.stop_beyond_double && self.beyond_double(opts.tau_end) {
                        self.status = EXIT_BEYOND_DOUBLE;
                        return;
                    }
                } else {
                    if s <= DIVERGENCE_S && self.heading_to_infinity(opts.tau_end) {
                        if self.dd_residuals {
                            return self.enter_dd(opts);
                        }
                        self.status = EXIT_CONTINUE;
                        return;
                    }
                    if opts.stop_beyond_double && !self.log && self.beyond_double(opts.tau_end) {
                        self.status = EXIT_BEYOND_DOUBLE;
                        return;
                    }
                }
            }
        }
        if self.steps() >= opts.max_steps {
            return self.stop(F_STEPS);
        }
        self.begin_step(opts);
    }

    /// In projective coordinates, the homogenizing coordinate's valuation between the last
    /// two samples is above `2·VALUATION_TOL` (as `PathState::heading_to_infinity`).
    fn heading_to_infinity(&self, tau_end: f64) -> bool {
        !self.log && heading_to_infinity(&self.samples, tau_end)
    }

    /// In double-double mode on the first pass (`TrackerOptions::slots_finish_diverging`),
    /// in projective coordinates, with a settled valuation ([`settled_valuation`]): a
    /// step-size underflow ends the path here ([`EXIT_STOPPED`]).
    fn settled_in_dd(&self, opts: &TrackerOptions) -> bool {
        self.dd
            && opts.slots_finish_diverging
            && !self.log
            && settled_valuation(&self.samples, opts.tau_end).is_some()
    }

    /// True when [`beyond_double`] stops the path (its samples and their condition estimates).
    fn beyond_double(&self, tau_end: f64) -> bool {
        beyond_double_at(&self.samples, &self.sample_conds, tau_end).is_some()
    }

    /// What the host gets back from a slot that left (`status` not active), or, with
    /// `evict`, from an active one (tracked on from its oldest endgame sample in the zone,
    /// from where it is before).
    pub fn exit(&self, evict: bool, tau_end: f64) -> Option<SlotExit> {
        if self.status == SLOT_EMPTY || (self.status == SLOT_ACTIVE && !evict) {
            return None; // still tracking: nothing to copy
        }
        Snapshot {
            status: self.status,
            y: self.y.clone(),
            tau: self.tau,
            cond: self.cond,
            steps: (self.accepted, self.rejected),
            log: self.log,
            entry: self.entry.clone(),
            samples: self.samples.clone(),
            sample_conds: self.sample_conds.clone(),
            h: self.h,
        }
        .exit(evict, tau_end)
    }
}

/// A slot's state as the host reads it back (from the device: `backend::cuda::resident`).
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub status: u8,
    pub y: Vec<C64>,
    pub tau: f64,
    pub cond: f64,
    /// (accepted, rejected)
    pub steps: (u32, u32),
    pub log: bool,
    pub entry: Option<(f64, Vec<C64>, bool)>,
    pub samples: Vec<(f64, Vec<C64>)>,
    /// The condition estimate at each sample.
    pub sample_conds: Vec<f64>,
    /// The step size the slot would try next.
    pub h: f64,
}

impl Snapshot {
    /// See [`Slot::exit`].
    pub fn exit(self, evict: bool, tau_end: f64) -> Option<SlotExit> {
        let steps = self.steps;
        match self.status {
            EXIT_REACHED => Some(self.ended(TrackCode::Reached)),
            // An evicted path in the zone goes on from late in it, as a divergence
            // hand-over does: from its entry point, the host tracked chandra-12's 30–34
            // evicted paths' zones again (7–9 k steps, most of the host's tail).
            SLOT_ACTIVE if evict && self.entry.is_some() && !self.log => {
                Some(self.from_oldest_sample(tau_end))
            }
            SLOT_ACTIVE if evict => Some(self.continuation()),
            EXIT_HANDOFF => Some(self.continuation()),
            EXIT_CONTINUE => Some(self.from_oldest_sample(tau_end)),
            EXIT_DIVERGED => {
                let why = self.diverging_reason(tau_end);
                Some(self.ended(TrackCode::StoppedInEndgame(why)))
            }
            EXIT_BEYOND_DOUBLE => {
                let (v, k) = beyond_double_at(&self.samples, &self.sample_conds, tau_end)
                    .unwrap_or((f64::NAN, f64::NAN));
                let why = beyond_double_reason(v, k, tau_end - self.tau, self.cond);
                Some(self.ended(TrackCode::StoppedInEndgame(why)))
            }
            s if s >= EXIT_STOPPED => {
                let why = match s - EXIT_STOPPED {
                    STOP_STALLED => stalled_reason(tau_end - self.tau),
                    STOP_DIVERGED => self.diverging_reason(tau_end),
                    r => FAIL_REASONS
                        .get(r as usize)
                        .copied()
                        .unwrap_or("unknown stop code from the device")
                        .to_string(),
                };
                let checkpoint = self.late_checkpoint(tau_end);
                Some(self.ended_at(TrackCode::StoppedInEndgame(why), checkpoint))
            }
            s if s >= EXIT_FAILED => {
                let mut y = self.y;
                if self.log {
                    log_to_projective(&mut y);
                }
                let why = FAIL_REASONS
                    .get((s - EXIT_FAILED) as usize)
                    .copied()
                    .unwrap_or("unknown failure code from the device");
                Some(SlotExit::End {
                    y,
                    tau: self.tau,
                    cond: self.cond,
                    steps,
                    code: TrackCode::Failed(why.into()),
                    samples: Vec::new(),
                    checkpoint: None,
                })
            }
            _ => None,
        }
    }

    /// The host's reason for a path stopped as diverging, with the valuation of the last two
    /// samples.
    fn diverging_reason(&self, tau_end: f64) -> String {
        crate::track::path::diverging_reason(
            homogenizing_valuation(&self.samples, tau_end).unwrap_or(f64::NAN),
        )
    }

    /// The double-double checkpoint of a path the slot stopped late in the zone
    /// ([`EXIT_STOPPED`]), the host tracker's: its last point with `s ≥ DD_CHECKPOINT_S`
    /// (the point where it stopped, else its newest endgame sample there, else its zone
    /// entry). From the zone entry, a tracking in double-double would go over the whole
    /// zone again; from an earlier sample than the host's point, cyclic-12's paths at
    /// infinity were tracked in double-double until its pace limit (40 of 133 on paths
    /// 40000–41499, seed 1), where from the host's every start failed at once.
    fn late_checkpoint(&self, tau_end: f64) -> Option<(f64, Vec<C64>)> {
        if !self.log && tau_end - self.tau >= DD_CHECKPOINT_S {
            return Some((self.tau, self.y.clone()));
        }
        self.samples
            .iter()
            .rev()
            .find(|(t, _)| tau_end - t >= DD_CHECKPOINT_S)
            .cloned()
            .or_else(|| entry_checkpoint(self.entry.clone()))
    }

    /// The path ends here with `code`, its samples, and its zone entry as the double-double
    /// checkpoint.
    fn ended(self, code: TrackCode) -> SlotExit {
        let checkpoint = entry_checkpoint(self.entry.clone());
        self.ended_at(code, checkpoint)
    }

    /// [`Self::ended`] with the double-double checkpoint given.
    fn ended_at(self, code: TrackCode, checkpoint: Option<(f64, Vec<C64>)>) -> SlotExit {
        SlotExit::End {
            y: self.y,
            tau: self.tau,
            cond: self.cond,
            steps: self.steps,
            code,
            samples: self.samples,
            checkpoint,
        }
    }

    /// [`EXIT_CONTINUE`]: the host goes on from the oldest endgame sample the slot keeps
    /// (`s` 27–81 times the last one's, ~1e-7), not from the last point. Near the huge-norm
    /// solutions the slot's residual in double leaves errors up to `κ·ε`, and from its last
    /// point (s ≤ 1e-8) the GPU's chandra-12 re-tracked 4–8 paths per seed where the zone
    /// entry needed 0–2. The step size is the slot's, scaled by `s`; the point is the
    /// double-double checkpoint when `s ≥ DD_CHECKPOINT_S`, else the zone's entry point.
    fn from_oldest_sample(self, tau_end: f64) -> SlotExit {
        let (tau0, y0) = match self.samples.first() {
            Some(first) => first.clone(),
            None => (self.tau, self.y.clone()),
        };
        let (s0, s) = (tau_end - tau0, tau_end - self.tau);
        let h = if s > 0.0 { self.h * s0 / s } else { self.h };
        let checkpoint = if s0 >= DD_CHECKPOINT_S {
            Some((tau0, y0.clone()))
        } else {
            entry_checkpoint(self.entry)
        };
        SlotExit::Continue {
            y: y0.clone(),
            tau: tau0,
            log: self.log,
            steps: self.steps,
            samples: vec![(tau0, y0)],
            checkpoint,
            h: Some(h),
        }
    }

    /// [`EXIT_HANDOFF`] (and eviction before the zone): the host goes on from the zone
    /// entry (the point double-double mode went back to, in that mode), which is also the
    /// double-double checkpoint until the host's own steps at `s ≥ DD_CHECKPOINT_S` replace
    /// it. Without it a path handed over from double-double mode at `s ≈ 1e-8` had none,
    /// and one that stalled there was put at infinity by an estimate and re-tracked in
    /// recovery (chandra-12 seed 2's path 1426: recovery 0.17–0.19 s → 0.07–0.08 s on the
    /// H200).
    fn continuation(self) -> SlotExit {
        let checkpoint = entry_checkpoint(self.entry.clone());
        let (tau, y, log) = self.entry.unwrap_or((self.tau, self.y, self.log));
        SlotExit::Continue {
            y,
            tau,
            log,
            steps: self.steps,
            samples: Vec::new(),
            checkpoint,
            h: None,
        }
    }
}

/// [`beyond_double`] on endgame samples `(τ, y)` and the condition estimates `conds` at
/// them (same order).
fn beyond_double_at(
    samples: &[(f64, Vec<C64>)],
    conds: &[f64],
    tau_end: f64,
) -> Option<(f64, f64)> {
    let conds: Vec<(f64, f64)> = samples
        .iter()
        .zip(conds)
        .map(|((t, _), &c)| (tau_end - t, c))
        .collect();
    beyond_double(&conds, samples, tau_end)
}

/// A slot's zone entry `(τ, y, log)` as a double-double checkpoint: only in projective
/// coordinates.
fn entry_checkpoint(entry: Option<(f64, Vec<C64>, bool)>) -> Option<(f64, Vec<C64>)> {
    match entry {
        Some((t, y, false)) => Some((t, y)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(v: f64) -> Vec<C64> {
        vec![C64::new(v, 0.0), C64::new(1.0, 0.0)]
    }

    fn snapshot(status: u8) -> Snapshot {
        Snapshot {
            status,
            y: point(1e-9),
            tau: -3e-9,
            cond: 10.0,
            steps: (70, 5),
            log: false,
            entry: Some((-0.1, point(0.5), false)),
            // s = 8.1e-8, 2.7e-8, 9e-9, 3e-9
            samples: [8.1e-8, 2.7e-8, 9e-9, 3e-9]
                .iter()
                .map(|&s| (-s, point(s)))
                .collect(),
            sample_conds: vec![10.0; 4],
            h: 1e-10,
        }
    }

    /// A path stopped by the divergence rule goes on from its oldest sample, which is also
    /// its checkpoint when `s ≥ DD_CHECKPOINT_S`, with the step size scaled by `s`; a path
    /// handed back for trouble goes on from its zone entry, with neither.
    #[test]
    fn continuing_paths_keep_their_point_samples_and_checkpoint() {
        match snapshot(EXIT_CONTINUE).exit(false, 0.0) {
            Some(SlotExit::Continue {
                y,
                tau,
                steps,
                samples,
                checkpoint,
                h,
                ..
            }) => {
                assert_eq!((y.clone(), tau, steps), (point(8.1e-8), -8.1e-8, (70, 5)));
                assert!((h.unwrap() / 2.7e-9 - 1.0).abs() < 1e-12, "{h:?}");
                assert_eq!(samples, vec![(tau, y)]);
                assert_eq!(checkpoint, Some((-8.1e-8, point(8.1e-8))));
            }
            other => panic!("{other:?}"),
        }
        // τ_end = −7.5e-8: the oldest sample is at s = 6e-9, below DD_CHECKPOINT_S: the
        // checkpoint is the zone's entry
        match snapshot(EXIT_CONTINUE).exit(false, -7.5e-8) {
            Some(SlotExit::Continue { checkpoint, .. }) => {
                assert_eq!(checkpoint, Some((-0.1, point(0.5))))
            }
            other => panic!("{other:?}"),
        }
        match snapshot(EXIT_HANDOFF).exit(false, 0.0) {
            Some(SlotExit::Continue {
                y,
                tau,
                samples,
                checkpoint,
                h,
                ..
            }) => {
                assert_eq!((y, tau), (point(0.5), -0.1));
                assert!(samples.is_empty() && h.is_none());
                // the zone entry is the checkpoint until the host's own steps replace it
                assert_eq!(checkpoint, Some((-0.1, point(0.5))));
            }
            other => panic!("{other:?}"),
        }
    }

    /// Trouble in double-double mode hands the path over from the point the mode went back
    /// to, and that point stays its double-double checkpoint: the host goes on from
    /// `s ≈ 1e-8` and may take no step with `s ≥ DD_CHECKPOINT_S` (chandra-12 seed 2's path
    /// 1426 stalled at s = 7e-14 with no checkpoint, was put at infinity by an estimate and
    /// re-tracked in recovery; from this checkpoint the double-double tracker finishes it at
    /// its root of norm 1e7 in the first pass).
    #[test]
    fn hand_overs_from_double_double_mode_keep_their_checkpoint() {
        let opts = TrackerOptions::default();
        let n = 2;
        // the divergence rule: back to the oldest sample, s = 8.1e-8 ≥ DD_CHECKPOINT_S
        let mut s = diverging_slot(true, false);
        assert_eq!((s.status, s.dd, s.tau), (SLOT_ACTIVE, true, -8.1e-8));
        // a condition estimate above ZONE_COND_DD at the next correction: trouble
        s.phase = CORRECT + 1;
        s.yc = s.y.clone();
        s.h_try = 1e-9;
        s.advance(&zero(n), &zero(n), 2.0 * ZONE_COND_DD, &opts);
        assert_eq!(s.status, EXIT_HANDOFF);
        match s.exit(false, 0.0) {
            Some(SlotExit::Continue {
                y, tau, checkpoint, ..
            }) => {
                assert_eq!((y.clone(), tau), (far(8.1e-8), -8.1e-8));
                assert_eq!(checkpoint, Some((tau, y)));
            }
            other => panic!("{other:?}"),
        }
    }

    /// A slot in the endgame zone at `τ`, projective, whose next Newton correction (phase
    /// `CORRECT + 1`, a zero correction: converged) accepts a step of `h` to `τ + h`, with
    /// endgame samples at `s` = 8.1e-7 … (oldest first) and the zone entry at τ = −0.1.
    fn zone_slot(tau: f64, h: f64, samples: &[f64], dd_residuals: bool) -> Slot {
        zone_slot_with(tau, h, samples, dd_residuals, point)
    }

    fn zone_slot_with(
        tau: f64,
        h: f64,
        samples: &[f64],
        dd_residuals: bool,
        at: fn(f64) -> Vec<C64>,
    ) -> Slot {
        let opts = TrackerOptions::default();
        let mut s = Slot::new(&point(0.5), tau, false, (100, 4), dd_residuals, &opts);
        s.entry = Some((-0.1, point(0.5), false));
        s.samples = samples.iter().map(|&s| (-s, at(s))).collect();
        (s.h, s.h_try, s.phase) = (h, h, CORRECT + 1);
        s.yc = s.y.clone();
        (s.halved_s, s.halved_at) = (-tau, s.steps());
        s
    }

    fn zero(n: usize) -> Vec<C64> {
        vec![C64::new(0.0, 0.0); n]
    }

    /// A slot whose condition estimate exceeds `ZONE_COND` at `s ≤ DD_ENTRY_S` goes back to
    /// its oldest sample and on in double-double mode (refining there first, the sample
    /// its zone entry and only sample, the step size scaled by `s`); without double-double
    /// residuals, or earlier in the zone, it goes back to the host from its zone entry.
    #[test]
    fn ill_conditioned_slots_late_in_the_zone_go_on_in_double_double() {
        let opts = TrackerOptions::default();
        let (samples, n) = ([8.1e-7, 2.7e-7], 2);
        let mut s = zone_slot(-2e-7, 1e-7, &samples, true);
        assert_eq!(s.residual(), Residual::EulerOnly);
        s.advance(&zero(n), &zero(n), 2.0 * ZONE_COND, &opts);
        assert_eq!(s.status, SLOT_ACTIVE);
        assert!(s.dd);
        assert_eq!((s.tau, s.eval_tau, s.phase), (-8.1e-7, -8.1e-7, 0));
        assert_eq!(
            (s.y.clone(), s.eval_y.clone()),
            (point(8.1e-7), point(8.1e-7))
        );
        assert_eq!(s.entry, Some((-8.1e-7, point(8.1e-7), false)));
        assert_eq!(s.samples, vec![(-8.1e-7, point(8.1e-7))]);
        // the step size after the step (0.5–2 times 1e-7), scaled by 8.1e-7 / 1e-7
        assert!(
            s.h >= 0.5e-7 * 8.1 && s.h <= 2e-7 * 8.1 * (1.0 + 1e-12),
            "{}",
            s.h
        );
        // refinements and Newton corrections in double-double, Runge–Kutta stages not
        assert_eq!(s.residual(), Residual::DoubleDouble);
        s.phase = STAGE + 2;
        assert_eq!(s.residual(), Residual::EulerOnly);

        let mut host = zone_slot(-2e-7, 1e-7, &samples, false);
        host.advance(&zero(n), &zero(n), 2.0 * ZONE_COND, &opts);
        assert_eq!((host.status, host.dd), (EXIT_HANDOFF, false));
        let mut early = zone_slot(-2e-3, 1e-3, &[8.1e-3, 2.7e-3], true);
        early.advance(&zero(n), &zero(n), 2.0 * ZONE_COND, &opts);
        assert_eq!((early.status, early.dd), (EXIT_HANDOFF, false));
        // in double-double mode the bound is ZONE_COND_DD
        let mut dd = zone_slot(-2e-7, 1e-7, &samples, true);
        dd.dd = true;
        dd.advance(&zero(n), &zero(n), 2.0 * ZONE_COND, &opts);
        assert_eq!(dd.status, SLOT_ACTIVE);
        dd.advance(&zero(n), &zero(n), 2.0 * ZONE_COND_DD, &opts);
        assert_eq!(
            dd.status, SLOT_ACTIVE,
            "a Runge–Kutta stage tests no condition"
        );
    }

    /// `y = (1, s)`: the homogenizing coordinate has valuation 1.
    fn far(s: f64) -> Vec<C64> {
        vec![C64::new(1.0, 0.0), C64::new(s, 0.0)]
    }

    /// A slot on `far` at s = 1.2e-8 (samples at s = 8.1e-8, 2.7e-8, 9e-9), in
    /// double-double mode already when `in_dd`, after the step that lands at s = 3e-9, a new
    /// sample.
    fn diverging_slot(dd_residuals: bool, in_dd: bool) -> Slot {
        let samples = [8.1e-8, 2.7e-8, 9e-9 * 1.0001];
        let mut s = zone_slot_with(-1.2e-8, 9e-9, &samples, dd_residuals, far);
        s.dd = in_dd;
        s.yc = far(3e-9);
        s.advance(&zero(2), &zero(2), 10.0, &TrackerOptions::default());
        s
    }

    /// The divergence rule: a slot whose homogenizing coordinate still shrinks at
    /// `s ≤ DIVERGENCE_S` goes on in double-double mode from its oldest sample (the host
    /// from there without double-double residuals); in that mode three agreeing valuations
    /// end it as diverging, with its samples and the valuation in the reason.
    #[test]
    fn diverging_slots_go_on_in_double_double_and_end_by_the_hosts_rule() {
        let s = diverging_slot(true, false);
        assert_eq!(
            (s.status, s.dd, s.tau, s.phase),
            (SLOT_ACTIVE, true, -8.1e-8, 0)
        );
        assert_eq!(s.y, far(8.1e-8));
        let host = diverging_slot(false, false);
        assert_eq!((host.status, host.dd), (EXIT_CONTINUE, false));

        let dd = diverging_slot(true, true);
        assert_eq!(dd.status, EXIT_DIVERGED);
        match dd.exit(false, 0.0) {
            Some(SlotExit::End {
                code, samples, tau, ..
            }) => {
                assert!((tau + 3e-9).abs() < 1e-20, "{tau}");
                assert_eq!(samples.len(), 4);
                assert!(
                    matches!(&code, TrackCode::StoppedInEndgame(r) if r.starts_with("diverging (valuation 1.000")),
                    "{code:?}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    /// A slot on `far` at s = 1.2e-2 (samples at s = 2.7e-2 and 9e-3, condition estimates
    /// `κ(s)` there) after the step that lands at s = 3e-3 with `κ(3e-3)`, a new sample.
    fn fast_growing_slot(kappa: fn(f64) -> f64, opts: &TrackerOptions) -> Slot {
        let samples = [2.7e-2, 9e-3 * 1.0001];
        let mut s = zone_slot_with(-1.2e-2, 9e-3, &samples, true, far);
        s.sample_conds = samples.iter().map(|&s| kappa(s)).collect();
        s.yc = far(3e-3);
        s.advance(&zero(2), &zero(2), kappa(3e-3), opts);
        s
    }

    /// The host's rule `beyond_double` in the slot: heading to infinity (valuation 1) with
    /// κ ∼ s^−2, 2e5 at s = 3e-3, the path would pass 1/ε before s = 1e-8: it ends in its
    /// slot as diverging, with the host's reason; not in recovery rounds
    /// (`stop_beyond_double` off), nor when κ grows like 1/s.
    #[test]
    fn slots_stop_paths_beyond_double_precision_as_the_host_does() {
        let opts = TrackerOptions::default();
        let fast = fast_growing_slot(|s| 2e5 * (3e-3 / s).powi(2), &opts);
        assert_eq!(fast.status, EXIT_BEYOND_DOUBLE);
        assert_eq!(fast.sample_conds.len(), fast.samples.len());
        match fast.exit(false, 0.0) {
            Some(SlotExit::End { code, tau, .. }) => {
                assert!((tau + 3e-3).abs() < 1e-15, "{tau}");
                let TrackCode::StoppedInEndgame(why) = &code else {
                    panic!("{code:?}")
                };
                assert!(
                    why.starts_with("diverging (valuation 1.000; condition 2.0e5 at s = 3.0e-3")
                        && why.contains("s^-2.0: beyond double precision"),
                    "{why}"
                );
            }
            other => panic!("{other:?}"),
        }
        let recovery = fast_growing_slot(|s| 2e5 * (3e-3 / s).powi(2), &opts.tightened(1));
        assert_eq!(recovery.status, SLOT_ACTIVE);
        let slow = fast_growing_slot(|s| 2e5 * 3e-3 / s, &opts);
        assert_eq!(slow.status, SLOT_ACTIVE);
    }

    /// `ZONE_STEPS` steps in the zone without halving `s`: a slot heading to infinity
    /// (valuation 1 between its samples) goes on, up to `ZONE_STEPS_TO_INFINITY`; one that
    /// is not (valuation 0) goes back to the host.
    #[test]
    fn slots_heading_to_infinity_stall_at_the_hosts_limit() {
        let opts = TrackerOptions::default();
        let after = |at: fn(f64) -> Vec<C64>, since: u32| {
            let mut s = zone_slot_with(-2e-3, 1e-4, &[8.1e-3, 2.7e-3], true, at);
            s.halved_at = s.steps() + 1 - since;
            s.advance(&zero(2), &zero(2), 10.0, &opts);
            s
        };
        assert_eq!(after(far, ZONE_STEPS).status, SLOT_ACTIVE);
        assert_eq!(after(point, ZONE_STEPS).status, EXIT_HANDOFF);
        assert_eq!(after(far, ZONE_STEPS - 1).status, SLOT_ACTIVE);
        assert_eq!(after(point, ZONE_STEPS - 1).status, SLOT_ACTIVE);
        assert_eq!(after(far, ZONE_STEPS_TO_INFINITY).status, EXIT_HANDOFF);
    }

    /// A slot heading to infinity (valuation 1) whose condition estimate passes `ZONE_COND`
    /// at `s >` [`DD_ENTRY_S`] stays in its slot (carried) on the first pass; one that is
    /// not heading there (valuation 0), or in a recovery round, goes back to the host.
    #[test]
    fn slots_carry_paths_heading_to_infinity_past_zone_cond() {
        let opts = TrackerOptions::default();
        let after = |at: fn(f64) -> Vec<C64>, opts: &TrackerOptions| {
            let mut s = zone_slot_with(-2e-3, 1e-4, &[8.1e-3, 2.7e-3], true, at);
            s.advance(&zero(2), &zero(2), 2.0 * ZONE_COND, opts);
            s
        };
        let carried = after(far, &opts);
        assert_eq!((carried.status, carried.carry), (SLOT_ACTIVE, true));
        assert_eq!(after(point, &opts).status, EXIT_HANDOFF);
        assert_eq!(after(far, &opts.tightened(1)).status, EXIT_HANDOFF);
        // no bound on the estimate while carried, as on the host (not ZONE_COND_DD)
        let mut s = zone_slot_with(-2e-3, 1e-4, &[8.1e-3, 2.7e-3], true, far);
        s.carry = true;
        s.advance(&zero(2), &zero(2), 1e3 * ZONE_COND_DD, &opts);
        assert_eq!((s.status, s.carry), (SLOT_ACTIVE, true));
        // a carried slot's next step goes at most half the way to τ_end (its step size
        // doubles at the rounding level: 3e-3 from s = 5e-4, a jump to τ_end)
        let next_h = |carry: bool| {
            let mut s = zone_slot_with(-2e-3, 1.5e-3, &[8.1e-3, 2.7e-3], true, far);
            s.carry = carry;
            s.yc = far(5e-4);
            s.advance(&zero(2), &zero(2), 2.0 * ZONE_COND, &opts);
            assert_eq!((s.status, s.tau), (SLOT_ACTIVE, -5e-4));
            s.h
        };
        assert_eq!(next_h(true), 2.5e-4);
        assert_eq!(next_h(false), 3e-3);
    }

    /// `(status, code, checkpoint)` of a slot that ended, as the host gets it.
    fn ended(s: &Slot) -> (u8, TrackCode, Option<f64>) {
        match s.exit(false, 0.0) {
            Some(SlotExit::End {
                code, checkpoint, ..
            }) => (s.status, code, checkpoint.map(|(t, _)| t)),
            other => panic!("{other:?}"),
        }
    }

    /// A carried slot ends the path as the host tracker would, with the host's wording and
    /// its last point at `s ≥ DD_CHECKPOINT_S` as the double-double checkpoint (where it
    /// stopped, or its newest sample there): its step size underflows, it stalls, or the
    /// divergence rule ends it. It goes back to the host
    /// from its zone entry when it stops heading to infinity or gets to `τ_end` (the
    /// arrival of a path whose steps grew at the rounding level is no endpoint to trust).
    #[test]
    fn carried_slots_end_as_the_host_ends_them() {
        let opts = TrackerOptions::default();
        let carried = |at: fn(f64) -> Vec<C64>, tau: f64, h: f64, samples: &[f64]| {
            let mut s = zone_slot_with(tau, h, samples, true, at);
            s.carry = true;
            s
        };
        let underflow = |why: &str| TrackCode::StoppedInEndgame(why.to_string());
        // step size underflow
        let mut s = carried(far, -2e-3, 1e-4, &[8.1e-3, 2.7e-3]);
        s.stop(F_CONTRACT);
        let (status, code, checkpoint) = ended(&s);
        assert_eq!(status, EXIT_STOPPED + F_CONTRACT);
        assert_eq!(
            code,
            underflow("step size underflow (Newton did not contract)")
        );
        assert!(code.stopped_short());
        assert_eq!(checkpoint, Some(-2e-3));
        // stalled
        let mut s = carried(far, -2e-3, 1e-4, &[8.1e-3, 2.7e-3]);
        s.halved_at = s.steps() + 1 - ZONE_STEPS_TO_INFINITY;
        s.advance(&zero(2), &zero(2), 2.0 * ZONE_COND, &opts);
        let (status, code, _) = ended(&s);
        assert_eq!(status, EXIT_STOPPED + STOP_STALLED);
        assert_eq!(code, underflow("stalled (1000 steps at s = 1.9e-3)"));
        // the host's divergence rule (at s ≤ DIVERGENCE_S, no double-double mode)
        let mut s = carried(far, -1.2e-8, 9e-9, &[8.1e-8, 2.7e-8, 9e-9 * 1.0001]);
        s.yc = far(3e-9);
        s.advance(&zero(2), &zero(2), 2.0 * ZONE_COND, &opts);
        let (status, code, checkpoint) = ended(&s);
        assert_eq!((status, s.dd), (EXIT_STOPPED + STOP_DIVERGED, false));
        assert_eq!(code, underflow("diverging (valuation 1.000)"));
        assert!(!code.stopped_short());
        assert_eq!(checkpoint, Some(-2.7e-8));
        // no longer heading to infinity, or at τ_end: to the host from the zone entry
        let mut s = carried(point, -2e-3, 1e-4, &[8.1e-3, 2.7e-3]);
        s.advance(&zero(2), &zero(2), 2.0 * ZONE_COND, &opts);
        assert_eq!(s.status, EXIT_HANDOFF);
        let mut s = carried(far, -1e-9, 1e-9, &[8.1e-8, 2.7e-8]);
        s.advance(&zero(2), &zero(2), 2.0 * ZONE_COND, &opts);
        assert_eq!((s.status, s.tau), (EXIT_HANDOFF, 0.0));
        match s.exit(false, 0.0) {
            Some(SlotExit::Continue { tau, h, .. }) => assert_eq!((tau, h), (-0.1, None)),
            other => panic!("{other:?}"),
        }
    }

    /// `y = (1, s^{1/3})`: valuation 1/3, as cyclic-12's paths to its sets at infinity.
    fn third(s: f64) -> Vec<C64> {
        vec![C64::new(1.0, 0.0), C64::new(s.cbrt(), 0.0)]
    }

    /// `y = (1, s^v)` with `v` 0.2 above s = 5e-8 and 0.6 below: a valuation that has not
    /// settled.
    fn wandering(s: f64) -> Vec<C64> {
        let v = if s > 5e-8 { 0.2 } else { 0.6 };
        vec![C64::new(1.0, 0.0), C64::new(s.powf(v), 0.0)]
    }

    /// In double-double mode on the first pass, a step-size underflow ends the path in its
    /// slot when the valuation has settled (three estimates within 0.01), with the host's
    /// wording and the point where it stopped as the checkpoint; with a valuation still
    /// moving, outside double-double mode, or in a recovery round, the path goes to the
    /// host from where the mode went back to.
    #[test]
    fn settled_slots_in_double_double_end_at_an_underflow() {
        let opts = TrackerOptions::default();
        // at s = 2.5e-8, samples at s = 8.1e-7 … 3e-8; a predictor error above eta_max
        // rejects the step, and the halved step is below h_min
        let underflow = |at: fn(f64) -> Vec<C64>, dd: bool, opts: &TrackerOptions| {
            let samples = [8.1e-7, 2.7e-7, 9e-8, 3e-8];
            let mut s = zone_slot_with(-2.5e-8, 1.5e-14, &samples, true, at);
            s.entry = Some((-8.1e-7, at(8.1e-7), false));
            s.y = at(2.5e-8);
            s.dd = dd;
            s.advance(&zero(2), &[C64::new(1.0, 0.0); 2], 10.0, opts);
            s
        };
        let s = underflow(third, true, &opts);
        let (status, code, checkpoint) = ended(&s);
        assert_eq!(status, EXIT_STOPPED + F_PREDICTOR);
        assert_eq!(
            code,
            TrackCode::StoppedInEndgame(
                "step size underflow (predictor too far from the path)".into()
            )
        );
        assert!(code.stopped_short());
        assert_eq!(checkpoint, Some(-2.5e-8));
        assert_eq!(underflow(wandering, true, &opts).status, EXIT_HANDOFF);
        assert_eq!(underflow(third, false, &opts).status, EXIT_HANDOFF);
        let retrack = underflow(third, true, &opts.tightened(1));
        assert_eq!(retrack.status, EXIT_HANDOFF);
        match retrack.exit(false, 0.0) {
            Some(SlotExit::Continue { tau, .. }) => assert_eq!(tau, -8.1e-7),
            other => panic!("{other:?}"),
        }
    }

    /// A path evicted in the tail goes on from its oldest sample when it is in the zone
    /// (its zone is not tracked again), from where it is before the zone; a slot still
    /// tracking is not read back without `evict`.
    #[test]
    fn evicted_paths_go_on_from_late_in_the_zone() {
        assert!(snapshot(SLOT_ACTIVE).exit(false, 0.0).is_none());
        match snapshot(SLOT_ACTIVE).exit(true, 0.0) {
            Some(SlotExit::Continue {
                y,
                tau,
                samples,
                checkpoint,
                h,
                ..
            }) => {
                assert_eq!((y.clone(), tau), (point(8.1e-8), -8.1e-8));
                assert!((h.unwrap() / 2.7e-9 - 1.0).abs() < 1e-12, "{h:?}");
                assert_eq!(samples, vec![(tau, y)]);
                assert_eq!(checkpoint, Some((-8.1e-8, point(8.1e-8))));
            }
            other => panic!("{other:?}"),
        }
        let mut before_zone = snapshot(SLOT_ACTIVE);
        (before_zone.entry, before_zone.samples, before_zone.tau) = (None, Vec::new(), -3.0);
        match before_zone.exit(true, 0.0) {
            Some(SlotExit::Continue {
                y,
                tau,
                samples,
                checkpoint,
                h,
                ..
            }) => {
                assert_eq!((y, tau), (point(1e-9), -3.0));
                assert!(samples.is_empty() && checkpoint.is_none() && h.is_none());
            }
            other => panic!("{other:?}"),
        }
    }
}
