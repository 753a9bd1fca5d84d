//! Linux guest assets: Debian bookworm's stock arm64 kernel and an initramfs built from
//! Debian's `busybox-static:arm64`, fetched with `apt-get download` and cached under
//! `target/linux/` (later runs use the cache and need no network).
//!
//! ```text
//! target/linux/debs/      linux-image-6.1.0-N-arm64-unsigned_*_arm64.deb, busybox-static_*_arm64.deb
//! target/linux/kernel/    the kernel package, unpacked (dpkg-deb -x)
//! target/linux/busybox/   the busybox package, unpacked
//! target/linux/Image      the uncompressed arm64 Image (from /boot/vmlinuz-*)
//! target/linux/initramfs.cpio.gz
//! ```
//!
//! The initramfs (newc cpio, written by [`crate::cpio`], gzip) holds `/bin/busybox` (applet
//! links are made at boot with `busybox --install -s`), the virtio modules and their
//! dependencies from the same kernel package, and an `/init` script that prints
//! `linux-guest: userspace up`, then either starts a shell on the console or, with `test=1`
//! on the kernel command line, runs a scripted check and powers off (with `sha256_bench=1`,
//! the compute benchmark of [`sha256_bench`] and powers off).

pub mod armv7;
pub mod debs;
pub mod sha256_bench;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build::{has_arm64_image_header, Workspace};
use crate::cpio::CpioWriter;
use crate::error::{IoContext, Result};
use crate::fail;
use crate::setup;

/// The arm64 guest's Debian packages: the stock kernel, unsigned flavour (an uncompressed
/// `Image`), and `busybox-static:arm64`.
pub const ARM64: debs::Flavour = debs::Flavour {
    arch: "arm64",
    guest: "Linux guest",
    metapackage: "linux-image-arm64",
    depends_suffix: "-arm64",
    package_suffix: "-unsigned",
    kernel_is: "the stock kernel, an uncompressed Image",
};
/// Modules the initramfs loads (their dependencies come along).
pub const WANTED_MODULES: &[&str] = &[
    "virtio_mmio",
    "virtio_blk",
    "virtio_net",
    "virtio_console",
    "virtio_rng",
    // ext2 on the virtio disk (Debian's ext4 driver serves ext2: CONFIG_EXT4_USE_FOR_EXT2);
    // ext4 asks the crypto API for crc32c when it mounts.
    "crc32c_generic",
    "ext4",
];
/// The line `/init` prints once userspace runs.
pub const MARKER: &str = "linux-guest: userspace up";
/// The line `/init` prints when the scripted check (`test=1`) passed.
pub const PASS_MARKER: &str = "linux-guest: PASS";
/// Default kernel command line of a Linux guest.
pub const DEFAULT_CMDLINE: &str = "console=ttyAMA0";
/// Default memory of a Linux guest (enough for the kernel, its 64 MiB CMA area and the
/// initramfs; with the default host memory of VM + 256M the hypervisor finds room for it).
pub const DEFAULT_MEM: u64 = 256 << 20;

/// The cached files a Linux guest boots from.
#[derive(Debug, Clone)]
pub struct LinuxAssets {
    /// The uncompressed arm64 `Image`.
    pub image: PathBuf,
    /// The initramfs (gzip-compressed newc cpio).
    pub initramfs: PathBuf,
    /// `uname -r` of the kernel, e.g. `6.1.0-56-arm64`.
    pub release: String,
    /// The kernel package file.
    pub kernel_deb: PathBuf,
    /// The busybox package file.
    pub busybox_deb: PathBuf,
    /// Modules in the initramfs, in load order (paths under `/lib/modules/<release>/`).
    pub modules: Vec<String>,
}

impl LinuxAssets {
    /// Lines describing the assets, for the build summary.
    pub fn describe(&self) -> String {
        let name = |p: &Path| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        };
        let modules: Vec<String> = self.modules.iter().map(|m| module_name(m)).collect();
        format!(
            "Linux guest: kernel {} from {}, busybox from {}\n  initramfs modules (load order): {}",
            self.release,
            name(&self.kernel_deb),
            name(&self.busybox_deb),
            modules.join(" ")
        )
    }
}

/// `target/linux/`.
pub fn cache_dir(ws: &Workspace) -> PathBuf {
    ws.target.join("linux")
}

/// Makes sure the Linux assets exist (downloading the packages only when they are not
/// cached yet) and (re)builds the initramfs from the unpacked packages.
pub fn ensure_assets(ws: &Workspace) -> Result<LinuxAssets> {
    // Built once per xtask process, however many scenarios boot Linux.
    static BUILT: std::sync::OnceLock<LinuxAssets> = std::sync::OnceLock::new();
    if let Some(a) = BUILT.get() {
        return Ok(a.clone());
    }
    let assets = build_assets(ws)?;
    Ok(BUILT.get_or_init(|| assets).clone())
}

