//! The toy CPU's stage-2 MMU: translates a guest access by walking the tables in physical
//! memory the way the hardware walker does, through the simulated TLB, and reports a stage-2
//! abort with a fault status code (`ESR_EL2.ISS.DFSC`) when the tables do not allow it.

use std::rc::Rc;

use stage2::Granule;

use crate::phys::{Frames, PhysMem};
use crate::tlb::{TlbEntry, ToyTlb};

/// The stage-2 table type of the toy VMM.
pub type Table = stage2::Stage2Table<Frames, ToyTlb>;

/// Descriptor bit 0: valid.
const DESC_VALID: u64 = 1 << 0;
/// Descriptor bit 1: table (levels 0-2) or page (level 3) descriptor; 0 = block.
const DESC_TABLE_OR_PAGE: u64 = 1 << 1;
/// `S2AP[0]`, bit 6: the guest may read.
const S2AP_READ: u64 = 1 << 6;
/// `S2AP[1]`, bit 7: the guest may write.
const S2AP_WRITE: u64 = 1 << 7;
/// `AF`, bit 10: access flag.
const DESC_AF: u64 = 1 << 10;
/// Output address (next table, block or page), bits `[47:12]`.
const DESC_OA: u64 = 0x0000_ffff_ffff_f000;
/// The page (last) lookup level.
const LAST_LEVEL: u32 = 3;

/// `DFSC` of an address size fault at level 0 (`0b0000LL`).
const FSC_ADDRESS_SIZE: u8 = 0x00;
/// `DFSC` of a translation fault at level 0 (`0b0001LL`).
const FSC_TRANSLATION: u8 = 0x04;
/// `DFSC` of an access flag fault at level 0 (`0b0010LL`).
const FSC_ACCESS_FLAG: u8 = 0x08;
/// `DFSC` of a permission fault at level 0 (`0b0011LL`).
const FSC_PERMISSION: u8 = 0x0c;

/// A guest data access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A 64-bit load.
    Read,
    /// A 64-bit store of this value.
    Write(u64),
}

/// A stage-2 data abort, as the VMM would see it in `ESR_EL2` and `HPFAR_EL2`/`FAR_EL2`.
#[derive(Debug, Clone, Copy)]
pub struct Stage2Abort {
    /// The faulting IPA.
    pub ipa: u64,
    /// `DFSC`: fault kind and level.
    pub fsc: u8,
    /// The access that faulted (`WnR` = it was a write).
    pub access: Access,
}

/// One toy CPU: physical memory plus the MMU's TLB (the TLB belongs to the table's
/// `TlbMaintenance`, so the table code can invalidate it).
pub struct ToyCpu {
    mem: Rc<PhysMem>,
}

impl ToyCpu {
    /// A CPU accessing `mem`.
    pub fn new(mem: Rc<PhysMem>) -> Self {
        Self { mem }
    }

    /// Performs a guest access at `ipa` under the VM's stage-2 tables `s2`, running with
    /// the `VTTBR_EL2` value `s2` last handed out. Returns the loaded value (0 for a store).
    pub fn access(&self, s2: &Table, ipa: u64, access: Access) -> Result<u64, Stage2Abort> {
        let abort = |fsc| Stage2Abort { ipa, fsc, access };
        let vmid = s2.vmid().expect("guest runs before VTTBR_EL2 was set");
        let leaf = match s2.tlb().lookup(vmid, ipa) {
            Some(hit) => hit,
            None => {
                let leaf = self.walk(s2, vmid, ipa).map_err(abort)?;
                s2.tlb().fill(leaf);
                leaf
            }
        };
        let level = level_of(s2.config().granule(), leaf.size);
        let needed = match access {
            Access::Read => S2AP_READ,
            Access::Write(_) => S2AP_WRITE,
        };
        if leaf.desc & needed == 0 {
            return Err(abort(FSC_PERMISSION | level));
        }
        let pa = (leaf.desc & DESC_OA & !(leaf.size - 1)) | (ipa & (leaf.size - 1));
        match access {
            Access::Read => Ok(self.mem.read(pa)),
            Access::Write(value) => {
                self.mem.write(pa, value);
                Ok(0)
            }
        }
    }

    /// The hardware table walk: from the (possibly concatenated) root down to a leaf.
    fn walk(&self, s2: &Table, vmid: u16, ipa: u64) -> Result<TlbEntry, u8> {
        let cfg = s2.config();
        let g = cfg.granule();
        let mut level = cfg.start_level();
        if ipa >= cfg.ipa_size() {
            return Err(FSC_ADDRESS_SIZE | level as u8);
        }
        let mut table = s2.root_pa();
        // Concatenated root tables are contiguous and indexed as one larger table.
        let mut entries = g.entries_per_table() as u64 * u64::from(cfg.root_tables());
        loop {
            let index = (ipa >> g.level_shift(level)) % entries;
            let desc = self.mem.read(table + index * 8);
            let fault_level = level as u8;
            if desc & DESC_VALID == 0 {
                return Err(FSC_TRANSLATION | fault_level);
            }
            let table_or_page = desc & DESC_TABLE_OR_PAGE != 0;
            if level < LAST_LEVEL && table_or_page {
                table = desc & DESC_OA;
                level += 1;
                entries = g.entries_per_table() as u64;
                continue;
            }
            if (level == LAST_LEVEL && !table_or_page) || !g.leaf_allowed(level) {
                // Reserved encoding: the walker treats it as invalid.
                return Err(FSC_TRANSLATION | fault_level);
            }
            if desc & DESC_AF == 0 {
                return Err(FSC_ACCESS_FLAG | fault_level);
            }
            let size = g.level_size(level);
            return Ok(TlbEntry {
                vmid,
                ipa: ipa & !(size - 1),
                size,
                desc,
            });
        }
    }
}

/// Lookup level of a leaf of `size` bytes.
fn level_of(g: Granule, size: u64) -> u8 {
    (0..=LAST_LEVEL)
        .find(|&l| g.level_size(l) == size)
        .expect("leaf size of no level") as u8
}
