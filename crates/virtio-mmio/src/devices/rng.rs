//! virtio-rng (device id 4) and entropy sources.
//!
//! Production sources: `Rndr` (FEAT_RNG `RNDR`, built for aarch64 only) where the CPU has it. Where it does not,
//! the host must supply an [`EntropySource`] backed by its best real source (a hardware TRNG,
//! a physical virtio-rng device, firmware `SMCCC_TRNG`). [`XorShiftEntropy`] is
//! deterministic and exists for tests only: it is not entropy.

use alloc::vec;

use super::id;
use crate::device::VirtioDevice;
use crate::error::QueueError;
use crate::mem::GuestMemory;
use crate::queue::Queue;

/// The entropy source failed (the request completes with no bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntropyError;

/// A source of random bytes.
pub trait EntropySource {
    /// Fills `buf` entirely with random bytes, or fails.
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), EntropyError>;
}

/// Largest number of bytes handed out per request.
pub const MAX_REQUEST: usize = 4096;

/// A virtio entropy device with one request queue.
pub struct RngDevice<E> {
    source: E,
}

impl<E: EntropySource> RngDevice<E> {
    /// A device drawing from `source`.
    pub fn new(source: E) -> Self {
        Self { source }
    }

    /// The source.
    pub fn source_mut(&mut self) -> &mut E {
        &mut self.source
    }
}

impl<E: EntropySource> VirtioDevice for RngDevice<E> {
    fn device_id(&self) -> u32 {
        id::ENTROPY
    }

    fn features(&self) -> u64 {
        0
    }

    fn num_queues(&self) -> u16 {
        1
    }

    fn read_config(&self, _offset: u64, data: &mut [u8]) {
        data.fill(0);
    }

    fn process_queue(
        &mut self,
        _queue: u16,
        q: &mut Queue,
        mem: &mut dyn GuestMemory,
    ) -> Result<(), QueueError> {
        while let Some(chain) = q.pop(mem)? {
            let mut w = chain.writer();
            let n = core::cmp::min(w.remaining(), MAX_REQUEST as u64) as usize;
            let mut buf = vec![0u8; n];
            if self.source.fill(&mut buf).is_ok() {
                w.write(mem, &buf)?;
            }
            q.add_used(mem, chain.head, w.written())?;
        }
        Ok(())
    }
}

/// Deterministic xorshift64* bytes. **For tests only — not entropy.** A real fallback for
/// CPUs without FEAT_RNG must come from the host.
#[derive(Clone, Debug)]
pub struct XorShiftEntropy {
    state: u64,
}

impl XorShiftEntropy {
    /// A generator seeded with `seed` (zero is replaced by a fixed non-zero constant).
    pub fn new(seed: u64) -> Self {
        Self {
            state: if seed == 0 {
                0x9e37_79b9_7f4a_7c15
            } else {
                seed
            },
        }
    }

    fn next(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

impl EntropySource for XorShiftEntropy {
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), EntropyError> {
        for chunk in buf.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
        Ok(())
    }
}

#[cfg(target_arch = "aarch64")]
pub use rndr::Rndr;

#[cfg(target_arch = "aarch64")]
mod rndr {
    use super::{EntropyError, EntropySource};
    use core::arch::asm;

    /// Reads of `RNDR` retried before a request fails.
    const RETRIES: usize = 16;

    /// FEAT_RNG: random numbers from the `RNDR` system register.
    #[derive(Clone, Copy, Debug)]
    pub struct Rndr(());

    impl Rndr {
        /// `Some` if `ID_AA64ISAR0_EL1.RNDR` (bits 63:60) says the CPU implements `RNDR`.
        pub fn new() -> Option<Self> {
            let isar0: u64;
            // SAFETY: reading an ID register has no side effects and is allowed at EL1/EL2.
            unsafe {
                asm!("mrs {}, ID_AA64ISAR0_EL1", out(reg) isar0, options(nomem, nostack, preserves_flags));
            }
            (isar0 >> 60 != 0).then_some(Self(()))
        }

        /// One 64-bit random number, or `None` if `RNDR` reported failure (NZCV = 0b0100).
        pub fn read(&self) -> Option<u64> {
            let value: u64;
            let ok: u64;
            // SAFETY: `RNDR` (S3_3_C2_C4_0) exists, as `new` checked; it only writes the
            // destination register and NZCV (hence no `preserves_flags`).
            unsafe {
                asm!(
                    "mrs {v}, s3_3_c2_c4_0",
                    "cset {ok}, ne",
                    v = out(reg) value,
                    ok = out(reg) ok,
                    options(nomem, nostack),
                );
            }
            (ok != 0).then_some(value)
        }
    }

    impl EntropySource for Rndr {
        fn fill(&mut self, buf: &mut [u8]) -> Result<(), EntropyError> {
            for chunk in buf.chunks_mut(8) {
                let v = (0..RETRIES).find_map(|_| self.read()).ok_or(EntropyError)?;
                chunk.copy_from_slice(&v.to_le_bytes()[..chunk.len()]);
            }
            Ok(())
        }
    }
}
