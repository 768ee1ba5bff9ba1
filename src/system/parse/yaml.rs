//! The YAML input format:
//! ```yaml
//! name: katsura2            # optional
//! description: free text    # optional
//! variables: [u0, u1, u2]   # required
//! parameters: [a, b]        # optional: names that may stand wherever a coefficient may
//! equations:                # required, one string (or number) per polynomial
//!   - "u0 + 2*u1 + 2*u2 - 1"
//! ```
//! The document is read with `serde_yaml_ng` into a generic value, checked key by key, and
//! each equation goes through [`super::expr::parse_expr`]. To report file positions, each
//! equation string is located in the raw text (in order, after the `equations` key); when
//! it cannot be found verbatim (escapes, folded scalars) errors give the column within the
//! equation instead.

use super::{check_variable_name, default_name, expr, line_col};
use crate::error::InputError;
use crate::system::System;
use serde_yaml_ng::Value;
use std::collections::HashMap;

const KEYS: [&str; 5] = [
    "name",
    "description",
    "variables",
    "parameters",
    "equations",
];

/// Byte offset of the top-level key `key:` in `text` (a line starting with it).
fn key_offset(text: &str, key: &str) -> Option<usize> {
    let mut off = 0;
    for line in text.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix(key) {
            let rest = rest.trim_start_matches([' ', '\t']);
            if rest.starts_with(':') {
                return Some(off);
            }
        }
        off += line.len();
    }
    None
}

/// Offset of `needle` as a whole word (not inside an identifier) at or after `from`.
fn find_word(text: &str, from: usize, needle: &str) -> Option<usize> {
    let b = text.as_bytes();
    let is_id = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut s = from.min(text.len());
    while let Some(p) = text[s..].find(needle) {
        let at = s + p;
        let end = at + needle.len();
        let ok_before = at == 0 || !is_id(b[at - 1]);
        let ok_after = end >= b.len() || !is_id(b[end]);
        if ok_before && ok_after {
            return Some(at);
        }
        s = at + needle.len().max(1);
        while s < text.len() && !text.is_char_boundary(s) {
            s += 1;
        }
    }
    None
}

fn at_offset(e: InputError, text: &str, off: Option<usize>) -> InputError {
    match off {
        Some(o) => {
            let (l, c) = line_col(text, o);
            e.at(l, c)
        }
        None => e,
    }
}

