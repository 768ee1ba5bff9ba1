//! Exact integer arithmetic for the combinatorial decisions: a small ring trait with
//! checked operations, implemented by `i128` (every operation checked; `None` on overflow)
//! and by `num_bigint::BigInt` (never overflows). Code generic over [`Ring`] runs first on
//! `i128` and is re-run on `BigInt` when an overflow is reported.

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};
use std::cmp::Ordering;

/// Overflow of the fixed-width path; the caller retries with big integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

/// An exact integer ring with checked operations.
pub trait Ring: Clone + Ord + std::fmt::Debug {
    fn from_i64(v: i64) -> Self;
    fn zero() -> Self {
        Self::from_i64(0)
    }
    fn is_zero(&self) -> bool;
    /// −1, 0 or 1.
    fn signum_i(&self) -> i32;
    fn add(&self, o: &Self) -> Result<Self, Overflow>;
    fn sub(&self, o: &Self) -> Result<Self, Overflow>;
    fn mul(&self, o: &Self) -> Result<Self, Overflow>;
    /// Exact quotient (the caller guarantees divisibility).
    fn div_exact(&self, o: &Self) -> Result<Self, Overflow>;
    fn neg(&self) -> Result<Self, Overflow>;
    /// Value as `i128` when it fits.
    fn to_i128(&self) -> Option<i128>;
    /// `a·b − c·d`, the fraction-free pivot kernel.
    fn det2(a: &Self, b: &Self, c: &Self, d: &Self) -> Result<Self, Overflow> {
        a.mul(b)?.sub(&c.mul(d)?)
    }
    /// `(a·b − c·d) / e`, exact (Bareiss step).
    fn det2_div(a: &Self, b: &Self, c: &Self, d: &Self, e: &Self) -> Result<Self, Overflow> {
        Self::det2(a, b, c, d)?.div_exact(e)
    }
}

/// The checked operations shared by the fixed-width integer rings.
macro_rules! checked_ring_ops {
    ($t:ty) => {
        #[inline]
        fn from_i64(v: i64) -> Self {
            v as $t
        }
        #[inline]
        fn is_zero(&self) -> bool {
            *self == 0
        }
        #[inline]
        fn signum_i(&self) -> i32 {
            self.signum() as i32
        }
        #[inline]
        fn add(&self, o: &Self) -> Result<Self, Overflow> {
            self.checked_add(*o).ok_or(Overflow)
        }
        #[inline]
        fn sub(&self, o: &Self) -> Result<Self, Overflow> {
            self.checked_sub(*o).ok_or(Overflow)
        }
        #[inline]
        fn mul(&self, o: &Self) -> Result<Self, Overflow> {
            self.checked_mul(*o).ok_or(Overflow)
        }
        #[inline]
        fn div_exact(&self, o: &Self) -> Result<Self, Overflow> {
            debug_assert!(*o != 0 && self % o == 0);
            self.checked_div(*o).ok_or(Overflow)
        }
        #[inline]
        fn neg(&self) -> Result<Self, Overflow> {
            self.checked_neg().ok_or(Overflow)
        }
    };
}

impl Ring for i128 {
    checked_ring_ops!(i128);
    #[inline]
    fn to_i128(&self) -> Option<i128> {
        Some(*self)
    }
}

impl Ring for i64 {
    checked_ring_ops!(i64);
    #[inline]
    fn to_i128(&self) -> Option<i128> {
        Some(*self as i128)
    }
    /// `a·b − c·d` in `i128` (cannot overflow there), checked back into `i64`.
    #[inline]
    fn det2(a: &Self, b: &Self, c: &Self, d: &Self) -> Result<Self, Overflow> {
        let v = *a as i128 * *b as i128 - *c as i128 * *d as i128;
        i64::try_from(v).map_err(|_| Overflow)
    }
    #[inline]
    fn det2_div(a: &Self, b: &Self, c: &Self, d: &Self, e: &Self) -> Result<Self, Overflow> {
        let v = *a as i128 * *b as i128 - *c as i128 * *d as i128;
        match i64::try_from(v) {
            // an inexact division cannot happen in a correct fraction-free pivot; it is
            // reported (as an overflow: the caller recomputes on a wider tier) rather than
            // truncated (one `idiv` gives both quotient and remainder)
            Ok(v) => {
                if v % *e != 0 {
                    return Err(Overflow);
                }
                Ok(v / *e)
            }
            Err(_) => {
                if v % *e as i128 != 0 {
                    return Err(Overflow);
                }
                i64::try_from(v / *e as i128).map_err(|_| Overflow)
            }
        }
    }
}

impl Ring for BigInt {
    fn from_i64(v: i64) -> Self {
        BigInt::from(v)
    }
    fn is_zero(&self) -> bool {
        Zero::is_zero(self)
    }
    fn signum_i(&self) -> i32 {
        if Zero::is_zero(self) {
            0
        } else if self.is_positive() {
            1
        } else {
            -1
        }
    }
    fn add(&self, o: &Self) -> Result<Self, Overflow> {
        Ok(self + o)
    }
    fn sub(&self, o: &Self) -> Result<Self, Overflow> {
        Ok(self - o)
    }
    fn mul(&self, o: &Self) -> Result<Self, Overflow> {
        Ok(self * o)
    }
    fn div_exact(&self, o: &Self) -> Result<Self, Overflow> {
        Ok(self / o)
    }
    fn neg(&self) -> Result<Self, Overflow> {
        Ok(-self)
    }
    fn to_i128(&self) -> Option<i128> {
        ToPrimitive::to_i128(self)
    }
}

/// Compares `a/b` with `c/d` for positive `b`, `d`.
pub fn cmp_frac<T: Ring>(a: &T, b: &T, c: &T, d: &T) -> Result<Ordering, Overflow> {
    Ok(a.mul(d)?.cmp(&c.mul(b)?))
}

