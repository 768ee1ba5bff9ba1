//! The benchmark harness: what `pathtrack bench …` and the `cargo bench` targets measure,
//! and the reference programs (PHCpack, gfan, Macaulay2) they run beside ours. Tables go to
//! stdout; nothing here is asserted as a timing in a test.
//!
//! - [`solve`]: full solves per system, beside `phc -b` and M2's `solveSystem`.
//! - [`cells`]: the mixed-cell enumeration, beside `gfan _mixedvolume` and `phc -m`.
//! - [`kernels`]: the evaluator, the double-double step and the device's Euler–Newton steps.
//! - [`endpoints`]: the work on a path's end: refinement, and the tally of distinct solutions.
//! - [`external`], [`phc`], [`gfan`], [`m2`]: finding, running and reading the peers.
//! - [`timing`]: the timer of the kernels and of the `cargo bench` targets (benches/).

pub mod cells;
pub mod endpoints;
pub mod external;
pub mod gfan;
pub mod kernels;
pub mod m2;
pub mod phc;
pub mod solve;
pub mod timing;

use crate::error::Result;
use crate::system::System;

/// A system named as `FAMILYn` (generated) or a path to a file
/// ([`crate::system::parse::load_named`]).
pub fn system_by_name(name: &str) -> Result<System> {
    Ok(crate::system::parse::load_named(std::path::Path::new(
        name,
    ))?)
}
