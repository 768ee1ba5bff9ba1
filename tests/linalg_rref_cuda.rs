//! The GPU row reduction over Z/p (`linalg::rref::cuda`) against the CPU engine (itself
//! checked against exact references in tests/linalg_rref.rs) and, for small shapes,
//! against a textbook Gauss–Jordan over Z/p in this file: RREF, pivots, rank, row order,
//! pivot values and permutation sign must be equal exactly, for both GPU algorithms.
//! Every GPU test prints `skipped: no CUDA device: …` and returns where no device opens.
//! The CLI test uses `PATHTRACK_BIN` when set (the device machine), else the built binary.

#![allow(clippy::needless_range_loop)] // index loops mirror the textbook formulas

use num_complex::Complex64;
use pathtrack::linalg::rref::cuda::{CudaRref, GpuAlgo, PANEL};
use pathtrack::linalg::rref::cuda_gen::GpuField;
use pathtrack::linalg::rref::{
    echelonize, Echelon, EchelonOptions, Field, Matrix, Solution, Tolerance, Zp32, Zp64, C64, F64,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PRIMES: [u32; 5] = [2, 3, 65521, 998_244_353, 2_147_483_647];
/// Primes of the `u64`-word tests: 2, 3, 2^31 − 1 and a 62-bit prime.
const PRIMES64: [u64; 4] = [2, 3, 2_147_483_647, 4_611_686_018_427_387_847];

fn gpu() -> Option<CudaRref> {
    match CudaRref::new(0) {
        Ok(g) => {
            eprintln!("CUDA device: {}", g.device_description());
            Some(g)
        }
        Err(e) => {
            eprintln!("skipped: no CUDA device: {e}");
            None
        }
    }
}

/// Textbook column-by-column Gauss–Jordan over Z/p (u64 arithmetic), pivot = first
/// remaining row with a non-zero entry; returns the RREF and the pivot columns.
fn textbook_rref(p: u64, a: &Matrix<u32>) -> (Vec<Vec<u64>>, Vec<usize>) {
    let mut r: Vec<Vec<u64>> = (0..a.rows)
        .map(|i| a.row(i).iter().map(|&x| x as u64).collect())
        .collect();
    let pw = |mut b: u64, mut e: u64| {
        let mut acc = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                acc = acc * b % p;
            }
            b = b * b % p;
            e >>= 1;
        }
        acc
    };
    let mut pivots = vec![];
    let mut top = 0;
    for c in 0..a.cols {
        let Some(pr) = (top..a.rows).find(|&i| r[i][c] != 0) else {
            continue;
        };
        r.swap(top, pr);
        let inv = pw(r[top][c], p - 2);
        for x in r[top].iter_mut() {
            *x = *x * inv % p;
        }
        for i in 0..a.rows {
            if i != top && r[i][c] != 0 {
                let f = r[i][c];
                for j in 0..a.cols {
                    r[i][j] = (r[i][j] + (p - f) * r[top][j]) % p;
                }
            }
        }
        pivots.push(c);
        top += 1;
    }
    (r, pivots)
}

/// Random m × n matrix mod p of rank ≤ r (product of random m × r and r × n factors), with
/// some rows zeroed, some columns zeroed and some columns copies of others (free columns
/// inside panels).
fn random_matrix(rng: &mut ChaCha8Rng, f: &Zp32, m: usize, n: usize, r: usize) -> Matrix<u32> {
    let p = f.prime();
    let x = Matrix::from_fn(m, r, |_, _| rng.random_range(0..p));
    let y = Matrix::from_fn(r, n, |_, _| rng.random_range(0..p));
    let mut a = if r == 0 {
        Matrix::from_fn(m, n, |_, _| 0u32)
    } else {
        x.mul(f, &y)
    };
    if rng.random_bool(0.5) {
        for _ in 0..rng.random_range(0..=m / 4 + 1) {
            let i = rng.random_range(0..m);
            for j in 0..n {
                a.set(i, j, 0);
            }
        }
    }
    if rng.random_bool(0.5) {
        for _ in 0..rng.random_range(0..=n / 4 + 1) {
            let j = rng.random_range(0..n);
            let src = rng.random_range(0..n);
            let zero = rng.random_bool(0.5);
            for i in 0..m {
                let v = if zero { 0 } else { a.get(i, src) };
                a.set(i, j, v);
            }
        }
    }
    a
}

/// GPU (both algorithms) against the CPU engine; returns the CPU RREF.
fn check(g: &mut CudaRref, f: &Zp32, a: &Matrix<u32>, what: &str) -> Matrix<u32> {
    let mut cpu = a.clone();
    let e = echelonize(f, &mut cpu, &EchelonOptions::default());
    // The blocked algorithm with the largest panel, the default 64 and 7-column panels
    // (many panels, pivots and free columns across panel borders).
    let saved = g.panel;
    for (algo, panel) in [
        (GpuAlgo::Columns, saved),
        (GpuAlgo::Blocked, PANEL),
        (GpuAlgo::Blocked, 64),
        (GpuAlgo::Blocked, 7),
    ] {
        g.panel = panel;
        let res = g.rref_zp32(f, a, algo);
        g.panel = saved;
        let (r, ge, _) = res.unwrap_or_else(|err| panic!("{what} {algo:?}/{panel}: {err}"));
        assert_eq!((r.rows, r.cols), (a.rows, a.cols), "{what} {algo:?}");
        assert_eq!(ge.pivots, e.pivots, "{what} {algo:?}: pivots");
        assert_eq!(ge.rank, e.rank, "{what} {algo:?}: rank");
        assert_eq!(ge.row_perm, e.row_perm, "{what} {algo:?}: row order");
        assert_eq!(
            ge.pivot_values, e.pivot_values,
            "{what} {algo:?}: pivot values"
        );
        assert_eq!(ge.perm_sign, e.perm_sign, "{what} {algo:?}: sign");
        if r.data != cpu.data {
            let bad = r
                .data
                .iter()
                .zip(&cpu.data)
                .position(|(x, y)| x != y)
                .unwrap();
            panic!(
                "{what} {algo:?}: RREF differs first at ({}, {}): gpu {} cpu {}",
                bad / a.cols,
                bad % a.cols,
                r.data[bad],
                cpu.data[bad]
            );
        }
    }
    cpu
}

