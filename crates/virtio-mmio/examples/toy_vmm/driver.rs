//! The guest side, played by hand: a minimal virtio-blk driver that talks to the device only
//! through trapped MMIO accesses to its register window and plain stores to guest RAM, the
//! way a guest kernel does (VIRTIO 1.1 §3.1 initialisation, §2.6 split virtqueues, §5.2
//! block requests).

use virtio_mmio::devices::block::{
    SECTOR_SIZE, VIRTIO_BLK_T_FLUSH, VIRTIO_BLK_T_IN, VIRTIO_BLK_T_OUT,
};
use virtio_mmio::features::status;
use virtio_mmio::queue::{Descriptor, DESC_SIZE, VIRTQ_DESC_F_NEXT, VIRTQ_DESC_F_WRITE};
use virtio_mmio::regs::{offset as reg, CONFIG_SPACE};
use virtio_mmio::GuestMemory;

use crate::host::{ToyVmm, RAM_BASE, VIRTIO_BLK_BASE};

/// Width of a register access: virtio-mmio registers are 32 bits.
const REG_BYTES: u8 = 4;
/// Width of the configuration-space read of `capacity`.
const CAPACITY_BYTES: u8 = 8;
/// Offset of `capacity` (le64, in sectors) in the virtio-blk configuration space.
const BLK_CONFIG_CAPACITY: u64 = 0;

/// The only virtio-blk queue (`requestq`).
pub const REQUEST_QUEUE: u16 = 0;
/// Entries in the request queue the driver sets up (a power of two, at most `QueueNumMax`).
pub const QUEUE_SIZE: u16 = 8;
/// Guest-physical address of the descriptor table (16-byte aligned).
pub const DESC_TABLE: u64 = RAM_BASE + 0x1000;
/// Guest-physical address of the available ring, the driver area (2-byte aligned).
pub const AVAIL_RING: u64 = RAM_BASE + 0x2000;
/// Guest-physical address of the used ring, the device area (4-byte aligned).
pub const USED_RING: u64 = RAM_BASE + 0x3000;
/// Bytes the driver clears for each of the three queue areas before using them.
const QUEUE_AREA_BYTES: usize = 0x1000;

/// Offset of `idx` in the available and the used ring (after `le16 flags`).
const RING_IDX: u64 = 2;
/// Offset of the first ring entry in the available and the used ring.
const RING_ENTRIES: u64 = 4;
/// Bytes of one available-ring entry (`le16` descriptor index).
const AVAIL_ENTRY_BYTES: u64 = 2;
/// Bytes of one used-ring entry (`le32 id; le32 len`).
const USED_ENTRY_BYTES: u64 = 8;

/// Guest-physical address of the request header (`le32 type; le32 reserved; le64 sector`).
const REQ_HEADER: u64 = RAM_BASE + 0x4000;
/// Bytes of the request header.
const REQ_HEADER_BYTES: u32 = 16;
/// Guest-physical address of the status byte the device writes last.
const REQ_STATUS: u64 = REQ_HEADER + REQ_HEADER_BYTES as u64;
/// Guest-physical address of the one-sector data buffer.
const REQ_DATA: u64 = RAM_BASE + 0x5000;
/// Descriptors per request: header, data, status.
const DESCS_PER_REQUEST: u16 = 3;
/// What the status byte holds before the device writes it (no `VIRTIO_BLK_S_*` value).
const STATUS_UNSET: u8 = 0xff;

/// The data buffer of a block request.
enum Data<'a> {
    /// No data buffer (flush).
    None,
    /// A device-writable sector (read request).
    DeviceWrites,
    /// A device-readable sector holding these bytes (write request).
    DeviceReads(&'a [u8; SECTOR_SIZE]),
}

/// The identification registers read first (VIRTIO 1.1 §4.2.3.1.1).
#[derive(Debug)]
pub struct Probe {
    /// `MagicValue`.
    pub magic: u32,
    /// `Version`.
    pub version: u32,
    /// `DeviceID`.
    pub device_id: u32,
    /// `VendorID`.
    pub vendor_id: u32,
}

/// A request the device returned.
#[derive(Debug)]
pub struct Completion {
    /// `id` of the used element: the head descriptor of the request.
    pub id: u32,
    /// `len` of the used element: bytes the device wrote (data + status byte).
    pub len: u32,
    /// The `VIRTIO_BLK_S_*` status byte.
    pub status: u8,
}

/// Driver-side state of the request queue.
#[derive(Debug, Default)]
pub struct BlkDriver {
    /// Next free descriptor (free-running, taken modulo [`QUEUE_SIZE`]).
    next_desc: u16,
    /// The driver's copy of `avail.idx`.
    avail_idx: u16,
    /// How many used elements the driver has consumed.
    last_used: u16,
}

