//! Emulation of a guest's trapped GICv3 CPU-interface registers (`ICC_*_EL1` while
//! `ICH_HCR_EL2.TALL0`/`TALL1`/`TC` are set) against the live virtual CPU interface: the
//! list registers, `ICH_VMCR_EL2` and the active-priority registers `ICH_AP0Rn_EL2` /
//! `ICH_AP1Rn_EL2`. The result is what the hardware's `ICV_*` registers would have done, so the
//! vGIC model reads the list registers back after the exit as if the guest had run untrapped.
//!
//! Used for Cavium ThunderX erratum 30115 (guest `ICV_*` accesses misbehave unless trapped),
//! the same job as KVM's `__vgic_v3_perform_cpuif_access`. Pure logic over
//! [`VirtualCpuInterface`]; the hardware implementation is
//! `crate::backends::ich_cpuif::IchCpuIf`.

use crate::lr::{LrEntry, LrState};

/// The INTID a read of `ICC_IAR<n>_EL1`/`ICC_HPPIR<n>_EL1` returns when nothing qualifies.
pub const SPURIOUS: u32 = 1023;
/// The first LPI INTID (LPIs are never held in this vGIC's list registers, but a guest may
/// name one in an EOI or deactivation).
pub const MIN_LPI: u32 = 8192;
/// Priority of an idle CPU interface (no active priority), as `ICC_RPR_EL1` reports it.
pub const IDLE_PRIORITY: u32 = 0xff;

/// `ICH_VMCR_EL2` fields.
pub mod vmcr {
    /// `VENG0`: virtual group 0 enabled.
    pub const ENG0: u64 = 1 << 0;
    /// `VENG1`: virtual group 1 enabled.
    pub const ENG1: u64 = 1 << 1;
    /// `VCBPR`: `ICC_BPR0_EL1` also serves group 1.
    pub const CBPR: u64 = 1 << 4;
    /// `VEOIM`: EOI only drops the priority; `ICC_DIR_EL1` deactivates.
    pub const EOIM: u64 = 1 << 9;
    /// `VBPR1` shift (3 bits).
    pub const BPR1_SHIFT: u32 = 18;
    /// `VBPR0` shift (3 bits).
    pub const BPR0_SHIFT: u32 = 21;
    /// `VPMR` shift (8 bits).
    pub const PMR_SHIFT: u32 = 24;
}

/// `ICC_CTLR_EL1` fields a guest sees.
pub mod ctlr {
    /// `CBPR`.
    pub const CBPR: u64 = 1 << 0;
    /// `EOImode`.
    pub const EOIMODE: u64 = 1 << 1;
    /// `PRIbits` shift (3 bits).
    pub const PRIBITS_SHIFT: u32 = 8;
    /// `IDbits` shift (3 bits).
    pub const IDBITS_SHIFT: u32 = 11;
    /// `A3V`.
    pub const A3V: u64 = 1 << 15;
}

/// Interrupt group of a banked register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Group 0 (`*0_EL1` registers, FIQs).
    G0,
    /// Group 1 (`*1_EL1` registers, IRQs).
    G1,
}

/// A guest CPU-interface register that this module emulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IccReg {
    /// `ICC_IAR0_EL1` / `ICC_IAR1_EL1` (read).
    Iar(Group),
    /// `ICC_EOIR0_EL1` / `ICC_EOIR1_EL1` (write).
    Eoir(Group),
    /// `ICC_HPPIR0_EL1` / `ICC_HPPIR1_EL1` (read).
    Hppir(Group),
    /// `ICC_BPR0_EL1` / `ICC_BPR1_EL1`.
    Bpr(Group),
    /// `ICC_AP0R<n>_EL1` / `ICC_AP1R<n>_EL1`, n = 0..=3.
    Apr(Group, u8),
    /// `ICC_IGRPEN0_EL1` / `ICC_IGRPEN1_EL1`.
    Igrpen(Group),
    /// `ICC_CTLR_EL1`.
    Ctlr,
    /// `ICC_PMR_EL1`.
    Pmr,
    /// `ICC_DIR_EL1` (write).
    Dir,
    /// `ICC_RPR_EL1` (read).
    Rpr,
}

