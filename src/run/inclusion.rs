//! Sources that other translation units include (`#include "lib.c"`, as unit tests do to reach
//! a file's static functions): found from the line markers of each database entry's
//! preprocessed text. Such a file's statics are called and touched from outside it, so its
//! claims may not rest on "all callers are in this file" ([`crate::prune::PruneConfig`]'s
//! `open_statics`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::frontend::{preprocess, source, PreprocessOptions};

/// Which files of the database get their statics opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OpenStatics {
    /// The files another entry of the database includes.
    #[default]
    Auto,
    /// Every file (tests built outside the database reach statics too).
    All,
    /// None: every file's statics are reached only from the file itself.
    None,
}

/// For each file of `files` that another entry of the database `db` includes, the entries
/// that include it (all paths canonical).
pub fn included_sources(
    db: &Path,
    files: &[PathBuf],
    user: &PreprocessOptions,
) -> BTreeMap<PathBuf, Vec<PathBuf>> {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let wanted: BTreeSet<PathBuf> = files.iter().map(|f| canon(f)).collect();
    let mut out: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for unit in files {
        let opts = PreprocessOptions {
            compile_commands: Some(db.to_path_buf()),
            ..user.clone()
        };
        // A unit that does not preprocess includes nothing we can see; `project` reports it.
        let Ok(text) = preprocess::preprocess(unit, &opts) else {
            continue;
        };
        let unit = canon(unit);
        let dir = unit.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut seen = BTreeSet::new();
        for line in text.split(|b| *b == b'\n') {
            let Some((_, Some(name))) = source::parse_marker(line) else {
                continue;
            };
            let path = canon(&dir.join(&name));
            if path != unit && wanted.contains(&path) && seen.insert(path.clone()) {
                out.entry(path).or_default().push(unit.clone());
            }
        }
    }
    out
}
