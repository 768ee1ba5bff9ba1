//! What `pathtrack solve` is asked for (its options) and the backend and tracker settings
//! they give; shared by `solve`, its parameter runs, shards, MPI ranks and the other
//! commands that track paths.

use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::{CudaBackend, EvalMethod, SolveMethod};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::report::formats::SolutionFormat;
use crate::solver::StartKind;
use crate::track::TrackerOptions;
use clap::Args;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// The CPU for a solve it finishes before the GPU would start (estimated from the
    /// paths and the homotopy's size), else the GPU when one is present, else the CPU (with
    /// a notice).
    Auto,
    Cpu,
    Cuda,
}

#[derive(Args, Debug)]
pub struct SolveArgs {
    /// System file (YAML, PHCpack, Bertini or Hom4PS format) or a family name such as katsura6.
    pub file: std::path::PathBuf,
    /// Start system (auto: total degree or m-hom where their path counts are within 1.25
    /// of the stable mixed volume, polyhedral otherwise; the summary says why).
    #[arg(long, value_enum, default_value = "auto")]
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
    /// Write the distinct finite solutions (with multiplicities) at the end, in --format.
    #[arg(long)]
    pub solutions: Option<std::path::PathBuf>,
    /// Format of the -o and --solutions files: jsonl, or phc and bertini (finite solutions
    /// only, in PHCpack's solution list and Bertini's finite_solutions layout).
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: SolutionFormat,
    /// Where paths are tracked.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendKind,
    /// GPU to use with `--backend cuda|auto`.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Track on several devices at once, each drawing batches of paths from one queue:
    /// all (every GPU), a count N (GPUs 0 to N-1), or GPU numbers such as 0,1; with
    /// --backend cpu, a count of CPU workers sharing --threads. The answer is that of one
    /// device (docs/scale-out.md).
    #[arg(long, value_name = "all|N|I,J", conflicts_with = "device")]
    pub devices: Option<String>,
    /// How the CUDA backend forms the extended Jacobian (a tuning switch).
    #[arg(long, value_enum, default_value = "fused", hide = true)]
    pub cuda_eval: EvalMethod,
    /// How the CUDA backend solves for the Euler/Newton directions: gj (batched
    /// Gauss–Jordan kernel) or qr (batched Householder QR in cuBLAS); a tuning switch.
    #[arg(long, value_enum, default_value = "gj", hide = true)]
    pub cuda_solve: SolveMethod,
    /// CPU threads (0: all cores; more than the cores is capped at the cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Track whole paths in resident slots: on the GPU the whole step loop stays on the
    /// device and only endgame-zone trouble comes back to the host (default on the GPU;
    /// `false` tracks round by round, one batched direction solve per step); on the CPU the
    /// same step machine runs on the host (default off; for comparisons).
    #[arg(long, action = clap::ArgAction::Set, hide = true)]
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
    /// bound; default 1e10 on the CPU, 1e12 on a GPU).
    #[arg(long)]
    pub max_work: Option<f64>,
    /// Predictor error target before the endgame zone (default 1e-4): smaller is slower
    /// and safer against path jumping.
    #[arg(long, hide = true)]
    pub eta_target: Option<f64>,
    /// Predictor error target in the endgame zone (default 1e-6).
    #[arg(long, hide = true)]
    pub eta_target_endgame: Option<f64>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    /// More of the summary: the cells of the lifting, re-tracked paths, where the seconds
    /// went.
    #[arg(short, long)]
    pub verbose: bool,
    /// Print the distinct finite solutions as a table after the summary (as `pathtrack
    /// show` prints a --solutions file).
    #[arg(long)]
    pub print: bool,
    /// Prove the nonsingular solutions in interval arithmetic (Krawczyk test): adds
    /// certified, certified_distinct and certified_real to the summary, and certified and
    /// certified_radius to each line of -o.
    #[arg(long)]
    pub certify: bool,
    #[command(flatten)]
    pub family: FamilyArgs,
    /// A witness file of the system (from `pathtrack witness -o`): singular solutions on its
    /// positive-dimensional components are no isolated solutions, and are counted as
    /// positive_dimensional instead (membership test, docs/witness.md).
    #[arg(long)]
    pub witness: Option<std::path::PathBuf>,
    /// Track the K-th of N slices of the paths (path i when i mod N = K), first pass
    /// only, into -o; `pathtrack merge` combines the N files into the whole run's summary
    /// (docs/scale-out.md).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Continue the run whose -o file exists (same system, seed and options, checked from
    /// its header line): only paths without a line are tracked, then recovery runs over
    /// all of them. An absent or empty file starts the run.
    #[arg(long)]
    pub resume: bool,
}

