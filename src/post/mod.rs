//! Post-processing of path endpoints: Newton refinement on the target system, condition
//! number, residual, classification, and clustering into distinct solutions.

pub mod dedup;

use crate::backend::{fill_direction_system, solve_directions_one};
use crate::endgame::{homogenizing_valuation, VALUATION_TOL};
use crate::eval::{cpu as eval_cpu, EvalLayout, Points};
use crate::homotopy::Homotopy;
use crate::system::System;
use crate::track::{PathEnd, TrackCode};
use num_complex::Complex64 as C64;
use serde::Serialize;

/// Condition numbers above this make an endpoint singular.
pub const SINGULAR_COND: f64 = 1e12;
/// `|y_n| / ‖y‖` below this puts a refined endpoint at infinity.
pub const INFINITY_TOL: f64 = 1e-8;
/// A nonsingular endpoint must have a relative residual below this.
pub const RESIDUAL_TOL: f64 = 1e-8;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Nonsingular,
    Singular,
    AtInfinity,
    Failed,
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
    /// Relative residual `max_k |f_k(x)| / (1 + Σ|c x^a|)` (finite endpoints).
    pub residual: f64,
    /// 2-norm condition number of `[∂F/∂y; y*]` with each equation scaled by its largest term.
    pub condition: f64,
    pub accepted: u32,
    pub rejected: u32,
    /// Estimated valuation of the homogenizing coordinate, when the path stopped early.
    pub valuation: Option<f64>,
    /// 0 for the first tracking, k for the k-th re-tracking with tighter tolerances.
    pub attempt: u8,
}

impl Endpoint {
    pub fn steps(&self) -> u32 {
        self.accepted + self.rejected
    }
}

/// Refines and classifies endpoints against the target system.
pub struct Refiner<'a> {
    system: &'a System,
    layout: EvalLayout,
    tau_end: f64,
}

