//! PHCpack (`phc`, version 2.4.86 from Debian) as a reference for the benches: `phc -b -tT`
//! solves a system (blackbox: root counts, start system, continuation, root refinement),
//! `phc -m` computes its mixed volume with the MixedVol algorithm; both read the system
//! from a file in PHCpack's format and write their answers to an output file, read back
//! here. Every failure is an `Err(String)` naming the cause, never a panic.
//!
//! `phc -m` is menu driven; its questions (version 2.4.86, input and output files given on
//! the command line) are answered on its standard input with [`MIXED_VOLUME_ANSWERS`].

use super::external::{run_timed, External, ScratchDir};
use crate::system::parse::phc::to_phc;
use crate::system::System;
use std::path::Path;

/// A `phc -b` run: wall seconds of the whole process and what its output file reports.
#[derive(Clone, Debug, PartialEq)]
pub struct PhcSolve {
    pub seconds: f64,
    pub counts: SolveCounts,
}

/// The solutions of a `phc -b` output file. The final lists (`THE SOLUTIONS :`) hold only
/// the paths that reached t = 1 (several lists when PHCpack refines in stages; the paths
/// it gives up on before t = 1 are not listed), so `listed` may be below `paths`. The
/// classes are those of each solution's `== err : … = rco : … = res : … = CLASS ==` line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolveCounts {
    /// Paths tracked: the sizes of the start solution lists; `None` when PHCpack printed
    /// none (it solves small or special systems without continuation).
    pub paths: Option<u64>,
    /// Solutions in the final lists.
    pub listed: u64,
    /// `regular` (and, after deflation, `single`).
    pub regular: u64,
    /// `singular` (and, after deflation, `multiple`).
    pub singular: u64,
    pub clustered: u64,
    pub at_infinity: u64,
    /// `no solution`: Newton's method did not converge at t = 1.
    pub failures: u64,
}

impl SolveCounts {
    /// Paths that gave neither a regular nor a singular solution (failures, at infinity,
    /// clustered, not listed): `paths − regular − singular` (`listed` when no start list).
    pub fn other(&self) -> u64 {
        self.paths
            .unwrap_or(self.listed)
            .saturating_sub(self.regular + self.singular)
    }
}

/// Solves `sys` with `phc -b -tT` (T = `threads`, at least 1) in a scratch directory.
pub fn solve(phc: &Path, sys: &System, threads: usize) -> Result<PhcSolve, String> {
    let dir = ScratchDir::new("phc-b")?;
    let input = write_input(&dir, sys)?;
    let output = dir.path().join("output");
    let tasks = format!("-t{}", threads.max(1));
    let run = run_timed(
        phc,
        &["-b", &tasks, path_str(&input)?, path_str(&output)?],
        b"",
        Some(dir.path()),
    )?;
    let text = read_output(&output)?;
    let counts = parse_solve_output(&text).map_err(|e| format!("phc -b output: {e}"))?;
    Ok(PhcSolve {
        seconds: run.seconds,
        counts,
    })
}

/// The answers to `phc -m`'s questions: lifting strategy 4 (MixedVol algorithm), no
/// random coefficient system to solve (0), no stable mixed volume, no separate file for
/// the mixed cells.
pub const MIXED_VOLUME_ANSWERS: &str = "4\n0\nn\nn\n";

/// The mixed volume of `sys` by `phc -m` (MixedVol, one thread: `phc -m` has none other),
/// with wall and CPU seconds. The time includes writing every mixed cell to the output
/// file, which `phc -m` always does.
pub fn mixed_volume(phc: &Path, sys: &System) -> Result<External, String> {
    let dir = ScratchDir::new("phc-m")?;
    let input = write_input(&dir, sys)?;
    let output = dir.path().join("output");
    let run = run_timed(
        phc,
        &["-m", path_str(&input)?, path_str(&output)?],
        MIXED_VOLUME_ANSWERS.as_bytes(),
        Some(dir.path()),
    )?;
    let text = read_output(&output)?;
    let mixed_volume = parse_mixed_volume(&text).map_err(|e| format!("phc -m output: {e}"))?;
    Ok(External {
        mixed_volume,
        seconds: run.seconds,
        cpu_seconds: run.cpu_seconds,
    })
}

fn write_input(dir: &ScratchDir, sys: &System) -> Result<std::path::PathBuf, String> {
    let input = dir.path().join("input");
    std::fs::write(&input, to_phc(sys))
        .map_err(|e| format!("cannot write phc's input {}: {e}", input.display()))?;
    Ok(input)
}

fn path_str(p: &Path) -> Result<&str, String> {
    p.to_str()
        .ok_or_else(|| format!("{}: not a UTF-8 path", p.display()))
}

