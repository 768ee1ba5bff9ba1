//! Binomial start systems `x^V = b` in log coordinates.

mod common_families;
use num_complex::Complex64;
use pathtrack::start::polyhedral::{
    binomial_solutions, exact, for_each_binomial_solution, mixed_cells, Lifting, Supports,
};
use rand::{Rng, SeedableRng};
use std::f64::consts::PI;
use std::ops::ControlFlow;

/// Checks `V z − log b ∈ 2πi Z^n` (real part ~0, imaginary part an integer multiple of
/// 2π after rounding) and pairwise distinctness of `x = exp(z)`.
fn check(v: &[Vec<i64>], log_b: &[Complex64], sols: &[Vec<Complex64>]) {
    let n = v.len();
    for z in sols {
        for k in 0..n {
            let r: Complex64 = (0..n).map(|j| z[j] * v[k][j] as f64).sum::<Complex64>() - log_b[k];
            let scale = 1.0 + v[k].iter().map(|&a| a.unsigned_abs() as f64).sum::<f64>() * 4.0;
            assert!(r.re.abs() < 1e-12 * scale, "real residual {}", r.re);
            let m = (r.im / (2.0 * PI)).round();
            assert!(
                (r.im - 2.0 * PI * m).abs() < 1e-12 * scale,
                "imaginary residual {} not a multiple of 2π",
                r.im
            );
        }
    }
    for i in 0..sols.len() {
        for j in 0..i {
            // distinct modulo 2πi Z^n: some coordinate differs in modulus or in angle
            let differs = (0..n).any(|k| {
                let d = sols[i][k] - sols[j][k];
                let dim = (d.im / (2.0 * PI)).round();
                d.re.abs() > 1e-9 || (d.im - 2.0 * PI * dim).abs() > 1e-9
            });
            assert!(differs, "solutions {i} and {j} coincide");
        }
    }
}

#[test]
fn random_binomials() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    let mut tried = 0;
    while tried < 300 {
        let n = rng.random_range(1..=5);
        let v: Vec<Vec<i64>> = (0..n)
            .map(|_| (0..n).map(|_| rng.random_range(-4..=4)).collect())
            .collect();
        let d = exact::abs_det(&v).unwrap();
        if d == 0 || d > 50 {
            continue;
        }
        tried += 1;
        let log_b: Vec<Complex64> = (0..n)
            .map(|_| Complex64::new(rng.random_range(-2.0..2.0), rng.random_range(-PI..PI)))
            .collect();
        let sols = binomial_solutions(&v, &log_b).unwrap();
        assert_eq!(sols.len() as u128, d, "count must be |det V|");
        check(&v, &log_b, &sols);
    }
}

