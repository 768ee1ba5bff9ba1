//! Element types of the row-reduction engine and the [`Field`] trait the one echelonize
//! core is generic over: Z/p in `u32` words (p < 2^31), Z/p in `u64` words (p < 2^63),
//! `f64` and complex `f64`.
//!
//! Besides scalar arithmetic each field provides the one hot kernel of the blocked
//! Gauss–Jordan core, [`Field::row_update`]: `t ← t − Σ_i m_i · P_i` for a panel of pivot
//! rows `P_i`. Z/p in `u32` words implements it with delayed modular reduction (see
//! [`Zp32`]), Z/p in `u64` words with Shoup's precomputed-quotient multiplication.

use num_complex::Complex64;

/// A field with a runtime parameter (the prime) and the panel row-update kernel.
pub trait Field: Clone + Send + Sync {
    type Elem: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static;
    /// Per-thread scratch of the row-update kernel.
    type Scratch: Default + Send;
    /// Exact arithmetic (Z/p): the first non-zero candidate is taken as pivot and zero
    /// means zero. Inexact (floats): partial pivoting and a zero tolerance.
    const EXACT: bool;

    fn zero(&self) -> Self::Elem;
    fn one(&self) -> Self::Elem;
    fn add(&self, a: Self::Elem, b: Self::Elem) -> Self::Elem;
    fn sub(&self, a: Self::Elem, b: Self::Elem) -> Self::Elem;
    fn mul(&self, a: Self::Elem, b: Self::Elem) -> Self::Elem;
    fn neg(&self, a: Self::Elem) -> Self::Elem {
        self.sub(self.zero(), a)
    }
    /// Inverse of a non-zero element (callers never pass zero).
    fn inv(&self, a: Self::Elem) -> Self::Elem;
    fn is_zero(&self, a: Self::Elem) -> bool;
    /// Pivot-choice magnitude: |a| for floats, 0 or 1 for Z/p.
    fn magnitude(&self, a: Self::Elem) -> f64;
    /// The image of an integer.
    fn from_i64(&self, v: i64) -> Self::Elem;
    /// The real number `v` as an element (floats only; Z/p rounds to the nearest integer,
    /// and the core never calls it for exact fields).
    fn from_f64(&self, v: f64) -> Self::Elem {
        self.from_i64(v.round() as i64)
    }

    /// `target[j] ← target[j] − Σ_i mults[i] · panel[i·stride + j]` for
    /// `j < target.len() ≤ stride`.
    fn row_update(
        &self,
        target: &mut [Self::Elem],
        mults: &[Self::Elem],
        panel: &[Self::Elem],
        stride: usize,
        scratch: &mut Self::Scratch,
    ) {
        let _ = scratch;
        let w = target.len();
        for (i, &m) in mults.iter().enumerate() {
            if self.is_zero(m) {
                continue;
            }
            let row = &panel[i * stride..i * stride + w];
            for (t, &x) in target.iter_mut().zip(row) {
                *t = self.sub(*t, self.mul(m, x));
            }
        }
    }
}

/// Extended Euclid inverse of `a` modulo `p` (gcd(a, p) = 1).
fn inv_mod_u64(a: u64, p: u64) -> u64 {
    let (mut r0, mut r1) = (p as i128, a as i128);
    let (mut s0, mut s1) = (0i128, 1i128);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (s0, s1) = (s1, s0 - q * s1);
    }
    debug_assert_eq!(r0, 1, "element not invertible");
    s0.rem_euclid(p as i128) as u64
}

/// Deterministic Miller–Rabin for 64-bit integers (bases: the first 12 primes).
pub fn is_prime_u64(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    for &b in &BASES {
        if n % b == 0 {
            return n == b;
        }
    }
    let mulm = |a: u64, b: u64| ((a as u128 * b as u128) % n as u128) as u64;
    let powm = |mut a: u64, mut e: u64| {
        let mut r = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                r = mulm(r, a);
            }
            a = mulm(a, a);
            e >>= 1;
        }
        r
    };
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'base: for &a in &BASES {
        let mut x = powm(a, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mulm(x, x);
            if x == n - 1 {
                continue 'base;
            }
        }
        return false;
    }
    true
}

