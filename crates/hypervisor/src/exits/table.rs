//! The handler of each exception class (`ESR_EL2.EC`), as Linux's `arm_exit_handlers[]`:
//! every one of the 64 classes has an entry; classes the architecture leaves unallocated,
//! and classes this hypervisor's trap configuration never routes to EL2, get the UNDEFINED
//! answer from `refuse.rs`.

use el2_core::exit::ec;

use super::{aarch32, dabt, fp, iabt, refuse, smccc, sysreg, wfx, ExitCtx, ExitHost, Outcome};

/// A handler of one exception class.
pub type Handler<H> = fn(&mut ExitCtx<'_, H>) -> Outcome;

/// Number of exception classes: `ESR_EL2.EC` is 6 bits wide.
pub const EC_COUNT: usize = 64;

/// The table for host `H` (one per host type, built at compile time).
struct Table<H>(core::marker::PhantomData<H>);

impl<H: ExitHost> Table<H> {
    const HANDLERS: [Handler<H>; EC_COUNT] = handlers::<H>();
}

/// The handler of exception class `ec` (only its low 6 bits are used).
#[inline(always)]
pub fn handler<H: ExitHost>(ec: u8) -> Handler<H> {
    Table::<H>::HANDLERS[usize::from(ec) % EC_COUNT]
}

const fn handlers<H: ExitHost>() -> [Handler<H>; EC_COUNT] {
    let mut t: [Handler<H>; EC_COUNT] = [refuse::unallocated::<H>; EC_COUNT];
    t[ec::UNKNOWN as usize] = refuse::unknown_reason::<H>;
    t[ec::WFX as usize] = wfx::wfx::<H>;
    t[ec::CP15_32 as usize] = aarch32::coprocessor::<H>;
    t[ec::CP15_64 as usize] = aarch32::coprocessor::<H>;
    t[ec::CP14_32 as usize] = aarch32::coprocessor::<H>;
    t[ec::CP14_LS as usize] = aarch32::coprocessor::<H>;
    t[ec::FP_ASIMD as usize] = fp::fp_simd::<H>;
    t[ec::CP10_ID as usize] = aarch32::coprocessor::<H>;
    t[ec::PAC as usize] = refuse::hidden_feature::<H>;
    t[ec::LS64 as usize] = refuse::not_routed::<H>;
    t[ec::CP14_64 as usize] = aarch32::coprocessor::<H>;
    t[ec::BTI as usize] = refuse::not_routed::<H>;
    t[ec::ILLEGAL_STATE as usize] = refuse::not_routed::<H>;
    t[ec::SVC32 as usize] = refuse::not_routed::<H>;
    t[ec::HVC32 as usize] = smccc::hvc32::<H>;
    t[ec::SMC32 as usize] = smccc::smc32::<H>;
    t[ec::SVC64 as usize] = refuse::not_routed::<H>;
    t[ec::HVC64 as usize] = smccc::hvc64::<H>;
    t[ec::SMC64 as usize] = smccc::smc64::<H>;
    t[ec::SYS64 as usize] = sysreg::sys64::<H>;
    t[ec::SVE as usize] = refuse::hidden_feature::<H>;
    t[ec::ERET as usize] = refuse::not_routed::<H>;
    t[ec::FPAC as usize] = refuse::not_routed::<H>;
    t[ec::SME as usize] = refuse::hidden_feature::<H>;
    t[ec::IABT_LOW as usize] = iabt::iabt_low::<H>;
    t[ec::PC_ALIGN as usize] = refuse::not_routed::<H>;
    t[ec::DABT_LOW as usize] = dabt::dabt_low::<H>;
    t[ec::SP_ALIGN as usize] = refuse::not_routed::<H>;
    t[ec::MOPS as usize] = refuse::not_routed::<H>;
    t[ec::FP_EXC32 as usize] = refuse::not_routed::<H>;
    t[ec::FP_EXC64 as usize] = refuse::not_routed::<H>;
    t[ec::SERROR as usize] = refuse::not_routed::<H>;
    t[ec::BREAKPT_LOW as usize] = refuse::not_routed::<H>;
    t[ec::SOFTSTP_LOW as usize] = refuse::not_routed::<H>;
    t[ec::WATCHPT_LOW as usize] = refuse::not_routed::<H>;
    t[ec::BKPT32 as usize] = refuse::not_routed::<H>;
    t[ec::VECTOR32 as usize] = refuse::not_routed::<H>;
    t[ec::BRK64 as usize] = refuse::not_routed::<H>;
    t
}
