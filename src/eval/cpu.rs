//! Batched evaluation on the CPU through real GEMMs (the `gemm` crate): `[Re Ẑ; Im Ẑ] · Â`
//! as one real product, elementwise shifted `exp`, then one complex product per equation
//! block `E_k · B_kᵀ`, then the `diag(e^{−z}, 1, 1)` column scaling.
//!
//! The function works on one chunk of points on the calling thread; the backend splits a
//! batch into chunks over threads (parallelism across points, not inside the product, so
//! results do not depend on the thread count).

use super::{safe_inv, safe_ln, EvalLayout, Points};
use gemm::{gemm, Parallelism};
use num_complex::Complex64 as C64;

/// Scratch buffers reused across calls for one chunk size.
#[derive(Default)]
pub struct Scratch {
    zhat: Vec<f64>,
    prod: Vec<f64>,
    e: Vec<C64>,
}

impl Scratch {
    /// `Σ_c |c_{k,c} · e_c|` over equation `k`'s terms at point `i` of the last
    /// [`extended_jacobians`] call (`e_c` its shifted exponentials): the size that the
    /// rounding error of `h_k` computed in double is relative to (about `ε` times it).
    pub fn term_magnitude(&self, layout: &EvalLayout, i: usize, k: usize) -> f64 {
        let (m, w) = (layout.m, layout.nh + 2);
        let b = &layout.blocks[k];
        let e = &self.e[i * m + b.start..i * m + b.start + b.len];
        e.iter()
            .enumerate()
            .map(|(r, v)| v.norm_sqr().sqrt() * b.bt[r * w + layout.nh + 1].norm_sqr().sqrt())
            .sum()
    }
}

/// Extended Jacobians of `q` points: `ys` is `q × N` (row-major), `taus` has `q` entries,
/// `out` receives `q × n × (N+2)`: for point i and equation k the row
/// `(∂h_k/∂y_0 … ∂h_k/∂y_n, ∂h_k/∂τ, h_k)`, each equation scaled by its own positive factor.
///
/// Points in log mode are given as `z = log y` instead of `y`, and their rows hold
/// `∂h_k/∂z_j` (no `diag(e^{−z})` scaling). Points with their own lift row get the terms
/// `c·y^a·e^{τ ω'}` and `∂h/∂τ = Σ ω'·c·y^a·e^{τω'}` with those lifts.
pub fn extended_jacobians(
    layout: &EvalLayout,
    pts: &Points<'_>,
    out: &mut [C64],
    scratch: &mut Scratch,
) {
    let (ys, taus) = (pts.ys, pts.taus);
    let is_log = |i: usize| pts.is_log(i);
    let (n, nh, m) = (layout.n, layout.nh, layout.m);
    let q = taus.len();
    debug_assert_eq!(ys.len(), q * nh);
    debug_assert_eq!(out.len(), q * n * (nh + 2));
    let kz = nh + 1;
    // Ẑ stacked as [Re; Im], 2q × (N+1) row-major.
    scratch.zhat.clear();
    scratch.zhat.resize(2 * q * kz, 0.0);
    for i in 0..q {
        for j in 0..nh {
            let z = if is_log(i) {
                ys[i * nh + j]
            } else {
                safe_ln(ys[i * nh + j])
            };
            scratch.zhat[i * kz + j] = z.re;
            scratch.zhat[(q + i) * kz + j] = z.im;
        }
        // With per-point lifts the τ·ω' part is added after the product.
        let t = if pts.lifts.is_some() {
            C64::new(0.0, 0.0)
        } else {
            taus[i]
        };
        scratch.zhat[i * kz + nh] = t.re;
        scratch.zhat[(q + i) * kz + nh] = t.im;
    }
    scratch.prod.clear();
    scratch.prod.resize(2 * q * m, 0.0);
    // SAFETY: dimensions and strides describe the buffers above exactly.
    unsafe {
        gemm(
            2 * q,
            m,
            kz,
            scratch.prod.as_mut_ptr(),
            1,
            m as isize,
            false,
            scratch.zhat.as_ptr(),
            1,
            kz as isize,
            layout.a_hat.as_ptr(),
            1,
            m as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            Parallelism::None,
        );
    }
    if let Some(lifts) = pts.lifts {
        for i in 0..q {
            let (t, l) = (taus[i], &lifts[i * m..(i + 1) * m]);
            for c in 0..m {
                scratch.prod[i * m + c] += t.re * l[c];
                scratch.prod[(q + i) * m + c] += t.im * l[c];
            }
        }
    }
    // Shifted exponentials, per equation block.
    scratch.e.clear();
    scratch.e.resize(q * m, C64::new(0.0, 0.0));
    for i in 0..q {
        let re = &scratch.prod[i * m..(i + 1) * m];
        let im = &scratch.prod[(q + i) * m..(q + i + 1) * m];
        let e = &mut scratch.e[i * m..(i + 1) * m];
        for b in &layout.blocks {
            let r = b.start..b.start + b.len;
            let s = re[r.clone()]
                .iter()
                .fold(f64::NEG_INFINITY, |a, &v| a.max(v));
            super::vmath::exp_cis(&re[r.clone()], s, &im[r.clone()], &mut e[r]);
        }
    }
    // Per-equation products E_k (q × m_k) · B_kᵀ (m_k × (N+2)) into out[:, k, :].
    let w = nh + 2;
    let row = n * w;
    for (k, b) in layout.blocks.iter().enumerate() {
        // SAFETY: out has q rows of stride n·(N+2); block k occupies columns k·w..(k+1)·w.
        unsafe {
            gemm(
                q,
                w,
                b.len,
                out.as_mut_ptr().add(k * w),
                1,
                row as isize,
                false,
                scratch.e.as_ptr().add(b.start),
                1,
                m as isize,
                b.bt.as_ptr(),
                1,
                w as isize,
                C64::new(0.0, 0.0),
                C64::new(1.0, 0.0),
                false,
                false,
                false,
                Parallelism::None,
            );
        }
    }
    // ∂h/∂τ with per-point lifts: Σ_c ω'_c · coeff_c · E_c (the coefficient is B_kᵀ's last column).
    if let Some(lifts) = pts.lifts {
        for i in 0..q {
            let (l, e) = (&lifts[i * m..(i + 1) * m], &scratch.e[i * m..(i + 1) * m]);
            for (k, b) in layout.blocks.iter().enumerate() {
                let mut d = C64::new(0.0, 0.0);
                for t in 0..b.len {
                    d += b.bt[t * w + w - 1] * (e[b.start + t] * l[b.start + t]);
                }
                out[i * row + k * w + nh] = d;
            }
        }
    }
    // diag(e^{−z}, 1, 1): ∂h/∂y_j = ∂h/∂z_j / y_j.
    for i in (0..q).filter(|&i| !is_log(i)) {
        for j in 0..nh {
            let inv = safe_inv(ys[i * nh + j]);
            for k in 0..n {
                out[i * row + k * w + j] *= inv;
            }
        }
    }
}
