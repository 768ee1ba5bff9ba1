//! Binomial start systems `x^V = b` in log coordinates.

mod common_families;
use num_complex::Complex64;
use pathtrack::start::polyhedral::{
    binomial_solutions, exact, for_each_binomial_solution, mixed_cells, Lifting, Supports,
};
use rand::{Rng, SeedableRng};
use std::f64::consts::PI;
use std::ops::ControlFlow;

/// Checks `V z − log b ∈ 2πi Z^n` (real part ~0, imaginary part an integer multiple of
/// 2π after rounding) and pairwise distinctness of `x = exp(z)`.
fn check(v: &[Vec<i64>], log_b: &[Complex64], sols: &[Vec<Complex64>]) {
    let n = v.len();
    for z in sols {
        for k in 0..n {
            let r: Complex64 = (0..n).map(|j| z[j] * v[k][j] as f64).sum::<Complex64>() - log_b[k];
            let scale = 1.0 + v[k].iter().map(|&a| a.unsigned_abs() as f64).sum::<f64>() * 4.0;
            assert!(r.re.abs() < 1e-12 * scale, "real residual {}", r.re);
            let m = (r.im / (2.0 * PI)).round();
            assert!(
                (r.im - 2.0 * PI * m).abs() < 1e-12 * scale,
                "imaginary residual {} not a multiple of 2π",
                r.im
            );
        }
    }
    for i in 0..sols.len() {
        for j in 0..i {
            // distinct modulo 2πi Z^n: some coordinate differs in modulus or in angle
            let differs = (0..n).any(|k| {
                let d = sols[i][k] - sols[j][k];
                let dim = (d.im / (2.0 * PI)).round();
                d.re.abs() > 1e-9 || (d.im - 2.0 * PI * dim).abs() > 1e-9
            });
            assert!(differs, "solutions {i} and {j} coincide");
        }
    }
}

#[test]
fn random_binomials() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    let mut tried = 0;
    while tried < 300 {
        let n = rng.random_range(1..=5);
        let v: Vec<Vec<i64>> = (0..n)
            .map(|_| (0..n).map(|_| rng.random_range(-4..=4)).collect())
            .collect();
        let d = exact::abs_det(&v).unwrap();
        if d == 0 || d > 50 {
            continue;
        }
        tried += 1;
        let log_b: Vec<Complex64> = (0..n)
            .map(|_| Complex64::new(rng.random_range(-2.0..2.0), rng.random_range(-PI..PI)))
            .collect();
        let sols = binomial_solutions(&v, &log_b).unwrap();
        assert_eq!(sols.len() as u128, d, "count must be |det V|");
        check(&v, &log_b, &sols);
    }
}

#[test]
fn streaming_can_stop_and_errors() {
    let v = vec![vec![3, 1], vec![0, 4]];
    let lb = vec![Complex64::new(0.1, 0.2), Complex64::new(-0.3, 1.0)];
    let mut k = 0;
    for_each_binomial_solution(&v, &lb, &mut |_| {
        k += 1;
        if k == 5 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .unwrap();
    assert_eq!(k, 5);
    assert_eq!(binomial_solutions(&v, &lb).unwrap().len(), 12);
    // singular, wrong shapes, non-finite
    assert!(binomial_solutions(&[vec![1, 2], vec![2, 4]], &lb).is_err());
    assert!(binomial_solutions(&[vec![1, 2]], &lb).is_err());
    let bad = vec![Complex64::new(f64::NEG_INFINITY, 0.0), lb[1]];
    assert!(binomial_solutions(&v, &bad).is_err());
}

/// Start points of every cell of cyclic-5 with random coefficients: `Σ |det| = 70`
/// solutions, each solving its cell's binomial system `c0 x^a0 + c1 x^a1 = 0`.
#[test]
fn cells_to_start_points() {
    let sys = common_families::cyclic(5);
    let s = Supports::from_system(&sys).unwrap();
    let l = Lifting::random(&s, 4);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let coeffs: Vec<Vec<Complex64>> = s
        .groups
        .iter()
        .map(|g| {
            g.iter()
                .map(|_| Complex64::from_polar(1.0, rng.random_range(0.0..2.0 * PI)))
                .collect()
        })
        .collect();
    let mut total = 0;
    mixed_cells(&s, &l, 1, &mut |cell| {
        let n = s.n;
        let mut v = Vec::new();
        let mut lb = Vec::new();
        for e in 0..n {
            let g = s.group_of[e];
            let [a0, a1] = cell.pairs[e];
            v.push(
                s.groups[g][a1]
                    .iter()
                    .zip(&s.groups[g][a0])
                    .map(|(x, y)| x - y)
                    .collect::<Vec<i64>>(),
            );
            lb.push((-coeffs[g][a0] / coeffs[g][a1]).ln());
        }
        let sols = binomial_solutions(&v, &lb).unwrap();
        assert_eq!(sols.len() as u64, cell.volume);
        for z in &sols {
            let x: Vec<Complex64> = z.iter().map(|c| c.exp()).collect();
            for e in 0..n {
                let g = s.group_of[e];
                let [a0, a1] = cell.pairs[e];
                let mono = |a: &[i64]| -> Complex64 {
                    a.iter().zip(&x).map(|(&k, xi)| xi.powi(k as i32)).product()
                };
                let r =
                    coeffs[g][a0] * mono(&s.groups[g][a0]) + coeffs[g][a1] * mono(&s.groups[g][a1]);
                let scale = mono(&s.groups[g][a0]).norm();
                assert!(r.norm() < 1e-10 * scale.max(1.0), "residual {}", r.norm());
            }
        }
        total += sols.len();
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(total, 70);
}
