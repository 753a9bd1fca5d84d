//! Zero-copy, bounds-checked reading of a VM package.

use crate::{
    valid_unicast_mac, HEADER_LEN, MAGIC, MAX_DISK_IMAGE, MAX_VMS, PKG_FLAG_VM_DISK,
    PKG_FLAG_VM_EXT, VM_DESC_LEN, VM_DISK_LEN, VM_EXT_HAS_MAC, VM_EXT_LEN,
};

/// Why a package could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackageError {
    /// The blob is shorter than the header or than the length the header claims.
    Truncated,
    /// The magic bytes do not match [`MAGIC`].
    BadMagic,
    /// More VMs than [`MAX_VMS`].
    TooManyVms,
    /// A descriptor points outside the package.
    OutOfBounds,
    /// A VM name or command line is not UTF-8.
    NotUtf8,
    /// A VM has zero memory or zero vCPUs.
    EmptyVm,
    /// A VM's MAC address is a group (multicast/broadcast) or all-zero address.
    BadMac,
    /// A VM's disk image is larger than [`MAX_DISK_IMAGE`].
    DiskTooLarge,
}

impl core::fmt::Display for PackageError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            PackageError::Truncated => "truncated (shorter than its header says)",
            PackageError::BadMagic => "not a VM package (bad magic)",
            PackageError::TooManyVms => "too many VMs",
            PackageError::OutOfBounds => "an offset points outside the package",
            PackageError::NotUtf8 => "a VM name or command line is not UTF-8",
            PackageError::EmptyVm => "a VM has no memory or no vCPUs",
            PackageError::BadMac => "a VM's MAC address is not a unicast address",
            PackageError::DiskTooLarge => "a VM's disk image is larger than 64 MiB",
        })
    }
}

/// A validated view of a package.
#[derive(Debug, Clone, Copy)]
pub struct Package<'a> {
    bytes: &'a [u8],
    vm_count: u32,
    flags: u32,
}

/// One VM as the package describes it; all slices borrow the package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmSpec<'a> {
    /// Human-readable name, used as the console prefix.
    pub name: &'a str,
    /// Guest RAM size in bytes.
    pub mem_bytes: u64,
    /// Number of vCPUs.
    pub vcpus: u32,
    /// `VM_FLAG_*` bits.
    pub flags: u32,
    /// Kernel: an arm64 `Image` (with header) or a raw binary.
    pub kernel: &'a [u8],
    /// Optional initial RAM disk.
    pub initrd: Option<&'a [u8]>,
    /// Kernel command line (`/chosen/bootargs` of the guest).
    pub cmdline: &'a str,
    /// MAC address of the VM's virtio-net device (`None`: the hypervisor's default).
    pub mac: Option<[u8; 6]>,
    /// Image of the VM's RAM disk (its virtio-blk device); `None`: the hypervisor's default
    /// disk. At most [`MAX_DISK_IMAGE`] bytes, never empty.
    pub disk: Option<&'a [u8]>,
}

