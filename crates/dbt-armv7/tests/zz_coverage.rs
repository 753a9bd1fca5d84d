//! Decoder coverage report: which A32/T16/T32 encoding classes the other tests reached.
//!
//! Runs last (test targets run in name order): it reads the per-class counts that
//! `diff_qemu`, `diff_branches` and `diff_undef` (executed by the interpreter and compared
//! against qemu-arm), `systest` (executed system program) and `classify` (decoded and
//! classified only) wrote to `target/dbt-armv7-coverage/`, prints the table, and asserts
//! that every class was reached (except the documented gaps) and that the number of
//! executed classes did not drop below [`EXECUTED_FLOOR`].

use dbt_armv7::Class;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Classes no test reaches yet (kept honest: the test fails if one of them becomes covered
/// without being removed here, or if any other class is missed).
const KNOWN_GAPS: &[Class] = &[];

/// Classes executed by the interpreter in the tests above (raise it when it grows).
const EXECUTED_FLOOR: usize = 114;

fn load(name: &str) -> Option<BTreeMap<String, u64>> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../target/dbt-armv7-coverage/{name}.txt"));
    let s = std::fs::read_to_string(p).ok()?;
    Some(
        s.lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_string(), v.parse().unwrap_or(0)))
            .collect(),
    )
}

#[test]
fn coverage_report() {
    let sources = [
        "diff_qemu",
        "diff_branches",
        "diff_undef",
        "systest",
        "classify",
    ];
    // Every source but the last executes instructions.
    let executing = sources.len() - 1;
    let maps: Vec<_> = sources.iter().map(|s| (s, load(s))).collect();
    if maps.iter().any(|(_, m)| m.is_none()) {
        let missing: Vec<_> = maps
            .iter()
            .filter(|(_, m)| m.is_none())
            .map(|(s, _)| **s)
            .collect();
        panic!("coverage data missing for {missing:?}: run the whole suite (`cargo test -p dbt-armv7`)");
    }
    let get = |m: &Option<BTreeMap<String, u64>>, c: Class| {
        m.as_ref().unwrap().get(c.name()).copied().unwrap_or(0)
    };
    println!(
        "{:<18} {:>10} {:>10} {:>10} {:>10} {:>9}  description",
        "class", "diff_qemu", "branches", "undef", "systest", "classify"
    );
    let mut reached = 0;
    let mut gaps = Vec::new();
    for &c in Class::ALL {
        let v: Vec<u64> = maps.iter().map(|(_, m)| get(m, c)).collect();
        let hit = v.iter().any(|&n| n > 0);
        let exec = v[..executing].iter().any(|&n| n > 0);
        println!(
            "{:<18} {:>10} {:>10} {:>10} {:>10} {:>9}  {}{}",
            c.name(),
            v[0],
            v[1],
            v[2],
            v[3],
            v[4],
            c.describe(),
            if !hit {
                "   <-- GAP"
            } else if !exec {
                "   (classified only)"
            } else {
                ""
            }
        );
        if hit {
            reached += 1;
        } else {
            gaps.push(c);
        }
    }
    let executed = Class::ALL
        .iter()
        .filter(|&&c| maps[..executing].iter().any(|(_, m)| get(m, c) > 0))
        .count();
    let n = Class::COUNT;
    println!(
        "coverage: {executed}/{n} executed ({:.1}%), {reached}/{n} classified ({:.1}%)",
        100.0 * executed as f64 / n as f64,
        100.0 * reached as f64 / n as f64,
    );
    assert_eq!(gaps, KNOWN_GAPS, "uncovered classes changed");
    assert!(
        executed >= EXECUTED_FLOOR,
        "executed classes dropped: {executed} < {EXECUTED_FLOOR}"
    );
}
