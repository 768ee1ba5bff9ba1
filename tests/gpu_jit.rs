//! Run-time compilation (`src/gpu/jit.rs`) on a device: units compiled in parallel to
//! CUBIN, a second load served by the disk cache, the same results from both, and a
//! compiler error that names the unit. Skipped (with the reason printed) without a GPU.

use cudarc::driver::{LaunchConfig, PushKernelArg};
use pathtrack::gpu::{jit, Device, Unit};

fn device() -> Option<Device> {
    match Device::open(0) {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("skipped: no CUDA device: {e}");
            None
        }
    }
}

/// `y_i ← a·y_i + B` and `y_i ← y_i² − C` with the constants as `#define`s, as the
/// tracker's units carry the system's sizes.
fn units(b: f64, c: f64) -> Vec<Unit<'static>> {
    vec![
        Unit {
            name: "axpb.cu",
            source: format!(
                "#define B ({b:e})\nextern \"C\" __global__ void axpb(double* y, double a, int n) {{\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = fma(a, y[i], B);\n}}\n"
            ),
            functions: &["axpb"],
        },
        Unit {
            name: "sq.cu",
            source: format!(
                "#define C ({c:e})\nextern \"C\" __global__ void sqmc(double* y, int n) {{\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = y[i] * y[i] - C;\n}}\n"
            ),
            functions: &["sqmc"],
        },
    ]
}

/// Runs both kernels of `c` on 0, 1, …, n−1.
fn run(dev: &Device, c: &jit::Compiled, n: usize) -> Vec<f64> {
    let y0: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let buf = dev.alloc::<f64>(n).unwrap();
    dev.htod(&buf, &y0).unwrap();
    let cfg = LaunchConfig::for_num_elems(n as u32);
    let (p, a, ni) = (buf.ptr, 0.5f64, n as i32);
    dev.bind().unwrap();
    unsafe {
        dev.stream
            .launch_builder(&c.functions[0][0])
            .arg(&p)
            .arg(&a)
            .arg(&ni)
            .launch(cfg)
            .unwrap();
        dev.stream
            .launch_builder(&c.functions[1][0])
            .arg(&p)
            .arg(&ni)
            .launch(cfg)
            .unwrap();
    }
    let mut y = vec![0.0; n];
    dev.dtoh(&mut y, &buf).unwrap();
    y
}

#[test]
fn units_compile_in_parallel_and_load_again_from_the_cache() {
    let Some(dev) = device() else { return };
    let dir = std::env::temp_dir().join(format!("pathtrack-jit-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let n = 1000;
    let expect: Vec<f64> = (0..n)
        .map(|i| {
            let v = 0.5 * i as f64 + 3.0;
            v * v - 7.0
        })
        .collect();
    let first = jit::compile_units_in(&dev, &units(3.0, 7.0), Some(&dir)).unwrap();
    eprintln!("first: {}", first.summary());
    assert!(first.reports.iter().all(|r| !r.cached && r.bytes > 0));
    assert_eq!(run(&dev, &first, n), expect);
    let second = jit::compile_units_in(&dev, &units(3.0, 7.0), Some(&dir)).unwrap();
    eprintln!("second: {}", second.summary());
    assert!(
        second.reports.iter().all(|r| r.cached),
        "{:?}",
        second.reports
    );
    assert_eq!(run(&dev, &second, n), expect);
    // another constant is another source: compiled, not the cached image
    let other = jit::compile_units_in(&dev, &units(3.0, 8.0), Some(&dir)).unwrap();
    assert!(other.reports[0].cached && !other.reports[1].cached);
    let y = run(&dev, &other, n);
    assert!(y.iter().zip(&expect).all(|(a, b)| a - b == -1.0));
    // a damaged image in the cache (checksum) is compiled again, with the same results
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let mut data = std::fs::read(&path).unwrap();
        let len = data.len();
        for b in &mut data[len - 64..] {
            *b = 0xab;
        }
        std::fs::write(&path, data).unwrap();
    }
    let again = jit::compile_units_in(&dev, &units(3.0, 7.0), Some(&dir)).unwrap();
    eprintln!("after damage: {}", again.summary());
    assert!(
        again.reports.iter().all(|r| !r.cached),
        "{:?}",
        again.reports
    );
    assert_eq!(run(&dev, &again, n), expect);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compiler_errors_name_the_unit() {
    let Some(dev) = device() else { return };
    let bad = [Unit {
        name: "broken.cu",
        source: "extern \"C\" __global__ void f(double* y) { y[0] = undefined_name; }\n".into(),
        functions: &["f"],
    }];
    let e = jit::compile_units_in(&dev, &bad, None)
        .err()
        .expect("a compile error");
    let msg = e.to_string();
    eprintln!("{msg}");
    assert!(
        msg.contains("broken.cu") && msg.contains("undefined_name"),
        "{msg}"
    );
}

/// Timing (not a check): the tracker's four fixed units for n = 10, 120 terms, each
/// compiled alone and then all four in parallel, with the driver's compute cache and ours
/// off (`CUDA_CACHE_DISABLE=1` must be set for honest figures). Shows whether NVRTC
/// compiles distinct programs concurrently. Run with `--ignored` on the device machine.
#[test]
#[ignore]
fn tracker_unit_compile_times() {
    let Some(dev) = device() else { return };
    if std::env::var_os("CUDA_CACHE_DISABLE").is_none() {
        eprintln!(
            "note: CUDA_CACHE_DISABLE is not set; the driver's compute cache may serve NVRTC"
        );
    }
    let bstart: Vec<usize> = (0..=10).map(|k| 12 * k).collect();
    let units = {
        use pathtrack::backend::cuda::kernels::{fixed_units, header};
        fixed_units(&header(10, 120, &bstart).unwrap())
    };
    let mut alone = 0.0;
    for u in &units {
        let one = [Unit {
            name: u.name,
            source: u.source.clone(),
            functions: u.functions,
        }];
        let c = jit::compile_units_in(&dev, &one, None).unwrap();
        eprintln!(
            "alone    {:<14} {:.3} s  {} bytes",
            u.name, c.seconds, c.reports[0].bytes
        );
        alone += c.seconds;
    }
    let c = jit::compile_units_in(&dev, &units, None).unwrap();
    eprintln!("sum alone {alone:.3} s; in parallel: {}", c.summary());
    for r in &c.reports {
        eprintln!("parallel {:<14} {:.3} s", r.name, r.seconds);
    }
}
