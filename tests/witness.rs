//! Witness sets, the numerical irreducible decomposition and membership on solution sets
//! known in closed form; overdetermined and underdetermined systems in `solve`.

use pathtrack::backend::cpu::CpuBackend;
use pathtrack::solver::{SolveOptions, StartKind};
use pathtrack::system::System;
use pathtrack::witness::compute::witness_sets;
use pathtrack::witness::decompose::{
    decompose_set, isolated_components, Component, DecomposeOptions,
};
use pathtrack::witness::membership::{on_set, on_set_by_all_points, on_set_by_one_path};
use pathtrack::witness::moving::Mover;
use pathtrack::witness::sets::{DimensionReport, Method, WitnessOptions};
use pathtrack::witness::WitnessSet;
use pathtrack::C64;
use std::process::Command;

fn system(text: &str, name: &str) -> System {
    pathtrack::system::parse::parse_str_rectangular(text, name).unwrap()
}

fn sphere_and_plane() -> System {
    system(
        "variables: [x, y, z]\nequations: ['x^2 + y^2 + z^2 - 1', 'z - 0.5']",
        "sphere",
    )
}

fn twisted_cubic() -> System {
    system(
        "variables: [x, y, z]\nequations: ['y - x^2', 'z - x*y', 'x*z - y^2']",
        "cubic",
    )
}

/// `{z = 0} ∪ {x = y = 0}` in C^3.
fn line_and_plane() -> System {
    system(
        "variables: [x, y, z]\nequations: ['x*z', 'y*z']",
        "lineplane",
    )
}

fn opts(seed: u64) -> WitnessOptions {
    WitnessOptions {
        method: Method::Cascade,
        seed,
        top: None,
        lowest: 0,
        solve: SolveOptions {
            start: StartKind::Auto,
            seed,
            threads: 2,
            ..Default::default()
        },
    }
}

/// The witness sets and the decomposition of every dimension (isolated points as
/// components of dimension 0), for `seed`, by the cascade.
fn decompose(sys: &System, seed: u64) -> (Vec<WitnessSet>, Vec<DimensionReport>, Vec<Component>) {
    decompose_by(sys, seed, Method::Cascade)
}

/// [`decompose`] with the witness sets found by `method`.
fn decompose_by(
    sys: &System,
    seed: u64,
    method: Method,
) -> (Vec<WitnessSet>, Vec<DimensionReport>, Vec<Component>) {
    let mut backend = CpuBackend::new(2).unwrap();
    let o = WitnessOptions {
        method,
        ..opts(seed)
    };
    let (sets, reports) = witness_sets(sys, &o, &mut backend, &mut |_| {}).unwrap();
    let mut components = Vec::new();
    for w in &sets {
        if w.dimension == 0 {
            components.extend(isolated_components(w));
            continue;
        }
        let mut mover = Mover::new(
            w.randomization.apply(sys),
            sys.variables.clone(),
            o.solve.tracker.clone(),
            &mut backend,
        );
        let d = DecomposeOptions {
            seed,
            ..Default::default()
        };
        components.extend(decompose_set(&mut mover, w, &d).unwrap().0);
    }
    (sets, reports, components)
}

/// Every witness point solves the system and lies on its slices.
fn check_points(sys: &System, sets: &[WitnessSet]) {
    for w in sets {
        for p in &w.points {
            assert!(sys.relative_residual(p) < 1e-10, "F at {p:?}");
            for v in w.slices.eval(p) {
                assert!(v.norm() < 1e-9 * (1.0 + p.iter().map(|z| z.norm()).sum::<f64>()));
            }
        }
    }
}

fn degrees(sets: &[WitnessSet]) -> Vec<(usize, usize)> {
    sets.iter().map(|w| (w.dimension, w.degree())).collect()
}

/// (dimension, degree, multiplicity, certified) of each component.
fn shape(cs: &[Component]) -> Vec<(usize, usize, usize, bool)> {
    cs.iter()
        .map(|c| (c.dimension, c.degree, c.multiplicity, c.certified))
        .collect()
}

