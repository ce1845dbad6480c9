//! STMT, statement (basic block) coverage: every block of statements is executed.
//!
//! Labels: `pc_label(1, id, "STMT");` at function entry, before each `goto` and `return`, at
//! the head of both branches of every `if` (an `if` without `else` gets `else { label }`), at
//! the head of every loop body, on both outcomes of a loop condition, and after every C label,
//! `case` and `default`.
//! Example: `if (x) y = 1;` becomes `if (x) { pc_label(1, 1, "STMT"); y = 1; } else {
//! pc_label(1, 2, "STMT"); }`.
//! Reference: LAnnotate `l_statement.ml` (LAnnotate 0.2's output in
//! `tests/fixtures/lannotate/sample_STMT.c`).

use crate::LabelSpec;
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "STMT",
    description: "statement coverage: each basic block executed (entry, branches, loop bodies, labels, before return/goto)",
    labels: Labels::Statement(labels),
    hyperlabels: false,
    objective: Objective::Block,
};

pub fn labels() -> Vec<LabelSpec> {
    vec![LabelSpec::new("1".into(), DEFINITION.name)]
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_true_label() {
        assert_eq!(super::labels()[0].predicate, "1");
    }
}
