//! The whole pipeline of `pathtrack solve`: start system → homotopy → batch tracking through
//! a backend → refinement and classification → summary. Library entry point for tests and
//! the CLI alike.

mod cascade;
mod early;
mod fallback;
pub mod gap;
pub mod limits;
pub mod linear;
pub mod plan;
pub mod resume;

use crate::backend::{cpu::CpuBackend, Backend};
use crate::error::{Error, Result};
use crate::eval::Residual;
use crate::post::{local_dimension, Endpoint, Refiner, Status};
use crate::report::{Summary, Tally};
use crate::start::mhom::homotopy::MhomStart;
use crate::start::polyhedral::{self, start::Polyhedral};
use crate::start::total_degree::TotalDegree;
use crate::system::System;
use crate::track::{track_all, StartPoint, TrackerOptions};
use rand::SeedableRng;
use serde_json::{json, Map};
use std::sync::Arc;

/// Endpoints wait in a [`RefineQueue`] until this many are there…
const REFINE_BATCH: usize = 256;
/// …or this long has passed since the last batch left for refinement, or a path that
/// stopped short of t = 1 comes (`TrackCode::stopped_short`: its refinement is the costly
/// tracking in double-double, so its batch leaves at once).
///
/// Not 200 ms without early dispatch: a GPU solve of chandra-12 takes ~1 s, and a path that
/// stopped short (tracked in double-double, 50–100 ms) could wait 200 ms before its
/// refinement began. Against that, measured on the H200 (chandra-12 seeds 1–3, three runs):
/// −6 % on seed 3, no change beyond the noise on seeds 1–2; the output is the same.
const REFINE_WAIT: std::time::Duration = std::time::Duration::from_millis(25);
/// Endpoints being refined at once, at most; the tracker waits for the oldest task beyond
/// this. Not 64 batches: a path that stopped short is a batch of its own (its refinement may
/// track it in double-double), and with the resident slots ending cyclic-12's paths at
/// infinity themselves ~100 such batches come per loop, so with 64 the GPU waits on the
/// refinement threads (233 loops in the first 100 s, against 453 with the paths at infinity
/// left to the host).
const REFINE_IN_FLIGHT: usize = 1 << 16;
/// A batch is refined as tasks of at most this many endpoints, each refining its own in
/// turn. A task never waits on another, so a refinement thread never starts one task inside
/// another: a task that split its batch across the pool (`into_par_iter`) would wait on its
/// other half, and while waiting its thread would run other queued batches on its own stack.
/// With thousands of batches in flight (each path that stopped short is one) that nesting
/// overflows a thread's stack (cyclic-12 on the H200, 30 s into the run, with the resident
/// slots stopping its paths at infinity in double-double mode themselves).
///
/// Endpoints per task. Refining costs from microseconds (Newton in double) to seconds
/// (double-double tracking of a stopped path, unpaced in the recovery rounds), and a task
/// serializes its endpoints: so a path that stopped short of t = 1
/// (`TrackCode::stopped_short`), and every endpoint of a recovery round, is a task of its
/// own (cyclic-12 seed 1 on the H200 with tasks of 16 for every endpoint: 143.5 s against
/// 125.5 s, recovery's first round 21.8 s against 7.0 s). The first pass's other endpoints
/// go in tasks of this many: a task per endpoint cost the tracker's loop, which starts the
/// tasks, ~20 µs per endpoint on a 16-core host (cyclic-13 on the H200: 69.5 s of its 93.5 s
/// first pass in the hand-over of endpoints against 13.5 s of 78.2 s with tasks of 32).
const REFINE_TASK: usize = 32;
/// [`REFINE_TASK`], or `PATHTRACK_REFINE_TASK` from the environment (experiments).
fn refine_task() -> usize {
    std::env::var("PATHTRACK_REFINE_TASK")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(REFINE_TASK)
}

/// Stack of a refinement thread. Re-trackings of recovery's first round during the first
/// pass ([`early`]) still wait on the backend's host pool and run other tasks meanwhile: at
/// most [`crate::track::resident::TAIL`] of them nest.
const REFINE_STACK: usize = 16 << 20;

/// How deeply refinement tasks nest on a thread ([`REFINE_TASK`]: a task never runs inside
/// another). Counted in the unit tests only; elsewhere [`task_depth::enter`] does nothing.
mod task_depth {
    #[cfg(test)]
    thread_local! {
        static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }
    /// The deepest nesting seen on any thread.
    #[cfg(test)]
    pub static DEEPEST: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// A refinement task running on this thread, until dropped.
    pub struct Task;

    pub fn enter() -> Task {
        #[cfg(test)]
        DEPTH.with(|d| {
            d.set(d.get() + 1);
            DEEPEST.fetch_max(d.get(), std::sync::atomic::Ordering::Relaxed);
        });
        Task
    }

    impl Drop for Task {
        fn drop(&mut self) {
            #[cfg(test)]
            DEPTH.with(|d| d.set(d.get() - 1));
        }
    }
}

/// Endpoints on their way from the tracker to the tally and the observer. The tracker hands
/// them over one at a time; a batch of them ([`REFINE_BATCH`] endpoints, or what came in
/// [`REFINE_WAIT`]) is refined ([`Refiner::process`]: Newton, double-double where needed,
/// the last stretch of a stalled path tracked in double-double, condition and rank) by a
/// task on the refinement pool while the tracker goes on. Finished batches reach the tally
/// and the observer in the order the tracker gave the endpoints, so the output does not
/// depend on timing.
///
/// Not refined while the tracker waits: then a batch takes as long as its slowest endpoint;
/// on chandra-12 (2 threads) the tracker waited 1.8 s of 8.7 s while a few endpoints
/// tracked in double-double kept one thread busy each, and on the device's 16 cores
/// chandra-16 ran with a load average of 3.
struct RefineQueue<'q, 'r, 'a, 's> {
    /// What refines an endpoint ([`Refiner::process`]).
    refine: &'r (dyn Fn(crate::track::PathEnd) -> Endpoint + Sync),
    scope: &'q rayon::Scope<'s>,
    attempt: u8,
    /// The first pass's watch for recovery's first round ([`early`]).
    early: Option<&'r early::Early<'a>>,
    pending: Vec<crate::track::PathEnd>,
    since: std::time::Instant,
    /// Endpoints per refinement task ([`REFINE_TASK`]).
    per_task: usize,
    /// Tasks being refined, oldest first.
    in_flight: InOrder<Vec<Endpoint>>,
    /// Endpoints in those tasks.
    in_flight_endpoints: usize,
    /// Seconds the tracker waited for the oldest task with [`REFINE_IN_FLIGHT`] endpoints in
    /// refinement (the refinement setting the pace, not the tracker).
    waited: f64,
}

/// Results of tasks, handed out in the order the tasks were started, whatever order they
/// finish in.
struct InOrder<T> {
    waiting: std::collections::VecDeque<std::sync::mpsc::Receiver<T>>,
}

impl<T> InOrder<T> {
    fn new() -> Self {
        InOrder {
            waiting: std::collections::VecDeque::new(),
        }
    }

