//! The binary as a user runs it: README's command, JSON summary, JSON Lines, exit codes.

use std::process::Command;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pathtrack"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

#[test]
fn default_subcommand_solves_and_prints_a_table() {
    let out = bin()
        .args(["systems/katsura5.yaml", "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("nonsingular solutions"))
        .unwrap();
    assert!(row.contains(" 32 ("), "{text}");
}

#[test]
fn json_summary_and_streamed_solutions() {
    let dir = std::env::temp_dir().join(format!("pathtrack-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sols = dir.join("sols.jsonl");
    let out = bin()
        .args([
            "solve",
            "systems/cyclic5.yaml",
            "--start",
            "total-degree",
            "--json",
            "-o",
        ])
        .arg(&sols)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    for key in [
        "system",
        "variables",
        "paths",
        "finite",
        "nonsingular",
        "singular",
        "at_infinity",
        "real",
        "failed",
        "seconds",
        "backend",
        "start",
        "root_counts",
    ] {
        assert!(v.get(key).is_some(), "missing key {key}");
    }
    // The phases are non-negative and account for the run's seconds (what is left is the
    // final count).
    let seconds = v["seconds"].as_f64().unwrap();
    let phases: Vec<f64> = ["start_system", "backend_setup", "tracking", "recovery"]
        .iter()
        .map(|k| {
            v["phases"][k]
                .as_f64()
                .unwrap_or_else(|| panic!("phase {k}"))
        })
        .collect();
    assert!(phases.iter().all(|&p| p >= 0.0), "{phases:?}");
    let sum: f64 = phases.iter().sum();
    assert!(
        sum <= seconds && seconds - sum < 0.05 + 0.1 * seconds,
        "phases {phases:?} against {seconds} s"
    );
    assert_eq!(v["finite"], 70);
    assert_eq!(v["paths"], 120);
    assert_eq!(v["root_counts"]["total_degree"], 120);
    let text = std::fs::read_to_string(&sols).unwrap();
    let mut lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The run's header line first (docs/output.md), then one line per path.
    let header = lines.remove(0);
    assert_eq!(header["pathtrack_run"], 1, "{header}");
    assert_eq!(header["seed"], 1, "{header}");
    assert_eq!(lines.len(), 120);
    let nonsing = lines
        .iter()
        .filter(|l| l["status"] == "nonsingular")
        .count();
    assert_eq!(nonsing, 70);
    for l in &lines {
        for key in [
            "coordinates",
            "status",
            "residual",
            "condition",
            "path",
            "steps",
        ] {
            assert!(l.get(key).is_some(), "line lacks {key}: {l}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_input_exits_2_with_the_file_named() {
    let dir = std::env::temp_dir().join(format!("pathtrack-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.yaml");
    std::fs::write(&f, "variables: [x, y]\nequations: [\"x + w\", \"y - 1\"]\n").unwrap();
    let out = bin().arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.yaml") && err.contains("w"), "{err}");
    let out = bin().arg(dir.join("missing.yaml")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cuda_backend_without_gpu_is_a_clear_error() {
    let out = bin()
        .args(["systems/katsura5.yaml", "--backend", "cuda", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cuda"));
}

fn json_of(args: &[&str]) -> (serde_json::Value, String) {
    let out = bin().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    (v, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The default start is chosen from the root counts: total degree where it equals the
/// stable mixed volume (katsura-5), polyhedral where it is far above (cyclic-5); the summary says
/// why, and the run is the one the explicit `--start` of the choice gives (same seed, same
/// endpoints, bit for bit).
#[test]
fn the_default_start_is_chosen_and_explained() {
    let dir = std::env::temp_dir().join(format!("pathtrack-cli-auto-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (system, chosen, finite) in [
        ("systems/katsura5.yaml", "total-degree", 32),
        ("systems/cyclic5.yaml", "polyhedral", 70),
    ] {
        let auto = dir.join("auto.jsonl");
        let explicit = dir.join("explicit.jsonl");
        let (v, _) = json_of(&[system, "--json", "-q", "-o", auto.to_str().unwrap()]);
        assert_eq!(v["start"], chosen, "{system}");
        assert_eq!(v["finite"], finite, "{system}");
        // The count compared with is the stable mixed volume (katsura-5: 32, while its
        // mixed volume in the torus is 30), and the reason names it so.
        let why = v["start_reason"].as_str().unwrap();
        let stable = &v["root_counts"]["stable_mixed_volume"];
        assert!(
            why.contains(&format!("× stable mixed volume {stable}")),
            "{why}"
        );
        assert!(!why.contains("× mixed volume"), "{why}");
        let (w, _) = json_of(&[
            system,
            "--json",
            "-q",
            "--start",
            chosen,
            "-o",
            explicit.to_str().unwrap(),
        ]);
        assert!(w.get("start_reason").is_none());
        // The endpoint lines, after the header (which records --start as given).
        let lines = |p: &std::path::Path| {
            let text = std::fs::read_to_string(p).unwrap();
            text.lines().skip(1).map(String::from).collect::<Vec<_>>()
        };
        assert_eq!(
            lines(&auto),
            lines(&explicit),
            "{system}: auto and --start {chosen} differ"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// On a non-terminal a plain progress line comes every interval (shortened here through
/// `PATHTRACK_PROGRESS_EVERY`): it names the phase and never counts past the total; none
/// with `-q`, none for a run shorter than the interval.
#[test]
fn plain_progress_lines_on_a_non_terminal() {
    let run = |every: &str, quiet: bool| {
        let mut c = bin();
        c.env("PATHTRACK_PROGRESS_EVERY", every).args([
            "systems/cyclic6.yaml",
            "--start",
            "polyhedral",
            "--threads",
            "1",
            "--backend",
            "cpu",
        ]);
        if quiet {
            c.arg("-q");
        }
        let out = c.output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = run("0.01", false);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("pathtrack: ["))
        .collect();
    assert!(lines.len() >= 2, "{err}");
    assert!(lines.iter().any(|l| l.contains("first pass")), "{err}");
    for l in &lines {
        for (done, total) in progress_counts(l) {
            assert!(done <= total, "{l}");
        }
    }
    assert!(!run("0.01", true).contains("pathtrack: ["));
    assert!(!run("1000", false).contains("pathtrack: ["));
}

/// The `done/total` pairs of a progress line (`3/5,040 paths`, `1/1 re-tracked`).
fn progress_counts(line: &str) -> Vec<(u64, u64)> {
    let num = |s: &str| {
        s.trim_end_matches([',', ':'])
            .replace(',', "")
            .parse::<u64>()
    };
    line.split_whitespace()
        .filter_map(|w| w.split_once('/'))
        .filter_map(|(a, b)| Some((num(a).ok()?, num(b).ok()?)))
        .collect()
}

/// A run with a recovery round (eco-8's paths 18 and 264 fail in the first pass and are
/// tracked again): the progress names the first pass and the round, each finished phase
/// leaves its line, no count passes its total, and nothing of it reaches stdout (one JSON
/// object) or the `-o` file (JSON lines only).
#[test]
fn progress_through_a_recovery_round_counts_each_path_once() {
    let dir = std::env::temp_dir().join(format!("pathtrack-cli-progress-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sols = dir.join("eco8.jsonl");
    let out = bin()
        .env("PATHTRACK_PROGRESS_EVERY", "0.001")
        .args([
            "systems/eco8.yaml",
            "--start",
            "total-degree",
            "--backend",
            "cpu",
            "--paths",
            "18,264",
            "--json",
            "-o",
        ])
        .arg(&sols)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    let rounds = v["phases"]["recovery_rounds"].as_array().unwrap();
    assert!(
        !rounds.is_empty() && v["retracked"].as_u64() > Some(0),
        "{v}"
    );
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("pathtrack: "))
        .collect();
    let first = "pathtrack: first pass: 2/2 paths in ";
    assert!(lines.iter().any(|l| l.starts_with(first)), "{err}");
    let round = format!(
        "pathtrack: recovery round {}: {n}/{n} paths re-tracked in ",
        rounds.len(),
        n = rounds.last().unwrap()["paths"]
    );
    assert!(lines.iter().any(|l| l.starts_with(&round)), "{err}");
    for l in &lines {
        for (done, total) in progress_counts(l) {
            assert!(done <= total, "{l}");
        }
    }
    for line in std::fs::read_to_string(&sols).unwrap().lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("a JSON line");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The real solutions split into nonsingular and singular, in the JSON summary and the
/// table. The system is x = u + v, y = u − 2v (real) substituted into
/// `(x − 1)² (x + 2) (x² + 1) = 0`, `(y² − 4)(y² + 9) = 0`: x ∈ {1 (double), −2, ±i},
/// y ∈ {±2, ±3i}, so 16 solutions: x = 1 gives 4 singular ones (2 real: y = ±2), x = −2
/// gives 4 nonsingular ones (2 real), x = ±i 8 nonsingular complex ones.
#[test]
fn real_solutions_are_split_into_nonsingular_and_singular() {
    let dir = std::env::temp_dir().join(format!("pathtrack-cli-real-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("real_split.yaml");
    std::fs::write(
        &f,
        "variables: [u, v]\nequations:\n\
         \x20 - \"((u + v) - 1)^2 * ((u + v) + 2) * ((u + v)^2 + 1)\"\n\
         \x20 - \"((u - 2*v)^2 - 4) * ((u - 2*v)^2 + 9)\"\n",
    )
    .unwrap();
    let sols = dir.join("sols.jsonl");
    let (v, _) = json_of(&[
        f.to_str().unwrap(),
        "--backend",
        "cpu",
        "--json",
        "-q",
        "--solutions",
        sols.to_str().unwrap(),
    ]);
    assert_eq!(
        (v["nonsingular"].as_u64(), v["singular"].as_u64()),
        (Some(12), Some(4)),
        "{v}"
    );
    assert_eq!(v["real_nonsingular"], 2, "{v}");
    assert_eq!(v["real_singular"], 2, "{v}");
    assert_eq!(v["real"], 4, "{v}");
    // The real singular solutions are the double root x = u + v = 1 at y = u − 2v = ±2.
    let text = std::fs::read_to_string(&sols).unwrap();
    let mut real_singular_y = Vec::new();
    for line in text.lines() {
        let s: serde_json::Value = serde_json::from_str(line).unwrap();
        if s["status"] == "singular" && s["real"] == true {
            let c = |i: usize| s["coordinates"][i][0].as_f64().unwrap();
            assert!((c(0) + c(1) - 1.0).abs() < 1e-6, "{s}");
            real_singular_y.push(c(0) - 2.0 * c(1));
        }
    }
    real_singular_y.sort_by(f64::total_cmp);
    assert_eq!(real_singular_y.len(), 2);
    assert!((real_singular_y[0] + 2.0).abs() < 1e-6 && (real_singular_y[1] - 2.0).abs() < 1e-6);
    let out = bin()
        .args([f.to_str().unwrap(), "--backend", "cpu", "-q"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    let row = |k: &str| {
        table
            .lines()
            .find(|l| l.trim_start().starts_with(k))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    assert_eq!(
        row("nonsingular solutions").as_deref(),
        Some("nonsingular solutions 12 (2 real)"),
        "{table}"
    );
    assert_eq!(
        row("singular solutions").as_deref(),
        Some("singular solutions 4 (2 real)"),
        "{table}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A bilinear system (dense in {x1 x2} × {y1 y2}): total degree 16, m-hom Bézout and mixed
/// volume 6. `auto` chooses the m-hom start and finds the 6 solutions.
#[test]
fn a_bilinear_system_gets_the_mhom_start() {
    let dir = std::env::temp_dir().join(format!("pathtrack-cli-mhom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bilinear.yaml");
    let eq = |c: [i32; 9]| {
        format!(
            "  - \"{}*x1*y1 + {}*x1*y2 + {}*x2*y1 + {}*x2*y2 + {}*x1 + {}*x2 + {}*y1 + {}*y2 + {}\"\n",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
        )
    };
    let text = format!(
        "variables: [x1, x2, y1, y2]\nequations:\n{}{}{}{}",
        eq([3, -2, 5, 7, -1, 2, 4, -3, 1]),
        eq([-4, 6, 1, -2, 3, 5, -1, 2, -7]),
        eq([2, 3, -5, 4, 6, -2, 1, 1, 3]),
        eq([5, 1, 2, -6, -3, 4, 2, -5, -2]),
    );
    std::fs::write(&f, text).unwrap();
    let (v, _) = json_of(&[f.to_str().unwrap(), "--json", "-q"]);
    assert_eq!(v["start"], "mhom", "{v}");
    assert_eq!(v["paths"], 6);
    assert_eq!(v["nonsingular"], 6);
    assert_eq!(v["root_counts"]["total_degree"], 16);
    assert_eq!(v["root_counts"]["stable_mixed_volume"], 6);
    std::fs::remove_dir_all(&dir).ok();
}

/// chandra-8: the best partition {H1 … H7}{H8} has the Bézout number 128 = the stable mixed
/// volume, but its linear-product start has 7 · C(9, 2) + 8 · 2 = 268 terms against the
/// system's 72, so `auto` takes the polyhedral start (each m-hom step would evaluate them
/// all: 1.8× the polyhedral run's time), says why, and finds the 128 solutions.
#[test]
fn a_heavy_mhom_start_is_passed_over_for_the_polyhedral_one() {
    let f = format!("{}/systems/chandra8.yaml", env!("CARGO_MANIFEST_DIR"));
    let (v, _) = json_of(&[&f, "--json", "-q"]);
    assert_eq!(v["start"], "polyhedral", "{v}");
    let why = v["start_reason"].as_str().unwrap();
    assert!(
        why.contains("m-hom Bézout 128") && why.contains("268 terms against the system's 72"),
        "{why}"
    );
    assert_eq!(v["nonsingular"], 128, "{v}");
}

/// `rref -o OUT.mtx --json` writes the matrix to OUT.mtx and the JSON object to stdout: the
/// file is the one `-o` writes without `--json`, and its pivots are the JSON's.
#[test]
fn rref_json_with_output_writes_the_matrix() {
    let dir = std::env::temp_dir().join(format!("pathtrack-cli-rref-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (with_json, plain) = (dir.join("json.mtx"), dir.join("plain.mtx"));
    let run = |extra: &[&str], out: &std::path::Path| {
        let o = bin()
            .args(["rref", "tests/data/rref_small.mtx", "--prime", "7", "-o"])
            .arg(out)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let stdout = run(&["--json"], &with_json);
    run(&[], &plain);
    let j: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let text = std::fs::read_to_string(&with_json).expect("--json with -o writes the file");
    let strip = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with('%'))
            .map(String::from)
            .collect()
    };
    assert_eq!(
        strip(&text),
        strip(&std::fs::read_to_string(&plain).unwrap())
    );
    // Column-major `array` entries of the 4 x 5 RREF: a pivot column is a unit vector.
    let body = strip(&text);
    assert_eq!(body[0].trim(), "4 5");
    let a: Vec<i64> = body[1..]
        .iter()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    let entry = |i: usize, k: usize| a[k * 4 + i];
    let pivots: Vec<usize> = j["pivots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(j["rank"].as_u64().unwrap() as usize, pivots.len());
    assert_eq!(pivots.len(), 3, "row 4 = row 1 + row 2: rank 3");
    for (r, &k) in pivots.iter().enumerate() {
        for i in 0..4 {
            assert_eq!(entry(i, k), (i == r) as i64, "pivot column {k}: {text}");
        }
    }
    assert!((0..5).all(|k| entry(3, k) == 0), "zero last row: {text}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The summary table is plain (HomotopyContinuation.jl's words): root counts on their own
/// lines, paths tracked, nonsingular and singular solutions with their real ones, at
/// infinity, failed; the cells, re-tracking and the seconds by phase only with --verbose.
/// Its numbers are those of --json.
#[test]
fn summary_is_plain_and_verbose_adds_the_details() {
    let run = |extra: &[&str]| {
        let out = bin()
            .args(["katsura6", "-q", "--threads", "2"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (plain, stderr) = run(&[]);
    let (v, _) = json_of(&["katsura6", "-q", "--threads", "2", "--json"]);
    let row = |t: &str, k: &str| {
        t.lines()
            .find(|l| l.starts_with(&format!("  {k}  ")))
            .map(|l| l[2 + k.len()..].trim().to_string())
    };
    let real = |k: &str| format!("{} ({} real)", v[k], v[&format!("real_{k}")]);
    assert_eq!(
        row(&plain, "paths tracked"),
        Some(v["paths"].to_string()),
        "{plain}"
    );
    assert_eq!(
        row(&plain, "nonsingular solutions"),
        Some(real("nonsingular")),
        "{plain}"
    );
    assert_eq!(
        row(&plain, "singular solutions"),
        Some(real("singular")),
        "{plain}"
    );
    assert_eq!(
        row(&plain, "at infinity"),
        Some(v["at_infinity"].to_string()),
        "{plain}"
    );
    assert_eq!(
        row(&plain, "failed"),
        Some(v["failed"].to_string()),
        "{plain}"
    );
    assert_eq!(row(&plain, "backend"), Some("cpu".to_string()), "{plain}");
    // Root counts on their own lines, not under the start system.
    assert_eq!(
        row(&plain, "total degree"),
        Some(v["root_counts"]["total_degree"].to_string()),
        "{plain}"
    );
    assert_eq!(
        row(&plain, "stable mixed volume"),
        Some(v["root_counts"]["stable_mixed_volume"].to_string()),
        "{plain}"
    );
    for internal in [
        "cells",
        "phases",
        "setup",
        "re-tracked",
        "recovered",
        "host cores",
    ] {
        assert!(
            !plain.contains(internal),
            "plain summary shows {internal:?}:\n{plain}"
        );
    }
    // No GPU notice where no GPU was asked for (the default backend, a small run).
    assert!(!stderr.to_lowercase().contains("gpu"), "{stderr}");
    let (verbose, _) = run(&["--verbose"]);
    // The plain rows come first, unchanged but for the seconds.
    let timeless = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with("  seconds "))
            .map(String::from)
            .collect()
    };
    let (p, v2) = (timeless(&plain), timeless(&verbose));
    assert_eq!(p[..], v2[..p.len()], "{verbose}");
    assert_eq!(
        row(&verbose, "stable mixed cells"),
        Some(v["root_counts"]["stable_mixed_cells"].to_string()),
        "{verbose}"
    );
    assert!(verbose.contains("seconds by phase"), "{verbose}");
    // A CPU run's details speak of no GPU.
    assert!(!verbose.contains("GPU"), "{verbose}");
}

/// `mixed_cells` means the cells of the torus lifting in `count` and in `solve`, and
/// `stable_mixed_cells` those of the stable lifting: the counts a solve reports are those
/// `count` reports for the same key, and each cell count is at most its mixed volume.
#[test]
fn count_and_solve_root_counts_mean_the_same() {
    for (system, extra) in [
        ("katsura6", &[][..]),
        ("katsura6", &["--start", "polyhedral"][..]),
        ("cyclic5", &["--torus"][..]),
    ] {
        let (count, _) = json_of(&["count", system, "--json", "--threads", "2"]);
        let mut args = vec![system, "-q", "--json", "--backend", "cpu", "--threads", "2"];
        args.extend_from_slice(extra);
        let (solve, _) = json_of(&args);
        let rc = solve["root_counts"].as_object().unwrap();
        assert!(!rc.is_empty());
        for (k, val) in rc {
            if count.get(k).is_some() && k != "mixed_cells" && k != "stable_mixed_cells" {
                assert_eq!(
                    &count[k], val,
                    "{system} {extra:?}: {k}: count {count} solve {solve}"
                );
            }
        }
        for (cells, volume) in [
            ("mixed_cells", "mixed_volume"),
            ("stable_mixed_cells", "stable_mixed_volume"),
        ] {
            assert!(
                count[cells].as_u64().unwrap() <= count[volume].as_u64().unwrap(),
                "{count}"
            );
            if let Some(c) = rc.get(cells) {
                assert!(
                    c.as_u64().unwrap() <= rc[volume].as_u64().unwrap(),
                    "{solve}"
                );
            }
        }
        // katsura6: 54 in the torus, 64 in C^n (its solutions have no zero coordinate
        // except through the origin's support): the solve's stable cells are not the
        // torus cells.
        if extra.is_empty() || extra[0] == "--start" {
            assert!(rc.get("mixed_cells").is_none(), "{solve}");
            assert!(rc.contains_key("stable_mixed_cells"), "{solve}");
        } else {
            assert!(rc.contains_key("mixed_cells"), "{solve}");
        }
    }
}

/// A large run says on stderr, before any path ends and without a terminal, how many paths
/// it tracks (its root count) and about how long they take. cyclic-9 (11,016 paths, about
/// a minute on one thread) is stopped once the line has come.
#[test]
fn a_large_run_announces_its_paths_and_an_estimate() {
    use std::io::BufRead;
    let mut child = bin()
        .args(["systems/cyclic9.yaml", "--backend", "cpu", "--threads", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let found = loop {
        match rx.recv_timeout(std::time::Duration::from_secs(120)) {
            Ok(l) if l.contains("paths to track") => break Some(l),
            Ok(l) => seen.push(l),
            Err(_) => break None,
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    let line = found.unwrap_or_else(|| panic!("no announcement: {seen:?}"));
    assert!(
        line.contains("11,016 paths")
            && line.contains("estimated")
            && line.contains("1 CPU thread"),
        "{line}"
    );
    // Before any progress line of the first pass.
    assert!(seen.iter().all(|l| !l.contains("first pass")), "{seen:?}");
}

/// A system of total degree 10^6 or more says so at once on stderr, before its (stable)
/// mixed volume is counted: cyclic-14 (total degree 14! = 87,178,291,200; its mixed cells
/// take minutes on two cores) is stopped once the line has come.
#[test]
fn a_very_large_system_names_its_total_degree_before_counting() {
    use std::io::BufRead;
    let mut child = bin()
        .args(["cyclic14", "--backend", "cpu", "--threads", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let first = std::io::BufReader::new(child.stderr.take().unwrap())
        .lines()
        .next();
    let _ = child.kill();
    let _ = child.wait();
    let first = first.expect("a line on stderr").unwrap();
    assert_eq!(
        first,
        "pathtrack: cyclic14: total degree 87,178,291,200; counting the stable mixed volume \
         (the polyhedral root count)"
    );
}

/// `--backend auto` (the default) on a machine without an NVIDIA driver says nothing of a
/// GPU, even for a run large enough to try one (katsura-10 on one thread: its estimate from
/// the system's own terms, a lower bound of the homotopy's, is above the GPU's start-up);
/// the summary says `cpu`. Skipped where a driver is installed.
#[test]
fn auto_without_a_driver_is_silent_about_the_gpu() {
    if pathtrack::gpu::device::driver_present() {
        eprintln!("auto_without_a_driver_is_silent_about_the_gpu: skipped (a driver is present)");
        return;
    }
    let sys = pathtrack::system::families::by_name("katsura10")
        .unwrap()
        .unwrap();
    let terms: usize = sys.equations.iter().map(|f| f.terms.len()).sum();
    assert!(!pathtrack::backend::cpu_is_enough(
        1024,
        sys.n(),
        terms,
        1,
        pathtrack::backend::GPU_STARTUP_SECONDS
    ));
    for quiet in [true, false] {
        let mut args = vec!["katsura10", "--json", "--threads", "1"];
        if quiet {
            args.push("-q");
        }
        let (v, stderr) = json_of(&args);
        assert_eq!(v["paths"], 1024);
        assert_eq!(v["backend"], "cpu", "{v}");
        let lower = stderr.to_lowercase();
        assert!(
            !lower.contains("gpu") && !lower.contains("cuda"),
            "{stderr}"
        );
        if quiet {
            assert!(stderr.is_empty(), "-q: {stderr}");
        }
    }
}