#[test]
fn new_fails_cleanly_for_a_missing_device() {
    let r = std::panic::catch_unwind(|| CudaRref::new(999).map(|_| ()));
    match r {
        Ok(Err(e)) => assert!(format!("{e}").contains("CUDA"), "{e}"),
        Ok(Ok(())) => panic!("device 999 opened"),
        Err(_) => panic!("CudaRref::new panicked"),
    }
}

#[test]
fn small_random_shapes_match_textbook_and_cpu() {
    let Some(mut g) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(61);
    for &p in &PRIMES {
        let f = Zp32::new(p).unwrap();
        for t in 0..40 {
            let (m, n) = (rng.random_range(1..=14), rng.random_range(1..=14));
            let r = rng.random_range(0..=m.min(n));
            let a = random_matrix(&mut rng, &f, m, n, r);
            let cpu = check(&mut g, &f, &a, &format!("p={p} #{t} {m}x{n} r={r}"));
            let (refm, refp) = textbook_rref(p as u64, &a);
            let (_, e, _) = g.rref_zp32(&f, &a, GpuAlgo::Auto).unwrap();
            assert_eq!(e.pivots, refp, "p={p} #{t}: pivots vs textbook");
            for i in 0..m {
                let row: Vec<u64> = cpu.row(i).iter().map(|&x| x as u64).collect();
                assert_eq!(row, refm[i], "p={p} #{t}: row {i} vs textbook");
            }
        }
    }
}

#[test]
fn random_shapes_up_to_a_few_hundred() {
    let Some(mut g) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(62);
    for &p in &PRIMES {
        let f = Zp32::new(p).unwrap();
        for t in 0..6 {
            let (m, n) = (rng.random_range(1..=400), rng.random_range(1..=400));
            let r = match t % 3 {
                0 => m.min(n),
                1 => rng.random_range(0..=m.min(n)),
                _ => rng.random_range(0..=PANEL + 5).min(m.min(n)),
            };
            let a = random_matrix(&mut rng, &f, m, n, r);
            check(&mut g, &f, &a, &format!("p={p} #{t} {m}x{n} r={r}"));
        }
    }
    // Exact panel multiples and wide / tall extremes.
    let f = Zp32::new(2_147_483_647).unwrap();
    for (m, n) in [
        (PANEL, PANEL),
        (2 * PANEL, 2 * PANEL + 1),
        (1, 300),
        (300, 1),
        (5, 700),
    ] {
        let a = random_matrix(&mut rng, &f, m, n, m.min(n));
        check(&mut g, &f, &a, &format!("{m}x{n}"));
    }
}

#[test]
fn full_residue_range_and_a_2000_square() {
    let Some(mut g) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(63);
    for &p in &[2_147_483_647u32, 3, 2] {
        let f = Zp32::new(p).unwrap();
        let n = 2000;
        let a = Matrix::from_fn(n, n, |_, _| rng.random_range(0..p));
        check(&mut g, &f, &a, &format!("p={p} {n}x{n}"));
    }
    // All entries p − 1 (largest balanced magnitudes in the GEMM split): rank 1.
    let f = Zp32::new(2_147_483_647).unwrap();
    let a = Matrix::from_fn(700, 900, |_, _| 2_147_483_646u32);
    check(&mut g, &f, &a, "all p-1");
    // Rank-deficient, several panels.
    let a = random_matrix(&mut rng, &f, 1000, 1300, 700);
    check(&mut g, &f, &a, "1000x1300 r=700");
}

#[test]
fn unreduced_entries_are_errors() {
    let Some(mut g) = gpu() else { return };
    let f = Zp32::new(7).unwrap();
    let mut a = Matrix::from_fn(3, 4, |i, j| ((i + j) % 7) as u32);
    a.set(1, 2, 9);
    let err = g.rref_zp32(&f, &a, GpuAlgo::Auto).unwrap_err().to_string();
    assert!(
        err.contains("(2, 3)") && err.contains("not reduced mod 7"),
        "{err}"
    );
}

#[test]
fn cli_backend_cuda_matches_cpu() {
    let bin = std::env::var("PATHTRACK_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_pathtrack").to_string());
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/rref_small.mtx");
    let file = if std::path::Path::new(file).exists() {
        file.to_string()
    } else {
        "tests/data/rref_small.mtx".to_string()
    };
    let have_gpu = CudaRref::new(0).is_ok();
    for p in ["2", "7", "2147483647", "4611686018427387847"] {
        let run = |backend: &str| {
            std::process::Command::new(&bin)
                .args(["rref", &file, "--prime", p, "--backend", backend])
                .output()
                .unwrap()
        };
        let cuda = run("cuda");
        if !have_gpu {
            assert_eq!(cuda.status.code(), Some(2));
            let err = String::from_utf8_lossy(&cuda.stderr);
            assert!(err.contains("CUDA"), "{err}");
            eprintln!("no CUDA device: the CLI exits 2 with: {}", err.trim());
            continue;
        }
        let cpu = run("cpu");
        assert!(
            cuda.status.success(),
            "{}",
            String::from_utf8_lossy(&cuda.stderr)
        );
        // Same Matrix Market body (comment lines differ by the device name).
        let body = |o: &std::process::Output| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| !l.starts_with('%') || l.starts_with("%%"))
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(body(&cuda), body(&cpu), "p = {p}");
    }
    // Usage errors before any device is opened.
    for (args, msg) in [
        (
            vec!["--backend", "cuda", "--prime", "7", "--tol", "1e-3"],
            "floats only",
        ),
        (vec!["--backend", "cuda", "--prime", "8"], "prime"),
    ] {
        let out = std::process::Command::new(&bin)
            .arg("rref")
            .arg(&file)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
    }
}

