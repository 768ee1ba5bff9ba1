//! CPU backend: the batch is cut into chunks of [`CHUNK`] points, chunks run on a rayon
//! pool of an explicit size; inside a chunk the evaluation is two GEMMs
//! ([`crate::eval::cpu`]) and each point's directions come from one small QR.
//! Results do not depend on the number of threads.

use super::{solve_directions_one, Backend, DirectionsOut};
use crate::error::{Error, Result};
use crate::eval::{cpu as eval_cpu, EvalLayout};
use crate::homotopy::Homotopy;
use num_complex::Complex64 as C64;
use rayon::prelude::*;

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

    fn extended_jacobians(&mut self, ys: &[C64], taus: &[C64], out: &mut [C64]) -> Result<()> {
        let layout = self.layout()?;
        let (nh, el) = (layout.nh, layout.ext_len());
        self.pool.install(|| {
            out.par_chunks_mut(CHUNK * el)
                .zip(ys.par_chunks(CHUNK * nh))
                .zip(taus.par_chunks(CHUNK))
                .for_each_init(eval_cpu::Scratch::default, |s, ((o, y), t)| {
                    eval_cpu::extended_jacobians(layout, y, t, None, o, s)
                });
        });
        Ok(())
    }

    fn directions(
        &mut self,
        ys: &[C64],
        taus: &[C64],
        log_mode: &[bool],
        out: DirectionsOut<'_>,
    ) -> Result<()> {
        let layout = self.layout()?;
        let (n, nh, el) = (layout.n, layout.nh, layout.ext_len());
        self.pool.install(|| {
            out.euler
                .par_chunks_mut(CHUNK * nh)
                .zip(out.newton.par_chunks_mut(CHUNK * nh))
                .zip(out.cond.par_chunks_mut(CHUNK))
                .zip(ys.par_chunks(CHUNK * nh))
                .zip(taus.par_chunks(CHUNK))
                .zip(log_mode.par_chunks(CHUNK))
                .for_each_init(
                    || {
                        (
                            eval_cpu::Scratch::default(),
                            Vec::<C64>::new(),
                            vec![C64::new(0.0, 0.0); nh * nh],
                            vec![C64::new(0.0, 0.0); nh * 2],
                        )
                    },
                    |(s, ext, a, b), (((((eu, ne), co), y), t), lm)| {
                        let q = t.len();
                        ext.clear();
                        ext.resize(q * el, C64::new(0.0, 0.0));
                        eval_cpu::extended_jacobians(layout, y, t, Some(lm), ext, s);
                        for i in 0..q {
                            co[i] = solve_directions_one(
                                n,
                                &ext[i * el..(i + 1) * el],
                                &y[i * nh..(i + 1) * nh],
                                lm[i],
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
