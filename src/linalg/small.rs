//! Small dense complex solvers for one path at a time: Householder QR of an `N × N` matrix
//! with several right-hand sides solved in the same sweep (the unified Euler/Newton solve of
//! T. Chen §6: one factorization, two directions), and LU with partial pivoting (half the
//! flops; the tracker's CPU route, as the GPU's Gauss–Jordan kernel), factor and solve apart
//! so that a new right-hand side costs `O(N²)`.

use num_complex::Complex64 as C64;

/// |z| as √(re² + im²) where that neither overflows nor underflows, else `hypot` (which
/// costs as much as the rest of a small QR's column step: 7 % of a katsura-10 solve).
#[inline]
fn modulus(z: C64) -> f64 {
    let s = z.norm_sqr();
    if s.is_normal() && s < 1e300 {
        s.sqrt()
    } else {
        z.norm()
    }
}

/// Solves `A X = B` in place by Householder QR (`A = Q R`, `X = R⁻¹ Qᴴ B`).
///
/// `a` is `N × N` **column-major** (`a[j·N + i] = A_ij`, so that every inner loop of the
/// factorization runs over one contiguous column) and is overwritten by `R` (upper part);
/// `b` is `N × r` row-major and is overwritten by `X`. Returns the ratio
/// `max|R_ii| / min|R_ii|`, a cheap lower bound on the condition number (∞ when some `R_ii`
/// is 0; then `X` is not finite).
pub fn qr_solve(nn: usize, a: &mut [C64], b: &mut [C64], r: usize) -> f64 {
    debug_assert_eq!(a.len(), nn * nn);
    debug_assert_eq!(b.len(), nn * r);
    let zero = C64::new(0.0, 0.0);
    for k in 0..nn {
        // Householder vector for column k, rows k..N, stored in place of the column.
        let (head, tail) = a.split_at_mut((k + 1) * nn);
        let v = &mut head[k * nn + k..];
        let norm2: f64 = v.iter().fold(0.0, |acc, z| acc + z.norm_sqr());
        let norm = norm2.sqrt();
        if norm == 0.0 {
            continue;
        }
        let x0 = v[0];
        let x0_abs = modulus(x0);
        let phase = if x0_abs == 0.0 {
            C64::new(1.0, 0.0)
        } else {
            x0 / x0_abs
        };
        let alpha = -phase * norm;
        // v = x − α e_1; vᴴv = 2‖x‖(‖x‖ + |x0|)
        v[0] = x0 - alpha;
        let vnorm2 = 2.0 * norm * (norm + x0_abs);
        if vnorm2 == 0.0 {
            v[0] = alpha;
            continue;
        }
        let scale = 2.0 / vnorm2;
        let v = &*v;
        // Apply H = I − scale·v vᴴ to the remaining columns of A.
        for col in tail.chunks_exact_mut(nn) {
            let c = &mut col[k..];
            let s = v
                .iter()
                .zip(c.iter())
                .fold(zero, |acc, (x, y)| acc + x.conj() * y)
                * scale;
            for (y, x) in c.iter_mut().zip(v) {
                *y -= x * s;
            }
        }
        // ... and to the right-hand sides.
        for j in 0..r {
            let mut s = zero;
            for (i, x) in v.iter().enumerate() {
                s += x.conj() * b[(k + i) * r + j];
            }
            s *= scale;
            for (i, x) in v.iter().enumerate() {
                b[(k + i) * r + j] -= x * s;
            }
        }
        head[k * nn + k] = alpha;
    }
    // Back substitution with R.
    let (mut dmax, mut dmin) = (0.0f64, f64::INFINITY);
    for k in 0..nn {
        let d = modulus(a[k * nn + k]);
        dmax = dmax.max(d);
        dmin = dmin.min(d);
    }
    for k in (0..nn).rev() {
        let d = a[k * nn + k];
        for j in 0..r {
            let mut s = b[k * r + j];
            for i in k + 1..nn {
                s -= a[i * nn + k] * b[i * r + j];
            }
            b[k * r + j] = s / d;
        }
    }
    if dmin == 0.0 {
        f64::INFINITY
    } else {
        dmax / dmin
    }
}

/// LU factorization with partial pivoting, `P A = L U`, in place.
///
/// `a` is `N × N` column-major as for [`qr_solve`] and is overwritten by `L` (unit lower,
/// below the diagonal) and `U`; `piv[k]` is the row swapped with row `k` at step `k`.
/// The pivot is the largest `|a_ik|²` of the column (as the GPU's `gj_directions`). Returns
/// `max|U_kk| / min|U_kk|`, the same kind of cheap lower bound on the condition number as
/// [`qr_solve`]'s (∞ when a pivot is 0; then the solve is not finite).
pub fn lu_factor(nn: usize, a: &mut [C64], piv: &mut [usize]) -> f64 {
    debug_assert_eq!(a.len(), nn * nn);
    debug_assert_eq!(piv.len(), nn);
    let (mut dmax, mut dmin) = (0.0f64, f64::INFINITY);
    for k in 0..nn {
        let col = &a[k * nn..(k + 1) * nn];
        let (mut p, mut best) = (k, -1.0f64);
        for (i, z) in col.iter().enumerate().skip(k) {
            let v = z.norm_sqr();
            if v > best {
                (p, best) = (i, v);
            }
        }
        piv[k] = p;
        if p != k {
            for j in 0..nn {
                a.swap(j * nn + k, j * nn + p);
            }
        }
        let d = a[k * nn + k];
        let m = modulus(d);
        dmax = dmax.max(m);
        dmin = dmin.min(m);
        if m == 0.0 {
            continue;
        }
        let inv = d.inv();
        let (head, tail) = a.split_at_mut((k + 1) * nn);
        let l = &mut head[k * nn + k + 1..];
        l.iter_mut().for_each(|z| *z *= inv);
        let l = &*l;
        for col in tail.chunks_exact_mut(nn) {
            let u = col[k];
            for (c, x) in col[k + 1..].iter_mut().zip(l) {
                *c = sub_mul(*c, *x, u);
            }
        }
    }
    if dmin == 0.0 {
        f64::INFINITY
    } else {
        dmax / dmin
    }
}

