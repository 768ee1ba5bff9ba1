//! Where the refinement's time goes: seconds on the refinement threads by part of
//! [`super::Refiner::process`], summed over its calls (the `--json` summary's
//! `phases.tracking_usage.refine_parts`, docs/output.md).
//!
//! The parts are disjoint (none is timed inside another), so `total` minus their sum is the
//! rest of the classification. Wall seconds per call (`Instant`, a vDSO read): on a loaded
//! host they include the time a thread waited for a core.

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// A part of an endpoint's refinement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// All of [`super::Refiner::process`], the parts below included.
    Total,
    /// Projective Newton on the target system in double (with its residual in
    /// double-double).
    Newton,
    /// Condition numbers and numerical ranks.
    Condition,
    /// Newton on the target system in double-double ([`super::dd_newton`]).
    DdNewton,
    /// Tracking the last stretch from the checkpoint in double-double ([`crate::track::dd`]).
    DdTail,
    /// Tracking on in double from a double-double tail's hand-over ([`super::bridge`]).
    Bridge,
}

const PARTS: [(Part, &str); 6] = [
    (Part::Total, "total"),
    (Part::Newton, "newton"),
    (Part::Condition, "condition"),
    (Part::DdNewton, "dd_newton"),
    (Part::DdTail, "dd_tail"),
    (Part::Bridge, "bridge"),
];

/// One part's seconds and calls.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct PartCost {
    pub seconds: f64,
    pub calls: u64,
}

/// Nanoseconds and calls per [`Part`], shared by the refinement threads.
#[derive(Debug, Default)]
pub struct RefineCost {
    nanos: [AtomicU64; PARTS.len()],
    calls: [AtomicU64; PARTS.len()],
}

impl RefineCost {
    /// Runs `f`, charging its time to `part`.
    pub fn time<T>(&self, part: Part, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        let i = part as usize;
        self.nanos[i].fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        self.calls[i].fetch_add(1, Ordering::Relaxed);
        out
    }

    /// The parts with at least one call since the last `take`, by name; resets them.
    pub fn take(&self) -> BTreeMap<String, PartCost> {
        PARTS
            .iter()
            .filter_map(|&(part, name)| {
                let i = part as usize;
                let calls = self.calls[i].swap(0, Ordering::Relaxed);
                let nanos = self.nanos[i].swap(0, Ordering::Relaxed);
                (calls > 0).then(|| {
                    let seconds = nanos as f64 * 1e-9;
                    (name.to_string(), PartCost { seconds, calls })
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_add_up_their_calls_and_time() {
        let cost = RefineCost::default();
        let spin = |ms: u64| {
            let t = Instant::now();
            while t.elapsed().as_millis() < ms as u128 {
                std::hint::spin_loop();
            }
        };
        cost.time(Part::Total, || {
            cost.time(Part::DdTail, || spin(20));
            cost.time(Part::DdTail, || spin(20));
            cost.time(Part::Newton, || spin(5));
        });
        let parts = cost.take();
        assert_eq!(parts["dd_tail"].calls, 2);
        assert_eq!(parts["total"].calls, 1);
        assert!(parts["dd_tail"].seconds >= 0.04, "{parts:?}");
        assert!(parts["total"].seconds >= parts["dd_tail"].seconds + parts["newton"].seconds);
        assert!(!parts.contains_key("bridge"));
        // Taken: reset.
        assert!(cost.take().is_empty());
    }
}
