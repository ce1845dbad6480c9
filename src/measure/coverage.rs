//! Coverage from a suite's runs: raw and cleaned per criterion, the labels left to cover, the
//! claims each run contradicts (the soundness alarm), and the Mutation Testing Elements report.

use super::*;

/// A run that contradicts a claim of the ledger: a soundness bug of the pruning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Alarm {
    pub label: u64,
    pub claim: String,
    pub test: String,
    pub what: String,
}

/// Checks every claim against the runs. Infeasible claims are checked on every run; relations
/// (which assume runs are not interrupted between co-reached labels) on runs that ended.
pub fn alarms(claims: &BTreeMap<u64, Claim>, runs: &[TestRun]) -> Vec<Alarm> {
    let mut out = Vec::new();
    for (&id, claim) in claims {
        for r in runs {
            let cov = |x: u64| r.covered.contains(&x);
            match claim {
                Claim::Infeasible if cov(id) => out.push(Alarm {
                    label: id,
                    claim: "infeasible".into(),
                    test: r.name.clone(),
                    what: format!("test {} covers l{id}", r.name),
                }),
                Claim::Duplicate(of) if r.completed() && cov(id) != cov(*of) => out.push(Alarm {
                    label: id,
                    claim: format!("duplicate of {of}"),
                    test: r.name.clone(),
                    what: format!(
                        "test {} covers l{} but not l{}",
                        r.name,
                        if cov(id) { id } else { *of },
                        if cov(id) { *of } else { id }
                    ),
                }),
                Claim::Subsumed(by) if r.completed() && !cov(id) => {
                    if let Some(b) = by.iter().find(|b| cov(**b)) {
                        out.push(Alarm {
                            label: id,
                            claim: format!("subsumed by {b}"),
                            test: r.name.clone(),
                            what: format!("test {} covers l{b} but not l{id}", r.name),
                        });
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// Coverage of one criterion, with the counts of [`crate::report::counts`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Coverage {
    pub criterion: String,
    pub labels: usize,
    pub covered: usize,
    /// Infeasible, duplicate or subsumed within the criterion: what `prune` counts.
    pub pruned: usize,
    pub infeasible: usize,
    /// Pruned as subsumed, but no test covers the label nor any of its subsumers: kept
    /// (uncovered) in the cleaned ratio, since a subsumer no test covers may be infeasible.
    pub pending: usize,
    /// Kept though duplicate or subsumed through labels of other criteria: redundant only
    /// when those labels are objectives too.
    pub across: usize,
    /// The objectives left: labels - pruned + pending.
    pub kept: usize,
    /// Kept labels some test covers.
    pub kept_covered: usize,
}

impl Coverage {
    fn ratio(a: usize, b: usize) -> Option<f64> {
        (b > 0).then(|| 100.0 * a as f64 / b as f64)
    }
    /// covered / all labels, in %.
    pub fn raw(&self) -> Option<f64> {
        Coverage::ratio(self.covered, self.labels)
    }
    /// covered kept labels / kept labels, in %.
    pub fn cleaned(&self) -> Option<f64> {
        Coverage::ratio(self.kept_covered, self.kept)
    }
    /// Adds the counts of `other` (the same criterion, in another file).
    pub fn add(&mut self, other: &Coverage) {
        self.labels += other.labels;
        self.covered += other.covered;
        self.pruned += other.pruned;
        self.infeasible += other.infeasible;
        self.pending += other.pending;
        self.across += other.across;
        self.kept += other.kept;
        self.kept_covered += other.kept_covered;
    }
    /// covered / labels not proven infeasible, in %: what the pruning says is reachable.
    pub fn upper_bound(&self) -> Option<f64> {
        Coverage::ratio(self.covered, self.labels - self.infeasible)
    }
}

/// Per criterion (a tag's first word, sorted) and overall (`all`, last), with the classes of
/// [`crate::report::counts`]: within a criterion only relations to labels of the same
/// criterion prune (a CC label subsumed by an MCC label is still a CC objective); in `all`
/// every relation does. A pruned label that is pending stays an objective.
pub fn coverage(
    labels: &[(u64, String)],
    claims: &BTreeMap<u64, Claim>,
    covered: &BTreeSet<u64>,
) -> Vec<Coverage> {
    use crate::report::counts::{self, Class, Fact};
    let facts: Vec<Fact> = labels
        .iter()
        .map(|(id, tag)| Fact::of_claim(*id, tag, claims.get(id)))
        .collect();
    let within = counts::classify(&facts);
    let together = counts::classify_together(&facts);
    let mut per: BTreeMap<String, Coverage> = BTreeMap::new();
    let mut all = Coverage {
        criterion: "all".into(),
        ..Coverage::default()
    };
    let add = |c: &mut Coverage, class: Class, is_cov: bool, pending: bool| {
        c.labels += 1;
        c.covered += usize::from(is_cov);
        c.infeasible += usize::from(class == Class::Infeasible);
        c.across += usize::from(class == Class::Across);
        c.pruned += usize::from(class.pruned());
        c.pending += usize::from(pending && class == Class::Subsumed);
        if stays(class, pending) {
            c.kept += 1;
            c.kept_covered += usize::from(is_cov);
        }
    };
    for (id, tag) in labels {
        let crit = counts::criterion_of(tag).to_string();
        let is_cov = covered.contains(id);
        let pending = pending_subsumed(*id, claims, covered).is_some();
        let c = per.entry(crit.clone()).or_insert_with(|| Coverage {
            criterion: crit,
            ..Coverage::default()
        });
        add(c, within[id], is_cov, pending);
        add(&mut all, together[id], is_cov, pending);
    }
    let mut out: Vec<Coverage> = per.into_values().collect();
    out.push(all);
    out
}

/// Whether a label of `class` stays an objective: not pruned within its criterion, or pruned
/// as subsumed but `pending` (see [`pending_subsumed`]).
pub(super) fn stays(class: crate::report::counts::Class, pending: bool) -> bool {
    !class.pruned() || (pending && class == crate::report::counts::Class::Subsumed)
}

/// The labels (id, tag) that stay objectives of their own criteria once the runs covered
/// `covered`: the kept labels of [`coverage`]'s rows.
pub fn objectives<'a>(
    labels: impl IntoIterator<Item = (u64, &'a str)>,
    claims: &'a BTreeMap<u64, Claim>,
    covered: &BTreeSet<u64>,
) -> BTreeSet<u64> {
    use crate::report::counts::{classify, Fact};
    let facts: Vec<Fact> = labels
        .into_iter()
        .map(|(id, tag)| Fact::of_claim(id, tag, claims.get(&id)))
        .collect();
    classify(&facts)
        .into_iter()
        .filter(|(id, class)| stays(*class, pending_subsumed(*id, claims, covered).is_some()))
        .map(|(id, _)| id)
        .collect()
}

/// A subsumed label that neither the suite nor any of its subsumers' covering tests reach:
/// its subsumers, else `None`. Its claim is sound, but a subsumer no test covers may be
/// infeasible without a proof, and then nothing left to cover implies the label.
pub fn pending_subsumed<'c>(
    id: u64,
    claims: &'c BTreeMap<u64, Claim>,
    covered: &BTreeSet<u64>,
) -> Option<&'c [u64]> {
    match claims.get(&id) {
        Some(Claim::Subsumed(by))
            if !covered.contains(&id) && !by.iter().any(|b| covered.contains(b)) =>
        {
            Some(by)
        }
        _ => None,
    }
}

/// The coverage table as text; columns named as in the README's glossary.
pub fn coverage_text(rows: &[Coverage]) -> String {
    let pct = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}%"));
    let line = |cells: [&str; 11]| {
        format!(
            "{:<9} {:>7} {:>8} {:>7} {:>7} {:>8} {:>8} {:>6} {:>13} {:>8} {:>7}\n",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            cells[6],
            cells[7],
            cells[8],
            cells[9],
            cells[10]
        )
    };
    let mut out = line([
        "criterion",
        "labels",
        "covered",
        "raw",
        "pruned",
        "pending",
        "+across",
        "kept",
        "kept covered",
        "cleaned",
        "bound",
    ]);
    for r in rows {
        out.push_str(&line([
            &r.criterion,
            &r.labels.to_string(),
            &r.covered.to_string(),
            &pct(r.raw()),
            &r.pruned.to_string(),
            &r.pending.to_string(),
            &r.across.to_string(),
            &r.kept.to_string(),
            &r.kept_covered.to_string(),
            &pct(r.cleaned()),
            &pct(r.upper_bound()),
        ]));
    }
    out.push_str("kept = labels - pruned + pending; cleaned = kept covered / kept; bound = covered / labels not infeasible\n");
    out
}

/// A Mutation Testing Elements report (schema version 1) of the WM and WM-S labels: a covered
/// label is a killed mutant, a reached one survived, an unreached one has no coverage, and a
/// pruned one (within its criterion, not pending) is ignored with the reason. Its mutation
/// score, killed / (killed + survived + no coverage), is then the kept labels covered over the
/// kept labels of those criteria: `measure`'s cleaned coverage of WM and WM-S together.
pub fn elements_report(
    labels: &[(u64, String, String)],
    claims: &BTreeMap<u64, Claim>,
    runs: &[TestRun],
    sources: &BTreeMap<String, String>,
) -> serde_json::Value {
    let covered: BTreeSet<u64> = runs
        .iter()
        .flat_map(|r| r.covered.iter().copied())
        .collect();
    let kept = objectives(
        labels.iter().map(|(id, tag, _)| (*id, tag.as_str())),
        claims,
        &covered,
    );
    let mut files: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for (id, tag, origin) in labels {
        if Criterion::of_tag(tag).map(Criterion::objective) != Some(Objective::Mutant) {
            continue;
        }
        let mutator = tag.split_whitespace().nth(1).unwrap_or("WM");
        let (file, line) = origin
            .rsplit_once(':')
            .map_or((origin.as_str(), 1), |(f, l)| (f, l.parse().unwrap_or(1)));
        let killers: Vec<&str> = runs
            .iter()
            .filter(|r| r.covered.contains(id))
            .map(|r| r.name.as_str())
            .collect();
        let reached = runs.iter().any(|r| r.reached.contains(id));
        // Ignored: no objective any more, so that the score is the cleaned coverage of the
        // mutants kept.
        let (status, reason) = match claims.get(id).filter(|_| !kept.contains(id)) {
            Some(Claim::Infeasible) => (
                "Ignored",
                Some("equivalent mutant (proved infeasible)".to_string()),
            ),
            Some(Claim::Duplicate(of)) => (
                "Ignored",
                Some(format!("redundant: duplicate of mutant {of}")),
            ),
            Some(Claim::Subsumed(by)) => (
                "Ignored",
                Some(format!(
                    "redundant: subsumed by mutant {}",
                    by.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
                )),
            ),
            None if !killers.is_empty() => ("Killed", None),
            None if reached => ("Survived", None),
            None => ("NoCoverage", None),
        };
        let mut m = serde_json::json!({
            "id": id.to_string(),
            "mutatorName": mutator,
            "location": {"start": {"line": line, "column": 1}, "end": {"line": line, "column": 2}},
            "status": status,
        });
        if let Some(r) = reason {
            m["statusReason"] = serde_json::json!(r);
        }
        if !killers.is_empty() {
            m["killedBy"] = serde_json::json!(killers);
        }
        files.entry(file.to_string()).or_default().push(m);
    }
    let files: serde_json::Map<String, serde_json::Value> = files
        .into_iter()
        .map(|(f, mutants)| {
            let source = sources.get(&f).cloned().unwrap_or_default();
            (
                f,
                serde_json::json!({"language": "c", "source": source, "mutants": mutants}),
            )
        })
        .collect();
    serde_json::json!({
        "schemaVersion": "1",
        "thresholds": {"high": 80, "low": 60},
        "files": files,
    })
}
