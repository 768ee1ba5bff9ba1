//! One GPU: the CUDA context, one stream, raw device buffers and host↔device copies.
//!
//! Every driver, NVRTC or cuBLAS failure becomes [`Error::Cuda`] naming the failing call.
//! cudarc loads `libcuda`, `libnvrtc` and `libcublas` at run time (`dynamic-loading`) and
//! panics when a library is missing, so [`probe_libraries`] first asks each loader whether
//! its library opens (cudarc's `is_culib_present`, which never panics) and the first
//! driver calls run under `catch_unwind` as a second guard (a library that opens but lacks
//! a symbol also panics inside cudarc).

use crate::error::{Error, Result};
use cudarc::driver::{result as dr, sys as dsys, CudaContext, CudaStream};
use std::sync::Arc;

/// `Error::Cuda` for a failed call.
pub fn cuda_err(call: &str, e: impl std::fmt::Display) -> Error {
    Error::Cuda(format!("{call} failed: {e}"))
}

/// Checks that the CUDA driver, NVRTC and cuBLAS shared libraries can be loaded.
pub fn probe_libraries() -> Result<()> {
    let found = std::panic::catch_unwind(|| unsafe {
        (
            cudarc::driver::sys::is_culib_present(),
            cudarc::nvrtc::sys::is_culib_present(),
            cudarc::cublas::sys::is_culib_present(),
        )
    })
    .map_err(|_| Error::Cuda("probing the CUDA libraries panicked".into()))?;
    let missing: Vec<&str> = [
        (found.0, "libcuda (the NVIDIA driver)"),
        (found.1, "libnvrtc"),
        (found.2, "libcublas"),
    ]
    .iter()
    .filter(|(ok, _)| !ok)
    .map(|(_, name)| *name)
    .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::Cuda(format!(
            "cannot load {} (no CUDA installation found)",
            missing.join(", ")
        )))
    }
}

/// Whether the NVIDIA driver library (`libcuda`) loads: a machine without it has no GPU
/// to expect.
pub fn driver_present() -> bool {
    std::panic::catch_unwind(|| unsafe { cudarc::driver::sys::is_culib_present() }).unwrap_or(false)
}

/// Runs `f`, turning a panic inside cudarc into `Error::Cuda`.
pub fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(Error::Cuda(format!("{what}: {msg}")))
        }
    }
}

/// A context on one device with the stream all work is queued on.
pub struct Device {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub ordinal: usize,
    pub name: String,
    pub cc: (i32, i32),
    /// Streaming multiprocessors.
    pub sms: usize,
    /// `domain:bus:device.0`, as NVML names the device ([`super::nvml`]).
    pub pci_bus_id: String,
}

impl Device {
    /// Opens device `ordinal`; errors (never panics) when there is no driver or no device.
    pub fn open(ordinal: usize) -> Result<Device> {
        Self::open_with(ordinal, false)
    }

