// Batched evaluation of the extended Jacobian [D_y H, D_τ H, H] (T. Chen §5, Algorithm 2).
// Layouts (complex = double2):
//   y    p × NN   row-major (point-major)          tau  p
//   z    p × NZ   row-major: (log y_0 … log y_n, τ)
//   ahat MT × NZ  term-major: column c of Â (exponents a_hom, then the lift ω)
//   e    MT × p   term-major (e[c·p + i]): the shifted exp(ẑ_i Â)_c, the ZGEMM operand
//   bt   MT × W   row-major: B_kᵀ of every equation, stacked in term order
//   jac  p × NEQ × W row-major: per point and equation (∂h/∂y_0 … ∂h/∂y_n, ∂h/∂τ, h)

// Z ← log Y, τ appended. One thread per entry of z.
extern "C" __global__ void log_points(const double2* __restrict__ y,
                                      const double2* __restrict__ tau,
                                      double2* __restrict__ z, int p) {
    long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long)p * NZ) return;
    long i = t / NZ;
    int j = (int)(t - i * NZ);
    z[t] = (j < NN) ? safe_ln(y[i * NN + j]) : tau[i];
}

// e ← exp(ẑ Â − s_k) per equation block k, s_k = the block's largest Re(ẑ Â)_c (the
// per-equation shift: scales equation k by e^{−s_k}, moving neither zeros nor directions).
// Grid: x over points, y over equations; all threads of a warp read the same Â column.
extern "C" __global__ void eval_exp(const double2* __restrict__ z,
                                    const double* __restrict__ ahat,
                                    double2* __restrict__ e, int p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = blockIdx.y;
    if (i >= p) return;
    double2 zz[NZ];
#pragma unroll
    for (int j = 0; j < NZ; ++j) zz[j] = z[(long)i * NZ + j];
    const int c0 = BSTART[k], c1 = BSTART[k + 1];
    double s = -1.0 / 0.0;
    for (int c = c0; c < c1; ++c) {
        double re = 0.0;
#pragma unroll
        for (int j = 0; j < NZ; ++j) re = fma(zz[j].x, ahat[c * NZ + j], re);
        s = fmax(s, re);
    }
    for (int c = c0; c < c1; ++c) {
        double re = 0.0, im = 0.0;
#pragma unroll
        for (int j = 0; j < NZ; ++j) {
            double a = ahat[c * NZ + j];
            re = fma(zz[j].x, a, re);
            im = fma(zz[j].y, a, im);
        }
        double mag = exp(re - s), sn, cs;
        sincos(im, &sn, &cs);
        e[(long)c * p + i] = cmk(mag * cs, mag * sn);
    }
}

// Fused alternative to eval_exp + the per-equation ZGEMMs: thread (i, k) forms row k of
// point i directly, jac[i][k][:] = Σ_{c ∈ block k} e_c · B_kᵀ[c][:], keeping the W
// accumulators in registers (no e buffer in device memory).
extern "C" __global__ void eval_fused(const double2* __restrict__ z,
                                      const double* __restrict__ ahat,
                                      const double2* __restrict__ bt,
                                      double2* __restrict__ jac, int p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = blockIdx.y;
    if (i >= p) return;
    double2 zz[NZ];
#pragma unroll
    for (int j = 0; j < NZ; ++j) zz[j] = z[(long)i * NZ + j];
    const int c0 = BSTART[k], c1 = BSTART[k + 1];
    double s = -1.0 / 0.0;
    for (int c = c0; c < c1; ++c) {
        double re = 0.0;
#pragma unroll
        for (int j = 0; j < NZ; ++j) re = fma(zz[j].x, ahat[c * NZ + j], re);
        s = fmax(s, re);
    }
    double2 acc[W];
#pragma unroll
    for (int j = 0; j < W; ++j) acc[j] = cmk(0.0, 0.0);
    for (int c = c0; c < c1; ++c) {
        double re = 0.0, im = 0.0;
#pragma unroll
        for (int j = 0; j < NZ; ++j) {
            double a = ahat[c * NZ + j];
            re = fma(zz[j].x, a, re);
            im = fma(zz[j].y, a, im);
        }
        double mag = exp(re - s), sn, cs;
        sincos(im, &sn, &cs);
        double2 ec = cmk(mag * cs, mag * sn);
#pragma unroll
        for (int j = 0; j < W; ++j) acc[j] = cfma(ec, bt[c * W + j], acc[j]);
    }
    double2* row = jac + ((long)i * NEQ + k) * W;
#pragma unroll
    for (int j = 0; j < W; ++j) row[j] = acc[j];
}

// diag(e^{−z}, 1, 1): ∂h/∂y_j = ∂h/∂z_j / y_j. One thread per (point, equation, j < NN).
extern "C" __global__ void scale_ext(const double2* __restrict__ y,
                                     double2* __restrict__ jac, int p) {
    long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long)p * NEQ * NN) return;
    long i = t / (NEQ * NN);
    int r = (int)(t - i * (NEQ * NN));
    int k = r / NN, j = r - k * NN;
    long at = (i * NEQ + k) * W + j;
    jac[at] = cmul(jac[at], safe_inv(y[i * NN + j]));
}
