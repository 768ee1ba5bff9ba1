//! `pathtrack bench step`: 100 (or `steps`) consecutive Euler–Newton steps — one Euler
//! prediction and one Newton iteration, two direction solves — of `p` paths, entirely on
//! the device (T. Chen §8, Tables 1–2). Start points are uploaded before the clock starts;
//! inside the timed region there are no host transfers. Timed with CUDA events after a
//! warm-up; optionally one step is captured as a CUDA graph and replayed (fewer launch gaps
//! at small p). Batches beyond the device memory are cut into chunks timed one after another.

use super::{grid1, i32_of, CudaBackend, PointKinds, SolveOperands};
use crate::error::{Error, Result};
use crate::gpu::device::{cuda_err, Timer};
use cudarc::driver::PushKernelArg;
use num_complex::Complex64 as C64;
use rand::{Rng, SeedableRng};

/// Result of one timed run.
#[derive(Clone, Debug)]
pub struct StepTiming {
    pub p: usize,
    pub steps: usize,
    /// Device time of all chunks' timed loops, milliseconds.
    pub ms: f64,
    pub chunks: usize,
    /// Whether the steps ran as CUDA-graph replays.
    pub graph: bool,
    /// Fraction of paths whose coordinates are finite after the run (sanity check).
    pub finite_fraction: f64,
    /// Device time of one evaluation (log + extended Jacobians) and of one direction solve
    /// (the selected [`super::SolveMethod`]) of the last chunk, milliseconds (mean of 10).
    pub eval_ms: f64,
    pub solve_ms: f64,
}

impl CudaBackend {
    /// Queues one Euler–Newton step of `q` resident points (buffers y, tau).
    fn queue_step(&self, q: usize, h: f64) -> Result<()> {
        let b = self
            .bufs
            .as_ref()
            .ok_or_else(|| Error::Internal("CUDA buffers not allocated".into()))?;
        let l = self.loaded()?;
        let s = &self.dev.stream;
        let pi = i32_of(q)?;
        let (y, tau, y1, tau1) = (b.y.ptr, b.tau.ptr, b.y1.ptr, b.tau1.ptr);
        let (eu, ne, co) = (b.euler.ptr, b.newton.ptr, b.cond.ptr);
        self.queue_directions(q, y, tau, PointKinds::default(), eu, ne, co)?;
        unsafe {
            s.launch_builder(&l.k.euler_predict)
                .arg(&y)
                .arg(&tau)
                .arg(&eu)
                .arg(&y1)
                .arg(&tau1)
                .arg(&h)
                .arg(&pi)
                .launch(grid1(q * l.nn))
        }
        .map_err(|e| cuda_err("cuLaunchKernel(euler_predict)", e))?;
        self.queue_directions(q, y1, tau1, PointKinds::default(), eu, ne, co)?;
        unsafe {
            s.launch_builder(&l.k.newton_correct)
                .arg(&y1)
                .arg(&ne)
                .arg(&tau1)
                .arg(&y)
                .arg(&tau)
                .arg(&pi)
                .launch(grid1(q))
        }
        .map_err(|e| cuda_err("cuLaunchKernel(newton_correct)", e))?;
        Ok(())
    }

    /// Times `steps` Euler–Newton steps (step `dt` in τ) of `p` random paths of the loaded
    /// homotopy (`Backend::set_homotopy` first).
    pub fn time_steps(
        &mut self,
        p: usize,
        steps: usize,
        dt: f64,
        use_graph: bool,
        seed: u64,
    ) -> Result<StepTiming> {
        let nn = self.loaded()?.nn;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let timer = Timer::new(&self.dev)?;
        let (mut done, mut ms, mut chunks, mut finite, mut graph_used) = (0, 0.0, 0, 0usize, false);
        let (mut eval_ms, mut solve_ms) = (0.0, 0.0);
        while done < p {
            let want = self.chunk_for(p - done)?;
            let q = self.ensure(want, false)?;
            // random unit start points at τ = −2
            let mut ys = vec![C64::new(0.0, 0.0); q * nn];
            for i in 0..q {
                let mut s = 0.0;
                for j in 0..nn {
                    let v = C64::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5);
                    s += v.norm_sqr();
                    ys[i * nn + j] = v;
                }
                let inv = 1.0 / s.sqrt();
                for j in 0..nn {
                    ys[i * nn + j] *= inv;
                }
            }
            let taus = vec![C64::new(-2.0, 0.0); q];
            self.dev.bind()?;
            {
                let b = self.bufs.as_ref().unwrap();
                self.dev.htod(&b.y, &ys)?;
                self.dev.htod(&b.tau, &taus)?;
            }
            // warm-up (also first touch of cuBLAS kernels)
            for _ in 0..2 {
                self.queue_step(q, dt)?;
            }
            self.dev.sync()?;
            let graph = if use_graph {
                self.capture_step(q, dt).ok()
            } else {
                None
            };
            if let Some(g) = &graph {
                g.launch().map_err(|e| cuda_err("cuGraphLaunch", e))?;
                self.dev.sync()?;
                graph_used = true;
            }
            timer.start(&self.dev)?;
            for _ in 0..steps {
                match &graph {
                    Some(g) => g.launch().map_err(|e| cuda_err("cuGraphLaunch", e))?,
                    None => self.queue_step(q, dt)?,
                }
            }
            ms += timer.stop_ms(&self.dev)?;
            drop(graph);
            {
                let b = self.bufs.as_ref().unwrap();
                timer.start(&self.dev)?;
                for _ in 0..10 {
                    self.queue_eval(
                        q,
                        b.y.ptr,
                        b.tau.ptr,
                        PointKinds::default(),
                        b.z.ptr,
                        b.e.ptr,
                        b.jac.ptr,
                    )?;
                }
                eval_ms = timer.stop_ms(&self.dev)? / 10.0;
                timer.start(&self.dev)?;
                for _ in 0..10 {
                    self.queue_solve(
                        q,
                        SolveOperands {
                            jac: b.jac.ptr,
                            y: b.y1.ptr,
                            logm: 0,
                            euler: b.euler.ptr,
                            newton: b.newton.ptr,
                            cond: b.cond.ptr,
                        },
                    )?;
                }
                solve_ms = timer.stop_ms(&self.dev)? / 10.0;
            }
            let b = self.bufs.as_ref().unwrap();
            self.dev.dtoh(&mut ys, &b.y)?;
            finite += (0..q)
                .filter(|&i| {
                    ys[i * nn..(i + 1) * nn]
                        .iter()
                        .all(|v| v.re.is_finite() && v.im.is_finite())
                })
                .count();
            done += q;
            chunks += 1;
        }
        Ok(StepTiming {
            p,
            steps,
            ms,
            chunks,
            graph: graph_used,
            finite_fraction: finite as f64 / p as f64,
            eval_ms,
            solve_ms,
        })
    }

    /// Captures one step of `q` points as a CUDA graph.
    fn capture_step(&self, q: usize, dt: f64) -> Result<cudarc::driver::CudaGraph> {
        self.dev.capture_graph(|| self.queue_step(q, dt))
    }
}
