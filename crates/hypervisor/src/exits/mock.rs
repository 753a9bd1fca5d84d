//! A world switch and a VM made of plain data, for running the exit handlers on the host:
//! the crate's own exit tests (`exits/tests`) and the `exit_dispatch` fuzz target (through
//! the `exit-mock` feature) drive the same mock.

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use core::fmt;
use el2_core::exit::SysRegAccess;
use el2_core::mmio::{
    AccessSize, MmioAccess, MmioBus, MmioCaller, MmioDevice, MmioError, MmioEvents, MmioOutcome,
    MmioResult,
};
use el2_core::psci::{AffinityState, PsciHost, PsciReturn};
use el2_core::switch::{el1_field, Backend, El1Reg, ExitKind, RawExit, WorldSwitch};
use el2_core::vcpu::VcpuContext;
use vgic::SgiReg;
use vtimer::{TimerHost, VcpuTimer, VmCounter};

use crate::exits::{
    self, Devices, ExitCtx, GuestLog, HostIrqs, Interrupts, Outcome, Platform, S2Page, Scheduling,
    VcpuPower, VendorCalls, VmEnd, VmMemory,
};
use crate::idregs::{IdPolicy, IdReg};
use crate::stats::ExitStats;

/// Guest RAM of the mock VM.
pub const RAM_BASE: u64 = 0x4000_0000;
/// Its size.
pub const RAM_SIZE: u64 = 0x10_0000;
/// A register-file device on the mock bus.
pub const DEV_BASE: u64 = 0x0900_0000;
/// Its size.
pub const DEV_SIZE: u64 = 0x1000;
/// The guest's `VBAR_EL1` in the tests.
pub const VBAR: u64 = 0x4008_0000;
/// Where the guest's PC starts.
pub const PC: u64 = 0x4000_1000;
/// `ESR_EL1` before an exit: any other value afterwards means an exception was injected.
pub const ESR_SENTINEL: u64 = 0xdead;

/// A backend whose EL1 registers live in the context (non-VHE between exits).
pub struct MemSwitch;

impl WorldSwitch for MemSwitch {
    fn backend(&self) -> Backend {
        Backend::NonVhe
    }
    unsafe fn vcpu_load(&self, _: &mut VcpuContext) {}
    unsafe fn run(&self, _: &mut VcpuContext) -> RawExit {
        RawExit {
            kind: ExitKind::Irq,
            esr: 0,
            far: 0,
            hpfar: 0,
        }
    }
    unsafe fn vcpu_put(&self, _: &mut VcpuContext) {}
    unsafe fn fp_trap(&self, v: &mut VcpuContext) {
        v.fp_loaded = true;
    }
    fn el1_read(&self, v: &VcpuContext, r: El1Reg) -> u64 {
        *el1_field(&mut v.el1.clone(), r)
    }
    fn el1_write(&self, v: &mut VcpuContext, r: El1Reg, val: u64) {
        *el1_field(&mut v.el1, r) = val;
    }
}

/// 32 bytes of registers (repeated over the region): reads return what was written; 64-bit
/// accesses abort. Its interrupt line ([`DEV_IRQ`]) follows bit 0 of the first byte.
#[derive(Default)]
struct RegisterFile {
    regs: [u8; 32],
}

/// The register file's interrupt.
pub const DEV_IRQ: u32 = 48;

impl MmioDevice for RegisterFile {
    fn read(&mut self, _: &mut MmioCaller<'_>, offset: u64, size: AccessSize) -> MmioResult<u64> {
        if size == AccessSize::Double {
            return Err(MmioError::ExternalAbort);
        }
        let mut v = 0u64;
        for i in 0..size.bytes() {
            let b = self
                .regs
                .get(((offset + i) % 32) as usize)
                .copied()
                .unwrap_or(0);
            v |= u64::from(b) << (8 * i);
        }
        Ok(v)
    }
    fn write(
        &mut self,
        caller: &mut MmioCaller<'_>,
        offset: u64,
        size: AccessSize,
        value: u64,
    ) -> MmioResult<()> {
        if size == AccessSize::Double {
            return Err(MmioError::ExternalAbort);
        }
        let was = self.regs[0] & 1 != 0;
        for i in 0..size.bytes() {
            self.regs[((offset + i) % 32) as usize] = (value >> (8 * i)) as u8;
        }
        let now = self.regs[0] & 1 != 0;
        if now != was {
            caller.events.set_irq_level(DEV_IRQ, now);
        }
        Ok(())
    }
}

