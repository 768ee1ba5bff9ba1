//! Generated inputs for the parsers and the command line: none may panic. Each case is
//! built from a seeded generator (mutations of valid inputs, random token soup, extreme
//! numbers), and every parser must return `Ok` or an error that names a place.
//!
//! `cargo test --release --test fuzz_inputs` runs a few thousand cases per target;
//! `PATHTRACK_FUZZ_CASES=100000 cargo test --release --test fuzz_inputs` runs that many
//! (docs/input-format.md, "Fuzzing"). `PATHTRACK_FUZZ_SEED` picks another seed.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

fn cases(default: usize) -> usize {
    std::env::var("PATHTRACK_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn rng(target: u64) -> ChaCha8Rng {
    let seed: u64 = std::env::var("PATHTRACK_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    ChaCha8Rng::seed_from_u64(seed.wrapping_mul(1000) + target)
}

/// Runs `f` on each generated input; a panic is reported with the input that caused it.
fn no_panic(name: &str, inputs: impl Iterator<Item = String>, f: impl Fn(&str)) {
    let f = std::panic::AssertUnwindSafe(f);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut failures = Vec::new();
    let mut count = 0;
    for input in inputs {
        count += 1;
        if std::panic::catch_unwind(|| f(&input)).is_err() {
            failures.push(input);
        }
    }
    std::panic::set_hook(hook);
    assert!(
        failures.is_empty(),
        "{name}: {} of {count} inputs panicked, e.g. {:?}",
        failures.len(),
        &failures[..failures.len().min(3)]
    );
}

/// Pieces of the expression grammar and of its edge cases.
const ATOMS: &[&str] = &[
    "x",
    "y",
    "z",
    "i",
    "I",
    "e",
    "E",
    "1",
    "0",
    "2.5",
    ".5",
    "1.",
    "1e-3",
    "2.5E+2",
    "1e308",
    "1e999",
    "4e-324",
    "nan",
    "inf",
    "0.0",
    "007",
    "1e",
    "..",
    "_",
    "x1",
    "ж",
    "\u{0}",
    "1048576",
    "1048577",
    "2147483648",
    "99999999999999999999",
];
const OPS: &[&str] = &[
    "+", "-", "*", "/", "^", "**", "(", ")", " ", "\n", "\t", "^-", "^(", "^(-", ";", ",", "#",
    "'", "\"", ":", "[", "]", "{", "}", "--", "+-",
];

fn soup(r: &mut ChaCha8Rng, len: usize) -> String {
    let mut s = String::new();
    for _ in 0..len {
        if r.random_bool(0.5) {
            s += ATOMS[r.random_range(0..ATOMS.len())];
        } else {
            s += OPS[r.random_range(0..OPS.len())];
        }
    }
    s
}

/// A random well-formed expression of depth at most `depth` in x, y, z.
fn expr(r: &mut ChaCha8Rng, depth: u32) -> String {
    if depth == 0 || r.random_bool(0.3) {
        return ATOMS[r.random_range(0..12)].to_string();
    }
    match r.random_range(0..6) {
        0 => format!("{} + {}", expr(r, depth - 1), expr(r, depth - 1)),
        1 => format!("{} - {}", expr(r, depth - 1), expr(r, depth - 1)),
        2 => format!("{}*{}", expr(r, depth - 1), expr(r, depth - 1)),
        3 => format!("({})^{}", expr(r, depth - 1), r.random_range(-3..12)),
        4 => format!("-({})", expr(r, depth - 1)),
        _ => format!("({})/{}", expr(r, depth - 1), ATOMS[r.random_range(7..12)]),
    }
}

/// `text` with a few random byte-level edits (deletions, duplications, insertions of
/// grammar pieces), kept valid UTF-8.
fn mutate(r: &mut ChaCha8Rng, text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..r.random_range(1..5) {
        let at = r.random_range(0..=chars.len());
        match r.random_range(0..4) {
            0 if at < chars.len() => {
                chars.remove(at);
            }
            1 if at < chars.len() => {
                let end = (at + r.random_range(1..20)).min(chars.len());
                let piece: Vec<char> = chars[at..end].to_vec();
                chars.splice(at..at, piece);
            }
            _ => {
                let piece = if r.random_bool(0.5) {
                    ATOMS[r.random_range(0..ATOMS.len())]
                } else {
                    OPS[r.random_range(0..OPS.len())]
                };
                chars.splice(at..at, piece.chars());
            }
        }
    }
    chars.into_iter().collect()
}

fn vars(names: &[&str]) -> HashMap<String, usize> {
    names
        .iter()
        .enumerate()
        .map(|(k, s)| (s.to_string(), k))
        .collect()
}

#[test]
fn expression_grammar_never_panics() {
    let mut r = rng(1);
    let n = cases(3000);
    let v = vars(&["x", "y", "z"]);
    let inputs = (0..n).map(|k| match k % 3 {
        0 => expr(&mut r, 4),
        1 => soup(&mut r, 12),
        _ => {
            let e = expr(&mut r, 3);
            mutate(&mut r, &e)
        }
    });
    no_panic("expression", inputs, |s| {
        if let Ok(p) = pathtrack::system::parse::expr::parse_expr(s, &v, 3) {
            for t in &p.terms {
                assert!(t.coeff.re.is_finite() && t.coeff.im.is_finite(), "{s}");
                assert!(t.exponents.iter().all(|a| a.abs() <= 1 << 20), "{s}");
            }
        }
    });
}

const YAML_SEEDS: &[&str] = &[
    "variables: [x, y]\nequations:\n  - \"x^2 + y^2 - 1\"\n  - \"x - y\"\n",
    "name: t\ndescription: \"d\"\nvariables: [x, y, z]\nequations: [\"x*y - 1\", \"y*z - 2\", \"x + y + z\"]\n",
    "variables:\n  - x\nequations:\n  - 3\n",
    "variables: [x, y]\nequations:\n  - \"x^-2*y + 1\"\n  - \"(2*x*y^2)^-1 - I\"\n",
];

fn check_system(s: &pathtrack::system::System) {
    assert_eq!(s.equations.len(), s.n());
    // Everything a solve computes first from a parsed system: no panic either.
    let _ = s.total_degree();
    let _ = pathtrack::solver::limits::work_estimate(s, 1);
    let _ = pathtrack::linalg::rref::dependent::unused_variables(s);
}

#[test]
fn yaml_parser_never_panics() {
    let mut r = rng(2);
    let n = cases(3000);
    let inputs = (0..n).map(|k| {
        let base = YAML_SEEDS[k % YAML_SEEDS.len()];
        match k % 4 {
            0 => mutate(&mut r, base),
            1 => {
                let e = expr(&mut r, 3);
                format!("variables: [x, y, z]\nequations:\n  - \"{e}\"\n  - \"x - y\"\n  - \"z\"\n")
            }
            2 => format!(
                "variables: [x]\nequations:\n  - {}\n",
                soup(&mut r, 6).replace('\n', " ")
            ),
            _ => {
                let once = mutate(&mut r, base);
                mutate(&mut r, &once)
            }
        }
    });
    no_panic("yaml", inputs, |s| {
        if let Ok(sys) = pathtrack::system::parse_str(s, "f.yaml") {
            check_system(&sys);
        }
    });
}

const PHC_SEEDS: &[&str] = &[
    "2\nx**2 + 4*y**2 - 4;\n2*y**2 - x;\n",
    "2 2\nx**2*y**(-1) + (1.5 - 2*i)*x - 3.25E-1;\nx**(-1) + y**(-2)*x\n   - i*y + 2;\n\nTHE SOLUTIONS :\n",
    "1\nx - 1;\n",
];

#[test]
fn phc_parser_never_panics() {
    let mut r = rng(3);
    let n = cases(3000);
    let inputs = (0..n).map(|k| {
        let base = PHC_SEEDS[k % PHC_SEEDS.len()];
        match k % 3 {
            0 => mutate(&mut r, base),
            1 => format!("2\n{};\n{};\n", expr(&mut r, 3), expr(&mut r, 2)),
            _ => format!("{}\n{}", r.random_range(0..4), soup(&mut r, 10)),
        }
    });
    no_panic("phc", inputs, |s| {
        if let Ok(sys) = pathtrack::system::parse_str(s, "f.phc") {
            check_system(&sys);
        }
    });
}

const MTX_SEEDS: &[&str] = &[
    "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1e-320\n2 2 2.5\n",
    "%%MatrixMarket matrix array integer general\n2 2\n1\n2\n3\n4\n",
    "%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n1 1 1 0\n2 1 2 -1\n",
    "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 1\n2 1 -7\n",
    "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n1 1\n3 2\n",
    "%%MatrixMarket matrix array real general\n% c\n1 3\n1e300\n-1e300\n4e-324\n",
];

#[test]
fn matrix_market_reader_never_panics() {
    use pathtrack::linalg::rref::{echelonize, mtx, EchelonOptions, Zp32, F64};
    let mut r = rng(4);
    let n = cases(3000);
    let inputs = (0..n).map(|k| {
        let base = MTX_SEEDS[k % MTX_SEEDS.len()];
        let mut s = mutate(&mut r, base);
        if k % 2 == 0 {
            s = mutate(&mut r, &s);
        }
        s
    });
    let f = Zp32::new(65521).unwrap();
    no_panic("mtx", inputs, |s| {
        if let Ok(d) = mtx::parse(s, "m.mtx") {
            if d.rows * d.cols > 10_000 {
                return;
            }
            if let Ok(mut m) = d.to_f64() {
                let e = echelonize(&F64, &mut m, &EchelonOptions::default());
                assert!(e.pivots.len() <= d.rows.min(d.cols));
            }
            let _ = d.to_c64();
            if let Ok(mut m) = d.to_zp32(&f) {
                echelonize(&f, &mut m, &EchelonOptions::default());
            }
        }
    });
}

/// Arguments as a user might mistype them, parsed by the binary's own entry (no
/// subprocess): only the argument handling and cheap subcommands run.
#[test]
fn command_line_never_panics() {
    let mut r = rng(5);
    let n = cases(2000);
    let dir = std::env::temp_dir().join(format!("pathtrack-fuzz-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sys = dir.join("s.yaml");
    std::fs::write(&sys, YAML_SEEDS[0]).unwrap();
    let sys = sys.to_str().unwrap().to_string();
    let words: Vec<String> = [
        "count",
        "generate",
        "rref",
        "bench",
        "help",
        "--json",
        "--seed",
        "--threads",
        "-1",
        "0",
        "18446744073709551616",
        "--partition",
        "{x}{y}",
        "{x y}",
        "{x}{x}",
        "{",
        "cyclic",
        "katsura",
        "foo",
        "101",
        "3",
        "--help",
        "-o",
        "--bogus",
        "--prime",
        "2",
        "4",
        "",
        "--version",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([sys.clone()])
    .collect();
    let inputs = (0..n).map(|_| {
        let k = r.random_range(1..6);
        let mut a: Vec<String> = (0..k)
            .map(|_| words[r.random_range(0..words.len())].clone())
            .collect();
        // "-o" is pointed into the scratch directory, never at a file of the project.
        for w in a.iter_mut().skip(1) {
            if w == "-o" {
                *w = format!("-o{}", dir.join("out").display());
            }
        }
        // Keep to the cheap subcommands: no solve, no bench.
        if !matches!(
            a[0].as_str(),
            "count" | "generate" | "help" | "--help" | "--version"
        ) {
            a.insert(0, "count".into());
        }
        a.join("\u{1f}")
    });
    no_panic("cli", inputs, |s| {
        let mut args = vec!["pathtrack".to_string()];
        args.extend(s.split('\u{1f}').map(str::to_string));
        let code = pathtrack::cli::run_args(args);
        assert!((0..=2).contains(&code), "{s:?}: exit {code}");
    });
}
