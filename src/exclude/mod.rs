//! Proofs into other tools' coverage reports: the branches of a gcov-based report (gcovr's
//! JSON, an lcov tracefile) that covprune proved infeasible, excluded.
//!
//! Only infeasibility travels (a duplicate or subsumed objective is feasible), and only claims
//! that hold whoever calls the function: the ledger's view must be every caller's (not
//! `--entry main`), and the function external or its file's statics opened.
//!
//! gcc's branches carry no columns, so they are matched by counting, line by line. A line is
//! taken only when it holds exactly one decision, on that line alone and not from a macro, whose
//! condition-coverage labels are its atoms' outcomes (2 per atom), and gcc reports 2 edges per
//! atom there: each edge is then one atom outcome. An outcome proved infeasible never runs, so
//! its edge is among the line's untaken ones; when as many outcomes are proved as edges are
//! untaken, the untaken edges are exactly the proved outcomes, and they are excluded. When
//! fewer are proved, which untaken edge is which cannot be told: the line is left as it was,
//! and said so. When more are proved than edges are untaken, a proved-infeasible outcome ran:
//! a soundness alarm.

pub mod gcov;
pub mod llvm;
pub mod mutation;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use covprune_encoders::{Criterion, Objective};
use serde::Serialize;

use crate::prune::Status;
use crate::report::ledger::Ledger;
use crate::report::sites::SitesRecord;

/// One annotated file's proofs, as the mapping needs them.
pub struct FileProofs {
    /// The original file, absolute.
    pub original: PathBuf,
    /// Per line of the original: what covprune knows of its decisions.
    pub lines: BTreeMap<usize, LineProofs>,
    /// Per condition as clang sees it (start and end, line and column, the end's column one
    /// past the last byte, as llvm-cov writes them): its atom's proved outcomes.
    pub conditions: BTreeMap<Region, ConditionProofs>,
    /// Proved outcomes of atoms with no span in the file (a macro's expansion): (line, label).
    pub without_span: Vec<(usize, u64)>,
    /// Mutants that replace an operator written in the file, proved equivalent (their weak
    /// mutation label infeasible) for every caller.
    pub equivalent: Vec<Equivalent>,
    /// Labels of the file whose claims a branch report can receive (condition outcomes) and
    /// a mutation report can (mutants of an operator written in the file).
    pub outcome_labels: usize,
    pub mutant_labels: usize,
}

/// A mutant proved equivalent, as mutation tools name it.
#[derive(Clone, Debug)]
pub struct Equivalent {
    pub label: u64,
    pub tag: String,
    pub predicate: String,
    pub site: crate::report::sites::MutantSite,
}

/// A span of the original: (line, column) of its start and one past its end.
pub type Region = ((usize, usize), (usize, usize));

/// An atom as one of clang's conditions, and the outcomes covprune proved infeasible for it.
#[derive(Clone, Debug, Default)]
pub struct ConditionProofs {
    /// The condition is the atom's negation: its true side is the atom's false outcome.
    pub negated: bool,
    /// Outcomes proved infeasible for every caller: (label id, predicate, the atom's value).
    pub proved: Vec<(u64, String, bool)>,
    /// Two of covprune's atoms claim this span: it is not matched.
    pub ambiguous: bool,
}

/// A line's decisions and the outcomes proved infeasible there.
#[derive(Clone, Debug, Default)]
pub struct LineProofs {
    /// Decisions whose atoms lie on this line alone: (index, atoms).
    pub decisions: BTreeSet<(usize, usize)>,
    /// Why the line cannot be matched whatever the report says (a decision from a macro, one
    /// spread over several lines).
    pub unmatchable: Option<String>,
    /// Condition-coverage labels of the line's decisions (one per atom outcome).
    pub outcomes: usize,
    /// Those proved infeasible for every caller: (label id, predicate).
    pub proved: Vec<(u64, String)>,
    /// Proved infeasible, but not for every caller (a static function's labels decided from
    /// its file's own calls, or runs from `main` only).
    pub proved_in_view_only: usize,
}

/// Labels that stand for one atomic condition's outcome, as a branch report's are.
fn is_outcome_tag(tag: &str) -> bool {
    Criterion::of_tag(tag).is_some_and(|c| c.objective() == Objective::ConditionOutcome)
}

