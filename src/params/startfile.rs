//! Start solutions read back from a JSON Lines file of an earlier run (`solve -o` or
//! `--solutions`, `monodromy -o`): the nonsingular points, and the parameter values they
//! were computed at (the `"parameters"` key every line of a run with parameters carries).

use crate::error::InputError;
use crate::report::records::coordinates;
use num_complex::Complex64 as C64;
use serde_json::Value;
use std::path::Path;

/// The start solutions of a file.
#[derive(Clone, Debug)]
pub struct StartSolutions {
    /// Distinct nonsingular points, in file order.
    pub points: Vec<Vec<C64>>,
    /// Their parameter values (`None` when the file has none: a system without parameters).
    pub parameters: Option<Vec<C64>>,
    /// Points left out: another status than `nonsingular`, or no coordinates.
    pub skipped: usize,
    /// Points left out because an earlier one is the same solution (several paths of the
    /// run ended there).
    pub duplicates: usize,
}

/// Two points are one solution when they agree to this, relative to `1 + ‖x‖∞`.
pub const SAME_POINT_TOL: f64 = 1e-8;

/// Reads the start solutions of `path` for a system in `variables` with `parameters`
/// (empty: none). For `solve -o` files the last line of each path (of each target) counts
/// (a re-tracked path has several). Every point must carry the same parameter values; the
/// errors name the line.
pub fn read(
    path: &Path,
    variables: &[String],
    parameters: &[String],
) -> Result<StartSolutions, InputError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(&name, format!("cannot read file: {e}")))?;
    parse(&text, &name, variables, parameters)
}

