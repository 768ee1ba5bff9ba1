//! The first lines of a large solve on stderr, before any path ends: the total degree at
//! once (the mixed volume of a large system can take minutes), then the number of paths
//! with an estimate of the tracking time. The estimate is measured, not assumed: a short
//! sample ([`sample_point_seconds`]) evaluates the homotopy's extended Jacobian and solves
//! for the direction at a batch of points on every thread at once, so that a machine busy
//! with other work shows its present speed; a path costs about [`STEPS_PER_PATH`] steps of
//! [`EVALUATIONS_PER_STEP`] such evaluations. The progress lines measure the rate after
//! that; these lines are what a user sees in the first seconds, on a terminal or not.

use crate::eval::{cpu::Scratch, EvalLayout, Points};
use crate::homotopy::{terms_with_lift, Homotopy};
use crate::system::System;
use num_complex::Complex64 as C64;

/// Estimated seconds from which a run is announced (runs that print progress lines).
pub const ANNOUNCE_FROM_SECONDS: f64 = 5.0;

/// Total degree from which the start of a solve that needs the mixed volume is announced.
pub const ANNOUNCE_TOTAL_DEGREE: u128 = 1_000_000;

/// Steps per path of the estimate (the means of total-degree and polyhedral paths of
/// noon-6, katsura-9, cyclic-7 and eco-9 lie between 19 and 126).
pub const STEPS_PER_PATH: f64 = crate::backend::STEPS_PER_PATH;

/// Sampled evaluations (extended Jacobian, then the direction solve) that one tracker step
/// costs: the predictor's stages, the corrector's Newton iterations and the step's
/// bookkeeping. Measured as the wall seconds per step of a solve over the seconds per
/// sampled point just before it (`--backend cpu`, this project's 2-core machine while
/// loaded): polyhedral paths 8.1 (cyclic-7, one thread), 9.2 (cyclic-8, two threads),
/// 10 (eco-9, two threads); total-degree paths 5.1–5.8 (katsura-8, -9), 5.6 (noon-6).
/// Large runs are mostly polyhedral; with [`STEPS_PER_PATH`] the estimate of a path is
/// within a factor of 1.5 of those polyhedral runs and above the total-degree ones (which
/// take fewer steps). The estimate beside the tracking time on that machine: katsura-10 on
/// one thread 5 s against 1.6–2.1 s; cyclic-8 on two threads at load average 10, 5 s
/// against 8–10 s (the other processes' share grew during the run).
pub const EVALUATIONS_PER_STEP: f64 = 8.0;

/// Wall seconds the sample's windows take on each thread (each window stops after its
/// first batch past its share).
pub const SAMPLE_SECONDS: f64 = 0.04;

/// Points of one sampled batch (the CPU backend evaluates points in chunks of this order).
const SAMPLE_BATCH: usize = 16;

/// The sample is taken only where the fixed-constant estimate
/// ([`crate::backend::cpu_seconds_estimate`]) is at least this fraction of
/// [`ANNOUNCE_FROM_SECONDS`]: a small run is neither announced nor slowed by the sample,
/// and a machine up to this many times slower than the constants still announces.
const SAMPLE_FROM_FRACTION: f64 = 0.2;

/// What the announcements need to know of the run.
pub struct Announce {
    /// A homotopy of the run's size: every term of the system twice (target and start
    /// columns), as the solve's homotopies have. `None` for a square linear system, which
    /// one LU solves with no path tracked ([`crate::solver::linear`]): the sample of a dense
    /// system of 500 variables alone took a minute and 9 GB.
    homotopy: Option<Homotopy>,
    threads: usize,
    /// Paths run on the host (`--backend cpu`, or `auto` on a machine with no driver).
    on_cpu: bool,
}