impl IccReg {
    /// The register with this `MRS`/`MSR` encoding, if it is one of the emulated ones
    /// (`op0=3, op1=0`: `CRn=4, CRm=6, op2=0` is `ICC_PMR_EL1`; the rest are `CRn=12`). The
    /// SGI generation registers (`CRn=12, CRm=11, op2=5..7`) and `ICC_SRE_EL1` are not.
    pub fn from_encoding(op0: u8, op1: u8, crn: u8, crm: u8, op2: u8) -> Option<Self> {
        use Group::{G0, G1};
        if op0 != 3 || op1 != 0 {
            return None;
        }
        if (crn, crm, op2) == (4, 6, 0) {
            return Some(IccReg::Pmr);
        }
        if crn != 12 {
            return None;
        }
        Some(match (crm, op2) {
            (8, 0) => IccReg::Iar(G0),
            (8, 1) => IccReg::Eoir(G0),
            (8, 2) => IccReg::Hppir(G0),
            (8, 3) => IccReg::Bpr(G0),
            (8, n @ 4..=7) => IccReg::Apr(G0, n - 4),
            (9, n @ 0..=3) => IccReg::Apr(G1, n),
            (11, 1) => IccReg::Dir,
            (11, 3) => IccReg::Rpr,
            (12, 0) => IccReg::Iar(G1),
            (12, 1) => IccReg::Eoir(G1),
            (12, 2) => IccReg::Hppir(G1),
            (12, 3) => IccReg::Bpr(G1),
            (12, 4) => IccReg::Ctlr,
            (12, 6) => IccReg::Igrpen(G0),
            (12, 7) => IccReg::Igrpen(G1),
            _ => return None,
        })
    }

    /// Whether the register can be read / written (`Iar`, `Hppir`, `Rpr` are read-only;
    /// `Eoir`, `Dir` write-only).
    pub fn allows(self, is_read: bool) -> bool {
        match self {
            IccReg::Iar(_) | IccReg::Hppir(_) | IccReg::Rpr => is_read,
            IccReg::Eoir(_) | IccReg::Dir => !is_read,
            _ => true,
        }
    }
}

/// The live virtual CPU interface of the vCPU that trapped (the `ICH_*_EL2` registers of the
/// CPU it runs on, or a model of them in tests).
pub trait VirtualCpuInterface {
    /// `ICH_VTR_EL2`: implemented list registers, priority and preemption bits.
    fn vtr(&self) -> u64;
    /// `ICH_VMCR_EL2`.
    fn vmcr(&self) -> u64;
    /// Writes `ICH_VMCR_EL2`.
    fn set_vmcr(&mut self, value: u64);
    /// List register `i` (`i` below `ICH_VTR_EL2.ListRegs` + 1).
    fn lr(&self, i: usize) -> LrEntry;
    /// Writes list register `i`.
    fn set_lr(&mut self, i: usize, e: LrEntry);
    /// `ICH_AP0R<n>_EL2` (`group` G0) or `ICH_AP1R<n>_EL2` (G1).
    fn apr(&self, group: Group, n: usize) -> u32;
    /// Writes an active-priority register.
    fn set_apr(&mut self, group: Group, n: usize, value: u32);
    /// Increments `ICH_HCR_EL2.EOIcount` (an EOI or deactivation matched no list register).
    fn bump_eoicount(&mut self);
    /// Deactivates physical interrupt `pintid` (a hardware-mapped list register was
    /// deactivated by emulation, which the hardware would have forwarded).
    fn deactivate_physical(&mut self, pintid: u32);
}

/// What a refused access is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A read of a write-only register or a write of a read-only one (UNDEFINED).
    WrongDirection,
}

