//! The row-reduction engine against independent slow references: textbook Gauss–Jordan
//! over Z/p in big integers, exact rational Gauss–Jordan over Q (BigRational), Bareiss
//! fraction-free determinants; det / inverse / solve / null space / rank factorization
//! checked by multiplication; floats by residual bounds; the CLI on tests/data/.

#![allow(clippy::needless_range_loop)]

use num_bigint::{BigInt, BigUint};
use num_complex::Complex64;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};
use pathtrack::linalg::rref::{
    self, det, echelonize, inverse, mtx, null_space, rank, rank_factorization, solve,
    EchelonOptions, Field, Matrix, Parallelism, Solution, Tolerance, Zp32, Zp64, C64, F64,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const P62: u64 = 4611686018427387847;

// ------------------------------------------------------------------ references ----------

/// Deterministic Miller–Rabin with big integers (bases 2..37 suffice below 3.3·10^24).
fn miller_rabin(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    let small = [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if small.contains(&n) {
        return true;
    }
    if small.iter().any(|&q| n % q == 0) {
        return false;
    }
    let nb = BigUint::from(n);
    let nm1 = &nb - 1u32;
    let s = (n - 1).trailing_zeros();
    let d = BigUint::from((n - 1) >> s);
    'outer: for &a in &small {
        let mut x = BigUint::from(a).modpow(&d, &nb);
        if x.is_one() || x == nm1 {
            continue;
        }
        for _ in 1..s {
            x = (&x * &x) % &nb;
            if x == nm1 {
                continue 'outer;
            }
        }
        return false;
    }
    true
}

type IntMat = Vec<Vec<i64>>;

fn modp(x: &BigInt, p: u64) -> u64 {
    let pb = BigInt::from(p);
    let r = ((x % &pb) + &pb) % &pb;
    r.to_u64().unwrap()
}

/// Textbook Gauss–Jordan over Z/p with BigInt arithmetic: column by column, first
/// non-zero row below the current one as pivot, swap, scale, clear the whole column.
fn ref_rref_modp(a: &IntMat, p: u64) -> (Vec<Vec<u64>>, Vec<usize>) {
    let pb = BigInt::from(p);
    let mut m: Vec<Vec<BigInt>> = a
        .iter()
        .map(|r| {
            r.iter()
                .map(|&x| BigInt::from(modp(&BigInt::from(x), p)))
                .collect()
        })
        .collect();
    let rows = m.len();
    let cols = if rows > 0 { m[0].len() } else { 0 };
    let mut pivots = Vec::new();
    let mut r = 0;
    for c in 0..cols {
        let Some(k) = (r..rows).find(|&k| !m[k][c].is_zero()) else {
            continue;
        };
        m.swap(r, k);
        let inv = m[r][c].modpow(&(&pb - 2), &pb);
        for x in m[r].iter_mut() {
            *x = (&*x * &inv) % &pb;
        }
        for i in 0..rows {
            if i != r && !m[i][c].is_zero() {
                let f = m[i][c].clone();
                for j in 0..cols {
                    let v = (&m[i][j] - &f * &m[r][j]) % &pb;
                    m[i][j] = (v + &pb) % &pb;
                }
            }
        }
        pivots.push(c);
        r += 1;
    }
    (
        m.iter()
            .map(|row| row.iter().map(|x| x.to_u64().unwrap()).collect())
            .collect(),
        pivots,
    )
}

/// Exact RREF over Q.
fn ref_rref_q(a: &IntMat) -> (Vec<Vec<BigRational>>, Vec<usize>) {
    let mut m: Vec<Vec<BigRational>> = a
        .iter()
        .map(|r| {
            r.iter()
                .map(|&x| BigRational::from_integer(BigInt::from(x)))
                .collect()
        })
        .collect();
    let rows = m.len();
    let cols = if rows > 0 { m[0].len() } else { 0 };
    let mut pivots = Vec::new();
    let mut r = 0;
    for c in 0..cols {
        let Some(k) = (r..rows).find(|&k| !m[k][c].is_zero()) else {
            continue;
        };
        m.swap(r, k);
        let inv = m[r][c].recip();
        for x in m[r].iter_mut() {
            *x = &*x * &inv;
        }
        for i in 0..rows {
            if i != r && !m[i][c].is_zero() {
                let f = m[i][c].clone();
                for j in 0..cols {
                    let v = &m[i][j] - &f * &m[r][j];
                    m[i][j] = v;
                }
            }
        }
        pivots.push(c);
        r += 1;
    }
    (m, pivots)
}

/// Bareiss fraction-free determinant over Z.
fn bareiss_det(a: &IntMat) -> BigInt {
    let n = a.len();
    let mut m: Vec<Vec<BigInt>> = a
        .iter()
        .map(|r| r.iter().map(|&x| BigInt::from(x)).collect())
        .collect();
    let mut sign = BigInt::one();
    let mut prev = BigInt::one();
    for k in 0..n {
        if m[k][k].is_zero() {
            let Some(s) = (k + 1..n).find(|&s| !m[s][k].is_zero()) else {
                return BigInt::zero();
            };
            m.swap(k, s);
            sign = -sign;
        }
        for i in k + 1..n {
            for j in k + 1..n {
                let v = (&m[i][j] * &m[k][k] - &m[i][k] * &m[k][j]) / &prev;
                m[i][j] = v;
            }
        }
        prev = m[k][k].clone();
    }
    if n == 0 {
        return BigInt::one();
    }
    sign * m[n - 1][n - 1].clone()
}

// ------------------------------------------------------------------ generators ----------

/// A random m × n integer matrix of rank ≤ r (product of m×r and r×n factors with entries
/// in [−e, e]), with random sparsity in the factors and some zero rows / columns.
fn random_int_matrix(rng: &mut ChaCha8Rng, m: usize, n: usize, r: usize, e: i64) -> IntMat {
    let density: f64 = rng.random_range(0.2..1.0);
    let gen = |rows: usize, cols: usize, rng: &mut ChaCha8Rng| -> IntMat {
        (0..rows)
            .map(|_| {
                (0..cols)
                    .map(|_| {
                        if rng.random_bool(density) {
                            rng.random_range(-e..=e)
                        } else {
                            0
                        }
                    })
                    .collect()
            })
            .collect()
    };
    let left = gen(m, r, rng);
    let right = gen(r, n, rng);
    let mut a: IntMat = (0..m)
        .map(|i| {
            (0..n)
                .map(|j| (0..r).map(|k| left[i][k] * right[k][j]).sum())
                .collect()
        })
        .collect();
    if m > 2 && rng.random_bool(0.3) {
        let i = rng.random_range(0..m);
        a[i].iter_mut().for_each(|x| *x = 0);
    }
    if n > 2 && rng.random_bool(0.3) {
        let j = rng.random_range(0..n);
        a.iter_mut().for_each(|row| row[j] = 0);
    }
    a
}

fn shape(rng: &mut ChaCha8Rng, max: usize) -> (usize, usize, usize) {
    let m = rng.random_range(1..=max);
    let n = rng.random_range(1..=max);
    let r = rng.random_range(0..=m.min(n));
    (m, n, r)
}

fn to_field<F: Field>(f: &F, a: &IntMat) -> Matrix<F::Elem> {
    Matrix::from_fn(a.len(), a[0].len(), |i, j| f.from_i64(a[i][j]))
}

fn opts(block: usize, par: Parallelism) -> EchelonOptions {
    EchelonOptions {
        block,
        parallelism: par,
        ..Default::default()
    }
}

// ------------------------------------------------------------------ Z/p -----------------

/// Checks rref, rank, det, inverse, solve, null space and rank factorization over Z/p for
/// one integer matrix; `to_u64` maps field elements to integers in [0, p).
fn check_zp<F: Field>(
    f: &F,
    p: u64,
    a: &IntMat,
    opt: &EchelonOptions,
    to_u64: impl Fn(F::Elem) -> u64,
    rng: &mut ChaCha8Rng,
) {
    let (m, n) = (a.len(), a[0].len());
    let am = to_field(f, a);
    let (refm, refp) = ref_rref_modp(a, p);
    let mut r = am.clone();
    let e = echelonize(f, &mut r, opt);
    assert_eq!(e.pivots, refp, "pivots differ, p = {p}, {m}×{n}, a = {a:?}");
    assert_eq!(e.rank, refp.len());
    for i in 0..m {
        for j in 0..n {
            assert_eq!(
                to_u64(r.get(i, j)),
                refm[i][j],
                "rref entry ({i},{j}) differs, p = {p}, {m}×{n}"
            );
        }
    }
    // row_perm is a permutation.
    let mut seen = e.row_perm.clone();
    seen.sort_unstable();
    assert_eq!(seen, (0..m).collect::<Vec<_>>());
    assert_eq!(rank(f, &am, opt), refp.len());

    if m == n {
        let d = det(f, &am, opt);
        assert_eq!(
            to_u64(d),
            modp(&bareiss_det(a), p),
            "det mod {p} differs, n = {n}"
        );
        match inverse(f, &am, opt) {
            Some(x) => {
                assert_eq!(refp.len(), n, "inverse of a singular matrix returned");
                assert_eq!(am.mul(f, &x), Matrix::identity(f, n));
                assert_eq!(x.mul(f, &am), Matrix::identity(f, n));
            }
            None => assert!(refp.len() < n, "inverse missing for a regular matrix"),
        }
    }

    // Null space: A N = 0, n − rank columns, independent (identity on the free rows).
    let nb = null_space(f, &am, opt);
    assert_eq!(nb.cols, n - e.rank);
    assert!(am.mul(f, &nb).data.iter().all(|&x| f.is_zero(x)));
    assert_eq!(rank(f, &nb, opt), nb.cols);

    // Rank factorization.
    let (c, fm) = rank_factorization(f, &am, opt);
    assert_eq!((c.cols, fm.rows), (e.rank, e.rank));
    assert_eq!(c.mul(f, &fm), am);

    // Consistent solve: B = A X0.
    let k = rng.random_range(1..=3);
    let x0 = Matrix::from_fn(n, k, |_, _| f.from_i64(rng.random_range(-50..50)));
    let b = am.mul(f, &x0);
    match solve(f, &am, &b, opt) {
        Solution::Unique(x) => {
            assert_eq!(e.rank, n);
            assert_eq!(am.mul(f, &x), b);
        }
        Solution::Affine {
            particular,
            null_basis,
        } => {
            assert!(e.rank < n);
            assert_eq!(am.mul(f, &particular), b);
            assert_eq!(null_basis.cols, n - e.rank);
            assert!(am.mul(f, &null_basis).data.iter().all(|&x| f.is_zero(x)));
            // X0 − particular lies in the span of the null basis.
            let diff = Matrix::from_fn(n, k, |i, j| f.sub(x0.get(i, j), particular.get(i, j)));
            assert_eq!(rank(f, &null_basis.hcat(&diff), opt), null_basis.cols);
        }
        Solution::Inconsistent => panic!("consistent system reported inconsistent"),
    }
    // Random right-hand side: inconsistent exactly when rank [A | b] > rank A.
    let bi = Matrix::from_fn(m, 1, |_, _| f.from_i64(rng.random_range(-50..50)));
    let ra = e.rank;
    let rab = {
        let lifted: IntMat = (0..m)
            .map(|i| {
                let mut row: Vec<i64> = a[i].clone();
                row.push(to_u64(bi.get(i, 0)) as i64);
                row
            })
            .collect();
        // The lift of b fits in i64 for every p < 2^63.
        ref_rref_modp(&lifted, p).1.len()
    };
    match solve(f, &am, &bi, opt) {
        Solution::Inconsistent => assert!(rab > ra),
        Solution::Unique(x) | Solution::Affine { particular: x, .. } => {
            assert_eq!(rab, ra);
            assert_eq!(am.mul(f, &x), bi);
        }
    }
}

const SMALL_PRIMES: [u64; 4] = [2, 3, 65521, 2147483647];

#[test]
fn primes_are_prime() {
    for p in [2u64, 3, 65521, 998244353, 2147483647, P62] {
        assert!(miller_rabin(p), "{p}");
        assert!(rref::is_prime_u64(p), "{p}");
    }
    for c in [1u64, 4, 65535, 2147483649, P62 - 2, 561, 3215031751] {
        assert_eq!(rref::is_prime_u64(c), miller_rabin(c), "{c}");
    }
    assert!(Zp32::new(2147483648).is_err());
    assert!(Zp32::new(91).is_err());
    assert!(Zp64::new(P62 + 2).is_err() || miller_rabin(P62 + 2));
}

#[test]
fn zp32_matches_reference_random_shapes() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for &p in SMALL_PRIMES.iter().chain(&[998244353]) {
        let f = Zp32::new(p as u32).unwrap();
        for trial in 0..40 {
            let (m, n, r) = shape(&mut rng, 14);
            let a = random_int_matrix(&mut rng, m, n, r, 9);
            let block = [1, 2, 3, 64][trial % 4];
            check_zp(
                &f,
                p,
                &a,
                &opts(block, Parallelism::None),
                |x| x as u64,
                &mut rng,
            );
        }
    }
}

