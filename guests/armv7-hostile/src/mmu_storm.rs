//! Page tables pointing anywhere (issue 17 stage C): the guest turns its short-descriptor
//! MMU on with a level-1 table of seeded random words (sections, supersections and
//! level-2 table pointers to anywhere in the 32-bit space: RAM, devices, nothing, its own
//! tables), keeping only its own 1 MiB (code, data, stack, vectors) and the PL011 identity
//! mapped in domain 0. Then, in rounds, it redraws entries, `TTBCR.N`, `DACR` (domain 0
//! stays client), the ASID, does random TLB maintenance (or none: stale entries are
//! allowed to stay), and makes loads at random virtual addresses (`LDR`, `LDRB`, `LDRH`,
//! `LDRD`, `LDM`, `LDRT`) and stores into a sandbox that random sections alias. Every
//! access completes or takes a data abort (counted, resumed). Afterwards the MMU goes off
//! and the guest checks that its own memory is intact.
//!
//! Under the DBT this drives the runtime's shadow stage 1 with arbitrary tables: fills,
//! declined fills (the interpreter's exact aborts), walks through device and unbacked
//! IPAs, supersections above 4 GiB, and invalidation.

use core::arch::asm;
use core::ptr::{addr_of, addr_of_mut, read_volatile, write_volatile};

use crate::rt::{counts, fail};
use crate::uart::{putdec, puts};

/// A short-descriptor level-1 table.
#[repr(C, align(16384))]
struct L1([u32; 4096]);

/// Level-2 tables (1 KiB each) with random entries, some of whose level-1 pointers lead
/// here.
#[repr(C, align(1024))]
struct L2s([u32; 1024]);

static mut TT: L1 = L1([0; 4096]);
static mut L2: L2s = L2s([0; 1024]);

/// The 1 MiB section holding this program (code, data, stack, vectors).
const OWN: u32 = 0x4000_0000;
/// The PL011's section.
const UART: u32 = 0x0900_0000;
/// The stores' sandbox: 1 MiB of RAM this program does not otherwise use.
const SANDBOX: u32 = 0x4600_0000;
/// A value kept in the program's own data, checked afterwards.
static mut CANARY: u32 = 0x5a5a_c3c3;

/// Rounds, and accesses per round.
const ROUNDS: u32 = 64;
const PER_ROUND: u32 = 64;

struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        // xorshift32: never 0 from a non-zero state.
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }
}

/// A random level-1 entry: a random word, biased so that a quarter are table pointers
/// into [`L2`], a quarter sections into the sandbox (random permissions), the rest
/// anything at all.
fn random_entry(r: &mut Rng) -> u32 {
    let w = r.next();
    match w >> 30 {
        0 => (addr_of!(L2) as u32 + (r.next() & 3) * 1024) | (w & 0x1e0) | 1,
        1 => SANDBOX | (w & 0x000b_8dfc) | 2,
        _ => r.next(),
    }
}

/// Entry `i` of the table (`own` entries fixed).
fn set_entry(i: usize, v: u32) {
    if i == (OWN >> 20) as usize || i == (UART >> 20) as usize {
        return;
    }
    // SAFETY: a table of this program's; the MMU may be using it (TLB maintenance after).
    unsafe { write_volatile(addr_of_mut!(TT.0[i]), v) };
}

fn fill(r: &mut Rng) {
    // SAFETY: tables of this program's, not in use yet.
    unsafe {
        for e in (*addr_of_mut!(L2)).0.iter_mut() {
            *e = r.next();
        }
        let tt = &mut *addr_of_mut!(TT);
        for e in tt.0.iter_mut() {
            *e = random_entry(r);
        }
        // Own section and the PL011: identity, AP = 0b11, domain 0, global.
        tt.0[(OWN >> 20) as usize] = OWN | 0xc0e;
        tt.0[(UART >> 20) as usize] = UART | 0xc12;
    }
}

/// `MCR p15` writes of the translation registers, then `ISB`.
fn set_regs(ttbcr_n: u32, dacr: u32, asid: u32) {
    let tt = addr_of!(TT) as u32;
    // SAFETY: both TTBRs hold the table, which maps this program whatever `N` is; domain
    // 0 stays client.
    unsafe {
        asm!(
            "mcr p15, 0, {n}, c2, c0, 2",
            "mcr p15, 0, {tt}, c2, c0, 0",
            "mcr p15, 0, {tt}, c2, c0, 1",
            "mcr p15, 0, {d}, c3, c0, 0",
            "mcr p15, 0, {a}, c13, c0, 1",
            "isb",
            n = in(reg) ttbcr_n & 7,
            tt = in(reg) tt,
            d = in(reg) (dacr & !3) | 1,
            a = in(reg) asid & 0xff,
            options(nostack),
        );
    }
}

/// A random TLB maintenance operation, or none; true if it invalidated every entry.
fn tlb_maintenance(r: &mut Rng) -> bool {
    let v = r.next();
    // SAFETY: TLB maintenance only.
    unsafe {
        match v & 7 {
            0 => asm!("mcr p15, 0, {}, c8, c7, 0", in(reg) 0),
            1 => asm!("mcr p15, 0, {}, c8, c7, 2", in(reg) v >> 8),
            2 => asm!("mcr p15, 0, {}, c8, c7, 1", in(reg) v),
            3 => asm!("mcr p15, 0, {}, c8, c7, 3", in(reg) v),
            4 => asm!("mcr p15, 0, {}, c8, c3, 0", in(reg) 0),
            _ => {}
        }
        asm!("dsb", "isb");
    }
    matches!(v & 7, 0 | 4)
}

