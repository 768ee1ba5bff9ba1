// The Krawczyk test for many approximate solutions at once, in interval arithmetic with
// directed rounding: the device's counterpart of src/certify/krawczyk.rs (one thread per
// point; docs/certification.md states what is proved and why the arithmetic is sound).
//
// The host (src/certify/cuda.rs) prepends the sizes of the system:
//   CN    unknowns = equations           CT   terms of all equations
//   CF    factors (variable, exponent) of all terms
//   CPOW  stored powers: Σ_j (max_power_j − min_power_j + 1)
//   CREAL 1 when every coefficient is real (realness can be proved), else 0
// and the system arrives in two arrays:
//   sys_i: [eq_start CN+1][fac_start CT+1][fac_var CF][fac_exp CF][pow_lo CN][pow_hi CN]
//          [pow_off CN] (terms of equation k: eq_start[k] .. eq_start[k+1]; factors of
//          term t: fac_start[t] .. fac_start[t+1]; X_j^e for pow_lo[j] ≤ e ≤ pow_hi[j] is
//          stored at pow_off[j] + e − pow_lo[j])
//   coef:  2·CT doubles (re, im of each term's coefficient)
//
// Soundness. Every interval bound is computed by one IEEE operation rounded toward −∞
// (lower bounds) or +∞ (upper bounds): __dadd_rd/_ru, __dsub_rd/_ru, __dmul_rd/_ru,
// __ddiv_rd/_ru. These intrinsics are never contracted into fused multiply-adds (NVRTC runs
// with --fmad=true, which only fuses plain `a * b + c`), so each bound is the exact result
// rounded outward once. A NaN bound (∞ − ∞, 0·∞) makes the interval the whole line before
// fmin/fmax could drop it. Floating-point work that needs no rigour (the approximate inverse
// Y, the choice of radii) uses plain arithmetic.
//
// Per point the outputs are: flags (bit 0 certified, bit 1 real), the half-width r of the
// box X = x̃ + r([−1, 1] + i[−1, 1])^n (built as the host's Interval::around builds it:
// next double below x̃ − r and above x̃ + r, both rounded to nearest, so the host rebuilds
// the same box), and the enclosure K(X) (4 doubles per coordinate: re.lo, re.hi, im.lo,
// im.hi).

#define C_MAX_RADIUS 1e-6
// +∞ and a quiet NaN from their bit patterns (NVRTC has no <math.h> macros).
#define C_INF __longlong_as_double(0x7ff0000000000000LL)
#define C_NAN __longlong_as_double(0x7ff8000000000000LL)
// 2^-52 exactly (f64::EPSILON)
#define C_EPS 2.220446049250313080847263336181640625e-16

#define OFF_EQ 0
#define OFF_FS (CN + 1)
#define OFF_FV (OFF_FS + CT + 1)
#define OFF_FE (OFF_FV + CF)
#define OFF_PLO (OFF_FE + CF)
#define OFF_PHI (OFF_PLO + CN)
#define OFF_POFF (OFF_PHI + CN)

struct ival {
    double lo, hi;
};
struct cival {
    ival re, im;
};
struct cplx {
    double re, im;
};

