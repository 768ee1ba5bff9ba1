//! `pathtrack rref FILE [--prime P] [--backend cpu|cuda] [-o OUT.mtx] [--json]`: reduced
//! row echelon form of a Matrix Market matrix, and `pathtrack bench rref` (see [`bench()`]).
//!
//! Element type: with `--prime P` the (integer) matrix is reduced mod P (u32 words when
//! P < 2^31, u64 words when P < 2^63); without it real and integer files are read as f64
//! and complex files as complex f64.

use crate::error::{Error, Result};
use crate::linalg::rref::cuda::{CudaRref, GpuAlgo};
use crate::linalg::rref::{
    echelonize, mtx, Echelon, EchelonOptions, Field, Matrix, Tolerance, Zp32, Zp64, C64, F64,
};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RrefBackend {
    Cpu,
    Cuda,
}

#[derive(Args, Debug)]
pub struct RrefArgs {
    /// Matrix Market file (array or coordinate; integer, real, complex or pattern).
    pub file: PathBuf,
    /// Work over Z/P (P prime < 2^63); the file must hold integers. Default: floats.
    #[arg(long)]
    pub prime: Option<u64>,
    /// Backend.
    #[arg(long, value_enum, default_value = "cpu")]
    pub backend: RrefBackend,
    /// GPU algorithm (`--backend cuda`): columns (one kernel sequence per column),
    /// blocked (panels with an exact FP64 matrix-product update), or auto (columns for
    /// narrow matrices, blocked for wide ones).
    #[arg(long, value_enum, default_value = "auto", hide_possible_values = true)]
    pub algo: GpuAlgo,
    /// GPU ordinal (`--backend cuda`).
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Zero tolerance for floats (default: max(m,n)·eps·‖A‖_∞).
    #[arg(long)]
    pub tol: Option<f64>,
    /// Write the RREF as Matrix Market here (stdout when absent).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Print {"rank", "pivots", "seconds"} as JSON on stdout (the RREF goes to -o only).
    #[arg(long)]
    pub json: bool,
}

/// Runs the echelonize core and reports; `fmt` prints an entry for the output file.
fn finish<E: Copy>(
    a: &RrefArgs,
    r: &Matrix<E>,
    pivots: &[usize],
    seconds: f64,
    field: &str,
    comment: &str,
    fmt: impl Fn(E) -> String,
) -> Result<i32> {
    let comment = format!(
        "{comment}\nrank {} pivots (1-based) {:?}",
        pivots.len(),
        pivots.iter().map(|p| p + 1).collect::<Vec<_>>()
    );
    match &a.output {
        Some(p) => {
            let file = std::fs::File::create(p)
                .map_err(|e| Error::io(format!("creating {}", p.display()), e))?;
            let mut w = std::io::BufWriter::new(file);
            mtx::write_array(&mut w, r, field, &comment, fmt)
                .and_then(|_| std::io::Write::flush(&mut w))
                .map_err(|e| Error::io(format!("writing {}", p.display()), e))?;
        }
        // `--json` alone: stdout holds the JSON object only.
        None if a.json => {}
        None => {
            let stdout = std::io::stdout();
            let mut w = std::io::BufWriter::new(stdout.lock());
            mtx::write_array(&mut w, r, field, &comment, fmt)
                .and_then(|_| std::io::Write::flush(&mut w))
                .map_err(|e| Error::io("writing stdout".to_string(), e))?;
        }
    }
    if a.json {
        // Keys in the documented order: {"rank": r, "pivots": [...], "seconds": s}.
        let piv = serde_json::to_string(pivots).map_err(|e| Error::Internal(e.to_string()))?;
        println!(
            "{{\"rank\": {}, \"pivots\": {piv}, \"seconds\": {seconds}}}",
            pivots.len()
        );
    }
    Ok(0)
}

