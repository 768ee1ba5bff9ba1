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

    /// The sum with one error-free sum of the high parts (QD's "sloppy" addition): error
    /// at most ~4ε²·(|a| + |b|) (ε = 2^-53), not relative to the sum when it cancels; the
    /// bound a dot product or an elimination step has anyway. About half of [`Dd::add`]'s
    /// flops: the tracker's double-double evaluation and elimination use it
    /// (`eval::dd_homotopy`, `linalg::dd_lu`).
    #[inline]
    pub fn add_fast(self, o: Dd) -> Dd {
        let (s, e) = two_sum(self.hi, o.hi);
        Dd::renorm(s, e + (self.lo + o.lo))
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

    /// `e^x` to ~1e-31 relative for `|x| ≲ 1` (the reduction by `k·ln 2` adds an error of
    /// about `k·1e-32`): `x = k·ln 2 + j/256 + i/65536 + u` with `|u| ≤ 2^-17`,
    /// `e^x = 2^k · e^{j/256} · e^{i/65536} · e^u`, both steps from tables (`exp_tables`)
    /// and `e^u` by `exp_small`. Steps with `k`, `j` or `i` zero are skipped (tracking
    /// near t = 1 has `|τω'| < 1/512` mostly: `exp_fine`, inlined). `None` outside the
    /// double range.
    #[inline]
    pub fn exp(self) -> Option<Dd> {
        if self.hi.abs() <= 1.0 / 512.0 {
            return Some(exp_fine(self));
        }
        self.exp_reduced()
    }

    /// [`Dd::exp`] for `|x| > 1/512`.
    fn exp_reduced(self) -> Option<Dd> {
        if !(self.hi.abs() < 700.0) {
            return None;
        }
        let k = (self.hi / LN2.hi).round();
        let r = if k != 0.0 {
            self.add(LN2.mul_f64(k).neg())
        } else {
            self
        };
        let j = (r.hi * EXP_STEPS).round();
        if j == 0.0 {
            return Some(exp_fine(r).scale2(k as i32));
        }
        // r.hi − j/256 is exact (Sterbenz: |r.hi − j/256| ≤ 1/512 ≤ |j/256|/2).
        let u = Dd::renorm(r.hi - j / EXP_STEPS, r.lo);
        let e = exp_fine(u).mul(exp_tables().steps[(j as i64 + EXP_TABLE_HALF as i64) as usize]);
        Some(if k != 0.0 { e.scale2(k as i32) } else { e })
    }

    /// `e^x` by the series with the argument halved 8 times (14 terms, squared back; the
    /// squarings make it the less accurate route, ~1e-30): checks [`Dd::exp`] in the tests.
    #[cfg(test)]
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
    /// `(sin x, cos x)` to ~1e-31 absolute for `|x| ≲ 1e3`: `x = k·π/2 + j/256 + i/65536 + u`
    /// with `|u| ≤ 2^-17`, the angle-sum formulas with `sin, cos` of `j/256` and `i/65536`
    /// from tables (`trig_tables`) and of `u` by `sin_cos_small`, then the quadrant
    /// `k mod 4`. `None` when `|x| ≥ 1e6` or not finite.
    pub fn sin_cos(self) -> Option<(Dd, Dd)> {
        if !(self.hi.abs() < 1e6) {
            return None;
        }
        let k = (self.hi / HALF_PI.hi).round();
        let r = if k != 0.0 {
            self.add(HALF_PI.mul_f64(k).neg())
        } else {
            self
        };
        // Both shifts are exact (Sterbenz, as in [`Dd::exp`]).
        let j = (r.hi * EXP_STEPS).round();
        let u = Dd::renorm(r.hi - j / EXP_STEPS, r.lo);
        let i = (u.hi * EXP_FINE_STEPS).round();
        let u = Dd::renorm(u.hi - i / EXP_FINE_STEPS, u.lo);
        let (mut sr, mut cr) = sin_cos_small(u);
        // sin(a + b) = sin a cos b + cos a sin b, cos(a + b) = cos a cos b − sin a sin b.
        let rotate = |(s, c): (Dd, Dd), sa: Dd, ca: Dd| {
            (sa.mul(c).add(ca.mul(s)), ca.mul(c).add(sa.mul(s).neg()))
        };
        if i != 0.0 || j != 0.0 {
            let t = trig_tables();
            if i != 0.0 {
                let idx = (i as i64 + EXP_FINE_HALF as i64) as usize;
                (sr, cr) = rotate((sr, cr), t.fine_sin[idx], t.fine_cos[idx]);
            }
            if j != 0.0 {
                let idx = (j as i64 + TRIG_TABLE_HALF as i64) as usize;
                (sr, cr) = rotate((sr, cr), t.sin[idx], t.cos[idx]);
            }
        }
        Some(match (k as i64).rem_euclid(4) {
            0 => (sr, cr),
            1 => (cr, sr.neg()),
            2 => (sr.neg(), cr.neg()),
            _ => (cr.neg(), sr),
        })
    }

    /// `(sin x, cos x)` by their Taylor series (|x| ≤ 1, 40 terms summed from the smallest):
    /// builds [`trig_tables`] and checks [`Dd::sin_cos`] in the tests.
    fn sin_cos_series(self) -> (Dd, Dd) {
        let (mut s, mut c) = (Dd::ZERO, Dd::ZERO);
        for (i, &t) in taylor_terms(self, 40).iter().enumerate().rev() {
            match i % 4 {
                0 => c = c.add(t),
                1 => s = s.add(t),
                2 => c = c.add(t.neg()),
                _ => s = s.add(t.neg()),
            }
        }
        (s, c)
    }

    /// `e^x` by its Taylor series (|x| ≤ 1/2, 32 terms summed from the smallest, error a few
    /// `2^-106`): builds [`exp_tables`].
    fn exp_taylor(self) -> Dd {
        taylor_terms(self, 32)
            .iter()
            .rev()
            .fold(Dd::ZERO, |sum, &t| sum.add(t))
    }
}

