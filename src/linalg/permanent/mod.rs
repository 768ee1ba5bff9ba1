//! Matrix permanents perm(A) = Σ_σ Π_i a_(i,σ(i)) on the CPU.
//!
//! Every algorithm here evaluates a *Gray-code sum*
//!
//! S = Σ_{g ∈ {0,1}^B} (−1)^|g| · Π_i v_i(g),   v(g) = v0 + Σ_{b ∈ g} c_b,
//!
//! visiting g in binary-reflected Gray-code order so that consecutive codes differ in one
//! bit b and v changes by ±c_b (O(n) per term instead of O(n²)); |g| alternates in parity
//! from one term to the next. `glynn` (B = n−1, perm = 2^(1−n)·S) and `ryser`
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
//! The float kernels evaluate blocks of W = 4 or 8 consecutive codes at once, one code
//! per SIMD lane, each product split into 4 interleaved partial products over the rows
//! (see [`Kernel`] and the comment above the kernels); on x86-64 AVX-512 / AVX2+FMA
//! copies are selected at run time. Rows are padded to a multiple of [`LANES`].

pub mod accumulate;
pub mod cuda;
pub mod exact;
mod glynn;
mod ryser;

pub use accumulate::Accumulation;
pub use exact::{
    permanent_exact, permanent_exact_gaussian, permanent_exact_with, ExactMethod, ExactOptions,
};

use crate::error::{Error, Result};
use accumulate::{Accumulator, DoubleDouble, Kahan, LaneAccumulator, Plain};
use nalgebra::DMatrix;
use num_complex::Complex64;

/// Largest supported order (2^59 terms is far beyond any feasible run anyway).
pub const MAX_N: usize = 60;

/// Row padding of the float kernels (= the number of interleaved partial products).
pub const LANES: usize = 4;

/// Which formula evaluates the permanent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Ryser with the Nijenhuis–Wilf halving, Gray-code order (see `ryser`).
    Ryser,
    /// Glynn's formula, Gray-code order (see `glynn`).
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
    /// Float kernel (for tests and benchmarks; `Auto` otherwise).
    pub kernel: Kernel,
}

