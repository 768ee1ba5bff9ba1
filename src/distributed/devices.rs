//! Every GPU of a host in one process (`solve --devices`): one worker thread per device,
//! each with its own backend, tracks the first pass of the batches of paths that the caller's
//! thread hands out from one queue ([`Queue`]), the next batch to whichever device finishes
//! its previous one first, so that a device held up by slow paths takes fewer batches. The
//! caller's thread passes every endpoint to the observer as it comes (the `-o` file, the
//! progress), then runs the recovery rounds over all endpoints on the first device, and
//! classifies, clusters and summarizes once, as a run on one device does
//! ([`crate::solver::plan`]: the gathered endpoints are the plan's `done`).
//!
//! This is the master–worker scheme of [`super`] with threads for ranks: a worker's
//! [`PathFeed`] sends its last batch's endpoints and asks for the next batch, and the solver's
//! first pass tracks each batch it is given. Each worker builds the start system itself (the
//! same on every device: it depends on the seed only). With `--backend cpu` the workers are
//! CPU backends, each with its share of the threads: the same code path, for tests and
//! comparisons.

use super::{same_start_system, sorted_once, Queue};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::post::Endpoint;
use crate::report::progress::Phase;
use crate::report::usage::Usage;
use crate::report::{DeviceLoad, Summary};
use crate::solver::plan::{Feed, PathFeed, Plan};
use crate::solver::{solve, Observer, SolveOptions};
use crate::system::System;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The devices `--devices` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceList {
    /// Every GPU present.
    All,
    /// The first `n` devices (GPUs 0 … n−1), or `n` CPU workers.
    Count(usize),
    /// These GPUs (two or more ordinals, each once).
    Ordinals(Vec<usize>),
}

impl DeviceList {
    /// Reads `all`, a count `N ≥ 1`, or a list of GPU ordinals `I,J,…` without repeats.
    pub fn parse(s: &str) -> Result<DeviceList> {
        let bad = |why: String| {
            Error::Usage(format!(
                "--devices {s}: {why}; write all, a count such as 2, or GPU numbers such as 0,1"
            ))
        };
        let t = s.trim();
        if t == "all" {
            return Ok(DeviceList::All);
        }
        if !t.contains(',') {
            return match t.parse::<usize>() {
                Ok(0) => Err(bad("the count must be at least 1".into())),
                Ok(n) => Ok(DeviceList::Count(n)),
                Err(_) => Err(bad(format!("{t:?} is not a number"))),
            };
        }
        let mut ids = Vec::new();
        for part in t.split(',') {
            let id: usize = part
                .trim()
                .parse()
                .map_err(|_| bad(format!("{:?} is not a GPU number", part.trim())))?;
            if ids.contains(&id) {
                return Err(bad(format!("GPU {id} is named twice")));
            }
            ids.push(id);
        }
        Ok(DeviceList::Ordinals(ids))
    }
}

/// One worker of a run over several devices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Worker {
    /// "cuda 1", "cpu 0" (the summary's `phases.devices`).
    pub name: String,
    /// The GPU's ordinal (the CPU: the worker's number).
    pub ordinal: usize,
    /// Host threads of its backend and of the refinement of its endpoints.
    pub threads: usize,
}

/// The workers of `list`: GPUs when `gpu` (checked against the GPUs present, an
/// [`Error::Cuda`] when there are none), else CPU backends (a count only). The host's
/// `threads` (0: all cores) are shared evenly among them, at least one each.
pub fn workers(list: &DeviceList, gpu: bool, threads: usize) -> Result<Vec<Worker>> {
    let ordinals: Vec<usize> = if gpu {
        let present = cuda_device_count()?;
        let ids = match list {
            DeviceList::All => (0..present).collect(),
            DeviceList::Count(n) => (0..*n).collect(),
            DeviceList::Ordinals(ids) => ids.clone(),
        };
        if let Some(id) = ids.iter().find(|&&i| i >= present) {
            return Err(Error::Usage(format!(
                "--devices: GPU {id} asked for, but {present} CUDA device(s) are present \
                 (numbered from 0)"
            )));
        }
        ids
    } else {
        match list {
            DeviceList::Count(n) => (0..*n).collect(),
            _ => {
                return Err(Error::Usage(
                    "--devices with --backend cpu takes a count of workers, e.g. --devices 3 \
                     (all and GPU numbers name GPUs: --backend cuda)"
                        .into(),
                ))
            }
        }
    };
    let total = if threads == 0 {
        crate::cli::resources::cores()
    } else {
        threads
    };
    let n = ordinals.len();
    Ok(ordinals
        .into_iter()
        .enumerate()
        .map(|(k, ordinal)| Worker {
            name: format!("{} {ordinal}", if gpu { "cuda" } else { "cpu" }),
            ordinal,
            threads: (total / n + usize::from(k < total % n)).max(1),
        })
        .collect())
}

