//! A system in the flat layout of the device's Krawczyk kernel (kernels/certify.cu), the
//! kernel's source with the system's sizes, and the certificates read back from the
//! kernel's outputs. Nothing here needs a GPU: [`super::cuda`] uploads and launches, and
//! tests run the same source on the host with emulated directed rounding.
//!
//! Layout (the kernel's header says the same): one `i32` array
//! `[eq_start n+1][fac_start T+1][fac_var F][fac_exp F][pow_lo n][pow_hi n][pow_off n]`
//! and one `f64` array of the `T` coefficients (re, im). Per point the kernel writes a flag
//! word (bit 0 certified, bit 1 real), the radius and the enclosure `K(X)` (re.lo, re.hi,
//! im.lo, im.hi per coordinate).

use super::complex::{CBox, CInterval};
use super::interval::Interval;
use super::krawczyk::Certificate;
use crate::error::{Error, Result};
use crate::system::System;
use num_complex::Complex64 as C64;

/// The device kernel's source (without the size `#define`s).
pub const KERNEL_SOURCE: &str = include_str!("../../kernels/certify.cu");

/// The kernel's entry point.
pub const KERNEL_NAME: &str = "krawczyk_batch";

/// Flag bit: the point is certified.
pub const FLAG_CERTIFIED: i32 = 1;
/// Flag bit: its root is proven real.
pub const FLAG_REAL: i32 = 2;

/// A system flattened for the kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct PackedSystem {
    /// Unknowns (= equations).
    pub n: usize,
    pub terms: usize,
    pub factors: usize,
    /// Stored powers `Σ_j (pow_hi_j − pow_lo_j + 1)`.
    pub powers: usize,
    /// Every coefficient has a zero imaginary part.
    pub real: bool,
    pub ints: Vec<i32>,
    pub coef: Vec<f64>,
}

impl PackedSystem {
    /// Flattens a square system; an error for a non-square one or a size beyond `i32`.
    pub fn new(system: &System) -> Result<PackedSystem> {
        let n = system.n();
        if system.equations.len() != n || n == 0 {
            return Err(Error::Usage(format!(
                "certification needs a square system: {} equations in {n} unknowns",
                system.equations.len()
            )));
        }
        let (mut eq_start, mut fac_start) = (vec![0i32], vec![0i32]);
        let (mut fac_var, mut fac_exp, mut coef) = (Vec::new(), Vec::new(), Vec::new());
        let (mut lo, mut hi) = (vec![0i32; n], vec![0i32; n]);
        let int = |v: usize| {
            i32::try_from(v).map_err(|_| Error::Usage(format!("certification: {v} exceeds i32")))
        };
        for f in &system.equations {
            for t in &f.terms {
                for (j, &a) in t.exponents.iter().enumerate().filter(|(_, &a)| a != 0) {
                    fac_var.push(int(j)?);
                    fac_exp.push(a);
                    lo[j] = lo[j].min(a - 1);
                    hi[j] = hi[j].max(a);
                }
                fac_start.push(int(fac_var.len())?);
                coef.push(t.coeff.re);
                coef.push(t.coeff.im);
            }
            eq_start.push(int(fac_start.len() - 1)?);
        }
        let mut pow_off = Vec::with_capacity(n);
        let mut powers = 0usize;
        for j in 0..n {
            pow_off.push(int(powers)?);
            powers += (hi[j] - lo[j] + 1) as usize;
        }
        let (terms, factors) = (fac_start.len() - 1, fac_var.len());
        let mut ints = eq_start;
        ints.extend(fac_start);
        ints.extend(fac_var);
        ints.extend(fac_exp);
        ints.extend(lo);
        ints.extend(hi);
        ints.extend(pow_off);
        int(ints.len())?;
        Ok(PackedSystem {
            n,
            terms,
            factors,
            powers,
            real: system
                .equations
                .iter()
                .all(|f| f.terms.iter().all(|t| t.coeff.im == 0.0)),
            ints,
            coef,
        })
    }

