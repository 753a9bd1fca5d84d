//! Guest Data Aborts delivered by the host's fault handler, without leaving translated
//! code: when a translated load or store faults on the host at a site the engine has seen
//! take the guest's Data Abort before ([`FaultSites`]), and the guest's own translation of
//! the address says the access faults (a verdict remembered with a snapshot of the
//! descriptors its walk read, which still hold, or else walked as the interpreter does:
//! [`FaultSites::verdict`]), the handler performs the abort entry on the guest [`Cpu`]
//! (`Cpu::enter_data_abort`, the interpreter's Data Abort entry spelled out, so `DFSR`,
//! `DFAR`, `SPSR_abt`, `LR_abt` = PC + 8, the mode switch and `CPSR` are exactly the
//! interpreter's) and resumes translated code at the abort vector's block (found in the
//! translation context's target cache), or
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
use crate::cpu::{psr, Cpu, Mode};
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
/// otherwise in use while the handler runs; the bus's RAM stays at the host addresses
/// [`Bus::ram`](crate::bus::Bus::ram) gives for as long as one run of the engine lasts
/// (remembered verdicts re-read descriptors there: [`FaultSites::verdict`]).
pub unsafe fn deliver_guest_abort(
    x: &mut [u64; 31],
    pc: &mut u64,
    pstate: u64,
    addr: u64,
    cache: core::ops::Range<u64>,
    epilogue: u64,
    unbacked: bool,
) -> bool {
    if !cache.contains(pc) {
        return false;
    }
    // SAFETY: translated code keeps the dispatcher's GuestState in STATE (the contract).
    let st = unsafe { &*(x[STATE as usize] as *const GuestState) };
    if st.fault_sites == 0 {
        return false;
    }
    // SAFETY: the engine's table, alive while its translated code runs.
    let sites = unsafe { &*(st.fault_sites as *const FaultSites) };
    let Some(&site) = sites.get(*pc) else {
        return false;
    };
    // SAFETY: the caller's contract; `site` is `pc`'s.
    unsafe { deliver_at_site(x, pc, pstate, addr, &site, epilogue, unbacked) }
}

/// [`deliver_guest_abort`] for a caller that has found the site of `pc` (inside the code
/// cache) in the engine's [`FaultSites`] itself (the runtime's vector, in assembly).
///
/// # Safety
///
/// As for [`deliver_guest_abort`]; `site` is the entry of `pc` in the [`FaultSites`] of
/// the engine whose translated code `x` is.
#[inline]
pub unsafe fn deliver_at_site(
    x: &mut [u64; 31],
    pc: &mut u64,
    pstate: u64,
    addr: u64,
    site: &FaultSite,
    epilogue: u64,
    unbacked: bool,
) -> bool {
    // SAFETY: the caller's contract.
    unsafe { deliver::<false>(x, pc, pstate, addr, site, epilogue, unbacked) }
}

/// [`deliver_at_site`] from a remembered verdict only, without calls (a leaf function
/// for the runtime's vector, which saves no callee-saved register for it): false, the
/// context unchanged, wherever [`deliver_at_site`] would walk, learn or sample the
/// interrupt lines (no verdict that holds; `CPSR.I` or `CPSR.F` clear), or decline; the
/// caller then calls [`deliver_at_site`].
///
/// # Safety
///
/// As for [`deliver_at_site`].
#[inline]
pub unsafe fn deliver_remembered(
    x: &mut [u64; 31],
    pc: &mut u64,
    pstate: u64,
    addr: u64,
    site: &FaultSite,
    epilogue: u64,
) -> bool {
    // SAFETY: the caller's contract.
    unsafe { deliver::<true>(x, pc, pstate, addr, site, epilogue, false) }
}

