//! Glynn's formula (Balasubramanian–Bax–Franklin–Glynn):
//!
//! perm(A) = 2^(1−n) · Σ_{δ ∈ {±1}^n, δ_0 = +1} (Π_k δ_k) · Π_i Σ_j δ_j a_ij.
//!
//! The sign vectors δ_1..δ_(n−1) are visited in binary-reflected Gray-code order: bit b of
//! the code set means δ_(b+1) = −1, so one flip changes every row sum by ∓2·a_(i,b+1) and
//! the sign Π δ_k alternates from one term to the next. 2^(n−1) terms of O(n) each.

use super::GraySum;
use std::ops::{Add, Neg, Sub};

/// The Gray-code sum of Glynn's formula: start vector = row sums (all δ = +1), flip
/// column b (δ_(b+1): +1 → −1) adds c_b = −2·a_(·,b+1). The permanent is 2^(1−n)·S.
pub(crate) fn setup<T>(n: usize, a: impl Fn(usize, usize) -> T, zero: T) -> GraySum<T>
where
    T: Copy + Add<Output = T> + Sub<Output = T> + Neg<Output = T>,
{
    let v0 = (0..n)
        .map(|i| (0..n).fold(zero, |s, j| s + a(i, j)))
        .collect();
    let cols = (1..n)
        .map(|j| (0..n).map(|i| -(a(i, j) + a(i, j))).collect())
        .collect();
    GraySum { n, v0, cols }
}
