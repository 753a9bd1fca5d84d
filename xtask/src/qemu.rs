//! Running `qemu-system-aarch64`: finding (or installing) it, its command line, and running it
//! interactively or with captured output, always under a timeout.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use wait_timeout::ChildExt;

use crate::cli::{Backend, Cpu, Gic, Net};
use crate::error::{IoContext, Result};
use crate::fail;
use crate::platform::Platform;
use crate::setup;

/// The QEMU binary we run.
pub const QEMU: &str = "qemu-system-aarch64";
/// Exit status xtask reports for a run it killed on timeout (as `timeout(1)` does).
pub const TIMEOUT_EXIT_CODE: i32 = 124;
/// Port of the gdb server `-s` opens.
pub const GDB_PORT: u16 = 1234;

/// Everything that goes onto QEMU's command line.
#[derive(Debug, Clone)]
pub struct QemuConfig {
    /// CPU model.
    pub cpu: Cpu,
    /// GIC version.
    pub gic: Gic,
    /// Physical CPUs.
    pub smp: u32,
    /// Machine memory in bytes (rounded up to MiB for QEMU).
    pub host_mem: u64,
    /// Backend asked of the hypervisor (`backend=` on its command line).
    pub backend: Backend,
    /// Wait for gdb on :1234 before starting.
    pub gdb: bool,
    /// The hypervisor image (`-kernel`).
    pub kernel: PathBuf,
    /// The VM package (`-initrd`).
    pub initrd: PathBuf,
    /// A raw disk image attached as QEMU's virtio-blk device, which the hypervisor drives
    /// and shares out among its VMs.
    pub disk: Option<PathBuf>,
    /// The network card: none, or a virtio-net on QEMU's user-mode network, which the
    /// hypervisor drives as the uplink of its virtual switch.
    pub net: Net,
    /// How the machine starts the hypervisor.
    pub boot: Boot,
    /// A server profile: its CPU model and MIDR replace `cpu`'s on QEMU's command line.
    pub platform: Option<Platform>,
}

/// How QEMU starts the hypervisor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Boot {
    /// `-kernel` (the arm64 Image protocol: device tree in x0), `-initrd` the VM package,
    /// `-append` the command line.
    #[default]
    Kernel,
    /// edk2 (`-bios QEMU_EFI.fd`) boots `EFI/BOOT/BOOTAA64.EFI` from a FAT drive made of
    /// `esp` (see `crate::uefi::write_esp`); the package and command line are files there.
    Uefi {
        /// The directory QEMU presents as a FAT drive.
        esp: PathBuf,
        /// Firmware tables: ACPI only (`-M virt,acpi=on`) or the device tree only.
        acpi: bool,
    },
    /// As [`Boot::Kernel`], but without `virtualization=on`: QEMU enters the image at EL1,
    /// where it must refuse to start (scenario `el1-refused`).
    KernelAtEl1,
}

