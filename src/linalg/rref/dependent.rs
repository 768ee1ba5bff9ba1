//! Equations that depend on earlier ones: the rank of a system's Jacobian at a random
//! point (a solver pre-check for systems that are not generically square).
//!
//! Equation `k` depends on the earlier ones when its gradient at a generic point lies in
//! the span of the gradients of equations `0..k`; these are the non-pivot columns of the
//! row reduction of `Jᵀ` (one column per equation).
//!
//! * Exact route: when every real and imaginary part of every coefficient is a rational
//!   `a/b` with `|a| < 2^53`, `1 ≤ b ≤ 2^20` that rounds to exactly that double (found by
//!   continued fractions; integers and short decimals such as 0.1 qualify), the Jacobian
//!   is evaluated in Z/p, p = [`PRIMES`]`[0]` ≡ 1 (mod 4) (the imaginary unit maps to a
//!   square root of −1 mod p), at a random point and `Jᵀ` is reduced by the `u64`-word Z/p
//!   engine (exact). Generic dependence implies dependence at every point; dependence at a
//!   random point without generic dependence has probability ≤ deg/p (Schwartz–Zippel) or
//!   comes from an unlucky prime, so the check is repeated with the second prime at an
//!   independent point and only equations dependent under both are reported.
//! * Float route otherwise: the Jacobian at two random complex points of modulus 1, each
//!   equation's gradient scaled to largest modulus 1, reduced by the complex f64 engine
//!   with its documented tolerance (`max(m, n)·ε·‖A‖_∞`); equations dependent at both
//!   points are reported.

use super::dense::Matrix;
use super::echelon::{echelonize, EchelonOptions};
use super::field::{Field, Zp64, C64};
use crate::system::System;
use num_complex::Complex64;
use rand::{Rng, SeedableRng};

/// The two primes of the exact route, both ≡ 1 (mod 4) and below 2^62.
pub const PRIMES: [u64; 2] = [4_611_686_018_427_387_817, 4_611_686_018_427_387_761];

/// Largest denominator of a coefficient part on the exact route.
const MAX_DEN: i64 = 1 << 20;

/// `x = a/b` exactly as a double with `|a| < 2^53`, `1 ≤ b ≤ 2^20` (continued fractions).
fn small_rational(x: f64) -> Option<(i64, i64)> {
    if !x.is_finite() {
        return None;
    }
    let lim = (1i64 << 53) as f64;
    if x.fract() == 0.0 {
        return (x.abs() < lim).then_some((x as i64, 1));
    }
    // Convergents h/k of the continued fraction of x.
    let (mut h0, mut h1) = (0i128, 1i128);
    let (mut k0, mut k1) = (1i128, 0i128);
    let mut y = x;
    for _ in 0..64 {
        let a = y.floor();
        if a.abs() >= lim {
            return None;
        }
        let ai = a as i128;
        let (h2, k2) = (ai * h1 + h0, ai * k1 + k0);
        if k2 > MAX_DEN as i128 || h2.abs() >= 1i128 << 53 {
            return None;
        }
        if h2 as f64 / k2 as f64 == x {
            return Some((h2 as i64, k2 as i64));
        }
        (h0, h1, k0, k1) = (h1, h2, k1, k2);
        let r = y - a;
        if r == 0.0 {
            return None;
        }
        y = 1.0 / r;
    }
    None
}

/// A square root of −1 mod a prime p ≡ 1 (mod 4): `c^((p−1)/4)` for the first
/// non-residue c.
fn sqrt_minus_one(f: &Zp64) -> u64 {
    let p = f.prime();
    let pow = |mut b: u64, mut e: u64| {
        let mut r = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                r = f.mul(r, b);
            }
            b = f.mul(b, b);
            e >>= 1;
        }
        r
    };
    for c in 2..1000u64 {
        if pow(c, (p - 1) / 2) == p - 1 {
            return pow(c, (p - 1) / 4);
        }
    }
    unreachable!("no quadratic non-residue below 1000 mod {p}")
}

/// `x^e` for a possibly negative exponent (x ≠ 0).
fn pow_field<F: Field>(f: &F, x: F::Elem, e: i32) -> F::Elem {
    let b = if e < 0 { f.inv(x) } else { x };
    let mut r = f.one();
    let mut base = b;
    let mut k = e.unsigned_abs();
    while k > 0 {
        if k & 1 == 1 {
            r = f.mul(r, base);
        }
        base = f.mul(base, base);
        k >>= 1;
    }
    r
}

