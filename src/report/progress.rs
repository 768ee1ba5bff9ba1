//! Progress of a solve on stderr: the phase (start system, first pass, recovery round k),
//! the paths done in it, their rate and the time left.
//!
//! Every path is counted once: the first pass counts paths up to the number of paths, and
//! each recovery round has its own counter of the paths it tracks again (a path reported
//! twice within a round, as when a re-tracking loses a solution and its earlier endpoint is
//! reported again, still counts once). No count ever passes its total.
//!
//! The rate is measured over a sliding window ([`RateWindow`]): the paths finished in the
//! last half of the phase's tracking so far (at most [`RATE_WINDOW`]) over that time, from
//! the phase's first endpoint on. The
//! start-up before that endpoint (mixed cells, kernel compilation, the first batch on a
//! GPU) is not in it, a batch that arrives at once counts as one step of the window, and a
//! phase that stalls (a few hard paths left) shows its rate falling instead of an old one.
//! The time left is the paths left over that rate, shown once the window spans
//! [`MIN_RATE_SECONDS`].
//!
//! On a terminal an indicatif line is redrawn in place; elsewhere (stderr redirected to a
//! file or a pipe) a plain line is printed every [`PLAIN_EVERY`], the first one only after
//! that long, so that short runs print nothing. A run that has lasted [`PLAIN_EVERY`] also
//! leaves one line per finished phase (`first pass: 8,795,976 paths in 9m16s`), so the
//! phases stay visible after they end. Nothing goes to stdout.

use std::collections::{HashSet, VecDeque};
use std::io::IsTerminal;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Where a solve stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Building the start system (polyhedral: the mixed cells).
    StartSystem,
    /// `pathtrack count`: enumerating the mixed cells for the root counts.
    Counting,
    /// Tracking every path (or those asked for) once: `paths` of them.
    FirstPass { paths: u64 },
    /// Recovery round `round` (1-based), tracking `paths` suspect paths again.
    Recovery { round: u8, paths: u64 },
}

/// Largest span of the sliding window of the rate.
pub const RATE_WINDOW: Duration = Duration::from_secs(20);
/// Endpoints within this of a window's sample join it (a batch arriving at once is one
/// step).
const SAMPLE_EVERY: Duration = Duration::from_millis(100);
/// Seconds the window must span before a rate (and a time left) is shown.
pub const MIN_RATE_SECONDS: f64 = 2.0;
/// Interval of the plain progress lines on a non-terminal, and the age of a run from which
/// finished phases leave a line.
pub const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// [`PLAIN_EVERY`], or `PATHTRACK_PROGRESS_EVERY` seconds from the environment (tests).
fn plain_every() -> Duration {
    std::env::var("PATHTRACK_PROGRESS_EVERY")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|&s| s > 0.0 && s < 1e6)
        .map_or(PLAIN_EVERY, Duration::from_secs_f64)
}

/// Paths per second over a sliding window of width `w = clamp((now − t_0)/2,`
/// [`MIN_RATE_SECONDS`]`,` [`RATE_WINDOW`]`)`, `t_0` the first sample: half the phase's
/// tracking so far, so that a slow start (a pipeline filling up) is forgotten as the phase
/// goes on. With samples `(t_i, done_i)`, the reference sample `r` (the latest one at least
/// `w` old, else the first), the last sample `l` and `g` the longest gap between two
/// samples from `r` on: `rate(now) = (done_l − done_r) / (max(t_l, now − g) − t_r)`.
///
/// A sample is the last endpoint of its `SAMPLE_EVERY` bucket (time and count), so the
/// paths of the first bucket (a first batch) are not divided by the short time they took. Between two
/// batches the rate holds (a wait no longer than one seen before is the usual pace); a
/// wait longer than every earlier gap counts, so the rate falls while nothing finishes.
#[derive(Debug, Default)]
pub struct RateWindow {
    samples: VecDeque<(Instant, u64)>,
    /// The time of the first sample (`t_0`).
    first: Option<Instant>,
    /// When the last sample's bucket opened.
    opened: Option<Instant>,
}

