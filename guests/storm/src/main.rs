//! `storm`: a seeded random generator of hostile operations at EL1 and EL0 that checks
//! every answer it can (see `ops/` for each kind and what is checked), and, with
//! `role=neighbour`, the workload of the VM beside it (see [`neighbour`]).
//!
//! Command line (`/chosen/bootargs`): `seed=N` (decimal or 0x-hex; printed first, so any
//! run is repeated from its output), `ops=N` (operations in all, default 20000),
//! `role=neighbour rounds=N`.
//!
//! The storm runs on every vCPU of its VM: vCPU 0 starts the others with PSCI `CPU_ON`;
//! each of them runs a batch of operations and calls `CPU_OFF`, while vCPU 0 races
//! `CPU_ON`/`AFFINITY_INFO` against it. At the end the storm scans its own RAM for the
//! neighbour's pattern, checks a canary page, prints operations by kind, exceptions by
//! class and `storm: verdict PASS|FAIL ...`, and ends with `SYSTEM_OFF` (or
//! `SYSTEM_RESET` on failure).
#![no_std]
#![no_main]

mod code;
mod neighbour;
mod ops;
mod paging;
mod rng;
mod tally;
mod targets;
mod vectors;

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use aarch64_cpu::registers::{Writeable, CNTKCTL_EL1};
use guest_rt::platform::Platform;
use guest_rt::{psci, smp};

use ops::Ctx;
use rng::Rng;
use tally::Kind;
use targets::Targets;

/// Upper half of every word of the neighbour VM's RAM pattern ("NEIG").
pub const NEIGH_TAG: u32 = 0x4e45_4947;
/// Upper half of every word of the neighbour's disk pattern ("DISK").
pub const DISK_TAG: u32 = 0x4449_534b;

/// The neighbour's RAM word at IPA `ipa`.
pub fn neighbour_word(ipa: u64) -> u64 {
    (u64::from(NEIGH_TAG) << 32) | u64::from((ipa >> 3) as u32 ^ 0x5a5a_5a5a)
}

/// True if `v` carries the neighbour's tag.
pub fn neighbour_tag(v: u64) -> bool {
    (v >> 32) as u32 == NEIGH_TAG
}

/// Operations by default.
const DEFAULT_OPS: u64 = 20_000;

guest_rt::entry!(main);

/// What every vCPU of the storm shares.
struct Shared {
    targets: UnsafeCell<Option<Targets>>,
    gic: UnsafeCell<Option<guest_rt::platform::GicInfo>>,
}

// SAFETY: written once by vCPU 0 before it starts any other vCPU, read-only afterwards.
unsafe impl Sync for Shared {}

static SHARED: Shared = Shared {
    targets: UnsafeCell::new(None),
    gic: UnsafeCell::new(None),
};
static SEED: AtomicU64 = AtomicU64::new(0);
static TIMER_PPI: AtomicU64 = AtomicU64::new(27);
static PL011: AtomicU64 = AtomicU64::new(0);
/// `trace=N`: operations each vCPU prints before running them.
static TRACE: AtomicU64 = AtomicU64::new(0);
static DONE: AtomicBool = AtomicBool::new(false);
/// Batches run by the secondary vCPUs (each is a fresh CPU_ON).
static BATCHES: AtomicU64 = AtomicU64::new(0);

#[repr(C, align(4096))]
struct El0Stacks(UnsafeCell<[[u8; 4096]; vectors::MAX_CPUS]>);
// SAFETY: each vCPU uses only its own stack, and only from EL0 code that never touches it.
unsafe impl Sync for El0Stacks {}
static EL0_STACKS: El0Stacks = El0Stacks(UnsafeCell::new([[0; 4096]; vectors::MAX_CPUS]));

