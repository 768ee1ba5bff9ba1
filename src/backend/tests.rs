//! The `--backend auto` rule and its backend.

use super::*;
use crate::error::Error;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The CPU for solves it finishes before the GPU starts, the GPU beyond; more threads move
/// the crossover up; a larger homotopy moves it down.
#[test]
fn the_cpu_takes_small_solves() {
    let startup = GPU_STARTUP_SECONDS;
    // katsura-9's total-degree homotopy: 512 paths, n = 10, 130 columns (~0.8 s on one thread)
    let est = cpu_seconds_estimate(512, 10, 130, 1);
    assert!(est > 0.5 && est < 1.5, "{est}");
    assert!(cpu_is_enough(512, 10, 130, 2, startup));
    // noon-6 (729 paths) and eco-9 (128): the CPU
    assert!(cpu_is_enough(729, 6, 54, 2, startup));
    assert!(cpu_is_enough(128, 9, 200, 1, startup));
    // cyclic-10 (35,940 paths): the GPU, even on 16 threads
    assert!(!cpu_is_enough(35_940, 10, 220, 16, startup));
    // where the crossover lies for a 10-unknown, 130-column homotopy on 2 threads
    let per_path = STEPS_PER_PATH * step_seconds(10, 130) / 2.0;
    let crossover = (startup / per_path) as u128;
    assert!(cpu_is_enough(crossover - 1, 10, 130, 2, startup));
    assert!(!cpu_is_enough(crossover + 1, 10, 130, 2, startup));
    assert!(cpu_is_enough(crossover + 1, 10, 130, 16, startup));
    assert!(!cpu_is_enough(crossover - 1, 10, 1300, 2, startup));
    // a step costs more with more unknowns and more columns
    assert!(step_seconds(10, 130) < step_seconds(10, 260));
    assert!(step_seconds(10, 130) < step_seconds(14, 130));
}

/// Makers that count their calls; the "GPU" one fails when `gpu_fails`.
fn counted(gpu_fails: bool) -> (AutoBackend, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let (cpus, gpus) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (c, g) = (cpus.clone(), gpus.clone());
    let make_cpu: BackendMaker = Box::new(move || {
        c.fetch_add(1, Ordering::Relaxed);
        Ok(Box::new(cpu::CpuBackend::new(1)?) as Box<dyn Backend>)
    });
    let make_gpu: BackendMaker = Box::new(move || {
        g.fetch_add(1, Ordering::Relaxed);
        if gpu_fails {
            Err(Error::Cuda("no device".into()))
        } else {
            Ok(Box::new(cpu::CpuBackend::new(1)?) as Box<dyn Backend>)
        }
    });
    (AutoBackend::new(make_cpu, make_gpu, 1, None), cpus, gpus)
}

fn katsura9() -> Homotopy {
    let sys = crate::system::families::generate("katsura", 9).unwrap();
    Homotopy::target_only(&sys)
}

/// A small solve never opens the GPU; a large one does, once, and falls back to the CPU
/// when it cannot; the batch follows the choice.
#[test]
fn auto_opens_the_gpu_only_for_large_solves() {
    let h = katsura9();
    let (mut b, cpus, gpus) = counted(false);
    b.expect_paths(64);
    b.set_homotopy(&h).unwrap();
    assert_eq!(
        (cpus.load(Ordering::Relaxed), gpus.load(Ordering::Relaxed)),
        (1, 0)
    );
    assert!(!b.on_gpu());
    assert_eq!(
        b.preferred_batch(),
        Some(crate::track::TrackerOptions::default().batch)
    );
    b.expect_paths(10_000_000);
    b.set_homotopy(&h).unwrap();
    b.expect_paths(20_000_000);
    b.set_homotopy(&h).unwrap();
    assert_eq!(gpus.load(Ordering::Relaxed), 1, "the GPU is opened once");
    assert!(b.on_gpu());
    assert_eq!(b.preferred_batch(), Some(GPU_BATCH));
    // no GPU: the CPU, and its batch
    let (mut b, cpus, gpus) = counted(true);
    b.expect_paths(10_000_000);
    b.set_homotopy(&h).unwrap();
    assert_eq!(
        (cpus.load(Ordering::Relaxed), gpus.load(Ordering::Relaxed)),
        (1, 1)
    );
    assert!(!b.on_gpu());
    assert_eq!(b.name(), "cpu");
    assert_eq!(
        b.preferred_batch(),
        Some(crate::track::TrackerOptions::default().batch)
    );
}
