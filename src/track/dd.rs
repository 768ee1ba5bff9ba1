//! Tracking the last stretch of a path, near t = 1, in double-double.
//!
//! A path towards a nonsingular solution of condition κ passes a branch point of the
//! homotopy within about 1/κ of t = 1 (a perturbation of relative size 1/κ makes the
//! solution a double root). Chandra-n's solutions of norm 1e7–1e8 have κ ≈ 1e10–1e18: their
//! paths still move by O(1) at s = −τ ≈ 1e-13, where a double Jacobian (error κ·ε) and
//! double coefficients `e^{τω}` (which resolve s only to ~1e-16 relative to 1) no longer
//! resolve them, so the double tracker's steps underflow there, outside Newton's basin.
//! Here the same predictor–corrector runs on one path with every quantity in double-double
//! ([`DdHomotopy`]: values, Jacobian, `∂H/∂τ`, `e^{τω}`; LU with partial pivoting), from a
//! point the double tracker saved while it was still reliable ([`DD_CHECKPOINT_S`]) to
//! τ = 0:
//!
//! * the start point is refined by Newton at its τ;
//! * predictor: classical RK4 on `dy/dτ = E(y, τ)`, `[∂H/∂y; y*] E = [−∂H/∂τ; 0]`;
//! * corrector: Newton `[∂H/∂y; y*] N = [−H; 0]` at the new τ, at most
//!   [`DD_CORRECTOR_ITERS`] iterations, each at most half the last, converged below
//!   [`DD_CORRECTOR_TOL`] (or stalled below [`DD_NOISE`], the rounding level κ·1e-32 of an
//!   ill-conditioned point); rejected (h halved) when the first correction exceeds
//!   [`DD_ETA_MAX`];
//! * step size: `h·clamp(0.9 (η_target/η₁)^{1/5}, ½, 2)` with `η_target` =
//!   [`DD_ETA_TARGET`], the last step landing on τ = 0; the path stops when `h` falls below
//!   [`DD_H_MIN_REL`]·|τ| (τ itself is a double), after [`DD_MAX_STEPS`] steps, or (on the
//!   first pass) when [`DD_PACE_STEPS`] steps shrank `s` less than [`DD_PACE_SHRINK`]-fold.
//!
//! Deterministic: the same start point gives the same result.

use crate::eval::dd::dd_norm;
use crate::eval::dd::{Cdd, Dd};
use crate::eval::dd_homotopy::{DdHomotopy, DdValues};
use num_complex::Complex64 as C64;

