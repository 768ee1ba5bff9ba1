//! The bundled systems in systems/: each file is exactly `to_yaml(generate(family, n))`
//! (run with PATHTRACK_REGENERATE=1 to rewrite them), parses back to the generated system,
//! is square, and has the invariants known from the literature. The generators are checked
//! against the defining formulas evaluated directly at random points.

use num_complex::Complex64 as C;
use pathtrack::system::families::{generate, to_yaml, CHANDRA_C};
use pathtrack::system::{load, System};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;
use std::path::PathBuf;

const SHIPPED: [(&str, usize, usize); 6] = [
    ("cyclic", 5, 16),
    ("katsura", 5, 20),
    ("noon", 3, 10),
    ("eco", 5, 16),
    ("chandra", 4, 24),
    ("reimer", 4, 7),
];

fn path(fam: &str, n: usize) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("systems")
        .join(format!("{fam}{n}.yaml"))
}

fn factorial(n: u128) -> u128 {
    (1..=n).product()
}

fn distinct_monomials(s: &System) -> usize {
    s.equations
        .iter()
        .flat_map(|f| f.terms.iter().map(|t| t.exponents.clone()))
        .collect::<HashSet<_>>()
        .len()
}

#[test]
fn shipped_files_match_the_generator_and_parse() {
    let regenerate = std::env::var("PATHTRACK_REGENERATE").is_ok_and(|v| v == "1");
    for (fam, lo, hi) in SHIPPED {
        for n in lo..=hi {
            let g = generate(fam, n).unwrap();
            let text = to_yaml(&g);
            let p = path(fam, n);
            if regenerate {
                std::fs::write(&p, &text).unwrap();
            }
            let on_disk = std::fs::read_to_string(&p).unwrap_or_else(|e| {
                panic!("{}: {e} (run with PATHTRACK_REGENERATE=1)", p.display())
            });
            assert!(
                on_disk == text,
                "{} differs from `pathtrack generate {fam} {n}` (run with PATHTRACK_REGENERATE=1)",
                p.display()
            );
            let t0 = std::time::Instant::now();
            let s = load(&p).unwrap_or_else(|e| panic!("{e}"));
            let dt = t0.elapsed();
            if n == hi {
                eprintln!("parsed {} in {:.3} ms", p.display(), dt.as_secs_f64() * 1e3);
            }
            assert_eq!(s, g, "{fam}{n}");
            assert_eq!(s.variables.len(), s.equations.len(), "{fam}{n} not square");
            assert!(
                text.starts_with(&format!("# {fam}{n}: ")),
                "header of {fam}{n}"
            );
            assert!(text.contains("# Source: "), "source line of {fam}{n}");
        }
    }
}

#[test]
fn known_invariants() {
    for n in 5..=20u32 {
        let s = generate("katsura", n as usize).unwrap();
        assert_eq!(s.n(), n as usize + 1);
        assert_eq!(s.total_degree(), Some(1u128 << n), "katsura{n}");
    }
    for n in 5..=16u128 {
        let s = generate("cyclic", n as usize).unwrap();
        assert_eq!(s.total_degree(), Some(factorial(n)), "cyclic{n}");
        // n monomials in each of the first n-1 equations, 2 in the last.
        assert_eq!(distinct_monomials(&s) as u128, n * (n - 1) + 2, "cyclic{n}");
    }
    // The seed paper's figure: cyclic-14 has 184 distinct monomials, chandra-24 has 324.
    assert_eq!(distinct_monomials(&generate("cyclic", 14).unwrap()), 184);
    assert_eq!(distinct_monomials(&generate("chandra", 24).unwrap()), 324);
    for n in 3..=10u32 {
        let s = generate("noon", n as usize).unwrap();
        assert_eq!(s.total_degree(), Some(3u128.pow(n)), "noon{n}");
    }
    for n in 5..=16u32 {
        let s = generate("eco", n as usize).unwrap();
        assert_eq!(s.total_degree(), Some(2 * 3u128.pow(n - 2)), "eco{n}");
    }
    for n in 4..=24u32 {
        let s = generate("chandra", n as usize).unwrap();
        assert_eq!(s.total_degree(), Some(1u128 << n), "chandra{n}");
    }
    for n in 4..=7u128 {
        let s = generate("reimer", n as usize).unwrap();
        assert_eq!(s.total_degree(), Some(factorial(n + 1)), "reimer{n}");
    }
}

