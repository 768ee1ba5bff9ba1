//! Mixed cells of the fine mixed subdivision induced by a lifting: depth-first enumeration
//! of lower faces with warm-started LP feasibility tests and a relation table
//! (MixedVol-style, Gao–Li–Wu; see docs/mixed-cells.md).
//!
//! A mixed cell of type `(k_1, …, k_r)` is a choice of `k_g + 1` points `C_g` of every
//! group `S_g` together with an inner normal `(α, 1)` such that `⟨α, a⟩ + ω(a)` is minimal
//! over `S_g` exactly on `C_g`. The search fills the points group after group, each group
//! in increasing index order (so every cell is met once); a partial choice is extended
//! only while the LP "some `α` puts every chosen point on its group's lower face" is
//! feasible. The LPs run on the float tableau of `tableau.rs`: a branch is cut only
//! on an exactly checked infeasibility certificate (or an exact LP), and every leaf is
//! re-solved and checked exactly, so a float error can cost time but never a cell.

use super::exact::{self, Overflow};
use super::lifting::{Lifting, Supports};
use super::lp::{self, Lp, LpResult, Witness};
use super::ordered_dfs::{ordered_dfs, Expand, JobLimits};
use super::tableau::{Data, Tableau, Tight};
use super::tropical::{self, Homotopy};
use super::CellError;
use num_bigint::BigInt;
use rayon::prelude::*;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// A fine mixed cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MixedCell {
    /// Per equation `e`: indices (into `supports.support(e)`) of the cell's two points
    /// `[a0, a1]`. For a group used by `k` equations the cell has `k + 1` points
    /// `c_0 < c_1 < … < c_k` of that group; the `l`-th of its equations (in increasing
    /// order) gets the pair `[c_0, c_l]`.
    pub pairs: Vec<[usize; 2]>,
    /// `α = inner_normal / denominator` (`denominator > 0`): `⟨α, a⟩ + ω(a)` is minimal over
    /// each support exactly at the cell's points.
    pub inner_normal: Vec<i128>,
    pub denominator: i128,
    /// `|det V|`, `V` the `n × n` matrix of rows `a1 − a0`: the number of solutions of the
    /// cell's binomial system, and the cell's contribution to the mixed volume.
    pub volume: u128,
    /// For a [`Lifting::stable`] lifting: the normal `β` (numerators, denominator) of the
    /// coarse Huber–Sturmfels cell containing this cell; `None` otherwise.
    pub coarse_normal: Option<(Vec<i128>, i128)>,
}

impl MixedCell {
    /// True when the cell counts toward the stable mixed volume (`β ≥ 0`), or when the
    /// lifting is not a stable one.
    pub fn is_stable(&self) -> bool {
        match &self.coarse_normal {
            None => true,
            Some((b, _)) => b.iter().all(|&v| v >= 0),
        }
    }
    /// The inner normal in floating point.
    pub fn normal_f64(&self) -> Vec<f64> {
        self.inner_normal
            .iter()
            .map(|&v| v as f64 / self.denominator as f64)
            .collect()
    }
}

/// Counters of one enumeration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CellStats {
    pub cells: u64,
    /// Sum of the volumes of all cells (the mixed volume).
    pub mixed_volume: u128,
    /// Sum of the volumes of the stable cells (equals `mixed_volume` for non-stable liftings).
    pub stable_volume: u128,
    pub lp_calls: u64,
    /// Feasibility decided by the parent's witness without an LP.
    pub shortcuts: u64,
    pub relation_lps: u64,
    /// Steps (pivots between neighbouring cells) of the tropical homotopy.
    pub steps: u64,
    /// Float tableau minimisations that could not be certified (decided exactly instead).
    pub undecided: u64,
    /// Leaves reached through an uncertified float "feasible" that the exact check rejected.
    pub rejected_leaves: u64,
    /// Exact ties of the lifting (a point at the height of a cell's face) resolved by the
    /// symbolic perturbation ([`mixed_cells_perturbed`]; always 0 for [`mixed_cells`]).
    pub ties: u64,
    pub seconds: f64,
    pub threads: usize,
    /// True when the consumer stopped the stream early.
    pub stopped: bool,
}

struct Ctx<'a> {
    n: usize,
    s: &'a Supports,
    lift: &'a Lifting,
    /// Search slots: (group, position within the group's chosen points).
    slots: Vec<(usize, usize)>,
    offset: Vec<usize>,
    words: usize,
    /// Relation table: `compat[p]` is the bitset of global points that can lie on lower
    /// faces together with `p` (`p` itself iff `p` is a lower vertex).
    compat: Vec<Vec<u64>>,
    /// First tableau row of each group (groups are appended in slot order).
    row_base: Vec<usize>,
    /// Position of each group in the slot order.
    rank: Vec<usize>,
    lp_calls: AtomicU64,
    shortcuts: AtomicU64,
    undecided: AtomicU64,
    rejected_leaves: AtomicU64,
    steps: AtomicU64,
    ties: AtomicU64,
    /// Resolve exact ties at the leaf by the tropical homotopy's symbolic perturbation
    /// (set only for fully mixed supports on the homotopy path).
    perturb: bool,
    /// Filter the mask by one LP per point of the later groups whenever a group is
    /// completed (measured: 1.2–1.5× fewer seconds on cyclic-9 / chandra-11; doing it at
    /// every node costs more than it saves).
    lookahead: bool,
    mode: SearchMode,
}

/// How the search decides feasibility (every mode gives the same cells in the same order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SearchMode {
    /// Tropical homotopy continuation (`tropical.rs`) for fully mixed supports, else
    /// `Float` (the default). Its cells come in the traversal's order, not `Float`'s.
    #[default]
    Tropical,
    /// Tree search on the float tableau, exactly certified "infeasible", exact fallback.
    Float,
    /// Exact from-scratch LPs only (the reference; much slower).
    Exact,
    /// Float, but a fixed share of the decisions is declared undecided and some rebuilt
    /// tableaux are dropped, so that the exact fallbacks run (for tests).
    StressFallback,
}

#[derive(Clone)]
struct Node {
    chosen: Vec<usize>,
    /// Incremental float tableau of the node (None when it could not be kept: the subtree
    /// then uses the exact from-scratch LP).
    tab: Option<Box<Tableau>>,
    /// A feasible point, kept by nodes without a tableau.
    witness: Option<Witness>,
    mask: Vec<u64>,
}

