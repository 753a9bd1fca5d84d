//! Guest-visible register files, each a table of named regions (see [`table`]) built from
//! the architectural offsets in [`offsets`].

pub(crate) mod common;
pub mod offsets;
pub(crate) mod table;
pub(crate) mod v2;
pub(crate) mod v3;

#[cfg(test)]
mod tests;
