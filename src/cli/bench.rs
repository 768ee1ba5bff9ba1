//! `pathtrack bench solve|eval`: tables of measured throughput (never asserted in tests).

use crate::backend::{cpu::CpuBackend, Backend};
use crate::error::{Error, Result};
use crate::solver::{rng_for, solve, SolveOptions};
use crate::start::total_degree::TotalDegree;
use crate::system::System;
use clap::{Args, Subcommand};
use num_complex::Complex64 as C64;
use rand::Rng;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: BenchWhat,
}

#[derive(Subcommand, Debug)]
pub enum BenchWhat {
    /// Full solves: paths, seconds, paths/s.
    Solve {
        /// Systems: family names with size (katsura10) or files.
        #[arg(default_values_t = ["katsura10".to_string(), "noon7".to_string(), "cyclic7".to_string()])]
        systems: Vec<String>,
        #[arg(long, default_value_t = 0)]
        threads: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, value_enum, default_value = "polyhedral")]
        start: crate::solver::StartKind,
    },
    /// Row reduction over Z/p (see docs/rref.md).
    Rref {
        #[arg(long, default_value_t = 1000)]
        n: usize,
        #[arg(long, default_value_t = 2147483647)]
        prime: u64,
    },
    /// Complex permanents of dense random matrices (see docs/permanent.md).
    Perm {
        #[arg(long, value_delimiter = ',', default_values_t = [20usize, 22, 24])]
        n: Vec<usize>,
        #[arg(long, value_delimiter = ',', default_values_t = [1usize])]
        threads: Vec<usize>,
    },
    /// The evaluator alone: extended Jacobians of p points per call.
    Eval {
        #[arg(default_values_t = ["katsura10".to_string(), "noon7".to_string(), "cyclic7".to_string()])]
        systems: Vec<String>,
        #[arg(long, value_delimiter = ',', default_values_t = [1usize, 64, 1024, 16384])]
        p: Vec<usize>,
        #[arg(long, default_value_t = 0)]
        threads: usize,
    },
}

/// A system named as `FAMILYn` (generated) or a path to a file.
pub fn system_by_name(name: &str) -> Result<System> {
    let path = std::path::Path::new(name);
    if path.exists() {
        return Ok(crate::system::load(path)?);
    }
    let split = name.find(|c: char| c.is_ascii_digit()).ok_or_else(|| {
        Error::Usage(format!(
            "'{name}' is neither a file nor a family name with a size (e.g. katsura10)"
        ))
    })?;
    let n: usize = name[split..]
        .parse()
        .map_err(|_| Error::Usage(format!("bad size in '{name}'")))?;
    crate::system::families::generate(&name[..split], n).map_err(Error::Usage)
}

pub fn run(a: &BenchArgs) -> Result<i32> {
    match &a.what {
        BenchWhat::Solve {
            systems,
            threads,
            seed,
            start,
        } => bench_solve(systems, *threads, *seed, *start),
        BenchWhat::Eval {
            systems,
            p,
            threads,
        } => bench_eval(systems, p, *threads),
        BenchWhat::Rref { n, prime } => super::rref::bench(*n, *prime).map(|_| 0),
        BenchWhat::Perm { n, threads } => crate::linalg::permanent::bench(n, threads).map(|_| 0),
    }
}

fn bench_solve(
    systems: &[String],
    threads: usize,
    seed: u64,
    start: crate::solver::StartKind,
) -> Result<i32> {
    let mut backend = CpuBackend::new(threads)?;
    println!(
        "# pathtrack bench solve (backend cpu, {} threads, seed {seed})",
        backend.threads()
    );
    println!(
        "{:<12} {:>8} {:>8} {:>12} {:>8} {:>8} {:>10} {:>10}",
        "system", "start", "paths", "finite", "at_inf", "failed", "seconds", "paths/s"
    );
    for name in systems {
        let sys = system_by_name(name)?;
        let opts = SolveOptions {
            seed,
            start,
            threads,
            ..Default::default()
        };
        let s = solve(
            &sys,
            &opts,
            &mut backend,
            &mut |_: &crate::post::Endpoint| Ok(()),
        )?;
        println!(
            "{:<12} {:>12} {:>8} {:>12} {:>8} {:>8} {:>10.3} {:>10.1}",
            name,
            "td",
            s.paths,
            s.finite,
            s.at_infinity,
            s.failed,
            s.seconds,
            s.paths as f64 / s.seconds
        );
    }
    Ok(0)
}

fn bench_eval(systems: &[String], ps: &[usize], threads: usize) -> Result<i32> {
    let mut backend = CpuBackend::new(threads)?;
    println!("# pathtrack bench eval (backend cpu, {} threads): extended Jacobians [D_y H, D_τ H, H] of the total-degree homotopy", backend.threads());
    println!(
        "{:<12} {:>4} {:>6} {:>8} {:>12} {:>14} {:>10}",
        "system", "n", "terms", "p", "µs/call", "points/s", "GFLOP/s"
    );
    for name in systems {
        let sys = system_by_name(name)?;
        let mut rng = rng_for(7);
        let td = TotalDegree::new(&sys, &mut rng)?;
        let h = &td.homotopy;
        backend.set_homotopy(h)?;
        let layout = crate::eval::EvalLayout::new(h);
        let nh = h.nh();
        for &p in ps {
            let ys: Vec<C64> = (0..p * nh)
                .map(|_| C64::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5))
                .collect();
            let taus: Vec<C64> = (0..p)
                .map(|_| C64::new(-rng.random::<f64>(), 0.0))
                .collect();
            let mut out = vec![C64::new(0.0, 0.0); p * layout.ext_len()];
            backend.extended_jacobians(&crate::eval::Points::projective(&ys, &taus), &mut out)?; // warm-up
            let target = 0.3;
            let (mut reps, clock) = (0u64, Instant::now());
            while clock.elapsed().as_secs_f64() < target || reps < 3 {
                backend
                    .extended_jacobians(&crate::eval::Points::projective(&ys, &taus), &mut out)?;
                reps += 1;
            }
            let per = clock.elapsed().as_secs_f64() / reps as f64;
            println!(
                "{:<12} {:>4} {:>6} {:>8} {:>12.2} {:>14.0} {:>10.2}",
                name,
                h.n,
                layout.m,
                p,
                per * 1e6,
                p as f64 / per,
                layout.flops(p) / per * 1e-9
            );
        }
    }
    Ok(0)
}
