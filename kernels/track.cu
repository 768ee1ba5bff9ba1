// Resident tracking (src/track/resident, src/backend/cuda/resident.rs): the per-path step
// machine of src/track/resident/slot.rs, line for line, one thread per slot. With the
// evaluation and Gauss–Jordan kernels it makes one iteration of every resident path:
//   log_points → eval → gj_directions → rt_advance
// with no host work in between. Slots whose paths leave (reached τ_end, failed, handed back
// to the host from the endgame zone) are read back with rt_gather and refilled by rt_load.
//
// State (structure of arrays, `cap` slots; complex = double2):
//   y, yc, yeval, entry_y   cap × NN        k        4 × cap × NN (RK4 stages)
//   taueval cap (τ + 0i)    logm, status, entered, nsamp  cap bytes
//   sc  RT_SC_FIELDS (8) × cap doubles: τ, h, h_try, η₁, η_prev, cond, s = τ_end − τ when it last halved,
//       τ of the zone entry (entry_y)
//   ct  RT_CT_FIELDS (4) × cap u32: accepted, rejected, phase, steps when s last halved
//   stau cap × 4, sy cap × 4 × NN: endgame samples (τ, y), oldest first
//   scond cap × 4: the condition estimate at each sample (path::beyond_double)
//   euler, newton, cond_out: the directions of the last iteration
//   lifts cap × MT (or null): each slot's own lifts
//   ddm  cap bytes: double-double mode (slot.rs Slot::dd; kernels/dd_residual.cu computes
//        the residual of such slots' corrections)

// Compile time: helpers called from several places (step begin and rejection, the regime
// and log-switch tests, the two coordinate changes) are `__noinline__`, and the loops of
// the coordinate changes (exp/sincos per coordinate one way, log/atan2 the other) are not
// unrolled (`#pragma unroll 1`): inlined and unrolled NN times at every call site they
// made this the slowest unit to compile (2.1–3.0 s of NVRTC on an H200; units compile in
// parallel, docs/cuda.md, so the slowest unit is the set-up time). The other loops stay unrolled: they move state through
// global memory, and unrolled their loads are in flight together (with every loop rolled,
// tracking took 1.5× as long).
#define RT_TAU 0
#define RT_H 1
#define RT_HTRY 2
#define RT_ETA1 3
#define RT_ETAP 4
#define RT_COND 5
#define RT_HALVED 6
#define RT_RTAU 7
#define RT_ACC 0
#define RT_REJ 1
#define RT_PHASE 2
#define RT_HALVED_AT 3
// RT_SC_FIELDS, RT_CT_FIELDS and RT_SAMPLES come from the header, from the constants the
// host allocates the slot buffers with (src/backend/cuda/resident.rs): a field added here
// without its buffer growing fails to compile instead of writing past the buffer.
static_assert(RT_RTAU < RT_SC_FIELDS, "sc holds fewer fields than track.cu uses");
static_assert(RT_HALVED_AT < RT_CT_FIELDS, "ct holds fewer fields than track.cu uses");
#define RT_STAGE 100u
#define RT_CORRECT 200u
#define RT_ACTIVE 1
#define RT_REACHED 2
#define RT_HANDOFF 3
#define RT_CONTINUE 4
#define RT_DIVERGED 5
#define RT_BEYOND_DOUBLE 6
#define RT_FAILED 16
#define RT_STOPPED 32
// stop codes past the failure reasons (slot.rs STOP_STALLED, STOP_DIVERGED)
#define STOP_STALLED 9
#define STOP_DIVERGED 10
// bit of `entered`: the slot carries a path heading to infinity (slot.rs Slot::carry)
#define RT_CARRY 4
// failure reasons (slot.rs FAIL_REASONS)
#define F_SINGULAR_START 0
#define F_START 1
#define F_NONFINITE_DIR 2
#define F_NONFINITE_NEWTON 3
#define F_PREDICTOR 4
#define F_CONTRACT 5
#define F_CONVERGE 6
#define F_STEPS 7
#define F_OVERSHOOT 8

struct RtState {
    double2* y;
    double2* yc;
    double2* k;
    double2* yeval;
    double2* taueval;
    unsigned char* logm;
    double* sc;
    unsigned int* ct;
    unsigned char* status;
    unsigned char* entered;  // 0: not yet; 1: entered in projective coordinates; 2: in log;
                             // | RT_CARRY while carrying a path heading to infinity
    double2* entry_y;
    double* stau;
    double2* sy;
    unsigned char* nsamp;
    const double2* euler;
    const double2* newton;
    const double* cond_out;
    double* lifts;
    unsigned char* ddm;
    double* scond;
    long long cap;
};

// TrackerOptions and the step machine's constants (RtOpts in resident.rs, same order).
struct RtOpts {
    double tau_end, endgame_tau, h_initial, h_max, h_max_rel, h_min, eta_target, eta_max,
        corrector_tol, zone_cond, noise_factor, stagnation_tol, log_spread, log_spread_endgame,
        to_log_spread, sample_ratio;
    unsigned int max_corrector_iters, max_refine_iters, max_steps, zone_steps;
    double valuation_tol, divergence_s, eta_target_endgame, loose_min_ratio, to_log_overshoot,
        eta_near_toric_infinity, unresolved_noise, zone_cond_dd, dd_checkpoint_s, dd_entry_s,
        beyond_double_min_cond, beyond_double_min_rate, double_cond_limit;
    unsigned int dd_residuals, stop_beyond_double, zone_steps_to_infinity, slots_finish_diverging,
        rounding_switch, zone_rounding_switch;
};


