//! Complex rectangles `[re] + i[im]` and boxes (one rectangle per coordinate).
//!
//! Each operation applies the real interval operations ([`super::interval`]) to the real
//! and imaginary parts by the usual formulas, `(a + ib)(c + id) = (ac − bd) + i(ad + bc)`,
//! `1/(a + ib) = (a − ib)/(a² + b²)`. Every real operation contains its exact result, so
//! the rectangle contains `{u ∘ v : u ∈ U, v ∈ V}` (with some overestimation: the product
//! of two rectangles is not a rectangle).

use super::interval::Interval;
use num_complex::Complex64 as C64;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A complex rectangle `{x + iy : x ∈ re, y ∈ im}`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CInterval {
    pub re: Interval,
    pub im: Interval,
}

impl CInterval {
    pub const ZERO: CInterval = CInterval {
        re: Interval::ZERO,
        im: Interval::ZERO,
    };
    pub const ONE: CInterval = CInterval {
        re: Interval::ONE,
        im: Interval::ZERO,
    };

    /// The point `z` (exact).
    pub fn point(z: C64) -> CInterval {
        CInterval {
            re: Interval::point(z.re),
            im: Interval::point(z.im),
        }
    }

    /// The square of half-width `r` around `z`: `z + r([−1, 1] + i[−1, 1])`, outward.
    pub fn around(z: C64, r: f64) -> CInterval {
        CInterval {
            re: Interval::around(z.re, r),
            im: Interval::around(z.im, r),
        }
    }

    /// `z · self` for a complex double `z` (the point factor needs no interval products).
    pub fn scale(self, z: C64) -> CInterval {
        CInterval {
            re: self.re.scale(z.re).sub(self.im.scale(z.im)),
            im: self.im.scale(z.re).add(self.re.scale(z.im)),
        }
    }

    /// `s · self` for a real double `s`.
    pub fn scale_real(self, s: f64) -> CInterval {
        CInterval {
            re: self.re.scale(s),
            im: self.im.scale(s),
        }
    }

    /// `1 / self`; the whole plane when the rectangle may contain 0.
    pub fn recip(self) -> CInterval {
        let den = self.re.sqr().add(self.im.sqr());
        CInterval {
            re: self.re.div(den),
            im: self.im.neg().div(den),
        }
    }

    /// `self ⊆ o`.
    pub fn subset_of(self, o: CInterval) -> bool {
        self.re.subset_of(o.re) && self.im.subset_of(o.im)
    }

    /// `self` lies in the interior of `o`.
    pub fn interior_of(self, o: CInterval) -> bool {
        self.re.interior_of(o.re) && self.im.interior_of(o.im)
    }

    /// The rectangles share a point.
    pub fn meets(self, o: CInterval) -> bool {
        self.re.meets(o.re) && self.im.meets(o.im)
    }

    pub fn contains(self, z: C64) -> bool {
        self.re.contains(z.re) && self.im.contains(z.im)
    }

    /// An upper bound on the larger half-width of the rectangle's two sides.
    pub fn half_width(self) -> f64 {
        let h = |i: Interval| super::interval::next_up(0.5 * (i.hi - i.lo));
        h(self.re).max(h(self.im))
    }

    /// An upper bound on `max(|Re u|, |Im u|)` over the rectangle.
    pub fn mag(self) -> f64 {
        self.re.mag().max(self.im.mag())
    }
}

impl Add for CInterval {
    type Output = CInterval;
    fn add(self, o: CInterval) -> CInterval {
        CInterval {
            re: self.re.add(o.re),
            im: self.im.add(o.im),
        }
    }
}

impl Sub for CInterval {
    type Output = CInterval;
    fn sub(self, o: CInterval) -> CInterval {
        CInterval {
            re: self.re.sub(o.re),
            im: self.im.sub(o.im),
        }
    }
}

impl Mul for CInterval {
    type Output = CInterval;
    fn mul(self, o: CInterval) -> CInterval {
        CInterval {
            re: self.re.mul(o.re).sub(self.im.mul(o.im)),
            im: self.re.mul(o.im).add(self.im.mul(o.re)),
        }
    }
}

/// A box in `C^n`: the product of one rectangle per coordinate.
pub type CBox = Vec<CInterval>;

