//! The tree's shape: no source file over 1,000 lines, every file opening with a `//!` line
//! saying what it holds, and no import cycle between the crate's top-level modules (each may
//! use only those below it, so that each can be read without the ones above).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the source tree reads") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("encoders/src"), &mut files);
    files.sort();
    assert!(files.len() > 50, "only {} source files found", files.len());
    files
}

#[test]
fn no_source_file_is_over_a_thousand_lines() {
    let long: Vec<String> = sources()
        .iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).unwrap().lines().count();
            (n > 1000).then(|| format!("{} ({n} lines)", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "split along their seams: {long:?}");
}

#[test]
fn every_source_file_opens_with_a_module_comment() {
    let bare: Vec<String> = sources()
        .iter()
        .filter(|p| !std::fs::read_to_string(p).unwrap().starts_with("//!"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(bare.is_empty(), "no `//!` first line: {bare:?}");
}

/// The top-level modules each module of `src/` names (`crate::m`), tests aside.
fn module_uses() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in sources().iter().filter(|p| p.starts_with(&src)) {
        let rel = path.strip_prefix(&src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let entry = uses.entry(top.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let name: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != top {
                entry.insert(name);
            }
        }
    }
    uses
}

/// The nodes on a cycle of `graph` (or leading only into one): peel off the nodes that use
/// no node left until none can be.
fn on_cycles<K: Ord + Clone>(graph: &BTreeMap<K, BTreeSet<K>>) -> BTreeSet<K> {
    let mut left = graph.clone();
    loop {
        let free: Vec<K> = left
            .iter()
            .filter(|(_, used)| used.iter().all(|u| !left.contains_key(u)))
            .map(|(m, _)| m.clone())
            .collect();
        if free.is_empty() {
            return left.into_keys().collect();
        }
        for m in free {
            left.remove(&m);
        }
    }
}

#[test]
fn top_level_modules_import_one_another_without_cycles() {
    let uses = module_uses();
    assert!(uses.len() > 10, "{uses:?}");
    let cyclic = on_cycles(&uses);
    assert!(cyclic.is_empty(), "modules on an import cycle: {cyclic:?}");
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let graph = BTreeMap::from([
        ("a", BTreeSet::from(["b"])),
        ("b", BTreeSet::from(["a"])),
        ("c", BTreeSet::new()),
        ("d", BTreeSet::from(["c"])),
    ]);
    assert_eq!(on_cycles(&graph), BTreeSet::from(["a", "b"]));
}
