//! `pathtrack --help-dev` (also `pathtrack solve --help-dev`): the developer switches that
//! `--help` leaves out, i.e. every hidden option of every subcommand, and the environment
//! variables that change how a run goes (for comparisons and diagnostics).

use clap::CommandFactory;

/// Environment variables read by pathtrack, with what they do.
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "PATHTRACK_EARLY_RECOVERY=0",
        "no re-tracking of suspect paths during the first pass (all of it after)",
    ),
    (
        "PATHTRACK_LOCAL_DIMENSION=0",
        "no local dimension test: singular endpoints on positive-dimensional components count as singular solutions",
    ),
    (
        "PATHTRACK_RESIDENT_DD=0",
        "resident slots hand paths that need double-double arithmetic to the host tracker",
    ),
    (
        "PATHTRACK_RESIDENT_NO_COMPACTION",
        "resident slots are not compacted as paths finish",
    ),
    (
        "PATHTRACK_TRACE_PATHS=I,J",
        "one line on stderr where these paths leave the resident slots",
    ),
    (
        "PATHTRACK_RESIDENT_TRACE",
        "GPU: times the parts of sampled resident iterations",
    ),
    (
        "PATHTRACK_JIT_PTX",
        "GPU: compile kernels to PTX and let the driver finish them",
    ),
    (
        "PATHTRACK_REFINE_TASK=N",
        "endpoints refined per parallel task",
    ),
    (
        "PATHTRACK_PROGRESS_EVERY=S",
        "seconds between plain progress lines on a non-terminal (default 5)",
    ),
    ("RREF_PANEL=B", "rref: fixed panel width of the blocked algorithm"),
];

/// True when the arguments ask for the developer help.
pub fn asked(args: &[String]) -> bool {
    args.iter().skip(1).any(|a| a == "--help-dev")
}

/// The developer help: hidden options by subcommand, then the environment.
pub fn text() -> String {
    let cli = super::Cli::command();
    let mut t = String::from(
        "Developer switches of pathtrack (tuning and comparisons; the defaults are the \
         ones to use)\n",
    );
    for sub in cli.get_subcommands() {
        let hidden: Vec<_> = sub
            .get_arguments()
            .filter(|a| a.is_hide_set() && a.get_long().is_some())
            .collect();
        if hidden.is_empty() {
            continue;
        }
        t.push_str(&format!("\n{} options:\n", sub.get_name()));
        for a in hidden {
            let name = format!(
                "--{} <{}>",
                a.get_long().expect("filtered"),
                a.get_id().as_str().to_uppercase()
            );
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            let default: Vec<String> = a
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            let values: Vec<String> = a
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect();
            t.push_str(&format!("  {name}\n      {help}"));
            if !values.is_empty() {
                t.push_str(&format!(" [values: {}]", values.join(", ")));
            }
            if !default.is_empty() {
                t.push_str(&format!(" [default: {}]", default.join(",")));
            }
            t.push('\n');
        }
    }
    t.push_str("\nEnvironment:\n");
    for (k, v) in ENVIRONMENT {
        t.push_str(&format!("  {k}\n      {v}\n"));
    }
    t
}