fn build_assets(ws: &Workspace) -> Result<LinuxAssets> {
    let dir = cache_dir(ws);
    let (kernel_deb, busybox_deb) = ARM64.ensure(&dir.join("debs"))?;
    let kernel_tree = unpack(&kernel_deb, &dir.join("kernel"))?;
    let busybox_tree = unpack(&busybox_deb, &dir.join("busybox"))?;

    let (vmlinuz, release) = find_vmlinuz(&kernel_tree)?;
    let image_bytes = fs::read(&vmlinuz).io(|| format!("reading {}", vmlinuz.display()))?;
    if !has_arm64_image_header(&image_bytes) {
        return Err(fail!(
            "{} is not an uncompressed arm64 Image (no \"ARM\\x64\" magic at 0x38); \
             xtask expects Debian's linux-image-*-arm64-unsigned package",
            vmlinuz.display()
        ));
    }
    let image = dir.join("Image");
    write_if_changed(&image, &image_bytes)?;

    pack_initramfs(
        &dir,
        "Linux",
        Unpacked {
            image,
            release,
            kernel_tree,
            busybox_tree,
            kernel_deb,
            busybox_deb,
        },
    )
}

/// A Linux guest's packages, unpacked, with its kernel image written into the cache.
pub(crate) struct Unpacked {
    /// The kernel image in the cache directory.
    pub image: PathBuf,
    /// Kernel release (`6.1.0-56-arm64`), the name of its `lib/modules` directory.
    pub release: String,
    /// Where the kernel package was unpacked.
    pub kernel_tree: PathBuf,
    /// Where the busybox package was unpacked.
    pub busybox_tree: PathBuf,
    /// The kernel package.
    pub kernel_deb: PathBuf,
    /// The busybox package.
    pub busybox_deb: PathBuf,
}

/// The part of building a Linux guest's assets that does not depend on the architecture:
/// reads busybox from `busybox_tree`, picks the wanted modules (and what they need) from
/// `kernel_tree`'s `lib/modules/<release>`, and writes `dir/initramfs.cpio.gz` (saying so,
/// with `label` naming the guest).
pub(crate) fn pack_initramfs(dir: &Path, label: &str, u: Unpacked) -> Result<LinuxAssets> {
    let Unpacked {
        image,
        release,
        kernel_tree,
        busybox_tree,
        kernel_deb,
        busybox_deb,
    } = u;
    let busybox_path = busybox_tree.join("bin/busybox");
    let busybox = fs::read(&busybox_path).io(|| {
        format!(
            "reading {} (from {})",
            busybox_path.display(),
            busybox_deb.display()
        )
    })?;
    let modules_dir = kernel_tree.join("lib/modules").join(&release);
    let index = ModuleIndex::scan(&modules_dir)?;
    let order = index
        .load_order(WANTED_MODULES)
        .map_err(|e| fail!("kernel modules in {}: {e}", modules_dir.display()))?;
    let mut module_files = Vec::new();
    for rel in &order {
        let p = modules_dir.join(rel);
        module_files.push((
            rel.clone(),
            fs::read(&p).io(|| format!("reading {}", p.display()))?,
        ));
    }
    let cpio = initramfs_cpio(
        &release,
        &busybox,
        &module_files,
        &index.modules_dep(&order),
    );
    let initramfs = dir.join("initramfs.cpio.gz");
    eprintln!(
        "xtask: packing the {label} initramfs: busybox + {} kernel modules, {:.1} MiB -> {}",
        module_files.len(),
        cpio.len() as f64 / f64::from(1 << 20),
        initramfs.display()
    );
    write_if_changed(&initramfs, &gzip(&cpio)?)?;
    Ok(LinuxAssets {
        image,
        initramfs,
        release,
        kernel_deb,
        busybox_deb,
        modules: order,
    })
}

/// Runs a command, returning its stdout; `Err` carries stderr.
pub(crate) fn output(
    program: &str,
    args: &[&str],
    cwd: Option<&Path>,
) -> std::result::Result<String, String> {
    let mut cmd = Command::new(program);
    cmd.args(args).env("LC_ALL", "C");
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(o) => Err(format!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("could not run `{program}`: {e}")),
    }
}

/// Unpacks `deb` into `dest` with `dpkg-deb -x`, unless `dest` already holds this package
/// (recorded in `dest/.unpacked-from`).
fn unpack(deb: &Path, dest: &Path) -> Result<PathBuf> {
    let stamp = dest.join(".unpacked-from");
    let from = deb
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    if fs::read_to_string(&stamp).is_ok_and(|s| s == from) {
        return Ok(dest.to_path_buf());
    }
    if setup::find_in_path("dpkg-deb").is_none() {
        return Err(fail!(
            "unpacking {} needs dpkg-deb, which is not installed (apt-get install dpkg, \
             or give your own kernel and initramfs with --kernel PATH --initrd PATH)",
            deb.display()
        ));
    }
    if dest.exists() {
        fs::remove_dir_all(dest).io(|| format!("removing {}", dest.display()))?;
    }
    fs::create_dir_all(dest).io(|| format!("creating {}", dest.display()))?;
    let deb_s = deb.to_string_lossy();
    let dest_s = dest.to_string_lossy();
    eprintln!("xtask: unpacking {deb_s}");
    output("dpkg-deb", &["-x", &deb_s, &dest_s], None).map_err(|e| fail!("{e}"))?;
    fs::write(&stamp, from).io(|| format!("writing {}", stamp.display()))?;
    Ok(dest.to_path_buf())
}

