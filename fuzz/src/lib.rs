//! Helpers shared by the fuzz targets: a reader that turns the fuzzer's bytes into values
//! (zeros once the input is used up, so every input is valid). The mock VM the exit
//! handlers run on is the hypervisor crate's own (`hypervisor::exits::mock`, feature
//! `exit-mock`).

/// Takes little-endian values from the front of a fuzz input.
pub struct Input<'a> {
    bytes: &'a [u8],
}

impl<'a> Input<'a> {
    /// Reads from `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Input { bytes }
    }

    /// No byte is left.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.bytes
    }

    /// The next `N` bytes, zero-padded past the end.
    pub fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let n = N.min(self.bytes.len());
        out[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        out
    }

    /// The next byte (0 past the end).
    pub fn u8(&mut self) -> u8 {
        self.array::<1>()[0]
    }

    /// The next 16-bit value.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.array())
    }

    /// The next 32-bit value.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }

    /// The next 64-bit value.
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }

    /// The next byte's low bit.
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 != 0
    }

    /// One of `items`, chosen by the next byte.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[usize::from(self.u8()) % items.len()]
    }
}
