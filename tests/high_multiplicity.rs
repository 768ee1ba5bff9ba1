//! Roots of multiplicity beyond what the local dimension test can tell from a curve
//! (`post::local_dimension::decides`): the expanded `(x − 1)^μ` with `x + 2y − 3`, one
//! isolated solution `(1, 1)` of multiplicity μ. Double precision sees a disc of radius about
//! `(2^μ·ε)^{1/μ}` ≈ 0.6 of numerical roots around it, and double-double one of about 0.3 at
//! the test's residual: samples on hyperplanes 0.1 away were confirmed, and μ = 29, 30 gave
//! 28–29 paths labelled positive-dimensional.

use pathtrack::post::Status;
use pathtrack::solver::{solve_cpu, StartKind};
use pathtrack::system::parse_str;

/// `(x − 1)^mu` expanded (exact binomial coefficients, below 2^53) and `x + 2y − 3`.
fn power_and_line(mu: u32) -> pathtrack::system::System {
    let binom = |k: u32| (1..=k).fold(1u128, |a, i| a * (mu - k + i) as u128 / i as u128);
    let terms: Vec<String> = (0..=mu)
        .map(|k| {
            let sign = if (mu - k) % 2 == 0 { "" } else { "-" };
            format!("{sign}{}*x^{k}", binom(k))
        })
        .collect();
    let text = format!(
        "name: power{mu}\nvariables: [x, y]\nequations:\n  - \"{}\"\n  - \"x + 2*y - 3\"\n",
        terms.join(" + ")
    );
    parse_str(&text, "power.yaml").unwrap()
}

/// The radius `(2^μ·ε)^{1/μ}` of the disc around 1 where the expanded `(x − 1)^μ` is zero to
/// double precision's rounding (its terms' moduli sum to about 2^μ there).
fn disc(mu: u32) -> f64 {
    (2f64.powi(mu as i32) * f64::EPSILON).powf(1.0 / mu as f64)
}

/// Solved from the default start, seed `seed`: no path is called positive-dimensional or
/// failed, and the largest cluster, of at least μ − 1 paths, is singular, on the line, and
/// represented by a point inside the disc around (1, 1) ([`disc`], ≈ 0.58).
fn one_cluster_and_no_curve(mu: u32, seed: u64) -> pathtrack::report::Summary {
    let sys = power_and_line(mu);
    let (s, _) = solve_cpu(&sys, StartKind::Auto, seed).unwrap();
    let what = format!("(x − 1)^{mu} seed {seed}: {s:?}");
    assert_eq!(s.paths, mu as u64, "{what}");
    assert_eq!((s.positive_dimensional, s.failed), (0, 0), "{what}");
    let big = s
        .solutions
        .iter()
        .max_by_key(|c| c.paths.len())
        .expect("a solution");
    assert!(big.paths.len() as u32 >= mu - 1, "{what}");
    assert_eq!(big.status, Status::Singular, "{what}");
    let x = &big.coordinates;
    assert!((x[0] + 2.0 * x[1] - 3.0).norm() < 1e-6, "{what}");
    assert!((x[0] - 1.0).norm() < disc(mu), "{what}");
    s
}

/// Before `local_dimension::decides`, samples 0.09 from the root (relative residual 1e-39)
/// were confirmed and 28–29 of the paths were called positive-dimensional.
#[test]
fn roots_of_multiplicity_29_and_30_with_a_second_equation_are_no_curve() {
    one_cluster_and_no_curve(29, 1);
    one_cluster_and_no_curve(30, 2);
}

/// The whole truth: one singular solution of multiplicity μ, every path's endpoint inside
/// the disc. Open: in 5 of 6 runs (μ = 29, 30, seeds 1–3) one path that failed in every
/// recovery round is settled on the last attempt as a singular solution at x ≈ 4–5, where
/// the relative residual of the expanded power, `(|x − 1|/(|x| + 1))^μ` ≈ 4e-7, is below the
/// settling bound at a full-rank Jacobian; and the endpoints of the large cluster lie up to
/// |x − 1| ≈ 3 from the root, far outside the disc, merged by their error estimates (0.5).
#[test]
#[ignore = "open: failed paths settled as singular far from the root (post::Refiner, last attempt)"]
fn roots_of_multiplicity_29_and_30_with_a_second_equation_are_one_solution() {
    for (mu, seed) in [(29, 1), (30, 2)] {
        let sys = power_and_line(mu);
        let (s, eps) = solve_cpu(&sys, StartKind::Auto, seed).unwrap();
        assert_eq!(
            (s.finite, s.singular),
            (1, 1),
            "(x − 1)^{mu} seed {seed}: {s:?}"
        );
        assert_eq!(s.solutions[0].paths.len(), mu as usize);
        for e in &eps {
            let x = e.coordinates.as_ref().expect("finite");
            assert!(
                (x[0] - 1.0).norm() < disc(mu),
                "path {} at {}",
                e.path,
                x[0]
            );
        }
    }
}
