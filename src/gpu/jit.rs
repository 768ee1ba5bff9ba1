//! Run-time compilation of CUDA C sources (NVRTC) into loaded kernels.
//!
//! Every source carries the problem's sizes (or prime) as `#define`s, so each system gets
//! its own programs, compiled when it is loaded. Three things keep that compilation short:
//!
//! - **CUBIN, not PTX.** NVRTC is asked for the device's real architecture (`sm_XY`), so it
//!   runs the assembler itself and `cuModuleLoadData` has nothing left to JIT. PTX (a
//!   `compute_XY` target, JIT-compiled by the driver at load) only for an architecture this
//!   module does not list, or when `PATHTRACK_JIT_PTX` is set (a diagnostic switch).
//! - **Units in parallel.** A caller splits its kernels into independent [`Unit`]s; each
//!   is compiled on its own thread (NVRTC compiles distinct programs concurrently), and the
//!   modules are loaded afterwards on the caller's thread, which holds the context.
//! - **A disk cache.** The image of each unit is stored under a name derived from the exact
//!   compile input (pathtrack's version, NVRTC's version, the options and the whole source);
//!   the file starts with that input and is used only when it matches byte for byte, so a
//!   hash collision can cost a compilation but never load the wrong code; a checksum of the
//!   image catches a damaged file. A cached image that fails to load is compiled again. Directory: `$PATHTRACK_KERNEL_CACHE`, else
//!   `$XDG_CACHE_HOME/pathtrack/kernels`, else `$HOME/.cache/pathtrack/kernels`;
//!   `PATHTRACK_KERNEL_CACHE=off` disables it. Errors of the cache (unwritable directory,
//!   truncated file) are never errors of the solve: the unit is compiled instead. The
//!   directory keeps the [`CACHE_KEEP`] most recently written images.

use super::device::{cuda_err, guarded, Device};
use crate::error::{Error, Result};
use cudarc::driver::CudaFunction;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Images kept in the cache directory (oldest deleted first).
pub const CACHE_KEEP: usize = 256;

/// One program: a complete CUDA C source and the `extern "C"` kernels to take from it.
pub struct Unit<'a> {
    /// File name shown in compiler messages.
    pub name: &'a str,
    pub source: String,
    pub functions: &'a [&'a str],
}

/// How one unit was obtained.
#[derive(Clone, Debug)]
pub struct UnitReport {
    pub name: String,
    /// Seconds of compilation (or of reading the cache).
    pub seconds: f64,
    pub cached: bool,
    /// Size of the loaded image in bytes.
    pub bytes: usize,
}

/// The loaded kernels of every unit (in the units' order) and how each was obtained.
pub struct Compiled {
    pub functions: Vec<Vec<CudaFunction>>,
    pub reports: Vec<UnitReport>,
    /// Wall seconds of the whole call.
    pub seconds: f64,
}

impl Compiled {
    /// One line: wall seconds, units, how many from the cache, the slowest unit.
    pub fn summary(&self) -> String {
        let cached = self.reports.iter().filter(|r| r.cached).count();
        let slowest = self
            .reports
            .iter()
            .max_by(|a, b| a.seconds.total_cmp(&b.seconds));
        let mut s = format!(
            "NVRTC + load {:.2} s ({} units, {} from the cache",
            self.seconds,
            self.reports.len(),
            cached
        );
        if let Some(r) = slowest {
            s.push_str(&format!("; slowest {} {:.2} s", r.name, r.seconds));
        }
        s.push(')');
        s
    }
}

/// The NVRTC target for compute capability `cc`: a real architecture (CUBIN output) for
/// the architectures listed here, else the newest virtual one at or below it (PTX output).
fn target(cc: (i32, i32)) -> Option<(String, bool)> {
    const REAL: [(i32, i32); 10] = [
        (7, 5),
        (8, 0),
        (8, 6),
        (8, 7),
        (8, 9),
        (9, 0),
        (10, 0),
        (10, 3),
        (12, 0),
        (12, 1),
    ];
    if REAL.contains(&cc) && std::env::var_os("PATHTRACK_JIT_PTX").is_none() {
        return Some((format!("sm_{}{}", cc.0, cc.1), true));
    }
    let virt = match cc {
        (10.., _) => "compute_100",
        (9, _) => "compute_90",
        (8, 9..) => "compute_89",
        (8, 6..) => "compute_86",
        (8, _) => "compute_80",
        (7, 5..) => "compute_75",
        _ => return None,
    };
    Some((virt.into(), false))
}

