//! The GPU layer shared by every CUDA engine (tracker backend, row reduction, permanent).
//!
//! Layers as in cudarc: `device` (one context + stream, raw buffers, copies, timers, every
//! failure an [`Error::Cuda`](crate::Error::Cuda) naming the call), `blas` (the cuBLAS handle),
//! and [`compile`] (NVRTC: CUDA C source → loaded functions, with sizes or primes injected as
//! `#define`s by the caller). Nothing here panics when CUDA is absent.

pub mod blas;
pub mod device;

pub use device::{cuda_err, guarded, DBuf, Device, Timer};

use crate::error::{Error, Result};
use cudarc::driver::CudaFunction;
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};

/// Compiles `source` with NVRTC for `dev`'s architecture (`name` appears in compiler
/// messages), loads the module and returns the functions named in `functions`, in order.
pub fn compile(
    dev: &Device,
    source: &str,
    name: &str,
    functions: &[&str],
) -> Result<Vec<CudaFunction>> {
    guarded(&format!("compiling {name}"), || {
        let opts = CompileOptions {
            arch: dev.nvrtc_arch(),
            fmad: Some(true),
            name: Some(name.into()),
            ..Default::default()
        };
        let ptx = compile_ptx_with_opts(source, opts).map_err(|e| match e {
            cudarc::nvrtc::CompileError::CompileError { nvrtc, log, .. } => Error::Cuda(format!(
                "nvrtcCompileProgram({name}) failed: {nvrtc}\n{}",
                log.to_string_lossy()
            )),
            other => cuda_err("NVRTC", other),
        })?;
        dev.bind()?;
        let module = dev
            .ctx
            .load_module(ptx)
            .map_err(|e| cuda_err("cuModuleLoadData", e))?;
        functions
            .iter()
            .map(|f| {
                module
                    .load_function(f)
                    .map_err(|e| cuda_err(&format!("cuModuleGetFunction({f})"), e))
            })
            .collect()
    })
}
