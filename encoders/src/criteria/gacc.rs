//! GACC, general active clause coverage (a form of MC/DC): each atom is both true and false
//! in a state where it determines the decision.
//!
//! Labels: two per atom `c`, `c && D[c:=1] xor D[c:=0]` and `!c && D[c:=1] xor D[c:=0]`, the
//! cofactors simplified by constant folding as LAnnotate does, so that `(a || b) || c` gives
//! `(a) && (!((b) || (c)))`. A one-atom decision gives the CC labels.
//! Reference: LAnnotate `gen_labels_gacc_for`;
//! Ammann and Offutt, "Introduction to Software Testing", active clause coverage.

use crate::{determines, Bool, Decision, LabelSpec};
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "GACC",
    description: "general active clause coverage (MC/DC-like): each atom true and false while it determines the decision",
    labels: Labels::Decision { labels: |d, _| labels(d), whole: false, hyperlabels: None },
    hyperlabels: false,
    objective: Objective::Other,
};

pub fn labels(d: &Decision) -> Vec<LabelSpec> {
    active_pairs(d)
        .into_iter()
        .flat_map(|(pos, neg)| [LabelSpec::new(pos, DEFINITION.name), LabelSpec::new(neg, DEFINITION.name)])
        .collect()
}

/// For each atom: (atom true and active, atom false and active).
pub(crate) fn active_pairs(d: &Decision) -> Vec<(String, String)> {
    d.cond
        .atoms()
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let active = determines(d, i);
            let atom = Bool::Text(a.to_string());
            let negated = Bool::Text(d.negation(i, a));
            (atom.and(&active).text(), negated.and(&active).text())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn disjunction_needs_the_others_false() {
        let l = super::labels(&crate::tests::abc());
        assert_eq!(l.len(), 6);
        assert_eq!(l[0].predicate, "(a <= 0) && (!((b <= 0) || (c <= 0)))");
        assert_eq!(l[1].predicate, "(!(a <= 0)) && (!((b <= 0) || (c <= 0)))");
    }

    #[test]
    fn conjunction_needs_the_other_true() {
        let l = super::labels(&crate::tests::and2());
        assert_eq!(l[0].predicate, "(a + b <= c) && (b + c <= a)");
        assert_eq!(l[3].predicate, "(!(b + c <= a)) && (a + b <= c)");
    }
}
