//! `pathtrack witness FILE`, `pathtrack decompose FILE` and `pathtrack member FILE`:
//! witness sets by dimension, the numerical irreducible decomposition and the homotopy
//! membership test (docs/witness.md; the mathematics in [`crate::witness`]).

use super::solve_args::{make_backend, tracker_for, BackendKind};
use crate::backend::cuda::{EvalMethod, SolveMethod};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::report::table_row;
use crate::solver::{SolveOptions, StartKind};
use crate::system::System;
use crate::witness::compute::witness_sets;
use crate::witness::decompose::{decompose_set, isolated_components, Component, DecomposeOptions};
use crate::witness::file::WitnessFile;
use crate::witness::membership::on_set;
use crate::witness::moving::Mover;
use crate::witness::sets::{DimensionReport, Method, WitnessOptions};
use clap::Args;
use num_complex::Complex64 as C64;
use serde_json::json;

/// What the three commands share: the system, the seed and where paths run.
#[derive(Args, Debug, Clone)]
pub struct Common {
    /// System file (YAML, any number of equations; PHCpack, Bertini or Hom4PS: square) or a
    /// family name such as cyclic8.
    pub file: std::path::PathBuf,
    /// Seed of every random choice (randomizations, slices, loops): the same seed gives the
    /// same witness sets and the same decomposition.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Start system of each sliced square system.
    #[arg(long, value_enum, default_value = "auto")]
    pub start: StartKind,
    /// Where paths are tracked.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendKind,
    /// GPU to use with `--backend cuda|auto`.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// CPU threads (0: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct WitnessArgs {
    #[command(flatten)]
    pub common: Common,
    /// Compute the witness sets down to this dimension only (those above it are needed to
    /// clean it, and computed too).
    #[arg(long)]
    pub dimension: Option<usize>,
    /// The largest dimension to look at (default: variables − 1); say so when nothing of
    /// larger dimension exists, to skip those solves.
    #[arg(long)]
    pub top_dimension: Option<usize>,
    /// Write the witness sets (slices, randomizations, points) to this file, for
    /// `decompose --witness` and `member --witness`.
    #[arg(short, long)]
    pub output: Option<std::path::PathBuf>,
    /// How the witness supersets are found: dimensions (one start system per dimension) or
    /// cascade (one start system for the top dimension, then only the paths that leave each
    /// dimension; see the limits in docs/witness.md).
    #[arg(long, value_enum, default_value = "dimensions")]
    pub method: Method,
}

#[derive(Args, Debug)]
pub struct DecomposeArgs {
    #[command(flatten)]
    pub common: Common,
    /// Decompose the witness sets of this file (from `witness -o`) instead of computing them.
    #[arg(long)]
    pub witness: Option<std::path::PathBuf>,
    /// As for `witness`: down to this dimension only.
    #[arg(long)]
    pub dimension: Option<usize>,
    /// As for `witness`: the largest dimension to look at.
    #[arg(long)]
    pub top_dimension: Option<usize>,
    /// How the witness supersets are found: dimensions (one start system per dimension) or
    /// cascade (one start system for the top dimension, then only the paths that leave each
    /// dimension; see the limits in docs/witness.md).
    #[arg(long, value_enum, default_value = "dimensions")]
    pub method: Method,
    /// Monodromy loops per dimension, at most.
    #[arg(long, default_value_t = 30)]
    pub max_loops: usize,
    /// Stop the loops after this many in a row joined no groups.
    #[arg(long, default_value_t = 5)]
    pub stall_loops: usize,
    /// Write the witness sets with their components (each with its witness points'
    /// indices) to this file.
    #[arg(short, long)]
    pub output: Option<std::path::PathBuf>,
}

#[derive(Args, Debug)]
pub struct MemberArgs {
    #[command(flatten)]
    pub common: Common,
    /// The witness file (from `witness -o` or `decompose -o`).
    #[arg(long)]
    pub witness: std::path::PathBuf,
    /// The point: its coordinates separated by commas, each like 1.5, -2e-3, 1+2i, 0.5-i.
    #[arg(long, allow_hyphen_values = true)]
    pub point: String,
}

/// The backend and the solve options the flags ask for.
fn setup(c: &Common, n: usize) -> Result<(Box<dyn Backend>, SolveOptions)> {
    let threads = super::resources::threads(c.threads);
    let backend = make_backend(
        c.backend,
        c.device,
        EvalMethod::Fused,
        SolveMethod::GaussJordan,
        threads,
        None,
        None,
    )?;
    let _ = n;
    let opts = SolveOptions {
        start: c.start,
        seed: c.seed,
        threads,
        tracker: tracker_for(backend.as_ref(), None)?,
        ..Default::default()
    };
    Ok((backend, opts))
}

fn load(c: &Common) -> Result<System> {
    let system = crate::system::parse::load_named_rectangular(&c.file)?;
    Ok(system)
}

