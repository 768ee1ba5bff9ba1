//! The homotopy form shared by every start system (T. Chen, "GPU-accelerated path tracker
//! for polyhedral homotopy", §2):
//!
//! `h_k(y, τ) = Σ_a c_{k,a} · y^{a_hom} · e^{τ·ω_k(a)}`,  `τ = log t`,
//!
//! homogenized in `y = (y_0, …, y_{n−1}, y_n) ∈ C^{n+1}` with the homogenizing coordinate
//! LAST: `a_hom = (a, d_k − Σ a)` where `d_k` is the largest total degree in `h_k`. The
//! target system is `H(·, 0)` (t = 1). Total-degree, polyhedral and parameter homotopies all
//! produce this form: a coefficient that is a sum `Σ c·t^ω` becomes several terms with the
//! same exponent and different lifts ω.

use crate::system::{Polynomial, System};
use num_complex::Complex64 as C64;

/// One term `coeff · y^exponents · e^{τ·lift}` of a homotopy equation (homogenized exponents,
/// length n+1).
#[derive(Clone, Debug, PartialEq)]
pub struct HomTerm {
    pub coeff: C64,
    /// What rounding `coeff` left out: the term's exact coefficient, a sum of several
    /// contributions merged into one column, is `coeff + coeff_lo` (to ~1e-32 relative). The
    /// double evaluators use `coeff`; the double-double ones the sum. It matters at t = 1,
    /// where the polyhedral homotopy's columns `r·t^ω` and `(f − r)·t^{ω+δ}` must add up to the
    /// target coefficient `f` exactly: with `f − r` rounded they add up to `f + O(ε)`, and a
    /// solution of condition κ ≥ 1/ε (chandra-13's of norm 1e8–4e9) moves by O(1) under
    /// that perturbation, so that a path tracked to t = 1 in double-double ended at no root of
    /// the target (Newton at t = 1 then diverged, or landed on a neighbour's root).
    pub coeff_lo: C64,
    pub exponents: Vec<i32>,
    pub lift: f64,
}

/// A homotopy in τ-form on `P^n`.
#[derive(Clone, Debug)]
pub struct Homotopy {
    /// Number of affine variables (= equations); homogeneous coordinates are `n + 1`.
    pub n: usize,
    /// Terms of each equation, homogenized; (exponents, lift) pairs distinct within an equation.
    pub equations: Vec<Vec<HomTerm>>,
}

impl Homotopy {
    /// Builds a homotopy from affine terms `(coeff, exponents ∈ Z^n, lift)` per equation:
    /// combines terms with equal (exponents, lift) (their sum in double as `coeff`, the
    /// rest of the exact sum as `coeff_lo`), drops zeros, homogenizes with the last
    /// coordinate.
    pub fn from_affine_terms(n: usize, eqs: Vec<Vec<(C64, Vec<i32>, f64)>>) -> Homotopy {
        use crate::eval::dd::Cdd;
        let equations = eqs
            .into_iter()
            .map(|terms| {
                // (sum in double, sum in double-double, exponents, lift)
                let mut merged: Vec<(C64, Cdd, Vec<i32>, f64)> = Vec::new();
                for (c, a, w) in terms {
                    debug_assert_eq!(a.len(), n);
                    match merged
                        .iter_mut()
                        .find(|(_, _, b, v)| *b == a && v.to_bits() == w.to_bits())
                    {
                        Some(t) => {
                            t.0 += c;
                            t.1 = t.1.add(Cdd::from(c));
                        }
                        None => merged.push((c, Cdd::from(c), a, w)),
                    }
                }
                merged.retain(|t| t.0 != C64::new(0.0, 0.0) || t.1.to_c64() != C64::new(0.0, 0.0));
                let d = merged
                    .iter()
                    .map(|t| t.2.iter().sum::<i32>())
                    .max()
                    .unwrap_or(0);
                merged
                    .into_iter()
                    .map(|(coeff, exact, mut a, lift)| {
                        let s: i32 = a.iter().sum();
                        a.push(d - s);
                        HomTerm {
                            coeff,
                            coeff_lo: exact.sub(Cdd::from(coeff)).to_c64(),
                            exponents: a,
                            lift,
                        }
                    })
                    .collect()
            })
            .collect();
        Homotopy { n, equations }
    }

    /// The γ-trick homotopy `H = γ(1 − t)·G + t·F` in τ-form: every start term `g` gives the
    /// columns `γg·t⁰` and `−γg·t¹`, every target term `f` the column `f·t¹`.
    pub fn gamma_trick(target: &System, start: &[Polynomial], gamma: C64) -> Homotopy {
        let eqs = target
            .equations
            .iter()
            .zip(start)
            .map(|(f, g)| {
                let mut terms = terms_with_lift(f, C64::new(1.0, 0.0), 1.0);
                terms.extend(terms_with_lift(g, gamma, 0.0));
                terms.extend(terms_with_lift(g, -gamma, 1.0));
                terms
            })
            .collect();
        Homotopy::from_affine_terms(target.n(), eqs)
    }

    /// The target system alone as a constant homotopy (every lift 0): used to refine and
    /// check endpoints with the same evaluator.
    pub fn target_only(system: &System) -> Homotopy {
        let eqs = system
            .equations
            .iter()
            .map(|f| terms_with_lift(f, C64::new(1.0, 0.0), 0.0))
            .collect();
        Homotopy::from_affine_terms(system.n(), eqs)
    }

    /// Number of homogeneous coordinates `n + 1`.
    pub fn nh(&self) -> usize {
        self.n + 1
    }

    /// The lift of every term in column order of `Â` (equations concatenated).
    pub fn lifts(&self) -> Vec<f64> {
        self.equations.iter().flatten().map(|t| t.lift).collect()
    }

    /// The largest `|ω|` of the terms' lifts (0 without terms).
    pub fn max_lift(&self) -> f64 {
        self.equations
            .iter()
            .flatten()
            .fold(0.0f64, |m, t| m.max(t.lift.abs()))
    }

    /// Total number of terms (columns of `Â`).
    pub fn term_count(&self) -> usize {
        self.equations.iter().map(|e| e.len()).sum()
    }

    /// Direct evaluation of `[∂h/∂y, ∂h/∂τ, h]` at `(y, τ)`: the reference the batched
    /// evaluators are tested against. Returns `n` rows of `n + 3` entries.
    pub fn extended_jacobian_direct(&self, y: &[C64], tau: C64) -> Vec<Vec<C64>> {
        let nh = self.nh();
        self.equations
            .iter()
            .map(|terms| {
                let mut row = vec![C64::new(0.0, 0.0); nh + 2];
                for t in terms {
                    let w = (tau * t.lift).exp();
                    let mut mono = t.coeff * w;
                    for (yj, &a) in y.iter().zip(&t.exponents) {
                        mono *= yj.powi(a);
                    }
                    for j in 0..nh {
                        let a = t.exponents[j];
                        if a != 0 {
                            row[j] += mono * a as f64 / y[j];
                        }
                    }
                    row[nh] += mono * t.lift;
                    row[nh + 1] += mono;
                }
                row
            })
            .collect()
    }
}

/// The terms of `f` scaled by `scale`, all with lift `lift`.
pub fn terms_with_lift(f: &Polynomial, scale: C64, lift: f64) -> Vec<(C64, Vec<i32>, f64)> {
    f.terms
        .iter()
        .map(|t| (t.coeff * scale, t.exponents.clone(), lift))
        .collect()
}
