//! List registers: the backend-neutral entry, the backend trait, and the GICv2/GICv3 encodings.
//!
//! The encoders and decoders are pure functions so they can be tested bit by bit on the host;
//! the hardware backends in [`crate::backends`] only move the encoded values.

/// Maximum number of list registers the model uses per vCPU (GICv3 has at most 16; a GICv2
/// with more than 16 is used as if it had 16).
pub const MAX_LRS: usize = 16;

/// State of a list register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LrState {
    /// Not holding an interrupt.
    #[default]
    Invalid,
    /// Pending.
    Pending,
    /// Active.
    Active,
    /// Active and pending.
    PendingActive,
}

impl LrState {
    /// Builds the state from its two bits.
    pub const fn from_bits(pending: bool, active: bool) -> Self {
        match (pending, active) {
            (false, false) => Self::Invalid,
            (true, false) => Self::Pending,
            (false, true) => Self::Active,
            (true, true) => Self::PendingActive,
        }
    }
    /// The 2-bit architectural encoding (bit 0 pending, bit 1 active).
    pub const fn bits(self) -> u64 {
        match self {
            Self::Invalid => 0,
            Self::Pending => 1,
            Self::Active => 2,
            Self::PendingActive => 3,
        }
    }
    /// Decodes the 2-bit architectural encoding (higher bits ignored).
    pub const fn from_raw(bits: u64) -> Self {
        Self::from_bits(bits & 1 != 0, bits & 2 != 0)
    }
    /// Pending bit.
    pub const fn is_pending(self) -> bool {
        matches!(self, Self::Pending | Self::PendingActive)
    }
    /// Active bit.
    pub const fn is_active(self) -> bool {
        matches!(self, Self::Active | Self::PendingActive)
    }
}

/// One list register, independent of the GIC version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LrEntry {
    /// Virtual INTID seen by the guest.
    pub vintid: u32,
    /// Physical INTID for a hardware-mapped interrupt (HW bit): the guest's deactivation of
    /// `vintid` deactivates this physical interrupt.
    pub pintid: Option<u32>,
    /// Priority (8-bit GIC priority; backends keep the bits they implement).
    pub priority: u8,
    /// Group 1 (IRQ) rather than group 0 (FIQ).
    pub group1: bool,
    /// State.
    pub state: LrState,
    /// Requesting CPU of a GICv2 SGI (CPUID field); 0 otherwise.
    pub source_cpu: u8,
    /// Raise an EOI maintenance interrupt when the guest deactivates it (non-HW only).
    pub eoi_maint: bool,
}

impl LrEntry {
    /// An invalid (empty) list register.
    pub const EMPTY: Self = Self {
        vintid: 0,
        pintid: None,
        priority: 0,
        group1: false,
        state: LrState::Invalid,
        source_cpu: 0,
        eoi_maint: false,
    };
}

/// Saved state of one vCPU's virtual CPU interface, kept by [`crate::Vgic`] between
/// `vcpu_put` and `vcpu_load`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VcpuIfState {
    /// Raw `GICH_VMCR` / `ICH_VMCR_EL2`.
    pub vmcr: u64,
    /// Group-1 active priorities: `GICH_APR` (index 0) / `ICH_AP1R<n>_EL2`.
    pub apr: [u32; 4],
    /// Group-0 active priorities `ICH_AP0R<n>_EL2` (GICv3 only).
    pub ap0r: [u32; 4],
    /// Raw list registers 0..`used_lrs` (backend encoding).
    pub lrs: [u64; MAX_LRS],
    /// How many of `lrs` are saved/restored.
    pub used_lrs: usize,
}

/// A virtual CPU interface control block: the hypervisor's view of the list registers of the
/// physical CPU it runs on.
///
/// Implementations: [`crate::backends::mem::MemLrs`], [`crate::backends::gicv2::GichBackend`],
/// `crate::backends::gicv3::IchBackend`.
pub trait ListRegisters {
    /// Number of implemented list registers (capped at [`MAX_LRS`] by the model).
    fn num_lrs(&self) -> usize;
    /// Reads list register `i` (`i < num_lrs()`).
    fn read_lr(&self, i: usize) -> LrEntry;
    /// Writes list register `i` (`i < num_lrs()`).
    fn write_lr(&mut self, i: usize, e: LrEntry);
    /// Empty list registers (`ELRSR`): bit i set = LR i holds no valid interrupt and no
    /// pending EOI maintenance.
    fn empty_mask(&self) -> u64;
    /// LRs with an EOI maintenance condition (`EISR`).
    fn eoi_mask(&self) -> u64;
    /// Sets the underflow (`UIE`) and no-pending (`NPIE`) maintenance enables.
    fn set_maintenance(&mut self, underflow: bool, no_pending: bool);
    /// Maintenance interrupt status (`MISR`, raw).
    fn misr(&self) -> u32;
    /// Enables or disables the virtual CPU interface (`HCR.En`).
    fn set_enabled(&mut self, en: bool);
    /// Reads the raw virtual machine control register (`VMCR`).
    fn read_vmcr(&self) -> u64;
    /// Saves `VMCR`, the implemented active-priority registers and LRs `0..st.used_lrs`.
    fn save(&mut self, st: &mut VcpuIfState);
    /// Restores what [`ListRegisters::save`] saved.
    fn restore(&mut self, st: &VcpuIfState);
}

