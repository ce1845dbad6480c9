//! The journal (`STEM.covprune.journal`, JSON lines): every step-1 answer and every finished
//! function's results, appended and flushed as they are found, so that a killed run loses only
//! the questions in flight; `--resume` reads it back and skips what it holds.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::shares::ShareResult;
use super::{FunctionResult, Outcome};

pub const SCHEMA: &str = "covprune-journal/3";

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Entry {
    Header {
        schema: String,
        fingerprint: String,
    },
    /// A step-1 answer: function, index of the label occurrence in it, outcome.
    Step1(String, usize, Outcome),
    Function(Box<FunctionResult>),
    /// A share of a function's own questions ([`super::shares`]).
    Share(Box<ShareResult>),
    /// The process died while proving this function (written by the supervisor): a resumed
    /// run keeps its step-1 answers and asks nothing more about it.
    Crashed(String),
}

/// What an earlier run of the same question already found.
#[derive(Default, Debug)]
pub struct Prior {
    pub done: BTreeMap<String, FunctionResult>,
    pub step1: BTreeMap<(String, usize), Outcome>,
    /// Shares of functions' questions, by function and share.
    pub shares: BTreeMap<(String, usize), ShareResult>,
    pub crashed: std::collections::BTreeSet<String>,
}

impl Prior {
    /// Step-1 answers and finished functions.
    pub fn len(&self) -> usize {
        self.done.len() + self.step1.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

pub struct Journal {
    file: Mutex<std::fs::File>,
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot use the journal {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("the journal {0} was written for another input or other options; delete it, or run without --resume")]
    Mismatch(String),
}

/// A fingerprint of what a run answers: the input's bytes and the options that change answers.
pub fn fingerprint(input: &[u8], options: &str) -> String {
    // FNV-1a: stable across Rust versions and platforms, unlike the std hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in input.iter().chain(b"\0").chain(options.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Reads a journal's text: its header must carry `fingerprint`; unreadable lines (torn by a
/// kill) are skipped.
fn read_prior(path: &Path, text: &str, fingerprint: &str) -> Result<Prior, JournalError> {
    let mut prior = Prior::default();
    let mut lines = text.lines();
    match lines
        .next()
        .and_then(|l| serde_json::from_str::<Entry>(l).ok())
    {
        Some(Entry::Header {
            schema,
            fingerprint: f,
        }) if schema == SCHEMA && f == fingerprint => {}
        _ => return Err(JournalError::Mismatch(path.display().to_string())),
    }
    for line in lines {
        match serde_json::from_str::<Entry>(line) {
            Ok(Entry::Step1(f, k, o)) => {
                prior.step1.insert((f, k), o);
            }
            Ok(Entry::Function(r)) => {
                prior.done.insert(r.function.clone(), *r);
            }
            Ok(Entry::Share(r)) => {
                prior.shares.insert((r.function.clone(), r.share), *r);
            }
            Ok(Entry::Crashed(f)) => {
                prior.crashed.insert(f);
            }
            _ => {} // a line torn by a kill
        }
    }
    Ok(prior)
}

impl Journal {
    /// Opens the journal at `path`: with `resume`, an existing journal of the same fingerprint
    /// is read back (a torn last line from a killed run is ignored) and appended to; otherwise
    /// a new journal replaces any old one.
    pub fn open(
        path: &Path,
        fingerprint: &str,
        resume: bool,
    ) -> Result<(Journal, Prior), JournalError> {
        let io = |source| JournalError::Io {
            path: path.display().to_string(),
            source,
        };
        if resume && path.exists() {
            let text = std::fs::read_to_string(path).map_err(io)?;
            let prior = read_prior(path, &text, fingerprint)?;
            // Append after the last complete line.
            let keep = text.rfind('\n').map_or(0, |p| p + 1);
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(io)?;
            file.set_len(keep as u64).map_err(io)?;
            return Ok((Journal::appending(path)?, prior));
        }
        let header = Entry::Header {
            schema: SCHEMA.into(),
            fingerprint: fingerprint.into(),
        };
        let line = serde_json::to_string(&header).unwrap_or_default() + "\n";
        std::fs::write(path, line).map_err(io)?;
        Ok((Journal::appending(path)?, Prior::default()))
    }

    /// Joins a journal that other processes of the same run append to: reads what it holds
    /// (a line being written is ignored) and appends without truncating anything.
    pub fn join(path: &Path, fingerprint: &str) -> Result<(Journal, Prior), JournalError> {
        let prior = Journal::read(path, fingerprint)?;
        Ok((Journal::appending(path)?, prior))
    }

    /// What the journal at `path` holds, without writing to it.
    pub fn read(path: &Path, fingerprint: &str) -> Result<Prior, JournalError> {
        let text = std::fs::read_to_string(path).map_err(|source| JournalError::Io {
            path: path.display().to_string(),
            source,
        })?;
        read_prior(path, &text, fingerprint)
    }

    /// Every write goes to the end (O_APPEND), so that several processes can share the file:
    /// each line is one write, which Linux places whole.
    fn appending(path: &Path) -> Result<Journal, JournalError> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|source| JournalError::Io {
                path: path.display().to_string(),
                source,
            })?;
        Ok(Journal {
            file: Mutex::new(file),
        })
    }

    fn append(&self, e: &Entry) {
        self.write_entry("", e);
    }

    /// One write per line, flushed: a kill can only tear the line being written.
    fn write_entry(&self, before: &str, e: &Entry) {
        let Ok(line) = serde_json::to_string(e) else {
            return;
        };
        if let Ok(mut f) = self.file.lock() {
            let _ = f.write_all(format!("{before}{line}\n").as_bytes());
            let _ = f.flush();
        }
    }

    pub fn step1(&self, function: &str, index: usize, outcome: &Outcome) {
        self.append(&Entry::Step1(function.to_string(), index, outcome.clone()));
    }

    /// Written by the supervisor after a worker died: the leading newline ends any line the
    /// worker left torn, so that it stays one unreadable line and spoils nothing after it.
    pub fn crashed(&self, function: &str) {
        self.write_entry("\n", &Entry::Crashed(function.to_string()));
    }

    pub fn share_done(&self, r: &ShareResult) {
        self.append(&Entry::Share(Box::new(r.clone())));
    }

    pub fn function_done(&self, r: &FunctionResult) {
        self.append(&Entry::Function(Box::new(r.clone())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_line_is_ignored_and_the_rest_is_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.covprune.journal");
        {
            let (j, prior) = Journal::open(&path, "abc", false).unwrap();
            assert!(prior.is_empty());
            j.step1("f", 0, &Outcome::Infeasible);
            j.step1("f", 1, &Outcome::Unknown(crate::prune::Reason::Timeout));
        }
        // A kill in the middle of a line.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"step1\":[\"f\",2,");
        std::fs::write(&path, text).unwrap();
        let (j, prior) = Journal::open(&path, "abc", true).unwrap();
        assert_eq!(prior.step1.len(), 2);
        assert_eq!(prior.step1[&("f".to_string(), 0)], Outcome::Infeasible);
        j.step1("f", 2, &Outcome::Infeasible);
        drop(j);
        let (_, prior) = Journal::open(&path, "abc", true).unwrap();
        assert_eq!(prior.step1.len(), 3);
        assert!(matches!(
            Journal::open(&path, "other", true),
            Err(JournalError::Mismatch(_))
        ));
    }
}
