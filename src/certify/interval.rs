//! Real intervals `[lo, hi]` of doubles with outward rounding.
//!
//! Every operation computes its bounds in the hardware's round-to-nearest mode and then moves
//! the lower bound one double down and the upper bound one double up ([`next_down`],
//! [`next_up`]). Round-to-nearest returns the double nearest the exact result of `+ − × ÷`,
//! so the exact result lies strictly between the neighbours of the rounded one: the widened
//! interval contains it. That holds for subnormal results (the spacing there is the smallest
//! subnormal) and for overflow (a result rounded to ±∞ exceeds `f64::MAX` in magnitude). A
//! NaN bound (`∞ − ∞`, `0·∞`) makes the result the whole line, which certifies nothing.
//! docs/certification.md gives the argument in full.

use std::ops::{Add, Div, Mul, Neg, Sub};

/// The next double above `x` (`+∞` stays; ±0 gives the smallest positive subnormal).
pub fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let b = x.to_bits();
    f64::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

/// The next double below `x`.
pub fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

/// A closed interval `{t : lo ≤ t ≤ hi}`, `lo ≤ hi` (bounds may be infinite).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

/// `[a, b]` widened outward by one double on each side; the whole line if either is NaN.
fn outward(a: f64, b: f64) -> Interval {
    if a.is_nan() || b.is_nan() {
        return Interval::ENTIRE;
    }
    Interval {
        lo: next_down(a),
        hi: next_up(b),
    }
}

/// Smallest and largest of four values; NaN if any is NaN.
fn min_max4(p: [f64; 4]) -> (f64, f64) {
    if p.iter().any(|v| v.is_nan()) {
        return (f64::NAN, f64::NAN);
    }
    let lo = p[0].min(p[1]).min(p[2].min(p[3]));
    let hi = p[0].max(p[1]).max(p[2].max(p[3]));
    (lo, hi)
}

impl Interval {
    pub const ZERO: Interval = Interval { lo: 0.0, hi: 0.0 };
    pub const ONE: Interval = Interval { lo: 1.0, hi: 1.0 };
    pub const ENTIRE: Interval = Interval {
        lo: f64::NEG_INFINITY,
        hi: f64::INFINITY,
    };

    /// The point interval `[x, x]` (exact: a double is its own enclosure).
    pub fn point(x: f64) -> Interval {
        Interval { lo: x, hi: x }
    }

    /// `[lo, hi]` as given (the caller vouches that `lo ≤ hi`).
    pub fn new(lo: f64, hi: f64) -> Interval {
        debug_assert!(lo <= hi || lo.is_nan() || hi.is_nan());
        Interval { lo, hi }
    }

    /// `x ± r`, outward: contains every real within `r` of `x` (`r ≥ 0`).
    pub fn around(x: f64, r: f64) -> Interval {
        outward(x - r, x + r)
    }

    /// `[−r, r]` with `r` rounded up (symmetric, so it equals its own negation).
    pub fn symmetric(r: f64) -> Interval {
        let h = next_up(r);
        Interval { lo: -h, hi: h }
    }

    /// `s · self` for a double `s` (one product per bound).
    pub fn scale(self, s: f64) -> Interval {
        let (a, b) = (s * self.lo, s * self.hi);
        if a.is_nan() || b.is_nan() {
            return Interval::ENTIRE;
        }
        outward(a.min(b), a.max(b))
    }

    /// `{t² : t ∈ self}` (tighter than `self·self` when the interval contains 0).
    pub fn sqr(self) -> Interval {
        let (a, b) = (self.lo * self.lo, self.hi * self.hi);
        if self.lo <= 0.0 && self.hi >= 0.0 {
            if a.is_nan() || b.is_nan() {
                return Interval::ENTIRE;
            }
            // t² ≥ 0 exactly; only the upper bound is rounded.
            Interval {
                lo: 0.0,
                hi: next_up(a.max(b)),
            }
        } else {
            outward(a.min(b), a.max(b))
        }
    }

    /// An upper bound on `max |t|` over the interval (exact: no arithmetic).
    pub fn mag(self) -> f64 {
        self.lo.abs().max(self.hi.abs())
    }

