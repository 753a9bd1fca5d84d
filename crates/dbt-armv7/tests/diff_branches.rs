//! Control flow against `qemu-arm`: branches, calls, returns, loads into the PC,
//! interworking, CBZ/CBNZ, TBB/TBH and ALU writes to the PC, in A32 and Thumb.
//!
//! Each case is one body of position-independent code run by the shared differential
//! harness (`common::harness`, also used by `diff_qemu`). The body holds the branch under
//! test (with whatever setup it needs: `ADR` of the target, a stack slot, an index) and a
//! set of *landing pads* before and after it, in A32 and in Thumb state. Every pad shifts a
//! distinct mark into r12 (`r12 = r12 << 4 | mark`) and then either jumps to the common end
//! or, for call targets, returns through LR. The fall-through position after the branch is
//! a pad as well, so a branch not taken, a call that returns, and every wrong landing give
//! a different r12. The common end is a `BX PC` stub into the A32 epilogue, so LR written
//! by calls is compared too. The records (r0-r12, LR, NZCVQ/GE, scratch) of `qemu-arm`
//! and of our interpreter must be identical.
//!
//! Directed cases cover every kind and variant once; random cases (seed `DBT_DIFF_SEED`,
//! count `DBT_BRANCH_CASES`, default 1200) draw kinds, conditions, flags, registers, pad
//! states and pad positions.

mod common;

use common::harness::{random_regs, run_batch, scratch, Case};
use common::{a32, record_coverage, t32_blx_to_arm, Rng};

type Resolve<'a> = &'a dyn Fn(usize) -> u32;
type Fix = Box<dyn Fn(Resolve, u32) -> Vec<u8>>;
/// Emits something after the pads (a table).
type Post = Box<dyn FnOnce(&mut Asm)>;

/// A two-pass assembler for a body: offsets are relative to its start, which the harness
/// places 4-aligned.
#[derive(Default)]
struct Asm {
    buf: Vec<u8>,
    labels: Vec<Option<u32>>,
    fixes: Vec<(u32, Fix)>,
}

fn aw(w: u32) -> Vec<u8> {
    w.to_le_bytes().to_vec()
}

fn tw([h1, h2]: [u16; 2]) -> Vec<u8> {
    [h1.to_le_bytes(), h2.to_le_bytes()].concat()
}

impl Asm {
    fn label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }
    fn bind(&mut self, l: usize) {
        self.labels[l] = Some(self.pos());
    }
    fn pos(&self) -> u32 {
        self.buf.len() as u32
    }
    /// An A32 word (4-aligned).
    fn a(&mut self, w: u32) {
        assert_eq!(self.pos() % 4, 0);
        self.buf.extend(aw(w));
    }
    fn h(&mut self, h: u16) {
        self.buf.extend(h.to_le_bytes());
    }
    fn t(&mut self, hw: [u16; 2]) {
        self.buf.extend(tw(hw));
    }
    /// `size` bytes computed at the end from the label offsets and the own offset.
    fn fix(&mut self, size: u32, f: impl Fn(Resolve, u32) -> Vec<u8> + 'static) {
        self.fixes.push((self.pos(), Box::new(f)));
        self.buf.extend(std::iter::repeat_n(0, size as usize));
    }
    /// Thumb `NOP` filler up to a 4-byte boundary (never executed in A32 state).
    fn align4(&mut self) {
        if self.pos() % 4 == 2 {
            self.h(0xbf00);
        }
    }
    fn finish(mut self) -> Vec<u8> {
        let labels = self.labels.clone();
        let res = move |l: usize| labels[l].expect("unbound label");
        for (at, f) in std::mem::take(&mut self.fixes) {
            let b = f(&res, at);
            self.buf[at as usize..at as usize + b.len()].copy_from_slice(&b);
        }
        self.buf
    }
}

