//! Newton's method at t = 1 entirely in double-double: values, Jacobian and the linear solve.
//!
//! A nonsingular solution of condition number κ is the end of a path that passes a branch
//! point of the homotopy within about 1/κ of t = 1 (a perturbation of relative size 1/κ makes
//! it a double root). Chandra-11's solutions of norm 1e7 have κ ≈ 1e14–1e15: the tracker's
//! steps underflow at s ≈ 1e-14 while the path still moves by O(1) (in the homogenizing
//! coordinate's logarithm), and Newton with a double Jacobian and a double-double residual
//! (mixed-precision iterative refinement) contracts only by κ·ε per step, not at all beyond
//! κ ≈ 1e15. Here every quantity is double-double, so Newton converges quadratically for κ up
//! to ~1e28, and the affine coordinates `x = y/y_n` of a solution of huge norm come out to
//! full double accuracy.
//!
//! Projective Newton on the fixed patch `ℓ·y = 1` (`ℓ = conj(y₀)`, `‖y₀‖ = 1`): the square
//! system `[∂F/∂y; ℓ] Δ = [−F(y); 1 − ℓ·y]` ([`DdValues::solve`](crate::eval::dd_homotopy::DdValues::solve)).

use crate::eval::dd::{dd_norm, Cdd};
use crate::eval::dd_homotopy::DdHomotopy;
use crate::homotopy::Homotopy;
use num_complex::Complex64 as C64;

/// Newton stops once a correction (relative to `‖y‖`) is below this.
pub const DD_STEP_TOL: f64 = 1e-28;
/// Quadratic convergence is proven by a correction below this that is at most
/// [`DD_QUADRATIC_RATIO`] times the one before: a singular root converges linearly (ratio
/// `1 − 1/m` for multiplicity m) down to its rounding level near `√ε_dd ≈ 1e-16`, far below
/// this. A nonsingular one of condition κ ends at about `κ·1e-32` (1e-20 on chandra-11:
/// 4e-7 → 4e-14 → 5e-21; a chandra-12 solution of norm 6e8 has κ ≈ 3e18).
pub const DD_CONVERGED: f64 = 1e-12;
/// See [`DD_CONVERGED`].
pub const DD_QUADRATIC_RATIO: f64 = 1e-3;
/// A point whose `[∂F/∂y; ℓ]` has a condition estimate in double-double
/// ([`DdNewton::cond_dd`]) at least this is not proven nonsingular, however Newton ended:
/// double-double resolves such a root only to κ·1e-32 ≥ 1e-7. Chandra-13's 4,096 roots
/// (seed 1) reach 1e19; a point of cyclic-8's curve where Newton happened to stop after a
/// quadratic drop, 4.5e26.
pub const DD_SINGULAR_COND: f64 = 1e25;
/// Iterations allowed (a start point 0.3 away from its solution took 8 on chandra-11).
pub const DD_MAX_ITERS: usize = 24;

/// A correction larger than this (relative to `‖y‖`) ends Newton: the start point was not in
/// a basin (chandra-11's far start points take corrections up to 1.4 on their way in).
pub const DD_MAX_STEP: f64 = 10.0;

/// Nothing more to gain: after 16 corrections still above 1e-8 (a chandra-12 path stopped
/// at |y_n| = 1.5e-6 needed 13 to reach its solution), or two corrections in a row below
/// 1e-14 that did not shrink by a third (the rounding level reached). Larger corrections
/// may stall for a while where the start is off in a tiny coordinate: the solutions
/// `(±1e10, ±1)` of `x − 1e10·y, y² − 1`, reached with `y_n` 3–9× too large and rotated
/// (‖y‖ = 1), take corrections like 4.7e-10, 2.4e-10, 1.3e-10, 1.0e-10, 3.3e-10, … (Newton
/// for a square root from afar) before converging quadratically. A double root, whose rate stays 1/2, runs to [`DD_MAX_ITERS`]
/// and is never "converged".
fn stalled(steps: &[f64]) -> bool {
    let k = steps.len();
    let flat = |i: usize| steps[i] < 1e-14 && steps[i] > STALL_RATIO * steps[i - 1];
    // No correction of the last WANDER_RUN came within WANDER_GAIN of the smallest before
    // them (and they are not at the rounding level).
    let wander = k >= 2 * WANDER_RUN && steps[k - 1] > 1e-8 && {
        let before = steps[..k - WANDER_RUN]
            .iter()
            .fold(f64::INFINITY, |m, &v| m.min(v));
        steps[k - WANDER_RUN..]
            .iter()
            .all(|&v| v > WANDER_GAIN * before)
    };
    wander || (k >= 16 && steps[k - 1] > 1e-8) || (k >= 3 && flat(k - 1) && flat(k - 2))
}

