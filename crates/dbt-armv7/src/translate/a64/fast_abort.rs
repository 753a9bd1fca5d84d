//! Guest Data Aborts delivered by the host's fault handler, without leaving translated
//! code: when a translated load or store faults on the host at a site the engine has seen
//! take the guest's Data Abort before ([`FaultSites`]), and the guest's own translation of
//! the address says the access faults (walked, as the interpreter does; a refusal by a
//! valid entry is remembered per page and regime until the guest's next TLB maintenance,
//! as a TLB may hold it), the handler performs the abort entry on the guest [`Cpu`] (the
//! interpreter's own `take_exception`, so `DFSR`, `DFAR`, `SPSR_abt`, `LR_abt` = PC + 8,
//! the mode switch and `CPSR` are exactly the interpreter's) and resumes translated code
//! at the abort vector's block (found in the translation context's target cache), or
//! leaves to the dispatcher at the vector. The dispatcher, the second run of the
//! instruction in the interpreter and most walks are skipped (issue 17's `dabt` row: about
//! 1,960 host instructions per abort before, about 540 after).
//!
//! Everything unusual goes the old way ([`redirect_fault`](super::redirect_fault)): a site
//! not recorded (multi-access instructions, IT blocks, unprivileged forms), User mode (the
//! abort changes the privilege: another translation context), FIQ mode (its banked R8-R12
//! would have to be copied too), a host that wants exceptions reported, per-class
//! counting, `SCTLR.EE`, an interrupt that the interpreter would take before the
//! instruction, a budget that does not cover the instruction, an address near a page
//! boundary (an access that may cross it: which byte faults is the interpreter's business)
//! or above 4 GiB (a wrapped address), a misaligned access with `SCTLR.A`, and any address
//! whose guest translation succeeds (a host-only fault: shadow miss, code-page write
//! protection, ...) unless the host knows that nothing backs it.

use super::{BUDGET, IBTC, STATE, T_ADDR, T_FLAGS, T_OP2};
use crate::bus::Bus;
use crate::cpu::{psr, Cpu, Exception, Mode};
use crate::mmu::{Access, Fault, FaultKind};
use crate::translate::fault_sites::{FaultSite, FaultSites};
use crate::translate::state::{GuestState, EXIT_BX, IBTC_ENTRIES, NO_LINK};
use crate::translate::sys_call::CallCtx;

/// NZCV in the CPSR and in `SPSR_EL1`/`pstate`.
const NZCV: u32 = 0xf000_0000;
/// `SCTLR.A`: alignment checks.
const SCTLR_A: u32 = 1 << 1;
/// `SCTLR.EE`: exceptions set `CPSR.E` (big-endian data, not translated).
const SCTLR_EE: u32 = 1 << 25;

