//! Timing of a call: [`time_calls`] (batches of calls, mean and median seconds per call),
//! and [`Cases`], the table of a `cargo bench` target (benches/): one row a case, its
//! median seconds per call, cases chosen by the words given after `cargo bench -- `.

use crate::error::Result;
use std::time::Instant;

/// Seconds per call of a timed function ([`time_calls`]).
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// All the time over all the calls.
    pub mean: f64,
    /// The median of the batches' seconds per call (robust to a busy neighbour).
    pub median: f64,
    /// The fastest batch's seconds per call.
    pub best: f64,
    /// Calls timed (after one warm-up call).
    pub calls: u64,
}

/// Times `f`: one warm-up call, then batches of calls (as many as last at least 1 ms,
/// judged from the warm-up) until at least `min_seconds` have passed and `min_batches`
/// batches are done.
pub fn time_calls(
    min_seconds: f64,
    min_batches: usize,
    mut f: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    let warm = Instant::now();
    f()?;
    let once = warm.elapsed().as_secs_f64();
    let batch = (1e-3 / once.max(1e-9)).ceil().clamp(1.0, 1e6) as u64;
    let (mut per_call, clock) = (Vec::new(), Instant::now());
    while clock.elapsed().as_secs_f64() < min_seconds || per_call.len() < min_batches {
        let start = Instant::now();
        for _ in 0..batch {
            f()?;
        }
        per_call.push(start.elapsed().as_secs_f64() / batch as f64);
    }
    let calls = batch * per_call.len() as u64;
    let mean = clock.elapsed().as_secs_f64() / calls as f64;
    per_call.sort_by(f64::total_cmp);
    Ok(Timing {
        mean,
        median: per_call[per_call.len() / 2],
        best: per_call[0],
        calls,
    })
}

/// Mean seconds per call of `f`, called for at least 0.3 s and 3 batches after one warm-up.
pub fn seconds_per_call(f: impl FnMut() -> Result<()>) -> Result<f64> {
    Ok(time_calls(0.3, 3, f)?.mean)
}

/// The table of a `cargo bench` target: a title, then one row per case with the median,
/// fastest and mean microseconds per call ([`time_calls`], at least 1 s and 11 batches per
/// case).
pub struct Cases {
    /// Words of the command line: a case runs when its name contains one (all when none).
    filter: Vec<String>,
}

impl Cases {
    /// Prints `title` and the column heads; the process's arguments that do not start with
    /// `-` (cargo passes `--bench`) select the cases.
    pub fn from_args(title: &str) -> Cases {
        let filter = std::env::args()
            .skip(1)
            .filter(|a| !a.starts_with('-'))
            .collect();
        println!("# {title}");
        println!(
            "{:<40} {:>12} {:>12} {:>12} {:>9}",
            "case", "median µs", "best µs", "mean µs", "calls"
        );
        Cases { filter }
    }

    /// Whether the case `name` was asked for.
    pub fn wanted(&self, name: &str) -> bool {
        self.filter.is_empty() || self.filter.iter().any(|w| name.contains(w.as_str()))
    }

    /// Times `f` as the case `name` and prints its row, when the case was asked for.
    pub fn run(&self, name: &str, f: impl FnMut() -> Result<()>) -> Result<()> {
        if self.wanted(name) {
            let t = time_calls(1.0, 11, f)?;
            println!(
                "{name:<40} {:>12.3} {:>12.3} {:>12.3} {:>9}",
                t.median * 1e6,
                t.best * 1e6,
                t.mean * 1e6,
                t.calls
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every call is counted: the timer's calls are the function's calls but the warm-up.
    #[test]
    fn the_timer_counts_its_calls() {
        let mut n = 0u64;
        let t = time_calls(0.01, 5, || {
            n += 1;
            std::hint::black_box((0..100).sum::<u64>());
            Ok(())
        })
        .unwrap();
        assert_eq!(t.calls + 1, n);
        assert!(t.calls >= 5 && t.best > 0.0 && t.best <= t.median);
        assert!(time_calls(0.0, 1, || Err(crate::Error::Internal("no".into()))).is_err());
    }
}
