//! The batched GEMM evaluator against direct differentiation, and the direct formula
//! against finite differences: `[∂H/∂y, ∂H/∂τ, H]` up to each equation's positive scale.

use num_complex::Complex64 as C64;
use pathtrack::backend::{cpu::CpuBackend, Backend};
use pathtrack::eval::{cpu as eval_cpu, EvalLayout, Points};
use rand::{Rng, SeedableRng};

mod common_random;
use common_random::{random_homotopy, rc};

/// Compares two extended-Jacobian rows up to a positive factor: returns the relative error
/// after fitting the factor on the row.
fn rel_err_up_to_scale(gemm: &[C64], direct: &[C64]) -> f64 {
    let num: C64 = gemm.iter().zip(direct).map(|(g, d)| g * d.conj()).sum();
    let den: f64 = direct.iter().map(|d| d.norm_sqr()).sum();
    let scale = num / den;
    assert!(
        scale.re > 0.0 && scale.im.abs() < 1e-9 * scale.re,
        "scale {scale}"
    );
    let err: f64 = gemm
        .iter()
        .zip(direct)
        .map(|(g, d)| (g - d * scale).norm_sqr())
        .sum();
    (err / (den * scale.norm_sqr())).sqrt()
}

#[test]
fn gemm_evaluator_matches_direct_evaluation() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for trial in 0..20 {
        let n = rng.random_range(1..7);
        let h = random_homotopy(&mut rng, n, trial % 2 == 1);
        let layout = EvalLayout::new(&h);
        let p = rng.random_range(1..70);
        let nh = n + 1;
        let ys: Vec<C64> = (0..p * nh).map(|_| rc(&mut rng)).collect();
        let taus: Vec<C64> = (0..p)
            .map(|_| C64::new(-rng.random::<f64>() * 3.0, 0.0))
            .collect();
        let mut out = vec![C64::new(f64::NAN, 0.0); p * layout.ext_len()];
        let mut s = eval_cpu::Scratch::default();
        eval_cpu::extended_jacobians(&layout, &Points::projective(&ys, &taus), &mut out, &mut s);
        let w = nh + 2;
        for i in 0..p {
            let d = h.extended_jacobian_direct(&ys[i * nh..(i + 1) * nh], taus[i]);
            for k in 0..n {
                let g = &out[i * layout.ext_len() + k * w..i * layout.ext_len() + (k + 1) * w];
                let e = rel_err_up_to_scale(g, &d[k]);
                assert!(e < 1e-12, "trial {trial} point {i} eq {k}: rel err {e}");
            }
        }
    }
}

#[test]
fn direct_derivatives_match_finite_differences() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let n = 3;
    let h = random_homotopy(&mut rng, n, false);
    let y: Vec<C64> = (0..n + 1).map(|_| rc(&mut rng)).collect();
    let tau = C64::new(-0.7, 0.0);
    let d = h.extended_jacobian_direct(&y, tau);
    let eps = 1e-6;
    for j in 0..=n {
        let mut yp = y.clone();
        let mut ym = y.clone();
        yp[j] += eps;
        ym[j] -= eps;
        let (fp, fm) = (
            h.extended_jacobian_direct(&yp, tau),
            h.extended_jacobian_direct(&ym, tau),
        );
        for k in 0..n {
            let fd = (fp[k][n + 2] - fm[k][n + 2]) / (2.0 * eps);
            assert!((fd - d[k][j]).norm() < 1e-6 * (1.0 + d[k][j].norm()));
        }
    }
    let (fp, fm) = (
        h.extended_jacobian_direct(&y, tau + eps),
        h.extended_jacobian_direct(&y, tau - eps),
    );
    for k in 0..n {
        let fd = (fp[k][n + 2] - fm[k][n + 2]) / (2.0 * eps);
        assert!((fd - d[k][n + 1]).norm() < 1e-6 * (1.0 + d[k][n + 1].norm()));
    }
}

