//! Binomial systems `x^V = b` (row `k`: `Π_j x_j^{V_kj} = b_k`) in log coordinates.
//!
//! With `x = exp(z)` the system reads `V z = log b + 2πi m`, `m ∈ Z^n`. An integer row
//! Hermite normal form `U V = H` (`U` unimodular, `H` upper triangular with positive
//! diagonal and off-diagonal entries reduced modulo the diagonal; exact `i128` with
//! overflow checks, and on an overflow the modular route of [`super::modular`]:
//! `|det V|` mod primes and CRT, `H` modulo `|det V|`, `U = H V⁻¹` mod primes) turns it into `H z = U log b + 2πi m'`, `m' = U m ∈ Z^n`. Back
//! substitution with `m'_k ∈ {0, …, H_kk − 1}` gives `Π H_kk = |det V|` solutions, pairwise
//! distinct modulo `2πi Z^n`. Imaginary parts are reduced into `(−π, π]` as they are made.

use super::CellError;
use num_complex::Complex64;
use std::f64::consts::PI;
use std::ops::ControlFlow;

/// Row Hermite normal form: returns `(U, H)` with `U V = H` ([`hermite_euclid`]; on an
/// `i128` overflow [`super::modular::hermite_modular`], which gives the same `(U, H)`:
/// both are unique for a nonsingular `V`).
#[allow(clippy::type_complexity)]
pub fn hermite(v: &[Vec<i64>]) -> Result<(Vec<Vec<i128>>, Vec<Vec<i128>>), CellError> {
    match hermite_euclid(v) {
        Err(CellError::Internal(_)) => super::modular::hermite_modular(v),
        r => r,
    }
}

/// Row Hermite normal form by Euclidean row operations on `V` and `U` in `i128`
/// (checked; `CellError::Internal` on overflow).
#[allow(clippy::type_complexity)]
pub fn hermite_euclid(v: &[Vec<i64>]) -> Result<(Vec<Vec<i128>>, Vec<Vec<i128>>), CellError> {
    let n = v.len();
    let ovf = || CellError::Internal("Hermite normal form overflows i128".into());
    let mut h: Vec<Vec<i128>> = v
        .iter()
        .map(|r| r.iter().map(|&a| a as i128).collect())
        .collect();
    let mut u: Vec<Vec<i128>> = (0..n)
        .map(|i| (0..n).map(|j| (i == j) as i128).collect())
        .collect();
    // row_i -= q·row_k on both matrices
    fn axpy(m: &mut [Vec<i128>], i: usize, k: usize, q: i128) -> Option<()> {
        if q == 0 {
            return Some(());
        }
        let (a, b) = if i < k {
            let (lo, hi) = m.split_at_mut(k);
            (&mut lo[i], &hi[0])
        } else {
            let (lo, hi) = m.split_at_mut(i);
            (&mut hi[0], &lo[k])
        };
        for (x, y) in a.iter_mut().zip(b.iter()) {
            *x = x.checked_sub(q.checked_mul(*y)?)?;
        }
        Some(())
    }
    for col in 0..n {
        loop {
            // pivot: smallest nonzero |entry| in rows col.. of this column
            let piv = (col..n)
                .filter(|&i| h[i][col] != 0)
                .min_by_key(|&i| h[i][col].unsigned_abs());
            let Some(p) = piv else {
                return Err(CellError::Input(
                    "binomial system: singular exponent matrix".into(),
                ));
            };
            h.swap(p, col);
            u.swap(p, col);
            let mut done = true;
            for i in col + 1..n {
                if h[i][col] != 0 {
                    let q = h[i][col].div_euclid(h[col][col]);
                    axpy(&mut h, i, col, q).ok_or_else(ovf)?;
                    axpy(&mut u, i, col, q).ok_or_else(ovf)?;
                    if h[i][col] != 0 {
                        done = false;
                    }
                }
            }
            if done {
                break;
            }
        }
        if h[col][col] < 0 {
            for x in h[col].iter_mut().chain(u[col].iter_mut()) {
                *x = x.checked_neg().ok_or_else(ovf)?;
            }
        }
    }
    // reduce above the diagonal
    for col in 1..n {
        for i in 0..col {
            let q = h[i][col].div_euclid(h[col][col]);
            axpy(&mut h, i, col, q).ok_or_else(ovf)?;
            axpy(&mut u, i, col, q).ok_or_else(ovf)?;
        }
    }
    Ok((u, h))
}

/// Largest `|U_ij|` for which `c = U log b` is formed directly (as always before the
/// modular route existed); beyond it `c = H V⁻¹ log b`.
const U_DIRECT: u128 = 1 << 20;

