//! The modules of `src/arch/` form layers without cycles: each module uses only modules of
//! lower layers. The layer list is the table in the crate README ("Layers of `arch/`");
//! this test reads it, finds every `super::`/`crate::arch::` path in every file of
//! `src/arch/`, and fails on a use of a module of the same or a higher layer (which is what
//! a new cycle needs) and on a module missing from the list.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The README table's heading; the table follows it.
const SECTION: &str = "### Layers of `arch/`";

/// Layer number of every module named in the README table.
fn layers_from_readme(readme: &str) -> BTreeMap<String, usize> {
    let start = readme
        .find(SECTION)
        .unwrap_or_else(|| panic!("README.md has no section {SECTION:?}"));
    let mut layers = BTreeMap::new();
    for line in readme[start..].lines().skip(1) {
        let line = line.trim();
        if line.starts_with('#') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | layer | modules | what |
        let Some(layer) = cells.get(1).and_then(|c| c.parse::<usize>().ok()) else {
            continue;
        };
        for module in cells[2].split_whitespace() {
            let name = module.trim_matches('`').to_string();
            assert!(
                layers.insert(name.clone(), layer).is_none(),
                "module {name} is listed twice in the README's layer table"
            );
        }
    }
    assert!(!layers.is_empty(), "the README's layer table is empty");
    layers
}

/// Every module of `arch/` with the files it consists of.
fn arch_modules(arch: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut modules = BTreeMap::new();
    for entry in fs::read_dir(arch).expect("src/arch") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let mut files: Vec<PathBuf> = fs::read_dir(&path)
                .expect("module directory")
                .map(|e| e.expect("directory entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "rs"))
                .collect();
            files.sort();
            modules.insert(name, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if name != "mod" {
                modules.insert(name, vec![path]);
            }
        }
    }
    modules
}

/// The code of `src` without comments (line comments and doc comments).
fn strip_comments(src: &str) -> String {
    src.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first path segment after each `prefix` in `code`, expanding `prefix{a, b::c}`
/// groups.
fn segments_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        // Only at the start of a path (not e.g. `my_super::`).
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            out.extend(
                top_level_items(group)
                    .iter()
                    .map(|item| first_segment(item)),
            );
        } else {
            let seg = first_segment(rest);
            if !seg.is_empty() {
                out.push(seg);
            }
        }
    }
    out
}

/// The comma-separated items of a `{...}` use group (`group` starts after the `{`), nested
/// groups kept whole.
fn top_level_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..i]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.retain(|item| !item.trim().is_empty());
    items
}

/// The first segment of a path (`percpu` of `percpu::{self, PerCpu}`).
fn first_segment(path: &str) -> String {
    path.trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The `arch` modules `file` (part of module `module`) uses.
fn uses(module: &str, file: &Path) -> BTreeSet<String> {
    let code = strip_comments(&fs::read_to_string(file).expect("source file"));
    let in_subdir = file
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d == module);
    let is_mod_rs = file.file_stem().is_some_and(|s| s == "mod");
    let mut deps: BTreeSet<String> = segments_after(&code, "crate::arch::").into_iter().collect();
    // In `arch/x.rs` and `arch/x/mod.rs`, `super::` is `arch`; in `arch/x/y.rs` it is `x`
    // itself and `super::super::` is `arch`.
    if !in_subdir || is_mod_rs {
        deps.extend(segments_after(&code, "super::"));
    } else {
        deps.extend(segments_after(&code, "super::super::"));
    }
    deps.retain(|d| d != module && d != "self" && d != "super");
    deps
}

#[test]
fn arch_modules_use_only_lower_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = fs::read_to_string(root.join("README.md")).expect("README.md");
    let layers = layers_from_readme(&readme);
    let modules = arch_modules(&root.join("src/arch"));

    let listed: BTreeSet<&String> = layers.keys().collect();
    let present: BTreeSet<&String> = modules.keys().collect();
    let unlisted: Vec<_> = present.difference(&listed).collect();
    let missing: Vec<_> = listed.difference(&present).collect();
    assert!(
        unlisted.is_empty(),
        "modules of src/arch/ missing from the README's layer table: {unlisted:?}"
    );
    assert!(
        missing.is_empty(),
        "the README's layer table names modules src/arch/ does not have: {missing:?}"
    );

    let mut violations = Vec::new();
    for (module, files) in &modules {
        let layer = layers[module];
        for file in files {
            for dep in uses(module, file) {
                match layers.get(&dep) {
                    Some(&l) if l < layer => {}
                    Some(&l) => violations.push(format!(
                        "{} (layer {layer}) uses {dep} (layer {l})",
                        file.strip_prefix(root).unwrap_or(file).display()
                    )),
                    None => violations.push(format!(
                        "{} uses {dep}, which is not a module of src/arch/",
                        file.strip_prefix(root).unwrap_or(file).display()
                    )),
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "arch/ modules must only use modules of lower layers (README \"Layers of `arch/`\"):\n  {}",
        violations.join("\n  ")
    );
}

#[test]
fn path_parsing() {
    let code = "use super::{gic, percpu::{self, PerCpu}, timer};\nlet x = super::vm::f();\n\
                crate::arch::console::write(); my_super::x; use super::super::sched;";
    assert_eq!(
        segments_after(code, "super::"),
        ["gic", "percpu", "timer", "vm", "super", "sched"]
    );
    assert_eq!(segments_after(code, "crate::arch::"), ["console"]);
    assert_eq!(segments_after(code, "super::super::"), ["sched"]);
    assert_eq!(strip_comments("a // super::x\n/// super::y\nb"), "a \n\nb");
}
