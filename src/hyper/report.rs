//! Hyperlabels through `prune` and `measure`: what `prune` proves of each (its ledger rows and
//! the statuses of the `.hyperlabels` file), each hyperlabel's coverage by the suite's runs,
//! the claims those runs contradict, and one row of raw and cleaned coverage per criterion.
//! A hyperlabel is **pruned** when it is uncoverable, a duplicate or subsumed; cleaned
//! coverage is that of the others.

use std::collections::BTreeMap;

use serde::Serialize;

use super::coverage::{cover, HyperCover, RunCover};
use super::{Hyperlabel, Item};
use crate::ir::Program;
use crate::prune::PruneConfig;
use crate::report::ledger::{Claim, HyperClaim, LedgerHyper};

/// One hyperlabel criterion's coverage.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HyperRow {
    pub criterion: String,
    pub hyperlabels: usize,
    pub covered: usize,
    /// Proved uncoverable.
    pub uncoverable: usize,
    /// Proved covered by the same runs as another.
    pub duplicate: usize,
    /// Proved covered whenever others are.
    pub subsumed: usize,
    /// Covered, among the hyperlabels not pruned.
    pub kept_covered: usize,
    /// Not decided by the runs (too many combinations of bound values).
    pub unmeasured: usize,
}

impl HyperRow {
    pub fn pruned(&self) -> usize {
        self.uncoverable + self.duplicate + self.subsumed
    }

    pub fn raw(&self) -> Option<f64> {
        (self.hyperlabels > 0).then(|| 100.0 * self.covered as f64 / self.hyperlabels as f64)
    }

    /// Coverage of the hyperlabels not pruned.
    pub fn cleaned(&self) -> Option<f64> {
        let kept = self.hyperlabels - self.pruned();
        (kept > 0).then(|| 100.0 * self.kept_covered as f64 / kept as f64)
    }
}

/// What `prune` proved of one criterion's hyperlabels.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PrunedRow {
    pub criterion: String,
    pub hyperlabels: usize,
    pub pruned: usize,
    pub uncoverable: usize,
    pub duplicate: usize,
    pub subsumed: usize,
}

impl PrunedRow {
    pub fn to_text(&self) -> String {
        format!(
            "{} hyperlabels: {}, pruned {} (uncoverable {}, duplicate {}, subsumed {})\n",
            self.criterion,
            self.hyperlabels,
            self.pruned,
            self.uncoverable,
            self.duplicate,
            self.subsumed
        )
    }
}

/// One row per criterion of the ledger's hyperlabel claims.
pub fn pruned_rows(proved: &[LedgerHyper]) -> Vec<PrunedRow> {
    let mut rows: BTreeMap<&str, PrunedRow> = BTreeMap::new();
    for h in proved {
        let row = rows.entry(&h.criterion).or_insert_with(|| PrunedRow {
            criterion: h.criterion.clone(),
            ..PrunedRow::default()
        });
        row.hyperlabels += 1;
        match h.claim {
            HyperClaim::Uncoverable { .. } => row.uncoverable += 1,
            HyperClaim::Duplicate { .. } => row.duplicate += 1,
            HyperClaim::Subsumed { .. } => row.subsumed += 1,
            HyperClaim::Unknown => {}
        }
        row.pruned = row.uncoverable + row.duplicate + row.subsumed;
    }
    rows.into_values().collect()
}

/// What `measure` says of each hyperlabel.
#[derive(Clone, Debug)]
pub struct HyperStatus {
    pub cover: HyperCover,
    pub claim: HyperClaim,
}

