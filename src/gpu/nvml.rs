//! How busy the GPU is while a solve runs: NVML's utilization counter sampled on a thread.
//!
//! `nvmlDeviceGetUtilizationRates` reports the percentage of the last sample period (1/6 s
//! to 1 s, by device) during which at least one kernel ran; its mean over a phase is the
//! phase's GPU busy time, the figure `nvidia-smi` shows as "GPU-Util". NVML is loaded at run
//! time (`libnvidia-ml.so.1`, installed with the driver), like the CUDA libraries: without
//! it, or on a device it does not know, there is no figure and nothing fails. The device is
//! found by its PCI bus id, which CUDA and NVML number alike (their ordinals may differ).

use libloading::{Library, Symbol};
use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Time between two samples.
pub const SAMPLE_PERIOD: Duration = Duration::from_millis(100);

#[repr(C)]
#[derive(Default)]
struct Utilization {
    gpu: c_uint,
    memory: c_uint,
}

type Device = *mut c_void;
type InitFn = unsafe extern "C" fn() -> c_int;
type ByPciFn = unsafe extern "C" fn(*const c_char, *mut Device) -> c_int;
type UtilFn = unsafe extern "C" fn(Device, *mut Utilization) -> c_int;

/// NVML opened for one device.
struct Nvml {
    lib: Library,
    device: Device,
}

// NVML's handles are thread-safe (its documentation: every call is).
unsafe impl Send for Nvml {}

impl Nvml {
    fn open(pci_bus_id: &str) -> Option<Nvml> {
        // SAFETY: the library's initializers have no preconditions; symbols are looked up
        // with the signatures of nvml.h.
        unsafe {
            let lib = Library::new("libnvidia-ml.so.1").ok()?;
            let init: Symbol<InitFn> = lib.get(b"nvmlInit_v2\0").ok()?;
            if init() != 0 {
                return None;
            }
            let by_pci: Symbol<ByPciFn> = lib.get(b"nvmlDeviceGetHandleByPciBusId_v2\0").ok()?;
            let id = CString::new(pci_bus_id).ok()?;
            let mut device: Device = std::ptr::null_mut();
            if by_pci(id.as_ptr(), &mut device) != 0 {
                return None;
            }
            Some(Nvml { lib, device })
        }
    }

    /// The device's current utilization in percent.
    fn busy(&self) -> Option<f64> {
        // SAFETY: `device` came from this library; `u` outlives the call.
        unsafe {
            let get: Symbol<UtilFn> = self.lib.get(b"nvmlDeviceGetUtilizationRates\0").ok()?;
            let mut u = Utilization::default();
            (get(self.device, &mut u) == 0).then_some(u.gpu as f64)
        }
    }
}

/// Samples a device's utilization every [`SAMPLE_PERIOD`] until [`BusySampler::finish`].
pub struct BusySampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<f64>>,
}

impl BusySampler {
    /// Starts sampling the device at `pci_bus_id` (`domain:bus:device.function`); `None`
    /// where NVML or the device is missing.
    pub fn start(pci_bus_id: &str) -> Option<BusySampler> {
        let nvml = Nvml::open(pci_bus_id)?;
        nvml.busy()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("gpu-busy".into())
            .spawn(move || {
                let mut samples = Vec::new();
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(SAMPLE_PERIOD);
                    samples.extend(nvml.busy());
                }
                samples
            })
            .ok()?;
        Some(BusySampler { stop, thread })
    }

    /// Stops sampling; the mean utilization in percent (`None` without a sample).
    pub fn finish(self) -> Option<f64> {
        self.stop.store(true, Ordering::Relaxed);
        let samples = self.thread.join().ok()?;
        mean(&samples)
    }
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_device_gives_no_figure() {
        // No NVML here, or no device at this bus id: no sampler, no panic.
        assert!(BusySampler::start("ffff:ff:1f.7").is_none());
        assert_eq!(mean(&[]), None);
        assert_eq!(mean(&[50.0, 100.0]), Some(75.0));
    }
}
