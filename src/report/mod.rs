//! What the user reads: the summary (table or one JSON object), the solutions as JSON Lines
//! streamed while paths finish (each line flushed, so an interrupted run keeps every path
//! already done), and the progress bar on stderr.

use crate::error::{Error, Result};
use crate::post::{dedup, is_real, Endpoint, Status};
use num_complex::Complex64 as C64;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::io::Write;

/// Relative tolerance for two nonsingular endpoints to be the same solution.
pub const DEDUP_TOL: f64 = 1e-8;
/// Looser tolerance for singular endpoints (their accuracy is ~ eps^{1/multiplicity}).
pub const DEDUP_TOL_SINGULAR: f64 = 1e-4;
/// Relative imaginary part below which a solution is real.
pub const REAL_TOL: f64 = 1e-8;

/// The run summary; every key is documented in docs/output.md.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub system: String,
    pub variables: usize,
    pub paths: u64,
    pub finite: u64,
    pub nonsingular: u64,
    pub singular: u64,
    pub at_infinity: u64,
    pub real: u64,
    pub failed: u64,
    /// Nonsingular endpoints reached by more than one path (a sign of path jumping) after
    /// recovery.
    pub duplicate_paths: u64,
    /// Re-tracked paths (duplicates and failures) that now end at a new solution or no
    /// longer fail.
    pub recovered: u64,
    /// Paths re-tracked with tighter tolerances.
    pub retracked: u64,
    pub seconds: f64,
    pub backend: String,
    pub start: String,
    pub seed: u64,
    pub root_counts: Map<String, Value>,
}

fn pair(z: &C64) -> [f64; 2] {
    [z.re, z.im]
}

/// One JSON Lines record for an endpoint.
pub fn solution_line(e: &Endpoint) -> Value {
    let coords = e
        .coordinates
        .as_ref()
        .map(|x| Value::from(x.iter().map(|z| json!(pair(z))).collect::<Vec<_>>()))
        .unwrap_or(Value::Null);
    let num = |v: f64| if v.is_finite() { json!(v) } else { Value::Null };
    let mut m = Map::new();
    m.insert("path".into(), json!(e.path));
    m.insert("status".into(), json!(e.status));
    m.insert("coordinates".into(), coords);
    m.insert("residual".into(), num(e.residual));
    m.insert("condition".into(), num(e.condition));
    m.insert("steps".into(), json!(e.steps()));
    if e.attempt > 0 {
        m.insert("attempt".into(), json!(e.attempt));
    }
    m.insert(
        "projective".into(),
        Value::from(
            e.projective
                .iter()
                .map(|z| json!(pair(z)))
                .collect::<Vec<_>>(),
        ),
    );
    if let Some(r) = &e.reason {
        m.insert("reason".into(), json!(r));
    }
    if let Some(v) = e.valuation {
        m.insert("valuation".into(), num(v));
    }
    Value::Object(m)
}

/// Writes solution lines to a file, flushing each one.
pub struct SolutionWriter {
    out: Option<std::io::BufWriter<std::fs::File>>,
    path: String,
}

impl SolutionWriter {
    pub fn create(path: Option<&std::path::Path>) -> Result<SolutionWriter> {
        let out = match path {
            Some(p) => Some(std::io::BufWriter::new(
                std::fs::File::create(p)
                    .map_err(|e| Error::io(format!("creating {}", p.display()), e))?,
            )),
            None => None,
        };
        Ok(SolutionWriter {
            out,
            path: path.map(|p| p.display().to_string()).unwrap_or_default(),
        })
    }

    pub fn write(&mut self, e: &Endpoint) -> Result<()> {
        if let Some(w) = &mut self.out {
            let line = solution_line(e).to_string();
            writeln!(w, "{line}")
                .and_then(|_| w.flush())
                .map_err(|err| Error::io(format!("writing {}", self.path), err))?;
        }
        Ok(())
    }
}

/// What the summary keeps of one path: its status and, when finite, its coordinates.
#[derive(Clone, Debug)]
struct Record {
    status: Status,
    coords: Option<Vec<C64>>,
}

/// Collects what the summary needs from each endpoint; a re-tracked path replaces its
/// earlier record.
#[derive(Default)]
pub struct Tally {
    records: Vec<Record>,
    index: std::collections::HashMap<u64, usize>,
}

/// Distinct-solution counts from a [`Tally`].
pub struct Counts {
    pub paths: u64,
    pub nonsingular: u64,
    pub singular: u64,
    pub real: u64,
    pub at_infinity: u64,
    pub failed: u64,
    /// Nonsingular endpoints beyond the first of each distinct solution.
    pub duplicate_paths: u64,
}