/// The defining formulas, evaluated directly (no expansion), one value per equation.
fn direct(fam: &str, n: usize, x: &[C]) -> Vec<C> {
    let one = C::new(1.0, 0.0);
    match fam {
        "cyclic" => {
            let mut f: Vec<C> = (1..n)
                .map(|k| {
                    (0..n)
                        .map(|i| (0..k).map(|j| x[(i + j) % n]).product::<C>())
                        .sum()
                })
                .collect();
            f.push(x.iter().product::<C>() - one);
            f
        }
        "katsura" => {
            let u = |k: i64| -> C {
                let k = k.unsigned_abs() as usize;
                if k <= n {
                    x[k]
                } else {
                    C::new(0.0, 0.0)
                }
            };
            let mut f = vec![x[0] + 2.0 * x[1..].iter().sum::<C>() - one];
            for m in 0..n as i64 {
                let s: C = (-(n as i64)..=n as i64).map(|l| u(l) * u(m - l)).sum();
                f.push(s - u(m));
            }
            f
        }
        "noon" => (0..n)
            .map(|i| {
                let s: C = (0..n).filter(|&j| j != i).map(|j| x[j] * x[j]).sum();
                x[i] * s - 1.1 * x[i] + one
            })
            .collect(),
        "eco" => {
            // 1-based x_i = x[i-1].
            let mut f: Vec<C> = (1..n)
                .map(|k| {
                    let s: C = (1..n - k).map(|i| x[i - 1] * x[i + k - 1]).sum();
                    (x[k - 1] + s) * x[n - 1] - k as f64
                })
                .collect();
            f.push(x[..n - 1].iter().sum::<C>() + one);
            f
        }
        "chandra" => (1..=n)
            .map(|i| {
                let s: C = (1..n).map(|j| i as f64 / (i + j) as f64 * x[j - 1]).sum();
                2.0 * n as f64 * x[i - 1] - CHANDRA_C * x[i - 1] * (one + s) - 2.0 * n as f64
            })
            .collect(),
        "reimer" => (2..=n + 1)
            .map(|k| {
                let s: C = (1..=n)
                    .map(|i| {
                        let sign = if i % 2 == 1 { 2.0 } else { -2.0 };
                        sign * x[i - 1].powi(k as i32)
                    })
                    .sum();
                s - one
            })
            .collect(),
        _ => unreachable!(),
    }
}

#[test]
fn generators_agree_with_the_definitions() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for (fam, lo, hi) in [
        ("cyclic", 2, 9),
        ("katsura", 1, 9),
        ("noon", 2, 7),
        ("eco", 2, 9),
        ("chandra", 1, 9),
        ("reimer", 1, 6),
    ] {
        for n in lo..=hi {
            let s = generate(fam, n).unwrap();
            assert_eq!(s.name, format!("{fam}{n}"));
            for _ in 0..3 {
                let x: Vec<C> = (0..s.n())
                    .map(|_| C::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
                    .collect();
                let got = s.eval(&x);
                let want = direct(fam, n, &x);
                assert_eq!(got.len(), want.len(), "{fam}{n}");
                for (k, (a, b)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (a - b).norm() <= 1e-12 * (1.0 + b.norm()),
                        "{fam}{n} equation {}: {a} vs {b}",
                        k + 1
                    );
                }
            }
        }
    }
}

#[test]
fn generate_rejects_bad_requests() {
    assert!(generate("nosuch", 5)
        .unwrap_err()
        .contains("unknown family"));
    assert!(generate("cyclic", 1).is_err());
    assert!(generate("katsura", 0).is_err());
    assert!(generate("noon", 10_000).is_err());
    assert!(generate("Katsura", 3).is_ok());
}
