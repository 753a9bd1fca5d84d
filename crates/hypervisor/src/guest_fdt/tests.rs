//! Build device trees, parse them back with the `fdt` crate (an independent reader) and check
//! what a guest would see.

use super::*;
use fdt::Fdt;

fn base_config() -> GuestFdtConfig {
    GuestFdtConfig {
        ram_base: 0x4000_0000,
        ram_size: 0x800_0000,
        cpu_mpidrs: vec![0x8000_0000, 0x8000_0001, 0x8000_0100],
        uart: Some(UartNode {
            base: 0x0900_0000,
            size: 0x1000,
            spi: Some(1),
        }),
        gic: Some(GicNode::v2_virt()),
        bootargs: "console=ttyAMA0 earlycon".to_string(),
        initrd: Some((0x4800_0000, 0x4812_3456)),
        virtio_mmio: vec![VirtioMmioNode {
            base: 0x0a00_0000,
            size: 0x200,
            spi: 16,
            mac: None,
        }],
        ..GuestFdtConfig::default()
    }
}

fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn u64_prop(fdt: &Fdt<'_>, path: &str, name: &str) -> u64 {
    let v = fdt.find_node(path).unwrap().property(name).unwrap().value;
    u64::from_be_bytes(v.try_into().unwrap())
}

fn regs(fdt: &Fdt<'_>, path: &str) -> Vec<(usize, Option<usize>)> {
    fdt.find_node(path)
        .unwrap()
        .reg()
        .unwrap()
        .map(|r| (r.starting_address as usize, r.size))
        .collect()
}

#[test]
fn memory_cpus_psci_root() {
    let blob = build(&base_config()).unwrap();
    let fdt = Fdt::new(&blob).unwrap();
    assert_eq!(fdt.root().compatible().first(), "linux,dummy-virt");
    let mem: Vec<_> = fdt
        .memory()
        .regions()
        .map(|r| (r.starting_address as usize, r.size))
        .collect();
    assert_eq!(mem, [(0x4000_0000, Some(0x800_0000))]);
    // reg = MPIDR affinity bits only (bit 31 RES1 dropped).
    let ids: Vec<usize> = fdt.cpus().map(|c| c.ids().first()).collect();
    assert_eq!(ids, [0, 1, 0x100]);
    for cpu in fdt.cpus() {
        assert_eq!(
            cpu.property("enable-method").unwrap().as_str(),
            Some("psci")
        );
        assert_eq!(cpu.property("device_type").unwrap().as_str(), Some("cpu"));
    }
    let psci = fdt.find_node("/psci").unwrap();
    assert_eq!(psci.property("method").unwrap().as_str(), Some("hvc"));
    let compat: Vec<_> = psci.compatible().unwrap().all().collect();
    assert_eq!(compat, ["arm,psci-1.0", "arm,psci-0.2"]);
}

#[test]
fn uart_and_clock() {
    let blob = build(&base_config()).unwrap();
    let fdt = Fdt::new(&blob).unwrap();
    let uart = fdt.find_compatible(&["arm,pl011"]).unwrap();
    assert_eq!(uart.name, "pl011@9000000");
    let compat: Vec<_> = uart.compatible().unwrap().all().collect();
    assert_eq!(compat, ["arm,pl011", "arm,primecell"]);
    assert_eq!(regs(&fdt, "/pl011@9000000"), [(0x0900_0000, Some(0x1000))]);
    assert_eq!(u32s(uart.property("interrupts").unwrap().value), [0, 1, 4]);
    let clocks = u32s(uart.property("clocks").unwrap().value);
    assert_eq!(clocks.len(), 2);
    let clk = fdt.find_phandle(clocks[0]).unwrap();
    assert_eq!(clk.name, "apb-pclk");
    assert_eq!(
        clk.property("clock-frequency").unwrap().as_usize(),
        Some(24_000_000)
    );
    let names: Vec<_> = uart
        .property("clock-names")
        .unwrap()
        .value
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .collect();
    assert_eq!(names, [&b"uartclk"[..], b"apb_pclk"]);
}

