//! CPU backend: the batch is cut into chunks of [`CHUNK`] points, chunks run on a rayon
//! pool of an explicit size; inside a chunk the evaluation is two GEMMs
//! ([`crate::eval::cpu`]) and each point's directions come from one small LU.
//! Results do not depend on the number of threads.

use super::{resolve_directions_lu, solve_directions_lu, Backend, DirectionsOut, LuScratch};
use crate::error::{Error, Result};
use crate::eval::{cpu as eval_cpu, EvalLayout, Points, Residual};
use crate::homotopy::Homotopy;
use num_complex::Complex64 as C64;
use rayon::prelude::*;
use std::sync::Arc;

/// From this τ on (t ≥ e^{−1}; on a Cauchy loop, Re τ), at projective points, the residual
/// column of the extended Jacobian may be recomputed in double-double
/// ([`crate::eval::dd`]) and the directions solved again: Newton then converges near
/// solutions with condition numbers up to ~1e15. Earlier on the paths are well conditioned.
pub const ACCURATE_RESIDUAL_TAU: f64 = -1.0;

/// True where the residual of point `i` is to be recomputed in double-double (never in log
/// coordinates): always for [`Residual::DoubleDouble`], never for [`Residual::EulerOnly`],
/// and for [`Residual::Adaptive`] from `Re τ ≥` [`ACCURATE_RESIDUAL_TAU`] on where `noisy()`
/// (the double residual's rounding would spoil the Newton step).
pub fn wants_dd(pts: &Points<'_>, i: usize, noisy: impl FnOnce() -> bool) -> bool {
    if pts.is_log(i) {
        return false;
    }
    match pts.residual(i) {
        Residual::EulerOnly => false,
        Residual::DoubleDouble => true,
        Residual::Adaptive => pts.taus[i].re >= ACCURATE_RESIDUAL_TAU && noisy(),
    }
}

/// The residual is recomputed in double-double where the Newton step's error from the
/// residual's rounding, about `κ · max_k ε·Σ|terms_k| / max_j |∂h_k/∂y_j|` (κ the
/// solve's condition estimate; rows are equilibrated by their largest derivative), exceeds
/// this: 1e-4 of the corrector's tolerance, because the QR estimate of κ can be low by two
/// orders of magnitude and more near the ill-conditioned solutions of chandra-n. Measured
/// (polyhedral chandra-8, seeds 1–5, 2 threads): 1e-13 finds all 128 solutions every time,
/// about 15 % faster than double-double at every point near t = 1; 1e-11 is 2–4× faster
/// still but lost 5 solutions of seed 2 (paths stopped by step-size underflow when Newton,
/// with a residual taken as good enough, stopped contracting).
pub const DD_STEP_NOISE: f64 = 1e-13;

/// Replaces the `H` column of point `i` of `pts` in `ext` (that point's extended Jacobian
/// among `pts`') by its double-double value; false (and `ext` unchanged) where
/// double-double does not apply (log coordinates, negative exponents, out of range).
pub fn accurate_residual(layout: &EvalLayout, pts: &Points<'_>, i: usize, ext: &mut [C64]) -> bool {
    let el = layout.ext_len();
    accurate_residual_of(layout, pts, i, &mut ext[i * el..(i + 1) * el])
}

/// [`accurate_residual`] with `ext_i` point `i`'s own extended Jacobian (`n × (N+2)`).
fn accurate_residual_of(
    layout: &EvalLayout,
    pts: &Points<'_>,
    i: usize,
    ext_i: &mut [C64],
) -> bool {
    let (nh, m) = (layout.nh, layout.m);
    let w = nh + 2;
    if pts.is_log(i) {
        return false;
    }
    let y = &pts.ys[i * nh..(i + 1) * nh];
    let lifts = pts.lifts.map(|l| &l[i * m..(i + 1) * m]);
    crate::eval::dd::scaled_values_with(layout, y, pts.taus[i], lifts, |h| {
        for (k, v) in h.iter().enumerate() {
            ext_i[k * w + nh + 1] = *v;
        }
    })
    .is_some()
}

