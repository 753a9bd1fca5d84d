#![allow(dead_code)]

use vgic::{GicVersion, Vgic, VgicConfig};

pub fn v2(n: usize) -> Vgic {
    Vgic::new(VgicConfig {
        version: GicVersion::V2,
        vcpu_mpidrs: (0..n as u64).collect(),
        nr_spis: 256,
    })
    .unwrap()
}

/// vCPU i has affinity 0.0.(i / 4).(i % 4) unless given.
pub fn v3_with(mpidrs: Vec<u64>) -> Vgic {
    Vgic::new(VgicConfig {
        version: GicVersion::V3,
        vcpu_mpidrs: mpidrs,
        nr_spis: 256,
    })
    .unwrap()
}

pub fn v3(n: usize) -> Vgic {
    v3_with((0..n as u64).map(|i| ((i / 4) << 8) | (i % 4)).collect())
}

pub fn rd(v: &mut Vgic, cpu: usize, off: u64) -> u64 {
    v.gicd_read(cpu, off, 4).unwrap()
}

pub fn wr(v: &mut Vgic, cpu: usize, off: u64, val: u64) {
    v.gicd_write(cpu, off, 4, val).unwrap()
}

/// Enables distributor groups 0 and 1 and interrupt `intid` (GICD path, or GICR for private
/// interrupts on v3), priority `prio`.
pub fn enable(v: &mut Vgic, cpu: usize, intid: u32, prio: u8) {
    let v3 = v.version() == GicVersion::V3;
    v.gicd_write(cpu, 0, 4, 3).unwrap();
    let bit = 1u64 << (intid % 32);
    let word = u64::from(intid / 32) * 4;
    if v3 && intid < 32 {
        let base = cpu as u64 * vgic::GICR_FRAME_SIZE + vgic::GICR_SGI_BASE;
        v.gicr_write(cpu, base + 0x100, 4, bit).unwrap();
        v.gicr_write(cpu, base + 0x400 + u64::from(intid), 1, u64::from(prio))
            .unwrap();
    } else {
        wr(v, cpu, 0x100 + word, bit);
        v.gicd_write(cpu, 0x400 + u64::from(intid), 1, u64::from(prio))
            .unwrap();
    }
}

/// Sets a GICv2 SPI target.
pub fn target_v2(v: &mut Vgic, intid: u32, mask: u8) {
    v.gicd_write(0, 0x800 + u64::from(intid), 1, u64::from(mask))
        .unwrap();
}

/// Configures SPI `intid` as edge-triggered (GICD_ICFGR, both versions).
pub fn edge(v: &mut Vgic, intid: u32) {
    let off = 0xc00 + u64::from(intid / 16) * 4;
    let cur = v.gicd_read(0, off, 4).unwrap();
    v.gicd_write(0, off, 4, cur | 2 << ((intid % 16) * 2))
        .unwrap();
}
