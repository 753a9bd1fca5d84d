//! A writer for the cpio "newc" format (`070701`), the format Linux unpacks an initramfs from
//! (`Documentation/driver-api/early-userspace/buffer-format.rst`).
//!
//! Each entry is a 110-byte ASCII header of thirteen 8-digit hex fields, the NUL-terminated
//! path, padding to 4 bytes, the data, padding to 4 bytes. The archive ends with an entry
//! named `TRAILER!!!`. Paths are stored without a leading `/`; parents must come before their
//! children (the kernel does not create missing directories). Everything is owned by root and
//! dated 0, so the same inputs always give the same bytes.

/// Magic of a newc header.
pub const NEWC_MAGIC: &[u8; 6] = b"070701";
/// Length of a newc header, magic included.
pub const HEADER_LEN: usize = 110;
/// Name of the closing entry.
pub const TRAILER: &str = "TRAILER!!!";

/// File type bits of `st_mode`.
const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;
const S_IFCHR: u32 = 0o020000;

/// Builds a newc archive in memory.
#[derive(Debug, Default)]
pub struct CpioWriter {
    out: Vec<u8>,
    next_ino: u32,
    names: Vec<String>,
}

impl CpioWriter {
    /// An empty archive.
    pub fn new() -> Self {
        CpioWriter {
            out: Vec::new(),
            next_ino: 1,
            names: Vec::new(),
        }
    }

    /// Adds a directory (`mode` is the permission bits, e.g. `0o755`).
    pub fn dir(&mut self, path: &str, mode: u32) -> &mut Self {
        self.entry(path, S_IFDIR | (mode & 0o7777), 2, (0, 0), &[])
    }

    /// Adds a regular file.
    pub fn file(&mut self, path: &str, mode: u32, data: &[u8]) -> &mut Self {
        self.entry(path, S_IFREG | (mode & 0o7777), 1, (0, 0), data)
    }

    /// Adds a symbolic link to `target` (stored as the link's data).
    pub fn symlink(&mut self, path: &str, target: &str) -> &mut Self {
        self.entry(path, S_IFLNK | 0o777, 1, (0, 0), target.as_bytes())
    }

    /// Adds a character device node (no root needed: the kernel creates it while unpacking).
    pub fn char_dev(&mut self, path: &str, mode: u32, major: u32, minor: u32) -> &mut Self {
        self.entry(path, S_IFCHR | (mode & 0o7777), 1, (major, minor), &[])
    }

    /// Whether an entry with this path (leading `/` ignored) was added.
    pub fn contains(&self, path: &str) -> bool {
        let p = path.trim_start_matches('/');
        self.names.iter().any(|n| n == p)
    }

    /// Closes the archive with the trailer and returns its bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.header(TRAILER, 0, 1, (0, 0), 0, 0);
        self.out
    }

    fn entry(
        &mut self,
        path: &str,
        mode: u32,
        nlink: u32,
        rdev: (u32, u32),
        data: &[u8],
    ) -> &mut Self {
        let name = path.trim_start_matches('/').to_string();
        assert!(
            !name.is_empty() && name != TRAILER,
            "bad cpio path {path:?}"
        );
        let size = u32::try_from(data.len()).expect("newc entries are at most 4 GiB");
        let ino = self.next_ino;
        self.next_ino += 1;
        self.header(&name, mode, nlink, rdev, size, ino);
        self.out.extend_from_slice(data);
        self.pad();
        self.names.push(name);
        self
    }

    fn header(&mut self, name: &str, mode: u32, nlink: u32, rdev: (u32, u32), size: u32, ino: u32) {
        let namesize = name.len() as u32 + 1;
        // ino mode uid gid nlink mtime filesize devmajor devminor rdevmajor rdevminor
        // namesize check
        let fields = [
            ino, mode, 0, 0, nlink, 0, size, 0, 0, rdev.0, rdev.1, namesize, 0,
        ];
        let start = self.out.len();
        self.out.extend_from_slice(NEWC_MAGIC);
        for f in fields {
            self.out.extend_from_slice(format!("{f:08x}").as_bytes());
        }
        debug_assert_eq!(self.out.len() - start, HEADER_LEN);
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(0);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.out.len().is_multiple_of(4) {
            self.out.push(0);
        }
    }
}

/// One entry read back from an archive (for tests and checks).
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Path as stored (no leading `/`).
    pub name: String,
    /// `st_mode`: type and permission bits.
    pub mode: u32,
    /// Device numbers of a device node.
    pub rdev: (u32, u32),
    /// The data (a symlink's target for a link).
    pub data: Vec<u8>,
}

