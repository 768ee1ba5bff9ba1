//! The Krawczyk test with a double-double centre, for the points that the double-precision
//! test ([`super::krawczyk`]) leaves undecided.
//!
//! In double precision the enclosure of `F(x̃)` is about `ε·Σ|terms|` wide, so the Newton
//! step `Y·F(x̃)` that the box must exceed is about `κ·ε`, while `Y·J(X)` stays near `I` only
//! for boxes below about `1/κ`: the test needs `κ²·ε ≪ 1`. Here:
//!
//! 1. the point is refined by Newton's method with the residual in double-double (mixed
//!    precision iterative refinement: `c ← c − J(c)⁻¹·F(c)`, `J` in double), to a centre
//!    `c = hi + lo` per coordinate part;
//! 2. `F(c)` is enclosed in ball arithmetic with double-double midpoints
//!    ([`super::ball`]: about `10⁻³²·Σ|terms|` wide), then `Y·F(c)` in double intervals
//!    (these numbers are small, so double intervals lose nothing relative to them);
//! 3. for half-widths `r` from the step `|(c − x̃) − Y·F(c)|` (enclosed), the box is
//!    `X = x̃ + r([−1, 1] + i[−1, 1])ⁿ` around the given double point `x̃`, as in the double
//!    test, so a certificate still says that a root lies within `r` of the coordinates the
//!    user holds. With `c ∈ X` (checked) the operator
//!
//!    `K(X) = c − Y·F(c) + (I − Y·J(X))·(X − c) = x̃ + [(c − x̃) − Y·F(c)] + M·(X − c)`
//!
//!    is formed with the bracket, `M = I − Y·J(X)` and `X − c` in double intervals (`J(X)`
//!    by [`IntervalSystem::jacobian`] over the double box `X`). If `K(X) ⊆ int X`, `X` holds
//!    exactly one root, and it is simple (Krawczyk's theorem holds for any centre `c ∈ X`
//!    and any `Y`: for a root `ξ ∈ X`, `F(ξ) − F(c) = J̄·(ξ − c)` with `J̄` the mean of `J`
//!    on the segment, whose entries lie in the convex rectangles `J(X)`, so
//!    `ξ = ξ − Y·F(ξ) ∈ K(X)`; Rump 1983 for the strict-inclusion form).
//!
//! Every quantity that enters `K(X)` is enclosed: `F(c)` by the ball arithmetic's
//! rounding argument, the rest by the double interval arithmetic's ([`super::interval`]);
//! `c`, `Y` and the radii are any numbers (only `c ∈ X` matters, and it is checked on an
//! enclosure of `c`). Now the step is about `|x̃ − ξ| + κ·10⁻³²`, so the test needs only
//! `κ·max(ε, |x̃ − ξ|) ≪ 1`.
//!
//! Laurent systems: equation `k` is multiplied by the monomial `x^{s_k}` that clears its
//! negative exponents. On a box whose rectangles exclude 0 in those coordinates (checked),
//! the products have the same roots, with the same multiplicities (at a root the Jacobian is
//! the original one with row `k` scaled by `x^{s_k} ≠ 0`), so the proof carries over.
//!
//! Realness is proved as in the double test: a self-conjugate box (imaginary parts
//! `[−h, h]`) centred at `Re x̃`, with centre `Re c`, that passes and contains the first box.

use super::ball::CBall;
use super::complex::{box_interior, box_subset, CBox, CInterval};
use super::eval::IntervalSystem;
use super::krawczyk::{
    approximate_inverse, mat_vec, radii, real_box, real_radii, self_conjugate, Certificate,
    MAX_RADIUS,
};
use crate::post::dedup::sup_norm;
use crate::system::{Polynomial, System, Term};
use num_complex::Complex64 as C64;
use std::ops::{Add, Mul, Sub};

/// Newton corrections at most (each one evaluation in double-double and one LU in double).
const NEWTON_ITERS: usize = 12;
/// Newton stops once a correction is below this, relative to `1 + ‖c‖∞`.
const NEWTON_TOL: f64 = 1e-31;

/// A system prepared for the double-double test.
pub struct DdSystem {
    /// The equations with their negative exponents cleared (see the module notes).
    cleared: System,
    isys: IntervalSystem,
    /// Variables that some equation was multiplied by: their rectangles must exclude 0.
    must_be_nonzero: Vec<bool>,
    /// Per variable: the highest power any term needs.
    max_power: Vec<usize>,
    real_coefficients: bool,
}

/// A double-double point: one exact ball (radius 0) per coordinate.
type DdPoint = Vec<CBall>;

