//! The Krawczyk test on a CUDA GPU: kernels/certify.cu, one thread per point, in interval
//! arithmetic with the device's directed-rounding intrinsics (docs/certification.md, "On
//! the GPU"). The system is flattened by [`super::packed`] and compiled into the kernel's
//! sizes by NVRTC (cached like every other kernel, [`crate::gpu::jit`]); points go up in
//! chunks of at most [`CHUNK`], flags, radii and enclosures come back, and the certificates
//! are the ones the CPU batch makes ([`super::packed::certificate_from`]). The distinct and
//! real counts are then taken on the host ([`super::summarize`]), as for the CPU batch.

use super::batch::BatchCertifier;
use super::krawczyk::Certificate;
use super::packed::{certificate_from, PackedSystem, KERNEL_NAME};
use crate::error::{Error, Result};
use crate::gpu::{self, cuda_err, DBuf, Device};
use crate::system::System;
use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use num_complex::Complex64 as C64;

/// Points per launch at most (the buffers are sized for this many).
pub const CHUNK: usize = 1 << 16;
/// Threads per block: each thread holds its own Jacobian enclosure and inverse in local
/// memory, so blocks are kept small.
const BLOCK: u32 = 64;

/// The kernel compiled for one system on one GPU, with the system uploaded.
pub struct GpuCertifier {
    dev: Device,
    kernel: CudaFunction,
    n: usize,
    ints: DBuf,
    coef: DBuf,
    /// The host's double-double test, for the points the kernel leaves undecided.
    dd: super::dd_krawczyk::DdSystem,
    /// How the kernel was obtained (NVRTC seconds or the disk cache).
    pub compile_note: String,
}

impl GpuCertifier {
    /// Opens GPU `ordinal` (its own stream), compiles the kernel for `system` and uploads
    /// the system. Fails with `Error::Cuda` (never panics) without a usable GPU.
    pub fn new(ordinal: usize, system: &System) -> Result<GpuCertifier> {
        let packed = PackedSystem::new(system)?;
        let dev = Device::open(ordinal)?;
        let unit = gpu::Unit {
            name: "certify.cu",
            source: packed.source(),
            functions: &[KERNEL_NAME],
        };
        let mut compiled = gpu::compile_units(&dev, std::slice::from_ref(&unit))?;
        let compile_note = compiled.summary();
        let kernel = compiled
            .functions
            .pop()
            .and_then(|mut f| f.pop())
            .ok_or_else(|| Error::Internal("certify.cu: no kernel loaded".into()))?;
        let ints = dev.alloc::<i32>(packed.ints.len())?;
        let coef = dev.alloc::<f64>(packed.coef.len().max(1))?;
        dev.htod(&ints, &packed.ints)?;
        dev.htod(&coef, &packed.coef)?;
        dev.sync()?;
        Ok(GpuCertifier {
            dev,
            kernel,
            n: packed.n,
            ints,
            coef,
            dd: super::dd_krawczyk::DdSystem::new(system),
            compile_note,
        })
    }

    /// "NVIDIA H200 (device 0, sm_90)".
    pub fn device_description(&self) -> String {
        format!(
            "{} (device {}, sm_{}{})",
            self.dev.name, self.dev.ordinal, self.dev.cc.0, self.dev.cc.1
        )
    }

    /// Registers and local-memory bytes per thread of the kernel (compiler report).
    pub fn kernel_report(&self) -> String {
        format!(
            "{KERNEL_NAME}: {} regs, {} B local",
            self.kernel.num_regs().unwrap_or(-1),
            self.kernel.local_size_bytes().unwrap_or(-1)
        )
    }

    /// The test at each point (`None` points and points of the wrong length are not tried):
    /// on the device in double precision ([`Self::certify_points_double`]), then the points
    /// left undecided on the host's cores with a double-double centre
    /// ([`super::dd_krawczyk`]).
    pub fn certify_points(
        &mut self,
        points: &[Option<Vec<C64>>],
    ) -> Result<Vec<Option<Certificate>>> {
        use rayon::prelude::*;
        let mut out = self.certify_points_double(points)?;
        let n = self.n;
        let undecided: Vec<usize> = (0..points.len())
            .filter(|&i| out[i].is_none() && points[i].as_ref().is_some_and(|x| x.len() == n))
            .collect();
        let dd = &self.dd;
        let redone: Vec<Option<Certificate>> = undecided
            .par_iter()
            .map(|&i| points[i].as_deref().and_then(|x| dd.certify(x)))
            .collect();
        for (i, c) in undecided.into_iter().zip(redone) {
            out[i] = c;
        }
        Ok(out)
    }

