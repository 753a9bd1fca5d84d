//! Each device model driven through the transport with real rings.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::*;
use virtio_mmio::devices::block::*;
use virtio_mmio::devices::console::{ConsoleDevice, ConsoleOutput};
use virtio_mmio::devices::net::{NetDevice, NET_HDR_LEN};
use virtio_mmio::devices::rng::{EntropyError, EntropySource, RngDevice, XorShiftEntropy};
use virtio_mmio::switch::{Location, SwitchPort, VirtualSwitch};
use virtio_mmio::GuestMemory;

fn put(mem: &mut impl GuestMemory, gpa: u64, bytes: &[u8]) {
    mem.write(gpa, bytes).unwrap();
}

fn get(mem: &impl GuestMemory, gpa: u64, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    mem.read(gpa, &mut b).unwrap();
    b
}

fn blk_header(kind: u32, sector: u64) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[..4].copy_from_slice(&kind.to_le_bytes());
    h[8..].copy_from_slice(&sector.to_le_bytes());
    h
}

const HDR: u64 = DATA;
const BUF: u64 = DATA + 0x1000;
const STATUS: u64 = DATA + 0x100;

/// Sends one block request with `data` (readable for OUT, writable for IN) and returns
/// (used len, status byte).
fn blk_request(
    t: &mut Dev<BlockDevice<RamDisk>>,
    ring: &mut Ring,
    kind: u32,
    sector: u64,
    data_len: u32,
    data_writable: bool,
) -> (u32, u8) {
    put(t.memory_mut(), HDR, &blk_header(kind, sector));
    put(t.memory_mut(), STATUS, &[0xff]);
    let mut bufs = vec![(HDR, 16, false)];
    if data_len > 0 {
        bufs.push((BUF, data_len, data_writable));
    }
    bufs.push((STATUS, 1, true));
    let head = ring.push(t.memory_mut(), &bufs);
    ring.notify(t).unwrap();
    let (id, len) = ring.pop_used(t.memory()).expect("request completed");
    assert_eq!(id, u32::from(head));
    (len, get(t.memory(), STATUS, 1)[0])
}

#[test]
fn block_write_read_flush_get_id() {
    let (mut t, _) = new_dev(BlockDevice::new(RamDisk::new(64), "ramdisk-0"));
    let mut ring = bring_up(&mut t, DEFAULT_FEATURES)[0].clone();
    let pattern: Vec<u8> = (0..1024u32).map(|i| (i * 7 + 3) as u8).collect();
    put(t.memory_mut(), BUF, &pattern);
    assert_eq!(
        blk_request(&mut t, &mut ring, VIRTIO_BLK_T_OUT, 5, 1024, false),
        (1, VIRTIO_BLK_S_OK)
    );
    assert_eq!(
        &t.device().backend().image()[5 * 512..7 * 512],
        &pattern[..]
    );
    put(t.memory_mut(), BUF, &[0u8; 1024]);
    assert_eq!(
        blk_request(&mut t, &mut ring, VIRTIO_BLK_T_IN, 5, 1024, true),
        (1025, VIRTIO_BLK_S_OK)
    );
    assert_eq!(get(t.memory(), BUF, 1024), pattern);
    assert_eq!(
        blk_request(&mut t, &mut ring, VIRTIO_BLK_T_FLUSH, 0, 0, false),
        (1, VIRTIO_BLK_S_OK)
    );
    assert_eq!(
        blk_request(&mut t, &mut ring, VIRTIO_BLK_T_GET_ID, 0, 20, true),
        (21, VIRTIO_BLK_S_OK)
    );
    assert_eq!(&get(t.memory(), BUF, 20)[..10], b"ramdisk-0\0");
}

