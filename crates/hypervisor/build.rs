//! Links the hypervisor binary with its own linker script (arm64 `Image` layout).
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("none") {
        println!("cargo:rustc-link-arg-bins=-T{dir}/linker.ld");
        // A static position-independent executable: every absolute pointer the image holds
        // becomes an R_AARCH64_RELATIVE entry in .rela.dyn, which the boot code applies at
        // entry (`arch/boot.rs`), so the image runs wherever a loader puts it. `-z notext`:
        // such pointers may sit in .rodata (the image is writable while it relocates).
        for arg in [
            "-pie",
            "--no-dynamic-linker",
            "-z",
            "notext",
            "-z",
            "norelro",
            "--hash-style=sysv",
        ] {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    }
    println!("cargo:rerun-if-changed=linker.ld");
    embed_dbt_runtime();
}

/// Copies the ARMv7-A VM runtime's flat binary (`HV_DBT_RUNTIME`, set by `cargo xtask
/// build`) to `OUT_DIR/dbt-runtime.bin` for `src/dbt_runtime.rs`; without it an empty file
/// (the build then refuses ARMv7-A VMs that need the DBT).
fn embed_dbt_runtime() {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("dbt-runtime.bin");
    println!("cargo:rerun-if-env-changed=HV_DBT_RUNTIME");
    match std::env::var("HV_DBT_RUNTIME") {
        Ok(path) if !path.is_empty() => {
            println!("cargo:rerun-if-changed={path}");
            std::fs::copy(&path, &out).unwrap_or_else(|e| panic!("HV_DBT_RUNTIME={path}: {e}"));
        }
        _ => std::fs::write(&out, []).unwrap(),
    }
}
