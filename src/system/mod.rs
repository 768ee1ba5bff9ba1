//! Polynomial systems: the sparse representation every other module reads, and the
//! front ends that build it (YAML and PHCpack's format, see [`parse`]).
//!
//! A system is `n` Laurent polynomials in `n` variables. Each polynomial is a list of
//! terms `c · x^a` with `c ∈ C` and `a ∈ Z^n`; like terms are combined and zero
//! coefficients dropped, so the exponent vectors of one polynomial are distinct.

pub mod families;
pub mod parse;

use num_complex::Complex64;
use std::path::Path;

pub use parse::{load, parse_str};

/// One term `coeff · x^exponents`.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    pub coeff: Complex64,
    pub exponents: Vec<i32>,
}

/// A Laurent polynomial: distinct exponent vectors, nonzero coefficients.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Polynomial {
    pub terms: Vec<Term>,
}

impl Polynomial {
    /// Builds a polynomial from terms, combining like terms and dropping zeros.
    /// Terms are kept in the order of first appearance (deterministic).
    pub fn from_terms(terms: impl IntoIterator<Item = Term>) -> Self {
        let mut out: Vec<Term> = Vec::new();
        let mut index: std::collections::HashMap<Vec<i32>, usize> = Default::default();
        for t in terms {
            match index.get(&t.exponents) {
                Some(&k) => out[k].coeff += t.coeff,
                None => {
                    index.insert(t.exponents.clone(), out.len());
                    out.push(t);
                }
            }
        }
        out.retain(|t| t.coeff != Complex64::new(0.0, 0.0));
        Polynomial { terms: out }
    }

    /// Total degree: the largest `Σ a_j` over the terms (0 for the zero polynomial).
    pub fn degree(&self) -> i32 {
        self.terms
            .iter()
            .map(|t| t.exponents.iter().sum::<i32>())
            .max()
            .unwrap_or(0)
    }

    /// Smallest total degree `min Σ a_j` (for Laurent homogenization).
    pub fn min_degree(&self) -> i32 {
        self.terms
            .iter()
            .map(|t| t.exponents.iter().sum::<i32>())
            .min()
            .unwrap_or(0)
    }

    /// True when some exponent is negative (a Laurent polynomial).
    pub fn is_laurent(&self) -> bool {
        self.terms
            .iter()
            .any(|t| t.exponents.iter().any(|&a| a < 0))
    }

    /// Direct evaluation at `x` (reference path: slow, exact in structure).
    pub fn eval(&self, x: &[Complex64]) -> Complex64 {
        self.terms
            .iter()
            .map(|t| {
                let mut v = t.coeff;
                // Factors x^0 = 1 skipped: the same bits (v·1 = v), a fraction of the work
                // for sparse terms.
                for (xi, &a) in x.iter().zip(&t.exponents) {
                    if a != 0 {
                        v *= xi.powi(a);
                    }
                }
                v
            })
            .sum()
    }

    /// Gradient `∂f/∂x_j` at `x`, term by term with [`monomial_partials`].
    pub fn gradient(&self, x: &[Complex64]) -> Vec<Complex64> {
        let mut g = vec![Complex64::new(0.0, 0.0); x.len()];
        let mut scratch = PartialScratch::default();
        for t in &self.terms {
            monomial_partials(&t.exponents, x, &mut scratch, |j, a, d| {
                g[j] += t.coeff * a as f64 * d;
            });
        }
        g
    }

    /// Largest coefficient modulus `max_a |c_a|` (0 for the zero polynomial).
    pub fn max_coeff(&self) -> f64 {
        self.terms
            .iter()
            .map(|t| t.coeff.norm())
            .fold(0.0, f64::max)
    }

    /// Smallest nonzero finite coefficient modulus `min_a |c_a|` (1 when there is none):
    /// `λ·f` has `|λ|` times `f`'s (the polyhedral start's coefficient modulus,
    /// `start::polyhedral::start::start_modulus`).
    pub fn min_coeff(&self) -> f64 {
        self.coeff_moduli().map_or(1.0, |(lo, _)| lo)
    }