pub fn run(a: &RrefArgs) -> Result<i32> {
    super::outputs::check(Some(&a.file), &[("-o", a.output.as_deref())])?;
    if a.backend == RrefBackend::Cuda {
        return run_cuda(a);
    }
    let data = mtx::read(&a.file)?;
    let mut opt = EchelonOptions::default();
    if let Some(t) = a.tol {
        if !(t >= 0.0 && t.is_finite()) {
            return Err(Error::Usage(format!(
                "--tol {t}: must be a finite non-negative number"
            )));
        }
        if a.prime.is_some() {
            return Err(Error::Usage(
                "--tol applies to floats only, not with --prime".into(),
            ));
        }
        opt.tolerance = Tolerance::Absolute(t);
    }
    match a.prime {
        Some(p) if p < 1 << 31 => {
            let f = Zp32::new(p as u32).map_err(|e| Error::Usage(format!("--prime: {e}")))?;
            let mut m = data.to_zp32(&f)?;
            let (e, s) = timed(&f, &mut m, &opt);
            finish(
                a,
                &m,
                &e.pivots,
                s,
                "integer",
                &format!("RREF over Z/{p}"),
                |x| x.to_string(),
            )
        }
        Some(p) => {
            let f = Zp64::new(p).map_err(|e| Error::Usage(format!("--prime: {e}")))?;
            let mut m = data.to_zp64(&f)?;
            let (e, s) = timed(&f, &mut m, &opt);
            finish(
                a,
                &m,
                &e.pivots,
                s,
                "integer",
                &format!("RREF over Z/{p}"),
                |x| x.to_string(),
            )
        }
        None if data.field == mtx::MtxField::Complex => {
            let mut m = data.to_c64()?;
            scale_into_range(&mut m.data, &mut opt, |z| z.re.abs().max(z.im.abs()));
            let (e, s) = timed(&C64, &mut m, &opt);
            check_finite(&m.data, |z| z.re.is_finite() && z.im.is_finite())?;
            let c = format!("RREF over complex f64, zero tolerance {:e}", e.tolerance);
            finish(a, &m, &e.pivots, s, "complex", &c, |z| {
                format!("{} {}", mtx::fmt_f64(z.re), mtx::fmt_f64(z.im))
            })
        }
        None => {
            let mut m = data.to_f64()?;
            scale_into_range(&mut m.data, &mut opt, |x| x.abs());
            let (e, s) = timed(&F64, &mut m, &opt);
            check_finite(&m.data, |x| x.is_finite())?;
            let c = format!("RREF over f64, zero tolerance {:e}", e.tolerance);
            finish(a, &m, &e.pivots, s, "real", &c, mtx::fmt_f64)
        }
    }
}

/// `--backend cuda`: Z/p (u32 words below 2^31, u64 words below 2^63), f64 and complex
/// f64; `seconds` is the GPU call's wall time (upload, elimination, download; without NVRTC
/// compilation and file I/O).
fn run_cuda(a: &RrefArgs) -> Result<i32> {
    let mut opt = EchelonOptions::default();
    if let Some(t) = a.tol {
        if a.prime.is_some() {
            return Err(Error::Usage(
                "--tol applies to floats only, not with --prime".into(),
            ));
        }
        if !(t >= 0.0 && t.is_finite()) {
            return Err(Error::Usage(format!(
                "--tol {t}: must be a finite non-negative number"
            )));
        }
        opt.tolerance = Tolerance::Absolute(t);
    }
    let prime32 = match a.prime {
        Some(p) if p < 1 << 31 => {
            Some(Zp32::new(p as u32).map_err(|e| Error::Usage(format!("--prime: {e}")))?)
        }
        _ => None,
    };
    let prime64 = match a.prime {
        Some(p) if p >= 1 << 31 => {
            Some(Zp64::new(p).map_err(|e| Error::Usage(format!("--prime: {e}")))?)
        }
        _ => None,
    };
    let data = mtx::read(&a.file)?;
    let mut g = CudaRref::new(a.device)?;
    let dev = g.device_description();
    if let Some(f) = prime32 {
        let m = data.to_zp32(&f)?;
        let (r, e, t) = g.rref_zp32(&f, &m, a.algo)?;
        let p = f.prime();
        return finish(
            a,
            &r,
            &e.pivots,
            t.total,
            "integer",
            &format!("RREF over Z/{p} (GPU: {dev})"),
            |x| x.to_string(),
        );
    }
    if let Some(f) = prime64 {
        let mut m = data.to_zp64(&f)?;
        let (e, t) = g.echelonize_gpu(&f, &mut m, &opt, a.algo)?;
        let p = f.prime();
        return finish(
            a,
            &m,
            &e.pivots,
            t.total,
            "integer",
            &format!("RREF over Z/{p} (GPU: {dev})"),
            |x| x.to_string(),
        );
    }
    if data.field == mtx::MtxField::Complex {
        let mut m = data.to_c64()?;
        scale_into_range(&mut m.data, &mut opt, |z| z.re.abs().max(z.im.abs()));
        let (e, t) = g.echelonize_gpu(&C64, &mut m, &opt, a.algo)?;
        check_finite(&m.data, |z| z.re.is_finite() && z.im.is_finite())?;
        let c = format!(
            "RREF over complex f64, zero tolerance {:e} (GPU: {dev})",
            e.tolerance
        );
        finish(a, &m, &e.pivots, t.total, "complex", &c, |z| {
            format!("{} {}", mtx::fmt_f64(z.re), mtx::fmt_f64(z.im))
        })
    } else {
        let mut m = data.to_f64()?;
        scale_into_range(&mut m.data, &mut opt, |x| x.abs());
        let (e, t) = g.echelonize_gpu(&F64, &mut m, &opt, a.algo)?;
        check_finite(&m.data, |x| x.is_finite())?;
        let c = format!(
            "RREF over f64, zero tolerance {:e} (GPU: {dev})",
            e.tolerance
        );
        finish(a, &m, &e.pivots, t.total, "real", &c, mtx::fmt_f64)
    }
}

