//! Parameter values as the user writes them: one complex number (`1.5`, `-2`, `2-3i`,
//! `1e-3+2.5e2i`, `-i`), a list of assignments (`--params "a=1.5, b=2-3i"`), a CSV file of
//! targets (a header of parameter names, then one target per row), and the JSON form every
//! output carries (`{"a": [re, im], …}`).

use crate::error::InputError;
use num_complex::Complex64 as C64;
use serde_json::{json, Map, Value};

/// Reads one complex number `re`, `im i`, or `re±im i` (spaces ignored; `i` or `I`; a
/// bare `i` or `-i` is ±1·i). `None` when the text is not such a number or not finite.
pub fn parse_complex(text: &str) -> Option<C64> {
    let s: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if s.is_empty() {
        return None;
    }
    let real = |t: &str| -> Option<f64> {
        // Only decimal numbers: Rust's parser also reads "inf" and "NaN".
        let ok = !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
        ok.then(|| t.parse::<f64>().ok())
            .flatten()
            .filter(|v| v.is_finite())
    };
    let Some(body) = s.strip_suffix(['i', 'I']) else {
        return real(&s).map(|re| C64::new(re, 0.0));
    };
    // The imaginary part starts at the last sign that is not the first character and not
    // an exponent's sign.
    let b = body.as_bytes();
    let split = (1..b.len())
        .rev()
        .find(|&k| matches!(b[k], b'+' | b'-') && !matches!(b[k - 1], b'e' | b'E'));
    let (re, im) = match split {
        Some(k) => (real(&body[..k])?, &body[k..]),
        None => (0.0, body),
    };
    let im = match im {
        "" | "+" => 1.0,
        "-" => -1.0,
        t => real(t)?,
    };
    Some(C64::new(re, im))
}

/// `z` as the user writes it: `1.5`, `2-3i`, `0.5i` (shortest round-trip decimals, so that
/// reading it back gives the same bits).
pub fn format_complex(z: C64) -> String {
    if z.im == 0.0 {
        format!("{}", z.re)
    } else if z.re == 0.0 {
        format!("{}i", z.im)
    } else if z.im < 0.0 || z.im.is_sign_negative() {
        format!("{}{}i", z.re, z.im)
    } else {
        format!("{}+{}i", z.re, z.im)
    }
}

/// Reads `--params "a=1.5, b=2-3i"`: every parameter of `names` once, no other name.
/// The error names the assignment (1-based) and what is wrong.
pub fn parse_assignments(text: &str, names: &[String]) -> Result<Vec<C64>, String> {
    let mut values: Vec<Option<C64>> = vec![None; names.len()];
    for (k, item) in text.split(',').enumerate() {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("--params: assignment {} is empty", k + 1));
        }
        let Some((name, value)) = item.split_once('=') else {
            return Err(format!(
                "--params: assignment {} '{item}' is not of the form name=value",
                k + 1
            ));
        };
        let name = name.trim();
        let Some(j) = names.iter().position(|p| p == name) else {
            return Err(format!(
                "--params: unknown parameter '{name}' in assignment {} (the system's \
                 parameters: {})",
                k + 1,
                names.join(", ")
            ));
        };
        if values[j].is_some() {
            return Err(format!("--params: parameter '{name}' is given twice"));
        }
        values[j] = Some(parse_complex(value).ok_or_else(|| {
            format!(
                "--params: the value '{}' of '{name}' is not a complex number such as 1.5, \
                 -2i or 2-3i",
                value.trim()
            )
        })?);
    }
    let missing: Vec<&str> = names
        .iter()
        .zip(&values)
        .filter(|(_, v)| v.is_none())
        .map(|(n, _)| n.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "--params: no value for parameter{} {} (give every parameter of the system: {})",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            names.join(", ")
        ));
    }
    Ok(values.into_iter().map(|v| v.expect("checked")).collect())
}

