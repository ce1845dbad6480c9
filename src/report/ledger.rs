//! The ledger (`STEM.covprune.json`, schema `covprune-ledger/2`): every label's status, the step
//! that decided it, its partners or the reason nothing was proved, bound to the annotated file
//! it describes. The one place that writes and reads it: `audit` and `measure` take the typed
//! [`Ledger`] from [`read_bound`], which refuses a ledger of another schema, of another file or
//! of another version of the file, rather than read it as empty or raise alarms from it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::ir::Program;
pub use crate::prune::config::View;
use crate::prune::{LabelVerdict, Status};

pub const SCHEMA: &str = "covprune-ledger/2";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    pub schema: String,
    /// The annotated file's name.
    pub file: String,
    pub binding: Binding,
    /// Whose runs the claims are about, when not every caller's of the file's external
    /// functions (absent: the default view).
    #[serde(default, skip_serializing_if = "View::is_default")]
    pub view: View,
    /// Sorted by id.
    pub labels: Vec<LedgerLabel>,
    /// The hyperlabels of the `.hyperlabels` file beside the program, sorted by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hyperlabels: Vec<LedgerHyper>,
}

/// What `prune` proved of one hyperlabel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerHyper {
    pub id: u64,
    #[serde(flatten)]
    pub claim: HyperClaim,
    pub criterion: String,
    /// The hyperlabel as written.
    pub hyperlabel: String,
}

/// A hyperlabel's status: uncoverable with why, duplicate of another, subsumed by others, or
/// nothing proved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum HyperClaim {
    Uncoverable { why: String },
    Duplicate { of: u64 },
    Subsumed { by: Vec<u64> },
    Unknown,
}

/// Labels a `witness` test shows feasible, and how many tests do.
pub fn shown_feasible(labels: &[LedgerLabel]) -> (usize, usize) {
    let tests: std::collections::BTreeSet<&str> =
        labels.iter().filter_map(|l| l.witness.as_deref()).collect();
    let n = labels.iter().filter(|l| l.witness.is_some()).count();
    (n, tests.len())
}

/// The labels a `witness` test shows feasible (the ledger names the test).
pub fn witnessed(labels: &[LedgerLabel]) -> std::collections::BTreeSet<u64> {
    labels
        .iter()
        .filter(|l| l.witness.is_some())
        .map(|l| l.id)
        .collect()
}

/// The hyperlabel claims of a ledger, by id (unknown ones left out).
pub fn hyper_claims(ledger: &Ledger) -> std::collections::BTreeMap<u64, HyperClaim> {
    ledger
        .hyperlabels
        .iter()
        .filter(|h| h.claim != HyperClaim::Unknown)
        .map(|h| (h.id, h.claim.clone()))
        .collect()
}

/// What a ledger describes: hashes of the annotated file's bytes and of its label ids.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    pub source: String,
    pub labels: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerLabel {
    pub id: u64,
    /// `status` with its partners (`of`, `by`) or `reason`.
    #[serde(flatten)]
    pub status: Status,
    /// The step that decided a polluting status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u8>,
    pub tag: String,
    /// `FILE:LINE` of the annotated file (empty for a label the program lacks).
    pub loc: String,
    pub function: String,
    pub predicate: String,
    /// Solver time (0 unless the run was asked for timings).
    pub time_ms: u64,
    /// For a label nothing proved: the test `witness` wrote that covers it (`TC_n.c`), which
    /// shows it feasible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("cannot read the ledger {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a covprune ledger: {why}")]
    NotALedger { path: String, why: String },
    #[error(
        "{path} has schema `{found}`, this covprune reads `{SCHEMA}`: prune again to rewrite it"
    )]
    Schema { path: String, found: String },
    #[error(
        "{path} describes {what} than {file}: prune {file} again (or pass the right --ledger)"
    )]
    Stale {
        path: String,
        file: String,
        what: &'static str,
    },
}

