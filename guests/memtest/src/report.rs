//! Counting and printing check results in the `memtest: <check>: ok (...)` format.

use crate::say;
use core::fmt::{Arguments, Display};

/// Results so far.
#[derive(Default)]
pub struct Report {
    checks: u32,
    failures: u32,
}

impl Report {
    /// Records check `name`: prints `ok (<details>)` if `pass`, else a `FAIL` line.
    pub fn check(&mut self, name: impl Display, pass: bool, details: Arguments<'_>) {
        self.checks += 1;
        if pass {
            say!("{}: ok ({})", name, details);
        } else {
            self.failures += 1;
            say!("FAIL {}: {}", name, details);
        }
    }

    /// Number of checks recorded.
    pub fn checks(&self) -> u32 {
        self.checks
    }

    /// Number of failed checks.
    pub fn failures(&self) -> u32 {
        self.failures
    }
}