/// `Jᵀ` (variables × equations) at `x`, coefficients mapped by `coeff`.
fn jacobian_t<F: Field>(
    f: &F,
    system: &System,
    x: &[F::Elem],
    coeff: &dyn Fn(usize, usize) -> F::Elem,
) -> Matrix<F::Elem> {
    let n = system.variables.len();
    let m = system.equations.len();
    let mut jt = Matrix::zeros(f, n, m);
    for (i, eq) in system.equations.iter().enumerate() {
        for (t, term) in eq.terms.iter().enumerate() {
            let c = coeff(i, t);
            for j in 0..n.min(term.exponents.len()) {
                let e = term.exponents[j];
                if e == 0 {
                    continue;
                }
                // c · e · x_j^(e−1) · Π_{l≠j} x_l^(e_l)
                let mut v = f.mul(c, f.from_i64(e as i64));
                for (l, &el) in term.exponents.iter().enumerate().take(n) {
                    let ee = if l == j { el - 1 } else { el };
                    if ee != 0 {
                        v = f.mul(v, pow_field(f, x[l], ee));
                    }
                }
                jt.set(j, i, f.add(jt.get(j, i), v));
            }
        }
    }
    jt
}

/// Non-pivot columns of the RREF of `jt`: the equations dependent on earlier ones.
fn non_pivots<F: Field>(f: &F, mut jt: Matrix<F::Elem>) -> Vec<usize> {
    let m = jt.cols;
    let e = echelonize(f, &mut jt, &EchelonOptions::default());
    let mut is_piv = vec![false; m];
    for &p in &e.pivots {
        is_piv[p] = true;
    }
    (0..m).filter(|&i| !is_piv[i]).collect()
}

/// The rational parts of every coefficient, `None` when one does not fit.
#[allow(clippy::type_complexity)]
fn rational_coeffs(system: &System) -> Option<Vec<Vec<((i64, i64), (i64, i64))>>> {
    system
        .equations
        .iter()
        .map(|eq| {
            eq.terms
                .iter()
                .map(|t| Some((small_rational(t.coeff.re)?, small_rational(t.coeff.im)?)))
                .collect()
        })
        .collect()
}

/// Indices (0-based) of the equations whose gradient at a random point lies in the span of
/// the earlier equations' gradients (see the module doc for the two routes); empty for a
/// system that is generically square. Deterministic for a given `seed`.
pub fn dependent_equations(system: &System, seed: u64) -> Vec<usize> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_de9e_0d0e_u64);
    let n = system.variables.len();
    let mut found: Option<Vec<usize>> = None;
    let mut intersect = |d: Vec<usize>| {
        found = Some(match found.take() {
            None => d,
            Some(prev) => prev.into_iter().filter(|i| d.contains(i)).collect(),
        });
    };
    if let Some(rat) = rational_coeffs(system) {
        for &p in &PRIMES {
            let f = Zp64::new(p).expect("PRIMES are prime");
            let s = sqrt_minus_one(&f);
            let q = |(a, b): (i64, i64)| f.mul(f.from_i64(a), f.inv(f.from_i64(b)));
            let coeff = |i: usize, t: usize| {
                let (re, im) = rat[i][t];
                f.add(q(re), f.mul(s, q(im)))
            };
            let x: Vec<u64> = (0..n).map(|_| rng.random_range(1..p)).collect();
            intersect(non_pivots(&f, jacobian_t(&f, system, &x, &coeff)));
        }
    } else {
        for _ in 0..2 {
            let x: Vec<Complex64> = (0..n)
                .map(|_| Complex64::from_polar(1.0, rng.random_range(0.0..std::f64::consts::TAU)))
                .collect();
            let coeff = |i: usize, t: usize| system.equations[i].terms[t].coeff;
            let mut jt = jacobian_t(&C64, system, &x, &coeff);
            // Scale each equation's gradient (column) to largest modulus 1.
            for i in 0..jt.cols {
                let mx = (0..jt.rows).fold(0.0f64, |a, j| a.max(jt.get(j, i).norm()));
                if mx > 0.0 && mx.is_finite() {
                    for j in 0..jt.rows {
                        jt.set(j, i, jt.get(j, i) / mx);
                    }
                }
            }
            intersect(non_pivots(&C64, jt));
        }
    }
    found.unwrap_or_default()
}

/// Variables (0-based) that occur in no equation.
pub fn unused_variables(system: &System) -> Vec<usize> {
    (0..system.n())
        .filter(|&j| {
            system.equations.iter().all(|f| {
                f.terms
                    .iter()
                    .all(|t| t.exponents.get(j).is_none_or(|&a| a == 0))
            })
        })
        .collect()
}