/// `x^i / i!` for `i = 0 .. n`.
fn taylor_terms(x: Dd, n: usize) -> Vec<Dd> {
    let mut terms = vec![Dd::from(1.0)];
    for i in 1..n {
        terms.push(terms[i - 1].mul(x).div_f64(i as f64));
    }
    terms
}

/// `e^u` for `|u| ≤ 1/512`: `u = i/65536 + v`, `e^u = e^{i/65536}·e^v` (table, [`exp_small`]).
#[inline]
fn exp_fine(u: Dd) -> Dd {
    let i = (u.hi * EXP_FINE_STEPS).round();
    if i == 0.0 {
        return exp_small(u);
    }
    // u.hi − i/65536 is exact (Sterbenz, as in [`Dd::exp`]).
    let v = Dd::renorm(u.hi - i / EXP_FINE_STEPS, u.lo);
    exp_small(v).mul(exp_tables().fine[(i as i64 + EXP_FINE_HALF as i64) as usize])
}

/// `e^u` for `|u| ≤ 2^-17`, `u = h + l`: `1 + h + h²/2` in double-double (`h²` exact by
/// [`two_prod`]), the rest `l·(1 + h + h²/2) + h³/6 + h⁴/24 + h⁵/120` in double. Error below
/// `1e-31`: a few roundings (`2^-53`) of sums below `3e-16`; `u⁶/720 < 3e-34`.
#[inline]
fn exp_small(u: Dd) -> Dd {
    let (h, l) = (u.hi, u.lo);
    let (s, e) = two_sum(1.0, h);
    let (q, qe) = two_prod(h, h);
    let (s2, e2) = two_sum(s, 0.5 * q);
    let cubic = h * q * (1.0 / 6.0 + h * (1.0 / 24.0 + h * (1.0 / 120.0)));
    let small = l * (1.0 + h * (1.0 + 0.5 * h)) + 0.5 * qe;
    Dd::renorm(s2, e + (e2 + (cubic + small)))
}

/// `(sin u, cos u)` for `|u| ≤ 2^-17`, `u = h + l`: `sin u = u − h³/6·(1 − h²/20) − h²l/2`
/// and `cos u = 1 − h²/2 − h·l + h⁴/24` (`h²` exact by [`two_prod`]), corrections in double.
/// Absolute error below `3e-32` (the corrections are below `8e-17` and `1.2e-16`).
#[inline]
fn sin_cos_small(u: Dd) -> (Dd, Dd) {
    let (h, l) = (u.hi, u.lo);
    let (q, qe) = two_prod(h, h);
    let st = -(h * q * (1.0 / 6.0 - q * (1.0 / 120.0))) - 0.5 * q * l;
    let (a, ae) = two_sum(h, st);
    let sin = Dd::renorm(a, ae + l);
    let (c, ce) = two_sum(1.0, -0.5 * q);
    let cos = Dd::renorm(c, ce + (q * q * (1.0 / 24.0) - (0.5 * qe + h * l)));
    (sin, cos)
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
    /// `sin, cos (i/65536)` for `i = −128 ..= 128`.
    fine_sin: Vec<Dd>,
    fine_cos: Vec<Dd>,
}

