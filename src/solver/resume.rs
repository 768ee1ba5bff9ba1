//! The `-o` file of a run as a checkpoint: its first line is a header ([`RunHeader`]: the
//! system's hash, the seed and the options that decide the paths), then one line per path
//! as it finishes (flushed line by line), then the recovery rounds' lines (`attempt` ≥ 1).
//! A run killed at any moment leaves whole lines and at most one cut line at the end.
//!
//! `solve --resume` reads such a file ([`RunFile::read`]): the first pass's lines are the
//! finished paths ([`crate::solver::plan::Plan::done`]); lines of recovery rounds, a cut
//! last line and anything after it are dropped ([`RunFile::truncate`]): recovery runs again
//! over all first-pass endpoints, as in an uninterrupted run, so every path has one
//! first-pass line and the recovery lines are those of one run. `pathtrack merge` reads
//! the files of shards the same way.

use crate::error::{Error, InputError, Result};
use crate::post::{Endpoint, Status};
use num_complex::Complex64 as C64;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// Version of the header's layout (the value of its `pathtrack_run` key).
pub const HEADER_VERSION: u32 = 1;

/// The first line of a `-o` file in JSON Lines: what a run must share with another to
/// continue it or to be merged with it. Readers of endpoint lines skip it (it has no
/// `path`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunHeader {
    /// [`HEADER_VERSION`]; the key that marks the line as a header.
    pub pathtrack_run: u32,
    /// The system's name.
    pub system: String,
    /// The system file (or family name) as given on the command line.
    pub file: String,
    /// [`system_hash`] of the system.
    pub system_hash: String,
    pub seed: u64,
    /// `--start` as given (`auto` is settled the same way in every run of the system).
    pub start: String,
    pub torus: bool,
    pub partition: Option<String>,
    /// `--paths`, sorted.
    pub paths: Option<Vec<u64>>,
    pub eta_target: Option<f64>,
    pub eta_target_endgame: Option<f64>,
    /// `--shard K/N` of a shard's file.
    pub shard: Option<String>,
}

impl RunHeader {
    /// The header as one JSON line (no newline).
    pub fn line(&self) -> String {
        serde_json::to_string(self).expect("a header serializes")
    }

    /// Reads a header line; `None` when the line is not one.
    pub fn parse(line: &str) -> Option<RunHeader> {
        let v: Value = serde_json::from_str(line).ok()?;
        v.get("pathtrack_run")?;
        serde_json::from_value(v).ok()
    }

    /// The keys on which `self` and `other` differ, ignoring `file` (the same system may
    /// be named differently) and, unless `with_shard`, `shard`.
    pub fn differences(&self, other: &RunHeader, with_shard: bool) -> Vec<String> {
        let a = serde_json::to_value(self).expect("serializes");
        let b = serde_json::to_value(other).expect("serializes");
        let (Value::Object(a), Value::Object(b)) = (a, b) else {
            unreachable!("a header is an object")
        };
        a.iter()
            .filter(|(k, _)| *k != "file" && (with_shard || *k != "shard"))
            .filter(|(k, v)| b.get(*k) != Some(v))
            .map(|(k, v)| format!("{k}: {v} here, {} there", b.get(k).unwrap_or(&Value::Null)))
            .collect()
    }
}