fn le_u32(b: &[u8], off: usize) -> Result<u32, PackageError> {
    b.get(off..off + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or(PackageError::Truncated)
}

fn le_u64(b: &[u8], off: usize) -> Result<u64, PackageError> {
    let lo = le_u32(b, off)? as u64;
    let hi = le_u32(b, off + 4)? as u64;
    Ok(lo | (hi << 32))
}

fn slice(b: &[u8], off: u64, len: u64) -> Result<&[u8], PackageError> {
    let end = off.checked_add(len).ok_or(PackageError::OutOfBounds)?;
    let (off, end) = (usize::try_from(off), usize::try_from(end));
    match (off, end) {
        (Ok(off), Ok(end)) => b.get(off..end).ok_or(PackageError::OutOfBounds),
        _ => Err(PackageError::OutOfBounds),
    }
}

impl<'a> Package<'a> {
    /// Validates the header and every VM descriptor of `bytes`.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, PackageError> {
        if bytes.len() < HEADER_LEN {
            return Err(PackageError::Truncated);
        }
        if bytes[..8] != MAGIC {
            return Err(PackageError::BadMagic);
        }
        let total = le_u64(bytes, 8)?;
        let total = usize::try_from(total).map_err(|_| PackageError::Truncated)?;
        if total > bytes.len() || total < HEADER_LEN {
            return Err(PackageError::Truncated);
        }
        let bytes = &bytes[..total];
        let vm_count = le_u32(bytes, 16)?;
        if vm_count > MAX_VMS {
            return Err(PackageError::TooManyVms);
        }
        let flags = le_u32(bytes, 20)?;
        let pkg = Package {
            bytes,
            vm_count,
            flags,
        };
        for i in 0..vm_count {
            pkg.vm(i)?;
        }
        Ok(pkg)
    }

    /// Number of VMs in the package.
    pub fn vm_count(&self) -> u32 {
        self.vm_count
    }

    /// Package-wide flags (`PKG_FLAG_*`).
    pub fn flags(&self) -> u32 {
        self.flags
    }

    /// Total length of the package in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True when the package holds no bytes (never true for a parsed package).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The `index`-th VM.
    pub fn vm(&self, index: u32) -> Result<VmSpec<'a>, PackageError> {
        if index >= self.vm_count {
            return Err(PackageError::OutOfBounds);
        }
        let d = HEADER_LEN + index as usize * VM_DESC_LEN;
        let b = self.bytes;
        if d + VM_DESC_LEN > b.len() {
            return Err(PackageError::Truncated);
        }
        let name = slice(b, le_u32(b, d)? as u64, le_u32(b, d + 4)? as u64)?;
        let mem_bytes = le_u64(b, d + 8)?;
        let vcpus = le_u32(b, d + 16)?;
        let flags = le_u32(b, d + 20)?;
        let kernel = slice(b, le_u64(b, d + 24)?, le_u64(b, d + 32)?)?;
        let initrd_len = le_u64(b, d + 48)?;
        let initrd = slice(b, le_u64(b, d + 40)?, initrd_len)?;
        let cmdline = slice(b, le_u32(b, d + 56)? as u64, le_u32(b, d + 60)? as u64)?;
        if mem_bytes == 0 || vcpus == 0 {
            return Err(PackageError::EmptyVm);
        }
        let mut mac = None;
        if self.flags & PKG_FLAG_VM_EXT != 0 {
            let e = HEADER_LEN + self.vm_count as usize * VM_DESC_LEN + index as usize * VM_EXT_LEN;
            let ext = b.get(e..e + VM_EXT_LEN).ok_or(PackageError::Truncated)?;
            if ext[6] & VM_EXT_HAS_MAC != 0 {
                let mut m = [0u8; 6];
                m.copy_from_slice(&ext[..6]);
                if !valid_unicast_mac(&m) {
                    return Err(PackageError::BadMac);
                }
                mac = Some(m);
            }
        }
        let mut disk = None;
        if self.flags & PKG_FLAG_VM_DISK != 0 {
            let ext_len = if self.flags & PKG_FLAG_VM_EXT != 0 {
                VM_EXT_LEN
            } else {
                0
            };
            let t = HEADER_LEN
                + self.vm_count as usize * (VM_DESC_LEN + ext_len)
                + index as usize * VM_DISK_LEN;
            if t + VM_DISK_LEN > b.len() {
                return Err(PackageError::Truncated);
            }
            let len = le_u64(b, t + 8)?;
            if len > MAX_DISK_IMAGE {
                return Err(PackageError::DiskTooLarge);
            }
            if len != 0 {
                disk = Some(slice(b, le_u64(b, t)?, len)?);
            }
        }
        Ok(VmSpec {
            name: core::str::from_utf8(name).map_err(|_| PackageError::NotUtf8)?,
            mem_bytes,
            vcpus,
            flags,
            kernel,
            initrd: (initrd_len != 0).then_some(initrd),
            cmdline: core::str::from_utf8(cmdline).map_err(|_| PackageError::NotUtf8)?,
            mac,
            disk,
        })
    }

    /// Iterates over all VMs (each already validated by [`Package::parse`]).
    pub fn vms(&self) -> VmEntries<'a> {
        VmEntries {
            pkg: *self,
            next: 0,
        }
    }
}

/// Iterator over the VMs of a package.
#[derive(Debug, Clone)]
pub struct VmEntries<'a> {
    pkg: Package<'a>,
    next: u32,
}