fn trig_tables() -> &'static TrigTables {
    static T: std::sync::OnceLock<TrigTables> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let h = TRIG_TABLE_HALF as i64;
        let (sin, cos) = (-h..=h)
            .map(|j| Dd::from(j as f64 / EXP_STEPS).sin_cos_series())
            .unzip();
        let h = EXP_FINE_HALF as i64;
        let (fine_sin, fine_cos) = (-h..=h)
            .map(|i| Dd::from(i as f64 / EXP_FINE_STEPS).sin_cos_series())
            .unzip();
        TrigTables {
            sin,
            cos,
            fine_sin,
            fine_cos,
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
/// `|u| ≤ 1/512` after the first table, so `|i| ≤ 128` in the second (of exp and sin_cos).
const EXP_FINE_HALF: usize = 128;

struct ExpTables {
    /// `e^{j/256}` for `j = −89 ..= 89`.
    steps: Vec<Dd>,
    /// `e^{i/65536}` for `i = −128 ..= 128`.
    fine: Vec<Dd>,
}

fn exp_tables() -> &'static ExpTables {
    static T: std::sync::OnceLock<ExpTables> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let h = EXP_TABLE_HALF as i64;
        let steps = (-h..=h)
            .map(|j| Dd::from(j as f64 / EXP_STEPS).exp_taylor())
            .collect();
        let h = EXP_FINE_HALF as i64;
        let fine = (-h..=h)
            .map(|i| Dd::from(i as f64 / EXP_FINE_STEPS).exp_taylor())
            .collect();
        ExpTables { steps, fine }
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

    /// [`Cdd::add`] with [`Dd::add_fast`].
    #[inline]
    pub fn add_fast(self, o: Cdd) -> Cdd {
        Cdd {
            re: self.re.add_fast(o.re),
            im: self.im.add_fast(o.im),
        }
    }

    /// [`Cdd::sub`] with [`Dd::add_fast`].
    #[inline]
    pub fn sub_fast(self, o: Cdd) -> Cdd {
        self.add_fast(o.neg())
    }

    /// [`Cdd::mul`] with [`Dd::add_fast`].
    #[inline]
    pub fn mul_fast(self, o: Cdd) -> Cdd {
        Cdd {
            re: self.re.mul(o.re).add_fast(self.im.mul(o.im).neg()),
            im: self.re.mul(o.im).add_fast(self.im.mul(o.re)),
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

// The residual needs each term to ~1e-30 of its magnitude and the sum to ~1e-30 of
// `Σ|terms|` (an absolute bound), not every intermediate to 1e-32 of its own value:
// [`sum2`] and [`Cdd::mul_abs`] use one error-free transformation less than [`Dd::add`]
// and [`Cdd::mul`], with errors bounded by the operands' magnitudes instead
// (u = 2^-53; first-order worst cases, every rounding counted at its bound).

/// `a + b` with error below `8u²·(|a| + |b|)`: one [`two_sum`] of the high parts.
#[inline]
fn sum2(a: Dd, b: Dd) -> Dd {
    let (s, e) = two_sum(a.hi, b.hi);
    Dd::renorm(s, e + (a.lo + b.lo))
}

/// `a·b + c·d` with error below `24u²·(|ab| + |cd|)`: both products' high parts exact by
/// [`two_prod`], one [`two_sum`], the rest (`a.lo·b.lo` dropped, below `u²·|ab|`) in
/// double.
#[inline]
fn dot2(a: Dd, b: Dd, c: Dd, d: Dd) -> Dd {
    let (p, pe) = two_prod(a.hi, b.hi);
    let (q, qe) = two_prod(c.hi, d.hi);
    let (s, se) = two_sum(p, q);
    let t = (a.hi * b.lo + a.lo * b.hi) + (c.hi * d.lo + c.lo * d.hi);
    Dd::renorm(s, se + ((pe + qe) + t))
}

/// `a·x + b·y` for doubles `x`, `y`, as [`dot2`].
#[inline]
fn dot2_f64(a: Dd, x: f64, b: Dd, y: f64) -> Dd {
    let (p, pe) = two_prod(a.hi, x);
    let (q, qe) = two_prod(b.hi, y);
    let (s, se) = two_sum(p, q);
    Dd::renorm(s, se + ((pe + qe) + (a.lo * x + b.lo * y)))
}

impl Cdd {
    /// `self·o` with error below `24u²·|self|·|o|` (`≈ 3e-31`) in each part ([`dot2`]).
    #[inline]
    fn mul_abs(self, o: Cdd) -> Cdd {
        Cdd {
            re: dot2(self.re, o.re, self.im.neg(), o.im),
            im: dot2(self.re, o.im, self.im, o.re),
        }
    }

    /// `self + o` by [`sum2`].
    #[inline]
    fn add_abs(self, o: Cdd) -> Cdd {
        Cdd {
            re: sum2(self.re, o.re),
            im: sum2(self.im, o.im),
        }
    }
}

/// `e^{τω}` (times `e^{−s}` where the caller folds its shift in): real double-double for
/// real `τ`, complex otherwise. What [`scaled_values`] multiplies the coefficients by.
trait Growth: Copy {
    fn one() -> Self;
    /// `e^{τω − s}` with `τω` exact (`s = 0`: no shift); zero below `e^{−700}`, `None` above
    /// `e^{700}` or for an angle out of [`Dd::sin_cos`]'s range.
    fn exp(tau: C64, om: f64, s: f64) -> Option<Self>;
    fn mul(self, o: Self) -> Self;
    /// `c·self` for a double coefficient `c`.
    fn times(self, c: C64) -> Cdd;
    /// `c₁·self + c₂·g₂`.
    fn times2(self, c1: C64, g2: Self, c2: C64) -> Cdd;
}

/// `τ_re·ω − s` in double-double, `τ_re·ω` exact.
#[inline]
fn shifted_product(tau_re: f64, om: f64, s: f64) -> Dd {
    let (p, e) = two_prod(tau_re, om);
    let x = Dd::renorm(p, e);
    if s != 0.0 {
        x.add(Dd::from(-s))
    } else {
        x
    }
}

impl Growth for Dd {
    fn one() -> Dd {
        Dd::from(1.0)
    }
    #[inline]
    fn exp(tau: C64, om: f64, s: f64) -> Option<Dd> {
        let x = shifted_product(tau.re, om, s);
        if x.hi < -700.0 {
            return Some(Dd::ZERO);
        }
        x.exp()
    }
    #[inline]
    fn mul(self, o: Dd) -> Dd {
        Dd::mul(self, o)
    }
    #[inline]
    fn times(self, c: C64) -> Cdd {
        Cdd {
            re: self.mul_f64(c.re),
            im: self.mul_f64(c.im),
        }
    }
    #[inline]
    fn times2(self, c1: C64, g2: Dd, c2: C64) -> Cdd {
        Cdd {
            re: dot2_f64(self, c1.re, g2, c2.re),
            im: dot2_f64(self, c1.im, g2, c2.im),
        }
    }
}

impl Growth for Cdd {
    fn one() -> Cdd {
        Cdd::from(C64::new(1.0, 0.0))
    }
    #[inline]
    fn exp(tau: C64, om: f64, s: f64) -> Option<Cdd> {
        let mag = <Dd as Growth>::exp(tau, om, s)?;
        if mag.hi == 0.0 {
            return Some(Cdd::ZERO);
        }
        let (p, e) = two_prod(tau.im, om);
        let (sin, cos) = Dd::renorm(p, e).sin_cos()?;
        Some(Cdd {
            re: mag.mul(cos),
            im: mag.mul(sin),
        })
    }
    #[inline]
    fn mul(self, o: Cdd) -> Cdd {
        Cdd::mul(self, o)
    }
    #[inline]
    fn times(self, c: C64) -> Cdd {
        Cdd {
            re: dot2_f64(self.re, c.re, self.im, -c.im),
            im: dot2_f64(self.re, c.im, self.im, c.re),
        }
    }
    #[inline]
    fn times2(self, c1: C64, g2: Cdd, c2: C64) -> Cdd {
        self.times(c1).add_abs(g2.times(c2))
    }
}

/// `e^{τω}` for complex `τ` and real `ω`, with both parts of `τω` exact in double-double;
/// `None` outside the double range.
pub(crate) fn exp_tau_omega(tau: C64, om: f64) -> Option<Cdd> {
    let re = shifted_product(tau.re, om, 0.0).exp()?;
    if tau.im == 0.0 {
        return Some(Cdd { re, im: Dd::ZERO });
    }
    let (p, e) = two_prod(tau.im, om);
    let (sin, cos) = Dd::renorm(p, e).sin_cos()?;
    Some(Cdd {
        re: re.mul(cos),
        im: re.mul(sin),
    })
}

/// `|τ_re·ω|` and `|s|` below this: the terms `c·y^a·e^{τω}` are summed unscaled and the sum
/// multiplied by `e^{−s}` (far from under- and overflow); otherwise each term gets
/// `e^{τω − s}`, zero where that is below `e^{−700}`.
const UNSCALED_RANGE: f64 = 500.0;

/// What [`scaled_values`] needs of a layout's exponents, built once per layout and thread:
/// per column its nonzero exponents `(j, a_j)`, whether the next column has the same
/// monomial, and per coordinate the largest exponent.
#[derive(Default)]
struct Plan {
    /// The layout's exponent rows and blocks `(start, len)` it was built from (compared at
    /// every call: a plan is used only for the same exponents).
    exponents: Vec<f64>,
    blocks: Vec<(usize, usize)>,
    /// A negative or non-integer exponent: double-double does not apply.
    unsupported: bool,
    top: Vec<usize>,
    /// Nonzero exponents of column `c`: `factors[first[c]..first[c + 1]]`, `j` ascending.
    first: Vec<usize>,
    factors: Vec<(usize, usize)>,
    /// Column `c + 1` is in the same block and has the same exponents.
    pair: Vec<bool>,
}

impl Plan {
    fn matches(&self, layout: &EvalLayout) -> bool {
        let (nh, m) = (layout.nh, layout.m);
        self.first.len() == m + 1
            && self.top.len() == nh
            && self.blocks.len() == layout.blocks.len()
            && self
                .blocks
                .iter()
                .zip(&layout.blocks)
                .all(|(&(s, l), b)| s == b.start && l == b.len)
            && same_bits(&self.exponents, &layout.a_hat[..nh * m])
    }

    fn build(layout: &EvalLayout) -> Plan {
        let (nh, m) = (layout.nh, layout.m);
        let a = |j: usize, c: usize| layout.a_hat[j * m + c];
        let mut plan = Plan {
            exponents: layout.a_hat[..nh * m].to_vec(),
            blocks: layout.blocks.iter().map(|b| (b.start, b.len)).collect(),
            top: vec![0; nh],
            pair: vec![false; m],
            ..Plan::default()
        };
        for c in 0..m {
            plan.first.push(plan.factors.len());
            for j in 0..nh {
                let e = a(j, c);
                if !(e >= 0.0 && e == e.trunc() && e < 1e6) {
                    // (Exponents of 10^6 and more would only fill the power table.)
                    plan.unsupported = true;
                } else if e > 0.0 {
                    plan.factors.push((j, e as usize));
                    plan.top[j] = plan.top[j].max(e as usize);
                }
            }
        }
        plan.first.push(plan.factors.len());
        for b in &layout.blocks {
            for c in b.start..(b.start + b.len).saturating_sub(1) {
                plan.pair[c] = (0..nh).all(|j| a(j, c) == a(j, c + 1));
            }
        }
        plan
    }

    fn factors(&self, c: usize) -> &[(usize, usize)] {
        &self.factors[self.first[c]..self.first[c + 1]]
    }
}

/// `a` and `b` are equal bit for bit (compared 32 at a time, without early exits inside a
/// chunk, so that the loop is vectorised).
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.chunks(32).zip(b.chunks(32)).all(|(x, y)| {
            x.iter()
                .zip(y)
                .fold(0, |d, (u, v)| d | (u.to_bits() ^ v.to_bits()))
                == 0
        })
}

/// Buffers of [`scaled_values`], kept per thread.
#[derive(Default)]
struct DdScratch {
    plan: Plan,
    ln_abs: Vec<f64>,
    /// `y_j^e` for `e = 0 ..= top_j`, coordinate after coordinate from `offsets[j]`.
    powers: Vec<Cdd>,
    offsets: Vec<usize>,
    vals: Vec<C64>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<DdScratch> = std::cell::RefCell::default();
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
    scaled_values_with(layout, y, tau, lifts, |v| out.copy_from_slice(v)).is_some()
}

/// [`scaled_values`], handed to `f` (from a per-thread buffer: no allocation per call);
/// `None` where double-double does not apply.
pub fn scaled_values_with<R>(
    layout: &EvalLayout,
    y: &[C64],
    tau: C64,
    lifts: Option<&[f64]>,
    f: impl FnOnce(&[C64]) -> R,
) -> Option<R> {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        s.eval(layout, y, tau, lifts).then(|| f(&s.vals))
    })
}

