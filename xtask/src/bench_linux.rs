//! `cargo xtask bench --linux`: whole-guest overhead. Boots the Linux guest (2 vCPUs on 2
//! CPUs, GICv2 and GICv3) under `-icount shift=0` natively and under the hypervisor, and
//! compares the instructions all CPUs executed (guest and EL2) from the hand-over to the
//! kernel to the end of its `Run /init as init process` line, counted by a QEMU plugin
//! ([`count`]): a figure that depends only on what was executed, identical from run to run
//! and comparable between commits. The kernel's own timestamp of that line (virtual time,
//! which also holds the idle periods QEMU skipped with `sleep=off`, so it moves with where
//! timer events land) is shown beside it.

pub mod armv7;
pub mod count;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;

use crate::bench::{fixed_dtb, Cell, DETERMINISM_ARGS};
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
/// The hypervisor's last boot-log line before its vCPUs run: the hand-over to the guest.
pub const HANDOVER_LINE: &str = "[hv] scheduler:";

/// One boot of one cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Boot {
    /// The machine.
    pub cell: Cell,
    /// The kernel's timestamp of [`INIT_LINE`], in virtual ns.
    pub ns: Option<u64>,
    /// The counted instructions from the hand-over to the end of [`INIT_LINE`].
    pub count: Option<count::Counted>,
}

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

/// Boots Linux in every cell (matching `filter`) with the counting plugin; returns each
/// cell's figures (`None` where the line never came).
pub fn run(
    ws: &Workspace,
    qemu_path: &Path,
    out_dir: &Path,
    hypervisor: &Path,
    filter: Option<&str>,
) -> Result<Vec<Boot>> {
    let plugin = count::build_plugin(&out_dir.join("count"))?;
    let image = crate::bench_profile::image_range(&ws.hypervisor_elf())?;
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
        let stem = name.replace([' ', '/'], "-");
        let log = out_dir.join(format!("{stem}.log"));
        let marks_file = out_dir.join(format!("{stem}.marks"));
        let hv_image = cell.backend.map(|_| image);
        args.push("-plugin".into());
        args.push(count::plugin_arg(&plugin, &marks_file, hv_image).into());
        eprintln!("xtask: bench {name}");
        let console = match count::run(qemu_path, &args, &log) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("xtask: bench {name}: {e}");
                Vec::new()
            }
        };
        let text = String::from_utf8_lossy(&console);
        let ns = init_time(&text).map(|s| (s * 1e9).round() as u64);
        let marks = count::read_marks(&marks_file).unwrap_or_default();
        if marks.len() != console.len() {
            eprintln!(
                "xtask: bench {name}: {} console bytes but {} UART stores counted",
                console.len(),
                marks.len()
            );
        }
        let start = cell.backend.map(|_| HANDOVER_LINE);
        let counted = count::counted(&console, &marks, start, INIT_LINE);
        if ns.is_none() || counted.is_none() {
            eprintln!(
                "xtask: bench {name}: no `{INIT_LINE}` counted (log: {})",
                log.display()
            );
        }
        out.push(Boot {
            cell,
            ns,
            count: counted,
        });
    }
    Ok(out)
}

/// The Linux rows: millions of instructions from the hand-over to the end of `Run /init`
/// (all CPUs, counted) and their ratio to native, the hypervisor's part of them, its own
/// boot before the hand-over, and the kernel's timestamp (millions of virtual ns).
pub fn table(boots: &[Boot]) -> String {
    let mut s = format!(
        "Linux boot to `{INIT_LINE}` (2 vCPUs): millions of instructions, all CPUs, counted \
         from the hand-over to the kernel (goal <= x1.05 of native); EL2 = the hypervisor's \
         part; hv boot = its own boot before; kernel timestamp in millions of virtual ns\n"
    );
    let _ = writeln!(
        s,
        "  {:<24} {:>10} {:>8} {:>9} {:>9} {:>10}",
        "cell", "instr", "ratio", "EL2", "hv boot", "timestamp"
    );
    let m = |x: u64| format!("{:.1}", x as f64 / 1e6);
    for b in boots {
        let native = boots
            .iter()
            .find(|n| n.cell == b.cell.native())
            .and_then(|n| n.count);
        let total = b.count.map_or("-".into(), |c| m(c.total));
        let ratio = match (b.cell.backend, b.count, native) {
            (Some(_), Some(c), Some(n)) if n.total > 0 => {
                let r = c.total as f64 / n.total as f64;
                format!("x{r:.3}{}", if r <= 1.05 { " ok" } else { " NO" })
            }
            _ => "-".into(),
        };
        let (el2, before) = match (b.cell.backend, b.count) {
            (Some(_), Some(c)) => (m(c.el2), m(c.before)),
            _ => ("-".into(), "-".into()),
        };
        let ts = b.ns.map_or("-".into(), m);
        let _ = writeln!(
            s,
            "  {:<24} {total:>10} {ratio:>8} {el2:>9} {before:>9} {ts:>10}",
            b.cell.name()
        );
    }
    s
}

/// `results.json` with a `"linux_boot"` list added before the closing brace.
pub fn add_to_json(json: &str, boots: &[Boot]) -> String {
    let num = |v: Option<u64>| v.map_or("null".into(), |v| v.to_string());
    let items: Vec<String> = boots
        .iter()
        .map(|b| {
            format!(
                "{{\"cell\": \"{}\", \"ns_to_init\": {}, \"instructions_to_init\": {}, \
                 \"el2_instructions\": {}, \"hv_boot_instructions\": {}}}",
                b.cell.name(),
                num(b.ns),
                num(b.count.map(|c| c.total)),
                num(b.count.map(|c| c.el2)),
                num(b.count.map(|c| c.before)),
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
