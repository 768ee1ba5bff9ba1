//! Recovery's first round, started while the first pass still tracks.
//!
//! After the first pass, the paths that share a nonsingular solution, the failed ones and
//! (polyhedral starts) those put at infinity by an estimate at an ill-conditioned point are
//! tracked again with tighter steps ([`super::RECOVERY_ROUNDS`]). With resident tracking a
//! first round of at most [`TAIL`] paths never reaches the slots: the host tracks each path
//! alone ([`track_alone`]). Yet the suspects' endpoints reach the tally well before the
//! first pass ends: on the H200, chandra-12's (seeds 1–3) came 0.06–0.15 s before the end of
//! a 0.4–0.5 s pass, and their re-tracking took 0.07–0.11 s after it, one core per path
//! while the other cores waited.
//!
//! [`Early`] watches the endpoints as the tally gets them, guesses the suspects with the
//! tally's own rules ([`Watch`]), and re-tracks each guess at once on the refinement pool.
//! The round itself is unchanged: its suspects are computed from the whole first pass, and
//! each suspect's endpoint is the same function of its start point whether it was tracked
//! early or in the round ([`Early::retrack`]: host tracker, round-1 options, round-1
//! refinement). A guess that is no suspect costs its tracking and nothing else; a suspect
//! not guessed is tracked in the round. So the output does not depend on timing, and it is
//! the same with `PATHTRACK_EARLY_RECOVERY=0` (nothing tracked early).

use crate::error::{Error, Result};
use crate::eval::EvalLayout;
use crate::homotopy::Homotopy;
use crate::post::dedup::{close, sup_norm, Projection};
use crate::post::{Endpoint, Refiner, Status};
use crate::report::{clustering_tolerance, CLUSTER_SINGULAR_COND, DEDUP_TOL, DEDUP_TOL_MAX};
use crate::system::System;
use crate::track::resident::{track_alone, TAIL};
use crate::track::{StartPoint, TrackerOptions};
use num_complex::Complex64 as C64;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, RwLock};

/// Runs with at most this many paths keep every start point ([`StartRecord`]), and only
/// they re-track early: a start point is `nh` complex numbers, 16 MiB for this many paths
/// of 15 coordinates. Larger runs regenerate start points in the round, as before; for them
/// the first round is a small part of the run.
pub const EARLY_MAX_PATHS: u128 = 1 << 16;

/// Paths put at infinity by an estimate are guessed only while at most this many were seen:
/// the round verifies them only if there are at most `verify_diverging_max` in all, and
/// systems with paths that do diverge have hundreds (cyclic-10 `--torus`: more than its cap
/// of 140; its first 32 guesses, all of them such paths, took 0.5 s of CPU time on the
/// H200's machine and held up the end of the first pass). A huge-norm solution mistaken
/// for infinity is rare (0–2 per run on chandra-12/13).
pub const ESTIMATE_GUESSES: u64 = 8;

/// Whether the first recovery round may start during the first pass: yes unless the
/// environment sets `PATHTRACK_EARLY_RECOVERY=0` (for comparisons).
pub fn enabled() -> bool {
    std::env::var("PATHTRACK_EARLY_RECOVERY").map_or(true, |v| v != "0")
}

/// The start point of every path of the first pass, by path: re-tracking a path needs no
/// second enumeration of the start system (a polyhedral start point is found by
/// enumerating the mixed cells again).
#[derive(Default)]
pub struct StartRecord(Mutex<HashMap<u64, StartPoint>>);

impl StartRecord {
    pub fn keep(&self, s: &StartPoint) {
        self.0
            .lock()
            .expect("start record")
            .insert(s.path, s.clone());
    }

    fn get(&self, path: u64) -> Option<StartPoint> {
        self.0.lock().expect("start record").get(&path).cloned()
    }

    fn has(&self, path: u64) -> bool {
        self.0.lock().expect("start record").contains_key(&path)
    }
}

