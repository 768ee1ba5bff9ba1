//! A run in pieces equals the whole run: shards merged (`solve --shard K/N`, `merge`), a run
//! resumed after it was killed or interrupted (`solve --resume`), and MPI ranks
//! (`mpirun -np 3`, where `mpirun` and a build with `--features mpi` exist), and the workers
//! of `solve --devices` (CPU workers here; GPUs where a GPU is present).
//!
//! "Equal" is what the summary reports: the counts, and the distinct solutions with their
//! multiplicities (coordinates within the clustering tolerance; a path tracked in another
//! batch may differ in the last bits).

use num_complex::Complex64 as C64;
use pathtrack::backend::cpu::CpuBackend;
use pathtrack::post::Endpoint;
use pathtrack::report::{Solution, Summary};
use pathtrack::solver::plan::{Plan, Shard};
use pathtrack::solver::{solve, SolveOptions, StartKind};
use std::process::Command;
use std::sync::Arc;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pathtrack"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("pathtrack-scale-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn shipped(name: &str) -> pathtrack::system::System {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("systems")
        .join(format!("{name}.yaml"));
    pathtrack::system::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// noon-4 with huge steps and a loose predictor target (seed 3): paths jump in the first
/// pass, and recovery re-tracks them (tests/endgame.rs).
fn jumping_noon4() -> (pathtrack::system::System, SolveOptions) {
    let mut opts = SolveOptions {
        start: StartKind::TotalDegree,
        seed: 3,
        threads: 2,
        ..Default::default()
    };
    opts.tracker.h_max = 100.0;
    opts.tracker.h_max_rel = 10.0;
    opts.tracker.h_initial = 4.0;
    opts.tracker.eta_target = 1e-1;
    opts.tracker.eta_max = 1.0;
    opts.tracker.corrector_tol = 1e-4;
    (shipped("noon4"), opts)
}

/// Runs `opts` on the CPU; returns the summary and every endpoint reported, in order.
fn run(sys: &pathtrack::system::System, opts: &SolveOptions) -> (Summary, Vec<Endpoint>) {
    let mut backend = CpuBackend::new(2).unwrap();
    let mut seen = Vec::new();
    let s = solve(sys, opts, &mut backend, &mut |e: &Endpoint| {
        seen.push(e.clone());
        Ok(())
    })
    .unwrap();
    (s, seen)
}

/// The counts of a summary that a run in pieces must reproduce.
fn counts(s: &Summary) -> [u64; 8] {
    [
        s.paths,
        s.finite,
        s.nonsingular,
        s.singular,
        s.at_infinity,
        s.real,
        s.failed,
        s.duplicate_paths,
    ]
}

/// Same distinct solutions: each of `a` has one of `b` of its status and multiplicity
/// within `1e-8·(1 + ‖x‖∞)`, and as many.
fn same_solutions(a: &[Solution], b: &[Solution]) {
    assert_eq!(a.len(), b.len(), "distinct solutions");
    let close = |x: &[C64], y: &[C64]| {
        let n = x.iter().map(|z| z.norm()).fold(0.0, f64::max);
        x.iter()
            .zip(y)
            .all(|(p, q)| (p - q).norm() <= 1e-8 * (1.0 + n))
    };
    for s in a {
        assert!(
            b.iter().any(|t| t.status == s.status
                && t.multiplicity() == s.multiplicity()
                && close(&s.coordinates, &t.coordinates)),
            "solution {:?} (multiplicity {}) is missing",
            s.coordinates,
            s.multiplicity()
        );
    }
}

/// Shards 0/3, 1/3, 2/3 track each path once (their first pass only); the merge of their
/// endpoints runs recovery over all of them: the counts and distinct solutions of the
/// whole run, although the paths that jumped onto one solution lie in different shards.
#[test]
fn shards_merged_equal_the_whole_run_with_its_recovery() {
    let (sys, opts) = jumping_noon4();
    let (whole, _) = run(&sys, &opts);
    assert!(whole.retracked > 0, "the whole run re-tracks: {whole:?}");
    assert_eq!(whole.nonsingular, 73);
    let mut done = Vec::new();
    for k in 0..3 {
        let shard = Shard { index: k, count: 3 };
        let o = SolveOptions {
            plan: Plan {
                shard: Some(shard),
                first_pass_only: true,
                ..Default::default()
            },
            ..opts.clone()
        };
        let (s, ends) = run(&sys, &o);
        assert_eq!(s.retracked, 0, "a shard runs no recovery");
        assert!(ends.iter().all(|e| shard.holds(e.path) && e.attempt == 0));
        assert_eq!(s.paths as usize, ends.len());
        done.extend(ends);
    }
    done.sort_by_key(|e| e.path);
    let paths: Vec<u64> = done.iter().map(|e| e.path).collect();
    assert_eq!(
        paths,
        (0..whole.paths).collect::<Vec<_>>(),
        "each path once"
    );
    let merged = SolveOptions {
        plan: Plan {
            done: Some(Arc::new(done)),
            ..Default::default()
        },
        ..opts.clone()
    };
    let (m, ends) = run(&sys, &merged);
    assert!(
        ends.iter().all(|e| e.attempt > 0),
        "the merge tracks recovery rounds only"
    );
    assert!(m.retracked > 0, "recovery ran at the merge");
    assert_eq!(counts(&m), counts(&whole));
    same_solutions(&whole.solutions, &m.solutions);
}

/// A run killed after its k-th line (k = 0, 1, 40, all of the first pass) and resumed from
/// the lines it wrote: the resumed run tracks exactly the paths without a line, then the
/// recovery rounds of the whole run; the summary is the whole run's, and the first-pass
/// lines with the resumed run's are every path once.
#[test]
fn resumed_runs_equal_the_whole_run() {
    let (sys, opts) = jumping_noon4();
    let (whole, lines) = run(&sys, &opts);
    let first: Vec<&Endpoint> = lines.iter().filter(|e| e.attempt == 0).collect();
    let retracks = |ends: &[Endpoint]| {
        let mut v: Vec<(u64, u8)> = ends
            .iter()
            .filter(|e| e.attempt > 0)
            .map(|e| (e.path, e.attempt))
            .collect();
        v.sort_unstable();
        v
    };
    assert!(
        !retracks(&lines).is_empty(),
        "the whole run has recovery lines"
    );
    for k in [0, 1, 40, first.len()] {
        let mut done: Vec<Endpoint> = first[..k].iter().map(|e| (*e).clone()).collect();
        done.sort_by_key(|e| e.path);
        let o = SolveOptions {
            plan: Plan {
                done: Some(Arc::new(done)),
                ..Default::default()
            },
            ..opts.clone()
        };
        let (s, ends) = run(&sys, &o);
        let mut again: Vec<u64> = first[..k]
            .iter()
            .map(|e| e.path)
            .chain(ends.iter().filter(|e| e.attempt == 0).map(|e| e.path))
            .collect();
        again.sort_unstable();
        assert_eq!(
            again,
            (0..whole.paths).collect::<Vec<_>>(),
            "killed after {k} lines: every path once"
        );
        assert_eq!(counts(&s), counts(&whole), "killed after {k} lines");
        assert_eq!(
            (s.retracked, s.recovered),
            (whole.retracked, whole.recovered),
            "killed after {k} lines"
        );
        assert_eq!(retracks(&ends), retracks(&lines), "killed after {k} lines");
        same_solutions(&whole.solutions, &s.solutions);
    }
}

/// Runs the binary; returns its exit code, stdout and stderr.
fn exec(args: &[&str]) -> (i32, String, String) {
    let out = bin().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_of(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = exec(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

const KEYS: [&str; 8] = [
    "paths",
    "finite",
    "nonsingular",
    "singular",
    "at_infinity",
    "real",
    "failed",
    "duplicate_paths",
];

fn same_counts(a: &serde_json::Value, b: &serde_json::Value, what: &str) {
    for k in KEYS {
        assert_eq!(a[k], b[k], "{what}: {k}");
    }
}

/// `--solutions` files as (multiplicity, coordinates) rounded to 1e-6, sorted.
fn solution_set(p: &std::path::Path) -> Vec<(u64, Vec<i64>)> {
    let mut v: Vec<(u64, Vec<i64>)> = std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let x = v["coordinates"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|z| z.as_array().unwrap().iter())
                .map(|c| (c.as_f64().unwrap() * 1e6).round() as i64)
                .collect();
            (v["multiplicity"].as_u64().unwrap(), x)
        })
        .collect();
    v.sort();
    v
}

/// Path indices of the first-pass lines of a `-o` file (header checked, recovery lines
/// skipped), sorted.
fn first_pass_paths(p: &std::path::Path) -> Vec<u64> {
    let text = std::fs::read_to_string(p).unwrap();
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["pathtrack_run"], 1, "{header}");
    let mut v: Vec<u64> = lines
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v.get("attempt").is_none())
        .map(|v| v["path"].as_u64().unwrap())
        .collect();
    v.sort_unstable();
    v
}