impl DdScratch {
    fn eval(&mut self, layout: &EvalLayout, y: &[C64], tau: C64, lifts: Option<&[f64]>) -> bool {
        let (nh, m) = (layout.nh, layout.m);
        if !self.plan.matches(layout) {
            self.plan = Plan::build(layout);
        }
        if self.plan.unsupported {
            return false;
        }
        let lift = lifts.unwrap_or(&layout.a_hat[nh * m..(nh + 1) * m]);
        self.ln_abs.clear();
        self.ln_abs.extend(y.iter().map(|z| z.norm().ln()));
        // Powers y_j^e, e = 0 ..= the largest exponent of y_j, each computed once.
        self.powers.clear();
        self.offsets.clear();
        for (&yj, &top) in y.iter().zip(&self.plan.top) {
            if top > 0 && yj == C64::new(0.0, 0.0) {
                return false;
            }
            self.offsets.push(self.powers.len());
            let base = Cdd::from(yj);
            self.powers.push(Cdd::one());
            for e in 1..=top {
                let p = if e == 1 {
                    base
                } else {
                    self.powers[self.powers.len() - 1].mul_abs(base)
                };
                self.powers.push(p);
            }
        }
        self.vals.clear();
        self.vals.resize(layout.n, C64::new(0.0, 0.0));
        if tau.im == 0.0 {
            self.blocks::<Dd>(layout, tau, lift)
        } else {
            self.blocks::<Cdd>(layout, tau, lift)
        }
    }

