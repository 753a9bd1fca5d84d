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
    /// `SUBS r6, r6, #1` then `BNE` back to halfword `top`, the text starting at `origin`
    /// (Thumb: `SUBS r6, #1; BNE.W`).
    pub fn loop_back(&mut self, origin: u32, top: usize) {
        let at = origin + 2 * self.h.len() as u32;
        let target = origin + 2 * top as u32;
        if self.thumb {
            self.t16(0x3e01); // subs r6, #1
            let off = target.wrapping_sub(at + 2 + 4) as i32;
            let (s, j1, j2) = ((off >> 20) & 1, (off >> 18) & 1, (off >> 19) & 1);
            let w = 0xf000_8000
                | (s as u32) << 26
                | 1 << 22 // cond NE
                | ((off >> 12) as u32 & 0x3f) << 16
                | (j1 as u32) << 13
                | (j2 as u32) << 11
                | ((off >> 1) as u32 & 0x7ff);
            self.t32(w); // bne.w top
        } else {
            self.a32(0xe256_6001); // subs r6, r6, #1
            self.a32(super::a32::b(1, at + 4, target)); // bne top
        }
    }
    /// Stores r0 at `out`, then the runner's `write(1, out, 4)` and `exit(0)` by `HVC #0`.
    pub fn write_r0_and_exit(&mut self, out: u32) {
        self.mov32(5, out);
        self.both(0xe585_0000, 0xf8c5_0000); // str r0, [r5]
        self.mov32(0, 1);
        self.mov32(1, out);
        self.mov32(2, 4);
        self.mov32(7, 4);
        self.both(0xe140_0070, 0xf7e0_8000); // hvc #0: write(1, out, 4)
        self.mov32(0, 0);
        self.mov32(7, 1);
        self.both(0xe140_0070, 0xf7e0_8000); // hvc #0: exit(0)
    }
}
