//! The inner kernels of a tracker's step, timed alone: the evaluator's extended Jacobians
//! on the CPU (`bench eval`), the double-double evaluation and direction solve of the last
//! stretch near t = 1 (`bench dd`), and the CUDA backend's device-resident Euler–Newton
//! steps (`bench step`, beside T. Chen's V100 times, Tables 1–2).

use super::system_by_name;
use super::timing::seconds_per_call;
use crate::backend::{cpu::CpuBackend, Backend};
use crate::error::{Error, Result};
use crate::solver::rng_for;
use crate::start::total_degree::TotalDegree;
use crate::system::System;
use num_complex::Complex64 as C64;
use rand::Rng;

/// Extended Jacobians `[D_y H, D_τ H, H]` of each system's total-degree homotopy at `p`
/// random points per call, for every `p` of `ps`, on `threads` threads (0: all cores).
pub fn eval(systems: &[String], ps: &[usize], threads: usize) -> Result<i32> {
    let mut backend = CpuBackend::new(threads)?;
    println!("# pathtrack bench eval (backend cpu, {} threads): extended Jacobians [D_y H, D_τ H, H] of the total-degree homotopy", backend.threads());
    println!(
        "{:<12} {:>4} {:>6} {:>8} {:>12} {:>14} {:>10}",
        "system", "n", "terms", "p", "µs/call", "points/s", "GFLOP/s"
    );
    for name in systems {
        let sys = system_by_name(name)?;
        let mut rng = rng_for(7);
        let td = TotalDegree::new(&sys, &mut rng)?;
        let h = &td.homotopy;
        backend.set_homotopy(h)?;
        let layout = crate::eval::EvalLayout::new(h);
        let nh = h.nh();
        for &p in ps {
            let (ys, taus) = random_points(&mut rng, p, nh);
            let mut out = vec![C64::new(0.0, 0.0); p * layout.ext_len()];
            let per = seconds_per_call(|| {
                backend.extended_jacobians(&crate::eval::Points::projective(&ys, &taus), &mut out)
            })?;
            println!(
                "{:<12} {:>4} {:>6} {:>8} {:>12.2} {:>14.0} {:>10.2}",
                name,
                h.n,
                layout.m,
                p,
                per * 1e6,
                p as f64 / per,
                layout.flops(p) / per * 1e-9
            );
        }
    }
    Ok(0)
}

/// `p` random points of a homotopy with `nh` homogeneous coordinates: `ys` (`p × nh`,
/// real and imaginary parts in [-0.5, 0.5)), then their `τ` in (-1, 0].
pub fn random_points(rng: &mut impl Rng, p: usize, nh: usize) -> (Vec<C64>, Vec<C64>) {
    let ys = (0..p * nh)
        .map(|_| C64::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5))
        .collect();
    let taus = (0..p)
        .map(|_| C64::new(-rng.random::<f64>(), 0.0))
        .collect();
    (ys, taus)
}

/// One double-double evaluation of `H`, `∂H/∂y`, `∂H/∂τ` and one solve for the Newton and
/// Euler directions (`track::dd`), on one thread, for each system's terms with random lifts.
pub fn dd(systems: &[String], seed: u64) -> Result<i32> {
    use crate::eval::dd::Cdd;
    use crate::eval::dd_homotopy::DdHomotopy;
    println!("# pathtrack bench dd (one thread): double-double evaluation of H, ∂H/∂y, ∂H/∂τ and the solve for both directions (track::dd), terms with random lifts");
    println!(
        "{:<12} {:>4} {:>6} {:>10} {:>12} {:>10} {:>12}",
        "system", "n", "terms", "eval µs", "same τ µs", "solve µs", "directions/s"
    );
    for name in systems {
        let sys = system_by_name(name)?;
        let h = random_lift_homotopy(&sys, seed);
        let dd = DdHomotopy::new(&h).ok_or_else(|| {
            Error::Usage(format!(
                "bench dd: {name} is a Laurent system (negative exponents)"
            ))
        })?;
        let nh = dd.nh();
        let mut rng = rng_for(seed);
        let mut y: Vec<Cdd> = (0..nh)
            .map(|_| {
                Cdd::from(C64::new(
                    rng.random::<f64>() - 0.5,
                    rng.random::<f64>() - 0.5,
                ))
            })
            .collect();
        let s = y.iter().map(|z| z.to_c64().norm_sqr()).sum::<f64>().sqrt();
        y.iter_mut().for_each(|z| *z = Cdd::from(z.to_c64() / s));
        let patch: Vec<Cdd> = y.iter().map(|z| z.conj()).collect();
        let mut v = dd.values();
        let (mut newton, mut euler) = (vec![Cdd::ZERO; nh], vec![Cdd::ZERO; nh]);
        // Each evaluation at a new τ, as the tracker's RK4 stages are (the coefficients
        // `c·e^{τω}` are cached per τ).
        let mut tau = -1e-8;
        let failed = |what: &str| Error::Usage(format!("bench dd: {name}: the {what} failed"));
        let eval = seconds_per_call(|| {
            tau *= 0.999_999;
            dd.eval(&y, tau, None, &mut v)
                .then_some(())
                .ok_or_else(|| failed("evaluation"))
        })?;
        let eval_same_tau = seconds_per_call(|| {
            dd.eval(&y, tau, None, &mut v)
                .then_some(())
                .ok_or_else(|| failed("evaluation"))
        })?;
        let solve = seconds_per_call(|| {
            v.solve(&patch, Cdd::ZERO, true, &mut newton, &mut euler)
                .then_some(())
                .ok_or_else(|| failed("solve"))
        })?;
        println!(
            "{:<12} {:>4} {:>6} {:>10.2} {:>12.2} {:>10.2} {:>12.0}",
            name,
            h.n,
            h.equations.iter().map(Vec::len).sum::<usize>(),
            eval * 1e6,
            eval_same_tau * 1e6,
            solve * 1e6,
            1.0 / (eval + solve)
        );
    }
    Ok(0)
}

