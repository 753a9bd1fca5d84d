//! Passes the linker script to the bare-metal link (armv7a-none-eabi only).
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    if std::env::var("TARGET")
        .unwrap_or_default()
        .starts_with("armv7a-none")
    {
        println!("cargo:rustc-link-arg=-T{dir}/link.ld");
    }
    println!("cargo:rerun-if-changed=link.ld");
}
