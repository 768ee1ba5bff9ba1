//! Other solvers' file formats: Bertini and Hom4PS input, `convert` round trips through
//! every format, `solve --format phc|bertini` solution lists, family names in place of files.

use num_complex::Complex64 as C;
use pathtrack::report::formats::{read_bertini_solutions, read_phc_solutions};
use pathtrack::system::parse::{detect, parse_str, to_format, Format};
use pathtrack::system::System;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pathtrack"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pathtrack-formats-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn load(name: &str) -> System {
    pathtrack::system::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(name))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A monomial as the nonzero exponents of its variables, by name.
type Monomial = Vec<(String, i32)>;

/// Each term of each equation as (exponent of each variable by name, coefficient), in the
/// order of the terms: equal for two systems that differ only in the order of variables.
fn by_name(s: &System) -> Vec<Vec<(Monomial, C)>> {
    s.equations
        .iter()
        .map(|p| {
            p.terms
                .iter()
                .map(|t| {
                    let mut e: Monomial = s
                        .variables
                        .iter()
                        .cloned()
                        .zip(t.exponents.iter().copied())
                        .filter(|&(_, a)| a != 0)
                        .collect();
                    e.sort();
                    (e, t.coeff)
                })
                .collect()
        })
        .collect()
}

/// [`by_name`] as maps, for systems whose terms may come in another order.
fn as_maps(s: &System) -> Vec<HashMap<Monomial, C>> {
    by_name(s)
        .into_iter()
        .map(|eq| eq.into_iter().collect())
        .collect()
}

const FORMATS: [Format; 4] = [Format::Yaml, Format::Phc, Format::Bertini, Format::Hom4ps];

/// Every system of systems/ with at most 12 variables and 20,000 terms, written in each
/// format and read back: the same terms in the same order with the same coefficients
/// (compared with ==, so bit for bit up to the sign of a zero part).
#[test]
fn every_shipped_system_round_trips_through_every_format() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("systems");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut tried = 0;
    let mut inexact_decimals = 0;
    for f in &files {
        let s = pathtrack::system::load(f).unwrap();
        let terms: usize = s.equations.iter().map(|p| p.terms.len()).sum();
        if s.n() > 12 || terms > 20_000 {
            continue;
        }
        tried += 1;
        for format in FORMATS {
            let text = to_format(&s, format).unwrap();
            assert_eq!(detect(&text), format, "{}: {format:?}\n{text}", f.display());
            let back = parse_str(&text, "converted")
                .unwrap_or_else(|e| panic!("{} as {format:?}: {e}\n{text}", f.display()));
            assert_eq!(back.n(), s.n());
            if matches!(format, Format::Yaml | Format::Bertini) {
                assert_eq!(back.variables, s.variables, "{format:?} keeps the order");
            }
            assert_eq!(by_name(&back), by_name(&s), "{} as {format:?}", f.display());
        }
        // coefficients such as chandra's 0.51234/(2n)·i/(i+j) need all 17 digits
        let phc = to_format(&s, Format::Phc).unwrap();
        inexact_decimals += usize::from(phc.contains("e-"));
    }
    assert!(tried >= 30, "only {tried} systems tried");
    assert!(inexact_decimals > 0);
}

/// Complex, tiny, huge and Laurent coefficients survive every format exactly.
#[test]
fn awkward_coefficients_round_trip() {
    let yaml = r#"
variables: [x, y, z]
equations:
  - "(0.1 + 0.2*i)*x^2*y - 1e-300*z + 3*i"
  - "(-1.7976931348623157e308)*y^3 + (2/3)*x - (1e-5 - 7*i)"
  - "-i*x*y*z + x^-2*z - 0.30000000000000004"
"#;
    let s = parse_str(yaml, "awkward.yaml").unwrap();
    for format in FORMATS {
        let text = to_format(&s, format).unwrap();
        let back = parse_str(&text, "w").unwrap_or_else(|e| panic!("{format:?}: {e}\n{text}"));
        assert_eq!(by_name(&back), by_name(&s), "{format:?}\n{text}");
    }
}

