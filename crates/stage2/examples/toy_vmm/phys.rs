//! The toy machine's "physical memory": one host allocation standing for a contiguous range of
//! physical addresses, and a frame allocator for stage-2 table pages carved out of it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use stage2::{TableAllocator, PAGE_SIZE};

/// Bytes in one 64-bit word (one stage-2 descriptor).
const WORD: u64 = 8;

/// Physical memory `[base, base + len)`, backed by host memory.
///
/// Every word is a [`Cell`], so the table code may write through the raw pointers
/// [`TableAllocator::phys_to_virt`] hands out while the VMM and the toy MMU read the same
/// words through shared references: all of it is single-threaded interior mutability.
pub struct PhysMem {
    base: u64,
    words: Box<[Cell<u64>]>,
}

impl PhysMem {
    /// `len` bytes (a multiple of 4 KiB) of zeroed memory at physical address `base`.
    pub fn new(base: u64, len: u64) -> Rc<Self> {
        assert!(
            len.is_multiple_of(PAGE_SIZE),
            "memory size must be whole frames"
        );
        let words = (0..len / WORD).map(|_| Cell::new(0)).collect();
        Rc::new(Self { base, words })
    }

    /// First physical address.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.words.len() as u64 * WORD
    }

    /// Index of the 8-byte-aligned word at `pa`.
    fn index(&self, pa: u64) -> usize {
        assert!(
            pa.is_multiple_of(WORD),
            "unaligned physical access at {pa:#x}"
        );
        pa.checked_sub(self.base)
            .map(|off| off / WORD)
            .filter(|&i| i < self.words.len() as u64)
            .unwrap_or_else(|| panic!("physical address {pa:#x} outside memory")) as usize
    }

    /// Reads the word at `pa`.
    pub fn read(&self, pa: u64) -> u64 {
        self.words[self.index(pa)].get()
    }

    /// Writes the word at `pa`.
    pub fn write(&self, pa: u64, value: u64) {
        self.words[self.index(pa)].set(value)
    }

    /// Pointer to the 4 KiB frame at `pa`, valid as long as `self` lives.
    fn frame_ptr(&self, pa: u64) -> *mut u64 {
        assert!(
            pa.is_multiple_of(PAGE_SIZE),
            "frame address {pa:#x} not 4 KiB aligned"
        );
        // Both ends of the frame lie inside the memory.
        let first = self.index(pa);
        self.index(pa + PAGE_SIZE - WORD);
        // Derived from the whole slice, so the pointer may reach every word of the frame;
        // `Cell` makes writing through it legal while shared references exist.
        self.words.as_ptr().wrapping_add(first) as *mut u64
    }
}

/// Which frames of the table pool are in use, plus counters.
struct Pool {
    /// First physical address of the pool.
    base: u64,
    used: Vec<bool>,
    live: usize,
    peak: usize,
}

/// Stage-2 table frames from a fixed pool inside [`PhysMem`]. Cloning gives another handle to
/// the same pool, so the VMM can still count frames after the table took its handle.
#[derive(Clone)]
pub struct Frames {
    mem: Rc<PhysMem>,
    pool: Rc<RefCell<Pool>>,
}

impl Frames {
    /// A pool of the frames in `[base, base + len)`, which must lie inside `mem` and be used
    /// for nothing else.
    pub fn new(mem: Rc<PhysMem>, base: u64, len: u64) -> Self {
        assert!(base.is_multiple_of(PAGE_SIZE) && len.is_multiple_of(PAGE_SIZE));
        assert!(base >= mem.base() && base + len <= mem.base() + mem.len());
        let pool = Pool {
            base,
            used: vec![false; (len / PAGE_SIZE) as usize],
            live: 0,
            peak: 0,
        };
        Self {
            mem,
            pool: Rc::new(RefCell::new(pool)),
        }
    }

    /// Frames handed out and not yet returned.
    pub fn live(&self) -> usize {
        self.pool.borrow().live
    }

    /// Most frames live at any one time.
    pub fn peak(&self) -> usize {
        self.pool.borrow().peak
    }

    /// Frames in the pool.
    pub fn capacity(&self) -> usize {
        self.pool.borrow().used.len()
    }
}

// SAFETY: frames come from a pool region of `PhysMem` that nothing else (guest RAM, ROM) uses,
// the `used` map hands each frame to one owner until it is freed, and `phys_to_virt` returns
// an 8-byte-aligned pointer to the 512 words of that frame, valid while the `Rc<PhysMem>` this
// handle holds keeps the memory alive.
unsafe impl TableAllocator for Frames {
    fn alloc_pages(&mut self, count: usize) -> Option<u64> {
        let mut pool = self.pool.borrow_mut();
        // First fit, aligned to `count` frames (a concatenated root is aligned to its size).
        let first = (0..pool.used.len()).step_by(count).find(|&i| {
            pool.used
                .get(i..i + count)
                .is_some_and(|r| r.iter().all(|u| !u))
        })?;
        pool.used[first..first + count].fill(true);
        pool.live += count;
        pool.peak = pool.peak.max(pool.live);
        let pa = pool.base + first as u64 * PAGE_SIZE;
        // Table pages must start zeroed (all descriptors invalid).
        for w in 0..count as u64 * PAGE_SIZE / WORD {
            self.mem.write(pa + w * WORD, 0);
        }
        Some(pa)
    }

    fn free_pages(&mut self, pa: u64, count: usize) {
        let mut pool = self.pool.borrow_mut();
        let first = ((pa - pool.base) / PAGE_SIZE) as usize;
        let frames = &mut pool.used[first..first + count];
        assert!(
            frames.iter().all(|u| *u),
            "double free of table frames at {pa:#x}"
        );
        frames.fill(false);
        pool.live -= count;
    }

    fn phys_to_virt(&self, pa: u64) -> *mut u64 {
        let pool = self.pool.borrow();
        let index = ((pa - pool.base) / PAGE_SIZE) as usize;
        assert!(pool.used[index], "phys_to_virt of a free frame {pa:#x}");
        self.mem.frame_ptr(pa)
    }
}
