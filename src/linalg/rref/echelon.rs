//! The one echelonize core: blocked Gauss–Jordan elimination to (reduced) row echelon
//! form, generic over the [`Field`].
//!
//! Columns are processed in panels of up to `block` pivots. Inside a panel the pivot rows
//! are kept mutually reduced (identity on the panel's pivot columns), so that a row `r`
//! not yet touched by the panel is reduced by it in one step,
//! `r ← r − Σ_i r[c_i] · P_i` — the multipliers are the row's own entries at the pivot
//! columns. A candidate's value in the next column is found lazily by the same formula
//! (O(panel) per candidate); the chosen row is reduced, scaled to a unit pivot, and
//! cleared from the earlier panel rows. At the end of the panel every other row (the
//! remaining candidates, and with `reduce_above` the earlier pivot rows) gets the panel
//! update through [`Field::row_update`], in parallel over rows when asked. The update is
//! a matrix product `R ← R − M·P` written as row axpys, which is where Z/p's delayed
//! reduction pays.
//!
//! Pivoting: over Z/p the first candidate row (in row order) with a non-zero value; over
//! floats the candidate of largest magnitude (partial pivoting, identical to the textbook
//! column-by-column choice), accepted only when its magnitude exceeds the tolerance;
//! pivot rows are rescaled to a unit pivot. Only multiples of rows are added to other
//! rows and pivot rows are scaled by `1/d_k`, so
//! `det A = sign(π) · Π d_k` with π the final row order.

use super::dense::Matrix;
use super::field::Field;
use rayon::prelude::*;

/// Explicit parallelism argument (faer style).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parallelism {
    /// One thread.
    None,
    /// Rayon's global pool, used when the trailing update is large enough.
    Rayon,
}

/// The zero tolerance for floats (ignored over Z/p).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// `tol = max(m, n) · ε · ‖A‖_∞` (ε = 2^-52, ‖A‖_∞ the largest absolute row sum),
    /// evaluated after the optional row scaling (then ‖A‖_∞ ≤ n).
    Auto,
    /// A fixed absolute tolerance.
    Absolute(f64),
}

/// Options of [`echelonize`].
#[derive(Clone, Copy, Debug)]
pub struct EchelonOptions {
    /// Reduced row echelon form (clear above the pivots too). `false`: row echelon form
    /// with unit pivots (enough for rank and determinant; about 1/3 less work).
    pub reduce_above: bool,
    /// Pivots are searched only in columns `< pivot_limit` (e.g. the `A` part of `[A | B]`);
    /// all columns are updated.
    pub pivot_limit: usize,
    pub tolerance: Tolerance,
    pub parallelism: Parallelism,
    /// Pivots per panel.
    pub block: usize,
    /// Floats only: first scale every row by `1/max_{j<pivot_limit} |a_ij|` (Linac's row
    /// rescaling; rows zero there are left alone), so
    /// that partial pivoting and the tolerance see rows of comparable size. Row scaling
    /// does not change the RREF; the determinant is corrected by `Echelon::det_scale`.
    pub row_scaling: bool,
}

impl Default for EchelonOptions {
    fn default() -> Self {
        EchelonOptions {
            reduce_above: true,
            pivot_limit: usize::MAX,
            tolerance: Tolerance::Auto,
            parallelism: Parallelism::Rayon,
            block: 64,
            row_scaling: true,
        }
    }
}

/// What [`echelonize`] found. The matrix itself is overwritten by its (reduced) row
/// echelon form: row `k < rank` has its unit pivot in column `pivots[k]`, rows
/// `rank..` are zero (in the pivot-limited columns).
#[derive(Clone, Debug)]
pub struct Echelon<E> {
    /// Pivot columns, increasing.
    pub pivots: Vec<usize>,
    pub rank: usize,
    /// `row_perm[k]` = the input row that ended as row `k`.
    pub row_perm: Vec<usize>,
    /// The pivot values `d_k` before scaling.
    pub pivot_values: Vec<E>,
    /// Sign of the permutation `row_perm` (+1 / −1).
    pub perm_sign: i8,
    /// The zero tolerance used (0 over Z/p).
    pub tolerance: f64,
    /// `Π_i s_i^{-1}` for the row scales `s_i` applied first (one without row scaling):
    /// `det A = det_scale · sign · Π d_k`.
    pub det_scale: E,
}

