//! GICv2 virtual interface control (`GICH`) backend over MMIO.
//!
//! One [`GichBackend`] per physical CPU, pointing at the CPU's banked `GICH` frame (on
//! GIC-400 the same address on every CPU; on Seattle it is aliased over 64 KiB).

use tock_registers::interfaces::{Readable, Writeable};
use tock_registers::registers::ReadOnly;

use crate::lr::{v2, ListRegisters, LrEntry, VcpuIfState, MAX_LRS};

mod regs {
    //! `GICH` register layout (field names follow the GICv2 specification).
    #![allow(missing_docs)]

    use tock_registers::registers::{ReadOnly, ReadWrite};
    use tock_registers::{register_bitfields, register_structs};

    register_bitfields! {u32,
        /// `GICH_HCR`.
        pub HCR [
            /// Virtual CPU interface enable.
            En OFFSET(0) NUMBITS(1) [],
            /// Underflow interrupt enable.
            UIE OFFSET(1) NUMBITS(1) [],
            /// List Register Entry Not Present interrupt enable.
            LRENPIE OFFSET(2) NUMBITS(1) [],
            /// No Pending interrupt enable.
            NPIE OFFSET(3) NUMBITS(1) [],
            /// EOI count.
            EOICount OFFSET(27) NUMBITS(5) [],
        ],
        /// `GICH_VTR`.
        pub VTR [
            /// Number of list registers minus one.
            ListRegs OFFSET(0) NUMBITS(6) [],
            /// Preemption bits minus one.
            PREbits OFFSET(26) NUMBITS(3) [],
            /// Priority bits minus one.
            PRIbits OFFSET(29) NUMBITS(3) [],
        ]
    }

    register_structs! {
        /// The `GICH` register block.
        pub GichRegs {
            (0x000 => pub hcr: ReadWrite<u32, HCR::Register>),
            (0x004 => pub vtr: ReadOnly<u32, VTR::Register>),
            (0x008 => pub vmcr: ReadWrite<u32>),
            (0x00c => _reserved0),
            (0x010 => pub misr: ReadOnly<u32>),
            (0x014 => _reserved1),
            (0x020 => pub eisr: [ReadOnly<u32>; 2]),
            (0x028 => _reserved2),
            (0x030 => pub elrsr: [ReadOnly<u32>; 2]),
            (0x038 => _reserved3),
            (0x0f0 => pub apr: ReadWrite<u32>),
            (0x0f4 => _reserved4),
            (0x100 => pub lr: [ReadWrite<u32>; 64]),
            (0x200 => @END),
        }
    }
}

use regs::{GichRegs, HCR, VTR};

/// The GICv2 `GICH` backend of one physical CPU.
pub struct GichBackend {
    regs: &'static GichRegs,
    nr_lrs: usize,
}

impl GichBackend {
    /// Creates the backend for the `GICH` frame at virtual address `base`.
    ///
    /// # Safety
    /// `base` must be the address of a mapped `GICH` frame (device memory, at least 0x200
    /// bytes) that stays mapped for `'static` and that nothing else on this CPU accesses
    /// concurrently.
    pub unsafe fn new(base: usize) -> Self {
        // SAFETY: the caller guarantees `base` points to a live, exclusively used GICH frame
        // whose layout `GichRegs` describes; it is suitably aligned (page-aligned MMIO).
        let regs = unsafe { &*(base as *const GichRegs) };
        let nr_lrs = (regs.vtr.read(VTR::ListRegs) as usize + 1).min(MAX_LRS);
        Self { regs, nr_lrs }
    }

    /// Empties every list register and disables the interface and maintenance interrupts
    /// (once per CPU at boot).
    pub fn reset(&mut self) {
        self.regs.hcr.set(0);
        for lr in self.regs.lr.iter().take(self.nr_lrs) {
            lr.set(0);
        }
        self.regs.apr.set(0);
    }

    /// Reads a 64-bit LR bitmap, skipping the second word when at most 32 LRs exist.
    fn masks(&self, regs: &[ReadOnly<u32>; 2]) -> u64 {
        let lo = u64::from(regs[0].get());
        if self.nr_lrs > 32 {
            lo | u64::from(regs[1].get()) << 32
        } else {
            lo
        }
    }
}

impl ListRegisters for GichBackend {
    fn num_lrs(&self) -> usize {
        self.nr_lrs
    }
    fn read_lr(&self, i: usize) -> LrEntry {
        self.regs
            .lr
            .get(i)
            .map_or(LrEntry::EMPTY, |r| v2::decode(r.get()))
    }
    fn write_lr(&mut self, i: usize, e: LrEntry) {
        if let Some(r) = self.regs.lr.get(i) {
            r.set(v2::encode(&e));
        }
    }
    fn empty_mask(&self) -> u64 {
        let m = if self.nr_lrs >= 64 {
            u64::MAX
        } else {
            (1 << self.nr_lrs) - 1
        };
        self.masks(&self.regs.elrsr) & m
    }
    fn eoi_mask(&self) -> u64 {
        self.masks(&self.regs.eisr)
    }
    fn set_maintenance(&mut self, underflow: bool, no_pending: bool) {
        let mut v = self.regs.hcr.extract();
        v.modify(HCR::UIE.val(underflow.into()) + HCR::NPIE.val(no_pending.into()));
        self.regs.hcr.set(v.get());
    }
    fn misr(&self) -> u32 {
        self.regs.misr.get()
    }
    fn set_enabled(&mut self, en: bool) {
        let mut v = self.regs.hcr.extract();
        v.modify(HCR::En.val(en.into()));
        self.regs.hcr.set(v.get());
    }
    fn read_vmcr(&self) -> u64 {
        u64::from(self.regs.vmcr.get())
    }
    fn save(&mut self, st: &mut VcpuIfState) {
        st.vmcr = u64::from(self.regs.vmcr.get());
        st.apr[0] = self.regs.apr.get();
        for i in 0..st.used_lrs.min(self.nr_lrs) {
            st.lrs[i] = u64::from(self.regs.lr[i].get());
        }
    }
    fn restore(&mut self, st: &VcpuIfState) {
        self.regs.vmcr.set(st.vmcr as u32);
        self.regs.apr.set(st.apr[0]);
        for i in 0..st.used_lrs.min(self.nr_lrs) {
            self.regs.lr[i].set(st.lrs[i] as u32);
        }
    }
}