/// A Bertini file with CONFIG, comments, constants, subfunctions (one used before its
/// definition, one built on another), I, Pi and scientific notation is the system written
/// out by hand in YAML.
#[test]
fn bertini_subfunctions_and_constants_expand() {
    let bertini = "% a Bertini input file\n\
CONFIG\n  TRACKTYPE: 0;  % isolated solutions\n  MPTYPE: 2;\nEND;\n\
INPUT\n\
  variable_group x;\n\
  variable_group y;   % a second group joins the first\n\
  function f1, f2;\n\
  constant a, b;\n\
  a = 1.5e0 + 2*I;\n\
  b = a^2 - Pi;\n\
  f1 = h - a*y;       % h comes later\n\
  g = x^2 + 1;\n\
  h = g^2 + 2.5E-3*x;\n\
  f2 = b*x*y - I;\n\
END;\n";
    let s = parse_str(bertini, "sub.input").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.variables, ["x", "y"]);
    let a = C::new(1.5, 2.0);
    let b = a * a - C::new(std::f64::consts::PI, 0.0);
    let want = System {
        name: "w".into(),
        description: String::new(),
        variables: vec!["x".into(), "y".into()],
        equations: vec![
            pathtrack::system::Polynomial::from_terms(
                [
                    (C::new(1.0, 0.0), vec![4, 0]),
                    (C::new(2.0, 0.0), vec![2, 0]),
                    (C::new(1.0, 0.0), vec![0, 0]),
                    (C::new(2.5e-3, 0.0), vec![1, 0]),
                    (-a, vec![0, 1]),
                ]
                .map(|(coeff, exponents)| pathtrack::system::Term { coeff, exponents }),
            ),
            pathtrack::system::Polynomial::from_terms(
                [(b, vec![1, 1]), (C::new(0.0, -1.0), vec![0, 0])]
                    .map(|(coeff, exponents)| pathtrack::system::Term { coeff, exponents }),
            ),
        ],
    };
    assert_eq!(as_maps(&s), as_maps(&want));
    // without CONFIG and without the INPUT keyword; a last statement without END
    let bare = "variable_group u, v;\nfunction p, q;\np = u^2 - 2;\nq = v - u*I;\n";
    let s = parse_str(bare, "bare").unwrap();
    assert_eq!(s.variables, ["u", "v"]);
    assert_eq!(s.equations[1].terms.len(), 2);
}

/// Evaluates a Bertini INPUT section with Bertini's own parser (Bertini 2's Python package)
/// at each point; prints the values as JSON.
const BERTINI_EVAL: &str = r#"
import sys, json, numpy as np, bertini.parse as p
text = open(sys.argv[1]).read()
lines = text.splitlines()
if "INPUT" in [l.strip() for l in lines]:
    start = [l.strip() for l in lines].index("INPUT") + 1
    body = "\n".join(lines[start:])
    text = body[: body.rindex("END;")]
s = p.system(text)
out = []
for pt in json.load(open(sys.argv[2])):
    v = s.eval(np.array([complex(a, b) for a, b in pt], dtype=complex))
    out.append([[float(z.real), float(z.imag)] for z in v])
print(json.dumps(out))
"#;

