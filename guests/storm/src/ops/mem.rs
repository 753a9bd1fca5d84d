//! Loads and stores of every form (see [`super::forms`]) at EL1 and EL0, aimed anywhere in
//! the IPA space through the storm's windows, as Device or as Normal memory. The answers:
//! - all of the access inside this VM's RAM: it completes (loads of the image read what
//!   the identity map reads), unless stage 1 refuses it (alignment on Device memory,
//!   an exclusive/atomic the memory type does not support);
//! - all of it inside an emulated device: it completes or gets a synchronous external
//!   abort (or one of those stage-1 faults);
//! - anything else (unbacked IPA, partly RAM, beyond the IPA size): a synchronous external
//!   abort (or an address size fault beyond the VM's IPA size), never a completed access;
//! - every data abort is reported at the right EL (`EC` 0x25 at EL1, 0x24 from EL0), with
//!   `IL` = 1 and `FAR_EL1` inside the access unless `FnV` says it is not valid;
//! - no load anywhere returns the neighbour VM's pattern.

use crate::code;
use crate::neighbour_tag;
use crate::ops::forms::{Form, FORMS};
use crate::ops::sysreg::Shown;
use crate::ops::Ctx;
use crate::paging::{self, Window};
use crate::rng::Rng;
use crate::tally::{self, Kind};
use crate::targets::{DevKind, Region, Targets};
use crate::vectors;

/// Where an access landed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Place {
    Ram,
    Device(DevKind),
    Nothing,
}

/// Picks a target IPA for `form` (aligned to its alignment unless `unaligned`).
fn pick_target(rng: &mut Rng, t: &Targets, cpu: usize, form: &Form, only_gic: bool) -> u64 {
    let dev = |rng: &mut Rng, r: &Region| -> u64 {
        let off = if rng.chance(1, 16) {
            r.size + rng.below(256)
        } else {
            rng.below(r.size)
        };
        r.base + off
    };
    let ipa = if only_gic {
        let gics: [Option<&Region>; 3] = {
            let mut it = t
                .regions()
                .iter()
                .filter(|r| matches!(r.kind, DevKind::Gicd | DevKind::Gicr | DevKind::Gicc));
            [it.next(), it.next(), it.next()]
        };
        let n = gics.iter().filter(|g| g.is_some()).count() as u64;
        match gics[rng.below(n.max(1)) as usize] {
            Some(r) => dev(rng, r),
            None => t.outside(rng),
        }
    } else {
        match rng.below(100) {
            0..=34 if t.nregions > 0 => {
                let r = t.regions()[rng.below(t.nregions as u64) as usize];
                dev(rng, &r)
            }
            35..=59 => rng.below(1 << t.ipa_bits.min(48)),
            60..=67 => t.ram_end - 64 + rng.below(128),
            68..=71 => t.ram - 64 + rng.below(128),
            72..=85 => {
                if form.write {
                    if rng.chance(1, 2) {
                        t.scratch(cpu) + rng.below(crate::targets::CPU_SCRATCH_SIZE / 2 - 64)
                    } else {
                        t.dma_buf() + rng.below(crate::targets::DMA_BUF_SIZE - 64)
                    }
                } else {
                    t.ram + rng.below(t.ram_end - t.ram)
                }
            }
            86..=93 => {
                let edge = 1u64 << t.ipa_bits.min(47);
                edge - 64 + rng.below(128)
            }
            _ => rng.below(paging::OA_END),
        }
    };
    let align = if rng.chance(1, 12) && !form.is_zva() {
        1
    } else {
        form.align
    };
    ipa & !(align - 1)
}

impl Targets {
    fn place(&self, ipa: u64, len: u64) -> Place {
        if self.in_ram(ipa, len) {
            Place::Ram
        } else if let Some(r) = self.device_at(ipa, len) {
            Place::Device(r.kind)
        } else if self.touches_device(ipa, len) && !self.touches_ram(ipa, len) {
            // straddles a device's end (into another device or nothing): the device part
            // may be emulated before the rest aborts
            Place::Device(DevKind::Other)
        } else {
            Place::Nothing
        }
    }
}

