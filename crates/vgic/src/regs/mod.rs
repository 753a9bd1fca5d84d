//! Guest-visible register files, each a table of regions (see [`table`]).

pub(crate) mod common;
pub(crate) mod table;
pub(crate) mod v2;
pub(crate) mod v3;
