//! GICv2 (GIC-400) host driver: distributor + memory-mapped CPU interface.

use tock_registers::interfaces::{Readable, Writeable};
use tock_registers::register_structs;
use tock_registers::registers::{ReadOnly, ReadWrite, WriteOnly};

register_structs! {
    /// The GICv2 distributor registers the hypervisor uses.
    GicdRegs {
        (0x000 => ctlr: ReadWrite<u32>),
        (0x004 => typer: ReadOnly<u32>),
        (0x008 => _r0),
        (0x080 => igroupr: [ReadWrite<u32>; 32]),
        (0x100 => isenabler: [ReadWrite<u32>; 32]),
        (0x180 => icenabler: [ReadWrite<u32>; 32]),
        (0x200 => _r1),
        (0x300 => isactiver: [ReadWrite<u32>; 32]),
        (0x380 => icactiver: [ReadWrite<u32>; 32]),
        (0x400 => ipriorityr: [ReadWrite<u32>; 255]),
        (0x7fc => _r2),
        (0x800 => itargetsr: [ReadWrite<u32>; 255]),
        (0xbfc => _r3),
        (0xf00 => sgir: WriteOnly<u32>),
        (0xf04 => @END),
    }
}

register_structs! {
    /// The GICv2 CPU interface registers the hypervisor uses.
    GiccRegs {
        (0x0000 => ctlr: ReadWrite<u32>),
        (0x0004 => pmr: ReadWrite<u32>),
        (0x0008 => bpr: ReadWrite<u32>),
        (0x000c => iar: ReadOnly<u32>),
        (0x0010 => eoir: WriteOnly<u32>),
        (0x0014 => _r0),
        (0x1000 => dir: WriteOnly<u32>),
        (0x1004 => @END),
    }
}

/// `GICC_CTLR.EOImodeNS`: EOIR only drops priority; DIR deactivates.
const GICC_CTLR_EOIMODE: u32 = 1 << 9;

/// The host GICv2.
pub struct GicV2 {
    gicd: *const GicdRegs,
    gicc: *const GiccRegs,
}

// SAFETY: the registers are MMIO; per-CPU banked registers are only touched by their own
// CPU and the distributor's shared registers are written only during boot.
unsafe impl Send for GicV2 {}
// SAFETY: as above.
unsafe impl Sync for GicV2 {}

impl GicV2 {
    /// A driver for the GIC at the given (identity-mapped) addresses.
    pub fn new(gicd: u64, gicc: u64) -> Self {
        Self {
            gicd: gicd as *const GicdRegs,
            gicc: gicc as *const GiccRegs,
        }
    }

    fn d(&self) -> &GicdRegs {
        // SAFETY: `gicd` is the distributor from the device tree, mapped as device memory.
        unsafe { &*self.gicd }
    }

    fn c(&self) -> &GiccRegs {
        // SAFETY: `gicc` is the CPU interface from the device tree, mapped as device memory.
        unsafe { &*self.gicc }
    }

    /// Enables the distributor (boot CPU).
    pub fn init_distributor(&self) {
        self.d().ctlr.set(1);
    }

    /// Enables `ppis` on this CPU and its CPU interface; returns its interface number.
    pub fn init_cpu(&self, ppis: &[u32]) -> u8 {
        let d = self.d();
        let mut mask = 0u32;
        for &p in ppis {
            mask |= 1 << p;
            let reg = &d.ipriorityr[(p / 4) as usize];
            let shift = (p % 4) * 8;
            reg.set((reg.get() & !(0xff << shift)) | (0x80 << shift));
        }
        d.igroupr[0].set(0);
        d.isenabler[0].set(mask);
        let c = self.c();
        c.pmr.set(0xff);
        c.bpr.set(0);
        c.ctlr.set(1 | GICC_CTLR_EOIMODE);
        // GICD_ITARGETSR0..7 read as this CPU's own interface mask.
        let own = d.itargetsr[0].get() & 0xff;
        own.trailing_zeros().min(7) as u8
    }

    /// Whether private interrupt `intid` is active on this CPU (banked `GICD_ISACTIVER0`).
    pub fn private_active(&self, intid: u32) -> bool {
        self.d().isactiver[0].get() & (1 << intid) != 0
    }

    /// Sets or clears the active state of private interrupt `intid` on this CPU.
    pub fn set_private_active(&self, intid: u32, active: bool) {
        if active {
            self.d().isactiver[0].set(1 << intid);
        } else {
            self.d().icactiver[0].set(1 << intid);
        }
    }

    /// Enables SPI `intid`, level-sensitive, targeted at CPU interface `cpu_if`.
    pub fn enable_spi(&self, intid: u32, cpu_if: u8) {
        let d = self.d();
        let (n, shift) = ((intid / 4) as usize, (intid % 4) * 8);
        let p = &d.ipriorityr[n];
        p.set((p.get() & !(0xff << shift)) | (0x80 << shift));
        let t = &d.itargetsr[n];
        t.set((t.get() & !(0xff << shift)) | ((1u32 << cpu_if) << shift));
        d.isenabler[(intid / 32) as usize].set(1 << (intid % 32));
    }

    /// Reads `GICC_IAR`.
    pub fn ack(&self) -> u32 {
        self.c().iar.get()
    }

    /// Writes `GICC_EOIR` (priority drop).
    pub fn eoi(&self, iar: u32) {
        self.c().eoir.set(iar);
    }

    /// Writes `GICC_DIR` (deactivation).
    pub fn deactivate(&self, iar: u32) {
        self.c().dir.set(iar);
    }

    /// Sends SGI `intid` to CPU interface `cpu_if` through `GICD_SGIR`.
    pub fn send_sgi(&self, cpu_if: u8, intid: u32) {
        self.d()
            .sgir
            .set((1 << (16 + cpu_if as u32)) | (intid & 0xf));
    }
}