impl Default for PermOptions {
    fn default() -> Self {
        PermOptions {
            algorithm: Algorithm::Glynn,
            accumulation: Accumulation::Plain,
            threads: 1,
            chunks: 0,
            kernel: Kernel::Auto,
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
        .thread_name(|i| format!("permanent-{i}"))
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
//
// Blocked evaluation: an aligned block of W = 2^s consecutive Gray indices k = qW + r
// has codes gray(k) = gray(q)·2^s + T, where T runs over all W low-bit patterns. So the W
// row-sum vectors of block q are u(q) + D_T, with u(q) = v0 + Σ_{b ∈ gray(q)} c_(b+s)
// updated once per block (one column, Gray order in q) and D_T = Σ_{b ∈ T} c_b a fixed
// table; the sign is (−1)^(q + |T|). The W products of a block are independent, so they
// fill W SIMD lanes; each is split into 4 interleaved partial products over the rows to
// shorten the dependency chains.

/// Which float kernel runs (`Auto` picks the fastest the CPU and chunk length allow).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Kernel {
    #[default]
    Auto,
    /// One code at a time, row sums updated in place (any chunk length).
    Simple,
    /// Blocks of 4 codes (AVX2+FMA when available); needs chunks of ≥ 4 codes.
    Block4,
    /// Blocks of 8 codes (AVX-512 when available); needs chunks of ≥ 8 codes.
    Block8,
}

/// v0 and the flip columns in split re/im arrays, padded to a multiple of 4 rows (v0 with
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

    /// D_T = Σ_{b ∈ T} c_b for the first log2(W) flip columns, row-major `[i·W + T]`
    /// (D_T = D_(T − top bit) + c_(top bit): at most log2(W) − 1 roundings).
    fn block_table<const W: usize>(&self) -> (Vec<f64>, Vec<f64>) {
        let np = self.np;
        let mut dre = vec![0.0; np * W];
        let mut dim = vec![0.0; np * W];
        for t in 1..W {
            let hb = (usize::BITS - 1 - t.leading_zeros()) as usize;
            let rest = t & !(1 << hb);
            for i in 0..np {
                dre[i * W + t] = dre[i * W + rest] + self.cre[hb * np + i];
                dim[i * W + t] = dim[i * W + rest] + self.cim[hb * np + i];
            }
        }
        (dre, dim)
    }

    /// v0 + Σ_{b ∈ g} c_(b+shift): the row sums at the start of a chunk.
    fn start_vector(&self, g: u64, shift: u32, bits: u32) -> (Vec<f64>, Vec<f64>) {
        let np = self.np;
        let mut vre = self.v0re.clone();
        let mut vim = self.v0im.clone();
        for b in 0..(bits - shift) as usize {
            if (g >> b) & 1 == 1 {
                let c = (b + shift as usize) * np;
                for i in 0..np {
                    vre[i] += self.cre[c + i];
                    vim[i] += self.cim[c + i];
                }
            }
        }
        (vre, vim)
    }

    /// v ± c_col (complex).
    #[inline(always)]
    fn flip(&self, vre: &mut [f64], vim: &mut [f64], col: usize, add: bool) {
        let np = self.np;
        let cr = &self.cre[col * np..(col + 1) * np];
        let ci = &self.cim[col * np..(col + 1) * np];
        if add {
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
}

#[inline(always)]
fn fmul_add<const FMA: bool>(a: f64, b: f64, c: f64) -> f64 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

#[inline(always)]
fn cmul<const FMA: bool>(ar: f64, ai: f64, br: f64, bi: f64) -> (f64, f64) {
    (
        fmul_add::<FMA>(ar, br, -(ai * bi)),
        fmul_add::<FMA>(ar, bi, ai * br),
    )
}

/// Signed chunk sums, to be added in this order: (re parts, im parts) per entry.
type ChunkParts = Vec<[(f64, f64); 2]>;

fn neg((h, l): (f64, f64)) -> (f64, f64) {
    (-h, -l)
}

/// Lane accumulators → signed parts: sign (−1)^(parity + |T|).
fn lanes_to_parts<L: LaneAccumulator<W>, const W: usize>(acc: &[L; 4]) -> ChunkParts {
    let mut out = Vec::with_capacity(2 * W);
    for parity in 0..2 {
        for t in 0..W {
            let (re, im) = (acc[2 * parity].parts(t), acc[2 * parity + 1].parts(t));
            if (parity + t.count_ones() as usize) % 2 == 0 {
                out.push([re, im]);
            } else {
                out.push([neg(re), neg(im)]);
            }
        }
    }
    out
}

/// Blocked complex kernel over codes [start, end) (both multiples of W).
#[inline(always)]
fn c64_block_body<L: LaneAccumulator<W>, const W: usize, const FMA: bool>(
    s: &Split,
    dre: &[f64],
    dim: &[f64],
    bits: u32,
    start: u64,
    end: u64,
) -> [L; 4] {
    let sh = W.trailing_zeros();
    let (q0, q1) = (start >> sh, end >> sh);
    let mut gq = q0 ^ (q0 >> 1);
    let (mut ure, mut uim) = s.start_vector(gq, sh, bits);
    let mut acc = [L::new(); 4];
    let mut q = q0;
    loop {
        let mut pr = [[0.0; W]; 4];
        let mut pi = [[0.0; W]; 4];
        for r in 0..4 {
            for t in 0..W {
                pr[r][t] = ure[r] + dre[r * W + t];
                pi[r][t] = uim[r] + dim[r * W + t];
            }
        }
        for (((ur4, ui4), dr4), di4) in ure[4..]
            .chunks_exact(4)
            .zip(uim[4..].chunks_exact(4))
            .zip(dre[4 * W..].chunks_exact(4 * W))
            .zip(dim[4 * W..].chunks_exact(4 * W))
        {
            for r in 0..4 {
                for t in 0..W {
                    let xr = ur4[r] + dr4[r * W + t];
                    let xi = ui4[r] + di4[r * W + t];
                    let (a, b) = cmul::<FMA>(pr[r][t], pi[r][t], xr, xi);
                    pr[r][t] = a;
                    pi[r][t] = b;
                }
            }
        }
        let mut qr = [0.0; W];
        let mut qi = [0.0; W];
        for t in 0..W {
            let (ar, ai) = cmul::<FMA>(pr[0][t], pi[0][t], pr[1][t], pi[1][t]);
            let (br, bi) = cmul::<FMA>(pr[2][t], pi[2][t], pr[3][t], pi[3][t]);
            (qr[t], qi[t]) = cmul::<FMA>(ar, ai, br, bi);
        }
        let o = 2 * (q & 1) as usize;
        acc[o].add(&qr);
        acc[o + 1].add(&qi);
        q += 1;
        if q == q1 {
            break;
        }
        let b = q.trailing_zeros();
        gq ^= 1 << b;
        s.flip(&mut ure, &mut uim, (b + sh) as usize, (gq >> b) & 1 == 1);
    }
    acc
}

/// Blocked real kernel over codes [start, end) (both multiples of W).
#[inline(always)]
fn f64_block_body<L: LaneAccumulator<W>, const W: usize>(
    s: &Split,
    dre: &[f64],
    bits: u32,
    start: u64,
    end: u64,
) -> [L; 4] {
    let sh = W.trailing_zeros();
    let (q0, q1) = (start >> sh, end >> sh);
    let mut gq = q0 ^ (q0 >> 1);
    let (mut u, mut scratch) = s.start_vector(gq, sh, bits);
    let mut acc = [L::new(); 4];
    let mut q = q0;
    loop {
        let mut p = [[0.0; W]; 4];
        for r in 0..4 {
            for t in 0..W {
                p[r][t] = u[r] + dre[r * W + t];
            }
        }
        for (u4, d4) in u[4..].chunks_exact(4).zip(dre[4 * W..].chunks_exact(4 * W)) {
            for r in 0..4 {
                for t in 0..W {
                    p[r][t] *= u4[r] + d4[r * W + t];
                }
            }
        }
        let mut x = [0.0; W];
        for t in 0..W {
            x[t] = (p[0][t] * p[1][t]) * (p[2][t] * p[3][t]);
        }
        acc[2 * (q & 1) as usize].add(&x);
        q += 1;
        if q == q1 {
            break;
        }
        let b = q.trailing_zeros();
        gq ^= 1 << b;
        // The imaginary parts are all zero: `scratch` stays zero.
        s.flip(&mut u, &mut scratch, (b + sh) as usize, (gq >> b) & 1 == 1);
    }
    acc
}

/// One code at a time (short chunks); sums of even and odd codes.
fn c64_simple<A: Accumulator>(s: &Split, bits: u32, start: u64, end: u64) -> ChunkParts {
    let np = s.np;
    let mut g = start ^ (start >> 1);
    let (mut vre, mut vim) = s.start_vector(g, 0, bits);
    let mut acc = [A::default(); 4];
    let mut k = start;
    loop {
        let (mut pr, mut pi) = (vre[0], vim[0]);
        for i in 1..np {
            (pr, pi) = cmul::<false>(pr, pi, vre[i], vim[i]);
        }
        let o = 2 * (k & 1) as usize;
        acc[o].add(pr);
        acc[o + 1].add(pi);
        k += 1;
        if k == end {
            break;
        }
        let b = k.trailing_zeros();
        g ^= 1 << b;
        s.flip(&mut vre, &mut vim, b as usize, (g >> b) & 1 == 1);
    }
    vec![
        [acc[0].parts(), acc[1].parts()],
        [neg(acc[2].parts()), neg(acc[3].parts())],
    ]
}

macro_rules! target_kernels {
    ($name:ident, $feat:literal, $body:ident, $w:literal, $fma:literal, complex) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feat)]
        unsafe fn $name<A: Accumulator>(
            s: &Split,
            d: &(Vec<f64>, Vec<f64>),
            bits: u32,
            start: u64,
            end: u64,
        ) -> ChunkParts {
            type L<A> = <A as AccLanes<$w>>::L;
            lanes_to_parts::<L<A>, $w>(&$body::<L<A>, $w, $fma>(s, &d.0, &d.1, bits, start, end))
        }
    };
    ($name:ident, $feat:literal, $body:ident, $w:literal, real) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feat)]
        unsafe fn $name<A: Accumulator>(
            s: &Split,
            d: &(Vec<f64>, Vec<f64>),
            bits: u32,
            start: u64,
            end: u64,
        ) -> ChunkParts {
            type L<A> = <A as AccLanes<$w>>::L;
            lanes_to_parts::<L<A>, $w>(&$body::<L<A>, $w>(s, &d.0, bits, start, end))
        }
    };
}