impl DdSystem {
    pub fn new(system: &System) -> DdSystem {
        let n = system.n();
        let mut must_be_nonzero = vec![false; n];
        let equations: Vec<Polynomial> = system
            .equations
            .iter()
            .map(|f| {
                let shift: Vec<i32> = (0..n)
                    .map(|j| {
                        -f.terms
                            .iter()
                            .map(|t| t.exponents[j])
                            .min()
                            .unwrap_or(0)
                            .min(0)
                    })
                    .collect();
                for (j, &s) in shift.iter().enumerate() {
                    must_be_nonzero[j] |= s > 0;
                }
                Polynomial {
                    terms: f
                        .terms
                        .iter()
                        .map(|t| Term {
                            coeff: t.coeff,
                            exponents: t.exponents.iter().zip(&shift).map(|(a, s)| a + s).collect(),
                        })
                        .collect(),
                }
            })
            .collect();
        let cleared = System {
            equations,
            ..system.clone()
        };
        let max_power = (0..n)
            .map(|j| {
                cleared
                    .equations
                    .iter()
                    .flat_map(|f| f.terms.iter().map(move |t| t.exponents[j]))
                    .max()
                    .unwrap_or(0)
                    .max(0) as usize
            })
            .collect();
        let isys = IntervalSystem::new(&cleared);
        DdSystem {
            real_coefficients: isys.real_coefficients,
            isys,
            cleared,
            must_be_nonzero,
            max_power,
        }
    }

    /// Encloses `F(c)` (the cleared system) in balls with double-double midpoints.
    fn values(&self, c: &[CBall]) -> Vec<CBall> {
        let powers: Vec<Vec<CBall>> = c
            .iter()
            .zip(&self.max_power)
            .map(|(&z, &m)| {
                let mut p = vec![CBall::ONE; m + 1];
                for e in 1..=m {
                    p[e] = p[e - 1].mul(z);
                }
                p
            })
            .collect();
        self.cleared
            .equations
            .iter()
            .map(|f| {
                f.terms.iter().fold(CBall::ZERO, |acc, t| {
                    let m = t
                        .exponents
                        .iter()
                        .enumerate()
                        .filter(|(_, &a)| a != 0)
                        .fold(CBall::point(t.coeff), |m, (j, &a)| {
                            m.mul(powers[j][a as usize])
                        });
                    acc.add(m)
                })
            })
            .collect()
    }

    /// Newton's method from `x` with the residual in double-double and the Jacobian in
    /// double; stops at [`NEWTON_TOL`], at a correction that is not finite or does not
    /// shrink, or after [`NEWTON_ITERS`]. The centre need not be a root: the test decides.
    fn refine(&self, x: &[C64]) -> DdPoint {
        let mut c: DdPoint = x.iter().map(|&z| CBall::point(z)).collect();
        let mut last = f64::INFINITY;
        for _ in 0..NEWTON_ITERS {
            let mid: Vec<C64> = c.iter().map(|z| z.mid()).collect();
            let Some(y) = approximate_inverse(&self.cleared, &mid) else {
                break;
            };
            let f: Vec<C64> = self.values(&c).iter().map(|v| v.mid()).collect();
            let delta = &y * nalgebra::DVector::from_vec(f);
            let size = delta.iter().map(|d| d.norm()).fold(0.0, f64::max);
            if !size.is_finite() || size > 0.5 * last {
                break;
            }
            last = size;
            for (z, d) in c.iter_mut().zip(delta.iter()) {
                // The new centre is the computed midpoint, exactly (radius dropped).
                let s = z.add(CBall::point(-*d));
                *z = CBall {
                    re: super::ball::Ball::dd(s.re.hi, s.re.lo),
                    im: super::ball::Ball::dd(s.im.hi, s.im.lo),
                };
            }
            if size <= NEWTON_TOL * (1.0 + sup_norm(&mid)) {
                break;
            }
        }
        c
    }

