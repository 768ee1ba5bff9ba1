//! Start systems: total degree, polyhedral, multi-homogeneous, and start points given
//! with their homotopy (parameter homotopies, a user's start system). Each produces a
//! [`crate::homotopy::Homotopy`] and a stream of start points. [`choose`] picks one of the
//! first three for `--start auto`.

pub mod given;
pub mod mhom;
pub mod polyhedral;
pub mod total_degree;

/// The factor `s_k` of start equation `k` of the γ-trick homotopies (total degree and
/// m-hom), `γ(1 − t)·s_k·g_k + t·f_k`: the smallest coefficient modulus of `f_k`, but at
/// least `1/START_MODULUS_SPREAD` of its largest, `s = max(min_a |c_a|, max_a |c_a| / 16)`
/// (over the nonzero finite moduli; 1 for an equation without such coefficients).
///
/// `s` is homogeneous of degree 1 in the coefficient moduli (`s(λ·f) = |λ|·s(f)`), so the
/// homotopy of `λ·f_k` is `λ` times that of `f_k` for `λ > 0`, column by column: the
/// same paths whatever factor an equation was multiplied by (and whatever power of two the
/// equilibration left on it). With `s = 1` the start of an equation of size 1e-20 dominated
/// until `1 − t ≈ 1e-20`: the sparse chain with its equations scaled by 10^[−30, 30] lost
/// up to six of its ten roots from the m-hom start (chain-8). For `λ` of another phase the
/// homotopy is that of another γ for that equation (as generic).
///
/// Where the moduli span at most [`polyhedral::start::START_MODULUS_SPREAD`], `s` is the
/// smallest one, the polyhedral start's modulus ([`polyhedral::start::start_modulus`]);
/// every shipped family but chandra has smallest modulus 1 there, and so the homotopy it
/// always had. The floor keeps a tiny coefficient (`x² + 1e-17·x − 1`) from making the
/// start vanish against the target ([`total_degree::start_delay`]).
pub fn start_scale(f: &crate::system::Polynomial) -> f64 {
    f.coeff_moduli().map_or(1.0, |(lo, hi)| {
        lo.max(hi / polyhedral::start::START_MODULUS_SPREAD)
    })
}

/// The start equations `g_k` multiplied by [`start_scale`]`(f_k)` of the target's.
pub fn scaled_start(
    target: &crate::system::System,
    start: Vec<crate::system::Polynomial>,
) -> Vec<crate::system::Polynomial> {
    start
        .into_iter()
        .zip(&target.equations)
        .map(|(mut g, f)| {
            let s = start_scale(f);
            g.terms.iter_mut().for_each(|t| t.coeff *= s);
            g
        })
        .collect()
}

/// A total-degree or m-hom start is chosen when its paths are at most this many times the
/// stable mixed volume (the root count of the polyhedral start in C^n).
///
/// Where the Bézout count equals the mixed volume a polyhedral path costs 2–3 times a
/// total-degree path, in steps, not in cost per step (one thread, seed 1, steps per path
/// polyhedral / total degree: katsura-7 110 / 45, katsura-9 126 / 49, noon-6 50 / 19,
/// noon-7 58 / 19; the cost of a step within 20 % of each other). A path beyond the root
/// count diverges and costs about as much as a polyhedral path (cyclic-7: 1.37 ms per
/// total-degree path, 1.13 ms per polyhedral path). With polyhedral cost `c_p ≈ 2.5 c_t`
/// and diverging cost `c_d ≈ 2.5 c_t`, total degree is cheaper while `D − MV < 0.6 MV`;
/// 1.25 leaves room for systems whose polyhedral paths are cheaper than these.
pub const BEZOUT_OVER_MIXED_VOLUME: f64 = 1.25;

/// The best m-hom partition is searched for only when the variables are at most this
/// many (the exhaustive search over set partitions takes milliseconds up to n = 8, 0.25 s
/// at n = 9 and 0.75 s at n = 10, more than a solve of eco-9)…
pub const MHOM_SEARCH_MAX_N: usize = 8;
/// …or when the mixed volume is at least this many paths (a solve of seconds at least,
/// where a second of search is small).
pub const MHOM_SEARCH_MIN_PATHS: u128 = 10_000;

