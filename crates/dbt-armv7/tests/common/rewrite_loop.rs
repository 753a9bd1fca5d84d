//! The PL1 loop of the instruction-cache tests (`diff_dbt_icache_all`,
//! `diff_dbt_epoch_links`): it rewrites the first instruction of a function `f` with
//! `MOV r0, #i`, issues `ICIALLU`, calls `f` and sums what it returns, 100 times; it exits
//! with 1 if the sum is 0 + 1 + ... + 99 = 4950. The tests differ in how `f` is called.

/// Where the loop is loaded (A32, SVC mode); the image starts at 0x10000.
const ENTRY: u32 = 0x11000;

/// The loop, with `call` (a call of `f` from offset 0x20, which returns with `BX lr`) at
/// index 8.
pub const fn program(call: u32) -> [u32; 22] {
    [
        0xe3a0_4000, // 0x00: mov r4, #0          sum
        0xe3a0_5000, // 0x04: mov r5, #0          i
        0xe28f_6040, // 0x08: adr r6, f
        0xe59f_7038, // 0x0c: ldr r7, tmpl        mov r0, #0
        0xe187_8005, // 0x10: loop: orr r8, r7, r5
        0xe586_8000, // 0x14: str r8, [r6]        f: mov r0, #i (unseen)
        0xee07_0f15, // 0x18: mcr p15, 0, r0, c7, c5, 0   ICIALLU
        0xf57f_f06f, // 0x1c: isb
        call,        // 0x20: the call of f
        0xe084_4000, // 0x24: add r4, r4, r0
        0xe285_5001, // 0x28: add r5, r5, #1
        0xe355_0064, // 0x2c: cmp r5, #100
        0xbaff_fff6, // 0x30: blt loop
        0xe301_9356, // 0x34: movw r9, #4950
        0xe154_0009, // 0x38: cmp r4, r9
        0x03a0_0001, // 0x3c: moveq r0, #1
        0x13a0_0000, // 0x40: movne r0, #0
        0xe3a0_7001, // 0x44: mov r7, #1
        0xef00_0000, // 0x48: svc #0              exit(sum == 4950)
        0xe3a0_0000, // 0x4c: tmpl: mov r0, #0
        0xe3a0_0000, // 0x50: f: mov r0, #i
        0xe12f_ff1e, // 0x54: bx lr
    ]
}

/// Runs `code` at 0x11000 in the runner with options `opts`: the guest's exit status and
/// the runner's counters.
pub fn run(code: &[u32], tag: &str, opts: &[&str]) -> (i32, Vec<(String, u64)>) {
    let mut img = vec![0u8; (ENTRY - 0x10000) as usize];
    img.extend(code.iter().flat_map(|w| w.to_le_bytes()));
    let elf = super::elf32(0x10000, ENTRY, &img);
    super::a64::run_image_status(&elf, tag, opts)
}