/// Sign of a permutation by cycle counting.
fn perm_sign(perm: &[usize]) -> i8 {
    let mut seen = vec![false; perm.len()];
    let mut sign = 1i8;
    for s in 0..perm.len() {
        if seen[s] {
            continue;
        }
        let mut len = 0;
        let mut i = s;
        while !seen[i] {
            seen[i] = true;
            i = perm[i];
            len += 1;
        }
        if len % 2 == 0 {
            sign = -sign;
        }
    }
    sign
}

/// The float tolerance for `a` under `tol`, the norm taken over the columns `< lim`
/// (where pivots are searched).
pub fn tolerance_for<F: Field>(f: &F, a: &Matrix<F::Elem>, tol: Tolerance, lim: usize) -> f64 {
    if F::EXACT {
        return 0.0;
    }
    match tol {
        Tolerance::Absolute(t) => t,
        Tolerance::Auto => {
            let norm = (0..a.rows)
                .map(|i| {
                    a.row(i)[..lim.min(a.cols)]
                        .iter()
                        .map(|&x| f.magnitude(x))
                        .sum::<f64>()
                })
                .fold(0.0, f64::max);
            a.rows.max(lim.min(a.cols)) as f64 * f64::EPSILON * norm
        }
    }
}

/// Brings `a` to reduced row echelon form in place (row echelon form with unit pivots
/// when `!opt.reduce_above`), rows reordered: pivot rows first, zero rows last.
pub fn echelonize<F: Field>(
    f: &F,
    a: &mut Matrix<F::Elem>,
    opt: &EchelonOptions,
) -> Echelon<F::Elem> {
    let (m, n) = (a.rows, a.cols);
    let lim = opt.pivot_limit.min(n);
    let mut det_scale = f.one();
    if !F::EXACT && opt.row_scaling {
        for i in 0..m {
            let row = &mut a.data[i * n..(i + 1) * n];
            let mx = row[..lim]
                .iter()
                .fold(0.0f64, |acc, &x| acc.max(f.magnitude(x)));
            if mx > 0.0 && mx.is_finite() {
                let s = f.from_f64(1.0 / mx);
                for x in row.iter_mut() {
                    *x = f.mul(*x, s);
                }
                det_scale = f.mul(det_scale, f.from_f64(mx));
            }
        }
    }
    let tol = tolerance_for(f, a, opt.tolerance, lim);
    let b = opt.block.max(1);
    let zero = f.zero();
    // 0: candidate (not a pivot row yet), 1: pivot row of an earlier panel, 2: current panel.
    let mut state = vec![0u8; m];
    let mut candidates: Vec<usize> = (0..m).collect();
    let mut pivots = Vec::new();
    let mut piv_rows = Vec::new();
    let mut pivot_values = Vec::new();
    let mut scratch = F::Scratch::default();
    let mut mults: Vec<F::Elem> = Vec::new();
    let mut c = 0;
    while c < lim && !candidates.is_empty() {
        let c0 = c;
        let w = n - c0;
        let mut panel: Vec<F::Elem> = Vec::with_capacity(b * w);
        let mut pcols: Vec<usize> = Vec::new();
        let mut prows: Vec<usize> = Vec::new();
        while c < lim && pcols.len() < b && !candidates.is_empty() {
            let k = pcols.len();
            // Value of each candidate at column c after the panel so far.
            let mut best: Option<(usize, F::Elem, f64)> = None;
            for (idx, &r) in candidates.iter().enumerate() {
                let row = &a.data[r * n..(r + 1) * n];
                let mut v = row[c];
                for i in 0..k {
                    let mi = row[pcols[i]];
                    if !f.is_zero(mi) {
                        v = f.sub(v, f.mul(mi, panel[i * w + (c - c0)]));
                    }
                }
                if F::EXACT {
                    if !f.is_zero(v) {
                        best = Some((idx, v, 1.0));
                        break;
                    }
                } else {
                    let mag = f.magnitude(v);
                    if mag > tol && best.is_none_or(|(_, _, bm)| mag > bm) {
                        best = Some((idx, v, mag));
                    }
                }
            }
            if let Some((idx, v, _)) = best {
                let r = candidates.remove(idx);
                let mut newrow: Vec<F::Elem> = a.data[r * n + c0..(r + 1) * n].to_vec();
                mults.clear();
                mults.extend(pcols.iter().map(|&pc| a.data[r * n + pc]));
                f.row_update(&mut newrow, &mults, &panel, w, &mut scratch);
                let inv = f.inv(v);
                for x in newrow.iter_mut() {
                    *x = f.mul(*x, inv);
                }
                for &pc in &pcols {
                    newrow[pc - c0] = zero;
                }
                newrow[c - c0] = f.one();
                // Clear column c from the earlier panel rows.
                for i in 0..k {
                    let x = panel[i * w + (c - c0)];
                    if !f.is_zero(x) {
                        f.row_update(
                            &mut panel[i * w..(i + 1) * w],
                            &[x],
                            &newrow,
                            w,
                            &mut scratch,
                        );
                        panel[i * w + (c - c0)] = zero;
                    }
                }
                panel.extend_from_slice(&newrow);
                pcols.push(c);
                prows.push(r);
                pivot_values.push(v);
                state[r] = 2;
            }
            c += 1;
        }
        let k = pcols.len();
        let c1 = c; // panel covers columns c0..c1
        for (i, &r) in prows.iter().enumerate() {
            a.data[r * n + c0..(r + 1) * n].copy_from_slice(&panel[i * w..(i + 1) * w]);
        }
        if k > 0 {
            let reduce_above = opt.reduce_above;
            let work = (m * k * w) as f64;
            let is_target = |r: usize| {
                let st = state[r];
                st == 0 || (st == 1 && reduce_above)
            };
            // Clears the panel columns after the update: candidates are zero on the whole
            // panel range (exactly over Z/p; for floats this also clears the
            // below-tolerance rest of free columns), earlier pivot rows on its pivots.
            let clean = |r: usize, row: &mut [F::Elem]| {
                if state[r] == 0 {
                    for x in &mut row[c0..c1] {
                        *x = zero;
                    }
                } else {
                    for &pc in &pcols {
                        row[pc] = zero;
                    }
                }
            };
            // Rows are updated in pairs (`row_update2` shares the panel loads).
            let update = |scratch: &mut (F::Scratch, Vec<F::Elem>, Vec<F::Elem>),
                          (pair, chunk): (usize, &mut [F::Elem])| {
                let (s, m0, m1) = scratch;
                let r0 = 2 * pair;
                let (row0, row1) = chunk.split_at_mut(n);
                let t0 = is_target(r0);
                let t1 = !row1.is_empty() && is_target(r0 + 1);
                m0.clear();
                m1.clear();
                if t0 {
                    m0.extend(pcols.iter().map(|&pc| row0[pc]));
                }
                if t1 {
                    m1.extend(pcols.iter().map(|&pc| row1[pc]));
                }
                let nz0 = t0 && m0.iter().any(|&x| !f.is_zero(x));
                let nz1 = t1 && m1.iter().any(|&x| !f.is_zero(x));
                if nz0 && nz1 {
                    f.row_update2(&mut row0[c0..], m0, &mut row1[c0..], m1, &panel, w, s);
                } else if nz0 {
                    f.row_update(&mut row0[c0..], m0, &panel, w, s);
                } else if nz1 {
                    f.row_update(&mut row1[c0..], m1, &panel, w, s);
                }
                if t0 {
                    clean(r0, row0);
                }
                if t1 {
                    clean(r0 + 1, row1);
                }
            };
            let init = || (F::Scratch::default(), Vec::new(), Vec::new());
            if opt.parallelism == Parallelism::Rayon
                && work > 2.0e6
                && rayon::current_num_threads() > 1
            {
                a.data
                    .par_chunks_mut(2 * n)
                    .enumerate()
                    .with_min_len(4)
                    .for_each_init(init, update);
            } else {
                let mut s = init();
                for item in a.data.chunks_mut(2 * n).enumerate() {
                    update(&mut s, item);
                }
            }
        } else {
            for &r in &candidates {
                for x in &mut a.data[r * n + c0..r * n + c1] {
                    *x = zero;
                }
            }
        }
        for &r in &prows {
            state[r] = 1;
        }
        pivots.extend_from_slice(&pcols);
        piv_rows.extend_from_slice(&prows);
    }
    // Final row order: pivot rows by pivot column, then the rest in input order.
    let mut row_perm = piv_rows.clone();
    let mut rest: Vec<usize> = candidates;
    rest.sort_unstable();
    row_perm.extend(rest);
    let mut out = Vec::with_capacity(m * n);
    for &r in &row_perm {
        out.extend_from_slice(&a.data[r * n..(r + 1) * n]);
    }
    a.data = out;
    let rank = pivots.len();
    Echelon {
        perm_sign: perm_sign(&row_perm),
        pivots,
        rank,
        row_perm,
        pivot_values,
        tolerance: tol,
        det_scale,
    }
}
