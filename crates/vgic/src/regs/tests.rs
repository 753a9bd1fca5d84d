//! The register tables themselves: names, order, and the architectural offsets.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use super::table::Frame;
use super::table::{row_at, Region, W32, W64, W8};
use super::v2::{GICD_V2, GICD_V2_ROWS};
use super::v3::{GICD_V3, GICD_V3_ROWS, GICR_RD, GICR_RD_ROWS, GICR_SGI, GICR_SGI_ROWS};
use crate::{GicVersion, Vgic, VgicConfig, VgicError, GICR_FRAME_SIZE, GICR_SGI_BASE};

/// Every table with the prefix its rows' names must have and the size of its frame.
const TABLES: [(&str, &[Region], &str, u64); 4] = [
    ("GICD_V2", GICD_V2_ROWS, "GICD_", 0x1000),
    ("GICD_V3", GICD_V3_ROWS, "GICD_", 0x1_0000),
    ("GICR_RD", GICR_RD_ROWS, "GICR_", GICR_SGI_BASE),
    (
        "GICR_SGI",
        GICR_SGI_ROWS,
        "GICR_",
        GICR_FRAME_SIZE - GICR_SGI_BASE,
    ),
];

/// The frames of [`TABLES`], in the same order.
fn frames() -> [&'static Frame; 4] {
    [&GICD_V2, &GICD_V3, &GICR_RD, &GICR_SGI]
}

/// Each frame's word index names, for every word of the frame, the row the binary search
/// finds (none for a reserved word), and covers exactly the frame.
#[test]
fn word_index_matches_the_rows() {
    for ((table, rows, _, frame), f) in TABLES.into_iter().zip(frames()) {
        let names = |rows: &[Region]| rows.iter().map(|r| (r.name, r.offset)).collect::<Vec<_>>();
        assert_eq!(names(f.rows), names(rows), "{table}");
        assert_eq!(f.index.len() as u64 * 4, frame, "{table}");
        for w in 0..frame / 4 {
            let by_index = match f.index[w as usize] {
                0 => None,
                n => Some(rows[usize::from(n) - 1].name),
            };
            for off in w * 4..w * 4 + 4 {
                assert_eq!(
                    by_index,
                    row_at(rows, off).map(|r| r.name),
                    "{table} {off:#x}"
                );
            }
        }
    }
}

#[test]
fn rows_are_named_sorted_and_disjoint() {
    for (table, rows, prefix, frame) in TABLES {
        assert!(!rows.is_empty(), "{table}");
        for r in rows {
            let at = format!("{table} row {} at {:#x}", r.name, r.offset);
            assert!(r.name.len() > prefix.len(), "{at}: empty name");
            assert!(r.name.starts_with(prefix), "{at}: not {prefix}*");
            assert!(
                r.name[prefix.len()..]
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'),
                "{at}: not an architectural name"
            );
            assert!(
                r.offset < r.end && r.end <= frame,
                "{at}: outside the frame"
            );
            assert!(r.base <= r.offset, "{at}: argument base after the row");
            assert!(
                r.widths != 0 && r.widths & !(W8 | W32 | W64) == 0,
                "{at}: widths"
            );
            // A per-interrupt row is whole registers of whole fields.
            if r.bpi != 0 {
                assert!(matches!(r.bpi, 1 | 2 | 8), "{at}: bits per interrupt");
                assert_eq!((r.end - r.offset) % 4, 0, "{at}: partial register");
            }
        }
        for w in rows.windows(2) {
            assert!(
                w[0].end <= w[1].offset,
                "{table}: {} ({:#x}..{:#x}) overlaps or precedes {} ({:#x})",
                w[0].name,
                w[0].offset,
                w[0].end,
                w[1].name,
                w[1].offset
            );
        }
        let mut names: Vec<&str> = rows.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), rows.len(), "{table}: a name used twice");
    }
}

/// The lookup finds every byte of every row, and nothing between rows.
#[test]
fn lookup_finds_each_row() {
    for (table, rows, _, frame) in TABLES {
        let mut next = 0;
        for r in rows {
            for off in next..r.offset {
                assert!(row_at(rows, off).is_none(), "{table}: {off:#x} is reserved");
            }
            for off in [r.offset, r.end - 1, (r.offset + r.end) / 2] {
                assert_eq!(row_at(rows, off).map(|r| r.name), Some(r.name), "{table}");
            }
            next = r.end;
        }
        assert!(row_at(rows, frame).is_none() && row_at(rows, u64::MAX).is_none());
    }
}

fn offset_of(rows: &[Region], name: &str) -> Option<u64> {
    rows.iter().find(|r| r.name == name).map(|r| r.offset)
}

