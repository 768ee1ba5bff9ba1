//! Matrix permanents perm(A) = Σ_σ Π_i a_(i,σ(i)) on the CPU.
//!
//! Every algorithm here evaluates a *Gray-code sum*
//!
//! S = Σ_{g ∈ {0,1}^B} (−1)^|g| · Π_i v_i(g),   v(g) = v0 + Σ_{b ∈ g} c_b,
//!
//! visiting g in binary-reflected Gray-code order so that consecutive codes differ in one
//! bit b and v changes by ±c_b (O(n) per term instead of O(n²)); |g| alternates in parity
//! from one term to the next. [`glynn`] (B = n−1, perm = 2^(1−n)·S) and [`ryser`]
//! (Nijenhuis–Wilf, B = n−1, perm = (−1)^(n−1)·2·S; the full 2^n Ryser sum for exact
//! checks) only differ in v0, c_b and the final scale.
//!
//! Before the sum, rows and columns with a single nonzero are expanded (Laplace: perm(A) =
//! a_ij·perm(A without row i and column j)), and a zero row or column gives 0.
//!
//! Parallelism (as in SUperman, Alg. 3): the 2^B codes are split into a power-of-two number
//! of equal chunks; each chunk computes its first code and v directly (O(nB)) and then
//! walks its range. Chunk sums are combined in chunk order, so the result depends on the
//! chunk count (see [`PermOptions::chunks`]) but not on the thread count.
//!
//! Element types: `f64` and `Complex64` ([`permanent_f64`], [`permanent_c64`], with the
//! accumulation of [`Accumulation`]) and exact integers ([`exact::permanent_exact`]).
//! The float kernels keep v in split real/imaginary arrays padded to a multiple of
//! [`LANES`] and multiply [`LANES`] interleaved partial products, so the compiler emits
//! SIMD code; on x86-64 an AVX2+FMA copy is selected at run time.

pub mod accumulate;
pub mod exact;
mod glynn;
mod ryser;

pub use accumulate::Accumulation;
pub use exact::{permanent_exact, permanent_exact_with, ExactMethod, ExactOptions};

use crate::error::{Error, Result};
use accumulate::{Accumulator, DoubleDouble, Kahan, Plain};
use nalgebra::DMatrix;
use num_complex::Complex64;

/// Largest supported order (2^59 terms is far beyond any feasible run anyway).
pub const MAX_N: usize = 60;

/// Interleaved partial products in the float kernels (SIMD width in f64 for AVX2).
pub const LANES: usize = 4;

/// Which formula evaluates the permanent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Ryser with the Nijenhuis–Wilf halving, Gray-code order (see [`ryser`]).
    Ryser,
    /// Glynn's formula, Gray-code order (see [`glynn`]).
    #[default]
    Glynn,
}

/// Options of the floating-point permanents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PermOptions {
    pub algorithm: Algorithm,
    pub accumulation: Accumulation,
    /// Worker threads; 0 = all available cores, 1 = run on the calling thread.
    pub threads: usize,
    /// Number of chunks of the Gray-code range, rounded down to a power of two and capped
    /// at 2^(n−1); 0 = automatic (a function of n only, so results do not depend on
    /// `threads`).
    pub chunks: usize,
}

impl Default for PermOptions {
    fn default() -> Self {
        PermOptions {
            algorithm: Algorithm::Glynn,
            accumulation: Accumulation::Plain,
            threads: 1,
            chunks: 0,
        }
    }
}

/// A Gray-code sum: v0 (length n) and the flip vectors c_b (B of them, each length n).
pub(crate) struct GraySum<T> {
    pub n: usize,
    pub v0: Vec<T>,
    pub cols: Vec<Vec<T>>,
}

impl<T> GraySum<T> {
    pub fn bits(&self) -> u32 {
        self.cols.len() as u32
    }
}

/// The chunking of 2^bits codes: (chunk length, chunk count), both powers of two.
pub(crate) fn chunk_plan(bits: u32, chunks: usize) -> (u64, u64) {
    let total: u64 = 1u64 << bits;
    let count = if chunks == 0 {
        // Automatic: at least 4096 codes per chunk, at most 256 chunks.
        (total >> 12).clamp(1, 256)
    } else {
        let c = chunks.min(1usize << 62) as u64;
        (1u64 << (63 - c.leading_zeros())).min(total)
    };
    (total / count, count)
}