fn parse_num(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn arg(bootargs: &str, key: &str) -> Option<u64> {
    bootargs
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=').and_then(parse_num))
}

fn main(dtb: usize) -> ! {
    let plat = match Platform::from_dtb(dtb) {
        Ok(p) => p,
        Err(e) => {
            guest_rt::println!("storm: FAIL device tree: {e}");
            psci::system_reset()
        }
    };
    if plat.bootarg("role=neighbour") {
        neighbour::run(&plat, arg(plat.bootargs, "rounds").unwrap_or(4));
    }
    let seed = match arg(plat.bootargs, "seed") {
        Some(s) => s,
        None => {
            guest_rt::println!("storm: no seed=N on the command line; using 1");
            1
        }
    };
    let ops = arg(plat.bootargs, "ops").unwrap_or(DEFAULT_OPS);
    SEED.store(seed, Ordering::Relaxed);
    TRACE.store(arg(plat.bootargs, "trace").unwrap_or(0), Ordering::Relaxed);
    let ipa_bits = guest_rt::probe::pa_bits();
    let t = match Targets::from_dtb(dtb, ipa_bits) {
        Ok(t) => t,
        Err(e) => {
            guest_rt::println!("storm: FAIL device tree: {e}");
            psci::system_reset()
        }
    };
    guest_rt::println!(
        "storm: seed {seed} ops {ops} vcpus {} ipa-bits {ipa_bits} ram {:#x}..{:#x} devices {}",
        t.ncpus,
        t.ram,
        t.ram_end,
        t.nregions
    );
    for r in t.regions() {
        guest_rt::println!("storm: device {:?} {:#x} +{:#x}", r.kind, r.base, r.size);
    }
    if let Some(r) = t
        .regions()
        .iter()
        .find(|r| r.kind == targets::DevKind::Pl011)
    {
        PL011.store(r.base, Ordering::Relaxed);
    }
    TIMER_PPI.store(u64::from(plat.timer.virt), Ordering::Relaxed);
    // SAFETY: no other vCPU runs yet (see `Shared`).
    unsafe {
        *SHARED.targets.get() = Some(t);
        *SHARED.gic.get() = Some(plat.gic);
    }
    guest_rt::mmu::enable();
    paging::install();
    setup_cpu();
    let _ = guest_rt::gic::init(&plat.gic);
    fill_canary();

    let mut ctx = make_ctx(0);
    let cpus: [u64; 8] = shared_targets().mpidrs;
    let ncpus = shared_targets().ncpus.min(vectors::MAX_CPUS);
    let me = smp::this_mpidr();
    for &m in &cpus[..ncpus] {
        if m != me {
            start_other(m, &mut ctx);
        }
    }
    let mut next_progress = ops / 4;
    while tally::total() < ops {
        ops::run_one(&mut ctx, &mut |c| race(c, &cpus[..ncpus], me));
        if tally::total() >= next_progress {
            guest_rt::println!(
                "storm: progress {} ops, {} failures",
                tally::total(),
                tally::failures()
            );
            next_progress += ops / 4;
        }
    }
    DONE.store(true, Ordering::SeqCst);
    finish(&cpus[..ncpus], me, seed, ops)
}

/// The shared layout (set before any secondary starts).
fn shared_targets() -> &'static Targets {
    // SAFETY: see `Shared`: written once before this can be called, never again.
    unsafe { (*SHARED.targets.get()).as_ref() }.expect("targets set by vCPU 0")
}

/// Per-vCPU setup: vectors, EL0 timer access off (EL0 timer accesses trap to EL1).
fn setup_cpu() {
    vectors::install();
    CNTKCTL_EL1.set(0);
}

fn make_ctx(cpu: usize) -> Ctx<'static> {
    let t = shared_targets();
    let scratch = t.scratch(cpu);
    let ret_page = scratch + 3 * targets::CPU_SCRATCH_SIZE / 4;
    ops::fetch::init(ret_page);
    // SAFETY: only the address of this vCPU's stack is taken.
    let stack = unsafe { (*EL0_STACKS.0.get())[cpu].as_ptr() } as u64 + 4096;
    Ctx {
        rng: Rng::new(
            SEED.load(Ordering::Relaxed),
            cpu as u64 + 1 + 0x100 * BATCHES.load(Ordering::Relaxed),
        ),
        cpu,
        targets: t,
        // SAFETY: see `Shared`.
        gic: unsafe { (*SHARED.gic.get()).expect("gic set by vCPU 0") },
        timer_ppi: TIMER_PPI.load(Ordering::Relaxed) as u32,
        lse: (read_sysreg_isar0() >> 20) & 0xf >= 2,
        zva64: read_dczid() & 0x1f == 4,
        el0_sp: paging::el0_alias(stack),
        ret_page,
        trace: TRACE.load(Ordering::Relaxed),
    }
}

/// Entry of a secondary vCPU (after guest-rt's start-up with its identity map): one batch
/// of operations, then back to guest-rt, which calls CPU_OFF.
fn secondary(_arg: usize) {
    paging::load();
    setup_cpu();
    let _ = guest_rt::gic::init_cpu();
    let mut ctx = make_ctx(vectors::cpu());
    BATCHES.fetch_add(1, Ordering::Relaxed);
    let batch = 50 + ctx.rng.below(400);
    for _ in 0..batch {
        if DONE.load(Ordering::Relaxed) {
            break;
        }
        ops::run_one(&mut ctx, &mut |_| {});
    }
}

/// Starts the vCPU `mpidr` on [`secondary`]; returns the PSCI result.
fn start_other(mpidr: u64, _ctx: &mut Ctx) -> i64 {
    smp::start_secondary(mpidr, secondary, 0).unwrap_or(-2)
}

/// The CPU_ON/OFF race: CPU_ON of another vCPU whatever its state (it may be running,
/// turning itself off, or off), AFFINITY_INFO right after.
fn race(ctx: &mut Ctx, cpus: &[u64], me: u64) {
    let Some(&other) = cpus.iter().find(|&&m| m != me) else {
        return;
    };
    tally::count(Kind::CpuOnOff);
    let before = psci::affinity_info(other, 0);
    let r = start_other(other, ctx);
    let after = psci::affinity_info(other, 0);
    // 0 SUCCESS, -4 ALREADY_ON, -5 ON_PENDING; AFFINITY_INFO: 0 ON, 1 OFF, 2 ON_PENDING
    let ok = matches!(r, 0 | -4 | -5) && matches!(before, 0..=2) && matches!(after, 0..=2);
    if !ok {
        tally::fail(
            Kind::CpuOnOff,
            format_args!("CPU_ON({other:#x}) = {r}, AFFINITY_INFO before {before}, after {after}"),
        );
    }
}

