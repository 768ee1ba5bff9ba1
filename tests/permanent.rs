//! Permanent engine against independent references: brute force over permutations, exact
//! integer arithmetic, the all-ones matrix (n!), and the floating-point error bound
//! derived in docs/permanent.md:
//!
//! |computed − perm(A)| ≤ (n·(K+1) + N)·u·P          (plain, real)
//! |computed − perm(A)| ≤ (n·(K+1) + 4)·u·P           (Kahan / double-double, real)
//! complex: replace n·(K+1) by n·K + 2√2·n and N by √2·N (and 4 by 4√2),
//!
//! with u = 2^−53, N = 2^(n−1) terms, L the chunk length, K = 2n + L, and
//! P = Π_i Σ_j |a_ij| (to first order in u; we allow 1% for the O(u²) terms).

use nalgebra::DMatrix;
use num_bigint::BigInt;
use num_complex::Complex64;
use num_traits::{One, ToPrimitive, Zero};
use pathtrack::linalg::permanent::{
    permanent_brute, permanent_c64, permanent_exact, permanent_exact_gaussian,
    permanent_exact_with, permanent_f64, Accumulation, Algorithm, ExactMethod, ExactOptions,
    Kernel, PermOptions,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const U: f64 = 1.0 / 9_007_199_254_740_992.0; // 2^-53

fn factorial(n: u64) -> BigInt {
    (1..=n)
        .map(BigInt::from)
        .product::<BigInt>()
        .max(BigInt::one())
}

/// Chunk length used by the engine for n and a chunk request (mirrors the documented plan).
fn chunk_len(n: usize, chunks: usize) -> f64 {
    let total = 1u64 << (n - 1);
    let count = if chunks == 0 {
        (total >> 12).clamp(1, 256)
    } else {
        (1u64 << (63 - (chunks as u64).leading_zeros())).min(total)
    };
    (total / count) as f64
}

fn bound(n: usize, p: f64, opts: &PermOptions, complex: bool) -> f64 {
    let nf = n as f64;
    let big_n = (1u64 << (n - 1)) as f64;
    let k = 2.0 * nf + chunk_len(n, opts.chunks);
    let s2 = std::f64::consts::SQRT_2;
    let compensated = opts.accumulation != Accumulation::Plain;
    let c = match (complex, compensated) {
        (false, false) => nf * (k + 1.0) + big_n,
        (false, true) => nf * (k + 1.0) + 4.0,
        (true, false) => nf * k + 2.0 * s2 * nf + s2 * big_n,
        (true, true) => nf * k + 2.0 * s2 * nf + 4.0 * s2,
    };
    1.01 * c * U * p
}

fn row_abs_product(a: &DMatrix<f64>) -> f64 {
    a.row_iter()
        .map(|r| r.iter().map(|x| x.abs()).sum::<f64>())
        .product()
}

fn row_abs_product_c(a: &DMatrix<Complex64>) -> f64 {
    a.row_iter()
        .map(|r| r.iter().map(|x| x.norm()).sum::<f64>())
        .product()
}

fn all_float_options() -> Vec<PermOptions> {
    let mut v = Vec::new();
    for algorithm in [Algorithm::Glynn, Algorithm::Ryser] {
        for accumulation in [
            Accumulation::Plain,
            Accumulation::Kahan,
            Accumulation::DoubleDouble,
        ] {
            for (threads, chunks, kernel) in [
                (1, 0, Kernel::Auto),
                (2, 4, Kernel::Block4),
                (1, 1, Kernel::Simple),
                (2, 2, Kernel::Block8),
                (1, 0, Kernel::Block4),
            ] {
                v.push(PermOptions {
                    algorithm,
                    accumulation,
                    threads,
                    chunks,
                    kernel,
                });
            }
        }
    }
    v
}

fn exact_variants(a: &DMatrix<i64>) -> Vec<BigInt> {
    let mut out = Vec::new();
    for method in [ExactMethod::Glynn, ExactMethod::RyserFull] {
        for force_modular in [false, true] {
            for (threads, chunks) in [(1, 0), (2, 8)] {
                out.push(
                    permanent_exact_with(
                        a,
                        &ExactOptions {
                            method,
                            threads,
                            chunks,
                            force_modular,
                        },
                    )
                    .unwrap(),
                );
            }
        }
    }
    out
}

#[test]
fn all_ones_gives_n_factorial() {
    for n in 1..=12usize {
        let a = DMatrix::from_element(n, n, 1i64);
        for p in exact_variants(&a) {
            assert_eq!(p, factorial(n as u64), "exact, n = {n}");
        }
        let af = DMatrix::from_element(n, n, 1.0);
        let ac = DMatrix::from_element(n, n, Complex64::new(1.0, 0.0));
        let want = factorial(n as u64).to_f64().unwrap();
        for o in all_float_options() {
            let f = permanent_f64(&af, &o).unwrap();
            let b = bound(n, (n as f64).powi(n as i32), &o, false);
            assert!((f - want).abs() <= b, "f64 n={n} {o:?}: {f} vs {want}");
            let c = permanent_c64(&ac, &o).unwrap();
            let b = bound(n, (n as f64).powi(n as i32), &o, true);
            assert!((c - want).norm() <= b, "c64 n={n} {o:?}: {c} vs {want}");
        }
    }
    // Larger n: i128 path (n = 20: 2^19·20^20 < 2^127) and the modular path (n = 23).
    for n in [20usize, 23] {
        let a = DMatrix::from_element(n, n, 1i64);
        assert_eq!(
            permanent_exact(&a, 2).unwrap(),
            factorial(n as u64),
            "n = {n}"
        );
    }
}

#[test]
fn exact_matches_brute_force_on_random_01_and_integer_matrices() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for n in 1..=8usize {
        for trial in 0..6 {
            let a = if trial % 2 == 0 {
                DMatrix::from_fn(n, n, |_, _| rng.random_bool(0.6) as i64)
            } else {
                DMatrix::from_fn(n, n, |_, _| rng.random_range(-7i64..=7))
            };
            let brute = permanent_brute(&a.map(|x| x as i128));
            for p in exact_variants(&a) {
                assert_eq!(p, BigInt::from(brute), "n={n} trial {trial}\n{a}");
            }
        }
    }
}

