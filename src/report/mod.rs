//! What the user reads: the summary (table or one JSON object), the solutions as JSON Lines
//! streamed while paths finish (each line flushed, so an interrupted run keeps every path
//! already done), and the progress bar on stderr.

pub mod formats;
pub mod records;
pub mod usage;

use crate::error::{Error, Result};
use crate::post::{dedup, is_real, Endpoint, Status};
use num_complex::Complex64 as C64;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::io::Write;

pub mod progress;

/// Relative tolerance for two nonsingular endpoints to be the same solution.
pub const DEDUP_TOL: f64 = 1e-8;
/// Looser tolerance for singular endpoints (their accuracy is ~ eps^{1/multiplicity}).
pub const DEDUP_TOL_SINGULAR: f64 = 1e-4;
/// A nonsingular endpoint with condition number κ is known to about `κ·ε`; its clustering
/// tolerance is `clamp(DEDUP_COND_FACTOR·κ·ε, DEDUP_TOL, DEDUP_TOL_MAX)` (two paths ending
/// at a double root that Newton reached to `√ε` have κ ≈ 1/√ε and cluster).
pub const DEDUP_COND_FACTOR: f64 = 10.0;
pub const DEDUP_TOL_MAX: f64 = 1e-5;
/// An endpoint's clustering tolerance is at least this multiple of the error its refinement
/// left ([`Endpoint::error`]): two paths at one root, each refined to within `δ`, end
/// `2δ` apart at most. For nonsingular endpoints (κ ≤ 1e6 unless refined in
/// double-double, whose roots lie ≳ 1/κ apart) the floor [`DEDUP_TOL`] rarely yields; a
/// singular endpoint known to 0.2 (a root of multiplicity 16 seen in double precision) is
/// one solution with every endpoint within that.
pub const DEDUP_ERROR_FACTOR: f64 = 2.0;
/// Relative imaginary part below which a solution is real.
pub const REAL_TOL: f64 = 1e-8;
pub use crate::post::CLUSTER_SINGULAR_COND;

/// A root count (total degree, mixed volume, Bézout number) as JSON: an integer up to
/// 2^64 − 1, above that a string of its decimal digits (`"1267650600228229401496703205376"`),
/// which every JSON reader keeps exactly (docs/output.md).
pub fn count_value(count: impl std::fmt::Display) -> Value {
    let digits = count.to_string();
    match digits.parse::<u64>() {
        Ok(v) => json!(v),
        Err(_) => Value::String(digits),
    }
}

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
    /// With `--torus`: paths that end at a solution with a zero coordinate (not in
    /// `(C*)^n`, [`Status::OutsideTorus`]); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outside_torus: Option<u64>,
    /// Paths that end on a positive-dimensional component ([`Status::PositiveDimensional`]),
    /// not counted in `finite` or `singular`.
    pub positive_dimensional: u64,
    /// Distinct real solutions (`real_nonsingular + real_singular`).
    pub real: u64,
    /// Of `nonsingular`, the real ones.
    pub real_nonsingular: u64,
    /// Of `singular`, the real ones.
    pub real_singular: u64,
    pub failed: u64,
    /// The failed paths by the kind of their reason (numbers as `#`); absent when none
    /// failed.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub failed_reasons: std::collections::BTreeMap<String, u64>,
    /// Nonsingular endpoints reached by more than one path (a sign of path jumping) after
    /// recovery.
    pub duplicate_paths: u64,
    /// Re-tracked paths (duplicates and failures) that now end at a new solution or no
    /// longer fail.
    pub recovered: u64,
    /// Paths re-tracked with tighter tolerances.
    pub retracked: u64,
    /// Of `retracked`, the paths whose first re-tracking ran during the first pass
    /// (`solver::early`).
    pub retracked_early: u64,
    pub seconds: f64,
    /// Where `seconds` went: the start system (root counts, mixed cells), the first tracking
    /// pass with its refinement, the recovery rounds.
    pub phases: Phases,
    pub backend: String,
    /// How the GPU kernels were obtained ([`crate::backend::Backend::setup_note`]); absent
    /// on the CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernels: Option<String>,
    pub start: String,
    /// Why `--start auto` chose `start` (absent when the start was asked for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_reason: Option<String>,
    pub seed: u64,
    pub root_counts: Map<String, Value>,
    /// What the user must know to trust the counts: coefficients of the input rounded to
    /// doubles ([`crate::system::parse::rounding`]); absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Why the counts may be incomplete or doubtful ([`attention`]); absent when nothing
    /// went wrong.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attention: Vec<String>,
    /// The distinct finite solutions (not part of the JSON summary; `--solutions` writes them).
    #[serde(skip)]
    pub solutions: Vec<Solution>,
}

impl Summary {
    /// Takes the distinct solution `s` out of the counts (`finite`, `nonsingular` or
    /// `singular`, and the real ones among them); the caller removes it from `solutions`.
    pub fn uncount(&mut self, s: &Solution) {
        self.finite -= 1;
        let real = u64::from(s.real);
        self.real -= real;
        if s.status == Status::Nonsingular {
            self.nonsingular -= 1;
            self.real_nonsingular -= real;
        } else {
            self.singular -= 1;
            self.real_singular -= real;
        }
    }
}

