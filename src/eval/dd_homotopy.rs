//! A homotopy and its derivatives at one point in double-double arithmetic:
//!
//! `h_k = Σ c·y^a·e^{τω}`, `∂h_k/∂y_j = Σ c·a_j·y^{a−e_j}·e^{τω}`, `∂h_k/∂τ = Σ c·ω·y^a·e^{τω}`,
//!
//! for real `τ` (near t = 1, where `τω` is small) with `τω` exact in double-double and `ω`
//! the path's own lift of the term's column (polyhedral cells) or the homotopy's. Each term
//! keeps only its nonzero exponents, so a term costs a few products whatever `n`. Used by
//! Newton at t = 1 ([`crate::post::dd_newton`]) and by tracking the last stretch of a path
//! in double-double ([`crate::track::dd`]).

use super::dd::{exp_tau_omega, Cdd, Dd};
use crate::homotopy::Homotopy;
use crate::linalg::dd_lu::DdLu;
use num_complex::Complex64 as C64;

/// One term: coefficient, column of `Â` (for its lift), nonzero exponents `(j, a_j)`.
struct Term {
    coeff: Cdd,
    column: usize,
    exponents: Vec<(usize, u32)>,
}

/// The homotopy's terms with double-double coefficients.
pub struct DdHomotopy {
    n: usize,
    nh: usize,
    equations: Vec<Vec<Term>>,
    /// Largest exponent of each coordinate (the powers computed per point).
    top: Vec<u32>,
    /// The homotopy's lift of every column.
    lifts: Vec<f64>,
}

/// Values and derivatives at one point, and the solve's scratch.
pub struct DdValues {
    /// `h_k`, n values.
    pub h: Vec<Cdd>,
    /// `∂h_k/∂y_j`, n × nh row-major.
    pub jac: Vec<Cdd>,
    /// `∂h_k/∂τ`, n values.
    pub dtau: Vec<Cdd>,
    powers: Vec<Vec<Cdd>>,
    /// `c·e^{τω}` of every column at the τ and lift row of `coeffs_at`: Newton's iterations
    /// and the RK4 predictor's middle stages evaluate at one τ several times, and the
    /// exponentials were most of an evaluation's cost on chandra-n (a lift per term).
    coeffs: Vec<Cdd>,
    coeffs_at: Option<(u64, usize)>,
    /// A term's partial products from the left and from the right.
    prefix: Vec<Cdd>,
    suffix: Vec<Cdd>,
    a: Vec<Cdd>,
    b: Vec<Cdd>,
    lu: DdLu,
}

const ONE: C64 = C64::new(1.0, 0.0);

impl DdHomotopy {
    /// `None` for a Laurent homotopy (negative exponents): not supported here.
    pub fn new(h: &Homotopy) -> Option<DdHomotopy> {
        let nh = h.nh();
        let mut top = vec![0u32; nh];
        let mut column = 0;
        let mut equations = Vec::with_capacity(h.n);
        for eq in &h.equations {
            let mut terms = Vec::with_capacity(eq.len());
            for t in eq {
                let mut exponents = Vec::new();
                for (j, &e) in t.exponents.iter().enumerate() {
                    let e = u32::try_from(e).ok()?;
                    if e > 0 {
                        top[j] = top[j].max(e);
                        exponents.push((j, e));
                    }
                }
                terms.push(Term {
                    coeff: Cdd::from(t.coeff).add(Cdd::from(t.coeff_lo)),
                    column,
                    exponents,
                });
                column += 1;
            }
            equations.push(terms);
        }
        Some(DdHomotopy {
            n: h.n,
            nh,
            equations,
            top,
            lifts: h.lifts(),
        })
    }

    /// Homogeneous coordinates `n + 1`.
    pub fn nh(&self) -> usize {
        self.nh
    }

