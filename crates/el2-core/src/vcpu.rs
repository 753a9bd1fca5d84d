//! Architectural state of one virtual CPU, as the world switch saves and restores it.
//!
//! The layout of [`GuestRegs`] is shared with the assembly in `switch/entry.rs`; the
//! offsets are checked at compile time below.

use aarch64_cpu::registers::HCR_EL2;

use crate::aarch32;

/// General-purpose registers and the state `ERET` needs: what the entry/exit assembly
/// saves and restores on every world switch.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GuestRegs {
    /// X0..X30.
    pub x: [u64; 31],
    /// Guest PC: loaded into `ELR_EL2` before `ERET`, read back from it on exit.
    pub pc: u64,
    /// Guest PSTATE: loaded into `SPSR_EL2` before `ERET`, read back on exit.
    pub pstate: u64,
    /// `SP_EL0` of the guest.
    pub sp_el0: u64,
}

/// Byte offsets of [`GuestRegs`] fields used by assembly.
pub mod offsets {
    /// Offset of `GuestRegs::pc`.
    pub const PC: usize = 31 * 8;
    /// Offset of `GuestRegs::pstate`.
    pub const PSTATE: usize = 32 * 8;
    /// Offset of `GuestRegs::sp_el0`.
    pub const SP_EL0: usize = 33 * 8;
}

const _: () = {
    assert!(core::mem::offset_of!(GuestRegs, pc) == offsets::PC);
    assert!(core::mem::offset_of!(GuestRegs, pstate) == offsets::PSTATE);
    assert!(core::mem::offset_of!(GuestRegs, sp_el0) == offsets::SP_EL0);
};

impl GuestRegs {
    /// Reads register `n` as an instruction operand: 31 is XZR (reads as zero).
    pub fn read(&self, n: u8) -> u64 {
        self.x.get(n as usize).copied().unwrap_or(0)
    }

    /// Writes register `n` as an instruction result: writes to 31 (XZR) are discarded.
    pub fn write(&mut self, n: u8, value: u64) {
        if let Some(r) = self.x.get_mut(n as usize) {
            *r = value;
        }
    }
}

/// EL1 (and EL0) system registers a guest OS owns. Loaded into hardware while the vCPU
/// runs: both world-switch backends load them in `vcpu_load` and save them in `vcpu_put`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(missing_docs)] // each field is the register of the same name
pub struct El1SysRegs {
    pub sctlr_el1: u64,
    pub actlr_el1: u64,
    pub cpacr_el1: u64,
    pub ttbr0_el1: u64,
    pub ttbr1_el1: u64,
    pub tcr_el1: u64,
    pub esr_el1: u64,
    pub afsr0_el1: u64,
    pub afsr1_el1: u64,
    pub far_el1: u64,
    pub mair_el1: u64,
    pub amair_el1: u64,
    pub vbar_el1: u64,
    pub contextidr_el1: u64,
    pub tpidr_el0: u64,
    pub tpidrro_el0: u64,
    pub tpidr_el1: u64,
    pub cntkctl_el1: u64,
    pub par_el1: u64,
    pub mdscr_el1: u64,
    pub csselr_el1: u64,
    pub sp_el1: u64,
    pub elr_el1: u64,
    pub spsr_el1: u64,
    pub cntv_ctl_el0: u64,
    pub cntv_cval_el0: u64,
    // AArch32 EL1 only (`HCR_EL2.RW` = 0), switched only for such vCPUs
    // (`switch/aarch32.rs`): the banked SPSRs of the modes without an AArch64 counterpart
    // (`SPSR_svc` is `SPSR_EL1`), the domain access control and the instruction fault status
    // (`DACR`, `IFSR`; `DFSR` is `ESR_EL1`, `DFAR`/`IFAR` are the halves of `FAR_EL1`).
    pub spsr_abt: u64,
    pub spsr_und: u64,
    pub spsr_irq: u64,
    pub spsr_fiq: u64,
    pub dacr32_el2: u64,
    pub ifsr32_el2: u64,
}

/// Pointer-authentication keys (`AP*KEY*_EL1`), switched only when the CPU implements
/// FEAT_PAuth (then `HCR_EL2.API`/`APK` let the guest use them without traps).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct PauthKeys {
    pub apia: [u64; 2],
    pub apib: [u64; 2],
    pub apda: [u64; 2],
    pub apdb: [u64; 2],
    pub apga: [u64; 2],
}

/// FP/SIMD register file, switched lazily (first guest use traps through `CPTR_EL2`).
#[repr(C, align(16))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FpState {
    /// V0..V31 as 128-bit values.
    pub v: [u128; 32],
    /// `FPSR`.
    pub fpsr: u64,
    /// `FPCR`.
    pub fpcr: u64,
    /// `FPEXC32_EL2`: the AArch32 `FPEXC` of a vCPU whose EL1 is AArch32 (its `EN` bit
    /// enables VFP/Advanced SIMD); switched with the vCPU, unused otherwise.
    pub fpexc32: u64,
}

