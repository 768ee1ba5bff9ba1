//! Families of systems with parameters, and homotopies that start from solutions you have:
//!
//! - [`family`]: `F(x; p)`, coefficients polynomial in the parameters, read from YAML;
//!   members at given values, and the parameter homotopy along a path `p(t)`;
//! - [`values`]: parameter values as the user writes them (`--params`, a CSV of targets)
//!   and as the outputs carry them;
//! - [`startfile`]: start solutions read back from an earlier run's JSON Lines;
//! - [`GivenStart`] (in [`crate::start::given`]): start points with their homotopy, tracked by
//!   [`crate::solver::solve`];
//! - [`monodromy`]: all solutions of a generic member from one, around loops in parameter
//!   space;
//! - [`cli`]: `solve`'s options `--params`, `--params-file`, `--from`, `--start-system`.
//!
//! Every homotopy here has the τ-form of [`crate::homotopy`] (a coefficient polynomial in the
//! parameters, on a path polynomial in `t`, is a sum of columns `c·t^j` of lift `j`), so the
//! tracker, the endgame, the refinement and the backends are those of every solve
//! (docs/parameters.md).

pub mod cli;
pub mod family;
pub mod monodromy;
pub mod startfile;
pub mod values;

pub use crate::start::given::GivenStart;
pub use family::Family;

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::post::Endpoint;
use crate::report::Summary;
use crate::solver::{solve, Observer, SolveOptions};
use num_complex::Complex64 as C64;
use rand::Rng;
use std::sync::Arc;

/// A complex number with independent standard normal real and imaginary parts (Box–Muller).
pub fn complex_normal(rng: &mut impl Rng) -> C64 {
    let u: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let v: f64 = rng.random::<f64>();
    let r = (-2.0 * u.ln()).sqrt();
    C64::from_polar(r, std::f64::consts::TAU * v)
}

/// A random point of parameter space: `m` independent [`complex_normal`] values. The member
/// there is generic (it has the family's generic number of solutions, all nonsingular) with
/// probability one.
pub fn random_point(m: usize, rng: &mut impl Rng) -> Vec<C64> {
    (0..m).map(|_| complex_normal(rng)).collect()
}

/// A random `γ` on the unit circle for the bend of a parameter path.
pub fn random_gamma(rng: &mut impl Rng) -> C64 {
    C64::from_polar(1.0, std::f64::consts::TAU * rng.random::<f64>())
}

/// Tracks `starts`, solutions of the member at `p0`, to the member at `p1` along
/// [`Family::path_homotopy`] with `gamma`, through the whole solve pipeline (refinement,
/// recovery rounds, classification against the target member). Path `i` starts at
/// `starts[i]`.
#[allow(clippy::too_many_arguments)]
pub fn track_to(
    family: &Family,
    starts: &[Vec<C64>],
    p0: &[C64],
    p1: &[C64],
    gamma: C64,
    opts: &SolveOptions,
    backend: &mut dyn Backend,
    obs: &mut dyn Observer,
) -> Result<Summary> {
    let target = family
        .at(p1)
        .map_err(|m| Error::Usage(format!("target parameters: {m}")))?;
    let given = GivenStart {
        homotopy: family.path_homotopy(p0, p1, gamma),
        points: starts.to_vec(),
        tau: crate::start::given::GIVEN_TAU_START,
        name: "parameter".into(),
        reason: format!(
            "parameter homotopy from {} start solution{}",
            starts.len(),
            if starts.len() == 1 { "" } else { "s" }
        ),
    };
    let opts = SolveOptions {
        given: Some(Arc::new(given)),
        ..opts.clone()
    };
    solve(&target, &opts, backend, obs)
}

/// [`track_to`] returning the final endpoint of every path, in path order.
#[allow(clippy::too_many_arguments)]
pub fn track_collect(
    family: &Family,
    starts: &[Vec<C64>],
    p0: &[C64],
    p1: &[C64],
    gamma: C64,
    opts: &SolveOptions,
    backend: &mut dyn Backend,
) -> Result<(Summary, Vec<Endpoint>)> {
    let mut last = std::collections::BTreeMap::new();
    let s = track_to(
        family,
        starts,
        p0,
        p1,
        gamma,
        opts,
        backend,
        &mut |e: &Endpoint| {
            last.insert(e.path, e.clone());
            Ok(())
        },
    )?;
    Ok((s, last.into_values().collect()))
}

/// The coordinates of the nonsingular endpoints.
pub fn nonsingular_points(ends: &[Endpoint]) -> Vec<Vec<C64>> {
    ends.iter()
        .filter(|e| e.status == crate::post::Status::Nonsingular)
        .filter_map(|e| e.coordinates.clone())
        .collect()
}