impl FileProofs {
    /// Joins a ledger and the sites record of the same annotated file.
    pub fn of(ledger: &Ledger, sites: &SitesRecord) -> FileProofs {
        let status: BTreeMap<u64, (&Status, &str)> = ledger
            .labels
            .iter()
            .map(|l| (l.id, (&l.status, l.predicate.as_str())))
            .collect();
        let every_caller = |function: Option<usize>| {
            !ledger.view.entry_main
                && (ledger.view.open_statics
                    || function
                        .and_then(|f| sites.functions.get(f))
                        .is_some_and(|f| f.external))
        };
        let mut lines: BTreeMap<usize, LineProofs> = BTreeMap::new();
        let mut conditions: BTreeMap<Region, ConditionProofs> = BTreeMap::new();
        // The decision and atom of each condition, to tell a second claimant apart.
        let mut owners: BTreeMap<Region, (usize, usize)> = BTreeMap::new();
        let mut without_span = Vec::new();
        // A label's predicate when the ledger proves it infeasible, and when that proof holds
        // for every caller.
        let infeasible = |id: u64| match status.get(&id) {
            Some((Status::Infeasible, predicate)) => Some(*predicate),
            _ => None,
        };
        let proof = |l: &crate::report::sites::LabelSite| {
            infeasible(l.id).filter(|_| every_caller(l.function))
        };
        let equivalent = sites
            .labels
            .iter()
            .filter_map(|l| {
                Some(Equivalent {
                    label: l.id,
                    tag: l.tag.clone(),
                    predicate: proof(l)?.to_string(),
                    site: l.mutant.clone()?,
                })
            })
            .collect();
        for l in &sites.labels {
            let Some(d) = &l.decision else { continue };
            let proved = proof(l);
            if let (Some((atom, value)), true) = (l.outcome, is_outcome_tag(&l.tag)) {
                if proved.is_some() && d.conditions.get(atom).is_none() {
                    without_span.push((l.line, l.id));
                }
                if let Some(c) = d.conditions.get(atom) {
                    let region = (c.start, (c.end.0, c.end.1 + 1));
                    let entry = conditions.entry(region).or_default();
                    entry.negated = c.negated;
                    if *owners.entry(region).or_insert((d.index, atom)) != (d.index, atom) {
                        entry.ambiguous = true;
                    }
                    if let Some(predicate) = proved {
                        entry.proved.push((l.id, predicate.to_string(), value));
                    }
                }
            }
            // The line its outcomes are counted at (and reported, when it cannot be matched).
            let line = match (d.start, d.end) {
                (Some(s), Some(e)) if s.0 == e.0 => s.0,
                (Some(s), Some(e)) => {
                    for line in s.0..=e.0 {
                        lines.entry(line).or_default().unmatchable =
                            Some("a decision spread over several lines".into());
                    }
                    s.0
                }
                _ => {
                    lines.entry(l.line).or_default().unmatchable =
                        Some("a decision of a macro's expansion".into());
                    l.line
                }
            };
            let lp = lines.entry(line).or_default();
            lp.decisions.insert((d.index, d.atoms));
            if !is_outcome_tag(&l.tag) {
                continue;
            }
            lp.outcomes += 1;
            match (proved, infeasible(l.id)) {
                (Some(predicate), _) => lp.proved.push((l.id, predicate.to_string())),
                (None, Some(_)) => lp.proved_in_view_only += 1,
                (None, None) => {}
            }
        }
        FileProofs {
            original: sites.original.clone(),
            lines,
            conditions,
            without_span,
            equivalent,
            outcome_labels: sites
                .labels
                .iter()
                .filter(|l| l.outcome.is_some() && is_outcome_tag(&l.tag))
                .count(),
            mutant_labels: sites.labels.iter().filter(|l| l.mutant.is_some()).count(),
        }
    }
}

/// What the mapping decided for one line of a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineVerdict {
    /// Exclude these edges (indices into the line's edges, in the report's order).
    Exclude(Vec<usize>),
    /// Leave the line as it is, for this reason.
    Leave(String),
    /// A proved-infeasible outcome ran.
    Alarm(String),
}

