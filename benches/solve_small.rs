//! `cargo bench --bench solve_small`: a small solve from end to end through the library
//! entry ([`pathtrack::Solver`]: start system, tracking, endgame, refinement, tally) on one
//! CPU thread, seed 1; each solve's count of nonsingular solutions is checked against the
//! known root count before it is timed (`pathtrack bench solve` compares with PHCpack and
//! Macaulay2).

use pathtrack::bench::{system_by_name, timing::Cases};
use pathtrack::{BackendChoice, Error, Solver, StartKind};

fn main() -> pathtrack::Result<()> {
    let cases = Cases::from_args("small solve: a whole solve on one CPU thread, seed 1");
    // cyclic-5: 70 isolated solutions (its mixed volume); katsura-6: 2^6 (its Bézout number).
    for (name, start, roots) in [
        ("cyclic5", StartKind::Polyhedral, 70),
        ("katsura6", StartKind::TotalDegree, 64),
    ] {
        let sys = system_by_name(name)?;
        let solver = Solver::new()
            .backend(BackendChoice::Cpu)
            .threads(1)
            .seed(1)
            .start(start)
            .keep_endpoints(false);
        let found = solver.solve(&sys)?.nonsingular().count();
        if found != roots {
            return Err(Error::Internal(format!(
                "{name}: {found} nonsingular solutions, known {roots}"
            )));
        }
        cases.run(&format!("solve {name} ({start:?})"), || {
            solver.solve(&sys)?;
            Ok(())
        })?;
    }
    Ok(())
}
