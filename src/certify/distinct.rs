//! How many distinct roots a set of certificates proves.
//!
//! Certificate `i` has a box `X_i` holding exactly one root `ξ_i`, and `ξ_i ∈ K_i` (its
//! enclosure, `K_i ⊆ X_i`). Two certificates whose enclosures are disjoint hold distinct
//! roots. Group the certificates into the connected components of the graph "enclosures
//! meet": enclosures of different components are pairwise disjoint, so roots of different
//! components differ, and the number of components is a lower bound on the number of
//! distinct roots — a proven count. It is exact when each component holds one root, which
//! is proved edge by edge: if `K_i ⊆ X_j` then `ξ_i ∈ X_j`, and uniqueness in `X_j` gives
//! `ξ_i = ξ_j`. Components with an edge not so proved are counted once and reported as
//! unresolved.
//!
//! Pairs are found by a sweep: each enclosure's projection on a fixed direction
//! (`Σ_j a_j Re x_j + b_j Im x_j`, enclosed in interval arithmetic, so meeting boxes have
//! meeting projections) sorted by lower end; only pairs whose projections overlap are
//! compared. Union–find joins them.

use super::complex::{box_subset, boxes_meet, CInterval};
use super::interval::Interval;
use super::krawczyk::Certificate;
use std::ops::Add;

/// Counts proven from a set of certificates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DistinctCounts {
    /// Components of meeting enclosures: distinct roots, proven.
    pub roots: u64,
    /// Components with a member proven real: distinct real roots, proven.
    pub real: u64,
    /// Components not proven to hold a single root (each counted once in `roots`).
    pub unresolved: u64,
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// The projection `Σ_j a_j Re x_j + b_j Im x_j` of a box, enclosed.
fn projection(b: &[CInterval]) -> Interval {
    b.iter().enumerate().fold(Interval::ZERO, |acc, (j, z)| {
        let a = ((j as f64 + 1.0) * 0.618_033_988_7).fract() + 0.5;
        let c = ((j as f64 + 1.0) * 0.414_213_562_4).fract() + 0.5;
        acc.add(z.re.scale(a)).add(z.im.scale(c))
    })
}

/// The proven counts of distinct (and real) roots among `certs` (see the module notes).
pub fn count_distinct(certs: &[&Certificate]) -> DistinctCounts {
    let m = certs.len();
    let keys: Vec<Interval> = certs.iter().map(|c| projection(&c.enclosure)).collect();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| keys[a].lo.total_cmp(&keys[b].lo));
    let mut parent: Vec<usize> = (0..m).collect();
    let mut undecided_edges: Vec<usize> = Vec::new();
    for (pos, &i) in order.iter().enumerate() {
        for &j in &order[pos + 1..] {
            if keys[j].lo > keys[i].hi {
                break;
            }
            let (ci, cj) = (certs[i], certs[j]);
            if !boxes_meet(&ci.enclosure, &cj.enclosure) {
                continue;
            }
            let (a, b) = (find(&mut parent, i), find(&mut parent, j));
            parent[a] = b;
            let same =
                box_subset(&ci.enclosure, &cj.region) || box_subset(&cj.enclosure, &ci.region);
            if !same {
                undecided_edges.push(i);
            }
        }
    }
    let mut roots = std::collections::HashMap::<usize, bool>::new();
    for (i, c) in certs.iter().enumerate() {
        let r = find(&mut parent, i);
        *roots.entry(r).or_insert(false) |= c.real;
    }
    let unresolved: std::collections::HashSet<usize> = undecided_edges
        .into_iter()
        .map(|i| find(&mut parent, i))
        .collect();
    DistinctCounts {
        roots: roots.len() as u64,
        real: roots.values().filter(|&&r| r).count() as u64,
        unresolved: unresolved.len() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex64 as C64;

    fn cert(c: [f64; 2], r: f64, k: f64, real: bool) -> Certificate {
        let z = C64::new(c[0], c[1]);
        Certificate {
            radius: r,
            region: vec![CInterval::around(z, r), CInterval::around(z * 2.0, r)],
            enclosure: vec![CInterval::around(z, k), CInterval::around(z * 2.0, k)],
            real,
            double_double: false,
        }
    }

    /// Disjoint enclosures count separately; meeting ones whose enclosure lies in the
    /// other's box count once; meeting ones not so nested count once and are unresolved.
    #[test]
    fn components_of_meeting_enclosures() {
        let a = cert([1.0, 0.0], 1e-8, 1e-10, true);
        let a2 = cert([1.0 + 1e-11, 0.0], 1e-8, 1e-10, false);
        let b = cert([1.0 + 1e-6, 0.0], 1e-8, 1e-10, false);
        let c = cert([-3.0, 1.0], 1e-8, 1e-10, false);
        let got = count_distinct(&[&a, &b, &a2, &c]);
        assert_eq!(
            got,
            DistinctCounts {
                roots: 3,
                real: 1,
                unresolved: 0
            }
        );
        // Enclosures of half-width 1e-8 (= the boxes) 0.7e-8 and 1.4e-8 apart: they meet, neither
        // lies in the other's box.
        let d = cert([5.0, 0.0], 1e-8, 1e-8, false);
        let e = cert([5.0 + 0.7e-8, 0.0], 1e-8, 1e-8, false);
        let got = count_distinct(&[&d, &e, &c]);
        assert_eq!((got.roots, got.unresolved), (2, 1));
    }

    /// Many copies of few points: the sweep finds every meeting pair (the count equals the
    /// number of distinct points whatever the order).
    #[test]
    fn the_sweep_joins_every_copy() {
        let pts: Vec<Certificate> = (0..500)
            .map(|i| {
                cert(
                    [(i % 7) as f64, (i % 5) as f64 * 1e-3],
                    1e-9,
                    1e-12,
                    i % 7 == 0,
                )
            })
            .collect();
        let refs: Vec<&Certificate> = pts.iter().collect();
        let got = count_distinct(&refs);
        assert_eq!((got.roots, got.real, got.unresolved), (35, 5, 0));
    }
}
