//! The library's front door: [`solve`] a [`System`] with [`SolveOptions`], or configure a
//! [`Solver`], and read the [`SolveResult`]: the summary, the distinct solutions, and every
//! path's endpoint. It wraps the pipeline of [`crate::solver`] (start system, tracking
//! through a backend, recovery rounds, classification) and picks the backend itself.
//!
//! ```
//! use pathtrack::{solve, SolveOptions, System};
//!
//! // x² − 1 = 0, y² − 4 = 0: four solutions, all real and nonsingular.
//! let system = System::parse("variables: [x, y]\nequations: [x^2 - 1, y^2 - 4]")?;
//! let result = solve(&system, &SolveOptions::default())?;
//! assert_eq!(result.solutions().len(), 4);
//! assert_eq!(result.real_solutions().count(), 4);
//! for s in result.solutions() {
//!     assert!((s.coordinates[0].norm() - 1.0).abs() < 1e-12);
//!     assert!((s.coordinates[1].norm() - 2.0).abs() < 1e-12);
//! }
//! # Ok::<(), pathtrack::Error>(())
//! ```

use crate::backend::{cpu::CpuBackend, cuda::CudaBackend, AutoBackend, Backend};
use crate::error::{Error, Result};
use crate::params::Family;
use crate::post::{Endpoint, Status};
use crate::report::{Solution, Summary};
pub use crate::solver::{Observer, SolveOptions, StartKind};
use crate::system::System;
use num_complex::Complex64 as C64;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Where paths are tracked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendChoice {
    /// The CPU for a solve it finishes before a GPU would start, else the GPU when one
    /// opens, else the CPU (with a one-line notice on stderr).
    #[default]
    Auto,
    Cpu,
    /// The CUDA GPU `Solver::device`; an error when it does not open.
    Cuda,
}

/// The message of the error a cancelled solve returns ([`Solver::cancel_flag`]).
pub const INTERRUPTED: &str = "the solve was interrupted";

/// A configured solve: the options of [`crate::solver`], the backend, and an optional
/// cancellation flag.
///
/// ```
/// use pathtrack::{BackendChoice, Solver, StartKind, System};
///
/// // Katsura-3 (4 variables: one linear and three quadratic equations) has 2³ = 8
/// // solutions, its Bézout number: every total-degree path ends at one.
/// let system = System::family("katsura3")?;
/// let result = Solver::new()
///     .start(StartKind::TotalDegree)
///     .seed(7)
///     .backend(BackendChoice::Cpu)
///     .solve(&system)?;
/// assert_eq!(result.summary.paths, 8);
/// assert_eq!(result.nonsingular().count(), 8);
/// assert_eq!(result.endpoints.len(), 8);
/// # Ok::<(), pathtrack::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Solver {
    pub options: SolveOptions,
    pub backend: BackendChoice,
    /// The GPU to use with [`BackendChoice::Cuda`] or [`BackendChoice::Auto`].
    pub device: usize,
    /// Keep every path's endpoint in [`SolveResult::endpoints`] (default: yes).
    pub keep_endpoints: bool,
    cancel: Option<Arc<AtomicBool>>,
}

impl Solver {
    /// Default options: automatic start system and backend, seed 1, all cores.
    pub fn new() -> Solver {
        Solver {
            options: SolveOptions {
                start: StartKind::Auto,
                ..Default::default()
            },
            keep_endpoints: true,
            ..Default::default()
        }
    }

    /// The start system (default [`StartKind::Auto`]).
    pub fn start(mut self, start: StartKind) -> Solver {
        self.options.start = start;
        self
    }

    /// Seed of every random choice: the same seed gives the same run.
    pub fn seed(mut self, seed: u64) -> Solver {
        self.options.seed = seed;
        self
    }

    /// CPU threads (0: all cores).
    pub fn threads(mut self, threads: usize) -> Solver {
        self.options.threads = threads;
        self
    }

    pub fn backend(mut self, backend: BackendChoice) -> Solver {
        self.backend = backend;
        self
    }

