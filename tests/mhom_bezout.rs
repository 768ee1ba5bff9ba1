//! Multi-homogeneous Bézout numbers against known counts (bilinear systems: C(k1+k2, k1);
//! the eigenvalue problem: n; totally mixed Nash equilibria of n-player 2-strategy games:
//! the derangement numbers, McKelvey–McLennan 1997), against two independent methods
//! (the permanent formula and a brute-force sum over group assignments), and the
//! linear-product start system (every start point a root, all distinct, as many as the
//! m-hom number).

use num_bigint::BigUint;
use num_complex::Complex64;
use pathtrack::start::mhom::bezout::{
    mhom_bezout_from_degrees, mhom_bezout_permanent, next_rgs, DegreeTable,
};
use pathtrack::start::mhom::{best_partition, mhom_bezout, LinearProductStart, Partition};
use pathtrack::system::{Polynomial, System, Term};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn rc(rng: &mut ChaCha8Rng) -> Complex64 {
    Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0))
}

fn system(vars: Vec<String>, equations: Vec<Polynomial>) -> System {
    System {
        name: "test".into(),
        description: String::new(),
        variables: vars,
        equations,
    }
}

/// Dense random polynomial with every monomial whose degree in group j is ≤ bounds[j].
fn dense_multidegree(
    rng: &mut ChaCha8Rng,
    groups: &[Vec<usize>],
    bounds: &[u32],
    n: usize,
) -> Polynomial {
    let mut terms = Vec::new();
    let mut e = vec![0i32; n];
    #[allow(clippy::too_many_arguments)]
    fn rec(
        rng: &mut ChaCha8Rng,
        groups: &[Vec<usize>],
        bounds: &[u32],
        g: usize,
        k: usize,
        left: u32,
        e: &mut Vec<i32>,
        terms: &mut Vec<Term>,
    ) {
        if g == groups.len() {
            terms.push(Term {
                coeff: rc(rng),
                exponents: e.clone(),
            });
            return;
        }
        if k == groups[g].len() {
            let next = bounds.get(g + 1).copied().unwrap_or(0);
            rec(rng, groups, bounds, g + 1, 0, next, e, terms);
            return;
        }
        let v = groups[g][k];
        for a in 0..=left {
            e[v] = a as i32;
            rec(rng, groups, bounds, g, k + 1, left - a, e, terms);
        }
        e[v] = 0;
    }
    rec(rng, groups, bounds, 0, 0, bounds[0], &mut e, &mut terms);
    Polynomial::from_terms(terms)
}

/// Random bilinear system in x (k1 variables) and y (k2 variables).
fn bilinear(rng: &mut ChaCha8Rng, k1: usize, k2: usize) -> (System, Partition) {
    let n = k1 + k2;
    let groups = vec![(0..k1).collect::<Vec<_>>(), (k1..n).collect()];
    let vars = (0..k1)
        .map(|i| format!("x{i}"))
        .chain((0..k2).map(|i| format!("y{i}")))
        .collect();
    let eqs = (0..n)
        .map(|_| dense_multidegree(rng, &groups, &[1, 1], n))
        .collect();
    (system(vars, eqs), Partition::new(groups, n).unwrap())
}

fn binomial(n: u64, k: u64) -> u64 {
    (1..=k).fold(1, |acc, i| acc * (n - k + i) / i)
}

fn same_partition(a: &Partition, b: &Partition) -> bool {
    let canon = |p: &Partition| {
        let mut g: Vec<Vec<usize>> = p
            .groups
            .iter()
            .map(|g| {
                let mut g = g.clone();
                g.sort();
                g
            })
            .collect();
        g.sort();
        g
    };
    canon(a) == canon(b)
}

#[test]
fn bilinear_systems_have_binomial_mhom_number() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for (k1, k2) in [(1, 1), (2, 1), (2, 2), (3, 2), (3, 3), (4, 3), (5, 5)] {
        let (sys, part) = bilinear(&mut rng, k1, k2);
        let n = k1 + k2;
        let want = BigUint::from(binomial(n as u64, k1 as u64));
        assert_eq!(mhom_bezout(&sys, &part).unwrap(), want, "({k1},{k2})");
        // The 1-homogeneous partition gives the total degree 2^n.
        let one = mhom_bezout(&sys, &Partition::one_hom(n)).unwrap();
        assert_eq!(one, BigUint::from(1u64 << n));
        assert_eq!(Some(1u128 << n), sys.total_degree());
        // The best partition reaches C(n, k1) (the generic root count, so no partition can
        // do better) and, for k1, k2 ≥ 2, it is the x/y split.
        let (best, count) = best_partition(&sys).unwrap();
        assert_eq!(count, want, "({k1},{k2}) best {best:?}");
        if k1 >= 2 && k2 >= 2 {
            assert!(same_partition(&best, &part), "({k1},{k2}) best {best:?}");
        }
    }
}

