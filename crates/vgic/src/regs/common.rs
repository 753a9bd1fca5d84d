//! Per-interrupt register handlers shared by the GICv2 distributor, the GICv3 distributor and
//! the GICv3 redistributor SGI_base frame.

use super::table::{read_irqs, write_irqs, Ctx};
use crate::model::{Vgic, NR_SGIS, PRIO_MASK};

macro_rules! per_irq_rw {
    ($read:ident, $write:ident, $bpi:expr, $get:expr, $set:expr) => {
        pub(crate) fn $read(v: &mut Vgic, c: &Ctx, first: u32, size: u8) -> u64 {
            read_irqs(v, c, first, size, $bpi, $get)
        }
        pub(crate) fn $write(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
            write_irqs(v, c, first, size, $bpi, val, $set)
        }
    };
}

per_irq_rw!(
    read_group,
    write_group,
    1,
    |_, _, _, irq| u64::from(irq.group1),
    |v, c, intid, f| {
        if let Some(irq) = v.irq_mut(c.target, intid) {
            irq.group1 = f != 0;
        }
    }
);

per_irq_rw!(
    read_enable,
    write_senable,
    1,
    |_, _, _, irq| u64::from(irq.enabled),
    |v, c, intid, f| {
        if f != 0 {
            if let Some(irq) = v.irq_mut(c.target, intid) {
                irq.enabled = true;
            }
        }
    }
);

/// `ICENABLER` write.
pub(crate) fn write_cenable(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
    write_irqs(v, c, first, size, 1, val, |v, c, intid, f| {
        if f != 0 {
            if let Some(irq) = v.irq_mut(c.target, intid) {
                irq.enabled = false;
            }
        }
    })
}

per_irq_rw!(
    read_pending,
    write_spending,
    1,
    |_, _, _, irq| u64::from(irq.pending_visible()),
    |v, c, intid, f| {
        // GICv2 SGIs are set pending through GICD_SPENDSGIR only.
        if f != 0 && !v.is_v2_sgi(intid) {
            if let Some(irq) = v.irq_mut(c.target, intid) {
                irq.latch = true;
            }
        }
    }
);

/// `ICPENDR` write: clears the latch (a level interrupt stays pending while its line is high).
pub(crate) fn write_cpending(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
    write_irqs(v, c, first, size, 1, val, |v, c, intid, f| {
        if f != 0 && !v.is_v2_sgi(intid) {
            if let Some(irq) = v.irq_mut(c.target, intid) {
                irq.latch = false;
                if irq.in_lr.is_some() {
                    irq.cpend_req = true;
                }
            }
        }
    })
}

fn set_active(v: &mut Vgic, c: &Ctx, intid: u32, active: bool) {
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

per_irq_rw!(
    read_active,
    write_sactive,
    1,
    |_, _, _, irq| u64::from(irq.active),
    |v, c, intid, f| {
        if f != 0 {
            set_active(v, c, intid, true);
        }
    }
);

/// `ICACTIVER` write.
pub(crate) fn write_cactive(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
    write_irqs(v, c, first, size, 1, val, |v, c, intid, f| {
        if f != 0 {
            set_active(v, c, intid, false);
        }
    })
}

per_irq_rw!(
    read_priority,
    write_priority,
    8,
    |_, _, _, irq| u64::from(irq.priority),
    |v, c, intid, f| {
        if let Some(irq) = v.irq_mut(c.target, intid) {
            irq.priority = f as u8 & PRIO_MASK;
        }
    }
);

per_irq_rw!(
    read_config,
    write_config,
    2,
    |_, _, _, irq| if irq.edge { 2 } else { 0 },
    |v, c, intid, f| {
        // SGIs are always edge-triggered (read-only field).
        if intid >= NR_SGIS {
            if let Some(irq) = v.irq_mut(c.target, intid) {
                irq.edge = f & 2 != 0;
            }
        }
    }
);
