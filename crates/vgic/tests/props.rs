//! Property tests: random guest register traffic never panics and keeps invariants.

#![allow(clippy::needless_range_loop)]

mod common;
use common::*;
use proptest::prelude::*;
use vgic::backends::mem::MemLrs;
use vgic::{GicVersion, SgiReg, Vgic};

#[derive(Debug, Clone)]
enum Op {
    Gicd {
        cpu: usize,
        off: u64,
        size: u8,
        write: bool,
        val: u64,
    },
    Gicr {
        cpu: usize,
        off: u64,
        size: u8,
        write: bool,
        val: u64,
    },
    Sgi {
        cpu: usize,
        which: u8,
        val: u64,
    },
    Spi {
        intid: u32,
        level: Option<bool>,
    },
    Ppi {
        cpu: usize,
        intid: u32,
        level: Option<bool>,
    },
    Run {
        cpu: usize,
        acks: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let size = prop_oneof![Just(1u8), Just(2), Just(4), Just(8), Just(3), any::<u8>()];
    let off = prop_oneof![0u64..0x1000, 0u64..0x10000, 0x6000u64..0x8000, any::<u64>()];
    let roff = prop_oneof![0u64..0x80000, 0x10000u64..0x11000, any::<u64>()];
    prop_oneof![
        (0usize..5, off, size.clone(), any::<bool>(), any::<u64>()).prop_map(
            |(cpu, off, size, write, val)| Op::Gicd {
                cpu,
                off,
                size,
                write,
                val
            }
        ),
        (0usize..5, roff, size, any::<bool>(), any::<u64>()).prop_map(
            |(cpu, off, size, write, val)| Op::Gicr {
                cpu,
                off,
                size,
                write,
                val
            }
        ),
        (0usize..5, 0u8..3, any::<u64>()).prop_map(|(cpu, which, val)| Op::Sgi { cpu, which, val }),
        (0u32..1100, proptest::option::of(any::<bool>()))
            .prop_map(|(intid, level)| Op::Spi { intid, level }),
        (0usize..5, 0u32..40, proptest::option::of(any::<bool>()))
            .prop_map(|(cpu, intid, level)| Op::Ppi { cpu, intid, level }),
        (0usize..5, 0u8..4).prop_map(|(cpu, acks)| Op::Run { cpu, acks }),
    ]
}

fn apply(v: &mut Vgic, lrs: &mut [MemLrs], op: &Op) {
    match *op {
        Op::Gicd {
            cpu,
            off,
            size,
            write,
            val,
        } => {
            if write {
                let _ = v.gicd_write(cpu, off, size, val);
            } else {
                let _ = v.gicd_read(cpu, off, size);
            }
        }
        Op::Gicr {
            cpu,
            off,
            size,
            write,
            val,
        } => {
            if write {
                let _ = v.gicr_write(cpu, off, size, val);
            } else {
                let _ = v.gicr_read(cpu, off, size);
            }
        }
        Op::Sgi { cpu, which, val } => {
            let which = [SgiReg::Sgi1r, SgiReg::Asgi1r, SgiReg::Sgi0r][which as usize];
            let _ = v.write_sgi_sysreg(cpu, which, val);
        }
        Op::Spi { intid, level } => {
            let _ = match level {
                Some(l) => v.set_spi_level(intid, l),
                None => v.pulse_spi(intid),
            };
        }
        Op::Ppi { cpu, intid, level } => {
            let _ = match level {
                Some(l) => v.set_ppi_level(cpu, intid, l),
                None => v.pulse_ppi(cpu, intid),
            };
        }
        Op::Run { cpu, acks } => {
            let Some(l) = lrs.get_mut(cpu) else {
                let _ = v.flush(cpu, &mut MemLrs::new(2));
                return;
            };
            v.flush(cpu, l).unwrap();
            check_lrs(v, l);
            for _ in 0..acks {
                if let Some(id) = l.guest_ack() {
                    l.guest_eoi(id);
                }
            }
            v.sync(cpu, l).unwrap();
            assert!(v.used_lrs(cpu) <= 3);
        }
    }
}

/// Lowers every line and clears every pending/active bit: afterwards flush/sync must be
/// back on the zero-access fast path.
fn quiesce(v: &mut Vgic, lrs: &mut [MemLrs]) {
    for i in 32..v.nr_irqs() {
        v.set_spi_level(i, false).unwrap();
    }
    for c in 0..4 {
        for i in 16..32 {
            v.set_ppi_level(c, i, false).unwrap();
        }
        for w in 0..32u64 {
            v.gicd_write(c, 0x280 + w * 4, 4, 0xffff_ffff).unwrap();
            v.gicd_write(c, 0x380 + w * 4, 4, 0xffff_ffff).unwrap();
        }
        match v.version() {
            GicVersion::V2 => {
                for w in 0..4u64 {
                    v.gicd_write(c, 0xf10 + w * 4, 4, 0xffff_ffff).unwrap();
                }
            }
            GicVersion::V3 => {
                let b = c as u64 * vgic::GICR_FRAME_SIZE + vgic::GICR_SGI_BASE;
                v.gicr_write(c, b + 0x280, 4, 0xffff_ffff).unwrap();
                v.gicr_write(c, b + 0x380, 4, 0xffff_ffff).unwrap();
            }
        }
    }
    for c in 0..4 {
        v.flush(c, &mut lrs[c]).unwrap();
        v.sync(c, &mut lrs[c]).unwrap();
        v.flush(c, &mut lrs[c]).unwrap();
        v.sync(c, &mut lrs[c]).unwrap();
        lrs[c].reset_counters();
        v.flush(c, &mut lrs[c]).unwrap();
        v.sync(c, &mut lrs[c]).unwrap();
        assert_eq!(lrs[c].accesses(), 0, "fast path after quiescing vCPU {c}");
        assert_eq!(lrs[c].valid().count(), 0);
    }
}

/// No two valid LRs hold the same (INTID, source); at most `num_lrs` are used.
fn check_lrs(v: &Vgic, l: &MemLrs) {
    let valid: Vec<_> = l.valid().collect();
    for (i, a) in valid.iter().enumerate() {
        for b in &valid[i + 1..] {
            assert!(
                !(a.vintid == b.vintid && a.source_cpu == b.source_cpu),
                "duplicate LR {a:?}"
            );
        }
        assert!(a.vintid < v.nr_irqs());
        assert_eq!(a.priority & 7, 0);
    }
}

fn run(version: GicVersion, ops: &[Op]) {
    let mut v = match version {
        GicVersion::V2 => v2(4),
        GicVersion::V3 => v3(4),
    };
    let mut lrs: Vec<MemLrs> = (0..4).map(|_| MemLrs::new(3)).collect();
    for (c, l) in lrs.iter_mut().enumerate() {
        v.vcpu_load(c, l).unwrap();
    }
    for op in ops {
        apply(&mut v, &mut lrs, op);
        let kicks = v.take_kicks();
        assert!(kicks.iter().all(|k| k < 4));
    }
    // Invariants visible through the registers.
    for c in 0..4 {
        for n in 0..(v.nr_irqs() / 4) {
            let p = v.gicd_read(c, 0x400 + u64::from(n) * 4, 4).unwrap();
            assert_eq!(p & 0x0707_0707, 0, "only 5 priority bits");
        }
        let cfg0 = match version {
            GicVersion::V2 => v.gicd_read(c, 0xc00, 4).unwrap(),
            GicVersion::V3 => v
                .gicr_read(
                    c,
                    c as u64 * vgic::GICR_FRAME_SIZE + vgic::GICR_SGI_BASE + 0xc00,
                    4,
                )
                .unwrap(),
        };
        assert_eq!(cfg0, 0xaaaa_aaaa, "SGIs stay edge");
    }
    // Drain: with everything acknowledged, the fast path returns.
    for _ in 0..64 {
        for c in 0..4 {
            v.flush(c, &mut lrs[c]).unwrap();
            while let Some(id) = lrs[c].guest_ack() {
                lrs[c].guest_eoi(id);
            }
            v.sync(c, &mut lrs[c]).unwrap();
        }
    }
    quiesce(&mut v, &mut lrs);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn v2_random_traffic(ops in proptest::collection::vec(op(), 0..200)) {
        run(GicVersion::V2, &ops);
    }

    #[test]
    fn v3_random_traffic(ops in proptest::collection::vec(op(), 0..200)) {
        run(GicVersion::V3, &ops);
    }
}
