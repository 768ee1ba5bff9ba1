//! Multi-homogeneous Bézout numbers (Morgan–Sommese 1987; Shafarevich, *Basic Algebraic
//! Geometry*, ch. 4).
//!
//! For a partition of the n variables into groups of sizes k_1..k_m and the degree matrix
//! d_ij (degree of equation i in the variables of group j: the largest sum of that group's
//! exponents over the terms), the number of isolated roots in C^n is at most the coefficient
//! of Π_j α_j^(k_j) in Π_i (Σ_j d_ij α_j). That coefficient equals perm(D̂)/Π_j k_j!, where D̂
//! is the n×n matrix with column j of (d_ij) repeated k_j times.
//!
//! [`mhom_bezout`] computes the coefficient by dynamic programming over the vectors
//! c ≤ k of group counts (state c holds the coefficient of α^c in the product of the first
//! |c| factors; visiting the states in mixed-radix order makes every state final before it
//! is read): O(m·Π_j(k_j+1)) operations, exact (u128, BigUint on overflow). When that state
//! space is too large it falls back to the permanent formula with the exact permanent
//! engine ([`mhom_bezout_permanent`], also used as an independent check in the tests).
//!
//! [`best_partition`] minimizes the number over partitions: exhaustively over all Bell(n) set
//! partitions for n ≤ 10 (restricted growth strings), by a local search beyond (see there).

use super::Partition;
use crate::error::{Error, Result};
use crate::linalg::permanent::permanent_exact;
use crate::system::System;
use nalgebra::DMatrix;
use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};

/// Largest Π(k_j+1) handled by the dynamic program; beyond it the permanent is used.
pub const DP_MAX_STATES: usize = 1 << 24;

/// Largest n searched exhaustively by [`best_partition`] (Bell(10) = 115975 partitions).
pub const EXHAUSTIVE_MAX_N: usize = 10;

/// Exponent data of a polynomial system, checked once: per equation, the exponent vectors
/// of its terms (nonnegative).
#[derive(Clone, Debug)]
pub struct DegreeTable {
    pub n: usize,
    /// `terms[i]` = the exponent vectors of equation i that are maximal for the
    /// componentwise order (a dominated vector never gives a larger group degree).
    pub terms: Vec<Vec<Vec<u32>>>,
    /// The same terms as sparse lists (variable, exponent > 0), for fast degree matrices.
    sparse: Vec<Vec<Vec<(usize, u32)>>>,
}

