//! The tree's shape: no source file over 800 lines and no function over 150 (tests aside),
//! every file opening with a `//!` line
//! saying what it holds, the top-level modules importing only the layers docs/architecture.md
//! allows them, and no import cycle among the modules of any folder of either crate
//! (the crate's top-level modules, the files of `prune/`, ...): each module may use only those
//! below it, so that each can be read without the ones above. A folder's own `mod.rs` is its
//! face, not one of its modules: what it re-exports counts as an import of the module it
//! re-exports from.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

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

const ROOTS: [&str; 2] = ["src", "encoders/src"];

fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for r in ROOTS {
        rust_files(&root.join(r), &mut files);
    }
    files.sort();
    assert!(files.len() > 50, "only {} source files found", files.len());
    files
}

#[test]
fn no_source_file_is_over_eight_hundred_lines() {
    let long: Vec<String> = sources()
        .iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).unwrap().lines().count();
            (n > 800).then(|| format!("{} ({n} lines)", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "split along their seams: {long:?}");
}

/// The functions of a file longer than [`MAX_FUNCTION_LINES`], outside its tests: name and
/// lines, from `fn` to the body's closing brace.
#[derive(Default)]
struct LongFunctions {
    found: Vec<(String, usize)>,
}

const MAX_FUNCTION_LINES: usize = 150;

impl LongFunctions {
    fn check(&mut self, sig: &syn::Signature, body: &syn::Block) {
        let lines = body.brace_token.span.close().end().line + 1 - sig.fn_token.span.start().line;
        if lines > MAX_FUNCTION_LINES {
            self.found.push((sig.ident.to_string(), lines));
        }
    }
}