#[test]
fn zp64_matches_reference_random_shapes() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for &p in SMALL_PRIMES.iter().chain(&[P62]) {
        let f = Zp64::new(p).unwrap();
        for trial in 0..40 {
            let (m, n, r) = shape(&mut rng, 14);
            let a = random_int_matrix(&mut rng, m, n, r, 9);
            let block = [1, 2, 5, 64][trial % 4];
            check_zp(&f, p, &a, &opts(block, Parallelism::None), |x| x, &mut rng);
        }
    }
}

/// Larger matrices: several panels, the delayed-reduction kernel with many products per
/// row, the parallel path; entries spread over all of Z/p.
#[test]
fn zp_larger_matrices_and_parallel_path() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for &(m, n, r, p) in &[
        (150, 170, 120, 2147483647u64),
        (170, 150, 150, 998244353),
        (200, 200, 200, 3),
        (120, 130, 100, 2),
    ] {
        let a = random_int_matrix(&mut rng, m, n, r, 1000);
        let (refm, refp) = ref_rref_modp(&a, p);
        for par in [Parallelism::None, Parallelism::Rayon] {
            for block in [16, 64] {
                let f = Zp32::new(p as u32).unwrap();
                let mut x = to_field(&f, &a);
                let e = echelonize(
                    &f,
                    &mut x,
                    &EchelonOptions {
                        block,
                        parallelism: par,
                        ..Default::default()
                    },
                );
                assert_eq!(e.pivots, refp);
                let got: Vec<Vec<u64>> = (0..m)
                    .map(|i| x.row(i).iter().map(|&v| v as u64).collect())
                    .collect();
                assert_eq!(got, refm, "Zp32 p = {p} {m}×{n} block {block} {par:?}");
                let g = Zp64::new(p).unwrap();
                let mut y = to_field(&g, &a);
                let e = echelonize(
                    &g,
                    &mut y,
                    &EchelonOptions {
                        block,
                        parallelism: par,
                        ..Default::default()
                    },
                );
                assert_eq!(e.pivots, refp);
                let got: Vec<Vec<u64>> = (0..m).map(|i| y.row(i).to_vec()).collect();
                assert_eq!(got, refm, "Zp64 p = {p} {m}×{n} block {block} {par:?}");
            }
        }
    }
    // Full-range residues (not lifts of small integers) for the 62-bit prime and the
    // delayed reduction at p = 2^31 − 1: A·A^{-1} = I, parallel update on 300 × 300.
    let f = Zp32::new(2147483647).unwrap();
    let a = Matrix::from_fn(300, 300, |_, _| rng.random_range(0..2147483647u32));
    let x =
        inverse(&f, &a, &EchelonOptions::default()).expect("random matrix mod 2^31−1 is regular");
    assert_eq!(a.mul(&f, &x), Matrix::identity(&f, 300));
    let g = Zp64::new(P62).unwrap();
    let a = Matrix::from_fn(90, 90, |_, _| rng.random_range(0..P62));
    let x = inverse(&g, &a, &opts(16, Parallelism::None)).expect("regular");
    assert_eq!(a.mul(&g, &x), Matrix::identity(&g, 90));
}

