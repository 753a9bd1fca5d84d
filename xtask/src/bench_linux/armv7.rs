//! The armv7 rows of `cargo xtask bench --linux`: Debian's armhf LPAE kernel and initramfs
//! (`linux-armv7`) booted to the kernel's `Run /init` line natively under
//! `qemu-system-arm -M virt -cpu cortex-a15` and in hardware AArch32 under the hypervisor
//! (`cortex-a57` non-VHE, `max` VHE), GICv2 and GICv3, under `-icount shift=0` (virtual
//! nanoseconds = instructions, identical run to run). One vCPU on one CPU: with two, the
//! armhf kernel stalls under `-icount` before it unpacks the initramfs, natively under
//! qemu-system-arm as well as under the hypervisor (QEMU 7.2).

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;

use super::{init_time, INIT_LINE};
use crate::bench::{fixed_dtb, run_logged, DETERMINISM_ARGS};
use crate::build::{self, Guest, Workspace};
use crate::cli::{Backend, Cpu, Gic, HOST_MEM_OVERHEAD};
use crate::config::VmPlan;
use crate::error::Result;
use crate::linux::{self, armv7};
use crate::qemu::QemuConfig;
use crate::{fail, setup};

/// The QEMU that runs ARMv7-A guests natively.
const QEMU_ARM: &str = "qemu-system-arm";
/// The CPU of the native runs.
const NATIVE_CPU: &str = "cortex-a15";
/// vCPUs and physical CPUs (see the module comment for why one).
const CPUS: u32 = 1;

/// One armv7 cell: natively (`cpu` = `None`) or under the hypervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Armv7Cell {
    /// The AArch64 CPU and backend under the hypervisor; `None`: native cortex-a15.
    pub host: Option<(Cpu, Backend)>,
    /// GIC version.
    pub gic: Gic,
}

impl Armv7Cell {
    /// `armv7 native cortex-a15 gic2`, `armv7 cortex-a57/nvhe gic2`...
    pub fn name(self) -> String {
        match self.host {
            None => format!("armv7 native {NATIVE_CPU} gic{}", self.gic.number()),
            Some((cpu, b)) => format!("armv7 {}/{} gic{}", cpu.name(), b.name(), self.gic.number()),
        }
    }
}

/// The cells, natives first within each GIC.
fn cells() -> Vec<Armv7Cell> {
    let hosts = [
        None,
        Some((Cpu::CortexA57, Backend::Nvhe)),
        Some((Cpu::Max, Backend::Vhe)),
    ];
    [Gic::V2, Gic::V3]
        .into_iter()
        .flat_map(|gic| hosts.into_iter().map(move |host| Armv7Cell { host, gic }))
        .collect()
}

