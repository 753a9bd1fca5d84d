//! `DBT_BENCH_VM_PROFILE=<kernel> cargo xtask bench --dbt`: where the host instructions of
//! one in-VM row's timed window go, by symbol of the DBT runtime (`guests/dbt-runtime`,
//! linked at its load address, so a host instruction's address is its address in the ELF),
//! with the code cache as one entry (translated code) and everything outside the runtime's
//! region as another (the hypervisor at EL2). The split plugin
//! (`bench_dbt_vm_split.rs`) counts every executed instruction by address between the
//! kernel's two timed counter reads; deterministic like the rows (`-icount`).

use std::collections::HashMap;
use std::path::Path;

use object::{Object, ObjectSymbol, SymbolKind};

use crate::bench_dbt_vm_split::{CODE_CACHE, READS_PER_KERNEL, REGION};
use crate::error::{IoContext, Result};
use crate::fail;

/// The environment variable naming the kernel to profile.
pub const ENV: &str = "DBT_BENCH_VM_PROFILE";
/// Symbols listed (the rest summed in one line).
const TOP: usize = 30;

/// The kernel to profile (`DBT_BENCH_VM_PROFILE`) and its index in `kernels` (the
/// guest's order: its counter reads are the plugin's snapshots), if set.
pub fn requested(kernels: &[(&str, &str)]) -> Result<Option<(String, usize)>> {
    let Some(name) = std::env::var_os(ENV) else {
        return Ok(None);
    };
    let name = name.to_string_lossy().into_owned();
    let index = kernels
        .iter()
        .position(|k| k.0 == name)
        .ok_or_else(|| fail!("{ENV}={name}: no such in-VM kernel"))?;
    Ok(Some((name, index)))
}

/// The plugin's snapshot that opens kernel `index`'s timed window.
pub fn window_start(index: usize) -> usize {
    index * READS_PER_KERNEL + 2
}

/// Decodes a Rust legacy-mangled name (`_ZN` length-prefixed parts `E`), without its hash
/// part; other names are returned as they are.
fn demangle(name: &str) -> String {
    let Some(mut rest) = name.strip_prefix("_ZN") else {
        return name.to_string();
    };
    let mut parts = Vec::new();
    while let Some(digits) = rest.find(|c: char| !c.is_ascii_digit()).filter(|&d| d > 0) {
        let Ok(len) = rest[..digits].parse::<usize>() else {
            break;
        };
        let Some(part) = rest.get(digits..digits + len) else {
            break;
        };
        parts.push(part);
        rest = &rest[digits + len..];
    }
    if parts.last().is_some_and(|p| {
        p.len() == 17 && p.starts_with('h') && p[1..].bytes().all(|b| b.is_ascii_hexdigit())
    }) {
        parts.pop();
    }
    if parts.is_empty() {
        return name.to_string();
    }
    parts
        .join("::")
        .replace("$LT$", "<")
        .replace("$GT$", ">")
        .replace("$u20$", " ")
        .replace("$RF$", "&")
        .replace("$C$", ",")
        .replace("..", "::")
}

/// The runtime's function symbols, sorted by address: (address, name).
fn symbols(elf: &Path) -> Result<Vec<(u64, String)>> {
    let data = std::fs::read(elf).io(|| format!("reading {}", elf.display()))?;
    let file = object::File::parse(&*data).map_err(|e| fail!("{}: {e}", elf.display()))?;
    let mut v: Vec<(u64, String)> = file
        .symbols()
        .filter(|s| {
            matches!(
                s.kind(),
                SymbolKind::Text | SymbolKind::Label | SymbolKind::Unknown
            )
        })
        .filter(|s| s.address() >= REGION.0 && s.address() < REGION.0 + REGION.1)
        .filter_map(|s| Some((s.address(), demangle(s.name().ok()?))))
        .filter(|(_, n)| !n.starts_with("$x") && !n.starts_with("$d") && !n.is_empty())
        .collect();
    v.sort();
    Ok(v)
}

/// The table of `prof` (the plugin's "address count" lines) by symbol of the runtime ELF
/// `elf`, per window and per guest instruction (`guest` of them in the window).
pub fn report(kernel: &str, prof: &Path, elf: &Path, guest: u64) -> Result<String> {
    let text = std::fs::read_to_string(prof).io(|| format!("reading {}", prof.display()))?;
    let syms = symbols(elf)?;
    let cache = REGION.0 + REGION.1 - CODE_CACHE;
    let mut by: HashMap<String, u64> = HashMap::new();
    let mut total = 0;
    for line in text.lines() {
        let mut w = line.split_whitespace();
        let (Some(a), Some(n)) = (w.next(), w.next()) else {
            continue;
        };
        let (Ok(va), Ok(n)) = (u64::from_str_radix(a, 16), n.parse::<u64>()) else {
            continue;
        };
        let name = if (cache..REGION.0 + REGION.1).contains(&va) {
            "(translated code: the code cache)".to_string()
        } else if (REGION.0..cache).contains(&va) {
            match syms.partition_point(|s| s.0 <= va) {
                0 => "(runtime, before its first symbol)".to_string(),
                i => syms[i - 1].1.clone(),
            }
        } else {
            "(outside the runtime: the hypervisor at EL2)".to_string()
        };
        *by.entry(name).or_default() += n;
        total += n;
    }
    let mut rows: Vec<(String, u64)> = by.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let per = |n: u64| n as f64 / guest.max(1) as f64;
    let mut s = format!(
        "\nProfile of the {kernel} window ({ENV}): {total} host instructions, {guest} guest \
         instructions\n\n| where | host insns | per guest insn |\n|---|---:|---:|\n"
    );
    for (name, n) in rows.iter().take(TOP) {
        s.push_str(&format!("| {name} | {n} | {:.2} |\n", per(*n)));
    }
    let rest: u64 = rows.iter().skip(TOP).map(|r| r.1).sum();
    if rest > 0 {
        s.push_str(&format!(
            "| (the other {} symbols) | {rest} | {:.2} |\n",
            rows.len() - TOP,
            per(rest)
        ));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_legacy_names() {
        assert_eq!(
            demangle("_ZN9dbt_armv79translate6engine3Dbt3run17h0123456789abcdefE"),
            "dbt_armv7::translate::engine::Dbt::run"
        );
        assert_eq!(demangle("dbt_rt_trap"), "dbt_rt_trap");
        assert_eq!(window_start(1), 6);
    }
}
