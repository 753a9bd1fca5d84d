//! TLB maintenance by address of a data page from inside one translated block (issue 17:
//! under the DBT a `TLBIMVA`/`TLBIMVAA` that names no translated code is applied without
//! leaving the block, so the host's shadow of the guest's stage 1 must drop the page
//! there, before the block's next load). A global section at [`VA`] that holds data only
//! maps one of two frames; each step points the section's entry at the other frame,
//! invalidates the page it then loads from by address and loads, in one run of
//! instructions with no branch: the word must be the new frame's every time.

use core::arch::asm;
use core::ptr::{addr_of_mut, write_volatile};

use crate::identity_map::{mmu_off, mmu_on_with_section, L1, SECTION_RAM};

static mut TT: L1 = L1([0; 4096]);

/// The section's virtual address (no code of this program there), and its two frames
/// (1 MiB aligned guest RAM that nothing else of this program uses).
const VA: u32 = 0x40a0_0000;
const FRAMES: [u32; 2] = [0x4350_0000, 0x4360_0000];
/// Where the data word is in the section.
const DATA_OFF: u32 = 0x3000;
/// Steps of each form (both frames several times: the second and later runs of the loop
/// run translated code under the DBT).
const STEPS: u32 = 8;

/// The word frame `n` holds at [`DATA_OFF`].
fn word(n: usize) -> u32 {
    0x7db1_0000 | n as u32
}

/// Points the section entry `slot` at `frame`, `TLBIMVA` (ASID 1) of the data page,
/// `DSB`, `ISB`, and loads the data word. The operation's register is `r2` (the DBT
/// interprets TLB maintenance from `SP`, `LR` or `PC`, which leaves the block).
///
/// # Safety
///
/// `slot` is [`VA`]'s section entry in the live table, which maps nothing this program
/// uses but the data word.
unsafe fn remap_tlbimva_load(slot: *mut u32, frame: u32) -> u32 {
    let got: u32;
    // SAFETY: the caller's promise above.
    unsafe {
        asm!(
            "str {e}, [{slot}]",
            "dsb",
            "mcr p15, 0, r2, c8, c7, 1", // TLBIMVA, ASID 1
            "dsb",
            "isb",
            "ldr {got}, [{va}]",
            e = in(reg) frame | SECTION_RAM,
            slot = in(reg) slot,
            in("r2") (VA + DATA_OFF) | 1,
            va = in(reg) VA + DATA_OFF,
            got = out(reg) got,
            options(nostack),
        )
    };
    got
}

/// As [`remap_tlbimva_load`] with `TLBIMVAA` (every ASID).
///
/// # Safety
///
/// As for [`remap_tlbimva_load`].
unsafe fn remap_tlbimvaa_load(slot: *mut u32, frame: u32) -> u32 {
    let got: u32;
    // SAFETY: the caller's promise above.
    unsafe {
        asm!(
            "str {e}, [{slot}]",
            "dsb",
            "mcr p15, 0, r2, c8, c7, 3", // TLBIMVAA
            "dsb",
            "isb",
            "ldr {got}, [{va}]",
            e = in(reg) frame | SECTION_RAM,
            slot = in(reg) slot,
            in("r2") VA + DATA_OFF,
            va = in(reg) VA + DATA_OFF,
            got = out(reg) got,
            options(nostack),
        )
    };
    got
}

/// Runs the check and reports it through `check`.
pub fn test_tlbi_data(check: fn(&str, bool)) {
    for (n, &f) in FRAMES.iter().enumerate() {
        // SAFETY: guest RAM this check owns (see FRAMES), written with the MMU off.
        unsafe { write_volatile((f + DATA_OFF) as *mut u32, word(n)) };
    }
    // SAFETY: the table maps all RAM and the UART by identity but for VA's section, which
    // this program uses only through the data word; nothing moves when the MMU goes on.
    let (mva, mvaa) = unsafe {
        let slot = mmu_on_with_section(addr_of_mut!(TT), VA, FRAMES[0]);
        let (mut mva, mut mvaa) = (true, true);
        for k in 1..=STEPS {
            let n = (k % 2) as usize;
            mva &= remap_tlbimva_load(slot, FRAMES[n]) == word(n);
        }
        for k in 1..=STEPS {
            let n = (k % 2) as usize;
            mvaa &= remap_tlbimvaa_load(slot, FRAMES[n]) == word(n);
        }
        mmu_off();
        (mva, mvaa)
    };
    check(
        "data section remapped, TLBIMVA of its page, load: new data",
        mva,
    );
    check(
        "data section remapped, TLBIMVAA of its page, load: new data",
        mvaa,
    );
}