/// NVRTC's version, part of the cache key.
fn nvrtc_version() -> (i32, i32) {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: both pointers are valid for writes.
    let _ = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (major, minor)
}

/// Compiles `units` for `dev` (in parallel, through the cache directory of the
/// environment, see the module's doc) and loads them.
pub fn compile_units(dev: &Device, units: &[Unit]) -> Result<Compiled> {
    compile_units_in(dev, units, cache_dir().as_deref())
}

/// [`compile_units`] with the cache in `cache` (`None`: no cache).
pub fn compile_units_in(dev: &Device, units: &[Unit], cache: Option<&Path>) -> Result<Compiled> {
    let clock = Instant::now();
    let (arch, cubin) = target(dev.cc).ok_or_else(|| {
        Error::Cuda(format!(
            "compute capability {}.{} is not supported (NVRTC targets 7.5 and newer)",
            dev.cc.0, dev.cc.1
        ))
    })?;
    let options = vec![format!("--gpu-architecture={arch}"), "--fmad=true".into()];
    let version = guarded("asking NVRTC for its version", || Ok(nvrtc_version()))?;
    let images: Vec<Result<(Vec<u8>, UnitReport)>> = std::thread::scope(|s| {
        let handles: Vec<_> = units
            .iter()
            .map(|u| {
                let options = &options;
                s.spawn(move || {
                    guarded(&format!("compiling {}", u.name), || {
                        obtain(u, options, cubin, version, cache)
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Cuda("a compiler thread panicked".into())))
            })
            .collect()
    });
    dev.bind()?;
    let mut functions = Vec::with_capacity(units.len());
    let mut reports = Vec::with_capacity(units.len());
    for (u, image) in units.iter().zip(images) {
        let (image, mut report) = image?;
        let module = match load(dev, u, image) {
            Ok(m) => m,
            Err(_) if report.cached => {
                // a stale or damaged cache entry: compile afresh, bypassing the cache
                let (image, fresh) = guarded(&format!("compiling {}", u.name), || {
                    obtain(u, &options, cubin, version, None)
                })?;
                report = fresh;
                load(dev, u, image)?
            }
            Err(e) => return Err(e),
        };
        functions.push(module);
        reports.push(report);
    }
    Ok(Compiled {
        functions,
        reports,
        seconds: clock.elapsed().as_secs_f64(),
    })
}

/// Loads one image and takes its functions.
fn load(dev: &Device, u: &Unit, image: Vec<u8>) -> Result<Vec<CudaFunction>> {
    let module = dev
        .ctx
        .load_module(cudarc::nvrtc::Ptx::from_binary(image))
        .map_err(|e| cuda_err(&format!("cuModuleLoadData({})", u.name), e))?;
    u.functions
        .iter()
        .map(|f| {
            module
                .load_function(f)
                .map_err(|e| cuda_err(&format!("cuModuleGetFunction({f})"), e))
        })
        .collect()
}

/// The image of one unit: from the cache when it holds this exact input, else compiled
/// (and stored).
fn obtain(
    u: &Unit,
    options: &[String],
    cubin: bool,
    version: (i32, i32),
    cache: Option<&Path>,
) -> Result<(Vec<u8>, UnitReport)> {
    let clock = Instant::now();
    let key = format!(
        "pathtrack {} nvrtc {}.{} {}\n{}\n{}",
        env!("CARGO_PKG_VERSION"),
        version.0,
        version.1,
        u.name,
        options.join(" "),
        u.source
    );
    let file = cache.map(|d| d.join(format!("{:016x}.bin", fnv1a(key.as_bytes()))));
    if let Some(image) = file.as_deref().and_then(|f| cache_read(f, key.as_bytes())) {
        let bytes = image.len();
        return Ok((
            image,
            UnitReport {
                name: u.name.into(),
                seconds: clock.elapsed().as_secs_f64(),
                cached: true,
                bytes,
            },
        ));
    }
    let image = nvrtc(&u.source, u.name, options, cubin)?;
    if let Some(f) = file.as_deref() {
        cache_write(f, key.as_bytes(), &image);
    }
    let bytes = image.len();
    Ok((
        image,
        UnitReport {
            name: u.name.into(),
            seconds: clock.elapsed().as_secs_f64(),
            cached: false,
            bytes,
        },
    ))
}

/// One NVRTC compilation: the CUBIN image (`cubin`) or the NUL-terminated PTX.
fn nvrtc(source: &str, name: &str, options: &[String], cubin: bool) -> Result<Vec<u8>> {
    use cudarc::nvrtc::{result as nr, sys as ns};
    let src = CString::new(source)
        .map_err(|_| Error::Internal(format!("{name}: the CUDA source contains a NUL byte")))?;
    let cname = CString::new(name)
        .map_err(|_| Error::Internal(format!("{name}: the unit name contains a NUL byte")))?;
    let prog = nr::create_program(&src, Some(&cname))
        .map_err(|e| cuda_err(&format!("nvrtcCreateProgram({name})"), e))?;
    /// Destroys the program on every return path.
    struct Program(ns::nvrtcProgram);
    impl Drop for Program {
        fn drop(&mut self) {
            // SAFETY: created by create_program, destroyed once.
            let _ = unsafe { cudarc::nvrtc::result::destroy_program(self.0) };
        }
    }
    let prog = Program(prog);
    // SAFETY: `prog` is a live program; the option strings outlive the call.
    if let Err(e) = unsafe { nr::compile_program(prog.0, options) } {
        // SAFETY: as above.
        let log = unsafe { nr::get_program_log(prog.0) }
            .map(|l| {
                let bytes: Vec<u8> = l
                    .iter()
                    .take_while(|&&c| c != 0)
                    .map(|&c| c as u8)
                    .collect();
                String::from_utf8_lossy(&bytes).into_owned()
            })
            .unwrap_or_default();
        return Err(Error::Cuda(format!(
            "nvrtcCompileProgram({name}) failed: {e}\n{log}"
        )));
    }
    if !cubin {
        // SAFETY: compiled above.
        let ptx = unsafe { nr::get_ptx(prog.0) }.map_err(|e| cuda_err("nvrtcGetPTX", e))?;
        return Ok(ptx.into_iter().map(|c| c as u8).collect());
    }
    let mut size = 0usize;
    // SAFETY: compiled above; `size` is valid for writes.
    unsafe { ns::nvrtcGetCUBINSize(prog.0, &mut size) }
        .result()
        .map_err(|e| cuda_err("nvrtcGetCUBINSize", e))?;
    let mut image = vec![0u8; size];
    // SAFETY: `image` holds the `size` bytes NVRTC writes.
    unsafe { ns::nvrtcGetCUBIN(prog.0, image.as_mut_ptr() as *mut std::ffi::c_char) }
        .result()
        .map_err(|e| cuda_err("nvrtcGetCUBIN", e))?;
    Ok(image)
}

/// FNV-1a, 64 bits: the cache file's name (the key inside the file decides).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The cache directory, or `None` when disabled or no home is known.
fn cache_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(v) = var("PATHTRACK_KERNEL_CACHE") {
        let off = matches!(v.to_str(), Some("off" | "0" | "none"));
        return if off { None } else { Some(PathBuf::from(v)) };
    }
    let base = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("pathtrack").join("kernels"))
}

