//! The host device tree the hypervisor boots with, as `arch/discover.rs` handles it: first
//! `strip_fdt_nops` removes `FDT_NOP` tokens in place (edk2 and U-Boot trees have them), then
//! `hypervisor::platform::PlatformInfo::parse` (over the `fdt` crate) parses or refuses the
//! blob, and what a parse returns can be read. Checked: a refused strip leaves the blob
//! untouched, a done one is final (stripping again removes and changes nothing), and the stripped tree
//! parses whenever the original did.
#![no_main]

use hypervisor::platform::{strip_fdt_nops, PlatformInfo};
use libfuzzer_sys::fuzz_target;

/// Where QEMU puts the device tree (the value only shows in the parsed result).
const DTB_PA: u64 = 0x4000_0000;

fn parse_and_read(dtb: &[u8]) -> bool {
    let Ok(info) = PlatformInfo::parse(dtb, DTB_PA) else {
        return false;
    };
    let _ = format!("{info:?}");
    for r in info.memory() {
        let _ = r.end();
    }
    let _ = (
        info.virtio_windows(),
        info.virtio_intids(),
        info.cpu_mpidrs(),
    );
    true
}

fuzz_target!(|data: &[u8]| {
    let parsed_as_given = parse_and_read(data);
    let mut dtb = data.to_vec();
    match strip_fdt_nops(&mut dtb) {
        None => assert_eq!(dtb, data, "a refused strip changed the tree"),
        Some(removed) => {
            // (A strip may also shrink size_dt_struct to end at FDT_END.)
            let once = dtb.clone();
            assert_eq!(strip_fdt_nops(&mut dtb), Some(0), "stripping twice removed more");
            assert_eq!(dtb, once, "stripping a stripped tree changed it");
            let parsed_stripped = parse_and_read(&dtb);
            assert!(
                !parsed_as_given || parsed_stripped,
                "the tree parsed with its {removed} NOP(s) but not without"
            );
        }
    }
});
