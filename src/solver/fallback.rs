//! `--start auto` that chose a total-degree or m-hom start, whose paths end short of the
//! stable mixed volume, and `--start mhom` short of the gap recovery's bound after it
//! ([`super::gap`]): the polyhedral start is solved too, and its roots that no path
//! reached (nonsingular ones) are given to the paths at infinity or failed.
//!
//! The stable mixed volume bounds the isolated roots in C^n (Huber–Sturmfels; Li–Wang), and
//! `--start auto` picks a total-degree or m-hom start only when it has at most
//! [`crate::start::BEZOUT_OVER_MIXED_VOLUME`] times as many paths. Where fewer paths than
//! the stable mixed volume end at finite points, a path to a root may have left
//! double range on its way. The sparse chain `x_k·x_{k+1}^9 − 1 (k < n−1), x_{n−1}^10 − 1`
//! is such a system: m-hom Bézout number 10 = stable mixed volume, and where an m-hom path
//! nears the target `|x_0| ≈ |x_{n−1}|^{(−9)^{n−1}}`, beyond e^700 as soon as `|x_{n−1}|` is 1.001 away from the
//! unit circle (n = 8); 1–8 of its 10 paths reached t = 1 at infinity at n = 7–8, and
//! re-tracking them with tighter steps brought back only some. The polyhedral start tracks
//! in log coordinates there (`track::path::TO_LOG_ROUNDING`) and finds all ten.
//!
//! Which lost path leads to which missing root is not known: the roots are handed to the
//! lost paths in path order, and each such endpoint's reason says so.

use super::verify_diverging_max;
use crate::post::dedup::close;
use crate::post::{Endpoint, Status};
use crate::report::{clustering_tolerance, Tally, DEDUP_TOL};

/// The paths at infinity or failed of a run of `paths` paths, when fewer than `roots` end
/// at finite points and there are at most [`verify_diverging_max`] such paths (a system
/// with fewer roots than its stable mixed volume and many paths at infinity keeps its
/// answer: solving it again would cost a second run); `None` otherwise.
pub(super) fn short_of_root_count(tally: &Tally, paths: u64, roots: u64) -> Option<Vec<u64>> {
    let away = tally.paths_without_root();
    let short = paths.saturating_sub(away.len() as u64) < roots;
    (short && !away.is_empty() && away.len() as u64 <= verify_diverging_max(paths)).then_some(away)
}

/// The nonsingular endpoints of `found` (the polyhedral start's, one per path) whose point
/// no finite path of `tally` (paths `0..paths`) reaches, given to the `lost` paths in
/// order, as attempt `attempt`: at most `lost.len()`. Only nonsingular ones: a nonsingular
/// root is isolated, while a singular endpoint of the second run may be another point of a
/// positive-dimensional component that the local dimension test did not name, and would
/// count as a new solution.
pub(super) fn give_roots_to_lost_paths(
    tally: &Tally,
    paths: u64,
    lost: &[u64],
    found: &[Endpoint],
    attempt: u8,
) -> Vec<Endpoint> {
    let reached: Vec<Endpoint> = (0..paths).filter_map(|p| tally.endpoint(p)).collect();
    let tol = |e: &Endpoint| {
        clustering_tolerance(e.refined_dd, e.condition, e.error, DEDUP_TOL, e.status)
    };
    let missing = found
        .iter()
        .filter(|e| e.status == Status::Nonsingular)
        .filter(|e| {
            let x = e.coordinates.as_deref().unwrap_or_default();
            !reached.iter().any(|r| {
                let y = r.coordinates.as_deref().unwrap_or_default();
                close(x, y, tol(e).max(tol(r)))
            })
        });
    missing
        .zip(lost)
        .map(|(e, &path)| {
            let mut e = e.clone();
            e.reason = Some(format!(
                "a root of the polyhedral start that no path reached: this path failed or \
                 ended at infinity while the paths ending at finite points fall short of the stable mixed \
                 volume; polyhedral path {} leads to it (lost paths are given such roots in \
                 path order)",
                e.path
            ));
            e.path = path;
            e.attempt = attempt;
            e
        })
        .collect()
}