/// `/boot/vmlinuz-<release>` of an unpacked kernel package, and the release.
fn find_vmlinuz(tree: &Path) -> Result<(PathBuf, String)> {
    let boot = tree.join("boot");
    let found = fs::read_dir(&boot)
        .io(|| format!("reading {}", boot.display()))?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let release = name.strip_prefix("vmlinuz-")?.to_string();
            Some((e.path(), release))
        })
        .max_by(|a, b| a.1.cmp(&b.1));
    found.ok_or_else(|| fail!("no boot/vmlinuz-* in {}", tree.display()))
}

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<()> {
    if fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    fs::write(path, bytes).io(|| format!("writing {}", path.display()))
}

/// gzip, as the kernel's initramfs unpacker reads it (`CONFIG_RD_GZIP`).
pub fn gzip(data: &[u8]) -> Result<Vec<u8>> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data)
        .io(|| "compressing the initramfs".into())?;
    enc.finish().io(|| "compressing the initramfs".into())
}

/// The name the kernel knows a module by: file name without `.ko`, `-` as `_`
/// (`kernel/drivers/char/hw_random/virtio-rng.ko` -> `virtio_rng`).
pub fn module_name(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split(".ko").next().unwrap_or(file);
    stem.replace('-', "_")
}

/// Parses `modules.dep`: `path: dep-path dep-path ...` per line.
pub fn parse_modules_dep(text: &str) -> BTreeMap<String, Vec<String>> {
    text.lines()
        .filter_map(|l| {
            let (module, deps) = l.split_once(':')?;
            let module = module.trim();
            (!module.is_empty()).then(|| {
                (
                    module.to_string(),
                    deps.split_whitespace().map(str::to_string).collect(),
                )
            })
        })
        .collect()
}

/// The `depends=` names in the `.modinfo` section of a module (ELF64 or ELF32
/// little-endian: arm64 or armhf).
pub fn modinfo_depends(elf: &[u8]) -> std::result::Result<Vec<String>, String> {
    let modinfo = elf_section(elf, ".modinfo")?;
    Ok(modinfo
        .split(|&b| b == 0)
        .filter_map(|kv| kv.strip_prefix(b"depends="))
        .flat_map(|v| {
            String::from_utf8_lossy(v)
                .split(',')
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|s| !s.is_empty())
        .map(|s| s.replace('-', "_"))
        .collect())
}

/// The bytes of the section called `name` in an ELF64 or ELF32 little-endian file (a kernel
/// module), read with the `object` crate.
fn elf_section<'a>(elf: &'a [u8], name: &str) -> std::result::Result<&'a [u8], String> {
    use object::read::elf::{ElfFile32, ElfFile64};
    use object::{LittleEndian, Object, ObjectSection};
    fn find<'a>(file: &impl Object<'a>, name: &str) -> std::result::Result<&'a [u8], String> {
        let section = file
            .section_by_name(name)
            .ok_or_else(|| format!("no {name} section"))?;
        section
            .data()
            .map_err(|e| format!("truncated ELF section {name}: {e}"))
    }
    match ElfFile64::<LittleEndian>::parse(elf) {
        Ok(file) => find(&file, name),
        Err(e64) => match ElfFile32::<LittleEndian>::parse(elf) {
            Ok(file) => find(&file, name),
            Err(_) => Err(format!("not an ELF64 or ELF32 little-endian file: {e64}")),
        },
    }
}

/// Where the modules of one kernel are and what each depends on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleIndex {
    /// Module name -> path relative to `/lib/modules/<release>/`.
    pub paths: BTreeMap<String, String>,
    /// Module path -> paths of the modules it needs (direct or all; order does not matter).
    pub deps: BTreeMap<String, Vec<String>>,
}

impl ModuleIndex {
    /// From the text of a `modules.dep`.
    pub fn from_modules_dep(text: &str) -> Self {
        let deps = parse_modules_dep(text);
        let paths = deps.keys().map(|p| (module_name(p), p.clone())).collect();
        ModuleIndex { paths, deps }
    }

