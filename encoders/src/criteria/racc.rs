//! RACC, restricted active clause coverage: for each atom, two runs in which the atom
//! determines the decision, once true and once false, with every other atom equal in both.
//!
//! Labels: the two GACC labels of each atom, written `pc_label_bindings(pred, id, "RACC", H, n,
//! "cA1", atom1, ...)` (the true one) and `"cB1", atom1, ...` (the false one), binding the
//! truth values (0 or 1) of the n other atoms; one hyperlabel per atom, `<lI.lJ|;cA1 == cB1 && cA2 ==
//! cB2;>` (`<lI.lJ|; ;>` for a one-atom decision).
//! Reference: LAnnotate (LAnnotate 0.2's output in
//! `tests/fixtures/lannotate/sample_RACC.c`).

use super::gacc::active_pairs;
use crate::{Binding, Decision, HyperSpec, LabelSpec};
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "RACC",
    description: "restricted active clause coverage (hyperlabels): each atom's two active values with the other atoms fixed",
    labels: Labels::Decision { labels: |d, _| labels(d), whole: false, hyperlabels: Some(hyperlabels) },
    hyperlabels: true,
    objective: Objective::Other,
};

pub fn labels(d: &Decision) -> Vec<LabelSpec> {
    let atoms = d.cond.atoms();
    active_pairs(d)
        .into_iter()
        .enumerate()
        .flat_map(|(i, (pos, neg))| {
            let others: Vec<&str> = atoms
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, a)| *a)
                .collect();
            [(pos, 'A'), (neg, 'B')].map(|(p, side)| LabelSpec {
                predicate: p,
                tag: DEFINITION.name.into(),
                binding: Some(Binding {
                    hyper: i,
                    vars: others
                        .iter()
                        .enumerate()
                        .map(|(k, a)| (format!("c{side}{}", k + 1), crate::truth_value(a)))
                        .collect(),
                }),
                outcome: None,
                replacement: None,
            })
        })
        .collect()
}

pub fn hyperlabels(d: &Decision) -> Vec<HyperSpec> {
    let n = d.cond.atoms().len();
    (0..n)
        .map(|i| HyperSpec {
            members: vec![2 * i, 2 * i + 1],
            guard: if n == 1 {
                " ".into()
            } else {
                (1..n)
                    .map(|k| format!("cA{k} == cB{k}"))
                    .collect::<Vec<_>>()
                    .join(" && ")
            },
            disjunction: false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn other_atoms_are_bound() {
        let d = crate::tests::abc();
        let l = super::labels(&d);
        let b = l[0].binding.as_ref().unwrap();
        assert_eq!(
            b.vars,
            vec![
                ("cA1".into(), "b <= 0".into()),
                ("cA2".into(), "c <= 0".into())
            ]
        );
        assert_eq!(super::hyperlabels(&d)[0].guard, "cA1 == cB1 && cA2 == cB2");
    }
}