#[test]
fn chosen() {
    let blob = build(&base_config()).unwrap();
    let fdt = Fdt::new(&blob).unwrap();
    assert_eq!(fdt.chosen().bootargs(), Some("console=ttyAMA0 earlycon"));
    assert_eq!(fdt.chosen().stdout().unwrap().name, "pl011@9000000");
    assert_eq!(u64_prop(&fdt, "/chosen", "linux,initrd-start"), 0x4800_0000);
    assert_eq!(u64_prop(&fdt, "/chosen", "linux,initrd-end"), 0x4812_3456);

    // Explicit stdout-path, no initrd, no bootargs.
    let cfg = GuestFdtConfig {
        stdout_path: Some("serial0:115200n8".to_string()),
        initrd: None,
        bootargs: String::new(),
        ..base_config()
    };
    let blob = build(&cfg).unwrap();
    let fdt = Fdt::new(&blob).unwrap();
    let chosen = fdt.find_node("/chosen").unwrap();
    assert_eq!(
        chosen.property("stdout-path").unwrap().as_str(),
        Some("serial0:115200n8")
    );
    assert!(chosen.property("linux,initrd-start").is_none());
    assert!(chosen.property("bootargs").is_none());
}

#[test]
fn gic_v2_shape() {
    let blob = build(&base_config()).unwrap();
    let fdt = Fdt::new(&blob).unwrap();
    let gic = fdt.find_node("/intc@8000000").unwrap();
    assert_eq!(gic.compatible().unwrap().first(), "arm,cortex-a15-gic");
    assert!(gic.property("interrupt-controller").is_some());
    assert_eq!(gic.interrupt_cells(), Some(3));
    assert_eq!(
        regs(&fdt, "/intc@8000000"),
        [(0x0800_0000, Some(0x1_0000)), (0x0801_0000, Some(0x1_0000))]
    );
    assert_eq!(u32s(gic.property("interrupts").unwrap().value), [1, 9, 4]);
    // The root's interrupt-parent is the GIC.
    let parent = fdt.root().property("interrupt-parent").unwrap().as_usize();
    assert_eq!(
        fdt.find_phandle(parent.unwrap() as u32).unwrap().name,
        "intc@8000000"
    );
    // Timer: 3 CPUs -> CPU mask 0b111 in bits [15:8], level-low (8).
    let timer = fdt.find_node("/timer").unwrap();
    assert_eq!(
        u32s(timer.property("interrupts").unwrap().value),
        [1, 13, 0x708, 1, 14, 0x708, 1, 11, 0x708, 1, 10, 0x708]
    );
    assert_eq!(timer.compatible().unwrap().first(), "arm,armv8-timer");
}

#[test]
fn gic_v3_shape() {
    let cfg = GuestFdtConfig {
        gic: Some(GicNode::v3_virt(3)),
        ..base_config()
    };
    let blob = build(&cfg).unwrap();
    let fdt = Fdt::new(&blob).unwrap();
    let gic = fdt.find_node("/intc@8000000").unwrap();
    assert_eq!(gic.compatible().unwrap().first(), "arm,gic-v3");
    assert_eq!(
        regs(&fdt, "/intc@8000000"),
        [(0x0800_0000, Some(0x1_0000)), (0x080A_0000, Some(0x6_0000))]
    );
    assert_eq!(
        gic.property("#redistributor-regions").unwrap().as_usize(),
        Some(1)
    );
    assert_eq!(u32s(gic.property("interrupts").unwrap().value), [1, 9, 4]);
    let timer = fdt.find_node("/timer").unwrap();
    assert_eq!(
        u32s(timer.property("interrupts").unwrap().value),
        [1, 13, 8, 1, 14, 8, 1, 11, 8, 1, 10, 8]
    );
}

