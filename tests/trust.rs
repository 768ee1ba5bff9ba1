//! Solutions you can trust (issue #45): points of positive-dimensional components are named
//! as such and isolated singular solutions keep their multiplicity (the local dimension
//! test, `post::local_dimension`); coefficients a double cannot hold are reported.

use pathtrack::backend::cpu::CpuBackend;
use pathtrack::post::{Endpoint, Status};
use pathtrack::report::Summary;
use pathtrack::solver::{solve_collect, SolveOptions, StartKind};
use pathtrack::system::{parse_str, System};
use pathtrack::C64;

fn system(yaml: &str) -> System {
    parse_str(yaml, "test").expect("valid system")
}

fn run(
    sys: &System,
    start: StartKind,
    seed: u64,
    local_dimension: bool,
) -> (Summary, Vec<Endpoint>) {
    let mut backend = CpuBackend::new(2).unwrap();
    let opts = SolveOptions {
        start,
        seed,
        local_dimension,
        ..Default::default()
    };
    solve_collect(sys, &opts, &mut backend).unwrap()
}

fn near(x: &[C64], want: &[f64], tol: f64) -> bool {
    x.iter()
        .zip(want)
        .all(|(z, &w)| (z - C64::new(w, 0.0)).norm() <= tol)
}

/// `x·(y − 1)²·(y + 1), x·(x − y)`: the line `x = 0`, the nonsingular point (−1, −1) and
/// the isolated double point (1, 1) (its local ring is `C[x, y]/((y − 1)², x − y)`). Every
/// start and seed: one nonsingular solution, one singular solution of multiplicity 2, and
/// the other paths on the line, as `positive_dimensional` endpoints with `x = 0`. Without
/// the test those paths are singular solutions.
#[test]
fn a_line_is_told_from_an_isolated_double_point() {
    let sys =
        system("variables: [x, y]\nequations:\n  - \"x*(y - 1)^2*(y + 1)\"\n  - \"x*(x - y)\"\n");
    for (start, seed) in [
        (StartKind::Polyhedral, 1),
        (StartKind::Polyhedral, 2),
        (StartKind::TotalDegree, 1),
        (StartKind::TotalDegree, 3),
    ] {
        let what = format!("{start:?} seed {seed}");
        let (s, ends) = run(&sys, start, seed, true);
        assert_eq!(
            (s.nonsingular, s.singular, s.failed),
            (1, 1, 0),
            "{what}: {s:?}"
        );
        let ns = s
            .solutions
            .iter()
            .find(|x| x.status == Status::Nonsingular)
            .unwrap();
        assert!(near(&ns.coordinates, &[-1.0, -1.0], 1e-10), "{what}");
        let sg = s
            .solutions
            .iter()
            .find(|x| x.status == Status::Singular)
            .unwrap();
        assert!(near(&sg.coordinates, &[1.0, 1.0], 1e-6), "{what}");
        assert_eq!(sg.multiplicity(), 2, "{what}");
        let line: Vec<&Endpoint> = ends
            .iter()
            .filter(|e| e.status == Status::PositiveDimensional)
            .collect();
        assert!(!line.is_empty(), "{what}");
        assert_eq!(line.len() as u64, s.positive_dimensional, "{what}");
        assert_eq!(
            s.paths,
            1 + 2 + s.at_infinity + s.positive_dimensional,
            "{what}"
        );
        for e in &line {
            let x = e.coordinates.as_ref().unwrap();
            assert!(x[0].norm() < 1e-6, "{what}: path {} at {x:?}", e.path);
            assert!(e
                .reason
                .as_deref()
                .unwrap()
                .contains("local dimension test"));
        }
        // The same paths, tested no more: singular solutions, one per point of the line.
        let (off, _) = run(&sys, start, seed, false);
        assert_eq!(off.positive_dimensional, 0, "{what}");
        assert!(off.singular > 1, "{what}: {off:?}");
        assert_eq!(off.nonsingular, 1, "{what}");
    }
}

/// cbms1 (`x³ − yz, y³ − xz, z³ − xy`): the origin is an isolated solution of multiplicity
/// 11 with a zero Jacobian, the case where the first-order dual space (dimension 4) says
/// nothing: no sample is found near it, and it stays one singular solution of
/// multiplicity 11 beside the 16 nonsingular ones.
#[test]
fn cbms1_origin_keeps_multiplicity_11() {
    let sys = system(
        "variables: [x, y, z]\nequations:\n  - \"x^3 - y*z\"\n  - \"y^3 - x*z\"\n  - \"z^3 - x*y\"\n",
    );
    for (start, seed) in [(StartKind::Polyhedral, 1), (StartKind::TotalDegree, 2)] {
        let (s, _) = run(&sys, start, seed, true);
        assert_eq!(
            (s.nonsingular, s.singular, s.positive_dimensional, s.failed),
            (16, 1, 0, 0),
            "{start:?} seed {seed}: {s:?}"
        );
        let o = s
            .solutions
            .iter()
            .find(|x| x.status == Status::Singular)
            .unwrap();
        assert_eq!(o.multiplicity(), 11);
        assert!(near(&o.coordinates, &[0.0; 3], 1e-6));
    }
}