/// Wall seconds of the parts of a solve (see [`Summary::phases`]).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Phases {
    pub start_system: f64,
    /// Loading the homotopy into the backend (on the GPU: compiling its kernels with NVRTC,
    /// or reading them from the kernel cache, [`crate::gpu::jit`]).
    pub backend_setup: f64,
    pub tracking: f64,
    /// The machine's use during `tracking` (host cores, GPU utilization).
    pub tracking_usage: usage::Usage,
    pub recovery: f64,
    /// Each recovery round that ran, in order: the paths it tracked again, the wall seconds
    /// spent finding them, and the round's own (with the refinement of its endpoints). A
    /// last search that finds no path is in `recovery` only.
    pub recovery_rounds: Vec<RecoveryRound>,
    /// Paths at infinity tracked again because the finite ones fell short of a root
    /// bound (total-degree and m-hom starts, `solver::gap`); absent when none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap_recovery: Option<crate::solver::gap::GapRecovery>,
    /// Each device of a run over several (`solve --devices`), in the order given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceLoad>,
}

/// One device's share of a run over several (see [`Phases::devices`]).
#[derive(Clone, Debug, Default, Serialize)]
pub struct DeviceLoad {
    /// "cuda 1", "cpu 0".
    pub device: String,
    /// First-pass paths it tracked, in how many batches.
    pub paths: u64,
    pub batches: u64,
    /// Wall seconds before it asked for its first batch (its start system and backend).
    pub setup_seconds: f64,
    /// Wall seconds it spent on its batches (tracking and refining their endpoints).
    pub busy_seconds: f64,
}

/// One recovery round of a solve (see [`Phases::recovery_rounds`]).
#[derive(Clone, Debug, Default, Serialize)]
pub struct RecoveryRound {
    pub paths: u64,
    /// Finding those paths (endpoints that share a solution, failures, estimates to verify)
    /// before the round.
    pub finding_seconds: f64,
    pub seconds: f64,
}

/// One distinct finite solution: a cluster of path endpoints.
#[derive(Clone, Debug)]
pub struct Solution {
    pub status: Status,
    /// The endpoint of the cluster with the smallest residual (singular: with the smallest
    /// error estimate, then residual); shared with the tally's record of that endpoint, so
    /// that a solve keeps each endpoint's coordinates once.
    pub coordinates: std::sync::Arc<[C64]>,
    /// Paths ending here.
    pub paths: Vec<u64>,
    /// Winding numbers of those paths that went through the Cauchy endgame.
    pub winding_numbers: Vec<u32>,
    pub residual: f64,
    pub condition: f64,
    pub rank: Option<usize>,
    pub real: bool,
    /// Every endpoint of the cluster was refined in double-double (quadratic convergence at
    /// full accuracy): several of them at one point are path jumping, not a multiple root.
    pub refined_dd: bool,
}

impl Solution {
    /// Number of paths ending at the solution (its multiplicity, for a generic homotopy).
    pub fn multiplicity(&self) -> usize {
        self.paths.len()
    }

    /// One JSON Lines record (see docs/output.md).
    pub fn line(&self) -> Value {
        let num = |v: f64| if v.is_finite() { json!(v) } else { Value::Null };
        json!({
            "status": self.status,
            "multiplicity": self.multiplicity(),
            "coordinates": self.coordinates.iter().map(pair).collect::<Vec<_>>(),
            "real": self.real,
            "rank": self.rank,
            "condition": num(self.condition),
            "residual": num(self.residual),
            "paths": self.paths,
            "winding_numbers": self.winding_numbers,
        })
    }
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
    if let Some(c) = e.winding {
        m.insert("winding_number".into(), json!(c));
    }
    if let Some(a) = e.accuracy {
        m.insert("accuracy".into(), num(a));
    }
    if let Some(r) = e.rank {
        m.insert("rank".into(), json!(r));
    }
    if e.refined_dd {
        m.insert("refined".into(), json!("double-double"));
    }
    if let Some(x) = &e.coordinates {
        m.insert("real".into(), json!(is_real(x, REAL_TOL)));
    }
    if e.error.is_finite() {
        m.insert("error".into(), json!(e.error));
    }
    Value::Object(m)
}

/// Writes solution lines to a file, flushing each one (or, see
/// [`SolutionWriter::set_flush_each`], when asked).
pub struct SolutionWriter {
    out: Option<std::io::BufWriter<std::fs::File>>,
    path: String,
    flush_each: bool,
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
            flush_each: true,
        })
    }

    /// Appends to `path` (a resumed run's `-o` file), which must exist.
    pub fn append(path: &std::path::Path) -> Result<SolutionWriter> {
        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        Ok(SolutionWriter {
            out: Some(std::io::BufWriter::new(f)),
            path: path.display().to_string(),
            flush_each: true,
        })
    }

    pub fn write(&mut self, e: &Endpoint) -> Result<()> {
        self.write_with(e, Map::new())
    }

    /// Writes `e`'s line with the `extra` keys added (`solve --certify`'s `certified`).
    pub fn write_with(&mut self, e: &Endpoint, extra: Map<String, Value>) -> Result<()> {
        if let Some(w) = &mut self.out {
            let mut line = solution_line(e);
            if let Value::Object(m) = &mut line {
                m.extend(extra);
            }
            let line = line.to_string();
            writeln!(w, "{line}")
                .and_then(|_| if self.flush_each { w.flush() } else { Ok(()) })
                .map_err(|err| Error::io(format!("writing {}", self.path), err))?;
        }
        Ok(())
    }

    /// Off: lines stay in the buffer until [`Self::flush`] (a writer of many lines at once).
    pub fn set_flush_each(&mut self, on: bool) {
        self.flush_each = on;
    }

    pub fn flush(&mut self) -> Result<()> {
        match &mut self.out {
            Some(w) => w
                .flush()
                .map_err(|err| Error::io(format!("writing {}", self.path), err)),
            None => Ok(()),
        }
    }
}

/// Writes the distinct solutions as JSON Lines (one [`Solution::line`] per line).
pub fn write_solutions(path: &std::path::Path, sols: &[Solution]) -> Result<()> {
    let io = |e| Error::io(format!("writing {}", path.display()), e);
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    for s in sols {
        writeln!(w, "{}", s.line()).map_err(io)?;
    }
    w.flush().map_err(io)
}

