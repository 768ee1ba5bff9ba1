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

/// Error-free product: `a·b = p + e` exactly, by one fused multiply-add where the build
/// targets a processor with FMA.
#[cfg(target_feature = "fma")]
#[inline]
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// Error-free product: `a·b = p + e` exactly, by Veltkamp's splitting and Dekker's product
/// (a build for generic x86-64 has no FMA instruction, and `f64::mul_add` then calls a
/// software routine several times slower than these 17 flops). Exact while `|a|, |b|`
/// stay below ~2^996.
#[cfg(not(target_feature = "fma"))]
#[inline]
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    #[inline]
    fn split(x: f64) -> (f64, f64) {
        const C: f64 = 134_217_729.0; // 2^27 + 1
        let t = C * x;
        let hi = t - (t - x);
        (hi, x - hi)
    }
    let p = a * b;
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    (p, ((ah * bh - p) + ah * bl + al * bh) + al * bl)
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

    /// Division (Hida–Li–Bailey's "accurate" scheme: three quotient digits).
    #[inline]
    pub fn div(self, b: Dd) -> Dd {
        let q1 = self.hi / b.hi;
        let r = self.add(b.mul_f64(q1).neg());
        let q2 = r.hi / b.hi;
        let r = r.add(b.mul_f64(q2).neg());
        let q3 = r.hi / b.hi;
        let q = Dd::renorm(q1, q2);
        q.add(Dd::from(q3))
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

    /// `e^x` to ~1e-30 relative (the reduction by `k·ln 2` leaves an absolute error of about
    /// `k·1e-32` in the argument): `x = k·ln 2 + j/256 + i/65536 + u` with `|u| ≤ 2^-17`,
    /// `e^x = 2^k · e^{j/256} · e^{i/65536} · e^u`, both steps from tables ([`exp_tables`])
    /// and `e^u` by its Taylor polynomial of degree 5 (remainder below
    /// `2^-102/6! ≈ 3e-34`) in Horner form with double-double coefficients. `None` outside
    /// the double range.
    pub fn exp(self) -> Option<Dd> {
        if self.hi == 0.0 {
            return Some(Dd::from(1.0));
        }
        if !(self.hi.abs() < 700.0) {
            return None;
        }
        let k = (self.hi / LN2.hi).round();
        let r = self.add(LN2.mul_f64(k).neg());
        let j = (r.hi * EXP_STEPS).round();
        // j/256 is exact, so u is r shifted by an exact double.
        let u = r.add(Dd::from(-j / EXP_STEPS));
        // i/65536 is exact too.
        let i = (u.hi * EXP_FINE_STEPS).round();
        let u = u.add(Dd::from(-i / EXP_FINE_STEPS));
        let t = exp_tables();
        let sum = horner(&t.inv_fact, u);
        let e = t.steps[(j as i64 + EXP_TABLE_HALF as i64) as usize];
        let f = t.fine[(i as i64 + EXP_FINE_HALF as i64) as usize];
        Some(sum.mul(f).mul(e).scale2(k as i32))
    }

    /// `e^x` by the plain series (argument halved 8 times, 14 terms, squared back): slow,
    /// independent of the table; builds [`exp_tables`] and checks [`Dd::exp`] in the tests.
    fn exp_series(self) -> Dd {
        let k = (self.hi / LN2.hi).round();
        let r = self.add(LN2.mul_f64(k).neg()).scale2(-8);
        let mut term = Dd::from(1.0);
        let mut sum = Dd::from(1.0);
        for j in 1..=14 {
            term = term.mul(r).div_f64(j as f64);
            sum = sum.add(term);
        }
        for _ in 0..8 {
            sum = sum.mul(sum);
        }
        sum.scale2(k as i32)
    }
}

impl Dd {
    /// `(sin x, cos x)` to ~1e-31 absolute for `|x| ≲ 1e3`: `x = k·π/2 + j/256 + u` with
    /// `|u| ≤ 1/512`, the angle-sum formulas with `sin, cos (j/256)` from a table
    /// ([`trig_tables`]) and the Taylor polynomials of `sin u`, `cos u` (degree 9 and 10),
    /// then the quadrant `k mod 4`. `None` when `|x| ≥ 1e6` or not finite.
    pub fn sin_cos(self) -> Option<(Dd, Dd)> {
        if !(self.hi.abs() < 1e6) {
            return None;
        }
        let k = (self.hi / HALF_PI.hi).round();
        let r = self.add(HALF_PI.mul_f64(k).neg());
        let j = (r.hi * EXP_STEPS).round();
        let u = r.add(Dd::from(-j / EXP_STEPS));
        let t = trig_tables();
        let u2 = u.mul(u);
        // sin u = u·Σ (−u²)^i/(2i+1)!, cos u = Σ (−u²)^i/(2i)!, i ≤ 4 and 5, by Horner.
        let su = horner(&t.sin_coef, u2).mul(u);
        let cu = horner(&t.cos_coef, u2);
        let idx = (j as i64 + TRIG_TABLE_HALF as i64) as usize;
        let (sj, cj) = (t.sin[idx], t.cos[idx]);
        let sr = sj.mul(cu).add(cj.mul(su));
        let cr = cj.mul(cu).add(sj.mul(su).neg());
        Some(match (k as i64).rem_euclid(4) {
            0 => (sr, cr),
            1 => (cr, sr.neg()),
            2 => (sr.neg(), cr.neg()),
            _ => (cr.neg(), sr),
        })
    }

