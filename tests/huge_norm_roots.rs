//! Finite roots of huge norm (issue #45): i1 (PHCpack's demo database; mixed volume 66,
//! and an exact Gröbner basis over Q has a 66-dimensional quotient) has 66 nonsingular
//! roots, 20 of them of norm 5e2 to 3.8e11.
//!
//! The polyhedral start finds all 66 for seeds 1–5. From the total-degree start (59,049
//! paths) the paths to the roots of huge norm look like paths to infinity down to
//! `s ≈ |y_n*|^{1/v}` (`y_n*` the root's homogenizing coordinate, `v` ≈ 1/4–1/2 the apparent
//! valuation); at the divergence test (`s` = 1e-8, `track::path::stable_divergence`) their
//! valuation has settled and the first pass puts them at infinity (47–48 of 66 found, seeds
//! 1–3). The finite paths then fall short of the mixed volume, and the gap recovery
//! (`solver::gap`) tracks the paths at infinity again, best conditioned first, with their
//! last stretch in double-double: they reach their roots (15–110 steps each). Each lost
//! path is identified below by tracking its root back to its start point.

use num_complex::Complex64 as C64;
use pathtrack::backend::cpu::CpuBackend;
use pathtrack::homotopy::Homotopy;
use pathtrack::post::dedup::close;
use pathtrack::post::{Endpoint, Status};
use pathtrack::solver::{rng_for, solve_collect, solve_cpu, SolveOptions, StartKind};
use pathtrack::start::given::GivenStart;
use pathtrack::start::total_degree::TotalDegree;
use pathtrack::system::{self, System};
use pathtrack::track::TrackerOptions;
use std::sync::Arc;

const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];

fn i1() -> System {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/i1.phc");
    system::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn sup(x: &[C64]) -> f64 {
    x.iter().map(|z| z.norm()).fold(0.0, f64::max)
}

/// The nonsingular roots of `eps`, each with residual below 1e-10, pairwise distinct.
fn distinct_roots(sys: &System, eps: &[Endpoint], what: &str) -> Vec<Vec<C64>> {
    let roots: Vec<Vec<C64>> = eps
        .iter()
        .filter(|e| e.status == Status::Nonsingular)
        .map(|e| e.coordinates.clone().expect("coordinates of a root"))
        .collect();
    for (i, x) in roots.iter().enumerate() {
        assert!(sys.relative_residual(x) < 1e-10, "{what}: root {i}");
        for y in &roots[..i] {
            assert!(!close(x, y, 1e-8), "{what}: a root twice");
        }
    }
    roots
}

/// i1's 66 roots by the polyhedral start of `seed`, the one of norm 3.8e11 among them.
fn polyhedral_roots(sys: &System, seed: u64) -> Vec<Vec<C64>> {
    let (s, eps) = solve_cpu(sys, StartKind::Polyhedral, seed).unwrap();
    assert_eq!((s.paths, s.failed), (66, 0), "seed {seed}: {s:?}");
    let roots = distinct_roots(sys, &eps, &format!("polyhedral seed {seed}"));
    assert_eq!(roots.len(), 66, "seed {seed}: {s:?}");
    assert!(roots.iter().any(|x| sup(x) > 1e11), "seed {seed}: 3.8e11");
    roots
}

/// The total-degree path (of `seed`) that ends at each of `roots`: the root tracked back
/// along `γ(1 − t)·G + t·F` (`G_k = s_k·(x_k³ − 1)`, `start::start_scale`) from t = 1 to t = 0, i.e. forward along
/// `γ⁻¹(1 − t')·F + t'·G` (the same homotopy up to a factor), to a tuple of cube roots of
/// unity, whose mixed-radix number is the path's (`TotalDegree::start_point`).
fn total_degree_paths(sys: &System, seed: u64, roots: &[Vec<C64>]) -> Vec<u64> {
    // The solver works on the equilibrated system and draws γ first from the seed.
    let (f, _) = sys.equilibrated();
    let td = TotalDegree::new(&f, &mut rng_for(seed)).unwrap();
    assert!(td.degrees.iter().all(|&d| d == 3));
    let mut yaml = format!("variables: [{}]\nequations:\n", f.variables.join(", "));
    for v in &f.variables {
        yaml += &format!("  - \"{v}^3 - 1\"\n");
    }
    let mut g = system::parse_str(&yaml, "cubes").unwrap();
    // Start equation k is `s_k·(x_k³ − 1)`, `s_k` from f_k's coefficients.
    for (gk, fk) in g.equations.iter_mut().zip(&f.equations) {
        let s = pathtrack::start::start_scale(fk);
        gk.terms.iter_mut().for_each(|t| t.coeff *= s);
    }
    let given = GivenStart {
        homotopy: Homotopy::gamma_trick(&g, &f.equations, C64::new(1.0, 0.0) / td.gamma),
        points: roots.to_vec(),
        // t'₀ = e^{-70}: the roots of norm 1e7–4e11 move by O(t'₀·‖x‖²) at t'₀.
        tau: -70.0,
        name: "reverse".into(),
        reason: "i1's roots tracked back to the total-degree start".into(),
    };
    // Tight steps: with the default ones the way back from the root of norm 3.8e11 (seed 1)
    // crosses to a neighbouring path's start point.
    let opts = SolveOptions {
        seed,
        given: Some(Arc::new(given)),
        local_dimension: false,
        tracker: TrackerOptions::default().tightened(2),
        ..Default::default()
    };
    let (s, eps) = solve_collect(&g, &opts, &mut CpuBackend::new(0).unwrap()).unwrap();
    assert_eq!(s.nonsingular, 66, "seed {seed}: reverse tracking {s:?}");
    let third = std::f64::consts::TAU / 3.0;
    let paths: Vec<u64> = eps
        .iter()
        .map(|e| {
            let z = e.coordinates.as_ref().expect("a start point");
            z.iter().rev().fold(0u64, |index, &w| {
                let j = (w.arg() / third).round().rem_euclid(3.0);
                assert!((w - C64::from_polar(1.0, j * third)).norm() < 1e-8, "{w}");
                3 * index + j as u64
            })
        })
        .collect();
    let mut sorted = paths.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 66, "seed {seed}: two roots on one path");
    paths
}

