//! Overdetermined systems in `solve`: `N > n` equations are squared up to `R·F` (`n`
//! random combinations, [`super::slices::Randomization`]), the square system is solved, and
//! each finite solution is kept when it satisfies the original equations: its residual,
//! evaluated in double-double after Newton in double-double on `R·F`, is below
//! [`EXCESS_RESIDUAL_TOL`]. The others are zeros of `R·F` only, reported as `excess`.

use super::slices::Randomization;
use crate::error::{Error, Result};
use crate::eval::dd::Cdd;
use crate::homotopy::Homotopy;
use crate::post::dd_newton::DdTarget;
use crate::system::{Polynomial, System};
use num_complex::Complex64 as C64;

/// A solution of `R·F` is one of `F` when `F`'s relative residual there
/// ([`dd_relative_residual`]) is at most this. A nonsingular solution refined in
/// double-double has a residual at the rounding of its coordinates to double (~1e-16); a
/// singular one, known to `δ`, about `δ` (1e-8 and better after the endgame); an excess
/// solution one of the size of the coefficients.
pub const EXCESS_RESIDUAL_TOL: f64 = 1e-7;

/// `f(x)` in double-double (the point in double, every product and sum in double-double);
/// `None` at a zero coordinate under a negative exponent.
pub fn dd_eval(f: &Polynomial, x: &[C64]) -> Option<C64> {
    let xs: Vec<Cdd> = x.iter().map(|&v| Cdd::from(v)).collect();
    let mut sum = Cdd::from(C64::new(0.0, 0.0));
    for t in &f.terms {
        let mut v = Cdd::from(t.coeff);
        for (xj, &a) in xs.iter().zip(&t.exponents) {
            if a > 0 {
                v = v.mul(xj.powi(a as u32));
            } else if a < 0 {
                if xj.to_c64() == C64::new(0.0, 0.0) {
                    return None;
                }
                v = v.div(xj.powi((-a) as u32));
            }
        }
        sum = sum.add(v);
    }
    Some(sum.to_c64())
}

/// The largest `|f_k(x)| / (max|c| + Σ|c·x^a|)` over the equations, each `f_k(x)` in
/// double-double ([`Polynomial::size_at`]); infinite where it cannot be evaluated.
pub fn dd_relative_residual(system: &System, x: &[C64]) -> f64 {
    system
        .equations
        .iter()
        .map(|f| match dd_eval(f, x) {
            Some(v) if v.norm() == 0.0 => 0.0,
            Some(v) => v.norm() / f.size_at(x),
            None => f64::INFINITY,
        })
        .fold(0.0, f64::max)
}

/// An overdetermined system and the square system `solve` tracks for it.
pub struct Overdetermined {
    pub original: System,
    pub square: System,
    pub randomization: Randomization,
    dd: Option<DdTarget>,
}

/// The message for a system with fewer equations than variables.
pub fn underdetermined_message(system: &System) -> String {
    format!(
        "{} equations in {} variables: every solution lies on a set of dimension at least \
         {}, none is isolated; `pathtrack witness FILE` computes witness sets of the \
         solution sets by dimension (and `pathtrack decompose FILE` their components)",
        system.equations.len(),
        system.n(),
        system.n() - system.equations.len()
    )
}

impl Overdetermined {
    /// `None` for a square system; an input error naming `origin` (the file; exit 2) for
    /// an underdetermined one.
    pub fn new(system: &System, seed: u64, origin: &str) -> Result<Option<Overdetermined>> {
        let (big_n, n) = (system.equations.len(), system.n());
        if big_n < n {
            let message = underdetermined_message(system);
            return Err(Error::Input(crate::error::InputError::new(origin, message)));
        }
        if big_n == n {
            return Ok(None);
        }
        let mut rng = super::rng(seed, super::Stream::Squaring);
        let randomization = Randomization::new(system, n, &mut rng);
        let square = System {
            name: system.name.clone(),
            description: format!(
                "{} equations squared up to {} random combinations",
                big_n, n
            ),
            variables: system.variables.clone(),
            equations: randomization.apply(system),
        };
        let dd = DdTarget::new(&Homotopy::target_only(&square.equilibrated().0));
        Ok(Some(Overdetermined {
            original: system.clone(),
            square,
            randomization,
            dd,
        }))
    }

    /// The point refined by Newton in double-double on the square system where that
    /// converges (a nonsingular solution), else `x` itself.
    pub fn refined(&self, x: &[C64]) -> Vec<C64> {
        let Some(dd) = &self.dd else {
            return x.to_vec();
        };
        let mut y = x.to_vec();
        y.push(C64::new(1.0, 0.0));
        let nw = dd.newton(&y);
        match nw.x {
            Some(r) if nw.converged() => r,
            _ => x.to_vec(),
        }
    }

    /// `F`'s relative residual in double-double at `x` refined ([`Self::refined`]).
    pub fn residual(&self, x: &[C64]) -> f64 {
        dd_relative_residual(&self.original, &self.refined(x))
    }

    /// Whether the solution `x` of the square system solves the original one.
    pub fn solves_original(&self, x: &[C64]) -> bool {
        self.residual(x) <= EXCESS_RESIDUAL_TOL
    }
}

impl Overdetermined {
    /// The key `excess` for an endpoint's JSON line: whether a finite endpoint of the
    /// square system fails the original equations (absent for other endpoints).
    pub fn endpoint_keys(
        &self,
        e: &crate::post::Endpoint,
    ) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        if let (true, Some(x)) = (e.status.is_finite(), &e.coordinates) {
            m.insert("excess".into(), (!self.solves_original(x)).into());
        }
        m
    }

    /// Removes the excess solutions from `summary` (its solutions and the counts of
    /// finite, nonsingular, singular and real ones); returns how many there were.
    pub fn remove_excess(&self, summary: &mut crate::report::Summary) -> u64 {
        let (kept, excess): (Vec<_>, Vec<_>) = std::mem::take(&mut summary.solutions)
            .into_iter()
            .partition(|s| self.solves_original(&s.coordinates));
        for s in &excess {
            summary.uncount(s);
        }
        summary.solutions = kept;
        summary.system = self.original.name.clone();
        excess.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Double-double evaluation agrees with the direct one and resolves a residual that
    /// cancels in double.
    #[test]
    fn dd_residual_resolves_cancellation() {
        let sys =
            crate::system::parse_str("variables: [x, y]\nequations: ['x^2 - 2', 'x*y - 1']", "t")
                .unwrap();
        let x = [C64::new(2f64.sqrt(), 0.0), C64::new(0.5f64.sqrt(), 0.0)];
        let r = dd_relative_residual(&sys, &x);
        assert!(r < 1e-15, "{r}");
        let off = [C64::new(1.5, 0.0), C64::new(0.5, 0.0)];
        let direct = sys.relative_residual(&off);
        assert!((dd_relative_residual(&sys, &off) - direct).abs() < 1e-12 * direct);
    }
}
