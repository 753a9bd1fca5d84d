//! The storm's random numbers: SplitMix64 (Steele, Lea, Flood 2014), seeded from the command
//! line, so a run is repeated exactly from its seed (per vCPU: each has its own stream).

/// A SplitMix64 generator.
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` and stream `stream` (the vCPU index).
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut r = Rng(seed ^ stream.wrapping_mul(0xd6e8_feb8_6659_fd93));
        r.next();
        r
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// One element of `items` (non-empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// A value with a random number of low bits set randomly: small, medium and huge values
    /// all come up often (edge cases live at both ends).
    pub fn wide(&mut self) -> u64 {
        match self.below(8) {
            0 => 0,
            1 => u64::MAX,
            2 => self.below(16),
            3 => 1 << self.below(64),
            4 => (1 << self.below(64)) - 1,
            _ => self.next() >> self.below(64),
        }
    }
}
