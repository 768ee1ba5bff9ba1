//! Output files checked before any work: each can be opened for writing (a missing
//! directory is reported before the solve, not after it), and none is the input file or
//! another output (compared as canonical paths, so `./a.jsonl` and `a.jsonl` are one file,
//! and as device and inode, so a hard link to the input is the input). Devices and pipes
//! (`/dev/null`, `/dev/stdout`) may be named more than once.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// The canonical form of `p`, also for a file that does not exist yet (its directory's
/// canonical form joined with its name); `None` when its directory does not exist.
fn canonical(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Some(c);
    }
    let name = p.file_name()?;
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(dir.canonicalize().ok()?.join(name))
}

/// The device and inode of an existing file: the names of one file, hard links included,
/// share them (`None` for a missing file, and where the platform has no inodes).
fn file_id(p: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        None
    }
}

/// Whether `a` and `b` name one existing file (by canonical path, or as hard links).
pub fn same_file(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
        || file_id(a).is_some_and(|id| file_id(b) == Some(id))
}

/// True for an existing file that is not a regular file (a device, a pipe).
fn is_special(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Opens `p` for writing without truncating it (a file it had to create is removed
/// again), so that a path that cannot be written fails now.
fn try_open(flag: &str, p: &Path) -> Result<()> {
    let existed = p.exists();
    if p.is_dir() {
        return Err(Error::Usage(format!(
            "{flag} {}: is a directory, not a file",
            p.display()
        )));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(p)
        .map_err(|e| Error::io(format!("{flag} {}: cannot write", p.display()), e))?;
    if !existed {
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

/// Checks the outputs `(flag, path)` of a command reading `input` (absent ones are
/// skipped): each is writable, none is `input`, no two are the same file. Usage errors
/// (exit 2) name the flags and the file.
pub fn check(input: Option<&Path>, outputs: &[(&str, Option<&Path>)]) -> Result<()> {
    let input_c = input.and_then(|p| p.canonicalize().ok());
    let input_id = input.and_then(file_id);
    let mut seen: Vec<(&str, PathBuf, Option<(u64, u64)>)> = Vec::new();
    for &(flag, p) in outputs {
        let Some(p) = p else { continue };
        try_open(flag, p)?;
        if is_special(p) {
            continue;
        }
        let Some(c) = canonical(p) else { continue };
        let id = file_id(p);
        if input_c.as_ref() == Some(&c) || (id.is_some() && id == input_id) {
            return Err(Error::Usage(format!(
                "{flag} {}: is the input file; writing it would destroy the input",
                p.display()
            )));
        }
        if let Some((other, ..)) = seen
            .iter()
            .find(|(_, q, qid)| *q == c || (id.is_some() && *qid == id))
        {
            return Err(Error::Usage(format!(
                "{other} and {flag} name the same file {}; give each its own file",
                p.display()
            )));
        }
        seen.push((flag, c, id));
    }
    Ok(())
}

/// The end of a run from several sources (`merge`, the MPI master): the distinct
/// solutions to `solutions` as JSON Lines with the system's `variables`, then the summary.
pub fn finish_run(
    summary: &crate::report::Summary,
    solutions: Option<&Path>,
    variables: &[String],
    json: bool,
) -> Result<()> {
    if let Some(p) = solutions {
        crate::report::formats::write_solutions_as(
            p,
            crate::report::formats::SolutionFormat::Jsonl,
            &summary.solutions,
            variables,
        )?;
    }
    print_summary(summary, json)
}

/// Prints the summary: one JSON object with `json`, else the table.
pub fn print_summary(summary: &crate::report::Summary, json: bool) -> Result<()> {
    if json {
        let line = serde_json::to_string(summary).map_err(|e| Error::Internal(e.to_string()))?;
        println!("{line}");
    } else {
        print!("{}", crate::report::summary_table(summary));
    }
    Ok(())
}
