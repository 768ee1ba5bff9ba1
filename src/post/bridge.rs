//! Tracking on in double precision from where a double-double tail got stuck.
//!
//! A path that stalls in double precision in the endgame zone is tracked again from its
//! checkpoint in double-double ([`crate::track::dd`]). That tail passes what double cannot
//! resolve (two paths nearly meeting, κ ≈ 1e10), but it has no endgame: towards a
//! singular endpoint or one at infinity its steps underflow or run out. cyclic-14 (seed 1,
//! H200) lost two orbits of paths this way in every recovery round: double stalled at
//! s ≈ 0.09–0.1, and the tails from s = 0.1 got stuck at s = 3.5e-10 (step underflow,
//! paths 6210037, …) and s = 6e-5 (4,000 steps, paths 954086, …).
//!
//! A tail hands over two points once it got ten times closer to t = 1 than its checkpoint
//! ([`crate::track::dd::DdTrackEnd::handover`]): the first one there, past the trouble
//! and as far from t = 1 as can be, and the last one short of t = 1. Where the path would
//! fail, the host's tracker goes on from them in turn in double precision, endgame
//! included ([`track_alone`]), and the first end that does not fail is classified instead.
//! A bridged tracking that stalls again has its own tail, which may hand over again (at
//! most [`BRIDGES_MAX`] bridges per path).

use super::cost::Part;
use super::local_dimension::rounding_extent;
use super::{Endpoint, Refiner, Status};
use crate::eval::EvalLayout;
use crate::homotopy::Homotopy;
use crate::track::resident::track_alone;
use crate::track::{PathEnd, StartPoint, TrackerOptions};
use num_complex::Complex64 as C64;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Bridges per path.
pub const BRIDGES_MAX: usize = 4;

/// A point on a path where tracking in double may go on: `(τ, unit-norm y)`.
type Handover = (f64, Vec<C64>);

/// The homotopy in double precision and the tracker options for bridged paths, and the
/// points where failed tails handed over (by path, taken by [`Refiner::process`]).
pub struct Bridge {
    layout: EvalLayout,
    homotopy: Homotopy,
    opts: TrackerOptions,
    stuck: Mutex<HashMap<u64, Vec<Handover>>>,
    /// Paths in `stuck` (read without the lock: most paths have none).
    pending: AtomicUsize,
}

impl Bridge {
    pub fn new(homotopy: &Homotopy, opts: &TrackerOptions) -> Bridge {
        Bridge {
            layout: EvalLayout::new(homotopy),
            homotopy: homotopy.clone(),
            opts: opts.clone(),
            stuck: Mutex::new(HashMap::new()),
            pending: AtomicUsize::new(0),
        }
    }

