//! Univariate systems of high degree: `x^d + x² − 1` has `d` simple roots near the unit
//! circle (spacing about `2π/d`), and `(x − 1)^m` expanded one root of multiplicity `m`.
//!
//! - A band of paths of the total-degree start jumped each onto its neighbour's root (the
//!   vector field is nearly invariant under rotation by `e^{2πi/d}`): at d = 700 and 1000
//!   (seed 1) two roots were lost, and the recovery rounds moved the band by one path per
//!   round (`solver::cascade`).
//! - From d ≈ 2,150 on the projective refinement underflows (terms of size `2^{−d/2}` at the
//!   unit point) and every root was reported singular (`post::affine`).
//! - Paths stalled inside the disc that double precision cannot resolve around a root of
//!   multiplicity 24 were reported failed.
//! - From multiplicity 27 on the default start failed 1 to 6 paths: the fallback's
//!   polyhedral solve left its homotopy in the backend, so that recovery refined total-degree
//!   start points on the polyhedral homotopy ("start point did not converge"), and at the
//!   default t₀ = e^{−16} the target `(x − 1)^m` (coefficients summing to 2^m) moved the
//!   start points out of Newton's reach (`start::total_degree::start_delay`).

use num_complex::Complex64 as C64;
use pathtrack::post::Status;
use pathtrack::solver::{solve_cpu, StartKind};
use pathtrack::system::{parse_str, System};

fn univariate(name: &str, eq: &str) -> System {
    let text = format!("name: {name}\nvariables: [x]\nequations:\n  - \"{eq}\"\n");
    parse_str(&text, "test.yaml").unwrap()
}

/// All `d` roots of `x^d + x² − 1`, each once, nonsingular, with small residuals: `d`
/// distinct points that are roots of a polynomial of degree `d` are all of its roots.
fn all_simple_roots(d: usize, start: StartKind, seed: u64) {
    let sys = univariate(&format!("u{d}"), &format!("x^{d} + x^2 - 1"));
    let what = format!("d = {d}, {}, seed {seed}", start.name());
    let (s, eps) = solve_cpu(&sys, start, seed).unwrap();
    assert_eq!(
        (s.nonsingular, s.singular, s.failed, s.duplicate_paths),
        (d as u64, 0, 0, 0),
        "{what}: {s:?}"
    );
    assert_eq!(s.solutions.len(), d, "{what}");
    for e in eps.iter().filter(|e| e.status == Status::Nonsingular) {
        let x = e.coordinates.as_ref().unwrap();
        let r = sys.relative_residual(x);
        assert!(r < 1e-12, "{what}: path {} residual {r:.1e}", e.path);
    }
    // Distinct by far more than the clustering tolerance: sorted by argument, neighbours
    // are at least a tenth of the mean spacing apart.
    let mut roots: Vec<C64> = s.solutions.iter().map(|x| x.coordinates[0]).collect();
    roots.sort_by(|a, b| a.arg().total_cmp(&b.arg()));
    let gap = (0..d)
        .map(|i| (roots[i] - roots[(i + 1) % d]).norm())
        .fold(f64::INFINITY, f64::min);
    assert!(
        gap > 0.1 * std::f64::consts::TAU / d as f64,
        "{what}: gap {gap:.1e}"
    );
}

/// d = 700 and 1000, seeds 1–3 (seed 1 lost two roots of each to a band of jumped paths).
#[test]
fn every_simple_root_of_a_high_degree_trinomial() {
    for d in [700, 1000] {
        for seed in [1, 2, 3] {
            all_simple_roots(d, StartKind::Auto, seed);
        }
    }
}

/// d = 3000: beyond the range of the projective refinement (all 3,000 roots were singular).
#[test]
fn simple_roots_beyond_the_projective_range_are_nonsingular() {
    all_simple_roots(3000, StartKind::Auto, 1);
}

/// The measurements of docs (d = 5,000 and 10,000; run by hand).
#[test]
#[ignore]
fn every_simple_root_at_degrees_5000_and_10000() {
    for d in [5000, 10000] {
        all_simple_roots(d, StartKind::Auto, 1);
    }
}

/// `(x − 1)^m` expanded (binomial coefficients up to 2.7e6, exact in double).
fn expanded(m: u32) -> System {
    let binom = |k: u32| (1..=k).fold(1.0f64, |a, i| a * (m - k + i) as f64 / i as f64);
    let terms: Vec<String> = (0..=m)
        .map(|k| {
            let c = binom(k) * if (m - k) % 2 == 0 { 1.0 } else { -1.0 };
            format!("{c}*x^{k}")
        })
        .collect();
    univariate(&format!("mult{m}"), &terms.join(" + ").replace("+ -", "- "))
}

/// One singular solution of multiplicity `m` (the number of paths), none failed, within the
/// disc that double precision cannot resolve around 1.
fn one_root_of_multiplicity(m: u32, start: StartKind, seed: u64) {
    let (s, _) = solve_cpu(&expanded(m), start, seed).unwrap();
    let what = format!("m = {m}, {}, seed {seed}", start.name());
    assert_eq!(
        (s.finite, s.singular, s.nonsingular, s.failed),
        (1, 1, 0, 0),
        "{what}: {s:?}"
    );
    let sol = &s.solutions[0];
    assert_eq!(sol.multiplicity(), m as usize, "{what}");
    // Within the disc double precision cannot resolve: radius (2^m·ε)^{1/m} (0.44 at m = 24,
    // 0.53 at m = 28).
    let radius = (2f64.powi(m as i32) * f64::EPSILON).powf(1.0 / m as f64);
    assert!(
        (sol.coordinates[0] - C64::new(1.0, 0.0)).norm() < radius,
        "{what}: {:?}",
        sol.coordinates
    );
}

/// Multiplicity 24 from the default and the polyhedral start (2 of 24 paths failed before).
#[test]
fn a_root_of_multiplicity_24_takes_every_path() {
    for start in [StartKind::Auto, StartKind::Polyhedral] {
        one_root_of_multiplicity(24, start, 1);
    }
}

/// Multiplicities 27 and 28 from the default start, with the seeds that failed 2 and 6
/// paths before.
#[test]
fn roots_of_multiplicity_27_and_28_take_every_path() {
    one_root_of_multiplicity(27, StartKind::Auto, 1);
    one_root_of_multiplicity(28, StartKind::Auto, 2);
}
