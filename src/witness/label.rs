//! `solve --witness W`: the singular solutions of a square solve that lie on a
//! positive-dimensional component of `W` are no isolated solutions; they leave the
//! solutions and their paths are counted as `positive_dimensional`. (A nonsingular solution
//! is isolated and never tested.) The test is the homotopy membership test of
//! [`super::membership`]; it decides what the solve's local dimension test
//! ([`crate::post::local_dimension`]) left singular.

use super::file::WitnessFile;
use super::membership::on_set;
use super::moving::Mover;
use crate::backend::Backend;
use crate::error::Result;
use crate::post::Status;
use crate::report::Summary;
use crate::system::System;
use crate::track::TrackerOptions;

/// Removes from `summary` the singular solutions on a component of dimension ≥ 1 of `file`
/// (its solutions and the counts of finite, singular and real ones; their paths join
/// `positive_dimensional`); returns how many solutions.
pub fn remove_positive_dimensional(
    system: &System,
    file: &WitnessFile,
    summary: &mut Summary,
    backend: &mut dyn Backend,
    tracker: &TrackerOptions,
) -> Result<u64> {
    let mut kept = Vec::new();
    let mut removed = 0;
    for s in std::mem::take(&mut summary.solutions) {
        let mut on = false;
        if s.status == Status::Singular {
            for w in file
                .sets
                .iter()
                .filter(|w| w.dimension > 0 && w.degree() > 0)
            {
                let mut mover = Mover::new(
                    w.randomization.apply(system),
                    system.variables.clone(),
                    tracker.clone(),
                    backend,
                );
                if on_set(&mut mover, w, &s.coordinates, file.seed)?.is_some() {
                    on = true;
                    break;
                }
            }
        }
        if on {
            removed += 1;
            summary.positive_dimensional += s.paths.len() as u64;
            summary.uncount(&s);
        } else {
            kept.push(s);
        }
    }
    summary.solutions = kept;
    Ok(removed)
}
