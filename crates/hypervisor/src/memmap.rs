//! Host RAM minus what is already in use (the hypervisor image, the device tree, the VM
//! package): the ranges handed to the frame allocator.

use crate::platform::Range;

/// Largest number of free ranges produced.
pub const MAX_FREE: usize = 32;

/// Free ranges: `mem` with every `reserved` range cut out.
#[derive(Debug, Clone)]
pub struct FreeRanges {
    ranges: [Range; MAX_FREE],
    count: usize,
}

impl FreeRanges {
    /// Computes `mem \ reserved`. Pieces beyond [`MAX_FREE`] are dropped (never unsafe:
    /// unused memory is only wasted).
    pub fn compute(mem: &[Range], reserved: &[Range]) -> Self {
        let mut out = FreeRanges {
            ranges: [Range::default(); MAX_FREE],
            count: 0,
        };
        for m in mem {
            out.push(*m);
        }
        for r in reserved {
            let mut next = FreeRanges {
                ranges: [Range::default(); MAX_FREE],
                count: 0,
            };
            for f in out.as_slice() {
                if r.end() <= f.base || r.base >= f.end() {
                    next.push(*f);
                    continue;
                }
                if r.base > f.base {
                    next.push(Range {
                        base: f.base,
                        size: r.base - f.base,
                    });
                }
                if r.end() < f.end() {
                    next.push(Range {
                        base: r.end(),
                        size: f.end() - r.end(),
                    });
                }
            }
            out = next;
        }
        out
    }

    fn push(&mut self, r: Range) {
        if r.size > 0 && self.count < MAX_FREE {
            self.ranges[self.count] = r;
            self.count += 1;
        }
    }

    /// The free ranges.
    pub fn as_slice(&self) -> &[Range] {
        &self.ranges[..self.count]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(base: u64, size: u64) -> Range {
        Range { base, size }
    }

    #[test]
    fn cuts_reserved_ranges() {
        let mem = [r(0x4000_0000, 0x4000_0000)];
        let res = [
            r(0x4000_0000, 0x100_0000),
            r(0x4800_0000, 0x1000),
            r(0x9000_0000, 0x1000),
        ];
        let f = FreeRanges::compute(&mem, &res);
        assert_eq!(
            f.as_slice(),
            &[
                r(0x4100_0000, 0x4800_0000 - 0x4100_0000),
                r(0x4800_1000, 0x8000_0000 - 0x4800_1000)
            ]
        );
    }

    #[test]
    fn reserved_covering_everything() {
        let f = FreeRanges::compute(&[r(0x1000, 0x1000)], &[r(0, 0x10000)]);
        assert!(f.as_slice().is_empty());
    }
}
