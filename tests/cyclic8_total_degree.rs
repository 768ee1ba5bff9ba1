//! Cyclic-8 from the total-degree start (40,320 paths): its 1,152 isolated roots, all
//! nonsingular, and nothing else counted as a root, although most paths go to infinity and
//! 1,400-odd to its curve of degree 144 (issue #45).
//!
//! Two ways to get it wrong, each seen on some seed:
//! - a node of the curve (a point like `(a, −a, −a, b, a, −a, −b, a)·i`, a = 0.6436,
//!   b = 3.7511) reached by a path tracked to t = 1 in double-double, where Newton in
//!   double-double settles at κ_dd ≈ 1e18 and passes it as a nonsingular root (seeds 2–4:
//!   2–4 such paths); the local dimension test there finds the curve
//!   (`post::unproven_in_dd`, `post::on_a_component`);
//! - roots of norm 15.7 whose paths follow a face of valuation 1/8 down to s ≈ 1e-11 and
//!   are stopped as diverging at s ≈ 1e-8 (seed 1: 11 of them, at places 463–882 of
//!   37,595 candidates of the gap recovery by condition, after two fruitless batches had
//!   ended it at 240; `solver::gap::FRUITLESS_COND`).
//!
//! Every nonsingular endpoint is compared with the roots of the polyhedral start (seed 1,
//! 2,560 paths).

use num_complex::Complex64 as C64;
use pathtrack::backend::cpu::CpuBackend;
use pathtrack::post::{Endpoint, Status};
use pathtrack::report::Summary;
use pathtrack::solver::{solve_collect, solve_cpu, SolveOptions, StartKind};
use pathtrack::system::{self, System};

fn cyclic8() -> System {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("systems/cyclic8.yaml");
    system::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// The 1,152 roots of the polyhedral start (seed 1), pairwise distinct.
fn isolated_roots(sys: &System) -> Vec<Vec<C64>> {
    let (s, eps) = solve_cpu(sys, StartKind::Polyhedral, 1).unwrap();
    assert_eq!((s.nonsingular, s.singular, s.failed), (1152, 0, 0), "{s:?}");
    eps.into_iter()
        .filter(|e| e.status == Status::Nonsingular)
        .map(|e| e.coordinates.unwrap())
        .collect()
}

/// The index in `roots` of each nonsingular endpoint of `eps` (within 1e-8 of `1 + ‖x‖∞`;
/// the roots are 1e-3 apart and more), panicking on one that is none of them or on a root
/// reached twice.
fn roots_reached(roots: &[Vec<C64>], eps: &[Endpoint], what: &str) -> Vec<usize> {
    let mut hit = vec![false; roots.len()];
    let mut reached = Vec::new();
    for e in eps.iter().filter(|e| e.status == Status::Nonsingular) {
        let x = e.coordinates.as_ref().unwrap();
        let scale = x.iter().map(|z| z.norm()).fold(1.0, f64::max);
        let close = |r: &Vec<C64>| x.iter().zip(r).all(|(a, b)| (a - b).norm() < 1e-8 * scale);
        let k = roots
            .iter()
            .position(close)
            .unwrap_or_else(|| panic!("{what}: path {} is not an isolated root: {x:?}", e.path));
        assert!(!hit[k], "{what}: root {k} reached twice (path {})", e.path);
        hit[k] = true;
        reached.push(k);
    }
    reached
}

/// The points of the curve where paths end, on `V(F)` to a singular endpoint's accuracy.
fn check_curve_points(sys: &System, eps: &[Endpoint], what: &str) {
    for e in eps
        .iter()
        .filter(|e| e.status == Status::PositiveDimensional)
    {
        let x = e.coordinates.as_ref().expect("a point of the curve");
        assert!(sys.relative_residual(x) < 1e-4, "{what}: path {}", e.path);
    }
}

fn total_degree(sys: &System, seed: u64, only: Option<Vec<u64>>) -> (Summary, Vec<Endpoint>) {
    let opts = SolveOptions {
        seed,
        start: StartKind::TotalDegree,
        only,
        ..Default::default()
    };
    solve_collect(sys, &opts, &mut CpuBackend::new(0).unwrap()).unwrap()
}

/// The paths of seeds 2–4 that ended at nodes of the curve counted as nonsingular roots
/// (tracked alone, as `--paths` does: they end there the same way): none is counted as a
/// root; each is a point of the curve. About 10 s on two cores.
#[test]
fn nodes_of_the_curve_are_no_roots() {
    let sys = cyclic8();
    let roots = isolated_roots(&sys);
    for (seed, paths) in [
        (2, vec![12166, 17973]),
        (3, vec![1125, 24338, 35797]),
        (4, vec![4814, 7103, 33466, 39970]),
    ] {
        let what = format!("seed {seed}");
        let (s, eps) = total_degree(&sys, seed, Some(paths.clone()));
        assert!(
            roots_reached(&roots, &eps, &what).is_empty(),
            "{what}: {s:?}"
        );
        assert_eq!(
            s.positive_dimensional as usize,
            paths.len(),
            "{what}: {s:?}"
        );
        check_curve_points(&sys, &eps, &what);
    }
}

/// Seeds 1–5: exactly the 1,152 isolated roots, each by one path; no singular or failed
/// endpoint; the rest on the curve or at infinity. 100–150 s per seed on two cores (seed 1,
/// whose gap recovery re-tracks 1,260 paths, the longest); seed 1 runs in CI in
/// tests/solve_total_degree.rs.
#[test]
#[ignore]
fn seeds_1_to_5_reach_the_1152_roots_and_nothing_else() {
    let sys = cyclic8();
    let roots = isolated_roots(&sys);
    for seed in 1..=5 {
        let what = format!("seed {seed}");
        let (s, eps) = total_degree(&sys, seed, None);
        assert_eq!(
            roots_reached(&roots, &eps, &what).len(),
            1152,
            "{what}: {s:?}"
        );
        assert_eq!(
            (s.nonsingular, s.singular, s.failed),
            (1152, 0, 0),
            "{what}: {s:?}"
        );
        assert_eq!(
            s.paths,
            s.nonsingular + s.positive_dimensional + s.at_infinity,
            "{what}: {s:?}"
        );
        assert!(s.positive_dimensional > 0, "{what}: {s:?}");
        check_curve_points(&sys, &eps, &what);
    }
}
