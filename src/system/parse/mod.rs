//! Front ends: YAML (`variables:` / `equations:`, see [`yaml`]), PHCpack's input format
//! ([`phc`]), Bertini's input file ([`bertini`]) and Hom4PS's ([`hom4ps`]), all built on
//! one expression parser ([`expr`]). The format is detected from the content
//! ([`detect`]), never from the file name. Every error is an [`InputError`] naming the
//! file, the equation (1-based) and the line:column in the file where the offending text
//! is. [`to_format`] writes a system in any of the four formats, exactly (see [`mod@write`]).

pub mod bertini;
pub mod expr;
pub mod hom4ps;
pub mod phc;
pub mod rounding;
pub mod write;
pub mod yaml;

use super::System;
use crate::error::InputError;
use std::collections::HashMap;
use std::path::Path;

/// The system file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Yaml,
    Phc,
    Bertini,
    Hom4ps,
}

/// The format of a system file, from its content: PHCpack's when the first non-empty line
/// starts with an unsigned integer; Bertini's when the first word (after `%` comments) is
/// `CONFIG`, `INPUT` or a declaration such as `variable_group`; Hom4PS's when the first
/// character (after `#` comments) is `{` and a `;` comes before any `:`; YAML otherwise.
pub fn detect(text: &str) -> Format {
    if phc::looks_like_phc(text) {
        Format::Phc
    } else if bertini::looks_like_bertini(text) {
        Format::Bertini
    } else if hom4ps::looks_like_hom4ps(text) {
        Format::Hom4ps
    } else {
        Format::Yaml
    }
}

/// Reads and parses a system file; the format is detected from its content.
pub fn load(path: &Path) -> Result<System, InputError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(&name, format!("cannot read file: {e}")))?;
    parse_str(&text, &name)
}

/// A system named on the command line: the file `arg` when it exists, else the member of a
/// benchmark family that `arg` names (`katsura6`, [`super::families::by_name`]), else the
/// error of reading the file.
pub fn load_named(arg: &Path) -> Result<System, InputError> {
    if !arg.exists() {
        if let Some(name) = arg.to_str() {
            if let Some(generated) = super::families::by_name(name) {
                return generated.map_err(|m| {
                    InputError::new(name, format!("no such file, and not a family member: {m}"))
                });
            }
            if !name.contains(['.', '/', '\\']) {
                let families: Vec<&str> =
                    super::families::FAMILIES.iter().map(|(f, _)| *f).collect();
                return Err(InputError::new(
                    name,
                    format!(
                        "no such file, and not a family name with a size such as katsura6 \
                         (families: {})",
                        families.join(", ")
                    ),
                ));
            }
        }
    }
    load(arg)
}

/// Parses a system from text; `origin` names the source in error messages.
pub fn parse_str(text: &str, origin: &str) -> Result<System, InputError> {
    rounding::start_system();
    let system = match detect(text) {
        Format::Phc => phc::parse(text, origin),
        Format::Bertini => bertini::parse(text, origin),
        Format::Hom4ps => hom4ps::parse(text, origin),
        Format::Yaml => yaml::parse(text, origin),
    }?;
    rounding::end_system(&system, origin);
    Ok(system)
}

/// [`parse_str`], but a YAML or PHCpack system may have more or fewer equations than
/// variables (the other formats stay square): the systems of `solve` (overdetermined ones)
/// and `witness`.
pub fn parse_str_rectangular(text: &str, origin: &str) -> Result<System, InputError> {
    match detect(text) {
        Format::Yaml => {
            rounding::start_system();
            let system = yaml::parse_rectangular(text, origin)?;
            rounding::end_system(&system, origin);
            Ok(system)
        }
        Format::Phc => {
            rounding::start_system();
            let system = phc::parse_rectangular(text, origin)?;
            rounding::end_system(&system, origin);
            Ok(system)
        }
        _ => parse_str(text, origin),
    }
}