// ---------------------------------------------------------------------------------------
// Z/p in u32 words
// ---------------------------------------------------------------------------------------

/// Z/p for a prime p < 2^31, elements in [0, p) as `u32`.
///
/// Row update with delayed reduction: a row accumulates `Σ f_i · P_i[j]` in `u64` words
/// (each product < p²). The accumulator is kept below `M = t·p²`, `t = ⌊2^63 / p²⌋ ≥ 2`,
/// by `a ← min(a, a − M)` (wrapping) after every `t` products, so it never exceeds
/// `2M ≤ 2^64`; also `t ≤ 2^32/p` so that `M ≤ p·2^32`. (p = 2^31 − 1: t = 2;
/// p = 998244353: t = 4; small p: t = 64 — the "keep below 8p², reduce every 8
/// updates" rule of the seed, with the bound derived from p.) The accumulator is brought
/// to [0, p) once per panel by Montgomery's REDC with R = 2^32 (input < p·R gives output
/// < 2p; `M + p·2^32 ≤ 2^64` keeps the sum exact); the multipliers are pre-scaled by
/// R mod p to cancel REDC's factor R^{-1}. All loops are plain slice loops that LLVM
/// vectorizes (32×32→64 multiplies); AVX2 / AVX-512 variants are picked at run time.
#[derive(Clone, Debug)]
pub struct Zp32 {
    p: u32,
    /// M = t·p², the pseudo-normalization bound.
    big_m: u64,
    /// t = M / p²: products between two pseudo-normalizations.
    t: usize,
    /// −p^{-1} mod 2^32 (REDC).
    pneg_inv: u32,
    /// 2^32 mod p.
    r_mod: u64,
}

impl Zp32 {
    /// Z/p; `p` must be a prime below 2^31.
    pub fn new(p: u32) -> Result<Self, String> {
        if p >= 1 << 31 {
            return Err(format!(
                "prime {p} too large for 32-bit words (need p < 2^31)"
            ));
        }
        if !is_prime_u64(p as u64) {
            return Err(format!("{p} is not a prime"));
        }
        let p2 = p as u64 * p as u64;
        // t·p² ≤ 2^63 (so 2M fits in u64) and t·p ≤ 2^32 (so M ≤ p·2^32, REDC's input bound).
        let t = ((1u64 << 63) / p2)
            .min((1u64 << 32) / p as u64)
            .clamp(1, 64);
        // p^{-1} mod 2^32 by Newton iteration (p odd); p = 2 is handled without REDC.
        let mut inv: u32 = 1;
        if p % 2 == 1 {
            for _ in 0..5 {
                inv = inv.wrapping_mul(2u32.wrapping_sub(p.wrapping_mul(inv)));
            }
        }
        Ok(Zp32 {
            p,
            big_m: t * p2,
            t: t as usize,
            pneg_inv: inv.wrapping_neg(),
            r_mod: (1u64 << 32) % p as u64,
        })
    }
    pub fn prime(&self) -> u32 {
        self.p
    }
}

/// One fused pass over the accumulator: `acc[j] ← min(v, v − M)`,
/// `v = acc[j] + Σ_k f_k · rows_k[j]` for `G ≤ t` products (so `v < 2M`).
#[inline(always)]
fn acc_pass<const G: usize>(acc: &mut [u64], f: [u64; G], rows: [&[u32]; G], m: u64) {
    let n = acc.len();
    let rows: [&[u32]; G] = rows.map(|r| &r[..n]);
    for j in 0..n {
        let mut v = acc[j];
        for k in 0..G {
            v += f[k] * rows[k][j] as u64;
        }
        acc[j] = v.min(v.wrapping_sub(m));
    }
}

