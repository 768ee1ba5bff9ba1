//! What a phase of a solve used of the machine: the host's busy cores (the process's CPU
//! seconds over the phase's wall seconds), where those CPU seconds went by thread group
//! (`refine-3` and `refine-7` are the group `refine`), and, on a GPU, the device's mean
//! utilization ([`crate::gpu::nvml::BusySampler`]).

use crate::gpu::nvml::BusySampler;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// The machine's use during one phase (see [`crate::report::Phases::tracking_usage`]).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Usage {
    /// Mean busy host cores: CPU seconds of every thread of the process / wall seconds.
    pub host_cores: f64,
    /// Mean GPU utilization in percent (NVML), where the backend runs on a GPU that NVML
    /// knows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_busy_percent: Option<f64>,
    /// CPU seconds of the phase by thread group: `refine` (endpoints' refinement and
    /// classification), `host` (the CPU backend's tracking, and host paths beside a GPU),
    /// `cells` (mixed cells), `pathtrack` (the main thread: the tracker's loop, the tally),
    /// and `exited` for threads that ended during the phase. Linux only; empty elsewhere.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub host_threads: BTreeMap<String, f64>,
    /// The endpoints' refinement by part (`total`, `newton`, `condition`, `dd_newton`,
    /// `dd_tail`, `bridge`): seconds summed over the refinement threads, and calls
    /// ([`crate::post::cost`]).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub refine_parts: BTreeMap<String, crate::post::cost::PartCost>,
    /// Wall seconds the tracker's loop waited for the refinement threads because as many
    /// endpoints as it lets wait were still being refined (the refinement then sets the
    /// pace of the phase, and a GPU idles meanwhile).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited_for_refinement: Option<f64>,
}

/// Measures a phase from [`UsageMeter::start`] to [`UsageMeter::finish`].
pub struct UsageMeter {
    wall: Instant,
    cpu: Option<f64>,
    /// Each live thread's CPU seconds at the start, by thread id.
    threads: HashMap<u32, f64>,
    gpu: Option<BusySampler>,
}

impl UsageMeter {
    /// Starts measuring; `pci_bus_id`: the backend's GPU, if any.
    pub fn start(pci_bus_id: Option<String>) -> UsageMeter {
        UsageMeter {
            wall: Instant::now(),
            cpu: process_cpu_seconds(),
            threads: thread_cpu_seconds()
                .into_iter()
                .map(|t| (t.id, t.seconds))
                .collect(),
            gpu: pci_bus_id.and_then(|id| BusySampler::start(&id)),
        }
    }

    pub fn finish(self) -> Usage {
        let wall = self.wall.elapsed().as_secs_f64();
        let cpu = match (self.cpu, process_cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => 0.0,
        };
        let mut host_threads = BTreeMap::new();
        for t in thread_cpu_seconds() {
            let used = t.seconds - self.threads.get(&t.id).copied().unwrap_or(0.0);
            *host_threads.entry(t.group).or_insert(0.0) += used;
        }
        if !host_threads.is_empty() {
            let live: f64 = host_threads.values().sum();
            // Ended threads' seconds are in the process's total only (tick rounding aside).
            if cpu - live > 0.05 {
                host_threads.insert("exited".into(), cpu - live);
            }
        }
        Usage {
            host_cores: if wall > 0.0 { cpu / wall } else { 0.0 },
            gpu_busy_percent: self.gpu.and_then(BusySampler::finish),
            host_threads,
            refine_parts: BTreeMap::new(),
            waited_for_refinement: None,
        }
    }
}

/// One live thread's CPU seconds so far.
struct ThreadCpu {
    id: u32,
    /// The thread's name less a trailing `-N` (`refine-12` → `refine`).
    group: String,
    seconds: f64,
}