/// Encoders (offsets are body-relative; only differences and alignment matter).
mod enc {
    pub fn a_b(cond: u32, at: u32, to: u32) -> u32 {
        super::a32::b(cond, at, to)
    }
    pub fn a_bl(cond: u32, at: u32, to: u32) -> u32 {
        super::a32::b(cond, at, to) | 0x0100_0000
    }
    /// `ADD/SUB rd, pc, #lo ; ADD/SUB rd, rd, #hi` (an `ADR` with a 16-bit range).
    pub fn a_adr(rd: u32, at: u32, to: u32) -> [u32; 2] {
        let off = to.wrapping_sub(at + 8) as i32;
        let (op, m) = if off >= 0 {
            (0xe280_0000, off as u32)
        } else {
            (0xe240_0000, off.unsigned_abs())
        };
        assert!(m < 0x1_0000);
        [
            op | 15 << 16 | rd << 12 | (m & 0xff),
            op | rd << 16 | rd << 12 | 0xc00 | (m >> 8),
        ]
    }
    pub fn a_mov32(rd: u32, v: u32) -> [u32; 2] {
        super::a32::mov32(rd, v)
    }
    pub fn t_b_cond(cond: u32, at: u32, to: u32) -> u16 {
        let off = to.wrapping_sub(at + 4) as i32;
        assert!((-256..=254).contains(&off), "B<c> out of range");
        (0xd000 | cond << 8 | ((off as u32 >> 1) & 0xff)) as u16
    }
    pub fn t_b(at: u32, to: u32) -> u16 {
        let off = to.wrapping_sub(at + 4) as i32;
        assert!((-2048..=2046).contains(&off), "B out of range");
        (0xe000 | ((off as u32 >> 1) & 0x7ff)) as u16
    }
    pub fn t_cbz(nonzero: bool, rn: u32, at: u32, to: u32) -> u16 {
        let off = to.wrapping_sub(at + 4);
        assert!(off <= 126, "CBZ out of range");
        (0xb100 | (nonzero as u32) << 11 | (off >> 6 & 1) << 9 | (off >> 1 & 0x1f) << 3 | rn) as u16
    }
    /// T4 `B.W` (`hw2 = 0x9000`) or `BL` (`0xd000`).
    pub fn t_bw(hw2: u32, at: u32, to: u32) -> [u16; 2] {
        let imm = to.wrapping_sub(at + 4);
        let s = (imm >> 24) & 1;
        let j1 = !((imm >> 23) ^ s) & 1;
        let j2 = !((imm >> 22) ^ s) & 1;
        [
            (0xf000 | s << 10 | (imm >> 12 & 0x3ff)) as u16,
            (hw2 | j1 << 13 | j2 << 11 | (imm >> 1 & 0x7ff)) as u16,
        ]
    }
    /// T3 `B<c>.W`.
    pub fn t_bcond_w(cond: u32, at: u32, to: u32) -> [u16; 2] {
        let imm = to.wrapping_sub(at + 4);
        [
            (0xf000 | (imm >> 20 & 1) << 10 | cond << 6 | (imm >> 12 & 0x3f)) as u16,
            (0x8000 | (imm >> 18 & 1) << 13 | (imm >> 19 & 1) << 11 | (imm >> 1 & 0x7ff)) as u16,
        ]
    }
    /// `ADR.W rd, to` (`ADDW`/`SUBW rd, pc, #imm12`).
    pub fn t_adr(rd: u32, at: u32, to: u32) -> [u16; 2] {
        let off = to.wrapping_sub((at + 4) & !3) as i32;
        let (hw1, m) = if off >= 0 {
            (0xf20f, off as u32)
        } else {
            (0xf2af, off.unsigned_abs())
        };
        assert!(m < 0x1000);
        [
            (hw1 | (m >> 11) << 10) as u16,
            ((m >> 8 & 7) << 12 | rd << 8 | (m & 0xff)) as u16,
        ]
    }
    pub fn t_movw(rd: u32, v: u32) -> [u16; 2] {
        let v = v & 0xffff;
        [
            (0xf240 | (v >> 11 & 1) << 10 | v >> 12) as u16,
            ((v >> 8 & 7) << 12 | rd << 8 | (v & 0xff)) as u16,
        ]
    }
    pub fn t_movt(rd: u32, v: u32) -> [u16; 2] {
        let [h1, h2] = t_movw(rd, v >> 16);
        [h1 | 0x0080, h2]
    }
}

