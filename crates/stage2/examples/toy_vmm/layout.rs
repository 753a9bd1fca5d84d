//! The toy machine's physical memory layout and the VM's guest-physical memory map.

use crate::memmap::{Backing, Region};

/// One KiB.
pub const KIB: u64 = 1 << 10;
/// One MiB.
pub const MIB: u64 = 1 << 20;
/// A 2 MiB level-2 block.
pub const BLOCK_2M: u64 = 2 * MIB;

/// Physical memory: `[PHYS_BASE, PHYS_BASE + PHYS_SIZE)`.
pub const PHYS_BASE: u64 = 0x8_0000_0000;
/// Size of physical memory.
pub const PHYS_SIZE: u64 = 16 * MIB;

/// Guest RAM bank mapped with 2 MiB blocks (IPA and PA 2 MiB aligned).
pub const RAM_BLOCKS_IPA: u64 = 0x4000_0000;
/// Physical address of the block bank.
pub const RAM_BLOCKS_PA: u64 = PHYS_BASE;
/// Size of the block bank.
pub const RAM_BLOCKS_LEN: u64 = 8 * MIB;
/// Guest RAM bank whose PA is only 4 KiB aligned: it can only be mapped with pages.
pub const RAM_PAGES_IPA: u64 = 0x4080_0000;
/// Physical address of the page bank.
pub const RAM_PAGES_PA: u64 = PHYS_BASE + 8 * MIB + 4 * KIB;
/// Size of the page bank.
pub const RAM_PAGES_LEN: u64 = 64 * KIB;
/// Guest RAM bank populated page by page on first touch.
pub const RAM_LAZY_IPA: u64 = 0x40a0_0000;
/// Physical address of the lazy bank.
pub const RAM_LAZY_PA: u64 = PHYS_BASE + 10 * MIB;
/// Size of the lazy bank.
pub const RAM_LAZY_LEN: u64 = 2 * MIB;
/// Read-only firmware image.
pub const ROM_IPA: u64 = 0;
/// Physical address of the ROM.
pub const ROM_PA: u64 = PHYS_BASE + 12 * MIB;
/// Size of the ROM.
pub const ROM_LEN: u64 = 64 * KIB;
/// Table frame pool.
pub const POOL_PA: u64 = PHYS_BASE + 14 * MIB;
/// Size of the table frame pool.
pub const POOL_LEN: u64 = 2 * MIB;
/// An emulated UART (QEMU `virt` PL011 address): never mapped, every access traps.
pub const UART_IPA: u64 = 0x0900_0000;
/// Size of the UART region.
pub const UART_LEN: u64 = 4 * KIB;
/// An IPA no region covers.
pub const HOLE_IPA: u64 = 0x2000_0000;

/// The VM's regions: ROM, UART, and three RAM banks.
pub fn regions() -> Vec<Region> {
    let ram = |name, ipa, len, pa, lazy| Region {
        name,
        ipa,
        len,
        backing: Backing::Ram {
            pa,
            writable: true,
            lazy,
        },
    };
    vec![
        Region {
            name: "rom",
            ipa: ROM_IPA,
            len: ROM_LEN,
            backing: Backing::Ram {
                pa: ROM_PA,
                writable: false,
                lazy: false,
            },
        },
        Region {
            name: "uart",
            ipa: UART_IPA,
            len: UART_LEN,
            backing: Backing::Mmio,
        },
        ram(
            "ram-blocks",
            RAM_BLOCKS_IPA,
            RAM_BLOCKS_LEN,
            RAM_BLOCKS_PA,
            false,
        ),
        ram(
            "ram-pages",
            RAM_PAGES_IPA,
            RAM_PAGES_LEN,
            RAM_PAGES_PA,
            false,
        ),
        ram("ram-lazy", RAM_LAZY_IPA, RAM_LAZY_LEN, RAM_LAZY_PA, true),
    ]
}
