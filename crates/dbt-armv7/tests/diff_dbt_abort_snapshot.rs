//! Guest Data Aborts from a remembered verdict with the MMU on, against the interpreter:
//! `a64::deliver_guest_abort` (what the runtime's EL1 vector calls when translated code
//! faults at a load that took the guest's Data Abort before) for one recorded load, while
//! the guest's tables change between faults WITHOUT TLB maintenance. Each step sets the
//! tables, then the same load faults: the handler's answer (abort taken or not; `DFSR`,
//! `DFAR`, `SPSR_abt`, `LR_abt`, the mode, `CPSR`, the vector, the budget) must be what
//! `Cpu::step` does with the same load. A32 and Thumb, short descriptors and LPAE.
//!
//! The steps: an invalid level-1 entry (learnt by a walk), the same again (from the
//! verdict: no descriptor read through the bus), a level-1 entry naming a table whose
//! entry is invalid (walked: the level-1 descriptor changed), the same again (verdict), a
//! valid level-2 entry written without maintenance (the load must map, not abort again),
//! invalid again (the verdict again: the descriptors hold what its walk read), the level-1 entry naming another invalid table (walked), the
//! same again (verdict), and that table's entry made valid (maps). A handler that did not
//! compare the descriptors, or compared only the level-1 one, would abort at a step where
//! the interpreter loads.

use dbt_armv7::bus::{Bus, BusFault, FlatRam};
use dbt_armv7::cpu::{psr, Cpu, Mode};
use dbt_armv7::decode::{decode_a32, decode_thumb};
use dbt_armv7::translate::a64::{deliver_guest_abort, deliver_remembered, BUDGET, IBTC, STATE};
use dbt_armv7::translate::fault_sites::FaultSites;
use dbt_armv7::translate::state::{GuestState, IBTC_ENTRIES};
use dbt_armv7::translate::sys_call::CallCtx;

/// Guest RAM (1 MiB, identity-mapped): tables at its start, the code, the vectors.
const RAM: u64 = 0x8000_0000;
const CODE: u32 = 0x8008_0000;
const VBAR: u32 = 0x8009_0000;
/// The address the load faults at (outside RAM's mapping until a step maps it).
const VA: u32 = 0x5000_0040;
/// Where a step's valid short-descriptor entry maps `VA`'s page, and the word at `VA`.
const DATA: u64 = RAM + 0xa_0000;
const WORD: u32 = 0x1234_5678;
/// The load's host address (a fake code cache), the vector's translated block, the
/// epilogue.
const HOST: u64 = 0x1040;
const CACHE: core::ops::Range<u64> = 0x1000..0x2000;
const VECTOR_HOST: u64 = 0x1f00;
const EPILOGUE: u64 = 0x1ff0;
const SP: u32 = 0x8007_0000;
const LR: u32 = 0x8006_1234;
const SP_ABT: u32 = 0x8007_8000;
/// NZCV the translated code holds in the host flags (Z and C).
const FLAGS: u64 = 0x6000_0000;

/// Guest RAM that counts the reads made through `read` (the walks').
struct Counting {
    ram: FlatRam,
    reads: u32,
}

impl Bus for Counting {
    fn read(&mut self, pa: u64, size: u8) -> Result<u64, BusFault> {
        self.reads += 1;
        self.ram.read(pa, size)
    }
    fn write(&mut self, pa: u64, size: u8, v: u64) -> Result<(), BusFault> {
        self.ram.write(pa, size, v)
    }
    fn ram(&mut self, pa: u64) -> Option<&[u8]> {
        self.ram.ram(pa)
    }
}

/// The table format under test.
#[derive(Clone, Copy, Debug)]
enum Format {
    Short,
    Lpae,
}

/// Table locations and descriptors of one format.
struct Tables {
    format: Format,
}

impl Tables {
    /// Two level-2 tables that can cover `VA`.
    const L2: [u64; 2] = [RAM + 0x4000, RAM + 0x5000];

    fn put(&self, bus: &mut Counting, pa: u64, v: u64) {
        let size = match self.format {
            Format::Short => 4,
            Format::Lpae => 8,
        };
        bus.ram.write(pa, size, v).unwrap();
    }

    /// The first-level entry for `VA` and the level-2 one in table `t`.
    fn l1_slot(&self) -> u64 {
        match self.format {
            Format::Short => RAM + 4 * (VA >> 20) as u64,
            Format::Lpae => RAM + 8 * (VA >> 30) as u64,
        }
    }
    fn l2_slot(&self, t: usize) -> u64 {
        match self.format {
            Format::Short => Self::L2[t] + 4 * ((VA >> 12) & 0xff) as u64,
            Format::Lpae => Self::L2[t] + 8 * ((VA >> 21) & 0x1ff) as u64,
        }
    }
    /// A level-1 entry naming table `t`.
    fn table(&self, t: usize) -> u64 {
        match self.format {
            Format::Short => Self::L2[t] | 0b01,
            Format::Lpae => Self::L2[t] | 0b11,
        }
    }
    /// A valid level-2 entry mapping `VA`'s page (PL1 read/write) at `DATA`.
    fn valid(&self) -> u64 {
        match self.format {
            Format::Short => DATA | 0b11 << 4 | 0b10,
            // A 2 MiB block at RAM's start.
            Format::Lpae => RAM | 1 << 10 | 0b01,
        }
    }