impl QemuConfig {
    /// QEMU's arguments, without the program name.
    pub fn args(&self) -> Vec<OsString> {
        let mib = self.host_mem.div_ceil(1 << 20);
        let acpi = match &self.boot {
            Boot::Kernel | Boot::KernelAtEl1 => "",
            Boot::Uefi { acpi: true, .. } => ",acpi=on",
            Boot::Uefi { acpi: false, .. } => ",acpi=off",
        };
        let cpu = match self.platform {
            Some(p) => p.qemu_cpu(),
            None => self.cpu.qemu_arg().to_string(),
        };
        let el2 = match self.boot {
            Boot::KernelAtEl1 => "",
            _ => ",virtualization=on",
        };
        let mut args: Vec<OsString> = [
            "-M".to_string(),
            format!("virt{el2},gic-version={}{acpi}", self.gic.number()),
            "-cpu".into(),
            cpu,
            "-smp".into(),
            self.smp.to_string(),
            "-m".into(),
            format!("{mib}M"),
            "-nographic".into(),
        ]
        .into_iter()
        .map(OsString::from)
        .collect();
        match self.net {
            // No default NIC: QEMU's would be a virtio-net-pci with an option ROM
            // (efi-virtio.rom from ipxe-qemu) that nothing here uses.
            Net::None => args.extend(["-nic".into(), "none".into()]),
            // A virtio-mmio card (modern, see below) on the user-mode network: QEMU's NAT
            // with a DHCP server (10.0.2.15 for the first client), gateway/DNS 10.0.2.2/.3.
            Net::User => args.extend([
                "-netdev".into(),
                "user,id=n0".into(),
                "-device".into(),
                "virtio-net-device,netdev=n0".into(),
            ]),
        }
        args.push("-semihosting".into());
        // Modern virtio-mmio for the hypervisor's own drivers, and an entropy source for
        // guests on CPUs without FEAT_RNG.
        args.push("-global".into());
        args.push("virtio-mmio.force-legacy=false".into());
        args.push("-device".into());
        args.push("virtio-rng-device".into());
        if let Some(disk) = &self.disk {
            let mut d = OsString::from("if=none,format=raw,id=hd0,file=");
            d.push(disk);
            args.push("-drive".into());
            args.push(d);
            args.push("-device".into());
            args.push("virtio-blk-device,drive=hd0".into());
        }
        match &self.boot {
            Boot::Kernel | Boot::KernelAtEl1 => {
                args.push("-kernel".into());
                args.push(self.kernel.clone().into());
                args.push("-initrd".into());
                args.push(self.initrd.clone().into());
                args.push("-append".into());
                args.push(self.hypervisor_cmdline().into());
            }
            Boot::Uefi { esp, .. } => {
                // vvfat presents the directory as a FAT drive (read-only: nothing needs to
                // write to it); it is the firmware's removable-media boot path.
                let mut d = OsString::from("if=virtio,format=raw,readonly=on,file=fat:");
                d.push(esp);
                args.extend([
                    "-bios".into(),
                    crate::setup::QEMU_EFI_FD.into(),
                    "-drive".into(),
                    d,
                    "-boot".into(),
                    "menu=on,splash-time=0".into(),
                ]);
            }
        }
        if self.gdb {
            args.push("-s".into());
            args.push("-S".into());
        }
        args
    }

    /// The hypervisor's command line: the backend, and `exit=semihosting` so it ends QEMU
    /// with a status code (we always start QEMU with `-semihosting`; on hardware the
    /// hypervisor's default is PSCI).
    pub fn hypervisor_cmdline(&self) -> String {
        format!("backend={} exit=semihosting", self.backend.name())
    }

    /// The command line as one string, for messages.
    pub fn command_line(&self, qemu: &Path) -> String {
        show_args(qemu, &self.args())
    }
}

/// How a QEMU run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// QEMU exited with this status (semihosting exit code, or 0 after SYSTEM_OFF).
    Exited(i32),
    /// QEMU was killed by this signal.
    Signaled(i32),
    /// The timeout ran out and xtask killed QEMU.
    TimedOut,
}

impl Outcome {
    fn from_status(status: ExitStatus) -> Self {
        if let Some(code) = status.code() {
            return Outcome::Exited(code);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if let Some(sig) = status.signal() {
                return Outcome::Signaled(sig);
            }
        }
        Outcome::Exited(1)
    }

    /// The exit status xtask passes on: QEMU's own, 128+signal, or 124 for a timeout.
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Exited(c) => c,
            Outcome::Signaled(s) => 128 + s,
            Outcome::TimedOut => TIMEOUT_EXIT_CODE,
        }
    }

    /// A short description: `exit 0`, `killed by signal 9`, `timed out`.
    pub fn describe(self) -> String {
        match self {
            Outcome::Exited(c) => format!("exit status {c}"),
            Outcome::Signaled(s) => format!("killed by signal {s}"),
            Outcome::TimedOut => "timed out".into(),
        }
    }
}

/// Finds `qemu-system-aarch64`, installing Debian's `qemu-system-arm` (without recommends)
/// when it is missing.
pub fn ensure_qemu() -> Result<PathBuf> {
    setup::ensure_packages(&[setup::QEMU_SYSTEM])?;
    setup::find_in_path(QEMU).ok_or_else(|| fail!("{QEMU} is not on PATH"))
}