/// `--start auto` keeps an m-hom start only while its start system, expanded into the
/// monomials the evaluator works on, has at most this many times the terms of the target
/// system. The linear-product start `G` of a partition multiplies dense linear forms: an
/// equation of degree `d_j` in a group of `g_j` variables has `∏_j C(g_j + d_j, d_j)` terms,
/// and every step of `γ(1 − t)·G + t·F` evaluates them all, while a polyhedral step
/// evaluates `F`'s terms only. chandra-n's best partition {H1 … H(n−1)}{Hn} has the
/// Bézout number 2^(n−1) = its mixed volume, but a start of 515 terms against the target's
/// 110 at n = 10: on the 2-core container a step cost 136 µs against 54 µs polyhedral, and
/// the run 2.2× as long (chandra-8 1.8×, chandra-11 3.7×); on an H200 chandra-16 took
/// 161 s with the m-hom start against 46 s with the polyhedral one. A bilinear system's
/// start has as many terms as the system itself (ratio 1). Total-degree starts
/// (`x_i^{d_i} − 1`, two terms an equation) are never limited by this.
pub const MHOM_START_TERMS_OVER_TARGET: f64 = 2.0;

/// What the m-hom search found: the Bézout number of the best partition, and the terms of
/// its linear-product start system expanded ([`mhom::start_terms`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MhomCount {
    pub bezout: u128,
    pub start_terms: u128,
}

/// The start system `--start auto` settles on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chosen {
    TotalDegree,
    Mhom,
    Polyhedral,
}

/// The choice of `--start auto` and the reason for the summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    pub start: Chosen,
    pub reason: String,
}

