//! The loop forest of a function: the one definition of "loop" that the encoder (where loops
//! are cut and havocked) and the co-reached group builder (labels in different loops are never
//! co-reached) both use. Both uses matter for soundness.
//!
//! Facts (tested below): a depth-first search from the entry finds the reachable blocks in
//! reverse postorder and the *retreating* edges (to a block still on the search stack); every
//! cycle of reachable blocks contains one, so cutting them leaves an acyclic graph. A retreating
//! edge `t → h` is *natural* when `h` dominates `t`; its loop body is `h` plus every block that
//! reaches `t` without passing through `h`, and every path from `h` back to `h` stays in the
//! union of the natural bodies of `h` (so havocking what they write at `h` is sound). A head
//! with a retreating edge that is not natural heads an *irreducible* cycle, which can be entered
//! elsewhere than at its head: nothing is known about what runs between two visits of it.

use std::collections::{BTreeMap, BTreeSet};

use petgraph::algo::dominators::simple_fast;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::ir::{BlockId, Function};

#[derive(Clone, Debug, Default)]
pub struct LoopForest {
    /// Reachable blocks in reverse postorder.
    pub order: Vec<BlockId>,
    /// Retreating edges `(source, head)` of the depth-first search.
    pub retreating: BTreeSet<(BlockId, BlockId)>,
    /// Natural loops: head → the union of the bodies of its natural retreating edges.
    natural: BTreeMap<BlockId, BTreeSet<BlockId>>,
    /// Heads of irreducible cycles.
    irreducible_heads: BTreeSet<BlockId>,
    /// Blocks of irreducible cycles.
    irreducible_blocks: BTreeSet<BlockId>,
    /// For each block, the heads of the natural loops that contain it.
    containing: BTreeMap<BlockId, BTreeSet<BlockId>>,
}

impl LoopForest {
    pub fn of(f: &Function) -> LoopForest {
        let n = f.blocks.len();
        let (order, retreating) = f.depth_first();
        let retreating: BTreeSet<(BlockId, BlockId)> = retreating.into_iter().collect();
        let mut forest = LoopForest {
            order,
            retreating,
            ..LoopForest::default()
        };
        if forest.retreating.is_empty() {
            return forest;
        }
        let mut g: DiGraph<(), ()> = DiGraph::new();
        let nodes: Vec<NodeIndex> = (0..n).map(|_| g.add_node(())).collect();
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for b in 0..n {
            for s in f.successors(BlockId(b as u32)) {
                g.add_edge(nodes[b], nodes[s.0 as usize], ());
                preds[s.0 as usize].push(b);
            }
        }
        let dom = simple_fast(&g, nodes[f.entry.0 as usize]);
        let dominates = |h: usize, t: usize| {
            dom.dominators(nodes[t])
                .is_some_and(|mut it| it.any(|x| x == nodes[h]))
        };
        for &(t, h) in &forest.retreating {
            let (t, h) = (t.0 as usize, h.0 as usize);
            // h plus everything that reaches t without passing through h.
            let mut body = BTreeSet::from([BlockId(h as u32)]);
            let mut work = vec![t];
            while let Some(x) = work.pop() {
                if body.insert(BlockId(x as u32)) {
                    work.extend(preds[x].iter().copied());
                }
            }
            let head = BlockId(h as u32);
            if dominates(h, t) {
                for b in &body {
                    forest.containing.entry(*b).or_default().insert(head);
                }
                forest.natural.entry(head).or_default().extend(body);
            } else {
                forest.irreducible_heads.insert(head);
                forest.irreducible_blocks.extend(body);
            }
        }
        forest
    }

    /// Heads of loops: targets of retreating edges, in block order.
    pub fn heads(&self) -> BTreeSet<BlockId> {
        self.retreating.iter().map(|(_, h)| *h).collect()
    }

    /// Is `t → h` a retreating edge (cut by the encoder)?
    pub fn is_retreating(&self, t: BlockId, h: BlockId) -> bool {
        self.retreating.contains(&(t, h))
    }

    /// The blocks that may run between two visits of the head `h`: `None` when `h` heads an
    /// irreducible cycle (anything may run).
    pub fn body(&self, h: BlockId) -> Option<&BTreeSet<BlockId>> {
        if self.irreducible_heads.contains(&h) {
            return None;
        }
        self.natural.get(&h)
    }

    /// The heads of the natural loops that contain `b`.
    pub fn heads_containing(&self, b: BlockId) -> &BTreeSet<BlockId> {
        static NONE: BTreeSet<BlockId> = BTreeSet::new();
        self.containing.get(&b).unwrap_or(&NONE)
    }

