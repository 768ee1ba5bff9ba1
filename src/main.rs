/// mimalloc rather than the system allocator: the tracker's loop allocates every endpoint and
/// the refinement threads free them; glibc's malloc serializes those frees on the loop
/// thread's arena (docs/cuda.md, "Memory allocation").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    if let Some(missing) = missing_cpu_features() {
        eprintln!(
            "error: this pathtrack binary was built for x86-64-v3 (see .cargo/config.toml) but \
             the CPU lacks {missing}; rebuild with `RUSTFLAGS= cargo build --release`"
        );
        std::process::exit(2);
    }
    std::process::exit(pathtrack::cli::main_entry());
}

/// The instruction-set extensions the build assumes (`target-cpu=x86-64-v3`) that this CPU
/// lacks, if any.
fn missing_cpu_features() -> Option<String> {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        let mut missing = Vec::new();
        if !std::arch::is_x86_feature_detected!("avx2") {
            missing.push("AVX2");
        }
        if !std::arch::is_x86_feature_detected!("fma") {
            missing.push("FMA");
        }
        if !missing.is_empty() {
            return Some(missing.join(" and "));
        }
    }
    None
}