/// For large p the Z/p RREF equals the rational RREF reduced mod p (when the pivots
/// agree, which they do for these random matrices with overwhelming probability).
#[test]
fn zp_agrees_with_rational_rref() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for trial in 0..30 {
        let (m, n, r) = shape(&mut rng, 10);
        let a = random_int_matrix(&mut rng, m, n, r, 20);
        let (q, qp) = ref_rref_q(&a);
        for p in [2147483647u64, P62] {
            let g = Zp64::new(p).unwrap();
            let mut x = to_field(&g, &a);
            let e = echelonize(&g, &mut x, &opts(1 + trial % 5, Parallelism::None));
            assert_eq!(e.pivots, qp, "rank mod {p} differs from rank over Q");
            for i in 0..m {
                for j in 0..n {
                    let num = modp(q[i][j].numer(), p);
                    let den = modp(q[i][j].denom(), p);
                    let want = (num as u128
                        * BigUint::from(den)
                            .modpow(&BigUint::from(p - 2), &BigUint::from(p))
                            .to_u64()
                            .unwrap() as u128
                        % p as u128) as u64;
                    assert_eq!(x.get(i, j), want);
                }
            }
        }
    }
}

// ------------------------------------------------------------------ floats --------------

fn max_abs_f64(a: &Matrix<f64>) -> f64 {
    a.data.iter().fold(0.0, |m, x| m.max(x.abs()))
}

