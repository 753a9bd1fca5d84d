//! Where a guest's kernel, initrd and device tree go in its RAM, per the arm64 boot
//! protocol (Linux `Documentation/arch/arm64/booting.rst`): an `Image` is placed at
//! `text_offset` from a 2 MiB-aligned RAM base and entered at its first byte with
//! x0 = device tree; a raw binary is treated like an `Image` with `text_offset` 0x80000.

/// `Image` header magic at offset 0x38 ("ARM\x64", little-endian).
pub const IMAGE_MAGIC: u32 = 0x644d_5241;
/// The `text_offset` assumed for raw binaries and for old `Image`s with `image_size` 0.
pub const DEFAULT_TEXT_OFFSET: u64 = 0x8_0000;
/// Room reserved for the guest device tree (the boot protocol caps it at 2 MiB).
pub const DTB_RESERVE: u64 = 2 << 20;

/// What a kernel file says about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelInfo {
    /// Offset from the RAM base to load it at.
    pub text_offset: u64,
    /// Bytes it occupies once running (`image_size`, or the file length for raw files).
    pub effective_size: u64,
    /// It had a valid arm64 `Image` header.
    pub is_image: bool,
}

/// Offset from the RAM base at which an ARMv7-A kernel (a zImage or a raw A32 binary) is
/// loaded and entered: where QEMU's ARM loader puts it (`KERNEL_LOAD_ADDR`), so a guest
/// behaves as under `qemu-system-arm -kernel`. A zImage's decompressor moves itself out of
/// the way of the kernel it unpacks at RAM base + 0x8000 (`CONFIG_AUTO_ZRELADDR`: the
/// 128 MiB-aligned RAM base, which the layout's RAM base is).
pub const ARMV7_TEXT_OFFSET: u64 = 0x1_0000;
/// Offset of the zImage magic in an ARM Linux zImage header.
const ZIMAGE_MAGIC_OFFSET: usize = 0x24;
/// The zImage magic (`0x016F2818`, little-endian).
pub const ZIMAGE_MAGIC: u32 = 0x016f_2818;

/// Reads what an ARMv7-A kernel file says about itself: a zImage (magic at 0x24) or a raw
/// A32 binary, both loaded at [`ARMV7_TEXT_OFFSET`] and entered at their first byte with
/// the ARM boot protocol's registers.
pub fn inspect_armv7(kernel: &[u8]) -> Result<KernelInfo, LoadError> {
    if kernel.is_empty() {
        return Err(LoadError::EmptyKernel);
    }
    Ok(KernelInfo {
        text_offset: ARMV7_TEXT_OFFSET,
        effective_size: kernel.len() as u64,
        is_image: is_zimage(kernel),
    })
}

/// Whether `kernel` starts with an ARM Linux zImage header.
pub fn is_zimage(kernel: &[u8]) -> bool {
    kernel
        .get(ZIMAGE_MAGIC_OFFSET..ZIMAGE_MAGIC_OFFSET + 4)
        .is_some_and(|m| u32::from_le_bytes([m[0], m[1], m[2], m[3]]) == ZIMAGE_MAGIC)
}

/// Placement of everything in the guest's RAM (guest physical addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuestLayout {
    /// Where the kernel is copied and entered.
    pub kernel: u64,
    /// Where the device tree is written (x0 at entry).
    pub dtb: u64,
    /// Where the initrd is copied, and its end.
    pub initrd: Option<(u64, u64)>,
}

/// Why a guest cannot be loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadError {
    /// The kernel file is empty.
    EmptyKernel,
    /// Kernel, initrd and device tree do not fit in the VM's RAM.
    DoesNotFit,
    /// The `Image` header asks for an unaligned or absurd `text_offset`.
    BadHeader,
}

fn le64(b: &[u8], off: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(v)
}

/// Reads the arm64 `Image` header of `kernel`, if it has one.
pub fn inspect(kernel: &[u8]) -> Result<KernelInfo, LoadError> {
    if kernel.is_empty() {
        return Err(LoadError::EmptyKernel);
    }
    let len = kernel.len() as u64;
    if kernel.len() >= 64 {
        let magic = u32::from_le_bytes([kernel[0x38], kernel[0x39], kernel[0x3a], kernel[0x3b]]);
        if magic == IMAGE_MAGIC {
            let image_size = le64(kernel, 16);
            let text_offset = if image_size == 0 {
                DEFAULT_TEXT_OFFSET
            } else {
                le64(kernel, 8)
            };
            if text_offset % 4096 != 0 || text_offset >= 1 << 30 {
                return Err(LoadError::BadHeader);
            }
            return Ok(KernelInfo {
                text_offset,
                effective_size: image_size.max(len),
                is_image: true,
            });
        }
    }
    Ok(KernelInfo {
        text_offset: DEFAULT_TEXT_OFFSET,
        effective_size: len,
        is_image: false,
    })
}

