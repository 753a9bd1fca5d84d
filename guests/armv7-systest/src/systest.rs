//! The test program proper (ARM only).

use core::arch::{asm, global_asm};
use core::ptr::{addr_of, addr_of_mut, read_volatile, write_volatile};

use crate::uart::{puthex, puts};

global_asm!(
    r#"
    .section .text.start, "ax"
    .arm
    .global _start
_start:
    ldr r0, =_stack_top
    cps #0x11
    sub sp, r0, #0x2000
    cps #0x12
    sub sp, r0, #0x3000
    cps #0x17
    sub sp, r0, #0x4000
    cps #0x1b
    sub sp, r0, #0x5000
    cps #0x1f
    sub sp, r0, #0x6000
    cps #0x13
    mov sp, r0
    ldr r1, =vectors
    mcr p15, 0, r1, c12, c0, 0
    isb
    bl main
1:  b 1b

    .section .text.vectors, "ax"
    .balign 32
    .global vectors
vectors:
    b _start
    b und_entry
    b svc_entry
    b pabt_entry
    b dabt_entry
    b .
    b irq_entry
    b fiq_entry

    .macro ENTRY name, mode, kind
\name:
    srsdb sp!, #\mode
    push {{r0-r12}}
    mov r0, #\kind
    mov r1, sp
    sub sp, sp, #4
    bl exc_handler
    add sp, sp, #4
    pop {{r0-r12}}
    rfeia sp!
    .endm

    ENTRY und_entry, 0x1b, 1
    ENTRY svc_entry, 0x13, 2
    ENTRY pabt_entry, 0x17, 3
    ENTRY dabt_entry, 0x17, 4
    ENTRY irq_entry, 0x12, 6
    ENTRY fiq_entry, 0x11, 7

    .text
    .thumb
    .thumb_func
    .global thumb_probe
thumb_probe:
    push {{lr}}
    svc #0x45
    udf #9
    movs r0, #0
    cmp r0, #0
    itte eq
    addeq r0, #3
    addeq r0, #4
    addne r0, #100
    pop {{pc}}
    .arm
"#
);

/// Exception counts by kind (1 und, 2 svc, 3 prefetch abort, 4 data abort, 6 irq, 7 fiq).
static mut COUNT: [u32; 8] = [0; 8];
/// Mode the last exception was taken from.
static mut FROM_MODE: u32 = 0;
/// SPSR.T of the last exception (taken from Thumb state).
static mut FROM_THUMB: bool = false;
/// SVC immediate of the last SVC.
static mut SVC_IMM: u32 = 0;
/// Return address override for the next exception (0 = none).
#[no_mangle]
static mut RECOVER: u32 = 0;
static mut FAILS: u32 = 0;

fn mrc_dfsr() -> u32 {
    let v: u32;
    // SAFETY: reads DFSR, no side effects.
    unsafe { asm!("mrc p15, 0, {}, c5, c0, 0", out(reg) v) };
    v
}

fn mrc_dfar() -> u32 {
    let v: u32;
    // SAFETY: reads DFAR.
    unsafe { asm!("mrc p15, 0, {}, c6, c0, 0", out(reg) v) };
    v
}

fn mrc_ifsr() -> u32 {
    let v: u32;
    // SAFETY: reads IFSR.
    unsafe { asm!("mrc p15, 0, {}, c5, c0, 1", out(reg) v) };
    v
}

fn mrc_ifar() -> u32 {
    let v: u32;
    // SAFETY: reads IFAR.
    unsafe { asm!("mrc p15, 0, {}, c6, c0, 2", out(reg) v) };
    v
}

/// Called by every vector with the saved frame: r0-r12, return address, SPSR.
#[no_mangle]
extern "C" fn exc_handler(kind: u32, frame: *mut u32) {
    // SAFETY: `frame` points at the 15-word frame the vector stub pushed; statics are only
    // touched by this single-core program.
    unsafe {
        let lr = frame.add(13);
        let spsr = frame.add(14);
        COUNT[kind as usize & 7] += 1;
        FROM_MODE = *spsr & 0x1f;
        FROM_THUMB = *spsr & (1 << 5) != 0;
        match kind {
            2 => {
                let imm = if FROM_THUMB {
                    (read_volatile((*lr - 2) as *const u16) & 0xff) as u32
                } else {
                    read_volatile((*lr - 4) as *const u32) & 0xff_ffff
                };
                SVC_IMM = imm;
                if imm == 1 {
                    // "return to SVC mode": used to leave User mode.
                    *spsr = (*spsr & !0x1f) | 0x13;
                }
            }
            3 => *lr -= 4,
            4 => *lr -= 8,
            _ => {}
        }
        if RECOVER != 0 {
            *lr = RECOVER;
            RECOVER = 0;
        }
    }
}

