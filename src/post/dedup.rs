//! Clustering of endpoints into distinct solutions: two points are the same solution when
//! `‖x − x'‖_∞ ≤ max(tol, tol')·(1 + max(‖x‖_∞, ‖x'‖_∞))` (each point may carry its own
//! tolerance, e.g. scaled by its condition number). Sweep along a fixed random projection
//! (|projection difference| ≤ ‖w‖₁·‖x − x'‖_∞ bounds the candidates) with union–find.

use num_complex::Complex64 as C64;

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn close(a: &[C64], b: &[C64], tol: f64) -> bool {
    let na = a.iter().map(|z| z.norm()).fold(0.0, f64::max);
    let nb = b.iter().map(|z| z.norm()).fold(0.0, f64::max);
    let d = a
        .iter()
        .zip(b)
        .map(|(u, v)| (u - v).norm())
        .fold(0.0, f64::max);
    d <= tol * (1.0 + na.max(nb))
}

/// Cluster label (the smallest index of its cluster) of each point.
pub fn cluster(points: &[Vec<C64>], tol: f64) -> Vec<usize> {
    cluster_with(points, &vec![tol; points.len()])
}

/// [`cluster`] with a tolerance per point (a pair uses the larger of its two).
pub fn cluster_with(points: &[Vec<C64>], tols: &[f64]) -> Vec<usize> {
    let m = points.len();
    let tol = tols.iter().fold(0.0f64, |a, &t| a.max(t));
    let mut parent: Vec<usize> = (0..m).collect();
    if m == 0 {
        return parent;
    }
    let n = points[0].len();
    // Fixed weights (deterministic, irrational-ish so that distinct points rarely tie).
    let w: Vec<(f64, f64)> = (0..n)
        .map(|j| {
            (
                ((j as f64 + 1.0) * 0.618_033_988_7).fract() + 0.5,
                ((j as f64 + 1.0) * 0.414_213_562_4).fract() + 0.5,
            )
        })
        .collect();
    let wsum: f64 = w.iter().map(|(a, b)| a + b).sum();
    let key = |x: &[C64]| {
        x.iter()
            .zip(&w)
            .map(|(z, (a, b))| a * z.re + b * z.im)
            .sum::<f64>()
    };
    let scale = |x: &[C64]| 1.0 + x.iter().map(|z| z.norm()).fold(0.0, f64::max);
    let mut order: Vec<(f64, usize)> = points
        .iter()
        .enumerate()
        .map(|(i, x)| (key(x), i))
        .collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    for a in 0..m {
        let (ka, ia) = order[a];
        // Candidates lie within wsum·tol·(1 + max norm) along the key.
        for &(kb, ib) in &order[a + 1..] {
            let bound = wsum * tol * scale(&points[ia]).max(scale(&points[ib])) * 1.0000001;
            if kb - ka > bound {
                if kb - ka > wsum * tol * scale(&points[ia]) * 1e6 {
                    break;
                }
                continue;
            }
            if close(&points[ia], &points[ib], tols[ia].max(tols[ib])) {
                let (ra, rb) = (find(&mut parent, ia), find(&mut parent, ib));
                if ra != rb {
                    let (lo, hi) = (ra.min(rb), ra.max(rb));
                    parent[hi] = lo;
                }
            }
        }
    }
    (0..m).map(|i| find(&mut parent, i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
