//! The witness file `pathtrack witness -o W` writes and `decompose --witness W` and
//! `member --witness W` read: one JSON object (docs/witness.md) with the system's variables,
//! the seed, every witness set (randomization, slices, points with their multiplicities)
//! and, from `decompose`, the components.

use super::decompose::Component;
use super::WitnessSet;
use crate::error::{Error, InputError, Result};
use crate::system::System;
use serde::{Deserialize, Serialize};

/// The value of the file's `format` key.
pub const FORMAT: &str = "pathtrack-witness";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WitnessFile {
    pub format: String,
    pub system: String,
    pub variables: Vec<String>,
    /// The number of equations of the system.
    pub equations: usize,
    pub seed: u64,
    /// Highest dimension first.
    pub sets: Vec<WitnessSet>,
    /// The irreducible components (from `decompose`), highest dimension first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub components: Option<Vec<Component>>,
}

impl WitnessFile {
    pub fn new(system: &System, seed: u64, sets: Vec<WitnessSet>) -> WitnessFile {
        WitnessFile {
            format: FORMAT.into(),
            system: system.name.clone(),
            variables: system.variables.clone(),
            equations: system.equations.len(),
            seed,
            sets,
            components: None,
        }
    }

    pub fn write(&self, path: &std::path::Path) -> Result<()> {
        let text =
            serde_json::to_string_pretty(self).map_err(|e| Error::Internal(e.to_string()))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))
    }

    /// Reads a witness file and checks it against `system` (same variables, as many
    /// equations, each set's shapes consistent): an input error naming the file otherwise.
    pub fn read(path: &std::path::Path, system: &System) -> Result<WitnessFile> {
        let name = path.display().to_string();
        let bad = |m: String| Error::Input(InputError::new(&name, m));
        let text = std::fs::read_to_string(path)
            .map_err(|e| bad(format!("cannot read witness file: {e}")))?;
        let f: WitnessFile = serde_json::from_str(&text).map_err(|e| {
            Error::Input(
                InputError::new(&name, format!("not a witness file: {e}")).at(e.line(), e.column()),
            )
        })?;
        if f.format != FORMAT {
            return Err(bad(format!(
                "format '{}', expected '{FORMAT}' (written by pathtrack witness)",
                f.format
            )));
        }
        if f.variables != system.variables || f.equations != system.equations.len() {
            return Err(bad(format!(
                "written for a system with variables [{}] and {} equations, not {} ([{}], {} \
                 equations)",
                f.variables.join(", "),
                f.equations,
                system.name,
                system.variables.join(", "),
                system.equations.len()
            )));
        }
        let n = system.n();
        for w in &f.sets {
            let d = w.dimension;
            let shapes_ok = d < n
                && w.randomization.matrix.len() == n - d
                && w.randomization
                    .matrix
                    .iter()
                    .all(|r| r.len() == system.equations.len())
                && w.slices.constants.len() == d
                && w.slices.coefficients.len() == d
                && w.slices.coefficients.iter().all(|r| r.len() == n)
                && w.points.iter().all(|p| p.len() == n)
                && w.multiplicities.len() == w.points.len();
            if !shapes_ok {
                return Err(bad(format!(
                    "the witness set of dimension {d} has the wrong shape for {} equations \
                     in {n} variables",
                    system.equations.len()
                )));
            }
        }
        Ok(f)
    }

    /// The witness set of dimension `d`, if the file has one.
    pub fn set(&self, d: usize) -> Option<&WitnessSet> {
        self.sets.iter().find(|w| w.dimension == d)
    }
}
