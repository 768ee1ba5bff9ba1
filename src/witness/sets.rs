//! Witness sets for every dimension, top-down, by [`Method`]: the cascade
//! (`witness::cascade`) or the "dimension by dimension" approach of Sommese–Wampler's book,
//! here: for `d = top, …, lowest` the square
//! system `[R·F; L]` of `n − d` random combinations of `F` and `d` random hyperplanes is
//! solved; of its finite solutions
//!
//! 1. those with `F`'s double-double residual above [`super::excess::EXCESS_RESIDUAL_TOL`]
//!    are dropped (zeros of `R·F` only);
//! 2. a singular one that lies on a component of larger dimension `e > d` is dropped
//!    (junk): such a point lies on the positive-dimensional set `Z_e ∩ V(L)` of solutions
//!    of `[R·F; L]`, and the homotopy membership test against the witness set of `Z_e`
//!    ([`super::membership`]) finds it. A nonsingular solution is never junk: through a
//!    point of `Z_e`, `e > d`, the solutions of `[R·F; L]` form a set of dimension `e − d`,
//!    where its Jacobian is singular.
//!
//! What remains are the witness points of `Z_d`, each with the number of paths that ended
//! there. Dimensions below `n − N` are empty (every component of `N` equations has dimension
//! at least `n − N`) and are skipped.

use super::excess::{dd_relative_residual, EXCESS_RESIDUAL_TOL};
use super::membership::on_set;
use super::moving::Mover;
use super::slices::{sliced_system, Randomization, Slices};
use super::{rng, Stream, WitnessSet};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::post::Status;
use crate::report::Solution;
use crate::solver::{solve, SolveOptions};
use crate::system::System;
use crate::track::TrackerOptions;
use num_complex::Complex64 as C64;
use serde::Serialize;

/// What the search for one dimension found besides its witness points.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DimensionReport {
    pub dimension: usize,
    /// Paths tracked to solve `[R·F; L]`.
    pub paths: u64,
    /// Its distinct finite solutions.
    pub finite: usize,
    /// Of those, solutions of `R·F` only.
    pub excess: usize,
    /// Of those, points on components of larger dimension.
    pub junk: usize,
    /// The witness points left: `deg Z_d`.
    pub degree: usize,
    /// Cascade: the solutions off the slices (nonsolutions) that start the next dimension's
    /// paths (0 for the dimension-by-dimension method).
    pub nonsolutions: usize,
    /// Paths tracked by membership tests (junk removal).
    pub membership_paths: u64,
    pub seconds: f64,
}

/// How the witness supersets are found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// One square system `[R·F; L]` per dimension, each solved from its own start system.
    #[default]
    Dimensions,
    /// The Sommese–Verschelde cascade: one start system for the top dimension, then only the
    /// paths of its nonsolutions, one dimension after the other.
    Cascade,
}

/// Which dimensions to compute, and how.
#[derive(Clone, Debug)]
pub struct WitnessOptions {
    pub method: Method,
    pub seed: u64,
    /// The largest dimension looked at (default `n − 1`): nothing of larger dimension is
    /// assumed to exist.
    pub top: Option<usize>,
    /// The smallest dimension computed (default 0).
    pub lowest: usize,
    /// How each `[R·F; L]` is solved (start system, tracker, threads, limits); its seed is
    /// `seed`.
    pub solve: SolveOptions,
}

/// The range of dimensions `(lowest, top)` worth computing for `system`, or an error naming
/// the bad request.
pub fn dimension_range(system: &System, opts: &WitnessOptions) -> Result<(usize, usize)> {
    let n = system.n();
    let big_n = system.equations.len();
    let top = opts.top.unwrap_or(n.saturating_sub(1));
    if top >= n {
        return Err(Error::Usage(format!(
            "--top-dimension {top}: the solution sets of {} in {n} variables have dimension \
             at most {}",
            system.name,
            n - 1
        )));
    }
    if opts.lowest > top {
        return Err(Error::Usage(format!(
            "--dimension {} is above the top dimension {top}",
            opts.lowest
        )));
    }
    let floor = n.saturating_sub(big_n);
    Ok((opts.lowest.max(floor), top))
}

