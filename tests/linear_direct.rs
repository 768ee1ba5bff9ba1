//! A linear system is solved by one LU (`start::total_degree::linear_solution`), not tracked:
//! its total-degree path cost a dense solve of size n + 1 per Newton correction (n = 200:
//! 49 steps, 29 s; n = 500: over 45 s).

use num_complex::Complex64 as C64;
use pathtrack::post::Status;
use pathtrack::solver::{solve_cpu, StartKind};
use pathtrack::system::{parse_str, System};
use rand::{Rng, SeedableRng};

/// `n` random dense equations `Σ a_kj·x_j + b_k` (coefficients uniform in [−1, 1]).
fn random_linear(n: usize, seed: u64) -> System {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let vars: Vec<String> = (0..n).map(|j| format!("x{j}")).collect();
    let eqs: String = (0..n)
        .map(|_| {
            let terms: Vec<String> = vars
                .iter()
                .map(|v| format!("{:.6}*{v}", rng.random_range(-1.0..1.0)))
                .collect();
            let b: f64 = rng.random_range(-1.0..1.0);
            format!("  - \"{} + {b:.6}\"\n", terms.join(" + "))
        })
        .collect();
    let text = format!(
        "name: lin{n}\nvariables: [{}]\nequations:\n{eqs}",
        vars.join(", ")
    );
    parse_str(&text.replace("+ -", "- "), "lin.yaml").unwrap()
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
        let x = e.coordinates.as_ref().unwrap();
        // The residual of each equation against its own size (Σ|a_kj·x_j| + |b_k|).
        for f in &sys.equations {
            let size: f64 = f
                .terms
                .iter()
                .map(|t| {
                    let j = t.exponents.iter().position(|&a| a != 0);
                    t.coeff.norm() * j.map_or(1.0, |j| x[j].norm())
                })
                .sum();
            let r = f.eval(x).norm() / size;
            assert!(r < 1e-12, "n = {n}: residual {r:.1e}");
        }
        let real = x
            .iter()
            .all(|v: &C64| v.im.abs() < 1e-10 * (1.0 + v.norm()));
        assert!(real, "n = {n}: real coefficients give a real solution");
    }
}
