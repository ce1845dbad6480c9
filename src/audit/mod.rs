//! `covprune audit`: how redundant each criterion is on a program, read from a ledger: counts
//! per criterion and function, the largest duplicate classes, the strongest subsumers, the
//! criterion × criterion matrix, and the pictures (DOT, a self-contained HTML page with the
//! graph as SVG) and SARIF findings people look at.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use covprune_encoders::{Criterion, Objective};
use serde::Serialize;

/// One label of the ledger.
pub use crate::report::ledger::LedgerLabel as Row;

use crate::prune::Status;

mod graph;
mod html;
mod sarif;

pub use graph::{dot, svg, svgs};
pub use html::{html, status_words, HtmlCoverage};
pub use sarif::{encode_uri_path, sarif, sarif_location, sarif_log};

/// Pollution counts of a set of labels (the paper's Figure 6 columns), defined once.
pub use crate::report::counts::Counts;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DuplicateClass {
    pub representative: u64,
    pub members: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Subsumer {
    pub label: u64,
    pub tag: String,
    pub subsumes: usize,
}

/// The audit of one ledger.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Audit {
    pub criteria: Vec<Counts>,
    pub functions: Vec<Counts>,
    pub largest_duplicate_classes: Vec<DuplicateClass>,
    pub top_subsumers: Vec<Subsumer>,
    /// `matrix[i][j]`: labels of `criteria_order[i]` that are duplicates of, or subsumed by, a
    /// label of `criteria_order[j]`.
    pub criteria_order: Vec<String>,
    pub matrix: Vec<Vec<usize>>,
    /// Labels kept after pruning: covering them covers every objective of all the criteria.
    pub sufficient: BTreeMap<String, usize>,
    pub sufficient_total: usize,
    /// Functions the prover did not analyse: their labels stay unknown.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<crate::report::SkippedFunction>,
    /// Functions whose budget ran out, with the labels each left unknown.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub over_budget: Vec<crate::report::OverBudget>,
    /// Labels `witness` tests show feasible, and the tests.
    #[serde(skip_serializing_if = "is_zero")]
    pub shown_feasible: usize,
    #[serde(skip_serializing_if = "is_zero")]
    pub witness_tests: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

const TOP: usize = 10;

pub fn audit(rows: &[Row]) -> Audit {
    use crate::report::counts::{self, Fact};
    let facts: Vec<Fact> = rows
        .iter()
        .map(|r| Fact::of_status(r.id, &r.tag, &r.status, r.step))
        .collect();
    let criteria = counts::per_criterion(&facts);
    let (shown_feasible, witness_tests) = crate::report::ledger::shown_feasible(rows);
    let classes = counts::classify(&facts);
    let (skipped, over_budget) = crate::report::ledger::undecided_functions(
        rows.iter().map(|r| (r.function.as_str(), &r.status)),
    );
    let mut per_fn: BTreeMap<String, Counts> = BTreeMap::new();
    for r in rows {
        let fname = if r.function.is_empty() {
            "(not compiled)".to_string()
        } else {
            r.function.clone()
        };
        per_fn
            .entry(fname.clone())
            .or_insert_with(|| Counts::named(&fname))
            .add(classes[&r.id]);
    }
    let mut functions: Vec<Counts> = per_fn.into_values().collect();
    functions.sort_by(|a, b| b.pruned.cmp(&a.pruned).then(a.name.cmp(&b.name)));

    let mut classes: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for r in rows {
        if let Some(of) = r.of() {
            classes.entry(of).or_insert_with(|| vec![of]).push(r.id);
        }
    }
    let mut largest: Vec<DuplicateClass> = classes
        .into_iter()
        .map(|(representative, members)| DuplicateClass {
            representative,
            members,
        })
        .collect();
    largest.sort_by(|a, b| {
        b.members
            .len()
            .cmp(&a.members.len())
            .then(a.representative.cmp(&b.representative))
    });
    largest.truncate(TOP);

    let tag_of: BTreeMap<u64, &str> = rows.iter().map(|r| (r.id, r.tag.as_str())).collect();
    let mut subsumes: BTreeMap<u64, usize> = BTreeMap::new();
    for r in rows {
        for b in r.by() {
            *subsumes.entry(*b).or_default() += 1;
        }
    }
    let mut top: Vec<Subsumer> = subsumes
        .into_iter()
        .map(|(label, n)| Subsumer {
            label,
            tag: tag_of.get(&label).unwrap_or(&"").to_string(),
            subsumes: n,
        })
        .collect();
    top.sort_by(|a, b| b.subsumes.cmp(&a.subsumes).then(a.label.cmp(&b.label)));
    top.truncate(TOP);

    let order: Vec<String> = criteria
        .iter()
        .filter(|c| c.name != "all")
        .map(|c| c.name.clone())
        .collect();
    let index: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i))
        .collect();
    let crit_of: BTreeMap<u64, &str> = rows.iter().map(|r| (r.id, r.criterion())).collect();
    let mut matrix = vec![vec![0usize; order.len()]; order.len()];
    for r in rows {
        let Some(&i) = index.get(r.criterion()) else {
            continue;
        };
        let by: BTreeSet<usize> = r
            .of()
            .iter()
            .chain(r.by())
            .filter_map(|x| crit_of.get(x).and_then(|c| index.get(c)).copied())
            .collect();
        for j in by {
            matrix[i][j] += 1;
        }
    }
    let mut sufficient: BTreeMap<String, usize> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.status.is_polluting()) {
        *sufficient.entry(r.criterion().to_string()).or_default() += 1;
    }
    let sufficient_total = sufficient.values().sum();
    Audit {
        criteria,
        functions,
        largest_duplicate_classes: largest,
        top_subsumers: top,
        criteria_order: order,
        matrix,
        sufficient,
        sufficient_total,
        skipped,
        over_budget,
        shown_feasible,
        witness_tests,
    }
}

