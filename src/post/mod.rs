//! Post-processing of path endpoints: Newton refinement on the target system, condition
//! number, residual, classification, and clustering into distinct solutions.

pub mod affine;
pub mod bridge;
pub mod cluster_split;
pub mod cost;
pub mod dd_newton;
pub mod dedup;
pub mod local_dimension;
pub mod rank;

use crate::backend::solve_directions_one;
use crate::endgame::{homogenizing_valuation, VALUATION_TOL};
use crate::eval::dd_homotopy::DdHomotopy;
use crate::eval::{cpu as eval_cpu, EvalLayout, Points};
use crate::homotopy::Homotopy;
use crate::system::System;
use crate::track::dd::track_near_one;
use crate::track::path::settled_valuation;
use crate::track::{PathEnd, TrackCode};
use cost::Part;
use num_complex::Complex64 as C64;
pub use rank::numerical_rank;
use serde::Serialize;

/// Condition numbers above this make an endpoint singular.
pub const SINGULAR_COND: f64 = 1e12;
/// `|y_n| / ‖y‖` below this puts a refined endpoint at infinity.
pub const INFINITY_TOL: f64 = 1e-8;
/// A point refined in double-double is finite when `|y_n| / ‖y‖` is at least this (norm
/// below 1e16).
pub const DD_INFINITY_TOL: f64 = 1e-16;
/// See `Refiner::finish_dd`.
pub const DD_YN_FACTOR: f64 = 10.0;
/// A nonsingular endpoint must have a relative residual below this.
pub const RESIDUAL_TOL: f64 = 1e-8;

/// Seed of the local dimension test's hyperplanes in [`on_a_component`] (with the path id).
const COMPONENT_SEED: u64 = 0x5eed_0fdd;

/// At or above this condition estimate in double-double a root is known only to
/// `κ·1e-32 ≥ 1e-16`: no better than in double (see [`unproven_in_dd`]).
pub const DD_UNRESOLVED_COND: f64 = 1e16;

/// Whether a nonsingular verdict of Newton in double-double does not stand on its
/// corrections alone: they never showed quadratic convergence
/// ([`dd_newton::DdNewton::settled`] only), the condition estimate in double-double is at
/// least [`DD_UNRESOLVED_COND`], and the condition in double (`condition`,
/// [`Refiner::condition`]) at least [`NEWTON_COND_MAX`] or not a number. There a point of
/// a positive-dimensional component passes as well as a root: cyclic-8's nodes of its
/// curve (total-degree start, seeds 2–4: points like `(a, −a, −a, b, a, −a, −b, a)·i`,
/// tracked to t = 1 in double-double) settle with corrections 2e-12, 1e-12, 5e-13, 2e-13,
/// then noise near 1e-14, at κ_dd = 7e17–5e20 and κ = ∞ in double; and so would a root of
/// that condition. Restarting Newton 1e-28 away does not tell them apart (one of the nodes
/// stands three such restarts); [`on_a_component`] does.
pub fn unproven_in_dd(r: &dd_newton::DdNewton, condition: f64) -> bool {
    !r.converged()
        && r.cond_dd >= DD_UNRESOLVED_COND
        && (condition >= NEWTON_COND_MAX || condition.is_nan())
}

/// The local dimension test at `x` as at a point reached by one path
/// ([`local_dimension::sample_nearby`], hyperplanes drawn from `path`): a point of `V(F)`
/// found near `x` puts it on a positive-dimensional component; an isolated root, however
/// ill-conditioned, has none (its residual on a hyperplane at distance δ ≥ 1e-3 stays
/// near `δ²` and above).
pub fn on_a_component(system: &System, x: &[C64], path: u64) -> bool {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(COMPONENT_SEED ^ path);
    local_dimension::sample_nearby(system, x, 1, &mut rng).is_some()
}

/// Below this `|y_n|` (affine norm above 1,000) at t = 1, a path whose endgame samples show a
/// positive valuation has diverged; above it, a point with a residual at a solution's level
/// is a (singular) point of the target system however its samples moved.
pub const DIVERGED_YN: f64 = 1e-3;
/// Several paths ending at one "nonsingular" solution after recovery make it singular (of
/// multiplicity = the number of paths) when its condition number exceeds this: a double
/// root that Newton approached to `√ε` has κ ≈ 1e7–1e8, while jumped paths land on
/// well-conditioned solutions (the clustering in [`crate::report::Tally`]).
pub const CLUSTER_SINGULAR_COND: f64 = 1e6;
/// A path that reached t = 1 near infinity (`|y_n| <` [`INFINITY_TOL`]) whose affine
/// coordinates `y_0 … y_{n−1}` alone span more than this (in `ln`; e^36 ≈ 4e15 ≈ 1/ε) is
/// tracked again from its checkpoint in double-double before it is put at infinity: in
/// double its smallest coordinates are rounding noise. Polyhedral paths only (those of
/// total-degree and m-hom starts to infinity spread hierarchically: 165 of eco-9's 4,246
/// would qualify, to no avail). i1 (PHCpack's demo database) has a root of norm 3.8e11
/// whose smallest coordinate is 4e-11; a path that reaches t = 1 with |y_n| ≈ 3e-19 reaches
/// it from its checkpoint in double-double (the polyhedral start finds it for seeds 1–5:
/// tests/huge_norm_roots.rs).
pub const UNRESOLVED_SPREAD: f64 = 36.0;
/// A Cauchy estimate (winding number ≥ 2) with a residual above this is the centre of a
/// cluster of solutions, not a multiple one: `(x − 1)² − 10⁻¹⁰` has two nonsingular roots
/// 2e-5 apart, and the loops around both (radius above the branch point at s ≈ 1e-10)
/// gave their mean, residual 2e-11, with a singular Jacobian; it was counted as one double
/// root. The genuine multiple roots of cyclic-8 (seed 1: 750 endpoints) have residuals
/// below 5e-14 at their estimates. Such an endpoint is tracked in double-double from its
/// checkpoint, through the branch point, like a cluster with a full-rank Jacobian.
pub const CLUSTER_RESIDUAL: f64 = 1e-12;
/// Numerical rank: singular values of the row-scaled Jacobian (row k divided by
/// `max|c| + Σ|c·x^a|` of equation k) above `RANK_TOL_FLOOR`, or above `100 ×` the endpoint's
/// estimated accuracy when that is larger (a singular endpoint known to `δ` perturbs the
/// Jacobian by `O(δ)`).
pub const RANK_TOL_FLOOR: f64 = 1e-10;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Nonsingular,
    Singular,
    AtInfinity,
    Failed,
    /// With `--torus` only: a solution with a coordinate that is zero to within its
    /// accuracy, so not in `(C*)^n` (a path of the torus homotopy that left the torus).
    OutsideTorus,
    /// A singular endpoint on a positive-dimensional component of the solution set, not an
    /// isolated solution: set after the solve by the local dimension test
    /// ([`local_dimension`]) or `solve --witness`.
    PositiveDimensional,
}

impl Status {
    pub fn is_finite(self) -> bool {
        matches!(self, Status::Nonsingular | Status::Singular)
    }
}

