//! Command line: `pathtrack [solve] FILE`, `count`, `generate`, `rref`, `bench`,
//! `certify`.
//!
//! Each subcommand has its own module with a clap `Args` struct and a `run` function that
//! returns the process exit code or an [`crate::Error`] (printed here, exit code from
//! [`crate::Error::exit_code`]). Results go to stdout; progress and notices to stderr.

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "pathtrack", version, about = "All isolated solutions of a polynomial system by homotopy continuation", long_about = None, after_help = "Developer switches (tuning, comparisons): pathtrack --help-dev")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Solve a system (the default: `pathtrack FILE` is `pathtrack solve FILE`).
    #[command(after_help = "Developer switches (tuning, comparisons): pathtrack --help-dev")]
    Solve(solve_args::SolveArgs),
    /// Write a member of a benchmark family (cyclic, katsura, noon, eco, chandra, reimer) as YAML.
    Generate(generate::GenerateArgs),
    /// Root counts: total degree, mixed volume, stable mixed volume, mixed cells.
    Count(count::CountArgs),
    /// Benchmarks that print tables (solve throughput, evaluator throughput).
    Bench(bench::BenchArgs),
    /// Reduced row echelon form of a Matrix Market matrix over Z/p, f64 or complex f64.
    Rref(rref::RrefArgs),
    /// Write a system in another format (PHCpack, Bertini, Hom4PS, YAML), exactly.
    Convert(convert::ConvertArgs),
    /// Prove solutions in interval arithmetic (Krawczyk): unique root nearby, distinct, real.
    Certify(certify::CertifyArgs),
    /// All solutions of a generic member of a family with parameters, by monodromy loops.
    Monodromy(monodromy::MonodromyArgs),
    /// Witness point sets of the solution sets of every dimension (any number of equations).
    Witness(witness::WitnessArgs),
    /// Numerical irreducible decomposition: components by dimension and degree.
    Decompose(witness::DecomposeArgs),
    /// Whether a point lies on a solution component (homotopy membership test).
    Member(witness::MemberArgs),
    /// The solutions of a JSON Lines file from `solve -o` or `--solutions`, as a table.
    Show(show::ShowArgs),
    /// Combine the -o files of `solve --shard K/N` runs into the whole run's summary.
    Merge(merge::MergeArgs),
}

pub mod announce;
pub mod bench;
pub mod certify;
pub mod checkpoint;
pub mod convert;
pub mod count;
pub mod generate;
pub mod help_dev;
pub mod interrupt;
pub mod line_writer;
pub mod merge;
pub mod monodromy;
pub mod outputs;
pub mod pipe;
pub mod resources;
pub mod rref;
pub mod show;
pub mod solve;
pub mod solve_args;
pub mod witness;

/// Subcommand names, so that `pathtrack FILE` can be read as `pathtrack solve FILE`.
const SUBCOMMANDS: &[&str] = &[
    "solve",
    "generate",
    "count",
    "rref",
    "bench",
    "convert",
    "certify",
    "show",
    "monodromy",
    "help",
    "witness",
    "decompose",
    "member",
    "merge",
];

/// Inserts `solve` when the first argument is neither a subcommand nor a flag.
fn with_default_subcommand(mut args: Vec<String>) -> Vec<String> {
    if let Some(first) = args.get(1) {
        if !first.starts_with('-') && !SUBCOMMANDS.contains(&first.as_str()) {
            args.insert(1, "solve".to_string());
        }
    }
    args
}

/// Parses the process arguments and runs; returns the exit code. A reader that closes
/// stdout early ends the run quietly ([`pipe`]).
pub fn main_entry() -> i32 {
    pipe::quiet();
    pipe::guard(|| run_args(std::env::args().collect()))
}

/// Parses `args` (the program name first) and runs; returns the exit code. The library
/// entry of the command line, also for tests.
pub fn run_args(args: Vec<String>) -> i32 {
    if help_dev::asked(&args) {
        print!("{}", help_dev::text());
        return 0;
    }
    let args = with_default_subcommand(args);
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let result = match &cli.command {
        Command::Solve(a) => solve::run(a),
        Command::Generate(a) => generate::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Count(a) => count::run(a),
        Command::Rref(a) => rref::run(a),
        Command::Convert(a) => convert::run(a),
        Command::Certify(a) => certify::run(a),
        Command::Monodromy(a) => monodromy::run(a),
        Command::Witness(a) => witness::run_witness(a),
        Command::Decompose(a) => witness::run_decompose(a),
        Command::Member(a) => witness::run_member(a),
        Command::Show(a) => show::run(a),
        Command::Merge(a) => merge::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) if pipe::is_broken_pipe(&e) => 0,
        Err(e) => {
            eprintln!("pathtrack: error: {e}");
            e.exit_code()
        }
    }
}
