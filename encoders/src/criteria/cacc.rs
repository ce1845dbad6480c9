//! CACC, correlated active clause coverage: for each atom, two runs in which the atom
//! determines the decision, once true and once false, with the decision different in them.
//!
//! Labels: the two GACC labels of each atom, written `pc_label_bindings(pred, id, "CACC", H, 1,
//! "pa"|"pb", D)` so that each records the decision's truth value (0 or 1); one hyperlabel per atom,
//! `<lI.lJ|;pa!=pb;>`: both labels covered, with different decision values.
//! Reference: LAnnotate `gen_labels_cacc_for` (LAnnotate 0.2's output in
//! `tests/fixtures/lannotate/sample_CACC.c`).

use super::gacc::active_pairs;
use crate::{Binding, Decision, HyperSpec, LabelSpec};
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "CACC",
    description: "correlated active clause coverage (hyperlabels): each atom's two active values with different decision outcomes",
    labels: Labels::Decision { labels: |d, _| labels(d), whole: false, hyperlabels: Some(hyperlabels) },
    hyperlabels: true,
    objective: Objective::Other,
};

pub fn labels(d: &Decision) -> Vec<LabelSpec> {
    let whole = crate::truth_value(&d.cond.to_c());
    active_pairs(d)
        .into_iter()
        .enumerate()
        .flat_map(|(i, (pos, neg))| {
            [(pos, "pa"), (neg, "pb")].map(|(p, name)| LabelSpec {
                predicate: p,
                tag: DEFINITION.name.into(),
                binding: Some(Binding {
                    hyper: i,
                    vars: vec![(name.into(), whole.clone())],
                }),
                outcome: None,
                replacement: None,
            })
        })
        .collect()
}

pub fn hyperlabels(d: &Decision) -> Vec<HyperSpec> {
    (0..d.cond.atoms().len())
        .map(|i| HyperSpec {
            members: vec![2 * i, 2 * i + 1],
            guard: "pa!=pb".into(),
            disjunction: false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_bound_labels_and_one_hyperlabel_per_atom() {
        let d = crate::tests::abc();
        let l = super::labels(&d);
        assert_eq!(l.len(), 6);
        let b = l[1].binding.as_ref().unwrap();
        assert_eq!((b.hyper, b.vars[0].0.as_str()), (0, "pb"));
        let h = super::hyperlabels(&d);
        assert_eq!(h.len(), 3);
        assert_eq!(h[2].members, vec![4, 5]);
    }
}