/// See [`stalled`].
const STALL_RATIO: f64 = 2.0 / 3.0;

/// Newton wanders without getting closer to a root ([`stalled`]): after at least
/// `2·WANDER_RUN` corrections, none of the last `WANDER_RUN` is below `WANDER_GAIN` times
/// the smallest before them. Linear convergence at any rate below `WANDER_GAIN^{1/WANDER_RUN}`
/// per correction (0.97) goes on. From the points where cyclic-12's paths to its sets at infinity stop
/// (valuation 1/3, |y_n| ≈ 1e-6…1e-3), Newton takes corrections of 0.05–0.9 that never
/// shrink, 16 of them before: on the H200 cyclic-12's refinement threads spent 128–171 s in
/// Newton in double-double without this rule and 110 s with it. With a gain of 0.5, which
/// stops more, the counts of cyclic-12, chandra-12 and chandra-13 were the same.
const WANDER_RUN: usize = 4;
/// See [`WANDER_RUN`].
const WANDER_GAIN: f64 = 0.9;

/// The homogenized target system with double-double coefficients.
pub struct DdTarget {
    system: DdHomotopy,
}

/// Result of [`DdTarget::newton`].
pub struct DdNewton {
    /// Unit-norm homogeneous coordinates (rounded).
    pub y: Vec<C64>,
    /// Affine coordinates `y_j / y_n`, divided in double-double and rounded (`None` when
    /// `y_n = 0`).
    pub x: Option<Vec<C64>>,
    /// Norms of the corrections, relative to `‖y‖`.
    pub steps: Vec<f64>,
    /// Condition estimate of `[∂F/∂y; ℓ]` at the final point, in double-double
    /// ([`DdValues::condition`](crate::eval::dd_homotopy::DdValues::condition)).
    pub cond_dd: f64,
}

impl DdNewton {
    /// Newton converged quadratically (see [`DD_CONVERGED`]) and stayed there: after the
    /// first quadratic drop no correction exceeds [`DD_SETTLED`] (the rounding level κ·1e-32
    /// of a root of condition κ ≤ 1e21), and the drop is seen to stay (a later correction,
    /// or the drop below [`DD_STEP_TOL`]). Near a positive-dimensional component Newton also
    /// drops quadratically towards it, and then wanders along it: there `[∂F/∂y; ℓ]` is
    /// singular at distance d ≈ 0, so the rounding of the residual (1e-32) divided by
    /// σ_min ≈ d pushes it along the component, by more the closer it came (cyclic-8, a
    /// curve of degree 144 besides its 1,152 isolated roots: 7e-7, 5e-12, 2e-9, 1e-15,
    /// 3e-3, …; with the drop alone, 154 such points counted as nonsingular). Wandering may
    /// end in a quiet phase (from a total-degree start: …, 9e-9, 1e-13, 2e-14, 2e-12), so
    /// the first drop decides, not the last.
    pub fn converged(&self) -> bool {
        let k = self.steps.len();
        let first_drop = self
            .steps
            .windows(2)
            .position(|w| w[1] <= DD_CONVERGED && w[1] <= DD_QUADRATIC_RATIO * w[0]);
        first_drop.is_some_and(|i| {
            self.steps[i + 2..].iter().all(|&s| s <= DD_SETTLED)
                && (i + 2 < k || self.steps[i + 1] <= DD_STEP_TOL)
        })
    }

    /// Newton started on a root, to its rounding level: every correction, from the first,
    /// at most [`DD_SETTLED`] (at least three of them, or the last below [`DD_STEP_TOL`]),
    /// and no run of [`LINEAR_RUN`] corrections each 0.3–0.9 of the one before. Said of the
    /// end of a path tracked to t = 1 in double-double, whose corrector already converged
    /// there; a root whose corrections start at the rounding level shows no quadratic
    /// convergence to prove (chandra-13's root of norm 8.6e7 in double-double: 2e-16, 3e-17,
    /// 2e-17, …). A steady linear contraction is a singular root (rate 1 − 1/m at
    /// multiplicity m): paths of cyclic-8 from a total-degree start, tracked in
    /// double-double onto singular points of its curve, gave 4e-12, 2e-12, 1e-12, 5e-13,
    /// 3e-13, 1e-13, … and counted as nonsingular.
    pub fn settled(&self) -> bool {
        let enough = self.steps.len() >= 3 || self.steps.last().is_some_and(|&s| s <= DD_STEP_TOL);
        let linear = self.steps.windows(LINEAR_RUN + 1).any(|w| {
            w.windows(2)
                .all(|p| p[1] >= 0.3 * p[0] && p[1] <= 0.9 * p[0])
        });
        enough && !linear && self.steps.iter().all(|&s| s <= DD_SETTLED)
    }
}