#[test]
fn streaming_can_stop_and_errors() {
    let v = vec![vec![3, 1], vec![0, 4]];
    let lb = vec![Complex64::new(0.1, 0.2), Complex64::new(-0.3, 1.0)];
    let mut k = 0;
    for_each_binomial_solution(&v, &lb, &mut |_| {
        k += 1;
        if k == 5 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .unwrap();
    assert_eq!(k, 5);
    assert_eq!(binomial_solutions(&v, &lb).unwrap().len(), 12);
    // singular, wrong shapes, non-finite
    assert!(binomial_solutions(&[vec![1, 2], vec![2, 4]], &lb).is_err());
    assert!(binomial_solutions(&[vec![1, 2]], &lb).is_err());
    let bad = vec![Complex64::new(f64::NEG_INFINITY, 0.0), lb[1]];
    assert!(binomial_solutions(&v, &bad).is_err());
}

/// Start points of every cell of cyclic-5 with random coefficients: `Σ |det| = 70`
/// solutions, each solving its cell's binomial system `c0 x^a0 + c1 x^a1 = 0`.
#[test]
fn cells_to_start_points() {
    let sys = common_families::cyclic(5);
    let s = Supports::from_system(&sys).unwrap();
    let l = Lifting::random(&s, 4);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let coeffs: Vec<Vec<Complex64>> = s
        .groups
        .iter()
        .map(|g| {
            g.iter()
                .map(|_| Complex64::from_polar(1.0, rng.random_range(0.0..2.0 * PI)))
                .collect()
        })
        .collect();
    let mut total = 0;
    mixed_cells(&s, &l, 1, &mut |cell| {
        let n = s.n;
        let mut v = Vec::new();
        let mut lb = Vec::new();
        for e in 0..n {
            let g = s.group_of[e];
            let [a0, a1] = cell.pairs[e];
            v.push(
                s.groups[g][a1]
                    .iter()
                    .zip(&s.groups[g][a0])
                    .map(|(x, y)| x - y)
                    .collect::<Vec<i64>>(),
            );
            lb.push((-coeffs[g][a0] / coeffs[g][a1]).ln());
        }
        let sols = binomial_solutions(&v, &lb).unwrap();
        assert_eq!(sols.len() as u128, cell.volume);
        for z in &sols {
            let x: Vec<Complex64> = z.iter().map(|c| c.exp()).collect();
            for e in 0..n {
                let g = s.group_of[e];
                let [a0, a1] = cell.pairs[e];
                let mono = |a: &[i64]| -> Complex64 {
                    a.iter().zip(&x).map(|(&k, xi)| xi.powi(k as i32)).product()
                };
                let r =
                    coeffs[g][a0] * mono(&s.groups[g][a0]) + coeffs[g][a1] * mono(&s.groups[g][a1]);
                let scale = mono(&s.groups[g][a0]).norm();
                assert!(r.norm() < 1e-10 * scale.max(1.0), "residual {}", r.norm());
            }
        }
        total += sols.len();
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(total, 70);
}

// ---- modular determinant and Hermite form (start::polyhedral::modular) ------------------

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};
use pathtrack::start::polyhedral::binomial::{hermite, hermite_euclid};
use pathtrack::start::polyhedral::modular::{det_modular, hermite_mod, hermite_modular};

/// Reference: row Hermite normal form by Euclidean row operations over `BigInt` (no
/// overflow), the same normalization as `hermite` (positive diagonal, entries above it in
/// `[0, H_kk)`).
#[allow(clippy::needless_range_loop)]
fn hnf_bigint(v: &[Vec<i64>]) -> Vec<Vec<BigInt>> {
    let n = v.len();
    let mut h: Vec<Vec<BigInt>> = v
        .iter()
        .map(|r| r.iter().map(|&x| BigInt::from(x)).collect())
        .collect();
    for c in 0..n {
        loop {
            let p = (c..n)
                .filter(|&i| !h[i][c].is_zero())
                .min_by_key(|&i| h[i][c].abs())
                .expect("singular");
            h.swap(p, c);
            let mut done = true;
            for i in c + 1..n {
                if !h[i][c].is_zero() {
                    let q = h[i][c].div_floor(&h[c][c]);
                    for j in 0..n {
                        let t = &q * &h[c][j];
                        h[i][j] -= t;
                    }
                    done &= h[i][c].is_zero();
                }
            }
            if done {
                break;
            }
        }
        if h[c][c].is_negative() {
            for x in h[c].iter_mut() {
                *x = -x.clone();
            }
        }
    }
    for c in 1..n {
        for i in 0..c {
            let q = h[i][c].div_floor(&h[c][c]);
            for j in 0..n {
                let t = &q * &h[c][j];
                h[i][j] -= t;
            }
        }
    }
    h
}

/// Random n × n integer matrix with entries of up to `bits` bits; some made singular
/// (a zero row, a repeated row, a row that is a combination of two others).
fn random_int(rng: &mut rand_chacha::ChaCha8Rng, n: usize, bits: u32) -> Vec<Vec<i64>> {
    let lim = (1i64 << bits) - 1;
    let mut v: Vec<Vec<i64>> = (0..n)
        .map(|_| (0..n).map(|_| rng.random_range(-lim..=lim)).collect())
        .collect();
    if n >= 3 && rng.random_bool(0.25) {
        let (i, j, k) = (0, 1, 2);
        match rng.random_range(0..3) {
            0 => v[i] = vec![0; n],
            1 => v[i] = v[j].clone(),
            _ => {
                // v_i = v_j − v_k (entries stay below 2^(bits+1))
                v[i] = (0..n).map(|c| v[j][c] - v[k][c]).collect();
            }
        }
        let p = rng.random_range(0..n);
        v.swap(i, p);
    }
    v
}

#[test]
fn modular_det_equals_bareiss() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(31);
    let (mut zero, mut neg, mut huge) = (0, 0, 0);
    let two64 = BigInt::one() << 64;
    for t in 0..400 {
        let n = rng.random_range(1..=20);
        let bits = [1, 3, 12, 30, 40][t % 5];
        let v = random_int(&mut rng, n, bits);
        let want = exact::det::<BigInt>(&v).unwrap();
        let got = det_modular(&v);
        assert_eq!(got, want, "n={n} bits={bits}: {v:?}");
        zero += want.is_zero() as usize;
        neg += want.is_negative() as usize;
        huge += (want.abs() > two64) as usize;
        if n <= 12 && !want.is_zero() {
            // abs_det's overflow fallback is the modular determinant.
            use num_traits::ToPrimitive;
            assert_eq!(exact::abs_det(&v), want.abs().to_u128());
        }
    }
    assert!(zero > 20 && neg > 50 && huge > 50, "{zero} {neg} {huge}");
    // Extremes: entries ±(2^62), n = 20 (|det| ≈ 2^1270 bound), and a singular one.
    let v: Vec<Vec<i64>> = (0..20)
        .map(|i| {
            (0..20)
                .map(|j| {
                    if (i * 7 + j * 3) % 5 == 0 {
                        -(1i64 << 62)
                    } else {
                        (1i64 << 62) - (i * j) as i64
                    }
                })
                .collect()
        })
        .collect();
    assert_eq!(det_modular(&v), exact::det::<BigInt>(&v).unwrap());
    let mut s = v.clone();
    s[19] = s[3].clone();
    assert!(det_modular(&s).is_zero());
    assert_eq!(det_modular(&[]), BigInt::one());
}

/// `V = W·T`: `W` unimodular (random elementary row operations with multipliers up to
/// `mult`), `T` upper triangular with diagonal entries 1..=3 and entries above it up to 50:
/// large entries, small `|det V| = Π T_kk`.
fn unimodular_times_triangular(
    rng: &mut rand_chacha::ChaCha8Rng,
    n: usize,
    ops: usize,
    mult: i64,
) -> Vec<Vec<i64>> {
    let mut v: Vec<Vec<i64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| match j.cmp(&i) {
                    std::cmp::Ordering::Less => 0,
                    std::cmp::Ordering::Equal => rng.random_range(1..=3),
                    std::cmp::Ordering::Greater => rng.random_range(-50..=50),
                })
                .collect()
        })
        .collect();
    for _ in 0..ops {
        let i = rng.random_range(0..n);
        let j = (i + rng.random_range(1..n)) % n;
        let c = rng.random_range(-mult..=mult);
        let row: Option<Vec<i64>> = (0..n)
            .map(|k| v[i][k].checked_add(c.checked_mul(v[j][k])?))
            .collect();
        match row {
            Some(r) if r.iter().all(|x| x.unsigned_abs() < 1 << 60) => v[i] = r,
            _ => {}
        }
        if rng.random_bool(0.2) {
            v.swap(i, j);
        }
    }
    v
}

