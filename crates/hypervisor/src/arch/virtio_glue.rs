//! Wiring the `virtio-mmio` device models into VMs: guest RAM as `GuestMemory`, interrupt
//! latches reported to the vGIC through the bus's `MmioEvents` when they change, the
//! MMIO-bus adapter, and the device set each VM gets (console, block, network on the VMs'
//! virtual switch, entropy).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use el2_core::mmio::{AccessSize, MmioCaller, MmioEvents, MmioResult, SharedMmioDevice};
use spin::{Mutex, Once};
use virtio_mmio::devices::block::{BlockBackend, BlockDevice, RamDisk};
use virtio_mmio::devices::console::{ConsoleDevice, ConsoleOutput};
use virtio_mmio::devices::net::NetDevice;
use virtio_mmio::devices::rng::{EntropySource, RngDevice};
use virtio_mmio::switch::{SwitchPort, VirtualSwitch};
use virtio_mmio::{GuestMemory, InterruptLine, MemError, VirtioDevice, VirtioError, VirtioMmio};

use crate::devices::pl011::UartOutput;
use crate::layout;

/// A VM's RAM as the virtio queues see it: guest physical `[ipa, ipa + size)` backed by the
/// identity-mapped host range at `pa`. Every access is bounds-checked.
#[derive(Debug, Clone, Copy)]
pub struct GuestRam {
    /// Guest physical base.
    pub ipa: u64,
    /// Host physical base.
    pub pa: u64,
    /// Size in bytes.
    pub size: u64,
}

impl GuestRam {
    fn host_addr(&self, gpa: u64, len: u64) -> Result<u64, MemError> {
        let err = MemError { gpa, len };
        let off = gpa.checked_sub(self.ipa).ok_or(err)?;
        let end = off.checked_add(len).ok_or(err)?;
        if end > self.size {
            return Err(err);
        }
        Ok(self.pa + off)
    }
}

