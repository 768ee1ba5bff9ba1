//! Solutions you can trust (issue #45): points of positive-dimensional components are named
//! as such and isolated singular solutions keep their multiplicity (the local dimension
//! test, `post::local_dimension`); coefficients a double cannot hold are reported.

use num_traits::FromPrimitive;
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
        // Nothing went wrong: no attention line, no key.
        assert!(s.attention.is_empty() && s.warnings.is_empty(), "{s:?}");
        assert!(serde_json::to_value(&s).unwrap().get("attention").is_none());
        assert!(!pathtrack::report::summary_table(&s).contains("ATTENTION"));
        let o = s
            .solutions
            .iter()
            .find(|x| x.status == Status::Singular)
            .unwrap();
        assert_eq!(o.multiplicity(), 11);
        assert!(near(&o.coordinates, &[0.0; 3], 1e-6));
    }
}

/// `∏_{k=1}^{20} (x − k)` expanded (Wilkinson): five of its integer coefficients are no
/// doubles (`311333643161390640` is read as `311333643161390656`), which the parse reports,
/// naming the equation and the coefficient; written as the product, the expansion's integer
/// arithmetic rounds and is reported the same way.
#[test]
fn wilkinson_coefficients_that_a_double_cannot_hold_are_reported() {
    use num_bigint::BigInt;
    let mut c = vec![BigInt::from(1)]; // coefficients of ∏(x − k), constant term first
    for k in 1..=20 {
        let mut next = vec![BigInt::from(0); c.len() + 1];
        for (i, a) in c.iter().enumerate() {
            next[i + 1] += a;
            next[i] -= a * k;
        }
        c = next;
    }
    let terms: Vec<String> = c
        .iter()
        .enumerate()
        .rev()
        .map(|(i, a)| format!("({a})*x^{i}"))
        .collect();
    let expanded = system(&format!(
        "variables: [x]\nequations:\n  - \"{}\"\n",
        terms.join(" + ")
    ));
    let w = pathtrack::system::parse::rounding::coefficient_warnings(&expanded);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("equation 1") && w[0].contains("311333643161390640"),
        "{w:?}"
    );
    // Exactly the coefficients that are no doubles are counted: the first named, the
    // others as "(k more roundings)".
    let inexact = c
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            let t = expanded.equations[0]
                .terms
                .iter()
                .find(|t| t.exponents == [*i as i32])
                .unwrap();
            BigInt::from_f64(t.coeff.re).unwrap() != **a
        })
        .count();
    assert!(inexact >= 2, "{inexact}");
    assert!(
        w[0].contains(&format!("({} more roundings)", inexact - 1)),
        "{w:?}"
    );
    let factors: Vec<String> = (1..=20).map(|k| format!("(x - {k})")).collect();
    let product = system(&format!(
        "variables: [x]\nequations:\n  - \"{}\"\n",
        factors.join("*")
    ));
    let w = pathtrack::system::parse::rounding::coefficient_warnings(&product);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("while expanding"), "{w:?}");
    // The solve's summary carries them, and says first thing that the counts are in doubt:
    // the rounding, and failed paths when there are any.
    let (s, _) = run(&expanded, StartKind::Polyhedral, 1, true);
    assert_eq!(s.warnings.len(), 1);
    let rounded = s.attention.iter().filter(|a| a.contains("rounded")).count();
    let failed = s.attention.iter().filter(|a| a.contains("failed")).count();
    assert_eq!(
        (rounded, failed),
        (1, (s.failed > 0) as usize),
        "{:?}",
        s.attention
    );
    let table = pathtrack::report::summary_table(&s);
    let first_count = table.find("start system").unwrap();
    assert!(
        table.find("ATTENTION").is_some_and(|p| p < first_count),
        "{table}"
    );
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(
        json["attention"].as_array().unwrap().len(),
        s.attention.len()
    );
}

/// Systems with small integer coefficients, and every shipped system, read without a
/// rounding warning: 20! itself is a double, and so is every coefficient of `(x + 1)^50`
/// below 2^53… but not `(x + 1)^60`'s middle binomials.
#[test]
fn exact_inputs_give_no_rounding_warning() {
    use pathtrack::system::parse::rounding::coefficient_warnings;
    let small = system(
        "variables: [x, y]\nequations:\n  - \"3*x^2 - 7*x*y + 12\"\n  - \"(x - 2*y)^5 - x/4\"\n",
    );
    assert!(coefficient_warnings(&small).is_empty());
    let fact20 = system("variables: [x]\nequations:\n  - \"x^2 - 2432902008176640000\"\n");
    assert!(coefficient_warnings(&fact20).is_empty());
    let p50 = system("variables: [x]\nequations:\n  - \"(x + 1)^50 - 2\"\n");
    assert!(coefficient_warnings(&p50).is_empty());
    let p60 = system("variables: [x]\nequations:\n  - \"(x + 1)^60 - 2\"\n");
    assert_eq!(coefficient_warnings(&p60).len(), 1);
    let third = system("variables: [x]\nequations:\n  - \"x/3 - 1\"\n");
    assert!(coefficient_warnings(&third)[0].contains("1/3"));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("systems");
    for f in std::fs::read_dir(&dir).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_some_and(|e| e == "yaml") {
            let s = pathtrack::system::load(&p).unwrap();
            assert!(
                coefficient_warnings(&s).is_empty(),
                "{}: {:?}",
                p.display(),
                coefficient_warnings(&s)
            );
        }
    }
}
