//! The toy host: a fake system counter and one vCPU whose timers the vtimer model runs.
//!
//! What a real hypervisor does in hardware is marked where the toy does it in memory:
//! reading `CNTPCT_EL0` (the fake counter), saving the guest's `CNTV_CTL_EL0`/`CNTV_CVAL_EL0`
//! at `vcpu_put`, setting PPI levels in the virtual GIC, and arming its EL2 timer for a
//! blocked vCPU's wake-up (the toy "sleeps" by moving the fake counter forward).

use vtimer::{
    wake_deadline, PhysTimer, PhysTimerReg, TimerState, VmCounter, PHYS_TIMER_PPI, VIRT_TIMER_PPI,
};

use crate::trap::SysRegTrap;

/// Frequency of the fake system counter (`CNTFRQ_EL0`): 100 MHz.
pub const COUNTER_HZ: u64 = 100_000_000;
/// Counter ticks per millisecond.
pub const TICKS_PER_MS: u64 = COUNTER_HZ / 1_000;
/// Register number that reads as zero and ignores writes (`XZR`).
const XZR: u8 = 31;

/// The system counter, `CNTPCT_EL0`, under the host's control.
#[derive(Debug)]
pub struct FakeCounter {
    now: u64,
}

impl FakeCounter {
    /// A counter that reads `start` now.
    pub fn new(start: u64) -> Self {
        Self { now: start }
    }

    /// `CNTPCT_EL0`.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Time passes.
    pub fn advance(&mut self, ticks: u64) {
        self.now += ticks;
    }
}

/// Which timer PPIs the host currently asserts towards the vCPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lines {
    /// PPI 27, the virtual timer (forwarded through a hardware-mapped list register).
    pub virt: bool,
    /// PPI 30, the emulated physical timer.
    pub phys: bool,
}

/// A VM with one vCPU, as the host keeps it.
#[derive(Debug)]
pub struct ToyHost {
    /// The system counter.
    pub counter: FakeCounter,
    /// The VM's `CNTVOFF_EL2`.
    pub vm: VmCounter,
    /// The vCPU's emulated EL1 physical timer.
    pub ptimer: PhysTimer,
    /// The vCPU's virtual timer as saved at `vcpu_put` (`CNTV_CTL_EL0`, `CNTV_CVAL_EL0`).
    pub vtimer: TimerState,
    /// The vCPU's `X0..X30`.
    pub x: [u64; XZR as usize],
    /// The timer PPI levels last handed to the virtual GIC.
    pub lines: Lines,
    /// Trapped accesses answered with an UNDEFINED exception.
    pub undefined: usize,
}

impl ToyHost {
    /// Creates the VM now: its virtual counter starts at zero.
    pub fn create_vm(counter: FakeCounter) -> Self {
        let vm = VmCounter::starting_at(counter.now());
        Self {
            counter,
            vm,
            ptimer: PhysTimer::default(),
            vtimer: TimerState::default(),
            x: [0; XZR as usize],
            lines: Lines::default(),
            undefined: 0,
        }
    }

    /// The guest's virtual counter (`CNTVCT_EL0`, read by the guest without a trap).
    pub fn virtual_now(&self) -> u64 {
        self.vm.virtual_now(self.counter.now())
    }

    /// `Xn`, with 31 reading as zero.
    pub fn reg(&self, n: u8) -> u64 {
        self.x.get(usize::from(n)).copied().unwrap_or(0)
    }

    /// Sets `Xn`; writes to 31 are discarded.
    pub fn set_reg(&mut self, n: u8, value: u64) {
        if let Some(r) = self.x.get_mut(usize::from(n)) {
            *r = value;
        }
    }

    /// A trapped `MSR`/`MRS` with syndrome `iss` (`ESR_EL2.EC` = 0x18). `CNTHCTL_EL2.EL1PCEN`
    /// = 0 traps the physical-timer registers; the model answers them.
    pub fn sysreg_trap(&mut self, name: &str, iss: u32) {
        let t = SysRegTrap::from_iss(iss);
        let now = self.counter.now();
        match PhysTimerReg::from_encoding(t.op0, t.op1, t.crn, t.crm, t.op2) {
            Some(reg) if t.is_read => {
                let value = self.ptimer.read(reg, now);
                self.set_reg(t.rt, value);
                println!(
                    "[host]   trap: mrs x{}, {name} -> {value:#x} ({reg:?})",
                    t.rt
                );
            }
            Some(reg) => {
                let value = self.reg(t.rt);
                self.ptimer.write(reg, value, now);
                println!(
                    "[host]   trap: msr {name}, x{} = {value:#x} ({reg:?})",
                    t.rt
                );
            }
            None => {
                self.undefined += 1;
                println!("[host]   trap: {name} is not a timer register -> UNDEFINED");
            }
        }
        self.update_lines();
    }

    /// The guest programs its virtual timer. No trap: it writes the hardware registers, and
    /// the host sees the values when `vcpu_put` saves them.
    pub fn guest_sets_vtimer(&mut self, ctl: u64, cval: u64) {
        self.vtimer.write_ctl(ctl);
        self.vtimer.cval = cval;
        self.update_lines();
    }

    /// The vCPU executes `WFI`: the host blocks it until its next timer deadline and returns
    /// that deadline (physical counter time), or `None` when no timer can wake it.
    pub fn wfi(&mut self) -> Option<u64> {
        let deadline = wake_deadline(&self.vtimer, &self.vm, &self.ptimer);
        match deadline {
            Some(at) => {
                let wait = at.saturating_sub(self.counter.now());
                println!(
                    "[host]   wfi: wake-up due in {} ms (CNTPCT {at:#x}): EL2 timer armed",
                    ms(wait)
                );
                self.counter.advance(wait);
            }
            None => println!(
                "[host]   wfi: no timer can fire: the vCPU sleeps until an interrupt or a kick"
            ),
        }
        self.update_lines();
        deadline
    }

    /// Recomputes both timer outputs at the current counter value and hands changes to the
    /// (here: imaginary) virtual GIC.
    fn update_lines(&mut self) {
        let now = self.counter.now();
        let lines = Lines {
            virt: self.vtimer.asserted(self.vm.virtual_now(now)),
            phys: self.ptimer.irq_level(now),
        };
        for (ppi, was, is, what) in [
            (VIRT_TIMER_PPI, self.lines.virt, lines.virt, "virtual timer"),
            (
                PHYS_TIMER_PPI,
                self.lines.phys,
                lines.phys,
                "physical timer",
            ),
        ] {
            if was != is {
                let level = if is { "asserted" } else { "deasserted" };
                println!(
                    "[host]   PPI {ppi} ({what}) {level} at t = {} ms",
                    ms(self.virtual_now())
                );
            }
        }
        self.lines = lines;
    }
}

/// Counter ticks as milliseconds with three decimals.
pub fn ms(ticks: u64) -> String {
    /// Counter ticks per microsecond.
    const TICKS_PER_US: u64 = COUNTER_HZ / 1_000_000;
    /// Microseconds per millisecond.
    const US_PER_MS: u64 = 1_000;
    let us = ticks / TICKS_PER_US;
    format!("{}.{:03}", us / US_PER_MS, us % US_PER_MS)
}
