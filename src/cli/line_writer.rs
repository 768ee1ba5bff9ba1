//! The `-o` lines of a solve, written on a thread of their own.
//!
//! The solver hands each endpoint to its observer on the thread that also drives the
//! tracker (the GPU's launch loop); rendering a JSON line and flushing it there cost ~7 µs an
//! endpoint, 19 s of cyclic-13's first pass on the H200 (2.7 M endpoints). Here the observer
//! only queues the endpoint; the writer thread renders the lines, writes them in batches and
//! flushes each batch while holding the run's interrupt state ([`super::interrupt::Held`]),
//! so that a signal sees whole lines and counts that match them. On a signal the writer
//! first writes every endpoint already queued.

use crate::error::{Error, Result};
use crate::post::Endpoint;
use crate::report::formats::EndpointWriter;
use serde_json::{Map, Value};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::thread::JoinHandle;

/// Endpoints queued at most: the observer waits beyond it (the disk is slower than the
/// solve).
const QUEUE: usize = 1 << 14;

/// Lines written per batch at most (one flush, one hold of the interrupt state).
const BATCH: usize = 4096;

type Line = (Endpoint, Map<String, Value>);

/// Writes endpoints' lines on its own thread (see the module doc).
pub struct LineWriter {
    tx: Option<SyncSender<Line>>,
    thread: Option<JoinHandle<Result<EndpointWriter>>>,
}

impl LineWriter {
    /// Starts the thread that writes to `out`.
    pub fn start(mut out: EndpointWriter) -> Result<LineWriter> {
        out.set_flush_each(false);
        let (tx, rx) = sync_channel::<Line>(QUEUE);
        let thread = std::thread::Builder::new()
            .name("lines".into())
            .spawn(move || write_lines(out, rx))
            .map_err(|e| Error::io("starting the line writer", e))?;
        Ok(LineWriter {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Queues `e`'s line with the `extra` keys. An error of the writer (a full disk)
    /// comes back here, at the next line.
    pub fn write_with(&mut self, e: &Endpoint, extra: Map<String, Value>) -> Result<()> {
        let sent = match &self.tx {
            Some(tx) => tx.send((e.clone(), extra)).is_ok(),
            None => false,
        };
        if sent {
            return Ok(());
        }
        // The thread ended: its error says why.
        self.tx = None;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(Err(e))) => Err(e),
            _ => Err(Error::Internal("the line writer stopped".into())),
        }
    }

    /// Writes what is queued and returns the writer (to be finished by its owner).
    pub fn finish(mut self) -> Result<EndpointWriter> {
        self.tx = None;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(result)) => result,
            _ => Err(Error::Internal("the line writer stopped".into())),
        }
    }
}

impl Drop for LineWriter {
    /// A solve that ended in an error still writes the lines queued before it.
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The writer thread: batches of lines, each written and flushed while the interrupt state
/// is held, and counted there.
fn write_lines(mut out: EndpointWriter, rx: Receiver<Line>) -> Result<EndpointWriter> {
    while let Ok(first) = rx.recv() {
        let mut held = super::interrupt::hold();
        let mut next = Some(first);
        let mut written = 0usize;
        while let Some((e, extra)) = next.take() {
            out.write_with(&e, extra)?;
            held.count(&e);
            written += 1;
            // A signal waits: write everything queued, however many.
            if written < BATCH || super::interrupt::draining() {
                next = match rx.try_recv() {
                    Ok(line) => Some(line),
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => None,
                };
            }
        }
        out.flush()?;
    }
    Ok(out)
}
