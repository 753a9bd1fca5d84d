//! `VTCR_EL2` values for several PARange / IPA-limit / VMID-size combinations, computed by
//! hand from the Arm ARM field layout:
//! RES1[31] | VS[19] | PS[18:16] | TG0[15:14]=00 (4K) | SH0[13:12]=11 | ORGN0[11:10]=01 |
//! IRGN0[9:8]=01 | SL0[7:6] | T0SZ[5:0].

use stage2::{Error, Stage2Config};

struct Case {
    parange: u64,
    limit: u32,
    vmid16: bool,
    ipa_bits: u32,
    start_level: u32,
    root_tables: u32,
    vtcr: u64,
}

#[test]
fn vtcr_values() {
    let cases = [
        // 40-bit PA, 40-bit IPA: T0SZ=24 (0x18), SL0=01 (level 1, 0x40), PS=010 (0x20000),
        // 2 concatenated level-1 tables. The familiar KVM value.
        Case {
            parange: 0b0010,
            limit: 40,
            vmid16: false,
            ipa_bits: 40,
            start_level: 1,
            root_tables: 2,
            vtcr: 0x8000_0000 | 0x2_0000 | 0x3500 | 0x40 | 0x18,
        },
        // 48-bit PA and IPA, 16-bit VMIDs: T0SZ=16, SL0=10 (level 0, 0x80), PS=101
        // (0x50000), VS (0x80000).
        Case {
            parange: 0b0101,
            limit: 48,
            vmid16: true,
            ipa_bits: 48,
            start_level: 0,
            root_tables: 1,
            vtcr: 0x8000_0000 | 0x8_0000 | 0x5_0000 | 0x3500 | 0x80 | 0x10,
        },
        // 32-bit PA caps a 40-bit request: T0SZ=32 (0x20), SL0=00 (level 2), PS=000,
        // 4 concatenated level-2 tables.
        Case {
            parange: 0b0000,
            limit: 40,
            vmid16: false,
            ipa_bits: 32,
            start_level: 2,
            root_tables: 4,
            vtcr: 0x8000_0000 | 0x3500 | 0x20,
        },
        // 36-bit PA: T0SZ=28 (0x1c), SL0=01, PS=001 (0x10000), VS: one partial level-1 table.
        Case {
            parange: 0b0001,
            limit: 48,
            vmid16: true,
            ipa_bits: 36,
            start_level: 1,
            root_tables: 1,
            vtcr: 0x8000_0000 | 0x8_0000 | 0x1_0000 | 0x3500 | 0x40 | 0x1c,
        },
        // 52-bit PA is capped to 48 with a 4K granule (PS=101).
        Case {
            parange: 0b0110,
            limit: 52,
            vmid16: true,
            ipa_bits: 48,
            start_level: 0,
            root_tables: 1,
            vtcr: 0x8000_0000 | 0x8_0000 | 0x5_0000 | 0x3500 | 0x80 | 0x10,
        },
        // 48-bit PA, 44-bit IPA: T0SZ=20 (0x14), level 0 (32 of 512 entries used).
        Case {
            parange: 0b0101,
            limit: 44,
            vmid16: false,
            ipa_bits: 44,
            start_level: 0,
            root_tables: 1,
            vtcr: 0x8000_0000 | 0x5_0000 | 0x3500 | 0x80 | 0x14,
        },
        // 44-bit PA, 43-bit IPA: T0SZ=21 (0x15), level 1 with the maximum 16 tables,
        // PS=100 (0x40000).
        Case {
            parange: 0b0100,
            limit: 43,
            vmid16: false,
            ipa_bits: 43,
            start_level: 1,
            root_tables: 16,
            vtcr: 0x8000_0000 | 0x4_0000 | 0x3500 | 0x40 | 0x15,
        },
        // 42-bit PA, 34-bit IPA: T0SZ=30 (0x1e), level 2 with 16 tables, PS=011 (0x30000).
        Case {
            parange: 0b0011,
            limit: 34,
            vmid16: false,
            ipa_bits: 34,
            start_level: 2,
            root_tables: 16,
            vtcr: 0x8000_0000 | 0x3_0000 | 0x3500 | 0x1e,
        },
    ];
    for c in cases {
        let cfg = Stage2Config::new(c.parange, c.limit, c.vmid16).unwrap();
        assert_eq!(
            cfg.ipa_bits(),
            c.ipa_bits,
            "parange {:#b} limit {}",
            c.parange,
            c.limit
        );
        assert_eq!(cfg.start_level(), c.start_level);
        assert_eq!(cfg.root_tables(), c.root_tables);
        assert_eq!(
            cfg.vtcr(),
            c.vtcr,
            "parange {:#b} limit {}: {:#x} != {:#x}",
            c.parange,
            c.limit,
            cfg.vtcr(),
            c.vtcr
        );
        assert_eq!(cfg.vmid_bits(), if c.vmid16 { 16 } else { 8 });
    }
    assert_eq!(
        Stage2Config::new(0b0010, 40, false).unwrap().vtcr(),
        0x8002_3558
    );
}

#[test]
fn from_id_registers() {
    // ID_AA64MMFR0_EL1.PARange = 0b0101; ID_AA64MMFR1_EL1.VMIDBits (bits 7:4) = 0b0010.
    let cfg = Stage2Config::from_id_regs(0x0000_0000_0010_1125, 0x0000_0000_1012_2120, 40).unwrap();
    assert_eq!(cfg.ipa_bits(), 40);
    assert_eq!(cfg.pa_bits(), 48);
    assert_eq!(cfg.vmid_bits(), 16);
    let cfg = Stage2Config::from_id_regs(0x2, 0x0, 48).unwrap();
    assert_eq!((cfg.ipa_bits(), cfg.vmid_bits()), (40, 8));
    assert_eq!(
        Stage2Config::from_id_regs(0xf, 0, 40),
        Err(Error::InvalidPaRange)
    );
}
