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

/// `(x + y + 1)^40 − 1` expanded, with `x − y`: 40 roots `x = y = (ζ − 1)/2`, ζ^40 = 1, of the
/// exact system. Its largest multinomial coefficients are no doubles and are rounded on
/// reading (the CLI warns), and the terms cancel beyond double precision near the roots (their
/// sum of moduli is 3^40 ≈ 1e19): the rounded system's roots lie up to 0.12 from the exact
/// ones. The solve must report the rounded system's 40 roots: each is checked by a Newton
/// step on `g(x) = f(x, x) = Σ_d c_d x^d` (the parsed coefficients) in double-double, and
/// 40 distinct roots of a polynomial of degree 40 are all of them. Before, the default start
/// reported 39 "nonsingular" solutions with no warning.
#[test]
fn an_expanded_power_with_rounded_coefficients_has_all_its_roots() {
    use pathtrack::eval::dd::Cdd;
    let n = 40u32;
    // n!/(i!·j!·(n−i−j)!) = C(n, i)·C(n − i, j), exact in u128.
    let binom = |a: u32, b: u32| (1..=b).fold(1u128, |c, k| c * (a - b + k) as u128 / k as u128);
    let multinomial = |i: u32, j: u32| binom(n, i) * binom(n - i, j);
    let mut terms = Vec::new();
    for i in 0..=n {
        for j in 0..=n - i {
            let c = multinomial(i, j);
            terms.push(format!("{c}*x^{i}*y^{j}"));
        }
    }
    let text = format!(
        "name: p40\nvariables: [x, y]\nequations:\n  - \"{} - 1\"\n  - \"x - y\"\n",
        terms.join(" + ")
    );
    let sys = parse_str(&text, "p40.yaml").unwrap();
    // The multinomial coefficients that are no doubles were rounded.
    let rounded = sys.equations[0]
        .terms
        .iter()
        .filter(|t| {
            let (i, j) = (t.exponents[0] as u32, t.exponents[1] as u32);
            i + j > 0 && t.coeff.re as u128 != multinomial(i, j)
        })
        .count();
    assert!(rounded > 0, "no coefficient was rounded");
    // g(x) = f(x, x): the parsed (rounded) coefficients summed in double-double by degree.
    let mut g = vec![Cdd::from(C64::new(0.0, 0.0)); n as usize + 1];
    for t in &sys.equations[0].terms {
        let d = (t.exponents[0] + t.exponents[1]) as usize;
        g[d] = g[d].add(Cdd::from(t.coeff));
    }
    for seed in [1, 2] {
        let (s, eps) = solve_cpu(&sys, StartKind::Auto, seed).unwrap();
        let what = format!("seed {seed}");
        assert_eq!(
            (s.nonsingular, s.singular, s.failed, s.solutions.len()),
            (40, 0, 0, 40),
            "{what}: {s:?}"
        );
        let mut roots: Vec<C64> = Vec::new();
        for e in eps.iter().filter(|e| e.status == Status::Nonsingular) {
            let x = e.coordinates.as_ref().unwrap();
            assert!((x[0] - x[1]).norm() < 1e-12, "{what}: x ≠ y");
            // Horner for g and g' in double-double; the Newton step |g/g'| at the root.
            let z = Cdd::from(x[0]);
            let (mut v, mut dv) = (g[n as usize], Cdd::from(C64::new(0.0, 0.0)));
            for d in (0..n as usize).rev() {
                dv = dv.mul(z).add(v);
                v = v.mul(z).add(g[d]);
            }
            let step = (v.to_c64() / dv.to_c64()).norm();
            assert!(
                step < 1e-10,
                "{what}: path {} Newton step {step:.1e}",
                e.path
            );
            roots.push(x[0]);
        }
        let gap = (0..roots.len())
            .flat_map(|i| (0..i).map(move |j| (i, j)))
            .map(|(i, j)| (roots[i] - roots[j]).norm())
            .fold(f64::INFINITY, f64::min);
        let distinct = s.solutions.len();
        assert!(distinct == 40 && gap > 1e-3, "{what}: gap {gap:.1e}");
    }
}

/// `(x − 1)^29` expanded: paths that stall inside the disc double precision cannot resolve
/// around 1 (radius ≈ 0.5) may be bridged back to double (`post::bridge`), but a bridged
/// point counts as singular only with a winding number from the Cauchy endgame: the points
/// of that disc all have tiny residuals, and each path would be a "distinct" singular
/// solution. One singular solution, no nonsingular one (2–4 paths still fail, reported).
#[test]
fn a_root_of_multiplicity_29_is_one_singular_solution() {
    let (s, _) = solve_cpu(&expanded(29), StartKind::Auto, 1).unwrap();
    assert_eq!((s.singular, s.nonsingular), (1, 0), "{s:?}");
    assert!(
        s.solutions[0].multiplicity() + s.failed as usize <= 29,
        "{s:?}"
    );
}