#[test]
fn f64_rref_matches_rational_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for trial in 0..60 {
        let (m, n, r) = shape(&mut rng, 12);
        let a = random_int_matrix(&mut rng, m, n, r, 5);
        let (q, qp) = ref_rref_q(&a);
        let am = to_field(&F64, &a);
        let mut x = am.clone();
        let e = echelonize(&F64, &mut x, &opts(1 + trial % 4, Parallelism::None));
        assert_eq!(
            e.pivots, qp,
            "numerical pivots differ from exact ones, a = {a:?}"
        );
        let scale = 1.0
            + q.iter()
                .flatten()
                .map(|v| v.to_f64().unwrap().abs())
                .fold(0.0, f64::max);
        for i in 0..m {
            for j in 0..n {
                let want = q[i][j].to_f64().unwrap();
                assert!(
                    (x.get(i, j) - want).abs() <= 1e-9 * scale,
                    "({i},{j}): {} vs {want}",
                    x.get(i, j)
                );
            }
        }
        // Same on the complex type, with the matrix multiplied by a unit complex number
        // (the RREF does not change).
        let u = Complex64::from_polar(1.0, rng.random_range(0.0..std::f64::consts::TAU));
        let ac = Matrix::from_fn(m, n, |i, j| u * a[i][j] as f64);
        let mut y = ac.clone();
        let e = echelonize(&C64, &mut y, &opts(1 + trial % 3, Parallelism::None));
        assert_eq!(e.pivots, qp);
        for i in 0..m {
            for j in 0..n {
                let want = q[i][j].to_f64().unwrap();
                assert!((y.get(i, j) - want).norm() <= 1e-9 * scale);
            }
        }
    }
}

