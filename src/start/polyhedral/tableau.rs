//! Incremental floating-point tableau for the mixed-cell search, with exactly verified
//! infeasibility certificates.
//!
//! Unknowns: the inner normal `α ∈ Q^n` and one free level `β_g` per group. The row of point
//! `p` of group `g` is the slack `s_p = ⟨α, p⟩ + ω(p) − β_g ≥ 0`; a point is on its group's
//! lower face iff `s_p = 0`. A search node is the tableau of the touched groups' rows with
//! the chosen points' slacks fixed at zero (nonbasic and "dead"). Adding a point is one
//! phase-2 minimisation of its slack from the parent's feasible basis (Bland's rule); a new
//! group's rows are appended by substituting the basic unknowns and shifting `β_g` to the
//! current least height, which keeps the basis feasible without a pivot.
//!
//! The arithmetic is `f64`, but no wrong *infeasible* answer can come out: when the
//! minimisation stops at a positive value, the final row of `s_q` is turned into a Farkas
//! certificate — integers `D > 0`, `c_r` with `D·s_q − Σ c_r s_r ≡ K` identically in
//! `(α, β)`, `c_r ≥ 0` for inequality rows, `K > 0` — and that identity is checked in exact
//! `i128` arithmetic from the original integer data. `D` is the basis determinant
//! (the common denominator of Edmonds' fraction-free tableau, tracked as the product of
//! the pivots), so `D` times a tableau entry is an integer and rounding recovers it. An
//! answer that cannot be certified is [`Tight::Unknown`] (the caller decides exactly).
//! A *feasible* answer is not certified: the caller must treat it as a hint (a wrong one
//! only costs search time; cells are re-checked exactly at the leaves).

/// Result of [`Tableau::tighten`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tight {
    /// The slack reached 0 (up to the float tolerance): it is now fixed at 0. A hint.
    Yes,
    /// The minimum of the slack is positive: proved by an exactly checked certificate.
    No,
    /// Not decided (certificate check failed, degenerate or dependent row, too many
    /// pivots): decide exactly.
    Unknown,
}

/// Values below this are taken as zero (a wrong "zero" only errs towards feasible).
const TOL_V: f64 = 1e-7;
/// Coefficients below this in magnitude are not used as pivots / improving directions.
const TOL_A: f64 = 1e-9;
/// Certificates need `D` and `D·entry` exactly representable.
const MAX_D: f64 = (1u64 << 50) as f64;

pub(super) struct Tableau {
    n: usize,
    /// Number of free unknowns (`n` α's and one β per group); slack of row `i` has id
    /// `free + i`.
    free: usize,
    /// Row width: the constant column 0 and one column per nonbasic variable.
    w: usize,
    /// Columns `live..w` hold the levels of groups not appended yet (zero in every row):
    /// loops stop at `live`.
    live: usize,
    t: Vec<f64>,
    /// `|det|` of the current basis (Edmonds' denominator), as a float.
    d: f64,
    /// Variable in the basis of each row.
    basic: Vec<usize>,
    /// Variable of each column (column 0 is the constant).
    nonbasic: Vec<usize>,
    dead: Vec<bool>,
    /// `flip[v]`: the tableau carries `−v` for the free unknown `v`.
    flip: Vec<bool>,
    /// `(group, point)` of every row.
    origin: Vec<(u32, u32)>,
    /// Row of every variable in the basis (`NONE` when nonbasic).
    row_of: Vec<u32>,
    /// Scratch row of the pivot.
    prow: Vec<f64>,
    /// Scratch of `append_group`: (row, α index, flipped) of the basic α's (not copied).
    sub: Vec<(usize, usize, bool)>,
}

const NONE: u32 = u32::MAX;

impl Clone for Tableau {
    fn clone(&self) -> Self {
        let mut t = Tableau::empty();
        t.clone_from(self);
        t
    }
    /// Reuses the allocations of `self` (the search copies a tableau per candidate).
    fn clone_from(&mut self, o: &Self) {
        self.n = o.n;
        self.free = o.free;
        self.w = o.w;
        self.live = o.live;
        self.t.clone_from(&o.t);
        self.d = o.d;
        self.basic.clone_from(&o.basic);
        self.nonbasic.clone_from(&o.nonbasic);
        self.dead.clone_from(&o.dead);
        self.flip.clone_from(&o.flip);
        self.origin.clone_from(&o.origin);
        self.row_of.clone_from(&o.row_of);
        self.prow.clone_from(&o.prow);
    }
}

