//! Parallel depth-first traversal of a tree whose output stream keeps the sequential
//! order, whatever the number of threads and the timing, in bounded memory.
//!
//! **Sequential order.** One stack: pop the top, expand it (it may emit outputs and push
//! its children, first child on top). The outputs come in preorder.
//!
//! **Jobs.** A job is a stack: it runs the loop above for at most `job_steps`
//! expansions, then its remaining stack becomes a new *open* job. The jobs form a list in
//! stream order, and every way of cutting a stack keeps it: a finished job's continuation
//! is inserted right after it; an open job `[s_1, …, s_r]` (`s_1` on top, first in order)
//! taken while other workers wait is split into the open `[s_1, …, s_{r−1}]` followed by
//! `s_r`, taken; a running job asked for work gives away the bottom of its stack as an
//! open job right after itself (before earlier gifts: the bottom precedes them; and its
//! continuation will be inserted before it). The calling thread walks the list,
//! delivering each finished job's outputs and freeing it: the sequential order, exactly.
//!
//! **Window.** Only the first `window` jobs of the list may be taken (the head's job
//! always can, so the stream progresses), and a worker takes the first open one. A worker
//! that finds none asks the running jobs of the window to give away a state (an atomic flag
//! per worker, read after every expansion). So all workers stay near the front of the
//! stream and at most `window` jobs' outputs (`≤ window × job_steps` expansions) wait for
//! delivery; the states far ahead stay unexpanded on the stacks of open jobs.
//!
//! **Errors and stopping.** An error ends its job (its continuation is dropped); the caller
//! reports it after delivering every output before it (the first error in stream order,
//! deterministic). `deliver` returning `Break` stops every worker.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

/// How the traversal is cut into jobs: `window` jobs from the head of the stream may run,
/// each for at most `job_steps` expansions before its stack becomes an open job again.
#[derive(Clone, Copy, Debug)]
pub(super) struct JobLimits {
    pub(super) window: usize,
    pub(super) job_steps: usize,
}

impl JobLimits {
    /// The limits for `threads` workers: a window of `16 × threads` jobs of 16,384
    /// expansions (~40 ms of tropical homotopy steps). Measured on the 16-core device
    /// machine (docs/mixed-cells.md): with `4 × threads` jobs of 1,024 expansions the
    /// workers ran out of open jobs, asked for single states 240 k times on cyclic-14 and
    /// sat idle a third of the time (11.6 s); these limits took it to ~6 s.
    pub(super) fn for_threads(threads: usize) -> JobLimits {
        JobLimits {
            window: 16 * threads.max(1),
            job_steps: 16_384,
        }
    }
}

/// Expands one state: emits its outputs (`emit` returns `Break` to stop) and pushes its
/// children onto `children` in traversal order (the first child is visited first).
pub(super) trait Expand<S, C, E>: Sync {
    /// Worker-local scratch (buffers, counters).
    type Scratch;
    fn scratch(&self) -> Self::Scratch;
    fn expand(
        &self,
        scratch: &mut Self::Scratch,
        state: S,
        children: &mut Vec<S>,
        emit: &mut dyn FnMut(C) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, E>;
    /// Called once with each worker's scratch at its end.
    fn finish(&self, scratch: Self::Scratch);
}

enum Work<S> {
    /// Not taken yet: a stack, top (first in order) last.
    Open(Vec<S>),
    /// Taken by worker `.0`.
    Running(usize),
    Done,
}

/// A job in the list.
struct Job<S, C, E> {
    work: Work<S>,
    out: Vec<C>,
    error: Option<E>,
    /// The job after this one in stream order.
    next: Option<usize>,
}

struct Shared<S, C, E> {
    /// Arena of jobs (`free`: reusable slots).
    jobs: Vec<Job<S, C, E>>,
    free: Vec<usize>,
    /// The job being delivered.
    head: usize,
    /// Workers waiting for a job.
    idle: usize,
    finished: bool,
    /// A worker panicked: the caller stops waiting (the scope re-raises the panic).
    panicked: bool,
}

impl<S, C, E> Shared<S, C, E> {
    /// A new job after `after` (or a lone job).
    fn insert(&mut self, work: Work<S>, after: Option<usize>) -> usize {
        let next = after.and_then(|a| self.jobs[a].next);
        let job = Job {
            work,
            out: Vec::new(),
            error: None,
            next,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.jobs[id] = job;
                id
            }
            None => {
                self.jobs.push(job);
                self.jobs.len() - 1
            }
        };
        if let Some(a) = after {
            self.jobs[a].next = Some(id);
        }
        id
    }

