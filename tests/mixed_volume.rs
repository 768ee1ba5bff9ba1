//! Mixed volumes against the literature, an independent n = 2 formula, gfan's recorded
//! values, and a second independent lifting.

mod common_families;
use common_families::*;
use pathtrack::start::polyhedral::{
    mixed_cells, mixed_cells_in, mixed_cells_perturbed, mixed_volume_of, stable_mixed_volume_of,
    Lifting, MixedCell, SearchMode, Supports,
};
use pathtrack::system::System;
use rand::{Rng, SeedableRng};
use std::ops::ControlFlow;

const THREADS: usize = 2;

fn mv(sys: &System, seed: u64) -> u128 {
    let s = Supports::from_system(sys).unwrap();
    mixed_volume_of(&s, seed, THREADS).unwrap().mixed_volume
}

fn smv(sys: &System, seed: u64) -> u128 {
    let s = Supports::from_system(sys).unwrap();
    stable_mixed_volume_of(&s, seed, THREADS)
        .unwrap()
        .stable_volume
}

/// Independent check of every cell: the normal puts exactly the cell's points on the
/// lower faces (recomputed here in i128), and the volume is |det| of the edge matrix.
fn check_cell(s: &Supports, l: &Lifting, c: &MixedCell) {
    let n = s.n;
    let mut v = Vec::new();
    for e in 0..n {
        let g = s.group_of[e];
        let pts = &s.groups[g];
        let h = |q: usize| -> i128 {
            l.values[g][q] as i128 * c.denominator
                + pts[q]
                    .iter()
                    .zip(&c.inner_normal)
                    .map(|(&a, &x)| a as i128 * x)
                    .sum::<i128>()
        };
        let [a0, a1] = c.pairs[e];
        assert_eq!(h(a0), h(a1));
        let hmin = (0..pts.len()).map(h).min().unwrap();
        assert_eq!(h(a0), hmin);
        v.push(
            pts[a1]
                .iter()
                .zip(&pts[a0])
                .map(|(a, b)| (a - b) as f64)
                .collect::<Vec<f64>>(),
        );
    }
    let m = nalgebra::DMatrix::from_fn(n, n, |i, j| v[i][j]);
    let d = m.determinant().abs();
    assert!(
        (d - c.volume as f64).abs() < 1e-6 * d.max(1.0),
        "{d} vs {}",
        c.volume
    );
}

#[test]
fn cyclic_5_to_7() {
    assert_eq!(mv(&cyclic(5), 1), 70);
    assert_eq!(mv(&cyclic(6), 2), 156);
    assert_eq!(mv(&cyclic(7), 3), 924);
}

#[test]
fn cyclic_8() {
    assert_eq!(mv(&cyclic(8), 4), 2560);
}

#[test]
fn cyclic_9() {
    assert_eq!(mv(&cyclic(9), 5), 11016);
}

#[test]
fn cyclic_10() {
    assert_eq!(mv(&cyclic(10), 6), 35940);
}

/// Minutes on the shared 2-core container: run with `--ignored` in release.
#[test]
#[ignore]
fn cyclic_11() {
    assert_eq!(mv(&cyclic(11), 7), 184756);
}

#[test]
#[ignore]
fn cyclic_12() {
    assert_eq!(mv(&cyclic(12), 8), 500352);
}

#[test]
fn noon_3_to_8() {
    for n in 3..=8u32 {
        let expect = 3u128.pow(n) - 2 * n as u128;
        assert_eq!(mv(&noon(n as usize), n as u64), expect, "noon-{n}");
    }
}

#[test]
fn eco_5_to_10() {
    for n in 5..=10u32 {
        assert_eq!(mv(&eco(n as usize), n as u64), 1 << (n - 2), "eco-{n}");
    }
}

#[test]
fn eco_11_12() {
    for n in 11..=12u32 {
        assert_eq!(mv(&eco(n as usize), n as u64), 1 << (n - 2), "eco-{n}");
    }
}

#[test]
fn chandra_4_to_10() {
    for n in 4..=10u32 {
        assert_eq!(
            mv(&chandra(n as usize), n as u64),
            1 << (n - 1),
            "chandra-{n}"
        );
    }
}

#[test]
fn chandra_11() {
    assert_eq!(mv(&chandra(11), 11), 1 << 10);
}

#[test]
fn chandra_12() {
    assert_eq!(mv(&chandra(12), 12), 1 << 11);
}