    /// The smallest interval holding both.
    pub fn hull(self, o: Interval) -> Interval {
        Interval {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }

    pub fn contains(self, t: f64) -> bool {
        self.lo <= t && t <= self.hi
    }

    /// `self ⊆ o`.
    pub fn subset_of(self, o: Interval) -> bool {
        o.lo <= self.lo && self.hi <= o.hi
    }

    /// `self` lies in the interior `(o.lo, o.hi)` of `o` (false when a bound is NaN).
    pub fn interior_of(self, o: Interval) -> bool {
        o.lo < self.lo && self.hi < o.hi
    }

    /// The two intervals share a point.
    pub fn meets(self, o: Interval) -> bool {
        self.lo <= o.hi && o.lo <= self.hi
    }
}

impl Add for Interval {
    type Output = Interval;
    fn add(self, o: Interval) -> Interval {
        outward(self.lo + o.lo, self.hi + o.hi)
    }
}

impl Sub for Interval {
    type Output = Interval;
    fn sub(self, o: Interval) -> Interval {
        outward(self.lo - o.hi, self.hi - o.lo)
    }
}

/// Exact: negation of a double is a double.
impl Neg for Interval {
    type Output = Interval;
    fn neg(self) -> Interval {
        Interval {
            lo: -self.hi,
            hi: -self.lo,
        }
    }
}

impl Mul for Interval {
    type Output = Interval;
    fn mul(self, o: Interval) -> Interval {
        let (lo, hi) = min_max4([
            self.lo * o.lo,
            self.lo * o.hi,
            self.hi * o.lo,
            self.hi * o.hi,
        ]);
        outward(lo, hi)
    }
}

/// `self / o`; the whole line when `o` contains 0.
impl Div for Interval {
    type Output = Interval;
    fn div(self, o: Interval) -> Interval {
        if !(o.lo > 0.0 || o.hi < 0.0) {
            return Interval::ENTIRE;
        }
        let (lo, hi) = min_max4([
            self.lo / o.lo,
            self.lo / o.hi,
            self.hi / o.lo,
            self.hi / o.hi,
        ]);
        outward(lo, hi)
    }
}

#[cfg(test)]
mod tests {
    //! Soundness: each operation's result contains the exact result, checked in exact
    //! rational arithmetic on random doubles of every magnitude (including subnormals and
    //! values near overflow), and on the endpoints and interior points of random intervals.
    use super::*;
    use num_rational::BigRational;
    use num_traits::Zero;
    use rand::{Rng, SeedableRng};

    fn q(x: f64) -> BigRational {
        BigRational::from_float(x).expect("finite")
    }

    /// `t ∈ [lo, hi]` exactly (infinite bounds are open ends).
    fn holds(i: Interval, t: &BigRational) -> bool {
        let lo_ok = i.lo == f64::NEG_INFINITY || (i.lo.is_finite() && q(i.lo) <= *t);
        let hi_ok = i.hi == f64::INFINITY || (i.hi.is_finite() && *t <= q(i.hi));
        lo_ok && hi_ok
    }

    /// A random double: sign, mantissa and a binary exponent in `exp` (plus exact small
    /// integers and zero now and then).
    fn any_double(rng: &mut impl Rng, exp: std::ops::Range<i32>) -> f64 {
        match rng.random_range(0..20) {
            0 => 0.0,
            1 => rng.random_range(-8..9) as f64,
            2 => {
                f64::from_bits(rng.random_range(1..1u64 << 52))
                    * if rng.random() { 1.0 } else { -1.0 }
            }
            _ => {
                let m: f64 = rng.random_range(1.0..2.0);
                let s = if rng.random() { 1.0 } else { -1.0 };
                s * m * 2f64.powi(rng.random_range(exp))
            }
        }
    }

    fn any_interval(rng: &mut impl Rng, exp: std::ops::Range<i32>) -> Interval {
        let (a, b) = (any_double(rng, exp.clone()), any_double(rng, exp));
        if rng.random_range(0..5) == 0 {
            Interval::point(a)
        } else {
            Interval::new(a.min(b), a.max(b))
        }
    }

    /// Points of an interval to test: both ends and a point in between (halving a
    /// subnormal rounds, so the midpoint is clamped back into the interval).
    fn members(i: Interval) -> [f64; 3] {
        [i.lo, i.hi, (0.5 * i.lo + 0.5 * i.hi).clamp(i.lo, i.hi)]
    }

