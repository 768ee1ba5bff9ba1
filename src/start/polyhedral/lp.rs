//! Exact LP feasibility: is there `α ∈ Q^n` with `v_i·α + c_i ≥ 0` (inequality rows) and
//! `v_i·α + c_i = 0` (equality rows)?
//!
//! Method: a dictionary simplex with Edmonds' integer-preserving (fraction-free) pivots —
//! every entry is a minor of the initial integer matrix, the common denominator is the last
//! pivot — and Bland's rule (no cycling). Equalities are solved first by pivoting a free
//! variable into their row and dropping their slack; then a single artificial variable `t`
//! is added to every inequality row (`v_i·α + c_i + t ≥ 0`), made basic on the most
//! violated row, and minimised. Feasible iff `min t = 0`. No floating point anywhere:
//! runs on checked `i64`, re-runs on checked `i128` and then `BigInt` when an overflow is
//! detected.

use super::exact::{Overflow, Ring};
use num_bigint::BigInt;
use std::cmp::Ordering;

/// A feasibility problem in `n` unknowns; row `i` is `coef[i]·α + constant[i]`,
/// stored flat as `n + 1` integers (`n` coefficients, then the constant).
#[derive(Clone, Debug, Default)]
pub struct Lp {
    pub n: usize,
    pub rows: Vec<i64>,
    pub eq: Vec<bool>,
}

impl Lp {
    pub fn new(n: usize) -> Self {
        Lp {
            n,
            rows: Vec::new(),
            eq: Vec::new(),
        }
    }
    pub fn clear(&mut self) {
        self.rows.clear();
        self.eq.clear();
    }
    /// Adds `coef·α + constant ≥ 0` (or `= 0` when `eq`).
    pub fn push(&mut self, coef: impl IntoIterator<Item = i64>, constant: i64, eq: bool) {
        let before = self.rows.len();
        self.rows.extend(coef);
        debug_assert_eq!(self.rows.len() - before, self.n);
        self.rows.push(constant);
        self.eq.push(eq);
    }
    pub fn num_rows(&self) -> usize {
        self.eq.len()
    }
}

/// A feasible point `α = num / den` (`den > 0`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    pub num: Vec<i128>,
    pub den: i128,
}

/// Outcome of [`feasible`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LpResult {
    /// Feasible; the witness is `None` only when it does not fit in `i128`.
    Feasible(Option<Witness>),
    Infeasible,
    /// An equality row is a linear consequence of earlier ones and consistent with them:
    /// the lifting is not generic for this question.
    Dependent,
}

/// Decides feasibility exactly (checked `i64`, then checked `i128`, then `BigInt`).
pub fn feasible(lp: &Lp) -> LpResult {
    if let Ok(r) = solve::<i64>(lp) {
        return r;
    }
    match solve::<i128>(lp) {
        Ok(r) => r,
        Err(Overflow) => solve::<BigInt>(lp).expect("BigInt never overflows"),
    }
}