    /// A new task's place in the order: the task sends its result there.
    fn start(&mut self) -> std::sync::mpsc::Sender<T> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.waiting.push_back(rx);
        tx
    }

    /// The oldest task's result: waited for when `wait`, else only if it is there already
    /// (`None` when it is not, or when no task waits). An error when that task ended
    /// without a result.
    fn next(&mut self, wait: bool) -> Result<Option<T>> {
        use std::sync::mpsc::TryRecvError;
        let Some(rx) = self.waiting.front() else {
            return Ok(None);
        };
        let got = if wait {
            rx.recv().ok()
        } else {
            match rx.try_recv() {
                Ok(v) => Some(v),
                Err(TryRecvError::Empty) => return Ok(None),
                Err(TryRecvError::Disconnected) => None,
            }
        };
        let v = got.ok_or_else(|| Error::Internal("a refinement task stopped".into()))?;
        self.waiting.pop_front();
        Ok(Some(v))
    }
}

impl<'q, 'r: 's, 'a: 'r, 's> RefineQueue<'q, 'r, 'a, 's> {
    fn new(
        refine: &'r (dyn Fn(crate::track::PathEnd) -> Endpoint + Sync),
        scope: &'q rayon::Scope<'s>,
        attempt: u8,
        early: Option<&'r early::Early<'a>>,
    ) -> Self {
        RefineQueue {
            refine,
            scope,
            attempt,
            early,
            pending: Vec::new(),
            since: std::time::Instant::now(),
            per_task: refine_task(),
            in_flight: InOrder::new(),
            in_flight_endpoints: 0,
            waited: 0.0,
        }
    }

    fn push(
        &mut self,
        end: crate::track::PathEnd,
        tally: &mut Tally,
        obs: &mut dyn Observer,
    ) -> Result<()> {
        let tracked_again = end.code.stopped_short();
        self.pending.push(end);
        if tracked_again
            || self.pending.len() >= REFINE_BATCH
            || self.since.elapsed() >= REFINE_WAIT
        {
            self.dispatch();
        }
        self.report(false, tally, obs)
    }

    /// Sends the waiting endpoints to be refined.
    fn dispatch(&mut self) {
        self.since = std::time::Instant::now();
        if self.pending.is_empty() {
            return;
        }
        self.in_flight_endpoints += self.pending.len();
        let mut ends = std::mem::take(&mut self.pending).into_iter().peekable();
        let refine = self.refine;
        // Recovery rounds: every endpoint alone (see REFINE_TASK).
        let per_task = if self.attempt == 0 { self.per_task } else { 1 };
        loop {
            // By the iterator: splitting the rest off a Vec for each task moved the batch's
            // endpoints once per task (quadratic in the batch). A path that stopped short
            // is a task of its own.
            let mut task: Vec<crate::track::PathEnd> = Vec::new();
            while let Some(e) = ends.peek() {
                let costly = e.code.stopped_short();
                if task.len() == per_task || (costly && !task.is_empty()) {
                    break;
                }
                task.extend(ends.next());
                if costly {
                    break;
                }
            }
            if task.is_empty() {
                break;
            }
            let tx = self.in_flight.start();
            self.scope.spawn(move |_| {
                let _nested = task_depth::enter();
                let done: Vec<Endpoint> = task.into_iter().map(refine).collect();
                // The receiver lives until the queue is drained, which waits for this task.
                let _ = tx.send(done);
            });
        }
    }

    /// Reports the refined tasks at the front, in order: those already done, and (`all`,
    /// or beyond [`REFINE_IN_FLIGHT`]) waiting for the oldest.
    fn report(&mut self, all: bool, tally: &mut Tally, obs: &mut dyn Observer) -> Result<()> {
        loop {
            let paced = !all && self.in_flight_endpoints > REFINE_IN_FLIGHT;
            let t0 = paced.then(std::time::Instant::now);
            let Some(done) = self.in_flight.next(all || paced)? else {
                break;
            };
            if let Some(t0) = t0 {
                self.waited += t0.elapsed().as_secs_f64();
            }
            self.in_flight_endpoints -= done.len();
            for mut e in done {
                e.attempt = self.attempt;
                tally.add(&e);
                if let Some(early) = self.early {
                    early.observe(&e, self.scope);
                }
                obs.endpoint(&e)?;
            }
        }
        Ok(())
    }

    /// Refines every endpoint still waiting and reports them all.
    fn finish(&mut self, tally: &mut Tally, obs: &mut dyn Observer) -> Result<()> {
        self.dispatch();
        self.report(true, tally, obs)
    }
}

/// Which start system to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StartKind {
    /// Total degree or m-hom where their path counts are close to the (stable) mixed
    /// volume (their paths are cheaper), polyhedral otherwise; the summary says which and
    /// why.
    Auto,
    /// Huber–Sturmfels polyhedral homotopy (mixed cells, binomial start systems).
    Polyhedral,
    /// γ(1−t)(x_k^{d_k} − 1) + t F.
    TotalDegree,
    /// γ(1−t)G + tF with the linear-product start system G of a variable partition.
    Mhom,
}

impl StartKind {
    pub fn name(self) -> &'static str {
        match self {
            StartKind::Auto => "auto",
            StartKind::Polyhedral => "polyhedral",
            StartKind::TotalDegree => "total-degree",
            StartKind::Mhom => "mhom",
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
    /// Polyhedral: solutions in (C*)^n only (no constants added to the supports).
    pub torus: bool,
    /// Threads for the mixed-cell counts and the refinement of endpoints (0: all cores).
    pub threads: usize,
    /// m-hom start: the variable partition (the best one found when `None`).
    pub partition: Option<crate::start::mhom::Partition>,
    /// Track only these paths (sorted indices); `None`: all.
    pub only: Option<Vec<u64>>,
    /// Bounds on the size of the run, checked before tracking ([`limits`]).
    pub limits: limits::Limits,
    /// Start recovery's first round during the first pass where it can (`early`); the
    /// output is the same either way. Default: on, unless the environment sets
    /// `PATHTRACK_EARLY_RECOVERY=0`.
    pub early_recovery: bool,
    /// Test the singular solutions for points of positive-dimensional components after
    /// recovery ([`crate::post::local_dimension`]). Default: on, unless the environment sets
    /// `PATHTRACK_LOCAL_DIMENSION=0`.
    pub local_dimension: bool,
    /// Track these start points along this homotopy instead of a start system of `start`
    /// (parameter homotopies and user start systems, [`crate::params`]).
    pub given: Option<Arc<crate::start::given::GivenStart>>,
    /// Part of a run: a shard, or a run that continues from finished endpoints ([`plan`]).
    pub plan: plan::Plan,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            start: StartKind::Polyhedral,
            seed: 1,
            tracker: TrackerOptions::default(),
            tau_start: -16.0,
            torus: false,
            threads: 0,
            partition: None,
            only: None,
            limits: Default::default(),
            early_recovery: early::enabled(),
            local_dimension: crate::post::local_dimension::enabled(),
            given: None,
            plan: Default::default(),
        }
    }
}

/// The random generator every random choice of a run draws from (γ, liftings, patches).
pub fn rng_for(seed: u64) -> rand_chacha::ChaCha8Rng {
    rand_chacha::ChaCha8Rng::seed_from_u64(seed)
}