/// Plans the guest RAM `[ram_base, ram_base + ram_size)`: kernel at `text_offset`, the
/// device tree in the top 2 MiB, the initrd just below it.
pub fn plan(
    ram_base: u64,
    ram_size: u64,
    kernel: &KernelInfo,
    initrd_len: Option<u64>,
) -> Result<GuestLayout, LoadError> {
    let ram_end = ram_base
        .checked_add(ram_size)
        .ok_or(LoadError::DoesNotFit)?;
    let kernel_at = ram_base + kernel.text_offset;
    let kernel_end = kernel_at
        .checked_add(kernel.effective_size)
        .ok_or(LoadError::DoesNotFit)?;
    if ram_size < DTB_RESERVE * 2 {
        return Err(LoadError::DoesNotFit);
    }
    let dtb = (ram_end - DTB_RESERVE) & !(DTB_RESERVE - 1);
    if kernel_end > dtb {
        return Err(LoadError::DoesNotFit);
    }
    let initrd = match initrd_len {
        Some(len) => {
            let start = dtb.checked_sub(len).ok_or(LoadError::DoesNotFit)? & !0xfff;
            if start < kernel_end {
                return Err(LoadError::DoesNotFit);
            }
            Some((start, start + len))
        }
        None => None,
    };
    Ok(GuestLayout {
        kernel: kernel_at,
        dtb,
        initrd,
    })
}

/// The bytes the hypervisor wrote into a guest's memory before the guest runs (host
/// physical ranges: its images, its device tree, the DBT runtime), so that exactly those
/// can be cleaned to the point of coherency: a guest that starts with its MMU off (the
/// arm64 and ARM boot protocols) reads them non-cacheable, from memory, not from the
/// hypervisor's cache.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WrittenRanges {
    ranges: alloc::vec::Vec<(u64, u64)>,
}

impl WrittenRanges {
    /// No writes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a write of `len` bytes at `start` (empty writes are ignored).
    pub fn record(&mut self, start: u64, len: u64) {
        if len > 0 {
            self.ranges.push((start, start.saturating_add(len)));
        }
    }