impl Tally {
    /// Records (or replaces) the endpoint of a path.
    pub fn add(&mut self, e: &Endpoint) {
        let r = Record {
            status: e.status,
            coords: e
                .status
                .is_finite()
                .then(|| e.coordinates.clone().unwrap_or_default()),
        };
        match self.index.get(&e.path) {
            Some(&i) => self.records[i] = r,
            None => {
                self.index.insert(e.path, self.records.len());
                self.records.push(r);
            }
        }
    }

    /// Paths whose nonsingular endpoint is shared with another path (path jumping), and
    /// paths that failed: the candidates for re-tracking.
    pub fn suspects(&self) -> Vec<u64> {
        let (ids, pts) = self.finite_points(Status::Nonsingular);
        let labels = dedup::cluster(&pts, DEDUP_TOL);
        let mut size = std::collections::HashMap::<usize, usize>::new();
        for &l in &labels {
            *size.entry(l).or_default() += 1;
        }
        let mut out: Vec<u64> = ids
            .iter()
            .zip(&labels)
            .filter(|(_, l)| size[l] > 1)
            .map(|(&p, _)| p)
            .collect();
        out.extend(
            self.index
                .iter()
                .filter(|(_, &i)| self.records[i].status == Status::Failed)
                .map(|(&p, _)| p),
        );
        out.sort_unstable();
        out
    }

    /// Path ids and coordinates of the endpoints with `status`, in path order.
    fn finite_points(&self, status: Status) -> (Vec<u64>, Vec<Vec<C64>>) {
        let mut v: Vec<(u64, &Vec<C64>)> = self
            .index
            .iter()
            .filter(|(_, &i)| self.records[i].status == status)
            .map(|(&p, &i)| (p, self.records[i].coords.as_ref().expect("finite record")))
            .collect();
        v.sort_unstable_by_key(|(p, _)| *p);
        v.into_iter().map(|(p, c)| (p, c.clone())).unzip()
    }

    /// Distinct nonsingular solutions among `coords`, and how many of them are real.
    fn distinct(pts: &[Vec<C64>], tol: f64) -> (u64, u64) {
        let labels = dedup::cluster(pts, tol);
        let mut distinct = 0;
        let mut real = 0;
        for (i, &l) in labels.iter().enumerate() {
            if l == i {
                distinct += 1;
                if is_real(&pts[i], tol.max(REAL_TOL)) {
                    real += 1;
                }
            }
        }
        (distinct, real)
    }

    /// Clusters the finite endpoints into distinct solutions.
    pub fn counts(&self) -> Counts {
        let (_, ns) = self.finite_points(Status::Nonsingular);
        let (_, sg) = self.finite_points(Status::Singular);
        let (nonsingular, real_ns) = Self::distinct(&ns, DEDUP_TOL);
        let (singular, real_sg) = Self::distinct(&sg, DEDUP_TOL_SINGULAR);
        let count = |st: Status| self.records.iter().filter(|r| r.status == st).count() as u64;
        Counts {
            paths: self.records.len() as u64,
            nonsingular,
            singular,
            real: real_ns + real_sg,
            at_infinity: count(Status::AtInfinity),
            failed: count(Status::Failed),
            duplicate_paths: ns.len() as u64 - nonsingular,
        }
    }
}

/// The summary as a human-readable table.
pub fn summary_table(s: &Summary) -> String {
    let mut t = String::new();
    let row = |t: &mut String, k: &str, v: String| t.push_str(&format!("  {k:<22} {v}\n"));
    t.push_str(&format!(
        "pathtrack: {} ({} variables)\n",
        s.system, s.variables
    ));
    row(&mut t, "start system", s.start.clone());
    for (k, v) in &s.root_counts {
        row(&mut t, &format!("  {k}"), v.to_string());
    }
    row(&mut t, "paths tracked", s.paths.to_string());
    row(&mut t, "finite solutions", s.finite.to_string());
    row(&mut t, "  nonsingular", s.nonsingular.to_string());
    row(&mut t, "  singular", s.singular.to_string());
    row(&mut t, "  real", s.real.to_string());
    row(&mut t, "at infinity (paths)", s.at_infinity.to_string());
    row(&mut t, "failed (paths)", s.failed.to_string());
    if s.retracked > 0 {
        row(
            &mut t,
            "re-tracked / recovered",
            format!("{} / {}", s.retracked, s.recovered),
        );
    }
    if s.duplicate_paths > 0 {
        row(
            &mut t,
            "duplicate endpoints",
            format!("{} (possible path jumping)", s.duplicate_paths),
        );
    }
    row(&mut t, "backend", s.backend.clone());
    row(&mut t, "seed", s.seed.to_string());
    row(&mut t, "seconds", format!("{:.3}", s.seconds));
    t
}

/// A progress bar on stderr (drawn only on a terminal).
pub fn progress(total: u64, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} paths ({per_sec}, eta {eta}) {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    pb
}
