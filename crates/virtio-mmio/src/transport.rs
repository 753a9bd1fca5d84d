//! The virtio-mmio version 2 transport: registers, status state machine, interrupts.

use alloc::vec::Vec;

use crate::device::VirtioDevice;
use crate::error::{QueueError, VirtioError};
use crate::features::{status, TRANSPORT_FEATURES, VIRTIO_F_VERSION_1};
use crate::mem::{GuestMemory, InterruptLine};
use crate::queue::Queue;
use crate::regs::{
    offset as reg, CONFIG_SPACE, DEFAULT_VENDOR_ID, INT_CONFIG_CHANGE, INT_USED_BUFFER,
    MAGIC_VALUE, MMIO_WINDOW_SIZE, VERSION,
};

/// One virtio-mmio device as the guest sees it: the register window at `offset` 0..0x200 of
/// its MMIO region, a device model `D`, the VM's memory `M` and its interrupt line `I`.
///
/// The host forwards trapped guest accesses to [`read`](Self::read) and
/// [`write`](Self::write). Both always complete: on `Err` the access was treated as
/// RAZ/WI (or, for [`VirtioError::NeedsReset`], carried out and the device put into
/// `DEVICE_NEEDS_RESET`), and the error is only for the host's log.
pub struct VirtioMmio<D, M, I> {
    device: D,
    mem: M,
    irq: I,
    vendor_id: u32,
    queues: Vec<Queue>,
    status: u32,
    device_features_sel: u32,
    driver_features_sel: u32,
    driver_features: u64,
    queue_sel: u32,
    interrupt_status: u32,
    irq_level: bool,
    config_generation: u32,
}

impl<D: VirtioDevice, M: GuestMemory, I: InterruptLine> VirtioMmio<D, M, I> {
    /// A device in reset state.
    pub fn new(device: D, mem: M, irq: I) -> Self {
        let queues = (0..device.num_queues())
            .map(|q| Queue::new(device.queue_max_size(q)))
            .collect();
        Self {
            device,
            mem,
            irq,
            vendor_id: DEFAULT_VENDOR_ID,
            queues,
            status: 0,
            device_features_sel: 0,
            driver_features_sel: 0,
            driver_features: 0,
            queue_sel: 0,
            interrupt_status: 0,
            irq_level: false,
            config_generation: 0,
        }
    }

    /// Reports `vendor_id` in `VendorID` instead of [`DEFAULT_VENDOR_ID`].
    pub fn with_vendor_id(mut self, vendor_id: u32) -> Self {
        self.vendor_id = vendor_id;
        self
    }

