//! `pathtrack count SYSTEM [--json]`: root counts without tracking.

use crate::error::{Error, Result};
use crate::start::mhom;
use crate::start::polyhedral::{self, Supports};
use clap::Args;
use serde_json::{json, Map, Value};

#[derive(Args, Debug)]
pub struct CountArgs {
    /// System file (YAML or PHCpack format).
    pub file: std::path::PathBuf,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Seed of the random liftings.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Threads for the mixed-cell enumeration (0: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Evaluate the m-hom Bézout number of this partition, e.g. "{x y}{z}", instead of
    /// searching the best one.
    #[arg(long)]
    pub partition: Option<String>,
}

/// The root counts of a system as a JSON object.
pub fn root_counts(
    system: &crate::system::System,
    seed: u64,
    threads: usize,
    partition: Option<&str>,
) -> Result<Map<String, Value>> {
    let clock = std::time::Instant::now();
    let mut m = Map::new();
    m.insert(
        "total_degree".into(),
        system
            .total_degree()
            .map(crate::report::count_value)
            .unwrap_or(Value::Null),
    );
    let s = Supports::from_system(system)?;
    let torus = polyhedral::mixed_volume_of(&s, seed, threads)?;
    m.insert(
        "mixed_volume".into(),
        crate::report::count_value(torus.mixed_volume),
    );
    if system.equations.iter().any(|f| f.is_laurent()) {
        m.insert("stable_mixed_volume".into(), Value::Null);
    } else {
        let stable = polyhedral::stable_mixed_volume_of(&s, seed, threads)?;
        m.insert(
            "stable_mixed_volume".into(),
            crate::report::count_value(stable.stable_volume),
        );
    }
    m.insert("mixed_cells".into(), json!(torus.cells));
    if !system.equations.iter().any(|f| f.is_laurent()) {
        let (part, count) = match partition {
            Some(p) => {
                let p = mhom::Partition::parse(p, &system.variables)?;
                let c = mhom::mhom_bezout(system, &p)?;
                (p, c)
            }
            None => mhom::best_partition(system)?,
        };
        m.insert("mhom_bezout".into(), crate::report::count_value(count));
        m.insert("partition".into(), json!(part.display(&system.variables)));
    }
    m.insert("seconds".into(), json!(clock.elapsed().as_secs_f64()));
    Ok(m)
}

pub fn run(a: &CountArgs) -> Result<i32> {
    let threads = super::resources::threads(a.threads);
    let system = crate::system::load(&a.file)?;
    let m = root_counts(&system, a.seed, threads, a.partition.as_deref())?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string(&m).map_err(|e| Error::Internal(e.to_string()))?
        );
    } else {
        println!(
            "pathtrack count: {} ({} variables)",
            system.name,
            system.n()
        );
        for (k, v) in &m {
            println!("  {k:<22} {v}");
        }
    }
    Ok(0)
}