/// The mock VM and everything around its vCPU.
pub struct MockVm {
    /// Warnings logged.
    pub warnings: Vec<String>,
    /// Other log lines.
    pub infos: Vec<String>,
    /// Guest RAM words (8-byte aligned IPA -> value).
    pub ram: BTreeMap<u64, u64>,
    /// Dirty-logged pages (page IPAs).
    pub dirty_logged: BTreeSet<u64>,
    /// Pages `dirty_log_write` marked dirty.
    pub dirtied: Vec<u64>,
    /// The MMIO bus.
    pub bus: MmioBus,
    /// Interrupt-line changes the devices reported.
    pub lines: Lines,
    /// A virtual GICv3 is there.
    pub has_gicv3: bool,
    /// SGI register writes.
    pub sgis: Vec<(SgiReg, u64)>,
    /// An interrupt is pending for the vCPU.
    pub irq_pending: bool,
    /// vCPUs on (index 0 is the one running).
    pub vcpus_on: Vec<bool>,
    /// How the VM ended.
    pub end: Option<VmEnd>,
    /// A kick is pending.
    pub wake: bool,
    /// The vCPU blocked, with this timeout.
    pub blocked: Option<Option<u64>>,
    /// The VM's counter offset.
    pub counter: VmCounter,
    /// The physical counter.
    pub now: u64,
    /// Exit counts stored before this run.
    pub stored: ExitStats,
    /// Vendor calls served outside (`fid`, x1, x2).
    pub vendor_calls: Vec<(u32, u64, u64)>,
    /// Hardware ID register values.
    pub id_regs: BTreeMap<(u8, u8), u64>,
    /// The vCPU's debug registers are live.
    pub debug_active: bool,
    /// The virtual timer fired (what the host's interrupt drain reports).
    pub vtimer_irq: bool,
    /// The time slice is over.
    pub slice_over: bool,
    /// Timer PPI levels reported.
    pub ppis: Vec<(u32, bool)>,
}

impl Default for MockVm {
    fn default() -> Self {
        MockVm::new()
    }
}

impl MockVm {
    /// Writes `bytes` into guest RAM at `ipa` (8-byte aligned), little-endian words.
    pub fn load_ram(&mut self, ipa: u64, bytes: &[u8]) {
        for (i, chunk) in bytes.chunks(8).enumerate() {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.ram
                .insert(ipa + 8 * i as u64, u64::from_le_bytes(word));
        }
    }

    /// A VM with one vCPU on, RAM, and a register file at [`DEV_BASE`].
    pub fn new() -> MockVm {
        let mut bus = MmioBus::new();
        bus.add(DEV_BASE, DEV_SIZE, "regs", Box::<RegisterFile>::default())
            .unwrap();
        MockVm {
            warnings: Vec::new(),
            infos: Vec::new(),
            ram: BTreeMap::new(),
            dirty_logged: BTreeSet::new(),
            dirtied: Vec::new(),
            bus,
            lines: Lines::default(),
            has_gicv3: true,
            sgis: Vec::new(),
            irq_pending: false,
            vcpus_on: vec![true, false],
            end: None,
            wake: false,
            blocked: None,
            counter: VmCounter::starting_at(1000),
            now: 5000,
            stored: ExitStats::default(),
            vendor_calls: Vec::new(),
            id_regs: BTreeMap::new(),
            debug_active: false,
            vtimer_irq: false,
            slice_over: false,
            ppis: Vec::new(),
        }
    }
}

