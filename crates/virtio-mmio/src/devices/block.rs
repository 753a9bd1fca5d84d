//! virtio-blk (device id 2) and the [`BlockBackend`] it serves requests from.

use alloc::vec;
use alloc::vec::Vec;

use super::id;
use crate::device::{read_config_bytes, VirtioDevice};
use crate::error::QueueError;
use crate::mem::GuestMemory;
use crate::queue::{DescriptorChain, Queue};

/// Bytes per sector (fixed by the virtio-blk protocol).
pub const SECTOR_SIZE: usize = 512;

/// `VIRTIO_BLK_F_SEG_MAX`: `seg_max` in the configuration is valid.
pub const VIRTIO_BLK_F_SEG_MAX: u64 = 1 << 2;
/// `VIRTIO_BLK_F_RO`: the device is read-only.
pub const VIRTIO_BLK_F_RO: u64 = 1 << 5;
/// `VIRTIO_BLK_F_BLK_SIZE`: `blk_size` in the configuration is valid.
pub const VIRTIO_BLK_F_BLK_SIZE: u64 = 1 << 6;
/// `VIRTIO_BLK_F_FLUSH`: the device honours `VIRTIO_BLK_T_FLUSH`.
pub const VIRTIO_BLK_F_FLUSH: u64 = 1 << 9;

/// Request type: read sectors.
pub const VIRTIO_BLK_T_IN: u32 = 0;
/// Request type: write sectors.
pub const VIRTIO_BLK_T_OUT: u32 = 1;
/// Request type: flush the write cache.
pub const VIRTIO_BLK_T_FLUSH: u32 = 4;
/// Request type: read the device id string (20 bytes).
pub const VIRTIO_BLK_T_GET_ID: u32 = 8;

/// Status: success.
pub const VIRTIO_BLK_S_OK: u8 = 0;
/// Status: I/O error (including out-of-range sectors and writes to a read-only disk).
pub const VIRTIO_BLK_S_IOERR: u8 = 1;
/// Status: unsupported request type.
pub const VIRTIO_BLK_S_UNSUPP: u8 = 2;

/// Length of the id string returned by `VIRTIO_BLK_T_GET_ID`.
pub const ID_BYTES: usize = 20;

/// Bytes moved between guest memory and the backend at a time.
const CHUNK_SECTORS: usize = 128;

/// A backend failure (the device answers `VIRTIO_BLK_S_IOERR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockError;

/// Storage behind a virtio-blk device, in 512-byte sectors.
pub trait BlockBackend {
    /// Size in sectors.
    fn capacity_sectors(&self) -> u64;
    /// Reads `buf.len() / 512` sectors from `sector`. `buf.len()` is a multiple of 512 and
    /// the range is inside the capacity.
    fn read(&mut self, sector: u64, buf: &mut [u8]) -> Result<(), BlockError>;
    /// Writes `buf.len() / 512` sectors at `sector` (same guarantees as `read`).
    fn write(&mut self, sector: u64, buf: &[u8]) -> Result<(), BlockError>;
    /// Makes completed writes durable.
    fn flush(&mut self) -> Result<(), BlockError>;
    /// Whether writes are refused.
    fn read_only(&self) -> bool;
}

/// A disk held in memory: a byte vector by default, or any storage the embedder provides
/// (`S`, e.g. memory it allocated itself, such as an image copied out of a VM package).
/// Its capacity is the storage's whole 512-byte sectors; requests beyond it fail
/// (`VIRTIO_BLK_S_IOERR`).
#[derive(Clone, Debug)]
pub struct RamDisk<S = Vec<u8>> {
    data: S,
    read_only: bool,
}

impl RamDisk {
    /// A zeroed disk of `sectors` sectors.
    pub fn new(sectors: u64) -> Self {
        Self::from_image(vec![0; sectors as usize * SECTOR_SIZE])
    }

    /// A disk holding `image`, rounded down to whole sectors.
    pub fn from_image(mut image: Vec<u8>) -> Self {
        image.truncate(image.len() / SECTOR_SIZE * SECTOR_SIZE);
        Self::from_storage(image)
    }
}