/// File layout: key length (8 bytes, little endian), key, FNV-1a of the image (8 bytes),
/// image. A different key, a wrong checksum or a short file is a miss.
fn cache_read(file: &Path, key: &[u8]) -> Option<Vec<u8>> {
    let data = std::fs::read(file).ok()?;
    let len = u64::from_le_bytes(data.get(..8)?.try_into().ok()?) as usize;
    let at = 8usize.checked_add(len)?;
    if data.get(8..at)? != key {
        return None;
    }
    let sum = u64::from_le_bytes(data.get(at..at + 8)?.try_into().ok()?);
    let image = data.get(at + 8..)?;
    (!image.is_empty() && fnv1a(image) == sum).then(|| image.to_vec())
}

/// Writes through a temporary file and a rename (a reader never sees half a file), then
/// trims the directory to [`CACHE_KEEP`] images. Failures are ignored.
fn cache_write(file: &Path, key: &[u8], image: &[u8]) {
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let mut data = Vec::with_capacity(16 + key.len() + image.len());
    data.extend_from_slice(&(key.len() as u64).to_le_bytes());
    data.extend_from_slice(key);
    data.extend_from_slice(&fnv1a(image).to_le_bytes());
    data.extend_from_slice(image);
    // A name of its own per write: two backends of one process may write the same image at
    // once (a shared temporary file could be renamed while the other still writes it).
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nth = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = file.with_extension(format!("tmp{}-{nth}", std::process::id()));
    if std::fs::write(&tmp, &data).is_err() || std::fs::rename(&tmp, file).is_err() {
        let _ = std::fs::remove_file(&tmp);
        return;
    }
    trim(dir, CACHE_KEEP);
}