fn read_output(output: &Path) -> Result<String, String> {
    std::fs::read(output)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| format!("phc wrote no output file {}: {e}", output.display()))
}

/// The mixed volume in a `phc -m` output file: its `common mixed volume : N` line (the
/// MixedVol algorithm), else the last `mixed volume : N` line.
pub fn parse_mixed_volume(text: &str) -> Result<u128, String> {
    fn last<'a>(text: &'a str, prefix: &str) -> Option<(&'a str, &'a str)> {
        text.lines()
            .rev()
            .find_map(|l| Some((l.trim(), l.trim().strip_prefix(prefix)?.trim())))
    }
    let (line, value) = last(text, "common mixed volume :")
        .or_else(|| last(text, "mixed volume :"))
        .ok_or("no 'mixed volume :' line")?;
    value
        .parse()
        .map_err(|_| format!("unreadable mixed volume in '{line}'"))
}

/// Reads the solution counts of a `phc -b` output file (see [`SolveCounts`]). An error
/// when the file ends before phc's closing `PHC ran from … till …` line, or when a list
/// disagrees with its own header or summary.
pub fn parse_solve_output(text: &str) -> Result<SolveCounts, String> {
    if !text.lines().any(|l| l.starts_with("PHC ran from")) {
        return Err("no closing 'PHC ran from … till …' line: phc stopped early".into());
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut c = SolveCounts::default();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        if l.starts_with("START SOLUTIONS") && l.ends_with(':') {
            let (n, _) = list_header(&lines[i + 1..])
                .ok_or_else(|| format!("no list size after '{l}' (line {})", i + 1))?;
            *c.paths.get_or_insert(0) += n;
        } else if l == "THE SOLUTIONS :" {
            i += read_final_list(&lines[i + 1..], i + 2, &mut c)?;
        }
        i += 1;
    }
    Ok(c)
}

/// The size `N` of a solution list from its header line `N n` (the first non-empty line
/// of `lines`), with the index of that line.
fn list_header(lines: &[&str]) -> Option<(u64, usize)> {
    let (k, l) = lines
        .iter()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty())?;
    let mut words = l.split_whitespace();
    let n = words.next()?.parse().ok()?;
    words.next()?.parse::<u64>().ok()?;
    Some((n, k))
}

/// Adds the final list starting at `lines` (after its `THE SOLUTIONS :` heading; `first`
/// is the 1-based line number of `lines[0]`) to `c`; returns the lines consumed.
fn read_final_list(lines: &[&str], first: usize, c: &mut SolveCounts) -> Result<usize, String> {
    let (declared, start) =
        list_header(lines).ok_or_else(|| format!("no list size on line {first} or after"))?;
    let mut seen = 0u64;
    let mut k = start + 1;
    while k < lines.len() {
        let l = lines[k].trim();
        if l.starts_with("THE SOLUTIONS") || l.starts_with("TIMING INFORMATION") {
            break;
        }
        if let Some(rest) = l.strip_prefix("A list of ") {
            let summary: Option<u64> = rest
                .strip_suffix(" solutions has been refined :")
                .and_then(|n| n.trim().parse().ok());
            if summary != Some(seen) {
                return Err(format!(
                    "line {}: '{l}' after a list of {seen} solutions",
                    first + k
                ));
            }
            break;
        }
        if l.starts_with("== err :") {
            let class = classify(l)
                .ok_or_else(|| format!("line {}: no known class at the end of '{l}'", first + k))?;
            *class(c) += 1;
            seen += 1;
        }
        k += 1;
    }
    if seen != declared {
        return Err(format!(
            "the list after line {} declares {declared} solutions and holds {seen}",
            first - 1
        ));
    }
    c.listed += seen;
    Ok(k)
}

type Counter = fn(&mut SolveCounts) -> &mut u64;