/// Entries whose largest magnitude lies outside `[2^-64, 2^64]` are scaled by a power of
/// two that brings it into `[1, 2)` (an absolute `--tol` with them). The RREF of `c·A` is
/// that of `A` and the default tolerance scales with `‖A‖`, so the result is the same,
/// while a tiny matrix (diag(1e-320, 1e-320)) left unscaled would have a zero tolerance and
/// pivots whose reciprocals overflow to inf (rank 1 and NaN entries).
fn scale_into_range<E: Copy + std::ops::Mul<f64, Output = E>>(
    data: &mut [E],
    opt: &mut EchelonOptions,
    magnitude: impl Fn(E) -> f64,
) {
    let max = data.iter().map(|&x| magnitude(x)).fold(0.0, f64::max);
    if max == 0.0 || !max.is_finite() || (2f64.powi(-64)..=2f64.powi(64)).contains(&max) {
        return;
    }
    // 2^k in two factors, each a normal double, for k up to 1074 (subnormal maxima).
    let k = -(max.log2().floor() as i32);
    let (f1, f2) = (2f64.powi(k / 2), 2f64.powi(k - k / 2));
    for x in data.iter_mut() {
        *x = *x * f1 * f2;
    }
    if let Tolerance::Absolute(t) = opt.tolerance {
        opt.tolerance = Tolerance::Absolute(t * f1 * f2);
    }
}

/// A usage error when the reduced matrix has an entry that is not finite (a pivot above
/// an absolute `--tol` but so small that its reciprocal overflows): never NaN in the output.
fn check_finite<E: Copy>(data: &[E], finite: impl Fn(E) -> bool) -> Result<()> {
    if data.iter().all(|&x| finite(x)) {
        Ok(())
    } else {
        Err(Error::Usage(
            "the elimination overflowed (a pivot too small for the double range); use a \
             larger --tol or --prime P"
                .into(),
        ))
    }
}

/// Echelonizes `m` in place and measures the seconds it took.
fn timed<F: Field>(
    f: &F,
    m: &mut Matrix<F::Elem>,
    opt: &EchelonOptions,
) -> (Echelon<F::Elem>, f64) {
    let t = Instant::now();
    let e = echelonize(f, m, opt);
    (e, t.elapsed().as_secs_f64())
}

