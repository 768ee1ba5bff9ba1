//! Progress of a solve on stderr: the phase (start system, first pass, recovery round k),
//! paths done in it, a smoothed rate and the time left.
//!
//! Every path is counted once: the first pass counts paths up to the number of paths, and
//! each recovery round has its own counter of the paths it tracks again (a path reported
//! twice within a round, as when a re-tracking loses a solution and its earlier endpoint is
//! reported again, still counts once).
//!
//! The rate is an exponential moving average of the rates of short windows
//! ([`RATE_WINDOW`]), so neither the start-up before the first endpoint nor a burst at one
//! moment dominates it; the time left is the paths left over that rate, shown once the
//! rate rests on [`MIN_RATE_SECONDS`] of tracking.
//!
//! On a terminal an indicatif line is redrawn in place; elsewhere (stderr redirected to a
//! file or a pipe) a plain line is printed every [`PLAIN_EVERY`], the first one only after
//! that long, so that short runs print nothing.

use std::collections::HashSet;
use std::io::IsTerminal;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Where a solve stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Building the start system (polyhedral: the mixed cells).
    StartSystem,
    /// Tracking every path (or those asked for) once: `paths` of them.
    FirstPass { paths: u64 },
    /// Recovery round `round` (1-based), tracking `paths` suspect paths again.
    Recovery { round: u8, paths: u64 },
}

/// Length of a window of the rate's moving average.
pub const RATE_WINDOW: Duration = Duration::from_millis(500);
/// Weight of the newest window in the moving average (about the last 4 windows count).
const RATE_WEIGHT: f64 = 0.25;
/// Seconds of tracking before a time left is shown.
pub const MIN_RATE_SECONDS: f64 = 1.0;
/// Interval of the plain progress lines on a non-terminal.
pub const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// [`PLAIN_EVERY`], or `PATHTRACK_PROGRESS_EVERY` seconds from the environment (tests).
fn plain_every() -> Duration {
    std::env::var("PATHTRACK_PROGRESS_EVERY")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|&s| s > 0.0 && s < 1e6)
        .map_or(PLAIN_EVERY, Duration::from_secs_f64)
}

/// The counts and rate behind the progress line, apart from any drawing (unit-tested).
#[derive(Debug)]
pub struct PathCounter {
    phase: Phase,
    /// Paths of the current phase done.
    done: u64,
    /// Paths counted in the current recovery round (each once).
    round_seen: HashSet<u64>,
    /// Retracked paths over all rounds so far (each once per round).
    retracked: u64,
    /// The start of the current rate window and `done` then (`None` before the phase's
    /// first path: the time before it is no tracking).
    window: Option<(Instant, u64)>,
    /// Smoothed paths per second, and the tracking seconds it rests on.
    rate: Option<f64>,
    rated_seconds: f64,
}

impl Default for PathCounter {
    fn default() -> Self {
        PathCounter {
            phase: Phase::StartSystem,
            done: 0,
            round_seen: HashSet::new(),
            retracked: 0,
            window: None,
            rate: None,
            rated_seconds: 0.0,
        }
    }
}

impl PathCounter {
    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    /// Paths done in the current phase, and how many it has.
    pub fn position(&self) -> (u64, u64) {
        let len = match self.phase {
            Phase::StartSystem => 0,
            Phase::FirstPass { paths } | Phase::Recovery { paths, .. } => paths,
        };
        (self.done, len)
    }

    /// Paths tracked again by the recovery rounds so far.
    pub fn retracked(&self) -> u64 {
        self.retracked
    }

    /// A new phase: its counter and rate start from zero.
    pub fn set_phase(&mut self, phase: Phase) {
        self.phase = phase;
        self.done = 0;
        self.round_seen.clear();
        self.window = None;
        self.rate = None;
        self.rated_seconds = 0.0;
    }

    /// A finished endpoint of `path` from attempt `attempt` (0: the first pass), at `now`.
    /// Counted in the current phase when it belongs there and was not counted yet; an
    /// endpoint of a re-tracking seen before its round was announced opens a round of
    /// unknown size.
    pub fn endpoint(&mut self, path: u64, attempt: u8, now: Instant) {
        match self.phase {
            Phase::StartSystem | Phase::FirstPass { .. } if attempt > 0 => {
                self.set_phase(Phase::Recovery {
                    round: attempt,
                    paths: 0,
                });
                self.endpoint(path, attempt, now);
                return;
            }
            Phase::FirstPass { paths } if attempt == 0 => {
                if self.done >= paths {
                    return;
                }
            }
            Phase::Recovery { round, .. } if attempt == round => {
                if !self.round_seen.insert(path) {
                    return;
                }
                self.retracked += 1;
            }
            _ => return,
        }
        self.done += 1;
        if let Phase::Recovery { paths, .. } = &mut self.phase {
            *paths = (*paths).max(self.done);
        }
        self.tick(now);
    }