/// The double tracker keeps its last point with `s = −τ ≥` this as the start of a tracking
/// in double-double (measured on chandra-10/11: the condition estimate is below 1e8 there
/// and the paths that stall do so at s ≈ 1e-14…1e-11).
pub const DD_CHECKPOINT_S: f64 = 1e-8;
/// Target size of the first Newton correction (predictor error), relative to ‖y‖ = 1.
/// Not 1e-8: with 1e-6 the endpoints of chandra-12 (seeds 1–3), chandra-13 (seeds 1–2) and
/// chandra-14 (seed 1) are the same path for path (to 5e-14), and the CPU backend takes
/// 10–30 % less time on them (chandra-13 seed 1: 32.5 → 23.8 s on two cores); with 1e-8
/// these trackings take as much CPU time as the host's own steps.
pub const DD_ETA_TARGET: f64 = 1e-6;
/// ... in the recovery rounds from the second on: the end of a first tracking near
/// chandra-14's clusters of huge-norm solutions (κ ≥ 1e16) is off their Newton basins.
/// Not in the first round: with [`DD_ETA_TARGET`] there rather than this, every endpoint of
/// chandra-12 (seeds 1–3), chandra-13 (seeds 1–2) and chandra-14 (seed 1) is the same path
/// for path, with the same recoveries, and chandra-12 seed 3's paths take 1,706
/// double-double steps in all instead of 2,671 (CPU backend).
pub const DD_ETA_TARGET_RETRACK: f64 = 1e-10;
/// A step whose first correction exceeds this is rejected.
pub const DD_ETA_MAX: f64 = 1e-5;
/// Newton converged when a correction is below this: what it leaves is about ω·η² (ω
/// Newton's quadratic constant), far below the next step's predictor error
/// ([`DD_ETA_TARGET`]), and the end at t = 1 is refined by Newton anyway. Not 1e-20, which
/// takes one more solve per step: chandra-14 (CPU, seed 1) gives the same statuses with
/// 1e-15, coordinates within 6.6e-14, 936 tails in 99,589 steps instead of 112,317
/// (chandra-13: 478 tails, 55,435 → 49,182; chandra-12 seeds 1–3: 2,048 each).
pub const DD_CORRECTOR_TOL: f64 = 1e-15;
/// A correction below this that does not halve is the rounding level `κ·1e-32`: converged.
/// Chandra-14/15's roots of norm 2e9–4e9 have κ ≈ 1e19 there: at 1e-13 the corrector takes
/// their noise (first corrections 6e-14–2e-13 that do not halve) for divergence, halves the
/// step down to 1e-29 at s = 9.3e-18 and gives up (chandra-15 seed 1: 5 paths put at
/// infinity, 3 of them then ending on their missing roots).
pub const DD_NOISE: f64 = 1e-11;
/// Newton iterations per step.
pub const DD_CORRECTOR_ITERS: u32 = 4;
/// Newton iterations to refine the start point.
pub const DD_REFINE_ITERS: u32 = 8;
/// Smallest step relative to |τ|: τ is a double, resolved to ~1e-16·|τ|.
pub const DD_H_MIN_REL: f64 = 1e-12;
/// Steps (accepted + rejected) before giving up.
pub const DD_MAX_STEPS: u32 = 4000;
/// With `pace` (the first pass), a tracking gives up when `s = τ_end − τ` has shrunk less
/// than [`DD_PACE_SHRINK`]-fold over the last this many steps: a path still crawling there
/// is not approaching a nonsingular endpoint of huge norm, whose trackings take 77–241
/// steps in all (chandra-12, chandra-13, seed 1). Without it, cyclic-12's paths towards its
/// positive-dimensional sets at infinity (valuation 0.66, κ ≈ 4e12 at s = 2e-8) take steps
/// of ~s/300 until [`DD_MAX_STEPS`], 4,000 steps from s = 3e-8 to 3e-13, and are put at
/// infinity by their valuation all the same; about 3 % of its paths, and on the GPU the
/// host's tail of the run.
///
/// Not 400 steps and 100-fold: with those, on the GPU, cyclic-12's (seed 1) 34,875 paths
/// stopped by a step-size underflow took 3,046 double-double evaluations each in their
/// refinement, 815 of the 1,318 CPU seconds of its refinement threads, each crawling to
/// the end of its first window (path 325: `s` from 2.7e-8 to 1.4e-9 in 400 steps, 2.1-fold
/// per 100). The same rate over a quarter of the window (100 steps, `100^{1/4}` ≈ 3.2-fold,
/// here 3) gives them up four times sooner, while a tracking to a huge-norm root covers
/// its 8 or more decades of `s` in 77–241 steps. Not shorter: 50 steps at 1.75-fold gave
/// up two of chandra-14's tails (seed 1, paths 3721 and 4904, slowed to ~1.3-fold per 50
/// steps near s = 1e-12) that 100 steps let through.
pub const DD_PACE_STEPS: u32 = 100;
/// See [`DD_PACE_STEPS`].
pub const DD_PACE_SHRINK: f64 = 3.0;