#[test]
fn sphere_cut_by_a_plane_is_one_conic() {
    let sys = sphere_and_plane();
    let (sets, _, comps) = decompose(&sys, 1);
    check_points(&sys, &sets);
    assert_eq!(degrees(&sets), vec![(2, 0), (1, 2)]);
    assert_eq!(shape(&comps), vec![(1, 2, 1, true)]);
    // The witness points lie on the circle z = 1/2, x² + y² = 3/4.
    for p in &sets[1].points {
        assert!((p[2] - C64::new(0.5, 0.0)).norm() < 1e-12);
    }
}

#[test]
fn twisted_cubic_from_three_quadrics() {
    let sys = twisted_cubic();
    // The cascade: three equations in three unknowns, R·F = F, so no candidate solves R·F
    // only; every solution of a level is a witness point, junk or a nonsolution.
    let (sets, reports, comps) = decompose(&sys, 1);
    check_points(&sys, &sets);
    assert_eq!(degrees(&sets), vec![(2, 0), (1, 3), (0, 0)]);
    assert_eq!(shape(&comps), vec![(1, 3, 1, true)]);
    for r in &reports {
        assert_eq!(r.excess, 0, "{r:?}");
        assert_eq!(r.finite, r.degree + r.junk + r.nonsolutions, "{r:?}");
    }
    // Dimension by dimension: two random combinations of the quadrics meet in the cubic and
    // a line, and the line's point on the slice solves R·F only.
    let (sets, reports, comps) = decompose_by(&sys, 1, Method::Dimensions);
    assert_eq!(degrees(&sets), vec![(2, 0), (1, 3), (0, 0)]);
    assert_eq!(shape(&comps), vec![(1, 3, 1, true)]);
    assert_eq!((reports[1].finite, reports[1].excess), (4, 1));
    // F itself: its 4 paths end on the curve, all junk at dimension 0.
    assert_eq!(reports[2].junk, reports[2].finite);
    assert!(reports[2].junk > 0);
}

#[test]
fn line_and_plane_split_by_dimension() {
    let sys = line_and_plane();
    let (sets, reports, comps) = decompose(&sys, 1);
    check_points(&sys, &sets);
    assert_eq!(degrees(&sets), vec![(2, 1), (1, 1)]);
    assert_eq!(shape(&comps), vec![(2, 1, 1, true), (1, 1, 1, true)]);
    // The plane's witness point has z = 0, the line's x = y = 0 (and z ≠ 0).
    let plane = &sets[0].points[0];
    assert!(plane[2].norm() < 1e-12, "{plane:?}");
    let line = &sets[1].points[0];
    assert!(line[0].norm() < 1e-12 && line[1].norm() < 1e-12 && line[2].norm() > 1e-3);
    // The cascade's level 1 tracks E_2's two nonsolutions: one ends at the line's point, the
    // other on the line {z = 0} ∩ L_1 of the plane, a singular point that membership in the
    // plane's witness set removes as junk.
    let r = &reports[1];
    assert_eq!(
        (r.paths, r.finite, r.junk, r.degree, r.nonsolutions),
        (2, 2, 1, 1, 0),
        "{r:?}"
    );
    // Dimension by dimension, the slice of dimension 1 meets the plane in a line too: its
    // second path ends on that line (a finite singular point, not a diverging path, however
    // its endgame samples drift along it), which membership in the plane removes as junk.
    let (sets, reports, comps) = decompose_by(&sys, 1, Method::Dimensions);
    assert_eq!(degrees(&sets), vec![(2, 1), (1, 1)]);
    assert_eq!(shape(&comps), vec![(2, 1, 1, true), (1, 1, 1, true)]);
    let r = &reports[1];
    assert_eq!((r.paths, r.finite, r.junk, r.degree), (2, 2, 1, 1), "{r:?}");
}