    /// Whether to keep every path's endpoint (memory grows with the paths).
    pub fn keep_endpoints(mut self, keep: bool) -> Solver {
        self.keep_endpoints = keep;
        self
    }

    /// A flag that stops the solve when set (from another thread): the solve then returns
    /// an [`Error::Usage`] with the message [`INTERRUPTED`] at the next path that ends.
    pub fn cancel_flag(mut self, flag: Arc<AtomicBool>) -> Solver {
        self.cancel = Some(flag);
        self
    }

    /// Solves `system` on the backend [`Solver::backend`] names.
    pub fn solve(&self, system: &System) -> Result<SolveResult> {
        self.solve_observed(system, &mut |_: &Endpoint| Ok(()))
    }

    /// As [`Solver::solve`], reporting each endpoint and phase to `obs` as well.
    pub fn solve_observed(&self, system: &System, obs: &mut dyn Observer) -> Result<SolveResult> {
        let mut backend = self.make_backend()?;
        solve_on(
            system,
            &self.backend_options(),
            backend.as_mut(),
            obs,
            self.keep_endpoints,
            self.cancel.clone(),
        )
    }

    /// Solves the member of `family` at the parameter values `p` (in the order of
    /// `family.parameters`), as `pathtrack solve --params` does.
    ///
    /// ```
    /// use num_complex::Complex64 as C64;
    /// use pathtrack::{params::Family, BackendChoice, Solver};
    ///
    /// // x² − a = 0, y − b·x = 0: two solutions (±√a, ±b√a).
    /// let text = "variables: [x, y]\nparameters: [a, b]\nequations: [x^2 - a, y - b*x]";
    /// let family = Family::parse(text, "<string>")?.expect("a family");
    /// let p = [C64::new(4.0, 0.0), C64::new(3.0, 0.0)];
    /// let r = Solver::new().backend(BackendChoice::Cpu).solve_member(&family, &p)?;
    /// assert_eq!(r.nonsingular().count(), 2);
    /// for s in r.solutions() {
    ///     assert!((s.coordinates[0].norm() - 2.0).abs() < 1e-12);
    ///     assert!((s.coordinates[1] - 3.0 * s.coordinates[0]).norm() < 1e-12);
    /// }
    /// # Ok::<(), pathtrack::Error>(())
    /// ```
    pub fn solve_member(&self, family: &Family, p: &[C64]) -> Result<SolveResult> {
        check_parameters(family, p, "parameters")?;
        let member = family
            .at(p)
            .map_err(|m| Error::Usage(format!("parameters: {m}")))?;
        self.solve(&member)
    }

    /// Tracks `starts`, solutions of the member of `family` at `p0`, to the member at `p1`
    /// along the parameter homotopy (`crate::params::track_to`, with γ the first draw of
    /// the seed's generator), as `pathtrack solve --from S --params P1` does. Path `i`
    /// starts at `starts[i]`.
    pub fn track_parameters(
        &self,
        family: &Family,
        starts: &[Vec<C64>],
        p0: &[C64],
        p1: &[C64],
    ) -> Result<SolveResult> {
        check_parameters(family, p0, "start parameters")?;
        check_parameters(family, p1, "target parameters")?;
        if starts.is_empty() {
            return Err(Error::Usage("no start solutions to track".into()));
        }
        if let Some((i, x)) = starts
            .iter()
            .enumerate()
            .find(|(_, x)| x.len() != family.n())
        {
            return Err(Error::Usage(format!(
                "start solution {i} has {} coordinates; the family has {} variables",
                x.len(),
                family.n()
            )));
        }
        let gamma = crate::params::random_gamma(&mut crate::solver::rng_for(self.options.seed));
        let mut backend = self.make_backend()?;
        let mut collect = Collect {
            inner: &mut |_: &Endpoint| Ok(()),
            keep: self.keep_endpoints,
            cancel: self.cancel.clone(),
            last: BTreeMap::new(),
        };
        let summary = crate::params::track_to(
            family,
            starts,
            p0,
            p1,
            gamma,
            &self.backend_options(),
            backend.as_mut(),
            &mut collect,
        )?;
        Ok(SolveResult {
            summary,
            endpoints: collect.last.into_values().collect(),
            variables: family.variables.clone(),
        })
    }

