//! Solutions in other solvers' formats (`solve --format`, docs/output.md): PHCpack's
//! solution list and Bertini's `finite_solutions`, beside the default JSON Lines.
//!
//! Both list the finite endpoints only, one per path (`-o`) or one per distinct solution
//! (`--solutions`), and both open with the number of solutions. For `-o` the entries are
//! streamed as paths finish, and after each one the count at the top of the file is
//! rewritten in place (padded with spaces to a fixed width), so an interrupted run
//! leaves a valid list of the paths done so far. A re-tracked path is appended again while
//! the run goes on; at the end the file is rewritten with the final endpoint of each path,
//! in the order of the paths.

use super::{Solution, SolutionWriter};
use crate::error::{Error, Result};
use crate::post::Endpoint;
use num_complex::Complex64 as C64;
use std::collections::BTreeMap;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The format of the `-o` and `--solutions` files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SolutionFormat {
    /// JSON Lines, one object per path or solution (all fields).
    #[default]
    Jsonl,
    /// PHCpack's solution list (what phc reads and writes).
    Phc,
    /// Bertini's finite_solutions: the count, then each solution's coordinates as "re im".
    Bertini,
}

/// Width of the count at the top of a list, padded with spaces, so that it can be
/// rewritten in place.
const COUNT_WIDTH: usize = 24;

