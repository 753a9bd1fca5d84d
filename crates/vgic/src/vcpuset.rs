//! A small fixed-size set of vCPU ids.

use crate::config::MAX_VCPUS;

/// A set of vCPU ids (0..[`MAX_VCPUS`]), used for the kick set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VcpuSet([u64; MAX_VCPUS / 64]);

impl VcpuSet {
    /// The empty set.
    pub const fn new() -> Self {
        Self([0; MAX_VCPUS / 64])
    }
    /// Adds `vcpu` (ignored if out of range).
    pub fn insert(&mut self, vcpu: usize) {
        if vcpu < MAX_VCPUS {
            self.0[vcpu / 64] |= 1 << (vcpu % 64);
        }
    }
    /// Whether `vcpu` is in the set.
    pub fn contains(&self, vcpu: usize) -> bool {
        vcpu < MAX_VCPUS && self.0[vcpu / 64] & (1 << (vcpu % 64)) != 0
    }
    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        // One OR of all words (no early exit: a few instructions, no loop).
        self.0.iter().fold(0, |acc, w| acc | w) == 0
    }
    /// Number of members.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// The first 64 members as a bitmap (bit n = vCPU n).
    pub fn low_bits(&self) -> u64 {
        self.0[0]
    }
    /// Iterates over the members in increasing order, visiting only the set bits (one
    /// `trailing_zeros` per member, not one test per possible id).
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(word, &bits)| SetBits {
            bits,
            base: word * 64,
        })
    }
}

/// The set bits of one 64-bit word of a [`VcpuSet`], as vCPU ids.
struct SetBits {
    bits: u64,
    base: usize,
}

impl Iterator for SetBits {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.bits == 0 {
            return None;
        }
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.base + bit)
    }
}

impl VcpuSet {
    /// Removes `vcpu`.
    pub fn remove(&mut self, vcpu: usize) {
        if vcpu < MAX_VCPUS {
            self.0[vcpu / 64] &= !(1 << (vcpu % 64));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iter_visits_exactly_the_members_in_order_across_words() {
        let mut s = VcpuSet::new();
        let members = [0, 1, 63, 64, 200, MAX_VCPUS - 1];
        for m in members {
            s.insert(m);
        }
        s.insert(MAX_VCPUS); // out of range: ignored
        assert_eq!(s.iter().collect::<alloc::vec::Vec<_>>(), members);
        assert_eq!(s.len(), members.len());
        s.remove(63);
        assert!(!s.contains(63));
        assert_eq!(s.iter().count(), members.len() - 1);
        assert_eq!(VcpuSet::new().iter().next(), None);
    }
}
