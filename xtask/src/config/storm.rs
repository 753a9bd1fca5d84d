//! What the storm scenarios need from xtask: the seed of the day and the neighbour VM's
//! disk image with a known pattern.
//!
//! - Every `{seed}` in a VM's command line becomes the run's seed: `STORM_SEED=N` if set
//!   (to repeat a run), else today's UTC date as a number (`20261124`), so the default
//!   test run meets a new storm each day and prints which.
//! - A `[[vm]]` with `disk_pattern = "SIZE"` gets a RAM-disk image of SIZE bytes whose
//!   64-bit little-endian word `j` is `DISK_TAG << 32 | j` (`DISK_TAG` = "DISK"), written
//!   by xtask under `target/images/patterns/` (the storm guest's `role=neighbour` checks
//!   every word and its sum).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// Upper half of every word of the pattern image ("DISK", as the storm guest's
/// `DISK_TAG`).
pub const DISK_TAG: u64 = 0x4449_534b;
/// The placeholder replaced by the seed in command lines.
pub const SEED_PLACEHOLDER: &str = "{seed}";
/// The environment variable that fixes the seed.
pub const SEED_ENV: &str = "STORM_SEED";
/// Largest `disk_pattern` (the package's RAM-disk limit).
pub const MAX_PATTERN: u64 = 64 << 20;

/// `(year, month, day)` of the civil date `days` after 1970-01-01 (H. Hinnant's
/// `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Today's UTC date as `yyyymmdd`.
pub fn date_seed() -> u64 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    (y as u64) * 10_000 + u64::from(m) * 100 + u64::from(d)
}

/// The seed of this run: `STORM_SEED` (decimal or 0x-hex) or [`date_seed`].
pub fn seed() -> std::result::Result<u64, String> {
    match std::env::var(SEED_ENV) {
        Ok(s) => {
            let t = s.trim();
            let v = match t.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16),
                None => t.parse(),
            };
            v.map_err(|_| format!("{SEED_ENV}={s:?}: not a number"))
        }
        Err(_) => Ok(date_seed()),
    }
}

/// `cmdline` with every `{seed}` replaced by the run's seed (printed the first time).
pub fn substitute_seed(cmdline: &str) -> std::result::Result<String, String> {
    if !cmdline.contains(SEED_PLACEHOLDER) {
        return Ok(cmdline.to_string());
    }
    let seed = seed()?;
    static SHOWN: OnceLock<()> = OnceLock::new();
    SHOWN.get_or_init(|| {
        let why = if std::env::var_os(SEED_ENV).is_some() {
            "from STORM_SEED"
        } else {
            "today's date; STORM_SEED=N repeats another run"
        };
        eprintln!("xtask: storm seed {seed} ({why})");
    });
    Ok(cmdline.replace(SEED_PLACEHOLDER, &seed.to_string()))
}

/// The pattern image's bytes (`size` rounded down to 8 bytes).
pub fn pattern_image(size: u64) -> Vec<u8> {
    (0..size / 8)
        .flat_map(|j| ((DISK_TAG << 32) | j).to_le_bytes())
        .collect()
}

/// Where the pattern image of `size` bytes goes.
pub fn pattern_image_path(images_dir: &Path, size: u64) -> PathBuf {
    images_dir
        .join("patterns")
        .join(format!("storm-disk-{size}.img"))
}

/// Writes the pattern image at `path` unless a file of the right size is there.
pub fn ensure_pattern_image(path: &Path, size: u64) -> std::io::Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| m.len() == size / 8 * 8) {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, pattern_image(size))
}

/// The size a pattern image path was made for, if `path` is one.
pub fn pattern_size(path: &Path) -> Option<u64> {
    let name = path.file_name()?.to_str()?;
    let dir = path.parent()?.file_name()?.to_str()?;
    if dir != "patterns" {
        return None;
    }
    name.strip_prefix("storm-disk-")?
        .strip_suffix(".img")?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_416), (2025, 11, 24));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert!(date_seed() > 20_240_000);
    }

    #[test]
    fn seed_substitution() {
        assert_eq!(substitute_seed("a b").unwrap(), "a b");
        let s = substitute_seed("seed={seed} x").unwrap();
        assert!(s.starts_with("seed=") && s.ends_with(" x") && !s.contains('{'));
    }

    #[test]
    fn pattern() {
        let img = pattern_image(24);
        assert_eq!(img.len(), 24);
        assert_eq!(&img[8..16], &((DISK_TAG << 32) | 1).to_le_bytes());
        let p = pattern_image_path(Path::new("/t/images"), 1 << 20);
        assert_eq!(p, Path::new("/t/images/patterns/storm-disk-1048576.img"));
        assert_eq!(pattern_size(&p), Some(1 << 20));
        assert_eq!(pattern_size(Path::new("/t/storm-disk-5.img")), None);
    }
}