    /// [`Self::open`], with the stream at the device's highest priority where `high`: its
    /// kernels are scheduled before those of other streams as multiprocessors free up
    /// (work that the host waits for, beside long-running batches on another stream).
    pub fn open_with(ordinal: usize, high: bool) -> Result<Device> {
        probe_libraries()?;
        guarded("opening the CUDA device", || {
            dr::init().map_err(|e| cuda_err("cuInit", e))?;
            let count = dr::device::get_count().map_err(|e| cuda_err("cuDeviceGetCount", e))?;
            if count <= 0 {
                return Err(Error::Cuda("no CUDA device present".into()));
            }
            if ordinal >= count as usize {
                return Err(Error::Cuda(format!(
                    "--device {ordinal}: only {count} CUDA device(s) present"
                )));
            }
            let ctx =
                CudaContext::new(ordinal).map_err(|e| cuda_err("cuDevicePrimaryCtxRetain", e))?;
            let stream = if high {
                let (_, greatest) = dr::stream::get_priority_range()
                    .map_err(|e| cuda_err("cuCtxGetStreamPriorityRange", e))?;
                ctx.new_stream_with_priority(greatest)
                    .map_err(|e| cuda_err("cuStreamCreateWithPriority", e))?
            } else {
                ctx.new_stream()
                    .map_err(|e| cuda_err("cuStreamCreate", e))?
            };
            let name = ctx.name().map_err(|e| cuda_err("cuDeviceGetName", e))?;
            let cc = ctx
                .compute_capability()
                .map_err(|e| cuda_err("cuDeviceGetAttribute(compute capability)", e))?;
            let sms = ctx
                .attribute(dsys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                .map_err(|e| cuda_err("cuDeviceGetAttribute(multiprocessors)", e))?;
            let pci = |a, what| {
                ctx.attribute(a)
                    .map_err(|e| cuda_err(&format!("cuDeviceGetAttribute({what})"), e))
            };
            let pci_bus_id = format!(
                "{:08x}:{:02x}:{:02x}.0",
                pci(
                    dsys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID,
                    "PCI domain"
                )?,
                pci(
                    dsys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
                    "PCI bus"
                )?,
                pci(
                    dsys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID,
                    "PCI device"
                )?,
            );
            Ok(Device {
                ctx,
                stream,
                ordinal,
                name,
                cc,
                sms: sms.max(1) as usize,
                pci_bus_id,
            })
        })
    }

    pub fn bind(&self) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| cuda_err("cuCtxSetCurrent", e))
    }

    /// Free and total device memory in bytes.
    pub fn mem_info(&self) -> Result<(usize, usize)> {
        self.bind()?;
        dr::mem_get_info().map_err(|e| cuda_err("cuMemGetInfo", e))
    }

    /// Allocates `len` values of `T` (uninitialized); [`Error::DeviceMemory`] when the device
    /// has not the memory left.
    pub fn alloc<T>(&self, len: usize) -> Result<DBuf> {
        self.bind()?;
        let bytes = (len * std::mem::size_of::<T>()).max(1);
        let ptr = unsafe { dr::malloc_sync(bytes) }.map_err(|e| {
            let call = format!("cuMemAlloc({bytes} bytes)");
            if e.0 == dsys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                Error::DeviceMemory(format!("{call} failed: {e}"))
            } else {
                cuda_err(&call, e)
            }
        })?;
        Ok(DBuf {
            ptr,
            bytes,
            ctx: self.ctx.clone(),
        })
    }

    /// Copies `src` to the start of `dst` (stream-ordered; `src` may be reused on return).
    pub fn htod<T>(&self, dst: &DBuf, src: &[T]) -> Result<()> {
        let n = std::mem::size_of_val(src);
        if n > dst.bytes {
            return Err(Error::Internal(format!(
                "host→device copy of {n} bytes into {}",
                dst.bytes
            )));
        }
        if n == 0 {
            return Ok(());
        }
        unsafe { dr::memcpy_htod_async(dst.ptr, src, self.stream.cu_stream()) }
            .map_err(|e| cuda_err("cuMemcpyHtoDAsync", e))
    }

    /// Copies `src` to byte `offset` of `dst` (stream-ordered; `src` may be reused on return).
    pub fn htod_at<T>(&self, dst: &DBuf, offset: usize, src: &[T]) -> Result<()> {
        let n = std::mem::size_of_val(src);
        if offset + n > dst.bytes {
            return Err(Error::Internal(format!(
                "host→device copy of {n} bytes at {offset} into {}",
                dst.bytes
            )));
        }
        if n == 0 {
            return Ok(());
        }
        unsafe { dr::memcpy_htod_async(dst.ptr + offset as u64, src, self.stream.cu_stream()) }
            .map_err(|e| cuda_err("cuMemcpyHtoDAsync", e))
    }

    /// Page-locked host memory of `bytes` bytes.
    pub fn alloc_pinned(&self, bytes: usize) -> Result<PinnedBuf> {
        self.bind()?;
        let bytes = bytes.max(1);
        let ptr = unsafe { dr::malloc_host(bytes, 0) }
            .map_err(|e| cuda_err(&format!("cuMemHostAlloc({bytes} bytes)"), e))?;
        Ok(PinnedBuf {
            ptr: ptr as *mut u8,
            bytes,
            ctx: self.ctx.clone(),
            copied: None,
        })
    }

    /// Queues copies of byte ranges of `src` to device buffers, `(dst, dst offset, src
    /// offset, bytes)` each, without waiting; `src` cannot be written until they are done
    /// ([`PinnedBuf::bytes_mut`] waits).
    pub fn htod_pinned(
        &self,
        src: &mut PinnedBuf,
        copies: &[(&DBuf, usize, usize, usize)],
    ) -> Result<()> {
        for &(dst, at, from, n) in copies {
            if at + n > dst.bytes || from + n > src.bytes {
                return Err(Error::Internal(format!(
                    "pinned copy of {n} bytes from {from} to {at}: buffers of {} and {}",
                    src.bytes, dst.bytes
                )));
            }
            if n == 0 {
                continue;
            }
            // SAFETY: both ranges are inside their buffers (checked above); `src` stays
            // untouched until the event recorded below has passed.
            unsafe {
                dsys::cuMemcpyHtoDAsync_v2(
                    dst.ptr + at as u64,
                    src.ptr.add(from) as *const std::ffi::c_void,
                    n,
                    self.stream.cu_stream(),
                )
            }
            .result()
            .map_err(|e| cuda_err("cuMemcpyHtoDAsync", e))?;
        }
        let e = self
            .ctx
            .new_event(Some(dsys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .map_err(|e| cuda_err("cuEventCreate", e))?;
        e.record(&self.stream)
            .map_err(|e| cuda_err("cuEventRecord", e))?;
        src.copied = Some(e);
        Ok(())
    }

    /// Copies the start of `src` into `dst` and waits for it.
    pub fn dtoh<T>(&self, dst: &mut [T], src: &DBuf) -> Result<()> {
        let n = std::mem::size_of_val(dst);
        if n > src.bytes {
            return Err(Error::Internal(format!(
                "device→host copy of {n} bytes from {}",
                src.bytes
            )));
        }
        if n == 0 {
            return Ok(());
        }
        unsafe { dr::memcpy_dtoh_async(dst, src.ptr, self.stream.cu_stream()) }
            .map_err(|e| cuda_err("cuMemcpyDtoHAsync", e))?;
        self.sync()
    }

    /// Fills a buffer with the byte `v` (NaN patterns for poisoning in tests).
    pub fn fill_bytes(&self, buf: &DBuf, v: u8) -> Result<()> {
        unsafe { dr::memset_d8_async(buf.ptr, v, buf.bytes, self.stream.cu_stream()) }
            .map_err(|e| cuda_err("cuMemsetD8Async", e))
    }

    /// Captures the work `queue` puts on the stream as a CUDA graph (replayed by one launch).
    pub fn capture_graph(
        &self,
        queue: impl FnOnce() -> Result<()>,
    ) -> Result<cudarc::driver::CudaGraph> {
        use cudarc::driver::sys as dsys;
        let s = &self.stream;
        s.begin_capture(dsys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(|e| cuda_err("cuStreamBeginCapture", e))?;
        let queued = queue();
        let g = s
            .end_capture(dsys::CUgraphInstantiate_flags(0))
            .map_err(|e| cuda_err("cuStreamEndCapture", e))?;
        queued?;
        g.ok_or_else(|| Error::Cuda("stream capture produced no graph".into()))
    }

    pub fn sync(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| cuda_err("cuStreamSynchronize", e))
    }
}

/// Page-locked host memory (`cuMemHostAlloc`), freed on drop. A copy from pageable memory
/// may wait for the work queued before it on the stream; a copy from here does not, so the
/// host can queue uploads behind a running launch ([`Device::htod_pinned`]).
pub struct PinnedBuf {
    ptr: *mut u8,
    pub bytes: usize,
    ctx: Arc<CudaContext>,
    /// Recorded after the last copy from this buffer: [`PinnedBuf::bytes_mut`] waits for it.
    copied: Option<cudarc::driver::CudaEvent>,
}

// The buffer is plain host memory owned by this value; the context is thread-safe.
unsafe impl Send for PinnedBuf {}

impl PinnedBuf {
    /// The buffer's bytes, once the copies queued from it have been done.
    pub fn bytes_mut(&mut self) -> Result<&mut [u8]> {
        if let Some(e) = self.copied.take() {
            e.synchronize()
                .map_err(|e| cuda_err("cuEventSynchronize", e))?;
        }
        // SAFETY: `ptr` holds `bytes` bytes of host memory owned by this value, and no
        // copy from it is queued any more.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.bytes) })
    }
}

impl Drop for PinnedBuf {
    fn drop(&mut self) {
        if let Some(e) = self.copied.take() {
            let _ = e.synchronize();
        }
        if self.ctx.bind_to_thread().is_ok() {
            let _ = unsafe { dr::free_host(self.ptr as *mut std::ffi::c_void) };
        }
    }
}

/// A raw device allocation, freed on drop.
pub struct DBuf {
    pub ptr: dsys::CUdeviceptr,
    pub bytes: usize,
    ctx: Arc<CudaContext>,
}

impl DBuf {
    /// Device address `offset` elements of `T` into the buffer.
    pub fn at<T>(&self, offset: usize) -> u64 {
        self.ptr + (offset * std::mem::size_of::<T>()) as u64
    }
}

impl Drop for DBuf {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            let _ = unsafe { dr::free_sync(self.ptr) };
        }
    }
}

