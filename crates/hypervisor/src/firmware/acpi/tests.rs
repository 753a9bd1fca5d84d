//! ACPI tables built in memory (the identity handler reads them at their host addresses):
//! the machine QEMU's `virt` describes, in both GIC flavours, and broken tables.

use super::*;

/// A table: header with `sig`, then `body`; checksum fixed.
fn sdt(sig: &[u8; 4], revision: u8, oem: &[u8; 6], body: &[u8]) -> Vec<u8> {
    let len = 36 + body.len();
    let mut t = Vec::with_capacity(len);
    t.extend_from_slice(sig);
    t.extend_from_slice(&(len as u32).to_le_bytes());
    t.push(revision);
    t.push(0); // checksum
    t.extend_from_slice(oem);
    t.extend_from_slice(b"TESTTABL");
    t.extend_from_slice(&1u32.to_le_bytes());
    t.extend_from_slice(b"TEST");
    t.extend_from_slice(&1u32.to_le_bytes());
    t.extend_from_slice(body);
    fix_checksum(&mut t, 9);
    t
}

fn fix_checksum(t: &mut [u8], at: usize) {
    t[at] = 0;
    let sum = t.iter().fold(0u8, |s, &b| s.wrapping_add(b));
    t[at] = 0u8.wrapping_sub(sum);
}

fn gicc(mpidr: u64, enabled: bool, gicc: u64, gicv: u64, gich: u64, gicr: u64) -> Vec<u8> {
    let mut e = vec![0xb, 80, 0, 0];
    e.extend_from_slice(&0u32.to_le_bytes()); // CPU interface number
    e.extend_from_slice(&0u32.to_le_bytes()); // UID
    e.extend_from_slice(&u32::from(enabled).to_le_bytes()); // flags
    e.extend_from_slice(&0u32.to_le_bytes()); // parking version
    e.extend_from_slice(&23u32.to_le_bytes()); // PMU GSIV
    e.extend_from_slice(&0u64.to_le_bytes()); // parked address
    e.extend_from_slice(&gicc.to_le_bytes());
    e.extend_from_slice(&gicv.to_le_bytes());
    e.extend_from_slice(&gich.to_le_bytes());
    e.extend_from_slice(&25u32.to_le_bytes()); // VGIC maintenance
    e.extend_from_slice(&gicr.to_le_bytes());
    e.extend_from_slice(&mpidr.to_le_bytes());
    e.extend_from_slice(&[0, 0, 0, 0]); // efficiency, reserved, SPE
    assert_eq!(e.len(), 80);
    e
}

fn gicd(base: u64, version: u8) -> Vec<u8> {
    let mut e = vec![0xc, 24, 0, 0];
    e.extend_from_slice(&0u32.to_le_bytes());
    e.extend_from_slice(&base.to_le_bytes());
    e.extend_from_slice(&0u32.to_le_bytes());
    e.extend_from_slice(&[version, 0, 0, 0]);
    e
}

fn gicr(base: u64, len: u32) -> Vec<u8> {
    let mut e = vec![0xe, 16, 0, 0];
    e.extend_from_slice(&base.to_le_bytes());
    e.extend_from_slice(&len.to_le_bytes());
    e
}

fn its(base: u64) -> Vec<u8> {
    let mut e = vec![0xf, 20, 0, 0];
    e.extend_from_slice(&0u32.to_le_bytes());
    e.extend_from_slice(&base.to_le_bytes());
    e.extend_from_slice(&0u32.to_le_bytes());
    e
}

fn madt(entries: &[Vec<u8>], oem: &[u8; 6]) -> Vec<u8> {
    let mut body = vec![0; 8]; // local interrupt controller address, flags
    for e in entries {
        body.extend_from_slice(e);
    }
    sdt(b"APIC", 4, oem, &body)
}

fn gtdt() -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&u64::MAX.to_le_bytes()); // CntControlBase
    body.extend_from_slice(&0u32.to_le_bytes());
    for gsiv in [29u32, 30, 27, 26] {
        body.extend_from_slice(&gsiv.to_le_bytes());
        body.extend_from_slice(&0u32.to_le_bytes());
    }
    body.extend_from_slice(&u64::MAX.to_le_bytes()); // CntReadBase
    body.extend_from_slice(&[0; 8]); // platform timers
    sdt(b"GTDT", 2, b"TESTOE", &body)
}

