//! Architectural register offsets of the guest-visible GIC frames, one constant per register
//! under the name the GIC architecture specifications give it: IHI 0048B (GICv2) and IHI 0069
//! (GICv3/v4). A register array (`GICD_ISENABLER<n>`) is named by its first register; register
//! `<n>` is at `offset + 4 * n` (`8 * n` for `GICD_IROUTER<n>`).
//!
//! The register tables in `src/regs/` are built from these constants: every row carries the
//! constant's name (see `Region::name`), so `grep GICD_ISENABLER` finds both the offset and
//! the row that emulates it. Registers listed here without a row (the GICv3.1 extended ranges,
//! message-based SPIs, LPIs, NMIs) are not implemented: they are reserved
//! ([`crate::VgicError::Reserved`], RAZ/WI), as the ID and type registers advertise.
//!
//! ```
//! use vgic::offsets::{gicd_v2, gicr};
//!
//! // GICD_ISENABLER1 (SPIs 32..63) and the SGI_base copy of GICR_ISENABLER0.
//! assert_eq!(gicd_v2::GICD_ISENABLER + 4, 0x104);
//! assert_eq!(gicr::GICR_SGI_BASE + gicr::GICR_ISENABLER0, 0x1_0100);
//! ```

/// GICv2 distributor (`GICD`, 4 KiB): IHI 0048B, table 4-1 "Distributor register map".
///
/// Offsets in `0xD00..0xE00` and the identification registers are IMPLEMENTATION DEFINED; they
/// are named here as on the GIC-400 (ARM DDI 0471), whose ID values the model reports.
pub mod gicd_v2 {
    /// `GICD_CTLR`, Distributor Control Register.
    pub const GICD_CTLR: u64 = 0x000;
    /// `GICD_TYPER`, Interrupt Controller Type Register.
    pub const GICD_TYPER: u64 = 0x004;
    /// `GICD_IIDR`, Distributor Implementer Identification Register.
    pub const GICD_IIDR: u64 = 0x008;
    /// `GICD_IGROUPR<n>`, Interrupt Group Registers (1 bit per INTID).
    pub const GICD_IGROUPR: u64 = 0x080;
    /// `GICD_ISENABLER<n>`, Interrupt Set-Enable Registers (1 bit per INTID).
    pub const GICD_ISENABLER: u64 = 0x100;
    /// `GICD_ICENABLER<n>`, Interrupt Clear-Enable Registers (1 bit per INTID).
    pub const GICD_ICENABLER: u64 = 0x180;
    /// `GICD_ISPENDR<n>`, Interrupt Set-Pending Registers (1 bit per INTID).
    pub const GICD_ISPENDR: u64 = 0x200;
    /// `GICD_ICPENDR<n>`, Interrupt Clear-Pending Registers (1 bit per INTID).
    pub const GICD_ICPENDR: u64 = 0x280;
    /// `GICD_ISACTIVER<n>`, Interrupt Set-Active Registers (1 bit per INTID).
    pub const GICD_ISACTIVER: u64 = 0x300;
    /// `GICD_ICACTIVER<n>`, Interrupt Clear-Active Registers (1 bit per INTID).
    pub const GICD_ICACTIVER: u64 = 0x380;
    /// `GICD_IPRIORITYR<n>`, Interrupt Priority Registers (1 byte per INTID).
    pub const GICD_IPRIORITYR: u64 = 0x400;
    /// `GICD_ITARGETSR<n>`, Interrupt Processor Targets Registers (1 byte per INTID).
    pub const GICD_ITARGETSR: u64 = 0x800;
    /// `GICD_ICFGR<n>`, Interrupt Configuration Registers (2 bits per INTID).
    pub const GICD_ICFGR: u64 = 0xC00;
    /// IMPLEMENTATION DEFINED registers, `0xD00..0xE00` (RAZ/WI here).
    pub const GICD_IMPDEF: u64 = 0xD00;
    /// `GICD_PPISR`, PPI Status Register (GIC-400; inside [`GICD_IMPDEF`]).
    pub const GICD_PPISR: u64 = 0xD00;
    /// `GICD_SPISR<n>`, SPI Status Registers (GIC-400; inside [`GICD_IMPDEF`]).
    pub const GICD_SPISR: u64 = 0xD04;
    /// `GICD_NSACR<n>`, Non-secure Access Control Registers (2 bits per INTID).
    pub const GICD_NSACR: u64 = 0xE00;
    /// `GICD_SGIR`, Software Generated Interrupt Register (write-only).
    pub const GICD_SGIR: u64 = 0xF00;
    /// `GICD_CPENDSGIR<n>`, SGI Clear-Pending Registers (1 byte per SGI).
    pub const GICD_CPENDSGIR: u64 = 0xF10;
    /// `GICD_SPENDSGIR<n>`, SGI Set-Pending Registers (1 byte per SGI).
    pub const GICD_SPENDSGIR: u64 = 0xF20;
    /// `GICD_PIDR4`, Peripheral ID4 Register.
    pub const GICD_PIDR4: u64 = 0xFD0;
    /// `GICD_PIDR5`, Peripheral ID5 Register.
    pub const GICD_PIDR5: u64 = 0xFD4;
    /// `GICD_PIDR6`, Peripheral ID6 Register.
    pub const GICD_PIDR6: u64 = 0xFD8;
    /// `GICD_PIDR7`, Peripheral ID7 Register.
    pub const GICD_PIDR7: u64 = 0xFDC;
    /// `GICD_PIDR0`, Peripheral ID0 Register.
    pub const GICD_PIDR0: u64 = 0xFE0;
    /// `GICD_PIDR1`, Peripheral ID1 Register.
    pub const GICD_PIDR1: u64 = 0xFE4;
    /// `GICD_PIDR2`, Peripheral ID2 Register: ArchRev in `[7:4]` (`ICPIDR2` in IHI 0048B).
    pub const GICD_PIDR2: u64 = 0xFE8;
    /// `GICD_PIDR3`, Peripheral ID3 Register.
    pub const GICD_PIDR3: u64 = 0xFEC;
    /// `GICD_CIDR0`, Component ID0 Register.
    pub const GICD_CIDR0: u64 = 0xFF0;
    /// `GICD_CIDR1`, Component ID1 Register.
    pub const GICD_CIDR1: u64 = 0xFF4;
    /// `GICD_CIDR2`, Component ID2 Register.
    pub const GICD_CIDR2: u64 = 0xFF8;
    /// `GICD_CIDR3`, Component ID3 Register.
    pub const GICD_CIDR3: u64 = 0xFFC;
    /// Size of the frame.
    pub const GICD_SIZE: u64 = 0x1000;
}

