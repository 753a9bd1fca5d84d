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

    .text
    .arm
    .balign 4
    // Unprivileged loads and stores (A32): r0 = address, r1 = value to store; loads
    // return the loaded value (0 if the access aborted and was skipped).
    .global a_ldrt, a_ldrbt, a_strt, a_strbt, a_ldrht, a_strht, a_ldrsbt, a_ldrsht
a_ldrt:   mov r2, r0
    mov r0, #0
    ldrt r0, [r2]
    bx lr
a_ldrbt:  mov r2, r0
    mov r0, #0
    ldrbt r0, [r2]
    bx lr
a_strt:   strt r1, [r0]
    bx lr
a_strbt:  strbt r1, [r0]
    bx lr
a_ldrht:  mov r2, r0
    mov r0, #0
    ldrht r0, [r2], #0
    bx lr
a_strht:  strht r1, [r0], #0
    bx lr
a_ldrsbt: mov r2, r0
    mov r0, #0
    ldrsbt r0, [r2], #0
    bx lr
a_ldrsht: mov r2, r0
    mov r0, #0
    ldrsht r0, [r2], #0
    bx lr

    // Exception returns from SVC mode (A32): r0 = SPSR to return with. Each lands at
    // label 1 in the mode SPSR names, reads CPSR into r0 and goes back to SVC mode.
    .global a_ldm_excret, a_eret, a_subs_pc_lr
a_ldm_excret:
    push {{r4, lr}}
    mrs r4, cpsr
    msr spsr_fsxc, r0
    adr r2, 1f
    mov r1, #0x77
    push {{r1, r2}}
    ldmia sp!, {{r3, pc}}^
1:  mrs r0, cpsr
    msr cpsr_fsxc, r4
    cmp r3, #0x77
    orrne r0, r0, #0x100000
    pop {{r4, pc}}
a_eret:
    push {{r4, lr}}
    mrs r4, cpsr
    msr spsr_fsxc, r0
    adr lr, 1f
    .inst 0xe160006e        // eret
1:  mrs r0, cpsr
    msr cpsr_fsxc, r4
    pop {{r4, pc}}
a_subs_pc_lr:
    push {{r4, lr}}
    mrs r4, cpsr
    msr spsr_fsxc, r0
    adr lr, 1f
    add lr, lr, #4
    subs pc, lr, #4
1:  mrs r0, cpsr
    msr cpsr_fsxc, r4
    pop {{r4, pc}}

    // User-bank STM/LDM (A32): r0 = buffer; buf[0..2] = new SP_usr/LR_usr. Out:
    // buf[2..4] = SP_usr/LR_usr stored by STM ^, buf[4..6] = SP/LR read in System mode after
    // LDM ^, buf[6..8] = SP/LR read in System mode before. SP_usr/LR_usr are restored.
    .global a_usr_regs