/// What the summary keeps of one path: its status and, when finite, its coordinates.
#[derive(Clone, Debug)]
struct Record {
    path: u64,
    status: Status,
    coords: Option<std::sync::Arc<[C64]>>,
    winding: Option<u32>,
    residual: f64,
    condition: f64,
    rank: Option<usize>,
    /// Refined by Newton in double-double: accurate to full double precision.
    refined_dd: bool,
    /// [`Endpoint::error`].
    error: f64,
    /// [`Endpoint::rounding_extent`].
    rounding_extent: f64,
    /// At infinity by an estimate ([`Endpoint::at_infinity_by_estimate`]).
    estimated_at_infinity: bool,
    /// Why the path failed ([`crate::track::reason_kind`] of its reason); failed paths only.
    failed_reason: Option<String>,
}

/// Clustering tolerance of an endpoint (double-double refined or not, its condition number,
/// the error its refinement left: [`Endpoint::error`], NaN when unknown) among endpoints of
/// `status` (base `tol`): at least [`DEDUP_ERROR_FACTOR`] times that error, at most
/// [`DEDUP_TOL_MAX`] for a nonsingular endpoint and [`crate::post::SINGULAR_ERROR_MAX`]
/// for a singular one.
pub(crate) fn clustering_tolerance(
    refined_dd: bool,
    condition: f64,
    error: f64,
    tol: f64,
    status: Status,
) -> f64 {
    let known = |e: f64| {
        if e.is_finite() {
            DEDUP_ERROR_FACTOR * e
        } else {
            0.0
        }
    };
    if status == Status::Nonsingular && refined_dd {
        tol // accurate whatever its condition number
    } else if status == Status::Nonsingular {
        let by_cond = if condition.is_finite() {
            DEDUP_COND_FACTOR * condition * f64::EPSILON
        } else {
            0.0
        };
        by_cond.max(known(error)).clamp(tol, DEDUP_TOL_MAX)
    } else {
        known(error).clamp(tol, crate::post::SINGULAR_ERROR_MAX.max(tol))
    }
}

impl Record {
    /// Clustering tolerance of this record among records of `status` (base `tol`).
    /// A singular record's tolerance is at least [`DEDUP_ERROR_FACTOR`] times its
    /// [`Endpoint::rounding_extent`], beyond [`crate::post::SINGULAR_ERROR_MAX`] too: double
    /// precision cannot place the root anywhere in that region.
    fn tolerance(&self, tol: f64, status: Status) -> f64 {
        let t = clustering_tolerance(self.refined_dd, self.condition, self.error, tol, status);
        if status == Status::Singular && self.rounding_extent > 0.0 {
            t.max(DEDUP_ERROR_FACTOR * self.rounding_extent)
        } else {
            t
        }
    }
}

/// Collects what the summary needs from each endpoint; a re-tracked path replaces its
/// earlier record.
#[derive(Default)]
pub struct Tally {
    records: Vec<Record>,
    index: std::collections::HashMap<u64, usize>,
    /// [`Self::solutions`] of the records as they are, computed on first use after a change:
    /// the suspects, the counts, the recovered paths and the summary read one clustering
    /// (cyclic-12: 3.7·10⁵ solutions, about 4 s per clustering).
    clustered: std::sync::OnceLock<Vec<Solution>>,
}

/// Distinct-solution counts from a [`Tally`].
pub struct Counts {
    pub paths: u64,
    pub nonsingular: u64,
    pub singular: u64,
    pub real: u64,
    pub real_nonsingular: u64,
    pub real_singular: u64,
    pub at_infinity: u64,
    pub outside_torus: u64,
    pub positive_dimensional: u64,
    pub failed: u64,
    /// Nonsingular endpoints beyond the first of each distinct solution.
    pub duplicate_paths: u64,
}

impl Tally {
    /// Records (or replaces) the endpoint of a path.
    pub fn add(&mut self, e: &Endpoint) {
        // The clusters read the nonsingular and singular records only: a path at infinity
        // or failed that ends so again (cyclic-14's gap recovery, 8.4 M solutions) keeps
        // them.
        let clustered = |st: Status| matches!(st, Status::Nonsingular | Status::Singular);
        let old = self.index.get(&e.path).map(|&i| self.records[i].status);
        if clustered(e.status) || old.is_none_or(clustered) {
            self.clustered = Default::default();
        }
        let r = Record {
            path: e.path,
            status: e.status,
            coords: e
                .status
                .is_finite()
                .then(|| e.coordinates.as_deref().unwrap_or_default().into()),
            winding: e.winding,
            residual: e.residual,
            condition: e.condition,
            rank: e.rank,
            refined_dd: e.refined_dd,
            error: e.error,
            rounding_extent: e.rounding_extent,
            estimated_at_infinity: e.at_infinity_by_estimate(),
            failed_reason: (e.status == Status::Failed).then(|| {
                crate::track::reason_kind(e.reason.as_deref().unwrap_or("no reason given"))
            }),
        };
        match self.index.get(&e.path) {
            Some(&i) => self.records[i] = r,
            None => {
                self.index.insert(e.path, self.records.len());
                self.records.push(r);
            }
        }
    }

    /// The failed paths counted by the kind of their reason ([`crate::track::reason_kind`]).
    pub fn failed_reasons(&self) -> std::collections::BTreeMap<String, u64> {
        let mut m = std::collections::BTreeMap::new();
        for r in &self.records {
            if let Some(k) = &r.failed_reason {
                *m.entry(k.clone()).or_insert(0) += 1;
            }
        }
        m
    }

