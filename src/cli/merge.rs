//! `pathtrack merge part0.jsonl part1.jsonl … [--json] [-o all.jsonl] [--solutions F]`:
//! the whole run from the `-o` files of `solve --shard K/N` (or of any runs of one system,
//! seed and options that together have every path).
//!
//! The shards hold each path's first-pass endpoint; the merge checks their headers (one
//! system, seed and options; every shard of N once), tallies all endpoints, tracks any path
//! that no file has, and runs the recovery rounds over the union (paths that share a
//! solution across shards are re-tracked here), as one process would: the summary and the
//! distinct solutions are the whole run's. It needs the system (the file named in the
//! headers, or `--system`) and tracks on `--backend` like `solve`.

use super::solve_args::{make_backend, tracker_for, BackendKind};
use crate::backend::cuda::{EvalMethod, SolveMethod};
use crate::error::{Error, Result};
use crate::report::formats::{EndpointWriter, SolutionFormat};
use crate::report::progress::{Phase, Progress};
use crate::report::SolutionWriter;
use crate::solver::plan::{Plan, Shard};
use crate::solver::resume::{system_hash, RunFile, RunHeader};
use crate::solver::{solve, Observer, SolveOptions, StartKind};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The -o files of the shards (`solve --shard K/N -o partK.jsonl`).
    #[arg(required = true)]
    pub parts: Vec<PathBuf>,
    /// The system (default: the file named in the shards' headers); its hash must match.
    #[arg(long)]
    pub system: Option<PathBuf>,
    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Write the whole run's endpoints as JSON Lines (a header, every path's first-pass
    /// line, the recovery rounds' lines).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Write the distinct finite solutions (with multiplicities) as JSON Lines.
    #[arg(long)]
    pub solutions: Option<PathBuf>,
    /// Where paths of the recovery rounds (and any path no file has) are tracked.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendKind,
    /// CPU threads (0: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(a: &MergeArgs) -> Result<i32> {
    let outputs: Vec<(&str, Option<&std::path::Path>)> = vec![
        ("-o", a.output.as_deref()),
        ("--solutions", a.solutions.as_deref()),
    ];
    super::outputs::check(None, &outputs)?;
    for p in &a.parts {
        if a.output
            .as_ref()
            .is_some_and(|o| super::outputs::same_file(o, p))
        {
            return Err(Error::Usage(format!(
                "-o {}: is one of the files to merge",
                p.display()
            )));
        }
    }
    let files = a
        .parts
        .iter()
        .map(|p| RunFile::read(p))
        .collect::<Result<Vec<_>>>()?;
    let header = check_headers(&a.parts, &files)?;
    let file = a
        .system
        .clone()
        .unwrap_or_else(|| PathBuf::from(&header.file));
    let system = crate::system::parse::load_named(&file).map_err(|e| match &a.system {
        Some(_) => Error::from(e),
        None => Error::Usage(format!(
            "{e} (the system named in the shards' headers; pass it with --system FILE)"
        )),
    })?;
    let hash = system_hash(&system);
    if hash != header.system_hash {
        return Err(Error::Usage(format!(
            "{}: not the system the shards solved (hash {hash}, theirs {}); pass that \
             system with --system",
            file.display(),
            header.system_hash
        )));
    }
    let mut done: Vec<_> = files.into_iter().flat_map(|f| f.first_pass).collect();
    done.sort_by_key(|e| e.path);
    if let Some(w) = done.windows(2).find(|w| w[0].path == w[1].path) {
        return Err(Error::Usage(format!(
            "path {} has a line in two of the files: they overlap",
            w[0].path
        )));
    }
    let threads = super::resources::threads(a.threads);
    let start = StartKind::from_str(&header.start, true)
        .map_err(|_| Error::Usage(format!("unknown start {:?} in the header", header.start)))?;
    let partition = match &header.partition {
        Some(p) => Some(crate::start::mhom::Partition::parse(p, &system.variables)?),
        None => None,
    };
    let mut backend = make_backend(
        a.backend,
        0,
        EvalMethod::Fused,
        SolveMethod::GaussJordan,
        threads,
        None,
        None,
    )?;
    let mut tracker = tracker_for(backend.as_ref(), None)?;
    if let Some(v) = header.eta_target {
        tracker.eta_target = v;
    }
    if let Some(v) = header.eta_target_endgame {
        tracker.eta_target_endgame = v;
    }
    let opts = SolveOptions {
        start,
        seed: header.seed,
        torus: header.torus,
        partition,
        threads,
        tracker,
        only: header.paths.clone(),
        plan: Plan {
            done: Some(Arc::new(done)),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut writer = match &a.output {
        Some(p) => {
            let whole = RunHeader {
                shard: None,
                file: file.display().to_string(),
                ..header.clone()
            };
            std::fs::write(p, whole.line() + "\n")
                .map_err(|e| Error::io(format!("writing {}", p.display()), e))?;
            let mut w = SolutionWriter::append(p)?;
            for e in opts.plan.done() {
                w.write(e)?;
            }
            EndpointWriter::Jsonl(w)
        }
        None => EndpointWriter::create(None, SolutionFormat::Jsonl, &system.variables)?,
    };
    struct Merge<'w> {
        progress: Progress,
        writer: &'w mut EndpointWriter,
    }
    impl Observer for Merge<'_> {
        fn phase(&mut self, phase: Phase) {
            self.progress.set_phase(phase);
        }
        fn endpoint(&mut self, e: &crate::post::Endpoint) -> Result<()> {
            self.progress.endpoint(e.path, e.attempt);
            self.writer.write(e)
        }
    }
    let missing = {
        let mut obs = Merge {
            progress: Progress::new(a.quiet),
            writer: &mut writer,
        };
        let summary = solve(&system, &opts, backend.as_mut(), &mut obs)?;
        obs.progress.finish();
        summary
    };
    let summary = missing;
    writer.finish()?;
    let tracked_here = summary.paths - opts.plan.done().len() as u64;
    if tracked_here > 0 {
        eprintln!(
            "pathtrack: merge: {tracked_here} paths had no line in the files and were tracked here"
        );
    }
    crate::cli::outputs::finish_run(&summary, a.solutions.as_deref(), &system.variables, a.json)?;
    Ok(0)
}