/// See the module's doc.
pub struct Early<'a> {
    homotopy: &'a Homotopy,
    layout: EvalLayout,
    /// Round 1's tracker options (with the start system's own settings).
    tracker: TrackerOptions,
    /// Round 1's refinement (`attempt` 1).
    refiner: Refiner<'a>,
    pub starts: StartRecord,
    /// Endpoints of the paths re-tracked early, taken by the round (`None`: stopped).
    results: Mutex<HashMap<u64, Result<Option<Endpoint>>>>,
    /// Round 1's paths once the first pass is over ([`Self::settle`]).
    round_paths: RwLock<Option<HashSet<u64>>>,
    watch: Mutex<Watch>,
}

impl<'a> Early<'a> {
    /// `tracker`: round 1's options; `estimate_cap`: the most paths put at infinity by an
    /// estimate that the round verifies ([`super::verify_diverging_max`]; 0 when it verifies
    /// none).
    pub fn new(
        system: &'a System,
        homotopy: &'a Homotopy,
        tracker: TrackerOptions,
        estimate_cap: u64,
    ) -> Early<'a> {
        let mut refiner = Refiner::new(system, tracker.tau_end);
        refiner.track_near_one(homotopy);
        refiner.bridge_in_double(homotopy, &tracker);
        refiner.attempt = 1;
        refiner.last_attempt = 1 >= super::RECOVERY_ROUNDS;
        Early {
            homotopy,
            layout: EvalLayout::new(homotopy),
            tracker,
            refiner,
            starts: StartRecord::default(),
            results: Mutex::new(HashMap::new()),
            round_paths: RwLock::new(None),
            watch: Mutex::new(Watch {
                started: HashSet::new(),
                near: NearIndex::default(),
                estimated: 0,
                estimate_cap,
            }),
        }
    }

    /// Path `path` tracked again as round 1 tracks it: from its recorded start point, by
    /// the host tracker alone, refined with round 1's settings. `None` when the round,
    /// settled meanwhile ([`Self::settle`]), does not track it.
    fn retrack(&self, path: u64) -> Result<Option<Endpoint>> {
        let start = self
            .starts
            .get(path)
            .ok_or_else(|| Error::Internal(format!("no start point recorded for path {path}")))?;
        let go_on = || self.wanted(path);
        let Some(end) = track_alone(&self.layout, self.homotopy, &self.tracker, start, &go_on)?
        else {
            return Ok(None);
        };
        let mut e = self.refiner.process(end);
        e.attempt = 1;
        Ok(Some(e))
    }

    /// Whether `path` may still be a suspect of round 1.
    fn wanted(&self, path: u64) -> bool {
        match &*self.round_paths.read().expect("round paths") {
            None => true,
            Some(set) => set.contains(&path),
        }
    }

    /// The first pass is over and round 1 tracks `suspects`: re-trackings of other paths
    /// stop (a guess that is no suspect would otherwise hold up the end of the pass), all
    /// of them when the round is not tracked here ([`Self::covers`]).
    pub fn settle(&self, suspects: &[u64]) {
        let set = if self.covers(suspects) {
            suspects.iter().copied().collect()
        } else {
            HashSet::new()
        };
        *self.round_paths.write().expect("round paths") = Some(set);
    }

    /// A first-pass endpoint as the tally gets it: the paths it makes suspect (guessed) are
    /// re-tracked on `scope`'s pool.
    pub fn observe<'s>(&'s self, e: &Endpoint, scope: &rayon::Scope<'s>) {
        let guessed = self.watch.lock().expect("watch").guess(e);
        for p in guessed {
            scope.spawn(move |_| {
                let r = self.retrack(p);
                self.results.lock().expect("results").insert(p, r);
            });
        }
    }

    /// Whether the round's `suspects` are tracked here: at most [`TAIL`] of them (more go
    /// to the slots), each with its start point recorded.
    pub fn covers(&self, suspects: &[u64]) -> bool {
        suspects.len() <= TAIL && suspects.iter().all(|&p| self.starts.has(p))
    }

    /// Round 1 for `suspects` (see [`Self::covers`]; the first pass settled on them): each
    /// one's endpoint, in their order, re-tracked early or now (in parallel on the current
    /// pool); and how many were early.
    pub fn round(&self, suspects: &[u64]) -> Result<(Vec<Endpoint>, u64)> {
        use rayon::prelude::*;
        let done: Vec<Option<Endpoint>> = {
            let mut results = self.results.lock().expect("results");
            let done: Result<Vec<Option<Endpoint>>> = suspects
                .iter()
                .map(|p| results.remove(p).transpose().map(Option::flatten))
                .collect();
            done?
        };
        let early = done.iter().filter(|d| d.is_some()).count() as u64;
        let ends: Result<Vec<Endpoint>> = suspects
            .par_iter()
            .zip(done)
            .with_max_len(1)
            .map(|(&p, d)| match d {
                Some(e) => Ok(e),
                None => self
                    .retrack(p)?
                    .ok_or_else(|| Error::Internal(format!("round 1 stopped its own path {p}"))),
            })
            .collect();
        Ok((ends?, early))
    }
}

