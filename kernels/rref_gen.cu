// Gauss–Jordan row reduction for the element types other than Z/p in u32 words, compiled by
// NVRTC with one of these headers injected at the top:
//   #define ZP64 / #define P <p>ull / #define PNEG <−p^{-1} mod 2^64>ull / #define R2 <2^128 mod p>ull
//       Z/p, p < 2^63, u64 words; products by Montgomery's REDC with R = 2^64
//       (128-bit products through __umul64hi).
//       (p = 2: `#define P_IS_2`, products are bit ANDs, R2 = 1)
//   #define F64       real double
//   #define C64       complex double (double2: x real, y imaginary part)
// and `#define BMAX <largest panel width>`.
//
// Same scheme as rref_zp.cu: the matrix is row-major (m × ncols), rows are never swapped,
// `state[r]` is 0 for a candidate row, 2 for a pivot row of the current panel, 1 for an
// earlier pivot row; `ctl[0]` holds the pivot row of the current column (NONE: free) and
// `ctl[1]` the number of pivots so far (per panel in the blocked route). `sc[0]` holds the
// inverse of the current pivot value (in Montgomery form for ZP64).
//
// Pivot rule, as the CPU engine: over Z/p the candidate of smallest row index with a
// non-zero entry; over floats the candidate of largest magnitude (|x|; `cabs` for complex)
// above the tolerance `tol`, ties to the smallest row index.

typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned char u8;

#define NONE 0xffffffffu

#if defined(ZP64)
#define EXACT 1
typedef u64 T;
#ifdef P_IS_2
__device__ __forceinline__ u64 montmul(u64 a, u64 b) { return a & b; }
#else
// (hi·2^64 + lo) · 2^-64 mod P for hi·2^64 + lo < P·2^64: t < 2P < 2^64 since P < 2^63.
__device__ __forceinline__ u64 redc(u64 lo, u64 hi) {
    u64 q = lo * PNEG;
    u64 t = hi + __umul64hi(q, P) + (lo != 0ull);
    return t >= P ? t - P : t;
}
__device__ __forceinline__ u64 montmul(u64 a, u64 b) { return redc(a * b, __umul64hi(a, b)); }
#endif
__device__ __forceinline__ u64 mulmod(u64 a, u64 b) { return montmul(montmul(a, b), R2); }
__device__ __forceinline__ T t_zero() { return 0ull; }
__device__ __forceinline__ T t_one() { return 1ull; }
__device__ __forceinline__ bool t_is_zero(T a) { return a == 0ull; }
__device__ __forceinline__ T t_sub(T a, T b) { return a >= b ? a - b : a + (P - b); }
__device__ __forceinline__ double t_mag(T a) { return a != 0ull ? 1.0 : 0.0; }
// Multipliers are kept in Montgomery form (a·2^64 mod P), so one REDC gives m · x.
__device__ __forceinline__ T t_pre(T a) { return montmul(a, R2); }
__device__ __forceinline__ T t_mulpre(T mpre, T x) { return montmul(mpre, x); }
// a − m·x with m in Montgomery form.
__device__ __forceinline__ T t_fms(T a, T mpre, T x) { return t_sub(a, montmul(mpre, x)); }
__device__ T t_inv(T a) {
    u64 e = P - 2ull, r = 1ull;
    while (e) {
        if (e & 1ull) r = mulmod(r, a);
        a = mulmod(a, a);
        e >>= 1;
    }
    return r;
}
#elif defined(F64)
#define EXACT 0
typedef double T;
__device__ __forceinline__ T t_zero() { return 0.0; }
__device__ __forceinline__ T t_one() { return 1.0; }
__device__ __forceinline__ bool t_is_zero(T a) { return a == 0.0; }
__device__ __forceinline__ T t_sub(T a, T b) { return a - b; }
__device__ __forceinline__ double t_mag(T a) { return fabs(a); }
__device__ __forceinline__ T t_pre(T a) { return a; }
__device__ __forceinline__ T t_mulpre(T m, T x) { return m * x; }
__device__ __forceinline__ T t_fms(T a, T m, T x) { return fma(-m, x, a); }
__device__ __forceinline__ T t_inv(T a) { return 1.0 / a; }
#elif defined(C64)
#define EXACT 0
typedef double2 T;
__device__ __forceinline__ T t_zero() { return make_double2(0.0, 0.0); }
__device__ __forceinline__ T t_one() { return make_double2(1.0, 0.0); }
__device__ __forceinline__ bool t_is_zero(T a) { return a.x == 0.0 && a.y == 0.0; }
__device__ __forceinline__ T t_sub(T a, T b) { return make_double2(a.x - b.x, a.y - b.y); }
// |a| exactly as the CPU's `field::cabs`: m·√(1 + (s/m)²), correctly rounded operations in
// the same order (no contraction), so pivot ties break identically.
__device__ __forceinline__ double t_mag(T a) {
    double u = fabs(a.x), v = fabs(a.y);
    double m = u >= v ? u : v, s = u >= v ? v : u;
    if (!(m > 0.0)) return m + s;
    if (isinf(m)) return m;
    double r = __ddiv_rn(s, m);
    return __dmul_rn(m, __dsqrt_rn(__dadd_rn(1.0, __dmul_rn(r, r))));
}
__device__ __forceinline__ T t_pre(T a) { return a; }
__device__ __forceinline__ T t_mulpre(T m, T x) {
    return make_double2(m.x * x.x - m.y * x.y, m.x * x.y + m.y * x.x);
}
__device__ __forceinline__ T t_fms(T a, T m, T x) {
    return make_double2(fma(m.y, x.y, fma(-m.x, x.x, a.x)), fma(-m.y, x.x, fma(-m.x, x.y, a.y)));
}
// conj(a) / |a|^2, as num_complex's inv.
__device__ __forceinline__ T t_inv(T a) {
    double d = a.x * a.x + a.y * a.y;
    return make_double2(a.x / d, -a.y / d);
}
#else
#error "one of ZP64, F64, C64 must be defined"
#endif

