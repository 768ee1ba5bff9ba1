//! `pathtrack show SOLS.jsonl [--system FILE]`: the records of `solve -o` or
//! `solve --solutions` as a table, one row per record: the target (runs over several targets), status, multiplicity (solutions) or
//! path index (paths), each coordinate, residual and condition number.

use crate::error::{Error, InputError, Result};
use clap::Args;
use serde_json::Value;

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A JSON Lines file written by `solve -o` (one record per path) or `solve --solutions`
    /// (one per distinct solution).
    pub file: std::path::PathBuf,
    /// The system solved, for the variable names of the columns (default x1, x2, …).
    #[arg(long)]
    pub system: Option<std::path::PathBuf>,
    /// Significant digits of each coordinate.
    #[arg(long, default_value_t = 6)]
    pub digits: usize,
}

/// `v` with `digits` significant digits, plainly (no exponent between 1e-4 and 1e6).
fn number(v: f64, digits: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { v.to_string() };
    }
    let mag = v.abs().log10().floor() as i32;
    if (-4..6).contains(&mag) {
        let decimals = (digits as i32 - 1 - mag).max(0) as usize;
        let s = format!("{v:.decimals$}");
        let s = if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        };
        if s == "-0" {
            "0".into()
        } else {
            s
        }
    } else {
        format!("{v:.*e}", digits.saturating_sub(1))
    }
}

/// A coordinate `[re, im]` of a point whose largest coordinate has modulus `scale`: parts
/// below the printed precision relative to `max(1, scale)` print as 0, a real coordinate
/// as its real part alone, else `re ± im·i`.
fn coordinate(z: &Value, digits: usize, scale: f64) -> Option<String> {
    let tiny = 10f64.powi(-(digits as i32) - 2) * scale.max(1.0);
    let part = |v: f64| if v.abs() < tiny { 0.0 } else { v };
    let re = part(z.get(0)?.as_f64()?);
    let im = part(z.get(1)?.as_f64()?);
    if im == 0.0 {
        return Some(number(re, digits));
    }
    let sign = if im < 0.0 { '-' } else { '+' };
    Some(format!(
        "{} {sign} {}i",
        number(re, digits),
        number(im.abs(), digits)
    ))
}

pub fn run(a: &ShowArgs) -> Result<i32> {
    let name = a.file.display().to_string();
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| InputError::new(&name, format!("cannot read file: {e}")))?;
    let mut records = Vec::new();
    for (k, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| InputError::new(&name, format!("not a JSON record: {e}")).at(k + 1, 1))?;
        if !v.is_object() {
            return Err(InputError::new(&name, "not a JSON object")
                .at(k + 1, 1)
                .into());
        }
        if v.get("pathtrack_run").is_some() {
            continue; // the run's header line (docs/scale-out.md)
        }
        records.push(v);
    }
    let n = records
        .iter()
        .filter_map(|r| r.get("coordinates")?.as_array().map(|c| c.len()))
        .max()
        .unwrap_or(0);
    let variables: Vec<String> = match &a.system {
        Some(p) => crate::system::parse::load_named(p)?.variables,
        None => (1..=n).map(|k| format!("x{k}")).collect(),
    };
    if variables.len() != n && n > 0 {
        return Err(Error::Usage(format!(
            "{name} has {n} coordinates per record, the system {} variables",
            variables.len()
        )));
    }
    print!("{}", table(&records, &variables, a.digits));
    Ok(0)
}

/// The records (of `solve -o` or `--solutions`) as a table with a column per variable, and
/// first the target's row of a `--params-file` run when the records carry one.
pub fn table(records: &[Value], variables: &[String], digits: usize) -> String {
    let n = variables.len();
    let solutions = records.iter().any(|r| r.get("multiplicity").is_some());
    let targets = records.iter().any(|r| r.get("target").is_some());
    let mut head = Vec::new();
    if targets {
        head.push("target".to_string());
    }
    head.extend([
        if solutions { "mult" } else { "path" }.to_string(),
        "status".to_string(),
    ]);
    head.extend(variables.iter().cloned());
    head.extend(["residual".to_string(), "condition".to_string()]);
    let mut rows = vec![head];
    for r in records {
        let field = |key: &str| match r.get(key) {
            Some(Value::Number(x)) => x.as_f64().map(|v| format!("{v:.1e}")).unwrap_or_default(),
            Some(Value::String(s)) => s.clone(),
            _ => "-".into(),
        };
        let mut row = Vec::new();
        if targets {
            row.push(r.get("target").map_or("-".into(), |t| t.to_string()));
        }
        row.extend([
            if solutions {
                r.get("multiplicity").map_or("-".into(), |m| m.to_string())
            } else {
                r.get("path").map_or("-".into(), |m| m.to_string())
            },
            field("status"),
        ]);
        let coords = r.get("coordinates").and_then(|c| c.as_array());
        let scale = coords.map_or(0.0, |c| {
            c.iter()
                .filter_map(|z| Some(z.get(0)?.as_f64()?.hypot(z.get(1)?.as_f64()?)))
                .fold(0.0, f64::max)
        });
        for k in 0..n {
            let c = coords
                .and_then(|c| c.get(k))
                .and_then(|z| coordinate(z, digits, scale));
            row.push(c.unwrap_or_else(|| "-".into()));
        }
        row.push(field("residual"));
        row.push(field("condition"));
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|j| rows.iter().map(|r| r[j].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_plain_with_the_digits_asked() {
        assert_eq!(number(4.0, 6), "4");
        assert_eq!(number(4.999999999999999, 6), "5");
        assert_eq!(number(-0.5, 6), "-0.5");
        assert_eq!(number(1.0 / 3.0, 4), "0.3333");
        assert_eq!(number(123456789.0, 3), "1.23e8");
        assert_eq!(number(-1e-30, 6), "-1.00000e-30");
    }

    #[test]
    fn coordinates_drop_imaginary_parts_below_the_precision() {
        let z = serde_json::json!([2.0, 1e-20]);
        assert_eq!(coordinate(&z, 6, 2.0).unwrap(), "2");
        let z = serde_json::json!([0.5, -1.25]);
        assert_eq!(coordinate(&z, 6, 2.0).unwrap(), "0.5 - 1.25i");
        // Rounding noise beside a coordinate of modulus 5 prints as 0; a small coordinate
        // of a small point does not.
        let z = serde_json::json!([1e-32, -4e-33]);
        assert_eq!(coordinate(&z, 6, 5.0).unwrap(), "0");
        let z = serde_json::json!([1e-3, 0.0]);
        assert_eq!(coordinate(&z, 6, 1e-3).unwrap(), "0.001");
    }
}