impl GuestMemory for GuestRam {
    fn read(&self, gpa: u64, buf: &mut [u8]) -> Result<(), MemError> {
        let src = self.host_addr(gpa, buf.len() as u64)?;
        // SAFETY: `src..src+len` lies inside this VM's RAM (checked above), which stays
        // allocated and identity-mapped while the VM exists; the guest may change it
        // concurrently, which is why it is copied, never referenced.
        unsafe { core::ptr::copy_nonoverlapping(src as *const u8, buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }

    fn write(&mut self, gpa: u64, buf: &[u8]) -> Result<(), MemError> {
        let dst = self.host_addr(gpa, buf.len() as u64)?;
        // SAFETY: as in `read`; the destination is guest RAM, not hypervisor memory.
        unsafe { core::ptr::copy_nonoverlapping(buf.as_ptr(), dst as *mut u8, buf.len()) };
        Ok(())
    }

    fn check_range(&self, gpa: u64, len: u64) -> Result<(), MemError> {
        self.host_addr(gpa, len).map(|_| ())
    }
}

/// The interrupt output of a virtio transport, and the level last reported to the vGIC.
/// Both change only while the transport's lock is held (the transport sets the level
/// inside its register accesses and polls; [`IrqLatch::report`] runs right after them), so
/// every change is reported exactly once, in order.
#[derive(Clone, Default)]
pub struct IrqLatch(Arc<LatchState>);

#[derive(Default)]
struct LatchState {
    level: AtomicBool,
    reported: AtomicBool,
}

impl InterruptLine for IrqLatch {
    fn set_level(&mut self, level: bool) {
        self.0.level.store(level, Ordering::Release);
    }
}

impl IrqLatch {
    /// Reports the level as INTID `intid` to `events` if it changed since the last report.
    /// Call with the transport's lock held.
    fn report(&self, intid: u32, events: &mut dyn MmioEvents) {
        let level = self.0.level.load(Ordering::Acquire);
        if self.0.reported.swap(level, Ordering::AcqRel) != level {
            events.set_irq_level(intid, level);
        }
    }
}

/// A virtio transport with its device, behind one object-safe interface.
pub trait VirtioHandle: Send {
    /// A register read.
    fn read(&mut self, offset: u64, size: u8) -> Result<u64, VirtioError>;
    /// A register write.
    fn write(&mut self, offset: u64, size: u8, value: u64) -> Result<(), VirtioError>;
    /// Host-side work (console input, frames waiting on the switch).
    fn poll(&mut self) -> Result<(), VirtioError>;
    /// Queues console input and moves it into the receive queue (console devices only;
    /// others ignore it). An error is the poll's, for [`VirtioSlot::push_input`] to log.
    fn push_input(&mut self, _bytes: &[u8]) -> Result<(), VirtioError> {
        Ok(())
    }
}

impl<D: VirtioDevice + Send> VirtioHandle for VirtioMmio<D, GuestRam, IrqLatch> {
    fn read(&mut self, offset: u64, size: u8) -> Result<u64, VirtioError> {
        VirtioMmio::read(self, offset, size)
    }
    fn write(&mut self, offset: u64, size: u8, value: u64) -> Result<(), VirtioError> {
        VirtioMmio::write(self, offset, size, value)
    }
    fn poll(&mut self) -> Result<(), VirtioError> {
        VirtioMmio::poll(self)
    }
}

/// The console transport also takes host input.
struct ConsoleHandle(VirtioMmio<ConsoleDevice<ConsoleSink>, GuestRam, IrqLatch>);

impl VirtioHandle for ConsoleHandle {
    fn read(&mut self, offset: u64, size: u8) -> Result<u64, VirtioError> {
        self.0.read(offset, size)
    }
    fn write(&mut self, offset: u64, size: u8, value: u64) -> Result<(), VirtioError> {
        self.0.write(offset, size, value)
    }
    fn poll(&mut self) -> Result<(), VirtioError> {
        self.0.poll()
    }
    fn push_input(&mut self, bytes: &[u8]) -> Result<(), VirtioError> {
        self.0.device_mut().push_input(bytes);
        self.0.poll()
    }
}

/// Guest console (hvc0) output to the hypervisor console, line-prefixed like the PL011.
pub struct ConsoleSink(pub Box<dyn UartOutput>);

impl ConsoleOutput for ConsoleSink {
    fn write(&mut self, bytes: &[u8]) {
        self.0.write_bytes(bytes);
    }
}

/// One virtio device of a VM (clones share the device).
#[derive(Clone)]
pub struct VirtioSlot {
    /// Device kind, for logs ("console", "block", "net", "rng").
    pub kind: &'static str,
    /// Guest physical base of its 0x200-byte window.
    pub base: u64,
    /// Its SPI (INTID).
    pub intid: u32,
    /// The transport.
    pub dev: Arc<Mutex<Box<dyn VirtioHandle>>>,
    /// Its interrupt output.
    pub irq: IrqLatch,
    /// The MAC address of a network device.
    pub mac: Option<[u8; 6]>,
    /// The device is a port of the virtual switch: frames it transmits may be for other VMs
    /// or the uplink, so the host polls the switch after the guest writes to it.
    pub on_switch: bool,
}

impl VirtioSlot {
    /// Host-side work of the device (see [`VirtioHandle::poll`]), then its interrupt line
    /// to `events` if it changed; an error (a malformed chain puts the device into
    /// `DEVICE_NEEDS_RESET`) is logged for VM `vm`.
    pub fn poll(&self, vm: &str, events: &mut dyn MmioEvents) {
        let mut dev = self.dev.lock();
        if let Err(e) = dev.poll() {
            warn_virtio_error(vm, self.kind, format_args!("poll"), &e);
        }
        self.irq.report(self.intid, events);
    }

    /// Console input for the device (see [`VirtioHandle::push_input`]), then its line as
    /// for [`VirtioSlot::poll`]; errors are logged for VM `vm` like `poll`'s.
    pub fn push_input(&self, vm: &str, bytes: &[u8], events: &mut dyn MmioEvents) {
        let mut dev = self.dev.lock();
        if let Err(e) = dev.push_input(bytes) {
            warn_virtio_error(vm, self.kind, format_args!("console input"), &e);
        }
        self.irq.report(self.intid, events);
    }
}

/// Logs an error of VM `vm`'s virtio-`kind` device found during `what` (a register access,
/// a poll, console input) as a `[hv] warn:` line: a malformed queue has put the device into
/// `DEVICE_NEEDS_RESET` ("...; device needs reset"), anything else was ignored (RAZ/WI). The
/// one place every virtio path reports through.
pub fn warn_virtio_error(vm: &str, kind: &str, what: core::fmt::Arguments<'_>, e: &VirtioError) {
    crate::hv_warn!("{vm}: virtio-{kind} {what}: {e}");
}

/// The MMIO-bus adapter of a virtio slot. Register errors are logged; the access itself
/// always completes (RAZ/WI), as the virtio-mmio transport defines. After each access the
/// device's interrupt line goes to the caller's events if it changed; after a write to a
/// port of the virtual switch, the host polls the switch.
pub struct VirtioBusDevice {
    /// The VM's name, for logs.
    pub vm: String,
    /// The device.
    pub slot: VirtioSlot,
}

impl SharedMmioDevice for VirtioBusDevice {
    fn read(&self, caller: &mut MmioCaller<'_>, offset: u64, size: AccessSize) -> MmioResult<u64> {
        let slot = &self.slot;
        let mut dev = slot.dev.lock();
        let value = dev.read(offset, size.bytes() as u8).unwrap_or_else(|e| {
            warn_virtio_error(&self.vm, slot.kind, format_args!("read at {offset:#x}"), &e);
            0
        });
        slot.irq.report(slot.intid, caller.events);
        Ok(value)
    }

    fn write(
        &self,
        caller: &mut MmioCaller<'_>,
        offset: u64,
        size: AccessSize,
        value: u64,
    ) -> MmioResult<()> {
        let slot = &self.slot;
        let mut dev = slot.dev.lock();
        if let Err(e) = dev.write(offset, size.bytes() as u8, value) {
            warn_virtio_error(
                &self.vm,
                slot.kind,
                format_args!("write at {offset:#x}"),
                &e,
            );
        }
        slot.irq.report(slot.intid, caller.events);
        drop(dev);
        if slot.on_switch {
            caller.events.poll_backends();
        }
        Ok(())
    }
}

/// The virtual switch all VMs' network devices attach to; its uplink is the host's
/// virtio-net card when QEMU has one (`host_virtio`).
static SWITCH: Once<Arc<Mutex<VirtualSwitch>>> = Once::new();

fn switch() -> &'static Arc<Mutex<VirtualSwitch>> {
    SWITCH.call_once(|| {
        let mut s = VirtualSwitch::default();
        if let Some(uplink) = super::host_virtio::take_uplink() {
            s.set_uplink(uplink);
        }
        s.shared()
    })
}

/// Most frames taken from the uplink per poll (its receive queue holds 16).
const UPLINK_BUDGET: usize = 64;

/// Moves frames the uplink received into the switch's port queues; returns how many.
/// Nothing to do (0) before the first VM created the switch or without an uplink.
pub fn poll_uplink() -> usize {
    match SWITCH.get() {
        Some(s) => s.lock().poll(UPLINK_BUDGET),
        None => 0,
    }
}

/// Default MAC address of VM `index` (52:54:00 is QEMU's OUI): 52:54:00:12:34:(0x56 + index).
pub fn mac_for(index: usize) -> [u8; 6] {
    [
        0x52,
        0x54,
        0x00,
        0x12,
        0x34,
        0x56u8.wrapping_add(index as u8),
    ]
}

/// Entropy for guests: `RNDR` when the CPU has FEAT_RNG, else the host's physical
/// virtio-rng (see `host_virtio`), else no entropy device at all (never a fake source).
fn entropy_source() -> Option<Box<dyn EntropySource + Send>> {
    if let Some(r) = virtio_mmio::devices::rng::Rndr::new() {
        return Some(Box::new(r));
    }
    super::host_virtio::entropy()
}

struct BoxedEntropy(Box<dyn EntropySource + Send>);

impl EntropySource for BoxedEntropy {
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), virtio_mmio::devices::rng::EntropyError> {
        self.0.fill(buf)
    }
}

