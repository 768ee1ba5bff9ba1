//! Limits, inputs and outputs of the binary: every bad request is a clear error with exit
//! code 2 before any work, never a panic, a hang or a silent wrong answer (issue 44).

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pathtrack"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch directory of this test process.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pathtrack-limits-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn no_panic(o: &Output) {
    let e = stderr(o);
    assert!(
        !e.contains("panicked") && !e.contains("RUST_BACKTRACE"),
        "{e}"
    );
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}

#[test]
fn out_of_range_paths_are_usage_errors_naming_index_and_range() {
    // katsura-5 (32 start paths with the total degree) and cyclic-5 (70 polyhedral paths).
    for (file, start, count) in [
        ("systems/katsura5.yaml", "total-degree", 32u64),
        ("systems/cyclic5.yaml", "polyhedral", 70),
    ] {
        for bad in [count, count + 1, 99_999] {
            let paths = format!("0,{bad}");
            let o = run(&[
                "solve",
                file,
                "--start",
                start,
                "--paths",
                &paths,
                "--backend",
                "cpu",
                "-q",
            ]);
            no_panic(&o);
            assert_eq!(o.status.code(), Some(2), "{file} --paths {paths}");
            let e = stderr(&o);
            assert!(
                e.contains(&format!("path {bad}")) && e.contains(&format!("0 to {}", count - 1)),
                "{e}"
            );
            assert!(o.stdout.is_empty());
        }
    }
}

#[test]
fn paths_tracked_counts_the_chosen_paths() {
    for (file, start, chosen) in [
        ("systems/cyclic5.yaml", "total-degree", "0,1,2"),
        ("systems/katsura5.yaml", "total-degree", "5"),
        ("systems/katsura5.yaml", "total-degree", "0,3,3,7,15"),
        // the default start (polyhedral for cyclic-5, 70 paths)
        ("systems/cyclic5.yaml", "auto", "0,1,2"),
    ] {
        let o = run(&[
            "solve",
            file,
            "--start",
            start,
            "--paths",
            chosen,
            "--json",
            "--backend",
            "cpu",
            "-q",
        ]);
        let v = json(&o);
        let mut ids: Vec<&str> = chosen.split(',').collect();
        ids.sort();
        ids.dedup();
        assert_eq!(v["paths"], ids.len() as u64, "{file} --paths {chosen}");
        let ends = v["finite"].as_u64().unwrap()
            + v["at_infinity"].as_u64().unwrap()
            + v["failed"].as_u64().unwrap();
        assert!(ends <= ids.len() as u64, "{v}");
    }
}

/// `x_k x_{k+1}^(d-1) - 1` (k < n-1), `x_{n-1}^d - 1`: mixed volume d, total degree d^n.
fn binomial_chain(n: usize, d: usize) -> String {
    let vars: Vec<String> = (0..n).map(|k| format!("x{k}")).collect();
    let mut s = format!("variables: [{}]\nequations:\n", vars.join(", "));
    for k in 0..n - 1 {
        s += &format!("  - \"x{k}*x{}^{} - 1\"\n", k + 1, d - 1);
    }
    s += &format!("  - \"x{}^{d} - 1\"\n", n - 1);
    s
}

#[test]
fn total_degree_beyond_2_64_is_a_decimal_string_in_solve_and_count() {
    let dir = scratch("td");
    for (n, d) in [(10usize, 100usize), (14, 30), (20, 12)] {
        let f = write(&dir, &format!("chain{n}_{d}.yaml"), &binomial_chain(n, d));
        let want = num_bigint::BigUint::from(d).pow(n as u32).to_string();
        assert!(want.len() > 19);
        let c = json(&run(&["count", &f, "--json"]));
        assert_eq!(c["total_degree"], serde_json::json!(want), "{c}");
        assert_eq!(c["mixed_volume"], d as u64);
        let o = run(&["solve", &f, "--json", "--backend", "cpu", "-q"]);
        no_panic(&o);
        let v = json(&o);
        assert_eq!(v["root_counts"]["total_degree"], serde_json::json!(want));
        assert_eq!(v["paths"], d as u64);
        // The table form prints it too.
        let t = run(&["solve", &f, "--backend", "cpu", "-q"]);
        assert!(t.status.success(), "{}", stderr(&t));
    }
}

