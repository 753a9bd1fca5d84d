//! `cargo xtask bench --dbt`, in-VM rows (issue 17): `guests/armv7-dbtbench` (compute,
//! call-heavy and exception-heavy ARMv7-A kernels, part 1's matrix multiply and VFP/NEON
//! kernels, then with the guest's MMU on: compute,
//! a 64 MiB pointer chase, address-space switches, TLB maintenance, shadow misses and
//! guest-visible Data and Prefetch Aborts;
//! each timed with `CNTVCT` on its second run) natively under `qemu-system-arm -cpu cortex-a15` and as a VM under the hypervisor,
//! translated by the in-VM runtime (a64fx: no AArch32 EL1; cortex-a57 with `dbt = "force"`).
//! Under `-icount shift=0` a counter tick is 16 instructions of the whole machine, so the
//! native run gives each kernel's guest instruction count and the VM runs give the host
//! instructions it costs there (translated code, runtime, interpreter fallback, exits).

use std::ffi::OsString;
use std::path::Path;

use crate::bench::{self, Cell, DETERMINISM_ARGS};
use crate::bench_dbt_vm_profile as profile;
use crate::bench_dbt_vm_split as split;
use crate::build::{self, VmArch, VmConfig, Workspace};
use crate::cli::{Backend, Cpu, Gic};
use crate::error::Result;
use crate::fail;

/// The guest crate.
const GUEST: &str = "armv7-dbtbench";
/// Instructions per counter tick under `-icount shift=0` (62.5 MHz, 1 ns per instruction).
const INSNS_PER_TICK: u64 = 16;
/// The kernels, in the guest's order, with what each measures.
const KERNELS: &[(&str, &str)] = &[
    ("crc32", "table-driven CRC-32 over 64 KiB"),
    ("sort", "insertion sort of 1024 words"),
    ("fib", "recursive fib(18): calls and returns"),
    ("svc", "2000 SVC + exception return"),
    ("udf", "2000 UNDEFINED + exception return"),
    (
        "syscall",
        "2000 SVC from User mode + MOVS pc, lr back to User",
    ),
    ("cp15", "2000 MCR + MRC TPIDRURW"),
    ("matmul", "part 1's 96x96 matrix multiply"),
    ("vfp", "part 1's VFP f64 dot product + NEON checksum"),
    ("crc32-mmu", "crc32 with the MMU on"),
    ("sort-mmu", "sort with the MMU on"),
    ("chase-mmu", "100000 dependent loads over 64 MiB, MMU on"),
    ("switch", "2000 CONTEXTIDR + TTBR0 switches + load"),
    ("tlbi", "256 TLBIMVAA"),
    ("miss", "256 TLBIMVAA + load: shadow misses"),
    (
        "dabt",
        "2000 guest Data Aborts (invalid / no-access section) + handler + SUBS pc, lr",
    ),
    (
        "pabt",
        "2000 BLX to an XN section: Prefetch Abort + handler + return",
    ),
    (
        "tlbi-asid",
        "256 TLBIMVA of one ASID while 32 other ASIDs map the pages",
    ),
];

/// One kernel's line: `armv7-dbtbench: <name> 0x<ticks> result 0x<value>`.
fn parse(out: &str) -> Vec<(String, u64, String)> {
    out.lines()
        .filter_map(|l| {
            let rest = &l[l.find("armv7-dbtbench: ")? + 16..];
            let mut w = rest.split_whitespace();
            let name = w.next()?.to_string();
            let ticks = u64::from_str_radix(w.next()?.strip_prefix("0x")?, 16).ok()?;
            (w.next()? == "result").then_some(())?;
            Some((name, ticks * INSNS_PER_TICK, w.next()?.to_string()))
        })
        .collect()
}

fn native_args(guest: &Path) -> Vec<OsString> {
    let mut a: Vec<OsString> = [
        "-M",
        "virt,dtb-randomness=off",
        "-cpu",
        "cortex-a15",
        "-m",
        "128M",
        "-nographic",
        "-nic",
        "none",
        "-kernel",
    ]
    .map(OsString::from)
    .to_vec();
    a.push(guest.as_os_str().to_owned());
    a.extend(DETERMINISM_ARGS.iter().map(OsString::from));
    a
}

