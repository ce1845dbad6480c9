//! NCC, n-wise condition coverage: every combination of truth values of every n atoms of a
//! decision (`--n`, default 2).
//!
//! Labels: for each n-subset of the atoms (lexicographic order), its 2^n sign combinations,
//! right-nested, positive first; a decision with fewer than n atoms uses all of them (so with
//! one atom NCC is CC). C(k, n)·2^n labels for k ≥ n atoms.
//! Example (n = 2): `if (a || b || c)` gives `(a) && (b)`, `(a) && !(b)`, `!(a) && (b)`,
//! `!(a) && !(b)`, then the same for (a, c) and (b, c): 12 labels.
//! Reference: LAnnotate `gen_labels_ncc`.

use crate::{combinations, Decision, LabelSpec, Limits};
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "NCC",
    description: "n-wise condition coverage: all value combinations of every n atoms (--ncc-n, default 2)",
    labels: Labels::Decision { labels, whole: false, hyperlabels: None },
    hyperlabels: false,
    objective: Objective::Other,
};

pub fn labels(d: &Decision, limits: &Limits) -> Vec<LabelSpec> {
    let atoms = d.cond.atoms();
    let n = limits.ncc_n.clamp(1, atoms.len().max(1));
    if atoms.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for subset in subsets(atoms.len(), n) {
        let chosen: Vec<&str> = subset.iter().map(|&i| atoms[i]).collect();
        out.extend(
            combinations(&chosen)
                .into_iter()
                .map(|p| LabelSpec::new(p, DEFINITION.name)),
        );
    }
    out
}

/// The n-subsets of 0..k, in lexicographic order.
fn subsets(k: usize, n: usize) -> Vec<Vec<usize>> {
    fn go(start: usize, k: usize, n: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == n {
            out.push(cur.clone());
            return;
        }
        for i in start..k {
            cur.push(i);
            go(i + 1, k, n, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    go(0, k, n, &mut Vec::new(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use crate::Limits;

    #[test]
    fn pairs_of_three_atoms_give_twelve_labels() {
        let l = super::labels(&crate::tests::abc(), &Limits::default());
        assert_eq!(l.len(), 12);
        assert_eq!(l[0].predicate, "(a <= 0) && ((b <= 0))");
        assert_eq!(l[4].predicate, "(a <= 0) && ((c <= 0))");
    }

    #[test]
    fn fewer_atoms_than_n_use_all() {
        let d = crate::Decision::new(crate::Cond::Atom("x".into()));
        assert_eq!(super::labels(&d, &Limits::default()).len(), 2);
    }
}
