//! Statuses that mean what they say: a path is at infinity only where a valuation or the
//! point itself shows it; duplicates of a root are refined before they are counted; simple
//! roots of sparse high-degree equations are nonsingular; a multiple root is one solution
//! with its multiplicity.

use num_complex::Complex64 as C64;
use pathtrack::post::Status;
use pathtrack::solver::{solve_collect, solve_cpu, SolveOptions, StartKind};
use pathtrack::system::{parse_str, System};

fn yaml(name: &str, vars: &[String], eqs: &[String]) -> System {
    let text = format!(
        "name: {name}\nvariables: [{}]\nequations:\n{}",
        vars.join(", "),
        eqs.iter()
            .map(|e| format!("  - \"{e}\"\n"))
            .collect::<String>()
    );
    parse_str(&text, "test.yaml").unwrap()
}

/// `x_k·x_{k+1}^9 − 1 (k < n−1), x_{n−1}^10 − 1`: mixed volume 10, every root on the unit
/// circle (`x_k = ζ`, ζ^10 = 1).
fn chain(n: usize) -> System {
    let vars: Vec<String> = (0..n).map(|k| format!("x{k}")).collect();
    let mut eqs: Vec<String> = (0..n - 1)
        .map(|k| format!("x{k}*x{}^9 - 1", k + 1))
        .collect();
    eqs.push(format!("x{}^10 - 1", n - 1));
    yaml(&format!("chain{n}"), &vars, &eqs)
}

/// No path of the chain is at infinity by a guess: a path that ends away from the target
/// system is failed with its reason, unless its valuation shows it diverging or the point
/// reached is at infinity (`|y_n| < 1e-8`). Every finite point reported is a root.
#[test]
fn a_path_that_does_not_converge_is_failed_not_at_infinity() {
    for n in 4..=8 {
        for seed in 1..=3 {
            let (s, eps) = solve_cpu(&chain(n), StartKind::Polyhedral, seed).unwrap();
            let what = format!("chain-{n} seed {seed}");
            assert_eq!(s.paths, 10, "{what}");
            assert!(s.finite <= 10, "{what}: {s:?}");
            for e in &eps {
                let yn = e.projective.last().map_or(1.0, |z| z.norm());
                let reason = e.reason.as_deref().unwrap_or("");
                if e.status == Status::AtInfinity {
                    let diverging = e.valuation.is_some_and(|v| v > 0.08);
                    assert!(
                        diverging || yn < 1e-8,
                        "{what}: path {} at infinity with |y_n| = {yn:.1e}, {reason}",
                        e.path
                    );
                }
                if reason.starts_with("no convergence") {
                    assert_eq!(e.status, Status::Failed, "{what}: path {}", e.path);
                }
                if let Some(x) = e.coordinates.as_ref() {
                    for z in x {
                        assert!((z.norm() - 1.0).abs() < 1e-8, "{what}: {x:?}");
                    }
                }
            }
        }
    }
}

/// katsura-5 with the m-hom start `{u0 u1 u2}{u3 u4 u5}` (352 paths, 32 roots): paths that
/// reach t = 1 at infinity were refined by Newton onto other paths' roots without
/// converging (residual 8e-9, 3e-8 from the root) and counted as 34–36 solutions.
#[test]
fn katsura5_mhom_has_32_solutions_for_every_seed() {
    let sys = pathtrack::system::families::generate("katsura", 5).unwrap();
    let partition =
        pathtrack::start::mhom::Partition::parse("{u0 u1 u2}{u3 u4 u5}", &sys.variables).unwrap();
    for seed in 1..=5 {
        let opts = SolveOptions {
            start: StartKind::Mhom,
            seed,
            partition: Some(partition.clone()),
            ..Default::default()
        };
        let mut backend = pathtrack::backend::cpu::CpuBackend::new(0).unwrap();
        let (s, eps) = solve_collect(&sys, &opts, &mut backend).unwrap();
        assert_eq!((s.nonsingular, s.finite), (32, 32), "seed {seed}: {s:?}");
        assert_eq!(s.duplicate_paths, 0, "seed {seed}");
        for e in eps.iter().filter(|e| e.status == Status::Nonsingular) {
            let r = sys.relative_residual(e.coordinates.as_ref().unwrap());
            assert!(r < 1e-13, "seed {seed} path {}: residual {r:.1e}", e.path);
        }
    }
}

/// `x^d + x² − 1`: d simple roots near the unit circle, each with a modest condition number
/// (the Bombieri–Weyl row weight alone gave 2^{d/2}: infinite, or above every threshold).
#[test]
fn simple_roots_of_a_sparse_high_degree_equation_are_nonsingular() {
    for d in [300, 500] {
        let sys = yaml("tri", &["x".into()], &[format!("x^{d} + x^2 - 1")]);
        let (s, eps) = solve_cpu(&sys, StartKind::Polyhedral, 1).unwrap();
        assert_eq!(
            (s.nonsingular, s.singular, s.failed),
            (d, 0, 0),
            "d = {d}: {s:?}"
        );
        for e in &eps {
            assert!(
                e.condition < 1e4,
                "d = {d}, path {}: κ = {:.1e}",
                e.path,
                e.condition
            );
        }
        for sol in &s.solutions {
            assert_eq!(sol.rank, Some(1));
        }
    }
}

/// `(x − 1)^m` expanded: one singular solution of multiplicity m at 1, whether its paths
/// came through the Cauchy endgame or stalled where double precision sees a disc of radius
/// `(2^m·ε)^{1/m}` of roots.
#[test]
fn a_root_of_high_multiplicity_is_one_solution() {
    for m in [12u32, 14, 16] {
        let binom = |k: u32| (1..=k).fold(1.0f64, |a, i| a * (m - k + i) as f64 / i as f64);
        let terms: Vec<String> = (0..=m)
            .map(|k| {
                let c = binom(k) * if (m - k) % 2 == 0 { 1.0 } else { -1.0 };
                format!("{c}*x^{k}")
            })
            .collect();
        let eq = terms.join(" + ").replace("+ -", "- ");
        let sys = yaml("mult", &["x".into()], &[eq]);
        let (s, _) = solve_cpu(&sys, StartKind::Polyhedral, 1).unwrap();
        assert_eq!(
            (s.finite, s.singular, s.failed),
            (1, 1, 0),
            "m = {m}: {s:?}"
        );
        let sol = &s.solutions[0];
        assert_eq!(sol.multiplicity(), m as usize, "m = {m}");
        // Within the disc that double precision cannot resolve: a Cauchy estimate of winding
        // number 12 for the root of multiplicity 14 lands 0.02 from it.
        assert!(
            (sol.coordinates[0] - C64::new(1.0, 0.0)).norm() < 0.05,
            "m = {m}"
        );
    }
}
