//! SHA-256 of 256 KiB, with the block function in Thumb-2: the compute loop of busybox's
//! `sha256sum` (Debian armhf, gcc -O2, Thumb-2), the compute figure of
//! `cargo xtask bench --linux`. Its instruction mix is that loop's: `ROR`-shifted operands
//! of `EOR` (the Σ and σ functions), `BIC` (Ch), 16-bit ALU operations, loads with
//! writeback and register offsets, and a conditional backward branch per round.
//! The program first checks the FIPS 180-2 example digest of "abc" and exits with status 1
//! when it differs.
#![no_std]
#![no_main]

#[path = "../rt.rs"]
mod rt;

/// The round constants (FIPS 180-4, 4.2.2).
static K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// The initial hash value (FIPS 180-4, 5.3.3).
const H0: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The bytes hashed.
const LEN: usize = 256 << 10;
static mut DATA: [u8; LEN] = [0; LEN];

/// `x` rotated right by `n` (1..=31), written out: `u32::rotate_right` is a call into
/// `core` (built as A32, so not inlined into a T32 function).
macro_rules! rotr {
    ($x:expr, $n:expr) => {
        ($x >> $n) | ($x << (32 - $n))
    };
}

/// One 64-byte block into `state`, in busybox's shape: the message schedule in a loop of
/// its own, then 64 rounds with the eight working variables in registers.
// Index loops and written-out rotations: `core`'s iterators and `rotate_right` are A32
// functions, which are not inlined into T32 code.
#[allow(clippy::needless_range_loop, clippy::manual_rotate)]
#[instruction_set(arm::t32)]
#[inline(never)]
fn compress(state: &mut [u32; 8], block: &[u8; 64]) {
    let mut w = [0u32; 64];
    for t in 0..16 {
        let i = 4 * t;
        w[t] = u32::from_be_bytes([block[i], block[i + 1], block[i + 2], block[i + 3]]);
    }
    for t in 16..64 {
        let s0 = rotr!(w[t - 15], 7) ^ rotr!(w[t - 15], 18) ^ (w[t - 15] >> 3);
        let s1 = rotr!(w[t - 2], 17) ^ rotr!(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16]
            .wrapping_add(s0)
            .wrapping_add(w[t - 7])
            .wrapping_add(s1);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for t in 0..64 {
        let s1 = rotr!(e, 6) ^ rotr!(e, 11) ^ rotr!(e, 25);
        let ch = (e & f) ^ (!e & g);
        let t1 = h
            .wrapping_add(s1)
            .wrapping_add(ch)
            .wrapping_add(K[t])
            .wrapping_add(w[t]);
        let s0 = rotr!(a, 2) ^ rotr!(a, 13) ^ rotr!(a, 22);
        let maj = ((b ^ c) & a) ^ (b & c);
        let t2 = s0.wrapping_add(maj);
        h = g;
        g = f;
        f = e;
        e = d.wrapping_add(t1);
        d = c;
        c = b;
        b = a;
        a = t1.wrapping_add(t2);
    }
    let out = [a, b, c, d, e, f, g, h];
    for i in 0..8 {
        state[i] = state[i].wrapping_add(out[i]);
    }
}

/// SHA-256 of `data` (FIPS 180-4: padding with 0x80, zeros and the bit length).
fn sha256(data: &[u8]) -> [u32; 8] {
    let mut state = H0;
    let mut blocks = data.chunks_exact(64);
    for b in &mut blocks {
        compress(&mut state, b.try_into().unwrap());
    }
    let rest = blocks.remainder();
    let mut tail = [0u8; 128];
    tail[..rest.len()].copy_from_slice(rest);
    tail[rest.len()] = 0x80;
    let n = if rest.len() < 56 { 64 } else { 128 };
    tail[n - 8..n].copy_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for b in tail[..n].chunks_exact(64) {
        compress(&mut state, b.try_into().unwrap());
    }
    state
}

#[no_mangle]
extern "C" fn guest_main() {
    // FIPS 180-2, appendix B.1.
    let abc = sha256(core::hint::black_box(b"abc"));
    if abc[0] != 0xba7816bf || abc[7] != 0xf20015ad {
        rt::write(b"sha256: wrong digest of \"abc\"\n");
        rt::exit(1);
    }
    // SAFETY: single-threaded; the only reference to DATA.
    let data = unsafe { &mut *core::ptr::addr_of_mut!(DATA) };
    let mut rng = rt::Rng(0x2545_f491);
    for word in data.chunks_exact_mut(4) {
        word.copy_from_slice(&rng.next().to_le_bytes());
    }
    let digest = sha256(core::hint::black_box(&data[..]));
    rt::report(
        "sha256",
        digest.iter().fold(0, |acc, &x| acc.rotate_left(5) ^ x),
    );
}
