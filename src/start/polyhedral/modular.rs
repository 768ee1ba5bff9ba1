//! Determinants and Hermite normal forms of integer matrices by modular arithmetic (the
//! row-reduction engine over Z/p, `u64` words), for the binomial start systems.
//!
//! * [`det_modular`]: `det V` from `det V mod p` for 62-bit primes `p₁, p₂, …`
//!   ([`crate::linalg::rref::det`] over [`Zp64`]), combined by the Chinese remainder theorem
//!   until `M = Π pᵢ > 2·Πₖ‖vₖ‖₂` (Hadamard's bound, tested exactly as
//!   `M² > 4·Πₖ‖vₖ‖₂²`); the residue in `(−M/2, M/2]` is `det V`.
//! * [`hermite_mod`]: the row Hermite normal form `H` of a nonsingular `V` computed modulo
//!   `D = |det V|` (Domich, Kannan, Trotter 1987; Cohen, *A Course in Computational
//!   Algebraic Number Theory*, Alg. 2.4.8): every entry stays in `[0, R)`, `R | D`.
//! * [`unimodular_modular`]: `U = H V⁻¹` (the unique `U` with `U V = H`) from
//!   `Vᵀ Uᵀ = Hᵀ mod p` and CRT, with `|U_ij| ≤ n·Πₖ‖vₖ‖₂` (`U = H·adj V / D`,
//!   `0 ≤ H_ik ≤ D`, adjugate entries are (n−1)-minors).
//! * [`hermite_modular`]: `(U, H)` as [`super::binomial::hermite`] returns them.

use super::CellError;
use crate::linalg::rref::{self, EchelonOptions, Matrix, Parallelism, Solution, Zp64};
use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::sync::Mutex;

/// Primes below 2^62, descending, with their fields (extended on demand).
static PRIMES: Mutex<Vec<Zp64>> = Mutex::new(Vec::new());

/// The `i`-th prime below 2^62 (descending) as a field.
fn prime_field(i: usize) -> Zp64 {
    let mut v = PRIMES.lock().unwrap_or_else(|e| e.into_inner());
    while v.len() <= i {
        let mut c = v.last().map_or((1u64 << 62) - 1, |f| f.prime() - 2);
        loop {
            if let Ok(f) = Zp64::new(c) {
                v.push(f);
                break;
            }
            c -= 2;
        }
    }
    v[i].clone()
}

fn opts() -> EchelonOptions {
    EchelonOptions {
        parallelism: Parallelism::None,
        ..Default::default()
    }
}

/// `Πₖ ‖vₖ‖₂²` (squared Hadamard bound) exactly.
fn hadamard_sq(v: &[Vec<i64>]) -> BigUint {
    v.iter()
        .map(|r| {
            r.iter().fold(BigUint::zero(), |s, &x| {
                s + BigUint::from(x.unsigned_abs()).pow(2)
            })
        })
        .product()
}

/// Chinese remaindering of a vector of residues: `values[i] ∈ [0, modulus)`.
struct Crt {
    modulus: BigUint,
    values: Vec<BigUint>,
}

impl Crt {
    fn new(len: usize) -> Crt {
        Crt {
            modulus: BigUint::one(),
            values: vec![BigUint::zero(); len],
        }
    }

    /// Adds the residues `r` modulo the prime `p` (coprime to the modulus so far):
    /// `x ← x + M·((r − x)·M⁻¹ mod p)`, `M ← M·p`.
    fn add(&mut self, p: u64, r: &[u64]) {
        let pm = |a: u128, b: u128| a * b % p as u128;
        let m_mod = (&self.modulus % p).to_u64().unwrap_or(0) as u128;
        // M⁻¹ mod p by Fermat.
        let (mut b, mut e, mut inv) = (m_mod, p as u128 - 2, 1u128);
        while e > 0 {
            if e & 1 == 1 {
                inv = pm(inv, b);
            }
            b = pm(b, b);
            e >>= 1;
        }
        for (x, &ri) in self.values.iter_mut().zip(r) {
            let xm = (&*x % p).to_u64().unwrap_or(0) as u128;
            let t = pm((ri as u128 + p as u128 - xm) % p as u128, inv);
            *x += &self.modulus * BigUint::from(t as u64);
        }
        self.modulus *= p;
    }

    /// The residues in `(−M/2, M/2]`.
    fn symmetric(&self) -> Vec<BigInt> {
        let half = &self.modulus >> 1;
        self.values
            .iter()
            .map(|x| {
                if *x > half {
                    BigInt::from(x.clone()) - BigInt::from(self.modulus.clone())
                } else {
                    BigInt::from(x.clone())
                }
            })
            .collect()
    }