impl RateWindow {
    /// `done` paths at `now` (times in order).
    pub fn record(&mut self, now: Instant, done: u64) {
        self.first.get_or_insert(now);
        match (self.samples.back_mut(), self.opened) {
            (Some(last), Some(o)) if now.saturating_duration_since(o) < SAMPLE_EVERY => {
                *last = (now, done)
            }
            _ => {
                self.samples.push_back((now, done));
                self.opened = Some(now);
            }
        }
        // Only the latest sample at least a window old can still be a reference.
        while self.samples.len() > 2 && self.samples[1].0 + RATE_WINDOW <= now {
            self.samples.pop_front();
        }
    }

    /// The rate at `now` (see the type's doc), once the window spans [`MIN_RATE_SECONDS`].
    pub fn rate(&self, now: Instant) -> Option<f64> {
        let &(last_t, last) = self.samples.back()?;
        let tracked = now.saturating_duration_since(self.first?);
        let w = (tracked / 2).clamp(Duration::from_secs_f64(MIN_RATE_SECONDS), RATE_WINDOW);
        let r = self
            .samples
            .iter()
            .rposition(|(t, _)| *t + w <= now)
            .unwrap_or(0);
        let (t, done) = self.samples[r];
        let gap = self
            .samples
            .range(r..)
            .zip(self.samples.range(r + 1..))
            .map(|(a, b)| b.0.saturating_duration_since(a.0))
            .max()
            .unwrap_or(Duration::ZERO);
        let end = last_t.max(now.checked_sub(gap).unwrap_or(now));
        let span = end.saturating_duration_since(t).as_secs_f64();
        let age = now.saturating_duration_since(t).as_secs_f64();
        (age >= MIN_RATE_SECONDS).then(|| {
            if span > 0.0 {
                (last - done) as f64 / span
            } else {
                0.0
            }
        })
    }
}

/// The counts and rate behind the progress line, apart from any drawing (unit-tested with
/// given times).
#[derive(Debug)]
pub struct PathCounter {
    phase: Phase,
    /// When the current phase began (`None` before the first [`Self::set_phase`]).
    since: Option<Instant>,
    /// Paths of the current phase done.
    done: u64,
    /// Paths counted in the current recovery round (each once).
    round_seen: HashSet<u64>,
    /// Retracked paths over all rounds so far (each once per round).
    retracked: u64,
    /// The rate of the current phase.
    rate: RateWindow,
}

impl Default for PathCounter {
    fn default() -> Self {
        PathCounter {
            phase: Phase::StartSystem,
            since: None,
            done: 0,
            round_seen: HashSet::new(),
            retracked: 0,
            rate: RateWindow::default(),
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
            Phase::StartSystem | Phase::Counting => 0,
            Phase::FirstPass { paths } | Phase::Recovery { paths, .. } => paths,
        };
        (self.done, len)
    }

    /// Paths tracked again by the recovery rounds so far.
    pub fn retracked(&self) -> u64 {
        self.retracked
    }

    /// A new phase from `now`: its counter and rate start from zero.
    pub fn set_phase(&mut self, phase: Phase, now: Instant) {
        self.phase = phase;
        self.since = Some(now);
        self.done = 0;
        self.round_seen.clear();
        self.rate = RateWindow::default();
    }

