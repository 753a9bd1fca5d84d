//! Puts the shared guest linker script `guest-rt.ld` on the linker search path of every crate
//! that depends on guest-rt. A guest binary selects it with `-Tguest-rt.ld` (see each guest's
//! `build.rs`), so all guests share one memory layout.

use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    fs::copy("guest-rt.ld", out.join("guest-rt.ld")).expect("copy guest-rt.ld to OUT_DIR");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=guest-rt.ld");
    println!("cargo:rerun-if-changed=build.rs");
}
