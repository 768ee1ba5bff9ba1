//! `pathtrack solve FILE [--start …] [--seed S] [--json] [-o sols.jsonl]`.

use super::solve_args::{backend_and_tracker, backend_and_tracker_on, BackendKind, SolveArgs};
use crate::backend::Backend;
use crate::certify::{summarize, BatchCertifier, Certificate, Certifier, CertifySummary};
use crate::error::{Error, Result};
use crate::report::formats::write_solutions_as;
use crate::report::progress::{Phase, Progress};
use crate::report::summary_table;
use crate::solver::{solve, Observer, SolveOptions, StartKind};

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
    let max_work = a.max_work_limit()?;
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
            max_work,
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
    // The first lines of a large run (stderr): the total degree now, the paths and an
    // estimate of their time when the first pass starts.
    let on_cpu = a.on_cpu();
    let announce = (!a.quiet).then(|| super::announce::Announce::new(&system, threads, on_cpu));
    if announce.is_some() && opts.given.is_none() {
        let needs_mv = matches!(a.start, StartKind::Auto | StartKind::Polyhedral);
        if let Some(line) = super::announce::Announce::start(&system, needs_mv, a.torus) {
            eprintln!("{line}");
        }
    }
    struct Cli<'s> {
        announce: Option<super::announce::Announce>,
        progress: Progress,
        writer: super::line_writer::LineWriter,
        certify: Option<PathCertificates<'s>>,
        over: Option<&'s crate::witness::excess::Overdetermined>,
    }
    impl Observer for Cli<'_> {
        fn phase(&mut self, phase: Phase) {
            if let (Phase::FirstPass { paths }, Some(a)) = (&phase, &self.announce) {
                if let Some(line) = a.first_pass(*paths) {
                    eprintln!("{line}");
                }
            }
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
        /// Queues `e`'s line; it is written and counted for a signal's summary on the
        /// writer's thread ([`super::line_writer`]).
        fn write(
            &mut self,
            e: &crate::post::Endpoint,
            mut keys: serde_json::Map<String, serde_json::Value>,
        ) -> Result<()> {
            if let Some(o) = self.over {
                keys.extend(o.endpoint_keys(e));
            }
            self.writer.write_with(e, keys)
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
        announce,
        progress: Progress::new(a.quiet),
        writer: super::line_writer::LineWriter::start(writer)?,
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
    obs.writer.finish()?.finish()?;
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
        if a.verbose {
            print!("{}", crate::report::summary_details(&summary));
        }
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
        if a.print {
            let records: Vec<serde_json::Value> =
                summary.solutions.iter().map(|s| s.line()).collect();
            print!("\n{}", super::show::table(&records, &system.variables, 6));
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
    /// Per path: its last endpoint was tested, and its certificate.
    last: std::collections::BTreeMap<u64, (bool, Option<Certificate>)>,
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
    /// certified, `certify_undecided` when tested and not), recording its certificate as
    /// its path's last.
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
        let tested = Self::tested(e);
        if let (None, Some(x)) = (&cert, tested) {
            let clock = std::time::Instant::now();
            let why = self.certifier.undecided_reason(x);
            self.seconds += clock.elapsed().as_secs_f64();
            m.insert("certify_undecided".into(), why.into());
        }
        self.last.insert(e.path, (tested.is_some(), cert));
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
        let tested = self.last.values().filter(|(t, _)| *t).count() as u64;
        let c = summarize(self.last.values().map(|(_, c)| c.as_ref())).with_tested(tested);
        let on = self.device.as_ref().map_or("cpu".into(), |d| d.name());
        (c, self.seconds + clock.elapsed().as_secs_f64(), on)
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
        let moved = &keys_held.last().unwrap().1;
        assert_eq!(moved["certified"], false);
        assert!(moved["certify_undecided"]
            .as_str()
            .is_some_and(|w| w.contains("moves the point")));
        for ((e, k), (f, l)) in keys_held.iter().zip(eps.iter().zip(&keys_one)) {
            assert_eq!(e.path, f.path);
            assert_eq!(k, l, "path {}", e.path);
        }
        let (a, _, on_a) = one.summary();
        let (b, _, on_b) = held.summary();
        assert_eq!(a, b);
        assert_eq!((a.certified, a.uncertified), (15, 1), "{a:?}");
        assert_eq!((on_a.as_str(), on_b.as_str()), ("cpu", "cpu"));
    }
}