fn spcr(interface: u8, base: u64, access: u8, gsi: u32) -> Vec<u8> {
    let mut body = vec![interface, 0, 0, 0];
    body.extend_from_slice(&[0, 32, 0, access]); // GAS: memory, 32 bits, offset, access
    body.extend_from_slice(&base.to_le_bytes());
    body.push(0x8); // interrupt type: GIC
    body.push(0); // PC-AT IRQ
    body.extend_from_slice(&gsi.to_le_bytes());
    body.extend_from_slice(&[7, 0, 1, 0, 0, 0]); // baud, parity, stop, flow, terminal, lang
    body.extend_from_slice(&0xffffu16.to_le_bytes());
    body.extend_from_slice(&0xffffu16.to_le_bytes());
    body.extend_from_slice(&[0, 0, 0]);
    body.extend_from_slice(&0u32.to_le_bytes());
    body.push(0);
    body.extend_from_slice(&[0; 4]);
    sdt(b"SPCR", 2, b"TESTOE", &body)
}

fn fadt(psci: bool, hvc: bool) -> Vec<u8> {
    let mut body = vec![0u8; 276 - 36];
    let flags = u16::from(psci) | u16::from(hvc) << 1;
    body[129 - 36..131 - 36].copy_from_slice(&flags.to_le_bytes());
    body[131 - 36] = 5; // minor version
    sdt(b"FACP", 6, b"TESTOE", &body)
}

/// Tables placed in one buffer (8-byte aligned), XSDT and RSDP at the end; returns the
/// buffer (kept alive by the caller) and the RSDP's address.
fn machine(tables: &[Vec<u8>]) -> (Vec<u64>, u64) {
    let mut bytes = Vec::new();
    let mut offsets = Vec::new();
    for t in tables {
        offsets.push(bytes.len());
        bytes.extend_from_slice(t);
        bytes.resize(bytes.len().next_multiple_of(8), 0);
    }
    let xsdt_off = bytes.len();
    let rsdp_off = xsdt_off + (36 + 8 * tables.len()).next_multiple_of(8);
    let mut buf = vec![0u64; (rsdp_off + 40).div_ceil(8)];
    let base = buf.as_ptr() as u64;
    let mut xsdt_body = Vec::new();
    for o in &offsets {
        xsdt_body.extend_from_slice(&(base + *o as u64).to_le_bytes());
    }
    bytes.extend_from_slice(&sdt(b"XSDT", 1, b"TESTOE", &xsdt_body));
    bytes.resize(rsdp_off, 0);
    let mut rsdp = Vec::new();
    rsdp.extend_from_slice(b"RSD PTR ");
    rsdp.push(0);
    rsdp.extend_from_slice(b"TESTOE");
    rsdp.push(2);
    rsdp.extend_from_slice(&0u32.to_le_bytes());
    rsdp.extend_from_slice(&36u32.to_le_bytes());
    rsdp.extend_from_slice(&(base + xsdt_off as u64).to_le_bytes());
    rsdp.extend_from_slice(&[0; 4]);
    let first = rsdp[..20].iter().fold(0u8, |s, &b| s.wrapping_add(b));
    rsdp[8] = 0u8.wrapping_sub(first);
    let all = rsdp.iter().fold(0u8, |s, &b| s.wrapping_add(b));
    rsdp[32] = 0u8.wrapping_sub(all);
    bytes.extend_from_slice(&rsdp);
    // SAFETY: `buf` has at least `bytes.len()` bytes (rsdp_off + 36 < its size).
    unsafe {
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.as_mut_ptr() as *mut u8, bytes.len())
    };
    (buf, base + rsdp_off as u64)
}

#[test]
fn qemu_virt_gicv3_with_its() {
    let m = madt(
        &[
            gicc(0, true, 0, 0, 0, 0),
            gicc(1, true, 0, 0, 0, 0),
            gicc(0x100, false, 0, 0, 0, 0),
            gicd(0x800_0000, 3),
            gicr(0x80a_0000, 0xf6_0000),
            its(0x808_0000),
        ],
        b"BOCHS ",
    );
    let (_buf, rsdp) = machine(&[fadt(true, false), m, gtdt(), spcr(3, 0x900_0000, 1, 33)]);
    let mut info = PlatformInfo::empty();
    // SAFETY: the tables live in `_buf`.
    let s = unsafe { read(rsdp, &mut info) }.unwrap();
    assert!(s.madt && s.gtdt && s.spcr && s.fadt);
    assert_eq!(&s.oem_id, b"BOCHS ");
    assert_eq!(s.its, Some(0x808_0000));
    assert_eq!(s.disabled_cpus, 1);
    assert_eq!(info.cpu_mpidrs(), &[0, 1]);
    assert_eq!(
        info.gic,
        Some(HostGic::V3 {
            dist: Range {
                base: 0x800_0000,
                size: 0x1_0000
            },
            redist: Range {
                base: 0x80a_0000,
                size: 0xf6_0000
            },
        })
    );
    assert_eq!(info.timer_ppis, Some([29, 30, 27, 26]));
    assert_eq!(
        info.uart,
        Some(Range {
            base: 0x900_0000,
            size: 0x1000
        })
    );
    assert_eq!(info.uart_intid, Some(33));
    assert_eq!(info.uart_kind, UartKind::Pl011);
    assert_eq!(info.psci, Some(PsciConduit::Smc));
}

