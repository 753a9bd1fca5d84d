//! Host tests of the exit decoder over hand-built `ESR_EL2` values.
//!
//! Every vector is derived from the Arm ARM field layout: `EC << 26 | IL << 25 | ISS`.
//! With IL = 1 (A64 instruction) the top byte contributes `EC << 26 | 1 << 25`, e.g.
//! EC 0x24 -> 0x9000_0000 | 0x0200_0000 = 0x9200_0000.

use super::*;

fn info(esr: u64) -> ExitInfo {
    ExitInfo {
        esr,
        far: 0,
        hpfar: 0,
    }
}

#[test]
fn wfi_wfe_from_aarch64() {
    // EC 0x01 -> 0x0400_0000, IL -> 0x0200_0000; from AArch64 CV = 1 (bit 24) and
    // COND = 0xE (bits [23:20]) -> 0x01E0_0000. TI = 0 (WFI) / 1 (WFE).
    assert_eq!(decode(&info(0x07E0_0000)), Exit::Wfi);
    assert_eq!(decode(&info(0x07E0_0001)), Exit::Wfe);
    // WFIT x3: TI = 0b10, RV = 1 (bit 2), Rn = 3 (bits [9:5] -> 0x60): 0x07E0_0066.
    assert_eq!(
        decode(&info(0x07E0_0066)),
        Exit::WfxTimeout {
            kind: WaitKind::Wfit,
            reg: Some(3)
        }
    );
    // WFET with RV = 0: TI = 0b11.
    assert_eq!(
        decode(&info(0x07E0_0003)),
        Exit::WfxTimeout {
            kind: WaitKind::Wfet,
            reg: None
        }
    );
}

#[test]
fn hvc_and_smc() {
    // HVC #0: EC 0x16 -> 0x16 << 26 = 0x5800_0000, | IL = 0x5A00_0000.
    assert_eq!(decode(&info(0x5A00_0000)), Exit::Hvc { imm: 0 });
    // HVC #0x1234: imm16 in ISS[15:0].
    assert_eq!(decode(&info(0x5A00_1234)), Exit::Hvc { imm: 0x1234 });
    // SMC #0: EC 0x17 -> 0x5C00_0000 | IL = 0x5E00_0000.
    assert_eq!(decode(&info(0x5E00_0000)), Exit::Smc { imm: 0 });
    // AArch32 HVC #5: EC 0x12 -> 0x4800_0000 | IL = 0x4A00_0005.
    assert_eq!(decode(&info(0x4A00_0005)), Exit::Hvc32 { imm: 5 });
    // AArch32 SMC: EC 0x13 -> 0x4C00_0000 | IL.
    assert_eq!(decode(&info(0x4E00_0000)), Exit::Smc32);
    assert_eq!(info(0x5E00_0000).instruction_len(), 4);
}

#[test]
fn mrs_id_aa64mmfr0() {
    // mrs x3, ID_AA64MMFR0_EL1 (op0=3 op1=0 CRn=0 CRm=7 op2=0), read:
    // Op0 3 << 20 = 0x30_0000; Rt 3 << 5 = 0x60; CRm 7 << 1 = 0xE; Dir = 1.
    // ISS = 0x30_006F; EC 0x18 -> 0x6000_0000 | IL = 0x6230_006F.
    let exit = decode(&info(0x6230_006F));
    let Exit::SysReg(access) = exit else {
        panic!("{exit:?}")
    };
    assert_eq!(
        access,
        SysRegAccess {
            op0: 3,
            op1: 0,
            crn: 0,
            crm: 7,
            op2: 0,
            rt: 3,
            is_read: true
        }
    );
    assert_eq!(access.encoding(), regs::ID_AA64MMFR0_EL1);
    assert_eq!(access.name(), Some("ID_AA64MMFR0_EL1"));
}

