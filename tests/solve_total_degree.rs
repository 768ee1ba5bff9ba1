//! Total-degree solves of the benchmark families: exact solution counts from the
//! literature, residuals, and systems with solutions at infinity.

use num_complex::Complex64 as C64;
use pathtrack::post::Status;
use pathtrack::report::Summary;
use pathtrack::solver::{solve_cpu, StartKind};
use pathtrack::system::{self, System};

fn shipped(name: &str) -> System {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("systems")
        .join(format!("{name}.yaml"));
    system::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// Solves and checks: `finite` distinct finite solutions, all nonsingular with residual
/// < 1e-10, no failed path, every path accounted for.
fn check(sys: &System, finite: u64) -> Summary {
    let (s, eps) = solve_cpu(sys, StartKind::TotalDegree, 1).unwrap();
    assert_eq!(s.failed, 0, "{}: failed paths", sys.name);
    assert_eq!(s.finite, finite, "{}: finite solutions {s:?}", sys.name);
    assert_eq!(s.nonsingular, finite, "{}: nonsingular {s:?}", sys.name);
    assert_eq!(s.paths, eps.len() as u64);
    assert_eq!(
        s.paths,
        s.at_infinity + s.nonsingular + s.singular + s.failed + s.duplicate_paths
    );
    for e in eps.iter().filter(|e| e.status == Status::Nonsingular) {
        assert!(
            e.residual < 1e-10,
            "{}: residual {} on path {}",
            sys.name,
            e.residual,
            e.path
        );
        // independent check of the residual: direct evaluation of the parsed system
        let x = e.coordinates.as_ref().unwrap();
        let r = sys.relative_residual(x);
        assert!(r < 1e-10);
    }
    s
}

#[test]
fn katsura_5_to_8_have_2_to_the_n_solutions() {
    for n in 5..=8 {
        let s = check(&shipped(&format!("katsura{n}")), 1 << n);
        assert_eq!(s.at_infinity, 0);
        assert!(s.phases.gap_recovery.is_none(), "{s:?}");
    }
}

#[test]
fn noon_3_to_5_have_3_to_the_n_minus_2n_solutions() {
    for n in 3..=5u32 {
        check(&shipped(&format!("noon{n}")), 3u64.pow(n) - 2 * n as u64);
    }
}

#[test]
fn eco_5_to_8_have_2_to_the_n_minus_2_solutions() {
    for n in 5..=8 {
        let s = check(&shipped(&format!("eco{n}")), 1 << (n - 2));
        // The first pass reaches the mixed volume: no path is tracked again for a gap
        // (`solver::gap`).
        assert!(s.phases.gap_recovery.is_none(), "{s:?}");
    }
}

#[test]
fn cyclic_5_to_7() {
    check(&shipped("cyclic5"), 70);
    check(&shipped("cyclic6"), 156);
    // 5040 paths, 4116 of them to the positive-dimensional set at infinity; some finite
    // solutions have huge norm and look like diverging paths until s is tiny (a Cauchy
    // endgame started there once lost 36 of them).
    let s = check(&shipped("cyclic7"), 924);
    assert_eq!(s.at_infinity, 5040 - 924);
    assert!(s.phases.gap_recovery.is_none(), "{s:?}");
}

#[test]
fn chandra_4_to_6_have_2_to_the_n_minus_1_solutions() {
    for n in 4..=6 {
        check(&shipped(&format!("chandra{n}")), 1 << (n - 1));
    }
}

#[test]
fn reimer_4_has_36_solutions() {
    check(&shipped("reimer4"), 36);
}

#[test]
fn dense_random_system_of_degrees_2_3_2_has_12_solutions() {
    let text = "variables: [x, y, z]\nequations:\n  - \"3*x^2 - 7*x*y + 2*y*z - 5*z^2 + 4*x - 9*y + z - 6\"\n  - \"2*x^3 + 5*y^3 - 4*z^3 + x^2*y - 8*x*y*z + 3*y^2*z - 7*x^2 + 6*y - 2*z + 11\"\n  - \"-4*x^2 + 9*y^2 + z^2 - 3*x*z + 5*y*z + 2*x - 7*z + 1\"\n";
    let sys = system::parse_str(text, "dense232").unwrap();
    check(&sys, 12);
}

#[test]
fn two_concentric_circles_have_all_solutions_at_infinity() {
    let text = "variables: [x, y]\nequations: [\"x^2 + y^2 - 1\", \"x^2 + y^2 - 4\"]\n";
    let sys = system::parse_str(text, "circles").unwrap();
    let (s, eps) = solve_cpu(&sys, StartKind::TotalDegree, 3).unwrap();
    assert_eq!(
        (s.paths, s.finite, s.at_infinity, s.failed),
        (4, 0, 4, 0),
        "{s:?}"
    );
    // the points at infinity are (1 : ±i : 0)
    for e in &eps {
        let y = &e.projective;
        assert!(y[2].norm() < 1e-3);
        let r = y[1] / y[0];
        assert!(
            (r - C64::new(0.0, 1.0)).norm() < 1e-3 || (r + C64::new(0.0, 1.0)).norm() < 1e-3,
            "{r}"
        );
    }
}

/// Cyclic-8 from the total-degree start (40,320 paths, most to infinity or to its curve of
/// degree 144): every endpoint counted nonsingular is one of the 1,152 isolated roots that
/// the polyhedral start finds, distinct. Paths tracked in double-double onto singular
/// points of the curve contract linearly (4e-12, 2e-12, 1e-12, …) and Newton from points
/// near it wanders after dropping quadratically; counting both as nonsingular would give
/// 1,613 "nonsingular" for seed 1. And every root is reached: 11 of norm 15.7 come from
/// the gap recovery (tests/cyclic8_total_degree.rs). 100–150 s on two cores.
#[test]
fn cyclic8_total_degree_nonsingular_endpoints_are_isolated_roots() {
    let sys = shipped("cyclic8");
    let (poly, poly_eps) = solve_cpu(&sys, StartKind::Polyhedral, 1).unwrap();
    assert_eq!(poly.nonsingular, 1152, "{poly:?}");
    let roots: Vec<Vec<C64>> = poly_eps
        .into_iter()
        .filter(|e| e.status == Status::Nonsingular)
        .map(|e| e.coordinates.unwrap())
        .collect();
    let (s, eps) = solve_cpu(&sys, StartKind::TotalDegree, 1).unwrap();
    let found: Vec<&pathtrack::post::Endpoint> = eps
        .iter()
        .filter(|e| e.status == Status::Nonsingular)
        .collect();
    assert_eq!((s.nonsingular, found.len()), (1152, 1152), "{s:?}");
    let mut hit = vec![false; roots.len()];
    for e in &found {
        let x = e.coordinates.as_ref().unwrap();
        let scale = x.iter().map(|z| z.norm()).fold(1.0, f64::max);
        let close = |r: &Vec<C64>| x.iter().zip(r).all(|(a, b)| (a - b).norm() < 1e-8 * scale);
        let k = roots.iter().position(close);
        let k = k.unwrap_or_else(|| panic!("not an isolated root: {e:?}"));
        assert!(!hit[k], "root {k} reached twice: {e:?}");
        hit[k] = true;
    }
}
