//! `cargo xtask check`: what a change must pass besides the tests — formatting, lints on the
//! host and the bare-metal targets, each subsystem crate packaged and built on its own
//! (`cargo package`), and an outside crate that embeds them by path only.

use std::time::Instant;

use crate::build::{self, Workspace, ARMV7_GUEST_TARGET, GUEST_TARGET, HYPERVISOR_TARGET};
use crate::error::Result;
use crate::test_cmd::{Tally, HOST_PACKAGES};

/// The crates other hypervisors embed: each must package (and so build) on its own.
pub const PUBLISHED_CRATES: &[&str] = &[
    "el2-core",
    "stage2",
    "vgic",
    "vtimer",
    "virtio-mmio",
    "dbt-armv7",
];

/// The out-of-workspace crate that depends on [`PUBLISHED_CRATES`] by path only.
pub const EMBEDDER_MANIFEST: &str = "tests/embedder/Cargo.toml";

/// One step of the check: a name and the cargo arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Shown in the result line (`ok NAME`).
    pub name: String,
    /// Arguments to cargo.
    pub args: Vec<String>,
}

fn step(name: impl Into<String>, args: &[&str]) -> Step {
    Step {
        name: name.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
    }
}

fn with_packages(mut args: Vec<String>, packages: &[&str]) -> Vec<String> {
    for p in packages {
        args.push("-p".into());
        args.push((*p).into());
    }
    args
}

/// Every step, in order. `guests` are the guest crates: the AArch64 ones are linted with
/// `guest-rt` for their target, the ARMv7-A ones (`armv7-*`) for theirs.
pub fn steps(guests: &[String]) -> Vec<Step> {
    let (armv7, guests): (Vec<String>, Vec<String>) = guests
        .iter()
        .cloned()
        .partition(|g| build::is_armv7_crate(g));
    let mut out = vec![step("fmt", &["fmt", "--all", "--check"])];
    out.push(Step {
        name: "clippy host".into(),
        args: {
            let mut a = with_packages(vec!["clippy".into()], HOST_PACKAGES);
            a.extend(["--all-targets", "--", "-D", "warnings"].map(String::from));
            a
        },
    });
    out.push(Step {
        name: format!("clippy {HYPERVISOR_TARGET}"),
        args: with_packages(vec!["clippy".into()], &["hypervisor"])
            .into_iter()
            .chain(["--target", HYPERVISOR_TARGET, "--", "-D", "warnings"].map(String::from))
            .collect(),
    });
    let mut guest_pkgs: Vec<&str> = vec!["guest-rt"];
    guest_pkgs.extend(guests.iter().map(String::as_str));
    out.push(Step {
        name: format!("clippy {GUEST_TARGET}"),
        args: with_packages(vec!["clippy".into()], &guest_pkgs)
            .into_iter()
            .chain(["--target", GUEST_TARGET, "--", "-D", "warnings"].map(String::from))
            .collect(),
    });
    if !armv7.is_empty() {
        let pkgs: Vec<&str> = armv7.iter().map(String::as_str).collect();
        out.push(Step {
            name: format!("clippy {ARMV7_GUEST_TARGET}"),
            args: with_packages(vec!["clippy".into()], &pkgs)
                .into_iter()
                .chain(["--target", ARMV7_GUEST_TARGET, "--", "-D", "warnings"].map(String::from))
                .collect(),
        });
    }
    for c in PUBLISHED_CRATES {
        // --allow-dirty: check the working tree as it is (CI's clone is clean anyway).
        out.push(step(
            format!("package {c}"),
            &["package", "-p", c, "--allow-dirty"],
        ));
    }
    out.push(step(
        "embedder (outside the workspace)",
        &["run", "--manifest-path", EMBEDDER_MANIFEST],
    ));
    out
}

/// Runs every step (all of them, even after a failure), one result line each, and the
/// closing `N passed, M failed`.
pub fn run(ws: &Workspace) -> Result<Tally> {
    let mut tally = Tally::default();
    for s in steps(&ws.guest_crates()) {
        let start = Instant::now();
        let result = run_step(ws, &s);
        tally.record(&s.name, result.is_ok(), start.elapsed().as_secs_f64());
        if let Err(e) = result {
            println!("  {e}");
        }
    }
    println!("{} passed, {} failed", tally.passed, tally.failed);
    Ok(tally)
}

fn run_step(ws: &Workspace, s: &Step) -> Result<()> {
    if s.args.iter().any(|a| a == EMBEDDER_MANIFEST) {
        // Its own workspace, but one target/ for everything.
        let target = ws.root.join("target");
        return build::run_cargo_with_env(ws, &s.args, &[("CARGO_TARGET_DIR", &target)]);
    }
    build::run_cargo(ws, &s.args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn every_published_crate_is_packaged_and_lints_cover_both_targets() {
        let s = steps(&["hello".to_string()]);
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names[0], "fmt");
        for c in PUBLISHED_CRATES {
            assert!(names.contains(&format!("package {c}").as_str()), "{c}");
        }
        let guest = s
            .iter()
            .find(|s| s.name == format!("clippy {GUEST_TARGET}"))
            .unwrap();
        assert!(guest.args.windows(2).any(|w| w == ["-p", "hello"]));
        assert!(guest.args.windows(2).any(|w| w == ["-p", "guest-rt"]));
        assert_eq!(s.last().unwrap().args[0], "run");
    }

    #[test]
    fn the_embedder_exists() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        assert!(root.join(EMBEDDER_MANIFEST).is_file());
    }
}