#[test]
fn threads_and_batch_beyond_the_machine_are_capped_with_a_note() {
    for threads in ["5000", "100000"] {
        let o = run(&[
            "solve",
            "systems/katsura5.yaml",
            "--threads",
            threads,
            "--json",
            "--backend",
            "cpu",
            "-q",
        ]);
        no_panic(&o);
        assert_eq!(json(&o)["finite"], 32, "--threads {threads}");
        assert!(stderr(&o).contains("note: --threads"), "{}", stderr(&o));
        let c = run(&["count", "systems/katsura5.yaml", "--threads", threads]);
        no_panic(&c);
        assert!(c.status.success());
    }
    for batch in ["100000000", "10000000000"] {
        let o = run(&[
            "solve",
            "systems/katsura5.yaml",
            "--batch",
            batch,
            "--json",
            "--backend",
            "cpu",
            "-q",
        ]);
        no_panic(&o);
        assert_eq!(json(&o)["finite"], 32, "--batch {batch}");
        assert!(stderr(&o).contains("note: --batch"), "{}", stderr(&o));
    }
}

#[test]
fn a_closed_stdout_ends_every_writer_quietly() {
    let cases: [&[&str]; 4] = [
        &["generate", "cyclic", "100"],
        &["generate", "katsura", "60"],
        &["count", "systems/katsura5.yaml"],
        &["solve", "systems/katsura5.yaml", "--backend", "cpu", "-q"],
    ];
    for args in cases {
        let mut child = bin()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the output is written.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        no_panic(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn unbounded_runs_are_refused_with_the_limit_and_its_option() {
    let dir = scratch("work");
    for d in [100_000usize, 300_000, 1_000_000] {
        let f = write(
            &dir,
            &format!("x{d}.yaml"),
            &format!("variables: [x, y]\nequations:\n  - \"x^{d} + y^2 - 1\"\n  - \"x - y - 2\"\n"),
        );
        let t = std::time::Instant::now();
        let o = run(&[
            "solve",
            &f,
            "--start",
            "total-degree",
            "--backend",
            "cpu",
            "-q",
        ]);
        no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "d = {d}");
        assert!(stderr(&o).contains("--max-work"), "{}", stderr(&o));
        assert!(t.elapsed().as_secs() < 30, "refused at once, d = {d}");
    }
    // More start paths than --max-paths: refused, and accepted when the bound is raised.
    for max in ["10", "31"] {
        let o = run(&[
            "solve",
            "systems/katsura5.yaml",
            "--start",
            "total-degree",
            "--max-paths",
            max,
        ]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("--max-paths 32"), "{}", stderr(&o));
    }
    let o = run(&[
        "solve",
        "systems/katsura5.yaml",
        "--start",
        "total-degree",
        "--max-paths",
        "32",
        "--json",
        "--backend",
        "cpu",
        "-q",
    ]);
    assert_eq!(json(&o)["finite"], 32);
}

/// `n` random dense linear equations (integer coefficients 1..9, a seeded LCG).
fn dense_linear(n: usize, seed: u64) -> String {
    let mut s = seed;
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) % 9 + 1
    };
    let vars: Vec<String> = (0..n).map(|k| format!("x{k}")).collect();
    let mut out = format!("variables: [{}]\nequations:\n", vars.join(", "));
    for _ in 0..n {
        let terms: Vec<String> = (0..n).map(|j| format!("{}*x{j}", next())).collect();
        out += &format!("  - \"{} - {}\"\n", terms.join(" + "), next());
    }
    out
}

#[test]
fn long_sums_parse_in_linear_time() {
    // 300 equations of 301 terms, and one equation of 60,000 terms: `count` reads and
    // counts them (a sum was recombined after every term, and the supports searched
    // linearly: quadratic).
    let dir = scratch("parse");
    for (n, seed) in [(150usize, 1u64), (300, 2)] {
        let f = write(&dir, &format!("lin{n}.yaml"), &dense_linear(n, seed));
        let sys = pathtrack::system::load(std::path::Path::new(&f)).unwrap();
        assert_eq!(sys.n(), n);
        assert!(sys.equations.iter().all(|e| e.terms.len() == n + 1));
    }
    let mut terms = Vec::new();
    'outer: for a in 0..60 {
        for b in 0..60 {
            for c in 0..17 {
                terms.push(format!("x^{a}*y^{b}*z^{c}"));
                if terms.len() == 60_000 {
                    break 'outer;
                }
            }
        }
    }
    let text = format!(
        "variables: [x, y, z]\nequations:\n  - \"{}\"\n  - \"x - y\"\n  - \"y - z - 1\"\n",
        terms.join(" + ")
    );
    let t = std::time::Instant::now();
    let sys = pathtrack::system::parse_str(&text, "big.yaml").unwrap();
    assert_eq!(sys.equations[0].terms.len(), 60_000);
    let s = pathtrack::start::polyhedral::Supports::from_system(&sys).unwrap();
    assert_eq!(s.support(0).len(), 60_000);
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
}