__device__ __forceinline__ double rt_norm(const double2* v) {
    double s = 0.0;
#pragma unroll
    for (int j = 0; j < NN; ++j) s += v[j].x * v[j].x + v[j].y * v[j].y;
    return sqrt(s);
}

// |y_n| / ‖y‖ (at least the smallest positive double), as endgame::homogenizing_valuation.
__device__ __forceinline__ double rt_rel(const double2* y) {
    return fmax(sqrt(cnorm2(y[NN - 1])) / rt_norm(y), 2.2250738585072014e-308);
}

__device__ __forceinline__ void rt_normalize(double2* v) {
    const double s = rt_norm(v);
    if (s > 0.0 && isfinite(s)) {
#pragma unroll
        for (int j = 0; j < NN; ++j) v[j] = cmk(v[j].x / s, v[j].y / s);
    }
}

// y = e^{z − max Re z}, normalized.
__device__ __noinline__ void rt_log_to_projective(double2* z) {
    double hi = -1.0 / 0.0;
#pragma unroll
    for (int j = 0; j < NN; ++j) hi = fmax(hi, z[j].x);
#pragma unroll 1
    for (int j = 0; j < NN; ++j) {
        double m = exp(z[j].x - hi), sn, cs;
        sincos(z[j].y, &sn, &cs);
        z[j] = cmk(m * cs, m * sn);
    }
    rt_normalize(z);
}

// The projective point spreads over more than `spread` (in ln), no coordinate zero
// (path::wants_log).
__device__ __noinline__ bool rt_wants_log(const double2* y, double spread) {
    double lo = 1.0 / 0.0, hi = 0.0;
#pragma unroll
    for (int j = 0; j < NN; ++j) {
        const double a = sqrt(cnorm2(y[j]));
        lo = fmin(lo, a);
        hi = fmax(hi, a);
    }
    return lo > 0.0 && log(hi / lo) > spread;
}

// Mirrors of path::RELATIVE_SCALE, ROUNDING_SWITCH_MIN_SPREAD, TO_LOG_ROUNDING,
// FROM_LOG_ROUNDING and ZONE_FROM_LOG_ROUNDING (src/track/path.rs); not in RtOpts, keep
// them equal by hand.
#define RT_RELATIVE_SCALE 1e-2
#define RT_ROUNDING_SWITCH_MIN_SPREAD 9.2
#define RT_TO_LOG_ROUNDING 1e-8
#define RT_FROM_LOG_ROUNDING 1e-10
#define RT_ZONE_FROM_LOG_ROUNDING 1e-6

// path::correction_size: ‖Δz‖ in log coordinates; at a projective point
// (Σ_j |Δy_j|²/w_j²)^{1/2}, w_j = clamp(|y_j| / (RELATIVE_SCALE·max_k |y_k|), lo, 1),
// lo = min(noise_factor·κ·ε / corrector_tol, 1).
__device__ __noinline__ double rt_correction_size(const double2* dy, const double2* y, bool lg,
                                                  double cond, const RtOpts& o) {
    double top = 0.0;
#pragma unroll
    for (int j = 0; j < NN; ++j) top = fmax(top, sqrt(cnorm2(y[j])));
    if (lg || !(top > 0.0 && isfinite(top))) return rt_norm(dy);
    const double lo = fmin(o.noise_factor * cond * 2.220446049250313e-16 / o.corrector_tol, 1.0);
    const double unit = RT_RELATIVE_SCALE * top;
    double s = 0.0;
#pragma unroll 1
    for (int j = 0; j < NN; ++j) {
        const double w = fmin(fmax(sqrt(cnorm2(y[j])) / unit, lo), 1.0);
        s += cnorm2(dy[j]) / (w * w);
    }
    return sqrt(s);
}

// path::spread of a projective point: ln(max|y_j| / min|y_j|), ∞ with a zero coordinate.
__device__ __noinline__ double rt_projective_spread(const double2* y) {
    double lo = 1.0 / 0.0, hi = 0.0;
#pragma unroll
    for (int j = 0; j < NN; ++j) {
        const double a = sqrt(cnorm2(y[j]));
        lo = fmin(lo, a);
        hi = fmax(hi, a);
    }
    return lo > 0.0 ? log(hi / lo) : 1.0 / 0.0;
}

// path::smallest_rounding: noise_factor·κ·ε·e^spread.
__device__ __forceinline__ double rt_smallest_rounding(double cond, double spread,
                                                       const RtOpts& o) {
    return o.noise_factor * cond * 2.220446049250313e-16 * exp(spread);
}

// path::regime (no Cauchy loops here): 0 loose (before the endgame zone, coordinates not
// spread), 1 endgame zone, 2 near toric infinity (projective, a coordinate below
// loose_min_ratio of the largest).
__device__ __noinline__ int rt_regime(const double2* y, bool lg, double tau, const RtOpts& o) {
    if (tau > o.endgame_tau) return 1;
    if (lg) return 0;
    double lo = 1.0 / 0.0, hi = 0.0;
#pragma unroll
    for (int j = 0; j < NN; ++j) {
        const double a = cnorm2(y[j]);
        lo = fmin(lo, a);
        hi = fmax(hi, a);
    }
    return (lo < o.loose_min_ratio * o.loose_min_ratio * hi) ? 2 : 0;
}

