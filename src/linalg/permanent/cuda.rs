//! Permanents on one CUDA GPU: Glynn's formula as a Gray-code sum (kernels/permanent.cu).
//!
//! The 2^(n−1) codes are split into 2^t equal, power-of-two chunks, one per GPU thread
//! (SUperman's scheme, Alg. 3 with the conflict-free chunking: with power-of-two chunks the
//! changed-bit sequence is the same for every thread, so a warp reads one column at a
//! time). Inside a chunk, codes are taken in blocks of W = 2^s (see the CPU kernels in
//! [`super`]): the W row-sum vectors of a block are u + D_T with D_T a fixed table passed
//! as a kernel parameter, u is updated by one column per block, and the n-wide inner loops
//! are fully unrolled because n, W and the accumulation are compile-time constants (one
//! NVRTC module per combination, cached per CUDA context).
//!
//! Each thread accumulates its signed block sums (the W terms of a block are first added
//! in plain arithmetic) with the chosen [`Accumulation`]; each CUDA block adds its threads'
//! (hi, lo) parts in thread order in double-double, and the host adds the block parts in
//! block order with the chosen accumulator. The launch shape is a function of n and the
//! options only, so the result is the same bit for bit on every run.
//!
//! Rows and columns with one nonzero are expanded first (`super::reduce`, shared with the
//! CPU engine). The error bound of docs/permanent.md applies with the chunk length L =
//! W·2^lq and, for Kahan / double-double, the per-block plain sums of W terms adding
//! (W − 1)·u·N·P.

use super::accumulate::{Accumulator, DoubleDouble, Kahan, Plain};
use super::{check_square, glynn, reduce, Accumulation, GraySum};
use crate::error::{Error, Result};
use crate::gpu::{self, cuda_err, Device};
use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use nalgebra::DMatrix;
use num_complex::Complex64;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

const SOURCE: &str = include_str!("../../../kernels/permanent.cu");

/// Doubles in the table kernel parameter (`struct Tab`; 3584 bytes, under the 4 KiB limit
/// on kernel parameters together with the other arguments).
pub const TAB: usize = 448;

/// Largest CUDA block (the kernel's `PMAXTHREADS`).
pub const MAX_BLOCK: u32 = 256;

/// Dynamic shared memory used for the column table at most (the block reduction takes
/// another 4 or 8 KiB of static shared memory; 48 KiB is the limit without opt-in).
const SMEM_LIMIT: usize = 40 * 1024;

/// Options of the GPU permanent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuPermOptions {
    /// Per-thread accumulation of the block sums.
    pub accumulation: Accumulation,
    /// log2 of the codes per register block W; `None`: 2 (W = 4) for real matrices with
    /// the unit-column form, else 1 (the fastest measured on an H200 / H100 respectively,
    /// docs/permanent.md).
    pub block_log2: Option<u32>,
    /// log2 of the number of GPU threads (chunks); `None`: automatic (a function of n).
    /// Capped so that every thread has at least one block.
    pub threads_log2: Option<u32>,
    /// Threads per CUDA block (a power of two, at most [`MAX_BLOCK`]).
    pub block_threads: u32,
    /// Minimum resident CUDA blocks per SM asked of the register allocator (≥ 1);
    /// `None`: 2 for real matrices (≤ 128 registers), 1 for complex ones.
    pub min_blocks: Option<u32>,
    /// Expand rows/columns with a single nonzero before the sum (default true).
    pub expand_single: bool,
    /// Real matrices with W ≥ 2: scale the rows so that one column without zero entries
    /// becomes all ones, and evaluate each pair of codes that differ in that column with
    /// one FMA per factor (`unit_column`; default true). Falls back to the plain sum when
    /// every column has a zero. Costs one rounding per entry (the division).
    pub unit_column: bool,
}

impl Default for GpuPermOptions {
    fn default() -> Self {
        GpuPermOptions {
            accumulation: Accumulation::Plain,
            block_log2: None,
            threads_log2: None,
            block_threads: MAX_BLOCK,
            min_blocks: None,
            expand_single: true,
            unit_column: true,
        }
    }
}

