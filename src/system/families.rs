//! Benchmark families generated from their definitions (indices 1-based unless noted):
//!
//! - cyclic-n (Björck–Fröberg cyclic n-roots), variables x1..xn:
//!   `Σ_{i=0}^{n−1} Π_{j=0}^{k−1} x_{(i+j) mod n}` for k = 1..n−1, and `x1⋯xn − 1`.
//! - katsura-n, variables u0..un (n+1 of them): `u0 + 2Σ_{i=1}^n u_i − 1` and, for
//!   m = 0..n−1, `Σ_{l=−n}^{n} u_|l| u_|m−l| − u_m` with `u_k = 0` for k > n.
//! - noon-n (Noonburg's neural network): `x_i Σ_{j≠i} x_j² − 1.1 x_i + 1`.
//! - eco-n (Morgan's economics problem, PHCpack's form): for k = 1..n−1,
//!   `(x_k + Σ_{i=1}^{n−k−1} x_i x_{i+k}) x_n − k`, and `Σ_{i=1}^{n−1} x_i + 1`.
//! - chandra-n (discretized Chandrasekhar H-equation, PHCpack's form), variables H1..Hn:
//!   `2n H_i − c H_i (1 + Σ_{j=1}^{n−1} i/(i+j) H_j) − 2n`, c = 0.51234.
//! - reimer-n: for k = 2..n+1, `Σ_{i=1}^n (−1)^{i+1} 2 x_i^k − 1`.
//!
//! Each polynomial's terms are sorted in graded-lexicographic order (highest degree first,
//! then x1 > x2 > …), so a generated system is canonical. [`to_yaml`] writes a system in
//! the input format with coefficients in Rust's shortest round-trip notation, so that
//! parsing the text gives back the identical system.

use super::{Polynomial, System, Term};
use num_complex::Complex64;
use std::fmt::Write;

/// Largest size parameter accepted by [`generate`].
pub const MAX_N: usize = 100;

/// The families [`generate`] knows, with their smallest n.
pub const FAMILIES: [(&str, usize); 6] = [
    ("cyclic", 2),
    ("katsura", 1),
    ("noon", 2),
    ("eco", 2),
    ("chandra", 1),
    ("reimer", 1),
];

/// The constant of chandra-n.
pub const CHANDRA_C: f64 = 0.51234;

/// Builds member `n` of a named family.
pub fn generate(family: &str, n: usize) -> Result<System, String> {
    let fam = family.to_ascii_lowercase();
    let min = FAMILIES
        .iter()
        .find(|(f, _)| *f == fam)
        .map(|&(_, m)| m)
        .ok_or_else(|| {
            let names: Vec<&str> = FAMILIES.iter().map(|(f, _)| *f).collect();
            format!("unknown family '{family}' (known: {})", names.join(", "))
        })?;
    if n < min || n > MAX_N {
        return Err(format!("{fam}-n needs {min} <= n <= {MAX_N}, got n = {n}"));
    }
    let (variables, equations) = match fam.as_str() {
        "cyclic" => cyclic(n),
        "katsura" => katsura(n),
        "noon" => noon(n),
        "eco" => eco(n),
        "chandra" => chandra(n),
        "reimer" => reimer(n),
        _ => unreachable!(),
    };
    Ok(System {
        name: format!("{fam}{n}"),
        description: info(&fam).map(|i| i.title.to_string()).unwrap_or_default()
            + &format!(", n = {n}"),
        variables,
        equations,
    })
}

/// The member that a name such as `katsura6` or `cyclic-7` stands for: `None` when the
/// letters before the number are not a family's name (case-insensitive) or no number
/// follows them, else [`generate`]'s answer (an error for a size out of range).
pub fn by_name(name: &str) -> Option<Result<System, String>> {
    let split = name.find(|c: char| c.is_ascii_digit())?;
    let (family, size) = name.split_at(split);
    let family = family.strip_suffix('-').unwrap_or(family);
    let known = FAMILIES.iter().any(|(f, _)| f.eq_ignore_ascii_case(family));
    if !known || !size.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(match size.parse::<usize>() {
        Ok(n) => generate(family, n),
        Err(_) => Err(format!("{family}-n needs n <= {MAX_N}, got n = {size}")),
    })
}

struct Info {
    title: &'static str,
    source: &'static str,
    definition: &'static str,
}