    /// The smallest and largest nonzero finite coefficient moduli, `None` when there is
    /// none.
    pub fn coeff_moduli(&self) -> Option<(f64, f64)> {
        let (lo, hi) = self
            .terms
            .iter()
            .map(|t| t.coeff.norm())
            .filter(|&c| c > 0.0 && c.is_finite())
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), c| {
                (lo.min(c), hi.max(c))
            });
        (hi > 0.0).then_some((lo, hi))
    }

    /// The equation's size at `x`: `max_a |c_a| + Σ_a |c_a·x^a|`. A residual relative to
    /// it is the same for `f` and `λ·f` (any `λ ≠ 0`), and the first term keeps it away
    /// from 0 where every term vanishes (`x1 + x2` at the origin).
    pub fn size_at(&self, x: &[Complex64]) -> f64 {
        self.size_at_moduli(&moduli(x))
    }

    /// [`Self::size_at`] from the moduli `|x_i|` (computed once for several equations).
    pub fn size_at_moduli(&self, x_abs: &[f64]) -> f64 {
        self.max_coeff() + self.abs_scale_moduli(x_abs)
    }

    /// Sum of `|c · x^a|` over the terms: the scale against which a residual is relative.
    pub fn abs_scale(&self, x: &[Complex64]) -> f64 {
        self.abs_scale_moduli(&moduli(x))
    }

    /// [`Self::abs_scale`] from the moduli `|x_i|`: `Σ_a |c_a|·Π|x_i|^{a_i}`.
    fn abs_scale_moduli(&self, x_abs: &[f64]) -> f64 {
        self.terms
            .iter()
            .map(|t| {
                let mut v = t.coeff.norm();
                for (xi, &a) in x_abs.iter().zip(&t.exponents) {
                    if a != 0 {
                        v *= xi.powi(a);
                    }
                }
                v
            })
            .sum()
    }
}

/// A number a monomial's factors are multiplied in: complex values, or moduli for the sizes
/// of terms.
pub trait Factor: Copy + std::ops::Mul<Output = Self> {
    const ONE: Self;
    /// `self^e`, without a call for the common exponents 0 and 1.
    fn pow(self, e: i32) -> Self;
}

impl Factor for Complex64 {
    const ONE: Self = Complex64::new(1.0, 0.0);
    #[inline]
    fn pow(self, e: i32) -> Self {
        match e {
            0 => Self::ONE,
            1 => self,
            _ => self.powi(e),
        }
    }
}

impl Factor for f64 {
    const ONE: Self = 1.0;
    #[inline]
    fn pow(self, e: i32) -> Self {
        match e {
            0 => 1.0,
            1 => self,
            _ => self.powi(e),
        }
    }
}

/// Reusable buffers of [`monomial_partials`].
#[derive(Default)]
pub struct PartialScratch<T> {
    support: Vec<(usize, i32)>,
    suffix: Vec<T>,
}

/// Calls `each(j, a_j, x^{a − e_j})` for every variable `j` of the monomial `x^a`'s support
/// (`∂x^a/∂x_j = a_j·x^{a − e_j}`), as (product of the factors before `j`)·`x_j^{a_j − 1}`·
/// (product of the factors after `j`): `O(s)` multiplications for `s` variables in the
/// support rather than `O(n·s)` factor by factor, and no division, so a zero coordinate
/// gives the same zeros as the product rule.
#[inline]
pub fn monomial_partials<T: Factor>(
    exponents: &[i32],
    x: &[T],
    scratch: &mut PartialScratch<T>,
    mut each: impl FnMut(usize, i32, T),
) {
    let PartialScratch { support, suffix } = scratch;
    support.clear();
    support.extend(
        exponents
            .iter()
            .enumerate()
            .filter(|&(_, &e)| e != 0)
            .map(|(i, &e)| (i, e)),
    );
    let m = support.len();
    suffix.clear();
    suffix.resize(m + 1, T::ONE);
    for q in (0..m).rev() {
        let (i, e) = support[q];
        suffix[q] = suffix[q + 1] * x[i].pow(e);
    }
    let mut before = T::ONE;
    for q in 0..m {
        let (j, e) = support[q];
        each(j, e, before * x[j].pow(e - 1) * suffix[q + 1]);
        before = before * x[j].pow(e);
    }
}

/// The moduli `|x_i|` of a point.
pub fn moduli(x: &[Complex64]) -> Vec<f64> {
    x.iter().map(|v| v.norm()).collect()
}

/// Equations with a coefficient modulus within `2^±EQUATION_SCALE_BAND` are tracked as given
/// ([`System::equilibrated`]): every shipped benchmark system has one in each equation, so
/// their paths do not change.
pub const EQUATION_SCALE_BAND: f64 = 4.0;

/// A square polynomial system with named variables.
#[derive(Clone, Debug, PartialEq)]
pub struct System {
    pub name: String,
    pub description: String,
    /// Variable names; their order is the order of the coordinates everywhere.
    pub variables: Vec<String>,
    pub equations: Vec<Polynomial>,
}

impl System {
    /// Number of variables (= number of equations).
    pub fn n(&self) -> usize {
        self.variables.len()
    }

    /// Bézout number `Π deg f_k`, or `None` when it overflows `u128` or the system is Laurent.
    pub fn total_degree(&self) -> Option<u128> {
        if self.equations.iter().any(|f| f.is_laurent()) {
            return None;
        }
        self.equations
            .iter()
            .try_fold(1u128, |acc, f| acc.checked_mul(f.degree().max(0) as u128))
    }

    /// Residual vector `F(x)`.
    pub fn eval(&self, x: &[Complex64]) -> Vec<Complex64> {
        self.equations.iter().map(|f| f.eval(x)).collect()
    }