// Pivot choice weight of x: 1/0 over Z/p; |x| when above tol (else 0) for floats.
__device__ __forceinline__ double weight(T x, double tol) {
#if EXACT
    return t_is_zero(x) ? 0.0 : 1.0;
#else
    double a = t_mag(x);
    return a > tol ? a : 0.0;
#endif
}

// One block scans column `col` (element r at X[r·stride + off]) over the candidate rows:
// the best weight, ties (and the exact rule: any non-zero) to the smallest row index.
// ctl[0] ← that row, or NONE when every weight is 0.
#define SEARCH_THREADS 1024
__device__ void search_block(const T* __restrict__ X, u64 stride, u64 off,
                             const u8* __restrict__ state, u32 m, double tol, u32* ctl) {
    __shared__ double sw[SEARCH_THREADS / 32];
    __shared__ u32 sr[SEARCH_THREADS / 32];
    double bw = 0.0;
    u32 br = NONE;
    for (u32 r = threadIdx.x; r < m; r += blockDim.x) {
        if (state[r] != 0) continue;
        double w = weight(X[(u64)r * stride + off], tol);
        if (w > bw) {  // rows increase along the loop: strict > keeps the smallest index
            bw = w;
            br = r;
        }
#if EXACT
        if (br != NONE) break;
#endif
    }
    // Warp reduction: larger weight, then smaller row.
    for (int o = 16; o > 0; o >>= 1) {
        double ow = __shfl_down_sync(0xffffffffu, bw, o);
        u32 orr = __shfl_down_sync(0xffffffffu, br, o);
        if (ow > bw || (ow == bw && orr < br)) {
            bw = ow;
            br = orr;
        }
    }
    u32 lane = threadIdx.x & 31u, wid = threadIdx.x >> 5;
    if (lane == 0) {
        sw[wid] = bw;
        sr[wid] = br;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double w = 0.0;
        u32 r = NONE;
        for (u32 i = 0; i < blockDim.x / 32u; ++i)
            if (sw[i] > w || (sw[i] == w && sr[i] < r)) {
                w = sw[i];
                r = sr[i];
            }
        ctl[0] = w > 0.0 ? r : NONE;
    }
}

// ---------------------------------------------------------------- column by column

extern "C" __global__ void __launch_bounds__(SEARCH_THREADS) g_col_search(const T* __restrict__ A, const u8* __restrict__ state,
                                        u32 m, u32 ncols, u32 c, double tol, u32* ctl) {
    search_block(A, ncols, c, state, m, tol, ctl);
}

// Multipliers mult[r] = A[r, c] (pre-transformed; 0 for the pivot row and, unless `above`,
// earlier pivots); the pivot value to pvals[k], its inverse to sc[0].
extern "C" __global__ void g_col_mults(const T* __restrict__ A, const u8* __restrict__ state,
                                       u32 m, u32 ncols, u32 c, u32 above, const u32* ctl,
                                       T* __restrict__ mult, T* __restrict__ pvals, T* sc) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= m) return;
    u8 st = state[r];
    T v = A[(u64)r * ncols + c];
    mult[r] = (r != piv && (st == 0 || (st == 1 && above))) ? t_pre(v) : t_zero();
    if (r == piv) {
        pvals[ctl[1]] = v;
        sc[0] = t_pre(t_inv(v));
    }
}

