//! Monodromy: from one constructed solution–parameter pair, the loops find every solution
//! of the generic member that a direct solve at the same parameters finds (coordinates
//! within 1e-8), on a kinematics family, a dense quadratic family, a reaction network and
//! katsura-3/4 with parametric coefficients; the trace test ends the runs whose parameters
//! keep the solutions bounded, the stall count the others; the command line writes a start
//! for `solve --from`.

use num_complex::Complex64 as C64;
use pathtrack::params::monodromy::{self, MonodromyOptions, Stop};
use pathtrack::params::{self, Family};
use pathtrack::solver::{solve_cpu, SolveOptions, StartKind};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn family_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("systems/families")
        .join(format!("{name}.yaml"))
}

fn family(name: &str) -> Family {
    Family::load(&family_path(name)).unwrap().expect("a family")
}

fn close(x: &[C64], y: &[C64], tol: f64) -> bool {
    let scale = 1.0 + x.iter().map(|z| z.norm()).fold(0.0, f64::max);
    x.iter().zip(y).all(|(a, b)| (a - b).norm() <= tol * scale)
}

/// Monodromy on `name` with `seed`: the count, agreement with a direct solve at the same
/// parameters, and the stop.
fn check(name: &str, count: usize, seed: u64, stop: Stop) {
    let fam = family(name);
    let mut backend = pathtrack::backend::cpu::CpuBackend::new(0).unwrap();
    let opts = SolveOptions {
        seed,
        ..Default::default()
    };
    let r = monodromy::solve(
        &fam,
        &opts,
        &MonodromyOptions::default(),
        &mut backend,
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(
        r.solutions.len(),
        count,
        "{name} seed {seed}: {:?}",
        r.history
    );
    assert_eq!(
        r.stop, stop,
        "{name} seed {seed}: trace {:?}",
        r.trace_residual
    );
    let member = fam.at(&r.parameters).unwrap();
    for x in &r.solutions {
        assert!(member.relative_residual(x) < 1e-12, "{name}");
    }
    let (_, ends) = solve_cpu(&member, StartKind::Auto, 1).unwrap();
    let direct = params::startfile::distinct(params::nonsingular_points(&ends));
    assert_eq!(direct.len(), count, "{name}: direct solve");
    for x in &direct {
        assert!(
            r.solutions.iter().any(|y| close(x, y, 1e-8)),
            "{name}: direct solution {x:?} not found by monodromy"
        );
    }
    // every solution found once
    for (i, x) in r.solutions.iter().enumerate() {
        for y in &r.solutions[..i] {
            assert!(!close(x, y, 1e-6), "{name}: a solution twice");
        }
    }
}

#[test]
fn kinematics_family_by_monodromy() {
    // leg lengths and the (cos, sin) scale enter as constants: the trace test applies
    check("rpr3_affine", 6, 1, Stop::TraceTest);
}

#[test]
fn dense_quadratic_family_by_monodromy() {
    // d multiplies a leading monomial: solutions pass through infinity on lines, the trace
    // is not affine, the stall count ends the run
    check("dense_quadratic3", 8, 1, Stop::Stalled);
}

#[test]
fn reaction_network_by_monodromy() {
    check("network", 3, 1, Stop::Stalled);
}

#[test]
fn katsura_with_parametric_coefficients_by_monodromy() {
    check("katsura3_params", 8, 1, Stop::TraceTest);
    check("katsura4_params", 16, 2, Stop::TraceTest);
}

/// The same seed gives the same run; the trace test never passes early: before the last
/// loop the set was incomplete and no earlier test passed (the run would have stopped).
#[test]
fn same_seed_same_run() {
    let fam = family("katsura3_params");
    let run = || {
        let mut backend = pathtrack::backend::cpu::CpuBackend::new(0).unwrap();
        monodromy::solve(
            &fam,
            &SolveOptions {
                seed: 5,
                ..Default::default()
            },
            &MonodromyOptions::default(),
            &mut backend,
            &mut |_, _| {},
        )
        .unwrap()
    };
    let (a, b) = (run(), run());
    assert_eq!(a.solutions, b.solutions);
    assert_eq!(a.history, b.history);
    assert!(a.history.iter().rev().skip(1).all(|&c| c <= 8));
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pathtrack"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// `monodromy -o` writes the solutions with their parameters; `solve --from` tracks them
/// to a target and finds the target's full count.
#[test]
fn cli_monodromy_output_starts_a_parameter_homotopy() {
    let dir = std::env::temp_dir().join(format!("pathtrack-monodromy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sols = dir.join("m.jsonl");
    let f = family_path("katsura3_params");
    let out = bin()
        .args(["monodromy", "--json", "-q"])
        .arg(&f)
        .arg("-o")
        .arg(&sols)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["solutions"], 8);
    assert_eq!(s["stop"], "trace_test");
    let text = std::fs::read_to_string(&sols).unwrap();
    assert_eq!(text.lines().count(), 8);
    // katsura3 itself: c0 = 1, b = 1, c = 0
    let out = bin()
        .args(["solve", "--json", "-q"])
        .arg(&f)
        .arg("--from")
        .arg(&sols)
        .args(["--params", "c0=1, b0=1, c1=0, b1=1, c2=0, b2=1, c3=0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(t["nonsingular"], 8, "{t}");
    assert_eq!(t["paths"], 8);
    // a system without parameters
    let out = bin()
        .args(["monodromy", "systems/katsura5.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("needs a system with parameters"), "{e}");
}
