//! Co-reached groups: label locations such that every run through one passes through the others
//! exactly once, with no loop boundary and no possible interruption between them.
//!
//! Computed per function from dominators and post-dominators (petgraph) on the CFG, where every
//! call that may not return has an edge to an interruption sink: locations X and Y (X first) are
//! co-reached when X dominates Y, Y post-dominates X, both sit in the same loops, and no call
//! that may stop the run lies between them. Labels in one block between two such calls are
//! co-reached too. Blocks of irreducible loops are never grouped.

use std::collections::{BTreeMap, HashMap};

use petgraph::algo::dominators::simple_fast;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::ir::{BlockId, Callee, Function, StmtKind};

/// The walk up the dominator tree from a segment stops after this many steps.
const MAX_DOMINATOR_WALK: usize = 100_000;

/// Ancestry in a dominator tree in constant time: each node's interval of depth-first numbers.
struct TreeIntervals {
    enter: Vec<Option<u32>>,
    leave: Vec<u32>,
}

impl TreeIntervals {
    fn of(
        d: &petgraph::algo::dominators::Dominators<NodeIndex>,
        n: usize,
        root: NodeIndex,
    ) -> Self {
        let mut children: Vec<Vec<NodeIndex>> = vec![Vec::new(); n];
        for v in 0..n {
            let v = NodeIndex::new(v);
            if let Some(p) = d.immediate_dominator(v) {
                children[p.index()].push(v);
            }
        }
        let mut enter = vec![None; n];
        let mut leave = vec![0; n];
        let mut clock = 0u32;
        let mut stack = vec![(root, false)];
        while let Some((v, done)) = stack.pop() {
            clock += 1;
            if done {
                leave[v.index()] = clock;
                continue;
            }
            enter[v.index()] = Some(clock);
            stack.push((v, true));
            stack.extend(children[v.index()].iter().map(|&c| (c, false)));
        }
        TreeIntervals { enter, leave }
    }

    /// Is `a` an ancestor of `b` (or `b` itself) in the tree?
    fn contains(&self, a: NodeIndex, b: NodeIndex) -> bool {
        match (self.enter[a.index()], self.enter[b.index()]) {
            (Some(ea), Some(eb)) => ea <= eb && self.leave[b.index()] <= self.leave[a.index()],
            _ => false,
        }
    }
}

/// A label occurrence: its id, block, and position in the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Point {
    pub id: u64,
    pub block: BlockId,
    pub index: usize,
}

/// Groups of co-reached labels (each sorted by execution order), for one function.
pub fn co_reached(f: &Function, may_stop: &dyn Fn(&Callee) -> bool) -> Vec<Vec<Point>> {
    co_reached_with(f, may_stop, &[])
}

/// The label statements and anchors of `f` (the points), each with the segment of its block
/// it sits in, and each block's last segment: a call that may stop the run ends a segment.
fn segment_points(
    f: &Function,
    may_stop: &dyn Fn(&Callee) -> bool,
    anchors: &[Point],
) -> (Vec<(Point, usize)>, Vec<usize>) {
    let n = f.blocks.len();
    let mut points: Vec<(Point, usize)> = Vec::new();
    let mut last_segment = vec![0usize; n];
    for (b, blk) in f.blocks.iter().enumerate() {
        let mut seg = 0;
        for (i, s) in blk.stmts.iter().enumerate() {
            for a in anchors
                .iter()
                .filter(|a| a.block.0 as usize == b && a.index == i)
            {
                points.push((*a, seg));
            }
            match &s.kind {
                StmtKind::Label { id, .. } => points.push((
                    Point {
                        id: *id,
                        block: BlockId(b as u32),
                        index: i,
                    },
                    seg,
                )),
                StmtKind::Call { callee, .. } if may_stop(callee) => seg += 1,
                StmtKind::HavocMemory(_) => {}
                _ => {}
            }
        }
        last_segment[b] = seg;
    }
    (points, last_segment)
}

/// The segments' graph: a node per segment of each block, an edge to the next segment and to
/// the end from each segment a call ends, the blocks' edges from their last segments, and the
/// end node every run stops at.
fn segment_graph(
    f: &Function,
    last_segment: &[usize],
) -> (DiGraph<(), ()>, Vec<Vec<NodeIndex>>, NodeIndex) {
    let n = f.blocks.len();
    let mut g: DiGraph<(), ()> = DiGraph::new();
    let seg_nodes: Vec<Vec<NodeIndex>> = (0..n)
        .map(|b| (0..=last_segment[b]).map(|_| g.add_node(())).collect())
        .collect();
    let end = g.add_node(());
    for b in 0..n {
        let segs = &seg_nodes[b];
        for k in 0..segs.len() - 1 {
            g.add_edge(segs[k], segs[k + 1], ());
            g.add_edge(segs[k], end, ());
        }
        let last = segs[segs.len() - 1];
        let succs = f.successors(BlockId(b as u32));
        for s in &succs {
            g.add_edge(last, seg_nodes[s.0 as usize][0], ());
        }
        if succs.is_empty() {
            g.add_edge(last, end, ());
        }
    }
    (g, seg_nodes, end)
}

