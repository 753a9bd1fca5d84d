//! The guest program: A32 code, assembled by hand, that prints a message on the PL011 UART
//! and asks the platform to power off with a PSCI `SYSTEM_OFF` call over `HVC`.
//!
//! ```text
//!         movw  r1, #0x0000          @ r1 = UART base (0x0900_0000)
//!         movt  r1, #0x0900
//!         adr   r2, msg              @ r2 = next byte of the message
//!         mov   r3, #0               @ r3 = bytes sent
//! next:   ldrb  r0, [r2], #1
//!         cmp   r0, #0
//!         beq   done                 @ NUL: end of the message
//! wait:   ldr   r4, [r1, #0x18]      @ UARTFR
//!         tst   r4, #0x20            @ TXFF: transmit FIFO full?
//!         bne   wait
//!         strb  r0, [r1]             @ UARTDR
//!         add   r3, r3, #1
//!         b     next
//! done:   movw  r0, #0x0008          @ r0 = PSCI SYSTEM_OFF (0x8400_0008)
//!         movt  r0, #0x8400
//!         hvc   #0
//!         b     .                    @ not reached: the host stops the CPU
//! msg:    .asciz "hi\n"
//! ```

/// The program, one A32 instruction (or data word) per entry, loaded at the start of RAM.
pub const PROGRAM: &[u32] = &[
    0xe300_1000, // 0x00        movw  r1, #0x0000
    0xe340_1900, // 0x04        movt  r1, #0x0900        r1 = UART_BASE
    0xe28f_2034, // 0x08        add   r2, pc, #0x34      adr r2, msg (pc reads as 0x10)
    0xe3a0_3000, // 0x0c        mov   r3, #0
    0xe4d2_0001, // 0x10 next:  ldrb  r0, [r2], #1
    0xe350_0000, // 0x14        cmp   r0, #0
    0x0a00_0005, // 0x18        beq   done (0x34)
    0xe591_4018, // 0x1c wait:  ldr   r4, [r1, #0x18]    UARTFR
    0xe314_0020, // 0x20        tst   r4, #0x20          UARTFR.TXFF
    0x1aff_fffc, // 0x24        bne   wait (0x1c)
    0xe5c1_0000, // 0x28        strb  r0, [r1]           UARTDR
    0xe283_3001, // 0x2c        add   r3, r3, #1
    0xeaff_fff6, // 0x30        b     next (0x10)
    0xe300_0008, // 0x34 done:  movw  r0, #0x0008
    0xe348_0400, // 0x38        movt  r0, #0x8400        r0 = PSCI_SYSTEM_OFF
    0xe140_0070, // 0x3c        hvc   #0
    0xeaff_fffe, // 0x40        b     .
    0x000a_6968, // 0x44 msg:   "hi\n\0"
];

/// Offset of `hvc #0` in [`PROGRAM`].
pub const HVC_OFFSET: u32 = 0x3c;
/// Offset of the message in [`PROGRAM`].
pub const MSG_OFFSET: u32 = 0x44;
/// The message the program prints.
pub const MESSAGE: &[u8] = b"hi\n";
/// PSCI 0.2 `SYSTEM_OFF` function id (SMC32), what the program puts in r0 before `HVC`.
pub const PSCI_SYSTEM_OFF: u32 = 0x8400_0008;
/// PSCI `NOT_SUPPORTED`, the answer to any other call.
pub const PSCI_NOT_SUPPORTED: u32 = -1i32 as u32;

/// Instructions the program retires, `HVC` included, on a UART that is busy once after each
/// byte but the last: 4 set-up, 9 per byte plus 3 per busy wait (`ldr`, `tst`, `bne`),
/// 3 for the final NUL (`ldrb`, `cmp`, `beq`) and 3 to power off.
pub const EXPECTED_INSTRUCTIONS: u64 = 4 + 9 * 3 + 3 * 2 + 3 + 3;
