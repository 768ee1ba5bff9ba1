//! CPU backend: the batch is cut into chunks of [`CHUNK`] points, chunks run on a rayon
//! pool of an explicit size; inside a chunk the evaluation is two GEMMs
//! ([`crate::eval::cpu`]) and each point's directions come from one small QR.
//! Results do not depend on the number of threads.

use super::{solve_directions_one, Backend, DirectionsOut};
use crate::error::{Error, Result};
use crate::eval::{cpu as eval_cpu, EvalLayout, Points};
use crate::homotopy::Homotopy;
use num_complex::Complex64 as C64;
use rayon::prelude::*;

/// From this τ on (t ≥ e^{−1}), at projective points with real τ, the residual column of
/// the extended Jacobian is recomputed in double-double ([`crate::eval::dd`]) before the
/// directions are solved: Newton then converges near solutions with condition numbers up
/// to ~1e15. Earlier on the paths are well conditioned and the extra evaluation is skipped.
pub const ACCURATE_RESIDUAL_TAU: f64 = -1.0;

/// Replaces the `H` column of the points' extended Jacobians by its double-double value
/// where [`ACCURATE_RESIDUAL_TAU`] says so (and double-double applies).
pub fn accurate_residuals(layout: &EvalLayout, pts: &Points<'_>, ext: &mut [C64]) {
    let (n, nh, m) = (layout.n, layout.nh, layout.m);
    let (w, el) = (nh + 2, layout.ext_len());
    let mut h = vec![C64::new(0.0, 0.0); n];
    for (i, tau) in pts.taus.iter().enumerate() {
        if pts.is_log(i) || tau.im != 0.0 || tau.re < ACCURATE_RESIDUAL_TAU {
            continue;
        }
        let y = &pts.ys[i * nh..(i + 1) * nh];
        let lifts = pts.lifts.map(|l| &l[i * m..(i + 1) * m]);
        if crate::eval::dd::scaled_values(layout, y, tau.re, lifts, &mut h) {
            for (k, v) in h.iter().enumerate() {
                ext[i * el + k * w + nh + 1] = *v;
            }
        }
    }
}

/// Points per chunk: large enough for the GEMM to pay off, small enough to balance threads.
pub const CHUNK: usize = 32;

pub struct CpuBackend {
    pool: rayon::ThreadPool,
    threads: usize,
    layout: Option<EvalLayout>,
}

impl CpuBackend {
    /// `threads = 0` uses all cores.
    pub fn new(threads: usize) -> Result<CpuBackend> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| Error::Internal(format!("thread pool: {e}")))?;
        let threads = pool.current_num_threads();
        Ok(CpuBackend {
            pool,
            threads,
            layout: None,
        })
    }

    pub fn threads(&self) -> usize {
        self.threads
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
        self.pool.install(|| {
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

    fn directions(&mut self, pts: &Points<'_>, out: DirectionsOut<'_>) -> Result<()> {
        let layout = self.layout()?;
        let (n, nh, m, el) = (layout.n, layout.nh, layout.m, layout.ext_len());
        let p = pts.len();
        self.pool.install(|| {
            out.euler
                .par_chunks_mut(CHUNK * nh)
                .zip(out.newton.par_chunks_mut(CHUNK * nh))
                .zip(out.cond.par_chunks_mut(CHUNK))
                .enumerate()
                .for_each_init(
                    || {
                        (
                            eval_cpu::Scratch::default(),
                            Vec::<C64>::new(),
                            vec![C64::new(0.0, 0.0); nh * nh],
                            vec![C64::new(0.0, 0.0); nh * 2],
                        )
                    },
                    |(s, ext, a, b), (c, ((eu, ne), co))| {
                        let start = c * CHUNK;
                        let q = CHUNK.min(p - start);
                        let chunk = pts.slice(start, q, nh, m);
                        ext.clear();
                        ext.resize(q * el, C64::new(0.0, 0.0));
                        eval_cpu::extended_jacobians(layout, &chunk, ext, s);
                        accurate_residuals(layout, &chunk, ext);
                        for i in 0..q {
                            co[i] = solve_directions_one(
                                n,
                                &ext[i * el..(i + 1) * el],
                                &chunk.ys[i * nh..(i + 1) * nh],
                                chunk.is_log(i),
                                a,
                                b,
                                &mut eu[i * nh..(i + 1) * nh],
                                &mut ne[i * nh..(i + 1) * nh],
                            );
                        }
                    },
                );
        });
        Ok(())
    }
}