fn check(name: &str, ok: bool) {
    puts("armv7-systest: ");
    puts(name);
    if ok {
        puts(" ok\n");
    } else {
        puts(" FAILED\n");
        // SAFETY: single-core counter.
        unsafe { FAILS += 1 };
    }
}

fn counts() -> [u32; 8] {
    // SAFETY: plain read of the counters.
    unsafe { read_volatile(addr_of!(COUNT)) }
}

/// Loads from `addr`, resuming after the load if it aborts. Returns (value, aborted).
fn try_read(addr: u32) -> (u32, bool) {
    let before = counts()[4];
    let mut v: u32 = 0xdead_beef;
    // SAFETY: the exception handler resumes at label 2 if the load aborts.
    unsafe {
        asm!(
            "adr {t}, 2f",
            "str {t}, [{rec}]",
            "ldr {v}, [{a}]",
            "2:",
            "mov {t}, #0",
            "str {t}, [{rec}]",
            a = in(reg) addr,
            v = inout(reg) v,
            t = out(reg) _,
            rec = in(reg) addr_of_mut!(RECOVER),
        );
    }
    (v, counts()[4] != before)
}

/// Stores to `addr`, resuming after the store if it aborts. Returns whether it aborted.
fn try_write(addr: u32, v: u32) -> bool {
    let before = counts()[4];
    // SAFETY: as `try_read`.
    unsafe {
        asm!(
            "adr {t}, 2f",
            "str {t}, [{rec}]",
            "str {v}, [{a}]",
            "2:",
            "mov {t}, #0",
            "str {t}, [{rec}]",
            a = in(reg) addr,
            v = in(reg) v,
            t = out(reg) _,
            rec = in(reg) addr_of_mut!(RECOVER),
        );
    }
    counts()[4] != before
}

/// `LDRT` from `addr` (User-mode permissions). Returns whether it aborted.
fn try_ldrt(addr: u32) -> bool {
    let before = counts()[4];
    // SAFETY: as `try_read`.
    unsafe {
        asm!(
            "adr {t}, 2f",
            "str {t}, [{rec}]",
            "ldrt {v}, [{a}]",
            "2:",
            "mov {t}, #0",
            "str {t}, [{rec}]",
            a = in(reg) addr,
            v = out(reg) _,
            t = out(reg) _,
            rec = in(reg) addr_of_mut!(RECOVER),
        );
    }
    counts()[4] != before
}

/// Calls code at `addr` (which returns with `bx lr`), resuming if the fetch aborts.
fn try_exec(addr: u32) -> bool {
    let before = counts()[3];
    // SAFETY: the target is a `bx lr` stub; the handler resumes at label 2 on abort.
    unsafe {
        asm!(
            "adr {t}, 2f",
            "str {t}, [{rec}]",
            "blx {a}",
            "2:",
            "mov {t}, #0",
            "str {t}, [{rec}]",
            a = in(reg) addr,
            t = out(reg) _,
            rec = in(reg) addr_of_mut!(RECOVER),
            out("lr") _,
        );
    }
    counts()[3] != before
}

/// Drops to User mode, loads from `addr` there, and returns to SVC mode with `SVC #1`.
/// Returns whether the User-mode load aborted.
fn user_read(addr: u32) -> bool {
    let before = counts()[4];
    // SAFETY: no stack use in User mode; the abort handler resumes at label 2 (still in
    // User mode) and `svc #1` returns to SVC mode at label 3.
    unsafe {
        asm!(
            "adr {t}, 2f",
            "str {t}, [{rec}]",
            "cps #0x10",
            "ldr {v}, [{a}]",
            "2:",
            "svc #1",
            "mov {t}, #0",
            "str {t}, [{rec}]",
            a = in(reg) addr,
            v = out(reg) _,
            t = out(reg) _,
            rec = in(reg) addr_of_mut!(RECOVER),
            out("lr") _,
        );
    }
    counts()[4] != before
}

