//! Encoding classes (ARM ARM chapter A5/A6 groups), used for the decoder coverage report.

macro_rules! classes {
    ($($name:ident = $desc:literal,)*) => {
        /// Encoding class of a decoded instruction.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(missing_docs)]
        #[repr(u8)]
        pub enum Class { $($name,)* }

        impl Class {
            /// Every class, in declaration order.
            pub const ALL: &'static [Class] = &[$(Class::$name,)*];
            /// Number of classes.
            pub const COUNT: usize = Class::ALL.len();
            /// Short description.
            pub fn describe(self) -> &'static str {
                match self { $(Class::$name => $desc,)* }
            }
            /// Variant name.
            pub fn name(self) -> &'static str {
                match self { $(Class::$name => stringify!($name),)* }
            }
            /// A32 (vs T16/T32) class.
            pub fn is_a32(self) -> bool {
                self.name().starts_with("A32")
            }
        }
    };
}

classes! {
    A32DpImm = "data-processing (immediate)",
    A32DpReg = "data-processing (register, shift by immediate)",
    A32DpRsr = "data-processing (register-shifted register)",
    A32DpPc = "data-processing writing PC (branch or exception return)",
    A32MovwMovt = "MOVW/MOVT",
    A32Mul = "MUL/MLA/MLS",
    A32MulLong = "UMULL/UMLAL/SMULL/SMLAL/UMAAL",
    A32MulHalf = "halfword multiply (SMLAxy, SMLAWy, SMULWy, SMLALxy, SMULxy)",
    A32SignedMul = "signed multiplies (SMLAD..SMMLS)",
    A32Div = "SDIV/UDIV",
    A32Swp = "SWP/SWPB",
    A32Exclusive = "LDREX*/STREX*",
    A32ExtraLdSt = "extra load/store (halfword, signed byte, dual)",
    A32ExtraLdStT = "extra load/store unprivileged (LDRHT, STRHT, LDRSBT, LDRSHT)",
    A32LdStImm = "LDR/STR/LDRB/STRB (immediate)",
    A32LdStReg = "LDR/STR/LDRB/STRB (register)",
    A32LdStT = "LDRT/STRT/LDRBT/STRBT",
    A32Parallel = "parallel add/subtract",
    A32PackSat = "packing, unpacking, saturation, reversal",
    A32Usad = "USAD8/USADA8",
    A32Bitfield = "SBFX/UBFX/BFI/BFC",
    A32Udf = "UDF (permanently undefined)",
    A32LdmStm = "LDM/STM",
    A32LdmStmUser = "LDM/STM user registers",
    A32LdmExcRet = "LDM exception return",
    A32Branch = "B/BL",
    A32BlxImm = "BLX (immediate)",
    A32Status = "MRS/MSR (register)",
    A32Banked = "MRS/MSR (banked register)",
    A32MsrImm = "MSR (immediate)",
    A32BxBlx = "BX/BLX (register)/BXJ",
    A32Clz = "CLZ",
    A32Saturating = "QADD/QSUB/QDADD/QDSUB",
    A32Eret = "ERET",
    A32Bkpt = "BKPT",
    A32HvcSmc = "HVC/SMC",
    A32Hint = "hints (NOP, YIELD, WFE, WFI, SEV, DBG)",
    A32Mcr = "MCR/MRC",
    A32Mcrr = "MCRR/MRRC",
    A32LdcStc = "LDC/STC",
    A32Cdp = "CDP",
    A32Coproc2 = "unconditional coprocessor (MCR2, LDC2, ...)",
    A32Svc = "SVC",
    A32VfpDp = "VFP data-processing",
    A32VfpLdSt = "VFP/SIMD extension register load/store",
    A32VfpXfer = "VFP/SIMD core register transfers (VMOV, VMRS, VMSR, VDUP)",
    A32Neon = "Advanced SIMD data-processing",
    A32NeonLdSt = "Advanced SIMD element/structure load/store",
    A32Cps = "CPS",
    A32Setend = "SETEND",
    A32SrsRfe = "SRS/RFE",
    A32Barrier = "CLREX/DSB/DMB/ISB",
    A32Preload = "PLD/PLDW/PLI",
    A32Unallocated = "unallocated (UNDEFINED)",
    T16ShiftImm = "T16 shift (immediate)/MOVS",
    T16AddSub = "T16 add/subtract (register, imm3)",
    T16Imm8 = "T16 MOV/CMP/ADD/SUB (imm8)",
    T16DataProc = "T16 data processing (register)",
    T16HiReg = "T16 ADD/CMP/MOV high registers",
    T16BxBlx = "T16 BX/BLX",
    T16LdrLit = "T16 LDR (literal)",
    T16LdStReg = "T16 load/store (register)",
    T16LdStImm = "T16 load/store (immediate)",
    T16LdStSp = "T16 load/store SP-relative",
    T16Adr = "T16 ADR / ADD (SP plus immediate)",
    T16SpAdj = "T16 ADD/SUB SP",
    T16Extend = "T16 SXTH/SXTB/UXTH/UXTB",
    T16Rev = "T16 REV/REV16/REVSH",
    T16PushPop = "T16 PUSH/POP",
    T16Cbz = "T16 CBZ/CBNZ",
    T16It = "T16 IT",
    T16Hint = "T16 hints",
    T16CpsSetend = "T16 CPS/SETEND",
    T16Bkpt = "T16 BKPT",
    T16LdmStm = "T16 LDM/STM",
    T16CondBranch = "T16 B<c>",
    T16Svc = "T16 SVC",
    T16Udf = "T16 UDF",
    T16Branch = "T16 B",
    T32LdmStm = "T32 LDM/STM/PUSH/POP",
    T32SrsRfe = "T32 SRS/RFE",
    T32LdStDual = "T32 LDRD/STRD",
    T32Exclusive = "T32 LDREX*/STREX*",
    T32TableBranch = "T32 TBB/TBH",
    T32DpShiftReg = "T32 data processing (shifted register)",
    T32DpModImm = "T32 data processing (modified immediate)",
    T32DpPlainImm = "T32 data processing (plain binary immediate)",
    T32Bitfield = "T32 SBFX/UBFX/BFI/BFC",
    T32Sat = "T32 SSAT/USAT",
    T32Branch = "T32 B/BL/BLX",
    T32CondBranch = "T32 B<c>",
    T32Status = "T32 MRS/MSR",
    T32Banked = "T32 MRS/MSR (banked)",
    T32Barrier = "T32 CLREX/DSB/DMB/ISB",
    T32HintCps = "T32 hints/CPS",
    T32Bxj = "T32 BXJ",
    T32SubsPcLr = "T32 SUBS PC, LR / ERET",
    T32HvcSmc = "T32 HVC/SMC",
    T32Udf = "T32 UDF",
    T32Store = "T32 store single",
    T32Load = "T32 load byte/halfword/word",
    T32LdStT = "T32 LDRT/STRT family",
    T32Preload = "T32 PLD/PLI",
    T32ShiftReg = "T32 shift (register)",
    T32Extend = "T32 SXT*/UXT*",
    T32Parallel = "T32 parallel add/subtract",
    T32Misc = "T32 QADD.., REV.., SEL, CLZ",
    T32Mul = "T32 multiply, multiply-accumulate, absolute difference",
    T32MulLong = "T32 long multiply, divide",
    T32Mcr = "T32 MCR/MRC",
    T32Mcrr = "T32 MCRR/MRRC",
    T32LdcStc = "T32 LDC/STC",
    T32Cdp = "T32 CDP",
    T32Vfp = "T32 VFP (data, load/store, transfer)",
    T32Neon = "T32 Advanced SIMD",
    T32Unallocated = "T32 unallocated (UNDEFINED)",
}
