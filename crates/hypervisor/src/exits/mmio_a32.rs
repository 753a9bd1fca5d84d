//! MMIO data aborts of an AArch32 context without a valid syndrome (`ESR_EL2.ISV` = 0: a
//! writeback form, `LDRD`/`STRD`, `LDM`/`STM`...): the instruction is fetched through the
//! guest's stage 1 (`dbt-armv7`'s short-descriptor and LPAE walkers, or the MMU off),
//! decoded with `dbt-armv7`'s A32/T32 decoder and performed one access at a time on the
//! bus, with the base register written back. Loads into the PC, exclusives, unprivileged
//! forms and anything not a plain load/store are refused (the guest gets an external abort).

use dbt_armv7::cp15::Cp15;
use dbt_armv7::decode::{Addr, MemOff, Op, Shift, Size};
use dbt_armv7::mmu;
use dbt_armv7::{decode_a32, decode_thumb, Bus, BusFault, Insn};
use el2_core::aarch32::{gpr_index, mode, CPSR_T};
use el2_core::exit::DataAbort;
use el2_core::mmio::{AccessSize, MmioAccess};
use el2_core::switch::El1Reg;

use super::mmio::{access, MmioFail};
use super::{ExitCtx, ExitHost};

/// `SCTLR.M`: the stage-1 MMU is on.
const SCTLR_M: u64 = 1;
/// Offset within a 4 KiB page.
const PAGE_MASK: u64 = 0xfff;
/// The PC as an A32 instruction reads it: its address + 8 (+ 4 in T32).
const PC_READ_A32: u32 = 8;
/// The same in T32.
const PC_READ_T32: u32 = 4;
/// `R15`, the PC.
const PC: u8 = 15;
/// Largest number of registers one `LDM`/`STM` transfers.
const MAX_REGS: usize = 16;

/// Guest RAM as the stage-1 walker reads it (read-only: a walk never writes).
struct RamBus<'a, H>(&'a H);

impl<H: ExitHost> Bus for RamBus<'_, H> {
    fn read(&mut self, pa: u64, size: u8) -> Result<u64, BusFault> {
        let word = self.0.read_ram_u64(pa & !7).ok_or(BusFault)?;
        let shift = (pa & 7) * 8;
        let bits = u32::from(size) * 8;
        if (pa & 7) + u64::from(size) > 8 {
            return Err(BusFault);
        }
        let v = word >> shift;
        Ok(if bits >= 64 { v } else { v & ((1 << bits) - 1) })
    }
    fn write(&mut self, _: u64, _: u8, _: u64) -> Result<(), BusFault> {
        Err(BusFault)
    }
}

/// One access of the instruction: the guest VA, the register and the direction.
#[derive(Clone, Copy)]
struct Element {
    va: u32,
    size: AccessSize,
    signed: bool,
    /// AArch32 register number.
    reg: u8,
    load: bool,
}

/// The decoded load/store: its accesses and the base register's new value.
struct Plan {
    elements: [Option<Element>; MAX_REGS],
    writeback: Option<(u8, u32)>,
}