impl DegreeTable {
    /// Fails for non-square or Laurent systems (the m-hom count needs polynomials; a Laurent
    /// system needs the polyhedral/BKK count instead).
    pub fn new(system: &System) -> Result<DegreeTable> {
        let n = system.variables.len();
        if n == 0 {
            return Err(Error::Usage(
                "m-hom Bézout number: the system has no variables".into(),
            ));
        }
        if system.equations.len() != n {
            return Err(Error::Usage(format!(
                "m-hom Bézout number: {} equations in {} variables (needs a square system)",
                system.equations.len(),
                n
            )));
        }
        let mut terms = Vec::with_capacity(n);
        for (i, f) in system.equations.iter().enumerate() {
            let mut ts = Vec::with_capacity(f.terms.len());
            for t in &f.terms {
                if t.exponents.len() != n {
                    return Err(Error::Usage(format!(
                        "m-hom Bézout number: equation {}: a term has {} exponents for {} variables",
                        i + 1,
                        t.exponents.len(),
                        n
                    )));
                }
                if let Some(v) = t.exponents.iter().position(|&a| a < 0) {
                    return Err(Error::Usage(format!(
                        "m-hom Bézout number: equation {} is a Laurent polynomial (exponent {} of {}); \
                         use the polyhedral count",
                        i + 1,
                        t.exponents[v],
                        system.variables[v]
                    )));
                }
                ts.push(t.exponents.iter().map(|&a| a as u32).collect());
            }
            terms.push(maximal_terms(ts));
        }
        let sparse = terms
            .iter()
            .map(|ts| {
                ts.iter()
                    .map(|t| {
                        t.iter()
                            .enumerate()
                            .filter(|&(_, &a)| a > 0)
                            .map(|(v, &a)| (v, a))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        Ok(DegreeTable { n, terms, sparse })
    }

    /// Degree matrix d_ij for group labels `label[v]` ∈ [0, m): d_ij = max over the terms
    /// of equation i of `Σ_{v: label[v]=j} exponent_v`.
    pub fn degrees_by_label(&self, label: &[usize], m: usize) -> Vec<Vec<u32>> {
        let mut d = vec![vec![0u32; m]; self.n];
        let mut sums = vec![0u32; m];
        for (i, ts) in self.sparse.iter().enumerate() {
            let row = &mut d[i];
            for t in ts {
                // Only the groups of the term's support get a nonzero sum.
                for &(v, a) in t {
                    sums[label[v]] += a;
                }
                for &(v, _) in t {
                    let g = label[v];
                    row[g] = row[g].max(sums[g]);
                }
                for &(v, _) in t {
                    sums[label[v]] = 0;
                }
            }
        }
        d
    }

    /// Degree matrix of a partition (columns in the partition's group order).
    pub fn degrees(&self, partition: &Partition) -> Vec<Vec<u32>> {
        let (label, m) = partition.labels(self.n);
        self.degrees_by_label(&label, m)
    }
}

/// Drops exponent vectors dominated componentwise by another one (and duplicates).
fn maximal_terms(mut ts: Vec<Vec<u32>>) -> Vec<Vec<u32>> {
    ts.sort();
    ts.dedup();
    let dominated = |a: &Vec<u32>, b: &Vec<u32>| a != b && a.iter().zip(b).all(|(x, y)| x <= y);
    let keep: Vec<bool> = ts
        .iter()
        .map(|a| !ts.iter().any(|b| dominated(a, b)))
        .collect();
    ts.into_iter()
        .zip(keep)
        .filter_map(|(t, k)| k.then_some(t))
        .collect()
}

/// The degree matrix d_ij of `system` for `partition` (n × m).
pub fn degree_matrix(system: &System, partition: &Partition) -> Result<Vec<Vec<u32>>> {
    let table = DegreeTable::new(system)?;
    partition.check(table.n)?;
    Ok(table.degrees(partition))
}

/// The multi-homogeneous Bézout number of `system` for `partition`.
pub fn mhom_bezout(system: &System, partition: &Partition) -> Result<BigUint> {
    let d = degree_matrix(system, partition)?;
    mhom_bezout_from_degrees(&d, &partition.sizes())
}

/// Coefficient of Π α_j^(k_j) in Π_i Σ_j d_ij α_j (sizes k_j, Σ k_j = number of rows).
pub fn mhom_bezout_from_degrees(d: &[Vec<u32>], sizes: &[usize]) -> Result<BigUint> {
    check_shape(d, sizes)?;
    match dp_states(sizes) {
        Some(_) => Ok(match coefficient_dp_u128(d, sizes) {
            Some(x) => BigUint::from(x),
            None => coefficient_dp_big(d, sizes),
        }),
        None => mhom_bezout_permanent(d, sizes),
    }
}

fn check_shape(d: &[Vec<u32>], sizes: &[usize]) -> Result<()> {
    let n = d.len();
    if sizes.iter().sum::<usize>() != n || d.iter().any(|row| row.len() != sizes.len()) {
        return Err(Error::Usage(format!(
            "m-hom Bézout number: degree matrix {}×{} does not fit group sizes {:?}",
            n,
            d.first().map_or(0, |r| r.len()),
            sizes
        )));
    }
    Ok(())
}

/// Π(k_j+1) when at most [`DP_MAX_STATES`].
fn dp_states(sizes: &[usize]) -> Option<usize> {
    sizes
        .iter()
        .try_fold(1usize, |acc, &k| acc.checked_mul(k + 1))
        .filter(|&s| s <= DP_MAX_STATES)
}

/// The dynamic program in u128; `None` on overflow.
fn coefficient_dp_u128(d: &[Vec<u32>], sizes: &[usize]) -> Option<u128> {
    let m = sizes.len();
    let states = dp_states(sizes)?;
    let mut stride = vec![1usize; m];
    for j in 1..m {
        stride[j] = stride[j - 1] * (sizes[j - 1] + 1);
    }
    let mut dp = vec![0u128; states];
    dp[0] = 1;
    let mut c = vec![0usize; m];
    let mut level = 0usize; // Σ c = index of the next equation
    for idx in 0..states {
        let x = dp[idx];
        if x != 0 && level < d.len() {
            for j in 0..m {
                let dij = d[level][j];
                if c[j] < sizes[j] && dij > 0 {
                    let t = &mut dp[idx + stride[j]];
                    *t = t.checked_add(x.checked_mul(dij as u128)?)?;
                }
            }
        }
        // Mixed-radix increment of c.
        for j in 0..m {
            if c[j] < sizes[j] {
                c[j] += 1;
                level += 1;
                break;
            }
            level -= c[j];
            c[j] = 0;
        }
    }
    Some(dp[states - 1])
}

/// The same dynamic program with big integers.
fn coefficient_dp_big(d: &[Vec<u32>], sizes: &[usize]) -> BigUint {
    let m = sizes.len();
    let states: usize = sizes.iter().map(|k| k + 1).product();
    let mut stride = vec![1usize; m];
    for j in 1..m {
        stride[j] = stride[j - 1] * (sizes[j - 1] + 1);
    }
    let mut dp = vec![BigUint::zero(); states];
    dp[0] = BigUint::from(1u8);
    let mut c = vec![0usize; m];
    let mut level = 0usize;
    for idx in 0..states {
        if !dp[idx].is_zero() && level < d.len() {
            let x = dp[idx].clone();
            for j in 0..m {
                let dij = d[level][j];
                if c[j] < sizes[j] && dij > 0 {
                    dp[idx + stride[j]] += &x * dij;
                }
            }
        }
        for j in 0..m {
            if c[j] < sizes[j] {
                c[j] += 1;
                level += 1;
                break;
            }
            level -= c[j];
            c[j] = 0;
        }
    }
    dp.pop().unwrap_or_default()
}

/// perm(D̂)/Π k_j! with the exact permanent engine (D̂: column j repeated k_j times).
pub fn mhom_bezout_permanent(d: &[Vec<u32>], sizes: &[usize]) -> Result<BigUint> {
    check_shape(d, sizes)?;
    let n = d.len();
    let cols: Vec<usize> = sizes
        .iter()
        .enumerate()
        .flat_map(|(j, &k)| std::iter::repeat_n(j, k))
        .collect();
    let dhat = DMatrix::from_fn(n, n, |i, c| d[i][cols[c]] as i64);
    let perm = permanent_exact(&dhat, 0)?;
    let perm = perm.to_biguint().ok_or_else(|| {
        Error::Internal("m-hom Bézout number: negative permanent of a nonnegative matrix".into())
    })?;
    let fact: BigUint = sizes
        .iter()
        .map(|&k| (1..=k as u64).map(BigUint::from).product::<BigUint>())
        .product();
    if !(&perm % &fact).is_zero() {
        return Err(Error::Internal(
            "m-hom Bézout number: permanent not divisible by Π k_j!".into(),
        ));
    }
    Ok(perm / fact)
}

/// Evaluates a labelled partition fast (u128 DP, `None` if too large or overflowing).
/// `Some(count)` if the partition's count is below `bar` (or there is no bar), `None`
/// when it is not (or overflows u128). A greedy assignment of equations to groups gives a
/// lower bound Π_i d_(i,σ(i)) ≤ count that skips the DP for hopeless partitions.
fn eval_labels(table: &DegreeTable, label: &[usize], m: usize, bar: Option<u128>) -> Option<u128> {
    let mut sizes = vec![0usize; m];
    for &g in label {
        sizes[g] += 1;
    }
    let d = table.degrees_by_label(label, m);
    if let Some(bar) = bar {
        if greedy_lower_bound(&d, &sizes) >= bar {
            return None;
        }
    }
    coefficient_dp_u128(&d, &sizes).filter(|&c| bar.is_none_or(|b| c < b))
}

/// Π_i d_(i,σ(i)) for the assignment σ that gives each equation, in order, the group of
/// largest degree among those with room left: one term of the sum, so ≤ the count.
fn greedy_lower_bound(d: &[Vec<u32>], sizes: &[usize]) -> u128 {
    let mut left = sizes.to_vec();
    let mut prod: u128 = 1;
    for row in d {
        let Some(j) = (0..left.len())
            .filter(|&j| left[j] > 0)
            .max_by_key(|&j| row[j])
        else {
            return 0;
        };
        left[j] -= 1;
        prod = prod.saturating_mul(row[j] as u128);
    }
    prod
}

/// The partition with the smallest m-hom Bézout number, and that number.
///
/// - n ≤ [`EXHAUSTIVE_MAX_N`]: all set partitions, in restricted-growth-string order
///   (the first minimum wins, so ties favour fewer groups found earlier, starting with the
///   1-homogeneous partition).
/// - n > [`EXHAUSTIVE_MAX_N`]: steepest-descent local search from the 1-homogeneous
///   partition, a greedy colouring of the "variables in a common term" graph (groups of
///   variables that never multiply each other), the n-homogeneous partition (n ≤ 14) and
///   8 random partitions from a fixed seed
///   (deterministic). A move takes one variable to another group or to a new group of its
///   own, or merges two groups; the best improving move is applied until none improves.
///   Partitions whose count needs more than 2^14 DP states are skipped. The result is an
///   upper bound on the optimum, not a certificate.
///
/// Both skip the DP of a candidate when a greedy assignment already reaches the best
/// count so far (a lower bound: one term of the sum).
pub fn best_partition(system: &System) -> Result<(Partition, BigUint)> {
    let table = DegreeTable::new(system)?;
    let n = table.n;
    let best = if n <= EXHAUSTIVE_MAX_N {
        exhaustive(&table)
    } else {
        local_search(&table, 8, 0x5eed)
    };
    match best {
        Some((label, m, _)) => {
            let p = Partition::from_labels(&label, m);
            let count = mhom_bezout_from_degrees(&table.degrees(&p), &p.sizes())?;
            Ok((p, count))
        }
        None => {
            // Every candidate overflowed u128: fall back to the 1-homogeneous partition.
            let p = Partition::one_hom(n);
            let count = mhom_bezout_from_degrees(&table.degrees(&p), &p.sizes())?;
            Ok((p, count))
        }
    }
}

fn exhaustive(table: &DegreeTable) -> Option<(Vec<usize>, usize, u128)> {
    let mut a = vec![0usize; table.n];
    let mut best: Option<(Vec<usize>, usize, u128)> = None;
    loop {
        let m = a.iter().max().map_or(0, |&x| x + 1);
        if let Some(c) = eval_labels(table, &a, m, best.as_ref().map(|b| b.2)) {
            best = Some((a.clone(), m, c));
        }
        if !next_rgs(&mut a) {
            return best;
        }
    }
}

/// Advances a restricted growth string (`a[0] = 0`, `a[i] ≤ 1 + max a[..i]`) to its successor
/// in lexicographic order; false after the last one. These strings are the set partitions.
pub fn next_rgs(a: &mut [usize]) -> bool {
    let mut i = a.len();
    loop {
        if i <= 1 {
            return false;
        }
        i -= 1;
        let max_before = a[..i].iter().copied().max().unwrap_or(0);
        if a[i] <= max_before {
            a[i] += 1;
            a[i + 1..].iter_mut().for_each(|x| *x = 0);
            return true;
        }
    }
}

/// Renumbers labels to 0..m in order of first appearance.
fn normalize(label: &mut [usize]) -> usize {
    let mut map: Vec<Option<usize>> = vec![None; label.len() + 1];
    let mut m = 0;
    for x in label.iter_mut() {
        let y = *map[*x].get_or_insert_with(|| {
            m += 1;
            m - 1
        });
        *x = y;
    }
    m
}

const LOCAL_MAX_STATES: usize = 1 << 14;

fn affordable(label: &[usize], m: usize) -> bool {
    let mut sizes = vec![0usize; m];
    for &g in label {
        sizes[g] += 1;
    }
    sizes
        .iter()
        .try_fold(1usize, |acc, &k| acc.checked_mul(k + 1))
        .is_some_and(|s| s <= LOCAL_MAX_STATES)
}

/// Greedy colouring of the "appear in a common term" graph (an edge v–w when some term
/// has positive exponents of both): each colour class is a group whose variables never
/// multiply each other, the classical seed for linear-product partitions (bilinear
/// systems give the x/y split).
fn coloring_start(table: &DegreeTable) -> Vec<usize> {
    let n = table.n;
    let mut adj = vec![vec![false; n]; n];
    for ts in &table.terms {
        for t in ts {
            let support: Vec<usize> = (0..n).filter(|&v| t[v] > 0).collect();
            for &v in &support {
                for &w in &support {
                    adj[v][w] |= v != w;
                }
            }
        }
    }
    let mut color = vec![usize::MAX; n];
    for v in 0..n {
        let mut c = 0;
        while (0..n).any(|w| adj[v][w] && color[w] == c) {
            c += 1;
        }
        color[v] = c;
    }
    color
}

fn local_search(
    table: &DegreeTable,
    restarts: usize,
    seed: u64,
) -> Option<(Vec<usize>, usize, u128)> {
    use rand::{Rng, SeedableRng};
    let n = table.n;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut starts: Vec<Vec<usize>> = vec![vec![0; n], coloring_start(table)];
    if n <= 14 {
        starts.push((0..n).collect());
    }
    for _ in 0..restarts {
        let groups = rng.random_range(2..=n.min(6));
        starts.push((0..n).map(|_| rng.random_range(0..groups)).collect());
    }
    let mut best: Option<(Vec<usize>, usize, u128)> = None;
    for mut cur in starts {
        let mut m = normalize(&mut cur);
        if !affordable(&cur, m) {
            continue;
        }
        let Some(mut value) = eval_labels(table, &cur, m, None) else {
            continue;
        };
        loop {
            let mut best_move: Option<(Vec<usize>, usize, u128)> = None;
            let mut consider = |mut cand: Vec<usize>| {
                let cm = normalize(&mut cand);
                if !affordable(&cand, cm) {
                    return;
                }
                let bar = best_move.as_ref().map_or(value, |b| b.2);
                if let Some(c) = eval_labels(table, &cand, cm, Some(bar)) {
                    best_move = Some((cand, cm, c));
                }
            };
            for v in 0..n {
                for g in 0..=m {
                    if g != cur[v] {
                        let mut cand = cur.clone();
                        cand[v] = g; // g = m: a new group of its own
                        consider(cand);
                    }
                }
            }
            for g in 0..m {
                for h in g + 1..m {
                    let cand = cur.iter().map(|&x| if x == h { g } else { x }).collect();
                    consider(cand);
                }
            }
            match best_move {
                Some((cand, cm, c)) => {
                    cur = cand;
                    m = cm;
                    value = c;
                }
                None => break,
            }
        }
        if best.as_ref().is_none_or(|b| value < b.2) {
            best = Some((cur, m, value));
        }
    }
    best
}

/// Bell numbers B(n) (count of set partitions), for reporting.
pub fn bell(n: usize) -> Option<u128> {
    // Bell triangle.
    let mut row = vec![1u128];
    for _ in 0..n {
        let mut next = vec![*row.last()?];
        for &x in &row {
            let y = next.last()?.checked_add(x)?;
            next.push(y);
        }
        row = next;
    }
    row.first().copied()
}

/// u128 value of a count, when it fits.
pub fn to_u128(x: &BigUint) -> Option<u128> {
    x.to_u128()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dp_matches_permanent_on_small_degree_matrices() {
        let d = vec![vec![2, 1], vec![1, 3], vec![0, 2]];
        // Coefficient of α²β in (2α+β)(α+3β)(2β) is 0 terms with α²... compute by hand:
        // (2α+β)(α+3β) = 2α² + 7αβ + 3β²; times 2β → 4α²β + 14αβ² + 6β³.
        assert_eq!(
            mhom_bezout_from_degrees(&d, &[2, 1]).unwrap(),
            BigUint::from(4u8)
        );
        assert_eq!(
            mhom_bezout_permanent(&d, &[2, 1]).unwrap(),
            BigUint::from(4u8)
        );
        assert_eq!(
            mhom_bezout_from_degrees(&d, &[1, 2]).unwrap(),
            BigUint::from(14u8)
        );
    }

    #[test]
    fn restricted_growth_strings_are_the_set_partitions() {
        for n in 1..=8 {
            let mut a = vec![0usize; n];
            let mut seen = std::collections::HashSet::new();
            loop {
                // Canonical form of the partition: sorted groups of sorted members.
                let m = a.iter().max().unwrap() + 1;
                let mut groups: Vec<Vec<usize>> = (0..m)
                    .map(|g| (0..n).filter(|&v| a[v] == g).collect())
                    .collect();
                assert!(groups.iter().all(|g| !g.is_empty()));
                groups.sort();
                assert!(seen.insert(groups), "repeated partition {a:?}");
                if !next_rgs(&mut a) {
                    break;
                }
            }
            assert_eq!(Some(seen.len() as u128), bell(n), "n = {n}");
        }
        assert_eq!(bell(10), Some(115_975));
    }
}