#[test]
fn block_errors() {
    let (mut t, _) = new_dev(BlockDevice::new(RamDisk::new(8), "x"));
    let mut ring = bring_up(&mut t, DEFAULT_FEATURES)[0].clone();
    // Past the end, partial sector, unknown type.
    assert_eq!(
        blk_request(&mut t, &mut ring, VIRTIO_BLK_T_IN, 7, 1024, true).1,
        VIRTIO_BLK_S_IOERR
    );
    assert_eq!(
        blk_request(&mut t, &mut ring, VIRTIO_BLK_T_OUT, u64::MAX, 512, false).1,
        VIRTIO_BLK_S_IOERR
    );
    assert_eq!(
        blk_request(&mut t, &mut ring, VIRTIO_BLK_T_OUT, 0, 100, false).1,
        VIRTIO_BLK_S_IOERR
    );
    assert_eq!(
        blk_request(&mut t, &mut ring, 99, 0, 0, false).1,
        VIRTIO_BLK_S_UNSUPP
    );
    // Read-only disk.
    let (mut t, _) = new_dev(BlockDevice::new(RamDisk::new(8).read_only(), "ro"));
    assert_ne!(t.device_features() & VIRTIO_BLK_F_RO, 0);
    let mut ring = bring_up(&mut t, DEFAULT_FEATURES)[0].clone();
    assert_eq!(
        blk_request(&mut t, &mut ring, VIRTIO_BLK_T_OUT, 0, 512, false).1,
        VIRTIO_BLK_S_IOERR
    );
    assert_eq!(
        blk_request(&mut t, &mut ring, VIRTIO_BLK_T_IN, 0, 512, true).1,
        VIRTIO_BLK_S_OK
    );
}

/// Storage the embedder owns (the hypervisor copies a package's disk image into its own
/// frames): whole sectors only, contents served as they are, nothing past the end.
struct Frames(Box<[u8]>);

