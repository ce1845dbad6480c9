//! The peeled control-flow graph the encoder walks: the first iterations of chosen natural
//! loops are copies of the loop body, encoded exactly, before the loop itself.
//!
//! A node is an original block in a *context*: for every peeled loop that contains the block
//! (outermost first), the iteration it belongs to, `1..=k` for the exact copies or [`TAIL`] for
//! the loop itself. Edges follow the original ones; a back edge to the head of a peeled loop
//! goes from iteration `j` to `j + 1`, from iteration `k` to the tail, and is cut in the tail,
//! as every retreating edge of a loop that is not peeled is cut. The graph is acyclic.
//!
//! Soundness: every execution of the function is a path of this graph. Its first `k` (or fewer)
//! iterations of a peeled loop follow the copies, which are the original blocks; the
//! iterations after them enter the tail, whose head the encoder havocs as it havocs every loop
//! head ([`super::loops`]): the tail stands for all later iterations, exactly as the loop
//! stood for all of them before peeling. So peeling adds facts only about iterations that
//! really are the first ones, and never removes a path. A label of a peeled loop occurs in
//! several nodes: it is covered when it is covered in any of them.

use std::collections::{BTreeMap, HashMap};

use super::loops::LoopForest;
use crate::ir::{BlockId, Function};

/// The iteration of the loop itself, after its exact copies.
pub const TAIL: u8 = 0;

#[derive(Clone, Debug)]
pub struct Peeled {
    /// Each node: its block, and its iteration in every peeled loop containing the block.
    nodes: Vec<(BlockId, Vec<u8>)>,
    index: HashMap<(BlockId, Vec<u8>), usize>,
    /// Nodes in an order where every edge goes forward (reverse postorder).
    pub order: Vec<usize>,
    /// Peeled loops: head → number of exact copies.
    copies: BTreeMap<BlockId, u8>,
    /// The peeled loops containing each block, outermost first.
    loops_of: HashMap<BlockId, Vec<BlockId>>,
    /// Retreating edges of the original graph, as the forest found them.
    retreating: std::collections::BTreeSet<(BlockId, BlockId)>,
}

/// How many nodes peeling `copies` gives at most: every reachable block once per context.
pub fn size_with(forest: &LoopForest, copies: &BTreeMap<BlockId, u8>) -> usize {
    forest
        .order
        .iter()
        .map(|b| {
            forest
                .heads_containing(*b)
                .iter()
                .filter_map(|h| copies.get(h))
                .map(|k| *k as usize + 1)
                .product::<usize>()
        })
        .sum()
}

impl Peeled {
    /// The peeled graph of `f` with `copies[h]` exact copies of the natural loop headed by
    /// `h` (loops not named, and irreducible ones, are not peeled).
    pub fn new(f: &Function, forest: &LoopForest, copies: &BTreeMap<BlockId, u8>) -> Peeled {
        let copies: BTreeMap<BlockId, u8> = copies
            .iter()
            .filter(|(h, k)| **k > 0 && forest.body(**h).is_some())
            .map(|(h, k)| (*h, *k))
            .collect();
        let body_size = |h: &BlockId| forest.body(*h).map_or(0, |b| b.len());
        let loops_of: HashMap<BlockId, Vec<BlockId>> = forest
            .order
            .iter()
            .map(|b| {
                let mut heads: Vec<BlockId> = forest
                    .heads_containing(*b)
                    .iter()
                    .filter(|h| copies.contains_key(h))
                    .copied()
                    .collect();
                // Nested bodies are strictly smaller: outermost first.
                heads.sort_by_key(|h| (std::cmp::Reverse(body_size(h)), *h));
                (*b, heads)
            })
            .collect();
        let mut p = Peeled {
            nodes: Vec::new(),
            index: HashMap::new(),
            order: Vec::new(),
            copies,
            loops_of,
            retreating: forest.retreating.clone(),
        };
        let entry = p.intern(f.entry, p.entry_context(f.entry));
        // Depth-first search: every node and, in reverse postorder, a topological order.
        let mut post = Vec::new();
        let mut done = vec![false; entry + 1];
        done[entry] = true;
        let mut stack: Vec<(usize, Vec<usize>, usize)> = vec![(entry, p.successors(f, entry), 0)];
        while let Some((n, succs, i)) = stack.pop() {
            if i < succs.len() {
                let s = succs[i];
                stack.push((n, succs, i + 1));
                if done.len() <= s {
                    done.resize(s + 1, false);
                }
                if !done[s] {
                    done[s] = true;
                    let next = p.successors(f, s);
                    stack.push((s, next, 0));
                }
            } else {
                post.push(n);
            }
        }
        post.reverse();
        p.order = post;
        p
    }

