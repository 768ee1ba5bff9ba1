//! A resident backend that tallies how paths leave its slots (shared by the CPU and CUDA
//! tests of `track::resident`).

use num_complex::Complex64 as C64;
use pathtrack::backend::{Backend, DirectionsOut};
use pathtrack::error::Result;
use pathtrack::eval::{EvalLayout, Points};
use pathtrack::homotopy::Homotopy;
use pathtrack::post::{Endpoint, Status};
use pathtrack::solver::SolveOptions;
use pathtrack::track::resident::{ResidentTracker, SlotExit};
use pathtrack::track::{StartPoint, TrackCode, TrackerOptions};
use std::sync::Arc;

/// How paths left the slots.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Exits {
    /// Ended in their slot as diverging by `track::path::beyond_double`.
    pub beyond_double: u64,
    /// Stopped in their slot in the endgame zone short of `τ_end` (step size underflow,
    /// stalled), as the host tracker stops a path: paths the slot carries, and paths in
    /// double-double mode with a settled valuation (`slot::EXIT_STOPPED`).
    pub stopped: u64,
    /// Ended in their slot otherwise.
    pub ended: u64,
    /// Went on on the host.
    pub continued: u64,
}

/// `inner` with the slot exits of its first resident pass counted in `exits` (recovery
/// rounds track on the same backend, with the rules of `TrackerOptions::tightened`).
pub struct Tally<B> {
    pub inner: B,
    pub exits: Exits,
    /// Resident passes begun.
    pub passes: u32,
}

impl<B: Backend + ResidentTracker> Backend for Tally<B> {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn set_homotopy(&mut self, h: &Homotopy) -> Result<()> {
        self.inner.set_homotopy(h)
    }
    fn setup_note(&self) -> Option<String> {
        self.inner.setup_note()
    }
    fn extended_jacobians(&mut self, pts: &Points<'_>, out: &mut [C64]) -> Result<()> {
        self.inner.extended_jacobians(pts, out)
    }
    fn directions(&mut self, pts: &Points<'_>, out: DirectionsOut<'_>) -> Result<()> {
        self.inner.directions(pts, out)
    }
    fn resident(&mut self) -> Option<&mut dyn ResidentTracker> {
        Some(self)
    }
    fn host_pool(&self) -> Option<Arc<rayon::ThreadPool>> {
        self.inner.host_pool()
    }
}

impl<B: Backend + ResidentTracker> ResidentTracker for Tally<B> {
    fn begin(&mut self, opts: &TrackerOptions) -> Result<usize> {
        self.passes += 1;
        self.inner.begin(opts)
    }
    fn load(&mut self, starts: &[(usize, StartPoint)]) -> Result<()> {
        self.inner.load(starts)
    }
    fn launch(&mut self, iterations: u32) -> Result<()> {
        self.inner.launch(iterations)
    }
    fn collect(&mut self, evict: bool) -> Result<Vec<(usize, SlotExit)>> {
        let out = self.inner.collect(evict)?;
        if self.passes > 1 {
            return Ok(out);
        }
        for (_, e) in &out {
            match e {
                SlotExit::End {
                    code: TrackCode::StoppedInEndgame(why),
                    ..
                } if why.contains("beyond double precision") => self.exits.beyond_double += 1,
                SlotExit::End { code, .. } if code.stopped_short() => self.exits.stopped += 1,
                SlotExit::End { .. } => self.exits.ended += 1,
                SlotExit::Continue { .. } => self.exits.continued += 1,
            }
        }
        Ok(out)
    }
    fn host_engine(&self) -> Result<(&EvalLayout, Arc<rayon::ThreadPool>)> {
        self.inner.host_engine()
    }
    fn compact(&mut self) -> Result<Vec<(usize, usize)>> {
        self.inner.compact()
    }
    fn profile(&self) -> Option<String> {
        self.inner.profile()
    }
}

/// cyclic-9 (polyhedral, seed 1), paths 3000–3999 on `backend`: the paths that the host's
/// rule `track::path::beyond_double` stops (heading to infinity with a condition growing too
/// fast for double precision) end in their slots (`slot::EXIT_BEYOND_DOUBLE`), all but
/// those evicted to the host in the tail of the batch. Slots keeping no condition estimates
/// at their samples would let such paths go on until κ passed `ZONE_COND`, and the host
/// would track their endgame zone again (on the GPU, cyclic-12's first pass then spends 363
/// of its 369 s in those host rounds).
pub fn beyond_double_in_slots<B: Backend + ResidentTracker>(backend: B) {
    let mut beyond = 0u64;
    let (s, x) = solve_shipped(
        "cyclic9",
        backend,
        Some((3000..4000).collect()),
        &mut |e: &Endpoint| {
            let why = e.reason.as_deref().unwrap_or("");
            if e.attempt == 0 && why.contains("beyond double precision") {
                assert_eq!(e.status, Status::AtInfinity, "path {}: {why}", e.path);
                beyond += 1;
            }
        },
    );
    let tail = pathtrack::track::resident::TAIL as u64;
    eprintln!(
        "{}: {beyond} paths beyond double precision; slot exits {x:?}",
        s.backend
    );
    // more than the tail could hold (54 on the CPU, all in their slots)
    assert!(
        beyond > tail + 10,
        "{beyond} paths beyond double precision; {s:?}"
    );
    assert!(
        x.beyond_double <= beyond && x.beyond_double + tail >= beyond,
        "{beyond} paths beyond double precision, {x:?}"
    );
}

