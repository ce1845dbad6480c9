//! FC, function coverage: every function is entered at least once.
//!
//! Labels: one per function, `pc_label(1, id, "FC");` as the first statement of its body.
//! Example: `int f(int x) { pc_label(1, 1, "FC"); return x; }`.
//! Reference: LAnnotate `l_function.ml`; Bardin et al., "Sound and quasi-complete detection of
//! infeasible test requirements" (ICST 2015) for labels.

use crate::LabelSpec;
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "FC",
    description: "function coverage: each function is called (1 label per function)",
    labels: Labels::Function(labels),
    hyperlabels: false,
    objective: Objective::Other,
};

pub fn labels() -> Vec<LabelSpec> {
    vec![LabelSpec::new("1".into(), DEFINITION.name)]
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_label_per_function() {
        assert_eq!(super::labels().len(), 1);
    }
}