/// Whether a store of `form` at `ipa` is one the storm may do (see the module doc of
/// [`crate::ops`]): nothing in RAM but its scratch, and not the device registers it needs.
fn store_allowed(t: &Targets, cpu: usize, ipa: u64, form: &Form) -> bool {
    let len = form.size;
    if t.touches_ram(ipa, len) {
        // Partly RAM, partly not: allowed only where the RAM part is writable scratch.
        let lo = ipa.max(t.ram);
        let hi = (ipa + len).min(t.ram_end);
        return t.storable(cpu, lo, hi - lo);
    }
    for r in t.regions() {
        if ipa >= r.base + r.size || ipa + len <= r.base {
            continue;
        }
        let off = ipa.saturating_sub(r.base);
        let end = ipa + len - r.base;
        let ok = match r.kind {
            // DR prints, CR's loopback bit would swallow the console
            DevKind::Pl011 => off >= 0x10 && !(off < 0x34 && end > 0x30),
            // GICD_CTLR: the distributor the WFI operations need
            DevKind::Gicd => off >= 0x40,
            // only this vCPU's own redistributor (RD + SGI frames, 128 KiB)
            DevKind::Gicr => off / 0x2_0000 == cpu as u64 && end <= (cpu as u64 + 1) * 0x2_0000,
            // GICC_APRn/NSAPRn: active priorities
            DevKind::Gicc => !(off < 0xf0 && end > 0xd0),
            DevKind::Virtio | DevKind::Other => true,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// True if a load of `[ipa, ipa + len)` would read `GICC_IAR`/`GICC_AIAR`: acknowledging
/// an interrupt nothing ends raises the running priority for good.
fn acks(t: &Targets, ipa: u64, len: u64) -> bool {
    t.regions().iter().any(|r| {
        r.kind == DevKind::Gicc
            && [0x0c, 0x20]
                .iter()
                .any(|&o| ipa < r.base + o + 4 && ipa + len > r.base + o)
    })
}

/// Store data for `ipa`: random; in a virtio transport every 32-bit lane has bit 31 set,
/// so a queue address written from it (alone or as a low/high pair) is outside RAM.
fn store_data(rng: &mut Rng, t: &Targets, ipa: u64, len: u64) -> u64 {
    let v = rng.next();
    let virtio = t
        .regions()
        .iter()
        .any(|r| r.kind == DevKind::Virtio && ipa < r.base + r.size && ipa + len > r.base);
    if virtio {
        v | 0x8000_0000_8000_0000
    } else {
        v
    }
}

/// One load/store operation; `el0` runs it at EL0, `only_gic` aims at the GIC only.
pub fn op(ctx: &mut Ctx, el0: bool, only_gic: bool) {
    let rng = &mut ctx.rng;
    let form = loop {
        let f = FORMS[rng.below(FORMS.len() as u64) as usize];
        if f.is_lse() && !ctx.lse {
            continue;
        }
        if only_gic && !(f.write && matches!(f.kind, Kind::Store)) {
            continue;
        }
        if el0 && !f.el0 || f.is_zva() && !ctx.zva64 {
            continue;
        }
        break f;
    };
    let t = ctx.targets;
    let ipa = pick_target(rng, t, ctx.cpu, &form, only_gic);
    if form.write && !store_allowed(t, ctx.cpu, ipa, &form)
        || !form.write && acks(t, ipa, form.size)
    {
        return;
    }
    let window = if form.is_zva() || rng.chance(1, 2) {
        Window::Normal
    } else {
        Window::Device
    };
    let kind = if only_gic {
        Kind::GicWrite
    } else if el0 {
        Kind::El0Access
    } else {
        form.kind
    };
    let va = paging::map(window, ipa);
    let data = store_data(rng, t, ipa, form.size);
    tally::count(kind);
    vectors::clear();
    let (pc, x0, x2, v0, status, x1) = if el0 {
        let (pc, (x0, x2)) =
            code::run_el0(&[form.insn], data, va, data.rotate_left(17), ctx.el0_sp);
        (pc, x0, x2, 0, 1, None)
    } else {
        let (pc, out) = code::run_el1(
            &[form.insn],
            [data, va, data.rotate_left(17), 0, 0, 0, 0, 0],
            data,
        );
        (pc, out.x[0], out.x[2], out.v0, out.x[3], Some(out.x[1]))
    };
    let f = vectors::take();
    let touched_pl011 = form.write
        && t.regions()
            .iter()
            .any(|r| r.kind == DevKind::Pl011 && ipa < r.base + r.size && ipa + 64 > r.base);
    if touched_pl011 {
        crate::console_repair();
    }
    let place = t.place(ipa, form.size);
    let what = Desc {
        form: &form,
        ipa,
        va,
        window,
        el0,
        place,
    };

    // The neighbour's pattern must never come back from a load.
    if f.is_none() && !form.write && place != Place::Ram {
        for v in [x0, x2, v0] {
            if neighbour_tag(v) {
                tally::leak(kind, format_args!("{what} read {v:#x}"));
            }
        }
    }
    // The base register: written back only by a post-index form that completed.
    if let Some(x1) = x1 {
        let want = if f.is_none() {
            va.wrapping_add(form.writeback())
        } else {
            va
        };
        if x1 != want {
            tally::fail(
                kind,
                format_args!(
                    "{what}: x1 = {x1:#x} afterwards, expected {want:#x} ({})",
                    Shown(f)
                ),
            );
        }
    }
    if f.is_none() && !form.write {
        if let Place::Device(dev) = place {
            check_device_value(t, kind, &what, dev, [x0, 0, x2]);
        }
    }
    match f {
        None => {
            if form.never_faults() || place != Place::Nothing {
                if place == Place::Ram && form.destinations()[0] == Some((0, 0, 8, false)) && !el0 {
                    check_ram_value(t, kind, &what, x0);
                }
                return;
            }
            if form.is_cmo() && !t.touches_ram(ipa, form.size) {
                return; // cache maintenance on an address without memory may complete
            }
            if form.is_store_exclusive() && status & 0xffff_ffff != 0 {
                return; // failed without accessing memory
            }
            tally::fail(
                kind,
                format_args!("{what}: completed without an abort (x0 {x0:#x})"),
            );
        }
        Some(f) => {
            // EL0 cache maintenance may be disabled by SCTLR_EL1 (UCI, DZE): a trap to EL1
            if el0 && form.kind == Kind::CacheOp && f.ec() == 0x18 && f.elr == pc {
                return;
            }
            let ec_ok = if el0 {
                f.from_el0 && f.ec() == 0x24
            } else {
                f.ec() == 0x25
            };
            let fsc = f.fsc();
            let stage1 = matches!(fsc, 0x21 | 0x35);
            let addr_size = matches!(fsc, 0x00..=0x03) && ipa + form.size > (1 << t.ipa_bits);
            let fsc_ok = match place {
                Place::Ram => stage1,
                Place::Device(_) | Place::Nothing => fsc == 0x10 || stage1 || addr_size,
            } && !form.never_faults();
            let il = f.esr & (1 << 25) != 0;
            let fnv = f.esr & (1 << 10) != 0;
            let far_ok = fnv || (f.far >= (va & !0xfff) && f.far < va + form.size + 64);
            let where_ok = f.elr == pc;
            let wnr_ok = match form.kind {
                Kind::Load => f.esr & (1 << 6) == 0,
                Kind::Store => f.esr & (1 << 6) != 0,
                _ => true,
            };
            if !(ec_ok && fsc_ok && il && far_ok && where_ok && wnr_ok) {
                tally::fail(
                    kind,
                    format_args!(
                        "{what}: wrong answer {} (ec {ec_ok} fsc {fsc_ok} il {il} far {far_ok} elr {where_ok} wnr {wnr_ok}, insn at {pc:#x})",
                        Shown(Some(f))
                    ),
                );
            }
        }
    }
}

/// True if the 32-bit register at `off` of a device of kind `dev` never changes (ID and
/// type registers), so a load of any width from it can be checked against a reference.
fn stable(dev: DevKind, off: u64) -> bool {
    match dev {
        DevKind::Pl011 => (0xfe0..0x1000).contains(&off),
        DevKind::Gicd => off == 0x4 || off == 0x8,
        DevKind::Virtio => off < 0x10,
        _ => false,
    }
}

/// A completed load from a device register that never changes must return what a plain
/// 32-bit read of it returns, cut to the access's bytes and zero- or sign-extended as the
/// instruction says (the emulation's lane selection and extension, for each register of a
/// pair). Only the widths the device defines are checked: 32-bit accesses of virtio-mmio
/// and GIC registers, 8/16/32-bit ones of the PL011.
fn check_device_value(t: &Targets, kind: Kind, what: &Desc<'_>, dev: DevKind, regs: [u64; 3]) {
    let Some(r) = t.device_at(what.ipa, what.form.size) else {
        return;
    };
    for (reg, off, size, signed) in what.form.destinations().into_iter().flatten() {
        let start = what.ipa + off;
        // virtio-mmio and GIC ID registers are 32-bit: other widths may read as zero
        let word_only = matches!(dev, DevKind::Virtio | DevKind::Gicd);
        if size > 4 || word_only && (size != 4 || start & 3 != 0) {
            continue;
        }
        let mut value = 0u64;
        for i in (0..size).rev() {
            let a = start + i;
            let word_off = (a - r.base) & !3;
            if !stable(dev, word_off) {
                return;
            }
            let Some(word) = crate::ops::dev_read32(r.base + word_off) else {
                return;
            };
            value = (value << 8) | u64::from((word >> (8 * (a & 3))) as u8);
        }
        let bits = 8 * size;
        let want = if signed && bits < 64 {
            (((value << (64 - bits)) as i64) >> (64 - bits)) as u64
        } else {
            value
        };
        if regs[reg] != want {
            tally::fail(
                kind,
                format_args!(
                    "{what}: x{reg} = {:#x}, the register holds {want:#x}",
                    regs[reg]
                ),
            );
        }
    }
}

/// A load of RAM through a window must read what the identity map reads (for the image's
/// start, which nothing writes).
fn check_ram_value(t: &Targets, kind: Kind, what: &Desc<'_>, x0: u64) {
    let image = crate::image_start();
    if what.ipa < image || what.ipa + 8 > image + 0x4000 || what.ipa < t.ram {
        return;
    }
    // SAFETY: `ipa` is inside the loaded image, identity mapped and never written.
    let direct = unsafe { core::ptr::read_volatile(what.ipa as *const u64) };
    if direct != x0 {
        tally::fail(
            kind,
            format_args!("{what}: read {x0:#x}, the identity map reads {direct:#x}"),
        );
    }
}

/// An access, described for a report.
struct Desc<'a> {
    form: &'a Form,
    ipa: u64,
    va: u64,
    window: Window,
    el0: bool,
    place: Place,
}

impl core::fmt::Display for Desc<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} at IPA {:#x} (VA {:#x}, {:?} window, {}, {:?})",
            self.form.name,
            self.ipa,
            self.va,
            self.window,
            if self.el0 { "EL0" } else { "EL1" },
            self.place
        )
    }
}