/// Waits for the other vCPUs to be off, scans RAM, prints the figures and the verdict.
fn finish(cpus: &[u64], me: u64, seed: u64, ops: u64) -> ! {
    for &m in cpus.iter().filter(|&&m| m != me) {
        let mut polls = 0u64;
        while psci::affinity_info(m, 0) != 1 {
            polls += 1;
            if polls > 2_000_000 {
                tally::fail(Kind::CpuOnOff, format_args!("vCPU {m:#x} never turned off"));
                break;
            }
        }
    }
    // leave no dirty log running
    let _ = guest_rt::smccc::call3(guest_rt::smccc::Conduit::Hvc, 0xc600_0005, 0, 0, 0);
    let mut ctx = make_ctx(0);
    let aborted = ops::mem::sweep(&mut ctx);
    guest_rt::println!(
        "storm: swept the IPA space outside RAM and devices ({} bits): {aborted} loads, all aborted unless reported",
        shared_targets().ipa_bits
    );
    scan_ram();
    check_canary(Kind::Virtq);
    tally::print_summary();
    guest_rt::println!(
        "storm: {} batches on secondary vCPUs, {} loads saw the neighbour's pattern",
        BATCHES.load(Ordering::Relaxed),
        tally::leaks()
    );
    let failures = tally::failures();
    let verdict = if failures == 0 { "PASS" } else { "FAIL" };
    guest_rt::println!(
        "storm: verdict {verdict} seed {seed} ops {} failures {failures}",
        tally::total().max(ops)
    );
    if failures == 0 {
        psci::system_off()
    }
    psci::system_reset()
}

/// Scans all of this VM's RAM for the neighbour's pattern at the same offset.
fn scan_ram() {
    let t = shared_targets();
    let mut hits = 0u64;
    let mut a = t.ram;
    while a < t.ram_end {
        // SAFETY: RAM is identity mapped (Normal memory); reading it has no effect.
        let v = unsafe { core::ptr::read_volatile(a as *const u64) };
        if v == neighbour_word(a) {
            hits += 1;
            if hits == 1 {
                tally::leak(Kind::Load, format_args!("own RAM at {a:#x} holds {v:#x}"));
            }
        }
        a += 8;
    }
    guest_rt::println!(
        "storm: scanned {} MiB of own RAM for the neighbour's pattern: {hits} words",
        (t.ram_end - t.ram) >> 20
    );
}

/// The canary page between the storm's memory and the areas devices may write.
fn canary_page() -> u64 {
    shared_targets().writable_floor() - 4096
}

fn canary_word(i: u64) -> u64 {
    0xca4a_7a11_0000_0000 | i
}

fn fill_canary() {
    let p = canary_page();
    for i in 0..512 {
        // SAFETY: the canary page is RAM the storm reserves for it.
        unsafe { ((p + 8 * i) as *mut u64).write_volatile(canary_word(i)) };
    }
}

/// Checks the canary page is intact (nothing wrote outside the areas allowed to it).
pub fn check_canary(kind: Kind) {
    let p = canary_page();
    for i in 0..512 {
        // SAFETY: as in `fill_canary`.
        let v = unsafe { ((p + 8 * i) as *const u64).read_volatile() };
        if v != canary_word(i) {
            tally::fail(
                kind,
                format_args!("canary at {:#x} overwritten: {v:#x}", p + 8 * i),
            );
            fill_canary();
            return;
        }
    }
}

/// Puts the console's control register back (random writes may have set loopback).
pub fn console_repair() {
    let base = PL011.load(Ordering::Relaxed);
    if base != 0 {
        // SAFETY: UARTCR of the PL011 in the identity-mapped device gigabyte.
        unsafe { ((base + 0x30) as *mut u32).write_volatile(0x301) };
    }
}

/// `ID_AA64ISAR0_EL1` (the `Atomic` field is bits 23:20).
fn read_sysreg_isar0() -> u64 {
    let v: u64;
    // SAFETY: reading an ID register has no side effects.
    unsafe { core::arch::asm!("mrs {}, id_aa64isar0_el1", out(reg) v, options(nomem, nostack)) };
    v
}

/// `DCZID_EL0` (`BS` bits 3:0, `DZP` bit 4).
fn read_dczid() -> u64 {
    let v: u64;
    // SAFETY: reading DCZID_EL0 has no side effects.
    unsafe { core::arch::asm!("mrs {}, dczid_el0", out(reg) v, options(nomem, nostack)) };
    v
}

/// Start of the loaded image (its first 16 KiB are never written).
pub fn image_start() -> u64 {
    // SAFETY: linker-script symbol; only its address is taken.
    unsafe extern "C" {
        static __image_start: u8;
    }
    core::ptr::addr_of!(__image_start) as u64
}