/// Least time bound of a recovery round, in seconds: a first pass of a fraction of a second
/// leaves its few hard paths this long.
pub const ROUND_TIME_FLOOR: f64 = 10.0;

/// The time bound of each recovery round: the wall seconds of the first pass and of the
/// start system before it (no round takes longer than that; a round of a polyhedral start
/// finds its paths' start points again, which for `--paths 954086,…` of cyclic-14 takes
/// longer than tracking them did), at least [`ROUND_TIME_FLOOR`]. Paths still on the host
/// tracker at the bound stop with [`crate::track::TIME_BOUND_REASON`]; where such a path
/// had a solution of its own before the round, that endpoint stands.
pub fn round_time_bound(start_and_first_pass_seconds: f64) -> std::time::Duration {
    std::time::Duration::from_secs_f64(start_and_first_pass_seconds.max(ROUND_TIME_FLOOR))
}

/// The gap recovery's re-tracking ([`gap::Retrack`]) through a solve's tracking closure:
/// a recovery round (attempt 1) with the first pass's tracker, paced.
struct GapRetrack<'a, F> {
    track: &'a mut F,
    tracker: &'a TrackerOptions,
    tally: &'a mut Tally,
    obs: &'a mut dyn Observer,
    backend: &'a mut dyn Backend,
    pool: &'a rayon::ThreadPool,
}

impl<F> gap::Retrack for GapRetrack<'_, F>
where
    F: FnMut(
        Option<Arc<Vec<u64>>>,
        &TrackerOptions,
        u8,
        bool,
        &mut Tally,
        &mut dyn Observer,
        &mut dyn Backend,
    ) -> Result<()>,
{
    fn retrack(&mut self, ids: &[u64]) -> Result<u64> {
        let mut watch = gap::Watch {
            inner: &mut *self.obs,
            candidates: Vec::new(),
            steps: 0,
            every_at_infinity: false,
        };
        (self.track)(
            Some(Arc::new(ids.to_vec())),
            self.tracker,
            1,
            true,
            &mut *self.tally,
            &mut watch,
            &mut *self.backend,
        )?;
        Ok(watch.steps)
    }

    fn finite_among(&mut self, ids: &[u64]) -> u64 {
        let ends = self.tally.snapshot(ids);
        ends.iter().filter(|(_, s, _)| s.is_finite()).count() as u64
    }

    fn finite_with_multiplicity(&mut self) -> (u64, u64) {
        let tally = &*self.tally;
        self.pool.install(|| tally.finite_with_multiplicity())
    }
}

/// What a caller of [`solve`] sees while it runs.
pub trait Observer {
    /// The number of paths, once the start system is built.
    fn total(&mut self, _paths: u128) {}
    /// Every path's endpoint as it finishes (in a deterministic order); a re-tracked path
    /// is reported again (`Endpoint::attempt > 0`).
    fn endpoint(&mut self, e: &Endpoint) -> Result<()>;
    /// The solve enters a phase (start system, first pass, recovery round).
    fn phase(&mut self, _phase: crate::report::progress::Phase) {}
}

impl<F: FnMut(&Endpoint) -> Result<()>> Observer for F {
    fn endpoint(&mut self, e: &Endpoint) -> Result<()> {
        self(e)
    }
}

