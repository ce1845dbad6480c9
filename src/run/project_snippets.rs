//! What adds the tests `project witness` wrote to the project's own suite: for a CMake build, a
//! file to `include()` that builds each test against the library target its file is part of
//! and registers it with `add_test`; for a Meson build, the `executable()` and `test()` lines
//! to paste, naming the target. Crash tests are left out: they show a label feasible but
//! stop under a sanitizer.

use std::path::{Path, PathBuf};

use super::error::{write_failed, Result};
use super::project::Manifest;
use crate::frontend::preprocess::DatabaseEntry;
use crate::report::labels;

/// The tests written for one file: its path in the sources, the tests' folder, their names.
pub struct Written<'a> {
    pub file: &'a str,
    pub out: &'a str,
    pub tests: &'a [String],
}

/// Writes the snippets beside the tests (`tests_root`) and says where they are.
pub fn write(
    tests_root: &Path,
    files: &[Written],
    entries: &[DatabaseEntry],
    manifest: &Manifest,
) -> Result<Vec<String>> {
    let root = PathBuf::from(&manifest.root);
    let root = root.canonicalize().unwrap_or(root);
    let db_dir = PathBuf::from(&manifest.database)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let db_dir = db_dir.canonicalize().unwrap_or(db_dir);
    let tests: Vec<Test> = files
        .iter()
        .flat_map(|f| {
            let original = root.join(f.file);
            let original = original.canonicalize().unwrap_or(original);
            let entry = entries.iter().find(|e| e.file == original);
            let target = entry.and_then(|e| target_of(&e.args));
            let defines = entry.map(|e| defines_of(&e.args)).unwrap_or_default();
            let include_dirs = entry
                .map(|e| include_dirs_of(e, &root, &db_dir))
                .unwrap_or_default();
            let others = others_of(entries, &original, target.as_ref(), &root);
            let group = test_name(f.file, "others");
            f.tests
                .iter()
                .filter(|t| t.starts_with("TC_"))
                .map(move |t| Test {
                    name: test_name(f.file, t),
                    path: Path::new(&f.out).join(t),
                    source_dir: Path::new(&f.file)
                        .parent()
                        .map(Path::to_path_buf)
                        .unwrap_or_default(),
                    target: target.clone(),
                    defines: defines.clone(),
                    include_dirs: include_dirs.clone(),
                    others: others.clone(),
                    group: group.clone(),
                })
        })
        .collect();
    if tests.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    if db_dir.join("CMakeCache.txt").exists() {
        let path = tests_root.join("covprune-witnesses.cmake");
        labels::write_atomic(&path, cmake(&tests)).map_err(|e| write_failed(&path, e))?;
        out.push(format!("include({}) in CMakeLists.txt", path.display()));
    }
    if db_dir.join("meson-info").is_dir() {
        let path = tests_root.join("meson-witnesses.txt");
        labels::write_atomic(&path, meson(&tests)).map_err(|e| write_failed(&path, e))?;
        out.push(format!(
            "the lines of {} in meson.build, each target's variable named",
            path.display()
        ));
    }
    Ok(out)
}

struct Test {
    /// A target name: the file's path and the test's, in letters, digits and `_`.
    name: String,
    path: PathBuf,
    /// The original file's folder relative to the sources' root (the annotated copy's quoted
    /// `#include`s are found there).
    source_dir: PathBuf,
    /// The build target the file is compiled for, when its object's path tells.
    target: Option<Target>,
    /// The file's own `-D`, `-U` and `-std=` flags (a library's private definitions, which
    /// linking with it does not bring).
    defines: Vec<String>,
    /// The file's `-I` folders, relative to the sources' root or the build folder (Meson's
    /// `include_directories` takes each for both).
    include_dirs: Vec<String>,
    /// The other files of the same target, relative to the sources' root: their code, not
    /// the target's (a shared library exports only its API, and its copy of the file under
    /// test would clash with the test's).
    others: Vec<String>,
    /// The name of the library of `others` (one per file under test).
    group: String,
}

