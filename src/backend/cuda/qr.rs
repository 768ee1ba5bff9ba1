//! The Euler/Newton directions by batched Householder QR ([`super::SolveMethod::Qr`],
//! `--cuda-solve qr`; T. Chen §6, Remark 1, and §8: `cublasZgeqrfBatched`), the
//! alternative to the Gauss–Jordan kernel `gj_directions`.
//!
//! The system is the Gauss–Jordan kernel's square one, `A X = B` with `A = [∂H/∂y; y*]`
//! (rows equilibrated; `e_nᵀ` as last row for log-mode points) and
//! `B = [−∂H/∂τ −H; 0 0]`, solved as `A = QR`, `X = R⁻¹ QᴴB` (kernels/qr.cu):
//!
//! 1. kernel `qr_build` writes per point the column-major `N × (N+2)` block `[A | B]`
//!    (`lda = N`) into the workspace `QrWork::a`;
//! 2. `cublasZgeqrfBatched` factors the leading `N × N` part of every block in place
//!    (`R` above, the Householder vectors below the diagonal, `τ` in `QrWork::tau`);
//! 3. kernel `qr_directions` (one segment of `SEG` lanes per point, lane r holding row r of
//!    both right-hand sides) applies `Qᴴ` from the reflectors, back-substitutes with `R`
//!    and writes `euler`, `newton` (p × N) and `cond = max|R_kk| / min|R_kk|` (p) exactly
//!    where `gj_directions` writes them.
//!
//! The seed's own formulation factors the transposed `(N+2) × N` extended matrix and takes
//! the null space of `[∂H/∂y ∂H/∂τ H; y* 0 0]` from the last two columns of `Q`; the square
//! form used here gives the same directions in exact arithmetic, keeps the condition
//! estimate of the CPU's `qr_solve` (the `R` of `A`, not of the extended matrix) and needs
//! no 2×2 reduction.

use super::kernels::QR_THREADS;
use super::{i32_of, CudaBackend};
use crate::error::{Error, Result};
use crate::gpu::{cuda_err, DBuf, Device};
use cudarc::driver::{LaunchConfig, PushKernelArg};
use num_complex::Complex64 as C64;

/// The QR route's device workspace for `cap` points (part of [`super::Buffers`]).
pub(crate) struct QrWork {
    cap: usize,
    /// `[A | B]` per point, column-major `N × (N+2)`, points one after another.
    a: DBuf,
    /// The `N` Householder scalars `τ` per point.
    tau: DBuf,
    /// `cap` addresses of the blocks in `a`, then `cap` addresses of the vectors in `tau`
    /// (the pointer arrays of `cublasZgeqrfBatched`; they depend only on the two buffers).
    ptrs: DBuf,
}

impl QrWork {
    /// Device bytes per point.
    pub(crate) fn bytes_per_point(nn: usize) -> usize {
        16 * (nn * (nn + 2) + nn) + 2 * 8
    }

    /// Allocates the workspace and uploads the pointer arrays.
    pub(crate) fn new(dev: &Device, cap: usize, nn: usize) -> Result<QrWork> {
        let a = dev.alloc::<C64>(cap * nn * (nn + 2))?;
        let tau = dev.alloc::<C64>(cap * nn)?;
        let ptrs = dev.alloc::<u64>(2 * cap)?;
        dev.htod(&ptrs, &pointer_arrays(a.ptr, tau.ptr, nn, cap))?;
        Ok(QrWork { cap, a, tau, ptrs })
    }

    /// The buffers that tests fill with NaN bytes (not the pointer arrays).
    pub(crate) fn data(&self) -> [&DBuf; 2] {
        [&self.a, &self.tau]
    }
}