// Scales the pivot row from column c on (the pivot becomes exactly 1).
extern "C" __global__ void g_col_scale(T* __restrict__ A, u32 ncols, u32 c, const u32* ctl,
                                       const T* sc) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 col = c + blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= ncols) return;
    T* a = A + (u64)piv * ncols + col;
    *a = col == c ? t_one() : t_mulpre(sc[0], *a);
}

// A[r, c:] −= mult[r] · A[piv, c:] for rows with a non-zero multiplier; column c becomes
// exactly 0. Grid: x over column chunks, y over rows (grid-stride).
extern "C" __global__ void g_col_eliminate(T* __restrict__ A, u32 m, u32 ncols, u32 c,
                                           const u32* ctl, const T* __restrict__ mult) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 col = c + blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= ncols) return;
    T pv = A[(u64)piv * ncols + col];
    for (u32 r = blockIdx.y; r < m; r += gridDim.y) {
        T f = mult[r];
        if (t_is_zero(f)) continue;
        T* a = A + (u64)r * ncols + col;
        *a = col == c ? t_zero() : t_fms(*a, f, pv);
    }
}

// A free column (floats): the candidates' entries there (all within the tolerance) become 0.
extern "C" __global__ void g_col_free(T* __restrict__ A, const u8* __restrict__ state, u32 m,
                                      u32 ncols, u32 c, const u32* ctl) {
    if (ctl[0] != NONE) return;
    u32 r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < m && state[r] == 0) A[(u64)r * ncols + c] = t_zero();
}

// Records the pivot of column c (state 1); resets ctl[0].
extern "C" __global__ void g_col_step_end(u32 c, u32* ctl, u8* state, u32* pcols, u32* prows) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 k = ctl[1];
    pcols[k] = c;
    prows[k] = piv;
    state[piv] = 1;
    ctl[1] = k + 1u;
    ctl[0] = NONE;
}

// ---------------------------------------------------------------- blocked (floats)

// Q (column-major, m × bw) ← A[:, c0 .. c0 + bw).
extern "C" __global__ void g_panel_gather(const T* __restrict__ A, T* __restrict__ Q, u32 m,
                                          u32 ncols, u32 c0, u32 bw) {
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (u64)m * bw) return;
    u32 r = (u32)(t / bw), j = (u32)(t % bw);
    Q[(u64)j * m + r] = A[(u64)r * ncols + c0 + j];
}

extern "C" __global__ void __launch_bounds__(SEARCH_THREADS) g_panel_search(const T* __restrict__ Q, const u8* __restrict__ state,
                                          u32 m, u32 j, double tol, u32* ctl) {
    search_block(Q, 1, (u64)j * m, state, m, tol, ctl);
}

// New pivot row k (unscaled) at full width w from column c0:
// nrow = A[piv, c0:] − Σ_{i<k} A[piv, c0 + pcols[i]] · Pm[i]; pvals[k] = nrow[j],
// sc[0] = its inverse; xs[i] = Pm[i][j] (what the scale kernel clears).
extern "C" __global__ void g_panel_pivot_row(const T* __restrict__ A, u32 ncols, u32 c0, u32 w,
                                             u32 j, const u32* __restrict__ ctl,
                                             const u32* __restrict__ pcols,
                                             const T* __restrict__ Pm, T* __restrict__ nrow,
                                             T* __restrict__ xs, T* __restrict__ pvals, T* sc) {
    __shared__ T mult[BMAX];
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 k = ctl[1];
    const T* row = A + (u64)piv * ncols + c0;
    for (u32 i = threadIdx.x; i < k; i += blockDim.x) mult[i] = row[pcols[i]];
    __syncthreads();
    u32 col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < w) {
        T v = row[col];
        for (u32 i = 0; i < k; ++i) v = t_fms(v, mult[i], Pm[(u64)i * w + col]);
        nrow[col] = v;
        if (col == j) {
            pvals[k] = v;
            sc[0] = t_inv(v);
        }
    }
    if (blockIdx.x == 0)
        for (u32 i = threadIdx.x; i < k; i += blockDim.x) xs[i] = Pm[(u64)i * w + j];
}