/// The C files of `target` other than `file`, relative to `root`, sorted, each once.
fn others_of(
    entries: &[DatabaseEntry],
    file: &Path,
    target: Option<&Target>,
    root: &Path,
) -> Vec<String> {
    let Some(target) = target else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .iter()
        .filter(|e| e.file != file && e.file.extension().is_some_and(|x| x == "c"))
        .filter(|e| target_of(&e.args).is_some_and(|t| t.key == target.key))
        .filter_map(|e| {
            e.file
                .strip_prefix(root)
                .ok()
                .map(|r| r.display().to_string())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// An entry's `-I` folders relative to `root` (the sources) or `build` (the database's
/// folder), each once, kept when the sources have that folder (Meson's
/// `include_directories` takes each for both trees, and refuses one the sources lack: a
/// target's private folder).
fn include_dirs_of(e: &DatabaseEntry, root: &Path, build: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut it = e.args.iter();
    while let Some(a) = it.next() {
        let dir = match a.strip_prefix("-I") {
            Some("") => it.next().cloned(),
            Some(d) => Some(d.to_string()),
            None => None,
        };
        let Some(dir) = dir else { continue };
        let abs = e.dir.join(&dir);
        let abs = abs.canonicalize().unwrap_or(abs);
        let Ok(rel) = abs.strip_prefix(build).or_else(|_| abs.strip_prefix(root)) else {
            continue;
        };
        if !root.join(rel).is_dir() {
            continue;
        }
        let rel = match rel.display().to_string() {
            r if r.is_empty() => ".".to_string(),
            r => r,
        };
        if !out.contains(&rel) {
            out.push(rel);
        }
    }
    out
}

/// The `-D NAME`, `-U NAME` and `-std=` flags of a command, each as one argument.
fn defines_of(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-D" || a == "-U" {
            if let Some(v) = it.next() {
                out.push(format!("{a}{v}"));
            }
        } else if a.starts_with("-D") || a.starts_with("-U") || a.starts_with("-std=") {
            out.push(a.clone());
        }
    }
    out
}

fn test_name(file: &str, test: &str) -> String {
    let stem = format!(
        "covprune_{}_{}",
        file.trim_end_matches(".c"),
        test.trim_end_matches(".c")
    );
    stem.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// A build target, as the path of an entry's object tells it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Target {
    /// The object's folder of the target: `CMakeFiles/cjson.dir`, `lib/libfribidi.so.0.4.0.p`.
    key: String,
    /// Its name: CMake's target; Meson's file name without `lib`, suffix and version.
    name: String,
    /// Meson: the folder of the `meson.build` that defines it, relative to the build folder.
    subdir: String,
}

/// The target an entry's object belongs to: CMake's `CMakeFiles/NAME.dir/`, Meson's
/// `NAME.p/` (a library's file name with its version: `libfribidi.so.0.4.0.p`).
fn target_of(args: &[String]) -> Option<Target> {
    let object = args
        .iter()
        .position(|a| a == "-o")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .or_else(|| {
            args.iter()
                .find_map(|a| a.strip_prefix("-o").map(str::to_string))
        })?;
    if let Some(at) = object.find("CMakeFiles/") {
        let rest = &object[at + "CMakeFiles/".len()..];
        let (name, _) = rest.split_once(".dir/")?;
        return Some(Target {
            key: format!("{}CMakeFiles/{name}.dir", &object[..at]),
            name: name.to_string(),
            subdir: String::new(),
        });
    }
    let parts: Vec<&str> = object.split('/').collect();
    let at = parts.iter().position(|p| p.ends_with(".p"))?;
    let base = parts[at].trim_end_matches(".p");
    let base = base.strip_prefix("lib").unwrap_or(base);
    let name = base
        .split(".so")
        .next()
        .unwrap_or(base)
        .split(".a")
        .next()?;
    Some(Target {
        key: parts[..=at].join("/"),
        name: name.to_string(),
        subdir: parts[..at].join("/"),
    })
}

fn cmake(tests: &[Test]) -> String {
    let mut out = String::from(
        "# Tests covprune's `project witness` wrote: each calls one function with inputs that\n\
         # cover objectives the suite did not. Add them with include(THIS FILE). Each is built\n\
         # with the other files of its file's target as a static library (the target's include\n\
         # folders and definitions); warnings are off for them (`-w`): a project's -Werror is\n\
         # for its own code.\n",
    );
    let mut groups = std::collections::BTreeSet::new();
    for t in tests {
        if let (Some(Target { name: target, .. }), false) = (&t.target, t.others.is_empty()) {
            if groups.insert(&t.group) {
                let sources: Vec<String> = t
                    .others
                    .iter()
                    .map(|o| format!("\"${{CMAKE_SOURCE_DIR}}/{o}\""))
                    .collect();
                out.push_str(&format!(
                    "add_library({g} STATIC {sources})\n\
                     target_compile_options({g} PRIVATE -w)\n\
                     target_include_directories({g} PRIVATE $<TARGET_PROPERTY:{target},INCLUDE_DIRECTORIES>)\n\
                     target_compile_definitions({g} PRIVATE $<TARGET_PROPERTY:{target},COMPILE_DEFINITIONS>)\n",
                    g = t.group,
                    sources = sources.join(" ")
                ));
            }
        }
        out.push_str(&format!(
            "add_executable({name} \"{path}\")\ntarget_compile_options({name} PRIVATE -w)\ntarget_include_directories({name} PRIVATE \"${{CMAKE_SOURCE_DIR}}/{dir}\")\n",
            name = t.name,
            path = t.path.display(),
            dir = t.source_dir.display()
        ));
        if let Some(Target { name: target, .. }) = &t.target {
            out.push_str(&format!(
                "target_include_directories({name} PRIVATE $<TARGET_PROPERTY:{target},INCLUDE_DIRECTORIES>)\n\
                 target_compile_definitions({name} PRIVATE $<TARGET_PROPERTY:{target},COMPILE_DEFINITIONS>)\n\
                 target_link_libraries({name} PRIVATE {others}$<TARGET_PROPERTY:{target},LINK_LIBRARIES>)\n",
                name = t.name,
                others = if t.others.is_empty() {
                    String::new()
                } else {
                    format!("{} ", t.group)
                }
            ));
        }
        out.push_str(&format!(
            "add_test(NAME {name} COMMAND {name})\n",
            name = t.name
        ));
    }
    out
}

fn meson(tests: &[Test]) -> String {
    let mut out = String::from(
        "# Tests covprune's `project witness` wrote: each calls one function with inputs that\n\
         # cover objectives the suite did not. Paste into the top meson.build after the library's\n\
         # target (folders are relative to it). Each is built with the objects of the other files\n\
         # of its file's target; `lib` and the target's name stand for the target's variable.\n",
    );
    for t in tests {
        out.push_str(&format!(
            "{name} = executable('{name}', '{path}', c_args: [{args}], include_directories: include_directories({dirs}){link})\ntest('{name}', {name})\n",
            name = t.name,
            path = t.path.display(),
            args = std::iter::once("-w")
                .chain(t.defines.iter().map(String::as_str))
                .map(|a| format!("'{}'", a.replace('\\', "\\\\").replace('\'', "\\'")))
                .collect::<Vec<_>>()
                .join(", "),
            dirs = std::iter::once(match t.source_dir.display().to_string() {
                d if d.is_empty() => ".".to_string(),
                d => d,
            })
            .chain(t.include_dirs.iter().cloned())
            .fold(Vec::<String>::new(), |mut v, d| {
                if !v.contains(&d) {
                    v.push(d);
                }
                v
            })
            .iter()
            .map(|d| format!("'{d}'"))
            .collect::<Vec<_>>()
            .join(", "),
            link = match (&t.target, t.others.is_empty()) {
                (Some(x), false) => format!(
                    ", objects: lib{}.extract_objects({})",
                    x.name,
                    t.others
                        .iter()
                        .filter_map(|o| {
                            Path::new(o)
                                .strip_prefix(&x.subdir)
                                .ok()
                                .map(|r| format!("'{}'", r.display()))
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                _ => String::new(),
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn finds_the_target_of_an_object() {
        assert_eq!(
            target_of(&args(&[
                "cc",
                "-c",
                "-o",
                "CMakeFiles/cjson.dir/cJSON.c.o",
                "cJSON.c"
            ]))
            .map(|t| t.name),
            Some("cjson".into())
        );
        assert_eq!(
            target_of(&args(&[
                "cc",
                "-o",
                "lib/libfribidi.so.0.4.0.p/fribidi.c.o",
                "-c",
                "../lib/fribidi.c"
            ])),
            Some(Target {
                key: "lib/libfribidi.so.0.4.0.p".into(),
                name: "fribidi".into(),
                subdir: "lib".into()
            })
        );
        // An executable of the same name is another target.
        assert_ne!(
            target_of(&args(&[
                "cc",
                "-o",
                "bin/fribidi.p/main.c.o",
                "-c",
                "main.c"
            ]))
            .map(|t| t.key),
            Some("lib/libfribidi.so.0.4.0.p".into())
        );
        assert_eq!(target_of(&args(&["cc", "-c", "x.c"])), None);
    }

    #[test]
    fn names_are_identifiers() {
        assert_eq!(
            test_name("lib/fribidi-bidi.c", "TC_3.c"),
            "covprune_lib_fribidi_bidi_TC_3"
        );
    }
}
