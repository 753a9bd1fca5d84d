//! GICv2 distributor registers.

mod common;
use common::*;
use vgic::{GicVersion, Vgic, VgicConfig, VgicError};

#[test]
fn reset_values() {
    let mut v = v2(4);
    assert_eq!(rd(&mut v, 0, 0x000), 0, "CTLR");
    // ITLinesNumber = (32 + 256) / 32 - 1 = 8, CPUNumber = 3.
    assert_eq!(rd(&mut v, 0, 0x004), 8 | (3 << 5), "TYPER");
    assert_eq!(rd(&mut v, 0, 0x008), 0x43b, "IIDR");
    assert_eq!(rd(&mut v, 0, 0xfe8), 0x2b, "PIDR2");
    assert_eq!((rd(&mut v, 0, 0xfe8) >> 4) & 0xf, 2, "ArchRev");
    assert_eq!(rd(&mut v, 0, 0xff0), 0x0d, "CIDR0");
    assert_eq!(rd(&mut v, 0, 0xffc), 0xb1, "CIDR3");
    assert_eq!(rd(&mut v, 0, 0x080), 0, "IGROUPR0 group 0");
    assert_eq!(rd(&mut v, 0, 0x100), 0xffff, "SGIs enabled at reset");
    assert_eq!(rd(&mut v, 0, 0x104), 0, "SPIs disabled");
    assert_eq!(rd(&mut v, 0, 0x200), 0);
    assert_eq!(rd(&mut v, 0, 0x300), 0);
    assert_eq!(rd(&mut v, 0, 0x400), 0, "priorities");
    assert_eq!(rd(&mut v, 0, 0xc00), 0xaaaa_aaaa, "SGIs edge");
    assert_eq!(rd(&mut v, 0, 0xc04), 0, "PPIs level");
    assert_eq!(rd(&mut v, 0, 0xc08), 0, "SPIs level");
    assert_eq!(rd(&mut v, 0, 0x820), 0, "SPI targets none");
    assert_eq!(rd(&mut v, 0, 0xf00), 0, "SGIR write-only");
}

#[test]
fn ctlr_and_ro_registers() {
    let mut v = v2(2);
    wr(&mut v, 0, 0x000, 0xffff_ffff);
    assert_eq!(rd(&mut v, 0, 0x000), 3);
    wr(&mut v, 0, 0x004, 0);
    assert_eq!(rd(&mut v, 0, 0x004), 8 | (1 << 5), "TYPER is RO");
    wr(&mut v, 0, 0x008, 0);
    assert_eq!(rd(&mut v, 0, 0x008), 0x43b);
}

#[test]
fn typer_counts_lines() {
    let mut v = Vgic::new(VgicConfig {
        version: GicVersion::V2,
        vcpu_mpidrs: vec![0],
        nr_spis: 960,
    })
    .unwrap();
    assert_eq!(rd(&mut v, 0, 4) & 0x1f, 30);
    assert_eq!((rd(&mut v, 0, 4) >> 5) & 7, 0);
}

#[test]
fn bad_configs() {
    let bad = |version, n: usize, spis| {
        Vgic::new(VgicConfig {
            version,
            vcpu_mpidrs: (0..n as u64).collect(),
            nr_spis: spis,
        })
        .is_err()
    };
    assert!(bad(GicVersion::V2, 9, 32));
    assert!(bad(GicVersion::V2, 0, 32));
    assert!(bad(GicVersion::V3, 1, 33));
    assert!(bad(GicVersion::V3, 1, 1024));
    assert!(bad(GicVersion::V3, 257, 32));
    assert!(Vgic::new(VgicConfig {
        version: GicVersion::V3,
        vcpu_mpidrs: vec![1, 1],
        nr_spis: 32
    })
    .is_err());
    assert!(!bad(GicVersion::V3, 256, 992));
}

#[test]
fn widths_alignment_and_reserved() {
    let mut v = v2(1);
    // Byte access only where allowed.
    assert!(matches!(
        v.gicd_read(0, 0x000, 1),
        Err(VgicError::BadWidth { .. })
    ));
    assert!(matches!(
        v.gicd_read(0, 0x100, 1),
        Err(VgicError::BadWidth { .. })
    ));
    assert!(matches!(
        v.gicd_write(0, 0xc00, 2, 0),
        Err(VgicError::BadWidth { .. })
    ));
    assert!(matches!(
        v.gicd_read(0, 0x400, 8),
        Err(VgicError::BadWidth { .. })
    ));
    assert!(matches!(
        v.gicd_read(0, 0x000, 3),
        Err(VgicError::BadWidth { .. })
    ));
    assert!(matches!(
        v.gicd_read(0, 0x102, 4),
        Err(VgicError::Misaligned { .. })
    ));
    assert!(v.gicd_read(0, 0x102, 4).unwrap_err().is_abort());
    assert!(v.gicd_read(0, 0x401, 1).is_ok());
    assert!(v.gicd_read(0, 0x803, 1).is_ok());
    assert!(v.gicd_read(0, 0xf13, 1).is_ok());
    // Reserved: RAZ/WI, reported, not an abort.
    for off in [
        0x00c,
        0x040,
        0x07c,
        0xf04,
        0xf30,
        0xfcc,
        0x1000,
        0xfffc,
        1 << 40,
    ] {
        let e = v.gicd_read(0, off, 4).unwrap_err();
        assert_eq!(e, VgicError::Reserved { offset: off });
        assert!(!e.is_abort());
        assert_eq!(
            v.gicd_write(0, off, 4, !0),
            Err(VgicError::Reserved { offset: off })
        );
    }
    assert_eq!(v.stats().reserved_accesses, 18);
    // Implementation-defined and NSACR ranges: RAZ/WI, not reported.
    wr(&mut v, 0, 0xd00, !0);
    assert_eq!(rd(&mut v, 0, 0xd00), 0);
    wr(&mut v, 0, 0xe00, !0);
    assert_eq!(rd(&mut v, 0, 0xe00), 0);
    assert!(matches!(v.gicd_read(9, 0, 4), Err(VgicError::BadVcpu(9))));
}