    /// `(sin x, cos x)` by their plain Taylor series (|x| ≤ 1): builds [`trig_tables`] and
    /// checks [`Dd::sin_cos`] in the tests.
    fn sin_cos_series(self) -> (Dd, Dd) {
        let (mut s, mut c) = (Dd::ZERO, Dd::ZERO);
        let mut term = Dd::from(1.0); // x^i / i!
        for i in 0..40 {
            match i % 4 {
                0 => c = c.add(term),
                1 => s = s.add(term),
                2 => c = c.add(term.neg()),
                _ => s = s.add(term.neg()),
            }
            term = term.mul(self).div_f64((i + 1) as f64);
        }
        (s, c)
    }
}

/// `Σ_i c_i x^i` by Horner's rule (`c` non-empty, constant term first).
fn horner(c: &[Dd], x: Dd) -> Dd {
    let (last, rest) = c.split_last().expect("a polynomial has a coefficient");
    rest.iter().rev().fold(*last, |acc, ci| acc.mul(x).add(*ci))
}

/// `π/2` in double-double.
const HALF_PI: Dd = Dd {
    hi: std::f64::consts::FRAC_PI_2,
    lo: 6.123_233_995_736_766e-17,
};
/// `|r| ≤ π/4` after the reduction by `k·π/2`, so `|j| ≤ 202`.
const TRIG_TABLE_HALF: usize = 202;

struct TrigTables {
    /// `sin, cos (j/256)` for `j = −202 ..= 202`.
    sin: Vec<Dd>,
    cos: Vec<Dd>,
    /// `(−1)^i/(2i+1)!`, `i = 0 ..= 4`.
    sin_coef: Vec<Dd>,
    /// `(−1)^i/(2i)!`, `i = 0 ..= 5`.
    cos_coef: Vec<Dd>,
}

/// `1/i!` for `i = 0 ..= n`.
fn inverse_factorials(n: usize) -> Vec<Dd> {
    let mut f = vec![Dd::from(1.0)];
    for i in 1..=n {
        f.push(f[i - 1].div_f64(i as f64));
    }
    f
}

fn trig_tables() -> &'static TrigTables {
    static T: std::sync::OnceLock<TrigTables> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let h = TRIG_TABLE_HALF as i64;
        let (sin, cos) = (-h..=h)
            .map(|j| Dd::from(j as f64 / EXP_STEPS).sin_cos_series())
            .unzip();
        let fact = inverse_factorials(11);
        let sign = |i: usize, v: Dd| if i % 2 == 0 { v } else { v.neg() };
        TrigTables {
            sin,
            cos,
            sin_coef: (0..=4).map(|i| sign(i, fact[2 * i + 1])).collect(),
            cos_coef: (0..=5).map(|i| sign(i, fact[2 * i])).collect(),
        }
    })
}

/// `ln 2` in double-double.
const LN2: Dd = Dd {
    hi: std::f64::consts::LN_2,
    lo: 2.319_046_813_846_299_6e-17,
};
/// Table steps per unit of the argument of [`Dd::exp`].
const EXP_STEPS: f64 = 256.0;
/// `|r| ≤ ln 2 / 2` after the reduction by `k·ln 2`, so `|j| ≤ 89`.
const EXP_TABLE_HALF: usize = 89;
/// Steps of the second table of [`Dd::exp`] per unit of the argument.
const EXP_FINE_STEPS: f64 = 65536.0;
/// `|u| ≤ 1/512` after the first table, so `|i| ≤ 128` in the second.
const EXP_FINE_HALF: usize = 128;
/// Degree of the Taylor polynomial of `e^u`, `|u| ≤ 2^-17`.
const EXP_DEGREE: usize = 5;