#[test]
fn msr_icc_sgi1r() {
    // msr ICC_SGI1R_EL1, x1 (op0=3 op1=0 CRn=12 CRm=11 op2=5), write:
    // 3 << 20 = 0x30_0000; op2 5 << 17 = 0xA_0000; CRn 12 << 10 = 0x3000; Rt 1 << 5 = 0x20;
    // CRm 11 << 1 = 0x16; Dir 0. ISS = 0x3A_3036 -> ESR 0x623A_3036.
    let Exit::SysReg(access) = decode(&info(0x623A_3036)) else {
        panic!()
    };
    assert_eq!((access.op0, access.op1, access.crn), (3, 0, 12));
    assert_eq!((access.crm, access.op2, access.rt), (11, 5, 1));
    assert!(!access.is_read);
    assert_eq!(access.encoding(), regs::ICC_SGI1R_EL1);
    // Linux sys_reg(3,0,12,11,5) = 3<<19 | 12<<12 | 11<<8 | 5<<5 = 0x18CBA0.
    assert_eq!(regs::ICC_SGI1R_EL1, 0x18_CBA0);
}

#[test]
fn unknown_sysreg_has_no_name() {
    // op0=3 op1=7 CRn=15 CRm=15 op2=7 (IMPLEMENTATION DEFINED space), Rt=31, read.
    let iss = (3 << 20) | (7 << 17) | (7 << 14) | (15 << 10) | (31 << 5) | (15 << 1) | 1;
    let Exit::SysReg(access) = decode(&info((0x18 << 26) | (1 << 25) | iss)) else {
        panic!()
    };
    assert_eq!(access.rt, 31);
    assert_eq!(access.name(), None);
}

#[test]
fn data_abort_ldr_w1() {
    // ldr w1, [x0] to an unmapped IPA, stage-2 translation fault at level 2:
    // EC 0x24 + IL = 0x9200_0000; ISV (bit 24) 0x0100_0000; SAS = 2 (word, bits [23:22])
    // 0x0080_0000; SRT = 1 (bits [20:16]) 0x0001_0000; DFSC = 0b000110 (translation L2) 0x06.
    // ESR = 0x9381_0006.
    let ex = ExitInfo {
        esr: 0x9381_0006,
        far: 0xffff_0000_0900_0018,
        // IPA 0x0900_0018: FIPA = IPA >> 12 = 0x9000, stored at bits [47:4] -> 0x9_0000.
        hpfar: 0x9_0000,
    };
    let Exit::DataAbort(da) = decode(&ex) else {
        panic!()
    };
    assert!(da.isv);
    assert_eq!(da.sas, 2);
    assert_eq!(da.access_bytes(), 4);
    assert_eq!(da.srt, 1);
    assert!(!da.sse && !da.sf && !da.ar && !da.wnr);
    assert!(!da.s1ptw && !da.fnv && !da.ea && !da.cm);
    assert_eq!(da.ipa, 0x0900_0018);
    assert_eq!(da.status, FaultStatus::Translation { level: 2 });
}

#[test]
fn data_abort_str_x2() {
    // str x2, [x3]: SAS = 3 -> 0x00C0_0000; SRT = 2 -> 0x0002_0000; SF (bit 15) 0x8000;
    // WnR (bit 6) 0x40; DFSC 0x07 (translation L3).
    // 0x9200_0000 | 0x0100_0000 | 0x00C0_0000 | 0x0002_0000 | 0x8000 | 0x40 | 0x07 = 0x93C2_8047.
    let Exit::DataAbort(da) = decode(&info(0x93C2_8047)) else {
        panic!()
    };
    assert!(da.isv && da.sf && da.wnr);
    assert_eq!((da.sas, da.srt), (3, 2));
    assert_eq!(da.status, FaultStatus::Translation { level: 3 });
}

#[test]
fn data_abort_ldrsb_and_stlr() {
    // ldrsb x5, [x0]: SAS 0, SSE (bit 21) 0x0020_0000, SRT 5 -> 0x0005_0000, SF 0x8000,
    // DFSC 0x06: 0x9300_0000 | 0x0020_0000 | 0x0005_0000 | 0x8000 | 0x06 = 0x9325_8006.
    let Exit::DataAbort(da) = decode(&info(0x9325_8006)) else {
        panic!()
    };
    assert!(da.sse && da.sf);
    assert_eq!((da.sas, da.srt), (0, 5));
    // stlr w4, [x0]: SAS 2, SRT 4 -> 0x0004_0000, AR (bit 14) 0x4000, WnR 0x40, DFSC 0x05:
    // 0x9300_0000 | 0x0080_0000 | 0x0004_0000 | 0x4000 | 0x40 | 0x05 = 0x9384_4045.
    let Exit::DataAbort(da) = decode(&info(0x9384_4045)) else {
        panic!()
    };
    assert!(da.ar && da.wnr && !da.sf);
    assert_eq!(da.status, FaultStatus::Translation { level: 1 });
}