/// [`read`] from text; `origin` names the file in errors.
pub fn parse(
    text: &str,
    origin: &str,
    variables: &[String],
    parameters: &[String],
) -> Result<StartSolutions, InputError> {
    let n = variables.len();
    // (key, line, point or None, parameters)
    type Entry = (
        Option<(u64, u64)>,
        usize,
        Option<Vec<C64>>,
        Option<Vec<C64>>,
    );
    let mut entries: Vec<Entry> = Vec::new();
    let mut slot = std::collections::HashMap::<(u64, u64), usize>::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |msg: String| InputError::new(origin, msg).at(i + 1, 1);
        let v: Value =
            serde_json::from_str(line).map_err(|e| at(format!("not a JSON object: {e}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| at("not a JSON object".into()))?;
        if obj.contains_key("pathtrack_run") {
            continue; // the run's header line (docs/scale-out.md)
        }
        let nonsingular = match obj.get("status") {
            None => true,
            Some(Value::String(s)) => s == "nonsingular",
            Some(other) => return Err(at(format!("\"status\" is not a string: {other}"))),
        };
        let coords = match obj.get("coordinates") {
            None => return Err(at("no \"coordinates\" key".into())),
            Some(Value::Null) => None,
            Some(c) => Some(coordinates(c, n).map_err(at)?),
        };
        let params = if parameters.is_empty() {
            None
        } else {
            match obj.get("parameters") {
                None => {
                    return Err(at(format!(
                        "no \"parameters\" key: a start solution of a system with parameters \
                         needs the values ({}) it was computed at, as `pathtrack solve` writes \
                         them",
                        parameters.join(", ")
                    )))
                }
                Some(p) => Some(super::values::from_json(p, parameters).map_err(at)?),
            }
        };
        let index = |k: &str| -> Result<Option<u64>, InputError> {
            match obj.get(k) {
                None => Ok(None),
                Some(p) => p
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| at(format!("\"{k}\" is not an index: {p}"))),
            }
        };
        let key = index("path")?.map(|p| (index("target").ok().flatten().unwrap_or(0), p));
        let point = coords.filter(|_| nonsingular);
        match key.and_then(|k| slot.get(&k).copied()) {
            Some(e) => entries[e] = (key, i + 1, point, params),
            None => {
                if let Some(k) = key {
                    slot.insert(k, entries.len());
                }
                entries.push((key, i + 1, point, params));
            }
        }
    }
    let mut out = StartSolutions {
        points: Vec::new(),
        parameters: None,
        skipped: 0,
        duplicates: 0,
    };
    let mut first_line = 0;
    for (_, line, point, params) in entries {
        let Some(x) = point else {
            out.skipped += 1;
            continue;
        };
        match (&out.parameters, params) {
            (None, p) => {
                out.parameters = p;
                first_line = line;
            }
            (Some(p0), Some(p)) if *p0 != p => {
                return Err(InputError::new(
                    origin,
                    format!(
                        "the solutions are at different parameter values (lines {first_line} \
                         and {line}): give the solutions of one parameter point, e.g. the \
                         lines of one \"target\""
                    ),
                )
                .at(line, 1));
            }
            _ => {}
        }
        out.points.push(x);
    }
    if out.points.is_empty() {
        return Err(InputError::new(
            origin,
            "no nonsingular solution to start from",
        ));
    }
    let before = out.points.len();
    out.points = distinct(out.points);
    out.duplicates = before - out.points.len();
    Ok(out)
}

/// The points with every one that repeats an earlier one (within [`SAME_POINT_TOL`])
/// left out, in order.
pub fn distinct(points: Vec<Vec<C64>>) -> Vec<Vec<C64>> {
    let scale = |x: &[C64]| 1.0 + x.iter().map(|z| z.norm()).fold(0.0, f64::max);
    let dist = |x: &[C64], y: &[C64]| {
        x.iter()
            .zip(y)
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max)
    };
    // Sorted by the first coordinate's real part: a match lies within the tolerance there.
    let mut order: Vec<usize> = (0..points.len()).collect();
    let key = |i: usize| points[i].first().map_or(0.0, |z| z.re);
    order.sort_by(|&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)));
    let mut keep = vec![true; points.len()];
    for (k, &i) in order.iter().enumerate() {
        let tol = SAME_POINT_TOL * scale(&points[i]);
        for &j in order[..k].iter().rev() {
            if key(i) - key(j) > tol {
                break;
            }
            if keep[j] && dist(&points[i], &points[j]) <= tol {
                keep[i] = false;
                break;
            }
        }
    }
    points
        .into_iter()
        .zip(keep)
        .filter_map(|(x, k)| k.then_some(x))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn last_line_per_path_nonsingular_distinct() {
        let text = r#"{"path":0,"status":"nonsingular","coordinates":[[1,0]],"parameters":{"a":[2,0]}}
{"path":1,"status":"failed","coordinates":null,"parameters":{"a":[2,0]}}
{"path":2,"status":"nonsingular","coordinates":[[1.0000000000001,0]],"parameters":{"a":[2,0]}}
{"path":1,"status":"nonsingular","coordinates":[[-1,0]],"parameters":{"a":[2,0]},"attempt":1}
{"path":3,"status":"at_infinity","coordinates":null,"parameters":{"a":[2,0]}}
"#;
        let s = parse(text, "s.jsonl", &names(&["x"]), &names(&["a"])).unwrap();
        assert_eq!(
            s.points,
            vec![vec![C64::new(1.0, 0.0)], vec![C64::new(-1.0, 0.0)]]
        );
        assert_eq!(s.parameters, Some(vec![C64::new(2.0, 0.0)]));
        assert_eq!((s.skipped, s.duplicates), (1, 1));
    }

    #[test]
    fn errors_name_the_line() {
        let v = names(&["x"]);
        let p = names(&["a"]);
        let e = parse("{\"coordinates\":[[1,0]]}\n", "s", &v, &p).unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("no \"parameters\""), "{e}");
        let two = "{\"coordinates\":[[1,0]],\"parameters\":{\"a\":[1,0]}}\n{\"coordinates\":[[2,0]],\"parameters\":{\"a\":[3,0]}}\n";
        let e = parse(two, "s", &v, &p).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("different parameter values"), "{e}");
        let e = parse("{\"coordinates\":[[1,0],[2,0]]}\n", "s", &v, &[]).unwrap_err();
        assert!(e.message.contains("2 coordinates"), "{e}");
        let e = parse(
            "{\"status\":\"failed\",\"coordinates\":null}\n",
            "s",
            &v,
            &[],
        )
        .unwrap_err();
        assert!(e.message.contains("no nonsingular"), "{e}");
    }
}
