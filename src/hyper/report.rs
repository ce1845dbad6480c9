//! Hyperlabels through `measure`: each hyperlabel's coverage by the suite's runs, the ones its
//! atomic labels' proofs make uncoverable, and one row of raw and cleaned coverage per
//! criterion.
//!
//! Uncoverable, from the ledger: a disjunct needs every one of its atomic labels covered, so
//! it is uncoverable when one of them is proved infeasible; a hyperlabel is uncoverable when
//! every disjunct is. (Duplicate and subsumed hyperlabels are not derived.)

use std::collections::BTreeMap;

use serde::Serialize;

use super::coverage::{cover, HyperCover, RunCover};
use super::{Hyperlabel, Item};
use crate::report::ledger::Claim;

/// One hyperlabel criterion's coverage.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HyperRow {
    pub criterion: String,
    pub hyperlabels: usize,
    pub covered: usize,
    /// Proved uncoverable (from the atomic labels' proofs).
    pub uncoverable: usize,
    /// Not decided by the runs (sequences, too many combinations).
    pub unmeasured: usize,
}

impl HyperRow {
    pub fn raw(&self) -> Option<f64> {
        (self.hyperlabels > 0).then(|| 100.0 * self.covered as f64 / self.hyperlabels as f64)
    }

    /// Coverage of the hyperlabels not proved uncoverable.
    pub fn cleaned(&self) -> Option<f64> {
        let kept = self.hyperlabels - self.uncoverable;
        (kept > 0).then(|| 100.0 * self.covered as f64 / kept as f64)
    }
}

/// What `measure` says of each hyperlabel.
#[derive(Clone, Debug)]
pub struct HyperStatus {
    pub cover: HyperCover,
    pub uncoverable: bool,
}

impl HyperStatus {
    /// LTest's status word and list: COVERED with its tests, UNCOVERABLE, or UNKNOWN.
    pub fn word(&self) -> (&'static str, Vec<String>) {
        match &self.cover {
            HyperCover::Covered(tests) => ("COVERED", tests.clone()),
            _ if self.uncoverable => ("UNCOVERABLE", Vec::new()),
            _ => ("UNKNOWN", Vec::new()),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct HyperMeasure {
    pub rows: Vec<HyperRow>,
    pub statuses: Vec<HyperStatus>,
    /// Hyperlabels covered though proved uncoverable (a proof is wrong).
    pub alarms: Vec<u64>,
}

/// The runs' covered labels with their environments (an empty one for a label that binds
/// nothing).
pub fn run_covers(runs: &[crate::measure::TestRun]) -> Vec<RunCover> {
    runs.iter()
        .map(|r| RunCover {
            name: r.name.clone(),
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
/// last `measure`), uncoverable as the claims make them.
pub fn rows_of_file(
    hyperlabels: &[Hyperlabel],
    tags: &BTreeMap<u64, String>,
    claims: &BTreeMap<u64, Claim>,
) -> Vec<HyperRow> {
    let statuses: Vec<HyperStatus> = hyperlabels
        .iter()
        .map(|h| HyperStatus {
            cover: match &h.status {
                Some((word, _)) if word == "COVERED" => HyperCover::Covered(Vec::new()),
                _ => HyperCover::NotCovered,
            },
            uncoverable: is_uncoverable(h, claims),
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
        match &status.cover {
            HyperCover::Covered(_) => row.covered += 1,
            HyperCover::Unmeasured(_) => row.unmeasured += 1,
            HyperCover::NotCovered => {}
        }
        row.uncoverable += usize::from(status.uncoverable);
    }
    rows.into_values().collect()
}

/// A hyperlabel's criterion: its first atomic label's.
fn criterion_of(h: &Hyperlabel, tags: &BTreeMap<u64, String>) -> String {
    h.dnf()
        .iter()
        .flat_map(|d| d.items.clone())
        .find_map(|i| match i {
            Item::Label(id) => tags
                .get(&id)
                .map(|t| crate::report::counts::criterion_of(t)),
            Item::Sequence(_) => None,
        })
        .unwrap_or("hyperlabels")
        .to_string()
}

/// Each hyperlabel's status and each criterion's row; `tags`: the atomic labels' tags (a
/// hyperlabel's criterion is its first label's).
pub fn measure(
    hyperlabels: &[Hyperlabel],
    tags: &BTreeMap<u64, String>,
    claims: &BTreeMap<u64, Claim>,
    runs: &[RunCover],
) -> HyperMeasure {
    let statuses: Vec<HyperStatus> = hyperlabels
        .iter()
        .map(|h| HyperStatus {
            cover: cover(h, runs),
            uncoverable: is_uncoverable(h, claims),
        })
        .collect();
    HyperMeasure {
        rows: rows(hyperlabels, tags, &statuses),
        alarms: hyperlabels
            .iter()
            .zip(&statuses)
            .filter(|(_, s)| s.uncoverable && matches!(s.cover, HyperCover::Covered(_)))
            .map(|(h, _)| h.id)
            .collect(),
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

/// After `prune`: the `.hyperlabels` file at `path` (if there is one) with the hyperlabels its
/// claims make uncoverable marked so; other statuses kept (one that said uncoverable and no
/// longer is becomes UNKNOWN). Returns (hyperlabels, uncoverable).
pub fn mark_uncoverable(
    path: &std::path::Path,
    claims: &BTreeMap<u64, Claim>,
) -> Result<Option<(usize, usize)>, String> {
    if !path.exists() {
        return Ok(None);
    }
    let hyperlabels = super::read(path)?;
    let mut text = String::new();
    let mut uncoverable = 0;
    for h in &hyperlabels {
        let proved = is_uncoverable(h, claims);
        uncoverable += usize::from(proved);
        let kept = h
            .status
            .as_ref()
            .filter(|(word, _)| word != "UNCOVERABLE")
            .map(|(word, list)| format!("{}) {} - {word} - {list},", h.id, h.text));
        let line = match (proved, kept) {
            (true, _) => h.line(Some(("UNCOVERABLE", &[]))),
            (false, Some(line)) => line,
            (false, None) => h.line(Some(("UNKNOWN", &[]))),
        };
        text.push_str(&line);
        text.push('\n');
    }
    crate::report::labels::write_atomic(path, text)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(Some((hyperlabels.len(), uncoverable)))
}

/// Every disjunct of `h` holds a label claimed infeasible.
pub fn is_uncoverable(h: &Hyperlabel, claims: &BTreeMap<u64, Claim>) -> bool {
    let dnf = h.dnf();
    !dnf.is_empty()
        && dnf.iter().all(|d| {
            d.items.iter().any(
            |i| matches!(i, Item::Label(id) if matches!(claims.get(id), Some(Claim::Infeasible))),
        )
        })
}