/// Maps an accumulator to its W-lane form.
trait AccLanes<const W: usize> {
    type L: LaneAccumulator<W>;
}
impl<A: Accumulator> AccLanes<4> for A {
    type L = A::Lanes4;
}
impl<A: Accumulator> AccLanes<8> for A {
    type L = A::Lanes8;
}

target_kernels!(
    c64_block4_avx2,
    "avx2,fma",
    c64_block_body,
    4,
    true,
    complex
);
target_kernels!(
    c64_block8_avx512,
    "avx512f,avx2,fma",
    c64_block_body,
    8,
    true,
    complex
);
target_kernels!(f64_block4_avx2, "avx2,fma", f64_block_body, 4, real);
target_kernels!(
    f64_block8_avx512,
    "avx512f,avx2,fma",
    f64_block_body,
    8,
    real
);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cpu {
    Generic,
    Avx2,
    Avx512,
}

fn cpu() -> Cpu {
    #[cfg(target_arch = "x86_64")]
    {
        let avx2 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
        if avx2 && std::is_x86_feature_detected!("avx512f") {
            return Cpu::Avx512;
        }
        if avx2 {
            return Cpu::Avx2;
        }
    }
    Cpu::Generic
}

/// The kernel actually run for a request, the chunk length and the CPU.
fn pick_kernel(req: Kernel, len: u64, cpu: Cpu) -> Kernel {
    let fits = |k: Kernel| match k {
        Kernel::Block8 => len >= 8,
        Kernel::Block4 => len >= 4,
        _ => true,
    };
    let k = match req {
        // On AVX-512 the 8-wide blocks are preferred; elsewhere 4-wide.
        Kernel::Auto if cpu == Cpu::Avx512 => Kernel::Block8,
        Kernel::Auto => Kernel::Block4,
        k => k,
    };
    [k, Kernel::Block4, Kernel::Simple]
        .into_iter()
        .find(|&k| fits(k) && k != Kernel::Auto)
        .unwrap_or(Kernel::Simple)
}