__device__ __forceinline__ ival iv(double lo, double hi) {
    ival r;
    if (isnan(lo) || isnan(hi)) {
        r.lo = -C_INF;
        r.hi = C_INF;
    } else {
        r.lo = lo;
        r.hi = hi;
    }
    return r;
}
__device__ __forceinline__ ival iv_point(double x) {
    ival r;
    r.lo = x;
    r.hi = x;
    return r;
}
__device__ __forceinline__ ival iv_add(ival a, ival b) {
    return iv(__dadd_rd(a.lo, b.lo), __dadd_ru(a.hi, b.hi));
}
__device__ __forceinline__ ival iv_sub(ival a, ival b) {
    return iv(__dsub_rd(a.lo, b.hi), __dsub_ru(a.hi, b.lo));
}
__device__ __forceinline__ ival iv_neg(ival a) {
    ival r;
    r.lo = -a.hi;
    r.hi = -a.lo;
    return r;
}
__device__ __forceinline__ ival iv_mul(ival a, ival b) {
    const double l1 = __dmul_rd(a.lo, b.lo), l2 = __dmul_rd(a.lo, b.hi);
    const double l3 = __dmul_rd(a.hi, b.lo), l4 = __dmul_rd(a.hi, b.hi);
    const double h1 = __dmul_ru(a.lo, b.lo), h2 = __dmul_ru(a.lo, b.hi);
    const double h3 = __dmul_ru(a.hi, b.lo), h4 = __dmul_ru(a.hi, b.hi);
    if (isnan(l1) || isnan(l2) || isnan(l3) || isnan(l4) || isnan(h1) || isnan(h2) ||
        isnan(h3) || isnan(h4))
        return iv(C_NAN, C_NAN);
    return iv(fmin(fmin(l1, l2), fmin(l3, l4)), fmax(fmax(h1, h2), fmax(h3, h4)));
}
// a / b; the whole line when b may contain 0.
__device__ __forceinline__ ival iv_div(ival a, ival b) {
    if (!(b.lo > 0.0 || b.hi < 0.0)) return iv(C_NAN, C_NAN);
    const double l1 = __ddiv_rd(a.lo, b.lo), l2 = __ddiv_rd(a.lo, b.hi);
    const double l3 = __ddiv_rd(a.hi, b.lo), l4 = __ddiv_rd(a.hi, b.hi);
    const double h1 = __ddiv_ru(a.lo, b.lo), h2 = __ddiv_ru(a.lo, b.hi);
    const double h3 = __ddiv_ru(a.hi, b.lo), h4 = __ddiv_ru(a.hi, b.hi);
    if (isnan(l1) || isnan(l2) || isnan(l3) || isnan(l4) || isnan(h1) || isnan(h2) ||
        isnan(h3) || isnan(h4))
        return iv(C_NAN, C_NAN);
    return iv(fmin(fmin(l1, l2), fmin(l3, l4)), fmax(fmax(h1, h2), fmax(h3, h4)));
}
// s · a for a double s.
__device__ __forceinline__ ival iv_scale(ival a, double s) {
    if (s >= 0.0) return iv(__dmul_rd(s, a.lo), __dmul_ru(s, a.hi));
    return iv(__dmul_rd(s, a.hi), __dmul_ru(s, a.lo));
}
// {t² : t ∈ a}.
__device__ __forceinline__ ival iv_sqr(ival a) {
    if (a.lo >= 0.0) return iv(__dmul_rd(a.lo, a.lo), __dmul_ru(a.hi, a.hi));
    if (a.hi <= 0.0) return iv(__dmul_rd(a.hi, a.hi), __dmul_ru(a.lo, a.lo));
    const double h = fmax(__dmul_ru(a.lo, a.lo), __dmul_ru(a.hi, a.hi));
    return iv(isnan(h) ? C_NAN : 0.0, h);
}
__device__ __forceinline__ double iv_mag(ival a) { return fmax(fabs(a.lo), fabs(a.hi)); }
// x ± r as the host's Interval::around: the neighbours of the rounded-to-nearest ends.
__device__ __forceinline__ ival iv_around(double x, double r) {
    return iv(nextafter(__dsub_rn(x, r), -C_INF), nextafter(__dadd_rn(x, r), C_INF));
}
// o.lo < a.lo and a.hi < o.hi (false for NaN).
__device__ __forceinline__ bool iv_interior(ival a, ival o) { return o.lo < a.lo && a.hi < o.hi; }
__device__ __forceinline__ bool iv_subset(ival a, ival o) { return o.lo <= a.lo && a.hi <= o.hi; }
// The host's CInterval::half_width of one side: next_up(0.5·(hi − lo)).
__device__ __forceinline__ double iv_half_width(ival a) {
    return nextafter(__dmul_rn(0.5, __dsub_rn(a.hi, a.lo)), C_INF);
}