    /// `M² > bound_sq`.
    fn exceeds_sq(&self, bound_sq: &BigUint) -> bool {
        &self.modulus * &self.modulus > *bound_sq
    }
}

/// `V mod p` as an engine matrix.
fn reduce(f: &Zp64, v: &[Vec<i64>]) -> Matrix<u64> {
    let n = v.len();
    Matrix::from_fn(n, n, |i, j| {
        (v[i][j] as i128).rem_euclid(f.prime() as i128) as u64
    })
}

/// `det V` of a square integer matrix, exactly: determinants mod 62-bit primes by the Z/p
/// engine, CRT up to twice Hadamard's bound.
pub fn det_modular(v: &[Vec<i64>]) -> BigInt {
    let n = v.len();
    if n == 0 {
        return BigInt::one();
    }
    let had = hadamard_sq(v);
    if had.is_zero() {
        return BigInt::zero();
    }
    let bound = had * 4u32; // M² > 4·Π‖v‖² ⇔ M > 2·Π‖v‖
    let mut crt = Crt::new(1);
    let mut i = 0;
    while !crt.exceeds_sq(&bound) {
        let f = prime_field(i);
        let d = rref::det(&f, &reduce(&f, v), &opts());
        crt.add(f.prime(), &[d]);
        i += 1;
    }
    crt.symmetric().pop().unwrap_or_default()
}

/// Integer operations the modular Hermite form needs (`i128` when `D < 2^63`, so that
/// every product of two reduced entries and every sum of two such fits; `BigInt` beyond).
trait HInt: Clone + Integer + Signed + From<i64> {}
impl HInt for i128 {}
impl HInt for BigInt {}

/// `(g, s, t)` with `s·a + t·b = g = gcd(a, b) ≥ 0` for `a, b ≥ 0`; `|s| ≤ max(b, 1)`,
/// `|t| ≤ max(a, 1)`.
fn ext_gcd<T: HInt>(a: &T, b: &T) -> (T, T, T) {
    let (mut r0, mut r1) = (a.clone(), b.clone());
    let (mut s0, mut s1) = (T::one(), T::zero());
    let (mut t0, mut t1) = (T::zero(), T::one());
    while !r1.is_zero() {
        let q = r0.div_floor(&r1);
        let r2 = r0 - q.clone() * r1.clone();
        r0 = std::mem::replace(&mut r1, r2);
        let s2 = s0 - q.clone() * s1.clone();
        s0 = std::mem::replace(&mut s1, s2);
        let t2 = t0 - q * t1.clone();
        t0 = std::mem::replace(&mut t1, t2);
    }
    (r0, s0, t0)
}

/// Hermite form modulo `d = |det V| > 0` over the integer type `T`.
#[allow(clippy::needless_range_loop)] // two-row operations, indexed as in the formulas
fn hermite_mod_t<T: HInt>(v: &[Vec<i64>], d: T) -> Vec<Vec<T>> {
    let n = v.len();
    let mut a: Vec<Vec<T>> = v
        .iter()
        .map(|row| row.iter().map(|&x| T::from(x).mod_floor(&d)).collect())
        .collect();
    let mut h: Vec<Vec<T>> = vec![vec![T::zero(); n]; n];
    // Rows i.. of `a` with R·e_k (k ≥ i) generate L_i = {x ∈ L : x_0 = … = x_{i−1} = 0},
    // whose determinant is R = Π_{k≥i} H_kk (so R·Z^{n−i} ⊆ L_i).
    let mut r = d;
    let mut rs = Vec::with_capacity(n); // R after step i (R_{i+1})
    for i in 0..n {
        // Unimodular 2 × 2 steps clear column i below row i.
        for j in i + 1..n {
            if a[j][i].is_zero() {
                continue;
            }
            let (g, s, t) = ext_gcd(&a[i][i], &a[j][i]);
            let xg = a[i][i].div_floor(&g);
            let yg = a[j][i].div_floor(&g);
            for k in i..n {
                let (ri, rj) = (a[i][k].clone(), a[j][k].clone());
                a[i][k] = (s.clone() * ri.clone() + t.clone() * rj.clone()).mod_floor(&r);
                a[j][k] = (xg.clone() * rj - yg.clone() * ri).mod_floor(&r);
            }
        }
        // h_i = s·row_i + t·R·e_i with s·a_ii + t·R = gcd(a_ii, R) = H_ii.
        let (g, s, _) = ext_gcd(&a[i][i], &r);
        for k in i + 1..n {
            h[i][k] = (s.clone() * a[i][k].clone()).mod_floor(&r);
        }
        h[i][i] = g.clone();
        r = r.div_floor(&g);
        for row in a.iter_mut().skip(i + 1) {
            for x in row.iter_mut().skip(i + 1) {
                *x = x.mod_floor(&r);
            }
        }
        rs.push(r.clone());
    }
    // Entries above the diagonal into [0, H_kk), bottom row first; row i may be changed by
    // elements of L_{i+1} ⊇ R_{i+1}·Z^{n−i−1}, so it is kept reduced mod R_{i+1}.
    for i in (0..n).rev() {
        for k in i + 1..n {
            let q = h[i][k].div_floor(&h[k][k]);
            if q.is_zero() {
                continue;
            }
            h[i][k] = h[i][k].clone() - q.clone() * h[k][k].clone();
            for l in k + 1..n {
                let y = h[i][l].clone() - q.clone() * h[k][l].clone();
                h[i][l] = y.mod_floor(&rs[i]);
            }
        }
    }
    h
}

