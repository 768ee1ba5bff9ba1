//! `pathtrack solve` for families and given start solutions:
//!
//! - `solve F --params "a=1, b=2-3i"`: the member at those values (without `--params`, at
//!   random complex values, written into the output so that the run can be a start);
//! - `solve F --from START.jsonl --params …` or `--params-file TARGETS.csv`: the parameter
//!   homotopy from the start solutions (at the parameter values their lines carry) to every
//!   target; `--params-file` without `--from` first solves a random member;
//! - `solve F --start-system G --from G_SOLS.jsonl`: the homotopy `γ(1 − t)·G + t·F`.
//!
//! Other runs of `solve` do not come here ([`run`] answers `None`).

use super::{startfile, values, Family, GivenStart};
use crate::backend::Backend;
use crate::cli::solve_args::SolveArgs;
use crate::error::{Error, InputError, Result};
use crate::post::Endpoint;
use crate::report::formats::{EndpointWriter, SolutionFormat};
use crate::report::progress::{Phase, Progress};
use crate::report::{summary_table, table_row, Summary};
use crate::solver::{rng_for, solve, Observer, SolveOptions};
use num_complex::Complex64 as C64;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::path::Path;
use std::sync::Arc;

/// Runs `solve` when the system has parameters or a family option is given; `Ok(None)`
/// otherwise (the plain solve goes on).
pub fn run(a: &SolveArgs) -> Result<Option<i32>> {
    let f = &a.family;
    let text = if a.file.exists() {
        Some(std::fs::read_to_string(&a.file).map_err(|e| {
            InputError::new(
                a.file.display().to_string(),
                format!("cannot read file: {e}"),
            )
        })?)
    } else {
        None
    };
    let origin = a.file.display().to_string();
    // A cheap look before parsing: a plain run of a file without the word is no family.
    let maybe_family = text.as_deref().is_some_and(|t| t.contains("parameters"));
    if !f.any() && !maybe_family {
        return Ok(None);
    }
    let format = text.as_deref().map(crate::system::parse::detect);
    let wants_params = f.params.is_some() || f.params_file.is_some();
    if wants_params {
        if let Some(fm) = format.filter(|&fm| fm != crate::system::parse::Format::Yaml) {
            let name = match fm {
                crate::system::parse::Format::Phc => "PHCpack",
                crate::system::parse::Format::Bertini => "Bertini",
                _ => "Hom4PS",
            };
            return Err(Error::Usage(format!(
                "{origin}: the {name} format has no parameters, so --params and \
                 --params-file cannot apply; write the system in YAML with a `parameters:` \
                 list beside `variables` (docs/parameters.md)"
            )));
        }
    }
    let family = match &text {
        Some(t) => Family::parse(t, &origin)?,
        None => None,
    };
    match family {
        Some(fam) => {
            if f.start_system.is_some() {
                return Err(Error::Usage(
                    "--start-system: the system has parameters; track from the solutions of \
                     another member with --from and --params instead"
                        .into(),
                ));
            }
            run_family(a, &fam).map(Some)
        }
        None => {
            if wants_params {
                return Err(Error::Usage(format!(
                    "{}: the system has no parameters (no `parameters:` list), so --params \
                     and --params-file cannot apply",
                    origin
                )));
            }
            match (&f.start_system, &f.from) {
                (Some(g), Some(from)) => run_start_system(a, g, from).map(Some),
                (Some(_), None) => Err(Error::Usage(
                    "--start-system needs --from: the start system's solutions".into(),
                )),
                (None, _) => Err(Error::Usage(
                    "--from needs --start-system G (the system those solutions solve), or a \
                     system with parameters"
                        .into(),
                )),
            }
        }
    }
}

