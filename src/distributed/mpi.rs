//! `mpirun -np R pathtrack solve F …` (cargo feature `mpi`, rsmpi over OpenMPI or MPICH):
//! rank 0 is the master, ranks 1 … R−1 the workers ([`super`]). Every rank reads the same
//! command line; only the master writes `-o`, `--solutions` and the summary. A process
//! not started by an MPI launcher (or a world of one rank) runs as usual.

use super::{serve, Transport, WorkerFeed, MIN_BATCH};
use crate::backend::Backend;
use crate::cli::solve_args::SolveArgs;
use crate::error::{Error, Result};
use crate::report::formats::SolutionFormat;
use crate::report::progress::{Phase, Progress};
use crate::report::SolutionWriter;
use crate::solver::plan::{Feed, Plan};
use crate::solver::resume::RunHeader;
use crate::solver::{solve, Observer, SolveOptions};
use crate::system::System;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::sync::Arc;

/// Environment variables that MPI launchers (OpenMPI's mpirun, MPICH's Hydra, Slurm's
/// srun with PMI or PMIx) set in the processes they start.
const LAUNCHER_VARS: &[&str] = &["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"];

/// The world communicator. MPI is called from the thread that initialized it only (the
/// solve's caller: the feed runs between batches on that thread), which any MPI library
/// allows; the `Sync` and `Send` below state that for the tracker's trait bounds.
struct World(SimpleCommunicator);

// SAFETY: every call on the communicator happens on the thread that called MPI_Init
// (`run_if_launched` and the solve it runs, whose feed is called on the caller's thread).
unsafe impl Send for World {}
unsafe impl Sync for World {}

impl Transport for Arc<World> {
    fn workers(&self) -> usize {
        self.0.size() as usize - 1
    }
    fn send_to_master(&self, msg: &[u8]) -> Result<()> {
        self.0.process_at_rank(0).send(msg);
        Ok(())
    }
    fn receive_from_master(&self) -> Result<Vec<u8>> {
        Ok(self.0.process_at_rank(0).receive_vec::<u8>().0)
    }
    fn receive_any(&self) -> Result<(usize, Vec<u8>)> {
        let (msg, status) = self.0.any_process().receive_vec::<u8>();
        Ok((status.source_rank() as usize - 1, msg))
    }
    fn send_to(&self, w: usize, msg: &[u8]) -> Result<()> {
        self.0.process_at_rank(w as i32 + 1).send(msg);
        Ok(())
    }
}

/// Runs `solve` as an MPI rank when an MPI launcher started this process and the world
/// has more than one rank; `None` otherwise (the caller solves as one process). The exit
/// code of this rank when it ran.
pub fn run_if_launched(
    a: &SolveArgs,
    system: &System,
    opts: &SolveOptions,
    backend: &mut dyn Backend,
    header: &RunHeader,
) -> Result<Option<i32>> {
    if !LAUNCHER_VARS.iter().any(|v| std::env::var_os(v).is_some()) {
        return Ok(None);
    }
    let universe =
        mpi::initialize().ok_or_else(|| Error::Internal("MPI was initialized already".into()))?;
    let world = universe.world();
    if world.size() < 2 {
        return Ok(None);
    }
    let unsupported = [
        (a.resume, "--resume"),
        (a.shard.is_some(), "--shard"),
        (a.certify, "--certify"),
        (a.devices.is_some(), "--devices"),
        (
            a.format != SolutionFormat::Jsonl,
            "--format other than jsonl",
        ),
    ];
    if let Some((_, flag)) = unsupported.iter().find(|(on, _)| *on) {
        return Err(Error::Usage(format!(
            "{flag} is not available under MPI; run it as one process"
        )));
    }
    let world = Arc::new(World(world));
    let clock = std::time::Instant::now();
    let code = if world.0.rank() == 0 {
        master(a, system, opts, backend, header, &world, clock)?
    } else {
        worker(system, opts, backend, &world)?
    };
    // `universe` finalizes MPI when dropped, after every rank's last message.
    drop(universe);
    Ok(Some(code))
}

/// A worker: the first pass of the batches the master hands out.
fn worker(
    system: &System,
    opts: &SolveOptions,
    backend: &mut dyn Backend,
    world: &Arc<World>,
) -> Result<i32> {
    let feed = WorkerFeed::new(Arc::clone(world));
    let o = SolveOptions {
        plan: Plan {
            feed: Some(Feed(feed.clone())),
            first_pass_only: true,
            ..Default::default()
        },
        ..opts.clone()
    };
    solve(system, &o, backend, &mut |e: &crate::post::Endpoint| {
        feed.record(e);
        Ok(())
    })?;
    Ok(0)
}

/// The master: hands out batches, writes their lines to `-o` as they come, then runs the
/// recovery rounds over all endpoints and prints the summary.
fn master(
    a: &SolveArgs,
    system: &System,
    opts: &SolveOptions,
    backend: &mut dyn Backend,
    header: &RunHeader,
    world: &Arc<World>,
    clock: std::time::Instant,
) -> Result<i32> {
    // The first pass's lines as the workers report them (a checkpoint, as in one process).
    let mut out = match &a.output {
        Some(p) => {
            let io = |e| Error::io(format!("writing {}", p.display()), e);
            std::fs::write(p, header.line() + "\n").map_err(io)?;
            let f = std::fs::OpenOptions::new()
                .append(true)
                .open(p)
                .map_err(io)?;
            Some((f, p))
        }
        None => None,
    };
    let mut write_line = |l: &str| -> Result<()> {
        if let Some((f, p)) = &mut out {
            use std::io::Write;
            writeln!(f, "{l}").map_err(|e| Error::io(format!("writing {}", p.display()), e))?;
        }
        Ok(())
    };
    let (done, _) = serve(world, MIN_BATCH, &mut write_line)?;
    drop(out);
    let first_pass = clock.elapsed().as_secs_f64();
    let o = SolveOptions {
        plan: Plan {
            done: Some(Arc::new(done)),
            ..Default::default()
        },
        ..opts.clone()
    };
    let mut writer = match &a.output {
        Some(p) => Some(SolutionWriter::append(p)?),
        None => None,
    };
    struct Recovery<'w> {
        progress: Progress,
        writer: &'w mut Option<SolutionWriter>,
    }
    impl Observer for Recovery<'_> {
        fn phase(&mut self, phase: Phase) {
            self.progress.set_phase(phase);
        }
        fn endpoint(&mut self, e: &crate::post::Endpoint) -> Result<()> {
            self.progress.endpoint(e.path, e.attempt);
            match self.writer {
                Some(w) => w.write(e),
                None => Ok(()),
            }
        }
    }
    let mut obs = Recovery {
        progress: Progress::new(a.quiet),
        writer: &mut writer,
    };
    let mut summary = solve(system, &o, backend, &mut obs)?;
    obs.progress.finish();
    // The whole run's seconds; the workers' first pass (start system and tracking, as the
    // master waited for it) is counted as tracking.
    summary.seconds = clock.elapsed().as_secs_f64();
    summary.phases.tracking += first_pass;
    crate::cli::outputs::finish_run(&summary, a.solutions.as_deref(), &system.variables, a.json)?;
    Ok(0)
}