/// Row Hermite normal form `H` (upper triangular, `H_kk > 0`, `0 ≤ H_ik < H_kk` above the
/// diagonal) of a square `V` with `|det V| = d > 0`, computed modulo `d`.
pub fn hermite_mod(v: &[Vec<i64>], d: &BigInt) -> Vec<Vec<BigInt>> {
    match d.to_i128() {
        Some(x) if x < 1i128 << 63 => hermite_mod_t(v, x)
            .into_iter()
            .map(|r| r.into_iter().map(BigInt::from).collect())
            .collect(),
        _ => hermite_mod_t(v, d.abs()),
    }
}

/// `U = H V⁻¹` for a nonsingular `V` and its Hermite form `H`: `Vᵀ Uᵀ = Hᵀ` solved mod
/// 62-bit primes not dividing `det V` by the Z/p engine, CRT up to `2·n·Πₖ‖vₖ‖₂`.
pub fn unimodular_modular(v: &[Vec<i64>], h: &[Vec<BigInt>], det: &BigInt) -> Vec<Vec<BigInt>> {
    let n = v.len();
    let bound = hadamard_sq(v) * BigUint::from(4 * (n * n) as u64);
    let mut crt = Crt::new(n * n);
    let mut i = 0;
    while !crt.exceeds_sq(&bound) {
        let f = prime_field(i);
        i += 1;
        let p = f.prime();
        if (det % p).is_zero() {
            continue;
        }
        let vt = reduce(&f, v).transpose();
        let ht = Matrix::from_fn(n, n, |r, c| {
            (h[c][r].mod_floor(&BigInt::from(p))).to_u64().unwrap_or(0)
        });
        let Solution::Unique(ut) = rref::solve(&f, &vt, &ht, &opts()) else {
            continue; // unreachable: V is invertible mod p
        };
        crt.add(p, &ut.transpose().data);
    }
    let u = crt.symmetric();
    u.chunks(n.max(1)).map(|r| r.to_vec()).collect()
}

/// `(U, H)` with `U V = H` (row Hermite normal form, as [`super::binomial::hermite`]) by
/// the modular route: `D = |det V|` ([`det_modular`]), `H` modulo D ([`hermite_mod`]),
/// `U` mod primes ([`unimodular_modular`]). `i128` entries; errors for a singular `V` or
/// a `U` beyond `i128`.
#[allow(clippy::type_complexity)]
pub fn hermite_modular(v: &[Vec<i64>]) -> Result<(Vec<Vec<i128>>, Vec<Vec<i128>>), CellError> {
    let n = v.len();
    if v.iter().any(|r| r.len() != n) {
        return Err(CellError::Input(
            "Hermite normal form: matrix is not square".into(),
        ));
    }
    let det = det_modular(v);
    if det.is_zero() {
        return Err(CellError::Input(
            "binomial system: singular exponent matrix".into(),
        ));
    }
    let d = det.abs();
    let h = hermite_mod(v, &d);
    let u = unimodular_modular(v, &h, &det);
    let to = |m: Vec<Vec<BigInt>>, what: &str| {
        m.into_iter()
            .map(|r| r.iter().map(|x| x.to_i128()).collect::<Option<Vec<i128>>>())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                CellError::Internal(format!("Hermite normal form: {what} overflows i128"))
            })
    };
    Ok((to(u, "U")?, to(h, "H")?))
}