#[test]
fn reimer_4_5() {
    assert_eq!(mv(&reimer(4), 1), 120);
    assert_eq!(mv(&reimer(5), 2), 720);
}

/// katsura-n has 2^n solutions in C^n (Bézout bound attained).
#[test]
fn katsura_stable() {
    for n in 2..=7u32 {
        assert_eq!(smv(&katsura(n as usize), n as u64), 1 << n, "katsura-{n}");
    }
}

/// Stable mixed volume of systems whose roots in C^n are known: for noon (constant term
/// everywhere) it equals the torus count; for a dense system it is the Bézout number.
#[test]
fn stable_known_cases() {
    assert_eq!(smv(&noon(4), 1), 73);
    assert_eq!(smv(&cyclic(5), 1), 70);
    // x^2 + y = 0, x y^2 + x = 0 ... small hand case: f1 = x^2 + y, f2 = x y + x
    // roots in C^2: x(y+1)=0 → x=0 → y=0 : (0,0); y=−1 → x^2 = 1 → 2 roots. Total 3
    // (all simple: at (0,0) the Jacobian [[0,1],[1,0]] is invertible).
    let sys = from_supports(
        "hand",
        &[vec![vec![2, 0], vec![0, 1]], vec![vec![1, 1], vec![1, 0]]],
    );
    assert_eq!(smv(&sys, 3), 3);
    // torus count of the same system: 2
    assert_eq!(mv(&sys, 3), 2);
}

/// The sum of cell volumes is the same for independent liftings, and every cell passes
/// an independent face/volume check.
#[test]
fn independent_liftings_agree() {
    for sys in [cyclic(7), eco(9), noon(5), katsura(5), reimer(4)] {
        let s = Supports::from_system(&sys).unwrap();
        let mut totals = Vec::new();
        for seed in [11u64, 12345] {
            let l = Lifting::random(&s, seed);
            let mut sum = 0u128;
            let st = mixed_cells(&s, &l, THREADS, &mut |c| {
                check_cell(&s, &l, &c);
                sum += c.volume;
                ControlFlow::Continue(())
            })
            .unwrap();
            assert_eq!(sum, st.mixed_volume);
            totals.push(sum);
        }
        assert_eq!(totals[0], totals[1], "{}", sys.name);
    }
}

/// The sequence of cells (order included, and every field) and the count of homotopy steps
/// do not depend on the thread count: 1, 2, 3 and 4 threads, tropical homotopy on
/// cyclic-7, cyclic-8, eco-9 and katsura-5 with a stable lifting (coarse normals compared
/// too), tree search on cyclic-7 and katsura-5 stable.
#[test]
fn deterministic_over_threads() {
    use pathtrack::start::polyhedral::{mixed_cells_in, SearchMode};
    // tropical homotopy (fully mixed: the default), and the tree search
    let cases = [
        (cyclic(7), false, SearchMode::Tropical),
        (cyclic(8), false, SearchMode::Tropical),
        (eco(9), false, SearchMode::Tropical),
        (katsura(5), true, SearchMode::Tropical),
        (cyclic(7), false, SearchMode::Float),
        (katsura(5), true, SearchMode::Float),
    ];
    for (sys, stable, mode) in cases {
        let s = Supports::from_system(&sys).unwrap();
        let s = if stable { s.with_origin() } else { s };
        let l = if stable {
            Lifting::stable(&s, 99, 1 << 32)
        } else {
            Lifting::random(&s, 99)
        };
        let collect = |t: usize| {
            let mut cells = Vec::new();
            let st = mixed_cells_in(&s, &l, t, mode, &mut |c| {
                cells.push(c);
                ControlFlow::Continue(())
            })
            .unwrap();
            // the tropical homotopy ran (steps), or the tree search (LPs)
            assert_eq!(st.steps > 0, mode == SearchMode::Tropical, "{}", sys.name);
            (cells, st.steps)
        };
        let (one, steps) = collect(1);
        assert!(!one.is_empty());
        let mut sorted: Vec<_> = one.iter().map(|c| c.pairs.clone()).collect();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), one.len(), "{}: a cell met twice", sys.name);
        for t in [2, 3, 4] {
            let (other, other_steps) = collect(t);
            assert_eq!(one.len(), other.len(), "{} threads {t}", sys.name);
            assert_eq!(steps, other_steps, "{} threads {t}: steps", sys.name);
            for (i, (a, b)) in one.iter().zip(&other).enumerate() {
                assert_eq!(a, b, "{} {mode:?} threads {t}: cell {i} differs", sys.name);
            }
        }
    }
}

