//! Certification (Krawczyk test in interval arithmetic) of solver endpoints: the proven
//! counts equal the known solution counts, perturbed points and double roots are not
//! certified, nearly coincident roots are certified distinct, realness agrees with the
//! solver, and the CLI (`certify`, `solve --certify`) reports the same counts.

use num_complex::Complex64 as C64;
use pathtrack::certify::{certify_points, Certifier, CertifySummary};
use pathtrack::post::{Endpoint, Status};
use pathtrack::solver::{solve_cpu, StartKind};
use pathtrack::system::{self, parse_str, Polynomial, System, Term};
use rand::{Rng, SeedableRng};
use std::process::Command;

fn shipped(name: &str) -> System {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("systems")
        .join(format!("{name}.yaml"));
    system::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// The final nonsingular endpoints' coordinates (others `None`: not tested).
fn points(eps: &[Endpoint]) -> Vec<Option<Vec<C64>>> {
    eps.iter()
        .map(|e| {
            e.coordinates
                .clone()
                .filter(|_| e.status == Status::Nonsingular)
        })
        .collect()
}

/// Solves, certifies the endpoints, and checks that every nonsingular solution the solver
/// found (`known` of them, all of the system's isolated solutions) is certified, that the
/// proven distinct count is `known`, and that the proven real count is the solver's count of
/// real nonsingular solutions (found by another route: imaginary parts below 1e-8).
fn check(sys: &System, start: StartKind, known: u64) -> CertifySummary {
    let (s, eps) = solve_cpu(sys, start, 1).unwrap();
    assert_eq!(s.nonsingular, known, "{}: {s:?}", sys.name);
    let (certs, c) = certify_points(sys, &points(&eps));
    assert_eq!(c.certified, known, "{}: {c:?}", sys.name);
    assert_eq!(c.certified_distinct, known, "{}: {c:?}", sys.name);
    assert_eq!(c.certified_unresolved, 0);
    let solver_real = s
        .solutions
        .iter()
        .filter(|x| x.status == Status::Nonsingular && x.real)
        .count() as u64;
    assert_eq!(c.certified_real, solver_real, "{}: {c:?}", sys.name);
    // Each certificate's box contains its point, and the radius is tiny (the endpoints are
    // accurate to about κ·ε).
    for (e, cert) in eps.iter().zip(&certs) {
        if let Some(cert) = cert {
            let x = e.coordinates.as_ref().unwrap();
            assert!(cert.region.iter().zip(x).all(|(b, &z)| b.contains(z)));
            assert!(cert.radius < 1e-9, "{}: radius {}", sys.name, cert.radius);
        }
    }
    c
}

#[test]
fn katsura6_all_64_certified_and_its_real_ones_real() {
    let c = check(&shipped("katsura6"), StartKind::Polyhedral, 64);
    assert!(c.certified_real > 0 && c.certified_real < 64);
}

#[test]
fn cyclic5_all_70_certified() {
    check(&shipped("cyclic5"), StartKind::Polyhedral, 70);
}

#[test]
fn noon4_and_noon5_all_certified() {
    check(&shipped("noon4"), StartKind::Polyhedral, 73);
    check(&shipped("noon5"), StartKind::TotalDegree, 233);
}

/// A dense system with random complex coefficients, degrees (2, 3, 2): Bézout's 12
/// solutions, none real-proven (complex coefficients).
#[test]
fn random_dense_system_all_bezout_solutions_certified() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(45);
    let n = 3;
    let mut monomials = Vec::new();
    for a in 0..=3i32 {
        for b in 0..=3 - a {
            for c in 0..=3 - a - b {
                monomials.push(vec![a, b, c]);
            }
        }
    }
    let equations = [2, 3, 2]
        .iter()
        .map(|&d| {
            Polynomial::from_terms(monomials.iter().filter(|e| e.iter().sum::<i32>() <= d).map(
                |e| Term {
                    coeff: C64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)),
                    exponents: e.clone(),
                },
            ))
        })
        .collect();
    let sys = System {
        name: "random".into(),
        description: String::new(),
        variables: (0..n).map(|i| format!("x{i}")).collect(),
        equations,
    };
    let c = check(&sys, StartKind::TotalDegree, 12);
    assert_eq!(c.certified_real, 0);
}

/// A katsura-6 solution moved by 1e-3 in every coordinate is not certified (its Newton
/// step is far beyond the largest certified radius); the unmoved one is.
#[test]
fn a_point_perturbed_by_1e_3_is_not_certified() {
    let sys = shipped("katsura6");
    let (_, eps) = solve_cpu(&sys, StartKind::Polyhedral, 1).unwrap();
    let cert = Certifier::new(&sys);
    let mut tried = 0;
    for x in points(&eps).into_iter().flatten().take(8) {
        assert!(cert.certify(&x).is_some());
        let moved: Vec<C64> = x.iter().map(|z| z + C64::new(1e-3, -1e-3)).collect();
        assert!(cert.certify(&moved).is_none(), "{moved:?}");
        tried += 1;
    }
    assert_eq!(tried, 8);
}

fn univariate(eq: &str) -> System {
    parse_str(
        &format!("variables: [x]\nequations:\n  - \"{eq}\"\n"),
        "t.yaml",
    )
    .unwrap()
}