#[test]
fn priority_byte_and_word_access() {
    let mut v = v2(1);
    v.gicd_write(0, 0x420, 1, 0xff).unwrap();
    v.gicd_write(0, 0x422, 1, 0x13).unwrap();
    assert_eq!(rd(&mut v, 0, 0x420), 0x0010_00f8, "5 priority bits kept");
    wr(&mut v, 0, 0x424, 0x8040_2010);
    assert_eq!(v.gicd_read(0, 0x427, 1).unwrap(), 0x80);
    assert_eq!(v.gicd_read(0, 0x425, 1).unwrap(), 0x20);
    // Beyond the implemented SPIs: RAZ/WI.
    v.gicd_write(0, 0x400 + 300, 1, 0x80).unwrap();
    assert_eq!(v.gicd_read(0, 0x400 + 300, 1).unwrap(), 0);
}

#[test]
fn priority_banked_for_private() {
    let mut v = v2(2);
    v.gicd_write(0, 0x41b, 1, 0xa0).unwrap();
    assert_eq!(v.gicd_read(0, 0x41b, 1).unwrap(), 0xa0);
    assert_eq!(v.gicd_read(1, 0x41b, 1).unwrap(), 0);
}

#[test]
fn itargetsr() {
    let mut v = v2(3);
    // SGI/PPI: read-only, current CPU's mask.
    assert_eq!(rd(&mut v, 0, 0x800), 0x0101_0101);
    assert_eq!(rd(&mut v, 2, 0x81c), 0x0404_0404);
    wr(&mut v, 1, 0x800, 0xffff_ffff);
    assert_eq!(v.gicd_read(1, 0x803, 1).unwrap(), 2);
    // SPI: byte writable, masked to existing CPUs.
    v.gicd_write(0, 0x821, 1, 0xff).unwrap();
    assert_eq!(v.gicd_read(0, 0x821, 1).unwrap(), 0x07);
    assert_eq!(rd(&mut v, 1, 0x820), 0x0000_0700);
    wr(&mut v, 0, 0x824, 0x0102_0304);
    assert_eq!(rd(&mut v, 0, 0x824), 0x0102_0304 & 0x0707_0707);
}

#[test]
fn enable_set_clear() {
    let mut v = v2(1);
    wr(&mut v, 0, 0x104, 0x8000_0001);
    assert_eq!(rd(&mut v, 0, 0x104), 0x8000_0001);
    assert_eq!(rd(&mut v, 0, 0x184), 0x8000_0001);
    wr(&mut v, 0, 0x184, 1);
    assert_eq!(rd(&mut v, 0, 0x104), 0x8000_0000);
    wr(&mut v, 0, 0x104, 0);
    assert_eq!(rd(&mut v, 0, 0x104), 0x8000_0000, "zeros have no effect");
    // Past the last implemented line: RAZ/WI.
    wr(&mut v, 0, 0x17c, !0);
    assert_eq!(rd(&mut v, 0, 0x17c), 0);
}

#[test]
fn pending_set_clear_and_level() {
    let mut v = v2(1);
    wr(&mut v, 0, 0x204, 0x3);
    assert_eq!(rd(&mut v, 0, 0x204), 0x3);
    assert_eq!(rd(&mut v, 0, 0x284), 0x3);
    wr(&mut v, 0, 0x284, 0x1);
    assert_eq!(rd(&mut v, 0, 0x204), 0x2);
    // A level SPI with its line high stays pending through ICPENDR.
    v.set_spi_level(40, true).unwrap();
    wr(&mut v, 0, 0x284, 1 << 8);
    assert_eq!(rd(&mut v, 0, 0x204) & (1 << 8), 1 << 8);
    v.set_spi_level(40, false).unwrap();
    assert_eq!(rd(&mut v, 0, 0x204) & (1 << 8), 0);
    // GICv2 SGIs ignore ISPENDR/ICPENDR.
    wr(&mut v, 0, 0x200, 0xffff);
    assert_eq!(rd(&mut v, 0, 0x200), 0);
}