    /// The nonsingular endpoint recorded for `path`, rebuilt from its record (for
    /// [`Self::lost_by_retracking`]); `None` unless the path ends at a nonsingular solution.
    pub fn nonsingular_endpoint(&self, path: u64) -> Option<Endpoint> {
        self.endpoint(path)
            .filter(|e| e.status == Status::Nonsingular)
    }

    /// The finite endpoint recorded for `path`, rebuilt from its record (what it keeps:
    /// no steps, reason or valuation); `None` unless the path ends at a finite solution.
    pub fn endpoint(&self, path: u64) -> Option<Endpoint> {
        let r = &self.records[*self.index.get(&path)?];
        let x = r.coords.as_ref().filter(|_| r.status.is_finite())?;
        let mut y: Vec<C64> = x.iter().copied().chain([C64::new(1.0, 0.0)]).collect();
        let s = y.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        y.iter_mut().for_each(|z| *z /= s);
        Some(Endpoint {
            path,
            status: r.status,
            reason: None,
            projective: y,
            coordinates: Some(x.to_vec()),
            residual: r.residual,
            condition: r.condition,
            accepted: 0,
            rejected: 0,
            valuation: None,
            winding: r.winding,
            accuracy: None,
            rank: r.rank,
            attempt: 0,
            refined_dd: r.refined_dd,
            error: r.error,
            rounding_extent: r.rounding_extent,
        })
    }

    /// Of the `earlier` nonsingular endpoints of re-tracked paths, those whose path now
    /// ends elsewhere than at a finite solution, and whose solution no other path reaches:
    /// re-tracking them (as one of two paths that shared a solution) would lose it.
    pub fn lost_by_retracking(&self, earlier: &[Endpoint]) -> Vec<Endpoint> {
        earlier
            .iter()
            .filter(|e| {
                let now = &self.records[self.index[&e.path]];
                if now.status.is_finite() {
                    return false;
                }
                let x = e.coordinates.as_ref().expect("nonsingular endpoint");
                let mine = clustering_tolerance(
                    e.refined_dd,
                    e.condition,
                    e.error,
                    DEDUP_TOL,
                    Status::Nonsingular,
                );
                !self.records.iter().any(|r| {
                    r.path != e.path
                        && r.status.is_finite()
                        && r.coords.as_ref().is_some_and(|c| {
                            let t = mine.max(r.tolerance(DEDUP_TOL, Status::Nonsingular));
                            dedup::close(c, x, t)
                        })
                })
            })
            .cloned()
            .collect()
    }

    /// The current endpoints of `paths` (status and finite coordinates), to compare with
    /// after re-tracking them ([`Self::recovered_since`]).
    pub fn snapshot(&self, paths: &[u64]) -> Vec<(u64, Status, Option<std::sync::Arc<[C64]>>)> {
        paths
            .iter()
            .filter_map(|p| self.index.get(p).map(|&i| &self.records[i]))
            .map(|r| (r.path, r.status, r.coords.clone()))
            .collect()
    }

    /// Of the paths in `before` (a [`Self::snapshot`] taken before re-tracking them), those
    /// recovered: each now ends at a finite solution that is no longer suspect (not failed,
    /// not shared as a nonsingular solution with another path) and was not its endpoint
    /// before. Of two paths that shared a solution, only the one that moved counts; a path
    /// is counted once however many rounds re-tracked it, so this never exceeds the
    /// re-tracked paths.
    pub fn recovered_since(&self, before: &[(u64, Status, Option<std::sync::Arc<[C64]>>)]) -> u64 {
        let still: std::collections::HashSet<u64> = self.suspects().into_iter().collect();
        before
            .iter()
            .filter(|(path, status, coords)| {
                let now = &self.records[self.index[path]];
                if !now.status.is_finite() || still.contains(path) {
                    return false;
                }
                match (status.is_finite(), coords, &now.coords) {
                    (true, Some(a), Some(b)) => {
                        let t = now.tolerance(DEDUP_TOL, now.status);
                        !dedup::close(a, b, t)
                    }
                    _ => true,
                }
            })
            .count() as u64
    }

    /// Paths whose nonsingular endpoint is shared with another path (path jumping), and
    /// paths that failed: the candidates for re-tracking. Paths at infinity are not among
    /// them, even those that stalled or where Newton did not converge: re-tracking those
    /// (tighter steps, up to 64× the steps, the last round in double-double) makes cyclic-10's
    /// recovery take minutes.
    pub fn suspects(&self) -> Vec<u64> {
        let mut out: Vec<u64> = self
            .distinct()
            .iter()
            .filter(|s| s.status == Status::Nonsingular && s.paths.len() > 1)
            .flat_map(|s| s.paths.iter().copied())
            .collect();
        out.extend(
            self.records
                .iter()
                .filter(|r| r.status == Status::Failed)
                .map(|r| r.path),
        );
        out.sort_unstable();
        out
    }

    /// The `k` paths whose nonsingular endpoints are nearest to `path`'s (sup norm), among
    /// those `keep` accepts, nearest first; none when `path` has no nonsingular endpoint.
    /// The neighbours of a path displaced by a re-tracked one (`solver::cascade`).
    pub fn nearest_nonsingular(&self, path: u64, k: usize, keep: impl Fn(u64) -> bool) -> Vec<u64> {
        let Some(x) = self
            .index
            .get(&path)
            .map(|&i| &self.records[i])
            .filter(|r| r.status == Status::Nonsingular)
            .and_then(|r| r.coords.as_deref())
        else {
            return Vec::new();
        };
        let mut near: Vec<(f64, u64)> = self
            .records
            .iter()
            .filter(|r| r.path != path && r.status == Status::Nonsingular && keep(r.path))
            .filter_map(|r| {
                let c = r.coords.as_deref()?;
                let d = c
                    .iter()
                    .zip(x)
                    .map(|(a, b)| (a - b).norm())
                    .fold(0.0, f64::max);
                Some((d, r.path))
            })
            .collect();
        near.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        near.into_iter().take(k).map(|(_, p)| p).collect()
    }