    /// The witness sets of `system` (any number of equations) of the dimensions from
    /// `lowest` up to `top` (default: variables − 1), as `pathtrack witness` computes
    /// them (docs/witness.md), with a report of each dimension. The cancellation flag is
    /// not looked at.
    pub fn witness_sets(
        &self,
        system: &System,
        lowest: usize,
        top: Option<usize>,
    ) -> Result<(
        Vec<crate::witness::WitnessSet>,
        Vec<crate::witness::sets::DimensionReport>,
    )> {
        let opts = crate::witness::sets::WitnessOptions {
            method: Default::default(),
            seed: self.options.seed,
            top,
            lowest,
            solve: self.backend_options(),
        };
        let mut backend = self.make_backend()?;
        crate::witness::compute::witness_sets(system, &opts, backend.as_mut(), &mut |_| {})
    }

    /// The options with the batch of the backend asked for (a GPU's, with `Cuda`).
    fn backend_options(&self) -> SolveOptions {
        let mut options = self.options.clone();
        if self.backend == BackendChoice::Cuda
            && options.tracker.batch == crate::track::TrackerOptions::default().batch
        {
            options.tracker.batch = crate::backend::GPU_BATCH;
        }
        options
    }

    fn make_backend(&self) -> Result<Box<dyn Backend>> {
        let (threads, device) = (self.options.threads, self.device);
        let cpu = move || -> Result<Box<dyn Backend>> { Ok(Box::new(CpuBackend::new(threads)?)) };
        let cuda = move || -> Result<Box<dyn Backend>> { Ok(Box::new(CudaBackend::new(device)?)) };
        match self.backend {
            BackendChoice::Cpu => cpu(),
            BackendChoice::Cuda => cuda(),
            BackendChoice::Auto => Ok(Box::new(AutoBackend::new(
                Box::new(cpu),
                Box::new(cuda),
                threads,
                None,
            ))),
        }
    }
}

/// An error unless `p` holds one value per parameter of `family` (`what` names them).
fn check_parameters(family: &Family, p: &[C64], what: &str) -> Result<()> {
    if p.len() != family.m() {
        return Err(Error::Usage(format!(
            "{what}: {} values given; the family has {} parameters ({})",
            p.len(),
            family.m(),
            family.parameters.join(", ")
        )));
    }
    Ok(())
}

/// Solves `system` with `options` (backend chosen automatically); see [`Solver`] for more
/// control.
pub fn solve(system: &System, options: &SolveOptions) -> Result<SolveResult> {
    Solver {
        options: options.clone(),
        ..Solver::new()
    }
    .solve(system)
}

/// Solves `system` on a backend the caller made (the command line makes its own, with
/// the GPU settings of its flags), reporting to `obs`; `keep`: keep every endpoint.
pub fn solve_on(
    system: &System,
    options: &SolveOptions,
    backend: &mut dyn Backend,
    obs: &mut dyn Observer,
    keep: bool,
    cancel: Option<Arc<AtomicBool>>,
) -> Result<SolveResult> {
    let mut collect = Collect {
        inner: obs,
        keep,
        cancel,
        last: BTreeMap::new(),
    };
    let summary = crate::solver::solve(system, options, backend, &mut collect)?;
    Ok(SolveResult {
        summary,
        endpoints: collect.last.into_values().collect(),
        variables: system.variables.clone(),
    })
}

/// Keeps each path's last endpoint, checks the cancellation flag, and forwards to the
/// caller's observer.
struct Collect<'o> {
    inner: &'o mut dyn Observer,
    keep: bool,
    cancel: Option<Arc<AtomicBool>>,
    last: BTreeMap<u64, Endpoint>,
}

