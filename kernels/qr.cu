// Unified Euler/Newton directions by batched Householder QR (T. Chen §6, Remark 1), the
// alternative to gj_directions (`SolveMethod::Qr`, `--cuda-solve qr`). Same square system
// as the Gauss–Jordan kernel, A X = B with A = [∂H/∂y; y*] (rows equilibrated, log-mode
// points as fill_direction_system(log = true)) and B = [−∂H/∂τ −H; 0 0], in three steps:
//   1. qr_build: per point the column-major NN × (NN + 2) block [A | B] (lda = NN) in the
//      workspace qa (p blocks of QSTRIDE complex values);
//   2. cublasZgeqrfBatched (host side) factors the leading NN × NN part of every block in
//      place, A = Q R: R on and above the diagonal, the Householder vectors v_k below it
//      (v_k(k) = 1 implicit, H_k = I − τ_k v_k v_kᴴ, Q = H_0 H_1 ⋯ H_{NN−1}), τ in qtau
//      (p × NN); the two columns of B are not touched;
//   3. qr_directions: X = R⁻¹ Qᴴ B, with Qᴴ = H_{NN−1}ᴴ ⋯ H_0ᴴ applied to both columns of B
//      from the stored vectors, then back substitution; the condition estimate is
//      max|R_kk| / min|R_kk| (∞ for a zero diagonal entry), as the CPU's qr_solve gives it.
// The outputs are laid out as gj_directions writes them: euler, newton p × NN, cond p.

#define QSTRIDE (NN * (NN + 2))

// Thread (point i, row r), r < NN: row r of [A | B] into the point's block of qa. The same
// arithmetic as gj_directions' set-up: ∂h/∂y_j = ∂h/∂z_j / y_j (not in log mode), each
// equation row divided by its largest |∂h_k/∂y_j| (the first NEQ columns in log mode, whose
// column NEQ is zero), the last row conj(y) or, in log mode, e_NEQᵀ; B's last row is zero.
extern "C" __global__ void qr_build(const double2* __restrict__ jac, const double2* __restrict__ y,
                                    const unsigned char* __restrict__ logm,
                                    double2* __restrict__ qa, int p) {
    const long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long)p * NN) return;
    const long i = t / NN;
    const int r = (int)(t - i * NN);
    const bool lg = logm && logm[i];
    // element (r, j) of the block at out[j * NN]
    double2* out = qa + i * QSTRIDE + r;
    if (r == NEQ) {
#pragma unroll
        for (int j = 0; j < NN; ++j)
            out[j * NN] = lg ? cmk(j == NEQ ? 1.0 : 0.0, 0.0) : cconj(y[i * NN + j]);
        out[NN * NN] = cmk(0.0, 0.0);
        out[(NN + 1) * NN] = cmk(0.0, 0.0);
        return;
    }
    const double2* row = jac + JAC_ROW(i, r, p);
    double2 a[NN];
#pragma unroll
    for (int j = 0; j < NN; ++j) {
        a[j] = row[j];
        if (!lg) a[j] = cmul(a[j], safe_inv(y[i * NN + j]));
    }
    double mx = 0.0;
#pragma unroll
    for (int j = 0; j < NEQ; ++j) mx = fmax(mx, cabs2(a[j]));
    if (!lg) mx = fmax(mx, cabs2(a[NEQ]));
    else a[NEQ] = cmk(0.0, 0.0);
    const double sc = (mx > 0.0 && isfinite(mx)) ? 1.0 / mx : 1.0;
#pragma unroll
    for (int j = 0; j < NN; ++j) out[j * NN] = cscale(a[j], sc);
    out[NN * NN] = cscale(cneg(row[NN]), sc);
    out[(NN + 1) * NN] = cscale(cneg(row[NN + 1]), sc);
}

// Sum over the SEG lanes of a segment; every lane gets the same value (the butterfly adds
// the same two partial sums in each lane, and addition commutes exactly).
__device__ __forceinline__ double seg_sum(double v) {
#pragma unroll
    for (int off = SEG / 2; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off, SEG);
    return v;
}

__device__ __forceinline__ double2 seg_bcast(double2 v, int lane) {
    return cmk(__shfl_sync(0xffffffffu, v.x, lane, SEG), __shfl_sync(0xffffffffu, v.y, lane, SEG));
}

// QR_THREADS (threads per block) comes from the host's header (kernels::QR_THREADS).
#define QR_POINTS (QR_THREADS / SEG)

// One segment of SEG lanes per point (as gj_directions); lane r < NN holds row r of both
// right-hand sides. Column k of the factored block is read by the segment's lanes at
// consecutive addresses (lane r reads entry (r, k)).
extern "C" __global__ void __launch_bounds__(QR_THREADS)
qr_directions(const double2* __restrict__ qa, const double2* __restrict__ qtau,
              double2* __restrict__ euler, double2* __restrict__ newton,
              double* __restrict__ cond, int p) {
    const long i0 = (long)blockIdx.x * QR_POINTS;
    const int r = threadIdx.x & (SEG - 1);
    const int pt = threadIdx.x / SEG;
    const long i = i0 + pt;
    if (i0 + (long)((threadIdx.x & ~31u) / SEG) >= (long)p) return;  // whole warp past the end
    const bool valid = i < (long)p;
    const bool act = valid && r < NN;
    const double2* m = qa + (valid ? i : 0) * QSTRIDE;
    const double2* tau = qtau + (valid ? i : 0) * NN;
    const double2 zero = cmk(0.0, 0.0);
    double2 b0 = act ? m[NN * NN + r] : zero;
    double2 b1 = act ? m[(NN + 1) * NN + r] : zero;

    // Qᴴ B: for k = 0 … NN−1, b ← b − conj(τ_k) v_k (v_kᴴ b)
#pragma unroll
    for (int k = 0; k < NN; ++k) {
        double2 v = zero;
        if (act && r == k) v = cmk(1.0, 0.0);
        else if (act && r > k) v = m[k * NN + r];
        const double2 cv = cconj(v);
        const double2 s0 = cmul(cv, b0), s1 = cmul(cv, b1);
        const double2 t0 = cmk(seg_sum(s0.x), seg_sum(s0.y));
        const double2 t1 = cmk(seg_sum(s1.x), seg_sum(s1.y));
        const double2 ct = valid ? cconj(tau[k]) : zero;
        b0 = cfnms(b0, v, cmul(ct, t0));
        b1 = cfnms(b1, v, cmul(ct, t1));
    }

    // R X = Qᴴ B from the last row up; lane k publishes its entry, the rows above subtract.
    double2 x0 = zero, x1 = zero;
    double dmax = 0.0, dmin = 1.0 / 0.0;
#pragma unroll
    for (int k = NN - 1; k >= 0; --k) {
        const double2 rkk = valid ? m[k * NN + k] : cmk(1.0, 0.0);
        const double d = cabs2(rkk);
        dmax = fmax(dmax, d);
        dmin = fmin(dmin, d);
        const double2 ir = crecip(rkk);
        const double2 xk0 = cmul(seg_bcast(b0, k), ir);
        const double2 xk1 = cmul(seg_bcast(b1, k), ir);
        if (r == k) {
            x0 = xk0;
            x1 = xk1;
        } else if (act && r < k) {
            const double2 rrk = m[k * NN + r];
            b0 = cfnms(b0, rrk, xk0);
            b1 = cfnms(b1, rrk, xk1);
        }
    }
    if (!act) return;
    euler[i * NN + r] = x0;
    newton[i * NN + r] = x1;
    if (r == 0) cond[i] = (dmin > 0.0) ? dmax / dmin : 1.0 / 0.0;
}