    /// Paths put at infinity by an estimate at a point of condition at least `min_cond`: the
    /// candidates for verification in double-double (see
    /// [`crate::solver::VERIFY_DIVERGING_COND`]), in path order.
    pub fn estimated_at_infinity(&self, min_cond: f64) -> Vec<u64> {
        let mut out: Vec<u64> = self
            .records
            .iter()
            .filter(|r| r.estimated_at_infinity && r.condition >= min_cond)
            .map(|r| r.path)
            .collect();
        out.sort_unstable();
        out
    }

    /// Paths that ended at infinity (reached or estimated) or failed, in path order: the
    /// candidates for roots of another start when a run falls short of its root count
    /// (`solver::fallback`).
    pub fn paths_without_root(&self) -> Vec<u64> {
        let mut out: Vec<u64> = self
            .records
            .iter()
            .filter(|r| matches!(r.status, Status::AtInfinity | Status::Failed))
            .map(|r| r.path)
            .collect();
        out.sort_unstable();
        out
    }

    /// Records of the endpoints with `status`, in path order.
    fn records_with(&self, status: Status) -> Vec<&Record> {
        let mut v: Vec<&Record> = self.records.iter().filter(|r| r.status == status).collect();
        v.sort_unstable_by_key(|r| r.path);
        v
    }

    /// Clusters of the records (labels from [`dedup::cluster`]) as distinct solutions.
    fn clusters(recs: &[&Record], tol: f64, status: Status) -> Vec<Solution> {
        let pts: Vec<&[C64]> = recs
            .iter()
            .map(|r| r.coords.as_deref().expect("finite record"))
            .collect();
        let tols: Vec<f64> = recs.iter().map(|r| r.tolerance(tol, status)).collect();
        let labels = dedup::cluster_with(&pts, &tols);
        let mut at = std::collections::HashMap::<usize, usize>::new();
        let mut out: Vec<(Solution, (f64, f64))> = Vec::new();
        for (&l, r) in labels.iter().zip(recs) {
            let k = *at.entry(l).or_insert_with(|| {
                out.push((
                    Solution {
                        status,
                        coordinates: std::sync::Arc::from([]),
                        paths: Vec::with_capacity(1),
                        winding_numbers: Vec::new(),
                        residual: f64::INFINITY,
                        condition: f64::NAN,
                        rank: None,
                        real: false,
                        refined_dd: true,
                    },
                    (f64::INFINITY, f64::INFINITY),
                ));
                out.len() - 1
            });
            let (sol, best) = &mut out[k];
            sol.paths.push(r.path);
            sol.winding_numbers.extend(r.winding);
            sol.refined_dd &= r.refined_dd;
            let res = if r.residual.is_nan() {
                f64::MAX
            } else {
                r.residual
            };
            // A singular cluster is represented by its most accurate endpoint (a Cauchy
            // estimate, not a point where a path stalled inside the disc that double
            // precision cannot resolve around a root of high multiplicity, whose residual
            // is as small).
            let err = if status == Status::Singular && r.error.is_finite() {
                r.error
            } else if status == Status::Singular {
                f64::MAX
            } else {
                0.0
            };
            if (err, res) < *best || sol.coordinates.is_empty() {
                *best = (err, res);
                sol.coordinates = r.coords.clone().expect("finite record");
                sol.residual = r.residual;
                sol.condition = r.condition;
                sol.rank = r.rank;
            }
        }
        out.into_iter()
            .map(|(mut s, _)| {
                s.real = is_real(&s.coordinates, tol.max(REAL_TOL));
                s
            })
            .collect()
    }

    /// The distinct finite solutions: nonsingular endpoints clustered at [`DEDUP_TOL`],
    /// singular ones at [`DEDUP_TOL_SINGULAR`]; a nonsingular cluster of several paths whose
    /// condition number exceeds [`CLUSTER_SINGULAR_COND`] is singular (unless all its endpoints
    /// were refined in double-double: see [`Solution::refined_dd`]). A singular cluster
    /// that lies on a nonsingular solution joins it as singular.
    pub fn solutions(&self) -> Vec<Solution> {
        self.distinct().to_vec()
    }

    /// Finite roots with multiplicity (a nonsingular solution once, however many paths
    /// reached it; a singular one with each of its paths), and the nonsingular solutions
    /// alone, from [`Self::solutions`] without copying them.
    pub fn finite_with_multiplicity(&self) -> (u64, u64) {
        self.distinct()
            .iter()
            .fold((0, 0), |(f, n), s| match s.status {
                Status::Nonsingular => (f + 1, n + 1),
                Status::Singular => (f + s.multiplicity() as u64, n),
                _ => (f, n),
            })
    }

    /// The singular ones of [`Self::solutions`] (copied: not all of them, as cyclic-12's
    /// 3.7·10⁵).
    pub fn singular_solutions(&self) -> Vec<Solution> {
        self.distinct()
            .iter()
            .filter(|s| s.status == Status::Singular)
            .cloned()
            .collect()
    }

    /// The singular solutions whose endpoints are all singular (a cluster holding a
    /// nonsingular endpoint is an isolated solution), each as its coordinates and its
    /// endpoints: what the local dimension test (`post::local_dimension::relabel`) decides.
    pub fn singular_clusters(&self) -> Vec<(Vec<C64>, Vec<Endpoint>)> {
        self.singular_solutions()
            .into_iter()
            .filter_map(|s| {
                let ends: Option<Vec<Endpoint>> =
                    s.paths.iter().map(|&p| self.endpoint(p)).collect();
                ends.filter(|e| e.iter().all(|e| e.status == Status::Singular))
                    .map(|e| (s.coordinates.to_vec(), e))
            })
            .collect()
    }