/// Solves `system` on `backend`, reporting to `obs`.
pub fn solve(
    system: &System,
    opts: &SolveOptions,
    backend: &mut dyn Backend,
    obs: &mut dyn Observer,
) -> Result<Summary> {
    let clock = std::time::Instant::now();
    let warnings = crate::system::parse::rounding::coefficient_warnings(system);
    // Every equation of moderate size (the roots, and so the reported solutions, are the
    // user's): the homotopies, residuals and thresholds below assume it.
    let (equilibrated, _) = system.equilibrated();
    let system = &equilibrated;
    let mut rng = rng_for(opts.seed);
    let mut root_counts = Map::new();
    let td_count = system.total_degree();
    root_counts.insert(
        "total_degree".into(),
        td_count
            .map(crate::report::count_value)
            .unwrap_or(serde_json::Value::Null),
    );
    obs.phase(crate::report::progress::Phase::StartSystem);
    let resolved = resolve_start(system, opts, &mut rng, &mut root_counts)?;
    let kind = resolved.kind;
    let mut start_reason = resolved.reason;
    // A square linear system whose point one LU decides: no homotopy is built ([`linear`]).
    if kind == StartKind::TotalDegree && opts.given.is_none() {
        let (w, r, why) = (warnings.clone(), root_counts.clone(), start_reason.clone());
        if let Some(s) = linear::solved(system, opts, backend, obs, clock, w, r, why)? {
            return Ok(s);
        }
    }
    let (start, paths) = match kind {
        _ if opts.given.is_some() => {
            let given = opts.given.clone().expect("checked");
            let count = given.points.len() as u128;
            (Start::Given(given), count)
        }
        StartKind::TotalDegree => {
            let td = TotalDegree::new(system, &mut rng)?;
            let count = td.path_count();
            (Start::Td(td), count)
        }
        StartKind::Polyhedral | StartKind::Auto => {
            let poly = match resolved.poly {
                Some(p) => p,
                None => Arc::new(Polyhedral::new(system, opts.torus, &mut rng, opts.threads)?),
            };
            if opts.torus {
                root_counts.insert(
                    "mixed_volume".into(),
                    crate::report::count_value(poly.paths),
                );
            } else {
                let supports = polyhedral::Supports::from_system(system)?;
                let mv = polyhedral::mixed_volume_of(&supports, opts.seed, opts.threads)?;
                root_counts.insert(
                    "mixed_volume".into(),
                    crate::report::count_value(mv.mixed_volume),
                );
                root_counts.insert(
                    "stable_mixed_volume".into(),
                    crate::report::count_value(poly.paths),
                );
            }
            root_counts.insert(cells_key(&poly).into(), json!(poly.cells));
            let paths = poly.paths;
            (Start::Poly(poly), paths)
        }
        StartKind::Mhom => {
            let partition = opts.partition.as_ref().or(resolved.partition.as_ref());
            let m = MhomStart::new(system, partition, &mut rng)?;
            let count = m.start.count();
            root_counts.insert("mhom_bezout".into(), crate::report::count_value(count));
            root_counts.insert(
                "partition".into(),
                json!(m.start.partition().display(&system.variables)),
            );
            (Start::Mhom(m), count)
        }
    };
    limits::check(system, paths, opts.only.as_deref(), &opts.limits)?;
    // The roots a total-degree or m-hom start of `--start auto` is held to: its stable mixed
    // volume, which the choice computed ([`fallback`]).
    let root_count = match start {
        Start::Td(_) | Start::Mhom(_) if opts.plan.is_whole() && opts.only.is_none() => root_counts
            .get("stable_mixed_volume")
            .and_then(|v| v.as_u64()),
        _ => None,
    };
    // A shard or a resumed run tracks part of the paths in its first pass ([`plan`]).
    let planned;
    let opts = match opts.plan.first_pass(paths, opts.only.as_deref())? {
        Some(only) => {
            planned = SolveOptions {
                only: Some(only),
                ..opts.clone()
            };
            &planned
        }
        None => opts,
    };
    // Paths tracked in the first pass: all, or those `only` names.
    let tracked = opts.only.as_ref().map_or(paths, |p| p.len() as u128);
    let mut opts = std::borrow::Cow::Borrowed(opts);
    let batch_cap = limits::batch_cap(tracked);
    if opts.tracker.batch > batch_cap {
        opts.to_mut().tracker.batch = batch_cap;
    }
    let opts = opts.as_ref();
    obs.total(tracked);
    obs.phase(crate::report::progress::Phase::FirstPass {
        paths: tracked as u64,
    });
    // Seconds since the previous lap (the first: since the start of the solve).
    let mut lapped = 0.0;
    let mut lap = || {
        let now = clock.elapsed().as_secs_f64();
        let seconds = now - lapped;
        lapped = now;
        seconds
    };
    let mut phases = crate::report::Phases {
        start_system: lap(),
        ..Default::default()
    };
    backend.expect_paths(tracked);
    backend.set_homotopy(start.homotopy())?;
    phases.backend_setup = lap();
    // `--backend auto` chose where the paths go, and with it their batch.
    let with_batch;
    let opts = match backend.preferred_batch() {
        Some(batch) => {
            let mut o = opts.clone();
            o.tracker.batch = batch;
            with_batch = o;
            &with_batch
        }
        None => opts,
    };
    let gpu = backend.pci_bus_id();
    let mut refiner = Refiner::new(system, opts.tracker.tau_end);
    refiner.torus = opts.torus;
    refiner.track_near_one(start.homotopy());
    refiner.bridge_in_double(start.homotopy(), &opts.tracker);
    let refine_cost = refiner.cost.clone();
    let mut tally = Tally::default();
    opts.plan.done().iter().for_each(|e| tally.add(e));
    let mut attempt = 0u8;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .stack_size(REFINE_STACK)
        .thread_name(|i| format!("refine-{i}"))
        .build()
        .map_err(|e| Error::Internal(format!("refinement threads: {e}")))?;
    // Recovery's first round, started during the first pass where the host tracks it
    // ([`early`]): resident tracking (a first round of few paths never reaches the slots), a
    // run small enough to keep its start points, residuals in double.
    let early = (opts.early_recovery
        && opts.plan.is_whole()
        && paths <= early::EARLY_MAX_PATHS
        && opts.tracker.residual != Residual::DoubleDouble
        && backend.resident().is_some())
    .then(|| {
        let cap = match start {
            Start::Poly(_) => verify_diverging_max(paths as u64),
            _ => 0,
        };
        let round1 = start.tracker_for(&opts.tracker.tightened(1));
        early::Early::new(system, start.homotopy(), round1, cap)
    });
    // Round 1's suspects, when the first pass computed them already.
    let first_round: std::cell::Cell<Option<Vec<u64>>> = Default::default();
    let waited_for_refinement = std::cell::Cell::new(0.0f64);
    let mut track = |only: Option<Arc<Vec<u64>>>,
                     tracker: &TrackerOptions,
                     attempt: u8,
                     paced: bool,
                     tally: &mut Tally,
                     obs: &mut dyn Observer,
                     backend: &mut dyn Backend| {
        refiner.last_attempt = attempt >= RECOVERY_ROUNDS;
        refiner.attempt = attempt;
        refiner.paced = paced;
        refiner.set_bridge_deadline(tracker.deadline);
        let refiner = &refiner;
        let refine = |e| refiner.process(e);
        let early = early.as_ref().filter(|_| attempt == 0);
        pool.in_place_scope(|scope| {
            let mut queue = RefineQueue::new(&refine, scope, attempt, early);
            let mut on_end = |end| queue.push(end, tally, obs);
            let record = early.map(|e| &e.starts);
            let tracked = start.track(only, tracker, opts.tau_start, backend, record, &mut on_end);
            // Every batch sent is waited for, also after a tracking error.
            let reported = queue.finish(tally, obs);
            waited_for_refinement.set(waited_for_refinement.get() + queue.waited);
            if let Some(early) = early {
                // Re-trackings early of paths that are no suspects stop before the scope
                // waits for them.
                let suspects = pool.install(|| suspects_after(tally, 0, &start, paths as u64));
                early.settle(&suspects);
                first_round.set(Some(suspects));
            }
            tracked.and(reported)
        })
    };
    let meter = crate::report::usage::UsageMeter::start(gpu);
    // An m-hom start's gap candidates are all its paths at infinity ([`gap`]).
    let every_at_infinity = matches!(start, Start::Mhom(_));
    // The first pass's paths put at infinity by an estimate and its steps ([`gap`]).
    let mut watch = gap::Watch {
        inner: &mut *obs,
        candidates: Vec::new(),
        steps: 0,
        every_at_infinity,
    };
    match &opts.plan.feed {
        None => track(
            opts.only.clone().map(Arc::new),
            &opts.tracker,
            attempt,
            false,
            &mut tally,
            &mut watch,
            &mut *backend,
        )?,
        // Batches handed out while the run goes on ([`plan::PathFeed`]).
        Some(feed) => {
            while let Some(ids) = feed.0.next(paths)? {
                track(
                    Some(Arc::new(ids)),
                    &opts.tracker,
                    attempt,
                    false,
                    &mut tally,
                    &mut watch,
                    &mut *backend,
                )?;
            }
        }
    }
    let (mut candidates, mut first_pass_steps) = (watch.candidates, watch.steps);
    // A resumed run's first-pass lines from before are part of its first pass: the gap
    // recovery sees what the uninterrupted run saw.
    for e in opts.plan.done().iter().filter(|e| e.attempt == 0) {
        first_pass_steps += e.steps() as u64;
        candidates.extend(gap::Candidate::of_start(e, every_at_infinity));
    }
    phases.tracking = lap();
    phases.tracking_usage = meter.finish();
    phases.tracking_usage.refine_parts = refine_cost.take();
    phases.tracking_usage.waited_for_refinement = Some(waited_for_refinement.get());
    // Recovery: paths that share a nonsingular endpoint (one of them jumped) and failed
    // paths are tracked again with tighter tolerances.
    // Each re-tracked path's endpoint before its first re-tracking.
    let mut before = Vec::new();
    // Short of a bound on the finite roots: the paths at infinity by an estimate, tracked
    // again with their last stretch in double-double ([`gap`]).
    // A polyhedral start's estimates at ill-conditioned points are verified in recovery's
    // first round (VERIFY_DIVERGING_COND); the gap recovery takes the others.
    let candidates: Vec<gap::Candidate> = match start {
        Start::Poly(_) => candidates
            .into_iter()
            .filter(|c| c.condition < VERIFY_DIVERGING_COND || c.condition.is_nan())
            .collect(),
        Start::Td(_) | Start::Mhom(_) => candidates,
        Start::Given(_) => Vec::new(),
    };
    // Every path of the run is here (a resumed run's done lines included), not a shard's.
    let all_paths = opts.plan.shard.is_none() && opts.plan.feed.is_none();
    let gap_wanted = all_paths && !opts.plan.first_pass_only && !candidates.is_empty();
    // The bound the gap recovery held the run to, when it computed it.
    let mut gap_bound = None;
    if gap_wanted {
        let clock = std::time::Instant::now();
        let counted = root_counts
            .get("stable_mixed_volume")
            .and_then(|v| v.as_u64());
        let bound = match (&start, counted) {
            // The start's paths are its root count (the mixed volume in (C*)^n, the
            // stable one in C^n).
            (Start::Poly(_), _) => u64::try_from(paths).ok(),
            // `--start auto` counted it (also for a resumed run, whose fallback is off).
            (_, Some(b)) => Some(b),
            _ => {
                let counts = pool.install(|| gap::root_bound(system, opts.seed, opts.threads));
                if let Some((mv, smv)) = counts {
                    for (key, v) in [("mixed_volume", mv), ("stable_mixed_volume", smv)] {
                        root_counts
                            .entry(key)
                            .or_insert(crate::report::count_value(v));
                    }
                }
                counts.map(|(mv, smv)| mv.max(smv))
            }
        };
        gap_bound = bound;
        let before = pool.install(|| tally.finite_with_multiplicity());
        let finite = before.0;
        if let Some(bound) = bound.filter(|&b| finite < b) {
            let budget = gap::step_budget(first_pass_steps);
            let most = gap::path_cap(paths as u64, matches!(start, Start::Poly(_)));
            // An m-hom start's candidates go to log coordinates in the endgame zone
            // where their smallest coordinates lose their digits ([`gap`]).
            let gap_tracker = match start {
                Start::Mhom(_) => TrackerOptions {
                    zone_rounding_switch: true,
                    ..opts.tracker.clone()
                },
                _ => opts.tracker.clone(),
            };
            let mut run = GapRetrack {
                track: &mut track,
                tracker: &gap_tracker,
                tally: &mut tally,
                obs: &mut *obs,
                backend: &mut *backend,
                pool: &pool,
            };
            let wait = gap::fruitless_cond(matches!(start, Start::Poly(_)));
            let mut g = gap::recover(candidates, bound, before, (budget, most), wait, &mut run)?;
            // The bound's computation included.
            g.seconds = clock.elapsed().as_secs_f64();
            // Recovery's suspects, found again with the re-tracked paths.
            first_round.take();
            phases.gap_recovery = Some(g);
        }
    }
    // Short of the stable mixed volume (before recovery, which would re-track failed paths
    // in vain): the polyhedral start's roots that no path reached
    // go to the paths at infinity or failed ([`fallback`]).
    // An m-hom start asked for is held to the gap recovery's bound as well: its paths leave
    // double range as `--start auto`'s do (the sparse chain), and the gap recovery's
    // re-tracking in log coordinates brings back most, not all, of their roots.
    let root_count = root_count.or(match start {
        Start::Mhom(_) if opts.plan.is_whole() && opts.only.is_none() => gap_bound,
        _ => None,
    });
    let lost = root_count
        .filter(|_| !opts.plan.first_pass_only)
        .and_then(|roots| fallback::short_of_root_count(&tally, paths as u64, roots));
    if let Some(lost) = lost {
        let polyhedral = SolveOptions {
            start: StartKind::Polyhedral,
            ..opts.clone()
        };
        let mut found = std::collections::BTreeMap::new();
        solve(system, &polyhedral, backend, &mut |e: &Endpoint| {
            found.insert(e.path, e.clone());
            Ok(())
        })?;
        // That solve left its own homotopy in the backend; recovery tracks this one.
        backend.set_homotopy(start.homotopy())?;
        let found: Vec<Endpoint> = found.into_values().collect();
        let given = fallback::give_roots_to_lost_paths(&tally, paths as u64, &lost, &found, 1);
        let ids: Vec<u64> = given.iter().map(|e| e.path).collect();
        before.extend(tally.snapshot(&ids));
        for e in &given {
            tally.add(e);
            obs.endpoint(e)?;
        }
        // Recovery's suspects, found again without the paths given roots.
        first_round.take();
        let note = format!(
            "{} of {} paths at infinity or failed, short of the stable mixed volume {}: the polyhedral \
             start was solved too, and {} of its roots that no path reached were given to them",
            lost.len(),
            paths,
            root_count.unwrap_or_default(),
            given.len()
        );
        start_reason = Some(match start_reason {
            Some(r) => format!("{r}; {note}"),
            None => note,
        });
    }
    let mut seen = std::collections::HashSet::new();
    let mut retracked_early = 0;
    // Paths displaced by re-tracked ones bring their neighbours along, and rounds go on
    // while some are displaced ([`cascade`]).
    let mut cascade = cascade::Cascade::default();
    while !opts.plan.first_pass_only && attempt < RECOVERY_ROUNDS + EXTRA_ROUNDS + cascade.rounds()
    {
        let finding = std::time::Instant::now();
        let mut suspects = match first_round.take() {
            Some(s) => s,
            None => pool.install(|| suspects_after(&tally, attempt, &start, paths as u64)),
        };
        if attempt.saturating_sub(cascade.rounds()) >= RECOVERY_ROUNDS {
            // After the last round, only paths no round has tracked again: the last round can
            // move a path onto the solution of one whose endpoint nobody doubted yet.
            suspects.retain(|p| !seen.contains(p));
        }
        suspects.extend(cascade.take_next());
        suspects.sort_unstable();
        suspects.dedup();
        if suspects.is_empty() {
            break;
        }
        attempt += 1;
        obs.phase(crate::report::progress::Phase::Recovery {
            round: attempt,
            paths: suspects.len() as u64,
        });
        let finding_seconds = finding.elapsed().as_secs_f64();
        let round_clock = std::time::Instant::now();
        let round_paths = suspects.len() as u64;
        let new: Vec<u64> = suspects
            .iter()
            .copied()
            .filter(|p| seen.insert(*p))
            .collect();
        before.extend(tally.snapshot(&new));
        // Tighter steps each round, and in the last round double-double residuals all along
        // the path; the extra rounds as the last.
        // Rounds that follow a cascade ([`cascade`]) do not tighten further: the first
        // round's steps brought its re-tracked paths to their own roots.
        let level = attempt
            .saturating_sub(cascade.rounds())
            .clamp(1, RECOVERY_ROUNDS);
        let mut tracker = opts.tracker.tightened(level as u32);
        if level >= RECOVERY_ROUNDS {
            tracker.residual = Residual::DoubleDouble;
        }
        tracker.deadline =
            Some(round_clock + round_time_bound(phases.start_system + phases.tracking));
        let round_ids = suspects.clone();
        let earlier: Vec<Endpoint> = suspects
            .iter()
            .filter_map(|&p| tally.nonsingular_endpoint(p))
            .collect();
        match early
            .as_ref()
            .filter(|e| attempt == 1 && e.covers(&suspects))
        {
            Some(early) => {
                let (ends, n) = pool.install(|| early.round(&suspects))?;
                retracked_early += n;
                for e in ends {
                    tally.add(&e);
                    obs.endpoint(&e)?;
                }
            }
            None => {
                for (paths, tracker) in round_groups(&tally, suspects, attempt, &tracker) {
                    track(
                        Some(Arc::new(paths)),
                        &tracker,
                        attempt,
                        false,
                        &mut tally,
                        &mut *obs,
                        &mut *backend,
                    )?;
                }
            }
        }
        // A path that shared its solution with another, and now fails or diverges while the
        // other went elsewhere, keeps its earlier endpoint: that solution has no other path.
        for mut e in tally.lost_by_retracking(&earlier) {
            e.attempt = attempt;
            e.reason = Some(format!(
                "re-tracking (attempt {attempt}) did not end at a finite solution; the \
                 earlier endpoint stands, as no other path ends there"
            ));
            tally.add(&e);
            obs.endpoint(&e)?;
        }
        pool.install(|| cascade.after_round(&tally, &round_ids, &seen));
        phases.recovery_rounds.push(crate::report::RecoveryRound {
            paths: round_paths,
            finding_seconds,
            seconds: round_clock.elapsed().as_secs_f64(),
        });
    }
    phases.recovery = lap();
    if opts.local_dimension && !opts.plan.first_pass_only {
        let seed = opts.seed;
        let found = pool.install(|| {
            local_dimension::relabel(system, tally.singular_clusters(), seed, attempt + 1)
        });
        for e in found {
            tally.add(&e);
            obs.endpoint(&e)?;
        }
    }
    // Clustering runs on the refinement threads (`dedup`'s parallel sweep), once: the
    // counts, the recovered paths and the solutions read the same clusters.
    let c = pool.install(|| tally.counts());
    let (retracked, recovered) = (before.len() as u64, tally.recovered_since(&before));
    let failed_reasons = tally.failed_reasons();
    // Moved out of the tally, not copied (docs/performance.md: memory per path).
    let solutions = tally.into_solutions();
    let mut summary = Summary {
        system: system.name.clone(),
        variables: system.n(),
        paths: tracked as u64 + opts.plan.done().len() as u64,
        finite: c.nonsingular + c.singular,
        nonsingular: c.nonsingular,
        singular: c.singular,
        at_infinity: c.at_infinity,
        outside_torus: opts.torus.then_some(c.outside_torus),
        positive_dimensional: c.positive_dimensional,
        real: c.real,
        real_nonsingular: c.real_nonsingular,
        real_singular: c.real_singular,
        failed: c.failed,
        failed_reasons,
        duplicate_paths: c.duplicate_paths,
        recovered,
        retracked,
        retracked_early,
        seconds: clock.elapsed().as_secs_f64(),
        phases,
        backend: backend.name(),
        kernels: backend.setup_note(),
        start: match &start {
            Start::Given(g) => g.name.clone(),
            _ => kind.name().into(),
        },
        start_reason,
        seed: opts.seed,
        root_counts,
        warnings,
        attention: Vec::new(),
        solutions,
    };
    summary.attention = crate::report::attention(&summary);
    Ok(summary)
}