// ------------------------------------------------------------------ other element types

/// Random m × n matrix of rank ≤ r over `f` (product of random factors with entries from
/// `gen`), with some rows zeroed and some columns zeroed or copied (as `random_matrix`).
fn random_over<F: Field>(
    rng: &mut ChaCha8Rng,
    f: &F,
    m: usize,
    n: usize,
    r: usize,
    gen: &mut impl FnMut(&mut ChaCha8Rng) -> F::Elem,
) -> Matrix<F::Elem> {
    let x = Matrix::from_fn(m, r, |_, _| gen(rng));
    let y = Matrix::from_fn(r, n, |_, _| gen(rng));
    let mut a = if r == 0 {
        Matrix::zeros(f, m, n)
    } else {
        x.mul(f, &y)
    };
    if rng.random_bool(0.5) {
        for _ in 0..rng.random_range(0..=m / 4 + 1) {
            let i = rng.random_range(0..m);
            for j in 0..n {
                a.set(i, j, f.zero());
            }
        }
    }
    if rng.random_bool(0.5) {
        for _ in 0..rng.random_range(0..=n / 4 + 1) {
            let j = rng.random_range(0..n);
            let src = rng.random_range(0..n);
            let zero = rng.random_bool(0.5);
            for i in 0..m {
                let v = if zero { f.zero() } else { a.get(i, src) };
                a.set(i, j, v);
            }
        }
    }
    a
}

/// The GPU configurations every check runs: Columns, and Blocked with panels 128, 64, 7.
const CONFIGS: [(GpuAlgo, usize); 4] = [
    (GpuAlgo::Columns, 0),
    (GpuAlgo::Blocked, PANEL),
    (GpuAlgo::Blocked, 64),
    (GpuAlgo::Blocked, 7),
];

fn run_gpu<F: GpuField>(
    g: &mut CudaRref,
    f: &F,
    a: &Matrix<F::Elem>,
    opt: &EchelonOptions,
    algo: GpuAlgo,
    panel: usize,
    what: &str,
) -> (Matrix<F::Elem>, Echelon<F::Elem>) {
    let saved = g.panel;
    g.panel = panel;
    let mut r = a.clone();
    let res = g.echelonize_gpu(f, &mut r, opt, algo);
    g.panel = saved;
    let (e, _) = res.unwrap_or_else(|err| panic!("{what} {algo:?}/{panel}: {err}"));
    (r, e)
}

/// Z/p in u64 words: everything equal to the CPU engine.
fn check_exact64(g: &mut CudaRref, f: &Zp64, a: &Matrix<u64>, opt: &EchelonOptions, what: &str) {
    let mut cpu = a.clone();
    let e = echelonize(f, &mut cpu, opt);
    for (algo, panel) in CONFIGS {
        let (r, ge) = run_gpu(g, f, a, opt, algo, panel, what);
        assert_eq!(ge.pivots, e.pivots, "{what} {algo:?}: pivots");
        assert_eq!(ge.rank, e.rank, "{what} {algo:?}: rank");
        assert_eq!(ge.row_perm, e.row_perm, "{what} {algo:?}: row order");
        assert_eq!(
            ge.pivot_values, e.pivot_values,
            "{what} {algo:?}: pivot values"
        );
        assert_eq!(ge.perm_sign, e.perm_sign, "{what} {algo:?}: sign");
        if let Some(bad) = r.data.iter().zip(&cpu.data).position(|(x, y)| x != y) {
            panic!(
                "{what} {algo:?}: RREF differs first at ({}, {}): gpu {} cpu {}",
                bad / a.cols,
                bad % a.cols,
                r.data[bad],
                cpu.data[bad]
            );
        }
    }
}

