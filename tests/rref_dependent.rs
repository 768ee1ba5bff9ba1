//! `linalg::rref::dependent_equations`: equations whose Jacobian gradient at a random
//! point depends on earlier ones (exact Z/p route for rational coefficients, complex f64
//! route otherwise), and the solver's warning line.

use num_complex::Complex64;
use pathtrack::linalg::rref::dependent::dependency_warning;
use pathtrack::linalg::rref::dependent_equations;
use pathtrack::system::families::generate;
use pathtrack::system::{Polynomial, System, Term};

/// `a·p + b·q` (terms combined).
fn combo(a: Complex64, p: &Polynomial, b: Complex64, q: &Polynomial) -> Polynomial {
    let terms = p
        .terms
        .iter()
        .map(|t| Term {
            coeff: a * t.coeff,
            exponents: t.exponents.clone(),
        })
        .chain(q.terms.iter().map(|t| Term {
            coeff: b * t.coeff,
            exponents: t.exponents.clone(),
        }));
    Polynomial::from_terms(terms)
}

fn with_equations(base: &System, eqs: Vec<Polynomial>) -> System {
    System {
        name: base.name.clone(),
        description: base.description.clone(),
        variables: base.variables.clone(),
        equations: eqs,
    }
}

fn c(re: f64, im: f64) -> Complex64 {
    Complex64::new(re, im)
}

#[test]
fn cyclic7_and_other_square_families_are_fine() {
    for (fam, n) in [
        ("cyclic", 7),
        ("katsura", 6),
        ("noon", 5),
        ("eco", 7),
        ("chandra", 5),
    ] {
        let s = generate(fam, n).unwrap();
        for seed in [1, 2, 3] {
            assert_eq!(
                dependent_equations(&s, seed),
                Vec::<usize>::new(),
                "{fam}-{n} seed {seed}"
            );
        }
        assert_eq!(dependency_warning(&s, 1), None);
    }
}

#[test]
fn duplicated_equation_is_named() {
    let s = generate("cyclic", 7).unwrap();
    // Equation 3 (index 2) repeated as the last one, replacing x1⋯x7 − 1: the copy depends.
    let mut eqs = s.equations.clone();
    eqs[6] = eqs[2].clone();
    let d = with_equations(&s, eqs);
    assert_eq!(dependent_equations(&d, 1), vec![6]);
    // A multiple (by a Gaussian rational) placed before the original: the later one is named.
    let mut eqs = s.equations.clone();
    eqs[1] = combo(c(0.5, -3.0), &s.equations[4], c(0.0, 0.0), &s.equations[0]);
    let d = with_equations(&s, eqs);
    assert_eq!(dependent_equations(&d, 7), vec![4]);
}

#[test]
fn sum_of_two_equations_is_named_with_the_warning_line() {
    let s = generate("cyclic", 6).unwrap();
    let mut eqs = s.equations.clone();
    // Equations 3 and 5 (indices 2 and 4) become combinations of earlier ones.
    eqs[2] = combo(c(1.0, 0.0), &eqs[0], c(1.0, 0.0), &eqs[1]);
    eqs[4] = combo(c(0.1, 0.0), &eqs[3], c(-2.0, 0.25), &eqs[1]);
    let d = with_equations(&s, eqs);
    assert_eq!(dependent_equations(&d, 3), vec![2, 4]);
    assert_eq!(
        dependency_warning(&d, 3).unwrap(),
        "warning: equations 3, 5 depend on the others (Jacobian rank 4 < 6 at a random point): the system is not generically square; isolated solutions may be missing"
    );
}

#[test]
fn irrational_coefficients_take_the_float_route() {
    // chandra has c = 0.51234 (a rational that fits); scale everything by √2 and π so that
    // no coefficient is a small rational: the complex f64 route.
    let s = generate("katsura", 5).unwrap();
    let k = c(std::f64::consts::SQRT_2, std::f64::consts::PI);
    let mut eqs: Vec<Polynomial> = s
        .equations
        .iter()
        .map(|p| combo(k, p, c(0.0, 0.0), p))
        .collect();
    let fine = with_equations(&s, eqs.clone());
    assert_eq!(dependent_equations(&fine, 5), Vec::<usize>::new());
    eqs[3] = combo(c(std::f64::consts::E, 0.3), &eqs[0], c(1e-3, 7.0), &eqs[2]);
    eqs[5] = eqs[1].clone();
    let d = with_equations(&s, eqs);
    assert_eq!(dependent_equations(&d, 5), vec![3, 5]);
    assert!(dependency_warning(&d, 5)
        .unwrap()
        .contains("equations 4, 6 depend"));
}

#[test]
fn laurent_and_zero_equations() {
    // x·y⁻¹ − 1 and its multiple by 3; an equation that is identically zero depends too.
    let t = |re: f64, e: Vec<i32>| Term {
        coeff: c(re, 0.0),
        exponents: e,
    };
    let f1 = Polynomial::from_terms([t(1.0, vec![1, -1, 0]), t(-1.0, vec![0, 0, 0])]);
    let f2 = Polynomial::from_terms([t(3.0, vec![1, -1, 0]), t(-3.0, vec![0, 0, 0])]);
    let f3 = Polynomial::from_terms([t(1.0, vec![0, 0, 2]), t(-2.0, vec![1, 0, 0])]);
    let s = System {
        name: "laurent".into(),
        description: String::new(),
        variables: vec!["x".into(), "y".into(), "z".into()],
        equations: vec![f1.clone(), f2, f3.clone()],
    };
    assert_eq!(dependent_equations(&s, 9), vec![1]);
    let s2 = System {
        equations: vec![f1, Polynomial::default(), f3],
        ..s
    };
    assert_eq!(dependent_equations(&s2, 9), vec![1]);
}

#[test]
fn solve_prints_the_warning_and_goes_on() {
    let bin = env!("CARGO_BIN_EXE_pathtrack");
    let dir = std::env::temp_dir().join(format!("rref_dep_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dup = dir.join("dup.yaml");
    std::fs::write(
        &dup,
        "name: dup\nvariables: [x, y]\nequations:\n  - \"x^2 + y - 1\"\n  - \"2*x^2 + 2*y - 2\"\n",
    )
    .unwrap();
    let out = std::process::Command::new(bin)
        .args(["solve", dup.to_str().unwrap(), "--backend", "cpu", "-q"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.lines().any(|l| l == "warning: equation 2 depends on the others (Jacobian rank 1 < 2 at a random point): the system is not generically square; isolated solutions may be missing"),
        "{err}"
    );
    let fine = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/katsura3.yaml");
    let out = std::process::Command::new(bin)
        .args(["solve", fine, "--backend", "cpu", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning: equation"));
    let _ = std::fs::remove_dir_all(&dir);
}