fn fs_short(fsr: u32) -> u32 {
    (fsr & 0xf) | ((fsr >> 6) & 0x10)
}

fn cpsr() -> u32 {
    let v: u32;
    // SAFETY: reads CPSR.
    unsafe { asm!("mrs {}, cpsr", out(reg) v) };
    v
}

fn test_modes() {
    // Banked SP in every mode, r8 banked in FIQ.
    let mut sps = [0u32; 6];
    let mut r8s = [0u32; 2];
    // SAFETY: switches modes without touching the stack and returns to SVC.
    unsafe {
        asm!(
            "mov r8, #0x55",
            "cps #0x11", "mov r8, #0xaa", "mov {a}, sp",
            "cps #0x12", "mov {b}, sp",
            "cps #0x17", "mov {c}, sp",
            "cps #0x1b", "mov {d}, sp",
            "cps #0x1f", "mov {e}, sp",
            "cps #0x11", "mov {f}, r8",
            "cps #0x13", "mov {g}, r8",
            a = out(reg) sps[0], b = out(reg) sps[1], c = out(reg) sps[2], d = out(reg) sps[3],
            e = out(reg) sps[4], f = out(reg) r8s[0], g = out(reg) r8s[1],
            out("r8") _,
        );
    }
    let svc_sp: u32;
    // SAFETY: reads SP.
    unsafe { asm!("mov {}, sp", out(reg) svc_sp) };
    sps[5] = svc_sp;
    let distinct = (0..6).all(|i| (0..6).all(|j| i == j || sps[i] != sps[j]));
    check("banked sp in fiq/irq/abt/und/sys/svc", distinct);
    check("banked r8 in fiq", r8s == [0xaa, 0x55]);
    check("running in svc mode", cpsr() & 0x1f == 0x13);
}

fn test_svc_undef() {
    let c0 = counts();
    // SAFETY: SVC from SVC mode clobbers LR_svc only.
    unsafe { asm!("svc #0x42", out("lr") _) };
    let c1 = counts();
    // SAFETY: reads the statics set by the handler.
    let (imm, from) = unsafe { (SVC_IMM, FROM_MODE) };
    check(
        "svc from svc mode",
        c1[2] == c0[2] + 1 && imm == 0x42 && from == 0x13,
    );
    // SVC from System mode returns to System mode.
    let mut mode_after: u32;
    // SAFETY: System mode shares the User stack, which is not used here.
    unsafe {
        asm!("cps #0x1f", "svc #0x43", "mrs {m}, cpsr", "cps #0x13", m = out(reg) mode_after, out("lr") _)
    };
    // SAFETY: as above.
    let from = unsafe { FROM_MODE };
    check(
        "svc from sys mode and return",
        from == 0x1f && mode_after & 0x1f == 0x1f,
    );
    // Undefined instruction from SVC and from IRQ mode.
    // SAFETY: the undef handler returns to the next instruction.
    unsafe { asm!("udf #7") };
    let c2 = counts();
    let from = unsafe { FROM_MODE };
    check(
        "undefined instruction from svc mode",
        c2[1] == c1[1] + 1 && from == 0x13,
    );
    // SAFETY: IRQ mode has its own stack; nothing uses it here.
    unsafe { asm!("cps #0x12", "udf #8", "mrs {m}, cpsr", "cps #0x13", m = out(reg) mode_after) };
    let from = unsafe { FROM_MODE };
    check(
        "undefined instruction from irq mode and return",
        from == 0x12 && mode_after & 0x1f == 0x12,
    );
    // Abort mode: SVC taken from ABT returns to ABT.
    unsafe {
        asm!("cps #0x17", "svc #0x44", "mrs {m}, cpsr", "cps #0x13", m = out(reg) mode_after, out("lr") _)
    };
    let from = unsafe { FROM_MODE };
    check(
        "svc from abt mode and return",
        from == 0x17 && mode_after & 0x1f == 0x17,
    );
    // User mode and back through SVC #1.
    let before = counts()[2];
    let mut m_user: u32;
    unsafe { asm!("cps #0x10", "mrs {m}, cpsr", "svc #1", m = out(reg) m_user, out("lr") _) };
    check(
        "user mode entry and svc return",
        m_user & 0x1f == 0x10 && counts()[2] == before + 1 && cpsr() & 0x1f == 0x13,
    );
}

