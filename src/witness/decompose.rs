//! The numerical irreducible decomposition of one pure-dimensional witness set
//! (Sommese–Verschelde–Wampler, "Using monodromy to decompose solution sets of polynomial
//! systems into irreducible components", 2001, and "Symmetric functions applied to
//! decomposing solution sets of polynomial systems", 2002).
//!
//! - **Monodromy**: moving the slices `L` around a loop (`L → L' → L`, random `L'` and a
//!   different γ each way) permutes the witness points; points of one irreducible component
//!   are permuted among themselves, and enough loops connect all of them. The groups are the
//!   classes of the union of the permutations seen.
//! - **Linear trace test**: for slices moving parallel, `L_s = {A x + b + s·v = 0}`, the sum
//!   `Σ_{x ∈ C ∩ L_s} c·x` over the points of a union of components `C` is linear in `s`,
//!   and over a proper subset of a component it is not. Tracking all points to `s = ±1`
//!   gives every group's second difference `tr(1) − 2 tr(0) + tr(−1)` at once; a group whose
//!   second difference is zero (relative to [`TRACE_TOL`]) is a certified component.
//!
//! Loops run, on the points of groups not yet certified, until every group is certified,
//! [`DecomposeOptions::max_loops`] have run, or [`DecomposeOptions::stall_loops`] loops in a
//! row joined no groups. Groups still uncertified then are joined where the trace says a
//! union of them is complete (smallest unions first, up to [`MAX_TRACE_UNION_GROUPS`]
//! groups); what is left is reported uncertified.

use super::moving::{nearest_within, Mover};
use super::slices::{random_complex, random_unit, Slices};
use super::{rng, Stream, WitnessSet};
use crate::error::Result;
use num_complex::Complex64 as C64;
use serde::Serialize;

/// A second difference of the traces at most this relative to the sum of the traces' sizes
/// is zero.
pub const TRACE_TOL: f64 = 1e-6;
/// A moved point matches a witness point within this ([`super::moving::relative_distance`]).
pub const MATCH_TOL: f64 = 1e-6;
/// Uncertified groups are combined by the trace test only up to this many (all unions of
/// them are tried, smallest first).
pub const MAX_TRACE_UNION_GROUPS: usize = 16;

/// An irreducible component (or, uncertified, a group of witness points).
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Component {
    pub dimension: usize,
    pub degree: usize,
    /// Its witness points: indices into the witness set's points.
    pub points: Vec<usize>,
    /// The paths per witness point (1 for a generically reduced component).
    pub multiplicity: usize,
    /// Certified by the linear trace test (dimension 0: always).
    pub certified: bool,
}

/// How long the monodromy runs.
#[derive(Clone, Debug)]
pub struct DecomposeOptions {
    pub seed: u64,
    pub max_loops: usize,
    pub stall_loops: usize,
}

impl Default for DecomposeOptions {
    fn default() -> Self {
        DecomposeOptions {
            seed: 1,
            max_loops: 30,
            stall_loops: 5,
        }
    }
}

/// What the decomposition of one dimension did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DecomposeReport {
    pub dimension: usize,
    pub loops: usize,
    /// Paths tracked (trace test and loops).
    pub paths: u64,
    /// Groups joined by the trace test after the loops.
    pub joined_by_trace: usize,
    pub seconds: f64,
}

/// Union–find over the witness points.
struct Classes {
    parent: Vec<usize>,
}

impl Classes {
    fn new(k: usize) -> Classes {
        Classes {
            parent: (0..k).collect(),
        }
    }
    fn find(&mut self, i: usize) -> usize {
        let mut r = i;
        while self.parent[r] != r {
            r = self.parent[r];
        }
        let mut j = i;
        while self.parent[j] != r {
            let next = self.parent[j];
            self.parent[j] = r;
            j = next;
        }
        r
    }
    /// Joins the classes of `a` and `b`; true when they were apart. The smaller index
    /// becomes the root (deterministic).
    fn union(&mut self, a: usize, b: usize) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        let (lo, hi) = (ra.min(rb), ra.max(rb));
        self.parent[hi] = lo;
        true
    }
    /// The classes, each sorted, ordered by their smallest member.
    fn groups(&mut self) -> Vec<Vec<usize>> {
        let k = self.parent.len();
        let mut by_root: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for i in 0..k {
            let r = self.find(i);
            by_root.entry(r).or_default().push(i);
        }
        by_root.into_values().collect()
    }
}

/// The traces `c·x` of every witness point at `s = −1, 0, 1` (`None` where a path failed).
struct Traces {
    at: Vec<[Option<C64>; 3]>,
}

impl Traces {
    /// Whether the second difference of the group's trace sum vanishes.
    fn linear(&self, group: &[usize]) -> bool {
        let mut second = C64::new(0.0, 0.0);
        let mut size = 0.0;
        for &i in group {
            let [Some(m), Some(z), Some(p)] = self.at[i] else {
                return false;
            };
            second += p - 2.0 * z + m;
            size += p.norm() + 2.0 * z.norm() + m.norm();
        }
        second.norm() <= TRACE_TOL * size.max(f64::MIN_POSITIVE)
    }
}

