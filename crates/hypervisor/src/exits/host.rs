//! What the exit handlers need from the rest of the hypervisor, as small traits: the VM's
//! memory and devices, its virtual GIC, PSCI power state, vendor calls, the host CPU's ID
//! registers and the scheduler. `arch/vcpu_host.rs` implements them for a running vCPU;
//! the tests implement them with plain data.

use core::fmt;
use el2_core::exit::SysRegAccess;
use el2_core::mmio::{MmioAccess, MmioOutcome};
use el2_core::psci::PsciHost;
use vgic::SgiReg;
use vtimer::{TimerHost, VmCounter};

use crate::idregs::{IdPolicy, IdReg};

/// How a VM ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VmEnd {
    /// PSCI `SYSTEM_OFF` (or every vCPU called `CPU_OFF`).
    PowerOff,
    /// PSCI `SYSTEM_RESET`.
    Reset,
    /// The VM cannot continue (e.g. an SError); the reason was logged.
    Crashed,
}

/// Log lines about the guest. The host prefixes the VM's name; warnings (a refused guest
/// action) are rate limited so a guest cannot flood the console.
pub trait GuestLog {
    /// A refused or odd guest action (`[hv] warn: <vm>: ...`).
    fn warn(&mut self, args: fmt::Arguments<'_>);
    /// A notable guest action (`[hv] <vm>: ...`), e.g. PSCI `SYSTEM_OFF`.
    fn info(&mut self, args: fmt::Arguments<'_>);
}

/// What Stage 2 says about a page of guest RAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct S2Page {
    /// The page is in the dirty-log range (write-protected until first written).
    pub dirty_logged: bool,
    /// The page is mapped now (a racing change may have fixed the fault already).
    pub mapped: bool,
}

/// The VM's memory: guest RAM behind Stage 2.
pub trait VmMemory {
    /// Guest RAM: its first IPA and its size in bytes.
    fn ram(&self) -> (u64, u64);
    /// Reads the 64-bit word at `ipa` of guest RAM (for fetching an instruction through the
    /// guest's stage 1); `None` outside RAM or when misaligned.
    fn read_ram_u64(&self, ipa: u64) -> Option<u64>;
    /// The Stage-2 state of the RAM page holding `ipa`.
    fn s2_page(&self, ipa: u64) -> S2Page;
    /// A write fault on a dirty-logged page: marks it dirty and makes it writable again
    /// ([`stage2::Stage2Table::handle_write_fault`]).
    fn dirty_log_write(&mut self, ipa: u64) -> Result<(), stage2::Error>;

    /// `ipa` lies in guest RAM.
    fn ram_contains(&self, ipa: u64) -> bool {
        let (base, size) = self.ram();
        ipa.wrapping_sub(base) < size
    }
}

/// The VM's emulated devices.
pub trait Devices {
    /// One access on the VM's MMIO bus by this vCPU (`reg_value`: the transfer register of
    /// a store). The bus finds the device; the host forwards the interrupt lines it reports.
    fn mmio(&mut self, access: &MmioAccess, reg_value: u64) -> MmioOutcome;

    /// [`Devices::mmio`], also saying whether the access changed anything the run loop must
    /// act on before re-entering the guest: an interrupt line, a kick of any vCPU (this one
    /// included), backend work. The default answers "changed" (always correct, never fast).
    fn mmio_reporting(&mut self, access: &MmioAccess, reg_value: u64) -> (MmioOutcome, bool) {
        (self.mmio(access, reg_value), true)
    }