/// The device addresses of the `cap` blocks `[A | B]` (`N(N+2)` complex values each) from
/// `a`, then those of the `cap` vectors of `N` Householder scalars from `tau`.
pub(crate) fn pointer_arrays(a: u64, tau: u64, nn: usize, cap: usize) -> Vec<u64> {
    let (sa, st) = ((16 * nn * (nn + 2)) as u64, (16 * nn) as u64);
    (0..cap as u64)
        .map(|i| a + i * sa)
        .chain((0..cap as u64).map(|i| tau + i * st))
        .collect()
}

impl CudaBackend {
    /// Queues the QR direction solve of `p` points, using the buffers' QR workspace.
    pub(super) fn queue_qr(&self, p: usize, o: super::SolveOperands) -> Result<()> {
        let super::SolveOperands {
            jac,
            y,
            logm,
            euler,
            newton,
            cond,
        } = o;
        let l = self.loaded()?;
        let w = self
            .bufs
            .as_ref()
            .and_then(|b| b.qr.as_ref())
            .ok_or_else(|| Error::Internal("CUDA QR workspace not allocated".into()))?;
        if p > w.cap {
            return Err(Error::Internal(format!(
                "QR direction solve of {p} points in a workspace of {}",
                w.cap
            )));
        }
        let (nn, pi, qa, qtau) = (l.nn, i32_of(p)?, w.a.ptr, w.tau.ptr);
        let s = &self.dev.stream;
        unsafe {
            s.launch_builder(&l.k.qr_build)
                .arg(&jac)
                .arg(&y)
                .arg(&logm)
                .arg(&qa)
                .arg(&pi)
                .launch(super::grid1(p * nn))
        }
        .map_err(|e| cuda_err("cuLaunchKernel(qr_build)", e))?;
        unsafe {
            self.blas
                .zgeqrf_batched(nn, nn, w.ptrs.ptr, nn, w.ptrs.at::<u64>(w.cap), p)?;
        }
        let ppb = QR_THREADS / l.k.seg;
        unsafe {
            s.launch_builder(&l.k.qr_directions)
                .arg(&qa)
                .arg(&qtau)
                .arg(&euler)
                .arg(&newton)
                .arg(&cond)
                .arg(&pi)
                .launch(LaunchConfig {
                    grid_dim: (p.div_ceil(ppb) as u32, 1, 1),
                    block_dim: (QR_THREADS as u32, 1, 1),
                    shared_mem_bytes: 0,
                })
        }
        .map_err(|e| cuda_err("cuLaunchKernel(qr_directions)", e))?;
        Ok(())
    }
}