/// Performs the access: `Ok(Some(value))` for a read (the value for the guest's register),
/// `Ok(None)` for a write.
pub fn access(
    cpu: &mut impl VirtualCpuInterface,
    reg: IccReg,
    is_read: bool,
    value: u64,
) -> Result<Option<u64>, Refused> {
    if !reg.allows(is_read) {
        return Err(Refused::WrongDirection);
    }
    let vmcr = cpu.vmcr();
    let read = |v: u64| Ok(Some(v));
    match (reg, is_read) {
        (IccReg::Iar(g), _) => read(u64::from(acknowledge(cpu, vmcr, g))),
        (IccReg::Hppir(g), _) => read(u64::from(highest_pending(cpu, vmcr, g))),
        (IccReg::Rpr, _) => read(u64::from(running_priority(cpu))),
        (IccReg::Eoir(g), _) => {
            end_of_interrupt(cpu, vmcr, g, value as u32);
            Ok(None)
        }
        (IccReg::Dir, _) => {
            deactivate(cpu, vmcr, value as u32);
            Ok(None)
        }
        (IccReg::Pmr, true) => read((vmcr >> vmcr::PMR_SHIFT) & 0xff),
        (IccReg::Pmr, false) => {
            let pmr = (value & 0xff) << vmcr::PMR_SHIFT;
            cpu.set_vmcr(vmcr & !(0xff << vmcr::PMR_SHIFT) | pmr);
            Ok(None)
        }
        (IccReg::Bpr(g), true) => read(u64::from(bpr(vmcr, g))),
        (IccReg::Bpr(g), false) => {
            write_bpr(cpu, vmcr, g, value);
            Ok(None)
        }
        (IccReg::Igrpen(g), true) => read(u64::from(vmcr & enable_bit(g) != 0)),
        (IccReg::Igrpen(g), false) => {
            let bit = enable_bit(g);
            cpu.set_vmcr(if value & 1 != 0 {
                vmcr | bit
            } else {
                vmcr & !bit
            });
            Ok(None)
        }
        (IccReg::Apr(g, n), true) => read(u64::from(cpu.apr(g, usize::from(n)))),
        (IccReg::Apr(g, n), false) => {
            if usize::from(n) < apr_count(cpu.vtr()) {
                cpu.set_apr(g, usize::from(n), value as u32);
            }
            Ok(None)
        }
        (IccReg::Ctlr, true) => read(read_ctlr(cpu.vtr(), vmcr)),
        (IccReg::Ctlr, false) => {
            let mut v = vmcr & !(vmcr::CBPR | vmcr::EOIM);
            if value & ctlr::CBPR != 0 {
                v |= vmcr::CBPR;
            }
            if value & ctlr::EOIMODE != 0 {
                v |= vmcr::EOIM;
            }
            cpu.set_vmcr(v);
            Ok(None)
        }
    }
}

fn enable_bit(g: Group) -> u64 {
    match g {
        Group::G0 => vmcr::ENG0,
        Group::G1 => vmcr::ENG1,
    }
}

/// Implemented list registers (`ICH_VTR_EL2.ListRegs` + 1).
fn lr_count(vtr: u64) -> usize {
    (vtr & 0x1f) as usize + 1
}

/// Preemption bits (`ICH_VTR_EL2.PREbits` + 1).
fn pre_bits(vtr: u64) -> u32 {
    ((vtr >> 26) & 7) as u32 + 1
}

/// Implemented active-priority registers per group: 1, 2 or 4 for 5, 6 or 7 preemption bits.
fn apr_count(vtr: u64) -> usize {
    match pre_bits(vtr) {
        7 => 4,
        6 => 2,
        _ => 1,
    }
}

/// The smallest binary point (`8 - preemption bits`): below it no priority bit is a
/// sub-priority bit.
fn bpr_min(vtr: u64) -> u32 {
    8 - pre_bits(vtr)
}

fn bpr0(vmcr: u64) -> u32 {
    ((vmcr >> vmcr::BPR0_SHIFT) & 7) as u32
}

/// The binary point of group `g` as `ICC_BPR<n>_EL1` reads it (`VCBPR`: group 1 uses BPR0 + 1).
fn bpr(vmcr: u64, g: Group) -> u32 {
    match g {
        Group::G0 => bpr0(vmcr),
        Group::G1 if vmcr & vmcr::CBPR != 0 => (bpr0(vmcr) + 1).min(7),
        Group::G1 => ((vmcr >> vmcr::BPR1_SHIFT) & 7) as u32,
    }
}