__device__ __forceinline__ cival ci_point(double re, double im) {
    cival r;
    r.re = iv_point(re);
    r.im = iv_point(im);
    return r;
}
__device__ __forceinline__ cival ci_add(cival a, cival b) {
    cival r;
    r.re = iv_add(a.re, b.re);
    r.im = iv_add(a.im, b.im);
    return r;
}
__device__ __forceinline__ cival ci_sub(cival a, cival b) {
    cival r;
    r.re = iv_sub(a.re, b.re);
    r.im = iv_sub(a.im, b.im);
    return r;
}
__device__ __forceinline__ cival ci_neg(cival a) {
    cival r;
    r.re = iv_neg(a.re);
    r.im = iv_neg(a.im);
    return r;
}
// (a + ib)(c + id) = (ac − bd) + i(ad + bc)
__device__ __forceinline__ cival ci_mul(cival a, cival b) {
    cival r;
    r.re = iv_sub(iv_mul(a.re, b.re), iv_mul(a.im, b.im));
    r.im = iv_add(iv_mul(a.re, b.im), iv_mul(a.im, b.re));
    return r;
}
// z · a for a complex double z.
__device__ __forceinline__ cival ci_scale(cival a, double zr, double zi) {
    cival r;
    r.re = iv_sub(iv_scale(a.re, zr), iv_scale(a.im, zi));
    r.im = iv_add(iv_scale(a.im, zr), iv_scale(a.re, zi));
    return r;
}
// s · a for a real double s.
__device__ __forceinline__ cival ci_scale_real(cival a, double s) {
    cival r;
    r.re = iv_scale(a.re, s);
    r.im = iv_scale(a.im, s);
    return r;
}
// 1 / a = conj(a) / |a|²; the whole plane when a may contain 0.
__device__ __forceinline__ cival ci_recip(cival a) {
    const ival den = iv_add(iv_sqr(a.re), iv_sqr(a.im));
    cival r;
    r.re = iv_div(a.re, den);
    r.im = iv_div(iv_neg(a.im), den);
    return r;
}
__device__ __forceinline__ double ci_mag(cival a) { return fmax(iv_mag(a.re), iv_mag(a.im)); }
__device__ __forceinline__ bool ci_interior(cival a, cival o) {
    return iv_interior(a.re, o.re) && iv_interior(a.im, o.im);
}
__device__ __forceinline__ bool ci_subset(cival a, cival o) {
    return iv_subset(a.re, o.re) && iv_subset(a.im, o.im);
}

