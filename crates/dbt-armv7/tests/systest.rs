//! System-level test: builds `guests/armv7-systest` for `armv7a-none-eabi`, runs the raw
//! binary in the interpreter with a PL011 model on the bus, and under
//! `qemu-system-arm -M virt -cpu cortex-a15`; both must print the same lines ending in
//! `armv7-systest: PASS`.
//!
//! CI builds the binary the same way: `cargo build -p armv7-systest --release --target
//! armv7a-none-eabi` then `llvm-objcopy -O binary` (from the `llvm-tools` component).

mod common;

use dbt_armv7::{Bus, BusFault, Cpu, Exit};
use std::path::PathBuf;
use std::process::Command;

const RAM_BASE: u64 = 0x4000_0000;
const RAM_SIZE: usize = 128 << 20;
const LOAD: u64 = 0x4001_0000;
const UART: u64 = 0x0900_0000;

/// QEMU `virt`-like bus: RAM at 1 GiB and a PL011 transmit-only model.
struct VirtBus {
    ram: Vec<u8>,
    out: Vec<u8>,
}

impl Bus for VirtBus {
    fn read(&mut self, pa: u64, size: u8) -> Result<u64, BusFault> {
        if (RAM_BASE..RAM_BASE + RAM_SIZE as u64).contains(&pa) {
            let o = (pa - RAM_BASE) as usize;
            let mut b = [0u8; 8];
            b[..size as usize].copy_from_slice(self.ram.get(o..o + size as usize).ok_or(BusFault)?);
            return Ok(u64::from_le_bytes(b));
        }
        if (UART..UART + 0x1000).contains(&pa) {
            return Ok(0); // FR: transmit FIFO never full
        }
        Err(BusFault)
    }

    fn write(&mut self, pa: u64, size: u8, v: u64) -> Result<(), BusFault> {
        if (RAM_BASE..RAM_BASE + RAM_SIZE as u64).contains(&pa) {
            let o = (pa - RAM_BASE) as usize;
            self.ram
                .get_mut(o..o + size as usize)
                .ok_or(BusFault)?
                .copy_from_slice(&v.to_le_bytes()[..size as usize]);
            return Ok(());
        }
        if pa == UART {
            self.out.push(v as u8);
            return Ok(());
        }
        if (UART..UART + 0x1000).contains(&pa) {
            return Ok(());
        }
        Err(BusFault)
    }
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds the test program and returns the raw binary's path.
fn build() -> PathBuf {
    let ws = workspace();
    let tdir = ws.join("target/armv7-systest");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let st = Command::new(cargo)
        .current_dir(&ws)
        .args([
            "build",
            "-q",
            "-p",
            "armv7-systest",
            "--release",
            "--target",
            "armv7a-none-eabi",
        ])
        .env("CARGO_TARGET_DIR", &tdir)
        .status()
        .expect("cargo build armv7-systest");
    assert!(st.success(), "building armv7-systest failed");
    let elf = tdir.join("armv7a-none-eabi/release/armv7-systest");
    let bin = tdir.join("armv7-systest.bin");
    let sysroot = String::from_utf8(
        Command::new("rustc")
            .args(["--print", "sysroot"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let host =
        String::from_utf8(Command::new("rustc").args(["-vV"]).output().unwrap().stdout).unwrap();
    let host = host
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .unwrap()
        .to_string();
    let objcopy =
        PathBuf::from(sysroot.trim()).join(format!("lib/rustlib/{host}/bin/llvm-objcopy"));
    let st = Command::new(&objcopy)
        .args(["-O", "binary"])
        .arg(&elf)
        .arg(&bin)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (rustup component add llvm-tools)",
                objcopy.display()
            )
        });
    assert!(st.success());
    bin
}

fn run_interpreter(bin: &[u8]) -> (String, Vec<u64>, u64) {
    let mut bus = VirtBus {
        ram: vec![0; RAM_SIZE],
        out: Vec::new(),
    };
    let o = (LOAD - RAM_BASE) as usize;
    bus.ram[o..o + bin.len()].copy_from_slice(bin);
    let mut cpu = Cpu::new();
    cpu.enable_class_stats();
    cpu.set_reg(0, 0);
    cpu.set_reg(1, !0);
    cpu.set_reg(2, RAM_BASE as u32);
    cpu.set_pc(LOAD as u32);
    loop {
        match cpu.run(&mut bus, 50_000_000) {
            // PSCI_VERSION: 1.1, as QEMU's `virt` machine reports.
            Exit::Hvc(_) if cpu.reg(0) == 0x8400_0000 => cpu.set_reg(0, 0x1_0001),
            Exit::Hvc(_) if cpu.reg(0) == 0x8400_0008 => break,
            Exit::Budget => panic!(
                "budget exhausted at {:#x} (mode {:?}, lr {:#x}, spsr {:x?}, dfsr {:#x}); output:\n{}",
                cpu.reg(15),
                cpu.mode(),
                cpu.reg(14),
                cpu.spsr(),
                cpu.cp15.dfsr,
                String::from_utf8_lossy(&bus.out)
            ),
            e => panic!(
                "unexpected exit {e:?} at {:#x}; output:\n{}",
                cpu.reg(15),
                String::from_utf8_lossy(&bus.out)
            ),
        }
    }
    (
        String::from_utf8_lossy(&bus.out).into_owned(),
        cpu.class_stats().to_vec(),
        cpu.icount,
    )
}

#[test]
fn systest_interpreter_and_qemu_system_arm() {
    let bin_path = build();
    let bin = std::fs::read(&bin_path).unwrap();
    let (ours, stats, n) = run_interpreter(&bin);
    common::record_coverage("systest", &stats);
    println!("interpreter ({n} instructions):\n{ours}");
    assert!(!ours.contains("FAILED"), "{ours}");
    assert!(ours.ends_with("armv7-systest: PASS\n"), "{ours}");

    let qemu = ["/usr/bin/qemu-system-arm", "/usr/local/bin/qemu-system-arm"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("qemu-system-arm not found: apt-get install -y qemu-system-arm");
    let out = Command::new("timeout")
        .args([
            "30",
            qemu,
            "-M",
            "virt",
            "-cpu",
            "cortex-a15",
            "-nographic",
            // No default NIC: it would need an option ROM (ipxe-qemu) for nothing.
            "-nic",
            "none",
            "-monitor",
            "none",
            "-serial",
            "stdio",
            // Virtual time: the timer check counts guest instructions past its deadline.
            "-icount",
            "shift=0,sleep=off",
            "-kernel",
        ])
        .arg(&bin_path)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running qemu-system-arm");
    let q = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    // The timer check needs the machine's GIC and timer (a device tree): not in the
    // interpreter's harness.
    let timer = "armv7-systest: timer irq during a compute loop";
    assert!(
        q.lines()
            .any(|l| l.starts_with(timer) && l.ends_with(" ok")),
        "{q}"
    );
    let q: String = q
        .lines()
        .filter(|l| !l.starts_with(timer))
        .map(|l| format!("{l}\n"))
        .collect();
    println!("qemu-system-arm:\n{q}");
    assert!(
        out.status.success(),
        "qemu-system-arm exited with {:?}",
        out.status
    );
    assert_eq!(
        q, ours,
        "qemu-system-arm and the interpreter printed different lines"
    );
}