#[test]
fn no_gic_means_no_timer_and_no_interrupts() {
    let cfg = GuestFdtConfig {
        gic: None,
        ..base_config()
    };
    let blob = build(&cfg).unwrap();
    let fdt = Fdt::new(&blob).unwrap();
    assert!(fdt.find_node("/timer").is_none());
    assert!(fdt.find_node("/intc@8000000").is_none());
    assert!(fdt.root().property("interrupt-parent").is_none());
    let uart = fdt.find_node("/pl011@9000000").unwrap();
    assert!(uart.property("interrupts").is_none());
}

#[test]
fn virtio_mmio_nodes() {
    let blob = build(&base_config()).unwrap();
    let fdt = Fdt::new(&blob).unwrap();
    let dev = fdt.find_compatible(&["virtio,mmio"]).unwrap();
    assert_eq!(dev.name, "virtio_mmio@a000000");
    assert_eq!(
        regs(&fdt, "/virtio_mmio@a000000"),
        [(0x0a00_0000, Some(0x200))]
    );
    assert_eq!(u32s(dev.property("interrupts").unwrap().value), [0, 16, 1]);
    assert!(dev.property("dma-coherent").is_some());
}

#[test]
fn psci_smc_and_aff3_cpus() {
    let cfg = GuestFdtConfig {
        psci: PsciConduit::Smc,
        cpu_mpidrs: vec![0, 0x1_0000_0000],
        uart: None,
        ..base_config()
    };
    let blob = build(&cfg).unwrap();
    let fdt = Fdt::new(&blob).unwrap();
    assert_eq!(
        fdt.find_node("/psci")
            .unwrap()
            .property("method")
            .unwrap()
            .as_str(),
        Some("smc")
    );
    let cpus = fdt.find_node("/cpus").unwrap();
    assert_eq!(cpus.property("#address-cells").unwrap().as_usize(), Some(2));
    let ids: Vec<usize> = fdt.cpus().map(|c| c.ids().first()).collect();
    assert_eq!(ids, [0, 0x1_0000_0000]);
    assert!(fdt.chosen().stdout().is_none());
    assert!(fdt.find_node("/apb-pclk").is_none());
}

#[test]
fn bad_configs_rejected() {
    let no_cpus = GuestFdtConfig {
        cpu_mpidrs: vec![],
        ..base_config()
    };
    assert!(matches!(build(&no_cpus), Err(FdtError::Config(_))));
    let dup = GuestFdtConfig {
        cpu_mpidrs: vec![1, 0x8000_0001],
        ..base_config()
    };
    assert!(matches!(build(&dup), Err(FdtError::Config(_))));
    let no_ram = GuestFdtConfig {
        ram_size: 0,
        ..base_config()
    };
    assert!(matches!(build(&no_ram), Err(FdtError::Config(_))));
    let wrap = GuestFdtConfig {
        ram_base: u64::MAX,
        ..base_config()
    };
    assert!(matches!(build(&wrap), Err(FdtError::Config(_))));
    let initrd = GuestFdtConfig {
        initrd: Some((2, 1)),
        ..base_config()
    };
    assert!(matches!(build(&initrd), Err(FdtError::Config(_))));
}

#[test]
fn armv7_cpus_and_timer() {
    let cfg = GuestFdtConfig {
        armv7: true,
        ..base_config()
    };
    let blob = build(&cfg).unwrap();
    let fdt = Fdt::new(&blob).unwrap();
    let cpu = fdt.find_node("/cpus/cpu@0").unwrap();
    assert_eq!(cpu.compatible().unwrap().first(), "arm,cortex-a15");
    assert_eq!(
        cpu.property("enable-method").unwrap().as_str(),
        Some("psci")
    );
    let timer = fdt.find_node("/timer").unwrap();
    assert_eq!(
        timer.compatible().unwrap().all().collect::<Vec<_>>(),
        ["arm,armv7-timer"]
    );
}
