//! GICv3 distributor and redistributor registers, affinity routing, SGI system registers.

#![allow(clippy::needless_range_loop)]

mod common;
use common::*;
use vgic::backends::mem::MemLrs;
use vgic::sgi::SgiRequest;
use vgic::{SgiReg, Vgic, VgicError, GICR_FRAME_SIZE as FRAME, GICR_SGI_BASE as SGI};

fn rrd(v: &mut Vgic, cpu: usize, off: u64) -> u64 {
    v.gicr_read(cpu, off, 4).unwrap()
}
fn rwr(v: &mut Vgic, cpu: usize, off: u64, val: u64) {
    v.gicr_write(cpu, off, 4, val).unwrap()
}

#[test]
fn gicd_reset_values() {
    let mut v = v3(2);
    assert_eq!(
        rd(&mut v, 0, 0x0000),
        (1 << 4) | (1 << 6),
        "ARE and DS read as one"
    );
    let typer = rd(&mut v, 0, 0x0004);
    assert_eq!(typer & 0x1f, 8, "ITLinesNumber");
    assert_eq!((typer >> 19) & 0x1f, 9, "IDbits");
    assert_eq!(typer & (1 << 17), 0, "no LPIs");
    assert_eq!(typer & (1 << 24), 1 << 24, "A3V");
    assert_eq!(typer & (1 << 25), 0, "1-of-N supported");
    assert_eq!(rd(&mut v, 0, 0x0008), 0x43b);
    assert_eq!(rd(&mut v, 0, 0x000c), 0, "TYPER2");
    assert_eq!(rd(&mut v, 0, 0xffe8), 0x3b, "PIDR2");
    assert_eq!(rd(&mut v, 0, 0x0084), 0xffff_ffff, "SPIs group 1 at reset");
    assert_eq!(
        v.gicd_read(0, 0x6000 + 8 * 40, 8).unwrap(),
        0,
        "IROUTER reset"
    );
}

#[test]
fn gicd_ctlr_bits() {
    let mut v = v3(1);
    wr(&mut v, 0, 0, 0xffff_ffff);
    assert_eq!(rd(&mut v, 0, 0), 3 | (1 << 4) | (1 << 6), "RWP reads zero");
    // Linux writes ARE_NS | EnableGrp1A | EnableGrp1.
    wr(&mut v, 0, 0, (1 << 4) | 2 | 1);
    assert_eq!(rd(&mut v, 0, 0) & 3, 3);
    wr(&mut v, 0, 0, 0);
    assert_eq!(
        rd(&mut v, 0, 0),
        (1 << 4) | (1 << 6),
        "ARE cannot be cleared"
    );
}

#[test]
fn gicd_private_raz_wi_and_ro_regions() {
    let mut v = v3(1);
    for off in [0x0080, 0x0100, 0x0200, 0x0300, 0x0400, 0x0c00] {
        wr(&mut v, 0, off, 0xffff_ffff);
        assert_eq!(
            rd(&mut v, 0, off),
            0,
            "private INTIDs RAZ/WI in GICD at {off:#x}"
        );
    }
    wr(&mut v, 0, 0x0820, 0xffff_ffff);
    assert_eq!(rd(&mut v, 0, 0x0820), 0, "ITARGETSR RAZ/WI");
    wr(&mut v, 0, 0x0f00, 0x0001_0001);
    assert!(!v.is_pending(0, 1), "GICD_SGIR ignored with ARE");
    wr(&mut v, 0, 0x0d04, !0);
    assert_eq!(rd(&mut v, 0, 0x0d04), 0, "IGRPMODR RAZ/WI with DS=1");
    assert!(matches!(
        v.gicd_read(0, 0x0040, 4),
        Err(VgicError::Reserved { .. })
    ));
    assert!(matches!(
        v.gicd_read(0, 0xc000, 4),
        Err(VgicError::Reserved { .. })
    ));
    assert!(matches!(
        v.gicd_read(0, 0x10000, 4),
        Err(VgicError::Reserved { .. })
    ));
    assert!(v.gicd_read(0, 0x0004, 8).unwrap_err().is_abort());
    assert!(v.gicd_read(0, 0x0404, 8).unwrap_err().is_abort());
}

