//! `pathtrack solve FILE [--start …] [--seed S] [--json] [-o sols.jsonl]`.

use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::{CudaBackend, EvalMethod, SolveMethod};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::report::{progress, summary_table, SolutionWriter};
use crate::solver::{solve, Observer, SolveOptions, StartKind};
use crate::track::TrackerOptions;
use clap::Args;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// The GPU when one is present, else the CPU (with a notice).
    Auto,
    Cpu,
    Cuda,
}

#[derive(Args, Debug)]
pub struct SolveArgs {
    /// System file (YAML or PHCpack format).
    pub file: std::path::PathBuf,
    /// Start system.
    #[arg(long, value_enum, default_value = "polyhedral")]
    pub start: StartKind,
    /// Polyhedral start: solutions in (C*)^n only (no constant terms added to the supports).
    #[arg(long)]
    pub torus: bool,
    /// m-hom start: the variable partition, e.g. "{x y}{z}" (default: the best found).
    #[arg(long)]
    pub partition: Option<String>,
    /// Seed of every random choice (γ, lifting, patch): the same seed gives the same run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the summary as one JSON object on stdout (nothing else on stdout).
    #[arg(long)]
    pub json: bool,
    /// Write every path's endpoint as JSON Lines, streamed while paths finish.
    #[arg(short, long)]
    pub output: Option<std::path::PathBuf>,
    /// Write the distinct finite solutions (with multiplicities) as JSON Lines at the end.
    #[arg(long)]
    pub solutions: Option<std::path::PathBuf>,
    /// Where paths are tracked.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendKind,
    /// GPU to use with `--backend cuda|auto`.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// How the CUDA backend forms the extended Jacobian.
    #[arg(long, value_enum, default_value = "fused")]
    pub cuda_eval: EvalMethod,
    /// How the CUDA backend solves for the Euler/Newton directions: gj (batched
    /// Gauss–Jordan kernel) or qr (cublasZgeqrfBatched, the seed's route).
    #[arg(long, value_enum, default_value = "gj")]
    pub cuda_solve: SolveMethod,
    /// CPU threads (0: all cores; more than the cores is capped at the cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Track whole paths in resident slots: on the GPU the whole step loop stays on the
    /// device and only endgame-zone trouble comes back to the host (default on the GPU;
    /// `false` tracks round by round, one batched direction solve per step); on the CPU the
    /// same step machine runs on the host (default off; for comparisons).
    #[arg(long, action = clap::ArgAction::Set)]
    pub resident: Option<bool>,
    /// Paths tracked at once (default 4096 on the CPU, 65536 on the GPU; capped at a
    /// quarter of the memory's worth of paths, and at the number of paths when that is
    /// more than 65536).
    #[arg(long)]
    pub batch: Option<usize>,
    /// Track only these paths (indices as in `-o` output, e.g. "215,828"): re-runs a few
    /// paths of a seed for inspection; the same seed gives them the same start points. A
    /// path may still run differently than in the full run: a point's directions depend in
    /// the last bits on the points evaluated with it (chandra-13 seed 1, path 2890: alone it
    /// reaches its κ = 1e14 solution, in the full run's recovery round it stalls).
    #[arg(long, value_delimiter = ',')]
    pub paths: Option<Vec<u64>>,
    /// Refuse to track more start paths than this (0: no bound); `--paths` is not
    /// bounded.
    #[arg(long, default_value_t = crate::solver::limits::DEFAULT_MAX_PATHS)]
    pub max_paths: u128,
    /// Refuse a run whose estimated work, paths × degree × terms, is above this (0: no
    /// bound).
    #[arg(long, default_value_t = crate::solver::limits::DEFAULT_MAX_WORK)]
    pub max_work: f64,
    /// Predictor error target before the endgame zone (`TrackerOptions::eta_target`,
    /// default 1e-4): smaller is slower and safer against path jumping.
    #[arg(long, hide = true)]
    pub eta_target: Option<f64>,
    /// Predictor error target in the endgame zone (`TrackerOptions::eta_target_endgame`,
    /// default 1e-6).
    #[arg(long, hide = true)]
    pub eta_target_endgame: Option<f64>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(a: &SolveArgs) -> Result<i32> {
    // Every output is checked before any work: a solve is not lost to a path at the end.
    super::outputs::check(
        Some(&a.file),
        &[
            ("-o", a.output.as_deref()),
            ("--solutions", a.solutions.as_deref()),
        ],
    )?;
    if a.max_work.is_nan() || a.max_work < 0.0 {
        return Err(Error::Usage(format!(
            "--max-work must be a non-negative number, not {}",
            a.max_work
        )));
    }
    let threads = super::resources::threads(a.threads);
    let system = crate::system::load(&a.file)?;
    if let Some(w) = crate::linalg::rref::dependent::dependency_warning(&system, a.seed) {
        eprintln!("{w}");
    }
    let partition = match &a.partition {
        Some(p) => Some(crate::start::mhom::Partition::parse(p, &system.variables)?),
        None => None,
    };
    let mut opts = SolveOptions {
        partition,
        start: a.start,
        seed: a.seed,
        torus: a.torus,
        threads,
        only: a.paths.clone().map(|mut p| {
            p.sort_unstable();
            p.dedup();
            p
        }),
        limits: crate::solver::limits::Limits {
            max_paths: (a.max_paths > 0).then_some(a.max_paths),
            max_work: (a.max_work > 0.0).then_some(a.max_work),
        },
        ..Default::default()
    };
    let mut backend = make_backend(
        a.backend,
        a.device,
        a.cuda_eval,
        a.cuda_solve,
        threads,
        a.resident,
    )?;
    let batch = a.batch.map(|b| super::resources::batch(b, system.n()));
    opts.tracker = tracker_for(backend.as_ref(), batch)?;
    for (v, name, field) in [
        (a.eta_target, "--eta-target", &mut opts.tracker.eta_target),
        (
            a.eta_target_endgame,
            "--eta-target-endgame",
            &mut opts.tracker.eta_target_endgame,
        ),
    ] {
        if let Some(v) = v {
            if !(v > 0.0 && v < 1.0) {
                return Err(Error::Usage(format!("{name} must lie in (0, 1), not {v}")));
            }
            *field = v;
        }
    }
    struct Cli {
        pb: indicatif::ProgressBar,
        writer: SolutionWriter,
    }
    impl Observer for Cli {
        fn total(&mut self, paths: u128) {
            self.pb.set_length(paths as u64);
        }
        fn endpoint(&mut self, e: &crate::post::Endpoint) -> Result<()> {
            self.pb.inc(1);
            self.writer.write(e)
        }
    }
    let mut obs = Cli {
        pb: progress(0, a.quiet),
        writer: SolutionWriter::create(a.output.as_deref())?,
    };
    let summary = solve(&system, &opts, backend.as_mut(), &mut obs)?;
    let pb = obs.pb;
    pb.finish_and_clear();
    if let Some(path) = &a.solutions {
        crate::report::write_solutions(path, &summary.solutions)?;
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string(&summary).map_err(|e| Error::Internal(e.to_string()))?
        );
    } else {
        print!("{}", summary_table(&summary));
    }
    Ok(0)
}

