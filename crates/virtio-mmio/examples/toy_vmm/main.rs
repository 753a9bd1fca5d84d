//! A toy VMM embedding `virtio-mmio`: guest RAM is a host `Vec` behind the crate's
//! `GuestMemory` trait, a disk in another `Vec` is the `BlockBackend` of a virtio-blk device,
//! and the device's register window is a `VirtioMmio` transport that the host's MMIO trap
//! dispatch forwards to (`host.rs`).
//!
//! There is no guest CPU: `driver.rs` plays the guest driver by hand. It probes the device,
//! negotiates features, lays out a split virtqueue in guest RAM, reads, writes and flushes
//! sectors, and posts one malformed chain, which must put the device into
//! `DEVICE_NEEDS_RESET` (not panic). Every step is checked; a failed check panics with what
//! was expected.
//!
//! `cargo run -p virtio-mmio --example toy_vmm`

mod driver;
mod host;

use virtio_mmio::devices::block::{VIRTIO_BLK_F_FLUSH, VIRTIO_BLK_S_OK};
use virtio_mmio::devices::id;
use virtio_mmio::features::{status, VIRTIO_F_VERSION_1};
use virtio_mmio::regs::{
    DEFAULT_VENDOR_ID, INT_CONFIG_CHANGE, INT_USED_BUFFER, MAGIC_VALUE, VERSION,
};

use driver::{status_names, BlkDriver, AVAIL_RING, DESC_TABLE, QUEUE_SIZE, USED_RING};
use host::{HostDisk, ToyVmm, RAM_BASE, RAM_SIZE, VIRTIO_BLK_BASE, VIRTIO_BLK_SPI};

/// Size of the disk in sectors.
const DISK_SECTORS: usize = 16;
/// Sector the host prepares before the guest starts.
const HOST_SECTOR: usize = 0;
/// What the host puts at the start of [`HOST_SECTOR`].
const HOST_TEXT: &[u8] = b"hello from the host disk";
/// Sector the guest writes.
const GUEST_SECTOR: usize = 1;
/// What the guest writes at the start of [`GUEST_SECTOR`].
const GUEST_TEXT: &[u8] = b"written by the guest driver";
/// A descriptor index far outside the [`QUEUE_SIZE`]-entry table.
const BAD_NEXT: u16 = 200;
/// Features the driver wants: VIRTIO 1.x, and flush (the device offers more).
const WANTED_FEATURES: u64 = VIRTIO_F_VERSION_1 | VIRTIO_BLK_F_FLUSH;
/// Bytes the device writes for a one-sector read: the sector and the status byte.
const READ_USED_LEN: u32 = 512 + 1;
/// Bytes the device writes for a write or flush: the status byte.
const STATUS_USED_LEN: u32 = 1;
/// `Status` of a live device.
const LIVE: u32 = status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK | status::DRIVER_OK;

