//! The error type of xtask: a message for the user and the kind of failure, which decides
//! the exit status (2 for bad command-line input, 1 for anything that failed while working).

use std::fmt;

/// What went wrong, worded for the person at the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The user asked for something invalid (bad value, missing file); exit status 2.
    Usage(String),
    /// A step failed (build, tool missing, I/O); exit status 1.
    Failed(String),
}

impl Error {
    /// The process exit status this error should produce.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            Error::Failed(_) => 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) | Error::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

/// Result with the xtask [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Builds an [`Error::Failed`] from a format string.
#[macro_export]
macro_rules! fail {
    ($($t:tt)*) => { $crate::error::Error::Failed(format!($($t)*)) };
}

/// Builds an [`Error::Usage`] from a format string.
#[macro_export]
macro_rules! usage {
    ($($t:tt)*) => { $crate::error::Error::Usage(format!($($t)*)) };
}

/// Adds context to I/O errors: `fs::read(p).io(|| format!("reading {}", p.display()))`.
pub trait IoContext<T> {
    /// Turns an I/O error into [`Error::Failed`] with `what` in front.
    fn io(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn io(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::Failed(format!("{}: {e}", what())))
    }
}
