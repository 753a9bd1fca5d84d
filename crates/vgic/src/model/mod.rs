//! The per-VM virtual distributor model.

mod inject;
pub(crate) mod irq;
mod lrsched;

use alloc::vec;
use alloc::vec::Vec;

use crate::config::{GicVersion, VgicConfig, MPIDR_AFF_MASK};
use crate::lr::{LrEntry, VcpuIfState, MAX_LRS};
use crate::vcpuset::VcpuSet;
use crate::VgicError;
use irq::Irq;

/// Number of private interrupts (SGIs + PPIs) per vCPU.
pub(crate) const NR_PRIVATE: u32 = 32;
/// Number of SGIs.
pub(crate) const NR_SGIS: u32 = 16;
/// Implemented priority bits (like GIC-400 and KVM: 5).
pub(crate) const PRIO_MASK: u8 = 0xf8;

/// Counters, for tests and for explaining costs (like `kvm_stat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VgicStats {
    /// `flush` calls.
    pub flushes: u64,
    /// `flush` calls that touched no virtual-interface register at all.
    pub flush_fast: u64,
    /// `sync` calls.
    pub syncs: u64,
    /// `sync` calls that touched no virtual-interface register at all.
    pub sync_fast: u64,
    /// List-register reads done by `flush`/`sync`/`vcpu_put`.
    pub lr_reads: u64,
    /// List-register writes done by `flush`/`sync`/`vcpu_put`.
    pub lr_writes: u64,
    /// Times the underflow maintenance interrupt was armed.
    pub underflows: u64,
    /// Accesses to reserved offsets (RAZ/WI).
    pub reserved_accesses: u64,
    /// SGIs (virtual IPIs) generated, one per target.
    pub sgis: u64,
}

/// List-register bookkeeping of one vCPU.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LrBook {
    /// (INTID, GICv2 SGI source) loaded in each LR by the last flush, until sync.
    pub map: [Option<(u32, u8)>; MAX_LRS],
    /// What the hardware LR is known to contain.
    pub shadow: [LrEntry; MAX_LRS],
    /// LRs `0..used` may hold something in hardware.
    pub used: usize,
    /// Underflow maintenance armed.
    pub uie: bool,
    /// A flush happened without the matching sync.
    pub loaded: bool,
}

impl Default for LrBook {
    fn default() -> Self {
        Self {
            map: [None; MAX_LRS],
            shadow: [LrEntry::EMPTY; MAX_LRS],
            used: 0,
            uie: false,
            loaded: false,
        }
    }
}

/// Per-vCPU state: banked interrupts, redistributor state, CPU-interface save area.
#[derive(Debug, Clone)]
pub(crate) struct VcpuData {
    pub mpidr: u64,
    pub private: [Irq; NR_PRIVATE as usize],
    /// `GICR_WAKER.ProcessorSleep`.
    pub sleep: bool,
    pub iface: VcpuIfState,
    pub lr: LrBook,
    /// Bit n: private interrupt n is pending or active.
    pub live: u32,
}

/// The virtual GIC of one VM.
///
/// All methods take a vCPU index (`0..nr_vcpus()`); an index out of range is a caller bug and
/// is answered with [`VgicError::BadVcpu`] (never a panic). The hypervisor serialises access
/// (e.g. `spin::Mutex<Vgic>` per VM).
#[derive(Debug, Clone)]
pub struct Vgic {
    pub(crate) version: GicVersion,
    pub(crate) nr_spis: u32,
    /// `GICD_CTLR` group enables: bit 0 group 0, bit 1 group 1.
    pub(crate) ctlr: u32,
    pub(crate) vcpus: Vec<VcpuData>,
    pub(crate) spis: Vec<Irq>,
    /// Bit n of word w: SPI 32 + 64w + n is pending or active.
    pub(crate) spi_live: Vec<u64>,
    pub(crate) kicks: VcpuSet,
    pub(crate) stats: VgicStats,
}

impl Vgic {
    /// Creates the virtual GIC of a VM in its reset state.
    pub fn new(cfg: VgicConfig) -> Result<Self, VgicError> {
        cfg.validate()?;
        let v3 = cfg.version == GicVersion::V3;
        let mut private = [Irq::default(); NR_PRIVATE as usize];
        for (i, irq) in private.iter_mut().enumerate() {
            irq.group1 = v3;
            if (i as u32) < NR_SGIS {
                irq.edge = true;
                irq.enabled = !v3;
            }
        }
        let vcpus = cfg
            .vcpu_mpidrs
            .iter()
            .map(|m| VcpuData {
                mpidr: m & MPIDR_AFF_MASK,
                private,
                sleep: true,
                iface: VcpuIfState::default(),
                lr: LrBook::default(),
                live: 0,
            })
            .collect();
        let spi = Irq {
            group1: v3,
            ..Irq::default()
        };
        Ok(Self {
            version: cfg.version,
            nr_spis: cfg.nr_spis,
            ctlr: 0,
            vcpus,
            spis: vec![spi; cfg.nr_spis as usize],
            spi_live: vec![0; (cfg.nr_spis as usize).div_ceil(64)],
            kicks: VcpuSet::new(),
            stats: VgicStats::default(),
        })
    }