impl Ledger {
    /// The ledger of a run over the annotated file `source` (named `file`).
    pub fn new(
        file: &str,
        source: &[u8],
        program: &Program,
        verdicts: &[LabelVerdict],
        with_times: bool,
        view: View,
    ) -> Ledger {
        let mut labels: Vec<LedgerLabel> = verdicts
            .iter()
            .map(|v| LedgerLabel {
                id: v.id,
                status: v.status.clone(),
                step: v.step,
                tag: v.tag.clone(),
                loc: if v.loc.line == 0 {
                    String::new()
                } else {
                    format!(
                        "{}:{}",
                        base_name(program.file_name(v.loc.file)),
                        v.loc.line
                    )
                },
                function: v.function.clone(),
                predicate: v.text.clone(),
                time_ms: if with_times {
                    u64::try_from(v.time_ms).unwrap_or(u64::MAX)
                } else {
                    0
                },
                witness: None,
            })
            .collect();
        labels.sort_by_key(|l| l.id);
        let ids: Vec<u64> = labels.iter().map(|l| l.id).collect();
        Ledger {
            schema: SCHEMA.to_string(),
            file: file.to_string(),
            binding: Binding {
                source: source_hash(source),
                labels: labels_hash(&ids),
            },
            view,
            labels,
            hyperlabels: Vec::new(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a ledger serialises") + "\n"
    }
}

impl LedgerLabel {
    /// The criterion: the tag's first word (LAnnotate writes `WM ROR` and the like).
    pub fn criterion(&self) -> &str {
        self.tag.split_whitespace().next().unwrap_or("")
    }

    /// A duplicate's representative.
    pub fn of(&self) -> Option<u64> {
        match self.status {
            Status::Duplicate { of } => Some(of),
            _ => None,
        }
    }

    /// A subsumed label's subsumers (empty otherwise).
    pub fn by(&self) -> &[u64] {
        match &self.status {
            Status::Subsumed { by } => by,
            _ => &[],
        }
    }
}

/// The hash a ledger binds to an annotated file's bytes.
pub fn source_hash(source: &[u8]) -> String {
    crate::prune::journal::fingerprint(source, "annotated file")
}

/// The hash a ledger binds to a set of label ids (in any order).
pub fn labels_hash(ids: &[u64]) -> String {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let text: String = ids.iter().map(|i| format!("{i}\n")).collect();
    crate::prune::journal::fingerprint(text.as_bytes(), "label ids")
}

/// Reads a ledger: a JSON object of schema [`SCHEMA`] (anything else is refused).
pub fn read(path: &Path) -> Result<Ledger, LedgerError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| LedgerError::Io {
        path: shown.clone(),
        source,
    })?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| LedgerError::NotALedger {
            path: shown.clone(),
            why: e.to_string(),
        })?;
    let Some(schema) = value.get("schema") else {
        return Err(LedgerError::NotALedger {
            path: shown,
            why: format!(
                "a JSON {} without a `schema` field",
                if value.is_array() { "array" } else { "value" }
            ),
        });
    };
    if schema.as_str() != Some(SCHEMA) {
        return Err(LedgerError::Schema {
            path: shown,
            found: schema
                .as_str()
                .map_or_else(|| schema.to_string(), str::to_string),
        });
    }
    serde_json::from_value(value).map_err(|e| LedgerError::NotALedger {
        path: shown,
        why: e.to_string(),
    })
}

/// Reads the ledger at `path` and checks that it describes the annotated file `file` as it is
/// now (and, when given, the label ids of its labels file).
pub fn read_bound(
    path: &Path,
    file: &Path,
    label_ids: Option<&[u64]>,
) -> Result<Ledger, LedgerError> {
    let ledger = read(path)?;
    let source = std::fs::read(file).map_err(|source| LedgerError::Io {
        path: file.display().to_string(),
        source,
    })?;
    let stale = |what| LedgerError::Stale {
        path: path.display().to_string(),
        file: file.display().to_string(),
        what,
    };
    if ledger.binding.source != source_hash(&source) {
        return Err(stale("another file, or another version of the file,"));
    }
    if label_ids.is_some_and(|ids| labels_hash(ids) != ledger.binding.labels) {
        return Err(stale("other labels"));
    }
    Ok(ledger)
}

/// The `.labels` file's ninth column: `infeasible`, `duplicate-of:ID`, `subsumed-by:ID ID`.
pub fn pollution_column(s: &Status) -> String {
    match s {
        Status::Infeasible => "infeasible".into(),
        Status::Duplicate { of } => format!("duplicate-of:{of}"),
        Status::Subsumed { by } => format!(
            "subsumed-by:{}",
            by.iter().map(u64::to_string).collect::<Vec<_>>().join(" ")
        ),
        Status::Unknown { .. } => String::new(),
    }
}

pub fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The functions whose labels are left unknown for a reason of the function's own, from each
/// label's (function, status): not analysed (with why and how many labels), and out of their
/// budget of time or memory (how many labels, per reason), each sorted by name.
pub fn undecided_functions<'a>(
    labels: impl IntoIterator<Item = (&'a str, &'a Status)>,
) -> (
    Vec<crate::report::SkippedFunction>,
    Vec<crate::report::OverBudget>,
) {
    use crate::prune::Reason;
    use std::collections::BTreeMap;
    let mut skipped: BTreeMap<&str, (String, usize)> = BTreeMap::new();
    let mut over: BTreeMap<&str, BTreeMap<String, usize>> = BTreeMap::new();
    for (owner, status) in labels {
        match status.reason() {
            Some(Reason::NotAnalysed { function, why }) => {
                skipped
                    .entry(function)
                    .or_insert_with(|| (why.clone(), 0))
                    .1 += 1;
            }
            Some(
                r @ (Reason::FunctionBudget
                | Reason::MemoryShare
                | Reason::Timeout
                | Reason::ResourceLimit
                | Reason::Interrupted
                | Reason::Memory
                | Reason::SolverDied),
            ) => {
                *over
                    .entry(owner)
                    .or_default()
                    .entry(r.to_string())
                    .or_default() += 1
            }
            _ => {}
        }
    }
    (
        skipped
            .into_iter()
            .map(|(f, (why, labels))| crate::report::SkippedFunction {
                function: f.to_string(),
                why,
                labels,
            })
            .collect(),
        over.into_iter()
            .map(|(f, reasons)| crate::report::OverBudget {
                function: f.to_string(),
                labels: reasons.values().sum(),
                reasons,
            })
            .collect(),
    )
}

