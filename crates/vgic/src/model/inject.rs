//! Injection API for emulated devices, timers and forwarded hardware interrupts.

use super::{Vgic, NR_PRIVATE, NR_SGIS};
use crate::VgicError;

impl Vgic {
    fn check_spi(&self, intid: u32) -> Result<(), VgicError> {
        if (NR_PRIVATE..self.nr_irqs()).contains(&intid) {
            Ok(())
        } else {
            Err(VgicError::BadIntid(intid))
        }
    }

    fn check_ppi(&self, vcpu: usize, intid: u32) -> Result<(), VgicError> {
        self.check_vcpu(vcpu)?;
        if (NR_SGIS..NR_PRIVATE).contains(&intid) {
            Ok(())
        } else {
            Err(VgicError::BadIntid(intid))
        }
    }

    /// Drives the input line of an interrupt. A rising edge makes an edge-triggered interrupt
    /// pending; a level-sensitive one is pending while the line is high.
    fn set_line(&mut self, vcpu: usize, intid: u32, level: bool) {
        if let Some(irq) = self.irq_mut(vcpu, intid) {
            if irq.line == level {
                // No edge and no change of the level: nothing to re-evaluate (devices
                // report their line after every access, mostly unchanged).
                return;
            }
            if irq.edge && level {
                irq.latch = true;
            }
            irq.line = level;
            self.update(vcpu, intid);
        }
    }

    fn pulse(&mut self, vcpu: usize, intid: u32) {
        if let Some(irq) = self.irq_mut(vcpu, intid) {
            irq.latch = true;
            self.update(vcpu, intid);
        }
    }

    /// Raises (`true`) or lowers (`false`) the input line of SPI `intid` (32..).
    pub fn set_spi_level(&mut self, intid: u32, level: bool) -> Result<(), VgicError> {
        self.check_spi(intid)?;
        self.set_line(0, intid, level);
        Ok(())
    }

    /// Makes SPI `intid` pending once (an edge). On a level-sensitive SPI the pending state
    /// then behaves like a write to `ISPENDR`: it stays until the guest acknowledges it.
    pub fn pulse_spi(&mut self, intid: u32) -> Result<(), VgicError> {
        self.check_spi(intid)?;
        self.pulse(0, intid);
        Ok(())
    }

    /// Raises or lowers the line of PPI `intid` (16..32) of `vcpu`.
    pub fn set_ppi_level(&mut self, vcpu: usize, intid: u32, level: bool) -> Result<(), VgicError> {
        self.check_ppi(vcpu, intid)?;
        self.set_line(vcpu, intid, level);
        Ok(())
    }

    /// Makes PPI `intid` (16..32) of `vcpu` pending once.
    pub fn pulse_ppi(&mut self, vcpu: usize, intid: u32) -> Result<(), VgicError> {
        self.check_ppi(vcpu, intid)?;
        self.pulse(vcpu, intid);
        Ok(())
    }

    /// Makes SGI `intid` (0..16) pending on `target` as if `sender` had sent it (the
    /// requester is recorded for GICv2).
    pub fn raise_sgi(&mut self, sender: usize, target: usize, intid: u32) -> Result<(), VgicError> {
        self.check_vcpu(sender)?;
        self.check_vcpu(target)?;
        if intid >= NR_SGIS {
            return Err(VgicError::BadIntid(intid));
        }
        self.pend_sgi(sender, target, intid);
        Ok(())
    }

    /// Sets an SGI pending without checks (both indices valid, `intid < 16`).
    pub(crate) fn pend_sgi(&mut self, sender: usize, target: usize, intid: u32) {
        let v2 = self.is_v2_sgi(intid);
        if let Some(irq) = self.irq_mut(target, intid) {
            if v2 {
                irq.sgi_pending |= 1 << (sender & 7);
            } else {
                irq.latch = true;
            }
            self.stats.sgis += 1;
            self.update(target, intid);
        }
    }

    /// Maps virtual interrupt `vintid` to physical interrupt `pintid` (`None` unmaps).
    ///
    /// A hardware-mapped interrupt is loaded into list registers with the HW bit: the guest's
    /// deactivation deactivates the physical interrupt directly, without a trap. The host
    /// leaves the physical interrupt active after taking it and injects the virtual one
    /// (`set_ppi_level(.., true)` / `set_spi_level(.., true)`); once the guest has deactivated
    /// it, the model drops the line level, since the pending state lives in the physical GIC
    /// from then on (a still-asserted source fires on the host again). `vcpu` selects the
    /// banked copy of a PPI and is ignored for SPIs; SGIs cannot be mapped.
    pub fn set_hw_mapping(
        &mut self,
        vcpu: usize,
        vintid: u32,
        pintid: Option<u32>,
    ) -> Result<(), VgicError> {
        self.check_vcpu(vcpu)?;
        if vintid < NR_SGIS || pintid.is_some_and(|p| !(NR_SGIS..1020).contains(&p)) {
            return Err(VgicError::BadIntid(vintid));
        }
        let irq = self
            .irq_mut(vcpu, vintid)
            .ok_or(VgicError::BadIntid(vintid))?;
        irq.hw = pintid;
        Ok(())
    }

    /// Physical INTID `vintid` is mapped to, if any.
    pub fn hw_mapping(&self, vcpu: usize, vintid: u32) -> Option<u32> {
        self.irq(vcpu, vintid)?.hw
    }

    /// Whether interrupt `intid` (banked copy of `vcpu`) is pending as the guest would see it
    /// in `ISPENDR`.
    pub fn is_pending(&self, vcpu: usize, intid: u32) -> bool {
        self.irq(vcpu, intid).is_some_and(|i| i.pending_visible())
    }

    /// Whether interrupt `intid` (banked copy of `vcpu`) is active.
    pub fn is_active(&self, vcpu: usize, intid: u32) -> bool {
        self.irq(vcpu, intid).is_some_and(|i| i.active)
    }
}