/// Solves `A X = B` with the factors of [`lu_factor`]: `b` is `N × r` row-major and is
/// overwritten by `X`.
pub fn lu_solve(nn: usize, lu: &[C64], piv: &[usize], b: &mut [C64], r: usize) {
    debug_assert_eq!(b.len(), nn * r);
    for (k, &p) in piv.iter().enumerate() {
        if p != k {
            for j in 0..r {
                b.swap(k * r + j, p * r + j);
            }
        }
    }
    // L y = P b (unit lower), column by column; every right-hand side in one pass.
    for k in 0..nn {
        let (head, tail) = b.split_at_mut((k + 1) * r);
        let v = &head[k * r..];
        for (row, &l) in tail
            .chunks_exact_mut(r)
            .zip(&lu[k * nn + k + 1..(k + 1) * nn])
        {
            for (x, &vj) in row.iter_mut().zip(v) {
                *x = sub_mul(*x, l, vj);
            }
        }
    }
    // U x = y.
    for k in (0..nn).rev() {
        let inv = lu[k * nn + k].inv();
        let (head, tail) = b.split_at_mut(k * r);
        let v = &mut tail[..r];
        v.iter_mut().for_each(|x| *x *= inv);
        for (row, &u) in head.chunks_exact_mut(r).zip(&lu[k * nn..k * nn + k]) {
            for (x, &vj) in row.iter_mut().zip(v.iter()) {
                *x = sub_mul(*x, u, vj);
            }
        }
    }
}

/// `c − x·u` with fused multiply-adds (two roundings per part instead of three).
#[inline(always)]
fn sub_mul(c: C64, x: C64, u: C64) -> C64 {
    C64::new(
        (-x.re).mul_add(u.re, x.im.mul_add(u.im, c.re)),
        (-x.re).mul_add(u.im, (-x.im).mul_add(u.re, c.im)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// A random `nn × nn` system with two right-hand sides: `A` column-major, `X` and
    /// `B = A X` row-major (`nn × 2`).
    fn random_system(
        rng: &mut rand_chacha::ChaCha8Rng,
        nn: usize,
    ) -> (Vec<C64>, Vec<C64>, Vec<C64>) {
        let mut entry = || C64::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5);
        let a: Vec<C64> = (0..nn * nn).map(|_| entry()).collect();
        let x: Vec<C64> = (0..nn * 2).map(|_| entry()).collect();
        let mut b = vec![C64::new(0.0, 0.0); nn * 2];
        for i in 0..nn {
            for j in 0..2 {
                for k in 0..nn {
                    b[i * 2 + j] += a[i * nn + k] * x[k * 2 + j];
                }
            }
        }
        let af: Vec<C64> = (0..nn * nn).map(|t| a[(t % nn) * nn + t / nn]).collect();
        (af, x, b)
    }

    #[test]
    fn lu_solve_matches_multiplication_and_qr() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for nn in [1usize, 2, 5, 12, 25] {
            let (af, x, b) = random_system(&mut rng, nn);
            let (mut lu, mut piv) = (af.clone(), vec![0; nn]);
            let cond = lu_factor(nn, &mut lu, &mut piv);
            let mut xl = b.clone();
            lu_solve(nn, &lu, &piv, &mut xl, 2);
            let (mut aq, mut xq) = (af.clone(), b.clone());
            let cond_qr = qr_solve(nn, &mut aq, &mut xq, 2);
            assert!(cond.is_finite() && cond >= 1.0);
            let err = |s: &[C64]| {
                s.iter()
                    .zip(&x)
                    .map(|(u, v)| (u - v).norm())
                    .fold(0.0, f64::max)
            };
            assert!(
                err(&xl) < 1e-10 * cond_qr.max(cond),
                "n={nn} err={} cond={cond}",
                err(&xl)
            );
            assert!(err(&xq) < 1e-10 * cond_qr.max(cond));
            // The two condition estimates are lower bounds of the same order.
            assert!(
                cond < 1e3 * cond_qr && cond_qr < 1e3 * cond,
                "{cond} vs {cond_qr}"
            );
        }
        // A singular matrix: infinite estimate.
        let mut z = vec![C64::new(1.0, 0.0); 9];
        assert!(lu_factor(3, &mut z, &mut [0; 3]).is_infinite());
    }

    #[test]
    fn qr_solve_matches_multiplication() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for nn in [1usize, 2, 5, 12] {
            let (mut af, x, mut b) = random_system(&mut rng, nn);
            let cond = qr_solve(nn, &mut af, &mut b, 2);
            assert!(cond.is_finite() && cond >= 1.0);
            let err: f64 = b
                .iter()
                .zip(&x)
                .map(|(u, v)| (u - v).norm())
                .fold(0.0, f64::max);
            assert!(err < 1e-10 * cond, "n={nn} err={err} cond={cond}");
        }
    }
}
