//! Incremental exact tableau for the mixed-cell search (warm-started primal simplex).
//!
//! Unknowns: the inner normal `α ∈ Q^n` and one free level `β_g` per group. The row of point
//! `p` of group `g` is the slack `s_p = ⟨α, p⟩ + ω(p) − β_g ≥ 0`; a point is on its group's
//! lower face iff `s_p = 0`. A search node is the tableau of the touched groups' rows with
//! the chosen points' slacks fixed at zero (nonbasic and "dead"). Adding a point is one
//! phase-2 minimisation of its slack from the parent's feasible basis (feasible iff the
//! minimum is 0: usually 0–3 pivots); a new group's rows are appended by substituting the
//! basic unknowns and shifting `β_g` to the current minimum, which keeps the basis feasible
//! without a pivot. Pivots are Edmonds' fraction-free ones of [`super::lp`] on checked
//! `i64` (`Overflow` lets the caller fall back to the from-scratch LP with `i128`/`BigInt`);
//! entering variable and leaving row by Bland's rule (no cycling).

use super::exact::Overflow;
use super::lp::{Tab, Witness};

/// Result of [`Tableau::tighten`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tight {
    /// The slack can be 0: it is now fixed at 0.
    Yes,
    /// The minimum of the slack is positive.
    No,
    /// The slack is already an affine function of fixed slacks only (non-generic lifting).
    Dependent,
}

#[derive(Clone)]
pub(super) struct Tableau {
    n: usize,
    /// Number of free unknowns (`n` α's and one β per group); slack of row `i` has id
    /// `free + i`.
    free: usize,
    tab: Tab<i64>,
    /// Variable in the basis of each row.
    basic: Vec<usize>,
    /// Variable of each column (column 0 is the constant).
    nonbasic: Vec<usize>,
    dead: Vec<bool>,
    /// `flip[v]`: the tableau carries `−v` for the free unknown `v`.
    flip: Vec<bool>,
}

impl Tableau {
    /// Empty tableau (no rows) for `n` unknowns and `groups` levels.
    pub(super) fn new(n: usize, groups: usize) -> Self {
        let free = n + groups;
        let w = free + 1;
        Tableau {
            n,
            free,
            tab: Tab {
                w,
                t: Vec::new(),
                d: 1,
            },
            basic: Vec::new(),
            nonbasic: (0..w)
                .map(|j| if j == 0 { usize::MAX } else { j - 1 })
                .collect(),
            dead: vec![false; w],
            flip: vec![false; free],
        }
    }

    pub(super) fn rows(&self) -> usize {
        self.basic.len()
    }

    /// Appends the rows of group `g` (points `pts`, lifting `omega`); returns the index of
    /// the first appended row (point `i` gets row `first + i`). The basis stays feasible:
    /// `β_g` (untouched so far) is shifted to the least current height.
    pub(super) fn append_group(
        &mut self,
        g: usize,
        pts: &[Vec<i64>],
        omega: &[i64],
    ) -> Result<usize, Overflow> {
        let w = self.tab.w;
        let first = self.rows();
        let bvar = self.n + g;
        debug_assert!(!self.basic.contains(&bvar));
        // rows where a free unknown is basic
        let basic_free: Vec<(usize, usize)> = self
            .basic
            .iter()
            .enumerate()
            .filter(|(_, &v)| v < self.free)
            .map(|(i, &v)| (i, v))
            .collect();
        let d = self.tab.d;
        let mut new_rows: Vec<i64> = Vec::with_capacity(pts.len() * w);
        for (p, &om) in pts.iter().zip(omega) {
            // coefficient of each free unknown in the original row
            let coef = |v: usize| -> i64 {
                if v < self.n {
                    p[v]
                } else if v == bvar {
                    -1
                } else {
                    0
                }
            };
            let mut row = vec![0i128; w];
            row[0] = om as i128 * d as i128;
            #[allow(clippy::needless_range_loop)]
            for j in 1..w {
                if self.dead[j] {
                    continue;
                }
                let v = self.nonbasic[j];
                if v < self.free {
                    let c = coef(v) as i128;
                    let c = if self.flip[v] { -c } else { c };
                    row[j] = c * d as i128;
                }
            }
            for &(i, v) in &basic_free {
                let c = coef(v);
                if c == 0 {
                    continue;
                }
                let c = c as i128;
                let c = if self.flip[v] { -c } else { c };
                for (j, x) in row.iter_mut().enumerate() {
                    if j > 0 && self.dead[j] {
                        continue;
                    }
                    *x = x
                        .checked_add(
                            c.checked_mul(self.tab.t[i * w + j] as i128)
                                .ok_or(Overflow)?,
                        )
                        .ok_or(Overflow)?;
                }
            }
            for x in row {
                new_rows.push(i64::try_from(x).map_err(|_| Overflow)?);
            }
        }
        // shift β_g by the integer M = ⌊least height⌋ so that every row value is ≥ 0 (an
        // integer shift keeps the original problem integral, which the exact divisions of
        // the fraction-free pivots rely on)
        let m = (0..pts.len()).map(|i| new_rows[i * w]).min().unwrap_or(0);
        let shift = (m.div_euclid(d) as i128) * d as i128;
        for i in 0..pts.len() {
            new_rows[i * w] =
                i64::try_from(new_rows[i * w] as i128 - shift).map_err(|_| Overflow)?;
        }
        self.tab.t.extend_from_slice(&new_rows);
        for i in 0..pts.len() {
            self.basic.push(self.free + first + i);
        }
        Ok(first)
    }

