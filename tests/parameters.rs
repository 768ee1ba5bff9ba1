//! Systems with parameters: the parameter homotopy from the solutions of one member reaches
//! the solutions of every target member that a direct solve finds (same nonsingular count,
//! coordinates within 1e-8), on a kinematics family (forward kinematics of a planar 3-RPR
//! platform), a random dense quadratic family and a reaction network's steady states; the
//! command line's targets, outputs and errors; the linear homotopy from a user's start
//! system.

use num_complex::Complex64 as C64;
use pathtrack::params::{self, Family};
use pathtrack::solver::{solve_cpu, SolveOptions, StartKind};
use pathtrack::system::System;
use rand::SeedableRng;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn family(name: &str) -> Family {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("systems/families")
        .join(format!("{name}.yaml"));
    Family::load(&p).unwrap().expect("a family")
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pathtrack"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pathtrack-params-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The distinct nonsingular solutions of a direct solve (the start system `auto` chooses).
fn direct(sys: &System) -> Vec<Vec<C64>> {
    let (_, ends) = solve_cpu(sys, StartKind::Auto, 1).unwrap();
    params::startfile::distinct(params::nonsingular_points(&ends))
}

fn close(x: &[C64], y: &[C64], tol: f64) -> bool {
    let scale = 1.0 + x.iter().map(|z| z.norm()).fold(0.0, f64::max);
    x.iter().zip(y).all(|(a, b)| (a - b).norm() <= tol * scale)
}

/// Every point of `a` is within `tol` of a point of `b` and the other way round, and the
/// counts agree.
fn same_solutions(a: &[Vec<C64>], b: &[Vec<C64>], tol: f64) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} solutions against {}", a.len(), b.len()));
    }
    for (what, (p, q)) in [("tracked", (a, b)), ("direct", (b, a))] {
        for x in p {
            if !q.iter().any(|y| close(x, y, tol)) {
                return Err(format!("{what} solution {x:?} has no partner"));
            }
        }
    }
    Ok(())
}

/// Tracks a random member's solutions to `targets` and compares each with a direct solve;
/// every member has `count` nonsingular solutions.
fn check_family(name: &str, count: usize, targets: &[Vec<C64>]) {
    let fam = family(name);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let p0 = params::random_point(fam.m(), &mut rng);
    let start = direct(&fam.at(&p0).unwrap());
    assert_eq!(start.len(), count, "{name}: generic member");
    let mut backend = pathtrack::backend::cpu::CpuBackend::new(0).unwrap();
    let opts = SolveOptions::default();
    for (k, p1) in targets.iter().enumerate() {
        let gamma = params::random_gamma(&mut rng);
        let (summary, ends) =
            params::track_collect(&fam, &start, &p0, p1, gamma, &opts, &mut backend).unwrap();
        assert_eq!(summary.start, "parameter");
        assert_eq!(summary.paths as usize, count);
        let target = fam.at(p1).unwrap();
        let tracked = params::nonsingular_points(&ends);
        for x in &tracked {
            assert!(target.relative_residual(x) < 1e-12, "{name} target {k}");
        }
        let want = direct(&target);
        if let Err(e) = same_solutions(&tracked, &want, 1e-8) {
            panic!("{name}, target {k} {p1:?}: {e}");
        }
    }
}

fn random_targets(m: usize, seed: u64, complex: usize, real: usize) -> Vec<Vec<C64>> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out: Vec<Vec<C64>> = (0..complex)
        .map(|_| params::random_point(m, &mut rng))
        .collect();
    for _ in 0..real {
        out.push(
            params::random_point(m, &mut rng)
                .into_iter()
                .map(|z| C64::new(z.re, 0.0))
                .collect(),
        );
    }
    out
}

#[test]
fn kinematics_targets_match_direct_solves() {
    // leg lengths², one platform anchor (inside squares: products of parameters and
    // unknowns) and the scale q of (cos, sin); a real, physical pose problem last
    let mut targets = random_targets(5, 1, 3, 0);
    targets.push(
        [1.0, 4.0, 2.5, 0.8, 1.0]
            .iter()
            .map(|&v| C64::new(v, 0.0))
            .collect(),
    );
    check_family("rpr3", 6, &targets);
}

#[test]
fn dense_quadratic_targets_match_direct_solves() {
    check_family("dense_quadratic3", 8, &random_targets(4, 2, 3, 2));
}