    /// Whether `access` needs the vCPU's list registers folded into the virtual GIC first:
    /// a vGIC register whose value or effect depends on the state of interrupts the list
    /// registers may hold (any other device, and a GICv2 `GICD_SGIR` write, which only
    /// makes SGIs pending, do not). The default answers yes (always correct, never fast).
    fn mmio_needs_lr_sync(&self, access: &MmioAccess) -> bool {
        let _ = access;
        true
    }
}

/// The VM's virtual GIC, as the vCPU's exits reach it.
pub trait Interrupts {
    /// A write to a GICv3 SGI-generation register (`ICC_SGI1R_EL1`...). `false` when the VM
    /// has no virtual GICv3 (the access is then an unknown register).
    fn write_sgi(&mut self, reg: SgiReg, value: u64) -> bool;
    /// [`Interrupts::write_sgi`], also saying whether the SGI was made pending for this vCPU
    /// itself (then the run loop flushes before re-entering the guest): `None` when the VM
    /// has no virtual GICv3 (nothing was done). The default answers "for this vCPU too"
    /// (always correct, never fast).
    fn write_sgi_reporting(&mut self, reg: SgiReg, value: u64) -> Option<bool> {
        self.write_sgi(reg, value).then_some(true)
    }
    /// Before the vCPU blocks in `WFI`: records its interface state and says whether an
    /// interrupt is pending for it (then it must not block).
    fn pending_for_wfi(&mut self) -> bool;
    /// A trapped guest GICv3 CPU-interface access (ThunderX 30115), emulated against the
    /// live virtual interface: `Some(Ok(Some(v)))` a read's value, `Some(Ok(None))` a write
    /// done, `None` when the host does not trap these (the access is then unknown).
    fn cpuif_access(
        &mut self,
        _reg: vgic::cpuif_trap::IccReg,
        _is_read: bool,
        _value: u64,
    ) -> Option<Result<Option<u64>, vgic::cpuif_trap::Refused>> {
        None
    }
}

/// PSCI power state of the vCPU and its VM, and waiting.
pub trait VcpuPower: PsciHost {
    /// PSCI `CPU_OFF` of this vCPU. Returns true when it was the last vCPU of the VM on.
    fn cpu_off(&mut self) -> bool;
    /// Ends the VM (the first call wins).
    fn end_vm(&mut self, how: VmEnd);
    /// Consumes a pending kick: something happened that ends a `WFI` at once.
    fn take_wake(&mut self) -> bool;
    /// The vCPU blocks in `WFI` until an interrupt, a kick, its timers, or physical counter
    /// value `timeout` (`WFIT`).
    fn block(&mut self, timeout: Option<u64>);
    /// The VM's virtual counter offset (`CNTVOFF_EL2`).
    fn counter(&self) -> VmCounter;
}

/// Vendor-specific hypervisor calls (SMCCC owner 6) served outside the exit handlers.
pub trait VendorCalls {
    /// Exits of reason index `index` this vCPU took before the current run-loop invocation;
    /// `None` for an index past the last reason.
    fn stored_exit_count(&self, index: usize) -> Option<u64>;
    /// A vendor call the hypervisor serves elsewhere (dirty logging): its result for x0, or
    /// `None` when `function_id` is not one of them.
    fn vendor_call(&mut self, function_id: u32, x1: u64, x2: u64) -> Option<i64>;
}

/// The physical CPU under the vCPU.
pub trait Platform {
    /// The hardware value of ID register `reg` (`op0=3, op1=0, CRn=0`).
    fn hw_id_register(&self, reg: IdReg) -> u64;
    /// What the guest may see of the hardware's features.
    fn id_policy(&self) -> IdPolicy;
    /// The value the guest reads from ID register `reg`: the hardware value sanitised by
    /// the policy (a host may answer from a table computed once).
    fn id_register(&self, reg: IdReg) -> u64 {
        crate::idregs::sanitize(reg, self.hw_id_register(reg), &self.id_policy())
    }
    /// A trapped access to the debug registers (`MDCR_EL2.TDA`): on the vCPU's first use,
    /// loads its breakpoint/watchpoint registers and stops trapping, and returns true (the
    /// guest re-executes the access untrapped). False for any other access.
    fn claim_debug_registers(&mut self, access: &SysRegAccess) -> bool;
}

/// What a physical interrupt that made the guest exit was about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HostIrqs {
    /// The loaded vCPU's virtual timer fired (its PPI stays active for the guest).
    pub vtimer: bool,
}

/// The scheduler, as the vCPU's exits reach it.
pub trait Scheduling {
    /// Acknowledges and handles the host's pending interrupts on this CPU.
    fn host_irqs(&mut self) -> HostIrqs;
    /// The vCPU's time slice is over and another vCPU waits for this CPU.
    fn slice_over(&mut self) -> bool;
}

/// Everything the exit handlers use, implemented by the hypervisor for a running vCPU
/// (with `vtimer`'s [`TimerHost`]: the counter, the timers' interrupt lines).
pub trait ExitHost:
    GuestLog
    + VmMemory
    + Devices
    + Interrupts
    + VcpuPower
    + VendorCalls
    + Platform
    + Scheduling
    + TimerHost
{
}

impl<T> ExitHost for T where
    T: GuestLog
        + VmMemory
        + Devices
        + Interrupts
        + VcpuPower
        + VendorCalls
        + Platform
        + Scheduling
        + TimerHost
{
}