/// See [`DdNewton::settled`]: successive contractions (ratios) that make a linear run.
pub const LINEAR_RUN: usize = 5;

/// See [`DdNewton::settled`]: the rounding level below which the tracker's corrector in
/// double-double accepts a stalled correction ([`crate::track::dd::DD_NOISE`]); chandra-13's
/// root of norm 4.3e9 starts at 1.0e-14, 3.9e-15, 6.9e-15, ….
pub const DD_SETTLED: f64 = crate::track::dd::DD_NOISE;

impl DdTarget {
    /// `target`: the target system as a constant homotopy ([`Homotopy::target_only`]);
    /// `None` for a Laurent system (negative exponents): not supported here.
    pub fn new(target: &Homotopy) -> Option<DdTarget> {
        Some(DdTarget {
            system: DdHomotopy::new(target)?,
        })
    }

    /// Projective Newton from `y0` (any scale) for at most [`DD_MAX_ITERS`] iterations;
    /// stops early when a correction is below [`DD_STEP_TOL`], exceeds [`DD_MAX_STEP`], is not
    /// finite, or shows that no quadratic convergence is coming.
    pub fn newton(&self, y0: &[C64]) -> DdNewton {
        let s = y0.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        let y: Vec<Cdd> = y0.iter().map(|&z| Cdd::from(z / s)).collect();
        self.newton_dd(y)
    }

