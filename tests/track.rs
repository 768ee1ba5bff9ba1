//! Tracker behaviour beyond the end-to-end counts: paths started in log coordinates switch
//! to projective ones and reach the same endpoints.

use num_complex::Complex64 as C64;
use pathtrack::backend::{cpu::CpuBackend, Backend};
use pathtrack::post::{Refiner, Status};
use pathtrack::start::total_degree::TotalDegree;
use pathtrack::track::{track_all, StartPoint, TrackerOptions};

/// katsura-5, its total-degree start (seed 4), and a CPU backend holding the homotopy.
fn katsura5_total_degree() -> (pathtrack::system::System, TotalDegree, CpuBackend) {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("systems/katsura5.yaml");
    let sys = pathtrack::system::load(&p).unwrap();
    let mut rng = pathtrack::solver::rng_for(4);
    let td = TotalDegree::new(&sys, &mut rng).unwrap();
    let mut b = CpuBackend::new(2).unwrap();
    b.set_homotopy(&td.homotopy).unwrap();
    (sys, td, b)
}

/// The total-degree start points in projective coordinates at τ = −16.
fn projective_starts(td: &TotalDegree) -> impl Iterator<Item = StartPoint> + '_ {
    (0..td.path_count() as u64).map(|i| StartPoint {
        path: i,
        y: td.start_point(i as u128),
        tau: -16.0,
        log: false,
        lifts: None,
        steps: (0, 0),
    })
}

#[test]
fn log_coordinate_start_reaches_the_same_endpoints() {
    let (sys, td, mut b) = katsura5_total_degree();
    let opts = TrackerOptions::default();
    let refiner = Refiner::new(&sys, 0.0);
    let mut run = |log: bool| {
        let count = td.path_count() as u64;
        let mut starts = (0..count).map(|i| {
            let y = td.start_point(i as u128);
            // affine log coordinates: z = log(x), z_n = 0
            let z: Vec<C64> = y.iter().map(|v| (v / y[y.len() - 1]).ln()).collect();
            StartPoint {
                path: i,
                y: if log { z } else { y },
                tau: -16.0,
                log,
                lifts: None,
                steps: (0, 0),
            }
        });
        let mut ends = Vec::new();
        track_all(&mut b, &td.homotopy, &opts, &mut starts, &mut |e| {
            ends.push(refiner.process(e));
            Ok(())
        })
        .unwrap();
        ends.sort_by_key(|e| e.path);
        ends
    };
    let a = run(false);
    let l = run(true);
    assert_eq!(a.len(), 32);
    for (u, v) in a.iter().zip(&l) {
        assert_eq!(u.status, Status::Nonsingular);
        assert_eq!(v.status, Status::Nonsingular, "path {}", v.path);
        let (x, y) = (
            u.coordinates.as_ref().unwrap(),
            v.coordinates.as_ref().unwrap(),
        );
        let d = x
            .iter()
            .zip(y)
            .map(|(p, q)| (p - q).norm())
            .fold(0.0, f64::max);
        assert!(d < 1e-9, "path {}: {d}", u.path);
    }
}

/// Newton cannot resolve a predictor error below its rounding level `κ·ε`, so a step-size
/// target below that level must not shrink the steps (`track::path::step_factor`). Before
/// that rule, chandra-12's paths to its solutions of norm ~1e8 (κ ≈ 5e9: rounding level 1e-5
/// against the endgame's target 1e-6) halved their steps down to 1e-18 at s ≈ 1e-13 until
/// the stall rule stopped them. Here the endgame's target is set below any rounding level on
/// katsura-5: every path must still reach t = 1, in about the steps of the default target.
#[test]
fn a_step_target_below_the_rounding_level_does_not_stall_the_tracker() {
    use pathtrack::track::TrackCode;
    let (_, td, mut b) = katsura5_total_degree();
    let mut run = |opts: &TrackerOptions| {
        let mut starts = projective_starts(&td);
        let (mut steps, mut codes) = (0u64, Vec::new());
        track_all(&mut b, &td.homotopy, opts, &mut starts, &mut |e| {
            steps += (e.accepted + e.rejected) as u64;
            codes.push((e.path, e.code));
            Ok(())
        })
        .unwrap();
        (steps, codes)
    };
    let default = TrackerOptions::default();
    let below = TrackerOptions {
        eta_target_endgame: 1e-18,
        ..TrackerOptions::default()
    };
    let (plain_steps, plain_codes) = run(&default);
    let (steps, codes) = run(&below);
    assert_eq!(codes.len(), 32);
    for (path, code) in plain_codes.iter().chain(&codes) {
        assert_eq!(*code, TrackCode::Reached, "path {path}");
    }
    let ratio = steps as f64 / plain_steps as f64;
    assert!(
        ratio < 2.0,
        "{steps} steps with the target below rounding, {plain_steps} with the default: {ratio:.2}×"
    );
}