    /// GIC version presented to the guest.
    pub fn version(&self) -> GicVersion {
        self.version
    }
    /// Number of vCPUs.
    pub fn nr_vcpus(&self) -> usize {
        self.vcpus.len()
    }
    /// Number of SPIs.
    pub fn nr_spis(&self) -> u32 {
        self.nr_spis
    }
    /// Number of INTIDs (32 + SPIs, capped at 1020).
    pub fn nr_irqs(&self) -> u32 {
        (NR_PRIVATE + self.nr_spis).min(1020)
    }
    /// Counters.
    pub fn stats(&self) -> VgicStats {
        self.stats
    }
    /// Drains the kick set: the vCPUs that got a deliverable interrupt (or whose loaded list
    /// registers became stale) since the last call. The hypervisor sends a physical SGI to the
    /// pCPU running each of them, or wakes it if it is blocked in WFI. It may contain the
    /// vCPU whose trap caused the change; that one is in the hypervisor already and needs no
    /// kick.
    pub fn take_kicks(&mut self) -> VcpuSet {
        core::mem::take(&mut self.kicks)
    }
    /// Whether a kick is waiting for [`Vgic::take_kicks`] (cheaper than taking an empty set).
    #[inline]
    pub fn has_kicks(&self) -> bool {
        !self.kicks.is_empty()
    }
    /// Saved CPU-interface state of `vcpu` (valid after `vcpu_put`).
    pub fn vcpu_if(&self, vcpu: usize) -> Result<&VcpuIfState, VgicError> {
        self.vcpus
            .get(vcpu)
            .map(|v| &v.iface)
            .ok_or(VgicError::BadVcpu(vcpu))
    }
    /// Mutable saved CPU-interface state of `vcpu` (e.g. to reset `vmcr` or for migration).
    pub fn vcpu_if_mut(&mut self, vcpu: usize) -> Result<&mut VcpuIfState, VgicError> {
        self.vcpus
            .get_mut(vcpu)
            .map(|v| &mut v.iface)
            .ok_or(VgicError::BadVcpu(vcpu))
    }

    pub(crate) fn check_vcpu(&self, vcpu: usize) -> Result<(), VgicError> {
        if vcpu < self.vcpus.len() {
            Ok(())
        } else {
            Err(VgicError::BadVcpu(vcpu))
        }
    }

    /// The interrupt `intid` as seen from `vcpu` (banked for INTIDs < 32).
    pub(crate) fn irq(&self, vcpu: usize, intid: u32) -> Option<&Irq> {
        if intid < NR_PRIVATE {
            self.vcpus.get(vcpu)?.private.get(intid as usize)
        } else if intid < self.nr_irqs() {
            self.spis.get((intid - NR_PRIVATE) as usize)
        } else {
            None
        }
    }

    pub(crate) fn irq_mut(&mut self, vcpu: usize, intid: u32) -> Option<&mut Irq> {
        if intid < NR_PRIVATE {
            self.vcpus.get_mut(vcpu)?.private.get_mut(intid as usize)
        } else if intid < self.nr_irqs() {
            let n = intid - NR_PRIVATE;
            self.spis.get_mut(n as usize)
        } else {
            None
        }
    }

    pub(crate) fn is_v2_sgi(&self, intid: u32) -> bool {
        self.version == GicVersion::V2 && intid < NR_SGIS
    }

    /// Distributor group enable for an interrupt of this group.
    pub(crate) fn group_enabled(&self, group1: bool) -> bool {
        self.ctlr & (1 << u32::from(group1)) != 0
    }

    /// Pending (model-held), enabled and its group enabled at the distributor.
    pub(crate) fn deliverable(&self, irq: &Irq) -> bool {
        irq.pending() && irq.enabled && self.group_enabled(irq.group1)
    }

