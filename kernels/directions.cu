// Unified Euler/Newton directions by Gauss–Jordan (T. Chen §6, eq. (11), solved as the
// square system [∂H/∂y; y*] [E N] = [−∂H/∂τ −H; 0 0], both right-hand sides in one sweep).
// One segment of SEG lanes per point (SEG = 8, 16 or 32 ≥ NN): lane r holds row r of
// [A | b1 b2] in registers (NN + 2 complex values; every register index is a compile-time
// constant, the loops over columns are unrolled). Partial pivoting without row swaps: at
// column k the rows not yet used elect the largest |a_rk| by a butterfly reduction on a
// packed (|a_rk|², lane) 32-bit key, the pivot row is broadcast through shared memory and
// eliminated from every other row. At the end each
// row holds one nonzero d in its pivot column c, and x_c = b / d.
// Before the sweep: the diag(e^{−z}) scaling of the evaluator output, and the row
// equilibration of src/backend/mod.rs (fill_direction_system): each equation row divided
// by its largest |∂h_k/∂y_j|; the last row is conj(y).
// Points in log mode (logm[i] != 0; y holds z = log y with z_n = 0) solve for dz/dτ and the
// Newton step in z: no diag(e^{−z}) scaling, the rows are equilibrated over the first n
// columns, column n of the equation rows is zero and the last row is e_nᵀ (as
// fill_direction_system(log = true)).

// GJ_THREADS threads per block and GJ_PERSIST come from the host's header (kernels::gj_threads,
// kernels::gj_persistent: 128 threads, or 64 and persistent blocks when SEG = 32).
// A group is GJ_POINTS consecutive points, so each equation's rows of them are one
// contiguous range of the (equation-major) extended Jacobians, copied to a point-major tile
// in shared memory with coalesced 16-byte copies.
#define GJ_POINTS (GJ_THREADS / SEG)
// With SEG ≤ 16 the pivot row is left as it is by f = 0, without a divergent branch (its
// update of itself adds 0·p), and the kernel is held to 128 registers (four blocks per
// multiprocessor; 134 without the bound): cyclic-14 p = 1000 7.50 → 7.31 ms, p = 10⁶
// 7.89e7 → 8.02e7 path-steps/s. With SEG = 32 the branch stays: there the
// predicated form took 228 registers (chandra-24 1.96e7 → 1.64e7), and bound to 168 → 128
// it spilled 320 bytes. A minimum of one block is not the same as none: it let NVRTC take
// 228 registers for SEG = 32 (chandra-24 p = 10⁶ 1.97e7 → 1.61e7), so SEG = 32
// keeps the plain bound.
#define GJ_PREDICATED (SEG < 32)
#if SEG < 32
#define GJ_BOUNDS __launch_bounds__(GJ_THREADS, 4)
#else
#define GJ_BOUNDS __launch_bounds__(GJ_THREADS)
#endif

// The block's shared memory (file scope, so that gj_group addresses it as shared memory):
// the group's tile of extended-Jacobian rows; y and 1/y of each point, broadcast to its
// segment; the pivot row of the current column (columns k..N-1, then the two right-hand
// sides).
__shared__ double2 gj_tile[GJ_POINTS * NEQ * W];
__shared__ double2 gj_y[GJ_POINTS][NN], gj_iy[GJ_POINTS][NN];
__shared__ double2 gj_prow[GJ_POINTS][NN + 2];

// Queues the copy of group i0's rows into the tile: word e of the source, in equation-major
// order (equation r, point pt, entry j), goes to (pt·NEQ + r)·W + j (a lane's row stays
// contiguous: conflict-free row loads). sm_80 and later: asynchronous copies (cp.async, no
// registers, all of a thread's copies in flight at once; completed by gj_fetch_wait, whose
// wait_all commits them).
__device__ __forceinline__ void gj_fetch(const double2* __restrict__ jac, long i0, int count, int p) {
    for (int e = threadIdx.x; e < NEQ * GJ_POINTS * W; e += GJ_THREADS) {
        const int r = e / (GJ_POINTS * W), f = e - r * (GJ_POINTS * W), pt = f / W;
        if (pt >= count) continue;
        const double2* src = jac + JAC_ROW(i0, r, p) + f;
        double2* dst = gj_tile + (pt * NEQ + r) * W + (f - pt * W);
#if __CUDA_ARCH__ >= 800
        const unsigned sdst = (unsigned)__cvta_generic_to_shared(dst);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sdst), "l"(src) : "memory");
