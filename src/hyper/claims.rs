//! What `prune` proves of hyperlabels, from its labels' claims and the values they can bind.
//!
//! - **Uncoverable**: every disjunct of the normal form is dead. A disjunct is dead when one
//!   of its labels or sequences is infeasible, or when no combination of the values its labels can bind
//!   (each label on its own: they may come from different runs) satisfies its guards.
//! - Implication, within one criterion: a disjunct `d1` implies `d2` when both are the same
//!   (same items, same guards), or when `d2` has no guard and each of its labels is implied
//!   by a label of `d1` (the same label, a duplicate of it, or one it is proved to subsume: the
//!   runs that cover `d1` cover `d2`). A hyperlabel `h1` implies `h2` when each live disjunct
//!   of `h1` implies some disjunct of `h2`.
//! - **Duplicate** of the lowest id of its class of hyperlabels implying one another;
//!   **subsumed** when implied by hyperlabels of other classes (the lowest ids of their classes
//!   are named), none of them uncoverable.

use std::collections::{BTreeMap, BTreeSet};

use super::coverage::{first_fit, Bound};
use super::values::Values;
use super::{Disjunct, Hyperlabel, Item};
use crate::report::ledger::Claim;
pub use crate::report::ledger::HyperClaim;

/// What the prover says beyond the labels' claims: the values labels can bind, and the
/// sequences proved infeasible.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub values: BTreeMap<u64, Values>,
    pub infeasible_sequences: BTreeSet<u64>,
}

/// Why a disjunct is dead, if it is.
fn dead(d: &Disjunct, claims: &BTreeMap<u64, Claim>, facts: &Facts) -> Option<String> {
    if let Some(item) = d.items.iter().find(|i| match i {
        Item::Label(id) => matches!(claims.get(id), Some(Claim::Infeasible)),
        Item::Sequence(id) => facts.infeasible_sequences.contains(id),
    }) {
        return Some(match item {
            Item::Label(id) => format!("l{id} is infeasible"),
            Item::Sequence(id) => format!("s{id} is infeasible"),
        });
    }
    if d.guards.is_empty() {
        return None;
    }
    // Per label, its possible environments.
    let mut choices: Vec<Vec<Bound>> = Vec::new();
    let mut bound: BTreeSet<&String> = BTreeSet::new();
    for item in &d.items {
        let Item::Label(id) = item else { return None };
        match facts.values.get(id)? {
            Values::Free => {}
            Values::Unknown => return None,
            Values::Tuples(names, tuples) => {
                bound.extend(names);
                choices.push(
                    tuples
                        .iter()
                        .map(|t| names.iter().cloned().zip(t.iter().copied()).collect())
                        .collect(),
                );
            }
        }
    }
    let mut read = Vec::new();
    for g in &d.guards {
        g.names(&mut read);
    }
    if read.iter().any(|n| !bound.contains(n)) {
        return None;
    }
    if choices.iter().map(Vec::len).product::<usize>() > 1 << 16 {
        return None;
    }
    let choices: Vec<Vec<&Bound>> = choices.iter().map(|c| c.iter().collect()).collect();
    if first_fit(&choices, &d.guards).is_some() {
        return None;
    }
    let labels: Vec<String> = d
        .items
        .iter()
        .map(|i| match i {
            Item::Label(id) => format!("l{id}"),
            Item::Sequence(id) => format!("s{id}"),
        })
        .collect();
    Some(format!(
        "no values {} can bind satisfy its guard",
        labels.join(", ")
    ))
}

/// Why `h` is uncoverable (each disjunct's reason), if it is.
pub fn uncoverable(h: &Hyperlabel, claims: &BTreeMap<u64, Claim>, facts: &Facts) -> Option<String> {
    let reasons: Vec<Option<String>> = h.dnf().iter().map(|d| dead(d, claims, facts)).collect();
    all_dead(&reasons)
}

/// Every disjunct's reasons joined, when every disjunct has one (and there is one).
fn all_dead(reasons: &[Option<String>]) -> Option<String> {
    if reasons.is_empty() {
        return None;
    }
    let mut why: Vec<&str> = reasons
        .iter()
        .map(Option::as_deref)
        .collect::<Option<_>>()?;
    why.dedup();
    Some(why.join("; "))
}