/// [`deliver_at_site`] (`REMEMBERED`: [`deliver_remembered`]).
///
/// # Safety
///
/// As for [`deliver_at_site`].
#[inline(always)]
unsafe fn deliver<const REMEMBERED: bool>(
    x: &mut [u64; 31],
    pc: &mut u64,
    pstate: u64,
    addr: u64,
    site: &FaultSite,
    epilogue: u64,
    unbacked: bool,
) -> bool {
    let offset = addr & 0xfff;
    if addr >> 32 != 0 || !(4..=0xffc).contains(&offset) {
        return false;
    }
    let site = *site;
    // SAFETY: translated code keeps the dispatcher's GuestState in STATE (the contract).
    let st = unsafe { &mut *(x[STATE as usize] as *mut GuestState) };
    // SAFETY: the engine's table (non-null: `site` is in it), alive while its translated
    // code runs.
    let sites = unsafe { &mut *(st.fault_sites as *mut FaultSites) };
    let charged = site.index as i64 + 1;
    if (x[BUDGET as usize] as i64) < charged {
        return false;
    }
    // SAFETY: link_site is the entry's CallCtx while translated code runs (the contract),
    // and its CPU and bus are not otherwise in use.
    let (cpu, bus) = unsafe {
        let ctx = &mut *(st.link_site as *mut CallCtx<'_>);
        (&mut *ctx.cpu, ctx.bus)
    };
    let Some(fsr) = guest_abort::<REMEMBERED>(cpu, bus, sites, addr as u32, &site, unbacked) else {
        return false;
    };
    // The interpreter's entry for the instruction (as after the engine's fault exit):
    // its banked SP and LR (not FIQ mode: `guest_abort`), flags, instruction set and PC.
    // r0-r12 stay in `x`.
    let flags = (pstate as u32 & NZCV) | ((site.pc & 1) * psr::T);
    let [sp, lr] = cpu.enter_data_abort(
        [x[13] as u32, x[14] as u32],
        flags,
        site.pc & !1,
        fsr,
        addr as u32,
    );
    x[13] = sp as u64;
    x[14] = lr as u64;
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
/// `unbacked`: see [`deliver_guest_abort`]. `REMEMBERED`: `None` instead of sampling
/// the interrupt lines or walking.
#[inline(always)]
fn guest_abort<const REMEMBERED: bool>(
    cpu: &mut Cpu,
    bus: *mut dyn Bus,
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
    if (!cpu.flag(psr::I) || !cpu.flag(psr::F)) && (REMEMBERED || interrupt_pending(cpu)) {
        return None;
    }
    // SAFETY: the run's bus is `bus`, through which the engine (new_run at each run)
    // had every verdict learnt.
    if let Some(dfsr) = unsafe { sites.verdict(cpu, va, write) } {
        return Some(dfsr);
    }
    if REMEMBERED {
        return None;
    }
    // SAFETY: the entry's bus, not otherwise in use (`deliver_guest_abort`'s contract).
    learn(sites, cpu, unsafe { &mut *bus }, va, write, unbacked)
}

/// Whether an unmasked interrupt is pending now (`Cpu::step` would take it first); out
/// of the verdict's path.
#[cold]
#[inline(never)]
fn interrupt_pending(cpu: &mut Cpu) -> bool {
    cpu.sample_interrupt_lines();
    (cpu.irq_line && !cpu.flag(psr::I)) || (cpu.fiq_line && !cpu.flag(psr::F))
}

/// [`FaultSites::learn`], out of the remembered verdict's path.
#[cold]
#[inline(never)]
fn learn(
    sites: &mut FaultSites,
    cpu: &mut Cpu,
    bus: &mut dyn Bus,
    va: u32,
    write: bool,
    unbacked: bool,
) -> Option<u32> {
    sites.learn(cpu, bus, va, write, unbacked)
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

#[cfg(test)]
mod tests {
    use crate::cpu::{psr, Cpu, Exception, Mode};
    use alloc::format;

    /// `Cpu::enter_data_abort` is `take_exception`'s Data Abort entry with the registers
    /// and flags set first: every PL1 mode but FIQ, both instruction sets, `SCTLR.TE`,
    /// `SCTLR.EE`, `SCTLR.V`, flags, and stray IT bits in the stored CPSR.
    #[test]
    fn the_specialised_entry_is_the_interpreters() {
        let modes = [Mode::Svc, Mode::Abt, Mode::Und, Mode::Irq, Mode::Sys];
        for (k, &mode) in modes.iter().enumerate() {
            for variant in 0..64u32 {
                let setup = || {
                    let mut cpu = Cpu::new();
                    cpu.set_cpsr(mode as u32 | psr::F | ((variant & 1) * psr::I));
                    cpu.cp15.sctlr |= (variant >> 1 & 1) << 30 | (variant >> 2 & 1) << 25;
                    cpu.cp15.sctlr |= (variant >> 3 & 1) << 13;
                    cpu.cp15.vbar = 0x8000_0040;
                    cpu.cpsr |= (variant >> 5 & 1) << 25; // a stray IT[0] bit in the field
                    for (m, r) in modes.iter().enumerate() {
                        let b = 0x100 * m as u32;
                        cpu.bank_sp_lr[r.bank()] = [b + 13, b + 14];
                    }
                    cpu.monitor = Some(0x40);
                    cpu
                };
                let mut cpu = setup();
                let thumb = variant >> 4 & 1;
                let pc = 0x1000 + 4 * k as u32;
                let flags = (variant.wrapping_mul(0x1357_9bdf) & 0xf000_0000) | (thumb * psr::T);
                let (sp, lr) = (0xaa00 + k as u32, 0xbb00 + k as u32);
                let mut want = setup();
                want.r[13] = sp;
                want.r[14] = lr;
                want.cpsr = (want.cpsr & !(0xf000_0000 | psr::T)) | flags;
                want.r[15] = pc;
                want.take_exception(
                    Exception::DataAbort {
                        fsr: 0x805,
                        far: 0x5000_0040,
                    },
                    if thumb != 0 { 2 } else { 4 },
                );
                let got = cpu.enter_data_abort([sp, lr], flags, pc, 0x805, 0x5000_0040);
                let what = format!("{mode:?} variant {variant:#x}");
                assert_eq!(got, [want.r[13], want.r[14]], "{what}");
                assert_eq!(cpu.r, want.r, "{what}");
                assert_eq!(
                    (cpu.cpsr, cpu.cpsr(), cpu.it, cpu.mode),
                    (want.cpsr, want.cpsr(), want.it, want.mode),
                    "{what}"
                );
                assert_eq!(
                    (cpu.bank_sp_lr, cpu.spsr, cpu.monitor),
                    (want.bank_sp_lr, want.spsr, want.monitor),
                    "{what}"
                );
                assert_eq!(
                    (cpu.cp15.dfsr, cpu.cp15.dfar),
                    (want.cp15.dfsr, want.cp15.dfar),
                    "{what}"
                );
            }
        }
    }
}