fn info(family: &str) -> Option<Info> {
    Some(match family {
        "cyclic" => Info {
            title: "cyclic n-roots",
            source: "G. Björck and R. Fröberg, J. Symbolic Comput. 12 (1991); the form of \
                     PHCpack's demo database and HomotopyContinuation.jl's cyclic(n)",
            definition:
                "f_k = sum_{i=0}^{n-1} prod_{j=0}^{k-1} x_{(i+j) mod n + 1} for k = 1..n-1; \
                         f_n = x1*x2*...*xn - 1",
        },
        "katsura" => Info {
            title: "Katsura's magnetism problem",
            source: "S. Katsura; the form of PHCpack's demo database and \
                     HomotopyContinuation.jl's katsura(n) (n+1 unknowns u0..un)",
            definition: "u0 + 2*sum_{i=1}^n u_i - 1; for m = 0..n-1: \
                         sum_{l=-n}^{n} u_|l| * u_|m-l| - u_m, with u_k = 0 for k > n",
        },
        "noon" => Info {
            title: "Noonburg's neural network model",
            source: "V. W. Noonburg (1989); the form of PHCpack's demo database",
            definition: "x_i * sum_{j != i} x_j^2 - 1.1*x_i + 1 for i = 1..n",
        },
        "eco" => Info {
            title: "Morgan's economics modelling problem",
            source: "A. Morgan, Solving Polynomial Systems Using Continuation (1987); \
                     the form of PHCpack's demo database",
            definition: "for k = 1..n-1: (x_k + sum_{i=1}^{n-k-1} x_i*x_{i+k})*x_n - k; \
                         sum_{i=1}^{n-1} x_i + 1",
        },
        "chandra" => Info {
            title: "discretized Chandrasekhar H-equation, c = 0.51234",
            source: "the form of PHCpack's demo database, as used in T. Chen's GPU path \
                     tracker paper (chandra-24: 324 distinct monomials)",
            definition: "for i = 1..n: 2n*H_i - c*H_i*(1 + sum_{j=1}^{n-1} i/(i+j)*H_j) - 2n, \
                         c = 0.51234; coefficients -(c*i)/(i+j) and 2n - c rounded to doubles",
        },
        "reimer" => Info {
            title: "Reimer's system",
            source: "the form of PHCpack's demo database",
            definition: "for k = 2..n+1: sum_{i=1}^n (-1)^(i+1)*2*x_i^k - 1",
        },
        _ => return None,
    })
}

/// Exponent vector of the product of the variables listed in `idx` (0-based, repeats add).
fn mono(n: usize, idx: &[usize]) -> Vec<i32> {
    let mut e = vec![0; n];
    for &j in idx {
        e[j] += 1;
    }
    e
}

/// Combines like terms, drops zeros, sorts graded-lexicographically (highest first).
fn poly(terms: Vec<(f64, Vec<i32>)>) -> Polynomial {
    let mut p = Polynomial::from_terms(terms.into_iter().map(|(c, e)| Term {
        coeff: Complex64::new(c, 0.0),
        exponents: e,
    }));
    p.terms.sort_by(|a, b| {
        let da: i32 = a.exponents.iter().sum();
        let db: i32 = b.exponents.iter().sum();
        db.cmp(&da).then_with(|| b.exponents.cmp(&a.exponents))
    });
    p
}

fn names(prefix: &str, range: std::ops::RangeInclusive<usize>) -> Vec<String> {
    range.map(|k| format!("{prefix}{k}")).collect()
}

fn cyclic(n: usize) -> (Vec<String>, Vec<Polynomial>) {
    let mut eqs = Vec::with_capacity(n);
    for k in 1..n {
        let terms = (0..n)
            .map(|i| {
                let idx: Vec<usize> = (0..k).map(|j| (i + j) % n).collect();
                (1.0, mono(n, &idx))
            })
            .collect();
        eqs.push(poly(terms));
    }
    let all: Vec<usize> = (0..n).collect();
    eqs.push(poly(vec![(1.0, mono(n, &all)), (-1.0, vec![0; n])]));
    (names("x", 1..=n), eqs)
}

fn katsura(n: usize) -> (Vec<String>, Vec<Polynomial>) {
    let nv = n + 1;
    let mut eqs = Vec::with_capacity(nv);
    let mut first = vec![(1.0, mono(nv, &[0]))];
    for i in 1..=n {
        first.push((2.0, mono(nv, &[i])));
    }
    first.push((-1.0, vec![0; nv]));
    eqs.push(poly(first));
    let n_i = n as i64;
    for m in 0..n_i {
        let mut terms = Vec::new();
        for l in -n_i..=n_i {
            let a = l.unsigned_abs() as usize;
            let b = (m - l).unsigned_abs() as usize;
            if a <= n && b <= n {
                terms.push((1.0, mono(nv, &[a, b])));
            }
        }
        terms.push((-1.0, mono(nv, &[m as usize])));
        eqs.push(poly(terms));
    }
    (names("u", 0..=n), eqs)
}

fn noon(n: usize) -> (Vec<String>, Vec<Polynomial>) {
    let eqs = (0..n)
        .map(|i| {
            let mut terms: Vec<(f64, Vec<i32>)> = (0..n)
                .filter(|&j| j != i)
                .map(|j| (1.0, mono(n, &[i, j, j])))
                .collect();
            terms.push((-1.1, mono(n, &[i])));
            terms.push((1.0, vec![0; n]));
            poly(terms)
        })
        .collect();
    (names("x", 1..=n), eqs)
}