    /// Buffers for [`DdHomotopy::eval`].
    pub fn values(&self) -> DdValues {
        DdValues {
            h: vec![Cdd::ZERO; self.n],
            jac: vec![Cdd::ZERO; self.n * self.nh],
            dtau: vec![Cdd::ZERO; self.n],
            powers: self
                .top
                .iter()
                .map(|&t| vec![Cdd::ZERO; t as usize + 1])
                .collect(),
            coeffs: vec![Cdd::ZERO; self.lifts.len()],
            coeffs_at: None,
            prefix: vec![Cdd::ZERO; self.nh + 1],
            suffix: vec![Cdd::ZERO; self.nh + 1],
            a: vec![Cdd::ZERO; self.nh * self.nh],
            b: vec![Cdd::ZERO; self.nh * 2],
            lu: DdLu::default(),
        }
    }

    /// Values and derivatives at `(y, τ)`; `lifts`: the path's own lift row, else the
    /// homotopy's. False where `e^{τω}` leaves double range.
    pub fn eval(&self, y: &[Cdd], tau: f64, lifts: Option<&[f64]>, out: &mut DdValues) -> bool {
        let nh = self.nh;
        for (j, pw) in out.powers.iter_mut().enumerate() {
            pw[0] = Cdd::from(ONE);
            for e in 1..pw.len() {
                pw[e] = if e == 1 { y[j] } else { pw[e - 1].mul(y[j]) };
            }
        }
        // The terms' coefficients at τ (`lifts` is the same row for the life of `out`, or
        // its address tells).
        let key = (tau.to_bits(), lifts.map_or(0, |l| l.as_ptr() as usize));
        if out.coeffs_at != Some(key) {
            out.coeffs_at = None;
            for t in self.equations.iter().flatten() {
                let om = lifts.map_or(self.lifts[t.column], |l| l[t.column]);
                out.coeffs[t.column] = if om == 0.0 || tau == 0.0 {
                    t.coeff
                } else {
                    match exp_tau_omega(C64::new(tau, 0.0), om) {
                        Some(e) => t.coeff.mul(e),
                        None => return false,
                    }
                };
            }
            out.coeffs_at = Some(key);
        }
        out.jac.iter_mut().for_each(|z| *z = Cdd::ZERO);
        let (prefix, suffix) = (&mut out.prefix, &mut out.suffix);
        for (k, eq) in self.equations.iter().enumerate() {
            let (mut hk, mut dk) = (Cdd::ZERO, Cdd::ZERO);
            for t in eq {
                let om = lifts.map_or(self.lifts[t.column], |l| l[t.column]);
                let m = t.exponents.len();
                // prefix[i] = c·y_0^{a_0}⋯ (the first i factors), suffix[i] = the factors
                // from i on: the monomial is prefix[m], and ∂/∂y_j of the i-th factor's
                // variable is prefix[i]·suffix[i+1]·a_j·y_j^{a_j−1}.
                prefix[0] = out.coeffs[t.column];
                for (i, &(j, e)) in t.exponents.iter().enumerate() {
                    prefix[i + 1] = prefix[i].mul_fast(out.powers[j][e as usize]);
                }
                for (i, &(j, e)) in t.exponents.iter().enumerate().skip(1).rev() {
                    let p = out.powers[j][e as usize];
                    suffix[i] = if i + 1 < m {
                        p.mul_fast(suffix[i + 1])
                    } else {
                        p
                    };
                }
                let mono = prefix[m];
                hk = hk.add_fast(mono);
                if om != 0.0 {
                    dk = dk.add_fast(mono.mul_real(Dd::from(om)));
                }
                for (i, &(j, e)) in t.exponents.iter().enumerate() {
                    let mut d = if i + 1 < m {
                        prefix[i].mul_fast(suffix[i + 1])
                    } else {
                        prefix[i]
                    };
                    if e > 1 {
                        d = d
                            .mul_real(Dd::from(e as f64))
                            .mul_fast(out.powers[j][e as usize - 1]);
                    }
                    out.jac[k * nh + j] = out.jac[k * nh + j].add_fast(d);
                }
            }
            out.h[k] = hk;
            out.dtau[k] = dk;
        }
        true
    }
}

