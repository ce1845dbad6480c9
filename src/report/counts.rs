//! The one definition of each reported count, used by `prune`, `measure`, `audit` and their
//! reports (text, JSON, HTML, SARIF, Mutation Testing Elements).
//!
//! A label's criterion is its tag's first word. Within a criterion, a label is **pruned** when
//! it is infeasible, or a duplicate or subsumed through labels of that same criterion:
//! pruned = infeasible + duplicate (step 2) + duplicate (step 3) + subsumed. A duplicate class
//! keeps one label per criterion: its representative, or its lowest id of the criterion when
//! the representative belongs to another one. A label redundant only through labels of other
//! criteria is **+across**: still an objective of its criterion alone. The other labels are
//! **unknown**: nothing was proved of them. Over all criteria together (the `all` row), every
//! relation counts.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::prune::Status;

/// What one label is, for the counts of its own criterion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Infeasible,
    DuplicateStep2,
    DuplicateStep3,
    Subsumed,
    /// Duplicate or subsumed only through labels of other criteria.
    Across,
    /// Nothing proved: an objective.
    Unknown,
}

impl Class {
    /// Infeasible, duplicate or subsumed within the criterion.
    pub fn pruned(self) -> bool {
        !matches!(self, Class::Across | Class::Unknown)
    }
}

/// What was proved of one label.
#[derive(Clone, Copy, Debug)]
pub enum Proved<'a> {
    Infeasible,
    Duplicate(u64),
    Subsumed(&'a [u64]),
    Nothing,
}

/// The facts of one label the counts are made of.
#[derive(Clone, Copy, Debug)]
pub struct Fact<'a> {
    pub id: u64,
    pub tag: &'a str,
    pub proved: Proved<'a>,
    /// The step that proved it.
    pub step: Option<u8>,
}

impl<'a> Fact<'a> {
    /// A label's facts from its status (a verdict or a ledger's row).
    pub fn of_status(id: u64, tag: &'a str, status: &'a Status, step: Option<u8>) -> Fact<'a> {
        let proved = match status {
            Status::Infeasible => Proved::Infeasible,
            Status::Duplicate { of } => Proved::Duplicate(*of),
            Status::Subsumed { by } => Proved::Subsumed(by),
            Status::Unknown { .. } => Proved::Nothing,
        };
        Fact {
            id,
            tag,
            proved,
            step,
        }
    }

    /// A label's facts from a ledger's claim about it, if any (steps unknown).
    pub fn of_claim(
        id: u64,
        tag: &'a str,
        claim: Option<&'a crate::report::ledger::Claim>,
    ) -> Fact<'a> {
        use crate::report::ledger::Claim;
        let proved = match claim {
            Some(Claim::Infeasible) => Proved::Infeasible,
            Some(Claim::Duplicate(of)) => Proved::Duplicate(*of),
            Some(Claim::Subsumed(by)) => Proved::Subsumed(by),
            None => Proved::Nothing,
        };
        Fact {
            id,
            tag,
            proved,
            step: None,
        }
    }
}

/// A tag's criterion: its first word.
pub fn criterion_of(tag: &str) -> &str {
    tag.split_whitespace().next().unwrap_or("")
}

/// Each label's class within its own criterion.
pub fn classify(facts: &[Fact]) -> BTreeMap<u64, Class> {
    let crit_of: BTreeMap<u64, &str> = facts.iter().map(|f| (f.id, criterion_of(f.tag))).collect();
    // The member a duplicate class keeps in a criterion its representative is not of.
    let mut kept_in_class: BTreeMap<(&str, u64), u64> = BTreeMap::new();
    for f in facts {
        if let Proved::Duplicate(of) = f.proved {
            let c = crit_of[&f.id];
            if crit_of.get(&of) != Some(&c) {
                let e = kept_in_class.entry((c, of)).or_insert(f.id);
                *e = (*e).min(f.id);
            }
        }
    }
    facts
        .iter()
        .map(|f| {
            let c = crit_of[&f.id];
            let class = match f.proved {
                Proved::Infeasible => Class::Infeasible,
                Proved::Duplicate(of) => {
                    if crit_of.get(&of) == Some(&c) || kept_in_class.get(&(c, of)) != Some(&f.id) {
                        duplicate(f.step)
                    } else {
                        Class::Across
                    }
                }
                Proved::Subsumed(by) => {
                    if by.iter().any(|b| crit_of.get(b) == Some(&c)) {
                        Class::Subsumed
                    } else {
                        Class::Across
                    }
                }
                Proved::Nothing => Class::Unknown,
            };
            (f.id, class)
        })
        .collect()
}

/// Each label's class with every criterion taken as one set (every relation counts).
pub fn classify_together(facts: &[Fact]) -> BTreeMap<u64, Class> {
    facts
        .iter()
        .map(|f| {
            let class = match f.proved {
                Proved::Infeasible => Class::Infeasible,
                Proved::Duplicate(_) => duplicate(f.step),
                Proved::Subsumed(_) => Class::Subsumed,
                Proved::Nothing => Class::Unknown,
            };
            (f.id, class)
        })
        .collect()
}

fn duplicate(step: Option<u8>) -> Class {
    if step == Some(2) {
        Class::DuplicateStep2
    } else {
        Class::DuplicateStep3
    }
}

/// The labels pruned within their own criterion.
pub fn pruned_within(facts: &[Fact]) -> BTreeSet<u64> {
    classify(facts)
        .into_iter()
        .filter(|(_, c)| c.pruned())
        .map(|(id, _)| id)
        .collect()
}