    /// vCPU an SPI is currently routed to, following GICv2 targets (lowest set bit) or GICv3
    /// affinity routing (1-of-N picks the lowest-numbered vCPU whose redistributor is awake,
    /// `GICR_WAKER.ProcessorSleep` = 0, else vCPU 0). An interrupt that is active or loaded
    /// in a list register stays with that vCPU. `None`: no valid target.
    pub(crate) fn spi_target(&self, irq: &Irq) -> Option<usize> {
        if let Some(v) = irq.in_lr.or(irq.owner) {
            return Some(v as usize);
        }
        match self.version {
            GicVersion::V2 => {
                let t = u32::from(irq.targets);
                (t != 0)
                    .then(|| t.trailing_zeros() as usize)
                    .filter(|v| *v < self.vcpus.len())
            }
            GicVersion::V3 => {
                if irq.route & crate::regs::v3::IROUTER_IRM != 0 {
                    Some(self.vcpus.iter().position(|v| !v.sleep).unwrap_or(0))
                } else {
                    let aff = crate::regs::v3::irouter_to_mpidr(irq.route);
                    self.vcpus.iter().position(|v| v.mpidr == aff)
                }
            }
        }
    }

    /// Re-evaluates one interrupt after any change: keeps the live bitmaps in step and
    /// records a kick for the vCPU that must look at it.
    pub(crate) fn update(&mut self, vcpu: usize, intid: u32) {
        // Read what is needed through a shared borrow (copying the whole `Irq` out cost a
        // `memcpy` call on every update).
        let (live, in_lr, deliverable, target) = {
            let Some(irq) = self.irq(vcpu, intid) else {
                return;
            };
            let target = if intid < NR_PRIVATE {
                Some(vcpu)
            } else {
                self.spi_target(irq)
            };
            (irq.live(), irq.in_lr, self.deliverable(irq), target)
        };
        if intid < NR_PRIVATE {
            if let Some(v) = self.vcpus.get_mut(vcpu) {
                if live {
                    v.live |= 1 << intid;
                } else {
                    v.live &= !(1 << intid);
                }
            }
        } else {
            let n = (intid - NR_PRIVATE) as usize;
            if let Some(w) = self.spi_live.get_mut(n / 64) {
                if live {
                    *w |= 1 << (n % 64);
                } else {
                    *w &= !(1 << (n % 64));
                }
            }
        }
        if let Some(v) = in_lr {
            self.kicks.insert(v as usize);
        } else if deliverable {
            if let Some(t) = target {
                self.kicks.insert(t);
            }
        }
    }

    /// Re-evaluates every interrupt (after `GICD_CTLR` changes).
    pub(crate) fn update_all(&mut self) {
        for v in 0..self.vcpus.len() {
            for i in 0..NR_PRIVATE {
                self.update(v, i);
            }
        }
        for i in 0..self.nr_spis {
            self.update(0, NR_PRIVATE + i);
        }
    }

    /// Whether `vcpu` has an interrupt its virtual CPU interface would signal now: pending,
    /// enabled, group enabled at the distributor and in the saved `VMCR`, priority above the
    /// saved `VMCR` priority mask and above the running priority from the saved active
    /// priority registers. Use it to decide whether a vCPU blocked in WFI must wake up; it
    /// reads the state saved by [`Vgic::vcpu_put`] (or [`Vgic::save_vmcr`]).
    pub fn vcpu_has_pending(&self, vcpu: usize) -> bool {
        let Some(vd) = self.vcpus.get(vcpu) else {
            return false;
        };
        let vmcr = vd.iface.vmcr;
        let (pmr, en0, en1) = match self.version {
            GicVersion::V2 => (((vmcr >> 27) & 0x1f) << 3, vmcr & 1 != 0, vmcr & 2 != 0),
            GicVersion::V3 => ((vmcr >> 24) & 0xff, vmcr & 1 != 0, vmcr & 2 != 0),
        };
        let apr = vd.iface.apr[0] | vd.iface.ap0r[0];
        let running = if apr == 0 {
            0x100
        } else {
            u64::from(apr.trailing_zeros()) << 3
        };
        let limit = pmr.min(running);
        let ok = |irq: &Irq| {
            !irq.active
                && self.deliverable(irq)
                && (if irq.group1 { en1 } else { en0 })
                && u64::from(irq.priority) < limit
        };
        // Only interrupts with state (the `live` bitmaps) can be pending: visit those, not
        // every INTID (this runs on every wake-up check of a vCPU in WFI).
        let mut live = vd.live;
        while live != 0 {
            let n = live.trailing_zeros() as usize;
            live &= live - 1;
            if vd.private.get(n).is_some_and(ok) {
                return true;
            }
        }
        for (w, word) in self.spi_live.iter().enumerate() {
            let mut bits = *word;
            while bits != 0 {
                let n = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if let Some(irq) = self.spis.get(n) {
                    if ok(irq) && self.spi_target(irq) == Some(vcpu) {
                        return true;
                    }
                }
            }
        }
        false
    }
}