/// The backend `a` asks for (`threads` host threads) and its tracker options for a system
/// of `n` variables, with `--batch` and the hidden step targets applied.
pub fn backend_and_tracker(
    a: &SolveArgs,
    threads: usize,
    n: usize,
) -> Result<(Box<dyn Backend>, crate::track::TrackerOptions)> {
    backend_and_tracker_on(a, a.backend, a.device, threads, n)
}

/// [`backend_and_tracker`] on backend `kind`, GPU `device`.
pub fn backend_and_tracker_on(
    a: &SolveArgs,
    kind: BackendKind,
    device: usize,
    threads: usize,
    n: usize,
) -> Result<(Box<dyn Backend>, crate::track::TrackerOptions)> {
    let backend = make_backend(
        kind,
        device,
        a.cuda_eval,
        a.cuda_solve,
        threads,
        a.resident,
        a.batch,
    )?;
    let batch = a.batch.map(|b| super::resources::batch(b, n));
    let mut tracker = tracker_for(backend.as_ref(), batch)?;
    for (v, name, field) in [
        (a.eta_target, "--eta-target", &mut tracker.eta_target),
        (
            a.eta_target_endgame,
            "--eta-target-endgame",
            &mut tracker.eta_target_endgame,
        ),
    ] {
        if let Some(v) = v {
            if !(v > 0.0 && v < 1.0) {
                return Err(Error::Usage(format!("{name} must lie in (0, 1), not {v}")));
            }
            *field = v;
        }
    }
    Ok((backend, tracker))
}

/// The options of `solve` for parameters and given start solutions.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct FamilyArgs {
    /// Parameter values of a system with parameters, e.g. "a=1.5, b=2-3i" (every
    /// parameter once). Without --from the system is solved there; with --from the start
    /// solutions are tracked there. Without --params and --params-file a system with
    /// parameters is solved at random complex values, written into the output.
    #[arg(long)]
    pub params: Option<String>,
    /// A CSV file of targets: a header line of parameter names, then one target per line,
    /// complex values as 1.5, -2i or 2-3i. Tracks the start solutions (--from, or those of
    /// a random member solved first) to every target; each line of -o carries "target"
    /// (the 0-based row) and the summary counts per target.
    #[arg(long)]
    pub params_file: Option<std::path::PathBuf>,
    /// Start solutions: a JSON Lines file of an earlier run (-o or --solutions); its
    /// nonsingular solutions start the paths. For a system with parameters they carry the
    /// parameter values they were computed at.
    #[arg(long)]
    pub from: Option<std::path::PathBuf>,
    /// A start system G (same variables) for the homotopy γ(1−t)·G + t·F, whose solutions
    /// --from gives.
    #[arg(long)]
    pub start_system: Option<std::path::PathBuf>,
}

impl FamilyArgs {
    pub fn any(&self) -> bool {
        self.params.is_some()
            || self.params_file.is_some()
            || self.from.is_some()
            || self.start_system.is_some()
    }
}