impl Announce {
    /// `threads`: the CPU threads (0: all cores).
    pub fn new(system: &System, threads: usize, on_cpu: bool) -> Announce {
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            t => t,
        };
        Announce {
            homotopy: (!crate::solver::linear::is_linear(system)).then(|| sample_homotopy(system)),
            threads: threads.max(1),
            on_cpu,
        }
    }

    /// The line printed before the start system is built, when it needs the mixed volume
    /// (`torus`) or the stable mixed volume of a system of total degree at least
    /// [`ANNOUNCE_TOTAL_DEGREE`].
    pub fn start(system: &System, needs_mixed_volume: bool, torus: bool) -> Option<String> {
        let td = system.total_degree()?;
        (needs_mixed_volume && td >= ANNOUNCE_TOTAL_DEGREE).then(|| {
            format!(
                "pathtrack: {}: total degree {}; counting the {} (the polyhedral root count)",
                system.name,
                grouped(td),
                if torus {
                    "mixed volume"
                } else {
                    "stable mixed volume"
                }
            )
        })
    }

    /// The line printed when the first pass starts with `paths` paths: the count and, on
    /// the CPU, the estimated time from a measured sample; `None` for a run estimated below
    /// [`ANNOUNCE_FROM_SECONDS`].
    pub fn first_pass(&self, paths: u64) -> Option<String> {
        let homotopy = self.homotopy.as_ref()?;
        let columns = homotopy.term_count();
        let fixed =
            crate::backend::cpu_seconds_estimate(paths as u128, homotopy.n, columns, self.threads);
        // On a GPU the count alone, for the runs the CPU would take 5 s or more for.
        if !self.on_cpu {
            return (fixed >= ANNOUNCE_FROM_SECONDS)
                .then(|| format!("pathtrack: {} paths to track", grouped(paths as u128)));
        }
        if fixed < SAMPLE_FROM_FRACTION * ANNOUNCE_FROM_SECONDS {
            return None;
        }
        let per_point = sample_point_seconds(homotopy, self.threads);
        let seconds = estimate_seconds(paths, per_point);
        (seconds >= ANNOUNCE_FROM_SECONDS).then(|| {
            format!(
                "pathtrack: {} paths to track; estimated {} on {} CPU thread{} at this \
                 machine's present speed (the progress lines measure it)",
                grouped(paths as u128),
                duration(seconds),
                self.threads,
                if self.threads == 1 { "" } else { "s" }
            )
        })
    }
}

/// Estimated wall seconds of `paths` paths when one sampled point takes `per_point` wall
/// seconds with every thread busy: `paths ×` [`STEPS_PER_PATH`] `×`
/// [`EVALUATIONS_PER_STEP`] `× per_point`.
pub fn estimate_seconds(paths: u64, per_point: f64) -> f64 {
    paths as f64 * STEPS_PER_PATH * EVALUATIONS_PER_STEP * per_point
}

/// The sample's homotopy: each equation's terms with lift 1 (the target) and again scaled
/// by a fixed complex factor with lift 0 (a start), `2 ×` the system's terms in all.
fn sample_homotopy(system: &System) -> Homotopy {
    let start = C64::new(0.6, 0.8);
    let eqs = system
        .equations
        .iter()
        .map(|f| {
            let mut terms = terms_with_lift(f, C64::new(1.0, 0.0), 1.0);
            terms.extend(terms_with_lift(f, start, 0.0));
            terms
        })
        .collect();
    Homotopy::from_affine_terms(system.n(), eqs)
}

/// Wall seconds per sampled point with `threads` threads sampling at once: each thread
/// evaluates batches of `SAMPLE_BATCH` points (extended Jacobian, then an LU solve of
/// the `N × N` direction system for two right-hand sides) through [`SAMPLE_WINDOWS`]
/// windows of [`SAMPLE_SECONDS`] in all, and its rate is the median of its windows' rates
/// (points per wall second), so that one preemption does not decide the estimate; the
/// result is one over the sum of the threads' rates. Other processes' load lowers the
/// rates as it slows the solve.
pub fn sample_point_seconds(homotopy: &Homotopy, threads: usize) -> f64 {
    let layout = EvalLayout::new(homotopy);
    let rate: f64 = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|k| {
                let layout = &layout;
                s.spawn(move || sample_on_thread(layout, k))
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or(0.0)).sum()
    });
    if rate > 0.0 {
        1.0 / rate
    } else {
        f64::INFINITY
    }
}

/// Windows of the sample on each thread (their median rate is the thread's).
pub const SAMPLE_WINDOWS: usize = 5;