/// The solve options, the backend and the checks `solve` makes, for the runs here.
fn setup(a: &SolveArgs, n: usize) -> Result<(SolveOptions, Box<dyn Backend>)> {
    crate::cli::outputs::check(
        Some(&a.file),
        &[
            ("-o", a.output.as_deref()),
            ("--solutions", a.solutions.as_deref()),
        ],
    )?;
    let refuse = |what: &str| {
        Err(Error::Usage(format!(
            "{what} is not available with parameters or given start solutions"
        )))
    };
    if a.certify {
        return refuse("--certify");
    }
    if a.paths.is_some() {
        return refuse("--paths");
    }
    if a.devices.is_some() {
        return refuse("--devices");
    }
    if a.format != SolutionFormat::Jsonl {
        return refuse("--format other than jsonl");
    }
    let max_work = a.max_work_limit()?;
    let threads = crate::cli::resources::threads(a.threads);
    let partition = match &a.partition {
        Some(_) => {
            return refuse("--partition");
        }
        None => None,
    };
    let mut opts = SolveOptions {
        partition,
        start: a.start,
        seed: a.seed,
        torus: a.torus,
        threads,
        limits: crate::solver::limits::Limits {
            max_paths: (a.max_paths > 0).then_some(a.max_paths),
            max_work,
        },
        ..Default::default()
    };
    let (backend, tracker) = crate::cli::solve_args::backend_and_tracker(a, threads, n)?;
    opts.tracker = tracker;
    Ok((opts, backend))
}

/// Writes each endpoint with its extra keys, and shows progress.
struct Lines<'w> {
    progress: Option<Progress>,
    writer: &'w mut EndpointWriter,
    extra: Map<String, Value>,
}

impl Observer for Lines<'_> {
    fn phase(&mut self, phase: Phase) {
        if let Some(p) = &mut self.progress {
            p.set_phase(phase);
        }
    }
    fn endpoint(&mut self, e: &Endpoint) -> Result<()> {
        if let Some(p) = &mut self.progress {
            p.endpoint(e.path, e.attempt);
        }
        self.writer.write_with(e, self.extra.clone())
    }
}

/// Counts of one target of a `--params-file` run.
#[derive(Clone, Debug, Serialize)]
pub struct TargetCounts {
    pub target: usize,
    pub finite: u64,
    pub nonsingular: u64,
    pub singular: u64,
    pub real: u64,
    pub at_infinity: u64,
    pub failed: u64,
}

/// The summary of a run with parameters: the solve's keys (totals over the targets), the
/// parameter values, and per target its counts.
#[derive(Serialize)]
struct FamilySummary<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    /// The parameter names, in the order of every value list.
    parameter_names: &'a [String],
    /// The values of a single target (the solved member).
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<Value>,
    /// Where the start solutions were (parameter homotopies).
    #[serde(skip_serializing_if = "Option::is_none")]
    start_parameters: Option<Value>,
    /// Start solutions tracked to each target.
    #[serde(skip_serializing_if = "Option::is_none")]
    start_solutions: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    targets: Option<Vec<TargetCounts>>,
}

/// Adds the counts of `s` to `total`.
fn add_up(total: &mut Summary, s: &Summary) {
    total.paths += s.paths;
    total.finite += s.finite;
    total.nonsingular += s.nonsingular;
    total.singular += s.singular;
    total.at_infinity += s.at_infinity;
    total.real += s.real;
    total.real_nonsingular += s.real_nonsingular;
    total.real_singular += s.real_singular;
    total.failed += s.failed;
    for (k, v) in &s.failed_reasons {
        *total.failed_reasons.entry(k.clone()).or_default() += v;
    }
    total.duplicate_paths += s.duplicate_paths;
    total.recovered += s.recovered;
    total.retracked += s.retracked;
    total.retracked_early += s.retracked_early;
    total.phases.start_system += s.phases.start_system;
    total.phases.backend_setup += s.phases.backend_setup;
    total.phases.tracking += s.phases.tracking;
    total.phases.recovery += s.phases.recovery;
}

