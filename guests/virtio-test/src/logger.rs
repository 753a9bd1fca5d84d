//! Warnings and errors from `virtio-drivers` go to the console.

use log::{LevelFilter, Log, Metadata, Record};

struct Console;

impl Log for Console {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= log::Level::Warn
    }

    fn log(&self, record: &Record) {
        if self.enabled(record.metadata()) {
            guest_rt::println!("virtio-test: [{}] {}", record.level(), record.args());
        }
    }

    fn flush(&self) {}
}

static LOGGER: Console = Console;

/// Installs the logger (warnings and up).
pub fn init() {
    // SAFETY: called once at start, before anything logs, on the only CPU; the racy setters
    // avoid the atomic read-modify-write the others need (no exclusives with the MMU off).
    unsafe {
        let _ = log::set_logger_racy(&LOGGER);
        log::set_max_level_racy(LevelFilter::Warn);
    }
}
