//! Random inputs shared by the evaluator tests (CPU and CUDA).

use num_complex::Complex64 as C64;
use pathtrack::homotopy::Homotopy;
use rand::Rng;

/// A complex number with real and imaginary parts uniform in [−1, 1).
pub fn rc(rng: &mut impl Rng) -> C64 {
    C64::new(
        rng.random::<f64>() * 2.0 - 1.0,
        rng.random::<f64>() * 2.0 - 1.0,
    )
}

/// A random mixed homotopy: n equations with 2..9 terms of random supports (exponents in
/// 0..3, or −2..3 when `laurent`) and random lifts in {0, ½, …, 2}.
pub fn random_homotopy(rng: &mut impl Rng, n: usize, laurent: bool) -> Homotopy {
    let lo = if laurent { -2 } else { 0 };
    let eqs = (0..n)
        .map(|_| {
            let m = rng.random_range(2..9);
            (0..m)
                .map(|_| {
                    let a: Vec<i32> = (0..n).map(|_| rng.random_range(lo..3)).collect();
                    (rc(rng), a, rng.random_range(0..5) as f64 * 0.5)
                })
                .collect()
        })
        .collect();
    Homotopy::from_affine_terms(n, eqs)
}
