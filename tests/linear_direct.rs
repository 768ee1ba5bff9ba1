//! A square linear system is solved by one LU with iterative refinement
//! (`solver::linear`), with no homotopy, evaluator or refiner built: those tables are dense in
//! n per equation, and building them took 25 s at n = 300 and over 100 s at n = 500.

use num_complex::Complex64 as C64;
use pathtrack::post::Status;
use pathtrack::solver::linear::DIRECT_REASON;
use pathtrack::solver::{solve_cpu, StartKind};
use pathtrack::system::{parse_str, System};
use rand::{Rng, SeedableRng};

/// `n` random dense equations `Σ a_kj·x_j + b_k` (coefficients uniform in [−1, 1]).
fn random_linear(n: usize, seed: u64) -> System {
    linear_with(n, seed, false, false)
}

/// [`random_linear`], with complex coefficients (`complex`) and each equation multiplied by
/// a random factor `10^u`, `u` uniform in [−30, 30] (`scaled`).
fn linear_with(n: usize, seed: u64, complex: bool, scaled: bool) -> System {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    // The factors from a generator of their own: the same equations, scaled or not.
    let mut factors = rand_chacha::ChaCha8Rng::seed_from_u64(seed + 1000);
    let vars: Vec<String> = (0..n).map(|j| format!("x{j}")).collect();
    let coeff = |rng: &mut rand_chacha::ChaCha8Rng, scale: f64| {
        let re: f64 = rng.random_range(-1.0..1.0);
        if complex {
            let im: f64 = rng.random_range(-1.0..1.0);
            format!("({:e} + {:e}*I)", re * scale, im * scale)
        } else {
            format!("({:e})", re * scale)
        }
    };
    let eqs: String = (0..n)
        .map(|_| {
            let scale = if scaled {
                10f64.powf(factors.random_range(-30.0..30.0))
            } else {
                1.0
            };
            let terms: Vec<String> = vars
                .iter()
                .map(|v| format!("{}*{v}", coeff(&mut rng, scale)))
                .collect();
            let b = coeff(&mut rng, scale);
            format!("  - \"{} + {b}\"\n", terms.join(" + "))
        })
        .collect();
    let text = format!(
        "name: lin{n}\nvariables: [{}]\nequations:\n{eqs}",
        vars.join(", ")
    );
    parse_str(&text, "lin.yaml").unwrap()
}

/// Largest residual of an equation against its own size at `x` (`Σ|a_kj·x_j| + |b_k|`).
fn own_residual(sys: &System, x: &[C64]) -> f64 {
    sys.equations
        .iter()
        .map(|f| {
            let size: f64 = f
                .terms
                .iter()
                .map(|t| {
                    let j = t.exponents.iter().position(|&a| a != 0);
                    t.coeff.norm() * j.map_or(1.0, |j| x[j].norm())
                })
                .sum();
            f.eval(x).norm() / size
        })
        .fold(0.0, f64::max)
}

/// One nonsingular solution with residual at the rounding level, reached with no step of
/// a tracker, for several sizes and seeds.
#[test]
fn linear_systems_are_solved_directly() {
    for (n, seed) in [(3, 1), (40, 2), (200, 3)] {
        let sys = random_linear(n, seed);
        let (s, eps) = solve_cpu(&sys, StartKind::Auto, seed).unwrap();
        assert_eq!(
            (s.paths, s.nonsingular, s.singular, s.failed),
            (1, 1, 0, 0),
            "n = {n}: {s:?}"
        );
        let e = &eps[0];
        assert_eq!(e.status, Status::Nonsingular);
        assert_eq!(e.steps(), 0, "n = {n}: the path was tracked");
        assert_eq!(e.reason.as_deref(), Some(DIRECT_REASON), "n = {n}");
        let x = e.coordinates.as_ref().unwrap();
        let r = own_residual(&sys, x);
        assert!(r < 1e-12, "n = {n}: residual {r:.1e}");
        let real = x
            .iter()
            .all(|v: &C64| v.im.abs() < 1e-10 * (1.0 + v.norm()));
        assert!(real, "n = {n}: real coefficients give a real solution");
    }
}

/// The class at larger sizes, complex coefficients and equations scaled by factors in
/// 10^[−30, 30]: answered by the LU (the reported method), with no homotopy built, residual
/// at the rounding level, and the scaled system's solution that of the unscaled one.
#[test]
fn large_and_scaled_linear_systems_are_answered_by_the_lu() {
    for (n, seed) in [(120, 4u64), (300, 5)] {
        let plain = linear_with(n, seed, true, false);
        let scaled = linear_with(n, seed, true, true);
        let mut xs = Vec::new();
        for sys in [&plain, &scaled] {
            let (s, eps) = solve_cpu(sys, StartKind::Auto, seed).unwrap();
            assert_eq!((s.paths, s.nonsingular, s.failed), (1, 1, 0), "n = {n}");
            let e = &eps[0];
            assert_eq!(e.reason.as_deref(), Some(DIRECT_REASON), "n = {n}");
            // Nothing was tracked: the backend was never given a homotopy.
            assert_eq!(
                (s.phases.backend_setup, s.phases.tracking),
                (0.0, 0.0),
                "n = {n}"
            );
            assert!(e.condition.is_finite() && e.condition < 1e8, "n = {n}");
            let x = e.coordinates.clone().unwrap();
            let r = own_residual(sys, &x);
            assert!(r < 1e-12, "n = {n}: residual {r:.1e}");
            xs.push(x);
        }
        let scale = 1.0 + xs[0].iter().map(|z| z.norm()).fold(0.0, f64::max);
        let d = xs[0]
            .iter()
            .zip(&xs[1])
            .map(|(u, v)| (u - v).norm())
            .fold(0.0, f64::max);
        assert!(
            d < 1e-9 * scale,
            "n = {n}: scaling moved the solution by {d:.1e}"
        );
    }
}

/// A linear system the LU cannot decide goes to the tracker, which classifies it: an
/// inconsistent one (two parallel equations) has its one path at infinity, and a
/// dependent one (an equation repeated) no nonsingular solution; neither is reported
/// solved by the LU.
#[test]
fn singular_linear_systems_are_left_to_the_tracker() {
    let inconsistent = parse_str(
        "variables: [x, y, z]\nequations:\n  - \"x + 2*y - z - 1\"\n  - \"2*x + 4*y - 2*z + 3\"\n  - \"x - y + z\"\n",
        "inc.yaml",
    )
    .unwrap();
    let (s, eps) = solve_cpu(&inconsistent, StartKind::Auto, 1).unwrap();
    assert_eq!((s.paths, s.finite, s.at_infinity), (1, 0, 1), "{s:?}");
    assert_ne!(eps[0].reason.as_deref(), Some(DIRECT_REASON));
    let dependent = parse_str(
        "variables: [x, y, z]\nequations:\n  - \"x + 2*y - z - 1\"\n  - \"2*x + 4*y - 2*z - 2\"\n  - \"x - y + z\"\n",
        "dep.yaml",
    )
    .unwrap();
    let (s, eps) = solve_cpu(&dependent, StartKind::Auto, 1).unwrap();
    assert_eq!((s.paths, s.nonsingular), (1, 0), "{s:?}");
    assert_ne!(eps[0].reason.as_deref(), Some(DIRECT_REASON));
}