    /// Is the slack of `row` zero at the current vertex?
    pub(super) fn is_tight(&self, row: usize) -> bool {
        let s = self.free + row;
        match self.basic.iter().position(|&b| b == s) {
            None => true,
            Some(i) => self.tab.t[i * self.tab.w] == 0,
        }
    }

    /// Minimises the slack of `row` (phase 2 from the current feasible basis); when it
    /// reaches 0 the slack is made nonbasic and fixed at 0 (an equality from now on).
    pub(super) fn tighten(&mut self, row: usize) -> Result<Tight, Overflow> {
        let w = self.tab.w;
        let s = self.free + row;
        loop {
            let Some(i) = self.basic.iter().position(|&b| b == s) else {
                let c = (1..w)
                    .find(|&c| self.nonbasic[c] == s)
                    .expect("slack column");
                self.dead[c] = true;
                return Ok(Tight::Yes);
            };
            let v = self.tab.t[i * w];
            if v == 0 {
                // degenerate: swap the slack out of the basis at no change of the vertex
                let Some(c) = (1..w).find(|&c| !self.dead[c] && self.tab.t[i * w + c] != 0) else {
                    return Ok(Tight::Dependent);
                };
                self.pivot(i, c)?;
                continue;
            }
            // entering column: smallest variable id that decreases the slack (Bland)
            let mut enter: Option<usize> = None;
            for c in 1..w {
                if self.dead[c] {
                    continue;
                }
                let var = self.nonbasic[c];
                let a = self.tab.t[i * w + c];
                let ok = if var < self.free { a != 0 } else { a < 0 };
                if ok && enter.is_none_or(|e| var < self.nonbasic[e]) {
                    enter = Some(c);
                }
            }
            let Some(c) = enter else {
                return Ok(Tight::No);
            };
            if self.tab.t[i * w + c] > 0 {
                // a free unknown moving down: substitute v → −v
                let rows = self.rows();
                for k in 0..rows {
                    let x = &mut self.tab.t[k * w + c];
                    *x = x.checked_neg().ok_or(Overflow)?;
                }
                let var = self.nonbasic[c];
                self.flip[var] ^= true;
            }
            // ratio test over sign-constrained rows; ties by smallest basic id
            let mut leave: Option<usize> = None;
            for k in 0..self.rows() {
                let a = self.tab.t[k * w + c];
                if self.basic[k] < self.free || a >= 0 {
                    continue;
                }
                leave = match leave {
                    None => Some(k),
                    Some(l) => {
                        // t[k][0] / −a  vs  t[l][0] / −b
                        let b = self.tab.t[l * w + c];
                        let lhs = self.tab.t[k * w] as i128 * (-(b as i128));
                        let rhs = self.tab.t[l * w] as i128 * (-(a as i128));
                        if lhs < rhs || (lhs == rhs && self.basic[k] < self.basic[l]) {
                            Some(k)
                        } else {
                            Some(l)
                        }
                    }
                };
            }
            let r = leave.expect("the slack's own row bounds the ratio test");
            self.pivot(r, c)?;
        }
    }