struct BoxedBlock(Box<dyn BlockBackend + Send>);

impl BlockBackend for BoxedBlock {
    fn capacity_sectors(&self) -> u64 {
        self.0.capacity_sectors()
    }
    fn read(
        &mut self,
        sector: u64,
        buf: &mut [u8],
    ) -> Result<(), virtio_mmio::devices::block::BlockError> {
        self.0.read(sector, buf)
    }
    fn write(
        &mut self,
        sector: u64,
        buf: &[u8],
    ) -> Result<(), virtio_mmio::devices::block::BlockError> {
        self.0.write(sector, buf)
    }
    fn flush(&mut self) -> Result<(), virtio_mmio::devices::block::BlockError> {
        self.0.flush()
    }
    fn read_only(&self) -> bool {
        self.0.read_only()
    }
}

/// Size of the RAM disk a VM gets when the machine has no physical disk for it.
pub const RAMDISK_SECTORS: u64 = 4 * 2048; // 4 MiB

/// Memory from the frame allocator holding a VM's RAM-disk image (the storage of a
/// [`RamDisk`]): the package's image copied at VM creation, zero-padded to whole sectors,
/// writable, freed with the VM's devices. Frames, not the heap, so 64 MiB images fit.
pub struct PackageDisk {
    pa: u64,
    alloc: u64,
    len: usize,
}

