//! The GPU permanent against independent references: exact integer permanents (where the
//! whole Glynn sum stays below 2^53, so the float result must be exact), exact
//! Gaussian-integer permanents of scaled complex matrices within the error bound of
//! docs/permanent.md (K = 2n + L with L the codes per GPU thread; compensated schemes add
//! 2(W − 1) for the plain sums of W terms per block), the all-ones matrix (n!), brute force
//! at n = 1, 2, and bad input. Every device test prints `skipped: no CUDA device: …` and
//! returns where no device can be opened.

use nalgebra::DMatrix;
use num_bigint::BigInt;
use num_complex::Complex64;
use num_traits::ToPrimitive;
use pathtrack::gpu::Device;
use pathtrack::linalg::permanent::cuda::{
    permanent_c64_cuda, permanent_f64_cuda, shape, GpuPermOptions,
};
use pathtrack::linalg::permanent::{
    permanent_brute, permanent_exact, permanent_exact_gaussian, permanent_f64, Accumulation,
    PermOptions,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const U: f64 = 1.0 / 9_007_199_254_740_992.0; // 2^-53
const ACCS: [Accumulation; 3] = [
    Accumulation::Plain,
    Accumulation::Kahan,
    Accumulation::DoubleDouble,
];

fn gpu() -> Option<Device> {
    match Device::open(0) {
        Ok(d) => {
            eprintln!("CUDA device: {} (cc {}.{})", d.name, d.cc.0, d.cc.1);
            Some(d)
        }
        Err(e) => {
            eprintln!("skipped: no CUDA device: {e}");
            None
        }
    }
}

/// Option sets covering the launch shapes: automatic, one block of codes per thread
/// (odd thread starts), single thread, small CUDA blocks, other register-block sizes, and
/// the automatic shape without the unit-column form (real matrices; the others use it when
/// a column has no zero).
fn option_sets(acc: Accumulation) -> Vec<GpuPermOptions> {
    let base = GpuPermOptions {
        accumulation: acc,
        ..Default::default()
    };
    vec![
        base,
        GpuPermOptions {
            threads_log2: Some(40),
            block_log2: Some(2),
            ..base
        },
        GpuPermOptions {
            threads_log2: Some(0),
            block_log2: Some(0),
            ..base
        },
        GpuPermOptions {
            threads_log2: Some(7),
            block_threads: 32,
            block_log2: Some(1),
            ..base
        },
        GpuPermOptions {
            block_log2: Some(3),
            min_blocks: Some(1),
            ..base
        },
        GpuPermOptions {
            unit_column: false,
            ..base
        },
    ]
}

/// The documented bound |computed − perm| ≤ c·u·P for the GPU launch of order n; the
/// unit-column form (real, W ≥ 2) adds 2n + 2: the divisions by the chosen column's
/// entries (n per term of the expansion) and the n + 1 roundings of the scale product.
fn bound(n: usize, p: f64, opts: &GpuPermOptions, complex: bool) -> f64 {
    let sh = shape(n, complex, opts).unwrap();
    let nf = n as f64;
    let big_n = (1u64 << (n - 1)) as f64;
    let w = (1u64 << sh.s) as f64;
    let k = 2.0 * nf + sh.chunk() as f64;
    let s2 = std::f64::consts::SQRT_2;
    let comp = 4.0 + 2.0 * (w - 1.0);
    let c = match (complex, opts.accumulation != Accumulation::Plain) {
        (false, false) => nf * (k + 1.0) + big_n,
        (false, true) => nf * (k + 1.0) + comp,
        (true, false) => nf * k + 2.0 * s2 * nf + s2 * big_n,
        (true, true) => nf * k + 2.0 * s2 * nf + s2 * comp,
    };
    let c = if !complex && opts.unit_column && sh.s >= 1 {
        c + 2.0 * nf + 2.0
    } else {
        c
    };
    1.01 * c * U * p
}

/// The CPU engine's bound (real, plain, automatic chunks: L = 2^(n−1) / clamp(2^(n−13), 1, 256)).
fn cpu_bound(n: usize, p: f64) -> f64 {
    let total = 1u64 << (n - 1);
    let l = (total / (total >> 12).clamp(1, 256)) as f64;
    let nf = n as f64;
    1.01 * (nf * (2.0 * nf + l + 1.0) + total as f64) * U * p
}

fn row_abs_product<T>(a: &DMatrix<T>, abs: impl Fn(&T) -> f64) -> f64 {
    (0..a.nrows())
        .map(|i| (0..a.ncols()).map(|j| abs(&a[(i, j)])).sum::<f64>())
        .product()
}

/// Random integer matrix with entries in lo..=hi, zero with probability `zero`.
fn int_matrix(rng: &mut ChaCha8Rng, n: usize, lo: i64, hi: i64, zero: f64) -> DMatrix<i64> {
    DMatrix::from_fn(n, n, |_, _| {
        if rng.random::<f64>() < zero {
            0
        } else {
            rng.random_range(lo..=hi)
        }
    })
}

/// True when every row sum, product and partial sum of the Glynn sum is an integer below
/// 2^53 (2^(n−1)·Π_i Σ_j |a_ij| < 2^53), so that the float evaluation is exact.
fn exact_in_f64(a: &DMatrix<i64>) -> bool {
    let n = a.nrows();
    let p = row_abs_product(a, |x| x.unsigned_abs() as f64);
    p * 2f64.powi(n as i32 - 1) < 2f64.powi(53)
}

/// With the unit-column form these stay exact: the entries are 0, ±1, ±2, so dividing a
/// row by its entry in the chosen column (±1 or ±2) is exact, and every value of the sum is
/// a multiple of 1/Π d_i no larger than 2^(n−1)·P/Π d_i < 2^53/Π d_i.
#[test]
fn integer_matrices_are_exact() {
    let Some(dev) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut checked = 0;
    for trial in 0..60 {
        // 0/1 matrices with about 3 ones per row up to n = 20; small signed integers.
        let n = rng.random_range(3..=20);
        let a = if trial % 2 == 0 {
            let zero = 1.0 - 2.6 / n as f64;
            int_matrix(&mut rng, n, 1, 1, zero)
        } else {
            let zero = 1.0 - 2.2 / n as f64;
            int_matrix(&mut rng, n, -2, 2, zero.max(0.0))
        };
        if !exact_in_f64(&a) {
            continue;
        }
        let want = permanent_exact(&a, 1).unwrap().to_f64().unwrap();
        let af = a.map(|x| x as f64);
        for acc in ACCS {
            for opts in option_sets(acc) {
                for expand in [true, false] {
                    let o = GpuPermOptions {
                        expand_single: expand,
                        ..opts
                    };
                    let got = permanent_f64_cuda(&dev, &af, &o).unwrap();
                    assert_eq!(got, want, "n={n} trial={trial} {o:?}");
                }
            }
        }
        checked += 1;
    }
    eprintln!("{checked} integer matrices matched exactly");
    assert!(
        checked >= 20,
        "only {checked} matrices met the exactness condition"
    );
}

#[test]
fn dense_small_integers_exact_and_complex_gaussian() {
    let Some(dev) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    // Dense entries 0..=3 at n = 8, −1..=1 at n = 11, −9..=9 at n = 6 stay exact in f64.
    for (n, lo, hi) in [(8, 0, 3), (11, -1, 1), (6, -9, 9)] {
        let a = int_matrix(&mut rng, n, lo, hi, 0.0);
        assert!(exact_in_f64(&a));
        let want = permanent_exact(&a, 1).unwrap().to_f64().unwrap();
        let af = a.map(|x| x as f64);
        let plain_sum = GpuPermOptions {
            unit_column: false,
            ..Default::default()
        };
        let got = permanent_f64_cuda(&dev, &af, &plain_sum).unwrap();
        assert_eq!(got, want, "n={n}");
        // The unit-column form divides by entries like 3: within the bound, not exact.
        let got = permanent_f64_cuda(&dev, &af, &Default::default()).unwrap();
        let p = row_abs_product(&af, |x| x.abs());
        let b = bound(n, p, &Default::default(), false);
        assert!(
            (got - want).abs() <= b,
            "n={n} unit column: {got} vs {want}"
        );
        // The same integers as a complex matrix (i·a): perm(i·A) = i^n·perm(A).
        let c = a.map(|x| Complex64::new(0.0, x as f64));
        let got = permanent_c64_cuda(&dev, &c, &Default::default()).unwrap();
        let want_c = Complex64::new(0.0, 1.0).powu(n as u32) * want;
        assert_eq!(got, want_c, "n={n} complex");
    }
}

#[test]
fn random_complex_within_the_bound_of_the_exact_value() {
    let Some(dev) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let scale_bits = 24;
    let scale = 2f64.powi(scale_bits);
    let mut worst: f64 = 0.0;
    for n in [3usize, 7, 11, 14] {
        // Entries k/2^24 with |k| < 2^24: the exact permanent is perm(K)/2^(24n).
        let lim = 1i64 << scale_bits;
        let re = DMatrix::from_fn(n, n, |_, _| rng.random_range(-lim..lim));
        let im = DMatrix::from_fn(n, n, |_, _| rng.random_range(-lim..lim));
        let (er, ei) = permanent_exact_gaussian(&re, &im, 1).unwrap();
        let down = |x: BigInt| x.to_f64().unwrap() / scale.powi(n as i32);
        let exact = Complex64::new(down(er), down(ei));
        let a = DMatrix::from_fn(n, n, |i, j| {
            Complex64::new(re[(i, j)] as f64 / scale, im[(i, j)] as f64 / scale)
        });
        let p = row_abs_product(&a, |z| z.norm());
        for acc in ACCS {
            for opts in option_sets(acc) {
                let got = permanent_c64_cuda(&dev, &a, &opts).unwrap();
                let err = (got - exact).norm();
                let b = bound(n, p, &opts, true);
                assert!(err <= b, "n={n} {opts:?}: error {err:e} > bound {b:e}");
                worst = worst.max(err / exact.norm());
            }
        }
        // The real parts alone against the CPU engine (both within their bounds).
        let ar = a.map(|z| z.re);
        let want = permanent_f64(&ar, &PermOptions::default()).unwrap();
        let got = permanent_f64_cuda(&dev, &ar, &Default::default()).unwrap();
        let pr = row_abs_product(&ar, |x| x.abs());
        let b = bound(n, pr, &Default::default(), false) + cpu_bound(n, pr);
        assert!((got - want).abs() <= b, "n={n} real vs CPU");
    }
    eprintln!("worst relative error against the exact complex permanents: {worst:.2e}");
}

#[test]
fn all_ones_gives_n_factorial() {
    let Some(dev) = gpu() else { return };
    for n in 1..=20usize {
        let a = DMatrix::from_element(n, n, 1.0);
        let want: f64 = (1..=n).map(|k| k as f64).product();
        let exact_fits = (n as f64).powi(n as i32) * 2f64.powi(n as i32 - 1) < 2f64.powi(53);
        for acc in ACCS {
            let opts = GpuPermOptions {
                accumulation: acc,
                ..Default::default()
            };
            let got = permanent_f64_cuda(&dev, &a, &opts).unwrap();
            if exact_fits {
                assert_eq!(got, want, "n={n} {acc:?}");
            } else {
                let b = bound(n, (n as f64).powi(n as i32), &opts, false);
                assert!((got - want).abs() <= b, "n={n} {acc:?}: {got} vs {want}");
            }
        }
    }
}

#[test]
fn orders_one_and_two_and_sparse_cases() {
    let Some(dev) = gpu() else { return };
    let no_expand = GpuPermOptions {
        expand_single: false,
        ..Default::default()
    };
    for o in [GpuPermOptions::default(), no_expand] {
        let a1 = DMatrix::from_element(1, 1, -3.25);
        assert_eq!(permanent_f64_cuda(&dev, &a1, &o).unwrap(), -3.25);
        let a2 = DMatrix::from_row_slice(2, 2, &[1.5, 2.0, -3.0, 4.0]);
        assert_eq!(permanent_f64_cuda(&dev, &a2, &o).unwrap(), 1.5 * 4.0 - 6.0);
        let c2 = DMatrix::from_row_slice(
            2,
            2,
            &[
                Complex64::new(1.0, 2.0),
                Complex64::new(0.0, -1.0),
                Complex64::new(3.0, 0.5),
                Complex64::new(-2.0, 1.0),
            ],
        );
        let got = permanent_c64_cuda(&dev, &c2, &o).unwrap();
        let want = permanent_brute(&c2);
        assert!(
            (got - want).norm() <= 1e-14 * want.norm(),
            "{got} vs {want}"
        );
        // A zero row gives 0; a permutation matrix gives 1.
        let mut z = DMatrix::from_element(5, 5, 2.0);
        z.row_mut(3).fill(0.0);
        assert_eq!(permanent_f64_cuda(&dev, &z, &o).unwrap(), 0.0);
        let perm = DMatrix::from_fn(6, 6, |i, j| if (i + 2) % 6 == j { 1.0 } else { 0.0 });
        assert_eq!(permanent_f64_cuda(&dev, &perm, &o).unwrap(), 1.0);
    }
}

#[test]
fn repeated_runs_are_bit_identical() {
    let Some(dev) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let n = 22;
    let a = DMatrix::from_fn(n, n, |_, _| rng.random::<f64>());
    let c = DMatrix::from_fn(n, n, |_, _| {
        Complex64::new(rng.random::<f64>(), rng.random::<f64>())
    });
    for acc in ACCS {
        let opts = GpuPermOptions {
            accumulation: acc,
            ..Default::default()
        };
        let r1 = permanent_f64_cuda(&dev, &a, &opts).unwrap();
        let r2 = permanent_f64_cuda(&dev, &a, &opts).unwrap();
        assert_eq!(r1.to_bits(), r2.to_bits());
        let c1 = permanent_c64_cuda(&dev, &c, &opts).unwrap();
        let c2 = permanent_c64_cuda(&dev, &c, &opts).unwrap();
        assert_eq!(
            (c1.re.to_bits(), c1.im.to_bits()),
            (c2.re.to_bits(), c2.im.to_bits())
        );
        // Against the CPU engine (different summation order) within the bound.
        let want = permanent_f64(&a, &PermOptions::default()).unwrap();
        let p = row_abs_product(&a, |x| x.abs());
        assert!((r1 - want).abs() <= bound(n, p, &opts, false) + cpu_bound(n, p));
        eprintln!(
            "n={n} {acc:?}: GPU {r1:.17e}, CPU {want:.17e}, rel diff {:.1e}",
            (r1 - want).abs() / want.abs()
        );
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let Some(dev) = gpu() else { return };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut a = DMatrix::from_element(4, 4, 1.0);
        a[(1, 2)] = f64::NAN;
        let e = permanent_f64_cuda(&dev, &a, &Default::default()).unwrap_err();
        assert!(format!("{e}").contains("(2, 3)"), "{e}");
        let ns = DMatrix::from_element(3, 4, 1.0);
        let e = permanent_f64_cuda(&dev, &ns, &Default::default()).unwrap_err();
        assert!(format!("{e}").contains("3×4"), "{e}");
        let mut c = DMatrix::from_element(3, 3, Complex64::new(1.0, 0.0));
        c[(2, 0)] = Complex64::new(0.0, f64::INFINITY);
        let e = permanent_c64_cuda(&dev, &c, &Default::default()).unwrap_err();
        assert!(format!("{e}").contains("(3, 1)"), "{e}");
        let big = DMatrix::from_element(61, 61, 1.0);
        assert!(permanent_f64_cuda(&dev, &big, &Default::default()).is_err());
        let bad = GpuPermOptions {
            block_threads: 48,
            ..Default::default()
        };
        let d = DMatrix::from_element(5, 5, 1.0);
        assert!(permanent_f64_cuda(&dev, &d, &bad).is_err());
    }));
    assert!(r.is_ok(), "bad input panicked");
}

