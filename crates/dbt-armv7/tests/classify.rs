//! Directed tests of the decoder's classification (seed 004 Table 1, completed).

use dbt_armv7::decode::{Hint, Op};
use dbt_armv7::{decode_a32, decode_thumb, Class, Insn};

fn a(w: u32) -> Insn {
    decode_a32(w)
}

fn t(hw1: u16, hw2: u16) -> Insn {
    decode_thumb(hw1, hw2)
}

/// (name, insn, control_flow, sensitive)
fn table() -> Vec<(&'static str, Insn, bool, bool)> {
    vec![
        ("mov pc, lr", a(0xe1a0f00e), true, false),
        ("movs pc, lr", a(0xe1b0f00e), true, true),
        ("subs pc, lr, #4", a(0xe25ef004), true, true),
        ("add pc, pc, r0", a(0xe08ff000), true, false),
        ("b", a(0xea000000), true, false),
        ("bl", a(0xeb000000), true, false),
        ("blx imm", a(0xfa000000), true, false),
        ("bx lr", a(0xe12fff1e), true, false),
        ("bxj r0", a(0xe12fff20), true, false),
        ("cpsid i", a(0xf10c0080), false, true),
        ("cps #19", a(0xf1020013), false, true),
        ("msr cpsr_c, r0", a(0xe121f000), false, true),
        ("msr cpsr_f, r0", a(0xe128f000), false, false),
        ("msr cpsr_x, r0", a(0xe122f000), false, true),
        ("msr spsr_fsxc, r0", a(0xe16ff000), false, true),
        ("mrs r0, cpsr", a(0xe10f0000), false, true),
        ("mrs r0, spsr", a(0xe14f0000), false, true),
        ("mrs r0, r8_usr", a(0xe1000200), false, true),
        ("msr sp_svc, r0", a(0xe123f300), false, true),
        ("mcr p15 sctlr", a(0xee010f10), false, true),
        ("mrc p15 midr", a(0xee100f10), false, true),
        ("mrc p14 dbgdidr", a(0xee100e10), false, true),
        ("mcrr p15 ttbr0", a(0xec410f02), false, true),
        ("ldc p14", a(0xed900e00), false, true),
        ("cdp p3", a(0xee000300), false, true),
        ("vmrs r0, fpexc", a(0xeef80a10), false, true),
        ("vmrs r0, fpscr", a(0xeef10a10), false, false),
        ("vmsr fpexc, r0", a(0xeee80a10), false, true),
        ("vadd.f32", a(0xee300a00), false, false),
        ("ldm sp!, {r0-r3, pc}^", a(0xe8fd800f), true, true),
        ("stmia r0, {sp, lr}^", a(0xe8c06000), false, true),
        ("ldmia r0, {sp, lr}^", a(0xe8d06000), false, true),
        ("ldm sp!, {r4, pc}", a(0xe8bd8010), true, false),
        ("ldr pc, [sp], #4", a(0xe49df004), true, false),
        ("ldrt r0, [r1], #4", a(0xe4b10004), false, true),
        ("strbt r0, [r1], #1", a(0xe4e10001), false, true),
        ("ldrht r0, [r1], #2", a(0xe0f100b2), false, true),
        ("ldrsbt r0, [r1], #1", a(0xe0f100d1), false, true),
        ("srsdb sp!, #19", a(0xf96d0513), false, true),
        ("rfeia sp!", a(0xf8bd0a00), true, true),
        ("eret", a(0xe160006e), true, true),
        ("svc 0", a(0xef000000), true, true),
        ("hvc 0", a(0xe1400070), true, true),
        ("smc 0", a(0xe1600070), true, true),
        ("bkpt", a(0xe1200070), true, true),
        ("udf", a(0xe7f000f0), true, true),
        ("wfi", a(0xe320f003), false, true),
        ("wfe", a(0xe320f002), false, true),
        ("sev", a(0xe320f004), false, false),
        ("add r0, r1, r2", a(0xe0810002), false, false),
        ("ldr r0, [r1]", a(0xe5910000), false, false),
        ("setend be", a(0xf1010200), false, false),
        // Thumb
        ("t cpsid i", t(0xb672, 0), false, true),
        ("t svc", t(0xdf00, 0), true, true),
        ("t bx lr", t(0x4770, 0), true, false),
        ("t pop {pc}", t(0xbd00, 0), true, false),
        ("t mov pc, r0", t(0x4687, 0), true, false),
        ("t subs pc, lr, #4", t(0xf3de, 0x8f04), true, true),
        ("t eret", t(0xf3de, 0x8f00), true, true),
        ("t mrs r0, apsr", t(0xf3ef, 0x8000), false, true),
        ("t msr cpsr_c, r0", t(0xf380, 0x8100), false, true),
        ("t msr apsr_nzcvq, r0", t(0xf380, 0x8800), false, false),
        ("t ldrt r0, [r1, #4]", t(0xf851, 0x0e04), false, true),
        ("t strt r0, [r1, #4]", t(0xf841, 0x0e04), false, true),
        ("t mcr p15", t(0xee01, 0x0f10), false, true),
        ("t mrrc p15", t(0xec51, 0x0f0e), false, true),
        ("t wfi", t(0xbf30, 0), false, true),
        ("t it eq", t(0xbf08, 0), false, false),
        ("t cbz", t(0xb100, 0), true, false),
        ("t tbb", t(0xe8d0, 0xf001), true, false),
        ("t b.w", t(0xf000, 0xb800), true, false),
        ("t bl", t(0xf000, 0xf800), true, false),
        ("t srsdb sp!, #19", t(0xe82d, 0xc013), false, true),
        ("t rfeia r0", t(0xe990, 0xc000), true, true),
        ("t udf", t(0xde00, 0), true, true),
        ("t hvc", t(0xf7e0, 0x8000), true, true),
        ("t smc", t(0xf7f0, 0x8000), true, true),
        ("t ldm.w sp!, {r4, pc}", t(0xe8bd, 0x8010), true, false),
        ("t adds", t(0x1840, 0), false, false),
        // more classes (most are also executed by `systest` now)
        ("pld [r1]", a(0xf5d1f000), false, false),
        ("unallocated mul", a(0xe0700090), true, true),
        // UNDEFINED, like every `2` coprocessor form on ARMv7 (control flow: it traps)
        ("mcr2 p15", a(0xfe000f10), true, true),
        ("vldr d0, [r0]", a(0xed900b00), false, false),
        ("vadd.i32 d0, d0, d0", a(0xf2200800), false, false),
        ("vld1.32 {d0}, [r0]", a(0xf420078f), false, false),
        ("t add sp, #4", t(0xb001, 0), false, false),
        ("t bkpt", t(0xbe00, 0), true, true),
        ("t beq", t(0xd000, 0), true, false),
        ("t b", t(0xe000, 0), true, false),
        ("t beq.w", t(0xf000, 0x8000), true, false),
        ("t mrs r0, r8_usr", t(0xf3e0, 0x8020), false, true),
        ("t dsb sy", t(0xf3bf, 0x8f4f), false, false),
        ("t cpsid i.w", t(0xf3af, 0x8620), false, true),
        ("t bxj r0", t(0xf3c0, 0x8f00), true, false),
        ("t udf.w", t(0xf7f0, 0xa000), true, true),
        ("t ldc p14", t(0xed90, 0x5e00), false, true),
        ("t cdp p3", t(0xee00, 0x0300), false, true),
        ("t vadd.f32", t(0xee30, 0x0a00), false, false),
        ("t vadd.i32", t(0xef20, 0x0800), false, false),
        ("t unallocated", t(0xfa00, 0x0000), true, true),
    ]
}

