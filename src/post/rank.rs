//! Numerical rank of a system's Jacobian at a point: how many singular values of `∂F/∂x`,
//! with each equation's row scaled by its size at the point, exceed a tolerance. A full rank
//! is proven cheaply from an LU inverse where it is clear; the singular values decide the rest.

use crate::system::{monomial_partials, PartialScratch, System};
use num_complex::Complex64 as C64;

/// Numerical rank of `∂F/∂x` at `x`: singular values of the Jacobian with row k divided by
/// `max|c| + Σ|c·x^a|` (equation k's size at `x`, [`crate::system::Polynomial::size_at`]:
/// the same for any scaling of the equation) that exceed `tol`.
pub fn numerical_rank(system: &System, x: &[C64], tol: f64) -> usize {
    let n = x.len();
    let m = system.equations.len();
    // Column-major, as `linalg::small` factors it.
    let mut a = vec![C64::new(0.0, 0.0); m * n];
    let x_abs = crate::system::moduli(x);
    let mut scratch = PartialScratch::default();
    for (k, f) in system.equations.iter().enumerate() {
        for t in &f.terms {
            monomial_partials(&t.exponents, x, &mut scratch, |j, e, d| {
                a[j * m + k] += t.coeff * e as f64 * d;
            });
        }
        let w = f.size_at_moduli(&x_abs);
        (0..n).for_each(|j| a[j * m + k] /= w);
    }
    if m == n && full_rank_by_inverse(n, &a, tol) {
        return n;
    }
    let j = nalgebra::DMatrix::<C64>::from_column_slice(m, n, &a);
    j.singular_values().iter().filter(|&&s| s > tol).count()
}

/// True when the square `n × n` matrix `a` (column-major) has every singular value above
/// `tol`, proven by the inverse from an LU factorization: `σ_min = 1/‖A⁻¹‖₂ ≥ 1/‖A⁻¹‖_F`.
/// Asked only where the computed inverse is accurate to a few digits (`‖A‖_F·‖A⁻¹‖_F`
/// below [`PROOF_COND_MAX`]) and with a factor 2 to spare. A quarter of the cost of the
/// singular values of a 14 × 14 complex matrix; false means "not proven" (the singular
/// values decide).
fn full_rank_by_inverse(n: usize, a: &[C64], tol: f64) -> bool {
    use crate::linalg::small::{lu_factor, lu_solve};
    let frobenius = |v: &[C64]| v.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
    let norm_a = frobenius(a);
    let mut lu = a.to_vec();
    let mut piv = vec![0usize; n];
    if !lu_factor(n, &mut lu, &mut piv).is_finite() {
        return false;
    }
    let mut inv = vec![C64::new(0.0, 0.0); n * n];
    for i in 0..n {
        inv[i * n + i] = C64::new(1.0, 0.0);
    }
    lu_solve(n, &lu, &piv, &mut inv, n);
    let norm_inv = frobenius(&inv);
    norm_inv.is_finite() && norm_a * norm_inv < PROOF_COND_MAX && 2.0 * tol * norm_inv < 1.0
}

/// Largest `‖A‖_F·‖A⁻¹‖_F` at which [`full_rank_by_inverse`] trusts the computed inverse:
/// its relative error is about `n·ε·κ` (LU with partial pivoting), below 1e-3 here.
const PROOF_COND_MAX: f64 = 1e11;

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;
    use rand::{Rng, SeedableRng};

    /// `U·diag(σ)·V` for random unitary `U`, `V` (QR of Gaussian matrices), column-major.
    fn with_singular_values(sigma: &[f64], rng: &mut rand_chacha::ChaCha8Rng) -> Vec<C64> {
        let n = sigma.len();
        let mut gauss = || {
            DMatrix::<C64>::from_fn(n, n, |_, _| {
                C64::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5)
            })
        };
        let u = gauss().qr().q();
        let v = gauss().qr().q();
        let d = DMatrix::<C64>::from_fn(n, n, |i, j| {
            if i == j {
                C64::new(sigma[i], 0.0)
            } else {
                C64::new(0.0, 0.0)
            }
        });
        (u * d * v).as_slice().to_vec()
    }

    /// The inverse's proof never claims a full rank that the singular values deny, and it
    /// claims it whenever σ_min is more than `2√n` times the tolerance (its bound
    /// `1/‖A⁻¹‖_F ≥ σ_min/√n`, with its factor 2): sizes 2–16, σ_min from 1e-13 to 1e-6
    /// around the tolerance 1e-10, condition numbers up to 1e13.
    #[test]
    fn the_inverse_proves_full_rank_exactly_where_the_singular_values_do() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let tol = 1e-10;
        let (mut proven, mut checked) = (0, 0);
        for n in 2..=16 {
            for k in 0..40 {
                let smin = 10f64.powf(-13.0 + 7.0 * k as f64 / 39.0);
                let smax: f64 = if k % 3 == 0 { 1.0 } else { 1e3 };
                let mut sigma: Vec<f64> = (0..n)
                    .map(|_| 10f64.powf(rng.random::<f64>() * smax.log10()).max(smin))
                    .collect();
                sigma[0] = smin;
                let a = with_singular_values(&sigma, &mut rng);
                let sv = DMatrix::<C64>::from_column_slice(n, n, &a).singular_values();
                let true_min = sv.iter().fold(f64::INFINITY, |m, &s| m.min(s));
                let claim = full_rank_by_inverse(n, &a, tol);
                checked += 1;
                if claim {
                    proven += 1;
                    assert!(
                        true_min > tol,
                        "n = {n}: σ_min = {true_min:e} proven above {tol:e}"
                    );
                } else {
                    let cond = sv.max() / true_min;
                    assert!(
                        true_min <= 2.0 * (n as f64).sqrt() * tol * 1.01
                            || cond > PROOF_COND_MAX / n as f64,
                        "n = {n}: σ_min = {true_min:e}, κ = {cond:e} not proven"
                    );
                }
            }
        }
        assert!(proven > checked / 3, "{proven} of {checked} proven");
    }

    /// The rank of `x² − y², x·y` at points approaching the origin (where the Jacobian
    /// vanishes) and of `x + y, 2x + 2y + z², z` (rank 2 everywhere), against the count of
    /// singular values above the tolerance.
    #[test]
    fn ranks_of_small_systems() {
        let sys = crate::system::parse_str(
            "variables: [x, y]\nequations: [\"x^2 - y^2\", \"x*y\"]\n",
            "t.yaml",
        )
        .unwrap();
        let at = |v: f64| [C64::new(v, 0.3 * v), C64::new(-0.7 * v, v)];
        assert_eq!(numerical_rank(&sys, &at(1.0), 1e-10), 2);
        assert_eq!(numerical_rank(&sys, &at(1e-12), 1e-10), 0);
        let sys = crate::system::parse_str(
            "variables: [x, y, z]\nequations: [\"x + y\", \"2*x + 2*y + z^2\", \"z\"]\n",
            "t.yaml",
        )
        .unwrap();
        let p = [C64::new(0.3, 0.1), C64::new(-0.2, 0.5), C64::new(0.0, 0.0)];
        assert_eq!(numerical_rank(&sys, &p, 1e-10), 2);
    }
}