#[test]
fn missing_device_is_an_error() {
    let r = std::panic::catch_unwind(|| Device::open(999).map(|_| ()));
    match r {
        Ok(Err(e)) => assert!(format!("{e}").contains("CUDA") || format!("{e}").contains("cuda")),
        Ok(Ok(())) => panic!("device 999 opened"),
        Err(_) => panic!("Device::open panicked"),
    }
}

/// Accuracy on the bench matrices (entries are multiples of 2^−53, so perm(A) =
/// perm(2^53·A)/2^(53n) exactly): prints the exact value, the CPU engine's and the GPU's
/// (where a device opens) relative errors. Sizes from PERM_GPU_EXACT (default 24); slow
/// (the exact sum runs modulo about n primes on the CPU).
#[test]
#[ignore]
fn bench_matrix_accuracy() {
    use pathtrack::linalg::permanent::cuda::bench_matrix_real;
    let sizes: Vec<usize> = std::env::var("PERM_GPU_EXACT")
        .unwrap_or_else(|_| "24".into())
        .split(',')
        .map(|s| s.trim().parse().unwrap())
        .collect();
    let dev = gpu();
    for n in sizes {
        let a = bench_matrix_real(n);
        let scaled = a.map(|x| {
            let k = x * 2f64.powi(53);
            assert_eq!(k.fract(), 0.0);
            k as i64
        });
        let t0 = std::time::Instant::now();
        let exact = permanent_exact(&scaled, 0).unwrap();
        // Keep the top 64 bits: the scaled value overflows f64.
        let shift = exact.bits().saturating_sub(64);
        let top = (&exact >> shift).to_f64().unwrap();
        let exact = top * 2f64.powi(shift as i32 - 53 * n as i32);
        let secs = t0.elapsed().as_secs_f64();
        let cpu = permanent_f64(
            &a,
            &PermOptions {
                threads: 0,
                ..Default::default()
            },
        )
        .unwrap();
        println!(
            "n={n} exact {exact:.16e} ({secs:.1} s); CPU plain rel err {:.2e}",
            (cpu - exact).abs() / exact
        );
        if let Some(dev) = &dev {
            for acc in ACCS {
                let o = GpuPermOptions {
                    accumulation: acc,
                    ..Default::default()
                };
                let g = permanent_f64_cuda(dev, &a, &o).unwrap();
                println!(
                    "n={n} GPU {acc:?} rel err {:.2e}",
                    (g - exact).abs() / exact
                );
            }
        }
    }
}
