//! Supports of a system (grouped by equality: the type of a semi-mixed system) and random
//! integer liftings of them.

use super::CellError;
use crate::system::System;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The supports of a square system, identical supports grouped.
///
/// `groups[g]` is a list of distinct exponent vectors; `equations[g]` the (increasing)
/// equations whose support is exactly that set (the multiplicity `k_g = equations[g].len()`).
/// `term_index[e][i]` is the index in equation `e`'s term list of point `i` of its group,
/// `None` for an origin added by [`Supports::with_origin`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Supports {
    pub n: usize,
    pub groups: Vec<Vec<Vec<i64>>>,
    pub equations: Vec<Vec<usize>>,
    pub group_of: Vec<usize>,
    pub term_index: Vec<Vec<Option<usize>>>,
}

impl Supports {
    /// Supports of `sys`: per equation the exponent vectors of its terms.
    pub fn from_system(sys: &System) -> Result<Supports, CellError> {
        let pts: Vec<Vec<Vec<i64>>> = sys
            .equations
            .iter()
            .map(|f| {
                f.terms
                    .iter()
                    .map(|t| t.exponents.iter().map(|&a| a as i64).collect())
                    .collect()
            })
            .collect();
        if sys.equations.len() != sys.n() {
            return Err(CellError::Input(format!(
                "system '{}': {} equations in {} variables (mixed cells need a square system)",
                sys.name,
                sys.equations.len(),
                sys.n()
            )));
        }
        Supports::from_exponents(sys.n(), pts)
    }

    /// Supports from explicit exponent lists (one list per equation, `n` lists).
    pub fn from_exponents(n: usize, eqs: Vec<Vec<Vec<i64>>>) -> Result<Supports, CellError> {
        if eqs.len() != n {
            return Err(CellError::Input(format!(
                "{} supports for {n} variables",
                eqs.len()
            )));
        }
        if n == 0 {
            return Err(CellError::Input("empty system".into()));
        }
        let mut groups: Vec<Vec<Vec<i64>>> = Vec::new();
        let mut sorted_keys: Vec<Vec<Vec<i64>>> = Vec::new();
        let mut equations: Vec<Vec<usize>> = Vec::new();
        let mut group_of = vec![0; n];
        for (e, pts) in eqs.iter().enumerate() {
            if pts.is_empty() {
                return Err(CellError::Input(format!("equation {}: no terms", e + 1)));
            }
            // Exponent vectors seen so far in this equation (a set: a linear search per
            // term made a 60,000-term equation quadratic).
            let mut seen: std::collections::HashSet<&[i64]> = Default::default();
            for (i, p) in pts.iter().enumerate() {
                if p.len() != n {
                    return Err(CellError::Input(format!(
                        "equation {}, term {}: {} exponents for {n} variables",
                        e + 1,
                        i + 1,
                        p.len()
                    )));
                }
                if p.iter().any(|&a| a.unsigned_abs() > 1 << 20) {
                    return Err(CellError::Input(format!(
                        "equation {}, term {}: exponent larger than 2^20",
                        e + 1,
                        i + 1
                    )));
                }
                if !seen.insert(p.as_slice()) {
                    return Err(CellError::Input(format!(
                        "equation {}, term {}: repeated exponent vector",
                        e + 1,
                        i + 1
                    )));
                }
            }
            let mut key = pts.clone();
            key.sort();
            match sorted_keys.iter().position(|k| *k == key) {
                Some(g) => {
                    equations[g].push(e);
                    group_of[e] = g;
                }
                None => {
                    group_of[e] = groups.len();
                    groups.push(pts.clone());
                    sorted_keys.push(key);
                    equations.push(vec![e]);
                }
            }
        }
        let term_index = (0..n)
            .map(|e| {
                let at: std::collections::HashMap<&[i64], usize> = eqs[e]
                    .iter()
                    .enumerate()
                    .map(|(k, q)| (q.as_slice(), k))
                    .collect();
                groups[group_of[e]]
                    .iter()
                    .map(|p| at.get(p.as_slice()).copied())
                    .collect()
            })
            .collect();
        Ok(Supports {
            n,
            groups,
            equations,
            group_of,
            term_index,
        })
    }

    /// The support of equation `e` (its group's point list; cell pairs index into it).
    pub fn support(&self, e: usize) -> &[Vec<i64>] {
        &self.groups[self.group_of[e]]
    }

    /// True when every support contains the origin (every equation has a constant term).
    pub fn has_origin(&self) -> bool {
        self.groups
            .iter()
            .all(|g| g.iter().any(|p| p.iter().all(|&a| a == 0)))
    }

    /// The same supports with the origin appended to every group lacking it
    /// (`term_index` is `None` there). Used for the stable mixed volume.
    pub fn with_origin(&self) -> Supports {
        let mut s = self.clone();
        let zero = vec![0i64; self.n];
        for g in 0..s.groups.len() {
            if !s.groups[g].contains(&zero) {
                s.groups[g].push(zero.clone());
                for &e in &s.equations[g] {
                    s.term_index[e].push(None);
                }
            }
        }
        s
    }

