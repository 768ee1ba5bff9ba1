//! Parser tests: expression semantics against direct evaluation, both file formats, and
//! every kind of bad input (each error must name the file, the equation and the place).

use num_complex::Complex64 as C;
use pathtrack::system::families::{generate, to_yaml};
use pathtrack::system::parse::phc::to_phc;
use pathtrack::system::{parse_str, Polynomial, System, Term};
use pathtrack::InputError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;

fn yaml(vars: &str, eqs: &[&str]) -> String {
    let mut s = format!("# test system\nvariables: [{vars}]\nequations:\n");
    for e in eqs {
        s.push_str(&format!("  - \"{e}\"\n"));
    }
    s
}

fn parse_err(text: &str) -> InputError {
    match parse_str(text, "bad.yaml") {
        Ok(s) => panic!("expected an error, parsed {s:?}"),
        Err(e) => e,
    }
}

/// Asserts file, equation, line, column and that the message contains `cause`.
fn check(e: &InputError, eq: Option<usize>, line: Option<usize>, col: Option<usize>, cause: &str) {
    assert_eq!(e.file, "bad.yaml", "{e}");
    assert_eq!(e.equation, eq, "{e}");
    assert_eq!(e.line, line, "{e}");
    assert_eq!(e.column, col, "{e}");
    assert!(
        e.message.contains(cause),
        "message {:?} should contain {:?}",
        e.message,
        cause
    );
    let shown = e.to_string();
    assert!(shown.starts_with("bad.yaml"), "{shown}");
    if let Some(k) = eq {
        assert!(shown.contains(&format!("equation {k}")), "{shown}");
    }
}

fn random_point(rng: &mut ChaCha8Rng, n: usize) -> Vec<C> {
    (0..n)
        .map(|_| C::new(rng.random_range(0.5..1.5), rng.random_range(-1.0..1.0)))
        .collect()
}

// ---------------------------------------------------------------- semantics

#[test]
fn issue_example_katsura2_parses_to_the_generated_system() {
    let text = "name: katsura2            # optional\n\
                description: free text    # optional\n\
                variables: [u0, u1, u2]   # required\n\
                equations:                # required\n\
                \x20 - \"u0 + 2*u1 + 2*u2 - 1\"\n\
                \x20 - \"u0^2 + 2*u1^2 + 2*u2^2 - u0\"\n\
                \x20 - \"2*u0*u1 + 2*u1*u2 - u1\"\n";
    let s = parse_str(text, "katsura2.yaml").unwrap();
    assert_eq!(s.name, "katsura2");
    assert_eq!(s.description, "free text");
    let g = generate("katsura", 2).unwrap();
    assert_eq!(s.variables, g.variables);
    assert_eq!(s.equations, g.equations);
    // Structure by hand: u0^2 + 2 u1^2 + 2 u2^2 - u0.
    let e = &s.equations[1].terms;
    assert_eq!(e.len(), 4);
    assert_eq!(e[1].exponents, vec![0, 2, 0]);
    assert_eq!(e[1].coeff, C::new(2.0, 0.0));
}

