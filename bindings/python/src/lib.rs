//! `pathtrack._native`: the Rust side of the Python package. It parses systems, runs
//! [`pathtrack::Solver`] on a thread of its own (the GIL released, Ctrl-C checked every
//! [`SIGNAL_POLL`]), and hands results over as JSON text and packed complex arrays; the
//! Python module `pathtrack` (python/pathtrack/__init__.py) turns them into dicts and
//! numpy arrays.

use num_complex::Complex64;
use pathtrack::api::{BackendChoice, Solver, StartKind, INTERRUPTED};
use pathtrack::linalg::rref::{echelonize, EchelonOptions, Matrix, Tolerance, Zp64, C64, F64};
use pathtrack::params::Family;
use pathtrack::post::Status;
use pathtrack::System;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// How often a waiting call looks for Ctrl-C (Python runs signal handlers only in the
/// main thread, between bytecodes: the solve runs elsewhere while this one polls).
const SIGNAL_POLL: Duration = Duration::from_millis(50);
/// How long an interrupted call waits for its solve to stop (it stops at the next path
/// that ends) before it returns anyway.
const STOP_WAIT: Duration = Duration::from_secs(2);

/// pathtrack's errors as Python exceptions: bad input and unusable requests as
/// `ValueError` (the message names the place and the cause), the rest as `RuntimeError`.
fn py_err(e: pathtrack::Error) -> PyErr {
    match e {
        pathtrack::Error::Input(_) | pathtrack::Error::Usage(_) => {
            PyValueError::new_err(e.to_string())
        }
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

/// A system from `source`: a file path or family name (`kind` "path"), or text in any
/// input format (`kind` "text", named `origin` in errors).
fn load(source: &str, kind: &str, origin: &str) -> PyResult<System> {
    let system = match kind {
        "path" => pathtrack::system::parse::load_named(std::path::Path::new(source)),
        "text" => pathtrack::system::parse::parse_str(source, origin),
        _ => return Err(PyValueError::new_err(format!("unknown source kind {kind}"))),
    };
    system.map_err(|e| py_err(e.into()))
}

/// The variables of `equations` in order of first appearance (the imaginary unit `i`/`I`
/// excluded); a `ValueError` naming the equation where one does not tokenize.
#[pyfunction]
fn infer_variables(equations: Vec<String>) -> PyResult<Vec<String>> {
    let mut seen = Vec::<String>::new();
    for (k, eq) in equations.iter().enumerate() {
        let ids = pathtrack::system::parse::expr::identifiers(eq).map_err(|e| {
            PyValueError::new_err(format!(
                "equation {}: column {}: {}",
                k + 1,
                e.offset + 1,
                e.message
            ))
        })?;
        for (name, _) in ids {
            if !seen.contains(&name) {
                seen.push(name);
            }
        }
    }
    Ok(seen)
}

/// Parses a system and returns (name, variables, number of equations): a check of the
/// input that raises the parser's error.
#[pyfunction]
#[pyo3(signature = (source, kind, origin = "<string>"))]
fn parse(source: &str, kind: &str, origin: &str) -> PyResult<(String, Vec<String>, usize)> {
    let s = load(source, kind, origin)?;
    Ok((s.name.clone(), s.variables.clone(), s.equations.len()))
}

fn start_kind(s: &str) -> PyResult<StartKind> {
    Ok(match s {
        "auto" => StartKind::Auto,
        "polyhedral" => StartKind::Polyhedral,
        "total-degree" | "total_degree" => StartKind::TotalDegree,
        "mhom" => StartKind::Mhom,
        _ => {
            return Err(PyValueError::new_err(format!(
                "start must be one of auto, polyhedral, total-degree, mhom; not {s:?}"
            )))
        }
    })
}

fn backend_choice(s: &str) -> PyResult<BackendChoice> {
    Ok(match s {
        "auto" => BackendChoice::Auto,
        "cpu" => BackendChoice::Cpu,
        "cuda" => BackendChoice::Cuda,
        _ => {
            return Err(PyValueError::new_err(format!(
                "backend must be one of auto, cpu, cuda; not {s:?}"
            )))
        }
    })
}

/// Runs `work` on a thread of its own with the GIL released, polling for Ctrl-C: on it,
/// `cancel` is set and `KeyboardInterrupt` raised once the work stopped (or after
/// [`STOP_WAIT`]).
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    cancel: Arc<AtomicBool>,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::Builder::new()
        .name("pathtrack-solve".into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the solve thread: {e}")))?;
    // The receiver is not `Sync`: it moves into each wait and back out.
    let wait = |py: Python<'_>, rx: mpsc::Receiver<T>, time: Duration| {
        py.allow_threads(move || {
            let got = rx.recv_timeout(time);
            (got, rx)
        })
    };
    let mut rx = rx;
    loop {
        let (got, back) = wait(py, rx, SIGNAL_POLL);
        rx = back;
        match got {
            Ok(v) => {
                let _ = worker.join();
                return Ok(v);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    cancel.store(true, Ordering::Relaxed);
                    let _ = wait(py, rx, STOP_WAIT);
                    return Err(e);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "the solve thread stopped (a panic)",
                ))
            }
        }
    }
}

