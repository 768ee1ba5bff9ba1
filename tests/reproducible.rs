//! The same seed gives bit-identical results (whatever the thread count); different seeds
//! give the same solution set.

use num_complex::Complex64 as C64;
use pathtrack::backend::cpu::CpuBackend;
use pathtrack::post::Status;
use pathtrack::report::solution_line;
use pathtrack::solver::{solve, SolveOptions, StartKind};
use pathtrack::system::{self, System};
use pathtrack::track::PARALLEL_ADVANCE;

fn shipped(name: &str) -> System {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("systems")
        .join(format!("{name}.yaml"));
    system::load(&p).unwrap()
}

/// (summary JSON without `seconds` and `phases`, all solution lines) of a run.
fn run(sys: &System, seed: u64, threads: usize) -> (String, Vec<String>) {
    let mut b = CpuBackend::new(threads).unwrap();
    let opts = SolveOptions {
        seed,
        ..Default::default()
    };
    let mut lines = Vec::new();
    let mut s = solve(sys, &opts, &mut b, &mut |e: &pathtrack::post::Endpoint| {
        lines.push(solution_line(e).to_string());
        Ok(())
    })
    .unwrap();
    s.seconds = 0.0;
    s.phases = Default::default();
    (serde_json::to_string(&s).unwrap(), lines)
}

#[test]
fn same_seed_same_bits_any_thread_count() {
    let sys = shipped("cyclic5");
    let a = run(&sys, 42, 1);
    let b = run(&sys, 42, 2);
    let c = run(&sys, 42, 2);
    assert_eq!(a, b);
    assert_eq!(b, c);
    let d = run(&sys, 43, 2);
    assert_ne!(a.1, d.1, "a different seed must give a different run");
}

/// cyclic-7's 924 paths: its rounds are large enough ([`PARALLEL_ADVANCE`]) for the
/// tracker to advance the paths on the pool, and the bits must not depend on it.
#[test]
fn same_bits_when_a_round_advances_its_paths_on_the_pool() {
    let sys = shipped("cyclic7");
    let a = run(&sys, 7, 1);
    let b = run(&sys, 7, 2);
    let c = run(&sys, 7, 3);
    assert!(a.1.len() == 924 && 924 >= PARALLEL_ADVANCE, "{}", a.1.len());
    assert_eq!(a, b);
    assert_eq!(a, c);
}

fn solutions(sys: &System, seed: u64) -> Vec<Vec<C64>> {
    let (_, eps) = pathtrack::solver::solve_cpu(sys, StartKind::TotalDegree, seed).unwrap();
    eps.into_iter()
        .filter(|e| e.status == Status::Nonsingular)
        .map(|e| e.coordinates.unwrap())
        .collect()
}

#[test]
fn different_seeds_same_solution_set() {
    let sys = shipped("katsura5");
    let a = solutions(&sys, 1);
    let b = solutions(&sys, 2);
    assert_eq!(a.len(), 32);
    assert_eq!(b.len(), 32);
    for x in &a {
        let hits = b
            .iter()
            .filter(|y| x.iter().zip(y.iter()).all(|(u, v)| (u - v).norm() < 1e-9))
            .count();
        assert_eq!(
            hits, 1,
            "solution {x:?} of seed 1 not found exactly once with seed 2"
        );
    }
}