    /// Edmonds' fraction-free pivot on checked `i64` (the same update as
    /// [`Tab::pivot`], specialised: live columns only, a row without an entry in the pivot
    /// column is left alone when the pivot equals the denominator, and every division is
    /// checked to be exact).
    fn pivot(&mut self, r: usize, c: usize) -> Result<(), Overflow> {
        let w = self.tab.w;
        let rows = self.rows();
        let live: Vec<usize> = (0..w).filter(|&j| j != c && !self.dead[j]).collect();
        let p = self.tab.t[r * w + c];
        let d = self.tab.d;
        let prow: Vec<i64> = self.tab.t[r * w..(r + 1) * w].to_vec();
        let t = &mut self.tab.t;
        let (p128, d128) = (p as i128, d as i128);
        for i in 0..rows {
            if i == r {
                continue;
            }
            let row = &mut t[i * w..(i + 1) * w];
            let ic = row[c] as i128;
            if ic == 0 {
                if p == d {
                    continue;
                }
                for &j in &live {
                    let v = p128 * row[j] as i128;
                    if v % d128 != 0 {
                        return Err(Overflow);
                    }
                    row[j] = i64::try_from(v / d128).map_err(|_| Overflow)?;
                }
            } else {
                for &j in &live {
                    let v = p128 * row[j] as i128 - ic * prow[j] as i128;
                    let q = match i64::try_from(v) {
                        Ok(v) => {
                            if v % d != 0 {
                                return Err(Overflow);
                            }
                            v / d
                        }
                        Err(_) => {
                            if v % d128 != 0 {
                                return Err(Overflow);
                            }
                            i64::try_from(v / d128).map_err(|_| Overflow)?
                        }
                    };
                    row[j] = q;
                }
            }
        }
        for &j in &live {
            t[r * w + j] = prow[j].checked_neg().ok_or(Overflow)?;
        }
        t[r * w + c] = d;
        self.tab.d = p;
        if p < 0 {
            for v in t.iter_mut() {
                *v = v.checked_neg().ok_or(Overflow)?;
            }
            self.tab.d = p.checked_neg().ok_or(Overflow)?;
        }
        std::mem::swap(&mut self.basic[r], &mut self.nonbasic[c]);
        Ok(())
    }

