//! The compute benchmark inside a Linux guest: with `sha256_bench=1` on the kernel command
//! line, `/init` fills a 16 MiB file in a fresh tmpfs with zeros, runs busybox `sha256sum`
//! on it and prints the digest and the virtual time the command took, then powers off.
//! Before that it times the same command on an empty file: what starting and ending the
//! command costs (the shell's fork for `$(...)`, the applet's start, `open`, exit), so that
//! the hashing itself is the difference of the two.
//!
//! The time is the kernel's own: `/init` writes a line to `/dev/kmsg` before and after the
//! command, and the kernel prints both on the console with its timestamp (microseconds of
//! the guest's clock, the architected counter); their difference is the figure. Under QEMU's
//! `-icount shift=0` one virtual nanosecond is one instruction of the machine QEMU emulates,
//! so the figure counts what the command cost there: A32/T32 instructions natively under
//! `qemu-system-arm`, guest plus hypervisor instructions in hardware AArch32, the translated
//! A64 code and the translator's own under the DBT. It is identical from run to run. The
//! guest does no arithmetic on it (under the DBT a `dmesg | sed | awk` pipeline takes
//! minutes of wall time).
//!
//! ```text
//! [   12.300000] linux-guest: sha256 empty begin
//! [   12.301000] linux-guest: sha256 empty end
//! [   12.345678] linux-guest: sha256 begin
//! [   13.456789] linux-guest: sha256 end
//! linux-guest: sha256sum 16 MiB: 080acf35...643e
//! ```

/// The kernel command-line word that selects the benchmark.
pub const CMDLINE_WORD: &str = "sha256_bench=1";
/// Size of the hashed file, MiB.
pub const FILE_MIB: u32 = 16;
/// The SHA-256 of [`FILE_MIB`] MiB of zero bytes (`head -c 16M /dev/zero | sha256sum`; the
/// unit test recomputes it with the host's `sha256sum`).
pub const EXPECTED_DIGEST: &str =
    "080acf35a507ac9849cfcba47dc2ad83e01b75663a516279c8b9d243b719643e";
/// The `/dev/kmsg` line before the command (the kernel timestamps it).
pub const BEGIN_LINE: &str = "linux-guest: sha256 begin";
/// The `/dev/kmsg` line after the command.
pub const END_LINE: &str = "linux-guest: sha256 end";
/// The `/dev/kmsg` line before the same command on an empty file (its cost is that of
/// starting and ending the command: the shell's fork, the applet's start, open, exit).
pub const EMPTY_BEGIN_LINE: &str = "linux-guest: sha256 empty begin";
/// The `/dev/kmsg` line after the command on the empty file.
pub const EMPTY_END_LINE: &str = "linux-guest: sha256 empty end";
/// The start of the line `/init` prints with the digest.
pub const RESULT_PREFIX: &str = "linux-guest: sha256sum ";

/// The part of `/init` that runs the benchmark when [`CMDLINE_WORD`] is on the command line
/// (a shell fragment; it ends with `poweroff -f`).
pub fn script() -> String {
    format!(
        r#"# Compute benchmark ({CMDLINE_WORD}): sha256sum of {FILE_MIB} MiB of zeros in a tmpfs, timed by
# the kernel's console timestamps of the two /dev/kmsg lines around it, then power off.
if grep -qw '{CMDLINE_WORD}' /proc/cmdline; then
    mkdir -p /bench && mount -t tmpfs -o size={tmpfs_mib}m tmpfs /bench
    dd if=/dev/zero of=/bench/data bs=1048576 count={FILE_MIB} 2>/dev/null
    : > /bench/empty
    echo "{EMPTY_BEGIN_LINE}" > /dev/kmsg
    none=$(sha256sum /bench/empty)
    echo "{EMPTY_END_LINE}" > /dev/kmsg
    echo "{BEGIN_LINE}" > /dev/kmsg
    sum=$(sha256sum /bench/data)
    echo "{END_LINE}" > /dev/kmsg
    echo "{RESULT_PREFIX}{FILE_MIB} MiB: ${{sum%% *}}"
    poweroff -f
    sleep 10
fi
"#,
        tmpfs_mib = FILE_MIB * 2,
    )
}

/// What the guest printed: the digest and the command's virtual time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sha256Result {
    /// The hex digest `sha256sum` printed.
    pub digest: String,
    /// Virtual microseconds between the kernel's timestamps of [`BEGIN_LINE`] and
    /// [`END_LINE`].
    pub us: u64,
    /// The same for the command on the empty file ([`EMPTY_BEGIN_LINE`],
    /// [`EMPTY_END_LINE`]), if the guest printed both.
    pub empty_us: Option<u64>,
}

