//! Links the guest with the shared guest-rt layout (`guest-rt.ld`, put on the linker search
//! path by guest-rt's own build script).

fn main() {
    println!("cargo:rustc-link-arg-bins=-Tguest-rt.ld");
    println!("cargo:rerun-if-changed=build.rs");
}