    /// A finished endpoint of `path` from attempt `attempt` (0: the first pass), at `now`.
    /// Counted in the current phase when it belongs there and was not counted yet; an
    /// endpoint of a re-tracking seen before its round was announced opens a round of
    /// unknown size.
    pub fn endpoint(&mut self, path: u64, attempt: u8, now: Instant) {
        match self.phase {
            Phase::StartSystem | Phase::FirstPass { .. } if attempt > 0 => {
                self.set_phase(
                    Phase::Recovery {
                        round: attempt,
                        paths: 0,
                    },
                    now,
                );
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
        self.rate.record(now, self.done);
    }

    /// Paths per second of the current phase at `now` ([`RateWindow::rate`]).
    pub fn rate(&self, now: Instant) -> Option<f64> {
        self.rate.rate(now)
    }

    /// Seconds left in the current phase at `now`: the paths left over the rate, when the
    /// rate is known and positive and the phase's size is known.
    pub fn eta(&self, now: Instant) -> Option<f64> {
        let (done, len) = self.position();
        let r = self.rate(now).filter(|&r| r > 0.0)?;
        (len > 0).then(|| len.saturating_sub(done) as f64 / r)
    }

    /// The name of the current phase.
    fn name(&self) -> String {
        match self.phase {
            Phase::StartSystem => "start system".into(),
            Phase::Counting => "counting mixed cells".into(),
            Phase::FirstPass { .. } => "first pass".into(),
            Phase::Recovery { round, .. } => format!("recovery round {round}"),
        }
    }

    /// `done/len paths` of the current phase (`paths re-tracked` in a recovery round;
    /// `re-tracked` alone when `short`).
    fn counts(&self, short: bool) -> String {
        let (done, len) = self.position();
        let noun = match self.phase {
            Phase::Recovery { .. } if short => "re-tracked",
            Phase::Recovery { .. } => "paths re-tracked",
            _ => "paths",
        };
        format!("{}/{} {noun}", thousands(done), thousands(len))
    }

    /// The progress text at `now`: phase, a bar of `width` characters (none when 0),
    /// counts, time left and rate (in this order, so that a terminal too narrow cuts the
    /// rate first); the start system shows how long it has taken so far.
    pub fn line(&self, width: usize, now: Instant) -> String {
        let mut s = self.name();
        if matches!(self.phase, Phase::StartSystem | Phase::Counting) {
            if let Some(since) = self.since {
                let t = now.saturating_duration_since(since).as_secs_f64();
                s.push_str(&format!(", {}", duration(t)));
            }
            return s;
        }
        let (done, len) = self.position();
        if width > 0 && len > 0 {
            let filled = (((done as f64 / len as f64) * width as f64) as usize).min(width);
            s.push_str(&format!(
                " [{}{}]",
                "#".repeat(filled),
                "-".repeat(width - filled)
            ));
        }
        s.push(' ');
        s.push_str(&self.counts(true));
        if let Some(e) = self.eta(now) {
            s.push_str(&format!(", eta {}", duration(e)));
        }
        if let Some(r) = self.rate(now) {
            s.push_str(&format!(", {}/s", rate_text(r)));
        }
        s
    }

    /// The line that the current phase leaves when it ends at `now`
    /// (`first pass: 156/156 paths in 3m07s`); `None` before the first phase.
    pub fn finished_line(&self, now: Instant) -> Option<String> {
        let t = now.saturating_duration_since(self.since?).as_secs_f64();
        Some(match self.phase {
            Phase::StartSystem | Phase::Counting => format!("{}: {}", self.name(), duration(t)),
            _ => format!("{}: {} in {}", self.name(), self.counts(false), duration(t)),
        })
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

/// A rate as `15,800`, or with a decimal below 10 (`0.4`: a slow recovery round).
fn rate_text(r: f64) -> String {
    if r < 9.95 {
        format!("{r:.1}")
    } else {
        thousands(r.round() as u64)
    }
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
    /// Plain lines.
    Plain,
}

impl Display {
    /// Shows a line that stays (a finished phase).
    fn keep(&self, line: &str) {
        match self {
            Display::Hidden => {}
            Display::Bar(pb) => pb.println(format!("pathtrack: {line}")),
            Display::Plain => eprintln!("pathtrack: {line}"),
        }
    }
}

/// The counter and whether the drawing thread should stop.
struct Shared {
    counter: Mutex<(PathCounter, bool)>,
    wake: Condvar,
}

/// The progress of one solve on stderr (see the module doc).
pub struct Progress {
    shared: Arc<Shared>,
    display: Arc<Display>,
    thread: Option<std::thread::JoinHandle<()>>,
    start: Instant,
    /// Age of the run from which finished phases leave a line.
    trail_after: Duration,
}

/// Width of the text bar on a terminal.
const BAR_WIDTH: usize = 20;
/// Interval of the redraws of the terminal line.
const REDRAW_EVERY: Duration = Duration::from_millis(200);

impl Progress {
    /// Nothing shown when `quiet`; a bar on a terminal; plain lines otherwise.
    pub fn new(quiet: bool) -> Progress {
        let shared = Arc::new(Shared {
            counter: Mutex::new((PathCounter::default(), false)),
            wake: Condvar::new(),
        });
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
            pb.enable_steady_tick(REDRAW_EVERY);
            Display::Bar(pb)
        } else {
            Display::Plain
        };
        let display = Arc::new(display);
        let thread = match *display {
            Display::Hidden => None,
            Display::Bar(_) => Some(REDRAW_EVERY),
            Display::Plain => Some(plain_every()),
        }
        .and_then(|every| {
            let (s, d) = (Arc::clone(&shared), Arc::clone(&display));
            std::thread::Builder::new()
                .name("progress".into())
                .spawn(move || draw(&s, &d, every, start))
                .ok()
        });
        Progress {
            shared,
            display,
            thread,
            start,
            trail_after: plain_every(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (PathCounter, bool)> {
        self.shared
            .counter
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Leaves the finished phase's line when the run is old enough.
    fn close_phase(&self, c: &PathCounter, now: Instant) {
        if now.saturating_duration_since(self.start) >= self.trail_after {
            if let Some(line) = c.finished_line(now) {
                self.display.keep(&line);
            }
        }
    }

    pub fn set_phase(&mut self, phase: Phase) {
        let now = Instant::now();
        let mut g = self.lock();
        self.close_phase(&g.0, now);
        g.0.set_phase(phase, now);
        if let Display::Bar(pb) = &*self.display {
            pb.set_message(g.0.line(BAR_WIDTH, now));
        }
    }

    pub fn endpoint(&mut self, path: u64, attempt: u8) {
        self.lock().0.endpoint(path, attempt, Instant::now());
    }

    /// Leaves the last phase's line (a long run), then removes the bar or stops the plain
    /// lines.
    pub fn finish(mut self) {
        {
            let g = self.lock();
            self.close_phase(&g.0, Instant::now());
        }
        self.stop();
    }

    fn stop(&mut self) {
        self.lock().1 = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Display::Bar(pb) = &*self.display {
            pb.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The drawing thread: every `every` until told to stop, the line redrawn on a terminal,
/// or a plain line printed with the run's age.
fn draw(shared: &Shared, display: &Display, every: Duration, start: Instant) {
    let mut g = shared.counter.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let (guard, _) = shared
            .wake
            .wait_timeout_while(g, every, |(_, stop)| !*stop)
            .unwrap_or_else(|e| e.into_inner());
        g = guard;
        if g.1 {
            return;
        }
        let now = Instant::now();
        match display {
            Display::Hidden => return,
            Display::Bar(pb) => pb.set_message(g.0.line(BAR_WIDTH, now)),
            Display::Plain => eprintln!(
                "pathtrack: [{}] {}",
                duration(now.saturating_duration_since(start).as_secs_f64()),
                g.0.line(0, now)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    /// Every `(done, len)` pair the counter shows has `done ≤ len`.
    fn within(c: &PathCounter) {
        let (done, len) = c.position();
        assert!(done <= len, "{done}/{len} in {:?}", c.phase());
    }

    /// The first pass counts up to its paths; a recovery round counts its paths once each
    /// on its own counter, whatever is reported again; the total is never passed.
    #[test]
    fn paths_are_counted_once() {
        let t0 = Instant::now();
        let mut c = PathCounter::default();
        c.set_phase(Phase::FirstPass { paths: 10 }, t0);
        for p in 0..10 {
            c.endpoint(p, 0, at(t0, p * 10));
            within(&c);
        }
        assert_eq!(c.position(), (10, 10));
        // a late duplicate of the first pass changes nothing
        c.endpoint(3, 0, at(t0, 200));
        assert_eq!(c.position(), (10, 10));
        c.set_phase(Phase::Recovery { round: 1, paths: 3 }, at(t0, 300));
        assert_eq!(c.position(), (0, 3));
        for p in [2, 5, 5, 7, 2] {
            c.endpoint(p, 1, at(t0, 300));
            within(&c);
        }
        assert_eq!(c.position(), (3, 3));
        assert_eq!(c.retracked(), 3);
        let line = c.line(10, at(t0, 300));
        assert!(
            line.starts_with("recovery round 1 [##########] 3/3 re-tracked"),
            "{line}"
        );
        c.set_phase(Phase::Recovery { round: 2, paths: 2 }, at(t0, 400));
        c.endpoint(5, 1, at(t0, 400)); // a stale endpoint of round 1
        c.endpoint(5, 2, at(t0, 400));
        assert_eq!(c.position(), (1, 2));
        assert_eq!(c.retracked(), 4);
    }

    /// A run like the one that showed 8,802,043/8,795,976: the first pass, then rounds
    /// whose paths are reported again (the lost-solution endpoints after a round), with
    /// stale endpoints of earlier rounds mixed in. The first pass ends at exactly its
    /// paths, each round at exactly its own, and the re-tracked total is the rounds' sum.
    #[test]
    fn a_run_with_recovery_never_counts_past_a_total() {
        let t0 = Instant::now();
        let mut c = PathCounter::default();
        c.set_phase(Phase::StartSystem, t0);
        let paths = 1000u64;
        c.set_phase(Phase::FirstPass { paths }, at(t0, 50));
        for p in 0..paths {
            c.endpoint(p, 0, at(t0, 100 + p));
            within(&c);
        }
        assert_eq!(c.position(), (paths, paths));
        let rounds: [Vec<u64>; 3] = [(0..60).collect(), (0..60).step_by(3).collect(), vec![7]];
        let mut ms = 2000;
        for (k, round) in rounds.iter().enumerate() {
            let r = k as u8 + 1;
            let len = round.len() as u64;
            c.set_phase(
                Phase::Recovery {
                    round: r,
                    paths: len,
                },
                at(t0, ms),
            );
            for &p in round.iter().chain(round.iter().take(5)) {
                ms += 10;
                c.endpoint(p, r, at(t0, ms));
                c.endpoint(p, r.saturating_sub(1), at(t0, ms)); // stale
                within(&c);
            }
            assert_eq!(c.position(), (len, len), "round {r}");
            let done = c.finished_line(at(t0, ms)).unwrap();
            assert!(
                done.starts_with(&format!("recovery round {r}: {len}/{len} paths re-tracked")),
                "{done}"
            );
        }
        assert_eq!(c.retracked(), 60 + 20 + 1);
    }

    /// A re-tracked endpoint before its round was announced opens the round.
    #[test]
    fn an_unannounced_round_opens_itself() {
        let t0 = Instant::now();
        let mut c = PathCounter::default();
        c.set_phase(Phase::FirstPass { paths: 2 }, t0);
        c.endpoint(0, 0, t0);
        c.endpoint(0, 1, t0);
        assert_eq!(c.phase(), &Phase::Recovery { round: 1, paths: 1 });
        assert_eq!(c.position(), (1, 1));
    }

    /// The rate ignores the start-up before the phase's first endpoint (30 s here, then
    /// 1,000 paths/s): after 3 s of tracking it is the pace, and the time left the paths
    /// left over it. No rate and no time left before the window spans 2 s.
    #[test]
    fn the_rate_skips_the_start_up() {
        let t0 = Instant::now();
        let mut c = PathCounter::default();
        c.set_phase(Phase::FirstPass { paths: 100_000 }, t0);
        let start = 30_000;
        for k in 0..=1500u64 {
            c.endpoint(k, 0, at(t0, start + k));
        }
        let now = at(t0, start + 1500);
        assert!(c.rate(now).is_none(), "1.5 s of tracking");
        assert!(!c.line(0, now).contains("eta"));
        for k in 1501..=3000u64 {
            c.endpoint(k, 0, at(t0, start + k));
        }
        let now = at(t0, start + 3000);
        let r = c.rate(now).unwrap();
        assert!((r - 1000.0).abs() < 50.0, "rate {r}");
        let eta = c.eta(now).unwrap();
        assert!((eta - 97.0).abs() < 5.0, "eta {eta}");
        let line = c.line(0, now);
        assert!(
            line.starts_with("first pass 3,001/100,000 paths, eta 1m"),
            "{line}"
        );
        assert!(line.ends_with("/s"), "{line}");
    }

    /// A slow start is forgotten: 10 paths/s for 10 s (a pipeline filling up), then 200
    /// paths/s. After 10 s at the fast pace the window (half the tracking) holds only it;
    /// a window over the whole phase would give about 105 paths/s.
    #[test]
    fn the_window_forgets_a_slow_start() {
        let t0 = Instant::now();
        let mut c = PathCounter::default();
        c.set_phase(Phase::FirstPass { paths: 100_000 }, t0);
        let mut p = 0;
        for k in 0..100u64 {
            c.endpoint(p, 0, at(t0, k * 100));
            p += 1;
        }
        for k in 0..2000u64 {
            c.endpoint(p, 0, at(t0, 10_000 + k * 5));
            p += 1;
        }
        let r = c.rate(at(t0, 20_000)).unwrap();
        assert!((r - 200.0).abs() < 10.0, "rate {r}");
    }

    /// Endpoints in batches (a GPU: 10,000 paths every 5 s, each batch within a few ms):
    /// before the second batch the rate is 0 and no time left is claimed; from then on it
    /// is 2,000 paths/s at any moment between batches, not a saw-tooth.
    #[test]
    fn batches_give_a_steady_rate() {
        let t0 = Instant::now();
        let mut c = PathCounter::default();
        let paths = 200_000;
        c.set_phase(Phase::FirstPass { paths }, t0);
        let batch = 10_000u64;
        let mut p = 0;
        for b in 0..20u64 {
            let t = 8_000 + 5_000 * b; // the first batch after 8 s of start-up
            for i in 0..batch {
                c.endpoint(p, 0, at(t0, t + i / 2_000));
                p += 1;
            }
            if b == 0 {
                assert_eq!(c.rate(at(t0, t + 3_000)), Some(0.0));
                assert!(c.eta(at(t0, t + 3_000)).is_none());
                continue;
            }
            for probe in [10, 2_500, 4_990] {
                let r = c.rate(at(t0, t + probe)).unwrap();
                assert!(
                    (r - 2_000.0).abs() < 0.01 * 2_000.0,
                    "batch {b}, {probe} ms after it: rate {r}"
                );
            }
        }
    }

    /// A change of pace is followed within the window: after a window at half the pace the
    /// rate is the new pace; and a stall shows: with nothing finished for a window, the rate
    /// is 0 and no time left is claimed.
    #[test]
    fn the_rate_follows_a_change_of_pace_and_a_stall() {
        let t0 = Instant::now();
        let mut c = PathCounter::default();
        c.set_phase(Phase::FirstPass { paths: 1_000_000 }, t0);
        let mut p = 0;
        let mut ms = 0;
        for _ in 0..30_000 {
            ms += 1;
            c.endpoint(p, 0, at(t0, ms));
            p += 1;
        }
        let r = c.rate(at(t0, ms)).unwrap();
        assert!((r - 1000.0).abs() < 20.0, "rate {r}");
        for _ in 0..11_000 {
            ms += 2;
            c.endpoint(p, 0, at(t0, ms));
            p += 1;
        }
        let r = c.rate(at(t0, ms)).unwrap();
        assert!((r - 500.0).abs() < 10.0, "rate {r}");
        let eta = c.eta(at(t0, ms)).unwrap();
        assert!((eta - (1_000_000 - p) as f64 / 500.0).abs() < 30.0, "{eta}");
        // 10 s without an endpoint: the rate has halved; a window: it is 0
        let r = c.rate(at(t0, ms + 10_000)).unwrap();
        assert!((r - 500.0 * 10.0 / 20.0).abs() < 20.0, "rate {r}");
        assert_eq!(c.rate(at(t0, ms + 21_000)), Some(0.0));
        assert!(c.eta(at(t0, ms + 21_000)).is_none());
        let line = c.line(0, at(t0, ms + 21_000));
        assert!(line.ends_with(", 0.0/s"), "{line}");
    }

    /// Each phase leaves a line naming it, its counts and its duration; the start system
    /// shows its time so far while it runs.
    #[test]
    fn finished_phases_are_named() {
        let t0 = Instant::now();
        let mut c = PathCounter::default();
        assert!(c.finished_line(t0).is_none(), "no phase yet");
        c.set_phase(Phase::StartSystem, t0);
        assert_eq!(c.line(20, at(t0, 12_000)), "start system, 12s");
        assert_eq!(
            c.finished_line(at(t0, 23_000)).unwrap(),
            "start system: 23s"
        );
        c.set_phase(Phase::FirstPass { paths: 3 }, at(t0, 23_000));
        for p in 0..3 {
            c.endpoint(p, 0, at(t0, 24_000));
        }
        assert_eq!(
            c.finished_line(at(t0, 210_000)).unwrap(),
            "first pass: 3/3 paths in 3m07s"
        );
    }

    #[test]
    fn numbers_are_readable() {
        assert_eq!(thousands(8_795_976), "8,795,976");
        assert_eq!(thousands(999), "999");
        assert_eq!(duration(42.4), "42s");
        assert_eq!(duration(187.0), "3m07s");
        assert_eq!(duration(7500.0), "2h05m");
        assert_eq!(rate_text(0.42), "0.4");
        assert_eq!(rate_text(15_800.4), "15,800");
    }
}