/// Stops a child: SIGTERM first (QEMU then restores the terminal), SIGKILL after 2 s. With
/// `group`, the signals go to the child's whole process group (it must lead one).
fn terminate(child: &mut Child, group: bool) {
    #[cfg(unix)]
    {
        let pid = child.id();
        let signal = |sig: &str| {
            let target = if group {
                format!("-{pid}")
            } else {
                pid.to_string()
            };
            let _ = Command::new("kill")
                .arg(sig)
                .arg("--")
                .arg(target)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        };
        signal("-TERM");
        if let Ok(Some(_)) = child.wait_timeout(Duration::from_secs(2)) {
            if group {
                signal("-KILL");
            }
            return;
        }
        if group {
            signal("-KILL");
        }
    }
    #[cfg(not(unix))]
    let _ = group;
    let _ = child.kill();
    let _ = child.wait();
}

fn wait(child: &mut Child, timeout: Option<Duration>, group: bool) -> Result<Outcome> {
    let status = match timeout {
        None => Some(child.wait().io(|| "waiting for QEMU".into())?),
        Some(t) => child.wait_timeout(t).io(|| "waiting for QEMU".into())?,
    };
    match status {
        Some(s) => Ok(Outcome::from_status(s)),
        None => {
            terminate(child, group);
            Ok(Outcome::TimedOut)
        }
    }
}

/// Runs QEMU with the terminal attached (the guest console reads stdin).
pub fn run_interactive(
    qemu: &Path,
    cfg: &QemuConfig,
    timeout: Option<Duration>,
) -> Result<Outcome> {
    let mut child = Command::new(qemu)
        .args(cfg.args())
        .spawn()
        .io(|| format!("could not start {}", qemu.display()))?;
    wait(&mut child, timeout, false)
}

/// Output of a captured run.
#[derive(Debug, Clone)]
pub struct Captured {
    /// How QEMU ended.
    pub outcome: Outcome,
    /// stdout and stderr interleaved, at most the cap.
    pub output: String,
    /// Whether output past the cap was dropped.
    pub truncated: bool,
}

/// Captured bytes and whether any were dropped.
type Sink = Arc<Mutex<(Vec<u8>, bool)>>;

fn read_capped(mut r: impl Read, cap: usize, sink: &Sink) {
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let mut guard = sink.lock().unwrap_or_else(|e| e.into_inner());
                let (out, truncated) = &mut *guard;
                let room = cap.saturating_sub(out.len());
                out.extend_from_slice(&buf[..n.min(room)]);
                *truncated |= n > room;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

/// Runs QEMU with stdin closed and stdout+stderr captured into one stream (up to `cap` bytes;
/// the rest is read and dropped so QEMU never blocks). QEMU leads its own process group, so a
/// timeout kill also ends anything it started.
pub fn run_captured(
    qemu: &Path,
    cfg: &QemuConfig,
    timeout: Duration,
    cap: usize,
) -> Result<Captured> {
    run_captured_args(qemu, cfg.args(), timeout, cap)
}

/// [`run_captured`] with QEMU arguments given whole (a [`QemuConfig`]'s, amended).
pub fn run_captured_args(
    qemu: &Path,
    args: Vec<OsString>,
    timeout: Duration,
    cap: usize,
) -> Result<Captured> {
    let (reader, writer) = std::io::pipe().io(|| "creating a pipe".into())?;
    let writer2 = writer.try_clone().io(|| "duplicating a pipe".into())?;
    let mut cmd = Command::new(qemu);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer2);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let spawned = cmd.spawn();
    // The Command holds our copies of the pipe's write end: drop them, or the reader never
    // sees end-of-file.
    drop(cmd);
    let mut child = spawned.io(|| format!("could not start {}", qemu.display()))?;
    let sink: Sink = Arc::default();
    let (done_tx, done_rx) = mpsc::channel();
    let thread_sink = Arc::clone(&sink);
    thread::spawn(move || {
        read_capped(reader, cap, &thread_sink);
        let _ = done_tx.send(());
    });
    let outcome = wait(&mut child, Some(timeout), cfg!(unix))?;
    // Normally the pipe closes with QEMU; should something else still hold it, take what
    // arrived and leave the reader behind.
    let _ = done_rx.recv_timeout(Duration::from_secs(2));
    let guard = sink.lock().unwrap_or_else(|e| e.into_inner());
    Ok(Captured {
        outcome,
        output: String::from_utf8_lossy(&guard.0).into_owned(),
        truncated: guard.1,
    })
}