/// A dense linear system of hundreds of variables is solved from the total-degree start's
/// one path, without counting mixed cells (n = 150 took over 100 s in that count), and
/// its solution solves it.
#[test]
fn large_linear_systems_skip_the_mixed_cells() {
    let dir = scratch("linear");
    for (n, seed) in [(100usize, 3u64), (150, 4)] {
        let f = write(&dir, &format!("lin{n}.yaml"), &dense_linear(n, seed));
        let sols = dir.join(format!("lin{n}.jsonl"));
        let sols = sols.to_str().unwrap();
        let o = run(&[
            "solve",
            &f,
            "--json",
            "--backend",
            "cpu",
            "-q",
            "--solutions",
            sols,
        ]);
        no_panic(&o);
        let v = json(&o);
        assert_eq!(v["start"], "total-degree", "{v}");
        assert_eq!(v["start_reason"], pathtrack::solver::LINEAR_REASON, "{v}");
        assert_eq!(
            (v["paths"].as_u64(), v["nonsingular"].as_u64()),
            (Some(1), Some(1))
        );
        let text = std::fs::read_to_string(sols).unwrap();
        let sol: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let x: Vec<num_complex::Complex64> = sol["coordinates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|z| num_complex::Complex64::new(z[0].as_f64().unwrap(), z[1].as_f64().unwrap()))
            .collect();
        let sys = pathtrack::system::load(std::path::Path::new(&f)).unwrap();
        let r = sys.relative_residual(&x);
        assert!(r < 1e-12, "n = {n}: residual {r:.1e}");
    }
}

#[test]
fn outputs_are_checked_before_the_solve() {
    let dir = scratch("out");
    let input = write(
        &dir,
        "k.yaml",
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/systems/katsura5.yaml"
        ))
        .unwrap(),
    );
    let original = std::fs::read(&input).unwrap();
    let dotted = format!("{}/./k.yaml", dir.display());
    let a = dir.join("a.jsonl");
    let a_alias = format!(
        "{}/../{}/a.jsonl",
        dir.display(),
        dir.file_name().unwrap().to_str().unwrap()
    );
    let missing = dir.join("no/such/dir/s.jsonl");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["-o".into(), input.clone()], "input file"),
        (vec!["--solutions".into(), dotted.clone()], "input file"),
        (
            vec![
                "-o".into(),
                a.display().to_string(),
                "--solutions".into(),
                a_alias.clone(),
            ],
            "same file",
        ),
        (
            vec!["--solutions".into(), missing.display().to_string()],
            "--solutions",
        ),
        (vec!["-o".into(), missing.display().to_string()], "-o"),
        (vec!["-o".into(), dir.display().to_string()], "directory"),
    ];
    for (extra, what) in cases {
        let t = std::time::Instant::now();
        let mut args = vec![
            "solve".to_string(),
            input.clone(),
            "--backend".into(),
            "cpu".into(),
            "-q".into(),
        ];
        args.extend(extra.iter().cloned());
        let o = bin().args(&args).output().unwrap();
        no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        assert!(stderr(&o).contains(what), "{extra:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "no solve ran: {extra:?}");
        assert!(t.elapsed().as_secs() < 10);
        assert_eq!(std::fs::read(&input).unwrap(), original, "input intact");
    }
    // rref -o onto its own input.
    let m = write(
        &dir,
        "m.mtx",
        "%%MatrixMarket matrix array real general\n1 1\n2\n",
    );
    let o = run(&["rref", &m, "-o", &m]);
    assert_eq!(o.status.code(), Some(2));
    assert!(std::fs::read_to_string(&m).unwrap().ends_with("2\n"));
    // A hard link to the input is the input; so are two hard links among the outputs.
    let link = dir.join("k_link.yaml");
    let _ = std::fs::remove_file(&link);
    std::fs::hard_link(&input, &link).unwrap();
    let link = link.display().to_string();
    let b = dir.join("b.jsonl");
    std::fs::write(&b, "").unwrap();
    let b_link = dir.join("b_link.jsonl");
    let _ = std::fs::remove_file(&b_link);
    std::fs::hard_link(&b, &b_link).unwrap();
    let (b, b_link) = (b.display().to_string(), b_link.display().to_string());
    for (args, what) in [
        (
            vec!["solve", &input, "--backend", "cpu", "-q", "-o", &link],
            "input file",
        ),
        (
            vec![
                "solve",
                &input,
                "--backend",
                "cpu",
                "-q",
                "-o",
                &b,
                "--solutions",
                &b_link,
            ],
            "same file",
        ),
        // convert writes its input only where -o names it, which is refused too.
        (
            vec!["convert", &input, "--to", "phc", "-o", &input],
            "input file",
        ),
        (
            vec!["convert", &input, "--to", "phc", "-o", &link],
            "input file",
        ),
    ] {
        let o = run(&args);
        no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(what), "{args:?}: {}", stderr(&o));
        assert_eq!(
            std::fs::read(&input).unwrap(),
            original,
            "input intact: {args:?}"
        );
    }
}

