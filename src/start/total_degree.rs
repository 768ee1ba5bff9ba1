//! Total-degree start system `G_k = s_k·(x_k^{d_k} − 1)` and the homotopy
//! `H = γ(1 − t)·G + t·F` written in τ-form: `γ(1 − t)·g = γg·t^0 − γg·t^1`, so each start
//! term gives two columns (lifts 0 and 1) and each target term one column (lift 1). The
//! factor `s_k` is the size of `f_k`'s coefficients ([`super::start_scale`]), so that
//! scaling an equation scales its homotopy.
//! Start points are the `Π d_k` tuples of roots of unity, exact at `t = 0`.

use crate::error::{Error, Result};
use crate::homotopy::Homotopy;
use crate::system::{Polynomial, System, Term};
use num_complex::Complex64 as C64;
use rand::Rng;

/// The total-degree homotopy of a system with its random γ.
pub struct TotalDegree {
    pub homotopy: Homotopy,
    pub degrees: Vec<u32>,
    pub gamma: C64,
    /// How much earlier than the solver's τ₀ the paths start ([`start_delay`]).
    pub tau_delay: f64,
}

/// Sum of coefficient moduli of a target equation, relative to its start factor
/// ([`super::start_scale`]), up to which the paths start at the solver's τ₀ (see
/// [`start_delay`]).
pub const START_TARGET_SIZE: f64 = 1e3;

/// How much earlier (in `τ = log t`) the paths of `H = γ(1 − t)·G + t·F` start than the
/// solver's τ₀: `ln(R / START_TARGET_SIZE)` where `R = max_k Σ_a |c_a| / s_k` bounds the
/// target's equations on the start points' torus `|x_k| = 1` relative to their start
/// factors `s_k` ([`super::start_scale`]), and 0 when `R` is below [`START_TARGET_SIZE`].
/// `R` is the same for the system with any equation multiplied by a constant.
///
/// The start point is a root of `G`, exact at `t = 0`; at `t₀` the root of `H` has moved by
/// about `t₀·|F_k|/(s_k·d_k)` against a spacing of `2π/d_k` between the roots of
/// `x_k^{d_k} − 1`, so the refinement at `t₀` needs `t₀·R` well below 1. With unit start
/// factors `(x − 1)^28` expanded had `R = 2^28`: at the default `t₀ = e^{−16}` that is 30,
/// and the start refinement of 3 to 6 of its 28 paths failed ("start point did not
/// converge") in every recovery round. Equations of
/// moderate size (every benchmark family) keep `τ₀`, and so do targets whose terms cancel
/// beyond double precision on that torus (`R·ε ≥ 1`, as `(x + y + 1)^40 − 1` expanded):
/// there no path can be tracked in double, and starting them earlier only lengthened the
/// first pass (11 s → 85 s) before the polyhedral fallback solved them.
pub fn start_delay(system: &System) -> f64 {
    let r = system
        .equations
        .iter()
        .map(|f| f.terms.iter().map(|t| t.coeff.norm()).sum::<f64>() / super::start_scale(f))
        .fold(0.0, f64::max);
    if r.is_finite() && r > START_TARGET_SIZE && r * f64::EPSILON < 1.0 {
        (r / START_TARGET_SIZE).ln()
    } else {
        0.0
    }
}

impl TotalDegree {
    /// Builds the homotopy; `rng` draws γ on the unit circle.
    pub fn new(system: &System, rng: &mut impl Rng) -> Result<TotalDegree> {
        if let Some(k) = system.equations.iter().position(|f| f.is_laurent()) {
            return Err(Error::Usage(format!(
                "equation {} has negative exponents: the total-degree start needs polynomials (use the polyhedral start)",
                k + 1
            )));
        }
        let n = system.n();
        let theta: f64 = rng.random::<f64>() * std::f64::consts::TAU;
        let gamma = C64::from_polar(1.0, theta);
        let degrees: Vec<u32> = system
            .equations
            .iter()
            .map(|f| f.degree().max(0) as u32)
            .collect();
        let start: Vec<Polynomial> = degrees
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                let mut xk = vec![0; n];
                xk[k] = d as i32;
                let terms = if d > 0 {
                    vec![
                        Term {
                            coeff: C64::new(1.0, 0.0),
                            exponents: xk,
                        },
                        Term {
                            coeff: C64::new(-1.0, 0.0),
                            exponents: vec![0; n],
                        },
                    ]
                } else {
                    Vec::new()
                };
                Polynomial::from_terms(terms)
            })
            .collect();
        Ok(TotalDegree {
            homotopy: Homotopy::gamma_trick(system, &super::scaled_start(system, start), gamma),
            degrees,
            gamma,
            tau_delay: start_delay(system),
        })
    }

    /// τ at which the paths start, for the solver's `tau0` ([`start_delay`]).
    pub fn start_tau(&self, tau0: f64) -> f64 {
        tau0 - self.tau_delay
    }

    /// Number of paths `Π d_k` (0 when some equation is constant).
    pub fn path_count(&self) -> u128 {
        self.degrees.iter().map(|&d| d as u128).product()
    }

    /// Start point number `index` (mixed radix over the degrees) as homogeneous coordinates
    /// `(ζ_1, …, ζ_n, 1)/√(n+1)` with `ζ_k = e^{2πi j_k / d_k}`.
    pub fn start_point(&self, mut index: u128) -> Vec<C64> {
        let n = self.degrees.len();
        let mut y = Vec::with_capacity(n + 1);
        for &d in &self.degrees {
            let j = (index % d as u128) as f64;
            index /= d as u128;
            y.push(C64::from_polar(1.0, std::f64::consts::TAU * j / d as f64));
        }
        y.push(C64::new(1.0, 0.0));
        let s = 1.0 / ((n + 1) as f64).sqrt();
        y.iter_mut().for_each(|v| *v *= s);
        y
    }
}