    /// From a `/lib/modules/<release>` directory: its `modules.dep` when there is one (a
    /// kernel package has none: depmod makes it at install time), else the `depends=` of each
    /// module's `.modinfo`, read for the modules that are asked for (see [`Self::load_order`]).
    pub fn scan(dir: &Path) -> Result<Self> {
        let dep = dir.join("modules.dep");
        if let Ok(text) = fs::read_to_string(&dep) {
            return Ok(Self::from_modules_dep(&text));
        }
        let mut paths = BTreeMap::new();
        let mut stack = vec![dir.join("kernel")];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d)
                .io(|| format!("reading {}", d.display()))?
                .flatten()
            {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if let Ok(rel) = p.strip_prefix(dir) {
                    let rel = rel.to_string_lossy().replace('\\', "/");
                    if rel.contains(".ko") {
                        paths.insert(module_name(&rel), rel);
                    }
                }
            }
        }
        // Read .modinfo for the wanted modules and, transitively, what they need.
        let mut deps = BTreeMap::new();
        let mut todo: Vec<String> = WANTED_MODULES.iter().map(|s| s.to_string()).collect();
        while let Some(name) = todo.pop() {
            let Some(rel) = paths.get(&name).cloned() else {
                continue; // load_order reports it
            };
            if deps.contains_key(&rel) {
                continue;
            }
            if !rel.ends_with(".ko") {
                return Err(fail!(
                    "{rel}: compressed kernel modules are not supported (only .ko)"
                ));
            }
            let bytes = fs::read(dir.join(&rel)).io(|| format!("reading {rel}"))?;
            let names = modinfo_depends(&bytes).map_err(|e| fail!("{rel}: {e}"))?;
            let mut dep_paths = Vec::new();
            for n in names {
                match paths.get(&n) {
                    Some(p) => dep_paths.push(p.clone()),
                    None => {
                        return Err(fail!(
                            "{rel} depends on {n}, which is not in {}",
                            dir.display()
                        ))
                    }
                }
                todo.push(n);
            }
            deps.insert(rel, dep_paths);
        }
        Ok(ModuleIndex { paths, deps })
    }

    /// The modules to load for `wanted`, dependencies first, each once.
    pub fn load_order(&self, wanted: &[&str]) -> std::result::Result<Vec<String>, String> {
        fn visit(
            idx: &ModuleIndex,
            path: &str,
            stack: &mut Vec<String>,
            out: &mut Vec<String>,
        ) -> std::result::Result<(), String> {
            if out.iter().any(|p| p == path) {
                return Ok(());
            }
            if stack.iter().any(|p| p == path) {
                return Err(format!(
                    "dependency cycle: {} -> {path}",
                    stack.join(" -> ")
                ));
            }
            stack.push(path.to_string());
            for dep in idx.deps.get(path).into_iter().flatten() {
                visit(idx, dep, stack, out)?;
            }
            stack.pop();
            out.push(path.to_string());
            Ok(())
        }
        let mut out = Vec::new();
        for name in wanted {
            let name = name.replace('-', "_");
            let path = self
                .paths
                .get(&name)
                .ok_or_else(|| format!("module {name} not found"))?;
            visit(self, path, &mut Vec::new(), &mut out)?;
        }
        Ok(out)
    }

    /// A `modules.dep` for `modules` (each with all its dependencies, nearest first), so
    /// `modprobe` works inside the guest too.
    pub fn modules_dep(&self, modules: &[String]) -> String {
        let mut text = String::new();
        for m in modules {
            let mut all = self
                .load_order(&[module_name(m).as_str()])
                .unwrap_or_default();
            all.retain(|p| p != m);
            all.reverse();
            text.push_str(&format!("{m}:"));
            for d in all {
                text.push(' ');
                text.push_str(&d);
            }
            text.push('\n');
        }
        text
    }
}