impl<S: AsRef<[u8]> + AsMut<[u8]>> RamDisk<S> {
    /// A disk over `storage`, whose whole sectors it serves (a partial last sector is
    /// unused: pad the storage with zeros to round an image up).
    pub fn from_storage(storage: S) -> Self {
        Self {
            data: storage,
            read_only: false,
        }
    }

    /// Makes the disk read-only.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// The disk contents (whole sectors).
    pub fn image(&self) -> &[u8] {
        let d = self.data.as_ref();
        &d[..d.len() / SECTOR_SIZE * SECTOR_SIZE]
    }

    fn span(&self, sector: u64, len: usize) -> Result<core::ops::Range<usize>, BlockError> {
        let start = usize::try_from(sector)
            .ok()
            .and_then(|s| s.checked_mul(SECTOR_SIZE))
            .ok_or(BlockError)?;
        let end = start.checked_add(len).ok_or(BlockError)?;
        if end > self.image().len() {
            return Err(BlockError);
        }
        Ok(start..end)
    }
}

impl<S: AsRef<[u8]> + AsMut<[u8]>> BlockBackend for RamDisk<S> {
    fn capacity_sectors(&self) -> u64 {
        (self.data.as_ref().len() / SECTOR_SIZE) as u64
    }

    fn read(&mut self, sector: u64, buf: &mut [u8]) -> Result<(), BlockError> {
        let r = self.span(sector, buf.len())?;
        buf.copy_from_slice(&self.data.as_ref()[r]);
        Ok(())
    }

    fn write(&mut self, sector: u64, buf: &[u8]) -> Result<(), BlockError> {
        if self.read_only {
            return Err(BlockError);
        }
        let r = self.span(sector, buf.len())?;
        self.data.as_mut()[r].copy_from_slice(buf);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), BlockError> {
        Ok(())
    }

    fn read_only(&self) -> bool {
        self.read_only
    }
}

/// A virtio block device with one request queue.
pub struct BlockDevice<B> {
    backend: B,
    id: [u8; ID_BYTES],
    queue_size: u16,
}

