//! `cargo xtask`: builds the hypervisor and its guests, boots them under QEMU, and runs the
//! host tests and QEMU scenario matrix. Run `cargo xtask --help` for the commands.

mod build;
mod cli;
mod error;
mod qemu;
mod scenarios;
mod test_cmd;

use std::time::Duration;

use clap::Parser;

use build::{describe_file, Guest, Workspace};
use cli::{BuildArgs, Cli, Command, QemuArgs, DEFAULT_QEMU_TIMEOUT};
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
    match cli.command {
        Command::Build(args) => build_cmd(&ws, &args).map(|()| 0),
        Command::Qemu(args) => qemu_cmd(&ws, &args),
        Command::Test(args) => {
            let tally = test_cmd::run(&ws, &args)?;
            Ok(if tally.failed == 0 { 0 } else { 1 })
        }
    }
}

/// Resolves `--guest` against the guest crates and the current directory.
fn resolve_guest(ws: &Workspace, spec: &str) -> Result<Guest> {
    let cwd = std::env::current_dir().io(|| "reading the current directory".into())?;
    build::resolve_guest(spec, &ws.guest_crates(), &cwd)
}

fn build_cmd(ws: &Workspace, args: &BuildArgs) -> Result<()> {
    cli::validate_mem(args.vm.mem, "--mem").map_err(Error::Usage)?;
    let guest = resolve_guest(ws, &args.vm.guest)?;
    let built = build::build_all(ws, &guest, &ws.guest_crates(), args.vm.mem, &args.vm.append)?;
    println!("built:");
    println!("{}", describe_file(&ws.hypervisor_elf()));
    println!("{}", describe_file(&built.hypervisor));
    for g in &built.guests {
        println!("{}", describe_file(g));
    }
    println!("{}", describe_file(&built.package));
    println!(
        "package: VM '{}', {} RAM, 1 vCPU, cmdline {:?}",
        guest.vm_name(),
        cli::format_size(args.vm.mem),
        args.vm.append
    );
    Ok(())
}

fn qemu_cmd(ws: &Workspace, args: &QemuArgs) -> Result<i32> {
    cli::validate_qemu(args).map_err(Error::Usage)?;
    let guest = resolve_guest(ws, &args.vm.guest)?;
    let qemu_path = qemu::ensure_qemu()?;
    let built = build::build_all(ws, &guest, &[], args.vm.mem, &args.vm.append)?;
    let cfg = QemuConfig {
        cpu: args.cpu,
        gic: args.gic,
        smp: args.smp,
        host_mem: cli::host_mem(args.host_mem, args.vm.mem),
        backend: args.backend,
        gdb: args.gdb,
        kernel: built.hypervisor,
        initrd: built.package,
    };
    let timeout = match (args.timeout, args.gdb) {
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
        None => eprintln!("xtask: no timeout with --gdb; quit QEMU with Ctrl-A X"),
    }
    let outcome = qemu::run_interactive(&qemu_path, &cfg, timeout.map(Duration::from_secs))?;
    match outcome {
        Outcome::TimedOut => eprintln!(
            "xtask: QEMU did not finish within {} s and was killed; the guest or hypervisor \
             may hang (use --timeout SECS for longer runs, --gdb to look inside)",
            timeout.unwrap_or_default()
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
