//! Binomial systems `x^V = b` (row `k`: `Π_j x_j^{V_kj} = b_k`) in log coordinates.
//!
//! With `x = exp(z)` the system reads `V z = log b + 2πi m`, `m ∈ Z^n`. An integer row
//! Hermite normal form `U V = H` (`U` unimodular, `H` upper triangular with positive
//! diagonal and off-diagonal entries reduced modulo the diagonal; exact `i128` with
//! overflow checks) turns it into `H z = U log b + 2πi m'`, `m' = U m ∈ Z^n`. Back
//! substitution with `m'_k ∈ {0, …, H_kk − 1}` gives `Π H_kk = |det V|` solutions, pairwise
//! distinct modulo `2πi Z^n`. Imaginary parts are reduced into `(−π, π]` as they are made.

use super::CellError;
use num_complex::Complex64;
use std::f64::consts::PI;
use std::ops::ControlFlow;

/// Row Hermite normal form: returns `(U, H)` with `U V = H`.
pub fn hermite(v: &[Vec<i64>]) -> Result<(Vec<Vec<i128>>, Vec<Vec<i128>>), CellError> {
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
    let c: Vec<Complex64> = u
        .iter()
        .map(|row| {
            row.iter()
                .zip(log_b)
                .map(|(&a, &l)| l * a as f64)
                .sum::<Complex64>()
        })
        .collect();
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
