//! The ledger (`STEM.covprune.json`, schema `covprune-ledger/1`): the full record of every
//! label's status, the step that decided it and the solver time.

use serde::Serialize;

use crate::ir::Program;
use crate::prune::{LabelVerdict, Status};

pub const SCHEMA: &str = "covprune-ledger/1";

#[derive(Debug, Serialize)]
pub struct Ledger {
    pub schema: &'static str,
    pub file: String,
    pub labels: Vec<LedgerLabel>,
}

#[derive(Debug, Serialize)]
pub struct LedgerLabel {
    pub id: u64,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u8>,
    pub tag: String,
    pub loc: String,
    pub function: String,
    pub predicate: String,
    /// For a duplicate: its representative.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub of: Option<Vec<u64>>,
    /// For a subsumed label: the labels that subsume it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub time_ms: u128,
}

impl Ledger {
    pub fn new(
        file: &str,
        program: &Program,
        verdicts: &[LabelVerdict],
        with_times: bool,
    ) -> Ledger {
        let mut labels: Vec<LedgerLabel> = verdicts
            .iter()
            .map(|v| LedgerLabel {
                id: v.id,
                status: status_name(&v.status),
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
                of: match &v.status {
                    Status::Duplicate { of } => Some(vec![*of]),
                    _ => None,
                },
                by: match &v.status {
                    Status::Subsumed { by } => Some(by.clone()),
                    _ => None,
                },
                reason: match &v.status {
                    Status::Unknown(r) => Some(r.clone()),
                    _ => None,
                },
                time_ms: if with_times { v.time_ms } else { 0 },
            })
            .collect();
        labels.sort_by_key(|l| l.id);
        Ledger {
            schema: SCHEMA,
            file: file.to_string(),
            labels,
        }
    }
}

pub fn status_name(s: &Status) -> &'static str {
    match s {
        Status::Infeasible => "infeasible",
        Status::Duplicate { .. } => "duplicate",
        Status::Subsumed { .. } => "subsumed",
        Status::Unknown(_) => "unknown",
    }
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
        Status::Unknown(_) => String::new(),
    }
}

pub fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}