#[test]
fn irouter_widths_and_halves() {
    let mut v = v3(2);
    let r40 = 0x6000 + 8 * 40;
    v.gicd_write(0, r40, 8, 0xffff_ffff_ffff_ffff).unwrap();
    assert_eq!(
        v.gicd_read(0, r40, 8).unwrap(),
        0xff_80ff_ffff,
        "reserved bits masked"
    );
    v.gicd_write(0, r40, 4, 0x0000_0102).unwrap();
    assert_eq!(v.gicd_read(0, r40, 8).unwrap(), 0xff_0000_0102);
    v.gicd_write(0, r40 + 4, 4, 0x3).unwrap();
    assert_eq!(v.gicd_read(0, r40 + 4, 4).unwrap(), 0x3);
    assert_eq!(v.gicd_read(0, r40, 4).unwrap(), 0x0102);
    assert!(v.gicd_read(0, r40, 1).unwrap_err().is_abort());
    assert!(
        v.gicd_read(0, r40 + 4, 8).unwrap_err().is_abort(),
        "misaligned 64-bit"
    );
    // Private INTIDs: RAZ/WI.
    v.gicd_write(0, 0x6000 + 8 * 5, 8, 1).unwrap();
    assert_eq!(v.gicd_read(0, 0x6000 + 8 * 5, 8).unwrap(), 0);
    // Beyond the implemented SPIs: RAZ/WI.
    v.gicd_write(0, 0x6000 + 8 * 1000, 8, 1).unwrap();
    assert_eq!(v.gicd_read(0, 0x6000 + 8 * 1000, 8).unwrap(), 0);
}

#[test]
fn gicr_typer_last_affinity_number() {
    let mpidrs = vec![0x0, 0x1, 0x100, 0x01_0002_0304];
    let mut v = v3_with(mpidrs.clone());
    for (i, m) in mpidrs.iter().enumerate() {
        let base = i as u64 * FRAME;
        let t = v.gicr_read(0, base + 8, 8).unwrap();
        assert_eq!((t >> 8) & 0xffff, i as u64, "Processor_Number");
        assert_eq!(t & (1 << 4) != 0, i == 3, "Last");
        let aff = ((m >> 32) & 0xff) << 24 | (m & 0xff_ffff);
        assert_eq!(t >> 32, aff, "Affinity_Value");
        assert_eq!(t & 1, 0, "no LPIs");
        assert_eq!(
            v.gicr_read(2, base + 0xc, 4).unwrap(),
            t >> 32,
            "upper half"
        );
        assert_eq!(
            v.gicr_read(2, base + 8, 4).unwrap(),
            t & 0xffff_ffff,
            "lower half"
        );
    }
    assert_eq!(
        v.gicr_read(3, 0x0104_0000 + 3 * FRAME + 0xc, 4)
            .unwrap_err(),
        VgicError::Reserved {
            offset: 0x0104_0000 + 3 * FRAME + 0xc
        }
    );
    assert!(matches!(
        v.gicr_read(0, 4 * FRAME, 4),
        Err(VgicError::Reserved { .. })
    ));
}

#[test]
fn gicr_rd_base_registers() {
    let mut v = v3(2);
    assert_eq!(rrd(&mut v, 0, 0x0000), 0, "CTLR: no LPIs, RWP 0");
    rwr(&mut v, 0, 0x0000, 1);
    assert_eq!(rrd(&mut v, 0, 0x0000), 0, "EnableLPIs WI");
    assert_eq!(rrd(&mut v, 0, 0x0004), 0x43b);
    assert_eq!(rrd(&mut v, 1, FRAME + 0xffe8), 0x3b, "PIDR2");
    assert_eq!(rrd(&mut v, 0, SGI + 0xffe8), 0x3b, "SGI_base PIDR2");
    assert_eq!(v.gicr_read(0, 0x70, 8).unwrap(), 0, "PROPBASER");
    assert!(matches!(
        v.gicr_read(0, 0x40, 4),
        Err(VgicError::Reserved { .. })
    ));
    assert!(v.gicr_read(0, 0x0014, 8).unwrap_err().is_abort());
}