    /// The recorded writes as `[start, end)` ranges, in the order they were made.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// The `[start, end)` spans of whole cache lines of `line` bytes (a power of two, e.g.
    /// `CTR_EL0.DminLine`) that hold every recorded byte: each write widened to line
    /// boundaries, sorted, overlapping or touching spans merged, so no line is maintained
    /// twice.
    pub fn line_spans(&self, line: u64) -> alloc::vec::Vec<(u64, u64)> {
        debug_assert!(line.is_power_of_two());
        let mut spans: alloc::vec::Vec<(u64, u64)> = self
            .ranges
            .iter()
            .map(|&(s, e)| (s & !(line - 1), e.saturating_add(line - 1) & !(line - 1)))
            .collect();
        spans.sort_unstable();
        let mut merged: alloc::vec::Vec<(u64, u64)> = alloc::vec::Vec::with_capacity(spans.len());
        for (s, e) in spans {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        merged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn armv7_kernels() {
        let mut z = vec![0u8; 0x1000];
        assert!(!is_zimage(&z));
        z[0x24..0x28].copy_from_slice(&ZIMAGE_MAGIC.to_le_bytes());
        let info = inspect_armv7(&z).unwrap();
        assert!(info.is_image && info.text_offset == ARMV7_TEXT_OFFSET);
        let l = plan(0x4000_0000, 256 << 20, &info, Some(0x1000)).unwrap();
        assert_eq!(l.kernel, 0x4001_0000);
        assert_eq!(inspect_armv7(&[]), Err(LoadError::EmptyKernel));
        assert!(!inspect_armv7(&[0; 8]).unwrap().is_image);
    }

    fn image(text_offset: u64, image_size: u64) -> Vec<u8> {
        let mut k = vec![0u8; 4096];
        k[8..16].copy_from_slice(&text_offset.to_le_bytes());
        k[16..24].copy_from_slice(&image_size.to_le_bytes());
        k[0x38..0x3c].copy_from_slice(&IMAGE_MAGIC.to_le_bytes());
        k
    }

    #[test]
    fn image_header_is_honoured() {
        let i = inspect(&image(0x20_0000, 0x100_0000)).unwrap();
        assert_eq!(
            i,
            KernelInfo {
                text_offset: 0x20_0000,
                effective_size: 0x100_0000,
                is_image: true
            }
        );
        // image_size 0 => legacy text_offset
        assert_eq!(
            inspect(&image(0x0123_4000, 0)).unwrap().text_offset,
            DEFAULT_TEXT_OFFSET
        );
        assert_eq!(inspect(&image(0x123, 0x1000)), Err(LoadError::BadHeader));
        let raw = inspect(&[1, 2, 3]).unwrap();
        assert!(!raw.is_image);
        assert_eq!(raw.text_offset, DEFAULT_TEXT_OFFSET);
        assert_eq!(inspect(&[]), Err(LoadError::EmptyKernel));
    }

    #[test]
    fn layout_in_ram() {
        let k = inspect(&image(0x8_0000, 0x10_0000)).unwrap();
        let l = plan(0x4000_0000, 128 << 20, &k, Some(0x1800)).unwrap();
        assert_eq!(l.kernel, 0x4008_0000);
        assert_eq!(l.dtb, 0x4000_0000 + (126 << 20));
        assert_eq!(l.initrd, Some((l.dtb - 0x2000, l.dtb - 0x2000 + 0x1800)));
        // too small
        assert_eq!(
            plan(0x4000_0000, 4 << 20, &k, Some(8 << 20)),
            Err(LoadError::DoesNotFit)
        );
        let huge = KernelInfo {
            text_offset: 0x8_0000,
            effective_size: 200 << 20,
            is_image: true,
        };
        assert_eq!(
            plan(0x4000_0000, 128 << 20, &huge, None),
            Err(LoadError::DoesNotFit)
        );
    }

    /// Every byte in `w` lies in one of `spans`, the spans are line-aligned, sorted and
    /// apart, and each of their lines holds at least one written byte (nothing else is
    /// maintained).
    fn assert_spans_cover(w: &WrittenRanges, line: u64) {
        let spans = w.line_spans(line);
        for &(s, e) in &spans {
            assert!(s % line == 0 && e % line == 0 && s < e, "{spans:x?}");
        }
        for pair in spans.windows(2) {
            assert!(pair[0].1 < pair[1].0, "not merged: {spans:x?}");
        }
        for &(s, e) in w.ranges() {
            assert!(
                spans.iter().any(|&(a, b)| a <= s && e <= b),
                "write {s:#x}..{e:#x} not covered by {spans:x?}"
            );
        }
        for &(a, b) in &spans {
            let mut l = a;
            while l < b {
                assert!(
                    w.ranges().iter().any(|&(s, e)| s < l + line && l < e),
                    "line {l:#x} cleaned but never written"
                );
                l += line;
            }
        }
    }

    #[test]
    fn images_of_a_guest_are_covered() {
        // What `Vm::write_images` records: kernel, initrd and device tree of a planned guest.
        let kernel_len = 0x0001_2345;
        let k = inspect(&image(0x8_0000, kernel_len)).unwrap();
        let l = plan(0x4000_0000, 128 << 20, &k, Some(0x1801)).unwrap();
        let mut w = WrittenRanges::new();
        w.record(l.kernel, kernel_len);
        let (start, end) = l.initrd.unwrap();
        w.record(start, end - start);
        w.record(l.dtb, 0x5a3);
        w.record(l.dtb, 0); // an empty write adds nothing
        assert_eq!(w.ranges().len(), 3);
        for line in [16, 32, 64, 128] {
            assert_spans_cover(&w, line);
        }
        let spans = w.line_spans(64);
        assert_eq!(spans[0], (0x4008_0000, 0x4008_0000 + 0x0001_2345 + 0x3b));
        assert_eq!(spans[2], (l.dtb, l.dtb + 0x5c0));
    }

    #[test]
    fn overlapping_and_touching_writes_merge() {
        let mut w = WrittenRanges::new();
        w.record(0x1010, 0x20); // line 0x1000 (64-byte lines)
        w.record(0x1000, 8); // same line again
        w.record(0x1040, 0x41); // lines 0x1040..0x10c0: touches the first span
        w.record(0x2000, 0x40);
        assert_eq!(w.line_spans(64), [(0x1000, 0x10c0), (0x2000, 0x2040)]);
        assert_spans_cover(&w, 64);
    }

    proptest::proptest! {
        #[test]
        fn line_spans_cover_every_written_byte(
            writes in proptest::collection::vec((0u64..0x1_0000, 0u64..0x900), 0..12),
            line_log2 in 4u32..8,
        ) {
            let mut w = WrittenRanges::new();
            for (start, len) in writes {
                w.record(0x8000_0000 + start, len);
            }
            assert_spans_cover(&w, 1 << line_log2);
        }
    }
}
