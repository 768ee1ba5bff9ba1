//! The residual precision asked per point (`eval::Residual`) reaches the CPU backend's
//! directions: Runge–Kutta stage points never pay for a double-double residual, the
//! recovery round's points get it everywhere, and the Euler direction never depends on it.

use num_complex::Complex64 as C64;
use pathtrack::backend::cpu::{accurate_residual, CpuBackend};
use pathtrack::backend::{solve_directions_lu, Backend, DirectionsOut, LuScratch};
use pathtrack::eval::{EvalLayout, Points, Residual};
use pathtrack::start::total_degree::TotalDegree;

/// Euler and Newton directions from `backend.directions` for every point, one residual mode.
fn directions(
    b: &mut CpuBackend,
    ys: &[C64],
    taus: &[C64],
    mode: Residual,
) -> (Vec<C64>, Vec<C64>) {
    let nh = ys.len() / taus.len();
    let modes = vec![mode; taus.len()];
    let pts = Points {
        residual: Some(&modes),
        ..Points::projective(ys, taus)
    };
    let (mut eu, mut ne) = (
        vec![C64::default(); ys.len()],
        vec![C64::default(); ys.len()],
    );
    let mut co = vec![0.0; taus.len()];
    b.directions(
        &pts,
        DirectionsOut {
            euler: &mut eu,
            newton: &mut ne,
            cond: &mut co,
        },
    )
    .unwrap();
    assert_eq!(eu.len(), taus.len() * nh);
    (eu, ne)
}

/// Newton directions solved (as the tracker's host solve: LU) from the double extended
/// Jacobians, with the residual column replaced by its double-double value where `dd`.
fn reference_newton(
    b: &mut CpuBackend,
    layout: &EvalLayout,
    ys: &[C64],
    taus: &[C64],
    dd: bool,
) -> Vec<C64> {
    let (n, nh, el) = (layout.n, layout.nh, layout.ext_len());
    let pts = Points::projective(ys, taus);
    let mut ext = vec![C64::default(); taus.len() * el];
    b.extended_jacobians(&pts, &mut ext).unwrap();
    let mut out = vec![C64::default(); ys.len()];
    let mut scratch = LuScratch::default();
    let mut eu = vec![C64::default(); nh];
    for i in 0..taus.len() {
        if dd {
            assert!(accurate_residual(layout, &pts, i, &mut ext), "point {i}");
        }
        let y = &ys[i * nh..(i + 1) * nh];
        let ne = &mut out[i * nh..(i + 1) * nh];
        solve_directions_lu(
            n,
            &ext[i * el..(i + 1) * el],
            y,
            false,
            &mut scratch,
            &mut eu,
            ne,
        );
    }
    out
}

#[test]
fn residual_modes_choose_double_or_double_double_per_point() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("systems/chandra6.yaml");
    let sys = pathtrack::system::load(&p).unwrap();
    let mut rng = pathtrack::solver::rng_for(3);
    let td = TotalDegree::new(&sys, &mut rng).unwrap();
    let layout = EvalLayout::new(&td.homotopy);
    let mut b = CpuBackend::new(2).unwrap();
    b.set_homotopy(&td.homotopy).unwrap();
    let nh = layout.nh;
    // 20 start points moved off their paths a little, so that H is small but not zero.
    let count = 20;
    let mut ys = Vec::new();
    for i in 0..count {
        let y = td.start_point(i as u128 * 3);
        ys.extend(
            y.iter()
                .enumerate()
                .map(|(j, v)| v * (1.0 + 1e-3 * ((i + j) as f64).sin())),
        );
    }
    assert_eq!(ys.len(), count * nh);
    for tau in [-3.0, -0.05] {
        let taus = vec![C64::new(tau, 0.0); count];
        let double = reference_newton(&mut b, &layout, &ys, &taus, false);
        let accurate = reference_newton(&mut b, &layout, &ys, &taus, true);
        // The two references differ: the double-double residual changes the Newton step.
        assert!(
            double.iter().zip(&accurate).any(|(u, v)| u != v),
            "τ = {tau}"
        );
        let (eu_stage, ne_stage) = directions(&mut b, &ys, &taus, Residual::EulerOnly);
        let (eu_dd, ne_dd) = directions(&mut b, &ys, &taus, Residual::DoubleDouble);
        let (eu_ad, _) = directions(&mut b, &ys, &taus, Residual::Adaptive);
        // Stage points: the double residual, at every τ.
        assert_eq!(ne_stage, double, "τ = {tau}");
        // Recovery points: the double-double residual, at every τ (also τ = −3, before the
        // zone where the adaptive rule may use it).
        assert_eq!(ne_dd, accurate, "τ = {tau}");
        // The Euler direction does not involve H: the same in every mode.
        assert_eq!(eu_stage, eu_dd);
        assert_eq!(eu_stage, eu_ad);
    }
    // Before the zone of the adaptive rule (τ < −1) the adaptive mode stays in double.
    let taus = vec![C64::new(-3.0, 0.0); count];
    let (_, ne_ad) = directions(&mut b, &ys, &taus, Residual::Adaptive);
    assert_eq!(ne_ad, reference_newton(&mut b, &layout, &ys, &taus, false));
}