a_usr_regs:
    push {{r4-r6, lr}}
    mrs r4, cpsr
    cps #0x1f
    mov r5, sp
    mov r6, lr
    msr cpsr_c, r4
    str r5, [r0, #24]
    str r6, [r0, #28]
    add r1, r0, #8
    stm r1, {{sp, lr}}^
    ldm r0, {{sp, lr}}^
    nop
    cps #0x1f
    mov r5, sp
    mov r6, lr
    ldr sp, [r0, #24]
    ldr lr, [r0, #28]
    msr cpsr_c, r4
    str r5, [r0, #16]
    str r6, [r0, #20]
    pop {{r4-r6, pc}}

    // SETEND (A32): big-endian load of the word at r0.
    .global a_setend
a_setend:
    setend be
    ldr r0, [r0]
    setend le
    bx lr

    // Coprocessor encodings that are UNDEFINED (each returns to the next instruction).
    .global a_cp_undef, a_cp2_undef, a_vfp_undef
a_cp_undef:
    .inst 0xee000f00        // cdp p15, 0, c0, c0, c0, 0
    .inst 0xed900f00        // ldc p15, c0, [r0]
    .inst 0xed800f00        // stc p15, c0, [r0]
    bx lr
a_cp2_undef:
    .inst 0xfe000f10        // mcr2 p15, 0, r0, c0, c0, 0
    .inst 0xfe100f10        // mrc2 p15, 0, r0, c0, c0, 0
    bx lr
a_vfp_undef:
    .inst 0xee300a00        // vadd.f32 s0, s0, s0
    .inst 0xed900a00        // vldr s0, [r0]
    .inst 0xeef10a10        // vmrs r0, fpscr
    .inst 0xf2200800        // vadd.i32 d0, d0, d0
    .inst 0xf420078f        // vld1.32 {{d0}}, [r0]
    bx lr

    .thumb
    // Unprivileged loads and stores (T32), as the A32 ones.
    .global t_ldrt, t_strt, t_ldrbt, t_strbt, t_ldrht, t_strht, t_ldrsbt, t_ldrsht
    .thumb_func
t_ldrt:   mov r2, r0
    movs r0, #0
    ldrt r0, [r2]
    bx lr
    .thumb_func
t_strt:   strt r1, [r0]
    bx lr
    .thumb_func
t_ldrbt:  mov r2, r0
    movs r0, #0
    ldrbt r0, [r2]
    bx lr
    .thumb_func
t_strbt:  strbt r1, [r0]
    bx lr
    .thumb_func
t_ldrht:  mov r2, r0
    movs r0, #0
    ldrht r0, [r2]
    bx lr
    .thumb_func
t_strht:  strht r1, [r0]
    bx lr
    .thumb_func
t_ldrsbt: mov r2, r0
    movs r0, #0
    ldrsbt r0, [r2]
    bx lr
    .thumb_func
t_ldrsht: mov r2, r0
    movs r0, #0
    ldrsht r0, [r2]
    bx lr

    // Exception returns (T32): r0 = SPSR (with T set for the first two).
    .global t_subs_pc_lr, t_eret, t_srs_rfe
    .thumb_func
t_subs_pc_lr:
    push {{r4, lr}}
    mrs r4, cpsr
    msr spsr_fsxc, r0
    adr.w r1, 1f
    add lr, r1, #4
    subs pc, lr, #4
    .balign 4
1:  mrs r0, cpsr
    msr cpsr_fsxc, r4
    pop {{r4, pc}}
    .thumb_func
t_eret:
    push {{r4, lr}}
    mrs r4, cpsr
    msr spsr_fsxc, r0
    adr.w lr, 1f
    .inst.w 0xf3de8f00      // eret (SUBS PC, LR, #0)
    .balign 4
1:  mrs r0, cpsr
    msr cpsr_fsxc, r4
    pop {{r4, pc}}
    // SRS then RFE (T32), landing in A32 state (SPSR.T clear).
    .thumb_func
t_srs_rfe:
    push {{r4, lr}}
    mrs r4, cpsr
    msr spsr_fsxc, r0
    adr.w lr, 1f
    srsdb sp!, #0x13
    rfeia sp!
    .arm
    .balign 4
1:  mrs r0, cpsr
    msr cpsr_fsxc, r4
    pop {{r4, lr}}
    bx lr
    .thumb

    // T32 MRS/MSR: r0 = buffer; buf[0] = value for SPSR and APSR flags. Out: buf[1] = SPSR
    // read back, buf[2] = CPSR after MSR APSR_nzcvq, buf[3] = CPSR after CPSIE A (T16),
    // buf[4] = CPSR after CPSID A, buf[5] = CPSR after CPS #0x1f (T32) (then back to SVC).
    .global t_status
    .thumb_func
t_status:
    push {{r4, r5}}
    mrs r4, cpsr
    mrs r5, spsr
    ldr r1, [r0]
    msr spsr_fsxc, r1
    mrs r2, spsr
    str r2, [r0, #4]
    msr apsr_nzcvq, r1
    mrs r2, cpsr
    str r2, [r0, #8]
    cpsie a
    mrs r2, cpsr
    str r2, [r0, #12]
    cpsid a
    mrs r2, cpsr
    str r2, [r0, #16]
    cps #0x1f
    mrs r2, cpsr
    cps #0x13
    str r2, [r0, #20]
    msr spsr_fsxc, r5
    msr cpsr_fsxc, r4
    pop {{r4, r5}}
    bx lr

    // BXJ (T32) to an A32 label: returns 1 there (BXJ behaves as BX).
    .global t_bxj
    .thumb_func
t_bxj:
    adr.w r1, 1f
    .inst.w 0xf3c18f00      // bxj r1
    movs r0, #0
    bx lr
    .arm
    .balign 4
1:  mov r0, #1
    bx lr
    .thumb

    // SETEND (T16): big-endian load of the word at r0.
    .global t_setend
    .thumb_func
t_setend:
    setend be
    ldr r0, [r0]
    setend le
    bx lr

    // T32 MCR/MRC (TPIDRURW) and MCRR/MRRC (64-bit TTBR0): r0 = buffer; buf[0] = TPIDRURW
    // value, buf[1..3] = TTBR0 value. Out: buf[3] = TPIDRURW, buf[4..6] = TTBR0 (restored).
    .global t_cp15
    .thumb_func
t_cp15:
    push {{r4, r5}}
    ldr r1, [r0]
    mcr p15, 0, r1, c13, c0, 2
    mrc p15, 0, r2, c13, c0, 2
    str r2, [r0, #12]
    mrrc p15, 0, r4, r5, c2
    ldrd r2, r3, [r0, #4]
    mcrr p15, 0, r2, r3, c2
    mrrc p15, 0, r2, r3, c2
    strd r2, r3, [r0, #16]
    mcrr p15, 0, r4, r5, c2
    pop {{r4, r5}}
    bx lr

    // PSCI_VERSION through a T32 HVC.
    .global t_psci_version
    .thumb_func
t_psci_version:
    ldr r0, =0x84000000
    .inst.w 0xf7e08000      // hvc #0
    bx lr
    .ltorg

    // UNDEFINED coprocessor encodings (T32).
    .global t_cp_undef, t_cp2_undef, t_vfp_undef, t_udf_w
    .thumb_func
t_udf_w:
    udf.w #1
    bx lr
    .thumb_func
t_cp_undef:
    .inst.w 0xee000f00      // cdp p15, 0, c0, c0, c0, 0
    .inst.w 0xed900f00      // ldc p15, c0, [r0]
    .inst.w 0xed800f00      // stc p15, c0, [r0]
    bx lr
    .thumb_func
t_cp2_undef:
    .inst.w 0xfe000f10      // mcr2 p15, 0, r0, c0, c0, 0
    .inst.w 0xfe100f10      // mrc2 p15, 0, r0, c0, c0, 0
    bx lr
    .thumb_func
t_vfp_undef:
    .inst.w 0xee300a00      // vadd.f32 s0, s0, s0
    .inst.w 0xed900a00      // vldr s0, [r0]
    .inst.w 0xeef10a10      // vmrs r0, fpscr
    .inst.w 0xef200800      // vadd.i32 d0, d0, d0
    .inst.w 0xf920078f      // vld1.32 {{d0}}, [r0]
    bx lr
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
/// Data aborts resume after the aborted instruction while this is set.
static mut SKIP: bool = false;

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
            // A 32-bit Thumb instruction: LR_und is its address + 2; resume after it.
            1 if FROM_THUMB && read_volatile((*lr - 2) as *const u16) >> 11 >= 0b11101 => *lr += 2,
            3 => *lr -= 4,
            // An IRQ (the SMP check's SGIs): LR_irq is the next instruction + 4.
            6 => {
                if !crate::irq_latency::irq(frame) {
                    crate::smp::irq();
                }
                *lr -= 4;
            }
            4 => {
                *lr -= 8;
                if read_volatile(addr_of!(SKIP)) {
                    // Resume after the aborted instruction.
                    let wide = FROM_THUMB && read_volatile(*lr as *const u16) >> 11 >= 0b11101;
                    *lr += if FROM_THUMB && !wide { 2 } else { 4 };
                }
            }
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

/// [`try_read`] at one load instruction whatever the caller's loop unrolling.
#[inline(never)]
fn try_read_at_one_site(addr: u32) -> (u32, bool) {
    try_read(addr)
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

/// An unprivileged load/store helper: (address, value to store) -> loaded value.
type Unpriv = unsafe extern "C" fn(u32, u32) -> u32;

extern "C" {
    fn a_ldrt(a: u32, v: u32) -> u32;
    fn a_strt(a: u32, v: u32) -> u32;
    fn a_ldrbt(a: u32, v: u32) -> u32;
    fn a_strbt(a: u32, v: u32) -> u32;
    fn a_ldrht(a: u32, v: u32) -> u32;
    fn a_strht(a: u32, v: u32) -> u32;
    fn a_ldrsbt(a: u32, v: u32) -> u32;
    fn a_ldrsht(a: u32, v: u32) -> u32;
    fn t_ldrt(a: u32, v: u32) -> u32;
    fn t_strt(a: u32, v: u32) -> u32;
    fn t_ldrbt(a: u32, v: u32) -> u32;
    fn t_strbt(a: u32, v: u32) -> u32;
    fn t_ldrht(a: u32, v: u32) -> u32;
    fn t_strht(a: u32, v: u32) -> u32;
    fn t_ldrsbt(a: u32, v: u32) -> u32;
    fn t_ldrsht(a: u32, v: u32) -> u32;
    fn a_ldm_excret(spsr: u32) -> u32;
    fn a_eret(spsr: u32) -> u32;
    fn a_subs_pc_lr(spsr: u32) -> u32;
    fn t_subs_pc_lr(spsr: u32) -> u32;
    fn t_eret(spsr: u32) -> u32;
    fn t_srs_rfe(spsr: u32) -> u32;
    fn a_usr_regs(buf: *mut u32);
    fn t_status(buf: *mut u32);
    fn a_setend(a: u32) -> u32;
    fn t_setend(a: u32) -> u32;
    fn t_bxj() -> u32;
    fn t_cp15(buf: *mut u32);
    fn t_psci_version() -> u32;
    fn a_cp_undef();
    fn a_cp2_undef();
    fn a_vfp_undef();
    fn t_cp_undef();
    fn t_udf_w();
    fn t_cp2_undef();
    fn t_vfp_undef();
}

/// Runs an unprivileged load/store helper; returns (aborted, loaded value).
fn unpriv(f: Unpriv, addr: u32, v: u32) -> (bool, u32) {
    let before = counts()[4];
    // SAFETY: the helper is a leaf function; an abort resumes after the faulting access.
    let r = unsafe {
        write_volatile(addr_of_mut!(SKIP), true);
        let r = f(addr, v);
        write_volatile(addr_of_mut!(SKIP), false);
        r
    };
    (counts()[4] != before, r)
}

/// LDRT/STRT/LDRBT/STRBT/LDRHT/STRHT/LDRSBT/LDRSHT from SVC mode (short-descriptor MMU on):
/// `VA` is a User read/write page and `VA + 0x3000` a privileged-only page, both on `DATA`.
/// `f` = [ldrt, strt, ldrbt, strbt, ldrht, strht, ldrsbt, ldrsht].
fn test_unpriv(names: [&str; 3], f: [Unpriv; 8]) {
    let d = addr_of_mut!(DATA) as *mut u32;
    // SAFETY: DATA is a private static.
    let rd = |i: usize| unsafe { read_volatile(d.add(i)) };
    // SAFETY: as above.
    unsafe {
        write_volatile(d.add(0x10), 0x8899_aabb);
        write_volatile(d.add(0x14), 0);
        write_volatile(d.add(0x15), 0);
    }
    let [ldrt, strt, ldrbt, strbt, ldrht, strht, ldrsbt, ldrsht] = f;
    let u = VA + 0x40;
    let loads = [
        (unpriv(ldrt, u, 0), 0x8899_aabb),
        (unpriv(ldrbt, u, 0), 0xbb),
        (unpriv(ldrht, u, 0), 0xaabb),
        (unpriv(ldrsbt, u, 0), 0xffff_ffbb),
        (unpriv(ldrsht, u, 0), 0xffff_aabb),
    ];
    check(names[0], loads.iter().all(|&((f, v), e)| !f && v == e));
    let stores = [
        unpriv(strt, VA + 0x50, 0x0102_0304).0,
        unpriv(strbt, VA + 0x54, 0x1a5).0,
        unpriv(strht, VA + 0x56, 0x5678_1234).0,
    ];
    check(
        names[1],
        stores == [false; 3] && rd(0x14) == 0x0102_0304 && rd(0x15) == 0x1234_00a5,
    );
    let p = VA + 0x3040;
    let mut ok = true;
    for (i, &g) in f.iter().enumerate() {
        let store = matches!(i, 1 | 3 | 5);
        let (aborted, _) = unpriv(g, p + 0x10, 0xdead_0000 + i as u32);
        let dfsr = mrc_dfsr();
        ok &= aborted
            && fs_short(dfsr) == 0b01111
            && (dfsr & 0x800 != 0) == store
            && mrc_dfar() == p + 0x10;
    }
    check(
        names[2],
        ok && rd(0x14) == 0x0102_0304 && rd(0x15) == 0x1234_00a5,
    );
}

fn test_system() {
    let svc = cpsr();
    let base = svc & 0x1c0; // A, I, F as in SVC mode
    let same_svc = |c: u32| c & 0x3ff == svc & 0x3ff;
    // SAFETY (all helpers below): leaf functions that return to SVC mode with the AAPCS
    // callee-saved registers, SP_svc, SPSR_svc and the User/System bank preserved.
    let s = base | 0x1f | 0x8000_0000 | 0x1000_0000;
    let r = unsafe { a_ldm_excret(s) };
    check(
        "A32 LDM ^ exception return to sys mode",
        r == s && same_svc(cpsr()),
    );
    let s = base | 0x12 | 0x4000_0000;
    let r = unsafe { a_eret(s) };
    check(
        "A32 ERET (SUBS PC, LR, #0) to irq mode",
        r == s && same_svc(cpsr()),
    );
    let s = base | 0x17 | 0x2000_0000;
    let r = unsafe { a_subs_pc_lr(s) };
    check(
        "A32 SUBS PC, LR, #4 to abt mode",
        r == s && same_svc(cpsr()),
    );
    let s = base | 0x1f | 0x6000_0000;
    let r = unsafe { t_subs_pc_lr(s | 0x20) };
    check(
        "T32 SUBS PC, LR, #4 to sys mode, thumb",
        r == s && same_svc(cpsr()),
    );
    let s = base | 0x1b | 0x9000_0000;
    let r = unsafe { t_eret(s | 0x20) };
    check("T32 ERET to und mode, thumb", r == s && same_svc(cpsr()));
    let s = base | 0x1f | 0x3000_0000;
    let r = unsafe { t_srs_rfe(s) };
    check("T32 SRS/RFE to sys mode, arm", r == s && same_svc(cpsr()));

    let mut b = [0x4000_1230u32, 0x1234_5679, 0, 0, 0, 0, 0, 0];
    unsafe { a_usr_regs(b.as_mut_ptr()) };
    check(
        "A32 STM/LDM user registers (^)",
        b[2..4] == b[6..8] && b[4..6] == b[0..2] && b[0..2] != b[6..8],
    );

    let v = 0x9800_0000 | base | 0x1f;
    let mut b = [v, 0, 0, 0, 0, 0];
    unsafe { t_status(b.as_mut_ptr()) };
    check(
        "T32 MRS/MSR cpsr and spsr",
        b[1] == v && b[2] & 0xf800_001f == 0x9800_0013,
    );
    check(
        "T16 CPSIE/CPSID A, T32 CPS #mode",
        b[3] & 0x100 == 0 && b[4] & 0x100 != 0 && b[5] & 0x1f == 0x1f && same_svc(cpsr()),
    );

    let d = addr_of_mut!(DATA) as *mut u32;
    // SAFETY: private static.
    unsafe { write_volatile(d, 0x1122_3344) };
    let (a, t) = unsafe { (a_setend(d as u32), t_setend(d as u32)) };
    check(
        "A32 SETEND BE load",
        a == 0x4433_2211 && cpsr() & 0x200 == 0,
    );
    check(
        "T16 SETEND BE load",
        t == 0x4433_2211 && cpsr() & 0x200 == 0,
    );
    check("T32 BXJ to arm state", unsafe { t_bxj() } == 1);

    let mut b = [0x600d_f00du32, 0x4000_4000, 0, 0, 0, 0];
    unsafe { t_cp15(b.as_mut_ptr()) };
    check(
        "T32 MCR/MRC tpidrurw, MCRR/MRRC ttbr0",
        b[3] == b[0] && b[4..6] == b[1..3],
    );
    let v = unsafe { t_psci_version() };
    check("T32 HVC psci version", v >> 16 >= 1 && v >> 31 == 0);

    let und = |f: unsafe extern "C" fn(), n: u32| {
        let before = counts()[1];
        // SAFETY: every instruction of `f` is UNDEFINED and the handler resumes after it.
        unsafe { f() };
        counts()[1] == before + n
    };
    check("A32 CDP/LDC/STC p15 undefined", und(a_cp_undef, 3));
    check("A32 MCR2/MRC2 p15 undefined", und(a_cp2_undef, 2));
    check("A32 VFP/SIMD with CPACR off undefined", und(a_vfp_undef, 5));
    check("T32 UDF.W undefined", und(t_udf_w, 1));
    check("T32 CDP/LDC/STC p15 undefined", und(t_cp_undef, 3));
    check("T32 MCR2/MRC2 p15 undefined", und(t_cp2_undef, 2));
    check("T32 VFP/SIMD with CPACR off undefined", und(t_vfp_undef, 5));
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
    // One load site, the unmapped page again and again, its level-2 entry filled between
    // (without TLB maintenance: a Translation fault is never cached, a DSB makes the entry
    // visible to the next walk) and emptied again (with maintenance). Under the DBT the
    // repeated aborts come from the remembered verdict, which must not hold once the
    // entry it read has changed.
    let again = (0..12u32).all(|k| {
        let mapped = k % 4 == 3;
        let offset = 4 + 4 * (k % 4);
        // SAFETY: L2 is the live level-2 table; entry 4 maps (or not) VA + 0x4000.
        let entry = unsafe { (addr_of_mut!(L2) as *mut u32).add(4) };
        if mapped {
            // SAFETY: as above; DATA stays mapped by the identity map.
            unsafe {
                write_volatile(entry, addr_of!(DATA) as u32 | 0x03e);
                asm!("dsb", "isb");
            }
        }
        let addr = VA + 0x4000 + offset;
        let (v, f) = try_read_at_one_site(addr);
        let ok = if mapped {
            // SAFETY: DATA is RAM of ours.
            !f && v
                == unsafe { read_volatile((addr_of!(DATA) as *const u32).add(offset as usize / 4)) }
        } else {
            f && fs_short(mrc_dfsr()) == 0b00111 && mrc_dfar() == addr
        };
        if mapped {
            // SAFETY: as above.
            unsafe { write_volatile(entry, 0) };
            tlbiall();
        }
        ok
    });
    check(
        "unmapped page again, its entry filled and emptied between: translation faults",
        again,
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
    // The same branch again to other targets in the page: under the DBT the fetch verdict
    // is remembered by now, so these aborts are raised from translated code's target-cache
    // miss path (`fetch_abort_call`), not by the interpreter. (A32 targets only: the
    // handler's RFE returns to `RECOVER` in the aborted code's instruction set.)
    let again = (1..7u32).all(|i| {
        let target = VA + 0x2000 + 0x24 * i;
        try_exec(target) && fs_short(mrc_ifsr()) == 0b01111 && mrc_ifar() == target
    });
    check("execute from XN page again: prefetch aborts", again);
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
    crate::user_syscall::test_user_syscalls(check, VA + 0x3000, VA);
    test_unpriv(
        [
            "A32 LDRT/LDRBT/LDRHT/LDRSBT/LDRSHT of user page",
            "A32 STRT/STRBT/STRHT to user page",
            "A32 unprivileged accesses to privileged page abort",
        ],
        [
            a_ldrt, a_strt, a_ldrbt, a_strbt, a_ldrht, a_strht, a_ldrsbt, a_ldrsht,
        ],
    );
    test_unpriv(
        [
            "T32 LDRT/LDRBT/LDRHT/LDRSBT/LDRSHT of user page",
            "T32 STRT/STRBT/STRHT to user page",
            "T32 unprivileged accesses to privileged page abort",
        ],
        [
            t_ldrt, t_strt, t_ldrbt, t_strbt, t_ldrht, t_strht, t_ldrsbt, t_ldrsht,
        ],
    );
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
extern "C" fn main(_r0: u32, _r1: u32, dtb: u32) -> ! {
    puts("armv7-systest: start\n");
    test_modes();
    test_svc_undef();
    test_thumb();
    test_cp15();
    test_system();
    crate::smp::test_smp(dtb, check);
    crate::irq_latency::test_irq_latency(dtb, check);
    test_short_mmu();
    test_lpae();
    crate::switch_mmu::test_switch(check);
    crate::switch_data::test_switch_data(check);
    crate::section_tlbi::test_section_tlbi(check);
    crate::tlbi_data::test_tlbi_data(check);
    crate::section_code::test_section_code(check);
    crate::vfp_store_fill::test_vfp_store_fill(check);
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
