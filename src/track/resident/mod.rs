//! Resident tracking: paths live in the slots of a batch that stays where the directions are
//! computed (device memory for the CUDA backend), and every iteration — evaluation, Euler /
//! Newton solve, predictor, corrector, step control — runs there for all slots at once,
//! with no per-path work on the host (T. Chen, §7: "the whole tracking loop on the GPU").
//!
//! The host only streams start points into free slots and collects the paths that left:
//! - reached `τ_end` → a [`PathEnd`] with code `Reached` (post-processing refines it);
//! - failed before the endgame zone → a [`PathEnd`] with the reason;
//! - trouble in the endgame zone (`τ ≥ endgame_tau`: an ill-conditioned approach, typically
//!   a singular endpoint, or a stalled one) → tracked on by the host tracker
//!   ([`crate::track::PathState`], with its Cauchy endgame and double-double residuals) from
//!   the point where the path entered the zone. Paths towards solutions of huge norm stay:
//!   they go on in the slot's double-double mode ([`slot`]).
//!
//! While the slots run `ITERATIONS` iterations, the host advances its own (endgame) paths,
//! so both sides work at once: on a GPU their evaluations and solves go to the device in one
//! batch per round (`step_on_device`, [`ResidentTracker::device_directions`]), on the CPU
//! in groups of [`HOST_GROUP`] paths, each group a few rounds on one thread
//! (`step_in_groups`). The per-slot step machine
//! is [`slot::Slot`]; [`host::HostResident`] runs it on the CPU (the reference the device
//! kernel is checked against, and what the tests exercise without a GPU).

pub mod api;
pub mod host;
pub mod slot;

pub use api::{ResidentTracker, SlotExit};

use super::{PathEnd, PathState, Round, StartPoint, TrackCode, TrackStats, TrackerOptions};
use crate::backend::cpu::{directions_alone, ChunkScratch};
use crate::backend::directions::DirectionsOut;
use crate::error::Result;
use crate::eval::{EvalLayout, Points};
use crate::homotopy::Homotopy;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// A path in the endgame zone whose direction solve has a condition estimate above this goes
/// back to the host (or, at `s ≤` [`slot::DD_ENTRY_S`], on in the slot's double-double mode,
/// whose bound is [`slot::ZONE_COND_DD`]): outside that mode the slots compute residuals in
/// double, the host in double-double where their rounding shows
/// (`backend::cpu::DD_STEP_NOISE`).
pub const ZONE_COND: f64 = 1e8;
/// A path that takes this many steps inside the endgame zone without halving
/// `s = τ_end − τ` goes back to the host. Paths still move near t = 1 (the homotopy's time
/// scale there is `1/ω_max`, and polyhedral lifts reach 1e4 and more: katsura-8's paths
/// take 60–100 steps in the zone, passing branch points at s ≈ 1e-5), but they halve `s`
/// every few steps, singular ones too (their steps scale with `s`).
pub const ZONE_STEPS: u32 = 64;
/// ... but a path heading to infinity (the homogenizing coordinate's valuation above
/// `2·VALUATION_TOL` between its last two samples) goes on in its slot for this many, the
/// host tracker's stall limit: the host has no other endgame for such a path (its Cauchy
/// endgame gives it up) and would only track it again from its zone entry. cyclic-12's paths
/// with valuation 1/3 (winding number 3 at infinity) take ~70 steps per halving of `s`
/// below 1e-6. Seed 1, paths 40000–41499 on the CPU's resident step machine: 228 → 213
/// hand-overs, 9 % fewer host evaluations, the same endpoints; the whole run on the H200:
/// 70,464 → 68,494 hand-overs, 160.0 M → 156.2 M host evaluations (most of these paths
/// cross `ZONE_COND` first).
pub const ZONE_STEPS_TO_INFINITY: u32 = crate::track::path::STALL_STEPS;
// kernels/track.cu reads a zone path's valuation only past ZONE_STEPS (or where it may be
// carried), which decides the stall at ZONE_STEPS_TO_INFINITY only if that is not smaller.
const _: () = assert!(ZONE_STEPS <= ZONE_STEPS_TO_INFINITY);
/// Iterations the slots run between two collections. 32 is no faster on chandra-12,
/// chandra-13, cyclic-10 or katsura-10 (H200, seven alternated rounds on two machines:
/// within ±5 % either way).
pub const ITERATIONS: u32 = 16;
/// Once no start points are left and at most this many paths remain in the slots, they
/// move to the host tracker (a device iteration for a handful of paths costs more than
/// their work on one core).
pub const TAIL: usize = 32;

