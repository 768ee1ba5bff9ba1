//! Rank, determinant, inverse, solve, null space and rank factorization, all read off
//! the one [`echelonize`] core.

use super::dense::Matrix;
use super::echelon::{echelonize, Echelon, EchelonOptions};
use super::field::Field;

/// Solutions of `A X = B`.
#[derive(Clone, Debug, PartialEq)]
pub enum Solution<E> {
    /// `A` has full column rank: the one solution `X` (n × k).
    Unique(Matrix<E>),
    /// All solutions are `particular + N·Y` for the null basis `N` (n × d, columns),
    /// any `Y` (d × k).
    Affine {
        particular: Matrix<E>,
        null_basis: Matrix<E>,
    },
    /// No solution.
    Inconsistent,
}

/// The RREF of `a` (a copy) and its echelon data.
pub fn rref<F: Field>(
    f: &F,
    a: &Matrix<F::Elem>,
    opt: &EchelonOptions,
) -> (Matrix<F::Elem>, Echelon<F::Elem>) {
    let mut r = a.clone();
    let e = echelonize(f, &mut r, opt);
    (r, e)
}

fn ref_opts(opt: &EchelonOptions) -> EchelonOptions {
    EchelonOptions {
        reduce_above: false,
        ..*opt
    }
}

/// Rank of `a` (numerical rank under the tolerance for floats).
pub fn rank<F: Field>(f: &F, a: &Matrix<F::Elem>, opt: &EchelonOptions) -> usize {
    let mut r = a.clone();
    echelonize(f, &mut r, &ref_opts(opt)).rank
}

/// Determinant of a square `a`: `sign(π) · Π d_k`, zero when rank-deficient.
pub fn det<F: Field>(f: &F, a: &Matrix<F::Elem>, opt: &EchelonOptions) -> F::Elem {
    assert_eq!(a.rows, a.cols, "det: matrix is not square");
    let mut r = a.clone();
    let e = echelonize(f, &mut r, &ref_opts(opt));
    if e.rank < a.rows {
        return f.zero();
    }
    let mut d = e
        .pivot_values
        .iter()
        .fold(e.det_scale, |acc, &x| f.mul(acc, x));
    if e.perm_sign < 0 {
        d = f.neg(d);
    }
    d
}

/// Inverse of a square `a` by Gauss–Jordan on `[A | I]`; `None` when singular (rank
/// below n, under the tolerance for floats).
pub fn inverse<F: Field>(
    f: &F,
    a: &Matrix<F::Elem>,
    opt: &EchelonOptions,
) -> Option<Matrix<F::Elem>> {
    assert_eq!(a.rows, a.cols, "inverse: matrix is not square");
    let n = a.rows;
    let mut aug = a.hcat(&Matrix::identity(f, n));
    let e = echelonize(
        f,
        &mut aug,
        &EchelonOptions {
            pivot_limit: n,
            reduce_above: true,
            ..*opt
        },
    );
    if e.rank < n {
        return None;
    }
    Some(aug.block(0, n, n, 2 * n))
}

/// Null-space basis from an RREF `r` (rank rows first) with pivots `pivots`: one column
/// per free column `f`, with 1 at `f` and `−r[k, f]` at pivot column `pivots[k]`.
pub fn null_from_rref<F: Field>(
    f: &F,
    r: &Matrix<F::Elem>,
    pivots: &[usize],
    ncols: usize,
) -> Matrix<F::Elem> {
    let mut is_piv = vec![false; ncols];
    for &p in pivots {
        is_piv[p] = true;
    }
    let free: Vec<usize> = (0..ncols).filter(|&j| !is_piv[j]).collect();
    let mut nb = Matrix::zeros(f, ncols, free.len());
    for (d, &fc) in free.iter().enumerate() {
        nb.set(fc, d, f.one());
        for (k, &pc) in pivots.iter().enumerate() {
            nb.set(pc, d, f.neg(r.get(k, fc)));
        }
    }
    nb
}

/// A basis of `{x : A x = 0}` as the columns of an `n × (n − rank)` matrix.
pub fn null_space<F: Field>(f: &F, a: &Matrix<F::Elem>, opt: &EchelonOptions) -> Matrix<F::Elem> {
    let (r, e) = rref(
        f,
        a,
        &EchelonOptions {
            reduce_above: true,
            ..*opt
        },
    );
    null_from_rref(f, &r, &e.pivots, a.cols)
}

/// Solves `A X = B` by reducing `[A | B]` with pivots limited to A's columns. A row of
/// the result that is zero on A and non-zero on B (for floats: above
/// `tol_B = max(tol, max(m, n)·ε·max|B part after reduction|)`) makes the system
/// inconsistent.
pub fn solve<F: Field>(
    f: &F,
    a: &Matrix<F::Elem>,
    b: &Matrix<F::Elem>,
    opt: &EchelonOptions,
) -> Solution<F::Elem> {
    assert_eq!(a.rows, b.rows, "solve: A and B have different row counts");
    let n = a.cols;
    let mut aug = a.hcat(b);
    let e = echelonize(
        f,
        &mut aug,
        &EchelonOptions {
            pivot_limit: n,
            reduce_above: true,
            ..*opt
        },
    );
    solution_from_reduced(f, &aug, &e, n)
}

/// Reads the solutions of `A X = B` off the reduced `[A | B]` (`aug`, pivots limited to
/// A's `n` columns, echelon data `e`). A row of the result that is zero on A and non-zero
/// on B (for floats: above `tol_B = max(tol, max(m, n)·ε·max|B part after reduction|)`)
/// makes the system inconsistent. Shared by the CPU and GPU backends.
pub fn solution_from_reduced<F: Field>(
    f: &F,
    aug: &Matrix<F::Elem>,
    e: &Echelon<F::Elem>,
    n: usize,
) -> Solution<F::Elem> {
    let k = aug.cols - n;
    let rows = aug.rows;
    let bmax = (0..rows)
        .flat_map(|i| (n..n + k).map(move |j| (i, j)))
        .fold(0.0f64, |acc, (i, j)| acc.max(f.magnitude(aug.get(i, j))));
    let tol = e.tolerance.max(rows.max(n) as f64 * f64::EPSILON * bmax);
    for i in e.rank..rows {
        for j in n..n + k {
            let x = aug.get(i, j);
            if (F::EXACT && !f.is_zero(x)) || (!F::EXACT && f.magnitude(x) > tol) {
                return Solution::Inconsistent;
            }
        }
    }
    let mut x = Matrix::zeros(f, n, k);
    for (row, &pc) in e.pivots.iter().enumerate() {
        for j in 0..k {
            x.set(pc, j, aug.get(row, n + j));
        }
    }
    if e.rank == n {
        Solution::Unique(x)
    } else {
        let null_basis = null_from_rref(f, &aug.block(0, rows, 0, n), &e.pivots, n);
        Solution::Affine {
            particular: x,
            null_basis,
        }
    }
}

/// Rank factorization `A = C · F` with `C = A[:, pivots]` (m × r) and `F` the non-zero
/// rows of the RREF (r × n).
pub fn rank_factorization<F: Field>(
    f: &F,
    a: &Matrix<F::Elem>,
    opt: &EchelonOptions,
) -> (Matrix<F::Elem>, Matrix<F::Elem>) {
    let (r, e) = rref(
        f,
        a,
        &EchelonOptions {
            reduce_above: true,
            ..*opt
        },
    );
    (a.select_cols(&e.pivots), r.block(0, e.rank, 0, a.cols))
}