/// Name/offset pairs of IHI 0048B (GICv2) and IHI 0069 (GICv3).
#[test]
fn well_known_offsets() {
    let gicd_common = [
        ("GICD_CTLR", 0x000),
        ("GICD_TYPER", 0x004),
        ("GICD_IIDR", 0x008),
        ("GICD_IGROUPR", 0x080),
        ("GICD_ISENABLER", 0x100),
        ("GICD_ICENABLER", 0x180),
        ("GICD_ISPENDR", 0x200),
        ("GICD_ICPENDR", 0x280),
        ("GICD_ISACTIVER", 0x300),
        ("GICD_ICACTIVER", 0x380),
        ("GICD_IPRIORITYR", 0x400),
        ("GICD_ICFGR", 0xc00),
        ("GICD_NSACR", 0xe00),
    ];
    for (name, off) in gicd_common {
        assert_eq!(offset_of(GICD_V2_ROWS, name), Some(off), "v2 {name}");
        assert_eq!(offset_of(GICD_V3_ROWS, name), Some(off), "v3 {name}");
    }
    for (name, off) in [
        ("GICD_ITARGETSR", 0x800),
        ("GICD_SGIR", 0xf00),
        ("GICD_CPENDSGIR", 0xf10),
        ("GICD_SPENDSGIR", 0xf20),
        ("GICD_PIDR2", 0xfe8),
    ] {
        assert_eq!(offset_of(GICD_V2_ROWS, name), Some(off), "v2 {name}");
    }
    for (name, off) in [
        ("GICD_TYPER2", 0x000c),
        ("GICD_STATUSR", 0x0010),
        ("GICD_IGRPMODR", 0x0d00),
        ("GICD_IROUTER", 0x6000),
        ("GICD_PIDR2", 0xffe8),
    ] {
        assert_eq!(offset_of(GICD_V3_ROWS, name), Some(off), "v3 {name}");
    }
    for (name, off) in [
        ("GICR_CTLR", 0x0000),
        ("GICR_IIDR", 0x0004),
        ("GICR_TYPER", 0x0008),
        ("GICR_STATUSR", 0x0010),
        ("GICR_WAKER", 0x0014),
        ("GICR_PROPBASER", 0x0070),
        ("GICR_PENDBASER", 0x0078),
        ("GICR_PIDR2", 0xffe8),
    ] {
        assert_eq!(offset_of(GICR_RD_ROWS, name), Some(off), "RD_base {name}");
    }
    // SGI_base offsets as the specification gives them; GICR_ISENABLER0 is RD_base + 0x10100.
    for (name, off) in [
        ("GICR_IGROUPR0", 0x0080),
        ("GICR_ISENABLER0", 0x0100),
        ("GICR_ICENABLER0", 0x0180),
        ("GICR_ISPENDR0", 0x0200),
        ("GICR_ICPENDR0", 0x0280),
        ("GICR_ISACTIVER0", 0x0300),
        ("GICR_ICACTIVER0", 0x0380),
        ("GICR_IPRIORITYR", 0x0400),
        ("GICR_ICFGR0", 0x0c00),
        ("GICR_ICFGR1", 0x0c04),
        ("GICR_IGRPMODR0", 0x0d00),
        ("GICR_NSACR", 0x0e00),
    ] {
        assert_eq!(offset_of(GICR_SGI_ROWS, name), Some(off), "SGI_base {name}");
    }
    assert_eq!(
        GICR_SGI_BASE + offset_of(GICR_SGI_ROWS, "GICR_ISENABLER0").unwrap(),
        0x1_0100
    );
    // The public constants agree.
    use crate::offsets::{gicd_v2, gicd_v3, gicr};
    assert_eq!(gicd_v2::GICD_ISENABLER, 0x100);
    assert_eq!(gicd_v2::GICD_ITARGETSR, 0x800);
    assert_eq!(gicd_v2::GICD_SGIR, 0xf00);
    assert_eq!(gicd_v3::GICD_IROUTER, 0x6000);
    assert_eq!(gicr::GICR_WAKER, 0x14);
    assert_eq!(gicr::GICR_SGI_BASE + gicr::GICR_ISENABLER0, 0x1_0100);
}