/// The start system `opts.start` asks for, with `--start auto` settled
/// ([`crate::start::choose`]): the choice, the polyhedral start when the choice built it
/// (its mixed cells are counted once), and the reason. `auto` builds the polyhedral start
/// from a copy of `rng`, kept when polyhedral is chosen: either way the run draws what the
/// explicit `--start` of the choice draws, so both give the same paths. `--torus` asks for
/// polyhedral, `--partition` for m-hom.
fn resolve_start(
    system: &System,
    opts: &SolveOptions,
    rng: &mut rand_chacha::ChaCha8Rng,
    root_counts: &mut Map<String, serde_json::Value>,
) -> Result<Resolved> {
    let fixed = |kind, reason: Option<&str>| Resolved {
        kind,
        poly: None,
        partition: None,
        reason: reason.map(String::from),
    };
    if let Some(given) = &opts.given {
        return Ok(fixed(opts.start, Some(&given.reason)));
    }
    if opts.start != StartKind::Auto {
        return Ok(fixed(opts.start, None));
    }
    if opts.torus {
        let why = "--torus: solutions in (C*)^n";
        return Ok(fixed(StartKind::Polyhedral, Some(why)));
    }
    if opts.partition.is_some() {
        return Ok(fixed(StartKind::Mhom, Some("--partition given")));
    }
    // A linear system has one path of the total-degree start, and the mixed cells of
    // hundreds of variables take minutes (n = 150: over 100 s): no count can beat 1.
    if system.total_degree() == Some(1) {
        return Ok(fixed(StartKind::TotalDegree, Some(LINEAR_REASON)));
    }
    let mut trial = rng.clone();
    let poly = Arc::new(Polyhedral::new(system, false, &mut trial, opts.threads)?);
    let td = system.total_degree();
    let laurent = system.equations.iter().any(|f| f.is_laurent());
    let mut partition = None;
    let target_terms = system.equations.iter().map(|f| f.terms.len() as u128).sum();
    let choice = crate::start::choose(td, poly.paths, system.n(), target_terms, || {
        if laurent {
            return None;
        }
        let (p, count) = crate::start::mhom::best_partition(system).ok()?;
        let bezout = count.to_string().parse::<u128>().ok()?;
        let degrees = crate::start::mhom::degree_matrix(system, &p).ok()?;
        let start_terms = crate::start::mhom::start_terms(&degrees, &p);
        partition = Some(p);
        Some(crate::start::MhomCount {
            bezout,
            start_terms,
        })
    });
    let mut r = Resolved {
        kind: StartKind::Polyhedral,
        poly: None,
        partition: None,
        reason: Some(choice.reason),
    };
    match choice.start {
        crate::start::Chosen::Polyhedral => {
            *rng = trial;
            r.poly = Some(poly);
        }
        chosen => {
            root_counts.insert(
                "stable_mixed_volume".into(),
                crate::report::count_value(poly.paths),
            );
            root_counts.insert(cells_key(&poly).into(), json!(poly.cells));
            r.kind = match chosen {
                crate::start::Chosen::Mhom => StartKind::Mhom,
                _ => StartKind::TotalDegree,
            };
            r.partition = partition;
        }
    }
    Ok(r)
}