/// `z0` with `V z0 = log b` in complex f64 (row-reduction engine, partial pivoting) with two
/// steps of iterative refinement.
fn solve_log(v: &[Vec<i64>], log_b: &[Complex64]) -> Result<Vec<Complex64>, CellError> {
    use crate::linalg::rref::{solve, EchelonOptions, Matrix, Parallelism, Solution, C64};
    let n = v.len();
    let a = Matrix::from_fn(n, n, |i, j| Complex64::new(v[i][j] as f64, 0.0));
    let opt = EchelonOptions {
        parallelism: Parallelism::None,
        ..Default::default()
    };
    let sol = |rhs: &[Complex64]| -> Result<Vec<Complex64>, CellError> {
        match solve(&C64, &a, &Matrix::from_vec(n, 1, rhs.to_vec()), &opt) {
            Solution::Unique(x) => Ok(x.data),
            _ => Err(CellError::Internal(
                "binomial system: exponent matrix numerically singular".into(),
            )),
        }
    };
    let mut z = sol(log_b)?;
    for _ in 0..2 {
        let r: Vec<Complex64> = (0..n)
            .map(|k| log_b[k] - (0..n).map(|j| z[j] * v[k][j] as f64).sum::<Complex64>())
            .collect();
        for (zj, dj) in z.iter_mut().zip(sol(&r)?) {
            *zj += dj;
        }
    }
    Ok(z)
}

fn reduce_arg(z: Complex64) -> Complex64 {
    let mut im = z.im.rem_euclid(2.0 * PI);
    if im > PI {
        im -= 2.0 * PI;
    }
    Complex64::new(z.re, im)
}

/// Streams the `|det V|` solutions `z` (`x = exp(z)`) of `x^V = exp(log_b)`.
pub fn for_each_binomial_solution(
    v: &[Vec<i64>],
    log_b: &[Complex64],
    f: &mut dyn FnMut(&[Complex64]) -> ControlFlow<()>,
) -> Result<(), CellError> {
    let n = v.len();
    if log_b.len() != n || v.iter().any(|r| r.len() != n) {
        return Err(CellError::Input(format!(
            "binomial system: exponent matrix must be {n}×{n} with {n} right-hand sides"
        )));
    }
    if log_b.iter().any(|c| !c.re.is_finite() || !c.im.is_finite()) {
        return Err(CellError::Input(
            "binomial system: non-finite log coefficient (zero coefficient?)".into(),
        ));
    }
    let (u, h) = hermite(v)?;
    let umax = u
        .iter()
        .flatten()
        .map(|x| x.unsigned_abs())
        .max()
        .unwrap_or(0);
    let c: Vec<Complex64> = if umax <= U_DIRECT {
        u.iter()
            .map(|row| {
                row.iter()
                    .zip(log_b)
                    .map(|(&a, &l)| l * a as f64)
                    .sum::<Complex64>()
            })
            .collect()
    } else {
        // `U log b` would cancel catastrophically: `c = H z0` with `V z0 = log b`
        // (`U = H V⁻¹`), `z0` by the engine's complex solve and two refinement steps.
        let z0 = solve_log(v, log_b)?;
        h.iter()
            .map(|row| row.iter().zip(&z0).map(|(&a, &z)| z * a as f64).sum())
            .collect()
    };
    let mut z = vec![Complex64::new(0.0, 0.0); n];
    fn rec(
        k: usize,
        h: &[Vec<i128>],
        c: &[Complex64],
        z: &mut Vec<Complex64>,
        f: &mut dyn FnMut(&[Complex64]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let n = h.len();
        let mut rhs = c[k];
        for j in k + 1..n {
            rhs -= z[j] * h[k][j] as f64;
        }
        let d = h[k][k];
        for m in 0..d {
            let zk = (rhs + Complex64::new(0.0, 2.0 * PI * m as f64)) / d as f64;
            z[k] = reduce_arg(zk);
            let r = if k == 0 { f(z) } else { rec(k - 1, h, c, z, f) };
            r?;
        }
        ControlFlow::Continue(())
    }
    if n > 0 {
        let _ = rec(n - 1, &h, &c, &mut z, f);
    }
    Ok(())
}

/// All `|det V|` solutions of `x^V = exp(log_b)` in log coordinates (`x = exp(z)`), for
/// the binomial start system of a fine mixed cell (`V` the rows `a1 − a0`,
/// `log_b_k = log(−c_{k,a0} / c_{k,a1})`).
pub fn binomial_solutions(
    v: &[Vec<i64>],
    log_b: &[Complex64],
) -> crate::Result<Vec<Vec<Complex64>>> {
    let mut out = Vec::new();
    for_each_binomial_solution(v, log_b, &mut |z| {
        out.push(z.to_vec());
        ControlFlow::Continue(())
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hermite_is_triangular_and_unimodular() {
        let v = vec![vec![2, 3, 1], vec![4, -1, 5], vec![1, 1, -2]];
        let (u, h) = hermite(&v).unwrap();
        for i in 0..3 {
            for j in 0..3 {
                let s: i128 = (0..3).map(|k| u[i][k] * v[k][j] as i128).sum();
                assert_eq!(s, h[i][j]);
                if j < i {
                    assert_eq!(h[i][j], 0);
                }
            }
        }
        let du = super::super::exact::abs_det(
            &u.iter()
                .map(|r| r.iter().map(|&x| x as i64).collect())
                .collect::<Vec<_>>(),
        );
        assert_eq!(du, Some(1));
    }
}
