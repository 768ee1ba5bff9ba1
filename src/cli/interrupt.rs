//! SIGINT and SIGTERM during `solve`: the `-o` file keeps every whole line (the lines are
//! written and flushed in batches while the run's state is held, [`Held`], and the signal
//! waits for the batch; the line writer empties its queue first, [`draining`]), a partial
//! summary is printed (stdout, as the summary would be: a table, or one JSON object with
//! `--json`), and the process exits with 128 + the signal's number (130, 143).
//! `solve --resume` continues from the file.
//!
//! The signals are caught by a thread of `signal-hook`; the counts it prints are kept by
//! `Partial::endpoint` as lines are written.

use crate::error::{Error, Result};
use crate::post::{Endpoint, Status};
use crate::report::progress::Phase;
use std::sync::Mutex;

/// What the run has done so far.
#[derive(Default)]
struct Partial {
    /// Paths of the run (the first pass's, with those finished before a resume).
    paths: u64,
    /// Paths finished before this run (`--resume`).
    resumed: u64,
    /// First-pass lines written, by status.
    nonsingular: u64,
    singular: u64,
    at_infinity: u64,
    outside_torus: u64,
    failed: u64,
    /// Lines of recovery rounds written.
    recovery_lines: u64,
    phase: String,
    json: bool,
    output: Option<String>,
}

/// The run's state; its lock is held while a line is written, so that a signal never ends
/// the process in the middle of one.
static STATE: Mutex<Option<Partial>> = Mutex::new(None);

/// Catches SIGINT and SIGTERM for the rest of the process. `json`: print the partial
/// summary as JSON; `output`: the `-o` file named in it; `resumed`: paths finished before.
pub fn install(json: bool, output: Option<&std::path::Path>, resumed: u64) -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    *lock() = Some(Partial {
        json,
        resumed,
        output: output.map(|p| p.display().to_string()),
        phase: "start system".into(),
        ..Default::default()
    });
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .map_err(|e| Error::io("installing the SIGINT/SIGTERM handler", e))?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                DRAINING.store(true, std::sync::atomic::Ordering::SeqCst);
                let state = lock();
                if let Some(p) = state.as_ref() {
                    eprintln!();
                    print!("{}", p.report(sig));
                    use std::io::Write;
                    let _ = std::io::stdout().flush();
                }
                std::process::exit(128 + sig);
            }
        })
        .map_err(|e| Error::io("starting the signal thread", e))?;
    Ok(())
}

fn lock() -> std::sync::MutexGuard<'static, Option<Partial>> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Set once a signal came: the line writer writes every line queued before letting it end
/// the process.
static DRAINING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// True once a signal is waiting for the lines queued to be written.
pub fn draining() -> bool {
    DRAINING.load(std::sync::atomic::Ordering::SeqCst)
}

/// The run's state, held while a batch of lines is written and flushed: a signal waits
/// for it to be released.
pub struct Held(std::sync::MutexGuard<'static, Option<Partial>>);

/// Holds the state (see [`Held`]).
pub fn hold() -> Held {
    Held(lock())
}

impl Held {
    /// Counts `e`, whose line is written.
    pub fn count(&mut self, e: &Endpoint) {
        if let Some(s) = self.0.as_mut() {
            s.count(e);
        }
    }
}

/// Records a phase of the solve.
pub fn phase(p: &Phase) {
    if let Some(s) = lock().as_mut() {
        match *p {
            Phase::StartSystem | Phase::Counting => s.phase = "start system".into(),
            Phase::FirstPass { paths } => {
                s.paths = paths + s.resumed;
                s.phase = "first pass".into();
            }
            Phase::Recovery { round, .. } => s.phase = format!("recovery round {round}"),
        }
    }
}

impl Partial {
    fn count(&mut self, e: &Endpoint) {
        if e.attempt > 0 {
            self.recovery_lines += 1;
        } else {
            *match e.status {
                Status::Nonsingular => &mut self.nonsingular,
                // PositiveDimensional comes after recovery (attempt ≥ 1), never here.
                Status::Singular | Status::PositiveDimensional => &mut self.singular,
                Status::AtInfinity => &mut self.at_infinity,
                Status::OutsideTorus => &mut self.outside_torus,
                Status::Failed => &mut self.failed,
            } += 1;
        }
    }

    fn finished(&self) -> u64 {
        self.resumed
            + self.nonsingular
            + self.singular
            + self.at_infinity
            + self.outside_torus
            + self.failed
    }

    /// The partial summary after signal `sig`.
    fn report(&self, sig: i32) -> String {
        let signal = if sig == signal_hook::consts::SIGINT {
            "SIGINT"
        } else {
            "SIGTERM"
        };
        let hint = match &self.output {
            Some(o) => format!("continue with the same command and --resume (-o {o})"),
            None => "no -o file: the finished paths are lost".into(),
        };
        if self.json {
            let v = serde_json::json!({
                "interrupted": signal,
                "phase": self.phase,
                "paths": self.paths,
                "finished_paths": self.finished(),
                "resumed_paths": self.resumed,
                "nonsingular_endpoints": self.nonsingular,
                "singular_endpoints": self.singular,
                "at_infinity": self.at_infinity,
                "outside_torus": self.outside_torus,
                "failed": self.failed,
                "recovery_lines": self.recovery_lines,
                "resume": hint,
            });
            return format!("{v}\n");
        }
        let row = crate::report::table_row;
        [
            row(
                "interrupted",
                &format!("{signal} during the {}", self.phase),
            ),
            row(
                "finished paths",
                &format!("{} of {}", self.finished(), self.paths),
            ),
            row("  before --resume", &self.resumed.to_string()),
            row("  nonsingular", &self.nonsingular.to_string()),
            row("  singular", &self.singular.to_string()),
            row("  at infinity", &self.at_infinity.to_string()),
            row("  outside (C*)^n", &self.outside_torus.to_string()),
            row("  failed", &self.failed.to_string()),
            row("recovery lines", &self.recovery_lines.to_string()),
            format!("{hint}\n"),
        ]
        .concat()
    }
}
