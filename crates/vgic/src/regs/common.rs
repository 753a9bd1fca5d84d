//! Per-interrupt register handlers shared by the GICv2 distributor, the GICv3 distributor and
//! the GICv3 redistributor SGI_base frame. Reads are named by the state they show (both
//! `ISENABLER` and `ICENABLER` read the enable bits), writes by the register they emulate.
//! Each is a field accessor (`get_*`/`set_*`, one interrupt) run over the fields of the
//! access by [`read_irqs`]/[`write_irqs`].

use super::table::{read_irqs, write_irqs, Ctx};
use crate::model::irq::Irq;
use crate::model::{Vgic, NR_SGIS, PRIO_MASK};

// GICD_IGROUPR<n>, GICR_IGROUPR0: 1 bit per interrupt, set = group 1.

fn get_group(_: &Vgic, _: &Ctx, _: u32, irq: &Irq) -> u64 {
    u64::from(irq.group1)
}

fn set_group(v: &mut Vgic, c: &Ctx, intid: u32, f: u64) {
    if let Some(irq) = v.irq_mut(c.target, intid) {
        irq.group1 = f != 0;
    }
}

/// `IGROUPR` read.
pub(crate) fn read_igroupr(v: &mut Vgic, c: &Ctx, first: u32, size: u8) -> u64 {
    read_irqs(v, c, first, size, 1, get_group)
}

/// `IGROUPR` write.
pub(crate) fn write_igroupr(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
    write_irqs(v, c, first, size, 1, val, set_group)
}

// GICD_ISENABLER<n>/ICENABLER<n>, GICR_ISENABLER0/ICENABLER0: write 1 to set/clear.

fn get_enabled(_: &Vgic, _: &Ctx, _: u32, irq: &Irq) -> u64 {
    u64::from(irq.enabled)
}

fn set_enabled(v: &mut Vgic, c: &Ctx, intid: u32, f: u64) {
    if f != 0 {
        if let Some(irq) = v.irq_mut(c.target, intid) {
            irq.enabled = true;
        }
    }
}

fn clear_enabled(v: &mut Vgic, c: &Ctx, intid: u32, f: u64) {
    if f != 0 {
        if let Some(irq) = v.irq_mut(c.target, intid) {
            irq.enabled = false;
        }
    }
}

/// `ISENABLER`/`ICENABLER` read: the enable bits.
pub(crate) fn read_enable(v: &mut Vgic, c: &Ctx, first: u32, size: u8) -> u64 {
    read_irqs(v, c, first, size, 1, get_enabled)
}

/// `ISENABLER` write.
pub(crate) fn write_isenabler(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
    write_irqs(v, c, first, size, 1, val, set_enabled)
}

/// `ICENABLER` write.
pub(crate) fn write_icenabler(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
    write_irqs(v, c, first, size, 1, val, clear_enabled)
}

// GICD_ISPENDR<n>/ICPENDR<n>, GICR_ISPENDR0/ICPENDR0.

fn get_pending(_: &Vgic, _: &Ctx, _: u32, irq: &Irq) -> u64 {
    u64::from(irq.pending_visible())
}

fn set_pending(v: &mut Vgic, c: &Ctx, intid: u32, f: u64) {
    // GICv2 SGIs are set pending through GICD_SPENDSGIR only.
    if f != 0 && !v.is_v2_sgi(intid) {
        if let Some(irq) = v.irq_mut(c.target, intid) {
            irq.latch = true;
        }
    }
}

/// Clears the latch (a level interrupt stays pending while its line is high).
fn clear_pending(v: &mut Vgic, c: &Ctx, intid: u32, f: u64) {
    if f != 0 && !v.is_v2_sgi(intid) {
        if let Some(irq) = v.irq_mut(c.target, intid) {
            irq.latch = false;
            if irq.in_lr.is_some() {
                irq.cpend_req = true;
            }
        }
    }
}