#[test]
fn active_set_clear() {
    let mut v = v2(2);
    wr(&mut v, 0, 0x300, 1 << 20);
    wr(&mut v, 0, 0x304, 1);
    assert_eq!(rd(&mut v, 0, 0x300), 1 << 20);
    assert_eq!(rd(&mut v, 1, 0x300), 0, "banked");
    assert_eq!(rd(&mut v, 1, 0x384), 1, "SPIs shared");
    wr(&mut v, 1, 0x384, 1);
    assert_eq!(rd(&mut v, 0, 0x304), 0);
}

#[test]
fn group_and_config() {
    let mut v = v2(1);
    wr(&mut v, 0, 0x080, 0xffff_ffff);
    assert_eq!(rd(&mut v, 0, 0x080), 0xffff_ffff);
    wr(&mut v, 0, 0xc00, 0);
    assert_eq!(rd(&mut v, 0, 0xc00), 0xaaaa_aaaa, "SGI config read-only");
    wr(&mut v, 0, 0xc04, 0xffff_ffff);
    assert_eq!(
        rd(&mut v, 0, 0xc04),
        0xaaaa_aaaa,
        "only the edge bit is kept"
    );
    wr(&mut v, 0, 0xc08, 0x0000_0008);
    assert_eq!(rd(&mut v, 0, 0xc08), 0x8);
}

#[test]
fn sgir_target_filters() {
    let mut v = v2(4);
    // Filter 0: list.
    wr(&mut v, 1, 0xf00, (0b1010 << 16) | 3);
    assert!(v.is_pending(1, 3) && v.is_pending(3, 3));
    assert!(!v.is_pending(0, 3) && !v.is_pending(2, 3));
    // Source recorded: SPENDSGIR of target 3, byte for SGI 3 = bit 1.
    assert_eq!(v.gicd_read(3, 0xf23, 1).unwrap(), 0b10);
    // Filter 1: all but self.
    let mut v = v2(4);
    wr(&mut v, 2, 0xf00, (1 << 24) | (0xff << 16) | 5);
    let got: Vec<bool> = (0..4).map(|c| v.is_pending(c, 5)).collect();
    assert_eq!(got, [true, true, false, true]);
    // Filter 2: self only.
    let mut v = v2(4);
    wr(&mut v, 2, 0xf00, (2 << 24) | (0xff << 16) | 7);
    let got: Vec<bool> = (0..4).map(|c| v.is_pending(c, 7)).collect();
    assert_eq!(got, [false, false, true, false]);
    // Filter 3: reserved, nothing happens.
    let mut v = v2(4);
    wr(&mut v, 0, 0xf00, (3 << 24) | (0xff << 16) | 7);
    assert!((0..4).all(|c| !v.is_pending(c, 7)));
    // Targets beyond the VM's vCPUs are dropped.
    wr(&mut v, 0, 0xf00, (0xf0 << 16) | 1);
    assert!((0..4).all(|c| !v.is_pending(c, 1)));
    assert_eq!(v.stats().sgis, 0);
}

#[test]
fn sgir_kicks_targets() {
    let mut v = v2(4);
    v.take_kicks();
    wr(&mut v, 0, 0, 1); // group 0 on
    wr(&mut v, 0, 0xf00, (0b0110 << 16) | 1);
    let k = v.take_kicks();
    assert_eq!(k.low_bits(), 0b0110);
    assert!(v.take_kicks().is_empty());
}

#[test]
fn spendsgir_cpendsgir() {
    let mut v = v2(4);
    v.gicd_write(1, 0xf22, 1, 0xff).unwrap();
    assert_eq!(
        v.gicd_read(1, 0xf22, 1).unwrap(),
        0x0f,
        "only existing sources"
    );
    assert_eq!(v.gicd_read(1, 0xf10, 4).unwrap(), 0x000f_0000);
    assert!(v.is_pending(1, 2));
    assert_eq!(rd(&mut v, 1, 0x200), 1 << 2, "ISPENDR shows SGI pending");
    assert!(!v.is_pending(0, 2), "banked");
    v.gicd_write(1, 0xf12, 1, 0x05).unwrap();
    assert_eq!(v.gicd_read(1, 0xf22, 1).unwrap(), 0x0a);
    v.gicd_write(1, 0xf10, 4, 0xffff_ffff).unwrap();
    assert!(!v.is_pending(1, 2));
}

#[test]
fn write_gicd_sgir_api() {
    let mut v = v2(2);
    let hit = v.write_gicd_sgir(0, (1 << 24) | 4).unwrap();
    assert_eq!(hit.low_bits(), 0b10);
    assert!(v.is_pending(1, 4));
    assert_eq!(
        v.write_sgi_sysreg(0, vgic::SgiReg::Sgi1r, 0),
        Err(VgicError::WrongVersion)
    );
    assert_eq!(v.gicr_read(0, 0, 4), Err(VgicError::WrongVersion));
}