/// The guesses: the tally's rules for suspects (`Tally::suspects`,
/// `Tally::estimated_at_infinity`) applied to the endpoints seen so far.
struct Watch {
    started: HashSet<u64>,
    near: NearIndex,
    /// Paths put at infinity by an estimate at a point of condition at least
    /// [`super::VERIFY_DIVERGING_COND`] seen so far; beyond `estimate_cap` the round
    /// verifies none of them, so none is guessed.
    estimated: u64,
    estimate_cap: u64,
}

impl Watch {
    /// The paths that `e` makes suspect and that were not guessed before, while fewer than
    /// [`TAIL`] were.
    fn guess(&mut self, e: &Endpoint) -> Vec<u64> {
        let mut found = Vec::new();
        match e.status {
            Status::Failed => found.push(e.path),
            Status::Nonsingular => {
                if let Some(x) = &e.coordinates {
                    found = self
                        .near
                        .insert(e.path, x, e.condition, e.error, e.refined_dd);
                    if !found.is_empty() {
                        found.push(e.path);
                    }
                }
            }
            Status::AtInfinity
                if e.at_infinity_by_estimate()
                    && e.condition >= super::VERIFY_DIVERGING_COND
                    && self.estimate_cap > 0 =>
            {
                self.estimated += 1;
                if self.estimated <= self.estimate_cap.min(ESTIMATE_GUESSES) {
                    found.push(e.path);
                }
            }
            _ => {}
        }
        let mut out = Vec::new();
        for p in found {
            if self.started.len() < TAIL && self.started.insert(p) {
                out.push(p);
            }
        }
        out
    }
}

/// A point's place along [`Projection`]: total order on the key, then the path.
#[derive(Clone, Copy, Debug)]
struct Key(f64, u64);

impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o).is_eq()
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
    }
}

struct Near {
    x: Vec<C64>,
    tol: f64,
    condition: f64,
    refined_dd: bool,
}

/// The nonsingular endpoints seen so far, sorted along a [`Projection`] (as
/// `dedup::cluster_with` sweeps them), so that the ones within the clustering tolerance
/// (at most `DEDUP_TOL_MAX`) of a new point are found within `Projection::reach` of its key.
#[derive(Default)]
struct NearIndex {
    proj: Option<Projection>,
    points: BTreeMap<Key, Near>,
}