/// The representative of a label's duplicate class.
fn class_of(l: u64, claims: &BTreeMap<u64, Claim>) -> u64 {
    match claims.get(&l) {
        Some(Claim::Duplicate(of)) => *of,
        _ => l,
    }
}

/// Label `x`'s coverage implies label `y`'s in the same run.
fn label_implies(x: u64, y: u64, claims: &BTreeMap<u64, Claim>) -> bool {
    let class = |l| class_of(l, claims);
    class(x) == class(y)
        || matches!(claims.get(&y), Some(Claim::Subsumed(by)) if by.iter().any(|b| class(*b) == class(x)))
}

fn disjunct_implies(d1: &Disjunct, d2: &Disjunct, claims: &BTreeMap<u64, Claim>) -> bool {
    if d1.items == d2.items && d1.guards == d2.guards {
        return true;
    }
    d2.guards.is_empty()
        && d2.items.iter().all(|y| {
            d1.items.iter().any(|x| match (x, y) {
                (Item::Label(a), Item::Label(b)) => label_implies(*a, *b, claims),
                (a, b) => a == b,
            })
        })
}

/// Every hyperlabel's claim, in the order given. `criterion`: each hyperlabel's criterion
/// (implications are sought within one).
pub fn decide(
    hyperlabels: &[Hyperlabel],
    criterion: &[String],
    claims: &BTreeMap<u64, Claim>,
    facts: &Facts,
) -> Vec<HyperClaim> {
    // Every disjunct of each hyperlabel, with why it is dead if it is.
    let dnfs: Vec<Vec<Disjunct>> = hyperlabels.iter().map(Hyperlabel::dnf).collect();
    let reasons: Vec<Vec<Option<String>>> = dnfs
        .iter()
        .map(|dnf| dnf.iter().map(|d| dead(d, claims, facts)).collect())
        .collect();
    let mut out: Vec<HyperClaim> = reasons
        .iter()
        .map(|r| match all_dead(r) {
            Some(why) => HyperClaim::Uncoverable { why },
            None => HyperClaim::Unknown,
        })
        .collect();
    let live: Vec<Vec<&Disjunct>> = dnfs
        .iter()
        .zip(&reasons)
        .map(|(dnf, r)| {
            dnf.iter()
                .zip(r)
                .filter(|(_, why)| why.is_none())
                .map(|(d, _)| d)
                .collect()
        })
        .collect();
    let alive: Vec<usize> = (0..hyperlabels.len())
        .filter(|&k| out[k] == HyperClaim::Unknown)
        .collect();
    // Candidates to imply a hyperlabel: those holding a label that implies one of its labels.
    let mut by_label: BTreeMap<u64, BTreeSet<usize>> = BTreeMap::new();
    for &k in &alive {
        for d in &live[k] {
            for i in &d.items {
                if let Item::Label(id) = i {
                    by_label.entry(*id).or_default().insert(k);
                }
            }
        }
    }
    let implies = |a: usize, b: usize| {
        criterion[a] == criterion[b]
            && live[a]
                .iter()
                .all(|d1| dnfs[b].iter().any(|d2| disjunct_implies(d1, d2, claims)))
    };
    // The labels that can imply `y`: its class and its subsumers' classes.
    let mut members: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (id, c) in claims {
        if let Claim::Duplicate(of) = c {
            members.entry(*of).or_default().push(*id);
        }
    }
    let implying = |y: u64| -> BTreeSet<u64> {
        let mut roots = vec![class_of(y, claims)];
        if let Some(Claim::Subsumed(by)) = claims.get(&y) {
            roots.extend(by.iter().map(|b| class_of(*b, claims)));
        }
        let mut out = BTreeSet::new();
        for r in roots {
            out.insert(r);
            out.extend(members.get(&r).into_iter().flatten());
        }
        out
    };
    let mut implied_by: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for &b in &alive {
        let mut candidates: BTreeSet<usize> = BTreeSet::new();
        for d in &dnfs[b] {
            for i in &d.items {
                if let Item::Label(y) = i {
                    for x in implying(*y) {
                        candidates.extend(by_label.get(&x).into_iter().flatten());
                    }
                }
            }
        }
        for a in candidates {
            if a != b && implies(a, b) {
                implied_by.entry(b).or_default().insert(a);
            }
        }
    }
    // Classes of hyperlabels implying one another, and the classes other classes imply.
    let ids: Vec<u64> = alive.iter().map(|&k| k as u64).collect();
    let edges: Vec<(u64, u64)> = implied_by
        .iter()
        .flat_map(|(b, by)| by.iter().map(move |a| (*a as u64, *b as u64)))
        .collect();
    let (rep_of, subsumed) = crate::prune::implication_classes(&ids, &edges);
    for (k, rep) in rep_of {
        if k != rep {
            out[k as usize] = HyperClaim::Duplicate {
                of: hyperlabels[rep as usize].id,
            };
        }
    }
    for (k, by) in subsumed {
        let mut by: Vec<u64> = by.iter().map(|&a| hyperlabels[a as usize].id).collect();
        by.sort_unstable();
        out[k as usize] = HyperClaim::Subsumed { by };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_claims_carry_to_hyperlabels_of_one_criterion() {
        let hls = super::super::parse_file(
            "1) <l1|; ;>,\n2) <l2|; ;>,\n3) <l3+l5|; ;>,\n4) <l4|; ;>,\n5) <l6.l7|;pa!=pb;>,\n6) <l6.l8|;pa!=pb;>,\n7) <l9|; ;>,\n",
        )
        .unwrap();
        let claims = BTreeMap::from([
            (2, Claim::Duplicate(1)),
            (4, Claim::Subsumed(vec![3])),
            (8, Claim::Duplicate(7)),
            (9, Claim::Infeasible),
        ]);
        let criteria = vec!["AUC".to_string(); hls.len()];
        let got = decide(&hls, &criteria, &claims, &Facts::default());
        assert_eq!(got[0], HyperClaim::Unknown);
        assert_eq!(got[1], HyperClaim::Duplicate { of: 1 });
        // <l3+l5> is not implied by <l4>: covering l5 alone does not cover l4.
        assert_eq!(got[2], HyperClaim::Unknown);
        assert_eq!(got[3], HyperClaim::Unknown);
        // Guards bind values: label duplicates say nothing of them.
        assert_eq!(got[4], HyperClaim::Unknown);
        assert_eq!(got[5], HyperClaim::Unknown);
        assert!(matches!(got[6], HyperClaim::Uncoverable { .. }));
        // <l3> alone implies <l4>.
        let hls = super::super::parse_file("1) <l3|; ;>,\n2) <l4|; ;>,\n").unwrap();
        let got = decide(&hls, &criteria[..2], &claims, &Facts::default());
        assert_eq!(got[1], HyperClaim::Subsumed { by: vec![1] });
        // Across criteria nothing is claimed.
        let got = decide(
            &hls,
            &["ADC".to_string(), "AUC".to_string()],
            &claims,
            &Facts::default(),
        );
        assert_eq!(got[1], HyperClaim::Unknown);
    }

    #[test]
    fn a_guard_no_combination_of_bound_values_satisfies_kills_its_disjunct() {
        let h = &super::super::parse_file("1) <l1.l2|;cA1 == cB1;>,\n").unwrap()[0];
        let tuples = |names: &[&str], ts: &[&[i64]]| {
            Values::Tuples(
                names.iter().map(|n| n.to_string()).collect(),
                ts.iter().map(|t| t.to_vec()).collect(),
            )
        };
        let mut facts = Facts {
            values: BTreeMap::from([
                (1, tuples(&["cA1"], &[&[1]])),
                (2, tuples(&["cB1"], &[&[0]])),
            ]),
            ..Facts::default()
        };
        let none = BTreeMap::new();
        assert!(uncoverable(h, &none, &facts).is_some());
        facts.values.insert(2, tuples(&["cB1"], &[&[0], &[1]]));
        assert!(uncoverable(h, &none, &facts).is_none());
        // A label whose values were not enumerated decides nothing.
        facts.values.insert(2, Values::Unknown);
        assert!(uncoverable(h, &none, &facts).is_none());
        // A sequence proved infeasible kills its disjunct.
        let s = &super::super::parse_file("2) <s4.l1|; ;>,\n").unwrap()[0];
        assert!(uncoverable(s, &none, &facts).is_none());
        facts.infeasible_sequences.insert(4);
        assert_eq!(
            uncoverable(s, &none, &facts).as_deref(),
            Some("s4 is infeasible")
        );
    }
}
