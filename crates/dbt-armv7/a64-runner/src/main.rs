//! `dbt-a64-runner [--interp] guest.elf`: runs a static ARM Linux ELF32 (user mode, the
//! `write` and `exit` system calls) through dbt-armv7's translator on an AArch64 Linux host
//! (under `qemu-aarch64` in the tests). Guest memory is mapped at the guest's own addresses
//! in the low 4 GiB, so translated loads and stores use guest addresses as they are. The
//! guest's output goes to stdout; the engine's counters to stderr. Exit status: the
//! guest's, or 2 for a guest exception, 3 for a spent budget, 4 for a bad ELF.
//!
//! `--skip-aborts`: report each data abort (PC, registers, CPSR) and continue after the
//! instruction. `--retranslate`: at the end, translate every block once more (the
//! translation cost, for `cargo xtask bench --dbt`). `--fuzz=N`: N chunks of random code
//! (see `fuzz.rs`). `--privileged`: start in SVC mode (PL1) instead of User mode.
//! `--no-protect`: do not write-protect translated guest pages (self-modifying code is
//! then seen only through the guest's instruction-cache maintenance). `--vectors`: the
//! guest's exceptions other than SVC are taken through its own vectors (`VBAR`) instead
//! of ending the run, so a privileged guest can handle them (an OS in miniature).
//! `--svc-vectors`: with `--vectors`, `SVC` too; the guest's system calls are then
//! `HVC #0` (from PL1) with the same registers. `--irq-line`: the guest drives its own
//! IRQ input through `CNTV_CTL` (see `irq.rs`). `--slice=N`: run in slices of N guest
//! instructions (`Dbt::set_budget_is_slice`), the IRQ input set from that line before
//! each, as the in-VM runtime runs its guest.

#![no_std]
#![no_main]

extern crate alloc;

mod code;
mod fault;
mod fuzz;
mod heap;
mod irq;
mod sys;

use alloc::format;
use alloc::vec::Vec;
use dbt_armv7::cpu::{psr, Exception};
use dbt_armv7::translate::{A64Gen, CodeGen, Dbt};
use dbt_armv7::{Bus, BusFault, Cpu, Exit};

#[global_allocator]
static HEAP: heap::Bump = heap::Bump::new();

core::arch::global_asm!(
    ".section .text._start, \"ax\"",
    ".global _start",
    "_start:",
    "mov x0, sp",
    "bl runner_main",
    "b .",
);

/// Guest RAM: `[lo, hi)` mapped at the same host addresses.
pub struct GuestMem {
    lo: u64,
    hi: u64,
}

impl GuestMem {
    fn ok(&self, pa: u64, size: u8) -> bool {
        pa >= self.lo && pa + size as u64 <= self.hi
    }
}

impl Bus for GuestMem {
    fn read(&mut self, pa: u64, size: u8) -> Result<u64, BusFault> {
        if !self.ok(pa, size) {
            return Err(BusFault);
        }
        let mut b = [0u8; 8];
        // SAFETY: [pa, pa + size) is inside the guest mapping.
        unsafe { core::ptr::copy_nonoverlapping(pa as *const u8, b.as_mut_ptr(), size as usize) };
        Ok(u64::from_le_bytes(b))
    }
    fn write(&mut self, pa: u64, size: u8, value: u64) -> Result<(), BusFault> {
        if !self.ok(pa, size) {
            return Err(BusFault);
        }
        // SAFETY: [pa, pa + size) is inside the guest mapping.
        unsafe {
            core::ptr::copy_nonoverlapping(
                value.to_le_bytes().as_ptr(),
                pa as *mut u8,
                size as usize,
            )
        };
        Ok(())
    }
    fn ram(&mut self, pa: u64) -> Option<&[u8]> {
        if !self.ok(pa, 1) {
            return None;
        }
        // SAFETY: the guest mapping from pa to its end.
        Some(unsafe { core::slice::from_raw_parts(pa as *const u8, (self.hi - pa) as usize) })
    }
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}