/// GICv3 distributor (`GICD`, 64 KiB): IHI 0069, "The GIC Distributor register map".
///
/// The identification registers are IMPLEMENTATION DEFINED except `GICD_PIDR2.ArchRev`; they
/// are named as on the GIC-500/GIC-600, whose ID values the model reports.
pub mod gicd_v3 {
    /// `GICD_CTLR`, Distributor Control Register.
    pub const GICD_CTLR: u64 = 0x0000;
    /// `GICD_TYPER`, Interrupt Controller Type Register.
    pub const GICD_TYPER: u64 = 0x0004;
    /// `GICD_IIDR`, Distributor Implementer Identification Register.
    pub const GICD_IIDR: u64 = 0x0008;
    /// `GICD_TYPER2`, Interrupt Controller Type Register 2.
    pub const GICD_TYPER2: u64 = 0x000C;
    /// `GICD_STATUSR`, Error Reporting Status Register.
    pub const GICD_STATUSR: u64 = 0x0010;
    /// `GICD_SETSPI_NSR`, Set Non-secure SPI Pending Register (not implemented: `MBIS` = 0).
    pub const GICD_SETSPI_NSR: u64 = 0x0040;
    /// `GICD_CLRSPI_NSR`, Clear Non-secure SPI Pending Register (not implemented).
    pub const GICD_CLRSPI_NSR: u64 = 0x0048;
    /// `GICD_SETSPI_SR`, Set Secure SPI Pending Register (not implemented).
    pub const GICD_SETSPI_SR: u64 = 0x0050;
    /// `GICD_CLRSPI_SR`, Clear Secure SPI Pending Register (not implemented).
    pub const GICD_CLRSPI_SR: u64 = 0x0058;
    /// `GICD_IGROUPR<n>`, Interrupt Group Registers (1 bit per INTID).
    pub const GICD_IGROUPR: u64 = 0x0080;
    /// `GICD_ISENABLER<n>`, Interrupt Set-Enable Registers (1 bit per INTID).
    pub const GICD_ISENABLER: u64 = 0x0100;
    /// `GICD_ICENABLER<n>`, Interrupt Clear-Enable Registers (1 bit per INTID).
    pub const GICD_ICENABLER: u64 = 0x0180;
    /// `GICD_ISPENDR<n>`, Interrupt Set-Pending Registers (1 bit per INTID).
    pub const GICD_ISPENDR: u64 = 0x0200;
    /// `GICD_ICPENDR<n>`, Interrupt Clear-Pending Registers (1 bit per INTID).
    pub const GICD_ICPENDR: u64 = 0x0280;
    /// `GICD_ISACTIVER<n>`, Interrupt Set-Active Registers (1 bit per INTID).
    pub const GICD_ISACTIVER: u64 = 0x0300;
    /// `GICD_ICACTIVER<n>`, Interrupt Clear-Active Registers (1 bit per INTID).
    pub const GICD_ICACTIVER: u64 = 0x0380;
    /// `GICD_IPRIORITYR<n>`, Interrupt Priority Registers (1 byte per INTID).
    pub const GICD_IPRIORITYR: u64 = 0x0400;
    /// `GICD_ITARGETSR<n>`, Interrupt Processor Targets Registers (legacy, `ARE` = 0 only).
    pub const GICD_ITARGETSR: u64 = 0x0800;
    /// `GICD_ICFGR<n>`, Interrupt Configuration Registers (2 bits per INTID).
    pub const GICD_ICFGR: u64 = 0x0C00;
    /// `GICD_IGRPMODR<n>`, Interrupt Group Modifier Registers (1 bit per INTID).
    pub const GICD_IGRPMODR: u64 = 0x0D00;
    /// `GICD_NSACR<n>`, Non-secure Access Control Registers (2 bits per INTID).
    pub const GICD_NSACR: u64 = 0x0E00;
    /// `GICD_SGIR`, Software Generated Interrupt Register (legacy, `ARE` = 0 only).
    pub const GICD_SGIR: u64 = 0x0F00;
    /// `GICD_CPENDSGIR<n>`, SGI Clear-Pending Registers (legacy, `ARE` = 0 only).
    pub const GICD_CPENDSGIR: u64 = 0x0F10;
    /// `GICD_SPENDSGIR<n>`, SGI Set-Pending Registers (legacy, `ARE` = 0 only).
    pub const GICD_SPENDSGIR: u64 = 0x0F20;
    /// `GICD_INMIR<n>`, Non-maskable Interrupt Registers (not implemented: no NMIs).
    pub const GICD_INMIR: u64 = 0x0F80;
    /// `GICD_IGROUPR<n>E`, extended SPI range (not implemented: `ESPI` = 0).
    pub const GICD_IGROUPR_E: u64 = 0x1000;
    /// `GICD_ISENABLER<n>E`, extended SPI range (not implemented).
    pub const GICD_ISENABLER_E: u64 = 0x1200;
    /// `GICD_ICENABLER<n>E`, extended SPI range (not implemented).
    pub const GICD_ICENABLER_E: u64 = 0x1400;
    /// `GICD_ISPENDR<n>E`, extended SPI range (not implemented).
    pub const GICD_ISPENDR_E: u64 = 0x1600;
    /// `GICD_ICPENDR<n>E`, extended SPI range (not implemented).
    pub const GICD_ICPENDR_E: u64 = 0x1800;
    /// `GICD_ISACTIVER<n>E`, extended SPI range (not implemented).
    pub const GICD_ISACTIVER_E: u64 = 0x1A00;
    /// `GICD_ICACTIVER<n>E`, extended SPI range (not implemented).
    pub const GICD_ICACTIVER_E: u64 = 0x1C00;
    /// `GICD_IPRIORITYR<n>E`, extended SPI range (not implemented).
    pub const GICD_IPRIORITYR_E: u64 = 0x2000;
    /// `GICD_ICFGR<n>E`, extended SPI range (not implemented).
    pub const GICD_ICFGR_E: u64 = 0x3000;
    /// `GICD_IGRPMODR<n>E`, extended SPI range (not implemented).
    pub const GICD_IGRPMODR_E: u64 = 0x3400;
    /// `GICD_NSACR<n>E`, extended SPI range (not implemented).
    pub const GICD_NSACR_E: u64 = 0x3600;
    /// `GICD_INMIR<n>E`, extended SPI range (not implemented).
    pub const GICD_INMIR_E: u64 = 0x3B00;
    /// `GICD_IROUTER<n>`, Interrupt Routing Registers (64 bits per INTID, SPIs only).
    pub const GICD_IROUTER: u64 = 0x6000;
    /// `GICD_IROUTER<n>E`, extended SPI range (not implemented).
    pub const GICD_IROUTER_E: u64 = 0x8000;
    /// `GICD_PIDR4`, Peripheral ID4 Register.
    pub const GICD_PIDR4: u64 = 0xFFD0;
    /// `GICD_PIDR5`, Peripheral ID5 Register.
    pub const GICD_PIDR5: u64 = 0xFFD4;
    /// `GICD_PIDR6`, Peripheral ID6 Register.
    pub const GICD_PIDR6: u64 = 0xFFD8;
    /// `GICD_PIDR7`, Peripheral ID7 Register.
    pub const GICD_PIDR7: u64 = 0xFFDC;
    /// `GICD_PIDR0`, Peripheral ID0 Register.
    pub const GICD_PIDR0: u64 = 0xFFE0;
    /// `GICD_PIDR1`, Peripheral ID1 Register.
    pub const GICD_PIDR1: u64 = 0xFFE4;
    /// `GICD_PIDR2`, Peripheral ID2 Register: ArchRev in `[7:4]`.
    pub const GICD_PIDR2: u64 = 0xFFE8;
    /// `GICD_PIDR3`, Peripheral ID3 Register.
    pub const GICD_PIDR3: u64 = 0xFFEC;
    /// `GICD_CIDR0`, Component ID0 Register.
    pub const GICD_CIDR0: u64 = 0xFFF0;
    /// `GICD_CIDR1`, Component ID1 Register.
    pub const GICD_CIDR1: u64 = 0xFFF4;
    /// `GICD_CIDR2`, Component ID2 Register.
    pub const GICD_CIDR2: u64 = 0xFFF8;
    /// `GICD_CIDR3`, Component ID3 Register.
    pub const GICD_CIDR3: u64 = 0xFFFC;
    /// Size of the frame.
    pub const GICD_SIZE: u64 = 0x1_0000;
}