    /// The kernel's double-precision test alone.
    pub fn certify_points_double(
        &mut self,
        points: &[Option<Vec<C64>>],
    ) -> Result<Vec<Option<Certificate>>> {
        let n = self.n;
        let tried: Vec<usize> = points
            .iter()
            .enumerate()
            .filter(|(_, x)| x.as_ref().is_some_and(|x| x.len() == n))
            .map(|(i, _)| i)
            .collect();
        let mut out: Vec<Option<Certificate>> = vec![None; points.len()];
        if tried.is_empty() {
            return Ok(out);
        }
        let cap = tried.len().min(CHUNK);
        let d_pts = self.dev.alloc::<f64>(cap * 2 * n)?;
        let d_radius = self.dev.alloc::<f64>(cap)?;
        let d_flags = self.dev.alloc::<i32>(cap)?;
        let d_encl = self.dev.alloc::<f64>(cap * 4 * n)?;
        let mut host_pts = Vec::with_capacity(cap * 2 * n);
        let (mut radius, mut flags, mut encl) =
            (vec![0f64; cap], vec![0i32; cap], vec![0f64; cap * 4 * n]);
        for chunk in tried.chunks(cap) {
            let p = chunk.len();
            host_pts.clear();
            for &i in chunk {
                for z in points[i].as_deref().unwrap_or_default() {
                    host_pts.push(z.re);
                    host_pts.push(z.im);
                }
            }
            self.dev.htod(&d_pts, &host_pts)?;
            // Poison: a flag word not written by the kernel reads as −1 and is caught below.
            self.dev.fill_bytes(&d_flags, 0xff)?;
            let cfg = LaunchConfig {
                grid_dim: (p.div_ceil(BLOCK as usize) as u32, 1, 1),
                block_dim: (BLOCK, 1, 1),
                shared_mem_bytes: 0,
            };
            let p32 = p as i32;
            let args = (
                d_pts.ptr,
                self.ints.ptr,
                self.coef.ptr,
                d_radius.ptr,
                d_flags.ptr,
                d_encl.ptr,
            );
            gpu::guarded("launching the Krawczyk kernel", || {
                self.dev.bind()?;
                // SAFETY: the argument list matches kernels/certify.cu's krawczyk_batch;
                // every buffer holds p points (or the whole system).
                unsafe {
                    self.dev
                        .stream
                        .launch_builder(&self.kernel)
                        .arg(&args.0)
                        .arg(&p32)
                        .arg(&args.1)
                        .arg(&args.2)
                        .arg(&args.3)
                        .arg(&args.4)
                        .arg(&args.5)
                        .launch(cfg)
                }
                .map(|_| ())
                .map_err(|e| cuda_err("cuLaunchKernel(krawczyk_batch)", e))
            })?;
            self.dev.dtoh(&mut flags[..p], &d_flags)?;
            self.dev.dtoh(&mut radius[..p], &d_radius)?;
            self.dev.dtoh(&mut encl[..p * 4 * n], &d_encl)?;
            if let Some(k) = flags[..p].iter().position(|&f| f < 0) {
                return Err(Error::Cuda(format!(
                    "Krawczyk kernel: point {k} of {p} has no verdict"
                )));
            }
            for (q, &i) in chunk.iter().enumerate() {
                let x = points[i].as_deref().unwrap_or_default();
                out[i] =
                    certificate_from(x, flags[q], radius[q], &encl[q * 4 * n..(q + 1) * 4 * n]);
            }
        }
        Ok(out)
    }
}

impl BatchCertifier for GpuCertifier {
    fn name(&self) -> String {
        "cuda".into()
    }

    fn certify_batch(&mut self, points: &[Option<Vec<C64>>]) -> Result<Vec<Option<Certificate>>> {
        self.certify_points(points)
    }
}
