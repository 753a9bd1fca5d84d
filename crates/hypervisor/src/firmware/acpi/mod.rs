//! The machine from ACPI tables (the `acpi` crate), into the same
//! [`PlatformInfo`] the device tree gives: CPUs and the GIC from the MADT (GICC, GICD,
//! GICR, ITS entries), the timer PPIs from the GTDT, the console from the SPCR (PL011 or a
//! 16550), the PSCI conduit from the FADT's ARM boot flags. RAM comes from the UEFI memory
//! map, not from ACPI. Tables are read where they are (the firmware's identity map, or the
//! MMU off); every table's checksum is checked first, and a table that fails is ignored
//! with a note.

use core::ptr::NonNull;

use acpi::address::AccessSize;
use acpi::fadt::Fadt;
use acpi::madt::{Madt, MadtEntry};
use acpi::sdt::{SdtHeader, Signature};
use acpi::spcr::{Spcr, SpcrInterfaceType};
use acpi::{AcpiHandler, AcpiTable, AcpiTables, PhysicalMapping};

pub use crate::platform::UartKind;
use crate::platform::{gicv2_page_pair, HostGic, PlatformInfo, PsciConduit, Range, MAX_CPUS};

/// GICv2 register windows ACPI gives no size for: GICD 4 KiB, GICC/GICH/GICV 8 KiB (the
/// second page holds GICC_DIR / GICV_DIR), unless a platform quirk says otherwise.
const GICD_SIZE: u64 = 0x1000;
const GICV2_PAGE_PAIR: u64 = 0x2000;
/// Size of one GICv3 redistributor (RD_base + SGI_base frames).
const GICR_FRAME: u64 = 0x2_0000;
/// Register window of a PL011 / 16550.
const UART_SIZE: u64 = 0x1000;
/// GICC flags bit 0: the CPU is enabled.
const GICC_ENABLED: u32 = 1;

/// What the tables said beyond [`PlatformInfo`], for the boot log and the errata table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AcpiSummary {
    /// The MADT was found and read.
    pub madt: bool,
    /// The GTDT was found and read.
    pub gtdt: bool,
    /// The SPCR was found and named a UART the hypervisor can drive.
    pub spcr: bool,
    /// The FADT was found and read.
    pub fadt: bool,
    /// The console's kind, if the SPCR named one.
    pub uart_kind: Option<UartKind>,
    /// First GIC ITS (MADT), if any.
    pub its: Option<u64>,
    /// CPUs the MADT lists as disabled (not counted in `PlatformInfo::cpus`).
    pub disabled_cpus: usize,
    /// `oem_id` of the MADT (platform quirks match on it, e.g. "AMD   " on Seattle).
    pub oem_id: [u8; 6],
}

/// Why ACPI could not describe the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AcpiProblem {
    /// The RSDP or XSDT is not valid.
    BadRoot,
    /// No valid MADT (missing, or a bad checksum): no CPUs and no GIC.
    NoMadt,
}

/// Table access where physical = virtual (the firmware's identity map while the EFI entry
/// runs, or the host address of a test's buffer).
#[derive(Clone, Copy, Debug)]
pub struct IdentityTables;

impl AcpiHandler for IdentityTables {
    unsafe fn map_physical_region<T>(&self, pa: usize, size: usize) -> PhysicalMapping<Self, T> {
        // SAFETY: the crate passes addresses of tables (from the RSDP/XSDT the firmware
        // gave, never null); with the identity map the address is the pointer.
        unsafe { PhysicalMapping::new(pa, NonNull::new_unchecked(pa as *mut T), size, size, *self) }
    }
    fn unmap_physical_region<T>(_region: &PhysicalMapping<Self, T>) {}
}

/// The Generic Timer Description Table (ACPI 6.5, 5.2.25), up to the EL2 timer: the
/// `acpi` crate has no type for it.
#[repr(C, packed)]
#[derive(Debug, Clone, Copy)]
pub struct Gtdt {
    header: SdtHeader,
    cnt_control_base: u64,
    _reserved: u32,
    secure_el1_gsiv: u32,
    secure_el1_flags: u32,
    non_secure_el1_gsiv: u32,
    non_secure_el1_flags: u32,
    virtual_el1_gsiv: u32,
    virtual_el1_flags: u32,
    el2_gsiv: u32,
    el2_flags: u32,
}

// SAFETY: `Gtdt` starts with the SDT header and matches the GTDT layout above; the crate
// maps `header.length` bytes (the whole table) before this is read.
unsafe impl AcpiTable for Gtdt {
    const SIGNATURE: Signature = Signature::GTDT;
    fn header(&self) -> &SdtHeader {
        &self.header
    }
}

