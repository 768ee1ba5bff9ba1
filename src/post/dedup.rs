//! Clustering of endpoints into distinct solutions: two points are the same solution when
//! `‖x − x'‖_∞ ≤ max(tol, tol')·(1 + max(‖x‖_∞, ‖x'‖_∞))` (each point may carry its own
//! tolerance, e.g. scaled by its condition number). Sweep along a fixed random projection
//! (|projection difference| ≤ ‖w‖₁·‖x − x'‖_∞ bounds the candidates) with union–find.
//!
//! Parallelism: the candidate pairs are found with rayon's parallel iterators on the current
//! pool (the solver installs its own, of `--threads` threads); the union–find is sequential.

use num_complex::Complex64 as C64;
use rayon::prelude::*;

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// `‖x‖_∞ = max_j |x_j|` (one square root, not one per coordinate).
pub fn sup_norm(x: &[C64]) -> f64 {
    x.iter().map(|z| z.norm_sqr()).fold(0.0, f64::max).sqrt()
}

/// `‖a − b‖_∞ ≤ bound`, compared in squares, stopping at the first coordinate beyond it.
fn within(a: &[C64], b: &[C64], bound: f64) -> bool {
    let bound2 = bound * bound;
    a.iter().zip(b).all(|(u, v)| (u - v).norm_sqr() <= bound2)
}

/// `‖a − b‖_∞ ≤ tol·(1 + max(‖a‖_∞, ‖b‖_∞))`.
pub fn close(a: &[C64], b: &[C64], tol: f64) -> bool {
    within(a, b, tol * (1.0 + sup_norm(a).max(sup_norm(b))))
}

/// [`close`] with the scales `1 + ‖a‖_∞`, `1 + ‖b‖_∞` already known.
fn close_scaled(a: &[C64], b: &[C64], tol: f64, scale_a: f64, scale_b: f64) -> bool {
    within(a, b, tol * scale_a.max(scale_b))
}

/// The fixed projection the sweep sorts points by: `Σ_j a_j·Re x_j + b_j·Im x_j` with
/// deterministic weights in [0.5, 1.5) (irrational-ish, so that distinct points rarely tie);
/// `|key(x) − key(x')| ≤ weight_sum·‖x − x'‖_∞`.
pub struct Projection {
    weights: Vec<(f64, f64)>,
    pub weight_sum: f64,
}

impl Projection {
    pub fn new(n: usize) -> Projection {
        let weights: Vec<(f64, f64)> = (0..n)
            .map(|j| {
                (
                    ((j as f64 + 1.0) * 0.618_033_988_7).fract() + 0.5,
                    ((j as f64 + 1.0) * 0.414_213_562_4).fract() + 0.5,
                )
            })
            .collect();
        let weight_sum = weights.iter().map(|(a, b)| a + b).sum();
        Projection {
            weights,
            weight_sum,
        }
    }

    /// How far along the projection a point `x'` with `close(x, x', tol)` can lie from `x`,
    /// per unit of `1 + ‖x‖_∞`: `|key(x) − key(x')| ≤ weight_sum·‖x − x'‖∞` and
    /// `1 + max(‖x‖, ‖x'‖) ≤ (1 + ‖x‖)/(1 − tol)`; a margin of 1e-9 for the keys' rounding;
    /// ∞ for `tol ≥ 1` (everything is close).
    pub fn reach(&self, tol: f64) -> f64 {
        if tol < 1.0 {
            self.weight_sum * tol / (1.0 - tol) * (1.0 + 1e-9)
        } else {
            f64::INFINITY
        }
    }

    pub fn key(&self, x: &[C64]) -> f64 {
        x.iter()
            .zip(&self.weights)
            .map(|(z, (a, b))| a * z.re + b * z.im)
            .sum()
    }
}

/// Points sorted along a [`Projection`], with their scales `1 + ‖x‖_∞`.
struct Sorted {
    proj: Projection,
    /// `(key, index)` in key order (ties by index).
    order: Vec<(f64, usize)>,
    /// `1 + ‖x_i‖_∞`, by index.
    scales: Vec<f64>,
}