    /// The first `w` jobs of the list (those that may be taken).
    fn window(&self, w: usize) -> Vec<usize> {
        let mut ids = Vec::with_capacity(w);
        let mut cur = Some(self.head);
        while let Some(i) = cur.filter(|_| ids.len() < w) {
            ids.push(i);
            cur = self.jobs[i].next;
        }
        ids
    }
}

struct Pool<S, C, E> {
    shared: Mutex<Shared<S, C, E>>,
    /// Signals the caller: the head job finished.
    to_caller: Condvar,
    /// Signals the workers: a job was opened, outputs were delivered, the end.
    to_workers: Condvar,
    /// Jobs from the head that may be taken.
    window: usize,
    /// Expansions per job.
    job_steps: usize,
    /// Per worker: some idle worker asks it for a state.
    asked: Vec<AtomicBool>,
}

/// Traverses the tree below `root` on `threads` workers (`≤ 1`: on the calling thread),
/// handing the outputs to `deliver` on the calling thread in the sequential order.
/// Only the first `limits.window` jobs of the stream may run (see the module doc).
pub(super) fn ordered_dfs<S, C, E, X>(
    root: S,
    threads: usize,
    limits: JobLimits,
    stop: &AtomicBool,
    x: &X,
    deliver: &mut dyn FnMut(C) -> ControlFlow<()>,
) -> Result<(), E>
where
    S: Send,
    C: Send,
    E: Send,
    X: Expand<S, C, E>,
{
    if threads <= 1 {
        let mut scratch = x.scratch();
        let mut stack = vec![root];
        let mut children = Vec::new();
        let mut r = Ok(());
        while let Some(st) = stack.pop() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            match x.expand(&mut scratch, st, &mut children, &mut *deliver) {
                Ok(ControlFlow::Continue(())) => stack.extend(children.drain(..).rev()),
                Ok(ControlFlow::Break(())) => {
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
                Err(e) => {
                    r = Err(e);
                    break;
                }
            }
        }
        x.finish(scratch);
        return r;
    }
    let mut shared = Shared {
        jobs: Vec::new(),
        free: Vec::new(),
        head: 0,
        idle: threads,
        finished: false,
        panicked: false,
    };
    shared.head = shared.insert(Work::Open(vec![root]), None);
    let pool = Pool {
        shared: Mutex::new(shared),
        to_caller: Condvar::new(),
        to_workers: Condvar::new(),
        window: limits.window.max(1),
        job_steps: limits.job_steps.max(1),
        asked: (0..threads).map(|_| AtomicBool::new(false)).collect(),
    };
    std::thread::scope(|scope| {
        for me in 0..threads {
            let pool = &pool;
            scope.spawn(move || {
                let _guard = PanicGuard(pool);
                let mut scratch = x.scratch();
                worker(pool, me, stop, x, &mut scratch);
                x.finish(scratch);
            });
        }
        let r = deliver_in_order(&pool, stop, deliver);
        // release the workers
        let mut g = pool.shared.lock().unwrap();
        g.finished = true;
        pool.to_workers.notify_all();
        drop(g);
        r
    })
}

/// Tells the caller and the other workers when a worker unwinds from a panic (else the
/// caller would wait for its job forever).
struct PanicGuard<'p, S, C, E>(&'p Pool<S, C, E>);

impl<S, C, E> Drop for PanicGuard<'_, S, C, E> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut g = self.0.shared.lock().unwrap_or_else(|e| e.into_inner());
            g.panicked = true;
            g.finished = true;
            self.0.to_caller.notify_all();
            self.0.to_workers.notify_all();
        }
    }
}

