//! GICv3 host driver: distributor, this CPU's redistributor, and the system-register CPU
//! interface.

use el2_core::{read_sysreg, write_sysreg};
use tock_registers::interfaces::{Readable, Writeable};
use tock_registers::register_structs;
use tock_registers::registers::{ReadOnly, ReadWrite};

register_structs! {
    /// GICv3 distributor registers used by the hypervisor.
    GicdRegs {
        (0x0000 => ctlr: ReadWrite<u32>),
        (0x0004 => _r0),
        (0x0080 => igroupr: [ReadWrite<u32>; 32]),
        (0x0100 => isenabler: [ReadWrite<u32>; 32]),
        (0x0180 => _r1),
        (0x0400 => ipriorityr: [ReadWrite<u32>; 255]),
        (0x07fc => _r2),
        (0x6000 => irouter: [ReadWrite<u64>; 988]),
        (0x7ee0 => @END),
    }
}

register_structs! {
    /// RD_base frame of a redistributor.
    RdRegs {
        (0x0000 => ctlr: ReadWrite<u32>),
        (0x0004 => iidr: ReadOnly<u32>),
        (0x0008 => typer: ReadOnly<u64>),
        (0x0010 => _r0),
        (0x0014 => waker: ReadWrite<u32>),
        (0x0018 => @END),
    }
}

register_structs! {
    /// SGI_base frame of a redistributor.
    SgiRegs {
        (0x0000 => _r0),
        (0x0080 => igroupr0: ReadWrite<u32>),
        (0x0084 => _r1),
        (0x0100 => isenabler0: ReadWrite<u32>),
        (0x0104 => _r2),
        (0x0180 => icenabler0: ReadWrite<u32>),
        (0x0184 => _r3),
        (0x0300 => isactiver0: ReadWrite<u32>),
        (0x0304 => _r4),
        (0x0380 => icactiver0: ReadWrite<u32>),
        (0x0384 => _r5),
        (0x0400 => ipriorityr: [ReadWrite<u32>; 8]),
        (0x0420 => @END),
    }
}

/// `GICD_CTLR`: EnableGrp1NS (bit 1), ARE_NS (bit 4); RWP (bit 31).
const GICD_CTLR_GRP1_ARE: u32 = (1 << 1) | (1 << 4);
const GICD_CTLR_RWP: u32 = 1 << 31;
/// `GICR_WAKER.ProcessorSleep` / `ChildrenAsleep`.
const WAKER_PS: u32 = 1 << 1;
const WAKER_CA: u32 = 1 << 2;
/// `GICR_TYPER.Last`.
const TYPER_LAST: u64 = 1 << 4;
/// `ICC_SRE_EL2`: SRE, DFB, DIB, Enable (lets EL1 use its system-register interface).
const ICC_SRE_EL2_VALUE: u64 = 0b1111;
/// `ICC_CTLR_EL1.EOImode`.
const ICC_CTLR_EOIMODE: u64 = 1 << 1;

/// The host GICv3.
pub struct GicV3 {
    gicd: *const GicdRegs,
    redist: u64,
    redist_size: u64,
}

// SAFETY: distributor writes happen once at boot; each CPU touches only its own
// redistributor frame; CPU-interface registers are per-CPU system registers.
unsafe impl Send for GicV3 {}
// SAFETY: as above.
unsafe impl Sync for GicV3 {}

/// MPIDR affinity in `GICR_TYPER.Affinity` layout (Aff3.Aff2.Aff1.Aff0).
fn typer_affinity(mpidr: u64) -> u64 {
    (mpidr & 0xff_ffff) | ((mpidr >> 32) & 0xff) << 24
}

impl GicV3 {
    /// A driver for the GIC with distributor at `gicd` and the redistributor region.
    pub fn new(gicd: u64, redist: u64, redist_size: u64) -> Self {
        Self {
            gicd: gicd as *const GicdRegs,
            redist,
            redist_size,
        }
    }

    /// Enables affinity routing and group-1 interrupts in the distributor.
    pub fn init_distributor(&self) {
        // SAFETY: `gicd` is the distributor from the device tree, mapped as device memory.
        let d = unsafe { &*self.gicd };
        d.ctlr.set(d.ctlr.get() | GICD_CTLR_GRP1_ARE);
        while d.ctlr.get() & GICD_CTLR_RWP != 0 {
            core::hint::spin_loop();
        }
    }

    /// Enables SPI `intid` as a group-1 interrupt routed to the CPU with `mpidr`.
    pub fn enable_spi(&self, intid: u32, mpidr: u64) {
        // SAFETY: `gicd` is the distributor from the device tree, mapped as device memory.
        let d = unsafe { &*self.gicd };
        let (n, shift) = ((intid / 4) as usize, (intid % 4) * 8);
        let p = &d.ipriorityr[n];
        p.set((p.get() & !(0xff << shift)) | (0x80 << shift));
        let g = &d.igroupr[(intid / 32) as usize];
        g.set(g.get() | 1 << (intid % 32));
        if let Some(r) = d.irouter.get(intid as usize - 32) {
            r.set((mpidr & 0xff_00ff_ffff) & !(1 << 31));
        }
        d.isenabler[(intid / 32) as usize].set(1 << (intid % 32));
    }