#[test]
fn gicr_waker_handshake() {
    let mut v = v3(2);
    assert_eq!(rrd(&mut v, 0, 0x14), 0b110, "asleep at reset");
    rwr(&mut v, 0, 0x14, 0);
    assert_eq!(
        rrd(&mut v, 0, 0x14),
        0,
        "ChildrenAsleep follows ProcessorSleep"
    );
    assert_eq!(rrd(&mut v, 0, FRAME + 0x14), 0b110, "per redistributor");
    rwr(&mut v, 0, 0x14, 0b100);
    assert_eq!(rrd(&mut v, 0, 0x14), 0, "ChildrenAsleep is read-only");
    rwr(&mut v, 0, 0x14, 0b010);
    assert_eq!(rrd(&mut v, 0, 0x14), 0b110);
}

#[test]
fn gicr_sgi_base_registers() {
    let mut v = v3(2);
    let b1 = FRAME + SGI;
    assert_eq!(rrd(&mut v, 1, b1 + 0x080), 0xffff_ffff, "group 1 at reset");
    assert_eq!(rrd(&mut v, 1, b1 + 0x100), 0, "disabled at reset");
    assert_eq!(rrd(&mut v, 1, b1 + 0xc00), 0xaaaa_aaaa, "SGIs edge");
    assert_eq!(rrd(&mut v, 1, b1 + 0xc04), 0, "PPIs level");
    rwr(&mut v, 0, b1 + 0x100, 0x0800_0002);
    assert_eq!(rrd(&mut v, 1, b1 + 0x180), 0x0800_0002);
    assert_eq!(rrd(&mut v, 0, SGI + 0x100), 0, "vCPU 0's frame untouched");
    rwr(&mut v, 1, b1 + 0x180, 0x2);
    assert_eq!(rrd(&mut v, 1, b1 + 0x100), 0x0800_0000);
    rwr(&mut v, 1, b1 + 0x200, 0x10);
    assert!(v.is_pending(1, 4), "ISPENDR0 can pend SGIs in GICv3");
    rwr(&mut v, 1, b1 + 0x280, 0x10);
    assert!(!v.is_pending(1, 4));
    rwr(&mut v, 1, b1 + 0x300, 1 << 27);
    assert!(v.is_active(1, 27));
    assert_eq!(rrd(&mut v, 1, b1 + 0x380), 1 << 27);
    rwr(&mut v, 1, b1 + 0x380, 1 << 27);
    assert!(!v.is_active(1, 27));
    v.gicr_write(1, b1 + 0x41b, 1, 0xa7).unwrap();
    assert_eq!(v.gicr_read(1, b1 + 0x418, 4).unwrap(), 0xa000_0000);
    assert!(v.gicr_read(1, b1 + 0x420, 4).is_err(), "only 32 priorities");
    rwr(&mut v, 1, b1 + 0xc04, 0xffff_ffff);
    assert_eq!(rrd(&mut v, 1, b1 + 0xc04), 0xaaaa_aaaa);
    rwr(&mut v, 1, b1 + 0xc00, 0);
    assert_eq!(rrd(&mut v, 1, b1 + 0xc00), 0xaaaa_aaaa, "SGI config RO");
    rwr(&mut v, 1, b1 + 0x080, 0);
    assert_eq!(rrd(&mut v, 1, b1 + 0x080), 0);
    rwr(&mut v, 1, b1 + 0xd00, !0);
    assert_eq!(rrd(&mut v, 1, b1 + 0xd00), 0, "IGRPMODR0 RAZ/WI");
    assert!(v.gicr_read(1, b1 + 0x100, 1).unwrap_err().is_abort());
}

#[test]
fn sgi1r_decode_fields() {
    let val = (0x12u64 << 48)
        | (0x3 << 44)
        | (1 << 40)
        | (0x34 << 32)
        | (0x9 << 24)
        | (0x56 << 16)
        | 0xa5a5;
    let r = SgiRequest::decode(val);
    assert_eq!(
        (r.aff3, r.rs, r.irm, r.aff2, r.intid, r.aff1, r.target_list),
        (0x12, 3, true, 0x34, 9, 0x56, 0xa5a5)
    );
    let r = SgiRequest::decode((1 << 16) | (2 << 44) | 0b100);
    assert!(r.names(0x0000_0122), "Aff1 1, Aff0 = 2*16 + 2");
    assert!(!r.names(0x0000_0102));
    assert!(!r.names(0x0001_0122), "Aff2 mismatch");
    assert!(!r.names(0x01_0000_0122), "Aff3 mismatch");
    assert_eq!(SgiReg::from_encoding(3, 0, 12, 11, 5), Some(SgiReg::Sgi1r));
    assert_eq!(SgiReg::from_encoding(3, 1, 12, 11, 6), Some(SgiReg::Asgi1r));
    assert_eq!(SgiReg::from_encoding(3, 2, 12, 11, 7), Some(SgiReg::Sgi0r));
    assert_eq!(SgiReg::from_encoding(3, 0, 12, 12, 5), None);
}