fn mul_uv(u: &[Vec<i128>], v: &[Vec<i64>]) -> Vec<Vec<BigInt>> {
    let n = v.len();
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    (0..n)
                        .map(|k| BigInt::from(u[i][k]) * BigInt::from(v[k][j]))
                        .sum()
                })
                .collect()
        })
        .collect()
}

#[test]
fn modular_hermite_equals_euclidean_hermite() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(32);
    let (mut same, mut overflowed) = (0, 0);
    for t in 0..600 {
        let v = if t % 2 == 0 {
            let n = rng.random_range(1..=8);
            random_int(&mut rng, n, [2, 4, 8][t % 3])
        } else {
            let n = rng.random_range(2..=12);
            let ops = rng.random_range(n..=6 * n);
            unimodular_times_triangular(&mut rng, n, ops, [3, 40, 1 << 12][t % 3])
        };
        let det = exact::det::<BigInt>(&v).unwrap();
        if det.is_zero() {
            assert!(hermite_modular(&v).is_err(), "singular V accepted");
            continue;
        }
        let href = hnf_bigint(&v);
        // H modulo D equals the reference in any case (BigInt route for D ≥ 2^63 included).
        assert_eq!(hermite_mod(&v, &det.abs()), href, "H mod D: {v:?}");
        let Ok((um, hm)) = hermite_modular(&v) else {
            // U beyond i128: nothing to compare with the i128 routes.
            continue;
        };
        let hm_big: Vec<Vec<BigInt>> = hm
            .iter()
            .map(|r| r.iter().map(|&x| BigInt::from(x)).collect())
            .collect();
        assert_eq!(hm_big, href, "modular H: {v:?}");
        assert_eq!(mul_uv(&um, &v), href, "U·V = H: {v:?}");
        match hermite_euclid(&v) {
            Ok((ue, he)) => {
                assert_eq!((&ue, &he), (&um, &hm), "euclid vs modular: {v:?}");
                same += 1;
            }
            Err(_) => {
                // Plain elimination overflows i128; `hermite` falls back to the modular route.
                assert_eq!(hermite(&v).unwrap(), (um.clone(), hm.clone()));
                overflowed += 1;
            }
        }
    }
    eprintln!(
        "equal to the i128 Euclidean form: {same}; i128 overflow, modular only: {overflowed}"
    );
    assert!(same > 200 && overflowed > 10, "{same} {overflowed}");
}

