//! `pathtrack solve FILE [--start …] [--seed S] [--json] [-o sols.jsonl]`.

use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::{CudaBackend, EvalMethod, SolveMethod};
use crate::backend::Backend;
use crate::certify::{summarize, BatchCertifier, Certificate, Certifier, CertifySummary};
use crate::error::{Error, Result};
use crate::report::formats::{write_solutions_as, EndpointWriter, SolutionFormat};
use crate::report::progress::{Phase, Progress};
use crate::report::summary_table;
use crate::solver::{solve, Observer, SolveOptions, StartKind};
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
    /// of the mixed volume, polyhedral otherwise; the summary says why).
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
    /// Prove the nonsingular solutions in interval arithmetic (Krawczyk test): adds
    /// certified, certified_distinct and certified_real to the summary, and certified and
    /// certified_radius to each line of -o.
    #[arg(long)]
    pub certify: bool,
    #[command(flatten)]
    pub family: crate::params::cli::FamilyArgs,
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
fn backend_and_tracker_on(
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

pub fn run(a: &SolveArgs) -> Result<i32> {
    // Systems with parameters and given start solutions: docs/parameters.md.
    if let Some(code) = crate::params::cli::run(a)? {
        return Ok(code);
    }
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
    let loaded = crate::system::parse::load_named_rectangular(&a.file)?;
    // More equations than variables: n random combinations are solved (docs/witness.md).
    let over = crate::witness::excess::Overdetermined::new(
        &loaded,
        a.seed,
        &a.file.display().to_string(),
    )?;
    let witness = match &a.witness {
        Some(w) => Some(crate::witness::file::WitnessFile::read(w, &loaded)?),
        None => None,
    };
    let witness = witness.map(|w| (w, loaded.clone()));
    let system = over.as_ref().map_or(loaded, |o| o.square.clone());
    crate::system::parse::rounding::coefficient_warnings(&system)
        .iter()
        .for_each(|w| eprintln!("warning: {w}"));
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
    opts.plan.shard = super::checkpoint::shard(a)?;
    opts.plan.first_pass_only = opts.plan.shard.is_some();
    let header = super::checkpoint::header_for(a, &system, &opts);
    // `--devices`: one worker per device; the first device's backend is opened here, so that
    // a missing GPU fails before any output is written.
    let devices = match &a.devices {
        Some(d) => Some(devices_of(a, d, threads)?),
        None => None,
    };
    let (mut backend, tracker) = match &devices {
        None => backend_and_tracker(a, threads, system.n())?,
        Some((kind, w)) => {
            backend_and_tracker_on(a, *kind, w[0].ordinal, w[0].threads, system.n())?
        }
    };
    opts.tracker = tracker;
    struct Cli<'s> {
        progress: Progress,
        writer: EndpointWriter,
        certify: Option<PathCertificates<'s>>,
        over: Option<&'s crate::witness::excess::Overdetermined>,
    }
    impl Observer for Cli<'_> {
        fn phase(&mut self, phase: Phase) {
            super::interrupt::phase(&phase);
            self.progress.set_phase(phase);
        }
        fn endpoint(&mut self, e: &crate::post::Endpoint) -> Result<()> {
            self.progress.endpoint(e.path, e.attempt);
            if let Some(c) = self.certify.as_mut().filter(|c| c.batched()) {
                if c.hold(e) {
                    return self.flush_certified();
                }
                return Ok(());
            }
            let keys = match &mut self.certify {
                Some(c) => c.add(e),
                None => Default::default(),
            };
            self.write(e, keys)
        }
    }
    impl Cli<'_> {
        fn write(
            &mut self,
            e: &crate::post::Endpoint,
            mut keys: serde_json::Map<String, serde_json::Value>,
        ) -> Result<()> {
            super::interrupt::endpoint(e, || {
                if let Some(o) = self.over {
                    keys.extend(o.endpoint_keys(e));
                }
                self.writer.write_with(e, keys)
            })
        }
        /// Certifies the endpoints held for the device's batch and writes them.
        fn flush_certified(&mut self) -> Result<()> {
            let Some(c) = self.certify.as_mut() else {
                return Ok(());
            };
            for (e, keys) in c.certify_held()? {
                self.write(&e, keys)?;
            }
            Ok(())
        }
    }
    #[cfg(feature = "mpi")]
    if let Some(code) =
        crate::distributed::mpi::run_if_launched(a, &system, &opts, backend.as_mut(), &header)?
    {
        return Ok(code);
    }
    let (writer, done) = super::checkpoint::open_output(a, &header, &system.variables)?;
    let resumed = done.as_ref().map_or(0, |d| d.len() as u64);
    opts.plan.done = done;
    super::interrupt::install(a.json, a.output.as_deref(), resumed)?;
    let mut obs = Cli {
        progress: Progress::new(a.quiet),
        writer,
        certify: match a.certify {
            true => Some(PathCertificates::new(&system, backend.as_ref())),
            false => None,
        },
        over: over.as_ref(),
    };
    let mut summary = match &devices {
        None => solve(&system, &opts, backend.as_mut(), &mut obs)?,
        Some((kind, workers)) => {
            let make = |w: &crate::distributed::devices::Worker| {
                backend_and_tracker_on(a, *kind, w.ordinal, w.threads, system.n()).map(|b| b.0)
            };
            use crate::distributed::devices::{min_batch, solve_on_devices};
            let min = min_batch(*kind == BackendKind::Cuda, opts.tracker.batch);
            let (summary, first) =
                solve_on_devices(&system, &opts, workers, min, backend, &make, &mut obs)?;
            backend = first;
            summary
        }
    };
    let excess = over.as_ref().map(|o| o.remove_excess(&mut summary));
    if let Some((w, original)) = &witness {
        crate::witness::label::remove_positive_dimensional(
            original,
            w,
            &mut summary,
            backend.as_mut(),
            &opts.tracker,
        )?;
    }
    obs.flush_certified()?;
    obs.progress.finish();
    obs.writer.finish()?;
    if let Some(path) = &a.solutions {
        write_solutions_as(path, a.format, &summary.solutions, &system.variables)?;
    }
    let certified = obs.certify.map(|c| c.summary());
    if a.json {
        /// The summary with the certification counts and their seconds.
        #[derive(serde::Serialize)]
        struct WithCertification<'a> {
            #[serde(flatten)]
            summary: &'a crate::report::Summary,
            #[serde(flatten)]
            counts: CertifySummary,
            certify_seconds: f64,
            certify_backend: String,
        }
        let line = match certified {
            None => serde_json::to_string(&summary),
            Some((counts, certify_seconds, certify_backend)) => {
                serde_json::to_string(&WithCertification {
                    summary: &summary,
                    counts,
                    certify_seconds,
                    certify_backend,
                })
            }
        };
        let mut line = line.map_err(|e| Error::Internal(e.to_string()))?;
        if let (Some(k), Some(o)) = (excess, &over) {
            // Two keys appended to the object, after the summary's own.
            line.pop();
            let equations = o.original.equations.len();
            line.push_str(&format!(",\"equations\":{equations},\"excess\":{k}}}"));
        }
        println!("{line}");
    } else {
        print!("{}", summary_table(&summary));
        if let Some(k) = excess {
            print!(
                "{}",
                crate::report::table_row("excess (solve R·F only)", &k.to_string())
            );
        }
        if let Some((c, secs, on)) = &certified {
            print!(
                "{}{}",
                crate::cli::certify::certification_rows(c),
                crate::report::table_row("  certify seconds", &format!("{secs:.3} ({on})"))
            );
        }
    }
    Ok(0)
}