/// The float search (certified "infeasible", exact leaves), the exact-LP-only search and a
/// run whose float decisions are partly discarded (so that the exact fallback and the
/// tableau rebuild run) give the same cell sequence, every field equal, and every cell
/// passes the independent check.
#[test]
fn float_exact_and_fallback_agree() {
    let mut cases: Vec<(String, Supports, bool)> = [
        (cyclic(6), false),
        (eco(7), false),
        (noon(4), false),
        (chandra(6), false),
        (katsura(4), true),
    ]
    .into_iter()
    .map(|(sys, st)| (sys.name.clone(), Supports::from_system(&sys).unwrap(), st))
    .collect();
    // mixed supports with larger exponents (a semi-mixed one included)
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for n in [3usize, 4, 5] {
        let eqs: Vec<Vec<Vec<i64>>> = (0..n)
            .map(|_| {
                let mut pts: Vec<Vec<i64>> = Vec::new();
                while pts.len() < 6 {
                    let p: Vec<i64> = (0..n).map(|_| rng.random_range(0..7)).collect();
                    if !pts.contains(&p) {
                        pts.push(p);
                    }
                }
                pts
            })
            .collect();
        let mut eqs2 = eqs.clone();
        eqs2[1] = eqs2[0].clone();
        for e in [eqs, eqs2] {
            let s = Supports::from_exponents(n, e).unwrap();
            cases.push((format!("random n = {n}"), s, false));
        }
    }
    for (name, s, stable) in cases {
        let s = if stable { s.with_origin() } else { s };
        let l = if stable {
            Lifting::stable(&s, 3, 1 << 32)
        } else {
            Lifting::random(&s, 3)
        };
        let run = |mode: SearchMode| {
            let mut cells = Vec::new();
            let st = mixed_cells_in(&s, &l, 1, mode, &mut |c| {
                cells.push(c);
                ControlFlow::Continue(())
            })
            .unwrap();
            (cells, st.undecided)
        };
        let (float, _) = run(SearchMode::Float);
        assert!(!float.is_empty(), "{name}");
        for c in &float {
            check_cell(&s, &l, c);
        }
        assert_eq!(float, run(SearchMode::Exact).0, "{name}: exact");
        let (stress, undecided) = run(SearchMode::StressFallback);
        assert!(undecided > 0, "{name}: the fallback did not run");
        assert_eq!(float, stress, "{name}: fallback");
        // the tropical homotopy (the default) meets the same cells in its own order
        let (trop, _) = run(SearchMode::Tropical);
        for c in &trop {
            check_cell(&s, &l, c);
        }
        assert_eq!(sorted_cells(trop), sorted_cells(float), "{name}: tropical");
    }
}

fn sorted_cells(mut v: Vec<MixedCell>) -> Vec<MixedCell> {
    v.sort_by(|a, b| a.pairs.cmp(&b.pairs));
    v
}

/// Liftings with huge values (up to 2^58: beyond the bounds of the homotopy's `i64` scan
/// for almost every step, so its `i128` scan runs) give the same cells as the float tree
/// search (every field, each passing the independent check) and the mixed volume.
#[test]
fn huge_liftings_take_the_wide_scan() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
    for (sys, want) in [
        (cyclic(6), 156u128),
        (eco(6), 16),
        (noon(4), 73),
        (chandra(5), 16),
    ] {
        let s = Supports::from_system(&sys).unwrap();
        let l = Lifting {
            values: s
                .groups
                .iter()
                .map(|g| g.iter().map(|_| rng.random_range(0..1i64 << 58)).collect())
                .collect(),
            coarse: None,
        };
        let run = |mode| {
            let mut cells = Vec::new();
            let st = mixed_cells_in(&s, &l, 2, mode, &mut |c| {
                check_cell(&s, &l, &c);
                cells.push(c);
                ControlFlow::Continue(())
            })
            .unwrap();
            assert_eq!(st.mixed_volume, want, "{} {mode:?}", sys.name);
            assert_eq!(st.steps > 0, mode == SearchMode::Tropical, "{}", sys.name);
            sorted_cells(cells)
        };
        assert_eq!(
            run(SearchMode::Tropical),
            run(SearchMode::Float),
            "{}",
            sys.name
        );
    }
}