/// Lines naming those functions, for text reports.
pub fn undecided_text(
    skipped: &[crate::report::SkippedFunction],
    over_budget: &[crate::report::OverBudget],
) -> String {
    let mut out = String::new();
    for f in skipped {
        out.push_str(&format!(
            "function {} not analysed ({}): {} left unknown\n",
            f.function,
            f.why,
            crate::console::count(f.labels as u64, "label")
        ));
    }
    for f in over_budget {
        let why: Vec<String> = f.reasons.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        out.push_str(&format!(
            "function {} out of time or memory: {} left unknown ({})\n",
            f.function,
            f.labels,
            why.join(", ")
        ));
    }
    out
}

/// What the ledger claims about a label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    Infeasible,
    Duplicate(u64),
    Subsumed(Vec<u64>),
}

/// The claims of a ledger: its polluting labels.
pub fn claims_from_ledger(ledger: &Ledger) -> std::collections::BTreeMap<u64, Claim> {
    claims_of_statuses(ledger.labels.iter().map(|l| (l.id, &l.status)))
}

/// The claims among labels' statuses.
pub fn claims_of_statuses<'a>(
    statuses: impl Iterator<Item = (u64, &'a crate::prune::Status)>,
) -> std::collections::BTreeMap<u64, Claim> {
    use crate::prune::Status;
    statuses
        .filter_map(|(id, status)| {
            let claim = match status {
                Status::Infeasible => Claim::Infeasible,
                Status::Duplicate { of } => Claim::Duplicate(*of),
                Status::Subsumed { by } => Claim::Subsumed(by.clone()),
                Status::Unknown { .. } => return None,
            };
            Some((id, claim))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::Reason;

    fn sample() -> Ledger {
        let label = |id, status| LedgerLabel {
            id,
            status,
            step: Some(3),
            tag: "CC".into(),
            loc: "f.c:3".into(),
            function: "f".into(),
            predicate: "x > 0".into(),
            time_ms: 0,
            witness: None,
        };
        Ledger {
            schema: SCHEMA.into(),
            file: "f.c".into(),
            binding: Binding {
                source: source_hash(b"int x;"),
                labels: labels_hash(&[1, 2, 3]),
            },
            hyperlabels: Vec::new(),
            view: View::default(),
            labels: vec![
                label(1, Status::Duplicate { of: 2 }),
                label(2, Status::Subsumed { by: vec![3] }),
                label(3, Status::unknown(Reason::Satisfiable)),
            ],
        }
    }

    #[test]
    fn a_ledger_reads_back_as_it_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.covprune.json");
        let ledger = sample();
        std::fs::write(&path, ledger.to_json()).unwrap();
        assert_eq!(read(&path).unwrap(), ledger);
    }

    #[test]
    fn other_schemas_and_bare_arrays_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.json");
        std::fs::write(&path, "[]").unwrap();
        assert!(matches!(read(&path), Err(LedgerError::NotALedger { .. })));
        let old = sample().to_json().replace(SCHEMA, "covprune-ledger/1");
        std::fs::write(&path, old).unwrap();
        assert!(matches!(read(&path), Err(LedgerError::Schema { .. })));
    }

    #[test]
    fn a_ledger_is_bound_to_its_file_and_labels() {
        let dir = tempfile::tempdir().unwrap();
        let (path, file) = (dir.path().join("l.json"), dir.path().join("f.c"));
        std::fs::write(&path, sample().to_json()).unwrap();
        std::fs::write(&file, "int x;").unwrap();
        assert!(read_bound(&path, &file, Some(&[3, 2, 1])).is_ok());
        assert!(matches!(
            read_bound(&path, &file, Some(&[1, 2])),
            Err(LedgerError::Stale { .. })
        ));
        std::fs::write(&file, "int y;").unwrap();
        assert!(matches!(
            read_bound(&path, &file, None),
            Err(LedgerError::Stale { .. })
        ));
    }
}
