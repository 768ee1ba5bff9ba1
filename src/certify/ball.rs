//! Balls `m ± r` with a double-double midpoint `m = hi + lo` (the exact real sum of two
//! doubles) and a double radius `r`, for enclosing `F(c)` at a double-double point `c` to
//! about `10⁻³²` of the terms' size, where double intervals give `10⁻¹⁶`.
//!
//! Each operation computes the midpoint with error-free transformations (TwoSum, and the
//! exact product `a·b = p + e` by one fused multiply-add) and a few ordinary roundings,
//! and adds to the radius a bound on the error of those roundings. Soundness rests on the
//! IEEE 754 round-to-nearest model, with `u = 2⁻⁵³` and `η = 2⁻¹⁰⁷⁴` (the smallest
//! subnormal):
//!
//! - a sum or difference `fl(a ± b)` is exact when subnormal and otherwise
//!   `|fl(a ± b) − (a ± b)| ≤ u·|fl(a ± b)|` (the error is at most half an ulp of the result);
//! - a product satisfies `|fl(a·b) − a·b| ≤ u·|fl(a·b)| + η` (half an ulp of a normal result,
//!   or half the subnormal spacing);
//! - TwoSum `s + e = a + b` is exact (Knuth; also under underflow);
//! - `p = fl(a·b)`, `e = fl(fma(a, b, −p))`: `a·b − p` is a double whenever it is not
//!   below the normal range, and otherwise rounds with error at most `η/2`, so
//!   `|a·b − (p + e)| ≤ η`.
//!
//! The radius is accumulated with every operation rounded upward ([`next_up`] after the
//! nearest rounding; a nonnegative exact value lies below `next_up` of its rounding). So
//! each result ball contains the exact result of the operation on every pair of reals in
//! the operand balls. Overflow gives an infinite or NaN component, which propagates through
//! `+` and `×` (there are no comparisons or divisions) and makes [`Ball::interval`] the whole
//! line. Rust neither contracts `a·b + c` into a fused multiply-add nor reorders
//! floating-point operations, so each operation is rounded as written.

use super::complex::CInterval;
use super::interval::{next_up, Interval};
use num_complex::Complex64 as C64;
use std::ops::{Add, Mul, Neg, Sub};

/// The unit roundoff `2⁻⁵³`.
const U: f64 = f64::EPSILON / 2.0;
/// An upper bound on the absolute error of a product rounded into the subnormal range.
const ETA: f64 = f64::from_bits(1);

/// `a + b` rounded upward (for nonnegative values, a bound on the exact sum).
fn add_up(a: f64, b: f64) -> f64 {
    next_up(a + b)
}

/// `a · b` rounded upward (for nonnegative values, a bound on the exact product).
fn mul_up(a: f64, b: f64) -> f64 {
    next_up(a * b)
}

/// Knuth's TwoSum: `s + e = a + b` exactly.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// The real ball `{t : |t − (hi + lo)| ≤ rad}`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ball {
    pub hi: f64,
    pub lo: f64,
    pub rad: f64,
}

impl Ball {
    pub const ZERO: Ball = Ball {
        hi: 0.0,
        lo: 0.0,
        rad: 0.0,
    };

    /// The exact point `x`.
    pub fn point(x: f64) -> Ball {
        Ball {
            hi: x,
            lo: 0.0,
            rad: 0.0,
        }
    }

    /// The exact point `hi + lo`.
    pub fn dd(hi: f64, lo: f64) -> Ball {
        Ball { hi, lo, rad: 0.0 }
    }

    /// An upper bound on `|hi + lo|`.
    fn mag_mid(self) -> f64 {
        add_up(self.hi.abs(), self.lo.abs())
    }

    /// A double interval holding the ball (the whole line when a part is not finite).
    pub fn interval(self) -> Interval {
        if !(self.hi.is_finite() && self.lo.is_finite() && self.rad.is_finite()) {
            return Interval::ENTIRE;
        }
        Interval::point(self.hi)
            .add(Interval::point(self.lo))
            .add(Interval::symmetric(self.rad))
    }
}

impl Neg for Ball {
    type Output = Ball;
    fn neg(self) -> Ball {
        Ball {
            hi: -self.hi,
            lo: -self.lo,
            rad: self.rad,
        }
    }
}

/// `m = (s + e + a.lo + b.lo)`: TwoSum of the high parts, the low parts added in two
/// roundings (`t₁ = fl(e + a.lo)`, `t = fl(t₁ + b.lo)`, errors `≤ u|t₁| + u|t|`), then
/// TwoSum `s + t` (exact).
impl Add for Ball {
    type Output = Ball;
    fn add(self, o: Ball) -> Ball {
        let (s, e) = two_sum(self.hi, o.hi);
        let t1 = e + self.lo;
        let t = t1 + o.lo;
        let (hi, lo) = two_sum(s, t);
        let err = mul_up(U, add_up(t1.abs(), t.abs()));
        Ball {
            hi,
            lo,
            rad: add_up(add_up(self.rad, o.rad), err),
        }
    }
}

impl Sub for Ball {
    type Output = Ball;
    fn sub(self, o: Ball) -> Ball {
        self.add(o.neg())
    }
}