/// The tropical homotopy against the exact-LP search on many small random fully mixed
/// systems, degenerate ones included (0/1 points, shared points between supports, the
/// origin added for a stable lifting): the same cells (every field), each met once, every
/// cell passing the independent check.
#[test]
fn tropical_agrees_with_exact_search() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let mut tried = 0;
    for case in 0..120 {
        let n = 2 + case % 4;
        let top = if case % 3 == 0 { 2 } else { 4 };
        let size = 3 + case % 4;
        let eqs: Vec<Vec<Vec<i64>>> = (0..n)
            .map(|_| {
                let mut pts: Vec<Vec<i64>> = Vec::new();
                for _ in 0..100 {
                    if pts.len() == size {
                        break;
                    }
                    let p: Vec<i64> = (0..n).map(|_| rng.random_range(0..top)).collect();
                    if !pts.contains(&p) {
                        pts.push(p);
                    }
                }
                pts
            })
            .collect();
        if eqs.iter().any(|e| e.len() < 2) {
            continue;
        }
        let Ok(s) = Supports::from_exponents(n, eqs) else {
            continue;
        };
        if s.groups.len() != n {
            continue;
        }
        let stable = case % 5 == 4;
        let s = if stable { s.with_origin() } else { s };
        let l = if stable {
            Lifting::stable(&s, case as u64, 1 << 32)
        } else {
            Lifting::random(&s, case as u64)
        };
        let run = |mode: SearchMode| {
            let mut cells = Vec::new();
            let r = mixed_cells_in(&s, &l, 1, mode, &mut |c| {
                cells.push(c);
                ControlFlow::Continue(())
            });
            r.map(|st| (cells, st))
        };
        let exact = run(SearchMode::Exact);
        let trop = run(SearchMode::Tropical);
        match (exact, trop) {
            (Ok((e, _)), Ok((t, st))) => {
                assert_eq!(st.rejected_leaves, 0, "case {case}");
                for c in &t {
                    check_cell(&s, &l, c);
                }
                let t = sorted_cells(t);
                for w in t.windows(2) {
                    assert_ne!(w[0].pairs, w[1].pairs, "case {case}: a cell met twice");
                }
                assert_eq!(t, sorted_cells(e), "case {case}");
                tried += 1;
            }
            // a stable lifting too small for both, or a tie: both must say so
            (Err(a), Err(b)) => assert_eq!(
                std::mem::discriminant(&a),
                std::mem::discriminant(&b),
                "case {case}: {a} vs {b}"
            ),
            (a, b) => panic!("case {case}: {:?} vs {:?}", a.err(), b.err()),
        }
    }
    assert!(tried > 80, "{tried}");
}