/// The representative of `x`'s class in the union-find `p` (paths compressed).
fn find(p: &mut [usize], x: usize) -> usize {
    let mut r = x;
    while p[r] != r {
        r = p[r];
    }
    let mut y = x;
    while p[y] != r {
        let nx = p[y];
        p[y] = r;
        y = nx;
    }
    r
}

/// Like [`co_reached`], with extra points that are not labels (`anchors`: a function's entry,
/// the call of a called-once function), placed before the statement at their index.
pub fn co_reached_with(
    f: &Function,
    may_stop: &dyn Fn(&Callee) -> bool,
    anchors: &[Point],
) -> Vec<Vec<Point>> {
    // Points and the segment of the block they sit in (segments end at calls that may stop).
    let (points, last_segment) = segment_points(f, may_stop, anchors);
    if points.is_empty() {
        return Vec::new();
    }
    // The graph: one node per segment of each block (a call that may stop the run ends a
    // segment and has an edge to the end), and an end node where every run stops.
    let (g, seg_nodes, end) = segment_graph(f, &last_segment);
    let entry = seg_nodes[f.entry.0 as usize][0];
    let dom = simple_fast(&g, entry);
    let mut rev = g.clone();
    rev.reverse();
    let pdom = simple_fast(&rev, end);
    let post_dominates = TreeIntervals::of(&pdom, g.node_count(), end);
    let forest = crate::cfg::loops::LoopForest::of(f);
    let block = |b: usize| BlockId(b as u32);
    let reachable = |x: NodeIndex| x == entry || dom.immediate_dominator(x).is_some();

    // Union-find over points: points of one segment are co-reached; so are the points of two
    // control-equivalent segments in the same loops.
    let mut parent: Vec<usize> = (0..points.len()).collect();
    let mut by_seg: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
    for (k, (p, seg)) in points.iter().enumerate() {
        by_seg
            .entry((p.block.0 as usize, *seg))
            .or_default()
            .push(k);
    }
    for members in by_seg.values() {
        for w in members.windows(2) {
            let (a, b) = (find(&mut parent, w[0]), find(&mut parent, w[1]));
            parent[a] = b;
        }
    }
    // Segments X and Y (X first) are co-reached when X dominates Y, Y post-dominates X, both
    // are in the same loops and neither in an irreducible one. It is enough to try, for each Y,
    // the nearest dominator X that is a segment with points in the same loops: any other such
    // Z co-reached with Y dominates X, and then Y post-dominates X too (a path from X to the
    // end avoiding Y, after a path from Z to X that cannot meet Y before X, would avoid Y from
    // Z), so Z, X and Y are one class. Linear in the dominator tree's depth per segment,
    // where trying every pair was quadratic in the segments on top (a function of 9,505
    // blocks stalled here for minutes).
    let seg_at: HashMap<NodeIndex, (usize, usize)> = by_seg
        .keys()
        .map(|&(b, k)| (seg_nodes[b][k], (b, k)))
        .collect();
    for (&(yb, ys), ys_points) in &by_seg {
        let ny = seg_nodes[yb][ys];
        if forest.in_irreducible(block(yb)) || !reachable(ny) {
            continue;
        }
        let heads = forest.heads_containing(block(yb));
        let mut up = dom.immediate_dominator(ny);
        let mut steps = 0;
        while let Some(nx) = up {
            steps += 1;
            // A bound on the walk: stopping early only leaves a group split (fewer claims).
            if steps > MAX_DOMINATOR_WALK {
                break;
            }
            if let Some(&(xb, xs)) = seg_at.get(&nx) {
                if !forest.in_irreducible(block(xb)) && forest.heads_containing(block(xb)) == heads
                {
                    if post_dominates.contains(ny, nx) {
                        let a = by_seg[&(xb, xs)][0];
                        let (ra, rb) = (find(&mut parent, a), find(&mut parent, ys_points[0]));
                        parent[ra] = rb;
                    }
                    break;
                }
            }
            up = dom.immediate_dominator(nx);
        }
    }
    // Execution order: reverse postorder of blocks, then position.
    let order: HashMap<BlockId, usize> = f
        .depth_first()
        .0
        .into_iter()
        .enumerate()
        .map(|(i, b)| (b, i))
        .collect();
    let mut groups: BTreeMap<usize, Vec<Point>> = BTreeMap::new();
    for (k, (point, _)) in points.iter().enumerate() {
        let r = find(&mut parent, k);
        groups.entry(r).or_default().push(*point);
    }
    let mut out: Vec<Vec<Point>> = groups
        .into_values()
        .map(|mut g| {
            g.sort_by_key(|p| (order.get(&p.block).copied().unwrap_or(usize::MAX), p.index));
            g
        })
        .collect();
    out.sort_by_key(|g| g.iter().map(|p| p.id).min());
    out
}
