//! Shares of a big function. A function with many labels has its own questions split into
//! shares that workers answer apart, each in an encoding and a solver of its own: a share
//! takes some of the function's co-reached groups (step 1 of their labels, steps 2 and 3
//! within them) and some of its labels in no group (step 1), as a greedy balance of their
//! weights decides. A model only serves the group it was found in, and steps 2 and 3 read
//! step 1 of their own group only, so splitting moves no question from one share to another;
//! each share gets the part of the function's budget its weight is of the function's.
//!
//! How many shares a function has depends on the function alone (its labels), never on the
//! number of workers: the answers are the same whatever `--jobs` is. Once every share is in,
//! the function is finished ([`Part::Finish`]): its callees' copies in their calling contexts
//! and the witnesses are asked as for a function proved whole.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::labels::FunctionLabels;
use super::{GroupResult, Occurrence, RunStats, MAX_STEP3_GROUP};
use crate::ir::Function;

/// A function is split into one share per this many labels (rounded up).
pub const SHARE_LABELS: usize = 150;
/// At most this many shares per function: each encodes the whole function.
pub const MAX_SHARES: usize = 16;

/// How many shares function `f`'s questions are split into (1: proved whole).
pub fn shares_of(f: &Function) -> usize {
    f.labels()
        .count()
        .div_ceil(SHARE_LABELS)
        .clamp(1, MAX_SHARES)
}

/// What a worker is handed of a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    /// Every question of the function, and its result.
    Whole,
    /// Share k of the function's own questions.
    Share(usize),
    /// The rest, once every share is in: copies in calling contexts, witnesses, the result.
    Finish,
}

impl Part {
    /// How the supervisor names the part to a worker, after the function's index.
    pub fn word(self) -> String {
        match self {
            Part::Whole => String::new(),
            Part::Share(k) => format!(" s{k}"),
            Part::Finish => " f".to_string(),
        }
    }

    /// Reads [`Part::word`] back.
    pub fn parse(word: Option<&str>) -> Option<Part> {
        match word {
            None => Some(Part::Whole),
            Some("f") => Some(Part::Finish),
            Some(w) => w.strip_prefix('s')?.parse().ok().map(Part::Share),
        }
    }
}

/// The parts function `f` is handed out in, before its finish.
pub fn parts_of(f: &Function) -> Vec<Part> {
    match shares_of(f) {
        1 => vec![Part::Whole],
        n => (0..n).map(Part::Share).collect(),
    }
}

/// What one share of a function answered: what journals and shard files hold of it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShareResult {
    pub function: String,
    pub share: usize,
    /// Each of its label occurrences, with its index among the function's own.
    pub occurrences: Vec<(usize, Occurrence)>,
    /// Labels of called-once callees proven infeasible in their only context.
    pub context_infeasible: BTreeSet<u64>,
    /// Each of its groups, with its index among the function's groups.
    pub groups: Vec<(usize, GroupResult)>,
    pub stats: RunStats,
    /// Its encoding outlasted the budget: nothing asked.
    pub unencoded: bool,
    /// The prover died on the function in the run that proved the share: nothing asked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub crashed: bool,
}

/// What one share asks: its labels (indices into the function's own) and its groups
/// (indices into the function's groups), both ascending, and its part of the weight.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Assignment {
    pub(super) labels: Vec<usize>,
    pub(super) groups: Vec<usize>,
    pub(super) weight: u64,
    pub(super) total: u64,
}

/// The questions a group of `n` members costs: step 1 and step 2 of each, and step 3 of each
/// ordered pair when the group is compared pairwise.
fn group_weight(n: usize) -> u64 {
    let pairs = if (2..=MAX_STEP3_GROUP).contains(&n) {
        n * (n - 1)
    } else {
        0
    };
    (2 * n + pairs) as u64
}

/// Share `share` of `shares` of a function's questions: its groups and the labels in no
/// group, heaviest first, each to the share least loaded so far (the first on ties).
pub(super) fn assign(labels: &FunctionLabels, shares: usize, share: usize) -> Assignment {
    let shares = shares.max(1);
    enum Item {
        Group(usize),
        Label(usize),
    }
    let mut items: Vec<(u64, usize, Item)> = Vec::new();
    for (gi, g) in labels.groups.iter().enumerate() {
        items.push((group_weight(g.len()), items.len(), Item::Group(gi)));
    }
    for (k, l) in labels.own.iter().enumerate() {
        if !labels.group_of.contains_key(&l.id) {
            items.push((1, items.len(), Item::Label(k)));
        }
    }
    items.sort_by_key(|(w, order, _)| (std::cmp::Reverse(*w), *order));
    let mut own_of: std::collections::HashMap<u64, Vec<usize>> = Default::default();
    for (k, l) in labels.own.iter().enumerate() {
        own_of.entry(l.id).or_default().push(k);
    }
    let mut load = vec![0u64; shares];
    let mut out = Assignment {
        labels: Vec::new(),
        groups: Vec::new(),
        weight: 0,
        total: 0,
    };
    for (w, _, item) in items {
        let to = (0..shares).min_by_key(|&s| (load[s], s)).unwrap_or(0);
        load[to] += w;
        out.total += w;
        if to != share {
            continue;
        }
        out.weight += w;
        match item {
            Item::Group(gi) => {
                out.groups.push(gi);
                // The group's own labels: step 1 of each is asked with the group's models.
                out.labels.extend(
                    labels.groups[gi]
                        .iter()
                        .flat_map(|id| own_of.get(id).into_iter().flatten()),
                );
            }
            Item::Label(k) => out.labels.push(k),
        }
    }
    out.labels.sort_unstable();
    out.groups.sort_unstable();
    out
}

/// The answers of every share of a function.
pub(super) struct Combined {
    /// In the order of the function's own labels.
    pub(super) occurrences: Vec<Occurrence>,
    pub(super) context_infeasible: BTreeSet<u64>,
    /// In the order of the function's groups.
    pub(super) groups: Vec<GroupResult>,
    pub(super) stats: RunStats,
}

/// The shares' answers put together; `None` when a share was not encoded.
pub(super) fn combine_shares(mut shares: Vec<ShareResult>) -> Option<Combined> {
    if shares.iter().any(|s| s.unencoded) {
        return None;
    }
    shares.sort_by_key(|s| s.share);
    let mut occurrences = Vec::new();
    let mut groups = Vec::new();
    let mut context_infeasible = BTreeSet::new();
    let mut stats = RunStats::default();
    for s in shares {
        occurrences.extend(s.occurrences);
        groups.extend(s.groups);
        context_infeasible.extend(s.context_infeasible);
        stats.add(&s.stats);
    }
    occurrences.sort_by_key(|(k, _)| *k);
    groups.sort_by_key(|(gi, _)| *gi);
    Some(Combined {
        occurrences: occurrences.into_iter().map(|(_, o)| o).collect(),
        context_infeasible,
        groups: groups.into_iter().map(|(_, g)| g).collect(),
        stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_named_and_read_back() {
        for p in [Part::Whole, Part::Share(0), Part::Share(12), Part::Finish] {
            let w = p.word();
            assert_eq!(Part::parse(w.split_whitespace().next()), Some(p));
        }
        assert_eq!(Part::parse(Some("x3")), None);
    }

    #[test]
    fn group_weights_count_the_pairs_of_compared_groups_only() {
        assert_eq!(group_weight(1), 2);
        assert_eq!(group_weight(3), 6 + 6);
        assert_eq!(
            group_weight(MAX_STEP3_GROUP + 1),
            2 * (MAX_STEP3_GROUP as u64 + 1)
        );
    }
}