impl DdValues {
    /// Solves `[∂H/∂y; ℓ] [N E] = [−H  −∂H/∂τ; r  0]` (the Newton step `N` on the patch
    /// `ℓ·(y + N) = ℓ·y + r`, and with `euler` the Euler direction `E = dy/dτ`, `ℓ·E = 0`) by
    /// [`DdLu::solve`]; false when the matrix is singular.
    pub fn solve(
        &mut self,
        patch: &[Cdd],
        r: Cdd,
        euler: bool,
        newton_out: &mut [Cdd],
        euler_out: &mut [Cdd],
    ) -> bool {
        let nh = patch.len();
        let n = nh - 1;
        let k = if euler { 2 } else { 1 };
        self.fill_matrix(patch);
        let (a, b) = (&mut self.a, &mut self.b);
        for i in 0..n {
            b[i * k] = self.h[i].neg();
            if euler {
                b[i * k + 1] = self.dtau[i].neg();
            }
        }
        b[n * k] = r;
        if euler {
            b[n * k + 1] = Cdd::ZERO;
        }
        if !self.lu.solve(nh, k, a, &mut b[..nh * k]) {
            return false;
        }
        for j in 0..nh {
            newton_out[j] = b[j * k];
            if euler {
                euler_out[j] = b[j * k + 1];
            }
        }
        true
    }

    /// [`condition_estimate`](crate::linalg::dd_lu::condition_estimate) of
    /// `[∂H/∂y; ℓ]` at the last evaluated point (`ℓ`: the patch).
    pub fn condition(&mut self, patch: &[Cdd]) -> f64 {
        self.fill_matrix(patch);
        crate::linalg::dd_lu::condition_estimate(patch.len(), &self.a, &mut self.lu)
    }

