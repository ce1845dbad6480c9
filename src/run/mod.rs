//! The application layer: one function per command, taking plain library options and returning
//! a typed report (text and JSON forms), or an [`Error`] that says which exit code it gives.
//! The CLI parses arguments into these options and prints what comes back; nothing here knows
//! about clap.

pub mod annotate;
pub mod audit;
pub mod error;
pub mod exclude;
pub mod inclusion;
pub mod inspect;
pub mod jobs;
pub mod measure;
pub mod project;
pub mod project_measure;
mod project_snippets;
pub mod project_witness;
pub mod prune;
pub mod witness;

use std::path::{Path, PathBuf};

pub use crate::frontend::PreprocessOptions;
pub use error::{Error, Exit, Result};

use crate::frontend;

/// Preprocesses, parses and lowers `file`; a missing file is bad input.
pub fn load(file: &Path, opts: &PreprocessOptions) -> Result<frontend::Loaded> {
    if !file.exists() {
        return Err(anyhow::anyhow!("{}: no such file", file.display()).into());
    }
    Ok(frontend::load(file, opts)?)
}

/// The preprocessing options for `file`: `user`'s, then those of the build record `annotate`
/// left beside it (a malformed record is bad input).
pub fn options_for(file: &Path, user: &PreprocessOptions) -> Result<PreprocessOptions> {
    match crate::report::build::read_beside(file).map_err(anyhow::Error::from)? {
        Some(record) => Ok(record.merge_into(user)),
        None => Ok(user.clone()),
    }
}

/// A file's name without its directories.
pub fn file_name(file: &Path) -> String {
    file.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// The directory of a file (`.` for a bare name).
pub fn dir_of(file: &Path) -> PathBuf {
    file.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Fails unless `path` can be written (replaced atomically through a file beside it), so that
/// a command refuses before its long work rather than losing it. Writes nothing that stays.
pub fn check_writable(path: &Path) -> Result<()> {
    let dir = dir_of(path);
    tempfile::NamedTempFile::new_in(&dir).map_err(|e| error::write_failed(path, e))?;
    if path.exists() {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| error::write_failed(path, e))?;
    }
    Ok(())
}

/// The labels file of `file` (`labels`, or STEM.labels when it exists) and its ledger at
/// `ledger_path`, bound to the file and to the labels file's ids.
pub(crate) fn labels_and_ledger(
    file: &Path,
    labels: Option<&Path>,
    ledger_path: &Path,
) -> Result<(
    PathBuf,
    Option<crate::report::labels::LabelsFile>,
    crate::report::ledger::Ledger,
)> {
    let labels_path = labels.map_or_else(|| file.with_extension("labels"), Path::to_path_buf);
    let labels_file = if labels_path.exists() {
        Some(crate::report::labels::read(&labels_path)?)
    } else {
        None
    };
    let ids: Option<Vec<u64>> = labels_file
        .as_ref()
        .map(|lf| lf.rows.iter().map(|r| r.id).collect());
    let ledger = crate::report::ledger::read_bound(ledger_path, file, ids.as_deref())?;
    Ok((labels_path, labels_file, ledger))
}

/// The compiler flags that build `file` in a scratch directory: the compilation database's
/// (paths made absolute) then the user's (`-I` and `-include` paths made absolute), and the
/// database's link flags.
pub(crate) fn build_flags(
    preprocess: &PreprocessOptions,
    file: &Path,
) -> Result<(Vec<String>, Vec<String>)> {
    let absolute = |p: &PathBuf| p.canonicalize().unwrap_or_else(|_| p.clone());
    let mut pre = preprocess.clone();
    pre.include_dirs = pre.include_dirs.iter().map(absolute).collect();
    pre.force_includes = pre.force_includes.iter().map(absolute).collect();
    let (mut flags, link) = frontend::preprocess::database_build_flags(preprocess, file)?;
    flags.extend(frontend::preprocess::user_flags(&pre));
    Ok((flags, link))
}

/// Where `prune` writes the ledger of an annotated file: `STEM.covprune.json`.
pub fn ledger_path_of(file: &Path) -> PathBuf {
    PathBuf::from(format!(
        "{}.covprune.json",
        file.with_extension("").display()
    ))
}

/// Where line `line` of an annotated file (its bytes `source`) is in its original, as
/// `ORIGINAL:LINE`: the annotation adds only its header's lines; None for a file `annotate`
/// did not write, or a line of the header.
pub fn original_line(annotated: &Path, source: &[u8], line: usize) -> Option<String> {
    let header = crate::annotate::HEADER;
    if !source.starts_with(header.as_bytes()) {
        return None;
    }
    let at = line
        .checked_sub(header.lines().count())
        .filter(|l| *l > 0)?;
    let original = crate::report::build::read_beside(annotated)
        .ok()
        .flatten()?
        .original;
    Some(format!("{}:{at}", original.display()))
}