    /// The device model.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// The device model, e.g. to push console input before [`poll`](Self::poll).
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.device
    }

    /// The guest memory.
    pub fn memory(&self) -> &M {
        &self.mem
    }

    /// The guest memory, mutable.
    pub fn memory_mut(&mut self) -> &mut M {
        &mut self.mem
    }

    /// The interrupt line.
    pub fn interrupt_line(&self) -> &I {
        &self.irq
    }

    /// The `Status` register.
    pub fn status(&self) -> u32 {
        self.status
    }

    /// The `InterruptStatus` register.
    pub fn interrupt_status(&self) -> u32 {
        self.interrupt_status
    }

    /// Whether the interrupt line is asserted.
    pub fn irq_level(&self) -> bool {
        self.irq_level
    }

    /// Features the driver wrote (final once `FEATURES_OK` is set).
    pub fn driver_features(&self) -> u64 {
        self.driver_features
    }

    /// All features offered: the device's plus [`TRANSPORT_FEATURES`].
    pub fn device_features(&self) -> u64 {
        self.device.features() | TRANSPORT_FEATURES
    }

    /// Queue `index`, if the device has it.
    pub fn queue(&self, index: u16) -> Option<&Queue> {
        self.queues.get(usize::from(index))
    }

    /// Size of the MMIO window to map for this device.
    pub fn window_size(&self) -> u64 {
        MMIO_WINDOW_SIZE
    }

    fn live(&self) -> bool {
        self.status & status::DRIVER_OK != 0 && self.status & status::DEVICE_NEEDS_RESET == 0
    }

    /// Host-side work: lets the device move pending input (console bytes, network frames)
    /// into its receive queues and raises the interrupt if the driver wants one.
    pub fn poll(&mut self) -> Result<(), VirtioError> {
        if !self.live() {
            return Ok(());
        }
        let r = self.device.poll(&mut self.queues, &mut self.mem);
        if let Err((queue, error)) = r {
            return Err(self.needs_reset(queue, error));
        }
        self.signal_used()
    }

    /// The device's configuration changed: bumps `ConfigGeneration` and raises a
    /// configuration-change interrupt once the driver is running.
    pub fn config_changed(&mut self) {
        self.config_generation = self.config_generation.wrapping_add(1);
        if self.status & status::DRIVER_OK != 0 {
            self.raise(INT_CONFIG_CHANGE);
        }
    }

    /// A trapped guest read of `size_bytes` at `offset` in the window. On `Err` the access
    /// reads as zero.
    pub fn read(&mut self, offset: u64, size_bytes: u8) -> Result<u64, VirtioError> {
        if offset >= CONFIG_SPACE {
            check_config_access(offset, size_bytes)?;
            let mut buf = [0u8; 8];
            let n = usize::from(size_bytes);
            self.device
                .read_config(offset - CONFIG_SPACE, &mut buf[..n]);
            return Ok(u64::from_le_bytes(buf));
        }
        check_register_access(offset, size_bytes)?;
        let v: u32 = match offset {
            reg::MAGIC_VALUE => MAGIC_VALUE,
            reg::VERSION => VERSION,
            reg::DEVICE_ID => self.device.device_id(),
            reg::VENDOR_ID => self.vendor_id,
            reg::DEVICE_FEATURES => match self.device_features_sel {
                0 => self.device_features() as u32,
                1 => (self.device_features() >> 32) as u32,
                _ => 0,
            },
            reg::QUEUE_NUM_MAX => self.selected().map_or(0, |q| u32::from(q.max_size())),
            reg::QUEUE_READY => self.selected().map_or(0, |q| u32::from(q.is_ready())),
            reg::INTERRUPT_STATUS => self.interrupt_status,
            reg::STATUS => self.status,
            // No shared-memory regions: their length and base read as all ones (§4.2.2).
            reg::SHM_LEN_LOW | reg::SHM_LEN_HIGH | reg::SHM_BASE_LOW | reg::SHM_BASE_HIGH => {
                u32::MAX
            }
            reg::QUEUE_RESET => 0,
            reg::CONFIG_GENERATION => self.config_generation,
            reg::DEVICE_FEATURES_SEL
            | reg::DRIVER_FEATURES
            | reg::DRIVER_FEATURES_SEL
            | reg::QUEUE_SEL
            | reg::QUEUE_NUM
            | reg::QUEUE_NOTIFY
            | reg::INTERRUPT_ACK
            | reg::QUEUE_DESC_LOW
            | reg::QUEUE_DESC_HIGH
            | reg::QUEUE_DRIVER_LOW
            | reg::QUEUE_DRIVER_HIGH
            | reg::QUEUE_DEVICE_LOW
            | reg::QUEUE_DEVICE_HIGH
            | reg::SHM_SEL => return Err(VirtioError::WriteOnly(offset)),
            _ => return Err(VirtioError::NoRegister(offset)),
        };
        Ok(u64::from(v))
    }

    /// A trapped guest write of `size_bytes` at `offset` in the window. On `Err` the write
    /// was ignored, except [`VirtioError::NeedsReset`] (the notify was taken, the device
    /// found a malformed chain and now needs a reset).
    pub fn write(&mut self, offset: u64, size_bytes: u8, value: u64) -> Result<(), VirtioError> {
        if offset >= CONFIG_SPACE {
            check_config_access(offset, size_bytes)?;
            let bytes = value.to_le_bytes();
            self.device
                .write_config(offset - CONFIG_SPACE, &bytes[..usize::from(size_bytes)]);
            return Ok(());
        }
        check_register_access(offset, size_bytes)?;
        let v = value as u32;
        match offset {
            reg::DEVICE_FEATURES_SEL => self.device_features_sel = v,
            reg::DRIVER_FEATURES_SEL => self.driver_features_sel = v,
            reg::DRIVER_FEATURES => self.write_driver_features(v)?,
            reg::QUEUE_SEL => self.queue_sel = v,
            reg::QUEUE_NUM => {
                let size = u16::try_from(v).unwrap_or(0);
                self.selected_for_setup(offset)?.set_size(size);
            }
            reg::QUEUE_DESC_LOW | reg::QUEUE_DESC_HIGH => {
                let q = self.selected_for_setup(offset)?;
                q.set_desc_table(set_half(q.desc_table(), offset == reg::QUEUE_DESC_HIGH, v));
            }
            reg::QUEUE_DRIVER_LOW | reg::QUEUE_DRIVER_HIGH => {
                let q = self.selected_for_setup(offset)?;
                q.set_driver_area(set_half(
                    q.driver_area(),
                    offset == reg::QUEUE_DRIVER_HIGH,
                    v,
                ));
            }
            reg::QUEUE_DEVICE_LOW | reg::QUEUE_DEVICE_HIGH => {
                let q = self.selected_for_setup(offset)?;
                q.set_device_area(set_half(
                    q.device_area(),
                    offset == reg::QUEUE_DEVICE_HIGH,
                    v,
                ));
            }
            reg::QUEUE_READY => self.write_queue_ready(v)?,
            reg::QUEUE_NOTIFY => self.notify(v)?,
            reg::INTERRUPT_ACK => {
                self.interrupt_status &= !v;
                self.update_line();
            }
            reg::STATUS => self.write_status(v)?,
            reg::SHM_SEL => {}
            reg::QUEUE_RESET => {
                return Err(VirtioError::NotNow {
                    offset,
                    why: "VIRTIO_F_RING_RESET not offered",
                })
            }
            reg::MAGIC_VALUE
            | reg::VERSION
            | reg::DEVICE_ID
            | reg::VENDOR_ID
            | reg::DEVICE_FEATURES
            | reg::QUEUE_NUM_MAX
            | reg::INTERRUPT_STATUS
            | reg::SHM_LEN_LOW
            | reg::SHM_LEN_HIGH
            | reg::SHM_BASE_LOW
            | reg::SHM_BASE_HIGH
            | reg::CONFIG_GENERATION => return Err(VirtioError::ReadOnly(offset)),
            _ => return Err(VirtioError::NoRegister(offset)),
        }
        Ok(())
    }

    fn selected(&self) -> Option<&Queue> {
        self.queues.get(self.queue_sel as usize)
    }

    fn selected_for_setup(&mut self, offset: u64) -> Result<&mut Queue, VirtioError> {
        match self.queues.get_mut(self.queue_sel as usize) {
            None => Err(VirtioError::NotNow {
                offset,
                why: "QueueSel names no queue",
            }),
            Some(q) if q.is_ready() => Err(VirtioError::NotNow {
                offset,
                why: "queue is ready",
            }),
            Some(q) => Ok(q),
        }
    }

    fn write_driver_features(&mut self, v: u32) -> Result<(), VirtioError> {
        if self.status & status::DRIVER == 0 || self.status & status::FEATURES_OK != 0 {
            return Err(VirtioError::NotNow {
                offset: reg::DRIVER_FEATURES,
                why: "features are written between DRIVER and FEATURES_OK",
            });
        }
        let v = u64::from(v);
        match self.driver_features_sel {
            0 => self.driver_features = (self.driver_features & !0xffff_ffff) | v,
            1 => self.driver_features = (self.driver_features & 0xffff_ffff) | (v << 32),
            _ if v == 0 => {}
            _ => {
                return Err(VirtioError::NotNow {
                    offset: reg::DRIVER_FEATURES,
                    why: "no feature bits above 63",
                })
            }
        }
        Ok(())
    }

    fn write_queue_ready(&mut self, v: u32) -> Result<(), VirtioError> {
        let queue = self.queue_sel as u16;
        if self.status & status::FEATURES_OK == 0 {
            return Err(VirtioError::NotNow {
                offset: reg::QUEUE_READY,
                why: "queues are set up after FEATURES_OK",
            });
        }
        let features = self.driver_features;
        let Some(q) = self.queues.get_mut(self.queue_sel as usize) else {
            return Err(VirtioError::NotNow {
                offset: reg::QUEUE_READY,
                why: "QueueSel names no queue",
            });
        };
        match v {
            0 => q.disable(),
            1 if q.is_ready() => {}
            1 => q
                .enable(&self.mem, features)
                .map_err(|why| VirtioError::BadQueueConfig { queue, why })?,
            _ => {
                return Err(VirtioError::NotNow {
                    offset: reg::QUEUE_READY,
                    why: "QueueReady takes 0 or 1",
                })
            }
        }
        Ok(())
    }

    fn write_status(&mut self, v: u32) -> Result<(), VirtioError> {
        if v == 0 {
            self.reset();
            return Ok(());
        }
        let refuse = |why| {
            Err(VirtioError::NotNow {
                offset: reg::STATUS,
                why,
            })
        };
        let old = self.status;
        if old & !v & !status::DEVICE_NEEDS_RESET != 0 {
            return refuse("status bits are only cleared by writing 0");
        }
        if v & !0xff != 0 {
            return refuse("unknown status bits");
        }
        let new = v & !old & !status::DEVICE_NEEDS_RESET;
        if new & status::FAILED != 0 {
            self.status |= status::FAILED;
        }
        if new & status::ACKNOWLEDGE != 0 {
            self.status |= status::ACKNOWLEDGE;
        }
        if new & status::DRIVER != 0 {
            if self.status & status::ACKNOWLEDGE == 0 {
                return refuse("DRIVER before ACKNOWLEDGE");
            }
            self.status |= status::DRIVER;
        }
        if new & status::FEATURES_OK != 0 {
            if self.status & status::DRIVER == 0 {
                return refuse("FEATURES_OK before DRIVER");
            }
            if self.driver_features & VIRTIO_F_VERSION_1 == 0 {
                return refuse("driver did not accept VIRTIO_F_VERSION_1");
            }
            if self.driver_features & !self.device_features() != 0 {
                return refuse("driver accepted features that were not offered");
            }
            self.status |= status::FEATURES_OK;
        }
        if new & status::DRIVER_OK != 0 {
            if self.status & status::FEATURES_OK == 0 {
                return refuse("DRIVER_OK before FEATURES_OK");
            }
            self.status |= status::DRIVER_OK;
            self.device.activate(self.driver_features);
            // Anything that arrived before the driver was ready can go now.
            return self.poll();
        }
        Ok(())
    }

    /// Device reset: back to the state after power-on, except `ConfigGeneration`.
    fn reset(&mut self) {
        self.device.reset();
        for q in &mut self.queues {
            q.reset();
        }
        self.status = 0;
        self.device_features_sel = 0;
        self.driver_features_sel = 0;
        self.driver_features = 0;
        self.queue_sel = 0;
        self.interrupt_status = 0;
        self.update_line();
    }

    fn notify(&mut self, v: u32) -> Result<(), VirtioError> {
        // Without VIRTIO_F_NOTIFICATION_DATA the value is the queue index.
        let queue = (v & 0xffff) as u16;
        if !self.live() {
            return Ok(());
        }
        let Some(q) = self.queues.get_mut(usize::from(queue)) else {
            return Err(VirtioError::NotNow {
                offset: reg::QUEUE_NOTIFY,
                why: "notify of a queue the device does not have",
            });
        };
        if !q.is_ready() {
            return Ok(());
        }
        if let Err(e) = self.device.process_queue(queue, q, &mut self.mem) {
            return Err(self.needs_reset(queue, e));
        }
        if let Err((queue, e)) = self.device.poll(&mut self.queues, &mut self.mem) {
            return Err(self.needs_reset(queue, e));
        }
        self.signal_used()
    }

    fn signal_used(&mut self) -> Result<(), VirtioError> {
        let mut fire = false;
        for (i, q) in self.queues.iter_mut().enumerate() {
            match q.should_notify(&self.mem) {
                Ok(n) => fire |= n,
                Err(e) => return Err(self.needs_reset(i as u16, e)),
            }
        }
        if fire {
            self.raise(INT_USED_BUFFER);
        }
        Ok(())
    }

    /// A malformed queue: `DEVICE_NEEDS_RESET` plus a configuration-change interrupt
    /// (VIRTIO 1.1 §2.1.2), and the error for the host's log.
    fn needs_reset(&mut self, queue: u16, error: QueueError) -> VirtioError {
        self.status |= status::DEVICE_NEEDS_RESET;
        if self.status & status::DRIVER_OK != 0 {
            self.raise(INT_CONFIG_CHANGE);
        }
        VirtioError::NeedsReset { queue, error }
    }

    fn raise(&mut self, bits: u32) {
        self.interrupt_status |= bits;
        self.update_line();
    }

    fn update_line(&mut self) {
        let level = self.interrupt_status != 0;
        if level != self.irq_level {
            self.irq_level = level;
            self.irq.set_level(level);
        }
    }
}

fn set_half(old: u64, high: bool, v: u32) -> u64 {
    if high {
        (old & 0xffff_ffff) | (u64::from(v) << 32)
    } else {
        (old & !0xffff_ffff) | u64::from(v)
    }
}

fn check_register_access(offset: u64, size: u8) -> Result<(), VirtioError> {
    if size != 4 {
        return Err(VirtioError::BadWidth { offset, size });
    }
    if !offset.is_multiple_of(4) {
        return Err(VirtioError::Unaligned { offset, size });
    }
    Ok(())
}

fn check_config_access(offset: u64, size: u8) -> Result<(), VirtioError> {
    if !matches!(size, 1 | 2 | 4 | 8) {
        return Err(VirtioError::BadWidth { offset, size });
    }
    if !offset.is_multiple_of(u64::from(size)) {
        return Err(VirtioError::Unaligned { offset, size });
    }
    if offset + u64::from(size) > MMIO_WINDOW_SIZE {
        return Err(VirtioError::NoRegister(offset));
    }
    Ok(())
}