/// The common header of the files: one system, seed and options; shards of one N, each
/// once and none missing. Usage errors name the files.
fn check_headers(parts: &[PathBuf], files: &[RunFile]) -> Result<RunHeader> {
    let first = &files[0].header;
    for (p, f) in parts.iter().zip(files).skip(1) {
        let diff = first.differences(&f.header, false);
        if !diff.is_empty() {
            return Err(Error::Usage(format!(
                "{} and {} come from different runs ({})",
                parts[0].display(),
                p.display(),
                diff.join("; ")
            )));
        }
    }
    let shards: Vec<Option<Shard>> = files
        .iter()
        .map(|f| f.header.shard.as_deref().map(Shard::parse).transpose())
        .collect::<Result<_>>()?;
    if let Some(Some(s0)) = shards.first() {
        let mut seen = vec![None; s0.count as usize];
        for (p, s) in parts.iter().zip(&shards) {
            let Some(s) = s.filter(|s| s.count == s0.count) else {
                return Err(Error::Usage(format!(
                    "{}: not a shard of {} (it is {})",
                    p.display(),
                    s0.count,
                    s.map_or("a whole run".into(), |s| format!("shard {s}"))
                )));
            };
            if let Some(q) = seen[s.index as usize].replace(p) {
                return Err(Error::Usage(format!(
                    "{} and {} are both shard {s}",
                    q.display(),
                    p.display()
                )));
            }
        }
        let missing: Vec<String> = seen
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_none())
            .map(|(k, _)| format!("{k}/{}", s0.count))
            .collect();
        if !missing.is_empty() {
            return Err(Error::Usage(format!(
                "shards {} are missing: pass every shard's file",
                missing.join(", ")
            )));
        }
    } else if shards.iter().any(Option::is_some) {
        return Err(Error::Usage(format!(
            "{} is a whole run, the others shards: merge shards of one split",
            parts[0].display()
        )));
    }
    Ok(first.clone())
}
