//! The initramfs archive: a cpio "newc" (`070701`) archive, the format Linux unpacks an
//! initramfs from (`Documentation/driver-api/early-userspace/buffer-format.rst`), written
//! with the `cpio` crate's `newc` builder.
//!
//! This module only adds what the initramfs needs on top of the crate: paths stored without a
//! leading `/` (parents must come before their children; the kernel does not create missing
//! directories), inode numbers in order, everything owned by root and dated 0 so the same
//! inputs always give the same bytes, and a record of the paths added.

use std::io::Write;

use cpio::newc::{self, Builder, ModeFileType};

/// Name of the closing entry.
pub const TRAILER: &str = "TRAILER!!!";

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
        self.entry(path, ModeFileType::Directory, mode, 2, (0, 0), &[])
    }

    /// Adds a regular file.
    pub fn file(&mut self, path: &str, mode: u32, data: &[u8]) -> &mut Self {
        self.entry(path, ModeFileType::Regular, mode, 1, (0, 0), data)
    }

    /// Adds a symbolic link to `target` (stored as the link's data).
    pub fn symlink(&mut self, path: &str, target: &str) -> &mut Self {
        self.entry(
            path,
            ModeFileType::Symlink,
            0o777,
            1,
            (0, 0),
            target.as_bytes(),
        )
    }

    /// Adds a character device node (no root needed: the kernel creates it while unpacking).
    pub fn char_dev(&mut self, path: &str, mode: u32, major: u32, minor: u32) -> &mut Self {
        self.entry(path, ModeFileType::Char, mode, 1, (major, minor), &[])
    }

    /// Whether an entry with this path (leading `/` ignored) was added.
    pub fn contains(&self, path: &str) -> bool {
        let p = path.trim_start_matches('/');
        self.names.iter().any(|n| n == p)
    }

    /// Closes the archive with the trailer and returns its bytes.
    pub fn finish(mut self) -> Vec<u8> {
        newc::trailer(&mut self.out).expect("writing to memory cannot fail");
        self.out
    }

    fn entry(
        &mut self,
        path: &str,
        kind: ModeFileType,
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
        let mut writer = Builder::new(&name)
            .ino(ino)
            .mode(mode & 0o7777)
            .set_mode_file_type(kind)
            .nlink(nlink)
            .rdev_major(rdev.0)
            .rdev_minor(rdev.1)
            .write(&mut self.out, size);
        writer
            .write_all(data)
            .expect("writing to memory cannot fail");
        writer.finish().expect("writing to memory cannot fail");
        self.names.push(name);
        self
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

/// Reads a newc archive up to its trailer with the `cpio` crate's reader; `None` if it is
/// malformed.
#[cfg(test)]
pub fn read(bytes: &[u8]) -> Option<Vec<Entry>> {
    use std::io::Read;
    let mut rest = bytes;
    let mut out = Vec::new();
    loop {
        let mut reader = newc::Reader::new(rest).ok()?;
        let e = reader.entry();
        if e.is_trailer() {
            return Some(out);
        }
        let (name, mode, rdev) = (
            e.name().to_string(),
            e.mode(),
            (e.rdev_major(), e.rdev_minor()),
        );
        let mut data = Vec::new();
        reader.read_to_end(&mut data).ok()?;
        rest = reader.finish().ok()?;
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

    /// Length of a newc header, magic included.
    const HEADER_LEN: usize = 110;

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
        assert_eq!(&h[22..38], "0000000000000000", "uid, gid: root");
        assert_eq!(&h[38..46], "00000001", "nlink");
        assert_eq!(&h[46..54], "00000000", "mtime 0");
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
            if w == b"070701" {
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