/// The roots of `x² + b·x + c` in floating point (the stored coefficients).
fn quadratic_roots(sys: &System) -> [C64; 2] {
    let coeff = |d: i32| {
        sys.equations[0]
            .terms
            .iter()
            .find(|t| t.exponents[0] == d)
            .map_or(C64::new(0.0, 0.0), |t| t.coeff)
    };
    let (a, b, c) = (coeff(2), coeff(1), coeff(0));
    let s = (b * b - 4.0 * a * c).sqrt();
    let q = -0.5 * (b + if b.re >= 0.0 { s } else { -s });
    [q / a, c / q]
}

/// `(x − 1)(x − 1 − 2⁻²⁰)` (coefficients exact in binary) and `(x − 1)(x − 1 − 10⁻⁶)`
/// as parsed from decimals: both roots certified, proven distinct and real.
#[test]
fn nearly_coincident_roots_are_certified_distinct() {
    let e = 2f64.powi(-20);
    for sys in [
        univariate(&format!("x^2 - {}*x + {}", 2.0 + e, 1.0 + e)),
        univariate("x^2 - 2.000001*x + 1.000001"),
    ] {
        let roots = quadratic_roots(&sys);
        assert!((roots[0] - roots[1]).norm() < 2e-6);
        let pts: Vec<Option<Vec<C64>>> = roots.iter().map(|&r| Some(vec![r])).collect();
        let (certs, c) = certify_points(&sys, &pts);
        assert_eq!(
            (c.certified, c.certified_distinct, c.certified_real),
            (2, 2, 2),
            "{certs:?}"
        );
        // The same two roots given twice more (once nudged by 1e-15): still 2 distinct.
        let mut pts4 = pts.clone();
        pts4.push(Some(vec![roots[0] + 1e-15]));
        pts4.push(pts[1].clone());
        let (_, c) = certify_points(&sys, &pts4);
        assert_eq!((c.certified, c.certified_distinct), (4, 2));
    }
}

/// `(x − 1)²`: the solver's endpoints at the double root, and points near it, are never
/// certified.
#[test]
fn a_double_root_is_not_certified() {
    let sys = univariate("x^2 - 2*x + 1");
    let (_, eps) = solve_cpu(&sys, StartKind::TotalDegree, 1).unwrap();
    let cert = Certifier::new(&sys);
    let mut seen = 0;
    for e in &eps {
        if let Some(x) = &e.coordinates {
            assert!((x[0] - 1.0).norm() < 1e-4);
            assert!(cert.certify(x).is_none(), "{x:?}");
            seen += 1;
        }
    }
    assert!(seen > 0);
    for d in [1e-10, 1e-7, 1e-5] {
        assert!(cert.certify(&[C64::new(1.0 + d, 0.0)]).is_none());
    }
}

/// The same katsura-6 endpoints given twice, the second copy nudged by 1e-14: 128
/// certified, 64 distinct.
#[test]
fn copies_of_a_solution_count_once() {
    let sys = shipped("katsura6");
    let (_, eps) = solve_cpu(&sys, StartKind::Polyhedral, 1).unwrap();
    let mut pts = points(&eps);
    let nudged: Vec<Option<Vec<C64>>> = pts
        .iter()
        .map(|p| p.as_ref().map(|x| x.iter().map(|z| z + 1e-14).collect()))
        .collect();
    pts.extend(nudged);
    let (_, c) = certify_points(&sys, &pts);
    assert_eq!((c.certified, c.certified_distinct), (128, 64));
}

