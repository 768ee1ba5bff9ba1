//! The first lines of a large solve on stderr, before any path ends: the total degree at
//! once (the mixed volume of a large system can take minutes), then the number of paths
//! with an estimate of the tracking time from the homotopy's size
//! ([`crate::backend::cpu_seconds_estimate`]). The progress lines measure the rate after
//! that; these lines are what a user sees in the first seconds, on a terminal or not.

use crate::system::System;

/// Estimated seconds from which a run is announced (runs that print progress lines).
pub const ANNOUNCE_FROM_SECONDS: f64 = 5.0;

/// Total degree from which the start of a solve that needs the mixed volume is announced.
pub const ANNOUNCE_TOTAL_DEGREE: u128 = 1_000_000;

/// What the announcements need to know of the run.
pub struct Announce {
    /// Columns of the homotopy, about: twice the system's terms (start and target).
    columns: usize,
    n: usize,
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
        let terms: usize = system.equations.iter().map(|f| f.terms.len()).sum();
        Announce {
            columns: 2 * terms,
            n: system.n(),
            threads: threads.max(1),
            on_cpu,
        }
    }

    /// The line printed before the start system is built, when it needs the mixed volume
    /// of a system of total degree at least [`ANNOUNCE_TOTAL_DEGREE`].
    pub fn start(system: &System, needs_mixed_volume: bool) -> Option<String> {
        let td = system.total_degree()?;
        (needs_mixed_volume && td >= ANNOUNCE_TOTAL_DEGREE).then(|| {
            format!(
                "pathtrack: {}: total degree {}; counting the mixed volume (the polyhedral root count)",
                system.name,
                grouped(td)
            )
        })
    }

    /// The line printed when the first pass starts with `paths` paths: the count and, on
    /// the CPU, the estimated time; `None` for a run estimated below
    /// [`ANNOUNCE_FROM_SECONDS`].
    pub fn first_pass(&self, paths: u64) -> Option<String> {
        let seconds =
            crate::backend::cpu_seconds_estimate(paths as u128, self.n, self.columns, self.threads);
        if seconds < ANNOUNCE_FROM_SECONDS {
            return None;
        }
        Some(if self.on_cpu {
            format!(
                "pathtrack: {} paths to track; estimated {} on {} CPU thread{} (the progress lines measure it)",
                grouped(paths as u128),
                duration(seconds),
                self.threads,
                if self.threads == 1 { "" } else { "s" }
            )
        } else {
            format!("pathtrack: {} paths to track", grouped(paths as u128))
        })
    }
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
