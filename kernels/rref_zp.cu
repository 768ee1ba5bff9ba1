// Gauss–Jordan row reduction over Z/P in u32 words (P < 2^31 prime), compiled by NVRTC
// with the prime injected as `#define P <p>u` (so `% P` is a constant modulus: the
// compiler emits multiply-shift code) and `#define BMAX <panel width>`.
//
// Matrices are row-major, m rows × ncols columns. Rows are never swapped during the
// elimination: `state[r]` is 0 for a candidate row, 2 for a pivot row of the current
// panel (or column), 1 for a pivot row of an earlier one; the host gathers the final row
// order at the end. `ctl[0]` holds the pivot row chosen for the current column (NONE if
// the column is free) and `ctl[1]` the number of pivots found so far in the panel; every
// kernel reads them from device memory, so the host queues a whole panel without waiting.
//
// Pivot rule (as the CPU engine): the candidate of smallest input row index whose entry
// in the column is non-zero.

typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned char u8;

#define NONE 0xffffffffu

__device__ __forceinline__ u32 mulmod(u32 a, u32 b) { return (u32)(((u64)a * b) % P); }
__device__ __forceinline__ u32 submod(u32 a, u32 b) { return a >= b ? a - b : a + P - b; }

// a^(P-2) = a^{-1} mod P (Fermat), a != 0.
__device__ u32 invmod(u32 a) {
    u32 e = P - 2u, r = 1u;
    while (e) {
        if (e & 1u) r = mulmod(r, a);
        a = mulmod(a, a);
        e >>= 1;
    }
    return r;
}

// Residue in [0, P) → balanced representative in (−P/2, P/2].
__device__ __forceinline__ long long balanced(u32 x) {
    return x > (P - 1u) / 2u ? (long long)x - (long long)P : (long long)x;
}

// Candidate row r with a non-zero at `col` (column-major Q or row-major A through the
// strides) → atomicMin of r into ctl[0]; a warp minimum first.
__device__ __forceinline__ void search_row(u32 r, bool hit, u32* ctl) {
    u32 v = hit ? r : NONE;
    v = __reduce_min_sync(0xffffffffu, v);
    if ((threadIdx.x & 31u) == 0u && v != NONE) atomicMin(&ctl[0], v);
}

// ---------------------------------------------------------------- blocked Gauss–Jordan

// Q (column-major, m × bw) ← A[:, c0 .. c0 + bw).
extern "C" __global__ void panel_gather(const u32* __restrict__ A, u32* __restrict__ Q, u32 m,
                                        u32 ncols, u32 c0, u32 bw) {
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (u64)m * bw) return;
    u32 r = (u32)(t / bw), j = (u32)(t % bw);
    Q[(u64)j * m + r] = A[(u64)r * ncols + c0 + j];
}

// Pivot search in panel column j: first candidate with Q[j][r] != 0.
extern "C" __global__ void panel_search(const u32* __restrict__ Q, const u8* __restrict__ state,
                                        u32 m, u32 j, u32* ctl) {
    u32 r = blockIdx.x * blockDim.x + threadIdx.x;
    bool hit = r < m && state[r] == 0 && Q[(u64)j * m + r] != 0u;
    search_row(r, hit, ctl);
}

// New pivot row k (unscaled) into nrow, full width w from column c0:
// nrow = A[piv, c0:] − Σ_{i<k} A[piv, c0 + pcols[i]] · Pm[i]; pvals[k] = nrow[j],
// ctl[2] = its inverse; xs[i] = Pm[i][j] (the entries the scale kernel clears).
extern "C" __global__ void panel_pivot_row(const u32* __restrict__ A, u32 ncols, u32 c0, u32 w,
                                           u32 j, u32* __restrict__ ctl,
                                           const u32* __restrict__ pcols,
                                           const u32* __restrict__ Pm, u32* __restrict__ nrow,
                                           u32* __restrict__ xs, u32* __restrict__ pvals) {
    __shared__ u32 mult[BMAX];
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 k = ctl[1];
    const u32* row = A + (u64)piv * ncols + c0;
    for (u32 i = threadIdx.x; i < k; i += blockDim.x) mult[i] = row[pcols[i]];
    __syncthreads();
    u32 col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < w) {
        // Σ of k < 2^32 products < 2^62 in a two-word accumulator (branch-free carry).
        u64 lo = 0, hi = 0;
#pragma unroll 8
        for (u32 i = 0; i < k; ++i) {
            u64 t = (u64)mult[i] * Pm[(u64)i * w + col];
            lo += t;
            hi += lo < t;
        }
        // hi·2^64 + lo mod P, with 2^64 mod P = ((2^32 mod P)^2) mod P.
        u32 r32 = (u32)(4294967296ull % P);
        u32 sum = (u32)(((u64)(u32)(hi % P) * mulmod(r32, r32) + lo % P) % P);
        u32 v = submod(row[col], sum);
        nrow[col] = v;
        if (col == j) {
            pvals[k] = v;
            ctl[2] = invmod(v);
        }
    }
    if (blockIdx.x == 0)
        for (u32 i = threadIdx.x; i < k; i += blockDim.x) xs[i] = Pm[(u64)i * w + j];
}

