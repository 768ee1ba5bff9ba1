//! The whole pipeline of `pathtrack solve`: start system → homotopy → batch tracking through
//! a backend → refinement and classification → summary. Library entry point for tests and
//! the CLI alike.

use crate::backend::{cpu::CpuBackend, Backend};
use crate::error::{Error, Result};
use crate::post::{Endpoint, Refiner};
use crate::report::{Summary, Tally};
use crate::start::total_degree::TotalDegree;
use crate::system::System;
use crate::track::{track_all, StartPoint, TrackerOptions};
use rand::SeedableRng;
use serde_json::{json, Map};

/// Which start system to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StartKind {
    TotalDegree,
}

impl StartKind {
    pub fn name(self) -> &'static str {
        match self {
            StartKind::TotalDegree => "total-degree",
        }
    }
}

/// Everything `solve` needs besides the system.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    pub start: StartKind,
    pub seed: u64,
    pub tracker: TrackerOptions,
    /// τ at which total-degree paths start (t₀ = e^{τ₀}).
    pub tau_start: f64,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            start: StartKind::TotalDegree,
            seed: 1,
            tracker: TrackerOptions::default(),
            tau_start: -16.0,
        }
    }
}

/// The random generator every random choice of a run draws from (γ, liftings, patches).
pub fn rng_for(seed: u64) -> rand_chacha::ChaCha8Rng {
    rand_chacha::ChaCha8Rng::seed_from_u64(seed)
}

/// Solves `system`; `on_endpoint` sees every path's endpoint as it finishes (in a
/// deterministic order); `on_progress(done)` is called after each.
pub fn solve(
    system: &System,
    opts: &SolveOptions,
    backend: &mut dyn Backend,
    on_endpoint: &mut dyn FnMut(&Endpoint) -> Result<()>,
) -> Result<Summary> {
    let clock = std::time::Instant::now();
    let mut rng = rng_for(opts.seed);
    let mut root_counts = Map::new();
    let td_count = system.total_degree();
    root_counts.insert(
        "total_degree".into(),
        td_count
            .map(|d| json!(d))
            .unwrap_or(serde_json::Value::Null),
    );
    let (homotopy, paths, mut starts): (_, u128, Box<dyn Iterator<Item = StartPoint>>) =
        match opts.start {
            StartKind::TotalDegree => {
                let td = TotalDegree::new(system, &mut rng)?;
                let count = td.path_count();
                if count > u64::MAX as u128 {
                    return Err(Error::Usage(format!(
                        "{count} paths are more than this build can track"
                    )));
                }
                let tau = opts.tau_start;
                let h = td.homotopy.clone();
                let iter = (0..count as u64).map(move |i| StartPoint {
                    path: i,
                    y: td.start_point(i as u128),
                    tau,
                    log: false,
                    lifts: None,
                });
                (h, count, Box::new(iter))
            }
        };
    backend.set_homotopy(&homotopy)?;
    let refiner = Refiner::new(system, opts.tracker.tau_end);
    let mut tally = Tally::default();
    let mut on_end = |end| {
        let e = refiner.process(end);
        tally.add(&e);
        on_endpoint(&e)
    };
    track_all(backend, &homotopy, &opts.tracker, &mut *starts, &mut on_end)?;
    let c = tally.counts();
    Ok(Summary {
        system: system.name.clone(),
        variables: system.n(),
        paths: paths as u64,
        finite: c.nonsingular + c.singular,
        nonsingular: c.nonsingular,
        singular: c.singular,
        at_infinity: tally.at_infinity,
        real: c.real,
        failed: tally.failed,
        duplicate_paths: c.duplicate_paths,
        seconds: clock.elapsed().as_secs_f64(),
        backend: backend.name(),
        start: opts.start.name().into(),
        seed: opts.seed,
        root_counts,
    })
}

/// Solves on the CPU backend with default options except the seed (tests and examples).
pub fn solve_cpu(system: &System, seed: u64) -> Result<(Summary, Vec<Endpoint>)> {
    let mut backend = CpuBackend::new(0)?;
    let opts = SolveOptions {
        seed,
        ..Default::default()
    };
    let mut eps = Vec::new();
    let s = solve(system, &opts, &mut backend, &mut |e| {
        eps.push(e.clone());
        Ok(())
    })?;
    Ok((s, eps))
}
