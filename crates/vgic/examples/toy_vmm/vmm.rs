//! The VMM side: one VM's `Vgic`, one in-memory virtual CPU interface per physical CPU (vCPU
//! i pinned to pCPU i), the trapped-MMIO path into the distributor model, and the
//! flush/sync around every guest entry.

use vgic::backends::mem::MemLrs;
use vgic::{GicVersion, Vgic, VgicConfig, VgicError};

/// Guest-physical base of the distributor (QEMU `virt` layout).
pub const GICD_BASE: u64 = 0x0800_0000;
/// Size of the GICv2 distributor frame.
pub const GICD_SIZE: u64 = 0x1000;
/// SPIs of the VM (a multiple of 32).
pub const NR_SPIS: u32 = 64;

/// The guest's access must be answered with a synchronous external abort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExternalAbort(pub VgicError);

/// What the VMM did, by kind.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// Trapped distributor accesses.
    pub mmio_exits: u64,
    /// External aborts injected for bad accesses.
    pub aborts: u64,
    /// Accesses to reserved offsets, completed as RAZ/WI.
    pub raz_wi: u64,
    /// Physical SGIs sent to make another pCPU look at its vCPU's interrupts.
    pub kicks: u64,
}

/// A VM with a virtual GICv2 on a machine with one pCPU per vCPU.
pub struct ToyVmm {
    /// The VM's interrupt controller model.
    pub vgic: Vgic,
    /// What the VMM did so far.
    pub counts: Counts,
    /// pCPU i's list registers; vCPU i is loaded there.
    pcpus: Vec<MemLrs>,
}

impl ToyVmm {
    /// A VM with `nr_vcpus` vCPUs, each loaded on a pCPU with `nr_lrs` list registers.
    pub fn new(nr_vcpus: usize, nr_lrs: usize) -> Result<Self, VgicError> {
        let mut vgic = Vgic::new(VgicConfig {
            version: GicVersion::V2,
            vcpu_mpidrs: (0..nr_vcpus as u64).collect(),
            nr_spis: NR_SPIS,
        })?;
        let mut pcpus: Vec<MemLrs> = (0..nr_vcpus).map(|_| MemLrs::new(nr_lrs)).collect();
        for (vcpu, lrs) in pcpus.iter_mut().enumerate() {
            vgic.vcpu_load(vcpu, lrs)?;
        }
        Ok(Self {
            vgic,
            counts: Counts::default(),
            pcpus,
        })
    }

    /// The list registers of the pCPU running `vcpu`.
    pub fn lrs(&self, vcpu: usize) -> &MemLrs {
        &self.pcpus[vcpu]
    }

    /// A trapped guest load of `size` bytes at `ipa` inside the distributor.
    pub fn mmio_read(&mut self, vcpu: usize, ipa: u64, size: u8) -> Result<u64, ExternalAbort> {
        let offset = self.gicd_offset(ipa);
        let r = self.vgic.gicd_read(vcpu, offset, size);
        self.complete(r)
    }

    /// A trapped guest store of `size` bytes at `ipa` inside the distributor.
    pub fn mmio_write(
        &mut self,
        vcpu: usize,
        ipa: u64,
        size: u8,
        value: u64,
    ) -> Result<(), ExternalAbort> {
        let offset = self.gicd_offset(ipa);
        let r = self.vgic.gicd_write(vcpu, offset, size, value);
        self.complete(r).map(|_| ())
    }

    fn gicd_offset(&mut self, ipa: u64) -> u64 {
        self.counts.mmio_exits += 1;
        assert!(
            (GICD_BASE..GICD_BASE + GICD_SIZE).contains(&ipa),
            "the toy VMM emulates only the distributor, not {ipa:#x}"
        );
        ipa - GICD_BASE
    }

    /// The architectural answer to a register access: the value, RAZ/WI for reserved
    /// offsets, or an external abort for bad widths and misaligned accesses.
    fn complete<T: Default>(&mut self, r: Result<T, VgicError>) -> Result<T, ExternalAbort> {
        match r {
            Ok(v) => Ok(v),
            Err(e) if e.is_abort() => {
                self.counts.aborts += 1;
                Err(ExternalAbort(e))
            }
            Err(e @ VgicError::Reserved { .. }) => {
                self.counts.raz_wi += 1;
                println!("  [vmm] warn: {e}");
                Ok(T::default())
            }
            Err(e) => panic!("VMM bug: the vgic rejected a call: {e}"),
        }
    }

    /// Guest entry on `vcpu`'s pCPU: loads its interrupts into the list registers, which the
    /// caller (the "guest") may then change.
    pub fn enter(&mut self, vcpu: usize) -> &mut MemLrs {
        let lrs = &mut self.pcpus[vcpu];
        self.vgic.flush(vcpu, lrs).expect("flush");
        lrs
    }

    /// Guest exit on `vcpu`'s pCPU: folds acknowledge/EOI progress back into the model.
    pub fn exit(&mut self, vcpu: usize) {
        self.vgic.sync(vcpu, &mut self.pcpus[vcpu]).expect("sync");
    }

    /// Drains the vgic's kick set. `current` is the vCPU whose exit the VMM is handling: it is
    /// in the VMM already and needs no kick. Returns the vCPUs sent a physical SGI.
    pub fn send_kicks(&mut self, current: Option<usize>) -> Vec<usize> {
        let kicked: Vec<usize> = self
            .vgic
            .take_kicks()
            .iter()
            .filter(|v| Some(*v) != current)
            .collect();
        self.counts.kicks += kicked.len() as u64;
        kicked
    }

    /// Unloads every vCPU (`vcpu_put`), leaving the list registers empty.
    pub fn shutdown(&mut self) {
        for (vcpu, lrs) in self.pcpus.iter_mut().enumerate() {
            self.vgic.vcpu_put(vcpu, lrs).expect("vcpu_put");
        }
    }
}