#[test]
fn zp64_random_shapes_equal_cpu() {
    let Some(mut g) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(71);
    let opt = EchelonOptions::default();
    for &p in &PRIMES64 {
        let f = Zp64::new(p).unwrap();
        let mut gen = |r: &mut ChaCha8Rng| r.random_range(0..p);
        for t in 0..40 {
            let (m, n) = (rng.random_range(1..=14), rng.random_range(1..=14));
            let r = rng.random_range(0..=m.min(n));
            let a = random_over(&mut rng, &f, m, n, r, &mut gen);
            check_exact64(&mut g, &f, &a, &opt, &format!("p={p} #{t} {m}x{n} r={r}"));
            // Against the textbook reduction too (u128 arithmetic).
            let (refm, refp) = textbook_rref64(p, &a);
            let (rg, eg) = run_gpu(&mut g, &f, &a, &opt, GpuAlgo::Columns, 0, "textbook");
            assert_eq!(eg.pivots, refp, "p={p} #{t}: pivots vs textbook");
            for i in 0..m {
                assert_eq!(rg.row(i), &refm[i][..], "p={p} #{t}: row {i} vs textbook");
            }
        }
        for t in 0..4 {
            let (m, n) = (rng.random_range(1..=300), rng.random_range(1..=300));
            let r = if t % 2 == 0 {
                m.min(n)
            } else {
                rng.random_range(0..=m.min(n))
            };
            let a = random_over(&mut rng, &f, m, n, r, &mut gen);
            check_exact64(&mut g, &f, &a, &opt, &format!("p={p} #{t} {m}x{n} r={r}"));
        }
    }
    // Full residue range, all entries p − 1, pivot limit.
    let p = PRIMES64[3];
    let f = Zp64::new(p).unwrap();
    let a = Matrix::from_fn(500, 500, |_, _| rng.random_range(0..p));
    check_exact64(&mut g, &f, &a, &opt, "62-bit 500x500");
    let a = Matrix::from_fn(60, 90, |_, _| p - 1);
    check_exact64(&mut g, &f, &a, &opt, "62-bit all p-1");
    let a = Matrix::from_fn(40, 70, |_, _| rng.random_range(0..p));
    let lim = EchelonOptions {
        pivot_limit: 30,
        ..Default::default()
    };
    check_exact64(&mut g, &f, &a, &lim, "62-bit pivot limit 30");
}

/// Textbook Gauss–Jordan over Z/p with u128 products.
fn textbook_rref64(p: u64, a: &Matrix<u64>) -> (Vec<Vec<u64>>, Vec<usize>) {
    let mul = |x: u64, y: u64| ((x as u128 * y as u128) % p as u128) as u64;
    let mut r: Vec<Vec<u64>> = (0..a.rows).map(|i| a.row(i).to_vec()).collect();
    let pw = |mut b: u64, mut e: u64| {
        let mut acc = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                acc = mul(acc, b);
            }
            b = mul(b, b);
            e >>= 1;
        }
        acc
    };
    let mut pivots = vec![];
    let mut top = 0;
    for c in 0..a.cols {
        let Some(pr) = (top..a.rows).find(|&i| r[i][c] != 0) else {
            continue;
        };
        r.swap(top, pr);
        let inv = pw(r[top][c], p - 2);
        for x in r[top].iter_mut() {
            *x = mul(*x, inv);
        }
        for i in 0..a.rows {
            if i != top && r[i][c] != 0 {
                let f = r[i][c];
                for j in 0..a.cols {
                    let s = mul(f, r[top][j]);
                    r[i][j] = (r[i][j] + (p - s)) % p;
                }
            }
        }
        pivots.push(c);
        top += 1;
    }
    (r, pivots)
}

#[test]
fn zp64_solve_inverse_null_space() {
    let Some(mut g) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(72);
    for &p in &PRIMES64 {
        let f = Zp64::new(p).unwrap();
        let mut gen = |r: &mut ChaCha8Rng| r.random_range(0..p);
        for t in 0..12 {
            let (m, n) = (rng.random_range(1..=40), rng.random_range(1..=40));
            let r = rng.random_range(0..=m.min(n));
            let a = random_over(&mut rng, &f, m, n, r, &mut gen);
            let rank = pathtrack::linalg::rref::rank(&f, &a, &EchelonOptions::default());
            let algo = [GpuAlgo::Columns, GpuAlgo::Blocked][t % 2];
            // A·N = 0 with n − rank columns.
            let nb = g.null_space_gpu(&f, &a, algo).unwrap();
            assert_eq!(nb.cols, n - rank, "p={p} #{t}: null space size");
            assert!(
                a.mul(&f, &nb).data.iter().all(|&x| x == 0),
                "p={p} #{t}: A·N ≠ 0"
            );
            // Consistent right-hand sides: A·X = B.
            let x0 = Matrix::from_fn(n, 3, |_, _| gen(&mut rng));
            let b = a.mul(&f, &x0);
            let x = match g.solve_gpu(&f, &a, &b, algo).unwrap() {
                Solution::Unique(x) => {
                    assert_eq!(rank, n, "p={p} #{t}");
                    x
                }
                Solution::Affine { particular, .. } => {
                    assert!(rank < n, "p={p} #{t}");
                    particular
                }
                Solution::Inconsistent => {
                    panic!("p={p} #{t}: consistent system reported inconsistent")
                }
            };
            assert_eq!(a.mul(&f, &x), b, "p={p} #{t}: A·X ≠ B");
            // Square: inverse iff full rank.
            let rr = rng.random_range(0..=m);
            let s = random_over(&mut rng, &f, m, m, rr, &mut gen);
            let rs = pathtrack::linalg::rref::rank(&f, &s, &EchelonOptions::default());
            match g.inverse_gpu(&f, &s, algo).unwrap() {
                Some(inv) => {
                    assert_eq!(rs, m, "p={p} #{t}: inverse of a singular matrix");
                    assert_eq!(
                        s.mul(&f, &inv),
                        Matrix::identity(&f, m),
                        "p={p} #{t}: A·A⁻¹"
                    );
                }
                None => assert!(rs < m, "p={p} #{t}: no inverse of a regular matrix"),
            }
        }
    }
}

#[test]
fn zp64_unreduced_entry_is_an_error() {
    let Some(mut g) = gpu() else { return };
    let f = Zp64::new(PRIMES64[3]).unwrap();
    let mut a = Matrix::from_fn(3, 4, |i, j| (i + j) as u64);
    a.set(2, 1, PRIMES64[3]);
    let err = g.rref_gpu(&f, &a, GpuAlgo::Auto).unwrap_err().to_string();
    assert!(
        err.contains("(3, 2)") && err.contains("not reduced"),
        "{err}"
    );
}