/// Reads a CSV file of targets: a header line of parameter names (each of `names` once, in
/// any order), then one target per line, complex values as [`parse_complex`] reads them
/// (`#` starts a comment line; blank lines are skipped). Returns the targets with their
/// values in the order of `names`. Errors name the line and column (1-based), and for
/// values the row (0-based target index, as the outputs number them) and the parameter.
pub fn parse_targets_csv(
    text: &str,
    names: &[String],
    origin: &str,
) -> Result<Vec<Vec<C64>>, InputError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some((hl, header)) = lines.next() else {
        return Err(InputError::new(
            origin,
            format!(
                "empty file: expected a header line naming the parameters ({})",
                names.join(", ")
            ),
        ));
    };
    // Column of each header cell (1-based characters) for the error positions.
    let cells = |line: &str| -> Vec<(usize, String)> {
        let mut out = Vec::new();
        let mut col = 1;
        for cell in line.split(',') {
            let lead = cell.len() - cell.trim_start().len();
            out.push((col + lead, cell.trim().to_string()));
            col += cell.chars().count() + 1;
        }
        out
    };
    let head = cells(header);
    let mut order = Vec::with_capacity(head.len());
    for (col, name) in &head {
        let Some(j) = names.iter().position(|p| p == name) else {
            return Err(InputError::new(
                origin,
                format!(
                    "header: unknown parameter '{name}' (the system's parameters: {})",
                    names.join(", ")
                ),
            )
            .at(hl + 1, *col));
        };
        if order.contains(&j) {
            return Err(
                InputError::new(origin, format!("header: '{name}' appears twice")).at(hl + 1, *col),
            );
        }
        order.push(j);
    }
    if order.len() != names.len() {
        let missing: Vec<&str> = (0..names.len())
            .filter(|j| !order.contains(j))
            .map(|j| names[j].as_str())
            .collect();
        return Err(InputError::new(
            origin,
            format!(
                "header: no column for parameter {} (every parameter needs one)",
                missing.join(", ")
            ),
        )
        .at(hl + 1, 1));
    }
    let mut targets = Vec::new();
    for (row, (l, line)) in lines.enumerate() {
        let values = cells(line);
        if values.len() != order.len() {
            return Err(InputError::new(
                origin,
                format!(
                    "row {row}: {} value{}, but the header names {} parameters",
                    values.len(),
                    if values.len() == 1 { "" } else { "s" },
                    order.len()
                ),
            )
            .at(l + 1, 1));
        }
        let mut target = vec![C64::new(0.0, 0.0); names.len()];
        for ((col, v), &j) in values.iter().zip(&order) {
            target[j] = parse_complex(v).ok_or_else(|| {
                InputError::new(
                    origin,
                    format!(
                        "row {row}, column '{}': '{v}' is not a complex number such as 1.5, \
                         -2i or 2-3i",
                        names[j]
                    ),
                )
                .at(l + 1, *col)
            })?;
        }
        targets.push(target);
    }
    if targets.is_empty() {
        return Err(InputError::new(
            origin,
            "no targets: the header is the only line",
        ));
    }
    Ok(targets)
}

/// Parameter values as JSON: `{"a": [re, im], …}` in the order of `names`.
pub fn to_json(names: &[String], values: &[C64]) -> Value {
    let mut m = Map::new();
    for (n, v) in names.iter().zip(values) {
        m.insert(n.clone(), json!([v.re, v.im]));
    }
    Value::Object(m)
}