/// The original integer data of the rows: points and lifting values per group.
#[derive(Clone, Copy)]
pub(super) struct Data<'a> {
    pub(super) pts: &'a [Vec<Vec<i64>>],
    pub(super) omega: &'a [Vec<i64>],
}

impl Tableau {
    /// A tableau without allocations, to be assigned by `clone_from`.
    pub(super) fn empty() -> Self {
        Tableau {
            n: 0,
            free: 0,
            w: 0,
            live: 0,
            t: Vec::new(),
            d: 1.0,
            basic: Vec::new(),
            nonbasic: Vec::new(),
            dead: Vec::new(),
            flip: Vec::new(),
            origin: Vec::new(),
            row_of: Vec::new(),
            prow: Vec::new(),
            sub: Vec::new(),
        }
    }

    /// Empty tableau (no rows) for `n` unknowns and one level per group; `rank[g]` is the
    /// position of group `g` in the order the groups will be appended (its level gets
    /// column `n + 1 + rank[g]`, so the used columns stay a prefix).
    pub(super) fn new(n: usize, rank: &[usize]) -> Self {
        let free = n + rank.len();
        let w = free + 1;
        let mut nonbasic: Vec<usize> = (0..w)
            .map(|j| if j == 0 { usize::MAX } else { j - 1 })
            .collect();
        for (g, &r) in rank.iter().enumerate() {
            nonbasic[n + 1 + r] = n + g;
        }
        Tableau {
            n,
            free,
            w,
            live: n + 1,
            t: Vec::new(),
            d: 1.0,
            basic: Vec::new(),
            nonbasic,
            dead: vec![false; w],
            flip: vec![false; free],
            origin: Vec::new(),
            row_of: vec![NONE; free],
            prow: vec![0.0; w],
            sub: Vec::new(),
        }
    }

    pub(super) fn rows(&self) -> usize {
        self.basic.len()
    }

    /// Appends the rows of group `g`; returns the index of the first appended row (point
    /// `i` gets row `first + i`). The basis stays feasible: `β_g` (untouched so far) is
    /// shifted to the least current height.
    pub(super) fn append_group(&mut self, g: usize, data: Data) -> usize {
        let (pts, omega) = (&data.pts[g], &data.omega[g]);
        let w = self.w;
        let first = self.rows();
        let bvar = self.n + g;
        debug_assert!(!self.basic.contains(&bvar));
        let bcol = (1..w)
            .find(|&c| self.nonbasic[c] == bvar)
            .expect("level column");
        self.live = self.live.max(bcol + 1);
        let live = self.live;
        let old = self.t.len();
        self.t.resize(old + pts.len() * w, 0.0);
        // rows where an α is basic (β's of touched groups do not occur in group g's rows)
        let mut sub = std::mem::take(&mut self.sub);
        sub.clear();
        sub.extend(
            (0..self.n)
                .filter(|&v| self.row_of[v] != NONE)
                .map(|v| (self.row_of[v] as usize, v, self.flip[v])),
        );
        let (head, tail) = self.t.split_at_mut(old);
        for (row, (p, &om)) in tail.chunks_exact_mut(w).zip(pts.iter().zip(omega.iter())) {
            row[0] = om as f64;
            #[allow(clippy::needless_range_loop)]
            for j in 1..live {
                let v = self.nonbasic[j];
                let c = if v < self.n {
                    p[v] as f64
                } else if v == bvar {
                    -1.0
                } else {
                    continue;
                };
                row[j] = if self.flip[v] { -c } else { c };
            }
            for &(i, v, fl) in &sub {
                let c = p[v] as f64;
                if c == 0.0 {
                    continue;
                }
                let c = if fl { -c } else { c };
                for (x, y) in row[..live].iter_mut().zip(&head[i * w..i * w + live]) {
                    *x += c * y;
                }
            }
        }
        self.sub = sub;
        let m = (0..pts.len())
            .map(|i| self.t[old + i * w])
            .fold(f64::INFINITY, f64::min);
        for i in 0..pts.len() {
            self.t[old + i * w] -= m;
        }
        self.basic.reserve(pts.len());
        self.origin.reserve(pts.len());
        self.row_of.reserve(pts.len());
        for i in 0..pts.len() {
            self.basic.push(self.free + first + i);
            self.origin.push((g as u32, i as u32));
            self.row_of.push((first + i) as u32);
        }
        first
    }