/// `target[j] ← (target[j] + REDC(acc[j])) mod p`.
#[inline(always)]
fn acc_finish(target: &mut [u32], acc: &[u64], p: u32, pneg_inv: u32) {
    let p64 = p as u64;
    let n = target.len();
    let acc = &acc[..n];
    for j in 0..n {
        let a = acc[j];
        let q = (a as u32).wrapping_mul(pneg_inv) as u64;
        let u = (a + q * p64) >> 32; // < 2p
        let v = u + target[j] as u64; // < 3p
        let v = v.min(v.wrapping_sub(p64));
        let v = v.min(v.wrapping_sub(p64));
        target[j] = v as u32;
    }
}

#[inline(always)]
fn zp32_update_body(
    f: &Zp32,
    target: &mut [u32],
    mults: &[u32],
    panel: &[u32],
    stride: usize,
    acc: &mut Vec<u64>,
) {
    let w = target.len();
    acc.clear();
    acc.resize(w, 0);
    // Scaled negated multipliers (p − m)·R mod p, so that REDC(Σ) ≡ −Σ m_i P_i.
    let p = f.p as u64;
    let row = |i: usize| &panel[i * stride..i * stride + w];
    let mut nz = mults
        .iter()
        .enumerate()
        .filter(|(_, &m)| m != 0)
        .map(|(i, &m)| (((p - m as u64) * f.r_mod) % p, i));
    // Products per fused pass: G ≤ t keeps the pass below 2M before its min.
    let g = f.t.min(4);
    loop {
        let Some((s0, i0)) = nz.next() else { break };
        if g < 2 {
            acc_pass::<1>(acc, [s0], [row(i0)], f.big_m);
            continue;
        }
        let Some((s1, i1)) = nz.next() else {
            acc_pass::<1>(acc, [s0], [row(i0)], f.big_m);
            break;
        };
        if g < 4 {
            acc_pass::<2>(acc, [s0, s1], [row(i0), row(i1)], f.big_m);
            continue;
        }
        let Some((s2, i2)) = nz.next() else {
            acc_pass::<2>(acc, [s0, s1], [row(i0), row(i1)], f.big_m);
            break;
        };
        let Some((s3, i3)) = nz.next() else {
            acc_pass::<3>(acc, [s0, s1, s2], [row(i0), row(i1), row(i2)], f.big_m);
            break;
        };
        acc_pass::<4>(
            acc,
            [s0, s1, s2, s3],
            [row(i0), row(i1), row(i2), row(i3)],
            f.big_m,
        );
    }
    // acc < M ≤ p·2^32 here: REDC's input bound.
    acc_finish(target, acc, f.p, f.pneg_inv);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
fn zp32_update_avx512(
    f: &Zp32,
    target: &mut [u32],
    mults: &[u32],
    panel: &[u32],
    stride: usize,
    acc: &mut Vec<u64>,
) {
    zp32_update_body(f, target, mults, panel, stride, acc)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn zp32_update_avx2(
    f: &Zp32,
    target: &mut [u32],
    mults: &[u32],
    panel: &[u32],
    stride: usize,
    acc: &mut Vec<u64>,
) {
    zp32_update_body(f, target, mults, panel, stride, acc)
}

/// Which vector instruction set the Z/p kernels run with (detected once).
pub fn simd_level() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512bw")
        {
            return "avx512";
        }
        if std::is_x86_feature_detected!("avx2") {
            return "avx2";
        }
    }
    "baseline"
}

impl Field for Zp32 {
    type Elem = u32;
    type Scratch = Vec<u64>;
    const EXACT: bool = true;