impl PackageDisk {
    /// Copies `image` into fresh frames; its size is rounded up to 512 bytes. `None` when
    /// the image is empty or memory is short.
    pub fn new(image: &[u8]) -> Option<Self> {
        if image.is_empty() {
            return None;
        }
        let len = image
            .len()
            .next_multiple_of(virtio_mmio::devices::block::SECTOR_SIZE);
        let alloc = len as u64;
        let pa = super::frames::alloc_zeroed(alloc)?;
        // SAFETY: the frames were just allocated for this disk (zeroed, identity-mapped,
        // at least `len` bytes) and nothing else refers to them.
        unsafe { core::ptr::copy_nonoverlapping(image.as_ptr(), pa as *mut u8, image.len()) };
        Some(Self { pa, alloc, len })
    }

    /// Size in bytes (the image rounded up to whole sectors).
    pub fn size(&self) -> usize {
        self.len
    }
}

impl AsRef<[u8]> for PackageDisk {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `pa..pa+len` are frames owned by `self` until it is dropped.
        unsafe { core::slice::from_raw_parts(self.pa as *const u8, self.len) }
    }
}

impl AsMut<[u8]> for PackageDisk {
    fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_ref`; `&mut self` makes the access exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.pa as *mut u8, self.len) }
    }
}

impl Drop for PackageDisk {
    fn drop(&mut self) {
        super::frames::free(self.pa, self.alloc);
    }
}

/// Creates the virtio devices of VM `index` (of `vm_count`): console, block (the package's
/// disk image `disk`, else a slice of the host's disk, else a zeroed RAM disk), net (with
/// address `mac`, or [`mac_for`]`(index)`), rng.
pub fn create_devices(
    name: &str,
    index: usize,
    vm_count: usize,
    ram: GuestRam,
    console: Box<dyn UartOutput>,
    mac: Option<[u8; 6]>,
    disk: Option<PackageDisk>,
) -> Vec<VirtioSlot> {
    let mac = mac.unwrap_or_else(|| mac_for(index));
    let mut slots = Vec::new();
    let mut add =
        |kind: &'static str, dev: Box<dyn VirtioHandle>, irq: IrqLatch, port: Option<[u8; 6]>| {
            let n = slots.len() as u64;
            slots.push(VirtioSlot {
                kind,
                base: layout::VIRTIO_BASE + n * layout::VIRTIO_SIZE,
                intid: layout::VIRTIO_FIRST_INTID + n as u32,
                dev: Arc::new(Mutex::new(dev)),
                irq,
                mac: port,
                on_switch: port.is_some(),
            });
        };

    let irq = IrqLatch::default();
    add(
        "console",
        Box::new(ConsoleHandle(VirtioMmio::new(
            ConsoleDevice::new(ConsoleSink(console)),
            ram,
            irq.clone(),
        ))),
        irq,
        None,
    );
    let backend: Box<dyn BlockBackend + Send> = match disk {
        Some(d) => {
            let instead = if super::host_virtio::has_disk() {
                " (instead of its slice of the host's virtio disk)"
            } else {
                ""
            };
            crate::hv_log!(
                "{name}: virtio-blk: RAM disk from package, {} bytes{instead}",
                d.size()
            );
            Box::new(RamDisk::from_storage(d))
        }
        None => match super::host_virtio::disk_for(index, vm_count) {
            Some(d) => d,
            None => Box::new(RamDisk::new(RAMDISK_SECTORS)),
        },
    };
    let irq = IrqLatch::default();
    let id: String = alloc::format!("{name}-disk");
    add(
        "block",
        Box::new(VirtioMmio::new(
            BlockDevice::new(BoxedBlock(backend), &id),
            ram,
            irq.clone(),
        )),
        irq,
        None,
    );
    let irq = IrqLatch::default();
    add(
        "net",
        Box::new(VirtioMmio::new(
            NetDevice::new(SwitchPort::attach(switch()), mac),
            ram,
            irq.clone(),
        )),
        irq,
        Some(mac),
    );
    if let Some(src) = entropy_source() {
        let irq = IrqLatch::default();
        add(
            "rng",
            Box::new(VirtioMmio::new(
                RngDevice::new(BoxedEntropy(src)),
                ram,
                irq.clone(),
            )),
            irq,
            None,
        );
    }
    slots
}