/// Timing events on the device's stream.
pub struct Timer {
    start: cudarc::driver::CudaEvent,
    stop: cudarc::driver::CudaEvent,
}

impl Timer {
    pub fn new(dev: &Device) -> Result<Timer> {
        let flags = Some(dsys::CUevent_flags::CU_EVENT_DEFAULT);
        Ok(Timer {
            start: dev
                .ctx
                .new_event(flags)
                .map_err(|e| cuda_err("cuEventCreate", e))?,
            stop: dev
                .ctx
                .new_event(flags)
                .map_err(|e| cuda_err("cuEventCreate", e))?,
        })
    }
    pub fn start(&self, dev: &Device) -> Result<()> {
        self.start
            .record(&dev.stream)
            .map_err(|e| cuda_err("cuEventRecord", e))
    }
    /// Records the stop event without waiting for it (see [`Timer::elapsed_ms`]).
    pub fn record_stop(&self, dev: &Device) -> Result<()> {
        self.stop
            .record(&dev.stream)
            .map_err(|e| cuda_err("cuEventRecord", e))
    }
    /// Waits for the stop event; milliseconds between the two events.
    pub fn elapsed_ms(&self) -> Result<f64> {
        self.stop
            .synchronize()
            .map_err(|e| cuda_err("cuEventSynchronize", e))?;
        self.start
            .elapsed_ms(&self.stop)
            .map(|v| v as f64)
            .map_err(|e| cuda_err("cuEventElapsedTime", e))
    }
    /// Records the stop event, waits for it, returns milliseconds since `start`.
    pub fn stop_ms(&self, dev: &Device) -> Result<f64> {
        self.record_stop(dev)?;
        self.elapsed_ms()
    }
}