/// `start_reason` of a linear system under `--start auto`.
pub const LINEAR_REASON: &str = "total degree 1 (a linear system)";

/// [`resolve_start`]'s answer.
struct Resolved {
    kind: StartKind,
    /// The polyhedral start, when the choice built it.
    poly: Option<Arc<Polyhedral>>,
    /// The m-hom partition the choice found.
    partition: Option<crate::start::mhom::Partition>,
    reason: Option<String>,
}

/// The paths the recovery round after `attempt` tracks again: those that share a
/// nonsingular solution (one of them jumped) and the failed ones; after the first pass,
/// with a polyhedral start, also those put at infinity by an estimate at an
/// ill-conditioned point ([`VERIFY_DIVERGING_COND`]), when there are at most
/// [`verify_diverging_max`] of them. Sorted.
fn suspects_after(tally: &Tally, attempt: u8, start: &Start, paths: u64) -> Vec<u64> {
    let mut suspects = tally.suspects();
    // Before any re-tracking: paths at infinity, disjoint from the suspects.
    if attempt == 0 && matches!(start, Start::Poly(_)) {
        let estimated = tally.estimated_at_infinity(VERIFY_DIVERGING_COND);
        if estimated.len() as u64 <= verify_diverging_max(paths) {
            suspects.extend(estimated);
            suspects.sort_unstable();
        }
    }
    suspects
}

