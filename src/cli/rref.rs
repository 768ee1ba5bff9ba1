//! `pathtrack rref FILE [--prime P] [--backend cpu|cuda] [-o OUT.mtx] [--json]`: reduced
//! row echelon form of a Matrix Market matrix, and `pathtrack bench rref` (see [`bench`]).
//!
//! Element type: with `--prime P` the (integer) matrix is reduced mod P (u32 words when
//! P < 2^31, u64 words when P < 2^63); without it real and integer files are read as f64
//! and complex files as complex f64.

use crate::error::{Error, Result};
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
        return Err(Error::Usage(
            "CUDA backend for rref not available yet (use --backend cpu)".into(),
        ));
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

/// `pathtrack bench rref --n N --prime P`: prints the timing table of
/// [`crate::linalg::rref::bench::run`].
pub fn bench(n: usize, prime: u64) -> Result<()> {
    crate::linalg::rref::bench::run(n, prime).map_err(|e| Error::Usage(format!("--prime: {e}")))
}
