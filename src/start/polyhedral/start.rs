//! The polyhedral start system as a homotopy in τ-form, with per-cell coordinates.
//!
//! For every support point `a` of equation `k` (the constant term added where a support
//! lacks it, unless `--torus`) the homotopy has two columns:
//!
//! `h_k = Σ_a ( r_{k,a} t^{ω(a)} + (f_{k,a} − r_{k,a}) t^{ω(a)+δ} ) x^a`
//!
//! with random complex `r` (generic coefficients for the start), the target coefficients `f`
//! (`f = 0` for an added constant), the exact integer lifting `ω` of the mixed-cell
//! computation divided by its range (`2^20` unless ties widened it), and `δ = 1`. At `t → 0` the `r` columns dominate
//! (the `f − r` columns are lifted higher), at `t = 1` the coefficients are `f`: one run goes
//! from the binomial start systems to the target, including the coefficient change and the
//! removal of the added constants.
//!
//! Per cell with inner normal `(α, 1)` the substitution `x = y·t^α` (PHCpack's and
//! HomotopyContinuation.jl's change of variables) turns every lift into
//! `ω'(a) = ⟨a − c₀, α⟩ + ω(a) − ω(c₀) ≥ 0` (`c₀` a cell point of the equation), zero
//! exactly on the cell: computed in exact integer arithmetic and carried by the cell's paths
//! as their own lift row (see [`crate::eval::Points::lifts`]). Evaluating `⟨a, log y⟩ + τ ω'`
//! never subtracts two huge numbers, unlike a global τ with `z = log y + τα` (at τ₀ ≈ −10⁷
//! that would lose ~8 digits). At τ = 0, `y = x`.
//!
//! Each cell's paths start at `τ₀ = −L / min{ω' > 0}` (`e^{−L}` = 1e-13: the start system is
//! exact to that), in log coordinates `z = log y` from the binomial solutions.

use super::{for_each_binomial_solution, mixed_cells, CellError, Lifting, MixedCell, Supports};
use crate::error::{Error, Result};
use crate::homotopy::Homotopy;
use crate::system::System;
use crate::track::StartPoint;
use num_complex::Complex64 as C64;
use rand::Rng;
use std::ops::ControlFlow;
use std::sync::Arc;

/// The lifting's first range: generic values in `[0, 2^20)`, divided by it in the homotopy
/// (lifts of order 1).
pub const FIRST_LIFT_RANGE: i64 = super::lifting::LIFT_RANGE;
/// Each draw that meets an exact tie widens the range by this many bits, up to
/// [`MAX_LIFT_RANGE`]. A tie is a linear relation among the lifting values, so a draw meets
/// one with probability about (cells × points) / range: rare at 2^20 for systems of
/// thousands of cells, near-certain for the millions of cells of cyclic-14 (C^n), and
/// negligible at 2^44 for any system whose cells fit in memory or time.
pub const LIFT_RANGE_STEP_BITS: u32 = 12;
/// The widest generic range: with the origin lift `range·2^12` (times 16 while too
/// small), lifts stay below 2^62 and the exact shifted lifts (`den·ω'`) within `i128`.
pub const MAX_LIFT_RANGE: i64 = 1 << 44;
/// Extra lift of the `f − r` columns (scaled units).
pub const DELTA: f64 = 1.0;
/// `τ₀ = −START_LOG_ACCURACY / gap`.
pub const START_LOG_ACCURACY: f64 = 30.0;
/// Origin lift of the stable lifting for the first range, in units of the range: `2^12`
/// (multiplied by 16 while the exact check finds it too small). The added constants turn on at `τ ≈ −1/4096`, where paths take small steps; 2^24
/// (τ ≈ −1/16, inside the endgame zone) saved a quarter of katsura-10's steps but gave
/// katsura-8 false winding numbers 2 at a close pair of roots for 4 seeds of 8.
pub const STABLE_BIG_UNITS: i64 = 1 << 12;

/// Equations whose coefficient moduli span at most this factor get start coefficients of
/// their smallest modulus ([`start_modulus`]).
pub const START_MODULUS_SPREAD: f64 = 16.0;

/// The modulus of the random start coefficients `r` of equation `f`: its smallest
/// coefficient modulus ([`crate::system::Polynomial::min_coeff`]) when its coefficient
/// moduli span at most [`START_MODULUS_SPREAD`], else 1. The test is the same for `λ·f`,
/// so for such an equation the homotopy of `λ·f` is `λ` times that of `f`, column by
/// column (the same paths, whatever factor the equilibration leaves on a scaled
/// equation), and every target coefficient is at least the start's, so `r(1−t) + f·t`
/// reaches `f` by `t = 1/2`. The sparse chain at n = 8 with its equations scaled lost all
/// ten paths for seed 3 with `|r| = 1` (its second equation, left at 0.08 by the
/// equilibration, gave another homotopy, whose paths crawled in log coordinates to 20,000
/// steps). Equations of a wide coefficient range (chandra-n's span 35 to 500) keep
/// `|r| = 1`, their paths as they were. Every other shipped family has smallest modulus 1.
pub fn start_modulus(f: &crate::system::Polynomial) -> f64 {
    let lo = f.min_coeff();
    if f.max_coeff() <= START_MODULUS_SPREAD * lo {
        lo
    } else {
        1.0
    }
}