/// `v` as C's `%.{digits}E` (upper) or `%.{digits}e`: `1.2500000000000000E+00`.
fn c_sci(v: f64, digits: usize, upper: bool) -> String {
    let s = format!("{v:.digits$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    let letter = if upper { 'E' } else { 'e' };
    format!("{mantissa}{letter}{e:+03}")
}

/// A coordinate as PHCpack writes it: a space for the sign of a non-negative number.
fn phc_number(v: f64) -> String {
    let s = c_sci(v, 16, true);
    if v.is_sign_negative() {
        s
    } else {
        format!(" {s}")
    }
}

/// What an entry of a list holds.
#[derive(Clone, Debug)]
struct Entry {
    coordinates: Vec<C64>,
    multiplicity: usize,
    /// Size of the last Newton correction (PHCpack's `err`; 0 when unknown).
    err: f64,
    /// Inverse condition number (PHCpack's `rco`).
    rco: f64,
    residual: f64,
}

impl Entry {
    fn of_endpoint(e: &Endpoint) -> Option<Entry> {
        let x = e.coordinates.as_ref().filter(|_| e.status.is_finite())?;
        Some(Entry {
            coordinates: x.clone(),
            multiplicity: 1,
            err: e.accuracy.unwrap_or(0.0),
            rco: inverse(e.condition),
            residual: e.residual,
        })
    }

    fn of_solution(s: &Solution) -> Entry {
        Entry {
            coordinates: s.coordinates.to_vec(),
            multiplicity: s.multiplicity(),
            err: 0.0,
            rco: inverse(s.condition),
            residual: s.residual,
        }
    }

    /// The entry as solution `k` (1-based) of a list in `format`.
    fn text(&self, format: SolutionFormat, k: u64, variables: &[String]) -> String {
        let mut s = String::new();
        match format {
            SolutionFormat::Phc => {
                s.push_str(&format!("solution {k} :\n"));
                s.push_str(&format!("t : {}  {}\n", phc_number(1.0), phc_number(0.0)));
                s.push_str(&format!("m : {}\n", self.multiplicity));
                s.push_str("the solution for t :\n");
                for (name, z) in variables.iter().zip(&self.coordinates) {
                    s.push_str(&format!(
                        " {name} : {}  {}\n",
                        phc_number(z.re),
                        phc_number(z.im)
                    ));
                }
                let num = |v: f64| c_sci(if v.is_finite() { v } else { 0.0 }, 3, true);
                s.push_str(&format!(
                    "== err :  {} = rco :  {} = res :  {} ==\n",
                    num(self.err),
                    num(self.rco),
                    num(self.residual)
                ));
            }
            SolutionFormat::Bertini => {
                for z in &self.coordinates {
                    s.push_str(&format!(
                        "{} {}\n",
                        c_sci(z.re, 16, false),
                        c_sci(z.im, 16, false)
                    ));
                }
                s.push('\n');
            }
            SolutionFormat::Jsonl => {}
        }
        s
    }
}

/// `1/κ`, 0 for an infinite or unknown condition number.
fn inverse(condition: f64) -> f64 {
    if condition.is_finite() && condition > 0.0 {
        1.0 / condition
    } else {
        0.0
    }
}

/// The top of a list of `count` solutions in `n` variables. `padded`: the count line is
/// [`COUNT_WIDTH`] characters wide, so that it can be rewritten in place (right-aligned for
/// PHCpack, whose reader refuses trailing spaces; left-aligned for Bertini, whose readers
/// often split the line at spaces).
fn header(format: SolutionFormat, count: u64, n: usize, padded: bool) -> String {
    let w = if padded { COUNT_WIDTH } else { 0 };
    match format {
        SolutionFormat::Phc => format!("{:>w$}\n{}\n", format!("{count} {n}"), "=".repeat(75)),
        SolutionFormat::Bertini => format!("{count:<w$}\n\n"),
        SolutionFormat::Jsonl => String::new(),
    }
}

/// A whole list in `format`.
fn list(format: SolutionFormat, entries: &[&Entry], variables: &[String]) -> String {
    let mut s = header(format, entries.len() as u64, variables.len(), false);
    for (k, e) in entries.iter().enumerate() {
        s.push_str(&e.text(format, k as u64 + 1, variables));
    }
    s
}

/// Streams the endpoints of a solve to the `-o` file in a [`SolutionFormat`].
pub enum EndpointWriter {
    Jsonl(SolutionWriter),
    List(ListWriter),
}

impl EndpointWriter {
    /// Creates the file (nothing is written when `path` is `None`).
    pub fn create(
        path: Option<&Path>,
        format: SolutionFormat,
        variables: &[String],
    ) -> Result<EndpointWriter> {
        match (path, format) {
            (Some(p), SolutionFormat::Phc | SolutionFormat::Bertini) => Ok(EndpointWriter::List(
                ListWriter::create(p, format, variables)?,
            )),
            _ => Ok(EndpointWriter::Jsonl(SolutionWriter::create(path)?)),
        }
    }

    pub fn write(&mut self, e: &Endpoint) -> Result<()> {
        match self {
            EndpointWriter::Jsonl(w) => w.write(e),
            EndpointWriter::List(w) => w.write(e),
        }
    }

    /// [`Self::write`] with extra keys for a JSON line (a certificate); the lists of the
    /// other formats have no place for them.
    pub fn write_with(
        &mut self,
        e: &Endpoint,
        extra: serde_json::Map<String, serde_json::Value>,
    ) -> Result<()> {
        match self {
            EndpointWriter::Jsonl(w) => w.write_with(e, extra),
            EndpointWriter::List(w) => w.write(e),
        }
    }

    /// Off: JSON lines stay buffered until [`Self::flush`] (a list flushes each entry).
    pub fn set_flush_each(&mut self, on: bool) {
        if let EndpointWriter::Jsonl(w) = self {
            w.set_flush_each(on);
        }
    }

    pub fn flush(&mut self) -> Result<()> {
        match self {
            EndpointWriter::Jsonl(w) => w.flush(),
            EndpointWriter::List(_) => Ok(()),
        }
    }

    /// Ends the run: a list is rewritten with one entry per path, in path order.
    pub fn finish(self) -> Result<()> {
        match self {
            EndpointWriter::Jsonl(_) => Ok(()),
            EndpointWriter::List(w) => w.finish(),
        }
    }
}

/// A PHCpack or Bertini list streamed while paths finish (see the module doc).
pub struct ListWriter {
    out: std::io::BufWriter<std::fs::File>,
    path: PathBuf,
    format: SolutionFormat,
    variables: Vec<String>,
    /// Entries in the file now.
    written: u64,
    /// The last finite endpoint of each path.
    latest: BTreeMap<u64, Entry>,
}

impl ListWriter {
    fn create(path: &Path, format: SolutionFormat, variables: &[String]) -> Result<ListWriter> {
        let file = std::fs::File::create(path)
            .map_err(|e| Error::io(format!("creating {}", path.display()), e))?;
        let mut w = ListWriter {
            out: std::io::BufWriter::new(file),
            path: path.to_path_buf(),
            format,
            variables: variables.to_vec(),
            written: 0,
            latest: BTreeMap::new(),
        };
        let head = header(format, 0, variables.len(), true);
        w.out
            .write_all(head.as_bytes())
            .and_then(|_| w.out.flush())
            .map_err(|e| w.io_error(e))?;
        Ok(w)
    }

    fn io_error(&self, e: std::io::Error) -> Error {
        Error::io(format!("writing {}", self.path.display()), e)
    }

    fn write(&mut self, e: &Endpoint) -> Result<()> {
        let Some(entry) = Entry::of_endpoint(e) else {
            self.latest.remove(&e.path);
            return Ok(());
        };
        self.written += 1;
        let text = entry.text(self.format, self.written, &self.variables);
        self.latest.insert(e.path, entry);
        let count = header(self.format, self.written, self.variables.len(), true);
        let count_line = &count[..COUNT_WIDTH];
        let out = &mut self.out;
        let r = out
            .write_all(text.as_bytes())
            .and_then(|_| out.seek(SeekFrom::Start(0)))
            .and_then(|_| out.write_all(count_line.as_bytes()))
            .and_then(|_| out.seek(SeekFrom::End(0)))
            .and_then(|_| out.flush());
        r.map_err(|err| self.io_error(err))?;
        Ok(())
    }

    fn finish(self) -> Result<()> {
        let entries: Vec<&Entry> = self.latest.values().collect();
        let text = list(self.format, &entries, &self.variables);
        drop(self.out);
        // Written beside and renamed over the streamed list: never a half-written file.
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(".partial");
        let partial = self.path.with_file_name(name);
        std::fs::write(&partial, text)
            .and_then(|_| std::fs::rename(&partial, &self.path))
            .map_err(|e| Error::io(format!("writing {}", self.path.display()), e))
    }
}

/// Writes the distinct solutions to `path` in `format` (JSON Lines: [`super::write_solutions`]).
pub fn write_solutions_as(
    path: &Path,
    format: SolutionFormat,
    sols: &[Solution],
    variables: &[String],
) -> Result<()> {
    if format == SolutionFormat::Jsonl {
        return super::write_solutions(path, sols);
    }
    let entries: Vec<Entry> = sols.iter().map(Entry::of_solution).collect();
    let refs: Vec<&Entry> = entries.iter().collect();
    std::fs::write(path, list(format, &refs, variables))
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

/// The coordinates of the solutions in a PHCpack solution list (`N n`, then entries with
/// `the solution for t :` and one `name : re im` line per variable); an error names the
/// line that does not fit. Reads what [`SolutionFormat::Phc`] writes and phc's own lists.
pub fn read_phc_solutions(text: &str) -> std::result::Result<Vec<Vec<C64>>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let (k0, head) = lines
        .iter()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty())
        .ok_or("empty solution list")?;
    let mut words = head.split_whitespace();
    let count: usize = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| format!("line {}: expected 'N n', found '{head}'", k0 + 1))?;
    let n: usize = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| format!("line {}: expected 'N n', found '{head}'", k0 + 1))?;
    let mut sols = Vec::new();
    let mut k = k0 + 1;
    while k < lines.len() && sols.len() < count {
        if lines[k].trim() != "the solution for t :" {
            k += 1;
            continue;
        }
        let mut x = Vec::with_capacity(n);
        for j in 0..n {
            let l = lines
                .get(k + 1 + j)
                .ok_or_else(|| format!("the list ends inside solution {}", sols.len() + 1))?;
            let value = l
                .split_once(':')
                .map(|(_, v)| v)
                .ok_or_else(|| format!("line {}: expected 'name : re im'", k + 2 + j))?;
            let parts: Vec<f64> = value
                .split_whitespace()
                .map(|w| w.parse::<f64>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| format!("line {}: {e}", k + 2 + j))?;
            if parts.len() != 2 {
                return Err(format!("line {}: expected two numbers", k + 2 + j));
            }
            x.push(C64::new(parts[0], parts[1]));
        }
        sols.push(x);
        k += n + 1;
    }
    if sols.len() != count {
        return Err(format!(
            "the list declares {count} solutions and holds {}",
            sols.len()
        ));
    }
    Ok(sols)
}