    /// Notes the points where path `path`'s failed tail handed over
    /// ([`crate::track::dd::DdTrackEnd::handover`]).
    pub(super) fn note(&self, path: u64, handover: Vec<Handover>) {
        if handover.is_empty() {
            return;
        }
        let mut stuck = self.stuck.lock().unwrap_or_else(|e| e.into_inner());
        if stuck.insert(path, handover).is_none() {
            self.pending.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn take(&self, path: u64) -> Vec<Handover> {
        if self.pending.load(Ordering::Relaxed) == 0 {
            return Vec::new();
        }
        let mut stuck = self.stuck.lock().unwrap_or_else(|e| e.into_inner());
        let taken = stuck.remove(&path);
        if taken.is_some() {
            self.pending.fetch_sub(1, Ordering::Relaxed);
        }
        taken.unwrap_or_default()
    }
}

impl Refiner<'_> {
    /// Failed paths whose double-double tail got stuck are tracked on in double from where
    /// it handed over, with `opts` on `h` (the homotopy they were tracked on).
    pub fn bridge_in_double(&mut self, h: &Homotopy, opts: &TrackerOptions) {
        self.bridge = Some(Bridge::new(h, opts));
    }

    /// Bridged paths stop at `deadline` too (the recovery round's time bound: a bridge
    /// must not take the time of the round's other paths).
    pub fn set_bridge_deadline(&mut self, deadline: Option<std::time::Instant>) {
        if let Some(b) = &mut self.bridge {
            b.opts.deadline = deadline;
        }
    }

    /// Refines and classifies the end of a path; a failed path whose double-double tail
    /// got stuck is bridged (module doc): from each point its tails handed over in turn,
    /// at most [`BRIDGES_MAX`] times.
    ///
    /// A singular endpoint gets its [`rounding_extent`]: where the target system is a zero
    /// to rounding that far around it, the clustering cannot tell its endpoint from another
    /// one inside that region.
    pub fn process(&self, end: PathEnd) -> Endpoint {
        self.cost.time(Part::Total, || {
            let mut ep = self.process_bridged(end);
            if ep.status == Status::Singular {
                let extent = ep
                    .coordinates
                    .as_deref()
                    .and_then(|x| rounding_extent(self.system, x));
                if let Some(e) = extent.filter(|&e| e > 0.0) {
                    ep.rounding_extent = e;
                }
            }
            ep
        })
    }

    fn process_bridged(&self, end: PathEnd) -> Endpoint {
        let (path, lifts) = (end.path, end.lifts.clone());
        let mut ep = self.process_end(end);
        let Some(bridge) = &self.bridge else {
            return ep;
        };
        let mut queue = std::collections::VecDeque::from(bridge.take(path));
        if ep.status != Status::Failed {
            return ep;
        }
        for _ in 0..BRIDGES_MAX {
            let Some((tau, y)) = queue.pop_front() else {
                break;
            };
            let start = StartPoint {
                path,
                y,
                tau,
                log: false,
                lifts: lifts.clone(),
                steps: (ep.accepted, ep.rejected),
            };
            let tracked = self.cost.time(Part::Bridge, || {
                track_alone(
                    &bridge.layout,
                    &bridge.homotopy,
                    &bridge.opts,
                    start,
                    &|| true,
                )
            });
            let Ok(Some(end)) = tracked else {
                break;
            };
            let mut next = self.process_end(end);
            queue.extend(bridge.take(path));
            if settled(&next) {
                next.reason = Some(format!(
                    "{}; on in double from s = {:.1e}: {}",
                    ep.reason.as_deref().unwrap_or("stalled"),
                    self.tau_end - tau,
                    next.reason.as_deref().unwrap_or("reached t = 1")
                ));
                return next;
            }
            (ep.accepted, ep.rejected) = (next.accepted, next.rejected);
        }
        ep
    }
}

/// Whether a bridged end settles its path: a nonsingular solution, a point at infinity, or
/// a singular solution found by the Cauchy endgame (with its winding number). Not a point
/// called singular only for its small residual: inside the disc that double precision cannot
/// resolve around a root of multiplicity 29 (radius ≈ 0.5 around 1 for `(x − 1)^29`
/// expanded) every point has one, and 29 bridged paths gave 29 "distinct" singular points.
fn settled(e: &Endpoint) -> bool {
    match e.status {
        Status::Nonsingular | Status::AtInfinity => true,
        Status::Singular => e.winding.is_some(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::track::TrackCode;

    /// A path stalled at s = 0.09 on `x³ − 1 + e^τ, y − 1`, whose end `x = 0` is a triple
    /// root: its double-double tail from the checkpoint (s = 0.1) cannot land on τ = 0
    /// (Newton converges linearly there, at rate 2/3) and stops short. Without the bridge the
    /// path fails; with it, the host's tracker goes on in double from the tail's last point
    /// and its Cauchy endgame finds the triple root.
    fn stalled_on_a_triple_root(bridged: bool) -> Endpoint {
        let sys = crate::system::parse_str(
            "variables: [x, y]\nequations:\n  - \"x^3\"\n  - \"y - 1\"\n",
            "test",
        )
        .expect("valid system");
        let c = |v: f64| C64::new(v, 0.0);
        let h = Homotopy::from_affine_terms(
            2,
            vec![
                vec![
                    (c(1.0), vec![3, 0], 0.0),
                    (c(-1.0), vec![0, 0], 0.0),
                    (c(1.0), vec![0, 0], 1.0),
                ],
                vec![(c(1.0), vec![0, 1], 0.0), (c(-1.0), vec![0, 0], 0.0)],
            ],
        );
        let mut refiner = Refiner::new(&sys, 0.0);
        refiner.track_near_one(&h);
        refiner.attempt = 1;
        refiner.last_attempt = false;
        if bridged {
            refiner.bridge_in_double(&h, &TrackerOptions::default());
        }
        let unit = |v: [f64; 3]| -> Vec<C64> {
            let s = v.iter().map(|a| a * a).sum::<f64>().sqrt();
            v.iter().map(|a| c(a / s)).collect()
        };
        let x_at = |tau: f64| (1.0 - tau.exp()).cbrt();
        let end = PathEnd {
            path: 3,
            y: unit([x_at(-0.09), 1.0, 1.0]),
            tau: -0.09,
            code: TrackCode::StoppedInEndgame("stalled (32 steps shorter than 1e-5·s)".into()),
            accepted: 30,
            rejected: 2,
            cond: 10.0,
            samples: Vec::new(),
            checkpoint: Some((-0.1, unit([x_at(-0.1), 1.0, 1.0]))),
            lifts: None,
        };
        refiner.process(end)
    }

    #[test]
    fn a_stuck_double_double_tail_goes_on_in_double_to_its_singular_end() {
        let alone = stalled_on_a_triple_root(false);
        assert_eq!(alone.status, Status::Failed, "{alone:?}");
        let why = alone.reason.as_deref().unwrap_or("");
        assert!(why.contains("in double-double failed"), "{why}");

        let ep = stalled_on_a_triple_root(true);
        assert_eq!(ep.status, Status::Singular, "{ep:?}");
        let x = ep.coordinates.as_ref().expect("a finite end");
        assert!(x[0].norm() < 1e-4, "x = {}", x[0]);
        assert!((x[1] - 1.0).norm() < 1e-10, "y = {}", x[1]);
        assert_eq!(ep.winding, Some(3), "{ep:?}");
        let why = ep.reason.as_deref().unwrap_or("");
        assert!(why.contains("on in double from s = "), "{why}");
        assert!(
            ep.steps() > alone.steps(),
            "{} ≤ {}",
            ep.steps(),
            alone.steps()
        );
    }
}