/// The verdict for a line of the report with `taken[i]` telling whether edge `i` ran.
pub fn match_line(proofs: &LineProofs, taken: &[bool]) -> LineVerdict {
    if proofs.proved.is_empty() {
        return LineVerdict::Leave(String::new());
    }
    if let Some(why) = &proofs.unmatchable {
        return LineVerdict::Leave(why.clone());
    }
    if proofs.decisions.len() != 1 {
        return LineVerdict::Leave(format!("{} decisions on the line", proofs.decisions.len()));
    }
    let atoms: usize = proofs.decisions.iter().map(|(_, a)| a).sum();
    if proofs.outcomes != 2 * atoms {
        return LineVerdict::Leave(format!(
            "{} condition labels for {atoms} atoms (annotate with CC)",
            proofs.outcomes
        ));
    }
    if taken.len() != 2 * atoms {
        return LineVerdict::Leave(format!("{} branch edges for {atoms} atoms", taken.len()));
    }
    let untaken: Vec<usize> = (0..taken.len()).filter(|i| !taken[*i]).collect();
    let proved = proofs.proved.len();
    match proved.cmp(&untaken.len()) {
        std::cmp::Ordering::Equal => LineVerdict::Exclude(untaken),
        std::cmp::Ordering::Less => LineVerdict::Leave(format!(
            "{} proved infeasible, {} untaken: which is which cannot be told",
            crate::console::count(proved as u64, "outcome"),
            crate::console::count(untaken.len() as u64, "edge")
        )),
        std::cmp::Ordering::Greater => LineVerdict::Alarm(format!(
            "{} proved infeasible but only {} untaken: a proved outcome ran",
            crate::console::count(proved as u64, "outcome"),
            crate::console::count(untaken.len() as u64, "edge")
        )),
    }
}

/// One excluded branch edge and why (the sidecar's rows).
#[derive(Clone, Debug, Serialize)]
pub struct Excluded {
    pub file: String,
    pub line: usize,
    /// What the report counts: a branch (one side of a condition, or one gcov edge) or an
    /// MC/DC condition.
    pub item: Item,
    /// Line and column span (llvm-cov's; gcov's branches have none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<Region>,
    /// The report's key of the edge: gcovr's `branchno`, lcov's `block,branch`.
    pub key: String,
    /// The labels proved infeasible on the line (their ids, criterion and predicates).
    pub labels: Vec<u64>,
    pub criterion: String,
    pub predicates: Vec<String>,
    pub proof: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Item {
    Branch,
    McdcCondition,
    Mutant,
}

/// What every exclusion rests on.
pub const PROOF: &str = "infeasible: no run reaches the label with its predicate true (covprune prune, step 1, for every caller)";

/// A line with proofs that was left as it was.
#[derive(Clone, Debug, Serialize)]
pub struct Left {
    pub file: String,
    pub line: usize,
    pub proved: usize,
    pub why: String,
}

/// A soundness alarm: a line where a proved-infeasible outcome ran.
#[derive(Clone, Debug, Serialize)]
pub struct Alarm {
    pub file: String,
    pub line: usize,
    pub labels: Vec<u64>,
    pub what: String,
}

/// Branch counts of a report, before and after the exclusions.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct BranchTotals {
    pub total: usize,
    pub covered: usize,
}

impl BranchTotals {
    pub fn percent(&self) -> Option<f64> {
        (self.total > 0).then(|| 100.0 * self.covered as f64 / self.total as f64)
    }
}

/// The outcome of mapping proofs onto a report.
#[derive(Debug, Default, Serialize)]
pub struct Mapping {
    pub excluded: Vec<Excluded>,
    pub left: Vec<Left>,
    pub alarms: Vec<Alarm>,
    /// Report files no annotated file matched (their branches are left as they are), by the
    /// report's names, sorted.
    pub unmatched_files: Vec<String>,
    /// Report files an annotated file matched.
    pub matched_files: usize,
    pub raw: BranchTotals,
    pub cleaned: BranchTotals,
    /// MC/DC conditions (llvm-cov's export), before and after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcdc_raw: Option<BranchTotals>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcdc_cleaned: Option<BranchTotals>,
    /// Mutants of a mutation report: valid ones (`total`) and those detected (`covered`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mutants_raw: Option<BranchTotals>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mutants_cleaned: Option<BranchTotals>,
    /// The items the written report still counts that no test covers (branch sides, gcov
    /// edges, mutants not detected), in file and line order.
    pub uncovered: Vec<Uncovered>,
}

/// An item the written report counts and no test covers.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Uncovered {
    /// The file as the report names it.
    pub file: String,
    pub line: usize,
    pub item: Item,
    /// The report's key of the item (as [`Excluded::key`]).
    pub key: String,
}

/// One kind of item a report counts, before and after the exclusions.
#[derive(Clone, Copy, Debug)]
pub struct Counted {
    pub item: Item,
    pub raw: BranchTotals,
    pub cleaned: BranchTotals,
    /// The items of that kind excluded.
    pub excluded: usize,
}