/// Host paths per group: each group is stepped by one thread, [`HOST_STEPS_BESIDE_SLOTS`]
/// or [`HOST_STEPS_ALONE`] rounds per loop, without waiting for the others. One round of
/// all host paths per loop (chandra-12 on the H200: ~75 paths, 16,565 rounds, two
/// fork-joins each) keeps the 16 cores mostly waiting on each other.
pub const HOST_GROUP: usize = 4;
/// ... but groups are smaller (down to one path) while the host holds fewer than
/// `HOST_GROUPS_WANTED · HOST_GROUP` paths, so that at least this many groups share the
/// cores: a recovery round's 2–4 paths (thousands of steps each, tighter tolerances) would
/// otherwise be one group on one thread. A function of the number of paths only, not of the
/// threads.
pub const HOST_GROUPS_WANTED: usize = 16;

/// The host's own paths go to the device ([`ResidentTracker::device_directions`]) while
/// there are at least this many. cyclic-12's first pass on the H200 (6,416 host paths,
/// 7.9 M of their evaluations): 37.7 s with 1, 47.9 s with 64 (the loops with fewer host
/// paths then wait for the host's cores, which are refining endpoints), 65.5 s with all on
/// the host's cores. `PATHTRACK_HOST_ON_DEVICE_MIN` overrides it (a huge value keeps them
/// on the host).
pub const HOST_ON_DEVICE_MIN: usize = 1;
/// [`HOST_ON_DEVICE_MIN`], or `PATHTRACK_HOST_ON_DEVICE_MIN` where set.
pub fn host_on_device_min() -> usize {
    env_usize("PATHTRACK_HOST_ON_DEVICE_MIN").unwrap_or(HOST_ON_DEVICE_MIN)
}
/// Rounds of the host's paths per loop on the device while the slots iterate: as many as
/// the slots' iterations ([`ITERATIONS`]), so that both kinds of paths move at one pace
/// (`PATHTRACK_RESIDENT_DEVICE_BESIDE` overrides it).
pub const HOST_STEPS_ON_DEVICE_BESIDE_SLOTS: u32 = ITERATIONS;

/// Whether slots may enter double-double mode (`slot::Slot::residual`): yes unless the
/// environment sets `PATHTRACK_RESIDENT_DD=0` (for comparisons with the hand-over to the
/// host that it replaces).
pub fn dd_residuals_enabled() -> bool {
    std::env::var("PATHTRACK_RESIDENT_DD").map_or(true, |v| v != "0")
}

/// Paths per group when the host holds `n` (see [`HOST_GROUPS_WANTED`]).
pub fn host_group_size(n: usize) -> usize {
    (n / HOST_GROUPS_WANTED).clamp(1, HOST_GROUP)
}
/// Rounds per group per loop while slots are iterating (`PATHTRACK_RESIDENT_HOST_BESIDE`
/// overrides it; 2, 8 and 16 are no faster on chandra-12).
pub const HOST_STEPS_BESIDE_SLOTS: u32 = 4;
/// Rounds per group per loop once the slots are empty (the host's tail): the loop's
/// fork-join and the hand-over of the ended paths come once per this many rounds. Not 16:
/// chandra-12 on the H200 (seeds 1–3, two runs each): 16 rounds 0.78–1.12 s, 64 0.75–1.08 s,
/// 256 0.74–0.99 s; with 16, its slowest seed's host tail is 426 loops of one or two long
/// paths (the last ones evicted from the slots, ~900 steps each).
pub const HOST_STEPS_ALONE: u32 = 256;