#[test]
fn local_search_beyond_ten_variables_finds_the_bilinear_split() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for (k1, k2) in [(6, 5), (6, 6), (8, 5)] {
        let (sys, part) = bilinear(&mut rng, k1, k2);
        let (best, count) = best_partition(&sys).unwrap();
        let want = binomial((k1 + k2) as u64, k1 as u64);
        assert_eq!(count, BigUint::from(want), "({k1},{k2})");
        assert!(same_partition(&best, &part), "({k1},{k2}) best {best:?}");
    }
    // Nash systems beyond the exhaustive range: the derangement numbers D(n).
    let mut d = (1u64, 0u64); // D(1) = 0, D(0) = 1 as (D(n-2), D(n-1))
    for n in 2..=12usize {
        d = (d.1, (n as u64 - 1) * (d.0 + d.1));
        if n >= 11 {
            let sys = nash_system(&mut rng, n);
            let (_, count) = best_partition(&sys).unwrap();
            assert_eq!(count, BigUint::from(d.1), "Nash n = {n}");
        }
    }
    assert_eq!(d.1, 176_214_841); // D(12)
}

/// (A − λI)v = 0, c·v = 1 in variables v_0..v_(n−1), λ.
fn eigenvalue_system(rng: &mut ChaCha8Rng, n: usize) -> System {
    let nv = n + 1;
    let e = |v: &[(usize, i32)]| {
        let mut x = vec![0i32; nv];
        for &(k, a) in v {
            x[k] = a;
        }
        x
    };
    let mut eqs = Vec::new();
    for i in 0..n {
        let mut terms: Vec<Term> = (0..n)
            .map(|j| Term {
                coeff: rc(rng),
                exponents: e(&[(j, 1)]),
            })
            .collect();
        terms.push(Term {
            coeff: Complex64::new(-1.0, 0.0),
            exponents: e(&[(i, 1), (n, 1)]),
        });
        eqs.push(Polynomial::from_terms(terms));
    }
    let mut terms: Vec<Term> = (0..n)
        .map(|j| Term {
            coeff: rc(rng),
            exponents: e(&[(j, 1)]),
        })
        .collect();
    terms.push(Term {
        coeff: Complex64::new(-1.0, 0.0),
        exponents: e(&[]),
    });
    eqs.push(Polynomial::from_terms(terms));
    let vars = (0..n)
        .map(|i| format!("v{i}"))
        .chain(std::iter::once("lambda".to_string()))
        .collect();
    system(vars, eqs)
}

#[test]
fn eigenvalue_problem_has_n_roots() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    for n in 2..=7 {
        let sys = eigenvalue_system(&mut rng, n);
        let part = Partition::new(vec![(0..n).collect(), vec![n]], n + 1).unwrap();
        assert_eq!(mhom_bezout(&sys, &part).unwrap(), BigUint::from(n));
        assert_eq!(sys.total_degree(), Some(1u128 << n));
        let (_, count) = best_partition(&sys).unwrap();
        assert_eq!(count, BigUint::from(n), "n = {n}");
    }
}

/// Indifference equations of an n-player game with 2 strategies each: equation i is a
/// random multilinear polynomial in the other players' probabilities p_j, j ≠ i.
fn nash_system(rng: &mut ChaCha8Rng, n: usize) -> System {
    let eqs = (0..n)
        .map(|i| {
            let others: Vec<usize> = (0..n).filter(|&j| j != i).collect();
            let terms = (0..1u32 << others.len()).map(|mask| {
                let mut e = vec![0i32; n];
                for (b, &j) in others.iter().enumerate() {
                    e[j] = ((mask >> b) & 1) as i32;
                }
                Term {
                    coeff: rc(rng),
                    exponents: e,
                }
            });
            Polynomial::from_terms(terms)
        })
        .collect();
    system((0..n).map(|i| format!("p{i}")).collect(), eqs)
}