/// Decomposes the witness set `w` (dimension ≥ 1; `mover.fixed` holds its `R·F`) into
/// irreducible components.
pub fn decompose_set(
    mover: &mut Mover<'_>,
    w: &WitnessSet,
    opts: &DecomposeOptions,
) -> Result<(Vec<Component>, DecomposeReport)> {
    let clock = std::time::Instant::now();
    let d = w.dimension;
    let n = mover.variables.len();
    let k = w.points.len();
    let start_paths = mover.paths;
    let mut report = DecomposeReport {
        dimension: d,
        ..Default::default()
    };
    let mut r = rng(opts.seed, Stream::Decompose(d));
    // Trace data.
    let v: Vec<C64> = (0..d).map(|_| random_complex(&mut r)).collect();
    let c: Vec<C64> = (0..n).map(|_| random_complex(&mut r)).collect();
    let dot = |x: &[C64]| c.iter().zip(x).map(|(a, b)| a * b).sum::<C64>();
    let mut traces = Traces {
        at: w
            .points
            .iter()
            .map(|x| [None, Some(dot(x)), None])
            .collect(),
    };
    for (slot, s) in [(0usize, -1.0), (2, 1.0)] {
        let to = w.slices.translated(&v, C64::new(s, 0.0));
        let gamma = random_unit(&mut r);
        let moved = mover.move_points(&w.slices, &to, gamma, &w.points)?;
        for (i, m) in moved.iter().enumerate() {
            traces.at[i][slot] = m.x.as_deref().map(dot);
        }
    }
    // Monodromy.
    let mut classes = Classes::new(k);
    let mut stalled = 0;
    loop {
        let groups = classes.groups();
        let open: Vec<usize> = groups
            .iter()
            .filter(|g| !traces.linear(g))
            .flatten()
            .copied()
            .collect();
        if open.is_empty() || report.loops >= opts.max_loops || stalled >= opts.stall_loops {
            break;
        }
        report.loops += 1;
        let via = Slices::random(d, n, &mut r);
        let (g1, g2) = (random_unit(&mut r), random_unit(&mut r));
        let starts: Vec<Vec<C64>> = open.iter().map(|&i| w.points[i].clone()).collect();
        let out = mover.move_points(&w.slices, &via, g1, &starts)?;
        let (alive, mid): (Vec<usize>, Vec<Vec<C64>>) = open
            .iter()
            .zip(out)
            .filter_map(|(&i, m)| m.x.map(|x| (i, x)))
            .unzip();
        let back = mover.move_points(&via, &w.slices, g2, &mid)?;
        let mut joined = false;
        for (&i, m) in alive.iter().zip(back) {
            if let Some(j) = m.x.and_then(|x| nearest_within(&w.points, &x, MATCH_TOL)) {
                joined |= classes.union(i, j);
            }
        }
        stalled = if joined { 0 } else { stalled + 1 };
    }
    // Unions of uncertified groups that the trace test completes.
    let groups = classes.groups();
    let (mut done, mut open): (Vec<Vec<usize>>, Vec<Vec<usize>>) =
        groups.into_iter().partition(|g| traces.linear(g));
    if open.len() > 1 && open.len() <= MAX_TRACE_UNION_GROUPS {
        let mut size = 2;
        while size <= open.len() {
            let found = (1u32..(1 << open.len()))
                .filter(|m| m.count_ones() as usize == size)
                .find(|&m| {
                    let union: Vec<usize> = (0..open.len())
                        .filter(|&g| m & (1 << g) != 0)
                        .flat_map(|g| open[g].iter().copied())
                        .collect();
                    traces.linear(&union)
                });
            match found {
                Some(m) => {
                    let mut union = Vec::new();
                    for g in (0..open.len()).rev() {
                        if m & (1 << g) != 0 {
                            union.extend(open.remove(g));
                        }
                    }
                    union.sort_unstable();
                    report.joined_by_trace += size - 1;
                    done.push(union);
                }
                None => size += 1,
            }
        }
    }
    let component = |points: Vec<usize>, certified: bool| Component {
        dimension: d,
        degree: points.len(),
        multiplicity: points
            .iter()
            .map(|&i| w.multiplicities.get(i).copied().unwrap_or(1))
            .max()
            .unwrap_or(1),
        points,
        certified,
    };
    let mut components: Vec<Component> = done
        .into_iter()
        .map(|g| component(g, true))
        .chain(open.into_iter().map(|g| component(g, false)))
        .collect();
    components.sort_by(|a, b| b.degree.cmp(&a.degree).then(a.points[0].cmp(&b.points[0])));
    report.paths = mover.paths - start_paths;
    report.seconds = clock.elapsed().as_secs_f64();
    Ok((components, report))
}

/// The isolated solutions as components of dimension 0 (degree 1, their multiplicities).
pub fn isolated_components(w: &WitnessSet) -> Vec<Component> {
    (0..w.points.len())
        .map(|i| Component {
            dimension: 0,
            degree: 1,
            points: vec![i],
            multiplicity: w.multiplicities.get(i).copied().unwrap_or(1),
            certified: true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_join_deterministically() {
        let mut c = Classes::new(5);
        assert!(c.union(3, 1));
        assert!(c.union(4, 3));
        assert!(!c.union(1, 4));
        assert_eq!(c.groups(), vec![vec![0], vec![1, 3, 4], vec![2]]);
    }
}
