//! The boot log's lines about the firmware: how the image was started and which
//! description of the machine it goes by.

use super::discover::Source;
use crate::firmware::acpi::UartKind;
use crate::firmware::handoff::Handoff;

/// Logs the firmware and the platform source.
pub fn report(source: Source, handoff: Option<&Handoff>) {
    match handoff {
        Some(h) => crate::hv_log!(
            "firmware: UEFI (EFI application; ExitBootServices done), memory map: {} RAM range(s), device tree {}, ACPI {}",
            h.ram_count,
            if h.dtb != 0 { "given" } else { "none" },
            if h.rsdp != 0 { "given" } else { "none" }
        ),
        None => crate::hv_log!("firmware: arm64 Image boot protocol (device tree in x0)"),
    }
    match source {
        Source::DeviceTree { nops } => {
            crate::hv_log!("platform: from the device tree ({nops} FDT_NOP token(s) removed)")
        }
        Source::Acpi(s) => {
            let oem = core::str::from_utf8(&s.oem_id).unwrap_or("?");
            crate::hv_log!(
                "platform: from ACPI (OEM '{}'): MADT {}, GTDT {}, SPCR {}, FADT {}; console {}, GIC ITS {}, {} disabled CPU(s)",
                oem,
                yes(s.madt),
                yes(s.gtdt),
                yes(s.spcr),
                yes(s.fadt),
                match s.uart_kind {
                    Some(UartKind::Pl011) => "PL011",
                    Some(UartKind::Ns16550 { .. }) => "16550",
                    None => "none",
                },
                s.its.map_or(alloc::string::String::from("none"), |a| alloc::format!("{a:#x}")),
                s.disabled_cpus
            );
        }
    }
    if let Some(p) = handoff.and_then(|h| h.acpi_problem) {
        crate::hv_warn!("the ACPI tables were unusable ({p:?}); went by the device tree");
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}