    fn intern(&mut self, b: BlockId, ctx: Vec<u8>) -> usize {
        if let Some(&n) = self.index.get(&(b, ctx.clone())) {
            return n;
        }
        self.nodes.push((b, ctx.clone()));
        self.index.insert((b, ctx), self.nodes.len() - 1);
        self.nodes.len() - 1
    }

    /// The context of the function's entry block: the first iteration of the loops it heads
    /// (the entry dominates every block, so the only loops containing it are its own).
    fn entry_context(&self, b: BlockId) -> Vec<u8> {
        let loops = self.loops_of.get(&b).map_or(&[][..], |v| v.as_slice());
        loops
            .iter()
            .map(|h| if *h == b { 1 } else { TAIL })
            .collect()
    }

    fn successors(&mut self, f: &Function, n: usize) -> Vec<usize> {
        let b = self.nodes[n].0;
        let mut out = Vec::new();
        for t in f.successors(b) {
            if let Some(ctx) = self.context_after(n, t) {
                let m = self.intern(t, ctx);
                if !out.contains(&m) {
                    out.push(m);
                }
            }
        }
        out
    }

    /// The context of the edge from node `n` to the original block `t`: `None` if the edge is
    /// cut (a retreating edge of a loop not peeled, or of a peeled loop's tail).
    fn context_after(&self, n: usize, t: BlockId) -> Option<Vec<u8>> {
        let (b, ctx) = &self.nodes[n];
        let retreating = self.retreating.contains(&(*b, t));
        if retreating && !self.copies.contains_key(&t) {
            return None;
        }
        let from = self.loops_of.get(b).map_or(&[][..], |v| v.as_slice());
        let to = self.loops_of.get(&t).map_or(&[][..], |v| v.as_slice());
        let mut out = Vec::with_capacity(to.len());
        for h in to {
            let it = match from.iter().position(|x| x == h) {
                Some(p) if retreating && *h == t => match ctx[p] {
                    TAIL => return None,
                    j if j >= self.copies[h] => TAIL,
                    j => j + 1,
                },
                Some(p) => ctx[p],
                // Entering the loop: only through its head, which dominates its body.
                None if *h == t => 1,
                None => TAIL,
            };
            out.push(it);
        }
        Some(out)
    }

    /// The node the edge from `n` to the original block `t` leads to, if it is not cut.
    pub fn step(&self, n: usize, t: BlockId) -> Option<usize> {
        let ctx = self.context_after(n, t)?;
        self.index.get(&(t, ctx)).copied()
    }

    /// The head node a cut edge from node `n` to the original block `t` goes back to: the node
    /// of `t` in `n`'s iteration of every peeled loop around `t`, and in the tail of `t`'s own
    /// loop when it is peeled. The run that takes the edge goes on there (the encoding havocs
    /// that node and starts the loop's next iteration from it). `None` when the edge is not
    /// cut or `t` has no such node.
    pub fn cut_head(&self, n: usize, t: BlockId) -> Option<usize> {
        if self.step(n, t).is_some() {
            return None;
        }
        let (b, ctx) = &self.nodes[n];
        let from = self.loops_of.get(b).map_or(&[][..], |v| v.as_slice());
        let to = self.loops_of.get(&t).map_or(&[][..], |v| v.as_slice());
        let mut out = Vec::with_capacity(to.len());
        for h in to {
            if *h == t {
                out.push(TAIL);
            } else {
                out.push(ctx[from.iter().position(|x| x == h)?]);
            }
        }
        self.index.get(&(t, out)).copied()
    }

    /// The original block of node `n`.
    pub fn block(&self, n: usize) -> BlockId {
        self.nodes[n].0
    }

    /// Is node `n` an exact copy of the head of a peeled loop (where nothing is havocked)?
    pub fn is_exact_head(&self, n: usize) -> bool {
        let (b, ctx) = &self.nodes[n];
        if !self.copies.contains_key(b) {
            return false;
        }
        let loops = &self.loops_of[b];
        let p = loops
            .iter()
            .position(|h| h == b)
            .expect("a head is in its loop");
        ctx[p] != TAIL
    }

