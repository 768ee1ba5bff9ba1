//! Hom4PS's input format (HOM4PS-2.0 and Hom4PS-3):
//! ```text
//! # the circle and the line      (a comment, from '#' to the end of the line)
//! {
//!   x^2 + y^2 - 1;
//!   x - y;
//! }
//! ```
//! The polynomials stand between braces, each ended by `;` (the last one may omit it).
//! Variables are not declared: they are numbered in order of first appearance, as in
//! PHCpack's format, and there must be as many as polynomials. `i` and `I` are the
//! imaginary unit; the rest is the grammar of [`super::expr`]. [`to_hom4ps`] writes this
//! format.

use super::{blank_comments, default_name, line_col, parse_polys, variables_by_appearance, write};
use crate::error::InputError;
use crate::system::System;
use std::collections::HashMap;

/// True when the first character outside `#` comments is `{` and a `;` follows it before
/// any `:` (a YAML flow mapping `{variables: …}` has a `:` first).
pub fn looks_like_hom4ps(text: &str) -> bool {
    let t = blank_comments(text, '#');
    let body = t.trim_start();
    match body.strip_prefix('{') {
        Some(rest) => match rest.find([';', ':']) {
            Some(p) => rest.as_bytes()[p] == b';',
            None => true,
        },
        None => false,
    }
}

/// Parses a system in Hom4PS's format; `origin` names the file in errors.
pub fn parse(text: &str, origin: &str) -> Result<System, InputError> {
    let at = |off: usize, msg: String| {
        let (l, c) = line_col(text, off);
        InputError::new(origin, msg).at(l, c)
    };
    let t = blank_comments(text, '#');
    let open = t
        .find(|c: char| !c.is_whitespace())
        .ok_or_else(|| InputError::new(origin, "empty file"))?;
    if t.as_bytes()[open] != b'{' {
        return Err(at(
            open,
            "Hom4PS format: the system must start with '{'".into(),
        ));
    }
    let close = match t[open + 1..].find('}') {
        Some(p) => open + 1 + p,
        None => return Err(at(t.len(), "missing '}' after the last polynomial".into())),
    };
    if let Some(p) = t[close + 1..].find(|c: char| !c.is_whitespace()) {
        return Err(at(
            close + 1 + p,
            "text after the closing '}' (one system per file)".into(),
        ));
    }
    // The polynomials: the pieces between ';' (a last one without ';' counts too).
    let mut polys: Vec<(usize, &str)> = Vec::new();
    let mut s = open + 1;
    loop {
        let end = t[s..close].find(';').map(|q| s + q);
        let piece = &t[s..end.unwrap_or(close)];
        let blank = piece.trim().is_empty();
        match end {
            Some(e) if blank => {
                return Err(at(e, "empty polynomial before ';'".into()).equation(polys.len() + 1))
            }
            Some(e) => {
                polys.push((s, piece));
                s = e + 1;
            }
            None => {
                if !blank {
                    polys.push((s, piece));
                }
                break;
            }
        }
    }
    if polys.is_empty() {
        return Err(at(open, "no polynomials between '{' and '}'".into()));
    }
    let (names, index) = variables_by_appearance(&polys, &at)?;
    if names.len() != polys.len() {
        return Err(at(
            open,
            format!(
                "system is not square: {} polynomials in {} variables ({})",
                polys.len(),
                names.len(),
                names.join(", ")
            ),
        ));
    }
    let equations = parse_polys(&polys, &index, &HashMap::new(), &at)?;
    Ok(System {
        name: default_name(origin),
        description: "read from Hom4PS format".to_string(),
        variables: names,
        equations,
    })
}

/// `sys` in Hom4PS's format: `{`, one polynomial per line with `^` for powers and `I` for
/// the imaginary unit, each ended by `;`, then `}`. Coefficients are written exactly
/// ([`write::exact`]); reading the file back gives `sys` up to the order of the variables
/// (first appearance) and its name.
pub fn to_hom4ps(sys: &System) -> String {
    let style = write::Style {
        power: "^",
        imaginary: "I",
        real: write::exact,
    };
    let mut out = String::from("{\n");
    for p in &sys.equations {
        out.push_str(&write::poly(p, &sys.variables, &style));
        out.push_str(";\n");
    }
    out.push_str("}\n");
    out
}
