//! `pathtrack convert FILE --to phc|bertini|hom4ps|yaml [-o OUT]`: the same system in
//! another solver's format, coefficients written exactly (docs/input-format.md).

use crate::error::{Error, Result};
use crate::system::parse::{to_format, Format};
use clap::Args;

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// System file (YAML, PHCpack, Bertini or Hom4PS format) or a family name such as katsura6.
    pub file: std::path::PathBuf,
    /// Format to write.
    #[arg(long, value_enum)]
    pub to: Format,
    /// Output file (stdout when absent).
    #[arg(short, long)]
    pub output: Option<std::path::PathBuf>,
}

pub fn run(a: &ConvertArgs) -> Result<i32> {
    super::outputs::check(Some(&a.file), &[("-o", a.output.as_deref())])?;
    let system = crate::system::parse::load_named(&a.file)?;
    let text = to_format(&system, a.to).map_err(|m| {
        Error::Usage(format!(
            "{}: cannot write as {:?}: {m}",
            a.file.display(),
            a.to
        ))
    })?;
    match &a.output {
        Some(p) => {
            std::fs::write(p, text).map_err(|e| Error::io(format!("writing {}", p.display()), e))?
        }
        None => print!("{text}"),
    }
    Ok(0)
}
