//! What a solve checks once its start system is built and before it tracks anything: the
//! path indices asked for (`SolveOptions::only`) exist, and the run is no larger than the
//! caller allows ([`Limits`]: the CLI's `--max-paths` and `--max-work`).

use crate::error::{Error, Result};
use crate::system::System;

/// Default of `--max-paths`: larger than any start system of the benchmark families the
/// project tracks (cyclic-13's mixed volume is 2.6·10^6, katsura-20's total degree 10^6).
pub const DEFAULT_MAX_PATHS: u128 = 10_000_000;
/// Default of `--max-work` ([`work_estimate`]): cyclic-12 (polyhedral) is 8.7·10^8,
/// cyclic-10 with the total-degree start 3.3·10^9; `x^d + …` with the total-degree start
/// is about 5·d², and took 73 s at d = 10^4 on two cores (5·10^8).
pub const DEFAULT_MAX_WORK: f64 = 1e10;

/// Default of `--max-work` when a GPU tracks: a hundred times [`DEFAULT_MAX_WORK`], as one
/// GPU tracks about that many times more path-steps per second than two CPU cores.
/// cyclic-14 (polyhedral, 8,795,976 paths) is 2.3·10^10 and cyclic-15 (35,243,520) 1.0·10^11.
pub const DEFAULT_MAX_WORK_GPU: f64 = 1e12;

/// The default bound on a run's [`work_estimate`]: [`DEFAULT_MAX_WORK_GPU`] when a GPU
/// tracks, else [`DEFAULT_MAX_WORK`].
pub fn default_max_work(gpu: bool) -> f64 {
    if gpu {
        DEFAULT_MAX_WORK_GPU
    } else {
        DEFAULT_MAX_WORK
    }
}

/// Upper bounds on a run; `None` for no bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Most start paths.
    pub max_paths: Option<u128>,
    /// Most [`work_estimate`].
    pub max_work: Option<f64>,
}

impl Default for Limits {
    /// No bound (the library default; the CLI sets [`DEFAULT_MAX_PATHS`] and
    /// [`DEFAULT_MAX_WORK`]).
    fn default() -> Self {
        Limits {
            max_paths: None,
            max_work: None,
        }
    }
}

/// The largest degree spread `max Σa − min Σa` of an equation (at least 1): the number of
/// roots a univariate slice may have, which sets the step count of a path near t = 1.
pub fn degree_spread(system: &System) -> u64 {
    system
        .equations
        .iter()
        .map(|f| {
            let sums = f
                .terms
                .iter()
                .map(|t| t.exponents.iter().map(|&a| a as i64).sum::<i64>());
            let (lo, hi) = sums.fold((i64::MAX, i64::MIN), |(lo, hi), s| (lo.min(s), hi.max(s)));
            if hi < lo {
                0
            } else {
                (hi - lo) as u64
            }
        })
        .max()
        .unwrap_or(0)
        .max(1)
}

/// Estimated work of tracking `paths` paths: `paths × degree spread × terms` (every path
/// evaluates every term once per step, and a path takes a number of steps that grows with
/// the degree: the roots of `x^d − 1` are `2π/d` apart).
pub fn work_estimate(system: &System, paths: u128) -> f64 {
    let terms: usize = system.equations.iter().map(|f| f.terms.len()).sum();
    paths as f64 * degree_spread(system) as f64 * terms.max(1) as f64
}

/// Checks a start system of `paths` paths against `limits` and the indices `only` (sorted)
/// against the path count: a usage error (exit 2) that names the bound and the option that
/// moves it, or the index and the valid range.
pub fn check(system: &System, paths: u128, only: Option<&[u64]>, limits: &Limits) -> Result<()> {
    if let Some(only) = only {
        if let Some(&bad) = only.iter().find(|&&p| p as u128 >= paths) {
            return Err(Error::Usage(if paths == 0 {
                format!("--paths: path {bad} does not exist: the start system has no paths")
            } else {
                format!(
                    "--paths: path {bad} is out of range: the start system has {paths} paths \
                     (valid indices 0 to {})",
                    paths - 1
                )
            }));
        }
        // A few chosen paths are tracked whatever the size of the start system.
        return Ok(());
    }
    if paths > u64::MAX as u128 {
        return Err(Error::Usage(format!(
            "{paths} paths are more than this build can track (at most 2^64 - 1)"
        )));
    }
    if let Some(max) = limits.max_paths {
        if paths > max {
            return Err(Error::Usage(format!(
                "the start system has {paths} paths, more than --max-paths {max}; pass \
                 --max-paths {paths} (or 0 for no bound) to track them all, or a start \
                 system with fewer paths (--start)"
            )));
        }
    }
    if let Some(max) = limits.max_work {
        let w = work_estimate(system, paths);
        if w > max {
            return Err(Error::Usage(format!(
                "estimated work {w:.1e} (paths {paths} × degree {} × terms {}) is more than \
                 --max-work {max:.0e}; pass --max-work {:.0e} (or 0 for no bound) to run it \
                 anyway",
                degree_spread(system),
                system
                    .equations
                    .iter()
                    .map(|f| f.terms.len())
                    .sum::<usize>(),
                (w * 1.01).ceil()
            )));
        }
    }
    Ok(())
}

/// Batches up to this size are left as asked even when the start system has fewer paths
/// (the defaults, 4,096 on the CPU and 65,536 on the GPU, stay as they are).
pub const BATCH_FLOOR: usize = 1 << 16;

/// The largest useful batch for `tracked` paths: a batch larger than the paths only
/// reserves memory (`--batch 100000000` asked for 46 GB on a system of 32 paths).
pub fn batch_cap(tracked: u128) -> usize {
    tracked.clamp(BATCH_FLOOR as u128, usize::MAX as u128) as usize
}
