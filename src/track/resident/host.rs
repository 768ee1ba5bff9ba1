//! Resident tracking on the CPU: the slots of [`super::slot::Slot`] with the CPU backend's
//! directions. It is the reference for the device (`backend::cuda::resident`), runs the
//! orchestration of [`super::track_resident`] without a GPU (tests), and is selectable as
//! `--backend cpu --resident` for comparisons.

use super::slot::Slot;
use super::{ResidentTracker, SlotExit};
use crate::backend::cpu::CpuBackend;
use crate::backend::{Backend, DirectionsOut};
use crate::error::{Error, Result};
use crate::eval::{EvalLayout, Points};
use crate::homotopy::Homotopy;
use crate::track::{StartPoint, TrackerOptions};
use num_complex::Complex64 as C64;
use std::sync::Arc;

/// The CPU backend with resident slots.
pub struct HostResident {
    cpu: CpuBackend,
    /// The homotopy's own lifts (slots without lifts of their own).
    default_lifts: Vec<f64>,
    nh: usize,
    slots: Vec<Option<Slot>>,
    lifts: Vec<Option<Arc<[f64]>>>,
    opts: TrackerOptions,
    /// Slots may enter double-double mode (`slot::Slot::residual`); off with
    /// `PATHTRACK_RESIDENT_DD=0`, the slots hand such paths to the host tracker instead.
    dd_residuals: bool,
    /// The host's own paths are stepped in rounds of all of them through the CPU backend's
    /// `directions` ([`ResidentTracker::device_directions`]), as a device does, instead of
    /// in independent groups: the reference of that route ([`Self::set_host_paths_batched`]).
    batched: bool,
    /// Rounds of host paths stepped through [`ResidentTracker::device_directions`].
    batched_rounds: u64,
}

impl HostResident {
    /// `threads = 0` uses all cores.
    pub fn new(threads: usize) -> Result<HostResident> {
        Ok(HostResident {
            cpu: CpuBackend::new(threads)?,
            default_lifts: Vec::new(),
            nh: 0,
            slots: Vec::new(),
            lifts: Vec::new(),
            opts: TrackerOptions::default(),
            dd_residuals: super::dd_residuals_enabled(),
            batched: false,
            batched_rounds: 0,
        })
    }

    /// Steps the host's own paths as a device would: every round of them through one call
    /// of the CPU backend's `directions` (off by default: in groups on the host's cores).
    pub fn set_host_paths_batched(&mut self, on: bool) {
        self.batched = on;
    }

    /// Rounds of host paths stepped through one `directions` call each so far.
    pub fn batched_rounds(&self) -> u64 {
        self.batched_rounds
    }

    /// One iteration of every active slot: one round of directions, then each slot's step.
    fn iterate(&mut self) -> Result<()> {
        let (nh, m) = (self.nh, self.default_lifts.len());
        let active: Vec<usize> = (0..self.slots.len())
            .filter(|&i| {
                self.slots[i]
                    .as_ref()
                    .is_some_and(|s| s.status == super::slot::SLOT_ACTIVE)
            })
            .collect();
        let p = active.len();
        if p == 0 {
            return Ok(());
        }
        let (mut ys, mut taus, mut logs) = (Vec::with_capacity(p * nh), Vec::new(), Vec::new());
        let mut residual = Vec::with_capacity(p);
        let own = active.iter().any(|&i| self.lifts[i].is_some());
        let mut lifts = Vec::with_capacity(if own { p * m } else { 0 });
        for &i in &active {
            let s = self.slots[i].as_ref().expect("active slot");
            ys.extend_from_slice(&s.eval_y);
            taus.push(C64::new(s.eval_tau, 0.0));
            logs.push(s.log);
            residual.push(s.residual());
            if own {
                lifts.extend_from_slice(self.lifts[i].as_deref().unwrap_or(&self.default_lifts));
            }
        }
        // As on the device: double, double-double where the slot asks for it.
        let pts = Points {
            ys: &ys,
            taus: &taus,
            log_mode: Some(&logs),
            lifts: own.then_some(&lifts[..]),
            residual: Some(&residual),
        };
        let zero = C64::new(0.0, 0.0);
        let (mut eu, mut ne, mut co) = (vec![zero; p * nh], vec![zero; p * nh], vec![0.0; p]);
        self.cpu.directions(
            &pts,
            DirectionsOut {
                euler: &mut eu,
                newton: &mut ne,
                cond: &mut co,
            },
        )?;
        for (r, &i) in active.iter().enumerate() {
            let s = self.slots[i].as_mut().expect("active slot");
            s.advance(
                &eu[r * nh..(r + 1) * nh],
                &ne[r * nh..(r + 1) * nh],
                co[r],
                &self.opts,
            );
        }
        Ok(())
    }
}