impl AsRef<[u8]> for Frames {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl AsMut<[u8]> for Frames {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

#[test]
fn ram_disk_over_embedder_storage() {
    use virtio_mmio::devices::block::BlockBackend;
    // A 1100-byte image padded to 1536 (3 sectors), plus a stray tail that is not a sector.
    let mut bytes = vec![0u8; 3 * 512 + 100];
    bytes[1024..1028].copy_from_slice(b"MARK");
    let mut disk = RamDisk::from_storage(Frames(bytes.into_boxed_slice()));
    assert_eq!(disk.capacity_sectors(), 3);
    assert_eq!(disk.image().len(), 3 * 512);
    let mut buf = [0u8; 512];
    disk.read(2, &mut buf).unwrap();
    assert_eq!(&buf[..4], b"MARK");
    assert!(disk.read(3, &mut buf).is_err(), "past the end");
    assert!(disk.read(2, &mut [0u8; 1024]).is_err(), "runs past the end");
    disk.write(0, &[7u8; 512]).unwrap();
    assert_eq!(disk.image()[..512], [7u8; 512]);
    let mut ro = RamDisk::from_storage(Frames(vec![0u8; 512].into_boxed_slice())).read_only();
    assert!(ro.write(0, &[1u8; 512]).is_err());
}

#[test]
fn block_request_split_across_descriptors_and_indirect() {
    let (mut t, _) = new_dev(BlockDevice::new(RamDisk::new(8), "x"));
    let mut ring = bring_up(&mut t, DEFAULT_FEATURES)[0].clone();
    let pattern: Vec<u8> = (0..512u32).map(|i| (i ^ 0x5a) as u8).collect();
    put(t.memory_mut(), BUF, &pattern[..200]);
    put(t.memory_mut(), BUF + 0x400, &pattern[200..]);
    let hdr = blk_header(VIRTIO_BLK_T_OUT, 2);
    put(t.memory_mut(), HDR, &hdr[..4]);
    put(t.memory_mut(), HDR + 0x40, &hdr[4..]);
    ring.push_indirect(
        t.memory_mut(),
        RAM_BASE + 0xc000,
        &[
            (HDR, 4, false),
            (HDR + 0x40, 12, false),
            (BUF, 200, false),
            (BUF + 0x400, 312, false),
            (STATUS, 1, true),
        ],
    );
    ring.notify(&mut t).unwrap();
    assert_eq!(ring.pop_used(t.memory()).unwrap().1, 1);
    assert_eq!(get(t.memory(), STATUS, 1)[0], VIRTIO_BLK_S_OK);
    assert_eq!(&t.device().backend().image()[1024..1536], &pattern[..]);
}

#[test]
fn block_request_without_status_needs_reset() {
    let (mut t, _) = new_dev(BlockDevice::new(RamDisk::new(8), "x"));
    let mut ring = bring_up(&mut t, DEFAULT_FEATURES)[0].clone();
    put(t.memory_mut(), HDR, &blk_header(VIRTIO_BLK_T_IN, 0));
    ring.push(t.memory_mut(), &[(HDR, 16, false)]);
    assert!(ring.notify(&mut t).is_err());
    assert_ne!(t.status() & 64, 0);
}

#[derive(Clone, Default)]
struct Sink(Rc<RefCell<Vec<u8>>>);

impl ConsoleOutput for Sink {
    fn write(&mut self, bytes: &[u8]) {
        self.0.borrow_mut().extend_from_slice(bytes);
    }
}

#[test]
fn console_tx_rx_and_emergency_write() {
    let sink = Sink::default();
    let (mut t, irq) = new_dev(ConsoleDevice::new(sink.clone()));
    let mut rings = bring_up(&mut t, DEFAULT_FEATURES);
    put(t.memory_mut(), DATA, b"hello ");
    put(t.memory_mut(), DATA + 0x100, b"hvc0\n");
    rings[1].push(
        t.memory_mut(),
        &[(DATA, 6, false), (DATA + 0x100, 5, false)],
    );
    rings[1].notify(&mut t).unwrap();
    assert_eq!(&*sink.0.borrow(), b"hello hvc0\n");
    assert_eq!(rings[1].pop_used(t.memory()).unwrap().1, 0);
    ack(&mut t);
    // Input arrives before any receive buffer: held, then delivered on notify.
    t.device_mut().push_input(b"typed");
    t.poll().unwrap();
    assert!(!irq.0.get());
    rings[0].push(t.memory_mut(), &[(BUF, 3, true)]);
    rings[0].push(t.memory_mut(), &[(BUF + 0x10, 64, true)]);
    rings[0].notify(&mut t).unwrap();
    assert!(irq.0.get());
    assert_eq!(rings[0].pop_used(t.memory()).unwrap().1, 3);
    assert_eq!(rings[0].pop_used(t.memory()).unwrap().1, 2);
    assert_eq!(get(t.memory(), BUF, 3), b"typ");
    assert_eq!(get(t.memory(), BUF + 0x10, 2), b"ed");
    assert_eq!(t.device().pending_input(), 0);
    // Emergency write through the config space.
    t.write(0x108, 4, u64::from(b'!')).unwrap();
    assert_eq!(sink.0.borrow().last(), Some(&b'!'));
}

fn frame(dst: [u8; 6], src: [u8; 6], payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&[0x88, 0xb5]);
    f.extend_from_slice(payload);
    f
}

type Net = Dev<NetDevice<SwitchPort>>;

fn net_send(t: &mut Net, ring: &mut Ring, f: &[u8]) {
    let mut buf = vec![0u8; NET_HDR_LEN];
    buf.extend_from_slice(f);
    put(t.memory_mut(), DATA, &buf);
    ring.push(
        t.memory_mut(),
        &[
            (DATA, NET_HDR_LEN as u32, false),
            (DATA + NET_HDR_LEN as u64, f.len() as u32, false),
        ],
    );
    ring.notify(t).unwrap();
    assert!(ring.pop_used(t.memory()).is_some());
}

fn net_give_rx(t: &mut Net, ring: &mut Ring, slot: u64) {
    ring.push(t.memory_mut(), &[(BUF + slot * 0x800, 0x800, true)]);
    ring.notify(t).unwrap();
}

fn net_recv(t: &mut Net, ring: &mut Ring) -> Option<Vec<u8>> {
    let (id, len) = ring.pop_used(t.memory())?;
    let mut b = [0u8; 16];
    t.memory()
        .read(ring.desc + 16 * u64::from(id), &mut b)
        .unwrap();
    let d = virtio_mmio::queue::Descriptor::from_bytes(&b);
    let bytes = get(t.memory(), d.addr, len as usize);
    assert_eq!(&bytes[10..12], &[1, 0], "num_buffers = 1");
    Some(bytes[NET_HDR_LEN..].to_vec())
}

const MAC_A: [u8; 6] = [0x52, 0x54, 0, 0, 0, 0xa];
const MAC_B: [u8; 6] = [0x52, 0x54, 0, 0, 0, 0xb];
const MAC_C: [u8; 6] = [0x52, 0x54, 0, 0, 0, 0xc];
const BCAST: [u8; 6] = [0xff; 6];

#[test]
fn net_switch_between_two_vms_learns_and_floods() {
    let sw = VirtualSwitch::default().shared();
    let (mut a, _) = new_dev(NetDevice::new(SwitchPort::attach(&sw), MAC_A));
    let (mut b, irq_b) = new_dev(NetDevice::new(SwitchPort::attach(&sw), MAC_B));
    let (mut c, _) = new_dev(NetDevice::new(SwitchPort::attach(&sw), MAC_C));
    assert_eq!(a.read(0x100, 4).unwrap(), 0x0000_5452);
    assert_eq!(a.read(0x106, 2).unwrap(), 1, "link up");
    let mut ra = bring_up(&mut a, DEFAULT_FEATURES);
    let mut rb = bring_up(&mut b, DEFAULT_FEATURES);
    let mut rc = bring_up(&mut c, DEFAULT_FEATURES);
    net_give_rx(&mut b, &mut rb[0], 0);
    net_give_rx(&mut b, &mut rb[0], 1);
    net_give_rx(&mut c, &mut rc[0], 0);
    net_give_rx(&mut a, &mut ra[0], 0);

    // A broadcasts: B and C get it; A is learnt.
    let hello = frame(BCAST, MAC_A, b"who is there");
    net_send(&mut a, &mut ra[1], &hello);
    assert_eq!(sw.lock().lookup(&MAC_A), Some(Location::Port(0)));
    b.poll().unwrap();
    c.poll().unwrap();
    assert!(irq_b.0.get());
    assert_eq!(net_recv(&mut b, &mut rb[0]), Some(hello.clone()));
    assert_eq!(net_recv(&mut c, &mut rc[0]), Some(hello));
    a.poll().unwrap();
    assert_eq!(net_recv(&mut a, &mut ra[0]), None, "no echo to the sender");

    // B answers A by unicast: only A gets it (A known), and B is learnt.
    let reply = frame(MAC_A, MAC_B, b"B here");
    net_send(&mut b, &mut rb[1], &reply);
    a.poll().unwrap();
    c.poll().unwrap();
    assert_eq!(net_recv(&mut a, &mut ra[0]), Some(reply));
    net_give_rx(&mut c, &mut rc[0], 1);
    assert_eq!(net_recv(&mut c, &mut rc[0]), None);
    assert_eq!(sw.lock().lookup(&MAC_B), Some(Location::Port(1)));
    let st = sw.lock().stats(1).unwrap();
    assert_eq!((st.tx_frames, st.rx_frames), (1, 1));
}

#[test]
fn net_switch_bounded_queue_and_small_buffers() {
    let sw = VirtualSwitch::new(2).shared();
    let (mut a, _) = new_dev(NetDevice::new(SwitchPort::attach(&sw), MAC_A));
    let (mut b, _) = new_dev(NetDevice::new(SwitchPort::attach(&sw), MAC_B));
    let mut ra = bring_up(&mut a, DEFAULT_FEATURES);
    let mut rb = bring_up(&mut b, DEFAULT_FEATURES);
    for i in 0..4u8 {
        net_send(&mut a, &mut ra[1], &frame(BCAST, MAC_A, &[i; 20]));
    }
    assert_eq!(sw.lock().stats(1).unwrap().rx_dropped, 2);
    // A buffer too small for header + frame: the frame is dropped, the buffer returned empty.
    rb[0].push(b.memory_mut(), &[(BUF, 20, true)]);
    rb[0].notify(&mut b).unwrap();
    assert_eq!(rb[0].pop_used(b.memory()).unwrap().1, 0);
    assert_eq!(b.device().dropped_rx(), 1);
    net_give_rx(&mut b, &mut rb[0], 0);
    assert_eq!(net_recv(&mut b, &mut rb[0]).unwrap()[14..], [1u8; 20]);
    // Runt frames from the guest are dropped, not forwarded.
    net_send(&mut a, &mut ra[1], &[0u8; 6]);
    assert_eq!(a.device().dropped_tx(), 1);
}

#[test]
fn net_uplink_gets_floods_and_delivers() {
    use std::sync::{Arc, Mutex};
    #[derive(Default)]
    struct Wire {
        out: Vec<Vec<u8>>,
        inbound: Vec<Vec<u8>>,
    }
    struct Up(Arc<Mutex<Wire>>);
    impl virtio_mmio::switch::Uplink for Up {
        fn transmit(&mut self, f: &[u8]) {
            self.0.lock().unwrap().out.push(f.to_vec());
        }
        fn receive(&mut self) -> Option<Vec<u8>> {
            self.0.lock().unwrap().inbound.pop()
        }
    }
    let wire = Arc::new(Mutex::new(Wire::default()));
    let sw = VirtualSwitch::default().shared();
    sw.lock().set_uplink(Box::new(Up(wire.clone())));
    let (mut a, _) = new_dev(NetDevice::new(SwitchPort::attach(&sw), MAC_A));
    let mut ra = bring_up(&mut a, DEFAULT_FEATURES);
    net_send(&mut a, &mut ra[1], &frame(BCAST, MAC_A, b"dhcp"));
    assert_eq!(wire.lock().unwrap().out.len(), 1);
    let from_outside = frame(MAC_A, MAC_C, b"offer");
    wire.lock().unwrap().inbound.push(from_outside.clone());
    assert_eq!(sw.lock().poll(8), 1);
    assert_eq!(sw.lock().lookup(&MAC_C), Some(Location::Uplink));
    net_give_rx(&mut a, &mut ra[0], 0);
    assert_eq!(net_recv(&mut a, &mut ra[0]), Some(from_outside));
}

#[test]
fn rng_fills_buffers() {
    let (mut t, _) = new_dev(RngDevice::new(XorShiftEntropy::new(42)));
    let mut ring = bring_up(&mut t, DEFAULT_FEATURES)[0].clone();
    ring.push(t.memory_mut(), &[(BUF, 32, true)]);
    ring.notify(&mut t).unwrap();
    assert_eq!(ring.pop_used(t.memory()).unwrap().1, 32);
    let b = get(t.memory(), BUF, 32);
    assert!(b.iter().any(|&x| x != b[0]));

    struct Broken;
    impl EntropySource for Broken {
        fn fill(&mut self, _: &mut [u8]) -> Result<(), EntropyError> {
            Err(EntropyError)
        }
    }
    let (mut t, _) = new_dev(RngDevice::new(Broken));
    let mut ring = bring_up(&mut t, DEFAULT_FEATURES)[0].clone();
    ring.push(t.memory_mut(), &[(BUF, 32, true)]);
    ring.notify(&mut t).unwrap();
    assert_eq!(
        ring.pop_used(t.memory()).unwrap().1,
        0,
        "failure returns no bytes"
    );
}