#[derive(Clone, Copy)]
struct Pad {
    label: usize,
    thumb: bool,
    /// A call target: returns through LR instead of jumping to the end.
    sub: bool,
    mark: u32,
}

/// The branch kinds. A32 kinds first, then Thumb kinds; `variants` each.
const A32_KINDS: &[(&str, u32)] = &[
    ("B<c>", 1),
    ("BL<c>", 1),
    ("BLX imm", 1),
    ("BX<c> rm", 1),
    ("BLX<c> rm", 1),
    ("LDR<c> pc", 4),
    ("POP {..pc}", 2),
    ("LDM<c> {..pc}", 4),
    ("ALU<c> pc", 4),
];
const T_KINDS: &[(&str, u32)] = &[
    ("B<c>", 1),
    ("B", 1),
    ("B<c>.W", 1),
    ("B.W", 1),
    ("BL", 1),
    ("BLX imm", 1),
    ("CBZ/CBNZ", 2),
    ("BX rm", 1),
    ("BLX rm", 1),
    ("LDR.W pc", 5),
    ("POP {..pc}", 3),
    ("LDM.W {..pc}", 2),
    ("MOV pc, rm", 1),
    ("ADD pc, rm", 1),
    ("TBB/TBH [pc]", 2),
    ("TBB/TBH [rn]", 2),
    ("IT + branch", 8),
];

/// What a kind needs: its targets (`None` state = either), whether all pads must follow
/// the branch, and how many targets.
fn specs(thumb: bool, kind: usize, var: u32, rng: &mut Rng) -> (Vec<(Option<bool>, bool)>, bool) {
    let any = || (None, false);
    if !thumb {
        match kind {
            0 => (vec![(Some(false), false)], false),
            1 => (vec![(Some(false), true)], false),
            2 => (vec![(Some(true), true)], false),
            4 => (vec![(None, true)], false),
            _ => (vec![any()], false),
        }
    } else {
        match kind {
            0..=3 => (vec![(Some(true), false)], false),
            4 => (vec![(Some(true), true)], false),
            5 => (vec![(Some(false), true)], false),
            6 => (vec![(Some(true), false)], true),
            8 => (vec![(None, true)], false),
            12 | 13 => (vec![(Some(true), false)], false),
            14 | 15 => {
                let n = 2 + rng.below(3) as usize;
                (vec![(Some(true), false); n], true)
            }
            16 => match var {
                0 => (vec![any()], false),
                1 | 2 => (vec![(Some(true), false)], false),
                3 => (vec![(Some(true), true)], false),
                4 => (vec![(Some(false), true)], false),
                6 => (vec![(Some(true), false)], false),
                7 => {
                    let n = 2 + rng.below(2) as usize;
                    (vec![(Some(true), false); n], true)
                }
                _ => (vec![any()], false),
            },
            _ => (vec![any()], false),
        }
    }
}

fn emit_pad(a: &mut Asm, p: &Pad, ret: u32, end_t: usize, end_a: usize) {
    if p.thumb {
        a.bind(p.label);
        if p.sub && ret == 2 {
            a.h(0xb500); // PUSH {lr}
        }
        a.t([0xea4f, 0x1c0c]); // LSL.W r12, r12, #4
        a.t([0xf10c, 0x0c00 | p.mark as u16]); // ADD.W r12, r12, #mark
        if p.sub {
            a.h(if ret == 2 { 0xbd00 } else { 0x4770 }); // POP {pc} / BX lr
        } else if ret == 0 {
            a.fix(2, move |r, at| {
                enc::t_b(at, r(end_t)).to_le_bytes().to_vec()
            });
        } else {
            a.fix(4, move |r, at| tw(enc::t_bw(0x9000, at, r(end_t))));
        }
    } else {
        a.align4();
        a.bind(p.label);
        if p.sub && ret == 2 {
            a.a(0xe52d_e004); // PUSH {lr}
        }
        a.a(0xe1a0_c20c); // MOV r12, r12, LSL #4
        a.a(0xe28c_c000 | p.mark); // ADD r12, r12, #mark
        if p.sub {
            a.a([0xe12f_ff1e, 0xe1a0_f00e, 0xe49d_f004][ret as usize]); // BX lr / MOV pc, lr / POP {pc}
        } else {
            a.fix(4, move |r, at| aw(enc::a_b(14, at, r(end_a))));
        }
    }
}