    fn zero(&self) -> u32 {
        0
    }
    fn one(&self) -> u32 {
        1
    }
    #[inline]
    fn add(&self, a: u32, b: u32) -> u32 {
        let s = a + b; // < 2^32 since p < 2^31
        if s >= self.p {
            s - self.p
        } else {
            s
        }
    }
    #[inline]
    fn sub(&self, a: u32, b: u32) -> u32 {
        if a >= b {
            a - b
        } else {
            a + self.p - b
        }
    }
    #[inline]
    fn mul(&self, a: u32, b: u32) -> u32 {
        ((a as u64 * b as u64) % self.p as u64) as u32
    }
    fn inv(&self, a: u32) -> u32 {
        inv_mod_u64(a as u64, self.p as u64) as u32
    }
    #[inline]
    fn is_zero(&self, a: u32) -> bool {
        a == 0
    }
    fn magnitude(&self, a: u32) -> f64 {
        (a != 0) as u8 as f64
    }
    fn from_i64(&self, v: i64) -> u32 {
        v.rem_euclid(self.p as i64) as u32
    }

    fn row_update(
        &self,
        target: &mut [u32],
        mults: &[u32],
        panel: &[u32],
        stride: usize,
        acc: &mut Vec<u64>,
    ) {
        if self.p == 2 {
            // REDC needs an odd modulus; over GF(2) the update is an XOR.
            let w = target.len();
            for (i, &m) in mults.iter().enumerate() {
                if m != 0 {
                    for (t, &x) in target.iter_mut().zip(&panel[i * stride..i * stride + w]) {
                        *t ^= x;
                    }
                }
            }
            return;
        }
        #[cfg(target_arch = "x86_64")]
        {
            match simd_level() {
                // SAFETY: the required target features were detected at run time.
                "avx512" => {
                    return unsafe { zp32_update_avx512(self, target, mults, panel, stride, acc) }
                }
                "avx2" => {
                    return unsafe { zp32_update_avx2(self, target, mults, panel, stride, acc) }
                }
                _ => {}
            }
        }
        zp32_update_body(self, target, mults, panel, stride, acc)
    }
}

// ---------------------------------------------------------------------------------------
// Z/p in u64 words
// ---------------------------------------------------------------------------------------

/// Z/p for a prime p < 2^63, elements in [0, p) as `u64`. Scalar products through `u128`;
/// the row update multiplies by a fixed multiplier with Shoup's method
/// (`w' = ⌊w·2^64/p⌋`, `w·x mod p = w·x − ⌊w'·x/2^64⌋·p − {0, p}`).
#[derive(Clone, Debug)]
pub struct Zp64 {
    p: u64,
}

impl Zp64 {
    /// Z/p; `p` must be a prime below 2^63.
    pub fn new(p: u64) -> Result<Self, String> {
        if p >= 1 << 63 {
            return Err(format!(
                "prime {p} too large for 64-bit words (need p < 2^63)"
            ));
        }
        if !is_prime_u64(p) {
            return Err(format!("{p} is not a prime"));
        }
        Ok(Zp64 { p })
    }
    pub fn prime(&self) -> u64 {
        self.p
    }
}

impl Field for Zp64 {
    type Elem = u64;
    type Scratch = ();
    const EXACT: bool = true;

