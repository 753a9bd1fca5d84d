//! `cargo xtask`: builds the hypervisor and its guests, boots them under QEMU, and runs the
//! host tests and QEMU scenario matrix. Run `cargo xtask --help` for the commands. The
//! commands live in the library (`lib.rs`); this file dispatches them.

use xtask::{bench, check, fuzz, setup, test_cmd};
use xtask::{build, cli, config, error, linux, qemu, usage};

use std::time::Duration;

use clap::Parser;

use build::{describe_file, Workspace};
use cli::{BuildArgs, Cli, Command, LinuxNativeArgs, QemuArgs, VmArgs, DEFAULT_QEMU_TIMEOUT};
use config::MachineConfig;
use error::{Error, IoContext, Result};
use qemu::{Outcome, QemuConfig};

fn main() {
    let cli = Cli::parse();
    let code = match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            if let Error::Usage(_) = e {
                eprintln!("\nFor more information, try '--help'.");
            }
            e.exit_code()
        }
    };
    std::process::exit(code);
}

fn dispatch(cli: Cli) -> Result<i32> {
    let ws = Workspace::locate();
    if cli.command.builds() {
        setup::ensure_toolchain(&ws.root)?;
    }
    match cli.command {
        Command::Build(args) => build_cmd(&ws, &args).map(|()| 0),
        Command::Qemu(args) => qemu_cmd(&ws, &args),
        Command::Test(args) => {
            let tally = test_cmd::run(&ws, &args)?;
            Ok(if tally.failed == 0 { 0 } else { 1 })
        }
        Command::LinuxNative(args) => linux_native_cmd(&ws, &args),
        Command::Bench(args) => bench::run(
            &ws,
            args.filter.as_deref(),
            args.linux,
            args.dbt,
            args.profile.as_deref(),
            args.smp_scaling,
        ),
        Command::Check => {
            let tally = check::run(&ws)?;
            Ok(if tally.failed == 0 { 0 } else { 1 })
        }
        Command::Fuzz(args) => fuzz::run(&ws, &args),
        Command::Dist(args) => dist_cmd(&ws, &args).map(|()| 0),
    }
}

/// The VMs the options ask for (relative paths from the current directory).
fn dist_cmd(ws: &Workspace, args: &cli::DistArgs) -> Result<()> {
    let config = args
        .config
        .clone()
        .unwrap_or_else(|| ws.root.join(xtask::dist::SAMPLE_CONFIG));
    let vm = VmArgs {
        config: Some(config.clone()),
        ..VmArgs::default()
    };
    let plan = plans(ws, &vm)?;
    let built = build::build_all(ws, &plan.vms, &[])?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| ws.root.join("target/dist"));
    let files = xtask::dist::write(&out, &built.hypervisor, &built.package, &config)?;
    println!("dist: {}", out.display());
    for f in files {
        println!("{}", describe_file(&f));
    }
    println!(
        "install: see {} (and the README's INSTALL section)",
        out.join("INSTALL.txt").display()
    );
    Ok(())
}

fn plans(ws: &Workspace, vm: &VmArgs) -> Result<MachineConfig> {
    let cwd = std::env::current_dir().io(|| "reading the current directory".into())?;
    config::plans_from_args(vm, &ws.guest_crates(), &cwd)
}

fn print_built(built: &build::Built) {
    println!("built:");
    for f in [&built.hypervisor, &built.package] {
        println!("{}", describe_file(f));
    }
    for g in &built.guests {
        println!("{}", describe_file(g));
    }
    for vm in &built.vms {
        println!(
            "package: VM '{}', {} RAM, {} vCPU(s), {}cmdline {:?}{}",
            vm.name,
            cli::format_size(vm.mem_bytes),
            vm.vcpus,
            if vm.initrd.is_some() { "initrd, " } else { "" },
            vm.cmdline,
            if vm.ends_all && built.vms.len() > 1 {
                ", powering off ends all"
            } else {
                ""
            }
        );
    }
}

fn build_cmd(ws: &Workspace, args: &BuildArgs) -> Result<()> {
    let cfg = plans(ws, &args.vm)?;
    let built = build::build_all(ws, &cfg.vms, &ws.guest_crates())?;
    print_built(&built);
    Ok(())
}