#[allow(clippy::too_many_arguments)]
fn compute_sets(
    c: &Common,
    system: &System,
    method: Method,
    dimension: Option<usize>,
    top: Option<usize>,
    backend: &mut dyn Backend,
    solve: SolveOptions,
) -> Result<(WitnessFile, Vec<DimensionReport>)> {
    let opts = WitnessOptions {
        method,
        seed: c.seed,
        top,
        lowest: dimension.unwrap_or(0),
        solve,
    };
    let quiet = c.quiet;
    let (sets, reports) = witness_sets(system, &opts, backend, &mut |d| {
        if !quiet {
            eprintln!("pathtrack: witness set of dimension {d}");
        }
    })?;
    Ok((WitnessFile::new(system, c.seed, sets), reports))
}

pub fn run_witness(a: &WitnessArgs) -> Result<i32> {
    super::outputs::check(Some(&a.common.file), &[("-o", a.output.as_deref())])?;
    let clock = std::time::Instant::now();
    let system = load(&a.common)?;
    let (mut backend, solve) = setup(&a.common, system.n())?;
    let (file, reports) = compute_sets(
        &a.common,
        &system,
        a.method,
        a.dimension,
        a.top_dimension,
        backend.as_mut(),
        solve,
    )?;
    if let Some(p) = &a.output {
        file.write(p)?;
    }
    let seconds = clock.elapsed().as_secs_f64();
    if a.common.json {
        let line = json!({
            "system": system.name,
            "variables": system.n(),
            "equations": system.equations.len(),
            "seed": a.common.seed,
            "dimensions": reports,
            "backend": backend.name(),
            "seconds": seconds,
        });
        println!("{line}");
    } else {
        print!("{}", witness_table(&system, &reports, seconds));
    }
    Ok(0)
}

fn witness_table(system: &System, reports: &[DimensionReport], seconds: f64) -> String {
    let mut t = format!(
        "pathtrack witness: {} ({} equations, {} variables)\n",
        system.name,
        system.equations.len(),
        system.n()
    );
    for r in reports {
        t.push_str(&table_row(
            &format!("dimension {}", r.dimension),
            &format!(
                "degree {} ({} paths, {} finite, {} excess, {} on higher dimensions, {} \
                 nonsolutions)",
                r.degree, r.paths, r.finite, r.excess, r.junk, r.nonsolutions
            ),
        ));
    }
    t.push_str(&table_row("seconds", &format!("{seconds:.3}")));
    t
}

pub fn run_decompose(a: &DecomposeArgs) -> Result<i32> {
    super::outputs::check(
        Some(&a.common.file),
        &[("-o", a.output.as_deref()), ("--witness", None)],
    )?;
    let clock = std::time::Instant::now();
    let system = load(&a.common)?;
    let (mut backend, solve) = setup(&a.common, system.n())?;
    let tracker = solve.tracker.clone();
    let (mut file, reports) = match &a.witness {
        Some(w) => (WitnessFile::read(w, &system)?, Vec::new()),
        None => compute_sets(
            &a.common,
            &system,
            a.method,
            a.dimension,
            a.top_dimension,
            backend.as_mut(),
            solve,
        )?,
    };
    let opts = DecomposeOptions {
        seed: a.common.seed,
        max_loops: a.max_loops,
        stall_loops: a.stall_loops,
    };
    let mut components: Vec<Component> = Vec::new();
    let mut decomposed = Vec::new();
    for w in &file.sets {
        if w.dimension == 0 {
            components.extend(isolated_components(w));
            continue;
        }
        if !a.common.quiet {
            eprintln!(
                "pathtrack: decomposing dimension {} (degree {})",
                w.dimension,
                w.degree()
            );
        }
        let mut mover = Mover::new(
            w.randomization.apply(&system),
            system.variables.clone(),
            tracker.clone(),
            backend.as_mut(),
        );
        let (c, r) = decompose_set(&mut mover, w, &opts)?;
        components.extend(c);
        decomposed.push(r);
    }
    file.components = Some(components.clone());
    if let Some(p) = &a.output {
        file.write(p)?;
    }
    let seconds = clock.elapsed().as_secs_f64();
    let summary: Vec<_> = components
        .iter()
        .map(|c| {
            json!({"dimension": c.dimension, "degree": c.degree,
                   "multiplicity": c.multiplicity, "certified": c.certified})
        })
        .collect();
    if a.common.json {
        let line = json!({
            "system": system.name,
            "variables": system.n(),
            "equations": system.equations.len(),
            "seed": a.common.seed,
            "components": summary,
            "witness_sets": reports,
            "decomposition": decomposed,
            "backend": backend.name(),
            "seconds": seconds,
        });
        println!("{line}");
    } else {
        print!("{}", decompose_table(&system, &file, &components, seconds));
    }
    Ok(0)
}