    /// [`Self::solutions`] without a copy: the clusters computed already are moved out and
    /// the records freed (at the end of a solve, where the copy was a third of the memory
    /// per path: docs/performance.md).
    pub fn into_solutions(mut self) -> Vec<Solution> {
        match self.clustered.take() {
            Some(s) => s,
            None => self.cluster(),
        }
    }

    /// [`Self::solutions`], clustered once per state of the records.
    fn distinct(&self) -> &[Solution] {
        self.clustered.get_or_init(|| self.cluster())
    }

    /// See [`Self::solutions`].
    fn cluster(&self) -> Vec<Solution> {
        let ns = self.records_with(Status::Nonsingular);
        let sg = self.records_with(Status::Singular);
        let mut out = Self::clusters(&ns, DEDUP_TOL, Status::Nonsingular);
        for s in out.iter_mut() {
            if s.paths.len() > 1 && !s.refined_dd && !(s.condition <= CLUSTER_SINGULAR_COND) {
                s.status = Status::Singular;
            }
        }
        // A singular cluster joins the first nonsingular solution within DEDUP_TOL_SINGULAR.
        // None joins another singular cluster: those are apart at that tolerance already.
        let singular = Self::clusters(&sg, DEDUP_TOL_SINGULAR, Status::Singular);
        let near = {
            let targets: Vec<&[C64]> = out.iter().map(|t| &t.coordinates[..]).collect();
            let queries: Vec<&[C64]> = singular.iter().map(|s| &s.coordinates[..]).collect();
            dedup::first_close(&targets, &queries, DEDUP_TOL_SINGULAR)
        };
        for (s, near) in singular.into_iter().zip(near) {
            match near.map(|k| &mut out[k]) {
                Some(t) => {
                    t.status = Status::Singular;
                    t.paths.extend(&s.paths);
                    t.paths.sort_unstable();
                    t.winding_numbers.extend(&s.winding_numbers);
                }
                None => out.push(s),
            }
        }
        out
    }

    /// Clusters the finite endpoints into distinct solutions.
    pub fn counts(&self) -> Counts {
        let sols = self.distinct();
        let count = |st: Status| self.records.iter().filter(|r| r.status == st).count() as u64;
        let distinct = |st: Status| sols.iter().filter(|s| s.status == st).count() as u64;
        let real = |st: Status| sols.iter().filter(|s| s.status == st && s.real).count() as u64;
        Counts {
            paths: self.records.len() as u64,
            nonsingular: distinct(Status::Nonsingular),
            singular: distinct(Status::Singular),
            real: sols.iter().filter(|s| s.real).count() as u64,
            real_nonsingular: real(Status::Nonsingular),
            real_singular: real(Status::Singular),
            at_infinity: count(Status::AtInfinity),
            outside_torus: count(Status::OutsideTorus),
            positive_dimensional: count(Status::PositiveDimensional),
            failed: count(Status::Failed),
            duplicate_paths: sols
                .iter()
                .filter(|s| s.status == Status::Nonsingular)
                .map(|s| s.paths.len() as u64 - 1)
                .sum(),
        }
    }
}

/// Why the counts of `s` may be incomplete or doubtful, one sentence each: failed paths
/// (their solutions may be missing), nonsingular solutions that several paths still share
/// after recovery (path jumping: another solution may be missing), coefficients rounded to
/// doubles (the system solved is not the one written). Empty: every path ended at a
/// classified endpoint of the system as written.
pub fn attention(s: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    if s.failed > 0 {
        out.push(format!(
            "{} path{} failed: the solutions they lead to may be missing from the counts",
            s.failed,
            if s.failed == 1 { "" } else { "s" }
        ));
    }
    if s.duplicate_paths > 0 {
        out.push(format!(
            "{} path{} share a nonsingular solution with another (path jumping): solutions may \
             be missing",
            s.duplicate_paths,
            if s.duplicate_paths == 1 { "" } else { "s" }
        ));
    }
    if !s.warnings.is_empty() {
        out.push(format!(
            "coefficients rounded to doubles in {} equation{}: the system solved is not the one \
             written (warnings)",
            s.warnings.len(),
            if s.warnings.len() == 1 { "" } else { "s" }
        ));
    }
    out
}

