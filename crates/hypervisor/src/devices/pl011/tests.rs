//! Host tests of the PL011 model and the line prefixer.

use super::*;
use alloc::sync::Arc;
use alloc::vec::Vec;
use spin::Mutex;

/// Collects output; clones share the buffer.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>, Arc<Mutex<usize>>);

impl Capture {
    fn text(&self) -> alloc::string::String {
        alloc::string::String::from_utf8_lossy(&self.0.lock()).into_owned()
    }
    fn calls(&self) -> usize {
        *self.1.lock()
    }
}

impl UartOutput for Capture {
    fn write_bytes(&mut self, bytes: &[u8]) {
        self.0.lock().extend_from_slice(bytes);
        *self.1.lock() += 1;
    }
}

const W: AccessSize = AccessSize::Word;

fn uart() -> (Pl011, Capture) {
    let cap = Capture::default();
    (Pl011::new(Box::new(cap.clone())), cap)
}

fn rd(u: &mut Pl011, off: u64) -> u64 {
    u.read_at(off, W).unwrap()
}

fn wr(u: &mut Pl011, off: u64, v: u64) {
    u.write_at(off, W, v).unwrap()
}

#[test]
fn id_registers() {
    let (mut u, _) = uart();
    let ids: Vec<u64> = (0..8).map(|i| rd(&mut u, 0xFE0 + 4 * i)).collect();
    assert_eq!(ids, [0x11, 0x10, 0x14, 0x00, 0x0D, 0xF0, 0x05, 0xB1]);
    // Byte reads work too (Linux's AMBA bus probes with readl; others use readb).
    assert_eq!(u.read_at(0xFF0, AccessSize::Byte).unwrap(), 0x0D);
}

#[test]
fn reset_values() {
    let (mut u, _) = uart();
    assert_eq!(rd(&mut u, regs::FR), 0x90); // TXFE | RXFE
    assert_eq!(rd(&mut u, regs::CR), 0x300);
    assert_eq!(rd(&mut u, regs::IFLS), 0x12);
    assert_eq!(rd(&mut u, regs::RIS), 0);
    assert!(!u.irq_level());
}

#[test]
fn transmit_goes_to_output_and_raises_txris() {
    let (mut u, cap) = uart();
    for b in b"hi\n" {
        wr(&mut u, regs::DR, u64::from(*b) | 0xffff_ff00);
    }
    // 8-bit write to DR (earlycon style).
    u.write_at(regs::DR, AccessSize::Byte, u64::from(b'!'))
        .unwrap();
    assert_eq!(cap.text(), "hi\n!");
    assert_eq!(rd(&mut u, regs::RIS) as u32 & int::TX, int::TX);
    assert!(!u.irq_level(), "masked");
    wr(&mut u, regs::IMSC, u64::from(int::TX));
    assert!(u.irq_level());
    assert_eq!(rd(&mut u, regs::MIS) as u32, int::TX);
    wr(&mut u, regs::ICR, u64::from(int::TX));
    assert!(!u.irq_level());
    assert_eq!(rd(&mut u, regs::MIS), 0);
    // FR never reports busy or full.
    assert_eq!(rd(&mut u, regs::FR) as u32 & (fr::BUSY | fr::TXFF), 0);
}

#[test]
fn receive_without_fifo_is_one_deep() {
    let (mut u, _) = uart();
    wr(&mut u, regs::IMSC, u64::from(int::RX));
    assert!(u.push_rx(b'a'));
    assert!(u.irq_level());
    assert_eq!(
        rd(&mut u, regs::FR) as u32 & (fr::RXFE | fr::RXFF),
        fr::RXFF
    );
    assert!(!u.push_rx(b'b'), "overrun");
    assert_ne!(rd(&mut u, regs::RIS) as u32 & int::OE, 0);
    assert_eq!(rd(&mut u, regs::RSR_ECR) & 0x8, 0x8);
    assert_eq!(rd(&mut u, regs::DR), u64::from(b'a'));
    assert!(!u.irq_level());
    assert_eq!(rd(&mut u, regs::FR) as u32 & fr::RXFE, fr::RXFE);
    // Reading an empty FIFO gives 0.
    assert_eq!(rd(&mut u, regs::DR), 0);
    wr(&mut u, regs::RSR_ECR, 0);
    assert_eq!(rd(&mut u, regs::RSR_ECR), 0);
}