extern "C" {
    fn thumb_probe() -> u32;
}

fn test_thumb() {
    let c0 = counts();
    // SAFETY: `thumb_probe` is a Thumb leaf function following the AAPCS.
    let r = unsafe { thumb_probe() };
    let c1 = counts();
    // SAFETY: reads the statics set by the handler.
    let (imm, thumb) = unsafe { (SVC_IMM, FROM_THUMB) };
    check("svc from thumb state", c1[2] == c0[2] + 1 && imm == 0x45);
    check(
        "undefined instruction from thumb state",
        c1[1] == c0[1] + 1 && thumb,
    );
    check("return to thumb state and IT block", r == 7);
}

#[repr(C, align(16384))]
struct L1([u32; 4096]);
#[repr(C, align(4096))]
struct Page([u32; 1024]);
#[repr(C, align(4096))]
struct Lpae([u64; 512]);

static mut TT: L1 = L1([0; 4096]);
static mut L2: Page = Page([0; 1024]);
static mut DATA: Page = Page([0; 1024]);
static mut CODE: Page = Page([0; 1024]);
static mut LP1: Lpae = Lpae([0; 512]);
static mut LP2: Lpae = Lpae([0; 512]);
static mut LP3: Lpae = Lpae([0; 512]);

fn sctlr() -> u32 {
    let v: u32;
    // SAFETY: reads SCTLR.
    unsafe { asm!("mrc p15, 0, {}, c1, c0, 0", out(reg) v) };
    v
}

fn set_sctlr(v: u32) {
    // SAFETY: the identity map covers all code and data, so turning the MMU on or off
    // does not move anything.
    unsafe { asm!("dsb", "mcr p15, 0, {}, c1, c0, 0", "isb", in(reg) v) };
}

fn tlbiall() {
    // SAFETY: TLB maintenance only.
    unsafe { asm!("mov {t}, #0", "mcr p15, 0, {t}, c8, c7, 0", "dsb", "isb", t = out(reg) _) };
}

const VA: u32 = 0x8000_0000;

