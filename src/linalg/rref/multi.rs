//! `A X = B` with many right-hand sides over several GPUs, column-block distribution.
//!
//! B's `m` columns are cut into contiguous blocks `B_0 | B_1 | …` (sizes ⌈m/d⌉ or ⌊m/d⌋,
//! in order), one per entry of the device list; on its own host thread device `i` reduces
//! `[A | B_i]` to `[I | X_i]` by Gauss–Jordan with pivots limited to A's columns (the
//! single-GPU engines: [`CudaRref::rref_zp32`], [`CudaRref::echelonize_gpu`]), and
//! `X = [X_0 | X_1 | …]`. No communication between devices: each repeats A's elimination
//! (n³ of the n³ + 2n²m flops of Gauss–Jordan on `[A | B]`), which is small against its
//! share 2n²m/d of the right-hand-side work when m ≫ n (the seed paper's column-block
//! scheme broadcasts the panel transformation instead and splits A's columns too).

use super::cuda::{CudaRref, GpuAlgo};
use super::dense::Matrix;
use super::echelon::EchelonOptions;
use super::field::{Field, Zp32, Zp64, C64, F64};
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::time::Instant;

/// An element type with a GPU reduction of `[A | B]` (pivots limited to A's `n` columns).
pub trait MultiSolveField: Field {
    /// Reduces `aug` (n × (n + m)) in place on `g`; returns the rank of its A part.
    fn reduce_aug(
        g: &mut CudaRref,
        f: &Self,
        aug: &mut Matrix<Self::Elem>,
        n: usize,
        algo: GpuAlgo,
    ) -> Result<usize>;
}

impl MultiSolveField for Zp32 {
    /// RREF of `[A | B]` (no pivot limit on the `u32` engine): A is nonsingular iff the
    /// first n pivots are the columns 0..n.
    fn reduce_aug(
        g: &mut CudaRref,
        f: &Zp32,
        aug: &mut Matrix<u32>,
        n: usize,
        algo: GpuAlgo,
    ) -> Result<usize> {
        let (r, e, _) = g.rref_zp32(f, aug, algo)?;
        *aug = r;
        Ok(e.pivots.iter().take_while(|&&c| c < n).count())
    }
}

macro_rules! gen_reduce {
    ($t:ty) => {
        impl MultiSolveField for $t {
            fn reduce_aug(
                g: &mut CudaRref,
                f: &$t,
                aug: &mut Matrix<<$t as Field>::Elem>,
                n: usize,
                algo: GpuAlgo,
            ) -> Result<usize> {
                let opt = EchelonOptions {
                    pivot_limit: n,
                    ..Default::default()
                };
                let (e, _) = g.echelonize_gpu(f, aug, &opt, algo)?;
                Ok(e.rank)
            }
        }
    };
}

gen_reduce!(Zp64);
gen_reduce!(F64);
gen_reduce!(C64);

/// Contiguous column blocks `[c0, c1)` of `m` columns over `d ≥ 1` devices: the first
/// `m mod d` blocks have ⌈m/d⌉ columns, the others ⌊m/d⌋.
pub fn split_columns(m: usize, d: usize) -> Vec<(usize, usize)> {
    let d = d.max(1);
    let (q, r) = (m / d, m % d);
    let mut c0 = 0;
    (0..d)
        .map(|i| {
            let w = q + usize::from(i < r);
            let b = (c0, c0 + w);
            c0 += w;
            b
        })
        .collect()
}

/// Seconds of one [`MultiGpu::solve`].
#[derive(Clone, Debug, Default)]
pub struct MultiTimes {
    /// Wall time of the whole call (threads started, blocks assembled, reduced, gathered).
    pub total: f64,
    /// Wall time of each device's thread (0 for a device without columns).
    pub per_device: Vec<f64>,
    /// Columns of B given to each device.
    pub columns: Vec<usize>,
}

/// One engine per entry of a device list (an ordinal may repeat: one more context
/// stream and cuBLAS handle on the same GPU).
pub struct MultiGpu {
    engines: Vec<CudaRref>,
    ordinals: Vec<usize>,
}

impl MultiGpu {
    /// Opens every device of the list; `Error::Usage` for an empty list, `Error::Cuda` for
    /// an ordinal that does not open (no panic).
    pub fn new(devices: &[usize]) -> Result<MultiGpu> {
        if devices.is_empty() {
            return Err(Error::Usage(
                "solve on several GPUs: empty device list".into(),
            ));
        }
        let mut engines = Vec::with_capacity(devices.len());
        for &d in devices {
            engines.push(CudaRref::new(d)?);
        }
        Ok(MultiGpu {
            engines,
            ordinals: devices.to_vec(),
        })
    }