/// The Newton step's expected error from a residual computed in double at point `i`
/// (see [`DD_STEP_NOISE`]); `scratch` holds the terms of the evaluation that filled `ext`.
fn residual_step_noise(
    layout: &EvalLayout,
    i: usize,
    ext_i: &[C64],
    scratch: &eval_cpu::Scratch,
    cond: f64,
) -> f64 {
    let (nh, w) = (layout.nh, layout.nh + 2);
    let worst = (0..layout.n)
        .map(|k| {
            let row = &ext_i[k * w..k * w + nh];
            let scale = row.iter().fold(0.0f64, |a, z| a.max(z.norm_sqr()));
            f64::EPSILON * scratch.term_magnitude(layout, i, k) / scale.sqrt()
        })
        .fold(0.0f64, f64::max);
    cond * worst
}

/// Points per chunk: large enough for the GEMM to pay off, small enough to balance threads.
pub const CHUNK: usize = 32;

/// The directions computed on the host: chunks of [`CHUNK`] points on an explicit rayon
/// pool (a round of a single chunk evaluated on the calling thread). Chunk boundaries never
/// depend on the thread count: a point's directions depend on the chunk it is evaluated in
/// (the evaluation's GEMM), and the same seed must give the same bits for every
/// `--threads`. In the tail of a run, with fewer chunks than threads, the points' solves
/// and double-double residuals (most of the work near t = 1) go to the pool one point
/// each. The CPU backend is this; the CUDA backend uses it for rounds too small for the
/// device, for ill-conditioned points near t = 1 and for the resident slots' host rounds.
pub struct HostDirections {
    pool: Arc<rayon::ThreadPool>,
    /// Buffers of rounds run on the calling thread.
    scratch: ChunkScratch,
}

impl HostDirections {
    /// `threads = 0` uses all cores.
    pub fn new(threads: usize) -> Result<HostDirections> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("host-{i}"))
            .build()
            .map_err(|e| Error::Internal(format!("thread pool: {e}")))?;
        Ok(HostDirections {
            pool: Arc::new(pool),
            scratch: ChunkScratch::default(),
        })
    }

    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// The pool the directions run on (the tracker advances a round's paths on it too).
    pub fn pool(&self) -> Arc<rayon::ThreadPool> {
        Arc::clone(&self.pool)
    }

    /// Euler and Newton directions and condition estimates of every point of `pts`.
    /// Rounds with fewer chunks than threads also spread their chunks' points over the
    /// pool (see `directions_chunk`; [`POINTS_IN_PARALLEL`]).
    pub fn run(&mut self, layout: &EvalLayout, pts: &Points<'_>, out: DirectionsOut<'_>) {
        let nh = layout.nh;
        let size = chunk_size(pts.len());
        let chunks = pts.len().div_ceil(size);
        let spread = chunks < self.threads() && pts.len() >= POINTS_IN_PARALLEL;
        if chunks <= 1 {
            let s = &mut self.scratch;
            let pool = spread.then_some(&*self.pool);
            directions_chunk(
                layout, pts, 0, size, s, out.euler, out.newton, out.cond, pool,
            );
            return;
        }
        let pool: &rayon::ThreadPool = &self.pool;
        pool.install(|| {
            out.euler
                .par_chunks_mut(size * nh)
                .zip(out.newton.par_chunks_mut(size * nh))
                .zip(out.cond.par_chunks_mut(size))
                .enumerate()
                .for_each_init(ChunkScratch::default, |s, (c, ((eu, ne), co))| {
                    let pool = spread.then_some(pool);
                    directions_chunk(layout, pts, c, size, s, eu, ne, co, pool)
                });
        });
    }
}