/// GICv2 `GICH_LR<n>` encoding.
pub mod v2 {
    use super::{LrEntry, LrState};

    const VID_MASK: u32 = 0x3ff;
    const PID_SHIFT: u32 = 10;
    const EOI_BIT: u32 = 1 << 19;
    const CPUID_MASK: u32 = 0x7;
    const PRIO_SHIFT: u32 = 23;
    const STATE_SHIFT: u32 = 28;
    const GRP1_BIT: u32 = 1 << 30;
    const HW_BIT: u32 = 1 << 31;

    /// Encodes an entry: VirtualID `[9:0]`, PhysicalID `[19:10]` (HW: pINTID; otherwise bit 19 =
    /// EOI maintenance, `[12:10]` = CPUID), Priority `[27:23]` (top 5 bits), State `[29:28]`,
    /// Grp1 `[30]`, HW `[31]`. Out-of-range fields are truncated.
    pub fn encode(e: &LrEntry) -> u32 {
        let mut v = e.vintid & VID_MASK;
        match e.pintid {
            Some(p) => v |= HW_BIT | ((p & VID_MASK) << PID_SHIFT),
            None => {
                v |= (u32::from(e.source_cpu) & CPUID_MASK) << PID_SHIFT;
                if e.eoi_maint {
                    v |= EOI_BIT;
                }
            }
        }
        v |= u32::from(e.priority >> 3) << PRIO_SHIFT;
        v |= (e.state.bits() as u32) << STATE_SHIFT;
        if e.group1 {
            v |= GRP1_BIT;
        }
        v
    }

    /// Decodes a raw `GICH_LR` value.
    pub fn decode(v: u32) -> LrEntry {
        let hw = v & HW_BIT != 0;
        let pid = (v >> PID_SHIFT) & VID_MASK;
        LrEntry {
            vintid: v & VID_MASK,
            pintid: hw.then_some(pid),
            priority: (((v >> PRIO_SHIFT) & 0x1f) << 3) as u8,
            group1: v & GRP1_BIT != 0,
            state: LrState::from_raw(u64::from(v >> STATE_SHIFT)),
            source_cpu: if hw { 0 } else { (pid & CPUID_MASK) as u8 },
            eoi_maint: !hw && v & EOI_BIT != 0,
        }
    }
}

/// GICv3 `ICH_LR<n>_EL2` encoding.
pub mod v3 {
    use super::{LrEntry, LrState};

    const PINTID_SHIFT: u32 = 32;
    const PINTID_MASK: u64 = 0x1fff;
    const EOI_BIT: u64 = 1 << 41;
    const PRIO_SHIFT: u32 = 48;
    const GROUP_BIT: u64 = 1 << 60;
    const HW_BIT: u64 = 1 << 61;
    const STATE_SHIFT: u32 = 62;

    /// Encodes an entry: vINTID `[31:0]`, pINTID `[44:32]` (HW) or EOI `[41]` (non-HW),
    /// Priority `[55:48]`, Group `[60]`, HW `[61]`, State `[63:62]`. `source_cpu` does not exist in
    /// GICv3 and is dropped.
    pub fn encode(e: &LrEntry) -> u64 {
        let mut v = u64::from(e.vintid);
        match e.pintid {
            Some(p) => v |= HW_BIT | ((u64::from(p) & PINTID_MASK) << PINTID_SHIFT),
            None => {
                if e.eoi_maint {
                    v |= EOI_BIT;
                }
            }
        }
        v |= u64::from(e.priority) << PRIO_SHIFT;
        if e.group1 {
            v |= GROUP_BIT;
        }
        v | (e.state.bits() << STATE_SHIFT)
    }

    /// Decodes a raw `ICH_LR<n>_EL2` value.
    pub fn decode(v: u64) -> LrEntry {
        let hw = v & HW_BIT != 0;
        LrEntry {
            vintid: v as u32,
            pintid: hw.then_some(((v >> PINTID_SHIFT) & PINTID_MASK) as u32),
            priority: (v >> PRIO_SHIFT) as u8,
            group1: v & GROUP_BIT != 0,
            state: LrState::from_raw(v >> STATE_SHIFT),
            source_cpu: 0,
            eoi_maint: !hw && v & EOI_BIT != 0,
        }
    }
}