// z_j = log(y_j / y_n), so z_n = 0 (path::projective_to_log).
__device__ __noinline__ void rt_projective_to_log(double2* y) {
    const double2 yn = y[NN - 1];
    const double ln_n = 0.5 * log(cnorm2(yn)), arg_n = atan2(yn.y, yn.x);
#pragma unroll 1
    for (int j = 0; j < NN - 1; ++j) {
        y[j] = cmk(0.5 * log(cnorm2(y[j])) - ln_n, atan2(y[j].y, y[j].x) - arg_n);
    }
    y[NN - 1] = cmk(0.0, 0.0);
}

__device__ __forceinline__ double rt_target(const RtOpts& o, double tau) {
    return tau < o.endgame_tau ? o.endgame_tau : o.tau_end;
}

// Begins a step attempt from (y, τ) with k1 known: the stage-2 point.
__device__ __noinline__ void rt_begin_step(const RtState& S, const RtOpts& o, long i) {
    const long cap = S.cap;
    const double tau = S.sc[RT_TAU * cap + i];
    const double htry = fmin(S.sc[RT_H * cap + i], rt_target(o, tau) - tau);
    S.sc[RT_HTRY * cap + i] = htry;
    S.ct[RT_PHASE * cap + i] = RT_STAGE + 2;
    const double c = 0.5 * htry;
    const double2* y = S.y + i * NN;
    const double2* k1 = S.k + i * NN;
    double2* ye = S.yeval + i * NN;
#pragma unroll
    for (int j = 0; j < NN; ++j) ye[j] = cadd(y[j], cscale(k1[j], c));
    S.taueval[i] = cmk(tau + c, 0.0);
}

// Slot::stop: stopped in the zone where the slot carries the path, else handed back from its
// entry point once in the zone, failed before.
__device__ __forceinline__ void rt_stop(const RtState& S, long i, int reason) {
    S.status[i] = (S.entered[i] & RT_CARRY) ? (unsigned char)(RT_STOPPED + reason)
                  : S.entered[i]            ? RT_HANDOFF
                                            : (unsigned char)(RT_FAILED + reason);
}

__device__ __noinline__ bool rt_settled_valuation(const RtState& S, const RtOpts& o, long i,
                                                  int ns);

__device__ __noinline__ void rt_reject(const RtState& S, const RtOpts& o, long i, int reason) {
    const long cap = S.cap;
    const unsigned rej = ++S.ct[RT_REJ * cap + i];
    const double h = 0.5 * S.sc[RT_HTRY * cap + i];
    S.sc[RT_H * cap + i] = h;
    if (h < o.h_min * fmax(fabs(S.sc[RT_TAU * cap + i]), 1.0)) {
        // Slot::settled_in_dd: an underflow in double-double mode once the valuation has
        // settled ends the path here (first pass)
        if (S.ddm[i] && o.slots_finish_diverging && !S.logm[i] &&
            rt_settled_valuation(S, o, i, S.nsamp[i])) {
            S.status[i] = (unsigned char)(RT_STOPPED + reason);
            return;
        }
        rt_stop(S, i, reason);
        return;
    }
    if (S.ct[RT_ACC * cap + i] + rej >= o.max_steps) {
        rt_stop(S, i, F_STEPS);
        return;
    }
    rt_begin_step(S, o, i);
}

// endgame::homogenizing_valuation of slot i's samples q and q + 1 (NaN where undefined).
__device__ __noinline__ double rt_valuation(const RtState& S, const RtOpts& o, long i, int q) {
    const double s1 = fabs(o.tau_end - S.stau[i * RT_SAMPLES + q]);
    const double s2 = fabs(o.tau_end - S.stau[i * RT_SAMPLES + q + 1]);
    if (!(s1 > 0.0 && s2 > 0.0 && s1 != s2)) return 0.0 / 0.0;
    return (log(rt_rel(S.sy + (i * RT_SAMPLES + q) * NN)) -
            log(rt_rel(S.sy + (i * RT_SAMPLES + q + 1) * NN))) /
           (log(s1) - log(s2));
}

// path::settled_valuation over slot i's ns samples: four at least, three valuation
// estimates agreeing to 0.01, the last above 2·VALUATION_TOL.
__device__ __noinline__ bool rt_settled_valuation(const RtState& S, const RtOpts& o, long i,
                                                  int ns) {
    if (ns < 4) return false;
    const double v0 = rt_valuation(S, o, i, ns - 4);
    const double v1 = rt_valuation(S, o, i, ns - 3);
    const double v2 = rt_valuation(S, o, i, ns - 2);
    if (v0 != v0 || v1 != v1 || v2 != v2) return false;
    return fabs(v0 - v1) < 0.01 && fabs(v1 - v2) < 0.01 && v2 > 2.0 * o.valuation_tol;
}