    /// The entry node.
    pub fn entry(&self) -> usize {
        0
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cfg::test_function as function;

    /// Every edge of the peeled graph goes forward in `order`, and every node is in it.
    fn is_topological(f: &Function, p: &Peeled) -> bool {
        let pos: HashMap<usize, usize> = p.order.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        pos.len() == p.len()
            && p.order.iter().all(|&n| {
                f.successors(p.block(n))
                    .into_iter()
                    .filter_map(|t| p.step(n, t))
                    .all(|m| pos[&m] > pos[&n])
            })
    }

    #[test]
    fn a_peeled_loop_has_its_copies_before_its_tail_and_stays_acyclic() {
        let f = function(
            "int f(int n) { int s = 0; for (int i = 0; i < n; i++) { if (s > 9) break; s += i; } return s; }",
            "f",
        );
        let forest = LoopForest::of(&f);
        let heads = forest.heads();
        assert_eq!(heads.len(), 1);
        let h = *heads.iter().next().unwrap();
        let body = forest.body(h).unwrap().len();
        let unpeeled = Peeled::new(&f, &forest, &BTreeMap::new());
        assert_eq!(unpeeled.len(), forest.order.len());
        let copies = BTreeMap::from([(h, 3u8)]);
        let p = Peeled::new(&f, &forest, &copies);
        assert_eq!(p.len(), forest.order.len() + 3 * body);
        assert_eq!(p.len(), size_with(&forest, &copies));
        assert!(is_topological(&f, &p));
        let heads: Vec<usize> = (0..p.len()).filter(|&n| p.block(n) == h).collect();
        assert_eq!(heads.len(), 4);
        assert_eq!(heads.iter().filter(|&&n| p.is_exact_head(n)).count(), 3);
    }

    #[test]
    fn nested_peeled_loops_multiply_their_copies() {
        let f = function(
            "int f(int n) { int s = 0; for (int i = 0; i < n; i++) { for (int j = 0; j < i; j++) s += j; s++; } return s; }",
            "f",
        );
        let forest = LoopForest::of(&f);
        let copies: BTreeMap<BlockId, u8> = forest.heads().into_iter().map(|h| (h, 2)).collect();
        let p = Peeled::new(&f, &forest, &copies);
        assert_eq!(p.len(), size_with(&forest, &copies));
        assert!(p.len() > forest.order.len());
        assert!(is_topological(&f, &p));
        // Every cut edge goes back to the tail head of its own loop, in the iteration of the
        // outer loop it is taken in; no other edge has a head to go back to.
        let mut cut = 0;
        for n in 0..p.len() {
            for t in f.successors(p.block(n)) {
                match p.cut_head(n, t) {
                    Some(h) => {
                        cut += 1;
                        assert_eq!(p.block(h), t);
                        assert!(!p.is_exact_head(h));
                        let outer = |m: usize| -> Vec<u8> {
                            let (b, ctx) = &p.nodes[m];
                            p.loops_of[b]
                                .iter()
                                .zip(ctx)
                                .filter(|(l, _)| **l != t && p.loops_of[&t].contains(l))
                                .map(|(_, c)| *c)
                                .collect()
                        };
                        assert_eq!(outer(h), outer(n));
                    }
                    None => {
                        assert!(p.step(n, t).is_some() || !p.retreating.contains(&(p.block(n), t)))
                    }
                }
            }
        }
        // The inner loop's tail in the outer loop's two copies and its tail, and the outer
        // loop's tail.
        assert!(cut >= 4, "{cut} cut edges");
    }

    #[test]
    fn an_irreducible_cycle_is_never_peeled() {
        let f = function(
            "int g(int x) { if (x) goto b; a: x--; b: x -= 2; if (x > 0) goto a; return x; }",
            "g",
        );
        let forest = LoopForest::of(&f);
        let copies: BTreeMap<BlockId, u8> = forest.heads().into_iter().map(|h| (h, 3)).collect();
        let p = Peeled::new(&f, &forest, &copies);
        assert_eq!(p.len(), forest.order.len());
        assert!(is_topological(&f, &p));
    }
}
