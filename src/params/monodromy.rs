//! Monodromy solving (Duff, Hill, Jensen, Lee, Leykin, Sommars, "Solving polynomial systems
//! via homotopy continuation and monodromy", IMA J. Numer. Anal. 2019): all solutions of a
//! generic member `F(x; p₀) = 0` of a family from one of them.
//!
//! 1. **A start pair by construction.** For a family affine in its parameters,
//!    `F(x; p) = A(x)·p + b(x)`: a random `x₀` and a solution `p₀` of the `n` linear
//!    equations `A(x₀)·p = −b(x₀)` in the `m ≥ n` parameters (the least-norm solution plus a
//!    random vector of the null space of `A(x₀)`) make `(x₀, p₀)` a solution–parameter
//!    pair, generic with probability one.
//! 2. **Loops.** The known solutions at `p₀` are tracked around a triangle
//!    `p₀ → p₁ → p₂ → p₀` with random vertices ([`super::Family::path_homotopy`] on each edge):
//!    the loop permutes the solutions (the monodromy action), and endpoints not yet known
//!    are new solutions. Every loop tracks all known solutions, batched through the solver.
//! 3. **Stop.** After a loop without new solutions the trace test runs (below); the run
//!    stops when it passes, or after `stall_loops` loops in a row without new solutions, or
//!    at `max_loops`. The result says which.
//!
//! **Trace test.** Along a line `p(s) = p₀ + s·v` the sum of *all* solutions
//! `T(s) = Σ_i x_i(p(s))` is a rational function of `s`; where no solution escapes to
//! infinity along the line it is a polynomial, and one that grows at most linearly is
//! affine. So `T(1) + T(−1) − 2·T(0) = 0` for the complete set, while a proper subset's sum
//! (permuted by the monodromy group) is not affine. This holds for families whose
//! parameters keep the solutions bounded on lines, such as constant terms of equations whose
//! leading forms have no common zero at infinity (dense families, katsura with parametric
//! constants: the solutions grow like `|s|^{1/d}`). For other families (parameters in leading
//! coefficients, where solutions pass through infinity) the sum is not affine even for the
//! complete set, the test never passes, and the stall count ends the run.

use super::{nonsingular_points, random_gamma, random_point, startfile, track_collect, Family};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::solver::{rng_for, SolveOptions};
use nalgebra::DMatrix;
use num_complex::Complex64 as C64;

/// When to stop.
#[derive(Clone, Debug)]
pub struct MonodromyOptions {
    /// Loops in a row without new solutions after which the run stops.
    pub stall_loops: usize,
    /// Loops at most.
    pub max_loops: usize,
    /// Run the trace test after each loop without new solutions.
    pub trace_test: bool,
}

impl Default for MonodromyOptions {
    fn default() -> Self {
        MonodromyOptions {
            stall_loops: 5,
            max_loops: 1000,
            trace_test: true,
        }
    }
}

/// The largest relative second difference of the trace ([`trace_residual`]) that passes.
pub const TRACE_TOL: f64 = 1e-8;

/// Why the loops stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The trace test passed: the set is complete.
    TraceTest,
    /// `stall_loops` loops in a row found no new solution.
    Stalled,
    /// `max_loops` loops ran.
    MaxLoops,
}

impl Stop {
    pub fn describe(self) -> &'static str {
        match self {
            Stop::TraceTest => "trace test passed (the solution set is complete)",
            Stop::Stalled => "no new solutions in the last loops (set --stall-loops)",
            Stop::MaxLoops => "loop limit reached (--max-loops)",
        }
    }
}

/// The result of [`solve`].
#[derive(Clone, Debug)]
pub struct Monodromy {
    /// The generic parameter point `p₀`.
    pub parameters: Vec<C64>,
    /// The distinct nonsingular solutions found at `p₀`.
    pub solutions: Vec<Vec<C64>>,
    pub loops: usize,
    /// Paths tracked, loops and trace tests together.
    pub paths: u64,
    pub stop: Stop,
    /// The last trace test's relative second difference (`None`: none ran to the end).
    pub trace_residual: Option<f64>,
    /// Solutions known after each loop.
    pub history: Vec<usize>,
}

