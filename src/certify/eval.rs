//! Interval evaluation of a system `F` and its Jacobian over a box, in the original
//! coordinates and with the coefficients as stored (doubles are exact point intervals).
//!
//! Each term `c·Π_j x_j^{a_j}` is the product of powers of the coordinates' rectangles
//! (`X^e` by repeated multiplication, `X^{−e}` from `1/X`); its partial derivative in
//! `x_j` is `c·a_j·x_j^{a_j−1}·Π_{k≠j} x_k^{a_k}`, formed from prefix and suffix products
//! of the term's factors (O(support) products per term for all its partials); the factor
//! `c·a_j` is applied as a scaling by `c` and one by `a_j`, since the double nearest to
//! `c·a_j` is in general not `c·a_j`. Every
//! operation encloses its exact result, so the values enclose `{F(x) : x ∈ X}` and
//! `{∂F/∂x(x) : x ∈ X}` (interval extension, Moore 1966).

use super::complex::CInterval;
use crate::system::System;
use num_complex::Complex64 as C64;
use std::ops::{Add, Mul};

/// One term: its coefficient and its nonzero exponents `(variable, exponent)`.
#[derive(Clone, Debug)]
struct Term {
    coeff: C64,
    factors: Vec<(usize, i32)>,
}

/// A system prepared for interval evaluation.
#[derive(Clone, Debug)]
pub struct IntervalSystem {
    n: usize,
    equations: Vec<Vec<Term>>,
    /// Per variable: the smallest and largest power any value or partial needs.
    min_power: Vec<i32>,
    max_power: Vec<i32>,
    /// Every coefficient has a zero imaginary part: `F(x̄) = conj F(x)`.
    pub real_coefficients: bool,
}

impl IntervalSystem {
    pub fn new(system: &System) -> IntervalSystem {
        let n = system.n();
        let (mut min_power, mut max_power) = (vec![0i32; n], vec![0i32; n]);
        let equations: Vec<Vec<Term>> = system
            .equations
            .iter()
            .map(|f| {
                f.terms
                    .iter()
                    .map(|t| {
                        let factors: Vec<(usize, i32)> = t
                            .exponents
                            .iter()
                            .enumerate()
                            .filter(|(_, &a)| a != 0)
                            .map(|(j, &a)| (j, a))
                            .collect();
                        for &(j, a) in &factors {
                            min_power[j] = min_power[j].min(a - 1);
                            max_power[j] = max_power[j].max(a);
                        }
                        Term {
                            coeff: t.coeff,
                            factors,
                        }
                    })
                    .collect()
            })
            .collect();
        let real_coefficients = system
            .equations
            .iter()
            .all(|f| f.terms.iter().all(|t| t.coeff.im == 0.0));
        IntervalSystem {
            n,
            equations,
            min_power,
            max_power,
            real_coefficients,
        }
    }

    pub fn n(&self) -> usize {
        self.n
    }

    /// `powers[j][e − min_power[j]]` encloses `X_j^e` for every power a term needs.
    fn powers(&self, x: &[CInterval]) -> Vec<Vec<CInterval>> {
        (0..self.n)
            .map(|j| {
                let (lo, hi) = (self.min_power[j], self.max_power[j]);
                let mut p = vec![CInterval::ONE; (hi - lo + 1) as usize];
                let zero = (-lo) as usize;
                for e in 1..=hi as usize {
                    p[zero + e] = p[zero + e - 1].mul(x[j]);
                }
                if lo < 0 {
                    let inv = x[j].recip();
                    for e in 1..=(-lo) as usize {
                        p[zero - e] = p[zero - e + 1].mul(inv);
                    }
                }
                p
            })
            .collect()
    }

