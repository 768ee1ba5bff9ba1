//! `pathtrack solve FILE`.
use crate::error::Result;
use clap::Args;

#[derive(Args, Debug)]
pub struct SolveArgs {
    /// System file (YAML or PHCpack format).
    pub file: std::path::PathBuf,
}

pub fn run(_a: &SolveArgs) -> Result<i32> {
    Ok(0)
}