impl GuestLog for MockVm {
    fn warn(&mut self, args: fmt::Arguments<'_>) {
        self.warnings.push(args.to_string());
    }
    fn info(&mut self, args: fmt::Arguments<'_>) {
        self.infos.push(args.to_string());
    }
}

impl VmMemory for MockVm {
    fn ram(&self) -> (u64, u64) {
        (RAM_BASE, RAM_SIZE)
    }
    fn read_ram_u64(&self, ipa: u64) -> Option<u64> {
        (ipa.is_multiple_of(8) && self.ram_contains(ipa))
            .then(|| self.ram.get(&ipa).copied().unwrap_or(0))
    }
    fn s2_page(&self, ipa: u64) -> S2Page {
        S2Page {
            dirty_logged: self.dirty_logged.contains(&(ipa & !0xfff)),
            mapped: true,
        }
    }
    fn dirty_log_write(&mut self, ipa: u64) -> Result<(), stage2::Error> {
        self.dirtied.push(ipa & !0xfff);
        Ok(())
    }
}

/// Records the interrupt-line changes devices report.
#[derive(Default)]
pub struct Lines(pub Vec<(u32, bool)>);

impl MmioEvents for Lines {
    fn set_irq_level(&mut self, intid: u32, level: bool) {
        self.0.push((intid, level));
    }
}

impl Devices for MockVm {
    fn mmio(&mut self, access: &MmioAccess, reg_value: u64) -> MmioOutcome {
        let mut caller = MmioCaller {
            vcpu: 0,
            events: &mut self.lines,
        };
        self.bus.dispatch(access, reg_value, &mut caller)
    }
    fn mmio_reporting(&mut self, access: &MmioAccess, reg_value: u64) -> (MmioOutcome, bool) {
        let before = self.lines.0.len();
        let outcome = self.mmio(access, reg_value);
        (outcome, self.lines.0.len() != before)
    }
}

impl Interrupts for MockVm {
    fn write_sgi(&mut self, reg: SgiReg, value: u64) -> bool {
        if self.has_gicv3 {
            self.sgis.push((reg, value));
        }
        self.has_gicv3
    }
    fn pending_for_wfi(&mut self) -> bool {
        self.irq_pending
    }
}

impl PsciHost for MockVm {
    fn cpu_on(&mut self, target: u64, _entry: u64, _context_id: u64) -> PsciReturn {
        match self.vcpus_on.get_mut(target as usize) {
            None => PsciReturn::InvalidParameters,
            Some(true) => PsciReturn::AlreadyOn,
            Some(on) => {
                *on = true;
                PsciReturn::Success
            }
        }
    }
    fn affinity_info(&self, target: u64) -> Result<AffinityState, PsciReturn> {
        match self.vcpus_on.get(target as usize) {
            None => Err(PsciReturn::InvalidParameters),
            Some(true) => Ok(AffinityState::On),
            Some(false) => Ok(AffinityState::Off),
        }
    }
}

impl VcpuPower for MockVm {
    fn cpu_off(&mut self) -> bool {
        self.vcpus_on[0] = false;
        self.vcpus_on.iter().all(|on| !on)
    }
    fn end_vm(&mut self, how: VmEnd) {
        self.end.get_or_insert(how);
    }
    fn take_wake(&mut self) -> bool {
        core::mem::take(&mut self.wake)
    }
    fn block(&mut self, timeout: Option<u64>) {
        self.blocked = Some(timeout);
    }
    fn counter(&self) -> VmCounter {
        self.counter
    }
}

impl TimerHost for MockVm {
    fn now(&self) -> u64 {
        self.now
    }
    fn set_irq_level(&mut self, intid: u32, level: bool) {
        self.ppis.push((intid, level));
    }
    fn phys_active(&self, _intid: u32) -> bool {
        false
    }
    fn set_phys_active(&mut self, _intid: u32, _active: bool) {}
}

