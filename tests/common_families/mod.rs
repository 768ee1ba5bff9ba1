//! Benchmark families built from their definitions (test-local; the crate's generator is
//! written elsewhere).
#![allow(dead_code)]

use num_complex::Complex64;
use pathtrack::system::{Polynomial, System, Term};

pub fn term(c: f64, e: Vec<i32>) -> Term {
    Term {
        coeff: Complex64::new(c, 0.0),
        exponents: e,
    }
}

fn unit(n: usize, idx: &[usize]) -> Vec<i32> {
    let mut e = vec![0; n];
    for &i in idx {
        e[i] += 1;
    }
    e
}

pub fn system(name: &str, n: usize, eqs: Vec<Polynomial>) -> System {
    System {
        name: name.into(),
        description: String::new(),
        variables: (0..n).map(|i| format!("x{i}")).collect(),
        equations: eqs,
    }
}

/// cyclic-n: `Σ_i Π_{j<k} x_{(i+j) mod n}` for k = 1..n−1, and `Π x − 1`.
pub fn cyclic(n: usize) -> System {
    let mut eqs = Vec::new();
    for k in 1..n {
        let ts = (0..n).map(|i| {
            let idx: Vec<usize> = (0..k).map(|j| (i + j) % n).collect();
            term(1.0, unit(n, &idx))
        });
        eqs.push(Polynomial::from_terms(ts));
    }
    let all: Vec<usize> = (0..n).collect();
    eqs.push(Polynomial::from_terms([
        term(1.0, unit(n, &all)),
        term(-1.0, vec![0; n]),
    ]));
    system(&format!("cyclic-{n}"), n, eqs)
}

/// katsura-n in u0..un: `u0 + 2Σ u_i − 1`, and for m = 0..n−1
/// `Σ_{l=−n}^{n} u_|l| u_|m−l| − u_m` (`u_k = 0` for k > n).
pub fn katsura(n: usize) -> System {
    let nv = n + 1;
    let mut eqs = Vec::new();
    let mut first = vec![term(1.0, unit(nv, &[0])), term(-1.0, vec![0; nv])];
    for i in 1..=n {
        first.push(term(2.0, unit(nv, &[i])));
    }
    eqs.push(Polynomial::from_terms(first));
    for m in 0..n as i64 {
        let mut ts = Vec::new();
        for l in -(n as i64)..=(n as i64) {
            let a = l.unsigned_abs() as usize;
            let b = (m - l).unsigned_abs() as usize;
            if a <= n && b <= n {
                ts.push(term(1.0, unit(nv, &[a, b])));
            }
        }
        ts.push(term(-1.0, unit(nv, &[m as usize])));
        eqs.push(Polynomial::from_terms(ts));
    }
    system(&format!("katsura-{n}"), nv, eqs)
}

/// noon-n: `x_i Σ_{j≠i} x_j² − 1.1 x_i + 1`.
pub fn noon(n: usize) -> System {
    let eqs = (0..n)
        .map(|i| {
            let mut ts: Vec<Term> = (0..n)
                .filter(|&j| j != i)
                .map(|j| term(1.0, unit(n, &[i, j, j])))
                .collect();
            ts.push(term(-1.1, unit(n, &[i])));
            ts.push(term(1.0, vec![0; n]));
            Polynomial::from_terms(ts)
        })
        .collect();
    system(&format!("noon-{n}"), n, eqs)
}

/// eco-n (x_1..x_n): `(x_k + Σ_{i=1}^{n−k−1} x_i x_{i+k}) x_n − k`, k = 1..n−1;
/// `Σ_{i=1}^{n−1} x_i + 1`.
pub fn eco(n: usize) -> System {
    let xn = n - 1;
    let mut eqs = Vec::new();
    for k in 1..n {
        let mut ts = vec![term(1.0, unit(n, &[k - 1, xn]))];
        for i in 1..n - k {
            ts.push(term(1.0, unit(n, &[i - 1, i + k - 1, xn])));
        }
        ts.push(term(-(k as f64), vec![0; n]));
        eqs.push(Polynomial::from_terms(ts));
    }
    let mut ts: Vec<Term> = (0..n - 1).map(|i| term(1.0, unit(n, &[i]))).collect();
    ts.push(term(1.0, vec![0; n]));
    eqs.push(Polynomial::from_terms(ts));
    system(&format!("eco-{n}"), n, eqs)
}

/// chandra-n: `2n H_i − c H_i (1 + Σ_{j=1}^{n−1} i/(i+j) H_j) − 2n`, c = 0.51234.
pub fn chandra(n: usize) -> System {
    let c = 0.51234;
    let eqs = (1..=n)
        .map(|i| {
            let mut ts = vec![
                term(2.0 * n as f64 - c, unit(n, &[i - 1])),
                term(-2.0 * n as f64, vec![0; n]),
            ];
            for j in 1..n {
                ts.push(term(
                    -c * i as f64 / (i + j) as f64,
                    unit(n, &[i - 1, j - 1]),
                ));
            }
            Polynomial::from_terms(ts)
        })
        .collect();
    system(&format!("chandra-{n}"), n, eqs)
}

/// reimer-n: `Σ_i (−1)^{i+1} 2 x_i^k − 1`, k = 2..n+1.
pub fn reimer(n: usize) -> System {
    let eqs = (2..=n + 1)
        .map(|k| {
            let mut ts: Vec<Term> = (0..n)
                .map(|i| {
                    let mut e = vec![0; n];
                    e[i] = k as i32;
                    term(if i % 2 == 0 { 2.0 } else { -2.0 }, e)
                })
                .collect();
            ts.push(term(-1.0, vec![0; n]));
            Polynomial::from_terms(ts)
        })
        .collect();
    system(&format!("reimer-{n}"), n, eqs)
}

/// A system from explicit supports (coefficients 1).
pub fn from_supports(name: &str, sup: &[Vec<Vec<i32>>]) -> System {
    let n = sup.len();
    let eqs = sup
        .iter()
        .map(|pts| Polynomial::from_terms(pts.iter().map(|e| term(1.0, e.clone()))))
        .collect();
    system(name, n, eqs)
}
