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

// GJ_THREADS threads per block (128, or 64 when SEG = 32, keeping the tile under 48 KB);
// the block's points are consecutive, so each equation's rows of them are one contiguous
// range of the (equation-major) extended Jacobians, copied to a point-major tile in shared
// memory with coalesced 16-byte copies.
#define GJ_THREADS (SEG == 32 ? 64 : 128)
#define GJ_POINTS (GJ_THREADS / SEG)

extern "C" __global__ void __launch_bounds__(GJ_THREADS)
gj_directions(const double2* __restrict__ jac, const double2* __restrict__ y,
              const unsigned char* __restrict__ logm, double2* __restrict__ euler, double2* __restrict__ newton,
              double* __restrict__ cond, int p) {
    __shared__ double2 tile[GJ_POINTS * NEQ * W];
    const long i0 = (long)blockIdx.x * GJ_POINTS;
    const int count = ((long)p - i0 < GJ_POINTS) ? (int)((long)p - i0) : GJ_POINTS;
    // word e of the source, in equation-major order: equation r, point pt, entry j; in the
    // tile at (pt·NEQ + r)·W + j (a lane's row stays contiguous: conflict-free row loads)
    for (int e = threadIdx.x; e < NEQ * GJ_POINTS * W; e += GJ_THREADS) {
        const int r = e / (GJ_POINTS * W), f = e - r * (GJ_POINTS * W), pt = f / W;
        if (pt >= count) continue;
        const double2* src = jac + JAC_ROW(i0, r, p) + f;
        double2* dst = tile + (pt * NEQ + r) * W + (f - pt * W);
#if __CUDA_ARCH__ >= 800
        // an asynchronous copy (cp.async, no registers): a thread's copies are all in
        // flight at once instead of one load round trip per word
        const unsigned sdst = (unsigned)__cvta_generic_to_shared(dst);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sdst), "l"(src) : "memory");
#else
        *dst = *src;
#endif
    }
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
    __syncthreads();
    const int r = threadIdx.x & (SEG - 1);
    const int pt = threadIdx.x / SEG;
    const long i = i0 + pt;
    const bool valid = pt < count;
    if ((int)(threadIdx.x & ~31u) / SEG >= count) return;  // whole warp past the end

    const bool lg = valid && logm && logm[i];
    double2 yr = cmk(0.0, 0.0);
    if (valid && r < NN) yr = y[i * NN + r];
    const double2 invr = lg ? cmk(1.0, 0.0) : safe_inv(yr);

    double2 a[NN];
    double2 b0 = cmk(0.0, 0.0), b1 = cmk(0.0, 0.0);
    if (valid && r < NEQ) {
        const double2* row = tile + (pt * NEQ + r) * W;
#pragma unroll
        for (int j = 0; j < NN; ++j) a[j] = row[j];
        b0 = cneg(row[NN]);
        b1 = cneg(row[NN + 1]);
    } else {
#pragma unroll
        for (int j = 0; j < NN; ++j) a[j] = cmk(0.0, 0.0);
    }
    // y and 1/y of the point, broadcast through shared memory
    __shared__ double2 ybuf[GJ_POINTS][NN], ibuf[GJ_POINTS][NN];
    // the pivot row of the current column (columns k..N-1, then the two right-hand sides)
    __shared__ double2 prow[GJ_POINTS][NN + 2];
    if (r < NN) {
        ybuf[pt][r] = yr;
        ibuf[pt][r] = invr;
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < NN; ++j) {
        if (r < NEQ) {
            if (!lg) a[j] = cmul(a[j], ibuf[pt][j]);
        } else if (r == NEQ) {
            a[j] = lg ? cmk(j == NEQ ? 1.0 : 0.0, 0.0) : cconj(ybuf[pt][j]);
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
            prow[pt][k] = a[k];
#pragma unroll
            for (int j = k + 1; j < NN; ++j) prow[pt][j] = a[j];
            prow[pt][NN] = b0;
            prow[pt][NN + 1] = b1;
            used = true;
            d = a[k];
            mycol = k;
        }
        __syncwarp();
        const double2 pk = prow[pt][k];
        const double v = cnorm2(pk);
        vmax = fmax(vmax, v);
        vmin = fmin(vmin, v);
        const double2 ipk =
            (v > 1e-290 && v < 1e290) ? cscale(cconj(pk), __drcp_rn(v)) : crecip(pk);
        const double2 f = cmul(a[k], ipk);
        if (!me) {
#pragma unroll
            for (int j = k + 1; j < NN; ++j) a[j] = cfnms(a[j], f, prow[pt][j]);
            b0 = cfnms(b0, f, prow[pt][NN]);
            b1 = cfnms(b1, f, prow[pt][NN + 1]);
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