/// The cascade and the dimension-by-dimension method find the same witness degrees and the
/// same components; the cascade solves one start system, for the top dimension.
#[test]
fn cascade_and_dimensions_agree() {
    let lines = system("variables: [x, y, z]\nequations: ['x*y', 'z - 1']", "lines");
    let double = system("variables: [x, y]\nequations: ['x^2']", "double");
    let family = |name: &str| pathtrack::system::families::by_name(name).unwrap().unwrap();
    let systems = [
        sphere_and_plane(),
        twisted_cubic(),
        line_and_plane(),
        lines,
        double,
        family("cyclic4"),
        family("cyclic5"),
    ];
    for sys in &systems {
        let (a_sets, a_reports, a) = decompose_by(sys, 1, Method::Cascade);
        let (b_sets, _, b) = decompose_by(sys, 1, Method::Dimensions);
        check_points(sys, &a_sets);
        assert_eq!(degrees(&a_sets), degrees(&b_sets), "{}", sys.name);
        assert_eq!(shape(&a), shape(&b), "{}", sys.name);
        // Below the top dimension the cascade tracks only the nonsolutions of the level
        // above.
        for w in a_reports.windows(2) {
            assert_eq!(w[1].paths, w[0].nonsolutions as u64, "{}: {w:?}", sys.name);
        }
    }
}

#[test]
fn cyclic4_curve_has_two_conics() {
    // cyclic-4: its solution set is a curve of degree 4, two irreducible conics.
    let sys = pathtrack::system::families::by_name("cyclic4")
        .unwrap()
        .unwrap();
    let (sets, _, comps) = decompose(&sys, 1);
    check_points(&sys, &sets);
    assert_eq!(degrees(&sets), vec![(3, 0), (2, 0), (1, 4), (0, 0)]);
    assert_eq!(shape(&comps), vec![(1, 2, 1, true), (1, 2, 1, true)]);
}

#[test]
fn two_lines_and_a_double_line() {
    let lines = system("variables: [x, y, z]\nequations: ['x*y', 'z - 1']", "lines");
    let (sets, _, comps) = decompose(&lines, 1);
    check_points(&lines, &sets);
    assert_eq!(shape(&comps), vec![(1, 1, 1, true), (1, 1, 1, true)]);
    // x² = 0 in C²: the line x = 0 with multiplicity 2.
    let double = system("variables: [x, y]\nequations: ['x^2']", "double");
    let (sets, _, comps) = decompose(&double, 1);
    assert_eq!(degrees(&sets), vec![(1, 1)]);
    assert_eq!(shape(&comps), vec![(1, 1, 2, true)]);
}

#[test]
fn same_seed_same_decomposition() {
    let sys = pathtrack::system::families::by_name("cyclic4")
        .unwrap()
        .unwrap();
    let (a_sets, _, a) = decompose(&sys, 7);
    let (b_sets, _, b) = decompose(&sys, 7);
    assert_eq!(a_sets, b_sets);
    assert_eq!(a, b);
    // Another seed: other slices and points, the same components.
    let (c_sets, _, c) = decompose(&sys, 8);
    assert_ne!(a_sets[2].points, c_sets[2].points);
    assert_eq!(shape(&a), shape(&c));
}

