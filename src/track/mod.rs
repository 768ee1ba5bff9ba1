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
pub mod options;
pub mod path;
pub mod resident;
pub mod start_point;

use crate::backend::directions::DirectionsOut;
use crate::backend::Backend;
use crate::error::Result;
use crate::eval::{Points, Residual};
use crate::homotopy::Homotopy;
use num_complex::Complex64 as C64;
pub use options::{
    reason_kind, TrackerOptions, NEAR_TORIC_INFINITY_ETA, RETRACK_ETA, TIME_BOUND_REASON,
};
pub use path::{PathEnd, PathState, TrackCode};
pub use start_point::StartPoint;

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
