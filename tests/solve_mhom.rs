//! The linear-product (m-hom) start: a random bilinear system in groups of sizes (2, 2) has
//! C(4, 2) = 6 solutions; `--start mhom` tracks exactly 6 paths to them, while the total
//! degree start tracks 2^4 = 16 paths for the same set.

use pathtrack::post::Status;
use pathtrack::solver::{solve_cpu, StartKind};
use pathtrack::system::parse_str;
use rand::{Rng, SeedableRng};

fn bilinear() -> pathtrack::system::System {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    let mut c = || {
        format!(
            "({:.6}{:+.6}*i)",
            rng.random::<f64>() - 0.5,
            rng.random::<f64>() - 0.5
        )
    };
    let eqs: Vec<String> = (0..4)
        .map(|_| {
            let mut t = Vec::new();
            for x in ["x1", "x2"] {
                for y in ["y1", "y2"] {
                    t.push(format!("{}*{x}*{y}", c()));
                }
            }
            for v in ["x1", "x2", "y1", "y2"] {
                t.push(format!("{}*{v}", c()));
            }
            t.push(c());
            format!("  - \"{}\"", t.join(" + "))
        })
        .collect();
    let text = format!(
        "variables: [x1, x2, y1, y2]\nequations:\n{}\n",
        eqs.join("\n")
    );
    parse_str(&text, "bilinear").unwrap()
}

fn solutions(start: StartKind) -> (u64, Vec<Vec<num_complex::Complex64>>) {
    let (s, eps) = solve_cpu(&bilinear(), start, 3).unwrap();
    assert_eq!(s.failed, 0);
    let xs = eps
        .into_iter()
        .filter(|e| e.status == Status::Nonsingular)
        .map(|e| e.coordinates.unwrap())
        .collect();
    (s.paths, xs)
}

#[test]
fn mhom_start_tracks_the_bezout_number_of_paths_to_all_solutions() {
    let (mp, m) = solutions(StartKind::Mhom);
    let (tp, t) = solutions(StartKind::TotalDegree);
    assert_eq!(mp, 6);
    assert_eq!(tp, 16);
    assert_eq!(m.len(), 6);
    assert_eq!(t.len(), 6);
    for x in &m {
        let hits = t
            .iter()
            .filter(|y| x.iter().zip(y.iter()).all(|(a, b)| (a - b).norm() < 1e-8))
            .count();
        assert_eq!(
            hits, 1,
            "m-hom solution {x:?} not found once by the total-degree start"
        );
    }
}