/// Reads [`to_json`]'s form back: every name of `names` once (other keys are an error).
pub fn from_json(v: &Value, names: &[String]) -> Result<Vec<C64>, String> {
    let obj = v
        .as_object()
        .ok_or_else(|| format!("\"parameters\" is not an object of name: [re, im]: {v}"))?;
    if let Some(k) = obj.keys().find(|k| !names.contains(k)) {
        return Err(format!(
            "\"parameters\" names '{k}', which is not a parameter of the system ({})",
            names.join(", ")
        ));
    }
    names
        .iter()
        .map(|n| {
            let z = obj
                .get(n)
                .ok_or_else(|| format!("\"parameters\" has no value for '{n}'"))?;
            match z.as_array().map(|p| p.as_slice()) {
                Some([re, im]) => match (re.as_f64(), im.as_f64()) {
                    (Some(re), Some(im)) => Ok(C64::new(re, im)),
                    _ => Err(format!("\"parameters\".{n} is not a pair of numbers: {z}")),
                },
                _ => Err(format!("\"parameters\".{n} is not a pair [re, im]: {z}")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn complex_numbers_read_back() {
        let c = |re, im| Some(C64::new(re, im));
        assert_eq!(parse_complex("1.5"), c(1.5, 0.0));
        assert_eq!(parse_complex(" -2 "), c(-2.0, 0.0));
        assert_eq!(parse_complex("2-3i"), c(2.0, -3.0));
        assert_eq!(parse_complex("2 + 3 I"), c(2.0, 3.0));
        assert_eq!(parse_complex("-i"), c(0.0, -1.0));
        assert_eq!(parse_complex("i"), c(0.0, 1.0));
        assert_eq!(parse_complex("0.5i"), c(0.0, 0.5));
        assert_eq!(parse_complex("1e-3+2.5e2i"), c(1e-3, 250.0));
        assert_eq!(parse_complex("-1E+2-1e-2i"), c(-100.0, -0.01));
        for bad in [
            "", "a", "1+", "2-3j", "inf", "NaN", "1e400", "1+2i+3i", "--1",
        ] {
            assert_eq!(parse_complex(bad), None, "{bad}");
        }
        for z in [
            C64::new(0.1, -0.3),
            C64::new(-1e-300, 7.0),
            C64::new(3.0, 0.0),
            C64::new(0.0, -2.5),
        ] {
            assert_eq!(parse_complex(&format_complex(z)), Some(z), "{z}");
        }
    }

    #[test]
    fn assignments_name_what_is_wrong() {
        let n = names(&["a", "b"]);
        assert_eq!(
            parse_assignments("b=2-3i, a = 1.5", &n).unwrap(),
            vec![C64::new(1.5, 0.0), C64::new(2.0, -3.0)]
        );
        let e = parse_assignments("a=1, c=2", &n).unwrap_err();
        assert!(
            e.contains("unknown parameter 'c'") && e.contains("a, b"),
            "{e}"
        );
        let e = parse_assignments("a=1", &n).unwrap_err();
        assert!(e.contains("no value for parameter b"), "{e}");
        let e = parse_assignments("a=1, a=2, b=0", &n).unwrap_err();
        assert!(e.contains("'a' is given twice"), "{e}");
        let e = parse_assignments("a=x, b=1", &n).unwrap_err();
        assert!(e.contains("'x' of 'a'"), "{e}");
    }

    #[test]
    fn csv_rows_and_columns_in_errors() {
        let n = names(&["a", "b"]);
        let t = parse_targets_csv("b, a\n1, 2+i\n# note\n\n-3i, 0\n", &n, "t.csv").unwrap();
        assert_eq!(
            t,
            vec![
                vec![C64::new(2.0, 1.0), C64::new(1.0, 0.0)],
                vec![C64::new(0.0, 0.0), C64::new(0.0, -3.0)]
            ]
        );
        let e = parse_targets_csv("a,b\n1,2\n3\n", &n, "t.csv").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("row 1: 1 value,"), "{e}");
        let e = parse_targets_csv("a,b\n1,2\n3, zz\n", &n, "t.csv").unwrap_err();
        assert_eq!((e.line, e.column), (Some(3), Some(4)));
        assert!(e.message.contains("row 1, column 'b': 'zz'"), "{e}");
        let e = parse_targets_csv("a,c\n1,2\n", &n, "t.csv").unwrap_err();
        assert!(e.message.contains("unknown parameter 'c'"), "{e}");
        assert_eq!((e.line, e.column), (Some(1), Some(3)));
        let e = parse_targets_csv("a\n1\n", &n, "t.csv").unwrap_err();
        assert!(e.message.contains("no column for parameter b"), "{e}");
        assert!(parse_targets_csv("a,b\n", &n, "t.csv").is_err());
    }

    #[test]
    fn json_values_round_trip() {
        let n = names(&["a", "b"]);
        let v = vec![C64::new(1.5, -0.25), C64::new(0.0, 3.0)];
        assert_eq!(from_json(&to_json(&n, &v), &n).unwrap(), v);
        let e = from_json(&json!({"a": [1, 0]}), &n).unwrap_err();
        assert!(e.contains("no value for 'b'"), "{e}");
        let e = from_json(&json!({"a": [1, 0], "b": [0, 0], "z": [0, 0]}), &n).unwrap_err();
        assert!(e.contains("'z'"), "{e}");
    }
}
