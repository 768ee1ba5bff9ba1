//! Mixed cells by tropical homotopy continuation with regeneration (Jensen, "Tropical
//! homotopy continuation", arXiv:1601.02818, the method of gfan's `_mixedvolume`),
//! re-derived here for exact integer arithmetic. Fully mixed supports only (one equation
//! per group); see docs/mixed-cells.md.
//!
//! **Configurations.** Level order `A_0, …, A_{n−1}` (each support translated into the
//! positive orthant, `d_k` its largest coordinate sum, so `A_k ⊂ conv(d_k Δ)`). At level
//! `i` the system is `(A_0, …, A_{i−1}, d_iΔ ∪ A_i, Δ, …, Δ)`: the simplex points of
//! configuration `i` are lifted `d_i·h + t`, everything else has a fixed lift (`ω` on the
//! `A`'s, `h` on the simplices). At `t = −∞` the cells are those of level `i − 1` (the
//! points of `A_i` lie above the lifted `d_iΔ`); at `t = +∞` the cells whose pair in
//! configuration `i` avoids the simplex are the cells of `(A_0, …, A_i, Δ, …)`, the start of
//! level `i + 1`. Level 0 starts from the single cell of `(d_0Δ, Δ, …, Δ)`: the staircase
//! `{w_k, w_{k+1}}` (lifted 0, the other simplex points lifted at random positive heights).
//!
//! **A cell** is a pair `(a_k, b_k)` per configuration; `V` has rows `v_k = b_k − a_k`,
//! `D = det V` and `M = D·V⁻¹` (integer: the adjugate), so `B(x) = x·M` gives `x` in the
//! basis `v` times `D`. The heights at the cell's normal are `D·(⟨α, x⟩ + ω(x)) =
//! D·ω(x) + ⟨x, Dα⟩` with `Dα = −M·Ω`, `Ω_k = ω(b_k) − ω(a_k)`; the cell is valid while
//! every other point of configuration `k` is strictly above `a_k`. With `ω_t = ω + tτ`
//! each of these values is linear in `t`; the cell lives until the first value reaching 0
//! (exact rational comparison of `v/(−s)`, ties broken by the symbolic perturbation
//! `ω(p) + ε^{rank p}`, so the homotopy is generic).
//!
//! **Event** (point `x` of configuration `k` reaches the face of `{a, b}`): with
//! `x − a = λ·V`, the candidates are `{a, x}` (`det = Dλ_k`, alive above iff `λ_k > 0`) and
//! `{x, b}` (`det = D(1 − λ_k)`, alive above iff `λ_k < 1`). Both alive: the cell splits;
//! one alive and the other singular: it continues; one alive and the other a cell living
//! below: two cells merge, and only the one containing the smaller point of the merged
//! cell's pair continues (the other path ends), so every cell of `t = +∞` is reached once.
//! A pivot replaces row `k` of `V` by `m·V/D` (`m = Dλ` or `De_k − Dλ`): `D' = m_k`,
//! column `k` of `M` unchanged, column `j` becomes `(m_k M_j − m_j M_k)/D` (exact division,
//! Sylvester's identity).
//!
//! Every decision is exact integer arithmetic (`i64` for `M`, whose entries are minors of
//! the point matrices and bounded by Hadamard's bound, checked before the start; `i128`
//! for heights and comparisons, `BigInt` when a product overflows). The cells found are
//! re-checked exactly by the caller.

use super::lifting::{Lifting, Supports};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;

/// A cell of the homotopy at some level (the state of the traversal).
#[derive(Clone, Debug)]
pub(super) struct State {
    level: u32,
    d: i64,
    /// Per configuration: point indices within the configuration (`0..=n` simplex points,
    /// `n + 1 + q` point `q` of the support).
    pairs: Vec<[u32; 2]>,
    /// `M = D·V⁻¹`, row-major `n × n`.
    m: Vec<i64>,
}

/// What follows a state.
pub(super) enum Step {
    /// The next states in traversal order (none: the path ends).
    Next(Vec<State>),
    /// A mixed cell of the target.
    Cell(TargetCell),
}

/// A mixed cell found by the homotopy.
#[derive(Clone, Debug)]
pub(super) struct TargetCell {
    /// Per group, the pair as indices into the group (increasing).
    pub(super) pairs: Vec<[usize; 2]>,
    /// `α = num/den` (reduced, `den > 0`), for the caller to check.
    pub(super) num: Vec<i128>,
    pub(super) den: i128,
}

