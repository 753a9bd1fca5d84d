//! The host side of the toy VMM: guest RAM, the interrupt line and the disk, implemented in
//! host memory for `virtio-mmio`'s traits, and the trap dispatch a hypervisor runs when the
//! guest touches the device's MMIO window.

use virtio_mmio::devices::block::{BlockBackend, BlockDevice, BlockError, SECTOR_SIZE};
use virtio_mmio::regs::MMIO_WINDOW_SIZE;
use virtio_mmio::{GuestMemory, InterruptLine, MemError, VirtioError, VirtioMmio};

/// Guest-physical base of the guest's RAM (as on QEMU `virt`).
pub const RAM_BASE: u64 = 0x4000_0000;
/// Bytes of guest RAM.
pub const RAM_SIZE: usize = 1 << 20;
/// Guest-physical base of the virtio-blk register window.
pub const VIRTIO_BLK_BASE: u64 = 0x0a00_0000;
/// The SPI the device's interrupt line is wired to.
pub const VIRTIO_BLK_SPI: u32 = 16;
/// Id string the disk reports to `VIRTIO_BLK_T_GET_ID`.
pub const DISK_ID: &str = "toy-vmm-disk";

/// Guest RAM: [`RAM_SIZE`] bytes of a host `Vec` at guest-physical [`RAM_BASE`].
///
/// Every access is bounds-checked against the vector, so a guest-supplied address outside
/// RAM is refused with a [`MemError`] instead of reaching host memory.
pub struct HostRam {
    base: u64,
    bytes: Vec<u8>,
}

impl HostRam {
    /// Zeroed RAM of `len` bytes at guest-physical `base`.
    pub fn new(base: u64, len: usize) -> Self {
        Self {
            base,
            bytes: vec![0; len],
        }
    }

    /// Index range of `len` bytes at `gpa` in the vector, if they are all RAM.
    fn span(&self, gpa: u64, len: u64) -> Result<core::ops::Range<usize>, MemError> {
        let refused = MemError { gpa, len };
        let start = gpa.checked_sub(self.base).ok_or(refused)?;
        let end = start.checked_add(len).ok_or(refused)?;
        if end > self.bytes.len() as u64 {
            return Err(refused);
        }
        Ok(start as usize..end as usize)
    }
}

impl GuestMemory for HostRam {
    fn read(&self, gpa: u64, buf: &mut [u8]) -> Result<(), MemError> {
        let r = self.span(gpa, buf.len() as u64)?;
        buf.copy_from_slice(&self.bytes[r]);
        Ok(())
    }

    fn write(&mut self, gpa: u64, buf: &[u8]) -> Result<(), MemError> {
        let r = self.span(gpa, buf.len() as u64)?;
        self.bytes[r].copy_from_slice(buf);
        Ok(())
    }

    fn check_range(&self, gpa: u64, len: u64) -> Result<(), MemError> {
        self.span(gpa, len).map(|_| ())
    }
}

/// The device's level-sensitive interrupt line; a real host would drive a vGIC SPI here.
#[derive(Debug, Default)]
pub struct LevelIrq {
    level: bool,
    rising_edges: u32,
}

impl LevelIrq {
    /// Whether the line is asserted.
    pub fn level(&self) -> bool {
        self.level
    }

    /// How many times the line went from low to high (interrupts delivered).
    pub fn rising_edges(&self) -> u32 {
        self.rising_edges
    }
}

impl InterruptLine for LevelIrq {
    fn set_level(&mut self, level: bool) {
        if level && !self.level {
            self.rising_edges += 1;
        }
        self.level = level;
    }
}

/// The disk image: whole 512-byte sectors in a host `Vec`, counting flushes.
pub struct HostDisk {
    sectors: Vec<u8>,
    flushes: u32,
}

impl HostDisk {
    /// A zeroed disk of `count` sectors.
    pub fn new(count: usize) -> Self {
        Self {
            sectors: vec![0; count * SECTOR_SIZE],
            flushes: 0,
        }
    }

    /// Sector `n` (panics if it is past the end: host code, not guest input).
    pub fn sector(&self, n: usize) -> &[u8] {
        &self.sectors[n * SECTOR_SIZE..(n + 1) * SECTOR_SIZE]
    }

    /// Sector `n`, mutable (the host preparing the image).
    pub fn sector_mut(&mut self, n: usize) -> &mut [u8] {
        &mut self.sectors[n * SECTOR_SIZE..(n + 1) * SECTOR_SIZE]
    }

