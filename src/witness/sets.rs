//! Witness sets for every dimension, top-down (the "dimension by dimension" approach of
//! Sommese–Wampler's book, without the cascade): for `d = top, …, lowest` the square
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
use crate::solver::{solve, SolveOptions};
use crate::system::System;
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
    /// Paths tracked by membership tests (junk removal).
    pub membership_paths: u64,
    pub seconds: f64,
}

/// Which dimensions to compute.
#[derive(Clone, Debug)]
pub struct WitnessOptions {
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
/// first, each with its report; `progress` hears each dimension as it starts.
pub fn witness_sets(
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
        let mut points = Vec::new();
        let mut multiplicities = Vec::new();
        for s in &summary.solutions {
            if dd_relative_residual(system, &s.coordinates) > EXCESS_RESIDUAL_TOL {
                report.excess += 1;
                continue;
            }
            if s.status != Status::Nonsingular {
                let mut junk = false;
                for w in sets.iter().filter(|w| w.degree() > 0) {
                    let mut mover = Mover::new(
                        w.randomization.apply(system),
                        system.variables.clone(),
                        solve_opts.tracker.clone(),
                        backend,
                    );
                    let hit = on_set(&mut mover, w, &s.coordinates, opts.seed)?;
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
            points.push(s.coordinates.clone());
            multiplicities.push(s.multiplicity());
        }
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