/// Arithmetic left its checked range (not expected after [`Homotopy::new`]'s bound check).
#[derive(Debug)]
pub(super) struct Overflow;

pub(super) struct Homotopy {
    n: usize,
    /// Group of each configuration (level order).
    group: Vec<usize>,
    /// Translated support points of each configuration, as nonzero coordinates.
    pts: Vec<Vec<Vec<(u32, i64)>>>,
    omega: Vec<Vec<i128>>,
    deg: Vec<i64>,
    /// Lifts of the (unscaled) simplex points of each configuration.
    h: Vec<Vec<i128>>,
    /// Rank stride of the symbolic perturbation (largest configuration).
    stride: usize,
    /// The active points of every configuration at every level: `tab[level][k]`.
    tab: Vec<Vec<Active>>,
    /// Largest `|x|₁` of an active point at each level.
    l1max: Vec<u64>,
}

/// The active points of one configuration at one level, with their data at that level.
#[derive(Default)]
struct Active {
    idx: Vec<u32>,
    lift: Vec<i128>,
    tau: Vec<i128>,
    /// Nonzero coordinates of point `i`: `coords[start[i]..start[i + 1]]`.
    start: Vec<usize>,
    coords: Vec<(u32, i64)>,
    /// Position of each point index in this list (`u32::MAX`: inactive).
    pos: Vec<u32>,
}

impl Active {
    #[inline]
    fn coords(&self, i: usize) -> &[(u32, i64)] {
        &self.coords[self.start[i]..self.start[i + 1]]
    }
}

/// Seed of the simplex lifts (fixed: the traversal order is a function of the input).
const SIMPLEX_SEED: u64 = 0x7a0b_11c5;
/// Largest Hadamard bound of the minors accepted (entries of `M` stay in `i64`, products in
/// `i128`).
const MAX_MINOR: f64 = (1u64 << 55) as f64;