/// The `/init` script: mount, load `modules` in order, print the marker and facts, then a
/// shell, or (with `test=1` on the kernel command line) the scripted check and power-off.
pub fn init_script(release: &str, modules: &[String]) -> String {
    let mut insmods = String::new();
    for m in modules {
        insmods.push_str(&format!(
            "insmod /lib/modules/{release}/{m} || echo \"linux-guest: insmod {m} failed\"\n"
        ));
    }
    let wanted = WANTED_MODULES.join(" ");
    let sha256_bench = sha256_bench::script();
    format!(
        r#"#!/bin/busybox sh
# Generated by `cargo xtask` (xtask/src/linux.rs). Kernel {release}.
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts 2>/dev/null
{insmods}echo "{MARKER}"
echo "linux-guest: kernel $(uname -r), nproc $(nproc)"
echo "linux-guest: /proc/interrupts (head):"
head -n 12 /proc/interrupts

ipis() {{
    awk '/^ *IPI[0-9]/ {{ for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i }} END {{ print s + 0 }}' /proc/interrupts
}}

timer_irqs() {{
    awk '/arch_timer/ {{ for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i }} END {{ print s + 0 }}' /proc/interrupts
}}

# Uplink: with net_dhcp=1 on the command line, ask for a DHCP lease on eth0 (QEMU's
# user-mode network answers through the hypervisor's virtual switch and the host's virtio-net
# card: 10.0.2.15, gateway 10.0.2.2), configure it and print `linux-guest: dhcp lease <ip>`.
dhcp() {{
    ip link set lo up; ip link set eth0 up
    out=$(udhcpc -i eth0 -n -q -t 5 -s /bin/true 2>&1)
    lease=$(echo "$out" | sed -n 's/.*lease of \([0-9.]*\) obtained.*/\1/p' | head -n 1)
    if [ -z "$lease" ]; then
        echo "$out"
        return 1
    fi
    echo "linux-guest: dhcp lease $lease"
    ip addr add "$lease/24" dev eth0
    ip route add default via 10.0.2.2 2>/dev/null
    return 0
}}

{sha256_bench}
if grep -qw 'test=1' /proc/cmdline; then
    fail=0
    for m in {wanted}; do
        grep -q "^$m " /proc/modules || {{ echo "linux-guest: FAIL: module $m not loaded"; fail=1; }}
    done
    want=$(sed -n 's/.*expect_nproc=\([0-9]*\).*/\1/p' /proc/cmdline)
    if [ -n "$want" ] && [ "$(nproc)" != "$want" ]; then
        echo "linux-guest: FAIL: nproc $(nproc), expected $want"; fail=1
    fi
    t1=$(timer_irqs); sleep 1; t2=$(timer_irqs)
    echo "linux-guest: timer interrupts $t1 -> $t2"
    [ "$t2" -gt "$t1" ] || {{ echo "linux-guest: FAIL: timer interrupts do not rise"; fail=1; }}
    if [ "$(nproc)" -gt 1 ]; then
        # Busy shells on every CPU (informational: the kernel may keep every child on the
        # forking CPU, and then sends no IPI).
        i0=$(ipis)
        for k in $(seq 1 $(( $(nproc) * 2 ))); do
            (n=0; while [ $n -lt 3000 ]; do n=$((n + 1)); done) &
        done
        wait
        i1=$(ipis)
        echo "linux-guest: IPIs (busy shells) $i0 -> $i1"
        [ "$i1" -gt "$i0" ] || grep -E 'IPI|arch_timer' /proc/interrupts
        # The check: a child pinned to each CPU in turn (taskset, masks 1, 2, 4, ...) while the
        # shell waits for it: at least one CPU in each round is not the shell's, so the child
        # is moved to another CPU and its exit wakes the shell across CPUs, and the kernel
        # must send IPIs (rescheduling, call-function) whatever the scheduler chose before.
        for round in 1 2 3; do
            c=0
            while [ $c -lt "$(nproc)" ]; do
                taskset "$(printf %x $((1 << c)))" true
                c=$((c + 1))
            done
        done
        i2=$(ipis)
        echo "linux-guest: IPIs $i1 -> $i2"
        [ "$i1" -gt 0 ] && [ "$i2" -gt "$i1" ] || {{ echo "linux-guest: FAIL: IPIs do not rise"; grep -E 'IPI|arch_timer' /proc/interrupts; fail=1; }}
    fi
    echo "linux-guest: virtio devices: $(ls /sys/bus/virtio/devices | wc -l)"
    # Warnings caused by the hypervisor would show in the kernel log. `cwg_ok=1`: the CPU
    # model's cache writeback granule exceeds the kernel's DMA alignment (QEMU's a64fx,
    # CTR_EL0.CWG = 256 bytes, the ThunderX profile's stand-in): that warning is the CPU's.
    cwg=cat
    grep -qw 'cwg_ok=1' /proc/cmdline && cwg="grep -v -e arch_setup_dma_ops -e CTR_EL0.CWG"
    if dmesg | $cwg | grep -iE 'WARNING:|BUG:|rcu.*stall|GIC.*(unexpected|fail)|arch_timer.*(fail|error)|psci.*(fail|error)|Unhandled|Internal error' ; then
        echo "linux-guest: FAIL: kernel log has warnings (above)"; fail=1
    fi
    # Disk: the first boot makes an ext2 filesystem on /dev/vda, mounts it, writes a file
    # and reboots; the second boot mounts it again and finds the file (the VM restarts on
    # SYSTEM_RESET; the disk keeps its contents), then powers off.
    if [ -b /dev/vda ]; then
        mkdir -p /mnt
        if mount -t ext2 /dev/vda /mnt 2>/dev/null && [ -f /mnt/marker ]; then
            echo "linux-guest: disk marker found after reboot: $(cat /mnt/marker) ($(df -k /mnt | tail -n 1))"
            umount /mnt
            rebooted=1
        else
            umount /mnt 2>/dev/null
            if mke2fs -q -F /dev/vda && mount -t ext2 /dev/vda /mnt; then
                echo "LINUX-DISK-MARKER $(cat /proc/sys/kernel/random/boot_id)" > /mnt/marker
                sync
                umount /mnt
                echo "linux-guest: disk marker written (ext2 on /dev/vda, mounted and unmounted)"
            else
                echo "linux-guest: FAIL: cannot make or mount an ext2 filesystem on /dev/vda"; fail=1
            fi
        fi
    else
        echo "linux-guest: FAIL: no /dev/vda"; fail=1
    fi
    # Network: with net_ip=A net_peer=B on the command line, ping the other VM through the
    # hypervisor's virtual switch: up to net_tries=N one-second pings (default 20; a VM
    # beside a slower one, e.g. one under the DBT, waits longer). After a reboot
    # (reboot_test=1) the ping of the first boot stands: the peer may have powered off.
    ip_addr=$(sed -n 's/.*net_ip=\([0-9.]*\).*/\1/p' /proc/cmdline)
    peer=$(sed -n 's/.*net_peer=\([0-9.]*\).*/\1/p' /proc/cmdline)
    [ -n "$rebooted" ] && [ -n "$peer" ] && echo "linux-guest: ping $peer checked before the reboot" && peer=
    tries=$(sed -n 's/.*net_tries=\([0-9]*\).*/\1/p' /proc/cmdline)
    if [ -n "$ip_addr" ]; then
        ip link set lo up; ip link set eth0 up; ip addr add "$ip_addr/24" dev eth0
        if [ -n "$peer" ]; then
            ok=0
            for i in $(seq 1 "${{tries:-20}}"); do
                if ping -c 1 -W 1 "$peer" >/dev/null 2>&1; then ok=1; break; fi
            done
            if [ $ok = 1 ]; then echo "linux-guest: ping $peer ok"; else echo "linux-guest: FAIL: ping $peer"; fail=1; fi
            sleep 3   # stay up a moment so the peer's pings are answered too
        fi
    fi
    [ -e /sys/class/net/eth0/address ] && echo "linux-guest: eth0 mac $(cat /sys/class/net/eth0/address)"
    if grep -qw 'net_dhcp=1' /proc/cmdline; then
        if dhcp; then
            if ping -c 1 -W 2 10.0.2.2 >/dev/null 2>&1; then
                echo "linux-guest: ping 10.0.2.2 ok"
            else
                echo "linux-guest: ping 10.0.2.2: no answer"
            fi
        else
            echo "linux-guest: FAIL: no DHCP lease on eth0"; fail=1
        fi
    fi
    if [ $fail = 0 ]; then echo "{PASS_MARKER}"; else echo "linux-guest: FAIL"; fi
    if [ -b /dev/vda ] && [ -z "$rebooted" ] && [ $fail = 0 ] && grep -qw 'reboot_test=1' /proc/cmdline; then
        echo "linux-guest: rebooting"
        reboot -f
        sleep 10
    fi
    poweroff -f
    sleep 10
fi

grep -qw 'net_dhcp=1' /proc/cmdline && dhcp
echo "linux-guest: shell on the console; 'poweroff -f' ends the VM"
while true; do
    setsid cttyhack sh || sh
done
"#
    )
}

