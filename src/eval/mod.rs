//! Evaluation of the extended Jacobian `[D_y H, D_τ H, H]` of a [`Homotopy`] at a batch of
//! points as matrix products (T. Chen, §5):
//!
//! `vec(D̂_z H(ẑ_i)) = exp(ẑ_i Â) · [B_1ᵀ … B_nᵀ]`, then `∂h/∂y_j = ∂h/∂z_j · e^{−z_j}`,
//!
//! with `ẑ = (log y, τ)`, `Â` the `(N+1) × M` matrix whose columns are `(a_hom, ω)` for every
//! term of every equation (grouped by equation), and `B_kᵀ` the `m_k × (N+2)` matrix whose
//! row for term `(c, a, ω)` is `(c·a_hom, c·ω, c)`. For mixed supports the second product is
//! block sparse, so it runs per equation block (no zeros multiplied). Each equation is
//! scaled by `e^{−s}` with `s = max_c Re(ẑ Â)_c` over its block before `exp`, which keeps
//! magnitudes in range and does not move the zero set or the directions.

pub mod cpu;
pub mod dd;
pub mod dd_homotopy;
pub mod vmath;

use crate::homotopy::Homotopy;
use num_complex::Complex64 as C64;

/// One equation's slice of `Â` and its coefficient block `B_kᵀ`.
#[derive(Clone, Debug)]
pub struct EqBlock {
    /// First column of this equation in `Â`.
    pub start: usize,
    /// Number of terms `m_k`.
    pub len: usize,
    /// `B_kᵀ`, `m_k × (N+2)` row-major.
    pub bt: Vec<C64>,
}

/// The precomputed matrices of the GEMM formulation.
#[derive(Clone, Debug)]
pub struct EvalLayout {
    /// Equations (= affine variables).
    pub n: usize,
    /// Homogeneous coordinates `N = n + 1`.
    pub nh: usize,
    /// Columns of `Â` (all terms).
    pub m: usize,
    /// `Â`, `(N+1) × M` row-major: rows are the exponents of `y_0..y_n`, then the lift.
    pub a_hat: Vec<f64>,
    pub blocks: Vec<EqBlock>,
}

impl EvalLayout {
    pub fn new(h: &Homotopy) -> EvalLayout {
        let n = h.n;
        let nh = h.nh();
        let m = h.term_count();
        let mut a_hat = vec![0.0; (nh + 1) * m];
        let mut blocks = Vec::with_capacity(n);
        let mut col = 0;
        for terms in &h.equations {
            let start = col;
            let mut bt = Vec::with_capacity(terms.len() * (nh + 2));
            for t in terms {
                for j in 0..nh {
                    a_hat[j * m + col] = t.exponents[j] as f64;
                    bt.push(t.coeff * t.exponents[j] as f64);
                }
                a_hat[nh * m + col] = t.lift;
                bt.push(t.coeff * t.lift);
                bt.push(t.coeff);
                col += 1;
            }
            blocks.push(EqBlock {
                start,
                len: terms.len(),
                bt,
            });
        }
        EvalLayout {
            n,
            nh,
            m,
            a_hat,
            blocks,
        }
    }

    /// Entries of one point's extended Jacobian: `n × (N+2)`.
    pub fn ext_len(&self) -> usize {
        self.n * (self.nh + 2)
    }

    /// Floating-point operations of one batch evaluation of `p` points (real flops; complex
    /// multiply-add = 8), for throughput figures.
    pub fn flops(&self, p: usize) -> f64 {
        let g1 = 2.0 * (2 * p) as f64 * (self.nh + 1) as f64 * self.m as f64;
        let g2 = 8.0 * p as f64 * self.m as f64 * (self.nh + 2) as f64;
        g1 + g2
    }
}