#[test]
fn membership_names_dimension_and_component() {
    let mut backend = CpuBackend::new(2).unwrap();
    // Line ∪ plane: (0, 0, 5) is on the line only, (1, 2, 0) on the plane, (1, 0, 1) on
    // neither although... it is no solution at all; (1e-3, 0, 5) is near the line.
    let sys = line_and_plane();
    let o = opts(3);
    let (sets, _) = witness_sets(&sys, &o, &mut backend, &mut |_| {}).unwrap();
    let c = |v: &[f64]| v.iter().map(|&x| C64::new(x, 0.0)).collect::<Vec<_>>();
    let mut on = |p: &[C64]| -> Vec<bool> {
        sets.iter()
            .map(|w| {
                let mut m = Mover::new(
                    w.randomization.apply(&sys),
                    sys.variables.clone(),
                    o.solve.tracker.clone(),
                    &mut backend,
                );
                on_set(&mut m, w, p, 3).unwrap().is_some()
            })
            .collect()
    };
    assert_eq!(on(&c(&[0.0, 0.0, 5.0])), vec![false, true]);
    assert_eq!(on(&c(&[1.0, 2.0, 0.0])), vec![true, false]);
    assert_eq!(on(&c(&[0.0, 0.0, 0.0])), vec![true, true]);

    // cyclic-4: a point of one conic is reached from a witness point of that conic.
    let sys = pathtrack::system::families::by_name("cyclic4")
        .unwrap()
        .unwrap();
    let (sets, _, comps) = decompose(&sys, 1);
    let w = sets.iter().find(|w| w.dimension == 1).unwrap();
    let mut mover = Mover::new(
        w.randomization.apply(&sys),
        sys.variables.clone(),
        o.solve.tracker.clone(),
        &mut backend,
    );
    // Points of the components elsewhere: the witness points moved to other slices.
    let mut r = pathtrack::witness::rng(99, pathtrack::witness::Stream::Membership);
    let other = pathtrack::witness::slices::Slices::random(1, 4, &mut r);
    let moved = mover
        .move_points(&w.slices, &other, C64::new(0.6, 0.8), &w.points)
        .unwrap();
    for (i, m) in moved.iter().enumerate() {
        let p = m.x.as_ref().expect("moved point");
        let comp_of = |k: usize| comps.iter().position(|c| c.points.contains(&k));
        // All witness points moved to slices through p, and p alone moved back: both
        // reach p's component.
        let all = on_set_by_all_points(&mut mover, w, p, 5)
            .unwrap()
            .expect("on the curve");
        assert_eq!(
            comp_of(all),
            comp_of(i),
            "point {i} reached from witness point {all}"
        );
        let one = on_set_by_one_path(&mut mover, w, p, 5)
            .unwrap()
            .expect("one path");
        assert_eq!(one, i, "point {i} moved back");
        assert_eq!(on_set(&mut mover, w, p, 5).unwrap(), Some(one));
    }
    // Near the curve, off it.
    let p = &moved[0].x.clone().unwrap();
    let q: Vec<C64> = p.iter().map(|z| z * C64::new(1.01, 0.0)).collect();
    assert!(on_set(&mut mover, w, &q, 5).unwrap().is_none());
}

/// A point where two planes cross (`z·(x − y) = 0`), known to 1e-4 only, as the endpoint of
/// a path that ends on a positive-dimensional solution set is there: the witness points
/// moved to the slices through it land on the planes 1e-4 away, beyond the matching
/// tolerance, yet it is on the set. Moved onto `V(F)` first, it is recognized; points off
/// the set by a coefficient's size are not.
#[test]
fn a_point_known_to_1e_4_where_two_planes_cross_is_on_them() {
    let sys = system("variables: [x, y, z]\nequations: ['z*(x - y)']", "planes");
    let mut backend = CpuBackend::new(2).unwrap();
    let o = opts(2);
    let (sets, _) = witness_sets(&sys, &o, &mut backend, &mut |_| {}).unwrap();
    assert_eq!(degrees(&sets), vec![(2, 2)]);
    let w = &sets[0];
    let mut mover = Mover::new(
        w.randomization.apply(&sys),
        sys.variables.clone(),
        o.solve.tracker.clone(),
        &mut backend,
    );
    let off = [C64::new(0.3, 0.2), C64::new(-0.7, 0.0), C64::new(0.0, 0.5)];
    for (k, base) in [[1.0, 1.0, 0.0], [-2.0, -2.0, 0.0], [0.5, 0.5, 0.0]]
        .iter()
        .enumerate()
    {
        let p: Vec<C64> = base
            .iter()
            .zip(&off)
            .map(|(&b, &d)| C64::new(b, 0.0) + 1e-4 * d)
            .collect();
        assert!(sys.relative_residual(&p) < 1e-7, "p is a zero to 1e-7");
        // The witness points moved to the slices through p miss it by ~1e-4.
        let through =
            pathtrack::witness::slices::Slices::through(w.slices.coefficients.clone(), &p);
        let moved = mover
            .move_points(&w.slices, &through, C64::new(0.6, 0.8), &w.points)
            .unwrap();
        for m in &moved {
            let x = m.x.as_ref().expect("moved point");
            let d = pathtrack::witness::moving::relative_distance(x, &p);
            assert!(d > 1e-6, "case {k}: {d}");
        }
        assert!(
            on_set_by_all_points(&mut mover, w, &p, 4)
                .unwrap()
                .is_some(),
            "case {k}"
        );
        assert!(on_set(&mut mover, w, &p, 4).unwrap().is_some(), "case {k}");
        let fixed = System {
            equations: mover.fixed.clone(),
            ..sys.clone()
        };
        let q = pathtrack::witness::membership::onto_zeros(&fixed, &p);
        assert!(sys.relative_residual(&q) < 1e-14, "case {k}: {q:?}");
        assert!(pathtrack::witness::moving::relative_distance(&q, &p) < 1e-3);
    }
    // Off the planes by 0.01 in z: no zero, no member.
    let p = [C64::new(1.0, 0.0), C64::new(2.0, 0.0), C64::new(0.01, 0.0)];
    assert!(on_set(&mut mover, w, &p, 4).unwrap().is_none());
}

