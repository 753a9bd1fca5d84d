//! Test doubles: an in-memory table allocator that counts live pages and a TLB mock that
//! records every maintenance call together with what the tables held at that moment.
#![allow(dead_code)]

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use stage2::{vttbr_vmid, TableAllocator, TlbMaintenance};

/// Fake physical base of the table pool.
const POOL_BASE: u64 = 0x10_0000_0000;

#[derive(Default)]
pub struct Pool {
    pages: RefCell<BTreeMap<u64, *mut [u64; 512]>>,
    next: Cell<u64>,
    live: Cell<usize>,
    limit: Cell<Option<usize>>,
    allocs: Cell<usize>,
}

impl Pool {
    pub fn live(&self) -> usize {
        self.live.get()
    }
    /// Limit the number of live pages (None = unlimited).
    pub fn set_limit(&self, l: Option<usize>) {
        self.limit.set(l)
    }
    pub fn allocs(&self) -> usize {
        self.allocs.get()
    }
    pub fn read(&self, pa: u64, idx: usize) -> u64 {
        let p = *self
            .pages
            .borrow()
            .get(&pa)
            .expect("read of a page that is not allocated");
        // SAFETY: the page is allocated (present in the map).
        unsafe { (*p)[idx] }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for (_, p) in self.pages.borrow_mut().iter() {
            // SAFETY: created by Box::into_raw in alloc_pages and not yet freed.
            drop(unsafe { Box::from_raw(*p) });
        }
    }
}

#[derive(Clone, Default)]
pub struct TestAlloc(pub Rc<Pool>);

impl TestAlloc {
    pub fn new() -> Self {
        let p = Pool::default();
        p.next.set(POOL_BASE);
        TestAlloc(Rc::new(p))
    }
}

// SAFETY: pages are heap boxes that stay put until freed; addresses are never reused.
unsafe impl TableAllocator for TestAlloc {
    fn alloc_pages(&mut self, count: usize) -> Option<u64> {
        let p = &self.0;
        if let Some(l) = p.limit.get() {
            if p.live.get() + count > l {
                return None;
            }
        }
        let align = count as u64 * 4096;
        let pa = p.next.get().div_ceil(align) * align;
        p.next.set(pa + align);
        for i in 0..count as u64 {
            let b = Box::into_raw(Box::new([0u64; 512]));
            p.pages.borrow_mut().insert(pa + i * 4096, b);
        }
        p.live.set(p.live.get() + count);
        p.allocs.set(p.allocs.get() + 1);
        Some(pa)
    }

    fn free_pages(&mut self, pa: u64, count: usize) {
        let p = &self.0;
        for i in 0..count as u64 {
            let b = p
                .pages
                .borrow_mut()
                .remove(&(pa + i * 4096))
                .expect("double free or foreign page");
            // SAFETY: created by Box::into_raw in alloc_pages.
            drop(unsafe { Box::from_raw(b) });
        }
        p.live.set(p.live.get() - count);
    }

    fn phys_to_virt(&self, pa: u64) -> *mut u64 {
        let p = *self
            .0
            .pages
            .borrow()
            .get(&pa)
            .expect("phys_to_virt of a page that is not allocated");
        p as *mut u64
    }
}

/// Descriptor and level translating `ipa`, walking the pool like the hardware would.
pub fn hw_walk(pool: &Pool, root: u64, start_level: u32, ipa: u64) -> Option<(u64, u32)> {
    let mut table = root;
    let mut level = start_level;
    loop {
        let shift = 12 + 9 * (3 - level);
        let idx = (ipa >> shift) as usize;
        let (page, i) = if level == start_level {
            (table + (idx / 512) as u64 * 4096, idx % 512)
        } else {
            (table, idx % 512)
        };
        let d = pool.read(page, i);
        if d & 1 == 0 {
            return None;
        }
        if level < 3 && d & 2 != 0 {
            table = d & 0x0000_ffff_ffff_f000;
            level += 1;
            continue;
        }
        return Some((d, level));
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ev {
    Publish,
    /// TLBI IPAS2E1IS; `live` = descriptor the tables held for `ipa` at that moment.
    Ipa {
        vmid: u16,
        ipa: u64,
        level: u32,
        live: Option<u64>,
    },
    /// DSB; TLBI VMALLE1IS; DSB; ISB. `live` = descriptor for the last invalidated IPA.
    Sync {
        vmid: u16,
        live: Option<u64>,
    },
    Vmid {
        vmid: u16,
    },
    All,
}

/// What the TLB mock walks to see the tables: pool, root, start level.
type View = Option<(Rc<Pool>, u64, u32)>;

#[derive(Clone, Default)]
pub struct RecTlb {
    pub log: Rc<RefCell<Vec<Ev>>>,
    /// (pool, root, start level) for snapshots.
    pub view: Rc<RefCell<View>>,
    last_ipa: Rc<Cell<u64>>,
}

impl RecTlb {
    pub fn attach(&self, alloc: &TestAlloc, root: u64, start_level: u32) {
        *self.view.borrow_mut() = Some((alloc.0.clone(), root, start_level));
    }
    fn live(&self, ipa: u64) -> Option<u64> {
        let v = self.view.borrow();
        let (pool, root, sl) = v.as_ref()?;
        hw_walk(pool, *root, *sl, ipa).map(|(d, _)| d)
    }
    pub fn take(&self) -> Vec<Ev> {
        std::mem::take(&mut *self.log.borrow_mut())
    }
}

impl TlbMaintenance for RecTlb {
    fn publish(&self) {
        self.log.borrow_mut().push(Ev::Publish);
    }
    fn invalidate_ipa(&self, vttbr: u64, ipa: u64, level: u32) {
        self.last_ipa.set(ipa);
        let live = self.live(ipa);
        self.log.borrow_mut().push(Ev::Ipa {
            vmid: vttbr_vmid(vttbr),
            ipa,
            level,
            live,
        });
    }
    fn sync_after_ipa_invalidation(&self, vttbr: u64) {
        let live = self.live(self.last_ipa.get());
        self.log.borrow_mut().push(Ev::Sync {
            vmid: vttbr_vmid(vttbr),
            live,
        });
    }
    fn invalidate_vmid(&self, vttbr: u64) {
        self.log.borrow_mut().push(Ev::Vmid {
            vmid: vttbr_vmid(vttbr),
        });
    }
    fn invalidate_all(&self) {
        self.log.borrow_mut().push(Ev::All);
    }
}