impl Backend for HostResident {
    fn name(&self) -> String {
        "cpu-resident".into()
    }

    fn set_homotopy(&mut self, h: &Homotopy) -> Result<()> {
        self.default_lifts = h.lifts().to_vec();
        self.nh = h.nh();
        self.cpu.set_homotopy(h)
    }

    fn extended_jacobians(&mut self, pts: &Points<'_>, out: &mut [C64]) -> Result<()> {
        self.cpu.extended_jacobians(pts, out)
    }

    fn directions(&mut self, pts: &Points<'_>, out: DirectionsOut<'_>) -> Result<()> {
        self.cpu.directions(pts, out)
    }

    fn resident(&mut self) -> Option<&mut dyn ResidentTracker> {
        Some(self)
    }
}

impl ResidentTracker for HostResident {
    fn begin(&mut self, opts: &TrackerOptions) -> Result<usize> {
        if self.nh == 0 {
            return Err(Error::Internal(
                "resident slots used before set_homotopy".into(),
            ));
        }
        self.opts = opts.clone();
        let cap = opts.batch.max(1);
        self.slots = vec![None; cap];
        self.lifts = vec![None; cap];
        Ok(cap)
    }

    fn load(&mut self, starts: &[(usize, StartPoint)]) -> Result<()> {
        for (slot, s) in starts {
            if s.y.len() != self.nh || *slot >= self.slots.len() {
                return Err(Error::Internal(format!(
                    "start point of path {} does not fit slot {slot}",
                    s.path
                )));
            }
            self.slots[*slot] = Some(Slot::new(
                &s.y,
                s.tau,
                s.log,
                s.steps,
                self.dd_residuals,
                &self.opts,
            ));
            self.lifts[*slot] = s.lifts.clone();
        }
        Ok(())
    }

    fn launch(&mut self, iterations: u32) -> Result<()> {
        for _ in 0..iterations {
            self.iterate()?;
        }
        Ok(())
    }

    fn collect(&mut self, evict: bool) -> Result<Vec<(usize, SlotExit)>> {
        let mut out = Vec::new();
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if let Some(exit) = slot.as_ref().and_then(|s| s.exit(evict, self.opts.tau_end)) {
                out.push((i, exit));
                *slot = None;
                self.lifts[i] = None;
            }
        }
        Ok(out)
    }

    fn host_paths_on_device(&self, _n: usize) -> bool {
        self.batched
    }

    fn device_directions(
        &mut self,
        pts: &Points<'_>,
        out: DirectionsOut<'_>,
    ) -> Option<Result<()>> {
        self.batched_rounds += self.batched as u64;
        self.batched.then(|| self.cpu.directions(pts, out))
    }

    fn host_engine(&self) -> Result<(&EvalLayout, Arc<rayon::ThreadPool>)> {
        self.cpu
            .host_engine()
            .ok_or_else(|| Error::Internal("resident slots used before set_homotopy".into()))
    }

    /// The device's policy (no grain: every compaction is exercised here).
    fn compact(&mut self) -> Result<Vec<(usize, usize)>> {
        let active: Vec<usize> = (0..self.slots.len())
            .filter(|&i| self.slots[i].is_some())
            .collect();
        let hi = active.last().map_or(0, |&i| i + 1);
        let moves = super::compaction_moves(&active, hi, 0);
        for &(from, to) in &moves {
            self.slots.swap(from, to);
            self.lifts.swap(from, to);
        }
        Ok(moves)
    }
}