/// The polyhedral start finds i1's 66 roots, the one of norm 3.8e11 among them, for seeds
/// 1–5, each once.
#[test]
fn i1_polyhedral_finds_the_66_roots() {
    let sys = i1();
    for seed in SEEDS {
        polyhedral_roots(&sys, seed);
    }
}

/// Each of i1's 66 roots is reached by its own total-degree path, for seeds 1–5 (about 10 s
/// on two cores): the 66 paths tracked alone, so every path at infinity after the first pass
/// (18–20, those to the roots of norm 5e2–3.8e11) is tracked again.
#[test]
fn i1_total_degree_paths_reach_the_66_roots() {
    let sys = i1();
    for seed in SEEDS {
        let roots = polyhedral_roots(&sys, seed);
        let paths = total_degree_paths(&sys, seed, &roots);
        let mut only = paths.clone();
        only.sort_unstable();
        let opts = SolveOptions {
            start: StartKind::TotalDegree,
            seed,
            only: Some(only),
            ..Default::default()
        };
        let (s, eps) = solve_collect(&sys, &opts, &mut CpuBackend::new(0).unwrap()).unwrap();
        let lost: Vec<String> = paths
            .iter()
            .zip(&roots)
            .filter_map(|(&p, x)| {
                let e = eps.iter().find(|e| e.path == p).expect("tracked");
                let reached = e.status == Status::Nonsingular
                    && e.coordinates.as_ref().is_some_and(|y| close(x, y, 1e-8));
                (!reached)
                    .then(|| format!("path {p} (root of norm {:.1e}): {:?}", sup(x), e.status))
            })
            .collect();
        let counts = (s.nonsingular, s.at_infinity, s.failed);
        assert!(
            lost.is_empty(),
            "seed {seed}: {counts:?}\n{}",
            lost.join("\n")
        );
    }
}

/// i1's 66 root paths among every 16th path of the total-degree start (seed 1; 3,757 paths,
/// about 10 s on two cores): the 66 roots are found, and the gap recovery picks the lost
/// paths out of the 3,400-odd paths at infinity by their condition, tracking at most a tenth
/// of those again.
#[test]
fn i1_total_degree_roots_among_diverging_paths() {
    let sys = i1();
    let seed = 1;
    let roots = polyhedral_roots(&sys, seed);
    let mut only = total_degree_paths(&sys, seed, &roots);
    only.extend((0..59049).step_by(16));
    only.sort_unstable();
    only.dedup();
    let opts = SolveOptions {
        start: StartKind::TotalDegree,
        seed,
        only: Some(only.clone()),
        ..Default::default()
    };
    let (s, eps) = solve_collect(&sys, &opts, &mut CpuBackend::new(0).unwrap()).unwrap();
    let g = s.phases.gap_recovery.as_ref().expect("a gap recovery");
    assert_eq!((g.bound, g.finite_after), (66, 66), "{g:?}");
    assert_eq!(g.stopped, "bound reached", "{g:?}");
    assert!(
        g.finite_before < 60 && g.found >= 66 - g.finite_before,
        "{g:?}"
    );
    assert!(g.retracked * 10 <= g.candidates, "{g:?}");
    assert_eq!((s.nonsingular, s.singular, s.failed), (66, 0, 0), "{s:?}");
    let found = distinct_roots(&sys, &eps, "sampled total degree");
    for x in &roots {
        assert!(
            found.iter().any(|y| close(x, y, 1e-8)),
            "root of norm {:.1e} missing",
            sup(x)
        );
    }
}

