//! `pathtrack certify SOLS.jsonl --system F [--json]`: proves, in interval arithmetic, which
//! solutions of a `solve -o` (or `--solutions`) file are approximate solutions of `F` with a
//! unique root nearby, how many distinct roots they hold and how many of those are real
//! (docs/certification.md).

use crate::certify::{certify_points, summarize, CertifySummary};
use crate::error::{Error, InputError, Result};
use crate::post::Status;
use crate::report::records::coordinates;
use crate::report::table_row;
use clap::Args;
use num_complex::Complex64 as C64;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct CertifyArgs {
    /// Solutions as JSON Lines: the file `solve -o` writes (the last line of each path
    /// counts) or the one `solve --solutions` writes.
    pub solutions: PathBuf,
    /// The system the solutions belong to (YAML, PHCpack, Bertini or Hom4PS format, or a
    /// family name such as katsura6), as solved.
    #[arg(long)]
    pub system: PathBuf,
    /// Print the counts as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// CPU threads (0: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Where the Krawczyk tests run: the CPU's cores, or one batch on a GPU (cuda). The
    /// distinct and real counts are taken on the CPU in both cases.
    #[arg(long, value_enum, default_value = "cpu")]
    pub backend: CertifyBackend,
    /// GPU to use with `--backend cuda`.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
}

/// Where `certify` runs the Krawczyk tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CertifyBackend {
    Cpu,
    Cuda,
}

/// What `certify` prints.
#[derive(Debug, Serialize)]
struct Report {
    system: String,
    /// Solutions read (final lines of paths, or distinct solutions).
    points: u64,
    /// Of those, finite nonsingular ones (or lines without a status): the ones tested.
    tested: u64,
    #[serde(flatten)]
    counts: CertifySummary,
    /// "cpu" or "cuda".
    backend: String,
    seconds: f64,
}

/// The points of a solutions file, in order: for `solve -o` files the last line of each
/// path (re-tracked paths have several), for other files every line. A point is `None` when
/// it is not to be tested: no coordinates, or a status other than `nonsingular`.
pub fn read_points(path: &Path, n: usize) -> Result<Vec<Option<Vec<C64>>>> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::from(InputError::new(&name, format!("cannot read file: {e}"))))?;
    let mut by_path: Vec<(Option<u64>, Option<Vec<C64>>)> = Vec::new();
    let mut slot = std::collections::HashMap::<u64, usize>::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |msg: String| Error::from(InputError::new(&name, msg).at(i + 1, 1));
        let v: Value =
            serde_json::from_str(line).map_err(|e| at(format!("not a JSON object: {e}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| at("not a JSON object".into()))?;
        if obj.contains_key("pathtrack_run") {
            continue; // the run's header line (crate::solver::resume::RunHeader)
        }
        let status = match obj.get("status") {
            None => None,
            Some(s) => Some(
                [
                    Status::Nonsingular,
                    Status::Singular,
                    Status::AtInfinity,
                    Status::Failed,
                    Status::OutsideTorus,
                    Status::PositiveDimensional,
                ]
                .into_iter()
                .find(|st| serde_json::to_value(st).ok().as_ref() == Some(s))
                .ok_or_else(|| at(format!("unknown status {s}")))?,
            ),
        };
        let coords = match obj.get("coordinates") {
            None => return Err(at("no \"coordinates\" key".into())),
            Some(Value::Null) => None,
            Some(c) => Some(coordinates(c, n).map_err(at)?),
        };
        let tested = coords.filter(|_| matches!(status, None | Some(Status::Nonsingular)));
        let path_index = match obj.get("path") {
            None => None,
            Some(p) => Some(
                p.as_u64()
                    .ok_or_else(|| at(format!("\"path\" is not a path index: {p}")))?,
            ),
        };
        match path_index.and_then(|p| slot.get(&p).copied()) {
            Some(k) => by_path[k].1 = tested,
            None => {
                if let Some(p) = path_index {
                    slot.insert(p, by_path.len());
                }
                by_path.push((path_index, tested));
            }
        }
    }
    Ok(by_path.into_iter().map(|(_, x)| x).collect())
}

pub fn run(a: &CertifyArgs) -> Result<i32> {
    let system = crate::system::parse::load_named(&a.system)?;
    let points = read_points(&a.solutions, system.n())?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads)
        .build()
        .map_err(|e| Error::Internal(format!("thread pool: {e}")))?;
    let clock = std::time::Instant::now();
    let counts = match a.backend {
        CertifyBackend::Cpu => pool.install(|| certify_points(&system, &points)).1,
        CertifyBackend::Cuda => {
            let mut gpu = crate::certify::cuda::GpuCertifier::new(a.device, &system)?;
            let certs = gpu.certify_points(&points)?;
            pool.install(|| summarize(certs.iter().map(|c| c.as_ref())))
        }
    };
    let tested = points.iter().filter(|p| p.is_some()).count() as u64;
    let report = Report {
        system: system.name.clone(),
        points: points.len() as u64,
        tested,
        counts: counts.with_tested(tested),
        backend: format!("{:?}", a.backend).to_lowercase(),
        seconds: clock.elapsed().as_secs_f64(),
    };
    if a.json {
        println!(
            "{}",
            serde_json::to_string(&report).map_err(|e| Error::Internal(e.to_string()))?
        );
    } else {
        print!(
            "pathtrack certify: {} ({} variables)\n{}",
            report.system,
            system.n(),
            [
                ("solutions read", report.points.to_string()),
                ("  nonsingular (tested)", report.tested.to_string()),
                ("backend", report.backend.clone()),
            ]
            .iter()
            .map(|(k, v)| table_row(k, v))
            .collect::<String>()
                + &certification_rows(&report.counts)
                + &table_row("seconds", &format!("{:.3}", report.seconds))
        );
    }
    Ok(0)
}