impl<'a> Ctx<'a> {
    fn gid(&self, g: usize, i: usize) -> usize {
        self.offset[g] + i
    }

    /// Appends the rows "every point of group g is at or above the face through `base`",
    /// with equality for `eqs`.
    fn push_group(&self, lp: &mut Lp, g: usize, base: usize, eqs: &[usize]) {
        let pts = &self.s.groups[g];
        let w = &self.lift.values[g];
        for (q, pq) in pts.iter().enumerate() {
            if q == base {
                continue;
            }
            let pb = &pts[base];
            lp.push(
                pq.iter().zip(pb).map(|(a, b)| a - b),
                w[q] - w[base],
                eqs.contains(&q),
            );
        }
    }

    /// LP of the chosen points (`chosen[d]` fills `slots[d]`).
    fn build_lp(&self, lp: &mut Lp, chosen: &[usize]) {
        lp.clear();
        let mut d = 0;
        while d < chosen.len() {
            let (g, _) = self.slots[d];
            let mut e = d + 1;
            while e < chosen.len() && self.slots[e].0 == g {
                e += 1;
            }
            self.push_group(lp, g, chosen[d], &chosen[d + 1..e]);
            d = e;
        }
    }

    /// `⟨num, a⟩ + den·ω(a)` for point `i` of group `g` (checked): in `i64` when `w`'s
    /// entries and every term fit, else in `i128`.
    fn height(&self, w: &Witness, g: usize, i: usize) -> Option<i128> {
        i64::try_from(w.den)
            .ok()
            .and_then(|den| {
                let num = w.num.iter().map(|&x| i64::try_from(x).ok());
                self.height_i64(num, den, g, i)
            })
            .or_else(|| self.height_i128(w, g, i))
    }

    /// [`Self::height`] in checked `i64` (`None` also where an entry of `num` is).
    fn height_i64(
        &self,
        num: impl Iterator<Item = Option<i64>>,
        den: i64,
        g: usize,
        i: usize,
    ) -> Option<i128> {
        let mut h = self.lift.values[g][i].checked_mul(den)?;
        for (a, x) in self.s.groups[g][i].iter().zip(num) {
            h = h.checked_add(a.checked_mul(x?)?)?;
        }
        Some(h as i128)
    }

    /// [`Self::height`] in checked `i128`.
    fn height_i128(&self, w: &Witness, g: usize, i: usize) -> Option<i128> {
        let mut h = (self.lift.values[g][i] as i128).checked_mul(w.den)?;
        for (a, x) in self.s.groups[g][i].iter().zip(&w.num) {
            h = h.checked_add((*a as i128).checked_mul(*x)?)?;
        }
        Some(h)
    }

    /// Does `w` (a point satisfying every row of `node`) prove that the extension of `node`
    /// by `cand` is feasible? True when `cand` is on its group's lower face at `w`.
    fn shortcut_at(&self, w: &Witness, node: &Node, depth: usize, cand: usize) -> bool {
        let (g, pos) = self.slots[depth];
        let Some(hc) = self.height(w, g, cand) else {
            return false;
        };
        if pos > 0 {
            let base = node.chosen[depth - pos];
            self.height(w, g, base) == Some(hc)
        } else {
            (0..self.s.groups[g].len()).all(|q| matches!(self.height(w, g, q), Some(h) if h >= hc))
        }
    }

    /// Is `q` minimal in group `h` at `w`?
    fn minimal_at(&self, w: &Witness, h: usize, q: usize) -> bool {
        let Some(hq) = self.height(w, h, q) else {
            return false;
        };
        (0..self.s.groups[h].len()).all(|r| matches!(self.height(w, h, r), Some(x) if x >= hq))
    }

    fn candidates(&self, node: &Node, depth: usize) -> std::ops::Range<usize> {
        let (g, pos) = self.slots[depth];
        let k = self.s.equations[g].len();
        let len = self.s.groups[g].len();
        let start = if pos == 0 {
            0
        } else {
            node.chosen[depth - 1] + 1
        };
        // leave room for the k − pos points still to come
        let end = (len + pos).saturating_sub(k);
        start..end.max(start)
    }

    /// Cheap necessary condition: every group not yet complete after slot `depth − 1`
    /// still has enough compatible points in `mask` for its remaining slots.
    fn enough_left(&self, mask: &[u64], depth: usize) -> bool {
        let mut d = depth;
        while d < self.slots.len() {
            let (g, pos) = self.slots[d];
            let need = self.s.equations[g].len() + 1 - pos;
            let lo = self.offset[g];
            let hi = lo + self.s.groups[g].len();
            let mut have = 0;
            for id in lo..hi {
                have += (mask[id / 64] >> (id % 64) & 1) as usize;
            }
            if have < need {
                return false;
            }
            // an untouched group needs a compatible lower edge inside the mask
            if pos == 0 && need >= 2 {
                let has_edge = (lo..hi).any(|p| {
                    mask[p / 64] >> (p % 64) & 1 == 1
                        && (p + 1..hi).any(|q| {
                            mask[q / 64] >> (q % 64) & 1 == 1
                                && self.compat[p][q / 64] >> (q % 64) & 1 == 1
                        })
                });
                if !has_edge {
                    return false;
                }
            }
            d += need;
        }
        true
    }

    /// One LP (or witness shortcut) per masked point of every untouched group; clears the
    /// infeasible ones from `mask`. False when some group is left with too few points.
    fn lookahead_filter(
        &self,
        chosen: &[usize],
        witness: Option<&Witness>,
        mask: &mut [u64],
        lp: &mut Lp,
    ) -> Result<bool, CellError> {
        let mut known: Vec<Witness> = witness.into_iter().cloned().collect();
        let mut d = chosen.len();
        while d < self.slots.len() {
            let (h, _) = self.slots[d];
            let k = self.s.equations[h].len();
            let lo = self.offset[h];
            let len = self.s.groups[h].len();
            let mut have = 0;
            for q in 0..len {
                let id = lo + q;
                if mask[id / 64] >> (id % 64) & 1 == 0 {
                    continue;
                }
                // a point minimal at a known feasible point needs no LP
                let ok = if known.iter().rev().any(|w| self.minimal_at(w, h, q)) {
                    self.shortcuts.fetch_add(1, Ordering::Relaxed);
                    true
                } else {
                    self.build_lp(lp, chosen);
                    self.push_group(lp, h, q, &[]);
                    self.lp_calls.fetch_add(1, Ordering::Relaxed);
                    match lp::feasible_from(lp, witness) {
                        LpResult::Feasible(w) => {
                            if let Some(w) = w {
                                remember(&mut known, w);
                            }
                            true
                        }
                        _ => false,
                    }
                };
                if ok {
                    have += 1;
                } else {
                    mask[id / 64] &= !(1u64 << (id % 64));
                }
            }
            if have < k + 1 {
                return Ok(false);
            }
            d += k + 1;
        }
        Ok(true)
    }