/// The caller's loop: waits for the head job, delivers its outputs, moves to the next.
fn deliver_in_order<S, C, E>(
    pool: &Pool<S, C, E>,
    stop: &AtomicBool,
    deliver: &mut dyn FnMut(C) -> ControlFlow<()>,
) -> Result<(), E> {
    let mut g = pool.shared.lock().unwrap();
    loop {
        if g.panicked {
            return Ok(());
        }
        let head = g.head;
        if !matches!(g.jobs[head].work, Work::Done) {
            g = pool.to_caller.wait(g).unwrap();
            continue;
        }
        let out = std::mem::take(&mut g.jobs[head].out);
        let error = g.jobs[head].error.take();
        let next = g.jobs[head].next;
        if let Some(nx) = next {
            // nothing can be inserted after a finished job any more
            g.head = nx;
            g.free.push(head);
        }
        pool.to_workers.notify_all();
        drop(g);
        for c in out {
            if deliver(c).is_break() {
                stop.store(true, Ordering::Relaxed);
                return Ok(());
            }
        }
        if let Some(e) = error {
            stop.store(true, Ordering::Relaxed);
            return Err(e);
        }
        if next.is_none() {
            return Ok(());
        }
        g = pool.shared.lock().unwrap();
    }
}

/// A worker (`me`): takes the first open job of the window, runs it for at most
/// `pool.job_steps` expansions (donating its bottom state when asked), hands back its outputs
/// and its continuation.
fn worker<S, C, E, X>(
    pool: &Pool<S, C, E>,
    me: usize,
    stop: &AtomicBool,
    x: &X,
    scratch: &mut X::Scratch,
) where
    X: Expand<S, C, E>,
{
    let mut children = Vec::new();
    let mut out: Vec<C> = Vec::new();
    let asked = &pool.asked[me];
    loop {
        let (id, mut stack) = {
            let mut g = pool.shared.lock().unwrap();
            loop {
                if stop.load(Ordering::Relaxed) || g.finished {
                    return;
                }
                let window = g.window(pool.window);
                if let Some(&i) = window
                    .iter()
                    .find(|&&i| matches!(g.jobs[i].work, Work::Open(_)))
                {
                    let Work::Open(mut st) =
                        std::mem::replace(&mut g.jobs[i].work, Work::Running(me))
                    else {
                        unreachable!()
                    };
                    g.idle -= 1;
                    if st.len() >= 2 && g.idle > 0 {
                        // split: the bottom state (last in order) to me, the rest stays open
                        let bottom = st.remove(0);
                        g.jobs[i].work = Work::Open(st);
                        let id = g.insert(Work::Running(me), Some(i));
                        pool.to_workers.notify_all();
                        break (id, vec![bottom]);
                    }
                    break (i, st);
                }
                // nothing to take: ask the running jobs of the window for work
                for &i in &window {
                    if let Work::Running(w) = g.jobs[i].work {
                        pool.asked[w].store(true, Ordering::Relaxed);
                    }
                }
                g = pool.to_workers.wait(g).unwrap();
            }
        };
        let mut error = None;
        for _ in 0..pool.job_steps {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let Some(st) = stack.pop() else { break };
            let mut emit = |c: C| {
                out.push(c);
                ControlFlow::Continue(())
            };
            if let Err(e) = x.expand(scratch, st, &mut children, &mut emit) {
                error = Some(e);
                stack.clear();
                break;
            }
            stack.extend(children.drain(..).rev());
            if stack.len() >= 2 && asked.load(Ordering::Relaxed) {
                asked.store(false, Ordering::Relaxed);
                let mut g = pool.shared.lock().unwrap();
                let open = g
                    .window(pool.window)
                    .iter()
                    .filter(|&&i| matches!(g.jobs[i].work, Work::Open(_)))
                    .count();
                if g.idle > open {
                    // the bottom state follows everything left on the stack (and this
                    // job's continuation, inserted later right after the job)
                    let bottom = stack.remove(0);
                    g.insert(Work::Open(vec![bottom]), Some(id));
                    pool.to_workers.notify_all();
                }
            }
        }
        asked.store(false, Ordering::Relaxed);
        let mut g = pool.shared.lock().unwrap();
        let job = &mut g.jobs[id];
        job.out = std::mem::take(&mut out);
        job.error = error;
        job.work = Work::Done;
        if !stack.is_empty() && !stop.load(Ordering::Relaxed) {
            g.insert(Work::Open(stack), Some(id));
        }
        g.idle += 1;
        if g.head == id {
            pool.to_caller.notify_one();
        }
        pool.to_workers.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pseudo-random tree: node `(id, depth)` has 0–3 children (fewer with depth), emits
    /// `id` when `id % 5 == 0`, fails at `fail` and panics at `panic_at`.
    struct Tree {
        fail: Option<u64>,
        panic_at: Option<u64>,
        depth: u32,
    }

    fn mix(x: u64) -> u64 {
        let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    impl Expand<(u64, u32), u64, u64> for Tree {
        type Scratch = u64;
        fn scratch(&self) -> u64 {
            0
        }
        fn expand(
            &self,
            steps: &mut u64,
            (id, depth): (u64, u32),
            children: &mut Vec<(u64, u32)>,
            emit: &mut dyn FnMut(u64) -> ControlFlow<()>,
        ) -> Result<ControlFlow<()>, u64> {
            *steps += 1;
            if Some(id) == self.fail {
                return Err(id);
            }
            assert!(Some(id) != self.panic_at, "expansion {id} panics");
            let h = mix(id);
            let k = if depth >= self.depth {
                0
            } else if depth < 4 {
                2 + h % 2
            } else {
                h % 3 + (h >> 8) % 2 * (h >> 9) % 2
            };
            for c in 0..k {
                children.push((mix(id ^ (c + 1)), depth + 1));
            }
            if id % 5 == 0 {
                return Ok(emit(id));
            }
            Ok(ControlFlow::Continue(()))
        }
        fn finish(&self, _: u64) {}
    }

    fn run(
        tree: &Tree,
        threads: usize,
        window: usize,
        limit: usize,
    ) -> (Vec<u64>, Result<(), u64>) {
        // short jobs: many continuations, splits and gifts in a small tree
        let limits = JobLimits {
            window,
            job_steps: 256,
        };
        let stop = AtomicBool::new(false);
        let mut got = Vec::new();
        let r = ordered_dfs((1, 0), threads, limits, &stop, tree, &mut |c| {
            got.push(c);
            if got.len() >= limit {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        (got, r)
    }

    /// The stream (order included) is the sequential one for every thread count and
    /// window, including an error (reported after every earlier output) and an early stop.
    #[test]
    fn same_stream_for_every_thread_count() {
        let tree = Tree {
            fail: None,
            panic_at: None,
            depth: 40,
        };
        let (one, r) = run(&tree, 1, 1, usize::MAX);
        r.unwrap();
        assert!(one.len() > 20_000, "{}", one.len());
        for threads in [2, 3, 5, 8] {
            for window in [1, 2, 4 * threads] {
                let (got, r) = run(&tree, threads, window, usize::MAX);
                r.unwrap();
                assert!(got == one, "threads {threads} window {window}");
            }
            // early stop
            let (got, r) = run(&tree, threads, 4 * threads, 1000);
            r.unwrap();
            assert_eq!(got[..], one[..1000]);
        }
        // an error halfway: every output before it, then the error
        let mut fail = None;
        let mut ids = Vec::new();
        let mut stack = vec![(1u64, 0u32)];
        while let Some(s) = stack.pop() {
            ids.push(s.0);
            let mut ch = Vec::new();
            let flow = tree.expand(&mut 0, s, &mut ch, &mut |_| ControlFlow::Continue(()));
            assert!(flow.unwrap().is_continue());
            stack.extend(ch.into_iter().rev());
        }
        for &id in &ids[ids.len() / 2..] {
            if id % 5 != 0 {
                fail = Some(id);
                break;
            }
        }
        let bad = Tree {
            fail,
            panic_at: None,
            depth: 40,
        };
        // a panicking expansion reaches the caller (no hang)
        let panics = Tree {
            fail: None,
            panic_at: fail,
            depth: 40,
        };
        for threads in [1, 3] {
            let r = std::panic::catch_unwind(|| run(&panics, threads, 4 * threads, usize::MAX));
            assert!(r.is_err(), "threads {threads}");
        }
        let (seq, r) = run(&bad, 1, 1, usize::MAX);
        assert_eq!(r, Err(fail.unwrap()));
        assert!(seq.len() > 1000 && seq.len() < one.len());
        for threads in [2, 4, 7] {
            let (got, r) = run(&bad, threads, 4 * threads, usize::MAX);
            assert_eq!(r, Err(fail.unwrap()));
            assert!(got == seq, "threads {threads}");
        }
    }
}