#[test]
fn directions_satisfy_the_unified_system() {
    // E and N from the backend: J_y E = −∂H/∂τ, J_y N = −H, y*E = y*N = 0 (per equation scale).
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let n = 4;
    let h = random_homotopy(&mut rng, n, false);
    let p = 100;
    let nh = n + 1;
    let ys: Vec<C64> = (0..p * nh).map(|_| rc(&mut rng)).collect();
    let taus: Vec<C64> = (0..p)
        .map(|_| C64::new(-rng.random::<f64>(), 0.0))
        .collect();
    let mut b = CpuBackend::new(2).unwrap();
    b.set_homotopy(&h).unwrap();
    let (mut eu, mut ne, mut co) = (
        vec![C64::new(0.0, 0.0); p * nh],
        vec![C64::new(0.0, 0.0); p * nh],
        vec![0.0; p],
    );
    b.directions(
        &Points::projective(&ys, &taus),
        pathtrack::backend::DirectionsOut {
            euler: &mut eu,
            newton: &mut ne,
            cond: &mut co,
        },
    )
    .unwrap();
    for i in 0..p {
        let y = &ys[i * nh..(i + 1) * nh];
        let d = h.extended_jacobian_direct(y, taus[i]);
        let (e, nw) = (&eu[i * nh..(i + 1) * nh], &ne[i * nh..(i + 1) * nh]);
        for k in 0..n {
            let scale: f64 = d[k][..nh].iter().map(|z| z.norm()).fold(0.0, f64::max);
            let je: C64 = (0..nh).map(|j| d[k][j] * e[j]).sum::<C64>() + d[k][nh];
            let jn: C64 = (0..nh).map(|j| d[k][j] * nw[j]).sum::<C64>() + d[k][nh + 1];
            let tol = 1e-10 * co[i] * (scale + d[k][nh].norm() + d[k][nh + 1].norm());
            assert!(
                je.norm() < tol && jn.norm() < tol,
                "point {i} eq {k}: {je} {jn} cond {}",
                co[i]
            );
        }
        let ye: C64 = y.iter().zip(e).map(|(a, b)| a.conj() * b).sum();
        let yn: C64 = y.iter().zip(nw).map(|(a, b)| a.conj() * b).sum();
        assert!(ye.norm() < 1e-10 * co[i] && yn.norm() < 1e-10 * co[i]);
    }
}

#[test]
fn log_mode_points_give_derivatives_in_z() {
    // ∂h/∂z_j = y_j ∂h/∂y_j: a point given as z = log y in log mode must produce the
    // projective row times diag(y) (same per-equation scale).
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
    let n = 4;
    let h = random_homotopy(&mut rng, n, true);
    let layout = EvalLayout::new(&h);
    let nh = n + 1;
    let p = 9;
    let ys: Vec<C64> = (0..p * nh).map(|_| rc(&mut rng)).collect();
    let zs: Vec<C64> = ys.iter().map(|y| y.ln()).collect();
    let taus: Vec<C64> = (0..p)
        .map(|_| C64::new(-rng.random::<f64>(), 0.0))
        .collect();
    let mut out = vec![C64::new(f64::NAN, 0.0); p * layout.ext_len()];
    let mut s = eval_cpu::Scratch::default();
    let modes: Vec<bool> = (0..p).map(|i| i % 2 == 0).collect();
    let pts: Vec<C64> = (0..p * nh)
        .map(|k| if modes[k / nh] { zs[k] } else { ys[k] })
        .collect();
    eval_cpu::extended_jacobians(
        &layout,
        &Points {
            ys: &pts,
            taus: &taus,
            log_mode: Some(&modes),
            lifts: None,
            residual: None,
        },
        &mut out,
        &mut s,
    );
    let w = nh + 2;
    for i in 0..p {
        let y = &ys[i * nh..(i + 1) * nh];
        let d = h.extended_jacobian_direct(y, taus[i]);
        for k in 0..n {
            let mut want = d[k].clone();
            if modes[i] {
                for j in 0..nh {
                    want[j] *= y[j];
                }
            }
            let g = &out[i * layout.ext_len() + k * w..i * layout.ext_len() + (k + 1) * w];
            assert!(rel_err_up_to_scale(g, &want) < 1e-12, "point {i} eq {k}");
        }
    }
}

#[test]
fn per_point_lifts_replace_the_homotopy_lifts() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(33);
    let n = 3;
    let h = random_homotopy(&mut rng, n, false);
    let layout = EvalLayout::new(&h);
    let (nh, m, p) = (n + 1, h.term_count(), 7);
    let ys: Vec<C64> = (0..p * nh).map(|_| rc(&mut rng)).collect();
    let taus: Vec<C64> = (0..p)
        .map(|_| C64::new(-rng.random::<f64>() * 4.0, 0.0))
        .collect();
    let lifts: Vec<f64> = (0..p * m).map(|_| rng.random::<f64>() * 3.0).collect();
    let mut out = vec![C64::new(f64::NAN, 0.0); p * layout.ext_len()];
    let mut s = eval_cpu::Scratch::default();
    let pts = Points {
        ys: &ys,
        taus: &taus,
        log_mode: None,
        lifts: Some(&lifts),
        residual: None,
    };
    eval_cpu::extended_jacobians(&layout, &pts, &mut out, &mut s);
    let w = nh + 2;
    for i in 0..p {
        // the same homotopy with point i's lifts substituted, evaluated directly
        let mut hi = h.clone();
        let mut c = 0;
        for eq in hi.equations.iter_mut() {
            for t in eq.iter_mut() {
                t.lift = lifts[i * m + c];
                c += 1;
            }
        }
        let d = hi.extended_jacobian_direct(&ys[i * nh..(i + 1) * nh], taus[i]);
        for k in 0..n {
            let g = &out[i * layout.ext_len() + k * w..i * layout.ext_len() + (k + 1) * w];
            assert!(rel_err_up_to_scale(g, &d[k]) < 1e-12, "point {i} eq {k}");
        }
    }
}
