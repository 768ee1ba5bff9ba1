//! GPU backend of the row reduction for Z/p in `u64` words (p < 2^63), `f64` and complex
//! `f64` (`kernels/rref_gen.cu`, one NVRTC module per element type and prime).
//!
//! Same scheme as the `u32` backend ([`super::cuda`]): a row-major device matrix, no row
//! swaps (a state byte per row, one gather at the end), the CPU engine's pivot rule.
//!
//! * Z/p, `u64` words: [`GpuAlgo::Columns`] only (a blocked request runs it too): per
//!   column a one-block pivot search (first non-zero candidate), multipliers, pivot-row
//!   scaling and a rank-1 update with products `a·b mod p` by Montgomery's REDC
//!   (R = 2^64, 128-bit products via `__umul64hi`). Exact: the result equals
//!   [`super::echelonize`]'s in everything [`Echelon`] holds.
//! * `f64`, complex `f64`: row scaling and the zero tolerance are those of the CPU engine
//!   (computed on the host by the same code), partial pivoting (largest |x| above the
//!   tolerance, ties to the smallest row). `Columns`: the per-column sequence above.
//!   `Blocked`: panels of 64/128 columns factored on a column-major copy (candidate rows
//!   eliminated eagerly there, pivot rows formed at full width and kept mutually reduced),
//!   then `A[:, c0:] −= M·P` for every other row as one cuBLAS DGEMM / ZGEMM
//!   (`M` = the rows' original entries at the panel's pivot columns), then exact zeros on
//!   the panel's columns as the CPU engine writes them. Results equal the CPU engine's up to
//!   rounding (same pivots for matrices whose pivot choices are not near ties).

use super::cuda::{grid, one_thread, perm_sign, CudaRref, GpuAlgo, GpuTimes, NONE, PANEL};
use super::dense::Matrix;
use super::echelon::{tolerance_for, Echelon, EchelonOptions};
use super::field::{Field, Zp64, C64, F64};
use super::ops::{null_from_rref, solution_from_reduced, Solution};
use crate::error::{Error, Result};
use crate::gpu::{cuda_err, guarded, Timer};
use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use std::time::Instant;

const SOURCE: &str = include_str!("../../../kernels/rref_gen.cu");

const NAMES: [&str; 16] = [
    "g_col_search",
    "g_col_mults",
    "g_col_scale",
    "g_col_eliminate",
    "g_col_free",
    "g_col_step_end",
    "g_panel_gather",
    "g_panel_search",
    "g_panel_pivot_row",
    "g_panel_pivot_scale",
    "g_panel_eliminate",
    "g_panel_step_end",
    "g_build_m",
    "g_panel_clean",
    "g_write_pivots",
    "g_gather_rows",
];

#[derive(Clone, Copy)]
enum G {
    ColSearch = 0,
    ColMults,
    ColScale,
    ColEliminate,
    ColFree,
    ColStepEnd,
    PanelGather,
    PanelSearch,
    PanelPivotRow,
    PanelPivotScale,
    PanelEliminate,
    PanelStepEnd,
    BuildM,
    PanelClean,
    WritePivots,
    GatherRows,
}

/// Threads of the one-block pivot search (`SEARCH_THREADS` in the kernel).
const SEARCH_THREADS: u32 = 1024;

/// An element type the generic GPU kernels support.
pub trait GpuField: Field {
    /// The `#define` header selecting the element type in `kernels/rref_gen.cu`.
    fn header(&self) -> String;
    /// Checks an entry (Z/p: reduced mod p); `Err(cause)` otherwise.
    fn check(&self, _x: Self::Elem) -> std::result::Result<(), String> {
        Ok(())
    }
    /// The blocked route exists (floats: a cuBLAS GEMM trailing update).
    const BLOCKED: bool;
    /// Complex elements (ZGEMM).
    const COMPLEX: bool;
}