/// Runs the rows; returns the table.
pub fn run(ws: &Workspace) -> Result<String> {
    let objcopy = build::find_objcopy(ws)?;
    let hypervisor = build::build_hypervisor(ws, &objcopy)?;
    let guest = build::build_guests(ws, &objcopy, &[GUEST.to_string()])?.remove(0);
    let dir = ws.target.join("dbt-bench-vm");
    std::fs::create_dir_all(&dir).map_err(|e| fail!("creating {}: {e}", dir.display()))?;
    let package = dir.join("package.bin");
    build::write_package(
        &package,
        &[VmConfig {
            name: GUEST.into(),
            kernel: guest.clone(),
            initrd: None,
            mem_bytes: 128 << 20,
            vcpus: 1,
            cmdline: String::new(),
            mac: None,
            ends_all: true,
            disk_image: None,
            arch: VmArch::Armv7 { dbt_force: true },
        }],
    )?;
    eprintln!("bench --dbt: {GUEST} natively (qemu-system-arm cortex-a15)");
    let native = parse(&bench::run_logged(
        Path::new("qemu-system-arm"),
        &native_args(&guest),
        &dir.join("native.log"),
        true,
    )?);
    let cells = [
        Cell {
            cpu: Cpu::A64fx,
            gic: Gic::V3,
            backend: Some(Backend::Auto),
        },
        Cell {
            cpu: Cpu::CortexA57,
            gic: Gic::V2,
            backend: Some(Backend::Auto),
        },
    ];
    let mut columns = Vec::new();
    // The first cell's windows split into translated code and the rest.
    let split_out = dir.join("split.txt");
    let mut splits = None;
    // The kernel to profile, by its place in the guest's output (the snapshots' order).
    let names: Vec<(&str, &str)> = native.iter().map(|r| (r.0.as_str(), "")).collect();
    let wanted = profile::requested(&names)?;
    let prof_out = dir.join("profile.txt");
    for (i, cell) in cells.into_iter().enumerate() {
        eprintln!("bench --dbt: {GUEST} in a VM, {}", cell.name());
        let mut args = bench::cell_args(cell, 1, &guest, &hypervisor, &package);
        if i == 0 {
            let prof = wanted
                .as_ref()
                .map(|(_, k)| (profile::window_start(*k), prof_out.as_path()));
            args.extend(split::plugin_args(&dir, &split_out, prof)?);
        }
        let log = dir.join(format!("{}.log", cell.name().replace(['/', ' '], "-")));
        let out = bench::run_logged(Path::new("qemu-system-aarch64"), &args, &log, true)?;
        let rows = parse(&out);
        if i == 0 {
            splits = split::windows(&split_out, rows.len())?
                .map(|w| rows.iter().map(|r| r.0.clone()).zip(w).collect::<Vec<_>>());
        }
        for (k, _) in KERNELS {
            let n = native.iter().find(|r| r.0 == *k);
            let v = rows.iter().find(|r| r.0 == *k);
            match (n, v) {
                (Some(n), Some(v)) if n.2 == v.2 => {}
                _ => {
                    return Err(fail!(
                        "{k}: missing or different result natively ({n:?}) and in the VM ({v:?}); logs in {}",
                        dir.display()
                    ))
                }
            }
        }
        columns.push((cell, rows));
    }
    let mut s = String::from(
        "DBT in a VM (guests/dbt-runtime): host instructions per guest ARMv7 instruction, \
         whole machine under -icount shift=0 (deterministic); guest counts from \
         qemu-system-arm cortex-a15\n\n",
    );
    s.push_str("| kernel | guest insns |");
    for (cell, _) in &columns {
        s.push_str(&format!(" {} (dbt): host/guest |", cell.name()));
    }
    let split_name = columns.first().map(|c| c.0.name()).unwrap_or_default();
    if splits.is_some() {
        s.push_str(&format!(
            " {split_name}: of which in translated code | in the runtime | at EL2 |"
        ));
    }
    s.push_str("\n|---|---:|");
    s.push_str(&"---:|".repeat(columns.len() + if splits.is_some() { 3 } else { 0 }));
    s.push('\n');
    for (k, what) in KERNELS {
        let g = native.iter().find(|r| r.0 == *k).map_or(0, |r| r.1);
        s.push_str(&format!("| {k} ({what}) | {g} |"));
        for (_, rows) in &columns {
            let h = rows.iter().find(|r| r.0 == *k).map_or(0, |r| r.1);
            s.push_str(&format!(" {:.2} |", h as f64 / g.max(1) as f64));
        }
        if let Some(w) = splits.as_ref().and_then(|v| v.iter().find(|r| r.0 == *k)) {
            let per = |n: u64| n as f64 / g.max(1) as f64;
            s.push_str(&format!(
                " {:.2} | {:.2} | {:.2} |",
                per(w.1.code),
                per(w.1.runtime),
                per(w.1.other)
            ));
        }
        s.push('\n');
    }
    if let Some((k, _)) = &wanted {
        let g = native.iter().find(|r| r.0 == *k).map_or(0, |r| r.1);
        let elf = ws.guest_elf(build::DBT_RUNTIME_PACKAGE);
        s.push_str(&profile::report(k, &prof_out, &elf, g)?);
    }
    if splits.is_none() {
        s.push_str(&format!(
            "\n(no split of the {split_name} windows: the runtime did not read CNTVCT_EL0 \
             four times per kernel)\n"
        ));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kernel_lines() {
        let out = "x\n[vm] armv7-dbtbench: crc32 0x00008401 result 0x85400450\n\
                   armv7-dbtbench: done\n";
        assert_eq!(
            parse(out),
            [("crc32".to_string(), 0x8401 * 16, "0x85400450".to_string())]
        );
    }
}
