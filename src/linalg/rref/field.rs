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
    #[allow(clippy::wrong_self_convention)]
    fn from_i64(&self, v: i64) -> Self::Elem;
    /// The real number `v` as an element (floats only; Z/p rounds to the nearest integer,
    /// and the core never calls it for exact fields).
    #[allow(clippy::wrong_self_convention)]
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
    /// Two target rows at once (`t_r ← t_r − Σ_i mults_r[i] · panel_i`, r = 0, 1), so
    /// that a kernel can load each panel row once for both. Default: two single updates.
    #[allow(clippy::too_many_arguments)]
    fn row_update2(
        &self,
        t0: &mut [Self::Elem],
        m0: &[Self::Elem],
        t1: &mut [Self::Elem],
        m1: &[Self::Elem],
        panel: &[Self::Elem],
        stride: usize,
        scratch: &mut Self::Scratch,
    ) {
        self.row_update(t0, m0, panel, stride, scratch);
        self.row_update(t1, m1, panel, stride, scratch);
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

/// Two accumulators sharing the panel loads.
#[inline(always)]
fn acc_pass2<const G: usize>(
    a0: &mut [u64],
    a1: &mut [u64],
    f0: [u64; G],
    f1: [u64; G],
    rows: [&[u32]; G],
    m: u64,
) {
    let n = a0.len();
    let a1 = &mut a1[..n];
    let rows: [&[u32]; G] = rows.map(|r| &r[..n]);
    for j in 0..n {
        let mut v0 = a0[j];
        let mut v1 = a1[j];
        for k in 0..G {
            let x = rows[k][j] as u64;
            v0 += f0[k] * x;
            v1 += f1[k] * x;
        }
        a0[j] = v0.min(v0.wrapping_sub(m));
        a1[j] = v1.min(v1.wrapping_sub(m));
    }
}

/// Scaled negated multiplier (p − m)·R mod p, so that REDC(Σ) ≡ −Σ m_i P_i.
#[inline(always)]
fn zp32_scaled(f: &Zp32, m: u32) -> u64 {
    let p = f.p as u64;
    if m == 0 {
        0
    } else {
        ((p - m as u64) * f.r_mod) % p
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
    let row = |i: usize| &panel[i * stride..i * stride + w];
    let nz: Vec<(u64, usize)> = mults
        .iter()
        .enumerate()
        .filter(|(_, &m)| m != 0)
        .map(|(i, &m)| (zp32_scaled(f, m), i))
        .collect();
    // Products per fused pass: G ≤ t keeps the pass below 2M before its min.
    let g = f.t.min(4);
    for c in nz.chunks(g) {
        match c.len() {
            1 => acc_pass::<1>(acc, [c[0].0], [row(c[0].1)], f.big_m),
            2 => acc_pass::<2>(acc, [c[0].0, c[1].0], [row(c[0].1), row(c[1].1)], f.big_m),
            3 => acc_pass::<3>(
                acc,
                std::array::from_fn(|k| c[k].0),
                std::array::from_fn(|k| row(c[k].1)),
                f.big_m,
            ),
            _ => acc_pass::<4>(
                acc,
                std::array::from_fn(|k| c[k].0),
                std::array::from_fn(|k| row(c[k].1)),
                f.big_m,
            ),
        }
    }
    // acc < M ≤ p·2^32 here: REDC's input bound.
    acc_finish(target, acc, f.p, f.pneg_inv);
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn zp32_update2_body(
    f: &Zp32,
    t0: &mut [u32],
    m0: &[u32],
    t1: &mut [u32],
    m1: &[u32],
    panel: &[u32],
    stride: usize,
    acc: &mut Vec<u64>,
) {
    let w = t0.len();
    acc.clear();
    acc.resize(2 * w, 0);
    let (a0, a1) = acc.split_at_mut(w);
    let row = |i: usize| &panel[i * stride..i * stride + w];
    let nz: Vec<(u64, u64, usize)> = (0..m0.len())
        .filter(|&i| m0[i] != 0 || m1[i] != 0)
        .map(|i| (zp32_scaled(f, m0[i]), zp32_scaled(f, m1[i]), i))
        .collect();
    let g = f.t.min(4);
    for c in nz.chunks(g) {
        let bm = f.big_m;
        match c.len() {
            1 => acc_pass2::<1>(a0, a1, [c[0].0], [c[0].1], [row(c[0].2)], bm),
            2 => acc_pass2::<2>(
                a0,
                a1,
                [c[0].0, c[1].0],
                [c[0].1, c[1].1],
                [row(c[0].2), row(c[1].2)],
                bm,
            ),
            3 => acc_pass2::<3>(
                a0,
                a1,
                std::array::from_fn(|k| c[k].0),
                std::array::from_fn(|k| c[k].1),
                std::array::from_fn(|k| row(c[k].2)),
                bm,
            ),
            _ => acc_pass2::<4>(
                a0,
                a1,
                std::array::from_fn(|k| c[k].0),
                std::array::from_fn(|k| c[k].1),
                std::array::from_fn(|k| row(c[k].2)),
                bm,
            ),
        }
    }
    acc_finish(t0, a0, f.p, f.pneg_inv);
    acc_finish(t1, a1, f.p, f.pneg_inv);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
#[allow(clippy::too_many_arguments)]
fn zp32_update2_avx512(
    f: &Zp32,
    t0: &mut [u32],
    m0: &[u32],
    t1: &mut [u32],
    m1: &[u32],
    panel: &[u32],
    stride: usize,
    acc: &mut Vec<u64>,
) {
    zp32_update2_body(f, t0, m0, t1, m1, panel, stride, acc)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
fn zp32_update2_avx2(
    f: &Zp32,
    t0: &mut [u32],
    m0: &[u32],
    t1: &mut [u32],
    m1: &[u32],
    panel: &[u32],
    stride: usize,
    acc: &mut Vec<u64>,
) {
    zp32_update2_body(f, t0, m0, t1, m1, panel, stride, acc)
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

    fn row_update2(
        &self,
        t0: &mut [u32],
        m0: &[u32],
        t1: &mut [u32],
        m1: &[u32],
        panel: &[u32],
        stride: usize,
        acc: &mut Vec<u64>,
    ) {
        if self.p == 2 {
            self.row_update(t0, m0, panel, stride, acc);
            self.row_update(t1, m1, panel, stride, acc);
            return;
        }
        #[cfg(target_arch = "x86_64")]
        {
            match simd_level() {
                // SAFETY: the required target features were detected at run time.
                "avx512" => {
                    return unsafe { zp32_update2_avx512(self, t0, m0, t1, m1, panel, stride, acc) }
                }
                "avx2" => {
                    return unsafe { zp32_update2_avx2(self, t0, m0, t1, m1, panel, stride, acc) }
                }
                _ => {}
            }
        }
        zp32_update2_body(self, t0, m0, t1, m1, panel, stride, acc)
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
                // Branch-free conditional subtractions: min(v, v − p) for v < 2p.
                let r = c.wrapping_mul(x).wrapping_sub(q.wrapping_mul(p)); // < 2p
                let r = r.min(r.wrapping_sub(p));
                let s = *t + r;
                *t = s.min(s.wrapping_sub(p));
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
        #[cfg(target_arch = "x86_64")]
        {
            match simd_level() {
                // SAFETY: the required target features were detected at run time.
                "avx512" => return unsafe { f64_update_avx512(target, mults, panel, stride) },
                "avx2" if std::is_x86_feature_detected!("fma") => {
                    return unsafe { f64_update_avx2(target, mults, panel, stride) }
                }
                _ => {}
            }
        }
        f64_update_body(target, mults, panel, stride)
    }
}

/// `t[j] −= Σ_k m_k · P_k[j]` in passes of up to 4 panel rows (plain multiply and
/// subtract, no contraction, so every SIMD level gives the same bits).
#[inline(always)]
fn f64_update_body(target: &mut [f64], mults: &[f64], panel: &[f64], stride: usize) {
    let w = target.len();
    let row = |i: usize| &panel[i * stride..i * stride + w];
    let nz: Vec<(f64, usize)> = mults
        .iter()
        .enumerate()
        .filter(|(_, &m)| m != 0.0)
        .map(|(i, &m)| (m, i))
        .collect();
    for c in nz.chunks(4) {
        match c.len() {
            1 => f64_pass::<1>(target, [c[0].0], [row(c[0].1)]),
            2 => f64_pass::<2>(target, [c[0].0, c[1].0], [row(c[0].1), row(c[1].1)]),
            3 => f64_pass::<3>(
                target,
                std::array::from_fn(|k| c[k].0),
                std::array::from_fn(|k| row(c[k].1)),
            ),
            _ => f64_pass::<4>(
                target,
                std::array::from_fn(|k| c[k].0),
                std::array::from_fn(|k| row(c[k].1)),
            ),
        }
    }
}

#[inline(always)]
fn f64_pass<const G: usize>(t: &mut [f64], m: [f64; G], rows: [&[f64]; G]) {
    let n = t.len();
    let rows: [&[f64]; G] = rows.map(|r| &r[..n]);
    for j in 0..n {
        let mut v = t[j];
        for k in 0..G {
            v -= m[k] * rows[k][j];
        }
        t[j] = v;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
fn f64_update_avx512(target: &mut [f64], mults: &[f64], panel: &[f64], stride: usize) {
    f64_update_body(target, mults, panel, stride)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn f64_update_avx2(target: &mut [f64], mults: &[f64], panel: &[f64], stride: usize) {
    f64_update_body(target, mults, panel, stride)
}

/// `|re + i·im|` as `m·√(1 + (s/m)²)` with `m = max(|re|, |im|)`, `s = min(..)`: no
/// overflow, within a few ulps of `hypot`, and made of correctly rounded IEEE operations
/// in a fixed order, so that the GPU kernels (`kernels/rref_gen.cu`) compute the identical
/// value and break pivot ties the same way.
pub fn cabs(re: f64, im: f64) -> f64 {
    let (a, b) = (re.abs(), im.abs());
    let (m, s) = if a >= b { (a, b) } else { (b, a) };
    if m.is_nan() || m == 0.0 {
        return m + s; // 0, or NaN
    }
    if m == f64::INFINITY {
        return m;
    }
    let r = s / m;
    m * (1.0 + r * r).sqrt()
}

/// Complex numbers in two `f64` (partial pivoting on |z| = [`cabs`]; zero tolerance in the
/// core).
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
        cabs(a.re, a.im)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The delayed-reduction parameters follow the documented bound.
    #[test]
    fn zp32_bounds() {
        for (p, t) in [
            (2147483647u32, 2usize),
            (998244353, 4),
            (65521, 64),
            (3, 64),
        ] {
            let f = Zp32::new(p).unwrap();
            assert_eq!(f.t, t, "p = {p}");
            let p2 = p as u128 * p as u128;
            assert!(2 * f.big_m as u128 <= 1u128 << 64);
            assert!(f.big_m as u128 <= (p as u128) << 32);
            assert_eq!(f.big_m as u128, t as u128 * p2);
            assert_eq!(
                (p as u64).wrapping_mul(f.pneg_inv as u64) as u32,
                u32::MAX,
                "p·(−p⁻¹) ≡ −1"
            );
        }
    }

    /// Worst-case residues (all p − 1, many panel rows) through the vector kernels
    /// against scalar arithmetic, single and paired.
    #[test]
    fn zp32_kernel_worst_case() {
        for p in [2147483647u32, 998244353, 65521, 3, 2] {
            let f = Zp32::new(p).unwrap();
            for k in [1usize, 2, 3, 4, 5, 7, 64] {
                let w = 37;
                let panel = vec![p - 1; k * w];
                let mults = vec![p - 1; k];
                let m1: Vec<u32> = (0..k as u32)
                    .map(|i| if i % 3 == 0 { 0 } else { p - 1 - i % p })
                    .collect();
                let mut t0 = vec![p - 1; w];
                let mut t1: Vec<u32> = (0..w as u32).map(|j| j % p).collect();
                let want = |t: &[u32], m: &[u32]| -> Vec<u32> {
                    t.iter()
                        .enumerate()
                        .map(|(j, &x)| {
                            let s: u128 = (0..k)
                                .map(|i| m[i] as u128 * panel[i * w + j] as u128)
                                .sum();
                            ((x as u128 + (p as u128 - s % p as u128)) % p as u128) as u32
                        })
                        .collect()
                };
                let (w0, w1) = (want(&t0, &mults), want(&t1, &m1));
                let mut s = Vec::new();
                let mut single = t0.clone();
                f.row_update(&mut single, &mults, &panel, w, &mut s);
                assert_eq!(single, w0, "single p = {p} k = {k}");
                f.row_update2(&mut t0, &mults, &mut t1, &m1, &panel, w, &mut s);
                assert_eq!((t0, t1), (w0, w1), "pair p = {p} k = {k}");
            }
        }
    }
}