impl BlkDriver {
    /// A driver that has not touched the device yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the 32-bit register at `offset`.
    pub fn read_reg(&self, vmm: &mut ToyVmm, offset: u64) -> u32 {
        vmm.mmio_read(VIRTIO_BLK_BASE + offset, REG_BYTES) as u32
    }

    /// Writes the 32-bit register at `offset`.
    pub fn write_reg(&self, vmm: &mut ToyVmm, offset: u64, value: u32) {
        vmm.mmio_write(VIRTIO_BLK_BASE + offset, REG_BYTES, u64::from(value));
    }

    /// `MagicValue`, `Version`, `DeviceID` and `VendorID`.
    pub fn probe(&self, vmm: &mut ToyVmm) -> Probe {
        Probe {
            magic: self.read_reg(vmm, reg::MAGIC_VALUE),
            version: self.read_reg(vmm, reg::VERSION),
            device_id: self.read_reg(vmm, reg::DEVICE_ID),
            vendor_id: self.read_reg(vmm, reg::VENDOR_ID),
        }
    }

    /// The `Status` register.
    pub fn status(&self, vmm: &mut ToyVmm) -> u32 {
        self.read_reg(vmm, reg::STATUS)
    }

    /// The 64 feature bits the device offers (`DeviceFeatures` through `DeviceFeaturesSel`).
    pub fn device_features(&self, vmm: &mut ToyVmm) -> u64 {
        self.write_reg(vmm, reg::DEVICE_FEATURES_SEL, 0);
        let low = self.read_reg(vmm, reg::DEVICE_FEATURES);
        self.write_reg(vmm, reg::DEVICE_FEATURES_SEL, 1);
        let high = self.read_reg(vmm, reg::DEVICE_FEATURES);
        u64::from(high) << 32 | u64::from(low)
    }

    /// Resets the device and negotiates the features in `wanted` that it offers (VIRTIO 1.1
    /// §3.1.1 steps 1-6). Returns the accepted features, or the `Status` read back if the
    /// device refused `FEATURES_OK`.
    pub fn negotiate(&mut self, vmm: &mut ToyVmm, wanted: u64) -> Result<u64, u32> {
        self.write_reg(vmm, reg::STATUS, 0);
        self.write_reg(vmm, reg::STATUS, status::ACKNOWLEDGE);
        self.write_reg(vmm, reg::STATUS, status::ACKNOWLEDGE | status::DRIVER);
        let accepted = self.device_features(vmm) & wanted;
        self.write_reg(vmm, reg::DRIVER_FEATURES_SEL, 0);
        self.write_reg(vmm, reg::DRIVER_FEATURES, accepted as u32);
        self.write_reg(vmm, reg::DRIVER_FEATURES_SEL, 1);
        self.write_reg(vmm, reg::DRIVER_FEATURES, (accepted >> 32) as u32);
        let features_ok = status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK;
        self.write_reg(vmm, reg::STATUS, features_ok);
        let now = self.status(vmm);
        if now & status::FEATURES_OK == 0 {
            return Err(now);
        }
        Ok(accepted)
    }

    /// `capacity` from the configuration space, in 512-byte sectors.
    pub fn capacity(&self, vmm: &mut ToyVmm) -> u64 {
        vmm.mmio_read(
            VIRTIO_BLK_BASE + CONFIG_SPACE + BLK_CONFIG_CAPACITY,
            CAPACITY_BYTES,
        )
    }

    /// Lays out the request queue in guest RAM and makes it ready; returns `QueueNumMax`.
    pub fn setup_queue(&mut self, vmm: &mut ToyVmm) -> u32 {
        for area in [DESC_TABLE, AVAIL_RING, USED_RING] {
            store(vmm, area, &[0; QUEUE_AREA_BYTES]);
        }
        *self = Self::new();
        self.write_reg(vmm, reg::QUEUE_SEL, u32::from(REQUEST_QUEUE));
        let max = self.read_reg(vmm, reg::QUEUE_NUM_MAX);
        self.write_reg(vmm, reg::QUEUE_NUM, u32::from(QUEUE_SIZE));
        for (low, high, gpa) in [
            (reg::QUEUE_DESC_LOW, reg::QUEUE_DESC_HIGH, DESC_TABLE),
            (reg::QUEUE_DRIVER_LOW, reg::QUEUE_DRIVER_HIGH, AVAIL_RING),
            (reg::QUEUE_DEVICE_LOW, reg::QUEUE_DEVICE_HIGH, USED_RING),
        ] {
            self.write_reg(vmm, low, gpa as u32);
            self.write_reg(vmm, high, (gpa >> 32) as u32);
        }
        self.write_reg(vmm, reg::QUEUE_READY, 1);
        max
    }

