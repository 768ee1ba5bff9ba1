//! The machine's share a command asks for: `--threads` is capped at the cores there are,
//! an explicit `--batch` at what the memory can hold. Each cap prints a note on stderr.

/// The cores this process may use (`std::thread::available_parallelism`; 1 when unknown).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `--threads` as used: 0 (all cores) stays 0; more than the cores becomes the cores, with
/// a note (thousands of threads cannot be spawned, or only slow the run down).
pub fn threads(requested: usize) -> usize {
    let cores = cores();
    if requested > cores {
        eprintln!(
            "pathtrack: note: --threads {requested} is more than the {cores} cores of this \
             machine; using {cores}"
        );
        cores
    } else {
        requested
    }
}

/// Physical memory in bytes (`MemTotal` of /proc/meminfo), or 8 GiB where unknown.
pub fn memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kb.checked_mul(1024)
        })
        .unwrap_or(8 << 30)
}

/// Host memory one path of a batch of `n` variables may take: its state and the work
/// arrays of its steps, about four `(n + 2)²` complex matrices and 1 KiB besides.
pub fn bytes_per_path(n: usize) -> u64 {
    let m = (n as u64 + 2).pow(2);
    4 * 16 * m + 1024
}

/// An explicit `--batch` as used: at most a quarter of the memory's worth of paths of `n`
/// variables (at least 1), with a note when that is less than asked.
pub fn batch(requested: usize, n: usize) -> usize {
    let cap = (memory_bytes() / 4 / bytes_per_path(n)).max(1);
    if requested as u64 > cap {
        eprintln!(
            "pathtrack: note: --batch {requested} paths of {n} variables would need about \
             {:.1} GB; using {cap} (a quarter of this machine's memory)",
            requested as f64 * bytes_per_path(n) as f64 / 1e9
        );
        cap as usize
    } else {
        requested
    }
}