/// QEMU's arguments for booting a Linux kernel directly, without the hypervisor (the
/// native baseline): the same machine as under the hypervisor, minus `virtualization=on`.
pub fn native_linux_args(
    cpu: Cpu,
    gic: Gic,
    smp: u32,
    mem: u64,
    kernel: &Path,
    initrd: &Path,
    append: &str,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "-M".to_string(),
        format!("virt,gic-version={}", gic.number()),
        "-cpu".into(),
        cpu.qemu_arg().into(),
        "-smp".into(),
        smp.to_string(),
        "-m".into(),
        format!("{}M", mem.div_ceil(1 << 20)),
        "-nographic".into(),
        // No default NIC (see `QemuConfig::args`).
        "-nic".into(),
        "none".into(),
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    args.extend([
        "-kernel".into(),
        kernel.as_os_str().to_owned(),
        "-initrd".into(),
        initrd.as_os_str().to_owned(),
        "-append".into(),
        append.into(),
    ]);
    args
}

/// `program arg arg ...` for messages, quoting arguments with spaces.
pub fn show_args(program: &Path, args: &[OsString]) -> String {
    let mut s = program.display().to_string();
    for a in args {
        let a = a.to_string_lossy();
        s.push(' ');
        if a.contains(' ') || a.is_empty() {
            s.push_str(&format!("\"{a}\""));
        } else {
            s.push_str(&a);
        }
    }
    s
}

/// A run whose output was echoed and watched for a marker.
#[derive(Debug, Clone)]
pub struct Watched {
    /// How QEMU ended.
    pub outcome: Outcome,
    /// When the marker first appeared, from the start of QEMU.
    pub marker_after: Option<Duration>,
    /// From the start of QEMU to its end.
    pub total: Duration,
    /// Everything QEMU printed on stdout (up to 1 MiB).
    pub output: String,
}

