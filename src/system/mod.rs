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
        self.terms.iter().any(|t| t.exponents.iter().any(|&a| a < 0))
    }

    /// Direct evaluation at `x` (reference path: slow, exact in structure).
    pub fn eval(&self, x: &[Complex64]) -> Complex64 {
        self.terms
            .iter()
            .map(|t| {
                let mut v = t.coeff;
                for (xi, &a) in x.iter().zip(&t.exponents) {
                    v *= xi.powi(a);
                }
                v
            })
            .sum()
    }

    /// Gradient by direct differentiation (reference path).
    pub fn gradient(&self, x: &[Complex64]) -> Vec<Complex64> {
        let n = x.len();
        let mut g = vec![Complex64::new(0.0, 0.0); n];
        for t in &self.terms {
            for j in 0..n {
                let aj = t.exponents[j];
                if aj == 0 {
                    continue;
                }
                let mut v = t.coeff * aj as f64;
                for (k, (xk, &a)) in x.iter().zip(&t.exponents).enumerate() {
                    v *= if k == j { xk.powi(a - 1) } else { xk.powi(a) };
                }
                g[j] += v;
            }
        }
        g
    }

    /// Sum of `|c · x^a|` over the terms: the scale against which a residual is relative.
    pub fn abs_scale(&self, x: &[Complex64]) -> f64 {
        self.terms
            .iter()
            .map(|t| {
                let mut v = t.coeff.norm();
                for (xi, &a) in x.iter().zip(&t.exponents) {
                    v *= xi.norm().powi(a);
                }
                v
            })
            .sum()
    }
}

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

    /// Largest relative residual `max_k |f_k(x)| / (1 + Σ |c x^a|)`.
    pub fn relative_residual(&self, x: &[Complex64]) -> f64 {
        self.equations
            .iter()
            .map(|f| f.eval(x).norm() / (1.0 + f.abs_scale(x)))
            .fold(0.0, f64::max)
    }

    /// Loads a system from a file (YAML or PHCpack format; see [`parse`]).
    pub fn from_file(path: &Path) -> Result<System, crate::error::InputError> {
        load(path)
    }
}