    fn data(&self) -> Data<'a> {
        Data {
            pts: &self.s.groups,
            omega: &self.lift.values,
        }
    }

    /// Appends group `g` to a copy of `tab`.
    fn with_group(&self, tab: &Tableau, g: usize) -> (Tableau, usize) {
        let mut t = Tableau::empty();
        let first = t.assign_appended(tab, g, self.data());
        (t, first)
    }

    /// Float tableau of a node rebuilt from the root (after an undecided minimisation);
    /// `None` when some step is again undecided.
    fn replay(&self, chosen: &[usize]) -> Option<Tableau> {
        let mut t = Tableau::new(self.n, &self.rank);
        for (d, &c) in chosen.iter().enumerate() {
            let (g, pos) = self.slots[d];
            if pos == 0 {
                t.append_group(g, self.data());
            }
            if t.tighten(self.row_base[g] + c, self.data()) != Tight::Yes {
                return None;
            }
        }
        Some(t)
    }

    /// Lookahead on a tableau: for every untouched group, each masked point is kept iff it
    /// can be minimal in its group together with the node's equalities (one warm-started
    /// minimisation, skipped when an earlier vertex already shows it minimal). Only
    /// certified infeasibility removes a point.
    fn lookahead_tab(&self, depth: usize, tab: &Tableau, mask: &mut [u64]) -> bool {
        let mut d = depth;
        let mut tmp = Tableau::empty();
        while d < self.slots.len() {
            let (h, _) = self.slots[d];
            let k = self.s.equations[h].len();
            let lo = self.offset[h];
            let len = self.s.groups[h].len();
            let first = tmp.assign_appended(tab, h, self.data());
            let mut known: Vec<bool> = (0..len).map(|q| tmp.is_tight(first + q)).collect();
            let mut have = 0;
            for q in 0..len {
                let id = lo + q;
                if mask[id / 64] >> (id % 64) & 1 == 0 {
                    continue;
                }
                let ok = if known[q] {
                    self.shortcuts.fetch_add(1, Ordering::Relaxed);
                    true
                } else {
                    self.lp_calls.fetch_add(1, Ordering::Relaxed);
                    match tmp.minimize(first + q, self.data()) {
                        Tight::Yes => {
                            for (r, kn) in known.iter_mut().enumerate() {
                                if !*kn && tmp.is_tight(first + r) {
                                    *kn = true;
                                }
                            }
                            true
                        }
                        Tight::No => false,
                        // keeping a point in the mask is always safe
                        Tight::Unknown => {
                            self.undecided.fetch_add(1, Ordering::Relaxed);
                            true
                        }
                    }
                };
                if ok {
                    have += 1;
                } else {
                    mask[id / 64] &= !(1u64 << (id % 64));
                }
            }
            if have < k + 1 {
                return false;
            }
            d += k + 1;
        }
        true
    }

    /// Feasible children of `node` (which fills slots `0..depth`).
    fn children(&self, node: &Node, lp: &mut Lp) -> Result<Vec<Node>, CellError> {
        let depth = node.chosen.len();
        let (g, pos) = self.slots[depth];
        let mut out = Vec::new();
        // the node's tableau, with group g appended when g starts here
        let mut base: Option<Tableau> = node.tab.as_ref().map(|t| {
            if pos == 0 {
                let (t, first) = self.with_group(t, g);
                debug_assert_eq!(first, self.row_base[g]);
                t
            } else {
                (**t).clone()
            }
        });
        // witnesses of this node's LPs: each satisfies every row of `node`
        let mut found: Vec<Witness> = Vec::new();
        let parent_w: Option<Witness> = node.witness.clone();
        for cand in self.candidates(node, depth) {
            let id = self.gid(g, cand);
            if node.mask[id / 64] >> (id % 64) & 1 == 0 {
                continue;
            }
            let mut mask: Vec<u64> = node
                .mask
                .iter()
                .zip(&self.compat[id])
                .map(|(a, b)| a & b)
                .collect();
            if !self.enough_left(&mask, depth + 1) {
                continue;
            }
            let mut chosen = node.chosen.clone();
            chosen.push(cand);
            // warm-started tableau first
            let mut tab_child: Option<Box<Tableau>> = None;
            let mut decided = false;
            if let Some(b) = &mut base {
                // every candidate's slack is minimised over the node's region, one after
                // the other on the same tableau; a child copies it and fixes its point
                let row = self.row_base[g] + cand;
                if b.is_tight(row) {
                    self.shortcuts.fetch_add(1, Ordering::Relaxed);
                } else {
                    self.lp_calls.fetch_add(1, Ordering::Relaxed);
                }
                let mut r = b.minimize(row, self.data());
                if self.mode == SearchMode::StressFallback && (cand + depth) % 3 == 0 {
                    r = Tight::Unknown;
                }
                if r == Tight::Yes {
                    let mut t = b.clone();
                    if t.fix(row) {
                        tab_child = Some(Box::new(t));
                        decided = true;
                    } else {
                        r = Tight::Unknown;
                    }
                }
                match r {
                    Tight::Yes => {}
                    Tight::No => continue,
                    Tight::Unknown => {
                        self.undecided.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            let witness = if decided {
                None
            } else {
                let known_w = parent_w
                    .iter()
                    .chain(found.iter().rev())
                    .find(|w| self.shortcut_at(w, node, depth, cand));
                if let Some(w) = known_w {
                    self.shortcuts.fetch_add(1, Ordering::Relaxed);
                    Some(w.clone())
                } else {
                    self.build_lp(lp, &chosen);
                    self.lp_calls.fetch_add(1, Ordering::Relaxed);
                    match lp::feasible_from(lp, parent_w.as_ref()) {
                        LpResult::Infeasible => continue,
                        LpResult::Dependent => {
                            return Err(CellError::NonGeneric(format!(
                                "dependent consistent equalities for points {chosen:?}"
                            )))
                        }
                        LpResult::Feasible(w) => {
                            if let Some(w) = &w {
                                remember(&mut found, w.clone());
                            }
                            w
                        }
                    }
                }
            };
            if !decided && base.is_some() {
                // undecided by the float tableau, feasible exactly: rebuild the tableau
                let drop = self.mode == SearchMode::StressFallback && (cand + depth) % 2 == 0;
                if !drop {
                    tab_child = self.replay(&chosen).map(Box::new);
                }
            }
            if self.lookahead && pos == self.s.equations[g].len() {
                // group completed: drop the points of later groups that can no longer be on
                // a lower face together with this partial cell
                let fast = tab_child
                    .as_ref()
                    .map(|t| self.lookahead_tab(depth + 1, t, &mut mask));
                let keep = match fast {
                    Some(k) => k,
                    None => self.lookahead_filter(&chosen, witness.as_ref(), &mut mask, lp)?,
                };
                if !keep {
                    continue;
                }
            }
            out.push(Node {
                chosen,
                tab: tab_child,
                witness,
                mask,
            });
        }
        Ok(out)
    }

    fn dfs(
        &self,
        node: &Node,
        lp: &mut Lp,
        emit: &mut dyn FnMut(MixedCell) -> ControlFlow<()>,
        stop: &AtomicBool,
    ) -> Result<ControlFlow<()>, CellError> {
        if stop.load(Ordering::Relaxed) {
            return Ok(ControlFlow::Break(()));
        }
        if node.chosen.len() == self.slots.len() {
            return Ok(match self.leaf(node, lp, None)? {
                Some(cell) => emit(cell),
                None => {
                    self.rejected_leaves.fetch_add(1, Ordering::Relaxed);
                    ControlFlow::Continue(())
                }
            });
        }
        for child in self.children(node, lp)? {
            if self.dfs(&child, lp, emit, stop)?.is_break() {
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Turns a complete choice into a cell, checking it exactly: `α` is the unique solution
    /// of the cell's equalities (Cramer's rule), every chosen point must be on its group's
    /// face and every other point strictly above it. `None` when the choice is not a lower
    /// face (reachable only through an uncertified float "feasible"); a tie or a zero
    /// volume on a lower face is `NonGeneric`. `hint`: a candidate `α = num/den` (from the
    /// tropical homotopy), used when `V·num = rhs·den` holds exactly (else Cramer's rule).
    fn leaf(
        &self,
        node: &Node,
        lp: &mut Lp,
        hint: Option<(Vec<i128>, i128)>,
    ) -> Result<Option<MixedCell>, CellError> {
        let n = self.n;
        let mut pairs = vec![[0usize; 2]; n];
        let mut v: Vec<Vec<i64>> = Vec::with_capacity(n);
        let mut rhs: Vec<i64> = Vec::with_capacity(n);
        let mut rows_pts: Vec<(usize, usize, usize)> = Vec::with_capacity(n);
        let mut d = 0;
        while d < self.slots.len() {
            let (g, _) = self.slots[d];
            let k = self.s.equations[g].len();
            let pts = &node.chosen[d..d + k + 1];
            let base = pts[0];
            for (l, &e) in self.s.equations[g].iter().enumerate() {
                pairs[e] = [base, pts[l + 1]];
            }
            let om = &self.lift.values[g];
            for &p in &pts[1..] {
                v.push(
                    self.s.groups[g][p]
                        .iter()
                        .zip(&self.s.groups[g][base])
                        .map(|(a, b)| a - b)
                        .collect(),
                );
                rhs.push(om[base] - om[p]);
                rows_pts.push((g, base, p));
            }
            d += k + 1;
        }
        let mut vol_known = None;
        let solved = match hint {
            Some((num, den)) if den > 0 && solves(&v, &rhs, &num, den) => {
                vol_known = exact::abs_det(&v);
                if vol_known == Some(0) {
                    None
                } else {
                    Some((num, den))
                }
            }
            _ => cramer(&v, &rhs)?,
        };
        let Some((num, den)) = solved else {
            // singular V: a lower face of zero volume means a non-generic lifting
            self.build_lp(lp, &node.chosen);
            return match lp::feasible(lp) {
                LpResult::Infeasible => Ok(None),
                _ => Err(CellError::NonGeneric(
                    "degenerate cell (zero volume)".into(),
                )),
            };
        };
        let w = Witness { num, den };
        // the normal in i64 when it fits (heights in checked i64 then, else i128)
        let w64: Option<(Vec<i64>, i64)> = w
            .num
            .iter()
            .map(|&x| i64::try_from(x).ok())
            .collect::<Option<Vec<i64>>>()
            .zip(i64::try_from(w.den).ok());
        let height = |g: usize, q: usize| -> Option<i128> {
            w64.as_ref()
                .and_then(|(num, den)| self.height_i64(num.iter().map(|&x| Some(x)), *den, g, q))
                .or_else(|| self.height_i128(&w, g, q))
        };
        let mut tie = None;
        let mut d = 0;
        while d < self.slots.len() {
            let (g, _) = self.slots[d];
            let k = self.s.equations[g].len();
            let pts = &node.chosen[d..d + k + 1];
            let hb = height(g, pts[0]).ok_or_else(|| too_large("inner normal height"))?;
            for q in 0..self.s.groups[g].len() {
                let h = height(g, q).ok_or_else(|| too_large("height"))?;
                let on = pts.contains(&q);
                if (on && h != hb) || h < hb {
                    return Ok(None);
                }
                if !on && h == hb && self.perturb {
                    // a cell of the perturbed lifting iff q is above it there
                    self.ties.fetch_add(1, Ordering::Relaxed);
                    if !self.perturbed_above(&v, &node.chosen, d, q)? {
                        return Err(CellError::Internal(format!(
                            "tropical homotopy: point {q} of group {g} is below the cell \
                             {pts:?} in the perturbed lifting"
                        )));
                    }
                } else if !on && h == hb && tie.is_none() {
                    tie = Some(format!("point {q} of group {g} ties with the cell {pts:?}"));
                }
            }
            d += k + 1;
        }
        if let Some(t) = tie {
            return Err(CellError::NonGeneric(t));
        }
        // Beyond u128 no root count is represented (the degrees' product alone is then
        // above 2^128): a limit of the input, said as such.
        let volume = vol_known.or_else(|| exact::abs_det(&v)).ok_or_else(|| {
            CellError::Input(format!(
                "a mixed cell's volume exceeds 2^128: the root count is beyond what pathtrack \
                 represents"
            ))
        })?;
        let coarse_normal = match &self.lift.coarse {
            None => None,
            Some(coarse) => Some(self.coarse_normal(node, &v, &rows_pts, coarse)?),
        };
        Ok(Some(MixedCell {
            pairs,
            inner_normal: w.num,
            denominator: w.den,
            volume,
            coarse_normal,
        }))
    }

    /// For a fully mixed cell (`chosen` = `[a_0, b_0, a_1, b_1, …]` in slot order, `v` its
    /// rows `b_r − a_r`) and a point `q` of the group of slot `d` that ties with it: is `q`
    /// strictly above the cell in the perturbed lifting `ω(p) + ε^{rank p}` (`ε → 0+`, rank
    /// = the group's position in the slot order, then the point's index: the order of the
    /// tropical homotopy's perturbation on the support points)? With `q − a = λ·V` the
    /// height of `q` over the face is `ω_ε(q) − ω_ε(a) − Σ_r λ_r (ω_ε(b_r) − ω_ε(a_r))`,
    /// whose `ω` part is 0 (the tie); the sign of its lowest-rank `ε` coefficient decides
    /// (never 0: `q` is in no pair). Exact: `λ` by Cramer's rule.
    fn perturbed_above(
        &self,
        v: &[Vec<i64>],
        chosen: &[usize],
        d: usize,
        q: usize,
    ) -> Result<bool, CellError> {
        let n = self.n;
        let (g, _) = self.slots[d];
        let a = chosen[d];
        // λ·V = q − a  ⇔  Vᵀ λ = q − a
        let vt: Vec<Vec<i64>> = (0..n)
            .map(|c| v.iter().map(|row| row[c]).collect())
            .collect();
        let rhs: Vec<i64> = self.s.groups[g][q]
            .iter()
            .zip(&self.s.groups[g][a])
            .map(|(x, y)| x - y)
            .collect();
        let (num, den) = cramer(&vt, &rhs)?
            .ok_or_else(|| CellError::Internal("singular cell in the tie check".into()))?;
        let width = self.s.groups.iter().map(|p| p.len()).max().unwrap_or(0);
        let rank = |slot: usize, p: usize| (slot / 2) * width + p;
        let mut c: Vec<(usize, i128)> = Vec::with_capacity(2 * n + 2);
        c.push((rank(d, q), den));
        c.push((rank(d, a), -den));
        for (r, &l) in num.iter().enumerate() {
            if l != 0 {
                c.push((rank(2 * r, chosen[2 * r + 1]), -l));
                c.push((rank(2 * r, chosen[2 * r]), l));
            }
        }
        c.sort_by_key(|e| e.0);
        let mut i = 0;
        while i < c.len() {
            let r = c[i].0;
            let mut sum = 0i128;
            while i < c.len() && c[i].0 == r {
                sum = sum
                    .checked_add(c[i].1)
                    .ok_or_else(|| too_large("tie check"))?;
                i += 1;
            }
            if sum != 0 {
                return Ok(sum > 0);
            }
        }
        Err(CellError::Internal("tie check: zero perturbation".into()))
    }

    /// Solves `V β = −δ` (`δ` the coarse lifting differences) by Cramer's rule and checks
    /// that the cell lies in the coarse lower face at `β` (else the lifting's `big` part
    /// was too small to refine the coarse subdivision).
    fn coarse_normal(
        &self,
        node: &Node,
        v: &[Vec<i64>],
        rows_pts: &[(usize, usize, usize)],
        coarse: &[Vec<i64>],
    ) -> Result<(Vec<i128>, i128), CellError> {
        let n = self.n;
        let delta: Vec<i64> = rows_pts
            .iter()
            .map(|&(g, b, p)| -(coarse[g][p] - coarse[g][b]))
            .collect();
        let det_i = |m: &[Vec<i64>]| -> Result<i128, CellError> {
            match exact::det::<i128>(m) {
                Ok(d) => Ok(d),
                Err(Overflow) => num_traits::ToPrimitive::to_i128(&super::modular::det_modular(m))
                    .ok_or_else(|| too_large("coarse normal")),
            }
        };
        let mut den = det_i(v)?;
        let mut num = Vec::with_capacity(n);
        for j in 0..n {
            let mut m = v.to_vec();
            for (row, &d) in m.iter_mut().zip(&delta) {
                row[j] = d;
            }
            num.push(det_i(&m)?);
        }
        if den < 0 {
            den = -den;
            for x in num.iter_mut() {
                *x = -*x;
            }
        }
        // Coarse lower-face check for every group.
        let mut d = 0;
        while d < self.slots.len() {
            let (g, _) = self.slots[d];
            let k = self.s.equations[g].len();
            let pts = &node.chosen[d..d + k + 1];
            let h = |q: usize| -> Option<i128> {
                let mut s = (coarse[g][q] as i128).checked_mul(den)?;
                for (a, x) in self.s.groups[g][q].iter().zip(&num) {
                    s = s.checked_add((*a as i128).checked_mul(*x)?)?;
                }
                Some(s)
            };
            let hb = h(pts[0]).ok_or_else(|| CellError::Internal("overflow".into()))?;
            for q in 0..self.s.groups[g].len() {
                let hq = h(q).ok_or_else(|| CellError::Internal("overflow".into()))?;
                if hq < hb || (pts.contains(&q) && hq != hb) {
                    return Err(CellError::LiftingTooSmall);
                }
            }
            d += k + 1;
        }
        Ok((num, den))
    }
}

fn overflow(_: tropical::Overflow) -> CellError {
    CellError::Internal("tropical homotopy: integer overflow".into())
}

/// One step of the tropical homotopy as a node expansion of [`ordered_dfs`]: the next
/// states, or a target cell checked exactly by [`Ctx::leaf`] before it is emitted.
struct TropicalSteps<'c, 'a> {
    ctx: &'c Ctx<'a>,
    hom: &'c Homotopy,
}

impl Expand<tropical::State, MixedCell, CellError> for TropicalSteps<'_, '_> {
    /// The leaf's LP, the count of steps, the homotopy's buffers.
    type Scratch = (Lp, u64, tropical::Scratch);
    fn scratch(&self) -> Self::Scratch {
        (Lp::new(self.ctx.n), 0, tropical::Scratch::default())
    }
    fn expand(
        &self,
        (lp, steps, scr): &mut Self::Scratch,
        st: tropical::State,
        children: &mut Vec<tropical::State>,
        emit: &mut dyn FnMut(MixedCell) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, CellError> {
        *steps += 1;
        let r = self.hom.step(&st, scr, children).map_err(overflow);
        scr.recycle(st);
        match r? {
            None => {}
            Some(tropical::TargetCell { pairs, num, den }) => {
                let ctx = self.ctx;
                // slot order: the groups in search order, two points each
                let node = Node {
                    chosen: ctx.slots.iter().map(|&(g, pos)| pairs[g][pos]).collect(),
                    tab: None,
                    witness: None,
                    mask: Vec::new(),
                };
                match ctx.leaf(&node, lp, Some((num, den)))? {
                    Some(cell) => return Ok(emit(cell)),
                    None => {
                        ctx.rejected_leaves.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
        Ok(ControlFlow::Continue(()))
    }
    fn finish(&self, (_, steps, _): Self::Scratch) {
        self.ctx.steps.fetch_add(steps, Ordering::Relaxed);
    }
}

/// Exact `det` on `i128`, `BigInt` when that overflows.
fn det_i128(m: &[Vec<i64>]) -> Result<i128, CellError> {
    if let Some(d) = exact::det_i64(m) {
        return Ok(d as i128);
    }
    match exact::det::<i128>(m) {
        Ok(d) => Ok(d),
        Err(Overflow) => exact::det::<BigInt>(m)
            .ok()
            .and_then(|d| num_traits::ToPrimitive::to_i128(&d))
            .ok_or_else(|| too_large("determinant")),
    }
}

/// Does `x = num/den` solve `V x = r` (exact, checked)?
fn solves(v: &[Vec<i64>], r: &[i64], num: &[i128], den: i128) -> bool {
    v.iter().zip(r).all(|(row, &ri)| {
        let mut s = Some(0i128);
        for (&a, &x) in row.iter().zip(num) {
            s = s.and_then(|s| s.checked_add((a as i128).checked_mul(x)?));
        }
        s.is_some() && s == (ri as i128).checked_mul(den)
    })
}

/// Solves `V x = r` exactly by Cramer's rule: `x = num / den` reduced, `den > 0`; `None`
/// when `V` is singular.
fn cramer(v: &[Vec<i64>], r: &[i64]) -> Result<Option<(Vec<i128>, i128)>, CellError> {
    let mut den = det_i128(v)?;
    if den == 0 {
        return Ok(None);
    }
    let mut num = Vec::with_capacity(v.len());
    let mut m = v.to_vec();
    for j in 0..v.len() {
        for (row, (orig, &x)) in m.iter_mut().zip(v.iter().zip(r)) {
            row.copy_from_slice(orig);
            row[j] = x;
        }
        num.push(det_i128(&m)?);
    }
    if den < 0 {
        den = -den;
        num.iter_mut().for_each(|x| *x = -*x);
    }
    let mut g = den;
    for &x in &num {
        g = gcd(g, x);
    }
    if g > 1 {
        num.iter_mut().for_each(|x| *x /= g);
        den /= g;
    }
    Ok(Some((num, den)))
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

/// Keeps the last few feasible points found at a node (each is tried as a shortcut).
fn remember(list: &mut Vec<Witness>, w: Witness) {
    const KEEP: usize = 8;
    if list.len() == KEEP {
        list.remove(0);
    }
    list.push(w);
}

/// Builds the relation table (one LP per pair of lower vertices, most settled by the
/// first vertex's witness).
fn relation_table(ctx: &mut Ctx) -> Result<u64, CellError> {
    let s = ctx.s;
    let n = ctx.n;
    let total = s.num_points();
    let mut owner = Vec::with_capacity(total);
    for (g, pts) in s.groups.iter().enumerate() {
        for i in 0..pts.len() {
            owner.push((g, i));
        }
    }
    let words = ctx.words;
    let lps = AtomicU64::new(0);
    let c: &Ctx = ctx;
    let rows: Vec<Result<Vec<u64>, CellError>> = (0..total)
        .into_par_iter()
        .map(|p| {
            let (g, i) = owner[p];
            let mut lp = Lp::new(n);
            let mut bits = vec![0u64; words];
            c.push_group(&mut lp, g, i, &[]);
            lps.fetch_add(1, Ordering::Relaxed);
            let wp = match lp::feasible(&lp) {
                LpResult::Infeasible => return Ok(bits),
                LpResult::Dependent => unreachable!("no equalities"),
                LpResult::Feasible(w) => w,
            };
            bits[p / 64] |= 1 << (p % 64);
            for (q, &(h, j)) in owner.iter().enumerate() {
                if q == p {
                    continue;
                }
                // witness shortcut
                let ok_short = wp.as_ref().is_some_and(|w| {
                    let hq = c.height(w, h, j);
                    if h == g {
                        hq.is_some() && hq == c.height(w, g, i)
                    } else {
                        hq.is_some_and(|hq| {
                            (0..s.groups[h].len())
                                .all(|r| matches!(c.height(w, h, r), Some(x) if x >= hq))
                        })
                    }
                });
                let ok = ok_short || {
                    lp.clear();
                    if h == g {
                        c.push_group(&mut lp, g, i, &[j]);
                    } else {
                        c.push_group(&mut lp, g, i, &[]);
                        c.push_group(&mut lp, h, j, &[]);
                    }
                    lps.fetch_add(1, Ordering::Relaxed);
                    match lp::feasible(&lp) {
                        LpResult::Infeasible => false,
                        LpResult::Feasible(_) => true,
                        LpResult::Dependent => {
                            return Err(CellError::NonGeneric(format!(
                                "points {i} and {j} of group {g}: dependent edge"
                            )))
                        }
                    }
                };
                if ok {
                    bits[q / 64] |= 1 << (q % 64);
                }
            }
            Ok(bits)
        })
        .collect();
    let mut compat = Vec::with_capacity(total);
    for r in rows {
        compat.push(r?);
    }
    // Keep the table symmetric (both directions were decided by equivalent LPs).
    ctx.compat = compat;
    Ok(lps.into_inner())
}

/// Runs job `j`, handing its cells to the consumer in order.
type JobRunner<'r> = dyn Fn(usize, &mut dyn FnMut(MixedCell) -> ControlFlow<()>) -> Result<(), CellError>
    + Sync
    + 'r;

/// A batch of cells of job `job`; `last` marks the job's final batch.
struct Batch {
    job: usize,
    cells: Vec<MixedCell>,
    last: bool,
}

/// Runs the jobs on `threads` scoped threads and hands their cells to `deliver` on the
/// calling thread **in job order** (each job's cells in depth-first order), so the sequence
/// of cells is the same as with one thread. Jobs are claimed in increasing order; a worker
/// waits before claiming a job more than `WINDOW` jobs ahead of the one being delivered, so
/// at most that many jobs' cells are buffered.
fn run_ordered(
    jobs: usize,
    threads: usize,
    stop: &AtomicBool,
    run_job: &JobRunner,
    deliver: &mut dyn FnMut(MixedCell) -> ControlFlow<()>,
) -> Result<(), CellError> {
    use std::collections::BTreeMap;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Condvar;
    const CHUNK: usize = 1024;
    let window = 4 * threads;
    let next_claim = AtomicUsize::new(0);
    // index of the job whose cells are being delivered
    let front: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());
    let error: Mutex<Option<(usize, CellError)>> = Mutex::new(None);
    let (tx, rx) = std::sync::mpsc::channel::<Batch>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next_claim, front, error) = (&next_claim, &front, &error);
            scope.spawn(move || {
                loop {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let j = next_claim.fetch_add(1, Ordering::SeqCst);
                    if j >= jobs {
                        return;
                    }
                    {
                        let mut f = front.0.lock().unwrap();
                        while j >= *f + window && !stop.load(Ordering::Relaxed) {
                            f = front.1.wait(f).unwrap();
                        }
                    }
                    let mut buf = Vec::new();
                    let mut emit = |c: MixedCell| {
                        buf.push(c);
                        if buf.len() >= CHUNK {
                            let cells = std::mem::take(&mut buf);
                            if tx
                                .send(Batch {
                                    job: j,
                                    cells,
                                    last: false,
                                })
                                .is_err()
                            {
                                return ControlFlow::Break(());
                            }
                        }
                        ControlFlow::Continue(())
                    };
                    let r = run_job(j, &mut emit);
                    if let Err(e) = r {
                        let mut g = error.lock().unwrap();
                        if g.as_ref().is_none_or(|(k, _)| j < *k) {
                            *g = Some((j, e));
                        }
                        drop(g);
                        // the consumer stops at this job
                        let _ = tx.send(Batch {
                            job: j,
                            cells: buf,
                            last: true,
                        });
                        return;
                    }
                    if tx
                        .send(Batch {
                            job: j,
                            cells: buf,
                            last: true,
                        })
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, (Vec<Vec<MixedCell>>, bool)> = BTreeMap::new();
        let mut cur = 0usize;
        let advance = |cur: usize| {
            *front.0.lock().unwrap() = cur;
            front.1.notify_all();
        };
        'recv: for batch in rx.iter() {
            let e = pending
                .entry(batch.job)
                .or_insert_with(|| (Vec::new(), false));
            e.0.push(batch.cells);
            e.1 |= batch.last;
            // deliver everything that is now in order
            while let Some((chunks, last)) = pending.get_mut(&cur) {
                for chunk in std::mem::take(chunks) {
                    for cell in chunk {
                        if deliver(cell).is_break() {
                            stop.store(true, Ordering::Relaxed);
                            advance(usize::MAX / 2);
                            break 'recv;
                        }
                    }
                }
                if !*last {
                    break;
                }
                pending.remove(&cur);
                if matches!(&*error.lock().unwrap(), Some((k, _)) if *k == cur) {
                    stop.store(true, Ordering::Relaxed);
                    advance(usize::MAX / 2);
                    break 'recv;
                }
                cur += 1;
                advance(cur);
            }
        }
        drop(rx);
    });
    if let Some((_, e)) = error.into_inner().unwrap() {
        return Err(e);
    }
    Ok(())
}

/// Streams the fine mixed cells of the subdivision of `supports` induced by `lifting`,
/// using `threads` worker threads (0: rayon's default). The sequence of cells (set and
/// order) is deterministic and independent of `threads`: the tropical traversal is cut
/// into jobs kept in stream order (`ordered_dfs.rs`), the tree search into a fixed list of
/// jobs, and the cells are delivered in job order. `on_cell` runs on the calling thread; returning
/// `ControlFlow::Break` stops the enumeration (`CellStats::stopped`).
///
/// Errors: [`CellError::NonGeneric`] when the lifting is not generic (redraw it),
/// [`CellError::LiftingTooSmall`] for a stable lifting whose `big` part is too small.
pub fn mixed_cells(
    supports: &Supports,
    lifting: &Lifting,
    threads: usize,
    on_cell: &mut dyn FnMut(MixedCell) -> ControlFlow<()>,
) -> Result<CellStats, CellError> {
    mixed_cells_in(supports, lifting, threads, SearchMode::Tropical, on_cell)
}

/// The fine mixed cells of the lexicographically perturbed lifting `ω(p) + ε^{rank p}`
/// (`ε → 0+`; rank: the group's position in the level order, fewest points first, then
/// the point's index), which is generic whatever `ω`: for fully mixed supports (the
/// tropical homotopy, which decides its own ties by this perturbation) an exact tie of `ω`
/// at a cell is resolved by the perturbation, exactly, instead of being a
/// [`CellError::NonGeneric`] error; semi-mixed supports (tree search) still report it.
/// Counted in [`CellStats::ties`].
///
/// The cells are those of [`mixed_cells`] when `ω` has no tie. A cell met by a tie is a
/// cell of the perturbed lifting but not of `ω`: its `inner_normal` is `ω`'s (the limit
/// `ε → 0`), at which some other point of a support lies on the cell's face, so its
/// binomial system is not `ω`'s start system. The volumes sum to the mixed volume (any
/// generic lifting gives it): use this for counting, [`mixed_cells`] for start systems.
pub fn mixed_cells_perturbed(
    supports: &Supports,
    lifting: &Lifting,
    threads: usize,
    on_cell: &mut dyn FnMut(MixedCell) -> ControlFlow<()>,
) -> Result<CellStats, CellError> {
    enumerate(
        supports,
        lifting,
        threads,
        SearchMode::Tropical,
        true,
        on_cell,
    )
}

/// [`mixed_cells`] with an explicit [`SearchMode`] (the exact and stress modes exist for
/// cross-checks).
pub fn mixed_cells_in(
    supports: &Supports,
    lifting: &Lifting,
    threads: usize,
    mode: SearchMode,
    on_cell: &mut dyn FnMut(MixedCell) -> ControlFlow<()>,
) -> Result<CellStats, CellError> {
    enumerate(supports, lifting, threads, mode, false, on_cell)
}

fn enumerate(
    supports: &Supports,
    lifting: &Lifting,
    threads: usize,
    mode: SearchMode,
    perturb: bool,
    on_cell: &mut dyn FnMut(MixedCell) -> ControlFlow<()>,
) -> Result<CellStats, CellError> {
    let start = std::time::Instant::now();
    let s = supports;
    let n = s.n;
    if lifting.values.len() != s.groups.len()
        || lifting
            .values
            .iter()
            .zip(&s.groups)
            .any(|(l, g)| l.len() != g.len())
    {
        return Err(CellError::Input(
            "lifting does not match the supports".into(),
        ));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("cells-{i}"))
        .build()
        .map_err(|e| CellError::Internal(format!("thread pool: {e}")))?;
    let threads = pool.current_num_threads();
    // Group order: fewest points first (small branching near the root).
    let mut order: Vec<usize> = (0..s.groups.len()).collect();
    order.sort_by_key(|&g| (s.groups[g].len(), g));
    let mut slots = Vec::new();
    for &g in &order {
        for pos in 0..=s.equations[g].len() {
            slots.push((g, pos));
        }
    }
    let mut rank = vec![0; s.groups.len()];
    for (r, &g) in order.iter().enumerate() {
        rank[g] = r;
    }
    let mut row_base = vec![0; s.groups.len()];
    let mut rows = 0;
    for &g in &order {
        row_base[g] = rows;
        rows += s.groups[g].len();
    }
    let mut offset = Vec::with_capacity(s.groups.len());
    let mut acc = 0;
    for g in &s.groups {
        offset.push(acc);
        acc += g.len();
    }
    let words = acc.div_ceil(64);
    let mut ctx = Ctx {
        n,
        s,
        lift: lifting,
        slots,
        offset,
        words,
        compat: Vec::new(),
        row_base,
        rank,
        lp_calls: AtomicU64::new(0),
        shortcuts: AtomicU64::new(0),
        undecided: AtomicU64::new(0),
        rejected_leaves: AtomicU64::new(0),
        steps: AtomicU64::new(0),
        ties: AtomicU64::new(0),
        perturb: false,
        lookahead: true,
        mode,
    };
    let stop = AtomicBool::new(false);
    let mut stats = CellStats {
        threads,
        ..Default::default()
    };
    let mut deliver = |cell: MixedCell, stats: &mut CellStats| -> ControlFlow<()> {
        stats.cells += 1;
        // Saturating: a sum beyond 2^128 − 1 is reported as that (no path count reaches it).
        stats.mixed_volume = stats.mixed_volume.saturating_add(cell.volume);
        if cell.is_stable() {
            stats.stable_volume = stats.stable_volume.saturating_add(cell.volume);
        }
        if on_cell(cell).is_break() {
            stats.stopped = true;
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let target = 64 * threads;
    let hom = if mode == SearchMode::Tropical {
        // level order = search order (fewest points first: measured fewest steps on
        // cyclic-10, chandra-12, noon-8 against input / reversed orders)
        Homotopy::new(s, lifting, &order)
    } else {
        None
    };
    // the tie resolution matches the homotopy's perturbation (one pair per group)
    ctx.perturb = perturb && hom.is_some();
    let mut relation_lps = 0;
    if let Some(hom) = &hom {
        // one traversal from the root, split between the threads by work donation
        let steps = TropicalSteps { ctx: &ctx, hom };
        let limits = JobLimits::for_threads(threads);
        ordered_dfs(hom.root(), threads, limits, &stop, &steps, &mut |c| {
            deliver(c, &mut stats)
        })?;
    } else {
        relation_lps = pool.install(|| relation_table(&mut ctx))?;
        let ctx = &ctx;
        let mut root_mask = vec![0u64; words];
        for p in 0..acc {
            if ctx.compat[p][p / 64] >> (p % 64) & 1 == 1 {
                root_mask[p / 64] |= 1 << (p % 64);
            }
        }
        let root = Node {
            chosen: Vec::new(),
            tab: (mode != SearchMode::Exact).then(|| Box::new(Tableau::new(n, &ctx.rank))),
            witness: None,
            mask: root_mask,
        };
        // Split the tree: expand breadth-first until there are enough independent jobs.
        let mut jobs = vec![root];
        let mut lp = Lp::new(n);
        while jobs.len() < target && !jobs.is_empty() && jobs[0].chosen.len() + 1 < ctx.slots.len()
        {
            let mut next = Vec::new();
            for j in &jobs {
                next.extend(ctx.children(j, &mut lp)?);
            }
            jobs = next;
        }
        if threads <= 1 {
            // Sequential: depth-first over the jobs in order, cells straight to the consumer.
            for job in &jobs {
                let mut emit = |c: MixedCell| deliver(c, &mut stats);
                if ctx.dfs(job, &mut lp, &mut emit, &stop)?.is_break() {
                    break;
                }
            }
        } else {
            let run = |j: usize, emit: &mut dyn FnMut(MixedCell) -> ControlFlow<()>| {
                let mut lp = Lp::new(n);
                ctx.dfs(&jobs[j], &mut lp, emit, &stop).map(|_| ())
            };
            run_ordered(jobs.len(), threads, &stop, &run, &mut |c| {
                deliver(c, &mut stats)
            })?;
        }
    }
    stats.lp_calls = ctx.lp_calls.load(Ordering::Relaxed);
    stats.shortcuts = ctx.shortcuts.load(Ordering::Relaxed);
    stats.relation_lps = relation_lps;
    stats.undecided = ctx.undecided.load(Ordering::Relaxed);
    stats.rejected_leaves = ctx.rejected_leaves.load(Ordering::Relaxed);
    stats.steps = ctx.steps.load(Ordering::Relaxed);
    stats.ties = ctx.ties.load(Ordering::Relaxed);
    stats.seconds = start.elapsed().as_secs_f64();
    Ok(stats)
}

/// Exact integer arithmetic out of range (exponents or liftings so large that a
/// determinant or height passes 2^127): a limit of the input, said as such (exit code 2).
fn too_large(what: &str) -> CellError {
    CellError::Input(format!(
        "exponents too large for exact arithmetic: a {what} exceeds 2^127"
    ))
}
