//! What the storm did and what it got: operations by kind, failures (an answer that is not
//! the architectural one) with the first few described, and the summary lines.

use core::sync::atomic::{AtomicU64, Ordering};

use crate::vectors;

/// Kinds of operation, in the order of the summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// MRS of a random system-register encoding at EL1.
    SysregRead,
    /// MSR of a random encoding at EL1 (registers the storm itself depends on excluded).
    SysregWrite,
    /// SYS/SYSL (op0 = 1: cache, TLB, address-translation operations) at EL1.
    SysInsn,
    /// Single loads of every width (ISV = 1).
    Load,
    /// Single stores of every width (ISV = 1).
    Store,
    /// LDP/STP/LDNP/STNP (ISV = 0).
    Pair,
    /// Pre/post-indexed loads and stores (writeback, ISV = 0).
    Writeback,
    /// Load/store exclusive and acquire/release.
    Exclusive,
    /// LSE atomics (LDADD, SWP, CAS, STADD).
    Atomic,
    /// SIMD and FP loads/stores (LD1/ST1/LD4/LD1R, LDR Q/D/S/B).
    Simd,
    /// Data-cache operations by VA on the target (DC ZVA, CIVAC, CVAC).
    CacheOp,
    /// Unprivileged loads/stores (LDTR/STTR) at EL1.
    Unpriv,
    /// Instruction fetch from unmapped IPA, device memory or beyond the IPA size.
    Fetch,
    /// Stores of random values to the vGIC's registers.
    GicWrite,
    /// HVC with a random non-zero immediate.
    HvcImm,
    /// SMCCC calls (HVC #0) with random function IDs and arguments.
    Smccc,
    /// SMC with random immediates, function IDs and arguments.
    Smc,
    /// PSCI calls with valid and invalid arguments.
    Psci,
    /// CPU_ON/CPU_OFF/AFFINITY_INFO races between the vCPUs.
    CpuOnOff,
    /// Dirty-log calls with good and bad ranges and buffers.
    DirtyLog,
    /// Malformed virtqueues (loops, out-of-RAM buffers, huge lengths, jumping indices).
    Virtq,
    /// WFI (with the virtual timer armed).
    Wfi,
    /// WFE.
    Wfe,
    /// Random system-register encodings at EL0.
    El0Sysreg,
    /// Loads/stores of every form at EL0.
    El0Access,
    /// HVC, SMC, WFI, WFE at EL0.
    El0Misc,
    /// The closing sweep of loads over the whole IPA space.
    Sweep,
}

/// Number of kinds.
pub const KINDS: usize = 27;

/// Names in the summary, by kind.
pub const NAMES: [&str; KINDS] = [
    "sysreg-read",
    "sysreg-write",
    "sys-insn",
    "load",
    "store",
    "pair",
    "writeback",
    "exclusive",
    "atomic",
    "simd",
    "cache-op",
    "unpriv",
    "fetch",
    "gic-write",
    "hvc-imm",
    "smccc",
    "smc",
    "psci",
    "cpu-on-off",
    "dirty-log",
    "virtq",
    "wfi",
    "wfe",
    "el0-sysreg",
    "el0-access",
    "el0-misc",
    "ipa-sweep",
];

static COUNTS: [AtomicU64; KINDS] = [const { AtomicU64::new(0) }; KINDS];
static FAILURES: AtomicU64 = AtomicU64::new(0);
static LEAKS: AtomicU64 = AtomicU64::new(0);
/// Failures described in full; later ones are only counted.
const DESCRIBED: u64 = 12;

/// Counts one operation of `kind`.
pub fn count(kind: Kind) {
    COUNTS[kind as usize].fetch_add(1, Ordering::Relaxed);
}

/// Operations so far, all kinds.
pub fn total() -> u64 {
    COUNTS.iter().map(|c| c.load(Ordering::Relaxed)).sum()
}

/// Records a wrong answer and describes it (the first few).
pub fn fail(kind: Kind, what: core::fmt::Arguments<'_>) {
    let n = FAILURES.fetch_add(1, Ordering::Relaxed);
    if n < DESCRIBED {
        guest_rt::println!(
            "storm: FAIL cpu {} op {} {}: {}",
            vectors::cpu(),
            total(),
            NAMES[kind as usize],
            what
        );
    }
}

/// Records that a load returned the neighbour VM's pattern.
pub fn leak(kind: Kind, what: core::fmt::Arguments<'_>) {
    LEAKS.fetch_add(1, Ordering::Relaxed);
    fail(kind, format_args!("NEIGHBOUR PATTERN SEEN: {what}"));
}

/// Failures so far.
pub fn failures() -> u64 {
    FAILURES.load(Ordering::Relaxed)
}

/// Loads that saw the neighbour's pattern.
pub fn leaks() -> u64 {
    LEAKS.load(Ordering::Relaxed)
}

/// Prints the per-kind counts and the exceptions by class.
pub fn print_summary() {
    let mut line = Line::new("storm: ops by kind:");
    for (name, c) in NAMES.iter().zip(&COUNTS) {
        line.push(format_args!(" {}={}", name, c.load(Ordering::Relaxed)));
    }
    line.finish();
    let mut line = Line::new("storm: exceptions by class:");
    for ec in 0..vectors::CLASSES {
        let n = vectors::class_count(ec);
        if n > 0 {
            line.push(format_args!(" {:#04x}({})={}", ec, ec_name(ec as u64), n));
        }
    }
    line.finish();
}

/// A short name for an exception class.
pub fn ec_name(ec: u64) -> &'static str {
    match ec {
        0x00 => "undef",
        0x01 => "wfx",
        0x07 => "fp",
        0x15 => "svc",
        0x18 => "sysreg-trap",
        0x19 => "sve",
        0x20 => "iabt-el0",
        0x21 => "iabt",
        0x22 => "pc-align",
        0x24 => "dabt-el0",
        0x25 => "dabt",
        0x26 => "sp-align",
        0x3c => "brk",
        _ => "other",
    }
}

/// A console line built in pieces and wrapped at about 100 characters.
struct Line {
    buf: [u8; 160],
    len: usize,
    head: &'static str,
}

impl Line {
    fn new(head: &'static str) -> Self {
        Line {
            buf: [0; 160],
            len: 0,
            head,
        }
    }

    fn push(&mut self, piece: core::fmt::Arguments<'_>) {
        let mut tmp = Buf {
            buf: [0; 64],
            len: 0,
        };
        let _ = core::fmt::write(&mut tmp, piece);
        if self.len + tmp.len > 100 {
            self.flush();
        }
        self.buf[self.len..self.len + tmp.len].copy_from_slice(&tmp.buf[..tmp.len]);
        self.len += tmp.len;
    }

    fn flush(&mut self) {
        let s = core::str::from_utf8(&self.buf[..self.len]).unwrap_or("?");
        guest_rt::println!("{}{}", self.head, s);
        self.len = 0;
    }

    fn finish(mut self) {
        if self.len > 0 {
            self.flush();
        }
    }
}

struct Buf {
    buf: [u8; 64],
    len: usize,
}

impl core::fmt::Write for Buf {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}
