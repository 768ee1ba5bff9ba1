//! PHCpack's input format:
//! ```text
//! 2            (number of equations, optionally followed by the number of variables)
//! x**2 + 4*y**2 - 4;
//! 2*y**2 - x;
//! ```
//! Each polynomial ends with `;` and may span lines; the variables are numbered in order
//! of first appearance. Text after the last polynomial (e.g. the solution list of a
//! PHCpack output file) is ignored as long as it holds no further `;`. [`to_phc`] writes a
//! system in this format, for `phc` itself and for this reader.

use super::{default_name, line_col, parse_polys, variables_by_appearance, write};
use crate::error::InputError;
use crate::system::System;
use std::collections::HashMap;

/// True when the first non-empty line starts with an unsigned integer.
pub fn looks_like_phc(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .and_then(|l| l.split_whitespace().next())
        .is_some_and(|tok| !tok.is_empty() && tok.bytes().all(|b| b.is_ascii_digit()))
}

/// Parses a system in PHCpack's format; `origin` names the file in errors.
pub fn parse(text: &str, origin: &str) -> Result<System, InputError> {
    parse_with(text, origin, true)
}

/// [`parse`], but the equations may be more or fewer than the variables: `N n` on the first
/// line declares `N` equations in `n` unknowns (`n` checked against the variables found);
/// `N` alone takes the variables as they come.
pub fn parse_rectangular(text: &str, origin: &str) -> Result<System, InputError> {
    parse_with(text, origin, false)
}

/// [`parse`] (`square`) or [`parse_rectangular`].
fn parse_with(text: &str, origin: &str, square: bool) -> Result<System, InputError> {
    let at = |off: usize, msg: String| {
        let (l, c) = line_col(text, off);
        InputError::new(origin, msg).at(l, c)
    };
    // First non-empty line: n [m].
    let mut off = 0;
    let mut header = None;
    for line in text.split_inclusive('\n') {
        if !line.trim().is_empty() {
            header = Some((off, line));
            break;
        }
        off += line.len();
    }
    let (hoff, hline) = header.ok_or_else(|| InputError::new(origin, "empty file"))?;
    let mut counts = Vec::new();
    let mut p = 0;
    for tok in hline.split_whitespace() {
        let tpos = hoff + p + hline[p..].find(tok).unwrap_or(0);
        p = tpos - hoff + tok.len();
        match tok.parse::<usize>() {
            Ok(v) if counts.len() < 2 => counts.push((v, tpos)),
            _ => {
                return Err(at(
                    tpos,
                    format!(
                        "PHCpack format: the first line must hold the number of equations, \
                         optionally followed by the number of variables; found '{tok}'"
                    ),
                ))
            }
        }
    }
    let (n, npos) = counts[0];
    if n == 0 {
        return Err(at(npos, "the number of equations must be positive".into()));
    }
    if let Some(&(m, mpos)) = counts.get(1) {
        if square && m != n {
            return Err(at(
                mpos,
                format!("system is not square: {n} equations in {m} variables"),
            ));
        }
    }
    // Split the polynomials at ';'.
    let body_start = hoff + hline.len();
    // No capacity from the header: `n` is unchecked input (1000000000000 must be an error,
    // not an allocation failure).
    let mut polys_src: Vec<(usize, &str)> = Vec::new();
    let mut s = body_start;
    while polys_src.len() < n {
        match text[s..].find(';') {
            Some(q) => {
                polys_src.push((s, &text[s..s + q]));
                s = s + q + 1;
            }
            None => {
                return Err(at(
                    text.len(),
                    format!(
                        "expected {n} polynomials each ending with ';', found {}",
                        polys_src.len()
                    ),
                )
                .equation(polys_src.len() + 1))
            }
        }
    }
    if let Some(q) = text[s..].find(';') {
        return Err(at(
            s + q,
            format!("more polynomials than the {n} declared on the first line"),
        ));
    }
    let (names, index) = variables_by_appearance(&polys_src, &at)?;
    if let (false, Some(&(m, mpos))) = (square, counts.get(1)) {
        if names.len() != m {
            return Err(at(
                mpos,
                format!(
                    "{m} variables declared, {} found ({})",
                    names.len(),
                    names.join(", ")
                ),
            ));
        }
    }
    if square && names.len() != n {
        return Err(at(
            npos,
            format!(
                "system is not square: {n} equations in {} variables ({})",
                names.len(),
                names.join(", ")
            ),
        ));
    }
    let equations = parse_polys(&polys_src, &index, &HashMap::new(), &at)?;
    Ok(System {
        name: default_name(origin),
        description: "read from PHCpack format".to_string(),
        variables: names,
        equations,
    })
}

/// `sys` in PHCpack's format: the number of equations, then one polynomial per line with
/// `**` for powers and `i` for the imaginary unit, ending with `;`. Coefficients are
/// written exactly ([`write::exact`]). The reader numbers the variables in order of first
/// appearance, so [`parse`] gives back `sys` up to that order of the variables (and its
/// name).
pub fn to_phc(sys: &System) -> String {
    let style = write::Style {
        power: "**",
        imaginary: "i",
        real: write::exact,
    };
    let mut out = format!("{}\n", sys.equations.len());
    for p in &sys.equations {
        out.push_str(&write::poly(p, &sys.variables, &style));
        out.push_str(";\n");
    }
    out
}