#[test]
fn nash_equilibria_count_is_the_derangement_number() {
    // D(n): 1, 2, 9, 44, 265, 1854 for n = 2..7 (D(n) = (n−1)(D(n−1) + D(n−2))).
    let known = [(2, 1u64), (3, 2), (4, 9), (5, 44), (6, 265), (7, 1854)];
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    for (n, d) in known {
        let sys = nash_system(&mut rng, n);
        assert_eq!(
            mhom_bezout(&sys, &Partition::n_hom(n)).unwrap(),
            BigUint::from(d),
            "n = {n}"
        );
        let (_, count) = best_partition(&sys).unwrap();
        assert_eq!(count, BigUint::from(d), "best, n = {n}");
    }
}

/// Σ over assignments σ of equations to groups with |σ⁻¹(j)| = k_j of Π_i d_(i,σ(i)).
fn brute_assignments(d: &[Vec<u32>], sizes: &[usize]) -> BigUint {
    fn rec(d: &[Vec<u32>], i: usize, left: &mut Vec<usize>, acc: BigUint, out: &mut BigUint) {
        if i == d.len() {
            *out += acc;
            return;
        }
        for j in 0..left.len() {
            if left[j] > 0 && d[i][j] > 0 {
                left[j] -= 1;
                rec(d, i + 1, left, &acc * d[i][j], out);
                left[j] += 1;
            }
        }
    }
    let mut out = BigUint::default();
    rec(d, 0, &mut sizes.to_vec(), BigUint::from(1u8), &mut out);
    out
}

#[test]
fn dynamic_program_permanent_and_brute_force_agree() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    for n in 1..=9usize {
        for _ in 0..8 {
            // A random set partition (labels) and a random degree matrix.
            let mut label: Vec<usize> = Vec::new();
            for v in 0..n {
                let m = label.iter().max().map_or(0, |&x| x + 1);
                label.push(if v == 0 { 0 } else { rng.random_range(0..=m) });
            }
            let m = label.iter().max().unwrap() + 1;
            let mut sizes = vec![0usize; m];
            label.iter().for_each(|&g| sizes[g] += 1);
            let d: Vec<Vec<u32>> = (0..n)
                .map(|_| (0..m).map(|_| rng.random_range(0..4)).collect())
                .collect();
            let dp = mhom_bezout_from_degrees(&d, &sizes).unwrap();
            assert_eq!(
                dp,
                mhom_bezout_permanent(&d, &sizes).unwrap(),
                "{d:?} {sizes:?}"
            );
            assert_eq!(dp, brute_assignments(&d, &sizes), "{d:?} {sizes:?}");
        }
    }
    // Large entries: counts beyond u128 go through big integers (30 equations of degree
    // 30 in one group: 30^30 > 2^128).
    let d = vec![vec![30u32, 1]; 31];
    let got = mhom_bezout_from_degrees(&d, &[30, 1]).unwrap();
    // Coefficient of α^30 β in (30α + β)^31 = 31·30^30.
    let want = BigUint::from(31u8) * BigUint::from(30u8).pow(30);
    assert_eq!(got, want);
}

#[test]
fn best_partition_is_the_minimum_over_all_partitions() {
    // Exhaustive reference with the permanent formula on random sparse systems, n = 5.
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let n = 5;
    for _ in 0..4 {
        let eqs = (0..n)
            .map(|_| {
                let terms = (0..4).map(|_| Term {
                    coeff: rc(&mut rng),
                    exponents: (0..n).map(|_| rng.random_range(0..3)).collect(),
                });
                Polynomial::from_terms(terms)
            })
            .collect();
        let sys = system((0..n).map(|i| format!("x{i}")).collect(), eqs);
        let table = DegreeTable::new(&sys).unwrap();
        let mut a = vec![0usize; n];
        let mut min: Option<BigUint> = None;
        loop {
            let m = a.iter().max().unwrap() + 1;
            let p = Partition::from_labels(&a, m);
            let c = mhom_bezout_permanent(&table.degrees(&p), &p.sizes()).unwrap();
            if min.as_ref().is_none_or(|x| c < *x) {
                min = Some(c);
            }
            if !next_rgs(&mut a) {
                break;
            }
        }
        let (best, count) = best_partition(&sys).unwrap();
        assert_eq!(Some(count.clone()), min);
        assert_eq!(mhom_bezout(&sys, &best).unwrap(), count);
    }
}

