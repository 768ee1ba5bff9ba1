//! `e^{x − s}·(cos y, sin y)` over slices, written so that LLVM vectorises the loop (the
//! release build targets x86-64-v3: 4 doubles per AVX2 register, FMA): no calls, no
//! branches, integers taken from the bits of `v + 1.5·2^52`. The evaluator's terms
//! `exp(Ẑ Â)` spent a third of a solve in scalar `exp` and `sin_cos` (perf, cyclic-7).
//!
//! - `exp`: x = k·ln 2 + r with |r| ≤ ln 2 / 2 (ln 2 in two parts, Cody–Waite), e^r by its
//!   Taylor polynomial to r^13 (remainder < 5e-18), 2^k put into the exponent bits. The
//!   argument is clamped to [−708, 709]: below, e^x < 4e-308 is returned as e^{−708} (the
//!   terms are relative to the block's largest, which is 1), NaN stays NaN.
//! - `sin`, `cos`: y = k·π/2 + r with |r| ≤ π/4 (π/2 in three parts, exact products for
//!   |k| < 2^20), Taylor polynomials to r^17 / r^18 (remainders < 1e-19), quadrant k mod 4
//!   by swapping and sign bits. Arguments beyond [`SINCOS_LIMIT`] (and NaN, ±∞) go
//!   through `f64::sin_cos` in a second pass.
//!
//! Accuracy: within 2 ulp of `f64::exp` / `f64::sin_cos` on the reduced ranges (test
//! below; the polynomials' remainders are far below the rounding).

use num_complex::Complex64 as C64;

/// 1.5·2^52: for |v| < 2^51, `(v + MAGIC) − MAGIC` is v rounded to the nearest integer and
/// the low bits of `(v + MAGIC).to_bits()` hold that integer.
const MAGIC: f64 = 6_755_399_441_055_744.0;
const INV_LN2: f64 = std::f64::consts::LOG2_E;
/// ln 2 = LN2_HI + LN2_LO, LN2_HI with 32 significant bits (k·LN2_HI exact for |k| < 2^21).
const LN2_HI: f64 = 0.693_147_180_601_954_5;
const LN2_LO: f64 = -4.200_915_072_681_084_6e-11;
const TWO_OVER_PI: f64 = std::f64::consts::FRAC_2_PI;
/// π/2 = PIO2_1 + PIO2_2 + PIO2_3, the first two with 33 significant bits.
const PIO2_1: f64 = 1.570_796_326_734_125_6;
const PIO2_2: f64 = 6.077_100_506_303_966e-11;
const PIO2_3: f64 = 2.022_266_248_795_950_6e-21;
/// Largest |y| reduced in the vector loop (k < 2^19 quadrants: every product k·PIO2_i
/// above is exact); larger arguments take `f64::sin_cos`.
pub const SINCOS_LIMIT: f64 = 524_288.0;

/// 1/k! for k = 0..=18.
const INV_FACT: [f64; 19] = {
    let mut t = [1.0; 19];
    let mut k = 1;
    while k < 19 {
        t[k] = t[k - 1] / k as f64;
        k += 1;
    }
    t
};

/// `t[i] = (−1)^(i+1) / (2i + first)!`: the Taylor coefficients of (sin r − r)/r³
/// (`first` = 3) and of (cos r − 1)/r² (`first` = 2) in u = r².
const fn alternating_inverse_factorials<const N: usize>(first: usize) -> [f64; N] {
    let mut t = [0.0; N];
    let mut i = 0;
    while i < N {
        let f = INV_FACT[2 * i + first];
        t[i] = if i % 2 == 0 { -f } else { f };
        i += 1;
    }
    t
}
const SIN_C: [f64; 8] = alternating_inverse_factorials::<8>(3);
const COS_C: [f64; 9] = alternating_inverse_factorials::<9>(2);

/// e^x for x in [−708, 709] (NaN in, NaN out), branch free.
#[inline(always)]
fn exp_reduced(x: f64) -> f64 {
    let x = x.clamp(-708.0, 709.0);
    let t = x * INV_LN2 + MAGIC;
    let kf = t - MAGIC;
    let k = (t.to_bits() as i64).wrapping_sub(MAGIC.to_bits() as i64);
    let r = (x - kf * LN2_HI) - kf * LN2_LO;
    let mut p = INV_FACT[13];
    for j in (0..13).rev() {
        p = p.mul_add(r, INV_FACT[j]);
    }
    let scale = f64::from_bits((k.wrapping_add(1023) as u64) << 52);
    p * scale
}