    /// [`Self::newton`] from a start point in double-double (unit norm): the end of a
    /// tracking in double-double ([`crate::track::dd`]) is closer to a solution of
    /// condition κ than its rounding to double when κ > 1e16, whose Newton basin is about
    /// `1/κ` wide.
    pub fn newton_dd(&self, mut y: Vec<Cdd>) -> DdNewton {
        let nh = self.system.nh();
        let n = nh - 1;
        let patch: Vec<Cdd> = y.iter().map(|z| z.conj()).collect();
        let mut v = self.system.values();
        let (mut step, mut unused) = (vec![Cdd::ZERO; nh], vec![Cdd::ZERO; nh]);
        let mut steps = Vec::new();
        for _ in 0..DD_MAX_ITERS {
            self.system.eval(&y, 0.0, None, &mut v);
            let mut on_patch = Cdd::from(C64::new(1.0, 0.0));
            for j in 0..nh {
                on_patch = on_patch.sub(patch[j].mul(y[j]));
            }
            if !v.solve(&patch, on_patch, false, &mut step, &mut unused) {
                break;
            }
            let size = dd_norm(&step) / dd_norm(&y);
            if !size.is_finite() {
                break;
            }
            steps.push(size);
            if size > DD_MAX_STEP {
                break;
            }
            for j in 0..nh {
                y[j] = y[j].add(step[j]);
            }
            if size <= DD_STEP_TOL || stalled(&steps) {
                break;
            }
        }
        let cond_dd = if self.system.eval(&y, 0.0, None, &mut v) {
            v.condition(&patch)
        } else {
            f64::INFINITY
        };
        let x = (y[n].to_c64().norm() > 0.0)
            .then(|| y[..n].iter().map(|z| z.div(y[n]).to_c64()).collect());
        let mut yr: Vec<C64> = y.iter().map(|z| z.to_c64()).collect();
        let s = yr.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        yr.iter_mut().for_each(|z| *z /= s);
        DdNewton {
            y: yr,
            x,
            steps,
            cond_dd,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::System;

    fn target(src: &str) -> (System, DdTarget) {
        let sys = crate::system::parse::parse_str(src, "test").expect("valid system");
        let t = DdTarget::new(&Homotopy::target_only(&sys)).expect("polynomial");
        (sys, t)
    }

    /// `settled`: a start on a root to its rounding level is one (the root of huge norm below,
    /// rounded to double); a start 1e-10 from the double root of `x² = 0` is neither settled
    /// nor converged (corrections halve from 5e-11: linear convergence), and a start 0.1 from
    /// a well-conditioned root converges quadratically but is not settled.
    #[test]
    fn settled_starts_are_roots_to_the_rounding_level() {
        let (_, t) =
            target("variables: [x, y]\nequations:\n  - \"x*y - 1e12\"\n  - \"x - 1e-12*y\"\n");
        let on = [C64::new(1.0, 0.0), C64::new(1e12, 0.0), C64::new(1.0, 0.0)];
        let r = t.newton(&on);
        assert!(r.settled(), "steps {:?}", r.steps);
        let (_, t) =
            target("variables: [x, y]\nequations:\n  - \"x^2 + y^2 - 5\"\n  - \"x*y - 2\"\n");
        let off = [
            C64::new(1.1, 0.01),
            C64::new(1.9, -0.02),
            C64::new(1.0, 0.0),
        ];
        let r = t.newton(&off);
        assert!(r.converged() && !r.settled(), "steps {:?}", r.steps);
        let (_, t) = target("variables: [x]\nequations:\n  - \"x^2\"\n");
        let r = t.newton(&[C64::new(1e-10, 0.0), C64::new(1.0, 0.0)]);
        assert!(!r.settled() && !r.converged(), "steps {:?}", r.steps);
        assert!(r.steps[0] > DD_SETTLED && r.steps[1] < 0.6 * r.steps[0]);
    }

    /// A root of huge norm: `x·y = 1e12`, `x − 1e-12·y = 0` ⇒ x = 1, y = 1e12 (|y_n| = 1e-12
    /// projectively, condition ~1e24 unscaled): Newton from a rounded point recovers x to
    /// full double accuracy, quadratically.
    #[test]
    fn root_of_huge_norm_quadratically() {
        let (_, t) =
            target("variables: [x, y]\nequations:\n  - \"x*y - 1e12\"\n  - \"x - 1e-12*y\"\n");
        // Homogeneous (x, y, h) ∝ (1, 1e12, 1), perturbed by 1e-9 relative.
        let y0 = [
            C64::new(1.0 + 1e-9, 0.0),
            C64::new(1e12 * (1.0 - 2e-9), 0.0),
            C64::new(1.0, 3e-10),
        ];
        let r = t.newton(&y0);
        assert!(r.converged(), "steps {:?}", r.steps);
        let x = r.x.expect("finite");
        assert!((x[0] - C64::new(1.0, 0.0)).norm() < 1e-15, "{x:?}");
        assert!((x[1] - C64::new(1e12, 0.0)).norm() < 1e-3, "{x:?}");
    }

    /// Near a positive-dimensional component Newton drops quadratically towards it and then
    /// wanders along it; that is no proof of a nonsingular root. `(x² + y² − 1)(x − 2)`,
    /// `(x² + y² − 1)(y − 3)`: the unit circle and the isolated root (2, 3). From 1e-3 off
    /// the circle the corrections drop (…, ≤ 1e-12) and grow again, so Newton has not
    /// converged; from 1e-3 off (2, 3) it has. Then sequences as such: a cyclic-8 path's, as
    /// recorded (a rule that counts it as converged makes 154 of its curve's points
    /// nonsingular); a drop at the last correction; a chandra-11 root's (4e-7, 4e-14, 5e-21,
    /// docs/tracker.md, with a last correction below `DD_STEP_TOL`); a start on a root.
    #[test]
    fn a_drop_towards_a_curve_followed_by_wandering_is_not_convergence() {
        let (_, t) = target(
            "variables: [x, y]\nequations:\n  - \"(x^2 + y^2 - 1)*(x - 2)\"\n  - \"(x^2 + y^2 - 1)*(y - 3)\"\n",
        );
        let (c, s) = (0.6f64, 0.8f64);
        let r = t.newton(&[
            C64::new(c * 1.001, 2e-4),
            C64::new(s * 1.001, -1e-4),
            C64::new(1.0, 0.0),
        ]);
        assert!(!r.converged(), "circle: steps {:?}", r.steps);
        let r = t.newton(&[
            C64::new(2.001, 1e-3),
            C64::new(3.0, -1e-3),
            C64::new(1.0, 0.0),
        ]);
        assert!(r.converged(), "(2, 3): steps {:?}", r.steps);
        let with = |steps: &[f64]| DdNewton {
            y: Vec::new(),
            x: None,
            steps: steps.to_vec(),
            cond_dd: 1.0,
        };
        let cyclic8 = [
            6e-16, 3e-2, 7e-4, 7e-7, 5e-12, 2e-9, 1e-15, 3e-3, 8e-6, 7e-11, 2e-12, 2e-9, 2e-16,
            9e-2, 5e-3, 4e-5,
        ];
        assert!(!with(&cyclic8).converged());
        // From a total-degree start: the wandering stays below DD_SETTLED after its last
        // drop (path 7626, seed 1); and a root whose drop falls below its rounding level
        // (chandra-13 path 1581: 1e-10, 6e-21, then 7e-20, 1e-19, …).
        let below = [
            1e-8, 7e-12, 4e-7, 2e-10, 3e-16, 1e-8, 2e-13, 8e-15, 3e-12, 9e-17, 3e-8, 1e-12, 1e-16,
            9e-9, 1e-13, 2e-14, 8e-13, 1e-15, 4e-10, 2e-16, 9e-9, 1e-13, 2e-14, 2e-12,
        ];
        assert!(!with(&below).converged());
        assert!(with(&[2e-3, 1e-5, 1e-10, 6e-21, 7e-20, 2e-20, 1e-19, 8e-20]).converged());
        // Linear contraction onto a singular point is not "settled" (path 5664); rounding
        // noise at a root is (chandra-13).
        let linear = [
            4e-12, 2e-12, 9e-13, 5e-13, 2e-13, 1e-13, 6e-14, 3e-14, 1e-14, 7e-15, 4e-15, 2e-15,
        ];
        assert!(!with(&linear).settled());
        assert!(with(&[2e-16, 3e-17, 2e-17]).settled());
        assert!(with(&[1.0e-14, 3.9e-15, 6.9e-15, 4e-15, 5e-15]).settled());
        // Converged only at the very last correction: not seen to stay.
        assert!(!with(&[3e-3, 2e-10, 5e-14]).converged());
        assert!(with(&[4e-7, 4e-14, 5e-21, 1e-30]).converged());
        assert!(with(&[1e-16, 1e-31]).converged());
    }

    /// A double root never passes the quadratic-convergence test.
    #[test]
    fn double_root_is_not_converged() {
        let (_, t) = target("variables: [x]\nequations:\n  - \"x^2 - 2*x + 1\"\n");
        let r = t.newton(&[C64::new(1.001, 0.0), C64::new(1.0, 0.0)]);
        assert!(!r.converged(), "steps {:?}", r.steps);
    }

    /// Agrees with the double-precision solution of a well-conditioned system.
    #[test]
    fn well_conditioned_root() {
        let (sys, t) =
            target("variables: [x, y]\nequations:\n  - \"x^2 + y^2 - 5\"\n  - \"x*y - 2\"\n");
        let r = t.newton(&[
            C64::new(1.1, 0.01),
            C64::new(1.9, -0.02),
            C64::new(1.0, 0.0),
        ]);
        assert!(r.converged(), "steps {:?}", r.steps);
        let x = r.x.expect("finite");
        assert!(
            (x[0] - C64::new(1.0, 0.0)).norm() < 1e-15
                && (x[1] - C64::new(2.0, 0.0)).norm() < 1e-15
        );
        assert!(sys.relative_residual(&x) < 1e-16);
    }

    /// Corrections that never get closer to a root (those of a point where cyclic-12's path
    /// to its set at infinity stopped) end Newton after 8, not 16; linear convergence at rate
    /// 0.95 (a triple root, or a start far from a simple one) and the slow start towards
    /// `x − 1e10·y, y² − 1`'s root go on.
    #[test]
    fn wandering_corrections_end_newton_early() {
        let wander = [
            1.6e-1, 6.9e-2, 1.4e-1, 2.0e-1, 4.4e-1, 9.3e-1, 6.7e-2, 4.0e-1,
        ];
        assert!(!stalled(&wander[..7]) && stalled(&wander));
        let linear: Vec<f64> = (0..15).map(|i| 1e-2 * 0.95f64.powi(i)).collect();
        assert!((2..=linear.len()).all(|k| !stalled(&linear[..k])));
        let slow = [
            4.7e-10, 2.4e-10, 1.3e-10, 1.0e-10, 3.3e-10, 3.0e-10, 2.9e-10, 2.0e-10,
        ];
        assert!(!stalled(&slow));
    }
}