    /// Where `VA` lands through [`Tables::valid`].
    fn data_pa(&self) -> u64 {
        match self.format {
            Format::Short => DATA + (VA & 0xfff) as u64,
            Format::Lpae => RAM + (VA & 0x1f_ffff) as u64,
        }
    }

    /// RAM with the identity map of RAM's first MiB (code, vectors, tables, data).
    fn ram(&self) -> Counting {
        let mut bus = Counting {
            ram: FlatRam::new(RAM, 0x10_0000),
            reads: 0,
        };
        match self.format {
            Format::Short => {
                let slot = RAM + 4 * (RAM >> 20);
                self.put(&mut bus, slot, RAM | 0b11 << 10 | 0b10);
            }
            Format::Lpae => {
                let l2 = RAM + 0x1000;
                self.put(&mut bus, RAM + 8 * (RAM >> 30), l2 | 0b11);
                self.put(
                    &mut bus,
                    l2 + 8 * ((RAM >> 21) & 0x1ff),
                    RAM | 1 << 10 | 0b01,
                );
            }
        }
        bus.ram.write(self.data_pa(), 4, WORD as u64).unwrap();
        bus
    }
}

/// A CPU about to run the load at `CODE` (MMU on, SVC mode, r9 + 4 = `VA`).
fn cpu(format: Format, thumb: bool) -> Cpu {
    let mut c = Cpu::new();
    c.cp15.ttbr0 = RAM;
    c.cp15.dacr = 1;
    c.cp15.vbar = VBAR;
    if let Format::Lpae = format {
        c.cp15.ttbcr = 1 << 31;
    }
    c.cp15.sctlr |= 1;
    c.set_cpsr(Mode::Svc as u32 | psr::I | psr::F | psr::A | FLAGS as u32);
    if thumb {
        c.set_cpsr(c.cpsr() | psr::T);
    }
    c.set_banked_reg(Mode::Abt, 13, SP_ABT);
    c.set_reg(9, VA - 4);
    c.set_reg(13, SP);
    c.set_reg(14, LR);
    c.set_pc(CODE);
    c
}

/// What one fault at the load does, through the handler (`fast`) and the interpreter.
struct Outcome {
    delivered: bool,
    reads: u32,
    /// Delivered by `deliver_remembered` (the vector's first call, a verdict that holds).
    remembered: bool,
}

