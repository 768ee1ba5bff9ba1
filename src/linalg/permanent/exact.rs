//! Exact permanents of integer matrices.
//!
//! With R_i = Σ_j |a_ij| and B = Π_i R_i we have |perm(A)| ≤ B, and every row sum, product
//! and partial sum of a Gray-code sum over 2^b codes is bounded by R_i, B and 2^b·B.
//! - If 2^b·B < 2^127 the sum runs in i128, where no operation can overflow (the a priori
//!   bound is the overflow detection).
//! - Otherwise it runs modulo k primes p < 2^62 (Montgomery multiplication), with k chosen
//!   so that Π p > 2B, and the residues of perm(A) are combined by the Chinese remainder
//!   theorem (Garner's mixed-radix form) into the symmetric residue, which is perm(A).
//!
//! Methods: Glynn's formula (2^(n−1) codes, divided by 2^(n−1) at the end, exactly in i128
//! and by the inverse of 2^(n−1) mod p) and Ryser's original 2^n-term sum (an independent
//! check, no division).

use super::{check_square, chunk_plan, glynn, par_chunks, reduce, ryser, GraySum};
use crate::error::Result;
use nalgebra::DMatrix;
use num_bigint::{BigInt, BigUint};
use num_traits::{One, Zero};

/// Which exact formula to evaluate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExactMethod {
    /// Glynn's formula in Gray-code order, 2^(n−1) terms.
    #[default]
    Glynn,
    /// Ryser's inclusion–exclusion over all 2^n column subsets, Gray-code order.
    RyserFull,
}

/// Options of [`permanent_exact_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ExactOptions {
    pub method: ExactMethod,
    /// Worker threads; 0 = all available cores, 1 = the calling thread.
    pub threads: usize,
    /// Chunk count as in [`super::PermOptions::chunks`].
    pub chunks: usize,
    /// Use the multi-prime path even when i128 would do (for testing the CRT path).
    pub force_modular: bool,
}

/// Exact permanent with Glynn's formula on `threads` threads (0 = all cores).
pub fn permanent_exact(a: &DMatrix<i64>, threads: usize) -> Result<BigInt> {
    permanent_exact_with(
        a,
        &ExactOptions {
            threads,
            ..Default::default()
        },
    )
}

/// Exact permanent with explicit options.
pub fn permanent_exact_with(a: &DMatrix<i64>, opts: &ExactOptions) -> Result<BigInt> {
    check_square(a, "exact permanent")?;
    let Some((pivots, m)) = reduce(a, 0i64) else {
        return Ok(BigInt::zero());
    };
    let factor: BigInt = pivots.iter().map(|&p| BigInt::from(p)).product();
    let n = m.nrows();
    if n == 0 {
        return Ok(factor);
    }
    let entry = |i: usize, j: usize| m[(i, j)] as i128;
    let gs = match opts.method {
        ExactMethod::Glynn => glynn::setup(n, entry, 0i128),
        ExactMethod::RyserFull => ryser::setup_full(n, entry, 0i128),
    };
    let bits = gs.bits();
    // B = Π_i Σ_j |a_ij|.
    let bound: BigUint = (0..n)
        .map(|i| {
            BigUint::from(
                (0..n)
                    .map(|j| m[(i, j)].unsigned_abs() as u128)
                    .sum::<u128>(),
            )
        })
        .product();
    let limit = BigUint::one() << (127 - bits as usize);
    let perm = if !opts.force_modular && bound < limit {
        perm_i128(&gs, opts)?
    } else {
        perm_modular(&gs, opts, &bound)?
    };
    Ok(factor * perm)
}

