//! The `-o` file of `solve` as a checkpoint (`crate::solver::resume`): a fresh run writes the
//! header line first; `--resume` checks the header against this run's, keeps the first
//! pass's lines and appends after them; `--shard K/N` tracks its slice's first pass.

use super::solve_args::SolveArgs;
use crate::error::{Error, Result};
use crate::post::Endpoint;
use crate::report::formats::{EndpointWriter, SolutionFormat};
use crate::report::SolutionWriter;
use crate::solver::plan::Shard;
use crate::solver::resume::{system_hash, RunFile, RunHeader, HEADER_VERSION};
use crate::solver::SolveOptions;
use crate::system::System;
use std::sync::Arc;

/// This run's header.
pub fn header_for(a: &SolveArgs, system: &System, opts: &SolveOptions) -> RunHeader {
    RunHeader {
        pathtrack_run: HEADER_VERSION,
        system: system.name.clone(),
        file: a.file.display().to_string(),
        system_hash: system_hash(system),
        seed: opts.seed,
        start: opts.start.name().into(),
        torus: opts.torus,
        partition: opts
            .partition
            .as_ref()
            .map(|p| p.display(&system.variables)),
        paths: opts.only.clone(),
        eta_target: a.eta_target,
        eta_target_endgame: a.eta_target_endgame,
        shard: opts.plan.shard.map(|s| s.to_string()),
    }
}

/// `--shard`, read; usage errors when it is not `K/N` or has no JSON Lines `-o` file.
pub fn shard(a: &SolveArgs) -> Result<Option<Shard>> {
    let Some(s) = &a.shard else { return Ok(None) };
    let shard = Shard::parse(s)?;
    if a.output.is_none() || a.format != SolutionFormat::Jsonl {
        return Err(Error::Usage(format!(
            "--shard {s} needs -o FILE in JSON Lines: `pathtrack merge` combines the shards' files"
        )));
    }
    Ok(Some(shard))
}

/// Opens `-o`: a fresh file starts with `header`; with `--resume` an existing file whose
/// header matches is cut back to its first pass's lines, which are returned (sorted by
/// path), and appended to. Without a JSON Lines `-o` file, the writer of `--format`.
pub fn open_output(
    a: &SolveArgs,
    header: &RunHeader,
    variables: &[String],
) -> Result<(EndpointWriter, Option<Arc<Vec<Endpoint>>>)> {
    let path = match (&a.output, a.format) {
        (Some(p), SolutionFormat::Jsonl) => p,
        _ if a.resume => {
            return Err(Error::Usage(
                "--resume needs -o FILE in JSON Lines (the file of the run to continue)".into(),
            ))
        }
        _ => {
            let w = EndpointWriter::create(a.output.as_deref(), a.format, variables)?;
            return Ok((w, None));
        }
    };
    let exists = std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
    if a.resume && exists {
        let file = RunFile::read(path)?;
        let diff = header.differences(&file.header, true);
        if !diff.is_empty() {
            return Err(Error::Usage(format!(
                "--resume: {} was written by another run ({}); give the same system, seed \
                 and options, or another -o file",
                path.display(),
                diff.join("; ")
            )));
        }
        file.truncate(path)?;
        eprintln!(
            "pathtrack: resuming {}: {} paths finished{}",
            path.display(),
            file.first_pass.len(),
            if file.dropped > 0 {
                format!(
                    "; {} later lines dropped (recovery runs again)",
                    file.dropped
                )
            } else {
                String::new()
            }
        );
        let w = SolutionWriter::append(path)?;
        return Ok((EndpointWriter::Jsonl(w), Some(Arc::new(file.first_pass))));
    }
    if a.resume {
        eprintln!(
            "pathtrack: --resume: {} is absent or empty; starting the run",
            path.display()
        );
    }
    std::fs::write(path, header.line() + "\n")
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    Ok((EndpointWriter::Jsonl(SolutionWriter::append(path)?), None))
}
