//! List-register scheduling: `flush` before entering the guest, `sync` after the exit, and
//! per-vCPU load/put of the virtual CPU interface.

use core::mem::MaybeUninit;

use super::{LrBook, Vgic, NR_PRIVATE};
use crate::lr::{ListRegisters, LrEntry, LrState, MAX_LRS};
use crate::VgicError;

/// One interrupt instance that wants a list register.
#[derive(Debug, Clone, Copy, Default)]
struct Cand {
    /// Sort key, smaller first: active before pending, then priority, INTID, source.
    key: u64,
    intid: u32,
    src: u8,
    pend: bool,
    act: bool,
}

/// The best `cap` candidates, kept sorted, plus the total count. No allocation; the
/// candidate array is not initialised (building a zeroed one and moving it into place cost a
/// store loop and a 256-byte `memcpy` on every flush): `items[..len]` are the candidates.
struct TopK {
    items: [MaybeUninit<Cand>; MAX_LRS],
    len: usize,
    cap: usize,
    total: usize,
}

impl TopK {
    #[inline(always)]
    fn new(cap: usize) -> Self {
        Self {
            items: [const { MaybeUninit::uninit() }; MAX_LRS],
            len: 0,
            cap: cap.min(MAX_LRS),
            total: 0,
        }
    }

    /// Candidate `i` (< `len`).
    fn get(&self, i: usize) -> Cand {
        debug_assert!(i < self.len);
        // SAFETY: `push` keeps `items[..len]` initialised (it writes every slot it shifts
        // into and the one it inserts); callers only ask for `i < len`.
        unsafe { self.items[i.min(self.len.saturating_sub(1))].assume_init() }
    }

    fn push(&mut self, intid: u32, src: u8, pend: bool, act: bool, prio: u8) {
        self.total += 1;
        let key = (u64::from(!act) << 48)
            | (u64::from(prio) << 40)
            | (u64::from(intid) << 8)
            | u64::from(src);
        let c = Cand {
            key,
            intid,
            src,
            pend,
            act,
        };
        let mut pos = 0;
        while pos < self.len && self.get(pos).key < key {
            pos += 1;
        }
        if pos >= self.cap {
            return;
        }
        let end = if self.len < self.cap {
            self.len
        } else {
            self.cap - 1
        };
        // Shift items[pos..end] up by one (a handful at most; no `memmove` call).
        let mut i = end;
        while i > pos {
            self.items[i] = self.items[i - 1];
            i -= 1;
        }
        self.items[pos] = MaybeUninit::new(c);
        if self.len < self.cap {
            self.len += 1;
        }
    }
}

fn clean(e: &LrEntry) -> bool {
    e.state == LrState::Invalid && !e.eoi_maint
}

impl Vgic {
    fn collect(&self, vcpu: usize, top: &mut TopK) {
        let vd = &self.vcpus[vcpu];
        let mut live = vd.live;
        while live != 0 {
            let intid = live.trailing_zeros();
            live &= live - 1;
            let irq = &vd.private[intid as usize];
            let gate = irq.enabled && self.group_enabled(irq.group1);
            if self.is_v2_sgi(intid) {
                // One instance per requesting CPU that is pending or active, lowest first.
                let pending = if gate { irq.sgi_pending } else { 0 };
                let active = if irq.active {
                    1u8 << (irq.active_src & 7)
                } else {
                    0
                };
                let mut srcs = pending | active;
                while srcs != 0 {
                    let src = srcs.trailing_zeros() as u8;
                    srcs &= srcs - 1;
                    let pend = pending & (1 << src) != 0;
                    let act = active & (1 << src) != 0;
                    top.push(intid, src, pend, act, irq.priority);
                }
            } else {
                let pend = gate && irq.pending();
                if pend || irq.active {
                    top.push(intid, 0, pend, irq.active, irq.priority);
                }
            }
        }
        for (w, word) in self.spi_live.iter().enumerate() {
            let mut bits = *word;
            while bits != 0 {
                let n = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let Some(irq) = self.spis.get(n) else {
                    break;
                };
                if self.spi_target(irq) != Some(vcpu) {
                    continue;
                }
                let pend = self.deliverable(irq);
                if pend || irq.active {
                    top.push(NR_PRIVATE + n as u32, 0, pend, irq.active, irq.priority);
                }
            }
        }
    }

