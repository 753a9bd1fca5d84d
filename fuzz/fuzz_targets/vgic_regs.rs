//! The virtual GIC (`vgic`) as a guest drives it: distributor and redistributor register
//! accesses of any offset, width and value, SGI-generation system-register writes, device
//! interrupt lines, and the list-register flush/sync around guest acknowledge/EOI on an
//! in-memory list-register backend. Errors are answers; nothing may panic.
#![no_main]

use hv_fuzz::Input;
use libfuzzer_sys::fuzz_target;
use vgic::backends::mem::MemLrs;
use vgic::{GicVersion, SgiReg, Vgic, VgicConfig, GICR_FRAME_SIZE, SPI_BASE};

/// Most vCPUs of the fuzzed VM.
const MAX_VCPUS: u8 = 4;
/// SPIs per unit of the configuration.
const SPI_GROUP: u32 = 32;
/// Most SPI groups of the fuzzed VM (`nr_spis` up to 128).
const MAX_SPI_GROUPS: u8 = 4;
/// List registers of the in-memory backend.
const LRS: usize = 4;
/// Size of the GICD frame the guest can reach.
const GICD_SIZE: u64 = 0x1_0000;
/// Access widths a guest can issue, and a few it cannot.
const WIDTHS: [u8; 6] = [1, 2, 4, 8, 3, 0];
/// Most operations per input.
const MAX_OPS: usize = 256;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let version = if input.bool() {
        GicVersion::V3
    } else {
        GicVersion::V2
    };
    let vcpus = usize::from(1 + input.u8() % MAX_VCPUS);
    let cfg = VgicConfig {
        version,
        vcpu_mpidrs: (0..vcpus as u64).collect(),
        nr_spis: SPI_GROUP * u32::from(input.u8() % (MAX_SPI_GROUPS + 1)),
    };
    let Ok(mut gic) = Vgic::new(cfg) else {
        return;
    };
    let mut lrs: Vec<MemLrs> = (0..vcpus).map(|_| MemLrs::new(LRS)).collect();
    let gicr_size = GICR_FRAME_SIZE * vcpus as u64;
    for _ in 0..MAX_OPS {
        if input.is_empty() {
            break;
        }
        let op = input.u8();
        // A vCPU id, now and then one that does not exist.
        let vcpu = usize::from(input.u8()) % (vcpus + 1);
        let width = input.pick(&WIDTHS);
        let value = if input.bool() {
            input.u64()
        } else {
            u64::from(input.u8())
        };
        match op % 12 {
            0 | 1 => {
                let _ = gic.gicd_read(vcpu, u64::from(input.u16()) % GICD_SIZE, width);
            }
            2 | 3 => {
                let off = u64::from(input.u16()) % GICD_SIZE;
                let _ = gic.gicd_write(vcpu, off, width, value);
            }
            4 => {
                let _ = gic.gicr_read(vcpu, u64::from(input.u32()) % (gicr_size + 1), width);
            }
            5 => {
                let off = u64::from(input.u32()) % (gicr_size + 1);
                let _ = gic.gicr_write(vcpu, off, width, value);
            }
            6 => {
                let reg = input.pick(&[SgiReg::Sgi1r, SgiReg::Asgi1r, SgiReg::Sgi0r]);
                let _ = gic.write_sgi_sysreg(vcpu, reg, value);
            }
            7 => {
                let intid = SPI_BASE + u32::from(input.u8());
                let _ = gic.set_spi_level(intid, input.bool());
            }
            8 => {
                let _ = gic.set_ppi_level(vcpu, u32::from(input.u8() % 40), input.bool());
            }
            9 => {
                if let Some(l) = lrs.get_mut(vcpu) {
                    let _ = gic.flush(vcpu, l);
                    if let Some(intid) = l.guest_ack() {
                        if input.bool() {
                            l.guest_eoi(intid);
                        }
                    }
                    let _ = gic.sync(vcpu, l);
                }
            }
            10 => {
                let _ = gic.raise_sgi(
                    vcpu,
                    usize::from(input.u8()) % (vcpus + 1),
                    u32::from(input.u8() % 20),
                );
            }
            _ => {
                let _ = gic.take_kicks();
                let _ = gic.vcpu_has_pending(vcpu % vcpus);
            }
        }
    }
});
