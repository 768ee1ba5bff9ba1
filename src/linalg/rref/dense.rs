//! Row-major dense matrix used by the row-reduction engine.

use super::field::Field;

/// A dense `rows × cols` matrix stored row-major in `data`.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix<E> {
    pub rows: usize,
    pub cols: usize,
    pub data: Vec<E>,
}

impl<E: Copy> Matrix<E> {
    /// A matrix filled with `fill`.
    pub fn filled(rows: usize, cols: usize, fill: E) -> Self {
        Matrix {
            rows,
            cols,
            data: vec![fill; rows * cols],
        }
    }
    /// From row-major data (`data.len() == rows · cols`).
    pub fn from_vec(rows: usize, cols: usize, data: Vec<E>) -> Self {
        assert_eq!(
            data.len(),
            rows * cols,
            "Matrix::from_vec: wrong data length"
        );
        Matrix { rows, cols, data }
    }
    /// From a function of (row, column).
    pub fn from_fn(rows: usize, cols: usize, mut f: impl FnMut(usize, usize) -> E) -> Self {
        let mut data = Vec::with_capacity(rows * cols);
        for i in 0..rows {
            for j in 0..cols {
                data.push(f(i, j));
            }
        }
        Matrix { rows, cols, data }
    }
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> E {
        self.data[i * self.cols + j]
    }
    #[inline]
    pub fn set(&mut self, i: usize, j: usize, v: E) {
        self.data[i * self.cols + j] = v;
    }
    pub fn row(&self, i: usize) -> &[E] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }
    /// Columns `cols` of every row, in that order.
    pub fn select_cols(&self, cols: &[usize]) -> Self {
        Matrix::from_fn(self.rows, cols.len(), |i, k| self.get(i, cols[k]))
    }
    /// The block of rows `r0..r1`, columns `c0..c1`.
    pub fn block(&self, r0: usize, r1: usize, c0: usize, c1: usize) -> Self {
        Matrix::from_fn(r1 - r0, c1 - c0, |i, j| self.get(r0 + i, c0 + j))
    }
    /// `[self | other]` (same number of rows).
    pub fn hcat(&self, other: &Self) -> Self {
        assert_eq!(self.rows, other.rows, "hcat: row counts differ");
        let c = self.cols + other.cols;
        Matrix::from_fn(self.rows, c, |i, j| {
            if j < self.cols {
                self.get(i, j)
            } else {
                other.get(i, j - self.cols)
            }
        })
    }
    pub fn transpose(&self) -> Self {
        Matrix::from_fn(self.cols, self.rows, |i, j| self.get(j, i))
    }
}

impl<E: Copy> Matrix<E> {
    /// The identity of size n over `f`.
    pub fn identity<F: Field<Elem = E>>(f: &F, n: usize) -> Self {
        Matrix::from_fn(n, n, |i, j| if i == j { f.one() } else { f.zero() })
    }
    /// Zero matrix over `f`.
    pub fn zeros<F: Field<Elem = E>>(f: &F, rows: usize, cols: usize) -> Self {
        Matrix::filled(rows, cols, f.zero())
    }
    /// The product `self · other` over `f` (row-axpy order, reference speed).
    pub fn mul<F: Field<Elem = E>>(&self, f: &F, other: &Self) -> Self {
        assert_eq!(self.cols, other.rows, "mul: inner dimensions differ");
        let mut out = Matrix::zeros(f, self.rows, other.cols);
        for i in 0..self.rows {
            for k in 0..self.cols {
                let a = self.get(i, k);
                if f.is_zero(a) {
                    continue;
                }
                for j in 0..other.cols {
                    let v = f.add(out.get(i, j), f.mul(a, other.get(k, j)));
                    out.set(i, j, v);
                }
            }
        }
        out
    }
}