/// Steps the host's paths in groups of [`host_group_size`] (in order) on `pool`, `steps`
/// rounds each; returns the paths that ended (group by group, each group's in the order they
/// ended) and the (evaluations, rounds) done. The groups are cut from the order of `host`
/// alone and each group's rounds see only its paths, so the threads change no bit.
#[allow(clippy::too_many_arguments)]
fn step_in_groups(
    layout: &EvalLayout,
    pool: &rayon::ThreadPool,
    host: &mut Vec<PathState>,
    steps: u32,
    nh: usize,
    m: usize,
    default_lifts: &[f64],
    opts: &TrackerOptions,
) -> Result<(Vec<PathEnd>, u64, u64)> {
    use rayon::prelude::*;
    let size = host_group_size(host.len());
    let mut groups: Vec<Vec<PathState>> = Vec::with_capacity(host.len().div_ceil(size));
    let mut paths = std::mem::take(host).into_iter().peekable();
    while paths.peek().is_some() {
        groups.push(paths.by_ref().take(size).collect());
    }
    type GroupResult = Result<(Vec<PathEnd>, u64, u64)>;
    let results: Vec<GroupResult> = pool.install(|| {
        groups
            .par_iter_mut()
            .with_max_len(1)
            .map_init(ChunkScratch::default, |scratch, group| {
                let mut ends = Vec::new();
                let (evaluations, rounds) = step_group(
                    layout,
                    scratch,
                    group,
                    steps,
                    (nh, m),
                    default_lifts,
                    opts,
                    &mut ends,
                )?;
                Ok((ends, evaluations, rounds))
            })
            .collect()
    });
    let (mut ends, mut evaluations, mut rounds) = (Vec::new(), 0, 0);
    for r in results {
        let (e, ev, ro) = r?;
        ends.extend(e);
        evaluations += ev;
        rounds = rounds.max(ro);
    }
    *host = groups.into_iter().flatten().collect();
    Ok((ends, evaluations, rounds))
}

/// Steps one group of host paths on this thread with the host's directions, at most
/// `steps` rounds (fewer when all ended); the paths that end leave `group` for `ends`, in
/// the order they ended. Returns the (evaluations, rounds) done. Each round sees only this
/// group's paths, so no other thread changes its bits.
#[allow(clippy::too_many_arguments)]
fn step_group(
    layout: &EvalLayout,
    scratch: &mut ChunkScratch,
    group: &mut Vec<PathState>,
    steps: u32,
    (nh, m): (usize, usize),
    default_lifts: &[f64],
    opts: &TrackerOptions,
    ends: &mut Vec<PathEnd>,
) -> Result<(u64, u64)> {
    let mut dirs = |pts: &Points<'_>, out: DirectionsOut<'_>| {
        directions_alone(layout, pts, out, scratch);
        Ok(())
    };
    let mut round = Round::default();
    step_rounds(
        &mut dirs,
        &mut round,
        group,
        steps,
        (nh, m),
        default_lifts,
        opts,
        ends,
    )
}

/// `steps` rounds of `group` (fewer when all ended), each ONE call of `dirs` for all its
/// paths, the paths advanced on this thread; the paths that end leave `group` for `ends`,
/// in the order they ended. Returns the (evaluations, rounds) done.
#[allow(clippy::too_many_arguments)]
fn step_rounds(
    dirs: &mut super::DirectionsFn<'_>,
    round: &mut Round,
    group: &mut Vec<PathState>,
    steps: u32,
    (nh, m): (usize, usize),
    default_lifts: &[f64],
    opts: &TrackerOptions,
    ends: &mut Vec<PathEnd>,
) -> Result<(u64, u64)> {
    let (mut evaluations, mut rounds) = (0u64, 0u64);
    for _ in 0..steps {
        if group.is_empty() {
            break;
        }
        evaluations += group.len() as u64;
        rounds += 1;
        let mut ended = |e: PathEnd| {
            ends.push(e);
            Ok(())
        };
        round.run(dirs, None, group, nh, m, default_lifts, opts, &mut ended)?;
    }
    Ok((evaluations, rounds))
}