#[test]
fn partition_parsing_and_errors() {
    let vars: Vec<String> = ["x", "y", "z", "w1"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let p = Partition::parse("{x y}{z, w1}", &vars).unwrap();
    assert_eq!(p.groups, vec![vec![0, 1], vec![2, 3]]);
    assert_eq!(p.display(&vars), "{x y}{z w1}");
    assert_eq!(
        Partition::parse(" { w1 } {x,y,z} ", &vars).unwrap().groups,
        vec![vec![3], vec![0, 1, 2]]
    );
    let err = |s: &str| Partition::parse(s, &vars).unwrap_err().to_string();
    let e = err("{x y}{q z w1}");
    assert!(
        e.contains("column 7") && e.contains("unknown variable 'q'"),
        "{e}"
    );
    let e = err("{x y}{z x w1}");
    assert!(e.contains("'x' is already in group 1"), "{e}");
    let e = err("{x x y}{z w1}");
    assert!(e.contains("'x' repeated in group 1"), "{e}");
    let e = err("{x y}");
    assert!(e.contains("variables z, w1 are in no group"), "{e}");
    let e = err("{x y}{}{z w1}");
    assert!(e.contains("column 6") && e.contains("empty group"), "{e}");
    let e = err("{x y}{z w1");
    assert!(e.contains("column 6") && e.contains("not closed"), "{e}");
    let e = err("{x {y}}{z w1}");
    assert!(e.contains("column 4"), "{e}");
    let e = err("x {y z w1}");
    assert!(
        e.contains("column 1") && e.contains("outside braces"),
        "{e}"
    );
    let e = err("{x y z w1}}");
    assert!(
        e.contains("column 11") && e.contains("without a matching"),
        "{e}"
    );
    assert!(err("").contains("no groups"));
    assert!(Partition::new(vec![vec![0, 1], vec![1, 2, 3]], 4).is_err());
    assert!(Partition::new(vec![vec![0, 1], vec![2]], 4).is_err());
    assert!(Partition::new(vec![vec![0, 1, 2, 3]], 4).is_ok());
}

#[test]
fn laurent_and_non_square_systems_are_errors() {
    let t = |c: f64, e: Vec<i32>| Term {
        coeff: Complex64::new(c, 0.0),
        exponents: e,
    };
    let sys = system(
        vec!["x".into(), "y".into()],
        vec![
            Polynomial::from_terms([t(1.0, vec![1, -1]), t(2.0, vec![0, 0])]),
            Polynomial::from_terms([t(1.0, vec![1, 1]), t(2.0, vec![0, 0])]),
        ],
    );
    let e = best_partition(&sys).unwrap_err().to_string();
    assert!(
        e.contains("equation 1") && e.contains("Laurent") && e.contains("y"),
        "{e}"
    );
    let e = mhom_bezout(&sys, &Partition::one_hom(2))
        .unwrap_err()
        .to_string();
    assert!(e.contains("Laurent"), "{e}");
    let mut bad = sys.clone();
    bad.equations.truncate(1);
    bad.equations[0] = Polynomial::from_terms([t(1.0, vec![1, 1])]);
    assert!(best_partition(&bad)
        .unwrap_err()
        .to_string()
        .contains("1 equations in 2 variables"));
}

fn check_start_system(sys: &System, part: &Partition, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let lp = LinearProductStart::new(sys, part, &mut rng).unwrap();
    let want = mhom_bezout(sys, part).unwrap();
    assert_eq!(BigUint::from(lp.count()), want);
    let points: Vec<Vec<Complex64>> = lp.start_points().collect();
    assert_eq!(points.len() as u128, lp.count(), "{part:?}");
    for x in &points {
        assert!(x.iter().all(|z| z.is_finite()));
        let g = lp.eval(x);
        for (i, gi) in g.iter().enumerate() {
            let rel = gi.norm() / (1.0 + lp.abs_scale(i, x));
            assert!(rel < 1e-10, "residual {rel:e} at equation {i}");
        }
    }
    for a in 0..points.len() {
        for b in a + 1..points.len() {
            let dist: f64 = points[a]
                .iter()
                .zip(&points[b])
                .map(|(p, q)| (p - q).norm())
                .fold(0.0, f64::max);
            assert!(dist > 1e-6, "start points {a} and {b} coincide");
        }
    }
}

#[test]
fn linear_product_start_points_are_distinct_roots() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    for (k1, k2) in [(1, 1), (2, 2), (3, 2), (3, 3)] {
        let (sys, part) = bilinear(&mut rng, k1, k2);
        check_start_system(&sys, &part, 100 + k1 as u64);
        // The 1-hom partition: the total-degree count 2^n.
        check_start_system(&sys, &Partition::one_hom(k1 + k2), 200);
    }
    let sys = eigenvalue_system(&mut rng, 4);
    check_start_system(
        &sys,
        &Partition::new(vec![vec![0, 1, 2, 3], vec![4]], 5).unwrap(),
        3,
    );
    let sys = nash_system(&mut rng, 4);
    check_start_system(&sys, &Partition::n_hom(4), 4);
    // Mixed degrees: groups {x0 x1}{x2} with bidegrees (2,1), (1,2), (3,0).
    let groups = vec![vec![0, 1], vec![2]];
    let eqs = [[2, 1], [1, 2], [3, 0]]
        .iter()
        .map(|b| dense_multidegree(&mut rng, &groups, b, 3))
        .collect();
    let sys = system(vec!["x0".into(), "x1".into(), "x2".into()], eqs);
    let part = Partition::new(groups, 3).unwrap();
    // Coefficient of α²β in (2α+β)(α+2β)(3α) = 3α·(2α² + 5αβ + 2β²) → 15.
    assert_eq!(mhom_bezout(&sys, &part).unwrap(), BigUint::from(15u8));
    check_start_system(&sys, &part, 5);
}

