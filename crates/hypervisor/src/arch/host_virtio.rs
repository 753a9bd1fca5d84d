//! The hypervisor as a virtio *driver*: QEMU's own virtio-mmio devices (a disk, an
//! entropy source, a network card) driven through the `virtio-drivers` crate, and handed to
//! guests as the backends of their virtio devices. A physical disk is split into equal,
//! contiguous sector ranges, one per VM, so each VM's writes land in the host's image file.
//! A physical network card becomes the uplink port of the VMs' virtual switch.

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, Ordering};
use spin::{Mutex, Once};
use virtio_drivers::device::blk::VirtIOBlk;
use virtio_drivers::device::net::VirtIONet;
use virtio_drivers::device::rng::VirtIORng;
use virtio_drivers::transport::mmio::{MmioTransport, VirtIOHeader};
use virtio_drivers::transport::{DeviceType, Transport};
use virtio_drivers::{BufferDirection, Hal, PhysAddr};
use virtio_mmio::devices::block::{BlockBackend, BlockError};
use virtio_mmio::devices::rng::{EntropyError, EntropySource};
use virtio_mmio::switch::Uplink;

use super::frames;
use crate::platform::Range;

/// DMA for the host drivers: frames from the frame allocator, identity-mapped.
pub struct HostHal;

// SAFETY: DMA pages come zeroed from the frame allocator and are owned by the driver until
// `dma_dealloc`; physical == virtual in the hypervisor's identity map, and the platform's
// DMA is cache-coherent (QEMU virt, SBSA servers), so sharing needs no bounce buffer.
unsafe impl Hal for HostHal {
    fn dma_alloc(pages: usize, _direction: BufferDirection) -> (PhysAddr, NonNull<u8>) {
        let pa = frames::alloc_zeroed(pages as u64 * 4096).unwrap_or(0);
        (
            pa,
            NonNull::new(pa as *mut u8).unwrap_or(NonNull::dangling()),
        )
    }

    unsafe fn dma_dealloc(paddr: PhysAddr, _vaddr: NonNull<u8>, pages: usize) -> i32 {
        frames::free(paddr, pages as u64 * 4096);
        0
    }

    unsafe fn mmio_phys_to_virt(paddr: PhysAddr, _size: usize) -> NonNull<u8> {
        NonNull::new(paddr as *mut u8).unwrap_or(NonNull::dangling())
    }

    unsafe fn share(buffer: NonNull<[u8]>, _direction: BufferDirection) -> PhysAddr {
        buffer.as_ptr() as *mut u8 as PhysAddr
    }

    unsafe fn unshare(_paddr: PhysAddr, _buffer: NonNull<[u8]>, _direction: BufferDirection) {}
}

type Blk = VirtIOBlk<HostHal, MmioTransport<'static>>;
type Rng = VirtIORng<HostHal, MmioTransport<'static>>;
/// Receive/transmit queue size of the host network card.
const NET_QUEUE: usize = 16;
/// Receive buffer size: `virtio_net_hdr_v1` + a full Ethernet frame (no GSO, no
/// mergeable buffers are negotiated by `virtio-drivers`).
const NET_BUF: usize = 2048;
type Net = VirtIONet<HostHal, MmioTransport<'static>, NET_QUEUE>;

struct HostDevices {
    disk: Option<Arc<Mutex<Blk>>>,
    rng: Option<Arc<Mutex<Rng>>>,
    /// The network card until the virtual switch takes it as its uplink.
    net: Mutex<Option<HostNet>>,
}

static HOST: Once<HostDevices> = Once::new();
/// INTID of the host network card (0: none, or the device tree gives none).
static NET_INTID: AtomicU32 = AtomicU32::new(0);