/// The backend and the workers of `--devices d`: GPUs for `--backend cuda` and `auto`,
/// CPU workers for `--backend cpu`, sharing `threads`.
fn devices_of(
    a: &SolveArgs,
    d: &str,
    threads: usize,
) -> Result<(BackendKind, Vec<crate::distributed::devices::Worker>)> {
    use crate::distributed::devices::{workers, DeviceList};
    let list = DeviceList::parse(d)?;
    let kind = match a.backend {
        BackendKind::Cpu => BackendKind::Cpu,
        BackendKind::Cuda | BackendKind::Auto => BackendKind::Cuda,
    };
    let w = workers(&list, kind == BackendKind::Cuda, threads).map_err(|e| match e {
        Error::Cuda(m) if a.backend == BackendKind::Cuda => {
            Error::Cuda(format!("--backend cuda: {m}"))
        }
        Error::Cuda(m) => Error::Cuda(format!("--devices {d}: {m}")),
        other => other,
    })?;
    Ok((kind, w))
}

/// `solve --certify`: the Krawczyk test on each nonsingular endpoint (a re-tracked path's
/// last endpoint replaces its earlier one), and the time it took. On the CPU each endpoint
/// is certified as it arrives; where the backend offers a device certifier
/// ([`Backend::certifier`], `--backend cuda`), endpoints are held and certified
/// [`crate::certify::cuda::CHUNK`] at a time, and written to -o after their batch (so an
/// interrupted run's -o lacks the held ones, which `--resume` tracks again).
struct PathCertificates<'s> {
    certifier: Certifier<'s>,
    device: Option<Box<dyn BatchCertifier + 's>>,
    held: Vec<crate::post::Endpoint>,
    last: std::collections::BTreeMap<u64, Option<Certificate>>,
    seconds: f64,
}

