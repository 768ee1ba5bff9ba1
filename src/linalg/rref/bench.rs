//! Timing of the CPU engine: RREF of a random n × n matrix mod p, and the 500 × 500
//! determinant mod 998244353 (Library Checker's size), on one thread and on all threads.

use super::dense::Matrix;
use super::echelon::{echelonize, EchelonOptions, Parallelism};
use super::field::{Field, Zp32, Zp64};
use rand::{Rng, SeedableRng};
use std::time::Instant;

/// Best-of-`reps` seconds of RREF of a random n × n matrix over `f`.
pub fn time_rref<F: Field>(
    f: &F,
    n: usize,
    par: Parallelism,
    reps: usize,
    gen: impl Fn(&mut rand_chacha::ChaCha8Rng) -> F::Elem,
) -> (f64, usize) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(n as u64);
    let a = Matrix::from_fn(n, n, |_, _| gen(&mut rng));
    let opt = EchelonOptions {
        parallelism: par,
        ..Default::default()
    };
    let mut best = f64::INFINITY;
    let mut rank = 0;
    for _ in 0..reps.max(1) {
        let mut b = a.clone();
        let t = Instant::now();
        rank = echelonize(f, &mut b, &opt).rank;
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, rank)
}

/// Best-of-`reps` seconds of a determinant of a random n × n matrix mod p (u32 words).
pub fn time_det_zp32(p: u32, n: usize, reps: usize) -> f64 {
    let f = Zp32::new(p).expect("prime");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let a = Matrix::from_fn(n, n, |_, _| rng.random_range(0..p));
    let opt = EchelonOptions {
        parallelism: Parallelism::None,
        ..Default::default()
    };
    let mut best = f64::INFINITY;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        std::hint::black_box(super::ops::det(&f, &a, &opt));
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

/// Prints the benchmark table (`pathtrack bench rref --n N --prime P`): RREF mod p of a
/// random n × n matrix on one thread and on all threads (u32 words when p < 2^31, u64
/// words otherwise), and the 500 × 500 determinant mod 998244353 on one thread.
pub fn run(n: usize, prime: u64) -> Result<(), String> {
    let threads = rayon::current_num_threads();
    println!(
        "rref CPU benchmark (SIMD: {}, {} threads available)",
        super::field::simd_level(),
        threads
    );
    println!("{:<34} {:>8} {:>12} {:>8}", "case", "n", "seconds", "rank");
    let reps = if n <= 1000 { 3 } else { 1 };
    if prime < 1 << 31 {
        let f = Zp32::new(prime as u32)?;
        let p = prime as u32;
        for (label, par) in [
            ("rref Z/p u32, 1 thread", Parallelism::None),
            ("rref Z/p u32, all threads", Parallelism::Rayon),
        ] {
            if par == Parallelism::Rayon && threads == 1 {
                continue;
            }
            let (s, r) = time_rref(&f, n, par, reps, |g| g.random_range(0..p));
            println!("{label:<34} {n:>8} {s:>12.4} {r:>8}");
        }
    } else {
        let f = Zp64::new(prime)?;
        for (label, par) in [
            ("rref Z/p u64, 1 thread", Parallelism::None),
            ("rref Z/p u64, all threads", Parallelism::Rayon),
        ] {
            if par == Parallelism::Rayon && threads == 1 {
                continue;
            }
            let (s, r) = time_rref(&f, n, par, reps, |g| g.random_range(0..prime));
            println!("{label:<34} {n:>8} {s:>12.4} {r:>8}");
        }
    }
    let s = time_det_zp32(998_244_353, 500, 5);
    println!(
        "{:<34} {:>8} {:>12.4} {:>8}",
        "det mod 998244353, 1 thread", 500, s, "-"
    );
    Ok(())
}