/// Solves a system; the keyword arguments are those of `pathtrack.solve`.
#[pyfunction]
#[pyo3(signature = (source, kind, origin, *, start, backend, seed, threads, torus, partition, paths, device, keep_paths))]
#[allow(clippy::too_many_arguments)]
fn solve(
    py: Python<'_>,
    source: &str,
    kind: &str,
    origin: &str,
    start: &str,
    backend: &str,
    seed: u64,
    threads: usize,
    torus: bool,
    partition: Option<String>,
    paths: Option<Vec<u64>>,
    device: usize,
    keep_paths: bool,
) -> PyResult<NativeResult> {
    let system = load(source, kind, origin)?;
    let mut solver = configured(start, backend, seed, threads, device, keep_paths)?;
    solver.options.torus = torus;
    if let Some(p) = partition {
        solver.options.partition =
            Some(pathtrack::start::mhom::Partition::parse(&p, &system.variables).map_err(py_err)?);
    }
    solver.options.only = paths.map(|mut p| {
        p.sort_unstable();
        p.dedup();
        p
    });
    run_solver(py, solver, move |s| s.solve(&system))
}

/// A [`Solver`] with the settings every solving entry point takes.
fn configured(
    start: &str,
    backend: &str,
    seed: u64,
    threads: usize,
    device: usize,
    keep_paths: bool,
) -> PyResult<Solver> {
    let mut solver = Solver::new()
        .start(start_kind(start)?)
        .backend(backend_choice(backend)?)
        .seed(seed)
        .threads(threads)
        .keep_endpoints(keep_paths);
    solver.device = device;
    Ok(solver)
}

/// Runs `work` with `solver` (a cancellation flag added) through [`interruptible`]; an
/// interrupted solve raises `KeyboardInterrupt`.
fn run_solver(
    py: Python<'_>,
    solver: Solver,
    work: impl FnOnce(&Solver) -> pathtrack::Result<pathtrack::SolveResult> + Send + 'static,
) -> PyResult<NativeResult> {
    let cancel = Arc::new(AtomicBool::new(false));
    let solver = solver.cancel_flag(cancel.clone());
    match interruptible(py, cancel, move || work(&solver))? {
        Ok(r) => Ok(NativeResult { inner: r }),
        Err(pathtrack::Error::Usage(m)) if m == INTERRUPTED => Err(PyKeyboardInterrupt::new_err(m)),
        Err(e) => Err(py_err(e)),
    }
}

/// The system with parameters in `source` (a path or YAML text, as for [`load`]); a
/// `ValueError` when it has no `parameters:` list.
fn load_family(source: &str, kind: &str, origin: &str) -> PyResult<Family> {
    let (text, origin) = match kind {
        // A family name (`katsura6`) is a system without parameters.
        "path" if !std::path::Path::new(source).exists() => {
            load(source, kind, origin)?;
            return Err(PyValueError::new_err(format!(
                "{source}: the system has no parameters (no `parameters:` list)"
            )));
        }
        "path" => (
            std::fs::read_to_string(source)
                .map_err(|e| PyValueError::new_err(format!("{source}: cannot read file: {e}")))?,
            source,
        ),
        "text" => (source.to_string(), origin),
        _ => return Err(PyValueError::new_err(format!("unknown source kind {kind}"))),
    };
    match Family::parse(&text, origin).map_err(|e| py_err(e.into()))? {
        Some(f) => Ok(f),
        None => Err(PyValueError::new_err(format!(
            "{origin}: the system has no parameters (no `parameters:` list)"
        ))),
    }
}