/// Chooses the start system from the total degree `td` (`None`: a Laurent system or one
/// beyond u128), the stable mixed volume `mv` (the polyhedral start's paths in C^n), and the m-hom Bézout number of the best
/// partition, which `mhom` computes when called (it is called only when the total degree
/// is too large, and the search is cheap enough: see [`MHOM_SEARCH_MAX_N`]).
///
/// Total degree when `td ≤` [`BEZOUT_OVER_MIXED_VOLUME`]` · mv`; else m-hom when its count
/// is, and its start system has at most [`MHOM_START_TERMS_OVER_TARGET`] times the
/// `target_terms` of the system; else polyhedral.
pub fn choose(
    td: Option<u128>,
    mv: u128,
    n: usize,
    target_terms: u128,
    mhom: impl FnOnce() -> Option<MhomCount>,
) -> Choice {
    let close = |count: u128| (count as f64) <= BEZOUT_OVER_MIXED_VOLUME * mv as f64;
    let k = BEZOUT_OVER_MIXED_VOLUME;
    if let Some(d) = td.filter(|&d| close(d)) {
        return Choice {
            start: Chosen::TotalDegree,
            reason: format!("total degree {d} ≤ {k} × stable mixed volume {mv}"),
        };
    }
    let about_td = td.map_or("no total degree (Laurent)".to_string(), |d| {
        format!("total degree {d} > {k} × stable mixed volume {mv}")
    });
    if n <= MHOM_SEARCH_MAX_N || mv >= MHOM_SEARCH_MIN_PATHS {
        let heavy = |c: &MhomCount| {
            c.start_terms as f64 > MHOM_START_TERMS_OVER_TARGET * target_terms as f64
        };
        match mhom() {
            Some(c) if close(c.bezout) && heavy(&c) => {
                return Choice {
                    start: Chosen::Polyhedral,
                    reason: format!(
                        "{about_td}; m-hom Bézout {} ≤ {k} × stable mixed volume {mv}, but its \
                         start system has {} terms against the system's {target_terms}",
                        c.bezout, c.start_terms
                    ),
                }
            }
            Some(MhomCount { bezout: b, .. }) if close(b) => {
                return Choice {
                    start: Chosen::Mhom,
                    reason: format!(
                        "{about_td}; m-hom Bézout {b} ≤ {k} × stable mixed volume {mv}"
                    ),
                }
            }
            Some(MhomCount { bezout: b, .. }) => {
                return Choice {
                    start: Chosen::Polyhedral,
                    reason: format!("{about_td}, m-hom Bézout {b} too"),
                }
            }
            None => {}
        }
    }
    Choice {
        start: Chosen::Polyhedral,
        reason: about_td,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start factor is the smallest modulus within a span of 16, `max/16` beyond, 1
    /// without coefficients, and scales with the equation: `s(λ·f) = |λ|·s(f)`.
    #[test]
    fn the_start_scale_is_homogeneous() {
        use crate::system::{Polynomial, Term};
        use num_complex::Complex64 as C64;
        let poly = |cs: &[C64]| {
            Polynomial::from_terms(cs.iter().enumerate().map(|(k, &c)| Term {
                coeff: c,
                exponents: vec![k as i32],
            }))
        };
        let re = |x: f64| C64::new(x, 0.0);
        assert_eq!(start_scale(&poly(&[re(1.0), re(-1.1), re(2.0)])), 1.0);
        assert_eq!(start_scale(&poly(&[re(3.0), C64::new(0.0, -48.0)])), 3.0);
        // (x − 1)^4: span 6; x² + 1e-17·x − 1: the floor
        assert_eq!(start_scale(&poly(&[1., -4., 6., -4., 1.].map(re))), 1.0);
        assert_eq!(
            start_scale(&poly(&[re(-1.0), re(1e-17), re(1.0)])),
            1.0 / 16.0
        );
        assert_eq!(start_scale(&poly(&[re(0.5), re(1e3)])), 1e3 / 16.0);
        assert_eq!(start_scale(&Polynomial { terms: vec![] }), 1.0);
        for f in [
            poly(&[re(1.0), re(-1.1), re(2.0)]),
            poly(&[re(-1.0), re(1e-17), re(1.0)]),
            poly(&[re(0.5), C64::new(7.0, 1e3)]),
        ] {
            for lambda in [
                C64::new(1e-20, 0.0),
                C64::new(-3e25, 1e25),
                C64::new(0.0, 0.3),
            ] {
                let g = poly(&f.terms.iter().map(|t| lambda * t.coeff).collect::<Vec<_>>());
                let (a, b) = (start_scale(&f) * lambda.norm(), start_scale(&g));
                assert!(
                    (a - b).abs() <= 1e-15 * b,
                    "{f:?} by {lambda}: {b} against {a}"
                );
            }
        }
    }

    /// Bézout counts close to the mixed volume choose the cheaper paths; far ones the
    /// polyhedral start; the m-hom search runs only where the total degree is too large and
    /// the search is cheap.
    #[test]
    fn the_start_follows_the_root_counts() {
        let never = || -> Option<MhomCount> { panic!("no m-hom search expected") };
        let found = |bezout, start_terms| {
            move || {
                Some(MhomCount {
                    bezout,
                    start_terms,
                })
            }
        };
        // katsura-9: D = MV = 512
        let c = choose(Some(512), 512, 10, 100, never);
        assert_eq!(c.start, Chosen::TotalDegree);
        assert_eq!(
            c.reason,
            "total degree 512 ≤ 1.25 × stable mixed volume 512"
        );
        // noon-6: 729 against 717
        assert_eq!(
            choose(Some(729), 717, 6, 100, never).start,
            Chosen::TotalDegree
        );
        // at the edge: 1.25 × 800 = 1000
        assert_eq!(
            choose(Some(1000), 800, 12, 100, never).start,
            Chosen::TotalDegree
        );
        assert_eq!(
            choose(Some(1001), 800, 12, 100, never).start,
            Chosen::Polyhedral
        );
        // cyclic-7: 5040 against 924, n = 7: the m-hom count (5040) is no better
        let c = choose(Some(5040), 924, 7, 100, found(5040, 100));
        assert_eq!(c.start, Chosen::Polyhedral);
        assert_eq!(
            c.reason,
            "total degree 5040 > 1.25 × stable mixed volume 924, m-hom Bézout 5040 too"
        );
        // a bilinear system: the m-hom count meets the mixed volume
        let c = choose(Some(4096), 70, 8, 100, found(70, 100));
        assert_eq!(c.start, Chosen::Mhom);
        assert_eq!(
            c.reason,
            "total degree 4096 > 1.25 × stable mixed volume 70; m-hom Bézout 70 ≤ 1.25 × \
             stable mixed volume 70"
        );
        // chandra-8: the count meets the mixed volume, but the start has 268 terms
        // against the system's 72
        let c = choose(Some(256), 128, 8, 72, found(128, 268));
        assert_eq!(c.start, Chosen::Polyhedral);
        assert!(c
            .reason
            .ends_with("start system has 268 terms against the system's 72"));
        assert_eq!(
            choose(Some(256), 128, 8, 72, found(128, 144)).start,
            Chosen::Mhom
        );
        // eco-9 (n = 9, 128 paths): no search, polyhedral
        assert_eq!(
            choose(Some(4374), 128, 9, 100, never).start,
            Chosen::Polyhedral
        );
        // large runs search whatever n
        let mut searched = false;
        let c = choose(Some(1 << 30), 200_000, 14, 100, || {
            searched = true;
            None
        });
        assert!(searched && c.start == Chosen::Polyhedral);
        // a Laurent system has no total degree
        let c = choose(None, 10, 3, 100, || None);
        assert_eq!(c.start, Chosen::Polyhedral);
        assert!(c.reason.contains("Laurent"));
    }
}
