//! Links the runtime with its own script (`link.ld`): it runs at the fixed IPA where the
//! hypervisor loads it, identity-mapped, outside the guest's 4 GiB.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("none") {
        println!("cargo:rustc-link-arg-bins=-T{dir}/link.ld");
    }
    println!("cargo:rerun-if-changed=link.ld");
    println!("cargo:rerun-if-changed=build.rs");
}
