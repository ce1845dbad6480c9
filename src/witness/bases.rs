//! Which earlier calls a round makes again, changed: those models gave for the labels left
//! first, then those whose runs got furthest.

use std::collections::BTreeSet;

use crate::prune::witness::{Call, Origin};

/// Up to `n` of the `earlier` calls of `function` that `accept` takes, to make again: first
/// those a model gave for one of `wanted` (in their order), then those whose runs covered the
/// most labels (`covered`, by call: the further a run got, the more allocations and calls
/// through pointers it meets), then in their order.
pub fn bases<'c>(
    earlier: &'c [Call],
    covered: &[usize],
    function: &str,
    wanted: &BTreeSet<u64>,
    n: usize,
    accept: impl Fn(&Call) -> bool,
) -> Vec<&'c Call> {
    let mut of_f: Vec<(usize, &Call)> = earlier
        .iter()
        .enumerate()
        .filter(|(_, c)| c.function == function && accept(c))
        .collect();
    of_f.sort_by_key(|&(i, c)| {
        let for_wanted = c.origin == Origin::Model && wanted.contains(&c.target);
        let reach = match for_wanted {
            true => 0,
            false => covered.get(i).copied().unwrap_or(0),
        };
        (!for_wanted, std::cmp::Reverse(reach), i)
    });
    let mut out: Vec<&Call> = Vec::new();
    for (_, c) in of_f {
        if out.len() < n && !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// A round's calls: for each function of `left` (labels by the function whose calls reach
/// them), up to `n` of its earlier calls that `accept` takes ([`bases`]), made again as
/// `remake` says (nothing, for a function the round does not apply to); sorted, each once.
pub fn remade(
    earlier: &[Call],
    covered: &[usize],
    left: &std::collections::BTreeMap<String, Vec<u64>>,
    n: usize,
    accept: impl Fn(&Call) -> bool,
    mut remake: impl FnMut(&str, Vec<&Call>) -> Vec<Call>,
) -> Vec<Call> {
    let mut out = Vec::new();
    for (name, ids) in left {
        let wanted: BTreeSet<u64> = ids.iter().copied().collect();
        let bases = bases(earlier, covered, name, &wanted, n, &accept);
        if !bases.is_empty() {
            out.extend(remake(name, bases));
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::witness::Arg;

    #[test]
    fn calls_are_made_again_from_the_wanted_labels_models_then_from_the_furthest_runs() {
        let call = |target, origin, n| Call {
            function: "f".into(),
            target,
            args: vec![Arg::Bits(n)],
            globals: Vec::new(),
            origin,
            fail_allocation: None,
            hooks: false,
        };
        let earlier = vec![
            call(1, Origin::Model, 0),
            call(2, Origin::Palette, 1),
            call(3, Origin::Model, 2),
            call(4, Origin::Model, 3),
            call(5, Origin::Model, 4),
        ];
        let covered = [1, 9, 4, 2, 7];
        let wanted = BTreeSet::from([4, 5]);
        let picked = bases(&earlier, &covered, "f", &wanted, 4, |_| true);
        assert_eq!(
            picked,
            vec![&earlier[3], &earlier[4], &earlier[1], &earlier[2]]
        );
        let none = bases(&earlier, &covered, "g", &wanted, 3, |_| true);
        assert!(none.is_empty());
        let models = bases(&earlier, &covered, "f", &BTreeSet::new(), 2, |c| {
            c.origin == Origin::Model
        });
        assert_eq!(models, vec![&earlier[4], &earlier[2]]);
    }
}