    /// The Krawczyk test with centre `c` (a double-double point) on the boxes that
    /// `make_box(r)` builds around `anchor` for the half-widths `radii_for(step)`; returns
    /// the first `(r, X, K(X))` with `K(X) ⊆ int X`, `c ∈ X` and `accept(X)`.
    fn prove(
        &self,
        anchor: &[C64],
        c: &[CBall],
        radii_for: impl Fn(f64) -> Vec<f64>,
        make_box: impl Fn(f64) -> CBox,
        accept: impl Fn(&[CInterval]) -> bool,
    ) -> Option<(f64, CBox, CBox)> {
        let n = anchor.len();
        let mid: Vec<C64> = c.iter().map(|z| z.mid()).collect();
        let y = approximate_inverse(&self.cleared, &mid)?;
        let fc: Vec<CInterval> = self.values(c).iter().map(|v| v.rect()).collect();
        let yf = mat_vec(&y, &fc);
        // Enclosures of c and of the bracket (c − x̃) − Y·F(c).
        let centre: Vec<CInterval> = c.iter().map(|z| z.rect()).collect();
        let bracket: Vec<CInterval> = centre
            .iter()
            .zip(anchor)
            .zip(&yf)
            .map(|((&ci, &a), &v)| ci.sub(CInterval::point(a)).sub(v))
            .collect();
        let step = bracket.iter().map(|b| b.mag()).fold(0.0, f64::max);
        if !step.is_finite() {
            return None;
        }
        radii_for(step).into_iter().find_map(|r| {
            let region = make_box(r);
            let nonzero_ok = region
                .iter()
                .zip(&self.must_be_nonzero)
                .all(|(b, &m)| !m || !b.contains(C64::new(0.0, 0.0)));
            if !(nonzero_ok && accept(&region) && box_subset(&centre, &region)) {
                return None;
            }
            let jac = self.isys.jacobian(&region);
            let offsets: Vec<CInterval> = region
                .iter()
                .zip(&centre)
                .map(|(b, ci)| b.sub(*ci))
                .collect();
            let mut row = vec![CInterval::ZERO; n];
            let k: CBox = (0..n)
                .map(|i| {
                    // Row i of Y·J(X), then of M = I − Y·J(X).
                    row.iter_mut().for_each(|v| *v = CInterval::ZERO);
                    for kk in 0..n {
                        let yik = y[(i, kk)];
                        for (v, jk) in row.iter_mut().zip(&jac[kk * n..(kk + 1) * n]) {
                            *v = v.add(jk.scale(yik));
                        }
                    }
                    let mut acc = bracket[i];
                    for (j, (v, d)) in row.iter().zip(&offsets).enumerate() {
                        let m = if i == j {
                            CInterval::ONE.sub(*v)
                        } else {
                            CInterval {
                                re: -v.re,
                                im: -v.im,
                            }
                        };
                        acc = acc.add(m.mul(*d));
                    }
                    CInterval::point(anchor[i]).add(acc)
                })
                .collect();
            box_interior(&k, &region).then_some((r, region, k))
        })
    }

    /// The double-double Krawczyk test at the approximate solution `x` (module notes): a
    /// certificate for a box around `x` itself, or `None`.
    pub fn certify(&self, x: &[C64]) -> Option<Certificate> {
        if x.len() != self.isys.n() || x.iter().any(|z| !(z.re.is_finite() && z.im.is_finite())) {
            return None;
        }
        let scale = 1.0 + sup_norm(x);
        let cap = MAX_RADIUS * scale;
        let floor = 4.0 * f64::EPSILON * scale;
        let c = self.refine(x);
        let (radius, region, enclosure) = self.prove(
            x,
            &c,
            |step| radii(step, floor, cap),
            |r| x.iter().map(|&z| CInterval::around(z, r)).collect(),
            |_| true,
        )?;
        let real = self.real_coefficients
            && (self_conjugate(&region) || self.certify_real(x, &c, &region, cap, floor));
        Some(Certificate {
            radius,
            region,
            enclosure,
            real,
            double_double: true,
        })
    }