/// (variables, parameter names) of a system with parameters.
#[pyfunction]
fn family_names(source: &str, kind: &str, origin: &str) -> PyResult<(Vec<String>, Vec<String>)> {
    let f = load_family(source, kind, origin)?;
    Ok((f.variables.clone(), f.parameters.clone()))
}

fn complex(v: &[(f64, f64)]) -> Vec<Complex64> {
    v.iter().map(|&(re, im)| Complex64::new(re, im)).collect()
}

/// Solves the member of a family at `params` (one (re, im) per parameter, in order).
#[pyfunction]
#[pyo3(signature = (source, kind, origin, params, *, start, backend, seed, threads, device, keep_paths))]
#[allow(clippy::too_many_arguments)]
fn solve_member(
    py: Python<'_>,
    source: &str,
    kind: &str,
    origin: &str,
    params: Vec<(f64, f64)>,
    start: &str,
    backend: &str,
    seed: u64,
    threads: usize,
    device: usize,
    keep_paths: bool,
) -> PyResult<NativeResult> {
    let family = load_family(source, kind, origin)?;
    let solver = configured(start, backend, seed, threads, device, keep_paths)?;
    let p = complex(&params);
    run_solver(py, solver, move |s| s.solve_member(&family, &p))
}

/// Tracks start solutions (rows of (re, im) pairs) of the member at `start_params` to the
/// member at `target_params` by the parameter homotopy.
#[pyfunction]
#[pyo3(signature = (source, kind, origin, starts, start_params, target_params, *, backend, seed, threads, device, keep_paths))]
#[allow(clippy::too_many_arguments)]
fn track_parameters(
    py: Python<'_>,
    source: &str,
    kind: &str,
    origin: &str,
    starts: Vec<Vec<(f64, f64)>>,
    start_params: Vec<(f64, f64)>,
    target_params: Vec<(f64, f64)>,
    backend: &str,
    seed: u64,
    threads: usize,
    device: usize,
    keep_paths: bool,
) -> PyResult<NativeResult> {
    let family = load_family(source, kind, origin)?;
    let solver = configured("auto", backend, seed, threads, device, keep_paths)?;
    let starts: Vec<Vec<Complex64>> = starts.iter().map(|x| complex(x)).collect();
    let (p0, p1) = (complex(&start_params), complex(&target_params));
    run_solver(py, solver, move |s| {
        s.track_parameters(&family, &starts, &p0, &p1)
    })
}

/// One witness set: dimension, the points as packed complex128 rows, their number, and
/// the paths that ended at each.
type NativeWitnessSet = (usize, Vec<u8>, usize, Vec<usize>);

/// The witness sets of a system (any number of equations) from dimension `lowest` up to
/// `top`: the dimension reports as JSON text, the number of variables, and the sets.
#[pyfunction]
#[pyo3(signature = (source, kind, origin, *, lowest, top, start, backend, seed, threads, device))]
#[allow(clippy::too_many_arguments)]
fn witness_sets(
    py: Python<'_>,
    source: &str,
    kind: &str,
    origin: &str,
    lowest: usize,
    top: Option<usize>,
    start: &str,
    backend: &str,
    seed: u64,
    threads: usize,
    device: usize,
) -> PyResult<(String, usize, Vec<NativeWitnessSet>)> {
    let system = match kind {
        "path" => pathtrack::system::parse::load_named_rectangular(std::path::Path::new(source)),
        "text" => pathtrack::system::parse::parse_str_rectangular(source, origin),
        _ => return Err(PyValueError::new_err(format!("unknown source kind {kind}"))),
    }
    .map_err(|e| py_err(e.into()))?;
    let n = system.n();
    let solver = configured(start, backend, seed, threads, device, false)?;
    let cancel = Arc::new(AtomicBool::new(false));
    let (sets, reports) = interruptible(py, cancel, move || {
        solver.witness_sets(&system, lowest, top)
    })?
    .map_err(py_err)?;
    let reports =
        serde_json::to_string(&reports).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let sets = sets
        .into_iter()
        .map(|w| {
            let bytes = w
                .points
                .iter()
                .flatten()
                .flat_map(|z| [z.re.to_ne_bytes(), z.im.to_ne_bytes()])
                .flatten()
                .collect();
            (w.dimension, bytes, w.points.len(), w.multiplicities)
        })
        .collect();
    Ok((reports, n, sets))
}