/// GICv3 redistributor (`GICR`): one [`GICR_FRAME_SIZE`](gicr::GICR_FRAME_SIZE) frame per PE, `RD_base` followed by
/// `SGI_base` at [`GICR_SGI_BASE`](gicr::GICR_SGI_BASE). IHI 0069, "The GIC Redistributor register map" (offsets
/// from `RD_base`) and "Redistributor registers for SGIs and PPIs" (offsets from `SGI_base`,
/// as the specification gives them).
///
/// The identification registers are IMPLEMENTATION DEFINED except `GICR_PIDR2.ArchRev`; they
/// are named as on the GIC-500/GIC-600.
pub mod gicr {
    /// Size of one redistributor frame (`RD_base` + `SGI_base`).
    pub const GICR_FRAME_SIZE: u64 = 0x2_0000;
    /// Offset of `SGI_base` inside a redistributor frame.
    pub const GICR_SGI_BASE: u64 = 0x1_0000;

    // RD_base.

    /// `GICR_CTLR`, Redistributor Control Register (`RD_base`).
    pub const GICR_CTLR: u64 = 0x0000;
    /// `GICR_IIDR`, Implementer Identification Register (`RD_base`).
    pub const GICR_IIDR: u64 = 0x0004;
    /// `GICR_TYPER`, Redistributor Type Register (`RD_base`, 64-bit).
    pub const GICR_TYPER: u64 = 0x0008;
    /// `GICR_STATUSR`, Error Reporting Status Register (`RD_base`).
    pub const GICR_STATUSR: u64 = 0x0010;
    /// `GICR_WAKER`, Redistributor Wake Register (`RD_base`).
    pub const GICR_WAKER: u64 = 0x0014;
    /// `GICR_MPAMIDR`, Report maximum PARTID and PMG Register (not implemented: no MPAM).
    pub const GICR_MPAMIDR: u64 = 0x0018;
    /// `GICR_PARTIDR`, Set PARTID and PMG Register (not implemented).
    pub const GICR_PARTIDR: u64 = 0x001C;
    /// `GICR_SETLPIR`, Set LPI Pending Register (not implemented: no LPIs).
    pub const GICR_SETLPIR: u64 = 0x0040;
    /// `GICR_CLRLPIR`, Clear LPI Pending Register (not implemented).
    pub const GICR_CLRLPIR: u64 = 0x0048;
    /// `GICR_PROPBASER`, Redistributor Properties Base Address Register (`RD_base`, 64-bit).
    pub const GICR_PROPBASER: u64 = 0x0070;
    /// `GICR_PENDBASER`, Redistributor LPI Pending Table Base Address Register (64-bit).
    pub const GICR_PENDBASER: u64 = 0x0078;
    /// `GICR_INVLPIR`, Redistributor Invalidate LPI Register (not implemented).
    pub const GICR_INVLPIR: u64 = 0x00A0;
    /// `GICR_INVALLR`, Redistributor Invalidate All Register (not implemented).
    pub const GICR_INVALLR: u64 = 0x00B0;
    /// `GICR_SYNCR`, Redistributor Synchronize Register (not implemented).
    pub const GICR_SYNCR: u64 = 0x00C0;
    /// `GICR_PIDR4`, Peripheral ID4 Register (`RD_base`).
    pub const GICR_PIDR4: u64 = 0xFFD0;
    /// `GICR_PIDR5`, Peripheral ID5 Register.
    pub const GICR_PIDR5: u64 = 0xFFD4;
    /// `GICR_PIDR6`, Peripheral ID6 Register.
    pub const GICR_PIDR6: u64 = 0xFFD8;
    /// `GICR_PIDR7`, Peripheral ID7 Register.
    pub const GICR_PIDR7: u64 = 0xFFDC;
    /// `GICR_PIDR0`, Peripheral ID0 Register.
    pub const GICR_PIDR0: u64 = 0xFFE0;
    /// `GICR_PIDR1`, Peripheral ID1 Register.
    pub const GICR_PIDR1: u64 = 0xFFE4;
    /// `GICR_PIDR2`, Peripheral ID2 Register: ArchRev in `[7:4]`.
    pub const GICR_PIDR2: u64 = 0xFFE8;
    /// `GICR_PIDR3`, Peripheral ID3 Register.
    pub const GICR_PIDR3: u64 = 0xFFEC;
    /// `GICR_CIDR0`, Component ID0 Register.
    pub const GICR_CIDR0: u64 = 0xFFF0;
    /// `GICR_CIDR1`, Component ID1 Register.
    pub const GICR_CIDR1: u64 = 0xFFF4;
    /// `GICR_CIDR2`, Component ID2 Register.
    pub const GICR_CIDR2: u64 = 0xFFF8;
    /// `GICR_CIDR3`, Component ID3 Register.
    pub const GICR_CIDR3: u64 = 0xFFFC;