/// Bertini's own parser reads what `convert --to bertini` writes and the hand-written
/// example above, and its values agree with pathtrack's expansion at random points. Runs
/// when a Python with Bertini 2's package `bertini` is at hand (PATHTRACK_BERTINI_PYTHON,
/// else python3); skipped with a note otherwise. Bertini 2's `parse.system` reads the
/// statements of the INPUT section, which the script cuts out of the file.
#[test]
fn bertini_own_parser_agrees() {
    let python = std::env::var("PATHTRACK_BERTINI_PYTHON").unwrap_or_else(|_| "python3".into());
    let usable = Command::new(&python)
        .args(["-c", "import bertini.parse, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !usable {
        eprintln!(
            "bertini_own_parser_agrees: skipped, {python} cannot import bertini \
             (pip install bertini, then PATHTRACK_BERTINI_PYTHON=that python)"
        );
        return;
    }
    let dir = scratch("bertini");
    let script = dir.join("eval.py");
    std::fs::write(&script, BERTINI_EVAL).unwrap();
    let awkward = parse_str(
        "variables: [x, y, z]\nequations:\n  - \"(0.1 + 0.2*i)*x^2*y - 1e-300*z + 3*i\"\n  \
         - \"(-1.25e10)*y^3 + (2/3)*x - (1e-5 - 7*i)\"\n  \
         - \"-i*x*y*z + x^-2*z - 0.30000000000000004\"\n",
        "awkward.yaml",
    )
    .unwrap();
    let hand = "variable_group x, y;\nfunction f1, f2;\nconstant a, b;\na = 1.5e0 + 2*I;\n\
b = a^2 - Pi;\ng = x^2 + 1;\nh = g^2 + 2.5E-3*x;\nf1 = h - a*y;\nf2 = b*x*y - I;\n";
    let mut cases: Vec<(String, System)> = Vec::new();
    for name in ["katsura5", "chandra6", "cyclic5", "noon4", "eco6"] {
        let s = load(&format!("systems/{name}.yaml"));
        cases.push((to_format(&s, Format::Bertini).unwrap(), s));
    }
    cases.push((to_format(&awkward, Format::Bertini).unwrap(), awkward));
    cases.push((hand.to_string(), parse_str(hand, "hand").unwrap()));
    let mut seed = 0x2545F4914F6CDD1Du64;
    let mut uniform = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    for (k, (text, sys)) in cases.iter().enumerate() {
        let input = dir.join(format!("case{k}.input"));
        std::fs::write(&input, text).unwrap();
        let points: Vec<Vec<C>> = (0..3)
            .map(|_| (0..sys.n()).map(|_| C::new(uniform(), uniform())).collect())
            .collect();
        let json: Vec<Vec<[f64; 2]>> = points
            .iter()
            .map(|x| x.iter().map(|z| [z.re, z.im]).collect())
            .collect();
        let pts = dir.join(format!("case{k}.json"));
        std::fs::write(&pts, serde_json::to_string(&json).unwrap()).unwrap();
        let out = Command::new(&python)
            .arg(&script)
            .arg(&input)
            .arg(&pts)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "case {k}: {}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs: Vec<Vec<[f64; 2]>> = serde_json::from_slice(&out.stdout).unwrap();
        for (x, values) in points.iter().zip(&theirs) {
            for (f, v) in sys.equations.iter().zip(values) {
                let ours = f.eval(x);
                let diff = (ours - C::new(v[0], v[1])).norm();
                assert!(
                    diff <= 1e-12 * (1.0 + f.abs_scale(x)),
                    "case {k}: pathtrack {ours}, Bertini {v:?}\n{text}"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Hom4PS input: braces, comments, the last ';' optional, variables by first appearance.
#[test]
fn hom4ps_input_reads() {
    let text = "# circle and parabola\n{\n  y^2 + x^2 - 1;  # y first\n  x - y^2\n}\n";
    let s = parse_str(text, "circle.h4").unwrap();
    assert_eq!(s.variables, ["y", "x"]);
    assert_eq!(s.equations.len(), 2);
    let yaml = parse_str(
        "variables: [y, x]\nequations: [\"y^2 + x^2 - 1\", \"x - y^2\"]\n",
        "c.yaml",
    )
    .unwrap();
    assert_eq!(by_name(&s), by_name(&yaml));
    // a YAML flow mapping is still YAML
    assert_eq!(
        detect("{variables: [x], equations: [\"x - 1\"]}"),
        Format::Yaml
    );
}

/// Malformed Bertini and Hom4PS files: the message names the place (line:column) and the
/// cause.
#[test]
fn malformed_files_name_line_and_column() {
    let cases: [(&str, &str, &str); 14] = [
        (
            "variable_group x, y;\nfunction f, g;\nf = x^2 - z;\ng = x - y;\nEND;\n",
            "3:11: equation 1: unknown variable 'z'",
            "unknown variable",
        ),
        (
            "variable_group x, y;\nfunction f, g;\nf = x^2 - 1;\nEND;\n",
            "2:13: function 'g' is declared but never assigned",
            "unassigned function",
        ),
        (
            "hom_variable_group x, y, z;\nfunction f, g;\n",
            "1:1: hom_variable_group (projective variables) is not supported",
            "projective variables",
        ),
        (
            "variable_group x;\nfunction f;\na = b + 1;\nb = 2*a;\nf = x - a;\n",
            "is defined in terms of itself",
            "circular subfunctions",
        ),
        (
            "variable_group x, y;\nfunction f;\nf = x - y;\n",
            "2:10: system is not square: 1 functions in 2 variables",
            "not square",
        ),
        (
            "CONFIG\nTRACKTYPE: 0;\n",
            "1:1: the CONFIG section has no closing 'END;'",
            "unclosed CONFIG",
        ),
        (
            "variable_group x;\nfunction f;\nconstant c;\nc = x + 1;\nf = x - c;\n",
            "4:5: constant 'c' depends on the variables",
            "constant with a variable",
        ),
        (
            "variable_group x;\nfunction f;\nf = sin(x);\n",
            "3:5: equation 1: 'sin(…)': functions",
            "a function call",
        ),
        (
            "variable_group x;\nfunction f;\nf = x^2 - 1;\nf = x;\n",
            "4:1: 'f' is assigned twice (first on line 3)",
            "assigned twice",
        ),
        (
            "variable_group x, Pi;\n",
            "1:19: 'Pi' is reserved",
            "reserved name",
        ),
        (
            "{\n  x^2 + y^2 - 1;\n  x - y;\n",
            "4:1: missing '}' after the last polynomial",
            "missing brace",
        ),
        (
            "{\n  x^2 + y^2 - 1;\n  x - y;\n}\nx;\n",
            "5:1: text after the closing '}'",
            "text after the system",
        ),
        (
            "{\n  x^2 + y^2 - 1;\n  x - y $ 2;\n}\n",
            "3:9: equation 2: unexpected character '$'",
            "bad character",
        ),
        (
            "{ x^2 + y^2 - 1; ; x - y; }",
            "1:18: equation 2: empty polynomial before ';'",
            "empty polynomial",
        ),
    ];
    for (text, want, what) in cases {
        let e = parse_str(text, "bad").unwrap_err().to_string();
        assert!(e.contains(want), "{what}: got '{e}', want '{want}'");
        assert!(e.starts_with("bad"), "{e}");
    }
}

/// The binary: a malformed Bertini file exits with code 2 and the place on stderr; convert
/// writes a file that solves like the original.
#[test]
fn convert_cli_writes_files_and_reports_errors() {
    let dir = scratch("cli");
    let bad = dir.join("bad.input");
    std::fs::write(&bad, "variable_group x;\nfunction f;\nf = x^2 - y;\nEND;\n").unwrap();
    for args in [vec!["convert", "--to", "phc"], vec!["solve"], vec!["count"]] {
        let out = bin().args(&args).arg(&bad).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("bad.input:3:11: equation 1: unknown variable 'y'"),
            "{err}"
        );
    }
    let out_file = dir.join("k4.input");
    let out = bin()
        .args(["convert", "systems/katsura5.yaml", "--to", "bertini", "-o"])
        .arg(&out_file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let back = pathtrack::system::load(&out_file).unwrap();
    assert_eq!(by_name(&back), by_name(&load("systems/katsura5.yaml")));
    let out = bin()
        .args(["convert", "noon3", "--to", "hom4ps"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("{\n") && text.ends_with("}\n"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn solve_json(args: &[&str], file: &Path) -> serde_json::Value {
    let mut c = bin();
    c.args([
        "solve",
        "--backend",
        "cpu",
        "--json",
        "--quiet",
        "--threads",
        "2",
    ])
    .args(args)
    .arg(file);
    json_of(c)
}

/// Runs `c`, asserts that it succeeded, and reads its stdout as one JSON value.
fn json_of(mut c: Command) -> serde_json::Value {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{c:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Bertini, Hom4PS and PHCpack files of several systems of the suite solve to the same
/// counts as their YAML (same seed; the variables of PHCpack and Hom4PS files may be
/// numbered in another order, which changes the paths but not the solutions).
#[test]
fn converted_files_solve_to_the_same_counts() {
    let dir = scratch("solve");
    for name in ["katsura5", "cyclic5", "noon4", "eco6", "reimer4"] {
        let yaml = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("systems/{name}.yaml"));
        let base = solve_json(&[], &yaml);
        for (to, ext) in [("bertini", "input"), ("hom4ps", "h4"), ("phc", "phc")] {
            let f = dir.join(format!("{name}.{ext}"));
            let out = bin()
                .args(["convert", "--to", to, "-o"])
                .arg(&f)
                .arg(&yaml)
                .output()
                .unwrap();
            assert!(out.status.success());
            let v = solve_json(&[], &f);
            for key in ["paths", "finite", "nonsingular", "singular", "real"] {
                assert_eq!(v[key], base[key], "{name} as {to}: {key}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--format phc` and `--format bertini`: the lists hold every finite endpoint (`-o`) and
/// every distinct solution (`--solutions`), each a solution of the system to 1e-10.
#[test]
fn solution_lists_read_back_and_solve_the_system() {
    let dir = scratch("lists");
    let sys = load("systems/katsura5.yaml");
    for format in ["phc", "bertini"] {
        let paths = dir.join(format!("paths.{format}"));
        let distinct = dir.join(format!("distinct.{format}"));
        let mut args = vec!["--format", format, "-o", paths.to_str().unwrap()];
        args.extend(["--solutions", distinct.to_str().unwrap()]);
        let v = solve_json(&args, Path::new("systems/katsura5.yaml"));
        let read = |p: &Path| {
            let text = std::fs::read_to_string(p).unwrap();
            match format {
                "phc" => read_phc_solutions(&text).unwrap(),
                _ => read_bertini_solutions(&text, sys.n()).unwrap(),
            }
        };
        let per_path = read(&paths);
        let sols = read(&distinct);
        assert_eq!(
            per_path.len() as u64,
            v["paths"].as_u64().unwrap()
                - v["at_infinity"].as_u64().unwrap()
                - v["failed"].as_u64().unwrap()
        );
        assert_eq!(sols.len() as u64, v["finite"].as_u64().unwrap());
        assert_eq!(sols.len(), 32);
        for x in per_path.iter().chain(&sols) {
            assert!(sys.relative_residual(x) < 1e-10, "{format}: {x:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The solutions that `phc -z` finds in a file holding a system and a solution list
/// (it writes them as Maple lists, one `time =` each).
fn phc_reads(phc: &Path, dir: &Path, sys: &System, list: &str) -> usize {
    let mut text = to_format(sys, Format::Phc).unwrap();
    text.push_str("\nTHE SOLUTIONS :\n");
    text.push_str(list);
    let input = dir.join("input");
    std::fs::write(&input, text).unwrap();
    let maple = dir.join("maple");
    let _ = std::fs::remove_file(&maple);
    let out = Command::new(phc)
        .arg("-z")
        .arg(&input)
        .arg(&maple)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let m = std::fs::read_to_string(&maple).unwrap_or_else(|_| {
        panic!(
            "phc -z wrote nothing: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    m.matches("time =").count()
}

/// PHCpack's `phc` reads the `--format phc` lists, the final one and one cut short
/// mid-run (skipped, with a note, when phc is not installed).
#[test]
fn phc_reads_the_solution_lists() {
    let Some(phc) = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("phc"))
            .find(|f| f.is_file())
    }) else {
        eprintln!(
            "phc_reads_the_solution_lists: skipped, no phc on PATH (apt-get install phcpack)"
        );
        return;
    };
    let dir = scratch("phc");
    let sols = dir.join("sols");
    let paths = dir.join("paths");
    let v = solve_json(
        &[
            "--format",
            "phc",
            "--solutions",
            sols.to_str().unwrap(),
            "-o",
            paths.to_str().unwrap(),
        ],
        Path::new("systems/katsura5.yaml"),
    );
    let sys = load("systems/katsura5.yaml");
    let finite = v["finite"].as_u64().unwrap() as usize;
    assert_eq!(finite, 32);
    assert_eq!(
        phc_reads(&phc, &dir, &sys, &std::fs::read_to_string(&sols).unwrap()),
        finite
    );
    assert_eq!(
        phc_reads(&phc, &dir, &sys, &std::fs::read_to_string(&paths).unwrap()),
        finite
    );
    // a list as an interrupted run leaves it: the count padded in place
    let listed = read_phc_solutions(&std::fs::read_to_string(&paths).unwrap()).unwrap();
    let cut = dir.join("cut");
    let mut w = pathtrack::report::formats::EndpointWriter::create(
        Some(&cut),
        pathtrack::report::formats::SolutionFormat::Phc,
        &sys.variables,
    )
    .unwrap();
    for (k, x) in listed.iter().take(5).enumerate() {
        let mut e = pathtrack::post::Endpoint::new(k as u64, pathtrack::post::Status::Nonsingular);
        e.coordinates = Some(x.clone());
        e.residual = 1e-16;
        e.condition = 10.0;
        w.write(&e).unwrap();
    }
    drop(w);
    let text = std::fs::read_to_string(&cut).unwrap();
    assert!(text.starts_with("     "), "padded count: {text}");
    assert_eq!(phc_reads(&phc, &dir, &sys, &text), 5);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Family names stand for files everywhere, and a file of that name wins.
#[test]
fn family_names_are_accepted_where_files_are() {
    let mut c = bin();
    c.args(["count", "katsura5", "--json"]);
    let v = json_of(c);
    assert_eq!(v["stable_mixed_volume"], 32);
    assert_eq!(v["total_degree"], 32);
    let v = solve_json(&[], Path::new("noon3"));
    assert_eq!(v["system"], "noon3");
    assert_eq!(v["nonsingular"], 21);
    // the default subcommand too
    let mut c = bin();
    c.args(["cyclic5", "--json", "-q", "--backend", "cpu"]);
    let v = json_of(c);
    assert_eq!(v["finite"], 70);
    // certify and witness take the name too; monodromy says why a family will not do
    let dir = scratch("family");
    let sols = dir.join("k3.jsonl");
    let out = bin()
        .args(["katsura3", "-q", "--backend", "cpu", "--solutions"])
        .arg(&sols)
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut c = bin();
    c.args(["certify", "--system", "katsura3", "--json"])
        .arg(&sols);
    let v = json_of(c);
    assert_eq!(v["certified_distinct"], 8, "{v}");
    let mut c = bin();
    c.args(["witness", "katsura3", "--json", "-q"]);
    let v = json_of(c);
    assert!(v.to_string().contains("\"degree\":8"), "{v}");
    let out = bin().args(["monodromy", "katsura3"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("has no parameters"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // a file named like a family wins
    std::fs::write(
        dir.join("katsura5"),
        "variables: [x]\nequations: [\"x^2 - 2\"]\n",
    )
    .unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_pathtrack"));
    c.args(["count", "katsura5", "--json"]).current_dir(&dir);
    let v = json_of(c);
    assert_eq!(v["mixed_volume"], 2);
    let _ = std::fs::remove_dir_all(&dir);
    // bad names: exit code 2 and why
    for (arg, why) in [
        ("cyclic1", "cyclic-n needs 2 <= n <= 100"),
        ("nosuch7", "not a family name with a size such as katsura6"),
        ("missing.yaml", "cannot read file"),
    ] {
        let out = bin().args(["count", arg]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{arg}: {err}");
    }
}
