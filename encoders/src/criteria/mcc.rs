//! MCC, multiple condition coverage: every combination of truth values of the atoms of a
//! decision.
//!
//! Labels: 2^n per decision with n atoms, each the conjunction of every atom or its negation,
//! right-nested, positive first (LAnnotate's order). Decisions with more than
//! `Limits::mcc_max_atoms` atoms get none (the count would explode).
//! Example: `if (a && b)` gives `a && (b)`, `a && (!(b))`, `!(a) && (b)`, `!(a) && (!(b))`.
//! Reference: LAnnotate `gen_labels_ncc` with n = 0.

use crate::{Decision, LabelSpec, Limits};
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "MCC",
    description: "multiple condition coverage: every combination of atom values (2^n per decision)",
    labels: Labels::Decision { labels, whole: false, hyperlabels: None },
    hyperlabels: false,
    objective: Objective::Other,
};

pub fn labels(d: &Decision, limits: &Limits) -> Vec<LabelSpec> {
    let atoms = d.cond.atoms();
    if atoms.is_empty() || atoms.len() > limits.mcc_max_atoms {
        return Vec::new();
    }
    crate::combinations(&atoms)
        .into_iter()
        .map(|p| LabelSpec::new(p, DEFINITION.name))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::Limits;

    #[test]
    fn mcc_on_three_atoms_yields_eight_labels() {
        let l = super::labels(&crate::tests::abc(), &Limits::default());
        assert_eq!(l.len(), 8);
        assert_eq!(l[0].predicate, "(a <= 0) && ((b <= 0) && ((c <= 0)))");
        assert_eq!(l[7].predicate, "!(a <= 0) && (!(b <= 0) && (!(c <= 0)))");
    }

    #[test]
    fn too_many_atoms_give_no_labels() {
        let limits = Limits {
            mcc_max_atoms: 2,
            ..Limits::default()
        };
        assert!(super::labels(&crate::tests::abc(), &limits).is_empty());
    }
}
