//! `cargo bench --bench permanents`: the permanent of a dense random complex `n × n`
//! matrix (`linalg::permanent::bench_matrix`) on one thread, by Glynn's and Ryser's
//! formulas, which are checked to agree before they are timed (`pathtrack bench perm`
//! for threads and GPUs).

use pathtrack::bench::timing::Cases;
use pathtrack::linalg::permanent::{bench_matrix, permanent_c64, Algorithm, PermOptions};
use pathtrack::Error;

fn main() -> pathtrack::Result<()> {
    let cases = Cases::from_args("permanents: dense random complex n × n matrix, one thread");
    for n in [12, 16, 20] {
        let a = bench_matrix(n);
        let glynn = PermOptions::default();
        let ryser = PermOptions {
            algorithm: Algorithm::Ryser,
            ..glynn
        };
        let (g, r) = (permanent_c64(&a, &glynn)?, permanent_c64(&a, &ryser)?);
        if (g - r).norm() > 1e-10 * g.norm() {
            return Err(Error::Internal(format!("n = {n}: Glynn {g}, Ryser {r}")));
        }
        for (name, opts) in [("glynn", glynn), ("ryser", ryser)] {
            cases.run(&format!("permanent {name} n={n}"), || {
                permanent_c64(&a, &opts)?;
                Ok(())
            })?;
        }
    }
    Ok(())
}