/// One column of the homotopy: equation, support point (index in the equation's group),
/// and whether it is the `f − r` column.
#[derive(Clone, Copy, Debug)]
struct Column {
    eq: usize,
    point: usize,
    second: bool,
}

/// The polyhedral homotopy of a system for one lifting.
pub struct Polyhedral {
    pub homotopy: Homotopy,
    pub supports: Supports,
    pub lifting: Lifting,
    /// The range of the lifting's generic part: lifts are divided by it in the homotopy.
    pub lift_range: i64,
    /// Random start coefficients `r[k][i]` per equation and support point.
    r: Vec<Vec<C64>>,
    columns: Vec<Column>,
    /// Paths: the (stable, when affine) mixed volume.
    pub paths: u128,
    /// Cells of the lifting (all, stable or not).
    pub cells: u64,
    /// Mixed volume of the supports used (with added constants when affine).
    pub volume: u128,
    pub torus: bool,
    pub threads: usize,
}

/// Draws liftings from `seed` until one is generic (and, for a stable lifting, refines the
/// coarse subdivision), counting its cells; returns the lifting, the range of its generic
/// part and the counts. The first draw takes its generic part from `[0, first_range)`;
/// every draw that meets a tie widens the range by [`LIFT_RANGE_STEP_BITS`] bits. A
/// lifting without ties gives the start systems (a cell's face then holds its own points
/// only, so its start system is binomial); the counting wrappers resolve ties by a symbolic
/// perturbation instead, which gives volumes but not start systems.
fn generic_lifting(
    s: &Supports,
    stable: bool,
    seed: u64,
    threads: usize,
    first_range: i64,
) -> Result<(Lifting, i64, super::CellStats)> {
    let mut range = first_range;
    let mut big = range.saturating_mul(STABLE_BIG_UNITS);
    let mut last = String::new();
    for attempt in 0..super::MAX_REDRAWS {
        let lift = if stable {
            Lifting::stable_in(s, seed.wrapping_add(attempt), range, big)
        } else {
            Lifting::random_in(s, seed.wrapping_add(attempt), range)
        };
        match mixed_cells(s, &lift, threads, &mut |_| ControlFlow::Continue(())) {
            Ok(st) => return Ok((lift, range, st)),
            Err(CellError::NonGeneric(m)) => {
                last = format!("{m} (generic lifts below 2^{})", range.ilog2());
                if range < MAX_LIFT_RANGE {
                    range = (range << LIFT_RANGE_STEP_BITS).min(MAX_LIFT_RANGE);
                    big = big.max(range.saturating_mul(STABLE_BIG_UNITS));
                }
            }
            Err(CellError::LiftingTooSmall) if big < 1 << 60 => {
                big <<= 4;
                last = "origin lift too small".into();
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(Error::Internal(format!(
        "no generic lifting in {} draws: {last}",
        super::MAX_REDRAWS
    )))
}

impl Polyhedral {
    /// Builds the homotopy; `rng` draws the start coefficients, `seed` the lifting.
    pub fn new(
        system: &System,
        torus: bool,
        rng: &mut impl Rng,
        threads: usize,
    ) -> Result<Polyhedral> {
        Polyhedral::with_first_lift_range(system, torus, rng, threads, FIRST_LIFT_RANGE)
    }

    /// [`Polyhedral::new`] whose first lifting draws its generic part from
    /// `[0, first_range)` (tests force ties with a tiny range).
    pub fn with_first_lift_range(
        system: &System,
        torus: bool,
        rng: &mut impl Rng,
        threads: usize,
        first_range: i64,
    ) -> Result<Polyhedral> {
        let n = system.n();
        let base = Supports::from_system(system)?;
        let plain = !torus && base.has_origin();
        let supports = if torus { base } else { base.with_origin() };
        let seed: u64 = rng.random();
        // Where every support has its constant term, a plain lifting: the mixed volume
        // then counts the roots in C^n (Li–Wang 1996) and the paths do not crawl through
        // τ ≈ −1/4096, where the big-lifted constants of the stable lifting turn on
        // (noon-7: 386k → 214k steps, chandra-10: 222k → 110k). Its paths to chandra-n's
        // huge-norm solutions stall near t = 1 more often (2 of chandra-10 seed 2's), which
        // tracking their last stretch in double-double finishes (`track::dd`).
        let (lifting, lift_range, stats) =
            generic_lifting(&supports, !(torus || plain), seed, threads, first_range)?;
        let scale = lift_range as f64;
        let r: Vec<Vec<C64>> = (0..n)
            .map(|e| {
                let modulus = start_modulus(&system.equations[e]);
                supports
                    .support(e)
                    .iter()
                    .map(|_| C64::from_polar(modulus, rng.random::<f64>() * std::f64::consts::TAU))
                    .collect()
            })
            .collect();
        let mut columns = Vec::new();
        let eqs = (0..n)
            .map(|e| {
                let mut terms = Vec::new();
                for (i, a) in supports.support(e).iter().enumerate() {
                    let f = supports.term_index[e][i]
                        .map(|t| system.equations[e].terms[t].coeff)
                        .unwrap_or(C64::new(0.0, 0.0));
                    let a32: Vec<i32> = a.iter().map(|&v| v as i32).collect();
                    let w = lifting.of(&supports, e, i) as f64 / scale;
                    terms.push((r[e][i], a32.clone(), w));
                    columns.push(Column {
                        eq: e,
                        point: i,
                        second: false,
                    });
                    // f and −r apart: merged, their sum is exact (`HomTerm::coeff_lo`).
                    terms.push((f, a32.clone(), w + DELTA));
                    terms.push((-r[e][i], a32, w + DELTA));
                    columns.push(Column {
                        eq: e,
                        point: i,
                        second: true,
                    });
                }
                terms
            })
            .collect();
        let homotopy = Homotopy::from_affine_terms(n, eqs);
        if homotopy.term_count() != columns.len() {
            return Err(Error::Internal(
                "polyhedral homotopy: a start coefficient cancelled a target coefficient; use another seed".into(),
            ));
        }
        Ok(Polyhedral {
            homotopy,
            paths: if torus {
                stats.mixed_volume
            } else {
                stats.stable_volume
            },
            cells: stats.cells,
            volume: stats.mixed_volume,
            supports,
            lifting,
            lift_range,
            r,
            columns,
            torus,
            threads,
        })
    }

    /// The shifted lifts `ω'` of every column for a cell, and the cell's `τ₀`.
    fn cell_lifts(&self, cell: &MixedCell) -> Result<(Vec<f64>, f64)> {
        let s = &self.supports;
        let den = cell.denominator;
        let mut lifts = Vec::with_capacity(self.columns.len());
        let mut gap = f64::INFINITY;
        let scale = self.lift_range as f64;
        for c in &self.columns {
            let pts = s.support(c.eq);
            let c0 = cell.pairs[c.eq][0];
            let (a, a0) = (&pts[c.point], &pts[c0]);
            // den·ω'(a) = ⟨a − c₀, num⟩ + den·(ω(a) − ω(c₀)), exact.
            let mut acc: i128 = 0;
            for ((&x, &y), &num) in a.iter().zip(a0).zip(&cell.inner_normal) {
                acc = (x - y) as i128 * num + acc;
            }
            let dw = (self.lifting.of(s, c.eq, c.point) - self.lifting.of(s, c.eq, c0)) as i128;
            let v = den
                .checked_mul(dw)
                .and_then(|d| d.checked_add(acc))
                .ok_or_else(|| Error::Internal("shifted lift overflows i128".into()))?;
            if v < 0 {
                return Err(Error::Internal(format!(
                    "cell normal does not minimize equation {} (shifted lift {v}/{den})",
                    c.eq + 1
                )));
            }
            let w = v as f64 / (den as f64 * scale) + if c.second { DELTA } else { 0.0 };
            if w > 0.0 {
                gap = gap.min(w);
            }
            lifts.push(w);
        }
        Ok((lifts, -START_LOG_ACCURACY / gap))
    }

    /// The binomial system of a cell: rows `V_k = a_{c_l} − a_{c_0}` and `log b_k` with
    /// `y^{V_k} = b_k`. For a group of `k` equations sharing a support (cell points
    /// `c_0 … c_k`), the `k × (k+1)` coefficients are reduced to `y^{c_l − c_0} = u_l` first.
    fn binomial(&self, cell: &MixedCell) -> Result<(Vec<Vec<i64>>, Vec<C64>)> {
        let s = &self.supports;
        let n = s.n;
        let mut v = vec![Vec::new(); n];
        let mut log_b = vec![C64::new(0.0, 0.0); n];
        for (g, eqs) in s.equations.iter().enumerate() {
            let pts = &s.groups[g];
            let c0 = cell.pairs[eqs[0]][0];
            let cl: Vec<usize> = eqs.iter().map(|&e| cell.pairs[e][1]).collect();
            // M u = −m0 with M[l][j] = r_{e_l, c_j}, m0[l] = r_{e_l, c_0}.
            let k = eqs.len();
            let mut a = nalgebra::DMatrix::<C64>::zeros(k, k);
            let mut b = nalgebra::DVector::<C64>::zeros(k);
            for (l, &e) in eqs.iter().enumerate() {
                for (j, &c) in cl.iter().enumerate() {
                    a[(l, j)] = self.r[e][c];
                }
                b[l] = -self.r[e][c0];
            }
            let u = a
                .lu()
                .solve(&b)
                .ok_or_else(|| Error::Internal("singular start coefficients".into()))?;
            for (l, &e) in eqs.iter().enumerate() {
                v[e] = pts[cl[l]]
                    .iter()
                    .zip(&pts[c0])
                    .map(|(x, y)| x - y)
                    .collect();
                log_b[e] = u[l].ln();
            }
        }
        Ok((v, log_b))
    }

    /// Start points of one cell (log coordinates, own lifts), numbered from `first_path`.
    pub fn cell_start_points(&self, cell: &MixedCell, first_path: u64) -> Result<Vec<StartPoint>> {
        let (lifts, tau0) = self.cell_lifts(cell)?;
        let lifts: Arc<[f64]> = lifts.into();
        let (v, log_b) = self.binomial(cell)?;
        let mut out = Vec::with_capacity(cell.volume.min(1 << 16) as usize);
        for_each_binomial_solution(&v, &log_b, &mut |z| {
            let mut y = z.to_vec();
            y.push(C64::new(0.0, 0.0));
            out.push(StartPoint {
                path: first_path + out.len() as u64,
                y,
                tau: tau0,
                log: true,
                lifts: Some(lifts.clone()),
                steps: (0, 0),
            });
            ControlFlow::Continue(())
        })?;
        Ok(out)
    }

    /// Streams the start points of every cell that contributes paths (stable cells when
    /// affine), or only of the paths `only` (sorted ids), through a bounded channel from an
    /// enumeration thread. Cells come in the same order for any thread count (see
    /// [`mixed_cells()`]), so path ids are the same in every pass and every run of a seed.
    pub fn start_points(self: &Arc<Self>, only: Option<Arc<Vec<u64>>>) -> StartStream {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Vec<StartPoint>>>(64);
        let me = Arc::clone(self);
        let handle = std::thread::spawn(move || {
            let mut next = 0u64;
            let res = mixed_cells(&me.supports, &me.lifting, me.threads, &mut |cell| {
                if !cell.is_stable() {
                    return ControlFlow::Continue(());
                }
                let first = next;
                // Path ids are u64; a solve never gets here with more paths (the limits).
                next = next.saturating_add(u64::try_from(cell.volume).unwrap_or(u64::MAX));
                let wanted = |p: u64| {
                    only.as_ref()
                        .is_none_or(|ids| ids.binary_search(&p).is_ok())
                };
                if only.as_ref().is_some_and(|ids| {
                    let i = ids.partition_point(|&p| p < first);
                    i == ids.len() || ids[i] >= next
                }) {
                    return ControlFlow::Continue(()); // no wanted path in this cell
                }
                let pts = me
                    .cell_start_points(&cell, first)
                    .map(|v| v.into_iter().filter(|s| wanted(s.path)).collect::<Vec<_>>());
                let failed = pts.is_err();
                if tx.send(pts).is_err() || failed {
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            });
            if let Err(e) = res {
                let _ = tx.send(Err(e.into()));
            }
        });
        StartStream {
            rx,
            buf: Vec::new().into_iter(),
            error: None,
            _handle: handle,
            cells_done: 0,
        }
    }
}

/// Iterator over the start points produced by the enumeration thread. An error ends the
/// stream and is kept in [`StartStream::error`].
pub struct StartStream {
    rx: std::sync::mpsc::Receiver<Result<Vec<StartPoint>>>,
    buf: std::vec::IntoIter<StartPoint>,
    pub error: Option<Error>,
    pub cells_done: u64,
    _handle: std::thread::JoinHandle<()>,
}

impl Iterator for StartStream {
    type Item = StartPoint;
    fn next(&mut self) -> Option<StartPoint> {
        loop {
            if let Some(p) = self.buf.next() {
                return Some(p);
            }
            if self.error.is_some() {
                return None;
            }
            match self.rx.recv() {
                Ok(Ok(v)) => {
                    self.cells_done += 1;
                    self.buf = v.into_iter();
                }
                Ok(Err(e)) => {
                    self.error = Some(e);
                    return None;
                }
                Err(_) => return None,
            }
        }
    }
}