/// A classified endpoint (one per path).
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub path: u64,
    pub status: Status,
    /// Why a path failed or stopped early.
    pub reason: Option<String>,
    /// Homogeneous coordinates, unit norm, homogenizing coordinate last.
    pub projective: Vec<C64>,
    /// Affine coordinates for finite endpoints.
    pub coordinates: Option<Vec<C64>>,
    /// Relative residual `max_k |f_k(x)| / (max|c| + Σ|c x^a|)` (finite endpoints; the same
    /// for any scaling of the equations, [`crate::system::System::relative_residual`]).
    pub residual: f64,
    /// 2-norm condition number of `[∂F/∂y; y*]` with each equation row scaled (see
    /// `Refiner::condition`).
    pub condition: f64,
    pub accepted: u32,
    pub rejected: u32,
    /// Estimated valuation of the homogenizing coordinate, when the path stopped early.
    pub valuation: Option<f64>,
    /// Winding number, when the Cauchy endgame computed the endpoint.
    pub winding: Option<u32>,
    /// Relative accuracy of the Cauchy estimate (difference of its last two rounds).
    pub accuracy: Option<f64>,
    /// Numerical rank of the Jacobian `∂F/∂x` at a finite endpoint (see [`RANK_TOL_FLOOR`]).
    pub rank: Option<usize>,
    /// 0 for the first tracking, k for the k-th re-tracking with tighter tolerances.
    pub attempt: u8,
    /// The endpoint was computed by Newton in double-double ([`dd_newton`]): accurate to
    /// full double precision whatever its condition number.
    pub refined_dd: bool,
    /// Estimated error of `coordinates` relative to `1 + ‖x‖∞` (the clustering's metric),
    /// from the refinement that decided the endpoint: the last Newton correction for a
    /// nonsingular one, `η/(1 − θ)` (linear convergence at rate θ) for a singular one
    /// refined by Newton; NaN when unknown ([`refinement_error`]).
    pub error: f64,
    /// Radius (relative, as `error`) of the region of zeros to rounding around a singular
    /// endpoint ([`local_dimension::rounding_extent`]): the clustering reads it as an error
    /// bound; NaN when none was measured.
    pub rounding_extent: f64,
}

impl Endpoint {
    /// Path `path` with `status` and nothing else known yet: no coordinates, residual and
    /// condition NaN, no steps, first attempt.
    pub fn new(path: u64, status: Status) -> Endpoint {
        Endpoint {
            path,
            status,
            reason: None,
            projective: Vec::new(),
            coordinates: None,
            residual: f64::NAN,
            condition: f64::NAN,
            accepted: 0,
            rejected: 0,
            valuation: None,
            winding: None,
            accuracy: None,
            rank: None,
            attempt: 0,
            refined_dd: false,
            error: f64::NAN,
            rounding_extent: f64::NAN,
        }
    }

    pub fn steps(&self) -> u32 {
        self.accepted + self.rejected
    }

    /// At infinity by an estimate: the path stopped before t = 1 (diverging, stalled, …)
    /// or Newton stagnated there, with a positive valuation or a small `|y_n|`; not a
    /// point reached at t = 1 with `y_n` = 0 to rounding.
    pub fn at_infinity_by_estimate(&self) -> bool {
        self.status == Status::AtInfinity && self.reason.is_some()
    }
}

/// Refines and classifies endpoints against the target system.
pub struct Refiner<'a> {
    system: &'a System,
    layout: EvalLayout,
    tau_end: f64,
    /// The homogenized target system (for the condition number).
    target: Homotopy,
    /// `√d_k·‖f_k‖_BW` per equation (see [`Refiner::condition`]).
    row_weight: Vec<f64>,
    /// The target system in double-double (`None` for Laurent systems).
    dd: Option<dd_newton::DdTarget>,
    /// The homotopy in double-double, for tracking the last stretch of a stalled path
    /// ([`crate::track::dd`]); `None`: not done.
    near_one: Option<DdHomotopy>,
    /// Failed paths whose double-double tail got stuck go on in double ([`bridge`]);
    /// `None`: not done.
    bridge: Option<bridge::Bridge>,
    /// No re-tracking follows: ambiguous endpoints are settled rather than left failed.
    pub last_attempt: bool,
    /// 0 on the first pass, `k` in the `k`-th recovery round. When re-tracking, a path
    /// stopped in the endgame zone is tracked in double-double from its checkpoint before
    /// Newton is tried; from the second round on with the tighter
    /// [`crate::track::dd::DD_ETA_TARGET_RETRACK`].
    pub attempt: u8,
    /// Re-tracking, but with the first pass's pace limit on the double-double tracking
    /// ([`crate::track::dd::DD_PACE_STEPS`]): the gap recovery's paths at infinity
    /// (`solver::gap`), most of which do diverge and would crawl to
    /// [`crate::track::dd::DD_MAX_STEPS`] unpaced.
    pub paced: bool,
    /// Solutions are sought in `(C*)^n` (`--torus`): singular endpoints with a zero
    /// coordinate are [`Status::OutsideTorus`].
    pub torus: bool,
    /// Seconds and calls by part of the refinement ([`cost`]).
    pub cost: std::sync::Arc<cost::RefineCost>,
}