/// Exact permanent of the Gaussian-integer matrix `re + i·im`, as (real part, imaginary
/// part). Modulo primes p ≡ 1 (mod 4), Z\[i\]/(p) ≅ F_p × F_p through i ↦ ±s with s² ≡ −1,
/// so each prime costs two Glynn sums mod p, of re + s·im and re − s·im, whose values X, Y
/// give Re ≡ (X + Y)/2 and Im ≡ (X − Y)/(2s); both parts are bounded by
/// Π_i Σ_j (|re_ij| + |im_ij|) and recovered by CRT.
pub fn permanent_exact_gaussian(
    re: &DMatrix<i64>,
    im: &DMatrix<i64>,
    threads: usize,
) -> Result<(BigInt, BigInt)> {
    let n = check_square(re, "exact Gaussian permanent")?;
    if im.shape() != re.shape() {
        return Err(crate::error::Error::Usage(format!(
            "exact Gaussian permanent: real part {}×{}, imaginary part {}×{}",
            re.nrows(),
            re.ncols(),
            im.nrows(),
            im.ncols()
        )));
    }
    if n == 0 {
        return Ok((BigInt::one(), BigInt::zero()));
    }
    let bound: BigUint = (0..n)
        .map(|i| {
            BigUint::from(
                (0..n)
                    .map(|j| re[(i, j)].unsigned_abs() as u128 + im[(i, j)].unsigned_abs() as u128)
                    .sum::<u128>(),
            )
        })
        .product();
    let k = (bound.bits() as usize + 2).div_ceil(61);
    let primes = primes_below_2_62_where(k, |p| p % 4 == 1);
    let opts = ExactOptions {
        threads,
        ..Default::default()
    };
    let (mut res_re, mut res_im) = (Vec::with_capacity(k), Vec::with_capacity(k));
    for &p in &primes {
        let ring = Mont::new(p);
        let s = sqrt_minus_one(p);
        let glynn_mod = |sign: u64| -> Result<u64> {
            // Entries (re ± s·im) mod p, as integers in [0, p).
            let sm = if sign == 0 { s } else { p - s };
            let entry = |i: usize, j: usize| {
                let r = (re[(i, j)] as i128).rem_euclid(p as i128) as u64;
                let t = (im[(i, j)] as i128).rem_euclid(p as i128) as u64;
                ((r as u128 + mulmod(sm, t, p) as u128) % p as u128) as i128
            };
            let gs = glynn::setup(n, entry, 0i128);
            let v0: Vec<u64> = gs.v0.iter().map(|&x| ring.to_mont(x)).collect();
            let cols: Vec<Vec<u64>> = gs
                .cols
                .iter()
                .map(|c| c.iter().map(|&x| ring.to_mont(x)).collect())
                .collect();
            let sum = ring_sum(&ring, &v0, &cols, &opts)?;
            let inv2 = ring.pow(ring.to_mont(2), p - 2);
            Ok(ring.to_plain(ring.mul(sum, ring.pow(inv2, n as u64 - 1))))
        };
        let (x, y) = (glynn_mod(0)?, glynn_mod(1)?);
        let inv2 = modinv(2, p);
        let sum = (x as u128 + y as u128) % p as u128;
        let diff = (x as u128 + p as u128 - y as u128) % p as u128;
        res_re.push(mulmod(sum as u64, inv2, p));
        res_im.push(mulmod(mulmod(diff as u64, inv2, p), modinv(s, p), p));
    }
    Ok((
        crt_symmetric(&res_re, &primes),
        crt_symmetric(&res_im, &primes),
    ))
}

/// A square root of −1 modulo a prime p ≡ 1 (mod 4): z^((p−1)/4) for a non-residue z.
fn sqrt_minus_one(p: u64) -> u64 {
    (2..)
        .find(|&z| powmod(z, (p - 1) / 2, p) == p - 1)
        .map(|z| powmod(z, (p - 1) / 4, p))
        .unwrap_or(0)
}

/// A commutative ring for the Gray-code kernel.
trait Ring: Sync {
    type E: Copy + Send + Sync;
    fn zero(&self) -> Self::E;
    fn add(&self, a: Self::E, b: Self::E) -> Self::E;
    fn sub(&self, a: Self::E, b: Self::E) -> Self::E;
    fn mul(&self, a: Self::E, b: Self::E) -> Self::E;
}

/// Σ over the codes of [start, end) of (−1)^|g| Π_i v_i(g), returned as (even, odd) sums.
fn ring_chunk<R: Ring>(
    ring: &R,
    v0: &[R::E],
    cols: &[Vec<R::E>],
    start: u64,
    end: u64,
) -> (R::E, R::E) {
    let n = v0.len();
    let mut v = v0.to_vec();
    let mut g = start ^ (start >> 1);
    for (b, col) in cols.iter().enumerate() {
        if (g >> b) & 1 == 1 {
            for i in 0..n {
                v[i] = ring.add(v[i], col[i]);
            }
        }
    }
    let mut acc = [ring.zero(), ring.zero()];
    let mut k = start;
    loop {
        let p = v[1..].iter().fold(v[0], |p, &x| ring.mul(p, x));
        let o = (k & 1) as usize;
        acc[o] = ring.add(acc[o], p);
        k += 1;
        if k == end {
            break;
        }
        let b = k.trailing_zeros() as usize;
        g ^= 1 << b;
        let col = &cols[b];
        if (g >> b) & 1 == 1 {
            for i in 0..n {
                v[i] = ring.add(v[i], col[i]);
            }
        } else {
            for i in 0..n {
                v[i] = ring.sub(v[i], col[i]);
            }
        }
    }
    (acc[0], acc[1])
}

fn ring_sum<R: Ring>(
    ring: &R,
    v0: &[R::E],
    cols: &[Vec<R::E>],
    opts: &ExactOptions,
) -> Result<R::E> {
    let bits = cols.len() as u32;
    let (len, count) = chunk_plan(bits, opts.chunks);
    let parts = par_chunks(opts.threads, count, |c| {
        ring_chunk(ring, v0, cols, c * len, (c + 1) * len)
    })?;
    Ok(parts
        .into_iter()
        .fold(ring.zero(), |s, (e, o)| ring.sub(ring.add(s, e), o)))
}