/// Deletes the oldest `*.bin` files of `dir` beyond the newest `keep`.
fn trim(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    if files.len() <= keep {
        return;
    }
    files.sort();
    for (_, p) in &files[..files.len() - keep] {
        let _ = std::fs::remove_file(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_returns_only_the_image_stored_under_the_same_key() {
        let dir = std::env::temp_dir().join(format!("pathtrack-jit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let file = dir.join("a.bin");
        assert_eq!(cache_read(&file, b"k"), None, "nothing stored yet");
        cache_write(&file, b"key one", &[1, 2, 3]);
        assert_eq!(cache_read(&file, b"key one"), Some(vec![1, 2, 3]));
        // a colliding name with another input is a miss, not the other image
        assert_eq!(cache_read(&file, b"key two"), None);
        assert_eq!(cache_read(&file, b"key on"), None);
        // a truncated file is a miss
        let data = std::fs::read(&file).unwrap();
        std::fs::write(&file, &data[..data.len() - 3]).unwrap();
        assert_eq!(cache_read(&file, b"key one"), None);
        std::fs::write(&file, &data[..5]).unwrap();
        assert_eq!(cache_read(&file, b"key one"), None);
        // a changed byte of the image is a miss (checksum)
        let mut bad = data.clone();
        *bad.last_mut().unwrap() ^= 1;
        std::fs::write(&file, &bad).unwrap();
        assert_eq!(cache_read(&file, b"key one"), None);
        std::fs::write(&file, &data).unwrap();
        assert_eq!(cache_read(&file, b"key one"), Some(vec![1, 2, 3]));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn trim_keeps_the_newest_images() {
        let dir = std::env::temp_dir().join(format!("pathtrack-trim-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let now = std::time::SystemTime::now();
        for i in 0..5u64 {
            let p = dir.join(format!("{i}.bin"));
            std::fs::write(&p, [i as u8]).unwrap();
            let t = now - std::time::Duration::from_secs(100 - i);
            std::fs::File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
        std::fs::write(dir.join("other.txt"), b"x").unwrap();
        trim(&dir, 2);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["3.bin", "4.bin", "other.txt"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn targets_are_real_architectures_where_known() {
        assert_eq!(target((9, 0)), Some(("sm_90".into(), true)));
        assert_eq!(target((8, 0)), Some(("sm_80".into(), true)));
        assert_eq!(target((9, 1)), Some(("compute_90".into(), false)));
        assert_eq!(target((11, 0)), Some(("compute_100".into(), false)));
        assert_eq!(target((7, 0)), None);
        assert_ne!(fnv1a(b"a"), fnv1a(b"b"));
    }
}
