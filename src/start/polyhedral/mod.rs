//! Polyhedral homotopy combinatorics (Huber–Sturmfels): supports, random liftings, the
//! mixed cells of the induced fine mixed subdivision, the (stable) mixed volume, and the
//! binomial start systems of the cells. Fully mixed supports are enumerated by a tropical
//! homotopy in exact integers (`tropical.rs`), the others by a tree search. Every pruning
//! and every cell is decided or verified exactly (a float tableau whose "infeasible" answers carry integer Farkas certificates
//! checked in `i128`; exact LPs and exact leaf checks with overflow-checked `i128` and a
//! `BigInt` fallback). See docs/mixed-cells.md.
//!
//! Entry points: [`Supports::from_system`], [`Lifting::random`] / [`Lifting::stable`],
//! [`mixed_cells()`] (a stream of [`MixedCell`]s), [`mixed_volume`],
//! [`stable_mixed_volume`], [`binomial::binomial_solutions`].

pub mod binomial;
pub mod exact;
pub mod lifting;
pub mod lp;
pub mod mixed_cells;
pub mod modular;
mod ordered_dfs;
pub mod start;
mod tableau;
mod tropical;

pub use binomial::{binomial_solutions, for_each_binomial_solution};
pub use lifting::{Lifting, Supports};
pub use mixed_cells::{
    mixed_cells, mixed_cells_in, mixed_cells_perturbed, CellStats, MixedCell, SearchMode,
};

use crate::system::System;
use std::ops::ControlFlow;

/// Errors of the mixed-cell computation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CellError {
    /// Bad input (names the equation / term).
    #[error("{0}")]
    Input(String),
    /// The lifting is not generic (an exact tie was detected); draw another.
    #[error("non-generic lifting: {0}")]
    NonGeneric(String),
    /// The `big` part of a stable lifting does not make the subdivision refine the
    /// Huber–Sturmfels coarse subdivision; retry with a larger one.
    #[error("stable lifting: the origin's lift is too small")]
    LiftingTooSmall,
    #[error("{0}")]
    Internal(String),
}

impl From<CellError> for crate::Error {
    fn from(e: CellError) -> Self {
        match e {
            CellError::Input(m) => crate::Error::Usage(format!("mixed cells: {m}")),
            e => crate::Error::Internal(format!("mixed cells: {e}")),
        }
    }
}

/// How many liftings are tried before giving up on genericity.
pub const MAX_REDRAWS: u64 = 16;

/// Mixed volume in the torus: `Σ |det|` over the mixed cells of a random lifting
/// (`seed`), on `threads` threads (0: all cores). Exact ties of the lifting are resolved by
/// the symbolic perturbation of [`mixed_cells_perturbed`] (fully mixed supports); the
/// lifting is redrawn (`seed + 1, …`) only when the tree search (semi-mixed supports)
/// meets one.
pub fn mixed_volume_of(s: &Supports, seed: u64, threads: usize) -> Result<CellStats, CellError> {
    let mut last = None;
    for attempt in 0..MAX_REDRAWS {
        let lift = Lifting::random(s, seed.wrapping_add(attempt));
        match mixed_cells_perturbed(s, &lift, threads, &mut |_| ControlFlow::Continue(())) {
            Err(CellError::NonGeneric(m)) => last = Some(m),
            r => return r,
        }
    }
    Err(CellError::NonGeneric(format!(
        "{MAX_REDRAWS} liftings in a row: {}",
        last.unwrap_or_default()
    )))
}

/// Stable mixed volume (Huber–Sturmfels): the origin is added to every support that lacks
/// it, the added origins are lifted by `big` (starting at 2^32, raised while the exact
/// refinement check fails) plus a random generic part, every other point (a constant term
/// of the system included) by its generic part alone, and the volumes of the cells whose
/// coarse inner normal is `≥ 0` are summed (ties resolved as in [`mixed_volume_of`]). For
/// generic coefficients this is the number of isolated solutions in `C^n` with
/// multiplicity; where every support has the origin it is the mixed volume (Li–Wang).
pub fn stable_mixed_volume_of(
    s: &Supports,
    seed: u64,
    threads: usize,
) -> Result<CellStats, CellError> {
    let s0 = s.with_origin();
    let mut big: i64 = 1 << 32;
    let mut last = None;
    for attempt in 0..MAX_REDRAWS {
        let lift = Lifting::stable(&s0, seed.wrapping_add(attempt), big);
        match mixed_cells_perturbed(&s0, &lift, threads, &mut |_| ControlFlow::Continue(())) {
            Err(CellError::NonGeneric(m)) => last = Some(m),
            Err(CellError::LiftingTooSmall) if big < 1 << 60 => {
                big <<= 4;
                last = Some("origin lift too small".into());
            }
            r => return r,
        }
    }
    Err(CellError::NonGeneric(format!(
        "{MAX_REDRAWS} liftings in a row: {}",
        last.unwrap_or_default()
    )))
}

/// Mixed volume of `sys` in `(C*)^n` (all cores).
pub fn mixed_volume(sys: &System, seed: u64) -> crate::Result<u128> {
    let s = Supports::from_system(sys)?;
    Ok(mixed_volume_of(&s, seed, 0)?.mixed_volume)
}

/// Stable mixed volume of `sys`: the root count bound in `C^n` (all cores).
pub fn stable_mixed_volume(sys: &System, seed: u64) -> crate::Result<u128> {
    let s = Supports::from_system(sys)?;
    Ok(stable_mixed_volume_of(&s, seed, 0)?.stable_volume)
}

/// Benchmark: mixed-cell enumeration of each system on `threads` threads, printed as a
/// table (system, mixed volume, cells, LPs, seconds, threads). Returns the rows.
pub fn bench_cells(
    systems: &[System],
    seed: u64,
    threads: usize,
) -> crate::Result<Vec<(String, CellStats)>> {
    println!(
        "{:<14} {:>14} {:>10} {:>12} {:>10} {:>10} {:>8}",
        "system", "mixed_volume", "cells", "lps+steps", "undecided", "seconds", "threads"
    );
    let mut rows = Vec::new();
    for sys in systems {
        let s = Supports::from_system(sys)?;
        let st = mixed_volume_of(&s, seed, threads)?;
        println!(
            "{:<14} {:>14} {:>10} {:>12} {:>10} {:>10.3} {:>8}",
            sys.name,
            st.mixed_volume,
            st.cells,
            st.lp_calls + st.relation_lps + st.steps,
            st.undecided,
            st.seconds,
            st.threads
        );
        rows.push((sys.name.clone(), st));
    }
    Ok(rows)
}
