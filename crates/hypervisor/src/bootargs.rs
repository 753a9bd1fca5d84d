//! The hypervisor's own command line (`/chosen/bootargs` of the host device tree, i.e.
//! QEMU `-append`, U-Boot `bootargs`): `key=value` words, unknown words are reported.

use el2_core::switch::BackendRequest;

/// How the hypervisor ends the machine when the last VM stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExitMethod {
    /// PSCI `SYSTEM_OFF`/`SYSTEM_RESET` to the firmware (real hardware).
    #[default]
    Psci,
    /// Arm semihosting `SYS_EXIT` with a status code (QEMU `-semihosting` only).
    Semihosting,
}

/// What to do when a guest calls PSCI `SYSTEM_RESET`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResetPolicy {
    /// End the VM and report failure (test guests use reset to signal failure).
    #[default]
    Exit,
    /// Reload the VM's images and restart it.
    Restart,
}

/// Parsed hypervisor options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BootArgs {
    /// `backend=auto|vhe|nvhe`.
    pub backend: BackendRequest,
    /// `exit=psci|semihosting`.
    pub exit: ExitMethod,
    /// `vm_reset=exit|restart`.
    pub reset: ResetPolicy,
}

/// A word of the command line that was not understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownArg<'a>(pub &'a str);

impl BootArgs {
    /// Parses `cmdline`; calls `unknown` for each word it does not understand (the caller
    /// logs it) and keeps the default for that option.
    pub fn parse<'a>(cmdline: &'a str, mut unknown: impl FnMut(UnknownArg<'a>)) -> Self {
        let mut args = BootArgs::default();
        for word in cmdline.split_ascii_whitespace() {
            let (key, value) = word.split_once('=').unwrap_or((word, ""));
            let ok = match key {
                "backend" => BackendRequest::parse(value)
                    .map(|b| args.backend = b)
                    .is_some(),
                "exit" => match value {
                    "psci" => Some(ExitMethod::Psci),
                    "semihosting" => Some(ExitMethod::Semihosting),
                    _ => None,
                }
                .map(|e| args.exit = e)
                .is_some(),
                "vm_reset" => match value {
                    "exit" => Some(ResetPolicy::Exit),
                    "restart" => Some(ResetPolicy::Restart),
                    _ => None,
                }
                .map(|r| args.reset = r)
                .is_some(),
                _ => false,
            };
            if !ok {
                unknown(UnknownArg(word));
            }
        }
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_and_reports_unknown() {
        let mut bad = Vec::new();
        let a = BootArgs::parse("backend=nvhe exit=semihosting foo backend=bogus", |u| {
            bad.push(u.0)
        });
        assert_eq!(a.backend, BackendRequest::NonVhe);
        assert_eq!(a.exit, ExitMethod::Semihosting);
        assert_eq!(a.reset, ResetPolicy::Exit);
        assert_eq!(bad, ["foo", "backend=bogus"]);
        assert_eq!(BootArgs::parse("", |_| panic!()), BootArgs::default());
    }
}
