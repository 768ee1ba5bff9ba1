//! Front ends: YAML (`variables:` / `equations:`, see [`yaml`]) and PHCpack's input format
//! (see [`phc`]), both built on one expression parser ([`expr`]). The format is detected
//! from the content: a file whose first non-empty line starts with an integer is PHCpack's.
//! Every error is an [`InputError`] naming the file, the equation (1-based) and the
//! line:column in the file where the offending text is.

pub mod expr;
pub mod phc;
pub mod yaml;

use super::System;
use crate::error::InputError;
use std::path::Path;

/// Reads and parses a system file; the format is detected from its content.
pub fn load(path: &Path) -> Result<System, InputError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(&name, format!("cannot read file: {e}")))?;
    parse_str(&text, &name)
}

/// Parses a system from text; `origin` names the source in error messages.
pub fn parse_str(text: &str, origin: &str) -> Result<System, InputError> {
    if phc::looks_like_phc(text) {
        phc::parse(text, origin)
    } else {
        yaml::parse(text, origin)
    }
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
