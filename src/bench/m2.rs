//! Macaulay2 (`M2`, Debian's `macaulay2`) as a reference for `bench solve`: its package
//! NumericalAlgebraicGeometry solves a system with `solveSystem` (a total-degree homotopy,
//! one thread). The system is written as an M2 script over `CC[x_1..x_n]`, run with
//! `M2 --script`, and the script prints one line with the counts read back here. Every
//! failure is an `Err(String)` naming the cause, never a panic.

use super::external::{run_timed, ScratchDir};
use crate::system::{Polynomial, System};
use num_complex::Complex64 as C64;
use std::path::Path;

/// A `solveSystem` run: wall seconds of the whole `M2` process (start-up and package
/// loading included, about 0.5 s of CPU), the seconds of the `solveSystem` call alone
/// (M2's `elapsedTiming`), and the solutions it returned, by `status`.
#[derive(Clone, Debug, PartialEq)]
pub struct M2Solve {
    pub seconds: f64,
    pub solve_seconds: f64,
    pub counts: M2Counts,
}

/// The points `solveSystem` returns, by their `status`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct M2Counts {
    /// Every point returned.
    pub points: u64,
    /// Status `Regular`.
    pub regular: u64,
    /// Status `Singular`.
    pub singular: u64,
}

impl M2Counts {
    /// Points neither regular nor singular (at infinity, step-size failures, …).
    pub fn other(&self) -> u64 {
        self.points.saturating_sub(self.regular + self.singular)
    }
}

/// The marker that starts the script's result line.
const RESULT: &str = "pathtrack-m2:";

/// A coefficient as an M2 expression over CC: `(re+im*ii)` with the shortest decimal
/// forms that read back to the same doubles (`{:e}`: M2 reads `1.5e-3`).
fn coefficient(c: C64) -> String {
    let real = |v: f64| {
        if v == v.trunc() && v.abs() < 1e15 {
            format!("{}", v as i64)
        } else {
            format!("{v:e}")
        }
    };
    if c.im == 0.0 {
        format!("({})", real(c.re))
    } else {
        format!("({}+({})*ii)", real(c.re), real(c.im))
    }
}

/// One polynomial in the variables `x_1 … x_n`.
fn polynomial(p: &Polynomial) -> String {
    if p.terms.is_empty() {
        return "0_R".into();
    }
    let terms: Vec<String> = p
        .terms
        .iter()
        .map(|t| {
            let mut s = coefficient(t.coeff);
            for (j, &a) in t.exponents.iter().enumerate() {
                match a {
                    0 => {}
                    1 => s.push_str(&format!("*x_{}", j + 1)),
                    a => s.push_str(&format!("*x_{}^{a}", j + 1)),
                }
            }
            s
        })
        .collect();
    terms.join(" + ")
}

/// The M2 script that solves `sys` with `solveSystem` and prints
/// `pathtrack-m2: POINTS REGULAR SINGULAR SECONDS` (the seconds of the call alone). An error for a Laurent system (M2's
/// `solveSystem` takes polynomials) or one that is not square.
pub fn script(sys: &System) -> Result<String, String> {
    let n = sys.n();
    if sys.equations.len() != n {
        return Err(format!(
            "M2 solveSystem: {} equations in {n} unknowns (square systems only)",
            sys.equations.len()
        ));
    }
    if let Some(k) = sys.equations.iter().position(|p| p.is_laurent()) {
        return Err(format!(
            "M2 solveSystem: equation {} has negative exponents",
            k + 1
        ));
    }
    let eqs: Vec<String> = sys.equations.iter().map(polynomial).collect();
    Ok(format!(
        "needsPackage \"NumericalAlgebraicGeometry\";\n\
         R = CC[x_1..x_{n}];\n\
         F = {{\n  {}\n}};\n\
         T = elapsedTiming solveSystem F;\n\
         S = last T;\n\
         count = st -> #select(S, s -> status s === st);\n\
         << \"{RESULT} \" << #S << \" \" << count Regular << \" \" << count Singular\n  \
         << \" \" << toString(first T) << endl;\n\
         exit 0;\n",
        eqs.join(",\n  ")
    ))
}

