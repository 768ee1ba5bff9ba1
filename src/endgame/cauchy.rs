//! Cauchy endgame (Morgan–Sommese–Wampler): loops around `t = 1` in the complex plane.
//!
//! Near `t = 1` a path is a convergent Puiseux series `x(s) = Σ_m a_m s^{m/c}` in
//! `s = 1 − t`, with winding number `c` (the number of loops of `s ↦ s0·e^{iθ}`,
//! `θ ∈ [0, 2πc]`, after which the path returns to its starting point). The endpoint is the
//! Cauchy integral `x(0) = (1/2πc) ∮ x dθ`; with `K` equally spaced samples per loop the
//! trapezoid rule is exact for every term except `m ≡ 0 (mod cK)`, so its error is
//! `O((s0/R)^K)` (`R` the radius of convergence). Each round tracks the loop at a radius
//! `s0`, then the real path down to `s0 / RADIUS_RATIO`; two successive estimates that agree
//! give the endpoint and its accuracy.
//!
//! In `τ = log t` the loop's vertices are `τ_j = log(1 − s0·e^{2πij/K})`; the tracker moves
//! along the straight segments between them (the homotopy is holomorphic in τ). Samples are
//! taken in the affine chart `ℓ·y = 1` (ℓ fixed for the whole endgame) so that they are
//! holomorphic in `s^{1/c}`, whatever the tracker's own normalization of `y`.

use num_complex::Complex64 as C64;

/// Vertices (samples) per loop.
pub const SAMPLES_PER_LOOP: usize = 16;
/// Loops tried before the winding number is declared too large.
pub const MAX_WINDING: u32 = 24;

/// Loops allowed in a round of an endgame started on the slope `α` of `log ‖dy/ds‖` against
/// `log s`: a winding number `c` gives `α = 1/c − 1`, so `c ≈ 1/(1 + α)`; the cap is
/// `⌈1.5·c⌉ + 1` (at least 4, at most [`MAX_WINDING`]), which admits every `c` up to 12 when
/// the slope is off by ±0.05 (the trigger's agreement). A loop that has not closed by then
/// met the branch points of other paths near t = 1 (chandra-n: ill-conditioned nonsingular
/// endpoints whose slope looks singular at first) and went through their sheets: the round
/// is given up after a few loops, each of which may cost hundreds of steps there.
pub fn loop_cap(slope: f64) -> u32 {
    let c = 1.0 / (1.0 + slope).max(1.0 / MAX_WINDING as f64);
    ((1.5 * c).ceil() as u32 + 1).clamp(4, MAX_WINDING)
}
/// Each round's radius is the previous one's divided by this.
pub const RADIUS_RATIO: f64 = 4.0;
/// Rounds (radii) at most.
pub const MAX_ROUNDS: u32 = 6;
/// Two successive estimates agreeing to this (relative, ∞-norm in the chart) end the
/// endgame.
pub const AGREEMENT_TOL: f64 = 1e-9;
/// A loop has closed when the point is back within this (projective distance, unit vectors).
pub const CLOSE_TOL: f64 = 1e-7;

/// `τ = log(1 − s0·e^{iθ})`.
pub fn loop_tau(s0: f64, theta: f64) -> C64 {
    (C64::new(1.0, 0.0) - C64::from_polar(s0, theta)).ln()
}

/// Distance between the projective points of two unit vectors: `‖b − ⟨a,b⟩a‖`.
pub fn projective_distance(a: &[C64], b: &[C64]) -> f64 {
    let ip: C64 = a.iter().zip(b).map(|(x, y)| x.conj() * y).sum();
    a.iter()
        .zip(b)
        .map(|(x, y)| (y - ip * x).norm_sqr())
        .sum::<f64>()
        .sqrt()
}

/// One path's Cauchy endgame.
#[derive(Clone, Debug)]
pub struct Cauchy {
    /// Affine chart `ℓ·y = 1` of the samples.
    pub ell: Vec<C64>,
    /// Radius of the current round.
    pub s0: f64,
    /// The loop's vertices in τ (`SAMPLES_PER_LOOP + 1`, first = last = the real start).
    pub vertices: Vec<C64>,
    /// The point where the loop started (at real τ = `vertices[0]`).
    pub y_start: Vec<C64>,
    sum: Vec<C64>,
    samples: usize,
    /// Completed loops of the current round.
    pub loops: u32,
    /// Loops allowed per round ([`loop_cap`]).
    pub loop_cap: u32,
    /// Rounds completed, with the last estimate (in the chart) and the winding number.
    pub rounds: u32,
    pub estimate: Option<Vec<C64>>,
    pub winding: u32,
    /// Relative difference of the last two estimates (∞ until two exist).
    pub accuracy: f64,
}

