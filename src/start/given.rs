//! Start points given with their homotopy: the solutions of a start member of a family (or
//! of a user's start system) at `t = 0` of a homotopy in τ-form. [`crate::solver::solve`]
//! tracks them like the start points of its own start systems
//! ([`crate::solver::SolveOptions::given`]): the same tracker, endgame, refinement,
//! recovery rounds and classification, on any backend.

use crate::homotopy::Homotopy;
use crate::track::StartPoint;
use num_complex::Complex64 as C64;
use std::sync::Arc;

/// τ at which the given start points begin: `t₀ = e^{-16} ≈ 1.1e-7`. A start point is a
/// solution at `t = 0`; at `t₀` the homotopy has moved by `O(t₀)`, which the start
/// refinement's Newton steps absorb (as for total-degree starts, whose default τ₀ this is).
pub const GIVEN_TAU_START: f64 = -16.0;

/// A homotopy and its start points, path `i` starting at `points[i]`.
#[derive(Clone, Debug)]
pub struct GivenStart {
    pub homotopy: Homotopy,
    /// Affine start points (`n` coordinates each).
    pub points: Vec<Vec<C64>>,
    /// τ at which the paths start.
    pub tau: f64,
    /// The summary's `start` ("parameter", "start-system").
    pub name: String,
    /// The summary's `start_reason`: where the start points came from.
    pub reason: String,
}

impl GivenStart {
    /// Homogeneous coordinates `(x, 1)/‖(x, 1)‖` of an affine point.
    pub fn homogeneous(x: &[C64]) -> Vec<C64> {
        let mut y: Vec<C64> = x.to_vec();
        y.push(C64::new(1.0, 0.0));
        let norm = y.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        y.iter_mut().for_each(|z| *z /= norm);
        y
    }

    /// The start points of every path, or of the paths `only` (sorted indices).
    pub fn start_points<'a>(
        &'a self,
        only: Option<Arc<Vec<u64>>>,
    ) -> Box<dyn Iterator<Item = StartPoint> + 'a> {
        let point = move |i: u64| StartPoint {
            path: i,
            y: GivenStart::homogeneous(&self.points[i as usize]),
            tau: self.tau,
            log: false,
            lifts: None,
            steps: (0, 0),
        };
        match only {
            None => Box::new((0..self.points.len() as u64).map(point)),
            Some(ids) => Box::new(
                (0..ids.len())
                    .map(move |k| ids[k])
                    .filter(|&i| (i as usize) < self.points.len())
                    .map(point),
            ),
        }
    }
}