/// (sin y, cos y) for |y| ≤ [`SINCOS_LIMIT`], branch free.
#[inline(always)]
fn sin_cos_reduced(y: f64) -> (f64, f64) {
    let t = y * TWO_OVER_PI + MAGIC;
    let kf = t - MAGIC;
    let q = t.to_bits();
    let r = ((y - kf * PIO2_1) - kf * PIO2_2) - kf * PIO2_3;
    let u = r * r;
    // sin r = r + r³·Σ_i SIN_C[i]·u^i, cos r = 1 + u·Σ_i COS_C[i]·u^i (Horner).
    let mut ps = SIN_C[7];
    for &cf in SIN_C[..7].iter().rev() {
        ps = ps.mul_add(u, cf);
    }
    let mut pc = COS_C[8];
    for &cf in COS_C[..8].iter().rev() {
        pc = pc.mul_add(u, cf);
    }
    let s = (r * u).mul_add(ps, r);
    let c = pc.mul_add(u, 1.0);
    // Quadrant q mod 4: sin y = s, c, −s, −c; cos y = c, −s, −c, s.
    let odd = (q & 1).wrapping_neg();
    let sv = f64::from_bits((s.to_bits() & !odd) | (c.to_bits() & odd));
    let cv = f64::from_bits((c.to_bits() & !odd) | (s.to_bits() & odd));
    let sin = f64::from_bits(sv.to_bits() ^ ((q & 2) << 62));
    let cos = f64::from_bits(cv.to_bits() ^ ((q.wrapping_add(1) & 2) << 62));
    (sin, cos)
}

/// `out[c] = e^{x[c] − shift}·(cos y[c], sin y[c])` for every c (`x`, `y`, `out` of one
/// length).
pub fn exp_cis(x: &[f64], shift: f64, y: &[f64], out: &mut [C64]) {
    debug_assert!(x.len() == y.len() && y.len() == out.len());
    for ((o, &xv), &yv) in out.iter_mut().zip(x).zip(y) {
        let mag = exp_reduced(xv - shift);
        let (s, c) = sin_cos_reduced(yv);
        *o = C64::new(mag * c, mag * s);
    }
    for (o, (&xv, &yv)) in out.iter_mut().zip(x.iter().zip(y)) {
        if !(yv.abs() <= SINCOS_LIMIT) {
            let mag = exp_reduced(xv - shift);
            let (s, c) = yv.sin_cos();
            *o = C64::new(mag * c, mag * s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn ulps(a: f64, b: f64) -> f64 {
        let scale = f64::EPSILON * b.abs().max(f64::MIN_POSITIVE);
        (a - b).abs() / scale
    }

    /// 200,000 arguments, a third from each range.
    fn arguments(seed: u64, ranges: [(f64, f64); 3]) -> Vec<f64> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..200_000)
            .map(|i| {
                let (lo, hi) = ranges[i % 3];
                rng.random_range(lo..hi)
            })
            .collect()
    }

    #[test]
    fn exp_within_two_ulp_of_std() {
        let mut worst: f64 = 0.0;
        for x in arguments(1, [(-1.0, 1.0), (-50.0, 0.0), (-708.0, 709.0)]) {
            worst = worst.max(ulps(exp_reduced(x), x.exp()));
        }
        assert!(worst <= 2.0, "worst {worst} ulp");
        assert_eq!(exp_reduced(0.0), 1.0);
        assert!(exp_reduced(f64::NAN).is_nan());
        assert!(exp_reduced(-1e4) < 4e-308);
    }

    #[test]
    fn sin_cos_within_two_ulp_of_std() {
        let mut worst: f64 = 0.0;
        let l = SINCOS_LIMIT;
        for y in arguments(2, [(-4.0, 4.0), (-100.0, 100.0), (-l, l)]) {
            let (s, c) = sin_cos_reduced(y);
            let (ws, wc) = y.sin_cos();
            // Absolute error in ulps of 1: near a zero of sin or cos the relative error of
            // any argument-rounded evaluation is unbounded.
            worst = worst.max(ulps(s, ws).min((s - ws).abs() / f64::EPSILON));
            worst = worst.max(ulps(c, wc).min((c - wc).abs() / f64::EPSILON));
        }
        assert!(worst <= 2.0, "worst {worst} ulp");
        // Exact quadrant points.
        assert_eq!(sin_cos_reduced(0.0), (0.0, 1.0));
    }

    #[test]
    fn exp_cis_matches_std_including_large_and_nan_arguments() {
        let x = [0.0, -1.5, -800.0, 2.0, f64::NAN, -3.0];
        let y = [0.3, 1e7, -2.0, f64::INFINITY, 0.5, -7.25];
        let mut out = vec![C64::new(0.0, 0.0); x.len()];
        exp_cis(&x, 2.0, &y, &mut out);
        for c in 0..x.len() {
            let want = (x[c] - 2.0).exp() * C64::new(y[c].cos(), y[c].sin());
            if want.re.is_nan() {
                assert!(
                    out[c].re.is_nan() && out[c].im.is_nan(),
                    "{c}: {:?}",
                    out[c]
                );
            } else {
                assert!(
                    (out[c] - want).norm() <= 4e-16 * want.norm() + 4e-308,
                    "{c}"
                );
            }
        }
    }
}