/// Points per chunk of a round of `p` points: [`CHUNK`], or for rounds under
/// `16·CHUNK` points `⌈p/16⌉` (at least [`MIN_CHUNK`]), so that a small round still has
/// evaluations for 16 threads: the GPU's host rounds (chandra-12: ~75 ill-conditioned
/// paths per round) ran their evaluations on three threads. It depends on `p` alone, never
/// on the thread count (a point's directions depend on its chunk, see [`CHUNK`]).
pub fn chunk_size(p: usize) -> usize {
    p.div_ceil(16).clamp(MIN_CHUNK, CHUNK)
}

/// The smallest chunk of [`chunk_size`].
pub const MIN_CHUNK: usize = 8;

/// Rounds of at least this many points spread them over the threads when they have fewer
/// chunks than threads (below it a round's points cost less than waking the pool).
pub const POINTS_IN_PARALLEL: usize = 4;

pub struct CpuBackend {
    host: HostDirections,
    layout: Option<EvalLayout>,
}

impl CpuBackend {
    /// `threads = 0` uses all cores.
    pub fn new(threads: usize) -> Result<CpuBackend> {
        Ok(CpuBackend {
            host: HostDirections::new(threads)?,
            layout: None,
        })
    }

    pub fn threads(&self) -> usize {
        self.host.threads()
    }

    /// The loaded homotopy's layout and the pool (for host paths stepped in groups).
    pub fn host_engine(&self) -> Option<(&EvalLayout, Arc<rayon::ThreadPool>)> {
        Some((self.layout.as_ref()?, self.host.pool()))
    }

