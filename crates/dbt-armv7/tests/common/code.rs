//! A program builder for the differential exception tests: text as halfwords, in A32 or
//! Thumb, with the `MOVW`/`MOVT` pair and "this instruction in either set" helpers.

/// Program text as halfwords (A32 words are two, low half first).
pub struct Code {
    /// Whether [`Code::mov32`] and [`Code::both`] emit T32 (else A32).
    pub thumb: bool,
    /// The halfwords written so far.
    pub h: Vec<u16>,
}

impl Code {
    /// Appends the A32 word `w`.
    pub fn a32(&mut self, w: u32) {
        self.h.extend([w as u16, (w >> 16) as u16]);
    }
    /// Appends the 32-bit T32 encoding `w` (first halfword in the top bits).
    pub fn t32(&mut self, w: u32) {
        self.h.extend([(w >> 16) as u16, w as u16]);
    }
    /// Appends the 16-bit T32 encoding `h`.
    pub fn t16(&mut self, h: u16) {
        self.h.push(h);
    }
    /// `MOVW`/`MOVT rd, #v`.
    pub fn mov32(&mut self, rd: u32, v: u32) {
        if self.thumb {
            let t = |top: u32, imm: u32| {
                top | (imm >> 11 & 1) << 26
                    | (imm >> 12 & 0xf) << 16
                    | (imm >> 8 & 7) << 12
                    | rd << 8
                    | (imm & 0xff)
            };
            self.t32(t(0xf240_0000, v & 0xffff));
            self.t32(t(0xf2c0_0000, v >> 16));
        } else {
            for w in super::a32::mov32(rd, v) {
                self.a32(w);
            }
        }
    }
    /// Any instruction given as (A32, T32) encodings.
    pub fn both(&mut self, a: u32, t: u32) {
        if self.thumb {
            self.t32(t)
        } else {
            self.a32(a)
        }
    }
}