    /// [`DdScratch::block`] of every equation into `vals`; false where one fails.
    fn blocks<G: Growth>(&mut self, layout: &EvalLayout, tau: C64, lift: &[f64]) -> bool {
        // e^τ, computed where first needed.
        let mut e_tau: Option<Option<G>> = None;
        for k in 0..layout.n {
            match self.block::<G>(layout, k, tau, lift, &mut e_tau) {
                Some(v) if v.re.is_finite() && v.im.is_finite() => self.vals[k] = v,
                _ => return false,
            }
        }
        true
    }

    /// `e^{−s_k} Σ_c c·y^{a_c}·e^{τω_c}` over equation `k`'s block, with the shift
    /// `s_k = max_c (τ_re·ω_c + Σ_j a_jc·log|y_j|)` computed as the GEMM evaluation does.
    /// Adjacent columns with the same monomial (the polyhedral pairs `r·t^{ω'}`,
    /// `(f − r)·t^{ω'+1}`) share it: `(c₁e^{τω₁} + c₂e^{τω₂})·y^a`, and
    /// `e^{τω₂} = e^{τω₁}·e^{τ}` where `ω₂ − ω₁ = 1` exactly (one more product).
    ///
    /// Error (u = 2^-53, worst case): `e^{τω}` within `1e-31` relative for `|τω| ≤ 1` (`8u²`;
    /// `+ 1e-32·|τω|` beyond, the reduction by `k·ln 2`), one more `8u²` for `e^{τω₁}·e^{τ}`;
    /// `c₁e^{τω₁} + c₂e^{τω₂}` within `24u²`, and each of the `d` complex products of a
    /// degree-`d` term (`d − 1` for `y^a`, one by the coefficient) within `24u²` of its
    /// magnitude: a term is within `(24d + 40)·u² ≈ 1.1e-30` of its magnitude at `d = 2`
    /// (chandra), and each addition adds `8u²` of the two summands' magnitudes. Far below
    /// that in practice: the rounding errors are not all at their bounds and of both signs
    /// (the tests measure below 2e-32 of `Σ|terms|` at degree 5). The factor `e^{−s}` is
    /// applied in double: `2^-53` of the value, like its final rounding.
    fn block<G: Growth>(
        &self,
        layout: &EvalLayout,
        k: usize,
        tau: C64,
        lift: &[f64],
        e_tau: &mut Option<Option<G>>,
    ) -> Option<C64> {
        let (nh, w) = (layout.nh, layout.nh + 2);
        let plan = &self.plan;
        let b = &layout.blocks[k];
        let (start, end) = (b.start, b.start + b.len);
        let mut s = f64::NEG_INFINITY;
        let mut unscaled = true;
        for (c, &om) in (start..end).zip(&lift[start..end]) {
            let mut re = tau.re * om;
            unscaled &= re.abs() < UNSCALED_RANGE;
            for &(j, a) in plan.factors(c) {
                re += a as f64 * self.ln_abs[j];
            }
            s = s.max(re);
        }
        if !s.is_finite() {
            return None;
        }
        unscaled &= s.abs() < UNSCALED_RANGE;
        let shift = if unscaled { 0.0 } else { s };
        let growth = |om: f64| {
            if om == 0.0 && unscaled {
                Some(G::one())
            } else {
                G::exp(tau, om, shift)
            }
        };
        let coeff = |c: usize| b.bt[(c - start) * w + nh + 1];
        let mut sum = Cdd::ZERO;
        let mut c = start;
        while c < end {
            let mono = plan
                .factors(c)
                .iter()
                .fold(None, |m: Option<Cdd>, &(j, a)| {
                    let p = self.powers[self.offsets[j] + a];
                    Some(m.map_or(p, |q| q.mul_abs(p)))
                });
            let g = growth(lift[c])?;
            let pair = plan.pair[c];
            let coef = if pair {
                let (d, de) = two_sum(lift[c + 1], -lift[c]);
                let one_apart = d == 1.0 && de == 0.0 && unscaled;
                let e = one_apart.then(|| *e_tau.get_or_insert_with(|| G::exp(tau, 1.0, 0.0)));
                let g2 = match e.flatten() {
                    Some(e) => g.mul(e),
                    _ => growth(lift[c + 1])?,
                };
                g.times2(coeff(c), g2, coeff(c + 1))
            } else {
                g.times(coeff(c))
            };
            sum = sum.add_abs(mono.map_or(coef, |q| coef.mul_abs(q)));
            c += 1 + pair as usize;
        }
        if !unscaled {
            return Some(sum.to_c64());
        }
        // The scale in double: an error of 2^-53 of the value, like its final rounding
        // (what the Newton step needs is the error relative to the terms).
        let scale = (-s).exp();
        Some(C64::new(
            sum.re.mul_f64(scale).to_f64(),
            sum.im.mul_f64(scale).to_f64(),
        ))
    }
}