impl Homotopy {
    /// The homotopy of fully mixed supports in the given level order, or `None` when the
    /// method does not apply (a group used by several equations, a support of one point,
    /// minors or heights beyond the checked ranges).
    pub(super) fn new(s: &Supports, lift: &Lifting, order: &[usize]) -> Option<Homotopy> {
        let n = s.n;
        if n == 0 || s.groups.len() != n || s.equations.iter().any(|e| e.len() != 1) {
            return None;
        }
        let mut pts: Vec<Vec<Vec<(u32, i64)>>> = Vec::with_capacity(n);
        let mut omega = Vec::with_capacity(n);
        let mut deg = Vec::with_capacity(n);
        let mut bound = 1.0f64;
        let mut wmax = 0.0f64;
        for &g in order {
            let grp = &s.groups[g];
            if grp.len() < 2 {
                return None;
            }
            let shift: Vec<i64> = (0..n)
                .map(|j| grp.iter().map(|p| p[j]).min().unwrap())
                .collect();
            let shifted: Vec<Vec<i64>> = grp
                .iter()
                .map(|p| p.iter().zip(&shift).map(|(a, b)| a - b).collect())
                .collect();
            let d = shifted.iter().map(|p| p.iter().sum::<i64>()).max().unwrap();
            if d <= 0 {
                return None;
            }
            // Hadamard: every minor is at most the product over configurations of the
            // longest vector (a point, a difference of points, or a scaled simplex edge)
            let norm = |p: &[i64]| p.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt();
            let mut r = (2.0f64).sqrt() * d as f64;
            for p in &shifted {
                r = r.max(norm(p));
                for q in &shifted {
                    let diff: Vec<i64> = p.iter().zip(q).map(|(a, b)| a - b).collect();
                    r = r.max(norm(&diff));
                }
            }
            bound *= r.max(1.0);
            let om: Vec<i128> = lift.values[g].iter().map(|&w| w as i128).collect();
            for &w in &om {
                wmax = wmax.max((w as f64).abs());
            }
            pts.push(
                shifted
                    .iter()
                    .map(|p| {
                        p.iter()
                            .enumerate()
                            .filter(|(_, &x)| x != 0)
                            .map(|(j, &x)| (j as u32, x))
                            .collect()
                    })
                    .collect(),
            );
            omega.push(om);
            deg.push(d);
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(SIMPLEX_SEED);
        let h: Vec<Vec<i128>> = (0..n)
            .map(|k| {
                (0..=n)
                    .map(|w| {
                        if w == k || w == k + 1 {
                            0
                        } else {
                            rng.random_range(1..1i64 << 20) as i128
                        }
                    })
                    .collect()
            })
            .collect();
        let dmax = *deg.iter().max().unwrap() as f64;
        wmax = wmax.max(dmax * (1u64 << 20) as f64);
        // heights: |D·ω| + Σ |B_j Ω_j| ≤ bound·(n + 2)·2·wmax, kept below 2^100
        if bound >= MAX_MINOR || bound * (n as f64 + 2.0) * 2.0 * wmax >= 2f64.powi(100) {
            return None;
        }
        let stride = pts.iter().map(|p| p.len()).max().unwrap() + n + 1;
        let mut hom = Homotopy {
            n,
            group: order.to_vec(),
            pts,
            omega,
            deg,
            h,
            stride,
            tab: Vec::new(),
            l1max: Vec::new(),
        };
        hom.tab = (0..n)
            .map(|lv| (0..n).map(|k| hom.active_points(k, lv)).collect())
            .collect();
        hom.l1max = hom
            .tab
            .iter()
            .map(|lv| {
                lv.iter()
                    .flat_map(|a| (0..a.idx.len()).map(move |i| a.coords(i)))
                    .map(|c| c.iter().map(|&(_, x)| x.unsigned_abs()).sum::<u64>())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        Some(hom)
    }

    fn active_points(&self, k: usize, lv: usize) -> Active {
        let size = self.pts[k].len() + self.n + 1;
        let mut a = Active {
            pos: vec![u32::MAX; size],
            start: vec![0],
            ..Default::default()
        };
        for x in 0..size as u32 {
            if !self.active(k, x as usize, lv) {
                continue;
            }
            a.pos[x as usize] = a.idx.len() as u32;
            a.idx.push(x);
            a.lift.push(self.lift(k, x, lv));
            a.tau.push(self.tau(k, x, lv));
            self.for_coords(k, x, lv, |j, c| a.coords.push((j as u32, c)));
            a.start.push(a.coords.len());
        }
        a
    }

    /// The start: the staircase cell of `(d_0Δ, Δ, …, Δ)` at level 0.
    pub(super) fn root(&self) -> State {
        let n = self.n;
        let d0 = self.deg[0];
        // V rows: d0·e_0, e_1 − e_0, …; V⁻¹ of the unscaled V is lower triangular of ones
        let mut m = vec![0i64; n * n];
        for r in 0..n {
            for c in 0..=r {
                m[r * n + c] = if c == 0 { 1 } else { d0 };
            }
        }
        State {
            level: 0,
            d: d0,
            pairs: (0..n).map(|k| [k as u32, k as u32 + 1]).collect(),
            m,
        }
    }

    fn is_simplex(&self, idx: u32) -> bool {
        idx as usize <= self.n
    }

    fn active(&self, k: usize, idx: usize, lv: usize) -> bool {
        match k.cmp(&lv) {
            Ordering::Less => idx > self.n,
            Ordering::Equal => true,
            Ordering::Greater => idx <= self.n,
        }
    }

    fn scale(&self, k: usize, lv: usize) -> i64 {
        if k == lv {
            self.deg[k]
        } else {
            1
        }
    }

    /// Calls `f(j, x_j)` for the nonzero coordinates of point `idx` of configuration `k`.
    #[inline]
    fn for_coords(&self, k: usize, idx: u32, lv: usize, mut f: impl FnMut(usize, i64)) {
        let idx = idx as usize;
        if idx <= self.n {
            if idx > 0 {
                f(idx - 1, self.scale(k, lv));
            }
        } else {
            for &(j, x) in &self.pts[k][idx - self.n - 1] {
                f(j as usize, x);
            }
        }
    }

    /// `ω` (without `t`) of point `idx` of configuration `k` at level `lv`.
    fn lift(&self, k: usize, idx: u32, lv: usize) -> i128 {
        let idx = idx as usize;
        if idx <= self.n {
            self.h[k][idx] * self.scale(k, lv) as i128
        } else {
            self.omega[k][idx - self.n - 1]
        }
    }

    /// `τ`: 1 on the moving simplex points.
    fn tau(&self, k: usize, idx: u32, lv: usize) -> i128 {
        (k == lv && self.is_simplex(idx)) as i128
    }

    /// `Λ = (x − a)·M = D·λ` for point `x` of configuration `k` (base `a` of its pair).
    fn lambda(&self, st: &State, k: usize, x: u32) -> Vec<i128> {
        let n = self.n;
        let lv = st.level as usize;
        let mut l = vec![0i128; n];
        self.for_coords(k, x, lv, |j, c| {
            for (li, &mv) in l.iter_mut().zip(&st.m[j * n..j * n + n]) {
                *li += c as i128 * mv as i128;
            }
        });
        self.for_coords(k, st.pairs[k][0], lv, |j, c| {
            for (li, &mv) in l.iter_mut().zip(&st.m[j * n..j * n + n]) {
                *li -= c as i128 * mv as i128;
            }
        });
        l
    }

    /// Coefficients of `σ(φ(x) − φ(a_k))` in the perturbation `ω(p) + s_p ε^{rank p}`,
    /// sorted by rank.
    fn eps_coeffs(&self, st: &State, k: usize, x: u32) -> Vec<(usize, i128)> {
        let lv = st.level as usize;
        let d = st.d as i128;
        let sg = d.signum();
        let lam = self.lambda(st, k, x);
        let rank = |c: usize, idx: u32| c * self.stride + idx as usize;
        let sc = |c: usize, idx: u32| {
            if self.is_simplex(idx) {
                self.scale(c, lv) as i128
            } else {
                1
            }
        };
        let mut v: Vec<(usize, i128)> = Vec::with_capacity(2 * self.n + 2);
        v.push((rank(k, x), d * sc(k, x)));
        let a = st.pairs[k][0];
        v.push((rank(k, a), -d * sc(k, a)));
        for (j, &[aj, bj]) in st.pairs.iter().enumerate() {
            if lam[j] != 0 {
                v.push((rank(j, bj), -lam[j] * sc(j, bj)));
                v.push((rank(j, aj), lam[j] * sc(j, aj)));
            }
        }
        v.sort_by_key(|e| e.0);
        let mut out: Vec<(usize, i128)> = Vec::with_capacity(v.len());
        for (r, c) in v {
            match out.last_mut() {
                Some(l) if l.0 == r => l.1 += c,
                _ => out.push((r, c)),
            }
        }
        out.retain(|e| e.1 != 0);
        for e in out.iter_mut() {
            e.1 *= sg;
        }
        out
    }

    /// Does the event of `(k1, x1)` (value `v1`, slope `−s1`) come before that of `(k2, x2)`?
    #[allow(clippy::too_many_arguments)]
    fn earlier(
        &self,
        st: &State,
        (k1, x1, v1, s1): (usize, u32, i128, i128),
        (k2, x2, v2, s2): (usize, u32, i128, i128),
    ) -> bool {
        match cmp_frac(v1, s1, v2, s2) {
            Ordering::Less => return true,
            Ordering::Greater => return false,
            Ordering::Equal => {}
        }
        // equal times: the symbolic perturbation decides (the vectors differ at x1)
        let c1 = self.eps_coeffs(st, k1, x1);
        let c2 = self.eps_coeffs(st, k2, x2);
        let (mut i, mut j) = (0, 0);
        loop {
            let r1 = c1.get(i).map_or(usize::MAX, |e| e.0);
            let r2 = c2.get(j).map_or(usize::MAX, |e| e.0);
            let r = r1.min(r2);
            assert!(r != usize::MAX, "distinct events have distinct circuits");
            let a = if r1 == r { c1[i].1 } else { 0 };
            let b = if r2 == r { c2[j].1 } else { 0 };
            match cmp_frac(a, s1, b, s2) {
                Ordering::Less => return true,
                Ordering::Greater => return false,
                Ordering::Equal => {}
            }
            i += (r1 == r) as usize;
            j += (r2 == r) as usize;
        }
    }

    /// One step of the traversal from `st`: the next cell(s) of the homotopy, a level
    /// change, or a cell of the target.
    pub(super) fn step(&self, st: &State) -> Result<Step, Overflow> {
        let n = self.n;
        let lv = st.level as usize;
        let d = st.d as i128;
        let sg = d.signum();
        let [pa, pb] = st.pairs[lv];
        let t_lv = self.tau(lv, pb, lv) - self.tau(lv, pa, lv);
        // Dα = −M·Ω (computed once, when a value is needed)
        let mut dalpha: Option<Vec<i128>> = None;
        let dalpha_of = || -> Vec<i128> {
            let om: Vec<i128> = st
                .pairs
                .iter()
                .enumerate()
                .map(|(j, &[a, b])| self.lift(j, b, lv) - self.lift(j, a, lv))
                .collect();
            (0..n)
                .map(|r| {
                    -st.m[r * n..r * n + n]
                        .iter()
                        .zip(&om)
                        .map(|(&mv, &o)| mv as i128 * o)
                        .sum::<i128>()
                })
                .collect()
        };
        // column `lv` of M (coordinate `lv` of B(x) = x·M), in i64 when |x|₁·max|M| < 2^62
        let col: Vec<i64> = if t_lv != 0 {
            (0..n).map(|r| st.m[r * n + lv]).collect()
        } else {
            Vec::new()
        };
        let cmax = col.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0) as u128;
        let narrow = cmax * self.l1max[lv] as u128 <= 1 << 62;
        let dotc = |c: &[(u32, i64)]| -> i128 {
            if narrow {
                c.iter().map(|&(j, x)| x * col[j as usize]).sum::<i64>() as i128
            } else {
                c.iter()
                    .map(|&(j, x)| x as i128 * col[j as usize] as i128)
                    .sum()
            }
        };
        let dotv = |c: &[(u32, i64)], v: &[i128]| -> i128 {
            c.iter().map(|&(j, x)| x as i128 * v[j as usize]).sum()
        };
        // best event so far: (configuration, point, value, −slope, value/−slope as a float)
        let mut best: Option<(usize, u32, i128, i128, f64)> = None;
        for k in 0..n {
            if t_lv == 0 && k != lv {
                // slopes vanish outside the moving configuration
                continue;
            }
            let tab = &self.tab[lv][k];
            let [a, b] = st.pairs[k];
            let (ia, ib) = (tab.pos[a as usize] as usize, tab.pos[b as usize] as usize);
            let ta = tab.tau[ia];
            let ba = if t_lv != 0 { dotc(tab.coords(ia)) } else { 0 };
            let mut phia: Option<i128> = None;
            for q in 0..tab.idx.len() {
                if q == ia || q == ib {
                    continue;
                }
                let cq = tab.coords(q);
                let bx = if t_lv != 0 { dotc(cq) } else { 0 };
                let s = sg * (d * (tab.tau[q] - ta) - t_lv * (bx - ba));
                if s >= 0 {
                    continue;
                }
                let da = dalpha.get_or_insert_with(dalpha_of);
                let pa_ = *phia.get_or_insert_with(|| d * tab.lift[ia] + dotv(tab.coords(ia), da));
                let phx = d * tab.lift[q] + dotv(cq, da);
                let v = sg * (phx - pa_);
                let tf = v as f64 / -s as f64;
                let x = tab.idx[q];
                let better = match best {
                    None => true,
                    // the float times are within 4 ulps of the exact ones: a gap of 1e-12
                    // (relative) decides exactly; closer times are compared exactly
                    Some((.., btf)) if tf < btf - 1e-12 * (tf.abs() + btf.abs()) => true,
                    Some((.., btf)) if tf > btf + 1e-12 * (tf.abs() + btf.abs()) => false,
                    Some((bk, bx_, bv, bs, _)) => {
                        self.earlier(st, (k, x, v, -s), (bk, bx_, bv, bs))
                    }
                };
                if better {
                    best = Some((k, x, v, -s, tf));
                }
            }
        }
        let Some((k, x, ..)) = best else {
            // t = +∞: a cell of this level
            if self.is_simplex(pa) || self.is_simplex(pb) {
                return Ok(Step::Next(Vec::new()));
            }
            if lv + 1 == n {
                let mut pairs = vec![[0; 2]; n];
                for (&[a, b], &g) in st.pairs.iter().zip(&self.group) {
                    let (a, b) = (a as usize - n - 1, b as usize - n - 1);
                    pairs[g] = [a.min(b), a.max(b)];
                }
                let mut num = dalpha.unwrap_or_else(dalpha_of);
                let mut den = d;
                if den < 0 {
                    den = -den;
                    num.iter_mut().for_each(|x| *x = -*x);
                }
                let g = num.iter().fold(den, |g, &x| gcd(g, x));
                if g > 1 {
                    num.iter_mut().for_each(|x| *x /= g);
                    den /= g;
                }
                return Ok(Step::Cell(TargetCell { pairs, num, den }));
            }
            // next level: configuration lv + 1 scaled by its degree
            let dn = self.deg[lv + 1];
            let mut m = st.m.clone();
            for r in 0..n {
                for c in 0..n {
                    if c != lv + 1 {
                        m[r * n + c] = m[r * n + c].checked_mul(dn).ok_or(Overflow)?;
                    }
                }
            }
            return Ok(Step::Next(vec![State {
                level: st.level + 1,
                d: st.d.checked_mul(dn).ok_or(Overflow)?,
                pairs: st.pairs.clone(),
                m,
            }]));
        };
        let [a, b] = st.pairs[k];
        let lam = self.lambda(st, k, x);
        let lk = lam[k];
        // {a, x}: det Dλ_k, alive above iff λ_k > 0; {x, b}: det D − Dλ_k, iff λ_k < 1
        let up_ax = sg * lk > 0;
        let up_xb = sg * (d - lk) > 0;
        let pivot_ax = |lam: &[i128]| self.pivot(st, k, lam, [a, x]);
        let pivot_xb = |lam: &[i128]| {
            let mut mv: Vec<i128> = lam.iter().map(|&l| -l).collect();
            mv[k] += d;
            self.pivot(st, k, &mv, [x, b])
        };
        let next = match (up_ax, up_xb) {
            (true, true) => vec![pivot_ax(&lam)?, pivot_xb(&lam)?],
            // {x, b} singular: continue; else it lives below and the two merge into {a, x}
            (true, false) => {
                if lk == d || a < x {
                    vec![pivot_ax(&lam)?]
                } else {
                    Vec::new()
                }
            }
            (false, true) => {
                if lk == 0 || b < x {
                    vec![pivot_xb(&lam)?]
                } else {
                    Vec::new()
                }
            }
            (false, false) => unreachable!("λ ≤ 0 and λ ≥ 1"),
        };
        Ok(Step::Next(next))
    }

    /// The cell with row `k` of `V` replaced by `mv·V/D`, pair `pair`.
    fn pivot(&self, st: &State, k: usize, mv: &[i128], pair: [u32; 2]) -> Result<State, Overflow> {
        let n = self.n;
        let d = st.d as i128;
        let mk = mv[k];
        let mut m = st.m.clone();
        // i64 products when max|M|·(|m_k| + max|m_j|) < 2^63
        let mmax = st.m.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0) as u128;
        let vmax = mv.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0);
        if mmax.saturating_mul(2 * vmax) < 1 << 63 {
            let (mk, d) = (mk as i64, st.d);
            let mv: Vec<i64> = mv.iter().map(|&x| x as i64).collect();
            for row in m.chunks_exact_mut(n) {
                let rk = row[k];
                for (c, x) in row.iter_mut().enumerate() {
                    if c != k {
                        let num = mk * *x - mv[c] * rk;
                        debug_assert_eq!(num % d, 0);
                        *x = match d {
                            1 => num,
                            -1 => -num,
                            _ => num / d,
                        };
                    }
                }
            }
            let mut pairs = st.pairs.clone();
            pairs[k] = pair;
            return Ok(State {
                level: st.level,
                d: mk,
                pairs,
                m,
            });
        }
        for r in 0..n {
            let row = &mut m[r * n..r * n + n];
            let rk = row[k] as i128;
            for c in 0..n {
                if c == k {
                    continue;
                }
                let num = mk
                    .checked_mul(row[c] as i128)
                    .and_then(|p| p.checked_sub(mv[c].checked_mul(rk)?))
                    .ok_or(Overflow)?;
                debug_assert_eq!(num % d, 0);
                row[c] = div_exact(num, d)?;
            }
        }
        let mut pairs = st.pairs.clone();
        pairs[k] = pair;
        Ok(State {
            level: st.level,
            d: i64::try_from(mk).map_err(|_| Overflow)?,
            pairs,
            m,
        })
    }
}

/// `num / d` for an exact division whose quotient fits `i64` (64-bit division when
/// possible: `i128` division is a slow library call).
#[inline]
fn div_exact(num: i128, d: i128) -> Result<i64, Overflow> {
    match (i64::try_from(num), i64::try_from(d)) {
        (Ok(a), Ok(1)) => Ok(a),
        (Ok(a), Ok(-1)) => a.checked_neg().ok_or(Overflow),
        (Ok(a), Ok(b)) => Ok(a / b),
        _ => i64::try_from(num / d).map_err(|_| Overflow),
    }
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Compares `a/s` with `b/t` (`s, t > 0`) exactly.
fn cmp_frac(a: i128, s: i128, b: i128, t: i128) -> Ordering {
    match (a.checked_mul(t), b.checked_mul(s)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => (BigInt::from(a) * BigInt::from(t)).cmp(&(BigInt::from(b) * BigInt::from(s))),
    }
}
