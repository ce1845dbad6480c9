//! Whether a test suite covers a hyperlabel, as HTOL's coverage tool decides it: each run
//! records the atomic labels it covered with every distinct environment of their bindings;
//! a disjunct of the normal form is covered when each of its labels is covered by some run
//! (runs may differ: conjunction relates runs) with environments whose union satisfies every
//! guard; a sequence is covered by a run that completed it. The search tries the combinations
//! of distinct environments (each with the first run that bound it), and stops at the first
//! that fits.

use std::collections::{BTreeMap, BTreeSet};

use super::{Disjunct, Env, Guard, Hyperlabel, Item};

/// What one run covered: per covered label, the distinct environments of its bindings (one
/// empty environment for a label without bindings).
#[derive(Clone, Debug, Default)]
pub struct RunCover {
    pub name: String,
    pub labels: BTreeMap<u64, BTreeSet<Bound>>,
    /// The sequences the run completed.
    pub sequences: BTreeSet<u64>,
}

/// A hyperlabel's coverage by a suite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HyperCover {
    /// Covered, by these runs (those of the first combination found).
    Covered(Vec<String>),
    NotCovered,
    /// Not decided, and why (too many combinations).
    Unmeasured(String),
}

/// A binding environment as a run recorded it.
pub(super) type Bound = Vec<(String, i64)>;

/// At most this many combinations of environments are tried per disjunct.
const MAX_COMBINATIONS: u64 = 1_000_000;

pub fn cover(h: &Hyperlabel, runs: &[RunCover]) -> HyperCover {
    let mut unmeasured = None;
    for d in h.dnf() {
        match cover_disjunct(&d, runs) {
            HyperCover::Covered(tests) => return HyperCover::Covered(tests),
            HyperCover::Unmeasured(why) => unmeasured = Some(why),
            HyperCover::NotCovered => {}
        }
    }
    unmeasured.map_or(HyperCover::NotCovered, HyperCover::Unmeasured)
}

fn cover_disjunct(d: &Disjunct, runs: &[RunCover]) -> HyperCover {
    // Per item, its candidates: (run, environment).
    let mut candidates: Vec<Vec<(usize, &Bound)>> = Vec::new();
    let nothing_bound: Bound = Vec::new();
    for item in &d.items {
        // Each distinct environment once, with the first run that bound it: the guard reads
        // only values, so other runs with the same ones add no combination. A sequence binds
        // nothing: its first run that completed it.
        let mut first: BTreeMap<&Bound, usize> = BTreeMap::new();
        for (k, r) in runs.iter().enumerate() {
            match item {
                Item::Label(id) => {
                    for e in r.labels.get(id).into_iter().flatten() {
                        first.entry(e).or_insert(k);
                    }
                }
                Item::Sequence(id) => {
                    if r.sequences.contains(id) {
                        first.entry(&nothing_bound).or_insert(k);
                    }
                }
            }
        }
        let c: Vec<_> = first.into_iter().map(|(e, k)| (k, e)).collect();
        if c.is_empty() {
            return HyperCover::NotCovered;
        }
        candidates.push(c);
    }
    let total = candidates
        .iter()
        .try_fold(1u64, |acc, c| acc.checked_mul(c.len() as u64));
    if total.is_none_or(|t| t > MAX_COMBINATIONS) {
        return HyperCover::Unmeasured(format!(
            "more than {MAX_COMBINATIONS} combinations of bound values"
        ));
    }
    let choices: Vec<Vec<&Bound>> = candidates
        .iter()
        .map(|c| c.iter().map(|(_, e)| *e).collect())
        .collect();
    match first_fit(&choices, &d.guards) {
        Some(pick) => {
            let tests: BTreeSet<String> = candidates
                .iter()
                .zip(&pick)
                .map(|(c, &i)| runs[c[i].0].name.clone())
                .collect();
            HyperCover::Covered(tests.into_iter().collect())
        }
        None => HyperCover::NotCovered,
    }
}

