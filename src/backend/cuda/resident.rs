//! Resident slots on the device ([`crate::track::resident`]): the path state of every slot
//! stays in device memory and one iteration is four kernel launches over the used slots —
//! `log_points`, the evaluator (fused, generated or cuBLAS, as for `directions`),
//! `gj_directions`, and `rt_advance` (kernels/track.cu: the step machine of
//! [`crate::track::resident::slot`]). Between collections nothing crosses the bus; a
//! collection reads one status byte per used slot and the records of the slots that left.
//! The host's own (endgame) paths get their directions from [`super::HostDirections`], on
//! the host's cores, while the device iterates.

use super::{cuda_err, grid1, i32_of, CudaBackend, DdModes, PointKinds, SolveOperands};
use crate::error::{Error, Result};
use crate::eval::EvalLayout;
use crate::gpu::DBuf;
use crate::track::path::{
    LOG_SWITCH_SPREAD, LOG_SWITCH_SPREAD_ENDGAME, MAX_SAMPLES, NOISE_FACTOR, SAMPLE_RATIO,
    STAGNATION_TOL,
};
use crate::track::resident::slot::{Snapshot, DD_ENTRY_S, SLOT_ACTIVE, SLOT_EMPTY, ZONE_COND_DD};
use crate::track::resident::{
    compaction_moves, ResidentTracker, SlotExit, ZONE_COND, ZONE_STEPS, ZONE_STEPS_TO_INFINITY,
};
use crate::track::{StartPoint, TrackerOptions};
use cudarc::driver::{DeviceRepr, PushKernelArg};
use num_complex::Complex64 as C64;
use std::sync::Arc;

/// Endgame samples per slot (`RT_SAMPLES` in kernels/track.cu, defined from this).
pub(super) const SAMPLES: usize = 4;
/// Doubles per slot in `sc` (`RT_SC_FIELDS`: τ, h, h_try, η₁, η_prev, cond, s when it last
/// halved, τ of the zone entry). kernels/track.cu asserts at compile time that its fields fit.
pub(super) const SC_FIELDS: usize = 8;
/// Counters per slot in `ct` (`RT_CT_FIELDS`: accepted, rejected, phase, steps when s last
/// halved).
pub(super) const CT_FIELDS: usize = 4;
const _: () = assert!(SAMPLES == MAX_SAMPLES);

/// Device addresses of the slot state (`RtState` in kernels/track.cu, same order).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct RtState {
    y: u64,
    yc: u64,
    k: u64,
    yeval: u64,
    taueval: u64,
    logm: u64,
    sc: u64,
    ct: u64,
    status: u64,
    entered: u64,
    entry_y: u64,
    stau: u64,
    sy: u64,
    nsamp: u64,
    euler: u64,
    newton: u64,
    cond_out: u64,
    lifts: u64,
    ddm: u64,
    scond: u64,
    cap: i64,
}
unsafe impl DeviceRepr for RtState {}

/// Tracker options and step-machine constants (`RtOpts` in kernels/track.cu, same order).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct RtOpts {
    tau_end: f64,
    endgame_tau: f64,
    h_initial: f64,
    h_max: f64,
    h_max_rel: f64,
    h_min: f64,
    eta_target: f64,
    eta_max: f64,
    corrector_tol: f64,
    zone_cond: f64,
    noise_factor: f64,
    stagnation_tol: f64,
    log_spread: f64,
    log_spread_endgame: f64,
    to_log_spread: f64,
    sample_ratio: f64,
    max_corrector_iters: u32,
    max_refine_iters: u32,
    max_steps: u32,
    zone_steps: u32,
    valuation_tol: f64,
    divergence_s: f64,
    eta_target_endgame: f64,
    loose_min_ratio: f64,
    to_log_overshoot: f64,
    eta_near_toric_infinity: f64,
    unresolved_noise: f64,
    zone_cond_dd: f64,
    dd_checkpoint_s: f64,
    dd_entry_s: f64,
    beyond_double_min_cond: f64,
    beyond_double_min_rate: f64,
    double_cond_limit: f64,
    /// 1: slots enter double-double mode (`slot::Slot::residual`), 0: they hand such paths
    /// to the host.
    dd_residuals: u32,
    /// 1: slots stop paths beyond double precision (`TrackerOptions::stop_beyond_double`).
    stop_beyond_double: u32,
    zone_steps_to_infinity: u32,
    /// 1: slots carry paths heading to infinity to their end
    /// (`TrackerOptions::slots_finish_diverging`).
    slots_finish_diverging: u32,
    /// 1: polyhedral paths switch to log coordinates where projective ones lose their
    /// digits (`TrackerOptions::rounding_switch`).
    rounding_switch: u32,
    /// 1: the same switch inside the endgame zone (`TrackerOptions::zone_rounding_switch`).
    zone_rounding_switch: u32,
}
unsafe impl DeviceRepr for RtOpts {}