/// `ISPENDR`/`ICPENDR` read: the pending state.
pub(crate) fn read_pending(v: &mut Vgic, c: &Ctx, first: u32, size: u8) -> u64 {
    read_irqs(v, c, first, size, 1, get_pending)
}

/// `ISPENDR` write.
pub(crate) fn write_ispendr(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
    write_irqs(v, c, first, size, 1, val, set_pending)
}

/// `ICPENDR` write.
pub(crate) fn write_icpendr(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
    write_irqs(v, c, first, size, 1, val, clear_pending)
}

// GICD_ISACTIVER<n>/ICACTIVER<n>, GICR_ISACTIVER0/ICACTIVER0.

fn get_active(_: &Vgic, _: &Ctx, _: u32, irq: &Irq) -> u64 {
    u64::from(irq.active)
}

fn change_active(v: &mut Vgic, c: &Ctx, intid: u32, active: bool) {
    if let Some(irq) = v.irq_mut(c.target, intid) {
        irq.active = active;
        if active {
            irq.active_src = 0;
        }
        if irq.in_lr.is_some() {
            irq.act_req = Some(active);
        }
    }
}

fn set_active(v: &mut Vgic, c: &Ctx, intid: u32, f: u64) {
    if f != 0 {
        change_active(v, c, intid, true);
    }
}

fn clear_active(v: &mut Vgic, c: &Ctx, intid: u32, f: u64) {
    if f != 0 {
        change_active(v, c, intid, false);
    }
}

/// `ISACTIVER`/`ICACTIVER` read: the active state.
pub(crate) fn read_active(v: &mut Vgic, c: &Ctx, first: u32, size: u8) -> u64 {
    read_irqs(v, c, first, size, 1, get_active)
}

/// `ISACTIVER` write.
pub(crate) fn write_isactiver(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
    write_irqs(v, c, first, size, 1, val, set_active)
}

/// `ICACTIVER` write.
pub(crate) fn write_icactiver(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
    write_irqs(v, c, first, size, 1, val, clear_active)
}

// GICD_IPRIORITYR<n>, GICR_IPRIORITYR<n>: one byte per interrupt, PRIO_MASK bits kept.

fn get_priority(_: &Vgic, _: &Ctx, _: u32, irq: &Irq) -> u64 {
    u64::from(irq.priority)
}

fn set_priority(v: &mut Vgic, c: &Ctx, intid: u32, f: u64) {
    if let Some(irq) = v.irq_mut(c.target, intid) {
        irq.priority = f as u8 & PRIO_MASK;
    }
}

/// `IPRIORITYR` read.
pub(crate) fn read_ipriorityr(v: &mut Vgic, c: &Ctx, first: u32, size: u8) -> u64 {
    read_irqs(v, c, first, size, 8, get_priority)
}

/// `IPRIORITYR` write.
pub(crate) fn write_ipriorityr(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
    write_irqs(v, c, first, size, 8, val, set_priority)
}

// GICD_ICFGR<n>, GICR_ICFGR0/1: two bits per interrupt, bit 1 set = edge-triggered.

fn get_config(_: &Vgic, _: &Ctx, _: u32, irq: &Irq) -> u64 {
    if irq.edge {
        2
    } else {
        0
    }
}

fn set_config(v: &mut Vgic, c: &Ctx, intid: u32, f: u64) {
    // SGIs are always edge-triggered (read-only field).
    if intid >= NR_SGIS {
        if let Some(irq) = v.irq_mut(c.target, intid) {
            irq.edge = f & 2 != 0;
        }
    }
}

/// `ICFGR` read.
pub(crate) fn read_icfgr(v: &mut Vgic, c: &Ctx, first: u32, size: u8) -> u64 {
    read_irqs(v, c, first, size, 2, get_config)
}

/// `ICFGR` write.
pub(crate) fn write_icfgr(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
    write_irqs(v, c, first, size, 2, val, set_config)
}
