//! Total-degree start system `G_k = x_k^{d_k} − 1` and the homotopy
//! `H = γ(1 − t)·G + t·F` written in τ-form: `γ(1 − t)·g = γg·t^0 − γg·t^1`, so each start
//! term gives two columns (lifts 0 and 1) and each target term one column (lift 1).
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
            homotopy: Homotopy::gamma_trick(system, &start, gamma),
            degrees,
            gamma,
        })
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