#[test]
fn receive_fifo_sixteen_deep() {
    let (mut u, _) = uart();
    wr(&mut u, regs::LCR_H, 0x70); // 8 bits, FEN
    for i in 0..16u8 {
        assert!(u.push_rx(b'a' + i));
    }
    assert!(!u.can_receive());
    assert!(!u.push_rx(b'x'));
    assert_ne!(rd(&mut u, regs::FR) as u32 & fr::RXFF, 0);
    let got: Vec<u8> = (0..16).map(|_| rd(&mut u, regs::DR) as u8).collect();
    assert_eq!(got, b"abcdefghijklmnop");
    assert_eq!(rd(&mut u, regs::RIS) as u32 & int::RX, 0);
    // Wrap-around.
    for _ in 0..3 {
        for b in b"xyz" {
            assert!(u.push_rx(*b));
        }
        for b in b"xyz" {
            assert_eq!(rd(&mut u, regs::DR), u64::from(*b));
        }
    }
    // Disabling the FIFO empties it.
    u.push_rx(b'q');
    wr(&mut u, regs::LCR_H, 0x60);
    assert_ne!(rd(&mut u, regs::FR) as u32 & fr::RXFE, 0);
}

#[test]
fn loopback() {
    let (mut u, cap) = uart();
    wr(&mut u, regs::CR, 0x381); // UARTEN | TXE | RXE | LBE
    wr(&mut u, regs::DR, u64::from(b'z'));
    assert_eq!(cap.text(), "");
    assert_eq!(rd(&mut u, regs::DR), u64::from(b'z'));
}

#[test]
fn plain_registers_store_and_mask() {
    let (mut u, _) = uart();
    for (off, val, want) in [
        (regs::IBRD, 0xffff_ffff, 0xffff),
        (regs::FBRD, 0xff, 0x3f),
        (regs::LCR_H, 0x1ff, 0xff),
        (regs::CR, 0xf_ffff, 0xffff),
        (regs::IFLS, 0xff, 0x3f),
        (regs::IMSC, 0xffff, 0x7ff),
        (regs::DMACR, 0xff, 0x7),
        (regs::ILPR, 0x1ff, 0xff),
    ] {
        wr(&mut u, off, val);
        assert_eq!(rd(&mut u, off), want, "{off:#x}");
    }
    // 16-bit accesses, as amba-pl011 does by default.
    u.write_at(regs::IBRD, AccessSize::Half, 0x1234).unwrap();
    assert_eq!(u.read_at(regs::IBRD, AccessSize::Half).unwrap(), 0x1234);
    // Upper lanes read as zero; writes there are ignored.
    assert_eq!(u.read_at(regs::IBRD + 2, AccessSize::Half).unwrap(), 0);
    u.write_at(regs::IBRD + 1, AccessSize::Byte, 0x55).unwrap();
    assert_eq!(rd(&mut u, regs::IBRD), 0x1234);
}

static LOGGED: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

fn count_log(_args: core::fmt::Arguments<'_>) {
    LOGGED.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
}

#[test]
fn reserved_offsets_raz_wi_and_logged() {
    let (mut u, _) = uart();
    u.set_log_hook(count_log);
    let before = LOGGED.load(core::sync::atomic::Ordering::Relaxed);
    assert_eq!(rd(&mut u, 0x008), 0);
    assert_eq!(rd(&mut u, 0x04C), 0);
    assert_eq!(rd(&mut u, 0xFDC), 0);
    assert_eq!(rd(&mut u, regs::ICR), 0, "write-only");
    wr(&mut u, 0x100, 5);
    wr(&mut u, regs::FR, 0);
    wr(&mut u, regs::RIS, 0xff);
    wr(&mut u, 0xFE0, 0);
    assert_eq!(rd(&mut u, regs::RIS), 0);
    assert_eq!(rd(&mut u, 0xFE0), 0x11);
    // Exactly the 4 RAZ reads and 4 ignored writes above were logged.
    assert_eq!(
        LOGGED.load(core::sync::atomic::Ordering::Relaxed) - before,
        8
    );
}

#[test]
fn doubleword_access_aborts() {
    let (mut u, _) = uart();
    assert_eq!(
        u.read_at(0, AccessSize::Double),
        Err(MmioError::ExternalAbort)
    );
    assert_eq!(
        u.write_at(0, AccessSize::Double, 0),
        Err(MmioError::ExternalAbort)
    );
}

/// Found by the storm guest (seed 20261124, `max/auto/gic2`, 10^6 operations): a 32-bit
/// load at 0xFE1 returned 0, neither the bytes it addressed (three of PeriphID0, one of
/// PeriphID1) nor an abort.
#[test]
fn reads_spanning_two_registers_abort() {
    let (mut u, _) = uart();
    assert_eq!(u.read_at(0xfe1, W), Err(MmioError::ExternalAbort));
    assert_eq!(
        u.read_at(0xfe3, AccessSize::Half),
        Err(MmioError::ExternalAbort)
    );
    assert_eq!(u.read_at(0xfe4, W), Ok(0x10));
    assert_eq!(u.read_at(0xfe5, AccessSize::Byte), Ok(0));
    assert_eq!(u.read_at(0xfe2, AccessSize::Half), Ok(0));
}

