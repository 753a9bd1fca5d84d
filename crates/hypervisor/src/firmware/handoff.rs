//! The record the EFI entry leaves for the hypervisor proper: it is filled while boot
//! services still run (configuration tables, files, memory map), then the entry leaves
//! UEFI, turns its MMU off and enters the image again at `_start` like any boot loader
//! would, with x0 = the device tree or 0. The record lives in the image's .data (never
//! cleared by the .bss loop), so nothing outside the image can forge one.

use super::acpi::AcpiSummary;
use crate::platform::{PlatformInfo, Range, MAX_MEM_RANGES};

/// `magic` of a filled record ("HVUEFI01").
pub const HANDOFF_MAGIC: u64 = u64::from_le_bytes(*b"HVUEFI01");
/// Longest hypervisor command line taken from the EFI system partition.
pub const CMDLINE_MAX: usize = 256;

/// What UEFI told the EFI entry, for `hv_primary_main`.
#[derive(Debug, Clone)]
pub struct Handoff {
    /// [`HANDOFF_MAGIC`] once filled.
    pub magic: u64,
    /// Physical address of the firmware's device tree (0: none).
    pub dtb: u64,
    /// Physical address of the ACPI RSDP (0: none).
    pub rsdp: u64,
    /// RAM the hypervisor may use after ExitBootServices (the UEFI map's loader, boot
    /// services and conventional memory, merged).
    pub ram: [Range; MAX_MEM_RANGES],
    /// Valid entries of `ram`.
    pub ram_count: usize,
    /// The VM package read from the EFI system partition.
    pub package: Range,
    /// The hypervisor's command line (UTF-8, `cmdline_len` bytes).
    pub cmdline: [u8; CMDLINE_MAX],
    /// Bytes of `cmdline`.
    pub cmdline_len: usize,
    /// `CNTPCT_EL0` when the firmware called the EFI entry (for the boot-time report).
    pub entry_counter: u64,
    /// The machine as the ACPI tables describe it (read while the firmware's caches and
    /// identity map were on), when there was an RSDP and no device tree.
    pub acpi: Option<(PlatformInfo<'static>, AcpiSummary)>,
    /// What went wrong with the ACPI tables, if they were there but unusable.
    pub acpi_problem: Option<super::acpi::AcpiProblem>,
}

impl Handoff {
    /// An unfilled record.
    pub const EMPTY: Handoff = Handoff {
        magic: 0,
        dtb: 0,
        rsdp: 0,
        ram: [Range { base: 0, size: 0 }; MAX_MEM_RANGES],
        ram_count: 0,
        package: Range { base: 0, size: 0 },
        cmdline: [0; CMDLINE_MAX],
        cmdline_len: 0,
        entry_counter: 0,
        acpi: None,
        acpi_problem: None,
    };

    /// Whether the EFI entry filled this record.
    pub fn is_filled(&self) -> bool {
        self.magic == HANDOFF_MAGIC
    }

    /// The RAM ranges.
    pub fn ram(&self) -> &[Range] {
        &self.ram[..self.ram_count.min(MAX_MEM_RANGES)]
    }

    /// The command line (empty if it is not UTF-8).
    pub fn cmdline(&self) -> &str {
        let bytes = &self.cmdline[..self.cmdline_len.min(CMDLINE_MAX)];
        core::str::from_utf8(bytes).unwrap_or("").trim()
    }

    /// Sets the command line from `LoadOptions` (see [`load_options_cmdline`]); false when
    /// they hold none.
    pub fn set_cmdline_from_load_options(&mut self, options: &[u16]) -> bool {
        let n = load_options_cmdline(options, &mut self.cmdline);
        if n > 0 {
            self.cmdline_len = n;
        }
        n > 0
    }