/// `ε·x³ + xy − 1, y² − z − 1, xz² + y − 3` has 12 roots (its mixed volume; total degree
/// 18): 4 of moderate size and 8 of norm about `ε^{−1/2}` (`y ≈ ±1`, `x² ≈ ∓1/ε`,
/// `z² = (3 − y)/x`). Their paths stop as diverging at s ≈ 1e-8 with valuation 1/2 and
/// κ ≈ 2, from every start: the first pass finds 4 of 12. The gap recovery takes each start
/// to all 12 (ε = 1e-12, 1e-16, 1e-20: norms 1e6, 1e8, 1e10; seeds 1–5), each root the end
/// of its own path: the same 12 roots from the three starts. Not yet the m-hom start at
/// ε = 1e-20: for seed 1 three of its paths tracked to t = 1 in double-double end where
/// Newton in double-double does not converge ("no convergence at t = 1"), 9 of 12.
#[test]
fn roots_of_norm_1e6_to_1e10_from_every_start() {
    for eps in ["1e-12", "1e-16", "1e-20"] {
        let text = format!(
            "variables: [x, y, z]\nequations:\n  - \"{eps}*x^3 + x*y - 1\"\n  - \"y^2 - z - 1\"\n  - \"x*z^2 + y - 3\"\n"
        );
        let sys = system::parse_str(&text, "huge").unwrap();
        let norm = eps.parse::<f64>().unwrap().powf(-0.5);
        let mut reference: Option<Vec<Vec<C64>>> = None;
        for start in [
            StartKind::TotalDegree,
            StartKind::Mhom,
            StartKind::Polyhedral,
        ] {
            if start == StartKind::Mhom && eps == "1e-20" {
                continue;
            }
            for seed in SEEDS {
                let what = format!("ε = {eps}, {start:?}, seed {seed}");
                let (s, eps) = solve_cpu(&sys, start, seed).unwrap();
                assert_eq!(
                    (s.nonsingular, s.singular, s.failed),
                    (12, 0, 0),
                    "{what}: {s:?}"
                );
                let g = s.phases.gap_recovery.as_ref().expect("a gap recovery");
                assert_eq!(g.bound, 12, "{what}: {g:?}");
                let roots = distinct_roots(&sys, &eps, &what);
                let huge = roots
                    .iter()
                    .filter(|x| (0.5..2.0).contains(&(sup(x) / norm)));
                assert_eq!(huge.count(), 8, "{what}");
                match &reference {
                    None => reference = Some(roots),
                    Some(r) => {
                        for x in &roots {
                            assert!(r.iter().any(|y| close(x, y, 1e-8)), "{what}: {x:?}");
                        }
                    }
                }
            }
        }
    }
}

/// Where the first pass reaches the bound nothing is tracked again: cyclic-7 from the
/// total-degree start (5,040 paths, 4,116 of them to its positive-dimensional set at
/// infinity, 2,010 of those well conditioned at their stop) finds its 924 roots with no gap
/// recovery at all.
#[test]
fn cyclic7_total_degree_tracks_nothing_again_for_the_gap() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("systems/cyclic7.yaml");
    let sys = system::load(&p).unwrap();
    let (s, _) = solve_cpu(&sys, StartKind::TotalDegree, 1).unwrap();
    assert_eq!((s.nonsingular, s.failed), (924, 0), "{s:?}");
    assert!(
        s.phases.gap_recovery.is_none(),
        "{:?}",
        s.phases.gap_recovery
    );
    assert_eq!(s.root_counts["mixed_volume"], 924);
}

/// The full total-degree run of i1 (59,049 paths) for one `seed`: the 66 roots of the
/// polyhedral start, nothing else finite, no failed path.
fn total_degree_run_finds_the_66_roots(sys: &System, seed: u64) {
    let roots = polyhedral_roots(sys, seed);
    let (s, eps) = solve_cpu(sys, StartKind::TotalDegree, seed).unwrap();
    assert_eq!(s.paths, 59049, "seed {seed}: {s:?}");
    assert_eq!(
        (s.nonsingular, s.singular, s.failed),
        (66, 0, 0),
        "seed {seed}: {s:?}"
    );
    let found = distinct_roots(sys, &eps, &format!("total degree seed {seed}"));
    for x in &roots {
        assert!(
            found.iter().any(|y| close(x, y, 1e-8)),
            "seed {seed}: root of norm {:.1e} missing",
            sup(x)
        );
    }
}

/// i1 from the total-degree start, seed 4 (75–120 s on two cores): 47–50 roots after the
/// first pass, the other 16–19 (norms up to 3.8e11) from the gap recovery, which tracks
/// 496 of the paths at infinity again.
#[test]
fn i1_total_degree_finds_66_roots() {
    total_degree_run_finds_the_66_roots(&i1(), 4);
}

/// The same for seeds 1–5 (75–125 s each on two cores; the gap recovery tracks 496 paths
/// again, 1,008 for seed 5).
#[test]
#[ignore]
fn i1_total_degree_finds_66_roots_for_five_seeds() {
    let sys = i1();
    for seed in SEEDS {
        total_degree_run_finds_the_66_roots(&sys, seed);
    }
}