/// `a ⊆ b` coordinatewise.
pub fn box_subset(a: &[CInterval], b: &[CInterval]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(u, v)| u.subset_of(*v))
}

/// `a` lies in the interior of `b` (every coordinate, real and imaginary part).
pub fn box_interior(a: &[CInterval], b: &[CInterval]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(u, v)| u.interior_of(*v))
}

/// The boxes share a point.
pub fn boxes_meet(a: &[CInterval], b: &[CInterval]) -> bool {
    a.iter().zip(b).all(|(u, v)| u.meets(*v))
}

#[cfg(test)]
mod tests {
    //! Containment of the exact complex result, in exact rationals, on random rectangles.
    use super::*;
    use num_rational::BigRational;
    use num_traits::Zero;
    use rand::{Rng, SeedableRng};

    type Q = BigRational;

    fn q(x: f64) -> Q {
        Q::from_float(x).expect("finite")
    }

    fn holds(i: Interval, t: &Q) -> bool {
        (i.lo == f64::NEG_INFINITY || q(i.lo) <= *t) && (i.hi == f64::INFINITY || *t <= q(i.hi))
    }

    fn rect(rng: &mut impl Rng) -> CInterval {
        let c = C64::new(rng.random_range(-4.0..4.0), rng.random_range(-4.0..4.0));
        let r = if rng.random() {
            0.0
        } else {
            rng.random_range(0.0..0.5)
        };
        CInterval::around(c, r)
    }

    fn corners(z: CInterval) -> Vec<(f64, f64)> {
        let mid = |i: Interval| 0.5 * i.lo + 0.5 * i.hi;
        let mut v = Vec::new();
        for x in [z.re.lo, mid(z.re), z.re.hi] {
            for y in [z.im.lo, mid(z.im), z.im.hi] {
                v.push((x, y));
            }
        }
        v
    }

    #[test]
    fn products_sums_and_reciprocals_contain_the_exact_results() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for _ in 0..400 {
            let (u, v) = (rect(&mut rng), rect(&mut rng));
            let z = C64::new(rng.random_range(-3.0..3.0), rng.random_range(-3.0..3.0));
            let (p, s, d, sc, inv) = (u.mul(v), u.add(v), u.sub(v), u.scale(z), u.recip());
            for (a, b) in corners(u) {
                let (a, b) = (q(a), q(b));
                for (c, e) in corners(v) {
                    let (c, e) = (q(c), q(e));
                    assert!(holds(p.re, &(&a * &c - &b * &e)) && holds(p.im, &(&a * &e + &b * &c)));
                    assert!(holds(s.re, &(&a + &c)) && holds(s.im, &(&b + &e)));
                    assert!(holds(d.re, &(&a - &c)) && holds(d.im, &(&b - &e)));
                }
                let (zr, zi) = (q(z.re), q(z.im));
                assert!(
                    holds(sc.re, &(&a * &zr - &b * &zi)) && holds(sc.im, &(&a * &zi + &b * &zr))
                );
                let den = &a * &a + &b * &b;
                if !den.is_zero() {
                    assert!(holds(inv.re, &(&a / &den)) && holds(inv.im, &(-&b / &den)));
                }
            }
        }
    }

    #[test]
    fn the_reciprocal_of_a_rectangle_around_zero_is_unbounded() {
        let z = CInterval::around(C64::new(0.0, 0.0), 1e-3);
        assert_eq!(z.recip().re, Interval::ENTIRE);
        assert!(!z
            .recip()
            .interior_of(CInterval::around(C64::new(0.0, 0.0), 1e300)));
    }

    #[test]
    fn interior_is_strict_and_subset_is_not() {
        let a = CInterval::around(C64::new(1.0, -2.0), 1.0);
        assert!(a.subset_of(a));
        assert!(!a.interior_of(a));
        let inner = CInterval::around(C64::new(1.0, -2.0), 0.5);
        assert!(inner.interior_of(a) && box_interior(&[inner], &[a]));
        assert!(boxes_meet(&[inner], &[a]));
        let far = CInterval::around(C64::new(5.0, -2.0), 0.5);
        assert!(!boxes_meet(&[far], &[a]));
    }
}