/// Runs `f(chunk)` for every chunk, on `threads` threads, and returns the results in
/// chunk order.
pub(crate) fn par_chunks<R, F>(threads: usize, count: u64, f: F) -> Result<Vec<R>>
where
    R: Send,
    F: Fn(u64) -> R + Sync + Send,
{
    let threads = if threads == 0 {
        std::thread::available_parallelism()
            .map(|t| t.get())
            .unwrap_or(1)
    } else {
        threads
    };
    if threads == 1 || count == 1 {
        return Ok((0..count).map(f).collect());
    }
    use rayon::prelude::*;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Internal(format!("permanent: cannot start {threads} threads: {e}")))?;
    Ok(pool.install(|| {
        (0..count as usize)
            .into_par_iter()
            .map(|c| f(c as u64))
            .collect()
    }))
}

/// Laplace expansion along rows/columns with one nonzero, repeated until none is left.
/// Returns `None` when a zero row or column appears (perm = 0), otherwise the expanded
/// pivots (perm(A) = Π pivots · perm(rest)) and the remaining matrix.
pub(crate) fn reduce<T: nalgebra::Scalar + Copy>(
    a: &DMatrix<T>,
    zero: T,
) -> Option<(Vec<T>, DMatrix<T>)> {
    let mut m = a.clone();
    let mut pivots = Vec::new();
    'outer: loop {
        let n = m.nrows();
        if n == 0 {
            break;
        }
        for transpose in [false, true] {
            for i in 0..n {
                let mut count = 0;
                let mut at = 0;
                for j in 0..n {
                    let x = if transpose { m[(j, i)] } else { m[(i, j)] };
                    if x != zero {
                        count += 1;
                        at = j;
                    }
                }
                match count {
                    0 => return None,
                    1 => {
                        let (r, c) = if transpose { (at, i) } else { (i, at) };
                        pivots.push(m[(r, c)]);
                        m = m.remove_row(r).remove_column(c);
                        continue 'outer;
                    }
                    _ => {}
                }
            }
        }
        break;
    }
    Some((pivots, m))
}

pub(crate) fn check_square<T>(a: &DMatrix<T>, what: &str) -> Result<usize> {
    if a.nrows() != a.ncols() {
        return Err(Error::Usage(format!(
            "{what}: matrix is {}×{}, a permanent needs a square matrix",
            a.nrows(),
            a.ncols()
        )));
    }
    if a.nrows() > MAX_N {
        return Err(Error::Usage(format!(
            "{what}: order {} exceeds the supported maximum {MAX_N}",
            a.nrows()
        )));
    }
    Ok(a.nrows())
}

fn check_finite(bad: Option<(usize, usize)>, what: &str) -> Result<()> {
    match bad {
        Some((i, j)) => Err(Error::Usage(format!(
            "{what}: entry ({}, {}) is not finite",
            i + 1,
            j + 1
        ))),
        None => Ok(()),
    }
}

/// Permanent of a real matrix.
pub fn permanent_f64(a: &DMatrix<f64>, opts: &PermOptions) -> Result<f64> {
    check_square(a, "permanent")?;
    check_finite(first_index(a, |x: &f64| !x.is_finite()), "permanent")?;
    let Some((pivots, m)) = reduce(a, 0.0) else {
        return Ok(0.0);
    };
    let factor: f64 = pivots.iter().product();
    let n = m.nrows();
    if n == 0 {
        return Ok(factor);
    }
    let (gs, scale) = match opts.algorithm {
        Algorithm::Glynn => (
            glynn::setup(n, |i, j| m[(i, j)], 0.0),
            0.5f64.powi(n as i32 - 1),
        ),
        Algorithm::Ryser => (
            ryser::setup(n, |i, j| m[(i, j)], 0.0),
            if n % 2 == 1 { 2.0 } else { -2.0 },
        ),
    };
    let s = match opts.accumulation {
        Accumulation::Plain => gray_sum_f64::<Plain>(&gs, opts)?,
        Accumulation::Kahan => gray_sum_f64::<Kahan>(&gs, opts)?,
        Accumulation::DoubleDouble => gray_sum_f64::<DoubleDouble>(&gs, opts)?,
    };
    Ok(factor * (s * scale))
}

/// Permanent of a complex matrix.
pub fn permanent_c64(a: &DMatrix<Complex64>, opts: &PermOptions) -> Result<Complex64> {
    check_square(a, "permanent")?;
    check_finite(first_index(a, |x: &Complex64| !x.is_finite()), "permanent")?;
    let zero = Complex64::new(0.0, 0.0);
    let Some((pivots, m)) = reduce(a, zero) else {
        return Ok(zero);
    };
    let factor: Complex64 = pivots.iter().product();
    let n = m.nrows();
    if n == 0 {
        return Ok(factor);
    }
    let (gs, scale) = match opts.algorithm {
        Algorithm::Glynn => (
            glynn::setup(n, |i, j| m[(i, j)], zero),
            0.5f64.powi(n as i32 - 1),
        ),
        Algorithm::Ryser => (
            ryser::setup(n, |i, j| m[(i, j)], zero),
            if n % 2 == 1 { 2.0 } else { -2.0 },
        ),
    };
    let s = match opts.accumulation {
        Accumulation::Plain => gray_sum_c64::<Plain>(&gs, opts)?,
        Accumulation::Kahan => gray_sum_c64::<Kahan>(&gs, opts)?,
        Accumulation::DoubleDouble => gray_sum_c64::<DoubleDouble>(&gs, opts)?,
    };
    Ok(factor * (s * scale))
}