impl<'a> Refiner<'a> {
    pub fn new(system: &'a System, tau_end: f64) -> Refiner<'a> {
        Refiner {
            system,
            layout: EvalLayout::new(&Homotopy::target_only(system)),
            tau_end,
        }
    }

    /// Projective Newton on the target system; returns the last correction norm and the
    /// direction matrix's condition number at the final point.
    fn newton(&self, y: &mut [C64], iters: usize) -> (f64, f64) {
        let n = self.layout.n;
        let nh = n + 1;
        let mut scratch = eval_cpu::Scratch::default();
        let mut ext = vec![C64::new(0.0, 0.0); self.layout.ext_len()];
        let (mut a, mut b) = (
            vec![C64::new(0.0, 0.0); nh * nh],
            vec![C64::new(0.0, 0.0); nh * 2],
        );
        let (mut eu, mut ne) = (vec![C64::new(0.0, 0.0); nh], vec![C64::new(0.0, 0.0); nh]);
        let tau = [C64::new(0.0, 0.0)];
        let mut last = f64::INFINITY;
        for _ in 0..iters {
            eval_cpu::extended_jacobians(
                &self.layout,
                &Points::projective(y, &tau),
                &mut ext,
                &mut scratch,
            );
            solve_directions_one(n, &ext, y, false, &mut a, &mut b, &mut eu, &mut ne);
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
            last = eta;
            if eta < 1e-15 {
                break;
            }
        }
        eval_cpu::extended_jacobians(
            &self.layout,
            &Points::projective(y, &tau),
            &mut ext,
            &mut scratch,
        );
        (last, self.condition(&ext, y))
    }

    /// Singular-value condition number of the row-equilibrated `[J_y; y*]`
    /// ([`crate::backend::fill_direction_system`]).
    fn condition(&self, ext: &[C64], y: &[C64]) -> f64 {
        let nh = self.layout.nh;
        let (mut a, mut b) = (
            vec![C64::new(0.0, 0.0); nh * nh],
            vec![C64::new(0.0, 0.0); nh * 2],
        );
        fill_direction_system(self.layout.n, ext, y, false, &mut a, &mut b);
        let m = nalgebra::DMatrix::<C64>::from_fn(nh, nh, |i, j| a[i * nh + j]);
        let sv = m.singular_values();
        let (mx, mn) = sv
            .iter()
            .fold((0.0f64, f64::INFINITY), |(a, b), &s| (a.max(s), b.min(s)));
        if mn == 0.0 || !mn.is_finite() {
            f64::INFINITY
        } else {
            mx / mn
        }
    }

    /// Affine coordinates of a homogeneous point and their relative residual.
    fn affine(&self, y: &[C64]) -> (Vec<C64>, f64) {
        let nh = y.len();
        let x: Vec<C64> = y[..nh - 1].iter().map(|v| v / y[nh - 1]).collect();
        let residual = self.system.relative_residual(&x);
        (x, residual)
    }

    /// Classifies one tracked path.
    pub fn process(&self, end: PathEnd) -> Endpoint {
        let nh = self.layout.nh;
        let mut y = end.y;
        let mut ep = Endpoint {
            path: end.path,
            status: Status::Failed,
            reason: None,
            projective: Vec::new(),
            coordinates: None,
            residual: f64::NAN,
            condition: end.cond,
            accepted: end.accepted,
            rejected: end.rejected,
            valuation: None,
            attempt: 0,
        };
        match end.code {
            TrackCode::Reached => {
                let (_eta, cond) = self.newton(&mut y, 8);
                ep.condition = cond;
                let rel = y[nh - 1].norm();
                if rel < INFINITY_TOL {
                    ep.status = Status::AtInfinity;
                } else {
                    let (x, residual) = self.affine(&y);
                    ep.coordinates = Some(x);
                    ep.residual = residual;
                    let v = homogenizing_valuation(&end.samples, self.tau_end);
                    ep.valuation = v;
                    ep.status = if cond < SINGULAR_COND && residual < RESIDUAL_TOL {
                        Status::Nonsingular
                    } else if v.is_some_and(|v| v > 2.0 * VALUATION_TOL) {
                        // Reached t = 1 only because Newton stagnated at the rounding level
                        // while |y_n| was still shrinking like s^v: a diverging path.
                        ep.reason = Some(format!("diverging (valuation {:.3})", v.unwrap_or(0.0)));
                        Status::AtInfinity
                    } else if residual < RESIDUAL_TOL.sqrt() {
                        Status::Singular
                    } else {
                        // Newton did not reach the target system here: a diverging path
                        // whose homogenizing coordinate is small but not yet below
                        // INFINITY_TOL (seen on eco-8 with the CUDA backend).
                        ep.reason = Some(format!(
                            "no convergence at t = 1 (residual {residual:.1e}, |y_n| = {rel:.1e})"
                        ));
                        if rel < 1e-3 {
                            Status::AtInfinity
                        } else {
                            Status::Failed
                        }
                    };
                }
            }
            TrackCode::StoppedInEndgame(reason) => {
                let v = homogenizing_valuation(&end.samples, self.tau_end);
                ep.valuation = v;
                ep.reason = Some(reason);
                ep.status = match v {
                    Some(v) if v > VALUATION_TOL => Status::AtInfinity,
                    Some(_) => Status::Singular,
                    None => Status::Failed,
                };
                if ep.status == Status::Singular && y[nh - 1].norm() < INFINITY_TOL {
                    ep.status = Status::AtInfinity;
                }
            }
            TrackCode::Failed(reason) => {
                ep.reason = Some(reason);
            }
        }
        if !ep.status.is_finite() {
            ep.coordinates = None;
            ep.residual = f64::NAN;
        } else if ep.coordinates.is_none() {
            let (x, residual) = self.affine(&y);
            ep.coordinates = Some(x);
            ep.residual = residual;
        }
        ep.projective = y;
        ep
    }
}

/// True when every coordinate is real up to `tol` relative to the point's norm.
pub fn is_real(x: &[C64], tol: f64) -> bool {
    let scale = 1.0 + x.iter().map(|z| z.norm()).fold(0.0, f64::max);
    x.iter().all(|z| z.im.abs() <= tol * scale)
}