/// A batch of points to evaluate: `p` points of `N` coordinates each.
#[derive(Clone, Copy, Debug)]
pub struct Points<'a> {
    /// `p × N` row-major: homogeneous `y`, or `z = log y` for points in log mode.
    pub ys: &'a [C64],
    /// `τ` of each point.
    pub taus: &'a [C64],
    /// Per point: coordinates given as `z = log y`, derivatives returned in `z`.
    pub log_mode: Option<&'a [bool]>,
    /// `p × M` row-major: per-point lifts replacing the homotopy's (polyhedral paths carry
    /// their cell's shifted lifts `ω'(a) = ⟨a,α⟩ + ω(a) − β_k`, see `start::polyhedral`).
    pub lifts: Option<&'a [f64]>,
    /// Per point: how accurately the residual `H` (hence the Newton direction) is computed;
    /// `None`: [`Residual::Adaptive`] everywhere.
    pub residual: Option<&'a [Residual]>,
}

/// How accurately a point's residual `H(y, τ)` is computed (it enters only the Newton
/// direction; the Euler direction does not involve it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Residual {
    /// Only the Euler direction is used (a Runge–Kutta stage): double.
    EulerOnly,
    /// Double, and double-double near t = 1 where the rounding of the double value would
    /// spoil the Newton step (see `backend::cpu::DD_STEP_NOISE`).
    #[default]
    Adaptive,
    /// Double-double wherever it applies (projective coordinates), whatever τ and the
    /// condition: the last recovery round re-tracks failed paths this way.
    DoubleDouble,
}

impl<'a> Points<'a> {
    /// Projective points with the homotopy's own lifts.
    pub fn projective(ys: &'a [C64], taus: &'a [C64]) -> Points<'a> {
        Points {
            ys,
            taus,
            log_mode: None,
            lifts: None,
            residual: None,
        }
    }
    pub fn len(&self) -> usize {
        self.taus.len()
    }
    pub fn is_empty(&self) -> bool {
        self.taus.is_empty()
    }
    pub fn is_log(&self, i: usize) -> bool {
        self.log_mode.is_some_and(|m| m[i])
    }
    /// The residual precision asked for point `i`.
    pub fn residual(&self, i: usize) -> Residual {
        self.residual.map(|r| r[i]).unwrap_or_default()
    }
    /// Points `start .. start + len` (`nh` coordinates, `m` lifts per point).
    pub fn slice(&self, start: usize, len: usize, nh: usize, m: usize) -> Points<'a> {
        Points {
            ys: &self.ys[start * nh..(start + len) * nh],
            taus: &self.taus[start..start + len],
            log_mode: self.log_mode.map(|l| &l[start..start + len]),
            lifts: self.lifts.map(|l| &l[start * m..(start + len) * m]),
            residual: self.residual.map(|l| &l[start..start + len]),
        }
    }
}

/// `log y` with magnitudes clamped to the smallest normal double, so that a coordinate that
/// is exactly zero (an endpoint on a coordinate hyperplane) gives a finite log. `ln|y|` is
/// `½·ln|y|²` where `|y|²` is a normal double below 1e300, else through `hypot` (which was
/// 4 % of an eco-10 solve; the kernels' `safe_ln` keeps `hypot`).
#[inline]
pub fn safe_ln(y: C64) -> C64 {
    let s = y.norm_sqr();
    let ln_r = if s.is_normal() && s < 1e300 {
        0.5 * s.ln()
    } else {
        y.norm().max(f64::MIN_POSITIVE).ln()
    };
    C64::new(ln_r, y.im.atan2(y.re))
}

/// `1 / y` for the `diag(e^{−z})` scaling, consistent with [`safe_ln`].
#[inline]
pub fn safe_inv(y: C64) -> C64 {
    let r2 = y.norm_sqr();
    if r2 < f64::MIN_POSITIVE * f64::MIN_POSITIVE || r2 == 0.0 {
        // y ≈ 0: e^{−z} with |e^z| = MIN_POSITIVE in the direction of y (or 1 if y = 0).
        let phase = if y == C64::new(0.0, 0.0) {
            C64::new(1.0, 0.0)
        } else {
            y / y.norm()
        };
        phase.conj() / f64::MIN_POSITIVE
    } else {
        y.conj() / r2
    }
}