/// Steps the host's paths `steps` rounds, each round ONE call to the slots' device
/// ([`ResidentTracker::device_directions`]: evaluation, double-double residuals and the
/// solve of every host path at once), the paths' step machines advanced on this thread
/// (~1.4 µs a step on cyclic-12: on the host's pool, busy refining endpoints, the same
/// rounds took 4× as long); returns the paths that ended, in the order they ended, and the
/// (evaluations, rounds) done, and adds the time spent waiting for the directions to
/// `in_directions`.
#[allow(clippy::too_many_arguments)]
fn step_on_device(
    rt: &mut dyn ResidentTracker,
    round: &mut Round,
    in_directions: &mut f64,
    host: &mut Vec<PathState>,
    steps: u32,
    (nh, m): (usize, usize),
    default_lifts: &[f64],
    opts: &TrackerOptions,
) -> Result<(Vec<PathEnd>, u64, u64)> {
    let mut dirs = |pts: &Points<'_>, out: DirectionsOut<'_>| {
        let t = std::time::Instant::now();
        let r = rt.device_directions(pts, out).unwrap_or_else(|| {
            Err(crate::error::Error::Internal(
                "host paths sent to a device that computes no directions".into(),
            ))
        });
        *in_directions += t.elapsed().as_secs_f64();
        r
    };
    let mut ends = Vec::new();
    let (evaluations, rounds) = step_rounds(
        &mut dirs,
        round,
        host,
        steps,
        (nh, m),
        default_lifts,
        opts,
        &mut ends,
    )?;
    Ok((ends, evaluations, rounds))
}

/// Tracks one path from its start point to its end on this thread, with the host's
/// tracker alone (no slots): what a resident tracking does with a path evicted before its
/// first launch, as for a batch of at most [`TAIL`] paths. Deterministic: the same start
/// point and options give the same bits on any thread (recovery's first round relies on it,
/// `solver::early`). `go_on` is asked every [`HOST_STEPS_ALONE`] rounds; `None` when it
/// said no.
pub fn track_alone(
    layout: &EvalLayout,
    homotopy: &Homotopy,
    opts: &TrackerOptions,
    start: StartPoint,
    go_on: &dyn Fn() -> bool,
) -> Result<Option<PathEnd>> {
    let default_lifts = homotopy.lifts();
    let max_lift = homotopy.max_lift();
    let mut group = vec![PathState::new(start, opts, max_lift)];
    let mut ends = Vec::with_capacity(1);
    let mut scratch = ChunkScratch::default();
    let dims = (homotopy.nh(), homotopy.term_count());
    while !group.is_empty() {
        if !go_on() {
            return Ok(None);
        }
        step_group(
            layout,
            &mut scratch,
            &mut group,
            HOST_STEPS_ALONE,
            dims,
            &default_lifts,
            opts,
            &mut ends,
        )?;
    }
    Ok(Some(ends.pop().expect("a path that left its group ended")))
}

/// The moves that pack the active slots (`active`, ascending) into the lowest ones, when
/// they fill at most half of the used range `hi` and that range is at least `grain`
/// slots: each active slot at or above `active.len()` goes to the lowest empty slot below.
pub fn compaction_moves(active: &[usize], hi: usize, grain: usize) -> Vec<(usize, usize)> {
    let k = active.len();
    if hi < grain.max(2) || 2 * k > hi {
        return Vec::new();
    }
    let mut holes = (0..k).filter(|i| active.binary_search(i).is_err());
    active
        .iter()
        .filter(|&&i| i >= k)
        .map(|&from| {
            (
                from,
                holes
                    .next()
                    .expect("as many holes below k as actives above"),
            )
        })
        .collect()
}