impl HyperStatus {
    /// LTest's status word and list: COVERED with its tests, UNCOVERABLE, or UNKNOWN.
    pub fn word(&self) -> (&'static str, Vec<String>) {
        match (&self.cover, &self.claim) {
            (HyperCover::Covered(tests), _) => ("COVERED", tests.clone()),
            (_, HyperClaim::Uncoverable { .. }) => ("UNCOVERABLE", Vec::new()),
            _ => ("UNKNOWN", Vec::new()),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct HyperMeasure {
    pub rows: Vec<HyperRow>,
    pub statuses: Vec<HyperStatus>,
    /// Claims the runs contradict: (hyperlabel, its claim, what the runs show).
    pub alarms: Vec<(u64, String, String)>,
}

/// The runs' covered labels with their environments (an empty one for a label that binds
/// nothing).
pub fn run_covers(runs: &[crate::measure::TestRun]) -> Vec<RunCover> {
    runs.iter()
        .map(|r| RunCover {
            name: r.name.clone(),
            sequences: r.sequences.clone(),
            labels: r
                .covered
                .iter()
                .map(|id| {
                    let envs = r
                        .bindings
                        .get(id)
                        .cloned()
                        .unwrap_or_else(|| [Vec::new()].into_iter().collect());
                    (*id, envs)
                })
                .collect(),
        })
        .collect()
}

/// The rows of a `.hyperlabels` file as it stands: covered as its statuses say (those of the
/// last `measure`), pruned as the ledger's claims say.
pub fn rows_of_file(
    hyperlabels: &[Hyperlabel],
    tags: &BTreeMap<u64, String>,
    claims: &BTreeMap<u64, HyperClaim>,
) -> Vec<HyperRow> {
    let statuses: Vec<HyperStatus> = hyperlabels
        .iter()
        .map(|h| HyperStatus {
            cover: match &h.status {
                Some((word, _)) if word == "COVERED" => HyperCover::Covered(Vec::new()),
                _ => HyperCover::NotCovered,
            },
            claim: claim_of(h.id, claims),
        })
        .collect();
    rows(hyperlabels, tags, &statuses)
}

/// One row per criterion: how many hyperlabels, and how many of each status.
fn rows(
    hyperlabels: &[Hyperlabel],
    tags: &BTreeMap<u64, String>,
    statuses: &[HyperStatus],
) -> Vec<HyperRow> {
    let mut rows: BTreeMap<String, HyperRow> = BTreeMap::new();
    for (h, status) in hyperlabels.iter().zip(statuses) {
        let criterion = criterion_of(h, tags);
        let row = rows.entry(criterion.clone()).or_insert_with(|| HyperRow {
            criterion,
            ..HyperRow::default()
        });
        row.hyperlabels += 1;
        let covered = matches!(status.cover, HyperCover::Covered(_));
        match &status.cover {
            HyperCover::Covered(_) => row.covered += 1,
            HyperCover::Unmeasured(_) => row.unmeasured += 1,
            HyperCover::NotCovered => {}
        }
        match status.claim {
            HyperClaim::Uncoverable { .. } => row.uncoverable += 1,
            HyperClaim::Duplicate { .. } => row.duplicate += 1,
            HyperClaim::Subsumed { .. } => row.subsumed += 1,
            HyperClaim::Unknown => row.kept_covered += usize::from(covered),
        }
    }
    rows.into_values().collect()
}

fn claim_of(id: u64, claims: &BTreeMap<u64, HyperClaim>) -> HyperClaim {
    claims.get(&id).cloned().unwrap_or(HyperClaim::Unknown)
}

/// A hyperlabel's criterion: its first atomic label's (`sequences` for one of sequences only).
pub fn criterion_of(h: &Hyperlabel, tags: &BTreeMap<u64, String>) -> String {
    h.dnf()
        .iter()
        .flat_map(|d| d.items.clone())
        .find_map(|i| match i {
            Item::Label(id) => tags
                .get(&id)
                .map(|t| crate::report::counts::criterion_of(t)),
            Item::Sequence(_) => None,
        })
        .unwrap_or("sequences")
        .to_string()
}

/// Each hyperlabel's status and each criterion's row, and the claims (by hyperlabel id) the
/// runs contradict; `tags`: the atomic labels' tags (a hyperlabel's criterion is its first
/// label's).
pub fn measure(
    hyperlabels: &[Hyperlabel],
    tags: &BTreeMap<u64, String>,
    claims: &BTreeMap<u64, HyperClaim>,
    runs: &[RunCover],
) -> HyperMeasure {
    let statuses: Vec<HyperStatus> = hyperlabels
        .iter()
        .map(|h| HyperStatus {
            cover: cover(h, runs),
            claim: claim_of(h.id, claims),
        })
        .collect();
    let covered: BTreeMap<u64, Option<bool>> = hyperlabels
        .iter()
        .zip(&statuses)
        .map(|(h, s)| {
            let c = match s.cover {
                HyperCover::Covered(_) => Some(true),
                HyperCover::NotCovered => Some(false),
                HyperCover::Unmeasured(_) => None,
            };
            (h.id, c)
        })
        .collect();
    let is = |id: &u64| covered.get(id).copied().flatten();
    let mut alarms = Vec::new();
    for (h, s) in hyperlabels.iter().zip(&statuses) {
        let Some(this) = is(&h.id) else { continue };
        match &s.claim {
            HyperClaim::Uncoverable { .. } if this => alarms.push((
                h.id,
                "uncoverable".to_string(),
                "covered by the runs".to_string(),
            )),
            HyperClaim::Duplicate { of } if is(of).is_some_and(|o| o != this) => alarms.push((
                h.id,
                format!("duplicate of hyperlabel {of}"),
                format!(
                    "the runs cover {}",
                    if this {
                        "it, not the other"
                    } else {
                        "the other, not it"
                    }
                ),
            )),
            HyperClaim::Subsumed { by } if !this => {
                if let Some(b) = by.iter().find(|b| is(b) == Some(true)) {
                    alarms.push((
                        h.id,
                        format!("subsumed by hyperlabel {b}"),
                        format!("the runs cover hyperlabel {b}, not it"),
                    ));
                }
            }
            _ => {}
        }
    }
    HyperMeasure {
        rows: rows(hyperlabels, tags, &statuses),
        alarms,
        statuses,
    }
}

/// The `.hyperlabels` text with each entry's status.
pub fn with_statuses(hyperlabels: &[Hyperlabel], statuses: &[HyperStatus]) -> String {
    hyperlabels
        .iter()
        .zip(statuses)
        .map(|(h, s)| {
            let (word, tests) = s.word();
            h.line(Some((word, &tests))) + "\n"
        })
        .collect()
}

/// What `prune` proves of each hyperlabel of `hyperlabels`, from the labels' `claims` and
/// step-1 questions on the values labels can bind and on sequences (under `config`); `tags`:
/// the labels' tags.
pub fn prove(
    program: &Program,
    hyperlabels: &[Hyperlabel],
    tags: &BTreeMap<u64, String>,
    claims: &BTreeMap<u64, Claim>,
    config: &PruneConfig,
) -> Vec<LedgerHyper> {
    let (labels, sequences) = super::values::wanted(hyperlabels, claims);
    let facts = super::claims::Facts {
        values: super::values::bound_values(program, &labels, config),
        infeasible_sequences: super::sequences::infeasible(program, &sequences, config),
    };
    let criteria: Vec<String> = hyperlabels.iter().map(|h| criterion_of(h, tags)).collect();
    let decided = super::claims::decide(hyperlabels, &criteria, claims, &facts);
    let mut rows: Vec<LedgerHyper> = hyperlabels
        .iter()
        .zip(criteria)
        .zip(decided)
        .map(|((h, criterion), claim)| LedgerHyper {
            id: h.id,
            claim,
            criterion,
            hyperlabel: h.text.clone(),
        })
        .collect();
    rows.sort_by_key(|r| r.id);
    rows
}

/// After `prune`: the `.hyperlabels` file at `path` with the hyperlabels proved uncoverable
/// marked so; other statuses kept (one that said uncoverable and no longer is becomes
/// UNKNOWN).
pub fn write_statuses(
    path: &std::path::Path,
    hyperlabels: &[Hyperlabel],
    proved: &[LedgerHyper],
) -> Result<(), String> {
    let uncoverable: std::collections::BTreeSet<u64> = proved
        .iter()
        .filter(|r| matches!(r.claim, HyperClaim::Uncoverable { .. }))
        .map(|r| r.id)
        .collect();
    let mut text = String::new();
    for h in hyperlabels {
        let kept = h
            .status
            .as_ref()
            .filter(|(word, _)| word != "UNCOVERABLE")
            .map(|(word, list)| format!("{}) {} - {word} - {list},", h.id, h.text));
        let line = match (uncoverable.contains(&h.id), kept) {
            (true, _) => h.line(Some(("UNCOVERABLE", &[]))),
            (false, Some(line)) => line,
            (false, None) => h.line(Some(("UNKNOWN", &[]))),
        };
        text.push_str(&line);
        text.push('\n');
    }
    crate::report::labels::write_atomic(path, text)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
