//! Raw Linux AArch64 system calls (`svc #0`, number in x8).

const SYS_OPENAT: u64 = 56;
const SYS_CLOSE: u64 = 57;
const SYS_READ: u64 = 63;
const SYS_WRITE: u64 = 64;
const SYS_EXIT_GROUP: u64 = 94;
const SYS_MMAP: u64 = 222;
const SYS_MPROTECT: u64 = 226;
const PROT_READ: u64 = 1;
const AT_FDCWD: u64 = -100i64 as u64;
const PROT_RW: u64 = 3;
const PROT_RWX: u64 = 7;
const MAP_PRIVATE_ANON_FIXED: u64 = 0x02 | 0x20 | 0x10;

/// Performs system call `n` with up to six arguments.
///
/// # Safety
///
/// The arguments are valid for that system call.
pub unsafe fn syscall6(n: u64, a: [u64; 6]) -> i64 {
    let r: i64;
    // SAFETY: the caller passes a valid system call; the kernel preserves all but x0.
    unsafe {
        core::arch::asm!("svc #0", in("x8") n, inlateout("x0") a[0] => r, in("x1") a[1],
            in("x2") a[2], in("x3") a[3], in("x4") a[4], in("x5") a[5], options(nostack));
    }
    r
}

/// `write(fd, b)`, whole buffer.
pub fn write(fd: u64, mut b: &[u8]) {
    while !b.is_empty() {
        // SAFETY: `b` is a valid slice for the duration of the call.
        let n = unsafe { syscall6(SYS_WRITE, [fd, b.as_ptr() as u64, b.len() as u64, 0, 0, 0]) };
        if n <= 0 {
            return;
        }
        b = &b[n as usize..];
    }
}

/// `exit_group(code)`.
pub fn exit(code: u64) -> ! {
    // SAFETY: exit_group does not return.
    unsafe { syscall6(SYS_EXIT_GROUP, [code, 0, 0, 0, 0, 0]) };
    unreachable!()
}

/// An anonymous fixed mapping of `len` bytes at `addr`, read-write (and executable if
/// `exec`). Returns whether the kernel placed it there.
pub fn mmap_fixed(addr: u64, len: u64, exec: bool) -> bool {
    let prot = if exec { PROT_RWX } else { PROT_RW };
    // SAFETY: a fresh anonymous mapping at an address range this program reserves for it
    // (the guest's low 4 GiB, or the runner's own heap and code cache above 64 GiB).
    let r = unsafe {
        syscall6(
            SYS_MMAP,
            [addr, len, prot, MAP_PRIVATE_ANON_FIXED, u64::MAX, 0],
        )
    };
    r as u64 == addr
}

/// Reads the whole file at the NUL-terminated `path` into `out`.
pub fn read_file(path: *const u8, out: &mut alloc::vec::Vec<u8>) -> bool {
    // SAFETY: `path` is a NUL-terminated string from argv.
    let fd = unsafe { syscall6(SYS_OPENAT, [AT_FDCWD, path as u64, 0, 0, 0, 0]) };
    if fd < 0 {
        return false;
    }
    let mut buf = [0u8; 65536];
    loop {
        // SAFETY: `buf` is writable for its length.
        let n = unsafe {
            syscall6(
                SYS_READ,
                [
                    fd as u64,
                    buf.as_mut_ptr() as u64,
                    buf.len() as u64,
                    0,
                    0,
                    0,
                ],
            )
        };
        if n < 0 {
            return false;
        }
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
    // SAFETY: closing the descriptor we opened.
    unsafe { syscall6(SYS_CLOSE, [fd as u64, 0, 0, 0, 0, 0]) };
    true
}

/// `mprotect(addr, len)`: read-only, or read-write with `write`.
pub fn mprotect(addr: u64, len: u64, write: bool) -> bool {
    let prot = if write { PROT_RW } else { PROT_READ };
    // SAFETY: changes the protection of part of the guest mapping only (the caller passes
    // guest pages); no Rust reference into it is held across the call.
    unsafe { syscall6(SYS_MPROTECT, [addr, len, prot, 0, 0, 0]) == 0 }
}
