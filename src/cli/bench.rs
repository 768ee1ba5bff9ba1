//! `pathtrack bench solve|eval|cells|…`: tables of measured throughput (never asserted in tests).

use crate::backend::{cpu::CpuBackend, Backend};
use crate::error::{Error, Result};
use crate::solver::rng_for;
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
    /// Full solves: paths, seconds, paths/s, beside PHCpack's `phc -b -tTHREADS` when phc
    /// is on PATH (its seconds, regular / singular / other solutions, the speed-up) and
    /// Macaulay2's solveSystem when M2 is on PATH (its seconds, solutions, the speed-up).
    Solve {
        /// Systems: family names with size (katsura10) or files.
        #[arg(default_values_t = ["katsura10".to_string(), "noon7".to_string(), "cyclic7".to_string()])]
        systems: Vec<String>,
        /// Threads of our solve and of `phc -b -t` (0: all cores).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Start system, as `solve --start`.
        #[arg(long, value_enum, default_value = "auto")]
        start: crate::solver::StartKind,
        /// Where our paths are tracked (the GPU tracks 65,536 paths at once unless
        /// `--batch` says otherwise).
        #[arg(long, value_enum, default_value = "cpu")]
        backend: super::solve_args::BackendKind,
        #[arg(long, default_value_t = 0)]
        device: usize,
        /// Resident slots (see `solve --resident`).
        #[arg(long, action = clap::ArgAction::Set)]
        resident: Option<bool>,
        #[arg(long)]
        batch: Option<usize>,
    },
    /// Certification beside the solve (docs/certification.md): the solve's seconds, then the
    /// Krawczyk test of its nonsingular endpoints on the CPU and, with `--backend cuda`, on
    /// the GPU; each certification's seconds and share of the solve, the proven counts.
    Certify {
        /// Systems: family names with size (katsura10) or files.
        #[arg(default_values_t = ["katsura8".to_string(), "cyclic7".to_string()])]
        systems: Vec<String>,
        /// Threads of the solve and of the CPU certification (0: all cores).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, value_enum, default_value = "auto")]
        start: crate::solver::StartKind,
        /// Where the paths are tracked and, with cuda, the GPU certification runs.
        #[arg(long, value_enum, default_value = "cpu")]
        backend: super::solve_args::BackendKind,
        #[arg(long, default_value_t = 0)]
        device: usize,
        /// Leave out the CPU certification (the device's alone).
        #[arg(long)]
        no_cpu: bool,
    },
    /// Mixed cells: mixed volume, cells, homotopy steps, wall and CPU seconds per system,
    /// beside `gfan _mixedvolume -j THREADS` when gfan is on PATH (docs/mixed-cells.md).
    Cells {
        /// Systems: family names with size (cyclic12) or files.
        #[arg(default_values_t = ["cyclic10".to_string(), "cyclic11".to_string()])]
        systems: Vec<String>,
        /// Threads of the enumeration and of gfan (0: all cores).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Row reduction over Z/p (see docs/rref.md).
    Rref {
        /// Matrix sizes (comma separated).
        #[arg(long, value_delimiter = ',', default_values_t = [1000usize])]
        n: Vec<usize>,
        #[arg(long, default_value_t = 2147483647)]
        prime: u64,
        #[arg(long, value_enum, default_value = "cpu")]
        backend: super::rref::RrefBackend,
        /// GPU algorithms to time (comma separated).
        #[arg(long, value_enum, value_delimiter = ',', default_values_t = [crate::linalg::rref::cuda::GpuAlgo::Auto])]
        algo: Vec<crate::linalg::rref::cuda::GpuAlgo>,
        /// Timed repetitions per size on the GPU (the median is reported).
        #[arg(long, default_value_t = 3)]
        reps: usize,
        #[arg(long, default_value_t = 0)]
        device: usize,
        /// Element type: `zp` (mod --prime; u64 words from 2^31), `f64` or `c64` (random
        /// entries in [-1, 1); with `--backend cuda`, f64 is timed beside cuSOLVER getrf).
        #[arg(long, value_enum, default_value = "zp")]
        field: super::rref::RrefField,
        /// With `--backend cuda`: time `A X = B` with this many right-hand sides instead of
        /// the RREF, B's columns split in blocks over `--devices`.
        #[arg(long)]
        rhs: Option<usize>,
        /// GPU ordinals of the many-right-hand-side solve, comma separated (`0,1`; an
        /// ordinal may repeat); repeat the option for several rows per n.
        #[arg(long, default_values_t = [String::from("0")])]
        devices: Vec<String>,
    },
    /// Permanents of dense random matrices (see docs/permanent.md): complex on the CPU;
    /// real uniform [0, 1) on the GPU (`--backend cuda`, beside SUperman's H200 times).
    Perm {
        #[arg(long, value_delimiter = ',', default_values_t = [20usize, 22, 24])]
        n: Vec<usize>,
        #[arg(long, value_delimiter = ',', default_values_t = [1usize])]
        threads: Vec<usize>,
        /// `cpu` or `cuda`.
        #[arg(long, default_value = "cpu")]
        backend: String,
        /// GPU: accumulations to time (plain, kahan, dd).
        #[arg(long, value_delimiter = ',', default_values_t = ["plain".to_string()])]
        acc: Vec<String>,
        /// GPU: log2 of the codes per register block W (the library's default for real
        /// matrices with the unit-column form).
        #[arg(long, value_delimiter = ',', default_values_t = [2u32])]
        block_log2: Vec<u32>,
        /// GPU: minimum resident blocks per SM asked of the register allocator.
        #[arg(long, value_delimiter = ',', default_values_t = [2u32])]
        min_blocks: Vec<u32>,
        /// GPU: unit-column form on/off (`true,false` times both; docs/permanent.md).
        #[arg(long, value_delimiter = ',', default_values_t = [true])]
        unit_column: Vec<bool>,
        /// GPU: also time the CPU engine (all cores) up to this order.
        #[arg(long, default_value_t = 30)]
        cpu_max: usize,
        #[arg(long, default_value_t = 0)]
        device: usize,
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
    /// The double-double arithmetic of the last stretch near t = 1 (`track::dd`): one
    /// evaluation of `H`, `∂H/∂y`, `∂H/∂τ` and one solve for the Newton and Euler directions,
    /// on one thread, for the system's terms with random lifts (a polyhedral homotopy's form).
    Dd {
        #[arg(default_values_t = ["chandra12".to_string(), "chandra16".to_string(), "cyclic10".to_string(), "katsura10".to_string()])]
        systems: Vec<String>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Distinct solutions from endpoints (`report::Tally::solutions` and `suspects`, which the
    /// summary and every recovery round compute): `nonsingular` random points in C^n, every
    /// tenth reached by two paths, and `singular` endpoints, a tenth of them on a
    /// nonsingular solution; seconds per call.
    Tally {
        #[arg(long, value_delimiter = ',', default_values_t = [10_000usize, 100_000, 400_000])]
        nonsingular: Vec<usize>,
        #[arg(long, default_value_t = 10_000)]
        singular: usize,
        /// Threads of the clustering's sweep (comma separated; 0: one per core).
        #[arg(long, value_delimiter = ',', default_values_t = [1usize, 0])]
        threads: Vec<usize>,
        #[arg(long, default_value_t = 12)]
        n: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Refinement of endpoints at t = 1 (`post::Refiner::process`, which the solver runs on
    /// every endpoint): microseconds per endpoint on one thread, in all and by part (Newton
    /// in double, the condition number, the relative residual), for endpoints placed at the
    /// solutions of a `-o` file of an earlier solve, moved off them by a relative 1e-9 as a
    /// tracker leaves them.
    Refine {
        /// The system (family name with size, or a file).
        system: String,
        /// JSON Lines of an earlier `solve -o` of that system.
        #[arg(long)]
        from: std::path::PathBuf,
        /// Endpoints to refine, at most.
        #[arg(long, default_value_t = 2000)]
        count: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// The CUDA backend alone: `steps` device-resident Euler–Newton steps (one Euler
    /// prediction + one Newton iteration) of p paths (T. Chen, Tables 1–2).
    Step {
        /// Systems (comma separated): family names with size or files.
        #[arg(long, value_delimiter = ',', default_values_t = ["cyclic14".to_string(), "chandra24".to_string()])]
        system: Vec<String>,
        #[arg(long, value_delimiter = ',', default_values_t = [10usize, 50, 250, 500, 1000, 10_000, 100_000, 1_000_000])]
        p: Vec<usize>,
        #[arg(long, default_value_t = 100)]
        steps: usize,
        /// Evaluation routes to time (comma separated).
        #[arg(long, value_enum, value_delimiter = ',', default_values_t = [crate::backend::cuda::EvalMethod::Cublas, crate::backend::cuda::EvalMethod::Fused, crate::backend::cuda::EvalMethod::Generated])]
        eval: Vec<crate::backend::cuda::EvalMethod>,
        /// Direction solves to time (comma separated): gj (Gauss–Jordan kernel), qr
        /// (cublasZgeqrfBatched); each is timed with every evaluation route.
        #[arg(long, value_enum, value_delimiter = ',', default_values_t = [crate::backend::cuda::SolveMethod::GaussJordan])]
        solve: Vec<crate::backend::cuda::SolveMethod>,
        /// Launch the steps one kernel at a time instead of replaying a captured CUDA graph.
        #[arg(long)]
        no_graph: bool,
        #[arg(long, default_value_t = 0)]
        device: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

/// A system named as `FAMILYn` (generated) or a path to a file
/// ([`crate::system::parse::load_named`]).
pub fn system_by_name(name: &str) -> Result<System> {
    Ok(crate::system::parse::load_named(std::path::Path::new(
        name,
    ))?)
}

pub fn run(a: &BenchArgs) -> Result<i32> {
    match &a.what {
        BenchWhat::Solve {
            systems,
            threads,
            seed,
            start,
            backend,
            device,
            resident,
            batch,
        } => {
            let path = std::env::var_os("PATH");
            let mut b = super::solve_args::make_backend(
                *backend,
                *device,
                crate::backend::cuda::EvalMethod::Fused,
                crate::backend::cuda::SolveMethod::GaussJordan,
                *threads,
                *resident,
                *batch,
            )?;
            let tracker = super::solve_args::tracker_for(b.as_ref(), *batch)?;
            super::solve_bench::bench_solve(
                systems,
                *threads,
                *seed,
                *start,
                path.as_deref(),
                b.as_mut(),
                &tracker,
            )
            .map(|_| 0)
        }
        BenchWhat::Certify {
            systems,
            threads,
            seed,
            start,
            backend,
            device,
            no_cpu,
        } => {
            let mut b = super::solve_args::make_backend(
                *backend,
                *device,
                crate::backend::cuda::EvalMethod::Fused,
                crate::backend::cuda::SolveMethod::GaussJordan,
                *threads,
                None,
                None,
            )?;
            let tracker = super::solve_args::tracker_for(b.as_ref(), None)?;
            super::certify::bench(
                systems,
                *threads,
                *seed,
                *start,
                b.as_mut(),
                &tracker,
                *no_cpu,
            )
            .map(|_| 0)
        }
        BenchWhat::Eval {
            systems,
            p,
            threads,
        } => bench_eval(systems, p, *threads),
        BenchWhat::Dd { systems, seed } => bench_dd(systems, *seed),
        BenchWhat::Refine {
            system,
            from,
            count,
            seed,
        } => bench_refine(system, from, *count, *seed),
        BenchWhat::Tally {
            nonsingular,
            singular,
            threads,
            n,
            seed,
        } => bench_tally(nonsingular, *singular, threads, *n, *seed),
        BenchWhat::Cells {
            systems,
            threads,
            seed,
        } => {
            let systems = systems
                .iter()
                .map(|s| system_by_name(s))
                .collect::<Result<Vec<_>>>()?;
            let path = std::env::var_os("PATH");
            super::cells_bench::bench_cells(&systems, *threads, *seed, path.as_deref()).map(|_| 0)
        }
        BenchWhat::Rref {
            n,
            prime,
            backend,
            algo,
            reps,
            device,
            field,
            rhs,
            devices,
        } => match rhs {
            Some(m) => {
                if *backend != super::rref::RrefBackend::Cuda {
                    return Err(crate::error::Error::Usage(
                        "bench rref --rhs: the many-right-hand-side solve runs on the GPU (--backend cuda)".into(),
                    ));
                }
                let lists = devices
                    .iter()
                    .map(|d| super::rref::parse_devices(d))
                    .collect::<crate::error::Result<Vec<_>>>()?;
                super::rref::bench_many_rhs(n, *m, &lists, *field, *prime, *reps).map(|_| 0)
            }
            None => {
                super::rref::bench(n, *prime, *backend, algo, *reps, *device, *field).map(|_| 0)
            }
        },
        BenchWhat::Perm {
            n,
            threads,
            backend,
            acc,
            block_log2,
            min_blocks,
            unit_column,
            cpu_max,
            device,
        } => match backend.as_str() {
            "cpu" => crate::linalg::permanent::bench(n, threads).map(|_| 0),
            "cuda" => {
                let accs = acc
                    .iter()
                    .map(|a| parse_accumulation(a))
                    .collect::<Result<Vec<_>>>()?;
                crate::linalg::permanent::cuda::bench(
                    *device,
                    n,
                    &accs,
                    block_log2,
                    min_blocks,
                    unit_column,
                    *cpu_max,
                )
                .map(|_| 0)
            }
            other => Err(Error::Usage(format!(
                "bench perm --backend {other}: expected cpu or cuda"
            ))),
        },
        BenchWhat::Step {
            system,
            p,
            steps,
            eval,
            solve,
            no_graph,
            device,
            seed,
        } => bench_step(system, p, *steps, eval, solve, !*no_graph, *device, *seed),
    }
}

fn parse_accumulation(a: &str) -> Result<crate::linalg::permanent::Accumulation> {
    use crate::linalg::permanent::Accumulation;
    match a {
        "plain" => Ok(Accumulation::Plain),
        "kahan" => Ok(Accumulation::Kahan),
        "dd" | "double-double" => Ok(Accumulation::DoubleDouble),
        other => Err(Error::Usage(format!(
            "bench perm --acc {other}: expected plain, kahan or dd"
        ))),
    }
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
            let per = seconds_per_call(|| {
                backend.extended_jacobians(&crate::eval::Points::projective(&ys, &taus), &mut out)
            })?;
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

/// Mean seconds per call of `f`, called for at least 0.3 s and 3 times after one warm-up.
fn seconds_per_call(mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    let (mut reps, clock) = (0u64, Instant::now());
    while clock.elapsed().as_secs_f64() < 0.3 || reps < 3 {
        f()?;
        reps += 1;
    }
    Ok(clock.elapsed().as_secs_f64() / reps as f64)
}

/// See [`BenchWhat::Refine`].
fn bench_refine(name: &str, from: &std::path::Path, count: usize, seed: u64) -> Result<i32> {
    use crate::track::{PathEnd, TrackCode};
    let sys = system_by_name(name)?;
    let n = sys.n();
    let text = std::fs::read_to_string(from)
        .map_err(|e| Error::Usage(format!("bench refine: cannot read {}: {e}", from.display())))?;
    let mut rng = rng_for(seed);
    let mut ends = Vec::new();
    for line in text.lines() {
        if ends.len() >= count {
            break;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v.get("status").and_then(|s| s.as_str()) != Some("nonsingular") {
            continue;
        }
        let Some(c) = v.get("coordinates").and_then(|c| c.as_array()) else {
            continue;
        };
        let x: Vec<C64> = c
            .iter()
            .filter_map(|p| Some(C64::new(p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
            .collect();
        if x.len() != n {
            return Err(Error::Usage(format!(
                "bench refine: {} has {} coordinates per solution, {name} {n} variables",
                from.display(),
                x.len()
            )));
        }
        let mut y: Vec<C64> = x.into_iter().chain([C64::new(1.0, 0.0)]).collect();
        let s = y.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        y.iter_mut().for_each(|z| {
            *z = *z / s
                * (1.0 + 1e-9 * C64::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5))
        });
        ends.push(PathEnd::bare(ends.len() as u64, y, 0.0, TrackCode::Reached));
    }
    if ends.is_empty() {
        return Err(Error::Usage(format!(
            "bench refine: no nonsingular solutions in {}",
            from.display()
        )));
    }
    let refiner = crate::post::Refiner::new(&sys, 0.0);
    let per = |secs: f64| secs / ends.len() as f64 * 1e6;
    // CPU seconds of this process (one thread works): a loaded machine does not inflate them.
    let clock = || crate::report::usage::process_cpu_seconds().unwrap_or(f64::NAN);
    let start = clock();
    let nonsingular = ends
        .iter()
        .map(|e| refiner.process(e.clone()))
        .filter(|e| e.status == crate::post::Status::Nonsingular)
        .count();
    let process = per(clock() - start);
    let (newton, condition) = refiner.time_parts(&ends, clock);
    let start = clock();
    let mut sink = 0.0;
    for e in &ends {
        let x: Vec<C64> = e.y[..n].iter().map(|z| z / e.y[n]).collect();
        sink += sys.relative_residual(&x);
    }
    let residual = per(clock() - start);
    println!("# pathtrack bench refine (one thread, CPU time in 10 ms ticks): µs per endpoint of Refiner::process, and its parts");
    println!(
        "{:<12} {:>4} {:>6} {:>10} {:>12} {:>10} {:>14} {:>12}",
        "system",
        "n",
        "terms",
        "endpoints",
        "nonsingular",
        "process",
        "newton (double)",
        "condition"
    );
    println!(
        "{:<12} {:>4} {:>6} {:>10} {:>12} {:>10.1} {:>14.1} {:>12.1}   residual {:.1} µs{}",
        name,
        n,
        sys.equations.iter().map(|f| f.terms.len()).sum::<usize>(),
        ends.len(),
        nonsingular,
        process,
        per(newton),
        per(condition),
        residual,
        if sink.is_nan() {
            " (NaN residuals)"
        } else {
            ""
        }
    );
    Ok(0)
}

/// See [`BenchWhat::Tally`].
fn bench_tally(
    nonsingular: &[usize],
    singular: usize,
    threads: &[usize],
    n: usize,
    seed: u64,
) -> Result<i32> {
    println!("# Tally::solutions and ::suspects on random endpoints in C^{n}; suspects read the clusters that solutions computed");
    println!(
        "{:>8} {:>12} {:>10} {:>14} {:>10} {:>13} {:>9}",
        "threads",
        "nonsingular",
        "singular",
        "solutions (s)",
        "distinct",
        "suspects (s)",
        "suspects"
    );
    for &ns in nonsingular {
        for &t in threads {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map_err(|e| Error::Internal(format!("bench tally threads: {e}")))?;
            let tally = random_tally(ns, singular, n, seed);
            // As at the end of a solve: the counts cluster, the suspects read the clusters,
            // the solutions are moved out of the tally.
            let (t_solutions, distinct, t_suspects, suspects) = pool.install(|| {
                let clock = std::time::Instant::now();
                let c = tally.counts();
                let t_solutions = clock.elapsed().as_secs_f64();
                let clock = std::time::Instant::now();
                let suspects = tally.suspects().len();
                let t_suspects = clock.elapsed().as_secs_f64();
                let distinct = tally.into_solutions().len();
                assert_eq!(distinct as u64, c.nonsingular + c.singular);
                (t_solutions, distinct, t_suspects, suspects)
            });
            println!(
                "{:>8} {ns:>12} {singular:>10} {t_solutions:>14.3} {distinct:>10} {t_suspects:>13.3} {suspects:>9}",
                pool.current_num_threads()
            );
        }
    }
    Ok(0)
}

/// `nonsingular` random points in `[-2, 2]^{2n}` ⊂ C^n, every tenth reached by two paths, and
/// `singular` endpoints, every tenth of them on a nonsingular solution.
fn random_tally(nonsingular: usize, singular: usize, n: usize, seed: u64) -> crate::report::Tally {
    use crate::post::{Endpoint, Status};
    use num_complex::Complex64 as C64;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut point = || -> Vec<C64> {
        (0..n)
            .map(|_| {
                C64::new(
                    rng.random::<f64>() * 4.0 - 2.0,
                    rng.random::<f64>() * 4.0 - 2.0,
                )
            })
            .collect()
    };
    let endpoint = |path: u64, status: Status, x: Vec<C64>, condition: f64| Endpoint {
        coordinates: Some(x),
        residual: 1e-15,
        condition,
        ..Endpoint::new(path, status)
    };
    let mut tally = crate::report::Tally::default();
    let mut path = 0u64;
    let mut solutions = Vec::with_capacity(nonsingular);
    for i in 0..nonsingular {
        let x = point();
        let copies = if i % 10 == 0 { 2 } else { 1 };
        for _ in 0..copies {
            tally.add(&endpoint(path, Status::Nonsingular, x.clone(), 10.0));
            path += 1;
        }
        solutions.push(x);
    }
    for i in 0..singular {
        let x = if i % 10 == 0 && nonsingular > 0 {
            solutions[(i * 7919 + 1) % nonsingular].clone()
        } else {
            point()
        };
        tally.add(&endpoint(path, Status::Singular, x, 1e14));
        path += 1;
    }
    tally
}

fn bench_dd(systems: &[String], seed: u64) -> Result<i32> {
    use crate::eval::dd::Cdd;
    use crate::eval::dd_homotopy::DdHomotopy;
    println!("# pathtrack bench dd (one thread): double-double evaluation of H, ∂H/∂y, ∂H/∂τ and the solve for both directions (track::dd), terms with random lifts");
    println!(
        "{:<12} {:>4} {:>6} {:>10} {:>12} {:>10} {:>12}",
        "system", "n", "terms", "eval µs", "same τ µs", "solve µs", "directions/s"
    );
    for name in systems {
        let sys = system_by_name(name)?;
        let h = random_lift_homotopy(&sys, seed);
        let dd = DdHomotopy::new(&h).ok_or_else(|| {
            Error::Usage(format!(
                "bench dd: {name} is a Laurent system (negative exponents)"
            ))
        })?;
        let nh = dd.nh();
        let mut rng = rng_for(seed);
        let mut y: Vec<Cdd> = (0..nh)
            .map(|_| {
                Cdd::from(C64::new(
                    rng.random::<f64>() - 0.5,
                    rng.random::<f64>() - 0.5,
                ))
            })
            .collect();
        let s = y.iter().map(|z| z.to_c64().norm_sqr()).sum::<f64>().sqrt();
        y.iter_mut().for_each(|z| *z = Cdd::from(z.to_c64() / s));
        let patch: Vec<Cdd> = y.iter().map(|z| z.conj()).collect();
        let mut v = dd.values();
        let (mut newton, mut euler) = (vec![Cdd::ZERO; nh], vec![Cdd::ZERO; nh]);
        // Each evaluation at a new τ, as the tracker's RK4 stages are (the coefficients
        // `c·e^{τω}` are cached per τ).
        let mut tau = -1e-8;
        let failed = |what: &str| Error::Usage(format!("bench dd: {name}: the {what} failed"));
        let eval = seconds_per_call(|| {
            tau *= 0.999_999;
            dd.eval(&y, tau, None, &mut v)
                .then_some(())
                .ok_or_else(|| failed("evaluation"))
        })?;
        let eval_same_tau = seconds_per_call(|| {
            dd.eval(&y, tau, None, &mut v)
                .then_some(())
                .ok_or_else(|| failed("evaluation"))
        })?;
        let solve = seconds_per_call(|| {
            v.solve(&patch, Cdd::ZERO, true, &mut newton, &mut euler)
                .then_some(())
                .ok_or_else(|| failed("solve"))
        })?;
        println!(
            "{:<12} {:>4} {:>6} {:>10.2} {:>12.2} {:>10.2} {:>12.0}",
            name,
            h.n,
            h.equations.iter().map(Vec::len).sum::<usize>(),
            eval * 1e6,
            eval_same_tau * 1e6,
            solve * 1e6,
            1.0 / (eval + solve)
        );
    }
    Ok(0)
}

/// The seed's V100 times (seconds for 100 Euler–Newton steps; T. Chen, Tables 1–2).
fn seed_v100(system: &str, p: usize) -> Option<f64> {
    let t: &[(usize, f64)] = match system {
        "cyclic14" => &[
            (10, 0.0222),
            (50, 0.0274),
            (250, 0.0296),
            (500, 0.0313),
            (1000, 0.0355),
        ],
        "chandra24" => &[(250, 0.0728), (500, 0.0757), (1000, 0.0852)],
        _ => &[],
    };
    t.iter().find(|(q, _)| *q == p).map(|(_, s)| *s)
}

/// The system's terms with random lifts in [0, 1) (the form of a polyhedral homotopy).
pub fn random_lift_homotopy(sys: &System, seed: u64) -> crate::homotopy::Homotopy {
    let mut rng = rng_for(seed);
    let eqs = sys
        .equations
        .iter()
        .map(|f| {
            f.terms
                .iter()
                .map(|t| (t.coeff, t.exponents.clone(), rng.random::<f64>()))
                .collect()
        })
        .collect();
    crate::homotopy::Homotopy::from_affine_terms(sys.n(), eqs)
}

#[allow(clippy::too_many_arguments)]
fn bench_step(
    systems: &[String],
    ps: &[usize],
    steps: usize,
    evals: &[crate::backend::cuda::EvalMethod],
    solves: &[crate::backend::cuda::SolveMethod],
    graph: bool,
    device: usize,
    seed: u64,
) -> Result<i32> {
    let mut backend = crate::backend::cuda::CudaBackend::new(device)?;
    println!(
        "# pathtrack bench step: {steps} Euler–Newton steps (1 Euler prediction + 1 Newton iteration = 2 direction solves) on the device, {}",
        backend.device_description()
    );
    println!(
        "{:<10} {:>3} {:>5} {:>8} {:>9} {:>5} {:>5} {:>6} {:>11} {:>9} {:>14} {:>7} {:>9} {:>9}",
        "system",
        "n",
        "terms",
        "p",
        "eval",
        "solve",
        "graph",
        "chunks",
        "ms/steps",
        "V100 ms",
        "path-steps/s",
        "finite",
        "eval ms",
        "solve ms"
    );
    for name in systems {
        let sys = system_by_name(name)?;
        let h = random_lift_homotopy(&sys, seed);
        for &m in evals {
            backend.set_eval_method(m);
            backend.set_homotopy(&h)?;
            for &sm in solves {
                backend.set_solve_method(sm);
                let sname = match sm {
                    crate::backend::cuda::SolveMethod::GaussJordan => "gj",
                    crate::backend::cuda::SolveMethod::Qr => "qr",
                };
                println!("# {name} ({m:?}, {sname}): {}", backend.kernel_report());
                for &p in ps {
                    let t = backend.time_steps(p, steps, 1e-3, graph, seed)?;
                    let v100 = seed_v100(name, p)
                        .map(|s| format!("{:.1}", s * 1e3))
                        .unwrap_or_else(|| "-".into());
                    println!(
                        "{:<10} {:>3} {:>5} {:>8} {:>9} {:>5} {:>5} {:>6} {:>11.3} {:>9} {:>14.3e} {:>6.1}% {:>9.4} {:>9.4}",
                        name,
                        h.n,
                        h.term_count(),
                        p,
                        format!("{m:?}").to_lowercase(),
                        sname,
                        if t.graph { "yes" } else { "no" },
                        t.chunks,
                        t.ms,
                        v100,
                        (p * steps) as f64 / (t.ms * 1e-3),
                        t.finite_fraction * 100.0,
                        t.eval_ms,
                        t.solve_ms
                    );
                }
            }
        }
    }
    Ok(0)
}