    /// Builds the list-register entry for a candidate and hands the pending state to it.
    fn load(&mut self, vcpu: usize, c: &Cand) -> LrEntry {
        let v2sgi = self.is_v2_sgi(c.intid);
        let Some(irq) = self.irq_mut(vcpu, c.intid) else {
            return LrEntry::EMPTY;
        };
        let hw = if v2sgi { None } else { irq.hw };
        // The pending state of a HW interrupt lives in the physical GIC while it is active.
        let pend = c.pend && !(hw.is_some() && c.act);
        irq.in_lr = Some(vcpu as u16);
        if pend {
            if v2sgi {
                irq.sgi_pending &= !(1 << c.src);
                irq.lr_sgi_pending |= 1 << c.src;
            } else {
                if irq.edge {
                    irq.latch = false;
                }
                irq.lr_pending = true;
            }
        }
        LrEntry {
            vintid: c.intid,
            pintid: hw,
            priority: irq.priority,
            group1: irq.group1,
            state: LrState::from_bits(pend, c.act),
            source_cpu: if v2sgi { c.src } else { 0 },
            eoi_maint: hw.is_none() && !irq.edge,
        }
    }

    /// Loads the highest-priority interrupts of `vcpu` into the list registers before entering
    /// the guest: active ones first, then pending ones by priority. When more are waiting
    /// than there are list registers, arms the underflow maintenance interrupt so the guest
    /// exits to be refilled. Writes only list registers whose content changes; touches no
    /// register at all when nothing is pending, active or loaded.
    pub fn flush(&mut self, vcpu: usize, lrs: &mut dyn ListRegisters) -> Result<(), VgicError> {
        self.check_vcpu(vcpu)?;
        self.stats.flushes += 1;
        // Fastest path, the common exit: no interrupt of this VM has any state and no list
        // register is in use, so there is nothing to load or clean.
        let v = &self.vcpus[vcpu];
        if v.live == 0
            && !v.lr.loaded
            && v.lr.used == 0
            && !v.lr.uie
            && self.spi_live.iter().all(|w| *w == 0)
        {
            self.stats.flush_fast += 1;
            return Ok(());
        }
        if self.vcpus[vcpu].lr.loaded {
            self.sync(vcpu, lrs)?;
        }
        let mut top = TopK::new(lrs.num_lrs());
        self.collect(vcpu, &mut top);
        let (used, uie) = {
            let b = &self.vcpus[vcpu].lr;
            (b.used, b.uie)
        };
        if top.total == 0 && used == 0 && !uie {
            self.stats.flush_fast += 1;
            return Ok(());
        }
        let k = top.len;
        for i in 0..k {
            let c = top.get(i);
            let e = self.load(vcpu, &c);
            let b = &mut self.vcpus[vcpu].lr;
            if b.shadow[i] != e {
                lrs.write_lr(i, e);
                b.shadow[i] = e;
                self.stats.lr_writes += 1;
            }
            b.map[i] = Some((c.intid, c.src));
        }
        let b = &mut self.vcpus[vcpu].lr;
        for i in k..used.min(MAX_LRS) {
            if !clean(&b.shadow[i]) {
                lrs.write_lr(i, LrEntry::EMPTY);
                b.shadow[i] = LrEntry::EMPTY;
                self.stats.lr_writes += 1;
            }
            b.map[i] = None;
        }
        b.used = k;
        b.loaded = k > 0;
        let want = top.total > k;
        if want != b.uie {
            lrs.set_maintenance(want, false);
            b.uie = want;
            if want {
                self.stats.underflows += 1;
            }
        }
        Ok(())
    }

    /// Reads back the list registers of `vcpu` after an exit and folds the guest's progress
    /// (acknowledge, EOI/deactivation) into the model. Uses `ELRSR` to skip reading empty
    /// list registers; touches nothing when no list register is in use.
    pub fn sync(&mut self, vcpu: usize, lrs: &mut dyn ListRegisters) -> Result<(), VgicError> {
        self.check_vcpu(vcpu)?;
        self.stats.syncs += 1;
        let used = self.vcpus[vcpu].lr.used.min(MAX_LRS);
        if used == 0 {
            self.vcpus[vcpu].lr.loaded = false;
            self.stats.sync_fast += 1;
            return Ok(());
        }
        let empty = lrs.empty_mask();
        // LRs whose interrupt was folded (their `map` entry is taken in the second pass):
        // a bit mask, not an array of INTIDs to build and zero on every exit.
        let mut folded = 0u32;
        let mut new_used = 0;
        for i in 0..used {
            let b = &mut self.vcpus[vcpu].lr;
            if let Some((intid, src)) = b.map[i] {
                let state = if empty & (1 << i) != 0 {
                    // Empty in hardware: the guest is done with it. Updated in place (a
                    // struct update of the 20-byte entry became a `memcpy` call).
                    let e = &mut b.shadow[i];
                    e.state = LrState::Invalid;
                    e.eoi_maint = false;
                    LrState::Invalid
                } else {
                    self.stats.lr_reads += 1;
                    let e = lrs.read_lr(i);
                    self.vcpus[vcpu].lr.shadow[i] = e;
                    e.state
                };
                folded |= 1 << i;
                self.fold(vcpu, intid, src, state);
            }
            if !clean(&self.vcpus[vcpu].lr.shadow[i]) {
                new_used = i + 1;
            }
        }
        let b = &mut self.vcpus[vcpu].lr;
        b.used = new_used;
        b.loaded = false;
        while folded != 0 {
            let i = folded.trailing_zeros() as usize;
            folded &= folded - 1;
            let Some((intid, _)) = self.vcpus[vcpu].lr.map[i].take() else {
                continue;
            };
            if let Some(irq) = self.irq_mut(vcpu, intid) {
                irq.cpend_req = false;
                irq.cpend_src = 0;
                irq.act_req = None;
                irq.owner = if irq.active && intid >= NR_PRIVATE {
                    Some(vcpu as u16)
                } else {
                    None
                };
            }
            self.update(vcpu, intid);
        }
        self.kicks.remove(vcpu);
        Ok(())
    }

