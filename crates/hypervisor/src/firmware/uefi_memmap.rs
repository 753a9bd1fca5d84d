//! The UEFI memory map (`GetMemoryMap`) as RAM ranges for the hypervisor: after
//! ExitBootServices, loader, boot-services and conventional memory are free to use;
//! runtime-services code/data, ACPI tables and NVS, reserved and MMIO ranges stay the
//! firmware's. Adjacent usable ranges are merged.

use crate::platform::Range;

/// `EFI_MEMORY_TYPE` values (UEFI spec 2.10, 7.2).
pub mod types {
    /// EfiLoaderCode.
    pub const LOADER_CODE: u32 = 1;
    /// EfiLoaderData.
    pub const LOADER_DATA: u32 = 2;
    /// EfiBootServicesCode.
    pub const BOOT_SERVICES_CODE: u32 = 3;
    /// EfiBootServicesData.
    pub const BOOT_SERVICES_DATA: u32 = 4;
    /// EfiRuntimeServicesCode.
    pub const RUNTIME_SERVICES_CODE: u32 = 5;
    /// EfiConventionalMemory.
    pub const CONVENTIONAL: u32 = 7;
    /// EfiACPIReclaimMemory.
    pub const ACPI_RECLAIM: u32 = 9;
    /// EfiPersistentMemory.
    pub const PERSISTENT: u32 = 14;
}

/// UEFI pages are 4 KiB whatever the OS uses.
pub const EFI_PAGE: u64 = 4096;

/// Whether memory of `ty` is the OS's after ExitBootServices.
pub fn is_usable(ty: u32) -> bool {
    use types::*;
    matches!(
        ty,
        LOADER_CODE | LOADER_DATA | BOOT_SERVICES_CODE | BOOT_SERVICES_DATA | CONVENTIONAL
    )
}

/// Collects the usable ranges of `descriptors` (type, physical start, pages) into `out`,
/// merging ranges that touch; returns how many entries of `out` are valid and how many
/// usable bytes did not fit.
pub fn usable_ram(
    descriptors: impl Iterator<Item = (u32, u64, u64)>,
    out: &mut [Range],
) -> (usize, u64) {
    let mut n = 0;
    let mut lost = 0;
    for (ty, base, pages) in descriptors {
        if !is_usable(ty) || pages == 0 {
            continue;
        }
        let Some(size) = pages.checked_mul(EFI_PAGE) else {
            continue;
        };
        if base.checked_add(size).is_none() {
            continue;
        }
        if let Some(r) = out[..n].iter_mut().find(|r| r.end() == base) {
            r.size += size;
            continue;
        }
        if let Some(r) = out[..n].iter_mut().find(|r| base + size == r.base) {
            r.base = base;
            r.size += size;
            continue;
        }
        if n < out.len() {
            out[n] = Range { base, size };
            n += 1;
        } else {
            lost += size;
        }
    }
    // A range added later may have closed the gap between two earlier ones.
    let mut i = 0;
    while i < n {
        let end = out[i].end();
        match (0..n).find(|&j| j != i && out[j].base == end) {
            Some(j) => {
                out[i].size += out[j].size;
                out[j] = out[n - 1];
                n -= 1;
                // `i` may have moved into `j`'s slot if it was the last: start over.
                i = 0;
            }
            None => i += 1,
        }
    }
    out[..n].sort_unstable_by_key(|r| r.base);
    (n, lost)
}

#[cfg(test)]
mod tests {
    use super::types::*;
    use super::*;

    #[test]
    fn keeps_the_os_memory_and_merges() {
        let map = [
            (CONVENTIONAL, 0x4000_0000, 0x100),
            (LOADER_CODE, 0x4010_0000, 0x10),
            (RUNTIME_SERVICES_CODE, 0x4011_0000, 0x10),
            (BOOT_SERVICES_DATA, 0x4012_0000, 0x10),
            (ACPI_RECLAIM, 0x4013_0000, 0x10),
            (CONVENTIONAL, 0x1_0000_0000, 0x1000),
            (LOADER_DATA, 0x4014_0000, 0x10),
            (CONVENTIONAL, 0x4015_0000, 0x10),
            (11, 0x900_0000, 1),
        ];
        let mut out = [Range::default(); 8];
        let (n, lost) = usable_ram(map.into_iter(), &mut out);
        assert_eq!(lost, 0);
        assert_eq!(
            &out[..n],
            &[
                Range {
                    base: 0x4000_0000,
                    size: 0x11_0000
                },
                Range {
                    base: 0x4012_0000,
                    size: 0x1_0000
                },
                Range {
                    base: 0x4014_0000,
                    size: 0x2_0000
                },
                Range {
                    base: 0x1_0000_0000,
                    size: 0x100_0000
                },
            ]
        );
    }

    #[test]
    fn a_late_range_joins_two() {
        let map = [
            (CONVENTIONAL, 0x1000, 1),
            (CONVENTIONAL, 0x3000, 1),
            (BOOT_SERVICES_CODE, 0x2000, 1),
        ];
        let mut out = [Range::default(); 4];
        let (n, _) = usable_ram(map.into_iter(), &mut out);
        assert_eq!(
            &out[..n],
            &[Range {
                base: 0x1000,
                size: 0x3000
            }]
        );
    }

    #[test]
    fn overflow_is_counted_not_a_panic() {
        let map = [
            (CONVENTIONAL, 0x1000, 1),
            (CONVENTIONAL, 0x10000, 1),
            (CONVENTIONAL, 0x20000, 2),
            (CONVENTIONAL, u64::MAX - 0xfff, 2),
            (CONVENTIONAL, 0x40000, u64::MAX),
        ];
        let mut out = [Range::default(); 2];
        let (n, lost) = usable_ram(map.into_iter(), &mut out);
        assert_eq!(n, 2);
        assert_eq!(lost, 0x2000);
    }
}