impl Collect<'_> {
    fn check(&self) -> Result<()> {
        match &self.cancel {
            Some(c) if c.load(Ordering::Relaxed) => Err(Error::Usage(INTERRUPTED.into())),
            _ => Ok(()),
        }
    }
}

impl Observer for Collect<'_> {
    fn total(&mut self, paths: u128) {
        self.inner.total(paths)
    }
    fn endpoint(&mut self, e: &Endpoint) -> Result<()> {
        self.check()?;
        if self.keep {
            self.last.insert(e.path, e.clone());
        }
        self.inner.endpoint(e)
    }
    fn phase(&mut self, phase: crate::report::progress::Phase) {
        self.inner.phase(phase)
    }
}

/// What a solve found.
#[derive(Clone, Debug)]
pub struct SolveResult {
    /// The counts, root counts, timings and choices of the run (docs/output.md); its
    /// `solutions` are the distinct finite solutions.
    pub summary: Summary,
    /// Each tracked path's final endpoint (after any re-tracking), by path index; empty
    /// when [`Solver::keep_endpoints`] is off.
    pub endpoints: Vec<Endpoint>,
    /// The variables, in the order of every coordinate vector.
    pub variables: Vec<String>,
}

impl SolveResult {
    /// The distinct finite solutions (nonsingular and singular), each once.
    pub fn solutions(&self) -> &[Solution] {
        &self.summary.solutions
    }

    /// The distinct solutions with a well-conditioned Jacobian.
    pub fn nonsingular(&self) -> impl Iterator<Item = &Solution> {
        self.solutions()
            .iter()
            .filter(|s| s.status == Status::Nonsingular)
    }

    /// The distinct singular solutions (multiple roots, or points of positive-dimensional
    /// components).
    pub fn singular(&self) -> impl Iterator<Item = &Solution> {
        self.solutions()
            .iter()
            .filter(|s| s.status == Status::Singular)
    }

    /// The distinct solutions whose coordinates are real (imaginary parts within the
    /// classification's tolerance).
    pub fn real_solutions(&self) -> impl Iterator<Item = &Solution> {
        self.solutions().iter().filter(|s| s.real)
    }

    /// The summary as the JSON object `pathtrack solve --json` prints.
    pub fn summary_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.summary).unwrap_or(serde_json::Value::Null)
    }
}

impl System {
    /// A system from text in any input format (YAML, PHCpack, Bertini, Hom4PS; detected
    /// from the content), named `<string>` in error messages.
    pub fn parse(text: &str) -> Result<System> {
        Ok(crate::system::parse::parse_str(text, "<string>")?)
    }

    /// A member of a benchmark family by name, such as `katsura6` or `cyclic5`.
    pub fn family(name: &str) -> Result<System> {
        match crate::system::families::by_name(name) {
            Some(s) => s.map_err(|m| Error::Usage(format!("{name}: {m}"))),
            None => Err(Error::Usage(format!("{name}: not a family member"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A raised cancellation flag stops the solve with [`INTERRUPTED`] at the first
    /// endpoint; the same solve without it finishes.
    #[test]
    fn cancel_flag_stops_the_solve() {
        let system = System::family("katsura3").unwrap();
        let flag = Arc::new(AtomicBool::new(true));
        let solver = Solver::new().backend(BackendChoice::Cpu).threads(1);
        match solver.clone().cancel_flag(flag.clone()).solve(&system) {
            Err(Error::Usage(m)) => assert_eq!(m, INTERRUPTED),
            other => panic!("expected the interruption, got {other:?}"),
        }
        flag.store(false, Ordering::Relaxed);
        let r = solver.cancel_flag(flag).solve(&system).unwrap();
        assert_eq!(r.solutions().len(), 8);
    }

    /// Parse errors keep the parser's place and cause.
    #[test]
    fn parse_errors_name_the_place() {
        let e = System::parse("variables: [x]\nequations: [\"x^2 +* 1\"]").unwrap_err();
        let m = e.to_string();
        assert!(m.starts_with("<string>:2:"), "{m}");
        assert!(m.contains("equation 1"), "{m}");
    }
}