/// 64-bit FNV-1a hash of the system written as YAML (exact coefficients), as 16 hex digits.
/// It tells whether two files hold the same system; it is no protection against forgery.
pub fn system_hash(system: &crate::system::System) -> String {
    let text = crate::system::families::to_yaml(system);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// What a `-o` file holds, as read for resuming or merging.
pub struct RunFile {
    pub header: RunHeader,
    /// The first pass's endpoint of each path that has one, sorted by path.
    pub first_pass: Vec<Endpoint>,
    /// Byte length of the header and the first pass's whole lines: what a resumed run keeps.
    pub keep: u64,
    /// Lines dropped after `keep`: recovery lines and a cut last line.
    pub dropped: usize,
}

impl RunFile {
    /// Reads `path`. Errors (exit 2) name the file and line: no header, a line that is not
    /// an endpoint, a path with two first-pass lines.
    pub fn read(path: &Path) -> Result<RunFile> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| Error::io(format!("reading {name}"), e))?;
        let at = |line: usize, msg: String| Error::from(InputError::new(&name, msg).at(line, 1));
        let mut offset = 0usize;
        let mut header = None;
        let mut first_pass = Vec::new();
        let mut keep = 0u64;
        let mut dropped = 0usize;
        let mut recovery_seen = false;
        for (i, raw) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
            let line_no = i + 1;
            offset += raw.len();
            if recovery_seen {
                dropped += 1;
                continue;
            }
            if raw.last() != Some(&b'\n') {
                // The run was killed while writing this line.
                dropped += 1;
                continue;
            }
            let text = std::str::from_utf8(raw)
                .map_err(|_| at(line_no, "not UTF-8 text".into()))?
                .trim();
            if i == 0 {
                header = Some(RunHeader::parse(text).ok_or_else(|| {
                    at(
                        1,
                        "no run header on the first line (a file written by `pathtrack \
                         solve -o` in JSON Lines starts with one)"
                            .into(),
                    )
                })?);
                keep = offset as u64;
                continue;
            }
            if text.is_empty() {
                keep = offset as u64;
                continue;
            }
            let v: Value = serde_json::from_str(text)
                .map_err(|e| at(line_no, format!("not a JSON object: {e}")))?;
            let e = endpoint_from_line(&v).map_err(|m| at(line_no, m))?;
            if e.attempt > 0 {
                // Recovery rounds start once the first pass is complete; they run again.
                recovery_seen = true;
                dropped += 1;
                continue;
            }
            first_pass.push(e);
            keep = offset as u64;
        }
        let header = header.ok_or_else(|| at(1, "empty file: no run header".into()))?;
        first_pass.sort_by_key(|e| e.path);
        if let Some(w) = first_pass.windows(2).find(|w| w[0].path == w[1].path) {
            return Err(at(
                0,
                format!("path {} has two first-pass lines", w[0].path),
            ));
        }
        Ok(RunFile {
            header,
            first_pass,
            keep,
            dropped,
        })
    }

    /// Cuts `path` back to [`RunFile::keep`] bytes, so that the resumed run appends after
    /// the first pass's last whole line.
    pub fn truncate(&self, path: &Path) -> Result<()> {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        f.set_len(self.keep)
            .map_err(|e| Error::io(format!("truncating {}", path.display()), e))
    }
}