impl NearIndex {
    /// Adds the endpoint of `path` at `x`; returns the paths already there whose endpoint
    /// is the same solution and would stay a nonsingular one shared by two paths (the
    /// tally's rule: a cluster of several paths is singular unless all were refined in
    /// double-double or it is well-conditioned, `Tally::solutions`).
    fn insert(
        &mut self,
        path: u64,
        x: &[C64],
        condition: f64,
        error: f64,
        refined_dd: bool,
    ) -> Vec<u64> {
        let proj = self.proj.get_or_insert_with(|| Projection::new(x.len()));
        let key = proj.key(x);
        let tol =
            clustering_tolerance(refined_dd, condition, error, DEDUP_TOL, Status::Nonsingular);
        let scale = 1.0 + sup_norm(x);
        let reach = proj.reach(DEDUP_TOL_MAX) * scale;
        let range = Key(key - reach, 0)..=Key(key + reach, u64::MAX);
        let same: Vec<u64> = self
            .points
            .range(range)
            .filter(|(_, n)| {
                close(x, &n.x, tol.max(n.tol))
                    && ((refined_dd && n.refined_dd)
                        || condition.min(n.condition) <= CLUSTER_SINGULAR_COND)
            })
            .map(|(k, _)| k.1)
            .collect();
        self.points.insert(
            Key(key, path),
            Near {
                x: x.to_vec(),
                tol,
                condition,
                refined_dd,
            },
        );
        same
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(re: f64) -> C64 {
        C64::new(re, 0.0)
    }

    fn endpoint(path: u64, status: Status, x: Option<Vec<C64>>, condition: f64) -> Endpoint {
        Endpoint {
            reason: (status == Status::AtInfinity).then(|| "diverging (valuation 0.5)".into()),
            coordinates: x,
            residual: 0.0,
            condition,
            refined_dd: true,
            ..Endpoint::new(path, status)
        }
    }

    fn watch(cap: u64) -> Watch {
        Watch {
            started: HashSet::new(),
            near: NearIndex::default(),
            estimated: 0,
            estimate_cap: cap,
        }
    }

    /// The tally's rules, endpoint by endpoint: two paths at one nonsingular solution are
    /// both guessed when the second comes (not at a nearby distinct one, nor a third time);
    /// a failed path at once; paths at infinity by an estimate at an ill-conditioned point
    /// up to the cap; well-conditioned ones and paths that reached infinity never.
    #[test]
    fn guesses_follow_the_tallys_rules() {
        let mut w = watch(1);
        let x = vec![c(1e7), c(-2.5)];
        let near = |d: f64| vec![c(1e7 * (1.0 + d)), c(-2.5)];
        assert!(w
            .guess(&endpoint(4, Status::Nonsingular, Some(x.clone()), 1e13))
            .is_empty());
        // 1e-6 apart relative: another solution at κ = 1e3 (tolerance 1e-8)
        let other = endpoint(6, Status::Nonsingular, Some(near(1e-6)), 1e3);
        assert!(w.guess(&other).is_empty());
        let jumped = endpoint(9, Status::Nonsingular, Some(near(3e-12)), 1e13);
        assert_eq!(w.guess(&jumped), vec![4, 9]);
        let third = endpoint(11, Status::Nonsingular, Some(near(1e-12)), 1e13);
        assert_eq!(w.guess(&third), vec![11], "4 and 9 were guessed already");
        assert_eq!(
            w.guess(&endpoint(2, Status::Failed, None, f64::NAN)),
            vec![2]
        );
        let inf = |p, cond| endpoint(p, Status::AtInfinity, None, cond);
        assert!(w.guess(&inf(3, 1e3)).is_empty(), "well-conditioned");
        assert_eq!(w.guess(&inf(5, 1e9)), vec![5]);
        assert!(w.guess(&inf(7, 1e9)).is_empty(), "beyond the cap");
        // with a larger cap, at most ESTIMATE_GUESSES of them
        let mut many = watch(100);
        let n: usize = (0..20).map(|p| many.guess(&inf(p, 1e9)).len()).sum();
        assert_eq!(n as u64, ESTIMATE_GUESSES);
        let mut reached = inf(8, 1e9);
        reached.reason = None;
        assert!(watch(1).guess(&reached).is_empty(), "not an estimate");
    }

    /// A shared solution of two endpoints that were not refined in double-double and are
    /// ill-conditioned is a singular one for the tally (a double root), not a suspect.
    #[test]
    fn shared_ill_conditioned_solutions_refined_in_double_are_no_suspects() {
        let mut w = watch(0);
        let mut a = endpoint(1, Status::Nonsingular, Some(vec![c(0.5), c(2.0)]), 1e7);
        a.refined_dd = false;
        let mut b = a.clone();
        b.path = 2;
        assert!(w.guess(&a).is_empty());
        assert!(w.guess(&b).is_empty());
        b.path = 3;
        b.condition = 10.0;
        assert_eq!(w.guess(&b), vec![1, 2, 3]);
    }

    /// At most TAIL paths are guessed: a round with more goes to the slots, and its
    /// early re-trackings would be wasted.
    #[test]
    fn at_most_tail_paths_are_guessed() {
        let mut w = watch(0);
        let n: usize = (0..3 * TAIL as u64)
            .map(|p| w.guess(&endpoint(p, Status::Failed, None, f64::NAN)).len())
            .sum();
        assert_eq!(n, TAIL);
    }
}