/// `ADR rd, label + plus` in the current state (8 bytes in A32, 4 in Thumb).
fn adr(a: &mut Asm, thumb: bool, rd: u32, l: usize, plus: u32) {
    if thumb {
        a.fix(4, move |r, at| {
            tw(enc::t_adr(rd, at, r(l).wrapping_add(plus)))
        });
    } else {
        a.fix(8, move |r, at| {
            let [x, y] = enc::a_adr(rd, at, r(l).wrapping_add(plus));
            [aw(x), aw(y)].concat()
        });
    }
}

fn pick(rng: &mut Rng, from: &[u32]) -> u32 {
    from[rng.below(from.len() as u32) as usize]
}

/// A random subset of `from` (as a register mask), at least `min` registers.
fn subset(rng: &mut Rng, from: &[u32], min: u32) -> u32 {
    loop {
        let m = from
            .iter()
            .filter(|_| rng.below(2) == 0)
            .fold(0u32, |m, &r| m | 1 << r);
        if m.count_ones() >= min {
            return m;
        }
    }
}

/// Builds one case of `kind`/`var` entered in `thumb` state.
fn gen(rng: &mut Rng, thumb: bool, kind: usize, var: u32) -> Case {
    let mut a = Asm::default();
    let (end_t, end_a, start) = (a.label(), a.label(), a.label());
    let (tspecs, forward) = specs(thumb, kind, var, rng);
    let mut mark = 1;
    let mut new_pad = |a: &mut Asm, thumb: bool, sub: bool| {
        mark += 1;
        Pad {
            label: a.label(),
            thumb,
            sub,
            mark,
        }
    };
    let targets: Vec<Pad> = tspecs
        .iter()
        .map(|&(st, sub)| {
            let st = st.unwrap_or_else(|| rng.below(2) == 0);
            new_pad(&mut a, st, sub)
        })
        .collect();
    let mut pads: Vec<(Pad, u32)> = targets.iter().map(|&p| (p, rng.below(3))).collect();
    for _ in 0..rng.below(3) {
        let st = rng.below(2) == 0;
        pads.push((new_pad(&mut a, st, false), rng.below(3)));
    }
    // Shuffle, then split into pads before and after the branch.
    for i in (1..pads.len()).rev() {
        pads.swap(i, rng.below(i as u32 + 1) as usize);
    }
    let (before, mut after): (Vec<_>, Vec<_>) = pads
        .into_iter()
        .partition(|_| !forward && rng.below(2) == 0);
    if forward {
        // Targets of forward-only branches come first, in target order.
        after.sort_by_key(|(p, _)| {
            targets
                .iter()
                .position(|t| t.label == p.label)
                .unwrap_or(99)
        });
    }
    let fall = Pad {
        label: a.label(),
        thumb,
        sub: false,
        mark: 1,
    };

    // Entry: jump over the pads placed before the branch.
    let mut note = String::new();
    if thumb {
        if rng.below(2) == 0 {
            a.fix(2, move |r, at| {
                enc::t_b(at, r(start)).to_le_bytes().to_vec()
            });
        } else {
            a.fix(4, move |r, at| tw(enc::t_bw(0x9000, at, r(start))));
        }
    } else {
        a.fix(4, move |r, at| aw(enc::a_b(14, at, r(start))));
    }
    for (p, ret) in &before {
        emit_pad(&mut a, p, *ret, end_t, end_a);
    }
    if !thumb {
        a.align4();
    }
    a.bind(start);
    let t0 = targets[0];
    let l0 = t0.label;
    let sbit = |p: &Pad| p.thumb as u32;
    let mut post: Option<Post> = None;
    let cond = if rng.below(3) == 0 { 14 } else { rng.below(14) };
    let name = if thumb {
        T_KINDS[kind].0
    } else {
        A32_KINDS[kind].0
    };
    note.push_str(&format!(
        "{} {name} v{var} cond {cond:x} -> {}",
        if thumb { "T" } else { "A" },
        targets
            .iter()
            .map(|p| format!(
                "{}{}{}",
                p.mark,
                if p.thumb { "t" } else { "a" },
                if p.sub { "s" } else { "" }
            ))
            .collect::<Vec<_>>()
            .join(",")
    ));
    if !thumb {
        let c = cond;
        let rt = pick(rng, &[0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11]);
        match kind {
            0 => a.fix(4, move |r, at| aw(enc::a_b(c, at, r(l0)))),
            1 => a.fix(4, move |r, at| aw(enc::a_bl(c, at, r(l0)))),
            2 => a.fix(4, move |r, at| aw(a32::blx_to_thumb(at, r(l0)))),
            3 | 4 => {
                adr(&mut a, false, rt, l0, sbit(&t0));
                a.a(c << 28 | if kind == 3 { 0x012f_ff10 } else { 0x012f_ff30 } | rt);
            }
            5 => {
                let rt = 7;
                adr(&mut a, false, rt, l0, sbit(&t0));
                a.a(0xe24d_5040); // SUB r5, sp, #64
                let imm = 4 * rng.below(16);
                match var {
                    0 => {
                        a.a(0xe585_0000 | rt << 12 | imm); // STR rt, [r5, #imm]
                        a.a(c << 28 | 0x0595_f000 | imm); // LDR pc, [r5, #imm]
                    }
                    1 => {
                        a.a(0xe585_0000 | rt << 12 | imm);
                        a.a(c << 28 | 0x05b5_f000 | imm); // LDR pc, [r5, #imm]!
                    }
                    2 => {
                        a.a(0xe585_0000 | rt << 12);
                        a.a(c << 28 | 0x0495_f000 | imm); // LDR pc, [r5], #imm
                    }
                    _ => {
                        a.a(0xe585_0000 | rt << 12 | imm);
                        a.a(0xe3a0_6000 | (imm / 4)); // MOV r6, #imm/4
                        a.a(c << 28 | 0x0795_f106); // LDR pc, [r5, r6, LSL #2]
                    }
                }
            }
            6 => {
                adr(&mut a, false, 7, l0, sbit(&t0));
                if var == 0 {
                    let others = subset(rng, &[0, 1, 2, 3, 4, 5, 6], 1);
                    a.a(0xe92d_0000 | others | 1 << 7); // PUSH {others, r7}
                    a.a(0xe8bd_8000 | others); // POP {others, pc}
                } else {
                    a.a(0xe52d_7004); // PUSH {r7} (STR r7, [sp, #-4]!)
                    a.a(0xe49d_f004); // POP {pc} (LDR pc, [sp], #4)
                }
            }
            7 => {
                adr(&mut a, false, 7, l0, sbit(&t0));
                a.a(0xe24d_5040); // SUB r5, sp, #64
                let others = subset(rng, &[0, 1, 2, 3], 0);
                let n = others.count_ones();
                let wb = rng.below(2);
                // (P, U, where PC is loaded relative to r5)
                let (pu, slot): (u32, i32) = match var {
                    0 => (0b01, 4 * n as i32),       // IA
                    1 => (0b11, 4 * (n as i32 + 1)), // IB
                    2 => (0b10, -4),                 // DB
                    _ => (0b00, 0),                  // DA
                };
                if slot >= 0 {
                    a.a(0xe585_7000 | slot as u32); // STR r7, [r5, #slot]
                } else {
                    a.a(0xe505_7000 | slot.unsigned_abs()); // STR r7, [r5, #-slot]
                }
                a.a(c << 28 | 0x0810_0000 | pu << 23 | wb << 21 | 5 << 16 | others | 0x8000);
            }
            _ => {
                let t = sbit(&t0);
                match var {
                    0 => {
                        adr(&mut a, false, rt, l0, t);
                        a.a(c << 28 | 0x01a0_f000 | rt); // MOV pc, rt
                    }
                    1 => {
                        // MOVW/MOVT rt, #(target - (add + 8)) ; ADD pc, pc, rt
                        a.fix(8, move |r, at| {
                            let v = (r(l0) + t).wrapping_sub(at + 16);
                            let [x, y] = enc::a_mov32(rt, v);
                            [aw(x), aw(y)].concat()
                        });
                        a.a(c << 28 | 0x008f_f000 | rt);
                    }
                    2 => {
                        let d = 4 * rng.below(64);
                        adr(&mut a, false, rt, l0, (t).wrapping_sub(d));
                        a.a(c << 28 | 0x0280_f000 | rt << 16 | d); // ADD pc, rt, #d
                    }
                    _ => {
                        let d = 4 * rng.below(64);
                        adr(&mut a, false, rt, l0, t + d);
                        a.a(c << 28 | 0x0240_f000 | rt << 16 | d); // SUB pc, rt, #d
                    }
                }
            }
        }
    } else {
        let c = cond.min(13);
        let rt = pick(rng, &[0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11]);
        let lo = pick(rng, &[0, 1, 2, 3, 4, 6, 7]);
        match kind {
            0 => a.fix(2, move |r, at| {
                enc::t_b_cond(c, at, r(l0)).to_le_bytes().to_vec()
            }),
            1 => a.fix(2, move |r, at| enc::t_b(at, r(l0)).to_le_bytes().to_vec()),
            2 => a.fix(4, move |r, at| tw(enc::t_bcond_w(c, at, r(l0)))),
            3 => a.fix(4, move |r, at| tw(enc::t_bw(0x9000, at, r(l0)))),
            4 => a.fix(4, move |r, at| tw(enc::t_bw(0xd000, at, r(l0)))),
            5 => a.fix(4, move |r, at| tw(t32_blx_to_arm(at, r(l0)))),
            6 => {
                if var == 0 {
                    a.t(enc::t_movw(lo, rng.below(2) * rng.below(3)));
                }
                let nz = rng.below(2) == 1;
                a.fix(2, move |r, at| {
                    enc::t_cbz(nz, lo, at, r(l0)).to_le_bytes().to_vec()
                });
            }
            7 | 8 => {
                adr(&mut a, true, rt, l0, sbit(&t0));
                a.h(if kind == 7 { 0x4700 } else { 0x4780 } | (rt << 3) as u16);
            }
            9 => ldr_pc_t(&mut a, rng, var, None, l0, sbit(&t0)),
            10 => {
                adr(&mut a, true, 7, l0, sbit(&t0));
                match var {
                    0 => {
                        let others = subset(rng, &[0, 1, 2, 3, 4, 5, 6], 0);
                        a.h(0xb400 | (others | 1 << 7) as u16); // PUSH {others, r7}
                        a.h(0xbd00 | others as u16); // POP {others, pc}
                    }
                    1 => {
                        a.h(0xb082); // SUB sp, #8
                        a.h(0x9701); // STR r7, [sp, #4]
                        a.h(0xb001); // ADD sp, #4
                        a.h(0xbd00); // POP {pc}
                    }
                    _ => {
                        let others = subset(rng, &[0, 1, 2, 3, 4, 5, 6], 1);
                        a.t([0xe92d, (others | 1 << 7) as u16]); // PUSH.W {others, r7}
                        a.t([0xe8bd, (others | 0x8000) as u16]); // POP.W {others, pc}
                    }
                }
            }
            11 => ldm_pc_t(&mut a, rng, var, None, l0, sbit(&t0)),
            12 => {
                adr(&mut a, true, rt, l0, rng.below(2));
                a.h(0x4687 | (rt << 3) as u16); // MOV pc, rt
            }
            13 => {
                let b = rng.below(2);
                // MOVW/MOVT rt, #(target - (add + 4)) ; ADD pc, rt
                a.fix(8, move |r, at| {
                    let v = (r(l0) + b).wrapping_sub(at + 12);
                    [tw(enc::t_movw(rt, v)), tw(enc::t_movt(rt, v))].concat()
                });
                a.h(0x4487 | (rt << 3) as u16);
            }
            14 => {
                let labels: Vec<usize> = targets.iter().map(|p| p.label).collect();
                let idx = rng.below(labels.len() as u32);
                let half = var == 1;
                a.t(enc::t_movw(lo, idx));
                let tb = a.label();
                a.bind(tb);
                a.t([0xe8df, (0xf000 | (half as u32) << 4 | lo) as u16]);
                table(&mut a, tb, labels, half);
            }
            15 => {
                let labels: Vec<usize> = targets.iter().map(|p| p.label).collect();
                post = Some(tb_rn(&mut a, rng, var == 1, None, labels));
            }
            _ => {
                // An IT block of one instruction: the branch, which must be last.
                let it = 0xbf08 | (c << 4) as u16;
                match var {
                    0 => {
                        adr(&mut a, true, rt, l0, sbit(&t0));
                        a.h(it);
                        a.h(0x4700 | (rt << 3) as u16); // BX rt
                    }
                    1 => {
                        a.h(it);
                        a.fix(2, move |r, at| enc::t_b(at, r(l0)).to_le_bytes().to_vec());
                    }
                    2 => {
                        a.h(it);
                        a.fix(4, move |r, at| tw(enc::t_bw(0x9000, at, r(l0))));
                    }
                    3 => {
                        a.h(it);
                        a.fix(4, move |r, at| tw(enc::t_bw(0xd000, at, r(l0))));
                    }
                    4 => {
                        a.h(it);
                        a.fix(4, move |r, at| tw(t32_blx_to_arm(at, r(l0))));
                    }
                    5 => {
                        let v = rng.below(5);
                        if rng.below(2) == 0 {
                            ldr_pc_t(&mut a, rng, v, Some(it), l0, sbit(&t0));
                        } else {
                            ldm_pc_t(&mut a, rng, v % 2, Some(it), l0, sbit(&t0));
                        }
                    }
                    6 => {
                        adr(&mut a, true, rt, l0, rng.below(2));
                        a.h(it);
                        a.h(0x4687 | (rt << 3) as u16); // MOV pc, rt
                    }
                    _ => {
                        let labels: Vec<usize> = targets.iter().map(|p| p.label).collect();
                        let half = rng.below(2) == 1;
                        post = Some(tb_rn(&mut a, rng, half, Some(it), labels));
                    }
                }
            }
        }
    }
    emit_pad(&mut a, &fall, 1, end_t, end_a);
    for (p, ret) in &after {
        emit_pad(&mut a, p, *ret, end_t, end_a);
    }
    if let Some(f) = post {
        f(&mut a);
    }
    a.align4();
    a.bind(end_t);
    a.h(0x4778); // BX pc
    a.h(0x46c0); // NOP
    a.bind(end_a);
    let bytes = a.finish();
    let code = if thumb {
        bytes
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]) as u32)
            .collect()
    } else {
        bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let mut regs = random_regs(rng, thumb);
    regs[12] = 0;
    let mut c = Case::new(thumb, code, regs);
    c.ends_arm = true;
    c.note = note;
    c
}