struct ExpTables {
    /// `e^{j/256}` for `j = −89 ..= 89`.
    steps: Vec<Dd>,
    /// `e^{i/65536}` for `i = −128 ..= 128`.
    fine: Vec<Dd>,
    /// `1/i!` for `i = 0 ..= EXP_DEGREE`.
    inv_fact: Vec<Dd>,
}

fn exp_tables() -> &'static ExpTables {
    static T: std::sync::OnceLock<ExpTables> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let h = EXP_TABLE_HALF as i64;
        let steps = (-h..=h)
            .map(|j| Dd::from(j as f64 / EXP_STEPS).exp_series())
            .collect();
        let h = EXP_FINE_HALF as i64;
        let fine = (-h..=h)
            .map(|i| Dd::from(i as f64 / EXP_FINE_STEPS).exp_series())
            .collect();
        let inv_fact = inverse_factorials(EXP_DEGREE);
        ExpTables {
            steps,
            fine,
            inv_fact,
        }
    })
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

    #[inline]
    pub fn sub(self, o: Cdd) -> Cdd {
        self.add(o.neg())
    }

    #[inline]
    pub fn neg(self) -> Cdd {
        Cdd {
            re: self.re.neg(),
            im: self.im.neg(),
        }
    }

    #[inline]
    pub fn conj(self) -> Cdd {
        Cdd {
            re: self.re,
            im: self.im.neg(),
        }
    }

    /// `|z|²` in double-double.
    #[inline]
    pub fn norm_sqr(self) -> Dd {
        self.re.mul(self.re).add(self.im.mul(self.im))
    }

    /// `self / o` as `self·conj(o) / |o|²` (no guard against overflow of `|o|²`: the
    /// callers divide by pivots of row-equilibrated matrices).
    #[inline]
    pub fn div(self, o: Cdd) -> Cdd {
        let d = o.norm_sqr();
        let p = self.mul(o.conj());
        Cdd {
            re: p.re.div(d),
            im: p.im.div(d),
        }
    }
}

/// `e^{τω}` for complex `τ` and real `ω`, with both parts of `τω` exact in double-double.
pub(crate) fn exp_tau_omega(tau: C64, om: f64) -> Option<Cdd> {
    let (p, e) = two_prod(tau.re, om);
    let mag = Dd::renorm(p, e).exp()?;
    if tau.im == 0.0 {
        return Some(Cdd {
            re: mag,
            im: Dd::ZERO,
        });
    }
    let (p, e) = two_prod(tau.im, om);
    let (sin, cos) = Dd::renorm(p, e).sin_cos()?;
    Some(Cdd {
        re: mag.mul(cos),
        im: mag.mul(sin),
    })
}

