//! Register-file copies on the path between translated code and the system model (the
//! guest registers and D0-D31 on every entry into and exit from the code cache, the
//! registers on every call into the model). The target's `memcpy` (compiler-builtins,
//! no_std, `opt-level = "s"`) copies a word at a time through a general loop: measured in
//! the page-table-switch row (`cargo xtask bench --dbt`), the copies around each of its
//! code-cache exits cost about 440 host instructions. On AArch64 these move up to 64
//! bytes per `LDP`/`STP` pair instead.

/// Copies `src` into `dst` (equal lengths).
#[inline]
pub fn copy_u64s(dst: &mut [u64], src: &[u64]) {
    assert_eq!(dst.len(), src.len());
    // SAFETY: both slices are `8 * len` bytes and do not overlap (`&mut`).
    unsafe { copy_bytes(dst.as_mut_ptr().cast(), src.as_ptr().cast(), 8 * src.len()) };
}

/// Copies `src` into `dst` (equal lengths).
#[inline]
pub fn copy_u32s(dst: &mut [u32], src: &[u32]) {
    assert_eq!(dst.len(), src.len());
    // SAFETY: both slices are `4 * len` bytes and do not overlap (`&mut`).
    unsafe { copy_bytes(dst.as_mut_ptr().cast(), src.as_ptr().cast(), 4 * src.len()) };
}

/// Copies `len` bytes (a multiple of 4) from `src` to `dst`: 64 bytes per `LDP`/`STP`
/// pair of Q register pairs, then 16 per X register pair, then 8 and 4. The addresses
/// need 4-byte alignment only (`SCTLR_EL1.A` = 0, Normal memory).
///
/// # Safety
///
/// `src` and `dst` are valid for `len` bytes and do not overlap.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
#[inline]
unsafe fn copy_bytes(dst: *mut u8, src: *const u8, len: usize) {
    debug_assert!(len.is_multiple_of(4));
    // SAFETY: the caller's contract; the code reads and writes exactly `len` bytes
    // (bits 5:4, 3 and 2 of `len` after the 64-byte loop), and clobbers only the
    // registers it names.
    unsafe {
        core::arch::asm!(
            "lsr {n}, {len}, #6",
            "cbz {n}, 3f",
            "2:",
            "ldp q0, q1, [{s}], #32",
            "ldp q2, q3, [{s}], #32",
            "stp q0, q1, [{d}], #32",
            "stp q2, q3, [{d}], #32",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            "3:",
            "ubfx {n}, {len}, #4, #2",
            "cbz {n}, 5f",
            "4:",
            "ldp {a}, {b}, [{s}], #16",
            "stp {a}, {b}, [{d}], #16",
            "subs {n}, {n}, #1",
            "b.ne 4b",
            "5:",
            "tbz {len}, #3, 6f",
            "ldr {a}, [{s}], #8",
            "str {a}, [{d}], #8",
            "6:",
            "tbz {len}, #2, 7f",
            "ldr {a:w}, [{s}]",
            "str {a:w}, [{d}]",
            "7:",
            s = inout(reg) src => _,
            d = inout(reg) dst => _,
            len = in(reg) len,
            n = out(reg) _,
            a = out(reg) _,
            b = out(reg) _,
            out("v0") _,
            out("v1") _,
            out("v2") _,
            out("v3") _,
            options(nostack),
        )
    };
}

/// See the AArch64 version (elsewhere: the host tests).
///
/// # Safety
///
/// `src` and `dst` are valid for `len` bytes and do not overlap.
#[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
#[inline]
unsafe fn copy_bytes(dst: *mut u8, src: *const u8, len: usize) {
    // SAFETY: the caller's contract.
    unsafe { core::ptr::copy_nonoverlapping(src, dst, len) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_every_element_and_nothing_else() {
        for len in 0..=70usize {
            let src: alloc::vec::Vec<u64> =
                (0..len as u64).map(|i| i * 0x1_0000_0001 + 7).collect();
            let mut dst = alloc::vec![0u64; len + 1];
            copy_u64s(&mut dst[..len], &src);
            assert_eq!(&dst[..len], &src[..]);
            assert_eq!(dst[len], 0);
            let src32: alloc::vec::Vec<u32> = (0..len as u32).map(|i| i * 3 + 1).collect();
            let mut dst32 = alloc::vec![0u32; len + 1];
            copy_u32s(&mut dst32[..len], &src32);
            assert_eq!(&dst32[..len], &src32[..]);
            assert_eq!(dst32[len], 0);
        }
    }
}