/// An endpoint from its `-o` line (docs/output.md): what the summary's tally and the
/// recovery rounds need. `steps` becomes the accepted steps. A `condition` of null is
/// infinite (a singular Jacobian) unless the path failed (not computed).
pub fn endpoint_from_line(v: &Value) -> std::result::Result<Endpoint, String> {
    let obj = v.as_object().ok_or("not a JSON object")?;
    let path = obj
        .get("path")
        .and_then(Value::as_u64)
        .ok_or("no \"path\" index")?;
    let status = match obj.get("status").and_then(Value::as_str) {
        Some("nonsingular") => Status::Nonsingular,
        Some("singular") => Status::Singular,
        Some("at_infinity") => Status::AtInfinity,
        Some("outside_torus") => Status::OutsideTorus,
        Some("positive_dimensional") => Status::PositiveDimensional,
        Some("failed") => Status::Failed,
        other => return Err(format!("path {path}: unknown status {other:?}")),
    };
    let points = |key: &str| -> std::result::Result<Option<Vec<C64>>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v @ Value::Array(_)) => crate::report::records::complex_pairs(v)
                .map(Some)
                .map_err(|m| format!("path {path}: \"{key}\": {m}")),
            Some(_) => Err(format!("path {path}: \"{key}\" is not a list")),
        }
    };
    let num = |key: &str| obj.get(key).and_then(Value::as_f64);
    let mut e = Endpoint::new(path, status);
    e.coordinates = points("coordinates")?;
    if status.is_finite() && e.coordinates.is_none() {
        return Err(format!(
            "path {path}: a finite endpoint without coordinates"
        ));
    }
    e.projective = points("projective")?.unwrap_or_default();
    e.residual = num("residual").unwrap_or(f64::NAN);
    e.condition = num("condition").unwrap_or(if status == Status::Failed {
        f64::NAN
    } else {
        f64::INFINITY
    });
    e.accepted = obj.get("steps").and_then(Value::as_u64).unwrap_or(0) as u32;
    e.reason = obj.get("reason").and_then(Value::as_str).map(String::from);
    e.valuation = num("valuation");
    e.winding = obj
        .get("winding_number")
        .and_then(Value::as_u64)
        .map(|w| w as u32);
    e.accuracy = num("accuracy");
    e.rank = obj.get("rank").and_then(Value::as_u64).map(|r| r as usize);
    e.attempt = obj.get("attempt").and_then(Value::as_u64).unwrap_or(0) as u8;
    e.refined_dd = obj.get("refined").and_then(Value::as_str) == Some("double-double");
    e.error = num("error").unwrap_or(f64::NAN);
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line written by the report reads back as the same endpoint (what the tally keeps).
    #[test]
    fn endpoint_lines_read_back() {
        let mut e = Endpoint::new(17, Status::Singular);
        e.coordinates = Some(vec![C64::new(0.1, -2.5e-300), C64::new(1.0 / 3.0, 7.0)]);
        e.projective = vec![C64::new(0.5, 0.25); 3];
        e.residual = 1.234e-15;
        e.condition = f64::INFINITY;
        e.accepted = 40;
        e.winding = Some(3);
        e.accuracy = Some(1e-9);
        e.rank = Some(1);
        e.attempt = 2;
        e.refined_dd = true;
        e.error = 3.5e-11;
        e.reason = Some("stalled".into());
        let line = crate::report::solution_line(&e);
        let back = endpoint_from_line(&line).unwrap();
        assert_eq!(back.path, 17);
        assert_eq!(back.status, Status::Singular);
        assert_eq!(back.coordinates, e.coordinates, "coordinates exactly");
        assert_eq!(back.projective, e.projective);
        assert_eq!(back.residual, e.residual);
        assert_eq!(back.condition, f64::INFINITY);
        assert_eq!(
            (back.winding, back.accuracy, back.rank),
            (Some(3), Some(1e-9), Some(1))
        );
        assert_eq!((back.attempt, back.refined_dd), (2, true));
        assert_eq!(back.error, 3.5e-11);
        assert_eq!(back.reason.as_deref(), Some("stalled"));
        assert!(endpoint_from_line(&serde_json::json!({"path": 1, "status": "x"})).is_err());
        assert!(endpoint_from_line(
            &serde_json::json!({"path": 1, "status": "nonsingular", "coordinates": null})
        )
        .is_err());
    }

    fn header() -> RunHeader {
        RunHeader {
            pathtrack_run: HEADER_VERSION,
            system: "s".into(),
            file: "s.yaml".into(),
            system_hash: "00".into(),
            seed: 1,
            start: "auto".into(),
            torus: false,
            partition: None,
            paths: None,
            eta_target: None,
            eta_target_endgame: None,
            shard: Some("0/2".into()),
        }
    }

    /// A killed run's file: header, first-pass lines, a recovery line, a cut line. The
    /// reader keeps the first pass and the byte length up to its last whole line.
    #[test]
    fn reads_a_killed_runs_file() {
        let dir = std::env::temp_dir().join(format!("pathtrack-resume-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("out.jsonl");
        let line = |path: u64, attempt: u8| {
            let mut e = Endpoint::new(path, Status::AtInfinity);
            e.attempt = attempt;
            crate::report::solution_line(&e).to_string() + "\n"
        };
        let kept = header().line() + "\n" + &line(3, 0) + &line(1, 0);
        let text = kept.clone() + &line(1, 1) + &line(2, 0)[..10];
        std::fs::write(&p, &text).unwrap();
        let f = RunFile::read(&p).unwrap();
        assert_eq!(f.header, header());
        assert_eq!(
            f.first_pass.iter().map(|e| e.path).collect::<Vec<_>>(),
            [1, 3]
        );
        assert_eq!(f.keep, kept.len() as u64);
        assert_eq!(f.dropped, 2);
        f.truncate(&p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), kept);
        // No header: an error naming the file and line 1.
        std::fs::write(&p, line(0, 0)).unwrap();
        let e = RunFile::read(&p).err().unwrap().to_string();
        assert!(e.contains("out.jsonl") && e.contains("header"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn header_differences_name_the_keys() {
        let a = header();
        let mut b = header();
        b.seed = 2;
        b.file = "other/s.yaml".into();
        b.shard = Some("1/2".into());
        assert_eq!(a.differences(&b, false).len(), 1, "seed only");
        assert!(a.differences(&b, false)[0].starts_with("seed"));
        assert_eq!(a.differences(&b, true).len(), 2, "seed and shard");
        assert_eq!(RunHeader::parse(&a.line()), Some(a));
        assert_eq!(RunHeader::parse("{\"path\": 1}"), None);
    }
}
