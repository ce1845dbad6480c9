//! GICC, general inactive clause coverage: each atom is both true and false in states where it
//! does not determine the decision, with the decision both true and false.
//!
//! Labels: four per atom `c`: `c && inactive && D`, `c && inactive && !D`, `!c && inactive &&
//! D`, `!c && inactive && !D`, where inactive is `D[c:=1] <=> D[c:=0]`. LAnnotate builds both
//! cofactors with `c := 1` (`gen_labels_gicc_for`), which makes inactive always true; covprune
//! uses the definition. Labels whose predicate folds to false are written as `0` (they are
//! infeasible by construction).
//! Reference: Ammann and Offutt, "Introduction to Software Testing", inactive clause coverage.

use crate::{determines, Bool, Decision, LabelSpec};
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "GICC",
    description: "general inactive clause coverage: each atom true and false while it does not determine the decision (4 per atom)",
    labels: Labels::Decision { labels: |d, _| labels(d), whole: false, hyperlabels: None },
    hyperlabels: false,
    objective: Objective::Other,
};

pub fn labels(d: &Decision) -> Vec<LabelSpec> {
    let whole = Bool::Text(d.cond.to_c());
    let mut out = Vec::new();
    for (i, a) in d.cond.atoms().iter().enumerate() {
        let inactive = determines(d, i).not();
        let atom = Bool::Text(a.to_string());
        for lit in [atom.clone(), Bool::Text(d.negation(i, a))] {
            for dec in [whole.clone(), whole.not()] {
                out.push(LabelSpec::new(lit.and(&inactive).and(&dec).text(), DEFINITION.name));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn four_per_atom_and_a_single_atom_is_never_inactive() {
        let l = super::labels(&crate::tests::abc());
        assert_eq!(l.len(), 12);
        let one = crate::Decision::new(crate::Cond::Atom("x".into()));
        let l = super::labels(&one);
        assert!(l.iter().all(|l| l.predicate == "0"));
    }
}