#[test]
fn sgi1r_targets_by_affinity() {
    // vCPUs 0..8: 0.0.0.0-3, 0.0.1.0-3.
    let mut v = v3(8);
    let hit = v
        .write_sgi_sysreg(0, SgiReg::Sgi1r, (1 << 16) | (3 << 24) | 0b1010)
        .unwrap();
    assert_eq!(hit.low_bits(), 0b1010_0000, "Aff1=1, Aff0 1 and 3");
    assert!(v.is_pending(5, 3) && v.is_pending(7, 3) && !v.is_pending(4, 3));
    // Aff values nobody has.
    let hit = v.write_sgi_sysreg(0, SgiReg::Sgi1r, (9 << 16) | 1).unwrap();
    assert!(hit.is_empty());
    let hit = v.write_sgi_sysreg(0, SgiReg::Sgi1r, (1 << 44) | 1).unwrap();
    assert!(hit.is_empty(), "RS=1 names Aff0 16..31");
    assert!(v.write_sgi_sysreg(8, SgiReg::Sgi1r, 0).is_err());
}

#[test]
fn sgi1r_range_selector_and_aff3() {
    let mut v = v3_with(vec![0x0, 0x11, 0x02_0000_0005]);
    let hit = v
        .write_sgi_sysreg(0, SgiReg::Sgi1r, (1 << 44) | (1 << 1))
        .unwrap();
    assert_eq!(hit.low_bits(), 0b010);
    let hit = v
        .write_sgi_sysreg(0, SgiReg::Sgi1r, (2 << 48) | (1 << 5) | (2 << 24))
        .unwrap();
    assert_eq!(hit.low_bits(), 0b100);
    assert!(v.is_pending(2, 2));
}

#[test]
fn sgi1r_irm_broadcasts_to_others() {
    let mut v = v3(4);
    enable(&mut v, 0, 0, 0);
    v.take_kicks();
    let hit = v
        .write_sgi_sysreg(2, SgiReg::Sgi1r, (1 << 40) | (6 << 24) | 0xffff)
        .unwrap();
    assert_eq!(hit.low_bits(), 0b1011);
    assert!(!v.is_pending(2, 6));
    assert!(v.is_pending(0, 6) && v.is_pending(1, 6) && v.is_pending(3, 6));
    assert_eq!(v.stats().sgis, 3);
}

#[test]
fn sgi_group_filters() {
    let mut v = v3(2);
    // SGI 1 group 0 on vCPU 1, SGI 2 group 1 (reset).
    rwr(&mut v, 0, FRAME + SGI + 0x80, 0xffff_fffd);
    let g0 = v.write_sgi_sysreg(0, SgiReg::Sgi0r, (1 << 24) | 2).unwrap();
    assert_eq!(g0.low_bits(), 0b10);
    assert!(v.is_pending(1, 1));
    assert!(v
        .write_sgi_sysreg(0, SgiReg::Sgi0r, (2 << 24) | 2)
        .unwrap()
        .is_empty());
    assert!(v
        .write_sgi_sysreg(0, SgiReg::Asgi1r, (2 << 24) | 2)
        .unwrap()
        .is_empty());
    assert!(!v.is_pending(1, 2));
    assert_eq!(
        v.write_sgi_sysreg(0, SgiReg::Sgi1r, (2 << 24) | 2)
            .unwrap()
            .low_bits(),
        2
    );
    assert!(v.is_pending(1, 2));
}