/// The certification counts as summary-table rows (`certify` and `solve --certify`).
pub fn certification_rows(c: &CertifySummary) -> String {
    let mut t = table_row("certified", &c.certified.to_string());
    t += &table_row("  distinct roots", &c.certified_distinct.to_string());
    t += &table_row("  real roots", &c.certified_real.to_string());
    if c.certified_double_double > 0 {
        t += &table_row(
            "  in double-double",
            &format!(
                "{} (beyond the double-precision test)",
                c.certified_double_double
            ),
        );
    }
    if c.certified_unresolved > 0 {
        t += &table_row(
            "  unresolved groups",
            &format!(
                "{} (overlapping boxes not proven to hold one root)",
                c.certified_unresolved
            ),
        );
    }
    if c.uncertified > 0 {
        t += &table_row(
            "not certified",
            &format!(
                "{} tested points not proven (each one's solve -o line says why: certify_undecided)",
                c.uncertified
            ),
        );
    }
    t
}

/// `pathtrack bench certify`: for each system a solve on `backend`, then the Krawczyk test
/// of its nonsingular endpoints on the CPU (`threads`; skipped with `no_cpu`) and, where the
/// backend offers a device certifier ([`crate::backend::Backend::certifier`]), as device
/// batches (its kernel compiled before the clock starts; the compilation is reported
/// apart). Each certification's seconds include the proven counts (taken on the CPU), and
/// its share is of the solve's seconds. `agree`: endpoints with the same verdict on both.
#[allow(clippy::too_many_arguments)]
pub fn bench(
    systems: &[String],
    threads: usize,
    seed: u64,
    start: crate::solver::StartKind,
    backend: &mut dyn crate::backend::Backend,
    tracker: &crate::track::TrackerOptions,
    no_cpu: bool,
) -> Result<()> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Internal(format!("thread pool: {e}")))?;
    println!(
        "# pathtrack bench certify (solve on {}, {} CPU threads for the CPU certification, seed {seed})",
        backend.name(),
        pool.current_num_threads()
    );
    println!(
        "{:<12} {:>9} {:>9} {:>9} {:>7} {:>7} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9}",
        "system",
        "nonsing",
        "solve_s",
        "cpu_s",
        "cpu_%",
        "device",
        "dev_s",
        "dev_%",
        "certified",
        "distinct",
        "real",
        "agree"
    );
    for name in systems {
        let sys = crate::system::parse::load_named(Path::new(name))?;
        let opts = crate::solver::SolveOptions {
            seed,
            start,
            threads,
            tracker: tracker.clone(),
            ..Default::default()
        };
        let (s, eps) = crate::solver::solve_collect(&sys, &opts, backend)?;
        let points: Vec<Option<Vec<C64>>> = eps
            .iter()
            .map(|e| {
                e.coordinates
                    .clone()
                    .filter(|_| e.status == Status::Nonsingular)
            })
            .collect();
        let tested = points.iter().flatten().count();
        let timed = |f: &mut dyn FnMut() -> Result<Vec<Option<crate::certify::Certificate>>>| {
            let clock = std::time::Instant::now();
            let certs = f()?;
            let counts = pool.install(|| summarize(certs.iter().map(|c| c.as_ref())));
            Ok::<_, Error>((certs, counts, clock.elapsed().as_secs_f64()))
        };
        let cpu = match no_cpu {
            true => None,
            false => Some(timed(&mut || {
                Ok(pool.install(|| crate::certify::Certifier::new(&sys).certify_all(&points)))
            })?),
        };
        let compile = std::time::Instant::now();
        let mut device = backend.certifier(&sys)?;
        let compile_s = compile.elapsed().as_secs_f64();
        let dev = match device.as_mut() {
            Some(d) => Some((d.name(), timed(&mut || d.certify_batch(&points))?)),
            None => None,
        };
        let share = |t: f64| format!("{:.1}", 100.0 * t / s.seconds);
        let counts = dev
            .as_ref()
            .map(|d| d.1 .1)
            .or(cpu.as_ref().map(|c| c.1))
            .unwrap_or_default();
        let agree = match (&cpu, &dev) {
            (Some(c), Some(d)) => {
                c.0.iter()
                    .zip(&d.1 .0)
                    .filter(|(a, b)| a.is_some() == b.is_some())
                    .count()
                    .to_string()
            }
            _ => "-".into(),
        };
        let dash = || "-".to_string();
        println!(
            "{:<12} {:>9} {:>9.3} {:>9} {:>7} {:>7} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9}",
            name,
            tested,
            s.seconds,
            cpu.as_ref().map_or_else(dash, |c| format!("{:.3}", c.2)),
            cpu.as_ref().map_or_else(dash, |c| share(c.2)),
            dev.as_ref().map_or_else(|| "-".into(), |d| d.0.clone()),
            dev.as_ref().map_or_else(dash, |d| format!("{:.3}", d.1 .2)),
            dev.as_ref().map_or_else(dash, |d| share(d.1 .2)),
            counts.certified,
            counts.certified_distinct,
            counts.certified_real,
            agree
        );
        if let (Some(c), Some(d)) = (&cpu, &dev) {
            if c.1 != d.1 .1 {
                println!("#   {name}: CPU counts {:?} differ from the device's", c.1);
            }
        }
        if dev.is_some() {
            println!("#   {name}: device certifier started in {compile_s:.2} s (context, NVRTC or its cache, upload)");
        }
    }
    Ok(())
}