    /// How many times the guest flushed the disk.
    pub fn flushes(&self) -> u32 {
        self.flushes
    }

    /// Byte range of `len` bytes from `sector`, if inside the disk.
    fn span(&self, sector: u64, len: usize) -> Result<core::ops::Range<usize>, BlockError> {
        let start = usize::try_from(sector)
            .ok()
            .and_then(|s| s.checked_mul(SECTOR_SIZE))
            .ok_or(BlockError)?;
        let end = start.checked_add(len).ok_or(BlockError)?;
        if end > self.sectors.len() {
            return Err(BlockError);
        }
        Ok(start..end)
    }
}

impl BlockBackend for HostDisk {
    fn capacity_sectors(&self) -> u64 {
        (self.sectors.len() / SECTOR_SIZE) as u64
    }

    fn read(&mut self, sector: u64, buf: &mut [u8]) -> Result<(), BlockError> {
        let r = self.span(sector, buf.len())?;
        buf.copy_from_slice(&self.sectors[r]);
        Ok(())
    }

    fn write(&mut self, sector: u64, buf: &[u8]) -> Result<(), BlockError> {
        let r = self.span(sector, buf.len())?;
        self.sectors[r].copy_from_slice(buf);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), BlockError> {
        self.flushes += 1;
        Ok(())
    }

    fn read_only(&self) -> bool {
        false
    }
}

/// The virtio-blk transport as this host instantiates it.
pub type BlkTransport = VirtioMmio<BlockDevice<HostDisk>, HostRam, LevelIrq>;

/// The toy hypervisor: one VM with RAM and one virtio-blk device.
///
/// A real hypervisor calls [`mmio_read`](Self::mmio_read) / [`mmio_write`](Self::mmio_write)
/// from its Stage-2 data-abort handler; here the hand-played driver calls them directly.
pub struct ToyVmm {
    blk: BlkTransport,
    warnings: Vec<String>,
}

impl ToyVmm {
    /// A VM with [`RAM_SIZE`] bytes of RAM and `disk` behind virtio-blk.
    pub fn new(disk: HostDisk) -> Self {
        let device = BlockDevice::new(disk, DISK_ID);
        let ram = HostRam::new(RAM_BASE, RAM_SIZE);
        Self {
            blk: VirtioMmio::new(device, ram, LevelIrq::default()),
            warnings: Vec::new(),
        }
    }

    /// The transport, for the host's own checks.
    pub fn blk(&self) -> &BlkTransport {
        &self.blk
    }

    /// The disk behind the device.
    pub fn disk(&self) -> &HostDisk {
        self.blk.device().backend()
    }

    /// Guest RAM as the guest's CPU sees it (plain loads and stores).
    pub fn ram(&self) -> &HostRam {
        self.blk.memory()
    }

    /// Guest RAM, mutable.
    pub fn ram_mut(&mut self) -> &mut HostRam {
        self.blk.memory_mut()
    }

    /// Warnings logged so far (one per refused or malformed access).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// A trapped guest load of `size` bytes from `gpa`. Always completes: an access the
    /// device refuses (or an address with no device) reads as zero and is logged.
    pub fn mmio_read(&mut self, gpa: u64, size: u8) -> u64 {
        match window_offset(gpa) {
            Some(offset) => self.blk.read(offset, size).unwrap_or_else(|e| {
                self.warn_device(&e);
                0
            }),
            None => {
                self.warn(format!("read of unbacked address {gpa:#x}"));
                0
            }
        }
    }

    /// A trapped guest store of `size` bytes of `value` to `gpa`. Always completes: a refused
    /// store is ignored and logged; queue processing happens inside a `QueueNotify` store.
    pub fn mmio_write(&mut self, gpa: u64, size: u8, value: u64) {
        match window_offset(gpa) {
            Some(offset) => {
                if let Err(e) = self.blk.write(offset, size, value) {
                    self.warn_device(&e);
                }
            }
            None => self.warn(format!("write to unbacked address {gpa:#x}")),
        }
    }

    fn warn_device(&mut self, e: &VirtioError) {
        self.warn(format!("virtio-blk: {e}"));
    }

    fn warn(&mut self, msg: String) {
        println!("    [toy-vmm] warn: {msg}");
        self.warnings.push(msg);
    }
}

/// Offset of `gpa` in the virtio-blk window, if it falls inside it.
fn window_offset(gpa: u64) -> Option<u64> {
    let offset = gpa.checked_sub(VIRTIO_BLK_BASE)?;
    (offset < MMIO_WINDOW_SIZE).then_some(offset)
}