/// The closing sweep: one load every 2 MiB of the first 4 GiB of IPA space (where, as
/// physical addresses, the other VMs and the hypervisor live on QEMU `virt`) and one at a
/// random offset of every further GiB up to the IPA size. Outside this VM's RAM and
/// devices each must abort, and none may return the neighbour's pattern.
pub fn sweep(ctx: &mut Ctx) -> u64 {
    let t = ctx.targets;
    let load = FORMS[3]; // LDR x0, [x1]
    let mut ipas = (0..2048u64)
        .map(|i| i << 21)
        .chain((4..(1u64 << t.ipa_bits.min(48)) >> 30).map(|g| g << 30));
    let mut aborted = 0;
    for ipa in &mut ipas {
        let ipa = if ipa >= 4 << 30 {
            ipa + (ctx.rng.below(1 << 30) & !7)
        } else {
            ipa
        };
        if t.touches_ram(ipa, 8) || t.touches_device(ipa, 8) {
            continue;
        }
        let va = paging::map(Window::Device, ipa);
        tally::count(Kind::Sweep);
        vectors::clear();
        let (_, out) = code::run_el1(&[load.insn], [0, va, 0, 0, 0, 0, 0, 0], 0);
        match vectors::take() {
            Some(f) if f.ec() == 0x25 && (f.fsc() == 0x10 || f.fsc() <= 3) => aborted += 1,
            Some(f) => tally::fail(
                Kind::Sweep,
                format_args!("load at IPA {ipa:#x}: {}", Shown(Some(f))),
            ),
            None => {
                if neighbour_tag(out.x[0]) {
                    tally::leak(
                        Kind::Sweep,
                        format_args!("load at IPA {ipa:#x} read {:#x}", out.x[0]),
                    );
                } else {
                    tally::fail(
                        Kind::Sweep,
                        format_args!("load at IPA {ipa:#x} completed: {:#x}", out.x[0]),
                    );
                }
            }
        }
    }
    aborted
}
