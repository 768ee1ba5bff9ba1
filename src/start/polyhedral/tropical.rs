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
//! for heights and comparisons, `BigInt` when a product overflows). A step runs in `i64`
//! (and `f64` products that are exact integers below `2^53`) when its bounds, checked per
//! step, allow it ([`Homotopy::scan_fast`]), else in `i128` ([`Homotopy::scan_wide`]); both
//! decide identically. The cells found are re-checked exactly by the caller, which also
//! resolves exact ties of `ω` by the same perturbation when asked to
//! (`mixed_cells_perturbed`).

use super::exact::inverse_odd;
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
    /// `max |M_ij|` (for the `i64` bounds of a step).
    mmax: u64,
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
    /// Largest `|lift|` of an active point at each level (`u64::MAX`: beyond `i64`).
    liftmax: Vec<u64>,
}

/// Size of the stack buffers of the `i64` scan ([`Homotopy::scan_fast`]): it runs for up to
/// this many variables (indices masked by `FAST_N − 1`, so no bounds checks).
const FAST_N: usize = 32;

/// The first event of a step: configuration, point, value `v` and `−slope > 0`.
type Event = (usize, u32, i128, i128);

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
    /// The same coordinates split (`cj` the indices, `cx` the values), and `lift`, `tau`
    /// in `i64` (`lift64` is 0 where the lift does not fit: `liftmax` says so), for the
    /// `i64` scan.
    cj: Vec<u32>,
    cx: Vec<i64>,
    lift64: Vec<i64>,
    tau64: Vec<i64>,
    /// The coordinates in blocks of four points, `dense[blk * n + j][l]` = coordinate `j`
    /// of point `4·blk + l` (zero padding), for the vectorised slopes of
    /// [`Homotopy::scan_fast`].
    dense: Vec<[f64; 4]>,
    p4: usize,
    /// More than two nonzero coordinates per point on average: the dense products pay
    /// (else, e.g. the simplex points, the sparse ones are cheaper).
    dense_pays: bool,
    /// The points are the unscaled simplex `w_0 = 0, w_i = e_{i−1}` in order (a
    /// configuration after the moving one): `⟨w_i, c⟩ = c_{i−1}`.
    unit: bool,
}

/// Buffers of a worker, reused by every step.
#[derive(Default)]
pub(super) struct Scratch {
    /// `B(x)_lv` of the points of one configuration (the slopes' products).
    out: Vec<f64>,
    /// `Λ = D·λ` of the event, and the pivot's multipliers.
    lam: Vec<i128>,
    mv: Vec<i128>,
    mv64: Vec<i64>,
    /// Buffers of expanded states, for the states to come (no allocation per step).
    free_m: Vec<Vec<i64>>,
    free_pairs: Vec<Vec<[u32; 2]>>,
}