/// Timing of the exhaustive search (n = 10, Bell(10) = 115975 partitions):
/// `cargo test --release --test mhom_bezout bench_best_partition -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_best_partition() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for (k1, k2) in [(5, 5), (6, 6), (10, 10)] {
        let (sys, _) = bilinear(&mut rng, k1, k2);
        let t0 = std::time::Instant::now();
        let (best, count) = best_partition(&sys).unwrap();
        println!(
            "bilinear ({k1},{k2}), n = {}: {count} in {:.3} s, {}",
            k1 + k2,
            t0.elapsed().as_secs_f64(),
            best.display(&sys.variables)
        );
    }
}

/// `start_terms` counts the monomials of the expanded linear-product start exactly: on
/// chandra-n's best partition {H1 … H(n−1)}{Hn} (equations 1 … n−1 quadratic in the first
/// group: C(n+1, 2) terms each; the last bilinear: n·2), on bilinear systems and on random
/// partitions of eigenvalue systems.
#[test]
fn start_terms_counts_the_expanded_start_system() {
    use pathtrack::start::mhom::start_terms;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut cases: Vec<(System, Partition)> = Vec::new();
    for n in [6, 8, 10] {
        let sys = pathtrack::system::families::generate("chandra", n).unwrap();
        let (part, _) = best_partition(&sys).unwrap();
        cases.push((sys, part));
    }
    for (k1, k2) in [(2, 1), (3, 2)] {
        cases.push(bilinear(&mut rng, k1, k2));
    }
    for n in [3, 4] {
        let sys = eigenvalue_system(&mut rng, n);
        let (part, _) = best_partition(&sys).unwrap();
        cases.push((sys, part));
    }
    for (sys, part) in &cases {
        let lp = LinearProductStart::new(sys, part, &mut rng).unwrap();
        let expanded: usize = lp.expand().iter().map(|p| p.terms.len()).sum();
        assert_eq!(
            start_terms(lp.degrees(), part),
            expanded as u128,
            "{} {part:?}",
            sys.name
        );
    }
    // chandra-10: 9 · C(11, 2) + 10 · 2 = 515
    let sys = pathtrack::system::families::generate("chandra", 10).unwrap();
    let (part, _) = best_partition(&sys).unwrap();
    let lp = LinearProductStart::new(&sys, &part, &mut rng).unwrap();
    assert_eq!(start_terms(lp.degrees(), &part), 515);
}
