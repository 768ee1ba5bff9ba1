//! Polyhedral solves (the default start): solution counts in C^n from the literature, for
//! five seeds each, with no failed path.

use pathtrack::post::Status;
use pathtrack::solver::{solve_cpu, StartKind};
use pathtrack::system::{self, System};

fn shipped(name: &str) -> System {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("systems")
        .join(format!("{name}.yaml"));
    system::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];

fn check(name: &str, finite: u64) {
    let sys = shipped(name);
    for seed in SEEDS {
        let (s, eps) = solve_cpu(&sys, StartKind::Polyhedral, seed).unwrap();
        assert_eq!(s.failed, 0, "{name} seed {seed}: failed paths {s:?}");
        assert_eq!(s.nonsingular, finite, "{name} seed {seed}: {s:?}");
        assert_eq!(s.finite, finite, "{name} seed {seed}: {s:?}");
        for e in eps.iter().filter(|e| e.status == Status::Nonsingular) {
            assert!(
                e.residual < 1e-10,
                "{name} seed {seed}: residual {}",
                e.residual
            );
        }
        assert_eq!(s.start, "polyhedral");
        assert!(s.root_counts.contains_key("stable_mixed_volume"));
    }
}

#[test]
fn cyclic7_has_924_solutions() {
    check("cyclic7", 924);
}

/// Cyclic-8 has 1,152 isolated solutions, all nonsingular, besides a curve of degree 144
/// (Björck & Fröberg). Paths that end on the curve are not nonsingular: Newton in
/// double-double drops quadratically towards the curve and then wanders along it, which is
/// no proof of a nonsingular root (taken as one, seeds 1–5 would report 1,297–1,316
/// "nonsingular"). Nor are they singular solutions: the local dimension test finds points
/// of the curve next to each (`post::local_dimension`), so every path is nonsingular, at
/// infinity or `positive_dimensional`, and each of the latter ends on `V(F)`. About 3 s per
/// seed on two cores.
#[test]
fn cyclic8_has_1152_nonsingular_solutions_besides_its_curve() {
    let sys = shipped("cyclic8");
    for seed in [1, 2, 3] {
        let (s, eps) = solve_cpu(&sys, StartKind::Polyhedral, seed).unwrap();
        assert_eq!(s.failed, 0, "seed {seed}: {s:?}");
        assert_eq!(s.nonsingular, 1152, "seed {seed}: {s:?}");
        assert_eq!((s.singular, s.finite), (0, 1152), "seed {seed}: {s:?}");
        assert!(
            s.positive_dimensional > 0,
            "seed {seed}: no path ended on the curve: {s:?}"
        );
        let on_curve: Vec<_> = eps
            .iter()
            .filter(|e| e.status == Status::PositiveDimensional)
            .collect();
        assert_eq!(on_curve.len() as u64, s.positive_dimensional);
        assert_eq!(s.paths, 1152 + s.at_infinity + s.positive_dimensional);
        for e in on_curve {
            let x = e.coordinates.as_ref().expect("a point of the curve");
            assert!(
                sys.relative_residual(x) < 1e-8,
                "seed {seed}: path {}",
                e.path
            );
        }
        for e in eps.iter().filter(|e| e.status == Status::Nonsingular) {
            assert!(e.residual < 1e-10, "seed {seed}: residual {}", e.residual);
        }
    }
}

/// katsura-9: about 3.3 s per seed on two cores with the tropical mixed cells (the stable
/// enumeration would dominate it).
#[test]
fn katsura_5_to_9_have_2_to_the_n_solutions_in_cn() {
    for n in 5..=9 {
        check(&format!("katsura{n}"), 1 << n);
    }
}

/// From chandra-8 on, solutions have condition numbers from 1e9 up to above 1e12 (c =
/// 0.51234 is close to the degenerate 1/2). Double precision alone loses some of them; the
/// double-double residuals near t = 1 (docs/tracker.md) keep all of them for every seed here.
/// chandra-9: about 5 s per seed on two cores since the endgame's trigger range and loop
/// budget (it was a minute).
#[test]
fn chandra_4_to_9_have_2_to_the_n_minus_1_solutions() {
    for n in 4..=9 {
        check(&format!("chandra{n}"), 1 << (n - 1));
    }
}

/// chandra-10 (512 solutions): 13–20 s per seed on two cores.
#[test]
fn chandra_10_has_512_solutions() {
    check("chandra10", 512);
}

#[test]
#[ignore]
fn cyclic10_has_34940_solutions_and_1000_paths_to_infinity() {
    let sys = shipped("cyclic10");
    let (s, _) = solve_cpu(&sys, StartKind::Polyhedral, 1).unwrap();
    assert_eq!(s.paths, 35_940, "{s:?}");
    assert_eq!(s.nonsingular, 34_940, "{s:?}");
    assert_eq!(s.finite, 34_940, "{s:?}");
    assert_eq!(s.at_infinity + s.failed, 1_000, "{s:?}");
}

#[test]
fn noon_3_to_6_have_3_to_the_n_minus_2n_solutions() {
    for n in 3..=6u32 {
        check(&format!("noon{n}"), 3u64.pow(n) - 2 * n as u64);
    }
}

