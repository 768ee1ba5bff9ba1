// Glynn permanent as a Gray-code sum on the GPU (see src/linalg/permanent/cuda.rs).
//
//   S = Σ_g (−1)^|g| Π_i v_i(g),  v(g) = v0 + Σ_{b ∈ g} c_b,  perm = 2^(1−n)·S,
//
// over the 2^(n−1) codes g. Codes are taken in blocks of W = 2^PS consecutive Gray indices
// k = qW + r: gray(k) = gray(q)·W + T with T over all W low-bit patterns, so the W row-sum
// vectors of block q are u(q) + D_T (D_T = Σ_{b ∈ T} c_b, a fixed table passed as a kernel
// parameter and read with compile-time offsets) and the sign is (−1)^(q + |T|). Thread t
// owns the 2^lq consecutive blocks q0 = t·2^lq ...: its first u is computed directly, then
// u(q) changes by ±c_(ctz(q)+PS) per block. Since q0 is a multiple of 2^lq, ctz(q) is the
// same for every thread at the same local step: a warp reads the same column at the same
// time (a shared-memory broadcast; SUperman's conflict-free chunking).
//
// The host prepends:
//   PN  order n (≥ 1)             PNP  column stride (n rounded up to even)
//   PS  log2 W (PS ≤ n − 1)       PTAB doubles in the table parameter
//   PACC 0 plain, 1 Kahan, 2 double-double (per-thread accumulation of block sums)
//   PSMEM 1: columns staged in shared memory, 0: read through the L1 cache
//   PCOMPLEX 0 real, 1 complex
//   PMINB minimum resident blocks per SM asked of the register allocator (launch bounds)
//   PUNIT 1: real, PS ≥ 1, column c_0 = −2 in every row and v0 holds midpoints (below)
// Layouts (doubles): cols[b·PNP + i] = c_b,i (complex: then the imaginary parts at
// PB·PNP + b·PNP + i); v0[i] (complex: imaginary at PNP + i); tab.d[(T−1)·PN + i] = D_T,i for
// T = 1..W−1 (complex: imaginary at (W−1)·PN + (T−1)·PN + i).
// Output per CUDA block: (hi, lo) double-double partial sums, real then imaginary part.

#define PB (PN - 1)
#define PW (1 << PS)
#define PMAXTHREADS 256
#if PCOMPLEX
#define PK 4
#else
#define PK 2
#endif

struct Tab {
    double d[PTAB];
};

struct Acc {
    double s, c;
};

// Double-double accumulation of a double (TwoSum, then FastTwoSum renormalization).
__device__ __forceinline__ void dd_add(Acc& a, double x) {
    double s = a.s + x;
    double bb = s - a.s;
    double e = (a.s - (s - bb)) + (x - bb);
    double lo = a.c + e;
    double hi = s + lo;
    a.c = lo - (hi - s);
    a.s = hi;
}

__device__ __forceinline__ void acc_add(Acc& a, double x) {
#if PACC == 0
    a.s += x;
#elif PACC == 1
    double y = x - a.c;
    double t = a.s + y;
    a.c = (t - a.s) - y;
    a.s = t;
#else
    dd_add(a, x);
#endif
}

// The accumulator as an unevaluated sum hi + lo.
__device__ __forceinline__ void acc_parts(const Acc& a, double& hi, double& lo) {
#if PACC == 1
    hi = a.s;
    lo = -a.c;
#else
    hi = a.s;
    lo = a.c;
#endif
}

// (−1)^|T|
#define TSIGN(T) ((__popc(T) & 1) ? -1.0 : 1.0)