/// Thumb `LDR pc` from a stack slot addressed by r5 (`it`: an IT instruction placed just
/// before the load).
fn ldr_pc_t(a: &mut Asm, rng: &mut Rng, var: u32, it: Option<u16>, l: usize, t: u32) {
    adr(a, true, 7, l, t);
    a.t([0xf2ad, 0x0540]); // SUBW r5, sp, #64
    let imm = 4 * rng.below(16);
    let str_w = |off: u32| [0xf8c5, (7 << 12 | off) as u16]; // STR.W r7, [r5, #off]
    let ldr: [u16; 2] = match var {
        0 => {
            a.t(str_w(imm));
            [0xf8d5, (0xf000 | imm) as u16] // LDR.W pc, [r5, #imm]
        }
        1 => {
            let imm = imm.max(4);
            a.t([0xf845, (7 << 12 | 0xc00 | imm) as u16]); // STR r7, [r5, #-imm]
            [0xf855, (0xfc00 | imm) as u16] // LDR pc, [r5, #-imm]
        }
        2 => {
            a.t(str_w(0));
            [0xf855, (0xfb00 | imm) as u16] // LDR pc, [r5], #imm
        }
        3 => {
            a.t(str_w(imm));
            [0xf855, (0xff00 | imm) as u16] // LDR pc, [r5, #imm]!
        }
        _ => {
            a.t(str_w(imm));
            a.t(enc::t_movw(6, imm / 4));
            [0xf855, 0xf026] // LDR.W pc, [r5, r6, LSL #2]
        }
    };
    if let Some(it) = it {
        a.h(it);
    }
    a.t(ldr);
}

