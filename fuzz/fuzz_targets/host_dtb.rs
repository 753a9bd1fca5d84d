//! The host device tree the hypervisor boots with (`hypervisor::platform::PlatformInfo::parse`,
//! over the `fdt` crate): any blob is parsed or refused, and what a parse returns can be read.
#![no_main]

use hypervisor::platform::PlatformInfo;
use libfuzzer_sys::fuzz_target;

/// Where QEMU puts the device tree (the value only shows in the parsed result).
const DTB_PA: u64 = 0x4000_0000;

fuzz_target!(|data: &[u8]| {
    if let Ok(info) = PlatformInfo::parse(data, DTB_PA) {
        let _ = format!("{info:?}");
        for r in info.memory() {
            let _ = r.end();
        }
        let _ = (
            info.virtio_windows(),
            info.virtio_intids(),
            info.cpu_mpidrs(),
        );
    }
});