/// [`feasible`] started at a known point: the unknowns are shifted to `α = (start.num + y)
/// / start.den`, so that rows satisfied at `start` are satisfied at `y = 0` and phase 1 only
/// has to repair the rest (typically the one new equality). Falls back to the unshifted
/// problem when the shifted constants do not fit in `i64`.
pub fn feasible_from(lp: &Lp, start: Option<&Witness>) -> LpResult {
    let Some(w) = start else {
        return feasible(lp);
    };
    let n = lp.n;
    let shifted = (|| -> Option<Lp> {
        let mut out = lp.clone();
        for i in 0..lp.num_rows() {
            let row = &lp.rows[i * (n + 1)..(i + 1) * (n + 1)];
            let mut c = (row[n] as i128).checked_mul(w.den)?;
            for (a, x) in row[..n].iter().zip(&w.num) {
                c = c.checked_add((*a as i128).checked_mul(*x)?)?;
            }
            out.rows[i * (n + 1) + n] = i64::try_from(c).ok()?;
        }
        Some(out)
    })();
    let Some(sh) = shifted else {
        return feasible(lp);
    };
    match feasible(&sh) {
        LpResult::Feasible(Some(y)) => {
            // α = (num·y.den + y.num) / (den·y.den), reduced
            let back = (|| -> Option<Witness> {
                let den = w.den.checked_mul(y.den)?;
                let mut num = Vec::with_capacity(n);
                for (a, b) in w.num.iter().zip(&y.num) {
                    num.push(a.checked_mul(y.den)?.checked_add(*b)?);
                }
                let mut g = den;
                for &v in &num {
                    g = gcd(g, v);
                }
                let g = g.max(1);
                Some(Witness {
                    num: num.iter().map(|v| v / g).collect(),
                    den: den / g,
                })
            })();
            LpResult::Feasible(back)
        }
        r => r,
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

#[derive(Clone)]
pub(super) struct Tab<T> {
    pub(super) w: usize,
    pub(super) t: Vec<T>,
    pub(super) d: T,
}

impl<T: Ring> Tab<T> {
    #[inline]
    fn at(&self, i: usize, j: usize) -> &T {
        &self.t[i * self.w + j]
    }
    pub(super) fn pivot(&mut self, r: usize, c: usize, dead: &[bool]) -> Result<(), Overflow> {
        let w = self.w;
        let rows = self.t.len() / w;
        let p = self.t[r * w + c].clone();
        let prow: Vec<T> = self.t[r * w..(r + 1) * w].to_vec();
        for i in 0..rows {
            if i == r {
                continue;
            }
            let ic = self.t[i * w + c].clone();
            for j in 0..w {
                if j == c || dead[j] {
                    continue;
                }
                let cell = &mut self.t[i * w + j];
                *cell = if ic.is_zero() {
                    T::det2_div(&p, cell, &ic, &ic, &self.d)?
                } else {
                    T::det2_div(&p, cell, &ic, &prow[j], &self.d)?
                };
            }
        }
        for j in 0..w {
            if j == c || dead[j] {
                continue;
            }
            self.t[r * w + j] = prow[j].neg()?;
        }
        self.t[r * w + c] = self.d.clone();
        self.d = p;
        if self.d.signum_i() < 0 {
            for v in self.t.iter_mut() {
                *v = v.neg()?;
            }
            self.d = self.d.neg()?;
        }
        Ok(())
    }
}

/// The generic solver. Variables: `α_0..α_{n-1}` (free, ids `0..n`), `t` (id `n`), the
/// slack of row `i` (id `n + 1 + i`). Column 0 is the constant, columns `1..=n` start as
/// the `α`s, column `n + 1` as `t`.
fn solve<T: Ring>(lp: &Lp) -> Result<LpResult, Overflow> {
    let n = lp.n;
    let m = lp.num_rows();
    let w = n + 2;
    let tcol = n + 1;
    let mut t: Vec<T> = Vec::with_capacity(m * w);
    for i in 0..m {
        let row = &lp.rows[i * (n + 1)..(i + 1) * (n + 1)];
        t.push(T::from_i64(row[n]));
        for &v in &row[..n] {
            t.push(T::from_i64(v));
        }
        t.push(T::from_i64(if lp.eq[i] { 0 } else { 1 }));
    }
    let mut tab = Tab {
        w,
        t,
        d: T::from_i64(1),
    };
    let mut basic: Vec<usize> = (0..m).map(|i| n + 1 + i).collect();
    let mut nonbasic: Vec<usize> = (0..w)
        .map(|j| if j == 0 { usize::MAX } else { j - 1 })
        .collect();
    let mut dead = vec![false; w];
    dead[0] = false;
    let mut flip = vec![false; n];
    let is_free_row = |b: usize| b < n;

    // Equalities: pivot a free α into the row, drop the slack column.
    for e in 0..m {
        if !lp.eq[e] {
            continue;
        }
        let c = (1..=n).find(|&c| !dead[c] && nonbasic[c] < n && !tab.at(e, c).is_zero());
        match c {
            None => {
                return Ok(if tab.at(e, 0).is_zero() {
                    LpResult::Dependent
                } else {
                    LpResult::Infeasible
                });
            }
            Some(c) => {
                tab.pivot(e, c, &dead)?;
                let leaving = basic[e];
                basic[e] = nonbasic[c];
                nonbasic[c] = leaving;
                dead[c] = true;
            }
        }
    }

    // Phase 1 start: most violated inequality row.
    let mut worst: Option<usize> = None;
    for i in 0..m {
        if is_free_row(basic[i]) {
            continue;
        }
        if tab.at(i, 0).signum_i() < 0 && worst.is_none_or(|k| tab.at(i, 0) < tab.at(k, 0)) {
            worst = Some(i);
        }
    }
    if let Some(r) = worst {
        tab.pivot(r, tcol, &dead)?;
        let leaving = basic[r];
        basic[r] = n;
        nonbasic[tcol] = leaving;
        loop {
            let tr = match basic.iter().position(|&b| b == n) {
                None => break,
                Some(tr) => tr,
            };
            if tab.at(tr, 0).is_zero() {
                break;
            }
            // Entering column: smallest variable id that decreases t (Bland).
            let mut enter: Option<usize> = None;
            for c in 1..w {
                if dead[c] {
                    continue;
                }
                let v = nonbasic[c];
                let s = tab.at(tr, c).signum_i();
                let ok = if v < n { s != 0 } else { s < 0 };
                if ok && enter.is_none_or(|e| v < nonbasic[e]) {
                    enter = Some(c);
                }
            }
            let c = match enter {
                None => return Ok(LpResult::Infeasible),
                Some(c) => c,
            };
            if tab.at(tr, c).signum_i() > 0 {
                // A free variable moving down: substitute α → −α.
                for i in 0..m {
                    let cell = &mut tab.t[i * w + c];
                    *cell = cell.neg()?;
                }
                flip[nonbasic[c]] ^= true;
            }
            // Ratio test over the sign-constrained rows; ties by smallest basic id.
            let mut leave: Option<usize> = None;
            for i in 0..m {
                if is_free_row(basic[i]) || tab.at(i, c).signum_i() >= 0 {
                    continue;
                }
                leave = match leave {
                    None => Some(i),
                    Some(k) => {
                        let a = tab.at(i, c).neg()?;
                        let b = tab.at(k, c).neg()?;
                        match super::exact::cmp_frac(tab.at(i, 0), &a, tab.at(k, 0), &b)? {
                            Ordering::Less => Some(i),
                            Ordering::Equal if basic[i] < basic[k] => Some(i),
                            _ => Some(k),
                        }
                    }
                };
            }
            let r = leave.expect("the t row always bounds the ratio test");
            tab.pivot(r, c, &dead)?;
            let leaving = basic[r];
            basic[r] = nonbasic[c];
            nonbasic[c] = leaving;
        }
    }

    // Feasible: read α off the dictionary (nonbasic variables are 0).
    let den = tab.d.to_i128();
    let mut num = vec![0i128; n];
    let mut fits = den.is_some();
    for i in 0..m {
        let b = basic[i];
        if b < n {
            match tab.at(i, 0).to_i128() {
                Some(v) => num[b] = if flip[b] { -v } else { v },
                None => fits = false,
            }
        }
    }
    Ok(LpResult::Feasible(if fits {
        Some(Witness {
            num,
            den: den.unwrap(),
        })
    } else {
        None
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_witness(lp: &Lp, w: &Witness) {
        let n = lp.n;
        for i in 0..lp.num_rows() {
            let row = &lp.rows[i * (n + 1)..(i + 1) * (n + 1)];
            let mut s = row[n] as i128 * w.den;
            for j in 0..n {
                s += row[j] as i128 * w.num[j];
            }
            if lp.eq[i] {
                assert_eq!(s, 0, "row {i}");
            } else {
                assert!(s >= 0, "row {i}");
            }
        }
    }

    /// The three arithmetic tiers agree (and the i64 tier reports overflow, not garbage).
    #[test]
    fn tiers_agree() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..300 {
            let n = rng.random_range(2..6);
            let m = rng.random_range(2..12);
            let mut lp = Lp::new(n);
            for i in 0..m {
                let coef: Vec<i64> = (0..n).map(|_| rng.random_range(-2..=2)).collect();
                let big = if i % 3 == 0 { 1i64 << 40 } else { 1 << 20 };
                lp.push(coef, rng.random_range(-big..big), i < n / 2);
            }
            let b = solve::<BigInt>(&lp).unwrap();
            if let Ok(r) = solve::<i64>(&lp) {
                assert_eq!(r, b);
            }
            assert_eq!(solve::<i128>(&lp).unwrap(), b);
            if let LpResult::Feasible(Some(w)) = &b {
                check_witness(&lp, w);
            }
        }
    }

    #[test]
    fn simple_cases() {
        // x ≥ 1, y ≥ 2, x + y ≤ 2 → infeasible
        let mut lp = Lp::new(2);
        lp.push([1, 0], -1, false);
        lp.push([0, 1], -2, false);
        lp.push([-1, -1], 2, false);
        assert_eq!(feasible(&lp), LpResult::Infeasible);
        // x + y ≤ 3 → feasible
        let mut lp2 = Lp::new(2);
        lp2.push([1, 0], -1, false);
        lp2.push([0, 1], -2, false);
        lp2.push([-1, -1], 3, false);
        match feasible(&lp2) {
            LpResult::Feasible(Some(w)) => check_witness(&lp2, &w),
            r => panic!("{r:?}"),
        }
        // started from a feasible point: same answers, valid witnesses
        let w0 = match feasible(&lp2) {
            LpResult::Feasible(Some(w)) => w,
            r => panic!("{r:?}"),
        };
        let mut lp3 = lp2.clone();
        lp3.push([2, -1], 0, true);
        match feasible_from(&lp3, Some(&w0)) {
            LpResult::Feasible(Some(w)) => check_witness(&lp3, &w),
            r => panic!("{r:?}"),
        }
        // with equality 2x − y = 0
        lp2.push([2, -1], 0, true);
        match feasible(&lp2) {
            LpResult::Feasible(Some(w)) => check_witness(&lp2, &w),
            r => panic!("{r:?}"),
        }
        // dependent equality 4x − 2y = 0
        lp2.push([4, -2], 0, true);
        assert_eq!(feasible(&lp2), LpResult::Dependent);
    }

    /// Random small LPs against a brute-force vertex enumeration in exact rationals.
    #[test]
    fn random_against_bruteforce() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..400 {
            let n = 2;
            let m = rng.random_range(1..6);
            let mut lp = Lp::new(n);
            for _ in 0..m {
                let a: i64 = rng.random_range(-3..=3);
                let b: i64 = rng.random_range(-3..=3);
                let c: i64 = rng.random_range(-5..=5);
                lp.push([a, b], c, false);
            }
            let r = feasible(&lp);
            // Brute force: feasible iff some point on a grid of candidate vertices works,
            // or the system is homogeneous-feasible (checked on rational candidates).
            let rows: Vec<[i64; 3]> = (0..m)
                .map(|i| [lp.rows[3 * i], lp.rows[3 * i + 1], lp.rows[3 * i + 2]])
                .collect();
            let sat = |x: (i128, i128, i128)| {
                rows.iter()
                    .all(|r| r[0] as i128 * x.0 + r[1] as i128 * x.1 + r[2] as i128 * x.2 >= 0)
            };
            let mut cand = vec![(0i128, 0i128, 1i128)];
            for i in 0..m {
                for j in 0..m {
                    let (a, b) = (rows[i], rows[j]);
                    let det = (a[0] * b[1] - a[1] * b[0]) as i128;
                    if det != 0 {
                        let x = (-a[2] * b[1] + a[1] * b[2]) as i128;
                        let y = (-a[0] * b[2] + a[2] * b[0]) as i128;
                        let (x, y, d) = if det < 0 { (-x, -y, -det) } else { (x, y, det) };
                        cand.push((x, y, d));
                    }
                }
                // points on a single line, far along it
                let a = rows[i];
                if a[0] != 0 || a[1] != 0 {
                    let nn = (a[0] * a[0] + a[1] * a[1]) as i128;
                    for s in [-1000i128, 1000] {
                        let px = -(a[2] as i128) * a[0] as i128 + s * -(a[1] as i128);
                        let py = -(a[2] as i128) * a[1] as i128 + s * a[0] as i128;
                        cand.push((px, py, nn));
                    }
                }
            }
            for s in [-1000i128, 1000] {
                for u in [-1000i128, 1000, 0] {
                    cand.push((s, u, 1));
                }
            }
            let brute = cand.iter().any(|&x| sat(x));
            match r {
                LpResult::Feasible(Some(w)) => {
                    check_witness(&lp, &w);
                }
                LpResult::Infeasible => assert!(!brute, "{rows:?}"),
                r => panic!("{r:?}"),
            }
        }
    }
}
