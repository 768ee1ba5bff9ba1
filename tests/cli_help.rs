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
        for bad in ["[`", "`]", "the seed's route"] {
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