#[test]
fn exact_handles_entries_beyond_i128() {
    // Entries near 2^62: the permanent has ~6·62 bits, far beyond i128; brute force in
    // big integers is the reference.
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for n in [3usize, 5, 7] {
        let a = DMatrix::from_fn(n, n, |_, _| {
            let x = rng.random_range(1i64 << 60..i64::MAX);
            if rng.random_bool(0.5) {
                -x
            } else {
                x
            }
        });
        let brute = permanent_brute(&a.map(BigInt::from));
        assert!(brute.bits() > 127, "test matrix too small");
        for p in exact_variants(&a) {
            assert_eq!(p, brute, "n = {n}");
        }
    }
}

#[test]
fn float_algorithms_match_brute_force_within_bound() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for n in 1..=8usize {
        let a = DMatrix::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
        let brute = permanent_brute(&a);
        let p = row_abs_product(&a);
        for o in all_float_options() {
            let f = permanent_f64(&a, &o).unwrap();
            // The brute-force sum has its own rounding: n!·n·u·P covers it.
            let b =
                bound(n, p, &o, false) + (factorial(n as u64).to_f64().unwrap() * n as f64) * U * p;
            assert!((f - brute).abs() <= b, "n={n} {o:?}: {f} vs {brute}");
        }
        let ac = DMatrix::from_fn(n, n, |_, _| {
            Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0))
        });
        let brute = permanent_brute(&ac);
        let p = row_abs_product_c(&ac);
        for o in all_float_options() {
            let c = permanent_c64(&ac, &o).unwrap();
            let b = bound(n, p, &o, true)
                + (factorial(n as u64).to_f64().unwrap() * 4.0 * n as f64) * U * p;
            assert!((c - brute).norm() <= b, "n={n} {o:?}: {c} vs {brute}");
        }
    }
}

/// Exact value of perm(B / 2^52) as f64, for B an integer matrix with entries < 2^52.
fn exact_scaled(b: &DMatrix<i64>) -> f64 {
    let n = b.nrows() as i32;
    let p = permanent_exact(b, 2).unwrap();
    p.to_f64().unwrap() * 2f64.powi(-52 * n)
}