/// The values `h_k(y, τ)` at one projective point `y` (N coordinates) and complex `τ`, each
/// multiplied by the same factor `e^{−s_k}` as the extended Jacobian of
/// [`super::cpu::extended_jacobians`] (`s_k = max_c Re(ẑ Â)_c` over the equation's block),
/// computed in double-double and rounded. `lifts`: the point's own lift row (p × M layout's
/// row), else the homotopy's. Returns false (and leaves `out` alone) where double-double does
/// not apply: a negative exponent, a zero coordinate under a used exponent, or values out of
/// range.
pub fn scaled_values(
    layout: &EvalLayout,
    y: &[C64],
    tau: C64,
    lifts: Option<&[f64]>,
    out: &mut [C64],
) -> bool {
    let (nh, m) = (layout.nh, layout.m);
    let w = nh + 2;
    let ln_abs: Vec<f64> = y.iter().map(|z| z.norm().ln()).collect();
    let lift = |c: usize| match lifts {
        Some(l) => l[c],
        None => layout.a_hat[nh * m + c],
    };
    // Powers y_j^e, e = 0 ..= the largest exponent of y_j, each computed once.
    let mut powers: Vec<Vec<Cdd>> = Vec::with_capacity(nh);
    for (j, &yj) in y.iter().enumerate() {
        let row = &layout.a_hat[j * m..(j + 1) * m];
        let mut top = 0u32;
        for &a in row {
            if a < 0.0 || a != a.trunc() || (a != 0.0 && yj == C64::new(0.0, 0.0)) {
                return false;
            }
            top = top.max(a as u32);
        }
        let base = Cdd::from(yj);
        let mut pw = Vec::with_capacity(top as usize + 1);
        pw.push(Cdd::from(C64::new(1.0, 0.0)));
        for e in 1..=top as usize {
            pw.push(if e == 1 { base } else { pw[e - 1].mul(base) });
        }
        powers.push(pw);
    }
    // e^{τω} per distinct lift ω (total-degree homotopies have two; polyhedral cells one per
    // column): the last few values are remembered.
    let mut recent: Vec<(f64, Cdd)> = Vec::with_capacity(4);
    let mut vals = vec![C64::new(0.0, 0.0); layout.n];
    for (k, b) in layout.blocks.iter().enumerate() {
        let cols = b.start..b.start + b.len;
        // The shift s_k, as the GEMM evaluation computes it (in double).
        let mut s = f64::NEG_INFINITY;
        for c in cols.clone() {
            let mut re = tau.re * lift(c);
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
        let Some(shift) = Dd::from(-s).exp() else {
            return false;
        };
        let mut sum = Cdd::ZERO;
        for (r, c) in cols.enumerate() {
            let mut mono = Cdd::from(b.bt[r * w + nh + 1]);
            for (j, pw) in powers.iter().enumerate() {
                let a = layout.a_hat[j * m + c];
                if a != 0.0 {
                    mono = mono.mul(pw[a as usize]);
                }
            }
            // e^{τω − s} = e^{τω}·e^{−s}, with τω exact in double-double.
            let om = lift(c);
            let e = match recent.iter().find(|(o, _)| *o == om) {
                Some(&(_, e)) => e,
                None => {
                    let Some(e) = exp_tau_omega(tau, om) else {
                        return false;
                    };
                    if recent.len() == 4 {
                        recent.remove(0);
                    }
                    recent.push((om, e));
                    e
                }
            };
            sum = sum.add(mono.mul(e).mul_real(shift));
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
    fn table_exp_matches_the_series() {
        // The table route against the independent series route, over the whole reduced
        // range and beyond (the series route is the less accurate one: ~1e-30).
        let mut x = -60.0;
        while x < 60.0 {
            let a = Dd::from(x).add(Dd::from(x * 1e-17)).exp().unwrap();
            let b = Dd::from(x).add(Dd::from(x * 1e-17)).exp_series();
            let rel = a.add(b.neg()).to_f64().abs() / b.to_f64();
            assert!(rel < 4e-29, "x = {x}: {rel:e}");
            // e^x · e^{−x} = 1: the table route alone (measured worst 8e-30 here).
            let xx = Dd::from(x).add(Dd::from(x * 1e-17));
            let one = xx.exp().unwrap().mul(xx.neg().exp().unwrap());
            let err = one.add(Dd::from(-1.0)).to_f64().abs();
            assert!(err < 2e-29, "x = {x}: {err:e}");
            x += 0.0137;
        }
        assert!(Dd::from(800.0).exp().is_none());
        assert!(Dd::from(f64::NAN).exp().is_none());
    }

    #[test]
    fn table_sin_cos_matches_the_series_and_identities() {
        let mut x = -40.0;
        while x < 40.0 {
            let xx = Dd::from(x).add(Dd::from(x * 1e-17));
            let (s, c) = xx.sin_cos().unwrap();
            // sin² + cos² = 1, and agreement with double sin/cos.
            let one = s.mul(s).add(c.mul(c)).add(Dd::from(-1.0)).to_f64().abs();
            assert!(one < 1e-30, "x = {x}: {one:e}");
            assert!((s.to_f64() - x.sin()).abs() < 1e-15 && (c.to_f64() - x.cos()).abs() < 1e-15);
            if x.abs() <= 1.0 {
                let (s2, c2) = xx.sin_cos_series();
                let d = s.add(s2.neg()).to_f64().abs() + c.add(c2.neg()).to_f64().abs();
                assert!(d < 1e-30, "x = {x}: {d:e}");
            }
            // sin(2x) = 2 sin x cos x against the table at 2x.
            let (s2x, _) = xx.mul_f64(2.0).sin_cos().unwrap();
            let d = s2x.add(s.mul(c).mul_f64(-2.0)).to_f64().abs();
            assert!(d < 1e-29, "x = {x}: {d:e}");
            x += 0.0731;
        }
        assert!(Dd::from(1e7).sin_cos().is_none());
    }

    #[test]
    fn two_prod_is_exact() {
        // Integer-valued doubles below 2^53: a·b is exact in i128, and so must be p + e.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = (x >> 11) as f64 * if x & 1 == 0 { 1.0 } else { -1.0 };
            let b = ((x >> 20) | 1) as f64;
            let (p, e) = two_prod(a, b);
            assert_eq!(p, a * b);
            assert_eq!(p as i128 + e as i128, a as i128 * b as i128, "{a} · {b}");
        }
        let (p, e) = two_prod(1.0 + 2f64.powi(-30), 1.0 - 2f64.powi(-30));
        assert_eq!((p, e), (1.0, -(2f64.powi(-60))));
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
