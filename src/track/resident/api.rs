//! What a backend with resident slots offers the tracker: the [`ResidentTracker`] trait and
//! what a slot gives back ([`SlotExit`]). The tracker's loop over it is in the parent module.

use crate::backend::directions::DirectionsOut;
use crate::error::Result;
use crate::eval::{EvalLayout, Points};
use crate::track::options::TrackerOptions;
use crate::track::path::TrackCode;
use crate::track::start_point::StartPoint;
use num_complex::Complex64 as C64;
use std::sync::Arc;

/// What a slot gives back when its path leaves.
#[derive(Clone, Debug)]
pub enum SlotExit {
    /// The path is done here.
    End {
        y: Vec<C64>,
        tau: f64,
        cond: f64,
        /// (accepted, rejected)
        steps: (u32, u32),
        code: TrackCode,
        samples: Vec<(f64, Vec<C64>)>,
        checkpoint: Option<(f64, Vec<C64>)>,
    },
    /// The host tracker goes on from `(y, τ)` (log coordinates when `log`), with the
    /// slot's endgame samples, double-double checkpoint and next step size when it goes on
    /// from where the slot stopped (empty and `None` from the zone entry).
    Continue {
        y: Vec<C64>,
        tau: f64,
        log: bool,
        steps: (u32, u32),
        samples: Vec<(f64, Vec<C64>)>,
        checkpoint: Option<(f64, Vec<C64>)>,
        h: Option<f64>,
    },
}

/// A batch of resident slots (see the module's doc).
pub trait ResidentTracker {
    /// Prepares the slots for tracking with `opts` the homotopy already loaded by
    /// `Backend::set_homotopy`; returns the number of slots.
    fn begin(&mut self, opts: &TrackerOptions) -> Result<usize>;
    /// Puts start points into empty slots `(slot, start)`. Called while a launch may be
    /// running: the points take part from the next launch on, and the call should not wait
    /// for the running one.
    fn load(&mut self, starts: &[(usize, StartPoint)]) -> Result<()>;
    /// Runs `iterations` iterations on every active slot (may return before they are done).
    fn launch(&mut self, iterations: u32) -> Result<()>;
    /// Waits for the iterations launched; returns the slots whose paths left, in slot
    /// order, and empties them. With `evict`, every active slot leaves too.
    fn collect(&mut self, evict: bool) -> Result<Vec<(usize, SlotExit)>>;
    /// The homotopy's layout and the host's pool: the host's own (endgame) paths are stepped
    /// on the host's cores in independent groups (`HOST_GROUP`, `step_in_groups`).
    fn host_engine(&self) -> Result<(&EvalLayout, Arc<rayon::ThreadPool>)>;
    /// Moves active paths into lower empty slots when few are left (so that iterations
    /// cover fewer slots); returns the moves `(from, to)`. Called after a collection once
    /// no start points are left.
    fn compact(&mut self) -> Result<Vec<(usize, usize)>>;
    /// Where the device time of an iteration goes, when sampled (`PATHTRACK_RESIDENT_TRACE`).
    fn profile(&self) -> Option<String> {
        None
    }
    /// Whether the host's own paths (endgames, Cauchy loops, double-double tails), `n` of
    /// them, get their directions from [`Self::device_directions`] this loop instead of the
    /// host's cores (`step_in_groups`); a device says yes from `host_on_device_min` on.
    fn host_paths_on_device(&self, _n: usize) -> bool {
        false
    }
    /// The directions of the host's paths `pts`, computed where the slots live, with the
    /// residuals that the host would take in double-double in double-double (complex τ of
    /// Cauchy loops included); `None` where this tracker has no such route.
    fn device_directions(
        &mut self,
        _pts: &Points<'_>,
        _out: DirectionsOut<'_>,
    ) -> Option<Result<()>> {
        None
    }
}
