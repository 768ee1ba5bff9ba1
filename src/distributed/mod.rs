//! One run over several processes, master–worker: the workers build the start system
//! (each the same, from the seed) and track the batches of paths the master hands out,
//! one at a time as each finishes its previous batch, so that a worker held up by slow
//! paths takes fewer batches; the master gathers every endpoint, then runs the recovery
//! rounds over all of them and prints the summary once, as one process would
//! ([`crate::solver::plan`]).
//!
//! The protocol is independent of the transport ([`Transport`]): MPI ranks (`mpi`, cargo
//! feature `mpi`; rank 0 is the master) or, in the tests, threads with channels. The GPUs
//! of one host in one process ([`devices`], `solve --devices`) follow the same scheme with
//! one worker thread per device, passing endpoints without encoding them.
//!
//! Messages: a worker sends a `Report` (its start system's path count and the endpoint
//! lines of its previous batch, docs/output.md); the master answers with the next batch
//! `[first, end)` as two little-endian u64, `first = end` when there is none.

pub mod devices;
#[cfg(feature = "mpi")]
pub mod mpi;

use crate::error::{Error, Result};
use crate::post::Endpoint;
use crate::solver::plan::PathFeed;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

/// How workers and the master exchange byte messages.
pub trait Transport: Send + Sync {
    /// Workers (the master excluded).
    fn workers(&self) -> usize;
    /// Worker side: a message to the master.
    fn send_to_master(&self, msg: &[u8]) -> Result<()>;
    /// Worker side: the master's next message.
    fn receive_from_master(&self) -> Result<Vec<u8>>;
    /// Master side: the next message of any worker, with the worker's number
    /// (`0..workers()`).
    fn receive_any(&self) -> Result<(usize, Vec<u8>)>;
    /// Master side: a message to worker `w`.
    fn send_to(&self, w: usize, msg: &[u8]) -> Result<()>;
}

/// A worker's message: its start system's size and the lines of its last batch.
#[derive(Serialize, Deserialize)]
struct Report {
    paths: u64,
    lines: Vec<String>,
}

fn encode_batch(first: u64, end: u64) -> Vec<u8> {
    [first.to_le_bytes(), end.to_le_bytes()].concat()
}

