//! Homotopy values in double-double arithmetic (Dekker; Hida, Li & Bailey's "double-double"):
//! the residual `H(y, τ)` that Newton's method corrects, accurate to ~1e-32 relative to the
//! largest term instead of ~1e-16.
//!
//! Near an ill-conditioned solution (chandra-n with c = 0.51234 has condition numbers up to
//! 1e13) a residual computed in double is noise of size `ε·Σ|terms|`, so the Newton step is
//! wrong by `ε·cond`: the corrector stops contracting and the path is lost. With the residual
//! in double-double and the Jacobian in double, Newton still converges (at a linear rate
//! `ε·cond` per step) for `cond` up to ~1e15 — the "extended precision residual" of mixed
//! precision iterative refinement, which is what the tracker needs, at the cost of one extra
//! evaluation of `H` (no derivatives) per step.

use super::EvalLayout;
use num_complex::Complex64 as C64;

/// An unevaluated sum `hi + lo` with `|lo| ≤ ulp(hi)/2`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dd {
    pub hi: f64,
    pub lo: f64,
}

/// Error-free sum: `a + b = s + e` exactly (Knuth).
#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// Error-free product through a fused multiply-add: `a·b = p + e` exactly.
#[inline]
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

impl Dd {
    pub const ZERO: Dd = Dd { hi: 0.0, lo: 0.0 };

    pub fn from(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }

    #[inline]
    fn renorm(hi: f64, lo: f64) -> Dd {
        let s = hi + lo;
        Dd {
            hi: s,
            lo: lo - (s - hi),
        }
    }

    #[inline]
    pub fn add(self, o: Dd) -> Dd {
        let (s, e) = two_sum(self.hi, o.hi);
        let (t, f) = two_sum(self.lo, o.lo);
        let r = Dd::renorm(s, e + t);
        Dd::renorm(r.hi, r.lo + f)
    }

    #[inline]
    pub fn neg(self) -> Dd {
        Dd {
            hi: -self.hi,
            lo: -self.lo,
        }
    }

    #[inline]
    pub fn mul(self, o: Dd) -> Dd {
        let (p, e) = two_prod(self.hi, o.hi);
        Dd::renorm(p, e + (self.hi * o.lo + self.lo * o.hi))
    }

    #[inline]
    pub fn mul_f64(self, b: f64) -> Dd {
        let (p, e) = two_prod(self.hi, b);
        Dd::renorm(p, e + self.lo * b)
    }

    /// Division by a double: `q1 = hi/b`, then the remainder's quotient as the low part.
    #[inline]
    pub fn div_f64(self, b: f64) -> Dd {
        let q1 = self.hi / b;
        let (p, e) = two_prod(q1, b);
        let r = (self.hi - p - e) + self.lo;
        Dd::renorm(q1, r / b)
    }

    /// Multiplication by a power of two (exact).
    fn scale2(self, k: i32) -> Dd {
        let f = 2f64.powi(k);
        Dd {
            hi: self.hi * f,
            lo: self.lo * f,
        }
    }

    pub fn to_f64(self) -> f64 {
        self.hi + self.lo
    }

    /// `e^x` to ~1e-30 relative (the squarings multiply the series' error by 2^8): `x = k·ln 2 + r`, `e^r = (e^{r/2^8})^{2^8}` with a Taylor
    /// series for the small argument. `None` outside the double range.
    pub fn exp(self) -> Option<Dd> {
        const LN2: Dd = Dd {
            hi: std::f64::consts::LN_2,
            lo: 2.319_046_813_846_299_6e-17,
        };
        if self.hi == 0.0 {
            return Some(Dd::from(1.0));
        }
        if !(self.hi.abs() < 700.0) {
            return None;
        }
        let k = (self.hi / LN2.hi).round();
        let r = self.add(LN2.mul_f64(k).neg()).scale2(-8);
        // Taylor: Σ r^j / j!, j ≤ 14 (|r| ≤ 0.35/256 makes the tail < 1e-40).
        let mut term = Dd::from(1.0);
        let mut sum = Dd::from(1.0);
        for j in 1..=14 {
            term = term.mul(r).div_f64(j as f64);
            sum = sum.add(term);
        }
        for _ in 0..8 {
            sum = sum.mul(sum);
        }
        Some(sum.scale2(k as i32))
    }
}

/// A complex double-double.
#[derive(Clone, Copy, Debug)]
pub struct Cdd {
    pub re: Dd,
    pub im: Dd,
}

impl Cdd {
    pub const ZERO: Cdd = Cdd {
        re: Dd::ZERO,
        im: Dd::ZERO,
    };

    pub fn from(z: C64) -> Cdd {
        Cdd {
            re: Dd::from(z.re),
            im: Dd::from(z.im),
        }
    }

    #[inline]
    pub fn add(self, o: Cdd) -> Cdd {
        Cdd {
            re: self.re.add(o.re),
            im: self.im.add(o.im),
        }
    }

    #[inline]
    pub fn mul(self, o: Cdd) -> Cdd {
        Cdd {
            re: self.re.mul(o.re).add(self.im.mul(o.im).neg()),
            im: self.re.mul(o.im).add(self.im.mul(o.re)),
        }
    }