/// What the orchestrator remembers of a slot's path.
struct Occupant {
    path: u64,
    lifts: Option<Arc<[f64]>>,
}

/// [`crate::track::track_all`] through resident slots (see the module's doc).
pub fn track_resident(
    rt: &mut dyn ResidentTracker,
    homotopy: &Homotopy,
    opts: &TrackerOptions,
    starts: &mut dyn Iterator<Item = StartPoint>,
    on_end: &mut dyn FnMut(PathEnd) -> Result<()>,
) -> Result<TrackStats> {
    let (nh, m) = (homotopy.nh(), homotopy.term_count());
    let default_lifts = homotopy.lifts();
    let max_lift = homotopy.max_lift();
    let tail = env_usize("PATHTRACK_RESIDENT_TAIL").unwrap_or(TAIL);
    let iterations = env_usize("PATHTRACK_RESIDENT_ITERS").map_or(ITERATIONS, |v| v as u32);
    let host_alone =
        env_usize("PATHTRACK_RESIDENT_HOST_ALONE").map_or(HOST_STEPS_ALONE, |v| v as u32);
    let host_beside =
        env_usize("PATHTRACK_RESIDENT_HOST_BESIDE").map_or(HOST_STEPS_BESIDE_SLOTS, |v| v as u32);
    let device_beside = env_usize("PATHTRACK_RESIDENT_DEVICE_BESIDE")
        .map_or(HOST_STEPS_ON_DEVICE_BESIDE_SLOTS, |v| v as u32);
    let mut device_round = Round::default();
    // Loops whose host paths went to the device, and the time their directions took there.
    let (mut device_rounds, mut t_device_directions) = (0u64, 0.0f64);
    let trace = std::env::var_os("PATHTRACK_RESIDENT_TRACE").is_some();
    // PATHTRACK_RESIDENT_TRACE=2: one line per loop.
    let trace_loops = std::env::var("PATHTRACK_RESIDENT_TRACE").is_ok_and(|v| v == "2");
    let no_compaction = std::env::var_os("PATHTRACK_RESIDENT_NO_COMPACTION").is_some();
    // PATHTRACK_TRACE_PATHS=215,828: where these paths leave the slots and the host.
    let traced: std::collections::HashSet<u64> = std::env::var("PATHTRACK_TRACE_PATHS")
        .map(|v| v.split(',').filter_map(|p| p.trim().parse().ok()).collect())
        .unwrap_or_default();
    let clock = std::time::Instant::now();
    let mut handovers = HandOvers::default();
    let (mut t_launch, mut t_host, mut t_collect, mut t_compact) = (0.0, 0.0, 0.0, 0.0);
    // The loop's own parts (`PATHTRACK_RESIDENT_TRACE`): start points drawn and loaded,
    // endpoints handed on, slot exits turned into ends and host paths.
    let (mut t_feed, mut t_load, mut t_handover, mut t_exits) = (0.0, 0.0, 0.0, 0.0);
    let mut host_evals = 0u64;
    let (mut loops, mut handed, mut ended, mut evicted, mut moved) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let slots = rt.begin(opts)?;
    let mut occupant: Vec<Option<Occupant>> = (0..slots).map(|_| None).collect();
    // Free slots, lowest first: a heap, as a GPU batch has 65,536 slots for a few thousand
    // paths, and sorting a list of the free ones after every collection cost chandra-12
    // ~1 ms per loop (the "compaction" time of the trace, 0.06–0.09 s of ~1 s on the H200).
    let mut free: BinaryHeap<Reverse<usize>> = (0..slots).map(Reverse).collect();
    let mut host: Vec<PathState> = Vec::new();
    let mut stats = TrackStats::default();
    let mut exhausted = false;
    // Paths that left their slots at `Reached` or failed, handed to `on_end` after the next
    // launch.
    let mut finished: Vec<PathEnd> = Vec::new();
    // The loop keeps the device busy while the host works: the next launch is queued as soon
    // as the last one's exits are read, and everything else of the host's (start points
    // loaded, endpoints handed on, the host's own paths) runs while the slots iterate.
    // Start points loaded after a launch wait for the next one (their slots, ~2 % of the
    // batch per loop on cyclic-13, sit out one launch).
    loop {
        loops += 1;
        // Collect what the slots did since the last collection (waits for the last launch).
        let resident = slots - free.len();
        let evict = exhausted && resident <= tail;
        let t_top = std::time::Instant::now();
        if resident > 0 {
            if evict {
                evicted += resident as u64;
            }
            let collected = rt.collect(evict)?;
            let t_collected = std::time::Instant::now();
            for (slot, exit) in collected {
                let Some(o) = occupant[slot].take() else {
                    continue;
                };
                free.push(Reverse(slot));
                if traced.contains(&o.path) {
                    trace_exit(o.path, clock.elapsed().as_secs_f64(), loops, &exit);
                }
                match &exit {
                    SlotExit::End { .. } => ended += 1,
                    SlotExit::Continue { .. } => handed += 1,
                }
                match exit {
                    SlotExit::End {
                        y,
                        tau,
                        cond,
                        steps,
                        code,
                        samples,
                        checkpoint,
                    } => finished.push(PathEnd {
                        path: o.path,
                        y,
                        tau,
                        code,
                        accepted: steps.0,
                        rejected: steps.1,
                        cond,
                        samples,
                        checkpoint,
                        lifts: o.lifts,
                    }),
                    SlotExit::Continue {
                        y,
                        tau,
                        log,
                        steps,
                        samples,
                        checkpoint,
                        h,
                    } => {
                        if trace {
                            handovers.handed(o.path, evict, h.is_some(), steps);
                        }
                        host.push(
                            PathState::new(
                                StartPoint {
                                    path: o.path,
                                    y,
                                    tau,
                                    log,
                                    lifts: o.lifts,
                                    steps,
                                },
                                opts,
                                max_lift,
                            )
                            .with_history(samples, checkpoint, h),
                        );
                    }
                }
            }
            let t3 = std::time::Instant::now();
            t_exits += (t3 - t_collected).as_secs_f64();
            if exhausted && !no_compaction {
                let moves = rt.compact()?;
                if !moves.is_empty() {
                    moved += moves.len() as u64;
                    for (from, to) in moves {
                        occupant[to] = occupant[from].take();
                    }
                    free = (0..slots)
                        .filter(|&i| occupant[i].is_none())
                        .map(Reverse)
                        .collect();
                }
            }
            t_compact += t3.elapsed().as_secs_f64();
        }
        let t0 = std::time::Instant::now();
        t_collect += (t0 - t_top).as_secs_f64();
        // The next launch, on the paths still in their slots; once the start points are
        // exhausted and at most `tail` paths remain, none: the next collection evicts them.
        let resident = slots - free.len();
        let launched = resident > 0 && !(exhausted && resident <= tail);
        if launched {
            rt.launch(iterations)?;
            stats.rounds += iterations as u64;
            stats.evaluations += iterations as u64 * resident as u64;
        }
        let t_launched = std::time::Instant::now();
        t_launch += (t_launched - t0).as_secs_f64();
        // New start points into the free slots, for the launch after this one.
        let mut new = Vec::new();
        while !exhausted && !free.is_empty() {
            match starts.next() {
                Some(s) => {
                    let Reverse(slot) = free.pop().expect("checked non-empty");
                    occupant[slot] = Some(Occupant {
                        path: s.path,
                        lifts: s.lifts.clone(),
                    });
                    new.push((slot, s));
                }
                None => exhausted = true,
            }
        }
        let t_drawn = std::time::Instant::now();
        if !new.is_empty() {
            rt.load(&new)?;
        }
        let t_loaded = std::time::Instant::now();
        t_load += (t_loaded - t_drawn).as_secs_f64();
        t_feed += (t_loaded - t_launched).as_secs_f64();
        // The paths that ended in this collection go on (to refinement) while the slots
        // iterate.
        for end in finished.drain(..) {
            on_end(end)?;
        }
        let t1 = std::time::Instant::now();
        t_handover += (t1 - t_loaded).as_secs_f64();
        if !host.is_empty() {
            let steps = if launched { host_beside } else { host_alone };
            let (ends, evaluations, rounds) = if rt.host_paths_on_device(host.len()) {
                let steps = if launched { device_beside } else { host_alone };
                device_rounds += 1;
                step_on_device(
                    rt,
                    &mut device_round,
                    &mut t_device_directions,
                    &mut host,
                    steps,
                    (nh, m),
                    &default_lifts,
                    opts,
                )?
            } else {
                let (layout, pool) = rt.host_engine()?;
                step_in_groups(layout, &pool, &mut host, steps, nh, m, &default_lifts, opts)?
            };
            for end in ends {
                if trace {
                    handovers.ended(&end);
                }
                if traced.contains(&end.path) {
                    eprintln!(
                        "path {} at {:.3} s (loop {loops}): ended on the host ({:?} at τ = {:e})",
                        end.path,
                        clock.elapsed().as_secs_f64(),
                        end.code,
                        end.tau
                    );
                }
                on_end(end)?;
            }
            stats.rounds += rounds;
            stats.evaluations += evaluations;
            host_evals += evaluations;
        }
        let t2 = std::time::Instant::now();
        t_host += (t2 - t1).as_secs_f64();
        if trace_loops {
            eprintln!(
                "resident loop {loops}: {resident} in slots, {} on the host; host round {:.2} ms, \
                 collect {:.2} ms",
                host.len(),
                1e3 * (t2 - t1).as_secs_f64(),
                1e3 * (t0 - t_top).as_secs_f64()
            );
        }
        if exhausted && free.len() == slots && host.is_empty() {
            break;
        }
    }
    if trace {
        eprintln!(
            "resident: {slots} slots, {loops} loops, {:.3} s: launches {t_launch:.3} s, start points \
             drawn and loaded {t_feed:.3} s (loaded {t_load:.3} s), hand-over {t_handover:.3} s, host rounds \
             {t_host:.3} s, collect {t_collect:.3} s (exits decoded {t_exits:.3} s, compaction \
             {t_compact:.3} s); {ended} ended in slots, {handed} to the host \
             ({evicted} evicted in the tail); {moved} moved by compaction; {} slot-iterations \
             launched, {} host evaluations",
            clock.elapsed().as_secs_f64(),
            stats.evaluations - host_evals,
            host_evals
        );
        if device_rounds > 0 {
            eprintln!(
                "resident: host paths on the device in {device_rounds} loops, their directions \
                 {t_device_directions:.3} s"
            );
        }
        if let Some(p) = rt.profile() {
            eprintln!("resident: {p}");
        }
        handovers.print();
    }
    Ok(stats)
}