/// `pathtrack bench rref --n N[,N..] --prime P [--backend cpu|cuda] [--algo A,..]`: the CPU
/// table of [`crate::linalg::rref::bench::run`] per size, or the GPU table ([`bench_cuda`]).
pub fn bench(
    ns: &[usize],
    prime: u64,
    backend: RrefBackend,
    algos: &[GpuAlgo],
    reps: usize,
    device: usize,
    field: RrefField,
) -> Result<()> {
    match (backend, field) {
        (RrefBackend::Cuda, RrefField::F64 | RrefField::C64) => {
            bench_cuda_float(ns, field, algos, reps, device)
        }
        (RrefBackend::Cuda, RrefField::Zp) if prime >= 1 << 31 => {
            bench_cuda_zp64(ns, prime, reps, device)
        }
        (RrefBackend::Cpu, RrefField::F64 | RrefField::C64) => Err(Error::Usage(
            "bench rref: --field f64/c64 is timed on the GPU (--backend cuda); the CPU table is over Z/p".into(),
        )),
        (RrefBackend::Cpu, _) => {
            for &n in ns {
                crate::linalg::rref::bench::run(n, prime)
                    .map_err(|e| Error::Usage(format!("--prime: {e}")))?;
            }
            Ok(())
        }
        (RrefBackend::Cuda, _) => bench_cuda(ns, prime, algos, reps, device),
    }
}

/// Element type of `pathtrack bench rref`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RrefField {
    Zp,
    F64,
    C64,
}

/// GPU table for floats: per n the median over `reps` runs of our RREF (elimination time
/// and whole call) of a random n × n matrix with entries uniform in [−1, 1) (seed n), its
/// rank and `log |det|` from the pivot values and row scales and, for f64, cuSOLVER
/// `getrf` of the same matrix on the same device (median time, and the difference of the
/// two `log |det|`, the second from U's diagonal). `RREF_PANEL=b` fixes the panel width.
pub fn bench_cuda_float(
    ns: &[usize],
    field: RrefField,
    algos: &[GpuAlgo],
    reps: usize,
    device: usize,
) -> Result<()> {
    use num_complex::Complex64;
    use rand::{Rng, SeedableRng};
    let mut g = CudaRref::new(device)?;
    if let Some(b) = std::env::var("RREF_PANEL")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        g.panel = b;
    }
    println!(
        "# pathtrack bench rref --backend cuda --field {field:?}, blocked panel {}, on {}",
        if g.panel == 0 {
            "auto (64 below n = 15000, else 128)".to_string()
        } else {
            g.auto_panel(0).to_string()
        },
        g.device_description()
    );
    // Warm-up: compilation, module load, cuBLAS initialization.
    for algo in [GpuAlgo::Columns, GpuAlgo::Blocked] {
        let w = Matrix::from_fn(200, 200, |i, j| {
            ((i * 7 + j * 3) % 11) as f64 + (i == j) as u8 as f64 * 20.0
        });
        g.rref_gpu(&F64, &w, algo)?;
        let wc = Matrix::from_fn(200, 200, |i, j| Complex64::new(w.get(i, j), 1.0));
        g.rref_gpu(&C64, &wc, algo)?;
    }
    println!(
        "{:>6} {:>8} {:>11} {:>11} {:>6} {:>16} {:>11} {:>10} {:>8}",
        "n", "algo", "compute_s", "total_s", "rank", "log|det|", "getrf_s", "|dlogdet|", "ratio"
    );
    for &n in ns {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(n as u64);
        let a = Matrix::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0f64));
        let ac = Matrix::from_fn(n, n, |i, j| {
            Complex64::new(a.get(i, j), rng.random_range(-1.0..1.0f64))
        });
        // log Π (row scales) = log |det_scale|, without overflow.
        let log_scale: f64 = (0..n)
            .map(|i| {
                let mx = (0..n).fold(0.0f64, |m, j| {
                    m.max(if field == RrefField::F64 {
                        a.get(i, j).abs()
                    } else {
                        C64.magnitude(ac.get(i, j))
                    })
                });
                mx.ln()
            })
            .sum();
        let lu = if field == RrefField::F64 {
            match g.getrf_f64(&a, reps) {
                Ok(t) => Some(t),
                Err(e) => {
                    println!("# cuSOLVER getrf unavailable: {e}");
                    None
                }
            }
        } else {
            None
        };
        for &algo in algos {
            let (mut comp, mut tot) = (vec![], vec![]);
            let mut name = "";
            let (mut rank, mut logdet) = (0usize, 0.0f64);
            for rep in 0..reps.max(1) {
                let (t, e_rank, ld) = if field == RrefField::F64 {
                    let (_, e, t) = g.rref_gpu(&F64, &a, algo)?;
                    let ld: f64 = e.pivot_values.iter().map(|x| x.abs().ln()).sum();
                    (t, e.rank, ld)
                } else {
                    let (_, e, t) = g.rref_gpu(&C64, &ac, algo)?;
                    let ld: f64 = e.pivot_values.iter().map(|x| x.norm().ln()).sum();
                    (t, e.rank, ld)
                };
                name = if t.blocked { "blocked" } else { "columns" };
                comp.push(t.compute);
                tot.push(t.total);
                if rep == 0 {
                    rank = e_rank;
                    logdet = ld + log_scale;
                }
            }
            let (c, t) = (median(&mut comp), median(&mut tot));
            let (ls, dl, ratio) = match &lu {
                Some(l) => (
                    format!("{:.4}", l.seconds),
                    format!("{:.1e}", (logdet - l.log_abs_det).abs()),
                    format!("{:.1}", c / l.seconds),
                ),
                None => ("-".into(), "-".into(), "-".into()),
            };
            println!(
                "{:>6} {:>8} {:>11.4} {:>11.4} {:>6} {:>16.6} {:>11} {:>10} {:>8}",
                n, name, c, t, rank, logdet, ls, dl, ratio
            );
        }
    }
    Ok(())
}