    #[inline]
    pub fn mul_real(self, r: Dd) -> Cdd {
        Cdd {
            re: self.re.mul(r),
            im: self.im.mul(r),
        }
    }

    /// `self^e` by repeated squaring (`e ≥ 0`).
    pub fn powi(self, mut e: u32) -> Cdd {
        let mut base = self;
        let mut acc = Cdd::from(C64::new(1.0, 0.0));
        while e > 0 {
            if e & 1 == 1 {
                acc = acc.mul(base);
            }
            e >>= 1;
            if e > 0 {
                base = base.mul(base);
            }
        }
        acc
    }

    pub fn to_c64(self) -> C64 {
        C64::new(self.re.to_f64(), self.im.to_f64())
    }
}

/// The values `h_k(y, τ)` at one projective point `y` (N coordinates) and real `τ`, each
/// multiplied by the same factor `e^{−s_k}` as the extended Jacobian of
/// [`super::cpu::extended_jacobians`] (`s_k = max_c Re(ẑ Â)_c` over the equation's block),
/// computed in double-double and rounded. `lifts`: the point's own lift row (p × M layout's
/// row), else the homotopy's. Returns false (and leaves `out` alone) where double-double does
/// not apply: a negative exponent, a zero coordinate under a used exponent, or values out of
/// range.
pub fn scaled_values(
    layout: &EvalLayout,
    y: &[C64],
    tau: f64,
    lifts: Option<&[f64]>,
    out: &mut [C64],
) -> bool {
    let (nh, m) = (layout.nh, layout.m);
    let w = nh + 2;
    let ln_abs: Vec<f64> = y.iter().map(|z| z.norm().ln()).collect();
    let yd: Vec<Cdd> = y.iter().map(|&z| Cdd::from(z)).collect();
    let mut vals = vec![C64::new(0.0, 0.0); layout.n];
    for (k, b) in layout.blocks.iter().enumerate() {
        let cols = b.start..b.start + b.len;
        let lift = |c: usize| match lifts {
            Some(l) => l[c],
            None => layout.a_hat[nh * m + c],
        };
        // The shift s_k, as the GEMM evaluation computes it (in double).
        let mut s = f64::NEG_INFINITY;
        for c in cols.clone() {
            let mut re = tau * lift(c);
            for (j, l) in ln_abs.iter().enumerate() {
                let a = layout.a_hat[j * m + c];
                if a != 0.0 {
                    re += a * l;
                }
            }
            s = s.max(re);
        }
        if !s.is_finite() {
            return false;
        }
        let mut sum = Cdd::ZERO;
        for (r, c) in cols.enumerate() {
            let coeff = b.bt[r * w + nh + 1];
            let mut mono = Cdd::from(coeff);
            for (j, yj) in yd.iter().enumerate() {
                let a = layout.a_hat[j * m + c];
                if a == 0.0 {
                    continue;
                }
                if a < 0.0 || a != a.trunc() || y[j] == C64::new(0.0, 0.0) {
                    return false;
                }
                mono = mono.mul(yj.powi(a as u32));
            }
            // e^{τω − s} with τω exact in double-double.
            let (p, e) = two_prod(tau, lift(c));
            let Some(factor) = Dd::renorm(p, e).add(Dd::from(-s)).exp() else {
                return false;
            };
            sum = sum.add(mono.mul_real(factor));
        }
        let v = sum.to_c64();
        if !(v.re.is_finite() && v.im.is_finite()) {
            return false;
        }
        vals[k] = v;
    }
    out.copy_from_slice(&vals);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_known_digits() {
        // e = 2.718281828459045 + 1.4456468917292502e-16 (double-double digits of e).
        let e = Dd::from(1.0).exp().unwrap();
        assert_eq!(e.hi, std::f64::consts::E);
        assert!((e.lo - 1.445_646_891_729_250_2e-16).abs() < 1e-29, "{e:?}");
        // e^x · e^{−x} = 1 to double-double accuracy.
        for x in [1e-9, 0.3, -2.5, 17.25, -300.0] {
            let p = Dd::from(x).exp().unwrap().mul(Dd::from(-x).exp().unwrap());
            let err = p.add(Dd::from(-1.0)).to_f64().abs();
            assert!(err < 1e-29, "x = {x}: {err:e}");
        }
    }

    #[test]
    fn cancellation_is_resolved() {
        // (1 + 2^-30)·(1 − 2^-30) − 1 = −2^-60: lost in double, exact in double-double.
        let u = 2f64.powi(-30);
        assert_eq!((1.0 + u) * (1.0 - u) - 1.0, 0.0);
        let a = Dd::from(1.0).add(Dd::from(u));
        let b = Dd::from(1.0).add(Dd::from(-u));
        let d = a.mul(b).add(Dd::from(-1.0));
        assert_eq!(d.to_f64(), -(u * u));
        let z = Cdd::from(C64::new(0.6, 0.8)).powi(7).to_c64();
        let r = C64::new(0.6, 0.8).powi(7);
        assert!((z - r).norm() < 1e-15);
    }
}