    /// The current vertex's `α` (reduced fraction).
    pub(super) fn alpha(&self) -> Witness {
        let w = self.tab.w;
        let mut num = vec![0i128; self.n];
        for (i, &b) in self.basic.iter().enumerate() {
            if b < self.n {
                let v = self.tab.t[i * w] as i128;
                num[b] = if self.flip[b] { -v } else { v };
            }
        }
        let mut den = self.tab.d as i128;
        let mut g = den;
        for &v in &num {
            g = gcd(g, v);
        }
        if g > 1 {
            num.iter_mut().for_each(|v| *v /= g);
            den /= g;
        }
        Witness { num, den }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_groups() {
        // n = 2; group 0: triangle, group 1: segment
        let g0 = vec![vec![0, 0], vec![1, 0], vec![0, 1]];
        let w0 = vec![0, 3, 5];
        let g1 = vec![vec![0, 0], vec![1, 1]];
        let w1 = vec![2, 0];
        let mut t = Tableau::new(2, 2);
        let f1 = t.append_group(1, &g1, &w1).unwrap();
        assert_eq!(t.tighten(f1).unwrap(), Tight::Yes);
        assert_eq!(t.tighten(f1 + 1).unwrap(), Tight::Yes);
        let f0 = t.append_group(0, &g0, &w0).unwrap();
        assert_eq!(t.tighten(f0).unwrap(), Tight::Yes);
        assert_eq!(t.tighten(f0 + 1).unwrap(), Tight::Yes);
        let a = t.alpha();
        let h = |p: &[i64], w: i64| {
            w as i128 * a.den + p[0] as i128 * a.num[0] + p[1] as i128 * a.num[1]
        };
        eprintln!("{a:?}");
        assert_eq!(h(&g1[0], w1[0]), h(&g1[1], w1[1]));
        assert_eq!(h(&g0[0], w0[0]), h(&g0[1], w0[1]));
        assert!(h(&g0[2], w0[2]) > h(&g0[0], w0[0]));
    }
}

#[cfg(test)]
mod cyclic_rows {
    use super::*;
    #[test]
    fn cyclic5_first_group() {
        // group A: x0..x4 product and 1 ; group B: the 5 monomials of x_i x_{i+1}
        let ga = vec![vec![1, 1, 1, 1, 1], vec![0, 0, 0, 0, 0]];
        let wa = vec![100, 7];
        let gb: Vec<Vec<i64>> = (0..5)
            .map(|i| {
                (0..5)
                    .map(|j| if j == i || j == (i + 1) % 5 { 1 } else { 0 })
                    .collect()
            })
            .collect();
        let wb = vec![3, 50, 8, 20, 1];
        let mut t = Tableau::new(5, 2);
        let fa = t.append_group(0, &ga, &wa).unwrap();
        assert_eq!(t.tighten(fa).unwrap(), Tight::Yes);
        assert_eq!(t.tighten(fa + 1).unwrap(), Tight::Yes);
        let a = t.alpha();
        let h = |p: &[i64], w: i64, a: &Witness| {
            w as i128 * a.den + (0..5).map(|j| p[j] as i128 * a.num[j]).sum::<i128>()
        };
        assert_eq!(h(&ga[0], wa[0], &a), h(&ga[1], wa[1], &a), "{a:?}");
        let fb = t.append_group(1, &gb, &wb).unwrap();
        for q in 0..5 {
            let mut t2 = t.clone();
            let r = t2.tighten(fb + q).unwrap();
            let a = t2.alpha();
            assert_eq!(
                h(&ga[0], wa[0], &a),
                h(&ga[1], wa[1], &a),
                "q {q} {r:?} {a:?}"
            );
        }
    }
}

#[cfg(test)]
mod random_sequences {
    use super::*;
    use rand::{Rng, SeedableRng};
    #[test]
    fn random_vertices_valid() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for it in 0..300 {
            let n = 3;
            let groups: Vec<Vec<Vec<i64>>> = (0..n)
                .map(|_| {
                    (0..5)
                        .map(|_| (0..n).map(|_| rng.random_range(0..3)).collect())
                        .collect()
                })
                .collect();
            let om: Vec<Vec<i64>> = (0..n)
                .map(|_| (0..5).map(|_| rng.random_range(0..1000)).collect())
                .collect();
            let mut t = Tableau::new(n, n);
            let mut eqs: Vec<(usize, usize)> = Vec::new();
            for g in 0..n {
                let f = t.append_group(g, &groups[g], &om[g]).unwrap();
                for _ in 0..2 {
                    let q = rng.random_range(0..5);
                    let mut t2 = t.clone();
                    if t2.tighten(f + q).unwrap() == Tight::Yes {
                        t = t2;
                        eqs.push((g, q));
                    }
                    // check the vertex: every touched group's min attained at its eq points
                    let a = t.alpha();
                    let h = |g: usize, p: usize| {
                        om[g][p] as i128 * a.den
                            + (0..n)
                                .map(|j| groups[g][p][j] as i128 * a.num[j])
                                .sum::<i128>()
                    };
                    for gg in 0..=g {
                        let m = (0..5).map(|p| h(gg, p)).min().unwrap();
                        for &(g2, q2) in &eqs {
                            if g2 == gg {
                                assert_eq!(h(gg, q2), m, "it {it} g {gg} eqs {eqs:?}");
                            }
                        }
                    }
                }
            }
        }
    }
}