    /// `a ← [∂H/∂y; ℓ]` (`ℓ`: the patch).
    fn fill_matrix(&mut self, patch: &[Cdd]) {
        let n = patch.len() - 1;
        self.a[..n * patch.len()].copy_from_slice(&self.jac);
        self.a[n * patch.len()..].copy_from_slice(patch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `∂h/∂y_j` by prefix and suffix products equals the product rule term by term
    /// (`c·a_j·y_j^{a_j−1}·Π_{l≠j} y_l^{a_l}`, each power by repeated squaring) to
    /// double-double accuracy, for terms in up to four variables with exponents up to 3, and
    /// `h` and `∂h/∂τ` likewise.
    #[test]
    fn derivatives_follow_the_product_rule() {
        let c = |re: f64, im: f64| C64::new(re, im);
        let terms = vec![
            (c(1.0, 0.5), vec![1, 2, 3, 1], 3.0),
            (c(-0.7, 0.2), vec![0, 1, 1, 1], 0.0),
            (c(0.3, -1.1), vec![2, 0, 0, 0], 1.5),
            (c(0.9, 0.1), vec![1, 1, 0, 2], 0.25),
            (c(-1.2, 0.0), vec![0, 0, 0, 0], 0.0),
        ];
        let h = Homotopy::from_affine_terms(4, vec![terms.clone(); 4]);
        let dd = DdHomotopy::new(&h).expect("polynomial");
        let y: Vec<Cdd> = [
            c(0.3, 0.2),
            c(-0.5, 0.1),
            c(0.8, -0.4),
            c(1.1, 0.3),
            c(0.7, 0.0),
        ]
        .iter()
        .map(|&z| Cdd::from(z))
        .collect();
        let tau = -0.3;
        let mut v = dd.values();
        assert!(dd.eval(&y, tau, None, &mut v));
        let nh = dd.nh();
        let hom = &h.equations[0];
        let (mut want_h, mut want_dtau) = (Cdd::ZERO, Cdd::ZERO);
        let mut want_jac = vec![Cdd::ZERO; nh];
        for (col, t) in hom.iter().enumerate() {
            let om = dd.lifts[col];
            let coeff = dd.equations[0][col]
                .coeff
                .mul(crate::eval::dd::exp_tau_omega(C64::new(tau, 0.0), om).expect("in range"));
            let mono = |skip: Option<usize>| {
                t.exponents.iter().enumerate().fold(coeff, |m, (j, &e)| {
                    let e = if Some(j) == skip { e - 1 } else { e };
                    m.mul(y[j].powi(e as u32))
                })
            };
            want_h = want_h.add(mono(None));
            want_dtau = want_dtau.add(mono(None).mul_real(Dd::from(om)));
            for (j, &e) in t.exponents.iter().enumerate() {
                if e > 0 {
                    want_jac[j] = want_jac[j].add(mono(Some(j)).mul_real(Dd::from(e as f64)));
                }
            }
        }
        let close = |got: Cdd, want: Cdd| {
            let d = got.sub(want).to_c64().norm();
            assert!(
                d <= 1e-29 * want.to_c64().norm().max(1.0),
                "{got:?} vs {want:?}"
            );
        };
        for k in 0..4 {
            close(v.h[k], want_h);
            close(v.dtau[k], want_dtau);
            for (got, &want) in v.jac[k * nh..(k + 1) * nh].iter().zip(&want_jac) {
                close(*got, want);
            }
        }
    }

    /// The cached coefficients `c·e^{τω}` follow τ and the lift row: evaluations at τ₁, τ₂,
    /// τ₁ again and with another lift row are bit for bit those of fresh buffers.
    #[test]
    fn cached_coefficients_follow_tau_and_the_lift_row() {
        let c = |re: f64, im: f64| C64::new(re, im);
        let h = Homotopy::from_affine_terms(
            2,
            vec![
                vec![
                    (c(1.0, 0.5), vec![2, 0], 3.0),
                    (c(-0.7, 0.2), vec![1, 1], 0.0),
                    (c(0.3, -1.1), vec![0, 0], 1.5),
                ],
                vec![
                    (c(0.9, 0.1), vec![0, 2], 2.0),
                    (c(0.4, 0.4), vec![1, 0], 0.5),
                    (c(-1.2, 0.0), vec![0, 0], 0.0),
                ],
            ],
        );
        let dd = DdHomotopy::new(&h).expect("polynomial");
        let y: Vec<Cdd> = [c(0.3, 0.2), c(-0.5, 0.1), c(0.8, 0.0)]
            .iter()
            .map(|&z| Cdd::from(z))
            .collect();
        let other: Vec<f64> = (0..6).map(|i| 0.25 * i as f64).collect();
        let fresh = |tau: f64, lifts: Option<&[f64]>| {
            let mut v = dd.values();
            assert!(dd.eval(&y, tau, lifts, &mut v));
            (v.h, v.jac, v.dtau)
        };
        let mut v = dd.values();
        for (tau, lifts) in [
            (-1e-3, None),
            (-2e-3, None),
            (-1e-3, None),
            (-1e-3, Some(&other[..])),
            (0.0, Some(&other[..])),
            (-2e-3, None),
        ] {
            assert!(dd.eval(&y, tau, lifts, &mut v));
            let (h, jac, dtau) = fresh(tau, lifts);
            let bits = |z: &[Cdd]| -> Vec<(Dd, Dd)> { z.iter().map(|w| (w.re, w.im)).collect() };
            assert_eq!(bits(&v.h), bits(&h), "τ = {tau}");
            assert_eq!(bits(&v.jac), bits(&jac), "τ = {tau}");
            assert_eq!(bits(&v.dtau), bits(&dtau), "τ = {tau}");
        }
    }
}