/// cyclic-9's surface near infinity, where coordinates of size 40 and 1e-3 meet: the slices
/// through such a point cut the surface at a small angle (condition numbers 1e10–1e13), so
/// the witness point moved there lands 1e-5 from it, and some of those paths fail on their
/// first try. These points (endpoints of the cascade's level 1 on the H200) are on the
/// surface; cyclic-9's isolated singular solutions (multiplicity 4) are not.
/// Data: `tests/data/cyclic9_surface.json`.
#[test]
fn points_of_cyclic9s_surface_near_infinity_are_on_it() {
    let sys = pathtrack::system::families::by_name("cyclic9")
        .unwrap()
        .unwrap();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/cyclic9_surface.json"
    );
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let file: pathtrack::witness::file::WitnessFile =
        serde_json::from_value(data["witness"].clone()).unwrap();
    let w = &file.sets[0];
    assert_eq!((w.dimension, w.degree()), (2, 18));
    let points = |key: &str| -> Vec<Vec<C64>> {
        serde_json::from_value::<Vec<Vec<[f64; 2]>>>(data[key].clone())
            .unwrap()
            .into_iter()
            .map(|p| p.into_iter().map(|[re, im]| C64::new(re, im)).collect())
            .collect()
    };
    let mut backend = CpuBackend::new(2).unwrap();
    let mut mover = Mover::new(
        w.randomization.apply(&sys),
        sys.variables.clone(),
        opts(1).solve.tracker.clone(),
        &mut backend,
    );
    let on_surface = points("on_surface");
    let isolated = points("isolated");
    assert!(on_surface.len() >= 8 && isolated.len() >= 6);
    for (k, p) in on_surface.iter().enumerate() {
        let spread = p.iter().map(|z| z.norm()).fold(0.0, f64::max)
            / p.iter().map(|z| z.norm()).fold(f64::INFINITY, f64::min);
        assert!(spread > 1e3, "point {k} is near infinity");
        assert!(on_set(&mut mover, w, p, 1).unwrap().is_some(), "point {k}");
    }
    for (k, p) in isolated.iter().enumerate() {
        assert!(
            on_set(&mut mover, w, p, 1).unwrap().is_none(),
            "isolated {k}"
        );
    }
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pathtrack"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn temp(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pathtrack-witness-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn json_of(args: &[&str]) -> serde_json::Value {
    let out = bin().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Three equations in two unknowns with the solutions ±(1, 2): two random combinations have
/// four, two of them excess.
#[test]
fn overdetermined_solve_drops_excess_solutions() {
    let f = temp(
        "over.yaml",
        "variables: [x, y]\nequations: ['x^2 - 1', 'y^2 - 4', 'x*y - 2']\n",
    );
    let sols = f.with_file_name("over-sols.jsonl");
    let s = json_of(&[
        "solve",
        f.to_str().unwrap(),
        "--json",
        "-q",
        "--solutions",
        sols.to_str().unwrap(),
    ]);
    assert_eq!(s["equations"], 3);
    assert_eq!(s["paths"], 4);
    assert_eq!(s["finite"], 2);
    assert_eq!(s["excess"], 2);
    let text = std::fs::read_to_string(&sols).unwrap();
    let mut found: Vec<(f64, f64)> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let c = &v["coordinates"];
            (c[0][0].as_f64().unwrap(), c[1][0].as_f64().unwrap())
        })
        .collect();
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(found.len(), 2);
    for ((x, y), (ex, ey)) in found.iter().zip([(-1.0, -2.0), (1.0, 2.0)]) {
        assert!(
            (x - ex).abs() < 1e-12 && (y - ey).abs() < 1e-12,
            "{found:?}"
        );
    }
}

