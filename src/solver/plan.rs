//! Which paths of the start system a run tracks, and what it knows of the others: a shard
//! of a run split over jobs (`solve --shard K/N`), a resumed run (`solve --resume`), or the
//! merge of shards (`pathtrack merge`). Path `i` is the same path in every run of a system
//! with the same seed and start options (its start point is regenerated from its index), so
//! a run split into pieces tracks what the whole run tracks.
//!
//! Recovery (re-tracking paths that share a solution or failed) needs every path's
//! endpoint: a shard tracks its first pass only ([`Plan::first_pass_only`]) and the merge,
//! which knows all endpoints ([`Plan::done`]), runs the recovery rounds as the whole run
//! would.

use crate::error::{Error, Result};
use crate::post::Endpoint;
use std::sync::Arc;

/// The `K`-th of `N` slices of the paths: path `i` belongs to shard `i mod N` (strided, so
/// that each shard gets paths of every mixed cell and the shards take about as long).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// Reads `K/N` with `0 ≤ K < N`.
    pub fn parse(s: &str) -> Result<Shard> {
        let bad = |why: &str| Error::Usage(format!("--shard {s}: {why}; write K/N, e.g. 0/4"));
        let (k, n) = s.split_once('/').ok_or_else(|| bad("no '/'"))?;
        let k: u64 = k.trim().parse().map_err(|_| bad("K is not a number"))?;
        let n: u64 = n.trim().parse().map_err(|_| bad("N is not a number"))?;
        if n == 0 {
            return Err(bad("N must be at least 1"));
        }
        if k >= n {
            return Err(bad("K must be below N (shards are numbered 0 to N-1)"));
        }
        Ok(Shard { index: k, count: n })
    }

    /// Whether path `i` is in this shard.
    pub fn holds(&self, path: u64) -> bool {
        path % self.count == self.index
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What part of the run a solve does (the default: all of it).
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Track only this shard's paths.
    pub shard: Option<Shard>,
    /// Endpoints of paths tracked before (a resumed run's finished lines, the shards of a
    /// merge), sorted by path, one per path: tallied as if tracked now, not tracked again
    /// and not reported again.
    pub done: Option<Arc<Vec<Endpoint>>>,
    /// Stop after the first pass: no recovery rounds (a shard; the merge runs them).
    pub first_pass_only: bool,
    /// Paths handed out while the run goes on (an MPI worker, a device of `solve --devices`):
    /// the first pass tracks each batch the feed gives until it gives none.
    pub feed: Option<Feed>,
}

/// A source of batches of paths, asked for the next batch once the previous one is
/// tracked and reported ([`crate::solver::Observer::endpoint`]).
pub trait PathFeed: Send + Sync {
    /// The next batch of paths (sorted, below `paths`, the size of the start system);
    /// `None` when there are no more.
    fn next(&self, paths: u128) -> Result<Option<Vec<u64>>>;
}

/// A [`PathFeed`] in [`Plan`].
#[derive(Clone)]
pub struct Feed(pub Arc<dyn PathFeed>);

impl std::fmt::Debug for Feed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Feed")
    }
}

impl Plan {
    /// The whole run: no shard, nothing done before.
    pub fn is_whole(&self) -> bool {
        self.shard.is_none()
            && self.feed.is_none()
            && self.done.as_ref().is_none_or(|d| d.is_empty())
    }

    /// Endpoints known before the run (none when [`Plan::done`] is absent).
    pub fn done(&self) -> &[Endpoint] {
        self.done.as_deref().map_or(&[], |d| &d[..])
    }

    /// The paths the first pass tracks, of a start system of `paths` paths, given the
    /// paths `only` asked for (`--paths`, sorted): `None` when the plan changes nothing
    /// (all, or `only`), or when a feed hands the paths out (whoever feeds it chose them; no
    /// list of every path is made). An error when a done path is not a path of the start
    /// system (the file came from another start system).
    pub fn first_pass(&self, paths: u128, only: Option<&[u64]>) -> Result<Option<Vec<u64>>> {
        if self.is_whole() || (self.feed.is_some() && self.done().is_empty()) {
            return Ok(None);
        }
        let done = self.done();
        if let Some(bad) = done.iter().find(|e| e.path as u128 >= paths) {
            return Err(Error::Usage(format!(
                "the finished lines name path {}, but the start system has {paths} paths: \
                 they come from another run",
                bad.path
            )));
        }
        let shard = self.shard;
        let keep = |p: &u64| {
            shard.is_none_or(|s| s.holds(*p)) && done.binary_search_by_key(p, |e| e.path).is_err()
        };
        Ok(Some(match only {
            Some(ids) => ids.iter().copied().filter(keep).collect(),
            None => match shard {
                // Only this shard's indices are visited.
                Some(s) => (s.index..paths as u64)
                    .step_by(s.count as usize)
                    .filter(keep)
                    .collect(),
                None => (0..paths as u64).filter(keep).collect(),
            },
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::post::Status;

    #[test]
    fn shards_partition_the_paths() {
        let shards: Vec<Shard> = (0..3)
            .map(|k| Shard::parse(&format!("{k}/3")).unwrap())
            .collect();
        let mut seen = vec![0u32; 10];
        for s in &shards {
            let plan = Plan {
                shard: Some(*s),
                ..Default::default()
            };
            for p in plan.first_pass(10, None).unwrap().unwrap() {
                assert!(s.holds(p));
                seen[p as usize] += 1;
            }
        }
        assert_eq!(seen, vec![1; 10], "each path in exactly one shard");
    }

    #[test]
    fn done_paths_are_not_tracked_again() {
        let done: Vec<Endpoint> = [1u64, 4, 5]
            .iter()
            .map(|&p| Endpoint::new(p, Status::Failed))
            .collect();
        let plan = Plan {
            done: Some(Arc::new(done)),
            ..Default::default()
        };
        assert_eq!(plan.first_pass(7, None).unwrap(), Some(vec![0, 2, 3, 6]));
        assert_eq!(plan.first_pass(7, Some(&[1, 2])).unwrap(), Some(vec![2]));
        assert!(plan.first_pass(5, None).is_err(), "path 5 of 5 paths");
        assert_eq!(Plan::default().first_pass(7, None).unwrap(), None);
    }

    /// A fed plan lists no paths: the feed hands them out.
    #[test]
    fn a_fed_plan_lists_no_paths() {
        struct Nothing;
        impl PathFeed for Nothing {
            fn next(&self, _: u128) -> Result<Option<Vec<u64>>> {
                Ok(None)
            }
        }
        let plan = Plan {
            feed: Some(Feed(Arc::new(Nothing))),
            first_pass_only: true,
            ..Default::default()
        };
        assert_eq!(plan.first_pass(1 << 40, None).unwrap(), None);
    }

    #[test]
    fn bad_shards_are_usage_errors() {
        for s in ["3/3", "1", "a/2", "0/0", "1/x"] {
            let e = Shard::parse(s).unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{s}");
            assert!(e.to_string().contains("--shard"), "{e}");
        }
        assert_eq!(Shard::parse("2/5").unwrap().to_string(), "2/5");
    }
}