/// Runs one chunk of a complex Gray-code sum with the chosen kernel.
fn c64_chunk<A: Accumulator>(
    s: &Split,
    tables: &Tables,
    kernel: Kernel,
    cpu: Cpu,
    bits: u32,
    start: u64,
    end: u64,
) -> ChunkParts {
    match (kernel, cpu) {
        #[cfg(target_arch = "x86_64")]
        (Kernel::Block8, Cpu::Avx512) => {
            // SAFETY: AVX-512F, AVX2 and FMA were detected at run time (`cpu()`).
            unsafe { c64_block8_avx512::<A>(s, &tables.d8, bits, start, end) }
        }
        #[cfg(target_arch = "x86_64")]
        (Kernel::Block4, Cpu::Avx2 | Cpu::Avx512) => {
            // SAFETY: AVX2 and FMA were detected at run time (`cpu()`).
            unsafe { c64_block4_avx2::<A>(s, &tables.d4, bits, start, end) }
        }
        (Kernel::Block8, _) => lanes_to_parts::<A::Lanes8, 8>(
            &c64_block_body::<A::Lanes8, 8, false>(s, &tables.d8.0, &tables.d8.1, bits, start, end),
        ),
        (Kernel::Block4, _) => lanes_to_parts::<A::Lanes4, 4>(
            &c64_block_body::<A::Lanes4, 4, false>(s, &tables.d4.0, &tables.d4.1, bits, start, end),
        ),
        _ => c64_simple::<A>(s, bits, start, end),
    }
}

/// Runs one chunk of a real Gray-code sum with the chosen kernel.
fn f64_chunk<A: Accumulator>(
    s: &Split,
    tables: &Tables,
    kernel: Kernel,
    cpu: Cpu,
    bits: u32,
    start: u64,
    end: u64,
) -> ChunkParts {
    match (kernel, cpu) {
        #[cfg(target_arch = "x86_64")]
        (Kernel::Block8, Cpu::Avx512) => {
            // SAFETY: AVX-512F, AVX2 and FMA were detected at run time (`cpu()`).
            unsafe { f64_block8_avx512::<A>(s, &tables.d8, bits, start, end) }
        }
        #[cfg(target_arch = "x86_64")]
        (Kernel::Block4, Cpu::Avx2 | Cpu::Avx512) => {
            // SAFETY: AVX2 and FMA were detected at run time (`cpu()`).
            unsafe { f64_block4_avx2::<A>(s, &tables.d4, bits, start, end) }
        }
        (Kernel::Block8, _) => lanes_to_parts::<A::Lanes8, 8>(&f64_block_body::<A::Lanes8, 8>(
            s,
            &tables.d8.0,
            bits,
            start,
            end,
        )),
        (Kernel::Block4, _) => lanes_to_parts::<A::Lanes4, 4>(&f64_block_body::<A::Lanes4, 4>(
            s,
            &tables.d4.0,
            bits,
            start,
            end,
        )),
        // The simple complex kernel on a zero imaginary part is exact in the imaginary
        // part (0·x = 0 and 0 + 0 = 0), so it serves the real case too.
        _ => c64_simple::<A>(s, bits, start, end),
    }
}

/// Block tables of the kernel in use (empty when not needed).
struct Tables {
    d4: (Vec<f64>, Vec<f64>),
    d8: (Vec<f64>, Vec<f64>),
}

impl Tables {
    fn new(s: &Split, kernel: Kernel) -> Tables {
        Tables {
            d4: if kernel == Kernel::Block4 {
                s.block_table::<4>()
            } else {
                Default::default()
            },
            d8: if kernel == Kernel::Block8 {
                s.block_table::<8>()
            } else {
                Default::default()
            },
        }
    }
}