/// One thread's share of [`sample_point_seconds`]: its median rate in points per second.
fn sample_on_thread(layout: &EvalLayout, thread: usize) -> f64 {
    let (n, nh, q) = (layout.n, layout.nh, SAMPLE_BATCH);
    // Points of modulus about 1 with spread arguments, at t = 1/2 (τ = log t).
    let ys: Vec<C64> = (0..q * nh)
        .map(|k| C64::from_polar(1.0 + 0.1 * (k % 7) as f64, 0.37 * (k + thread) as f64))
        .collect();
    let taus = vec![C64::new(0.5f64.ln(), 0.0); q];
    let mut out = vec![C64::new(0.0, 0.0); q * layout.ext_len()];
    let mut scratch = Scratch::default();
    let (mut a, mut piv, mut b) = (
        vec![C64::new(0.0, 0.0); nh * nh],
        vec![0; nh],
        vec![C64::new(0.0, 0.0); 2 * nh],
    );
    let mut batch = || {
        let pts = Points::projective(&ys, &taus);
        crate::eval::cpu::extended_jacobians(layout, &pts, &mut out, &mut scratch);
        for i in 0..q {
            let rows = &out[i * layout.ext_len()..(i + 1) * layout.ext_len()];
            // column-major: the n equations' rows, then a patch row of ones
            for j in 0..nh {
                for k in 0..n {
                    a[j * nh + k] = rows[k * (nh + 2) + j];
                }
                a[j * nh + n] = C64::new(1.0, 0.0);
            }
            for k in 0..n {
                b[2 * k] = rows[k * (nh + 2) + nh];
                b[2 * k + 1] = rows[k * (nh + 2) + nh + 1];
            }
            b[2 * n] = C64::new(0.0, 0.0);
            b[2 * n + 1] = C64::new(0.0, 0.0);
            crate::linalg::small::lu_factor(nh, &mut a, &mut piv);
            crate::linalg::small::lu_solve(nh, &a, &piv, &mut b, 2);
            std::hint::black_box(&b);
        }
    };
    // A first batch outside the windows: buffers and caches warm.
    batch();
    let window = SAMPLE_SECONDS / SAMPLE_WINDOWS as f64;
    let mut rates: Vec<f64> = (0..SAMPLE_WINDOWS)
        .map(|_| {
            let clock = std::time::Instant::now();
            let mut done = 0;
            while done == 0 || clock.elapsed().as_secs_f64() < window {
                batch();
                done += q;
            }
            done as f64 / clock.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[SAMPLE_WINDOWS / 2]
}

/// `1234567` as `1,234,567`.
pub fn grouped(v: u128) -> String {
    let digits = v.to_string();
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Seconds as "40 s", "12 min", "3.5 h" or "2.0 days".
pub fn duration(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 172_800.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} days", s / 86_400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample measures: it evaluates points of the system's homotopy (positive, finite
    /// seconds per point), and the estimate grows with the paths in proportion to it.
    #[test]
    fn the_estimate_comes_from_a_measured_sample() {
        let system = crate::system::families::by_name("katsura6")
            .unwrap()
            .unwrap();
        let h = sample_homotopy(&system);
        assert_eq!(
            h.term_count(),
            2 * system
                .equations
                .iter()
                .map(|f| f.terms.len())
                .sum::<usize>()
        );
        let per_point = sample_point_seconds(&h, 2);
        assert!(per_point.is_finite() && per_point > 0.0, "{per_point}");
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
        let one = estimate_seconds(1000, per_point);
        assert!(close(estimate_seconds(3000, per_point), 3.0 * one));
        assert!(close(
            one,
            1000.0 * STEPS_PER_PATH * EVALUATIONS_PER_STEP * per_point
        ));
        // a small run is neither sampled nor announced
        let a = Announce::new(&system, 1, true);
        assert_eq!(a.first_pass(64), None);
        // on a GPU, the count of a large run alone
        let a = Announce::new(&system, 1, false);
        assert_eq!(
            a.first_pass(10_000_000).as_deref(),
            Some("pathtrack: 10,000,000 paths to track")
        );
        assert_eq!(a.first_pass(64), None);
    }

    #[test]
    fn numbers_read_plainly() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(87_178_291_200), "87,178,291,200");
        assert_eq!(duration(40.2), "40 s");
        assert_eq!(duration(720.0), "12 min");
        assert_eq!(duration(3.5 * 3600.0), "3.5 h");
        assert_eq!(duration(3.0 * 86_400.0), "3.0 days");
    }
}