    /// Closes the rate window when it is [`RATE_WINDOW`] old.
    fn tick(&mut self, now: Instant) {
        let Some((since, at)) = self.window else {
            self.window = Some((now, self.done));
            return;
        };
        let dt = now.saturating_duration_since(since).as_secs_f64();
        if dt < RATE_WINDOW.as_secs_f64() {
            return;
        }
        let r = (self.done - at) as f64 / dt;
        self.rate = Some(match self.rate {
            None => r,
            Some(old) => old + RATE_WEIGHT * (r - old),
        });
        self.rated_seconds += dt;
        self.window = Some((now, self.done));
    }

    /// Smoothed paths per second of the current phase, once a window has closed.
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// Seconds left in the current phase at the smoothed rate, once it rests on
    /// [`MIN_RATE_SECONDS`] of tracking and the phase's size is known.
    pub fn eta(&self) -> Option<f64> {
        let (done, len) = self.position();
        let r = self.rate.filter(|&r| r > 0.0)?;
        (self.rated_seconds >= MIN_RATE_SECONDS && len > 0)
            .then(|| len.saturating_sub(done) as f64 / r)
    }

    /// The progress text: phase, a bar of `width` characters (none when 0), counts, rate
    /// and time left.
    pub fn line(&self, width: usize) -> String {
        let (done, len) = self.position();
        let what = match self.phase {
            Phase::StartSystem => return "start system".to_string(),
            Phase::FirstPass { .. } => "first pass".to_string(),
            Phase::Recovery { round, .. } => format!("recovery round {round}"),
        };
        let mut s = what;
        if width > 0 && len > 0 {
            let filled = ((done as f64 / len as f64) * width as f64) as usize;
            s.push_str(&format!(
                " [{}{}]",
                "#".repeat(filled.min(width)),
                "-".repeat(width - filled.min(width))
            ));
        }
        let noun = match self.phase {
            Phase::Recovery { .. } => "paths re-tracked",
            _ => "paths",
        };
        s.push_str(&format!(" {}/{} {noun}", thousands(done), thousands(len)));
        if let Some(r) = self.rate {
            s.push_str(&format!(", {}/s", thousands(r.round() as u64)));
        }
        if let Some(e) = self.eta() {
            s.push_str(&format!(", eta {}", duration(e)));
        }
        s
    }
}

