//! Building a VM package (host side: xtask and tests).

use alloc::{string::String, vec::Vec};

use crate::{
    HEADER_LEN, MAGIC, PKG_FLAG_VM_DISK, PKG_FLAG_VM_EXT, VM_DESC_LEN, VM_DISK_LEN, VM_EXT_HAS_MAC,
    VM_EXT_LEN,
};

/// One VM to put into a package, with owned images.
#[derive(Debug, Clone, Default)]
pub struct VmImage {
    /// Name shown as the console prefix.
    pub name: String,
    /// Guest RAM size in bytes.
    pub mem_bytes: u64,
    /// Number of vCPUs.
    pub vcpus: u32,
    /// `VM_FLAG_*` bits.
    pub flags: u32,
    /// Kernel image (arm64 `Image` or raw binary).
    pub kernel: Vec<u8>,
    /// Optional initrd.
    pub initrd: Option<Vec<u8>>,
    /// Kernel command line.
    pub cmdline: String,
    /// MAC address of the VM's virtio-net device (`None`: the hypervisor's default). The
    /// caller checks it is a unicast address; the reader rejects group addresses.
    pub mac: Option<[u8; 6]>,
    /// Image of the VM's RAM disk (`None`: the hypervisor's default disk). The caller checks
    /// it is not empty and at most [`crate::MAX_DISK_IMAGE`] bytes; the reader rejects larger
    /// ones and treats an empty one as none.
    pub disk: Option<Vec<u8>>,
}

/// Collects VMs and serialises them into the package format.
#[derive(Debug, Default)]
pub struct PackageBuilder {
    vms: Vec<VmImage>,
}

impl PackageBuilder {
    /// An empty package.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a VM.
    pub fn add_vm(&mut self, vm: VmImage) -> &mut Self {
        self.vms.push(vm);
        self
    }

    /// Serialises the package. Large payloads (kernels, initrds, disk images) are 4 KiB aligned.
    pub fn build(&self) -> Vec<u8> {
        let desc_end = HEADER_LEN + self.vms.len() * VM_DESC_LEN;
        // The extension table only when a VM needs it: otherwise the original format.
        let ext = self.vms.iter().any(|v| v.mac.is_some());
        let ext_end = desc_end + if ext { self.vms.len() * VM_EXT_LEN } else { 0 };
        // The disk table likewise, after the extension table.
        let disks = self.vms.iter().any(|v| v.disk.is_some());
        let disk_end = ext_end
            + if disks {
                self.vms.len() * VM_DISK_LEN
            } else {
                0
            };
        let mut out = alloc::vec![0u8; disk_end];
        let put = |out: &mut Vec<u8>, data: &[u8], align: usize| -> (u64, u64) {
            while !out.len().is_multiple_of(align) {
                out.push(0);
            }
            let off = out.len() as u64;
            out.extend_from_slice(data);
            (off, data.len() as u64)
        };
        for (i, vm) in self.vms.iter().enumerate() {
            let d = HEADER_LEN + i * VM_DESC_LEN;
            let (name_off, name_len) = put(&mut out, vm.name.as_bytes(), 1);
            let (cmd_off, cmd_len) = put(&mut out, vm.cmdline.as_bytes(), 1);
            let (k_off, k_len) = put(&mut out, &vm.kernel, 4096);
            let (i_off, i_len) = match &vm.initrd {
                Some(initrd) => put(&mut out, initrd, 4096),
                None => (0, 0),
            };
            let desc = &mut out[d..d + VM_DESC_LEN];
            desc[0..4].copy_from_slice(&(name_off as u32).to_le_bytes());
            desc[4..8].copy_from_slice(&(name_len as u32).to_le_bytes());
            desc[8..16].copy_from_slice(&vm.mem_bytes.to_le_bytes());
            desc[16..20].copy_from_slice(&vm.vcpus.to_le_bytes());
            desc[20..24].copy_from_slice(&vm.flags.to_le_bytes());
            desc[24..32].copy_from_slice(&k_off.to_le_bytes());
            desc[32..40].copy_from_slice(&k_len.to_le_bytes());
            desc[40..48].copy_from_slice(&i_off.to_le_bytes());
            desc[48..56].copy_from_slice(&i_len.to_le_bytes());
            desc[56..60].copy_from_slice(&(cmd_off as u32).to_le_bytes());
            desc[60..64].copy_from_slice(&(cmd_len as u32).to_le_bytes());
            if let (true, Some(mac)) = (ext, vm.mac) {
                let e = desc_end + i * VM_EXT_LEN;
                out[e..e + 6].copy_from_slice(&mac);
                out[e + 6] = VM_EXT_HAS_MAC;
            }
            if let (true, Some(disk)) = (disks, &vm.disk) {
                let (off, len) = put(&mut out, disk, 4096);
                let r = ext_end + i * VM_DISK_LEN;
                out[r..r + 8].copy_from_slice(&off.to_le_bytes());
                out[r + 8..r + 16].copy_from_slice(&len.to_le_bytes());
            }
        }
        let total = out.len() as u64;
        out[0..8].copy_from_slice(&MAGIC);
        out[8..16].copy_from_slice(&total.to_le_bytes());
        out[16..20].copy_from_slice(&(self.vms.len() as u32).to_le_bytes());
        let flags =
            if ext { PKG_FLAG_VM_EXT } else { 0 } | if disks { PKG_FLAG_VM_DISK } else { 0 };
        out[20..24].copy_from_slice(&flags.to_le_bytes());
        out
    }
}