fn main() {
    let mut disk = HostDisk::new(DISK_SECTORS);
    disk.sector_mut(HOST_SECTOR)[..HOST_TEXT.len()].copy_from_slice(HOST_TEXT);
    let mut vmm = ToyVmm::new(disk);
    let mut drv = BlkDriver::new();
    println!(
        "toy-vmm: virtio-blk at {VIRTIO_BLK_BASE:#010x} (SPI {VIRTIO_BLK_SPI}), guest RAM \
         {RAM_BASE:#x}..{:#x}, disk of {DISK_SECTORS} sectors",
        RAM_BASE + RAM_SIZE as u64
    );

    probe(&mut vmm, &drv);
    bring_up(&mut vmm, &mut drv);

    // Read what the host put on the disk.
    let (done, data) = drv
        .read_sector(&mut vmm, HOST_SECTOR as u64)
        .expect("read of the host sector was not returned in the used ring");
    check_done("read", &done, READ_USED_LEN);
    assert!(
        data.starts_with(HOST_TEXT),
        "read returned {:?}, not the host's text",
        String::from_utf8_lossy(&data[..HOST_TEXT.len()])
    );
    println!(
        "request: read sector {HOST_SECTOR} -> used id {} len {}, status OK, data {:?}",
        done.id,
        done.len,
        String::from_utf8_lossy(HOST_TEXT)
    );
    take_used_interrupt(&mut vmm, &drv);

    // Write a sector and check that the host's disk has it.
    let mut sector = [0u8; 512];
    sector[..GUEST_TEXT.len()].copy_from_slice(GUEST_TEXT);
    let done = drv
        .write_sector(&mut vmm, GUEST_SECTOR as u64, &sector)
        .expect("write was not returned in the used ring");
    check_done("write", &done, STATUS_USED_LEN);
    assert_eq!(
        vmm.disk().sector(GUEST_SECTOR),
        &sector[..],
        "the host disk does not hold what the guest wrote"
    );
    println!(
        "request: write sector {GUEST_SECTOR} -> used id {} len {}, status OK, host disk holds {:?}",
        done.id,
        done.len,
        String::from_utf8_lossy(GUEST_TEXT)
    );
    take_used_interrupt(&mut vmm, &drv);

    let done = drv
        .flush(&mut vmm)
        .expect("flush was not returned in the used ring");
    check_done("flush", &done, STATUS_USED_LEN);
    assert_eq!(vmm.disk().flushes(), 1, "the backend was not flushed once");
    println!("request: flush -> status OK, backend flushed once");
    take_used_interrupt(&mut vmm, &drv);

    malformed_chain(&mut vmm, &mut drv);

    // After a reset the device works again, and the disk kept the guest's sector.
    bring_up(&mut vmm, &mut drv);
    let (done, data) = drv
        .read_sector(&mut vmm, GUEST_SECTOR as u64)
        .expect("read after reset was not returned in the used ring");
    check_done("read after reset", &done, READ_USED_LEN);
    assert!(
        data.starts_with(GUEST_TEXT),
        "read after reset returned other data than the guest wrote"
    );
    println!(
        "request: read sector {GUEST_SECTOR} after reset -> status OK, data {:?}",
        String::from_utf8_lossy(GUEST_TEXT)
    );
    take_used_interrupt(&mut vmm, &drv);

    println!(
        "toy-vmm: all checks passed ({} interrupts delivered, {} warning logged)",
        vmm.blk().interrupt_line().rising_edges(),
        vmm.warnings().len()
    );
}

/// Reads and checks the identification registers.
fn probe(vmm: &mut ToyVmm, drv: &BlkDriver) {
    let p = drv.probe(vmm);
    assert_eq!(p.magic, MAGIC_VALUE, "MagicValue is not \"virt\"");
    assert_eq!(p.version, VERSION, "not a virtio-mmio version 2 device");
    assert_eq!(p.device_id, id::BLOCK, "DeviceID is not virtio-blk");
    assert_eq!(p.vendor_id, DEFAULT_VENDOR_ID, "unexpected VendorID");
    println!(
        "probe: MagicValue {:#010x} ({:?}), Version {}, DeviceID {} (block), VendorID {:#010x}",
        p.magic,
        String::from_utf8_lossy(&p.magic.to_le_bytes()),
        p.version,
        p.device_id,
        p.vendor_id
    );
}

