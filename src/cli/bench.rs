//! `pathtrack bench solve|eval|cells|…`: the arguments of each bench, handed to the
//! harness in [`crate::bench`] (or to the bench of the engine it times), which prints the
//! table.

use crate::bench::{self, system_by_name};
use crate::error::{Error, Result};
use clap::{Args, Subcommand};

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
        #[command(flatten)]
        run: BenchSolve,
        /// Resident slots (see `solve --resident`).
        #[arg(long, action = clap::ArgAction::Set)]
        resident: Option<bool>,
        /// Paths per batch (the GPU tracks 65,536 paths at once unless this says otherwise).
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
        #[command(flatten)]
        run: BenchSolve,
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
    /// in double, the condition number, the numerical rank, the relative residual), for
    /// endpoints placed at the solutions of a `-o` file of an earlier solve, moved off them
    /// by a relative 1e-9 as a tracker leaves them.
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

/// The solve of `bench solve` and `bench certify`.
#[derive(Args, Debug)]
pub struct BenchSolve {
    /// Threads of our solve and of what runs beside it: `phc -b -t`, the CPU
    /// certification (0: all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Start system, as `solve --start`.
    #[arg(long, value_enum, default_value = "auto")]
    start: crate::solver::StartKind,
    /// Where our paths are tracked (with cuda, `bench certify` also certifies on the GPU).
    #[arg(long, value_enum, default_value = "cpu")]
    backend: super::solve_args::BackendKind,
    #[arg(long, default_value_t = 0)]
    device: usize,
}

impl BenchSolve {
    /// The backend and the tracker's settings of the solve.
    fn backend(
        &self,
        resident: Option<bool>,
        batch: Option<usize>,
    ) -> Result<(
        Box<dyn crate::backend::Backend>,
        crate::track::TrackerOptions,
    )> {
        let b = super::solve_args::make_backend(
            self.backend,
            self.device,
            crate::backend::cuda::EvalMethod::Fused,
            crate::backend::cuda::SolveMethod::GaussJordan,
            self.threads,
            resident,
            batch,
        )?;
        let tracker = super::solve_args::tracker_for(b.as_ref(), batch)?;
        Ok((b, tracker))
    }
}

pub fn run(a: &BenchArgs) -> Result<i32> {
    match &a.what {
        BenchWhat::Solve {
            systems,
            run,
            resident,
            batch,
        } => {
            let (mut b, tracker) = run.backend(*resident, *batch)?;
            let path = std::env::var_os("PATH");
            let (threads, seed, start) = (run.threads, run.seed, run.start);
            bench::solve::run(
                systems,
                threads,
                seed,
                start,
                path.as_deref(),
                b.as_mut(),
                &tracker,
            )
            .map(|_| 0)
        }
        BenchWhat::Certify {
            systems,
            run,
            no_cpu,
        } => {
            let (mut b, tracker) = run.backend(None, None)?;
            let (threads, seed, start) = (run.threads, run.seed, run.start);
            super::certify::bench(systems, threads, seed, start, b.as_mut(), &tracker, *no_cpu)
                .map(|_| 0)
        }
        BenchWhat::Eval {
            systems,
            p,
            threads,
        } => bench::kernels::eval(systems, p, *threads),
        BenchWhat::Dd { systems, seed } => bench::kernels::dd(systems, *seed),
        BenchWhat::Refine {
            system,
            from,
            count,
            seed,
        } => bench::endpoints::refine(system, from, *count, *seed),
        BenchWhat::Tally {
            nonsingular,
            singular,
            threads,
            n,
            seed,
        } => bench::endpoints::tally(nonsingular, *singular, threads, *n, *seed),
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
            bench::cells::run(&systems, *threads, *seed, path.as_deref()).map(|_| 0)
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
        } => bench::kernels::step(system, p, *steps, eval, solve, !*no_graph, *device, *seed),
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
