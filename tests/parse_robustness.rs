//! Inputs that a parser can easily accept wrongly or crash on: each must be refused
//! with an `InputError` that names the equation and the cause.

use pathtrack::system::parse_str;
use pathtrack::InputError;

fn parse_err(text: &str, origin: &str) -> InputError {
    match parse_str(text, origin) {
        Ok(s) => panic!("expected an error, parsed {s:?}"),
        Err(e) => e,
    }
}

#[test]
fn overflow_in_a_sum_is_a_non_finite_coefficient() {
    // 1e308 + 1e308 overflows to inf; inf - inf is NaN. Neither may be accepted.
    let text = "variables: [x, y]\nequations:\n  - \"1e308*x + 1e308*x - 1\"\n  - \"x - y\"\n";
    let e = parse_err(text, "t.yaml");
    assert_eq!(e.equation, Some(1), "{e}");
    assert_eq!((e.line, e.column), (Some(3), Some(14)), "{e}");
    assert!(e.message.contains("non-finite coefficient"), "{e}");

    let text = "variables: [x, y]\nequations:\n  - \"x - y\"\n  - \"(1e308 + 1e308) - (1e308 + 1e308) + x\"\n";
    let e = parse_err(text, "t.yaml");
    assert_eq!(e.equation, Some(2), "{e}");
    assert!(e.message.contains("non-finite coefficient"), "{e}");

    let e = parse_err("1\n1e308 + 1e308 + x;\n", "t.phc");
    assert_eq!(e.equation, Some(1), "{e}");
    assert!(e.message.contains("non-finite coefficient"), "{e}");

    // Large but finite sums are still fine.
    let s = parse_str(
        "variables: [x]\nequations: [\"1e308*x + 7e307*x - 1\"]\n",
        "t.yaml",
    )
    .unwrap();
    let c = s.equations[0].terms[0].coeff.re;
    assert!((c / 1.7e308 - 1.0).abs() < 1e-15, "{c}");
}

#[test]
fn huge_equation_count_in_a_phcpack_header_is_an_error() {
    // Allocated as stated, both abort: a capacity overflow panic, a failed 24 TB allocation.
    for n in ["18446744073709551615", "1000000000000"] {
        let e = parse_err(&format!("{n}\nx - 1;\n"), "t.phc");
        assert!(
            e.message.contains(&format!(
                "expected {n} polynomials each ending with ';', found 1"
            )),
            "{e}"
        );
        assert_eq!(e.equation, Some(2), "{e}");
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    // Parsed by plain recursion, 10000 parentheses (or 50000 signs) overflow the main
    // thread's 8 MiB stack.
    // This test runs on a 2 MiB test thread.
    let deep = |open: &str, close: &str, k: usize| {
        format!(
            "variables: [x]\nequations:\n  - \"{}x{}\"\n",
            open.repeat(k),
            close.repeat(k)
        )
    };
    for (open, close) in [("(", ")"), ("-", ""), ("(-", ")")] {
        let e = parse_err(&deep(open, close, 100_000), "t.yaml");
        assert!(e.message.contains("nested too deeply"), "{e}");
        assert_eq!(e.equation, Some(1), "{e}");
    }
    let e = parse_err(
        &format!("1\n{}x{};\n", "(".repeat(100_000), ")".repeat(100_000)),
        "t.phc",
    );
    assert!(e.message.contains("nested too deeply"), "{e}");
    // The limit itself: 499 parentheses (500 levels with the outermost operand) parse.
    let s = parse_str(&deep("(", ")", 499), "t.yaml").unwrap();
    assert_eq!(s.equations[0].terms.len(), 1);
    assert!(parse_str(&deep("(", ")", 500), "t.yaml").is_err());
}