/// The initramfs as a newc archive.
pub fn initramfs_cpio(
    release: &str,
    busybox: &[u8],
    modules: &[(String, Vec<u8>)],
    modules_dep: &str,
) -> Vec<u8> {
    let mut w = CpioWriter::new();
    for d in [
        "bin",
        "sbin",
        "usr",
        "usr/bin",
        "usr/sbin",
        "dev",
        "proc",
        "sys",
        "tmp",
        "root",
        "etc",
        "lib",
        "lib/modules",
    ] {
        w.dir(d, 0o755);
    }
    w.char_dev("dev/console", 0o600, 5, 1);
    w.char_dev("dev/null", 0o666, 1, 3);
    w.file("bin/busybox", 0o755, busybox);
    w.symlink("bin/sh", "busybox");
    let base = format!("lib/modules/{release}");
    w.dir(&base, 0o755);
    for (rel, bytes) in modules {
        let path = format!("{base}/{rel}");
        // Parent directories first.
        let mut prefix = base.clone();
        for part in rel
            .split('/')
            .collect::<Vec<_>>()
            .split_last()
            .map(|(_, d)| d)
            .unwrap_or_default()
        {
            prefix = format!("{prefix}/{part}");
            if !w.contains(&prefix) {
                w.dir(&prefix, 0o755);
            }
        }
        w.file(&path, 0o644, bytes);
    }
    w.file(
        &format!("{base}/modules.dep"),
        0o644,
        modules_dep.as_bytes(),
    );
    let names: Vec<String> = modules.iter().map(|(r, _)| r.clone()).collect();
    w.file("init", 0o755, init_script(release, &names).as_bytes());
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of a real `modules.dep` (Debian 6.1 arm64), plus one made-up chain.
    const DEP: &str = "\
kernel/drivers/virtio/virtio_mmio.ko:
kernel/drivers/block/virtio_blk.ko:
kernel/net/core/failover.ko:
kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko
kernel/drivers/net/virtio_net.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko
kernel/drivers/char/virtio_console.ko:
kernel/drivers/char/hw_random/virtio-rng.ko:
kernel/fs/fuse/virtiofs.ko: kernel/fs/fuse/fuse.ko
kernel/fs/fuse/fuse.ko:
kernel/fs/ext4/ext4.ko: kernel/fs/jbd2/jbd2.ko kernel/fs/mbcache.ko kernel/lib/crc16.ko
kernel/fs/jbd2/jbd2.ko:
kernel/fs/mbcache.ko:
kernel/lib/crc16.ko:
kernel/crypto/crc32c_generic.ko:
";

    #[test]
    fn module_names() {
        assert_eq!(
            module_name("kernel/drivers/char/hw_random/virtio-rng.ko"),
            "virtio_rng"
        );
        assert_eq!(module_name("kernel/net/core/failover.ko"), "failover");
        assert_eq!(module_name("a/b.ko.xz"), "b");
    }

    #[test]
    fn modules_dep_parsing() {
        let deps = parse_modules_dep(DEP);
        assert_eq!(deps.len(), 14);
        assert_eq!(
            deps["kernel/drivers/net/virtio_net.ko"],
            [
                "kernel/drivers/net/net_failover.ko",
                "kernel/net/core/failover.ko"
            ]
        );
        assert!(deps["kernel/drivers/virtio/virtio_mmio.ko"].is_empty());
    }

    #[test]
    fn load_order_puts_dependencies_first() {
        let idx = ModuleIndex::from_modules_dep(DEP);
        let order = idx.load_order(WANTED_MODULES).unwrap();
        assert_eq!(
            order,
            [
                "kernel/drivers/virtio/virtio_mmio.ko",
                "kernel/drivers/block/virtio_blk.ko",
                "kernel/net/core/failover.ko",
                "kernel/drivers/net/net_failover.ko",
                "kernel/drivers/net/virtio_net.ko",
                "kernel/drivers/char/virtio_console.ko",
                "kernel/drivers/char/hw_random/virtio-rng.ko",
                "kernel/crypto/crc32c_generic.ko",
                "kernel/fs/jbd2/jbd2.ko",
                "kernel/fs/mbcache.ko",
                "kernel/lib/crc16.ko",
                "kernel/fs/ext4/ext4.ko",
            ]
        );
        // Asking for a dependency again does not load it twice.
        let again = idx
            .load_order(&["failover", "virtio_net", "net_failover"])
            .unwrap();
        assert_eq!(again.len(), 3);
        assert_eq!(again[0], "kernel/net/core/failover.ko");
        assert!(idx.load_order(&["nosuch"]).unwrap_err().contains("nosuch"));
    }

    #[test]
    fn direct_dependencies_are_enough() {
        // A modules.dep with only direct dependencies (as .modinfo gives them) orders the same.
        let direct = "a.ko: b.ko\nb.ko: c.ko\nc.ko:\n";
        let idx = ModuleIndex::from_modules_dep(direct);
        assert_eq!(idx.load_order(&["a"]).unwrap(), ["c.ko", "b.ko", "a.ko"]);
        assert_eq!(idx.modules_dep(&["a.ko".into()]), "a.ko: b.ko c.ko\n");
    }

    #[test]
    fn cycles_are_reported() {
        let idx = ModuleIndex::from_modules_dep("a.ko: b.ko\nb.ko: a.ko\n");
        assert!(idx.load_order(&["a"]).unwrap_err().contains("cycle"));
    }

    /// A minimal ELF64 with a section-name table and a `.modinfo` section.
    fn fake_module(modinfo: &[u8]) -> Vec<u8> {
        let shstrtab = b"\0.shstrtab\0.modinfo\0";
        let mut elf = vec![0u8; 64];
        // e_ident: ELFCLASS64, ELFDATA2LSB, EV_CURRENT; ET_REL for EM_AARCH64, e_ehsize.
        elf[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
        elf[0x10..0x12].copy_from_slice(&1u16.to_le_bytes());
        elf[0x12..0x14].copy_from_slice(&183u16.to_le_bytes());
        elf[0x14..0x18].copy_from_slice(&1u32.to_le_bytes());
        elf[0x34..0x36].copy_from_slice(&64u16.to_le_bytes());
        let str_off = elf.len();
        elf.extend_from_slice(shstrtab);
        let info_off = elf.len();
        elf.extend_from_slice(modinfo);
        while !elf.len().is_multiple_of(8) {
            elf.push(0);
        }
        let shoff = elf.len();
        // SHT_NULL, SHT_STRTAB, SHT_PROGBITS
        let mut sh = |name: u32, kind: u32, off: usize, size: usize| {
            let mut h = [0u8; 64];
            h[..4].copy_from_slice(&name.to_le_bytes());
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[24..32].copy_from_slice(&(off as u64).to_le_bytes());
            h[32..40].copy_from_slice(&(size as u64).to_le_bytes());
            elf.extend_from_slice(&h);
        };
        sh(0, 0, 0, 0);
        sh(1, 3, str_off, shstrtab.len());
        sh(11, 1, info_off, modinfo.len());
        elf[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        elf[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        elf[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        elf[0x3e..0x40].copy_from_slice(&1u16.to_le_bytes());
        elf
    }

    #[test]
    fn modinfo_dependencies() {
        let elf = fake_module(b"license=GPL\0depends=net_failover,foo-bar\0name=virtio_net\0");
        assert_eq!(modinfo_depends(&elf).unwrap(), ["net_failover", "foo_bar"]);
        let none = fake_module(b"depends=\0name=virtio_mmio\0");
        assert!(modinfo_depends(&none).unwrap().is_empty());
        assert!(modinfo_depends(b"not elf").is_err());
        assert!(modinfo_depends(&fake_module(b"")[..70]).is_err());
    }

    #[test]
    fn kernel_package_names() {
        let out = "linux-image-arm64:arm64\n  Depends: linux-image-6.1.0-56-arm64:arm64\n";
        assert_eq!(
            ARM64.kernel_package_from_depends(out).as_deref(),
            Some("linux-image-6.1.0-56-arm64-unsigned")
        );
        assert_eq!(
            ARM64.kernel_package_from_depends("W: Unable to locate package"),
            None
        );
        assert!(ARM64.is_kernel_deb("linux-image-6.1.0-56-arm64-unsigned_6.1.192-2_arm64.deb"));
        assert!(!ARM64.is_kernel_deb("linux-image-6.1.0-56-arm64_6.1.192-2_arm64.deb"));
        assert!(!ARM64.is_kernel_deb("busybox-static_1%3a1.35.0-4_arm64.deb"));
        assert!(ARM64.commands().contains(
            "s/.*Depends: \\(linux-image-[^:]*\\).*/\\1-unsigned:arm64/p') busybox-static:arm64"
        ));
    }

    #[test]
    fn initramfs_layout() {
        let idx = ModuleIndex::from_modules_dep(DEP);
        let order = idx.load_order(&["virtio_net"]).unwrap();
        let mods: Vec<(String, Vec<u8>)> = order
            .iter()
            .map(|p| (p.clone(), p.as_bytes().to_vec()))
            .collect();
        let bytes = initramfs_cpio("6.1.0-56-arm64", b"BB", &mods, &idx.modules_dep(&order));
        let entries = crate::cpio::read(&bytes).unwrap();
        let find = |n: &str| {
            entries
                .iter()
                .find(|e| e.name == n)
                .unwrap_or_else(|| panic!("{n} missing"))
        };
        assert_eq!(find("bin/busybox").data, b"BB");
        assert_eq!(find("bin/busybox").mode, 0o100755);
        assert_eq!(find("bin/sh").data, b"busybox");
        assert_eq!(find("dev/console").rdev, (5, 1));
        assert_eq!(find("init").mode, 0o100755);
        let init = String::from_utf8(find("init").data.clone()).unwrap();
        assert!(init.starts_with("#!/bin/busybox sh\n"));
        assert!(init.contains(MARKER));
        let fo = init.find("kernel/net/core/failover.ko").unwrap();
        let nf = init.find("kernel/drivers/net/net_failover.ko").unwrap();
        let vn = init.find("kernel/drivers/net/virtio_net.ko").unwrap();
        assert!(fo < nf && nf < vn, "insmod in dependency order");
        let dep =
            String::from_utf8(find("lib/modules/6.1.0-56-arm64/modules.dep").data.clone()).unwrap();
        assert!(dep.contains("kernel/drivers/net/virtio_net.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko"), "{dep}");
        // Every directory comes before anything inside it.
        for (i, e) in entries.iter().enumerate() {
            if let Some((parent, _)) = e.name.rsplit_once('/') {
                let pi = entries
                    .iter()
                    .position(|p| p.name == parent)
                    .unwrap_or_else(|| panic!("no {parent}"));
                assert!(pi < i, "{parent} after {}", e.name);
            }
        }
    }

    #[test]
    fn missing_packages_say_what_to_do() {
        let msg = ARM64
            .missing(
                Path::new("target/linux/debs"),
                "`apt-get` is not installed, so",
            )
            .to_string();
        println!("{msg}");
        for want in [
            "target/linux/debs",
            "linux-image-6.1.0-*-arm64-unsigned_*_arm64.deb",
            "busybox-static_*_arm64.deb",
            "dpkg --add-architecture arm64 && apt-get update",
            "apt-get download",
            "--kernel PATH --initrd PATH",
        ] {
            assert!(msg.contains(want), "{want:?} missing from:\n{msg}");
        }
    }

    #[test]
    fn gzip_round_trips() {
        use std::io::Read;
        let data = b"hello initramfs".repeat(100);
        let gz = gzip(&data).unwrap();
        assert_eq!(&gz[..2], &[0x1f, 0x8b]);
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, data);
    }
}