fn first_index<T>(a: &DMatrix<T>, bad: impl Fn(&T) -> bool) -> Option<(usize, usize)> {
    (0..a.nrows())
        .flat_map(|i| (0..a.ncols()).map(move |j| (i, j)))
        .find(|&(i, j)| bad(&a[(i, j)]))
}

/// Brute-force permanent over all n! permutations (reference for tests; n ≤ 10 or so).
pub fn permanent_brute<T>(a: &DMatrix<T>) -> T
where
    T: Clone + num_traits::Zero + num_traits::One + std::ops::Mul<Output = T>,
{
    fn rec<T>(a: &DMatrix<T>, row: usize, used: &mut [bool], acc: T, out: &mut T)
    where
        T: Clone + num_traits::Zero + num_traits::One + std::ops::Mul<Output = T>,
    {
        let n = a.nrows();
        if row == n {
            *out = out.clone() + acc;
            return;
        }
        for j in 0..n {
            if !used[j] {
                used[j] = true;
                rec(a, row + 1, used, acc.clone() * a[(row, j)].clone(), out);
                used[j] = false;
            }
        }
    }
    let mut out = T::zero();
    let mut used = vec![false; a.nrows()];
    rec(a, 0, &mut used, T::one(), &mut out);
    out
}

// ---------------------------------------------------------------------------------------
// Float kernels.

/// v0 and the flip columns in split re/im arrays, padded to a multiple of LANES (v0 with
/// 1 + 0i, columns with 0, so the padding contributes a factor 1 to every product).
struct Split {
    np: usize,
    v0re: Vec<f64>,
    v0im: Vec<f64>,
    cre: Vec<f64>,
    cim: Vec<f64>,
}

impl Split {
    fn new<T: Copy>(gs: &GraySum<T>, re: impl Fn(T) -> f64, im: impl Fn(T) -> f64) -> Split {
        let n = gs.n;
        let np = n.div_ceil(LANES) * LANES;
        let mut v0re = vec![1.0; np];
        let mut v0im = vec![0.0; np];
        for i in 0..n {
            v0re[i] = re(gs.v0[i]);
            v0im[i] = im(gs.v0[i]);
        }
        let b = gs.cols.len();
        let mut cre = vec![0.0; np * b];
        let mut cim = vec![0.0; np * b];
        for (k, col) in gs.cols.iter().enumerate() {
            for i in 0..n {
                cre[k * np + i] = re(col[i]);
                cim[k * np + i] = im(col[i]);
            }
        }
        Split {
            np,
            v0re,
            v0im,
            cre,
            cim,
        }
    }
}

#[inline(always)]
fn fmul_add<const FMA: bool>(a: f64, b: f64, c: f64) -> f64 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Π_i (vre_i + i·vim_i) with LANES interleaved partial products.
#[inline(always)]
fn cprod<const FMA: bool>(vre: &[f64], vim: &[f64]) -> (f64, f64) {
    let mut pr = [0.0; LANES];
    let mut pi = [0.0; LANES];
    pr.copy_from_slice(&vre[..LANES]);
    pi.copy_from_slice(&vim[..LANES]);
    for (a, b) in vre[LANES..]
        .chunks_exact(LANES)
        .zip(vim[LANES..].chunks_exact(LANES))
    {
        for l in 0..LANES {
            let r = fmul_add::<FMA>(pr[l], a[l], -(pi[l] * b[l]));
            let i = fmul_add::<FMA>(pr[l], b[l], pi[l] * a[l]);
            pr[l] = r;
            pi[l] = i;
        }
    }
    // Combine the lanes pairwise: (p0·p1)·(p2·p3).
    let mut w = LANES;
    while w > 1 {
        w /= 2;
        for l in 0..w {
            let (ar, ai, br, bi) = (pr[l], pi[l], pr[l + w], pi[l + w]);
            pr[l] = fmul_add::<FMA>(ar, br, -(ai * bi));
            pi[l] = fmul_add::<FMA>(ar, bi, ai * br);
        }
    }
    (pr[0], pi[0])
}