/// Resets the device, negotiates features, sets up the request queue and sets `DRIVER_OK`.
fn bring_up(vmm: &mut ToyVmm, drv: &mut BlkDriver) {
    let offered = drv.device_features(vmm);
    let accepted = drv
        .negotiate(vmm, WANTED_FEATURES)
        .unwrap_or_else(|st| panic!("FEATURES_OK refused, Status {}", status_names(st)));
    assert_eq!(
        accepted, WANTED_FEATURES,
        "the device does not offer VERSION_1 and FLUSH"
    );
    let capacity = drv.capacity(vmm);
    assert_eq!(
        capacity, DISK_SECTORS as u64,
        "wrong capacity in the config space"
    );
    let max = drv.setup_queue(vmm);
    assert!(
        max >= u32::from(QUEUE_SIZE),
        "QueueNumMax {max} below {QUEUE_SIZE}"
    );
    drv.driver_ok(vmm);
    let st = drv.status(vmm);
    assert_eq!(st, LIVE, "Status after bring-up is {}", status_names(st));
    println!(
        "bring-up: offered {offered:#x}, accepted {accepted:#x} (VERSION_1|FLUSH), capacity \
         {capacity} sectors, queue 0 of {QUEUE_SIZE}/{max} entries (desc {DESC_TABLE:#x}, \
         avail {AVAIL_RING:#x}, used {USED_RING:#x}), Status {}",
        status_names(st)
    );
}

/// Checks that a request completed with `VIRTIO_BLK_S_OK` and `used_len` bytes written.
fn check_done(what: &str, done: &driver::Completion, used_len: u32) {
    assert_eq!(done.status, VIRTIO_BLK_S_OK, "{what}: status byte not OK");
    assert_eq!(done.len, used_len, "{what}: wrong used length");
}

/// Checks that a used-buffer interrupt is pending with the line high, and acknowledges it.
fn take_used_interrupt(vmm: &mut ToyVmm, drv: &BlkDriver) {
    let isr = drv.interrupt_status(vmm);
    assert_eq!(
        isr, INT_USED_BUFFER,
        "InterruptStatus is not \"used buffer\""
    );
    assert!(vmm.blk().interrupt_line().level(), "interrupt line is low");
    drv.ack_interrupt(vmm, isr);
    assert!(
        !vmm.blk().interrupt_line().level(),
        "interrupt line still high after InterruptACK"
    );
    println!(
        "    interrupt: InterruptStatus {isr:#x} (used buffer), line high; acknowledged, line low"
    );
}

/// Posts a chain whose `next` index is outside the table: the device must refuse it with
/// `DEVICE_NEEDS_RESET` and a configuration-change interrupt, use nothing, and reset cleanly.
fn malformed_chain(vmm: &mut ToyVmm, drv: &mut BlkDriver) {
    let used_before = drv.used_idx(vmm);
    let warnings_before = vmm.warnings().len();
    println!("request: malformed chain, next = {BAD_NEXT} in a table of {QUEUE_SIZE} descriptors");
    drv.post_malformed(vmm, BAD_NEXT);

    let st = drv.status(vmm);
    assert_eq!(
        st,
        LIVE | status::DEVICE_NEEDS_RESET,
        "Status after a malformed chain is {}",
        status_names(st)
    );
    assert_eq!(
        drv.used_idx(vmm),
        used_before,
        "the device used a malformed chain"
    );
    assert_eq!(
        vmm.warnings().len(),
        warnings_before + 1,
        "the host did not log the malformed chain once"
    );
    let isr = drv.interrupt_status(vmm);
    assert_eq!(
        isr, INT_CONFIG_CHANGE,
        "InterruptStatus is not \"configuration change\""
    );
    assert!(vmm.blk().interrupt_line().level(), "interrupt line is low");
    println!(
        "    -> Status {}, nothing used, InterruptStatus {isr:#x} (config change)",
        status_names(st)
    );

    drv.reset(vmm);
    let st = drv.status(vmm);
    assert_eq!(st, 0, "Status after reset is {}", status_names(st));
    assert_eq!(
        drv.interrupt_status(vmm),
        0,
        "InterruptStatus survived reset"
    );
    assert!(
        !vmm.blk().interrupt_line().level(),
        "interrupt line still high after reset"
    );
    println!("    driver resets the device: Status 0, InterruptStatus 0, line low");
}

#[cfg(test)]
mod tests {
    /// `cargo test --examples` runs the whole scenario and its checks.
    #[test]
    fn toy_vmm_scenario_passes() {
        super::main();
    }
}
