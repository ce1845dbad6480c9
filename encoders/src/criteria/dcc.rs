//! DCC, decision/condition coverage: DC and CC together, under one tag.
//!
//! Labels: the two DC labels of the decision, then the two CC labels of each atom, all tagged
//! `DCC`. Example: `if (a || b)` gives 2 + 4 = 6 labels.
//! Reference: Ammann and Offutt, "Introduction to Software Testing", decision/condition coverage.

use super::{cc, dc};
use crate::{Decision, LabelSpec};
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "DCC",
    description: "decision/condition coverage: DC and CC labels together",
    labels: Labels::Decision { labels: |d, _| labels(d), whole: false, hyperlabels: None },
    hyperlabels: false,
    objective: Objective::Outcome,
};

pub fn labels(d: &Decision) -> Vec<LabelSpec> {
    dc::labels(d)
        .into_iter()
        .chain(cc::labels(d))
        .map(|mut l| {
            l.tag = DEFINITION.name.into();
            l
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn dc_then_cc() {
        let l = super::labels(&crate::tests::abc());
        assert_eq!(l.len(), 8);
        assert!(l.iter().all(|x| x.tag == "DCC"));
    }
}