/// `(a.hi + a.lo)(b.hi + b.lo)`: the exact product `a.hi·b.hi = p + e` (error `≤ η`),
/// the cross products `q₁ = fl(a.hi·b.lo)`, `q₂ = fl(a.lo·b.hi)` (each `≤ u|qᵢ| + η`),
/// two additions (`≤ u|t₁| + u|t₂|`), and `a.lo·b.lo` dropped (bounded by its modulus);
/// the radii propagate as `|A|·r_b + |B|·r_a + r_a·r_b`.
impl Mul for Ball {
    type Output = Ball;
    fn mul(self, o: Ball) -> Ball {
        let p = self.hi * o.hi;
        let e = self.hi.mul_add(o.hi, -p);
        let q1 = self.hi * o.lo;
        let q2 = self.lo * o.hi;
        let t1 = e + q1;
        let t2 = t1 + q2;
        let (hi, lo) = two_sum(p, t2);
        let rounding = add_up(
            mul_up(
                U,
                add_up(add_up(q1.abs(), q2.abs()), add_up(t1.abs(), t2.abs())),
            ),
            mul_up(3.0, ETA),
        );
        let dropped = mul_up(self.lo.abs(), o.lo.abs());
        let spread = add_up(
            add_up(mul_up(self.mag_mid(), o.rad), mul_up(o.mag_mid(), self.rad)),
            mul_up(self.rad, o.rad),
        );
        Ball {
            hi,
            lo,
            rad: add_up(add_up(rounding, dropped), spread),
        }
    }
}

/// A complex ball: a real ball for each part (a rectangle).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CBall {
    pub re: Ball,
    pub im: Ball,
}

impl CBall {
    pub const ZERO: CBall = CBall {
        re: Ball::ZERO,
        im: Ball::ZERO,
    };
    pub const ONE: CBall = CBall {
        re: Ball {
            hi: 1.0,
            lo: 0.0,
            rad: 0.0,
        },
        im: Ball::ZERO,
    };

    pub fn point(z: C64) -> CBall {
        CBall {
            re: Ball::point(z.re),
            im: Ball::point(z.im),
        }
    }

    /// The midpoint rounded to a complex double.
    pub fn mid(self) -> C64 {
        C64::new(self.re.hi + self.re.lo, self.im.hi + self.im.lo)
    }

    /// A double rectangle holding the ball.
    pub fn rect(self) -> CInterval {
        CInterval {
            re: self.re.interval(),
            im: self.im.interval(),
        }
    }
}

impl Add for CBall {
    type Output = CBall;
    fn add(self, o: CBall) -> CBall {
        CBall {
            re: self.re + o.re,
            im: self.im + o.im,
        }
    }
}

/// `(a + ib)(c + id) = (ac − bd) + i(ad + bc)`, each part from the real operations.
impl Mul for CBall {
    type Output = CBall;
    fn mul(self, o: CBall) -> CBall {
        CBall {
            re: self.re * o.re - self.im * o.im,
            im: self.re * o.im + self.im * o.re,
        }
    }
}

#[cfg(test)]
mod tests {
    //! Containment of the exact result in the ball, in exact rationals, for random
    //! double-double balls over magnitudes from near underflow to large (the midpoints'
    //! rounding, about 1e-32 of them, is inside the radius: without its bound the test
    //! fails).
    use super::*;
    use num_rational::BigRational;
    use rand::{Rng, SeedableRng};

    type Q = BigRational;

    fn q(x: f64) -> Q {
        Q::from_float(x).expect("finite")
    }

    fn holds(i: Interval, t: &Q) -> bool {
        (i.lo == f64::NEG_INFINITY || q(i.lo) <= *t) && (i.hi == f64::INFINITY || *t <= q(i.hi))
    }

    fn random_ball(rng: &mut impl Rng) -> Ball {
        let scale = 2f64.powi(rng.random_range(-1000..400));
        let hi = rng.random_range(-1.0..1.0) * scale;
        let lo = if rng.random() {
            hi * f64::EPSILON * rng.random_range(-0.5..0.5)
        } else {
            0.0
        };
        let rad = if rng.random() {
            0.0
        } else {
            hi.abs() * 2f64.powi(-rng.random_range(60..110))
        };
        Ball { hi, lo, rad }
    }

    /// Points of the ball: the ends and the midpoint (exact rationals).
    fn samples(b: Ball) -> Vec<Q> {
        let m = q(b.hi) + q(b.lo);
        vec![&m - q(b.rad), m.clone(), &m + q(b.rad)]
    }

    /// The ball itself (not only its double interval) holds `t`, in exact rationals.
    fn in_ball(b: Ball, t: &Q) -> bool {
        let d = t - (q(b.hi) + q(b.lo));
        let r = q(b.rad);
        -&r <= d && d <= r
    }

    #[test]
    fn sums_and_products_contain_the_exact_results() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for _ in 0..3000 {
            let (a, b) = (random_ball(&mut rng), random_ball(&mut rng));
            let (s, d, p) = (a + b, a - b, a * b);
            for x in samples(a) {
                for y in samples(b) {
                    let (xs, xd, xp) = (&x + &y, &x - &y, &x * &y);
                    assert!(in_ball(s, &xs) && holds(s.interval(), &xs), "{a:?} + {b:?}");
                    assert!(in_ball(d, &xd) && holds(d.interval(), &xd), "{a:?} - {b:?}");
                    assert!(in_ball(p, &xp) && holds(p.interval(), &xp), "{a:?} * {b:?}");
                }
            }
        }
    }

    /// At points the radius is at the level of the double-double rounding (about 1e-32 of
    /// the result for products of ordinary numbers), not of double rounding.
    #[test]
    fn point_products_are_tight() {
        let a = Ball::dd(1.0 / 3.0, (1.0f64 / 3.0) * 1e-17);
        let p = a.mul(a).mul(a).add(Ball::point(-1.0 / 27.0));
        assert!(p.rad < 1e-31, "{p:?}");
    }

    #[test]
    fn overflow_gives_the_whole_line() {
        let a = Ball::point(1e300);
        assert_eq!(a.mul(a).interval(), Interval::ENTIRE);
    }
}