    /// Sets `DRIVER_OK`: the device is live.
    pub fn driver_ok(&self, vmm: &mut ToyVmm) {
        let all = status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK | status::DRIVER_OK;
        self.write_reg(vmm, reg::STATUS, all);
    }

    /// Writes 0 to `Status`: device reset.
    pub fn reset(&self, vmm: &mut ToyVmm) {
        self.write_reg(vmm, reg::STATUS, 0);
    }

    /// `InterruptStatus`.
    pub fn interrupt_status(&self, vmm: &mut ToyVmm) -> u32 {
        self.read_reg(vmm, reg::INTERRUPT_STATUS)
    }

    /// Acknowledges the `InterruptStatus` bits in `bits`.
    pub fn ack_interrupt(&self, vmm: &mut ToyVmm, bits: u32) {
        self.write_reg(vmm, reg::INTERRUPT_ACK, bits);
    }

    /// The device's `used.idx` as it lies in guest RAM.
    pub fn used_idx(&self, vmm: &ToyVmm) -> u16 {
        u16::from_le_bytes(load(vmm, USED_RING + RING_IDX))
    }

    /// Reads sector `sector` into the data buffer (`VIRTIO_BLK_T_IN`).
    pub fn read_sector(&mut self, vmm: &mut ToyVmm, sector: u64) -> Option<(Completion, Vec<u8>)> {
        self.request(vmm, VIRTIO_BLK_T_IN, sector, Data::DeviceWrites)
    }

    /// Writes `data` to sector `sector` (`VIRTIO_BLK_T_OUT`).
    pub fn write_sector(
        &mut self,
        vmm: &mut ToyVmm,
        sector: u64,
        data: &[u8; SECTOR_SIZE],
    ) -> Option<Completion> {
        let (done, _) = self.request(vmm, VIRTIO_BLK_T_OUT, sector, Data::DeviceReads(data))?;
        Some(done)
    }

    /// Flushes the disk's write cache (`VIRTIO_BLK_T_FLUSH`, no data buffer).
    pub fn flush(&mut self, vmm: &mut ToyVmm) -> Option<Completion> {
        let (done, _) = self.request(vmm, VIRTIO_BLK_T_FLUSH, 0, Data::None)?;
        Some(done)
    }

    /// Sends one block request of type `kind` for `sector` and, as the device completes it
    /// inside the `QueueNotify` store, takes the completion from the used ring. Returns it with
    /// the data buffer as it is afterwards, or `None` if nothing was used.
    fn request(
        &mut self,
        vmm: &mut ToyVmm,
        kind: u32,
        sector: u64,
        data: Data<'_>,
    ) -> Option<(Completion, Vec<u8>)> {
        let mut header = [0u8; REQ_HEADER_BYTES as usize];
        header[..4].copy_from_slice(&kind.to_le_bytes());
        header[8..].copy_from_slice(&sector.to_le_bytes());
        store(vmm, REQ_HEADER, &header);
        store(vmm, REQ_STATUS, &[STATUS_UNSET]);

        let mut buffers = vec![(REQ_HEADER, REQ_HEADER_BYTES, 0)];
        match data {
            Data::None => {}
            Data::DeviceWrites => {
                store(vmm, REQ_DATA, &[0; SECTOR_SIZE]);
                buffers.push((REQ_DATA, SECTOR_SIZE as u32, VIRTQ_DESC_F_WRITE));
            }
            Data::DeviceReads(bytes) => {
                store(vmm, REQ_DATA, bytes);
                buffers.push((REQ_DATA, SECTOR_SIZE as u32, 0));
            }
        }
        buffers.push((REQ_STATUS, 1, VIRTQ_DESC_F_WRITE));
        self.post(vmm, &buffers, None);
        self.notify(vmm);

        let (id, len) = self.pop_used(vmm)?;
        let [status] = load::<1>(vmm, REQ_STATUS);
        let mut buf = vec![0u8; SECTOR_SIZE];
        vmm.ram()
            .read(REQ_DATA, &mut buf)
            .expect("data buffer is in RAM");
        Some((Completion { id, len, status }, buf))
    }