fn run_family(a: &SolveArgs, fam: &Family) -> Result<i32> {
    let f = &a.family;
    let names = &fam.parameters;
    if f.params.is_some() && f.params_file.is_some() {
        return Err(Error::Usage(
            "give either --params (one target) or --params-file (several), not both".into(),
        ));
    }
    let targets: Option<Vec<Vec<C64>>> = match (&f.params, &f.params_file) {
        (Some(p), _) => Some(vec![
            values::parse_assignments(p, names).map_err(Error::Usage)?
        ]),
        (_, Some(file)) => {
            let origin = file.display().to_string();
            let text = std::fs::read_to_string(file)
                .map_err(|e| InputError::new(&origin, format!("cannot read file: {e}")))?;
            Some(values::parse_targets_csv(&text, names, &origin)?)
        }
        _ => None,
    };
    if f.from.is_some() && targets.is_none() {
        return Err(Error::Usage(
            "--from: give the target parameters with --params or --params-file".into(),
        ));
    }
    let start = match &f.from {
        Some(from) => Some(startfile::read(from, &fam.variables, names)?),
        None => None,
    };
    let (opts, mut backend) = setup(a, fam.n())?;
    let mut rng = rng_for(a.seed);
    let clock = std::time::Instant::now();
    let mut writer =
        EndpointWriter::create(a.output.as_deref(), SolutionFormat::Jsonl, &fam.variables)?;
    let several = f.params_file.is_some();
    // A member solved directly: the only target, or a random one to start from.
    let (start_points, p0, mut total) = match start {
        Some(s) => {
            let p0 = s
                .parameters
                .expect("a family's start file carries parameters");
            if s.skipped + s.duplicates > 0 && !a.quiet {
                eprintln!(
                    "pathtrack: {} start solutions ({} lines not nonsingular, {} repeating a \
                     solution, left out)",
                    s.points.len(),
                    s.skipped,
                    s.duplicates
                );
            }
            (s.points, p0, None)
        }
        None => {
            let p = match (&targets, several) {
                (Some(t), false) => t[0].clone(),
                _ => super::random_point(fam.m(), &mut rng),
            };
            let member = fam.at(&p).map_err(Error::Usage)?;
            let mut extra = Map::new();
            extra.insert("parameters".into(), values::to_json(names, &p));
            let mut sink = EndpointWriter::create(None, SolutionFormat::Jsonl, &fam.variables)?;
            let mut obs = Lines {
                progress: Some(Progress::new(a.quiet)),
                writer: if several { &mut sink } else { &mut writer },
                extra,
            };
            let summary = solve(&member, &opts, backend.as_mut(), &mut obs)?;
            if let Some(p) = obs.progress.take() {
                p.finish();
            }
            if !several {
                writer.finish()?;
                if let Some(path) = &a.solutions {
                    write_solutions(path, &summary, names, &p, None)?;
                }
                let out = FamilySummary {
                    summary: &summary,
                    parameter_names: names,
                    parameters: Some(values::to_json(names, &p)),
                    start_parameters: None,
                    start_solutions: None,
                    targets: None,
                };
                print_summary(a, &out, names)?;
                print_solutions(a, &[(None, &summary)], &fam.variables);
                return Ok(0);
            }
            let points = summary
                .solutions
                .iter()
                .filter(|s| s.status == crate::post::Status::Nonsingular)
                .map(|s| s.coordinates.to_vec())
                .collect();
            (points, p, Some(summary))
        }
    };
    let targets = targets.expect("checked above");
    let mut counts = Vec::with_capacity(targets.len());
    let mut solutions: Vec<(usize, Summary)> = Vec::new();
    let mut last_note = std::time::Instant::now();
    for (k, p1) in targets.iter().enumerate() {
        let gamma = super::random_gamma(&mut rng);
        let mut extra = Map::new();
        if several {
            extra.insert("target".into(), json!(k));
        }
        extra.insert("parameters".into(), values::to_json(names, p1));
        let mut obs = Lines {
            progress: (!several).then(|| Progress::new(a.quiet)),
            writer: &mut writer,
            extra,
        };
        let s = super::track_to(
            fam,
            &start_points,
            &p0,
            p1,
            gamma,
            &opts,
            backend.as_mut(),
            &mut obs,
        )
        .map_err(|e| match e {
            Error::Usage(m) if several => Error::Usage(format!("target {k}: {m}")),
            e => e,
        })?;
        if let Some(p) = obs.progress.take() {
            p.finish();
        }
        if several && !a.quiet && last_note.elapsed().as_secs_f64() >= 5.0 {
            eprintln!("pathtrack: target {} of {}", k + 1, targets.len());
            last_note = std::time::Instant::now();
        }
        counts.push(TargetCounts {
            target: k,
            finite: s.finite,
            nonsingular: s.nonsingular,
            singular: s.singular,
            real: s.real,
            at_infinity: s.at_infinity,
            failed: s.failed,
        });
        match &mut total {
            Some(t) if t.start == "parameter" => add_up(t, &s),
            _ => {
                // The first target's summary carries the run's keys; a member solved
                // first is named as the start.
                let mut t = s.clone();
                if let Some(first) = &total {
                    t.start_reason = Some(format!(
                        "parameter homotopy from the {} nonsingular solutions of a random \
                         member (its start: {})",
                        start_points.len(),
                        first.start
                    ));
                    t.phases.start_system += first.seconds;
                }
                total = Some(t);
            }
        }
        if a.solutions.is_some() || a.print {
            solutions.push((k, s));
        }
    }
    writer.finish()?;
    let mut total = total.expect("at least one target");
    total.seconds = clock.elapsed().as_secs_f64();
    total.solutions = Vec::new();
    if let Some(path) = &a.solutions {
        let io = |e| Error::io(format!("writing {}", path.display()), e);
        let mut out = String::new();
        for (k, s) in &solutions {
            for sol in &s.solutions {
                let mut line = sol.line();
                if let Value::Object(m) = &mut line {
                    if several {
                        m.insert("target".into(), json!(k));
                    }
                    m.insert("parameters".into(), values::to_json(names, &targets[*k]));
                }
                out.push_str(&line.to_string());
                out.push('\n');
            }
        }
        std::fs::write(path, out).map_err(io)?;
    }
    let out = FamilySummary {
        summary: &total,
        parameter_names: names,
        parameters: (!several).then(|| values::to_json(names, &targets[0])),
        start_parameters: Some(values::to_json(names, &p0)),
        start_solutions: Some(start_points.len()),
        targets: several.then_some(counts),
    };
    print_summary(a, &out, names)?;
    let each: Vec<(Option<usize>, &Summary)> = solutions
        .iter()
        .map(|(k, s)| (several.then_some(*k), s))
        .collect();
    print_solutions(a, &each, &fam.variables);
    Ok(0)
}