#if !PCOMPLEX && PUNIT
// Unit-column form (PUNIT, needs PS ≥ 1): the host scaled the rows so that column c_0 is
// −2 in every row, and u holds the midpoints m = v − 1 of the pairs (T, T+1), T even:
// v_T = m_T + 1, v_(T+1) = m_T − 1 with m_T = u + D_T. Then
//   (−1)^|T| (Π_i (m_i + 1) − Π_i (m_i − 1)),
// and p·(m + 1) = fma(p, m, p), p·(m − 1) = fma(p, m, −p): one FMA per factor instead of an
// addition and a multiplication, so a pair of codes costs 3n FP64 instructions, not 4n.
__device__ __forceinline__ double block_sum(const double (&u)[PN], const Tab& tab) {
    double p[PW / 2];
#pragma unroll
    for (int T = 0; T < PW; T += 2) {
        double pa = 1.0, pb = 1.0, qa = 1.0, qb = 1.0;  // (+1) and (−1) products, two chains
#pragma unroll
        for (int i = 0; i < PN; i++) {
            double x = T == 0 ? u[i] : u[i] + tab.d[(T - 1) * PN + i];
            if (i == 0) {
                pa = x + 1.0;
                qa = x - 1.0;
            } else if (i == 1) {
                pb = x + 1.0;
                qb = x - 1.0;
            } else if (i & 1) {
                pb = fma(pb, x, pb);
                qb = fma(qb, x, -qb);
            } else {
                pa = fma(pa, x, pa);
                qa = fma(qa, x, -qa);
            }
        }
        p[T / 2] = PN > 1 ? fma(pa, pb, -(qa * qb)) : pa - qa;
    }
    double s = p[0];
#pragma unroll
    for (int T = 2; T < PW; T += 2) {
        s += TSIGN(T) * p[T / 2];
    }
    return s;
}
#elif !PCOMPLEX
// Σ_T (−1)^|T| Π_i (u_i + D_T,i) for one block (two interleaved partial products per code).
__device__ __forceinline__ double block_sum(const double (&u)[PN], const Tab& tab) {
    double p[PW];
#pragma unroll
    for (int T = 0; T < PW; T++) {
        double pa = 1.0, pb = 1.0;
#pragma unroll
        for (int i = 0; i < PN; i++) {
            double x = T == 0 ? u[i] : u[i] + tab.d[(T - 1) * PN + i];
            if (i == 0) {
                pa = x;
            } else if (i == 1) {
                pb = x;
            } else if (i & 1) {
                pb *= x;
            } else {
                pa *= x;
            }
        }
        p[T] = PN > 1 ? pa * pb : pa;
    }
    double s = p[0];
#pragma unroll
    for (int T = 1; T < PW; T++) {
        s += TSIGN(T) * p[T];
    }
    return s;
}
#else
__device__ __forceinline__ void cmul_acc(double& pr, double& pi, double xr, double xi) {
    double r = fma(pr, xr, -pi * xi);
    pi = fma(pr, xi, pi * xr);
    pr = r;
}

__device__ __forceinline__ void block_sum(const double (&ur)[PN], const double (&ui)[PN],
                                          const Tab& tab, double& sr, double& si) {
    const int IM = (PW - 1) * PN;
    double qr[PW], qi[PW];
#pragma unroll
    for (int T = 0; T < PW; T++) {
        double pr = 1.0, pi = 0.0;
#pragma unroll
        for (int i = 0; i < PN; i++) {
            double xr = T == 0 ? ur[i] : ur[i] + tab.d[(T - 1) * PN + i];
            double xi = T == 0 ? ui[i] : ui[i] + tab.d[IM + (T - 1) * PN + i];
            if (i == 0) {
                pr = xr;
                pi = xi;
            } else {
                cmul_acc(pr, pi, xr, xi);
            }
        }
        qr[T] = pr;
        qi[T] = pi;
    }
    sr = qr[0];
    si = qi[0];
#pragma unroll
    for (int T = 1; T < PW; T++) {
        sr += TSIGN(T) * qr[T];
        si += TSIGN(T) * qi[T];
    }
}
#endif

// Adds the block's per-thread parts red[k][t] in thread order (double-double) and writes
// PK doubles per block.
__device__ __forceinline__ void reduce_block(double (&red)[PK][PMAXTHREADS], double* out) {
    __syncthreads();
    if (threadIdx.x == 0) {
#pragma unroll
        for (int k = 0; k < PK; k += 2) {
            Acc r = {0.0, 0.0};
            for (unsigned t = 0; t < blockDim.x; t++) {
                dd_add(r, red[k][t]);
                dd_add(r, red[k + 1][t]);
            }
            out[(size_t)blockIdx.x * PK + k] = r.s;
            out[(size_t)blockIdx.x * PK + k + 1] = r.c;
        }
    }
}