/// The launch of one Gray-code sum of order n.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Order (after the sparse expansion).
    pub n: usize,
    /// log2 W.
    pub s: u32,
    /// log2 of the GPU threads.
    pub t: u32,
    /// log2 of the blocks of W codes per thread.
    pub lq: u32,
    pub block: u32,
    pub grid: u32,
}

impl Shape {
    /// Codes per thread.
    pub fn chunk(&self) -> u64 {
        1u64 << (self.s + self.lq)
    }
}

/// The launch shape for order n ≥ 1: threads · 2^lq · 2^s = 2^(n−1).
pub fn shape(n: usize, complex: bool, opts: &GpuPermOptions) -> Result<Shape> {
    if n == 0 || n > super::MAX_N {
        return Err(Error::Usage(format!(
            "GPU permanent: order {n} outside 1..={}",
            super::MAX_N
        )));
    }
    let bits = n as u32 - 1;
    let per_code = if complex { 2 * n } else { n };
    let s = match opts.block_log2 {
        Some(s) => {
            if s > 6 || ((1usize << s) - 1) * per_code > TAB {
                return Err(Error::Usage(format!(
                    "GPU permanent: block of 2^{s} codes does not fit the {TAB}-double table at order {n}"
                )));
            }
            s.min(bits)
        }
        None => {
            let mut s = if !complex && opts.unit_column { 2 } else { 1 };
            while s > 0 && ((1usize << s) - 1) * per_code > TAB {
                s -= 1;
            }
            s.min(bits)
        }
    };
    let rem = bits - s;
    let t = opts
        .threads_log2
        .unwrap_or_else(|| rem.saturating_sub(8).min(22))
        .min(rem)
        .min(31);
    if !opts.block_threads.is_power_of_two() || opts.block_threads > MAX_BLOCK {
        return Err(Error::Usage(format!(
            "GPU permanent: {} threads per block (a power of two ≤ {MAX_BLOCK} is needed)",
            opts.block_threads
        )));
    }
    if opts.min_blocks == Some(0) {
        return Err(Error::Usage("GPU permanent: min_blocks must be ≥ 1".into()));
    }
    let threads = 1u64 << t;
    let block = (opts.block_threads as u64).min(threads) as u32;
    Ok(Shape {
        n,
        s,
        t,
        lq: rem - t,
        block,
        grid: (threads / block as u64) as u32,
    })
}

/// D_T = Σ_{b ∈ T} c_b for T = 1..W−1 as `d[(T−1)·n + i]` (complex: the imaginary parts
/// after the real ones), computed as D_T = D_(T − top bit) + c_(top bit).
fn block_table<T: Copy>(
    gs: &GraySum<T>,
    s: u32,
    re: impl Fn(T) -> f64,
    im: impl Fn(T) -> f64,
    complex: bool,
) -> [f64; TAB] {
    let n = gs.n;
    let w = 1usize << s;
    let mut dre = vec![0.0; w * n];
    let mut dim = vec![0.0; w * n];
    for t in 1..w {
        let hb = (usize::BITS - 1 - t.leading_zeros()) as usize;
        let rest = t & !(1 << hb);
        for i in 0..n {
            dre[t * n + i] = dre[rest * n + i] + re(gs.cols[hb][i]);
            dim[t * n + i] = dim[rest * n + i] + im(gs.cols[hb][i]);
        }
    }
    let mut tab = [0.0; TAB];
    let half = (w - 1) * n;
    for t in 1..w {
        for i in 0..n {
            tab[(t - 1) * n + i] = dre[t * n + i];
            if complex {
                tab[half + (t - 1) * n + i] = dim[t * n + i];
            }
        }
    }
    tab
}

/// Compiled kernels, per (CUDA context, n, type, W, accumulation, shared memory, bounds).
/// A cached function holds its module and so its context alive, so a context handle in a
/// key is never reused for another context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    ctx: usize,
    n: usize,
    complex: bool,
    s: u32,
    acc: u8,
    smem: bool,
    min_blocks: u32,
    unit: bool,
}

