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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BootArgs {
    /// `backend=auto|vhe|nvhe`.
    pub backend: BackendRequest,
    /// `exit=psci|semihosting`.
    pub exit: ExitMethod,
    /// `vm_reset=exit|restart`.
    pub reset: ResetPolicy,
    /// `balance=on|off`: the scheduler moves vCPUs between physical CPUs (default on).
    pub balance: bool,
    /// `place=C0,C1,...`: the physical CPU each vCPU starts on.
    pub place: Placement,
}

impl Default for BootArgs {
    fn default() -> Self {
        Self {
            backend: BackendRequest::default(),
            exit: ExitMethod::default(),
            reset: ResetPolicy::default(),
            balance: true,
            place: Placement::default(),
        }
    }
}

/// Where the scheduler first places each vCPU (`place=0,0,0,0,0,1,2,3`): the k-th number is
/// the linear index of the physical CPU of the k-th vCPU, counting the vCPUs of all VMs in
/// package order. vCPUs beyond the list (or placed on a CPU that is not online) are spread
/// round robin, as without the option. With load balancing on, vCPUs move from there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    cpus: [u8; Placement::MAX],
    len: u8,
}

impl Default for Placement {
    fn default() -> Self {
        Self {
            cpus: [0; Placement::MAX],
            len: 0,
        }
    }
}

impl Placement {
    /// Longest list.
    pub const MAX: usize = 64;

    /// Parses a comma-separated list of CPU indices (at most [`Placement::MAX`], each < 255).
    pub fn parse(value: &str) -> Option<Self> {
        let mut p = Placement::default();
        for item in value.split(',') {
            let cpu: u8 = item.parse().ok().filter(|&c| c != u8::MAX)?;
            *p.cpus.get_mut(usize::from(p.len))? = cpu;
            p.len += 1;
        }
        Some(p)
    }

    /// The physical CPU asked for the `k`-th vCPU, if the list names one.
    pub fn cpu_for(&self, k: usize) -> Option<usize> {
        self.cpus[..usize::from(self.len)]
            .get(k)
            .map(|&c| usize::from(c))
    }

    /// Whether the list is empty (no `place=`).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
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
                "balance" => match value {
                    "on" => Some(true),
                    "off" => Some(false),
                    _ => None,
                }
                .map(|b| args.balance = b)
                .is_some(),
                "place" => Placement::parse(value).map(|p| args.place = p).is_some(),
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

    #[test]
    fn parses_balancing_and_placement() {
        let mut bad = Vec::new();
        let a = BootArgs::parse("balance=off place=0,0,0,0,0,1,2,3 balance=maybe", |u| {
            bad.push(u.0)
        });
        assert!(!a.balance);
        assert_eq!(bad, ["balance=maybe"]);
        let placed: Vec<_> = (0..9).map(|k| a.place.cpu_for(k)).collect();
        assert_eq!(
            placed,
            [0, 0, 0, 0, 0, 1, 2, 3]
                .map(Some)
                .into_iter()
                .chain([None])
                .collect::<Vec<_>>()
        );
        assert!(BootArgs::default().balance);
        assert!(BootArgs::default().place.is_empty());
        for bad in ["place=", "place=1,,2", "place=-1", "place=255", "place=x"] {
            let mut n = 0;
            let a = BootArgs::parse(bad, |_| n += 1);
            assert_eq!((n, a.place.is_empty()), (1, true), "{bad}");
        }
        let long = format!("place={}", vec!["1"; Placement::MAX + 1].join(","));
        let mut n = 0;
        assert!(BootArgs::parse(&long, |_| n += 1).place.is_empty());
        assert_eq!(n, 1);
        let max = format!("place={}", vec!["254"; Placement::MAX].join(","));
        assert_eq!(
            BootArgs::parse(&max, |_| panic!()).place.cpu_for(63),
            Some(254)
        );
    }
}
