//! `pathtrack bench cells`: the mixed-cell enumeration per system (mixed volume, cells,
//! homotopy steps, wall and CPU seconds) beside `gfan _mixedvolume -j T` on the same
//! supports when `gfan` is on `PATH`. PHCpack's `phc -m` asks its questions on the terminal,
//! so it is never run (a note says whether it is installed). See docs/mixed-cells.md.

use crate::error::Result;
use crate::start::polyhedral::{mixed_volume_of, Supports};
use crate::system::System;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// A reference program's answer: its mixed volume, wall and CPU seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct External {
    pub mixed_volume: u128,
    pub seconds: f64,
    pub cpu_seconds: Option<f64>,
}

/// The executable `name` in the directories of `path` (a `PATH`-style list).
pub fn find_program(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// gfan's input for the mixed volume of `sys`: `Q[x0,…]{f_0, …}` with every coefficient 1
/// (the mixed volume depends on the supports only) and each support translated into the
/// positive orthant (Laurent exponents; translation does not change the mixed volume).
/// The variable names have equal length (`x00, …, x11` from 11 variables on): gfan 0.6.2
/// reads `x10` as `x1` followed by `0` when `x1` is also a variable, and then reports a
/// mixed volume of 0 (measured on cyclic-11 and -12).
pub fn gfan_input(sys: &System) -> String {
    let n = sys.n();
    let width = n.saturating_sub(1).to_string().len();
    let vars: Vec<String> = (0..n).map(|i| format!("x{i:0width$}")).collect();
    let polys: Vec<String> = sys
        .equations
        .iter()
        .map(|p| {
            let low: Vec<i32> = (0..n)
                .map(|j| p.terms.iter().map(|t| t.exponents[j]).min().unwrap_or(0))
                .collect();
            let monos: Vec<String> = p
                .terms
                .iter()
                .map(|t| {
                    let factors: Vec<String> = t
                        .exponents
                        .iter()
                        .zip(&low)
                        .enumerate()
                        .filter(|(_, (e, l))| *e - *l > 0)
                        .map(|(j, (e, l))| match e - l {
                            1 => vars[j].clone(),
                            k => format!("{}^{k}", vars[j]),
                        })
                        .collect();
                    if factors.is_empty() {
                        "1".to_string()
                    } else {
                        factors.join("*")
                    }
                })
                .collect();
            monos.join("+")
        })
        .collect();
    format!("Q[{}]{{{}}}\n", vars.join(","), polys.join(","))
}

/// Runs `gfan _mixedvolume -j threads` on `sys` (stdin) and reads the mixed volume (the
/// last number it prints).
pub fn gfan_mixed_volume(
    gfan: &Path,
    sys: &System,
    threads: usize,
) -> std::result::Result<External, String> {
    let cpu0 = children_cpu_seconds();
    let start = Instant::now();
    let mut child = Command::new(gfan)
        .args(["_mixedvolume", "-j", &threads.max(1).to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", gfan.display()))?;
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(gfan_input(sys).as_bytes())
        .map_err(|e| format!("gfan stdin: {e}"))?;
    let out = child.wait_with_output().map_err(|e| format!("gfan: {e}"))?;
    let seconds = start.elapsed().as_secs_f64();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("gfan: {} {}", out.status, err.trim()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mixed_volume = text
        .split_whitespace()
        .last()
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| format!("gfan: no mixed volume in its output '{}'", text.trim()))?;
    let cpu_seconds = cpu0.zip(children_cpu_seconds()).map(|(a, b)| b - a);
    Ok(External {
        mixed_volume,
        seconds,
        cpu_seconds,
    })
}

/// Clock ticks per second of `/proc/<pid>/stat` (`USER_HZ`, 100 on Linux).
const USER_HZ: f64 = 100.0;

/// Fields 14–17 of `/proc/self/stat` (`utime`, `stime`, `cutime`, `cstime`) in seconds.
fn proc_times() -> Option<[f64; 4]> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // the command name (field 2) may contain spaces: count from its closing parenthesis
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let get = |i: usize| f.get(i - 3)?.parse::<f64>().ok().map(|t| t / USER_HZ);
    Some([get(14)?, get(15)?, get(16)?, get(17)?])
}

/// CPU seconds (user + system) of this process, all threads.
pub fn process_cpu_seconds() -> Option<f64> {
    proc_times().map(|t| t[0] + t[1])
}

/// CPU seconds of the children waited for.
fn children_cpu_seconds() -> Option<f64> {
    proc_times().map(|t| t[2] + t[3])
}

/// One row of the table (`steps` of the last lifting tried; `seconds`, `cpu_seconds` over
/// all of them).
#[derive(Clone, Debug)]
pub struct CellsRow {
    pub system: String,
    pub mixed_volume: u128,
    pub cells: u64,
    pub steps: u64,
    pub seconds: f64,
    pub cpu_seconds: Option<f64>,
    pub threads: usize,
    pub gfan: Option<std::result::Result<External, String>>,
}

/// Times the mixed cells of every system on `threads` threads (0: all cores) and, when
/// `gfan` is found in `path`, `gfan _mixedvolume` with as many threads; prints the table
/// and returns its rows. Absent programs are noted, never an error.
pub fn bench_cells(
    systems: &[System],
    threads: usize,
    seed: u64,
    path: Option<&OsStr>,
) -> Result<Vec<CellsRow>> {
    let gfan = find_program("gfan", path);
    match &gfan {
        Some(p) => println!("# gfan: {} (_mixedvolume, same supports)", p.display()),
        None => println!("# gfan not found on PATH: no gfan column"),
    }
    match find_program("phc", path) {
        Some(p) => println!(
            "# phc: {} found, not run (phc -m asks its questions interactively)",
            p.display()
        ),
        None => println!("# phc not found on PATH: not run (phc -m is interactive anyway)"),
    }
    println!(
        "{:<12} {:>14} {:>9} {:>11} {:>5} {:>9} {:>9} {:>7} {:>9} {:>9} {:>6}",
        "system",
        "mixed_volume",
        "cells",
        "steps",
        "ties",
        "wall_s",
        "cpu_s",
        "threads",
        "gfan_s",
        "gfan_cpu",
        "agree"
    );
    let fmt_opt = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.3}"));
    let mut rows = Vec::new();
    for sys in systems {
        let s = Supports::from_system(sys)?;
        // wall and CPU over the whole call (a lifting found non-generic by the tree search
        // is redrawn and the enumeration restarted; the homotopy resolves ties: `ties`)
        let cpu0 = process_cpu_seconds();
        let start = Instant::now();
        let st = mixed_volume_of(&s, seed, threads)?;
        let seconds = start.elapsed().as_secs_f64();
        let cpu_seconds = cpu0.zip(process_cpu_seconds()).map(|(a, b)| b - a);
        let g = gfan
            .as_deref()
            .map(|g| gfan_mixed_volume(g, sys, st.threads));
        let (gs, gc, agree) = match &g {
            None => ("-".to_string(), "-".to_string(), "-".to_string()),
            Some(Ok(e)) => (
                format!("{:.3}", e.seconds),
                fmt_opt(e.cpu_seconds),
                if e.mixed_volume == st.mixed_volume {
                    "yes".to_string()
                } else {
                    format!("NO: gfan {}", e.mixed_volume)
                },
            ),
            Some(Err(m)) => ("error".to_string(), "-".to_string(), m.clone()),
        };
        println!(
            "{:<12} {:>14} {:>9} {:>11} {:>5} {:>9.3} {:>9} {:>7} {:>9} {:>9} {:>6}",
            sys.name,
            st.mixed_volume,
            st.cells,
            st.steps + st.lp_calls + st.relation_lps,
            st.ties,
            seconds,
            fmt_opt(cpu_seconds),
            st.threads,
            gs,
            gc,
            agree
        );
        rows.push(CellsRow {
            system: sys.name.clone(),
            mixed_volume: st.mixed_volume,
            cells: st.cells,
            steps: st.steps + st.lp_calls + st.relation_lps,
            seconds,
            cpu_seconds,
            threads: st.threads,
            gfan: g,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::families::generate;

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pathtrack-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn gfan_input_is_the_positive_supports() {
        let sys = generate("cyclic", 3).unwrap();
        assert_eq!(
            gfan_input(&sys),
            "Q[x0,x1,x2]{x0+x1+x2,x0*x1+x0*x2+x1*x2,x0*x1*x2+1}\n"
        );
        // equal-length names from 11 variables on (gfan misreads `x10` next to `x1`)
        let s = gfan_input(&generate("cyclic", 11).unwrap());
        assert!(s.starts_with("Q[x00,x01,"), "{s}");
        assert!(s.contains("x00+x01+x02+"), "{s}");
        assert!(!s.contains("x1+"), "{s}");
    }

    /// Without gfan and phc on the path the table is printed with notes, no error.
    #[test]
    fn absent_programs_are_noted() {
        let empty = temp_dir("empty");
        let path = std::env::join_paths([&empty]).unwrap();
        assert_eq!(find_program("gfan", Some(&path)), None);
        assert_eq!(find_program("gfan", None), None);
        let sys = vec![generate("cyclic", 5).unwrap()];
        let rows = bench_cells(&sys, 1, 1, Some(&path)).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].mixed_volume, 70);
        assert!(rows[0].gfan.is_none());
    }

    /// A stand-in `gfan` (a shell script that checks its arguments and answers a number)
    /// exercises the path where gfan is installed: found, run, read, compared.
    #[test]
    fn gfan_on_path_is_run_and_compared() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir("fakegfan");
        let script = dir.join("gfan");
        std::fs::write(
            &script,
            "#!/bin/sh\n[ \"$1\" = _mixedvolume ] && [ \"$2\" = -j ] || exit 3\n\
             grep -q '^Q\\[x0,x1,x2,x3,x4\\]' || exit 4\necho 70\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([&dir]).unwrap();
        assert_eq!(find_program("gfan", Some(&path)), Some(script.clone()));
        let sys = vec![generate("cyclic", 5).unwrap()];
        let rows = bench_cells(&sys, 2, 1, Some(&path)).unwrap();
        let g = rows[0].gfan.clone().unwrap().unwrap();
        assert_eq!(g.mixed_volume, 70);
        assert!(g.seconds > 0.0);
        // a failing gfan is reported in the row, not as an error
        std::fs::write(&script, "#!/bin/sh\necho oops >&2\nexit 1\n").unwrap();
        let rows = bench_cells(&sys, 1, 1, Some(&path)).unwrap();
        assert!(rows[0].gfan.clone().unwrap().is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