    fn zero(&self) -> u64 {
        0
    }
    fn one(&self) -> u64 {
        1
    }
    #[inline]
    fn add(&self, a: u64, b: u64) -> u64 {
        let s = a + b; // < 2^64 since p < 2^63
        if s >= self.p {
            s - self.p
        } else {
            s
        }
    }
    #[inline]
    fn sub(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            a - b
        } else {
            a + self.p - b
        }
    }
    #[inline]
    fn mul(&self, a: u64, b: u64) -> u64 {
        ((a as u128 * b as u128) % self.p as u128) as u64
    }
    fn inv(&self, a: u64) -> u64 {
        inv_mod_u64(a, self.p)
    }
    #[inline]
    fn is_zero(&self, a: u64) -> bool {
        a == 0
    }
    fn magnitude(&self, a: u64) -> f64 {
        (a != 0) as u8 as f64
    }
    fn from_i64(&self, v: i64) -> u64 {
        (v as i128).rem_euclid(self.p as i128) as u64
    }

    fn row_update(
        &self,
        target: &mut [u64],
        mults: &[u64],
        panel: &[u64],
        stride: usize,
        _: &mut (),
    ) {
        let p = self.p;
        let w = target.len();
        for (i, &m) in mults.iter().enumerate() {
            if m == 0 {
                continue;
            }
            // t ← t − m·x = t + (p − m)·x.
            let c = p - m;
            let c_sh = (((c as u128) << 64) / p as u128) as u64;
            let row = &panel[i * stride..i * stride + w];
            for (t, &x) in target.iter_mut().zip(row) {
                let q = ((c_sh as u128 * x as u128) >> 64) as u64;
                let r = c.wrapping_mul(x).wrapping_sub(q.wrapping_mul(p)); // < 2p
                let r = if r >= p { r - p } else { r };
                let s = *t + r;
                *t = if s >= p { s - p } else { s };
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Floats
// ---------------------------------------------------------------------------------------

/// Real numbers in `f64` (partial pivoting; zero tolerance handled by the core).
#[derive(Clone, Debug, Default)]
pub struct F64;

impl Field for F64 {
    type Elem = f64;
    type Scratch = ();
    const EXACT: bool = false;
    fn zero(&self) -> f64 {
        0.0
    }
    fn one(&self) -> f64 {
        1.0
    }
    fn add(&self, a: f64, b: f64) -> f64 {
        a + b
    }
    fn sub(&self, a: f64, b: f64) -> f64 {
        a - b
    }
    fn mul(&self, a: f64, b: f64) -> f64 {
        a * b
    }
    fn inv(&self, a: f64) -> f64 {
        1.0 / a
    }
    fn is_zero(&self, a: f64) -> bool {
        a == 0.0
    }
    fn magnitude(&self, a: f64) -> f64 {
        a.abs()
    }
    fn from_i64(&self, v: i64) -> f64 {
        v as f64
    }
    fn from_f64(&self, v: f64) -> f64 {
        v
    }
    fn row_update(
        &self,
        target: &mut [f64],
        mults: &[f64],
        panel: &[f64],
        stride: usize,
        _: &mut (),
    ) {
        let w = target.len();
        for (i, &m) in mults.iter().enumerate() {
            if m == 0.0 {
                continue;
            }
            for (t, &x) in target.iter_mut().zip(&panel[i * stride..i * stride + w]) {
                *t -= m * x;
            }
        }
    }
}

/// Complex numbers in two `f64` (partial pivoting on |z|; zero tolerance in the core).
#[derive(Clone, Debug, Default)]
pub struct C64;

impl Field for C64 {
    type Elem = Complex64;
    type Scratch = ();
    const EXACT: bool = false;
    fn zero(&self) -> Complex64 {
        Complex64::new(0.0, 0.0)
    }
    fn one(&self) -> Complex64 {
        Complex64::new(1.0, 0.0)
    }
    fn add(&self, a: Complex64, b: Complex64) -> Complex64 {
        a + b
    }
    fn sub(&self, a: Complex64, b: Complex64) -> Complex64 {
        a - b
    }
    fn mul(&self, a: Complex64, b: Complex64) -> Complex64 {
        a * b
    }
    fn inv(&self, a: Complex64) -> Complex64 {
        a.inv()
    }
    fn is_zero(&self, a: Complex64) -> bool {
        a.re == 0.0 && a.im == 0.0
    }
    fn magnitude(&self, a: Complex64) -> f64 {
        a.norm()
    }
    fn from_i64(&self, v: i64) -> Complex64 {
        Complex64::new(v as f64, 0.0)
    }
    fn from_f64(&self, v: f64) -> Complex64 {
        Complex64::new(v, 0.0)
    }
    fn row_update(
        &self,
        target: &mut [Complex64],
        mults: &[Complex64],
        panel: &[Complex64],
        stride: usize,
        _: &mut (),
    ) {
        let w = target.len();
        for (i, &m) in mults.iter().enumerate() {
            if self.is_zero(m) {
                continue;
            }
            for (t, &x) in target.iter_mut().zip(&panel[i * stride..i * stride + w]) {
                *t -= m * x;
            }
        }
    }
}