/// Loads the PT_LOAD segments of an ELF32 at their addresses; returns (entry, guest memory).
fn load(elf: &[u8]) -> Option<(u32, GuestMem)> {
    if elf.len() < 52 || &elf[..4] != b"\x7fELF" || elf[4] != 1 {
        return None;
    }
    let entry = u32_at(elf, 24);
    let phoff = u32_at(elf, 28) as usize;
    let phnum = u16::from_le_bytes([elf[44], elf[45]]) as usize;
    let segs: Vec<(u32, u32, u32, u32)> = (0..phnum)
        .map(|k| phoff + 32 * k)
        .filter(|&p| u32_at(elf, p) == 1)
        .map(|p| {
            (
                u32_at(elf, p + 4),
                u32_at(elf, p + 8),
                u32_at(elf, p + 16),
                u32_at(elf, p + 20),
            )
        })
        .collect();
    let lo = segs.iter().map(|s| s.1).min()? as u64 & !0xfff;
    let hi = (segs.iter().map(|s| s.1 as u64 + s.3 as u64).max()? + 0x1000 + 0xfff) & !0xfff;
    if !sys::mmap_fixed(lo, hi - lo, false) {
        return None;
    }
    for (off, va, filesz, _) in segs {
        let src = elf.get(off as usize..(off + filesz) as usize)?;
        // SAFETY: the destination is inside the mapping just made.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), va as u64 as *mut u8, src.len()) };
    }
    Some((entry, GuestMem { lo, hi }))
}

#[no_mangle]
extern "C" fn runner_main(sp: *const u64) -> ! {
    // SAFETY: the kernel's initial stack: argc, then argv pointers.
    let args: Vec<*const u8> = unsafe {
        let argc = *sp as usize;
        (1..argc).map(|k| *sp.add(1 + k) as *const u8).collect()
    };
    let arg = |p: *const u8| -> &[u8] {
        // SAFETY: argv strings are NUL-terminated.
        unsafe { core::ffi::CStr::from_ptr(p as *const core::ffi::c_char).to_bytes() }
    };
    let interp_only = args.iter().any(|&a| arg(a) == b"--interp");
    let skip_aborts = args.iter().any(|&a| arg(a) == b"--skip-aborts");
    let retranslate = args.iter().any(|&a| arg(a) == b"--retranslate");
    let privileged = args.iter().any(|&a| arg(a) == b"--privileged");
    let no_protect = args.iter().any(|&a| arg(a) == b"--no-protect");
    let vectors = args.iter().any(|&a| arg(a) == b"--vectors");
    let svc_vectors = args.iter().any(|&a| arg(a) == b"--svc-vectors");
    let irq_line = args.iter().any(|&a| arg(a) == b"--irq-line");
    let slice = args
        .iter()
        .find_map(|&a| arg(a).strip_prefix(b"--slice="))
        .and_then(|n| core::str::from_utf8(n).ok()?.parse::<u64>().ok());
    let Some(&path) = args.iter().find(|&&a| !arg(a).starts_with(b"--")) else {
        sys::write(
            2,
            b"usage: dbt-a64-runner [--interp] [--skip-aborts] [--retranslate] [--privileged] [--vectors] [--svc-vectors] [--no-protect] [--irq-line] [--slice=N] [--fuzz=N] guest.elf\n",
        );
        sys::exit(4);
    };
    let mut elf = Vec::new();
    if !sys::read_file(path, &mut elf) {
        sys::write(2, b"cannot read the guest ELF\n");
        sys::exit(4);
    }
    let Some((entry, mut mem)) = load(&elf) else {
        sys::write(2, b"bad guest ELF\n");
        sys::exit(4);
    };
    let Some(mut code) = code::Code::new(16 << 20) else {
        sys::write(2, b"cannot map the code cache\n");
        sys::exit(4);
    };
    let (base, len) = code.range();
    fault::install(
        base,
        base + len,
        base + A64Gen::new().runtime().1.epilogue as u64,
    );
    let fuzz = args
        .iter()
        .find_map(|&a| arg(a).strip_prefix(b"--fuzz="))
        .and_then(|n| core::str::from_utf8(n).ok()?.parse::<u32>().ok());
    if let Some(n) = fuzz {
        let line = fuzz::run(n, entry & !1, &mut mem, &mut code, interp_only);
        sys::write(2, line.as_bytes());
        sys::exit(0);
    }
    code.protect = !no_protect;
    let mut cpu = if privileged {
        // SVC mode with the MMU off, as after reset (interrupts masked).
        let mut c = Cpu::new();
        if entry & 1 != 0 {
            c.set_cpsr(c.cpsr() | psr::T);
        }
        c
    } else {
        Cpu::new_user(entry & 1 != 0)
    };
    cpu.set_pc(entry & !1);
    cpu.set_exit_on_svc(!svc_vectors);
    cpu.set_exit_on_exception(!vectors);
    if irq_line {
        cpu.set_coproc_host(alloc::boxed::Box::new(irq::TimerLine));
    }
    let mut dbt = Dbt::new(A64Gen::new());
    dbt.set_budget_is_slice(slice.is_some());
    let mut left: u64 = 2_000_000_000;
    let status = loop {
        let before = cpu.icount;
        let n = slice.map_or(left, |s| s.min(left));
        if slice.is_some() {
            cpu.irq_line = irq::line();
        }
        let exit = if interp_only {
            cpu.run(&mut mem, n)
        } else {
            dbt.run(&mut cpu, &mut mem, &mut code, n)
        };
        left = left.saturating_sub(cpu.icount - before);
        match exit {
            Exit::Budget if slice.is_some() && left > 0 => {}
            e @ (Exit::Svc(_) | Exit::Hvc(_)) if svc_vectors || matches!(e, Exit::Svc(_)) => {
                match cpu.reg(7) {
                    4 => {
                        let (p, n) = (cpu.reg(1) as u64, cpu.reg(2) as u64);
                        if !mem.ok(p, 1) || !mem.ok(p + n, 0) {
                            break 2;
                        }
                        // SAFETY: checked to be inside the guest mapping.
                        sys::write(1, unsafe {
                            core::slice::from_raw_parts(p as *const u8, n as usize)
                        });
                        cpu.set_reg(0, n as u32);
                    }
                    1 => break cpu.reg(0) as u64,
                    n => {
                        sys::write(2, format!("unexpected syscall {n}\n").as_bytes());
                        break 2;
                    }
                }
            }
            Exit::Budget => break 3,
            Exit::Exception(e @ Exception::DataAbort { .. }) if skip_aborts => {
                // Report the exact state at the abort, then continue after the instruction.
                sys::write(2, abort_line(&cpu, &format!("{e:?}")).as_bytes());
                skip(&mut cpu, &mut mem);
            }
            e => {
                sys::write(2, format!("{e:?} at pc {:#x}\n", cpu.reg(15)).as_bytes());
                break 2;
            }
        }
    };
    if retranslate {
        // Translation cost measurements: the same blocks once more.
        let n = dbt.retranslate_all(&mut mem, &mut code);
        sys::write(
            2,
            format!("retranslated {n} guest instructions\n").as_bytes(),
        );
    }
    let s = dbt.stats();
    sys::write(
        2,
        format!(
            "dbt: icount {} translated {} interpreted {} blocks {} guest_insns {} host_insns {} entries {} links {} flushes {} faults {} side_exits {} smc {} system_calls {} code_invalidations {} aborts_delivered {}\n",
            cpu.icount, s.executed_translated, s.executed_interpreted, s.blocks, s.guest_insns,
            s.host_insns, s.entries, s.links, s.flushes, s.faults, s.side_exits, s.smc, s.system_calls, s.code_invalidations,
            s.aborts_delivered
        )
        .as_bytes(),
    );
    sys::exit(status)
}