// path::stable_divergence over slot i's ns samples: settled, the newest at s ≤ DIVERGENCE_S.
__device__ __noinline__ bool rt_stable_divergence(const RtState& S, const RtOpts& o, long i,
                                                  int ns) {
    if (ns < 1 || o.tau_end - S.stau[i * RT_SAMPLES + ns - 1] > o.divergence_s) return false;
    return rt_settled_valuation(S, o, i, ns);
}

// path::beyond_double over slot i's ns samples and their condition estimates: valuations
// above 2·VALUATION_TOL on the last two pairs, κ ∼ s^−k with k ≥ BEYOND_DOUBLE_MIN_RATE on
// both pairs of the last three, the newest κ ≥ BEYOND_DOUBLE_MIN_COND, and κ extrapolated
// with the smaller k to s = DIVERGENCE_S at least DOUBLE_COND_LIMIT.
__device__ __noinline__ bool rt_beyond_double(const RtState& S, const RtOpts& o, long i, int ns) {
    if (ns < 3) return false;
    const double v1 = rt_valuation(S, o, i, ns - 3);
    const double v2 = rt_valuation(S, o, i, ns - 2);
    if (!(fmin(v1, v2) > 2.0 * o.valuation_tol)) return false;
    double s[3], c[3];
    for (int q = 0; q < 3; ++q) {
        s[q] = o.tau_end - S.stau[i * RT_SAMPLES + ns - 3 + q];
        c[q] = S.scond[i * RT_SAMPLES + ns - 3 + q];
    }
    const double r = fmin(log(c[1] / c[0]) / log(s[0] / s[1]), log(c[2] / c[1]) / log(s[1] / s[2]));
    const double reach = log(c[2]) + r * log(s[2] / o.divergence_s);
    return r >= o.beyond_double_min_rate && c[2] >= o.beyond_double_min_cond &&
           reach >= log(o.double_cond_limit);
}

// Slot::enter_dd: back to the oldest sample (step size scaled by s, that sample the only
// one and, when s ≥ DD_CHECKPOINT_S, the zone entry), double-double mode, refinement first.
// t: the slot's τ now.
__device__ __noinline__ void rt_enter_dd(const RtState& S, const RtOpts& o, long i, double t) {
    const long cap = S.cap;
    const double tau0 = S.stau[i * RT_SAMPLES];
    const double s0 = o.tau_end - tau0, s = o.tau_end - t;
    if (s > 0.0) S.sc[RT_H * cap + i] *= s0 / s;
    const double2* y0 = S.sy + i * RT_SAMPLES * NN;
    if (s0 >= o.dd_checkpoint_s) {
        S.entered[i] = 1;
        S.sc[RT_RTAU * cap + i] = tau0;
        for (int j = 0; j < NN; ++j) S.entry_y[i * NN + j] = y0[j];
    }
    S.nsamp[i] = 1;
    for (int j = 0; j < NN; ++j) {
        S.y[i * NN + j] = y0[j];
        S.yeval[i * NN + j] = y0[j];
    }
    S.sc[RT_TAU * cap + i] = tau0;
    S.taueval[i] = cmk(tau0, 0.0);
    S.sc[RT_HALVED * cap + i] = 1.0 / 0.0;
    S.ddm[i] = 1;
    S.ct[RT_PHASE * cap + i] = 0;
}

extern "C" __global__ void rt_advance(RtState S, RtOpts o, int hi) {
    const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= hi || S.status[i] != RT_ACTIVE) return;
    const long cap = S.cap;
    double2* y = S.y + i * NN;
    double2* yc = S.yc + i * NN;
    double2* ye = S.yeval + i * NN;
    const double2* E = S.euler + i * NN;
    const double2* Nw = S.newton + i * NN;
    const double cond = S.cond_out[i];
    bool ok = isfinite(cond);