/// What the end of a loop means for the path.
#[derive(Debug, PartialEq)]
pub enum LoopEnd {
    /// Not back at the start: go around again.
    Again,
    /// Back at the start after `c` loops; the round's estimate is made.
    Closed,
    /// No return within [`Cauchy::loop_cap`] loops.
    TooManyLoops,
}

impl Cauchy {
    /// Starts an endgame at the (unit) point `y` on the real path at `τ` (`s0 = 1 − e^τ`),
    /// at most `loop_cap` loops per round.
    pub fn new(y: &[C64], tau: f64, loop_cap: u32) -> Cauchy {
        let mut c = Cauchy {
            ell: y.iter().map(|v| v.conj()).collect(),
            s0: 0.0,
            vertices: Vec::new(),
            y_start: Vec::new(),
            sum: Vec::new(),
            samples: 0,
            loops: 0,
            loop_cap,
            rounds: 0,
            estimate: None,
            winding: 0,
            accuracy: f64::INFINITY,
        };
        c.begin_round(y, tau);
        c
    }

    /// Begins a round at the point `y` on the real path at `τ`.
    pub fn begin_round(&mut self, y: &[C64], tau: f64) {
        self.s0 = -tau.exp_m1();
        let k = SAMPLES_PER_LOOP;
        self.vertices = (0..=k)
            .map(|j| {
                if j == 0 || j == k {
                    C64::new(tau, 0.0)
                } else {
                    loop_tau(self.s0, 2.0 * std::f64::consts::PI * j as f64 / k as f64)
                }
            })
            .collect();
        self.y_start = y.to_vec();
        self.sum = vec![C64::new(0.0, 0.0); y.len()];
        self.samples = 0;
        self.loops = 0;
        self.add_sample(y);
    }

    /// Real τ at which the next round starts.
    pub fn next_round_tau(&self) -> f64 {
        (-(self.s0 / RADIUS_RATIO)).ln_1p()
    }

    /// τ along the loop at parameter `u` (one unit per segment, any number of loops).
    pub fn tau_at(&self, u: f64) -> C64 {
        let k = SAMPLES_PER_LOOP as f64;
        let w = u.rem_euclid(k);
        let j = (w.floor() as usize).min(SAMPLES_PER_LOOP - 1);
        let f = w - j as f64;
        self.vertices[j] + (self.vertices[j + 1] - self.vertices[j]) * f
    }

    /// dτ/du on the segment that starts at integer `u` or contains `u` (`u` not at its end).
    pub fn dtau_at(&self, u: f64) -> C64 {
        let k = SAMPLES_PER_LOOP as f64;
        let j = (u.rem_euclid(k).floor() as usize).min(SAMPLES_PER_LOOP - 1);
        self.vertices[j + 1] - self.vertices[j]
    }

    /// Adds the sample `y` (a vertex) in the chart `ℓ·y = 1`.
    pub fn add_sample(&mut self, y: &[C64]) {
        let d: C64 = self.ell.iter().zip(y).map(|(l, v)| l * v).sum();
        for (s, v) in self.sum.iter_mut().zip(y) {
            *s += v / d;
        }
        self.samples += 1;
    }

    /// At the end of a loop (back at real τ with unit point `y`): closed, again, or give up.
    pub fn end_loop(&mut self, y: &[C64]) -> LoopEnd {
        self.loops += 1;
        if projective_distance(&self.y_start, y) <= CLOSE_TOL {
            let est: Vec<C64> = self.sum.iter().map(|s| s / self.samples as f64).collect();
            if let Some(prev) = &self.estimate {
                let scale = 1.0 + est.iter().map(|z| z.norm()).fold(0.0, f64::max);
                let d = est
                    .iter()
                    .zip(prev)
                    .map(|(a, b)| (a - b).norm())
                    .fold(0.0, f64::max);
                self.accuracy = d / scale;
            }
            self.estimate = Some(est);
            self.winding = self.loops;
            self.rounds += 1;
            LoopEnd::Closed
        } else if self.loops >= self.loop_cap {
            LoopEnd::TooManyLoops
        } else {
            self.add_sample(y);
            LoopEnd::Again
        }
    }