#[test]
fn contradictions_and_unused_variables_have_their_own_warnings() {
    let dir = scratch("warn");
    let cases = [
        ("variables: [x, y]\nequations:\n  - \"x + y - 1\"\n  - \"2*x + 2*y - 3\"\n", "contradicts"),
        ("variables: [x, y, z]\nequations:\n  - \"x + y - 1\"\n  - \"x - y + z\"\n  - \"3*x - y + 2*z - 7\"\n", "contradicts"),
        ("variables: [x, y]\nequations:\n  - \"x^2 + y^2 - 1\"\n  - \"3*x^2 + 3*y^2 + 5\"\n", "contradicts"),
        ("variables: [x, y, z]\nequations:\n  - \"x + y - 1\"\n  - \"x - y^2 - 3\"\n  - \"x*y - 3\"\n", "'z' occurs in no equation"),
        ("variables: [x, y, w]\nequations:\n  - \"x^2 - 1\"\n  - \"y - 3\"\n  - \"x*y\"\n", "'w' occurs in no equation"),
        ("variables: [x, y]\nequations:\n  - \"x^2 + y - 1\"\n  - \"(x^2 + y - 1)^2\"\n", "depends on the others"),
    ];
    for (k, (text, want)) in cases.iter().enumerate() {
        let f = write(&dir, &format!("w{k}.yaml"), text);
        let o = run(&["solve", &f, "--backend", "cpu", "-q"]);
        no_panic(&o);
        let e = stderr(&o);
        assert!(e.contains(want), "case {k}: {e}");
        if !want.contains("depends") {
            assert!(!e.contains("depends on"), "case {k}: {e}");
        }
    }
}

#[test]
fn exponents_above_2_20_are_refused_by_the_parser_for_every_start() {
    let dir = scratch("exp");
    for (expr, ok) in [
        ("x^1048576 - 1", true),
        ("x^1048577 - 1", false),
        ("(x^1024)^1025 - 1", false),
        ("x^1048576*x - 1", false),
        ("x^-1048577 + 1", false),
        ("x^2147483648 - 1", false),
    ] {
        let text = format!("variables: [x, y]\nequations:\n  - \"{expr}\"\n  - \"y - 1\"\n");
        let r = pathtrack::system::parse_str(&text, "e.yaml");
        assert_eq!(r.is_ok(), ok, "{expr}: {r:?}");
        if !ok {
            assert!(r.unwrap_err().message.contains("2^20"), "{expr}");
        }
        if !ok {
            let f = write(&dir, "e.yaml", &text);
            for start in ["polyhedral", "total-degree"] {
                let o = run(&["solve", &f, "--start", start, "--backend", "cpu", "-q"]);
                assert_eq!(o.status.code(), Some(2), "{expr} {start}");
                assert!(stderr(&o).contains("2^20"), "{}", stderr(&o));
            }
        }
    }
}

#[test]
fn rref_refuses_integers_beyond_doubles_and_scales_tiny_matrices() {
    let dir = scratch("rref");
    for digits in [309usize, 400, 2000] {
        let big = "9".repeat(digits);
        let m = write(
            &dir,
            "big.mtx",
            &format!("%%MatrixMarket matrix array integer general\n2 2\n1\n{big}\n2\n3\n"),
        );
        let o = run(&["rref", &m, "--json"]);
        no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{digits} digits");
        assert!(stderr(&o).contains("big.mtx:4:"), "{}", stderr(&o));
        // Exact over Z/p.
        assert!(run(&["rref", &m, "--prime", "65521", "--json"])
            .status
            .success());
    }
    for (a, b) in [
        ("1e-320", "1e-320"),
        ("4e-324", "3e-310"),
        ("1e-300", "2e-300"),
        ("1e300", "1.5e308"),
    ] {
        let m = write(
            &dir,
            "d.mtx",
            &format!("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 {a}\n2 2 {b}\n"),
        );
        let o = run(&["rref", &m]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(
            !text.to_lowercase().contains("nan") && !text.contains("inf"),
            "{text}"
        );
        assert!(text.contains("rank 2"), "diag({a}, {b}): {text}");
        let vals: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('%'))
            .skip(1)
            .collect();
        assert_eq!(vals, ["1", "0", "0", "1"], "diag({a}, {b}): {text}");
    }
}