    // SGI_base (add GICR_SGI_BASE for the offset inside the frame).

    /// `GICR_IGROUPR0`, Interrupt Group Register 0 (`SGI_base`; SGIs and PPIs).
    pub const GICR_IGROUPR0: u64 = 0x0080;
    /// `GICR_IGROUPR<n>E`, extended PPI range (not implemented: `PPInum` = 0).
    pub const GICR_IGROUPR_E: u64 = 0x0084;
    /// `GICR_ISENABLER0`, Interrupt Set-Enable Register 0 (`SGI_base`).
    pub const GICR_ISENABLER0: u64 = 0x0100;
    /// `GICR_ISENABLER<n>E`, extended PPI range (not implemented).
    pub const GICR_ISENABLER_E: u64 = 0x0104;
    /// `GICR_ICENABLER0`, Interrupt Clear-Enable Register 0 (`SGI_base`).
    pub const GICR_ICENABLER0: u64 = 0x0180;
    /// `GICR_ICENABLER<n>E`, extended PPI range (not implemented).
    pub const GICR_ICENABLER_E: u64 = 0x0184;
    /// `GICR_ISPENDR0`, Interrupt Set-Pending Register 0 (`SGI_base`).
    pub const GICR_ISPENDR0: u64 = 0x0200;
    /// `GICR_ISPENDR<n>E`, extended PPI range (not implemented).
    pub const GICR_ISPENDR_E: u64 = 0x0204;
    /// `GICR_ICPENDR0`, Interrupt Clear-Pending Register 0 (`SGI_base`).
    pub const GICR_ICPENDR0: u64 = 0x0280;
    /// `GICR_ICPENDR<n>E`, extended PPI range (not implemented).
    pub const GICR_ICPENDR_E: u64 = 0x0284;
    /// `GICR_ISACTIVER0`, Interrupt Set-Active Register 0 (`SGI_base`).
    pub const GICR_ISACTIVER0: u64 = 0x0300;
    /// `GICR_ISACTIVER<n>E`, extended PPI range (not implemented).
    pub const GICR_ISACTIVER_E: u64 = 0x0304;
    /// `GICR_ICACTIVER0`, Interrupt Clear-Active Register 0 (`SGI_base`).
    pub const GICR_ICACTIVER0: u64 = 0x0380;
    /// `GICR_ICACTIVER<n>E`, extended PPI range (not implemented).
    pub const GICR_ICACTIVER_E: u64 = 0x0384;
    /// `GICR_IPRIORITYR<n>`, Interrupt Priority Registers 0-7 (`SGI_base`, 1 byte per INTID).
    pub const GICR_IPRIORITYR: u64 = 0x0400;
    /// `GICR_IPRIORITYR<n>E`, extended PPI range (not implemented).
    pub const GICR_IPRIORITYR_E: u64 = 0x0420;
    /// `GICR_ICFGR0`, SGI Configuration Register (`SGI_base`; read-only: SGIs are edge).
    pub const GICR_ICFGR0: u64 = 0x0C00;
    /// `GICR_ICFGR1`, PPI Configuration Register (`SGI_base`).
    pub const GICR_ICFGR1: u64 = 0x0C04;
    /// `GICR_ICFGR<n>E`, extended PPI range (not implemented).
    pub const GICR_ICFGR_E: u64 = 0x0C08;
    /// `GICR_IGRPMODR0`, Interrupt Group Modifier Register 0 (`SGI_base`).
    pub const GICR_IGRPMODR0: u64 = 0x0D00;
    /// `GICR_IGRPMODR<n>E`, extended PPI range (not implemented).
    pub const GICR_IGRPMODR_E: u64 = 0x0D04;
    /// `GICR_NSACR`, Non-secure Access Control Register (`SGI_base`).
    pub const GICR_NSACR: u64 = 0x0E00;
    /// `GICR_INMIR0`, Non-maskable Interrupt Register for PPIs (not implemented: no NMIs).
    pub const GICR_INMIR0: u64 = 0x0F80;
    /// `GICR_INMIR<n>E`, extended PPI range (not implemented).
    pub const GICR_INMIR_E: u64 = 0x0F84;
}