    /// True when two successive estimates agree to [`AGREEMENT_TOL`].
    pub fn converged(&self) -> bool {
        self.accuracy <= AGREEMENT_TOL
    }

    /// The estimate as a unit homogeneous vector.
    pub fn endpoint(&self) -> Option<Vec<C64>> {
        let mut e = self.estimate.clone()?;
        let s = e.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        if !(s > 0.0 && s.is_finite()) {
            return None;
        }
        e.iter_mut().for_each(|z| *z /= s);
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds the exact vertices of the Puiseux path `x(s) = 1 + 0.7·s^{1/c} + 0.3i·s^{2/c}`
    /// (homogeneous `(x, 1)`, unit norm times a drifting phase, as the tracker's
    /// normalization gives) and checks the winding number and the endpoint `x = 1`.
    #[test]
    fn trapezoid_over_c_loops_recovers_the_endpoint() {
        let point = |r: C64, k: usize| {
            let x = C64::new(1.0, 0.0) + r * 0.7 + r * r * C64::new(0.0, 0.3);
            let nrm = (x.norm_sqr() + 1.0).sqrt();
            let phase = C64::from_polar(1.0, 0.1 * k as f64);
            vec![x / nrm * phase, phase / nrm]
        };
        for c in [1u32, 2, 3, 5] {
            let s0: f64 = 0.01;
            let branch = |k: usize| {
                // s^{1/c} continued along θ = 2πk/K over the loops.
                let theta = 2.0 * std::f64::consts::PI * k as f64 / SAMPLES_PER_LOOP as f64;
                C64::from_polar(s0.powf(1.0 / c as f64), theta / c as f64)
            };
            let mut g = Cauchy::new(&point(branch(0), 0), (1.0 - s0).ln(), MAX_WINDING);
            let mut end = LoopEnd::Again;
            let mut k = 1usize;
            while end == LoopEnd::Again {
                let y = point(branch(k), k);
                if k % SAMPLES_PER_LOOP == 0 {
                    end = g.end_loop(&y);
                } else {
                    g.add_sample(&y);
                }
                k += 1;
            }
            assert_eq!(end, LoopEnd::Closed);
            assert_eq!(g.winding, c);
            let e = g.endpoint().unwrap();
            let x = e[0] / e[1];
            assert!((x - 1.0).norm() < 1e-12, "c = {c}: x = {x}");
        }
    }

    #[test]
    fn loop_cap_admits_the_winding_number_the_slope_predicts() {
        // Slope estimates within the trigger's agreement (±0.05 here) of 1/c − 1 leave room
        // for c loops; a round that does not close stops after the cap.
        // Winding numbers above 12 do not start the endgame (the tracker's trigger).
        for c in 1..=12 {
            for d in [-0.05, 0.0, 0.05] {
                let slope = (1.0 / c as f64 - 1.0 + d).min(-0.2);
                let cap = loop_cap(slope);
                assert!(
                    cap >= c && cap <= MAX_WINDING,
                    "c = {c}, slope {slope}: cap {cap}"
                );
            }
        }
        assert_eq!(loop_cap(-0.5), 4);
        assert_eq!(loop_cap(-0.75), 7);
        assert_eq!(loop_cap(-0.99), MAX_WINDING);
        let y = [C64::new(1.0, 0.0), C64::new(0.0, 0.0)];
        let mut g = Cauchy::new(&y, (1.0f64 - 0.1).ln(), loop_cap(-0.75));
        let away = [C64::new(0.0, 0.0), C64::new(1.0, 0.0)];
        let ends: Vec<LoopEnd> = (0..7).map(|_| g.end_loop(&away)).collect();
        assert!(ends[..6].iter().all(|e| *e == LoopEnd::Again));
        assert_eq!(ends[6], LoopEnd::TooManyLoops);
    }

    #[test]
    fn loop_vertices_circle_t_equal_one() {
        let g = Cauchy::new(&[C64::new(1.0, 0.0)], (1.0f64 - 0.1).ln(), MAX_WINDING);
        for j in 0..=SAMPLES_PER_LOOP {
            let t = g.vertices[j].exp();
            assert!(((C64::new(1.0, 0.0) - t).norm() - 0.1).abs() < 1e-12);
        }
        assert!((g.tau_at(SAMPLES_PER_LOOP as f64 * 3.0 + 0.5) - g.tau_at(0.5)).norm() < 1e-15);
        assert!((g.next_round_tau().exp() - (1.0 - 0.025)).abs() < 1e-15);
    }
}