    /// Why the test leaves `x` undecided (asked of points that neither test certified):
    /// a coordinate not finite, a numerically singular Jacobian where Newton in
    /// double-double ends, that point farther from `x` than the largest box, or else no box
    /// up to the cap that passes.
    pub fn undecided_reason(&self, x: &[C64]) -> &'static str {
        if x.len() != self.isys.n() || x.iter().any(|z| !(z.re.is_finite() && z.im.is_finite())) {
            return "a coordinate is not finite";
        }
        let c: Vec<C64> = self.refine(x).iter().map(|z| z.mid()).collect();
        if approximate_inverse(&self.cleared, &c).is_none() {
            return "the Jacobian is numerically singular where Newton in double-double ends";
        }
        let moved = c
            .iter()
            .zip(x)
            .map(|(a, b)| (a.re - b.re).abs().max((a.im - b.im).abs()))
            .fold(0.0, f64::max);
        if moved.is_nan() || moved > MAX_RADIUS * (1.0 + sup_norm(x)) {
            return "Newton in double-double moves the point by more than the largest box (1e-6 relative)";
        }
        "no box up to 1e-6 relative passed the test in double-double (a root too ill-conditioned for it)"
    }

    /// A self-conjugate box around `Re x` with centre `Re c` that contains `region` and
    /// passes the test.
    fn certify_real(
        &self,
        x: &[C64],
        c: &[CBall],
        region: &[CInterval],
        cap: f64,
        floor: f64,
    ) -> bool {
        let im = x.iter().map(|z| z.im.abs()).fold(0.0, f64::max);
        let half_width = region.iter().map(|b| b.half_width()).fold(0.0, f64::max);
        let reach = im + half_width;
        if reach > cap {
            return false;
        }
        let anchor: Vec<C64> = x.iter().map(|z| C64::new(z.re, 0.0)).collect();
        let centre: Vec<CBall> = c
            .iter()
            .map(|z| CBall {
                re: z.re,
                im: super::ball::Ball::ZERO,
            })
            .collect();
        self.prove(
            &anchor,
            &centre,
            |step| real_radii(reach, step, floor, cap),
            |r| real_box(&anchor, r),
            |b| box_subset(region, b),
        )
        .is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certify::krawczyk::certify_point;
    use crate::system::parse_str;

    fn univariate(eq: &str) -> System {
        parse_str(
            &format!("variables: [x]\nequations:\n  - \"{eq}\"\n"),
            "t.yaml",
        )
        .unwrap()
    }

    /// `(x − 1)(x − 1 − g)` with `g = 2⁻³⁰` (κ ≈ 10⁹), coefficients exact in double: the
    /// double test proves neither root, the double-double one proves both, real, in boxes
    /// that hold the exact roots and are disjoint.
    #[test]
    fn close_roots_beyond_double_are_certified_in_double_double() {
        let g = 2f64.powi(-30);
        let sys = univariate(&format!("x^2 - {}*x + {}", 2.0 + g, 1.0 + g));
        let isys = IntervalSystem::new(&sys);
        let dd = DdSystem::new(&sys);
        let mut encl = Vec::new();
        for root in [1.0, 1.0 + g] {
            let x = [C64::new(root, 0.0)];
            assert!(certify_point(&sys, &isys, &x).is_none(), "double at {root}");
            let c = dd.certify(&x).expect("certified in double-double");
            assert!(c.real && c.double_double);
            assert!(c.enclosure[0].contains(C64::new(root, 0.0)));
            assert!(c.radius < 1e-12, "{}", c.radius);
            encl.push(c.enclosure[0]);
        }
        assert!(!encl[0].meets(encl[1]));
    }

    /// A point off by 1e-3 or 1e-7 from a root, a double root and points near it: never
    /// certified, in double-double either.
    #[test]
    fn points_off_a_root_and_double_roots_are_not_certified() {
        let g = 2f64.powi(-30);
        let sys = univariate(&format!("x^2 - {}*x + {}", 2.0 + g, 1.0 + g));
        let dd = DdSystem::new(&sys);
        for x in [1.0 + 1e-3, 1.0 - 1e-7, 1.0 + g / 2.0] {
            assert!(dd.certify(&[C64::new(x, 0.0)]).is_none(), "{x}");
        }
        let double = DdSystem::new(&univariate("x^2 - 2*x + 1"));
        for d in [0.0, 1e-12, 1e-9, 1e-6] {
            assert!(double.certify(&[C64::new(1.0 + d, d)]).is_none(), "{d}");
        }
    }

    /// Laurent terms: `x + x⁻¹ − 2.5` (cleared to `x² − 2.5x + 1`) has roots 2 and 1/2.
    #[test]
    fn laurent_roots_are_certified() {
        let dd = DdSystem::new(&univariate("x + x^-1 - 2.5"));
        for r in [2.0, 0.5] {
            assert!(dd.certify(&[C64::new(r, 0.0)]).expect("certified").real);
        }
    }

    /// A complex root with roundoff: certified, not real; with a tiny imaginary part at a
    /// real root of an ill-conditioned pair: real.
    #[test]
    fn realness_in_double_double() {
        let dd = DdSystem::new(&univariate("x^2 + 1"));
        assert!(!dd.certify(&[C64::new(0.0, 1.0)]).unwrap().real);
        let g = 2f64.powi(-30);
        let sys = univariate(&format!("x^2 - {}*x + {}", 2.0 + g, 1.0 + g));
        let c = DdSystem::new(&sys)
            .certify(&[C64::new(1.0 + g, 1e-15)])
            .expect("certified");
        assert!(c.real);
    }

    /// The reasons given for undecided points: a point at a double root (singular
    /// Jacobian), a point 10⁻³ off a simple root (Newton moves it beyond the largest box).
    #[test]
    fn undecided_points_say_why() {
        let double = DdSystem::new(&univariate("x^2 - 2*x + 1"));
        assert!(double
            .undecided_reason(&[C64::new(1.0, 0.0)])
            .contains("singular"));
        let simple = DdSystem::new(&univariate("x^2 - 2"));
        let x = [C64::new(2f64.sqrt() + 1e-3, 0.0)];
        assert!(simple.certify(&x).is_none());
        assert!(simple.undecided_reason(&x).contains("moves the point"));
    }
}