fn max_mag<F: Field>(f: &F, a: &Matrix<F::Elem>) -> f64 {
    a.data.iter().fold(0.0f64, |m, &x| m.max(f.magnitude(x)))
}

fn max_diff<F: Field>(f: &F, a: &Matrix<F::Elem>, b: &Matrix<F::Elem>) -> f64 {
    a.data
        .iter()
        .zip(&b.data)
        .fold(0.0f64, |m, (&x, &y)| m.max(f.magnitude(f.sub(x, y))))
}

/// Floats: same pivots, rank, row order, tolerance and det scale as the CPU engine; RREF
/// and pivot values equal within `rel` (relative to the largest entry).
fn check_float<F: GpuField>(
    g: &mut CudaRref,
    f: &F,
    a: &Matrix<F::Elem>,
    opt: &EchelonOptions,
    rel: f64,
    what: &str,
) -> Matrix<F::Elem> {
    let mut cpu = a.clone();
    let e = echelonize(f, &mut cpu, opt);
    let scale = max_mag(f, &cpu).max(1.0);
    for (algo, panel) in CONFIGS {
        let (r, ge) = run_gpu(g, f, a, opt, algo, panel, what);
        assert_eq!(ge.rank, e.rank, "{what} {algo:?}/{panel}: rank");
        assert_eq!(ge.pivots, e.pivots, "{what} {algo:?}/{panel}: pivots");
        assert_eq!(
            ge.row_perm, e.row_perm,
            "{what} {algo:?}/{panel}: row order"
        );
        assert_eq!(ge.perm_sign, e.perm_sign, "{what} {algo:?}/{panel}: sign");
        assert_eq!(ge.tolerance, e.tolerance, "{what}: tolerance");
        // Same host code on both sides: bit-identical (NaN after an overflow included).
        assert_eq!(
            format!("{:?}", ge.det_scale),
            format!("{:?}", e.det_scale),
            "{what}: det scale"
        );
        for (k, (&x, &y)) in ge.pivot_values.iter().zip(&e.pivot_values).enumerate() {
            let d = f.magnitude(f.sub(x, y));
            assert!(
                d <= rel * f.magnitude(y).max(1.0),
                "{what} {algo:?}/{panel}: pivot value {k}: gpu {x:?} cpu {y:?}"
            );
        }
        let d = max_diff(f, &r, &cpu);
        assert!(
            d <= rel * scale,
            "{what} {algo:?}/{panel}: RREF differs by {d:e} (scale {scale:e})"
        );
    }
    cpu
}

fn unit_f64(r: &mut ChaCha8Rng) -> f64 {
    r.random_range(-1.0..1.0)
}

fn unit_c64(r: &mut ChaCha8Rng) -> Complex64 {
    Complex64::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0))
}

#[test]
fn floats_random_shapes_match_cpu() {
    let Some(mut g) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(73);
    let opt = EchelonOptions::default();
    for t in 0..60 {
        let (m, n) = if t < 40 {
            (rng.random_range(1..=14), rng.random_range(1..=14))
        } else {
            (rng.random_range(1..=300), rng.random_range(1..=300))
        };
        let r = if t % 3 == 0 {
            m.min(n)
        } else {
            rng.random_range(0..=m.min(n))
        };
        let a = random_over(&mut rng, &F64, m, n, r, &mut unit_f64);
        check_float(
            &mut g,
            &F64,
            &a,
            &opt,
            1e-8,
            &format!("f64 #{t} {m}x{n} r={r}"),
        );
        let c = random_over(&mut rng, &C64, m, n, r, &mut unit_c64);
        check_float(
            &mut g,
            &C64,
            &c,
            &opt,
            1e-8,
            &format!("c64 #{t} {m}x{n} r={r}"),
        );
    }
    // Rows scaled by 10^±100 (row scaling), an absolute tolerance that lowers the rank, a
    // pivot limit.
    let mut a = random_over(&mut rng, &F64, 30, 30, 30, &mut unit_f64);
    for i in 0..30 {
        let s = 10f64.powi(if i % 2 == 0 { 100 } else { -100 });
        for j in 0..30 {
            a.set(i, j, a.get(i, j) * s);
        }
    }
    check_float(&mut g, &F64, &a, &opt, 1e-8, "badly scaled rows");
    let mut a = random_over(&mut rng, &F64, 20, 20, 20, &mut unit_f64);
    let small = random_over(&mut rng, &F64, 20, 20, 20, &mut unit_f64);
    // Rank exactly 12 plus a 1e-10 perturbation (no zeroed rows: row scaling would blow a
    // perturbation-only row up to full size).
    let x = Matrix::from_fn(20, 12, |_, _| unit_f64(&mut rng));
    let y = Matrix::from_fn(12, 20, |_, _| unit_f64(&mut rng));
    let low = x.mul(&F64, &y);
    for k in 0..400 {
        a.data[k] = low.data[k] + 1e-10 * small.data[k];
    }
    let tol = EchelonOptions {
        tolerance: Tolerance::Absolute(1e-6),
        ..Default::default()
    };
    let cpu = check_float(&mut g, &F64, &a, &tol, 1e-8, "absolute tolerance");
    let _ = cpu;
    let full = pathtrack::linalg::rref::rank(&F64, &a, &opt);
    let cut = pathtrack::linalg::rref::rank(&F64, &a, &tol);
    assert_eq!((full, cut), (20, 12), "the tolerance must change the rank");
    let a = random_over(&mut rng, &C64, 25, 60, 25, &mut unit_c64);
    let lim = EchelonOptions {
        pivot_limit: 20,
        ..Default::default()
    };
    check_float(&mut g, &C64, &a, &lim, 1e-8, "c64 pivot limit 20");
}