/// The seed's V100 times (seconds for 100 Euler–Newton steps; T. Chen, Tables 1–2).
fn seed_v100(system: &str, p: usize) -> Option<f64> {
    let t: &[(usize, f64)] = match system {
        "cyclic14" => &[
            (10, 0.0222),
            (50, 0.0274),
            (250, 0.0296),
            (500, 0.0313),
            (1000, 0.0355),
        ],
        "chandra24" => &[(250, 0.0728), (500, 0.0757), (1000, 0.0852)],
        _ => &[],
    };
    t.iter().find(|(q, _)| *q == p).map(|(_, s)| *s)
}

/// The system's terms with random lifts in [0, 1) (the form of a polyhedral homotopy).
pub fn random_lift_homotopy(sys: &System, seed: u64) -> crate::homotopy::Homotopy {
    let mut rng = rng_for(seed);
    let eqs = sys
        .equations
        .iter()
        .map(|f| {
            f.terms
                .iter()
                .map(|t| (t.coeff, t.exponents.clone(), rng.random::<f64>()))
                .collect()
        })
        .collect();
    crate::homotopy::Homotopy::from_affine_terms(sys.n(), eqs)
}

/// `steps` device-resident Euler–Newton steps of `p` paths for every `p` of `ps`, every
/// evaluation route and every direction solve, on GPU `device`.
#[allow(clippy::too_many_arguments)]
pub fn step(
    systems: &[String],
    ps: &[usize],
    steps: usize,
    evals: &[crate::backend::cuda::EvalMethod],
    solves: &[crate::backend::cuda::SolveMethod],
    graph: bool,
    device: usize,
    seed: u64,
) -> Result<i32> {
    let mut backend = crate::backend::cuda::CudaBackend::new(device)?;
    println!(
        "# pathtrack bench step: {steps} Euler–Newton steps (1 Euler prediction + 1 Newton iteration = 2 direction solves) on the device, {}",
        backend.device_description()
    );
    println!(
        "{:<10} {:>3} {:>5} {:>8} {:>9} {:>5} {:>5} {:>6} {:>11} {:>9} {:>14} {:>7} {:>9} {:>9}",
        "system",
        "n",
        "terms",
        "p",
        "eval",
        "solve",
        "graph",
        "chunks",
        "ms/steps",
        "V100 ms",
        "path-steps/s",
        "finite",
        "eval ms",
        "solve ms"
    );
    for name in systems {
        let sys = system_by_name(name)?;
        let h = random_lift_homotopy(&sys, seed);
        for &m in evals {
            backend.set_eval_method(m);
            backend.set_homotopy(&h)?;
            for &sm in solves {
                backend.set_solve_method(sm);
                let sname = match sm {
                    crate::backend::cuda::SolveMethod::GaussJordan => "gj",
                    crate::backend::cuda::SolveMethod::Qr => "qr",
                };
                println!("# {name} ({m:?}, {sname}): {}", backend.kernel_report());
                for &p in ps {
                    let t = backend.time_steps(p, steps, 1e-3, graph, seed)?;
                    let v100 = seed_v100(name, p)
                        .map(|s| format!("{:.1}", s * 1e3))
                        .unwrap_or_else(|| "-".into());
                    println!(
                        "{:<10} {:>3} {:>5} {:>8} {:>9} {:>5} {:>5} {:>6} {:>11.3} {:>9} {:>14.3e} {:>6.1}% {:>9.4} {:>9.4}",
                        name,
                        h.n,
                        h.term_count(),
                        p,
                        format!("{m:?}").to_lowercase(),
                        sname,
                        if t.graph { "yes" } else { "no" },
                        t.chunks,
                        t.ms,
                        v100,
                        (p * steps) as f64 / (t.ms * 1e-3),
                        t.finite_fraction * 100.0,
                        t.eval_ms,
                        t.solve_ms
                    );
                }
            }
        }
    }
    Ok(0)
}
