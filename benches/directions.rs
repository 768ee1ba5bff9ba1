//! `cargo bench --bench directions`: the direction solve, one CPU thread. The small dense
//! solvers of one path (`linalg::small`: LU with partial pivoting, the tracker's route, and
//! Householder QR) on a random `N × N` matrix with the Euler and Newton right-hand sides;
//! then the CPU backend's whole direction round (evaluation and solves) at 64 points.

use pathtrack::backend::{cpu::CpuBackend, directions::DirectionsOut, Backend};
use pathtrack::bench::{kernels::random_points, system_by_name, timing::Cases};
use pathtrack::eval::Points;
use pathtrack::linalg::small::{lu_factor, lu_solve, qr_solve};
use pathtrack::solver::rng_for;
use pathtrack::start::total_degree::TotalDegree;
use pathtrack::C64;

fn main() -> pathtrack::Result<()> {
    let cases = Cases::from_args(
        "direction solve: one N × N system with 2 right-hand sides (Euler, Newton), one CPU thread",
    );
    let mut rng = rng_for(3);
    for nn in [8, 16, 32] {
        // A (N × N) and B (N × 2): random entries with parts in [-0.5, 0.5)
        let (entries, _) = random_points(&mut rng, nn + 2, nn);
        let (a, b) = entries.split_at(nn * nn);
        let (mut work, mut rhs, mut piv) = (a.to_vec(), b.to_vec(), vec![0; nn]);
        cases.run(&format!("lu N={nn}"), || {
            work.copy_from_slice(a);
            rhs.copy_from_slice(b);
            lu_factor(nn, &mut work, &mut piv);
            lu_solve(nn, &work, &piv, &mut rhs, 2);
            Ok(())
        })?;
        cases.run(&format!("qr N={nn}"), || {
            work.copy_from_slice(a);
            rhs.copy_from_slice(b);
            qr_solve(nn, &mut work, &mut rhs, 2);
            Ok(())
        })?;
    }
    let mut backend = CpuBackend::new(1)?;
    for name in ["katsura10", "cyclic7"] {
        let h = TotalDegree::new(&system_by_name(name)?, &mut rng)?.homotopy;
        backend.set_homotopy(&h)?;
        let (p, nh) = (64, h.nh());
        let (ys, taus) = random_points(&mut rng, p, nh);
        let (mut euler, mut newton, mut cond) = (
            vec![C64::default(); p * nh],
            vec![C64::default(); p * nh],
            vec![0.0; p],
        );
        cases.run(&format!("directions {name} p={p}"), || {
            let out = DirectionsOut {
                euler: &mut euler,
                newton: &mut newton,
                cond: &mut cond,
            };
            backend.directions(&Points::projective(&ys, &taus), out)
        })?;
    }
    Ok(())
}