/// The counter of the class that ends a `== err : … = res : … = CLASS ==` line.
fn classify(line: &str) -> Option<Counter> {
    let class = line.trim().strip_suffix("==")?.rsplit('=').next()?.trim();
    let class = class
        .strip_prefix("real ")
        .or_else(|| class.strip_prefix("complex "))
        .unwrap_or(class);
    let counter: Counter = match class {
        "regular" | "single" => |c| &mut c.regular,
        "singular" => |c| &mut c.singular,
        "at infinity" => |c| &mut c.at_infinity,
        "no solution" => |c| &mut c.failures,
        _ if class.starts_with("multiple") => |c| &mut c.singular,
        _ if class.starts_with("clustered") => |c| &mut c.clustered,
        _ => return None,
    };
    Some(counter)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Real `phc -b -t2` output files (PHCpack 2.4.86, this container): the input systems
    // are at their top; the comments below say what each shows.
    const AT_INFINITY: &str = include_str!("../../tests/data/phc_b_at_infinity.out");
    const SINGULAR: &str = include_str!("../../tests/data/phc_b_singular.out");
    const LOST_PATHS: &str = include_str!("../../tests/data/phc_b_lost_paths.out");
    const MIXED_VOLUME: &str = include_str!("../../tests/data/phc_m_cyclic5.out");

    #[test]
    fn solve_outputs_are_counted() {
        // 13 paths; two final lists: 12 regular, then 1 at infinity
        let c = parse_solve_output(AT_INFINITY).unwrap();
        let want = SolveCounts {
            paths: Some(13),
            listed: 13,
            regular: 12,
            at_infinity: 1,
            ..Default::default()
        };
        assert_eq!(c, want);
        assert_eq!(c.other(), 1);
        // 4 paths; two final lists: 1 regular, then 3 (complex) singular
        let c = parse_solve_output(SINGULAR).unwrap();
        assert_eq!(
            (c.paths, c.listed, c.regular, c.singular),
            (Some(4), 4, 1, 3)
        );
        assert_eq!(c.other(), 0);
        // 4 paths, 2 listed: phc drops the paths it gives up on before t = 1
        let c = parse_solve_output(LOST_PATHS).unwrap();
        assert_eq!((c.paths, c.listed, c.regular), (Some(4), 2, 2));
        assert_eq!(c.other(), 2);
    }

    #[test]
    fn every_class_of_an_err_line() {
        let line = |class: &str| {
            format!("== err :  1.0E-16 = rco :  1.0E-01 = res :  1.0E-16 = {class} ==")
        };
        let list: Vec<String> = [
            "real regular",
            "complex regular",
            "real singular",
            "complex clustered : 3",
            "at infinity",
            " no solution",
            "real single",
            "complex multiple: 2",
        ]
        .iter()
        .map(|c| line(c))
        .collect();
        let text = format!(
            "THE SOLUTIONS :\n\n{} 2\n{}\nPHC ran from now till later.\n",
            list.len(),
            list.join("\n")
        );
        let c = parse_solve_output(&text).unwrap();
        let want = SolveCounts {
            paths: None,
            listed: 8,
            regular: 3,
            singular: 2,
            clustered: 1,
            at_infinity: 1,
            failures: 1,
        };
        assert_eq!(c, want);
        assert_eq!(c.other(), 3);
        // no final list at all (every path given up on): nothing listed
        let c = parse_solve_output("START SOLUTIONS :\n4 2\n\nPHC ran from a till b.\n").unwrap();
        assert_eq!((c.paths, c.listed, c.other()), (Some(4), 0, 4));
    }

    #[test]
    fn bad_solve_outputs_are_errors() {
        let cut = &AT_INFINITY[..AT_INFINITY.find("PHC ran from").unwrap()];
        let e = parse_solve_output(cut).unwrap_err();
        assert!(e.contains("stopped early"), "{e}");
        for (text, why) in [
            ("", "stopped early"),
            ("THE SOLUTIONS :\n\n2 2\n== err : 1 = rco : 1 = res : 1 = real regular ==\nPHC ran from", "declares 2 solutions and holds 1"),
            ("THE SOLUTIONS :\n\n1 2\n== err : 1 = rco : 1 = res : 1 = purple ==\nPHC ran from", "no known class"),
            ("THE SOLUTIONS :\nnothing\nPHC ran from", "no list size"),
            ("START SOLUTIONS :\nx y\nPHC ran from", "no list size"),
            ("THE SOLUTIONS :\n1 2\n== err : 1 = rco : 1 = res : 1 = real regular ==\nA list of 2 solutions has been refined :\nPHC ran from", "after a list of 1"),
        ] {
            let e = parse_solve_output(text).unwrap_err();
            assert!(e.contains(why), "{text:?}: {e}");
        }
    }

    #[test]
    fn mixed_volume_outputs() {
        assert_eq!(parse_mixed_volume(MIXED_VOLUME), Ok(70));
        assert_eq!(parse_mixed_volume("mixed volume : 12\n"), Ok(12));
        assert!(parse_mixed_volume("nothing here\n")
            .unwrap_err()
            .contains("no 'mixed volume"));
        let e = parse_mixed_volume("common mixed volume : many\n").unwrap_err();
        assert!(e.contains("unreadable"), "{e}");
    }

    #[test]
    fn the_answers_answer_four_questions() {
        // lifting strategy, precision of a random coefficient system, stable mixed
        // volume, cells on a separate file (docs/mixed-cells.md has the transcript)
        assert_eq!(
            MIXED_VOLUME_ANSWERS.lines().collect::<Vec<_>>(),
            ["4", "0", "n", "n"]
        );
        assert!(MIXED_VOLUME.contains("MixedVol Algorithm"));
    }
}
