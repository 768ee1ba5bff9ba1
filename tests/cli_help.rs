//! The help texts are for users: no rustdoc markup (`[`Foo`]` links), no references to
//! the project's sources, and developer switches hidden from `solve --help`.

use clap::{CommandFactory, Parser};

/// The long help of `cmd` and of every subcommand under it, with their names.
fn all_help(cmd: &mut clap::Command, path: &str, out: &mut Vec<(String, String)>) {
    let name = format!("{path} {}", cmd.get_name()).trim().to_string();
    out.push((name.clone(), cmd.render_long_help().to_string()));
    for sub in cmd.get_subcommands_mut() {
        all_help(sub, &name, out);
    }
}

#[test]
fn help_has_no_rustdoc_markup() {
    let mut out = Vec::new();
    all_help(&mut pathtrack::cli::Cli::command(), "", &mut out);
    assert!(out.len() > 10, "{} help pages", out.len());
    for (name, text) in &out {
        for bad in ["[`", "`]", "the seed's route", "src/", ".rs ", "session "] {
            assert!(
                !text.contains(bad),
                "`{name} --help` contains {bad:?}:\n{text}"
            );
        }
    }
}

/// GPU tuning switches are not in `solve --help` (they stay usable).
#[test]
fn solve_help_hides_developer_switches() {
    let mut cli = pathtrack::cli::Cli::command();
    let solve = cli.find_subcommand_mut("solve").unwrap();
    let help = solve.render_long_help().to_string();
    for flag in ["--cuda-eval", "--cuda-solve", "--resident", "--eta-target"] {
        assert!(!help.contains(flag), "solve --help shows {flag}");
    }
    let parsed = pathtrack::cli::Cli::try_parse_from([
        "pathtrack",
        "solve",
        "katsura3",
        "--cuda-solve",
        "qr",
        "--resident",
        "false",
    ]);
    assert!(parsed.is_ok(), "{parsed:?}");
}

/// `pathtrack --help-dev` (and `solve --help-dev`) lists every switch that `--help` hides,
/// with its help, and the environment variables; `--help` points to it.
#[test]
fn help_dev_lists_the_hidden_switches() {
    let cli = pathtrack::cli::Cli::command();
    let mut hidden = Vec::new();
    for sub in cli.get_subcommands() {
        for a in sub.get_arguments().filter(|a| a.is_hide_set()) {
            hidden.push(format!("--{}", a.get_long().unwrap()));
        }
    }
    assert!(hidden.len() >= 5, "{hidden:?}");
    for args in [&["--help-dev"][..], &["solve", "--help-dev"][..]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pathtrack"))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        for flag in &hidden {
            assert!(
                text.contains(&format!("{flag} <")),
                "{args:?} lacks {flag}:\n{text}"
            );
        }
        assert!(text.contains("PATHTRACK_EARLY_RECOVERY"), "{text}");
        assert!(!text.contains("[`"), "{text}");
    }
    let mut cli = pathtrack::cli::Cli::command();
    assert!(cli.render_long_help().to_string().contains("--help-dev"));
    let solve = cli.find_subcommand_mut("solve").unwrap();
    assert!(solve.render_long_help().to_string().contains("--help-dev"));
}