/// The coordinates of the solutions in a Bertini `finite_solutions` file of systems in `n`
/// variables: the count, then per solution `n` lines `re im`, blank lines between.
pub fn read_bertini_solutions(text: &str, n: usize) -> std::result::Result<Vec<Vec<C64>>, String> {
    let mut words = text.split_whitespace();
    let count: usize = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or("expected the number of solutions first")?;
    let nums: Vec<f64> = words
        .map(|w| w.parse::<f64>().map_err(|e| format!("'{w}': {e}")))
        .collect::<std::result::Result<_, _>>()?;
    if nums.len() != count * 2 * n {
        return Err(format!(
            "{count} solutions in {n} variables need {} numbers, found {}",
            count * 2 * n,
            nums.len()
        ));
    }
    Ok(nums
        .chunks(2 * n)
        .map(|c| c.chunks(2).map(|p| C64::new(p[0], p[1])).collect())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::post::Status;

    fn endpoint(path: u64, x: &[(f64, f64)]) -> Endpoint {
        let mut e = Endpoint::new(path, Status::Nonsingular);
        e.coordinates = Some(x.iter().map(|&(a, b)| C64::new(a, b)).collect());
        e.residual = 1e-16;
        e.condition = 4.0;
        e
    }

    #[test]
    fn numbers_are_c_style_and_exact() {
        assert_eq!(c_sci(1.0, 16, true), "1.0000000000000000E+00");
        assert_eq!(c_sci(-2.5e-120, 3, false), "-2.500e-120");
        for v in [0.1, -1.0 / 3.0, 6.02e23, 5e-324] {
            assert_eq!(c_sci(v, 16, true).parse::<f64>().unwrap(), v);
        }
    }

    #[test]
    fn streamed_lists_are_valid_at_every_step_and_final_at_the_end() {
        let dir = std::env::temp_dir().join(format!("pathtrack-formats-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let vars = vec!["x".to_string(), "y".to_string()];
        for format in [SolutionFormat::Phc, SolutionFormat::Bertini] {
            let p = dir.join(format!("{format:?}"));
            let mut w = EndpointWriter::create(Some(&p), format, &vars).unwrap();
            let read = |text: &str| match format {
                SolutionFormat::Phc => read_phc_solutions(text).unwrap(),
                _ => read_bertini_solutions(text, 2).unwrap(),
            };
            assert!(read(&std::fs::read_to_string(&p).unwrap()).is_empty());
            w.write(&endpoint(3, &[(1.0, 0.1), (-2.0, 1e-300)]))
                .unwrap();
            w.write(&Endpoint::new(1, Status::AtInfinity)).unwrap();
            w.write(&endpoint(0, &[(0.5, -0.25), (1.0 / 3.0, 0.0)]))
                .unwrap();
            // mid-run: both entries, in the order they came
            let mid = read(&std::fs::read_to_string(&p).unwrap());
            assert_eq!(mid.len(), 2);
            assert_eq!(mid[0][1], C64::new(-2.0, 1e-300));
            // path 3 re-tracked to another point
            w.write(&endpoint(3, &[(7.0, 0.0), (8.0, 0.0)])).unwrap();
            assert_eq!(read(&std::fs::read_to_string(&p).unwrap()).len(), 3);
            w.finish().unwrap();
            let end = read(&std::fs::read_to_string(&p).unwrap());
            assert_eq!(end.len(), 2, "one entry per path at the end");
            assert_eq!(end[0][1], C64::new(1.0 / 3.0, 0.0), "path 0 first, exactly");
            assert_eq!(end[1][0], C64::new(7.0, 0.0), "path 3's last endpoint");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