/// Removes libyaml's " at line L column C" fragments (the position is reported separately).
fn strip_location(msg: &str) -> String {
    let mut out = String::new();
    let mut rest = msg;
    while let Some(p) = rest.find(" at line ") {
        out.push_str(&rest[..p]);
        let tail = &rest[p + " at line ".len()..];
        let digits = |t: &str| t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let mut skip = digits(tail);
        if tail[skip..].starts_with(" column ") {
            skip += " column ".len();
            skip += digits(&tail[skip..]);
        }
        rest = &tail[skip..];
    }
    out.push_str(rest);
    out.trim_end().to_string()
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// Parses a system in the YAML format; `origin` names the file in errors. A file with a
/// `parameters` key is an error here: it is a family, read by [`parse_parametric`].
pub fn parse(text: &str, origin: &str) -> Result<System, InputError> {
    no_parameters(parse_with(text, origin, true)?, text, origin)
}

/// A system without parameters, or the error that says how to solve a family.
fn no_parameters(
    (system, parameters): (System, Vec<String>),
    text: &str,
    origin: &str,
) -> Result<System, InputError> {
    if !parameters.is_empty() {
        let e = InputError::new(
            origin,
            format!(
                "the system has parameters ({}): solve it with `pathtrack solve` (at given or \
                 random parameter values) or `pathtrack monodromy`; this command needs a system \
                 without parameters",
                parameters.join(", ")
            ),
        );
        return Err(at_offset(e, text, key_offset(text, "parameters")));
    }
    Ok(system)
}

/// Parses a system in the YAML format with any number of equations (at least one) and no
/// parameters: over- and underdetermined systems for `solve` and `witness` (the `System`
/// then has `equations.len() != variables.len()`).
pub fn parse_rectangular(text: &str, origin: &str) -> Result<System, InputError> {
    no_parameters(parse_with(text, origin, false)?, text, origin)
}

/// Parses a YAML system that may have a `parameters` list: returns the system, whose
/// `variables` are the unknowns only while each equation's exponent vectors have one entry
/// per unknown followed by one per parameter, and the parameter names (empty without the
/// key). `crate::params::Family` splits such a system into coefficients in the parameters.
pub fn parse_parametric(text: &str, origin: &str) -> Result<(System, Vec<String>), InputError> {
    parse_with(text, origin, true)
}

/// [`parse_parametric`] (`square`: the equations must be as many as the variables) or the
/// rectangular reading of [`parse_rectangular`].
fn parse_with(text: &str, origin: &str, square: bool) -> Result<(System, Vec<String>), InputError> {
    let value: Value = serde_yaml_ng::from_str(text).map_err(|e| {
        let msg = e.to_string();
        let ie = InputError::new(origin, format!("malformed YAML: {}", strip_location(&msg)));
        match e.location() {
            Some(loc) => ie.at(loc.line(), loc.column()),
            None => ie,
        }
    })?;
    let map = match value {
        Value::Mapping(m) => m,
        Value::Null => {
            return Err(InputError::new(
                origin,
                "empty file: expected keys 'variables' and 'equations'",
            ))
        }
        other => {
            return Err(InputError::new(
                origin,
                format!(
                    "expected a YAML mapping with keys 'variables' and 'equations', found {} \
                     (a PHCpack file must start with the number of equations)",
                    describe(&other)
                ),
            )
            .at(1, 1))
        }
    };
    let mut name = None;
    let mut description = None;
    let mut variables = None;
    let mut parameters = None;
    let mut equations = None;
    for (k, v) in map {
        let key = match k {
            Value::String(s) => s,
            other => {
                return Err(InputError::new(
                    origin,
                    format!("keys must be strings, found {}", describe(&other)),
                ))
            }
        };
        match key.as_str() {
            "name" => name = Some(v),
            "description" => description = Some(v),
            "variables" => variables = Some(v),
            "parameters" => parameters = Some(v),
            "equations" => equations = Some(v),
            _ => {
                let e = InputError::new(
                    origin,
                    format!("unknown key '{key}' (allowed: {})", KEYS.join(", ")),
                );
                return Err(at_offset(e, text, key_offset(text, &key)));
            }
        }
    }
    let text_field = |v: Option<Value>, key: &str| -> Result<Option<String>, InputError> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(other) => Err(at_offset(
                InputError::new(
                    origin,
                    format!("'{key}' must be a string, found {}", describe(&other)),
                ),
                text,
                key_offset(text, key),
            )),
        }
    };
    let name = text_field(name, "name")?.unwrap_or_else(|| default_name(origin));
    let description = text_field(description, "description")?.unwrap_or_default();

    // Variables.
    let var_key = key_offset(text, "variables");
    let vars_val = match variables {
        Some(v) => v,
        None => {
            return Err(InputError::new(
                origin,
                "missing required key 'variables' (the list of variable names)",
            ))
        }
    };
    let var_items = match vars_val {
        Value::Sequence(s) => s,
        other => {
            return Err(at_offset(
                InputError::new(
                    origin,
                    format!(
                        "'variables' must be a list of names such as [x, y], found {}",
                        describe(&other)
                    ),
                ),
                text,
                var_key,
            ))
        }
    };
    let mut index: HashMap<String, usize> = HashMap::new();
    let names = read_names(
        var_items,
        Names {
            kind: "variable",
            hint: " (quote YAML words such as null or true)",
            key: var_key,
            key_len: "variables".len(),
        },
        text,
        origin,
        &mut index,
    )?;
    if names.is_empty() {
        return Err(at_offset(
            InputError::new(origin, "'variables' is empty"),
            text,
            var_key,
        ));
    }
    let params = parameter_names(parameters, text, origin, &mut index)?;

    // Equations.
    let eq_key = key_offset(text, "equations");
    let eq_val = match equations {
        Some(v) => v,
        None => {
            return Err(InputError::new(
                origin,
                "missing required key 'equations' (a list of polynomials, one string each)",
            ))
        }
    };
    let eq_items = match eq_val {
        Value::Sequence(s) => s,
        other => {
            return Err(at_offset(
                InputError::new(
                    origin,
                    format!(
                        "'equations' must be a list with one string per polynomial, found {}",
                        describe(&other)
                    ),
                ),
                text,
                eq_key,
            ))
        }
    };
    let n = names.len();
    if !square && eq_items.is_empty() {
        return Err(at_offset(
            InputError::new(origin, "'equations' is empty"),
            text,
            eq_key,
        ));
    }
    if square && eq_items.len() != n {
        return Err(at_offset(
            InputError::new(
                origin,
                format!(
                    "system is not square: {} equations in {} variables",
                    eq_items.len(),
                    n
                ),
            ),
            text,
            eq_key,
        ));
    }
    let mut search_from = eq_key.map_or(0, |o| o + "equations".len());
    let mut polys = Vec::with_capacity(n);
    let nm = n + params.len();
    for (k, item) in eq_items.into_iter().enumerate() {
        let src = match item {
            Value::String(s) => s,
            Value::Number(num) => {
                if num.as_f64().is_some_and(|v| !v.is_finite()) {
                    return Err(at_offset(
                        InputError::new(origin, format!("non-finite coefficient '{num}'"))
                            .equation(k + 1),
                        text,
                        eq_key,
                    ));
                }
                num.to_string()
            }
            Value::Null => {
                return Err(at_offset(
                    InputError::new(origin, "empty equation").equation(k + 1),
                    text,
                    eq_key,
                ))
            }
            other => {
                return Err(at_offset(
                    InputError::new(
                        origin,
                        format!("an equation must be a string, found {}", describe(&other)),
                    )
                    .equation(k + 1),
                    text,
                    eq_key,
                ))
            }
        };
        // Locate the equation verbatim in the raw text, in order.
        let at = if src.is_empty() {
            None
        } else {
            text[search_from.min(text.len())..]
                .find(src.as_str())
                .map(|p| search_from + p)
        };
        if let Some(p) = at {
            search_from = p + src.len();
        }
        let place = |offset: usize, msg: String| -> InputError {
            let e = InputError::new(origin, msg).equation(k + 1);
            match at {
                Some(p) => {
                    let (l, c) = line_col(text, p + offset);
                    e.at(l, c)
                }
                None => {
                    let col = src[..offset.min(src.len())].chars().count() + 1;
                    InputError {
                        column: Some(col),
                        ..e
                    }
                }
            }
        };
        let poly = expr::parse_expr(&src, &index, nm).map_err(|e| place(e.offset, e.message))?;
        super::rounding::end_equation(k + 1);
        if poly.terms.is_empty() {
            return Err(place(
                0,
                "equation is identically zero after expansion".to_string(),
            ));
        }
        polys.push(poly);
    }
    Ok((
        System {
            name,
            description,
            variables: names,
            equations: polys,
        },
        params,
    ))
}

