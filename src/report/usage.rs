//! What a phase of a solve used of the machine: the host's busy cores (the process's CPU
//! seconds over the phase's wall seconds) and, on a GPU, the device's mean utilization
//! ([`crate::gpu::nvml::BusySampler`]).

use crate::gpu::nvml::BusySampler;
use serde::Serialize;
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
}

/// Measures a phase from [`UsageMeter::start`] to [`UsageMeter::finish`].
pub struct UsageMeter {
    wall: Instant,
    cpu: Option<f64>,
    gpu: Option<BusySampler>,
}

impl UsageMeter {
    /// Starts measuring; `pci_bus_id`: the backend's GPU, if any.
    pub fn start(pci_bus_id: Option<String>) -> UsageMeter {
        UsageMeter {
            wall: Instant::now(),
            cpu: process_cpu_seconds(),
            gpu: pci_bus_id.and_then(|id| BusySampler::start(&id)),
        }
    }

    pub fn finish(self) -> Usage {
        let wall = self.wall.elapsed().as_secs_f64();
        let cpu = match (self.cpu, process_cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => 0.0,
        };
        Usage {
            host_cores: if wall > 0.0 { cpu / wall } else { 0.0 },
            gpu_busy_percent: self.gpu.and_then(BusySampler::finish),
        }
    }
}

/// User plus system CPU seconds of this process, all threads (`/proc/self/stat` fields 14
/// and 15, in the kernel's fixed 100 ticks per second); `None` off Linux.
pub fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_ascii_whitespace().skip(11);
    let utime: f64 = fields.next()?.parse().ok()?;
    let stime: f64 = fields.next()?.parse().ok()?;
    Some((utime + stime) / 100.0)
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
}