    /// Does `b` sit on an irreducible cycle?
    pub fn in_irreducible(&self, b: BlockId) -> bool {
        self.irreducible_blocks.contains(&b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cfg::test_function as function;

    /// Every cycle of reachable blocks contains a retreating edge: without them the
    /// reachable graph is acyclic (Kahn's algorithm removes every block).
    fn acyclic_without_retreating(f: &Function, forest: &LoopForest) -> bool {
        let reach: BTreeSet<BlockId> = forest.order.iter().copied().collect();
        let mut indeg: BTreeMap<BlockId, usize> = reach.iter().map(|b| (*b, 0)).collect();
        for &b in &reach {
            for s in f.successors(b) {
                if reach.contains(&s) && !forest.is_retreating(b, s) {
                    *indeg.entry(s).or_default() += 1;
                }
            }
        }
        let mut ready: Vec<BlockId> = indeg
            .iter()
            .filter(|(_, d)| **d == 0)
            .map(|(b, _)| *b)
            .collect();
        let mut removed = 0;
        while let Some(b) = ready.pop() {
            removed += 1;
            for s in f.successors(b) {
                if reach.contains(&s) && !forest.is_retreating(b, s) {
                    let d = indeg.get_mut(&s).unwrap();
                    *d -= 1;
                    if *d == 0 {
                        ready.push(s);
                    }
                }
            }
        }
        removed == reach.len()
    }

    /// A path from a natural head `h` to the source of one of its retreating edges, without
    /// passing `h` again, stays in the body: leaving the body, no such source is reachable
    /// without passing through `h`.
    fn bodies_are_closed(f: &Function, forest: &LoopForest) -> bool {
        forest.natural.iter().all(|(h, body)| {
            let sources: BTreeSet<BlockId> = forest
                .retreating
                .iter()
                .filter(|(_, x)| x == h)
                .map(|(t, _)| *t)
                .collect();
            body.iter().all(|&b| {
                f.successors(b)
                    .iter()
                    .all(|s| body.contains(s) || !reaches_avoiding(f, *s, &sources, *h))
            })
        })
    }

    fn reaches_avoiding(
        f: &Function,
        from: BlockId,
        to: &BTreeSet<BlockId>,
        avoid: BlockId,
    ) -> bool {
        let mut seen = BTreeSet::new();
        let mut work = vec![from];
        while let Some(b) = work.pop() {
            if to.contains(&b) {
                return true;
            }
            if b != avoid && seen.insert(b) {
                work.extend(f.successors(b));
            }
        }
        false
    }

    #[test]
    fn nested_loops_have_nested_bodies() {
        let f = function(
            "int f(int n) { int s = 0; for (int i = 0; i < n; i++) { for (int j = 0; j < i; j++) s += j; s++; } return s; }",
            "f",
        );
        let forest = LoopForest::of(&f);
        let heads = forest.heads();
        assert_eq!(heads.len(), 2, "{forest:?}");
        let bodies: Vec<&BTreeSet<BlockId>> =
            heads.iter().map(|h| forest.body(*h).unwrap()).collect();
        let (small, big) = if bodies[0].len() < bodies[1].len() {
            (bodies[0], bodies[1])
        } else {
            (bodies[1], bodies[0])
        };
        assert!(small.is_subset(big) && small.len() < big.len());
        for b in small {
            assert_eq!(forest.heads_containing(*b).len(), 2);
        }
        assert!(acyclic_without_retreating(&f, &forest));
        assert!(bodies_are_closed(&f, &forest));
        assert!(!forest.order.iter().any(|b| forest.in_irreducible(*b)));
    }

    #[test]
    fn a_cycle_entered_in_two_places_is_irreducible() {
        let f = function(
            "int g(int x) { if (x) goto b; a: x--; b: x -= 2; if (x > 0) goto a; return x; }",
            "g",
        );
        let forest = LoopForest::of(&f);
        let heads = forest.heads();
        assert_eq!(heads.len(), 1, "{forest:?}");
        let h = *heads.iter().next().unwrap();
        assert!(forest.body(h).is_none(), "irreducible: anything may run");
        assert!(forest.in_irreducible(h));
        assert!(acyclic_without_retreating(&f, &forest));
    }

    #[test]
    fn straight_code_has_no_loops() {
        let f = function("int h(int x) { if (x) x++; return x; }", "h");
        let forest = LoopForest::of(&f);
        assert!(forest.retreating.is_empty() && forest.heads().is_empty());
        assert_eq!(forest.order.first(), Some(&f.entry));
    }
}
