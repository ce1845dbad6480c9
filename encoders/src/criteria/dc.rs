//! DC, decision coverage: every decision is both true and false.
//!
//! Labels: two per decision, `D` and `!(D)`, placed before the decision is evaluated.
//! Example: `if (a && b)` gives `pc_label((a) && (b), 1, "DC"); pc_label(!((a) && (b)), 2, "DC");`.
//! Reference: LAnnotate `gen_labels_dc`.

use crate::{not, Decision, LabelSpec};
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "DC",
    description: "decision coverage: each decision both true and false (2 per decision)",
    labels: Labels::Decision { labels: |d, _| labels(d), whole: true, hyperlabels: None },
    hyperlabels: false,
    objective: Objective::DecisionOutcome,
};

pub fn labels(d: &Decision) -> Vec<LabelSpec> {
    let text = d.cond.to_c();
    vec![
        LabelSpec::new(text.clone(), DEFINITION.name),
        LabelSpec::new(not(&text), DEFINITION.name),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_labels_per_decision() {
        let l = super::labels(&crate::tests::abc());
        assert_eq!(l.len(), 2);
        assert_eq!(l[1].predicate, format!("!({})", l[0].predicate));
    }
}