/// [`load_named`] with [`parse_str_rectangular`] for a file.
pub fn load_named_rectangular(arg: &Path) -> Result<System, InputError> {
    if !arg.exists() {
        return load_named(arg);
    }
    let name = arg.display().to_string();
    let text = std::fs::read_to_string(arg)
        .map_err(|e| InputError::new(&name, format!("cannot read file: {e}")))?;
    parse_str_rectangular(&text, &name)
}

/// `sys` as a file in `format`; reading it back gives the same polynomials with the same
/// coefficients, bit for bit (PHCpack and Hom4PS number the variables in order of first
/// appearance, so the columns may come back permuted). An error when a name cannot be
/// written in the format (a variable called `Pi` in Bertini's).
pub fn to_format(sys: &System, format: Format) -> Result<String, String> {
    match format {
        Format::Yaml => Ok(super::families::to_yaml(sys)),
        Format::Phc => Ok(phc::to_phc(sys)),
        Format::Bertini => bertini::to_bertini(sys),
        Format::Hom4ps => Ok(hom4ps::to_hom4ps(sys)),
    }
}

/// Replaces every comment, from `marker` to the end of its line, by spaces (byte offsets
/// and line numbers stay those of `text`).
pub(crate) fn blank_comments(text: &str, marker: char) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_comment = false;
    for c in text.chars() {
        if c == '\n' {
            in_comment = false;
            out.push(c);
        } else if in_comment || c == marker {
            in_comment = true;
            for _ in 0..c.len_utf8() {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The variables of `polys` (each the source of one polynomial and its byte offset in the
/// file) in order of first appearance, as PHCpack and Hom4PS number them; `at` turns an
/// offset and a message into an error.
pub(crate) fn variables_by_appearance(
    polys: &[(usize, &str)],
    at: &dyn Fn(usize, String) -> InputError,
) -> Result<(Vec<String>, HashMap<String, usize>), InputError> {
    let mut names: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (k, &(start, src)) in polys.iter().enumerate() {
        let ids =
            expr::identifiers(src).map_err(|e| at(start + e.offset, e.message).equation(k + 1))?;
        for (name, p) in ids {
            if index.contains_key(&name) {
                continue;
            }
            check_variable_name(&name).map_err(|m| at(start + p, m).equation(k + 1))?;
            index.insert(name.clone(), names.len());
            names.push(name);
        }
    }
    Ok((names, index))
}

/// Parses each of `polys` (source and byte offset) in the variables `index`; an equation
/// that expands to zero is an error.
pub(crate) fn parse_polys(
    polys: &[(usize, &str)],
    index: &HashMap<String, usize>,
    defs: &HashMap<String, super::Polynomial>,
    at: &dyn Fn(usize, String) -> InputError,
) -> Result<Vec<super::Polynomial>, InputError> {
    let n = index.len();
    let mut equations = Vec::with_capacity(polys.len());
    for (k, &(start, src)) in polys.iter().enumerate() {
        let poly = expr::parse_expr_with(src, index, n, defs)
            .map_err(|e| at(start + e.offset, e.message).equation(k + 1))?;
        rounding::end_equation(k + 1);
        if poly.terms.is_empty() {
            let lead = src.len() - src.trim_start().len();
            return Err(at(
                start + lead,
                "equation is identically zero after expansion".into(),
            )
            .equation(k + 1));
        }
        equations.push(poly);
    }
    Ok(equations)
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |p| p + 1);
    (line, before[start..].chars().count() + 1)
}

/// Default system name: the file stem of `origin`.
pub(crate) fn default_name(origin: &str) -> String {
    Path::new(origin)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| origin.to_string())
}

/// Checks a variable name: an identifier that is not reserved.
pub(crate) fn check_variable_name(name: &str) -> Result<(), String> {
    if expr::RESERVED.contains(&name) {
        let why = if name == "i" || name == "I" {
            "the imaginary unit"
        } else {
            "the exponent letter of numbers like 1e5"
        };
        return Err(format!(
            "variable name '{name}' is reserved ({why}); rename the variable"
        ));
    }
    if !expr::is_identifier(name) {
        return Err(format!(
            "invalid variable name '{name}' (a name is a letter or '_' followed by letters, digits or '_')"
        ));
    }
    Ok(())
}
