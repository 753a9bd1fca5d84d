//! Counting a boot in instructions: a QEMU TCG plugin counts every instruction all CPUs
//! execute (guest and hypervisor alike; a CPU halted in `WFI` executes none) and notes the
//! count each time a byte is stored to the console UART's data register. The console log
//! says which byte ends which line, so the count at any line is known: the boot figure is
//! the count at the end of `Run /init as init process` minus the count when the guest was
//! handed the CPU (the end of the hypervisor's `[hv] scheduler:` boot line; 0 natively). It
//! depends only on what was executed, not on where QEMU's virtual clock jumped over idle
//! periods, and is identical from run to run (`-icount`, one TCG thread).
//!
//! Hypervisor instructions are told from guest ones as in `bench --profile`: the hypervisor
//! runs identity-mapped, so host address minus virtual address is one constant for all of
//! its code (learnt from the first instruction QEMU translates, its entry with the MMU off).

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

use crate::error::{IoContext, Result};
use crate::fail;

/// Longest a counted boot may take (the plugin slows QEMU down a few times).
const TIMEOUT: Duration = Duration::from_secs(600);

/// The physical address of the console UART's data register (QEMU `virt` PL011 `UARTDR`).
pub const UART_DR: u64 = 0x0900_0000;

/// The counting plugin (QEMU plugin API version 1, as in QEMU 7.2; the declarations it
/// needs are written out, so no QEMU headers are required). Arguments: `uart=` (the
/// physical address whose stores are console bytes), `base=`/`size=` (the hypervisor
/// image, `size=0` natively), `out=` (the file it writes: one `total el2` line per console
/// byte, in output order).
const PLUGIN_C: &str = concat!(
    crate::bench_profile::qemu_plugin_api!(),
    r#"
static uint64_t base, size, uart, total, el2, *marks;
static size_t nmarks, cap;
static int64_t delta;
static int have_delta;
static char out[4096];
static void store(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *u) {
    struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
    if (!hw || !qemu_plugin_hwaddr_is_io(hw) || qemu_plugin_hwaddr_phys_addr(hw) != uart)
        return;
    if (nmarks + 2 > cap) {
        cap = cap ? 2 * cap : 1 << 16;
        marks = realloc(marks, cap * sizeof *marks);
        if (!marks) abort();
    }
    marks[nmarks++] = total;
    marks[nmarks++] = el2;
}
static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t va = qemu_plugin_insn_vaddr(insn);
        int64_t d = (int64_t)(uintptr_t)qemu_plugin_insn_haddr(insn) - (int64_t)va;
        if (!have_delta) { delta = d; have_delta = 1; }
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &total, 1);
        if (size && d == delta && va >= base && va - base < size)
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &el2, 1);
        /* A64 loads and stores (op0 = x1x0, bits 27 and 25), and every A32/T32
           instruction (2-byte or other encodings are not decoded here). */
        uint32_t w = 0;
        if (qemu_plugin_insn_size(insn) == 4) memcpy(&w, qemu_plugin_insn_data(insn), 4);
        if (qemu_plugin_insn_size(insn) != 4 || (w & 0x0a000000) == 0x08000000)
            qemu_plugin_register_vcpu_mem_cb(insn, store, QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_W, 0);
    }
}
static void done(qemu_plugin_id_t id, void *p) {
    FILE *f = fopen(out, "w");
    if (!f) return;
    for (size_t i = 0; i + 1 < nmarks; i += 2)
        fprintf(f, "%llu %llu\n", (unsigned long long)marks[i], (unsigned long long)marks[i + 1]);
    fclose(f);
}
__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        if (!strncmp(argv[i], "base=", 5)) base = strtoull(argv[i] + 5, 0, 0);
        if (!strncmp(argv[i], "size=", 5)) size = strtoull(argv[i] + 5, 0, 0);
        if (!strncmp(argv[i], "uart=", 5)) uart = strtoull(argv[i] + 5, 0, 0);
        if (!strncmp(argv[i], "out=", 4)) snprintf(out, sizeof out, "%s", argv[i] + 4);
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
    qemu_plugin_register_atexit_cb(id, done, 0);
    return 0;
}
"#
);

/// Builds the plugin into `dir` (once per content); returns the shared object.
pub fn build_plugin(dir: &Path) -> Result<PathBuf> {
    crate::bench_profile::build_qemu_plugin(dir, "bootcount", PLUGIN_C, "the counted Linux boot")
}

/// The `-plugin` argument: count into `out`; `image` = the hypervisor's `(base, size)`.
pub fn plugin_arg(so: &Path, out: &Path, image: Option<(u64, u64)>) -> String {
    let (base, size) = image.unwrap_or((0, 0));
    format!(
        "{},uart={UART_DR:#x},base={base:#x},size={size:#x},out={}",
        so.display(),
        out.display()
    )
}

/// Runs QEMU with the console (stdout) into `log` and its own messages (stderr) into
/// `log` + `.stderr`, so that the console's bytes are exactly the UART's; returns them.
pub fn run(qemu_path: &Path, args: &[OsString], log: &Path) -> Result<Vec<u8>> {
    run_for(qemu_path, args, log, TIMEOUT)
}

