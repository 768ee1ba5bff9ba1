//! Liftings that tie: the polyhedral start must widen its lifting's range until no support
//! point lies on a cell's lifted facet, and then give every solution. Ties are forced here
//! with a first range of 2 (generic lifts in {0, 1}); systems with millions of cells
//! (cyclic-14 in C^n) meet them at the default range 2^20.

use num_complex::Complex64 as C64;
use pathtrack::backend::{cpu::CpuBackend, Backend};
use pathtrack::post::{Refiner, Status};
use pathtrack::start::polyhedral::start::{Polyhedral, FIRST_LIFT_RANGE};
use pathtrack::track::{track_all, TrackerOptions};
use std::sync::Arc;

fn shipped(name: &str) -> pathtrack::system::System {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("systems")
        .join(format!("{name}.yaml"));
    pathtrack::system::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// Builds the start with a first range of 2, checks that every cell's start system is
/// binomial (exactly two zero lifts per equation: the cell's own points), tracks every path
/// on the CPU and counts the distinct nonsingular solutions.
fn solve_from_tied_liftings(name: &str, torus: bool, seed: u64) -> (i64, u128, usize) {
    let sys = shipped(name);
    let n = sys.n();
    let mut rng = pathtrack::solver::rng_for(seed);
    let poly = Arc::new(
        Polyhedral::with_first_lift_range(&sys, torus, &mut rng, 2, 2)
            .unwrap_or_else(|e| panic!("{name} seed {seed}: {e}")),
    );
    let mut starts: Vec<_> = poly.start_points(None).collect();
    assert_eq!(starts.len() as u128, poly.paths, "{name} seed {seed}");
    for s in &starts {
        let lifts = s.lifts.as_ref().expect("a cell's own lifts");
        let zeros = lifts.iter().filter(|&&w| w == 0.0).count();
        assert_eq!(zeros, 2 * n, "{name} seed {seed} path {}", s.path);
    }
    let mut b = CpuBackend::new(2).unwrap();
    b.set_homotopy(&poly.homotopy).unwrap();
    let mut refiner = Refiner::new(&sys, 0.0);
    refiner.track_near_one(&poly.homotopy);
    let mut sols: Vec<Vec<C64>> = Vec::new();
    let opts = TrackerOptions::default();
    track_all(
        &mut b,
        &poly.homotopy,
        &opts,
        &mut starts.drain(..),
        &mut |e| {
            let ep = refiner.process(e);
            if ep.status == Status::Nonsingular {
                sols.push(ep.coordinates.unwrap());
            }
            Ok(())
        },
    )
    .unwrap();
    let mut distinct: Vec<Vec<C64>> = Vec::new();
    for x in sols {
        let same = |y: &Vec<C64>| {
            x.iter()
                .zip(y)
                .all(|(a, b)| (a - b).norm() <= 1e-6 * (1.0 + a.norm()))
        };
        if !distinct.iter().any(same) {
            distinct.push(x);
        }
    }
    (poly.lift_range, poly.paths, distinct.len())
}

#[test]
fn tied_liftings_are_widened_until_every_cell_is_binomial() {
    for (name, torus, want) in [
        ("cyclic5", false, 70u128),
        ("cyclic5", true, 70),
        ("katsura5", false, 32),
        ("noon4", false, 73),
        ("eco6", false, 16),
    ] {
        for seed in [1, 2] {
            let (range, paths, found) = solve_from_tied_liftings(name, torus, seed);
            assert!(range > 2, "{name} seed {seed}: a range of 2 gave no tie");
            assert_eq!(paths, want, "{name} seed {seed} torus {torus}");
            assert_eq!(found as u128, want, "{name} seed {seed} torus {torus}");
        }
    }
}

/// The default range is the one every seed's figures were measured with: widening happens
/// only after a tie.
#[test]
fn untied_liftings_keep_the_first_range() {
    let sys = shipped("katsura6");
    let mut rng = pathtrack::solver::rng_for(1);
    let poly = Polyhedral::new(&sys, false, &mut rng, 2).unwrap();
    assert_eq!(poly.lift_range, FIRST_LIFT_RANGE);
    assert_eq!(poly.paths, 64);
}
