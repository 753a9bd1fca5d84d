//! The VM's memory map: what the VMM knows about each guest-physical region. The stage-2
//! tables are built from it, and the fault handler asks it what a faulting IPA is.

use stage2::IpaRegion;

/// What backs a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// RAM (or ROM) at physical address `pa`.
    Ram {
        /// Physical address of the region's first byte.
        pa: u64,
        /// The guest may write it.
        writable: bool,
        /// Mapped page by page on first touch instead of up front.
        lazy: bool,
    },
    /// An emulated device: accesses trap to the VMM.
    Mmio,
}

/// One region of guest-physical address space.
#[derive(Debug, Clone, Copy)]
pub struct Region {
    /// Name for the output.
    pub name: &'static str,
    /// First IPA.
    pub ipa: u64,
    /// Length in bytes.
    pub len: u64,
    /// What backs it.
    pub backing: Backing,
}

impl Region {
    /// Whether `ipa` lies in the region.
    pub fn contains(&self, ipa: u64) -> bool {
        (self.ipa..self.ipa + self.len).contains(&ipa)
    }

    /// The region as [`stage2::classify`] needs to know it.
    pub fn ipa_region(&self) -> IpaRegion {
        match self.backing {
            Backing::Ram { writable, .. } => IpaRegion::Ram { writable },
            Backing::Mmio => IpaRegion::Mmio,
        }
    }

    /// Whether RAM of this region is populated on first touch.
    pub fn lazy(&self) -> bool {
        matches!(self.backing, Backing::Ram { lazy: true, .. })
    }

    /// Physical address backing `ipa`, for RAM regions.
    pub fn pa_of(&self, ipa: u64) -> Option<u64> {
        match self.backing {
            Backing::Ram { pa, .. } if self.contains(ipa) => Some(pa + (ipa - self.ipa)),
            _ => None,
        }
    }
}

/// All regions of one VM.
pub struct MemoryMap {
    regions: Vec<Region>,
}

impl MemoryMap {
    /// A map of non-overlapping `regions`.
    pub fn new(regions: Vec<Region>) -> Self {
        for (i, a) in regions.iter().enumerate() {
            for b in &regions[i + 1..] {
                assert!(
                    a.ipa + a.len <= b.ipa || b.ipa + b.len <= a.ipa,
                    "regions {} and {} overlap",
                    a.name,
                    b.name
                );
            }
        }
        Self { regions }
    }

    /// Every region.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The region containing `ipa`, if any.
    pub fn region_of(&self, ipa: u64) -> Option<&Region> {
        self.regions.iter().find(|r| r.contains(ipa))
    }

    /// The region called `name`.
    pub fn get(&self, name: &str) -> &Region {
        self.regions
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no region {name}"))
    }

    /// Changes whether the guest may write the RAM region `name`.
    pub fn set_writable(&mut self, name: &str, yes: bool) {
        let r = self
            .regions
            .iter_mut()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no region {name}"));
        if let Backing::Ram { writable, .. } = &mut r.backing {
            *writable = yes;
        }
    }
}