/// Residual checks of solve, inverse and null space for a float type.
fn float_residuals<F: GpuField>(
    g: &mut CudaRref,
    f: &F,
    rng: &mut ChaCha8Rng,
    gen: &mut impl FnMut(&mut ChaCha8Rng) -> F::Elem,
    what: &str,
) {
    let eps = f64::EPSILON;
    for t in 0..16 {
        let algo = [GpuAlgo::Columns, GpuAlgo::Blocked][t % 2];
        let big = t >= 12;
        let (m, n) = if big {
            (rng.random_range(200..=400), rng.random_range(200..=400))
        } else {
            (rng.random_range(1..=30), rng.random_range(1..=30))
        };
        let r = if t % 3 == 0 {
            m.min(n)
        } else {
            rng.random_range(0..=m.min(n))
        };
        let a = random_over(rng, f, m, n, r, gen);
        let rank = pathtrack::linalg::rref::rank(f, &a, &EchelonOptions::default());
        let na = max_mag(f, &a).max(1e-300);
        // Null space: n − rank columns, ‖A·N‖ small.
        let nb = g.null_space_gpu(f, &a, algo).unwrap();
        assert_eq!(nb.cols, n - rank, "{what} #{t}: null space size");
        if nb.cols > 0 {
            let res = max_mag(f, &a.mul(f, &nb));
            let bound = 1e3 * (m.max(n) as f64) * eps * na * max_mag(f, &nb).max(1.0) * n as f64;
            assert!(res <= bound, "{what} #{t}: ‖A·N‖ = {res:e} > {bound:e}");
        }
        // Consistent B = A·X0: ‖A·X − B‖ small.
        let x0 = Matrix::from_fn(n, 4, |_, _| gen(rng));
        let b = a.mul(f, &x0);
        let x = match g.solve_gpu(f, &a, &b, algo).unwrap() {
            Solution::Unique(x) => x,
            Solution::Affine { particular, .. } => particular,
            Solution::Inconsistent => {
                panic!("{what} #{t}: consistent system reported inconsistent")
            }
        };
        let res = max_diff(f, &a.mul(f, &x), &b);
        let bound = 1e3 * (m.max(n) as f64) * eps * na * (max_mag(f, &x).max(1.0)) * n as f64;
        assert!(res <= bound, "{what} #{t}: ‖A·X − B‖ = {res:e} > {bound:e}");
        // Square full-rank: ‖A·A⁻¹ − I‖ small; singular: None.
        let sq = random_over(rng, f, m, m, m, gen);
        let rank_sq = pathtrack::linalg::rref::rank(f, &sq, &EchelonOptions::default());
        match g.inverse_gpu(f, &sq, algo).unwrap() {
            Some(inv) => {
                assert_eq!(rank_sq, m, "{what} #{t}: inverse of a singular matrix");
                let res = max_diff(f, &sq.mul(f, &inv), &Matrix::identity(f, m));
                let bound = 1e3 * m as f64 * eps * max_mag(f, &sq) * max_mag(f, &inv) * m as f64;
                assert!(
                    res <= bound,
                    "{what} #{t}: ‖A·A⁻¹ − I‖ = {res:e} > {bound:e}"
                );
            }
            None => assert!(rank_sq < m, "{what} #{t}: no inverse of a regular matrix"),
        }
        let sing = random_over(rng, f, 12, 12, 7, gen);
        assert!(
            g.inverse_gpu(f, &sing, algo).unwrap().is_none(),
            "{what} #{t}: singular"
        );
    }
    // Inconsistent: b outside the column space of a rank-deficient A.
    let a = random_over(rng, f, 10, 8, 4, gen);
    let b = Matrix::from_fn(10, 1, |_, _| gen(rng));
    assert!(
        matches!(
            g.solve_gpu(f, &a, &b, GpuAlgo::Columns).unwrap(),
            Solution::Inconsistent
        ),
        "{what}: inconsistent system"
    );
}

#[test]
fn floats_solve_inverse_null_space_residuals() {
    let Some(mut g) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(74);
    float_residuals(&mut g, &F64, &mut rng, &mut unit_f64, "f64");
    float_residuals(&mut g, &C64, &mut rng, &mut unit_c64, "c64");
}

#[test]
fn floats_larger_blocked_matches_columns_and_cpu() {
    let Some(mut g) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(75);
    let opt = EchelonOptions::default();
    let a = Matrix::from_fn(1100, 1100, |_, _| unit_f64(&mut rng));
    check_float(&mut g, &F64, &a, &opt, 1e-7, "f64 1100x1100");
    let a = random_over(&mut rng, &F64, 900, 1000, 650, &mut unit_f64);
    check_float(&mut g, &F64, &a, &opt, 1e-7, "f64 900x1000 r=650");
    let c = Matrix::from_fn(600, 700, |_, _| unit_c64(&mut rng));
    check_float(&mut g, &C64, &c, &opt, 1e-7, "c64 600x700");
}