impl Sorted {
    fn new<P: AsRef<[C64]> + Sync>(points: &[P], n: usize) -> Sorted {
        let proj = Projection::new(n);
        let scales: Vec<f64> = points
            .par_iter()
            .map(|x| 1.0 + sup_norm(x.as_ref()))
            .collect();
        let mut order: Vec<(f64, usize)> = points
            .par_iter()
            .enumerate()
            .map(|(i, x)| (proj.key(x.as_ref()), i))
            .collect();
        order.par_sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        Sorted {
            proj,
            order,
            scales,
        }
    }

    /// The positions in `order` whose keys lie within `bound` of `key`.
    fn window(&self, key: f64, bound: f64) -> std::ops::Range<usize> {
        let lo = self.order.partition_point(|&(k, _)| k < key - bound);
        let hi = self.order.partition_point(|&(k, _)| k <= key + bound);
        lo..hi
    }
}

/// Cluster label (the smallest index of its cluster) of each point.
pub fn cluster<P: AsRef<[C64]> + Sync>(points: &[P], tol: f64) -> Vec<usize> {
    cluster_with(points, &vec![tol; points.len()])
}

/// [`cluster`] with a tolerance per point (a pair uses the larger of its two).
///
/// Each point looks for partners within its own reach ([`Projection::reach`] of its
/// tolerance, times its scale): a pair close at `max(tol, tol')` lies within the reach of
/// the point with the larger tolerance, so that point tests it (the earlier in key order on
/// a tie), and every pair is tested once. One point of tolerance `DEDUP_TOL_MAX` thus no
/// longer widens every point's window, as the largest tolerance did for all points before.
pub fn cluster_with<P: AsRef<[C64]> + Sync>(points: &[P], tols: &[f64]) -> Vec<usize> {
    let m = points.len();
    let mut parent: Vec<usize> = (0..m).collect();
    let Some(n) = points.first().map(|x| x.as_ref().len()) else {
        return parent;
    };
    let sorted = Sorted::new(points, n);
    let (order, scales) = (&sorted.order, &sorted.scales);
    let pairs: Vec<(usize, usize)> = (0..m)
        .into_par_iter()
        .flat_map_iter(|a| {
            let (ka, ia) = order[a];
            let bound = sorted.proj.reach(tols[ia]) * scales[ia];
            let range = sorted.window(ka, bound);
            let first = range.start;
            // Partners with a smaller tolerance anywhere in the window; with an equal one,
            // only those after `a`.
            order[range]
                .iter()
                .enumerate()
                .filter_map(move |(j, &(_, ib))| {
                    let mine = tols[ib] < tols[ia] || (tols[ib] == tols[ia] && first + j > a);
                    let (x, y) = (points[ia].as_ref(), points[ib].as_ref());
                    (mine && close_scaled(x, y, tols[ia], scales[ia], scales[ib]))
                        .then_some((ia, ib))
                })
        })
        .collect();
    for (ia, ib) in pairs {
        let (ra, rb) = (find(&mut parent, ia), find(&mut parent, ib));
        if ra != rb {
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            parent[hi] = lo;
        }
    }
    (0..m).map(|i| find(&mut parent, i)).collect()
}
/// For each query, the smallest index of a target [`close`] to it at `tol` (`None`: no
/// target is). The sweep of [`cluster_with`]: targets sorted along the projection, each query
/// compares only those whose key lies within `reach(tol)·(1 + ‖q‖∞)` of its own, so the
/// cost is about (targets + queries)·log(targets) where the points are spread, not
/// targets × queries: pair by pair, `report::Tally::solutions` matching cyclic-12's ~10⁴
/// singular clusters against its 3.7·10⁵ nonsingular solutions takes minutes per call.
pub fn first_close(targets: &[&[C64]], queries: &[&[C64]], tol: f64) -> Vec<Option<usize>> {
    let Some(n) = targets.first().or(queries.first()).map(|x| x.len()) else {
        return vec![None; queries.len()];
    };
    let sorted = Sorted::new(targets, n);
    let reach = sorted.proj.reach(tol);
    queries
        .par_iter()
        .map(|q| {
            let scale = 1.0 + sup_norm(q);
            let range = sorted.window(sorted.proj.key(q), reach * scale);
            sorted.order[range]
                .iter()
                .filter(|&&(_, i)| close_scaled(targets[i], q, tol, sorted.scales[i], scale))
                .map(|&(_, i)| i)
                .min()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `first_close` agrees with comparing every pair: targets with repeats and points of
    /// norm up to 1e3, queries on them (within the tolerance, or just beyond it), near two
    /// of them, and far from all.
    #[test]
    fn first_close_agrees_with_every_pair() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let n = 4;
        let tol = 1e-4;
        let mut point = |scale: f64| -> Vec<C64> {
            (0..n)
                .map(|_| C64::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5) * scale)
                .collect()
        };
        let mut targets: Vec<Vec<C64>> = (0..600).map(|i| point(10f64.powi(i % 4))).collect();
        for i in 0..50 {
            let t = targets[3 * i].clone();
            targets.push(t); // a repeated solution: the smaller index wins
        }
        let mut queries: Vec<Vec<C64>> = Vec::new();
        for (i, t) in targets.iter().enumerate().take(400) {
            let scale = 1.0 + t.iter().map(|z| z.norm()).fold(0.0, f64::max);
            let f = [0.0, 0.5, 0.99, 1.01, 3.0][i % 5] * tol * scale;
            let mut q = t.clone();
            q[i % n] += C64::new(0.6 * f, -0.8 * f);
            queries.push(q);
        }
        for i in 0..100 {
            queries.push(point(10f64.powi(i % 4)));
        }
        let (tr, qr): (Vec<&[C64]>, Vec<&[C64]>) = (
            targets.iter().map(|v| &v[..]).collect(),
            queries.iter().map(|v| &v[..]).collect(),
        );
        let got = first_close(&tr, &qr, tol);
        let want: Vec<Option<usize>> = qr
            .iter()
            .map(|q| tr.iter().position(|t| close(t, q, tol)))
            .collect();
        assert_eq!(got, want);
        let found = got.iter().filter(|g| g.is_some()).count();
        assert!((240..500).contains(&found), "{found} of {} found", qr.len());
        assert_eq!(first_close(&[], &qr, tol), vec![None; qr.len()]);
    }

    #[test]
    fn clusters_near_points_and_separates_far_ones() {
        let p = |a: f64, b: f64| vec![C64::new(a, 0.0), C64::new(b, 1.0)];
        let pts = vec![
            p(1.0, 2.0),
            p(3.0, 4.0),
            p(1.0 + 1e-12, 2.0),
            p(1.0, 2.0 + 1e-3),
            p(3.0, 4.0 - 1e-13),
        ];
        let c = cluster(&pts, 1e-8);
        assert_eq!(c, vec![0, 1, 0, 3, 1]);
    }

    /// The sweep gives the same clusters as comparing every pair, for points of very
    /// different norms (1e-3 … 1e6) in small clusters, with per-point tolerances.
    #[test]
    fn sweep_equals_all_pairs() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..20 {
            let mut pts = Vec::new();
            let mut tols = Vec::new();
            for _ in 0..60 {
                let norm = 10f64.powf(rng.random_range(-3.0..6.0));
                let c: Vec<C64> = (0..4)
                    .map(|_| {
                        C64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)) * norm
                    })
                    .collect();
                for _ in 0..rng.random_range(1..4) {
                    let tol: f64 = 10f64.powf(rng.random_range(-8.0..-5.0));
                    // Within about the tolerance of the centre: some pairs close, some not.
                    let d = tol * (1.0 + norm) * rng.random_range(0.0..2.0);
                    pts.push(
                        c.iter()
                            .map(|z| z + C64::new(d, -0.5 * d))
                            .collect::<Vec<_>>(),
                    );
                    tols.push(tol);
                }
            }
            let got = cluster_with(&pts, &tols);
            let mut parent: Vec<usize> = (0..pts.len()).collect();
            for i in 0..pts.len() {
                for j in i + 1..pts.len() {
                    if close(&pts[i], &pts[j], tols[i].max(tols[j])) {
                        let (ri, rj) = (find(&mut parent, i), find(&mut parent, j));
                        let (lo, hi) = (ri.min(rj), ri.max(rj));
                        parent[hi] = lo;
                    }
                }
            }
            let want: Vec<usize> = (0..pts.len()).map(|i| find(&mut parent, i)).collect();
            assert_eq!(got, want);
            assert!(
                want.iter().enumerate().any(|(i, &r)| r != i),
                "some clusters merge"
            );
        }
    }
}
