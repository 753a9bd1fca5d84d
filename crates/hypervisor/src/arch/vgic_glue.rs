//! Wiring the `vgic` crate into VMs: a new vGIC per VM matching the guest GIC, with the
//! virtual timer's PPI hardware-mapped, and its distributor and redistributors as devices
//! on the VM's MMIO bus. The per-CPU list registers and the choice of guest GIC are in
//! `lrs.rs` (re-exported here); kicks go to the scheduler through the bus's events.

use crate::lock::Mutex;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use el2_core::mmio::{AccessSize, MmioAccess, MmioCaller, MmioError, MmioResult, SharedMmioDevice};
use vgic::{GicVersion, VcpuSet, Vgic, VgicError};

pub use super::lrs::{guest_gic, init, GuestGic, HostLrs};
use crate::layout;

/// A new per-VM vGIC matching the guest GIC, with the virtual timer PPI hardware-mapped.
pub fn new_vgic(mpidrs: Vec<u64>) -> Option<Vgic> {
    let version = match guest_gic()? {
        GuestGic::V2 { .. } => GicVersion::V2,
        GuestGic::V3 => GicVersion::V3,
    };
    let n = mpidrs.len();
    let mut v = Vgic::new(vgic::VgicConfig {
        version,
        vcpu_mpidrs: mpidrs,
        nr_spis: layout::GUEST_SPIS,
    })
    .ok()?;
    for i in 0..n {
        let _ = v.set_hw_mapping(i, vtimer::VIRT_TIMER_PPI, Some(vtimer::VIRT_TIMER_PPI));
    }
    Some(v)
}

/// The virtual GIC's distributor (`REDISTRIBUTORS` = false: `GICD_*`, both versions) or
/// its GICv3 redistributors (true: `GICR_*`, an `RD_base` and an `SGI_base` frame per
/// vCPU) as a device on a VM's MMIO bus; one type per kind, so that each access path is
/// compiled for its own frames. The accessing vCPU selects the banked registers (private
/// interrupts); vCPUs an access made an interrupt pending for are kicked through the
/// caller's events. Reserved registers are RAZ/WI and logged; an access the GIC
/// architecture forbids (width, alignment) is logged and refused (the guest gets an
/// external abort).
pub struct GicRegion<const REDISTRIBUTORS: bool> {
    vgic: Arc<Mutex<Vgic>>,
    base: u64,
    vm: String,
}

impl GicRegion<false> {
    /// The distributor of `vgic`, at IPA `base`, for VM `vm` (its name, for logs).
    pub fn distributor(vgic: Arc<Mutex<Vgic>>, base: u64, vm: &str) -> Self {
        Self::new(vgic, base, vm)
    }
}

impl GicRegion<true> {
    /// The GICv3 redistributors of `vgic`, from IPA `base`, for VM `vm`.
    pub fn redistributors(vgic: Arc<Mutex<Vgic>>, base: u64, vm: &str) -> Self {
        Self::new(vgic, base, vm)
    }
}

impl<const REDISTRIBUTORS: bool> GicRegion<REDISTRIBUTORS> {
    fn new(vgic: Arc<Mutex<Vgic>>, base: u64, vm: &str) -> Self {
        Self {
            vgic,
            base,
            vm: String::from(vm),
        }
    }

    /// The architectural answer to a refused access: RAZ/WI (`raz`) for a reserved
    /// register, an external abort for a forbidden width or alignment; logged either way.
    #[cold]
    #[inline(never)]
    fn refuse<T>(&self, offset: u64, e: VgicError, raz: T) -> MmioResult<T> {
        crate::hv_warn!(
            "{}: GIC access at IPA {:#x}: {e}",
            self.vm,
            self.base + offset
        );
        if e.is_abort() {
            Err(MmioError::ExternalAbort)
        } else {
            Ok(raz)
        }
    }
}

/// Whether MMIO access `acc` of a VM with `vcpus` vCPUs reaches vGIC state that a vCPU's
/// loaded list registers may hold, so that its list registers must be folded into the model
/// first (`exits::fast` takes other accesses with list registers in use): every distributor
/// and redistributor register except a GICv2 `GICD_SGIR` write, which only makes SGIs
/// pending (the model merges that with whatever the list registers hold on the next sync).
pub fn needs_lr_sync(acc: &MmioAccess, vcpus: usize) -> bool {
    let gicd = acc.ipa.wrapping_sub(layout::GICD_BASE);
    if gicd < layout::GICD_SIZE {
        let sgir = acc.is_write
            && gicd == vgic::offsets::gicd_v2::GICD_SGIR
            && matches!(guest_gic(), Some(GuestGic::V2 { .. }));
        return !sgir;
    }
    acc.ipa.wrapping_sub(layout::GICR_BASE) < layout::GICR_FRAME * vcpus as u64
}