#pragma unroll
    for (int j = 0; j < NN; ++j)
        ok = ok && isfinite(E[j].x) && isfinite(E[j].y) && isfinite(Nw[j].x) && isfinite(Nw[j].y);
    const unsigned phase = S.ct[RT_PHASE * cap + i];
    const bool lg = S.logm[i] != 0;

    if (phase < RT_STAGE) {  // start refinement, Newton iteration `phase`
        if (!ok) {
            rt_stop(S, i, F_SINGULAR_START);
            return;
        }
        const double eta = rt_norm(Nw);
#pragma unroll
        for (int j = 0; j < NN; ++j) y[j] = cadd(y[j], Nw[j]);
        if (!lg) rt_normalize(y);
        S.sc[RT_COND * cap + i] = cond;
        // path::refine_converged: below tol·1e-2; or below tol once Newton no longer halves
        // its corrections (its rounding level), or at the last iteration.
        const double eta_prev = S.sc[RT_ETAP * cap + i];
        const bool last = phase + 1 >= o.max_refine_iters;
        const bool converged =
            eta <= o.corrector_tol * 1e-2 ||
            (eta <= o.corrector_tol && (last || (phase >= 1 && eta > 0.5 * eta_prev)));
        S.sc[RT_ETAP * cap + i] = eta;
        if (converged) {
            double2* k1 = S.k + i * NN;
#pragma unroll
            for (int j = 0; j < NN; ++j) k1[j] = E[j];
            rt_begin_step(S, o, i);
        } else if (phase + 1 >= o.max_refine_iters) {
            rt_stop(S, i, F_START);
        } else {
            S.ct[RT_PHASE * cap + i] = phase + 1;
#pragma unroll
            for (int j = 0; j < NN; ++j) ye[j] = y[j];
        }
        return;
    }

    const double tau = S.sc[RT_TAU * cap + i];
    if (phase < RT_CORRECT) {  // Runge–Kutta stage s = phase − STAGE
        if (!ok) {
            rt_reject(S, o, i, F_NONFINITE_DIR);
            return;
        }
        const int s = (int)(phase - RT_STAGE);
        double2* ks = S.k + ((long)(s - 1) * cap + i) * NN;
#pragma unroll
        for (int j = 0; j < NN; ++j) ks[j] = E[j];
        const double h = S.sc[RT_HTRY * cap + i];
        if (s < 4) {
            const double c = (s == 2) ? 0.5 * h : h;
#pragma unroll
            for (int j = 0; j < NN; ++j) ye[j] = cadd(y[j], cscale(ks[j], c));
            S.taueval[i] = cmk(tau + c, 0.0);
            S.ct[RT_PHASE * cap + i] = phase + 1;
        } else {
            const double w = h / 6.0;
            const double2* k1 = S.k + i * NN;
            const double2* k2 = S.k + (cap + i) * NN;
            const double2* k3 = S.k + (2 * cap + i) * NN;
#pragma unroll
            for (int j = 0; j < NN; ++j) {
                const double2 sum = cadd(cadd(k1[j], cscale(cadd(k2[j], k3[j]), 2.0)), ks[j]);
                yc[j] = cadd(y[j], cscale(sum, w));
                ye[j] = yc[j];
            }
            S.taueval[i] = cmk(tau + h, 0.0);
            S.ct[RT_PHASE * cap + i] = RT_CORRECT + 1;
        }
        return;
    }

    // Newton correction `it` at the predicted point.
    const unsigned it = phase - RT_CORRECT;
    if (!ok) {
        rt_reject(S, o, i, F_NONFINITE_NEWTON);
        return;
    }
    const double eta = rt_correction_size(Nw, yc, lg, cond, o);
    const double noise = o.noise_factor * cond * 2.220446049250313e-16;
    const double eta_prev = S.sc[RT_ETAP * cap + i];
    if (it == 1) {
        S.sc[RT_ETA1 * cap + i] = eta;
        if (eta > o.eta_max) {
            rt_reject(S, o, i, F_PREDICTOR);
            return;
        }
    } else if (eta > 0.5 * eta_prev && eta > fmax(noise, o.stagnation_tol)) {
        rt_reject(S, o, i, F_CONTRACT);
        return;
    }
    const bool stagnated = it >= 2 && eta > 0.5 * eta_prev && eta <= o.stagnation_tol;
    // newton_converged (src/track/path.rs): the last correction, or (in the loose regime)
    // the error θ·eta left after it (θ = eta/eta_prev), below the tolerance.
    const double tol = fmax(o.corrector_tol, noise);
    const bool loose = rt_regime(yc, lg, tau + S.sc[RT_HTRY * cap + i], o) == 0;
    const bool converged = eta <= tol || (loose && it >= 2 && eta * eta <= tol * eta_prev);
    S.sc[RT_ETAP * cap + i] = eta;
#pragma unroll
    for (int j = 0; j < NN; ++j) yc[j] = cadd(yc[j], Nw[j]);
    if (!(converged || stagnated)) {
        if (it >= o.max_corrector_iters) {
            rt_reject(S, o, i, F_CONVERGE);
            return;
        }
        S.ct[RT_PHASE * cap + i] = phase + 1;
#pragma unroll
        for (int j = 0; j < NN; ++j) ye[j] = yc[j];
        return;
    }
    // overshoots_log_switch (src/track/path.rs): halve a step that passed the switch to log
    // coordinates by more than TO_LOG_OVERSHOOT.
    if (!lg && tau + S.sc[RT_HTRY * cap + i] < o.endgame_tau &&
        rt_wants_log(yc, o.to_log_spread + o.to_log_overshoot)) {
        rt_reject(S, o, i, F_OVERSHOOT);
        return;
    }
    // Accepted.
    const unsigned acc = ++S.ct[RT_ACC * cap + i];
    S.sc[RT_COND * cap + i] = cond;