    /// Sets the command line from a file's bytes: the first line, cut at
    /// [`CMDLINE_MAX`] bytes (on a character boundary).
    pub fn set_cmdline(&mut self, text: &[u8]) {
        let line = text
            .split(|&b| b == b'\n' || b == b'\r')
            .next()
            .unwrap_or(&[]);
        let mut n = line.len().min(CMDLINE_MAX);
        while n > 0 && core::str::from_utf8(&line[..n]).is_err() {
            n -= 1;
        }
        self.cmdline[..n].copy_from_slice(&line[..n]);
        self.cmdline_len = n;
    }
}

/// The command line in an image's UEFI `LoadOptions` (UCS-2 from the EFI shell, a boot
/// entry's optional data or GRUB's `chainloader` arguments), as ASCII bytes in `out`; the
/// first word is dropped when it names the image (`... .efi`), as the EFI shell passes it.
/// Returns the bytes written (0: no options, or not text). Allocates nothing.
pub fn load_options_cmdline(options: &[u16], out: &mut [u8]) -> usize {
    let text_len = options
        .iter()
        .position(|&c| c == 0)
        .unwrap_or(options.len());
    let text = &options[..text_len];
    if text
        .iter()
        .any(|&c| c != u16::from(b'\t') && !(0x20..0x7f).contains(&c))
    {
        return 0;
    }
    let mut words = text
        .split(|&c| c == u16::from(b' '))
        .filter(|w| !w.is_empty())
        .peekable();
    // No allocation: this runs in the EFI entry, before the heap exists.
    let names_image = |w: &[u16]| {
        w.len() >= 4
            && w[w.len() - 4..]
                .iter()
                .zip(b".efi")
                .all(|(&c, &e)| (c as u8).eq_ignore_ascii_case(&e))
    };
    if words.peek().is_some_and(|w| names_image(w)) {
        words.next();
    }
    let mut n = 0;
    for (i, w) in words.enumerate() {
        let need = w.len() + usize::from(i > 0);
        if n + need > out.len() {
            break;
        }
        if i > 0 {
            out[n] = b' ';
            n += 1;
        }
        for &c in w {
            out[n] = c as u8;
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ucs2(s: &str) -> alloc::vec::Vec<u16> {
        s.encode_utf16().chain([0]).collect()
    }

    #[test]
    fn load_options_from_the_shell_and_boot_entries() {
        let mut out = [0u8; 64];
        let n = load_options_cmdline(
            &ucs2("hypervisor.efi backend=nvhe  exit=semihosting"),
            &mut out,
        );
        assert_eq!(&out[..n], b"backend=nvhe exit=semihosting");
        let n = load_options_cmdline(&ucs2("FS0:\\EFI\\BOOT\\BOOTAA64.EFI"), &mut out);
        assert_eq!(n, 0);
        let n = load_options_cmdline(&ucs2("backend=vhe"), &mut out);
        assert_eq!(&out[..n], b"backend=vhe");
        // Binary optional data (a boot entry's) is not a command line.
        assert_eq!(load_options_cmdline(&[0x1234, 0x41, 0], &mut out), 0);
        // Too long: whole words that fit.
        let mut small = [0u8; 8];
        let n = load_options_cmdline(&ucs2("x.efi aaaa bbbb"), &mut small);
        assert_eq!(&small[..n], b"aaaa");
    }

    #[test]
    fn cmdline_is_the_first_line() {
        let mut h = Handoff::EMPTY;
        assert!(!h.is_filled());
        h.set_cmdline(b"backend=nvhe exit=semihosting\r\nignored\n");
        assert_eq!(h.cmdline(), "backend=nvhe exit=semihosting");
        let long = [b'a'; 300];
        h.set_cmdline(&long);
        assert_eq!(h.cmdline().len(), CMDLINE_MAX);
        // A multi-byte character cut at the limit is dropped whole.
        let mut text = [b'x'; CMDLINE_MAX + 2];
        text[CMDLINE_MAX - 1..CMDLINE_MAX + 1].copy_from_slice("é".as_bytes());
        h.set_cmdline(&text);
        assert_eq!(h.cmdline().len(), CMDLINE_MAX - 1);
    }
}