    /// Folds one list register's state back into the model.
    fn fold(&mut self, vcpu: usize, intid: u32, src: u8, state: LrState) {
        let v2sgi = self.is_v2_sgi(intid);
        let Some(irq) = self.irq_mut(vcpu, intid) else {
            return;
        };
        irq.in_lr = None;
        let (p, a) = (state.is_pending(), state.is_active());
        if v2sgi {
            let bit = 1u8 << (src & 7);
            irq.lr_sgi_pending &= !bit;
            if p && irq.cpend_src & bit == 0 {
                irq.sgi_pending |= bit;
            }
            match irq.act_req {
                Some(x) => irq.active = x,
                None if a => {
                    irq.active = true;
                    irq.active_src = src;
                }
                None if irq.active_src == src => irq.active = false,
                None => {}
            }
            return;
        }
        irq.lr_pending = false;
        if irq.edge {
            if p && !irq.cpend_req {
                irq.latch = true;
            }
        } else if !p || irq.cpend_req {
            irq.latch = false;
        }
        if irq.hw.is_some() && !p {
            irq.line = false;
        }
        irq.active = irq.act_req.unwrap_or(a);
    }

    /// Restores the virtual CPU interface of `vcpu` on the current physical CPU (before its
    /// first `flush` there) and enables it. The list registers must be empty: either freshly
    /// reset or left so by the previous [`Vgic::vcpu_put`].
    pub fn vcpu_load(&mut self, vcpu: usize, lrs: &mut dyn ListRegisters) -> Result<(), VgicError> {
        self.check_vcpu(vcpu)?;
        let vd = &mut self.vcpus[vcpu];
        lrs.restore(&vd.iface);
        lrs.set_enabled(true);
        vd.lr = LrBook::default();
        Ok(())
    }

    /// Saves the virtual CPU interface of `vcpu` (`VMCR`, active priorities) and empties the
    /// list registers it used, so another vCPU can be loaded on this physical CPU. Call after
    /// `sync` (it syncs itself if needed).
    pub fn vcpu_put(&mut self, vcpu: usize, lrs: &mut dyn ListRegisters) -> Result<(), VgicError> {
        self.check_vcpu(vcpu)?;
        if self.vcpus[vcpu].lr.loaded {
            self.sync(vcpu, lrs)?;
        }
        let vd = &mut self.vcpus[vcpu];
        for i in 0..vd.lr.used.min(MAX_LRS) {
            if !clean(&vd.lr.shadow[i]) {
                lrs.write_lr(i, LrEntry::EMPTY);
                self.stats.lr_writes += 1;
            }
        }
        if vd.lr.uie {
            lrs.set_maintenance(false, false);
        }
        vd.lr = LrBook::default();
        vd.iface.used_lrs = 0;
        lrs.save(&mut vd.iface);
        lrs.set_enabled(false);
        Ok(())
    }

    /// Reads only `VMCR` into the saved state of `vcpu` (e.g. before deciding whether a WFI
    /// must block with [`Vgic::vcpu_has_pending`], without a full `vcpu_put`).
    pub fn save_vmcr(&mut self, vcpu: usize, lrs: &dyn ListRegisters) -> Result<(), VgicError> {
        self.check_vcpu(vcpu)?;
        self.vcpus[vcpu].iface.vmcr = lrs.read_vmcr();
        Ok(())
    }

    /// Number of list registers `vcpu` currently occupies in hardware (0 = fast path).
    pub fn used_lrs(&self, vcpu: usize) -> usize {
        self.vcpus.get(vcpu).map_or(0, |v| v.lr.used)
    }
}
