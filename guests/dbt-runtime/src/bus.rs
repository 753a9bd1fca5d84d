//! The guest's physical address space for the interpreter (and the shadow's table walks):
//! the runtime's physical window (`mmu::WINDOW`), mapped whatever the guest's MMU does. RAM and devices are reached with single loads and stores of the access's
//! size (`ESR_EL2.ISV` = 1 when the hypervisor emulates them); an abort (nothing at that
//! IPA: the hypervisor injects an external abort) becomes `BusFault`, i.e. the guest's
//! architectural data abort, through the probe routines' fixup in `vectors.rs`.

use crate::mmu::WINDOW;
use dbt_armv7::{Bus, BusFault};

/// What a probe returns: the value read and whether it faulted (`x0`, `x1`).
#[repr(C)]
struct Probe {
    value: u64,
    fault: u64,
}

core::arch::global_asm!(
    ".section .text.probe, \"ax\"",
    ".balign 4",
    ".global dbt_rt_probe_start",
    ".global dbt_rt_probe_end",
    "dbt_rt_probe_start:",
    "dbt_rt_ld8: ldrb w0, [x0]",
    "mov x1, xzr",
    "ret",
    "dbt_rt_ld16: ldrh w0, [x0]",
    "mov x1, xzr",
    "ret",
    "dbt_rt_ld32: ldr w0, [x0]",
    "mov x1, xzr",
    "ret",
    "dbt_rt_ld64: ldr x0, [x0]",
    "mov x1, xzr",
    "ret",
    "dbt_rt_st8: strb w1, [x0]",
    "mov x1, xzr",
    "ret",
    "dbt_rt_st16: strh w1, [x0]",
    "mov x1, xzr",
    "ret",
    "dbt_rt_st32: str w1, [x0]",
    "mov x1, xzr",
    "ret",
    "dbt_rt_st64: str x1, [x0]",
    "mov x1, xzr",
    "ret",
    "dbt_rt_probe_end:",
    ".global dbt_rt_ld8, dbt_rt_ld16, dbt_rt_ld32, dbt_rt_ld64",
    ".global dbt_rt_st8, dbt_rt_st16, dbt_rt_st32, dbt_rt_st64",
);

extern "C" {
    static dbt_rt_probe_start: u8;
    static dbt_rt_probe_end: u8;
    fn dbt_rt_ld8(a: u64) -> Probe;
    fn dbt_rt_ld16(a: u64) -> Probe;
    fn dbt_rt_ld32(a: u64) -> Probe;
    fn dbt_rt_ld64(a: u64) -> Probe;
    fn dbt_rt_st8(a: u64, v: u64) -> Probe;
    fn dbt_rt_st16(a: u64, v: u64) -> Probe;
    fn dbt_rt_st32(a: u64, v: u64) -> Probe;
    fn dbt_rt_st64(a: u64, v: u64) -> Probe;
}

/// Whether `pc` is a probe's access (its abort is the probe's failure).
pub fn is_probe(pc: u64) -> bool {
    // Linker symbols: only their addresses are used.
    let lo = core::ptr::addr_of!(dbt_rt_probe_start) as u64;
    let hi = core::ptr::addr_of!(dbt_rt_probe_end) as u64;
    (lo..hi).contains(&pc)
}

/// End of the guest's physical space.
const LIMIT: u64 = 1 << 32;

/// The guest's physical address space; `ram` is its RAM (for instruction fetch).
pub struct GuestBus {
    /// Guest RAM `[start, end)` (IPAs).
    pub ram: core::ops::Range<u64>,
}

fn in_space(pa: u64, size: u8) -> bool {
    matches!(size, 1 | 2 | 4 | 8) && pa.checked_add(size as u64).is_some_and(|e| e <= LIMIT)
}

/// Stores `value` (`size` bytes) at guest physical `pa` (below 4 GiB) through the
/// window; true if the store faulted.
fn store(pa: u64, size: u8, value: u64) -> bool {
    // SAFETY: `pa` is below 4 GiB: the window onto the guest's own physical space, where
    // an access either succeeds or aborts into the probe fixup.
    let p = unsafe {
        match size {
            1 => dbt_rt_st8(WINDOW + pa, value),
            2 => dbt_rt_st16(WINDOW + pa, value),
            4 => dbt_rt_st32(WINDOW + pa, value),
            _ => dbt_rt_st64(WINDOW + pa, value),
        }
    };
    p.fault != 0
}

impl Bus for GuestBus {
    fn read(&mut self, pa: u64, size: u8) -> Result<u64, BusFault> {
        if !in_space(pa, size) {
            return Err(BusFault);
        }
        // SAFETY: `pa` is below 4 GiB: the window onto the guest's own physical space,
        // where an access either succeeds or aborts into the probe fixup.
        let p = unsafe {
            match size {
                1 => dbt_rt_ld8(WINDOW + pa),
                2 => dbt_rt_ld16(WINDOW + pa),
                4 => dbt_rt_ld32(WINDOW + pa),
                _ => dbt_rt_ld64(WINDOW + pa),
            }
        };
        if p.fault != 0 {
            return Err(BusFault);
        }
        Ok(p.value)
    }

    fn write(&mut self, pa: u64, size: u8, value: u64) -> Result<(), BusFault> {
        if !in_space(pa, size) {
            return Err(BusFault);
        }
        // A code page another vCPU translated from (read-only for it) takes the store
        // through the runtime's write alias. A page that no vCPU holds any more became
        // writable between the fault and the look at the holders (its last holder dropped
        // its translations: on SMP Linux, one vCPU poisoning `__init` pages while the
        // other drained its mailbox): the store is made again. Anything else is the
        // guest's abort.
        for _ in 0..2 {
            if !store(pa, size, value) || crate::smp::write_held(pa, size, value) {
                return Ok(());
            }
        }
        Err(BusFault)
    }

    fn ram(&mut self, pa: u64) -> Option<&[u8]> {
        if !self.ram.contains(&pa) {
            return None;
        }
        // SAFETY: guest RAM from `pa` to its end, in the window and always backed.
        Some(unsafe {
            core::slice::from_raw_parts((WINDOW + pa) as *const u8, (self.ram.end - pa) as usize)
        })
    }
}
