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
        self.0.iter().all(|w| *w == 0)
    }
    /// Number of members.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// The first 64 members as a bitmap (bit n = vCPU n).
    pub fn low_bits(&self) -> u64 {
        self.0[0]
    }
    /// Iterates over the members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..MAX_VCPUS).filter(move |v| self.contains(*v))
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