/// Runs the load once through the handler as the runtime's vector calls it
/// (`deliver_remembered`, then `deliver_guest_abort` if that declines; `sites` kept across
/// steps) and once through `Cpu::step`, and checks that they agree.
fn fault(bus: &mut Counting, sites: &mut FaultSites, format: Format, thumb: bool) -> Outcome {
    let what = format!("{format:?} thumb {thumb}");
    let mut fast = cpu(format, thumb);
    let mut interp = cpu(format, thumb);
    let before = interp.icount;
    interp.step(bus);
    let aborted = interp.mode() == Mode::Abt;

    let mut call = CallCtx {
        cpu: &mut fast,
        bus: &mut *bus as &mut dyn Bus as *mut dyn Bus,
        exit: None,
        counted: 0,
        space: None,
    };
    let mut st = GuestState {
        fault_sites: sites as *mut FaultSites as u64,
        ..GuestState::default()
    };
    st.link_site = &mut call as *mut CallCtx<'_> as u64;
    let vector = VBAR + 0x10;
    let mut ibtc = vec![[0u64; 2]; IBTC_ENTRIES];
    ibtc[(vector as usize >> 2) % IBTC_ENTRIES] = [vector as u64, VECTOR_HOST];
    let mut x = [0u64; 31];
    for (r, v) in x.iter_mut().enumerate().take(15) {
        *v = cpu(format, thumb).reg(r) as u64;
    }
    x[STATE as usize] = &mut st as *mut GuestState as u64;
    x[BUDGET as usize] = 100;
    x[IBTC as usize] = ibtc.as_ptr() as u64;
    let x0 = x;
    let mut pc = HOST;
    bus.reads = 0;
    let site = *sites.get(HOST).expect("the recorded site");
    // SAFETY: `x` is a translated context of this engine state (`st`: the sites, the
    // CPU and bus through `call`), all alive for the call; FlatRam keeps its RAM in place;
    // `site` is HOST's.
    let remembered =
        unsafe { deliver_remembered(&mut x, &mut pc, FLAGS, VA as u64, &site, EPILOGUE) };
    let delivered = remembered || {
        assert_eq!(
            (x, pc),
            (x0, HOST),
            "{what}: a declined verdict changes nothing"
        );
        assert_eq!(
            fast.cpsr(),
            cpu(format, thumb).cpsr(),
            "{what}: nor the CPSR"
        );
        // SAFETY: as for `deliver_remembered`.
        unsafe { deliver_guest_abort(&mut x, &mut pc, FLAGS, VA as u64, CACHE, EPILOGUE, false) }
    };
    // SAFETY: `call.bus` is `bus`, no longer used through the pointer.
    let reads = unsafe { (*(call.bus as *mut Counting)).reads };
    assert_eq!(
        delivered, aborted,
        "{what}: abort taken by the handler vs the interpreter"
    );
    if !delivered {
        assert_eq!(
            (x, pc),
            (x0, HOST),
            "{what}: a declined fault changes nothing"
        );
        assert_eq!(interp.reg(2), WORD, "{what}: the interpreter's load");
        return Outcome {
            delivered,
            reads,
            remembered,
        };
    }
    assert_eq!(pc, VECTOR_HOST, "{what}: goes on at the vector's block");
    assert_eq!(
        (x[13] as u32, x[14] as u32),
        (interp.reg(13), interp.reg(14)),
        "{what}: SP and LR of Abort mode"
    );
    assert_eq!(
        (fast.cpsr(), fast.spsr(), fast.mode(), fast.reg(15)),
        (interp.cpsr(), interp.spsr(), interp.mode(), interp.reg(15)),
        "{what}: CPSR, SPSR_abt, mode, PC"
    );
    assert_eq!(
        (fast.cp15.dfsr, fast.cp15.dfar),
        (interp.cp15.dfsr, interp.cp15.dfar),
        "{what}: DFSR, DFAR"
    );
    assert_eq!(
        fast.banked_reg(Mode::Svc, 13),
        interp.banked_reg(Mode::Svc, 13),
        "{what}: SVC's banked SP"
    );
    assert_eq!(
        100 - x[BUDGET as usize],
        interp.icount - before,
        "{what}: instructions charged"
    );
    Outcome {
        delivered,
        reads,
        remembered,
    }
}

/// A step: its name, the descriptor it writes (physical address, value), whether the
/// load aborts, and how many descriptors the handler reads through the bus (0: the
/// remembered verdict answered).
type Step = (&'static str, Option<(u64, u64)>, bool, u32);

fn run(format: Format, thumb: bool) {
    let t = Tables { format };
    let mut bus = t.ram();
    if thumb {
        bus.ram.write(CODE as u64, 2, 0xf8d9).unwrap(); // ldr.w r2, [r9, #4]
        bus.ram.write(CODE as u64 + 2, 2, 0x2004).unwrap();
    } else {
        bus.ram.write(CODE as u64, 4, 0xe599_2004).unwrap(); // ldr r2, [r9, #4]
    }
    let insn = if thumb {
        decode_thumb(0xf8d9, 0x2004)
    } else {
        decode_a32(0xe599_2004)
    };
    let mut sites = FaultSites::default();
    sites.record(HOST, CODE | thumb as u32, 0, 0, &insn);
    let what = format!("{format:?} thumb {thumb}");
    let (l1, l2a, l2b) = (t.l1_slot(), t.l2_slot(0), t.l2_slot(1));
    // (what the step writes, abort expected, descriptors read by the handler's walk: 0
    // means the remembered verdict answered).
    let steps: [Step; 9] = [
        ("invalid level 1", None, true, 1),
        ("same", None, true, 0),
        ("level 1 -> table A", Some((l1, t.table(0))), true, 2),
        ("same", None, true, 0),
        ("valid level 2 in A", Some((l2a, t.valid())), false, 2),
        ("invalid level 2 in A", Some((l2a, 0)), true, 0),
        ("level 1 -> table B", Some((l1, t.table(1))), true, 2),
        ("same", None, true, 0),
        ("valid level 2 in B", Some((l2b, t.valid())), false, 2),
    ];
    for (k, (name, write, abort, walk_reads)) in steps.into_iter().enumerate() {
        if let Some((pa, v)) = write {
            t.put(&mut bus, pa, v);
        }
        let o = fault(&mut bus, &mut sites, format, thumb);
        assert_eq!(o.delivered, abort, "{what} step {k} ({name})");
        assert_eq!(o.reads, walk_reads, "{what} step {k} ({name}): bus reads");
        assert_eq!(
            o.remembered,
            abort && walk_reads == 0,
            "{what} step {k} ({name}): from the verdict alone"
        );
    }
    assert_eq!(sites.delivered, 7, "{what}");
}

#[test]
fn remembered_verdicts_agree_with_the_interpreter_as_the_tables_change_without_maintenance() {
    for format in [Format::Short, Format::Lpae] {
        for thumb in [false, true] {
            run(format, thumb);
        }
    }
}
