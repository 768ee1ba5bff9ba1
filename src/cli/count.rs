//! `pathtrack count SYSTEM [--json]`: root counts without tracking.

use crate::error::{Error, Result};
use crate::start::mhom;
use crate::start::polyhedral::{self, Supports};
use clap::Args;
use serde_json::{json, Map, Value};

#[derive(Args, Debug)]
pub struct CountArgs {
    /// System file (YAML, PHCpack, Bertini or Hom4PS format) or a family name such as katsura6.
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
    /// No progress lines on stderr while the cells are counted.
    #[arg(short, long)]
    pub quiet: bool,
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
    let laurent = system.equations.iter().any(|f| f.is_laurent());
    // The two enumerations side by side: neither keeps every core busy to its end (the
    // last jobs of an enumeration run on few threads).
    let timed =
        |f: &dyn Fn() -> std::result::Result<polyhedral::CellStats, polyhedral::CellError>| {
            let t = std::time::Instant::now();
            f().map(|st| (st, t.elapsed().as_secs_f64()))
        };
    let (torus, stable) = rayon::join(
        || timed(&|| polyhedral::mixed_volume_of(&s, seed, threads)),
        || (!laurent).then(|| timed(&|| polyhedral::stable_mixed_volume_of(&s, seed, threads))),
    );
    let (torus, torus_seconds) = torus?;
    m.insert(
        "mixed_volume".into(),
        crate::report::count_value(torus.mixed_volume),
    );
    let mut seconds = Map::new();
    seconds.insert("mixed_volume".into(), json!(torus_seconds));
    match stable.transpose()? {
        Some((st, t)) => {
            m.insert(
                "stable_mixed_volume".into(),
                crate::report::count_value(st.stable_volume),
            );
            seconds.insert("stable_mixed_volume".into(), json!(t));
            m.insert("stable_mixed_cells".into(), json!(st.cells));
        }
        None => {
            m.insert("stable_mixed_volume".into(), Value::Null);
        }
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
    m.insert("seconds_each".into(), Value::Object(seconds));
    m.insert("seconds".into(), json!(clock.elapsed().as_secs_f64()));
    Ok(m)
}

pub fn run(a: &CountArgs) -> Result<i32> {
    let threads = super::resources::threads(a.threads);
    let system = crate::system::parse::load_named(&a.file)?;
    // A long count (tens of thousands of cells and more) shows that it runs and for how
    // long, as a solve's start system does.
    let mut progress = crate::report::progress::Progress::new(a.quiet);
    progress.set_phase(crate::report::progress::Phase::Counting);
    let counts = root_counts(&system, a.seed, threads, a.partition.as_deref());
    progress.finish();
    let m = counts?;
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
