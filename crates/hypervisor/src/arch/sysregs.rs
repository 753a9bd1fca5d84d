//! The machine's ID-register policy (what guests may see of the hardware's features), set
//! once at boot; the trapped system registers themselves are emulated by
//! `exits/sysreg.rs`, with the sanitising in `idregs.rs`.

use crate::idregs::IdPolicy;

/// Per-machine policy, set once at boot.
static POLICY: spin::Once<IdPolicy> = spin::Once::new();

/// Sets the ID-register policy (once, at boot).
pub fn set_policy(p: IdPolicy) {
    POLICY.call_once(|| p);
}

/// The ID-register policy (before [`set_policy`]: no pointer authentication, a 40-bit
/// IPA space).
pub fn policy() -> IdPolicy {
    POLICY.get().copied().unwrap_or(IdPolicy {
        pauth: false,
        ipa_parange: 2,
    })
}