#[test]
fn spi_affinity_routing_and_1_of_n() {
    let mut v = v3(4);
    let mut lrs: Vec<MemLrs> = (0..4).map(|_| MemLrs::new(4)).collect();
    enable(&mut v, 0, 40, 0x80);
    // Route to vCPU 3 (affinity 0.0.0.3).
    v.gicd_write(0, 0x6000 + 8 * 40, 8, 3).unwrap();
    v.take_kicks();
    v.pulse_spi(40).unwrap();
    assert_eq!(v.take_kicks().low_bits(), 0b1000);
    for (c, l) in lrs.iter_mut().enumerate() {
        v.flush(c, l).unwrap();
    }
    assert_eq!(lrs[3].valid().count(), 1);
    assert_eq!(lrs.iter().map(|l| l.valid().count()).sum::<usize>(), 1);
    let (l3, _) = lrs.split_at_mut(4);
    l3[3].guest_ack();
    l3[3].guest_eoi(40);
    v.sync(3, &mut l3[3]).unwrap();
    // Routing to a nonexistent affinity: stays pending, nobody gets it.
    v.gicd_write(0, 0x6000 + 8 * 40, 8, 0x0000_0200).unwrap();
    v.pulse_spi(40).unwrap();
    assert!(v.take_kicks().is_empty());
    for (c, l) in lrs.iter_mut().enumerate() {
        v.flush(c, l).unwrap();
        v.sync(c, l).unwrap();
    }
    assert!(lrs.iter().all(|l| l.valid().count() == 0));
    assert!(v.is_pending(0, 40));
    // 1-of-N prefers an awake redistributor.
    rwr(&mut v, 0, 2 * FRAME + 0x14, 0);
    v.gicd_write(0, 0x6000 + 8 * 40, 8, 1 << 31).unwrap();
    assert_eq!(v.take_kicks().low_bits(), 0b0100);
    v.flush(2, &mut lrs[2]).unwrap();
    assert_eq!(lrs[2].valid().count(), 1);
}

#[test]
fn v3_ppi_through_lrs_with_group1() {
    let mut v = v3(1);
    let mut lrs = MemLrs::new(4);
    enable(&mut v, 0, 27, 0x40);
    v.set_hw_mapping(0, 27, Some(27)).unwrap();
    v.set_ppi_level(0, 27, true).unwrap();
    v.flush(0, &mut lrs).unwrap();
    let e = lrs.valid().next().copied().unwrap();
    assert_eq!(
        (e.vintid, e.pintid, e.priority, e.group1),
        (27, Some(27), 0x40, true)
    );
    // GICv3 VMCR: VENG1 bit 1, VPMR [31:24].
    lrs.vmcr = 2 | (0xff << 24);
    v.sync(0, &mut lrs).unwrap();
    v.save_vmcr(0, &lrs).unwrap();
    assert!(v.vcpu_has_pending(0));
    lrs.vmcr = 1 | (0xff << 24);
    v.save_vmcr(0, &lrs).unwrap();
    assert!(
        !v.vcpu_has_pending(0),
        "group 1 disabled at the CPU interface"
    );
    lrs.vmcr = 2 | (0x40 << 24);
    v.save_vmcr(0, &lrs).unwrap();
    assert!(!v.vcpu_has_pending(0), "PMR");
}

#[test]
fn sgi_ping_pong_no_loss() {
    let mut v = v3(2);
    let mut l: Vec<MemLrs> = (0..2).map(|_| MemLrs::new(4)).collect();
    for c in 0..2 {
        enable(&mut v, c, 1, 0x10);
        v.vcpu_load(c, &mut l[c]).unwrap();
    }
    let mut got = [0u32; 2];
    let mut cur = 0usize;
    v.write_sgi_sysreg(0, SgiReg::Sgi1r, (1 << 24) | 0b10)
        .unwrap();
    for _ in 0..100 {
        cur ^= 1;
        let kicks = v.take_kicks();
        assert!(kicks.contains(cur));
        v.flush(cur, &mut l[cur]).unwrap();
        assert_eq!(l[cur].guest_ack(), Some(1));
        l[cur].guest_eoi(1);
        got[cur] += 1;
        v.write_sgi_sysreg(cur, SgiReg::Sgi1r, (1 << 24) | (1 << (cur ^ 1)))
            .unwrap();
        v.sync(cur, &mut l[cur]).unwrap();
    }
    assert_eq!(got, [50, 50]);
}