/// Every live thread of this process with its user plus system CPU seconds
/// (`/proc/self/task/TID/stat`, fields 14 and 15); empty off Linux.
fn thread_cpu_seconds() -> Vec<ThreadCpu> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let id: u32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        let (name, seconds) = stat_cpu_seconds(&stat)?;
        let group = match name.rsplit_once('-') {
            Some((g, n)) if !g.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => g,
            _ => name,
        };
        Some(ThreadCpu {
            id,
            group: group.to_string(),
            seconds,
        })
    })
    .collect()
}

/// The command name and the user plus system CPU seconds of a `stat` line of procfs (in the
/// kernel's fixed 100 ticks per second).
fn stat_cpu_seconds(stat: &str) -> Option<(&str, f64)> {
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let name = &stat[stat.find('(')? + 1..stat.rfind(')')?];
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_ascii_whitespace().skip(11);
    let utime: f64 = fields.next()?.parse().ok()?;
    let stime: f64 = fields.next()?.parse().ok()?;
    Some((name, (utime + stime) / 100.0))
}

/// User plus system CPU seconds of this process, all threads (`/proc/self/stat` fields 14
/// and 15, in the kernel's fixed 100 ticks per second); `None` off Linux.
pub fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    stat_cpu_seconds(&stat).map(|(_, seconds)| seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread that spins until the process has used 0.2 CPU seconds: the meter counts
    /// them (however loaded the machine), and never more cores than the machine has, up to
    /// the kernel's 10 ms tick on each of the process's threads (other tests run beside it).
    #[test]
    fn busy_threads_are_counted() {
        let outer = Instant::now();
        let meter = UsageMeter::start(None);
        let from = process_cpu_seconds().unwrap();
        let mut x = 0u64;
        while process_cpu_seconds().unwrap() - from < 0.2 {
            for _ in 0..10_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
        let u = meter.finish();
        let wall = outer.elapsed().as_secs_f64();
        let cores = std::thread::available_parallelism().unwrap().get() as f64;
        assert!(u.host_cores * wall >= 0.19, "{u:?} over {wall} s");
        let threads = std::fs::read_dir("/proc/self/task").map_or(1, |d| d.count()) as f64;
        assert!(
            u.host_cores * wall <= cores * wall + 0.01 * threads + 0.02,
            "{u:?} over {wall} s"
        );
        assert_eq!(u.gpu_busy_percent, None);
    }

    /// Spins in this thread until it has used `seconds` of CPU.
    fn spin(seconds: f64) {
        let from = thread_cpu_seconds_of_this();
        let mut x = 0u64;
        while thread_cpu_seconds_of_this() - from < seconds {
            for _ in 0..10_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
    }

    fn thread_cpu_seconds_of_this() -> f64 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        stat_cpu_seconds(&stat).unwrap().1
    }

    /// A named thread that spins 0.3 CPU seconds during the phase is its group's; one that
    /// spins and ends before the phase does is `exited`.
    #[test]
    fn cpu_seconds_go_to_their_thread_group() {
        let meter = UsageMeter::start(None);
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let (spun_tx, spun_rx) = std::sync::mpsc::channel::<()>();
        let alive = std::thread::Builder::new()
            .name("spinner-7".into())
            .spawn(move || {
                spin(0.3);
                spun_tx.send(()).unwrap();
                done_rx.recv().unwrap();
            })
            .unwrap();
        std::thread::Builder::new()
            .name("gone-1".into())
            .spawn(|| spin(0.3))
            .unwrap()
            .join()
            .unwrap();
        spun_rx.recv().unwrap();
        let u = meter.finish();
        done_tx.send(()).unwrap();
        alive.join().unwrap();
        let spinner = u.host_threads.get("spinner").copied().unwrap_or(0.0);
        assert!((0.28..0.5).contains(&spinner), "{u:?}");
        assert!(!u.host_threads.contains_key("gone"), "{u:?}");
        assert!(
            u.host_threads.get("exited").copied().unwrap_or(0.0) >= 0.25,
            "{u:?}"
        );
    }
}
