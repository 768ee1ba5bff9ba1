//! `pathtrack bench solve`: full solves per system (paths, finite, at infinity, failed,
//! seconds, paths/s) beside PHCpack's blackbox solver `phc -b -tT` (T = the bench's
//! threads) when `phc` is on `PATH`: its wall seconds, regular / singular / other solution
//! counts and the speed-up (phc seconds / ours); and beside Macaulay2's `solveSystem`
//! (NumericalAlgebraicGeometry, one thread, total degree) when `M2` is on `PATH`: its wall
//! seconds (whole process), the seconds of the call alone, its regular solutions and the
//! speed-up (M2's whole-process seconds / ours). A failing phc or M2 is reported in its row.

use super::external::find_program;
use super::m2::{self, M2Solve};
use super::phc::{self, PhcSolve};
use crate::backend::Backend;
use crate::error::Result;
use crate::report::Summary;
use crate::solver::{solve, SolveOptions, StartKind};
use crate::track::TrackerOptions;
use std::ffi::OsStr;

/// One row of the table: our solve and, when phc is on the path, its run.
#[derive(Clone, Debug)]
pub struct SolveRow {
    pub system: String,
    pub ours: Summary,
    pub phc: Option<std::result::Result<PhcSolve, String>>,
    /// M2's `solveSystem`, when `M2` is on the path.
    pub m2: Option<std::result::Result<M2Solve, String>>,
}