impl RtOpts {
    fn new(o: &TrackerOptions) -> RtOpts {
        RtOpts {
            tau_end: o.tau_end,
            endgame_tau: o.endgame_tau,
            h_initial: o.h_initial,
            h_max: o.h_max,
            h_max_rel: o.h_max_rel,
            h_min: o.h_min,
            eta_target: o.eta_target,
            eta_max: o.eta_max,
            corrector_tol: o.corrector_tol,
            zone_cond: ZONE_COND,
            noise_factor: NOISE_FACTOR,
            stagnation_tol: STAGNATION_TOL,
            log_spread: LOG_SWITCH_SPREAD,
            log_spread_endgame: LOG_SWITCH_SPREAD_ENDGAME,
            to_log_spread: o.to_log_spread,
            sample_ratio: SAMPLE_RATIO,
            max_corrector_iters: o.max_corrector_iters,
            max_refine_iters: o.max_refine_iters,
            max_steps: o.max_steps,
            zone_steps: ZONE_STEPS,
            valuation_tol: crate::endgame::VALUATION_TOL,
            divergence_s: crate::track::path::DIVERGENCE_S,
            eta_target_endgame: o.eta_target_endgame,
            loose_min_ratio: crate::track::path::LOOSE_MIN_RATIO,
            to_log_overshoot: crate::track::path::TO_LOG_OVERSHOOT,
            eta_near_toric_infinity: crate::track::NEAR_TORIC_INFINITY_ETA,
            unresolved_noise: crate::track::path::UNRESOLVED_NOISE,
            zone_cond_dd: ZONE_COND_DD,
            dd_checkpoint_s: crate::track::dd::DD_CHECKPOINT_S,
            dd_entry_s: DD_ENTRY_S,
            beyond_double_min_cond: crate::track::path::BEYOND_DOUBLE_MIN_COND,
            beyond_double_min_rate: crate::track::path::BEYOND_DOUBLE_MIN_RATE,
            double_cond_limit: crate::track::path::DOUBLE_COND_LIMIT,
            dd_residuals: crate::track::resident::dd_residuals_enabled() as u32,
            stop_beyond_double: o.stop_beyond_double as u32,
            zone_steps_to_infinity: ZONE_STEPS_TO_INFINITY,
            slots_finish_diverging: o.slots_finish_diverging as u32,
            rounding_switch: o.rounding_switch as u32,
            zone_rounding_switch: o.zone_rounding_switch as u32,
        }
    }
}

/// The slots' device memory.
pub(crate) struct Slots {
    cap: usize,
    /// Slots below this index have held paths: the range every launch covers.
    hi: usize,
    state: RtState,
    opts: RtOpts,
    /// Owners of the addresses in `state`.
    _bufs: Vec<DBuf>,
    lifts: Option<DBuf>,
    /// Staging: slot indices, then the packed start points or records.
    stage_idx: Option<DBuf>,
    stage_data: Option<DBuf>,
    /// The host side of a load: page-locked, so that a load queued behind a running launch
    /// does not wait for it.
    pinned: Option<crate::gpu::PinnedBuf>,
    /// The iterations captured as a CUDA graph, for (launch range, iterations).
    graph: Option<((usize, u32), Graph)>,
    /// False once a capture failed (plain launches from then on).
    graph_ok: bool,
    /// The active slots after the last collection, ascending.
    active: Vec<usize>,
    /// `Some` when `PATHTRACK_RESIDENT_TRACE` is set.
    profile: Option<Profile>,
    /// Addresses of the shared buffers (`Buffers`: euler, newton, cond, jac, z, e) that
    /// `state` and `graph` were made with (see [`CudaBackend::refresh_slot_buffers`]).
    bufs_at: [u64; 6],
}

/// An instantiated CUDA graph. cudarc's handle is not `Send` (raw pointers); a graph may be
/// launched from any thread that binds its context, and the backend that owns this one is
/// used by one thread at a time (`&mut self`), which binds the context before launching.
struct Graph(cudarc::driver::CudaGraph);
unsafe impl Send for Graph {}

/// The parts of one iteration.
#[derive(Clone, Copy, Debug)]
enum Part {
    Eval,
    Solve,
    Advance,
}