#else
        *dst = *src;
#endif
    }
}

__device__ __forceinline__ void gj_fetch_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

__device__ __forceinline__ int gj_count(long i0, int p) {
    return ((long)p - i0 < GJ_POINTS) ? (int)((long)p - i0) : GJ_POINTS;
}

// One group's directions, its tile's copy queued by the caller (gj_fetch). With next0 ≥ 0
// (persistent blocks), the rows are read into registers, the block syncs, and the copy of
// the group from point next0 is queued into the same tile, to run during this sweep.
__device__ __forceinline__ void gj_group(const double2* __restrict__ jac, const double2* __restrict__ y, const unsigned char* __restrict__ logm,
                                         double2* __restrict__ euler, double2* __restrict__ newton,
                                         double* __restrict__ cond, int p, long i0, long next0) {
    const int count = gj_count(i0, p);
    const int r = threadIdx.x & (SEG - 1);
    const int pt = threadIdx.x / SEG;
    const long i = i0 + pt;
    const bool valid = pt < count;
    const bool lg = valid && logm && logm[i];
    double2 yr = cmk(0.0, 0.0);
    // in flight while the tile's copy completes (chandra-24, persistent: 17.6 → 17.3 ms)
    if (valid && r < NN) yr = y[i * NN + r];
    gj_fetch_wait();
    __syncthreads();
    double2 a[NN];
    double2 b0 = cmk(0.0, 0.0), b1 = cmk(0.0, 0.0);
    if (valid && r < NEQ) {
        const double2* row = gj_tile + (pt * NEQ + r) * W;
#pragma unroll
        for (int j = 0; j < NN; ++j) a[j] = row[j];
        b0 = cneg(row[NN]);
        b1 = cneg(row[NN + 1]);
    } else {
#pragma unroll
        for (int j = 0; j < NN; ++j) a[j] = cmk(0.0, 0.0);
    }
    if (next0 >= 0) {
        __syncthreads();  // the tile is free
        gj_fetch(jac, next0, gj_count(next0, p), p);
    }
    if ((int)(threadIdx.x & ~31u) / SEG >= count) return;  // whole warp past the end

    const double2 invr = lg ? cmk(1.0, 0.0) : safe_inv(yr);
    if (r < NN) {
        gj_y[pt][r] = yr;
        gj_iy[pt][r] = invr;
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < NN; ++j) {
        if (r < NEQ) {
            if (!lg) a[j] = cmul(a[j], gj_iy[pt][j]);
        } else if (r == NEQ) {
            a[j] = lg ? cmk(j == NEQ ? 1.0 : 0.0, 0.0) : cconj(gj_y[pt][j]);
        }
    }
    if (r < NEQ) {
        // The largest |a_rj|: the entry is elected by |a_rj|² and only its modulus taken
        // by hypot (one hypot per row instead of N: they were most of the set-up); every
        // |a_rj| by hypot where the squares leave double range.
        if (lg) a[NEQ] = cmk(0.0, 0.0);
        double m2 = -1.0;
        double2 big = cmk(0.0, 0.0);
#pragma unroll
        for (int j = 0; j < NN; ++j) {
            const double n2 = cnorm2(a[j]);
            if (n2 > m2) {
                m2 = n2;
                big = a[j];
            }
        }
        double mx = 0.0;
        if (m2 > 1e-290 && m2 < 1e290) {
            mx = cabs2(big);
        } else {
#pragma unroll
            for (int j = 0; j < NN; ++j) mx = fmax(mx, cabs2(a[j]));
        }
        double sc = (mx > 0.0 && isfinite(mx)) ? 1.0 / mx : 1.0;
#pragma unroll
        for (int j = 0; j < NN; ++j) a[j] = cscale(a[j], sc);
        b0 = cscale(b0, sc);
        b1 = cscale(b1, sc);
    }

    bool used = !(r < NN);
    double2 d = cmk(1.0, 0.0);
    int mycol = -1;
    double vmax = 0.0, vmin = 1.0 / 0.0;
#pragma unroll
    for (int k = 0; k < NN; ++k) {
        // argmax of |a_rk|² over unused rows: the key is the high word of the square's bit
        // pattern (sign, exponent and 20 mantissa bits: monotone for non-negative doubles)
        // with its low 5 bits replaced by 31 − r (ties within 2^−15: lowest r), so one
        // 32-bit shuffle per level.
        unsigned key = used ? 0u
                            : ((unsigned)(__double_as_longlong(cnorm2(a[k])) >> 32) & ~31u) |
                                  (unsigned)(31 - r);
#pragma unroll
        for (int off = SEG / 2; off > 0; off >>= 1) key = max(key, __shfl_xor_sync(0xffffffffu, key, off, SEG));
        const int pl = 31 - (int)(key & 31u);
        const bool me = (r == pl);
        if (me) {
            gj_prow[pt][k] = a[k];
#pragma unroll
            for (int j = k + 1; j < NN; ++j) gj_prow[pt][j] = a[j];
            gj_prow[pt][NN] = b0;
            gj_prow[pt][NN + 1] = b1;
            used = true;
            d = a[k];
            mycol = k;
        }
        __syncwarp();
        const double2 pk = gj_prow[pt][k];
        const double v = cnorm2(pk);
        vmax = fmax(vmax, v);
        vmin = fmin(vmin, v);
        const double2 ipk =
            (v > 1e-290 && v < 1e290) ? cscale(cconj(pk), __drcp_rn(v)) : crecip(pk);
        const double2 f = (GJ_PREDICATED && me) ? cmk(0.0, 0.0) : cmul(a[k], ipk);
        if (GJ_PREDICATED || !me) {
#pragma unroll
            for (int j = k + 1; j < NN; ++j) a[j] = cfnms(a[j], f, gj_prow[pt][j]);
            b0 = cfnms(b0, f, gj_prow[pt][NN]);
            b1 = cfnms(b1, f, gj_prow[pt][NN + 1]);
            a[k] = cmk(0.0, 0.0);
        }
        __syncwarp();
    }
    if (!valid) return;
    if (mycol >= 0) {
        double2 id = crecip(d);
        euler[i * NN + mycol] = cmul(b0, id);
        newton[i * NN + mycol] = cmul(b1, id);
    }
    if (r == 0) cond[i] = (vmin > 0.0) ? sqrt(vmax / vmin) : 1.0 / 0.0;
}

// Persistent blocks (GJ_PERSIST): block b solves groups b, b + gridDim.x, … (the host
// launches as many blocks as are resident at once), each group's copy running during the
// previous group's sweep. Otherwise one group per block.
extern "C" __global__ void GJ_BOUNDS
gj_directions(const double2* __restrict__ jac, const double2* __restrict__ y,
              const unsigned char* __restrict__ logm, double2* __restrict__ euler, double2* __restrict__ newton,
              double* __restrict__ cond, int p) {
#if GJ_PERSIST
    const long groups = ((long)p + GJ_POINTS - 1) / GJ_POINTS;
    long g = blockIdx.x;
    if (g < groups) gj_fetch(jac, g * GJ_POINTS, gj_count(g * GJ_POINTS, p), p);
    for (; g < groups; g += gridDim.x) {
        const long next = g + gridDim.x;
        gj_group(jac, y, logm, euler, newton, cond, p, g * GJ_POINTS,
                 next < groups ? next * GJ_POINTS : -1);
    }
#else
    const long i0 = (long)blockIdx.x * GJ_POINTS;
    gj_fetch(jac, i0, gj_count(i0, p), p);
    gj_group(jac, y, logm, euler, newton, cond, p, i0, -1);
#endif
}