#[test]
fn f64_full_precision_entries_within_bound_of_exact() {
    // Entries with 52 random mantissa bits, so row sums round: this exercises the row-sum
    // drift term of the bound. The reference is exact: perm(A) = perm(2^52·A)/2^(52n).
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for n in [9usize, 12, 15] {
        let b = DMatrix::from_fn(n, n, |_, _| rng.random_range(0i64..1 << 52));
        let a = b.map(|x| x as f64 * 2f64.powi(-52));
        let exact = exact_scaled(&b);
        let p = row_abs_product(&a);
        for o in all_float_options() {
            let f = permanent_f64(&a, &o).unwrap();
            let err = (f - exact).abs();
            assert!(err <= bound(n, p, &o, false), "n={n} {o:?}: err {err:e}");
        }
    }
}

#[test]
fn complex_gaussian_integers_match_brute_force_within_bound() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for n in 1..=8usize {
        let re = DMatrix::from_fn(n, n, |_, _| rng.random_range(-9i64..=9));
        let im = DMatrix::from_fn(n, n, |_, _| rng.random_range(-9i64..=9));
        // Brute force over Z[i] in i128 pairs (exact).
        let mut exact = (0i128, 0i128);
        let mut perm: Vec<usize> = (0..n).collect();
        permutations(&mut perm, 0, &mut |s| {
            let mut t = (1i128, 0i128);
            for (i, &j) in s.iter().enumerate() {
                let (x, y) = (re[(i, j)] as i128, im[(i, j)] as i128);
                t = (t.0 * x - t.1 * y, t.0 * y + t.1 * x);
            }
            exact.0 += t.0;
            exact.1 += t.1;
        });
        let (gre, gim) = permanent_exact_gaussian(&re, &im, 2).unwrap();
        assert_eq!(
            (gre, gim),
            (BigInt::from(exact.0), BigInt::from(exact.1)),
            "n={n}"
        );
        let exact = Complex64::new(exact.0 as f64, exact.1 as f64);
        let a = DMatrix::from_fn(n, n, |i, j| {
            Complex64::new(re[(i, j)] as f64, im[(i, j)] as f64)
        });
        let p = row_abs_product_c(&a);
        for o in all_float_options() {
            let c = permanent_c64(&a, &o).unwrap();
            assert!(
                (c - exact).norm() <= bound(n, p, &o, true),
                "n={n} {o:?}: {c} vs {exact}"
            );
        }
    }
}

fn permutations(p: &mut Vec<usize>, k: usize, f: &mut impl FnMut(&[usize])) {
    if k == p.len() {
        f(p);
        return;
    }
    for i in k..p.len() {
        p.swap(k, i);
        permutations(p, k + 1, f);
        p.swap(k, i);
    }
}

#[test]
fn complex_full_precision_within_bound_of_exact() {
    // Row i of A multiplied by i^(s_i): perm = i^(Σ s_i)·perm(A) exactly, entries purely
    // real or imaginary with 52-bit mantissas, so both components of the row sums round.
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    for n in [10usize, 14] {
        let b = DMatrix::from_fn(n, n, |_, _| rng.random_range(0i64..1 << 52));
        let exact_real = exact_scaled(&b);
        let shifts: Vec<u32> = (0..n).map(|_| rng.random_range(0..4)).collect();
        let unit = |s: u32| Complex64::i().powu(s);
        let a = DMatrix::from_fn(n, n, |i, j| {
            unit(shifts[i]) * (b[(i, j)] as f64 * 2f64.powi(-52))
        });
        let exact = unit(shifts.iter().sum::<u32>() % 4) * exact_real;
        let p = row_abs_product_c(&a);
        for o in all_float_options() {
            let c = permanent_c64(&a, &o).unwrap();
            let err = (c - exact).norm();
            assert!(err <= bound(n, p, &o, true), "n={n} {o:?}: err {err:e}");
        }
    }
}

