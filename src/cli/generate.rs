//! `pathtrack generate FAMILY N [-o FILE]`.

use crate::error::{Error, Result};
use clap::Args;

#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// Family: cyclic, katsura, noon, eco, chandra, reimer.
    pub family: String,
    /// Size parameter n (katsura-n has n+1 variables, the others n).
    pub n: usize,
    /// Output file (stdout when absent).
    #[arg(short, long)]
    pub output: Option<std::path::PathBuf>,
}

pub fn run(a: &GenerateArgs) -> Result<i32> {
    let sys = crate::system::families::generate(&a.family, a.n).map_err(Error::Usage)?;
    super::outputs::check(None, &[("-o", a.output.as_deref())])?;
    let text = crate::system::families::to_yaml(&sys);
    match &a.output {
        Some(p) => {
            std::fs::write(p, text).map_err(|e| Error::io(format!("writing {}", p.display()), e))?
        }
        None => print!("{text}"),
    }
    Ok(0)
}