impl Mapping {
    /// What the written report counts: its mutants (a mutation report) or its branches, then
    /// its MC/DC conditions when it has them.
    pub fn counted(&self) -> Vec<Counted> {
        let of = |item, raw: &BranchTotals, cleaned: &BranchTotals| Counted {
            item,
            raw: *raw,
            cleaned: *cleaned,
            excluded: self.excluded.iter().filter(|e| e.item == item).count(),
        };
        let mut out = vec![match (&self.mutants_raw, &self.mutants_cleaned) {
            (Some(raw), Some(cleaned)) => of(Item::Mutant, raw, cleaned),
            _ => of(Item::Branch, &self.raw, &self.cleaned),
        }];
        if let (Some(raw), Some(cleaned)) = (&self.mcdc_raw, &self.mcdc_cleaned) {
            out.push(of(Item::McdcCondition, raw, cleaned));
        }
        out
    }

    /// Once every file is mapped: the raw totals (the cleaned ones and the excluded edges,
    /// all untaken) and the rows in file and line order, whatever order the report lists
    /// them in.
    pub fn finish(&mut self) {
        let branches = self
            .excluded
            .iter()
            .filter(|e| e.item == Item::Branch)
            .count();
        self.raw = BranchTotals {
            total: self.cleaned.total + branches,
            covered: self.cleaned.covered,
        };
        let count = |item| self.excluded.iter().filter(|e| e.item == item).count();
        if let Some(cleaned) = self.mcdc_cleaned {
            self.mcdc_raw = Some(BranchTotals {
                total: cleaned.total + count(Item::McdcCondition),
                covered: cleaned.covered,
            });
        }
        if let Some(cleaned) = self.mutants_cleaned {
            self.mutants_raw = Some(BranchTotals {
                total: cleaned.total + count(Item::Mutant),
                covered: cleaned.covered,
            });
        }
        self.excluded.sort_by(|a, b| {
            (&a.file, a.line, a.item, a.span, &a.key)
                .cmp(&(&b.file, b.line, b.item, b.span, &b.key))
        });
        self.left
            .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        self.alarms
            .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        self.uncovered.sort();
    }
}

/// The proofs of the file a report names (`name` as the report writes it: absolute, or
/// relative to where the report was made): the one whose original path ends with it.
pub fn proofs_for<'a>(all: &'a [FileProofs], name: &str) -> Option<&'a FileProofs> {
    let name = Path::new(name);
    let found: Vec<&FileProofs> = all
        .iter()
        .filter(|p| {
            if name.is_absolute() {
                name.canonicalize().unwrap_or_else(|_| name.to_path_buf()) == p.original
            } else {
                p.original.ends_with(name)
            }
        })
        .collect();
    // Two files with the same relative name: which one cannot be told.
    (found.len() == 1).then(|| found[0])
}

/// Records, as left, the lines of `proofs` with proved outcomes that the report's lines
/// `visited` did not hold (no branch there, or its code elsewhere).
pub fn note_unvisited(mapping: &mut Mapping, proofs: &FileProofs, visited: &BTreeSet<usize>) {
    for (line, lp) in &proofs.lines {
        if lp.proved.is_empty() || visited.contains(line) {
            continue;
        }
        mapping.left.push(Left {
            file: proofs.original.display().to_string(),
            line: *line,
            proved: lp.proved.len(),
            why: lp
                .unmatchable
                .clone()
                .unwrap_or_else(|| "the report shows no branch on this line".into()),
        });
    }
}

