//! Stage-1 address translation: short-descriptor ([`short`]) and LPAE long-descriptor
//! ([`lpae`]) walks, permission checks, fault status encodings, and a software TLB ([`tlb`]).

pub mod attrs;
pub mod lpae;
pub mod short;
pub mod tlb;

use crate::bus::Bus;
use crate::cp15::Cp15;

/// Permission bits cached in the TLB.
pub mod perm {
    /// Privileged read.
    pub const PR: u8 = 1;
    /// Privileged write.
    pub const PW: u8 = 2;
    /// Privileged execute.
    pub const PX: u8 = 4;
    /// Unprivileged read.
    pub const UR: u8 = 8;
    /// Unprivileged write.
    pub const UW: u8 = 16;
    /// Unprivileged execute.
    pub const UX: u8 = 32;
}

/// Kind of memory access being translated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// Store.
    pub write: bool,
    /// Instruction fetch.
    pub fetch: bool,
    /// Checked with User-mode permissions (User mode, or `LDRT`-family).
    pub user: bool,
}

impl Access {
    /// The permission bit this access needs.
    pub fn needed(self) -> u8 {
        match (self.user, self.fetch, self.write) {
            (false, true, _) => perm::PX,
            (false, false, false) => perm::PR,
            (false, false, true) => perm::PW,
            (true, true, _) => perm::UX,
            (true, false, false) => perm::UR,
            (true, false, true) => perm::UW,
        }
    }
}

/// A translation fault, before it is encoded into a FSR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// Alignment fault.
    Alignment,
    /// No valid descriptor.
    Translation,
    /// Access flag clear.
    AccessFlag,
    /// Domain not accessible (short descriptors only).
    Domain,
    /// Permission denied.
    Permission,
    /// External abort on the translation table walk.
    WalkExternal,
    /// External abort on the access itself.
    External,
}

/// A fault with the information its FSR encoding needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// What went wrong.
    pub kind: FaultKind,
    /// Lookup level (short: 1 = section, 2 = page; LPAE: 1..=3).
    pub level: u8,
    /// Domain (short descriptors).
    pub domain: u8,
}

impl Fault {
    /// Fault with no level/domain.
    pub fn new(kind: FaultKind) -> Fault {
        Fault {
            kind,
            level: 0,
            domain: 0,
        }
    }

    /// Encodes a DFSR/IFSR value in the format selected by `TTBCR.EAE`.
    pub fn fsr(self, lpae: bool, write: bool) -> u32 {
        let wnr = if write { 1 << 11 } else { 0 };
        if lpae {
            let l = self.level as u32 & 3;
            let status = match self.kind {
                FaultKind::Alignment => 0b100001,
                FaultKind::Translation => 0b000100 | l,
                FaultKind::AccessFlag => 0b001000 | l,
                FaultKind::Permission | FaultKind::Domain => 0b001100 | l,
                FaultKind::WalkExternal => 0b010100 | l,
                FaultKind::External => 0b010000,
            };
            return wnr | 1 << 9 | status;
        }
        let page = self.level >= 2;
        let fs: u32 = match self.kind {
            FaultKind::Alignment => 0b00001,
            FaultKind::Translation => {
                if page {
                    0b00111
                } else {
                    0b00101
                }
            }
            FaultKind::AccessFlag => {
                if page {
                    0b00110
                } else {
                    0b00011
                }
            }
            FaultKind::Domain => {
                if page {
                    0b01011
                } else {
                    0b01001
                }
            }
            FaultKind::Permission => {
                if page {
                    0b01111
                } else {
                    0b01101
                }
            }
            FaultKind::WalkExternal => {
                if page {
                    0b01110
                } else {
                    0b01100
                }
            }
            FaultKind::External => 0b01000,
        };
        wnr | (fs >> 4) << 10 | (self.domain as u32 & 15) << 4 | (fs & 15)
    }
}