/// Complex coefficients: roots are certified, none is proven real, even one that is real
/// (`(1 + 2i)(x² − 4)`).
#[test]
fn complex_coefficients_prove_no_real_root() {
    let sys = univariate("(1+2*i)*x^2 - (4+8*i)");
    let pts = vec![
        Some(vec![C64::new(2.0, 0.0)]),
        Some(vec![C64::new(-2.0, 0.0)]),
    ];
    let (_, c) = certify_points(&sys, &pts);
    assert_eq!(
        (c.certified, c.certified_distinct, c.certified_real),
        (2, 2, 0)
    );
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pathtrack"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `solve --certify -o` then `certify`: the same counts (katsura-5: 32 solutions), each
/// nonsingular line marked certified with its radius; a singular line is not tested.
#[test]
fn cli_solve_certify_and_certify_agree() {
    let dir = std::env::temp_dir().join(format!("pathtrack-certify-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sols = dir.join("k5.jsonl");
    let s = json(
        &bin()
            .args([
                "solve",
                "systems/katsura5.yaml",
                "--backend",
                "cpu",
                "--quiet",
            ])
            .args(["--certify", "--json", "-o"])
            .arg(&sols)
            .output()
            .unwrap(),
    );
    assert_eq!(s["certified"], 32);
    assert_eq!(s["certified_distinct"], 32);
    assert_eq!(s["certified_real"], s["real"]);
    let text = std::fs::read_to_string(&sols).unwrap();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["status"] == "nonsingular" {
            assert_eq!(v["certified"], true, "{line}");
            assert!(v["certified_radius"].as_f64().unwrap() < 1e-9);
        }
    }
    let c = json(
        &bin()
            .args(["certify", "--system", "systems/katsura5.yaml", "--json"])
            .arg(&sols)
            .output()
            .unwrap(),
    );
    for k in ["certified", "certified_distinct", "certified_real"] {
        assert_eq!(c[k], s[k], "{k}");
    }
    assert_eq!(c["points"], 32);
    // The first endpoint line (after the header) marked singular: one fewer tested and
    // certified.
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    assert!(lines[0].contains("\"pathtrack_run\""), "header line");
    lines[1] = lines[1].replace("\"status\":\"nonsingular\"", "\"status\":\"singular\"");
    let edited = dir.join("edited.jsonl");
    std::fs::write(&edited, lines.join("\n")).unwrap();
    let c = json(
        &bin()
            .args(["certify", "--system", "systems/katsura5.yaml", "--json"])
            .arg(&edited)
            .output()
            .unwrap(),
    );
    assert_eq!(
        (c["tested"].as_u64(), c["certified"].as_u64()),
        (Some(31), Some(31))
    );
}

/// `solve --certify` on Wilkinson's `Π_{k=1}^{10} (x − k)` (exact integer coefficients):
/// all ten roots certified, distinct and real, some of them by the double-double test
/// (`certified_double_double`), none left `uncertified`; `certify` on the same lines with
/// one moved by 10⁻³ counts that one as `uncertified`.
#[test]
fn cli_solve_certify_reports_the_double_double_pass() {
    use num_rational::BigRational as Q;
    let dir = std::env::temp_dir().join(format!("pathtrack-certify-dd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let roots: Vec<Q> = (1..=10).map(|k| Q::from_integer(k.into())).collect();
    let (sys, exact) = expanded(&roots);
    assert!(exact);
    let poly: Vec<String> = sys.equations[0]
        .terms
        .iter()
        .map(|t| format!("({})*x^{}", t.coeff.re, t.exponents[0]))
        .collect();
    let file = dir.join("wilkinson10.yaml");
    std::fs::write(
        &file,
        format!("variables: [x]\nequations:\n  - \"{}\"\n", poly.join(" + ")),
    )
    .unwrap();
    let sols = dir.join("w10.jsonl");
    let s = json(
        &bin()
            .arg("solve")
            .arg(&file)
            .args(["--backend", "cpu", "--quiet", "--certify", "--json", "-o"])
            .arg(&sols)
            .output()
            .unwrap(),
    );
    assert_eq!(
        (
            s["certified"].as_u64(),
            s["certified_distinct"].as_u64(),
            s["certified_real"].as_u64()
        ),
        (Some(10), Some(10), Some(10)),
        "{s}"
    );
    assert!(
        s["certified_double_double"].as_u64().unwrap_or(0) >= 1,
        "{s}"
    );
    assert!(s.get("uncertified").is_none(), "{s}");
    let text = std::fs::read_to_string(&sols).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let k = lines
        .iter()
        .position(|l| l.contains("\"certified\":true"))
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&lines[k]).unwrap();
    let x = v["coordinates"][0][0].as_f64().unwrap();
    v["coordinates"][0][0] = (x + 1e-3).into();
    lines[k] = v.to_string();
    let edited = dir.join("w10-moved.jsonl");
    std::fs::write(&edited, lines.join("\n")).unwrap();
    let c = json(
        &bin()
            .args(["certify", "--system"])
            .arg(&file)
            .arg("--json")
            .arg(&edited)
            .output()
            .unwrap(),
    );
    assert_eq!(
        (c["certified"].as_u64(), c["uncertified"].as_u64()),
        (Some(9), Some(1)),
        "{c}"
    );
}

/// Bad input: a line that is not JSON, or coordinates of the wrong length, is an error
/// naming the file and line, exit code 2.
#[test]
fn cli_certify_bad_input_names_the_line() {
    let dir = std::env::temp_dir().join(format!("pathtrack-certify-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "{\"coordinates\":[[1,0],[0,0]]}\nnot json\n",
            ":2:",
            "not a JSON object",
        ),
        (
            "{\"coordinates\":[[1,0]]}\n",
            ":1:",
            "1 coordinates, but the system has 2",
        ),
        (
            "{\"coordinates\":[[1,0],[0]]}\n",
            ":1:",
            "coordinate 2 is not a pair",
        ),
        (
            "{\"status\":\"weird\",\"coordinates\":null}\n",
            ":1:",
            "unknown status",
        ),
    ];
    for (i, (text, at, msg)) in cases.iter().enumerate() {
        let f = dir.join(format!("bad{i}.jsonl"));
        std::fs::write(&f, text).unwrap();
        let out = bin()
            .args(["certify", "--system", "tests/data/laurent.yaml"])
            .arg(&f)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("bad{i}.jsonl{at}")) && err.contains(msg),
            "{err}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The device kernel (kernels/certify.cu): run on the host with emulated directed rounding
// (every CI run), and on a GPU where there is one.

use pathtrack::certify::packed::{certificate_from, PackedSystem};
use pathtrack::certify::{summarize, Certificate};

/// A C++ compiler for the host run of the kernel (`$CXX`, `c++`, `g++`, `clang++`).
fn cxx() -> Option<String> {
    let candidates = std::env::var("CXX")
        .ok()
        .into_iter()
        .chain(["c++", "g++", "clang++"].map(String::from));
    candidates.into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Runs kernels/certify.cu on the host (tests/certify_host/harness.cpp) at `pts`; `None`
/// (with the reason printed) where no C++ compiler is found.
fn kernel_on_host(
    sys: &System,
    pts: &[Option<Vec<C64>>],
    tag: &str,
) -> Option<Vec<Option<Certificate>>> {
    let Some(cc) = cxx() else {
        eprintln!("skipped: no C++ compiler (CXX, c++, g++, clang++) for the host run of kernels/certify.cu");
        return None;
    };
    let packed = PackedSystem::new(sys).unwrap();
    let n = packed.n;
    let dir = std::env::temp_dir().join(format!(
        "pathtrack-certify-kernel-{}-{tag}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("kernel.cu"), packed.source()).unwrap();
    let harness =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/certify_host/harness.cpp");
    let exe = dir.join("harness");
    let out = Command::new(&cc)
        .args(["-std=c++17", "-O1", "-ffp-contract=off", "-I"])
        .arg(&dir)
        .arg(&harness)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cc}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tried: Vec<usize> = (0..pts.len()).filter(|&i| pts[i].is_some()).collect();
    let mut input = Vec::new();
    input.extend((packed.ints.len() as i32).to_le_bytes());
    packed
        .ints
        .iter()
        .for_each(|v| input.extend(v.to_le_bytes()));
    input.extend((packed.coef.len() as u64).to_le_bytes());
    packed
        .coef
        .iter()
        .for_each(|v| input.extend(v.to_le_bytes()));
    input.extend((tried.len() as u64).to_le_bytes());
    for &i in &tried {
        for z in pts[i].as_ref().unwrap() {
            input.extend(z.re.to_le_bytes());
            input.extend(z.im.to_le_bytes());
        }
    }
    std::fs::write(dir.join("in.bin"), input).unwrap();
    let run = Command::new(&exe)
        .arg(dir.join("in.bin"))
        .arg(dir.join("out.bin"))
        .output()
        .unwrap();
    assert!(run.status.success(), "harness: {run:?}");
    let bytes = std::fs::read(dir.join("out.bin")).unwrap();
    let p = tried.len();
    let word = |k: usize| -> [u8; 8] { bytes[k..k + 8].try_into().unwrap() };
    let flags: Vec<i32> = (0..p)
        .map(|q| i32::from_le_bytes(bytes[4 * q..4 * q + 4].try_into().unwrap()))
        .collect();
    let radius: Vec<f64> = (0..p)
        .map(|q| f64::from_le_bytes(word(4 * p + 8 * q)))
        .collect();
    let encl: Vec<f64> = (0..p * 4 * n)
        .map(|q| f64::from_le_bytes(word(12 * p + 8 * q)))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    let mut certs = vec![None; pts.len()];
    for (q, &i) in tried.iter().enumerate() {
        certs[i] = certificate_from(
            pts[i].as_ref().unwrap(),
            flags[q],
            radius[q],
            &encl[q * 4 * n..(q + 1) * 4 * n],
        );
    }
    Some(certs)
}

/// The kernel's certificates against the CPU's at the same points: the same verdicts and
/// realness, each enclosure inside its box, and the same proven counts. The radii differ:
/// both are multiples of the Newton step `|Y·F(x̃)|`, which at an accurate point is the
/// width of the enclosure of `F(x̃)`, one rounding per operation with directed rounding and
/// up to two with the CPU's one-ulp widening (and none where the arithmetic is exact: the
/// root 1 of `(x − 1)(x − 1 − 2⁻²⁰)`). So the kernel's radius is at most 16 times the
/// CPU's. Returns the largest ratio of the kernel's radius to the CPU's. `double_only`:
/// against the CPU's double-precision test alone (what the kernel computes); otherwise
/// against the whole CPU test, as the GPU certifier gives the points its kernel leaves
/// undecided to the host's double-double test.
fn same_certificates(
    sys: &System,
    pts: &[Option<Vec<C64>>],
    other: &[Option<Certificate>],
    what: &str,
    double_only: bool,
) -> f64 {
    let cert = Certifier::new(sys);
    let cpu: Vec<Option<Certificate>> = pts
        .iter()
        .map(|x| {
            x.as_ref().and_then(|x| {
                if double_only {
                    cert.certify_double(x)
                } else {
                    cert.certify(x)
                }
            })
        })
        .collect();
    let counts = summarize(cpu.iter().map(|c| c.as_ref()));
    let mut worst: f64 = 0.0;
    for (i, (a, b)) in cpu.iter().zip(other).enumerate() {
        match (a, b) {
            (None, None) => {}
            (Some(a), Some(b)) => {
                assert_eq!(a.real, b.real, "{what}: point {i} realness");
                let ratio = b.radius / a.radius;
                assert!(
                    ratio <= 16.0,
                    "{what}: point {i} radii {} {}",
                    a.radius,
                    b.radius
                );
                worst = worst.max(ratio);
                assert!(
                    b.enclosure
                        .iter()
                        .zip(&b.region)
                        .all(|(k, x)| k.interior_of(*x)),
                    "{what}: point {i}"
                );
                let x = pts[i].as_ref().unwrap();
                assert!(b.region.iter().zip(x).all(|(r, &z)| r.contains(z)));
            }
            _ => panic!(
                "{what}: point {i}: CPU {:?}, other {:?}",
                a.is_some(),
                b.is_some()
            ),
        }
    }
    assert_eq!(
        summarize(other.iter().map(|c| c.as_ref())),
        counts,
        "{what}"
    );
    worst
}

/// Test points of a system: its nonsingular endpoints, and a copy of a few moved by 1e-3
/// (not certified).
fn endpoints_and_moved(sys: &System, start: StartKind) -> Vec<Option<Vec<C64>>> {
    let (_, eps) = solve_cpu(sys, start, 1).unwrap();
    let mut pts = points(&eps);
    let moved: Vec<Option<Vec<C64>>> = pts
        .iter()
        .flatten()
        .take(4)
        .map(|x| Some(x.iter().map(|z| z + C64::new(1e-3, -1e-3)).collect()))
        .collect();
    pts.extend(moved);
    pts
}

type Points = Vec<Option<Vec<C64>>>;

/// Small systems of every kind the kernel must handle: real coefficients with real and
/// complex roots, complex coefficients, Laurent terms, nearly coincident roots, a double
/// root, moved points, copies.
fn kernel_cases() -> Vec<(String, System, Points)> {
    let mut cases = Vec::new();
    for (name, start) in [
        ("katsura5", StartKind::Polyhedral),
        ("cyclic5", StartKind::Polyhedral),
        ("noon4", StartKind::Polyhedral),
    ] {
        let sys = shipped(name);
        let pts = endpoints_and_moved(&sys, start);
        cases.push((name.to_string(), sys, pts));
    }
    let laurent = system::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/laurent.yaml"),
    )
    .unwrap();
    let pts = endpoints_and_moved(&laurent, StartKind::Polyhedral);
    cases.push(("laurent".into(), laurent, pts));
    let e = 2f64.powi(-20);
    for (name, sys) in [
        (
            "close pair",
            univariate(&format!("x^2 - {}*x + {}", 2.0 + e, 1.0 + e)),
        ),
        ("complex coefficients", univariate("(1+2*i)*x^2 - (4+8*i)")),
        ("decimal pair", univariate("x^2 - 2.000001*x + 1.000001")),
    ] {
        let roots = quadratic_roots(&sys);
        let mut pts: Vec<Option<Vec<C64>>> = roots.iter().map(|&r| Some(vec![r])).collect();
        pts.push(Some(vec![roots[0] + C64::new(1e-15, 1e-13)]));
        pts.push(None);
        cases.push((name.into(), sys, pts));
    }
    let double = univariate("x^2 - 2*x + 1");
    let pts = [0.0, 1e-10, 1e-7]
        .iter()
        .map(|d| Some(vec![C64::new(1.0 + d, *d)]))
        .collect();
    cases.push(("double root".into(), double, pts));
    cases
}

/// kernels/certify.cu compiled for the host (the directed-rounding intrinsics emulated
/// exactly, tests/certify_host/harness.cpp) gives the CPU's certificates on every case:
/// the device's arithmetic and control flow checked without a device.
#[test]
fn the_device_kernel_run_on_the_host_gives_the_cpu_certificates() {
    for (k, (name, sys, pts)) in kernel_cases().into_iter().enumerate() {
        let Some(certs) = kernel_on_host(&sys, &pts, &k.to_string()) else {
            return;
        };
        let worst = same_certificates(&sys, &pts, &certs, &name, true);
        let certified = certs.iter().flatten().count();
        eprintln!("{name}: {certified} certified, radii at most {worst:.3} times the CPU's");
        assert!(certified > 0 || name == "double root", "{name}");
    }
}

/// The GPU certifier for `sys` on device 0, or `None` with the reason printed.
fn gpu_certifier(sys: &System) -> Option<pathtrack::certify::cuda::GpuCertifier> {
    match pathtrack::certify::cuda::GpuCertifier::new(0, sys) {
        Ok(g) => {
            eprintln!(
                "CUDA device: {}; {}; {}",
                g.device_description(),
                g.kernel_report(),
                g.compile_note
            );
            Some(g)
        }
        Err(e) => {
            eprintln!("skipped: no CUDA device: {e}");
            None
        }
    }
}

/// On a GPU: the batch gives the CPU's verdicts, realness and proven counts (radii at most
/// 16 times the CPU's) on katsura-6…8, cyclic-5…7 and every small case of the host run.
#[test]
fn gpu_certificates_match_the_cpu_on_katsura_and_cyclic() {
    if gpu_certifier(&univariate("x - 1")).is_none() {
        return;
    }
    let mut cases = kernel_cases();
    for name in ["katsura6", "katsura7", "katsura8", "cyclic6", "cyclic7"] {
        let sys = shipped(name);
        let pts = endpoints_and_moved(&sys, StartKind::Polyhedral);
        cases.push((name.to_string(), sys, pts));
    }
    for (name, sys, pts) in cases {
        let Some(mut g) = gpu_certifier(&sys) else {
            return;
        };
        let certs = g.certify_points(&pts).unwrap();
        let worst = same_certificates(&sys, &pts, &certs, &name, false);
        let c = summarize(certs.iter().map(|c| c.as_ref()));
        eprintln!("{name}: GPU {c:?}; radii at most {worst:.3} times the CPU's");
    }
}

/// On a GPU: more points than one launch holds (katsura-6's 64 solutions, 1,100 copies
/// each, nudged by multiples of 1e-15): all certified, 64 distinct and the CPU's real
/// count.
#[test]
fn gpu_batches_beyond_one_launch_count_each_root_once() {
    let sys = shipped("katsura6");
    let Some(mut g) = gpu_certifier(&sys) else {
        return;
    };
    let (_, eps) = solve_cpu(&sys, StartKind::Polyhedral, 1).unwrap();
    let base: Vec<Vec<C64>> = points(&eps).into_iter().flatten().collect();
    assert_eq!(base.len(), 64);
    let copies = 1100;
    assert!(base.len() * copies > pathtrack::certify::cuda::CHUNK);
    let pts: Vec<Option<Vec<C64>>> = (0..copies)
        .flat_map(|k| {
            base.iter()
                .map(move |x| Some(x.iter().map(|z| z + 1e-15 * (k % 7) as f64).collect()))
        })
        .collect();
    let certs = g.certify_points(&pts).unwrap();
    let c = summarize(certs.iter().map(|c| c.as_ref()));
    assert_eq!(
        (c.certified, c.certified_distinct, c.certified_unresolved),
        ((64 * copies) as u64, 64, 0)
    );
    let (_, cpu) = certify_points(&sys, &pts[..64]);
    assert_eq!(c.certified_real, cpu.certified_real);
}

/// `solve --certify --backend cuda` certifies through the backend's GPU certifier
/// (`certify_backend` "cuda") with the CPU's counts, each nonsingular line of -o certified;
/// `certify --backend cuda` on that file gives the same counts. Without a GPU both commands
/// fail cleanly: exit code 2 and a message naming CUDA.
#[test]
fn cli_certify_on_the_gpu_or_a_clean_error() {
    let dir = std::env::temp_dir().join(format!("pathtrack-certify-gpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sols = dir.join("k5.jsonl");
    let out = bin()
        .args([
            "solve",
            "systems/katsura5.yaml",
            "--backend",
            "cuda",
            "--quiet",
        ])
        .args(["--certify", "--json", "-o"])
        .arg(&sols)
        .output()
        .unwrap();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("CUDA") || err.contains("cuda"), "{err}");
        let one = dir.join("one.jsonl");
        std::fs::write(
            &one,
            "{\"coordinates\":[[1,0],[0,0],[0,0],[0,0],[0,0],[0,0]]}\n",
        )
        .unwrap();
        let c = bin()
            .args([
                "certify",
                "--system",
                "systems/katsura5.yaml",
                "--backend",
                "cuda",
            ])
            .arg(&one)
            .output()
            .unwrap();
        let cerr = String::from_utf8_lossy(&c.stderr);
        assert_eq!(c.status.code(), Some(2), "{cerr}");
        assert!(cerr.contains("CUDA"), "{cerr}");
        eprintln!("skipped: no CUDA device: {}", err.trim());
        return;
    }
    let s = json(&out);
    assert_eq!(s["certify_backend"], "cuda");
    assert_eq!(s["certified"], 32);
    assert_eq!(s["certified_distinct"], 32);
    assert_eq!(s["certified_real"], s["real"]);
    let text = std::fs::read_to_string(&sols).unwrap();
    let mut lines = 0;
    for line in text
        .lines()
        .filter(|l| l.contains("\"status\":\"nonsingular\""))
    {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["certified"], true, "{line}");
        assert!(v["certified_radius"].as_f64().unwrap() < 1e-9);
        lines += 1;
    }
    assert!(lines >= 32);
    let c = json(
        &bin()
            .args(["certify", "--system", "systems/katsura5.yaml", "--json"])
            .args(["--backend", "cuda"])
            .arg(&sols)
            .output()
            .unwrap(),
    );
    assert_eq!(c["backend"], "cuda");
    for k in ["certified", "certified_distinct", "certified_real"] {
        assert_eq!(c[k], s[k], "{k}");
    }
}

// ---------------------------------------------------------------------------------------
// Known counts of the benchmark families (the large ones ignored: `--ignored`), and systems
// with clustered roots.

#[test]
fn katsura7_and_cyclic6_all_certified() {
    check(&shipped("katsura7"), StartKind::Polyhedral, 128);
    check(&shipped("cyclic6"), StartKind::Polyhedral, 156);
}

/// katsura-8…10 (256, 512, 1,024 solutions, all nonsingular): every one certified and
/// proven distinct (about a minute on two cores).
#[test]
#[ignore]
fn katsura8_to_10_all_certified() {
    for (name, known) in [("katsura8", 256), ("katsura9", 512), ("katsura10", 1024)] {
        check(&shipped(name), StartKind::Polyhedral, known);
    }
}

/// The isolated nonsingular solutions of cyclic-7 (924), cyclic-8 (1,152, beside its curve)
/// and cyclic-9 (5,994, beside 162 singular isolated ones), and noon-6 (717): every one
/// certified and proven distinct (several minutes on two cores).
#[test]
#[ignore]
fn cyclic7_to_9_and_noon6_isolated_solutions_all_certified() {
    for (name, known) in [
        ("cyclic7", 924),
        ("noon6", 717),
        ("cyclic8", 1152),
        ("cyclic9", 5994),
    ] {
        check(&shipped(name), StartKind::Polyhedral, known);
    }
}

/// The univariate polynomial `Π_k (x − r_k)` expanded in exact rationals, each coefficient
/// then rounded to the nearest double (exact where the double holds it).
fn expanded(roots: &[num_rational::BigRational]) -> (System, bool) {
    use num_rational::BigRational as Q;
    use num_traits::{One, ToPrimitive, Zero};
    let mut c: Vec<Q> = vec![Q::one()]; // c[d] = coefficient of x^d
    for r in roots {
        let mut next = vec![Q::zero(); c.len() + 1];
        for (d, a) in c.iter().enumerate() {
            next[d + 1] += a;
            next[d] -= a * r;
        }
        c = next;
    }
    let exact = c
        .iter()
        .all(|a| a.to_f64().and_then(Q::from_float).as_ref() == Some(a));
    let terms = c
        .iter()
        .enumerate()
        .filter(|(_, a)| !a.is_zero())
        .map(|(d, a)| Term {
            coeff: C64::new(a.to_f64().unwrap(), 0.0),
            exponents: vec![d as i32],
        });
    let sys = System {
        name: "product".into(),
        description: String::new(),
        variables: vec!["x".into()],
        equations: vec![Polynomial::from_terms(terms)],
    };
    (sys, exact)
}

/// Newton in double on the stored polynomial from `x0`.
fn newton(sys: &System, x0: f64) -> C64 {
    let mut x = [C64::new(x0, 0.0)];
    for _ in 0..50 {
        let f = sys.eval(&x)[0];
        let g = sys.equations[0].gradient(&x)[0];
        x[0] -= f / g;
    }
    x[0]
}

/// `Π_k (x − r_k)` for `r_k = shift + k·10⁻⁴`, k = 1…6, expanded with its coefficients
/// rounded to doubles, and Newton's points at its six roots.
fn cluster(shift: i64) -> (System, Vec<Option<Vec<C64>>>) {
    use num_rational::BigRational as Q;
    let roots: Vec<Q> = (1..=6)
        .map(|k| Q::from_integer(shift.into()) + Q::new(k.into(), 10_000.into()))
        .collect();
    let (sys, _) = expanded(&roots);
    let pts = roots
        .iter()
        .map(|r| {
            Some(vec![newton(
                &sys,
                num_traits::ToPrimitive::to_f64(r).unwrap(),
            )])
        })
        .collect();
    (sys, pts)
}

/// Clustered roots `Π_{k=1}^{6} (x − k·10⁻⁴)`: the six roots of the stored polynomial,
/// 10⁻⁴ apart, are certified, distinct and real. (Shifted to 1, the same cluster has
/// `|F'| ≈ 10⁻¹⁸` against coefficients near 20: beyond double precision altogether.)
#[test]
fn clustered_roots_are_certified_distinct_and_real() {
    {
        let shift = 0;
        let (sys, pts) = cluster(shift);
        let (_, c) = certify_points(&sys, &pts);
        assert_eq!(
            (c.certified, c.certified_distinct, c.certified_real),
            (6, 6, 6),
            "shift {shift}"
        );
    }
}

/// The solver on the same cluster finds the six roots, for seeds 1–5: its loops around
/// the cluster close with winding number 6 at the centroid, which is no root to the rounding
/// level of its terms, so each path is tracked in double-double to its own root
/// (post::cluster_split). All six are nonsingular, certified, distinct and real, and
/// nothing is singular.
#[test]
fn the_solver_finds_the_clustered_roots() {
    let (sys, _) = cluster(0);
    for seed in 1..=5 {
        let (s, eps) = solve_cpu(&sys, StartKind::TotalDegree, seed).unwrap();
        let (_, c) = certify_points(&sys, &points(&eps));
        assert_eq!(
            (s.nonsingular, s.singular, s.failed),
            (6, 0, 0),
            "seed {seed}: solver {s:?}"
        );
        assert_eq!(
            (c.certified_distinct, c.certified_real),
            (6, 6),
            "seed {seed}: solver {s:?}"
        );
    }
}

/// Wilkinson-type `Π_{k=1}^{m} (x − k)` with coefficients a double holds exactly: the
/// integers are roots of the stored polynomial. For m = 6 and 8 the double-precision test
/// certifies every one; for m = 10 it leaves the middle roots 6, 7, 8 undecided (the
/// interval Jacobian of the expanded polynomial over its box is wider than `|F'|` there;
/// docs/certification.md, "Reach"), and the double-double test proves them. Every root is
/// certified, distinct and real, at the integer itself (whose box holds it) and at the
/// solver's endpoints.
#[test]
fn wilkinson_roots_with_exact_coefficients_are_certified() {
    use num_rational::BigRational as Q;
    for m in [6i64, 8, 10] {
        let roots: Vec<Q> = (1..=m).map(|k| Q::from_integer(k.into())).collect();
        let (sys, exact) = expanded(&roots);
        assert!(exact, "m = {m}: coefficients not exact");
        let cert = Certifier::new(&sys);
        let in_double: Vec<i64> = (1..=m)
            .filter(|&k| {
                cert.certify_double(&[C64::new(k as f64, 0.0)])
                    .is_some_and(|c| c.real)
            })
            .collect();
        let want: Vec<i64> = (1..=m)
            .filter(|k| m < 10 || ![6, 7, 8].contains(k))
            .collect();
        assert_eq!(in_double, want, "m = {m}: double precision");
        for k in 1..=m {
            let x = C64::new(k as f64, 0.0);
            let c = cert
                .certify(&[x])
                .unwrap_or_else(|| panic!("m = {m}: root {k}"));
            assert!(c.real && c.enclosure[0].contains(x), "m = {m}: root {k}");
            assert_eq!(c.double_double, !want.contains(&k), "m = {m}: root {k}");
        }
        let (s, eps) = solve_cpu(&sys, StartKind::TotalDegree, 1).unwrap();
        let (_, c) = certify_points(&sys, &points(&eps));
        let m = m as u64;
        assert_eq!(
            (c.certified_distinct, c.certified_real),
            (m, m),
            "m = {m}: solver {s:?}"
        );
    }
}

/// Three roots `1 + k·2⁻¹²` (k = 1, 2, 3), 2.4·10⁻⁴ apart, of `Π (x − 1 − k·2⁻¹²)`, whose
/// coefficients are exact in double (κ ≈ 10⁸ at the middle root, so `κ²·ε ≫ 1`): the
/// double-precision test proves none of them, the double-double test proves all three,
/// distinct and real, each enclosure holding its exact root. Points moved off a root by
/// 10⁻¹⁶…10⁻³: whenever one is certified its enclosure holds that root (never a wrong
/// point), and none moved by more than the cap (10⁻⁵ here) is.
#[test]
fn clustered_roots_beyond_double_precision_are_certified_in_double_double() {
    use num_rational::BigRational as Q;
    let h = 2f64.powi(-12);
    let exact_roots: Vec<f64> = (1..=3).map(|k| 1.0 + k as f64 * h).collect();
    let roots: Vec<Q> = exact_roots
        .iter()
        .map(|&r| Q::from_float(r).unwrap())
        .collect();
    let (sys, exact) = expanded(&roots);
    assert!(exact);
    let cert = Certifier::new(&sys);
    let pts: Vec<Option<Vec<C64>>> = exact_roots
        .iter()
        .map(|&r| Some(vec![C64::new(r, 0.0)]))
        .collect();
    for p in pts.iter().flatten() {
        assert!(cert.certify_double(p).is_none(), "{p:?} in double");
        let c = cert.certify(p).expect("certified in double-double");
        assert!(c.double_double && c.real && c.enclosure[0].contains(p[0]));
    }
    let (_, c) = certify_points(&sys, &pts);
    assert_eq!(
        (
            c.certified,
            c.certified_distinct,
            c.certified_real,
            c.certified_unresolved
        ),
        (3, 3, 3, 0)
    );
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut moved_certified = 0;
    for _ in 0..200 {
        let r = exact_roots[rng.random_range(0..3)];
        let d = 10f64.powf(rng.random_range(-16.0..-3.0));
        let x = [C64::new(
            r + d * rng.random_range(-1.0..1.0),
            d * rng.random_range(-1.0..1.0),
        )];
        if let Some(c) = cert.certify(&x) {
            assert!(c.enclosure[0].contains(C64::new(r, 0.0)), "{x:?}: {c:?}");
            assert!(d < 1e-5, "{x:?}");
            moved_certified += 1;
        }
    }
    assert!(moved_certified > 0);
}

/// A three-variable system with a root of condition about 10¹⁰ (the pair
/// `(x − 1)(x − 1 − g)` of g = 2⁻³⁴ coupled to two well-conditioned equations), given as
/// exact roots and as points moved by 10⁻³: the double test proves none, the double-double
/// one all four (distinct and real, enclosures holding the exact `x` and `y`), and no moved
/// point.
#[test]
fn an_ill_conditioned_pair_in_three_variables_is_certified_in_double_double() {
    let g = 2f64.powi(-34);
    let sys = parse_str(
        &format!(
            "variables: [x, y, z]\nequations:\n  - \"x^2 - {}*x + {}\"\n  - \"y - 2*x + 1\"\n  - \"z^2 - y*z - 2\"\n",
            2.0 + g,
            1.0 + g
        ),
        "t.yaml",
    )
    .unwrap();
    let cert = Certifier::new(&sys);
    let mut pts = Vec::new();
    for x in [1.0, 1.0 + g] {
        let y = 2.0 * x - 1.0;
        for s in [1.0, -1.0] {
            let z = 0.5 * (y + s * (y * y + 8.0f64).sqrt());
            pts.push(vec![C64::new(x, 0.0), C64::new(y, 0.0), C64::new(z, 0.0)]);
        }
    }
    let mut proven = Vec::new();
    for p in &pts {
        assert!(cert.certify_double(p).is_none(), "{p:?} in double");
        let c = cert.certify(p).expect("certified in double-double");
        assert!(c.double_double && c.real);
        // x and y are exact roots (z is rounded).
        assert!(c.enclosure[0].contains(p[0]) && c.enclosure[1].contains(p[1]));
        proven.push(Some(p.clone()));
        let moved: Vec<C64> = p.iter().map(|z| z + C64::new(1e-3, 0.0)).collect();
        assert!(cert.certify(&moved).is_none());
    }
    let (_, c) = certify_points(&sys, &proven);
    assert_eq!(
        (c.certified, c.certified_distinct, c.certified_real),
        (4, 4, 4)
    );
}