    /// Largest relative residual `max_k |f_k(x)| / (max_a |c_a| + Σ_a |c_a x^a|)`
    /// ([`Polynomial::size_at`]): the same for the system with any equation multiplied by
    /// a nonzero constant.
    pub fn relative_residual(&self, x: &[Complex64]) -> f64 {
        let x_abs = moduli(x);
        self.equations
            .iter()
            .map(|f| {
                let v = f.eval(x).norm();
                if v == 0.0 {
                    0.0
                } else {
                    v / f.size_at_moduli(&x_abs)
                }
            })
            .fold(0.0, f64::max)
    }

    /// The system the solver tracks: an equation whose coefficient moduli all lie below
    /// `2^-EQUATION_SCALE_BAND` is divided by the power of two nearest its largest
    /// coefficient modulus, one whose coefficient moduli all lie above
    /// `2^EQUATION_SCALE_BAND` by the power of two nearest its smallest; the others are
    /// left as they are. Dividing by a power of two is exact and does not move the roots,
    /// so the solutions of the result are those of `self`; but no equation of the result
    /// has only tiny or only huge coefficients, whatever constant the user multiplied it
    /// by, as the homotopies assume: the polyhedral homotopy's `(f − r)·t^{ω+1}` columns
    /// with random `|r| = 1` lose a target coefficient `f` of 1e-20 to rounding, and
    /// `γ(1−t)G + tF` with `F` of size 1e-20 reaches `F` only for `1 − t < 1e-20`.
    /// (PHCpack and Bertini scale equations too.) An equation whose coefficients straddle
    /// the band keeps its own balance: dividing `x − 1e10·y` by the geometric mean 1e5 of
    /// its coefficients lost both roots of `x − 1e10·y, y² − 1` for polyhedral seed 2.
    /// Returns the exponents `e_k` (equation k divided by `2^{e_k}`) with it.
    pub fn equilibrated(&self) -> (System, Vec<i32>) {
        let exps: Vec<i32> = self
            .equations
            .iter()
            .map(|f| {
                let band = EQUATION_SCALE_BAND.exp2();
                match f.coeff_moduli() {
                    Some((_, hi)) if hi < 1.0 / band => hi.log2().round() as i32,
                    Some((lo, _)) if lo > band => lo.log2().round() as i32,
                    _ => 0,
                }
            })
            .collect();
        let equations = self
            .equations
            .iter()
            .zip(&exps)
            .map(|(f, &e)| Polynomial {
                terms: f
                    .terms
                    .iter()
                    .map(|t| Term {
                        // In two factors: 2^{-e} alone may overflow where |c| is subnormal.
                        coeff: t.coeff * 2f64.powi(-e / 2) * 2f64.powi(-e + e / 2),
                        exponents: t.exponents.clone(),
                    })
                    .collect(),
            })
            .collect();
        let sys = System {
            equations,
            ..self.clone()
        };
        (sys, exps)
    }

    /// Loads a system from a file (YAML or PHCpack format; see [`parse`]).
    pub fn from_file(path: &Path) -> Result<System, crate::error::InputError> {
        load(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `∂f/∂x_j` of `3x²y⁻¹z − 2iyz³ + 5` against the closed form, at a point with a zero
    /// coordinate too (where the product rule gives exact zeros, not 0·∞).
    #[test]
    fn gradient_of_a_laurent_polynomial() {
        let f = Polynomial::from_terms([
            Term {
                coeff: Complex64::new(3.0, 0.0),
                exponents: vec![2, -1, 1],
            },
            Term {
                coeff: Complex64::new(0.0, -2.0),
                exponents: vec![0, 1, 3],
            },
            Term {
                coeff: Complex64::new(5.0, 0.0),
                exponents: vec![0, 0, 0],
            },
        ]);
        let exact = |x: Complex64, y: Complex64, z: Complex64| {
            let i2 = Complex64::new(0.0, -2.0);
            [
                6.0 * x * z / y,
                -3.0 * x * x * z / (y * y) + i2 * z.powi(3),
                3.0 * x * x / y + 3.0 * i2 * y * z * z,
            ]
        };
        let points = [
            [
                Complex64::new(0.7, -0.2),
                Complex64::new(-1.3, 0.4),
                Complex64::new(0.5, 0.9),
            ],
            [
                Complex64::new(0.0, 0.0),
                Complex64::new(2.0, 1.0),
                Complex64::new(-0.5, 0.1),
            ],
            [
                Complex64::new(1.5, 0.5),
                Complex64::new(0.3, -0.8),
                Complex64::new(0.0, 0.0),
            ],
        ];
        for p in points {
            let g = f.gradient(&p);
            for (got, want) in g.iter().zip(exact(p[0], p[1], p[2])) {
                assert!(
                    (got - want).norm() <= 1e-14 * (1.0 + want.norm()),
                    "{got} vs {want} at {p:?}"
                );
            }
        }
    }
}