// Pm[k] = nrow · ctl[2] (unit pivot at j); earlier panel rows y < k: Pm[y] −= xs[y] · Pm[k]
// (clears their column j). Grid: x over columns, y over panel rows 0..=k (y > k exit).
extern "C" __global__ void panel_pivot_scale(u32 w, const u32* __restrict__ ctl,
                                             u32* __restrict__ Pm,
                                             const u32* __restrict__ nrow,
                                             const u32* __restrict__ xs) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 k = ctl[1], y = blockIdx.y;
    u32 col = blockIdx.x * blockDim.x + threadIdx.x;
    if (y > k || col >= w) return;
    u32 x = mulmod(nrow[col], ctl[2]);
    if (y == k) {
        Pm[(u64)k * w + col] = x;
        return;
    }
    u32 xy = xs[y];
    if (xy && x) Pm[(u64)y * w + col] = submod(Pm[(u64)y * w + col], mulmod(xy, x));
}

// Eliminates panel column j from the candidate rows' panel columns of Q:
// Q[jj][r] −= Q[j][r] · Pm[k][jj] for jj = j + 1 + blockIdx.y < bw. Grid: x over rows.
extern "C" __global__ void panel_eliminate(u32* __restrict__ Q, const u8* __restrict__ state,
                                           u32 m, u32 bw, u32 w, u32 j,
                                           const u32* __restrict__ ctl,
                                           const u32* __restrict__ Pm) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 k = ctl[1];
    u32 r = blockIdx.x * blockDim.x + threadIdx.x;
    u32 jj = j + 1u + blockIdx.y;
    if (r >= m || jj >= bw || r == piv || state[r] != 0) return;
    u32 pj = Pm[(u64)k * w + jj];
    if (pj == 0u) return;
    u32 v = Q[(u64)j * m + r];
    if (v == 0u) return;
    Q[(u64)jj * m + r] = submod(Q[(u64)jj * m + r], mulmod(v, pj));
}

// Records the pivot of panel column j (one thread; state 2) and resets ctl[0].
extern "C" __global__ void panel_step_end(u32 j, u32* ctl, u8* state, u32* pcols,
                                          u32* prows) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 k = ctl[1];
    state[piv] = 2;
    pcols[k] = j;
    prows[k] = piv;
    ctl[1] = k + 1u;
    ctl[0] = NONE;
}

// GEMM operands. With m_ri = balanced(A[r, c0 + pcols[i]]) = d0 + 2^16 d1
// (d0 ∈ [−2^15, 2^15)), Mst (row-major m × 2k) = [d0 | d1] for target rows (state 0, or 1
// when `above`), 0 for the others.
extern "C" __global__ void build_m(const u32* __restrict__ A, const u8* __restrict__ state,
                                   u32 m, u32 ncols, u32 c0, u32 k, u32 above,
                                   const u32* __restrict__ pcols, double* __restrict__ Mst) {
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (u64)m * k) return;
    u32 r = (u32)(t / k), i = (u32)(t % k);
    u8 s = state[r];
    double d0 = 0.0, d1 = 0.0;
    if (s == 0 || (s == 1 && above)) {
        long long v = balanced(A[(u64)r * ncols + c0 + pcols[i]]);
        long long lo = ((v + 32768) & 0xffff) - 32768;
        d0 = (double)lo;
        d1 = (double)((v - lo) >> 16);
    }
    Mst[(u64)r * 2u * k + i] = d0;
    Mst[(u64)r * 2u * k + k + i] = d1;
}

// Pst (row-major 2k × w) = [balanced(Pm); balanced(2^16 · Pm mod P)], so that
// Mst · Pst ≡ M · Pm (mod P) with every partial sum an integer of magnitude < 2^53.
extern "C" __global__ void build_p(const u32* __restrict__ Pm, u32 k, u32 w,
                                   double* __restrict__ Pst) {
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (u64)k * w) return;
    u32 x = Pm[t];
    Pst[t] = (double)balanced(x);
    Pst[t + (u64)k * w] = (double)balanced(mulmod(x, (u32)(65536ull % P)));
}