/// Each expression is compared with the same formula evaluated directly in complex
/// arithmetic at random points.
#[test]
fn expansion_agrees_with_direct_evaluation() {
    type F = fn(C, C, C) -> C;
    let i = C::new(0.0, 1.0);
    let cases: Vec<(&str, F)> = vec![
        (
            "(x + 2*y)^3 - x*y*(x - y)/4 + 1.5E-3*x^2 - 2e4",
            |x, y, _| (x + 2.0 * y).powi(3) - x * y * (x - y) / 4.0 + 1.5e-3 * x * x - 2e4,
        ),
        ("(1+2*I)*x^2*y^-1 + 2.5*i*y**-3 - z**(-2)", |x, y, z| {
            C::new(1.0, 2.0) * x * x / y + C::new(0.0, 2.5) / (y * y * y) - 1.0 / (z * z)
        }),
        ("-(x - y)^2*(x + y)^2 + 3", |x, y, _| {
            -(x - y).powi(2) * (x + y).powi(2) + 3.0
        }),
        ("-x^2 + 2^-1*y - x/3/2 + .5e1*z", |x, y, z| {
            -(x * x) + 0.5 * y - x / 3.0 / 2.0 + 5.0 * z
        }),
        ("(x*y*z - 1)^4 - (x + i)*(y - I)*(z + 2.5)", |x, y, z| {
            (x * y * z - 1.0).powi(4) - (x + C::new(0.0, 1.0)) * (y - C::new(0.0, 1.0)) * (z + 2.5)
        }),
        ("x*(y + z)^2/(2 - 4*i) + (2*x*y^-1)^-2", |x, y, z| {
            x * (y + z).powi(2) / C::new(2.0, -4.0) + 1.0 / (2.0 * x / y).powi(2)
        }),
        ("+x - -y - +z", |x, y, z| x + y - z),
    ];
    let _ = i;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for (src, f) in cases {
        let text = format!("variables: [x, y, z]\nequations: [\"{src}\", \"y\", \"z\"]\n");
        let s = parse_str(&text, "t.yaml").unwrap_or_else(|e| panic!("{src}: {e}"));
        for _ in 0..5 {
            let p = random_point(&mut rng, 3);
            let got = s.equations[0].eval(&p);
            let want = f(p[0], p[1], p[2]);
            assert!(
                (got - want).norm() <= 1e-11 * (1.0 + want.norm()),
                "{src}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn like_terms_are_combined_and_expansion_is_sparse() {
    let s = parse_str(
        &yaml("x, y", &["(x + y)^2 - (x - y)^2", "x*y - y*x + y"]),
        "t.yaml",
    )
    .unwrap();
    // (x+y)^2 - (x-y)^2 = 4xy exactly.
    assert_eq!(
        s.equations[0],
        Polynomial {
            terms: vec![Term {
                coeff: C::new(4.0, 0.0),
                exponents: vec![1, 1]
            }]
        }
    );
    assert_eq!(s.equations[1].terms.len(), 1);
    // (x + y + 1)^10 has C(12, 2) = 66 monomials.
    let s = parse_str(&yaml("x, y", &["(x + y + 1)^10", "y"]), "t.yaml").unwrap();
    assert_eq!(s.equations[0].terms.len(), 66);
    assert_eq!(s.equations[0].degree(), 10);
}

#[test]
fn numeric_equations_and_scientific_notation() {
    let s = parse_str(
        "variables: [x, y]\nequations: [\"x - 2.5e-3*y\", 7]\n",
        "t.yaml",
    )
    .unwrap();
    assert_eq!(s.equations[1].terms[0].coeff, C::new(7.0, 0.0));
    assert_eq!(s.equations[0].terms[1].coeff, C::new(-2.5e-3, 0.0));
    assert_eq!(s.name, "t");
}

#[test]
fn yaml_one_point_one_words_are_names() {
    // y, n, on, off are booleans in YAML 1.1; as variable names they must still work.
    let s = parse_str(&yaml("x, y, n", &["x + y", "y - n", "n*x - 1"]), "t.yaml");
    let s = s.unwrap();
    assert_eq!(s.variables, vec!["x", "y", "n"]);
}

#[test]
fn blow_up_is_refused_with_an_error() {
    let e = parse_err(&yaml("x, y, z", &["(x + y + z + 1)^100000", "y", "z"]));
    assert_eq!(e.equation, Some(1));
    assert!(e.message.contains("too large"), "{e}");
}

#[test]
fn round_trip_of_generated_and_random_systems() {
    for (fam, lo, hi) in [
        ("cyclic", 2, 9),
        ("katsura", 1, 9),
        ("noon", 2, 7),
        ("eco", 2, 9),
        ("chandra", 1, 12),
        ("reimer", 1, 6),
    ] {
        for n in lo..=hi {
            let s = generate(fam, n).unwrap();
            let back = parse_str(&to_yaml(&s), "x.yaml").unwrap();
            assert_eq!(back, s, "{fam}{n}");
        }
    }
    for s in random_systems() {
        let text = to_yaml(&s);
        let back = parse_str(&text, "r.yaml").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back, s, "{text}");
    }
}

/// Random complex Laurent systems with awkward coefficients (variables `v_0, …`).
fn random_systems() -> Vec<System> {
    let mut out = Vec::new();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for trial in 0..20 {
        let n = rng.random_range(1..5);
        let eqs = (0..n)
            .map(|_| {
                let terms = (0..rng.random_range(1..7))
                    .map(|_| {
                        let pick = |rng: &mut ChaCha8Rng| match rng.random_range(0..4) {
                            0 => 0.0,
                            1 => rng.random_range(-3..4) as f64,
                            2 => {
                                rng.random_range(-1e3..1e3) * 10f64.powi(rng.random_range(-30..30))
                            }
                            _ => rng.random_range(-1.0..1.0),
                        };
                        let mut c = C::new(pick(&mut rng), pick(&mut rng));
                        if c == C::new(0.0, 0.0) {
                            c = C::new(1.0, 0.0);
                        }
                        Term {
                            coeff: c,
                            exponents: (0..n).map(|_| rng.random_range(-3..5)).collect(),
                        }
                    })
                    .collect::<Vec<_>>();
                Polynomial::from_terms(terms)
            })
            .filter(|p| !p.terms.is_empty())
            .collect::<Vec<_>>();
        if eqs.len() != n {
            continue;
        }
        out.push(System {
            name: format!("random{trial}"),
            description: "random \"quoted\" description: with colon".into(),
            variables: (0..n).map(|j| format!("v_{j}")).collect(),
            equations: eqs,
        });
    }
    out
}

/// `back`'s equations with the exponents in the order of the variables of `like` (the
/// PHCpack reader numbers variables in order of first appearance).
fn in_variable_order(back: &System, like: &System) -> Vec<Polynomial> {
    let at: Vec<usize> = like
        .variables
        .iter()
        .map(|v| back.variables.iter().position(|w| w == v).unwrap())
        .collect();
    back.equations
        .iter()
        .map(|p| Polynomial {
            terms: p
                .terms
                .iter()
                .map(|t| Term {
                    coeff: t.coeff,
                    exponents: at.iter().map(|&k| t.exponents[k]).collect(),
                })
                .collect(),
        })
        .collect()
}

/// The PHCpack writer reads back (through our PHCpack reader) to the same polynomials.
#[test]
fn phcpack_writer_round_trips() {
    let mut systems: Vec<System> = [("cyclic", 7), ("katsura", 10), ("noon", 7), ("eco", 10)]
        .iter()
        .map(|&(f, n)| generate(f, n).unwrap())
        .collect();
    systems.push(generate("chandra", 10).unwrap());
    systems.extend(random_systems());
    let mut reordered = 0;
    for s in &systems {
        let text = to_phc(s);
        assert!(text.starts_with(&format!("{}\n", s.n())), "{text}");
        assert_eq!(text.matches(';').count(), s.n(), "{text}");
        assert!(!text.contains('^'), "{text}");
        let back = parse_str(&text, "w.phc").unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut names = back.variables.clone();
        names.sort();
        let mut want = s.variables.clone();
        want.sort();
        assert_eq!(names, want, "{text}");
        reordered += usize::from(back.variables != s.variables);
        assert_eq!(in_variable_order(&back, s), s.equations, "{text}");
    }
    // some systems come back with their variables in another order (eco-10: x1, x2, x10, …)
    assert!(reordered > 0);
    let k = to_phc(&generate("katsura", 2).unwrap());
    assert_eq!(
        k,
        "3\nu0 + 2*u1 + 2*u2 - 1;\nu0**2 + 2*u1**2 + 2*u2**2 - u0;\n2*u0*u1 + 2*u1*u2 - u1;\n"
    );
}

// ---------------------------------------------------------------- formats

fn data(name: &str) -> System {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    pathtrack::system::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn phcpack_and_yaml_forms_are_equal() {
    for (a, b) in [
        ("katsura3.phc", "katsura3.yaml"),
        ("laurent.phc", "laurent.yaml"),
    ] {
        let p = data(a);
        let y = data(b);
        assert_eq!(p.variables, y.variables, "{a}");
        assert_eq!(p.equations, y.equations, "{a}");
    }
    let k = data("katsura3.phc");
    let g = generate("katsura", 3).unwrap();
    assert_eq!(k.variables, g.variables);
    assert_eq!(k.equations, g.equations);
    assert_eq!(k.name, "katsura3");
    let l = data("laurent.phc");
    assert!(l.equations.iter().all(|f| f.is_laurent()));
    assert_eq!(l.equations[0].terms[1].coeff, C::new(1.5, -2.0));
}

#[test]
fn phcpack_variables_in_order_of_appearance() {
    let s = parse_str("3\n z*y - 1;\n x + y;\n x*z**2 - 2;\n", "p.phc").unwrap();
    assert_eq!(s.variables, vec!["z", "y", "x"]);
    assert_eq!(s.equations[2].terms[0].exponents, vec![2, 0, 1]);
}

#[test]
fn missing_file_is_an_error() {
    let e = pathtrack::system::load(Path::new("/nonexistent/sys.yaml")).unwrap_err();
    assert!(e.message.contains("cannot read"), "{e}");
    assert_eq!(e.file, "/nonexistent/sys.yaml");
}

// ---------------------------------------------------------------- bad input

#[test]
fn error_malformed_yaml() {
    let e = parse_err("variables: [x, y\nequations:\n  - \"x\"\n");
    assert!(e.message.starts_with("malformed YAML"), "{e}");
    assert!(e.line.is_some() && e.column.is_some(), "{e}");
    let e = parse_err("variables: [x]\n equations: [\"x\"]\n  bad: : :\n");
    assert!(e.message.starts_with("malformed YAML"), "{e}");
}

#[test]
fn error_missing_keys() {
    let e = parse_err("equations: [\"x\"]\n");
    check(&e, None, None, None, "missing required key 'variables'");
    let e = parse_err("variables: [x]\n");
    check(&e, None, None, None, "missing required key 'equations'");
}

#[test]
fn error_unknown_key() {
    let e = parse_err("variables: [x]\nequation: [\"x\"]\n");
    check(&e, None, Some(2), Some(1), "unknown key 'equation'");
}

#[test]
fn error_syntax() {
    // Line 5 is `  - "x*+"`: x at column 6, the end of the expression at column 9.
    let e = parse_err(&yaml("x, y", &["x + y", "x*+"]));
    check(
        &e,
        Some(2),
        Some(5),
        Some(9),
        "unexpected end of expression",
    );
    let e = parse_err(&yaml("x, y", &["x + y", "2x - y"]));
    check(&e, Some(2), Some(5), Some(7), "implicit multiplication");
    let e = parse_err(&yaml("x, y", &["(x + y", "x"]));
    check(&e, Some(1), Some(4), Some(6), "unclosed '('");
    let e = parse_err(&yaml("x, y", &["x + y)", "x"]));
    check(&e, Some(1), Some(4), Some(11), "unmatched ')'");
    let e = parse_err(&yaml("x, y", &["x ; y", "x"]));
    check(&e, Some(1), Some(4), Some(8), "unexpected character ';'");
    let e = parse_err(&yaml("x, y", &["x^2^3", "x"]));
    check(&e, Some(1), Some(4), Some(9), "chained exponent");
}

#[test]
fn error_unknown_variable() {
    let e = parse_err(&yaml("x, y", &["x + y", "x*y - 3*z"]));
    check(&e, Some(2), Some(5), Some(14), "unknown variable 'z'");
}

#[test]
fn error_not_a_polynomial() {
    let e = parse_err(&yaml("x, y", &["x + y", "1/x + y"]));
    check(&e, Some(2), Some(5), Some(8), "division by a non-constant");
    assert!(e.message.contains("not a polynomial"));
    let e = parse_err(&yaml("x, y", &["x^1.5 + y", "x"]));
    check(&e, Some(1), Some(4), Some(8), "non-integer exponent");
    let e = parse_err(&yaml("x, y", &["x^y", "x"]));
    check(&e, Some(1), Some(4), Some(8), "not an integer constant");
    let e = parse_err(&yaml("x, y", &["y", "(x + 1)^-2"]));
    check(&e, Some(2), Some(5), Some(6), "negative power of a sum");
    let e = parse_err(&yaml("x, y", &["y", "x/0"]));
    check(&e, Some(2), Some(5), Some(7), "division by zero");
}

#[test]
fn error_non_finite_coefficient() {
    let e = parse_err(&yaml("x, y", &["x + 1e999*y", "x"]));
    check(
        &e,
        Some(1),
        Some(4),
        Some(10),
        "non-finite coefficient '1e999'",
    );
    let e = parse_err(&yaml("x, y", &["x", "NaN*x + y"]));
    check(
        &e,
        Some(2),
        Some(5),
        Some(6),
        "non-finite coefficient 'NaN'",
    );
    let e = parse_err(&yaml("x, y", &["x", "1e200*1e200*x + y"]));
    check(&e, Some(2), Some(5), Some(11), "non-finite coefficient");
    let e = parse_err("variables: [x]\nequations: [.inf]\n");
    check(&e, Some(1), Some(2), Some(1), "non-finite coefficient");
}

#[test]
fn error_not_square() {
    let e = parse_err(&yaml("x, y, z", &["x", "y"]));
    check(
        &e,
        None,
        Some(3),
        Some(1),
        "not square: 2 equations in 3 variables",
    );
}

#[test]
fn error_identically_zero() {
    let e = parse_err(&yaml("x, y", &["x + y", "x - x"]));
    check(&e, Some(2), Some(5), Some(6), "identically zero");
    let e = parse_err(&yaml("x, y", &["(x + y)^2 - x^2 - 2*x*y - y^2", "x"]));
    check(&e, Some(1), Some(4), Some(6), "identically zero");
}

#[test]
fn error_variable_names() {
    let e = parse_err(&yaml("x, y, x", &["x", "y", "x"]));
    check(&e, None, Some(2), Some(19), "duplicate variable name 'x'");
    let e = parse_err(&yaml("x, i", &["x", "i"]));
    check(&e, None, Some(2), Some(16), "'i' is reserved");
    let e = parse_err(&yaml("E, x", &["x", "E"]));
    check(&e, None, Some(2), Some(13), "'E' is reserved");
    let e = parse_err(&yaml("x, 2y", &["x", "x"]));
    check(&e, None, Some(2), Some(16), "invalid variable name '2y'");
    let e = parse_err("variables: x\nequations: [\"x\"]\n");
    check(&e, None, Some(1), Some(1), "must be a list");
}

#[test]
fn error_column_without_a_file_line_when_the_string_is_escaped() {
    // The double-quoted scalar holds an escape, so the text differs from the raw file:
    // the error gives the column within the equation.
    let e = parse_err("variables: [x]\nequations:\n  - \"x \\u002b\\u002b\"\n");
    check(&e, Some(1), None, Some(5), "unexpected end");
    assert!(e.to_string().contains("equation 1, column 5"), "{e}");
}

#[test]
fn error_display_names_file_line_column_equation() {
    let e = parse_err(&yaml("x, y", &["x + y", "x*+"]));
    assert_eq!(
        e.to_string(),
        "bad.yaml:5:9: equation 2: unexpected end of expression: expected an operand"
    );
}

fn phc_err(text: &str) -> InputError {
    match parse_str(text, "bad.yaml") {
        Ok(s) => panic!("expected an error, parsed {s:?}"),
        Err(e) => e,
    }
}

#[test]
fn error_phcpack_format() {
    // Syntax error on the second line of the second polynomial.
    let e = phc_err("2\nx**2 + y**2 - 1;\nx*y\n  - 3*/y;\n");
    check(&e, Some(2), Some(4), Some(7), "unexpected '/'");
    let e = phc_err("2\nx + y + z;\nx - y;\n");
    check(
        &e,
        None,
        Some(1),
        Some(1),
        "not square: 2 equations in 3 variables",
    );
    let e = phc_err("2 3\nx + y;\nx - y;\n");
    check(&e, None, Some(1), Some(3), "not square");
    let e = phc_err("2\nx + y;\nx - y\n");
    check(&e, Some(2), Some(4), Some(1), "expected 2 polynomials");
    let e = phc_err("2\nx + y;\nx - x + 0*y;\n");
    check(&e, Some(2), Some(3), Some(1), "identically zero");
    let e = phc_err("1\nx + 1;\ny - 1;\n");
    check(&e, None, Some(3), Some(6), "more polynomials");
    let e = phc_err("2\nx + e;\nx - e;\n");
    check(&e, Some(1), Some(2), Some(5), "'e' is reserved");
    let e = phc_err("1\nx**0.5 - 2;\n");
    check(&e, Some(1), Some(2), Some(4), "non-integer exponent");
}