fn eco(n: usize) -> (Vec<String>, Vec<Polynomial>) {
    let last = n - 1; // x_n, 0-based
    let mut eqs = Vec::with_capacity(n);
    for k in 1..n {
        // (x_k + Σ_{i=1}^{n-k-1} x_i x_{i+k}) x_n - k, 1-based indices.
        let mut terms = vec![(1.0, mono(n, &[k - 1, last]))];
        for i in 1..n - k {
            terms.push((1.0, mono(n, &[i - 1, i + k - 1, last])));
        }
        terms.push((-(k as f64), vec![0; n]));
        eqs.push(poly(terms));
    }
    let mut terms: Vec<(f64, Vec<i32>)> = (0..n - 1).map(|i| (1.0, mono(n, &[i]))).collect();
    terms.push((1.0, vec![0; n]));
    eqs.push(poly(terms));
    (names("x", 1..=n), eqs)
}

fn chandra(n: usize) -> (Vec<String>, Vec<Polynomial>) {
    let two_n = 2.0 * n as f64;
    let eqs = (1..=n)
        .map(|i| {
            let mut terms = vec![(two_n - CHANDRA_C, mono(n, &[i - 1]))];
            for j in 1..n {
                let c = -(CHANDRA_C * i as f64 / (i + j) as f64);
                terms.push((c, mono(n, &[i - 1, j - 1])));
            }
            terms.push((-two_n, vec![0; n]));
            poly(terms)
        })
        .collect();
    (names("H", 1..=n), eqs)
}

fn reimer(n: usize) -> (Vec<String>, Vec<Polynomial>) {
    let eqs = (2..=n + 1)
        .map(|k| {
            let mut terms: Vec<(f64, Vec<i32>)> = (0..n)
                .map(|i| {
                    let sign = if i % 2 == 0 { 2.0 } else { -2.0 };
                    let mut e = vec![0; n];
                    e[i] = k as i32;
                    (sign, e)
                })
                .collect();
            terms.push((-1.0, vec![0; n]));
            poly(terms)
        })
        .collect();
    (names("x", 1..=n), eqs)
}

/// A YAML scalar for `s`: plain when it is an identifier that YAML reads as a string,
/// else double-quoted (JSON string syntax is valid YAML).
fn quote(s: &str) -> String {
    const SPECIAL: [&str; 11] = [
        "null", "true", "false", "yes", "no", "on", "off", "y", "n", "nan", "inf",
    ];
    if crate::system::parse::expr::is_identifier(s)
        && !SPECIAL.contains(&s.to_ascii_lowercase().as_str())
    {
        return s.to_string();
    }
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// One polynomial in the expression syntax; parses back to the identical terms.
pub fn poly_to_string(p: &Polynomial, vars: &[String]) -> String {
    poly_to_string_with(p, vars, "^")
}

/// [`poly_to_string`] with `power` (`^` or `**`) as the power operator.
pub fn poly_to_string_with(p: &Polynomial, vars: &[String], power: &'static str) -> String {
    let style = crate::system::parse::write::Style {
        power,
        imaginary: "i",
        real: crate::system::parse::write::shortest,
    };
    crate::system::parse::write::poly(p, vars, &style)
}

/// The system as YAML in the input format, with a header comment giving its source.
pub fn to_yaml(sys: &System) -> String {
    let mut out = String::new();
    let split = sys
        .name
        .find(|c: char| c.is_ascii_digit())
        .map(|p| sys.name.split_at(p));
    let known = split.and_then(|(fam, num)| {
        let n: usize = num.parse().ok()?;
        info(fam).map(|i| (fam, n, i))
    });
    match known {
        Some((fam, n, i)) => {
            let _ = writeln!(out, "# {}: {}, n = {}.", sys.name, i.title, n);
            let _ = writeln!(out, "# Source: {}.", i.source);
            let _ = writeln!(out, "# Definition: {}.", i.definition);
            let _ = writeln!(
                out,
                "# Generated by `pathtrack generate {fam} {n}`; do not edit by hand."
            );
        }
        None => {
            let _ = writeln!(out, "# {} (written by pathtrack).", sys.name);
        }
    }
    let _ = writeln!(out, "name: {}", quote(&sys.name));
    if !sys.description.is_empty() {
        let _ = writeln!(out, "description: {}", quote(&sys.description));
    }
    let vars: Vec<String> = sys.variables.iter().map(|v| quote(v)).collect();
    let _ = writeln!(out, "variables: [{}]", vars.join(", "));
    let _ = writeln!(out, "equations:");
    for p in &sys.equations {
        let _ = writeln!(out, "  - \"{}\"", poly_to_string(p, &sys.variables));
    }
    out
}