/// A finished solve, read by `pathtrack.Result`.
#[pyclass(frozen, module = "pathtrack._native")]
struct NativeResult {
    inner: pathtrack::SolveResult,
}

#[pymethods]
impl NativeResult {
    /// The summary as JSON text (the object `pathtrack solve --json` prints).
    fn summary_json(&self) -> String {
        self.inner.summary_json().to_string()
    }

    /// The variables, in the order of the coordinates.
    fn variables(&self) -> Vec<String> {
        self.inner.variables.clone()
    }

    /// The distinct solutions of `which` ("all", "real", "nonsingular", "singular") as
    /// packed complex128 values, row by row, with the number of rows.
    fn solutions<'py>(
        &self,
        py: Python<'py>,
        which: &str,
    ) -> PyResult<(Bound<'py, PyBytes>, usize)> {
        let keep = |s: &&pathtrack::report::Solution| match which {
            "all" => true,
            "real" => s.real,
            "nonsingular" => s.status == Status::Nonsingular,
            "singular" => s.status == Status::Singular,
            _ => false,
        };
        if !matches!(which, "all" | "real" | "nonsingular" | "singular") {
            return Err(PyValueError::new_err(format!("unknown selection {which}")));
        }
        let chosen: Vec<&pathtrack::report::Solution> =
            self.inner.solutions().iter().filter(keep).collect();
        let mut bytes = Vec::with_capacity(chosen.len() * self.inner.variables.len() * 16);
        for s in &chosen {
            for z in s.coordinates.iter() {
                bytes.extend_from_slice(&z.re.to_ne_bytes());
                bytes.extend_from_slice(&z.im.to_ne_bytes());
            }
        }
        Ok((PyBytes::new(py, &bytes), chosen.len()))
    }

    /// The distinct solutions' records (status, multiplicity, residual, condition, …) as
    /// a JSON array, in the order of `solutions("all")`.
    fn solution_records_json(&self) -> String {
        let v: Vec<serde_json::Value> = self.inner.solutions().iter().map(|s| s.line()).collect();
        serde_json::Value::from(v).to_string()
    }

    /// Every path's endpoint record (the lines of `pathtrack solve -o`) as a JSON array.
    fn paths_json(&self) -> String {
        let v: Vec<serde_json::Value> = self
            .inner
            .endpoints
            .iter()
            .map(pathtrack::report::solution_line)
            .collect();
        serde_json::Value::from(v).to_string()
    }
}

/// Root counts as JSON text (the object `pathtrack count --json` prints).
#[pyfunction]
#[pyo3(signature = (source, kind, origin, *, seed, threads, partition))]
fn count(
    py: Python<'_>,
    source: &str,
    kind: &str,
    origin: &str,
    seed: u64,
    threads: usize,
    partition: Option<String>,
) -> PyResult<String> {
    let system = load(source, kind, origin)?;
    let cancel = Arc::new(AtomicBool::new(false));
    let m = interruptible(py, cancel, move || {
        pathtrack::cli::count::root_counts(&system, seed, threads, partition.as_deref())
    })?
    .map_err(py_err)?;
    Ok(serde_json::Value::Object(m).to_string())
}

/// A member of a benchmark family as YAML text.
#[pyfunction]
fn generate(family: &str, n: usize) -> PyResult<String> {
    let s = pathtrack::system::families::generate(family, n).map_err(PyValueError::new_err)?;
    Ok(pathtrack::system::families::to_yaml(&s))
}

/// A system (any input format) written in `format` (yaml, phc, bertini, hom4ps).
#[pyfunction]
fn convert(source: &str, kind: &str, origin: &str, format: &str) -> PyResult<String> {
    use pathtrack::system::parse::Format;
    let system = load(source, kind, origin)?;
    let f = match format {
        "yaml" => Format::Yaml,
        "phc" => Format::Phc,
        "bertini" => Format::Bertini,
        "hom4ps" => Format::Hom4ps,
        _ => {
            return Err(PyValueError::new_err(format!(
                "format must be one of yaml, phc, bertini, hom4ps; not {format:?}"
            )))
        }
    };
    pathtrack::system::parse::to_format(&system, f).map_err(PyValueError::new_err)
}