#[test]
fn any_access_is_safe() {
    let (mut u, _) = uart();
    for off in (0..0x1010u64).step_by(1) {
        for size in [AccessSize::Byte, AccessSize::Half, AccessSize::Word] {
            let _ = u.read_at(off, size);
            let _ = u.write_at(off, size, 0xffff_ffff);
        }
    }
    let _ = u.read_at(u64::MAX, W);
    u.reset();
    assert_eq!(rd(&mut u, regs::CR), 0x300);
}

#[test]
fn prefixer_lines() {
    let cap = Capture::default();
    let mut p = LinePrefixer::new("vm1", cap.clone());
    p.write_bytes(b"hello ");
    assert_eq!(cap.text(), "");
    p.write_bytes(b"world\nsecond\r\nthi");
    assert_eq!(cap.text(), "[vm1] hello world\n[vm1] second\r\n");
    assert_eq!(cap.calls(), 2, "one write per line");
    p.flush();
    assert_eq!(cap.text(), "[vm1] hello world\n[vm1] second\r\n[vm1] thi\n");
    p.flush();
    assert_eq!(cap.calls(), 3);
}

#[test]
fn prefixer_breaks_long_lines() {
    let cap = Capture::default();
    let mut p = LinePrefixer::new("a", cap.clone());
    let long = [b'x'; MAX_LINE + 10];
    p.write_bytes(&long);
    p.write_bytes(b"\n");
    let text = cap.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].len(), 4 + MAX_LINE);
    assert_eq!(lines[1], "[a] xxxxxxxxxx");
}

#[test]
fn uart_through_prefixer() {
    let cap = Capture::default();
    let mut u = Pl011::new(Box::new(LinePrefixer::new("guest", cap.clone())));
    for b in b"ok\npartial" {
        wr(&mut u, regs::DR, u64::from(*b));
    }
    assert_eq!(cap.text(), "[guest] ok\n");
    u.flush_output();
    assert_eq!(cap.text(), "[guest] ok\n[guest] partial\n");
}

#[test]
fn through_the_mmio_bus_with_real_syndromes() {
    use el2_core::exit::{decode, Exit, ExitInfo};
    use el2_core::mmio::{MmioAccess, MmioBus, MmioCaller, MmioEvents, MmioOutcome};
    /// Records the line changes the UART reports.
    #[derive(Default)]
    struct Lines(Vec<(u32, bool)>);
    impl MmioEvents for Lines {
        fn set_irq_level(&mut self, intid: u32, level: bool) {
            self.0.push((intid, level));
        }
    }
    let cap = Capture::default();
    let mut bus = MmioBus::new();
    let mut uart = Pl011::new(Box::new(cap.clone()));
    uart.set_irq(33);
    bus.add(0x0900_0000, 0x1000, "uart0", Box::new(uart))
        .unwrap();
    let mut lines = Lines::default();
    let mut caller = MmioCaller {
        vcpu: 0,
        events: &mut lines,
    };
    let access = |esr: u64, ipa: u64| {
        let info = ExitInfo {
            esr,
            far: ipa & 0xfff,
            hpfar: (ipa >> 12) << 4,
        };
        let Exit::DataAbort(da) = decode(&info) else {
            panic!()
        };
        MmioAccess::from_abort(&da).unwrap()
    };
    // ldr w1, [x0] at FR (0x18): ESR 0x9381_0006 -> TXFE | RXFE.
    assert_eq!(
        bus.dispatch(&access(0x9381_0006, 0x0900_0018), 0, &mut caller),
        MmioOutcome::Read(0x90)
    );
    // strb w2, [x0] at DR: SAS 0, SRT 2 (0x0002_0000), WnR (0x40): 0x9302_0046.
    assert_eq!(
        bus.dispatch(
            &access(0x9302_0046, 0x0900_0000),
            u64::from(b'A'),
            &mut caller
        ),
        MmioOutcome::WriteDone
    );
    assert_eq!(cap.text(), "A");
    // ldr x1, [x0] (64-bit: SAS 3, SF): the UART refuses -> external abort to inject.
    assert!(matches!(
        bus.dispatch(&access(0x93C1_8006, 0x0900_0000), 0, &mut caller),
        MmioOutcome::DeviceError {
            device: "uart0",
            ..
        }
    ));
    // Unmasking TX (IMSC, 0x38) after the transmit raised TXRIS: the line goes high once;
    // clearing it (ICR, 0x44) lowers it. str w2, [x0]: 0x9382_0046.
    bus.dispatch(&access(0x9382_0046, 0x0900_0038), 0x20, &mut caller);
    bus.dispatch(&access(0x9382_0046, 0x0900_0038), 0x20, &mut caller);
    bus.dispatch(&access(0x9382_0046, 0x0900_0044), 0x20, &mut caller);
    assert_eq!(lines.0, [(33, true), (33, false)]);
}