mod common;

#[test]
fn sensitive_and_control_flow_table() {
    let mut counts = vec![0u64; Class::COUNT];
    for (_, i, _, _) in table() {
        counts[i.class as usize] += 1;
    }
    common::record_coverage("classify", &counts);
    let mut bad = Vec::new();
    for (name, i, cf, sens) in table() {
        let f = i.info();
        if f.unpredictable && !name.contains("unallocated") {
            bad.push(format!("{name}: decoded as UNPREDICTABLE ({:?})", i.op));
        }
        if f.control_flow != cf || f.sensitive != sens {
            bad.push(format!(
                "{name}: control_flow {} (want {cf}), sensitive {} (want {sens}); {:?}",
                f.control_flow, f.sensitive, i.op
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn reads_pc_and_registers() {
    let i = a(0xe28f0008); // add r0, pc, #8
    assert!(i.info().reads_pc);
    assert_eq!(i.info().writes, 1);
    let i = a(0xe59f0004); // ldr r0, [pc, #4]
    assert!(i.info().reads_pc && i.info().memory);
    let i = a(0xe92d8001); // push {r0, pc}
    assert!(i.info().reads_pc);
    assert_eq!(i.info().writes, 1 << 13);
    let i = t(0xa001, 0); // adr r0
    assert!(i.info().reads_pc);
    let i = t(0x4801, 0); // ldr r0, [pc, #4]
    assert!(i.info().reads_pc);
    let i = a(0xe0810002); // add r0, r1, r2
    assert_eq!((i.info().reads, i.info().writes), (0b110, 0b1));
    let i = a(0xe0a10392); // umlal r0, r1, r2, r3
    assert_eq!(i.info().reads, 0b1111);
    assert_eq!(i.info().writes, 0b11);
    assert!(!a(0xe1a00000).info().reads_pc);
}

#[test]
fn undefined_and_unpredictable() {
    assert!(a(0xe7f000f0).info().undefined); // udf
    assert!(a(0xe0700090).info().undefined); // unallocated multiply
    assert!(a(0xe8b00003).info().unpredictable); // ldm r0!, {r0, r1}
    assert!(a(0xe1a0f01f).info().unpredictable); // mov pc, pc, lsl pc
    assert!(a(0xe1e875a7).info().unpredictable); // mvn with Rn != 0 (SBZ)
    assert!(t(0xe8bd, 0xc000).info().unpredictable); // pop.w {lr, pc}
    assert!(t(0xfa91, 0xf082).info().unpredictable); // rev with Rn != Rm
    assert!(t(0xde00, 0).info().undefined);
    assert!(t(0xf7f0, 0xa000).info().undefined); // udf.w
                                                 // Unallocated memory hints (A5.7.1 110x001, op2 xxx0) execute as NOP (found by diff_undef).
    assert_eq!(a(0xf61bc7e7).op, Op::Hint(Hint::Nop));
    assert_eq!(a(0xf697ef0b).op, Op::Hint(Hint::Nop));
    assert!(a(0xf6900010).info().undefined); // same space with op2 xxx1
                                             // classes
    assert_eq!(a(0xe8fd800f).class, Class::A32LdmExcRet);
    assert_eq!(t(0xbf08, 0).class, Class::T16It);
}

#[test]
fn every_class_has_a_name() {
    for c in Class::ALL {
        assert!(!c.describe().is_empty());
        assert!(
            c.name().starts_with("A32")
                || c.name().starts_with("T16")
                || c.name().starts_with("T32")
        );
    }
}