/// Sampled device time of the parts of an iteration (`PATHTRACK_RESIDENT_TRACE`).
#[derive(Default)]
struct Profile {
    /// Milliseconds of evaluation, direction solve and `rt_advance`, summed over samples.
    ms: [f64; 3],
    samples: u64,
    /// Launch range summed over samples.
    points: u64,
    /// Launches so far (one in [`PROFILE_EVERY`] is preceded by a timed iteration).
    launches: u64,
    /// Graphs captured and the seconds spent capturing them.
    captures: u64,
    capture_s: f64,
    /// Seconds waiting for the launched iterations (the status copy), and in the rest of the
    /// collections (gathering the records, decoding them).
    wait_s: f64,
    gather_s: f64,
    /// `gather_s` by part: the status scan, the gather's upload and launch, its download,
    /// the records decoded.
    gather_parts: [f64; 4],
    /// Device milliseconds of the launched iterations (CUDA events around each launch, read
    /// at the next collection), and the launches timed so.
    launched_ms: f64,
    launches_timed: u64,
    /// The events of the launch not yet read.
    pending: Option<crate::gpu::Timer>,
}

/// With `PATHTRACK_RESIDENT_TRACE`, every this many launches one iteration is timed part by
/// part.
const PROFILE_EVERY: u64 = 8;

/// Start points loaded per upload: the page-locked and device staging memory of a load is
/// that of this many (`--batch 1000000` loads a million at once).
const LOAD_CHUNK: usize = 65_536;

/// Launch ranges are multiples of this (fewer graph captures as the used range moves).
const GRAPH_GRAIN: usize = 1024;

/// Index of the status bytes among [`Slots`]'s buffers (the order of `RtState`).
const STATUS_BUF: usize = 8;

/// Double2 words of one record of `rt_gather`.
fn record_len(nn: usize) -> usize {
    nn * (2 + SAMPLES) + 8
}

impl CudaBackend {
    /// The slots' kernels write and read the directions in the shared `Buffers`, whose
    /// addresses `state` (and a captured graph) hold since `begin`. A round-by-round call
    /// in between may have replaced those buffers (`ensure`): make them hold `cap` points
    /// again, point `state` at them and drop a graph captured with the old addresses.
    fn refresh_slot_buffers(&mut self, cap: usize) -> Result<()> {
        if self.ensure(cap, false)? < cap {
            return Err(Error::Cuda(format!(
                "device memory for the directions of {cap} resident slots is no longer available"
            )));
        }
        let b = self
            .bufs
            .as_ref()
            .ok_or_else(|| Error::Internal("CUDA buffers not allocated".into()))?;
        let now = buffer_addresses(b);
        let s = self
            .slots
            .as_mut()
            .ok_or_else(|| Error::Internal("resident slots used before begin".into()))?;
        if s.bufs_at != now {
            (s.state.euler, s.state.newton, s.state.cond_out) = (now[0], now[1], now[2]);
            s.graph = None;
            s.bufs_at = now;
        }
        Ok(())
    }

    /// Switches resident tracking on or off (on by default): with it, `track_all` keeps
    /// whole paths on the device; without it, every round goes through `directions`.
    pub fn set_resident(&mut self, on: bool) {
        self.resident_on = on;
        if !on {
            self.slots = None;
        }
    }

    /// Device bytes per slot: the state, the evaluation scratch and the staging.
    fn slot_bytes(&self) -> Result<usize> {
        let l = self.loaded()?;
        let (nn, m) = (l.nn, l.m);
        // y, yc, k (4), yeval, entry y, samples; τ_eval; sc; ct; 5 bytes; sample τ and κ;
        // lifts
        let state =
            16 * nn * (8 + SAMPLES) + 16 + 8 * SC_FIELDS + 4 * CT_FIELDS + 5 + 16 * SAMPLES + 8 * m;
        // a record read back, or a start point loaded
        let stage = 4 + (16 * record_len(nn)).max(16 * nn + 17 + 8 * m);
        Ok(state + stage + l.bytes_per_point())
    }

    fn stage(&mut self, idx_bytes: usize, data_bytes: usize) -> Result<()> {
        let dev = &self.dev;
        let s = self.slots.as_mut().expect("slots allocated");
        if s.stage_idx.as_ref().is_none_or(|b| b.bytes < idx_bytes) {
            dev.sync()?;
            s.stage_idx = Some(dev.alloc::<u8>(idx_bytes)?);
        }
        if s.stage_data.as_ref().is_none_or(|b| b.bytes < data_bytes) {
            dev.sync()?;
            s.stage_data = Some(dev.alloc::<u8>(data_bytes)?);
        }
        Ok(())
    }

