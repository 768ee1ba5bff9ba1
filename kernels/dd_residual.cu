// The residual column H of the extended Jacobian in double-double (Dekker; Hida, Li &
// Bailey's "double-double"), for resident slots in double-double mode
// (src/track/resident/slot.rs, Slot::residual): the device's counterpart of the host's
// src/eval/dd.rs `scaled_values`. Near a solution of condition κ a residual computed in
// double is noise of size ε·Σ|terms| and the Newton step is wrong by ~κ·ε; with the
// residual in double-double and the Jacobian in double, Newton converges for κ up to ~1e15
// (mixed-precision iterative refinement).
//
// For point i and equation k (thread (i, k)): h_k = e^{−s_k} Σ_c coeff_c · y^{a_c} · e^{τ ω_c}
// over the equation's block, y the projective point (exact doubles), τ complex (real on the
// path; on a Cauchy endgame's loop e^{i·Im(τ)·ω} comes from dd_sincos), s_k the shift of
// the double evaluation (the block's largest Re(ẑ Â)_c, from the same z), written over
// entry NN + 1 of row k of point i's extended Jacobian (JAC_ROW), rounded to double. Points
// where it does not apply (log coordinates, a non-integer or negative exponent, values out
// of range) keep their double residual.
//
// Error: e^{x} within ~1e-31 relative (reduction by k·ln 2, at most ten halvings, Taylor
// series, as many squarings); every product and sum of the terms within a few u² (u = 2^-53)
// of its magnitude, as on the host.

struct ddv {
    double hi, lo;
};

__device__ __forceinline__ ddv dd_quick_two_sum(double a, double b) {
    const double s = a + b;
    return {s, b - (s - a)};
}
__device__ __forceinline__ ddv dd_two_sum(double a, double b) {
    const double s = a + b;
    const double bb = s - a;
    return {s, (a - (s - bb)) + (b - bb)};
}
// The product rounded by __dmul_rn, which the compiler never merges into an FMA (NVRTC runs
// with --fmad=true): `p + e` contracted to fma(a, b, e) would spoil the error-free sums it
// feeds (seen on the H200: residuals off by ~1e-17 of the terms).
__device__ __forceinline__ ddv dd_two_prod(double a, double b) {
    const double p = __dmul_rn(a, b);
    return {p, fma(a, b, -p)};
}
__device__ __forceinline__ ddv dd_add(ddv a, ddv b) {
    ddv s = dd_two_sum(a.hi, b.hi);
    const ddv t = dd_two_sum(a.lo, b.lo);
    s.lo += t.hi;
    s = dd_quick_two_sum(s.hi, s.lo);
    s.lo += t.lo;
    return dd_quick_two_sum(s.hi, s.lo);
}
__device__ __forceinline__ ddv dd_mul(ddv a, ddv b) {
    ddv p = dd_two_prod(a.hi, b.hi);
    p.lo = fma(a.hi, b.lo, fma(a.lo, b.hi, p.lo));
    return dd_quick_two_sum(p.hi, p.lo);
}
__device__ __forceinline__ ddv dd_mul_d(ddv a, double b) {
    ddv p = dd_two_prod(a.hi, b);
    p.lo = fma(a.lo, b, p.lo);
    return dd_quick_two_sum(p.hi, p.lo);
}
// a / b for a double b: q₁ = a/b, the remainder a − q₁·b exact by two_prod, q₂ from it.
__device__ __forceinline__ ddv dd_div_d(ddv a, double b) {
    const double q1 = a.hi / b;
    const ddv p = dd_two_prod(q1, b);
    ddv r = dd_two_sum(a.hi, -p.hi);
    r.lo = (r.lo - p.lo) + a.lo;
    const double q2 = (r.hi + r.lo) / b;
    return dd_quick_two_sum(q1, q2);
}

// 1/n! for n = 2 … 9, the Taylor coefficients of dd_exp.
struct InvFact {
    ddv c[8];
};
__device__ __forceinline__ InvFact inv_factorials() {
    InvFact f;
    double fact = 1.0;
#pragma unroll
    for (int n = 2; n <= 9; ++n) {
        fact *= n;
        f.c[n - 2] = dd_div_d({1.0, 0.0}, fact);
    }
    return f;
}

