//! The GPU row reduction over Z/p (`linalg::rref::cuda`) against the CPU engine (itself
//! checked against exact references in tests/linalg_rref.rs) and, for small shapes,
//! against a textbook Gauss–Jordan over Z/p in this file: RREF, pivots, rank, row order,
//! pivot values and permutation sign must be equal exactly, for both GPU algorithms.
//! Every GPU test prints `skipped: no CUDA device: …` and returns where no device opens.
//! The CLI test uses `PATHTRACK_BIN` when set (the device machine), else the built binary.

#![allow(clippy::needless_range_loop)] // index loops mirror the textbook formulas

use pathtrack::linalg::rref::cuda::{CudaRref, GpuAlgo, PANEL};
use pathtrack::linalg::rref::{echelonize, EchelonOptions, Matrix, Zp32};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PRIMES: [u32; 5] = [2, 3, 65521, 998_244_353, 2_147_483_647];

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
    for p in ["2", "7", "2147483647"] {
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
        (vec!["--backend", "cuda"], "needs --prime"),
        (
            vec!["--backend", "cuda", "--prime", "4611686018427387847"],
            "below 2^31",
        ),
    ] {
        let out = std::process::Command::new(&bin)
            .arg("rref")
            .arg(&file)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(msg));
    }
}