/// i128 with wrapping operations (no overflow is possible under the caller's bound).
struct I128;

impl Ring for I128 {
    type E = i128;
    fn zero(&self) -> i128 {
        0
    }
    #[inline(always)]
    fn add(&self, a: i128, b: i128) -> i128 {
        a.wrapping_add(b)
    }
    #[inline(always)]
    fn sub(&self, a: i128, b: i128) -> i128 {
        a.wrapping_sub(b)
    }
    #[inline(always)]
    fn mul(&self, a: i128, b: i128) -> i128 {
        a.wrapping_mul(b)
    }
}

fn perm_i128(gs: &GraySum<i128>, opts: &ExactOptions) -> Result<BigInt> {
    let s = ring_sum(&I128, &gs.v0, &gs.cols, opts)?;
    let n = gs.n;
    Ok(BigInt::from(match opts.method {
        // S = 2^(n−1)·perm exactly.
        ExactMethod::Glynn => s >> (n - 1),
        ExactMethod::RyserFull => {
            if n % 2 == 0 {
                s
            } else {
                -s
            }
        }
    }))
}

/// Z/pZ for an odd prime p < 2^62 in Montgomery form (R = 2^64).
struct Mont {
    p: u64,
    /// −p^(−1) mod 2^64.
    pneg_inv: u64,
    /// R² mod p.
    r2: u64,
}

impl Mont {
    fn new(p: u64) -> Mont {
        debug_assert!(p % 2 == 1 && p < 1 << 62);
        let mut inv: u64 = p; // correct to 3 bits for odd p; Newton doubles the bits
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(p.wrapping_mul(inv)));
        }
        let r = ((1u128 << 64) % p as u128) as u64;
        let r2 = ((r as u128 * r as u128) % p as u128) as u64;
        Mont {
            p,
            pneg_inv: inv.wrapping_neg(),
            r2,
        }
    }
    #[inline(always)]
    fn redc(&self, t: u128) -> u64 {
        let m = (t as u64).wrapping_mul(self.pneg_inv);
        let u = ((t + m as u128 * self.p as u128) >> 64) as u64;
        if u >= self.p {
            u - self.p
        } else {
            u
        }
    }
    fn to_mont(&self, x: i128) -> u64 {
        let r = x.rem_euclid(self.p as i128) as u64;
        self.redc(r as u128 * self.r2 as u128)
    }
    fn to_plain(&self, x: u64) -> u64 {
        self.redc(x as u128)
    }
    fn pow(&self, mut base: u64, mut e: u64) -> u64 {
        // Montgomery-form exponentiation.
        let mut acc = self.to_mont(1);
        while e > 0 {
            if e & 1 == 1 {
                acc = self.mul(acc, base);
            }
            base = self.mul(base, base);
            e >>= 1;
        }
        acc
    }
}

impl Ring for Mont {
    type E = u64;
    fn zero(&self) -> u64 {
        0
    }
    #[inline(always)]
    fn add(&self, a: u64, b: u64) -> u64 {
        let s = a + b;
        if s >= self.p {
            s - self.p
        } else {
            s
        }
    }
    #[inline(always)]
    fn sub(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            a - b
        } else {
            a + self.p - b
        }
    }
    #[inline(always)]
    fn mul(&self, a: u64, b: u64) -> u64 {
        self.redc(a as u128 * b as u128)
    }
}

fn perm_modular(gs: &GraySum<i128>, opts: &ExactOptions, bound: &BigUint) -> Result<BigInt> {
    // Need Π p > 2·bound (symmetric residues), each p > 2^61.
    let need_bits = bound.bits() as usize + 2;
    let k = need_bits.div_ceil(61);
    let primes = primes_below_2_62(k);
    let n = gs.n;
    let mut residues = Vec::with_capacity(k);
    for &p in &primes {
        let ring = Mont::new(p);
        let v0: Vec<u64> = gs.v0.iter().map(|&x| ring.to_mont(x)).collect();
        let cols: Vec<Vec<u64>> = gs
            .cols
            .iter()
            .map(|c| c.iter().map(|&x| ring.to_mont(x)).collect())
            .collect();
        let s = ring_sum(&ring, &v0, &cols, opts)?;
        let perm = match opts.method {
            ExactMethod::Glynn => {
                // Multiply by (2^(n−1))^(−1) = 2^((n−1)(p−2)) mod p.
                let two = ring.to_mont(2);
                let inv2 = ring.pow(two, p - 2);
                ring.mul(s, ring.pow(inv2, n as u64 - 1))
            }
            ExactMethod::RyserFull => {
                if n % 2 == 0 {
                    s
                } else {
                    ring.sub(0, s)
                }
            }
        };
        residues.push(ring.to_plain(perm));
    }
    Ok(crt_symmetric(&residues, &primes))
}