/// Thumb `LDM.W r5{!}, {others, pc}` (IA or DB).
fn ldm_pc_t(a: &mut Asm, rng: &mut Rng, var: u32, it: Option<u16>, l: usize, t: u32) {
    adr(a, true, 7, l, t);
    a.t([0xf2ad, 0x0540]); // SUBW r5, sp, #64
    let others = subset(rng, &[0, 1, 2, 3], 1);
    let wb = rng.below(2) as u16;
    let hw1 = if var == 0 {
        a.t([0xf8c5, (7 << 12 | (4 * others.count_ones())) as u16]); // STR.W r7, [r5, #4n]
        0xe895
    } else {
        a.t([0xf845, 7 << 12 | 0xc04]); // STR r7, [r5, #-4]
        0xe915
    };
    if let Some(it) = it {
        a.h(it);
    }
    a.t([hw1 | wb << 5, (others | 0x8000) as u16]);
}

/// A TBB/TBH table at the current position for the branch at label `tb`.
fn table(a: &mut Asm, tb: usize, labels: Vec<usize>, half: bool) {
    let n = labels.len() as u32;
    let size = if half { 2 * n } else { (n + 1) & !1 };
    a.fix(size, move |r, _| {
        let base = r(tb) + 4;
        let mut out = Vec::new();
        for &l in &labels {
            let e = (r(l) - base) / 2;
            if half {
                out.extend((e as u16).to_le_bytes());
            } else {
                assert!(e < 256);
                out.push(e as u8);
            }
        }
        if out.len() % 2 == 1 {
            out.push(0);
        }
        out
    });
}