/// `x_k^D·x_{k+1} + x_{k+2} − 1` (cyclic indices), D = 2^20: mixed volume about D^n. With
/// n = 4 it is ≈ 2^80: `count` reports it (and the total degree and m-hom number) as
/// decimal strings, exact to the digit of the total degree's `(D+1)^4`; with n = 8 a cell's
/// determinant passes 2^127 and the run stops with a usage error (exit 2) that says so,
/// never an internal error.
#[test]
fn mixed_volumes_beyond_2_64_are_counted_and_beyond_2_127_refused() {
    let dir = scratch("bigcells");
    let system = |n: usize| {
        let vars: Vec<String> = (0..n).map(|k| format!("x{k}")).collect();
        let mut s = format!("variables: [{}]\nequations:\n", vars.join(", "));
        for k in 0..n {
            s += &format!(
                "  - \"x{k}^1048576*x{} + x{} - 1\"\n",
                (k + 1) % n,
                (k + 2) % n
            );
        }
        s
    };
    let f = write(&dir, "big4.yaml", &system(4));
    let o = run(&["count", &f, "--json"]);
    no_panic(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    let c = json(&o);
    let td = num_bigint::BigUint::from(1048577u32).pow(4).to_string();
    assert_eq!(c["total_degree"], serde_json::json!(td), "{c}");
    let mv: num_bigint::BigUint = c["mixed_volume"]
        .as_str()
        .expect("a string")
        .parse()
        .unwrap();
    assert!(
        mv > num_bigint::BigUint::from(u64::MAX) && mv.to_string() <= td,
        "{c}"
    );
    let f = write(&dir, "big8.yaml", &system(8));
    let o = run(&["count", &f]);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("exceeds 2^127"), "{}", stderr(&o));
}

/// `x_k^10·x_{k+1} − x_k` (k < n−1), `x_{n−1}^10 − x_{n−1}`: the stable mixed cells grow as
/// 2^n, so a count at n ≥ 16 takes minutes. It shows that it runs (a line while the cells
/// are counted, none with `-q`), and its stable mixed volume is the number of its roots in
/// C^n, all isolated: `Σ_{j=0}^{n} 9^j = (9^{n+1} − 1)/8` (the last j coordinates nonzero,
/// `x_k^9·x_{k+1} = 1` there; the others 0).
#[test]
fn a_long_count_shows_its_progress_and_counts_every_root() {
    let n = 12;
    let vars: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
    let mut eqs: Vec<String> = (0..n - 1)
        .map(|k| format!("  - \"x{k}^10*x{} - x{k}\"", k + 1))
        .collect();
    eqs.push(format!("  - \"x{0}^10 - x{0}\"", n - 1));
    let text = format!(
        "variables: [{}]\nequations:\n{}\n",
        vars.join(", "),
        eqs.join("\n")
    );
    let dir = scratch("long-count");
    let file = write(&dir, "chain12.yaml", &text);
    let shown = bin()
        .args(["count", &file, "--json", "--threads", "1"])
        .env("PATHTRACK_PROGRESS_EVERY", "0.01")
        .output()
        .unwrap();
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert!(
        stderr(&shown).contains("counting mixed cells"),
        "{}",
        stderr(&shown)
    );
    let expected = (9u128.pow(n as u32 + 1) - 1) / 8;
    let v = json(&shown);
    assert_eq!(
        v["stable_mixed_volume"].to_string().trim_matches('"'),
        expected.to_string()
    );
    let quiet = bin()
        .args(["count", &file, "-q", "--threads", "1"])
        .env("PATHTRACK_PROGRESS_EVERY", "0.01")
        .output()
        .unwrap();
    assert!(quiet.status.success());
    assert!(!stderr(&quiet).contains("counting"), "{}", stderr(&quiet));
}
