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
    /// Nonsingular endpoints reached by more than one path (a sign of path jumping).
    pub duplicate_paths: u64,
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

/// Collects what the summary needs from each endpoint.
#[derive(Default)]
pub struct Tally {
    pub paths: u64,
    pub at_infinity: u64,
    pub failed: u64,
    nonsingular: Vec<Vec<C64>>,
    singular: Vec<Vec<C64>>,
}

/// Distinct-solution counts from a [`Tally`].
pub struct Counts {
    pub nonsingular: u64,
    pub singular: u64,
    pub real: u64,
    pub duplicate_paths: u64,
}

impl Tally {
    pub fn add(&mut self, e: &Endpoint) {
        self.paths += 1;
        match e.status {
            Status::Nonsingular => self
                .nonsingular
                .push(e.coordinates.clone().unwrap_or_default()),
            Status::Singular => self
                .singular
                .push(e.coordinates.clone().unwrap_or_default()),
            Status::AtInfinity => self.at_infinity += 1,
            Status::Failed => self.failed += 1,
        }
    }

    /// Clusters the finite endpoints into distinct solutions. A singular cluster that
    /// contains a nonsingular solution is not counted again.
    pub fn counts(&self) -> Counts {
        let labels = dedup::cluster(&self.nonsingular, DEDUP_TOL);
        let mut distinct = 0u64;
        let mut real = 0u64;
        for (i, &l) in labels.iter().enumerate() {
            if l == i {
                distinct += 1;
                if is_real(&self.nonsingular[i], REAL_TOL) {
                    real += 1;
                }
            }
        }
        let slabels = dedup::cluster(&self.singular, DEDUP_TOL_SINGULAR);
        let mut sdistinct = 0u64;
        for (i, &l) in slabels.iter().enumerate() {
            if l == i {
                sdistinct += 1;
                if is_real(&self.singular[i], DEDUP_TOL_SINGULAR) {
                    real += 1;
                }
            }
        }
        Counts {
            nonsingular: distinct,
            singular: sdistinct,
            real,
            duplicate_paths: self.nonsingular.len() as u64 - distinct,
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
