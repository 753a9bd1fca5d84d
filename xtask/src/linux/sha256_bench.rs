//! The compute benchmark inside a Linux guest: with `sha256_bench=1` on the kernel command
//! line, `/init` fills a 16 MiB file in a fresh tmpfs with zeros, runs busybox `sha256sum`
//! on it and prints the digest and the virtual time the command took, then powers off.
//!
//! The time is the kernel's own: `/init` writes a line to `/dev/kmsg` before and after the
//! command, and the difference of the two printk timestamps (microseconds of the guest's
//! clock, the architected counter) is printed. Under QEMU's `-icount shift=0` one virtual
//! nanosecond is one instruction of the machine QEMU emulates, so the figure counts what the
//! command cost there: A32/T32 instructions natively under `qemu-system-arm`, guest plus
//! hypervisor instructions in hardware AArch32, the translated A64 code and the translator's
//! own under the DBT. It is identical from run to run.
//!
//! ```text
//! [   12.345678] linux-guest: sha256 begin
//! [   13.456789] linux-guest: sha256 end
//! linux-guest: sha256sum 16 MiB: 080acf35...643e in 1111111 us
//! ```

/// The kernel command-line word that selects the benchmark.
pub const CMDLINE_WORD: &str = "sha256_bench=1";
/// Size of the hashed file, MiB.
pub const FILE_MIB: u32 = 16;
/// The SHA-256 of [`FILE_MIB`] MiB of zero bytes (`head -c 16M /dev/zero | sha256sum`; the
/// unit test recomputes it with the host's `sha256sum`).
pub const EXPECTED_DIGEST: &str =
    "080acf35a507ac9849cfcba47dc2ad83e01b75663a516279c8b9d243b719643e";
/// The start of the line `/init` prints with the result.
pub const RESULT_PREFIX: &str = "linux-guest: sha256sum ";

/// The part of `/init` that runs the benchmark when [`CMDLINE_WORD`] is on the command line
/// (a shell fragment; it ends with `poweroff -f`).
pub fn script() -> String {
    format!(
        r#"# Compute benchmark ({CMDLINE_WORD}): sha256sum of {FILE_MIB} MiB of zeros in a tmpfs, timed by
# the kernel's timestamps of two /dev/kmsg lines (virtual time), then power off.
if grep -qw '{CMDLINE_WORD}' /proc/cmdline; then
    mkdir -p /bench && mount -t tmpfs -o size={tmpfs_mib}m tmpfs /bench
    dd if=/dev/zero of=/bench/data bs=1048576 count={FILE_MIB} 2>/dev/null
    echo "linux-guest: sha256 begin" > /dev/kmsg
    sum=$(sha256sum /bench/data)
    echo "linux-guest: sha256 end" > /dev/kmsg
    stamp() {{ dmesg | sed -n "s/^\[ *\([0-9.]*\)\] linux-guest: sha256 $1\$/\1/p" | tail -n 1; }}
    us=$(awk -v a="$(stamp begin)" -v b="$(stamp end)" 'BEGIN {{ printf "%.0f", (b - a) * 1000000 }}')
    echo "{RESULT_PREFIX}{FILE_MIB} MiB: ${{sum%% *}} in $us us"
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
    /// Virtual microseconds between the two `/dev/kmsg` lines around the command.
    pub us: u64,
}

impl Sha256Result {
    /// Whether the digest is the one of [`FILE_MIB`] MiB of zeros.
    pub fn digest_ok(&self) -> bool {
        self.digest == EXPECTED_DIGEST
    }
}

/// The result line in a guest's console output, if it is there and well formed.
pub fn parse(console: &str) -> Option<Sha256Result> {
    let line = console
        .lines()
        .find_map(|l| l.trim_end_matches('\r').strip_prefix(RESULT_PREFIX))?;
    let rest = line.split_once(" MiB: ")?.1;
    let (digest, time) = rest.split_once(" in ")?;
    let us = time.strip_suffix(" us")?.trim().parse().ok()?;
    Some(Sha256Result {
        digest: digest.trim().to_string(),
        us,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_result_line() {
        let out = format!(
            "[   12.5] linux-guest: sha256 begin\r\n{RESULT_PREFIX}16 MiB: {EXPECTED_DIGEST} in 1234567 us\r\nx\n"
        );
        let r = parse(&out).unwrap();
        assert_eq!(r.us, 1_234_567);
        assert!(r.digest_ok());
        let bad = format!("{RESULT_PREFIX}16 MiB: 00ff in 5 us\n");
        assert!(!parse(&bad).unwrap().digest_ok());
        // awk printed nothing (a timestamp line was missing): no result.
        assert_eq!(
            parse(&format!("{RESULT_PREFIX}16 MiB: 00ff in  us\n")),
            None
        );
        assert_eq!(parse("linux-guest: userspace up\n"), None);
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
            s.contains("echo \"linux-guest: sha256sum 16 MiB: ${sum%% *} in $us us\""),
            "{s}"
        );
        assert!(s.contains("poweroff -f"), "{s}");
    }
}