/// Π_i v_i with LANES interleaved partial products.
#[inline(always)]
fn rprod(v: &[f64]) -> f64 {
    let mut p = [0.0; LANES];
    p.copy_from_slice(&v[..LANES]);
    for a in v[LANES..].chunks_exact(LANES) {
        for l in 0..LANES {
            p[l] *= a[l];
        }
    }
    let mut w = LANES;
    while w > 1 {
        w /= 2;
        for l in 0..w {
            p[l] *= p[l + w];
        }
    }
    p[0]
}

/// First code of a chunk and its v (computed directly).
#[inline(always)]
fn chunk_start(s: &Split, start: u64, bits: u32, vre: &mut [f64], vim: &mut [f64]) -> u64 {
    let np = s.np;
    vre.copy_from_slice(&s.v0re);
    vim.copy_from_slice(&s.v0im);
    let g = start ^ (start >> 1);
    for b in 0..bits as usize {
        if (g >> b) & 1 == 1 {
            for i in 0..np {
                vre[i] += s.cre[b * np + i];
                vim[i] += s.cim[b * np + i];
            }
        }
    }
    g
}

/// Sum of the terms with even and odd code index over [start, end), as accumulator parts
/// [even re, even im, odd re, odd im].
#[inline(always)]
fn c64_chunk_body<A: Accumulator, const FMA: bool>(
    s: &Split,
    bits: u32,
    start: u64,
    end: u64,
) -> [(f64, f64); 4] {
    let np = s.np;
    let mut vre = vec![0.0; np];
    let mut vim = vec![0.0; np];
    let mut g = chunk_start(s, start, bits, &mut vre, &mut vim);
    let mut acc = [A::default(); 4];
    let mut k = start;
    loop {
        let (pr, pi) = cprod::<FMA>(&vre, &vim);
        let o = 2 * (k & 1) as usize;
        acc[o].add(pr);
        acc[o + 1].add(pi);
        k += 1;
        if k == end {
            break;
        }
        let b = k.trailing_zeros() as usize;
        g ^= 1 << b;
        let cr = &s.cre[b * np..(b + 1) * np];
        let ci = &s.cim[b * np..(b + 1) * np];
        if (g >> b) & 1 == 1 {
            for i in 0..np {
                vre[i] += cr[i];
                vim[i] += ci[i];
            }
        } else {
            for i in 0..np {
                vre[i] -= cr[i];
                vim[i] -= ci[i];
            }
        }
    }
    [
        acc[0].parts(),
        acc[1].parts(),
        acc[2].parts(),
        acc[3].parts(),
    ]
}

#[inline(always)]
fn f64_chunk_body<A: Accumulator>(s: &Split, bits: u32, start: u64, end: u64) -> [(f64, f64); 2] {
    let np = s.np;
    let mut v = vec![0.0; np];
    let mut scratch = vec![0.0; np];
    let mut g = chunk_start(s, start, bits, &mut v, &mut scratch);
    let mut acc = [A::default(); 2];
    let mut k = start;
    loop {
        acc[(k & 1) as usize].add(rprod(&v));
        k += 1;
        if k == end {
            break;
        }
        let b = k.trailing_zeros() as usize;
        g ^= 1 << b;
        let c = &s.cre[b * np..(b + 1) * np];
        if (g >> b) & 1 == 1 {
            for i in 0..np {
                v[i] += c[i];
            }
        } else {
            for i in 0..np {
                v[i] -= c[i];
            }
        }
    }
    [acc[0].parts(), acc[1].parts()]
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn c64_chunk_avx2<A: Accumulator>(
    s: &Split,
    bits: u32,
    start: u64,
    end: u64,
) -> [(f64, f64); 4] {
    c64_chunk_body::<A, true>(s, bits, start, end)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn f64_chunk_avx2<A: Accumulator>(
    s: &Split,
    bits: u32,
    start: u64,
    end: u64,
) -> [(f64, f64); 2] {
    f64_chunk_body::<A>(s, bits, start, end)
}

fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

fn c64_chunk<A: Accumulator>(s: &Split, bits: u32, start: u64, end: u64) -> [(f64, f64); 4] {
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked at run time just above).
        return unsafe { c64_chunk_avx2::<A>(s, bits, start, end) };
    }
    c64_chunk_body::<A, false>(s, bits, start, end)
}

fn f64_chunk<A: Accumulator>(s: &Split, bits: u32, start: u64, end: u64) -> [(f64, f64); 2] {
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked at run time just above).
        return unsafe { f64_chunk_avx2::<A>(s, bits, start, end) };
    }
    f64_chunk_body::<A>(s, bits, start, end)
}

