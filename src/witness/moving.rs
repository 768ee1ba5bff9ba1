//! Moving the slices of a witness set: the homotopy
//!
//! `H(x, t) = [ G(x) ; γ(1 − t)·L₀(x) + t·L₁(x) ]`
//!
//! from the points of `V(G) ∩ {L₀ = 0}` (at t = 0) to those of `V(G) ∩ {L₁ = 0}` (at t = 1),
//! with `G = R·F` fixed. In the τ-form of [`crate::homotopy`] the `G` terms have lift 0,
//! `γL₀` gives the columns `γL₀·t⁰ − γL₀·t¹` and `L₁` the column `L₁·t¹`, so it runs through
//! the same tracker, backend (CPU or GPU) and refinement as a solve. Monodromy loops, the
//! trace test and the membership test are all made of such moves.

use super::slices::Slices;
use crate::backend::Backend;
use crate::error::Result;
use crate::homotopy::{terms_with_lift, Homotopy};
use crate::post::{Endpoint, Refiner};
use crate::system::{Polynomial, System};
use crate::track::{track_all, StartPoint, TrackerOptions};
use num_complex::Complex64 as C64;

/// τ at which the moved points start (t₀ = e^{τ₀} ≈ 1e-7: the start points, exact at t = 0,
/// are off the path by O(t₀) there and the tracker's first Newton steps put them on it).
pub const MOVE_TAU_START: f64 = -16.0;

/// What the moves share: the fixed equations `G`, the tracker settings and the backend.
pub struct Mover<'b> {
    /// `G = R·F` (the `n − d` randomized equations).
    pub fixed: Vec<Polynomial>,
    pub variables: Vec<String>,
    pub tracker: TrackerOptions,
    pub backend: &'b mut dyn Backend,
    /// Paths tracked so far (for the summaries).
    pub paths: u64,
}

/// The end of one moved point.
#[derive(Clone, Debug)]
pub struct Moved {
    /// Affine coordinates when the path ended at a finite solution of `[G; L₁]`.
    pub x: Option<Vec<C64>>,
    /// Its classification at t = 1.
    pub endpoint: Endpoint,
}

impl<'b> Mover<'b> {
    pub fn new(
        fixed: Vec<Polynomial>,
        variables: Vec<String>,
        tracker: TrackerOptions,
        backend: &'b mut dyn Backend,
    ) -> Mover<'b> {
        Mover {
            fixed,
            variables,
            tracker,
            backend,
            paths: 0,
        }
    }

    /// The square target system `[G; L]`.
    pub fn target(&self, slices: &Slices) -> System {
        let mut equations = self.fixed.clone();
        equations.extend(slices.polynomials());
        System {
            name: "sliced".into(),
            description: String::new(),
            variables: self.variables.clone(),
            equations,
        }
    }

    /// Tracks `points` (zeros of `[G; from]`) to zeros of `[G; to]` along the homotopy of
    /// the module doc with this `gamma`; one result per point, in order.
    pub fn move_points(
        &mut self,
        from: &Slices,
        to: &Slices,
        gamma: C64,
        points: &[Vec<C64>],
    ) -> Result<Vec<Moved>> {
        if points.is_empty() {
            // No homotopy to build: on the GPU that would compile kernels for nothing.
            return Ok(Vec::new());
        }
        let n = self.variables.len();
        let one = C64::new(1.0, 0.0);
        let mut eqs: Vec<Vec<(C64, Vec<i32>, f64)>> = self
            .fixed
            .iter()
            .map(|g| terms_with_lift(g, one, 0.0))
            .collect();
        for (l0, l1) in from.polynomials().iter().zip(to.polynomials()) {
            let mut terms = terms_with_lift(&l1, one, 1.0);
            terms.extend(terms_with_lift(l0, gamma, 0.0));
            terms.extend(terms_with_lift(l0, -gamma, 1.0));
            eqs.push(terms);
        }
        let homotopy = Homotopy::from_affine_terms(n, eqs);
        let target = self.target(to);
        // Equations of moderate size, as the solver's refinement assumes (dividing by a power
        // of two does not move the zeros).
        let (target, _) = target.equilibrated();
        let mut refiner = Refiner::new(&target, self.tracker.tau_end);
        refiner.track_near_one(&homotopy);
        self.backend.expect_paths(points.len() as u128);
        self.backend.set_homotopy(&homotopy)?;
        let mut starts = points.iter().enumerate().map(|(i, x)| {
            let mut y: Vec<C64> = x.clone();
            y.push(one);
            let norm = y.iter().map(|v| v.norm_sqr()).sum::<f64>().sqrt();
            y.iter_mut().for_each(|v| *v /= norm);
            StartPoint {
                path: i as u64,
                y,
                tau: MOVE_TAU_START,
                log: false,
                lifts: None,
                steps: (0, 0),
            }
        });
        let mut ends = Vec::with_capacity(points.len());
        track_all(
            self.backend,
            &homotopy,
            &self.tracker,
            &mut starts,
            &mut |e| {
                ends.push(e);
                Ok(())
            },
        )?;
        self.paths += points.len() as u64;
        let mut out: Vec<Option<Moved>> = vec![None; points.len()];
        let refined: Vec<Endpoint> = {
            use rayon::prelude::*;
            ends.into_par_iter().map(|e| refiner.process(e)).collect()
        };
        for e in refined {
            let x = if e.status.is_finite() {
                e.coordinates.clone()
            } else {
                None
            };
            let i = e.path as usize;
            out[i] = Some(Moved { x, endpoint: e });
        }
        Ok(out
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                m.unwrap_or_else(|| Moved {
                    x: None,
                    endpoint: Endpoint::new(i as u64, crate::post::Status::Failed),
                })
            })
            .collect())
    }
}

/// `‖a − b‖∞ / (1 + ‖b‖∞)`: the distance the clustering of solutions uses.
pub fn relative_distance(a: &[C64], b: &[C64]) -> f64 {
    let scale = 1.0 + b.iter().map(|v| v.norm()).fold(0.0, f64::max);
    a.iter()
        .zip(b)
        .map(|(u, v)| (u - v).norm())
        .fold(0.0, f64::max)
        / scale
}

/// The index of the point of `points` within `tol` ([`relative_distance`]) of `x`, the
/// nearest one when several are.
pub fn nearest_within(points: &[Vec<C64>], x: &[C64], tol: f64) -> Option<usize> {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| (i, relative_distance(x, p)))
        .filter(|&(_, d)| d <= tol)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}