#[test]
fn reaction_network_targets_match_direct_solves() {
    // positive rate constants and total amount, as in chemistry, and complex ones
    let mut targets = random_targets(5, 3, 2, 0);
    for row in [[1.0, 2.0, 0.5, 3.0, 4.0], [0.2, 0.7, 5.0, 0.1, 1.5]] {
        targets.push(row.iter().map(|&v| C64::new(v, 0.0)).collect());
    }
    check_family("network", 3, &targets);
}

/// Runs the command, checks it succeeded and reads its JSON summary.
fn json_of(mut c: Command) -> Value {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{c:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn lines(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn coords(v: &Value) -> Vec<C64> {
    v["coordinates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|z| C64::new(z[0].as_f64().unwrap(), z[1].as_f64().unwrap()))
        .collect()
}

/// The final nonsingular points of `-o` lines (of one target, when given).
fn nonsingular_lines(ls: &[Value], target: Option<u64>) -> Vec<Vec<C64>> {
    let mut last = std::collections::BTreeMap::new();
    for l in ls {
        if target.is_some() && l["target"].as_u64() != target {
            continue;
        }
        last.insert(l["path"].as_u64().unwrap(), l.clone());
    }
    last.values()
        .filter(|l| l["status"] == "nonsingular")
        .map(coords)
        .collect()
}

/// `solve F` (random values, written out) → `solve F --from … --params-file` over three
/// targets: each target's lines carry its row and values, its counts are in the summary,
/// and its solutions are those of `solve F --params` at the row.
#[test]
fn cli_targets_file_matches_solves_at_each_row() {
    let dir = scratch("cli");
    let f = "systems/families/rpr3.yaml";
    let gen = dir.join("gen.jsonl");
    let mut c = bin();
    c.args(["solve", f, "--json", "-q", "--threads", "2", "-o"])
        .arg(&gen);
    let s = json_of(c);
    assert_eq!(s["nonsingular"], 6);
    let p0 = s["parameters"].clone();
    assert!(
        p0["l1"][1].as_f64().unwrap() != 0.0,
        "random complex values"
    );
    for l in lines(&gen) {
        assert_eq!(l["parameters"], p0, "every line carries the values");
    }
    // the same seed gives the same values, another seed others
    let mut c = bin();
    c.args(["solve", f, "--json", "-q"]);
    assert_eq!(json_of(c)["parameters"], p0);
    let mut c = bin();
    c.args(["solve", f, "--json", "-q", "--seed", "2"]);
    assert_ne!(json_of(c)["parameters"], p0);

    let rows = [
        "1, 4, 2.5, 0.8, 1",
        "2+i, 3, 1, 0.5-0.1i, 1",
        "9, 1, 0.5, 2, 1",
    ];
    let csv = dir.join("targets.csv");
    std::fs::write(&csv, format!("l1, l2, l3, u3, q\n{}\n", rows.join("\n"))).unwrap();
    let out = dir.join("t.jsonl");
    let mut c = bin();
    c.args(["solve", f, "--json", "-q", "--from"])
        .arg(&gen)
        .arg("--params-file")
        .arg(&csv)
        .arg("-o")
        .arg(&out)
        .arg("--solutions")
        .arg(dir.join("distinct.jsonl"));
    let s = json_of(c);
    assert_eq!(s["start"], "parameter");
    assert_eq!(s["start_parameters"], p0);
    let targets = s["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 3);
    let total: u64 = targets
        .iter()
        .map(|t| t["nonsingular"].as_u64().unwrap())
        .sum();
    assert_eq!(s["nonsingular"].as_u64().unwrap(), total);
    let ls = lines(&out);
    let names = ["l1", "l2", "l3", "u3", "q"];
    for (k, row) in rows.iter().enumerate() {
        let assign: Vec<String> = names
            .iter()
            .zip(row.split(','))
            .map(|(n, v)| format!("{n}={}", v.trim()))
            .collect();
        let mut c = bin();
        c.args(["solve", f, "--json", "-q", "-o"])
            .arg(dir.join("d.jsonl"))
            .arg("--params")
            .arg(assign.join(", "));
        let d = json_of(c);
        assert_eq!(targets[k]["target"], k as u64);
        assert_eq!(targets[k]["nonsingular"], d["nonsingular"], "target {k}");
        assert_eq!(targets[k]["real"], d["real"], "target {k}");
        let mine = nonsingular_lines(&ls, Some(k as u64));
        let theirs = nonsingular_lines(&lines(&dir.join("d.jsonl")), None);
        if let Err(e) = same_solutions(&mine, &theirs, 1e-8) {
            panic!("target {k}: {e}");
        }
        for l in ls.iter().filter(|l| l["target"] == k as u64) {
            assert_eq!(l["parameters"], d["parameters"], "target {k}'s values");
        }
    }
    // the distinct solutions of each target, with its row and values
    let distinct = lines(&dir.join("distinct.jsonl"));
    for (k, t) in targets.iter().enumerate() {
        let mine: Vec<&Value> = distinct
            .iter()
            .filter(|l| l["target"] == k as u64)
            .collect();
        let nonsingular = mine.iter().filter(|l| l["status"] == "nonsingular").count();
        assert_eq!(
            nonsingular as u64,
            t["nonsingular"].as_u64().unwrap(),
            "target {k}"
        );
        assert!(mine
            .iter()
            .all(|l| l["parameters"] == mine[0]["parameters"]));
    }
    // --params-file without --from: a random member is solved first
    let mut c = bin();
    c.args(["solve", f, "--json", "-q", "--params-file"])
        .arg(&csv);
    let s2 = json_of(c);
    for (a, b) in s2["targets"].as_array().unwrap().iter().zip(targets) {
        assert_eq!(a["nonsingular"], b["nonsingular"]);
    }
}

/// Runs the command, checks it succeeded and returns its stdout.
fn stdout_of(mut c: Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{c:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The rows of `--print`'s solutions table (after the summary's blank line) as cells, the
/// header first.
fn printed_table(text: &str) -> Vec<Vec<String>> {
    let (_, table) = text
        .split_once("\n\n")
        .unwrap_or_else(|| panic!("no table after the summary:\n{text}"));
    table
        .lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect()
        })
        .collect()
}

/// The summary lines but the seconds (which differ between runs).
fn timeless(text: &str) -> Vec<&str> {
    text.lines()
        .take_while(|l| !l.is_empty())
        .filter(|l| l.trim_start().split("  ").next() != Some("seconds"))
        .collect()
}

/// Parameter runs read `--verbose` and `--print` as a plain solve does: the plain summary
/// first, `--verbose` adds the details after it, and `--print` the distinct solutions as a
/// table, with the target's row first when there are several targets. The table's rows are
/// the `--solutions` records of the same run (same seed): their count, targets and statuses.
#[test]
fn parameter_runs_print_and_verbose_as_a_plain_solve() {
    let dir = scratch("print");
    let f = "systems/families/rpr3.yaml";
    let gen = dir.join("gen.jsonl");
    let csv = dir.join("targets.csv");
    std::fs::write(
        &csv,
        "l1, l2, l3, u3, q\n1, 4, 2.5, 0.8, 1\n9, 1, 0.5, 2, 1\n",
    )
    .unwrap();
    // A member at random values: the plain summary, then the details, then the table.
    let mut c = bin();
    c.args(["solve", f, "-q", "--threads", "2", "-o"]).arg(&gen);
    let plain = stdout_of(c);
    assert!(
        !plain.contains("seconds by phase") && !plain.contains("mult"),
        "{plain}"
    );
    let mut c = bin();
    c.args([
        "solve",
        f,
        "-q",
        "--threads",
        "2",
        "--verbose",
        "--print",
        "--solutions",
    ])
    .arg(dir.join("member.jsonl"));
    let shown = stdout_of(c);
    let (p, v) = (timeless(&plain), timeless(&shown));
    assert_eq!(p[..], v[..p.len()], "{shown}");
    assert!(v.iter().any(|l| l.contains("seconds by phase")), "{shown}");
    let table = printed_table(&shown);
    assert_eq!(table[0][..2], ["mult", "status"], "{shown}");
    assert_eq!(table[0][2..6], ["x", "y", "c", "s"], "{shown}");
    let member = lines(&dir.join("member.jsonl"));
    assert_eq!(table.len() - 1, member.len(), "{shown}");
    for (row, rec) in table[1..].iter().zip(&member) {
        assert_eq!(row[1], rec["status"].as_str().unwrap(), "{shown}");
    }
    assert!(member.iter().any(|r| r["status"] == "nonsingular"));

    // Several targets from those solutions: a target column, each target's rows.
    let run = |extra: &[&str]| {
        let mut c = bin();
        c.args(["solve", f, "-q", "--threads", "2", "--from"])
            .arg(&gen)
            .arg("--params-file")
            .arg(&csv)
            .args(extra);
        c
    };
    let plain = stdout_of(run(&[]));
    let mut c = run(&["--verbose", "--print", "--solutions"]);
    c.arg(dir.join("targets.jsonl"));
    let shown = stdout_of(c);
    let (p, v) = (timeless(&plain), timeless(&shown));
    assert_eq!(p[..], v[..p.len()], "{shown}");
    assert!(v.iter().any(|l| l.contains("seconds by phase")), "{shown}");
    let table = printed_table(&shown);
    assert_eq!(table[0][..3], ["target", "mult", "status"], "{shown}");
    let records = lines(&dir.join("targets.jsonl"));
    assert_eq!(table.len() - 1, records.len(), "{shown}");
    for (row, rec) in table[1..].iter().zip(&records) {
        assert_eq!(row[0], rec["target"].to_string(), "{shown}");
        assert_eq!(row[2], rec["status"].as_str().unwrap(), "{shown}");
    }
    for k in 0..2 {
        assert!(
            table[1..].iter().any(|r| r[0] == k.to_string()),
            "target {k} has no rows:\n{shown}"
        );
    }
    // One target (--params): no target column.
    let mut c = bin();
    c.args(["solve", f, "-q", "--threads", "2", "--print", "--from"])
        .arg(&gen)
        .args(["--params", "l1=1, l2=4, l3=2.5, u3=0.8, q=1"]);
    let shown = stdout_of(c);
    let table = printed_table(&shown);
    assert_eq!(table[0][..2], ["mult", "status"], "{shown}");
    assert_eq!(
        table[1..].iter().filter(|r| r[1] == "nonsingular").count(),
        6,
        "{shown}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `solve F --start-system G --from G_SOLS`: the γ-trick homotopy from the user's start
/// system reaches the solutions of a direct solve.
#[test]
fn user_start_system_reaches_the_direct_solutions() {
    let dir = scratch("user");
    let g = dir.join("g.yaml");
    std::fs::write(
        &g,
        "variables: [x, y, z]\nequations: [\"x^2 - 1\", \"y^2 - 4\", \"z^2 + 1\"]\n",
    )
    .unwrap();
    let f = dir.join("f.yaml");
    std::fs::write(
        &f,
        "variables: [x, y, z]\nequations:\n  - \"x^2 + 0.3*y^2 - 1.1*z^2 + y*z - 3*x + 1\"\n  - \"y^2 + 0.5*x^2 + 0.9*z^2 - x*z + 2*z - 0.5\"\n  - \"z^2 - 0.4*x^2 + 1.3*y^2 + x*y + y - 2\"\n",
    )
    .unwrap();
    let gs = dir.join("g.jsonl");
    let mut c = bin();
    c.args(["solve", "--json", "-q"]).arg(&g).arg("-o").arg(&gs);
    assert_eq!(json_of(c)["nonsingular"], 8);
    let out = dir.join("f.jsonl");
    let mut c = bin();
    c.args(["solve", "--json", "-q"])
        .arg(&f)
        .arg("--start-system")
        .arg(&g)
        .arg("--from")
        .arg(&gs)
        .arg("-o")
        .arg(&out);
    let s = json_of(c);
    assert_eq!(s["start"], "start-system");
    assert_eq!(s["paths"], 8);
    let mine = nonsingular_lines(&lines(&out), None);
    let want = direct(&pathtrack::system::load(&f).unwrap());
    assert_eq!(want.len(), 8);
    if let Err(e) = same_solutions(&params::startfile::distinct(mine), &want, 1e-8) {
        panic!("{e}");
    }
    // --verbose and --print as in a plain solve
    let mut c = bin();
    c.args(["solve", "-q", "--verbose", "--print"])
        .arg(&f)
        .arg("--start-system")
        .arg(&g)
        .arg("--from")
        .arg(&gs);
    let shown = stdout_of(c);
    assert!(shown.contains("seconds by phase"), "{shown}");
    let table = printed_table(&shown);
    assert_eq!(table[0][..5], ["mult", "status", "x", "y", "z"], "{shown}");
    assert_eq!(
        table[1..].iter().filter(|r| r[1] == "nonsingular").count(),
        8,
        "{shown}"
    );
}

/// Runs the command, which must fail with exit code 2; returns its stderr.
fn fails(mut c: Command) -> String {
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{c:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn bad_parameter_input_is_a_clear_error() {
    let dir = scratch("bad");
    let f = "systems/families/network.yaml";
    let solve = |extra: &[&str]| {
        let mut c = bin();
        c.args(["solve", f, "-q"]).args(extra);
        c
    };
    let e = fails(solve(&["--params", "k1=1, k2=1, k3=1, k4=1, T=1, z=3"]));
    assert!(
        e.contains("unknown parameter 'z'") && e.contains("k1, k2, k3, k4, T"),
        "{e}"
    );
    let e = fails(solve(&["--params", "k1=1, k2=1, k3=1, k4=1"]));
    assert!(e.contains("no value for parameter T"), "{e}");
    let e = fails(solve(&["--params", "k1=1, k2=1, k3=1, k4=1, T=abc"]));
    assert!(e.contains("'abc' of 'T'"), "{e}");
    let csv = dir.join("short.csv");
    std::fs::write(&csv, "k1,k2,k3,k4,T\n1,2,3,4,5\n1,2,3,4\n").unwrap();
    let e = fails(solve(&["--params-file", csv.to_str().unwrap()]));
    assert!(
        e.contains("short.csv:3:1") && e.contains("row 1: 4 values"),
        "{e}"
    );
    let csv = dir.join("value.csv");
    std::fs::write(&csv, "k1,k2,k3,k4,T\n1,2,3,x+,5\n").unwrap();
    let e = fails(solve(&["--params-file", csv.to_str().unwrap()]));
    assert!(
        e.contains("value.csv:2:7") && e.contains("row 0, column 'k4'"),
        "{e}"
    );
    let csv = dir.join("header.csv");
    std::fs::write(&csv, "k1,k2,k3,k5,T\n1,2,3,4,5\n").unwrap();
    let e = fails(solve(&["--params-file", csv.to_str().unwrap()]));
    assert!(
        e.contains("header.csv:1:10") && e.contains("unknown parameter 'k5'"),
        "{e}"
    );
    // start solutions without their parameter values
    let from = dir.join("from.jsonl");
    std::fs::write(
        &from,
        "{\"status\":\"nonsingular\",\"coordinates\":[[1,0],[1,0],[1,0]]}\n",
    )
    .unwrap();
    let e = fails(solve(&[
        "--from",
        from.to_str().unwrap(),
        "--params",
        "k1=1,k2=1,k3=1,k4=1,T=1",
    ]));
    assert!(
        e.contains("from.jsonl:1:1") && e.contains("no \"parameters\""),
        "{e}"
    );
    let e = fails(solve(&["--from", from.to_str().unwrap()]));
    assert!(e.contains("--params or --params-file"), "{e}");
    // PHCpack's format has no parameters
    let phc = dir.join("s.phc");
    std::fs::write(&phc, "2\nx^2 - 1;\ny - x;\n").unwrap();
    let mut c = bin();
    c.args(["solve", phc.to_str().unwrap(), "--params", "a=1"]);
    let e = fails(c);
    assert!(e.contains("PHCpack format has no parameters"), "{e}");
    // a system without parameters
    let mut c = bin();
    c.args(["solve", "systems/katsura5.yaml", "--params", "a=1"]);
    let e = fails(c);
    assert!(e.contains("has no parameters"), "{e}");
    // a family where a plain system is expected
    let mut c = bin();
    c.args(["count", f]);
    let e = fails(c);
    assert!(e.contains("has parameters (k1, k2, k3, k4, T)"), "{e}");
}

/// A real sweep through a branch point: `x² = a` from `a = 1` to real targets on both sides
/// of `a = 0`, where the two solutions meet. The straight segment passes through `a = 0`;
/// the γ-bent path (`Family::path_homotopy`) goes around it, so both solutions arrive, as
/// `±√a`, for every seed.
#[test]
fn real_sweep_through_a_branch_point() {
    let fam = Family::parse(
        "variables: [x, y]\nparameters: [a]\nequations: [\"x^2 - a\", \"y - x - a\"]\n",
        "sweep.yaml",
    )
    .unwrap()
    .unwrap();
    let one = C64::new(1.0, 0.0);
    let start = vec![vec![one, one + one], vec![-one, C64::new(0.0, 0.0)]];
    let mut backend = pathtrack::backend::cpu::CpuBackend::new(0).unwrap();
    for seed in 1..=4u64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        for a in [0.5, -0.5, -2.0, 3.0] {
            let p1 = [C64::new(a, 0.0)];
            let gamma = params::random_gamma(&mut rng);
            let (_, ends) = params::track_collect(
                &fam,
                &start,
                &[one],
                &p1,
                gamma,
                &SolveOptions::default(),
                &mut backend,
            )
            .unwrap();
            let got = params::nonsingular_points(&ends);
            let r = C64::new(a, 0.0).sqrt();
            let want = vec![vec![r, r + a], vec![-r, -r + a]];
            if let Err(e) = same_solutions(&got, &want, 1e-10) {
                panic!("seed {seed}, a = {a}: {e}");
            }
        }
    }
}