/// The `parameters` list (absent: none): names checked like variable names, distinct from
/// each other and from the variables, added to `index` after the variables.
fn parameter_names(
    value: Option<Value>,
    text: &str,
    origin: &str,
    index: &mut HashMap<String, usize>,
) -> Result<Vec<String>, InputError> {
    let key = key_offset(text, "parameters");
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Sequence(s)) => s,
        Some(other) => {
            return Err(at_offset(
                InputError::new(
                    origin,
                    format!(
                        "'parameters' must be a list of names such as [a, b], found {}",
                        describe(&other)
                    ),
                ),
                text,
                key,
            ))
        }
    };
    read_names(
        items,
        Names {
            kind: "parameter",
            hint: "",
            key,
            key_len: "parameters".len(),
        },
        text,
        origin,
        index,
    )
}

/// What [`read_names`] reads: `variable` or `parameter` names, the hint added to a
/// non-string entry's error, and where the list's key stands in the text.
struct Names {
    kind: &'static str,
    hint: &'static str,
    key: Option<usize>,
    key_len: usize,
}

/// The names of a `variables` or `parameters` list, each checked as a name and distinct
/// from every name already in `index` (the variables, for parameters), added to `index`
/// in order; errors point at the name in the text, else at the list's key.
fn read_names(
    items: Vec<Value>,
    what: Names,
    text: &str,
    origin: &str,
    index: &mut HashMap<String, usize>,
) -> Result<Vec<String>, InputError> {
    let Names {
        kind,
        hint,
        key,
        key_len,
    } = what;
    let mut names: Vec<String> = Vec::with_capacity(items.len());
    let mut search_from = key.map_or(0, |o| o + key_len);
    for (j, item) in items.into_iter().enumerate() {
        let s = match item {
            Value::String(s) => s,
            other => {
                let msg = format!(
                    "{kind} {} must be a name, found {}{hint}",
                    j + 1,
                    describe(&other)
                );
                return Err(at_offset(InputError::new(origin, msg), text, key));
            }
        };
        let pos = find_word(text, search_from, &s);
        if let Some(p) = pos {
            search_from = p + s.len();
        }
        if let Err(msg) = check_variable_name(&s) {
            let msg = msg.replace("variable", kind);
            return Err(at_offset(InputError::new(origin, msg), text, pos.or(key)));
        }
        if index.contains_key(&s) {
            let msg = if names.contains(&s) {
                format!("duplicate {kind} name '{s}'")
            } else {
                format!("'{s}' is both a variable and a parameter")
            };
            return Err(at_offset(InputError::new(origin, msg), text, pos.or(key)));
        }
        index.insert(s.clone(), index.len());
        names.push(s);
    }
    Ok(names)
}