/// Binomial systems whose Hermite form overflows `i128` under plain elimination (entries
/// of a few million, n = 8…12: the smallest sizes where it happens) are solved through the
/// modular route: `|det V|` solutions with `V z − log b ∈ 2πi Z^n` up to rounding
/// (relative to `Σ_j |V_kj|·(|z_j| + 4)`).
#[test]
fn binomial_solutions_through_the_modular_route() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(33);
    let mut done = 0;
    for _ in 0..2000 {
        let n = rng.random_range(8..=12);
        let v = unimodular_times_triangular(&mut rng, n, 6 * n, 10);
        let d = exact::abs_det(&v).unwrap();
        if d == 0 || d > 3000 || hermite_euclid(&v).is_ok() {
            continue;
        }
        assert!(hermite(&v).is_ok(), "modular route failed: {v:?}");
        let log_b: Vec<Complex64> = (0..n)
            .map(|_| Complex64::new(rng.random_range(-2.0..2.0), rng.random_range(-PI..PI)))
            .collect();
        let sols = binomial_solutions(&v, &log_b).unwrap();
        assert_eq!(sols.len() as u128, d);
        for z in &sols {
            for k in 0..n {
                let r: Complex64 =
                    (0..n).map(|j| z[j] * v[k][j] as f64).sum::<Complex64>() - log_b[k];
                let scale: f64 = 1.0
                    + (0..n)
                        .map(|j| (z[j].norm() + 4.0) * v[k][j].unsigned_abs() as f64)
                        .sum::<f64>();
                assert!(
                    r.re.abs() < 1e-12 * scale,
                    "real residual {} (scale {scale:e})",
                    r.re
                );
                let m = (r.im / (2.0 * PI)).round();
                assert!(
                    (r.im - 2.0 * PI * m).abs() < 1e-12 * scale,
                    "imaginary residual {} (scale {scale:e})",
                    r.im
                );
            }
        }
        done += 1;
        if done == 8 {
            break;
        }
    }
    assert!(done >= 3, "only {done} overflowing cases");
}

/// Timing (ignored): Euclidean `i128` Hermite form against the modular route on matrices
/// of mixed-cell size (n = 5…12, entries in [−3, 3], |det| ≥ 1).
#[test]
#[ignore]
fn hermite_timing() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(35);
    for n in [5usize, 8, 12] {
        let mut ms = Vec::new();
        while ms.len() < 200 {
            let v = random_int(&mut rng, n, 2);
            if exact::abs_det(&v).unwrap_or(0) != 0 {
                ms.push(v);
            }
        }
        let t = std::time::Instant::now();
        for v in &ms {
            std::hint::black_box(hermite_euclid(v).unwrap());
        }
        let te = t.elapsed().as_secs_f64() / ms.len() as f64;
        let t = std::time::Instant::now();
        for v in &ms {
            std::hint::black_box(hermite_modular(v).unwrap());
        }
        let tm = t.elapsed().as_secs_f64() / ms.len() as f64;
        let t = std::time::Instant::now();
        for v in &ms {
            std::hint::black_box(exact::det::<i128>(v).unwrap());
        }
        let tb = t.elapsed().as_secs_f64() / ms.len() as f64;
        let t = std::time::Instant::now();
        for v in &ms {
            std::hint::black_box(det_modular(v));
        }
        let td = t.elapsed().as_secs_f64() / ms.len() as f64;
        eprintln!(
            "n = {n}: HNF euclid {:.1} us, modular {:.1} us; det Bareiss i128 {:.2} us, modular {:.1} us",
            te * 1e6,
            tm * 1e6,
            tb * 1e6,
            td * 1e6
        );
    }
}