/// GPU table for Z/p in u64 words (p ≥ 2^31): median over `reps` of the column-by-column
/// RREF of a random n × n matrix mod p, checked to be the identity.
pub fn bench_cuda_zp64(ns: &[usize], prime: u64, reps: usize, device: usize) -> Result<()> {
    use rand::{Rng, SeedableRng};
    let f = Zp64::new(prime).map_err(|e| Error::Usage(format!("--prime: {e}")))?;
    let mut g = CudaRref::new(device)?;
    println!(
        "# pathtrack bench rref --backend cuda, p = {prime} (u64 words, columns), on {}",
        g.device_description()
    );
    let w = Matrix::from_fn(100, 100, |i, j| ((i * 5 + j) % 13) as u64);
    g.rref_gpu(&f, &w, GpuAlgo::Columns)?;
    println!(
        "{:>6} {:>11} {:>11} {:>10}",
        "n", "compute_s", "total_s", "result"
    );
    for &n in ns {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(n as u64);
        let a = Matrix::from_fn(n, n, |_, _| rng.random_range(0..prime));
        let (mut comp, mut tot) = (vec![], vec![]);
        let mut result = String::new();
        for rep in 0..reps.max(1) {
            let (r, e, t) = g.rref_gpu(&f, &a, GpuAlgo::Columns)?;
            comp.push(t.compute);
            tot.push(t.total);
            if rep == 0 {
                let ident = e.rank == n
                    && r.data
                        .chunks(n)
                        .enumerate()
                        .all(|(i, row)| row.iter().enumerate().all(|(j, &x)| x == (i == j) as u64));
                result = if ident {
                    "RREF=I".into()
                } else {
                    format!("rank {}", e.rank)
                };
            }
        }
        println!(
            "{:>6} {:>11.4} {:>11.4} {:>10}",
            n,
            median(&mut comp),
            median(&mut tot),
            result
        );
    }
    Ok(())
}

