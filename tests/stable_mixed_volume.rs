//! The stable mixed volume (Huber–Sturmfels) as the root count in `C^n`: equal to the mixed
//! volume where every equation has its constant term (Li–Wang), between the mixed volume
//! and the mixed volume of the supports with the origin added otherwise, the same for every
//! lifting, the number of roots in `C^n` with multiplicity of generic systems (against
//! total-degree solves), and the same figure in `pathtrack count` and in the polyhedral
//! start's own paths.

use num_complex::Complex64 as C64;
use pathtrack::post::Status;
use pathtrack::solver::{solve_cpu, StartKind};
use pathtrack::start::polyhedral::start::Polyhedral;
use pathtrack::start::polyhedral::{mixed_volume_of, stable_mixed_volume_of, Supports};
use pathtrack::system::{Polynomial, System, Term};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const THREADS: usize = 2;

fn mv(s: &Supports, seed: u64) -> u128 {
    mixed_volume_of(s, seed, THREADS).unwrap().mixed_volume
}

fn smv(s: &Supports, seed: u64) -> u128 {
    stable_mixed_volume_of(s, seed, THREADS)
        .unwrap()
        .stable_volume
}

/// The polyhedral start's own path count in `C^n`.
fn start_paths(sys: &System, seed: u64) -> u128 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Polyhedral::new(sys, false, &mut rng, THREADS)
        .unwrap()
        .paths
}

/// `pathtrack count`'s stable mixed volume.
fn counted(sys: &System, seed: u64) -> u128 {
    let m = pathtrack::cli::count::root_counts(sys, seed, THREADS, None).unwrap();
    m["stable_mixed_volume"].as_u64().unwrap() as u128
}

fn system(name: &str, n: usize, eqs: Vec<Vec<Vec<i32>>>, rng: &mut impl Rng) -> System {
    let equations = eqs
        .into_iter()
        .map(|pts| {
            Polynomial::from_terms(pts.into_iter().map(|e| Term {
                coeff: C64::from_polar(
                    rng.random_range(0.5..2.0),
                    rng.random::<f64>() * std::f64::consts::TAU,
                ),
                exponents: e,
            }))
        })
        .collect();
    System {
        name: name.into(),
        description: String::new(),
        variables: (0..n).map(|i| format!("x{i}")).collect(),
        equations,
    }
}

/// Whether a random equation gets its constant term.
#[derive(Clone, Copy, Debug)]
enum Constant {
    Always,
    Never,
    Sometimes,
}

/// A random sparse system: `n` equations of 2..=`terms` distinct nonzero monomials of
/// degree ≤ `deg` (with `shared`, the same monomials in every equation: a semi-mixed
/// system), plus the constant term as `constant` says, generic complex coefficients.
fn random_sparse(
    n: usize,
    terms: usize,
    deg: i32,
    constant: Constant,
    shared: bool,
    seed: u64,
) -> System {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let monomials = |rng: &mut ChaCha8Rng| {
        let m = rng.random_range(2..=terms);
        let mut pts: Vec<Vec<i32>> = Vec::new();
        while pts.len() < m {
            let mut a = vec![0; n];
            for _ in 0..rng.random_range(1..=deg) {
                a[rng.random_range(0..n)] += 1;
            }
            if !pts.contains(&a) {
                pts.push(a);
            }
        }
        pts
    };
    let common = monomials(&mut rng);
    let eqs = (0..n)
        .map(|_| {
            let mut pts = if shared {
                common.clone()
            } else {
                monomials(&mut rng)
            };
            let with = match constant {
                Constant::Always => true,
                Constant::Never => false,
                Constant::Sometimes => rng.random_bool(0.5),
            };
            if with {
                pts.push(vec![0; n]);
            }
            pts
        })
        .collect();
    system(&format!("random-{n}-{seed}"), n, eqs, &mut rng)
}

/// i1 (Kowalczyk's example in PHCpack's demo set): every equation has its constant term, so
/// the stable mixed volume is the mixed volume, 66, its number of isolated roots in `C^n`
/// (the coarse Huber–Sturmfels lifting is 0 everywhere). A lifting that raised the system's
/// own constants found 41. `pathtrack count` and the polyhedral start say 66 too.
#[test]
fn i1_stable_mixed_volume_is_its_66_roots() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/i1.phc");
    let sys = pathtrack::system::load(&p).unwrap();
    assert_eq!(sys.n(), 10);
    for (k, f) in sys.equations.iter().enumerate() {
        assert!(
            f.terms.iter().any(|t| t.exponents.iter().all(|&a| a == 0)),
            "equation {} of i1 has no constant term",
            k + 1
        );
    }
    let s = Supports::from_system(&sys).unwrap();
    assert!(s.has_origin());
    for seed in [1, 2, 3, 4] {
        assert_eq!(mv(&s, seed), 66, "seed {seed}");
        assert_eq!(smv(&s, seed), 66, "seed {seed}");
    }
    assert_eq!(counted(&sys, 1), 66);
    assert_eq!(start_paths(&sys, 1), 66);
}

/// Random sparse systems whose every equation has its constant term (fully mixed, and
/// semi-mixed: all supports equal): the stable mixed volume is the mixed volume (Li–Wang
/// 1996), for several sizes and seeds, and
/// `pathtrack count`'s figure is the polyhedral start's path count.
#[test]
fn constant_terms_make_the_stable_mixed_volume_the_mixed_volume() {
    let mut nonzero = 0;
    for n in 2..=6 {
        for seed in 0..8 {
            let shared = seed % 4 == 3;
            let sys = random_sparse(n, 5, 3, Constant::Always, shared, 100 * n as u64 + seed);
            let s = Supports::from_system(&sys).unwrap();
            let m = mv(&s, seed);
            assert_eq!(smv(&s, seed), m, "{}", sys.name);
            assert_eq!(smv(&s, seed + 17), m, "{} (another lifting)", sys.name);
            if n <= 4 {
                assert_eq!(counted(&sys, seed), m, "{}", sys.name);
                assert_eq!(start_paths(&sys, seed), m, "{}", sys.name);
            }
            nonzero += (m > 0) as u32;
        }
    }
    assert!(nonzero > 30, "the random systems are degenerate: {nonzero}");
}