    fn power<'a>(&self, powers: &'a [Vec<CInterval>], j: usize, e: i32) -> &'a CInterval {
        &powers[j][(e - self.min_power[j]) as usize]
    }

    /// Encloses `F(X)` (for a point box: `F(x)` with its rounding errors).
    pub fn values(&self, x: &[CInterval]) -> Vec<CInterval> {
        let powers = self.powers(x);
        self.equations
            .iter()
            .map(|terms| {
                terms.iter().fold(CInterval::ZERO, |acc, t| {
                    let m = t.factors.iter().fold(CInterval::ONE, |m, &(j, a)| {
                        m.mul(*self.power(&powers, j, a))
                    });
                    acc.add(m.scale(t.coeff))
                })
            })
            .collect()
    }

    /// Encloses `∂F/∂x` over `X`, row-major (`[k·n + j] = ∂f_k/∂x_j`).
    pub fn jacobian(&self, x: &[CInterval]) -> Vec<CInterval> {
        let n = self.n;
        let powers = self.powers(x);
        let mut jac = vec![CInterval::ZERO; n * n];
        let mut suffix: Vec<CInterval> = Vec::new();
        for (k, terms) in self.equations.iter().enumerate() {
            let row = &mut jac[k * n..(k + 1) * n];
            for t in terms {
                let s = t.factors.len();
                // suffix[i] = Π_{l ≥ i} factor_l
                suffix.clear();
                suffix.resize(s + 1, CInterval::ONE);
                for i in (0..s).rev() {
                    let (j, a) = t.factors[i];
                    suffix[i] = suffix[i + 1].mul(*self.power(&powers, j, a));
                }
                let mut prefix = CInterval::ONE;
                for i in 0..s {
                    let (j, a) = t.factors[i];
                    // c·a as two exact scalings: the double nearest c·a is not c·a.
                    let d = self
                        .power(&powers, j, a - 1)
                        .scale(t.coeff)
                        .scale_real(a as f64);
                    row[j] = row[j].add(prefix.mul(suffix[i + 1]).mul(d));
                    prefix = prefix.mul(*self.power(&powers, j, a));
                }
            }
        }
        jac
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::parse_str;

    /// At a point box the enclosures contain the floating-point values of the reference
    /// evaluation (`System::eval`, `Polynomial::gradient`) up to their own rounding, and
    /// are a few ulps wide; over a box they contain the values at sampled points of it.
    #[test]
    fn enclosures_contain_the_reference_values() {
        let sys = parse_str(
            "variables: [x, y, z]\nequations:\n  - \"x^3*y - 2*y*z^2 + 0.5\"\n  - \"x*y*z - x^-2*z + 3\"\n  - \"y^4 - z + x\"\n",
            "t.yaml",
        )
        .unwrap();
        let isys = IntervalSystem::new(&sys);
        assert!(isys.real_coefficients);
        let c = [C64::new(0.7, 0.2), C64::new(-1.1, 0.4), C64::new(0.3, -0.9)];
        let r = 1e-3;
        let bx: Vec<CInterval> = c.iter().map(|&z| CInterval::around(z, r)).collect();
        let (fv, jv) = (isys.values(&bx), isys.jacobian(&bx));
        for s in 0..27 {
            let off = |i: usize| ((s / 3usize.pow(i as u32)) % 3) as f64 - 1.0;
            let x: Vec<C64> = (0..3)
                .map(|i| c[i] + C64::new(off(i) * r * 0.999, -off(2 - i) * r * 0.999))
                .collect();
            let f = sys.eval(&x);
            for k in 0..3 {
                // Leave room for the float reference's own rounding (a few 1e-16).
                let grow = |z: CInterval| CInterval {
                    re: crate::certify::interval::Interval::new(z.re.lo - 1e-13, z.re.hi + 1e-13),
                    im: crate::certify::interval::Interval::new(z.im.lo - 1e-13, z.im.hi + 1e-13),
                };
                assert!(grow(fv[k]).contains(f[k]), "f{k} at sample {s}");
                let g = sys.equations[k].gradient(&x);
                for j in 0..3 {
                    assert!(
                        grow(jv[k * 3 + j]).contains(g[j]),
                        "J[{k}][{j}] at sample {s}"
                    );
                }
            }
        }
        let point: Vec<CInterval> = c.iter().map(|&z| CInterval::point(z)).collect();
        for (k, v) in isys.values(&point).iter().enumerate() {
            let f = sys.equations[k].eval(&c);
            assert!(v.half_width() < 1e-14, "f{k}: {v:?}");
            assert!((f.re - 0.5 * (v.re.lo + v.re.hi)).abs() < 1e-14, "f{k}");
        }
    }
}