// e^x in double-double: x = k·ln 2 + r, |r| ≤ ln 2 / 2; u = r/2^q with q the fewest halvings
// (at most 10) that bring |u| below 2^-12; e^u − 1 by its Taylor series, stopped once a
// term is below 1e-33 of the sum (degree 9 at |u| = 2^-12, fewer for the small arguments
// of tracking near t = 1, where τ ≈ 0); then (e^u − 1) → (e^{2u} − 1) = (e^u − 1)·(e^u − 1 + 2)
// q times, + 1, times 2^k. Zero below e^{−745}, +∞ above e^{709}.
__device__ ddv dd_exp(ddv x, const InvFact& f) {
    if (!(x.hi < 709.0)) return {x.hi != x.hi ? x.hi : 1.0 / 0.0, 0.0};
    if (x.hi < -745.0) return {0.0, 0.0};
    const ddv ln2 = {6.931471805599452862e-01, 2.319046813846299558e-17};
    const double k = rint(x.hi / ln2.hi);
    ddv r = k != 0.0 ? dd_add(x, dd_mul_d({-ln2.hi, -ln2.lo}, k)) : x;
    int q = 0;
    while (q < 10 && fabs(r.hi) > 2.44140625e-4) {  // 2^-12
        r.hi *= 0.5;
        r.lo *= 0.5;
        ++q;
    }
    // s = r + r²/2! + … + rⁿ/n!
    ddv p = r, s = r;
#pragma unroll 1
    for (int n = 2; n <= 9; ++n) {
        p = dd_mul(p, r);
        const ddv t = dd_mul(p, f.c[n - 2]);
        s = dd_add(s, t);
        if (fabs(t.hi) <= 1e-33 * fabs(s.hi)) break;
    }
#pragma unroll 1
    for (int j = 0; j < q; ++j) s = dd_add(dd_mul(s, s), {2.0 * s.hi, 2.0 * s.lo});
    s = dd_add(s, {1.0, 0.0});
    if (k == 0.0) return s;
    const int e = (int)k;
    return {ldexp(s.hi, e), ldexp(s.lo, e)};
}

// (sin x, cos x) in double-double for |x| < 1e6: x = k·π/2 + r (|r| ≤ π/4, π/2 in
// double-double), r halved q ≤ 4 times to |u| ≤ 2^-4, sin u and cos u by their Taylor
// series to degree 17 (the last term below 1e-35), then q double-angle steps
// (sin 2a = 2 sin a cos a, cos 2a = 1 − 2 sin² a) and the quadrant k mod 4. Error a few
// 1e-31 absolute (16 times the series' rounding, k·1e-33 from the reduction), the host's
// src/eval/dd.rs `Dd::sin_cos` within the same bound.
__device__ void dd_sincos(ddv x, ddv* sn, ddv* cs) {
    const ddv half_pi = {1.570796326794896558e+00, 6.123233995736766036e-17};
    const double k = rint(x.hi / half_pi.hi);
    ddv r = k != 0.0 ? dd_add(x, dd_mul_d({-half_pi.hi, -half_pi.lo}, k)) : x;
    int q = 0;
    while (q < 4 && fabs(r.hi) > 0.0625) {
        r.hi *= 0.5;
        r.lo *= 0.5;
        ++q;
    }
    ddv p = r, s = r, c = {1.0, 0.0};
#pragma unroll 1
    for (int n = 2; n <= 17; ++n) {
        p = dd_div_d(dd_mul(p, r), (double)n);
        const ddv t = (n & 2) ? ddv{-p.hi, -p.lo} : p;  // n ≡ 2, 3 (mod 4): minus
        if (n & 1) s = dd_add(s, t);
        else c = dd_add(c, t);
    }
#pragma unroll 1
    for (int j = 0; j < q; ++j) {
        const ddv s2 = dd_mul(s, s);
        s = dd_mul(s, c);
        s = {2.0 * s.hi, 2.0 * s.lo};
        c = dd_add({1.0, 0.0}, {-2.0 * s2.hi, -2.0 * s2.lo});
    }
    switch (((long long)k % 4 + 4) % 4) {
        case 0: *sn = s; *cs = c; break;
        case 1: *sn = c; *cs = {-s.hi, -s.lo}; break;
        case 2: *sn = {-s.hi, -s.lo}; *cs = {-c.hi, -c.lo}; break;
        default: *sn = {-c.hi, -c.lo}; *cs = s; break;
    }
}

struct cdd {
    ddv re, im;
};

// a·b for a complex double-double a and a complex double b.
__device__ __forceinline__ cdd cdd_mul_c(cdd a, double2 b) {
    return {dd_add(dd_mul_d(a.re, b.x), dd_mul_d(a.im, -b.y)),
            dd_add(dd_mul_d(a.re, b.y), dd_mul_d(a.im, b.x))};
}

// Largest integer exponent the monomials are formed for (beyond: the double residual stays).
#define DD_MAX_EXPONENT 64
// |Im(τ)·ω| at or above this: the double residual stays (dd_sincos's range).
#define DD_MAX_ANGLE 1e6
// |τω| and |s| below this: the terms are summed unscaled and the sum multiplied by e^{−s}
// in double (as src/eval/dd.rs UNSCALED_RANGE); otherwise each term gets e^{τω − s}.
#define DD_UNSCALED_RANGE 500.0

// Warp reductions over the 32 lanes of a warp (every lane takes part).
__device__ __forceinline__ double warp_max(double v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ ddv warp_sum(ddv v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const ddv w = {__shfl_xor_sync(0xffffffffu, v.hi, o), __shfl_xor_sync(0xffffffffu, v.lo, o)};
        v = dd_add(v, w);
    }
    return v;
}

// Threads per block of dd_residual: DD_WARPS warps, one (point, equation) each.
#define DD_WARPS 4