/// Access errors name the register, by the same name as the row.
#[test]
fn errors_name_the_register() {
    let mk = |version| {
        Vgic::new(VgicConfig {
            version,
            vcpu_mpidrs: vec![0, 1],
            nr_spis: 64,
        })
        .unwrap()
    };
    let mut v2 = mk(GicVersion::V2);
    let e = v2.gicd_read(0, 0x104, 1).unwrap_err();
    assert_eq!(
        e,
        VgicError::BadWidth {
            offset: 0x104,
            size: 1,
            register: Some("GICD_ISENABLER")
        }
    );
    assert_eq!(
        format!("{e}"),
        "1-byte access not allowed at offset 0x104 (GICD_ISENABLER)"
    );
    let e = v2.gicd_write(0, 0xf02, 4, 0).unwrap_err();
    assert_eq!(
        e,
        VgicError::Misaligned {
            offset: 0xf02,
            size: 4,
            register: Some("GICD_SGIR")
        }
    );
    assert_eq!(
        format!("{e}"),
        "misaligned 4-byte access at offset 0xf02 (GICD_SGIR)"
    );
    // Width 3 in a register; misaligned in a reserved hole: no name.
    assert!(matches!(
        v2.gicd_read(0, 0x000, 3),
        Err(VgicError::BadWidth {
            register: Some("GICD_CTLR"),
            ..
        })
    ));
    let e = v2.gicd_read(0, 0x042, 4).unwrap_err();
    assert!(matches!(e, VgicError::Misaligned { register: None, .. }));
    assert_eq!(format!("{e}"), "misaligned 4-byte access at offset 0x42");

    let mut v3 = mk(GicVersion::V3);
    assert!(matches!(
        v3.gicd_read(0, 0x6004, 8),
        Err(VgicError::Misaligned {
            register: Some("GICD_IROUTER"),
            ..
        })
    ));
    // Redistributor errors carry the offset in the whole region and the frame's name.
    let sgi = GICR_FRAME_SIZE + GICR_SGI_BASE;
    assert_eq!(
        v3.gicr_read(0, sgi + 0x100, 8),
        Err(VgicError::BadWidth {
            offset: sgi + 0x100,
            size: 8,
            register: Some("GICR_ISENABLER0")
        })
    );
    assert_eq!(
        v3.gicr_write(1, GICR_FRAME_SIZE + 0x14, 1, 0),
        Err(VgicError::BadWidth {
            offset: GICR_FRAME_SIZE + 0x14,
            size: 1,
            register: Some("GICR_WAKER")
        })
    );
    assert_eq!(
        v3.gicr_read(0, sgi + 0x1000, 4),
        Err(VgicError::Reserved {
            offset: sgi + 0x1000
        })
    );
}

/// Rows that continue an array (`GICR_ICFGR1`, the ID registers) see the right fields.
#[test]
fn rows_continuing_an_array() {
    let mut v = Vgic::new(VgicConfig {
        version: GicVersion::V3,
        vcpu_mpidrs: vec![0],
        nr_spis: 32,
    })
    .unwrap();
    let icfgr1 = GICR_SGI_BASE + 0xc04;
    v.gicr_write(0, icfgr1, 4, 2 << ((27 - 16) * 2)).unwrap();
    assert_eq!(v.gicr_read(0, icfgr1, 4), Ok(2 << ((27 - 16) * 2)));
    assert_eq!(v.gicr_read(0, GICR_SGI_BASE + 0xc00, 4), Ok(0xaaaa_aaaa));
    for (off, val) in [
        (0xffd0, 0x04),
        (0xffe8, 0x3b),
        (0xfff0, 0x0d),
        (0xfffc, 0xb1),
    ] {
        assert_eq!(v.gicd_read(0, off, 4), Ok(val), "GICD {off:#x}");
        assert_eq!(v.gicr_read(0, off, 4), Ok(val), "GICR {off:#x}");
        assert_eq!(v.gicr_read(0, GICR_SGI_BASE + off, 4), Ok(val));
    }
    let mut v = Vgic::new(VgicConfig {
        version: GicVersion::V2,
        vcpu_mpidrs: vec![0],
        nr_spis: 32,
    })
    .unwrap();
    for (off, val) in [(0xfd0, 0x04), (0xfe0, 0x90), (0xfe8, 0x2b), (0xffc, 0xb1)] {
        assert_eq!(v.gicd_read(0, off, 4), Ok(val), "GICD {off:#x}");
    }
}