fn echelon_options(tol: Option<f64>) -> PyResult<EchelonOptions> {
    let mut opt = EchelonOptions::default();
    if let Some(t) = tol {
        if !(t >= 0.0 && t.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "tol must be a non-negative number, not {t}"
            )));
        }
        opt.tolerance = Tolerance::Absolute(t);
    }
    Ok(opt)
}

fn check_shape(rows: usize, cols: usize, len: usize) -> PyResult<()> {
    if rows.checked_mul(cols) != Some(len) {
        return Err(PyValueError::new_err(format!(
            "{len} entries do not make a {rows} × {cols} matrix"
        )));
    }
    Ok(())
}

/// RREF of a real matrix (row-major): the reduced matrix and the pivot columns.
#[pyfunction]
#[pyo3(signature = (rows, cols, data, tol = None))]
fn rref_f64(
    py: Python<'_>,
    rows: usize,
    cols: usize,
    data: Vec<f64>,
    tol: Option<f64>,
) -> PyResult<(Vec<f64>, Vec<usize>)> {
    check_shape(rows, cols, data.len())?;
    let opt = echelon_options(tol)?;
    py.allow_threads(move || {
        let mut m = Matrix { rows, cols, data };
        let e = echelonize(&F64, &mut m, &opt);
        Ok((m.data, e.pivots))
    })
}

/// RREF of a complex matrix given as interleaved (re, im) pairs, row-major.
#[pyfunction]
#[pyo3(signature = (rows, cols, data, tol = None))]
fn rref_c64(
    py: Python<'_>,
    rows: usize,
    cols: usize,
    data: Vec<f64>,
    tol: Option<f64>,
) -> PyResult<(Vec<f64>, Vec<usize>)> {
    check_shape(rows, cols * 2, data.len())?;
    let opt = echelon_options(tol)?;
    py.allow_threads(move || {
        let data: Vec<Complex64> = data
            .chunks_exact(2)
            .map(|p| Complex64::new(p[0], p[1]))
            .collect();
        let mut m = Matrix { rows, cols, data };
        let e = echelonize(&C64, &mut m, &opt);
        let flat = m.data.iter().flat_map(|z| [z.re, z.im]).collect();
        Ok((flat, e.pivots))
    })
}

/// RREF over Z/p (p prime, p < 2^63) of an integer matrix, row-major.
#[pyfunction]
fn rref_zp(
    py: Python<'_>,
    rows: usize,
    cols: usize,
    data: Vec<i64>,
    prime: u64,
) -> PyResult<(Vec<u64>, Vec<usize>)> {
    use pathtrack::linalg::rref::Field;
    check_shape(rows, cols, data.len())?;
    let f = Zp64::new(prime).map_err(|e| PyValueError::new_err(format!("prime: {e}")))?;
    py.allow_threads(move || {
        let data = data.iter().map(|&v| f.from_i64(v)).collect();
        let mut m = Matrix { rows, cols, data };
        let e = echelonize(&f, &mut m, &EchelonOptions::default());
        Ok((m.data, e.pivots))
    })
}

/// The instruction-set extensions the build assumes (x86-64-v3) that this CPU lacks.
fn missing_cpu_features() -> Option<&'static str> {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        if !std::arch::is_x86_feature_detected!("avx2")
            || !std::arch::is_x86_feature_detected!("fma")
        {
            return Some("AVX2 and FMA");
        }
    }
    None
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    if let Some(missing) = missing_cpu_features() {
        return Err(pyo3::exceptions::PyImportError::new_err(format!(
            "this pathtrack build targets x86-64-v3 but the CPU lacks {missing}; rebuild with \
             RUSTFLAGS= pip install ."
        )));
    }
    m.add_function(wrap_pyfunction!(infer_variables, m)?)?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    m.add_function(wrap_pyfunction!(family_names, m)?)?;
    m.add_function(wrap_pyfunction!(solve_member, m)?)?;
    m.add_function(wrap_pyfunction!(track_parameters, m)?)?;
    m.add_function(wrap_pyfunction!(witness_sets, m)?)?;
    m.add_function(wrap_pyfunction!(count, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(rref_f64, m)?)?;
    m.add_function(wrap_pyfunction!(rref_c64, m)?)?;
    m.add_function(wrap_pyfunction!(rref_zp, m)?)?;
    m.add_class::<NativeResult>()?;
    m.add("INTERRUPTED", INTERRUPTED)?;
    Ok(())
}