/// The counts of a set of labels: a criterion, a function, or all of them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Counts {
    pub name: String,
    pub labels: usize,
    pub infeasible: usize,
    pub duplicate_step2: usize,
    pub duplicate_step3: usize,
    pub subsumed: usize,
    /// infeasible + duplicate_step2 + duplicate_step3 + subsumed.
    pub pruned: usize,
    /// Redundant only through labels of other criteria (0 in the `all` row).
    pub across: usize,
    /// Nothing proved.
    pub unknown: usize,
    /// pruned / labels, in %, to one decimal.
    pub pruned_percent: f64,
}

impl Counts {
    pub fn named(name: &str) -> Counts {
        Counts {
            name: name.to_string(),
            ..Counts::default()
        }
    }

    pub fn add(&mut self, class: Class) {
        self.labels += 1;
        match class {
            Class::Infeasible => self.infeasible += 1,
            Class::DuplicateStep2 => self.duplicate_step2 += 1,
            Class::DuplicateStep3 => self.duplicate_step3 += 1,
            Class::Subsumed => self.subsumed += 1,
            Class::Across => self.across += 1,
            Class::Unknown => self.unknown += 1,
        }
        self.pruned += usize::from(class.pruned());
        self.percent();
    }

    /// Adds the counts of `other` (the same set, in another file).
    pub fn sum(&mut self, other: &Counts) {
        self.labels += other.labels;
        self.infeasible += other.infeasible;
        self.duplicate_step2 += other.duplicate_step2;
        self.duplicate_step3 += other.duplicate_step3;
        self.subsumed += other.subsumed;
        self.pruned += other.pruned;
        self.across += other.across;
        self.unknown += other.unknown;
        self.percent();
    }

    fn percent(&mut self) {
        self.pruned_percent = if self.labels == 0 {
            0.0
        } else {
            (1000.0 * self.pruned as f64 / self.labels as f64).round() / 10.0
        };
    }
}

/// The `all` row: every criterion taken as one set.
pub fn together(facts: &[Fact]) -> Counts {
    let mut all = Counts::named("all");
    for class in classify_together(facts).into_values() {
        all.add(class);
    }
    all
}

/// One row per criterion (sorted by name), then `all` when there are several criteria.
pub fn per_criterion(facts: &[Fact]) -> Vec<Counts> {
    let classes = classify(facts);
    let mut per: BTreeMap<&str, Counts> = BTreeMap::new();
    for f in facts {
        let c = criterion_of(f.tag);
        per.entry(c)
            .or_insert_with(|| Counts::named(c))
            .add(classes[&f.id]);
    }
    let several = per.len() > 1;
    let mut out: Vec<Counts> = per.into_values().collect();
    if several {
        out.push(together(facts));
    }
    out
}

/// The text table of counts: one line per row, columns named as in the README's glossary;
/// the first column is headed `first` and `width` characters wide.
pub fn counts_text(rows: &[Counts], first: &str, width: usize) -> String {
    let mut out = format!(
        "{first:<width$} {:>7} {:>10} {:>8} {:>8} {:>8} {:>7} {:>6} {:>8} {:>8}\n",
        "labels",
        "infeasible",
        "dup(s2)",
        "dup(s3)",
        "subsumed",
        "pruned",
        "%",
        "+across",
        "unknown"
    );
    for r in rows {
        out.push_str(&format!(
            "{:<width$} {:>7} {:>10} {:>8} {:>8} {:>8} {:>7} {:>5.1}% {:>8} {:>8}\n",
            r.name,
            r.labels,
            r.infeasible,
            r.duplicate_step2,
            r.duplicate_step3,
            r.subsumed,
            r.pruned,
            r.pruned_percent,
            r.across,
            r.unknown
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact<'a>(id: u64, tag: &'a str, status: &'a Status, step: Option<u8>) -> Fact<'a> {
        Fact::of_status(id, tag, status, step)
    }

    #[test]
    fn pruned_is_the_sum_of_its_kinds_within_the_criterion() {
        let unknown = Status::Unknown {
            reason: crate::prune::Reason::Satisfiable,
        };
        let inf = Status::Infeasible;
        let dup_cc = Status::Duplicate { of: 1 };
        let dup_mcc = Status::Duplicate { of: 2 };
        let sub_cc = Status::Subsumed { by: vec![1] };
        let sub_mcc = Status::Subsumed { by: vec![2] };
        let facts = [
            fact(1, "CC", &unknown, None),
            fact(2, "MCC", &unknown, None),
            fact(3, "CC", &inf, Some(1)),
            fact(4, "CC", &dup_cc, Some(2)),
            fact(5, "CC", &sub_cc, Some(3)),
            fact(6, "CC", &sub_mcc, Some(3)),
            fact(7, "CC", &dup_mcc, Some(3)),
            fact(8, "CC", &dup_mcc, Some(3)),
        ];
        let rows = per_criterion(&facts);
        let cc = &rows[0];
        assert_eq!(cc.name, "CC");
        assert_eq!(
            (
                cc.infeasible,
                cc.duplicate_step2,
                cc.duplicate_step3,
                cc.subsumed
            ),
            (1, 1, 1, 1)
        );
        // 7 is the class's CC member kept (lowest id); 8 duplicates it within CC.
        assert_eq!((cc.pruned, cc.across, cc.unknown), (4, 2, 1));
        assert_eq!(
            cc.pruned,
            cc.infeasible + cc.duplicate_step2 + cc.duplicate_step3 + cc.subsumed
        );
        let all = rows.last().unwrap();
        assert_eq!((all.name.as_str(), all.pruned, all.across), ("all", 6, 0));
        assert_eq!(pruned_within(&facts), BTreeSet::from([3, 4, 5, 8]));
    }
}
