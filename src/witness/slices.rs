//! Linear slices and randomizations: the two random choices a witness set is made of
//! (Sommese–Wampler, *The Numerical Solution of Systems of Polynomials*).
//!
//! For a system `F = (f_1, …, f_N)` in `n` variables and a dimension `d`, the pure
//! `d`-dimensional part of `V(F)` meets `d` generic affine hyperplanes `L(x) = A x + b = 0`
//! in `deg` points; they are isolated solutions of the square system `[R·F; L]`, where the
//! `(n − d) × N` randomization `R` is `[I | R']` on the equations sorted by falling degree
//! (so `deg (R·F)_i = deg f_{σ(i)}` and the Bézout count stays that of the `n − d` largest
//! degrees). Every component of `V(F)` of dimension `d` is one of `V(R·F)`; `V(R·F)` may
//! have others, whose points fail `F = 0` and are dropped.

use crate::system::{Polynomial, System, Term};
use num_complex::Complex64 as C64;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// A complex number with independent standard normal real and imaginary parts, scaled to
/// modulus ≈ 1 on average (Box–Muller).
pub fn random_complex(rng: &mut impl Rng) -> C64 {
    let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.random::<f64>();
    let r = (-u1.ln()).sqrt();
    C64::from_polar(r, std::f64::consts::TAU * u2)
}

/// A point of the unit circle (the γ of a homotopy).
pub fn random_unit(rng: &mut impl Rng) -> C64 {
    C64::from_polar(1.0, std::f64::consts::TAU * rng.random::<f64>())
}

/// `d` affine linear forms `ℓ_i(x) = Σ_j a_ij x_j + b_i` in `n` variables.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slices {
    /// `d` rows of `n` coefficients.
    pub coefficients: Vec<Vec<C64>>,
    /// `b_i`, one per row.
    pub constants: Vec<C64>,
}

impl Slices {
    /// `d` random hyperplanes in `C^n`.
    pub fn random(d: usize, n: usize, rng: &mut impl Rng) -> Slices {
        let coefficients = (0..d)
            .map(|_| (0..n).map(|_| random_complex(rng)).collect())
            .collect();
        let constants = (0..d).map(|_| random_complex(rng)).collect();
        Slices {
            coefficients,
            constants,
        }
    }

    /// Number of hyperplanes.
    pub fn d(&self) -> usize {
        self.constants.len()
    }

    /// `ℓ(x)`.
    pub fn eval(&self, x: &[C64]) -> Vec<C64> {
        self.coefficients
            .iter()
            .zip(&self.constants)
            .map(|(a, b)| a.iter().zip(x).map(|(a, x)| a * x).sum::<C64>() + b)
            .collect()
    }

    /// The hyperplanes with coefficient rows `coefficients` through `p`
    /// (`b = −A p`).
    pub fn through(coefficients: Vec<Vec<C64>>, p: &[C64]) -> Slices {
        let constants = coefficients
            .iter()
            .map(|a| -a.iter().zip(p).map(|(a, x)| a * x).sum::<C64>())
            .collect();
        Slices {
            coefficients,
            constants,
        }
    }

    /// The parallel hyperplanes `A x + b + s·v = 0`.
    pub fn translated(&self, v: &[C64], s: C64) -> Slices {
        Slices {
            coefficients: self.coefficients.clone(),
            constants: self
                .constants
                .iter()
                .zip(v)
                .map(|(b, v)| b + s * v)
                .collect(),
        }
    }

    /// The forms as polynomials in `n` variables.
    pub fn polynomials(&self) -> Vec<Polynomial> {
        self.coefficients
            .iter()
            .zip(&self.constants)
            .map(|(a, &b)| {
                let n = a.len();
                let mut terms: Vec<Term> = a
                    .iter()
                    .enumerate()
                    .map(|(j, &c)| {
                        let mut e = vec![0; n];
                        e[j] = 1;
                        Term {
                            coeff: c,
                            exponents: e,
                        }
                    })
                    .collect();
                terms.push(Term {
                    coeff: b,
                    exponents: vec![0; n],
                });
                Polynomial::from_terms(terms)
            })
            .collect()
    }
}

/// The `k × N` matrix `R` of `R·F` (`k ≤ N` equations from `N`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Randomization {
    pub matrix: Vec<Vec<C64>>,
}

impl Randomization {
    /// `k` equations from those of `system`: the identity when `k = N`; else row `i` is
    /// `f_{σ(i)} + Σ_{j ≥ k} r_ij f_{σ(j)}` with `σ` sorting the equations by falling degree
    /// (ties by position) and random `r_ij`.
    pub fn new(system: &System, k: usize, rng: &mut impl Rng) -> Randomization {
        let big_n = system.equations.len();
        assert!(k <= big_n, "randomization to {k} of {big_n} equations");
        let mut order: Vec<usize> = (0..big_n).collect();
        order.sort_by_key(|&j| std::cmp::Reverse(system.equations[j].degree()));
        let matrix = (0..k)
            .map(|i| {
                let mut row = vec![C64::new(0.0, 0.0); big_n];
                row[order[i]] = C64::new(1.0, 0.0);
                if k < big_n {
                    for &j in &order[k..] {
                        row[j] = random_complex(rng);
                    }
                }
                row
            })
            .collect();
        Randomization { matrix }
    }

    /// Number of equations it makes.
    pub fn k(&self) -> usize {
        self.matrix.len()
    }

    /// `R·F`.
    pub fn apply(&self, system: &System) -> Vec<Polynomial> {
        self.matrix
            .iter()
            .map(|row| {
                Polynomial::from_terms(row.iter().zip(&system.equations).flat_map(|(&r, f)| {
                    f.terms
                        .iter()
                        .filter(move |_| r != C64::new(0.0, 0.0))
                        .map(move |t| Term {
                            coeff: t.coeff * r,
                            exponents: t.exponents.clone(),
                        })
                }))
            })
            .collect()
    }
}

/// The square system `[R·F; L]` whose isolated solutions hold the witness points.
pub fn sliced_system(system: &System, r: &Randomization, slices: &Slices) -> System {
    let mut equations = r.apply(system);
    equations.extend(slices.polynomials());
    System {
        name: format!("{} (dimension {} slice)", system.name, slices.d()),
        description: String::new(),
        variables: system.variables.clone(),
        equations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::rng_for;

    /// The randomized equations keep the degrees of the largest ones, and a point of
    /// `V(F)` is a zero of `R·F` and of slices through it.
    #[test]
    fn randomization_keeps_degrees_and_zeros() {
        let sys = crate::system::parse_str(
            "variables: [x, y, z]\nequations: ['y - x^2', 'z - x*y', 'x*z - y^2']",
            "cubic",
        )
        .unwrap();
        let mut rng = rng_for(3);
        let r = Randomization::new(&sys, 2, &mut rng);
        let g = r.apply(&sys);
        assert_eq!(g.iter().map(|f| f.degree()).collect::<Vec<_>>(), vec![2, 2]);
        let t = C64::new(0.3, -1.1);
        let p = [t, t * t, t * t * t];
        for f in &g {
            assert!(f.eval(&p).norm() < 1e-12);
        }
        let s = Slices::random(1, 3, &mut rng);
        let through = Slices::through(s.coefficients.clone(), &p);
        assert!(through.eval(&p)[0].norm() < 1e-12);
        assert!(s.eval(&p)[0].norm() > 1e-6);
    }
}