/// `−p^{-1} mod 2^64` for odd `p` (Newton iteration on the 2-adic inverse).
fn neg_inv_2_64(p: u64) -> u64 {
    let mut x = p; // correct to 3 bits for odd p
    for _ in 0..6 {
        x = x.wrapping_mul(2u64.wrapping_sub(p.wrapping_mul(x)));
    }
    x.wrapping_neg()
}

impl GpuField for Zp64 {
    fn header(&self) -> String {
        let p = self.prime();
        if p == 2 {
            // REDC needs an odd modulus: the kernel multiplies bits directly (P_IS_2).
            return "#define ZP64\n#define P_IS_2\n#define P 2ull\n#define PNEG 0ull\n#define R2 1ull\n"
                .into();
        }
        let pneg = neg_inv_2_64(p);
        let r = (1u128 << 64) % p as u128;
        let r2 = (r * r) % p as u128;
        format!("#define ZP64\n#define P {p}ull\n#define PNEG {pneg}ull\n#define R2 {r2}ull\n")
    }
    fn check(&self, x: u64) -> std::result::Result<(), String> {
        if x < self.prime() {
            Ok(())
        } else {
            Err(format!("{x} is not reduced mod {}", self.prime()))
        }
    }
    const BLOCKED: bool = false;
    const COMPLEX: bool = false;
}

impl GpuField for F64 {
    fn header(&self) -> String {
        "#define F64\n".into()
    }
    const BLOCKED: bool = true;
    const COMPLEX: bool = false;
}

impl GpuField for C64 {
    fn header(&self) -> String {
        "#define C64\n".into()
    }
    const BLOCKED: bool = true;
    const COMPLEX: bool = true;
}

macro_rules! glaunch {
    ($fs:expr, $dev:expr, $k:expr, $cfg:expr; $($arg:expr),*) => {{
        let f: &CudaFunction = &$fs[$k as usize];
        let mut b = $dev.stream.launch_builder(f);
        $( b.arg(&$arg); )*
        unsafe { b.launch($cfg) }
            .map_err(|e| cuda_err(&format!("cuLaunchKernel({})", NAMES[$k as usize]), e))?;
    }};
}