/// Reads the script's result line from M2's standard output: the counts and the seconds
/// of the `solveSystem` call.
pub fn parse_result(stdout: &str) -> Result<(M2Counts, f64), String> {
    let line = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix(RESULT))
        .ok_or_else(|| format!("no '{RESULT}' line in M2's output"))?;
    let bad = || format!("unreadable result line '{}'", line.trim());
    let w: Vec<&str> = line.split_whitespace().collect();
    let [points, regular, singular, seconds] = w[..] else {
        return Err(bad());
    };
    let count = |s: &str| s.parse::<u64>().map_err(|_| bad());
    let (points, regular, singular) = (count(points)?, count(regular)?, count(singular)?);
    let seconds: f64 = seconds.parse().map_err(|_| bad())?;
    if regular + singular > points || seconds.is_nan() || seconds < 0.0 {
        return Err(bad());
    }
    let counts = M2Counts {
        points,
        regular,
        singular,
    };
    Ok((counts, seconds))
}

/// Solves `sys` with `M2 --script` in a scratch directory.
pub fn solve(m2: &Path, sys: &System) -> Result<M2Solve, String> {
    let text = script(sys)?;
    let dir = ScratchDir::new("m2")?;
    let file = dir.path().join("solve.m2");
    std::fs::write(&file, text)
        .map_err(|e| format!("cannot write M2's script {}: {e}", file.display()))?;
    let file = file
        .to_str()
        .ok_or_else(|| format!("{}: not a UTF-8 path", file.display()))?;
    let run = run_timed(m2, &["--script", file], b"", Some(dir.path()))?;
    let (counts, solve_seconds) = parse_result(&run.stdout).map_err(|e| format!("M2: {e}"))?;
    Ok(M2Solve {
        seconds: run.seconds,
        solve_seconds,
        counts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn system(text: &str) -> System {
        crate::system::parse::parse_str(text, "test").unwrap()
    }

    /// The script names the ring, every equation in x_1…x_n with exact coefficients, and
    /// prints the result line.
    #[test]
    fn the_script_holds_the_system() {
        let s = system(
            "variables: [a, b]\nequations:\n  - \"a^2 + 2*a*b - 1\"\n  - \"0.5*b + (1 - 3e-20*i)\"\n",
        );
        let text = script(&s).unwrap();
        assert!(text.contains("R = CC[x_1..x_2];"), "{text}");
        assert!(
            text.contains("(1)*x_1^2 + (2)*x_1*x_2 + (-1)"),
            "first equation: {text}"
        );
        assert!(text.contains("(5e-1)*x_2"), "second equation: {text}");
        assert!(text.contains("(1+(-3e-20)*ii)"), "complex constant: {text}");
        assert!(text.contains("solveSystem F"));
        // every coefficient reads back to the same double
        for c in [0.1, 1.0 / 3.0, -2.5e-300, 7.0] {
            let s = coefficient(C64::new(c, 0.0));
            let inner = s.trim_matches(|ch| ch == '(' || ch == ')');
            assert_eq!(inner.parse::<f64>().unwrap(), c, "{s}");
        }
    }

    #[test]
    fn laurent_and_non_square_systems_are_refused() {
        let s = system("variables: [x, y]\nequations:\n  - \"x^-1 + y\"\n  - \"x - y\"\n");
        assert!(script(&s).unwrap_err().contains("equation 1 has negative"));
        // the parser refuses a system that is not square; one built by hand
        let mut s = system("variables: [x, y]\nequations:\n  - \"x + y\"\n  - \"x - y\"\n");
        s.equations.pop();
        assert!(script(&s).unwrap_err().contains("square"));
    }

    #[test]
    fn result_lines() {
        // M2 writes seconds below 1 without the leading zero
        let out = "-- loading\npathtrack-m2: 512 510 1 .5432\n";
        let (c, t) = parse_result(out).unwrap();
        assert_eq!(
            (c.points, c.regular, c.singular, c.other()),
            (512, 510, 1, 1)
        );
        assert_eq!(t, 0.5432);
        for (text, why) in [
            ("nothing\n", "no 'pathtrack-m2:'"),
            ("pathtrack-m2: 5 x 1 1\n", "unreadable"),
            ("pathtrack-m2: 5 4 3 1\n", "unreadable"),
            ("pathtrack-m2: 5 4 1\n", "unreadable"),
            ("pathtrack-m2: 5 4 1 -1\n", "unreadable"),
        ] {
            let e = parse_result(text).unwrap_err();
            assert!(e.contains(why), "{text:?}: {e}");
        }
    }
}
