//! Ryser's inclusion–exclusion formula in Gray-code order.
//!
//! Ryser (1963): perm(A) = (−1)^n Σ_{S ⊆ [n]} (−1)^|S| Π_i Σ_{j∈S} a_ij.
//!
//! Nijenhuis–Wilf (*Combinatorial Algorithms*, ch. 23) halve the work: with
//! x_i = a_(i,n−1) − ½ Σ_j a_ij,
//!
//! perm(A) = (−1)^(n−1) · 2 · Σ_{S ⊆ [n−1]} (−1)^|S| Π_i (x_i + Σ_{j∈S} a_ij),
//!
//! because the product for S and for its complement in [n−1] differ by (−1)^n. Visiting S in
//! Gray-code order, each step adds or removes one column: 2^(n−1) terms of O(n) each.
//!
//! Algebraically this is Glynn's sum with the last column held fixed and every row sum
//! halved (x_i + Σ_S a_ij = ½ Σ_j δ_j a_ij); in binary floating point it rounds differently
//! from [`super::glynn`] only through the choice of the fixed column.

use super::GraySum;
use std::ops::{Add, Mul, Sub};

/// The Nijenhuis–Wilf Gray-code sum: start vector x, flip column b adds c_b = a_(·,b).
/// The permanent is (−1)^(n−1)·2·S.
pub(crate) fn setup<T>(n: usize, a: impl Fn(usize, usize) -> T, zero: T) -> GraySum<T>
where
    T: Copy + Add<Output = T> + Sub<Output = T> + Mul<f64, Output = T>,
{
    let v0 = (0..n)
        .map(|i| {
            let row = (0..n).fold(zero, |s, j| s + a(i, j));
            a(i, n - 1) - row * 0.5
        })
        .collect();
    let cols = (0..n - 1)
        .map(|j| (0..n).map(|i| a(i, j)).collect())
        .collect();
    GraySum { n, v0, cols }
}

/// Ryser's original sum over all 2^n subsets (no halving), for exact arithmetic where it
/// serves as an independent check of Glynn: start vector 0, flip column b adds a_(·,b).
/// The permanent is (−1)^n·S.
pub(crate) fn setup_full<T>(n: usize, a: impl Fn(usize, usize) -> T, zero: T) -> GraySum<T>
where
    T: Copy,
{
    let v0 = vec![zero; n];
    let cols = (0..n).map(|j| (0..n).map(|i| a(i, j)).collect()).collect();
    GraySum { n, v0, cols }
}