impl<'s> PathCertificates<'s> {
    /// The backend's device certifier when it has one; the CPU when it has none or it does
    /// not start (a notice on stderr).
    fn new(system: &'s crate::system::System, backend: &dyn Backend) -> Self {
        let clock = std::time::Instant::now();
        let device = match backend.certifier(system) {
            Ok(d) => d,
            Err(e) => {
                eprintln!(
                    "pathtrack: certifying on the CPU: the device certifier did not start ({e})"
                );
                None
            }
        };
        let device = device.map(|d| d as Box<dyn BatchCertifier + 's>);
        let mut c = Self::with_device(system, device);
        c.seconds = clock.elapsed().as_secs_f64();
        c
    }

    /// Certifies on `device` in held batches, or on the CPU as endpoints arrive (`None`).
    fn with_device(
        system: &'s crate::system::System,
        device: Option<Box<dyn BatchCertifier + 's>>,
    ) -> Self {
        PathCertificates {
            certifier: Certifier::new(system),
            device,
            held: Vec::new(),
            last: Default::default(),
            seconds: 0.0,
        }
    }

    /// Endpoints are held for a device batch.
    fn batched(&self) -> bool {
        self.device.is_some()
    }

    /// Holds `e` for the next batch; true when the batch is full.
    fn hold(&mut self, e: &crate::post::Endpoint) -> bool {
        self.held.push(e.clone());
        self.held.len() >= crate::certify::cuda::CHUNK
    }

    /// The keys of one endpoint's JSON line (`certified`, and `certified_radius` when
    /// certified), recording its certificate as its path's last.
    fn keys(
        &mut self,
        e: &crate::post::Endpoint,
        cert: Option<Certificate>,
    ) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("certified".into(), cert.is_some().into());
        if let Some(c) = &cert {
            m.insert("certified_radius".into(), c.radius.into());
        }
        self.last.insert(e.path, cert);
        m
    }

    /// The finite nonsingular endpoint's coordinates (the points tested).
    fn tested(e: &crate::post::Endpoint) -> Option<&Vec<num_complex::Complex64>> {
        e.coordinates
            .as_ref()
            .filter(|_| e.status == crate::post::Status::Nonsingular)
    }

