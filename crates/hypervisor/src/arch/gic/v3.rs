//! GICv3 host driver: distributor, this CPU's redistributor, and the system-register CPU
//! interface.

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::ICC_SRE_EL2;
use el2_core::sysreg::fields::{
    ICC_BPR1_EL1 as BPR1, ICC_CTLR_EL1 as CTLR, ICC_IGRPEN1_EL1 as IGRPEN1, ICC_PMR_EL1 as PMR,
    ICC_SGI1R_EL1 as SGI1R,
};
use el2_core::sysreg::{
    ICC_BPR1_EL1, ICC_CTLR_EL1, ICC_DIR_EL1, ICC_EOIR1_EL1, ICC_IAR1_EL1, ICC_IGRPEN1_EL1,
    ICC_PMR_EL1, ICC_SGI1R_EL1,
};
use tock_registers::interfaces::{ReadWriteable, Readable, Writeable};
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
        // System-register interface at EL2 (SRE), FIQ and IRQ bypass disabled (DFB, DIB),
        // and EL1 may use its own system-register interface (Enable).
        ICC_SRE_EL2.write(
            ICC_SRE_EL2::SRE::SET
                + ICC_SRE_EL2::DFB::SET
                + ICC_SRE_EL2::DIB::SET
                + ICC_SRE_EL2::ENABLE::SET,
        );
        // The SRE change takes effect before the ICC_* accesses below.
        barrier::isb(barrier::SY);
        // Every priority unmasked; binary point 0, the finest group-priority split.
        ICC_PMR_EL1.write(PMR::Priority.val(0xff));
        ICC_BPR1_EL1.write(BPR1::BinaryPoint.val(0));
        // Split priority drop (ICC_EOIR1_EL1) from deactivation (ICC_DIR_EL1).
        ICC_CTLR_EL1.modify(CTLR::EOImode::SET);
        ICC_IGRPEN1_EL1.write(IGRPEN1::Enable::SET);
        barrier::isb(barrier::SY);
        found.unwrap_or(0)
    }

    /// Reads `ICC_IAR1_EL1` (with Cavium erratum 23154's NOPs and barrier when the boot
    /// CPU's MIDR matched it: `crate::errata`, [`set_cavium_23154`]).
    pub fn ack(&self) -> u32 {
        if CAVIUM_23154.load(core::sync::atomic::Ordering::Relaxed) {
            return ack_cavium_23154();
        }
        let v = ICC_IAR1_EL1.get() as u32;
        // The acknowledge is ordered before the handler's effects.
        barrier::dsb(barrier::SY);
        v
    }

    /// Writes `ICC_EOIR1_EL1` (priority drop under EOImode 1) with the value `ack` read.
    pub fn eoi(&self, iar: u32) {
        ICC_EOIR1_EL1.set(iar.into());
    }

    /// Writes `ICC_DIR_EL1` (deactivation) with the value `ack` read.
    pub fn deactivate(&self, iar: u32) {
        ICC_DIR_EL1.set(iar.into());
    }

    /// Sends SGI `intid` to the CPU with `mpidr` through `ICC_SGI1R_EL1`.
    pub fn send_sgi(mpidr: u64, intid: u32) {
        // Aff0 = RS * 16 + the target's bit in TargetList (`val` keeps a field's own bits).
        let aff0 = mpidr & 0xff;
        let v = SGI1R::Aff3.val(mpidr >> 32)
            + SGI1R::Aff2.val(mpidr >> 16)
            + SGI1R::Aff1.val(mpidr >> 8)
            + SGI1R::RS.val(aff0 >> 4)
            + SGI1R::INTID.val(intid.into())
            + SGI1R::TargetList.val(1 << (aff0 & 0xf));
        // Prior memory writes (the kick flags) are visible before the SGI is generated.
        barrier::dsb(barrier::ISHST);
        ICC_SGI1R_EL1.write(v);
        // The system-register write completes.
        barrier::isb(barrier::SY);
    }
}

/// Whether `ICC_IAR1_EL1` reads need Cavium erratum 23154's workaround (set once at boot).
static CAVIUM_23154: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Turns on Cavium erratum 23154's workaround for every later acknowledge.
pub fn set_cavium_23154() {
    CAVIUM_23154.store(true, core::sync::atomic::Ordering::Relaxed);
}

/// ThunderX (erratum 23154): the IAR read may return a stale INTID unless surrounded by
/// NOPs and followed by a full barrier (what Linux's `gic_read_iar_cavium_thunderx` does).
fn ack_cavium_23154() -> u32 {
    let v: u64;
    // SAFETY: reads ICC_IAR1_EL1 (acknowledging the interrupt, as `ack` does) between NOPs.
    unsafe {
        core::arch::asm!(
            "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop",
            "mrs {v}, icc_iar1_el1",
            "nop", "nop", "nop", "nop",
            "dsb sy",
            v = out(reg) v,
            options(nostack),
        )
    };
    v as u32
}