impl<B: BlockBackend> BlockDevice<B> {
    /// A device serving `backend`, with id string `id` (truncated to 20 bytes).
    pub fn new(backend: B, id: &str) -> Self {
        let mut id_bytes = [0u8; ID_BYTES];
        let n = core::cmp::min(id.len(), ID_BYTES);
        id_bytes[..n].copy_from_slice(&id.as_bytes()[..n]);
        Self {
            backend,
            id: id_bytes,
            queue_size: 128,
        }
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The backend, mutable.
    pub fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    /// Largest number of data segments per request (`seg_max`): the queue size less the
    /// header and status descriptors.
    fn seg_max(&self) -> u32 {
        u32::from(self.queue_size) - 2
    }

    fn config(&self) -> [u8; 24] {
        let mut c = [0u8; 24];
        c[0..8].copy_from_slice(&self.backend.capacity_sectors().to_le_bytes());
        // size_max (8) not offered; seg_max at 12; geometry (16) not offered; blk_size at 20.
        c[12..16].copy_from_slice(&self.seg_max().to_le_bytes());
        c[20..24].copy_from_slice(&(SECTOR_SIZE as u32).to_le_bytes());
        c
    }

    /// Serves one request; returns the bytes written into the chain (data + status).
    fn request(
        &mut self,
        chain: &DescriptorChain,
        mem: &mut dyn GuestMemory,
    ) -> Result<u32, QueueError> {
        let mut header = [0u8; 16];
        let mut r = chain.reader();
        if !r.read_exact(mem, &mut header)? {
            return Err(QueueError::BadRequest(
                "block request header shorter than 16 bytes",
            ));
        }
        let kind = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let sector = u64::from_le_bytes([
            header[8], header[9], header[10], header[11], header[12], header[13], header[14],
            header[15],
        ]);
        let writable = chain.writable_len();
        if writable == 0 {
            return Err(QueueError::BadRequest(
                "block request without a status byte",
            ));
        }
        // The status byte is the last writable byte; data goes before it.
        let data_in = writable - 1;
        let mut w = chain.writer();
        let status = match kind {
            VIRTIO_BLK_T_IN => self.read_sectors(sector, data_in, &mut w, mem)?,
            VIRTIO_BLK_T_OUT => self.write_sectors(sector, &mut r, mem)?,
            VIRTIO_BLK_T_FLUSH => match self.backend.flush() {
                Ok(()) => VIRTIO_BLK_S_OK,
                Err(BlockError) => VIRTIO_BLK_S_IOERR,
            },
            VIRTIO_BLK_T_GET_ID => {
                let n = core::cmp::min(data_in, ID_BYTES as u64) as usize;
                w.write(mem, &self.id[..n])?;
                VIRTIO_BLK_S_OK
            }
            _ => VIRTIO_BLK_S_UNSUPP,
        };
        w.skip(data_in - u64::from(w.written()));
        w.write(mem, &[status])?;
        Ok(w.written())
    }

    fn check_range(&self, sector: u64, bytes: u64) -> bool {
        bytes.is_multiple_of(SECTOR_SIZE as u64)
            && sector
                .checked_add(bytes / SECTOR_SIZE as u64)
                .is_some_and(|end| end <= self.backend.capacity_sectors())
    }

    fn read_sectors(
        &mut self,
        sector: u64,
        len: u64,
        w: &mut crate::queue::ChainWriter<'_>,
        mem: &mut dyn GuestMemory,
    ) -> Result<u8, QueueError> {
        if !self.check_range(sector, len) {
            return Ok(VIRTIO_BLK_S_IOERR);
        }
        let mut buf = vec![0u8; core::cmp::min(len as usize, CHUNK_SECTORS * SECTOR_SIZE)];
        let mut done = 0u64;
        while done < len {
            let n = core::cmp::min(buf.len() as u64, len - done) as usize;
            let s = sector + done / SECTOR_SIZE as u64;
            if self.backend.read(s, &mut buf[..n]).is_err() {
                return Ok(VIRTIO_BLK_S_IOERR);
            }
            w.write(mem, &buf[..n])?;
            done += n as u64;
        }
        Ok(VIRTIO_BLK_S_OK)
    }

    fn write_sectors(
        &mut self,
        sector: u64,
        r: &mut crate::queue::ChainReader<'_>,
        mem: &mut dyn GuestMemory,
    ) -> Result<u8, QueueError> {
        let len = r.remaining();
        if self.backend.read_only() || !self.check_range(sector, len) {
            return Ok(VIRTIO_BLK_S_IOERR);
        }
        let mut buf = vec![0u8; core::cmp::min(len as usize, CHUNK_SECTORS * SECTOR_SIZE)];
        let mut done = 0u64;
        while done < len {
            let n = r.read(mem, &mut buf)?;
            if n == 0 {
                break;
            }
            let s = sector + done / SECTOR_SIZE as u64;
            if self.backend.write(s, &buf[..n]).is_err() {
                return Ok(VIRTIO_BLK_S_IOERR);
            }
            done += n as u64;
        }
        Ok(VIRTIO_BLK_S_OK)
    }
}

impl<B: BlockBackend> VirtioDevice for BlockDevice<B> {
    fn device_id(&self) -> u32 {
        id::BLOCK
    }

    fn features(&self) -> u64 {
        let ro = if self.backend.read_only() {
            VIRTIO_BLK_F_RO
        } else {
            0
        };
        VIRTIO_BLK_F_SEG_MAX | VIRTIO_BLK_F_BLK_SIZE | VIRTIO_BLK_F_FLUSH | ro
    }

    fn num_queues(&self) -> u16 {
        1
    }

    fn queue_max_size(&self, _queue: u16) -> u16 {
        self.queue_size
    }

    fn read_config(&self, offset: u64, data: &mut [u8]) {
        read_config_bytes(&self.config(), offset, data);
    }

    fn process_queue(
        &mut self,
        _queue: u16,
        q: &mut Queue,
        mem: &mut dyn GuestMemory,
    ) -> Result<(), QueueError> {
        while let Some(chain) = q.pop(mem)? {
            let len = self.request(&chain, mem)?;
            q.add_used(mem, chain.head, len)?;
        }
        Ok(())
    }
}