    /// Finds this CPU's redistributor frame by affinity.
    fn find_frame(&self, mpidr: u64) -> Option<u64> {
        let want = typer_affinity(mpidr);
        let mut frame = self.redist;
        while frame + 0x20000 <= self.redist + self.redist_size {
            // SAFETY: `frame` lies inside the redistributor region, mapped as device memory.
            let rd = unsafe { &*(frame as *const RdRegs) };
            let typer = rd.typer.get();
            if typer >> 32 == want {
                return Some(frame);
            }
            if typer & TYPER_LAST != 0 {
                break;
            }
            frame += 0x20000;
        }
        None
    }

    /// Whether private interrupt `intid` is active on the CPU whose redistributor frame is
    /// `frame` (`GICR_ISACTIVER0`).
    pub fn private_active(frame: u64, intid: u32) -> bool {
        // SAFETY: `frame` is this CPU's redistributor frame (from `init_cpu`), device-mapped.
        let sgi = unsafe { &*((frame + 0x10000) as *const SgiRegs) };
        sgi.isactiver0.get() & (1 << intid) != 0
    }

    /// Sets or clears the active state of private interrupt `intid`
    /// (`GICR_ISACTIVER0` / `GICR_ICACTIVER0`).
    pub fn set_private_active(frame: u64, intid: u32, active: bool) {
        // SAFETY: as in `private_active`.
        let sgi = unsafe { &*((frame + 0x10000) as *const SgiRegs) };
        if active {
            sgi.isactiver0.set(1 << intid);
        } else {
            sgi.icactiver0.set(1 << intid);
        }
    }

    /// Wakes this CPU's redistributor, enables `ppis`, and sets up the CPU interface with
    /// split priority drop / deactivation. Returns the redistributor frame.
    pub fn init_cpu(&self, mpidr: u64, ppis: &[u32]) -> u64 {
        let found = self.find_frame(mpidr);
        if let Some(frame) = found {
            // SAFETY: this CPU's own redistributor frame, device-mapped.
            let rd = unsafe { &*(frame as *const RdRegs) };
            rd.waker.set(rd.waker.get() & !WAKER_PS);
            while rd.waker.get() & WAKER_CA != 0 {
                core::hint::spin_loop();
            }
            // SAFETY: SGI_base is the second 64 KiB of the frame.
            let sgi = unsafe { &*((frame + 0x10000) as *const SgiRegs) };
            let mut mask = 0u32;
            for &p in ppis {
                mask |= 1 << p;
                let reg = &sgi.ipriorityr[(p / 4) as usize];
                let shift = (p % 4) * 8;
                reg.set((reg.get() & !(0xff << shift)) | (0x80 << shift));
            }
            sgi.igroupr0.set(0xffff_ffff);
            sgi.isenabler0.set(mask);
        } else {
            crate::hv_warn!("no GICv3 redistributor for MPIDR {mpidr:#x}");
        }
        // ICC_SRE_EL2
        write_sysreg!("s3_4_c12_c9_5", ICC_SRE_EL2_VALUE);
        // SAFETY: ISB makes the SRE change visible before ICC_* accesses.
        unsafe { core::arch::asm!("isb", options(nomem, nostack)) };
        // ICC_PMR_EL1
        write_sysreg!("s3_0_c4_c6_0", 0xff);
        // ICC_BPR1_EL1
        write_sysreg!("s3_0_c12_c12_3", 0);
        // ICC_CTLR_EL1
        let ctlr = read_sysreg!("s3_0_c12_c12_4");
        write_sysreg!("s3_0_c12_c12_4", ctlr | ICC_CTLR_EOIMODE);
        // ICC_IGRPEN1_EL1
        write_sysreg!("s3_0_c12_c12_7", 1);
        // SAFETY: as above.
        unsafe { core::arch::asm!("isb", options(nomem, nostack)) };
        found.unwrap_or(0)
    }

    /// Reads `ICC_IAR1_EL1`.
    pub fn ack(&self) -> u32 {
        let v = read_sysreg!("s3_0_c12_c12_0") as u32;
        // SAFETY: DSB SY orders the acknowledge before the handler's effects.
        unsafe { core::arch::asm!("dsb sy", options(nostack)) };
        v
    }

    /// Writes `ICC_EOIR1_EL1` (priority drop under EOImode 1).
    pub fn eoi(&self, iar: u32) {
        write_sysreg!("s3_0_c12_c12_1", iar as u64);
    }

    /// Writes `ICC_DIR_EL1` (deactivation).
    pub fn deactivate(&self, iar: u32) {
        write_sysreg!("s3_0_c12_c11_1", iar as u64);
    }

    /// Sends SGI `intid` to the CPU with `mpidr` through `ICC_SGI1R_EL1`.
    pub fn send_sgi(mpidr: u64, intid: u32) {
        let aff0 = mpidr & 0xf;
        let rs = (mpidr >> 4) & 0xf; // range selector for Aff0 >= 16
        let v = ((mpidr >> 32) & 0xff) << 48
            | ((mpidr >> 16) & 0xff) << 32
            | rs << 44
            | ((intid as u64) & 0xf) << 24
            | ((mpidr >> 8) & 0xff) << 16
            | (1 << aff0);
        // SAFETY: DSB ISHST makes prior memory writes (the kick flags) visible before the
        // SGI is generated.
        unsafe { core::arch::asm!("dsb ishst", options(nostack)) };
        // ICC_SGI1R_EL1
        write_sysreg!("s3_0_c12_c11_5", v);
        // SAFETY: ISB completes the system-register write.
        unsafe { core::arch::asm!("isb", options(nomem, nostack)) };
    }
}
