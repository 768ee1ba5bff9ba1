//! `cargo bench --bench evaluator`: the evaluator alone, one CPU thread. A call computes
//! the extended Jacobians `[D_y H, D_τ H, H]` of a total-degree homotopy at `p` points
//! (`pathtrack bench eval` times more sizes and threads).

use pathtrack::backend::{cpu::CpuBackend, Backend};
use pathtrack::bench::{kernels::random_points, system_by_name, timing::Cases};
use pathtrack::eval::{EvalLayout, Points};
use pathtrack::solver::rng_for;
use pathtrack::start::total_degree::TotalDegree;
use pathtrack::C64;

fn main() -> pathtrack::Result<()> {
    let cases = Cases::from_args(
        "evaluator: extended Jacobians [D_y H, D_τ H, H] of a total-degree homotopy at p points per call, one CPU thread",
    );
    let mut backend = CpuBackend::new(1)?;
    for name in ["katsura10", "cyclic7", "noon7"] {
        let mut rng = rng_for(7);
        let h = TotalDegree::new(&system_by_name(name)?, &mut rng)?.homotopy;
        backend.set_homotopy(&h)?;
        let ext = EvalLayout::new(&h).ext_len();
        for p in [1, 64] {
            let (ys, taus) = random_points(&mut rng, p, h.nh());
            let mut out = vec![C64::new(0.0, 0.0); p * ext];
            cases.run(&format!("eval {name} p={p}"), || {
                backend.extended_jacobians(&Points::projective(&ys, &taus), &mut out)
            })?;
        }
    }
    Ok(())
}