#pragma unroll
    for (int j = 0; j < NN; ++j) y[j] = yc[j];
    if (!lg) rt_normalize(y);
    {
        double2* k1 = S.k + i * NN;
#pragma unroll
        for (int j = 0; j < NN; ++j) k1[j] = E[j];
    }
    const double target = rt_target(o, tau);
    const double htry = S.sc[RT_HTRY * cap + i];
    const double h_old = S.sc[RT_H * cap + i];
    const bool clipped = htry < h_old;
    double t = tau + htry;
    if (htry >= target - (t - htry)) t = target;
    S.sc[RT_TAU * cap + i] = t;
    // TrackerOptions::eta_target_at(regime) at the new point.
    const int rg = rt_regime(y, lg, t, o);
    const double eta_t = rg == 0 ? o.eta_target
                         : rg == 1 ? o.eta_target_endgame
                                   : fmin(o.eta_target_endgame, o.eta_near_toric_infinity);
    // step_factor (src/track/path.rs): in the endgame zone a first correction within the
    // rounding level says nothing against the step, and the goal is never below that level.
    const double eta1 = fmax(S.sc[RT_ETA1 * cap + i], 1e-300);
    const bool zone = t > o.endgame_tau;
    const double goal = zone ? fmax(eta_t, noise) : eta_t;
    const double factor = zone && eta1 <= o.unresolved_noise * noise
                              ? 2.0
                              : fmin(fmax(0.9 * pow(goal / eta1, 0.2), 0.5), 2.0);
    const double base = clipped ? fmax(h_old, htry) : htry;
    // a carried path never steps to τ_end: at most half the way there (slot.rs)
    const double hcap = fmax(o.h_max, o.h_max_rel * fabs(t));
    S.sc[RT_H * cap + i] =
        fmin(base * factor, (S.entered[i] & RT_CARRY) ? fmin(hcap, 0.5 * (o.tau_end - t)) : hcap);
    if (t >= o.tau_end) {
        if (lg) {
            rt_log_to_projective(y);
            S.logm[i] = 0;
        }
        // a carried path that gets to τ_end goes to the host from its zone entry (slot.rs)
        S.status[i] = (S.entered[i] & RT_CARRY) ? RT_HANDOFF : RT_REACHED;
        return;
    }
    if (lg) {
        const double limit = t > o.endgame_tau ? o.log_spread_endgame : o.log_spread;
        double lo = 1.0 / 0.0, hi_ = -1.0 / 0.0;
#pragma unroll
        for (int j = 0; j < NN; ++j) {
            lo = fmin(lo, y[j].x);
            hi_ = fmax(hi_, y[j].x);
        }
        // switches_coordinates (src/track/path.rs): before the zone, a polyhedral path
        // (finite to_log_spread) goes back to projective coordinates only where its
        // smallest coordinate keeps its digits.
        // In the zone, above log_spread, where it keeps some (ZONE_FROM_LOG_ROUNDING).
        // With zone_rounding_switch, in the zone as before it.
        const bool keeps_digits =
            !isfinite(o.to_log_spread) ||
            (t > o.endgame_tau && !o.zone_rounding_switch
                 ? (hi_ - lo <= o.log_spread ||
                    rt_smallest_rounding(cond, hi_ - lo, o) <= RT_ZONE_FROM_LOG_ROUNDING)
                 : rt_smallest_rounding(cond, hi_ - lo, o) <= RT_FROM_LOG_ROUNDING);
        if (hi_ - lo <= limit && keeps_digits) {
            rt_log_to_projective(y);
            S.logm[i] = 0;
            S.ct[RT_PHASE * cap + i] = 0;
#pragma unroll
            for (int j = 0; j < NN; ++j) ye[j] = y[j];
            S.taueval[i] = cmk(t, 0.0);
            return;
        }
    } else if (isfinite(o.to_log_spread) &&
               ((t < o.endgame_tau && rt_wants_log(y, o.to_log_spread)) ||
                ((t < o.endgame_tau ? o.rounding_switch
                                    : (t > o.endgame_tau && o.zone_rounding_switch)) &&
                 rt_projective_spread(y) > RT_ROUNDING_SWITCH_MIN_SPREAD &&
                 isfinite(rt_projective_spread(y)) &&
                 rt_smallest_rounding(cond, rt_projective_spread(y), o) > RT_TO_LOG_ROUNDING))) {
        rt_projective_to_log(y);
        S.logm[i] = 1;
        S.ct[RT_PHASE * cap + i] = 0;
#pragma unroll
        for (int j = 0; j < NN; ++j) ye[j] = y[j];
        S.taueval[i] = cmk(t, 0.0);
        return;
    }
    const unsigned steps = acc + S.ct[RT_REJ * cap + i];
    if (t >= o.endgame_tau) {
        const double s = o.tau_end - t;
        if (!S.entered[i]) {
            S.entered[i] = lg ? 2 : 1;
            double2* ey = S.entry_y + i * NN;
#pragma unroll
            for (int j = 0; j < NN; ++j) ey[j] = y[j];
            S.sc[RT_RTAU * cap + i] = t;
        }
        if (!(S.sc[RT_HALVED * cap + i] < 1.0 / 0.0) || s <= 0.5 * S.sc[RT_HALVED * cap + i]) {
            S.sc[RT_HALVED * cap + i] = s;
            S.ct[RT_HALVED_AT * cap + i] = steps;
        }
        bool carry = (S.entered[i] & RT_CARRY) != 0;
        const bool may_carry = o.slots_finish_diverging && !S.ddm[i] &&
                               (carry || (cond > o.zone_cond && s > o.dd_entry_s));
        const unsigned since_halved = steps - S.ct[RT_HALVED_AT * cap + i];
        // heading to infinity: the valuation between the last two samples (slot.rs), read
        // only where it decides something: a carried path, one that may be carried, one past
        // ZONE_STEPS (<= ZONE_STEPS_TO_INFINITY) without halving s
        const int nsz = S.nsamp[i];
        const bool heading = (carry || may_carry || since_halved >= o.zone_steps) && !lg &&
                             nsz >= 2 && rt_valuation(S, o, i, nsz - 2) > 2.0 * o.valuation_tol;
        if (carry && !heading) {
            // no longer heading to infinity: the host decides, from the zone entry
            S.status[i] = RT_HANDOFF;
            return;
        }
        carry = may_carry && heading;
        S.entered[i] = carry ? (S.entered[i] | RT_CARRY) : (S.entered[i] & 3);
        const double zone_cond = S.ddm[i] ? o.zone_cond_dd : o.zone_cond;
        // a path heading to infinity stalls only at the host's limit ZONE_STEPS_TO_INFINITY
        const bool stalled =
            since_halved >= (heading ? o.zone_steps_to_infinity : o.zone_steps);
        if (carry) {
            // no bound on the condition estimate, as on the host (slot.rs)
            if (stalled) {
                rt_stop(S, i, STOP_STALLED);
                return;
            }
        } else if (cond > zone_cond || stalled) {
            // ill-conditioned late in the zone: double-double mode from the oldest sample
            // (slot.rs DD_ENTRY_S), else to the host from the zone entry
            const bool ill = cond > o.zone_cond && s <= o.dd_entry_s;
            if (ill && !S.ddm[i] && o.dd_residuals && !lg && S.nsamp[i] > 0) {
                rt_enter_dd(S, o, i, t);
                return;
            }
            S.status[i] = RT_HANDOFF;
            return;
        }
    }
    if (t > o.endgame_tau) {
        const double s = o.tau_end - t;
        int ns = S.nsamp[i];
        const bool due = ns == 0 || (o.tau_end - S.stau[i * RT_SAMPLES + ns - 1]) >= o.sample_ratio * s;
        if (due) {
            if (ns == RT_SAMPLES) {
                for (int q = 1; q < RT_SAMPLES; ++q) {
                    S.stau[i * RT_SAMPLES + q - 1] = S.stau[i * RT_SAMPLES + q];
                    S.scond[i * RT_SAMPLES + q - 1] = S.scond[i * RT_SAMPLES + q];
                    for (int j = 0; j < NN; ++j)
                        S.sy[(i * RT_SAMPLES + q - 1) * NN + j] = S.sy[(i * RT_SAMPLES + q) * NN + j];
                }
                ns = RT_SAMPLES - 1;
            }
            S.stau[i * RT_SAMPLES + ns] = t;
            S.scond[i * RT_SAMPLES + ns] = cond;
            for (int j = 0; j < NN; ++j) S.sy[(i * RT_SAMPLES + ns) * NN + j] = y[j];
            S.nsamp[i] = (unsigned char)(ns + 1);
            if (S.ddm[i]) {
                // double-double mode: a valuation that stays positive ends the path as
                // diverging (path::stable_divergence)
                if (rt_stable_divergence(S, o, i, ns + 1)) {
                    S.status[i] = RT_DIVERGED;
                    return;
                }
            } else if (S.entered[i] & RT_CARRY) {
                // carried: the host tracker's divergence rule (then beyond_double below)
                if (rt_stable_divergence(S, o, i, ns + 1)) {
                    rt_stop(S, i, STOP_DIVERGED);
                    return;
                }
            } else if (ns >= 1 && !lg && s <= o.divergence_s) {
                // a homogenizing coordinate still shrinking like s^v, v > 2·VALUATION_TOL,
                // at s ≤ DIVERGENCE_S: back to the oldest sample in double-double mode, or
                // to the host from there (EXIT_CONTINUE)
                const double v = rt_valuation(S, o, i, ns - 1);
                if (v > 2.0 * o.valuation_tol) {
                    if (o.dd_residuals) {
                        rt_enter_dd(S, o, i, t);
                    } else {
                        S.status[i] = RT_CONTINUE;
                    }
                    return;
                }
            }
            if (!S.ddm[i] && !lg && o.stop_beyond_double && rt_beyond_double(S, o, i, ns + 1)) {
                // heading to infinity faster than double precision can follow
                S.status[i] = RT_BEYOND_DOUBLE;
                return;
            }
        }
    }
    if (steps >= o.max_steps) {
        rt_stop(S, i, F_STEPS);
        return;
    }
    rt_begin_step(S, o, i);
}

