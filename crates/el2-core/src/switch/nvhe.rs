//! Non-VHE (ARMv8.0) world switch, `HCR_EL2.E2H = 0`.
//!
//! Seed `000`'s split mode switches the guest's EL1 registers, traps and stage 2 on every
//! exit because KVM's host kernel runs at EL1 between exits. This hypervisor has nothing at
//! EL1: its own code runs at EL2 in the EL2 translation regime, and nothing it does depends on
//! the EL1 registers, `HCR_EL2`'s guest traps, `VTTBR_EL2` or `CNTHCTL_EL2` (stage-2 TLB
//! maintenance loads the VTTBR it needs itself). So, like the VHE backend (seed `002`'s
//! "leave virtualization features enabled"), it loads the guest's EL1 registers, pointer-auth
//! keys and EL2 controls in `vcpu_load` and saves them in `vcpu_put`; an exit costs only the
//! general registers and the syndrome reads. FP/SIMD is switched lazily (`CPTR_EL2.TFP`).
//!
//! The sequence is [`Switch`]'s, shared with the VHE backend. What is non-VHE's own is data:
//! the EL1 names of the guest's registers, the E2H = 0 layouts of `CPTR_EL2` (`TFP`, `TZ`,
//! RES1 bits) and `CNTHCTL_EL2` (`EL1PCTEN` at bit 0), and the host's `HCR_EL2` with only
//! `RW` ([`super::controls::HOST_HCR_NVHE`]): guest traps and stage 2 off while no vCPU is
//! loaded.

use super::Switch;

/// The ARMv8.0 backend: `NonVhe { pauth }`.
pub type NonVhe = Switch<false>;