/// Applies the verdict of one line: records exclusions, refusals and alarms; returns the edges
/// to exclude.
pub fn apply_line(
    mapping: &mut Mapping,
    proofs: &FileProofs,
    line: usize,
    keys: &[String],
    taken: &[bool],
) -> Vec<usize> {
    let Some(lp) = proofs.lines.get(&line) else {
        return Vec::new();
    };
    let file = proofs.original.display().to_string();
    match match_line(lp, taken) {
        LineVerdict::Exclude(edges) => {
            let labels: Vec<u64> = lp.proved.iter().map(|(id, _)| *id).collect();
            let predicates: Vec<String> = lp.proved.iter().map(|(_, p)| p.clone()).collect();
            for &e in &edges {
                mapping.excluded.push(Excluded {
                    file: file.clone(),
                    line,
                    item: Item::Branch,
                    span: None,
                    key: keys[e].clone(),
                    labels: labels.clone(),
                    criterion: "CC".into(),
                    predicates: predicates.clone(),
                    proof: PROOF.into(),
                });
            }
            edges
        }
        LineVerdict::Leave(why) => {
            if !why.is_empty() {
                mapping.left.push(Left {
                    file,
                    line,
                    proved: lp.proved.len(),
                    why,
                });
            }
            Vec::new()
        }
        LineVerdict::Alarm(what) => {
            mapping.alarms.push(Alarm {
                file,
                line,
                labels: lp.proved.iter().map(|(id, _)| *id).collect(),
                what,
            });
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(atoms: usize, outcomes: usize, proved: usize) -> LineProofs {
        LineProofs {
            decisions: BTreeSet::from([(0, atoms)]),
            unmatchable: None,
            outcomes,
            proved: (0..proved as u64).map(|i| (i, format!("p{i}"))).collect(),
            proved_in_view_only: 0,
        }
    }

    #[test]
    fn untaken_edges_are_excluded_only_when_they_are_exactly_the_proved_outcomes() {
        let two_atoms = line(2, 4, 1);
        assert_eq!(
            match_line(&two_atoms, &[true, true, true, false]),
            LineVerdict::Exclude(vec![3])
        );
        assert!(matches!(
            match_line(&two_atoms, &[true, false, true, false]),
            LineVerdict::Leave(_)
        ));
        assert!(matches!(
            match_line(&two_atoms, &[true, true, true, true]),
            LineVerdict::Alarm(_)
        ));
        // Other edge counts, several decisions, macros: left alone.
        assert!(matches!(
            match_line(&two_atoms, &[true, false]),
            LineVerdict::Leave(_)
        ));
        let mut two = line(1, 2, 1);
        two.decisions.insert((1, 1));
        assert!(matches!(
            match_line(&two, &[true, false]),
            LineVerdict::Leave(_)
        ));
        let mut mac = line(1, 2, 1);
        mac.unmatchable = Some("macro".into());
        assert!(matches!(
            match_line(&mac, &[true, false]),
            LineVerdict::Leave(_)
        ));
        assert_eq!(
            match_line(&line(1, 2, 0), &[true, false]),
            LineVerdict::Leave(String::new())
        );
    }

    #[test]
    fn only_claims_that_hold_for_every_caller_travel() {
        use crate::report::ledger::{Binding, LedgerLabel, View};
        use crate::report::sites::{ConditionSpan, DecisionSpan, FunctionSite, LabelSite};
        let sites = SitesRecord {
            schema: crate::report::sites::SCHEMA.into(),
            original: PathBuf::from("/p/f.c"),
            original_digest: String::new(),
            functions: vec![
                FunctionSite {
                    name: "open".into(),
                    external: true,
                },
                FunctionSite {
                    name: "helper".into(),
                    external: false,
                },
            ],
            labels: (1..=4)
                .map(|id| LabelSite {
                    id,
                    tag: "CC".into(),
                    line: if id <= 2 { 3 } else { 9 },
                    function: Some(usize::from(id > 2)),
                    decision: Some(DecisionSpan {
                        index: usize::from(id > 2),
                        atoms: 1,
                        start: Some((if id <= 2 { 3 } else { 9 }, 5)),
                        end: Some((if id <= 2 { 3 } else { 9 }, 9)),
                        conditions: vec![ConditionSpan {
                            start: (if id <= 2 { 3 } else { 9 }, 5),
                            end: (if id <= 2 { 3 } else { 9 }, 9),
                            negated: false,
                        }],
                    }),
                    outcome: Some((0, id % 2 == 1)),
                    mutant: None,
                })
                .collect(),
            compiled_out: Vec::new(),
        };
        let ledger = |view: View| Ledger {
            schema: String::new(),
            file: "f_labels.c".into(),
            binding: Binding {
                source: String::new(),
                labels: String::new(),
            },
            hyperlabels: Vec::new(),
            view,
            labels: [1, 3]
                .into_iter()
                .map(|id| LedgerLabel {
                    id,
                    status: Status::Infeasible,
                    step: Some(1),
                    tag: "CC".into(),
                    loc: String::new(),
                    function: String::new(),
                    predicate: format!("p{id}"),
                    time_ms: 0,
                    witness: None,
                })
                .collect(),
        };
        let proved = |view: View| {
            let p = FileProofs::of(&ledger(view), &sites);
            // The same claims by line (gcov) and by condition span (clang).
            let by_span = |line| p.conditions[&((line, 5), (line, 10))].proved.len();
            assert_eq!(p.lines[&3].proved.len(), by_span(3));
            assert_eq!(p.lines[&9].proved.len(), by_span(9));
            (p.lines[&3].proved.len(), p.lines[&9].proved.len())
        };
        // The static helper's claim rests on the file's own calls.
        assert_eq!(proved(View::default()), (1, 0));
        assert_eq!(
            proved(View {
                open_statics: true,
                ..View::default()
            }),
            (1, 1)
        );
        assert_eq!(
            proved(View {
                entry_main: true,
                ..View::default()
            }),
            (0, 0)
        );
    }
}
