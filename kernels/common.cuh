// Shared device helpers for the pathtrack kernels. Complex numbers are double2 (x = re,
// y = im). The host (src/backend/cuda/kernels.rs) prepends the compile-time sizes:
//   NEQ  equations n            NN  homogeneous coordinates N = n + 1
//   NZ   columns of Ẑ = N + 1   W   width of an extended-Jacobian row = N + 2
//   MT   terms (columns of Â)   SEG lanes per point in the direction solve (8, 16 or 32)
//   BSTART[NEQ + 1]             first term of each equation block in Â (constant memory)

#ifndef PATHTRACK_COMMON
#define PATHTRACK_COMMON

#define DBL_MIN_POS 2.2250738585072014e-308

__device__ __forceinline__ double2 cmk(double re, double im) { return make_double2(re, im); }
__device__ __forceinline__ double2 cadd(double2 a, double2 b) { return cmk(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ double2 csub(double2 a, double2 b) { return cmk(a.x - b.x, a.y - b.y); }
__device__ __forceinline__ double2 cneg(double2 a) { return cmk(-a.x, -a.y); }
__device__ __forceinline__ double2 cconj(double2 a) { return cmk(a.x, -a.y); }
__device__ __forceinline__ double2 cscale(double2 a, double s) { return cmk(a.x * s, a.y * s); }
__device__ __forceinline__ double2 cmul(double2 a, double2 b) {
    return cmk(fma(a.x, b.x, -a.y * b.y), fma(a.x, b.y, a.y * b.x));
}
// acc - a*b, two fused multiply-adds per part (as cfma)
__device__ __forceinline__ double2 cfnms(double2 acc, double2 a, double2 b) {
    return cmk(fma(-a.x, b.x, fma(a.y, b.y, acc.x)), fma(-a.x, b.y, fma(-a.y, b.x, acc.y)));
}
// acc + a*b
__device__ __forceinline__ double2 cfma(double2 a, double2 b, double2 acc) {
    return cmk(fma(a.x, b.x, fma(-a.y, b.y, acc.x)), fma(a.x, b.y, fma(a.y, b.x, acc.y)));
}
__device__ __forceinline__ double cabs2(double2 a) { return hypot(a.x, a.y); }
__device__ __forceinline__ double cnorm2(double2 a) { return fma(a.x, a.x, a.y * a.y); }
// 1 / a with scaling (no overflow/underflow of |a|^2 for representable a).
__device__ __forceinline__ double2 crecip(double2 a) {
    double s = fmax(fabs(a.x), fabs(a.y));
    if (s == 0.0) return cmk(1.0 / 0.0, 0.0);
    double2 b = cscale(a, 1.0 / s);
    double d = fma(b.x, b.x, b.y * b.y);
    return cmk(b.x / (d * s), -b.y / (d * s));
}
// log y with |y| clamped to the smallest normal double (as eval::safe_ln on the CPU).
__device__ __forceinline__ double2 safe_ln(double2 y) {
    double r = fmax(hypot(y.x, y.y), DBL_MIN_POS);
    return cmk(log(r), atan2(y.y, y.x));
}
// 1 / y consistent with safe_ln (as eval::safe_inv on the CPU).
__device__ __forceinline__ double2 safe_inv(double2 y) {
    double r2 = y.x * y.x + y.y * y.y;
    if (r2 == 0.0) {
        double2 ph = cmk(1.0, 0.0);
        if (y.x != 0.0 || y.y != 0.0) {
            double r = hypot(y.x, y.y);
            ph = cmk(y.x / r, y.y / r);
        }
        return cmk(ph.x / DBL_MIN_POS, -ph.y / DBL_MIN_POS);
    }
    return cmk(y.x / r2, -y.y / r2);
}


// Threads per block of eval_fused / eval_gen: one point each, one equation per block row.
#define EV_THREADS 64

// The extended Jacobians of the p points of one launch are stored equation-major: row k
// of point i, (∂h_k/∂y_0 … ∂h_k/∂y_n, ∂h_k/∂τ, h_k), is the W entries from JAC_ROW(i, k, p),
// so the rows of one equation for consecutive points are one contiguous range (the
// evaluators, one equation per block, write it as a stream; point-major rows, n·W apart,
// were 256-byte pieces scattered over the whole buffer and made the evaluation as slow as
// its stores).
#define JAC_ROW(i, k, p) (((long)(k) * (p) + (i)) * W)

// Writes each warp's 32 rows tile[t][0..W) (points i0 + t, equation k) to jac: the rows
// are contiguous in both, so consecutive lanes store consecutive 16-byte words.
__device__ __forceinline__ void store_rows(double2 (*tile)[W], double2* __restrict__ jac,
                                           long i0, int k, int p) {
    const int wbase = threadIdx.x & ~31, lane = threadIdx.x & 31;
    __syncwarp();
    const long first = i0 + wbase;  // < p: whole warps past the end have returned
    const int rows = (int)((long)p - first < 32 ? (long)p - first : 32);
    const double2* src = tile[wbase];
    double2* dst = jac + JAC_ROW(first, k, p);
    for (int e = lane; e < rows * W; e += 32) dst[e] = src[e];
}

// Exponent (real and imaginary part) of term c at ẑ: Σ_{j<NN} z_j·a_jc + τ·ω, with ω the
// point's own lift when it has one (lp = its lift row, or null) and Â's last row otherwise.
__device__ __forceinline__ double2 term_exponent(const double2* zz, const double* __restrict__ ahat,
                                                 const double* __restrict__ lp, int c) {
    double re = 0.0, im = 0.0;
#pragma unroll
    for (int j = 0; j < NN; ++j) {
        double a = ahat[c * NZ + j];
        re = fma(zz[j].x, a, re);
        im = fma(zz[j].y, a, im);
    }
    const double w = lp ? lp[c] : ahat[c * NZ + NN];
    return cmk(fma(zz[NN].x, w, re), fma(zz[NN].y, w, im));
}

#endif