/// One guarded access: `$insn` (operands `{a}`: the address, `r0`/`r1`: data) resumed
/// after if it aborts.
macro_rules! guarded {
    ($va:expr, $insn:literal) => {{
        let v: u32;
        // SAFETY: the access either completes or takes a data abort, after which the
        // vectors resume at the label (in SVC mode); r12 is theirs. Stores only go to
        // addresses the caller chose (the sandbox's aliases).
        unsafe {
            asm!(
                "adr r12, 2f",
                "str r12, [{res}]",
                "mov r0, #0",
                "mov r1, #0x55",
                $insn,
                "2:",
                a = in(reg) $va,
                res = in(reg) addr_of_mut!(crate::rt::RESUME),
                out("r0") v, out("r1") _, out("r12") _,
                options(nostack),
            );
        }
        v
    }};
}

/// Access kinds: loads, then the two stores.
const KINDS: u32 = 9;
const STORE_WORD: u32 = 7;
const STORE_BYTE: u32 = 8;

/// One access of kind `k` at `va`. Returns a value read.
fn access(k: u32, va: u32) -> u32 {
    match k {
        0 => guarded!(va, "ldr r0, [{a}]"),
        1 => guarded!(va, "ldrb r0, [{a}]"),
        2 => guarded!(va, "ldrh r0, [{a}]"),
        3 => guarded!(va, "ldrd r0, r1, [{a}]"),
        4 => guarded!(va, "ldm {a}, {{r0, r1}}"),
        5 => guarded!(va, "ldrt r0, [{a}]"),
        6 => guarded!(va, "ldrex r0, [{a}]"),
        STORE_WORD => guarded!(va, "str r1, [{a}]"),
        _ => guarded!(va, "strb r1, [{a}]"),
    }
}

fn sctlr() -> u32 {
    let v: u32;
    // SAFETY: reads SCTLR.
    unsafe { asm!("mrc p15, 0, {}, c1, c0, 0", out(reg) v, options(nomem, nostack)) };
    v
}

fn set_sctlr(v: u32) {
    // SAFETY: the program's own section is identity-mapped in the table, so turning the
    // MMU on or off moves nothing it uses.
    unsafe { asm!("dsb", "mcr p15, 0, {}, c1, c0, 0", "isb", in(reg) v, options(nostack)) };
}

/// Runs the phase with `seed`; prints the counts and fails on a broken invariant.
#[inline(never)]
pub fn run(seed: u32) {
    let mut r = Rng(seed | 1);
    // SAFETY: the sandbox is RAM of this VM that nothing else uses.
    unsafe { write_volatile(SANDBOX as *mut u32, 0) };
    fill(&mut r);
    set_regs(0, r.next(), 1);
    // SAFETY: TLB maintenance before the MMU goes on.
    unsafe { asm!("mcr p15, 0, {}, c8, c7, 0", "dsb", "isb", in(reg) 0) };
    let before = sctlr();
    set_sctlr(before | 1);
    let (_, a0) = counts();
    let (mut loads, mut stores) = (0u32, 0u32);
    let mut sum = 0u32;
    for _ in 0..ROUNDS {
        for _ in 0..16 {
            let i = (r.next() & 4095) as usize;
            let e = random_entry(&mut r);
            set_entry(i, e);
        }
        set_regs(r.next(), r.next(), r.next());
        // Stores only after every stale entry is gone: the table says where they go.
        let exact = tlb_maintenance(&mut r);
        for _ in 0..PER_ROUND {
            let w = r.next();
            let k = w % KINDS;
            let va = if k == STORE_WORD || k == STORE_BYTE {
                // A random word of a random virtual section: an alias of the sandbox
                // (random permissions), or skipped.
                let va = (r.next() & 0xfff0_0000) | (w & 0xffc);
                if !exact || !in_sandbox_alias(va) {
                    continue;
                }
                stores += 1;
                va
            } else {
                loads += 1;
                r.next() & if k == 3 { !7 } else { !3 }
            };
            sum = sum.wrapping_add(access(k, va));
        }
    }
    set_sctlr(before);
    // SAFETY: back to the reset translation state with the MMU off.
    unsafe { asm!("mcr p15, 0, {}, c8, c7, 0", "dsb", "isb", in(reg) 0) };
    set_regs(0, 1, 0);
    let (_, a1) = counts();
    // SAFETY: this program's own data.
    if unsafe { read_volatile(addr_of!(CANARY)) } != 0x5a5a_c3c3 {
        fail("own data changed by the page-table phase", 0);
    }
    core::hint::black_box(sum);
    puts("armv7-hostile: page tables pointing anywhere: ");
    putdec(ROUNDS);
    puts(" rounds, ");
    putdec(loads);
    puts(" loads, ");
    putdec(stores);
    puts(" stores tried, ");
    putdec(a1 - a0);
    puts(" data aborts: PASS\n");
}

/// Whether the level-1 entry for `va` is a section into the sandbox (a store there can
/// only change the sandbox, or abort).
fn in_sandbox_alias(va: u32) -> bool {
    // SAFETY: reads the program's own table.
    let e = unsafe { read_volatile(addr_of!(TT.0[(va >> 20) as usize])) };
    e & 3 == 2 && e & (1 << 18) == 0 && e & 0xfff0_0000 == SANDBOX
}