/// Reads a newc archive up to its trailer; `None` if it is malformed.
#[cfg(test)]
pub fn read(bytes: &[u8]) -> Option<Vec<Entry>> {
    let mut pos = 0;
    let mut out = Vec::new();
    let align = |n: usize| n.div_ceil(4) * 4;
    loop {
        let h = bytes.get(pos..pos + HEADER_LEN)?;
        if &h[..6] != NEWC_MAGIC {
            return None;
        }
        let field = |i: usize| -> Option<u32> {
            let s = std::str::from_utf8(&h[6 + 8 * i..14 + 8 * i]).ok()?;
            u32::from_str_radix(s, 16).ok()
        };
        let mode = field(1)?;
        let size = field(6)? as usize;
        let rdev = (field(9)?, field(10)?);
        let namesize = field(11)? as usize;
        let name_bytes = bytes.get(pos + HEADER_LEN..pos + HEADER_LEN + namesize)?;
        let name = std::str::from_utf8(name_bytes.strip_suffix(&[0])?)
            .ok()?
            .to_string();
        let data_start = align(pos + HEADER_LEN + namesize);
        let data = bytes.get(data_start..data_start + size)?.to_vec();
        pos = align(data_start + size);
        if name == TRAILER {
            return Some(out);
        }
        out.push(Entry {
            name,
            mode,
            rdev,
            data,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout() {
        let mut w = CpioWriter::new();
        w.file("/init", 0o755, b"hi");
        let bytes = w.finish();
        // 110-byte header + "init\0" (5) = 115 -> padded to 116, data 2 -> padded to 120.
        assert_eq!(&bytes[..6], b"070701");
        let h = std::str::from_utf8(&bytes[..HEADER_LEN]).unwrap();
        assert_eq!(&h[6..14], "00000001", "ino");
        assert_eq!(&h[14..22], "000081ed", "mode: regular file 0755");
        assert_eq!(&h[38..46], "00000001", "nlink");
        assert_eq!(&h[54..62], "00000002", "filesize");
        assert_eq!(&h[94..102], "00000005", "namesize includes the NUL");
        assert_eq!(&bytes[110..115], b"init\0");
        assert_eq!(bytes[115], 0, "name padding");
        assert_eq!(&bytes[116..118], b"hi");
        assert_eq!(&bytes[118..120], &[0, 0], "data padding");
        assert_eq!(&bytes[120..126], b"070701", "trailer header");
        assert_eq!(&bytes[230..241], b"TRAILER!!!\0");
        assert_eq!(bytes.len() % 4, 0);
    }

    #[test]
    fn every_entry_is_aligned_and_reads_back() {
        let mut w = CpioWriter::new();
        w.dir("bin", 0o755)
            .file("bin/busybox", 0o755, &[7u8; 13])
            .symlink("bin/sh", "busybox")
            .dir("dev", 0o755)
            .char_dev("dev/console", 0o600, 5, 1)
            .file("empty", 0o644, &[]);
        assert!(w.contains("/bin/sh"));
        assert!(!w.contains("bin/ls"));
        let bytes = w.finish();
        let entries = read(&bytes).expect("parses");
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "bin",
                "bin/busybox",
                "bin/sh",
                "dev",
                "dev/console",
                "empty"
            ]
        );
        assert_eq!(entries[0].mode, 0o040755);
        assert_eq!(entries[1].data, [7u8; 13]);
        assert_eq!(entries[2].mode, 0o120777);
        assert_eq!(entries[2].data, b"busybox");
        assert_eq!(entries[4].mode, 0o020600);
        assert_eq!(entries[4].rdev, (5, 1));
        assert!(entries[5].data.is_empty());
        // Every header starts on a 4-byte boundary.
        let mut starts = 0;
        for (i, w) in bytes.windows(6).enumerate() {
            if w == NEWC_MAGIC {
                assert_eq!(i % 4, 0);
                starts += 1;
            }
        }
        assert_eq!(starts, 7, "six entries and the trailer");
    }

    #[test]
    fn same_input_same_bytes() {
        let make = || {
            let mut w = CpioWriter::new();
            w.dir("a", 0o755).file("a/b", 0o644, b"xyz");
            w.finish()
        };
        assert_eq!(make(), make());
    }

    #[test]
    fn garbage_is_rejected() {
        assert!(read(b"").is_none());
        assert!(read(&[b'0'; 200]).is_none());
        let mut w = CpioWriter::new();
        w.file("f", 0o644, b"data");
        let bytes = w.finish();
        assert!(read(&bytes[..bytes.len() - 20]).is_none(), "no trailer");
    }
}