fn test_short_mmu() {
    // SAFETY: page tables are private statics; the map is identity for all RAM.
    unsafe {
        let tt = &mut *addr_of_mut!(TT);
        let l2 = &mut *addr_of_mut!(L2);
        tt.0.iter_mut().for_each(|e| *e = 0);
        l2.0.iter_mut().for_each(|e| *e = 0);
        // UART: strongly-ordered, XN
        tt.0[0x090] = 0x0900_0000 | 0xc12;
        // RAM 0x40000000..0x48000000: normal WB, full access, domain 0
        for s in 0..128u32 {
            tt.0[(0x400 + s) as usize] = (0x4000_0000 + (s << 20)) | 0xc0e;
        }
        // 0x80000000: small pages
        tt.0[0x800] = addr_of!(L2) as u32 | 1;
        // 0x90000000: a section in domain 1 (no access)
        tt.0[0x900] = 0x4000_0000 | 0xc0e | 1 << 5;
        let data = addr_of!(DATA) as u32;
        let code = addr_of!(CODE) as u32;
        l2.0[0] = data | 0x03e; // RW, all
        l2.0[1] = data | 0x21e; // APX=1 AP=01: privileged read-only
        l2.0[2] = code | 0x03f; // XN
        l2.0[3] = data | 0x01e; // AP=01: privileged only
                                // l2[4] stays a fault entry
        let dp = addr_of_mut!(DATA) as *mut u32;
        write_volatile(dp, 0x1234_5678);
        write_volatile(addr_of_mut!(CODE) as *mut u32, 0xe12f_ff1e); // bx lr
        asm!(
            "mov {t}, #0",
            "mcr p15, 0, {t}, c2, c0, 2", // TTBCR
            "mcr p15, 0, {tt}, c2, c0, 0",
            "mov {t}, #1",
            "mcr p15, 0, {t}, c3, c0, 0", // DACR: d0 client, d1 no access
            tt = in(reg) addr_of!(TT) as u32,
            t = out(reg) _,
        );
    }
    tlbiall();
    set_sctlr(sctlr() | 1);
    check("short-descriptor mmu on", sctlr() & 1 == 1);
    let (v, f) = try_read(VA);
    check("small page alias read", !f && v == 0x1234_5678);
    let f = try_write(VA, 0x1111_2222);
    let (v2, _) = try_read(addr_of!(DATA) as u32);
    check("small page alias write", !f && v2 == 0x1111_2222);
    let f = try_write(VA + 0x1004, 1);
    let (dfsr, dfar) = (mrc_dfsr(), mrc_dfar());
    check(
        "write to read-only page: permission fault",
        f && fs_short(dfsr) == 0b01111 && dfsr & 0x800 != 0 && dfar == VA + 0x1004,
    );
    let (_, f) = try_read(VA + 0x1008);
    check("read of read-only page", !f);
    let (_, f) = try_read(VA + 0x4000);
    check(
        "unmapped page: translation fault (page)",
        f && fs_short(mrc_dfsr()) == 0b00111 && mrc_dfar() == VA + 0x4000,
    );
    let (_, f) = try_read(0xa000_0000);
    check(
        "unmapped section: translation fault (section)",
        f && fs_short(mrc_dfsr()) == 0b00101,
    );
    let (_, f) = try_read(0x9000_0010);
    let dfsr = mrc_dfsr();
    check(
        "no-access domain: domain fault",
        f && fs_short(dfsr) == 0b01001 && (dfsr >> 4) & 0xf == 1,
    );
    let f = try_exec(addr_of!(CODE) as u32);
    check("execute from executable page", !f);
    let f = try_exec(VA + 0x2000);
    check(
        "execute from XN page: prefetch abort",
        f && fs_short(mrc_ifsr()) == 0b01111 && mrc_ifar() == VA + 0x2000,
    );
    check(
        "privileged read of privileged-only page",
        !try_read(VA + 0x3000).1,
    );
    check(
        "LDRT of privileged-only page aborts",
        try_ldrt(VA + 0x3000) && fs_short(mrc_dfsr()) == 0b01111,
    );
    check("LDRT of user page", !try_ldrt(VA));
    check(
        "user-mode read of privileged-only page aborts",
        user_read(VA + 0x3000),
    );
    check("user-mode read of user page", !user_read(VA));
    // alignment checking
    set_sctlr(sctlr() | 2);
    let (_, f) = try_read(addr_of!(DATA) as u32 + 2);
    check(
        "unaligned load with SCTLR.A: alignment fault",
        f && fs_short(mrc_dfsr()) == 0b00001,
    );
    set_sctlr(sctlr() & !2);
    let (_, f) = try_read(addr_of!(DATA) as u32 + 2);
    check("unaligned load without SCTLR.A", !f);
    set_sctlr(sctlr() & !1);
    check("short-descriptor mmu off", sctlr() & 1 == 0);
}