/// The inverse of an odd `a` modulo `2^64` (Newton's iteration: 3, 6, …, 96 correct bits).
pub fn inverse_odd(a: i64) -> i64 {
    let a = a as u64;
    let mut x = a;
    for _ in 0..5 {
        x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
    }
    x as i64
}

/// [`det`] in `i64` (`None` when an entry leaves `i64`): Bareiss' elimination with the
/// `2 × 2` products in `i128` and the exact divisions by the previous pivot `p = 2^z·u`
/// (`u` odd) as a shift and a product with `u⁻¹ mod 2^64` (exact: the quotient is an
/// integer that fits `i64`). Several times faster than the generic `det::<i64>` (whose
/// checked divisions dominate).
pub fn det_i64(m: &[Vec<i64>]) -> Option<i64> {
    let n = m.len();
    if n == 0 {
        return Some(1);
    }
    let mut a: Vec<i64> = Vec::with_capacity(n * n);
    for r in m {
        a.extend_from_slice(r);
    }
    let mut neg = false;
    let mut prev: i64 = 1;
    for k in 0..n {
        if a[k * n + k] == 0 {
            let Some(i) = (k + 1..n).find(|&i| a[i * n + k] != 0) else {
                return Some(0);
            };
            for j in 0..n {
                a.swap(i * n + j, k * n + j);
            }
            neg = !neg;
        }
        let tz = prev.trailing_zeros();
        let inv = inverse_odd(prev >> tz);
        let akk = a[k * n + k] as i128;
        for i in k + 1..n {
            let aik = a[i * n + k] as i128;
            for j in k + 1..n {
                let num = a[i * n + j] as i128 * akk - aik * a[k * n + j] as i128;
                let num = i64::try_from(num).ok()?;
                debug_assert_eq!(num % prev, 0);
                a[i * n + j] = (num >> tz).wrapping_mul(inv);
            }
        }
        prev = a[k * n + k];
    }
    let d = a[n * n - 1];
    Some(if neg { d.checked_neg()? } else { d })
}

/// Determinant of a square integer matrix by Bareiss' fraction-free elimination.
pub fn det<T: Ring>(m: &[Vec<i64>]) -> Result<T, Overflow> {
    let n = m.len();
    if n == 0 {
        return Ok(T::from_i64(1));
    }
    let mut a: Vec<Vec<T>> = m
        .iter()
        .map(|r| r.iter().map(|&v| T::from_i64(v)).collect())
        .collect();
    let mut sign = false;
    let mut prev = T::from_i64(1);
    for k in 0..n {
        if a[k][k].is_zero() {
            match (k + 1..n).find(|&i| !a[i][k].is_zero()) {
                Some(i) => {
                    a.swap(i, k);
                    sign = !sign;
                }
                None => return Ok(T::zero()),
            }
        }
        for i in k + 1..n {
            for j in k + 1..n {
                let v = T::det2(&a[i][j], &a[k][k], &a[i][k], &a[k][j])?;
                a[i][j] = v.div_exact(&prev)?;
            }
        }
        prev = a[k][k].clone();
    }
    let d = a[n - 1][n - 1].clone();
    if sign {
        d.neg()
    } else {
        Ok(d)
    }
}

/// `|det m|` exactly, `i128` first and on overflow modulo primes
/// ([`super::modular::det_modular`]); `None` when the value does not fit in `u128`.
pub fn abs_det(m: &[Vec<i64>]) -> Option<u128> {
    // i64 first (no division, no i128 library call)
    if let Some(d) = det_i64(m) {
        return Some(d.unsigned_abs() as u128);
    }
    match det::<i128>(m) {
        Ok(d) => Some(d.unsigned_abs()),
        Err(Overflow) => super::modular::det_modular(m).abs().to_u128(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `det_i64` (Bareiss with divisions by inverses mod 2^64) equals the generic `i128`
    /// Bareiss on random matrices: small entries (many singular ones and row swaps),
    /// larger entries, and entries whose elimination leaves `i64` (`None` then).
    #[test]
    fn det_i64_agrees() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (mut zero, mut none) = (0, 0);
        for t in 0..3000 {
            let n = rng.random_range(1..=9);
            let r: i64 = [1, 3, 1000, 1 << 20][t % 4];
            let m: Vec<Vec<i64>> = (0..n)
                .map(|_| (0..n).map(|_| rng.random_range(-r..=r)).collect())
                .collect();
            let want = det::<i128>(&m).ok();
            match det_i64(&m) {
                Some(d) => {
                    assert_eq!(Some(d as i128), want, "{m:?}");
                    zero += (d == 0) as usize;
                }
                // an intermediate 2 × 2 product left i64 (the caller falls back)
                None => none += 1,
            }
        }
        assert!(
            zero > 100 && none > 10,
            "{zero} singular, {none} out of range"
        );
    }

    #[test]
    fn det_small() {
        let m = vec![vec![2, 0, 1], vec![1, 3, 2], vec![1, 1, 1]];
        // 2(3-2) - 0 + 1(1-3) = 0
        assert_eq!(det::<i128>(&m).unwrap(), 0);
        let m = vec![vec![0, 1], vec![1, 0]];
        assert_eq!(det::<i128>(&m).unwrap(), -1);
        assert_eq!(det::<BigInt>(&m).unwrap(), BigInt::from(-1));
    }

    #[test]
    fn overflow_detected() {
        let big = i64::MAX;
        let m = vec![
            vec![big, big - 1, 3],
            vec![-big, big, 5],
            vec![7, big, -big],
        ];
        assert!(det::<i128>(&m).is_err());
        assert!(det::<BigInt>(&m).is_ok());
    }
}