/// A path put at infinity by an estimate ([`Endpoint::at_infinity_by_estimate`]: stopped as
/// diverging, a stable valuation of the homogenizing coordinate at `s ≤`
/// [`crate::track::path::DIVERGENCE_S`], or stalled with a positive valuation) at a point of
/// condition at least this is re-tracked in the first recovery round, where its last
/// stretch is tracked in double-double from its checkpoint ([`crate::track::dd`]). Near a
/// cluster of solutions of huge norm the estimate cannot tell them from infinity: the path
/// to chandra-12's solution of norm 5e7 (path 1107, resident slots, seed 1) still had
/// `|y_n| ∼ 1.6e-4·s^{1/4}` at s = 1e-8 (κ = 1.6e8), a regime that lasts down to
/// s ≈ 1e-16; chandra-13's path 1066 (seed 1) stopped at κ = 4.9e7, and its path 3714
/// (seed 1, CPU) at κ = 4.6e5, below what a threshold of 1e6 would catch
/// (tests/endgame.rs). A well-conditioned point is far from such a cluster. The cost is
/// bounded by [`verify_diverging_max`].
pub const VERIFY_DIVERGING_COND: f64 = 1e5;

/// The most paths verified as in [`VERIFY_DIVERGING_COND`] (`max(64, paths/256)`; with more,
/// none is; and only for polyhedral starts: total-degree and m-hom starts send every path
/// beyond the root count to infinity, cyclic-5: 50 of 120, most at ill-conditioned points,
/// while a polyhedral path diverges only where the target's coefficients are special). A system whose
/// paths reach positive-dimensional sets at infinity has thousands (cyclic-9: about 1,900
/// of its 3,888 diverging paths stop at κ ≥ 1e8), and tracking all of them again would
/// cost more than the run; there the estimate stands and none is re-tracked.
pub fn verify_diverging_max(paths: u64) -> u64 {
    (paths / 256).max(64)
}

/// Rounds of re-tracking for suspect paths, round `k` with the predictor error target
/// `1e-6/100^k` ([`TrackerOptions::tightened`]), the last also with double-double residuals
/// at every Newton correction of the path ([`Residual::DoubleDouble`]).
///
/// The last round's 1e-12, not 1e-10 (as tight as the second round): chandra-16
/// (seed 1) has two sheets that pass each other at s ≈ 26.79, far from t = 1. The path on
/// one of them (31675) heads there towards a coordinate point (its other coordinates fall
/// from 1e-2 to 2e-9 of the largest within Δs ≈ 0.2; condition 1.6e5 in its cell's
/// coordinates); the path on the other (31677, another cell, condition 11 in its
/// coordinates) crossed over to the first one's sheet at every target down to 1e-10, in
/// double and in double-double, and both ended on one solution, its own root lost. At 1e-12
/// and 1e-14 all three paths involved (9266, 31675, 31677) end on three distinct solutions,
/// and so does 31677 tracked in double-double from s = 40 with the target 1e-13.
pub const RECOVERY_ROUNDS: u8 = 3;

/// Rounds after [`RECOVERY_ROUNDS`], with its settings, for paths that no round has tracked
/// again yet and that now share their solution with a re-tracked path. On chandra-14
/// (seed 1, CPU) the last round tracked 7 paths to t = 1 in double-double onto solutions whose
/// only path had ended there by Newton from a point where it stalled (s ≈ 5e-15): those
/// paths had jumped, and were never tracked again.
pub const EXTRA_ROUNDS: u8 = 2;

/// From this recovery round on, paths that failed in every earlier attempt are tracked with
/// [`TrackerOptions::zone_rounding_switch`]: in double and in double-double they met the same
/// trouble, and the switch to log coordinates inside the endgame zone is what they lack.
pub const ZONE_SWITCH_FROM_ROUND: u8 = 2;

/// The groups of a recovery round's paths (`suspects`, sorted) with their tracker options:
/// from round [`ZONE_SWITCH_FROM_ROUND`] on, the paths whose current endpoint is a failure
/// apart, with the zone switch; the others (and every path of earlier rounds) with
/// `tracker`. Empty groups are left out.
fn round_groups(
    tally: &Tally,
    suspects: Vec<u64>,
    attempt: u8,
    tracker: &TrackerOptions,
) -> Vec<(Vec<u64>, TrackerOptions)> {
    let (failed, others): (Vec<u64>, Vec<u64>) = if attempt >= ZONE_SWITCH_FROM_ROUND {
        let failed: std::collections::HashSet<u64> = tally
            .snapshot(&suspects)
            .into_iter()
            .filter(|(_, status, _)| *status == Status::Failed)
            .map(|(p, _, _)| p)
            .collect();
        suspects.into_iter().partition(|p| failed.contains(p))
    } else {
        (Vec::new(), suspects)
    };
    let zone = TrackerOptions {
        zone_rounding_switch: true,
        ..tracker.clone()
    };
    [(others, tracker.clone()), (failed, zone)]
        .into_iter()
        .filter(|(paths, _)| !paths.is_empty())
        .collect()
}

/// The start system of a run; it can regenerate the start point of any path by index.
enum Start {
    Td(TotalDegree),
    Poly(Arc<Polyhedral>),
    Mhom(MhomStart),
    Given(Arc<crate::start::given::GivenStart>),
}

impl Start {
    fn homotopy(&self) -> &crate::homotopy::Homotopy {
        match self {
            Start::Td(td) => &td.homotopy,
            Start::Poly(p) => &p.homotopy,
            Start::Mhom(m) => &m.homotopy,
            Start::Given(g) => &g.homotopy,
        }
    }

    /// `tracker` with this start system's own settings (polyhedral: the switch from log to
    /// projective coordinates at [`crate::track::path::TO_LOG_SPREAD`]; m-hom: the same
    /// where the tracker asks for the switch in the endgame zone, in the gap recovery and
    /// for failed paths from [`ZONE_SWITCH_FROM_ROUND`]).
    fn tracker_for(&self, tracker: &TrackerOptions) -> TrackerOptions {
        match self {
            Start::Mhom(_) if tracker.zone_rounding_switch => TrackerOptions {
                to_log_spread: crate::track::path::TO_LOG_SPREAD,
                ..tracker.clone()
            },
            Start::Poly(_) => TrackerOptions {
                to_log_spread: crate::track::path::TO_LOG_SPREAD,
                ..tracker.clone()
            },
            _ => tracker.clone(),
        }
    }