/// Reads the tables under the RSDP at `rsdp` into `info` (CPUs, GIC, timers, console,
/// PSCI); leaves RAM, the initrd and the command line alone.
///
/// # Safety
/// `rsdp` must be the firmware's RSDP and the tables it leads to must be readable at
/// their physical addresses.
pub unsafe fn read(rsdp: u64, info: &mut PlatformInfo<'_>) -> Result<AcpiSummary, AcpiProblem> {
    // SAFETY: the caller's contract.
    let tables = unsafe { AcpiTables::from_rsdp(IdentityTables, rsdp as usize) }
        .map_err(|_| AcpiProblem::BadRoot)?;
    let mut summary = AcpiSummary::default();
    // find_table checks each table's signature, length and checksum.
    let madt = tables
        .find_table::<Madt>()
        .map_err(|_| AcpiProblem::NoMadt)?;
    summary.madt = true;
    summary.oem_id = madt.get().header.oem_id;
    read_madt(madt.get(), info, &mut summary);

    if let Ok(g) = tables.find_table::<Gtdt>() {
        let g: Gtdt = *g;
        info.timer_ppis = Some([
            g.secure_el1_gsiv,
            g.non_secure_el1_gsiv,
            g.virtual_el1_gsiv,
            g.el2_gsiv,
        ]);
        summary.gtdt = true;
    }

    if let Ok(s) = tables.find_table::<Spcr>() {
        let kind = match s.interface_type() {
            SpcrInterfaceType::ArmPL011
            | SpcrInterfaceType::ArmSBSAGeneric
            | SpcrInterfaceType::ArmSBSAGeneric32bit => Some(UartKind::Pl011),
            SpcrInterfaceType::Full16550
            | SpcrInterfaceType::Full16450
            | SpcrInterfaceType::Generic16550 => {
                // Register stride from the access size (1 = byte, 3 = dword).
                let dword = s
                    .base_address()
                    .and_then(|a| a.ok())
                    .is_some_and(|a| matches!(a.access_size, AccessSize::DWordAccess));
                Some(UartKind::Ns16550 {
                    shift: if dword { 2 } else { 0 },
                })
            }
            _ => None,
        };
        let base = s.base_address().and_then(|a| a.ok()).map(|a| a.address);
        if let (Some(kind), Some(base)) = (kind, base.filter(|&b| b != 0)) {
            info.uart = Some(Range {
                base,
                size: UART_SIZE,
            });
            info.uart_intid = s
                .global_system_interrupt()
                .filter(|g| (32..1020).contains(g));
            info.uart_kind = kind;
            summary.uart_kind = Some(kind);
            summary.spcr = true;
        }
    }

    if let Ok(f) = tables.find_table::<Fadt>() {
        let flags = { f.arm_boot_arch };
        info.psci = flags
            .implements_psci()
            .then_some(if flags.use_hvc_as_psci_conduit() {
                PsciConduit::Hvc
            } else {
                PsciConduit::Smc
            });
        summary.fadt = true;
    }
    Ok(summary)
}

/// CPUs (enabled GICC entries' MPIDRs), and the GIC: v3 when there is a redistributor
/// (GICR entry or GICC.GICR base) or the GICD says v3/v4, else v2 from the GICC entries'
/// CPU interface, GICH and GICV addresses.
fn read_madt(madt: core::pin::Pin<&Madt>, info: &mut PlatformInfo<'_>, summary: &mut AcpiSummary) {
    let mut gicd = None;
    let mut version = 0u8;
    let mut gicr = None;
    let mut gicc_cpu = 0u64;
    let mut gich = 0u64;
    let mut gicv = 0u64;
    let mut gicc_gicr = 0u64;
    let mut gicr_count = 0u64;
    for entry in madt.entries() {
        match entry {
            MadtEntry::Gicc(c) => {
                let flags = { c.flags };
                if flags & GICC_ENABLED == 0 {
                    summary.disabled_cpus += 1;
                    continue;
                }
                if info.cpu_count < MAX_CPUS {
                    info.cpus[info.cpu_count] = { c.mpidr } & 0xff_00ff_ffff;
                    info.cpu_count += 1;
                }
                gicc_cpu = c.gic_registers_address;
                gich = c.gic_hypervisor_registers_address;
                gicv = c.gic_virtual_registers_address;
                let r = { c.gicr_base_address };
                if r != 0 {
                    if gicc_gicr == 0 || r < gicc_gicr {
                        gicc_gicr = r;
                    }
                    gicr_count += 1;
                }
            }
            MadtEntry::Gicd(d) => {
                gicd = Some(d.physical_base_address);
                version = d.gic_version;
            }
            MadtEntry::GicRedistributor(r) if gicr.is_none() => {
                gicr = Some(Range {
                    base: { r.discovery_range_base_address },
                    size: u64::from(r.discovery_range_length),
                });
            }
            MadtEntry::GicInterruptTranslationService(its) if summary.its.is_none() => {
                summary.its = Some(its.physical_base_address);
            }
            _ => {}
        }
    }
    let Some(dist) = gicd else { return };
    let dist = Range {
        base: dist,
        size: if version >= 3 || gicr.is_some() {
            0x1_0000
        } else {
            GICD_SIZE
        },
    };
    if version >= 3 || gicr.is_some() || gicc_gicr != 0 {
        let redist = gicr.or((gicc_gicr != 0).then(|| Range {
            base: gicc_gicr,
            size: gicr_count * GICR_FRAME,
        }));
        if let Some(redist) = redist {
            info.gic = Some(HostGic::V3 { dist, redist });
        }
    } else if gicc_cpu != 0 {
        // AMD Seattle's GIC-400 decodes each CPU-interface page over 64 KiB (platform
        // quirk, matched on the MADT's OEM ID): take its 128 KiB frames' contiguous alias.
        let size = if summary.oem_id.starts_with(b"AMD") {
            0x2_0000
        } else {
            GICV2_PAGE_PAIR
        };
        let window = |base: u64| (base != 0).then(|| gicv2_page_pair(Range { base, size }));
        info.gic = Some(HostGic::V2 {
            dist,
            cpu: gicv2_page_pair(Range {
                base: gicc_cpu,
                size,
            }),
            hyp: window(gich),
            vcpu: window(gicv),
        });
    }
}

#[cfg(test)]
mod tests;