    fn layout(&self) -> Result<&EvalLayout> {
        self.layout
            .as_ref()
            .ok_or_else(|| Error::Internal("backend used before set_homotopy".into()))
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> String {
        "cpu".into()
    }

    fn set_homotopy(&mut self, h: &Homotopy) -> Result<()> {
        self.layout = Some(EvalLayout::new(h));
        Ok(())
    }

    fn extended_jacobians(&mut self, pts: &Points<'_>, out: &mut [C64]) -> Result<()> {
        let layout = self.layout()?;
        let (nh, m, el) = (layout.nh, layout.m, layout.ext_len());
        let p = pts.len();
        self.host.pool.install(|| {
            out.par_chunks_mut(CHUNK * el).enumerate().for_each_init(
                eval_cpu::Scratch::default,
                |s, (c, o)| {
                    let start = c * CHUNK;
                    let chunk = pts.slice(start, CHUNK.min(p - start), nh, m);
                    eval_cpu::extended_jacobians(layout, &chunk, o, s)
                },
            );
        });
        Ok(())
    }

    fn host_pool(&self) -> Option<Arc<rayon::ThreadPool>> {
        Some(self.host.pool())
    }

    fn directions(&mut self, pts: &Points<'_>, out: DirectionsOut<'_>) -> Result<()> {
        let layout = self
            .layout
            .as_ref()
            .ok_or_else(|| Error::Internal("backend used before set_homotopy".into()))?;
        self.host.run(layout, pts, out);
        Ok(())
    }
}

/// Buffers of one chunk's evaluation and solves (one per thread).
#[derive(Default)]
pub struct ChunkScratch {
    eval: eval_cpu::Scratch,
    ext: Vec<C64>,
    point: LuScratch,
}

/// The directions of `pts` on the calling thread, in the chunks [`HostDirections::run`]
/// would cut (a point's bits are the same as there): for groups of paths that a thread
/// steps on its own ([`crate::track::resident`]'s host paths).
pub fn directions_alone(
    layout: &EvalLayout,
    pts: &Points<'_>,
    out: DirectionsOut<'_>,
    s: &mut ChunkScratch,
) {
    let nh = layout.nh;
    let size = chunk_size(pts.len());
    for (c, ((eu, ne), co)) in out
        .euler
        .chunks_mut(size * nh)
        .zip(out.newton.chunks_mut(size * nh))
        .zip(out.cond.chunks_mut(size))
        .enumerate()
    {
        directions_chunk(layout, pts, c, size, s, eu, ne, co, None);
    }
}

/// Directions of chunk `c` (points `c·size ..`) of `pts` into `eu`, `ne`, `co` (the chunk's
/// slices of the outputs): the chunk's extended Jacobians in one evaluation, then each
/// point's solve (and double-double residual where it needs one) — on `pool` in parallel
/// when one is given (rounds with fewer chunks than threads: the tail of a run, where a
/// few hard paths are left), in order otherwise. A point's result is the same either way
/// (its solve reads only its own rows).
#[allow(clippy::too_many_arguments)]
fn directions_chunk(
    layout: &EvalLayout,
    pts: &Points<'_>,
    c: usize,
    size: usize,
    s: &mut ChunkScratch,
    eu: &mut [C64],
    ne: &mut [C64],
    co: &mut [f64],
    pool: Option<&rayon::ThreadPool>,
) {
    let (nh, m, el) = (layout.nh, layout.m, layout.ext_len());
    let start = c * size;
    let q = size.min(pts.len() - start);
    let chunk = pts.slice(start, q, nh, m);
    s.ext.clear();
    s.ext.resize(q * el, C64::new(0.0, 0.0));
    eval_cpu::extended_jacobians(layout, &chunk, &mut s.ext, &mut s.eval);
    let (eval, ext) = (&s.eval, &mut s.ext);
    let point = |p: &mut LuScratch, (i, (((ext_i, eu), ne), co)): PointOut<'_>| {
        *co = point_directions(layout, &chunk, i, ext_i, eval, p, eu, ne);
    };
    match pool {
        Some(pool) if q > 1 => pool.install(|| {
            ext.par_chunks_mut(el)
                .zip(eu.par_chunks_mut(nh))
                .zip(ne.par_chunks_mut(nh))
                .zip(co.par_iter_mut())
                .enumerate()
                .for_each_init(LuScratch::default, point)
        }),
        _ => {
            let mut p = std::mem::take(&mut s.point);
            ext.chunks_mut(el)
                .zip(eu.chunks_mut(nh))
                .zip(ne.chunks_mut(nh))
                .zip(co.iter_mut())
                .enumerate()
                .for_each(|x| point(&mut p, x));
            s.point = p;
        }
    }
}

/// One point's share of a chunk, as the zipped iterators of [`directions_chunk`] give it:
/// (index, (((extended Jacobian, Euler), Newton), condition)).
type PointOut<'a> = (
    usize,
    (((&'a mut [C64], &'a mut [C64]), &'a mut [C64]), &'a mut f64),
);

/// Point `i` of `chunk` (its extended Jacobian `ext_i`, from the evaluation that left
/// `eval`): Euler and Newton directions by LU into `eu`, `ne`, re-solved with a
/// double-double residual where [`wants_dd`] asks for one; returns the condition estimate.
#[allow(clippy::too_many_arguments)]
fn point_directions(
    layout: &EvalLayout,
    chunk: &Points<'_>,
    i: usize,
    ext_i: &mut [C64],
    eval: &eval_cpu::Scratch,
    p: &mut LuScratch,
    eu: &mut [C64],
    ne: &mut [C64],
) -> f64 {
    let (n, nh) = (layout.n, layout.nh);
    let (y, log) = (&chunk.ys[i * nh..(i + 1) * nh], chunk.is_log(i));
    let co = solve_directions_lu(n, ext_i, y, log, p, eu, ne);
    let noisy = || !(residual_step_noise(layout, i, ext_i, eval, co) <= DD_STEP_NOISE);
    if wants_dd(chunk, i, noisy) && accurate_residual_of(layout, chunk, i, ext_i) {
        resolve_directions_lu(n, ext_i, log, p, eu, ne);
    }
    co
}