impl Sha256Result {
    /// Whether the digest is the one of [`FILE_MIB`] MiB of zeros.
    pub fn digest_ok(&self) -> bool {
        self.digest == EXPECTED_DIGEST
    }
}

/// The kernel's timestamp (microseconds) of the console line ending with `text`
/// (`[   12.345678] text`).
fn stamp_us(console: &str, text: &str) -> Option<u64> {
    let line = console
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .find(|l| l.ends_with(text))?;
    let inside = line.strip_prefix('[')?.split_once(']')?.0.trim();
    let (s, frac) = inside.split_once('.')?;
    if frac.len() != 6 {
        return None;
    }
    Some(s.parse::<u64>().ok()? * 1_000_000 + frac.parse::<u64>().ok()?)
}

/// The result in a guest's console output: the digest line and the two timestamped lines
/// around the command, if all are there and well formed (and the figure for the empty file
/// when its two lines are there too).
pub fn parse(console: &str) -> Option<Sha256Result> {
    let rest = console
        .lines()
        .find_map(|l| l.trim_end_matches('\r').strip_prefix(RESULT_PREFIX))?;
    let digest = rest.split_once(" MiB: ")?.1.trim();
    let us = stamp_us(console, END_LINE)?.checked_sub(stamp_us(console, BEGIN_LINE)?)?;
    let empty_us =
        (|| stamp_us(console, EMPTY_END_LINE)?.checked_sub(stamp_us(console, EMPTY_BEGIN_LINE)?))();
    Some(Sha256Result {
        digest: digest.to_string(),
        us,
        empty_us,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_result_line() {
        let out = format!(
            "[   12.500000] {BEGIN_LINE}\r\n[   13.734567] {END_LINE}\r\n{RESULT_PREFIX}16 MiB: {EXPECTED_DIGEST}\r\nx\n"
        );
        let r = parse(&out).unwrap();
        assert_eq!(r.us, 1_234_567);
        assert_eq!(r.empty_us, None);
        assert!(r.digest_ok());
        let with_empty = format!(
            "[   12.000000] {EMPTY_BEGIN_LINE}\r\n[   12.433421] {EMPTY_END_LINE}\r\n{out}"
        );
        let r = parse(&with_empty).unwrap();
        assert_eq!((r.us, r.empty_us), (1_234_567, Some(433_421)));
        // The empty file's lines do not stand in for the main ones.
        assert_eq!(parse(&with_empty.replace(BEGIN_LINE, "other")), None);
        let bad = out.replace(EXPECTED_DIGEST, "00ff");
        assert_eq!(parse(&bad).unwrap().digest, "00ff");
        assert!(!parse(&bad).unwrap().digest_ok());
        // A timestamp line missing (or the clock going backwards): no result.
        assert_eq!(parse(&out.replace(BEGIN_LINE, "other")), None);
        assert_eq!(parse(&out.replace("12.500000", "14.000000")), None);
        assert_eq!(parse(&out.replace(RESULT_PREFIX, "x")), None);
    }

    #[test]
    fn expected_digest_is_that_of_zeros() {
        // Recompute with the host's coreutils, an implementation independent of busybox.
        let Some(tool) = crate::setup::find_in_path("sha256sum") else {
            return;
        };
        let data = std::env::temp_dir().join(format!("xtask-zeros-{}", std::process::id()));
        std::fs::write(&data, vec![0u8; (FILE_MIB as usize) << 20]).unwrap();
        let out = std::process::Command::new(tool)
            .arg(&data)
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&data);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.split_whitespace().next(), Some(EXPECTED_DIGEST));
    }

    #[test]
    fn script_selects_on_the_word_and_prints_the_prefix() {
        let s = script();
        assert!(s.contains("grep -qw 'sha256_bench=1' /proc/cmdline"), "{s}");
        assert!(s.contains("count=16 "), "{s}");
        assert!(
            s.contains("echo \"linux-guest: sha256 begin\" > /dev/kmsg"),
            "{s}"
        );
        let empty = s
            .find("none=$(sha256sum /bench/empty)")
            .expect("the empty-file run");
        assert!(
            s.find("linux-guest: sha256 empty begin").unwrap() < empty
                && empty < s.find("linux-guest: sha256 empty end").unwrap()
                && empty < s.find("sum=$(sha256sum /bench/data)").unwrap(),
            "{s}"
        );
        assert!(
            s.contains("echo \"linux-guest: sha256sum 16 MiB: ${sum%% *}\""),
            "{s}"
        );
        assert!(s.contains("poweroff -f"), "{s}");
    }
}