/// The number of CUDA devices; an [`Error::Cuda`] without a driver or a device.
pub fn cuda_device_count() -> Result<usize> {
    crate::gpu::device::probe_libraries()?;
    crate::gpu::guarded("counting the CUDA devices", || {
        use cudarc::driver::result as dr;
        dr::init().map_err(|e| crate::gpu::cuda_err("cuInit", e))?;
        let n = dr::device::get_count().map_err(|e| crate::gpu::cuda_err("cuDeviceGetCount", e))?;
        if n <= 0 {
            return Err(Error::Cuda("no CUDA device present".into()));
        }
        Ok(n as usize)
    })
}

/// A worker's message to the caller's thread.
enum Message {
    /// Worker `w`'s start system has `paths` paths; `ends` are its last batch's endpoints;
    /// it asks for the next batch.
    Ask {
        w: usize,
        paths: u64,
        ends: Vec<Endpoint>,
    },
    /// Worker `w` stopped on an error (its thread returns it).
    Failed { w: usize },
}

/// What a worker measured of its share.
struct Clock {
    started: Instant,
    batch_started: Option<Instant>,
    load: DeviceLoad,
}

/// A worker's side: collects the endpoints of its batch, and asks for the next one.
struct DeviceFeed {
    w: usize,
    to_master: Sender<Message>,
    from_master: Mutex<Receiver<Option<Vec<u64>>>>,
    ends: Mutex<Vec<Endpoint>>,
    clock: Mutex<Clock>,
}

fn stopped() -> Error {
    Error::Internal("the run over several devices stopped".into())
}

impl PathFeed for DeviceFeed {
    fn next(&self, paths: u128) -> Result<Option<Vec<u64>>> {
        {
            let mut c = self.clock.lock().expect("clock");
            let now = Instant::now();
            match c.batch_started.take() {
                Some(t) => c.load.busy_seconds += (now - t).as_secs_f64(),
                None => c.load.setup_seconds = (now - c.started).as_secs_f64(),
            }
        }
        let ends = std::mem::take(&mut *self.ends.lock().expect("ends"));
        let ask = Message::Ask {
            w: self.w,
            paths: paths as u64,
            ends,
        };
        self.to_master.send(ask).map_err(|_| stopped())?;
        let batch = self
            .from_master
            .lock()
            .expect("inbox")
            .recv()
            .map_err(|_| stopped())?;
        if let Some(b) = &batch {
            let mut c = self.clock.lock().expect("clock");
            c.batch_started = Some(Instant::now());
            c.load.paths += b.len() as u64;
            c.load.batches += 1;
        }
        Ok(batch)
    }
}

/// Passes the recovery solve's endpoints and recovery rounds on; its start-system and
/// first-pass phases (of no path: every endpoint is known) are the workers' and were
/// reported.
struct RecoveryOnly<'o>(&'o mut dyn Observer);

impl Observer for RecoveryOnly<'_> {
    fn endpoint(&mut self, e: &Endpoint) -> Result<()> {
        self.0.endpoint(e)
    }
    fn phase(&mut self, p: Phase) {
        if let Phase::Recovery { .. } = p {
            self.0.phase(p)
        }
    }
}

/// Least paths per batch of CPU workers (with `--batch` smaller, `--batch`): as under MPI.
pub const CPU_MIN_BATCH: u64 = super::MIN_BATCH;

/// Least paths per batch on `gpu`s or CPU workers that track `batch` paths at once: on a
/// GPU a batch fills the device's slots (a smaller one leaves them empty); on the CPU,
/// [`CPU_MIN_BATCH`] or `batch` when smaller.
pub fn min_batch(gpu: bool, batch: usize) -> u64 {
    if gpu {
        batch as u64
    } else {
        (batch as u64).min(CPU_MIN_BATCH)
    }
}