fn write_bpr(cpu: &mut impl VirtualCpuInterface, vmcr: u64, g: Group, value: u64) {
    let min = bpr_min(cpu.vtr());
    let (shift, min) = match g {
        Group::G0 => (vmcr::BPR0_SHIFT, min - 1),
        // With VCBPR set, ICC_BPR1_EL1 writes are ignored.
        Group::G1 if vmcr & vmcr::CBPR != 0 => return,
        Group::G1 => (vmcr::BPR1_SHIFT, min),
    };
    let v = (value & 7).max(u64::from(min));
    cpu.set_vmcr(vmcr & !(7 << shift) | v << shift);
}

/// The group priority of `priority` in group `g`: the bits above the binary point (group 0's
/// binary point is `BPR0 + 1` for preemption, as the pseudocode's `VPriorityGroup`).
fn preemption_level(priority: u8, vmcr: u64, g: Group) -> u32 {
    let point = match g {
        Group::G0 => bpr0(vmcr) + 1,
        Group::G1 => bpr(vmcr, Group::G1),
    };
    u32::from(priority) & (0xff << point) & 0xff
}

/// The highest active priority over both groups (`ICC_RPR_EL1`), or [`IDLE_PRIORITY`].
fn running_priority(cpu: &impl VirtualCpuInterface) -> u32 {
    let vtr = cpu.vtr();
    for n in 0..apr_count(vtr) {
        let bits = cpu.apr(Group::G0, n) | cpu.apr(Group::G1, n);
        if bits != 0 {
            return (n as u32 * 32 + bits.trailing_zeros()) << bpr_min(vtr);
        }
    }
    IDLE_PRIORITY
}

/// The pending list register of highest priority among the enabled groups.
fn highest_pending_lr(cpu: &impl VirtualCpuInterface, vmcr: u64) -> Option<(usize, LrEntry)> {
    let mut best: Option<(usize, LrEntry)> = None;
    for i in 0..lr_count(cpu.vtr()) {
        let e = cpu.lr(i);
        if e.state != LrState::Pending {
            continue;
        }
        let g = if e.group1 { Group::G1 } else { Group::G0 };
        if vmcr & enable_bit(g) == 0 {
            continue;
        }
        if best.is_none_or(|(_, b)| e.priority < b.priority) {
            best = Some((i, e));
        }
    }
    best
}

fn group_of(e: &LrEntry) -> Group {
    if e.group1 {
        Group::G1
    } else {
        Group::G0
    }
}

/// `ICC_HPPIR<g>_EL1`: the highest-priority pending interrupt if it is in group `g`.
fn highest_pending(cpu: &impl VirtualCpuInterface, vmcr: u64, g: Group) -> u32 {
    match highest_pending_lr(cpu, vmcr) {
        Some((_, e)) if group_of(&e) == g => e.vintid,
        _ => SPURIOUS,
    }
}

/// `ICC_IAR<g>_EL1`: the highest-priority pending interrupt of group `g` that the priority
/// mask and the running priority let through becomes active (its group priority marked in
/// the active-priority registers); otherwise spurious.
fn acknowledge(cpu: &mut impl VirtualCpuInterface, vmcr: u64, g: Group) -> u32 {
    let Some((i, e)) = highest_pending_lr(cpu, vmcr) else {
        return SPURIOUS;
    };
    let pmr = ((vmcr >> vmcr::PMR_SHIFT) & 0xff) as u8;
    let level = preemption_level(e.priority, vmcr, g);
    if group_of(&e) != g || e.priority >= pmr || running_priority(cpu) <= level {
        return SPURIOUS;
    }
    cpu.set_lr(
        i,
        LrEntry {
            state: LrState::Active,
            ..e
        },
    );
    // Active priorities are kept at the finest granularity the interface has.
    let bit = level >> bpr_min(cpu.vtr());
    let n = (bit / 32) as usize;
    let old = cpu.apr(g, n);
    cpu.set_apr(g, n, old | 1 << (bit % 32));
    e.vintid
}