// A[r, c0 + s + col] ← A − (C[r, col] mod P) for target rows, col < cw (C row-major m × cw,
// exact integers of magnitude < 2^53).
extern "C" __global__ void apply_update(u32* __restrict__ A, const u8* __restrict__ state,
                                        u32 m, u32 ncols, u32 c0, u32 s, u32 cw, u32 above,
                                        const double* __restrict__ C) {
    u32 col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cw) return;
    for (u32 r = blockIdx.y; r < m; r += gridDim.y) {
        u8 st = state[r];
        if (!(st == 0 || (st == 1 && above))) continue;
        double c = C[(u64)r * cw + col];
        double q = floor(c * (1.0 / (double)P));
        double rem = fma(-q, (double)P, c);
        if (rem < 0.0) rem += (double)P;
        else if (rem >= (double)P) rem -= (double)P;
        u32* a = A + (u64)r * ncols + c0 + s + col;
        *a = submod(*a, (u32)rem);
    }
}

// Writes the k panel pivot rows back into A and marks them as earlier pivots (state 1).
extern "C" __global__ void write_pivots(u32* __restrict__ A, u8* __restrict__ state, u32 ncols,
                                        u32 c0, u32 w, u32 k, const u32* __restrict__ prows,
                                        const u32* __restrict__ Pm) {
    u32 col = blockIdx.x * blockDim.x + threadIdx.x;
    u32 i = blockIdx.y;
    if (i >= k || col >= w) return;
    A[(u64)prows[i] * ncols + c0 + col] = Pm[(u64)i * w + col];
    if (col == 0) state[prows[i]] = 1;
}

// ---------------------------------------------------------------- column by column

// Pivot search in column c of A.
extern "C" __global__ void col_search(const u32* __restrict__ A, const u8* __restrict__ state,
                                      u32 m, u32 ncols, u32 c, u32* ctl) {
    u32 r = blockIdx.x * blockDim.x + threadIdx.x;
    bool hit = r < m && state[r] == 0 && A[(u64)r * ncols + c] != 0u;
    search_row(r, hit, ctl);
}

// Multipliers mult[r] = A[r, c] (0 for the pivot row and, unless `above`, earlier pivots);
// the pivot value and its inverse go to pvals[k] and ctl[2].
extern "C" __global__ void col_mults(const u32* __restrict__ A, const u8* __restrict__ state,
                                     u32 m, u32 ncols, u32 c, u32 above, u32* ctl,
                                     u32* __restrict__ mult, u32* __restrict__ pvals) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= m) return;
    u8 st = state[r];
    u32 v = A[(u64)r * ncols + c];
    mult[r] = (r != piv && (st == 0 || (st == 1 && above))) ? v : 0u;
    if (r == piv) {
        pvals[ctl[1]] = v;
        ctl[2] = invmod(v);
    }
}

// Scales the pivot row from column c on (the pivot becomes exactly 1).
extern "C" __global__ void col_scale(u32* __restrict__ A, u32 ncols, u32 c,
                                     const u32* __restrict__ ctl) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 col = c + blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= ncols) return;
    u32* a = A + (u64)piv * ncols + col;
    *a = col == c ? 1u : mulmod(*a, ctl[2]);
}

// Rank-1 update of every row with a non-zero multiplier: A[r, c:] −= mult[r] · A[piv, c:].
// Grid: x over column chunks, y over rows (grid-stride).
extern "C" __global__ void col_eliminate(u32* __restrict__ A, u32 m, u32 ncols, u32 c,
                                         const u32* __restrict__ ctl,
                                         const u32* __restrict__ mult) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 col = c + blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= ncols) return;
    u32 pv = A[(u64)piv * ncols + col];
    for (u32 r = blockIdx.y; r < m; r += gridDim.y) {
        u32 f = mult[r];
        if (f == 0u) continue;
        u32* a = A + (u64)r * ncols + col;
        *a = col == c ? 0u : submod(*a, mulmod(f, pv));
    }
}

// Records the pivot of column c: state 1, pcols/prows, count; resets ctl[0].
extern "C" __global__ void col_step_end(u32 c, u32* ctl, u8* state, u32* pcols, u32* prows) {
    u32 piv = ctl[0];
    if (piv == NONE) return;
    u32 k = ctl[1];
    pcols[k] = c;
    prows[k] = piv;
    state[piv] = 1;
    ctl[1] = k + 1u;
    ctl[0] = NONE;
}

// ---------------------------------------------------------------- final row order

// Out row i ← A row perm[i].
extern "C" __global__ void gather_rows(const u32* __restrict__ A, u32* __restrict__ Out, u32 m,
                                       u32 ncols, const u32* __restrict__ perm) {
    u32 col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= ncols) return;
    for (u32 i = blockIdx.y; i < m; i += gridDim.y)
        Out[(u64)i * ncols + col] = A[(u64)perm[i] * ncols + col];
}