fn cache() -> &'static Mutex<HashMap<Key, CudaFunction>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, CudaFunction>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn acc_code(a: Accumulation) -> u8 {
    match a {
        Accumulation::Plain => 0,
        Accumulation::Kahan => 1,
        Accumulation::DoubleDouble => 2,
    }
}

fn col_bytes(n: usize, complex: bool) -> usize {
    let np = n.div_ceil(2) * 2;
    (if complex { 2 } else { 1 }) * (n - 1) * np * 8
}

/// The compiled kernel for `key` (NVRTC on the first use, then from the cache).
fn kernel(dev: &Device, key: Key) -> Result<CudaFunction> {
    if let Some(f) = cache()
        .lock()
        .map_err(|_| Error::Internal("GPU permanent: kernel cache poisoned".into()))?
        .get(&key)
    {
        return Ok(f.clone());
    }
    let n = key.n;
    let defines = format!(
        "#define PN {n}\n#define PNP {}\n#define PS {}\n#define PTAB {TAB}\n#define PACC {}\n\
         #define PSMEM {}\n#define PCOMPLEX {}\n#define PMINB {}\n#define PUNIT {}\n",
        n.div_ceil(2) * 2,
        key.s,
        key.acc,
        key.smem as u8,
        key.complex as u8,
        key.min_blocks,
        key.unit as u8
    );
    let src = defines + SOURCE;
    let f = gpu::compile(dev, &src, "permanent.cu", &["glynn"])?
        .pop()
        .ok_or_else(|| Error::Internal("GPU permanent: no kernel loaded".into()))?;
    cache()
        .lock()
        .map_err(|_| Error::Internal("GPU permanent: kernel cache poisoned".into()))?
        .insert(key, f.clone());
    Ok(f)
}

fn key_for(dev: &Device, sh: &Shape, complex: bool, opts: &GpuPermOptions, unit: bool) -> Key {
    Key {
        ctx: dev.ctx.cu_ctx() as usize,
        n: sh.n,
        complex,
        s: sh.s,
        acc: acc_code(opts.accumulation),
        smem: col_bytes(sh.n, complex) <= SMEM_LIMIT,
        min_blocks: min_blocks(opts, complex),
        unit,
    }
}

/// Whether the unit-column kernel is asked for: real matrices, W ≥ 2, option on (the
/// matrix must also have a zero-free column, see [`unit_column`]).
fn unit_asked(sh: &Shape, complex: bool, opts: &GpuPermOptions) -> bool {
    opts.unit_column && !complex && sh.s >= 1
}

fn min_blocks(opts: &GpuPermOptions, complex: bool) -> u32 {
    opts.min_blocks.unwrap_or(if complex { 1 } else { 2 })
}

/// Compiles (and caches) the kernel that an order-n permanent with these options will use,
/// so that a later call measures only the sum. `n` is the order after the sparse expansion
/// (a dense matrix keeps its order; the unit-column variant is the one a matrix with a
/// zero-free column gets).
pub fn warm_up(dev: &Device, n: usize, complex: bool, opts: &GpuPermOptions) -> Result<()> {
    let sh = shape(n, complex, opts)?;
    kernel(
        dev,
        key_for(dev, &sh, complex, opts, unit_asked(&sh, complex, opts)),
    )
    .map(|_| ())
}