    fn alloc_slots(&mut self, cap: usize, tracker: &TrackerOptions) -> Result<Slots> {
        let l = self.loaded()?;
        let nn = l.nn;
        let d = &self.dev;
        let c16 = |len: usize| d.alloc::<C64>(len);
        let bufs = vec![
            c16(cap * nn)?,                   // y
            c16(cap * nn)?,                   // yc
            c16(4 * cap * nn)?,               // k
            c16(cap * nn)?,                   // yeval
            c16(cap)?,                        // taueval
            d.alloc::<u8>(cap)?,              // logm
            d.alloc::<f64>(SC_FIELDS * cap)?, // sc
            d.alloc::<u32>(CT_FIELDS * cap)?, // ct
            d.alloc::<u8>(cap)?,              // status
            d.alloc::<u8>(cap)?,              // entered
            c16(cap * nn)?,                   // entry_y
            d.alloc::<f64>(SAMPLES * cap)?,   // stau
            c16(SAMPLES * cap * nn)?,         // sy
            d.alloc::<u8>(cap)?,              // nsamp
            d.alloc::<u8>(cap)?,              // ddm
            d.alloc::<f64>(SAMPLES * cap)?,   // scond
        ];
        d.fill_bytes(&bufs[STATUS_BUF], SLOT_EMPTY)?;
        let b = self
            .bufs
            .as_ref()
            .ok_or_else(|| Error::Internal("CUDA buffers not allocated".into()))?;
        let p = |i: usize| bufs[i].ptr;
        let state = RtState {
            y: p(0),
            yc: p(1),
            k: p(2),
            yeval: p(3),
            taueval: p(4),
            logm: p(5),
            sc: p(6),
            ct: p(7),
            status: p(STATUS_BUF),
            entered: p(9),
            entry_y: p(10),
            stau: p(11),
            sy: p(12),
            nsamp: p(13),
            ddm: p(14),
            scond: p(15),
            euler: b.euler.ptr,
            newton: b.newton.ptr,
            cond_out: b.cond.ptr,
            lifts: 0,
            cap: cap as i64,
        };
        Ok(Slots {
            cap,
            hi: 0,
            state,
            opts: RtOpts::new(tracker),
            _bufs: bufs,
            lifts: None,
            stage_idx: None,
            stage_data: None,
            pinned: None,
            graph: None,
            graph_ok: true,
            active: Vec::new(),
            profile: std::env::var_os("PATHTRACK_RESIDENT_TRACE").map(|_| Profile::default()),
            bufs_at: buffer_addresses(b),
        })
    }

    /// Creates the slots' lift rows, every used slot's row the homotopy's lifts.
    fn ensure_lifts(&mut self) -> Result<()> {
        let (cap, hi) = {
            let s = self.slots.as_ref().expect("slots allocated");
            if s.lifts.is_some() {
                return Ok(());
            }
            (s.cap, s.hi)
        };
        let l = self.loaded()?;
        let m = l.m;
        let default = &l.layout.a_hat[l.nn * m..];
        let buf = self.dev.alloc::<f64>(cap * m)?;
        if hi > 0 {
            let rows: Vec<f64> = (0..hi).flat_map(|_| default.iter().copied()).collect();
            self.dev.htod(&buf, &rows)?;
        }
        let s = self.slots.as_mut().expect("slots allocated");
        s.state.lifts = buf.ptr;
        s.lifts = Some(buf);
        s.graph = None; // it holds the old state by value
        Ok(())
    }
}

impl CudaBackend {
    /// Queues `iterations` iterations over the first `p` slots: evaluation, direction
    /// solve, `rt_advance`.
    fn queue_iterations(&self, p: usize, iterations: u32) -> Result<()> {
        for _ in 0..iterations {
            for part in [Part::Eval, Part::Solve, Part::Advance] {
                self.queue_part(p, part)?;
            }
        }
        Ok(())
    }

    /// Queues one part of an iteration over the first `p` slots.
    fn queue_part(&self, p: usize, part: Part) -> Result<()> {
        let s = self
            .slots
            .as_ref()
            .ok_or_else(|| Error::Internal("resident slots used before begin".into()))?;
        let b = self
            .bufs
            .as_ref()
            .ok_or_else(|| Error::Internal("CUDA buffers not allocated".into()))?;
        let (state, opts) = (s.state, s.opts);
        match part {
            Part::Eval => {
                let pk = PointKinds {
                    logm: state.logm,
                    lifts: state.lifts,
                };
                self.queue_eval(
                    p,
                    state.yeval,
                    state.taueval,
                    pk,
                    b.z.ptr,
                    b.e.ptr,
                    b.jac.ptr,
                )?;
                if opts.dd_residuals == 0 {
                    return Ok(());
                }
                let phase = state.ct + 4 * (2 * state.cap as u64); // ct[RT_PHASE = 2]
                let modes = DdModes {
                    status: state.status,
                    ddm: state.ddm,
                    phase,
                };
                self.queue_dd_residual(p, state.yeval, state.taueval, pk, modes, b.z.ptr, b.jac.ptr)
            }
            Part::Solve => self.queue_solve(
                p,
                SolveOperands {
                    jac: b.jac.ptr,
                    y: state.yeval,
                    logm: state.logm,
                    euler: b.euler.ptr,
                    newton: b.newton.ptr,
                    cond: b.cond.ptr,
                },
            ),
            Part::Advance => {
                let l = self.loaded()?;
                let pi = i32_of(p)?;
                unsafe {
                    self.dev
                        .stream
                        .launch_builder(&l.k.rt_advance)
                        .arg(&state)
                        .arg(&opts)
                        .arg(&pi)
                        .launch(grid1(p))
                }
                .map(|_| ())
                .map_err(|e| cuda_err("cuLaunchKernel(rt_advance)", e))
            }
        }
    }

