//! `pathtrack rref FILE [--prime P] [--backend cpu|cuda] [-o OUT.mtx] [--json]`: reduced
//! row echelon form of a Matrix Market matrix, and `pathtrack bench rref` (see [`bench`]).
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
    /// GPU algorithm (`--backend cuda`).
    #[arg(long, value_enum, default_value = "auto")]
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
    /// Print only {"rank", "pivots", "seconds"} as JSON on stdout.
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
    if a.json {
        // Keys in the documented order: {"rank": r, "pivots": [...], "seconds": s}.
        let piv = serde_json::to_string(pivots).map_err(|e| Error::Internal(e.to_string()))?;
        println!(
            "{{\"rank\": {}, \"pivots\": {piv}, \"seconds\": {seconds}}}",
            pivots.len()
        );
        return Ok(0);
    }
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
        None => {
            let stdout = std::io::stdout();
            let mut w = std::io::BufWriter::new(stdout.lock());
            mtx::write_array(&mut w, r, field, &comment, fmt)
                .and_then(|_| std::io::Write::flush(&mut w))
                .map_err(|e| Error::io("writing stdout".to_string(), e))?;
        }
    }
    Ok(0)
}

pub fn run(a: &RrefArgs) -> Result<i32> {
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
            let mut m = data.to_c64();
            let (e, s) = timed(&C64, &mut m, &opt);
            let c = format!("RREF over complex f64, zero tolerance {:e}", e.tolerance);
            finish(a, &m, &e.pivots, s, "complex", &c, |z| {
                format!("{} {}", mtx::fmt_f64(z.re), mtx::fmt_f64(z.im))
            })
        }
        None => {
            let mut m = data.to_f64()?;
            let (e, s) = timed(&F64, &mut m, &opt);
            let c = format!("RREF over f64, zero tolerance {:e}", e.tolerance);
            finish(a, &m, &e.pivots, s, "real", &c, mtx::fmt_f64)
        }
    }
}

/// `--backend cuda`: Z/p with p < 2^31 only; `seconds` is the GPU call's wall time
/// (upload, elimination, download; without NVRTC compilation and file I/O).
fn run_cuda(a: &RrefArgs) -> Result<i32> {
    let p = match a.prime {
        Some(p) if p < 1 << 31 => p as u32,
        Some(p) => {
            return Err(Error::Usage(format!(
                "--backend cuda: --prime {p} is not below 2^31 (only u32 words on the GPU; use --backend cpu)"
            )))
        }
        None => {
            return Err(Error::Usage(
                "--backend cuda needs --prime P (P < 2^31): floats run on the CPU only".into(),
            ))
        }
    };
    if a.tol.is_some() {
        return Err(Error::Usage(
            "--tol applies to floats only, not with --prime".into(),
        ));
    }
    let f = Zp32::new(p).map_err(|e| Error::Usage(format!("--prime: {e}")))?;
    let data = mtx::read(&a.file)?;
    let m = data.to_zp32(&f)?;
    let mut g = CudaRref::new(a.device)?;
    let (r, e, t) = g.rref_zp32(&f, &m, a.algo)?;
    finish(
        a,
        &r,
        &e.pivots,
        t.total,
        "integer",
        &format!("RREF over Z/{p} (GPU: {})", g.device_description()),
        |x| x.to_string(),
    )
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
) -> Result<()> {
    match backend {
        RrefBackend::Cpu => {
            for &n in ns {
                crate::linalg::rref::bench::run(n, prime)
                    .map_err(|e| Error::Usage(format!("--prime: {e}")))?;
            }
            Ok(())
        }
        RrefBackend::Cuda => bench_cuda(ns, prime, algos, reps, device),
    }
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