/// Clears the highest active priority (priority drop); returns it, or [`IDLE_PRIORITY`].
fn drop_priority(cpu: &mut impl VirtualCpuInterface) -> u32 {
    let vtr = cpu.vtr();
    for n in 0..apr_count(vtr) {
        let (a0, a1) = (cpu.apr(Group::G0, n), cpu.apr(Group::G1, n));
        if a0 == 0 && a1 == 0 {
            continue;
        }
        // The lowest set bit is the highest priority; a tie goes to group 0.
        let (z0, z1) = (a0.trailing_zeros(), a1.trailing_zeros());
        let bit = if z0 <= z1 {
            cpu.set_apr(Group::G0, n, a0 & !(1 << z0));
            z0
        } else {
            cpu.set_apr(Group::G1, n, a1 & !(1 << z1));
            z1
        };
        return (n as u32 * 32 + bit) << bpr_min(vtr);
    }
    IDLE_PRIORITY
}

/// The list register holding `vintid` in an active state.
fn active_lr(cpu: &impl VirtualCpuInterface, vintid: u32) -> Option<(usize, LrEntry)> {
    (0..lr_count(cpu.vtr()))
        .map(|i| (i, cpu.lr(i)))
        .find(|(_, e)| e.state.is_active() && e.vintid == vintid)
}

/// Clears the active state of list register `i` (a hardware-mapped one also deactivates
/// its physical interrupt).
fn clear_active(cpu: &mut impl VirtualCpuInterface, i: usize, e: LrEntry) {
    let state = if e.state.is_pending() {
        LrState::Pending
    } else {
        LrState::Invalid
    };
    cpu.set_lr(i, LrEntry { state, ..e });
    if let Some(p) = e.pintid {
        cpu.deactivate_physical(p);
    }
}

/// `ICC_EOIR<g>_EL1`: priority drop, and with `VEOIM` = 0 deactivation of the interrupt if it
/// is active in a list register with that group and group priority.
fn end_of_interrupt(cpu: &mut impl VirtualCpuInterface, vmcr: u64, g: Group, vintid: u32) {
    let dropped = drop_priority(cpu);
    let Some((i, e)) = active_lr(cpu, vintid) else {
        if vintid < MIN_LPI {
            cpu.bump_eoicount();
        }
        return;
    };
    if vmcr & vmcr::EOIM != 0 && vintid < MIN_LPI {
        return;
    }
    if group_of(&e) != g || preemption_level(e.priority, vmcr, g) != dropped {
        // The guest broke the rules (EOI out of order or with the wrong group): only the
        // priority drop happens, as on KVM.
        return;
    }
    clear_active(cpu, i, e);
}

/// `ICC_DIR_EL1`: with `VEOIM` = 1, deactivates `vintid` (no effect with `VEOIM` = 0).
fn deactivate(cpu: &mut impl VirtualCpuInterface, vmcr: u64, vintid: u32) {
    if vmcr & vmcr::EOIM == 0 || vintid >= MIN_LPI {
        return;
    }
    match active_lr(cpu, vintid) {
        Some((i, e)) => clear_active(cpu, i, e),
        None => cpu.bump_eoicount(),
    }
}

/// `ICC_CTLR_EL1` as the virtual interface reports it: the implemented priority and ID bits
/// and A3V from `ICH_VTR_EL2`, `EOImode` and `CBPR` from `ICH_VMCR_EL2`.
fn read_ctlr(vtr: u64, vmcr: u64) -> u64 {
    let pri_bits = (vtr >> 29) & 7;
    let id_bits = (vtr >> 23) & 7;
    let mut v = pri_bits << ctlr::PRIBITS_SHIFT | id_bits << ctlr::IDBITS_SHIFT;
    if vtr & (1 << 21) != 0 {
        v |= ctlr::A3V;
    }
    if vmcr & vmcr::EOIM != 0 {
        v |= ctlr::EOIMODE;
    }
    if vmcr & vmcr::CBPR != 0 {
        v |= ctlr::CBPR;
    }
    v
}

#[cfg(test)]
mod tests;
