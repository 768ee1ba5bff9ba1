//! Clusters of simple roots that a Cauchy endgame closed as one multiple root.
//!
//! Loops around a cluster of `m` nonsingular roots close like winding number `m` when their
//! radius exceeds the cluster's, and their estimate is the cluster's centroid. Where that
//! centroid's Jacobian looks singular and its residual looks small against the
//! coefficients, [`super::Refiner::process`] would call it a singular solution: the six roots
//! `k·10⁻⁴` (k = 1…6) of `Π (x − k·10⁻⁴)` gave one "singular" point of winding number 6 at
//! 3.5·10⁻⁴, with `|F| = 3.5·10⁻²⁴` against coefficients near 1.
//!
//! The test here is scale-free: at a multiple root, `F` at the estimate is at the rounding
//! level of its own terms (`|f_k(x̃)| ≪ Σ_a |c_a·x̃^a|`; it vanishes to order `m`), while at
//! the centroid of a cluster it is not (3.5·10⁻⁶ of the terms above). Such an endpoint's path
//! is tracked in double-double from its checkpoint to `t = 1` (through its branch point,
//! [`crate::track::dd`]), refined by Newton in double-double, and the root it reaches counts
//! only when the Krawczyk test ([`crate::certify`]) proves it simple. Otherwise the endpoint
//! stays singular. Paths reaching the same root are merged and re-tracked as duplicates
//! like any other ([`crate::report::Tally`]).

use super::{Endpoint, Refiner};
use num_complex::Complex64 as C64;

/// `|f_k(x̃)| / Σ_a |c_a·x̃^a|` above this for some equation: the estimate is not a root to
/// the rounding level of its terms (a multiple root's Cauchy estimate, accurate to `δ`,
/// leaves about `δ^m` of them).
pub const CLUSTER_TERMS_RESIDUAL: f64 = 1e-10;

/// `max_k |f_k(x)| / Σ_a |c_a·x^a|` (0 where an equation and its terms vanish).
fn residual_against_terms(system: &crate::system::System, x: &[C64]) -> f64 {
    system
        .equations
        .iter()
        .map(|f| {
            let v = f.eval(x).norm();
            if v == 0.0 {
                0.0
            } else {
                v / f.abs_scale(x)
            }
        })
        .fold(0.0, f64::max)
}

impl Refiner<'_> {
    /// For a Cauchy estimate `x` about to be called singular: when it is no root to the
    /// rounding level of its terms, the path tracked in double-double from its checkpoint
    /// and, when that reaches a root the Krawczyk test certifies, `ep` made that
    /// nonsingular solution and its homogeneous coordinates returned. `ep` is left as it
    /// was (but for its step counts) otherwise.
    pub(super) fn split_cluster(
        &self,
        ep: &mut Endpoint,
        x: &[C64],
        checkpoint: Option<&(f64, Vec<C64>)>,
        lifts: Option<&[f64]>,
    ) -> Option<Vec<C64>> {
        if residual_against_terms(self.system, x) <= CLUSTER_TERMS_RESIDUAL {
            return None;
        }
        let before = ep.clone();
        let tried = self.finish_near_one(ep, checkpoint, lifts).filter(|_| {
            ep.coordinates.as_deref().is_some_and(|root| {
                crate::certify::Certifier::new(self.system)
                    .certify(root)
                    .is_some()
            })
        });
        if tried.is_none() {
            let (accepted, rejected) = (ep.accepted, ep.rejected);
            *ep = before;
            (ep.accepted, ep.rejected) = (accepted, rejected);
        }
        tried
    }
}