/// A successful walk: the 4 KiB page frame and its permissions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Walk {
    /// Physical address of the 4 KiB page containing the VA.
    pub pa_page: u64,
    /// [`perm`] bits.
    pub perms: u8,
    /// Level of the final descriptor (for permission faults).
    pub level: u8,
    /// Domain (short descriptors; LPAE: 0).
    pub domain: u8,
    /// Domain is Manager (no permission checks) or LPAE (none).
    pub manager: bool,
    /// The descriptor's nG bit is clear: the translation holds in every address space
    /// (ASID), not only the current one.
    pub global: bool,
    /// The size of the mapping the final descriptor makes, log2 of bytes: 12 (small
    /// page), 16 (large page), 20 (section), 24 (supersection); LPAE 12, 21 or 30. A TLB
    /// invalidation by an address in it invalidates all of it.
    pub size_log2: u8,
    /// The memory type the descriptor gives ([`attrs`]).
    pub mem: attrs::MemType,
}

/// The current address space identifier: `CONTEXTIDR.ASID` with short descriptors, with
/// LPAE the ASID field (bits 55:48) of `TTBR1` if `TTBCR.A1` is set, else of `TTBR0`.
pub fn asid(cp15: &Cp15) -> u8 {
    if cp15.lpae() {
        let ttbr = if cp15.ttbcr & (1 << 22) != 0 {
            cp15.ttbr1
        } else {
            cp15.ttbr0
        };
        (ttbr >> 48) as u8
    } else {
        cp15.contextidr as u8
    }
}

/// A TLB maintenance operation of the guest (`MCR p15, 0, Rt, c8, CRm, opc2`), as a
/// translator that caches translations (code keyed by ASID, shadow tables) must apply it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlbMaintenance {
    /// Every entry (`TLBIALL`, `TLBIALLIS`, the instruction/data-TLB forms).
    All,
    /// The non-global entries of one ASID (`TLBIASID`, `TLBIASIDIS`, ...).
    Asid(u8),
    /// The entries of one page: of one ASID, and global ones (`TLBIMVA`, `TLBIMVAIS`,
    /// `TLBIMVAL`, ...).
    Page {
        /// The page's address (bits 31:12).
        va: u32,
        /// The ASID.
        asid: u8,
    },
    /// The entries of one page in every ASID (`TLBIMVAA`, `TLBIMVAAIS`, `TLBIMVAAL`...).
    PageAllAsids(u32),
}

impl TlbMaintenance {
    /// The operation `MCR p15, 0, v, c8, crm, opc2` performs (any unknown form: all).
    pub fn decode(crm: u8, opc2: u8, v: u32) -> TlbMaintenance {
        match (crm, opc2) {
            (3 | 5 | 6 | 7, 1 | 5) => TlbMaintenance::Page {
                va: v & !0xfff,
                asid: v as u8,
            },
            (3 | 5 | 6 | 7, 2) => TlbMaintenance::Asid(v as u8),
            (3 | 7, 3 | 7) => TlbMaintenance::PageAllAsids(v & !0xfff),
            _ => TlbMaintenance::All,
        }
    }

    /// One operation covering both `self` and `other` (at least).
    pub fn merge(self, other: TlbMaintenance) -> TlbMaintenance {
        if self == other {
            self
        } else {
            TlbMaintenance::All
        }
    }
}

/// Walks the translation tables for `va` (MMU on).
pub fn walk(cp15: &Cp15, bus: &mut dyn Bus, va: u32) -> Result<Walk, Fault> {
    if cp15.lpae() {
        lpae::walk(cp15, bus, va)
    } else {
        short::walk(cp15, bus, va)
    }
}

/// Applies `SCTLR.WXN`: writable pages are never executable.
pub(crate) fn apply_wxn(cp15: &Cp15, mut p: u8) -> u8 {
    if cp15.sctlr & (1 << 19) != 0 {
        if p & perm::PW != 0 {
            p &= !(perm::PX | perm::UX);
        }
        if p & perm::UW != 0 {
            p &= !perm::UX;
        }
    }
    p
}