/// `--print` (without `--json`): the distinct solutions of each target as a table, with
/// the target's row in a first column when there are several (`pathtrack show`'s table).
fn print_solutions(a: &SolveArgs, each: &[(Option<usize>, &Summary)], variables: &[String]) {
    if !a.print || a.json {
        return;
    }
    let mut records = Vec::new();
    for (target, s) in each {
        for sol in &s.solutions {
            let mut line = sol.line();
            if let (Some(k), Value::Object(m)) = (target, &mut line) {
                m.insert("target".into(), json!(k));
            }
            records.push(line);
        }
    }
    print!("\n{}", crate::cli::show::table(&records, variables, 6));
}

/// Writes a member's distinct solutions, each with the parameter values (and the target).
fn write_solutions(
    path: &Path,
    summary: &Summary,
    names: &[String],
    p: &[C64],
    target: Option<usize>,
) -> Result<()> {
    let mut out = String::new();
    for sol in &summary.solutions {
        let mut line = sol.line();
        if let Value::Object(m) = &mut line {
            if let Some(k) = target {
                m.insert("target".into(), json!(k));
            }
            m.insert("parameters".into(), values::to_json(names, p));
        }
        out.push_str(&line.to_string());
        out.push('\n');
    }
    std::fs::write(path, out).map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

/// The summary as JSON or as the table with the parameter rows (and with `--verbose` the
/// details of a plain solve's summary, over all targets).
fn print_summary(a: &SolveArgs, out: &FamilySummary<'_>, names: &[String]) -> Result<()> {
    if a.json {
        let line = serde_json::to_string(out).map_err(|e| Error::Internal(e.to_string()))?;
        println!("{line}");
        return Ok(());
    }
    print!("{}", summary_table(out.summary));
    let show = |v: &Value| -> String {
        names
            .iter()
            .map(|n| {
                let z = &v[n];
                let z = C64::new(
                    z[0].as_f64().unwrap_or(f64::NAN),
                    z[1].as_f64().unwrap_or(f64::NAN),
                );
                format!("{n}={}", values::format_complex(z))
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(p) = &out.parameters {
        print!("{}", table_row("parameters", &show(p)));
    }
    if let Some(p) = &out.start_parameters {
        print!("{}", table_row("start parameters", &show(p)));
    }
    if let Some(n) = out.start_solutions {
        print!("{}", table_row("start solutions", &n.to_string()));
    }
    if let Some(t) = &out.targets {
        print!("{}", table_row("targets", &t.len().to_string()));
        for c in t.iter().take(20) {
            print!(
                "{}",
                table_row(
                    &format!("  target {}", c.target),
                    &format!(
                        "{} finite, {} nonsingular, {} real, {} failed",
                        c.finite, c.nonsingular, c.real, c.failed
                    )
                )
            );
        }
        if t.len() > 20 {
            print!("{}", table_row("  …", "(--json lists every target)"));
        }
    }
    if a.verbose {
        print!("{}", crate::report::summary_details(out.summary));
    }
    Ok(())
}

/// `--start-system G --from G_SOLS.jsonl`: the γ-trick homotopy `γ(1 − t)·G + t·F` from
/// the nonsingular solutions of `G`.
fn run_start_system(a: &SolveArgs, g: &Path, from: &Path) -> Result<i32> {
    let system = crate::system::parse::load_named(&a.file)?;
    let start = crate::system::parse::load_named(g)?;
    if start.variables != system.variables {
        return Err(Error::Usage(format!(
            "--start-system {}: its variables ({}) are not those of the system ({}), in the \
             same order",
            g.display(),
            start.variables.join(", "),
            system.variables.join(", ")
        )));
    }
    let sols = startfile::read(from, &system.variables, &[])?;
    let (opts, mut backend) = setup(a, system.n())?;
    let mut rng = rng_for(a.seed);
    let gamma = super::random_gamma(&mut rng);
    let given = GivenStart {
        homotopy: crate::homotopy::Homotopy::gamma_trick(&system, &start.equations, gamma),
        points: sols.points,
        tau: crate::start::given::GIVEN_TAU_START,
        name: "start-system".into(),
        reason: format!("γ(1 − t)·G + t·F from {}", g.display()),
    };
    let opts = SolveOptions {
        given: Some(Arc::new(given)),
        ..opts
    };
    let mut writer = EndpointWriter::create(
        a.output.as_deref(),
        SolutionFormat::Jsonl,
        &system.variables,
    )?;
    let mut obs = Lines {
        progress: Some(Progress::new(a.quiet)),
        writer: &mut writer,
        extra: Map::new(),
    };
    let summary = solve(&system, &opts, backend.as_mut(), &mut obs)?;
    if let Some(p) = obs.progress.take() {
        p.finish();
    }
    writer.finish()?;
    if let Some(path) = &a.solutions {
        crate::report::write_solutions(path, &summary.solutions)?;
    }
    crate::cli::outputs::print_summary(&summary, a.json)?;
    if a.verbose && !a.json {
        print!("{}", crate::report::summary_details(&summary));
    }
    print_solutions(a, &[(None, &summary)], &system.variables);
    Ok(0)
}
