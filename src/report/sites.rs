//! The sites record `annotate` writes beside an annotated file (`STEM_labels.sites.json`): for
//! each label, where in the original file the objective it stands for is (its statement's
//! line, and for a decision's label the decision, its number of atoms and its span, line and
//! column), and whether each function can be called from outside the file. What maps a proof
//! onto the items of other coverage tools' reports (`covprune exclude`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "covprune-sites/3";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SitesRecord {
    pub schema: String,
    /// The original file, absolute.
    pub original: PathBuf,
    /// The digest of the original's bytes when it was annotated: what the labels' lines and
    /// columns are of.
    pub original_digest: String,
    pub functions: Vec<FunctionSite>,
    pub labels: Vec<LabelSite>,
    /// The labels the file would have in code the configuration it was annotated with
    /// compiles out: not objectives, not in the labels file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compiled_out: Vec<CompiledOutLabels>,
}

/// The labels of one criterion at one line of code the configuration compiles out.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CompiledOutLabels {
    pub line: usize,
    pub tag: String,
    pub labels: usize,
}

/// [`CompiledOutLabels`] of (line, tag) pairs, one per label: counted per line and tag.
pub fn compiled_out_labels(labels: &[(usize, String)]) -> Vec<CompiledOutLabels> {
    let mut counts: std::collections::BTreeMap<(usize, &str), usize> = Default::default();
    for (line, tag) in labels {
        *counts.entry((*line, tag.as_str())).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|((line, tag), labels)| CompiledOutLabels {
            line,
            tag: tag.to_string(),
            labels,
        })
        .collect()
}

/// The compiled-out labels the sites record beside an annotated file lists (none without a
/// record: a file not written by `annotate`).
pub fn compiled_out_beside(annotated: &Path) -> Vec<CompiledOutLabels> {
    SitesRecord::read_beside(annotated)
        .map(|r| r.compiled_out)
        .unwrap_or_default()
}

/// One line for a command's text output: how many labels are in code the configuration
/// compiles out and at which lines (`lines 12-14, 30`); None when there are none.
pub fn compiled_out_note(file: &str, list: &[CompiledOutLabels]) -> Option<String> {
    if list.is_empty() {
        return None;
    }
    let total: usize = list.iter().map(|c| c.labels).sum();
    let mut lines: Vec<usize> = list.iter().map(|c| c.line).collect();
    lines.dedup();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for l in lines {
        match spans.last_mut() {
            Some(s) if s.1 + 1 >= l => s.1 = l,
            _ => spans.push((l, l)),
        }
    }
    let spans: Vec<String> = spans
        .iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    // A long list is cut (the whole of it is in `--json`).
    const SHOWN: usize = 8;
    let more = spans.len().saturating_sub(SHOWN);
    let shown = spans[..spans.len().min(SHOWN)].join(", ");
    Some(format!(
        "{file}: {} in code this configuration compiles out, not objectives (line{} {shown}{})",
        crate::console::count(total as u64, "label"),
        if spans.len() == 1 && !spans[0].contains('-') {
            ""
        } else {
            "s"
        },
        if more > 0 {
            format!(" and {more} more places, listed in --json")
        } else {
            String::new()
        }
    ))
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionSite {
    pub name: String,
    /// External linkage: code outside the file may call it (a `static` function may not, when
    /// the lowered program says so; unknown when it could not be lowered: false).
    pub external: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelSite {
    pub id: u64,
    pub tag: String,
    /// The line of the statement it is written at (1-based).
    pub line: usize,
    /// Index into [`SitesRecord::functions`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionSpan>,
    /// For a condition-coverage label: the atom (index into the decision's atoms) and the
    /// value it stands for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<(usize, bool)>,
    /// For a weak-mutation label whose mutant replaces an operator written in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mutant: Option<MutantSite>,
}

/// A mutant as mutation tools name it: the operator token as written (`+`, `+=`, `++`), the
/// operator the program computes there and its replacement (C's spelling), and where the
/// token is (line and column of its first and last byte, 1-based).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MutantSite {
    pub token: String,
    /// `x++`, not `++x`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub postfix: bool,
    pub from: String,
    pub to: String,
    pub start: (usize, usize),
    pub end: (usize, usize),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionSpan {
    /// The decision's number in the file, in text order.
    pub index: usize,
    pub atoms: usize,
    /// From the first atom's start to the last atom's end: line and column (1-based, in
    /// bytes); None for a decision of a macro's expansion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<(usize, usize)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<(usize, usize)>,
    /// Per atom, the condition clang's branch and MC/DC coverage counts for it (empty for a
    /// decision of a macro's expansion).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ConditionSpan>,
}

/// A condition as clang sees it: the operand of `&&`/`||` (or the whole condition) with its
/// parentheses and `!`s, from `start` to `end` (line and column, 1-based, in bytes; `end` is
/// the last byte's), and whether it is the atom's negation (an odd number of `!` around it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConditionSpan {
    pub start: (usize, usize),
    pub end: (usize, usize),
    pub negated: bool,
}

/// Where the sites record of an annotated file lives.
pub fn path_of(annotated: &Path) -> PathBuf {
    annotated.with_extension("sites.json")
}

impl SitesRecord {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a sites record serialises") + "\n"
    }

    /// The digest a record keeps of the original's bytes.
    pub fn digest(bytes: &[u8]) -> String {
        crate::prune::journal::fingerprint(bytes, "original file")
    }

    /// Refuses (naming what differs) an original that is gone or changed since `annotated`
    /// was made from it: the labels' places, and so every claim about them, are of the
    /// original as it was.
    pub fn check_original(&self, annotated: &Path) -> Result<(), String> {
        let bytes = std::fs::read(&self.original).map_err(|e| {
            format!(
                "{}: its original {} cannot be read ({e}); annotate and prune it again",
                annotated.display(),
                self.original.display()
            )
        })?;
        if Self::digest(&bytes) != self.original_digest {
            return Err(format!(
                "{} changed since {} was annotated from it: its labels and proofs are of the old text; annotate and prune it again",
                self.original.display(),
                annotated.display()
            ));
        }
        Ok(())
    }

    /// The record beside an annotated file, if it has one.
    pub fn read_beside(annotated: &Path) -> Result<SitesRecord, String> {
        let path = path_of(annotated);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "cannot read {} ({e}): annotate the file again with this version",
                path.display()
            )
        })?;
        let record: SitesRecord = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a sites record: {e}", path.display()))?;
        if record.schema != SCHEMA {
            return Err(format!(
                "{}: schema {} (this version reads {SCHEMA})",
                path.display(),
                record.schema
            ));
        }
        Ok(record)
    }
}