/// [`run`] with its own time limit.
pub fn run_for(
    qemu_path: &Path,
    args: &[OsString],
    log: &Path,
    timeout: Duration,
) -> Result<Vec<u8>> {
    run_until(qemu_path, args, log, timeout, &[])
}

/// How often [`run_until`] looks at the console for a line that ends the run.
const POLL: Duration = Duration::from_secs(2);

/// [`run_for`] that also ends QEMU (an error naming the line) as soon as the console shows a
/// line containing one of `stop_on` (e.g. `Kernel panic`: the guest will not go on, and
/// waiting for the time limit would waste minutes).
pub fn run_until(
    qemu_path: &Path,
    args: &[OsString],
    log: &Path,
    timeout: Duration,
    stop_on: &[&str],
) -> Result<Vec<u8>> {
    let err_path = log.with_extension("stderr");
    let out = fs::File::create(log).io(|| format!("creating {}", log.display()))?;
    let err = fs::File::create(&err_path).io(|| format!("creating {}", err_path.display()))?;
    let mut child = Command::new(qemu_path)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .io(|| format!("could not start {}", qemu_path.display()))?;
    let start = std::time::Instant::now();
    let stopped = loop {
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            break Some(format!(
                "timed out after {} s (log: {})",
                timeout.as_secs(),
                log.display()
            ));
        }
        let wait = if stop_on.is_empty() {
            left
        } else {
            left.min(POLL)
        };
        if child
            .wait_timeout(wait)
            .io(|| "waiting for QEMU".into())?
            .is_some()
        {
            break None;
        }
        let console = fs::read(log).unwrap_or_default();
        let text = String::from_utf8_lossy(&console);
        if let Some(line) = text.lines().find(|l| stop_on.iter().any(|s| l.contains(s))) {
            break Some(format!(
                "stopped at `{}` (log: {})",
                line.trim(),
                log.display()
            ));
        }
    };
    if let Some(why) = stopped {
        let _ = child.kill();
        let _ = child.wait();
        return Err(fail!("{why}"));
    }
    fs::read(log).io(|| format!("reading {}", log.display()))
}

/// Instructions (all, and the hypervisor's) when each console byte was stored, in order.
pub fn read_marks(path: &Path) -> Result<Vec<(u64, u64)>> {
    let text = fs::read_to_string(path).io(|| format!("reading {}", path.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let (a, b) = l.split_once(' ')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect())
}

/// Byte offset of the newline ending the first line of `console` that contains `needle`
/// (`starts` = the line must start with it).
pub fn line_end(console: &[u8], needle: &str, starts: bool) -> Option<usize> {
    let mut at = 0;
    for line in console.split_inclusive(|&b| b == b'\n') {
        let text = String::from_utf8_lossy(line);
        let hit = if starts {
            text.starts_with(needle)
        } else {
            text.contains(needle)
        };
        if hit && line.ends_with(b"\n") {
            return Some(at + line.len() - 1);
        }
        at += line.len();
    }
    None
}

/// What one counted boot gives: instructions from the hand-over to the kernel to the end
/// of the `Run /init` line, and how many of them the hypervisor executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    /// All CPUs, guest and hypervisor.
    pub total: u64,
    /// The hypervisor's part.
    pub el2: u64,
    /// Instructions before the hand-over (the hypervisor's own boot; 0 natively).
    pub before: u64,
}

/// The counted boot from the console bytes and the plugin's marks: `start` = the line that
/// ends the hypervisor's boot (`None` natively: counted from reset), `end` = the line whose
/// end is the event. `None` when a line is missing or the console and the marks disagree.
pub fn counted(
    console: &[u8],
    marks: &[(u64, u64)],
    start: Option<&str>,
    end: &str,
) -> Option<Counted> {
    let at_end = *marks.get(line_end(console, end, false)?)?;
    let at_start = match start {
        Some(s) => *marks.get(line_end(console, s, true)?)?,
        None => (0, 0),
    };
    Some(Counted {
        total: at_end.0.checked_sub(at_start.0)?,
        el2: at_end.1.checked_sub(at_start.1)?,
        before: at_start.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_between_lines() {
        let console =
            b"[hv] boot\n[hv] scheduler: 2 on 2\nguest\n[ 1.0] Run /init as init process\nx\n";
        let marks: Vec<(u64, u64)> = (0..console.len() as u64).map(|i| (i * 10, i)).collect();
        let s = line_end(console, "[hv] scheduler:", true).unwrap();
        assert_eq!(console[s], b'\n');
        let c = counted(console, &marks, Some("[hv] scheduler:"), "Run /init").unwrap();
        let e = line_end(console, "Run /init", false).unwrap();
        assert_eq!(c.total, (e - s) as u64 * 10);
        assert_eq!(c.el2, (e - s) as u64);
        assert_eq!(c.before, s as u64 * 10);
        let native = counted(console, &marks, None, "Run /init").unwrap();
        assert_eq!(native.total, e as u64 * 10);
        assert_eq!(counted(console, &marks, None, "no such line"), None);
        // Fewer marks than console bytes: the console and the plugin disagree.
        assert_eq!(counted(console, &marks[..10], None, "Run /init"), None);
    }
}