/// Linac's published A100 times (seconds) for RREF of a random n × n matrix mod a 31-bit
/// prime.
pub const LINAC_A100: [(usize, f64); 5] = [
    (1000, 0.52),
    (2000, 0.56),
    (5000, 1.02),
    (10000, 3.60),
    (20000, 23.4),
];

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// GPU table: median over `reps` runs of the elimination time (device events, the final
/// row gather included) and of the whole call (with the host↔device copies) for a random
/// n × n matrix with entries uniform in [0, p) (seed n), beside Linac's A100 time; the
/// result is checked to be the identity (such matrices have full rank with probability
/// ≥ 1 − n/p) or, failing that, its rank is printed.
pub fn bench_cuda(
    ns: &[usize],
    prime: u64,
    algos: &[GpuAlgo],
    reps: usize,
    device: usize,
) -> Result<()> {
    use rand::{Rng, SeedableRng};
    if prime >= 1 << 31 {
        return Err(Error::Usage(format!(
            "--backend cuda: --prime {prime} is not below 2^31"
        )));
    }
    let p = prime as u32;
    let f = Zp32::new(p).map_err(|e| Error::Usage(format!("--prime: {e}")))?;
    let mut g = CudaRref::new(device)?;
    if let Some(b) = std::env::var("RREF_PANEL")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        g.panel = b;
    }
    println!(
        "# pathtrack bench rref --backend cuda, p = {p}, blocked panel {}, on {}",
        if g.panel == 0 {
            "auto (64 below n = 15000, else 128)".to_string()
        } else {
            g.auto_panel(0).to_string()
        },
        g.device_description()
    );
    // Warm-up: compilation, module load, cuBLAS initialization.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let w = Matrix::from_fn(300, 300, |_, _| rng.random_range(0..p));
    for algo in [GpuAlgo::Columns, GpuAlgo::Blocked] {
        g.rref_zp32(&f, &w, algo)?;
    }
    println!(
        "{:>6} {:>8} {:>11} {:>11} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9}",
        "n",
        "algo",
        "compute_s",
        "total_s",
        "upload_s",
        "down_s",
        "result",
        "linac_s",
        "x_comp",
        "x_total"
    );
    for &n in ns {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(n as u64);
        let a = Matrix::from_fn(n, n, |_, _| rng.random_range(0..p));
        let linac = LINAC_A100.iter().find(|(s, _)| *s == n).map(|x| x.1);
        for &algo in algos {
            let (mut comp, mut tot, mut up, mut down) = (vec![], vec![], vec![], vec![]);
            let mut result = String::new();
            let mut name = "";
            for rep in 0..reps.max(1) {
                let (r, e, t) = g.rref_zp32(&f, &a, algo)?;
                name = if t.blocked { "blocked" } else { "columns" };
                comp.push(t.compute);
                tot.push(t.total);
                up.push(t.upload);
                down.push(t.download);
                if rep == 0 {
                    let ident = e.rank == n
                        && r.data.chunks(n).enumerate().all(|(i, row)| {
                            row.iter().enumerate().all(|(j, &x)| x == (i == j) as u32)
                        });
                    result = if ident {
                        "RREF=I".into()
                    } else if e.rank == n {
                        "WRONG".into()
                    } else {
                        format!("rank {}", e.rank)
                    };
                }
            }
            let (c, t) = (median(&mut comp), median(&mut tot));
            let fmt_opt = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.2}"));
            println!(
                "{:>6} {:>8} {:>11.4} {:>11.4} {:>9.4} {:>9.4} {:>10} {:>10} {:>9} {:>9}",
                n,
                name,
                c,
                t,
                median(&mut up),
                median(&mut down),
                result,
                fmt_opt(linac),
                fmt_opt(linac.map(|l| l / c)),
                fmt_opt(linac.map(|l| l / t)),
            );
        }
    }
    Ok(())
}

/// Parses a device list `0,1` (ordinals, comma separated, repeats allowed).
pub fn parse_devices(s: &str) -> Result<Vec<usize>> {
    let v: std::result::Result<Vec<usize>, _> =
        s.split(',').map(|t| t.trim().parse::<usize>()).collect();
    match v {
        Ok(v) if !v.is_empty() => Ok(v),
        _ => Err(Error::Usage(format!(
            "--devices '{s}': expected comma-separated GPU ordinals, e.g. 0,1"
        ))),
    }
}