fn test_lpae() {
    // SAFETY: private tables; identity for device space and RAM.
    unsafe {
        let l1 = &mut *addr_of_mut!(LP1);
        let l2 = &mut *addr_of_mut!(LP2);
        let l3 = &mut *addr_of_mut!(LP3);
        l1.0.iter_mut().for_each(|e| *e = 0);
        l2.0.iter_mut().for_each(|e| *e = 0);
        l3.0.iter_mut().for_each(|e| *e = 0);
        const AF: u64 = 1 << 10;
        const XN: u64 = 3 << 53;
        l1.0[0] = AF | 1 << 2 | XN | 1; // 0..1 GiB device block
        l1.0[1] = 0x4000_0000 | AF | 3 << 8 | 1 << 6 | 1; // RAM block, EL0 RW too
        l1.0[2] = addr_of!(LP2) as u64 | 3; // table
        l2.0[0] = addr_of!(LP3) as u64 | 3; // table
        let data = addr_of!(DATA) as u64;
        l3.0[0] = data | AF | 1 << 6 | 3; // RW, EL0 too
        l3.0[1] = data | AF | 1 << 7 | 3; // read-only
        l3.0[2] = data | 3; // access flag clear
        l3.0[4] = data | AF | 3; // EL1 only
        let lo = addr_of!(LP1) as u32;
        asm!(
            "mcr p15, 0, {mair0}, c10, c2, 0",
            "mcr p15, 0, {zero}, c10, c2, 1",
            "mcrr p15, 0, {lo}, {zero}, c2",
            "mcr p15, 0, {eae}, c2, c0, 2",
            mair0 = in(reg) 0x0044_04ffu32,
            zero = in(reg) 0u32,
            lo = in(reg) lo,
            eae = in(reg) 0x8000_0000u32,
        );
        write_volatile(addr_of_mut!(DATA) as *mut u32, 0xabcd_0001);
    }
    tlbiall();
    set_sctlr(sctlr() | 1);
    let (v, f) = try_read(VA);
    check("lpae 4k page read", !f && v == 0xabcd_0001);
    let f = try_write(VA + 0x1000, 5);
    let dfsr = mrc_dfsr();
    check(
        "lpae write to read-only page: permission fault level 3",
        f && dfsr & 0x23f == 0x20f && dfsr & 0x800 != 0,
    );
    let (_, f) = try_read(VA + 0x2000);
    check(
        "lpae access flag fault level 3",
        f && mrc_dfsr() & 0x23f == 0x20b,
    );
    let (_, f) = try_read(VA + 0x3000);
    check(
        "lpae translation fault level 3",
        f && mrc_dfsr() & 0x23f == 0x207 && mrc_dfar() == VA + 0x3000,
    );
    let (_, f) = try_read(0xc000_0000);
    check(
        "lpae translation fault level 1",
        f && mrc_dfsr() & 0x23f == 0x205,
    );
    check("lpae user read of EL0 page", !user_read(VA));
    check(
        "lpae user read of EL1-only page aborts",
        user_read(VA + 0x4000) && mrc_dfsr() & 0x23f == 0x20f,
    );
    set_sctlr(sctlr() & !1);
    // SAFETY: back to the short-descriptor format with the MMU off.
    unsafe { asm!("mcr p15, 0, {z}, c2, c0, 2", z = in(reg) 0u32) };
}

fn test_cp15() {
    let (midr, mpidr, ctr): (u32, u32, u32);
    // SAFETY: ID register reads.
    unsafe {
        asm!(
            "mrc p15, 0, {a}, c0, c0, 0",
            "mrc p15, 0, {b}, c0, c0, 5",
            "mrc p15, 0, {c}, c0, c0, 1",
            a = out(reg) midr, b = out(reg) mpidr, c = out(reg) ctr,
        )
    };
    check(
        "midr is an Arm Cortex-A15",
        midr & 0xff0f_fff0 == 0x410f_c0f0,
    );
    check(
        "mpidr/ctr readable",
        mpidr & 0x8000_0000 != 0 && ctr >> 29 == 4,
    );
    let v: u32;
    // SAFETY: TPIDRURW round trip.
    unsafe {
        asm!("mcr p15, 0, {i}, c13, c0, 2", "mrc p15, 0, {o}, c13, c0, 2", i = in(reg) 0x5a5a_1234u32, o = out(reg) v)
    };
    check("tpidrurw round trip", v == 0x5a5a_1234);
}

#[no_mangle]
extern "C" fn main() -> ! {
    puts("armv7-systest: start\n");
    test_modes();
    test_svc_undef();
    test_thumb();
    test_cp15();
    test_short_mmu();
    test_lpae();
    // SAFETY: single-core counter.
    let fails = unsafe { FAILS };
    if fails == 0 {
        puts("armv7-systest: PASS\n");
    } else {
        puts("armv7-systest: FAIL ");
        puthex(fails);
        puts("\n");
    }
    loop {
        // SAFETY: PSCI SYSTEM_OFF (QEMU virt without EL2/EL3 uses the HVC conduit).
        unsafe { asm!(".inst 0xe1400070", in("r0") 0x8400_0008u32) };
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    puts("armv7-systest: panic\n");
    loop {}
}