/// Default paths per round on the GPU (one batched direction solve per round).
pub const CUDA_BATCH: usize = 65536;

/// The tracker settings the backend and the `--batch` flag ask for (`solve` and `bench solve`
/// alike): `batch` paths at once (default 4,096 on the CPU, [`CUDA_BATCH`] on the GPU).
pub fn tracker_for(backend: &dyn Backend, batch: Option<usize>) -> Result<TrackerOptions> {
    let mut t = TrackerOptions::default();
    match batch {
        Some(0) => return Err(Error::Usage("--batch must be positive".into())),
        Some(b) => t.batch = b,
        None if backend.name() == "cuda" => t.batch = CUDA_BATCH,
        None => {}
    }
    Ok(t)
}

/// The backend `--backend` asks for: `cuda` must open the GPU (else `Error::Cuda`, exit 2);
/// `auto` falls back to the CPU with a one-line notice on stderr. `resident`: resident
/// slots ([`crate::track::resident`]; `None`: on for the GPU, off for the CPU).
pub fn make_backend(
    kind: BackendKind,
    device: usize,
    eval: EvalMethod,
    solve: SolveMethod,
    threads: usize,
    resident: Option<bool>,
) -> Result<Box<dyn Backend>> {
    let cuda = || -> Result<Box<dyn Backend>> {
        let mut b = CudaBackend::new(device)?;
        b.set_eval_method(eval);
        b.set_resident(resident.unwrap_or(true));
        b.set_solve_method(solve);
        Ok(Box::new(b))
    };
    let cpu = || -> Result<Box<dyn Backend>> {
        Ok(if resident == Some(true) {
            Box::new(crate::track::resident::host::HostResident::new(threads)?)
        } else {
            Box::new(CpuBackend::new(threads)?)
        })
    };
    match kind {
        BackendKind::Cpu => cpu(),
        BackendKind::Cuda => cuda().map_err(|e| match e {
            Error::Cuda(m) => Error::Cuda(format!("--backend cuda: {m}")),
            other => other,
        }),
        BackendKind::Auto => match cuda() {
            Ok(b) => Ok(b),
            Err(e) => {
                eprintln!("pathtrack: no usable GPU ({e}); tracking on the CPU");
                cpu()
            }
        },
    }
}