/// Continues after the instruction at the PC (its length; the IT state advanced).
fn skip(cpu: &mut Cpu, mem: &mut GuestMem) {
    let pc = cpu.reg(15);
    let wide = !cpu.thumb()
        || mem
            .read(pc as u64, 2)
            .is_ok_and(|h| dbt_armv7::decode::t32_is_32bit(h as u16));
    let len = if wide { 4 } else { 2 };
    let c = cpu.cpsr();
    let it = ((c >> 25) & 3) | ((c >> 10) & 0x3f) << 2;
    let it = if it & 7 == 0 {
        0
    } else {
        (it & 0xe0) | ((it << 1) & 0x1f)
    };
    cpu.set_cpsr(c & !psr::IT_MASK | (it & 3) << 25 | (it >> 2) << 10);
    cpu.set_pc(pc.wrapping_add(len));
}

/// `abort <exception> pc r0..r14 cpsr`, one line.
fn abort_line(cpu: &Cpu, e: &str) -> alloc::string::String {
    let mut s = format!("abort {e} pc={:08x}", cpu.reg(15));
    for n in 0..15 {
        s.push_str(&format!(" {:08x}", cpu.reg(n)));
    }
    s.push_str(&format!(" cpsr={:08x}\n", cpu.cpsr()));
    s
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    sys::write(2, format!("dbt-a64-runner panicked: {info}\n").as_bytes());
    sys::exit(101)
}
