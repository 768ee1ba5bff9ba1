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
    let finite = text
        .lines()
        .find(|l| l.trim_start().starts_with("finite solutions"))
        .unwrap();
    assert!(finite.trim_end().ends_with(" 32"), "{text}");
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
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
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