/// The summary as a human-readable table, plain as HomotopyContinuation.jl's: the root
/// counts on their own lines, the start system, then paths tracked, nonsingular and
/// singular solutions (real ones in parentheses), at infinity, failed. The cells of the
/// lifting, re-tracking counts and where the seconds went are in [`summary_details`].
pub fn summary_table(s: &Summary) -> String {
    let mut t = String::new();
    let row = |t: &mut String, k: &str, v: String| t.push_str(&table_row(k, &v));
    t.push_str(&format!(
        "pathtrack: {} ({} variables)\n",
        s.system, s.variables
    ));
    // What went wrong first, where it is read (recomputed: the counts may have changed
    // since the solve, e.g. by `--witness`).
    for a in attention(s) {
        row(&mut t, "ATTENTION", a);
    }
    for w in &s.warnings {
        row(&mut t, "  warning", w.clone());
    }
    // The known counts from the largest bound to the sharpest, then any other.
    const ORDER: [&str; 5] = [
        "total_degree",
        "mhom_bezout",
        "partition",
        "mixed_volume",
        "stable_mixed_volume",
    ];
    let rank = |k: &str| ORDER.iter().position(|o| *o == k).unwrap_or(ORDER.len());
    let mut counts: Vec<_> = s
        .root_counts
        .iter()
        .filter(|(k, _)| !k.ends_with("cells"))
        .collect();
    counts.sort_by_key(|(k, _)| rank(k));
    for (k, v) in counts {
        let shown = match v {
            serde_json::Value::String(text) => text.clone(),
            v => v.to_string(),
        };
        row(&mut t, &root_count_name(k), shown);
    }
    row(&mut t, "start system", s.start.clone());
    if let Some(why) = &s.start_reason {
        row(&mut t, "  chosen (auto)", why.clone());
    }
    row(&mut t, "paths tracked", s.paths.to_string());
    row(
        &mut t,
        "nonsingular solutions",
        format!("{} ({} real)", s.nonsingular, s.real_nonsingular),
    );
    row(
        &mut t,
        "singular solutions",
        format!("{} ({} real)", s.singular, s.real_singular),
    );
    if s.positive_dimensional > 0 {
        row(
            &mut t,
            "positive-dimensional",
            format!("{} paths", s.positive_dimensional),
        );
    }
    row(&mut t, "at infinity", s.at_infinity.to_string());
    if let Some(k) = s.outside_torus {
        row(&mut t, "outside (C*)^n", k.to_string());
    }
    row(&mut t, "failed", s.failed.to_string());
    for (why, count) in &s.failed_reasons {
        row(&mut t, &format!("  {count} ×"), why.clone());
    }
    row(&mut t, "backend", s.backend.clone());
    row(&mut t, "seed", s.seed.to_string());
    row(&mut t, "seconds", format!("{:.3}", s.seconds));
    t
}

/// The row name of a root count key: `total_degree` is "total degree", `mhom_bezout`
/// "m-hom Bézout".
fn root_count_name(key: &str) -> String {
    match key {
        "mhom_bezout" => "m-hom Bézout".into(),
        "partition" => "  partition".into(),
        k => k.replace('_', " "),
    }
}

/// The rows `solve --verbose` adds under [`summary_table`]: the cells of the lifting,
/// re-tracked paths, the GPU kernels, and where the seconds went.
pub fn summary_details(s: &Summary) -> String {
    let mut t = String::new();
    let row = |t: &mut String, k: &str, v: String| t.push_str(&table_row(k, &v));
    for (k, v) in s.root_counts.iter().filter(|(k, _)| k.ends_with("cells")) {
        row(&mut t, &root_count_name(k), v.to_string());
    }
    row(&mut t, "finite solutions", s.finite.to_string());
    if s.retracked > 0 {
        row(
            &mut t,
            "re-tracked paths",
            if s.retracked_early > 0 {
                format!(
                    "{}, {} of them during the first pass; {} gave a solution they had not",
                    s.retracked, s.retracked_early, s.recovered
                )
            } else {
                format!(
                    "{}; {} gave a solution they had not",
                    s.retracked, s.recovered
                )
            },
        );
    }
    if s.duplicate_paths > 0 {
        row(
            &mut t,
            "duplicate endpoints",
            format!("{} (possible path jumping)", s.duplicate_paths),
        );
    }
    if let Some(k) = &s.kernels {
        row(&mut t, "GPU kernels", k.clone());
    }
    let ph = &s.phases;
    // The GPU's set-up only where a GPU tracked (a CPU run has none to speak of).
    let setup = match s.backend.as_str() {
        "cpu" => String::new(),
        _ => format!(", GPU set-up {:.3}", ph.backend_setup),
    };
    row(
        &mut t,
        "seconds by phase",
        format!(
            "start system {:.3}{setup}, tracking {:.3}, re-tracking {:.3}",
            ph.start_system, ph.tracking, ph.recovery
        ),
    );
    let u = &ph.tracking_usage;
    row(
        &mut t,
        "tracking used",
        match u.gpu_busy_percent {
            Some(g) => format!("{:.1} host cores, GPU busy {g:.0} %", u.host_cores),
            None => format!("{:.1} host cores", u.host_cores),
        },
    );
    if !ph.recovery_rounds.is_empty() {
        let rounds: Vec<String> = ph
            .recovery_rounds
            .iter()
            .map(|r| {
                format!(
                    "{} paths {:.3} (found in {:.3})",
                    r.paths, r.seconds, r.finding_seconds
                )
            })
            .collect();
        row(&mut t, "re-tracking rounds", rounds.join(", "));
    }
    if let Some(g) = &ph.gap_recovery {
        row(
            &mut t,
            "gap recovery",
            format!(
                "finite {} → {} of bound {}: {} of {} paths at infinity tracked again, {} \
                 steps of {} ({}), {:.3}",
                g.finite_before,
                g.finite_after,
                g.bound,
                g.retracked,
                g.candidates,
                g.steps,
                g.budget,
                g.stopped,
                g.seconds
            ),
        );
    }
    for d in &ph.devices {
        row(
            &mut t,
            &d.device,
            format!(
                "{} paths in {} batches, busy {:.3} (setup {:.3})",
                d.paths, d.batches, d.busy_seconds, d.setup_seconds
            ),
        );
    }
    t
}