/// S = Σ_g (−1)^|g| Π_i v_i(g) for a complex (or, with `real`, real) Gray-code sum.
fn gray_sum<A: Accumulator>(
    s: &Split,
    bits: u32,
    opts: &PermOptions,
    real: bool,
) -> Result<(f64, f64)> {
    let (len, count) = chunk_plan(bits, opts.chunks);
    let cpu = cpu();
    let kernel = pick_kernel(opts.kernel, len, cpu);
    let tables = Tables::new(s, kernel);
    let parts = par_chunks(opts.threads, count, |c| {
        let (start, end) = (c * len, (c + 1) * len);
        if real {
            f64_chunk::<A>(s, &tables, kernel, cpu, bits, start, end)
        } else {
            c64_chunk::<A>(s, &tables, kernel, cpu, bits, start, end)
        }
    })?;
    let (mut re, mut im) = (A::default(), A::default());
    for chunk in &parts {
        for p in chunk {
            re.add_parts(p[0]);
            im.add_parts(p[1]);
        }
    }
    Ok((re.value(), im.value()))
}

fn gray_sum_c64<A: Accumulator>(gs: &GraySum<Complex64>, opts: &PermOptions) -> Result<Complex64> {
    let s = Split::new(gs, |z| z.re, |z| z.im);
    let (re, im) = gray_sum::<A>(&s, gs.bits(), opts, false)?;
    Ok(Complex64::new(re, im))
}

fn gray_sum_f64<A: Accumulator>(gs: &GraySum<f64>, opts: &PermOptions) -> Result<f64> {
    let s = Split::new(gs, |x| x, |_| 0.0);
    Ok(gray_sum::<A>(&s, gs.bits(), opts, true)?.0)
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

/// User + system CPU time of this process (all threads) from /proc/self/stat, assuming
/// the usual 100 ticks per second; NaN where unavailable.
pub fn process_cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // Fields after the parenthesized command name; utime and stime are fields 14 and 15.
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return f64::NAN;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    match (
        f.get(11).and_then(|x| x.parse::<f64>().ok()),
        f.get(12).and_then(|x| x.parse::<f64>().ok()),
    ) {
        (Some(u), Some(s)) => (u + s) / 100.0,
        _ => f64::NAN,
    }
}

/// One line of the bench table.
#[derive(Clone, Debug)]
pub struct BenchRow {
    pub n: usize,
    pub threads: usize,
    pub seconds: f64,
    /// Process CPU time (user + system, all threads; Linux /proc, 10 ms ticks), NaN
    /// elsewhere: less sensitive than `seconds` to other load on a shared machine.
    pub cpu_seconds: f64,
    pub kind: String,
    pub value: Complex64,
}

/// Times the complex permanent of [`bench_matrix`]`(n)` for each size and thread count
/// (Glynn; plain and double-double accumulation; on one thread also the simple
/// one-code-at-a-time kernel) and prints a table to stdout.
pub fn bench(sizes: &[usize], threads: &[usize]) -> Result<Vec<BenchRow>> {
    let mut rows = Vec::new();
    println!(
        "{:>3} {:>7} {:>10} {:>10}  {:<22} value",
        "n", "threads", "seconds", "cpu_s", "type"
    );
    for &n in sizes {
        let a = bench_matrix(n);
        for &t in threads {
            let mut variants = vec![
                (Accumulation::Plain, Kernel::Auto),
                (Accumulation::DoubleDouble, Kernel::Auto),
            ];
            if t == 1 {
                // The one-code-at-a-time kernel, for comparison.
                variants.push((Accumulation::Plain, Kernel::Simple));
            }
            for (acc, kernel) in variants {
                let opts = PermOptions {
                    algorithm: Algorithm::Glynn,
                    accumulation: acc,
                    threads: t,
                    chunks: 0,
                    kernel,
                };
                let c0 = process_cpu_seconds();
                let t0 = std::time::Instant::now();
                let value = permanent_c64(&a, &opts)?;
                let seconds = t0.elapsed().as_secs_f64();
                let cpu_seconds = process_cpu_seconds() - c0;
                let kind = match kernel {
                    Kernel::Auto => format!("c64 glynn {acc:?}"),
                    k => format!("c64 glynn {acc:?} {k:?}"),
                };
                println!(
                    "{n:>3} {t:>7} {seconds:>10.4} {cpu_seconds:>10.2}  {kind:<22} {value:.12e}"
                );
                rows.push(BenchRow {
                    n,
                    threads: t,
                    seconds,
                    cpu_seconds,
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