/// `‖v‖₂` of a double-double vector, rounded to double.
pub fn dd_norm(v: &[Cdd]) -> f64 {
    v.iter().map(|z| z.to_c64().norm_sqr()).sum::<f64>().sqrt()
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

    /// Fixed point `v / 2^P` in big integers: the high-precision reference of the tests below
    /// (products truncated to `2^-P`; `e^x` and `cis x` by halving the argument below 2^-8,
    /// Taylor series, and squaring / double angles back).
    mod fixed {
        use num_bigint::BigInt;
        use num_traits::{One, Signed, ToPrimitive, Zero};

        pub const P: usize = 480;

        /// Exact (for `|x| ≥ 2^-P`).
        pub fn from_f64(x: f64) -> BigInt {
            if x == 0.0 {
                return BigInt::zero();
            }
            let bits = x.to_bits();
            let (exp, frac) = (((bits >> 52) & 0x7ff) as i64, bits & ((1u64 << 52) - 1));
            let (mant, e) = if exp == 0 {
                (frac, -1074)
            } else {
                (frac | (1 << 52), exp - 1075)
            };
            let shift = e + P as i64;
            let v = if shift >= 0 {
                BigInt::from(mant) << shift as usize
            } else {
                BigInt::from(mant) >> (-shift) as usize
            };
            if x < 0.0 {
                -v
            } else {
                v
            }
        }

        pub fn from_dd(x: super::Dd) -> BigInt {
            from_f64(x.hi) + from_f64(x.lo)
        }

        pub fn to_f64(v: &BigInt) -> f64 {
            let shift = v.bits().saturating_sub(900) as usize;
            (v >> shift).to_f64().unwrap() * 2f64.powi(shift as i32 - P as i32)
        }

        pub fn one() -> BigInt {
            BigInt::one() << P
        }

        pub fn mul(a: &BigInt, b: &BigInt) -> BigInt {
            (a * b) >> P
        }

        /// `(r, m)` with `x = r·2^m`, `|r| ≤ 2^-8`.
        fn halve(x: &BigInt) -> (BigInt, usize) {
            let (mut r, mut m) = (x.clone(), 0);
            while r.abs() > (one() >> 8) {
                r >>= 1;
                m += 1;
            }
            (r, m)
        }

        pub fn exp(x: &BigInt) -> BigInt {
            let (r, m) = halve(x);
            let (mut term, mut sum) = (one(), one());
            for i in 1..100u32 {
                term = mul(&term, &r) / i;
                if term.is_zero() {
                    break;
                }
                sum += &term;
            }
            for _ in 0..m {
                sum = mul(&sum, &sum);
            }
            sum
        }

        /// `(cos x, sin x)`.
        pub fn cis(x: &BigInt) -> (BigInt, BigInt) {
            let (r, m) = halve(x);
            let (mut c, mut s) = (BigInt::zero(), BigInt::zero());
            let mut term = one();
            for i in 0..100u32 {
                match i % 4 {
                    0 => c += &term,
                    1 => s += &term,
                    2 => c -= &term,
                    _ => s -= &term,
                }
                term = mul(&term, &r) / (i + 1);
                if term.is_zero() {
                    break;
                }
            }
            for _ in 0..m {
                (c, s) = (mul(&c, &c) - mul(&s, &s), mul(&c, &s) << 1);
            }
            (c, s)
        }
    }

    /// xorshift64: uniform in [0, 1).
    fn uniform(state: &mut u64) -> f64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        (*state >> 11) as f64 / (1u64 << 53) as f64
    }

    #[test]
    fn exp_and_sin_cos_match_a_high_precision_reference() {
        // Relative error of e^x and absolute error of sin, cos x, x = hi + lo (lo a full
        // second word), over the ranges the residual uses: |x| < 2^-17 (no table), < 1/512
        // (one table), < 1 and beyond (reduction by k·ln 2, k·π/2).
        let mut st = 0x2545_F491_4F6C_DD1D;
        let (mut worst_exp, mut worst_trig) = ([0.0f64; 4], [0.0f64; 4]);
        for (r, range) in [2f64.powi(-17), 1.0 / 512.0, 1.0, 40.0]
            .into_iter()
            .enumerate()
        {
            for _ in 0..300 {
                let hi = (2.0 * uniform(&mut st) - 1.0) * range;
                let x = Dd::renorm(hi, hi * 1e-16 * (2.0 * uniform(&mut st) - 1.0));
                let fx = fixed::from_dd(x);
                let e = x.exp().unwrap();
                let want = fixed::exp(&fx);
                let rel = fixed::to_f64(&(fixed::from_dd(e) - &want)).abs() / fixed::to_f64(&want);
                worst_exp[r] = worst_exp[r].max(rel);
                let (s, c) = x.sin_cos().unwrap();
                let (wc, ws) = fixed::cis(&fx);
                let err = fixed::to_f64(&(fixed::from_dd(s) - ws)).abs()
                    + fixed::to_f64(&(fixed::from_dd(c) - wc)).abs();
                worst_trig[r] = worst_trig[r].max(err);
            }
        }
        // Measured: exp 2.9e-32, 3.0e-32, 4.6e-32, 4.6e-31 (the reduction by k·ln 2, k ≤ 58);
        // sin + cos 2.1e-32, 2.0e-32, 2.7e-32, 4.4e-31. (Before the tables were built by the
        // plain Taylor series: exp 3.6e-30 from |x| > 2^-17 on.)
        eprintln!("exp {worst_exp:?}, sin_cos {worst_trig:?}");
        for (r, bound) in [2e-31, 2e-31, 2e-31, 1e-30].into_iter().enumerate() {
            assert!(worst_exp[r] < bound, "exp, range {r}: {:e}", worst_exp[r]);
            assert!(
                worst_trig[r] < bound,
                "sin_cos, range {r}: {:e}",
                worst_trig[r]
            );
        }
    }

    /// `scaled_values` against the reference `e^{−s_k} Σ c·y^a·e^{τω}` in fixed point, at
    /// points where every equation cancels to ~1e-16 of its terms (the last coefficient is
    /// solved for): the error, relative to `Σ|terms|`, must stay at the double-double level
    /// (a residual that is only double-accurate anywhere, in `e^{τω}` or a product, is off
    /// by ~1e-17 and fails).
    #[test]
    fn scaled_values_match_a_high_precision_reference() {
        use crate::homotopy::{HomTerm, Homotopy};
        use num_bigint::BigInt;
        let (n, nh) = (3, 4);
        let mut st = 0x9E37_79B9_7F4A_7C15;
        let (mut worst, mut cancelled, mut checked) = (0.0f64, 0, 0);
        let taus = [
            C64::new(0.0, 0.0),
            C64::new(-1e-14, 0.0),
            C64::new(3e-12, 0.0),
            C64::new(-2.5e-7, 0.0),
            C64::new(-1e-3, 0.0),
            C64::new(-0.37, 0.0),
            C64::new(-1.0, 0.0),
            C64::new(-30.0, 0.0),
            C64::new(-3000.0, 0.0),
            // Cauchy loops: τ = log(1 − s₀e^{iθ}).
            (1.0 - C64::from_polar(1e-6, 2.0)).ln(),
            (1.0 - C64::from_polar(1e-3, -0.4)).ln(),
            (1.0 - C64::from_polar(0.3, 2.9)).ln(),
            C64::new(-0.5, 0.7),
        ];
        for (case, &tau) in taus.iter().enumerate() {
            // Lifts up to 2^20 (2^9 for the complex τ of modulus ~1: |τω| ≲ 1e3 for sin_cos).
            for top_lift in [4.0, 1024.0, 1048576.0] {
                if tau.im.abs() > 1e-2 && top_lift > 1024.0 {
                    continue;
                }
                let y: Vec<C64> = (0..nh)
                    .map(|_| C64::from_polar(0.2 + uniform(&mut st), 6.3 * uniform(&mut st)))
                    .collect();
                let norm = y.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
                let y: Vec<C64> = y.iter().map(|z| z / norm).collect();
                // Terms of degree 5: per equation 4 monomials, each as a pair (ω, ω + 1) of
                // columns (the polyhedral form; the third pair 1 + 2^-40 apart instead), and
                // one single column with ω = 0, whose coefficient is solved for.
                let mut equations = Vec::new();
                for _ in 0..n {
                    let mut terms = Vec::new();
                    for t in 0..5 {
                        let mut a = vec![0i32; nh];
                        for _ in 0..5 {
                            a[(uniform(&mut st) * nh as f64) as usize] += 1;
                        }
                        let om = if t == 4 || uniform(&mut st) < 0.3 {
                            0.0
                        } else {
                            (uniform(&mut st) * top_lift * 1048576.0).round() / 1048576.0
                        };
                        let mut coeff =
                            || C64::from_polar(0.5 + uniform(&mut st), 6.3 * uniform(&mut st));
                        terms.push(HomTerm {
                            coeff: coeff(),
                            coeff_lo: C64::new(0.0, 0.0),
                            exponents: a.clone(),
                            lift: om,
                        });
                        if t < 4 {
                            let step = if t == 2 { 1.0 + 2f64.powi(-40) } else { 1.0 };
                            terms.push(HomTerm {
                                coeff: coeff(),
                                coeff_lo: C64::new(0.0, 0.0),
                                exponents: a,
                                lift: om + step,
                            });
                        }
                    }
                    equations.push(terms);
                }
                let mut h = Homotopy { n, equations };
                // Term values in fixed point, the shift as the evaluator computes it.
                let ln_abs: Vec<f64> = y.iter().map(|z| z.norm().ln()).collect();
                let fy: Vec<(BigInt, BigInt)> = y
                    .iter()
                    .map(|z| (fixed::from_f64(z.re), fixed::from_f64(z.im)))
                    .collect();
                let cmul = |a: &(BigInt, BigInt), b: &(BigInt, BigInt)| {
                    (
                        fixed::mul(&a.0, &b.0) - fixed::mul(&a.1, &b.1),
                        fixed::mul(&a.0, &b.1) + fixed::mul(&a.1, &b.0),
                    )
                };
                let term_value = |t: &HomTerm, s: f64| {
                    let mut v = (fixed::from_f64(t.coeff.re), fixed::from_f64(t.coeff.im));
                    for (j, &e) in t.exponents.iter().enumerate() {
                        for _ in 0..e {
                            v = cmul(&v, &fy[j]);
                        }
                    }
                    let fom = fixed::from_f64(t.lift);
                    let x = fixed::mul(&fixed::from_f64(tau.re), &fom) - fixed::from_f64(s);
                    let mag = fixed::exp(&x);
                    let (c, sn) = fixed::cis(&fixed::mul(&fixed::from_f64(tau.im), &fom));
                    cmul(&v, &(fixed::mul(&mag, &c), fixed::mul(&mag, &sn)))
                };
                let mut want = Vec::new();
                for eq in h.equations.iter_mut() {
                    let s = eq
                        .iter()
                        .map(|t| {
                            let mut re = tau.re * t.lift;
                            for (j, &a) in t.exponents.iter().enumerate() {
                                if a != 0 {
                                    re += a as f64 * ln_abs[j];
                                }
                            }
                            re
                        })
                        .fold(f64::NEG_INFINITY, f64::max);
                    // The last coefficient cancels the others (to its rounding).
                    let last = eq.len() - 1;
                    let mut rest = (BigInt::from(0), BigInt::from(0));
                    for t in &eq[..last] {
                        let v = term_value(t, s);
                        rest = (rest.0 + v.0, rest.1 + v.1);
                    }
                    let unit = term_value(
                        &HomTerm {
                            coeff: C64::new(1.0, 0.0),
                            ..eq[last].clone()
                        },
                        s,
                    );
                    let (r, u) = (
                        C64::new(fixed::to_f64(&rest.0), fixed::to_f64(&rest.1)),
                        C64::new(fixed::to_f64(&unit.0), fixed::to_f64(&unit.1)),
                    );
                    if (1e-3..1e3).contains(&(r / u).norm()) {
                        eq[last].coeff = -r / u;
                    }
                    let (mut sum, mut size) = ((BigInt::from(0), BigInt::from(0)), 0.0);
                    for t in eq.iter() {
                        let v = term_value(t, s);
                        size += fixed::to_f64(&v.0).hypot(fixed::to_f64(&v.1));
                        sum = (sum.0 + v.0, sum.1 + v.1);
                    }
                    want.push((sum, size));
                }
                let layout = EvalLayout::new(&h);
                let lifts = h.lifts();
                for own in [false, true] {
                    let mut got = vec![C64::new(0.0, 0.0); n];
                    let l = own.then_some(&lifts[..]);
                    assert!(scaled_values(&layout, &y, tau, l, &mut got), "τ = {tau}");
                    for (k, (g, (w, size))) in got.iter().zip(&want).enumerate() {
                        let err = fixed::to_f64(&(fixed::from_f64(g.re) - &w.0))
                            .hypot(fixed::to_f64(&(fixed::from_f64(g.im) - &w.1)));
                        // Less the final rounding to double and the scale e^{−s} in double
                        // (together 3·2^-53 of the value).
                        let value = fixed::to_f64(&w.0).hypot(fixed::to_f64(&w.1));
                        let rel = (err - value * 3.0 * 2f64.powi(-53)).max(0.0) / size;
                        worst = worst.max(rel);
                        cancelled += (value < 1e-12 * size) as usize;
                        checked += 1;
                        assert!(
                            rel < 2e-31,
                            "case {case}, τ = {tau}, lifts ≤ {top_lift}, equation {k}: \
                             {g} against {:e}, error {rel:e} of Σ|terms| = {size:e}",
                            fixed::to_f64(&w.0)
                        );
                    }
                }
            }
        }
        // Most equations cancel (the others have their solved-for term underflow). Measured
        // worst error 9e-33; the previous evaluation: 3.3e-30 (and no value at all where
        // |τω| or |s| ≥ 700: τ ≤ −1 with lifts ≥ 2^10 and the like).
        assert!(cancelled * 5 > checked * 4, "{cancelled} of {checked}");
        eprintln!("worst error {worst:e} of Σ|terms|, {cancelled} of {checked} cancelled");
    }
}