/// Solves `system` over `workers`, one thread and one backend each: `first` is worker 0's
/// backend, `make` opens the others (on their own threads); batches of at least
/// `min_batch` paths ([`min_batch`]). The first pass reports every endpoint to `obs` as
/// it comes (in the order batches finish), the recovery rounds then run on worker 0's
/// backend, which is returned with the summary of the whole run. The summary is that of
/// one device with the same options (`opts.plan` too: a resumed run or a shard hands out
/// its own paths only); `phases.devices` holds each worker's share.
pub fn solve_on_devices(
    system: &System,
    opts: &SolveOptions,
    workers: &[Worker],
    min_batch: u64,
    first: Box<dyn Backend>,
    make: &(dyn Fn(&Worker) -> Result<Box<dyn Backend>> + Sync),
    obs: &mut dyn Observer,
) -> Result<(Summary, Box<dyn Backend>)> {
    if workers.is_empty() {
        return Err(Error::Usage("--devices: no device to run on".into()));
    }
    let clock = Instant::now();
    obs.phase(Phase::StartSystem);
    let (to_master, inbox) = channel();
    let mut replies = Vec::new();
    let mut feeds = Vec::new();
    for (w, worker) in workers.iter().enumerate() {
        let (tx, rx) = channel();
        replies.push(tx);
        feeds.push(Arc::new(DeviceFeed {
            w,
            to_master: to_master.clone(),
            from_master: Mutex::new(rx),
            ends: Mutex::new(Vec::new()),
            clock: Mutex::new(Clock {
                started: clock,
                batch_started: None,
                load: DeviceLoad {
                    device: worker.name.clone(),
                    ..Default::default()
                },
            }),
        }));
    }
    drop(to_master);
    let meter = crate::report::usage::UsageMeter::start(first.pci_bus_id());
    let mut first = Some(first);
    let (gathered, results) = std::thread::scope(|s| {
        let handles: Vec<_> = feeds
            .iter()
            .zip(workers)
            .map(|(feed, worker)| {
                let feed = Arc::clone(feed);
                let backend = if feed.w == 0 { first.take() } else { None };
                s.spawn(move || {
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        track_share(system, opts, worker, &feed, backend, make)
                    }))
                    .unwrap_or_else(|_| {
                        Err(Error::Internal(format!(
                            "the worker of {} panicked",
                            worker.name
                        )))
                    });
                    if r.is_err() {
                        let _ = feed.to_master.send(Message::Failed { w: feed.w });
                    }
                    r
                })
            })
            .collect();
        let gathered = hand_out(opts, min_batch, &inbox, replies, obs);
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(stopped())))
            .collect();
        (gathered, results)
    });
    let gathered = gathered?;
    let first_pass = clock.elapsed().as_secs_f64();
    let mut usage = meter.finish();
    let mut backends = Vec::new();
    for r in results {
        let (backend, share) = r?;
        add_refinement(&mut usage, &share);
        backends.push(backend);
    }
    let loads: Vec<DeviceLoad> = feeds
        .iter()
        .map(|f| f.clock.lock().expect("clock").load.clone())
        .collect();
    let mut backend = backends.swap_remove(0);
    drop(backends);
    // Every endpoint known: the recovery rounds and the summary of one device.
    let mut done = gathered;
    done.extend(opts.plan.done().iter().cloned());
    let o = SolveOptions {
        plan: Plan {
            done: Some(Arc::new(sorted_once(done)?)),
            feed: None,
            ..opts.plan.clone()
        },
        ..opts.clone()
    };
    let mut summary = solve(system, &o, backend.as_mut(), &mut RecoveryOnly(obs))?;
    summary.seconds = clock.elapsed().as_secs_f64();
    // The workers' first pass (their start systems included) is the run's tracking; the
    // machine's use is measured over it (the GPU's: the first device's).
    summary.phases.tracking += first_pass;
    summary.phases.tracking_usage = usage;
    summary.phases.devices = loads;
    Ok((summary, backend))
}

/// One worker: opens its backend (unless given), then tracks the first pass of every batch
/// its feed is handed, with its share of the threads; returns the backend and the usage of
/// its first pass (its refinement by part).
fn track_share(
    system: &System,
    opts: &SolveOptions,
    worker: &Worker,
    feed: &Arc<DeviceFeed>,
    backend: Option<Box<dyn Backend>>,
    make: &(dyn Fn(&Worker) -> Result<Box<dyn Backend>> + Sync),
) -> Result<(Box<dyn Backend>, Usage)> {
    let mut backend = match backend {
        Some(b) => b,
        None => make(worker)?,
    };
    let o = SolveOptions {
        threads: worker.threads,
        plan: Plan {
            feed: Some(Feed(Arc::clone(feed) as Arc<dyn PathFeed>)),
            first_pass_only: true,
            shard: None,
            done: None,
        },
        ..opts.clone()
    };
    let share = solve(system, &o, backend.as_mut(), &mut |e: &Endpoint| {
        feed.ends.lock().expect("ends").push(e.clone());
        Ok(())
    })?;
    Ok((backend, share.phases.tracking_usage))
}

