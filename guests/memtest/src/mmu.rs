//! Loads from the PL011 through a stage-1 alias, with the MMU on.
//!
//! The guest's own tables (4 KiB granule, 33-bit VA space, lookup from level 1):
//! - VA 0..4 GiB: identity; the first GiB Device-nGnRnE, the rest Normal non-cacheable
//!   (caches stay off, so nothing needs cache maintenance);
//! - VA 0x1_0000_0000: one 4 KiB page → PA 0x0900_0000 (the PL011), Device-nGnRnE, through a
//!   level-2 and a level-3 table.
//!
//! A load through the alias reaches the hypervisor with `FAR_EL2` = the VA and the IPA in
//! `HPFAR_EL2`; a load pair there also needs the instruction fetched through these tables.

use crate::exec::{exec, Regs};
use crate::pl011::{expect, expect_abort, id_pairs, ID, UART};
use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{
    ReadWriteable, Readable, Writeable, MAIR_EL1, SCTLR_EL1, TCR_EL1, TTBR0_EL1,
};
use core::arch::asm;
use core::cell::UnsafeCell;
use guest_rt::report::Report;

/// VA of the PL011 alias.
pub const ALIAS: u64 = 0x1_0000_0000;

/// One 4 KiB translation table.
#[repr(C, align(4096))]
struct Table(UnsafeCell<[u64; 512]>);

// SAFETY: one CPU; the tables are written only with the MMU off, before they are used.
unsafe impl Sync for Table {}

static L1: Table = Table(UnsafeCell::new([0; 512]));
static L2: Table = Table(UnsafeCell::new([0; 512]));
static L3: Table = Table(UnsafeCell::new([0; 512]));

/// Descriptor bits (VMSAv8-64 stage 1).
const BLOCK: u64 = 0b01;
const TABLE: u64 = 0b11;
const PAGE: u64 = 0b11;
const AF: u64 = 1 << 10;
/// `AttrIndx` 0: `MAIR_EL1.Attr0` = Device-nGnRnE.
const DEVICE: u64 = 0 << 2;
/// `AttrIndx` 1: `MAIR_EL1.Attr1` = Normal non-cacheable.
const NORMAL: u64 = 1 << 2;
/// PXN | UXN.
const XN: u64 = (1 << 53) | (1 << 54);

fn write(table: &Table, index: usize, value: u64) {
    // SAFETY: `index` < 512 indexes the static table; see `Table`'s `Sync`.
    unsafe { (table.0.get() as *mut u64).add(index).write_volatile(value) };
}

fn pa(table: &Table) -> u64 {
    // Identity: with the MMU off the address of the static is its physical address.
    table.0.get() as u64
}

fn build() {
    for i in 0..4u64 {
        let attrs = if i == 0 { DEVICE | XN } else { NORMAL };
        write(&L1, i as usize, (i << 30) | attrs | AF | BLOCK);
    }
    write(&L1, (ALIAS >> 30) as usize, pa(&L2) | TABLE);
    write(&L2, ((ALIAS >> 21) & 511) as usize, pa(&L3) | TABLE);
    write(
        &L3,
        ((ALIAS >> 12) & 511) as usize,
        UART | DEVICE | XN | AF | PAGE,
    );
    barrier::dsb(barrier::SY);
}

fn enable() {
    MAIR_EL1.write(
        MAIR_EL1::Attr0_Device::nonGathering_nonReordering_noEarlyWriteAck
            + MAIR_EL1::Attr1_Normal_Outer::NonCacheable
            + MAIR_EL1::Attr1_Normal_Inner::NonCacheable,
    );
    TCR_EL1.write(
        TCR_EL1::T0SZ.val(31)
            + TCR_EL1::TG0::KiB_4
            + TCR_EL1::SH0::None
            + TCR_EL1::ORGN0::NonCacheable
            + TCR_EL1::IRGN0::NonCacheable
            + TCR_EL1::EPD1::DisableTTBR1Walks
            + TCR_EL1::IPS::Bits_32,
    );
    TTBR0_EL1.set(pa(&L1));
    barrier::isb(barrier::SY);
    // SAFETY: invalidating this CPU's EL1&0 TLB entries only affects translation, which is
    // still off; the barriers complete it before the MMU is turned on.
    unsafe { asm!("tlbi vmalle1", "dsb nsh", "isb", options(nostack)) };
    SCTLR_EL1.modify(SCTLR_EL1::M::Enable);
    barrier::isb(barrier::SY);
}

fn disable() {
    SCTLR_EL1.modify(SCTLR_EL1::M::Disable);
    barrier::isb(barrier::SY);
}

/// Runs the checks with the MMU on, then turns it off again.
pub fn run(report: &mut Report) {
    if SCTLR_EL1.is_set(SCTLR_EL1::M) {
        report.check(
            "MMU initially off",
            false,
            format_args!("SCTLR_EL1.M is set"),
        );
        return;
    }
    build();
    enable();
    crate::say!("MMU on: PL011 also at VA {ALIAS:#x}");

    let r = Regs::base(ALIAS + 0xfe0);
    let (got, f) = exec!("ldr w2, [x1]", r);
    expect(
        report,
        "alias: ldr w PeriphID0",
        got,
        Regs { x2: ID[0], ..r },
        f,
    );
    let (got, f) = exec!("ldr w2, [x1], #4", r);
    let want = Regs {
        x1: r.x1 + 4,
        x2: ID[0],
        ..r
    };
    expect(report, "alias: ldr w, [x1], #4 (post-index)", got, want, f);
    let r = Regs { x4: 10, ..r };
    let (got, f) = exec!("ldrsh x2, [x1, x4, lsl #1]", r);
    expect(
        report,
        "alias: ldrsh x, [x1, x4, lsl #1] PCellID1",
        got,
        Regs { x2: ID[5], ..r },
        f,
    );
    id_pairs(report, ALIAS);
    // The identity-mapped PL011 and an unbacked device address with the MMU on.
    let r = Regs::base(UART + 0xff8);
    let (got, f) = exec!("ldp w2, w3, [x1]", r);
    expect(
        report,
        "identity: ldp w, w PCellID2/3",
        got,
        Regs {
            x2: ID[6],
            x3: ID[7],
            ..r
        },
        f,
    );
    let r = Regs::base(0x0b00_0000);
    let (got, f) = exec!("ldp w2, w3, [x1]", r);
    expect_abort(report, "identity: ldp w, w of the hole", got, r, r.x1, f);

    disable();
    crate::say!("MMU off");
}
