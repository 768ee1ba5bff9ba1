//! Witness supersets by the cascade of homotopies (Sommese–Verschelde, "Numerical
//! homotopies to compute generic points on positive dimensional algebraic sets", J.
//! Complexity 16, 2000; Sommese–Wampler's book, §13.6).
//!
//! With `R` an `n × N` randomization of `F` (`R·F` keeps the `n` largest degrees; with
//! `N < n` its extra rows are random combinations of all equations), `D` the top dimension
//! and `L_1 … L_D` random affine hyperplanes, the embedding of level `k` is the square system
//!
//! `E_k(x) = R·F(x) + Σ_{j ≤ k} λ_j L_j(x)`      (`λ_j ∈ C^n` random)
//!
//! (the slack variables `z_j = L_j(x)` of the original embedding eliminated). A solution of
//! `E_k` with `L_1 = … = L_k = 0` solves `F` and lies on `k` slices: the witness points of
//! `Z_k`, besides junk on components of larger dimension and zeros of `R·F` only. Every other
//! solution (a *nonsolution*) has `L_k ≠ 0`, and the homotopy
//!
//! `H_k(x, t) = R·F(x) + Σ_{j < k} λ_j L_j(x) + (1 − t)·λ_k L_k(x)`
//!
//! takes the nonsolutions of `E_k` (t = 0) to a set of solutions of `E_{k−1}` (t = 1) that
//! holds every witness point of `Z_{k−1}`. So one start system (for `E_D`) is solved, and each
//! dimension below tracks only the nonsolutions of the one above: a system whose top
//! dimensions are empty pays one solve, not one per dimension.
//!
//! Each level's candidates are cleaned as by the dimension-by-dimension method
//! (`super::sets::clean_candidates`: residual of `F`, then membership for singular ones).
//! The witness set of `Z_k` keeps `L_1 … L_k` and a fresh randomization `R_k` to `n − k`
//! equations: its points, on `F = 0`, are the isolated solutions of `[R_k·F; L_1 … L_k]`
//! that monodromy, the trace test and membership move.

use super::sets::{clean_candidates, dimension_range, DimensionReport, WitnessOptions};
use super::slices::{random_complex, Randomization, Slices};
use super::{rng, Stream, WitnessSet};
use crate::backend::Backend;
use crate::error::Result;
use crate::homotopy::{terms_with_lift, Homotopy};
use crate::post::Status;
use crate::report::Solution;
use crate::solver::{solve, SolveOptions};
use crate::start::given::{GivenStart, GIVEN_TAU_START};
use crate::system::{Polynomial, System, Term};
use num_complex::Complex64 as C64;
use std::sync::Arc;

/// A solution of `E_k` is on the slices `L_1 … L_k` when every `|L_j(x)|`, relative to
/// `Σ_i |a_ji x_i| + |b_j|`, is at most this. Singular endpoints are known to ~1e-8; a
/// nonsolution has `L_k(x)` of the size of its terms.
pub const ON_SLICE_TOL: f64 = 1e-6;

/// The embedding: `R·F`, the slices and their multipliers `λ_j`.
struct Embedding {
    /// `R·F`: `n` polynomials.
    randomized: Vec<Polynomial>,
    slices: Slices,
    /// `λ_j` (one column of `n` multipliers per slice).
    lambda: Vec<Vec<C64>>,
    variables: Vec<String>,
    name: String,
}

impl Embedding {
    fn new(system: &System, top: usize, rng: &mut impl rand::Rng) -> Embedding {
        let (n, big_n) = (system.n(), system.equations.len());
        let mut randomized = Randomization::new(system, n.min(big_n), rng).apply(system);
        // Fewer equations than variables: the rows past N are random combinations of all.
        for _ in big_n..n {
            let row: Vec<C64> = (0..big_n).map(|_| random_complex(rng)).collect();
            randomized.extend(Randomization { matrix: vec![row] }.apply(system));
        }
        let slices = Slices::random(top, n, rng);
        let lambda = (0..top)
            .map(|_| (0..n).map(|_| random_complex(rng)).collect())
            .collect();
        Embedding {
            randomized,
            slices,
            lambda,
            variables: system.variables.clone(),
            name: system.name.clone(),
        }
    }

    /// `λ_j L_j` as the terms of each of the `n` equations, scaled by `scale`, with `lift`.
    fn slice_terms(&self, j: usize, scale: C64, lift: f64) -> Vec<Vec<(C64, Vec<i32>, f64)>> {
        let l = &self.slices.polynomials()[j];
        self.lambda[j]
            .iter()
            .map(|&m| terms_with_lift(l, m * scale, lift))
            .collect()
    }