    /// The kernel's source for this system: its sizes as `#define`s, then
    /// [`KERNEL_SOURCE`].
    pub fn source(&self) -> String {
        format!(
            "#define CN {}\n#define CT {}\n#define CF {}\n#define CPOW {}\n#define CREAL {}\n{}",
            self.n,
            self.terms.max(1),
            self.factors.max(1),
            self.powers,
            self.real as u8,
            KERNEL_SOURCE
        )
    }
}

/// The certificate of point `x` from the kernel's outputs for it (`flags`, `radius`, and
/// `encl`: 4 doubles per coordinate); `None` unless the certified bit is set. The box `X` is
/// rebuilt as the kernel built it ([`CInterval::around`], the same doubles).
pub fn certificate_from(x: &[C64], flags: i32, radius: f64, encl: &[f64]) -> Option<Certificate> {
    if flags & FLAG_CERTIFIED == 0 {
        return None;
    }
    let region: CBox = x.iter().map(|&z| CInterval::around(z, radius)).collect();
    let enclosure: CBox = encl
        .chunks_exact(4)
        .map(|b| CInterval {
            re: Interval::new(b[0], b[1]),
            im: Interval::new(b[2], b[3]),
        })
        .collect();
    Some(Certificate {
        radius,
        region,
        enclosure,
        real: flags & FLAG_REAL != 0,
        double_double: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::parse_str;

    /// The layout of a small Laurent system, entry by entry.
    #[test]
    fn layout_of_a_small_system() {
        let sys = parse_str(
            "variables: [x, y]\nequations:\n  - \"2*x^2*y - 1\"\n  - \"x^-1 + (1+2*i)*y\"\n",
            "t.yaml",
        )
        .unwrap();
        let p = PackedSystem::new(&sys).unwrap();
        assert_eq!((p.n, p.terms, p.factors), (2, 4, 4));
        assert!(!p.real);
        let n = 2;
        let eq = &p.ints[..n + 1];
        assert_eq!(eq, &[0, 2, 4]);
        let fs = &p.ints[n + 1..n + 1 + p.terms + 1];
        let fv = &p.ints[n + 2 + p.terms..n + 2 + p.terms + p.factors];
        let fe = &p.ints[n + 2 + p.terms + p.factors..n + 2 + p.terms + 2 * p.factors];
        let rest = &p.ints[n + 2 + p.terms + 2 * p.factors..];
        // Terms in order with their factors; each term's factors in variable order.
        let mut terms = Vec::new();
        for t in 0..p.terms {
            let f: Vec<(i32, i32)> = (fs[t]..fs[t + 1])
                .map(|q| (fv[q as usize], fe[q as usize]))
                .collect();
            terms.push((p.coef[2 * t], p.coef[2 * t + 1], f));
        }
        type Row = (f64, f64, Vec<(i32, i32)>);
        let mut want: Vec<Row> = Vec::new();
        for f in &sys.equations {
            for t in &f.terms {
                let fac = t
                    .exponents
                    .iter()
                    .enumerate()
                    .filter(|(_, &a)| a != 0)
                    .map(|(j, &a)| (j as i32, a))
                    .collect();
                want.push((t.coeff.re, t.coeff.im, fac));
            }
        }
        assert_eq!(terms, want);
        // x: powers −2 … 2 (x^-1's partial needs x^-2); y: 0 … 1.
        assert_eq!(rest, &[-2, 0, 2, 1, 0, 5]);
        assert_eq!(p.powers, 7);
        assert!(p.source().starts_with("#define CN 2\n#define CT 4\n"));
        assert!(p.source().contains(KERNEL_NAME));
    }

    #[test]
    fn a_non_square_system_is_refused() {
        let mut sys = parse_str(
            "variables: [x, y]\nequations:\n  - \"x - 1\"\n  - \"y - 2\"\n",
            "t.yaml",
        )
        .unwrap();
        sys.equations.pop();
        let e = PackedSystem::new(&sys).unwrap_err();
        assert!(format!("{e}").contains("square"), "{e}");
    }
}