/// Hands the kicks the last vGIC operation left to the caller's events.
#[inline(always)]
fn report_kicks(vgic: &mut Vgic, caller: &mut MmioCaller<'_>) {
    if !vgic.has_kicks() {
        return;
    }
    for v in vcpus_of(vgic.take_kicks()) {
        caller.events.kick(v);
    }
}

/// The members of a kick set, lowest first. A VM has at most 64 vCPUs (`vm::MAX_VCPUS`
/// asserts it), so they are the set's low 64 bits: visiting the set bits costs a few
/// instructions each, where `VcpuSet::iter` tests every possible vCPU id.
pub fn vcpus_of(set: VcpuSet) -> impl Iterator<Item = usize> {
    let mut bits = set.low_bits();
    core::iter::from_fn(move || {
        if bits == 0 {
            return None;
        }
        let v = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        Some(v)
    })
}

impl<const REDISTRIBUTORS: bool> SharedMmioDevice for GicRegion<REDISTRIBUTORS> {
    fn read(&self, caller: &mut MmioCaller<'_>, offset: u64, size: AccessSize) -> MmioResult<u64> {
        // Only an aligned word can take the lean path: decided before the lock.
        if size != AccessSize::Word || offset & 3 != 0 {
            return self.read_general(caller, offset, size);
        }
        let bytes = size.bytes() as u8;
        let mut g = self.vgic.lock();
        let lean = if REDISTRIBUTORS {
            g.gicr_read_lean(caller.vcpu, offset, bytes)
        } else {
            g.gicd_read_lean(caller.vcpu, offset, bytes)
        };
        // A register read changes no interrupt state, so it leaves no kick to report (vgic's
        // `reads_never_kick` test holds the read handlers to that).
        debug_assert!(!g.has_kicks());
        drop(g);
        match lean {
            Some(v) => Ok(v),
            None => self.read_general(caller, offset, size),
        }
    }

    fn write(
        &self,
        caller: &mut MmioCaller<'_>,
        offset: u64,
        size: AccessSize,
        value: u64,
    ) -> MmioResult<()> {
        let bytes = size.bytes() as u8;
        let mut g = self.vgic.lock();
        let result = if REDISTRIBUTORS {
            g.gicr_write(caller.vcpu, offset, bytes, value)
        } else {
            g.gicd_write(caller.vcpu, offset, bytes, value)
        };
        // Every vCPU the write gave a deliverable interrupt (or whose loaded list registers it
        // made stale) is in the kick set, the writer itself included: its run loop then
        // flushes before re-entry. A write that needs nothing of the writer (an SGI to
        // another vCPU, a disable with no list register in use) lets it re-enter at once.
        report_kicks(&mut g, caller);
        drop(g);
        match result {
            Ok(()) => Ok(()),
            Err(e) => self.refuse(offset, e, ()),
        }
    }
}

impl<const REDISTRIBUTORS: bool> GicRegion<REDISTRIBUTORS> {
    /// A read the lean path of [`SharedMmioDevice::read`] did not take (another width, an
    /// unaligned or reserved offset, a bad vCPU): the full lookup under the lock again, with
    /// its errors, reserved-access counting and log line. Out of line, so that the common
    /// read keeps only what it needs live across its handler call.
    #[cold]
    #[inline(never)]
    fn read_general(
        &self,
        caller: &mut MmioCaller<'_>,
        offset: u64,
        size: AccessSize,
    ) -> MmioResult<u64> {
        let bytes = size.bytes() as u8;
        let mut g = self.vgic.lock();
        let result = if REDISTRIBUTORS {
            g.gicr_read(caller.vcpu, offset, bytes)
        } else {
            g.gicd_read(caller.vcpu, offset, bytes)
        };
        // A register read changes no interrupt state, so it leaves no kick to report (vgic's
        // `reads_never_kick` test holds the read handlers to that).
        debug_assert!(!g.has_kicks());
        drop(g);
        match result {
            Ok(v) => Ok(v),
            Err(e) => self.refuse(offset, e, 0),
        }
    }
}
