//! CC, condition coverage: every atomic condition of every decision is both true and false.
//!
//! Labels: two per atom, `c` and `!(c)`, placed before the decision and read on each arrival,
//! as in LAnnotate; an atom that could trap where the program does not evaluate it reads
//! `(g) && (c)` and `(g) && !(c)`, g being its short-circuit prefix.
//! Example: `if (a <= 0 || b <= 0)` gives `pc_label(a <= 0, 1, "CC"); pc_label(!(a <= 0), 2, "CC");
//! pc_label(b <= 0, 3, "CC"); pc_label(!(b <= 0), 4, "CC");`.
//! Reference: LAnnotate `gen_labels_ncc` with n = 1.

use crate::{Decision, LabelSpec};
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "CC",
    description: "condition coverage: each atomic condition both true and false (2 per atom)",
    labels: Labels::Decision { labels: |d, _| labels(d), whole: false, hyperlabels: None },
    hyperlabels: false,
    objective: Objective::ConditionOutcome,
};

pub fn labels(d: &Decision) -> Vec<LabelSpec> {
    d.cond
        .atoms()
        .into_iter()
        .enumerate()
        .flat_map(|(i, a)| {
            [
                LabelSpec::new(a.to_string(), DEFINITION.name).of_outcome(i, true),
                LabelSpec::new(d.negation(i, a), DEFINITION.name).of_outcome(i, false),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_labels_per_atom() {
        let l = super::labels(&crate::tests::abc());
        assert_eq!(l.len(), 6);
        assert_eq!(l[0].predicate, "a <= 0");
        assert_eq!(l[1].predicate, "!(a <= 0)");
        let outcomes: Vec<_> = l
            .iter()
            .map(|s| s.outcome.map(|o| (o.atom, o.value)))
            .collect();
        assert_eq!(
            outcomes,
            [
                (0, true),
                (0, false),
                (1, true),
                (1, false),
                (2, true),
                (2, false)
            ]
            .map(Some)
        );
    }
}
