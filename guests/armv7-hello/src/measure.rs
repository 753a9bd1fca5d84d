//! `measure_id` on the kernel command line: the cost of an ID register read the hypervisor
//! traps (`HCR_EL2.TID3`: `ID_MMFR3`) beside a CP15 read that does not trap (`TPIDRURW`),
//! 1000 of each between two `CNTVCT` reads. Under QEMU's `-icount shift=0` one counter tick
//! is 16 guest-visible instructions, so the printed tick counts are exact and repeatable.

use core::arch::asm;

use crate::uart::{puthex, puts};

/// Reads per measurement.
const READS: u32 = 1000;

fn cntvct() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: CNTVCT read (MRRC p15, 1, c14), after an ISB so earlier reads completed.
    unsafe {
        asm!("isb", "mrrc p15, 1, {}, {}, c14", out(reg) lo, out(reg) hi, options(nomem, nostack))
    };
    u64::from(hi) << 32 | u64::from(lo)
}

/// Ticks for [`READS`] reads of the register `read` names.
fn ticks(read: fn()) -> u32 {
    let t0 = cntvct();
    for _ in 0..READS {
        read();
    }
    (cntvct() - t0) as u32
}

fn id_mmfr3() {
    // SAFETY: ID_MMFR3 read (TID3 traps it to the hypervisor).
    unsafe { asm!("mrc p15, 0, {}, c0, c1, 7", out(reg) _, options(nomem, nostack)) };
}

fn tpidrurw() {
    // SAFETY: TPIDRURW read (not trapped).
    unsafe { asm!("mrc p15, 0, {}, c13, c0, 2", out(reg) _, options(nomem, nostack)) };
}

/// With `measure_id`: prints the ticks of 1000 trapped and 1000 untrapped reads.
pub fn measure_id(dtb: u32) {
    if !crate::reset::dtb_mentions(dtb, b"measure_id") {
        return;
    }
    let trapped = ticks(id_mmfr3);
    let plain = ticks(tpidrurw);
    puts("armv7-hello: measure_id: 1000 ID_MMFR3 reads (TID3) ");
    puthex(trapped);
    puts(" ticks, 1000 TPIDRURW reads ");
    puthex(plain);
    puts(" ticks\n");
}