fn qemu_cmd(ws: &Workspace, args: &QemuArgs) -> Result<i32> {
    let plan = plans(ws, &args.vm)?;
    let machine =
        cli::resolve_machine(args, &plan.machine, plan.vm_mem_total()).map_err(Error::Usage)?;
    let qemu_path = qemu::ensure_qemu()?;
    let built = build::build_all(ws, &plan.vms, &[])?;
    let mut cfg = QemuConfig {
        cpu: machine.cpu,
        gic: machine.gic,
        smp: machine.smp,
        host_mem: machine.host_mem,
        backend: args.backend,
        gdb: args.gdb,
        kernel: built.hypervisor,
        initrd: built.package,
        disk: args.disk.clone(),
        net: machine.net,
        boot: qemu::Boot::Kernel,
        platform: args.platform,
    };
    if let Some(p) = args.platform {
        cfg.gic = p.gic();
        cfg.smp = p.smp();
        if args.backend == cli::Backend::Auto {
            cfg.backend = p.backend();
        }
    }
    if args.uefi || args.platform.is_some() {
        setup::ensure_packages(&[setup::QEMU_EFI])?;
        let esp = ws.images_dir().join("esp");
        xtask::uefi::write_esp(&esp, &cfg.kernel, &cfg.initrd, &cfg.hypervisor_cmdline())?;
        cfg.boot = qemu::Boot::Uefi {
            esp,
            acpi: args.acpi || args.platform.is_some(),
        };
    }
    let interactive_linux = config::needs_linux(&plan.vms);
    let timeout = match (args.timeout, args.gdb || interactive_linux) {
        (Some(t), _) => Some(t),
        (None, true) => None,
        (None, false) => Some(DEFAULT_QEMU_TIMEOUT),
    };
    eprintln!("xtask: {}", cfg.command_line(&qemu_path));
    if args.gdb {
        eprintln!(
            "xtask: QEMU waits for gdb on :{port}. In another terminal:\n    \
             gdb-multiarch {elf} -ex 'target remote :{port}'\n\
             (Debian/Ubuntu: apt-get install gdb-multiarch)",
            port = qemu::GDB_PORT,
            elf = ws.hypervisor_elf().display()
        );
    }
    match timeout {
        Some(t) => eprintln!("xtask: timeout {t} s (--timeout); quit QEMU with Ctrl-A X"),
        None => eprintln!(
            "xtask: no timeout with --gdb or a Linux guest (--timeout SECS sets one); quit \
             QEMU with Ctrl-A X"
        ),
    }
    let timeout = timeout.map(Duration::from_secs);
    let outcome = if interactive_linux {
        // Watch the console for the marker to report the time to userspace (the number to
        // compare with `cargo xtask linux-native`).
        let run = qemu::run_watching(&qemu_path, &cfg.args(), linux::MARKER, timeout, true)?;
        if let Some(t) = run.marker_after {
            eprintln!(
                "xtask: \"{}\" after {:.2} s (wall clock, from starting QEMU)",
                linux::MARKER,
                t.as_secs_f64()
            );
        }
        run.outcome
    } else {
        qemu::run_interactive(&qemu_path, &cfg, timeout)?
    };
    match outcome {
        Outcome::TimedOut => eprintln!(
            "xtask: QEMU did not finish within {} s and was killed; the guest or hypervisor \
             may hang (use --timeout SECS for longer runs, --gdb to look inside)",
            timeout.unwrap_or_default().as_secs()
        ),
        Outcome::Signaled(sig) => eprintln!("xtask: QEMU was killed by signal {sig}"),
        Outcome::Exited(0) => {}
        Outcome::Exited(code) => eprintln!(
            "xtask: QEMU exited with status {code} (guest SYSTEM_RESET, a guest crash or a \
             hypervisor fatal error)"
        ),
    }
    Ok(outcome.exit_code())
}

/// `cargo xtask linux-native`: the Linux guest under plain QEMU (no hypervisor), timed to
/// the userspace marker.
fn linux_native_cmd(ws: &Workspace, args: &LinuxNativeArgs) -> Result<i32> {
    let cwd = std::env::current_dir().io(|| "reading the current directory".into())?;
    for p in args.kernel.iter().chain(&args.initrd) {
        if !cwd.join(p).is_file() {
            return Err(usage!("{} not found", p.display()));
        }
    }
    if args.gic == cli::Gic::V2 && args.smp > cli::MAX_SMP_GICV2 {
        return Err(usage!(
            "--smp {} is too many for --gic 2 (at most {})",
            args.smp,
            cli::MAX_SMP_GICV2
        ));
    }
    let qemu_path = qemu::ensure_qemu()?;
    let assets = match (&args.kernel, &args.initrd) {
        (Some(_), Some(_)) => None,
        _ => {
            let assets = linux::ensure_assets(ws)?;
            eprintln!("xtask: {}", assets.describe());
            Some(assets)
        }
    };
    let kernel = match (&args.kernel, &assets) {
        (Some(k), _) => cwd.join(k),
        (None, Some(a)) => a.image.clone(),
        (None, None) => unreachable!(),
    };
    let initrd = match (&args.initrd, &assets) {
        (Some(i), _) => cwd.join(i),
        (None, Some(a)) => a.initramfs.clone(),
        (None, None) => unreachable!(),
    };
    let append = args.append.clone().unwrap_or_else(|| {
        if args.shell {
            linux::DEFAULT_CMDLINE.to_string()
        } else {
            format!("{} test=1", linux::DEFAULT_CMDLINE)
        }
    });
    let qargs = qemu::native_linux_args(
        args.cpu, args.gic, args.smp, args.mem, &kernel, &initrd, &append,
    );
    eprintln!("xtask: {}", qemu::show_args(&qemu_path, &qargs));
    let timeout = match (args.timeout, args.shell) {
        (Some(t), _) => Some(Duration::from_secs(t)),
        (None, true) => None,
        (None, false) => Some(Duration::from_secs(120)),
    };
    let run = qemu::run_watching(&qemu_path, &qargs, linux::MARKER, timeout, args.shell)?;
    match run.marker_after {
        Some(t) => eprintln!(
            "xtask: \"{}\" after {:.2} s (wall clock, from starting QEMU)",
            linux::MARKER,
            t.as_secs_f64()
        ),
        None => eprintln!("xtask: \"{}\" never appeared", linux::MARKER),
    }
    eprintln!(
        "xtask: QEMU ended after {:.2} s: {}",
        run.total.as_secs_f64(),
        run.outcome.describe()
    );
    let passed = args.shell || run.output.contains(linux::PASS_MARKER) || args.append.is_some();
    Ok(match run.outcome {
        Outcome::Exited(0) if !passed || run.marker_after.is_none() => 1,
        o => o.exit_code(),
    })
}