#[test]
fn complex_random_entries_within_bound_of_exact_gaussian_permanent() {
    // A = (B + iC)/2^52 with random 52-bit B, C (signed): perm(A) = perm(B + iC)/2^(52n),
    // with perm(B + iC) from the exact Gaussian-integer engine (two residues per prime).
    let mut rng = ChaCha8Rng::seed_from_u64(10);
    for n in [11usize, 13] {
        let mut draw = || rng.random_range(-(1i64 << 52)..1i64 << 52);
        let b = DMatrix::from_fn(n, n, |_, _| draw());
        let c = DMatrix::from_fn(n, n, |_, _| draw());
        let (er, ei) = permanent_exact_gaussian(&b, &c, 2).unwrap();
        let scale = 2f64.powi(-52 * n as i32);
        let exact = Complex64::new(er.to_f64().unwrap() * scale, ei.to_f64().unwrap() * scale);
        let a = DMatrix::from_fn(n, n, |i, j| {
            Complex64::new(
                b[(i, j)] as f64 * 2f64.powi(-52),
                c[(i, j)] as f64 * 2f64.powi(-52),
            )
        });
        let p = row_abs_product_c(&a);
        for o in all_float_options() {
            let z = permanent_c64(&a, &o).unwrap();
            let err = (z - exact).norm();
            assert!(err <= bound(n, p, &o, true), "n={n} {o:?}: err {err:e}");
        }
    }
}

#[test]
fn ryser_and_glynn_agree_with_each_other_and_the_exact_value() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for n in [10usize, 13, 16] {
        let b = DMatrix::from_fn(n, n, |_, _| rng.random_range(-20i64..=20));
        let exact = permanent_exact_with(
            &b,
            &ExactOptions {
                method: ExactMethod::RyserFull,
                threads: 2,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(permanent_exact(&b, 1).unwrap(), exact);
        let a = b.map(|x| x as f64);
        let p = row_abs_product(&a);
        let want = exact.to_f64().unwrap();
        for algorithm in [Algorithm::Ryser, Algorithm::Glynn] {
            let o = PermOptions {
                algorithm,
                accumulation: Accumulation::DoubleDouble,
                threads: 2,
                chunks: 0,
                kernel: Kernel::Auto,
            };
            let f = permanent_f64(&a, &o).unwrap();
            assert!(
                (f - want).abs() <= bound(n, p, &o, false),
                "{algorithm:?} n={n}"
            );
        }
    }
}

#[test]
fn result_is_independent_of_thread_count_for_fixed_chunking() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let n = 18;
    let a = DMatrix::from_fn(n, n, |_, _| Complex64::new(rng.random(), rng.random()));
    for acc in [Accumulation::Plain, Accumulation::DoubleDouble] {
        for chunks in [0, 16] {
            let run = |threads| {
                permanent_c64(
                    &a,
                    &PermOptions {
                        algorithm: Algorithm::Glynn,
                        accumulation: acc,
                        threads,
                        chunks,
                        kernel: Kernel::Auto,
                    },
                )
                .unwrap()
            };
            let one = run(1);
            assert_eq!(one, run(2), "{acc:?} chunks {chunks}");
            assert_eq!(one, run(3), "{acc:?} chunks {chunks}");
        }
    }
}

#[test]
fn sparse_lines_are_expanded_and_zero_lines_give_zero() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for n in 2..=8usize {
        // Lower-triangular-ish: many single-nonzero rows/columns after expansion.
        let a = DMatrix::from_fn(n, n, |i, j| {
            if j <= i && rng.random_bool(0.7) || i == j {
                rng.random_range(1i64..5)
            } else {
                0
            }
        });
        let brute = permanent_brute(&a.map(|x| x as i128));
        assert_eq!(permanent_exact(&a, 1).unwrap(), BigInt::from(brute));
        let f = permanent_f64(&a.map(|x| x as f64), &PermOptions::default()).unwrap();
        assert_eq!(f, brute as f64);
        let mut z = a.clone();
        z.column_mut(n / 2).fill(0);
        assert!(permanent_exact(&z, 1).unwrap().is_zero());
        assert_eq!(
            permanent_f64(&z.map(|x| x as f64), &PermOptions::default()).unwrap(),
            0.0
        );
    }
    let empty = DMatrix::<f64>::zeros(0, 0);
    assert_eq!(permanent_f64(&empty, &PermOptions::default()).unwrap(), 1.0);
}