/// A solution–parameter pair of a family affine in its parameters (the module doc, step 1).
/// An error, naming why, when the family is not affine in its parameters or the
/// parameters cannot satisfy the equations at a random point.
pub fn start_pair(family: &Family, rng: &mut impl rand::Rng) -> Result<(Vec<C64>, Vec<C64>)> {
    let (n, m) = (family.n(), family.m());
    if !family.is_affine_in_parameters() {
        return Err(Error::Usage(
            "monodromy: the parameters enter some coefficient nonlinearly (a product or \
             power of parameters); the start pair is found by solving linear equations for \
             the parameters at a random point, so every coefficient must be affine in them"
                .into(),
        ));
    }
    if let Some(k) = (0..n).find(|&k| {
        family.equations[k].iter().all(|t| {
            t.coeff
                .terms
                .iter()
                .all(|c| c.exponents.iter().all(|&e| e == 0))
        })
    }) {
        return Err(Error::Usage(format!(
            "monodromy: equation {} has no parameter, so a random point cannot be made a \
             solution by choosing the parameters",
            k + 1
        )));
    }
    if m < n {
        return Err(Error::Usage(format!(
            "monodromy: {m} parameters cannot satisfy {n} equations at a random point; give \
             the family at least as many parameters as equations"
        )));
    }
    for _attempt in 0..4 {
        let x0 = random_point(n, rng);
        let (a, b) = family.linear_in_parameters_at(&x0);
        let a = DMatrix::from_row_slice(n, m, &a);
        let svd = a.clone().svd(true, true);
        let smax = svd.singular_values.max();
        let smin = svd.singular_values.min();
        // a NaN (no parameter determined) counts as rank-deficient too
        if smin.is_nan() || smin <= 1e-10 * smax {
            continue;
        }
        let rhs = DMatrix::from_iterator(n, 1, b.iter().map(|v| -v));
        let least = svd
            .solve(&rhs, 1e-12 * smax)
            .map_err(|e| Error::Internal(format!("monodromy start pair: {e}")))?;
        // A random point of the null space: z − A⁺A z.
        let z = DMatrix::from_iterator(m, 1, random_point(m, rng));
        let az = &a * &z;
        let back = svd
            .solve(&az, 1e-12 * smax)
            .map_err(|e| Error::Internal(format!("monodromy start pair: {e}")))?;
        let p: Vec<C64> = (0..m).map(|j| least[j] + z[j] - back[j]).collect();
        let member = family.at(&p).map_err(Error::Usage)?;
        if member.relative_residual(&x0) < 1e-12 {
            return Ok((x0, p));
        }
    }
    Err(Error::Usage(
        "monodromy: at random points the parameters do not determine the equations (the \
         matrix of parameter coefficients has rank below the number of equations)"
            .into(),
    ))
}

/// The relative second difference `‖T(1) + T(−1) − 2·T(0)‖∞ / Σ ‖x‖∞` of the traces of
/// three solution sets on a line in parameter space (`None` when the sets differ in size:
/// a path failed).
pub fn trace_residual(at0: &[Vec<C64>], plus: &[Vec<C64>], minus: &[Vec<C64>]) -> Option<f64> {
    if plus.len() != at0.len() || minus.len() != at0.len() {
        return None;
    }
    let n = at0.first().map_or(0, |x| x.len());
    let sum =
        |s: &[Vec<C64>]| -> Vec<C64> { (0..n).map(|j| s.iter().map(|x| x[j]).sum()).collect() };
    let (t0, tp, tm) = (sum(at0), sum(plus), sum(minus));
    let scale: f64 = [at0, plus, minus]
        .iter()
        .flat_map(|s| s.iter())
        .map(|x| x.iter().map(|z| z.norm()).fold(0.0, f64::max))
        .sum::<f64>()
        .max(f64::MIN_POSITIVE);
    let diff = (0..n)
        .map(|j| (tp[j] + tm[j] - 2.0 * t0[j]).norm())
        .fold(0.0, f64::max);
    Some(diff / scale)
}

