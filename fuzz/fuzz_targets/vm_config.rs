//! The user's files `cargo xtask` reads: VM configuration files (`xtask::config::parse_config`,
//! `configs/*.toml`) and scenario files (`xtask::scenarios::parse_scenario`,
//! `tests/scenarios/*.toml`). Any text is accepted or refused with a message; nothing panics.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(cfg) = xtask::config::parse_config(text, Path::new("/nonexistent")) {
        let _ = format!("{cfg:?}");
    }
    let _ = xtask::scenarios::parse_scenario("fuzz", text);
});