/// CPU references of the three steps, operation for operation as the kernels and
/// `zgeqrf` define them, checked against [`crate::linalg::small::qr_solve`] on the system of
/// [`crate::backend::fill_direction_system`].
#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{fill_direction_system, solve_directions_one};
    use crate::eval::safe_inv;
    use rand::{Rng, SeedableRng};

    fn cabs(z: C64) -> f64 {
        z.re.hypot(z.im)
    }

    /// `crecip` of kernels/common.cuh.
    fn crecip(a: C64) -> C64 {
        let s = a.re.abs().max(a.im.abs());
        if s == 0.0 {
            return C64::new(f64::INFINITY, 0.0);
        }
        let b = a / s;
        let d = b.re * b.re + b.im * b.im;
        C64::new(b.re / (d * s), -b.im / (d * s))
    }

    /// `qr_build` for one point: `ext` its `n × (N+2)` extended Jacobian rows before the
    /// `diag(e^{−z})` scaling; returns the column-major `N × (N+2)` block `[A | B]`.
    fn build_ref(n: usize, ext: &[C64], y: &[C64], log: bool) -> Vec<C64> {
        let (nn, w) = (n + 1, n + 3);
        let mut out = vec![C64::new(0.0, 0.0); nn * (nn + 2)];
        for j in 0..nn {
            out[j * nn + n] = if log {
                C64::new(if j == n { 1.0 } else { 0.0 }, 0.0)
            } else {
                y[j].conj()
            };
        }
        for r in 0..n {
            let row = &ext[r * w..(r + 1) * w];
            let mut a: Vec<C64> = (0..nn)
                .map(|j| if log { row[j] } else { row[j] * safe_inv(y[j]) })
                .collect();
            let mut mx = a[..n].iter().map(|&z| cabs(z)).fold(0.0, f64::max);
            if log {
                a[n] = C64::new(0.0, 0.0);
            } else {
                mx = mx.max(cabs(a[n]));
            }
            let sc = if mx > 0.0 && mx.is_finite() {
                1.0 / mx
            } else {
                1.0
            };
            for j in 0..nn {
                out[j * nn + r] = a[j] * sc;
            }
            out[nn * nn + r] = -row[nn] * sc;
            out[(nn + 1) * nn + r] = -row[nn + 1] * sc;
        }
        out
    }

    /// `zgeqrf` (unblocked, as LAPACK's `zgeqr2`/`zlarfg` define it) on the leading
    /// `N × N` part of a column-major block with leading dimension `N`: `R` on and above
    /// the diagonal (real diagonal), `v_k` below it, `τ_k` with `H_k = I − τ_k v_k v_kᴴ`.
    /// For `k = N−1` the reflector is the scalar `1 − τ` that makes `R_kk` real.
    fn geqrf_ref(nn: usize, a: &mut [C64]) -> Vec<C64> {
        let mut tau = vec![C64::new(0.0, 0.0); nn];
        for k in 0..nn {
            let alpha = a[k * nn + k];
            let xnorm = a[k * nn + k + 1..(k + 1) * nn]
                .iter()
                .map(|z| z.norm_sqr())
                .sum::<f64>()
                .sqrt();
            if xnorm == 0.0 && alpha.im == 0.0 {
                continue; // τ = 0, H = I
            }
            let norm = alpha.re.hypot(alpha.im).hypot(xnorm);
            let beta = if alpha.re >= 0.0 { -norm } else { norm };
            tau[k] = C64::new((beta - alpha.re) / beta, -alpha.im / beta);
            let scale = 1.0 / (alpha - beta);
            for v in &mut a[k * nn + k + 1..(k + 1) * nn] {
                *v *= scale;
            }
            a[k * nn + k] = C64::new(beta, 0.0);
            // H_kᴴ = I − conj(τ_k) v vᴴ on the columns to the right
            for j in k + 1..nn {
                let mut s = a[j * nn + k];
                for i in k + 1..nn {
                    s += a[k * nn + i].conj() * a[j * nn + i];
                }
                let c = tau[k].conj() * s;
                a[j * nn + k] -= c;
                for i in k + 1..nn {
                    let v = a[k * nn + i];
                    a[j * nn + i] -= v * c;
                }
            }
        }
        tau
    }

    /// `qr_directions` for one point: `(euler, newton, cond)` from the factored block.
    fn directions_ref(nn: usize, a: &[C64], tau: &[C64]) -> (Vec<C64>, Vec<C64>, f64) {
        let mut b0: Vec<C64> = a[nn * nn..nn * nn + nn].to_vec();
        let mut b1: Vec<C64> = a[(nn + 1) * nn..(nn + 2) * nn].to_vec();
        for k in 0..nn {
            let v = |r: usize| {
                if r == k {
                    C64::new(1.0, 0.0)
                } else {
                    a[k * nn + r]
                }
            };
            let s0: C64 = (k..nn).map(|r| v(r).conj() * b0[r]).sum();
            let s1: C64 = (k..nn).map(|r| v(r).conj() * b1[r]).sum();
            let (c0, c1) = (tau[k].conj() * s0, tau[k].conj() * s1);
            for r in k..nn {
                b0[r] -= v(r) * c0;
                b1[r] -= v(r) * c1;
            }
        }
        let (mut dmax, mut dmin) = (0.0f64, f64::INFINITY);
        let (mut x0, mut x1) = (vec![C64::new(0.0, 0.0); nn], vec![C64::new(0.0, 0.0); nn]);
        for k in (0..nn).rev() {
            let rkk = a[k * nn + k];
            dmax = dmax.max(cabs(rkk));
            dmin = dmin.min(cabs(rkk));
            let ir = crecip(rkk);
            x0[k] = b0[k] * ir;
            x1[k] = b1[k] * ir;
            for r in 0..k {
                b0[r] -= a[k * nn + r] * x0[k];
                b1[r] -= a[k * nn + r] * x1[k];
            }
        }
        let cond = if dmin > 0.0 {
            dmax / dmin
        } else {
            f64::INFINITY
        };
        (x0, x1, cond)
    }

    fn rc(rng: &mut impl Rng) -> C64 {
        C64::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5)
    }

    fn norm(v: &[C64]) -> f64 {
        v.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt()
    }

    /// A point's extended Jacobian rows (before scaling), coordinates and log flag, with
    /// rows of very different magnitudes and, now and then, a tiny coordinate.
    fn random_point(rng: &mut impl Rng, n: usize) -> (Vec<C64>, Vec<C64>, bool) {
        let (nn, w) = (n + 1, n + 3);
        let log = rng.random_range(0..3) == 0;
        let mut ext: Vec<C64> = (0..n * w).map(|_| rc(rng)).collect();
        for r in 0..n {
            let s = 10f64.powi(rng.random_range(-6..7));
            for z in &mut ext[r * w..(r + 1) * w] {
                *z *= s;
            }
        }
        let mut y: Vec<C64> = (0..nn).map(|_| rc(rng)).collect();
        if log {
            y[n] = C64::new(0.0, 0.0);
        } else if rng.random_range(0..4) == 0 {
            let j = rng.random_range(0..nn);
            y[j] *= 1e-7;
        }
        (ext, y, log)
    }

    /// The factorization of `geqrf_ref` reproduces the matrix: `Q R = A` with
    /// `Q = H_0 ⋯ H_{N−1}` applied to `R`'s columns from the right-most reflector on.
    #[test]
    fn geqrf_reference_reproduces_the_matrix() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for nn in [1usize, 2, 3, 7, 16, 32] {
            let a0: Vec<C64> = (0..nn * nn).map(|_| rc(&mut rng)).collect();
            let mut a = a0.clone();
            let tau = geqrf_ref(nn, &mut a);
            for k in 0..nn {
                assert_eq!(a[k * nn + k].im, 0.0, "R_kk is real");
            }
            for j in 0..nn {
                let mut c: Vec<C64> = (0..nn)
                    .map(|i| {
                        if i <= j {
                            a[j * nn + i]
                        } else {
                            C64::new(0.0, 0.0)
                        }
                    })
                    .collect();
                for k in (0..nn).rev() {
                    let v = |r: usize| {
                        if r == k {
                            C64::new(1.0, 0.0)
                        } else {
                            a[k * nn + r]
                        }
                    };
                    let s: C64 = (k..nn).map(|r| v(r).conj() * c[r]).sum::<C64>() * tau[k];
                    for (r, cr) in c.iter_mut().enumerate().skip(k) {
                        *cr -= v(r) * s;
                    }
                }
                let err = norm(
                    &c.iter()
                        .zip(&a0[j * nn..(j + 1) * nn])
                        .map(|(x, y)| x - y)
                        .collect::<Vec<_>>(),
                );
                assert!(err < 1e-13 * nn as f64, "N = {nn} column {j}: {err}");
            }
        }
    }

    /// Build → geqrf → directions gives the CPU backend's directions and condition
    /// estimate (its `qr_solve` on [`fill_direction_system`]'s system), projective and
    /// log-mode points, n from 1 to 31.
    #[test]
    fn qr_route_matches_the_cpu_solve() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut worst: f64 = 0.0;
        for trial in 0..600 {
            let n = 1 + trial % 31;
            let (nn, w) = (n + 1, n + 3);
            let (ext, y, log) = random_point(&mut rng, n);
            // reference: the CPU backend's routine on ∂H/∂y (its extended Jacobian rows are
            // already scaled by diag(e^{−z}) except in log mode)
            let mut ext_y = ext.clone();
            if !log {
                for r in 0..n {
                    for j in 0..nn {
                        ext_y[r * w + j] *= safe_inv(y[j]);
                    }
                }
            }
            let mut qr = crate::backend::DirectionSystem::default();
            let (mut ce, mut cn) = (vec![C64::new(0.0, 0.0); nn], vec![C64::new(0.0, 0.0); nn]);
            let cc = solve_directions_one(n, &ext_y, &y, log, &mut qr, &mut ce, &mut cn);
            let (mut a, mut b) = (
                vec![C64::new(0.0, 0.0); nn * nn],
                vec![C64::new(0.0, 0.0); 2 * nn],
            );

            let mut blk = build_ref(n, &ext, &y, log);
            // step 1 builds fill_direction_system's system (up to the rounding of the
            // equilibration: hypot here, √|z|² there)
            fill_direction_system(n, &ext_y, &y, log, &mut a, &mut b);
            for j in 0..nn {
                for r in 0..nn {
                    let (g, c) = (blk[j * nn + r], a[j * nn + r]);
                    assert!(
                        (g - c).norm() <= 1e-15 * (1.0 + c.norm()),
                        "trial {trial} A[{r},{j}]"
                    );
                }
            }
            for r in 0..nn {
                for (col, c) in [(nn, b[2 * r]), (nn + 1, b[2 * r + 1])] {
                    let g = blk[col * nn + r];
                    assert!(
                        (g - c).norm() <= 1e-15 * (1.0 + c.norm()),
                        "trial {trial} B[{r}]"
                    );
                }
            }

            let tau = geqrf_ref(nn, &mut blk);
            let (ge, gn, gc) = directions_ref(nn, &blk, &tau);
            assert!(
                cc.is_finite() && (gc / cc - 1.0).abs() < 1e-13 * cc,
                "trial {trial}: cond {gc} vs {cc}"
            );
            for (name, g, c) in [("euler", &ge, &ce), ("newton", &gn, &cn)] {
                let err = norm(&g.iter().zip(c).map(|(x, y)| x - y).collect::<Vec<_>>());
                let scale = cc * norm(c).max(1.0);
                assert!(
                    err <= 1e-12 * scale,
                    "trial {trial} (n {n}, log {log}) {name}: err {err}, cond {cc}"
                );
                worst = worst.max(err / scale);
            }
            if log {
                assert!(ge[n].norm() <= 1e-14 * norm(&ge).max(1.0));
                assert!(gn[n].norm() <= 1e-14 * norm(&gn).max(1.0));
            }
        }
        eprintln!("largest error / (cond·max(1, ‖x‖)): {worst:.2e}");
    }

    /// A singular matrix (a zero column) gives the condition estimate ∞, like the CPU's.
    #[test]
    fn a_zero_column_gives_infinite_cond() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let (n, w) = (3, 6);
        let mut ext: Vec<C64> = (0..n * w).map(|_| rc(&mut rng)).collect();
        for r in 0..n {
            ext[r * w] = C64::new(0.0, 0.0);
        }
        let y: Vec<C64> = (0..n + 1).map(|_| rc(&mut rng)).collect();
        for log in [false, true] {
            let mut blk = build_ref(n, &ext, &y, log);
            if !log {
                // the last row conj(y) has a nonzero first entry: zero it too
                blk[n] = C64::new(0.0, 0.0);
            }
            let tau = geqrf_ref(n + 1, &mut blk);
            let (_, _, c) = directions_ref(n + 1, &blk, &tau);
            assert_eq!(c, f64::INFINITY, "log {log}");
        }
    }

    #[test]
    fn pointer_arrays_address_every_block() {
        assert_eq!(
            pointer_arrays(1000, 50, 2, 3),
            vec![1000, 1128, 1256, 50, 82, 114]
        );
    }
}