/// Finds the solutions of a generic member of `family` by monodromy (module doc). Paths are
/// tracked with `opts` (its seed seeds every random choice here too) on `backend`;
/// `progress` hears the count after each loop.
pub fn solve(
    family: &Family,
    opts: &SolveOptions,
    mopts: &MonodromyOptions,
    backend: &mut dyn Backend,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Monodromy> {
    let mut rng = rng_for(opts.seed);
    let (x0, p0) = start_pair(family, &mut rng)?;
    let m = family.m();
    let mut known = vec![x0];
    let mut paths = 0u64;
    let mut stall = 0;
    let mut loops = 0;
    let mut trace = None;
    let mut history = Vec::new();
    let mut track = |pts: &[Vec<C64>],
                     a: &[C64],
                     b: &[C64],
                     rng: &mut rand_chacha::ChaCha8Rng,
                     paths: &mut u64|
     -> Result<(Vec<Vec<C64>>, bool)> {
        if pts.is_empty() {
            return Ok((Vec::new(), true));
        }
        let gamma = random_gamma(rng);
        let (_, ends) = track_collect(family, pts, a, b, gamma, opts, backend)?;
        *paths += pts.len() as u64;
        let found = nonsingular_points(&ends);
        let all = found.len() == pts.len();
        Ok((found, all))
    };
    let stop = loop {
        if loops >= mopts.max_loops {
            break Stop::MaxLoops;
        }
        let p1 = random_point(m, &mut rng);
        let p2 = random_point(m, &mut rng);
        let (s1, _) = track(&known, &p0, &p1, &mut rng, &mut paths)?;
        let (s2, _) = track(&startfile::distinct(s1), &p1, &p2, &mut rng, &mut paths)?;
        let (back, _) = track(&startfile::distinct(s2), &p2, &p0, &mut rng, &mut paths)?;
        loops += 1;
        let before = known.len();
        known.extend(back);
        known = startfile::distinct(known);
        history.push(known.len());
        progress(loops, known.len());
        if known.len() > before {
            stall = 0;
            continue;
        }
        stall += 1;
        if mopts.trace_test {
            let v = random_point(m, &mut rng);
            let plus: Vec<C64> = p0.iter().zip(&v).map(|(a, b)| a + b).collect();
            let minus: Vec<C64> = p0.iter().zip(&v).map(|(a, b)| a - b).collect();
            let (xp, all_p) = track(&known, &p0, &plus, &mut rng, &mut paths)?;
            let (xm, all_m) = track(&known, &p0, &minus, &mut rng, &mut paths)?;
            trace = (all_p && all_m)
                .then(|| trace_residual(&known, &xp, &xm))
                .flatten();
            if trace.is_some_and(|r| r <= TRACE_TOL) {
                break Stop::TraceTest;
            }
        }
        if stall >= mopts.stall_loops {
            break Stop::Stalled;
        }
    };
    Ok(Monodromy {
        parameters: p0,
        solutions: known,
        loops,
        paths,
        stop,
        trace_residual: trace,
        history,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trace of the two roots of `x² = c` is 0 for every c (affine), the trace of one
    /// root is not.
    #[test]
    fn trace_of_a_complete_set_is_affine() {
        let roots = |c: C64| {
            let r = c.sqrt();
            vec![vec![r], vec![-r]]
        };
        let (c0, v) = (C64::new(0.3, 1.1), C64::new(-0.7, 0.4));
        let (a, p, m) = (roots(c0), roots(c0 + v), roots(c0 - v));
        assert!(trace_residual(&a, &p, &m).unwrap() < 1e-15);
        let r = trace_residual(&a[..1], &p[..1], &m[..1]).unwrap();
        assert!(r > 1e-3, "{r}");
        assert_eq!(trace_residual(&a, &p[..1], &m), None);
    }

    /// The constructed pair solves the member, and the parameter point is not special
    /// (two seeds give different points).
    #[test]
    fn start_pair_solves_its_member() {
        let f = Family::parse(
            "variables: [x, y]\nparameters: [a, b, c, d]\nequations:\n  - \"a*x^2 + b*y - 1\"\n  - \"x*y + c*x + d\"\n",
            "f.yaml",
        )
        .unwrap()
        .unwrap();
        let (x, p) = start_pair(&f, &mut rng_for(3)).unwrap();
        assert!(f.at(&p).unwrap().relative_residual(&x) < 1e-12);
        let (_, q) = start_pair(&f, &mut rng_for(4)).unwrap();
        assert!((p[0] - q[0]).norm() > 1e-6);
        let g = Family::parse(
            "variables: [x, y]\nparameters: [a]\nequations:\n  - \"a*x^2 - 1\"\n  - \"x + y\"\n",
            "g.yaml",
        )
        .unwrap()
        .unwrap();
        let e = start_pair(&g, &mut rng_for(1)).unwrap_err().to_string();
        assert!(e.contains("equation 2 has no parameter"), "{e}");
        let h = Family::parse(
            "variables: [x]\nparameters: [a]\nequations: [\"a^2*x - 1\"]\n",
            "h.yaml",
        )
        .unwrap()
        .unwrap();
        let e = start_pair(&h, &mut rng_for(1)).unwrap_err().to_string();
        assert!(e.contains("nonlinearly"), "{e}");
    }
}