    const EXPONENTS: [std::ops::Range<i32>; 3] = [-30..30, -1074..-1000, 1000..1023];

    fn check_binary(
        op: impl Fn(Interval, Interval) -> Interval,
        exact: impl Fn(&BigRational, &BigRational) -> Option<BigRational>,
        name: &str,
    ) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for exp in EXPONENTS {
            for _ in 0..3000 {
                let (a, b) = (
                    any_interval(&mut rng, exp.clone()),
                    any_interval(&mut rng, -30..30),
                );
                let (a, b) = if rng.random() { (a, b) } else { (b, a) };
                let r = op(a, b);
                for s in members(a) {
                    for t in members(b) {
                        if let Some(e) = exact(&q(s), &q(t)) {
                            assert!(holds(r, &e), "{name}: {s:e} op {t:e} = {e} not in {r:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn add_contains_the_exact_sum() {
        check_binary(Interval::add, |s, t| Some(s + t), "add");
    }

    #[test]
    fn sub_contains_the_exact_difference() {
        check_binary(Interval::sub, |s, t| Some(s - t), "sub");
    }

    #[test]
    fn mul_contains_the_exact_product() {
        check_binary(Interval::mul, |s, t| Some(s * t), "mul");
    }

    #[test]
    fn div_contains_the_exact_quotient() {
        check_binary(Interval::div, |s, t| (!t.is_zero()).then(|| s / t), "div");
    }

    #[test]
    fn scale_and_sqr_contain_the_exact_result() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        for exp in EXPONENTS {
            for _ in 0..3000 {
                let a = any_interval(&mut rng, exp.clone());
                let s = any_double(&mut rng, -30..30);
                let (sc, sq) = (a.scale(s), a.sqr());
                for t in members(a) {
                    assert!(holds(sc, &(q(s) * q(t))), "{s:e} · {t:e} not in {sc:?}");
                    assert!(holds(sq, &(q(t) * q(t))), "{t:e}² not in {sq:?}");
                }
                assert!(sq.lo >= 0.0 || a.lo > 0.0 || a.hi < 0.0 || sq.lo.is_nan());
            }
        }
    }

    #[test]
    fn a_divisor_containing_zero_gives_the_whole_line() {
        let r = Interval::ONE.div(Interval::new(-1.0, 2.0));
        assert_eq!(r, Interval::ENTIRE);
        let r = Interval::ONE.div(Interval::new(0.0, 2.0));
        assert_eq!(r, Interval::ENTIRE);
    }

    /// Overflow goes to an infinite bound on the right side; NaN (∞ − ∞, 0·∞) gives the
    /// whole line, never a finite interval.
    #[test]
    fn overflow_and_nan_stay_sound() {
        let big = Interval::point(f64::MAX);
        let s = big.add(big);
        assert_eq!(s.hi, f64::INFINITY);
        assert!(s.lo >= f64::MAX * 0.5);
        let inf = Interval::new(0.0, f64::INFINITY);
        assert_eq!(inf.sub(inf), Interval::ENTIRE);
        assert_eq!(
            Interval::ZERO.mul(Interval::new(1.0, f64::INFINITY)),
            Interval::ENTIRE
        );
        assert!(!Interval::ENTIRE.interior_of(Interval::new(-1e300, 1e300)));
    }

    /// `next_up` and `next_down` are the neighbouring doubles: nothing lies strictly between
    /// `x` and them (checked on the bit patterns, and across 0 and subnormals).
    #[test]
    fn neighbours_are_adjacent_doubles() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for _ in 0..10000 {
            let x = any_double(&mut rng, -1074..1023);
            let (u, d) = (next_up(x), next_down(x));
            assert!(u > x && d < x, "{x:e}");
            if x != 0.0 && u != 0.0 {
                assert_eq!(
                    (u.to_bits() as i128 - x.to_bits() as i128).abs(),
                    1,
                    "{x:e}"
                );
            }
        }
        assert_eq!(next_up(0.0), f64::from_bits(1));
        assert_eq!(next_down(0.0), -f64::from_bits(1));
        assert_eq!(next_up(-f64::from_bits(1)), -0.0);
        assert_eq!(next_up(f64::MAX), f64::INFINITY);
        assert_eq!(next_down(f64::INFINITY), f64::MAX);
    }
}