#[test]
fn cli_backend_cuda_floats_match_cpu() {
    let bin = std::env::var("PATHTRACK_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_pathtrack").to_string());
    let have_gpu = CudaRref::new(0).is_ok();
    let dir = std::env::temp_dir().join(format!("rref_cuda_cli_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(76);
    let real = dir.join("real.mtx");
    let cplx = dir.join("complex.mtx");
    let (m, n) = (7, 9);
    let a = random_over(&mut rng, &F64, m, n, 5, &mut unit_f64);
    let mut t = format!("%%MatrixMarket matrix array real general\n{m} {n}\n");
    for j in 0..n {
        for i in 0..m {
            t += &format!("{:e}\n", a.get(i, j));
        }
    }
    std::fs::write(&real, t).unwrap();
    let c = random_over(&mut rng, &C64, m, n, 6, &mut unit_c64);
    let mut t = format!("%%MatrixMarket matrix array complex general\n{m} {n}\n");
    for j in 0..n {
        for i in 0..m {
            let z = c.get(i, j);
            t += &format!("{:e} {:e}\n", z.re, z.im);
        }
    }
    std::fs::write(&cplx, t).unwrap();
    let nums = |o: &std::process::Output| -> Vec<f64> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.starts_with('%'))
            .flat_map(|l| {
                l.split_whitespace()
                    .map(|x| x.parse::<f64>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    for file in [&real, &cplx] {
        let run = |backend: &str| {
            std::process::Command::new(&bin)
                .arg("rref")
                .arg(file)
                .args(["--backend", backend])
                .output()
                .unwrap()
        };
        let cuda = run("cuda");
        if !have_gpu {
            assert_eq!(cuda.status.code(), Some(2));
            assert!(String::from_utf8_lossy(&cuda.stderr).contains("CUDA"));
            eprintln!("no CUDA device: the CLI exits 2");
            continue;
        }
        assert!(
            cuda.status.success(),
            "{}",
            String::from_utf8_lossy(&cuda.stderr)
        );
        let cpu = run("cpu");
        let (x, y) = (nums(&cuda), nums(&cpu));
        assert_eq!(x.len(), y.len(), "{}", file.display());
        assert_eq!(x[..2], y[..2], "shape");
        for (u, v) in x.iter().zip(&y) {
            assert!(
                (u - v).abs() <= 1e-9 * v.abs().max(1.0),
                "{}: {u} vs {v}",
                file.display()
            );
        }
        // The rank comment is the same.
        let rank_line = |o: &std::process::Output| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .find(|l| l.contains("rank"))
                .map(|l| l.to_string())
        };
        assert_eq!(rank_line(&cuda), rank_line(&cpu));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- Many right-hand sides over several devices (column blocks) -------------------------

use pathtrack::linalg::rref::multi::{split_columns, MultiGpu, MultiSolveField};

/// Device lists of the multi-device tests: one GPU opened once, twice and three times
/// (separate contexts' streams and cuBLAS handles, one host thread each).
const DEVICE_LISTS: [&[usize]; 3] = [&[0], &[0, 0], &[0, 0, 0]];

/// `A X = B` on every device list against the CPU engine's `solve` (exact for Z/p; floats:
/// residual bound and agreement with the CPU solution) and against the one-device solve.
fn multi_case<F: MultiSolveField>(
    f: &F,
    rng: &mut ChaCha8Rng,
    gen: &mut impl FnMut(&mut ChaCha8Rng) -> F::Elem,
    what: &str,
) {
    let mut engines: Vec<MultiGpu> = DEVICE_LISTS
        .iter()
        .map(|d| MultiGpu::new(d).unwrap_or_else(|e| panic!("{what}: devices {d:?}: {e}")))
        .collect();
    let eps = f64::EPSILON;
    for (n, algos) in [
        (1, &[GpuAlgo::Auto][..]),
        (6, &[GpuAlgo::Columns, GpuAlgo::Blocked][..]),
        (45, &[GpuAlgo::Auto][..]),
        (200, &[GpuAlgo::Columns, GpuAlgo::Blocked][..]),
    ] {
        for m in [1, 7, 300] {
            let a = Matrix::from_fn(n, n, |_, _| gen(rng));
            let b = Matrix::from_fn(n, m, |_, _| gen(rng));
            let opt = EchelonOptions {
                parallelism: pathtrack::linalg::rref::Parallelism::None,
                ..Default::default()
            };
            let cpu = match pathtrack::linalg::rref::solve(f, &a, &b, &opt) {
                Solution::Unique(x) => x,
                _ => {
                    // A random A happened to be singular (small p): the GPU says so.
                    for g in engines.iter_mut() {
                        let e = g.solve(f, &a, &b, GpuAlgo::Auto).unwrap_err();
                        assert!(format!("{e}").contains("singular"), "{what}: {e}");
                    }
                    continue;
                }
            };
            let na = max_mag(f, &a).max(1e-300);
            for &algo in algos {
                let mut single: Option<Matrix<F::Elem>> = None;
                for g in engines.iter_mut() {
                    let d = g.ordinals().len();
                    let tag = format!("{what} n={n} m={m} {algo:?} devices {:?}", g.ordinals());
                    let (x, t) = g
                        .solve(f, &a, &b, algo)
                        .unwrap_or_else(|e| panic!("{tag}: {e}"));
                    assert_eq!((x.rows, x.cols), (n, m), "{tag}: shape");
                    let want: Vec<usize> = split_columns(m, d)
                        .iter()
                        .map(|&(c0, c1)| c1 - c0)
                        .collect();
                    assert_eq!(t.columns, want, "{tag}: blocks");
                    assert_eq!(t.columns.iter().sum::<usize>(), m, "{tag}: blocks cover B");
                    if F::EXACT {
                        assert!(x.data == cpu.data, "{tag}: X differs from the CPU solve");
                        // A·X = B exactly.
                        assert!(a.mul(f, &x).data == b.data, "{tag}: A·X ≠ B");
                    } else {
                        let nx = max_mag(f, &x).max(1.0);
                        let res = max_diff(f, &a.mul(f, &x), &b);
                        let bound = 1e3 * (n * n) as f64 * eps * na * nx;
                        assert!(res <= bound, "{tag}: ‖A·X − B‖ = {res:e} > {bound:e}");
                        let dc = max_diff(f, &x, &cpu);
                        assert!(dc <= 1e-7 * nx, "{tag}: |X − X_cpu| = {dc:e}");
                    }
                    match &single {
                        None => single = Some(x),
                        Some(s) => {
                            if F::EXACT {
                                assert!(x.data == s.data, "{tag}: differs from one device");
                            } else {
                                let ds = max_diff(f, &x, s);
                                let nx = max_mag(f, s).max(1.0);
                                assert!(ds <= 1e-7 * nx, "{tag}: |X − X_1| = {ds:e}");
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn multi_device_solve_matches_single_device_and_cpu() {
    if gpu().is_none() {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(91);
    multi_case(&F64, &mut rng, &mut unit_f64, "f64");
    multi_case(&C64, &mut rng, &mut unit_c64, "c64");
    for p in [65521u32, 2_147_483_647] {
        let f = Zp32::new(p).unwrap();
        multi_case(
            &f,
            &mut rng,
            &mut |r| r.random_range(0..p),
            &format!("zp32 {p}"),
        );
    }
    // p = 3: random A is often singular; both outcomes are checked.
    let f3 = Zp32::new(3).unwrap();
    multi_case(&f3, &mut rng, &mut |r| r.random_range(0..3), "zp32 3");
    let q = PRIMES64[3];
    let f = Zp64::new(q).unwrap();
    multi_case(&f, &mut rng, &mut |r| r.random_range(0..q), "zp64 62-bit");
}

#[test]
fn multi_device_solve_errors_are_results() {
    // No device needed for these two.
    let e = MultiGpu::new(&[])
        .err()
        .expect("empty device list accepted");
    assert!(format!("{e}").contains("empty device list"), "{e}");
    let r = std::panic::catch_unwind(|| MultiGpu::new(&[999]).map(|_| ()));
    match r {
        Ok(Err(e)) => assert!(format!("{e}").contains("CUDA"), "{e}"),
        Ok(Ok(())) => panic!("device 999 opened"),
        Err(_) => panic!("MultiGpu::new panicked"),
    }
    if gpu().is_none() {
        return;
    }
    let e = MultiGpu::new(&[0, 999]).err().expect("device 999 opened");
    assert!(format!("{e}").contains("999"), "{e}");
    let mut g = MultiGpu::new(&[0, 0]).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(92);
    let a = Matrix::from_fn(5, 4, |_, _| unit_f64(&mut rng));
    let b = Matrix::from_fn(5, 3, |_, _| unit_f64(&mut rng));
    let e = g.solve(&F64, &a, &b, GpuAlgo::Auto).unwrap_err();
    assert!(format!("{e}").contains("not square"), "{e}");
    let a = Matrix::from_fn(4, 4, |_, _| unit_f64(&mut rng));
    let e = g.solve(&F64, &a, &b, GpuAlgo::Auto).unwrap_err();
    assert!(format!("{e}").contains("B has 5"), "{e}");
    // Singular A (rank 5 of 8) for every element type, 1 and 9 right-hand sides.
    for m in [1, 9] {
        let a = random_over(&mut rng, &F64, 8, 8, 5, &mut unit_f64);
        let b = Matrix::from_fn(8, m, |_, _| unit_f64(&mut rng));
        let e = g.solve(&F64, &a, &b, GpuAlgo::Auto).unwrap_err();
        assert!(format!("{e}").contains("singular (rank "), "f64: {e}");
        let a = random_over(&mut rng, &C64, 8, 8, 5, &mut unit_c64);
        let b = Matrix::from_fn(8, m, |_, _| unit_c64(&mut rng));
        let e = g.solve(&C64, &a, &b, GpuAlgo::Blocked).unwrap_err();
        assert!(format!("{e}").contains("singular"), "c64: {e}");
        let f = Zp32::new(65521).unwrap();
        let mut gz = |r: &mut ChaCha8Rng| r.random_range(0..65521u32);
        let a = random_over(&mut rng, &f, 8, 8, 5, &mut gz);
        let b = Matrix::from_fn(8, m, |_, _| gz(&mut rng));
        let e = g.solve(&f, &a, &b, GpuAlgo::Auto).unwrap_err();
        assert!(format!("{e}").contains("singular"), "zp32: {e}");
        let q = PRIMES64[3];
        let f = Zp64::new(q).unwrap();
        let mut gq = |r: &mut ChaCha8Rng| r.random_range(0..q);
        let a = random_over(&mut rng, &f, 8, 8, 5, &mut gq);
        let b = Matrix::from_fn(8, m, |_, _| gq(&mut rng));
        let e = g.solve(&f, &a, &b, GpuAlgo::Auto).unwrap_err();
        assert!(format!("{e}").contains("singular"), "zp64: {e}");
    }
    // An unreduced Z/p entry is an error too; no right-hand side gives an n × 0 solution.
    let f = Zp64::new(PRIMES64[2]).unwrap();
    let a = Matrix::from_fn(3, 3, |i, j| if i == j { 1 } else { 0 });
    let bad = Matrix::from_fn(3, 2, |_, _| u64::MAX);
    assert!(g.solve(&f, &a, &bad, GpuAlgo::Auto).is_err());
    let (x, _) = g
        .solve(&f, &a, &Matrix::from_fn(3, 0, |_, _| 0u64), GpuAlgo::Auto)
        .unwrap();
    assert_eq!((x.rows, x.cols), (3, 0));
}