/// Emulates an `ISV` = 0 abort of an AArch32 context. Returns the instruction's length in
/// bytes (the PC steps over it; `ESR_EL2.IL` is not valid without a syndrome).
pub fn undecoded<H: ExitHost>(ctx: &mut ExitCtx<'_, H>, da: &DataAbort) -> Result<u64, MmioFail> {
    let insn = fetch(ctx)?;
    let plan = plan(ctx, &insn)?;
    let far = (!da.fnv).then_some(da.far as u32);
    let first = plan
        .elements
        .iter()
        .flatten()
        .next()
        .ok_or(MmioFail::Refused(
            "instruction is not an emulatable load/store",
        ))?;
    if far.is_some_and(|f| f != first.va)
        && plan.elements.iter().flatten().all(|e| Some(e.va) != far)
    {
        return Err(MmioFail::Refused(
            "the decoded address does not match FAR_EL2",
        ));
    }
    // Every element's IPA: the faulting page's IPA plus its offset, within that page.
    let fault_va = far.unwrap_or(first.va);
    let page_ipa = da.ipa & !PAGE_MASK;
    let cpsr_mode = mode(ctx.vcpu.regs.pstate);
    for e in plan.elements.iter().flatten() {
        if u64::from(e.va) & !PAGE_MASK != u64::from(fault_va) & !PAGE_MASK {
            return Err(MmioFail::Refused("the access crosses a page"));
        }
        let x =
            gpr_index(cpsr_mode, e.reg).ok_or(MmioFail::Refused("transfer register is the PC"))?;
        let acc = MmioAccess {
            ipa: page_ipa | (u64::from(e.va) & PAGE_MASK),
            size: e.size,
            is_write: !e.load,
            rt: x as u8,
            sign_extend: e.signed,
            sf: false,
            acquire_release: false,
        };
        let value = ctx.vcpu.regs.read(x as u8) & u64::from(u32::MAX);
        if let Some(v) = access(ctx, &acc, value)? {
            ctx.vcpu.regs.write(x as u8, v & u64::from(u32::MAX));
        }
    }
    if let Some((rn, value)) = plan.writeback {
        let x = gpr_index(cpsr_mode, rn).ok_or(MmioFail::Refused("writeback to the PC"))?;
        ctx.vcpu.regs.write(x as u8, u64::from(value));
    }
    Ok(u64::from(insn.len))
}

/// Reads the instruction at the guest's PC through its stage 1 and decodes it.
fn fetch<H: ExitHost>(ctx: &ExitCtx<'_, H>) -> Result<Insn, MmioFail> {
    let sw = ctx.sw;
    let cp15 = Cp15 {
        sctlr: sw.el1_read(ctx.vcpu, El1Reg::Sctlr) as u32,
        ttbcr: sw.el1_read(ctx.vcpu, El1Reg::Tcr) as u32,
        ttbr0: sw.el1_read(ctx.vcpu, El1Reg::Ttbr0),
        ttbr1: sw.el1_read(ctx.vcpu, El1Reg::Ttbr1),
        dacr: sw.el1_read(ctx.vcpu, El1Reg::Dacr32) as u32,
        ..Cp15::new()
    };
    let mut bus = RamBus(&*ctx.vm);
    let mut read16 = |va: u32| -> Result<u16, MmioFail> {
        let pa = if u64::from(cp15.sctlr) & SCTLR_M == 0 {
            u64::from(va)
        } else {
            let w = mmu::walk(&cp15, &mut bus, va)
                .map_err(|_| MmioFail::Refused("the guest PC does not translate"))?;
            w.pa_page | (u64::from(va) & PAGE_MASK)
        };
        bus.read(pa, 2)
            .map(|v| v as u16)
            .map_err(|_| MmioFail::Refused("the guest PC is not in RAM"))
    };
    let pc = ctx.vcpu.regs.pc as u32;
    let hw1 = read16(pc)?;
    let hw2 = read16(pc.wrapping_add(2))?;
    Ok(if ctx.vcpu.regs.pstate & CPSR_T != 0 {
        decode_thumb(hw1, hw2)
    } else {
        decode_a32(u32::from(hw1) | (u32::from(hw2) << 16))
    })
}

