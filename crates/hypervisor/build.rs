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
}