impl<'ast> Visit<'ast> for LongFunctions {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            _ => &[],
        };
        if !is_cfg_test(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.check(&f.sig, &f.block);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_cfg_test(&f.attrs) {
            self.check(&f.sig, &f.block);
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(body) = &f.default {
            self.check(&f.sig, body);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

fn long_functions(code: &str) -> Vec<(String, usize)> {
    let file = syn::parse_file(code).expect("the source parses");
    let mut v = LongFunctions::default();
    v.visit_file(&file);
    v.found
}

#[test]
fn no_function_is_over_one_hundred_and_fifty_lines() {
    let long: Vec<String> = sources()
        .iter()
        .flat_map(|p| {
            let code = std::fs::read_to_string(p).unwrap();
            long_functions(&code)
                .into_iter()
                .map(move |(f, n)| format!("{}: {f} ({n} lines)", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "split into steps of their own: {long:?}");
}

#[test]
fn the_length_check_counts_functions_and_methods_but_not_tests() {
    let body = "    let _ = 1;\n".repeat(MAX_FUNCTION_LINES);
    let code = format!(
        "fn long() {{\n{body}}}\nstruct S;\nimpl S {{\n    fn method(&self) {{\n{body}    }}\n}}\n\
         fn short() {{}}\n#[cfg(test)]\nmod tests {{\n    fn helper() {{\n{body}    }}\n}}\n"
    );
    let found = long_functions(&code);
    assert_eq!(
        found,
        vec![
            ("long".to_string(), MAX_FUNCTION_LINES + 2),
            ("method".to_string(), MAX_FUNCTION_LINES + 2)
        ]
    );
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

/// A module path inside its crate (`["prune", "asker"]`; the crate root is empty).
type ModPath = Vec<String>;

/// One file of a crate, parsed.
struct Module {
    path: ModPath,
    file: syn::File,
}

/// The modules of the crate whose sources are under `root` (`main.rs` and test modules aside).
fn crate_modules(root: &Path) -> Vec<Module> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(root).unwrap().with_extension("");
        let mut path: ModPath = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if path == ["main"] || path.last().is_some_and(|l| l == "tests") {
            continue;
        }
        if path.last().is_some_and(|l| l == "mod" || l == "lib") {
            path.pop();
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        out.push(Module { path, file });
    }
    out
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// The paths a module names (outside its tests), as written: the use trees flattened, with
/// `*` for a glob, and every other path.
#[derive(Default)]
struct Named {
    /// Each path a `use` brings in, whether it is re-exported, and the name it takes.
    uses: Vec<(Vec<String>, bool, String)>,
    paths: Vec<Vec<String>>,
    idents: BTreeSet<String>,
}

impl Named {
    fn flatten(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, public: bool) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.flatten(prefix, &p.tree, public);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                full.push(n.ident.to_string());
                self.uses.push((full, public, n.ident.to_string()));
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                self.uses.push((full, public, r.rename.to_string()));
            }
            syn::UseTree::Glob(_) => {
                let mut full = prefix.clone();
                full.push("*".into());
                self.uses.push((full, public, "*".into()));
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.flatten(prefix, t, public);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Named {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Struct(s) => &s.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_cfg_test(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let public = !matches!(u.vis, syn::Visibility::Inherited);
        self.flatten(&mut Vec::new(), &u.tree, public);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.paths
            .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }

    fn visit_ident(&mut self, i: &'ast syn::Ident) {
        self.idents.insert(i.to_string());
    }
}

/// `path` as written in module `at`, from the crate root; None for a path that does not start
/// with `crate`, `super`, `self` or a child module of `at` (a local name, another crate).
fn absolute(at: &ModPath, path: &[String], children: &BTreeSet<ModPath>) -> Option<ModPath> {
    let mut base = at.clone();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = at.clone();
            child.push(first.to_string());
            if !children.contains(&child) {
                return None;
            }
        }
        None => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// Per folder (a module with modules under it), the imports among its modules: module `a`
/// imports `b` when a file of `a` (or under it) names something of `b` (or under it), directly
/// or through a name the folder re-exports from `b`.
fn folder_imports(modules: &[Module]) -> BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> {
    let all: BTreeSet<ModPath> = modules.iter().map(|m| m.path.clone()).collect();
    let named: Vec<Named> = modules
        .iter()
        .map(|m| {
            let mut n = Named::default();
            n.visit_file(&m.file);
            n
        })
        .collect();
    // What each module re-exports: name -> the path it stands for.
    let mut exports: BTreeMap<ModPath, BTreeMap<String, ModPath>> = BTreeMap::new();
    for (m, n) in modules.iter().zip(&named) {
        for (path, public, name) in &n.uses {
            if !public || name == "*" {
                continue;
            }
            if let Some(to) = absolute(&m.path, path, &all) {
                exports
                    .entry(m.path.clone())
                    .or_default()
                    .insert(name.clone(), to);
            }
        }
    }
    // A path through re-exports, to the item it names.
    let resolve = |mut p: ModPath| -> ModPath {
        for _ in 0..8 {
            let hop = (1..p.len()).rev().find_map(|k| {
                let module = &p[..k];
                exports
                    .get(module)
                    .and_then(|e| e.get(&p[k]))
                    .filter(|to| **to != p[..=k])
                    .map(|to| (k, to.clone()))
            });
            match hop {
                Some((k, to)) => p = to.into_iter().chain(p[k + 1..].iter().cloned()).collect(),
                None => break,
            }
        }
        p
    };
    let mut out: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (m, n) in modules.iter().zip(&named) {
        let mut targets: Vec<ModPath> = Vec::new();
        for (path, _, _) in &n.uses {
            let Some(abs) = absolute(&m.path, path, &all) else {
                continue;
            };
            if abs.last().is_some_and(|l| l == "*") {
                // A glob names what it brings in that the file uses.
                let module = abs[..abs.len() - 1].to_vec();
                for (name, to) in exports.get(&module).into_iter().flatten() {
                    if n.idents.contains(name) {
                        targets.push(to.clone());
                    }
                }
                targets.push(module);
            } else {
                targets.push(abs);
            }
        }
        targets.extend(n.paths.iter().filter_map(|p| absolute(&m.path, p, &all)));
        for t in targets {
            let t = resolve(t);
            let common = m.path.iter().zip(&t).take_while(|(a, b)| a == b).count();
            if m.path.len() <= common || t.len() <= common {
                continue;
            }
            let folder = m.path[..common].to_vec();
            let mut to_module = folder.clone();
            to_module.push(t[common].clone());
            if all.contains(&to_module) {
                out.entry(folder)
                    .or_default()
                    .entry(m.path[common].clone())
                    .or_default()
                    .insert(t[common].clone());
            }
        }
    }
    out
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

/// Each folder's modules that are on an import cycle, with what each of them imports.
fn cycles(modules: &[Module]) -> Vec<String> {
    let mut found = Vec::new();
    for (folder, graph) in folder_imports(modules) {
        let cyclic = on_cycles(&graph);
        if !cyclic.is_empty() {
            let edges: Vec<String> = cyclic
                .iter()
                .map(|m| {
                    let to: Vec<&String> =
                        graph[m].iter().filter(|t| cyclic.contains(*t)).collect();
                    format!("{m} -> {to:?}")
                })
                .collect();
            found.push(format!("{}/: {}", folder.join("/"), edges.join(", ")));
        }
    }
    found
}

#[test]
fn the_modules_of_every_folder_import_one_another_without_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for r in ROOTS {
        let modules = crate_modules(&root.join(r));
        let folders = folder_imports(&modules);
        assert!(
            folders.get(&Vec::new()).is_some_and(|g| g.len() > 1),
            "{r}: no imports found among the crate's top-level modules"
        );
        let found = cycles(&modules);
        assert!(
            found.is_empty(),
            "{r}: modules on an import cycle: {found:#?}"
        );
    }
}

/// The layers table of docs/architecture.md: each top-level module, in its order, with the
/// modules it may import.
fn layers() -> Vec<(String, BTreeSet<String>)> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md");
    let text = std::fs::read_to_string(doc).unwrap();
    let names = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    text.lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.strip_prefix('|')?.split('|').collect();
            let module = names(cells.first()?).into_iter().next()?;
            Some((module, names(cells.get(1)?).into_iter().collect()))
        })
        .collect()
}

#[test]
fn top_level_modules_import_only_the_layers_below_them() {
    let layers = layers();
    assert!(layers.len() > 10, "docs/architecture.md: {layers:?}");
    let mut below = BTreeSet::new();
    for (m, may) in &layers {
        let above: Vec<&String> = may.difference(&below).collect();
        assert!(
            above.is_empty(),
            "docs/architecture.md: `{m}` may import {above:?}, not listed before it"
        );
        below.insert(m.clone());
    }
    let modules = crate_modules(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let imports = folder_imports(&modules)
        .remove(&Vec::new())
        .unwrap_or_default();
    let tops: BTreeSet<&String> = modules.iter().filter_map(|m| m.path.first()).collect();
    let allowed: BTreeMap<&String, &BTreeSet<String>> =
        layers.iter().map(|(m, a)| (m, a)).collect();
    for m in tops {
        let may = allowed
            .get(m)
            .unwrap_or_else(|| panic!("`{m}` has no row in docs/architecture.md's layers"));
        let beyond: Vec<&String> = imports
            .get(m)
            .into_iter()
            .flatten()
            .filter(|t| !may.contains(*t))
            .collect();
        assert!(
            beyond.is_empty(),
            "`{m}` imports {beyond:?}, which docs/architecture.md does not allow it"
        );
    }
}

fn module(path: &[&str], code: &str) -> Module {
    Module {
        path: path.iter().map(|s| s.to_string()).collect(),
        file: syn::parse_file(code).unwrap(),
    }
}

#[test]
fn the_cycle_check_finds_cycles_through_paths_re_exports_and_globs() {
    let graph = BTreeMap::from([
        ("a", BTreeSet::from(["b"])),
        ("b", BTreeSet::from(["a"])),
        ("c", BTreeSet::new()),
        ("d", BTreeSet::from(["c"])),
    ]);
    assert_eq!(on_cycles(&graph), BTreeSet::from(["a", "b"]));

    // `p/a` names `p/b` by a path; `p/b` names `p/a` through what `p` re-exports.
    let tree = vec![
        module(&[], "pub mod p;"),
        module(&["p"], "mod a; mod b; pub use a::Thing;"),
        module(&["p", "a"], "pub struct Thing; fn f() { super::b::g(); }"),
        module(&["p", "b"], "use super::Thing; pub fn g() {}"),
    ];
    assert_eq!(cycles(&tree), vec!["p/: a -> [\"b\"], b -> [\"a\"]"]);

    // The same through a glob, in a file under `p/b`; tests and comments do not count.
    let tree = vec![
        module(&["p"], "mod a; mod b; pub use a::Thing;"),
        module(
            &["p", "a"],
            "pub struct Thing; fn f() { crate::p::b::g(); }",
        ),
        module(&["p", "b"], "mod c; pub fn g() {}"),
        module(&["p", "b", "c"], "use super::super::*; fn h(_: Thing) {}"),
    ];
    assert_eq!(cycles(&tree), vec!["p/: a -> [\"b\"], b -> [\"a\"]"]);
    let tree = vec![
        module(&["p"], "mod a; mod b;"),
        module(&["p", "a"], "/// [`super::b`]\nfn f() {}"),
        module(
            &["p", "b"],
            "fn g() { super::a::f(); }\n#[cfg(test)]\nmod t { use super::super::a; }",
        ),
    ];
    assert!(cycles(&tree).is_empty());
}