// One warp per (point i, equation k = blockIdx.y), lane l taking the terms c0 + l, c0 + l + 32,
// … of the equation's block (a thread per equation took 14 serial terms of chandra-12, the
// latency of ~40 µs per iteration). status / ddm / phase (null: every point): only active
// slots (status 1) in double-double mode at a start refinement or Newton correction (phase
// < 100 or ≥ 200: a Runge–Kutta stage uses the Euler direction only) are computed; the
// test is the same for the whole warp. y and tau: the evaluated points (projective; τ complex),
// z: their log_points output, lifts: per-point lift rows (or null), ahat / bt: the
// homotopy's Â and B_kᵀ.
extern "C" __global__ void __launch_bounds__(32 * DD_WARPS)
dd_residual(const unsigned char* __restrict__ status, const unsigned char* __restrict__ ddm,
            const unsigned char* __restrict__ logm, const unsigned int* __restrict__ phase,
            const double2* __restrict__ y, const double2* __restrict__ tau,
            const double* __restrict__ lifts, const double2* __restrict__ z,
            const double* __restrict__ ahat, const double2* __restrict__ bt,
            double2* __restrict__ jac, int p) {
    const long i = (long)blockIdx.x * DD_WARPS + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    const int k = blockIdx.y;
    if (i >= p) return;
    if (status && status[i] != 1) return;
    if (ddm && !ddm[i]) return;
    if (logm && logm[i]) return;
    if (phase && phase[i] >= 100u && phase[i] < 200u) return;
    double2 zz[NZ];
#pragma unroll
    for (int j = 0; j < NZ; ++j) zz[j] = z[i * NZ + j];
    const double* lp = lifts ? lifts + i * MT : nullptr;
    const double t = tau[i].x, ti = tau[i].y;
    const int c0 = BSTART[k], c1 = BSTART[k + 1];
    double s = -1.0 / 0.0;
    bool unscaled = true, supported = true;
    for (int c = c0 + lane; c < c1; c += 32) {
        s = fmax(s, term_exponent(zz, ahat, lp, c).x);
        const double om = lp ? lp[c] : ahat[c * NZ + NN];
        unscaled = unscaled && fabs(t * om) < DD_UNSCALED_RANGE;
        supported = supported && fabs(ti * om) < DD_MAX_ANGLE;
#pragma unroll
        for (int j = 0; j < NN; ++j) {
            const double a = ahat[c * NZ + j];
            supported = supported && a >= 0.0 && a <= DD_MAX_EXPONENT && a == floor(a);
        }
    }
    s = warp_max(s);
    if (!__all_sync(0xffffffffu, supported) || !isfinite(s)) return;
    unscaled = __all_sync(0xffffffffu, unscaled) && fabs(s) < DD_UNSCALED_RANGE;
    const double shift = unscaled ? 0.0 : s;
    const InvFact f = inv_factorials();
    cdd sum = {{0.0, 0.0}, {0.0, 0.0}};
    for (int c = c0 + lane; c < c1; c += 32) {
        cdd mono = {{1.0, 0.0}, {0.0, 0.0}};
#pragma unroll
        for (int j = 0; j < NN; ++j) {
            const int a = (int)ahat[c * NZ + j];
            if (a == 0) continue;
            const double2 yj = y[i * NN + j];
            for (int e = 0; e < a; ++e) mono = cdd_mul_c(mono, yj);
        }
        const double om = lp ? lp[c] : ahat[c * NZ + NN];
        ddv g = {1.0, 0.0};
        if (om != 0.0 || !unscaled) {
            ddv x = dd_two_prod(t, om);
            x = dd_quick_two_sum(x.hi, x.lo);
            if (shift != 0.0) x = dd_add(x, {-shift, 0.0});
            g = dd_exp(x, f);
        }
        const cdd term = cdd_mul_c(mono, bt[c * W + NN + 1]);
        if (ti * om != 0.0) {
            // e^{τω} = e^{Re(τ)ω}·(cos + i sin)(Im(τ)·ω): a point on a Cauchy loop.
            ddv a = dd_two_prod(ti, om), sn, cs;
            a = dd_quick_two_sum(a.hi, a.lo);
            dd_sincos(a, &sn, &cs);
            const ddv gr = dd_mul(g, cs), gi = dd_mul(g, sn);
            sum.re = dd_add(sum.re, dd_add(dd_mul(term.re, gr), dd_mul({-term.im.hi, -term.im.lo}, gi)));
            sum.im = dd_add(sum.im, dd_add(dd_mul(term.re, gi), dd_mul(term.im, gr)));
        } else {
            sum.re = dd_add(sum.re, dd_mul(term.re, g));
            sum.im = dd_add(sum.im, dd_mul(term.im, g));
        }
    }
    sum.re = warp_sum(sum.re);
    sum.im = warp_sum(sum.im);
    if (lane != 0) return;
    double2 h;
    if (unscaled) {
        const double scale = exp(-s);
        h = cmk(dd_mul_d(sum.re, scale).hi, dd_mul_d(sum.im, scale).hi);
    } else {
        h = cmk(sum.re.hi, sum.im.hi);
    }
    if (isfinite(h.x) && isfinite(h.y)) jac[JAC_ROW(i, k, p) + NN + 1] = h;
}