/// The witness sets of dimensions `top` down to `lowest` ([`dimension_range`]), highest
/// first, dimension by dimension, each `[R·F; L]` from its own start system.
pub fn by_dimension(
    system: &System,
    opts: &WitnessOptions,
    backend: &mut dyn Backend,
    progress: &mut dyn FnMut(usize),
) -> Result<(Vec<WitnessSet>, Vec<DimensionReport>)> {
    let (lowest, top) = dimension_range(system, opts)?;
    let n = system.n();
    let mut sets: Vec<WitnessSet> = Vec::new();
    let mut reports = Vec::new();
    for d in (lowest..=top).rev() {
        progress(d);
        let clock = std::time::Instant::now();
        let mut r = rng(opts.seed, Stream::Slices(d));
        let randomization = Randomization::new(system, n - d, &mut r);
        let slices = Slices::random(d, n, &mut r);
        let sliced = sliced_system(system, &randomization, &slices);
        let mut solve_opts = opts.solve.clone();
        solve_opts.seed = opts.seed;
        solve_opts.local_dimension = false; // junk is told by membership below
        let summary = solve(&sliced, &solve_opts, backend, &mut |_: &_| Ok(()))?;
        let mut report = DimensionReport {
            dimension: d,
            paths: summary.paths,
            finite: summary.solutions.len(),
            ..Default::default()
        };
        let (points, multiplicities) = clean_candidates(
            system,
            &summary.solutions,
            &sets,
            &solve_opts.tracker,
            opts.seed,
            backend,
            &mut report,
        )?;
        report.degree = points.len();
        report.seconds = clock.elapsed().as_secs_f64();
        reports.push(report);
        sets.push(WitnessSet {
            dimension: d,
            randomization,
            slices,
            points,
            multiplicities,
        });
    }
    Ok((sets, reports))
}

/// A solution of condition number above this is tested for junk even where the solve called
/// it nonsingular: Newton converges quadratically onto a positive-dimensional solution set
/// too (as a Gauss–Newton iteration onto a manifold), so that a point of the line
/// `{z = 0} ∩ L` of the cascade's `E_1` for `xz, yz` came back "nonsingular" at κ = ∞.
pub const JUNK_TEST_COND: f64 = 1e8;

/// Whether `s` may be a singular solution (and so junk): not nonsingular, or of condition
/// above [`JUNK_TEST_COND`] (or unknown).
fn maybe_singular(s: &Solution) -> bool {
    s.status != Status::Nonsingular || s.condition.is_nan() || s.condition > JUNK_TEST_COND
}

/// The witness points of `Z_d` among `candidates` (finite solutions of a square system whose
/// isolated solutions hold them): those where `F` vanishes (else counted `excess`) and, when
/// singular, on no witness set of `higher` (else counted `junk`), each with the number of
/// paths that ended there.
pub(crate) fn clean_candidates(
    system: &System,
    candidates: &[Solution],
    higher: &[WitnessSet],
    tracker: &TrackerOptions,
    seed: u64,
    backend: &mut dyn Backend,
    report: &mut DimensionReport,
) -> Result<(Vec<Vec<C64>>, Vec<usize>)> {
    let mut points = Vec::new();
    let mut multiplicities = Vec::new();
    for s in candidates {
        if dd_relative_residual(system, &s.coordinates) > EXCESS_RESIDUAL_TOL {
            report.excess += 1;
            continue;
        }
        if maybe_singular(s) {
            let mut junk = false;
            for w in higher.iter().filter(|w| w.degree() > 0) {
                let mut mover = Mover::new(
                    w.randomization.apply(system),
                    system.variables.clone(),
                    tracker.clone(),
                    backend,
                );
                let hit = on_set(&mut mover, w, &s.coordinates, seed)?;
                report.membership_paths += mover.paths;
                if hit.is_some() {
                    junk = true;
                    break;
                }
            }
            if junk {
                report.junk += 1;
                continue;
            }
        }
        points.push(s.coordinates.to_vec());
        multiplicities.push(s.multiplicity());
    }
    Ok((points, multiplicities))
}
