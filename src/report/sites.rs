//! The sites record `annotate` writes beside an annotated file (`STEM_labels.sites.json`): for
//! each label, where in the original file the objective it stands for is (its statement's
//! line, and for a decision's label the decision, its number of atoms and its span, line and
//! column), and whether each function can be called from outside the file. What maps a proof
//! onto the items of other coverage tools' reports (`covprune exclude`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "covprune-sites/2";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SitesRecord {
    pub schema: String,
    /// The original file, absolute.
    pub original: PathBuf,
    pub functions: Vec<FunctionSite>,
    pub labels: Vec<LabelSite>,
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