/// The workers' refinement by part and their waits on it, summed into the run's `usage`
/// (its CPU seconds and GPU use are measured over the whole first pass already).
fn add_refinement(usage: &mut Usage, share: &Usage) {
    for (part, cost) in &share.refine_parts {
        let sum = usage.refine_parts.entry(part.clone()).or_default();
        sum.seconds += cost.seconds;
        sum.calls += cost.calls;
    }
    if let Some(w) = share.waited_for_refinement {
        *usage.waited_for_refinement.get_or_insert(0.0) += w;
    }
}

/// The caller's side: hands out batches (at least `min_batch` paths) until the queue is
/// empty or a worker failed, passes each endpoint to `obs`, and returns them all.
/// Returning (an error included) drops the replies, which ends the workers that still wait
/// for a batch.
fn hand_out(
    opts: &SolveOptions,
    min_batch: u64,
    inbox: &Receiver<Message>,
    replies: Vec<Sender<Option<Vec<u64>>>>,
    obs: &mut dyn Observer,
) -> Result<Vec<Endpoint>> {
    let workers = replies.len();
    let mut finished = vec![false; workers];
    let mut queue: Option<Queue> = None;
    let mut paths = None;
    let mut failed = false;
    let mut ends = Vec::new();
    while finished.iter().any(|f| !f) {
        // Every worker says when it stops (an error or a panic: `Failed`); the feeds keep
        // the senders, so the inbox stays open.
        let Ok(msg) = inbox.recv() else { break };
        let w = match msg {
            Message::Failed { w } => {
                failed = true;
                finished[w] = true;
                continue;
            }
            Message::Ask {
                w,
                paths: p,
                ends: batch,
            } => {
                same_start_system(&mut paths, p, w)?;
                for e in batch {
                    obs.endpoint(&e)?;
                    ends.push(e);
                }
                w
            }
        };
        if queue.is_none() {
            let p = paths.expect("set by the first report");
            let ids = opts.plan.first_pass(p as u128, opts.only.as_deref())?;
            let ids = match (ids, &opts.only) {
                (Some(ids), _) => Some(ids),
                (None, Some(only)) => Some(only.clone()),
                (None, None) => None,
            };
            let q = Queue::new(p, ids, workers, min_batch);
            obs.total(q.len() as u128);
            obs.phase(Phase::FirstPass { paths: q.len() });
            queue = Some(q);
        }
        let q = queue.as_mut().expect("made above");
        if failed {
            q.close();
        }
        let batch = q.take_paths();
        if batch.is_none() {
            finished[w] = true;
        }
        // A worker that ended meanwhile has failed, and said so.
        let _ = replies[w].send(batch);
    }
    if !failed {
        let handed = queue.as_ref().map_or(0, Queue::len);
        if ends.len() as u64 != handed {
            return Err(Error::Internal(format!(
                "{handed} paths handed out, {} endpoints came back",
                ends.len()
            )));
        }
    }
    Ok(ends)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::CpuBackend;
    use crate::solver::StartKind;

    #[test]
    fn device_lists_parse_and_bad_ones_are_usage_errors() {
        assert_eq!(DeviceList::parse("all").unwrap(), DeviceList::All);
        assert_eq!(DeviceList::parse("3").unwrap(), DeviceList::Count(3));
        assert_eq!(
            DeviceList::parse("0, 2").unwrap(),
            DeviceList::Ordinals(vec![0, 2])
        );
        for s in ["0", "", "two", "0,0", "1,", "-1", "0;1"] {
            let e = DeviceList::parse(s).unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{s}");
            assert!(e.to_string().starts_with("--devices"), "{e}");
        }
    }

    #[test]
    fn cpu_workers_share_the_threads() {
        let w = workers(&DeviceList::Count(3), false, 8).unwrap();
        let t: Vec<usize> = w.iter().map(|w| w.threads).collect();
        assert_eq!(t, vec![3, 3, 2]);
        assert_eq!(w[2].name, "cpu 2");
        let w = workers(&DeviceList::Count(4), false, 2).unwrap();
        assert!(w.iter().all(|w| w.threads == 1), "at least one thread each");
        for l in [DeviceList::All, DeviceList::Ordinals(vec![0, 1])] {
            assert!(matches!(workers(&l, false, 2), Err(Error::Usage(_))));
        }
    }

    /// Three CPU workers give the counts and the distinct solutions of one (katsura-6,
    /// total degree; cyclic-6, polyhedral), every path reported once, and more than one
    /// worker tracks paths; a resumed run hands out only the paths not done.
    #[test]
    fn workers_equal_one_device() {
        for name in ["katsura6", "cyclic6"] {
            let sys = crate::system::families::by_name(name).unwrap().unwrap();
            let mut opts = SolveOptions {
                start: StartKind::Auto,
                seed: 3,
                threads: 3,
                ..Default::default()
            };
            opts.tracker.batch = 8;
            let mut b = CpuBackend::new(3).unwrap();
            let (one, _) = crate::solver::solve_collect(&sys, &opts, &mut b).unwrap();
            let ws = workers(&DeviceList::Count(3), false, 3).unwrap();
            let make = |w: &Worker| -> Result<Box<dyn Backend>> {
                Ok(Box::new(CpuBackend::new(w.threads)?))
            };
            let mut seen = Vec::new();
            let (all, _) = solve_on_devices(
                &sys,
                &opts,
                &ws,
                min_batch(false, opts.tracker.batch),
                make(&ws[0]).unwrap(),
                &make,
                &mut |e: &Endpoint| {
                    if e.attempt == 0 {
                        seen.push(e.path);
                    }
                    Ok(())
                },
            )
            .unwrap();
            seen.sort_unstable();
            assert_eq!(
                seen,
                (0..one.paths).collect::<Vec<_>>(),
                "{name}: once each"
            );
            let counts = |s: &Summary| {
                (
                    s.paths,
                    s.nonsingular,
                    s.singular,
                    s.at_infinity,
                    s.real,
                    s.failed,
                    s.solutions.len(),
                )
            };
            assert_eq!(counts(&all), counts(&one), "{name}");
            same_solutions(&one, &all, name);
            let loads = &all.phases.devices;
            assert_eq!(loads.len(), 3);
            assert_eq!(loads.iter().map(|l| l.paths).sum::<u64>(), one.paths);
            assert!(
                loads.iter().filter(|l| l.paths > 0).count() > 1,
                "{name}: {loads:?}"
            );
            // Every first-pass endpoint refined once, on whichever worker tracked it.
            let refined = |s: &Summary| {
                s.phases
                    .tracking_usage
                    .refine_parts
                    .get("total")
                    .map(|c| c.calls)
            };
            assert_eq!(refined(&all), Some(one.paths), "{name}");
            assert_eq!(refined(&one), Some(one.paths), "{name}");
        }
    }

    /// Each distinct solution of `a` is one of `b` (coordinates within 1e-8, the same
    /// paths ending there).
    pub fn same_solutions(a: &Summary, b: &Summary, name: &str) {
        for s in &a.solutions {
            let close = b.solutions.iter().find(|t| {
                s.coordinates
                    .iter()
                    .zip(t.coordinates.iter())
                    .all(|(x, y)| (x - y).norm() < 1e-8)
            });
            let t = close.unwrap_or_else(|| panic!("{name}: {:?} is missing", s.coordinates));
            let sorted = |p: &[u64]| {
                let mut p = p.to_vec();
                p.sort_unstable();
                p
            };
            assert_eq!(
                sorted(&s.paths),
                sorted(&t.paths),
                "{name}: {:?}",
                s.coordinates
            );
        }
    }

    /// A worker that cannot open its backend ends the run with its error, not a hang.
    #[test]
    fn a_worker_that_fails_ends_the_run() {
        let sys = crate::system::families::by_name("katsura5")
            .unwrap()
            .unwrap();
        let mut opts = SolveOptions {
            start: StartKind::TotalDegree,
            threads: 2,
            ..Default::default()
        };
        opts.tracker.batch = 4;
        let ws = workers(&DeviceList::Count(2), false, 2).unwrap();
        let make =
            |_: &Worker| -> Result<Box<dyn Backend>> { Err(Error::Cuda("no such device".into())) };
        let e = match solve_on_devices(
            &sys,
            &opts,
            &ws,
            4,
            Box::new(CpuBackend::new(1).unwrap()),
            &make,
            &mut |_: &Endpoint| Ok(()),
        ) {
            Ok(_) => panic!("a run with a failed worker"),
            Err(e) => e,
        };
        assert!(e.to_string().contains("no such device"), "{e}");
    }
}
