// Device-resident Euler–Newton step of `pathtrack bench step` (T. Chen §8, Tables 1–2):
// one Euler prediction y₁ = y + h·E(y, τ), τ₁ = τ + h, then one Newton iteration
// y ← y₁ + N(y₁, τ₁), renormalized to ‖y‖ = 1 (projective tracking on the sphere), τ ← τ₁.

extern "C" __global__ void euler_predict(const double2* __restrict__ y,
                                         const double2* __restrict__ tau,
                                         const double2* __restrict__ euler,
                                         double2* __restrict__ y1,
                                         double2* __restrict__ tau1, double h, int p) {
    long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long)p * NN) return;
    y1[t] = cadd(y[t], cscale(euler[t], h));
    if (t < p) tau1[t] = cmk(tau[t].x + h, tau[t].y);
}

extern "C" __global__ void newton_correct(const double2* __restrict__ y1,
                                          const double2* __restrict__ newton,
                                          const double2* __restrict__ tau1,
                                          double2* __restrict__ y,
                                          double2* __restrict__ tau, int p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p) return;
    tau[i] = tau1[i];
    double2 v[NN];
    double s = 0.0;
#pragma unroll
    for (int j = 0; j < NN; ++j) {
        v[j] = cadd(y1[(long)i * NN + j], newton[(long)i * NN + j]);
        s += cnorm2(v[j]);
    }
    double inv = (s > 0.0 && isfinite(s)) ? 1.0 / sqrt(s) : 1.0;
#pragma unroll
    for (int j = 0; j < NN; ++j) y[(long)i * NN + j] = cscale(v[j], inv);
}