/// Runs the Gray-code sum on the device; returns S = Σ_g (−1)^|g| Π_i v_i(g) as (re, im).
fn gray_sum_device<T: Copy, A: Accumulator>(
    dev: &Device,
    gs: &GraySum<T>,
    re: impl Fn(T) -> f64,
    im: impl Fn(T) -> f64,
    complex: bool,
    opts: &GpuPermOptions,
    unit: bool,
) -> Result<(f64, f64)> {
    let n = gs.n;
    let sh = shape(n, complex, opts)?;
    let key = key_for(dev, &sh, complex, opts, unit);
    let f = kernel(dev, key)?;
    let np = n.div_ceil(2) * 2;
    let bits = n - 1;
    let planes = if complex { 2 } else { 1 };
    // Columns c_b (b = 0..n−2), stride np, real plane then imaginary plane.
    let mut cols = vec![0.0f64; (planes * bits * np).max(1)];
    for (b, col) in gs.cols.iter().enumerate() {
        for i in 0..n {
            cols[b * np + i] = re(col[i]);
            if complex {
                cols[bits * np + b * np + i] = im(col[i]);
            }
        }
    }
    let mut v0 = vec![0.0f64; 2 * np];
    for i in 0..n {
        v0[i] = re(gs.v0[i]);
        v0[np + i] = im(gs.v0[i]);
    }
    let tab = block_table(gs, sh.s, &re, &im, complex);
    let parts = if complex { 4 } else { 2 };
    let outs = sh.grid as usize * parts;

    let d_cols = dev.alloc::<f64>(cols.len())?;
    let d_v0 = dev.alloc::<f64>(v0.len())?;
    let d_out = dev.alloc::<f64>(outs)?;
    dev.htod(&d_cols, &cols)?;
    dev.htod(&d_v0, &v0)?;
    // NaN poison: an unwritten partial shows up as a non-finite sum below.
    dev.fill_bytes(&d_out, 0xff)?;
    let cfg = LaunchConfig {
        grid_dim: (sh.grid, 1, 1),
        block_dim: (sh.block, 1, 1),
        shared_mem_bytes: if key.smem {
            col_bytes(n, complex) as u32
        } else {
            0
        },
    };
    let (pc, pv, po, lq) = (d_cols.ptr, d_v0.ptr, d_out.ptr, sh.lq);
    gpu::guarded("launching the permanent kernel", || {
        dev.bind()?;
        unsafe {
            dev.stream
                .launch_builder(&f)
                .arg(&pc)
                .arg(&pv)
                .arg(&tab)
                .arg(&po)
                .arg(&lq)
                .launch(cfg)
        }
        .map(|_| ())
        .map_err(|e| cuda_err("cuLaunchKernel(glynn)", e))
    })?;
    let mut out = vec![0.0f64; outs];
    dev.dtoh(&mut out, &d_out)?;
    if let Some(k) = out.iter().position(|x| x.is_nan()) {
        return Err(Error::Cuda(format!(
            "GPU permanent: partial sum {k} of {outs} was not written (or is NaN)"
        )));
    }
    let (mut sr, mut si) = (A::default(), A::default());
    for p in out.chunks_exact(parts) {
        sr.add_parts((p[0], p[1]));
        if complex {
            si.add_parts((p[2], p[3]));
        }
    }
    Ok((sr.value(), si.value()))
}

fn gray_sum<T: Copy>(
    dev: &Device,
    gs: &GraySum<T>,
    re: impl Fn(T) -> f64,
    im: impl Fn(T) -> f64,
    complex: bool,
    opts: &GpuPermOptions,
    unit: bool,
) -> Result<(f64, f64)> {
    match opts.accumulation {
        Accumulation::Plain => gray_sum_device::<T, Plain>(dev, gs, re, im, complex, opts, unit),
        Accumulation::Kahan => gray_sum_device::<T, Kahan>(dev, gs, re, im, complex, opts, unit),
        Accumulation::DoubleDouble => {
            gray_sum_device::<T, DoubleDouble>(dev, gs, re, im, complex, opts, unit)
        }
    }
}

