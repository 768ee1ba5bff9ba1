//! The GPU layer shared by every CUDA engine (tracker backend, row reduction, permanent).
//!
//! Layers as in cudarc: `device` (one context + stream, raw buffers, copies, timers, every
//! failure an [`Error::Cuda`](crate::Error::Cuda) naming the call), `blas` (the cuBLAS handle),
//! and `jit` (NVRTC: CUDA C sources → loaded functions, with sizes or primes injected as
//! `#define`s by the caller; units compiled in parallel, images cached on disk). Nothing here panics when CUDA is absent.

pub mod blas;
pub mod device;
pub mod jit;
pub mod nvml;

pub use device::{cuda_err, guarded, DBuf, Device, PinnedBuf, Timer};

pub use jit::{compile_units, Compiled, Unit};

use crate::error::Result;
use cudarc::driver::CudaFunction;

/// Compiles one `source` for `dev` (through [`jit`]: CUBIN, cached; `name` appears in
/// compiler messages), loads it and returns the functions named in `functions`, in order.
pub fn compile(
    dev: &Device,
    source: &str,
    name: &str,
    functions: &[&str],
) -> Result<Vec<CudaFunction>> {
    let unit = Unit {
        name,
        source: source.into(),
        functions,
    };
    let mut c = compile_units(dev, std::slice::from_ref(&unit))?;
    Ok(c.functions.pop().unwrap_or_default())
}