    /// Total number of points over the groups.
    pub fn num_points(&self) -> usize {
        self.groups.iter().map(|g| g.len()).sum()
    }
}

/// A lifting `ω`: one integer per point of every group (equations of a group share it).
///
/// `coarse` is set by [`Lifting::stable`]: the Huber–Sturmfels lifting (1 at the origin,
/// 0 elsewhere) whose cells with nonnegative inner normal are the stable ones; then
/// `values = generic + big · coarse`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lifting {
    pub values: Vec<Vec<i64>>,
    pub coarse: Option<Vec<Vec<i64>>>,
}

/// Generic lifting values are drawn uniformly from `[0, LIFT_RANGE)` unless a wider range
/// is asked for ([`Lifting::random_in`]).
pub const LIFT_RANGE: i64 = 1 << 20;

impl Lifting {
    /// Uniform random integers in `[0, 2^20)` from `ChaCha8Rng::seed_from_u64(seed)`.
    pub fn random(s: &Supports, seed: u64) -> Lifting {
        Lifting::random_in(s, seed, LIFT_RANGE)
    }

    /// Uniform random integers in `[0, range)` from `ChaCha8Rng::seed_from_u64(seed)`.
    /// An exact tie (a support point on a cell's lifted facet) is a linear relation among
    /// the values: each relation holds for at most one value of a free coordinate, so a
    /// draw meets one with probability ≲ (cells × points) / `range`.
    pub fn random_in(s: &Supports, seed: u64, range: i64) -> Lifting {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Lifting {
            values: s
                .groups
                .iter()
                .map(|g| g.iter().map(|_| rng.random_range(0..range)).collect())
                .collect(),
            coarse: None,
        }
    }

    /// Lifting for the stable mixed volume of `s` (which should contain the origin in every
    /// group, see [`Supports::with_origin`]): random generic values plus `big` on every
    /// origin that [`Supports::with_origin`] added. `big` must be large enough that the
    /// subdivision refines the coarse one; the enumeration checks this exactly for every
    /// cell and reports [`CellError::LiftingTooSmall`] otherwise.
    pub fn stable(s: &Supports, seed: u64, big: i64) -> Lifting {
        Lifting::stable_in(s, seed, LIFT_RANGE, big)
    }

    /// [`Lifting::stable`] with its generic part drawn from `[0, range)`.
    ///
    /// The coarse lifting is Huber–Sturmfels' `ω₀` (Bernstein's theorem in affine space,
    /// 1997): `ω₀ = 1` at an origin absent from the equation's own support, `0` at every
    /// other point, a constant term of the system included. Lifting a constant term that
    /// the system has would cut off cells with roots in `C^n` (the supports of i1, all
    /// with their constant, lost 25 of its 66 roots so).
    pub fn stable_in(s: &Supports, seed: u64, range: i64, big: i64) -> Lifting {
        let mut l = Lifting::random_in(s, seed, range);
        let coarse: Vec<Vec<i64>> = s
            .groups
            .iter()
            .zip(&s.equations)
            .map(|(g, eqs)| {
                g.iter()
                    .enumerate()
                    .map(|(i, p)| {
                        let added = s.term_index[eqs[0]][i].is_none();
                        (added && p.iter().all(|&a| a == 0)) as i64
                    })
                    .collect()
            })
            .collect();
        for (vg, cg) in l.values.iter_mut().zip(&coarse) {
            for (v, c) in vg.iter_mut().zip(cg) {
                *v += big * c;
            }
        }
        l.coarse = Some(coarse);
        l
    }

    /// Lifting value of point `i` of equation `e`'s support.
    pub fn of(&self, s: &Supports, e: usize, i: usize) -> i64 {
        self.values[s.group_of[e]][i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the origins that `with_origin` added carry the coarse lift (and `big`); a
    /// constant term of the system is lifted by its generic part alone.
    #[test]
    fn stable_lifting_raises_only_the_added_origins() {
        // x + 1 (has its constant), x·y + y (has not)
        let s = Supports::from_exponents(
            2,
            vec![vec![vec![1, 0], vec![0, 0]], vec![vec![1, 1], vec![0, 1]]],
        )
        .unwrap()
        .with_origin();
        let big = 1 << 40;
        let l = Lifting::stable_in(&s, 3, 1 << 10, big);
        let coarse = l.coarse.as_ref().unwrap();
        assert_eq!(coarse[0], vec![0, 0], "the system's own constant");
        assert_eq!(coarse[1], vec![0, 0, 1], "the added origin");
        let generic = Lifting::random_in(&s, 3, 1 << 10);
        for g in 0..2 {
            for (i, (&v, &w)) in l.values[g].iter().zip(&generic.values[g]).enumerate() {
                assert_eq!(v, w + big * coarse[g][i], "group {g}, point {i}");
            }
        }
    }
}
