//! docs/guide.md runs as written, and its worked examples (examples/*.yaml) have the
//! solutions their data were built from.

use pathtrack::{solve, SolveOptions, StartKind, System, C64};
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `$ pathtrack …` lines of the guide's `console` blocks, in order.
fn guide_commands() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("docs/guide.md")).unwrap();
    let mut in_console = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_console = t == "```console";
            continue;
        }
        if in_console {
            let cmd = t.strip_prefix("$ ").expect("console lines start with '$ '");
            out.push(cmd.to_string());
        }
    }
    out
}

/// Splits a command line into words: whitespace separates, double quotes group.
fn words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in cmd.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// Every command of the guide succeeds, run in order from a fresh folder that holds
/// `examples/` and `systems/` (commands use the files earlier ones wrote).
#[test]
fn guide_commands_run_as_written() {
    let cmds = guide_commands();
    assert!(cmds.len() >= 8, "the guide's commands: {cmds:?}");
    let dir = std::env::temp_dir().join(format!("pathtrack-guide-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for sub in ["examples", "systems"] {
        std::os::unix::fs::symlink(root().join(sub), dir.join(sub)).unwrap();
    }
    for cmd in &cmds {
        let w = words(cmd);
        assert_eq!(
            w[0], "pathtrack",
            "a guide command that is not pathtrack: {cmd}"
        );
        let out = Command::new(env!("CARGO_BIN_EXE_pathtrack"))
            .args(&w[1..])
            .args(["--threads", "2"].iter().filter(|_| takes_threads(&w)))
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`{cmd}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !out.stdout.is_empty() || cmd.contains(" -o "),
            "`{cmd}` printed nothing"
        );
        if w.iter().any(|a| a == "--print") {
            // The reaction network's table after the summary: its 3 steady states.
            let text = String::from_utf8(out.stdout.clone()).unwrap();
            let table: Vec<&str> = text.split("\n\n").nth(1).unwrap_or("").lines().collect();
            assert!(
                table.first().is_some_and(|h| h
                    .split_whitespace()
                    .take(5)
                    .eq(["mult", "status", "x", "y", "z"])),
                "{text}"
            );
            let mut states: Vec<Vec<f64>> = table[1..]
                .iter()
                .map(|r| {
                    r.split_whitespace()
                        .skip(2)
                        .take(3)
                        .map(|v| v.parse().unwrap())
                        .collect()
                })
                .collect();
            states.sort_by(|a, b| a[0].total_cmp(&b[0]));
            let want = [[1.0, 2.0, 2.0], [4.0, 0.5, 0.5], [5.0, 0.0, 0.0]];
            assert_eq!(states.len(), 3, "{text}");
            for (got, want) in states.iter().zip(want) {
                assert!(
                    got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-5),
                    "{text}"
                );
            }
        }
        if w[1] == "show" {
            // A header and one row per distinct solution, the variables as columns.
            let table = String::from_utf8(out.stdout).unwrap();
            let rows: Vec<&str> = table.lines().collect();
            assert_eq!(rows.len(), 9, "{table}");
            let head = ["mult", "status", "l1", "l2", "l3", "residual", "condition"];
            assert!(rows[0].split_whitespace().eq(head), "{table}");
            let truth = |r: &&str| r.split_whitespace().skip(2).take(3).eq(["4", "8", "2"]);
            assert!(rows.iter().any(truth), "{table}");
        }
    }
    // What the commands wrote: the converted system solved like the original, and the
    // JSON Lines files hold one line per path (8, after the run's header line) and per
    // solution (8).
    let lines = |f: &str| {
        std::fs::read_to_string(dir.join(f))
            .unwrap()
            .lines()
            .count()
    };
    let paths = std::fs::read_to_string(dir.join("paths.jsonl")).unwrap();
    assert!(
        paths
            .lines()
            .next()
            .is_some_and(|l| l.contains("pathtrack_run")),
        "{paths}"
    );
    assert_eq!(lines("paths.jsonl"), 1 + 8);
    assert_eq!(lines("p3p-solutions.jsonl"), 8);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether the command is a solve or a count (they take `--threads`; CI has 2 cores).
fn takes_threads(w: &[String]) -> bool {
    !matches!(
        w.get(1).map(String::as_str),
        Some("generate" | "convert" | "show")
    )
}

fn example(name: &str) -> System {
    pathtrack::system::parse::load(&root().join("examples").join(name)).unwrap()
}

fn opts(start: StartKind, seed: u64) -> SolveOptions {
    SolveOptions {
        start,
        seed,
        threads: 2,
        ..Default::default()
    }
}

/// The distinct solutions of `system` by two start systems (with different seeds): both
/// find `count` nonsingular solutions and nothing else finite, at the same points.
fn solutions_by_two_starts(system: &System, count: usize) -> Vec<Vec<C64>> {
    let a = solve(system, &opts(StartKind::TotalDegree, 1)).unwrap();
    let b = solve(system, &opts(StartKind::Polyhedral, 2)).unwrap();
    for r in [&a, &b] {
        assert_eq!(r.nonsingular().count(), count, "{}", r.summary.start);
        assert_eq!(r.singular().count(), 0);
        assert_eq!(r.summary.failed, 0);
        for s in r.solutions() {
            assert!(s.residual < 1e-12, "residual {}", s.residual);
        }
    }
    for s in a.solutions() {
        let near = b
            .solutions()
            .iter()
            .any(|t| dist(&s.coordinates, &t.coordinates) < 1e-8);
        assert!(
            near,
            "{:?} not found from the polyhedral start",
            s.coordinates
        );
    }
    a.solutions()
        .iter()
        .map(|s| s.coordinates.to_vec())
        .collect()
}

fn dist(x: &[C64], y: &[C64]) -> f64 {
    x.iter()
        .zip(y)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max)
}

fn contains(sols: &[Vec<C64>], point: &[f64]) -> bool {
    let p: Vec<C64> = point.iter().map(|&v| C64::new(v, 0.0)).collect();
    sols.iter().any(|s| dist(s, &p) < 1e-9)
}

fn is_real(x: &[C64]) -> bool {
    x.iter().all(|z| z.im.abs() < 1e-9)
}

/// Planar 3-RPR: 6 assembly modes, 2 real, one of them the pose the leg lengths came from;
/// every pose has cos² + sin² = 1.
#[test]
fn planar_3rpr_has_six_assembly_modes() {
    let sols = solutions_by_two_starts(&example("planar_3rpr.yaml"), 6);
    assert!(contains(&sols, &[1.0, 2.0, 0.6, 0.8]));
    assert_eq!(sols.iter().filter(|s| is_real(s)).count(), 2);
    for s in &sols {
        assert!((s[2] * s[2] + s[3] * s[3] - 1.0).norm() < 1e-10);
    }
}

/// P3P: 8 solutions closed under l → −l, 4 real, 2 with all depths positive, one of
/// them the true depths (4, 8, 2).
#[test]
fn p3p_has_eight_solutions_in_sign_pairs() {
    let sols = solutions_by_two_starts(&example("p3p.yaml"), 8);
    assert!(contains(&sols, &[4.0, 8.0, 2.0]));
    for s in &sols {
        let neg: Vec<C64> = s.iter().map(|z| -z).collect();
        assert!(sols.iter().any(|t| dist(t, &neg) < 1e-8));
    }
    let real: Vec<&Vec<C64>> = sols.iter().filter(|s| is_real(s)).collect();
    assert_eq!(real.len(), 4);
    assert_eq!(
        real.iter().filter(|s| s.iter().all(|z| z.re > 0.0)).count(),
        2
    );
}

/// The autocatalytic network: exactly the three steady states derived by hand.
#[test]
fn reaction_network_is_bistable() {
    let sols = solutions_by_two_starts(&example("autocatalytic_crn.yaml"), 3);
    for p in [[5.0, 0.0, 0.0], [1.0, 2.0, 2.0], [4.0, 0.5, 0.5]] {
        assert!(contains(&sols, &p), "steady state {p:?} missing");
    }
}

/// Each example's description is the text the guide quotes it by (a file without one
/// would leave the guide's reader with bare equations).
#[test]
fn examples_describe_themselves() {
    for entry in std::fs::read_dir(root().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("description:"), "{}", path.display());
        let name = path.file_name().unwrap().to_str().unwrap();
        let guide = std::fs::read_to_string(root().join("docs/guide.md")).unwrap();
        assert!(
            guide.contains(&format!("examples/{name}")),
            "{name} not in the guide"
        );
    }
}

/// The output the guide shows for a command (a `text` block after "prints") is what the
/// command prints, but for the seconds.
#[test]
fn guide_output_samples_are_what_pathtrack_prints() {
    let text = std::fs::read_to_string(root().join("docs/guide.md")).unwrap();
    let blocks: Vec<&str> = text.split("```").collect();
    let mut checked = 0;
    // Blocks alternate outside/inside: a console block, the word "prints", a text block.
    for k in (1..blocks.len().saturating_sub(2)).step_by(2) {
        let (console, between, sample) = (blocks[k], blocks[k + 1], blocks[k + 2]);
        let (Some(cmd), Some(sample)) = (
            console.strip_prefix("console\n$ "),
            sample.strip_prefix("text\n"),
        ) else {
            continue;
        };
        if between.trim() != "prints" {
            continue;
        }
        let w = words(cmd.trim());
        let out = Command::new(env!("CARGO_BIN_EXE_pathtrack"))
            .args(&w[1..])
            .args(["-q", "--threads", "2"])
            .current_dir(root())
            .output()
            .unwrap();
        assert!(out.status.success(), "{cmd}");
        let timeless = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| !l.starts_with("  seconds "))
                .map(String::from)
                .collect()
        };
        assert_eq!(
            timeless(sample),
            timeless(&String::from_utf8_lossy(&out.stdout)),
            "{cmd}"
        );
        checked += 1;
    }
    assert!(checked >= 1, "no output sample in the guide");
}

/// The docs describe the project as it is: no change log or history section, no "session
/// N", and no table of figures before and after a change (docs/performance.md keeps the
/// current figures; the history is in git).
#[test]
fn docs_have_no_development_history() {
    let mut files = vec![root().join("README.md")];
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    assert!(files.len() >= 10, "{files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (k, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            let heading = lower.trim_start_matches('#').trim();
            let session_n = lower
                .match_indices("session ")
                .any(|(i, m)| lower[i + m.len()..].starts_with(|c: char| c.is_ascii_digit()));
            // a table's header with a "before" and an "after" column
            let cells: Vec<&str> = lower.split('|').map(str::trim).collect();
            let column = |w: &str| {
                cells
                    .iter()
                    .any(|c| *c == w || c.ends_with(&format!(" {w}")))
            };
            let before_after = line.starts_with('|') && column("before") && column("after");
            let history_heading = line.starts_with('#')
                && ["history", "changelog", "change log", "changes"].contains(&heading);
            assert!(
                !(history_heading || session_n || lower.contains("changelog") || before_after),
                "{}:{}: {line}",
                f.display(),
                k + 1
            );
        }
    }
}