/// Of the `dependent` equations, those that contradict the earlier ones: `f_k − Σ λ_i f_i`
/// is a nonzero constant, with `λ` read off the reduced `Jᵀ` at a random complex point
/// (column k of the RREF holds the combination of the pivot columns). A constant `λ` is
/// what a linear relation gives; a relation that varies with the point (`f_2 = f_1²`) leaves
/// non-constant terms and is not called a contradiction.
fn inconsistent_equations(system: &System, dependent: &[usize], seed: u64) -> Vec<usize> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x1c0_5157e47);
    let n = system.n();
    let x: Vec<Complex64> = (0..n)
        .map(|_| Complex64::from_polar(1.0, rng.random_range(0.0..std::f64::consts::TAU)))
        .collect();
    let coeff = |i: usize, t: usize| system.equations[i].terms[t].coeff;
    let mut jt = jacobian_t(&C64, system, &x, &coeff);
    let e = echelonize(&C64, &mut jt, &EchelonOptions::default());
    let mut out = Vec::new();
    for &k in dependent {
        let mut h: std::collections::HashMap<&[i32], Complex64> = Default::default();
        let mut scale = 0.0f64;
        let mut add = |i: usize, w: Complex64| {
            for t in &system.equations[i].terms {
                let c = t.coeff * w;
                scale = scale.max(c.norm());
                *h.entry(t.exponents.as_slice()).or_default() += c;
            }
        };
        add(k, Complex64::new(1.0, 0.0));
        for (r, &p) in e.pivots.iter().enumerate() {
            if p < k {
                add(p, -jt.get(r, k));
            }
        }
        let tol = 1e-8 * scale;
        let constant = h
            .iter()
            .filter(|(a, _)| a.iter().all(|&v| v == 0))
            .map(|(_, c)| c.norm())
            .sum::<f64>();
        let rest_small = h
            .iter()
            .all(|(a, c)| a.iter().all(|&v| v == 0) || c.norm() <= tol);
        if rest_small && constant > tol {
            out.push(k);
        }
    }
    out
}

/// The solver's warning lines for variables that occur in no equation, equations that
/// contradict the others, and [`dependent_equations`] (1-based numbers), or `None` when
/// the system is generically square.
pub fn dependency_warning(system: &System, seed: u64) -> Option<String> {
    let d = dependent_equations(system, seed);
    if d.is_empty() {
        return None;
    }
    let m = system.equations.len();
    let rank = m - d.len();
    let mut lines = Vec::new();
    let unused = unused_variables(system);
    if !unused.is_empty() {
        let names: Vec<String> = unused
            .iter()
            .map(|&j| format!("'{}'", system.variables[j]))
            .collect();
        lines.push(format!(
            "warning: variable{} {} occur{} in no equation: every solution extends along {} \
             (a positive-dimensional set), so there are no isolated solutions",
            if unused.len() > 1 { "s" } else { "" },
            names.join(", "),
            if unused.len() > 1 { "" } else { "s" },
            if unused.len() > 1 { "them" } else { "it" },
        ));
    }
    let bad = inconsistent_equations(system, &d, seed);
    if !bad.is_empty() {
        let names: Vec<String> = bad.iter().map(|i| (i + 1).to_string()).collect();
        lines.push(format!(
            "warning: equation{} {} contradict{} the others (a combination of them plus a \
             nonzero constant): the system has no solutions",
            if bad.len() > 1 { "s" } else { "" },
            names.join(", "),
            if bad.len() > 1 { "" } else { "s" },
        ));
    }
    let d: Vec<usize> = d.into_iter().filter(|k| !bad.contains(k)).collect();
    if d.len() <= unused.len() {
        return (!lines.is_empty()).then(|| lines.join("\n"));
    }
    let names: Vec<String> = d.iter().map(|i| (i + 1).to_string()).collect();
    lines.push(format!(
        "warning: equation{} {} depend{} on the others (Jacobian rank {} < {m} at a random point): the system is not generically square; isolated solutions may be missing",
        if d.len() > 1 { "s" } else { "" },
        names.join(", "),
        if d.len() > 1 { "" } else { "s" },
        rank
    ));
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_rationals_and_routes() {
        assert_eq!(small_rational(3.0), Some((3, 1)));
        assert_eq!(small_rational(-0.1), Some((-1, 10)));
        assert_eq!(small_rational(0.51234), Some((25617, 50000)));
        assert_eq!(small_rational(1.0 / 3.0), Some((1, 3)));
        assert_eq!(small_rational(std::f64::consts::SQRT_2), None);
        assert_eq!(small_rational(f64::NAN), None);
        assert_eq!(small_rational(1e300), None);
        let s = crate::system::families::generate("katsura", 4).unwrap();
        assert!(rational_coeffs(&s).is_some());
        let mut s2 = s.clone();
        s2.equations[1].terms[0].coeff *= std::f64::consts::PI;
        assert!(rational_coeffs(&s2).is_none());
        for &p in &PRIMES {
            let f = Zp64::new(p).unwrap();
            assert_eq!(p % 4, 1);
            let i = sqrt_minus_one(&f);
            assert_eq!(f.mul(i, i), p - 1);
        }
    }
}