/// `1234567` as `1,234,567`.
fn thousands(v: u64) -> String {
    let d = v.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Seconds as `42s`, `3m07s` or `2h05m`.
fn duration(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// How the counter is shown.
enum Display {
    Hidden,
    /// A line redrawn in place on a terminal.
    Bar(indicatif::ProgressBar),
    /// Plain lines from a thread that wakes every [`PLAIN_EVERY`] until told to stop.
    Plain {
        stop: Arc<(Mutex<bool>, Condvar)>,
        thread: Option<std::thread::JoinHandle<()>>,
    },
}

/// The progress of one solve on stderr (see the module doc).
pub struct Progress {
    counter: Arc<Mutex<PathCounter>>,
    display: Display,
    /// The last redraw of the terminal line.
    drawn: Instant,
}

/// Width of the text bar on a terminal.
const BAR_WIDTH: usize = 30;
/// Least time between two redraws of the terminal line.
const REDRAW_EVERY: Duration = Duration::from_millis(100);

impl Progress {
    /// Nothing shown when `quiet`; a bar on a terminal; plain lines otherwise.
    pub fn new(quiet: bool) -> Progress {
        let counter = Arc::new(Mutex::new(PathCounter::default()));
        let start = Instant::now();
        let display = if quiet {
            Display::Hidden
        } else if std::io::stderr().is_terminal() {
            let pb = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::stderr(),
            );
            pb.set_style(
                indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            pb.set_message("start system");
            pb.enable_steady_tick(Duration::from_millis(200));
            Display::Bar(pb)
        } else {
            let stop = Arc::new((Mutex::new(false), Condvar::new()));
            let (c, s) = (Arc::clone(&counter), Arc::clone(&stop));
            let thread = std::thread::Builder::new()
                .name("progress".into())
                .spawn(move || plain_lines(&c, &s, start))
                .ok();
            Display::Plain { stop, thread }
        };
        Progress {
            counter,
            display,
            drawn: start,
        }
    }

    /// Applies `f` to the counter and, on a terminal, redraws the line (at most every
    /// [`REDRAW_EVERY`] unless `now`).
    fn update(&mut self, now: bool, f: impl FnOnce(&mut PathCounter)) {
        let mut c = self.counter.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut c);
        if let Display::Bar(pb) = &self.display {
            if now || self.drawn.elapsed() >= REDRAW_EVERY {
                pb.set_message(c.line(BAR_WIDTH));
                self.drawn = Instant::now();
            }
        }
    }

    pub fn set_phase(&mut self, phase: Phase) {
        self.update(true, |c| c.set_phase(phase));
    }

    pub fn endpoint(&mut self, path: u64, attempt: u8) {
        self.update(false, |c| c.endpoint(path, attempt, Instant::now()));
    }

    /// Removes the bar, or stops the plain lines.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        match &mut self.display {
            Display::Hidden => {}
            Display::Bar(pb) => pb.finish_and_clear(),
            Display::Plain { stop, thread } => {
                *stop.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
                stop.1.notify_all();
                if let Some(t) = thread.take() {
                    let _ = t.join();
                }
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The plain progress lines: one every [`plain_every`] until `stop` is set.
fn plain_lines(counter: &Mutex<PathCounter>, stop: &(Mutex<bool>, Condvar), start: Instant) {
    let every = plain_every();
    let mut stopped = stop.0.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let (guard, _) = stop
            .1
            .wait_timeout_while(stopped, every, |s| !*s)
            .unwrap_or_else(|e| e.into_inner());
        stopped = guard;
        if *stopped {
            return;
        }
        let line = counter.lock().unwrap_or_else(|e| e.into_inner()).line(0);
        eprintln!(
            "pathtrack: [{}] {line}",
            duration(start.elapsed().as_secs_f64())
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    /// The first pass counts up to its paths; a recovery round counts its paths once each
    /// on its own counter, whatever is reported again; the total is never passed.
    #[test]
    fn paths_are_counted_once() {
        let t0 = Instant::now();
        let mut c = PathCounter::default();
        c.set_phase(Phase::FirstPass { paths: 10 });
        for p in 0..10 {
            c.endpoint(p, 0, at(t0, p * 10));
        }
        assert_eq!(c.position(), (10, 10));
        // a late duplicate of the first pass changes nothing
        c.endpoint(3, 0, at(t0, 200));
        assert_eq!(c.position(), (10, 10));
        c.set_phase(Phase::Recovery { round: 1, paths: 3 });
        assert_eq!(c.position(), (0, 3));
        for p in [2, 5, 5, 7, 2] {
            c.endpoint(p, 1, at(t0, 300));
        }
        assert_eq!(c.position(), (3, 3));
        assert_eq!(c.retracked(), 3);
        let line = c.line(10);
        assert!(
            line.starts_with("recovery round 1 [##########] 3/3 paths re-tracked"),
            "{line}"
        );
        c.set_phase(Phase::Recovery { round: 2, paths: 2 });
        c.endpoint(5, 1, at(t0, 400)); // a stale endpoint of round 1
        c.endpoint(5, 2, at(t0, 400));
        assert_eq!(c.position(), (1, 2));
        assert_eq!(c.retracked(), 4);
    }

    /// A re-tracked endpoint before its round was announced opens the round.
    #[test]
    fn an_unannounced_round_opens_itself() {
        let t0 = Instant::now();
        let mut c = PathCounter::default();
        c.set_phase(Phase::FirstPass { paths: 2 });
        c.endpoint(0, 0, t0);
        c.endpoint(0, 1, t0);
        assert_eq!(c.phase(), &Phase::Recovery { round: 1, paths: 1 });
        assert_eq!(c.position(), (1, 1));
    }

    /// The rate ignores the time before the first endpoint and follows a change of pace
    /// within a few windows; the time left comes once a second of tracking is behind it.
    #[test]
    fn the_rate_is_smoothed_and_skips_the_start_up() {
        let t0 = Instant::now();
        let mut c = PathCounter::default();
        c.set_phase(Phase::FirstPass { paths: 100_000 });
        // 30 s of start-up, then 1,000 paths/s
        let start = 30_000;
        for k in 0..=2000u64 {
            c.endpoint(k, 0, at(t0, start + k));
        }
        let r = c.rate().unwrap();
        assert!((r - 1000.0).abs() < 10.0, "rate {r}");
        let eta = c.eta().unwrap();
        assert!((eta - 98.0).abs() < 1.0, "eta {eta}");
        // the pace halves: after 6 s at 500 paths/s the rate is within 10 % of it
        for k in 1..=3000u64 {
            c.endpoint(2000 + k, 0, at(t0, start + 2000 + 2 * k));
        }
        let r = c.rate().unwrap();
        assert!((r - 500.0).abs() < 50.0, "rate {r}");
        // no time left shown before a second of tracking
        let mut c = PathCounter::default();
        c.set_phase(Phase::FirstPass { paths: 100 });
        for k in 0..=6u64 {
            c.endpoint(k, 0, at(t0, k * 100));
        }
        assert!(c.rate().is_some() && c.eta().is_none());
        assert!(!c.line(0).contains("eta"));
    }

    #[test]
    fn numbers_are_readable() {
        assert_eq!(thousands(8_795_976), "8,795,976");
        assert_eq!(thousands(999), "999");
        assert_eq!(duration(42.4), "42s");
        assert_eq!(duration(187.0), "3m07s");
        assert_eq!(duration(7500.0), "2h05m");
    }
}
