// Runs kernels/certify.cu on the host, one point after another, for tests/certify.rs: the
// CUDA qualifiers are removed and the directed-rounding intrinsics are emulated in
// round-to-nearest arithmetic by error-free transformations (the sign of the rounding error
// of a sum from TwoSum, of a product from an FMA, of a quotient from the FMA remainder).
// Exact for normal results and overflow; results in the subnormal range are not met by
// the tests' systems. Compiled with -ffp-contract=off so that no operation is fused.
//
// Input file: i32 count, the i32 system array; u64 count, the f64 coefficients; u64 p,
// then p·2·CN f64 coordinates. Output file: p i32 flags, p f64 radii, p·4·CN f64 enclosures.
#include <cfloat>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
struct thread_index {
    unsigned x;
};
static thread_index blockIdx, blockDim, threadIdx;

static inline double __longlong_as_double(long long v) {
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

static inline double down(double x) { return nextafter(x, -INFINITY); }
static inline double up(double x) { return nextafter(x, INFINITY); }

static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __dsqrt_rn(double a) { return sqrt(a); }

// Rounded toward −∞ (dir < 0) or +∞ (dir > 0) from the nearest result s and the sign of
// the exact error (exact − s).
static inline double directed(double s, double err, int dir) {
    if (dir < 0) return err < 0 ? down(s) : s;
    return err > 0 ? up(s) : s;
}
// Overflow of finite operands: toward the rounding direction, ±∞ or ±DBL_MAX.
static inline double overflow(double s, int dir) {
    if (s > 0) return dir > 0 ? s : DBL_MAX;
    return dir < 0 ? s : -DBL_MAX;
}
static inline double add_dir(double a, double b, int dir) {
    const double s = a + b;
    if (isinf(s) && isfinite(a) && isfinite(b)) return overflow(s, dir);
    if (!isfinite(s)) return s;
    const double bb = s - a;
    return directed(s, (a - (s - bb)) + (b - bb), dir);
}
static inline double mul_dir(double a, double b, int dir) {
    const double p = a * b;
    if (isinf(p) && isfinite(a) && isfinite(b)) return overflow(p, dir);
    if (!isfinite(p)) return p;
    if (p == 0 && a != 0 && b != 0) {  // underflow to zero: the sign of the exact product
        const bool neg = signbit(a) != signbit(b);
        return directed(neg ? -0.0 : 0.0, neg ? -1.0 : 1.0, dir);
    }
    return directed(p, fma(a, b, -p), dir);
}
static inline double div_dir(double a, double b, int dir) {
    const double q = a / b;
    if (isinf(q) && isfinite(a) && isfinite(b) && b != 0) return overflow(q, dir);
    if (!isfinite(q)) return q;
    const double r = fma(-q, b, a);  // a − q·b, exact; a/b − q has the sign of r/b
    return directed(q, r == 0 ? 0.0 : ((r < 0) != (b < 0) ? -1.0 : 1.0), dir);
}
static inline double __dadd_rd(double a, double b) { return add_dir(a, b, -1); }
static inline double __dadd_ru(double a, double b) { return add_dir(a, b, 1); }
static inline double __dsub_rd(double a, double b) { return add_dir(a, -b, -1); }
static inline double __dsub_ru(double a, double b) { return add_dir(a, -b, 1); }
static inline double __dmul_rd(double a, double b) { return mul_dir(a, b, -1); }
static inline double __dmul_ru(double a, double b) { return mul_dir(a, b, 1); }
static inline double __ddiv_rd(double a, double b) { return div_dir(a, b, -1); }
static inline double __ddiv_ru(double a, double b) { return div_dir(a, b, 1); }

#include "kernel.cu"

template <class T> static std::vector<T> read_n(FILE* f, size_t n) {
    std::vector<T> v(n);
    if (n && fread(v.data(), sizeof(T), n, f) != n) exit(3);
    return v;
}

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    FILE* in = fopen(argv[1], "rb");
    if (!in) return 2;
    const int32_t ni = read_n<int32_t>(in, 1)[0];
    const std::vector<int32_t> si = read_n<int32_t>(in, (size_t)ni);
    const uint64_t nc = read_n<uint64_t>(in, 1)[0];
    const std::vector<double> coef = read_n<double>(in, nc);
    const uint64_t p = read_n<uint64_t>(in, 1)[0];
    const std::vector<double> pts = read_n<double>(in, p * 2 * CN);
    fclose(in);
    std::vector<int> flags(p);
    std::vector<double> radius(p), encl(p * 4 * CN);
    blockDim.x = 1;
    threadIdx.x = 0;
    for (uint64_t i = 0; i < p; i++) {
        blockIdx.x = (unsigned)i;
        krawczyk_batch(pts.data(), (int)p, si.data(), coef.data(), radius.data(), flags.data(),
                       encl.data());
    }
    FILE* out = fopen(argv[2], "wb");
    if (!out) return 2;
    fwrite(flags.data(), sizeof(int), p, out);
    fwrite(radius.data(), sizeof(double), p, out);
    fwrite(encl.data(), sizeof(double), p * 4 * CN, out);
    fclose(out);
    return 0;
}