impl<'a> Refiner<'a> {
    pub fn new(system: &'a System, tau_end: f64) -> Refiner<'a> {
        let target = Homotopy::target_only(system);
        let row_weight = target
            .equations
            .iter()
            .map(|eq| bombieri_weight(eq))
            .collect();
        Refiner {
            system,
            layout: EvalLayout::new(&target),
            tau_end,
            dd: dd_newton::DdTarget::new(&target),
            near_one: None,
            bridge: None,
            target,
            row_weight,
            last_attempt: true,
            attempt: 0,
            paced: false,
            torus: false,
            cost: Default::default(),
        }
    }

    /// Paths that stall near t = 1 are tracked again from their checkpoint in double-double
    /// on `h` (the homotopy they were tracked on; not for Laurent homotopies).
    pub fn track_near_one(&mut self, h: &Homotopy) {
        self.near_one = DdHomotopy::new(h);
    }

    /// The path tracked in double-double from its `checkpoint` ([`PathEnd::checkpoint`],
    /// [`crate::track::dd`]) with its `lifts`, refined by Newton in double-double
    /// ([`Refiner::finish_dd`]): `ep` becomes that nonsingular solution and its homogeneous
    /// coordinates are returned.
    fn finish_near_one(
        &self,
        ep: &mut Endpoint,
        checkpoint: Option<&(f64, Vec<C64>)>,
        lifts: Option<&[f64]>,
    ) -> Option<Vec<C64>> {
        self.near_one_or_tail(ep, checkpoint, lifts).ok()
    }

    /// [`Self::finish_near_one`], or where it fails the point `(τ, unit y)` its
    /// double-double tracking reached (`None` when none was tracked).
    fn near_one_or_tail(
        &self,
        ep: &mut Endpoint,
        checkpoint: Option<&(f64, Vec<C64>)>,
        lifts: Option<&[f64]>,
    ) -> Result<Vec<C64>, Option<(f64, Vec<C64>)>> {
        let Some(hom) = self.near_one.as_ref() else {
            return Err(None);
        };
        let Some((tau0, y0)) = checkpoint else {
            return Err(None);
        };
        let eta = if self.attempt >= 2 {
            crate::track::dd::DD_ETA_TARGET_RETRACK
        } else {
            crate::track::dd::DD_ETA_TARGET
        };
        // The first pass gives up on crawling paths; recovery rounds track them to the end.
        let pace = self.attempt == 0 || self.paced;
        let r = self.cost.time(Part::DdTail, || {
            track_near_one(hom, lifts, y0, *tau0, self.tau_end, eta, pace)
        });
        ep.accepted += r.accepted;
        ep.rejected += r.rejected;
        let Some(y) = self.finish_dd_from(ep, &r.y, Some(r.y_dd)) else {
            if let Some(b) = &self.bridge {
                b.note(ep.path, r.handover);
            }
            // Said in the reason, whatever becomes of the path.
            let why = if r.reached {
                "no convergence at t = 1"
            } else {
                &r.reason
            };
            ep.reason = Some(format!(
                "{}; tracking from s = {:.0e} in double-double failed at s = {:.1e} ({why})",
                ep.reason.as_deref().unwrap_or("stalled"),
                -tau0,
                self.tau_end - r.tau
            ));
            return Err(Some((r.tau, r.y)));
        };
        ep.reason = Some(format!(
            "{}; tracked from s = {:.0e} to t = 1 in double-double ({} steps)",
            ep.reason.as_deref().unwrap_or("stalled"),
            -tau0,
            r.accepted + r.rejected
        ));
        Ok(y)
    }

    /// Projective Newton on the target system; returns the last correction norm and the
    /// direction matrix's condition number at the final point.
    fn newton(&self, y: &mut [C64], iters: usize) -> Newton {
        let (eta, ratio) = self.cost.time(Part::Newton, || self.newton_steps(y, iters));
        Newton {
            eta,
            ratio,
            cond: self.condition(y),
        }
    }

    /// The iterations of [`Self::newton`]: the last correction norm and the ratio of the
    /// last two.
    fn newton_steps(&self, y: &mut [C64], iters: usize) -> (f64, f64) {
        let n = self.layout.n;
        let nh = n + 1;
        let mut scratch = eval_cpu::Scratch::default();
        let mut ext = vec![C64::new(0.0, 0.0); self.layout.ext_len()];
        let mut qr = crate::backend::DirectionSystem::default();
        let (mut eu, mut ne) = (vec![C64::new(0.0, 0.0); nh], vec![C64::new(0.0, 0.0); nh]);
        let tau = [C64::new(0.0, 0.0)];
        let mut last = f64::INFINITY;
        let mut ratio = f64::INFINITY;
        for _ in 0..iters {
            eval_cpu::extended_jacobians(
                &self.layout,
                &Points::projective(y, &tau),
                &mut ext,
                &mut scratch,
            );
            crate::backend::cpu::accurate_residual(
                &self.layout,
                &Points::projective(y, &tau),
                0,
                &mut ext,
            );
            solve_directions_one(n, &ext, y, false, &mut qr, &mut eu, &mut ne);
            let eta = ne.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
            if !eta.is_finite() {
                break;
            }
            let mut trial: Vec<C64> = y.iter().zip(&ne).map(|(u, v)| u + v).collect();
            let s = trial.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
            trial.iter_mut().for_each(|z| *z /= s);
            if eta >= last && eta > 1e-13 {
                break; // no longer contracting: keep the best point
            }
            y.copy_from_slice(&trial);
            if last.is_finite() && last > 0.0 {
                ratio = eta / last;
            }
            last = eta;
            if eta < 1e-15 {
                break;
            }
        }
        (last, ratio)
    }

    /// Singular-value condition number of `[J_y; y*]` at the unit point `y`, with equation
    /// row k divided by `√d_k·‖f_k‖` (Bombieri–Weyl norm of its coefficients, as in the
    /// Shub–Smale condition number μ): a constant per equation, so an equation whose whole
    /// gradient vanishes at a singular point gives a zero row (a scale taken from the
    /// gradient itself would hide it).
    ///
    /// Above [`ABS_ROW_COND`] the smaller of that and the condition with row k divided by
    /// its largest absolute derivative `max_j Σ_a |c_a|·a_j·|y^{a−e_j}|` (the size of the
    /// row's terms, not of their sum: a gradient that cancels still shows). The Bombieri–
    /// Weyl weight measures an equation on the whole unit sphere; for sparse equations of
    /// high degree its values at the point are exponentially smaller: `x^d + x² − 1` at its
    /// simple roots (`|x| ≈ 1`, so `|x| = |y_n| ≈ 1/√2` at the unit point) has
    /// `|∂f/∂x| ≈ d·2^{−d/2}` against a weight of `√(2d)`, a condition of `2^{d/2}` (infinite
    /// from d ≈ 2,000) for a root that Newton finds to full accuracy. Both are legitimate row
    /// scalings; every equation row may be scaled at will without changing the point's
    /// singularity.
    fn condition(&self, y: &[C64]) -> f64 {
        self.condition_with(y, true)
    }

    /// [`Self::condition`] with the Bombieri–Weyl row weights alone.
    fn condition_bw(&self, y: &[C64]) -> f64 {
        self.condition_with(y, false)
    }

    /// [`Self::condition`]; `absolute_rows`: also with rows scaled by their absolute
    /// derivatives above [`ABS_ROW_COND`].
    fn condition_with(&self, y: &[C64], absolute_rows: bool) -> f64 {
        self.cost
            .time(Part::Condition, || self.condition_untimed(y, absolute_rows))
    }

    /// A path stalled near t = 1 on its last attempt, at `y`: the singular solution it is
    /// settled at, or why it is left failed.
    ///
    /// Newton from `y` ([`Self::newton_steps`], one step at a time while the corrections
    /// shrink, at most [`STALLED_NEWTON_STEPS`]) converges linearly towards a multiple root
    /// (rate `1 − 1/m`) until the rounding stops it. The point where it stopped (unless it
    /// wandered, [`wandered`]) is a singular solution when its residual is at the rounding
    /// level of the evaluation there ([`rounding_ratio`] at most [`STALLED_ROUNDING_FACTOR`])
    /// and the Jacobian there is rank deficient (at [`singular_rank_tol`] without an
    /// accuracy, the tolerance of the endpoint's reported rank). Else `y` itself is one when
    /// its Jacobian is rank deficient, its residual below [`RESIDUAL_TOL`], and Newton did
    /// not lower that residual: as near `V(F)` as Newton gets. Near a positive-dimensional
    /// component the Jacobian is rank deficient along it and Newton's steps drift that way:
    /// cyclic-8 (total-degree start, seed 4) has path 33466 stall at residual 1.9e-11
    /// (5.7e3 times its rounding), rank 7 of 8, and Newton from there stop at 1.8e-10.
    ///
    /// A small residual at `y` alone is no evidence: for the expanded `(x − 1)^μ` it is
    /// `(|x − 1|/(|x| + 1))^μ`, 4e-7–2e-6 at x ≈ 4–4.5 for μ = 29, where paths stalled, with
    /// a full-rank Jacobian. Newton from there reaches the region `|x − 1| ≲ ε^{1/μ}·(|x| + 1)`
    /// where double precision cannot tell the root (it stops 0.45–0.83 from 1 for μ = 29) in
    /// about 40 steps, as it does from every stall (0.6–3.3 from 1), and those points are one
    /// solution. For μ = 33, 34 paths also stall where the residual is above `√RESIDUAL_TOL`,
    /// and Newton brings them there too: one solution of multiplicity μ and no failed path,
    /// where a residual bound left three failed.
    fn settle_stalled(&self, y: &[C64]) -> Result<StalledSingular, String> {
        let (z, eta, rate) = self.cost.time(Part::Newton, || {
            let mut z = y.to_vec();
            let mut w = z.clone();
            let (mut first, mut last, mut steps) = (f64::NAN, f64::INFINITY, 0i32);
            for _ in 0..STALLED_NEWTON_STEPS {
                w.copy_from_slice(&z);
                let (eta, _) = self.newton_steps(&mut w, 1);
                if !(eta < last) {
                    break; // no longer contracting: the rounding (or no root) stops it
                }
                z.copy_from_slice(&w);
                steps += 1;
                if steps == 1 {
                    first = eta;
                }
                last = eta;
                if eta < 1e-15 {
                    break;
                }
            }
            // The mean rate over the steps: the last ratio is the rounding's, not the root's.
            let rate = if steps >= 2 {
                (last / first).powf(1.0 / (steps - 1) as f64)
            } else {
                f64::INFINITY
            };
            (z, last, rate)
        });
        let n = self.system.n();
        let tol = singular_rank_tol(None);
        let wandered = wandered(y, &z);
        let mut seen = Vec::new();
        let mut newton_residual = f64::INFINITY;
        if !wandered {
            let (x, residual) = self.affine(&z);
            let rounding = rounding_ratio(self.system, &x);
            let rank = self.rank(&x, tol);
            if rounding <= STALLED_ROUNDING_FACTOR && rank < n {
                return Ok(StalledSingular {
                    error: refinement_error(&z, eta, rate, true),
                    y: z,
                    x,
                    residual,
                });
            }
            newton_residual = residual;
            seen.push(format!(
                "where Newton from it stops, residual {residual:.1e} ({rounding:.1e} × its \
                 rounding), rank {rank} of {n}"
            ));
        } else {
            seen.push("Newton from it wandered".to_string());
        }
        let (x, residual) = self.affine(y);
        let rank = self.rank(&x, tol);
        if rank < n && residual < RESIDUAL_TOL && newton_residual >= residual {
            return Ok(StalledSingular {
                error: if wandered {
                    f64::NAN
                } else {
                    refinement_error(y, eta, rate, true)
                },
                y: y.to_vec(),
                x,
                residual,
            });
        }
        seen.push(format!(
            "where it stopped, residual {residual:.1e}, rank {rank} of {n}"
        ));
        Err(format!("no singular solution: {}", seen.join("; ")))
    }

    /// [`numerical_rank`] of the target system at `x`, timed as a [`Part::Condition`].
    fn rank(&self, x: &[C64], tol: f64) -> usize {
        self.cost
            .time(Part::Condition, || numerical_rank(self.system, x, tol))
    }

    fn condition_untimed(&self, y: &[C64], absolute_rows: bool) -> f64 {
        use crate::system::{monomial_partials, PartialScratch};
        let nh = self.layout.nh;
        let mut a = vec![C64::new(0.0, 0.0); nh * nh];
        let mut scratch = PartialScratch::default();
        for (k, eq) in self.target.equations.iter().enumerate() {
            let row = &mut a[k * nh..(k + 1) * nh];
            for t in eq {
                monomial_partials(&t.exponents, y, &mut scratch, |j, e, d| {
                    row[j] += t.coeff * e as f64 * d;
                });
            }
        }
        for j in 0..nh {
            a[(nh - 1) * nh + j] = y[j].conj();
        }
        let cond_with = |weight: &dyn Fn(usize) -> f64| {
            let m = nalgebra::DMatrix::<C64>::from_fn(nh, nh, |i, j| {
                if i + 1 < nh {
                    a[i * nh + j] / weight(i)
                } else {
                    a[i * nh + j]
                }
            });
            let sv = m.singular_values();
            let (mx, mn) = sv
                .iter()
                .fold((0.0f64, f64::INFINITY), |(a, b), &s| (a.max(s), b.min(s)));
            if mn == 0.0 || !mn.is_finite() || !mx.is_finite() {
                f64::INFINITY
            } else {
                mx / mn
            }
        };
        let bw = cond_with(&|k| self.row_weight[k]);
        if bw <= ABS_ROW_COND || !absolute_rows {
            return bw;
        }
        // Row k's largest absolute derivative max_j Σ_a |c_a|·a_j·|y^{a−e_j}|.
        let ay = crate::system::moduli(y);
        let mut abs_scratch = PartialScratch::default();
        let mut abs_col = vec![0.0f64; nh];
        let abs_row: Vec<f64> = self
            .target
            .equations
            .iter()
            .map(|eq| {
                abs_col.iter_mut().for_each(|v| *v = 0.0);
                for t in eq {
                    let c = t.coeff.norm();
                    monomial_partials(&t.exponents, &ay, &mut abs_scratch, |j, e, d| {
                        abs_col[j] += c * e as f64 * d;
                    });
                }
                abs_col.iter().fold(0.0, |m: f64, &v| m.max(v))
            })
            .collect();
        let abs = cond_with(&|k| {
            let w = abs_row[k];
            if w > 0.0 && w.is_finite() {
                w
            } else {
                self.row_weight[k]
            }
        });
        bw.min(abs)
    }

    /// Newton in double-double from `y` ([`dd_newton`]). When it converged quadratically to a
    /// root (small affine residual) whose homogenizing coordinate is finite and within a
    /// factor [`DD_YN_FACTOR`] of the start's, or within the start's rounding level (a path stopped at |y_n| ≈ 5e-8 ends at 4.6e-8
    /// on chandra-11; Newton wandering from a point near infinity to an unrelated finite
    /// solution changes |y_n| by orders of magnitude), makes `ep` that nonsingular solution
    /// and returns its homogeneous coordinates.
    fn finish_dd(&self, ep: &mut Endpoint, y: &[C64]) -> Option<Vec<C64>> {
        self.finish_dd_from(ep, y, None)
    }

    /// [`Self::finish_dd`] with Newton started from `y_dd` (`y` unrounded) when given.
    fn finish_dd_from(
        &self,
        ep: &mut Endpoint,
        y: &[C64],
        y_dd: Option<Vec<crate::eval::dd::Cdd>>,
    ) -> Option<Vec<C64>> {
        let dd = self.dd.as_ref()?;
        let tracked_dd = y_dd.is_some();
        let mut r = self.cost.time(Part::DdNewton, || match y_dd {
            Some(start) => dd.newton_dd(start),
            None => dd.newton(y),
        });
        let yn =
            |v: &[C64]| v[v.len() - 1].norm() / v.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        let (a, b) = (yn(y), yn(&r.y));
        // Within a factor, or within what the start's y_n is known to: the rounding level
        // κ·ε of the double solve that gave it, at most INFINITY_TOL (x − 1e10·y, y² − 1:
        // tracked |y_n| = 1.6e-9 at κ = 1e10 for a root with 1e-10).
        // The start's rounding level needs its projective (Bombieri–Weyl) condition: the
        // absolute-derivative rows of [`Self::condition`] see `x − 1e10·y, y² − 1`'s roots
        // (|y_n| = 1e-10) as well conditioned, while y_n itself is known to 1e-16 only.
        let cond = ep.condition.max(self.condition_bw(y));
        let known = (crate::track::path::NOISE_FACTOR * cond * f64::EPSILON).min(INFINITY_TOL);
        let near = b >= DD_INFINITY_TOL
            && ((b <= DD_YN_FACTOR * a && a <= DD_YN_FACTOR * b) || (a - b).abs() <= known);
        // The end of a tracking in double-double may already be its root to the rounding
        // level (no quadratic convergence left to see).
        if !((r.converged() || (tracked_dd && r.settled()))
            && near
            && r.cond_dd < dd_newton::DD_SINGULAR_COND)
        {
            return None;
        }
        let x = r.x.take()?;
        // A genuine root: Newton's corrections shrink quadratically towards it AND its affine
        // residual is small (on cyclic-10, Newton from points near infinity met the first test
        // at norms 1e11–1e14 with relative residuals 0.5: not roots).
        let residual = self.system.relative_residual(&x);
        if residual >= RESIDUAL_TOL {
            return None;
        }
        let condition = self.condition(&r.y);
        if unproven_in_dd(&r, condition) && on_a_component(self.system, &x, ep.path) {
            return None;
        }
        ep.residual = residual;
        ep.coordinates = Some(x);
        ep.condition = condition;
        ep.refined_dd = true;
        ep.status = Status::Nonsingular;
        Some(r.y)
    }

    /// A path that reached t = 1 at a point whose homogeneous coordinates underflow in the
    /// target's terms ([`affine::projective_underflows`]: degrees in the thousands), refined
    /// in affine coordinates instead: the nonsingular endpoint when Newton there converges
    /// ([`NEWTON_CONVERGED`]) to a point of relative residual below [`RESIDUAL_TOL`] and
    /// condition below [`SINGULAR_COND`]; `None` (the projective refinement decides) otherwise.
    fn affine_endpoint(&self, ep: &Endpoint, y: &[C64]) -> Option<Endpoint> {
        if homogenizing_modulus(y) < INFINITY_TOL
            || !affine::projective_underflows(self.target.equations.iter().map(|e| &e[..]), y)
        {
            return None;
        }
        let a = affine::refine(self.system, &self.affine(y).0, 8)?;
        let residual = self.system.relative_residual(&a.x);
        if !(residual < RESIDUAL_TOL && a.eta <= NEWTON_CONVERGED && a.cond < SINGULAR_COND) {
            return None;
        }
        let mut y: Vec<C64> = a.x.iter().copied().chain([C64::new(1.0, 0.0)]).collect();
        let s = y.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        y.iter_mut().for_each(|z| *z /= s);
        Some(Endpoint {
            status: Status::Nonsingular,
            condition: a.cond,
            residual,
            error: a.eta,
            rank: Some(self.system.n()),
            coordinates: Some(a.x),
            projective: y,
            ..ep.clone()
        })
    }

    /// Affine coordinates of a homogeneous point and their relative residual.
    fn affine(&self, y: &[C64]) -> (Vec<C64>, f64) {
        let nh = y.len();
        let x: Vec<C64> = y[..nh - 1].iter().map(|v| v / y[nh - 1]).collect();
        let residual = self.system.relative_residual(&x);
        (x, residual)
    }

    /// Seconds spent by Newton in double (8 iterations at most, as [`Self::process`] runs it)
    /// by the condition number alone and by the numerical rank of a nonsingular endpoint
    /// ([`RANK_TOL_FLOOR`]), over the endpoints' points, as read by `clock`
    /// (`bench refine`).
    pub fn time_parts(&self, ends: &[PathEnd], clock: impl Fn() -> f64) -> (f64, f64, f64) {
        let start = clock();
        for e in ends {
            let mut y = e.y.clone();
            self.newton(&mut y, 8);
        }
        let newton = clock() - start;
        let start = clock();
        let mut sink = 0.0;
        for e in ends {
            sink += self.condition(&e.y);
        }
        std::hint::black_box(sink);
        let condition = clock() - start;
        let start = clock();
        let mut ranks = 0;
        for e in ends {
            let (x, yn) = e.y.split_at(e.y.len() - 1);
            let x: Vec<C64> = x.iter().map(|v| v / yn[0]).collect();
            ranks += self.rank(&x, RANK_TOL_FLOOR);
        }
        std::hint::black_box(ranks);
        (newton, condition, clock() - start)
    }

    /// Classifies one tracked path ([`Refiner::process`] adds the bridge).
    fn process_end(&self, end: PathEnd) -> Endpoint {
        let nh = self.layout.nh;
        let mut y = end.y;
        let (checkpoint, lifts) = (end.checkpoint.as_ref(), end.lifts.as_deref());
        let mut ep = Endpoint {
            condition: end.cond,
            accepted: end.accepted,
            rejected: end.rejected,
            ..Endpoint::new(end.path, Status::Failed)
        };
        let stalled = end.code.stopped_short();
        if matches!(end.code, TrackCode::Reached) {
            if let Some(done) = self.affine_endpoint(&ep, &y) {
                return done;
            }
        }
        match end.code {
            TrackCode::Reached => {
                let tracked = y.clone();
                let mut nw = self.newton(&mut y, 8);
                if wandered(&tracked, &y) {
                    // Not a refinement of this path's end (see NEWTON_CONVERGED): the
                    // tracked point is decided on.
                    y = tracked.clone();
                    nw = Newton {
                        eta: f64::INFINITY,
                        ratio: f64::INFINITY,
                        cond: self.condition(&y),
                    };
                }
                let cond = nw.cond;
                ep.condition = cond;
                let rel = y[nh - 1].norm();
                // Well conditioned: κ at most CLUSTER_SINGULAR_COND (1e6), below which a
                // cluster of several paths counts as path jumping anyway.
                let mut refined_affine = None;
                let well_conditioned = rel >= INFINITY_TOL && cond <= CLUSTER_SINGULAR_COND && {
                    let (x, residual) = self.affine(&y);
                    refined_affine = Some((x, residual));
                    nw.nonsingular(residual)
                };
                // Anything else is refined in double-double: an ill-conditioned nonsingular
                // solution (κ ≥ 1e12) to full accuracy, so that it is not merged with a
                // neighbour 1e-7 away; one of norm above 1/INFINITY_TOL, that double
                // precision would put at infinity; and one whose κ would make a cluster of it
                // singular: proven quadratic convergence tells a nonsingular root that two
                // paths jumped to (re-tracked) from a double root (chandra-8 seed 5: two
                // paths at one κ = 8e7 root).
                let dd = if well_conditioned {
                    None
                } else {
                    self.finish_dd(&mut ep, &tracked)
                };
                // A point whose affine coordinates alone span more than double precision
                // holds (the smallest below ε of the largest) is no reliable end: tracked
                // in double-double from its checkpoint instead.
                let dd = dd.or_else(|| {
                    (rel < INFINITY_TOL
                        && lifts.is_some()
                        && crate::track::path::wants_log(&tracked[..nh - 1], UNRESOLVED_SPREAD))
                    .then(|| self.finish_near_one(&mut ep, checkpoint, lifts))
                    .flatten()
                });
                let v = homogenizing_valuation(&end.samples, self.tau_end);
                if let Some(refined) = dd {
                    y = refined;
                } else if rel < INFINITY_TOL {
                    ep.valuation = v;
                    ep.status = Status::AtInfinity;
                } else {
                    // `y` is still Newton's point when the test above computed its affine
                    // coordinates (double-double, which would move it, did not finish).
                    let (x, residual) = refined_affine.unwrap_or_else(|| self.affine(&y));
                    ep.coordinates = Some(x);
                    ep.residual = residual;
                    ep.valuation = v;
                    // Double's verdict stands only where double-double was not asked
                    // (κ ≤ 1e6) or cannot be (a Laurent system): a root of κ ≤ 1e12 that Newton in double reached
                    // converges quadratically in double-double, so a refusal there is a
                    // singular point (cyclic-8 from a total-degree start: points of its curve
                    // at κ ≈ 4e10, residual 3e-16).
                    ep.status = if nw.nonsingular(residual)
                        && (well_conditioned || self.dd.is_none())
                    {
                        ep.error = refinement_error(&y, nw.eta, nw.ratio, false);
                        Status::Nonsingular
                    } else if v.is_some_and(|v| v > 2.0 * VALUATION_TOL)
                        && (rel < DIVERGED_YN || residual >= RESIDUAL_TOL.sqrt())
                    {
                        // Reached t = 1 only because Newton stagnated at the rounding level
                        // while |y_n| was still shrinking like s^v: a diverging path. Not a
                        // point of norm below 1/DIVERGED_YN on the target system: there the
                        // samples drift along a positive-dimensional solution set (the slice
                        // of `xz, yz` through the plane z = 0: |y_n| = 0.53, residual 1e-16,
                        // "valuation" 0.11), which is singular.
                        ep.reason = Some(format!("diverging (valuation {:.3})", v.unwrap_or(0.0)));
                        Status::AtInfinity
                    } else if residual < RESIDUAL_TOL.sqrt() {
                        ep.error = refinement_error(&y, nw.eta, nw.ratio, true);
                        Status::Singular
                    } else {
                        // Newton did not reach the target system here, and no valuation
                        // says the path diverges: it failed (recovery tracks it again). A
                        // small |y_n| alone is no proof (the sparse chain
                        // `x_k·x_{k+1}^9 − 1, x_{n−1}^10 − 1`, whose ten roots lie on the
                        // unit circle, had every path end so, |y_n| = 4e-7, and all were
                        // reported at infinity).
                        ep.reason = Some(format!(
                            "no convergence at t = 1 (residual {residual:.1e}, |y_n| = {rel:.1e})"
                        ));
                        Status::Failed
                    };
                }
            }
            TrackCode::StoppedInEndgame(reason) => {
                let v = homogenizing_valuation(&end.samples, self.tau_end);
                ep.valuation = v;
                ep.reason = Some(reason);
                // Newton at t = 1 in double-double, whatever the valuation (a path
                // stopped as "diverging" at valuation 0.64 with |y_n| = 1.5e-6 ends at a
                // solution of norm 7e5 on chandra-12). A nonsingular solution of condition κ has a
                // branch point of the homotopy within about 1/κ of t = 1, so the steps of a
                // path towards chandra-11's solutions of norm 1e7 (κ ≈ 1e14) underflow at
                // s ≈ 1e-14, where |y_n| is still shrinking and the valuation looks
                // positive; from there Newton converges (see [`dd_newton`]). A path whose
                // Newton lands on another path's solution is re-tracked as a duplicate.
                // But a path that stalled (not one stopped as diverging) is first tracked
                // again from its checkpoint in double-double (see [`crate::track::dd`]), and
                // so is every path being re-tracked (it shared its solution with another
                // path, or failed): on chandra-13 Newton from a stalled point near several
                // huge-norm solutions (all close to one point at infinity) landed on a
                // neighbour's (seed 1: 105 paths re-tracked with Newton first, 11 without).
                // A path stopped as diverging whose Newton finds a finite root is tracked from
                // its checkpoint too, and the tracked root stands: chandra-12 seed 1's path
                // 1690 (valuation 0.133 at its stop, a root of κ = 3e12) had Newton land on
                // path 214's root, and both were re-tracked in recovery, ~0.25 s after the
                // tracker on the GPU. A few paths per run (1–2 on chandra-12, 5 on
                // chandra-13); paths that do diverge find no root and cost nothing more.
                // On the first pass a stalled path whose valuation has settled
                // ([`settled_valuation`]: three agreeing estimates above 2·VALUATION_TOL) is
                // treated as one stopped as diverging: Newton in double-double first, and its
                // tail only where that finds a root. Its tail would crawl towards a
                // positive-dimensional set at infinity and give up (cyclic-12 on the H200:
                // 35,363 tails took 379 s of the refinement threads' 663; with this rule 7,619
                // took 226 s, and the counts are the same); paths to roots of
                // huge norm wander in their valuations until they reach them, and recovery
                // rounds track every path they take in double-double.
                let settled = self.attempt == 0
                    && stalled
                    && settled_valuation(&end.samples, self.tau_end).is_some();
                let mut tail = None;
                let refined = if self.attempt > 0 || (stalled && !settled) {
                    match self.near_one_or_tail(&mut ep, checkpoint, lifts) {
                        Ok(root) => Some(root),
                        Err(t) => {
                            tail = t;
                            self.finish_dd(&mut ep, &y)
                        }
                    }
                } else {
                    self.finish_dd(&mut ep, &y).map(|root| {
                        self.finish_near_one(&mut ep, checkpoint, lifts)
                            .unwrap_or(root)
                    })
                };
                // A double-double tail that failed, but only HANDOVER_SHRINK times or more
                // closer to t = 1 than the last sample, is where the path went: the
                // valuation is estimated from that sample to the tail's end, and a stalled
                // path that Newton from the double stop does not settle is settled from the
                // tail's end. The paths of the expanded `(x − 1)^μ` (μ = 36–44, with
                // `x + 2y − 3`) from start roots near x = −1 approach the root like
                // `|x − 1|/|x| ≈ (C·s)^{1/μ}`: they pass near infinity at s ≈ 1e-10
                // (|x| ≈ 60), stall in double just before (s ≈ 3e-9, |x| ≈ 12, valuation
                // 0.06–0.21), and their tails reach |x − 1| ≈ 0.9 at s ≈ 1e-23, inside the
                // disc where double precision cannot tell the root (valuation −0.05 to
                // −0.08 from the stop).
                let (v, y_stop) = match tail {
                    Some((tau, yt))
                        if refined.is_none()
                            && end.samples.last().is_some_and(|(t, _)| {
                                self.tau_end - tau
                                    < (self.tau_end - t) / crate::track::dd::HANDOVER_SHRINK
                            }) =>
                    {
                        let mut samples = end.samples.clone();
                        samples.push((tau, yt.clone()));
                        // None at t = 1 (a tail that reached it, where Newton failed).
                        let v = homogenizing_valuation(&samples, self.tau_end).or(v);
                        ep.valuation = v;
                        (v, Some(yt))
                    }
                    _ => (v, None),
                };
                if let Some(refined) = refined {
                    y = refined;
                } else {
                    ep.status = match v {
                        Some(v) if v > VALUATION_TOL => Status::AtInfinity,
                        // A path stalled (v ≈ 0: converging) near a point of norm between
                        // 1/INFINITY_TOL and 1/DD_INFINITY_TOL that double-double could not
                        // finish: re-tracked before it is put at infinity (chandra-13's path
                        // 1388 stalled at s = 6e-18 near a point of norm 6e8, κ = 5e15).
                        Some(v)
                            if y[nh - 1].norm() < INFINITY_TOL
                                && (self.last_attempt
                                    || v.abs() > VALUATION_TOL
                                    || y[nh - 1].norm() < DD_INFINITY_TOL) =>
                        {
                            Status::AtInfinity
                        }
                        Some(_) => {
                            // A path that stopped near t = 1 without diverging is singular
                            // only once recovery has tracked it again (with tighter steps, see
                            // `solver`) and it still stopped short, and only where Newton from
                            // its stop reaches a singular point ([`Self::settle_stalled`]);
                            // otherwise it failed. A negative v is noise, not a valuation,
                            // whatever its size: inside the disc that double precision cannot
                            // resolve around a root of multiplicity 24 (radius
                            // (2^24·ε)^{1/24} ≈ 0.44 for `(x − 1)^24` expanded) paths stall
                            // with v ≈ −0.05, and two of 24 were reported failed beside the
                            // singular solution of the other 22.
                            if self.last_attempt {
                                // From the tail's end where Newton from the stop wanders
                                // (from near infinity, as above).
                                let settled = self.settle_stalled(&y).or_else(|why| {
                                    y_stop
                                        .as_ref()
                                        .map_or(Err(why), |yt| self.settle_stalled(yt))
                                });
                                match settled {
                                    Ok(s) => {
                                        ep.condition = self.condition(&s.y);
                                        ep.coordinates = Some(s.x);
                                        ep.residual = s.residual;
                                        ep.error = s.error;
                                        y = s.y;
                                        Status::Singular
                                    }
                                    Err(why) => {
                                        ep.reason = Some(format!(
                                            "{}; {why}",
                                            ep.reason.as_deref().unwrap_or("stalled")
                                        ));
                                        Status::Failed
                                    }
                                }
                            } else {
                                Status::Failed
                            }
                        }
                        None => Status::Failed,
                    };
                }
            }
            TrackCode::Cauchy { winding, accuracy } => {
                ep.winding = Some(winding);
                ep.accuracy = accuracy.is_finite().then_some(accuracy);
                ep.valuation = homogenizing_valuation(&end.samples, self.tau_end);
                let estimate = y.clone();
                if winding == 1 {
                    // A winding number 1 endpoint may still be nonsingular: Newton decides.
                    let nw = self.newton(&mut y, 8);
                    let cond = nw.cond;
                    let (x, residual) = self.affine(&y);
                    let nonsingular = nw.nonsingular(residual) && y[nh - 1].norm() >= INFINITY_TOL;
                    // As for a path that reached t = 1: above CLUSTER_SINGULAR_COND the
                    // solution is proven nonsingular in double-double, so that a path that
                    // jumped to it is re-tracked rather than counted as a double root
                    // (chandra-11 seed 2: κ = 2e13, Newton in double converged).
                    let dd = if nonsingular && cond <= CLUSTER_SINGULAR_COND {
                        None
                    } else if nonsingular {
                        self.finish_dd(&mut ep, &y)
                    } else {
                        // Ill-conditioned (chandra-12: κ ≈ 2e15, |y_n| = 3.6e-8).
                        self.finish_dd(&mut ep, &estimate)
                    };
                    if let Some(refined) = dd {
                        y = refined;
                    } else if nonsingular {
                        ep.condition = cond;
                        ep.coordinates = Some(x);
                        ep.residual = residual;
                        ep.error = refinement_error(&y, nw.eta, nw.ratio, false);
                        ep.status = Status::Nonsingular;
                    } else {
                        y = estimate;
                    }
                }
                if ep.status != Status::Nonsingular {
                    let inf_tol = INFINITY_TOL.max(10.0 * ep.accuracy.unwrap_or(0.0));
                    if y[nh - 1].norm() < inf_tol {
                        ep.status = Status::AtInfinity;
                    } else {
                        let (x, residual) = self.affine(&y);
                        ep.condition = self.condition(&y);
                        let full_rank =
                            || self.rank(&x, singular_rank_tol(ep.accuracy)) == self.system.n();
                        let cluster = if residual >= RESIDUAL_TOL.sqrt() {
                            None
                        } else if full_rank() {
                            Some("a full-rank Jacobian")
                        } else if residual > CLUSTER_RESIDUAL {
                            Some("a residual above the cluster bound")
                        } else {
                            None
                        };
                        if let Some(sign) = cluster {
                            // Loops around a cluster of nonsingular solutions (katsura-11:
                            // two real ones with κ ≈ 5e8) close like winding number 2, and
                            // their estimate (the cluster's mean, residual 2e-6) is no
                            // solution: a full-rank Jacobian there, or (a symmetric pair,
                            // whose mean has a singular Jacobian) a residual above
                            // CLUSTER_RESIDUAL. The real path, tracked in double-double
                            // from its checkpoint, tells which solution this path goes to;
                            // failing that, recovery tracks it again.
                            let why = format!(
                                "Cauchy endgame (winding number {winding}) estimate has residual \
                                 {residual:.1e}, {sign}: the centre of a cluster"
                            );
                            ep.reason = Some(why);
                            match self.finish_near_one(&mut ep, checkpoint, lifts) {
                                Some(refined) => {
                                    // Not a winding number: the loops enclosed other sheets.
                                    (ep.winding, ep.accuracy) = (None, None);
                                    y = refined;
                                }
                                None if self.last_attempt => {
                                    ep.status = Status::Singular;
                                    ep.coordinates = Some(x);
                                    ep.residual = residual;
                                }
                                None => {} // failed: tracked again
                            }
                        } else if residual < RESIDUAL_TOL.sqrt() {
                            // Unless it is the centre of a cluster of simple roots
                            // (cluster_split).
                            match self.split_cluster(&mut ep, &x, checkpoint, lifts) {
                                Some(refined) => {
                                    (ep.winding, ep.accuracy) = (None, None);
                                    y = refined;
                                }
                                None => {
                                    ep.status = Status::Singular;
                                    ep.coordinates = Some(x);
                                    ep.residual = residual;
                                }
                            }
                        } else {
                            // Not a finite solution: a diverging path whose estimate of
                            // y_n is only as small as the estimate's accuracy.
                            let rel = y[nh - 1].norm();
                            ep.reason = Some(format!(
                                "Cauchy endgame estimate has residual {residual:.1e}, |y_n| = {rel:.1e}"
                            ));
                            // Failed (so that recovery tracks it again) until the last
                            // attempt, which settles it as diverging.
                            let diverging = rel < DIVERGED_YN
                                || ep.valuation.is_some_and(|v| v > 2.0 * VALUATION_TOL);
                            if diverging && self.last_attempt {
                                ep.status = Status::AtInfinity;
                            }
                        }
                    }
                }
            }
            TrackCode::Failed(reason) => {
                ep.reason = Some(reason);
            }
        }
        if ep.status == Status::Singular && ep.error.is_nan() {
            // A Cauchy estimate is known to the difference of its last two rounds.
            ep.error = ep.accuracy.unwrap_or(f64::NAN);
        }
        if !ep.status.is_finite() {
            ep.coordinates = None;
            ep.residual = f64::NAN;
        } else if ep.coordinates.is_none() {
            let (x, residual) = self.affine(&y);
            ep.coordinates = Some(x);
            ep.residual = residual;
        }
        if let Some(x) = &ep.coordinates {
            let tol = if ep.status == Status::Nonsingular {
                RANK_TOL_FLOOR
            } else {
                singular_rank_tol(ep.accuracy)
            };
            // Newton's quadratic convergence in double-double proves the Jacobian
            // nonsingular; the double-precision rank test cannot resolve κ ≥ 1e16.
            ep.rank = Some(if ep.refined_dd {
                self.system.n()
            } else {
                self.rank(x, tol)
            });
        }
        if self.torus
            && ep.status == Status::Singular
            && ep
                .coordinates
                .as_deref()
                .is_some_and(|x| has_zero_coordinate(x, ep.error))
        {
            ep.status = Status::OutsideTorus;
        }
        ep.projective = y;
        ep
    }
}

/// Below this times `1 + ‖x‖∞` a coordinate of a singular endpoint is zero, or below ten
/// times its estimated error when that is larger (see [`has_zero_coordinate`]).
pub const TORUS_ZERO: f64 = 1e-12;

/// True when some coordinate of `x` is zero to within `max(TORUS_ZERO, 10·error)` relative
/// to `1 + ‖x‖∞` (`error` as [`Endpoint::error`]; NaN when unknown). Only singular endpoints
/// are asked: a nonsingular root's tiny coordinate is known to its own relative accuracy
/// (i1's root of norm 3.8e11 has a coordinate of 4e-11), while a multiple root's estimate
/// is known only to its error. rose (PHCpack's demo database) has 128 solutions in
/// `(C*)^3` and 4 double points with z = 0 (exact: 136 with multiplicity, 132 distinct in
/// C^3), which its torus homotopy reaches with 8 paths of winding number 2, z ≈ 1e-15.
pub fn has_zero_coordinate(x: &[C64], error: f64) -> bool {
    let scale = 1.0 + x.iter().map(|z| z.norm()).fold(0.0, f64::max);
    let tol = if error.is_finite() {
        TORUS_ZERO.max(10.0 * error)
    } else {
        TORUS_ZERO
    };
    x.iter().any(|z| z.norm() <= tol * scale)
}

/// Newton's method at t = 1 from an endpoint (residual in double-double,
/// [`crate::eval::dd`]): its last correction, the ratio of the last two corrections, and the
/// condition number at the final point.
struct Newton {
    eta: f64,
    ratio: f64,
    cond: f64,
}

/// Above this Bombieri–Weyl condition number `Refiner::condition` also tries rows scaled
/// by their absolute derivatives (below it the first decides alone: every threshold that
/// reads κ lies above it, and one SVD per endpoint is cheaper than two).
pub const ABS_ROW_COND: f64 = 1e6;

/// Newton in double has converged to a nonsingular root when its last correction is at most
/// this (`‖y‖ = 1`): from a tracker endpoint within the corrector's 1e-9, two corrections
/// reach the rounding level at κ ≤ 1e6. A point where Newton stopped above it (out of
/// iterations, or no longer contracting) is not refined: katsura-5's m-hom start had paths
/// that reached t = 1 at infinity (`|y_n|` = 2e-17) from which Newton wandered, eight
/// corrections later still 9e-5, to within 3e-8 of another path's root (residual 8e-9):
/// counted as two distinct nonsingular solutions.
pub const NEWTON_CONVERGED: f64 = 1e-10;

/// Above this condition number a point is singular whatever Newton does (`1/(5ε)`: the
/// Jacobian is numerically rank deficient in double).
pub const NEWTON_COND_MAX: f64 = 1e15;

impl Newton {
    /// A nonsingular solution: residual below [`RESIDUAL_TOL`] and either well conditioned
    /// ([`SINGULAR_COND`]), or Newton converged to the rounding level at a fast rate
    /// (last correction ≤ 1e-14 after one ≥ 10× larger, or a first one ≤ 1e-15; a singular
    /// root gives a linear rate near 1/2 and a condition number near 1/ε) with a condition number below [`NEWTON_COND_MAX`]. Chandra-10's solutions
    /// have condition numbers up to 2e14 and converge so.
    fn nonsingular(&self, residual: f64) -> bool {
        residual < RESIDUAL_TOL
            && self.eta <= NEWTON_CONVERGED
            && (self.cond < SINGULAR_COND
                || (self.cond < NEWTON_COND_MAX
                    && self.eta <= 1e-14
                    && (self.ratio <= 0.1 || (self.ratio.is_infinite() && self.eta <= 1e-15))))
    }
}

/// `√d·‖f‖_BW` with `‖f‖²_BW = Σ |c_a|² / multinomial(d; a)` for a homogeneous equation of
/// degree `d` (the plain 2-norm of the coefficients when an exponent is negative).
fn bombieri_weight(eq: &[crate::homotopy::HomTerm]) -> f64 {
    let lnfact = |k: i32| (1..=k).map(|i| (i as f64).ln()).sum::<f64>();
    let d: i32 = eq.first().map(|t| t.exponents.iter().sum()).unwrap_or(0);
    let laurent = eq.iter().any(|t| t.exponents.iter().any(|&e| e < 0));
    let norm2: f64 = eq
        .iter()
        .map(|t| {
            let c2 = t.coeff.norm_sqr();
            if laurent {
                c2
            } else {
                let ln_multi = lnfact(d) - t.exponents.iter().map(|&e| lnfact(e)).sum::<f64>();
                c2 / ln_multi.exp()
            }
        })
        .sum();
    let w = (d.max(1) as f64).sqrt() * norm2.sqrt();
    if w > 0.0 && w.is_finite() {
        w
    } else {
        1.0
    }
}

/// `|y_n| / ‖y‖`.
fn homogenizing_modulus(y: &[C64]) -> f64 {
    y[y.len() - 1].norm() / y.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt()
}

/// Newton from `from` (a tracker's endpoint) ended at `to`, an unrelated point: `|y_n|`
/// changed by more than [`DD_YN_FACTOR`] either way and by more than [`INFINITY_TOL`] (a
/// change the at-infinity test cannot see: the path to the norm-1e10 root of
/// `x − 1e10·y, y² − 1` ends at |y_n| = 1.6e-9 for 1e-10). As for Newton in double-double
/// ([`Refiner::finish_dd`]): Newton wandering from a point near infinity to a finite
/// solution changes `|y_n|` by orders of magnitude.
fn wandered(from: &[C64], to: &[C64]) -> bool {
    let (a, b) = (homogenizing_modulus(from), homogenizing_modulus(to));
    let near = (b <= DD_YN_FACTOR * a && a <= DD_YN_FACTOR * b) || (a - b).abs() <= INFINITY_TOL;
    !near
}

/// Error estimate of an endpoint `y` refined by Newton whose last correction was `eta`
/// (`‖y‖ = 1`) after one `1/ratio` times larger, relative to `1 + ‖x‖∞` (`δx ≈ δy/y_n`):
/// `eta` itself for a nonsingular endpoint (quadratic convergence leaves much less), and
/// `eta/(1 − θ)` at a singular one, where Newton converges linearly at the rate `θ`
/// (`1 − 1/m` at multiplicity m; 0.9 assumed when no rate was seen), at most
/// [`SINGULAR_ERROR_MAX`]. NaN when `y_n = 0` or `eta` is unknown.
pub fn refinement_error(y: &[C64], eta: f64, ratio: f64, singular: bool) -> f64 {
    let yn = homogenizing_modulus(y);
    if !(yn > 0.0) || !eta.is_finite() {
        return f64::NAN;
    }
    let e = eta / yn;
    if singular {
        let theta = if ratio < 1.0 { ratio.min(0.97) } else { 0.9 };
        (e / (1.0 - theta)).min(SINGULAR_ERROR_MAX)
    } else {
        e
    }
}

/// A stalled path settled as singular ([`Refiner::settle_stalled`]): its point (unit
/// homogeneous and affine), relative residual and error estimate ([`refinement_error`]).
struct StalledSingular {
    y: Vec<C64>,
    x: Vec<C64>,
    residual: f64,
    error: f64,
}

/// Most Newton steps from a stalled point in [`Refiner::settle_stalled`]: linear
/// convergence at rate `1 − 1/m` takes `m·ln(d/r)` steps from distance `d` to the radius `r`
/// where rounding stops it (about 40 from x ≈ 4.5 to 0.8 from the root of `(x − 1)^29`;
/// 60 at m = 40).
pub const STALLED_NEWTON_STEPS: usize = 200;

/// A stalled path's point is a zero to the rounding of the evaluation
/// ([`Refiner::settle_stalled`]) when its [`rounding_ratio`] is at most this. Newton stops
/// short of the worst-case bound: converging at rate `1 − 1/m`, it stops contracting where the
/// rounding in the Jacobian reaches `1/m` of a step (for the expanded `(x − 1)^36` with
/// `3x − y − 2`: at residuals up to 2.4e-14 = 108·ε, 1.5 times the bound of 73·ε).
pub const STALLED_ROUNDING_FACTOR: f64 = 10.0;

/// Largest ratio over the equations of `system` of `|f_k(x)|` to the worst-case rounding of
/// its evaluation in double, `(t_k + d_k)·ε·(max|c| + Σ|c·x^a|)` for equation k of `t_k`
/// terms, each a product of at most `d_k` factors (`Σ|a_i|`): the rounding in its terms and
/// their sum, relative to the size of the terms, so the same for any scaling of the
/// equation. At most 1 at a zero to rounding: the expanded `(x − 1)^29` is one where
/// `(|x − 1|/(|x| + 1))^29` is below 59·ε ≈ 1.3e-14, within 0.45–0.83 of 1; at x = 4–4.5
/// the ratio is 3e7–2e8.
pub fn rounding_ratio(system: &System, x: &[C64]) -> f64 {
    let x_abs = crate::system::moduli(x);
    system
        .equations
        .iter()
        .map(|f| {
            let d = f
                .terms
                .iter()
                .map(|t| t.exponents.iter().map(|a| a.unsigned_abs()).sum::<u32>())
                .max()
                .unwrap_or(0);
            let ops = (f.terms.len() + d as usize) as f64;
            f.eval(x).norm() / (ops * f64::EPSILON * f.size_at_moduli(&x_abs))
        })
        .fold(0.0, f64::max)
}

/// Largest error estimate of a singular endpoint ([`refinement_error`]): beyond it two
/// endpoints are not the same solution whatever Newton says.
pub const SINGULAR_ERROR_MAX: f64 = 0.5;

/// Rank tolerance at an endpoint that is not nonsingular: 100 times the accuracy of the
/// Cauchy estimate (1e-8 when unknown), at least [`RANK_TOL_FLOOR`].
fn singular_rank_tol(accuracy: Option<f64>) -> f64 {
    RANK_TOL_FLOOR.max(100.0 * accuracy.unwrap_or(1e-8))
}

/// True when every coordinate is real up to `tol` relative to the point's norm.
pub fn is_real(x: &[C64], tol: f64) -> bool {
    let scale = 1.0 + x.iter().map(|z| z.norm()).fold(0.0, f64::max);
    x.iter().all(|z| z.im.abs() <= tol * scale)
}
