//! `cargo xtask bench --linux`: whole-guest overhead. Boots the Linux guest (2 vCPUs on 2
//! CPUs, GICv2 and GICv3) under `-icount shift=0` natively and under the hypervisor, and compares the
//! kernel's own timestamp of `Run /init as init process`: virtual nanoseconds since the
//! guest's counter started, i.e. instructions executed by all CPUs (guest and EL2) plus idle
//! time QEMU skipped (`sleep=off`), identical from run to run.

pub mod armv7;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;

use crate::bench::{fixed_dtb, run_logged, Cell, DETERMINISM_ARGS};
use crate::build::{self, Guest, Workspace};
use crate::cli::{Backend, Cpu, Gic, HOST_MEM_OVERHEAD};
use crate::config::VmPlan;
use crate::error::Result;
use crate::linux;
use crate::qemu::{self, QemuConfig};

/// vCPUs and physical CPUs.
const CPUS: u32 = 2;
/// The kernel line whose timestamp is taken.
pub const INIT_LINE: &str = "Run /init as init process";

/// The cells: native and hypervisor, per CPU, on GICv2 and GICv3.
fn cells() -> Vec<Cell> {
    let per_gic = [
        (Cpu::CortexA57, None),
        (Cpu::CortexA57, Some(Backend::Nvhe)),
        (Cpu::Max, None),
        (Cpu::Max, Some(Backend::Vhe)),
        (Cpu::Max, Some(Backend::Nvhe)),
    ];
    [Gic::V2, Gic::V3]
        .into_iter()
        .flat_map(|gic| {
            per_gic
                .into_iter()
                .map(move |(cpu, backend)| Cell { cpu, gic, backend })
        })
        .collect()
}

/// The timestamp (seconds) of the kernel's `Run /init` line in `output`.
pub fn init_time(output: &str) -> Option<f64> {
    let line = output.lines().find(|l| l.contains(INIT_LINE))?;
    let inside = line.split_once('[')?.1.split_once(']')?.0;
    inside.trim().parse().ok()
}

/// Boots Linux in every cell (matching `filter`); returns the time to `Run /init` in virtual
/// nanoseconds per cell (`None` if the line never came).
pub fn run(
    ws: &Workspace,
    qemu_path: &Path,
    out_dir: &Path,
    hypervisor: &Path,
    filter: Option<&str>,
) -> Result<Vec<(Cell, Option<u64>)>> {
    let assets = linux::ensure_assets(ws)?;
    let cmdline = format!("{} test=1", linux::DEFAULT_CMDLINE);
    let plan = VmPlan {
        name: build::LINUX_GUEST.into(),
        guest: Guest::Linux,
        kernel: None,
        initrd: None,
        mem: linux::DEFAULT_MEM,
        vcpus: CPUS,
        cmdline: cmdline.clone(),
        ends_all: true,
        mac: None,
        disk_image: None,
        arch: build::VmArch::Aarch64,
    };
    let package = out_dir.join("linux-package.bin");
    build::write_package(&package, &build::vm_configs(ws, &[plan])?)?;
    let mut out = Vec::new();
    for cell in cells() {
        if filter.is_some_and(|f| !cell.name().contains(f)) {
            continue;
        }
        let args: Vec<OsString> = match cell.backend {
            None => qemu::native_linux_args(
                cell.cpu,
                cell.gic,
                CPUS,
                linux::DEFAULT_MEM,
                &assets.image,
                &assets.initramfs,
                &cmdline,
            ),
            Some(backend) => QemuConfig {
                cpu: cell.cpu,
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
        };
        let mut args = fixed_dtb(args);
        args.extend(DETERMINISM_ARGS.iter().map(OsString::from));
        let name = format!("linux {}", cell.name());
        let log = out_dir.join(format!("{}.log", name.replace([' ', '/'], "-")));
        eprintln!("xtask: bench {name}");
        let t = match run_logged(qemu_path, &args, &log, false) {
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

/// The Linux rows: millions of virtual ns (≈ instructions) to `Run /init`, ratio to native.
pub fn table(boots: &[(Cell, Option<u64>)]) -> String {
    let mut s =
        format!("Linux boot to `{INIT_LINE}` (2 vCPUs): millions of instructions (virtual ns)\n");
    for &(cell, t) in boots {
        let native = boots
            .iter()
            .find(|(c, _)| *c == cell.native())
            .and_then(|&(_, t)| t);
        let v = t.map_or("-".into(), |t| format!("{:.1}", t as f64 / 1e6));
        let ratio = match (cell.backend, t, native) {
            (Some(_), Some(t), Some(n)) if n > 0 => format!(" (x{:.2})", t as f64 / n as f64),
            _ => String::new(),
        };
        let _ = writeln!(s, "  {:<24} {v:>10}{ratio}", cell.name());
    }
    s
}

/// `results.json` with a `"linux_boot"` list added before the closing brace.
pub fn add_to_json(json: &str, boots: &[(Cell, Option<u64>)]) -> String {
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
    format!("{body},\n  \"linux_boot\": [{}]\n}}\n", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_timestamp() {
        let out = "[    0.5] x\n[    0.838484] Run /init as init process\nlinux-guest: up\n";
        assert_eq!(init_time(out), Some(0.838484));
        assert_eq!(init_time("nothing"), None);
    }
}