    /// Sets `self` to a copy of `src` with group `g` appended (reusing `self`'s
    /// allocations); returns the first appended row.
    pub(super) fn assign_appended(&mut self, src: &Tableau, g: usize, data: Data) -> usize {
        let extra = data.pts[g].len();
        self.t.clear();
        self.t.reserve(src.t.len() + extra * src.w);
        self.clone_from(src);
        self.append_group(g, data)
    }

    /// Is the slack of `row` zero at the current vertex (up to the tolerance)?
    pub(super) fn is_tight(&self, row: usize) -> bool {
        match self.row_of[self.free + row] {
            NONE => true,
            i => self.t[i as usize * self.w] <= TOL_V,
        }
    }

    /// Minimises the slack of `row` (phase 2 from the current feasible basis); when it
    /// reaches 0 the slack is made nonbasic and fixed at 0 (an equality from now on).
    pub(super) fn tighten(&mut self, row: usize, data: Data) -> Tight {
        match self.minimize(row, data) {
            Tight::Yes if !self.fix(row) => Tight::Unknown,
            t => t,
        }
    }

    /// Fixes the slack of `row`, zero at the current vertex, at 0: it is pivoted out of the
    /// basis (largest entry of its row) and its column becomes dead. False when its row
    /// has no usable entry (dependent).
    pub(super) fn fix(&mut self, row: usize) -> bool {
        let w = self.w;
        let s = self.free + row;
        let i = self.row_of[s];
        if i != NONE {
            let i = i as usize;
            let mut best: Option<(usize, f64)> = None;
            for c in 1..self.live {
                let a = self.t[i * w + c].abs();
                if !self.dead[c] && a > TOL_A && best.is_none_or(|(_, b)| a > b) {
                    best = Some((c, a));
                }
            }
            let Some((c, _)) = best else {
                return false;
            };
            self.pivot(i, c);
        }
        let c = (1..self.live)
            .find(|&c| self.nonbasic[c] == s)
            .expect("slack column");
        self.dead[c] = true;
        true
    }

    /// Minimises the slack of `row` over the current region from the current feasible
    /// basis (Bland's rule), without fixing anything: `Yes` when it reaches 0 (the vertex
    /// then has it at 0), `No` with an exactly checked certificate, else `Unknown`. The
    /// tableau stays a feasible basis of the same region, so the next minimisation starts
    /// from here.
    pub(super) fn minimize(&mut self, row: usize, data: Data) -> Tight {
        let w = self.w;
        let s = self.free + row;
        for _ in 0..(4 * w + 20) {
            let i = self.row_of[s];
            if i == NONE {
                return Tight::Yes;
            }
            let i = i as usize;
            if self.t[i * w] <= TOL_V {
                return Tight::Yes;
            }
            // entering column: smallest variable id that decreases the slack (Bland)
            let mut enter: Option<usize> = None;
            for c in 1..self.live {
                if self.dead[c] {
                    continue;
                }
                let var = self.nonbasic[c];
                let a = self.t[i * w + c];
                let ok = if var < self.free {
                    a.abs() > TOL_A
                } else {
                    a < -TOL_A
                };
                if ok && enter.is_none_or(|e| var < self.nonbasic[e]) {
                    enter = Some(c);
                }
            }
            let Some(c) = enter else {
                return if self.certify(i, data) {
                    Tight::No
                } else {
                    Tight::Unknown
                };
            };
            if self.t[i * w + c] > 0.0 {
                // a free unknown moving down: substitute v → −v
                for k in 0..self.rows() {
                    self.t[k * w + c] = -self.t[k * w + c];
                }
                let var = self.nonbasic[c];
                self.flip[var] ^= true;
            }
            // ratio test over sign-constrained rows; ties by smallest basic id
            // (ratio val / −a compared by cross-multiplication)
            let mut leave: Option<(usize, f64, f64)> = None;
            for (k, row) in self.t.chunks_exact(w).enumerate() {
                let a = -row[c];
                if a <= TOL_A || self.basic[k] < self.free {
                    continue;
                }
                let val = if row[0] <= TOL_V { 0.0 } else { row[0] };
                leave = match leave {
                    Some((l, lv, la)) => {
                        let (x, y) = (val * la, lv * a);
                        if x < y || (x == y && self.basic[k] < self.basic[l]) {
                            Some((k, val, a))
                        } else {
                            Some((l, lv, la))
                        }
                    }
                    None => Some((k, val, a)),
                };
            }
            let Some((r, _, _)) = leave else {
                return Tight::Unknown;
            };
            self.pivot(r, c);
        }
        Tight::Unknown
    }