impl Scratch {
    /// Keeps the buffers of an expanded state.
    pub(super) fn recycle(&mut self, st: State) {
        if self.free_m.len() < 64 {
            self.free_m.push(st.m);
            self.free_pairs.push(st.pairs);
        }
    }
    fn buffers(&mut self) -> (Vec<i64>, Vec<[u32; 2]>) {
        let mut m = self.free_m.pop().unwrap_or_default();
        let mut p = self.free_pairs.pop().unwrap_or_default();
        m.clear();
        p.clear();
        (m, p)
    }
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
            liftmax: Vec::new(),
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
        hom.liftmax = hom
            .tab
            .iter()
            .map(|lv| {
                lv.iter()
                    .flat_map(|a| a.lift.iter())
                    .map(|&w| u64::try_from(w.unsigned_abs()).unwrap_or(u64::MAX))
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
            let w = self.lift(k, x, lv);
            a.lift.push(w);
            a.lift64.push(i64::try_from(w).unwrap_or(0));
            a.tau.push(self.tau(k, x, lv));
            a.tau64.push(self.tau(k, x, lv) as i64);
            self.for_coords(k, x, lv, |j, c| a.coords.push((j as u32, c)));
            a.start.push(a.coords.len());
        }
        a.cj = a.coords.iter().map(|&(j, _)| j).collect();
        a.cx = a.coords.iter().map(|&(_, x)| x).collect();
        a.p4 = a.idx.len().div_ceil(4) * 4;
        a.dense_pays = a.coords.len() > 2 * a.idx.len();
        a.unit = k > lv;
        debug_assert!(!a.unit || a.idx.iter().enumerate().all(|(i, &x)| i == x as usize));
        a.dense = vec![[0.0; 4]; self.n * a.p4 / 4];
        for i in 0..a.idx.len() {
            for &(j, x) in &a.coords[a.start[i]..a.start[i + 1]] {
                a.dense[i / 4 * self.n + j as usize][i % 4] = x as f64;
            }
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
            mmax: max_abs(&m),
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

    /// `Λ = (x − a)·M = D·λ` for point `x` of configuration `k` (base `a` of its pair),
    /// into `l`; `i64` sums when `2·|x|₁·max|M| < 2^62` (`mmax`: `max|M|`).
    fn lambda_into(&self, st: &State, k: usize, x: u32, mmax: u64, l: &mut Vec<i128>) {
        let n = self.n;
        let lv = st.level as usize;
        l.clear();
        if (mmax as u128) * (self.l1max[lv] as u128) < 1 << 60 && n <= FAST_N {
            let mut acc = [0i64; FAST_N];
            self.for_coords(k, x, lv, |j, c| {
                for (li, &mv) in acc.iter_mut().zip(&st.m[j * n..j * n + n]) {
                    *li += c * mv;
                }
            });
            self.for_coords(k, st.pairs[k][0], lv, |j, c| {
                for (li, &mv) in acc.iter_mut().zip(&st.m[j * n..j * n + n]) {
                    *li -= c * mv;
                }
            });
            l.extend(acc[..n].iter().map(|&v| v as i128));
            return;
        }
        l.extend(self.lambda(st, k, x));
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

    /// `Dα = −M·Ω` of the cell `st` (`Ω_k = ω(b_k) − ω(a_k)`).
    fn dalpha(&self, st: &State) -> Vec<i128> {
        let n = self.n;
        let lv = st.level as usize;
        if n <= FAST_N {
            // i64 when max|M|·Σ|Ω| < 2^62
            let mut om = [0i64; FAST_N];
            let mut sum: u128 = 0;
            let mut fits = true;
            for (j, &[a, b]) in st.pairs.iter().enumerate() {
                let w = if self.liftmax[lv] < 1 << 62 {
                    let t = &self.tab[lv][j];
                    Ok(t.lift64[t.pos[b as usize] as usize] - t.lift64[t.pos[a as usize] as usize])
                } else {
                    i64::try_from(self.lift(j, b, lv) - self.lift(j, a, lv))
                };
                match w {
                    Ok(w) => {
                        om[j] = w;
                        sum += w.unsigned_abs() as u128;
                    }
                    Err(_) => fits = false,
                }
            }
            if fits && (st.mmax as u128).saturating_mul(sum) < 1 << 62 {
                return st
                    .m
                    .chunks_exact(n)
                    .map(|row| -row.iter().zip(&om).map(|(&m, &o)| m * o).sum::<i64>() as i128)
                    .collect();
            }
        }
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
    }

    /// The first event of the step from `st` (`t_lv`: the slope of the moving pair's
    /// `τ`) in `i64` arithmetic, when the step's bounds allow it: slopes `|d| + |x|₁·max|M_{·lv}|`
    /// and values `|d|·max|lift| + |x|₁·max|Dα|` below `2^60`, `n ≤ FAST_N`. `None`: out of
    /// range (then [`Homotopy::scan_wide`]). Decides exactly as `scan_wide` (the times
    /// `v/s` compared by `i128` cross products, equal times by the perturbation).
    fn scan_fast(
        &self,
        st: &State,
        t_lv: i64,
        dalpha: &mut Option<Vec<i128>>,
        scr: &mut Scratch,
    ) -> Option<Option<Event>> {
        let n = self.n;
        let lv = st.level as usize;
        let d = st.d;
        if n > FAST_N || d.unsigned_abs() >= 1 << 60 || self.liftmax[lv] >= 1 << 60 {
            return None;
        }
        let sg = d.signum();
        let l1 = self.l1max[lv] as u128;
        let mut col = [0i64; FAST_N];
        // the slopes' products `⟨x, M_{·lv}⟩` in f64 (exact: every partial sum is an
        // integer below 2^53) on the dense matrices, else sparse in i64
        let mut vectorised = false;
        if t_lv != 0 {
            for (r, c) in col[..n].iter_mut().enumerate() {
                *c = st.m[r * n + lv];
            }
            let cmax = col[..n].iter().map(|x| x.unsigned_abs()).max().unwrap_or(0) as u128;
            if cmax * l1 >= 1 << 60 {
                return None;
            }
            vectorised = cmax * l1 < 1 << 53;
        }
        // the nonzero entries of the column (for the vectorised products)
        let mut nz = [(0usize, 0.0f64); FAST_N];
        let mut nnz = 0;
        if vectorised {
            for (j, &c) in col[..n].iter().enumerate() {
                if c != 0 {
                    nz[nnz] = (j, c as f64);
                    nnz += 1;
                }
            }
        }
        let mut da = [0i64; FAST_N];
        let mut have_da = false;
        let mut best: Option<(usize, u32, i64, i64)> = None;
        for k in 0..n {
            if t_lv == 0 && k != lv {
                // slopes vanish outside the moving configuration
                continue;
            }
            let tab = &self.tab[lv][k];
            let dot = |i: usize, v: &[i64; FAST_N]| -> i64 {
                let (s, e) = (tab.start[i], tab.start[i + 1]);
                tab.cj[s..e]
                    .iter()
                    .zip(&tab.cx[s..e])
                    .map(|(&j, &x)| x * v[j as usize & (FAST_N - 1)])
                    .sum()
            };
            let [a, b] = st.pairs[k];
            let (ia, ib) = (tab.pos[a as usize] as usize, tab.pos[b as usize] as usize);
            let ta = tab.tau64[ia];
            let vectorised = vectorised && tab.dense_pays;
            if vectorised {
                // four points at a time, the sum in registers, over the nonzero entries
                let out = &mut scr.out;
                out.clear();
                out.resize(tab.p4, 0.0);
                for (o, block) in out.chunks_exact_mut(4).zip(tab.dense.chunks_exact(n)) {
                    let mut acc = [0.0f64; 4];
                    for &(j, c) in &nz[..nnz] {
                        let x = block[j];
                        for l in 0..4 {
                            acc[l] += x[l] * c;
                        }
                    }
                    o.copy_from_slice(&acc);
                }
            }
            let out = &scr.out;
            let unit = tab.unit && t_lv != 0;
            let bdot = |i: usize| -> i64 {
                if t_lv == 0 {
                    0
                } else if unit {
                    if i == 0 {
                        0
                    } else {
                        col[(i - 1) & (FAST_N - 1)]
                    }
                } else if vectorised {
                    out[i] as i64
                } else {
                    dot(i, &col)
                }
            };
            let ba = bdot(ia);
            // outside the moving configuration (τ = 0) the slope is `−sg·t_lv·(bx − ba)`:
            // the products (f64: exact integers) tell its sign
            let pre = vectorised && k != lv;
            let (sgn, ba_f) = ((sg * t_lv) as f64, ba as f64 * (sg * t_lv) as f64);
            let (sgn_i, ba_i) = (sg * t_lv, ba * sg * t_lv);
            let mut pa: Option<i64> = None;
            for q in 0..tab.idx.len() {
                if pre && out[q] * sgn <= ba_f {
                    continue;
                }
                if unit && bdot(q) * sgn_i <= ba_i {
                    continue;
                }
                if q == ia || q == ib {
                    continue;
                }
                let bx = bdot(q);
                let s = sg * (d * (tab.tau64[q] - ta) - t_lv * (bx - ba));
                if s >= 0 {
                    continue;
                }
                if !have_da {
                    let v = dalpha.get_or_insert_with(|| self.dalpha(st));
                    let vmax = v.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0);
                    let bound = vmax
                        .saturating_mul(l1)
                        .saturating_add(d.unsigned_abs() as u128 * self.liftmax[lv] as u128);
                    if bound >= 1 << 60 {
                        return None;
                    }
                    for (o, &x) in da.iter_mut().zip(v.iter()) {
                        *o = x as i64;
                    }
                    have_da = true;
                }
                let pa = *pa.get_or_insert_with(|| d * tab.lift64[ia] + dot(ia, &da));
                let v = sg * (d * tab.lift64[q] + dot(q, &da) - pa);
                let (ns, x) = (-s, tab.idx[q]);
                let better = match best {
                    None => true,
                    Some((bk, bx_, bv, bs)) => {
                        match (v as i128 * bs as i128).cmp(&(bv as i128 * ns as i128)) {
                            Ordering::Less => true,
                            Ordering::Greater => false,
                            Ordering::Equal => self.earlier(
                                st,
                                (k, x, v as i128, ns as i128),
                                (bk, bx_, bv as i128, bs as i128),
                            ),
                        }
                    }
                };
                if better {
                    best = Some((k, x, v, ns));
                }
            }
        }
        Some(best.map(|(k, x, v, s)| (k, x, v as i128, s as i128)))
    }

    /// [`Homotopy::scan_fast`] in `i128` (`BigInt` for the comparison of close times).
    fn scan_wide(&self, st: &State, t_lv: i128, dalpha: &mut Option<Vec<i128>>) -> Option<Event> {
        let n = self.n;
        let lv = st.level as usize;
        let d = st.d as i128;
        let sg = d.signum();
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
                let da = dalpha.get_or_insert_with(|| self.dalpha(st));
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
        best.map(|(k, x, v, s, _)| (k, x, v, s))
    }

    /// One step of the traversal from `st`: the next cell(s) of the homotopy (pushed onto
    /// `next` in traversal order; none: the path ends), a level change, or a cell of the
    /// target (returned).
    pub(super) fn step(
        &self,
        st: &State,
        scr: &mut Scratch,
        next: &mut Vec<State>,
    ) -> Result<Option<TargetCell>, Overflow> {
        let n = self.n;
        let lv = st.level as usize;
        let d = st.d as i128;
        let sg = d.signum();
        let [pa, pb] = st.pairs[lv];
        let t_lv = self.tau(lv, pb, lv) - self.tau(lv, pa, lv);
        // Dα = −M·Ω (computed once, when a value is needed)
        let mut dalpha: Option<Vec<i128>> = None;
        let best = match self.scan_fast(st, t_lv as i64, &mut dalpha, scr) {
            Some(b) => b,
            None => self.scan_wide(st, t_lv, &mut dalpha),
        };
        let Some((k, x, ..)) = best else {
            // t = +∞: a cell of this level
            if self.is_simplex(pa) || self.is_simplex(pb) {
                return Ok(None);
            }
            if lv + 1 == n {
                let mut pairs = vec![[0; 2]; n];
                for (&[a, b], &g) in st.pairs.iter().zip(&self.group) {
                    let (a, b) = (a as usize - n - 1, b as usize - n - 1);
                    pairs[g] = [a.min(b), a.max(b)];
                }
                let mut num = dalpha.unwrap_or_else(|| self.dalpha(st));
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
                return Ok(Some(TargetCell { pairs, num, den }));
            }
            // next level: configuration lv + 1 scaled by its degree
            let dn = self.deg[lv + 1];
            let (mut m, mut pairs) = scr.buffers();
            m.extend_from_slice(&st.m);
            pairs.extend_from_slice(&st.pairs);
            for r in 0..n {
                for c in 0..n {
                    if c != lv + 1 {
                        m[r * n + c] = m[r * n + c].checked_mul(dn).ok_or(Overflow)?;
                    }
                }
            }
            next.push(State {
                level: st.level + 1,
                d: st.d.checked_mul(dn).ok_or(Overflow)?,
                pairs,
                mmax: max_abs(&m),
                m,
            });
            return Ok(None);
        };
        let [a, b] = st.pairs[k];
        let mmax = st.mmax;
        let mut lam = std::mem::take(&mut scr.lam);
        self.lambda_into(st, k, x, mmax, &mut lam);
        let lk = lam[k];
        // {a, x}: det Dλ_k, alive above iff λ_k > 0; {x, b}: det D − Dλ_k, iff λ_k < 1
        let up_ax = sg * lk > 0;
        let up_xb = sg * (d - lk) > 0;
        // {x, b} singular: continue; else it lives below and the two merge into {a, x}
        let go_ax = up_ax && (up_xb || lk == d || a < x);
        let go_xb = up_xb && (up_ax || lk == 0 || b < x);
        debug_assert!(up_ax || up_xb, "λ ≤ 0 and λ ≥ 1");
        let r = (|| {
            if go_ax {
                let st2 = self.pivot(st, k, &lam, [a, x], mmax, scr)?;
                next.push(st2);
            }
            if go_xb {
                let mut mv = std::mem::take(&mut scr.mv);
                mv.clear();
                mv.extend(lam.iter().map(|&l| -l));
                mv[k] += d;
                let st2 = self.pivot(st, k, &mv, [x, b], mmax, scr);
                scr.mv = mv;
                next.push(st2?);
            }
            Ok(None)
        })();
        scr.lam = lam;
        r
    }

    /// The cell with row `k` of `V` replaced by `mv·V/D`, pair `pair` (`mmax = max|M|`).
    fn pivot(
        &self,
        st: &State,
        k: usize,
        mv: &[i128],
        pair: [u32; 2],
        mmax: u64,
        scr: &mut Scratch,
    ) -> Result<State, Overflow> {
        let n = self.n;
        let d = st.d as i128;
        let mk = mv[k];
        let (mut m, mut pairs) = scr.buffers();
        pairs.extend_from_slice(&st.pairs);
        pairs[k] = pair;
        // i64 products when max|M|·(|m_k| + max|m_j|) < 2^63
        let vmax = mv.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0);
        if (mmax as u128).saturating_mul(2 * vmax) < 1 << 63 {
            // exact division by D = 2^z·u (u odd): shift by z, multiply by u⁻¹ mod 2^64
            // (exact because the quotient is an integer that fits i64)
            let tz = st.d.trailing_zeros();
            let inv = inverse_odd(st.d >> tz);
            let mk = mk as i64;
            let mut mv64 = std::mem::take(&mut scr.mv64);
            mv64.clear();
            mv64.extend(mv.iter().map(|&x| x as i64));
            for row in st.m.chunks_exact(n) {
                let rk = row[k];
                let base = m.len();
                m.extend(row.iter().zip(&mv64).map(|(&x, &v)| {
                    let num = mk * x - v * rk;
                    debug_assert_eq!(num % st.d, 0);
                    (num >> tz).wrapping_mul(inv)
                }));
                // column k unchanged
                m[base + k] = rk;
            }
            scr.mv64 = mv64;
            return Ok(State {
                level: st.level,
                d: mk,
                pairs,
                mmax: max_abs(&m),
                m,
            });
        }
        m.extend_from_slice(&st.m);
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
        Ok(State {
            level: st.level,
            d: i64::try_from(mk).map_err(|_| Overflow)?,
            pairs,
            mmax: max_abs(&m),
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

fn max_abs(m: &[i64]) -> u64 {
    m.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0)
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