fn decompose_table(
    system: &System,
    file: &WitnessFile,
    components: &[Component],
    seconds: f64,
) -> String {
    let mut t = format!(
        "pathtrack decompose: {} ({} equations, {} variables)\n",
        system.name,
        system.equations.len(),
        system.n()
    );
    for w in &file.sets {
        let here: Vec<&Component> = components
            .iter()
            .filter(|c| c.dimension == w.dimension)
            .collect();
        if here.is_empty() {
            continue;
        }
        let uncertified = here.iter().filter(|c| !c.certified).count();
        let degrees: Vec<String> = here
            .iter()
            .map(|c| match c.multiplicity {
                1 => c.degree.to_string(),
                m => format!("{}(×{m})", c.degree),
            })
            .collect();
        let value = if w.dimension == 0 {
            let multiple = here.iter().filter(|c| c.multiplicity > 1).count();
            format!(
                "{} isolated solutions ({multiple} of multiplicity > 1)",
                here.len()
            )
        } else {
            format!(
                "{} components, degrees {}{}",
                here.len(),
                degrees.join(" "),
                if uncertified > 0 {
                    format!(" ({uncertified} not certified by the trace test)")
                } else {
                    String::new()
                }
            )
        };
        t.push_str(&table_row(&format!("dimension {}", w.dimension), &value));
    }
    t.push_str(&table_row("seconds", &format!("{seconds:.3}")));
    t
}

/// Parses `1.5, -2e-3, 1+2i, 0.5-i, 3i` into complex numbers; an error names the bad entry.
pub fn parse_point(s: &str, n: usize) -> Result<Vec<C64>> {
    let bad = |e: &str, why: &str| {
        Error::Usage(format!("--point: '{e}' is not a complex number ({why})"))
    };
    let mut out = Vec::new();
    for raw in s.split(',') {
        let e: String = raw.chars().filter(|c| !c.is_whitespace()).collect();
        if e.is_empty() {
            return Err(bad(raw, "empty"));
        }
        let z = if let Some(body) = e.strip_suffix(['i', 'I']) {
            // Split at the last sign that is not the first character nor after an exponent.
            let bytes = body.as_bytes();
            let split = (1..bytes.len()).rev().find(|&k| {
                (bytes[k] == b'+' || bytes[k] == b'-') && !matches!(bytes[k - 1], b'e' | b'E')
            });
            let (re, im) = match split {
                Some(k) => (&body[..k], &body[k..]),
                None => ("0", body),
            };
            let im = match im {
                "" | "+" => "1",
                "-" => "-1",
                v => v,
            };
            let re: f64 = re.parse().map_err(|_| bad(raw, "real part"))?;
            let im: f64 = im.parse().map_err(|_| bad(raw, "imaginary part"))?;
            C64::new(re, im)
        } else {
            C64::new(e.parse().map_err(|_| bad(raw, "a number"))?, 0.0)
        };
        if !(z.re.is_finite() && z.im.is_finite()) {
            return Err(bad(raw, "not finite"));
        }
        out.push(z);
    }
    if out.len() != n {
        return Err(Error::Usage(format!(
            "--point has {} coordinates, the system {} variables",
            out.len(),
            n
        )));
    }
    Ok(out)
}

pub fn run_member(a: &MemberArgs) -> Result<i32> {
    let system = load(&a.common)?;
    let p = parse_point(&a.point, system.n())?;
    let file = WitnessFile::read(&a.witness, &system)?;
    let (mut backend, solve) = setup(&a.common, system.n())?;
    let residual = crate::witness::excess::dd_relative_residual(&system, &p);
    let mut found: Option<(usize, usize)> = None;
    if residual <= crate::witness::excess::EXCESS_RESIDUAL_TOL {
        for w in &file.sets {
            let mut mover = Mover::new(
                w.randomization.apply(&system),
                system.variables.clone(),
                solve.tracker.clone(),
                backend.as_mut(),
            );
            if let Some(i) = on_set(&mut mover, w, &p, a.common.seed)? {
                found = Some((w.dimension, i));
                break;
            }
        }
    }
    let component = found.and_then(|(d, i)| {
        file.components.as_ref().and_then(|cs| {
            cs.iter()
                .filter(|c| c.dimension == d)
                .position(|c| c.points.contains(&i))
        })
    });
    let on = found.is_some();
    if a.common.json {
        println!(
            "{}",
            json!({
                "member": on,
                "residual": residual,
                "dimension": found.map(|f| f.0),
                "witness_point": found.map(|f| f.1),
                "component": component,
            })
        );
    } else {
        let what = match (found, component) {
            (None, _) if residual > crate::witness::excess::EXCESS_RESIDUAL_TOL => {
                format!("no: not a solution (relative residual {residual:.2e})")
            }
            (None, _) => "no: a solution on no component of the witness file".to_string(),
            (Some((d, _)), Some(c)) => format!("yes: dimension {d}, component {c}"),
            (Some((d, i)), None) => format!("yes: dimension {d} (witness point {i})"),
        };
        print!("{}", table_row("member", &what));
    }
    Ok(0)
}