/// How a tracking in double-double ended.
#[derive(Clone, Debug)]
pub struct DdTrackEnd {
    /// Unit-norm homogeneous coordinates at `tau` (rounded).
    pub y: Vec<C64>,
    /// The same unrounded, at the tracker's scale (‖y‖ = 1 up to rounding: every accepted
    /// point is normalized).
    pub y_dd: Vec<Cdd>,
    pub tau: f64,
    /// τ = 0 reached.
    pub reached: bool,
    pub accepted: u32,
    pub rejected: u32,
    /// Why it stopped short (empty when `reached`).
    pub reason: String,
    /// Points `(τ, unit-norm y)` where a tracker with an endgame can go on
    /// (`post::bridge`), once the tracking got [`HANDOVER_SHRINK`] times closer to
    /// `tau_end` than its start: the first accepted point there (past the trouble that
    /// stopped the double tracker, and as far from t = 1 as can be), then the last accepted
    /// one short of `tau_end` (as far as double-double got). Empty before that.
    pub handover: Vec<(f64, Vec<C64>)>,
}

/// See [`DdTrackEnd::handover`].
pub const HANDOVER_SHRINK: f64 = 10.0;

/// One path's state: the point, its Euler direction, the buffers.
struct DdPath<'a> {
    hom: &'a DdHomotopy,
    lifts: Option<&'a [f64]>,
    v: DdValues,
    euler: Vec<Cdd>,
    newton: Vec<Cdd>,
}

impl DdPath<'_> {
    /// Euler direction and Newton step at `(y, τ)` on the patch `y*·Δ = 0` (‖y‖ = 1 up to
    /// rounding); false when the evaluation or the solve fails.
    fn directions(&mut self, y: &[Cdd], tau: f64) -> bool {
        let patch: Vec<Cdd> = y.iter().map(|z| z.conj()).collect();
        self.hom.eval(y, tau, self.lifts, &mut self.v)
            && self
                .v
                .solve(&patch, Cdd::ZERO, true, &mut self.newton, &mut self.euler)
            && self
                .newton
                .iter()
                .chain(&self.euler)
                .all(|z| z.to_c64().norm().is_finite())
    }

    /// Newton at τ from `y` (updated in place, normalized): at most `iters` corrections,
    /// each at most half the last; returns the first correction on convergence, `None` when
    /// it did not converge. The Euler direction of the last solve is left in `self.euler`.
    fn correct(&mut self, y: &mut [Cdd], tau: f64, iters: u32) -> Option<f64> {
        let (mut first, mut last) = (f64::NAN, f64::INFINITY);
        for it in 0..iters {
            if !self.directions(y, tau) {
                return None;
            }
            let eta = dd_norm(&self.newton);
            if it == 0 {
                first = eta;
            } else if eta > 0.5 * last && eta > DD_NOISE {
                return None;
            }
            for (a, b) in y.iter_mut().zip(&self.newton) {
                *a = a.add(*b);
            }
            normalize(y);
            if eta <= DD_CORRECTOR_TOL || (it > 0 && eta > 0.5 * last) {
                // Converged, or stalled at the rounding level: the Euler direction of this
                // solve, at the point before its correction (≤ DD_CORRECTOR_TOL, or the
                // rounding level ≤ DD_NOISE), is the next step's first RK4 stage; evaluating again
                // at the corrected point was a seventh of the tracking's solves.
                return Some(first);
            }
            last = eta;
        }
        None
    }
}

/// `y / ‖y‖` in double-double (the norm rounded to double is exact enough for a scale).
fn normalize(y: &mut [Cdd]) {
    let s = dd_norm(y);
    if s > 0.0 && s.is_finite() {
        let inv = Dd::from(1.0).div_f64(s);
        y.iter_mut().for_each(|z| *z = z.mul_real(inv));
    }
}