fn search_cfg() -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (SEARCH_THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Device buffers of one call.
struct Bufs {
    a: crate::gpu::DBuf,
    state: crate::gpu::DBuf,
    ctl: crate::gpu::DBuf,
    pcols: crate::gpu::DBuf,
    prows: crate::gpu::DBuf,
    pvals: crate::gpu::DBuf,
    sc: crate::gpu::DBuf,
}

impl CudaRref {
    fn load_gen(&mut self, header: &str) -> Result<Vec<CudaFunction>> {
        if let Some((_, f)) = self.gen.iter().find(|(h, _)| h == header) {
            self.compile_seconds = 0.0;
            return Ok(f.clone());
        }
        let t = Instant::now();
        let src = format!("{header}#define BMAX {PANEL}\n{SOURCE}");
        let f = crate::gpu::compile(&self.dev, &src, "rref_gen.cu", &NAMES)?;
        self.gen.push((header.to_string(), f.clone()));
        self.compile_seconds = t.elapsed().as_secs_f64();
        Ok(f)
    }

    /// Brings `a` to reduced row echelon form in place on the GPU, as
    /// [`super::echelonize`] does on the CPU: the same row order (pivot rows by pivot
    /// column, then the others in input order) and [`Echelon`] data. Uses from `opt`:
    /// `pivot_limit`, `tolerance` and `row_scaling` (floats); the result is always the
    /// fully reduced form (`reduce_above` is ignored), `block` and `parallelism` do not
    /// apply. Errors (no panic) for an entry not reduced mod p, a shape beyond u32
    /// indices, or a device failure.
    pub fn echelonize_gpu<F: GpuField>(
        &mut self,
        f: &F,
        a: &mut Matrix<F::Elem>,
        opt: &EchelonOptions,
        algo: GpuAlgo,
    ) -> Result<(Echelon<F::Elem>, GpuTimes)> {
        let (m, n) = (a.rows, a.cols);
        if a.data.len() != m * n {
            return Err(Error::Usage(format!(
                "rref --backend cuda: matrix data has {} entries, expected {m} × {n}",
                a.data.len()
            )));
        }
        for (idx, &x) in a.data.iter().enumerate() {
            if let Err(cause) = f.check(x) {
                return Err(Error::Usage(format!(
                    "rref --backend cuda: entry ({}, {}): {cause}",
                    idx / n.max(1) + 1,
                    idx % n.max(1) + 1
                )));
            }
        }
        if m >= (1 << 31) || n >= (1 << 31) || m.saturating_mul(n) >= (1 << 40) {
            return Err(Error::Usage(format!(
                "rref --backend cuda: {m} × {n} exceeds the supported size"
            )));
        }
        let lim = opt.pivot_limit.min(n);
        // Row scaling and tolerance exactly as the CPU engine.
        let mut det_scale = f.one();
        if !F::EXACT && opt.row_scaling {
            for i in 0..m {
                let row = &mut a.data[i * n..(i + 1) * n];
                let mx = row[..lim]
                    .iter()
                    .fold(0.0f64, |acc, &x| acc.max(f.magnitude(x)));
                if mx > 0.0 && mx.is_finite() {
                    let s = f.from_f64(1.0 / mx);
                    for x in row.iter_mut() {
                        *x = f.mul(*x, s);
                    }
                    det_scale = f.mul(det_scale, f.from_f64(mx));
                }
            }
        }
        let tol = tolerance_for(f, a, opt.tolerance, lim);
        let mut times = GpuTimes::default();
        if m == 0 || n == 0 || lim == 0 {
            let e = Echelon {
                pivots: vec![],
                rank: 0,
                row_perm: (0..m).collect(),
                pivot_values: vec![],
                perm_sign: 1,
                tolerance: tol,
                det_scale,
            };
            return Ok((e, times));
        }
        let header = f.header();
        guarded("rref on the GPU", || {
            let fs = self.load_gen(&header)?;
            let blocked = F::BLOCKED
                && match algo {
                    GpuAlgo::Columns => false,
                    GpuAlgo::Blocked => true,
                    GpuAlgo::Auto => n >= self.auto_blocked_from,
                };
            times.blocked = blocked;
            let es = std::mem::size_of::<F::Elem>();
            let t_all = Instant::now();
            let r = m.min(n).max(PANEL);
            let bufs = Bufs {
                a: self.dev.alloc::<u8>(m * n * es)?,
                state: self.dev.alloc::<u8>(m)?,
                ctl: self.dev.alloc::<u32>(4)?,
                pcols: self.dev.alloc::<u32>(r)?,
                prows: self.dev.alloc::<u32>(r)?,
                pvals: self.dev.alloc::<u8>(r * es)?,
                sc: self.dev.alloc::<u8>(es)?,
            };
            self.dev.htod(&bufs.a, &a.data)?;
            self.dev.fill_bytes(&bufs.state, 0)?;
            self.dev.htod(&bufs.ctl, &[NONE, 0, 0, 0])?;
            self.dev.sync()?;
            times.upload = t_all.elapsed().as_secs_f64();
            let timer = Timer::new(&self.dev)?;
            timer.start(&self.dev)?;
            let (pivots, prows) = if blocked {
                self.gen_blocked::<F>(&fs, &bufs, m, n, lim, tol)?
            } else {
                self.gen_columns::<F>(&fs, &bufs, m, n, lim, tol)?
            };
            let rank = pivots.len();
            let mut pvals = vec![f.zero(); rank];
            self.dev.dtoh(&mut pvals, &bufs.pvals)?;
            let mut is_piv = vec![false; m];
            for &r in &prows {
                is_piv[r] = true;
            }
            let mut row_perm = prows.clone();
            row_perm.extend((0..m).filter(|&r| !is_piv[r]));
            let perm32: Vec<u32> = row_perm.iter().map(|&r| r as u32).collect();
            let perm_d = self.dev.alloc::<u32>(m)?;
            self.dev.htod(&perm_d, &perm32)?;
            let out = self.dev.alloc::<u8>(m * n * es)?;
            let (ap, op, pp) = (bufs.a.ptr, out.ptr, perm_d.ptr);
            let (m32, n32) = (m as u32, n as u32);
            glaunch!(fs, self.dev, G::GatherRows, grid(n, m); ap, op, m32, n32, pp);
            times.compute = timer.stop_ms(&self.dev)? / 1e3;
            let t_down = Instant::now();
            self.dev.dtoh(&mut a.data, &out)?;
            times.download = t_down.elapsed().as_secs_f64();
            times.total = t_all.elapsed().as_secs_f64();
            let e = Echelon {
                perm_sign: perm_sign(&row_perm),
                pivots,
                rank,
                row_perm,
                pivot_values: pvals,
                tolerance: tol,
                det_scale,
            };
            Ok((e, times))
        })
    }

    /// The RREF of `a` (a copy) with the default options: see [`Self::echelonize_gpu`].
    #[allow(clippy::type_complexity)]
    pub fn rref_gpu<F: GpuField>(
        &mut self,
        f: &F,
        a: &Matrix<F::Elem>,
        algo: GpuAlgo,
    ) -> Result<(Matrix<F::Elem>, Echelon<F::Elem>, GpuTimes)> {
        let mut r = a.clone();
        let (e, t) = self.echelonize_gpu(f, &mut r, &EchelonOptions::default(), algo)?;
        Ok((r, e, t))
    }

    /// `A X = B` (any shape, several right-hand sides) by reducing `[A | B]` on the GPU with
    /// pivots limited to A's columns; read off as in [`super::solve`].
    pub fn solve_gpu<F: GpuField>(
        &mut self,
        f: &F,
        a: &Matrix<F::Elem>,
        b: &Matrix<F::Elem>,
        algo: GpuAlgo,
    ) -> Result<Solution<F::Elem>> {
        if a.rows != b.rows {
            return Err(Error::Usage(format!(
                "solve: A has {} rows, B has {}",
                a.rows, b.rows
            )));
        }
        let mut aug = a.hcat(b);
        let opt = EchelonOptions {
            pivot_limit: a.cols,
            ..Default::default()
        };
        let (e, _) = self.echelonize_gpu(f, &mut aug, &opt, algo)?;
        Ok(solution_from_reduced(f, &aug, &e, a.cols))
    }

    /// Inverse of a square `a` by Gauss–Jordan on `[A | I]` on the GPU; `None` when
    /// singular (under the tolerance for floats).
    pub fn inverse_gpu<F: GpuField>(
        &mut self,
        f: &F,
        a: &Matrix<F::Elem>,
        algo: GpuAlgo,
    ) -> Result<Option<Matrix<F::Elem>>> {
        if a.rows != a.cols {
            return Err(Error::Usage(format!(
                "inverse: {} × {} is not square",
                a.rows, a.cols
            )));
        }
        let n = a.rows;
        let mut aug = a.hcat(&Matrix::identity(f, n));
        let opt = EchelonOptions {
            pivot_limit: n,
            ..Default::default()
        };
        let (e, _) = self.echelonize_gpu(f, &mut aug, &opt, algo)?;
        Ok((e.rank == n).then(|| aug.block(0, n, n, 2 * n)))
    }

    /// A basis of `{x : A x = 0}` (columns of an `n × (n − rank)` matrix) from the GPU RREF.
    pub fn null_space_gpu<F: GpuField>(
        &mut self,
        f: &F,
        a: &Matrix<F::Elem>,
        algo: GpuAlgo,
    ) -> Result<Matrix<F::Elem>> {
        let (r, e, _) = self.rref_gpu(f, a, algo)?;
        Ok(null_from_rref(f, &r, &e.pivots, a.cols))
    }

    /// Reads `ctl[1]` and the first `k` recorded pivot columns and rows.
    fn gen_read_pivots(&self, b: &Bufs) -> Result<(Vec<u32>, Vec<u32>)> {
        let mut ctl = [0u32; 4];
        self.dev.dtoh(&mut ctl, &b.ctl)?;
        let k = ctl[1] as usize;
        let mut pc = vec![0u32; k];
        let mut pr = vec![0u32; k];
        self.dev.dtoh(&mut pc, &b.pcols)?;
        self.dev.dtoh(&mut pr, &b.prows)?;
        Ok((pc, pr))
    }

    /// One kernel sequence per column (pivot values straight into `pvals`).
    fn gen_columns<F: GpuField>(
        &mut self,
        fs: &[CudaFunction],
        b: &Bufs,
        m: usize,
        n: usize,
        lim: usize,
        tol: f64,
    ) -> Result<(Vec<usize>, Vec<usize>)> {
        let es = std::mem::size_of::<F::Elem>();
        let mult = self.dev.alloc::<u8>(m * es)?;
        let (a, st, ctl, pc, pr, pv, sc, mu) = (
            b.a.ptr,
            b.state.ptr,
            b.ctl.ptr,
            b.pcols.ptr,
            b.prows.ptr,
            b.pvals.ptr,
            b.sc.ptr,
            mult.ptr,
        );
        let (m32, n32, above) = (m as u32, n as u32, 1u32);
        for c in 0..lim {
            if c % 256 == 255 {
                let mut h = [0u32; 4];
                self.dev.dtoh(&mut h, &b.ctl)?;
                if h[1] as usize >= m {
                    break;
                }
            }
            let c32 = c as u32;
            glaunch!(fs, self.dev, G::ColSearch, search_cfg(); a, st, m32, n32, c32, tol, ctl);
            glaunch!(fs, self.dev, G::ColMults, grid(m, 1); a, st, m32, n32, c32, above, ctl, mu, pv, sc);
            glaunch!(fs, self.dev, G::ColScale, grid(n - c, 1); a, n32, c32, ctl, sc);
            glaunch!(fs, self.dev, G::ColEliminate, grid(n - c, m); a, m32, n32, c32, ctl, mu);
            if !F::EXACT {
                glaunch!(fs, self.dev, G::ColFree, grid(m, 1); a, st, m32, n32, c32, ctl);
            }
            glaunch!(fs, self.dev, G::ColStepEnd, one_thread(); c32, ctl, st, pc, pr);
        }
        let (pcs, prs) = self.gen_read_pivots(b)?;
        Ok((
            pcs.iter().map(|&x| x as usize).collect(),
            prs.iter().map(|&x| x as usize).collect(),
        ))
    }

    /// Blocked Gauss–Jordan with a GEMM trailing update (floats).
    fn gen_blocked<F: GpuField>(
        &mut self,
        fs: &[CudaFunction],
        b: &Bufs,
        m: usize,
        n: usize,
        lim: usize,
        tol: f64,
    ) -> Result<(Vec<usize>, Vec<usize>)> {
        let es = std::mem::size_of::<F::Elem>();
        let q = self.dev.alloc::<u8>(m * PANEL * es)?;
        let pm = self.dev.alloc::<u8>(PANEL * n * es)?;
        let xs = self.dev.alloc::<u8>(PANEL * es)?;
        let nrow = self.dev.alloc::<u8>(n * es)?;
        let mm = self.dev.alloc::<u8>(m * PANEL * es)?;
        let pflag = self.dev.alloc::<u8>(PANEL)?;
        // Panel pivot values go here, then to their place in `pvals`.
        let ppv = self.dev.alloc::<u8>(PANEL * es)?;
        let (a, st, ctl, pc, pr, sc) = (
            b.a.ptr,
            b.state.ptr,
            b.ctl.ptr,
            b.pcols.ptr,
            b.prows.ptr,
            b.sc.ptr,
        );
        let (qp, pmp, xsp, nrp, mmp, pfp, ppvp) =
            (q.ptr, pm.ptr, xs.ptr, nrow.ptr, mm.ptr, pflag.ptr, ppv.ptr);
        let (m32, n32, above) = (m as u32, n as u32, 1u32);
        let mut pivots = Vec::new();
        let mut prows = Vec::new();
        let mut pv_bytes: Vec<u8> = Vec::new();
        let mut c0 = 0;
        let panel = self.auto_panel(n);
        while c0 < lim && pivots.len() < m {
            let bw = panel.min(lim - c0);
            let w = n - c0;
            let (c032, bw32, w32) = (c0 as u32, bw as u32, w as u32);
            self.dev.htod(&b.ctl, &[NONE, 0, 0, 0])?;
            self.dev.fill_bytes(&pflag, 0)?;
            glaunch!(fs, self.dev, G::PanelGather, grid(m * bw, 1); a, qp, m32, n32, c032, bw32);
            for j in 0..bw {
                let j32 = j as u32;
                glaunch!(fs, self.dev, G::PanelSearch, search_cfg(); qp, st, m32, j32, tol, ctl);
                glaunch!(fs, self.dev, G::PanelPivotRow, grid(w, 1); a, n32, c032, w32, j32, ctl, pc, pmp, nrp, xsp, ppvp, sc);
                glaunch!(fs, self.dev, G::PanelPivotScale, grid(w, j + 1); w32, j32, ctl, pfp, pmp, nrp, xsp, sc);
                glaunch!(fs, self.dev, G::PanelEliminate, grid(m, (bw - j - 1).max(1)); qp, st, m32, bw32, w32, j32, ctl, pmp);
                glaunch!(fs, self.dev, G::PanelStepEnd, one_thread(); j32, ctl, st, pfp, pc, pr);
            }
            let (pcs, prs) = self.gen_read_pivots(b)?;
            let k = pcs.len();
            if k > 0 {
                let k32 = k as u32;
                glaunch!(fs, self.dev, G::BuildM, grid(m * k, 1); a, st, m32, n32, c032, k32, above, pc, mmp);
                // Column-major view: A[:, c0:]ᵀ (w × m, ld n) −= Pmᵀ (w × k, ld w) · Mᵀ (k × m, ld k).
                unsafe {
                    self.blas.gemm_cm(
                        F::COMPLEX,
                        w,
                        m,
                        k,
                        -1.0,
                        pmp,
                        w,
                        mmp,
                        k,
                        1.0,
                        b.a.at::<F::Elem>(c0),
                        n,
                    )?
                };
            }
            glaunch!(fs, self.dev, G::PanelClean, grid(m * bw, 1); a, st, m32, n32, c032, bw32, above, pfp);
            if k > 0 {
                let k32 = k as u32;
                let mut cfg = grid(w, 1);
                cfg.grid_dim.1 = k32;
                glaunch!(fs, self.dev, G::WritePivots, cfg; a, st, n32, c032, w32, k32, pr, pmp);
                let mut tmp = vec![0u8; k * es];
                self.dev.dtoh(&mut tmp, &ppv)?;
                pv_bytes.extend_from_slice(&tmp);
                pivots.extend(pcs.iter().map(|&j| c0 + j as usize));
                prows.extend(prs.iter().map(|&r| r as usize));
            }
            c0 += bw;
        }
        self.dev.htod(&b.pvals, &pv_bytes)?;
        Ok((pivots, prows))
    }
}