    /// One iteration with each part timed by CUDA events (`PATHTRACK_RESIDENT_TRACE`):
    /// adds the milliseconds to the slots' profile.
    fn profile_iteration(&mut self, p: usize) -> Result<()> {
        let t = crate::gpu::Timer::new(&self.dev)?;
        let mut ms = [0.0; 3];
        for (k, part) in [Part::Eval, Part::Solve, Part::Advance]
            .into_iter()
            .enumerate()
        {
            t.start(&self.dev)?;
            self.queue_part(p, part)?;
            ms[k] = t.stop_ms(&self.dev)?;
        }
        let s = self.slots.as_mut().expect("slots allocated");
        if let Some(pr) = s.profile.as_mut() {
            for (acc, v) in pr.ms.iter_mut().zip(ms) {
                *acc += v;
            }
            pr.samples += 1;
            pr.points += p as u64;
        }
        Ok(())
    }

    /// [`ResidentTracker::load`] of at most [`LOAD_CHUNK`] start points.
    fn load_chunk(&mut self, starts: &[(usize, StartPoint)]) -> Result<()> {
        let (nn, m) = {
            let l = self.loaded()?;
            (l.nn, l.m)
        };
        if starts.iter().any(|(_, s)| s.lifts.is_some()) {
            self.ensure_lifts()?;
        }
        let with_lifts = self.slots.as_ref().is_some_and(|s| s.lifts.is_some());
        let q = starts.len();
        let mut idx = Vec::with_capacity(q);
        let mut ys: Vec<C64> = Vec::with_capacity(q * nn);
        let mut taus = Vec::with_capacity(q);
        let mut logs = Vec::with_capacity(q);
        let mut steps = Vec::with_capacity(2 * q);
        let mut lifts: Vec<f64> = Vec::with_capacity(if with_lifts { q * m } else { 0 });
        {
            let s = self
                .slots
                .as_mut()
                .ok_or_else(|| Error::Internal("resident slots used before begin".into()))?;
            for (slot, p) in starts {
                if p.y.len() != nn || *slot >= s.cap {
                    return Err(Error::Internal(format!(
                        "start point of path {} does not fit slot {slot}",
                        p.path
                    )));
                }
                idx.push(*slot as i32);
                ys.extend_from_slice(&p.y);
                taus.push(p.tau);
                logs.push(p.log as u8);
                steps.extend_from_slice(&[p.steps.0, p.steps.1]);
                s.hi = s.hi.max(slot + 1);
            }
        }
        if with_lifts {
            let l = self.loaded()?;
            let default = &l.layout.a_hat[nn * m..];
            for (_, p) in starts {
                lifts.extend_from_slice(p.lifts.as_deref().unwrap_or(default));
            }
        }
        // staging data: y | τ | steps | lifts | log flags (8-byte aligned sections), then
        // the slot indices, written to page-locked memory and copied from there
        let (o_tau, o_steps) = (16 * q * nn, 16 * q * nn + 8 * q);
        let o_lifts = o_steps + 8 * q;
        let o_log = o_lifts + 8 * lifts.len();
        let data_bytes = o_log + q;
        let o_idx = data_bytes.next_multiple_of(8);
        self.stage(4 * q, data_bytes)?;
        let need = o_idx + 4 * q;
        let dev = &self.dev;
        let s = self.slots.as_mut().expect("slots allocated");
        if s.pinned.as_ref().is_none_or(|p| p.bytes < need) {
            s.pinned = None;
            s.pinned = Some(dev.alloc_pinned(need + need / 4)?);
        }
        let pinned = s.pinned.as_mut().expect("allocated above");
        {
            let buf = pinned.bytes_mut()?;
            put_bytes(buf, 0, &ys);
            put_bytes(buf, o_tau, &taus);
            put_bytes(buf, o_steps, &steps);
            put_bytes(buf, o_lifts, &lifts);
            put_bytes(buf, o_log, &logs);
            put_bytes(buf, o_idx, &idx);
        }
        let (si, sd) = (
            s.stage_idx.as_ref().unwrap(),
            s.stage_data.as_ref().unwrap(),
        );
        dev.htod_pinned(pinned, &[(sd, 0, 0, data_bytes), (si, 0, o_idx, 4 * q)])?;
        let (si_ptr, sd_ptr) = (si.ptr, sd.ptr);
        let at = |o: usize| sd_ptr + o as u64;
        let s = self.slots.as_ref().expect("slots allocated");
        let l = self.loaded()?;
        let (state, opts) = (s.state, s.opts);
        let (p_idx, p_y, p_tau, p_log, p_steps) =
            (si_ptr, at(0), at(o_tau), at(o_log), at(o_steps));
        let p_lifts = if with_lifts { at(o_lifts) } else { 0 };
        let qi = i32_of(q)?;
        unsafe {
            dev.stream
                .launch_builder(&l.k.rt_load)
                .arg(&state)
                .arg(&opts)
                .arg(&p_idx)
                .arg(&p_y)
                .arg(&p_tau)
                .arg(&p_log)
                .arg(&p_steps)
                .arg(&p_lifts)
                .arg(&qi)
                .launch(grid1(q))
        }
        .map_err(|e| cuda_err("cuLaunchKernel(rt_load)", e))?;
        Ok(())
    }

