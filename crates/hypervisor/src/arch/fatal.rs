//! Unexpected exceptions at EL2 and Rust panics: print everything useful for a post-mortem,
//! then end the machine with a failure status. Never a silent hang.

use el2_core::switch::HostExceptionFrame;

const VECTOR_NAMES: [&str; 8] = [
    "EL2t sync",
    "EL2t IRQ",
    "EL2t FIQ",
    "EL2t SError",
    "EL2h sync",
    "EL2h IRQ",
    "EL2h FIQ",
    "EL2h SError",
];

/// Called by the EL2 vectors (el2-core) for any exception taken from EL2 itself.
#[no_mangle]
pub extern "C" fn el2_core_host_exception(frame: &HostExceptionFrame) -> ! {
    crate::arch::console::force_unlock();
    let name = VECTOR_NAMES
        .get(frame.vector as usize)
        .copied()
        .unwrap_or("?");
    crate::hv_log!("FATAL: unexpected exception at EL2 ({name})");
    crate::hv_log!(
        "  ESR_EL2={:#018x} (EC={:#04x}) FAR_EL2={:#018x}",
        frame.esr,
        (frame.esr >> 26) & 0x3f,
        frame.far
    );
    crate::hv_log!(
        "  ELR_EL2={:#018x} SPSR_EL2={:#018x}",
        frame.elr,
        frame.spsr
    );
    for i in (0..31).step_by(2) {
        if i + 1 < 31 {
            crate::hv_log!(
                "  x{:<2}={:#018x} x{:<2}={:#018x}",
                i,
                frame.x[i],
                i + 1,
                frame.x[i + 1]
            );
        } else {
            crate::hv_log!("  x{:<2}={:#018x}", i, frame.x[i]);
        }
    }
    crate::hv_log!("  (resolve ELR/x30 with: addr2line -e target/aarch64-unknown-none-softfloat/release/hypervisor <addr>)");
    crate::arch::power::exit(3)
}

/// Rust panics in the hypervisor are bugs: report and stop.
#[cfg(target_os = "none")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    crate::arch::console::force_unlock();
    crate::hv_log!("FATAL: hypervisor panic: {info}");
    crate::arch::power::exit(4)
}