// Pm[k] = nrow · sc[0] with exact 1 at j and exact 0 at the panel's earlier pivot columns
// (pflag); earlier panel rows y < k: Pm[y] −= xs[y] · Pm[k], exact 0 at j. Grid: x over
// columns, y over panel rows 0..=k.
extern "C" __global__ void g_panel_pivot_scale(u32 w, u32 j, const u32* __restrict__ ctl,
                                               const u8* __restrict__ pflag, T* __restrict__ Pm,
                                               const T* __restrict__ nrow,
                                               const T* __restrict__ xs, const T* sc) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 k = ctl[1], y = blockIdx.y;
    u32 col = blockIdx.x * blockDim.x + threadIdx.x;
    if (y > k || col >= w) return;
    T x;
    if (col == j) x = t_one();
    else if (col < BMAX && pflag[col]) x = t_zero();
    else x = t_mulpre(sc[0], nrow[col]);
    if (y == k) {
        Pm[(u64)k * w + col] = x;
        return;
    }
    T* py = Pm + (u64)y * w + col;
    if (col == j) *py = t_zero();
    else *py = t_fms(*py, xs[y], x);
}

// Q[jj][r] −= Q[j][r] · Pm[k][jj] for the candidates r ≠ piv, jj = j + 1 + blockIdx.y < bw.
extern "C" __global__ void g_panel_eliminate(T* __restrict__ Q, const u8* __restrict__ state,
                                             u32 m, u32 bw, u32 w, u32 j,
                                             const u32* __restrict__ ctl,
                                             const T* __restrict__ Pm) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 k = ctl[1];
    u32 r = blockIdx.x * blockDim.x + threadIdx.x;
    u32 jj = j + 1u + blockIdx.y;
    if (r >= m || jj >= bw || r == piv || state[r] != 0) return;
    T pj = Pm[(u64)k * w + jj];
    T v = Q[(u64)j * m + r];
    if (t_is_zero(v) || t_is_zero(pj)) return;
    Q[(u64)jj * m + r] = t_fms(Q[(u64)jj * m + r], v, pj);
}

// Records the pivot of panel column j (state 2, pflag) and resets ctl[0].
extern "C" __global__ void g_panel_step_end(u32 j, u32* ctl, u8* state, u8* pflag, u32* pcols,
                                            u32* prows) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 k = ctl[1];
    state[piv] = 2;
    pflag[j] = 1;
    pcols[k] = j;
    prows[k] = piv;
    ctl[1] = k + 1u;
    ctl[0] = NONE;
}

// M (row-major m × k) = A[r, c0 + pcols[i]] for target rows (state 0, or 1 when `above`),
// 0 for the others.
extern "C" __global__ void g_build_m(const T* __restrict__ A, const u8* __restrict__ state,
                                     u32 m, u32 ncols, u32 c0, u32 k, u32 above,
                                     const u32* __restrict__ pcols, T* __restrict__ M) {
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (u64)m * k) return;
    u32 r = (u32)(t / k), i = (u32)(t % k);
    u8 s = state[r];
    M[t] = (s == 0 || (s == 1 && above)) ? A[(u64)r * ncols + c0 + pcols[i]] : t_zero();
}

// After the GEMM: candidates are 0 on the panel's columns c0 .. c0 + bw (exactly what
// elimination leaves, plus the within-tolerance rest of free columns), earlier pivot rows
// (when `above`) 0 on the panel's pivot columns.
extern "C" __global__ void g_panel_clean(T* __restrict__ A, const u8* __restrict__ state,
                                         u32 m, u32 ncols, u32 c0, u32 bw, u32 above,
                                         const u8* __restrict__ pflag) {
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (u64)m * bw) return;
    u32 r = (u32)(t / bw), j = (u32)(t % bw);
    u8 s = state[r];
    if (s == 0 || (s == 1 && above && pflag[j])) A[(u64)r * ncols + c0 + j] = t_zero();
}

// Writes the k panel pivot rows back into A and marks them as earlier pivots (state 1).
extern "C" __global__ void g_write_pivots(T* __restrict__ A, u8* __restrict__ state, u32 ncols,
                                          u32 c0, u32 w, u32 k, const u32* __restrict__ prows,
                                          const T* __restrict__ Pm) {
    u32 col = blockIdx.x * blockDim.x + threadIdx.x;
    u32 i = blockIdx.y;
    if (i >= k || col >= w) return;
    A[(u64)prows[i] * ncols + c0 + col] = Pm[(u64)i * w + col];
    if (col == 0) state[prows[i]] = 1;
}

// ---------------------------------------------------------------- final row order

extern "C" __global__ void g_gather_rows(const T* __restrict__ A, T* __restrict__ Out, u32 m,
                                         u32 ncols, const u32* __restrict__ perm) {
    u32 col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= ncols) return;
    for (u32 i = blockIdx.y; i < m; i += gridDim.y)
        Out[(u64)i * ncols + col] = A[(u64)perm[i] * ncols + col];
}
