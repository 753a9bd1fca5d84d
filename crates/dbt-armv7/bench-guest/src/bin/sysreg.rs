//! Sensitive instructions in a loop: `MCR`/`MRC` of TPIDRURW (the user read/write thread
//! ID register, CP15 c13) and `MRS` of the APSR, half of the loop's instructions. The
//! translator runs them as calls into its system model from translated code.
#![no_std]
#![no_main]

#[path = "../rt.rs"]
mod rt;

#[no_mangle]
extern "C" fn guest_main() {
    let mut acc = 0u32;
    let mut x = 0x1234_5678u32;
    for i in 0..200_000u32 {
        let (tid, apsr): (u32, u32);
        // SAFETY: TPIDRURW is read/write at PL0 and holds no state the program uses;
        // MRS APSR only reads the flags.
        unsafe {
            core::arch::asm!(
                "mcr p15, 0, {x}, c13, c0, 2",
                "mrc p15, 0, {tid}, c13, c0, 2",
                "mrs {apsr}, apsr",
                x = in(reg) x ^ i,
                tid = out(reg) tid,
                apsr = out(reg) apsr,
                options(nomem, nostack),
            );
        }
        acc = acc.wrapping_add(tid ^ (apsr >> 28));
        x = x.rotate_left(3);
    }
    rt::report("sysreg", acc);
}