/// Boots the armhf kernel in every cell (matching `filter`): virtual nanoseconds to
/// `Run /init` per cell (`None` if the line never came).
pub fn run(
    ws: &Workspace,
    qemu_aarch64: &Path,
    out_dir: &Path,
    hypervisor: &Path,
    filter: Option<&str>,
) -> Result<Vec<(Armv7Cell, Option<u64>)>> {
    let assets = armv7::ensure_assets(ws)?;
    let qemu_arm = setup::find_in_path(QEMU_ARM)
        .ok_or_else(|| fail!("{QEMU_ARM} not found (Debian package qemu-system-arm)"))?;
    let cmdline = format!("{} test=1", linux::DEFAULT_CMDLINE);
    let plan = VmPlan {
        name: build::LINUX_ARMV7_GUEST.into(),
        guest: Guest::LinuxArmv7,
        kernel: None,
        initrd: None,
        mem: linux::DEFAULT_MEM,
        vcpus: CPUS,
        cmdline: cmdline.clone(),
        ends_all: true,
        mac: None,
        disk_image: None,
        arch: build::VmArch::Armv7 { dbt_force: false },
    };
    let package = out_dir.join("linux-armv7-package.bin");
    build::write_package(&package, &build::vm_configs(ws, &[plan])?)?;
    let mut out = Vec::new();
    for cell in cells() {
        if filter.is_some_and(|f| !cell.name().contains(f)) {
            continue;
        }
        let (qemu, args): (&Path, Vec<OsString>) = match cell.host {
            None => (
                &qemu_arm,
                [
                    "-M".to_string(),
                    format!("virt,gic-version={}", cell.gic.number()),
                    "-cpu".into(),
                    NATIVE_CPU.into(),
                    "-smp".into(),
                    CPUS.to_string(),
                    "-m".into(),
                    format!("{}M", linux::DEFAULT_MEM >> 20),
                    "-nographic".into(),
                    "-nic".into(),
                    "none".into(),
                    "-kernel".into(),
                    assets.image.display().to_string(),
                    "-initrd".into(),
                    assets.initramfs.display().to_string(),
                    "-append".into(),
                    cmdline.clone(),
                ]
                .into_iter()
                .map(OsString::from)
                .collect(),
            ),
            Some((cpu, backend)) => (
                qemu_aarch64,
                QemuConfig {
                    cpu,
                    gic: cell.gic,
                    smp: CPUS,
                    host_mem: linux::DEFAULT_MEM + HOST_MEM_OVERHEAD,
                    backend,
                    gdb: false,
                    kernel: hypervisor.to_path_buf(),
                    initrd: package.clone(),
                    disk: None,
                    net: crate::cli::Net::None,
                    boot: Default::default(),
                    platform: None,
                }
                .args(),
            ),
        };
        let mut args = fixed_dtb(args);
        args.extend(DETERMINISM_ARGS.iter().map(OsString::from));
        let name = format!("linux {}", cell.name());
        let log = out_dir.join(format!("{}.log", name.replace([' ', '/'], "-")));
        eprintln!("xtask: bench {name}");
        let t = match run_logged(qemu, &args, &log, false) {
            Ok(text) => init_time(&text).map(|s| (s * 1e9).round() as u64),
            Err(e) => {
                eprintln!("xtask: bench {name}: {e}");
                None
            }
        };
        if t.is_none() {
            eprintln!(
                "xtask: bench {name}: no `{INIT_LINE}` (log: {})",
                log.display()
            );
        }
        out.push((cell, t));
    }
    Ok(out)
}

/// The armv7 rows: millions of virtual ns to `Run /init`, ratio to native cortex-a15.
pub fn table(boots: &[(Armv7Cell, Option<u64>)]) -> String {
    let mut s = format!(
        "armhf Linux boot to `{INIT_LINE}` (1 vCPU): millions of instructions (virtual ns)\n"
    );
    for &(cell, t) in boots {
        let native = boots
            .iter()
            .find(|(c, _)| c.host.is_none() && c.gic == cell.gic)
            .and_then(|&(_, t)| t);
        let v = t.map_or("-".into(), |t| format!("{:.1}", t as f64 / 1e6));
        let ratio = match (cell.host, t, native) {
            (Some(_), Some(t), Some(n)) if n > 0 => format!(" (x{:.2})", t as f64 / n as f64),
            _ => String::new(),
        };
        let _ = writeln!(s, "  {:<32} {v:>10}{ratio}", cell.name());
    }
    s
}

/// `results.json` with a `"linux_armv7_boot"` list added before the closing brace.
pub fn add_to_json(json: &str, boots: &[(Armv7Cell, Option<u64>)]) -> String {
    let items: Vec<String> = boots
        .iter()
        .map(|(c, t)| {
            format!(
                "{{\"cell\": \"{}\", \"ns_to_init\": {}}}",
                c.name(),
                t.map_or("null".into(), |t| t.to_string())
            )
        })
        .collect();
    let body = json.trim_end().trim_end_matches('}').trim_end();
    format!(
        "{body},\n  \"linux_armv7_boot\": [{}]\n}}\n",
        items.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_table() {
        let c = cells();
        assert_eq!(c[0].name(), "armv7 native cortex-a15 gic2");
        assert_eq!(c[1].name(), "armv7 cortex-a57/nvhe gic2");
        let t = table(&[(c[0], Some(1_000_000_000)), (c[1], Some(1_050_000_000))]);
        assert!(t.contains("1050.0 (x1.05)"), "{t}");
        let j = add_to_json("{\n  \"a\": 1\n}\n", &[(c[0], None)]);
        assert!(j.contains("\"linux_armv7_boot\": [{\"cell\": \"armv7 native cortex-a15 gic2\", \"ns_to_init\": null}]"), "{j}");
    }
}