#[test]
fn f64_det_inverse_solve_residuals() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let eps = f64::EPSILON;
    for trial in 0..30 {
        let n = rng.random_range(1..60);
        let a = Matrix::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
        let opt = opts([4, 64][trial % 2], Parallelism::None);
        let x = inverse(&F64, &a, &opt).expect("random matrix is regular");
        let ax = a.mul(&F64, &x);
        let bound = 100.0 * n as f64 * eps * max_abs_f64(&a) * max_abs_f64(&x) * n as f64;
        for i in 0..n {
            for j in 0..n {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((ax.get(i, j) - want).abs() <= bound, "‖AX − I‖ too large");
            }
        }
        // det(A) · det(A^{-1}) = 1 and det of an integer matrix against Bareiss.
        let d = det(&F64, &a, &opt) * det(&F64, &x, &opt);
        assert!(
            (d - 1.0).abs() < 1e-8 * (1.0 + max_abs_f64(&x)).powi(2),
            "det(A)·det(A⁻¹) = {d}"
        );
        let ai: IntMat = (0..n.min(10))
            .map(|_| (0..n.min(10)).map(|_| rng.random_range(-9..=9)).collect())
            .collect();
        let di = bareiss_det(&ai).to_f64().unwrap();
        let got = det(&F64, &to_field(&F64, &ai), &opt);
        assert!(
            (got - di).abs() <= 1e-9 * di.abs().max(1.0) * 1e3,
            "det {got} vs {di}"
        );
        // Solve with several right-hand sides: residual ‖A X − B‖.
        let b = Matrix::from_fn(n, 3, |_, _| rng.random_range(-1.0..1.0));
        let Solution::Unique(xs) = solve(&F64, &a, &b, &opt) else {
            panic!("regular system not unique")
        };
        let r = a.mul(&F64, &xs);
        for k in 0..r.data.len() {
            assert!((r.data[k] - b.data[k]).abs() <= bound * (1.0 + max_abs_f64(&xs)));
        }
    }
    // Singular (rank-deficient) float matrices: no inverse, det 0, rank, null space.
    for _ in 0..20 {
        let (m, n, r) = shape(&mut rng, 15);
        let a = to_field(&F64, &random_int_matrix(&mut rng, m, n, r, 4));
        let opt = EchelonOptions::default();
        let rk = rank(&F64, &a, &opt);
        assert!(rk <= r);
        let nb = null_space(&F64, &a, &opt);
        assert_eq!(nb.cols, n - rk);
        let an = a.mul(&F64, &nb);
        assert!(max_abs_f64(&an) <= 1e-9 * (1.0 + max_abs_f64(&a)) * (1.0 + max_abs_f64(&nb)));
        if m == n && rk < n {
            assert!(inverse(&F64, &a, &opt).is_none());
            assert_eq!(det(&F64, &a, &opt), 0.0);
        }
        let (c, fm) = rank_factorization(&F64, &a, &opt);
        let cf = c.mul(&F64, &fm);
        for k in 0..cf.data.len() {
            assert!((cf.data[k] - a.data[k]).abs() <= 1e-9 * (1.0 + max_abs_f64(&a)));
        }
    }
}

