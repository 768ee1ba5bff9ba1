//! `pathtrack bench cells`: the mixed-cell enumeration per system (mixed volume, cells,
//! homotopy steps, wall and CPU seconds) beside `gfan _mixedvolume -j T` on the same
//! supports when `gfan` is on `PATH` ([`super::gfan`]), and beside PHCpack's `phc -m`
//! (MixedVol, one thread, its menu answered on stdin, see [`super::phc`]) when `phc` is.
//! See docs/mixed-cells.md.

use super::external::{find_program, External};
use super::gfan::gfan_mixed_volume;
use crate::error::Result;
use crate::report::usage::process_cpu_seconds;
use crate::start::polyhedral::{mixed_volume_of, Supports};
use crate::system::System;
use std::ffi::OsStr;
use std::time::Instant;

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
    pub phc: Option<std::result::Result<External, String>>,
}

/// Times the mixed cells of every system on `threads` threads (0: all cores) and, when
/// found in `path`, `gfan _mixedvolume` with as many threads and `phc -m`; prints the
/// table and returns its rows. Absent programs are noted, never an error; a failing one
/// is reported in its row.
pub fn run(
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
    let phc = find_program("phc", path);
    match &phc {
        Some(p) => println!(
            "# phc: {} -m (MixedVol, one thread; its time includes writing the cells)",
            p.display()
        ),
        None => println!("# phc not found on PATH: no phc -m column"),
    }
    println!(
        "{:<12} {:>14} {:>9} {:>11} {:>5} {:>9} {:>9} {:>7} {:>9} {:>9} {:>14} {:>9} {:>6}",
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
        "phc_mv",
        "phc_s",
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
        let p = phc.as_deref().map(|p| super::phc::mixed_volume(p, sys));
        let (gs, gc) = match &g {
            Some(Ok(e)) => (format!("{:.3}", e.seconds), fmt_opt(e.cpu_seconds)),
            Some(Err(_)) => ("error".to_string(), "-".to_string()),
            None => ("-".to_string(), "-".to_string()),
        };
        let (pm, ps) = match &p {
            Some(Ok(e)) => (e.mixed_volume.to_string(), format!("{:.3}", e.seconds)),
            Some(Err(_)) => ("error".to_string(), "-".to_string()),
            None => ("-".to_string(), "-".to_string()),
        };
        println!(
            "{:<12} {:>14} {:>9} {:>11} {:>5} {:>9.3} {:>9} {:>7} {:>9} {:>9} {:>14} {:>9} {:>6}",
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
            pm,
            ps,
            agreement(st.mixed_volume, &[("gfan", &g), ("phc", &p)])
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
            phc: p,
        });
    }
    Ok(rows)
}

/// The `agree` column: `yes` when every reference that ran gives our mixed volume, `-`
/// when none ran, else each disagreement (`NO: gfan 0`) and failure (its message).
fn agreement(
    ours: u128,
    refs: &[(&str, &Option<std::result::Result<External, String>>)],
) -> String {
    let mut notes = Vec::new();
    let mut ran = false;
    for (name, r) in refs {
        match r {
            Some(Ok(e)) if e.mixed_volume == ours => ran = true,
            Some(Ok(e)) => notes.push(format!("NO: {name} {}", e.mixed_volume)),
            Some(Err(m)) => notes.push(m.clone()),
            None => {}
        }
    }
    match (notes.is_empty(), ran) {
        (true, true) => "yes".to_string(),
        (true, false) => "-".to_string(),
        (false, _) => notes.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::external::{write_script, ScratchDir};
    use crate::system::families::generate;

    /// Without gfan and phc on the path the table is printed with notes, no error.
    #[test]
    fn absent_programs_are_noted() {
        let empty = ScratchDir::new("empty").unwrap();
        let path = std::env::join_paths([empty.path()]).unwrap();
        let sys = vec![generate("cyclic", 5).unwrap()];
        let rows = run(&sys, 1, 1, Some(&path)).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].mixed_volume, 70);
        assert!(rows[0].gfan.is_none() && rows[0].phc.is_none());
    }

    /// Stand-ins for `gfan` and `phc` (shell scripts that check their arguments and input
    /// and answer a number) exercise the path where they are installed: found, run, read,
    /// compared.
    #[test]
    fn references_on_path_are_run_and_compared() {
        let dir = ScratchDir::new("fakeref").unwrap();
        let gfan = write_script(
            dir.path(),
            "gfan",
            "[ \"$1\" = _mixedvolume ] && [ \"$2\" = -j ] || exit 3\n\
             grep -q '^Q\\[x0,x1,x2,x3,x4\\]' || exit 4\necho 70\n",
        );
        // phc -m INPUT OUTPUT, the menu answered on stdin, the answer in OUTPUT
        let phc = write_script(
            dir.path(),
            "phc",
            "[ \"$1\" = -m ] && grep -q 'x1\\*x2\\*x3\\*x4\\*x5 - 1;' \"$2\" || exit 3\n\
             read a; read b; read c; read d; [ \"$a$b$c$d\" = 40nn ] || exit 4\n\
             echo 'common mixed volume : 70' > \"$3\"\n",
        );
        let path = std::env::join_paths([dir.path()]).unwrap();
        assert_eq!(find_program("gfan", Some(&path)), Some(gfan));
        assert_eq!(find_program("phc", Some(&path)), Some(phc));
        let sys = vec![generate("cyclic", 5).unwrap()];
        let rows = run(&sys, 2, 1, Some(&path)).unwrap();
        let g = rows[0].gfan.clone().unwrap().unwrap();
        assert_eq!(g.mixed_volume, 70);
        assert!(g.seconds > 0.0);
        let p = rows[0].phc.clone().unwrap().unwrap();
        assert_eq!(p.mixed_volume, 70);
        // failing programs are reported in the row, not as an error
        write_script(dir.path(), "gfan", "echo oops >&2\nexit 1\n");
        write_script(dir.path(), "phc", "echo 'no volume here' > \"$3\"\n");
        let rows = run(&sys, 1, 1, Some(&path)).unwrap();
        assert!(rows[0].gfan.clone().unwrap().is_err());
        let e = rows[0].phc.clone().unwrap().unwrap_err();
        assert!(e.starts_with("phc -m output: no 'mixed volume"), "{e}");
    }

    #[test]
    fn the_agree_column() {
        let ext = |mixed_volume| {
            Some(Ok(External {
                mixed_volume,
                seconds: 1.0,
                cpu_seconds: None,
            }))
        };
        let (g70, p71, none) = (ext(70), ext(71), None);
        let failed = Some(Err("phc: exit status: 1".to_string()));
        assert_eq!(agreement(70, &[("gfan", &g70), ("phc", &none)]), "yes");
        assert_eq!(agreement(70, &[("gfan", &none), ("phc", &none)]), "-");
        assert_eq!(
            agreement(70, &[("gfan", &g70), ("phc", &p71)]),
            "NO: phc 71"
        );
        assert_eq!(
            agreement(71, &[("gfan", &g70), ("phc", &failed)]),
            "NO: gfan 70; phc: exit status: 1"
        );
    }
}