// Puts q start points into their slots (Slot::new): slot[r], coordinates y (q × NN), τ,
// log flags, steps taken (q × 2: accepted, rejected), lift rows (q × MT, or null: the slot
// keeps no lifts of its own).
extern "C" __global__ void rt_load(RtState S, RtOpts o, const int* __restrict__ slot,
                                   const double2* __restrict__ y0, const double* __restrict__ tau0,
                                   const unsigned char* __restrict__ log0,
                                   const unsigned int* __restrict__ steps0,
                                   const double* __restrict__ lifts0, int q) {
    const long r = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= q) return;
    const long cap = S.cap;
    const long i = slot[r];
    double2* y = S.y + i * NN;
#pragma unroll
    for (int j = 0; j < NN; ++j) y[j] = y0[r * NN + j];
    const bool lg = log0[r] != 0;
    if (!lg) rt_normalize(y);
    double2* ye = S.yeval + i * NN;
#pragma unroll
    for (int j = 0; j < NN; ++j) ye[j] = y[j];
    const double tau = tau0[r];
    S.taueval[i] = cmk(tau, 0.0);
    S.logm[i] = lg ? 1 : 0;
    S.sc[RT_TAU * cap + i] = tau;
    S.sc[RT_H * cap + i] = fmax(o.h_initial, 0.01 * fabs(tau));
    S.sc[RT_HTRY * cap + i] = o.h_initial;
    S.sc[RT_ETA1 * cap + i] = 0.0;
    S.sc[RT_ETAP * cap + i] = 0.0;
    S.sc[RT_COND * cap + i] = 1.0;
    S.ct[RT_ACC * cap + i] = steps0[2 * r];
    S.ct[RT_REJ * cap + i] = steps0[2 * r + 1];
    S.ct[RT_PHASE * cap + i] = 0;
    S.ct[RT_HALVED_AT * cap + i] = 0;
    S.sc[RT_HALVED * cap + i] = 1.0 / 0.0;
    S.entered[i] = 0;
    S.nsamp[i] = 0;
    S.ddm[i] = 0;
    if (lifts0 && S.lifts)
        for (int c = 0; c < MT; ++c) S.lifts[i * MT + c] = lifts0[r * MT + c];
    S.status[i] = RT_ACTIVE;
}