#[test]
fn c64_inverse_and_inconsistent_solve() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..20 {
        let n = rng.random_range(1..40);
        let a = Matrix::from_fn(n, n, |_, _| {
            Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0))
        });
        let x = inverse(&C64, &a, &EchelonOptions::default()).expect("regular");
        let ax = a.mul(&C64, &x);
        let xn = x.data.iter().fold(0.0f64, |m, z| m.max(z.norm()));
        for i in 0..n {
            for j in 0..n {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((ax.get(i, j) - want).norm() <= 1e-12 * n as f64 * (1.0 + xn));
            }
        }
    }
    // x + y = 1, x + y = 2 has no solution; x + y = 1, 2x + 2y = 2 is a line.
    let one = Complex64::new(1.0, 0.0);
    let a = Matrix::from_vec(2, 2, vec![one, one, one, one]);
    let b = Matrix::from_vec(2, 1, vec![one, one * 2.0]);
    assert_eq!(
        solve(&C64, &a, &b, &EchelonOptions::default()),
        Solution::Inconsistent
    );
    assert_eq!(
        solve(
            &F64,
            &a.clone().map_re(),
            &b.clone().map_re(),
            &EchelonOptions::default()
        ),
        Solution::Inconsistent
    );
    let a2 = Matrix::from_vec(2, 2, vec![1.0, 1.0, 2.0, 2.0]);
    let b2 = Matrix::from_vec(2, 1, vec![1.0, 2.0]);
    match solve(&F64, &a2, &b2, &EchelonOptions::default()) {
        Solution::Affine {
            particular,
            null_basis,
        } => {
            assert_eq!(particular.data, vec![1.0, 0.0]);
            assert_eq!(null_basis.data, vec![-1.0, 1.0]);
        }
        s => panic!("{s:?}"),
    }
    // A tolerance above the perturbation makes a nearly singular matrix singular.
    let a3 = Matrix::from_vec(2, 2, vec![1.0, 1.0, 1.0, 1.0 + 1e-10]);
    assert_eq!(rank(&F64, &a3, &EchelonOptions::default()), 2);
    assert_eq!(
        rank(
            &F64,
            &a3,
            &EchelonOptions {
                tolerance: Tolerance::Absolute(1e-8),
                ..Default::default()
            }
        ),
        1
    );
}

trait MapRe {
    fn map_re(self) -> Matrix<f64>;
}
impl MapRe for Matrix<Complex64> {
    fn map_re(self) -> Matrix<f64> {
        Matrix::from_vec(
            self.rows,
            self.cols,
            self.data.iter().map(|z| z.re).collect(),
        )
    }
}

// ------------------------------------------------------------------ Matrix Market -------

#[test]
fn mtx_reader_layouts_and_errors() {
    let f = Zp32::new(7).unwrap();
    // array is column-major; integers of any size are reduced exactly; negatives mapped.
    let t = "%%MatrixMarket matrix array integer general\n% c\n2 2\n1\n-1\n123456789012345678901234567890\n0\n";
    let d = mtx::parse(t, "a.mtx").unwrap();
    let big = BigInt::parse_bytes(b"123456789012345678901234567890", 10).unwrap();
    assert_eq!(
        d.to_zp32(&f).unwrap().data,
        vec![1, modp(&big, 7) as u32, 6, 0]
    );
    assert_eq!(d.to_f64().unwrap().data[2], -1.0);
    // coordinate symmetric / skew-symmetric are expanded.
    let t = "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 2.5\n3 3 -1\n";
    let d = mtx::parse(t, "s.mtx").unwrap();
    assert_eq!(
        d.to_f64().unwrap().data,
        vec![0.0, 2.5, 0.0, 2.5, 0.0, 0.0, 0.0, 0.0, -1.0]
    );
    let t = "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 3\n";
    assert_eq!(
        mtx::parse(t, "k.mtx").unwrap().to_f64().unwrap().data,
        vec![0.0, -3.0, 3.0, 0.0]
    );
    let t = "%%MatrixMarket matrix array complex general\n1 2\n1 2\n3.5 -4\n";
    let d = mtx::parse(t, "c.mtx").unwrap();
    assert_eq!(
        d.to_c64().unwrap().data,
        vec![Complex64::new(1.0, 2.0), Complex64::new(3.5, -4.0)]
    );
    assert!(d.to_zp32(&f).is_err(), "complex with --prime must fail");
    // Errors name the file and the line.
    let cases = [
        (
            "%%MatrixMarket matrix coordinate integer general\n2 2 1\n3 1 5\n",
            "bad.mtx:3:",
            "out of range",
        ),
        (
            "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 2.5\n",
            "bad.mtx:3:5",
            "not an integer",
        ),
        (
            "%%MatrixMarket matrix array real general\n2 2\n1\n2\nx\n4\n",
            "bad.mtx:5:",
            "not a finite real",
        ),
        (
            "%%MatrixMarket matrix array real general\n2 2\n1\n2\n",
            "bad.mtx:",
            "2 values found, 4 expected",
        ),
        (
            "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1\n2 2 1\n",
            "bad.mtx:4:",
            "more entries",
        ),
        (
            "%%MatrixMarket vector array real general\n2\n",
            "bad.mtx:1:",
            "unsupported object",
        ),
        ("hello\n", "bad.mtx:1:", "header"),
        (
            "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n",
            "bad.mtx:3:",
            "above the diagonal",
        ),
    ];
    for (text, place, cause) in cases {
        let e = mtx::parse(text, "bad.mtx").unwrap_err().to_string();
        assert!(
            e.starts_with(place) && e.contains(cause),
            "{e:?} should start with {place:?} and mention {cause:?}"
        );
    }
}