/// Tracks the path through `(y0, tau0)` (any scale) to `tau_end` in double-double;
/// `lifts`: the path's own lift row, else the homotopy's; `eta_target`: the target size of
/// the first Newton correction ([`DD_ETA_TARGET`], or less when re-tracking); `pace`: give
/// up on a path that crawls ([`DD_PACE_STEPS`]).
pub fn track_near_one(
    hom: &DdHomotopy,
    lifts: Option<&[f64]>,
    y0: &[C64],
    tau0: f64,
    tau_end: f64,
    eta_target: f64,
    pace: bool,
) -> DdTrackEnd {
    let nh = hom.nh();
    let mut y: Vec<Cdd> = y0.iter().map(|&z| Cdd::from(z)).collect();
    normalize(&mut y);
    let mut p = DdPath {
        hom,
        lifts,
        v: hom.values(),
        euler: vec![Cdd::ZERO; nh],
        newton: vec![Cdd::ZERO; nh],
    };
    let (mut tau, mut accepted, mut rejected) = (tau0, 0u32, 0u32);
    let rounded = |y: &[Cdd]| -> Vec<C64> {
        let mut r: Vec<C64> = y.iter().map(|z| z.to_c64()).collect();
        let s = r.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        r.iter_mut().for_each(|z| *z /= s);
        r
    };
    // Past the trouble: ten times closer to `tau_end` than the start ([`DdTrackEnd::handover`]).
    let past = |tau: f64| tau < tau_end && (tau_end - tau) * HANDOVER_SHRINK <= tau_end - tau0;
    // The first accepted point past it, and the one a landing on `tau_end` left.
    let mut first_past: Option<(f64, Vec<C64>)> = None;
    let mut before_end: Option<(f64, Vec<C64>)> = None;
    // A tracking that stops short ends at its last accepted point, `(y, tau)` itself.
    let end = |y: &[Cdd], tau: f64, accepted, rejected, reason: &str, first_past, before_end| {
        let last = if reason.is_empty() {
            before_end
        } else {
            past(tau).then(|| (tau, rounded(y)))
        };
        let mut handover: Vec<(f64, Vec<C64>)> = Vec::from_iter(first_past);
        handover.extend(last.filter(|l| handover.first().is_none_or(|f| f.0 != l.0)));
        DdTrackEnd {
            y: rounded(y),
            y_dd: y.to_vec(),
            tau,
            reached: reason.is_empty(),
            accepted,
            rejected,
            reason: reason.to_string(),
            handover,
        }
    };
    if p.correct(&mut y, tau, DD_REFINE_ITERS).is_none() {
        return end(
            &y,
            tau,
            0,
            0,
            "start point did not converge in double-double",
            None,
            None,
        );
    }
    let mut h = 0.1 * (tau_end - tau);
    let mut k: [Vec<Cdd>; 4] = std::array::from_fn(|_| vec![Cdd::ZERO; nh]);
    k[0].copy_from_slice(&p.euler);
    let mut stage = vec![Cdd::ZERO; nh];
    // `s` when the current window of DD_PACE_STEPS steps began.
    let mut window_s = tau_end - tau;
    while tau < tau_end {
        if pace && accepted + rejected > 0 && (accepted + rejected) % DD_PACE_STEPS == 0 {
            let s = tau_end - tau;
            if s * DD_PACE_SHRINK > window_s {
                let why = format!(
                    "double-double steps too slow: s from {window_s:.1e} to {s:.1e} in \
                     {DD_PACE_STEPS} steps"
                );
                return end(&y, tau, accepted, rejected, &why, first_past, None);
            }
            window_s = s;
        }
        if accepted + rejected >= DD_MAX_STEPS {
            return end(
                &y,
                tau,
                accepted,
                rejected,
                "too many steps in double-double",
                first_past,
                None,
            );
        }
        if h < DD_H_MIN_REL * tau.abs() {
            return end(
                &y,
                tau,
                accepted,
                rejected,
                "step size underflow in double-double",
                first_past,
                None,
            );
        }
        let h_try = h.min(tau_end - tau);
        // RK4 on dy/dτ = E(y, τ); k1 is the Euler direction at the accepted point.
        let mut ok = true;
        for (s, c) in [(1usize, 0.5), (2, 0.5), (3, 1.0)] {
            let w = Dd::from(c * h_try);
            for j in 0..nh {
                stage[j] = y[j].add(k[s - 1][j].mul_real(w));
            }
            if !p.directions(&stage, tau + c * h_try) {
                ok = false;
                break;
            }
            k[s].copy_from_slice(&p.euler);
        }
        let tau_new = if h_try == tau_end - tau {
            tau_end
        } else {
            tau + h_try
        };
        let mut yc = y.clone();
        let first = ok
            .then(|| {
                let w = Dd::from(h_try / 6.0);
                for j in 0..nh {
                    let sum = k[0][j].add(k[1][j].add(k[2][j]).mul_real(Dd::from(2.0)));
                    yc[j] = y[j].add(sum.add(k[3][j]).mul_real(w));
                }
                p.correct(&mut yc, tau_new, DD_CORRECTOR_ITERS)
            })
            .flatten();
        match first {
            Some(eta) if eta <= DD_ETA_MAX => {
                accepted += 1;
                if tau_new == tau_end && past(tau) {
                    before_end = Some((tau, rounded(&y)));
                }
                y = yc;
                tau = tau_new;
                if first_past.is_none() && past(tau) {
                    first_past = Some((tau, rounded(&y)));
                }
                let factor = (0.9 * (eta_target / eta.max(1e-300)).powf(0.2)).clamp(0.5, 2.0);
                h = h_try * factor;
                k[0].copy_from_slice(&p.euler);
            }
            _ => {
                rejected += 1;
                h = 0.5 * h_try;
            }
        }
    }
    end(&y, tau, accepted, rejected, "", first_past, before_end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::homotopy::Homotopy;

    /// The large root `x ≈ −1/a` of `a·x² + x − 1`.
    fn large_root(a: C64) -> C64 {
        let one = C64::new(1.0, 0.0);
        (-one - (one + 4.0 * a).sqrt()) / (2.0 * a)
    }

    /// `h` (one equation `a(t)·x² + x − 1`, `a` its x² coefficient at τ₀ = −1e-6) tracked in
    /// double-double from its large root at τ₀ to τ = 0; the end and its `x`.
    fn track_large_root(h: &Homotopy, a_at_tau0: C64) -> (DdTrackEnd, C64) {
        let dd = DdHomotopy::new(h).expect("polynomial");
        let x0 = large_root(a_at_tau0);
        let y0 = [x0 / x0.norm(), C64::new(1.0, 0.0) / x0.norm()];
        let end = track_near_one(&dd, None, &y0, -1e-6, 0.0, DD_ETA_TARGET, true);
        assert!(end.reached, "{}", end.reason);
        assert_eq!(end.tau, 0.0);
        let x = end.y[0] / end.y[1];
        (end, x)
    }

    /// `a(t)·x² + x − 1` with `a(t) = (1 − t) + ε·t²` (columns `x²·e^{0τ}`, `−x²·e^{τ}`,
    /// `ε·x²·e^{2τ}`: no coefficient is rounded, so `a(1) = ε` exactly): the large root
    /// `x ≈ −1/a(t)` reaches norm 1e12 at t = 1 (`y_n` ≈ 1e-12 projectively). Tracked from
    /// s = 1e-6 in double-double, the endpoint is the root of `εx² + x − 1` to full double
    /// accuracy.
    #[test]
    fn reaches_a_root_of_huge_norm_to_full_accuracy() {
        let eps = 1e-12;
        let one = C64::new(1.0, 0.0);
        let h = Homotopy::from_affine_terms(
            1,
            vec![vec![
                (one, vec![2], 0.0),
                (-one, vec![2], 1.0),
                (C64::new(eps, 0.0), vec![2], 2.0),
                (one, vec![1], 0.0),
                (-one, vec![0], 0.0),
            ]],
        );
        let t = (-1e-6f64).exp();
        let (end, x) = track_large_root(&h, C64::new((1.0 - t) + eps * t * t, 0.0));
        let exact = large_root(C64::new(eps, 0.0));
        assert!(((x - exact) / exact).norm() < 1e-14, "{x} vs {exact}");
        assert!(end.accepted < 200, "{} steps", end.accepted);
    }

    /// As above with the polyhedral homotopy's two columns per coefficient: `r·x²·e^{0τ}` and
    /// `(ε − r)·x²·e^{τ}` with a random complex `r`, so that `a(1) = ε` only if the merged
    /// contributions `ε` and `−r` are kept exactly (`HomTerm::coeff_lo`). Rounded to one
    /// double, `ε − r` makes `a(1) = ε + O(1e-16)` and the endpoint's `x ≈ −1/a` is off by
    /// ~1e-4 relative: tracked exactly to t = 1, the path still ends at no root of the target.
    #[test]
    fn merged_coefficients_are_exact_at_t_equal_to_one() {
        let eps = 1e-12;
        let one = C64::new(1.0, 0.0);
        let r = C64::new(0.731_594_018_3, 0.412_709_325_7);
        let h = Homotopy::from_affine_terms(
            1,
            vec![vec![
                (r, vec![2], 0.0),
                (C64::new(eps, 0.0), vec![2], 1.0),
                (-r, vec![2], 1.0),
                (one, vec![1], 0.0),
                (-one, vec![0], 0.0),
            ]],
        );
        // The lift-1 column is one term whose double coefficient is rounded.
        let merged = &h.equations[0][1];
        assert_eq!(merged.coeff, C64::new(eps, 0.0) - r);
        assert!(merged.coeff_lo != C64::new(0.0, 0.0));
        let t = (-1e-6f64).exp();
        let (_, x) = track_large_root(&h, r * (1.0 - t) + eps * t);
        let exact = large_root(C64::new(eps, 0.0));
        assert!(((x - exact) / exact).norm() < 1e-12, "{x} vs {exact}");
    }

    /// A path to a root of condition κ ≈ 1e20, whose Newton corrections in double-double
    /// stay at the rounding level κ·1e-32 ≈ 1e-12 instead of halving (chandra-14/15's roots
    /// of norm 2e9–4e9, κ ≈ 1e19): `x + y − 2`, `x + (1+ε)y − (2 + 2ε) + ε·t` with ε = 1e-20
    /// (merged columns, exact in double-double), solution `(t, 2 − t)`. The corrector must
    /// take that noise for convergence ([`DD_NOISE`]): with the threshold at 1e-13 it takes
    /// it for a failure to converge, here at the start point already ("start point did not
    /// converge"; chandra's paths, whose condition grows along the path, meet it mid-path,
    /// their steps halved to underflow).
    #[test]
    fn tracks_to_a_root_whose_corrections_are_rounding_noise() {
        let eps = 1e-20;
        let one = C64::new(1.0, 0.0);
        let c = |v: f64| C64::new(v, 0.0);
        let h = Homotopy::from_affine_terms(
            2,
            vec![
                vec![
                    (one, vec![1, 0], 0.0),
                    (one, vec![0, 1], 0.0),
                    (c(-2.0), vec![0, 0], 0.0),
                ],
                vec![
                    (one, vec![1, 0], 0.0),
                    (one, vec![0, 1], 0.0),
                    (c(eps), vec![0, 1], 0.0),
                    (c(-2.0), vec![0, 0], 0.0),
                    (c(-2.0 * eps), vec![0, 0], 0.0),
                    (c(eps), vec![0, 0], 1.0),
                ],
            ],
        );
        let dd = DdHomotopy::new(&h).expect("polynomial");
        let tau0 = -1e-6f64;
        let t0 = tau0.exp();
        let y0 = [c(t0), c(2.0 - t0), one]; // normalized by `track_near_one`
        let end = track_near_one(&dd, None, &y0, tau0, 0.0, DD_ETA_TARGET, true);
        assert!(end.reached, "{}", end.reason);
        let (x, y) = (end.y[0] / end.y[2], end.y[1] / end.y[2]);
        // κ·1e-32 ≈ 1e-12 is as close as double-double determines the root.
        assert!(
            (x - one).norm() < 1e-9 && (y - one).norm() < 1e-9,
            "({x}, {y})"
        );
    }
}