    /// `E_k` as a system.
    fn level(&self, k: usize) -> System {
        let slices = self.slices.polynomials();
        let equations = self
            .randomized
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut terms: Vec<Term> = f.terms.clone();
                for (j, l) in slices.iter().enumerate().take(k) {
                    terms.extend(l.terms.iter().map(|t| Term {
                        coeff: t.coeff * self.lambda[j][i],
                        exponents: t.exponents.clone(),
                    }));
                }
                Polynomial::from_terms(terms)
            })
            .collect();
        System {
            name: format!("{} (cascade level {k})", self.name),
            description: String::new(),
            variables: self.variables.clone(),
            equations,
        }
    }

    /// `H_k`: `E_k` at t = 0, `E_{k−1}` at t = 1 (the term `(1 − t)·λ_k L_k` as the columns
    /// `λ_k L_k·t⁰ − λ_k L_k·t¹`).
    fn homotopy(&self, k: usize) -> Homotopy {
        let n = self.variables.len();
        let one = C64::new(1.0, 0.0);
        let mut eqs: Vec<Vec<(C64, Vec<i32>, f64)>> = self
            .randomized
            .iter()
            .map(|f| terms_with_lift(f, one, 0.0))
            .collect();
        for j in 0..k - 1 {
            for (e, t) in eqs.iter_mut().zip(self.slice_terms(j, one, 0.0)) {
                e.extend(t);
            }
        }
        for (e, t) in eqs.iter_mut().zip(self.slice_terms(k - 1, one, 0.0)) {
            e.extend(t);
        }
        for (e, t) in eqs.iter_mut().zip(self.slice_terms(k - 1, -one, 1.0)) {
            e.extend(t);
        }
        Homotopy::from_affine_terms(n, eqs)
    }

    /// Whether `x` lies on the first `k` slices ([`ON_SLICE_TOL`]).
    fn on_slices(&self, x: &[C64], k: usize) -> bool {
        self.slices
            .coefficients
            .iter()
            .zip(&self.slices.constants)
            .take(k)
            .all(|(a, b)| {
                let value = a.iter().zip(x).map(|(a, x)| a * x).sum::<C64>() + b;
                let size = a.iter().zip(x).map(|(a, x)| (a * x).norm()).sum::<f64>() + b.norm();
                value.norm() <= ON_SLICE_TOL * size.max(f64::MIN_POSITIVE)
            })
    }

    /// The first `k` slices.
    fn first(&self, k: usize) -> Slices {
        Slices {
            coefficients: self.slices.coefficients[..k].to_vec(),
            constants: self.slices.constants[..k].to_vec(),
        }
    }
}

/// [`super::compute::witness_sets`] by the cascade (module doc).
pub fn cascade(
    system: &System,
    opts: &WitnessOptions,
    backend: &mut dyn Backend,
    progress: &mut dyn FnMut(usize),
) -> Result<(Vec<WitnessSet>, Vec<DimensionReport>)> {
    let (lowest, top) = dimension_range(system, opts)?;
    let n = system.n();
    let mut r = rng(opts.seed, Stream::Cascade);
    let embedding = Embedding::new(system, top, &mut r);
    let mut solve_opts: SolveOptions = opts.solve.clone();
    solve_opts.seed = opts.seed;
    solve_opts.local_dimension = false; // junk is told by membership
    let mut sets: Vec<WitnessSet> = Vec::new();
    let mut reports = Vec::new();
    // The solutions of E_top, then of each level below.
    let mut nonsolutions: Vec<Vec<C64>> = Vec::new();
    for k in (lowest..=top).rev() {
        progress(k);
        let clock = std::time::Instant::now();
        let target = embedding.level(k);
        let summary = if k == top {
            Some(solve(&target, &solve_opts, backend, &mut |_: &_| Ok(()))?)
        } else if nonsolutions.is_empty() {
            None
        } else {
            let given = GivenStart {
                homotopy: embedding.homotopy(k + 1),
                points: std::mem::take(&mut nonsolutions),
                tau: GIVEN_TAU_START,
                name: "cascade".into(),
                reason: format!("cascade from level {}", k + 1),
            };
            let level_opts = SolveOptions {
                given: Some(Arc::new(given)),
                ..solve_opts.clone()
            };
            Some(solve(&target, &level_opts, backend, &mut |_: &_| Ok(()))?)
        };
        let (paths, solutions) = summary.map_or((0, Vec::new()), |s| (s.paths, s.solutions));
        let finite = solutions.len();
        let (candidates, next): (Vec<Solution>, Vec<Solution>) = solutions
            .into_iter()
            .partition(|s| embedding.on_slices(&s.coordinates, k));
        // Nonsolutions start the next level's paths (none below the lowest dimension); only
        // nonsingular ones can be tracked (a singular one is no generic nonsolution).
        nonsolutions = if k > lowest {
            next.into_iter()
                .filter(|s| s.status == Status::Nonsingular)
                .map(|s| s.coordinates.to_vec())
                .collect()
        } else {
            Vec::new()
        };
        let mut report = DimensionReport {
            dimension: k,
            paths,
            finite,
            nonsolutions: nonsolutions.len(),
            ..Default::default()
        };
        let (points, multiplicities) = clean_candidates(
            system,
            &candidates,
            &sets,
            &solve_opts.tracker,
            opts.seed,
            backend,
            &mut report,
        )?;
        let mut rk = rng(opts.seed, Stream::Slices(k));
        let randomization = Randomization::new(system, n - k, &mut rk);
        report.degree = points.len();
        report.seconds = clock.elapsed().as_secs_f64();
        reports.push(report);
        sets.push(WitnessSet {
            dimension: k,
            randomization,
            slices: embedding.first(k),
            points,
            multiplicities,
        });
    }
    Ok((sets, reports))
}
