//! VFP stores whose first access to a page is a shadow miss (issue 17). Under the DBT a
//! guest `VSTR`/`VSTM` of a register that lives in memory (D16-D31) is translated as a load
//! of the guest register into a host SIMD temporary and a store of it; when the store faults
//! because the shadow stage 1 has no entry yet, the runtime fills the entry in its EL1
//! vector and retries the store, which must store the same value. With the MMU on in a
//! fresh address space, a loop stores D16-D19 (`VSTR`, `VSTMIA`) to the first words of 16
//! 2 MiB regions of otherwise untouched RAM (each region's first store is a miss), then
//! every word is read back.

use core::arch::{asm, global_asm};
use core::ptr::{addr_of, addr_of_mut, read_volatile};

use crate::identity_map::{map_identity, mmu_off, mmu_on, L1};

/// The translation table of this check (a fresh one: no entry of it is shadowed yet).
static mut TT: L1 = L1([0; 4096]);

/// The first region, the distance between regions and their number: RAM no other check
/// uses (the program and its statics are below 0x4200_0000, the section checks' frames at
/// 0x4300_0000).
const BASE: u32 = 0x4400_0000;
const STRIDE: u32 = 0x20_0000;
const REGIONS: u32 = 16;

global_asm!(
    r#"
    .text
    .arm
    .balign 4
    // r0 = first address, r1 = count, r2 = stride. For each region: D16 = (addr, count),
    // D17 = (count, addr), D18 = (addr ^ 0x5a5a5a5a, count), D19 = (!addr, count + 7), then
    // VSTR D16 at [addr], VSTMIA of D17-D19 from [addr + 8].
    .global vfp_store_fill_loop
vfp_store_fill_loop:
1:  vmov d16, r0, r1
    vmov d17, r1, r0
    eor r3, r0, #0x5a000000
    eor r3, r3, #0x005a0000
    eor r3, r3, #0x00005a00
    eor r3, r3, #0x0000005a
    vmov d18, r3, r1
    mvn r3, r0
    add r12, r1, #7
    vmov d19, r3, r12
    vstr d16, [r0]
    add r12, r0, #8
    vstmia r12, {{d17-d19}}
    add r0, r0, r2
    subs r1, r1, #1
    bne 1b
    bx lr
"#
);

extern "C" {
    fn vfp_store_fill_loop(first: u32, count: u32, stride: u32);
}

/// The eight words the loop leaves at region `k`.
fn expected(k: u32) -> [u32; 8] {
    let addr = BASE + k * STRIDE;
    let count = REGIONS - k;
    [
        addr,
        count,
        count,
        addr,
        addr ^ 0x5a5a_5a5a,
        count,
        !addr,
        count + 7,
    ]
}

/// Runs the check and reports it through `check`.
pub fn test_vfp_store_fill(check: fn(&str, bool)) {
    // SAFETY: the table maps what `map_identity` maps by identity (the regions are RAM in
    // it), so nothing moves when the MMU goes on; CPACR.cp10/cp11 and FPEXC.EN enable the
    // FP unit for this check and are cleared again after it.
    let ok = unsafe {
        map_identity(&mut *addr_of_mut!(TT));
        asm!(
            "mrc p15, 0, {t}, c1, c0, 2",
            "orr {t}, {t}, #0xf00000",      // CPACR: cp10, cp11 full access
            "mcr p15, 0, {t}, c1, c0, 2",
            "isb",
            "mov {t}, #0x40000000",
            "vmsr fpexc, {t}",              // FPEXC.EN
            t = out(reg) _,
            options(nostack),
        );
        mmu_on(addr_of!(TT));
        vfp_store_fill_loop(BASE, REGIONS, STRIDE);
        let ok = (0..REGIONS).all(|k| {
            let at = (BASE + k * STRIDE) as *const u32;
            expected(k)
                .iter()
                .enumerate()
                .all(|(i, &w)| read_volatile(at.add(i)) == w)
        });
        mmu_off();
        asm!(
            "mov {t}, #0",
            "vmsr fpexc, {t}",
            "mrc p15, 0, {t}, c1, c0, 2",
            "bic {t}, {t}, #0xf00000",
            "mcr p15, 0, {t}, c1, c0, 2",
            "isb",
            t = out(reg) _,
            options(nostack),
        );
        ok
    };
    check("VFP stores of D16-D19, each first to its page", ok);
}