/// `TBB/TBH [r5, rm]` with the table placed after the pads (returned as a hook).
fn tb_rn(a: &mut Asm, rng: &mut Rng, half: bool, it: Option<u16>, labels: Vec<usize>) -> Post {
    let tab = a.label();
    let rm = pick(rng, &[0, 1, 2, 3, 6]);
    adr(a, true, 5, tab, 0);
    a.t(enc::t_movw(rm, rng.below(labels.len() as u32)));
    if let Some(it) = it {
        a.h(it);
    }
    let tb = a.label();
    a.bind(tb);
    a.t([0xe8d5, (0xf000 | (half as u32) << 4 | rm) as u16]);
    Box::new(move |a: &mut Asm| {
        a.bind(tab);
        table(a, tb, labels, half);
    })
}

#[test]
fn branches_vs_qemu_arm() {
    let _ = common::qemu_arm();
    let seed: u64 = std::env::var("DBT_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_a32b);
    let count: usize = std::env::var("DBT_BRANCH_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1200);
    let mut rng = Rng::seeded(seed);
    let src = scratch(&mut rng);
    let mut cases = Vec::new();
    // Directed: every kind and variant, in both flag outcomes (most likely).
    for thumb in [false, true] {
        let kinds = if thumb { T_KINDS } else { A32_KINDS };
        for (k, &(_, vars)) in kinds.iter().enumerate() {
            for v in 0..vars {
                for _ in 0..2 {
                    cases.push(gen(&mut rng, thumb, k, v));
                }
            }
        }
    }
    let directed = cases.len();
    for n in 0..count {
        let thumb = n % 2 == 1;
        let kinds = if thumb { T_KINDS } else { A32_KINDS };
        let k = rng.below(kinds.len() as u32) as usize;
        let v = rng.below(kinds[k].1);
        cases.push(gen(&mut rng, thumb, k, v));
    }
    let mut stats = vec![0u64; dbt_armv7::Class::COUNT];
    let mut fails = Vec::new();
    for (b, chunk) in cases.chunks(250).enumerate() {
        fails.extend(run_batch(chunk, &src, &mut stats, &format!("branches{b}")));
    }
    record_coverage("diff_branches", &stats);
    println!(
        "branches: {directed} directed + {count} random cases, {} mismatches",
        fails.len()
    );
    if !fails.is_empty() {
        for f in fails.iter().take(15) {
            eprintln!("{f}");
        }
        panic!("{} branch mismatches (seed {seed:#x})", fails.len());
    }
}