/// Random sparse systems with and without constant terms (fully and semi-mixed):
/// `MV(A) ≤ SMV(A) ≤ MV(A ∪ {0})` (monotonicity of the mixed volume; Li–Wang's bound),
/// the same value for two liftings, and the polyhedral start (whose lifting raises only
/// the added origins) and `pathtrack count` agree with it.
#[test]
fn stable_mixed_volume_lies_between_the_mixed_volumes_for_every_lifting() {
    let mut strict = 0;
    for constant in [Constant::Never, Constant::Sometimes] {
        for n in 2..=6 {
            for seed in 0..8 {
                let shared = seed % 4 == 3;
                let sys = random_sparse(n, 5, 3, constant, shared, 1000 * n as u64 + seed);
                let s = Supports::from_system(&sys).unwrap();
                let (m, st) = (mv(&s, seed), smv(&s, seed));
                let m0 = mv(&s.with_origin(), seed);
                assert!(
                    m <= st && st <= m0,
                    "{} {constant:?}: {m} {st} {m0}",
                    sys.name
                );
                assert_eq!(smv(&s, seed + 17), st, "{} (another lifting)", sys.name);
                if n <= 4 {
                    assert_eq!(counted(&sys, seed), st, "{}", sys.name);
                    assert_eq!(start_paths(&sys, seed), st, "{}", sys.name);
                }
                strict += (m < st && st < m0) as u32;
            }
        }
    }
    assert!(strict > 0, "no system where both bounds are strict");
}

/// Small random systems with generic coefficients, each equation with a pure power of
/// every variable (so that every root in `C^n` is isolated: on each coordinate subspace the
/// system is overdetermined) and some without a constant term (so that the origin is a
/// root, with a multiplicity): the stable mixed volume is the number of roots in `C^n`
/// counted with multiplicity (Huber–Sturmfels 1997), which a total-degree solve counts as
/// the paths that end at finite points. Where an equation lacks its constant the stable
/// mixed volume is above the mixed volume of the torus for these supports.
#[test]
fn stable_mixed_volume_counts_the_roots_of_generic_systems_in_affine_space() {
    let mut above_torus = 0;
    for (n, deg, cases) in [(2usize, 3i32, 10u64), (3, 2, 8), (4, 2, 3)] {
        for seed in 0..cases {
            let mut rng = ChaCha8Rng::seed_from_u64(7000 + 10 * n as u64 + seed);
            let eqs: Vec<Vec<Vec<i32>>> = (0..n)
                .map(|k| {
                    let mut pts: Vec<Vec<i32>> = (0..n)
                        .map(|i| {
                            let mut a = vec![0; n];
                            a[i] = rng.random_range(1..=deg);
                            a
                        })
                        .collect();
                    for _ in 0..rng.random_range(1..=2) {
                        let mut a = vec![0; n];
                        for _ in 0..rng.random_range(2..=deg) {
                            a[rng.random_range(0..n)] += 1;
                        }
                        if !pts.contains(&a) {
                            pts.push(a);
                        }
                    }
                    // the first equation always without its constant, the others at random
                    if k > 0 && rng.random_bool(0.5) {
                        pts.push(vec![0; n]);
                    }
                    pts
                })
                .collect();
            let sys = system(&format!("generic-{n}-{seed}"), n, eqs, &mut rng);
            let s = Supports::from_system(&sys).unwrap();
            let st = smv(&s, seed);
            let (summary, eps) = solve_cpu(&sys, StartKind::TotalDegree, seed + 1).unwrap();
            assert_eq!(summary.failed, 0, "{}: {summary:?}", sys.name);
            assert_eq!(summary.positive_dimensional, 0, "{}: {summary:?}", sys.name);
            let finite = eps
                .iter()
                .filter(|e| matches!(e.status, Status::Nonsingular | Status::Singular))
                .count() as u128;
            assert_eq!(finite, st, "{}: {summary:?}", sys.name);
            // the distinct roots, a singular one with the paths that reach it
            let with_multiplicity: usize = summary
                .solutions
                .iter()
                .map(|r| match r.status {
                    Status::Nonsingular => 1,
                    Status::Singular => r.paths.len(),
                    _ => 0,
                })
                .sum();
            assert_eq!(with_multiplicity as u128, st, "{}: {summary:?}", sys.name);
            above_torus += (st > mv(&s, seed)) as u32;
        }
    }
    assert!(above_torus > 0, "no system with roots off the torus");
}

/// Known counts: cyclic-n has its constant term (`Π x − 1`), so its stable mixed volume is
/// its mixed volume, the number of its isolated roots (70, 156, 924 for n = 5, 6, 7).
#[test]
fn cyclic_stable_mixed_volume_is_its_root_count() {
    for (n, want) in [(5usize, 70u128), (6, 156), (7, 924)] {
        let sys = pathtrack::system::families::generate("cyclic", n).unwrap();
        let s = Supports::from_system(&sys).unwrap();
        assert_eq!(smv(&s, 1), want, "cyclic-{n}");
        assert_eq!(mv(&s, 1), want, "cyclic-{n}");
    }
}