#[test]
fn data_abort_without_isv_and_flags() {
    // ldp x0, x1, [x2]: ISV = 0; S1PTW (bit 7) 0x80, FnV (bit 10) 0x400, EA (bit 9) 0x200,
    // CM (bit 8) 0x100, DFSC 0x10 (sync external abort): 0x9200_0790.
    let Exit::DataAbort(da) = decode(&info(0x9200_0790)) else {
        panic!()
    };
    assert!(!da.isv && da.s1ptw && da.fnv && da.ea && da.cm);
    assert_eq!(da.status, FaultStatus::SyncExternal);
    assert!(da.status.is_external());
}

#[test]
fn ipa_uses_fipa_bits_47_4() {
    // 52-bit IPA 0xF_1234_5678_9ABC: FIPA = IPA >> 12 = 0xF_1234_5678_9, at bits [47:4]
    // -> 0xF_1234_5678_90; NS (bit 63) must be ignored.
    let ex = ExitInfo {
        esr: 0x9381_0006,
        far: 0xABC,
        hpfar: (1 << 63) | ((0xF_1234_5678_9ABC >> 12) << 4),
    };
    let Exit::DataAbort(da) = decode(&ex) else {
        panic!()
    };
    assert_eq!(da.ipa, 0xF_1234_5678_9ABC);
}

#[test]
fn instruction_abort() {
    // EC 0x20 -> 0x8000_0000 | IL 0x0200_0000; S1PTW 0x80; IFSC 0x0F (permission L3).
    let ex = ExitInfo {
        esr: 0x8200_008F,
        far: 0x1234,
        hpfar: 0x40_0000,
    };
    let Exit::InstructionAbort(ia) = decode(&ex) else {
        panic!()
    };
    assert!(ia.s1ptw && !ia.fnv);
    assert_eq!(ia.status, FaultStatus::Permission { level: 3 });
    assert_eq!(ia.ipa, 0x4000_0234);
}

#[test]
fn fault_status_table() {
    use FaultStatus::*;
    let cases = [
        (0x00, AddressSize { level: 0 }),
        (0x07, Translation { level: 3 }),
        (0x09, AccessFlag { level: 1 }),
        (0x0D, Permission { level: 1 }),
        (0x10, SyncExternal),
        (0x11, TagCheck),
        (0x13, SyncExternalOnWalk { level: -1 }),
        (0x15, SyncExternalOnWalk { level: 1 }),
        (0x18, SyncParity),
        (0x1F, SyncParityOnWalk { level: 3 }),
        (0x21, Alignment),
        (0x28, GranuleProtection),
        (0x26, GranuleProtectionOnWalk { level: 2 }),
        (0x29, AddressSize { level: -1 }),
        (0x2B, Translation { level: -1 }),
        (0x30, TlbConflict),
        (0x31, UnsupportedAtomicUpdate),
        (0x34, ImplementationDefined(0x34)),
        (0x3F, Reserved(0x3F)),
        (0x12, Reserved(0x12)),
    ];
    for (code, want) in cases {
        assert_eq!(FaultStatus::from_code(code), want, "code {code:#x}");
    }
}

