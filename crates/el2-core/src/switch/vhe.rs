//! VHE (ARMv8.1 FEAT_VHE) world switch, `HCR_EL2.E2H = 1`.
//!
//! Follows seed `002`: the hypervisor runs in the EL2&0 regime, the guest's EL1 registers
//! are reached through the `*_EL12` aliases and stay loaded from `vcpu_load` to
//! `vcpu_put`; `HCR_EL2`, `VTTBR_EL2`, `CPTR_EL2` and `CNTHCTL_EL2` keep the guest's values
//! across exits ("leave virtualization features enabled"), so an exit costs only the
//! general registers and the syndrome reads.
//!
//! The sequence is [`Switch`]'s, shared with the non-VHE backend. What is VHE's own is
//! data: the `*_EL12`/`*_EL02` column of the EL1 register table, the E2H = 1 layouts of
//! `CPTR_EL2` (`FPEN`, `ZEN`, `SMEN`) and `CNTHCTL_EL2` (`EL1PCTEN` at bit 10), and the
//! host's `HCR_EL2` with `E2H` and `TGE` ([`super::controls::HOST_HCR_VHE`]), written in
//! `vcpu_put`.

use super::Switch;

/// The ARMv8.1 VHE backend: `Vhe { pauth }`.
pub type Vhe = Switch<true>;