impl Audit {
    pub fn to_text(&self) -> String {
        let mut out = crate::report::counts::counts_text(&self.criteria, "criterion", 24);
        out.push_str(&crate::report::ledger::undecided_text(
            &self.skipped,
            &self.over_budget,
        ));
        if self.shown_feasible > 0 {
            let _ = writeln!(
                out,
                "shown feasible by `witness` tests: {} ({})",
                crate::console::count(self.shown_feasible as u64, "label"),
                crate::console::count(self.witness_tests as u64, "test")
            );
        }
        out.push('\n');
        out.push_str(&crate::report::counts::counts_text(
            &self.functions[..self.functions.len().min(TOP)],
            "function (most pruned)",
            24,
        ));
        if !self.criteria_order.is_empty() {
            out.push_str("\nlabels of the row's criterion duplicate of / subsumed by a label of the column's:\n");
            let _ = write!(out, "{:<8}", "");
            for c in &self.criteria_order {
                let _ = write!(out, " {c:>7}");
            }
            out.push('\n');
            for (i, c) in self.criteria_order.iter().enumerate() {
                let _ = write!(out, "{c:<8}");
                for n in &self.matrix[i] {
                    let _ = write!(out, " {n:>7}");
                }
                out.push('\n');
            }
        }
        let _ = writeln!(
            out,
            "\nsufficient set (labels kept): {} ({})",
            self.sufficient_total,
            self.sufficient
                .iter()
                .map(|(c, n)| format!("{c} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for d in &self.largest_duplicate_classes {
            let _ = writeln!(
                out,
                "duplicate class of l{}: {}",
                d.representative,
                crate::console::count(d.members.len() as u64, "label")
            );
        }
        for s in &self.top_subsumers {
            let _ = writeln!(
                out,
                "l{} ({}) subsumes {}",
                s.label,
                s.tag,
                crate::console::count(s.subsumes as u64, "label")
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::sarif::file_uri;
    use super::*;

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(encode_uri_path("my dir/a+b.c"), "my%20dir/a%2Bb.c");
        assert_eq!(
            file_uri(std::path::Path::new("/w/my src")),
            "file:///w/my%20src"
        );
    }

    fn row(id: u64, status: &str, tag: &str, of: Option<u64>, by: &[u64]) -> Row {
        Row {
            id,
            status: match (status, of) {
                ("infeasible", _) => Status::Infeasible,
                ("duplicate", Some(of)) => Status::Duplicate { of },
                ("subsumed", _) => Status::Subsumed { by: by.to_vec() },
                _ => Status::unknown(crate::prune::Reason::Satisfiable),
            },
            step: Some(if status == "infeasible" { 1 } else { 3 }),
            tag: tag.into(),
            loc: String::new(),
            function: "f".into(),
            predicate: format!("p{id}"),
            time_ms: 0,
            witness: None,
        }
    }

    #[test]
    fn matrix_counts_relations_across_criteria() {
        let rows = vec![
            row(1, "unknown", "MCC", None, &[]),
            row(2, "subsumed", "CC", None, &[1]),
            row(3, "duplicate", "CC", Some(1), &[]),
            row(4, "infeasible", "CC", None, &[]),
        ];
        let a = audit(&rows);
        assert_eq!(a.criteria_order, vec!["CC", "MCC"]);
        assert_eq!(a.matrix, vec![vec![0, 2], vec![0, 0]]);
        assert_eq!(a.sufficient_total, 1);
        assert_eq!(a.top_subsumers[0].label, 1);
        assert_eq!(a.largest_duplicate_classes[0].members, vec![1, 3]);
        let d = dot(&rows, true);
        assert!(d.contains("l1 = l3") && d.contains("l1 -> l2;") && d.contains("color=red"));
    }
}