/// The accesses and writeback of a plain load/store.
fn plan<H: ExitHost>(ctx: &ExitCtx<'_, H>, insn: &Insn) -> Result<Plan, MmioFail> {
    let mut p = Plan {
        elements: [None; MAX_REGS],
        writeback: None,
    };
    if insn.unpredictable || insn.is_undefined() {
        return Err(MmioFail::Refused("UNPREDICTABLE or UNDEFINED encoding"));
    }
    let read = |r: u8| -> u32 { reg(ctx, insn, r) };
    match insn.op {
        Op::Mem {
            load,
            size,
            signed,
            rt,
            addr,
            unpriv: false,
        } if rt != PC => {
            let size = access_size(size).ok_or(MmioFail::Refused("unsupported access size"))?;
            let (va, wb) = address(&addr, read)?;
            p.elements[0] = Some(Element {
                va,
                size,
                signed,
                reg: rt,
                load,
            });
            p.writeback = wb;
        }
        Op::MemDual {
            load,
            rt,
            rt2,
            addr,
        } if rt != PC && rt2 != PC => {
            let (va, wb) = address(&addr, read)?;
            p.elements[0] = Some(Element {
                va,
                size: AccessSize::Word,
                signed: false,
                reg: rt,
                load,
            });
            p.elements[1] = Some(Element {
                va: va.wrapping_add(4),
                size: AccessSize::Word,
                signed: false,
                reg: rt2,
                load,
            });
            p.writeback = wb;
        }
        Op::Multi {
            load,
            rn,
            list,
            inc,
            before,
            wback,
            user: false,
        } if list != 0 && list & (1 << PC) == 0 && rn != PC => {
            let n = list.count_ones();
            let base = read(rn);
            let span = 4 * n;
            let lowest = match (inc, before) {
                (true, false) => base,
                (true, true) => base.wrapping_add(4),
                (false, false) => base.wrapping_sub(span).wrapping_add(4),
                (false, true) => base.wrapping_sub(span),
            };
            for (i, r) in (0..MAX_REGS as u8)
                .filter(|r| list & (1 << r) != 0)
                .enumerate()
            {
                p.elements[i] = Some(Element {
                    va: lowest.wrapping_add(4 * i as u32),
                    size: AccessSize::Word,
                    signed: false,
                    reg: r,
                    load,
                });
            }
            // A loaded base keeps its loaded value (no writeback).
            if wback && !(load && list & (1 << rn) != 0) {
                let new = if inc {
                    base.wrapping_add(span)
                } else {
                    base.wrapping_sub(span)
                };
                p.writeback = Some((rn, new));
            }
        }
        _ => {
            return Err(MmioFail::Refused(
                "instruction is not an emulatable load/store",
            ))
        }
    }
    Ok(p)
}

/// `(address accessed, base writeback)` of a single or dual load/store.
fn address(a: &Addr, read: impl Fn(u8) -> u32) -> Result<(u32, Option<(u8, u32)>), MmioFail> {
    let base = read(a.rn);
    let off = match a.off {
        MemOff::Imm(v) => v,
        MemOff::Reg { rm, shift, amount } => {
            let v = read(rm);
            let n = u32::from(amount);
            match shift {
                Shift::Lsl => v.checked_shl(n).unwrap_or(0),
                Shift::Lsr => v.checked_shr(n).unwrap_or(0),
                Shift::Asr => ((v as i32) >> n.min(31)) as u32,
                Shift::Ror => v.rotate_right(n),
                Shift::Rrx => return Err(MmioFail::Refused("RRX offset")),
            }
        }
    };
    let offset_addr = if a.add {
        base.wrapping_add(off)
    } else {
        base.wrapping_sub(off)
    };
    let va = if a.index { offset_addr } else { base };
    let wb = (a.wback || !a.index).then_some((a.rn, offset_addr));
    if wb.is_some() && a.rn == PC {
        return Err(MmioFail::Refused("writeback to the PC"));
    }
    Ok((va, wb))
}

/// AArch32 register `r` as the instruction reads it (the PC: its address + 8, or + 4 in
/// T32, word-aligned for T32 loads).
fn reg<H: ExitHost>(ctx: &ExitCtx<'_, H>, insn: &Insn, r: u8) -> u32 {
    let pc = ctx.vcpu.regs.pc as u32;
    if r == PC {
        return if insn.thumb {
            pc.wrapping_add(PC_READ_T32) & !3
        } else {
            pc.wrapping_add(PC_READ_A32)
        };
    }
    gpr_index(mode(ctx.vcpu.regs.pstate), r)
        .map(|x| ctx.vcpu.regs.read(x as u8) as u32)
        .unwrap_or(0)
}

/// The bus access size of a load/store size (`None`: doubleword, done as two words).
fn access_size(s: Size) -> Option<AccessSize> {
    match s {
        Size::B => Some(AccessSize::Byte),
        Size::H => Some(AccessSize::Half),
        Size::W => Some(AccessSize::Word),
        Size::D => None,
    }
}