// lq: log2 of the blocks per thread. Launch with blockDim.x ≤ PMAXTHREADS, and
// (gridDim.x · blockDim.x) · 2^lq = 2^(PB − PS); dynamic shared memory = the column table
// when PSMEM.
extern "C" __global__ void __launch_bounds__(PMAXTHREADS, PMINB)
    glynn(const double* __restrict__ cols, const double* __restrict__ v0,
          const __grid_constant__ Tab tab, double* __restrict__ out, unsigned lq) {
#if PSMEM
    extern __shared__ double2 smem2[];
    double* sc = (double*)smem2;
    for (int k = threadIdx.x; k < (PCOMPLEX ? 2 : 1) * PB * PNP; k += blockDim.x) {
        sc[k] = cols[k];
    }
    __syncthreads();
    const double* C = sc;
#else
    const double* C = cols;
#endif
    __shared__ double red[PK][PMAXTHREADS];

    const unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long nq = 1ull << lq;
    const unsigned long long q0 = tid << lq;
    unsigned long long gq = q0 ^ (q0 >> 1);

    double ur[PN];
#if PCOMPLEX
    double ui[PN];
#endif
#pragma unroll
    for (int i = 0; i < PN; i++) {
        ur[i] = v0[i];
#if PCOMPLEX
        ui[i] = v0[PNP + i];
#endif
    }
    // u(q0) = v0 + Σ_{b ∈ gray(q0)} c_(b+PS), in increasing b.
    for (int b = 0; b < PB - PS; b++) {
        if ((gq >> b) & 1ull) {
            const double* c = C + (b + PS) * PNP;
#pragma unroll
            for (int i = 0; i < PN; i++) {
                ur[i] += c[i];
#if PCOMPLEX
                ui[i] += c[PB * PNP + i];
#endif
            }
        }
    }

    Acc ar = {0.0, 0.0};
#if PCOMPLEX
    Acc ai = {0.0, 0.0};
#endif
    unsigned long long j = 0;
    for (;;) {
        const bool odd = ((q0 + j) & 1ull) != 0;
#if PCOMPLEX
        double sr, si;
        block_sum(ur, ui, tab, sr, si);
        acc_add(ar, odd ? -sr : sr);
        acc_add(ai, odd ? -si : si);
#else
        double s = block_sum(ur, tab);
        acc_add(ar, odd ? -s : s);
#endif
        j++;
        if (j == nq) {
            break;
        }
        // q = q0 + j flips bit ctz(q) = ctz(j) of gray(q) (q0 is a multiple of 2^lq > j).
        const int b = __ffsll((long long)j) - 1;
        gq ^= 1ull << b;
        const double sg = ((gq >> b) & 1ull) ? 1.0 : -1.0;
        const double2* c2 = (const double2*)(C + (b + PS) * PNP);
#pragma unroll
        for (int i = 0; i + 1 < PN; i += 2) {
            double2 c = c2[i / 2];
            ur[i] = fma(sg, c.x, ur[i]);
            ur[i + 1] = fma(sg, c.y, ur[i + 1]);
        }
        if (PN & 1) {
            ur[PN - 1] = fma(sg, C[(b + PS) * PNP + PN - 1], ur[PN - 1]);
        }
#if PCOMPLEX
        const double2* d2 = (const double2*)(C + PB * PNP + (b + PS) * PNP);
#pragma unroll
        for (int i = 0; i + 1 < PN; i += 2) {
            double2 c = d2[i / 2];
            ui[i] = fma(sg, c.x, ui[i]);
            ui[i + 1] = fma(sg, c.y, ui[i + 1]);
        }
        if (PN & 1) {
            ui[PN - 1] = fma(sg, C[PB * PNP + (b + PS) * PNP + PN - 1], ui[PN - 1]);
        }
#endif
    }

    acc_parts(ar, red[0][threadIdx.x], red[1][threadIdx.x]);
#if PCOMPLEX
    acc_parts(ai, red[2][threadIdx.x], red[3][threadIdx.x]);
#endif
    reduce_block(red, out);
}