    /// The device list.
    pub fn ordinals(&self) -> &[usize] {
        &self.ordinals
    }

    /// The engines (e.g. to set `panel` or `auto_blocked_from`).
    pub fn engines_mut(&mut self) -> &mut [CudaRref] {
        &mut self.engines
    }

    /// `X` with `A X = B` for a nonsingular square `A` (n × n) and `B` (n × m), B's columns
    /// split in blocks over the devices, one host thread per device. Errors (no panic):
    /// shape mismatch, singular A (under the float tolerance of the engine), device failure.
    pub fn solve<F: MultiSolveField>(
        &mut self,
        f: &F,
        a: &Matrix<F::Elem>,
        b: &Matrix<F::Elem>,
        algo: GpuAlgo,
    ) -> Result<(Matrix<F::Elem>, MultiTimes)> {
        check_shapes(a, b)?;
        let n = a.rows;
        distribute(&mut self.engines, f, a, b, |g, aug| {
            g.dev.bind()?;
            F::reduce_aug(g, f, aug, n, algo)
        })
    }
}

/// The column-block distribution itself, over any per-device reducer (`reduce` brings
/// `[A | B_i]` to `[I | X_i]` in its first n rows and returns A's rank): one scoped host
/// thread per worker, blocks from [`split_columns`], results gathered in order.
fn distribute<W: Send, F: Field>(
    workers: &mut [W],
    f: &F,
    a: &Matrix<F::Elem>,
    b: &Matrix<F::Elem>,
    reduce: impl Fn(&mut W, &mut Matrix<F::Elem>) -> Result<usize> + Sync,
) -> Result<(Matrix<F::Elem>, MultiTimes)> {
    let n = a.rows;
    let t0 = Instant::now();
    let m = b.cols;
    let blocks = split_columns(m, workers.len());
    let reduce = &reduce;
    type Part<E> = Result<Option<(Matrix<E>, f64)>>;
    let results: Vec<Part<F::Elem>> = std::thread::scope(|s| {
        let handles: Vec<_> = workers
            .iter_mut()
            .zip(&blocks)
            .enumerate()
            .map(|(i, (g, &(c0, c1)))| {
                s.spawn(move || -> Part<F::Elem> {
                    // m = 0: the first worker still reduces A (singularity is reported).
                    if c1 == c0 && !(m == 0 && i == 0) {
                        return Ok(None);
                    }
                    let t = Instant::now();
                    let mut aug = hcat_cols(a, b, c0, c1);
                    let rank = reduce(g, &mut aug)?;
                    if rank < n {
                        return Err(Error::Usage(format!(
                            "solve with many right-hand sides: A is singular (rank {rank} < {n})"
                        )));
                    }
                    let x = aug.block(0, n, n, n + c1 - c0);
                    Ok(Some((x, t.elapsed().as_secs_f64())))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Error::Internal(
                        "a device thread of the solve panicked".into(),
                    ))
                })
            })
            .collect()
    });
    let mut x = Matrix::zeros(f, n, m);
    let mut times = MultiTimes {
        columns: blocks.iter().map(|&(c0, c1)| c1 - c0).collect(),
        ..Default::default()
    };
    let mut first_err = None;
    for (r, &(c0, c1)) in results.into_iter().zip(&blocks) {
        match r {
            Ok(Some((xi, secs))) => {
                let w = c1 - c0;
                for i in 0..n {
                    x.data[i * m + c0..i * m + c1].copy_from_slice(&xi.data[i * w..(i + 1) * w]);
                }
                times.per_device.push(secs);
            }
            Ok(None) => times.per_device.push(0.0),
            Err(e) => {
                times.per_device.push(0.0);
                first_err.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    times.total = t0.elapsed().as_secs_f64();
    Ok((x, times))
}

/// Checks the shapes of a many-right-hand-side solve: A square, B with A's row count.
fn check_shapes<E>(a: &Matrix<E>, b: &Matrix<E>) -> Result<()> {
    let n = a.rows;
    if a.cols != n || a.data.len() != n * n {
        return Err(Error::Usage(format!(
            "solve with many right-hand sides: A is {} × {}, not square",
            a.rows, a.cols
        )));
    }
    if b.rows != n || b.data.len() != b.rows * b.cols {
        return Err(Error::Usage(format!(
            "solve with many right-hand sides: A has {n} rows, B has {}",
            b.rows
        )));
    }
    Ok(())
}

/// The same column-block distribution on CPU threads (`parts ≥ 1` blocks, each reduced
/// by the CPU engine, [`super::echelonize`] with pivots limited to A's columns): the
/// CPU reference of [`MultiGpu::solve`].
pub fn solve_blocks_cpu<F: Field>(
    f: &F,
    a: &Matrix<F::Elem>,
    b: &Matrix<F::Elem>,
    parts: usize,
) -> Result<(Matrix<F::Elem>, MultiTimes)> {
    check_shapes(a, b)?;
    if parts == 0 {
        return Err(Error::Usage(
            "solve with many right-hand sides: no blocks".into(),
        ));
    }
    let n = a.rows;
    let mut workers = vec![(); parts];
    distribute(&mut workers, f, a, b, |_, aug| {
        let opt = EchelonOptions {
            pivot_limit: n,
            parallelism: super::echelon::Parallelism::None,
            ..Default::default()
        };
        Ok(super::echelon::echelonize(f, aug, &opt).rank)
    })
}

/// `[A | B[:, c0..c1]]`.
fn hcat_cols<E: Copy + Send + Sync>(
    a: &Matrix<E>,
    b: &Matrix<E>,
    c0: usize,
    c1: usize,
) -> Matrix<E> {
    let (n, w) = (a.cols, c1 - c0);
    let cols = n + w;
    let mut data = Vec::with_capacity(a.rows * cols);
    for i in 0..a.rows {
        data.extend_from_slice(a.row(i));
        data.extend_from_slice(&b.row(i)[c0..c1]);
    }
    Matrix::from_vec(a.rows, cols, data)
}

/// One-call form of [`MultiGpu::solve`]: opens the devices, solves, drops them.
pub fn solve_many_rhs<F: MultiSolveField>(
    devices: &[usize],
    f: &F,
    a: &Matrix<F::Elem>,
    b: &Matrix<F::Elem>,
    algo: GpuAlgo,
) -> Result<Matrix<F::Elem>> {
    MultiGpu::new(devices)?.solve(f, a, b, algo).map(|(x, _)| x)
}

/// Residual of `A X = B` over at most `samples` columns spread evenly over B (first and
/// last included): `‖A X_S − B_S‖_F / ‖B_S‖_F` for floats, the fraction of non-zero
/// entries of `A X_S − B_S` for Z/p. Row-parallel (rayon).
pub fn sampled_residual<F: Field>(
    f: &F,
    a: &Matrix<F::Elem>,
    x: &Matrix<F::Elem>,
    b: &Matrix<F::Elem>,
    samples: usize,
) -> f64 {
    let (n, m) = (a.rows, b.cols);
    if n == 0 || m == 0 {
        return 0.0;
    }
    let s = samples.clamp(1, m);
    let cols: Vec<usize> = if s == 1 {
        vec![0]
    } else {
        let mut c: Vec<usize> = (0..s).map(|i| i * (m - 1) / (s - 1)).collect();
        c.dedup();
        c
    };
    let xs = x.select_cols(&cols);
    let bs = b.select_cols(&cols);
    let k = a.cols;
    let (num, den) = (0..n)
        .into_par_iter()
        .map(|i| {
            let mut acc = bs.row(i).to_vec();
            for (t, &aik) in a.row(i).iter().enumerate().take(k) {
                if f.is_zero(aik) {
                    continue;
                }
                for (y, &xv) in acc.iter_mut().zip(xs.row(t)) {
                    *y = f.sub(*y, f.mul(aik, xv));
                }
            }
            let mut num = 0.0;
            let mut den = 0.0;
            for (&r, &bv) in acc.iter().zip(bs.row(i)) {
                if F::EXACT {
                    num += f64::from(u8::from(!f.is_zero(r)));
                    den += 1.0;
                } else {
                    num += f.magnitude(r).powi(2);
                    den += f.magnitude(bv).powi(2);
                }
            }
            (num, den)
        })
        .reduce(|| (0.0, 0.0), |p, q| (p.0 + q.0, p.1 + q.1));
    if F::EXACT {
        num / den
    } else if den > 0.0 {
        (num / den).sqrt()
    } else {
        num.sqrt()
    }
}