    /// Posts a one-descriptor chain whose `next` field names descriptor `bad_next` of a
    /// [`QUEUE_SIZE`]-entry table, and notifies: a malformed chain.
    pub fn post_malformed(&mut self, vmm: &mut ToyVmm, bad_next: u16) {
        self.post(vmm, &[(REQ_HEADER, REQ_HEADER_BYTES, 0)], Some(bad_next));
        self.notify(vmm);
    }

    /// Writes `(gpa, len, flags)` buffers as a chain of consecutive descriptors and publishes
    /// it in the available ring. `last_next`, if given, is put in the last descriptor with
    /// `VIRTQ_DESC_F_NEXT` (to build a broken chain).
    fn post(&mut self, vmm: &mut ToyVmm, buffers: &[(u64, u32, u16)], last_next: Option<u16>) {
        debug_assert!(buffers.len() <= usize::from(DESCS_PER_REQUEST));
        let head = self.next_desc % QUEUE_SIZE;
        for (k, &(addr, len, flags)) in buffers.iter().enumerate() {
            let index = (self.next_desc + k as u16) % QUEUE_SIZE;
            let last = k + 1 == buffers.len();
            let (flags, next) = match (last, last_next) {
                (false, _) => (flags | VIRTQ_DESC_F_NEXT, (index + 1) % QUEUE_SIZE),
                (true, Some(bad)) => (flags | VIRTQ_DESC_F_NEXT, bad),
                (true, None) => (flags, 0),
            };
            let desc = Descriptor {
                addr,
                len,
                flags,
                next,
            };
            store(
                vmm,
                DESC_TABLE + DESC_SIZE * u64::from(index),
                &desc.to_bytes(),
            );
        }
        self.next_desc = self.next_desc.wrapping_add(DESCS_PER_REQUEST);
        let slot = u64::from(self.avail_idx % QUEUE_SIZE);
        store(
            vmm,
            AVAIL_RING + RING_ENTRIES + AVAIL_ENTRY_BYTES * slot,
            &head.to_le_bytes(),
        );
        // The entry is written before the index that publishes it (a guest would put a
        // write barrier here).
        self.avail_idx = self.avail_idx.wrapping_add(1);
        store(vmm, AVAIL_RING + RING_IDX, &self.avail_idx.to_le_bytes());
    }

    /// Writes `QueueNotify`: the device processes the queue inside this trapped store.
    fn notify(&self, vmm: &mut ToyVmm) {
        self.write_reg(vmm, reg::QUEUE_NOTIFY, u32::from(REQUEST_QUEUE));
    }

    /// The next used element `(id, len)`, if the device returned one.
    fn pop_used(&mut self, vmm: &ToyVmm) -> Option<(u32, u32)> {
        if self.used_idx(vmm) == self.last_used {
            return None;
        }
        let slot = u64::from(self.last_used % QUEUE_SIZE);
        let entry: [u8; 8] = load(vmm, USED_RING + RING_ENTRIES + USED_ENTRY_BYTES * slot);
        self.last_used = self.last_used.wrapping_add(1);
        let [i0, i1, i2, i3, l0, l1, l2, l3] = entry;
        Some((
            u32::from_le_bytes([i0, i1, i2, i3]),
            u32::from_le_bytes([l0, l1, l2, l3]),
        ))
    }
}

/// A guest store of `bytes` to its own RAM at `gpa`.
fn store(vmm: &mut ToyVmm, gpa: u64, bytes: &[u8]) {
    vmm.ram_mut()
        .write(gpa, bytes)
        .expect("the driver only stores to its own RAM");
}

/// A guest load of `N` bytes from its own RAM at `gpa`.
fn load<const N: usize>(vmm: &ToyVmm, gpa: u64) -> [u8; N] {
    let mut bytes = [0u8; N];
    vmm.ram()
        .read(gpa, &mut bytes)
        .expect("the driver only loads from its own RAM");
    bytes
}

/// `Status` bits by name, e.g. `ACKNOWLEDGE|DRIVER`.
pub fn status_names(value: u32) -> String {
    const NAMES: [(u32, &str); 6] = [
        (status::ACKNOWLEDGE, "ACKNOWLEDGE"),
        (status::DRIVER, "DRIVER"),
        (status::FEATURES_OK, "FEATURES_OK"),
        (status::DRIVER_OK, "DRIVER_OK"),
        (status::DEVICE_NEEDS_RESET, "DEVICE_NEEDS_RESET"),
        (status::FAILED, "FAILED"),
    ];
    let names: Vec<&str> = NAMES
        .iter()
        .filter(|(bit, _)| value & bit != 0)
        .map(|&(_, name)| name)
        .collect();
    if names.is_empty() {
        "0 (reset)".to_string()
    } else {
        names.join("|")
    }
}