/// S = Σ_g (−1)^|g| Π_i v_i(g) for a complex Gray-code sum.
fn gray_sum_c64<A: Accumulator>(gs: &GraySum<Complex64>, opts: &PermOptions) -> Result<Complex64> {
    let s = Split::new(gs, |z| z.re, |z| z.im);
    let bits = gs.bits();
    let (len, count) = chunk_plan(bits, opts.chunks);
    let parts = par_chunks(opts.threads, count, |c| {
        c64_chunk::<A>(&s, bits, c * len, (c + 1) * len)
    })?;
    let (mut re, mut im) = (A::default(), A::default());
    for p in &parts {
        re.add_parts(p[0]);
        im.add_parts(p[1]);
        re.add_parts((-p[2].0, -p[2].1));
        im.add_parts((-p[3].0, -p[3].1));
    }
    Ok(Complex64::new(re.value(), im.value()))
}

/// S = Σ_g (−1)^|g| Π_i v_i(g) for a real Gray-code sum.
fn gray_sum_f64<A: Accumulator>(gs: &GraySum<f64>, opts: &PermOptions) -> Result<f64> {
    let s = Split::new(gs, |x| x, |_| 0.0);
    let bits = gs.bits();
    let (len, count) = chunk_plan(bits, opts.chunks);
    let parts = par_chunks(opts.threads, count, |c| {
        f64_chunk::<A>(&s, bits, c * len, (c + 1) * len)
    })?;
    let mut acc = A::default();
    for p in &parts {
        acc.add_parts(p[0]);
        acc.add_parts((-p[1].0, -p[1].1));
    }
    Ok(acc.value())
}

// ---------------------------------------------------------------------------------------
// Benchmark.

/// Dense complex matrix with entries uniform in [0,1) + i·[0,1), seeded by n (the bench
/// matrices; the same seed gives the same matrix on every machine).
pub fn bench_matrix(n: usize) -> DMatrix<Complex64> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x9e37_79b9 ^ n as u64);
    DMatrix::from_fn(n, n, |_, _| {
        Complex64::new(rng.random::<f64>(), rng.random::<f64>())
    })
}

/// One line of the bench table.
#[derive(Clone, Debug)]
pub struct BenchRow {
    pub n: usize,
    pub threads: usize,
    pub seconds: f64,
    pub kind: String,
    pub value: Complex64,
}

/// Times the complex permanent of [`bench_matrix`]`(n)` for each size and thread count
/// (Glynn, plain and double-double accumulation) and prints a table to stdout.
pub fn bench(sizes: &[usize], threads: &[usize]) -> Result<Vec<BenchRow>> {
    let mut rows = Vec::new();
    println!(
        "{:>3} {:>7} {:>10}  {:<22} {}",
        "n", "threads", "seconds", "type", "value"
    );
    for &n in sizes {
        let a = bench_matrix(n);
        for &t in threads {
            for acc in [Accumulation::Plain, Accumulation::DoubleDouble] {
                let opts = PermOptions {
                    algorithm: Algorithm::Glynn,
                    accumulation: acc,
                    threads: t,
                    chunks: 0,
                };
                let t0 = std::time::Instant::now();
                let value = permanent_c64(&a, &opts)?;
                let seconds = t0.elapsed().as_secs_f64();
                let kind = format!("c64 glynn {acc:?}");
                println!("{n:>3} {t:>7} {seconds:>10.4}  {kind:<22} {value:.12e}");
                rows.push(BenchRow {
                    n,
                    threads: t,
                    seconds,
                    kind,
                    value,
                });
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_plan_covers_range() {
        for bits in 0..20 {
            for chunks in [0, 1, 3, 4, 1000, usize::MAX] {
                let (len, count) = chunk_plan(bits, chunks);
                assert_eq!(len * count, 1u64 << bits);
                assert!(count.is_power_of_two() && len.is_power_of_two());
            }
        }
    }

    #[test]
    fn reduce_expands_single_nonzero_lines() {
        // Row 0 has a single nonzero 3 at column 1; the rest is [[1,2],[4,5]] → perm 13.
        let a = DMatrix::from_row_slice(3, 3, &[0.0, 3.0, 0.0, 1.0, 7.0, 2.0, 4.0, 9.0, 5.0]);
        let (piv, m) = reduce(&a, 0.0).unwrap();
        assert_eq!(piv, vec![3.0]);
        assert_eq!(m, DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 4.0, 5.0]));
        let z = DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 2.0, 0.0]);
        assert!(reduce(&z, 0.0).is_none());
    }
}