/// Solves every system (names of families with a size, or files) on `backend` (`threads`
/// host threads, 0: all cores) with `tracker`'s settings and, when `phc`
/// is found in `path`, with `phc -b -tT` on as many threads; prints the table and returns
/// its rows.
#[allow(clippy::too_many_arguments)]
pub fn run(
    systems: &[String],
    threads: usize,
    seed: u64,
    start: StartKind,
    path: Option<&OsStr>,
    backend: &mut dyn Backend,
    tracker: &TrackerOptions,
) -> Result<Vec<SolveRow>> {
    let t = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    };
    println!(
        "# pathtrack bench solve (backend {}, {t} host threads, seed {seed})",
        backend.name()
    );
    let phc_path = find_program("phc", path);
    match &phc_path {
        Some(p) => println!(
            "# phc: {} -b -t{t} (wall s); phc_other = paths - regular - singular \
             (failures, at infinity, clustered, paths not listed); speedup = phc_s / seconds",
            p.display()
        ),
        None => println!("# phc not found on PATH: no PHCpack column"),
    }
    let m2_path = find_program("M2", path);
    match &m2_path {
        Some(p) => println!(
            "# M2: {} --script (solveSystem, NumericalAlgebraicGeometry, one thread); m2_s = \
             wall s of the whole process, m2_call_s = the solveSystem call alone; \
             m2_speedup = m2_s / seconds",
            p.display()
        ),
        None => println!("# M2 not found on PATH: no Macaulay2 column"),
    }
    print!(
        "{:<12} {:>12} {:>8} {:>8} {:>7} {:>7} {:>9} {:>9}",
        "system", "start", "paths", "finite", "at_inf", "failed", "seconds", "paths/s"
    );
    if phc_path.is_some() {
        print!(
            " {:>9} {:>9} {:>8} {:>8} {:>9} {:>8}",
            "phc_s", "phc_paths", "phc_reg", "phc_sing", "phc_other", "speedup"
        );
    }
    if m2_path.is_some() {
        print!(
            " {:>8} {:>10} {:>7} {:>7} {:>11}",
            "m2_s", "m2_call_s", "m2_pts", "m2_reg", "m2_speedup"
        );
    }
    println!();
    let mut rows = Vec::new();
    for name in systems {
        let sys = crate::system::parse::load_named(std::path::Path::new(name))?;
        let opts = SolveOptions {
            seed,
            start,
            threads,
            tracker: tracker.clone(),
            ..Default::default()
        };
        let s = solve(
            &sys,
            &opts,
            backend,
            &mut |_: &crate::post::Endpoint| Ok(()),
        )?;
        print!(
            "{:<12} {:>12} {:>8} {:>8} {:>7} {:>7} {:>9.3} {:>9.1}",
            name,
            s.start,
            s.paths,
            s.finite,
            s.at_infinity,
            s.failed,
            s.seconds,
            s.paths as f64 / s.seconds
        );
        let p = phc_path.as_deref().map(|p| phc::solve(p, &sys, t));
        let mut failures = Vec::new();
        match &p {
            None => {}
            Some(Ok(r)) => {
                let c = &r.counts;
                let paths = c.paths.map_or("-".to_string(), |n| n.to_string());
                print!(
                    " {:>9.3} {:>9} {:>8} {:>8} {:>9} {:>7.1}x",
                    r.seconds,
                    paths,
                    c.regular,
                    c.singular,
                    c.other(),
                    r.seconds / s.seconds
                );
            }
            Some(Err(e)) => {
                print!(
                    " {:>9} {:>9} {:>8} {:>8} {:>9} {:>8}",
                    "-", "-", "-", "-", "-", "-"
                );
                failures.push(format!("phc failed: {e}"));
            }
        }
        let m = m2_path.as_deref().map(|p| m2::solve(p, &sys));
        match &m {
            None => {}
            Some(Ok(r)) => print!(
                " {:>8.3} {:>10.3} {:>7} {:>7} {:>10.1}x",
                r.seconds,
                r.solve_seconds,
                r.counts.points,
                r.counts.regular,
                r.seconds / s.seconds
            ),
            Some(Err(e)) => failures.push(format!("M2 failed: {e}")),
        }
        if failures.is_empty() {
            println!();
        } else {
            println!("  {}", failures.join("; "));
        }
        rows.push(SolveRow {
            system: name.clone(),
            ours: s,
            phc: p,
            m2: m,
        });
    }
    for r in &rows {
        if let Some(Ok(p)) = &r.phc {
            let c = &p.counts;
            println!(
                "# phc {}: {} listed of {} paths: {} regular, {} singular, {} clustered, \
                 {} at infinity, {} failures",
                r.system,
                c.listed,
                c.paths.map_or("?".to_string(), |n| n.to_string()),
                c.regular,
                c.singular,
                c.clustered,
                c.at_infinity,
                c.failures
            );
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::external::{write_script, ScratchDir};
    use std::path::Path;

    fn cyclic5(path: &OsStr) -> SolveRow {
        let rows = run(
            &["cyclic5".to_string()],
            1,
            1,
            StartKind::Polyhedral,
            Some(path),
            &mut crate::backend::cpu::CpuBackend::new(1).unwrap(),
            &TrackerOptions::default(),
        )
        .unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].ours.paths, rows[0].ours.finite), (70, 70));
        rows.into_iter().next().unwrap()
    }

    /// Without phc on the path: our columns only, no error.
    #[test]
    fn without_phc_there_is_no_phc_column() {
        let empty = ScratchDir::new("nophc").unwrap();
        let path = std::env::join_paths([empty.path()]).unwrap();
        let row = cyclic5(&path);
        assert!(row.phc.is_none() && row.m2.is_none());
    }

    /// A stand-in `M2` that checks its arguments and script and prints a result line; then
    /// ones that fail or print nothing readable: reported in the row.
    #[test]
    fn a_stand_in_m2_is_run_and_read() {
        let dir = ScratchDir::new("fakem2").unwrap();
        write_script(
            dir.path(),
            "M2",
            "[ \"$1\" = --script ] || exit 3\n\
             grep -q 'R = CC\\[x_1..x_5\\]' \"$2\" || exit 4\n\
             grep -q 'solveSystem F' \"$2\" || exit 5\n\
             echo 'pathtrack-m2: 120 70 0 .25'\n",
        );
        let path = std::env::join_paths([dir.path()]).unwrap();
        let row = cyclic5(&path);
        assert!(row.phc.is_none());
        let m = row.m2.unwrap().unwrap();
        assert_eq!(
            (m.counts.points, m.counts.regular, m.counts.other()),
            (120, 70, 50)
        );
        assert_eq!(m.solve_seconds, 0.25);
        assert!(m.seconds > 0.0);
        for (body, why) in [
            (
                "echo 'error: no method' >&2\nexit 1\n",
                "M2: exit status: 1: error",
            ),
            ("echo hello\n", "M2: no 'pathtrack-m2:' line"),
        ] {
            write_script(dir.path(), "M2", body);
            let e = cyclic5(&path).m2.unwrap().unwrap_err();
            assert!(e.starts_with(why), "{e}");
        }
    }

    /// A stand-in `phc` that checks its arguments and input and writes a captured output
    /// file; then ones that fail or write something else: reported in the row.
    #[test]
    fn a_stand_in_phc_is_run_and_read() {
        let dir = ScratchDir::new("fakephc").unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/phc_b_singular.out");
        write_script(
            dir.path(),
            "phc",
            &format!(
                "[ \"$1\" = -b ] && [ \"$2\" = -t1 ] || exit 3\n\
                 head -1 \"$3\" | grep -qx 5 || exit 4\ncp '{}' \"$4\"\n",
                fixture.display()
            ),
        );
        let path = std::env::join_paths([dir.path()]).unwrap();
        let p = cyclic5(&path).phc.unwrap().unwrap();
        assert_eq!(
            (p.counts.paths, p.counts.regular, p.counts.singular),
            (Some(4), 1, 3)
        );
        assert!(p.seconds > 0.0);
        for (body, why) in [
            (
                "echo 'raised ADA.IO_EXCEPTIONS.END_ERROR' >&2\nexit 1\n",
                "phc: exit status: 1: raised ADA",
            ),
            (
                "echo 'THE SOLUTIONS :' > \"$4\"\n",
                "phc -b output: no closing",
            ),
            ("exit 0\n", "phc wrote no output file"),
        ] {
            write_script(dir.path(), "phc", body);
            let e = cyclic5(&path).phc.unwrap().unwrap_err();
            assert!(e.starts_with(why), "{e}");
        }
    }
}
