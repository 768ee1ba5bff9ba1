//! `pathtrack monodromy FILE [--json] [-o SOLS.jsonl]`: the solutions of a generic member
//! of a family with parameters, by monodromy loops (crate::params::monodromy).

use crate::backend::Backend;
use crate::cli::solve_args::{make_backend, tracker_for, BackendKind};
use crate::error::{Error, Result};
use crate::params::monodromy::{self, MonodromyOptions};
use crate::params::{values, Family};
use crate::report::table_row;
use crate::solver::SolveOptions;
use clap::Args;
use serde_json::json;
use std::io::Write;

#[derive(Args, Debug)]
pub struct MonodromyArgs {
    /// A YAML system with a `parameters:` list, each coefficient affine in the parameters.
    pub file: std::path::PathBuf,
    /// Stop after this many loops in a row without new solutions.
    #[arg(long, default_value_t = 5)]
    pub stall_loops: usize,
    /// Stop after this many loops in all.
    #[arg(long, default_value_t = 1000)]
    pub max_loops: usize,
    /// Do not run the trace test after loops without new solutions (stop on the stall count
    /// only).
    #[arg(long)]
    pub no_trace_test: bool,
    /// Seed of every random choice (start pair, loops, γ): the same seed gives the same run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Write the solutions as JSON Lines, each with the parameter values: a start for
    /// `pathtrack solve FILE --from SOLS.jsonl --params …`.
    #[arg(short, long)]
    pub output: Option<std::path::PathBuf>,
    /// Where paths are tracked (auto: for each loop's edge the CPU when it finishes before
    /// the GPU would start, else the GPU when one is present).
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendKind,
    /// GPU to use with `--backend cuda|auto`.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// CPU threads (0: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// No line per loop on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(a: &MonodromyArgs) -> Result<i32> {
    super::outputs::check(Some(&a.file), &[("-o", a.output.as_deref())])?;
    if a.stall_loops == 0 || a.max_loops == 0 {
        return Err(Error::Usage(
            "--stall-loops and --max-loops must be positive".into(),
        ));
    }
    let origin = a.file.display().to_string();
    if !a.file.exists() && crate::system::parse::load_named(&a.file).is_ok() {
        return Err(Error::Usage(format!(
            "{origin}: a benchmark family has no parameters; monodromy needs a YAML system with a `parameters:` list (docs/parameters.md)"
        )));
    }
    let family = match Family::load(&a.file)? {
        Some(f) => f,
        None => {
            let fmt = std::fs::read_to_string(&a.file)
                .map(|t| crate::system::parse::detect(&t))
                .unwrap_or(crate::system::parse::Format::Yaml);
            let why = if fmt == crate::system::parse::Format::Yaml {
                "it has no `parameters:` list".to_string()
            } else {
                format!("the {fmt:?} format has no parameters; write it in YAML with a `parameters:` list")
            };
            return Err(Error::Usage(format!(
                "{origin}: monodromy needs a system with parameters, and {why}"
            )));
        }
    };
    let threads = super::resources::threads(a.threads);
    let mut backend: Box<dyn Backend> = make_backend(
        a.backend,
        a.device,
        crate::backend::cuda::EvalMethod::Fused,
        crate::backend::cuda::SolveMethod::GaussJordan,
        threads,
        None,
        None,
    )?;
    let opts = SolveOptions {
        seed: a.seed,
        threads,
        tracker: tracker_for(backend.as_ref(), None)?,
        ..Default::default()
    };
    let mopts = MonodromyOptions {
        stall_loops: a.stall_loops,
        max_loops: a.max_loops,
        trace_test: !a.no_trace_test,
    };
    let clock = std::time::Instant::now();
    let quiet = a.quiet;
    let mut progress = |loops: usize, count: usize| {
        if !quiet {
            eprintln!("pathtrack monodromy: loop {loops}: {count} solutions");
        }
    };
    let r = monodromy::solve(&family, &opts, &mopts, backend.as_mut(), &mut progress)?;
    let seconds = clock.elapsed().as_secs_f64();
    let names = &family.parameters;
    if let Some(path) = &a.output {
        let io = |e| Error::io(format!("writing {}", path.display()), e);
        let mut w = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
        let params = values::to_json(names, &r.parameters);
        for x in &r.solutions {
            let line = json!({
                "status": "nonsingular",
                "coordinates": x.iter().map(|z| [z.re, z.im]).collect::<Vec<_>>(),
                "real": crate::post::is_real(x, crate::report::REAL_TOL),
                "parameters": params,
            });
            writeln!(w, "{line}").map_err(io)?;
        }
        w.flush().map_err(io)?;
    }
    let real = r
        .solutions
        .iter()
        .filter(|x| crate::post::is_real(x, crate::report::REAL_TOL))
        .count();
    if a.json {
        let out = json!({
            "system": family.name,
            "variables": family.n(),
            "parameter_names": names,
            "parameters": values::to_json(names, &r.parameters),
            "solutions": r.solutions.len(),
            "real": real,
            "loops": r.loops,
            "paths": r.paths,
            "stop": r.stop,
            "stop_reason": r.stop.describe(),
            "trace_residual": r.trace_residual,
            "solutions_per_loop": r.history,
            "seconds": seconds,
            "backend": backend.name(),
            "seed": a.seed,
        });
        println!("{out}");
    } else {
        println!(
            "pathtrack monodromy: {} ({} variables, {} parameters)",
            family.name,
            family.n(),
            family.m()
        );
        let rows = [
            ("solutions", r.solutions.len().to_string()),
            ("  real", real.to_string()),
            ("loops", r.loops.to_string()),
            ("paths tracked", r.paths.to_string()),
            ("stopped", r.stop.describe().to_string()),
            (
                "trace test residual",
                r.trace_residual
                    .map_or("none completed".into(), |v| format!("{v:.1e}")),
            ),
            ("seconds", format!("{seconds:.3}")),
        ];
        for (k, v) in rows {
            print!("{}", table_row(k, &v));
        }
    }
    Ok(0)
}
