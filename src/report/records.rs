//! Reading back what `-o` and `--solutions` write: complex coordinates as JSON `[re, im]`
//! pairs (docs/output.md). Shared by `certify`, `--resume`/`merge` and the parameter
//! homotopy's start files, so that every reader accepts and refuses the same lines.

use num_complex::Complex64 as C64;
use serde_json::Value;

/// A JSON list of `[re, im]` pairs of numbers; the error names the first bad entry
/// (1-based).
pub fn complex_pairs(c: &Value) -> Result<Vec<C64>, String> {
    let list = c
        .as_array()
        .ok_or_else(|| format!("\"coordinates\" is not a list: {c}"))?;
    list.iter()
        .enumerate()
        .map(|(j, z)| match z.as_array().map(|p| p.as_slice()) {
            Some([re, im]) => match (re.as_f64(), im.as_f64()) {
                (Some(re), Some(im)) => Ok(C64::new(re, im)),
                _ => Err(format!(
                    "coordinate {} is not a pair of numbers: {z}",
                    j + 1
                )),
            },
            _ => Err(format!("coordinate {} is not a pair [re, im]: {z}", j + 1)),
        })
        .collect()
}

/// [`complex_pairs`] with exactly `n` entries (the system's variables).
pub fn coordinates(c: &Value, n: usize) -> Result<Vec<C64>, String> {
    let x = complex_pairs(c)?;
    if x.len() != n {
        return Err(format!(
            "{} coordinates, but the system has {n} variables",
            x.len()
        ));
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_read_and_bad_entries_named() {
        let v: Value = serde_json::from_str("[[1, 2], [-0.5, 0]]").unwrap();
        assert_eq!(
            coordinates(&v, 2).unwrap(),
            vec![C64::new(1.0, 2.0), C64::new(-0.5, 0.0)]
        );
        assert!(coordinates(&v, 3).unwrap_err().contains("2 coordinates"));
        let bad: Value = serde_json::from_str("[[1, 2], [1]]").unwrap();
        assert!(complex_pairs(&bad)
            .unwrap_err()
            .starts_with("coordinate 2 "));
        let bad: Value = serde_json::from_str("[[1, \"x\"]]").unwrap();
        assert!(complex_pairs(&bad).unwrap_err().contains("pair of numbers"));
        assert!(complex_pairs(&Value::Null).is_err());
    }
}