    /// Captures [`Self::queue_iterations`] as a CUDA graph (one launch replays them all).
    fn capture_iterations(&self, p: usize, iterations: u32) -> Result<cudarc::driver::CudaGraph> {
        self.dev
            .capture_graph(|| self.queue_iterations(p, iterations))
    }
}

impl ResidentTracker for CudaBackend {
    fn begin(&mut self, opts: &TrackerOptions) -> Result<usize> {
        self.slots = None;
        self.dev.bind()?;
        let (free, _) = self.dev.mem_info()?;
        let per = self.slot_bytes()?;
        let mut cap = ((free as f64 * 0.6) as usize / per).clamp(1, 1 << 22);
        cap = cap.min(opts.batch.max(1));
        if self.chunk_limit > 0 {
            cap = cap.min(self.chunk_limit);
        }
        loop {
            let got = self.ensure(cap, false)?;
            match self.alloc_slots(got, opts) {
                Ok(s) => {
                    self.slots = Some(s);
                    return Ok(got);
                }
                Err(Error::DeviceMemory(_)) if got > 1 => {
                    cap = got / 2;
                    self.bufs = None;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn load(&mut self, starts: &[(usize, StartPoint)]) -> Result<()> {
        self.dev.bind()?;
        for chunk in starts.chunks(LOAD_CHUNK) {
            self.load_chunk(chunk)?;
        }
        Ok(())
    }
    fn launch(&mut self, iterations: u32) -> Result<()> {
        self.dev.bind()?;
        let (hi, cap) = {
            let s = self
                .slots
                .as_ref()
                .ok_or_else(|| Error::Internal("resident slots used before begin".into()))?;
            (s.hi, s.cap)
        };
        if hi == 0 {
            return Ok(());
        }
        self.refresh_slot_buffers(cap)?;
        // The launch range, rounded up so that one captured graph serves many collections
        // (slots past `hi` are empty: rt_advance skips them).
        let p = hi.next_multiple_of(GRAPH_GRAIN).min(cap);
        let sample = self
            .slots
            .as_mut()
            .and_then(|s| s.profile.as_mut())
            .is_some_and(|pr| {
                pr.launches += 1;
                pr.launches % PROFILE_EVERY == 1
            });
        if sample {
            self.profile_iteration(p)?;
        }
        let key = (p, iterations);
        let s = self.slots.as_mut().expect("checked above");
        if s.graph.as_ref().is_some_and(|(k, _)| *k != key) {
            s.graph = None;
        }
        if s.graph.is_none() && s.graph_ok {
            let t0 = std::time::Instant::now();
            let captured = self.capture_iterations(p, iterations);
            let s = self.slots.as_mut().expect("checked above");
            match captured {
                Ok(g) => s.graph = Some((key, Graph(g))),
                Err(_) => s.graph_ok = false,
            }
            if let Some(pr) = s.profile.as_mut() {
                pr.captures += 1;
                pr.capture_s += t0.elapsed().as_secs_f64();
            }
        }
        let timer = match self.slots.as_ref().and_then(|s| s.profile.as_ref()) {
            Some(_) => {
                let t = crate::gpu::Timer::new(&self.dev)?;
                t.start(&self.dev)?;
                Some(t)
            }
            None => None,
        };
        match &self.slots.as_ref().expect("checked above").graph {
            Some((_, g)) => g.0.launch().map_err(|e| cuda_err("cuGraphLaunch", e))?,
            None => self.queue_iterations(p, iterations)?,
        }
        if let Some(t) = timer {
            t.record_stop(&self.dev)?;
            if let Some(pr) = self.slots.as_mut().and_then(|s| s.profile.as_mut()) {
                pr.pending = Some(t);
            }
        }
        Ok(())
    }

    fn collect(&mut self, evict: bool) -> Result<Vec<(usize, SlotExit)>> {
        self.dev.bind()?;
        let (hi, state) = {
            let s = self
                .slots
                .as_ref()
                .ok_or_else(|| Error::Internal("resident slots used before begin".into()))?;
            (s.hi, s.state)
        };
        if hi == 0 {
            return Ok(Vec::new());
        }
        let nn = self.loaded()?.nn;
        let mut status = vec![0u8; hi];
        let sbuf = &self.slots.as_ref().unwrap()._bufs[STATUS_BUF];
        let t0 = std::time::Instant::now();
        self.dev.dtoh(&mut status, sbuf)?;
        let t1 = std::time::Instant::now();
        if let Some(pr) = self.slots.as_mut().unwrap().profile.as_mut() {
            pr.wait_s += (t1 - t0).as_secs_f64();
            if let Some(t) = pr.pending.take() {
                pr.launched_ms += t.elapsed_ms()?;
                pr.launches_timed += 1;
            }
        }
        let leaving: Vec<i32> = (0..hi)
            .filter(|&i| status[i] > SLOT_ACTIVE || (evict && status[i] == SLOT_ACTIVE))
            .map(|i| i as i32)
            .collect();
        let active: Vec<usize> = (0..hi)
            .filter(|&i| status[i] == SLOT_ACTIVE && !evict)
            .collect();
        let still = active.last().copied();
        self.slots.as_mut().unwrap().active = active;
        let q = leaving.len();
        if q == 0 {
            return Ok(Vec::new());
        }
        let t_scan = std::time::Instant::now();
        let rec = record_len(nn);
        self.stage(4 * q, 16 * q * rec)?;
        let s = self.slots.as_ref().unwrap();
        let (si, sd) = (
            s.stage_idx.as_ref().unwrap(),
            s.stage_data.as_ref().unwrap(),
        );
        self.dev.htod(si, &leaving)?;
        let l = self.loaded()?;
        let (p_idx, p_out, qi) = (si.ptr, sd.ptr, i32_of(q)?);
        unsafe {
            self.dev
                .stream
                .launch_builder(&l.k.rt_gather)
                .arg(&state)
                .arg(&p_idx)
                .arg(&p_out)
                .arg(&qi)
                .launch(grid1(q))
        }
        .map_err(|e| cuda_err("cuLaunchKernel(rt_gather)", e))?;
        let t_up = std::time::Instant::now();
        let mut out = vec![C64::new(0.0, 0.0); q * rec];
        self.dev.dtoh(&mut out, sd)?;
        let t_down = std::time::Instant::now();
        let s = self.slots.as_mut().unwrap();
        s.hi = still.map_or(0, |i| i + 1);
        let tau_end = s.opts.tau_end;
        let mut exits = Vec::with_capacity(q);
        for (r, &slot) in leaving.iter().enumerate() {
            let w = &out[r * rec..(r + 1) * rec];
            let snap = snapshot(w, nn);
            if let Some(e) = snap.exit(evict, tau_end) {
                exits.push((slot as usize, e));
            }
        }
        if let Some(pr) = s.profile.as_mut() {
            pr.gather_s += t1.elapsed().as_secs_f64();
            for (acc, (a, b)) in pr.gather_parts.iter_mut().zip([
                (t1, t_scan),
                (t_scan, t_up),
                (t_up, t_down),
                (t_down, std::time::Instant::now()),
            ]) {
                *acc += (b - a).as_secs_f64();
            }
        }
        Ok(exits)
    }

    fn compact(&mut self) -> Result<Vec<(usize, usize)>> {
        let s = self
            .slots
            .as_ref()
            .ok_or_else(|| Error::Internal("resident slots used before begin".into()))?;
        let moves = compaction_moves(&s.active, s.hi, GRAPH_GRAIN);
        if moves.is_empty() {
            return Ok(moves);
        }
        let q = moves.len();
        let idx: Vec<i32> = moves
            .iter()
            .map(|m| m.0 as i32)
            .chain(moves.iter().map(|m| m.1 as i32))
            .collect();
        self.dev.bind()?;
        self.stage(8 * q, 0)?;
        let s = self.slots.as_ref().unwrap();
        let si = s.stage_idx.as_ref().unwrap();
        self.dev.htod(si, &idx)?;
        let (state, p_from, p_to, qi) = (s.state, si.ptr, si.ptr + 4 * q as u64, i32_of(q)?);
        let l = self.loaded()?;
        unsafe {
            self.dev
                .stream
                .launch_builder(&l.k.rt_move)
                .arg(&state)
                .arg(&p_from)
                .arg(&p_to)
                .arg(&qi)
                .launch(grid1(q))
        }
        .map_err(|e| cuda_err("cuLaunchKernel(rt_move)", e))?;
        let s = self.slots.as_mut().unwrap();
        s.hi = s.active.len();
        s.active = (0..s.hi).collect();
        Ok(moves)
    }

    fn profile(&self) -> Option<String> {
        let pr = self.slots.as_ref()?.profile.as_ref()?;
        let host = format!(
            "{} launches ({} timed on the device: {:.3} s); waiting for them {:.3} s, gathering \
             exits {:.3} s (status scan {:.3}, upload {:.3}, download {:.3}, decoding {:.3}), {} \
             graph captures {:.3} s",
            pr.launches,
            pr.launches_timed,
            pr.launched_ms / 1e3,
            pr.wait_s,
            pr.gather_s,
            pr.gather_parts[0],
            pr.gather_parts[1],
            pr.gather_parts[2],
            pr.gather_parts[3],
            pr.captures,
            pr.capture_s
        );
        if pr.samples == 0 {
            return Some(host);
        }
        let n = pr.samples as f64;
        let per_point = |ms: f64| 1e6 * ms / pr.points as f64;
        Some(format!(
            "{host}; {} timed iterations, mean launch range {:.0} slots: eval {:.3} ms ({:.1} ns/slot), \
             solve {:.3} ms ({:.1} ns/slot), rt_advance {:.3} ms ({:.1} ns/slot)",
            pr.samples,
            pr.points as f64 / n,
            pr.ms[0] / n,
            per_point(pr.ms[0]),
            pr.ms[1] / n,
            per_point(pr.ms[1]),
            pr.ms[2] / n,
            per_point(pr.ms[2]),
        ))
    }

    /// From `host_on_device_min()` paths on: they are evaluated and solved on this device,
    /// on a second stream while the slots iterate (`CudaBackend::directions_beside`).
    fn host_paths_on_device(&self, n: usize) -> bool {
        n >= self.host_on_device_min
    }

    fn device_directions(
        &mut self,
        pts: &crate::eval::Points<'_>,
        out: crate::backend::DirectionsOut<'_>,
    ) -> Option<Result<()>> {
        Some(self.directions_beside(pts, out))
    }

    fn host_engine(&self) -> Result<(&EvalLayout, Arc<rayon::ThreadPool>)> {
        let Some(l) = self.loaded.as_ref() else {
            return Err(Error::Internal(
                "resident slots used before set_homotopy".into(),
            ));
        };
        Ok((&l.layout, self.host.pool()))
    }
}

/// Copies `src` to byte offset `offset` of `dst`.
/// Writes the bytes of `src` (plain numbers) at byte `offset` of `buf`.
fn put_bytes<T: Copy>(buf: &mut [u8], offset: usize, src: &[T]) {
    let n = std::mem::size_of_val(src);
    // SAFETY: `T` is a plain number type here (f64, u32, i32, u8, Complex<f64>), every bit
    // pattern of its bytes is initialized, and the range is checked by the slice index.
    let bytes = unsafe { std::slice::from_raw_parts(src.as_ptr() as *const u8, n) };
    buf[offset..offset + n].copy_from_slice(bytes);
}

/// A slot's record (see `RT_REC` in kernels/track.cu) as a [`Snapshot`].
fn snapshot(w: &[C64], nn: usize) -> Snapshot {
    let m = &w[nn * (2 + SAMPLES)..];
    let status = m[4].re as u8;
    let flags = m[4].im as u32;
    let (log, entered, nsamp) = (flags & 1 == 1, (flags >> 1) & 3, (flags >> 3) as usize);
    let stau = [m[1].re, m[1].im, m[2].re, m[2].im];
    Snapshot {
        status,
        y: w[..nn].to_vec(),
        tau: m[0].re,
        cond: m[0].im,
        steps: (m[3].re as u32, m[3].im as u32),
        log,
        entry: (entered > 0).then(|| (m[5].re, w[nn..2 * nn].to_vec(), entered == 2)),
        h: m[5].im,
        samples: (0..nsamp.min(SAMPLES))
            .map(|q| (stau[q], w[(2 + q) * nn..(3 + q) * nn].to_vec()))
            .collect(),
        sample_conds: [m[6].re, m[6].im, m[7].re, m[7].im][..nsamp.min(SAMPLES)].to_vec(),
    }
}

/// The addresses of `Buffers` that resident iterations use (see `Slots::bufs_at`).
fn buffer_addresses(b: &super::Buffers) -> [u64; 6] {
    [
        b.euler.ptr,
        b.newton.ptr,
        b.cond.ptr,
        b.jac.ptr,
        b.z.ptr,
        b.e.ptr,
    ]
}