/// The unit-column form of a real matrix (n ≥ 2) for Glynn's sum: the column j with the
/// largest min_i |a_ij| / max_k |a_ik| is moved to position 1 and row i is divided by
/// a_ij, so that perm(A) = perm(A')·Π_i a_ij with column 1 of A' all ones; the Gray-code
/// sum of A' then has c_0 = −2 in every row, and v0 is replaced by the midpoints
/// v0 − 1 = Σ_(k≠1) a'_ik (kernel `PUNIT`). Returns the sum's setup and Π_i a_ij as a
/// mantissa and a power of two (n factors of [0, 1) entries underflow at large n), or
/// `None` when every column has a zero entry or a scaled entry overflows.
fn unit_column(m: &DMatrix<f64>) -> Option<(GraySum<f64>, f64, i32)> {
    let n = m.nrows();
    let row_max: Vec<f64> = (0..n)
        .map(|i| (0..n).map(|k| m[(i, k)].abs()).fold(0.0, f64::max))
        .collect();
    let quality: Vec<f64> = (0..n)
        .map(|j| {
            (0..n)
                .map(|i| m[(i, j)].abs() / row_max[i])
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let j = (0..n).max_by(|&a, &b| quality[a].total_cmp(&quality[b]))?;
    let q = quality[j];
    if q.is_nan() || q <= 0.0 {
        return None;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.swap(1, j);
    let scaled = DMatrix::from_fn(n, n, |i, k| {
        if k == 1 {
            1.0
        } else {
            m[(i, order[k])] / m[(i, j)]
        }
    });
    if scaled.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut gs = glynn::setup(n, |i, k| scaled[(i, k)], 0.0);
    for i in 0..n {
        gs.v0[i] = (0..n).filter(|&k| k != 1).map(|k| scaled[(i, k)]).sum();
    }
    let (mut mant, mut exp) = (1.0f64, 0i32);
    for i in 0..n {
        let (f, e) = split_exponent(m[(i, j)]);
        let (g, e2) = split_exponent(mant * f);
        mant = g;
        exp += e + e2;
    }
    Some((gs, mant, exp))
}

/// x = f·2^e with |f| in [1, 2) (x finite and nonzero; subnormals included).
fn split_exponent(x: f64) -> (f64, i32) {
    let mut e = x.abs().log2().floor() as i32;
    let mut f = scale_by_power_of_two(x, -e);
    // log2 may round across a power of two.
    while f.abs() >= 2.0 {
        f *= 0.5;
        e += 1;
    }
    while f.abs() < 1.0 {
        f *= 2.0;
        e -= 1;
    }
    (f, e)
}

/// x·2^k, exact unless the result leaves the normal range (steps of at most 2^±1000).
fn scale_by_power_of_two(mut x: f64, mut k: i32) -> f64 {
    while k != 0 {
        let step = k.clamp(-1000, 1000);
        x *= 2f64.powi(step);
        k -= step;
    }
    x
}

fn check_finite<T>(a: &DMatrix<T>, finite: impl Fn(&T) -> bool) -> Result<()> {
    for i in 0..a.nrows() {
        for j in 0..a.ncols() {
            if !finite(&a[(i, j)]) {
                return Err(Error::Usage(format!(
                    "GPU permanent: entry ({}, {}) is not finite",
                    i + 1,
                    j + 1
                )));
            }
        }
    }
    Ok(())
}

/// Permanent of a real matrix on the GPU (Glynn, perm = 2^(1−n)·S).
pub fn permanent_f64_cuda(dev: &Device, a: &DMatrix<f64>, opts: &GpuPermOptions) -> Result<f64> {
    check_square(a, "GPU permanent")?;
    check_finite(a, |x| x.is_finite())?;
    let (pivots, m) = if opts.expand_single {
        match reduce(a, 0.0) {
            Some(r) => r,
            None => return Ok(0.0),
        }
    } else {
        (Vec::new(), a.clone())
    };
    let factor: f64 = pivots.iter().product();
    let n = m.nrows();
    if n == 0 {
        return Ok(factor);
    }
    if unit_asked(&shape(n, false, opts)?, false, opts) {
        if let Some((gs, mant, exp)) = unit_column(&m) {
            let (s, _) = gray_sum(dev, &gs, |x| x, |_| 0.0, false, opts, true)?;
            return Ok(factor * scale_by_power_of_two(s * mant, exp + 1 - n as i32));
        }
    }
    let gs = glynn::setup(n, |i, j| m[(i, j)], 0.0);
    let (s, _) = gray_sum(dev, &gs, |x| x, |_| 0.0, false, opts, false)?;
    Ok(factor * (s * 0.5f64.powi(n as i32 - 1)))
}

/// Permanent of a complex matrix on the GPU (Glynn, perm = 2^(1−n)·S).
pub fn permanent_c64_cuda(
    dev: &Device,
    a: &DMatrix<Complex64>,
    opts: &GpuPermOptions,
) -> Result<Complex64> {
    check_square(a, "GPU permanent")?;
    check_finite(a, |x| x.is_finite())?;
    let zero = Complex64::new(0.0, 0.0);
    let (pivots, m) = if opts.expand_single {
        match reduce(a, zero) {
            Some(r) => r,
            None => return Ok(zero),
        }
    } else {
        (Vec::new(), a.clone())
    };
    let factor: Complex64 = pivots.iter().product();
    let n = m.nrows();
    if n == 0 {
        return Ok(factor);
    }
    let gs = glynn::setup(n, |i, j| m[(i, j)], zero);
    let (re, im) = gray_sum(dev, &gs, |z| z.re, |z| z.im, true, opts, false)?;
    Ok(factor * (Complex64::new(re, im) * 0.5f64.powi(n as i32 - 1)))
}

// ---------------------------------------------------------------------------------------
// Benchmark.

/// SUperman's measured times on one H200 for dense real uniform [0, 1) matrices (issue #7).
pub fn superman_h200_seconds(n: usize) -> Option<f64> {
    match n {
        36 => Some(0.69),
        40 => Some(8.79),
        44 => Some(79.0),
        _ => None,
    }
}

/// Real bench matrix: the real parts of [`super::bench_matrix`]`(n)`, uniform [0, 1).
pub fn bench_matrix_real(n: usize) -> DMatrix<f64> {
    super::bench_matrix(n).map(|z| z.re)
}

/// One row of the GPU bench table.
#[derive(Clone, Debug)]
pub struct GpuBenchRow {
    pub n: usize,
    pub accumulation: Accumulation,
    pub block_log2: u32,
    pub min_blocks: u32,
    /// The unit-column form was asked for (dense bench matrices always have a zero-free column).
    pub unit_column: bool,
    /// Median wall time of the call (kernel compiled beforehand).
    pub seconds: f64,
    /// 2^(n−1)·(2n − 1) flops (n additions and n − 1 multiplications per term: the plain
    /// sum's count, also for the unit-column form, which does 3n/2 per term) per second.
    pub gflops: f64,
    pub value: f64,
    pub cpu_seconds: Option<f64>,
    pub cpu_value: Option<f64>,
}

/// Times the real permanent of [`bench_matrix_real`]`(n)` on device `device` for every
/// size × accumulation × block size × launch bound × unit-column choice, and the CPU engine
/// (all cores, plain) for n ≤ `cpu_max`; prints a table.
pub fn bench(
    device: usize,
    sizes: &[usize],
    accs: &[Accumulation],
    block_log2: &[u32],
    min_blocks: &[u32],
    units: &[bool],
    cpu_max: usize,
) -> Result<Vec<GpuBenchRow>> {
    let dev = Device::open(device)?;
    println!(
        "# pathtrack bench perm --backend cuda: real dense uniform [0,1) (bench_matrix real parts), Glynn, {} (cc {}.{})",
        dev.name, dev.cc.0, dev.cc.1
    );
    println!(
        "{:>3} {:<12} {:>2} {:>4} {:>4} {:>10} {:>9} {:>12} {:>9} {:>10} {:>9}  value",
        "n",
        "acc",
        "s",
        "minb",
        "unit",
        "seconds",
        "GFLOP/s",
        "SUperman_s",
        "ratio",
        "cpu_s",
        "rel_diff"
    );
    let mut rows = Vec::new();
    for &n in sizes {
        let a = bench_matrix_real(n);
        let (cpu_seconds, cpu_value) = if n <= cpu_max {
            let t0 = std::time::Instant::now();
            let v = super::permanent_f64(
                &a,
                &super::PermOptions {
                    threads: 0,
                    ..Default::default()
                },
            )?;
            (Some(t0.elapsed().as_secs_f64()), Some(v))
        } else {
            (None, None)
        };
        for &acc in accs {
            for &s in block_log2 {
                for (&mb, &unit) in min_blocks
                    .iter()
                    .flat_map(|m| units.iter().map(move |u| (m, u)))
                {
                    let opts = GpuPermOptions {
                        accumulation: acc,
                        block_log2: Some(s),
                        min_blocks: Some(mb),
                        unit_column: unit,
                        ..Default::default()
                    };
                    warm_up(&dev, n, false, &opts)?;
                    let reps = if n <= 36 { 3 } else { 1 };
                    let mut times = Vec::new();
                    let mut value = 0.0;
                    for _ in 0..reps {
                        let t0 = std::time::Instant::now();
                        value = permanent_f64_cuda(&dev, &a, &opts)?;
                        times.push(t0.elapsed().as_secs_f64());
                    }
                    times.sort_by(|x, y| x.total_cmp(y));
                    let seconds = times[times.len() / 2];
                    let flops = (2.0 * n as f64 - 1.0) * 2f64.powi(n as i32 - 1);
                    let gflops = flops / seconds * 1e-9;
                    let sup = superman_h200_seconds(n);
                    let rel = cpu_value.map(|c| (value - c).abs() / c.abs());
                    let fmt = |x: Option<f64>, p: usize| {
                        x.map(|v| format!("{v:.p$}")).unwrap_or_else(|| "-".into())
                    };
                    println!(
                        "{n:>3} {:<12} {s:>2} {mb:>4} {:>4} {seconds:>10.4} {gflops:>9.0} {:>12} {:>9} {:>10} {:>9}  {value:.15e}",
                        format!("{acc:?}"),
                        if unit { "on" } else { "off" },
                        fmt(sup, 2),
                        fmt(sup.map(|t| seconds / t), 3),
                        fmt(cpu_seconds, 3),
                        rel.map(|r| format!("{r:.1e}")).unwrap_or_else(|| "-".into()),
                    );
                    rows.push(GpuBenchRow {
                        n,
                        accumulation: acc,
                        block_log2: s,
                        min_blocks: mb,
                        unit_column: unit,
                        seconds,
                        gflops,
                        value,
                        cpu_seconds,
                        cpu_value,
                    });
                }
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_covers_all_codes() {
        for n in 1..=48 {
            for complex in [false, true] {
                for tl in [None, Some(0), Some(5), Some(40)] {
                    for bl in [None, Some(0), Some(1), Some(3)] {
                        let o = GpuPermOptions {
                            threads_log2: tl,
                            block_log2: bl,
                            ..Default::default()
                        };
                        let per = if complex { 2 * n } else { n };
                        if bl.is_some_and(|s| ((1usize << s) - 1) * per > TAB) {
                            assert!(shape(n, complex, &o).is_err());
                            continue;
                        }
                        let sh = shape(n, complex, &o).unwrap();
                        assert_eq!(sh.s + sh.t + sh.lq, n as u32 - 1, "n={n}");
                        assert_eq!(sh.grid as u64 * sh.block as u64, 1u64 << sh.t);
                        assert!(sh.block <= MAX_BLOCK && sh.block.is_power_of_two());
                        assert!(((1usize << sh.s) - 1) * per <= TAB);
                    }
                }
            }
        }
        assert!(shape(0, false, &GpuPermOptions::default()).is_err());
        assert!(shape(61, false, &GpuPermOptions::default()).is_err());
        let bad = GpuPermOptions {
            block_threads: 100,
            ..Default::default()
        };
        assert!(shape(10, false, &bad).is_err());
    }

    #[test]
    fn block_table_is_the_subset_sums() {
        // D_T against a direct sum over the bits of T (small integers: exact).
        let n = 5;
        let a = DMatrix::from_fn(n, n, |i, j| ((i * 7 + j * 3) % 5) as f64 - 2.0);
        let gs = glynn::setup(n, |i, j| a[(i, j)], 0.0);
        for s in 0..4u32 {
            let tab = block_table(&gs, s, |x| x, |_| 0.0, false);
            for t in 1..(1usize << s) {
                for i in 0..n {
                    let want: f64 = (0..s as usize)
                        .filter(|b| (t >> b) & 1 == 1)
                        .map(|b| gs.cols[b][i])
                        .sum();
                    assert_eq!(tab[(t - 1) * n + i], want);
                }
            }
        }
    }

    #[test]
    fn kernel_source_declares_the_parameters() {
        for name in [
            "PN", "PNP", "PS", "PTAB", "PACC", "PSMEM", "PCOMPLEX", "PMINB", "PUNIT",
        ] {
            assert!(SOURCE.contains(name), "{name}");
        }
        assert!(SOURCE.contains("glynn("));
    }

    /// The kernel's pair formula on the host: Σ over the codes of A' with c_0 = −2, written
    /// as (−1)^|T|(Π(m + 1) − Π(m − 1)) from the midpoints, times the scale, against the
    /// brute-force permanent of A.
    #[test]
    fn unit_column_form_gives_the_permanent() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for n in 2..=7usize {
            for trial in 0..4 {
                let mut a = DMatrix::<f64>::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
                if trial == 1 {
                    // Zeros everywhere but in column n − 1, which must be chosen.
                    for i in 0..n {
                        for j in 0..n - 1 {
                            if (i + j) % 2 == 0 {
                                a[(i, j)] = 0.0;
                            }
                        }
                    }
                }
                let want = super::super::permanent_brute(&a);
                let scale: f64 = (0..n)
                    .map(|i| (0..n).map(|j| a[(i, j)].abs()).sum::<f64>())
                    .product();
                // Tiny entries (2^−700 a): Π a_ij underflows without the mantissa/exponent
                // split; the result is compared scaled back by 2^(700 n).
                let shift = if trial == 2 { 700 * n as i32 } else { 0 };
                if trial == 2 {
                    a *= 2f64.powi(-700);
                }
                let (gs, mant, exp) = unit_column(&a).expect("a zero-free column");
                assert!(gs.cols[0].iter().all(|&c| c == -2.0));
                let mut sum = 0.0;
                for q in 0u64..(1 << (n - 2)) {
                    let g = q ^ (q >> 1); // codes of bits 1..n−2; bit 0 is the pair
                    let m: Vec<f64> = (0..n)
                        .map(|i| {
                            gs.v0[i]
                                + (1..n - 1)
                                    .filter(|b| (g >> (b - 1)) & 1 == 1)
                                    .map(|b| gs.cols[b][i])
                                    .sum::<f64>()
                        })
                        .collect();
                    let plus: f64 = m.iter().map(|x| x + 1.0).product();
                    let minus: f64 = m.iter().map(|x| x - 1.0).product();
                    let sign = if g.count_ones() % 2 == 1 { -1.0 } else { 1.0 };
                    sum += sign * (plus - minus);
                }
                let got = scale_by_power_of_two(sum * mant, exp + 1 - n as i32 + shift);

                assert!(
                    (got - want).abs() <= 1e-13 * scale,
                    "n={n} trial={trial}: {got:e} vs {want:e}"
                );
            }
        }
        // Every column has a zero: no unit form.
        let z = DMatrix::from_fn(4, 4, |i, j| if i == j { 0.0 } else { 1.0 });
        assert!(unit_column(&z).is_none());
    }

    #[test]
    fn split_exponent_is_exact() {
        for x in [
            1.0,
            -1.5,
            3.0,
            0.75,
            1e-300,
            -5e-320,
            1.7e308,
            2f64.powi(-1074),
        ] {
            let (f, e) = split_exponent(x);
            assert!((1.0..2.0).contains(&f.abs()), "{x}: {f}");
            assert_eq!(scale_by_power_of_two(f, e), x, "{x}");
        }
    }
}