/// EL2 controls that differ per VM or vCPU and are installed by `vcpu_load`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VcpuControls {
    /// `HCR_EL2` while this vCPU runs (see [`crate::switch::controls::guest_hcr`] for each
    /// bit).
    pub hcr_el2: u64,
    /// `VTTBR_EL2`: the VM's stage-2 root table and VMID.
    pub vttbr_el2: u64,
    /// `VMPIDR_EL2`: the MPIDR the guest reads.
    pub vmpidr_el2: u64,
    /// `VPIDR_EL2`: the MIDR the guest reads.
    pub vpidr_el2: u64,
    /// `CNTVOFF_EL2`: the VM's virtual-counter offset.
    pub cntvoff_el2: u64,
    /// EL1 runs in AArch32 state (`HCR_EL2.RW` = 0, cleared by [`VcpuControls::hcr`]): the
    /// AArch32 registers are switched, the vCPU boots and starts in Supervisor mode.
    pub el1_aarch32: bool,
}

impl VcpuControls {
    /// The vCPU's EL1 is AArch32 (`HCR_EL2.RW` = 0): an ARMv7-A kernel runs in hardware.
    pub fn el1_is_aarch32(&self) -> bool {
        self.el1_aarch32
    }

    /// `HCR_EL2` as the world switch installs it: [`VcpuControls::hcr_el2`] with `RW`
    /// cleared for an AArch32 vCPU.
    pub fn hcr(&self) -> u64 {
        if self.el1_aarch32 {
            self.hcr_el2 & !HCR_EL2_RW
        } else {
            self.hcr_el2
        }
    }
}

/// `HCR_EL2.RW`: EL1 is AArch64.
const HCR_EL2_RW: u64 = HCR_EL2::RW::EL1IsAarch64.value;

/// Everything the world switch needs for one vCPU.
#[repr(C)]
#[derive(Debug, Clone, Default)]
pub struct VcpuContext {
    /// Registers saved by the entry/exit assembly on every switch.
    pub regs: GuestRegs,
    /// Guest EL1 system registers (authoritative copy only while not loaded: see
    /// [`crate::switch::WorldSwitch::el1_read`]).
    pub el1: El1SysRegs,
    /// Pointer-authentication keys.
    pub pauth: PauthKeys,
    /// FP/SIMD state (valid in memory unless `fp_loaded`).
    pub fp: FpState,
    /// True while the guest's FP/SIMD registers live in hardware.
    pub fp_loaded: bool,
    /// Per-vCPU EL2 controls.
    pub controls: VcpuControls,
}

/// `SPSR_EL2`/PSTATE for a vCPU that starts at EL1h with D, A, I and F masked, as the
/// arm64 boot protocol and PSCI CPU_ON require.
pub const PSTATE_EL1H_MASKED: u64 = 0x3c5;

/// `SCTLR_EL1` architectural reset value for an OS entered with the MMU off: only the RES1
/// bits (11, 20, 22, 23, 28, 29) set.
pub const SCTLR_EL1_RESET: u64 = 0x30d0_0800;

impl VcpuContext {
    /// A vCPU that will start at `entry` with `x0 = arg0` (the boot protocol's DTB pointer
    /// or PSCI's context id), MMU off, EL1h, interrupts masked.
    pub fn new_at(entry: u64, arg0: u64, controls: VcpuControls) -> Self {
        let mut ctx = Self {
            controls,
            ..Self::default()
        };
        ctx.reset_to(entry, arg0);
        ctx
    }

    /// A vCPU that will boot its OS at `entry` with the device tree at `dtb`
    /// ([`VcpuContext::reset_for_boot`]).
    pub fn new_for_boot(entry: u64, dtb: u64, controls: VcpuControls) -> Self {
        let mut ctx = Self {
            controls,
            ..Self::default()
        };
        ctx.reset_for_boot(entry, dtb);
        ctx
    }

    /// Puts the vCPU back into its power-on state at `entry` with `x0 = arg0` (used for
    /// PSCI CPU_ON: `arg0` is the context id). EL2 controls are kept. An AArch32 vCPU
    /// (`HCR_EL2.RW` = 0) starts in Supervisor mode, in T32 when bit 0 of `entry` is set.
    pub fn reset_to(&mut self, entry: u64, arg0: u64) {
        self.regs = GuestRegs::default();
        self.regs.x[0] = arg0;
        self.regs.pc = entry;
        self.regs.pstate = PSTATE_EL1H_MASKED;
        let mut sctlr = SCTLR_EL1_RESET;
        if self.controls.el1_is_aarch32() {
            (self.regs.pc, self.regs.pstate) = aarch32::start_state(entry);
            self.regs.x[0] = arg0 & u64::from(u32::MAX);
            sctlr = aarch32::SCTLR_RESET;
        }
        self.el1 = El1SysRegs {
            sctlr_el1: sctlr,
            ..El1SysRegs::default()
        };
        self.pauth = PauthKeys::default();
        self.fp = FpState::default();
        self.fp_loaded = false;
    }

    /// Puts the vCPU into the state its OS is booted in, at `entry` with the device tree at
    /// `dtb`: the arm64 boot protocol (`x0` = `dtb`), or for an AArch32 vCPU the ARM one
    /// (`r0` = 0, `r1` = ~0 "machine type from the device tree", `r2` = `dtb`; SVC mode,
    /// MMU and caches off, interrupts masked).
    pub fn reset_for_boot(&mut self, entry: u64, dtb: u64) {
        if self.controls.el1_is_aarch32() {
            self.reset_to(entry, 0);
            self.regs.x[1] = aarch32::MACH_TYPE_DT;
            self.regs.x[2] = dtb & u64::from(u32::MAX);
        } else {
            self.reset_to(entry, dtb);
        }
    }
}
