// Batched evaluation of the extended Jacobian [D_y H, D_τ H, H] (T. Chen §5, Algorithm 2).
// Layouts (complex = double2):
//   y    p × NN   row-major (point-major)          tau  p
//   z    p × NZ   row-major: (log y_0 … log y_n, τ)
//   ahat MT × NZ  term-major: column c of Â (exponents a_hom, then the lift ω)
//   e    MT × p   term-major (e[c·p + i]): the shifted exp(ẑ_i Â)_c, the ZGEMM operand
//   bt   MT × W   row-major: B_kᵀ of every equation, stacked in term order
//   jac  NEQ × p × W row-major (equation-major, JAC_ROW in common.cuh): per equation and
//        point (∂h/∂y_0 … ∂h/∂y_n, ∂h/∂τ, h)
//   logm p bytes (or null): point i is given as z = log y (log mode, see Points::log_mode)
//   lifts p × MT (or null): per-point lifts ω' replacing the last row of Â (polyhedral
//        paths: ω'(a) = ⟨a,α⟩ + ω(a) − β_k of their cell); the exponent of term c is then
//        ⟨â_c, log y⟩ + τ·ω'_c and ∂h/∂τ = Σ_c ω'_c·coeff_c·e_c depends on the point.

// Z ← log Y, τ appended (points in log mode are copied: they are z already). One thread
// per entry of z.
extern "C" __global__ void log_points(const double2* __restrict__ y,
                                      const double2* __restrict__ tau,
                                      const unsigned char* __restrict__ logm,
                                      double2* __restrict__ z, int p) {
    long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long)p * NZ) return;
    long i = t / NZ;
    int j = (int)(t - i * NZ);
    if (j < NN) {
        const double2 v = y[i * NN + j];
        z[t] = (logm && logm[i]) ? v : safe_ln(v);
    } else {
        z[t] = tau[i];
    }
}

// e ← exp(ẑ Â − s_k) per equation block k, s_k = the block's largest Re(ẑ Â)_c (the
// per-equation shift: scales equation k by e^{−s_k}, moving neither zeros nor directions).
// Grid: x over points, y over equations; all threads of a warp read the same Â column.
extern "C" __global__ void eval_exp(const double2* __restrict__ z,
                                    const double* __restrict__ ahat,
                                    const double* __restrict__ lifts,
                                    double2* __restrict__ e, int p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = blockIdx.y;
    if (i >= p) return;
    double2 zz[NZ];
#pragma unroll
    for (int j = 0; j < NZ; ++j) zz[j] = z[(long)i * NZ + j];
    const double* lp = lifts ? lifts + (long)i * MT : nullptr;
    const int c0 = BSTART[k], c1 = BSTART[k + 1];
    double s = -1.0 / 0.0;
    for (int c = c0; c < c1; ++c) s = fmax(s, term_exponent(zz, ahat, lp, c).x);
    for (int c = c0; c < c1; ++c) {
        const double2 x = term_exponent(zz, ahat, lp, c);
        double mag = exp(x.x - s), sn, cs;
        sincos(x.y, &sn, &cs);
        e[(long)c * p + i] = cmk(mag * cs, mag * sn);
    }
}

// The ∂h/∂τ column of the cuBLAS route for points with their own lifts (the shared B_kᵀ
// column holds coeff·ω, not coeff·ω'): jac[i][k][NN] = Σ_{c ∈ block k} coeff_c·(e_c·ω'_c).
// Grid: x over points, y over equations.
extern "C" __global__ void tau_column(const double2* __restrict__ e,
                                      const double2* __restrict__ bt,
                                      const double* __restrict__ lifts,
                                      double2* __restrict__ jac, int p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = blockIdx.y;
    if (i >= p) return;
    const double* lp = lifts + (long)i * MT;
    double2 d = cmk(0.0, 0.0);
    for (int c = BSTART[k]; c < BSTART[k + 1]; ++c)
        d = cfma(bt[c * W + NN + 1], cscale(e[(long)c * p + i], lp[c]), d);
    jac[JAC_ROW(i, k, p) + NN] = d;
}

// Fused alternative to eval_exp + the per-equation ZGEMMs: thread (i, k) forms row k of
// point i directly, jac[i][k][:] = Σ_{c ∈ block k} e_c · B_kᵀ[c][:], keeping the W
// accumulators in registers (no e buffer in device memory).
extern "C" __global__ void __launch_bounds__(EV_THREADS)
eval_fused(const double2* __restrict__ z, const double* __restrict__ ahat,
           const double2* __restrict__ bt, const double* __restrict__ lifts,
           double2* __restrict__ jac, int p) {
    __shared__ double2 tile[EV_THREADS][W];
    const long i0 = (long)blockIdx.x * EV_THREADS;
    if (i0 + (threadIdx.x & ~31) >= p) return;  // whole warp past the end
    const long i = (i0 + threadIdx.x < p) ? i0 + threadIdx.x : (long)p - 1;  // lanes past the end recompute the last
    const int k = blockIdx.y;
    double2 zz[NZ];
#pragma unroll
    for (int j = 0; j < NZ; ++j) zz[j] = z[i * NZ + j];
    const double* lp = lifts ? lifts + i * MT : nullptr;
    const int c0 = BSTART[k], c1 = BSTART[k + 1];
    double s = -1.0 / 0.0;
    for (int c = c0; c < c1; ++c) s = fmax(s, term_exponent(zz, ahat, lp, c).x);
    double2 acc[W];
#pragma unroll
    for (int j = 0; j < W; ++j) acc[j] = cmk(0.0, 0.0);
    for (int c = c0; c < c1; ++c) {
        const double2 x = term_exponent(zz, ahat, lp, c);
        double mag = exp(x.x - s), sn, cs;
        sincos(x.y, &sn, &cs);
        double2 ec = cmk(mag * cs, mag * sn);
#pragma unroll
        for (int j = 0; j < NN; ++j) acc[j] = cfma(ec, bt[c * W + j], acc[j]);
        const double2 coeff = bt[c * W + NN + 1];
        // ∂h/∂τ: coeff·ω from B_kᵀ, or coeff·(e_c·ω'_c) with the point's own lift
        acc[NN] = lp ? cfma(coeff, cscale(ec, lp[c]), acc[NN]) : cfma(ec, bt[c * W + NN], acc[NN]);
        acc[NN + 1] = cfma(ec, coeff, acc[NN + 1]);
    }
#pragma unroll
    for (int j = 0; j < W; ++j) tile[threadIdx.x][j] = acc[j];
    store_rows(tile, jac, i0, k, p);
}

// diag(e^{−z}, 1, 1): ∂h/∂y_j = ∂h/∂z_j / y_j; points in log mode keep ∂h/∂z_j. One
// thread per (point, equation, j < NN).
extern "C" __global__ void scale_ext(const double2* __restrict__ y,
                                     const unsigned char* __restrict__ logm,
                                     double2* __restrict__ jac, int p) {
    long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long)p * NEQ * NN) return;
    long i = t / (NEQ * NN);
    if (logm && logm[i]) return;
    int r = (int)(t - i * (NEQ * NN));
    int k = r / NN, j = r - k * NN;
    long at = JAC_ROW(i, k, p) + j;
    jac[at] = cmul(jac[at], safe_inv(y[i * NN + j]));
}
