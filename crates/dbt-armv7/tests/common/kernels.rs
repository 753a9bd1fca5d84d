//! The benchmark kernels of `bench-guest/` (static no_std ARM Linux programs), built once
//! per test process for `armv7a-none-eabi` into `target/dbt-bench-guest`.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The kernels, by binary name.
pub const KERNELS: [&str; 9] = [
    "crc32", "sort", "matmul", "fib", "chase", "sysreg", "vfp", "neon", "sha256",
];

/// The directory holding the built kernels.
pub fn built() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
            let tdir = dir.join("../../target/dbt-bench-guest");
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let st = Command::new(cargo)
                .args(["build", "-q", "--release", "--target", "armv7a-none-eabi"])
                .arg("--manifest-path")
                .arg(dir.join("bench-guest/Cargo.toml"))
                .arg("--target-dir")
                .arg(&tdir)
                .env_remove("RUSTFLAGS")
                .env_remove("CARGO_ENCODED_RUSTFLAGS")
                .status()
                .expect("cargo build bench-guest");
            assert!(st.success(), "building bench-guest failed");
            tdir.join("armv7a-none-eabi/release")
        })
        .clone()
}