/// Where the host's steps went (`PATHTRACK_RESIDENT_TRACE`): the paths handed over, by how
/// they left their slots (evicted in the tail; `EXIT_CONTINUE` from the oldest sample;
/// `EXIT_HANDOFF` from the zone entry) and how the host ended them, with the host's steps.
#[derive(Default)]
struct HandOvers {
    /// Path → (its kind, its steps when handed over).
    open: std::collections::HashMap<u64, (&'static str, u32)>,
    /// (kind, end) → (paths, host steps).
    done: std::collections::BTreeMap<(&'static str, String), (u64, u64)>,
}

impl HandOvers {
    fn handed(&mut self, path: u64, evicted: bool, from_sample: bool, steps: (u32, u32)) {
        let kind = match (evicted, from_sample) {
            (true, _) => "evicted",
            (false, true) => "continue",
            (false, false) => "handoff",
        };
        self.open.insert(path, (kind, steps.0 + steps.1));
    }

    fn ended(&mut self, end: &PathEnd) {
        let Some((kind, before)) = self.open.remove(&end.path) else {
            return;
        };
        let how = match &end.code {
            TrackCode::Reached => "reached".to_string(),
            TrackCode::Cauchy { winding, .. } => format!("cauchy w={winding}"),
            TrackCode::StoppedInEndgame(r) | TrackCode::Failed(r) => super::reason_kind(r),
        };
        let e = self.done.entry((kind, how)).or_default();
        e.0 += 1;
        e.1 += (end.accepted + end.rejected).saturating_sub(before) as u64;
    }

    fn print(&self) {
        let total: u64 = self.done.values().map(|v| v.1).sum();
        for ((kind, how), (paths, steps)) in &self.done {
            eprintln!(
                "resident: host {kind:<8} {paths:>7} paths {steps:>10} steps ({:4.1} %) ended {how}",
                100.0 * *steps as f64 / total.max(1) as f64
            );
        }
    }
}

/// One line on stderr for a traced path that left its slot (`PATHTRACK_TRACE_PATHS`).
fn trace_exit(path: u64, seconds: f64, loops: u64, exit: &SlotExit) {
    let (what, tau, steps, checkpoint, samples) = match exit {
        SlotExit::End {
            tau,
            steps,
            code,
            checkpoint,
            samples,
            ..
        } => (format!("ended ({code:?})"), tau, steps, checkpoint, samples),
        SlotExit::Continue {
            tau,
            steps,
            checkpoint,
            samples,
            ..
        } => ("to the host".to_string(), tau, steps, checkpoint, samples),
    };
    let s: Vec<String> = samples.iter().map(|(t, _)| format!("{t:.1e}")).collect();
    eprintln!(
        "path {path} at {seconds:.3} s (loop {loops}): left its slot at τ = {tau:e}, {what}; \
         steps {steps:?}, checkpoint τ {:?}, samples τ [{}]",
        checkpoint.as_ref().map(|c| c.0),
        s.join(", ")
    );
}

/// A tuning override from the environment (experiments; unset in normal runs).
fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{compaction_moves, host_group_size, HOST_GROUP, HOST_GROUPS_WANTED};

    #[test]
    fn host_groups_shrink_so_that_few_paths_share_the_cores() {
        // few paths: one per group
        assert_eq!(host_group_size(1), 1);
        assert_eq!(host_group_size(2 * HOST_GROUPS_WANTED - 1), 1);
        // at least HOST_GROUPS_WANTED groups, at most HOST_GROUP paths each
        for n in 1..1000 {
            let size = host_group_size(n);
            assert!((1..=HOST_GROUP).contains(&size), "{n}: {size}");
            assert!(n.div_ceil(size) >= HOST_GROUPS_WANTED.min(n), "{n}: {size}");
        }
        assert_eq!(host_group_size(1000), HOST_GROUP);
    }

    #[test]
    fn compaction_packs_the_active_slots_into_the_lowest() {
        // 3 active of 10 used slots: 7 and 9 move into the holes 0 and 2.
        assert_eq!(compaction_moves(&[1, 7, 9], 10, 0), vec![(7, 0), (9, 2)]);
        // more than half active, or a range below the grain: no move
        assert!(compaction_moves(&[0, 2, 5, 6, 7, 9], 10, 0).is_empty());
        assert!(compaction_moves(&[7, 9], 10, 16).is_empty());
        // already packed
        assert!(compaction_moves(&[0, 1], 10, 0).is_empty());
        // the result is a packed prefix
        let active = [3, 4, 11, 12, 19, 25];
        let moves = compaction_moves(&active, 26, 0);
        let mut after: Vec<usize> = active
            .iter()
            .map(|&a| moves.iter().find(|m| m.0 == a).map_or(a, |m| m.1))
            .collect();
        after.sort_unstable();
        assert_eq!(after, (0..6).collect::<Vec<_>>());
    }
}