/// Default paths per round on the GPU (one batched direction solve per round).
pub const CUDA_BATCH: usize = crate::backend::GPU_BATCH;

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
/// `auto` decides per solve ([`crate::backend::AutoBackend`]): the CPU for a solve it
/// finishes before the GPU would start, else the GPU, falling back to the CPU with a
/// one-line notice on stderr. `resident`: resident slots ([`crate::track::resident`];
/// `None`: on for the GPU, off for the CPU). `batch`: `--batch`, if given.
#[allow(clippy::too_many_arguments)]
pub fn make_backend(
    kind: BackendKind,
    device: usize,
    eval: EvalMethod,
    solve: SolveMethod,
    threads: usize,
    resident: Option<bool>,
    batch: Option<usize>,
) -> Result<Box<dyn Backend>> {
    let cuda = move || -> Result<Box<dyn Backend>> {
        let mut b = CudaBackend::new(device)?;
        b.set_eval_method(eval);
        b.set_resident(resident.unwrap_or(true));
        b.set_solve_method(solve);
        Ok(Box::new(b))
    };
    let cpu = move || -> Result<Box<dyn Backend>> {
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
        BackendKind::Auto => Ok(Box::new(crate::backend::AutoBackend::new(
            Box::new(cpu),
            Box::new(cuda),
            threads,
            batch,
        ))),
    }
}

impl SolveArgs {
    /// True when the run will track on the host: `--backend cpu`, or `auto` without
    /// `--devices` on a machine with no GPU driver.
    pub fn on_cpu(&self) -> bool {
        self.backend == BackendKind::Cpu
            || (self.backend == BackendKind::Auto
                && self.devices.is_none()
                && !crate::gpu::device::driver_present())
    }

    /// The bound on the run's estimated work ([`crate::solver::limits::work_estimate`]):
    /// `--max-work` as given (0: none), else the default of the backend that will track
    /// ([`crate::solver::limits::default_max_work`]). A negative or NaN value is a usage
    /// error.
    pub fn max_work_limit(&self) -> crate::error::Result<Option<f64>> {
        match self.max_work {
            Some(w) if w.is_nan() || w < 0.0 => Err(crate::error::Error::Usage(format!(
                "--max-work must be a non-negative number, not {w}"
            ))),
            Some(w) => Ok((w > 0.0).then_some(w)),
            None => Ok(Some(crate::solver::limits::default_max_work(
                !self.on_cpu(),
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        solve: SolveArgs,
    }

    fn args(extra: &[&str]) -> SolveArgs {
        let mut argv = vec!["pathtrack", "cyclic5"];
        argv.extend_from_slice(extra);
        Cmd::try_parse_from(argv).unwrap().solve
    }

    /// The work bound defaults to the tracking backend's: a GPU run's is a hundred times the
    /// CPU's, so that cyclic-14 (2.3e10) runs as typed on a GPU; a given bound is kept, 0 is
    /// none, and a negative or NaN bound is a usage error.
    #[test]
    fn the_work_bound_defaults_to_the_backends() {
        use crate::solver::limits::{DEFAULT_MAX_WORK, DEFAULT_MAX_WORK_GPU};
        assert_eq!(
            args(&["--backend", "cpu"]).max_work_limit().unwrap(),
            Some(DEFAULT_MAX_WORK)
        );
        assert_eq!(
            args(&["--backend", "cuda"]).max_work_limit().unwrap(),
            Some(DEFAULT_MAX_WORK_GPU)
        );
        assert!(DEFAULT_MAX_WORK_GPU > 2.3e10 && DEFAULT_MAX_WORK < 2.3e10);
        assert_eq!(
            args(&["--max-work", "5e9"]).max_work_limit().unwrap(),
            Some(5e9)
        );
        assert_eq!(args(&["--max-work", "0"]).max_work_limit().unwrap(), None);
        for bad in ["--max-work=-1", "--max-work=NaN"] {
            let e = args(&[bad]).max_work_limit().unwrap_err();
            assert!(matches!(e, crate::error::Error::Usage(_)), "{bad}");
        }
    }
}
