//! The storm's seed and size from the command line: `seed=N` and `storm=N` (decimal or
//! 0x-hex) in the device tree's
//! `/chosen/bootargs` (the hypervisor passes the device tree in `r2`, as the ARM boot
//! protocol says). A flattened-device-tree walk of just what this needs.

/// `FDT_BEGIN_NODE`, `FDT_END_NODE`, `FDT_PROP`, `FDT_NOP`, `FDT_END` tokens.
const BEGIN_NODE: u32 = 1;
const END_NODE: u32 = 2;
const PROP: u32 = 3;
const NOP: u32 = 4;
/// The device tree header's magic.
const FDT_MAGIC: u32 = 0xd00d_feed;
/// Largest device tree looked at (the hypervisor's is a few KiB).
const FDT_MAX: u32 = 1 << 20;

/// Big-endian word at byte `at` of the tree.
fn word(fdt: &[u8], at: usize) -> Option<u32> {
    let b = fdt.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// The value of the first `bootargs` property in the tree at `addr`.
fn bootargs(addr: u32) -> Option<&'static [u8]> {
    if addr == 0 || !addr.is_multiple_of(4) {
        return None;
    }
    // SAFETY: `addr` is the device tree the hypervisor placed in guest RAM (identity
    // mapped, MMU off); only its header is read before its own size is checked.
    let head = unsafe { core::slice::from_raw_parts(addr as *const u8, 16) };
    if word(head, 0)? != FDT_MAGIC || word(head, 4)? > FDT_MAX {
        return None;
    }
    // SAFETY: as above, `totalsize` bytes of the tree.
    let fdt = unsafe { core::slice::from_raw_parts(addr as *const u8, word(head, 4)? as usize) };
    let (structs, strings) = (word(fdt, 8)? as usize, word(fdt, 12)? as usize);
    let mut at = structs;
    loop {
        match word(fdt, at)? {
            BEGIN_NODE => {
                let name = fdt.get(at + 4..)?;
                let len = name.iter().position(|&c| c == 0)?;
                at += 4 + (len + 4) / 4 * 4;
            }
            END_NODE | NOP => at += 4,
            PROP => {
                let (len, name) = (word(fdt, at + 4)? as usize, word(fdt, at + 8)? as usize);
                let value = fdt.get(at + 12..at + 12 + len)?;
                if fdt.get(strings + name..)?.starts_with(b"bootargs\0") {
                    return Some(value);
                }
                at += 12 + len.div_ceil(4) * 4;
            }
            _ => return None,
        }
    }
}

/// `N` of `key=N` (`key` with its `=`) in `bootargs`.
fn parse(args: &[u8], key: &[u8]) -> Option<u32> {
    let words = args.split(|&c| c == b' ' || c == 0);
    let v = words.filter_map(|w| w.strip_prefix(key)).next()?;
    let (digits, radix) = match v.strip_prefix(b"0x") {
        Some(h) => (h, 16),
        None => (v, 10),
    };
    let mut n: u32 = 0;
    for &c in digits {
        n = n
            .wrapping_mul(radix)
            .wrapping_add((c as char).to_digit(radix)?);
    }
    (!digits.is_empty()).then_some(n)
}

/// The seed (`seed=N`) on the command line of the device tree at `dtb`, if any.
pub fn from_device_tree(dtb: u32) -> Option<u32> {
    parse(bootargs(dtb)?, b"seed=")
}

/// The storm's accesses (`storm=N`) on the command line of the device tree at `dtb`, if
/// given (`storm=0` leaves the storm out).
pub fn accesses(dtb: u32) -> Option<u32> {
    parse(bootargs(dtb)?, b"storm=")
}
