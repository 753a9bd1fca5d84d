//! Entry point of the hypervisor image. Everything lives in the library; on the bare-metal
//! target this binary only links it (the linker script's `ENTRY(_start)` pulls in the boot
//! code).
#![cfg_attr(target_os = "none", no_std, no_main)]

#[cfg(target_os = "none")]
use hypervisor as _;

#[cfg(not(target_os = "none"))]
fn main() {
    eprintln!(
        "the hypervisor is a bare-metal AArch64 image; build it with `cargo xtask build` \
         and run it with `cargo xtask qemu`"
    );
    std::process::exit(2);
}