/// Runs QEMU with its stdout echoed to ours and watched for `marker` (stdin is the terminal
/// when `interactive`, closed otherwise; stderr is passed through).
pub fn run_watching(
    qemu: &Path,
    args: &[OsString],
    marker: &str,
    timeout: Option<Duration>,
    interactive: bool,
) -> Result<Watched> {
    let start = std::time::Instant::now();
    let mut cmd = Command::new(qemu);
    cmd.args(args).stdout(Stdio::piped());
    if !interactive {
        cmd.stdin(Stdio::null());
    }
    let mut child = cmd
        .spawn()
        .io(|| format!("could not start {}", qemu.display()))?;
    let stdout = child.stdout.take().expect("piped stdout");
    let marker = marker.as_bytes().to_vec();
    let reader = thread::spawn(move || {
        use std::io::Write;
        let mut stdout = stdout;
        let mut seen: Vec<u8> = Vec::new();
        let mut found = None;
        let mut buf = [0u8; 4096];
        loop {
            match stdout.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(&buf[..n]);
                    let _ = out.flush();
                    if seen.len() < (1 << 20) {
                        seen.extend_from_slice(&buf[..n]);
                    }
                    if found.is_none() && seen.windows(marker.len()).any(|w| w == marker) {
                        found = Some(start.elapsed());
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        (found, seen)
    });
    let outcome = wait(&mut child, timeout, false)?;
    let total = start.elapsed();
    let (marker_after, seen) = reader.join().unwrap_or((None, Vec::new()));
    Ok(Watched {
        outcome,
        marker_after,
        total,
        output: String::from_utf8_lossy(&seen).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> QemuConfig {
        QemuConfig {
            cpu: Cpu::Max,
            gic: Gic::V3,
            smp: 2,
            host_mem: 384 << 20,
            backend: Backend::Nvhe,
            gdb: false,
            kernel: "target/images/hypervisor.bin".into(),
            initrd: "target/images/package.bin".into(),
            disk: None,
            net: Net::None,
            boot: Boot::Kernel,
            platform: None,
        }
    }

    fn args(c: &QemuConfig) -> String {
        c.args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn command_line() {
        assert_eq!(
            args(&cfg()),
            "-M virt,virtualization=on,gic-version=3 -cpu max,pauth-impdef=on -smp 2 -m 384M \
             -nographic -nic none -semihosting -global virtio-mmio.force-legacy=false \
             -device virtio-rng-device -kernel target/images/hypervisor.bin \
             -initrd target/images/package.bin -append backend=nvhe exit=semihosting"
        );
        let mut c = cfg();
        c.cpu = Cpu::CortexA57;
        c.gic = Gic::V2;
        c.gdb = true;
        c.backend = Backend::Auto;
        c.host_mem = (384 << 20) + 1;
        let a = args(&c);
        assert!(a.contains("gic-version=2"), "{a}");
        assert!(a.contains("-cpu cortex-a57 "), "{a}");
        assert!(a.contains("-m 385M"), "{a}");
        assert!(
            a.ends_with("-append backend=auto exit=semihosting -s -S"),
            "{a}"
        );
        c.net = Net::User;
        let a = args(&c);
        assert!(
            a.contains(
                "-nographic -netdev user,id=n0 -device virtio-net-device,netdev=n0 -semihosting "
            ),
            "{a}"
        );
        assert!(!a.contains("-nic"), "{a}");
        assert!(a.contains("virtio-mmio.force-legacy=false"), "{a}");
        c.boot = Boot::Uefi {
            esp: "target/esp".into(),
            acpi: false,
        };
        c.platform = Some(Platform::ThunderX);
        let a = args(&c);
        assert!(
            a.contains("-M virt,virtualization=on,gic-version=2,acpi=off "),
            "{a}"
        );
        assert!(a.contains("-cpu a64fx,midr=0x431f0a11 "), "{a}");
        assert!(
            a.contains("-bios /usr/share/qemu-efi-aarch64/QEMU_EFI.fd"),
            "{a}"
        );
        assert!(a.contains("file=fat:target/esp"), "{a}");
        assert!(!a.contains("-kernel"), "{a}");
    }

    #[test]
    fn native_command_line() {
        let a = native_linux_args(
            Cpu::CortexA57,
            Gic::V2,
            2,
            512 << 20,
            Path::new("target/linux/Image"),
            Path::new("target/linux/initramfs.cpio.gz"),
            "console=ttyAMA0 test=1",
        );
        assert_eq!(
            show_args(Path::new("qemu"), &a),
            "qemu -M virt,gic-version=2 -cpu cortex-a57 -smp 2 -m 512M -nographic \
             -nic none -kernel target/linux/Image -initrd target/linux/initramfs.cpio.gz \
             -append \"console=ttyAMA0 test=1\""
        );
    }

    #[test]
    fn outcomes() {
        assert_eq!(Outcome::Exited(3).exit_code(), 3);
        assert_eq!(Outcome::Signaled(9).exit_code(), 137);
        assert_eq!(Outcome::TimedOut.exit_code(), TIMEOUT_EXIT_CODE);
    }

    #[test]
    fn capped_reading() {
        let data = vec![b'x'; 20_000];
        let sink = Sink::default();
        read_capped(&data[..], 100, &sink);
        assert_eq!(sink.lock().unwrap().0.len(), 100);
        assert!(sink.lock().unwrap().1);
        let sink = Sink::default();
        read_capped(&data[..], 1 << 20, &sink);
        assert_eq!(sink.lock().unwrap().0.len(), 20_000);
        assert!(!sink.lock().unwrap().1);
    }
}