/// cyclic-9 (polyhedral, seed 1), all 11,016 paths on `backend`: the paths heading to its
/// positive-dimensional sets at infinity whose condition estimate passes `ZONE_COND` early
/// in the endgame zone stay in their slots (`slot::Slot::carry`) and end there, as the host
/// tracker would end them; only the tail of the batch goes to the host. Sent to the host
/// instead, they would have their endgame zone tracked again (59 hand-overs on the CPU, 27
/// of them outside the tail; on the GPU, cyclic-12's first pass then spends 275 of its 282 s
/// in such host rounds). The solution counts are cyclic-9's.
pub fn carried_to_their_end<B: Backend + ResidentTracker>(backend: B) {
    // 32 hand-overs on the CPU (the tail), 59 without carrying
    few_hand_overs(backend, "cyclic9", None, (5994, 162, 4374, 0), 10);
}

/// cyclic-12 (polyhedral, seed 1), paths 41000–41499 on `backend`: the paths to its
/// positive-dimensional sets at infinity that underflow in double-double mode once their
/// valuation has settled at 1/3 end in their slots (`slot::EXIT_STOPPED`), as the host
/// would end them; only the tail of the batch goes to the host. Sent to the host instead
/// (46 hand-overs on the CPU, 14 outside the tail, 13 of them these), they are tracked
/// again from where the mode went back to and stopped the same way. The counts are the same
/// either way. Refined, they are put at infinity without a tail in double-double from their
/// checkpoint, which would crawl and give up.
pub fn settled_to_their_end<B: Backend + ResidentTracker>(backend: B) {
    // 33 hand-overs on the CPU (32 the tail), 46 when these go to the host
    let only = Some((41000..41500).collect());
    let s = few_hand_overs(backend, "cyclic12", only, (416, 0, 84, 0), 5);
    // Their refinement puts them at infinity without a tail in double-double
    // (`post::Refiner::process_end`): 5 tails on the CPU, 48 when every stalled path has one.
    let parts = &s.phases.tracking_usage.refine_parts;
    let tails = parts.get("dd_tail").map_or(0, |p| p.calls);
    assert!(tails <= 10, "{tails} tails in double-double: {parts:?}");
    assert_eq!(parts["total"].calls, 500, "{parts:?}");
}

/// The shipped system `name` (polyhedral, seed 1), the paths `only`, on `backend`: its
/// counts (nonsingular, singular, at infinity, failed) are `counts`, and the first pass
/// hands at most `beyond_tail` paths to the host besides the tail of the batch.
fn few_hand_overs<B: Backend + ResidentTracker>(
    backend: B,
    name: &str,
    only: Option<Vec<u64>>,
    counts: (u64, u64, u64, u64),
    beyond_tail: u64,
) -> pathtrack::report::Summary {
    let (s, x) = solve_shipped(name, backend, only, &mut |_: &Endpoint| {});
    let tail = pathtrack::track::resident::TAIL as u64;
    eprintln!("{}: slot exits {x:?}", s.backend);
    assert_eq!(
        (s.nonsingular, s.singular, s.at_infinity, s.failed),
        counts,
        "{s:?}"
    );
    assert!(x.continued <= tail + beyond_tail, "{x:?}");
    s
}

/// The shipped system `name` (polyhedral, seed 1) on `backend`, the paths `only` (all with
/// `None`), each endpoint shown to `seen`: the summary and how paths left the slots.
fn solve_shipped<B: Backend + ResidentTracker>(
    name: &str,
    backend: B,
    only: Option<Vec<u64>>,
    seen: &mut dyn FnMut(&Endpoint),
) -> (pathtrack::report::Summary, Exits) {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("systems/{name}.yaml"));
    let sys = pathtrack::system::load(&p).unwrap();
    let mut b = Tally {
        inner: backend,
        exits: Exits::default(),
        passes: 0,
    };
    let opts = SolveOptions {
        seed: 1,
        only,
        ..Default::default()
    };
    let s = pathtrack::solver::solve(&sys, &opts, &mut b, &mut |e: &Endpoint| {
        seen(e);
        Ok(())
    })
    .unwrap();
    (s, b.exits)
}