/// Probes the host's virtio-mmio windows (identity-mapped as device memory) and keeps the
/// first disk, the first entropy device and the first network card. `intids` are the
/// windows' interrupts (0: unknown). Boot CPU, once.
pub fn init(windows: &[Range], intids: &[u32]) {
    HOST.call_once(|| {
        let mut host = HostDevices {
            disk: None,
            rng: None,
            net: Mutex::new(None),
        };
        for (i, w) in windows.iter().enumerate() {
            let Some(header) = NonNull::new(w.base as *mut VirtIOHeader) else {
                continue;
            };
            // SAFETY: `w` is a virtio-mmio window from the host device tree, mapped as
            // device memory and used by nothing else.
            let Ok(transport) = (unsafe { MmioTransport::new(header, w.size as usize) }) else {
                continue;
            };
            match transport.device_type() {
                DeviceType::Block if host.disk.is_none() => match Blk::new(transport) {
                    Ok(blk) => {
                        crate::hv_log!(
                            "host virtio-blk at {:#x}: {} sectors ({} MiB){}",
                            w.base,
                            blk.capacity(),
                            blk.capacity() >> 11,
                            if blk.readonly() { ", read-only" } else { "" }
                        );
                        host.disk = Some(Arc::new(Mutex::new(blk)));
                    }
                    Err(e) => crate::hv_warn!("host virtio-blk at {:#x}: {e:?}", w.base),
                },
                DeviceType::EntropySource if host.rng.is_none() => match Rng::new(transport) {
                    Ok(rng) => {
                        crate::hv_log!("host virtio-rng at {:#x}", w.base);
                        host.rng = Some(Arc::new(Mutex::new(rng)));
                    }
                    Err(e) => crate::hv_warn!("host virtio-rng at {:#x}: {e:?}", w.base),
                },
                DeviceType::Network if host.net.get_mut().is_none() => {
                    match Net::new(transport, NET_BUF) {
                        Ok(net) => {
                            let m = net.mac_address();
                            let intid = intids.get(i).copied().unwrap_or(0);
                            crate::hv_log!(
                                "host virtio-net at {:#x} mac {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x} (SPI {}): uplink of the VMs' virtual switch",
                                w.base,
                                m[0],
                                m[1],
                                m[2],
                                m[3],
                                m[4],
                                m[5],
                                intid.saturating_sub(32)
                            );
                            NET_INTID.store(intid, Ordering::Relaxed);
                            *host.net.get_mut() = Some(HostNet { net, errors: 0 });
                        }
                        Err(e) => crate::hv_warn!("host virtio-net at {:#x}: {e:?}", w.base),
                    }
                }
                _ => {}
            }
        }
        host
    });
}

/// A VM's share of the physical disk: sectors `[first, first + count)`.
struct DiskSlice {
    disk: Arc<Mutex<Blk>>,
    first: u64,
    count: u64,
    read_only: bool,
}

const SECTOR: usize = 512;

impl DiskSlice {
    fn check(&self, sector: u64, len: usize) -> Result<u64, BlockError> {
        let n = (len / SECTOR) as u64;
        if !len.is_multiple_of(SECTOR) || sector.checked_add(n).is_none_or(|end| end > self.count) {
            return Err(BlockError);
        }
        Ok(self.first + sector)
    }
}

impl BlockBackend for DiskSlice {
    fn capacity_sectors(&self) -> u64 {
        self.count
    }

    fn read(&mut self, sector: u64, buf: &mut [u8]) -> Result<(), BlockError> {
        let s = self.check(sector, buf.len())?;
        self.disk
            .lock()
            .read_blocks(s as usize, buf)
            .map_err(|_| BlockError)
    }

    fn write(&mut self, sector: u64, buf: &[u8]) -> Result<(), BlockError> {
        if self.read_only {
            return Err(BlockError);
        }
        let s = self.check(sector, buf.len())?;
        self.disk
            .lock()
            .write_blocks(s as usize, buf)
            .map_err(|_| BlockError)
    }

    fn flush(&mut self) -> Result<(), BlockError> {
        self.disk.lock().flush().map_err(|_| BlockError)
    }