// Record of one slot read back by the host (double2 words): y [NN], entry y [NN], samples'
// y [RT_SAMPLES·NN], then (τ, cond), (τ of samples 0, 1), (2, 3), (accepted, rejected),
// (status, log + 2·entered + 8·nsamp), (τ of the resume point, next step size h),
// (κ of samples 0, 1), (2, 3).
#define RT_REC (NN * (2 + RT_SAMPLES) + 8)

// Packs slots slot[r] (r < q) into out (q × RT_REC) and empties them.
extern "C" __global__ void rt_gather(RtState S, const int* __restrict__ slot,
                                     double2* __restrict__ out, int q) {
    const long r = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= q) return;
    const long cap = S.cap;
    const long i = slot[r];
    double2* o = out + r * RT_REC;
    for (int j = 0; j < NN; ++j) {
        o[j] = S.y[i * NN + j];
        o[NN + j] = S.entry_y[i * NN + j];
    }
    for (int j = 0; j < RT_SAMPLES * NN; ++j) o[2 * NN + j] = S.sy[i * RT_SAMPLES * NN + j];
    double2* m = o + NN * (2 + RT_SAMPLES);
    m[0] = cmk(S.sc[RT_TAU * cap + i], S.sc[RT_COND * cap + i]);
    m[1] = cmk(S.stau[i * RT_SAMPLES], S.stau[i * RT_SAMPLES + 1]);
    m[2] = cmk(S.stau[i * RT_SAMPLES + 2], S.stau[i * RT_SAMPLES + 3]);
    m[3] = cmk((double)S.ct[RT_ACC * cap + i], (double)S.ct[RT_REJ * cap + i]);
    m[4] = cmk((double)S.status[i],
               (double)(S.logm[i] + 2 * (S.entered[i] & 3) + 8 * S.nsamp[i]));
    m[5] = cmk(S.sc[RT_RTAU * cap + i], S.sc[RT_H * cap + i]);
    m[6] = cmk(S.scond[i * RT_SAMPLES], S.scond[i * RT_SAMPLES + 1]);
    m[7] = cmk(S.scond[i * RT_SAMPLES + 2], S.scond[i * RT_SAMPLES + 3]);
    S.status[i] = 0;
}

// Moves the path of slot from[r] into the empty slot to[r] (r < q) and empties from[r]:
// every piece of state the next iteration reads (the directions are recomputed).
extern "C" __global__ void rt_move(RtState S, const int* __restrict__ from,
                                   const int* __restrict__ to, int q) {
    const long r = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= q) return;
    const long cap = S.cap;
    const long a = from[r], b = to[r];
    for (int j = 0; j < NN; ++j) {
        S.y[b * NN + j] = S.y[a * NN + j];
        S.yc[b * NN + j] = S.yc[a * NN + j];
        S.yeval[b * NN + j] = S.yeval[a * NN + j];
        S.entry_y[b * NN + j] = S.entry_y[a * NN + j];
        for (int s = 0; s < 4; ++s) S.k[(s * cap + b) * NN + j] = S.k[(s * cap + a) * NN + j];
    }
    for (int j = 0; j < RT_SAMPLES * NN; ++j)
        S.sy[b * RT_SAMPLES * NN + j] = S.sy[a * RT_SAMPLES * NN + j];
    for (int q2 = 0; q2 < RT_SAMPLES; ++q2) {
        S.stau[b * RT_SAMPLES + q2] = S.stau[a * RT_SAMPLES + q2];
        S.scond[b * RT_SAMPLES + q2] = S.scond[a * RT_SAMPLES + q2];
    }
    for (int f = 0; f < RT_SC_FIELDS; ++f) S.sc[f * cap + b] = S.sc[f * cap + a];
    for (int f = 0; f < RT_CT_FIELDS; ++f) S.ct[f * cap + b] = S.ct[f * cap + a];
    S.taueval[b] = S.taueval[a];
    S.logm[b] = S.logm[a];
    S.entered[b] = S.entered[a];
    S.nsamp[b] = S.nsamp[a];
    S.ddm[b] = S.ddm[a];
    if (S.lifts)
        for (int c = 0; c < MT; ++c) S.lifts[b * MT + c] = S.lifts[a * MT + c];
    S.status[b] = S.status[a];
    S.status[a] = 0;
}