    /// Exact check of the Farkas certificate read off row `i` (the row of the minimised
    /// slack at its positive optimum).
    fn certify(&self, i: usize, data: Data) -> bool {
        // D is an integer ≥ 1; the float product of the pivots may be off by a few ulps
        let d = self.d;
        let dd = d.round();
        if !(1.0..MAX_D).contains(&dd) || (d - dd).abs() > 1e-6 * dd {
            return false;
        }
        let big_d = dd as i128;
        let w = self.w;
        let row = &self.t[i * w..i * w + self.live];
        let (gq, q) = self.origin[self.basic[i] - self.free];
        let (gq, q) = (gq as usize, q as usize);
        let len = self.free + 1;
        let mut stack = [0i128; 96];
        let mut heap = Vec::new();
        let acc: &mut [i128] = if len <= stack.len() {
            &mut stack[..len]
        } else {
            heap.resize(len, 0);
            &mut heap
        };
        let pq = &data.pts[gq][q];
        for (x, &a) in acc.iter_mut().zip(pq) {
            *x = big_d * a as i128;
        }
        acc[self.n + gq] -= big_d;
        let mut k = big_d * data.omega[gq][q] as i128;
        #[allow(clippy::needless_range_loop)]
        for j in 1..self.live {
            let var = self.nonbasic[j];
            if var < self.free {
                continue;
            }
            let x = row[j] * d;
            if x.abs() >= MAX_D {
                return false;
            }
            let c = x.round() as i128;
            if c == 0 {
                continue;
            }
            if c < 0 && !self.dead[j] {
                return false;
            }
            let (g, p) = self.origin[var - self.free];
            let (g, p) = (g as usize, p as usize);
            for (x, &a) in acc.iter_mut().zip(&data.pts[g][p]) {
                *x -= c * a as i128;
            }
            acc[self.n + g] += c;
            k -= c * data.omega[g][p] as i128;
        }
        acc.iter().all(|&x| x == 0) && k > 0
    }

    /// Pivot on row `r`, column `c` (every column is updated, dead ones included: the
    /// certificate needs their coefficients).
    fn pivot(&mut self, r: usize, c: usize) {
        let (w, live) = (self.w, self.live);
        let piv = self.t[r * w + c];
        let inv = 1.0 / piv;
        let mut prow = std::mem::take(&mut self.prow);
        prow.resize(live, 0.0);
        for (p, x) in prow.iter_mut().zip(&self.t[r * w..r * w + live]) {
            *p = -x * inv;
        }
        prow[c] = 0.0;
        for (i, row) in self.t.chunks_exact_mut(w).enumerate() {
            let row = &mut row[..live];
            if i == r {
                continue;
            }
            let f = row[c];
            if f == 0.0 {
                continue;
            }
            for (x, y) in row.iter_mut().zip(&prow) {
                *x += f * y;
            }
            row[c] = f * inv;
        }
        prow[c] = inv;
        self.t[r * w..r * w + live].copy_from_slice(&prow);
        self.prow = prow;
        self.d *= piv.abs();
        std::mem::swap(&mut self.basic[r], &mut self.nonbasic[c]);
        self.row_of[self.basic[r]] = r as u32;
        self.row_of[self.nonbasic[c]] = NONE;
    }