/// Endgame samples `(τ, y)`.
type Samples = Vec<(f64, Vec<C64>)>;

/// Samples `(τ = −s, y)` of a path whose homogenizing coordinate behaves like `s^v`
/// (relative to the others), at `s = 0.1·3^{−i}`, and `(s, κ)` with `κ = c·s^{−k}`.
fn power_law_samples(v: f64, c: f64, k: f64, count: usize) -> (Samples, Vec<(f64, f64)>) {
    let s: Vec<f64> = (0..count).map(|i| 0.1 / 3f64.powi(i as i32)).collect();
    let samples = s
        .iter()
        .map(|&s| {
            let y = vec![
                C64::new(1.0, 0.0),
                C64::new(0.5, 0.5),
                C64::new(s.powf(v), 0.0),
            ];
            (-s, y)
        })
        .collect();
    let conds = s.iter().map(|&s| (s, c * s.powf(-k))).collect();
    (samples, conds)
}

/// `track::path::beyond_double`: a path heading to infinity (valuation 1) whose condition
/// grows like `s^{−2}` from 2e5 at s = 3.7e-3 would reach 1/ε before s = 1e-8: stopped (the
/// rate is measured, not assumed). Not stopped: the same growth at a finite endpoint
/// (valuation 0: a singular root, the Cauchy endgame's business), a slower growth that
/// stays within double precision down to 1e-8 (chandra's paths to solutions of huge norm),
/// a condition below `BEYOND_DOUBLE_MIN_COND`, or only two samples.
#[test]
fn paths_beyond_double_precision_are_told_from_huge_and_singular_solutions() {
    use pathtrack::track::path::{beyond_double, DIVERGENCE_S, DOUBLE_COND_LIMIT};
    let c = 2e5 * (0.1f64 / 27.0).powi(2);
    let (samples, conds) = power_law_samples(1.0, c, 2.0, 4);
    let (v, k) = beyond_double(&conds[1..], &samples, 0.0).expect("beyond double precision");
    assert!(
        (v - 1.0).abs() < 1e-3 && (k - 2.0).abs() < 1e-9,
        "v = {v}, k = {k}"
    );
    let (s, cond) = conds[3];
    assert!(cond * (s / DIVERGENCE_S).powf(k) > DOUBLE_COND_LIMIT);

    let (finite, conds0) = power_law_samples(0.0, c, 2.0, 4);
    assert_eq!(
        beyond_double(&conds0[1..], &finite, 0.0),
        None,
        "valuation 0"
    );
    // κ ∝ 1/s reaching 1e8 at s = 1e-8: double precision suffices.
    let (_, slow) = power_law_samples(1.0, 1.0, 1.0, 4);
    assert_eq!(
        beyond_double(&slow[1..], &samples, 0.0),
        None,
        "slow growth"
    );
    let (_, small) = power_law_samples(1.0, c / 10.0, 2.0, 4);
    assert!(small[3].1 < pathtrack::track::path::BEYOND_DOUBLE_MIN_COND);
    assert_eq!(
        beyond_double(&small[1..], &samples, 0.0),
        None,
        "small condition"
    );
    assert_eq!(
        beyond_double(&conds[2..], &samples[2..], 0.0),
        None,
        "two samples"
    );
    // A rate measured on one pair only is not enough: the older pair grows slowly.
    let mut uneven = conds.clone();
    uneven[1].1 = conds[2].1 / 1.1;
    assert_eq!(beyond_double(&uneven[1..], &samples, 0.0), None, "one pair");
}

/// A recovery round's time bound (`TrackerOptions::deadline`): once it has passed, every
/// path still tracked stops at its next step with the bound as its reason, instead of
/// crawling on to its step budget; without a bound the same paths reach t = 1.
#[test]
fn paths_stop_at_the_time_bound() {
    use pathtrack::track::{TrackCode, TIME_BOUND_REASON};
    let (_, td, mut b) = katsura5_total_degree();
    let mut run = |opts: &TrackerOptions| {
        let mut starts = projective_starts(&td);
        let mut ends = Vec::new();
        track_all(&mut b, &td.homotopy, opts, &mut starts, &mut |e| {
            ends.push((e.code, e.accepted + e.rejected));
            Ok(())
        })
        .unwrap();
        ends
    };
    let bounded = TrackerOptions {
        deadline: Some(std::time::Instant::now()),
        ..TrackerOptions::default()
    };
    let ends = run(&bounded);
    assert_eq!(ends.len(), 32);
    for (code, steps) in &ends {
        let why = match code {
            TrackCode::Failed(r) | TrackCode::StoppedInEndgame(r) => r.as_str(),
            other => panic!("{other:?} after {steps} steps past the bound"),
        };
        assert!(why.contains(TIME_BOUND_REASON), "{why}");
        assert!(*steps <= 2, "{steps} steps past the bound");
    }
    let free = run(&TrackerOptions::default());
    assert!(free.iter().all(|(c, _)| *c == TrackCode::Reached));
}