/// Early stop from the consumer.
#[test]
fn stream_can_stop() {
    let s = Supports::from_system(&cyclic(7)).unwrap();
    let l = Lifting::random(&s, 5);
    let mut k = 0;
    let st = mixed_cells(&s, &l, THREADS, &mut |_| {
        k += 1;
        if k == 10 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .unwrap();
    assert!(st.stopped);
    assert_eq!(st.cells, 10);
}

/// Semi-mixed and unmixed systems (grouped supports): dense random systems have the
/// Bézout number, e.g. 3 quadrics in 3 unknowns: 8; type (2,1): two quadrics + one cubic: 12.
#[test]
fn grouped_supports() {
    let dense = |n: usize, d: i32| -> Vec<Vec<i32>> {
        let mut out = vec![vec![0; n]];
        loop {
            let mut next = Vec::new();
            for e in &out {
                for i in 0..n {
                    let mut f = e.clone();
                    f[i] += 1;
                    if f.iter().sum::<i32>() <= d && !out.contains(&f) && !next.contains(&f) {
                        next.push(f);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            out.extend(next);
        }
        out
    };
    let q = dense(3, 2);
    let c = dense(3, 3);
    let s =
        Supports::from_system(&from_supports("q3", &[q.clone(), q.clone(), q.clone()])).unwrap();
    assert_eq!(s.groups.len(), 1);
    assert_eq!(mixed_volume_of(&s, 1, THREADS).unwrap().mixed_volume, 8);
    let s =
        Supports::from_system(&from_supports("q2c", &[q.clone(), c.clone(), q.clone()])).unwrap();
    assert_eq!(s.groups.len(), 2);
    assert_eq!(s.equations[0], vec![0, 2]);
    let l = Lifting::random(&s, 3);
    let st = mixed_cells(&s, &l, THREADS, &mut |cell| {
        check_cell(&s, &l, &cell);
        // the two equations of the quadric group share the base point
        assert_eq!(cell.pairs[0][0], cell.pairs[2][0]);
        assert_ne!(cell.pairs[0][1], cell.pairs[2][1]);
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(st.mixed_volume, 12);
    // dense quartics in 4 unknowns: 256
    let d4 = dense(4, 4);
    let s = Supports::from_system(&from_supports(
        "d4",
        &[d4.clone(), d4.clone(), d4.clone(), d4],
    ))
    .unwrap();
    assert_eq!(mixed_volume_of(&s, 2, THREADS).unwrap().mixed_volume, 256);
}

// ---- n = 2: MV(P, Q) = area(P + Q) − area(P) − area(Q), exact lattice areas ----

fn hull2(mut p: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    p.sort();
    p.dedup();
    if p.len() < 3 {
        return p;
    }
    let cross = |o: (i64, i64), a: (i64, i64), b: (i64, i64)| {
        (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
    };
    let mut lower: Vec<(i64, i64)> = Vec::new();
    for &q in &p {
        while lower.len() >= 2 && cross(lower[lower.len() - 2], lower[lower.len() - 1], q) <= 0 {
            lower.pop();
        }
        lower.push(q);
    }
    let mut upper: Vec<(i64, i64)> = Vec::new();
    for &q in p.iter().rev() {
        while upper.len() >= 2 && cross(upper[upper.len() - 2], upper[upper.len() - 1], q) <= 0 {
            upper.pop();
        }
        upper.push(q);
    }
    lower.pop();
    upper.pop();
    let mut h = lower;
    h.extend(upper);
    h
}

/// Twice the area of the convex hull.
fn area2(p: &[(i64, i64)]) -> i64 {
    let h = hull2(p.to_vec());
    if h.len() < 3 {
        return 0;
    }
    let mut s = 0;
    for i in 0..h.len() {
        let (a, b) = (h[i], h[(i + 1) % h.len()]);
        s += a.0 * b.1 - a.1 * b.0;
    }
    s.abs()
}

#[test]
fn random_planar_against_area_formula() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2024);
    for trial in 0..150 {
        let mut sup = Vec::new();
        for _ in 0..2 {
            let m = rng.random_range(2..7);
            let mut pts: Vec<(i64, i64)> = Vec::new();
            while pts.len() < m {
                let p = (rng.random_range(0..6), rng.random_range(0..6));
                if !pts.contains(&p) {
                    pts.push(p);
                }
            }
            sup.push(pts);
        }
        let sum: Vec<(i64, i64)> = sup[0]
            .iter()
            .flat_map(|a| sup[1].iter().map(move |b| (a.0 + b.0, a.1 + b.1)))
            .collect();
        let expect = (area2(&sum) - area2(&sup[0]) - area2(&sup[1])) / 2;
        let exps: Vec<Vec<Vec<i64>>> = sup
            .iter()
            .map(|s| s.iter().map(|&(a, b)| vec![a, b]).collect())
            .collect();
        let s = Supports::from_exponents(2, exps).unwrap();
        let got = mixed_volume_of(&s, trial, 1).unwrap().mixed_volume;
        assert_eq!(got as i64, expect, "trial {trial}: {sup:?}");
    }
}

/// Random sparse systems (Python `random.Random(seed)`, seeds 1–6, exponents in `0..=d`)
/// whose mixed volumes were computed by gfan 0.6.2 (Debian package `gfan`,
/// `gfan _mixedvolume` reading `Q[x0,…]{…}` with the same supports, coefficients 1) on
/// 2026-11-22 — recorded oracle values, reproduced by the script in docs/mixed-cells.md.
#[test]
fn gfan_recorded() {
    for (k, (sup, expect)) in GFAN.iter().enumerate() {
        let n = sup.len();
        let exps: Vec<Vec<Vec<i64>>> = sup
            .iter()
            .map(|pts| pts.iter().map(|p| p.to_vec()).collect())
            .collect();
        let s = Supports::from_exponents(n, exps).unwrap();
        let got = mixed_volume_of(&s, 7 + k as u64, THREADS)
            .unwrap()
            .mixed_volume;
        assert_eq!(got, *expect, "case {}", k + 1);
    }
}

type Sup = &'static [&'static [&'static [i64]]];
/// (supports, `gfan _mixedvolume`)
const GFAN: &[(Sup, u128)] = &[
    (
        &[
            &[&[1, 0, 2], &[0, 3, 3], &[3, 3, 1], &[0, 3, 0], &[3, 3, 0]],
            &[&[3, 2, 1], &[0, 2, 0], &[0, 0, 0], &[3, 1, 3], &[0, 1, 3]],
            &[&[3, 1, 2], &[1, 1, 3], &[2, 0, 3], &[0, 1, 2], &[0, 2, 3]],
        ],
        69,
    ),
    (
        &[
            &[
                &[0, 0, 0, 1],
                &[0, 2, 2, 1],
                &[1, 2, 0, 2],
                &[0, 2, 2, 0],
                &[1, 2, 1, 2],
            ],
            &[
                &[2, 1, 2, 1],
                &[2, 1, 0, 0],
                &[1, 1, 1, 1],
                &[1, 2, 0, 2],
                &[0, 0, 0, 0],
            ],
            &[
                &[0, 1, 0, 0],
                &[2, 2, 1, 2],
                &[2, 2, 0, 1],
                &[1, 2, 2, 1],
                &[2, 1, 1, 1],
            ],
            &[
                &[0, 1, 2, 2],
                &[1, 2, 2, 0],
                &[1, 1, 1, 2],
                &[2, 1, 2, 1],
                &[1, 1, 2, 2],
            ],
        ],
        80,
    ),
    (
        &[
            &[
                &[0, 2, 2, 0, 1],
                &[2, 1, 2, 2, 0],
                &[2, 0, 1, 1, 2],
                &[0, 0, 2, 1, 2],
            ],
            &[
                &[2, 1, 1, 2, 0],
                &[0, 2, 0, 2, 1],
                &[2, 0, 2, 0, 0],
                &[2, 0, 1, 0, 1],
            ],
            &[
                &[1, 2, 2, 1, 2],
                &[1, 1, 2, 2, 1],
                &[0, 1, 0, 0, 0],
                &[1, 0, 1, 2, 1],
            ],
            &[
                &[2, 1, 1, 2, 1],
                &[2, 1, 2, 2, 1],
                &[2, 0, 1, 2, 0],
                &[1, 2, 2, 2, 0],
            ],
            &[
                &[2, 1, 2, 2, 2],
                &[0, 2, 2, 0, 2],
                &[2, 1, 1, 0, 0],
                &[1, 2, 1, 0, 1],
            ],
        ],
        307,
    ),
    (
        &[
            &[
                &[0, 1, 0, 2, 1, 1],
                &[0, 0, 0, 0, 1, 2],
                &[1, 0, 0, 2, 2, 1],
                &[1, 0, 0, 1, 0, 0],
            ],
            &[
                &[2, 1, 1, 0, 0, 1],
                &[1, 2, 2, 1, 0, 2],
                &[1, 2, 1, 2, 0, 0],
                &[0, 1, 1, 0, 2, 1],
            ],
            &[
                &[0, 1, 2, 2, 1, 2],
                &[0, 1, 1, 2, 1, 1],
                &[1, 0, 0, 1, 1, 0],
                &[0, 0, 1, 2, 1, 2],
            ],
            &[
                &[2, 2, 1, 2, 1, 0],
                &[2, 0, 0, 1, 0, 2],
                &[2, 1, 1, 0, 1, 1],
                &[2, 2, 1, 2, 2, 0],
            ],
            &[
                &[1, 0, 0, 2, 0, 1],
                &[2, 2, 0, 0, 1, 0],
                &[1, 1, 0, 0, 1, 2],
                &[0, 1, 2, 2, 1, 0],
            ],
            &[
                &[1, 1, 1, 0, 2, 1],
                &[2, 2, 0, 1, 2, 0],
                &[1, 1, 0, 1, 1, 2],
                &[0, 1, 2, 0, 1, 0],
            ],
        ],
        794,
    ),
    (
        &[
            &[
                &[2, 2, 0, 3],
                &[1, 0, 1, 0],
                &[2, 3, 1, 3],
                &[0, 1, 0, 1],
                &[3, 2, 1, 3],
                &[1, 0, 1, 3],
            ],
            &[
                &[1, 1, 0, 0],
                &[1, 1, 1, 1],
                &[2, 2, 1, 1],
                &[1, 1, 3, 2],
                &[0, 2, 3, 1],
                &[1, 2, 0, 2],
            ],
            &[
                &[2, 0, 2, 0],
                &[2, 2, 2, 3],
                &[2, 1, 3, 3],
                &[1, 0, 2, 0],
                &[2, 3, 0, 3],
                &[0, 1, 1, 0],
            ],
            &[
                &[1, 3, 2, 2],
                &[2, 3, 0, 2],
                &[2, 0, 3, 0],
                &[1, 2, 2, 1],
                &[2, 2, 0, 2],
                &[2, 2, 1, 0],
            ],
        ],
        242,
    ),
    (
        &[
            &[
                &[2, 0, 1, 1, 0, 0, 0],
                &[2, 2, 1, 2, 1, 1, 0],
                &[1, 1, 0, 2, 1, 2, 2],
            ],
            &[
                &[2, 0, 0, 2, 2, 2, 2],
                &[1, 2, 2, 2, 0, 1, 1],
                &[0, 1, 1, 1, 1, 2, 0],
            ],
            &[
                &[0, 2, 2, 1, 0, 0, 2],
                &[0, 2, 1, 1, 0, 2, 2],
                &[2, 2, 2, 0, 2, 1, 0],
            ],
            &[
                &[2, 1, 1, 1, 2, 0, 0],
                &[2, 2, 2, 0, 0, 2, 2],
                &[1, 1, 2, 0, 1, 1, 0],
            ],
            &[
                &[0, 2, 0, 2, 2, 0, 0],
                &[0, 0, 2, 1, 2, 2, 2],
                &[2, 1, 1, 1, 2, 1, 1],
            ],
            &[
                &[0, 2, 1, 0, 0, 1, 2],
                &[2, 1, 0, 1, 0, 0, 2],
                &[2, 1, 1, 1, 0, 2, 1],
            ],
            &[
                &[1, 1, 2, 1, 0, 0, 2],
                &[2, 1, 1, 1, 2, 0, 0],
                &[0, 2, 0, 1, 2, 1, 0],
            ],
        ],
        2469,
    ),
];

/// Prints enumeration statistics (run with --ignored --nocapture).
#[test]
#[ignore]
fn print_stats() {
    for sys in [cyclic(8), eco(10), chandra(10), noon(7)] {
        let s = Supports::from_system(&sys).unwrap();
        let st = mixed_volume_of(&s, 1, 1).unwrap();
        println!("{} {:?}", sys.name, st);
    }
}

/// The benchmark table (run in release: `cargo test --release --test mixed_volume --
/// bench_table --ignored --nocapture`; sizes via BENCH_CYCLIC / BENCH_CHANDRA / BENCH_NOON /
/// BENCH_ECO, e.g. "8,9"; BENCH_THREADS).
#[test]
#[ignore]
fn bench_table() {
    let parse = |var: &str, default: &str| -> Vec<usize> {
        std::env::var(var)
            .unwrap_or_else(|_| default.into())
            .split(',')
            .filter_map(|x| x.trim().parse().ok())
            .collect()
    };
    let threads: usize = std::env::var("BENCH_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(1);
    let mut systems: Vec<System> = parse("BENCH_CYCLIC", "8,9")
        .into_iter()
        .map(cyclic)
        .collect();
    systems.extend(parse("BENCH_CHANDRA", "10,11,12").into_iter().map(chandra));
    systems.extend(parse("BENCH_NOON", "").into_iter().map(noon));
    systems.extend(parse("BENCH_ECO", "").into_iter().map(eco));
    pathtrack::start::polyhedral::bench_cells(&systems, 1, threads).unwrap();
}

/// A non-generic lifting (all zeros: every point ties) is reported by `mixed_cells`, never
/// guessed (the counting wrappers resolve ties instead: see
/// `ties_are_resolved_by_the_perturbation`), and the public wrappers give the right counts.
#[test]
fn non_generic_lifting_is_detected() {
    use pathtrack::start::polyhedral::CellError;
    let s = Supports::from_system(&cyclic(5)).unwrap();
    let zero = Lifting {
        values: s.groups.iter().map(|g| vec![0; g.len()]).collect(),
        coarse: None,
    };
    let r = mixed_cells(&s, &zero, 1, &mut |_| ControlFlow::Continue(()));
    assert!(matches!(r, Err(CellError::NonGeneric(_))), "{r:?}");
    assert_eq!(
        pathtrack::start::polyhedral::mixed_volume(&cyclic(5), 3).unwrap(),
        70
    );
    assert_eq!(
        pathtrack::start::polyhedral::stable_mixed_volume(&katsura(3), 3).unwrap(),
        8
    );
}

/// Liftings full of exact ties (all zero, values in {0, 1}, in {0, 1, 2, 3}): the strict
/// stream reports them (reimer-4's zero lifting has one cell and no tie), the perturbed one (`ω + ε^rank`, what `mixed_volume_of` uses)
/// resolves them exactly and its volumes sum to the mixed volume of a random lifting's
/// strict stream; its cells are on lower faces of `ω` (other points may tie), have the
/// right volume, are met once, and come in the same sequence on 1 and 3 threads. Also a
/// stable lifting with a zero generic part (`ω = coarse`): the stable mixed volume.
#[test]
fn ties_are_resolved_by_the_perturbation() {
    use pathtrack::start::polyhedral::CellError;
    for sys in [
        cyclic(5),
        cyclic(6),
        cyclic(7),
        noon(5),
        eco(7),
        katsura(5),
        chandra(6),
        reimer(4),
    ] {
        let s = Supports::from_system(&sys).unwrap();
        let reference = mixed_cells(&s, &Lifting::random(&s, 5), 1, &mut |_| {
            ControlFlow::Continue(())
        })
        .unwrap()
        .mixed_volume;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        for top in [0i64, 1, 3] {
            let l = Lifting {
                values: s
                    .groups
                    .iter()
                    .map(|g| g.iter().map(|_| rng.random_range(0..=top)).collect())
                    .collect(),
                coarse: None,
            };
            // strict: an error, or (no tie met) the same volume
            let strict = mixed_cells(&s, &l, 1, &mut |_| ControlFlow::Continue(()));
            let tied = match &strict {
                Err(CellError::NonGeneric(_)) => true,
                Ok(st) if st.mixed_volume == reference => false,
                r => panic!("{} top {top}: {r:?}", sys.name),
            };
            let mut runs = Vec::new();
            for threads in [1, 3] {
                let mut cells = Vec::new();
                let st = mixed_cells_perturbed(&s, &l, threads, &mut |c| {
                    check_cell(&s, &l, &c);
                    cells.push(c);
                    ControlFlow::Continue(())
                })
                .unwrap();
                assert_eq!(st.mixed_volume, reference, "{} top {top}", sys.name);
                assert_eq!(st.ties > 0, tied, "{} top {top}", sys.name);
                assert_eq!(st.rejected_leaves, 0);
                runs.push(cells);
            }
            assert_eq!(runs[0], runs[1], "{} top {top}: 1 vs 3 threads", sys.name);
            let mut pairs: Vec<_> = runs[0].iter().map(|c| c.pairs.clone()).collect();
            pairs.sort();
            pairs.dedup();
            assert_eq!(pairs.len(), runs[0].len(), "{}: a cell met twice", sys.name);
        }
    }
    // stable lifting without a generic part: only the perturbation refines it
    for (sys, want) in [(katsura(4), 16u128), (noon(4), 73), (cyclic(5), 70)] {
        let s = Supports::from_system(&sys).unwrap().with_origin();
        let mut l = Lifting::stable(&s, 1, 1);
        for (vg, cg) in l.values.iter_mut().zip(l.coarse.as_ref().unwrap()) {
            vg.clone_from(cg);
        }
        let st = mixed_cells_perturbed(&s, &l, 2, &mut |_| ControlFlow::Continue(())).unwrap();
        assert_eq!(st.stable_volume, want, "{}", sys.name);
        assert!(st.ties > 0, "{}", sys.name);
    }
}

/// Bad input is an error naming the place, not a panic.
#[test]
fn bad_input_errors() {
    let e = Supports::from_exponents(2, vec![vec![vec![1, 0]], vec![vec![0, 1, 2]]]).unwrap_err();
    assert!(e.to_string().contains("equation 2, term 1"), "{e}");
    let e = Supports::from_exponents(2, vec![vec![vec![1, 0]]]).unwrap_err();
    assert!(e.to_string().contains("2 variables"), "{e}");
    let e = Supports::from_exponents(1, vec![vec![]]).unwrap_err();
    assert!(e.to_string().contains("equation 1"), "{e}");
    let s = Supports::from_exponents(
        2,
        vec![vec![vec![1, 0], vec![0, 0]], vec![vec![0, 1], vec![0, 0]]],
    )
    .unwrap();
    let wrong = Lifting {
        values: vec![vec![1]],
        coarse: None,
    };
    assert!(mixed_cells(&s, &wrong, 1, &mut |_| ControlFlow::Continue(())).is_err());
    // a monomial equation: no cells, mixed volume 0
    let s =
        Supports::from_exponents(2, vec![vec![vec![1, 0]], vec![vec![0, 1], vec![0, 0]]]).unwrap();
    assert_eq!(mixed_volume_of(&s, 1, 1).unwrap().mixed_volume, 0);
}
