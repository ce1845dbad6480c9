//! DC, decision coverage: every decision is both true and false.
//!
//! Labels: two per decision, `D` and `!(D)`, placed before the decision is evaluated.
//! Example: `if (a && b)` gives `pc_label((a) && (b), 1, "DC"); pc_label(!((a) && (b)), 2, "DC");`.
//! Reference: LAnnotate `gen_labels_dc`.

use crate::{not, Decision, LabelSpec};

pub const DESCRIPTION: &str =
    "decision coverage: each decision both true and false (2 per decision)";

pub fn labels(d: &Decision) -> Vec<LabelSpec> {
    let text = d.cond.to_c();
    vec![
        LabelSpec::new(text.clone(), "DC"),
        LabelSpec::new(not(&text), "DC"),
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