/// Garner's CRT: the x with x ≡ r_k (mod p_k) and −M/2 < x ≤ M/2, M = Π p_k.
pub(crate) fn crt_symmetric(residues: &[u64], primes: &[u64]) -> BigInt {
    let mut x = BigUint::zero();
    let mut m = BigUint::one();
    for (&r, &p) in residues.iter().zip(primes) {
        let pm = BigUint::from(p);
        let x_mod = (&x % &pm).to_u64_digits().first().copied().unwrap_or(0);
        let m_mod = (&m % &pm).to_u64_digits().first().copied().unwrap_or(0);
        let diff = (r as u128 + p as u128 - x_mod as u128) % p as u128;
        let t = (diff * modinv(m_mod, p) as u128) % p as u128;
        x += &m * BigUint::from(t as u64);
        m *= pm;
    }
    let half = &m >> 1;
    if x > half {
        BigInt::from(x) - BigInt::from(m)
    } else {
        BigInt::from(x)
    }
}

fn mulmod(a: u64, b: u64, p: u64) -> u64 {
    ((a as u128 * b as u128) % p as u128) as u64
}

fn powmod(mut b: u64, mut e: u64, p: u64) -> u64 {
    let mut r = 1 % p;
    b %= p;
    while e > 0 {
        if e & 1 == 1 {
            r = mulmod(r, b, p);
        }
        b = mulmod(b, b, p);
        e >>= 1;
    }
    r
}

fn modinv(a: u64, p: u64) -> u64 {
    powmod(a, p - 2, p)
}

/// Deterministic Miller–Rabin for 64-bit integers (the first 12 prime bases suffice
/// below 3.3·10^24).
pub(crate) fn is_prime_u64(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    for &b in &BASES {
        if n % b == 0 {
            return n == b;
        }
    }
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'bases: for &a in &BASES {
        let mut x = powmod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mulmod(x, x, n);
            if x == n - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

/// The k largest primes below 2^62, in decreasing order.
pub(crate) fn primes_below_2_62(k: usize) -> Vec<u64> {
    primes_below_2_62_where(k, |_| true)
}

/// The k largest primes below 2^62 with property `keep`, in decreasing order.
fn primes_below_2_62_where(k: usize, keep: impl Fn(u64) -> bool) -> Vec<u64> {
    let mut out = Vec::with_capacity(k);
    let mut c = (1u64 << 62) - 1;
    while out.len() < k {
        if keep(c) && is_prime_u64(c) {
            out.push(c);
        }
        c -= 2;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn miller_rabin_matches_trial_division() {
        let trial = |n: u64| n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| n % d != 0);
        for n in 0..5000u64 {
            assert_eq!(is_prime_u64(n), trial(n), "{n}");
        }
        // Known: 2^61 − 1 is a Mersenne prime; 2^62 − 57 is the largest prime below 2^62.
        assert!(is_prime_u64((1 << 61) - 1));
        assert_eq!(primes_below_2_62(1)[0], (1 << 62) - 57);
    }

    #[test]
    fn montgomery_arithmetic_matches_u128() {
        let p = primes_below_2_62(1)[0];
        let r = Mont::new(p);
        let xs: [i128; 5] = [0, 1, -1, 123_456_789_012_345, -(1 << 70)];
        for &a in &xs {
            for &b in &xs {
                let ea = a.rem_euclid(p as i128) as u128;
                let eb = b.rem_euclid(p as i128) as u128;
                let prod = r.to_plain(r.mul(r.to_mont(a), r.to_mont(b)));
                assert_eq!(prod as u128, ea * eb % p as u128);
                let sum = r.to_plain(r.add(r.to_mont(a), r.to_mont(b)));
                assert_eq!(sum as u128, (ea + eb) % p as u128);
                let diff = r.to_plain(r.sub(r.to_mont(a), r.to_mont(b)));
                assert_eq!(diff as u128, (ea + p as u128 - eb) % p as u128);
            }
        }
    }

    #[test]
    fn crt_recovers_negative_values() {
        let primes = primes_below_2_62(3);
        let x: BigInt = -(BigInt::from(3u8).pow(100));
        let res: Vec<u64> = primes
            .iter()
            .map(|&p| {
                let r = &x % BigInt::from(p);
                let r = if r < BigInt::zero() {
                    r + BigInt::from(p)
                } else {
                    r
                };
                r.to_u64_digits().1.first().copied().unwrap_or(0)
            })
            .collect();
        assert_eq!(crt_symmetric(&res, &primes), x);
    }
}