#[test]
fn misc_classes() {
    // FP/SIMD: EC 0x07 -> 0x1C00_0000 | IL = 0x1E00_0000.
    assert_eq!(decode(&info(0x1E00_0000)), Exit::FpSimdAccess);
    // SVE: EC 0x19 -> 0x6400_0000 | IL.
    assert_eq!(decode(&info(0x6600_0000)), Exit::Sve);
    // Illegal execution state: EC 0x0E -> 0x3800_0000 | IL.
    assert_eq!(decode(&info(0x3A00_0000)), Exit::IllegalState);
    // BRK #0x3e8: EC 0x3C -> 0xF000_0000 | IL 0x0200_0000 | 0x3E8.
    assert_eq!(decode(&info(0xF200_03E8)), Exit::Brk { imm: 0x3E8 });
    // PC alignment: EC 0x22 -> 0x8800_0000 | IL.
    let ex = ExitInfo {
        esr: 0x8A00_0000,
        far: 0x4000_0002,
        hpfar: 0,
    };
    assert_eq!(decode(&ex), Exit::PcAlignment { far: 0x4000_0002 });
    // SP alignment: EC 0x26 -> 0x9800_0000 | IL.
    assert_eq!(decode(&info(0x9A00_0000)), Exit::SpAlignment);
    // SError: EC 0x2F -> 0xBC00_0000 | IL; ISS 0x11 (IDS = 0, AET/DFSC bits).
    assert_eq!(decode(&info(0xBE00_0011)), Exit::SError { iss: 0x11 });
    // Software step, EX = 1 (bit 6): EC 0x32 -> 0xC800_0000 | IL | 0x40.
    assert_eq!(
        decode(&info(0xCA00_0040)),
        Exit::SoftwareStep { exclusive: true }
    );
    // Breakpoint: EC 0x30 -> 0xC000_0000 | IL.
    assert_eq!(decode(&info(0xC200_0022)), Exit::Breakpoint);
    // Watchpoint, WnR: EC 0x34 -> 0xD000_0000 | IL | 0x40.
    let ex = ExitInfo {
        esr: 0xD200_0062,
        far: 0x8000,
        hpfar: 0,
    };
    assert_eq!(
        decode(&ex),
        Exit::Watchpoint {
            far: 0x8000,
            is_write: true
        }
    );
    // EC 0x00, unknown reason, IL = 1: 0x0200_0000.
    assert_eq!(decode(&info(0x0200_0000)), Exit::Unknown { ec: 0, iss: 0 });
    // A reserved EC (0x3F) with an ISS.
    assert_eq!(
        decode(&info(0xFE00_1234)),
        Exit::Unknown {
            ec: 0x3F,
            iss: 0x1234
        }
    );
}

#[test]
fn aarch32_cp15_mrc_and_mrrc() {
    // mrc p15, 0, r2, c1, c0, 0 (SCTLR read), CV = 1, COND = 0xE:
    // EC 0x03 -> 0x0C00_0000 | IL 0x0200_0000 | CV 0x0100_0000 | COND 0x00E0_0000
    // | CRn 1 << 10 = 0x400 | Rt 2 << 5 = 0x40 | Dir 1 = 0x0FE0_0441.
    let Exit::Cp32(a) = decode(&info(0x0FE0_0441)) else {
        panic!()
    };
    assert_eq!(a.kind, Cp32Kind::Mcr);
    assert_eq!(
        (a.coproc, a.opc1, a.crn, a.crm, a.opc2, a.rt),
        (15, 0, 1, 0, 0, 2)
    );
    assert!(a.is_read);
    assert_eq!(a.cond, Some(0xE));
    // mcrr p15, 1, r4, r5, c14 (write), CV = 0: EC 0x04 -> 0x1000_0000 | IL
    // | Opc1 1 << 16 = 0x1_0000 | Rt2 5 << 10 = 0x1400 | Rt 4 << 5 = 0x80 | CRm 14 << 1 = 0x1C.
    let Exit::Cp32(a) = decode(&info(0x1201_149C)) else {
        panic!()
    };
    assert_eq!(a.kind, Cp32Kind::Mcrr);
    assert_eq!((a.opc1, a.rt, a.rt2, a.crm), (1, 4, 5, 14));
    assert!(!a.is_read);
    assert_eq!(a.cond, None);
}

#[test]
fn decode_never_panics() {
    // Every EC with assorted ISS patterns, a 16-bit instruction (IL = 0) and junk above bit 37.
    for ec in 0u64..64 {
        for iss in [
            0u64, 1, 0x1ff_ffff, 0x155_5555, 0x0aa_aaaa, 0x100_0000, 0x3f,
        ] {
            for hi in [0u64, 0xffff_ffe0_0000_0000, 0x1f_0000_0000] {
                let ex = ExitInfo {
                    esr: hi | (ec << 26) | iss,
                    far: u64::MAX,
                    hpfar: u64::MAX,
                };
                let exit = decode(&ex);
                let _ = exit.reason();
                assert_eq!(ex.instruction_len(), 2);
            }
        }
    }
}