impl<'a> Iterator for VmEntries<'a> {
    type Item = VmSpec<'a>;
    fn next(&mut self) -> Option<Self::Item> {
        let vm = self.pkg.vm(self.next).ok()?;
        self.next += 1;
        Some(vm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PackageBuilder, VmImage};

    fn sample() -> Vec<u8> {
        let mut b = PackageBuilder::new();
        b.add_vm(VmImage {
            name: "vm0".into(),
            mem_bytes: 128 << 20,
            vcpus: 2,
            flags: 0,
            kernel: vec![1, 2, 3, 4],
            initrd: None,
            cmdline: "console=ttyAMA0".into(),
            mac: None,
            disk: None,
        });
        b.add_vm(VmImage {
            name: "vm1".into(),
            mem_bytes: 64 << 20,
            vcpus: 1,
            flags: crate::VM_FLAG_SYSTEM_OFF_ENDS_ALL,
            kernel: vec![9; 100],
            initrd: Some(vec![7; 10]),
            cmdline: String::new(),
            mac: None,
            disk: None,
        });
        b.build()
    }

    fn with_mac() -> Vec<u8> {
        let mut b = PackageBuilder::new();
        for (i, mac) in [None, Some([0x52, 0x54, 0x00, 0x12, 0x34, 0x60])]
            .into_iter()
            .enumerate()
        {
            b.add_vm(VmImage {
                name: format!("vm{i}"),
                mem_bytes: 64 << 20,
                vcpus: 1,
                kernel: vec![5; 8],
                mac,
                ..Default::default()
            });
        }
        b.build()
    }

    #[test]
    fn packages_without_macs_keep_the_original_format() {
        let bytes = sample();
        let p = Package::parse(&bytes).unwrap();
        assert_eq!(p.flags(), 0);
        assert!(p.vms().all(|v| v.mac.is_none()));
        // The name of vm0 starts right after the descriptors: no extension table.
        assert_eq!(
            u32::from_le_bytes(bytes[HEADER_LEN..HEADER_LEN + 4].try_into().unwrap()) as usize,
            HEADER_LEN + 2 * VM_DESC_LEN
        );
    }

    #[test]
    fn macs_round_trip() {
        let bytes = with_mac();
        let p = Package::parse(&bytes).unwrap();
        assert_eq!(p.flags() & PKG_FLAG_VM_EXT, PKG_FLAG_VM_EXT);
        let v: Vec<_> = p.vms().collect();
        assert_eq!(v[0].mac, None);
        assert_eq!(v[1].mac, Some([0x52, 0x54, 0x00, 0x12, 0x34, 0x60]));
        assert_eq!(v[1].kernel, &[5; 8]);
        for len in 0..bytes.len() {
            assert!(Package::parse(&bytes[..len]).is_err(), "len {len}");
        }
    }

    #[test]
    fn old_readers_see_the_same_vms() {
        // A reader that ignores the flags (the format before the extension table) reads
        // every descriptor through absolute offsets: clearing the flag must only drop MACs.
        let mut bytes = with_mac();
        bytes[20..24].copy_from_slice(&0u32.to_le_bytes());
        let p = Package::parse(&bytes).unwrap();
        let v: Vec<_> = p.vms().collect();
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].name, "vm1");
        assert_eq!(v[1].kernel, &[5; 8]);
        assert!(v.iter().all(|v| v.mac.is_none()));
    }

    #[test]
    fn group_macs_are_rejected() {
        let mut bytes = with_mac();
        let ext = HEADER_LEN + 2 * VM_DESC_LEN + VM_EXT_LEN;
        bytes[ext] |= 1; // multicast bit
        assert_eq!(Package::parse(&bytes).unwrap_err(), PackageError::BadMac);
        assert!(!crate::valid_unicast_mac(&[0xff; 6]));
        assert!(!crate::valid_unicast_mac(&[0; 6]));
        assert!(crate::valid_unicast_mac(&[0x02, 0, 0, 0, 0, 1]));
        assert!(crate::valid_unicast_mac(&[0x00, 0x1b, 0x21, 0, 0, 1]));
    }

    /// vm0: a MAC and no disk; vm1: a 1000-byte disk image; vm2: a disk and a MAC.
    fn with_disks(macs: bool) -> Vec<u8> {
        let mut b = PackageBuilder::new();
        let disks = [None, Some(vec![0xd1; 1000]), Some(b"DISK-2".to_vec())];
        for (i, disk) in disks.into_iter().enumerate() {
            b.add_vm(VmImage {
                name: format!("vm{i}"),
                mem_bytes: 64 << 20,
                vcpus: 1,
                kernel: vec![5; 8],
                initrd: (i == 2).then(|| vec![6; 3]),
                mac: (macs && i != 1).then_some([0x02, 0, 0, 0, 0, i as u8 + 1]),
                disk,
                ..Default::default()
            });
        }
        b.build()
    }

    #[test]
    fn disk_images_round_trip() {
        for macs in [false, true] {
            let bytes = with_disks(macs);
            let p = Package::parse(&bytes).unwrap();
            assert_eq!(p.flags() & PKG_FLAG_VM_DISK, PKG_FLAG_VM_DISK);
            assert_eq!(p.flags() & PKG_FLAG_VM_EXT != 0, macs);
            let v: Vec<_> = p.vms().collect();
            assert_eq!(v.len(), 3);
            assert_eq!(v[0].disk, None);
            assert_eq!(v[1].disk, Some(&[0xd1u8; 1000][..]));
            assert_eq!(v[2].disk, Some(&b"DISK-2"[..]));
            assert_eq!(v[2].initrd, Some(&[6u8; 3][..]));
            assert_eq!(v[2].kernel, &[5; 8]);
            if macs {
                assert_eq!(v[0].mac, Some([2, 0, 0, 0, 0, 1]));
                assert_eq!(v[1].mac, None);
                assert_eq!(v[2].mac, Some([2, 0, 0, 0, 0, 3]));
            }
            for len in 0..bytes.len() {
                assert!(Package::parse(&bytes[..len]).is_err(), "len {len}");
            }
        }
    }

    #[test]
    fn packages_without_disks_have_no_disk_table() {
        for bytes in [sample(), with_mac()] {
            let p = Package::parse(&bytes).unwrap();
            assert_eq!(p.flags() & PKG_FLAG_VM_DISK, 0);
            assert!(p.vms().all(|v| v.disk.is_none()));
        }
    }

    #[test]
    fn old_readers_see_the_same_vms_with_disks() {
        // Clearing the disk flag (a reader that predates the disk table) only drops disks:
        // the MAC table stays right after the descriptors and offsets are absolute.
        let mut bytes = with_disks(true);
        bytes[20..24].copy_from_slice(&PKG_FLAG_VM_EXT.to_le_bytes());
        let p = Package::parse(&bytes).unwrap();
        let v: Vec<_> = p.vms().collect();
        assert_eq!(v[2].name, "vm2");
        assert_eq!(v[2].mac, Some([2, 0, 0, 0, 0, 3]));
        assert!(v.iter().all(|v| v.disk.is_none()));
        // ... and one that ignores all flags.
        bytes[20..24].copy_from_slice(&0u32.to_le_bytes());
        let p = Package::parse(&bytes).unwrap();
        assert_eq!(p.vm(1).unwrap().kernel, &[5; 8]);
    }

    #[test]
    fn corrupt_disk_records_are_rejected() {
        let table = HEADER_LEN + 3 * VM_DESC_LEN;
        // vm1's disk offset far outside the package
        let mut bytes = with_disks(false);
        let r = table + VM_DISK_LEN;
        bytes[r..r + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(
            Package::parse(&bytes).unwrap_err(),
            PackageError::OutOfBounds
        );
        // a length beyond the limit, even if the package were that long
        let mut bytes = with_disks(false);
        bytes[r + 8..r + 16].copy_from_slice(&(crate::MAX_DISK_IMAGE + 1).to_le_bytes());
        assert_eq!(
            Package::parse(&bytes).unwrap_err(),
            PackageError::DiskTooLarge
        );
        // the flag set on a package without the table: the records read garbage (names,
        // payload) and must fail cleanly or yield in-bounds slices, never panic
        let mut bytes = sample();
        bytes[20..24].copy_from_slice(&PKG_FLAG_VM_DISK.to_le_bytes());
        if let Ok(p) = Package::parse(&bytes) {
            for v in p.vms() {
                assert!(v.disk.is_none_or(|d| d.len() <= bytes.len()));
            }
        }
        // garbage after a valid header
        let mut junk = sample();
        for (i, b) in junk.iter_mut().enumerate().skip(HEADER_LEN) {
            *b = (i * 37 + 11) as u8;
        }
        assert!(Package::parse(&junk).is_err());
    }

    #[test]
    fn errors_describe_themselves() {
        assert_eq!(
            PackageError::DiskTooLarge.to_string(),
            "a VM's disk image is larger than 64 MiB"
        );
    }

    #[test]
    fn round_trip() {
        let bytes = sample();
        let p = Package::parse(&bytes).unwrap();
        assert_eq!(p.vm_count(), 2);
        let v: Vec<_> = p.vms().collect();
        assert_eq!(v[0].name, "vm0");
        assert_eq!(v[0].kernel, &[1, 2, 3, 4]);
        assert_eq!(v[0].initrd, None);
        assert_eq!(v[0].cmdline, "console=ttyAMA0");
        assert_eq!(v[1].vcpus, 1);
        assert_eq!(v[1].initrd, Some(&[7u8; 10][..]));
        assert_eq!(v[1].flags, crate::VM_FLAG_SYSTEM_OFF_ENDS_ALL);
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let bytes = sample();
        for len in 0..bytes.len() {
            assert!(Package::parse(&bytes[..len]).is_err(), "len {len}");
        }
    }

    #[test]
    fn corrupt_offsets_are_rejected() {
        let mut bytes = sample();
        // kernel offset of vm0 -> far outside
        bytes[HEADER_LEN + 24..HEADER_LEN + 32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(
            Package::parse(&bytes).unwrap_err(),
            PackageError::OutOfBounds
        );
        let mut bytes = sample();
        bytes[0] = b'X';
        assert_eq!(Package::parse(&bytes).unwrap_err(), PackageError::BadMagic);
        let mut bytes = sample();
        bytes[16..20].copy_from_slice(&1000u32.to_le_bytes());
        assert_eq!(
            Package::parse(&bytes).unwrap_err(),
            PackageError::TooManyVms
        );
    }
}