/// The first combination of environments, one per item (the last item fastest), that agree
/// on every name two of them bind and whose union satisfies every guard: its index in each
/// item's choices.
pub(super) fn first_fit(choices: &[Vec<&Bound>], guards: &[Guard]) -> Option<Vec<usize>> {
    if choices.iter().any(Vec::is_empty) {
        return None;
    }
    let mut pick = vec![0usize; choices.len()];
    loop {
        if let Some(env) = merged(choices, &pick) {
            if guards.iter().all(|g| g.holds(&env)) {
                return Some(pick);
            }
        }
        // The next combination, the last item fastest.
        let mut k = choices.len();
        loop {
            if k == 0 {
                return None;
            }
            k -= 1;
            pick[k] += 1;
            if pick[k] < choices[k].len() {
                break;
            }
            pick[k] = 0;
        }
    }
}

/// The union of the picked environments; None when two bind one name to different values.
fn merged(choices: &[Vec<&Bound>], pick: &[usize]) -> Option<Env> {
    let mut env = Env::new();
    for (c, &i) in choices.iter().zip(pick) {
        for (name, value) in c[i] {
            if *env.entry(name.clone()).or_insert(*value) != *value {
                return None;
            }
        }
    }
    Some(env)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, labels: &[(u64, &[(&str, i64)])]) -> RunCover {
        let mut r = RunCover {
            name: name.into(),
            ..RunCover::default()
        };
        for (id, env) in labels {
            r.labels
                .entry(*id)
                .or_default()
                .insert(env.iter().map(|(n, v)| (n.to_string(), *v)).collect());
        }
        r
    }

    #[test]
    fn conjunctions_take_their_labels_from_any_runs_under_the_guard() {
        let cacc = &super::super::parse_file("1) <l1.l2|;pa!=pb;>,").unwrap()[0];
        // Both labels covered, but with the same decision value: not covered.
        let same = [
            run("t1", &[(1, &[("pa", 1)])]),
            run("t2", &[(2, &[("pb", 1)])]),
        ];
        assert_eq!(cover(cacc, &same), HyperCover::NotCovered);
        // Another run gives label 2 with the other value: covered by t1 and t3.
        let mut more = same.to_vec();
        more.push(run("t3", &[(2, &[("pb", 0)])]));
        assert_eq!(
            cover(cacc, &more),
            HyperCover::Covered(vec!["t1".into(), "t3".into()])
        );
        // One run may cover both, with two environments of its own.
        let one = [run("t", &[(1, &[("pa", 0)]), (2, &[("pb", 1)])])];
        assert_eq!(cover(cacc, &one), HyperCover::Covered(vec!["t".into()]));
        // A disjunction of unguarded labels: any one covered.
        let fcc = &super::super::parse_file("2) <l3+l7|; ;>,").unwrap()[0];
        assert_eq!(
            cover(fcc, &[run("u", &[(7, &[])])]),
            HyperCover::Covered(vec!["u".into()])
        );
        assert_eq!(cover(fcc, &[run("u", &[(8, &[])])]), HyperCover::NotCovered);
        // Thousands of runs binding the same values: one candidate each, not a product of runs.
        let mut many: Vec<RunCover> = (0..3000)
            .map(|k| run(&format!("r{k}"), &[(1, &[("pa", 1)]), (2, &[("pb", 1)])]))
            .collect();
        many.push(run("last", &[(2, &[("pb", 0)])]));
        assert_eq!(
            cover(cacc, &many),
            HyperCover::Covered(vec!["last".into(), "r0".into()])
        );
        let seq = &super::super::parse_file("3) <s1.s2|;;>,").unwrap()[0];
        assert_eq!(cover(seq, &one), HyperCover::NotCovered);
        let mut s1 = run("s", &[]);
        s1.sequences.insert(1);
        let mut s2 = run("u", &[]);
        s2.sequences.insert(2);
        assert_eq!(
            cover(seq, std::slice::from_ref(&s1)),
            HyperCover::NotCovered
        );
        assert_eq!(
            cover(seq, &[s1, s2]),
            HyperCover::Covered(vec!["s".into(), "u".into()])
        );
    }
}
