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

// Threads per block of eval_fused / eval_gen: one point each, one equation per block row.
#define EV_THREADS 64

// Writes each warp's 32 rows tile[t][0..W) (points i0 + t, equation k) to the point-major
// jac: consecutive lanes store consecutive 16-byte words of consecutive rows (a row is
// contiguous, rows of one equation are n·W apart), instead of 32 scattered stores.
__device__ __forceinline__ void store_rows(double2 (*tile)[W], double2* __restrict__ jac,
                                           long i0, int k, int p) {
    const int wbase = threadIdx.x & ~31, lane = threadIdx.x & 31;
    __syncwarp();
    for (int e = lane; e < 32 * W; e += 32) {
        const int t = e / W, j = e - t * W;
        const long i = i0 + wbase + t;
        if (i < p) jac[(i * NEQ + k) * W + j] = tile[wbase + t][j];
    }
}

// Fused alternative to eval_exp + the per-equation ZGEMMs: thread (i, k) forms row k of
// point i directly, jac[i][k][:] = Σ_{c ∈ block k} e_c · B_kᵀ[c][:], keeping the W
// accumulators in registers (no e buffer in device memory).
extern "C" __global__ void __launch_bounds__(EV_THREADS)
eval_fused(const double2* __restrict__ z, const double* __restrict__ ahat,
           const double2* __restrict__ bt, double2* __restrict__ jac, int p) {
    __shared__ double2 tile[EV_THREADS][W];
    const long i0 = (long)blockIdx.x * EV_THREADS;
    if (i0 + (threadIdx.x & ~31) >= p) return;  // whole warp past the end
    const long i = (i0 + threadIdx.x < p) ? i0 + threadIdx.x : (long)p - 1;  // lanes past the end recompute the last
    const int k = blockIdx.y;
    double2 zz[NZ];
#pragma unroll
    for (int j = 0; j < NZ; ++j) zz[j] = z[i * NZ + j];
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
#pragma unroll
    for (int j = 0; j < W; ++j) tile[threadIdx.x][j] = acc[j];
    store_rows(tile, jac, i0, k, p);
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