impl VendorCalls for MockVm {
    fn stored_exit_count(&self, index: usize) -> Option<u64> {
        self.stored.get(index)
    }
    fn vendor_call(&mut self, function_id: u32, x1: u64, x2: u64) -> Option<i64> {
        (function_id == DIRTY_CALL).then(|| {
            self.vendor_calls.push((function_id, x1, x2));
            7
        })
    }
}

/// The vendor call the mock serves outside the handlers (returns 7).
pub const DIRTY_CALL: u32 = 0xc600_0003;

impl Platform for MockVm {
    fn hw_id_register(&self, reg: IdReg) -> u64 {
        self.id_regs.get(&(reg.crm, reg.op2)).copied().unwrap_or(0)
    }
    fn id_policy(&self) -> IdPolicy {
        IdPolicy {
            pauth: false,
            ipa_parange: 2,
        }
    }
    fn claim_debug_registers(&mut self, access: &SysRegAccess) -> bool {
        if access.op0 == 2 && !self.debug_active {
            self.debug_active = true;
            return true;
        }
        false
    }
}

impl Scheduling for MockVm {
    fn host_irqs(&mut self) -> HostIrqs {
        HostIrqs {
            vtimer: core::mem::take(&mut self.vtimer_irq),
        }
    }
    fn slice_over(&mut self) -> bool {
        self.slice_over
    }
}

/// A vCPU at EL1h with its vectors at [`VBAR`], the MMU off, `ESR_EL1` = [`ESR_SENTINEL`].
pub fn vcpu() -> VcpuContext {
    let mut v = VcpuContext::new_at(PC, 0, Default::default());
    v.el1.vbar_el1 = VBAR;
    v.el1.esr_el1 = ESR_SENTINEL;
    v.regs.pstate = EL1H;
    v
}

/// `PSTATE` of AArch64 EL1 with `SP_EL1`, interrupts masked.
pub const EL1H: u64 = 0x3c5;

/// Everything one exit works on, kept together so a test can look at it afterwards.
pub struct Rig {
    /// The vCPU.
    pub vcpu: VcpuContext,
    /// Its timers.
    pub timer: VcpuTimer,
    /// Its exit counters.
    pub stats: ExitStats,
    /// The VM.
    pub vm: MockVm,
}

impl Default for Rig {
    fn default() -> Self {
        Rig::new()
    }
}

impl Rig {
    /// A fresh vCPU and VM.
    pub fn new() -> Rig {
        Rig {
            vcpu: vcpu(),
            timer: VcpuTimer::default(),
            stats: ExitStats::default(),
            vm: MockVm::new(),
        }
    }

    /// Handles one exit.
    pub fn exit(&mut self, raw: RawExit) -> Outcome {
        let mut ctx = ExitCtx::new(
            raw,
            &mut self.vcpu,
            &mut self.timer,
            &mut self.stats,
            &MemSwitch,
            &mut self.vm,
        );
        exits::handle(&mut ctx)
    }

    /// Offers one synchronous exit to the fast path (`lrs_idle`: no list register in use).
    pub fn fast(&mut self, esr: u64, far: u64, hpfar: u64, lrs_idle: bool) -> exits::Fast {
        let raw = RawExit {
            kind: ExitKind::Sync,
            esr,
            far,
            hpfar,
        };
        let mut ctx = exits::FastCtx {
            vcpu: &mut self.vcpu,
            timer: &mut self.timer,
            stats: &mut self.stats,
            sw: &MemSwitch,
            vm: &mut self.vm,
        };
        exits::try_fast(&raw, &mut ctx, lrs_idle)
    }

    /// Handles one synchronous exit with syndrome `esr` (and `far`/`hpfar`).
    pub fn sync(&mut self, esr: u64, far: u64, hpfar: u64) -> Outcome {
        self.exit(RawExit {
            kind: ExitKind::Sync,
            esr,
            far,
            hpfar,
        })
    }

    /// An exception was injected into the guest during the exits so far.
    pub fn injected(&self) -> bool {
        self.vcpu.el1.esr_el1 != ESR_SENTINEL
    }
}