/// One row of the summary table: `  key  value`.
pub fn table_row(k: &str, v: &str) -> String {
    format!("  {k:<22} {v}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nonsingular(path: u64, x: [f64; 2]) -> Endpoint {
        Endpoint {
            coordinates: Some(x.iter().map(|&v| C64::new(v, 0.5)).collect()),
            residual: 1e-15,
            condition: 10.0,
            ..Endpoint::new(path, Status::Nonsingular)
        }
    }

    /// A path at infinity that ends at infinity again keeps the clusters (they read the
    /// finite records only); one that ends at a root, or a root that leaves, does not.
    #[test]
    fn clusters_follow_the_finite_records_only() {
        let mut tally = Tally::default();
        tally.add(&nonsingular(0, [1.0, 2.0]));
        tally.add(&Endpoint::new(1, Status::AtInfinity));
        assert_eq!(tally.finite_with_multiplicity(), (1, 1));
        tally.add(&Endpoint::new(1, Status::Failed));
        assert!(tally.clustered.get().is_some(), "kept");
        assert_eq!(tally.finite_with_multiplicity(), (1, 1));
        tally.add(&nonsingular(1, [3.0, -1.0]));
        assert_eq!(tally.finite_with_multiplicity(), (2, 2));
        tally.add(&Endpoint::new(0, Status::AtInfinity));
        assert_eq!(tally.finite_with_multiplicity(), (1, 1));
        let paths: Vec<Vec<u64>> = tally.solutions().into_iter().map(|s| s.paths).collect();
        assert_eq!(paths, vec![vec![1]]);
    }

    /// The solutions moved out of a tally are those a copy gives, clustered before or not.
    #[test]
    fn moved_solutions_equal_copied_ones() {
        let make = || {
            let mut tally = Tally::default();
            tally.add(&nonsingular(0, [1.0, 2.0]));
            tally.add(&nonsingular(1, [1.0 + 1e-12, 2.0]));
            tally.add(&nonsingular(2, [3.0, -1.0]));
            tally
        };
        let key = |s: &[Solution]| {
            s.iter()
                .map(|s| (s.paths.clone(), s.coordinates.clone()))
                .collect::<Vec<_>>()
        };
        let clustered = make();
        let copy = clustered.solutions();
        assert_eq!(copy.len(), 2);
        assert_eq!(key(&clustered.into_solutions()), key(&copy));
        assert_eq!(
            key(&make().into_solutions()),
            key(&copy),
            "not clustered before"
        );
    }

    /// The clusters are computed once per state of the records: reading them twice gives the
    /// same, and replacing a path's endpoint (as a recovery round does) clusters again.
    #[test]
    fn a_replaced_endpoint_is_clustered_again() {
        let mut tally = Tally::default();
        tally.add(&nonsingular(0, [1.0, 2.0]));
        tally.add(&nonsingular(1, [1.0 + 1e-12, 2.0]));
        tally.add(&nonsingular(2, [3.0, -1.0]));
        assert_eq!(
            tally.suspects(),
            vec![0, 1],
            "paths 0 and 1 share a solution"
        );
        let c = tally.counts();
        assert_eq!((c.nonsingular, c.duplicate_paths), (2, 1));
        assert_eq!(tally.solutions().len(), 2);
        tally.add(&nonsingular(1, [-2.0, 0.25]));
        assert!(
            tally.suspects().is_empty(),
            "path 1 moved to its own solution"
        );
        let c = tally.counts();
        assert_eq!((c.nonsingular, c.duplicate_paths), (3, 0));
        let mut paths: Vec<Vec<u64>> = tally.solutions().into_iter().map(|s| s.paths).collect();
        paths.sort();
        assert_eq!(paths, vec![vec![0], vec![1], vec![2]]);
    }

    /// The real solutions are split by status: a real and a complex nonsingular solution,
    /// a real singular solution reached by two paths, a complex singular one; realness is
    /// the imaginary parts' size relative to the point's (1e-8), so 1e-12 is real.
    #[test]
    fn real_solutions_are_split_by_status() {
        let at = |path: u64, status: Status, x: [(f64, f64); 2]| Endpoint {
            coordinates: Some(x.iter().map(|&(re, im)| C64::new(re, im)).collect()),
            residual: 1e-15,
            condition: if status == Status::Singular {
                1e14
            } else {
                10.0
            },
            ..Endpoint::new(path, status)
        };
        let mut tally = Tally::default();
        tally.add(&at(0, Status::Nonsingular, [(1.0, 0.0), (-2.0, 1e-12)]));
        tally.add(&at(1, Status::Nonsingular, [(1.0, 0.5), (-2.0, 0.0)]));
        tally.add(&at(2, Status::Singular, [(3.0, 0.0), (4.0, 0.0)]));
        tally.add(&at(3, Status::Singular, [(3.0 + 1e-9, 0.0), (4.0, 0.0)]));
        tally.add(&at(4, Status::Singular, [(3.0, 2.0), (4.0, 0.0)]));
        let c = tally.counts();
        assert_eq!((c.nonsingular, c.real_nonsingular), (2, 1));
        assert_eq!((c.singular, c.real_singular), (2, 1));
        assert_eq!(c.real, c.real_nonsingular + c.real_singular);
    }

    /// Failed paths are counted by the kind of their reason (numbers as `#`), and a path
    /// that a recovery round moves to a solution no longer counts.
    #[test]
    fn failed_paths_are_counted_by_reason() {
        let failed = |path: u64, why: &str| Endpoint {
            reason: Some(why.into()),
            ..Endpoint::new(path, Status::Failed)
        };
        let mut tally = Tally::default();
        tally.add(&failed(0, "step size underflow (h = 1.2e-15)"));
        tally.add(&failed(1, "step size underflow (h = 3e-16)"));
        tally.add(&failed(2, crate::track::TIME_BOUND_REASON));
        tally.add(&nonsingular(3, [1.0, 2.0]));
        let m = tally.failed_reasons();
        assert_eq!(m.len(), 2, "{m:?}");
        let underflow = crate::track::reason_kind("step size underflow (h = 1e-9)");
        assert_eq!(m[&underflow], 2, "{m:?}");
        assert_eq!(m.values().sum::<u64>(), tally.counts().failed);
        tally.add(&nonsingular(1, [3.0, 2.0]));
        assert_eq!(tally.failed_reasons()[&underflow], 1);
    }
}
