//! Resident tracking (`track::resident`) through its CPU reference `HostResident`: the
//! slots' step machine with hand-off to the host tracker in the endgame zone finds every
//! solution the plain tracker finds, the same ones, with no failed path.

use pathtrack::backend::cpu::CpuBackend;
use pathtrack::post::{Endpoint, Status};
use pathtrack::solver::{solve_collect, SolveOptions, StartKind};
use pathtrack::system::{self, System};
use pathtrack::track::resident::host::HostResident;

mod common_slots;

fn shipped(name: &str) -> System {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("systems")
        .join(format!("{name}.yaml"));
    system::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn solve_resident(
    sys: &System,
    start: StartKind,
    seed: u64,
    batch: usize,
) -> (pathtrack::report::Summary, Vec<Endpoint>) {
    let mut b = HostResident::new(2).unwrap();
    let mut opts = SolveOptions {
        seed,
        start,
        ..Default::default()
    };
    opts.tracker.batch = batch;
    solve_collect(sys, &opts, &mut b).unwrap()
}

/// Largest distance from each nonsingular solution of `a` to the nearest of `b`, relative.
fn farthest(a: &[Endpoint], b: &[Endpoint]) -> f64 {
    let sols = |v: &[Endpoint]| -> Vec<Vec<num_complex::Complex64>> {
        v.iter()
            .filter(|e| e.status == Status::Nonsingular)
            .map(|e| e.coordinates.clone().unwrap())
            .collect()
    };
    let (sa, sb) = (sols(a), sols(b));
    sa.iter()
        .map(|x| {
            sb.iter()
                .map(|y| {
                    let s = x.iter().map(|v| v.norm()).fold(1.0, f64::max);
                    x.iter()
                        .zip(y)
                        .map(|(p, q)| (p - q).norm())
                        .fold(0.0, f64::max)
                        / s
                })
                .fold(f64::INFINITY, f64::min)
        })
        .fold(0.0, f64::max)
}

fn check(name: &str, start: StartKind, seed: u64, finite: u64) {
    let sys = shipped(name);
    // A batch smaller than the path count: slots are refilled as paths leave.
    let (s, eps) = solve_resident(&sys, start, seed, 100);
    assert_eq!(s.backend, "cpu-resident");
    assert_eq!(s.failed, 0, "{name} seed {seed}: {s:?}");
    assert_eq!(s.finite, finite, "{name} seed {seed}: {s:?}");
    assert_eq!(s.nonsingular, finite, "{name} seed {seed}: {s:?}");
    let mut cpu = CpuBackend::new(2).unwrap();
    let opts = SolveOptions {
        seed,
        start,
        ..Default::default()
    };
    let (c, ceps) = solve_collect(&sys, &opts, &mut cpu).unwrap();
    assert_eq!(c.nonsingular, s.nonsingular, "{name}: {c:?}");
    let d = farthest(&eps, &ceps).max(farthest(&ceps, &eps));
    assert!(d < 1e-8, "{name} seed {seed}: solution sets differ by {d}");
}

#[test]
fn resident_polyhedral_solves_find_every_solution() {
    check("katsura6", StartKind::Polyhedral, 1, 64);
    check("cyclic7", StartKind::Polyhedral, 1, 924);
    check("noon5", StartKind::Polyhedral, 2, 233);
    check("chandra8", StartKind::Polyhedral, 3, 128);
    check("eco8", StartKind::Polyhedral, 1, 64);
}

#[test]
fn resident_total_degree_solves_find_every_solution() {
    check("katsura6", StartKind::TotalDegree, 1, 64);
    check("noon4", StartKind::TotalDegree, 1, 73);
}

/// The host steps its endgame paths in groups, each on one thread for several rounds
/// (`track::resident::HOST_GROUP`): the groups are cut from the order of the paths alone,
/// so 1 and 3 threads give the same bits (chandra-9: about half of its paths reach the host
/// in the endgame zone).
#[test]
fn resident_host_groups_give_the_same_bits_on_any_thread_count() {
    let sys = shipped("chandra9");
    let run = |threads: usize| {
        let mut b = HostResident::new(threads).unwrap();
        let opts = SolveOptions {
            seed: 2,
            ..Default::default()
        };
        let (s, eps) = solve_collect(&sys, &opts, &mut b).unwrap();
        let lines: Vec<String> = eps
            .iter()
            .map(|e| pathtrack::report::solution_line(e).to_string())
            .collect();
        (s.nonsingular, s.failed, lines)
    };
    let one = run(1);
    assert_eq!((one.0, one.1), (256, 0), "{:?}", (one.0, one.1));
    assert!(one == run(3));
}

/// The host's own paths stepped as a device steps them (each round of all of them through
/// ONE `directions` call: `ResidentTracker::device_directions`, which the CUDA backend
/// answers on the device) reach the same endpoints as in groups on the host's threads.
/// chandra-9 (half its paths reach the host in the endgame zone; solutions of norm up to
/// 1e5 with condition numbers up to 1e10) and the origin of multiplicity 11 of
/// `x³ = yz, y³ = xz, z³ = xy` (Cauchy loops at complex τ). Not the same bits: the CPU
/// backend's evaluation of a batch depends on the batch's points in the last bits.
#[test]
fn host_paths_stepped_as_on_a_device_reach_the_same_endpoints() {
    let cubic = system::parse_str(
        "variables: [x, y, z]\nequations:\n  - \"x^3 - y*z\"\n  - \"y^3 - x*z\"\n  - \"z^3 - x*y\"\n",
        "cubic3",
    )
    .unwrap();
    for (sys, want) in [(shipped("chandra9"), (256, 0)), (cubic, (16, 1))] {
        let run = |batched: bool| {
            let mut b = HostResident::new(2).unwrap();
            b.set_host_paths_batched(batched);
            let opts = SolveOptions {
                seed: 2,
                ..Default::default()
            };
            let (s, eps) = solve_collect(&sys, &opts, &mut b).unwrap();
            (s, eps, b.batched_rounds())
        };
        let (bs, beps, rounds) = run(true);
        let (gs, geps, none) = run(false);
        assert!(
            rounds > 0 && none == 0,
            "{}: {rounds} batched rounds",
            sys.name
        );
        for s in [&bs, &gs] {
            assert_eq!(
                (s.nonsingular, s.singular, s.failed),
                (want.0, want.1, 0),
                "{}",
                sys.name
            );
        }
        let multiplicities = |s: &pathtrack::report::Summary| -> Vec<usize> {
            s.solutions
                .iter()
                .filter(|x| x.status == Status::Singular)
                .map(|x| x.multiplicity())
                .collect()
        };
        assert_eq!(multiplicities(&bs), multiplicities(&gs), "{}", sys.name);
        let (d1, d2) = (farthest(&beps, &geps), farthest(&geps, &beps));
        assert!(d1 < 1e-10 && d2 < 1e-10, "{}: {d1:e} {d2:e}", sys.name);
        eprintln!(
            "{}: {rounds} batched host rounds; solutions within {:.1e}",
            sys.name,
            d1.max(d2)
        );
    }
}

/// A slot whose homogenizing coordinate still shrinks once `s ≤ DIVERGENCE_S` (reimer-5's
/// 576 paths to infinity) goes back to its oldest endgame sample (`s` ≈ 1e-7) and tracks on
/// from there in double-double mode until the host's divergence rule ends it
/// (`slot::EXIT_DIVERGED`; without double-double mode the slot hands it to the host from that
/// sample, `slot::EXIT_CONTINUE`). Tracked again by the host from its endgame-zone entry
/// (`s` = 0.1), such paths would take 1.33× the plain tracker's steps; handed over from the
/// oldest sample, 1.19× (the slots confirm every Newton step, and the stretch after the
/// oldest sample is tracked twice).
#[test]
fn paths_to_infinity_are_not_tracked_through_the_endgame_zone_twice() {
    let sys = shipped("reimer5");
    let (s, eps) = solve_resident(&sys, StartKind::Polyhedral, 2, 4096);
    let mut cpu = CpuBackend::new(2).unwrap();
    let opts = SolveOptions {
        seed: 2,
        ..Default::default()
    };
    let (c, ceps) = solve_collect(&sys, &opts, &mut cpu).unwrap();
    assert_eq!((s.finite, s.at_infinity, s.failed), (144, 576, 0), "{s:?}");
    assert_eq!((c.finite, c.at_infinity), (144, 576), "{c:?}");
    let d = farthest(&eps, &ceps).max(farthest(&ceps, &eps));
    assert!(d < 1e-8, "solution sets differ by {d}");
    let steps_at_infinity = |v: &[Endpoint]| -> u64 {
        v.iter()
            .filter(|e| e.status == Status::AtInfinity)
            .map(|e| e.steps() as u64)
            .sum()
    };
    let (resident, plain) = (steps_at_infinity(&eps), steps_at_infinity(&ceps));
    let ratio = resident as f64 / plain as f64;
    assert!(
        ratio < 1.2,
        "{resident} resident steps against {plain} plain: {ratio:.3}×"
    );
}

/// Recovery's first round starts during the first pass (`solver::early`): chandra-9 seeds
/// 11 and 17 have two paths at one solution (the only ones among katsura-8 to -10, eco-9
/// and -10, noon-6 and chandra-9 at seeds 1–25); both are re-tracked as soon as the second
/// one's endpoint reaches the tally, and every endpoint (re-tracked ones included) is the
/// same, bit for bit, as when the round runs after the pass.
#[test]
fn recovery_starts_during_the_first_pass_with_the_same_endpoints() {
    for seed in [11, 17] {
        early_and_late_recovery_agree(seed);
    }
}

fn early_and_late_recovery_agree(seed: u64) {
    let sys = shipped("chandra9");
    let run = |early_recovery: bool| {
        let mut b = HostResident::new(2).unwrap();
        let opts = SolveOptions {
            seed,
            early_recovery,
            ..Default::default()
        };
        let (s, eps) = solve_collect(&sys, &opts, &mut b).unwrap();
        let lines: Vec<String> = eps
            .iter()
            .map(|e| format!("{} {}", e.attempt, pathtrack::report::solution_line(e)))
            .collect();
        (s, lines)
    };
    let (early, early_lines) = run(true);
    let (after, after_lines) = run(false);
    assert_eq!((early.nonsingular, early.failed), (256, 0), "{early:?}");
    assert!(early.retracked >= 2, "{early:?}");
    assert_eq!(early.retracked_early, early.retracked, "{early:?}");
    assert_eq!(after.retracked_early, 0);
    assert_eq!(
        (after.retracked, after.recovered),
        (early.retracked, early.recovered)
    );
    assert!(early_lines == after_lines, "endpoints differ");
}

/// Paths beyond double precision end in their slots (`common_slots::beyond_double_in_slots`).
#[test]
fn paths_beyond_double_precision_end_in_their_slots() {
    common_slots::beyond_double_in_slots(HostResident::new(2).unwrap());
}

/// Paths heading to infinity past `ZONE_COND` end in their slots
/// (`common_slots::carried_to_their_end`).
#[test]
fn carried_paths_end_in_their_slots() {
    common_slots::carried_to_their_end(HostResident::new(2).unwrap());
}

/// Paths in double-double mode that underflow with a settled valuation end in their slots
/// (`common_slots::settled_to_their_end`).
#[test]
fn settled_paths_end_in_their_slots() {
    common_slots::settled_to_their_end(HostResident::new(2).unwrap());
}

/// Records the calls the tracker's loop makes to a [`ResidentTracker`] (and passes them on).
struct Recorder<'a> {
    inner: &'a mut dyn pathtrack::track::resident::ResidentTracker,
    calls: Vec<&'static str>,
}