#[test]
fn bad_input_is_an_error() {
    let o = PermOptions::default();
    let e = permanent_f64(&DMatrix::zeros(2, 3), &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("2×3"), "{e}");
    let mut a = DMatrix::from_element(3, 3, 1.0);
    a[(1, 2)] = f64::NAN;
    let e = permanent_f64(&a, &o).unwrap_err().to_string();
    assert!(e.contains("(2, 3)"), "{e}");
    let e = permanent_exact(&DMatrix::from_element(61, 61, 1), 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("61"), "{e}");
}

/// Bench of the CPU engine (n = 20..26, 1 and 2 threads); `cargo test --release --test
/// permanent bench_cpu -- --ignored --nocapture`. With PERM_BENCH_DUMP=dir it also
/// writes the matrices (text, "re im" per entry, row-major) for the thewalrus comparison.
#[test]
#[ignore]
fn bench_cpu() {
    let sizes: Vec<usize> = std::env::var("PERM_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').map(|x| x.trim().parse().unwrap()).collect())
        .unwrap_or_else(|| (20..=26).collect());
    if let Ok(dir) = std::env::var("PERM_BENCH_DUMP") {
        std::fs::create_dir_all(&dir).unwrap();
        for &n in &sizes {
            let a = pathtrack::linalg::permanent::bench_matrix(n);
            let mut s = String::new();
            for i in 0..n {
                for j in 0..n {
                    s += &format!("{:e} {:e}\n", a[(i, j)].re, a[(i, j)].im);
                }
            }
            std::fs::write(format!("{dir}/m{n}.txt"), s).unwrap();
        }
    }
    let rows = pathtrack::linalg::permanent::bench(&sizes, &[1, 2]).unwrap();
    // PERM_BENCH_EXACT=max_n: relative errors against the exact value (the bench entries
    // are multiples of 2^-53, so perm(A) = perm(2^53·A)/2^(53n) exactly).
    let max_exact: usize = std::env::var("PERM_BENCH_EXACT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    for &n in sizes.iter().filter(|&&n| n <= max_exact) {
        let a = pathtrack::linalg::permanent::bench_matrix(n);
        let to_int = |x: f64| {
            let y = x * 2f64.powi(53);
            assert_eq!(y, y.trunc());
            y as i64
        };
        let (er, ei) =
            permanent_exact_gaussian(&a.map(|z| to_int(z.re)), &a.map(|z| to_int(z.im)), 2)
                .unwrap();
        let exact = Complex64::new(
            scaled_f64(&er, -53 * n as i64),
            scaled_f64(&ei, -53 * n as i64),
        );
        println!("exact n={n}: {exact:.15e}");
        for r in rows.iter().filter(|r| r.n == n) {
            println!(
                "  rel. error {:.2e}  ({} threads, {})",
                (r.value - exact).norm() / exact.norm(),
                r.threads,
                r.kind
            );
        }
        if let Ok(dir) = std::env::var("PERM_BENCH_DUMP") {
            std::fs::write(
                format!("{dir}/exact{n}.txt"),
                format!("{:e} {:e}\n", exact.re, exact.im),
            )
            .unwrap();
        }
    }
}

/// x·2^e as f64 for big x (x itself may exceed the f64 range); relative error ~2^-53.
fn scaled_f64(x: &BigInt, e: i64) -> f64 {
    let sh = x.bits().saturating_sub(100);
    (x >> sh).to_f64().unwrap() * 2f64.powi((sh as i64 + e) as i32)
}

/// Kernel comparison on one thread (CPU seconds): `cargo test --release --test permanent
/// bench_kernels -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_kernels() {
    use pathtrack::linalg::permanent::{bench_matrix, process_cpu_seconds};
    for n in [22usize, 24] {
        let a = bench_matrix(n);
        for kernel in [Kernel::Simple, Kernel::Block4, Kernel::Block8] {
            for accumulation in [Accumulation::Plain, Accumulation::DoubleDouble] {
                let o = PermOptions {
                    accumulation,
                    kernel,
                    ..Default::default()
                };
                let c0 = process_cpu_seconds();
                let v = permanent_c64(&a, &o).unwrap();
                println!(
                    "n={n} {kernel:?} {accumulation:?}: {:.2} cpu s  {v:.12e}",
                    process_cpu_seconds() - c0
                );
            }
        }
    }
}