#[test]
fn mtx_writer_round_trip() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let a = Matrix::from_fn(5, 3, |_, _| {
        rng.random_range(-1e6..1e6) * 10f64.powi(rng.random_range(-30..30))
    });
    let mut buf = Vec::new();
    mtx::write_array(&mut buf, &a, "real", "comment\nline 2", mtx::fmt_f64).unwrap();
    let d = mtx::parse(std::str::from_utf8(&buf).unwrap(), "rt.mtx").unwrap();
    assert_eq!(d.to_f64().unwrap(), a);
}

// ------------------------------------------------------------------ CLI -----------------

fn read_ints(path: &str) -> IntMat {
    let text = std::fs::read_to_string(path).unwrap();
    let d = mtx::parse(&text, path).unwrap();
    let m = d.to_f64().unwrap();
    (0..m.rows)
        .map(|i| m.row(i).iter().map(|&x| x as i64).collect())
        .collect()
}

#[test]
fn cli_rref_on_small_file() {
    let bin = env!("CARGO_BIN_EXE_pathtrack");
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/rref_small.mtx");
    let a = read_ints(file);
    for p in [2u64, 7, 2147483647, P62] {
        let (refm, refp) = ref_rref_modp(&a, p);
        let out = std::process::Command::new(bin)
            .args(["rref", file, "--prime", &p.to_string(), "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["rank"].as_u64().unwrap() as usize, refp.len());
        let piv: Vec<usize> = v["pivots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(piv, refp);
        assert!(v["seconds"].as_f64().unwrap() >= 0.0);
        assert_eq!(v.as_object().unwrap().len(), 3);
        // Matrix Market output on stdout: entries in [0, p), zero rows at the bottom.
        let out = std::process::Command::new(bin)
            .args(["rref", file, "--prime", &p.to_string()])
            .output()
            .unwrap();
        assert!(out.status.success());
        let d = mtx::parse(std::str::from_utf8(&out.stdout).unwrap(), "stdout").unwrap();
        let g = Zp64::new(p).unwrap();
        let got = d.to_zp64(&g).unwrap();
        for i in 0..got.rows {
            assert_eq!(got.row(i).to_vec(), refm[i]);
        }
    }
    // Float path with -o: RREF over Q (rank 3: row 4 = row 1 + row 2).
    let dir = std::env::temp_dir().join(format!("pathtrack-rref-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let outp = dir.join("r.mtx");
    let st = std::process::Command::new(bin)
        .args(["rref", file, "-o", outp.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(st.success());
    let got = mtx::parse(&std::fs::read_to_string(&outp).unwrap(), "r.mtx")
        .unwrap()
        .to_f64()
        .unwrap();
    let (q, _) = ref_rref_q(&a);
    for i in 0..got.rows {
        for j in 0..got.cols {
            assert!((got.get(i, j) - q[i][j].to_f64().unwrap()).abs() < 1e-12);
        }
    }
    // Errors: --tol with --prime (CUDA backend), real input with --prime, a missing file, a composite prime.
    let real = dir.join("real.mtx");
    std::fs::write(
        &real,
        "%%MatrixMarket matrix array real general\n1 1\n0.5\n",
    )
    .unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                file.into(),
                "--backend".into(),
                "cuda".into(),
                "--prime".into(),
                "7".into(),
                "--tol".into(),
                "0.1".into(),
            ],
            "floats only",
        ),
        (
            vec![real.to_str().unwrap().into(), "--prime".into(), "7".into()],
            "real.mtx",
        ),
        (
            vec![dir.join("missing.mtx").to_str().unwrap().into()],
            "missing.mtx",
        ),
        (
            vec![file.into(), "--prime".into(), "91".into()],
            "not a prime",
        ),
    ];
    for (args, msg) in cases {
        let out = std::process::Command::new(bin)
            .arg("rref")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(msg), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Timing table (`cargo test --release --test linalg_rref -- --ignored --nocapture`).
#[test]
#[ignore]
fn bench_table() {
    for n in [500, 1000, 2000] {
        rref::bench::run(n, 2147483647).unwrap();
    }
}

/// Rows scaled by 10^{±150}: row scaling keeps the rank and the RREF; det is corrected.
#[test]
fn f64_badly_scaled_rows() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for _ in 0..20 {
        let (m, n, r) = shape(&mut rng, 10);
        let a = random_int_matrix(&mut rng, m, n, r, 6);
        let (q, qp) = ref_rref_q(&a);
        let scales: Vec<f64> = (0..m)
            .map(|_| 10f64.powi(rng.random_range(-150..=150)))
            .collect();
        let am = Matrix::from_fn(m, n, |i, j| a[i][j] as f64 * scales[i]);
        let mut x = am.clone();
        let e = echelonize(&F64, &mut x, &EchelonOptions::default());
        assert_eq!(e.pivots, qp);
        for i in 0..m {
            for j in 0..n {
                let want = q[i][j].to_f64().unwrap();
                assert!((x.get(i, j) - want).abs() <= 1e-9 * (1.0 + want.abs()) * 1e3);
            }
        }
        if m == n {
            let d = det(&F64, &am, &EchelonOptions::default());
            let want = bareiss_det(&a).to_f64().unwrap() * scales.iter().product::<f64>();
            assert!(
                (d - want).abs() <= 1e-9 * want.abs().max(f64::MIN_POSITIVE),
                "det {d} vs {want}"
            );
        }
    }
}

/// The column-block distribution of the many-right-hand-side solve, run on CPU threads
/// (`multi::solve_blocks_cpu`, the same code path as the multi-GPU solve): equal to the
/// one-piece `solve` (exactly over Z/p; within rounding for floats) for 1..4 blocks,
/// including uneven and empty blocks; errors as `Result`s.
#[test]
fn many_rhs_column_blocks_on_cpu_threads() {
    use pathtrack::linalg::rref::multi::{solve_blocks_cpu, split_columns};
    assert_eq!(split_columns(7, 3), vec![(0, 3), (3, 5), (5, 7)]);
    assert_eq!(split_columns(1, 3), vec![(0, 1), (1, 1), (1, 1)]);
    assert_eq!(split_columns(300, 2), vec![(0, 150), (150, 300)]);
    let mut rng = ChaCha8Rng::seed_from_u64(93);
    let p = 2_147_483_647u32;
    let f = Zp32::new(p).unwrap();
    let opt = EchelonOptions::default();
    for n in [1usize, 5, 40] {
        for m in [1usize, 7, 300] {
            let a = Matrix::from_fn(n, n, |_, _| rng.random_range(0..p));
            let b = Matrix::from_fn(n, m, |_, _| rng.random_range(0..p));
            let Solution::Unique(x0) = solve(&f, &a, &b, &opt) else {
                panic!("random A singular mod 2^31 - 1")
            };
            let af = Matrix::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0f64));
            let bf = Matrix::from_fn(n, m, |_, _| rng.random_range(-1.0..1.0f64));
            let Solution::Unique(xf0) = solve(&F64, &af, &bf, &opt) else {
                panic!("random float A singular")
            };
            for parts in 1..=4 {
                let (x, t) = solve_blocks_cpu(&f, &a, &b, parts).unwrap();
                assert_eq!(x, x0, "zp n={n} m={m} parts={parts}");
                assert_eq!(t.columns.iter().sum::<usize>(), m);
                let (xf, _) = solve_blocks_cpu(&F64, &af, &bf, parts).unwrap();
                let d = xf
                    .data
                    .iter()
                    .zip(&xf0.data)
                    .fold(0.0f64, |s, (u, v)| s.max((u - v).abs()));
                let sc = max_abs_f64(&xf0).max(1.0);
                assert!(d <= 1e-9 * sc, "f64 n={n} m={m} parts={parts}: {d:e}");
            }
        }
    }
    // Errors: non-square A, row mismatch, singular A, no blocks.
    let a = Matrix::from_fn(3, 2, |i, j| (i + j) as u32);
    let b = Matrix::from_fn(3, 2, |_, _| 1u32);
    assert!(format!("{}", solve_blocks_cpu(&f, &a, &b, 2).unwrap_err()).contains("not square"));
    let a = Matrix::from_fn(2, 2, |i, j| (i + j) as u32);
    assert!(format!("{}", solve_blocks_cpu(&f, &a, &b, 2).unwrap_err()).contains("B has 3"));
    let a = Matrix::from_fn(3, 3, |i, j| (i + j) as u32); // rank 2
    let e = solve_blocks_cpu(&f, &a, &b, 3).unwrap_err();
    assert!(format!("{e}").contains("singular (rank 2 < 3)"), "{e}");
    let e = solve_blocks_cpu(&f, &a, &Matrix::from_fn(3, 0, |_, _| 0u32), 2).unwrap_err();
    assert!(format!("{e}").contains("singular"), "{e}");
    assert!(solve_blocks_cpu(&f, &a, &b, 0).is_err());
}