/// A register read changes no interrupt state: reading every word of every frame, with
/// interrupts pending, enabled and targeted, leaves the kick set empty (the hypervisor's
/// MMIO read path relies on it and takes no kicks after a read).
#[test]
fn reads_never_kick() {
    for version in [GicVersion::V2, GicVersion::V3] {
        let mut v = Vgic::new(VgicConfig {
            version,
            vcpu_mpidrs: vec![0, 1],
            nr_spis: 64,
        })
        .unwrap();
        let (enable, pend) = (0x100, 0x200);
        // SPIs 32..63 enabled and pending (and, on GICv3, the SGIs/PPIs of vCPU 1).
        v.gicd_write(0, 0x000, 4, 3).unwrap();
        if version == GicVersion::V2 {
            // GICD_ITARGETSR8..15: SPIs 32..63 to CPU 0.
            for n in 8..16 {
                v.gicd_write(0, 0x800 + 4 * n, 4, 0x0101_0101).unwrap();
            }
        }
        v.gicd_write(0, enable + 4, 4, 0xffff_ffff).unwrap();
        v.gicd_write(0, pend + 4, 4, 0xffff_ffff).unwrap();
        if version == GicVersion::V3 {
            let sgi = crate::GICR_FRAME_SIZE + GICR_SGI_BASE;
            v.gicr_write(1, sgi + enable, 4, 0xffff_ffff).unwrap();
            v.gicr_write(1, sgi + pend, 4, 0xffff_ffff).unwrap();
        }
        // The writes did make interrupts deliverable (so a read that re-evaluated them
        // would kick).
        assert!(v.has_kicks(), "{version:?}: the setup kicked nobody");
        let _ = v.take_kicks();
        let frame = if version == GicVersion::V2 {
            0x1000
        } else {
            0x1_0000
        };
        for off in (0..frame).step_by(4) {
            let _ = v.gicd_read(1, off, 4);
        }
        if version == GicVersion::V3 {
            for off in (0..2 * crate::GICR_FRAME_SIZE).step_by(4) {
                let _ = v.gicr_read(0, off, 4);
            }
        }
        assert!(!v.has_kicks(), "{version:?}: a read left a kick");
    }
}

/// The lean reads ([`Vgic::gicd_read_lean`], [`Vgic::gicr_read_lean`]) answer exactly the
/// common access, an aligned 32-bit read that the full read completes, with the full read's
/// value, and leave every other access (other widths, misaligned, reserved, a vCPU or
/// redistributor frame that does not exist) to the full read without counting anything.
#[test]
fn lean_reads_answer_as_the_full_reads() {
    for version in [GicVersion::V2, GicVersion::V3] {
        let mut v = Vgic::new(VgicConfig {
            version,
            vcpu_mpidrs: vec![0, 1],
            nr_spis: 64,
        })
        .unwrap();
        // Some state, so that reads are not all zero: enabled, pending, prioritised SPIs.
        v.gicd_write(0, 0x000, 4, 3).unwrap();
        v.gicd_write(0, 0x104, 4, 0x0f0f_0f0f).unwrap();
        v.gicd_write(0, 0x204, 4, 0x00ff_00ff).unwrap();
        v.gicd_write(0, 0x420, 4, 0x1020_3040).unwrap();
        let (gicd_frame, gicr_span) = match version {
            GicVersion::V2 => (0x1000, 0),
            // Two frames and the one beyond the last vCPU's.
            GicVersion::V3 => (0x1_0000, 3 * GICR_FRAME_SIZE),
        };
        let mut lean_answers = 0;
        for vcpu in 0..3 {
            for size in [1, 2, 4, 8] {
                for off in (0..gicd_frame).step_by(2) {
                    let reserved = v.stats.reserved_accesses;
                    let lean = v.gicd_read_lean(vcpu, off, size);
                    assert_eq!(v.stats.reserved_accesses, reserved, "GICD {off:#x}");
                    let full = v.gicd_read(vcpu, off, size);
                    check_lean(lean, full, off, size, &mut lean_answers);
                }
                for off in (0..gicr_span).step_by(2) {
                    let reserved = v.stats.reserved_accesses;
                    let lean = v.gicr_read_lean(vcpu, off, size);
                    assert_eq!(v.stats.reserved_accesses, reserved, "GICR {off:#x}");
                    let full = v.gicr_read(vcpu, off, size);
                    check_lean(lean, full, off, size, &mut lean_answers);
                }
            }
        }
        assert!(
            lean_answers > 100,
            "{version:?}: the lean path answered nothing"
        );
    }
    // A GICv2 vGIC has no redistributors: the lean read leaves that to the full read's error.
    let mut v2 = Vgic::new(VgicConfig {
        version: GicVersion::V2,
        vcpu_mpidrs: vec![0],
        nr_spis: 32,
    })
    .unwrap();
    assert_eq!(v2.gicr_read_lean(0, 0x8, 4), None);
    assert_eq!(v2.gicr_read(0, 0x8, 4), Err(VgicError::WrongVersion));
}

/// One access of [`lean_reads_answer_as_the_full_reads`]: the lean read answers if and only
/// if it is an aligned word the full read completes, and then with its value.
fn check_lean(lean: Option<u64>, full: Result<u64, VgicError>, off: u64, size: u8, n: &mut u32) {
    let common = size == 4 && off.is_multiple_of(4) && full.is_ok();
    assert_eq!(
        lean.is_some(),
        common,
        "{off:#x} size {size}: {lean:?} vs {full:?}"
    );
    if let Some(value) = lean {
        assert_eq!(Ok(value), full, "{off:#x}");
        *n += 1;
    }
}