#[test]
fn underdetermined_solve_points_to_witness() {
    let f = temp(
        "under.yaml",
        "variables: [x, y, z]\nequations: ['x*z', 'y*z']\n",
    );
    let out = bin()
        .args(["solve", f.to_str().unwrap(), "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("2 equations in 3 variables") && err.contains("pathtrack witness"),
        "{err}"
    );
}

/// `witness -o W`, then `decompose --witness W` and `member --witness W` reuse its slices.
#[test]
fn witness_file_is_reused() {
    let f = temp(
        "cubic.yaml",
        "variables: [x, y, z]\nequations: ['y - x^2', 'z - x*y', 'x*z - y^2']\n",
    );
    let w = f.with_file_name("cubic-witness.json");
    let (fs, ws) = (f.to_str().unwrap(), w.to_str().unwrap());
    let s = json_of(&["witness", fs, "--json", "-q", "-o", ws]);
    let dims: Vec<(u64, u64)> = s["dimensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["dimension"].as_u64().unwrap(),
                d["degree"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(dims, vec![(2, 0), (1, 3), (0, 0)]);
    let d = json_of(&["decompose", fs, "--witness", ws, "--json", "-q"]);
    assert_eq!(
        d["components"],
        serde_json::json!([{"dimension": 1, "degree": 3, "multiplicity": 1, "certified": true}])
    );
    // t = 0.3 − 0.7i on the cubic; then a point off it.
    let t = C64::new(0.3, -0.7);
    let p = [t, t * t, t * t * t];
    let arg: Vec<String> = p.iter().map(|z| format!("{}{:+}i", z.re, z.im)).collect();
    let m = json_of(&[
        "member",
        fs,
        "--witness",
        ws,
        "--point",
        &arg.join(","),
        "--json",
        "-q",
    ]);
    assert_eq!(m["member"], true);
    assert_eq!(m["dimension"], 1);
    let m = json_of(&[
        "member",
        fs,
        "--witness",
        ws,
        "--point",
        "1,1,2",
        "--json",
        "-q",
    ]);
    assert_eq!(m["member"], false);
    // A witness file of another system is refused, naming the file.
    let other = temp("other.yaml", "variables: [a, b]\nequations: ['a*b']\n");
    let out = bin()
        .args([
            "member",
            other.to_str().unwrap(),
            "--witness",
            ws,
            "--point",
            "0,0",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cubic-witness.json"));
}

/// cyclic-4 has no isolated solution: `solve` ends 16 paths at 8 singular points of its
/// curve. The solve's local dimension test counts them as positive-dimensional; with it
/// off (`PATHTRACK_LOCAL_DIMENSION=0`) they are singular solutions, and the curve's witness
/// file labels them all the same.
#[test]
fn solve_labels_points_of_the_curve() {
    let w = temp("c4-witness.json", "");
    let ws = w.to_str().unwrap();
    json_of(&["witness", "cyclic4", "--json", "-q", "-o", ws]);
    let untested = |args: &[&str]| -> serde_json::Value {
        let out = bin()
            .env("PATHTRACK_LOCAL_DIMENSION", "0")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let plain = untested(&["solve", "cyclic4", "--json", "-q"]);
    assert!(plain["singular"].as_u64().unwrap() > 0);
    assert_eq!(plain["positive_dimensional"], 0);
    let curve_paths = plain["paths"].as_u64().unwrap() - plain["at_infinity"].as_u64().unwrap();
    for s in [
        untested(&["solve", "cyclic4", "--json", "-q", "--witness", ws]),
        json_of(&["solve", "cyclic4", "--json", "-q"]),
        json_of(&["solve", "cyclic4", "--json", "-q", "--witness", ws]),
    ] {
        assert_eq!(s["positive_dimensional"], curve_paths);
        assert_eq!(
            (s["singular"].as_u64(), s["finite"].as_u64()),
            (Some(0), Some(0))
        );
    }
    // cyclic-5's 70 nonsingular solutions stay (its witness sets are empty above 0).
    let w5 = temp("c5-witness.json", "");
    let w5s = w5.to_str().unwrap();
    json_of(&["witness", "cyclic5", "--json", "-q", "-o", w5s]);
    let s = json_of(&["solve", "cyclic5", "--json", "-q", "--witness", w5s]);
    assert_eq!(
        (s["finite"].as_u64(), s["positive_dimensional"].as_u64()),
        (Some(70), Some(0))
    );
}

/// cyclic-8 (Björck–Fröberg; PHCpack's demonstration of `phc -c`): its one-dimensional part
/// has degree 144 and splits into 8 components of degree 16 and 8 of degree 2, besides 1,152
/// isolated solutions. About 2.5 minutes on 2 cores, so not in the default run:
/// `cargo test --release --test witness -- --ignored` (figures in docs/performance.md).
#[test]
#[ignore]
fn cyclic8_decomposition() {
    let sys = pathtrack::system::families::by_name("cyclic8")
        .unwrap()
        .unwrap();
    let mut backend = CpuBackend::new(0).unwrap();
    let o = WitnessOptions {
        top: Some(1),
        method: Method::Dimensions,
        ..opts(1)
    };
    let (sets, _) = witness_sets(&sys, &o, &mut backend, &mut |_| {}).unwrap();
    assert_eq!(degrees(&sets), vec![(1, 144), (0, 1152)]);
    check_points(&sys, &sets);
    let mut mover = Mover::new(
        sets[0].randomization.apply(&sys),
        sys.variables.clone(),
        o.solve.tracker.clone(),
        &mut backend,
    );
    let (comps, _) = decompose_set(&mut mover, &sets[0], &DecomposeOptions::default()).unwrap();
    let mut degs: Vec<usize> = comps.iter().map(|c| c.degree).collect();
    degs.sort_unstable();
    assert_eq!(degs, [vec![2; 8], vec![16; 8]].concat());
    assert!(comps.iter().all(|c| c.certified && c.multiplicity == 1));
}

/// cyclic-9: 6,156 isolated solutions (Faugère 2001) and a surface of degree 18 made of six
/// cubic surfaces. Backelin's lemma (3² divides 9) gives them in closed form: `x_{j+3} = ω x_j`
/// for a primitive cube root of unity `ω` (two choices) and `x_0 x_1 x_2 = c`, `c³ = 1`
/// (three): each witness point is checked against that form, and each component's three
/// points share `ω` and `c`. Minutes on 2 cores, so not in the default run (figures in
/// docs/performance.md).
#[test]
#[ignore]
fn cyclic9_decomposition() {
    let sys = pathtrack::system::families::by_name("cyclic9")
        .unwrap()
        .unwrap();
    let mut backend = CpuBackend::new(0).unwrap();
    let o = WitnessOptions {
        top: Some(2),
        method: Method::Dimensions,
        ..opts(1)
    };
    let (sets, _) = witness_sets(&sys, &o, &mut backend, &mut |_| {}).unwrap();
    assert_eq!(degrees(&sets), vec![(2, 18), (1, 0), (0, 6156)]);
    check_points(&sys, &sets);
    let mut mover = Mover::new(
        sets[0].randomization.apply(&sys),
        sys.variables.clone(),
        o.solve.tracker.clone(),
        &mut backend,
    );
    let (comps, _) = decompose_set(&mut mover, &sets[0], &DecomposeOptions::default()).unwrap();
    assert_eq!(shape(&comps), vec![(2, 3, 1, true); 6]);
    // (ω, c) of a point of the surface, each as the index k of e^{2πik/3}.
    let third = |z: C64| ((z.arg() / (std::f64::consts::TAU / 3.0)).round() as i64).rem_euclid(3);
    let form = |x: &[C64]| {
        let omega = x[3] / x[0];
        for j in 0..9 {
            assert!(
                (x[(j + 3) % 9] - omega * x[j]).norm() < 1e-10 * x[j].norm(),
                "{x:?}"
            );
        }
        assert!(
            (omega.powi(3) - 1.0).norm() < 1e-10 && third(omega) != 0,
            "{x:?}"
        );
        let c = x[0] * x[1] * x[2];
        assert!((c.powi(3) - 1.0).norm() < 1e-10, "{x:?}");
        (third(omega), third(c))
    };
    let mut seen = std::collections::BTreeSet::new();
    for comp in &comps {
        let keys: std::collections::BTreeSet<_> = comp
            .points
            .iter()
            .map(|&i| form(&sets[0].points[i]))
            .collect();
        assert_eq!(keys.len(), 1, "one (ω, c) per component");
        seen.extend(keys);
    }
    assert_eq!(seen.len(), 6, "six cubic surfaces: {seen:?}");
}

/// An overdetermined system in PHCpack's format (`N n` on the first line) solves as its YAML
/// does: the same paths, the same two solutions.
#[test]
fn overdetermined_phc_format_solves_like_yaml() {
    let yaml = temp(
        "over2.yaml",
        "variables: [x, y]\nequations: ['x^2 - 1', 'y^2 - 4', 'x*y - 2']\n",
    );
    let phc = temp("over2.phc", "3 2\nx**2 - 1;\ny**2 - 4;\nx*y - 2;\n");
    let run = |f: &std::path::Path| {
        let sols = f.with_extension("sols.jsonl");
        let s = json_of(&[
            "solve",
            f.to_str().unwrap(),
            "--json",
            "-q",
            "--solutions",
            sols.to_str().unwrap(),
        ]);
        let text = std::fs::read_to_string(&sols).unwrap();
        let mut found: Vec<(f64, f64)> = text
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                let c = &v["coordinates"];
                (c[0][0].as_f64().unwrap(), c[1][0].as_f64().unwrap())
            })
            .collect();
        found.sort_by(|a, b| a.0.total_cmp(&b.0));
        (s, found)
    };
    let (a, a_sols) = run(&yaml);
    let (b, b_sols) = run(&phc);
    for key in ["equations", "paths", "finite", "excess"] {
        assert_eq!(a[key], b[key], "{key}");
    }
    assert_eq!(
        (b["finite"].as_u64(), b["excess"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(a_sols.len(), 2);
    for ((x, y), (u, v)) in a_sols.iter().zip(&b_sols) {
        assert!((x - u).abs() < 1e-12 && (y - v).abs() < 1e-12);
    }
    // A declared number of variables that the polynomials do not have is refused.
    let bad = temp("over3.phc", "3 3\nx**2 - 1;\ny**2 - 4;\nx*y - 2;\n");
    let out = bin()
        .args(["solve", bad.to_str().unwrap(), "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("3 variables declared, 2 found"));
}

/// Bad requests end with exit code 2 and a message naming the flag or file and the cause.
#[test]
fn bad_requests_are_named() {
    let f = temp(
        "cubic-bad.yaml",
        "variables: [x, y, z]\nequations: ['y - x^2', 'z - x*y', 'x*z - y^2']\n",
    );
    let fs = f.to_str().unwrap();
    let fail = |args: &[&str], want: &str| {
        let out = bin().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    };
    fail(
        &["witness", fs, "--top-dimension", "3"],
        "--top-dimension 3",
    );
    fail(
        &["witness", fs, "--top-dimension", "1", "--dimension", "2"],
        "--dimension 2",
    );
    let w = temp("not-witness.json", "{\"format\": 3}");
    let ws = w.to_str().unwrap();
    fail(
        &["member", fs, "--witness", ws, "--point", "0,0,0"],
        "not a witness file",
    );
    let good = f.with_file_name("cubic-bad-witness.json");
    let gs = good.to_str().unwrap();
    json_of(&["witness", fs, "-q", "--json", "-o", gs]);
    fail(
        &["member", fs, "--witness", gs, "--point", "1,2"],
        "2 coordinates",
    );
    fail(
        &["member", fs, "--witness", gs, "--point", "1,2,3+ji"],
        "'3+ji'",
    );
    // Well-formed points: real, imaginary, with exponents.
    let m = json_of(&[
        "member",
        fs,
        "--witness",
        gs,
        "--point",
        "-1e0, 1, -1+0i",
        "--json",
    ]);
    assert_eq!(m["member"], true);
    let m = json_of(&[
        "member",
        fs,
        "--witness",
        gs,
        "--point",
        "i,-1,-i",
        "--json",
    ]);
    assert_eq!(m["member"], true);
}