/// The host's fault handler calls this, before
/// [`redirect_fault`](super::redirect_fault), for a synchronous translation or
/// permission fault (or, with `unbacked`, any fault) that interrupted the host context
/// `x` (`x0`-`x30`, flags `pstate` as `SPSR_EL1` holds them) at `pc`, accessing data
/// address `addr`. If `pc` is in the code cache `cache` at a recorded site and the guest
/// takes a Data Abort for the access (see the module documentation), performs the guest's
/// abort entry, points the context at the abort vector's translated block (or at the
/// epilogue at `epilogue`, leaving with the vector as an interworking branch's target)
/// and returns true; otherwise changes nothing and returns false.
///
/// `unbacked`: the host knows that no guest RAM or device is at the physical address
/// when the guest's translation succeeds (a host without devices whose guest memory is
/// mapped where it is, such as `a64-runner`): the access is the guest's synchronous
/// external abort.
///
/// # Safety
///
/// `x` is the context of translated code of a [`Dbt`](crate::translate::Dbt) that is
/// inside the code cache (its [`STATE`] register holds the dispatcher's [`GuestState`],
/// whose `link_site` holds the entry's [`CallCtx`]); the guest [`Cpu`] and bus are not
/// otherwise in use while the handler runs.
pub unsafe fn deliver_guest_abort(
    x: &mut [u64; 31],
    pc: &mut u64,
    pstate: u64,
    addr: u64,
    cache: core::ops::Range<u64>,
    epilogue: u64,
    unbacked: bool,
) -> bool {
    let offset = addr & 0xfff;
    if !cache.contains(pc) || addr >> 32 != 0 || !(4..=0xffc).contains(&offset) {
        return false;
    }
    // SAFETY: translated code keeps the dispatcher's GuestState in STATE (the contract).
    let st = unsafe { &mut *(x[STATE as usize] as *mut GuestState) };
    if st.fault_sites == 0 {
        return false;
    }
    // SAFETY: the engine's table, alive while its translated code runs.
    let sites = unsafe { &mut *(st.fault_sites as *mut FaultSites) };
    let Some(&site) = sites.get(*pc) else {
        return false;
    };
    let charged = site.index as i64 + 1;
    if (x[BUDGET as usize] as i64) < charged {
        return false;
    }
    // SAFETY: link_site is the entry's CallCtx while translated code runs (the contract),
    // and its CPU and bus are not otherwise in use.
    let (cpu, bus) = unsafe {
        let ctx = &mut *(st.link_site as *mut CallCtx<'_>);
        (&mut *ctx.cpu, &mut *ctx.bus)
    };
    let Some(fsr) = guest_abort(cpu, bus, sites, addr as u32, &site, unbacked) else {
        return false;
    };
    // The interpreter's state for the instruction (as the engine's fault exit sets it),
    // as far as the entry uses it: the banked SP and LR (not FIQ mode: `guest_abort`),
    // the flags, the instruction set and the PC. r0-r12 stay in `x`.
    cpu.r[13] = x[13] as u32;
    cpu.r[14] = x[14] as u32;
    cpu.cpsr = (cpu.cpsr & !NZCV) | (pstate as u32 & NZCV);
    if site.pc & 1 != 0 {
        cpu.cpsr |= psr::T;
    } else {
        cpu.cpsr &= !psr::T;
    }
    cpu.it = 0;
    cpu.r[15] = site.pc & !1;
    cpu.take_exception(
        Exception::DataAbort {
            fsr,
            far: addr as u32,
        },
        site.len as u32,
    );
    x[13] = cpu.r[13] as u64;
    x[14] = cpu.r[14] as u64;
    // The faulting instruction and the block's ones before it (their exit did not run).
    x[BUDGET as usize] = (x[BUDGET as usize] as i64 - charged) as u64;
    sites.delivered += 1;
    clear_exclusive();
    let target = cpu.r[15] | cpu.thumb() as u32;
    // SAFETY: the context's target cache (IBTC_ENTRIES pairs of guest target, host code),
    // as translated code indexes it.
    let entry = unsafe {
        let e = (x[IBTC as usize] as *const [u64; 2]).add((target as usize >> 2) % IBTC_ENTRIES);
        *e
    };
    if entry[0] == target as u64 {
        *pc = entry[1];
    } else {
        // The dispatcher finds (or translates) the vector's block, and caches it.
        x[T_ADDR as usize] = target as u64;
        x[T_FLAGS as usize] = NO_LINK;
        x[T_OP2 as usize] = EXIT_BX as u64;
        *pc = epilogue;
    }
    true
}

/// The guest's `DFSR` value if the access of `site` at `va` from the current
/// (privileged) mode is a Data Abort that the interpreter would raise exactly so (or a
/// refusal by a valid entry that `sites` remembers for the current regime), else `None`.
/// `unbacked`: see [`deliver_guest_abort`].
fn guest_abort(
    cpu: &mut Cpu,
    bus: &mut dyn Bus,
    sites: &mut FaultSites,
    va: u32,
    site: &FaultSite,
    unbacked: bool,
) -> Option<u32> {
    let (write, size) = (site.write, site.size);
    let sctlr = cpu.cp15.sctlr;
    if cpu.mode == Mode::Usr
        || cpu.mode == Mode::Fiq
        || cpu.exit_on_exception
        || cpu.class_hits.is_some()
        || sctlr & SCTLR_EE != 0
        || (sctlr & SCTLR_A != 0 && va & (size as u32 - 1) != 0)
    {
        return None;
    }
    // `Cpu::step` takes a pending unmasked interrupt before the instruction.
    if !cpu.flag(psr::I) || !cpu.flag(psr::F) {
        cpu.sample_interrupt_lines();
        if (cpu.irq_line && !cpu.flag(psr::I)) || (cpu.fiq_line && !cpu.flag(psr::F)) {
            return None;
        }
    }
    if let Some(dfsr) = sites.verdict(cpu, va, write) {
        return Some(dfsr);
    }
    let acc = Access {
        write,
        fetch: false,
        user: false,
    };
    let fault = match cpu.translate(bus, va, acc) {
        Err(f) => f,
        Ok(pa) if unbacked && bus.ram(pa).is_none() => Fault::new(FaultKind::External),
        Ok(_) => return None,
    };
    Some(sites.learn(cpu, va, write, fault))
}

/// Clears the host's local exclusive monitor, as the guest's exception entry clears its
/// own (`take_exception`): a translated `LDREX` before the abort must not pair with a
/// `STREX` in the handler.
fn clear_exclusive() {
    #[cfg(target_arch = "aarch64")]
    // SAFETY: CLREX only clears the local monitor.
    unsafe {
        core::arch::asm!("clrex", options(nomem, nostack, preserves_flags))
    };
}