    fn read_only(&self) -> bool {
        self.read_only
    }
}

/// Whether the machine has a physical (QEMU) virtio disk the hypervisor drives.
pub fn has_disk() -> bool {
    HOST.get().is_some_and(|h| h.disk.is_some())
}

/// VM `index`'s slice of the physical disk (1/`vm_count` of it), if there is one.
pub fn disk_for(index: usize, vm_count: usize) -> Option<Box<dyn BlockBackend + Send>> {
    let disk = HOST.get()?.disk.clone()?;
    let (total, ro) = {
        let d = disk.lock();
        (d.capacity(), d.readonly())
    };
    let count = total / vm_count.max(1) as u64;
    if count == 0 {
        return None;
    }
    Some(Box::new(DiskSlice {
        disk,
        first: count * index as u64,
        count,
        read_only: ro,
    }))
}

struct HostRng(Arc<Mutex<Rng>>);

impl EntropySource for HostRng {
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), EntropyError> {
        let mut done = 0;
        let mut rng = self.0.lock();
        while done < buf.len() {
            match rng.request_entropy(&mut buf[done..]) {
                Ok(0) | Err(_) => return Err(EntropyError),
                Ok(n) => done += n,
            }
        }
        Ok(())
    }
}

/// The host's virtio-rng as an entropy source, if there is one.
pub fn entropy() -> Option<Box<dyn EntropySource + Send>> {
    let rng = HOST.get()?.rng.clone()?;
    Some(Box::new(HostRng(rng)))
}

/// The host's network card as the virtual switch's uplink. Every device error is logged
/// (rate-limited by `hv_warn`) and the frame dropped; nothing here panics.
pub struct HostNet {
    net: Net,
    errors: u64,
}

impl HostNet {
    fn error(&mut self, what: &str, e: virtio_drivers::Error) {
        self.errors += 1;
        crate::hv_warn!(
            "host virtio-net: {what}: {e:?}; frame dropped ({} error(s))",
            self.errors
        );
    }
}

impl Uplink for HostNet {
    fn transmit(&mut self, frame: &[u8]) {
        if frame.len() + 12 > NET_BUF {
            return;
        }
        let mut tx = self.net.new_tx_buffer(frame.len());
        tx.packet_mut().copy_from_slice(frame);
        if let Err(e) = self.net.send(tx) {
            self.error("transmit", e);
        }
    }

    fn receive(&mut self) -> Option<Vec<u8>> {
        // Acknowledge first: a frame that completes after this raises the interrupt again.
        self.net.ack_interrupt();
        match self.net.receive() {
            Ok(rx) => {
                let frame = rx.packet().to_vec();
                if let Err(e) = self.net.recycle_rx_buffer(rx) {
                    self.error("recycling a receive buffer", e);
                }
                Some(frame)
            }
            Err(virtio_drivers::Error::NotReady) => None,
            Err(e) => {
                // A bad token or length: that buffer is lost; stop for now (the next
                // interrupt or poll tries again), never spin on a broken queue.
                self.error("receive", e);
                None
            }
        }
    }
}

/// The host's network card, once: the virtual switch takes it as its uplink.
pub fn take_uplink() -> Option<Box<dyn Uplink>> {
    let net = HOST.get()?.net.lock().take()?;
    Some(Box::new(net))
}

/// INTID of the host network card's interrupt, when there is one.
pub fn uplink_intid() -> Option<u32> {
    match NET_INTID.load(Ordering::Relaxed) {
        0 => None,
        n => Some(n),
    }
}

/// Routes the host network card's interrupt to the calling CPU (the boot CPU), which then
/// moves received frames into the virtual switch (`sched::drain_host_irqs`).
pub fn enable_uplink_interrupt() {
    if let Some(intid) = uplink_intid() {
        super::gic::enable_spi_here(intid);
    }
}