/// Through the binary, on a polyhedral start (cyclic-6) and a total-degree one
/// (katsura-6): three shards merged give the whole run's counts and distinct solutions,
/// and each shard's file holds its paths.
#[test]
fn cli_shards_merge_into_the_whole_run() {
    let dir = tmp("shards");
    let d = |f: &str| dir.join(f).display().to_string();
    let (whole_sols, merged_out, merged_sols) = (
        d("whole-sols.jsonl"),
        d("merged.jsonl"),
        d("merged-sols.jsonl"),
    );
    for (sys, n) in [
        ("systems/cyclic6.yaml", 156u64),
        ("systems/katsura6.yaml", 64),
    ] {
        let common = [sys, "--backend", "cpu", "--threads", "2", "-q", "--json"];
        let mut a = vec!["solve"];
        a.extend(common);
        a.extend(["--solutions", &whole_sols]);
        let whole = json_of(&a);
        assert_eq!(whole["paths"], n);
        let mut parts = Vec::new();
        for k in 0..3 {
            let part = d(&format!("part{k}.jsonl"));
            let shard = format!("{k}/3");
            let mut a = vec!["solve"];
            a.extend(common);
            a.extend(["--shard", &shard, "-o", &part]);
            let s = json_of(&a);
            let mine = first_pass_paths(std::path::Path::new(&part));
            assert!(mine.iter().all(|p| p % 3 == k), "{sys} shard {k}");
            assert_eq!(mine.len() as u64, n / 3 + u64::from(k < n % 3));
            assert_eq!(s["paths"], mine.len() as u64);
            parts.push(part);
        }
        let mut a = vec!["merge", "-q", "--json", "--backend", "cpu"];
        a.extend(parts.iter().map(String::as_str));
        a.extend(["-o", &merged_out, "--solutions", &merged_sols]);
        let merged = json_of(&a);
        same_counts(&whole, &merged, sys);
        assert_eq!(
            solution_set(&dir.join("whole-sols.jsonl")),
            solution_set(&dir.join("merged-sols.jsonl")),
            "{sys}"
        );
        assert_eq!(
            first_pass_paths(&dir.join("merged.jsonl")),
            (0..n).collect::<Vec<_>>()
        );
        // Errors name the cause, exit 2: a missing shard, shards of another seed.
        let (code, _, err) = exec(&["merge", &parts[0], &parts[2]]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("1/3") && err.contains("missing"), "{err}");
        let other = d("other.jsonl");
        let mut a = vec!["solve"];
        a.extend(common);
        a.extend(["--shard", "1/3", "--seed", "2", "-o", &other]);
        json_of(&a);
        let (code, _, err) = exec(&["merge", &parts[0], &other, &parts[2]]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("seed"), "{err}");
    }
    let (code, _, err) = exec(&[
        "solve",
        "cyclic5",
        "--shard",
        "3/3",
        "-o",
        &dir.join("x").display().to_string(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--shard 3/3"), "{err}");
    let (code, _, err) = exec(&["solve", "cyclic5", "--shard", "0/3"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs -o"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A whole run's `-o` file cut as a kill would leave it (after k whole lines, and in the
/// middle of the next), then `--resume`d: the summary and distinct solutions of the whole
/// run, and every path's first-pass line exactly once. A file of another seed is refused.
#[test]
fn cli_resume_from_a_cut_file() {
    let dir = tmp("cut");
    let d = |f: &str| dir.join(f).display().to_string();
    let args = |out: &str, sols: &str| {
        vec![
            "solve".to_string(),
            "systems/cyclic6.yaml".into(),
            "--backend".into(),
            "cpu".into(),
            "--threads".into(),
            "2".into(),
            "-q".into(),
            "--json".into(),
            "-o".into(),
            out.into(),
            "--solutions".into(),
            sols.into(),
        ]
    };
    let run_with = |a: Vec<String>| json_of(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let whole = run_with(args(&d("whole.jsonl"), &d("whole-sols.jsonl")));
    let text = std::fs::read_to_string(dir.join("whole.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for k in [0usize, 1, 17, 100, lines.len() - 1] {
        let out = d(&format!("cut{k}.jsonl"));
        let mut cut = lines[..=k].join("\n") + "\n";
        if let Some(next) = lines.get(k + 1) {
            cut.push_str(&next[..next.len() / 2]);
        }
        std::fs::write(&out, cut).unwrap();
        let mut a = args(&out, &d("sols.jsonl"));
        a.push("--resume".into());
        let resumed = run_with(a);
        same_counts(&whole, &resumed, &format!("cut after {k} lines"));
        assert_eq!(
            solution_set(&dir.join("whole-sols.jsonl")),
            solution_set(&dir.join("sols.jsonl")),
            "cut after {k} lines"
        );
        assert_eq!(
            first_pass_paths(std::path::Path::new(&out)),
            (0..156).collect::<Vec<_>>(),
            "cut after {k} lines"
        );
    }
    // Another seed's file is refused, and left as it was.
    let before = std::fs::read_to_string(dir.join("cut17.jsonl")).unwrap();
    let mut a = args(&d("cut17.jsonl"), &d("sols.jsonl"));
    a.extend(["--resume".into(), "--seed".into(), "2".into()]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let (code, _, err) = exec(&a);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("seed") && err.contains("another run"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("cut17.jsonl")).unwrap(),
        before
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Lines (header included) in `p`, 0 when absent.
fn line_count(p: &std::path::Path) -> usize {
    std::fs::read(p)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0)
}

/// Starts `args`, waits until `out` has `k` lines, then sends `signal` (`kill -SIGNAL`);
/// returns the exit code (`None`: ended by the signal) and stdout. `false` in the pair
/// when the run ended before it had `k` lines (nothing was interrupted).
fn interrupt_after(
    args: &[String],
    out: &std::path::Path,
    k: usize,
    signal: &str,
) -> (bool, Option<i32>, String) {
    let child = bin()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let mut sent = false;
    while start.elapsed() < std::time::Duration::from_secs(60) {
        if line_count(out) >= k {
            sent = Command::new("kill")
                .args([&format!("-{signal}"), &child.id().to_string()])
                .status()
                .unwrap()
                .success();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let o = child.wait_with_output().unwrap();
    (
        sent,
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into(),
    )
}

/// cyclic-7 on one thread (924 paths, about 2 s), killed with SIGKILL after 2, 300 and 700
/// lines, and interrupted with SIGINT and SIGTERM; each resumed: the whole run's counts and
/// distinct solutions, every path's first-pass line once. SIGINT and SIGTERM print the
/// partial summary and exit with 130 and 143.
#[test]
fn cli_killed_and_interrupted_runs_resume() {
    let dir = tmp("kill");
    let d = |f: &str| dir.join(f).display().to_string();
    let args = |out: &str, sols: &str| -> Vec<String> {
        [
            "solve",
            "systems/cyclic7.yaml",
            "--backend",
            "cpu",
            "--threads",
            "1",
            "-q",
            "--json",
            "-o",
            out,
            "--solutions",
            sols,
        ]
        .map(String::from)
        .to_vec()
    };
    let whole = args(&d("whole.jsonl"), &d("whole-sols.jsonl"));
    let whole = json_of(&whole.iter().map(String::as_str).collect::<Vec<_>>());
    let whole_sols = solution_set(&dir.join("whole-sols.jsonl"));
    let mut interrupted = 0;
    for (k, signal) in [
        (2, "KILL"),
        (300, "KILL"),
        (700, "KILL"),
        (150, "INT"),
        (500, "TERM"),
    ] {
        let out = d(&format!("run-{signal}-{k}.jsonl"));
        let a = args(&out, &d("sols.jsonl"));
        let (sent, code, stdout) = interrupt_after(&a, std::path::Path::new(&out), k, signal);
        if sent && code != Some(0) {
            interrupted += 1;
            match signal {
                "KILL" => assert_eq!(code, None, "killed"),
                _ => {
                    assert_eq!(code, Some(if signal == "INT" { 130 } else { 143 }));
                    let partial: serde_json::Value =
                        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
                    assert_eq!(partial["interrupted"], format!("SIG{signal}"));
                    assert_eq!(partial["paths"], 924);
                    let finished = partial["finished_paths"].as_u64().unwrap();
                    let lines = first_pass_paths(std::path::Path::new(&out)).len() as u64;
                    assert_eq!(finished, lines, "the partial summary counts the lines");
                }
            }
        }
        let mut a = a;
        a.push("--resume".into());
        let resumed = json_of(&a.iter().map(String::as_str).collect::<Vec<_>>());
        same_counts(&whole, &resumed, &format!("{signal} after {k} lines"));
        assert_eq!(whole_sols, solution_set(&dir.join("sols.jsonl")));
        assert_eq!(
            first_pass_paths(std::path::Path::new(&out)),
            (0..924).collect::<Vec<_>>(),
            "{signal} after {k} lines"
        );
    }
    assert!(
        interrupted >= 3,
        "only {interrupted} runs were interrupted before they ended"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Why the MPI test cannot run here, if it cannot: a build without `--features mpi`, or
/// no OpenMPI `mpirun` on PATH.
fn mpi_missing() -> Option<String> {
    if !cfg!(feature = "mpi") {
        return Some("built without --features mpi".into());
    }
    match Command::new("mpirun").arg("--version").output() {
        Ok(o) if String::from_utf8_lossy(&o.stdout).contains("Open MPI") => None,
        Ok(_) => Some("mpirun is not OpenMPI's (the test passes OpenMPI's flags)".into()),
        Err(_) => Some("no mpirun on PATH".into()),
    }
}

/// `mpirun -np 3` (a master and two workers, one thread each) gives the counts and the
/// distinct solutions of one process with the same seed, on katsura-10 (total degree,
/// 1,024 paths) and cyclic-7 (polyhedral, 924 paths); its `-o` file has every path's line
/// once. Skipped, saying why, without `--features mpi` or OpenMPI's `mpirun`.
#[test]
fn mpirun_ranks_equal_one_process() {
    if let Some(why) = mpi_missing() {
        eprintln!("mpirun_ranks_equal_one_process: skipped: {why}");
        return;
    }
    let dir = tmp("mpi");
    let d = |f: &str| dir.join(f).display().to_string();
    for (sys, paths) in [("katsura10", 1024u64), ("systems/cyclic7.yaml", 924)] {
        let (one_sols, mpi_sols, mpi_out) =
            (d("one-sols.jsonl"), d("mpi-sols.jsonl"), d("mpi.jsonl"));
        let common = [
            sys,
            "--backend",
            "cpu",
            "--threads",
            "1",
            "-q",
            "--json",
            "--seed",
            "2",
        ];
        let mut a = vec!["solve"];
        a.extend(common);
        a.extend(["--solutions", &one_sols]);
        let one = json_of(&a);
        let out = Command::new("mpirun")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            // CI runs as root; two cores for three ranks.
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .args([
                "-np",
                "3",
                "--oversubscribe",
                env!("CARGO_BIN_EXE_pathtrack"),
                "solve",
            ])
            .args(common)
            .args(["-o", &mpi_out, "--solutions", &mpi_sols])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{sys}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 1, "one summary, from the master: {stdout}");
        let mpi: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(mpi["paths"], paths);
        same_counts(&one, &mpi, sys);
        assert_eq!(
            solution_set(std::path::Path::new(&one_sols)),
            solution_set(std::path::Path::new(&mpi_sols)),
            "{sys}"
        );
        assert_eq!(
            first_pass_paths(std::path::Path::new(&mpi_out)),
            (0..paths).collect::<Vec<_>>(),
            "{sys}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The first-pass paths each worker of a `--devices` run tracked (`phases.devices`).
fn device_paths(summary: &serde_json::Value) -> Vec<u64> {
    summary["phases"]["devices"]
        .as_array()
        .unwrap_or_else(|| panic!("no phases.devices: {summary}"))
        .iter()
        .map(|d| d["paths"].as_u64().unwrap())
        .collect()
}

/// `--devices 3` with the CPU backend (three workers drawing batches from one queue) gives
/// the counts and the distinct solutions of one worker with the same seed, on katsura-6
/// (total degree, 64 paths) and cyclic-7 (polyhedral, 924 paths); its `-o` file has every
/// path's first-pass line once, and more than one worker tracked paths.
#[test]
fn cli_devices_equal_one_device() {
    let dir = tmp("devices");
    let d = |f: &str| dir.join(f).display().to_string();
    for (sys, paths, batch) in [
        ("katsura6", 64u64, "8"),
        ("systems/cyclic7.yaml", 924, "32"),
    ] {
        let (one_sols, dev_sols, dev_out) =
            (d("one-sols.jsonl"), d("dev-sols.jsonl"), d("dev.jsonl"));
        let common = [
            sys,
            "--backend",
            "cpu",
            "--threads",
            "2",
            "--batch",
            batch,
            "-q",
            "--json",
            "--seed",
            "2",
        ];
        let mut a = vec!["solve"];
        a.extend(common);
        a.extend(["--solutions", &one_sols]);
        let one = json_of(&a);
        assert!(one["phases"].get("devices").is_none(), "{one}");
        let mut a = vec!["solve"];
        a.extend(common);
        a.extend(["--devices", "3", "-o", &dev_out, "--solutions", &dev_sols]);
        let dev = json_of(&a);
        assert_eq!(dev["paths"], paths);
        same_counts(&one, &dev, sys);
        assert_eq!(
            solution_set(std::path::Path::new(&one_sols)),
            solution_set(std::path::Path::new(&dev_sols)),
            "{sys}"
        );
        assert_eq!(
            first_pass_paths(std::path::Path::new(&dev_out)),
            (0..paths).collect::<Vec<_>>(),
            "{sys}: every path once"
        );
        let shares = device_paths(&dev);
        assert_eq!(shares.len(), 3, "{sys}");
        assert_eq!(shares.iter().sum::<u64>(), paths, "{sys}");
        assert!(
            shares.iter().filter(|&&p| p > 0).count() > 1,
            "{sys}: {shares:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run cut after 50 lines resumes over three workers, which are handed only the paths
/// without a line: the whole run's counts, every path's line once. A shard over two
/// workers tracks its own paths only.
#[test]
fn cli_devices_resume_and_shard() {
    let dir = tmp("devices-resume");
    let d = |f: &str| dir.join(f).display().to_string();
    let (whole_out, cut, part) = (d("whole.jsonl"), d("cut.jsonl"), d("part1.jsonl"));
    let common = [
        "systems/cyclic6.yaml",
        "--backend",
        "cpu",
        "--threads",
        "2",
        "--batch",
        "8",
        "-q",
        "--json",
    ];
    let mut a = vec!["solve"];
    a.extend(common);
    a.extend(["-o", &whole_out]);
    let whole = json_of(&a);
    let text = std::fs::read_to_string(&whole_out).unwrap();
    let kept: Vec<&str> = text.lines().take(51).collect();
    std::fs::write(&cut, kept.join("\n") + "\n").unwrap();
    let mut a = vec!["solve"];
    a.extend(common);
    a.extend(["--devices", "3", "-o", &cut, "--resume"]);
    let resumed = json_of(&a);
    same_counts(&whole, &resumed, "resumed over 3 workers");
    assert_eq!(
        first_pass_paths(std::path::Path::new(&cut)),
        (0..156).collect::<Vec<_>>()
    );
    assert_eq!(device_paths(&resumed).iter().sum::<u64>(), 156 - 50);
    let mut a = vec!["solve"];
    a.extend(common);
    a.extend(["--devices", "2", "--shard", "1/3", "-o", &part]);
    let shard = json_of(&a);
    let mine: Vec<u64> = (0..156).filter(|p| p % 3 == 1).collect();
    assert_eq!(first_pass_paths(std::path::Path::new(&part)), mine);
    assert_eq!(shard["paths"], mine.len() as u64);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bad `--devices` values are usage errors (exit 2, a message naming `--devices`, nothing
/// on stdout). Without a GPU, `--backend cuda --devices 2` fails as `--backend cuda` does;
/// on a machine with GPUs, `--devices all` gives the counts and distinct solutions of one
/// GPU.
#[test]
fn cli_devices_bad_values_and_cuda() {
    for args in [
        &["--devices", "0"][..],
        &["--devices", "two"],
        &["--devices", "0,0"],
        &["--devices", "1,"],
        &["--backend", "cpu", "--devices", "all"],
        &["--backend", "cpu", "--devices", "0,1"],
        &["--device", "1", "--devices", "2"],
    ] {
        let mut a = vec!["solve", "katsura4", "-q"];
        a.extend(args);
        let (code, out, err) = exec(&a);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(
            err.contains("--devices") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
    let dir = tmp("devices-cuda");
    let d = |f: &str| dir.join(f).display().to_string();
    let (one_sols, all_sols) = (d("one.jsonl"), d("all.jsonl"));
    let common = ["solve", "katsura6", "--backend", "cuda", "-q", "--json"];
    let mut a = common.to_vec();
    a.extend(["--solutions", &one_sols]);
    let (code, one, one_err) = exec(&a);
    let mut a = common.to_vec();
    a.extend(["--devices", "all", "--solutions", &all_sols]);
    let (dev_code, dev, dev_err) = exec(&a);
    if code != 0 {
        eprintln!(
            "cli_devices_bad_values_and_cuda: no GPU here: {}",
            one_err.trim()
        );
        assert_eq!(code, 2, "{one_err}");
        assert_eq!((dev_code, dev_err.as_str()), (2, one_err.as_str()));
        assert!(dev.is_empty(), "{dev}");
    } else {
        assert_eq!(dev_code, 0, "{dev_err}");
        let (one, dev): (serde_json::Value, serde_json::Value) = (
            serde_json::from_str(&one).unwrap(),
            serde_json::from_str(&dev).unwrap(),
        );
        same_counts(&one, &dev, "--devices all");
        assert_eq!(
            solution_set(std::path::Path::new(&one_sols)),
            solution_set(std::path::Path::new(&all_sols))
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// cyclic-7 over two CPU workers, interrupted with SIGINT after 300 lines and killed with
/// SIGKILL after 500, each resumed over three: the counts and distinct solutions of one
/// worker's whole run, every path's first-pass line once; SIGINT prints the partial
/// summary of the lines written and exits with 130.
#[test]
fn cli_devices_interrupted_runs_resume() {
    let dir = tmp("devices-kill");
    let d = |f: &str| dir.join(f).display().to_string();
    let args = |out: &str, sols: &str, devices: &str| -> Vec<String> {
        let mut a = [
            "solve",
            "systems/cyclic7.yaml",
            "--backend",
            "cpu",
            "--threads",
            "2",
            "--batch",
            "32",
            "-q",
            "--json",
            "-o",
            out,
            "--solutions",
            sols,
        ]
        .map(String::from)
        .to_vec();
        if !devices.is_empty() {
            a.extend(["--devices".into(), devices.into()]);
        }
        a
    };
    let whole = args(&d("whole.jsonl"), &d("whole-sols.jsonl"), "");
    let whole = json_of(&whole.iter().map(String::as_str).collect::<Vec<_>>());
    let whole_sols = solution_set(&dir.join("whole-sols.jsonl"));
    let mut interrupted = 0;
    for (k, signal) in [(300, "INT"), (500, "KILL")] {
        let out = d(&format!("run-{signal}.jsonl"));
        let a = args(&out, &d("sols.jsonl"), "2");
        let (sent, code, stdout) = interrupt_after(&a, std::path::Path::new(&out), k, signal);
        interrupted += usize::from(sent && code != Some(0));
        if sent && signal == "INT" && code != Some(0) {
            assert_eq!(code, Some(130));
            let partial: serde_json::Value =
                serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
            let lines = first_pass_paths(std::path::Path::new(&out)).len() as u64;
            assert_eq!(partial["finished_paths"].as_u64(), Some(lines));
        }
        let a = args(&out, &d("sols.jsonl"), "3");
        let mut a: Vec<&str> = a.iter().map(String::as_str).collect();
        a.push("--resume");
        let resumed = json_of(&a);
        same_counts(&whole, &resumed, &format!("{signal} after {k} lines"));
        assert_eq!(whole_sols, solution_set(&dir.join("sols.jsonl")));
        assert_eq!(
            first_pass_paths(std::path::Path::new(&out)),
            (0..924).collect::<Vec<_>>(),
            "{signal} after {k} lines"
        );
    }
    assert!(interrupted > 0, "no run was interrupted before it ended");
    let _ = std::fs::remove_dir_all(&dir);
}