/// `pathtrack bench rref --backend cuda --rhs M --devices 0,1 [--devices 0] --n N,..
/// [--field f64|c64|zp] [--reps R]`: per n and device list, the median over `reps` of the
/// wall time of [`MultiGpu::solve`](crate::linalg::rref::multi::MultiGpu::solve) of a random
/// n × n system with M right-hand sides (entries uniform in [−1, 1), Z/p: uniform residues;
/// seed n), and the residual over 128 sampled columns (see
/// [`sampled_residual`](crate::linalg::rref::multi::sampled_residual)).
pub fn bench_many_rhs(
    ns: &[usize],
    m: usize,
    device_lists: &[Vec<usize>],
    field: RrefField,
    prime: u64,
    reps: usize,
) -> Result<()> {
    use crate::linalg::rref::multi::{sampled_residual, MultiGpu, MultiSolveField};
    use num_complex::Complex64;
    use rand::{Rng, SeedableRng};
    if field == RrefField::Zp && prime >= 1 << 31 {
        return Err(Error::Usage(
            "bench rref --rhs: Z/p needs --prime below 2^31 (u32 words)".into(),
        ));
    }
    let fz = if field == RrefField::Zp {
        Some(Zp32::new(prime as u32).map_err(|e| Error::Usage(format!("--prime: {e}")))?)
    } else {
        None
    };
    println!(
        "# pathtrack bench rref --backend cuda --rhs {m} --field {field:?}: A X = B, B's columns in blocks over the devices"
    );
    println!(
        "{:>6} {:>8} {:>10} {:>10} {:>30} {:>12}",
        "n", "m", "devices", "seconds", "per-device seconds", "residual"
    );
    fn one<F: MultiSolveField>(
        g: &mut MultiGpu,
        f: &F,
        a: &Matrix<F::Elem>,
        b: &Matrix<F::Elem>,
        reps: usize,
    ) -> Result<(f64, Vec<f64>, f64)> {
        // Warm-up (NVRTC, cuBLAS) on a small system.
        let n0 = 64.min(a.rows);
        let w = a.block(0, n0, 0, n0);
        let mut wd = w.clone();
        for i in 0..n0 {
            wd.set(i, i, f.add(w.get(i, i), f.from_i64(1000)));
        }
        g.solve(
            f,
            &wd,
            &b.block(0, n0, 0, g.ordinals().len().min(b.cols)),
            GpuAlgo::Auto,
        )?;
        let mut runs = vec![];
        let mut x = None;
        for _ in 0..reps.max(1) {
            let (xi, t) = g.solve(f, a, b, GpuAlgo::Auto)?;
            runs.push(t);
            x = Some(xi);
        }
        runs.sort_by(|p, q| p.total.total_cmp(&q.total));
        let med = runs[runs.len() / 2].clone();
        let res = sampled_residual(f, a, x.as_ref().unwrap(), b, 128);
        Ok((med.total, med.per_device, res))
    }
    for &n in ns {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(n as u64);
        for devs in device_lists {
            let mut g = MultiGpu::new(devs)?;
            let (secs, per, res) = match field {
                RrefField::F64 => {
                    let a = Matrix::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0f64));
                    let b = Matrix::from_fn(n, m, |_, _| rng.random_range(-1.0..1.0f64));
                    one(&mut g, &F64, &a, &b, reps)?
                }
                RrefField::C64 => {
                    let mut c = || {
                        Complex64::new(
                            rng.random_range(-1.0..1.0f64),
                            rng.random_range(-1.0..1.0f64),
                        )
                    };
                    let a = Matrix::from_fn(n, n, |_, _| c());
                    let b = Matrix::from_fn(n, m, |_, _| c());
                    one(&mut g, &C64, &a, &b, reps)?
                }
                RrefField::Zp => {
                    let p = prime as u32;
                    let a = Matrix::from_fn(n, n, |_, _| rng.random_range(0..p));
                    let b = Matrix::from_fn(n, m, |_, _| rng.random_range(0..p));
                    one(&mut g, fz.as_ref().unwrap(), &a, &b, reps)?
                }
            };
            let dl: Vec<String> = devs.iter().map(|d| d.to_string()).collect();
            let pl: Vec<String> = per.iter().map(|s| format!("{s:.3}")).collect();
            println!(
                "{:>6} {:>8} {:>10} {:>10.3} {:>30} {:>12.3e}",
                n,
                m,
                dl.join(","),
                secs,
                pl.join(","),
                res
            );
        }
    }
    Ok(())
}
