//! Counting and printing check results as `<guest>: <check>: ok (...)` or
//! `<guest>: FAIL <check>: ...` lines, shared by the test guests.

use core::fmt::{Arguments, Display};

/// Results so far of one guest's checks.
pub struct Report {
    guest: &'static str,
    checks: u32,
    failures: u32,
}

impl Report {
    /// An empty report whose lines start with `guest: `.
    pub const fn new(guest: &'static str) -> Self {
        Self {
            guest,
            checks: 0,
            failures: 0,
        }
    }

    /// Records check `name`: prints `ok (<details>)` if `pass`, else a `FAIL` line.
    pub fn check(&mut self, name: impl Display, pass: bool, details: Arguments<'_>) {
        self.checks += 1;
        if pass {
            crate::println!("{}: {}: ok ({})", self.guest, name, details);
        } else {
            self.failures += 1;
            crate::println!("{}: FAIL {}: {}", self.guest, name, details);
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