#[test]
fn torus_only_misses_the_solutions_with_zero_coordinates() {
    // katsura-5 has 32 solutions in C^5, some with zero coordinates; --torus finds only
    // those in (C*)^5, and its path count is the mixed volume.
    let sys = shipped("katsura5");
    let mut b = pathtrack::backend::cpu::CpuBackend::new(0).unwrap();
    let opts = pathtrack::solver::SolveOptions {
        torus: true,
        ..Default::default()
    };
    let mut zero_coord = 0;
    let s = pathtrack::solver::solve(&sys, &opts, &mut b, &mut |e: &pathtrack::post::Endpoint| {
        if let Some(x) = &e.coordinates {
            if x.iter().any(|z| z.norm() < 1e-8) {
                zero_coord += 1;
            }
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(zero_coord, 0);
    assert!(s.finite < 32, "{s:?}");
    assert_eq!(
        s.paths as u64,
        s.root_counts["mixed_volume"].as_u64().unwrap()
    );
}

/// eco-n's paths pass close to infinity at some t < 1 (coordinates down to 1e-17 of the
/// largest, near t ≈ 0.5): in projective coordinates such a path lost its small coordinates
/// and was caught by the points at infinity that solve every `H(·, t)`, ending "at
/// infinity" although eco-n has all its 2^(n−2) solutions finite (eco-10 seeds 3, 4, 6 and
/// eco-11 seeds 2, 3, 4, 6 each lost one or two before paths went back to log coordinates
/// there, `track::path::TO_LOG_SPREAD`). Every path must end at a solution, none at
/// infinity, and none may need re-tracking.
#[test]
fn eco_paths_passing_near_infinity_keep_their_solutions() {
    for (name, seeds, finite) in [
        ("eco10", &[3u64, 4, 6][..], 256),
        ("eco11", &[2, 3, 4, 6], 512),
    ] {
        let sys = shipped(name);
        for &seed in seeds {
            let (s, _) = solve_cpu(&sys, StartKind::Polyhedral, seed).unwrap();
            assert_eq!(
                (s.nonsingular, s.at_infinity, s.failed, s.retracked),
                (finite, 0, 0, 0),
                "{name} seed {seed}: (nonsingular, at infinity, failed, re-tracked)"
            );
        }
    }
}

/// cyclic-10 `--torus` seed 1, paths 13970–13973 (one cell) pass a point of condition ~1e9
/// at τ ≈ −0.44. There the endgame zone's step rule at the rounding level
/// (`track::path::step_factor`: a first correction within `8·κ·ε` doubles the step) took
/// re-tracked paths off Newton's basin, and all four failed; the rule holds in the zone
/// only. With corrections measured per coordinate (`track::path::correction_size`) the
/// first pass tracks all four; where it does not, recovery must. Every one must end at a
/// nonsingular solution.
#[test]
fn paths_through_an_ill_conditioned_region_before_the_zone_are_recovered() {
    let sys = shipped("cyclic10");
    let mut b = pathtrack::backend::cpu::CpuBackend::new(0).unwrap();
    let opts = pathtrack::solver::SolveOptions {
        torus: true,
        seed: 1,
        only: Some(vec![13970, 13971, 13972, 13973]),
        ..Default::default()
    };
    let (s, eps) = pathtrack::solver::solve_collect(&sys, &opts, &mut b).unwrap();
    assert_eq!(
        (s.nonsingular, s.failed),
        (4, 0),
        "(nonsingular, failed): {s:?}"
    );
    // the report's recovery rounds: the first tracked the re-tracked paths again; together
    // they are the recovery phase
    let rounds = &s.phases.recovery_rounds;
    if s.retracked > 0 {
        assert!(rounds.first().is_some_and(|r| r.paths > 0), "{rounds:?}");
        let sum: f64 = rounds.iter().map(|r| r.seconds).sum();
        assert!(sum <= s.phases.recovery && sum > 0.0, "{:?}", s.phases);
    }
    for e in &eps {
        assert!(
            e.residual < 1e-10,
            "path {}: residual {}",
            e.path,
            e.residual
        );
    }
}

/// rose (PHCpack's demo database; exact: 136 solutions with multiplicity in C^3, 132
/// distinct, 128 of them in the torus): in C^n, 128 nonsingular and 4 double points with
/// z = 0; with `--torus` (136 paths) the 128 torus solutions, and the 8 paths to the
/// double points are outside the torus, not solutions in (C*)^3.
#[test]
fn rose_torus_solutions_exclude_the_double_points_with_a_zero_coordinate() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rose.phc");
    let sys = system::load(&p).unwrap_or_else(|e| panic!("{e}"));
    for seed in [1, 2] {
        let (s, _) = solve_cpu(&sys, StartKind::Polyhedral, seed).unwrap();
        assert_eq!(
            (s.nonsingular, s.singular, s.failed),
            (128, 4, 0),
            "seed {seed}: {s:?}"
        );
        assert_eq!(s.outside_torus, None);
        let opts = pathtrack::solver::SolveOptions {
            torus: true,
            seed,
            ..Default::default()
        };
        let mut cpu = pathtrack::backend::cpu::CpuBackend::new(0).unwrap();
        let (s, eps) = pathtrack::solver::solve_collect(&sys, &opts, &mut cpu).unwrap();
        assert_eq!(s.paths, 136, "seed {seed}: {s:?}");
        assert_eq!(
            (s.nonsingular, s.singular, s.failed),
            (128, 0, 0),
            "seed {seed}: {s:?}"
        );
        assert_eq!(s.outside_torus, Some(8), "seed {seed}: {s:?}");
        for e in eps.iter().filter(|e| e.status == Status::OutsideTorus) {
            let x = e.coordinates.as_ref().expect("coordinates kept");
            assert!(x[2].norm() < 1e-10, "seed {seed}: z = {}", x[2]);
        }
    }
}