#[test]
fn gicv2_and_a_16550_and_hvc() {
    let m = madt(
        &[
            gicc(0, true, 0x801_0000, 0x804_0000, 0x803_0000, 0),
            gicd(0x800_0000, 2),
        ],
        b"TESTOE",
    );
    let (_buf, rsdp) = machine(&[m, spcr(0x12, 0x1c2_8000, 3, 40), fadt(true, true)]);
    let mut info = PlatformInfo::empty();
    // SAFETY: as above.
    let s = unsafe { read(rsdp, &mut info) }.unwrap();
    assert!(!s.gtdt);
    assert_eq!(info.timer_ppis, None);
    assert_eq!(
        info.gic,
        Some(HostGic::V2 {
            dist: Range {
                base: 0x800_0000,
                size: 0x1000
            },
            cpu: Range {
                base: 0x801_0000,
                size: 0x2000
            },
            hyp: Some(Range {
                base: 0x803_0000,
                size: 0x2000
            }),
            vcpu: Some(Range {
                base: 0x804_0000,
                size: 0x2000
            }),
        })
    );
    assert_eq!(info.uart_kind, UartKind::Ns16550 { shift: 2 });
    assert_eq!(info.psci, Some(PsciConduit::Hvc));
}

#[test]
fn seattle_oem_gets_the_aliased_gic400_windows() {
    let m = madt(
        &[
            gicc(0, true, 0xe112_0000, 0xe116_0000, 0xe114_0000, 0),
            gicd(0xe111_0000, 2),
        ],
        b"AMDINC",
    );
    let (_buf, rsdp) = machine(&[m]);
    let mut info = PlatformInfo::empty();
    // SAFETY: as above.
    unsafe { read(rsdp, &mut info) }.unwrap();
    let Some(HostGic::V2 { cpu, vcpu, .. }) = info.gic else {
        panic!("{:?}", info.gic)
    };
    assert_eq!(
        cpu,
        Range {
            base: 0xe112_f000,
            size: 0x2000
        }
    );
    assert_eq!(
        vcpu,
        Some(Range {
            base: 0xe116_f000,
            size: 0x2000
        })
    );
}

#[test]
fn broken_tables_are_refused_or_ignored() {
    // A MADT with a bad checksum: no MADT.
    let mut m = madt(&[gicd(0x800_0000, 3)], b"TESTOE");
    m[9] ^= 1;
    let (_buf, rsdp) = machine(&[m]);
    let mut info = PlatformInfo::empty();
    // SAFETY: as above.
    assert_eq!(unsafe { read(rsdp, &mut info) }, Err(AcpiProblem::NoMadt));
    // A bad RSDP checksum.
    let (mut buf, rsdp) = machine(&[madt(&[], b"TESTOE")]);
    let off = (rsdp - buf.as_ptr() as u64) as usize;
    // SAFETY: `off + 8` is inside `buf` (the RSDP's checksum byte).
    unsafe { *(buf.as_mut_ptr() as *mut u8).add(off + 8) ^= 0x55 };
    // SAFETY: as above.
    assert_eq!(unsafe { read(rsdp, &mut info) }, Err(AcpiProblem::BadRoot));
    // A GTDT with a bad checksum is ignored; the rest is read.
    let mut g = gtdt();
    g[40] ^= 1;
    let (_buf, rsdp) = machine(&[
        madt(
            &[gicd(0x800_0000, 3), gicr(0x80a_0000, 0x2_0000)],
            b"TESTOE",
        ),
        g,
    ]);
    let mut info = PlatformInfo::empty();
    // SAFETY: as above.
    let s = unsafe { read(rsdp, &mut info) }.unwrap();
    assert!(s.madt && !s.gtdt);
    assert!(matches!(info.gic, Some(HostGic::V3 { .. })));
}