__device__ __forceinline__ cplx cx(double re, double im) {
    cplx r;
    r.re = re;
    r.im = im;
    return r;
}
__device__ __forceinline__ cplx cx_mul(cplx a, cplx b) {
    return cx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
__device__ __forceinline__ cplx cx_sub(cplx a, cplx b) { return cx(a.re - b.re, a.im - b.im); }
// 1 / a, scaled against overflow of |a|².
__device__ __forceinline__ cplx cx_recip(cplx a) {
    const double s = fmax(fabs(a.re), fabs(a.im));
    const double br = a.re / s, bi = a.im / s;
    const double d = (br * br + bi * bi) * s;
    return cx(br / d, -bi / d);
}

// Powers X_j^e of the box's coordinates for every exponent a term or partial needs.
__device__ __forceinline__ void powers(const int* __restrict__ si, const cival* x, cival* pw) {
    const cival one = ci_point(1.0, 0.0);
    for (int j = 0; j < CN; j++) {
        const int lo = si[OFF_PLO + j];
        const int off = si[OFF_POFF + j];
        const int hi = si[OFF_PHI + j];
        const int zero = off - lo;
        pw[zero] = one;
        for (int e = 1; e <= hi; e++) pw[zero + e] = ci_mul(pw[zero + e - 1], x[j]);
        if (lo < 0) {
            const cival inv = ci_recip(x[j]);
            for (int e = 1; e <= -lo; e++) pw[zero - e] = ci_mul(pw[zero - e + 1], inv);
        }
    }
}

__device__ __forceinline__ int pow_at(const int* __restrict__ si, int j, int e) {
    return si[OFF_POFF + j] + e - si[OFF_PLO + j];
}

// Encloses F(X), with the powers pw of X.
__device__ __forceinline__ void values(const int* __restrict__ si, const double* __restrict__ coef,
                                       const cival* pw, cival* f) {
    for (int k = 0; k < CN; k++) {
        cival acc = ci_point(0.0, 0.0);
        for (int t = si[OFF_EQ + k]; t < si[OFF_EQ + k + 1]; t++) {
            cival m = ci_point(1.0, 0.0);
            for (int q = si[OFF_FS + t]; q < si[OFF_FS + t + 1]; q++)
                m = ci_mul(m, pw[pow_at(si, si[OFF_FV + q], si[OFF_FE + q])]);
            acc = ci_add(acc, ci_scale(m, coef[2 * t], coef[2 * t + 1]));
        }
        f[k] = acc;
    }
}

// Encloses ∂F/∂x over X (row-major, jac[k·CN + j] = ∂f_k/∂x_j): each term's partials from
// prefix and suffix products of its factors, the derivative's coefficient c·a applied as
// two exact scalings (by c, then by a) so that no rounded product c·a enters.
__device__ __forceinline__ void jacobian(const int* __restrict__ si,
                                         const double* __restrict__ coef, const cival* pw,
                                         cival* suf, cival* jac) {
    const cival zero = ci_point(0.0, 0.0), one = ci_point(1.0, 0.0);
    for (int i = 0; i < CN * CN; i++) jac[i] = zero;
    for (int k = 0; k < CN; k++) {
        for (int t = si[OFF_EQ + k]; t < si[OFF_EQ + k + 1]; t++) {
            const int q0 = si[OFF_FS + t], s = si[OFF_FS + t + 1] - q0;
            suf[s] = one;
            for (int i = s - 1; i >= 0; i--)
                suf[i] = ci_mul(suf[i + 1], pw[pow_at(si, si[OFF_FV + q0 + i], si[OFF_FE + q0 + i])]);
            cival prefix = one;
            for (int i = 0; i < s; i++) {
                const int j = si[OFF_FV + q0 + i], a = si[OFF_FE + q0 + i];
                const cival d = ci_scale_real(
                    ci_scale(pw[pow_at(si, j, a - 1)], coef[2 * t], coef[2 * t + 1]), (double)a);
                jac[k * CN + j] = ci_add(jac[k * CN + j], ci_mul(ci_mul(prefix, suf[i + 1]), d));
                prefix = ci_mul(prefix, pw[pow_at(si, j, a)]);
            }
        }
    }
}

// Workspace of one thread.
struct work {
    cival x[CN];        // the box (X, or the point box)
    cival pw[CPOW];     // powers of its coordinates
    cival suf[CN + 1];  // suffix products of one term
    cival jac[CN * CN]; // ∂F/∂x over the box
    cival f[CN];        // F at the point, then a row of Y·J
    cival yf[CN];       // Y·F(x̃)
    cival k[CN];        // K(X)
    cplx a[CN * CN];    // the point Jacobian, reduced in place
    cplx y[CN * CN];    // Y ≈ J(x̃)^{-1}
};

// Y ≈ J(c)^{-1} (Gauss–Jordan with partial pivoting on the midpoints of the point box's
// Jacobian enclosure), Y·F(c) enclosed, and the step max |Y·F(c)|; false when J(c) is
// numerically singular or a value is not finite.
__device__ bool newton_step(const int* __restrict__ si, const double* __restrict__ coef,
                            const double* c, work* w, double* step) {
    for (int j = 0; j < CN; j++) w->x[j] = ci_point(c[2 * j], c[2 * j + 1]);
    powers(si, w->x, w->pw);
    values(si, coef, w->pw, w->f);
    jacobian(si, coef, w->pw, w->suf, w->jac);
    for (int i = 0; i < CN * CN; i++) {
        const cival z = w->jac[i];
        w->a[i] = cx(0.5 * z.re.lo + 0.5 * z.re.hi, 0.5 * z.im.lo + 0.5 * z.im.hi);
        w->y[i] = cx(i / CN == i % CN ? 1.0 : 0.0, 0.0);
    }
    for (int col = 0; col < CN; col++) {
        int p = col;
        double best = -1.0;
        for (int r = col; r < CN; r++) {
            const cplx v = w->a[r * CN + col];
            const double m = fabs(v.re) + fabs(v.im);
            if (m > best) {
                best = m;
                p = r;
            }
        }
        if (!(best > 0.0) || !isfinite(best)) return false;
        if (p != col) {
            for (int j = 0; j < CN; j++) {
                const cplx t = w->a[col * CN + j];
                w->a[col * CN + j] = w->a[p * CN + j];
                w->a[p * CN + j] = t;
                const cplx u = w->y[col * CN + j];
                w->y[col * CN + j] = w->y[p * CN + j];
                w->y[p * CN + j] = u;
            }
        }
        const cplx inv = cx_recip(w->a[col * CN + col]);
        for (int j = 0; j < CN; j++) {
            w->a[col * CN + j] = cx_mul(w->a[col * CN + j], inv);
            w->y[col * CN + j] = cx_mul(w->y[col * CN + j], inv);
        }
        for (int r = 0; r < CN; r++) {
            if (r == col) continue;
            const cplx g = w->a[r * CN + col];
            for (int j = 0; j < CN; j++) {
                w->a[r * CN + j] = cx_sub(w->a[r * CN + j], cx_mul(g, w->a[col * CN + j]));
                w->y[r * CN + j] = cx_sub(w->y[r * CN + j], cx_mul(g, w->y[col * CN + j]));
            }
        }
    }
    double s = 0.0;
    for (int i = 0; i < CN; i++) {
        cival acc = ci_point(0.0, 0.0);
        for (int k = 0; k < CN; k++) {
            const cplx yik = w->y[i * CN + k];
            if (!isfinite(yik.re) || !isfinite(yik.im)) return false;
            acc = ci_add(acc, ci_scale(w->f[k], yik.re, yik.im));
        }
        w->yf[i] = acc;
        s = fmax(s, ci_mag(acc));
    }
    *step = s;
    return isfinite(s);
}

// K(X) = c − Y·F(c) + (I − Y·J(X))·(X − c) into w->k, for the box in w->x; true when
// K(X) lies in the interior of X.
__device__ bool krawczyk(const int* __restrict__ si, const double* __restrict__ coef,
                         const double* c, work* w) {
    powers(si, w->x, w->pw);
    jacobian(si, coef, w->pw, w->suf, w->jac);
    bool inside = true;
    for (int i = 0; i < CN; i++) {
        // row i of Y·J(X), into w->f
        for (int j = 0; j < CN; j++) w->f[j] = ci_point(0.0, 0.0);
        for (int k = 0; k < CN; k++) {
            const cplx yik = w->y[i * CN + k];
            for (int j = 0; j < CN; j++)
                w->f[j] = ci_add(w->f[j], ci_scale(w->jac[k * CN + j], yik.re, yik.im));
        }
        cival acc = ci_sub(ci_point(c[2 * i], c[2 * i + 1]), w->yf[i]);
        for (int j = 0; j < CN; j++) {
            const cival m = i == j ? ci_sub(ci_point(1.0, 0.0), w->f[j]) : ci_neg(w->f[j]);
            const cival d = ci_sub(w->x[j], ci_point(c[2 * j], c[2 * j + 1]));
            acc = ci_add(acc, ci_mul(m, d));
        }
        w->k[i] = acc;
        inside = inside && ci_interior(acc, w->x[i]);
    }
    return inside;
}

__device__ __forceinline__ double sup_norm(const double* x) {
    double m = 0.0;
    for (int j = 0; j < CN; j++)
        m = fmax(m, __dadd_rn(__dmul_rn(x[2 * j], x[2 * j]), __dmul_rn(x[2 * j + 1], x[2 * j + 1])));
    return __dsqrt_rn(m);
}

extern "C" __global__ void krawczyk_batch(const double* __restrict__ pts, int p,
                                          const int* __restrict__ si,
                                          const double* __restrict__ coef,
                                          double* __restrict__ radius_out,
                                          int* __restrict__ flags_out,
                                          double* __restrict__ encl_out) {
    const int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= p) return;
    work w;
    double x[2 * CN];
    for (int j = 0; j < 2 * CN; j++) x[j] = pts[(size_t)id * 2 * CN + j];
    radius_out[id] = 0.0;
    flags_out[id] = 0;
    for (int j = 0; j < 2 * CN; j++)
        if (!isfinite(x[j])) return;
    const double scale = __dadd_rn(1.0, sup_norm(x));
    const double cap = __dmul_rn(C_MAX_RADIUS, scale);
    const double floor_r = __dmul_rn(__dmul_rn(4.0, C_EPS), scale);
    const double factors[4] = {2.0, 8.0, 64.0, 1024.0};
    double step;
    if (!newton_step(si, coef, x, &w, &step)) return;
    const double base = fmax(step, floor_r);
    double radius = 0.0;
    for (int q = 0; q < 4 && radius == 0.0; q++) {
        const double r = __dmul_rn(factors[q], base);
        if (!(r <= cap)) continue;
        for (int j = 0; j < CN; j++) {
            w.x[j].re = iv_around(x[2 * j], r);
            w.x[j].im = iv_around(x[2 * j + 1], r);
        }
        if (krawczyk(si, coef, x, &w)) radius = r;
    }
    if (radius == 0.0) return;
    for (int j = 0; j < CN; j++) {
        double* o = encl_out + ((size_t)id * CN + j) * 4;
        o[0] = w.k[j].re.lo;
        o[1] = w.k[j].re.hi;
        o[2] = w.k[j].im.lo;
        o[3] = w.k[j].im.hi;
    }
    radius_out[id] = radius;
    int flags = 1;
#if CREAL
    // The box X of the proof; a self-conjugate one (imaginary parts [−h, h]) holds a real
    // root already.
    cival region[CN];
    bool self_conj = true;
    double half_width = 0.0, im = 0.0;
    for (int j = 0; j < CN; j++) {
        region[j].re = iv_around(x[2 * j], radius);
        region[j].im = iv_around(x[2 * j + 1], radius);
        self_conj = self_conj && region[j].im.lo == -region[j].im.hi;
        half_width = fmax(half_width, fmax(iv_half_width(region[j].re), iv_half_width(region[j].im)));
        im = fmax(im, fabs(x[2 * j + 1]));
    }
    bool real = self_conj;
    const double reach = __dadd_rn(im, half_width);
    double c[2 * CN];
    for (int j = 0; j < CN; j++) {
        c[2 * j] = x[2 * j];
        c[2 * j + 1] = 0.0;
    }
    double cstep;
    if (!real && reach <= cap && newton_step(si, coef, c, &w, &cstep)) {
        // Half-widths that may contain the first box, then multiples of the step, sorted.
        double cand[6];
        int nc = 0;
        const double first[2] = {__dmul_rn(1.25, reach), __dmul_rn(2.0, reach)};
        for (int q = 0; q < 2; q++)
            if (first[q] <= cap) cand[nc++] = first[q];
        const double cbase = fmax(fmax(cstep, reach), floor_r);
        for (int q = 0; q < 4; q++) {
            const double r = __dmul_rn(factors[q], cbase);
            if (r <= cap) cand[nc++] = r;
        }
        for (int a = 1; a < nc; a++)
            for (int b = a; b > 0 && cand[b - 1] > cand[b]; b--) {
                const double t = cand[b];
                cand[b] = cand[b - 1];
                cand[b - 1] = t;
            }
        for (int q = 0; q < nc && !real; q++) {
            const double r = cand[q];
            const double h = nextafter(r, C_INF);
            bool contains = true;
            for (int j = 0; j < CN; j++) {
                w.x[j].re = iv_around(c[2 * j], r);
                w.x[j].im.lo = -h;
                w.x[j].im.hi = h;
                contains = contains && ci_subset(region[j], w.x[j]);
            }
            if (contains && krawczyk(si, coef, c, &w)) real = true;
        }
    }
    if (real) flags |= 2;
#endif
    flags_out[id] = flags;
}