    /// The current vertex's `α` in floating point (for tests and diagnostics).
    #[cfg(test)]
    pub(super) fn alpha_f64(&self) -> Vec<f64> {
        let mut a = vec![0.0; self.n];
        for (i, &b) in self.basic.iter().enumerate() {
            if b < self.n {
                let v = self.t[i * self.w];
                a[b] = if self.flip[b] { -v } else { v };
            }
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::super::lp::{self, Lp, LpResult};
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Exact LP of "every group's `eqs` on its lower face" (groups without equalities
    /// constrain nothing).
    fn exact(pts: &[Vec<Vec<i64>>], om: &[Vec<i64>], eqs: &[Vec<usize>]) -> LpResult {
        let n = pts[0][0].len();
        let mut lp = Lp::new(n);
        for (g, e) in eqs.iter().enumerate() {
            let Some(&b) = e.first() else { continue };
            for (q, p) in pts[g].iter().enumerate() {
                if q != b {
                    let coef = p.iter().zip(&pts[g][b]).map(|(x, y)| x - y);
                    lp.push(coef, om[g][q] - om[g][b], e.contains(&q));
                }
            }
        }
        lp::feasible(&lp)
    }

    /// Random tighten sequences: every "No" is exactly infeasible (it is certified), every
    /// "Yes" exactly feasible, and the float vertex puts the chosen points on their faces.
    #[test]
    fn random_sequences_against_exact_lp() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (mut yes, mut no, mut unknown) = (0, 0, 0);
        for _ in 0..400 {
            let n = rng.random_range(2..5);
            let pts: Vec<Vec<Vec<i64>>> = (0..n)
                .map(|_| {
                    (0..6)
                        .map(|_| (0..n).map(|_| rng.random_range(0..4)).collect())
                        .collect()
                })
                .collect();
            let om: Vec<Vec<i64>> = (0..n)
                .map(|_| (0..6).map(|_| rng.random_range(0..1 << 20)).collect())
                .collect();
            let data = Data {
                pts: &pts,
                omega: &om,
            };
            let rank: Vec<usize> = (0..n).collect();
            let mut t = Tableau::new(n, &rank);
            let mut eqs: Vec<Vec<usize>> = vec![Vec::new(); n];
            for g in 0..n {
                let first = t.append_group(g, data);
                for _ in 0..3 {
                    let q = rng.random_range(0..6);
                    if eqs[g].contains(&q) {
                        continue;
                    }
                    let mut e2 = eqs.clone();
                    e2[g].push(q);
                    let truth = exact(&pts, &om, &e2);
                    let mut t2 = t.clone();
                    match t2.tighten(first + q, data) {
                        Tight::No => {
                            no += 1;
                            assert_eq!(truth, LpResult::Infeasible, "{pts:?} {om:?} {e2:?}");
                        }
                        Tight::Yes => {
                            yes += 1;
                            assert_ne!(truth, LpResult::Infeasible, "{pts:?} {om:?} {e2:?}");
                            t = t2;
                            eqs = e2;
                            let a = t.alpha_f64();
                            let h = |g: usize, p: usize| {
                                om[g][p] as f64
                                    + (0..n).map(|j| pts[g][p][j] as f64 * a[j]).sum::<f64>()
                            };
                            for (g, e) in eqs.iter().enumerate() {
                                let Some(&b) = e.first() else { continue };
                                let m = (0..6).map(|p| h(g, p)).fold(f64::INFINITY, f64::min);
                                for &p in e {
                                    let tol = 1e-6 * (1.0 + h(g, b).abs());
                                    assert!((h(g, p) - m).abs() <= tol, "{a:?} {eqs:?}");
                                }
                            }
                        }
                        Tight::Unknown => unknown += 1,
                    }
                }
            }
        }
        eprintln!("yes {yes} no {no} unknown {unknown}");
        assert!(yes > 200 && no > 200, "yes {yes} no {no}");
        assert!(unknown * 20 < yes + no, "unknown {unknown}");
    }

    /// A hand example (n = 2): the certificate of an infeasible point and a feasible edge.
    #[test]
    fn small_groups() {
        // group 0: triangle (0,0), (1,0), (0,1) lifted 0, 3, 5; group 1: (0,0), (1,1) lifted 2, 0
        let pts = vec![
            vec![vec![0, 0], vec![1, 0], vec![0, 1]],
            vec![vec![0, 0], vec![1, 1]],
        ];
        let om = vec![vec![0, 3, 5], vec![2, 0]];
        let data = Data {
            pts: &pts,
            omega: &om,
        };
        let mut t = Tableau::new(2, &[1, 0]);
        let f1 = t.append_group(1, data);
        assert_eq!(t.tighten(f1, data), Tight::Yes);
        assert_eq!(t.tighten(f1 + 1, data), Tight::Yes);
        let f0 = t.append_group(0, data);
        assert_eq!(t.tighten(f0, data), Tight::Yes);
        // with α1 + α2 = 2 the point (0,1) cannot tie with (0,0) and (1,0) at once:
        // (0,0)~(1,0) gives α1 = −3, then α2 = 5 and (0,1) is at 10 > 0
        let mut t2 = t.clone();
        assert_eq!(t2.tighten(f0 + 1, data), Tight::Yes);
        assert_eq!(t2.tighten(f0 + 2, data), Tight::No);
        let a = t2.alpha_f64();
        assert!(
            (a[0] + 3.0).abs() < 1e-9 && (a[1] - 5.0).abs() < 1e-9,
            "{a:?}"
        );
    }
}
