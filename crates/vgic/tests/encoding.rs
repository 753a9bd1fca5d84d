//! List-register encoders/decoders, bit by bit, and the GICH backend over plain memory.

use vgic::backends::gicv2::GichBackend;
use vgic::lr::{v2, v3};
use vgic::{ListRegisters, LrEntry, LrState, VcpuIfState};

fn entry() -> LrEntry {
    LrEntry::EMPTY
}

#[test]
fn v2_fields() {
    let e = LrEntry {
        vintid: 0x3ff,
        ..entry()
    };
    assert_eq!(v2::encode(&e), 0x3ff);
    let e = LrEntry {
        vintid: 0x7ff,
        ..entry()
    };
    assert_eq!(v2::encode(&e), 0x3ff, "VirtualID is 10 bits");
    let e = LrEntry {
        source_cpu: 5,
        ..entry()
    };
    assert_eq!(v2::encode(&e), 5 << 10, "CPUID [12:10]");
    let e = LrEntry {
        eoi_maint: true,
        ..entry()
    };
    assert_eq!(v2::encode(&e), 1 << 19, "EOI [19]");
    let e = LrEntry {
        pintid: Some(0x3ff),
        source_cpu: 7,
        eoi_maint: true,
        ..entry()
    };
    assert_eq!(
        v2::encode(&e),
        (1 << 31) | (0x3ff << 10),
        "HW: pINTID, no CPUID/EOI"
    );
    let e = LrEntry {
        priority: 0xff,
        ..entry()
    };
    assert_eq!(v2::encode(&e), 0x1f << 23, "top 5 priority bits in [27:23]");
    let e = LrEntry {
        priority: 0x08,
        ..entry()
    };
    assert_eq!(v2::encode(&e), 1 << 23);
    for (s, bits) in [
        (LrState::Invalid, 0),
        (LrState::Pending, 1),
        (LrState::Active, 2),
        (LrState::PendingActive, 3),
    ] {
        let e = LrEntry {
            state: s,
            ..entry()
        };
        assert_eq!(v2::encode(&e), bits << 28);
        assert_eq!(v2::decode(bits << 28).state, s);
    }
    let e = LrEntry {
        group1: true,
        ..entry()
    };
    assert_eq!(v2::encode(&e), 1 << 30);
}

#[test]
fn v2_round_trip() {
    let e = LrEntry {
        vintid: 27,
        pintid: Some(30),
        priority: 0xa0,
        group1: true,
        state: LrState::PendingActive,
        source_cpu: 0,
        eoi_maint: false,
    };
    assert_eq!(v2::decode(v2::encode(&e)), e);
    let e = LrEntry {
        vintid: 3,
        pintid: None,
        priority: 0x08,
        group1: false,
        state: LrState::Pending,
        source_cpu: 6,
        eoi_maint: true,
    };
    assert_eq!(v2::decode(v2::encode(&e)), e);
    // Bits [22:20] are reserved and dropped.
    assert_eq!(v2::encode(&v2::decode(0xffff_ffff)), 0xff8f_ffff);
}

#[test]
fn v3_fields() {
    let e = LrEntry {
        vintid: 0xffff_ffff,
        ..entry()
    };
    assert_eq!(v3::encode(&e), 0xffff_ffff, "vINTID [31:0]");
    let e = LrEntry {
        pintid: Some(0x1fff),
        ..entry()
    };
    assert_eq!(
        v3::encode(&e),
        (1 << 61) | (0x1fff << 32),
        "HW + pINTID [44:32]"
    );
    let e = LrEntry {
        eoi_maint: true,
        ..entry()
    };
    assert_eq!(v3::encode(&e), 1 << 41, "EOI [41]");
    let e = LrEntry {
        priority: 0xab,
        ..entry()
    };
    assert_eq!(v3::encode(&e), 0xab << 48, "Priority [55:48]");
    let e = LrEntry {
        group1: true,
        ..entry()
    };
    assert_eq!(v3::encode(&e), 1 << 60, "Group [60]");
    let e = LrEntry {
        source_cpu: 3,
        ..entry()
    };
    assert_eq!(v3::encode(&e), 0, "no source CPU in GICv3");
    for (s, bits) in [
        (LrState::Pending, 1u64),
        (LrState::Active, 2),
        (LrState::PendingActive, 3),
    ] {
        let e = LrEntry {
            state: s,
            ..entry()
        };
        assert_eq!(v3::encode(&e), bits << 62);
        assert_eq!(v3::decode(bits << 62).state, s);
    }
    // With HW set, bit 41 belongs to pINTID, not EOI.
    let d = v3::decode((1 << 61) | (1 << 41) | (27 << 32) | 27);
    assert_eq!((d.pintid, d.eoi_maint), (Some(512 + 27), false));
    let d = v3::decode((1 << 41) | 27);
    assert_eq!((d.pintid, d.eoi_maint), (None, true));
}

#[test]
fn v3_round_trip() {
    let e = LrEntry {
        vintid: 8191,
        pintid: Some(8000),
        priority: 0x13,
        group1: true,
        state: LrState::Active,
        source_cpu: 0,
        eoi_maint: false,
    };
    assert_eq!(v3::decode(v3::encode(&e)), e);
}

/// A fake GICH frame in memory.
#[repr(C, align(4096))]
struct Frame([u32; 0x200 / 4]);

#[test]
fn gich_backend_over_memory() {
    let frame = Box::leak(Box::new(Frame([0; 0x80])));
    frame.0[1] = 3 | (4 << 26) | (4 << 29); // VTR: 4 LRs
    frame.0[0x30 / 4] = 0b1010; // ELRSR0
    frame.0[0x20 / 4] = 0b0100; // EISR0
    frame.0[0x10 / 4] = 0b1; // MISR
    let base = frame as *mut Frame as usize;
    // SAFETY: `frame` is a leaked, suitably aligned 0x200-byte block used only here.
    let mut b = unsafe { GichBackend::new(base) };
    assert_eq!(b.num_lrs(), 4);
    assert_eq!(b.empty_mask(), 0b1010);
    assert_eq!(b.eoi_mask(), 0b0100);
    assert_eq!(b.misr(), 1);
    let e = LrEntry {
        vintid: 33,
        priority: 0x80,
        state: LrState::Pending,
        group1: true,
        ..entry()
    };
    b.write_lr(2, e);
    b.write_lr(9, e); // out of range: ignored
    assert_eq!(b.read_lr(2), e);
    b.set_enabled(true);
    b.set_maintenance(true, false);
    let frame = unsafe { &*(base as *const Frame) };
    assert_eq!(frame.0[0x100 / 4 + 2], v2::encode(&e));
    assert_eq!(frame.0[0], 0b011, "HCR En + UIE");
    b.set_maintenance(false, true);
    assert_eq!(frame.0[0], 0b1001, "HCR En + NPIE");
    let mut st = VcpuIfState {
        used_lrs: 3,
        ..Default::default()
    };
    unsafe { (*(base as *mut Frame)).0[2] = 0xdead_beef };
    b.save(&mut st);
    assert_eq!(st.vmcr, 0xdead_beef);
    assert_eq!(st.lrs[2], u64::from(v2::encode(&e)));
    b.reset();
    assert_eq!(b.read_lr(2), LrEntry::EMPTY);
    b.restore(&st);
    assert_eq!(b.read_lr(2), e);
}