fn decode_batch(msg: &[u8]) -> Result<std::ops::Range<u64>> {
    let word = |i: usize| {
        msg.get(8 * i..8 * i + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    };
    match (msg.len(), word(0), word(1)) {
        (16, Some(a), Some(b)) => Ok(a..b),
        _ => Err(Error::Internal(format!(
            "a batch message of {} bytes, not 16",
            msg.len()
        ))),
    }
}

/// Least paths per batch of an MPI run.
pub const MIN_BATCH: u64 = 64;

/// Paths per batch: about 8 batches per worker, at least `min`. Fewer, larger batches cost
/// less per batch (with a polyhedral start each batch enumerates the mixed cells again,
/// skipping those outside the batch); more balance slow paths better.
pub fn batch_size(paths: u64, workers: usize, min: u64) -> u64 {
    paths.div_ceil(8 * workers.max(1) as u64).max(min)
}

/// The master's queue of paths to hand out: the next [`batch_size`] of them to whichever
/// worker asks. The paths are `0..len`, or the sorted list `ids` (a resumed run's or a
/// shard's paths, `--paths`).
pub struct Queue {
    ids: Option<Vec<u64>>,
    len: u64,
    next: u64,
    size: u64,
}

impl Queue {
    /// All paths `0..paths`, or `ids` when given, in batches for `workers` workers, at least
    /// `min` paths each.
    pub fn new(paths: u64, ids: Option<Vec<u64>>, workers: usize, min: u64) -> Queue {
        let len = ids.as_ref().map_or(paths, |i| i.len() as u64);
        Queue {
            ids,
            len,
            next: 0,
            size: batch_size(len, workers, min.max(1)),
        }
    }

    /// Paths the queue hands out in all.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the queue holds no path at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Positions `[first, end)` of the next batch in the queue; `None` when all are out.
    pub fn take(&mut self) -> Option<std::ops::Range<u64>> {
        (self.next < self.len).then(|| {
            let end = (self.next + self.size).min(self.len);
            let r = self.next..end;
            self.next = end;
            r
        })
    }

    /// The next batch's paths (sorted); `None` when all are out.
    pub fn take_paths(&mut self) -> Option<Vec<u64>> {
        let r = self.take()?;
        Some(match &self.ids {
            Some(ids) => ids[r.start as usize..r.end as usize].to_vec(),
            None => r.collect(),
        })
    }

    /// Hands out nothing more (a worker failed: the run stops).
    pub fn close(&mut self) {
        self.next = self.len;
    }
}

/// The start systems of all workers have `paths` paths: an error naming worker `w` when its
/// count differs from the first (different builds or inputs).
fn same_start_system(first: &mut Option<u64>, paths: u64, w: usize) -> Result<()> {
    match *first {
        None => *first = Some(paths),
        Some(p) if p != paths => {
            return Err(Error::Usage(format!(
                "the workers' start systems differ: {p} paths on one, {paths} on worker {w} \
                 (run one build on one input everywhere)"
            )))
        }
        _ => {}
    }
    Ok(())
}

/// Sorts the gathered endpoints by path; an error when a path came twice.
fn sorted_once(mut ends: Vec<Endpoint>) -> Result<Vec<Endpoint>> {
    ends.sort_by_key(|e| e.path);
    if let Some(w) = ends.windows(2).find(|w| w[0].path == w[1].path) {
        return Err(Error::Internal(format!(
            "path {} was reported twice",
            w[0].path
        )));
    }
    Ok(ends)
}

/// The worker's side: a [`PathFeed`] that reports the lines of the last batch and asks
/// the master for the next; [`WorkerFeed::record`] collects the lines as the solve reports
/// its endpoints.
pub struct WorkerFeed<T: Transport> {
    transport: T,
    lines: Mutex<Vec<String>>,
}

impl<T: Transport> WorkerFeed<T> {
    pub fn new(transport: T) -> Arc<Self> {
        Arc::new(WorkerFeed {
            transport,
            lines: Mutex::new(Vec::new()),
        })
    }

    /// Keeps `e`'s line for the next report.
    pub fn record(&self, e: &Endpoint) {
        let line = crate::report::solution_line(e).to_string();
        self.lines.lock().expect("lines").push(line);
    }
}

impl<T: Transport> PathFeed for WorkerFeed<T> {
    fn next(&self, paths: u128) -> Result<Option<Vec<u64>>> {
        let report = Report {
            paths: paths as u64,
            lines: std::mem::take(&mut *self.lines.lock().expect("lines")),
        };
        let msg = serde_json::to_vec(&report).map_err(|e| Error::Internal(e.to_string()))?;
        self.transport.send_to_master(&msg)?;
        let batch = decode_batch(&self.transport.receive_from_master()?)?;
        Ok((!batch.is_empty()).then(|| batch.collect()))
    }
}

/// The master's side: hands out batches ([`Queue`], at least `min_batch` paths) until every
/// path is handed out and every worker has reported its last batch. Each endpoint line is passed to `line` as it comes (the
/// `-o` file); returns the endpoints, sorted by path, and the start system's path count.
/// An error when workers built start systems of different sizes (different builds or
/// inputs) or report a path twice.
pub fn serve(
    t: &dyn Transport,
    min_batch: u64,
    line: &mut dyn FnMut(&str) -> Result<()>,
) -> Result<(Vec<Endpoint>, u64)> {
    let mut ends = Vec::new();
    let mut paths: Option<u64> = None;
    let mut queue: Option<Queue> = None;
    let mut finished = 0;
    while finished < t.workers() {
        let (w, msg) = t.receive_any()?;
        let report: Report = serde_json::from_slice(&msg)
            .map_err(|e| Error::Internal(format!("worker {w}: a report that is not JSON: {e}")))?;
        same_start_system(&mut paths, report.paths, w)?;
        for l in &report.lines {
            let v: serde_json::Value = serde_json::from_str(l).map_err(|e| {
                Error::Internal(format!("worker {w}: a line that is not JSON: {e}"))
            })?;
            ends.push(
                crate::solver::resume::endpoint_from_line(&v)
                    .map_err(|m| Error::Internal(format!("worker {w}: {m}")))?,
            );
            line(l)?;
        }
        let queue =
            queue.get_or_insert_with(|| Queue::new(report.paths, None, t.workers(), min_batch));
        let batch = queue.take().unwrap_or_else(|| {
            finished += 1;
            0..0
        });
        t.send_to(w, &encode_batch(batch.start, batch.end))?;
    }
    Ok((sorted_once(ends)?, paths.unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::CpuBackend;
    use crate::solver::plan::{Feed, Plan};
    use crate::solver::{solve, SolveOptions, StartKind};
    use std::sync::mpsc::{channel, Receiver, Sender};

    /// Workers as threads: one channel to the master, one back to each worker.
    struct Channels {
        me: usize,
        to_master: Sender<(usize, Vec<u8>)>,
        from_workers: Mutex<Receiver<(usize, Vec<u8>)>>,
        to_workers: Vec<Sender<Vec<u8>>>,
        from_master: Mutex<Option<Receiver<Vec<u8>>>>,
    }

    impl Transport for Arc<Channels> {
        fn workers(&self) -> usize {
            self.to_workers.len()
        }
        fn send_to_master(&self, msg: &[u8]) -> Result<()> {
            self.to_master.send((self.me, msg.to_vec())).unwrap();
            Ok(())
        }
        fn receive_from_master(&self) -> Result<Vec<u8>> {
            Ok(self
                .from_master
                .lock()
                .unwrap()
                .as_ref()
                .unwrap()
                .recv()
                .unwrap())
        }
        fn receive_any(&self) -> Result<(usize, Vec<u8>)> {
            Ok(self.from_workers.lock().unwrap().recv().unwrap())
        }
        fn send_to(&self, w: usize, msg: &[u8]) -> Result<()> {
            self.to_workers[w].send(msg.to_vec()).unwrap();
            Ok(())
        }
    }

    /// A run over 3 worker threads and a master equals one process: counts and distinct
    /// solutions (cyclic-6, polyhedral, and katsura-6, total degree); every path is
    /// tracked once.
    #[test]
    fn master_and_workers_equal_one_process() {
        for name in ["cyclic6", "katsura6"] {
            let sys = crate::system::families::by_name(name).unwrap().unwrap();
            let opts = SolveOptions {
                start: StartKind::Auto,
                seed: 2,
                threads: 1,
                ..Default::default()
            };
            let mut b = CpuBackend::new(1).unwrap();
            let (one, _) = crate::solver::solve_collect(&sys, &opts, &mut b).unwrap();
            let workers = 3;
            let (to_master, from_workers) = channel();
            let mut to_workers = Vec::new();
            let mut inboxes = Vec::new();
            for _ in 0..workers {
                let (tx, rx) = channel();
                to_workers.push(tx);
                inboxes.push(rx);
            }
            let make = |me: usize, inbox: Option<Receiver<Vec<u8>>>| {
                Arc::new(Channels {
                    me,
                    to_master: to_master.clone(),
                    from_workers: Mutex::new(channel().1),
                    to_workers: to_workers.clone(),
                    from_master: Mutex::new(inbox),
                })
            };
            let per_worker: Vec<usize> = std::thread::scope(|s| {
                let handles: Vec<_> = inboxes
                    .into_iter()
                    .enumerate()
                    .map(|(me, inbox)| {
                        let feed = WorkerFeed::new(make(me, Some(inbox)));
                        let (sys, opts) = (&sys, &opts);
                        s.spawn(move || {
                            let o = SolveOptions {
                                plan: Plan {
                                    feed: Some(Feed(feed.clone())),
                                    first_pass_only: true,
                                    ..Default::default()
                                },
                                ..opts.clone()
                            };
                            let mut b = CpuBackend::new(1).unwrap();
                            let mut count = 0;
                            solve(sys, &o, &mut b, &mut |e: &Endpoint| {
                                count += 1;
                                feed.record(e);
                                Ok(())
                            })
                            .unwrap();
                            count
                        })
                    })
                    .collect();
                let master = Arc::new(Channels {
                    me: 0,
                    to_master: to_master.clone(),
                    from_workers: Mutex::new(from_workers),
                    to_workers: to_workers.clone(),
                    from_master: Mutex::new(None),
                });
                let mut lines = 0;
                let (done, paths) = serve(&master, 8, &mut |_| {
                    lines += 1;
                    Ok(())
                })
                .unwrap();
                assert_eq!(paths, one.paths);
                assert_eq!(lines as u64, paths);
                let ids: Vec<u64> = done.iter().map(|e| e.path).collect();
                assert_eq!(
                    ids,
                    (0..paths).collect::<Vec<_>>(),
                    "{name}: each path once"
                );
                let o = SolveOptions {
                    plan: Plan {
                        done: Some(Arc::new(done)),
                        ..Default::default()
                    },
                    ..opts.clone()
                };
                let mut b = CpuBackend::new(1).unwrap();
                let (all, _) = crate::solver::solve_collect(&sys, &o, &mut b).unwrap();
                assert_eq!(
                    (all.paths, all.nonsingular, all.singular, all.at_infinity),
                    (one.paths, one.nonsingular, one.singular, one.at_infinity),
                    "{name}"
                );
                assert_eq!((all.real, all.failed), (one.real, one.failed), "{name}");
                assert_eq!(all.solutions.len(), one.solutions.len(), "{name}");
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert_eq!(per_worker.iter().sum::<usize>() as u64, one.paths);
            eprintln!("{name}: paths per worker {per_worker:?}");
        }
    }

    /// A queue hands out each of its paths once, in batches of the size asked, and nothing
    /// after it is closed.
    #[test]
    fn queues_hand_out_each_path_once() {
        let ids: Vec<u64> = (0..100).filter(|p| p % 3 != 0).collect();
        let mut q = Queue::new(100, Some(ids.clone()), 2, 5);
        assert_eq!(q.len(), ids.len() as u64);
        let mut out = Vec::new();
        while let Some(b) = q.take_paths() {
            assert!(b.len() <= 5 && !b.is_empty());
            out.extend(b);
        }
        assert_eq!(out, ids);
        let mut q = Queue::new(10, None, 1, 1);
        assert_eq!(
            q.take_paths(),
            Some(vec![0, 1]),
            "10 paths in 8 batches of 2"
        );
        q.close();
        assert_eq!(q.take_paths(), None);
    }

    #[test]
    fn batches_encode_and_bad_messages_are_errors() {
        assert_eq!(decode_batch(&encode_batch(5, 70)).unwrap(), 5..70);
        assert!(decode_batch(&[1, 2, 3]).is_err());
        assert_eq!(batch_size(100, 2, MIN_BATCH), 64);
        assert_eq!(batch_size(16_000, 2, MIN_BATCH), 1000);
    }
}