    /// Certifies `e` on the CPU; returns the keys of its JSON line.
    fn add(&mut self, e: &crate::post::Endpoint) -> serde_json::Map<String, serde_json::Value> {
        let clock = std::time::Instant::now();
        let cert = Self::tested(e).and_then(|x| self.certifier.certify(x));
        self.seconds += clock.elapsed().as_secs_f64();
        self.keys(e, cert)
    }

    /// Certifies the held endpoints as one device batch; returns them with their keys.
    #[allow(clippy::type_complexity)]
    fn certify_held(
        &mut self,
    ) -> Result<
        Vec<(
            crate::post::Endpoint,
            serde_json::Map<String, serde_json::Value>,
        )>,
    > {
        let held = std::mem::take(&mut self.held);
        let Some(device) = self.device.as_mut() else {
            return Ok(Vec::new());
        };
        if held.is_empty() {
            return Ok(Vec::new());
        }
        let clock = std::time::Instant::now();
        let points: Vec<Option<Vec<num_complex::Complex64>>> =
            held.iter().map(|e| Self::tested(e).cloned()).collect();
        let certs = device.certify_batch(&points)?;
        self.seconds += clock.elapsed().as_secs_f64();
        Ok(held
            .into_iter()
            .zip(certs)
            .map(|(e, c)| {
                let keys = self.keys(&e, c);
                (e, keys)
            })
            .collect())
    }

    /// The counts over the final endpoints, the seconds spent certifying, and where.
    fn summary(self) -> (CertifySummary, f64, String) {
        let clock = std::time::Instant::now();
        let c = summarize(self.last.values().map(|c| c.as_ref()));
        let on = self.device.as_ref().map_or("cpu".into(), |d| d.name());
        (c, self.seconds + clock.elapsed().as_secs_f64(), on)
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

#[cfg(test)]
mod certify_tests {
    use super::*;

    /// Endpoints held for a device batch (here the CPU certifier as the batch) get the keys
    /// and counts that certifying each on arrival gives; a re-tracked path's last endpoint
    /// replaces its first.
    #[test]
    fn held_batches_give_the_keys_and_counts_of_endpoints_certified_on_arrival() {
        let sys = crate::system::parse::load_named(std::path::Path::new("katsura4")).unwrap();
        let (_, mut eps) = crate::solver::solve_cpu(&sys, StartKind::Polyhedral, 1).unwrap();
        // Path 0 again, moved off its root: its last endpoint is no longer certified.
        let mut again = eps[0].clone();
        if let Some(x) = again.coordinates.as_mut() {
            x[0] += 1e-3;
        }
        again.status = crate::post::Status::Nonsingular;
        eps.push(again);
        let mut one = PathCertificates::with_device(&sys, None);
        let keys_one: Vec<_> = eps.iter().map(|e| one.add(e)).collect();
        let device: Box<dyn BatchCertifier> = Box::new(Certifier::new(&sys));
        let mut held = PathCertificates::with_device(&sys, Some(device));
        assert!(held.batched());
        let mut keys_held = Vec::new();
        for (i, e) in eps.iter().enumerate() {
            held.hold(e);
            if i % 5 == 4 {
                keys_held.extend(held.certify_held().unwrap());
            }
        }
        keys_held.extend(held.certify_held().unwrap());
        assert_eq!(keys_held.len(), eps.len());
        for ((e, k), (f, l)) in keys_held.iter().zip(eps.iter().zip(&keys_one)) {
            assert_eq!(e.path, f.path);
            assert_eq!(k, l, "path {}", e.path);
        }
        let (a, _, on_a) = one.summary();
        let (b, _, on_b) = held.summary();
        assert_eq!(a, b);
        assert_eq!(a.certified, 15, "{a:?}");
        assert_eq!((on_a.as_str(), on_b.as_str()), ("cpu", "cpu"));
    }
}