impl pathtrack::track::resident::ResidentTracker for Recorder<'_> {
    fn begin(
        &mut self,
        opts: &pathtrack::track::TrackerOptions,
    ) -> pathtrack::error::Result<usize> {
        self.inner.begin(opts)
    }
    fn load(
        &mut self,
        starts: &[(usize, pathtrack::track::StartPoint)],
    ) -> pathtrack::error::Result<()> {
        self.calls.push("load");
        self.inner.load(starts)
    }
    fn launch(&mut self, iterations: u32) -> pathtrack::error::Result<()> {
        self.calls.push("launch");
        self.inner.launch(iterations)
    }
    fn collect(
        &mut self,
        evict: bool,
    ) -> pathtrack::error::Result<Vec<(usize, pathtrack::track::resident::SlotExit)>> {
        self.calls.push(if evict { "evict" } else { "collect" });
        self.inner.collect(evict)
    }
    fn host_engine(
        &self,
    ) -> pathtrack::error::Result<(
        &pathtrack::eval::EvalLayout,
        std::sync::Arc<rayon::ThreadPool>,
    )> {
        self.inner.host_engine()
    }
    fn compact(&mut self) -> pathtrack::error::Result<Vec<(usize, usize)>> {
        self.inner.compact()
    }
}

/// The loop keeps the slots busy while the host works: after every collection that leaves
/// paths in their slots the next call is the launch, before any start point is loaded (a
/// load queued behind a running launch does not hold the device up), and every path that
/// is loaded is tracked to its end. katsura-5's 32 total-degree paths through 8 slots.
#[test]
fn each_collection_is_followed_by_the_next_launch_before_any_load() {
    use pathtrack::backend::Backend;
    let sys = shipped("katsura5");
    let mut rng = pathtrack::solver::rng_for(4);
    let td = pathtrack::start::total_degree::TotalDegree::new(&sys, &mut rng).unwrap();
    let mut b = HostResident::new(2).unwrap();
    b.set_homotopy(&td.homotopy).unwrap();
    let opts = pathtrack::track::TrackerOptions {
        batch: 8,
        ..Default::default()
    };
    let count = td.path_count() as u64;
    let mut starts = (0..count).map(|i| pathtrack::track::StartPoint {
        path: i,
        y: td.start_point(i as u128),
        tau: -16.0,
        log: false,
        lifts: None,
        steps: (0, 0),
    });
    let mut rec = Recorder {
        inner: b.resident().expect("HostResident has slots"),
        calls: Vec::new(),
    };
    let mut ended = Vec::new();
    pathtrack::track::resident::track_resident(
        &mut rec,
        &td.homotopy,
        &opts,
        &mut starts,
        &mut |e| {
            ended.push(e.path);
            Ok(())
        },
    )
    .unwrap();
    ended.sort_unstable();
    assert_eq!(
        ended,
        (0..count).collect::<Vec<_>>(),
        "every path ends once"
    );
    let calls = rec.calls;
    assert!(
        calls.iter().filter(|c| **c == "load").count() >= 4,
        "{calls:?}"
    );
    let launches = calls.iter().filter(|c| **c == "launch").count();
    assert!(launches > 4, "{calls:?}");
    for (i, w) in calls.windows(2).enumerate() {
        if w[0] == "collect" {
            assert_ne!(
                w[1], "load",
                "call {i}: a load between a collection and the launch: {calls:?}"
            );
        }
    }
    // Every launch but the first follows a collection directly.
    let first = calls.iter().position(|c| *c == "launch").unwrap();
    for (i, w) in calls.windows(2).enumerate().skip(first) {
        if w[1] == "launch" {
            assert_eq!(w[0], "collect", "call {}: {calls:?}", i + 1);
        }
    }
}