    /// Tracks every path, or only the paths `only` (sorted ids); `record` keeps each start
    /// point.
    fn track(
        &self,
        only: Option<Arc<Vec<u64>>>,
        tracker: &TrackerOptions,
        tau_start: f64,
        backend: &mut dyn Backend,
        record: Option<&early::StartRecord>,
        on_end: &mut dyn FnMut(crate::track::PathEnd) -> Result<()>,
    ) -> Result<()> {
        let keep = |s: &StartPoint| {
            if let Some(r) = record {
                r.keep(s)
            }
        };
        let tracker = &self.tracker_for(tracker);
        let (homotopy, starts): (
            &crate::homotopy::Homotopy,
            Box<dyn Iterator<Item = StartPoint>>,
        ) = match self {
            Start::Td(td) => {
                let point = |i: u64| StartPoint {
                    path: i,
                    y: td.start_point(i as u128),
                    tau: td.start_tau(tau_start),
                    log: false,
                    lifts: None,
                    steps: (0, 0),
                };
                let starts: Box<dyn Iterator<Item = StartPoint>> = match &only {
                    None => Box::new((0..td.path_count() as u64).map(point)),
                    Some(ids) => Box::new(ids.iter().map(move |&i| point(i))),
                };
                (&td.homotopy, starts)
            }
            Start::Mhom(m) => {
                let wanted = |i: u64| {
                    only.as_ref()
                        .is_none_or(|ids| ids.binary_search(&i).is_ok())
                };
                let starts = m
                    .start
                    .start_points()
                    .enumerate()
                    .map(|(i, x)| (i as u64, x))
                    .filter(move |(i, _)| wanted(*i))
                    .map(|(i, x)| StartPoint {
                        path: i,
                        y: MhomStart::homogeneous(&x),
                        tau: tau_start,
                        log: false,
                        lifts: None,
                        steps: (0, 0),
                    });
                (&m.homotopy, Box::new(starts))
            }
            Start::Given(g) => (&g.homotopy, Box::new(g.start_points(only))),
            Start::Poly(poly) => {
                // its iterator keeps the error that ends it early, checked once tracked
                let mut starts = poly.start_points(only);
                track_all(
                    backend,
                    &poly.homotopy,
                    tracker,
                    &mut starts.by_ref().inspect(keep),
                    on_end,
                )?;
                return starts.error.take().map_or(Ok(()), Err);
            }
        };
        track_all(
            backend,
            homotopy,
            tracker,
            &mut starts.inspect(keep),
            on_end,
        )?;
        Ok(())
    }
}

/// Solves on the CPU backend with default options except the start and the seed (tests and
/// examples). Returns the final endpoint of every path (a re-tracked path's last attempt),
/// in path order.
pub fn solve_cpu(system: &System, start: StartKind, seed: u64) -> Result<(Summary, Vec<Endpoint>)> {
    let mut backend = CpuBackend::new(0)?;
    let opts = SolveOptions {
        seed,
        start,
        ..Default::default()
    };
    solve_collect(system, &opts, &mut backend)
}

/// Solves and returns the final endpoint of every path, in path order.
pub fn solve_collect(
    system: &System,
    opts: &SolveOptions,
    backend: &mut dyn Backend,
) -> Result<(Summary, Vec<Endpoint>)> {
    let mut last = std::collections::BTreeMap::new();
    let s = solve(system, opts, backend, &mut |e: &Endpoint| {
        last.insert(e.path, e.clone());
        Ok(())
    })?;
    Ok((s, last.into_values().collect()))
}

/// The root-count key of a polyhedral start's cells: `mixed_cells` for the torus lifting
/// (as `pathtrack count`), `stable_mixed_cells` for the stable lifting (origins added).
fn cells_key(poly: &Polyhedral) -> &'static str {
    if poly.torus {
        "mixed_cells"
    } else {
        "stable_mixed_cells"
    }
}

#[cfg(test)]
mod tests {
    use super::{task_depth, InOrder};

    /// Endpoints as the GPU hands them over, one after another, every eighth stopped short
    /// (its batch leaves at once; refining it takes 2 ms, the others nothing): no
    /// refinement task ever runs inside another on a refinement thread, and the endpoints
    /// come out in their order. A task that split its batch across the pool would wait on the
    /// half another thread took, running other batches meanwhile on its own stack: so
    /// cyclic-12 on the H200 overflows a refinement thread's stack 30 s into the run.
    #[test]
    fn refinement_tasks_never_nest() {
        use crate::post::{Endpoint, Status};
        use crate::track::{PathEnd, TrackCode};
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let refine = |e: PathEnd| {
            if e.code.stopped_short() {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            Endpoint::new(e.path, Status::Failed)
        };
        let mut tally = crate::report::Tally::default();
        let mut order = Vec::new();
        let mut seen = |e: &Endpoint| {
            order.push(e.path);
            Ok(())
        };
        pool.in_place_scope(|scope| {
            let mut queue = super::RefineQueue::new(&refine, scope, 0, None);
            for path in 0..4000u64 {
                let code = if path % 8 == 7 {
                    TrackCode::StoppedInEndgame("step size underflow".into())
                } else {
                    TrackCode::Reached
                };
                let end = PathEnd::bare(path, Vec::new(), 0.0, code);
                queue.push(end, &mut tally, &mut seen).unwrap();
            }
            queue.finish(&mut tally, &mut seen).unwrap();
        });
        assert_eq!(order, (0..4000).collect::<Vec<u64>>());
        let deepest = task_depth::DEEPEST.load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(deepest, 1, "refinement tasks nested {deepest} deep");
    }

    /// From round [`ZONE_SWITCH_FROM_ROUND`] on, a round's failed paths are tracked apart with
    /// the zone switch; before it, and for the other paths, the round's options stand.
    #[test]
    fn failed_paths_get_the_zone_switch_from_its_round_on() {
        use crate::post::{Endpoint, Status};
        let mut tally = crate::report::Tally::default();
        tally.add(&Endpoint::new(3, Status::Failed));
        tally.add(&Endpoint::new(5, Status::AtInfinity));
        tally.add(&Endpoint::new(8, Status::Failed));
        let tracker = crate::track::TrackerOptions::default();
        let early = super::round_groups(&tally, vec![3, 5, 8], 1, &tracker);
        assert_eq!(early.len(), 1);
        assert_eq!(early[0].0, vec![3, 5, 8]);
        assert!(!early[0].1.zone_rounding_switch);
        let late = super::round_groups(
            &tally,
            vec![3, 5, 8],
            super::ZONE_SWITCH_FROM_ROUND,
            &tracker,
        );
        let groups: Vec<(Vec<u64>, bool)> = late
            .iter()
            .map(|(p, o)| (p.clone(), o.zone_rounding_switch))
            .collect();
        assert_eq!(groups, vec![(vec![5], false), (vec![3, 8], true)]);
        let only_failed = super::round_groups(&tally, vec![3, 8], 3, &tracker);
        assert_eq!(only_failed.len(), 1);
        assert!(only_failed[0].1.zone_rounding_switch);
    }

    /// Results come out in the order the tasks started, not the order they finished.
    #[test]
    fn in_order_hands_results_out_in_start_order() {
        let mut q = InOrder::new();
        let (a, b, c) = (q.start(), q.start(), q.start());
        c.send(3).unwrap();
        b.send(2).unwrap();
        assert_eq!(
            q.next(false).unwrap(),
            None,
            "the first task has not finished"
        );
        assert_eq!(q.waiting.len(), 3);
        a.send(1).unwrap();
        let out: Vec<u32> = std::iter::from_fn(|| q.next(false).unwrap()).collect();
        assert_eq!(out, [1, 2, 3]);
        assert_eq!(q.waiting.len(), 0);
        assert_eq!(q.next(true).unwrap(), None, "nothing to wait for");
    }

    /// A task that ends without sending its result is an error, waited for or not.
    #[test]
    fn a_task_without_a_result_is_an_error() {
        let mut q = InOrder::<u32>::new();
        drop(q.start());
        assert!(q.next(false).is_err());
        let mut q = InOrder::<u32>::new();
        let tx = q.start();
        std::thread::spawn(move || drop(tx));
        assert!(q.next(true).is_err());
    }
}
