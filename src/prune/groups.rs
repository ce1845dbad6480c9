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

/// Like [`co_reached`], with extra points that are not labels (`anchors`: a function's entry,
/// the call of a called-once function), placed before the statement at their index.
pub fn co_reached_with(
    f: &Function,
    may_stop: &dyn Fn(&Callee) -> bool,
    anchors: &[Point],
) -> Vec<Vec<Point>> {
    let n = f.blocks.len();
    // Points and the segment of the block they sit in (segments end at calls that may stop).
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
    if points.is_empty() {
        return Vec::new();
    }
    // The graph: one node per segment of each block (a call that may stop the run ends a
    // segment and has an edge to the end), and an end node where every run stops.
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
    let entry = seg_nodes[f.entry.0 as usize][0];
    let dom = simple_fast(&g, entry);
    let mut rev = g.clone();
    rev.reverse();
    let pdom = simple_fast(&rev, end);
    let dominates =
        |d: &petgraph::algo::dominators::Dominators<NodeIndex>, a: NodeIndex, b: NodeIndex| {
            d.dominators(b).is_some_and(|mut it| it.any(|x| x == a))
        };
    let forest = crate::cfg::loops::LoopForest::of(f);
    let block = |b: usize| BlockId(b as u32);
    let reachable = |x: NodeIndex| x == entry || dom.immediate_dominator(x).is_some();

    // Union-find over points: points of one segment are co-reached; so are the points of two
    // control-equivalent segments in the same loops.
    let mut parent: Vec<usize> = (0..points.len()).collect();
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
    let segs: Vec<(usize, usize)> = by_seg.keys().copied().collect();
    for &(xb, xs) in &segs {
        for &(yb, ys) in &segs {
            if (xb, xs) == (yb, ys)
                || forest.in_irreducible(block(xb))
                || forest.in_irreducible(block(yb))
                || forest.heads_containing(block(xb)) != forest.heads_containing(block(yb))
            {
                continue;
            }
            let (nx, ny) = (seg_nodes[xb][xs], seg_nodes[yb][ys]);
            if !reachable(nx) || !reachable(ny) {
                continue;
            }
            if !(dominates(&dom, nx, ny) && dominates(&pdom, ny, nx)) {
                continue;
            }
            let (Some(a), Some(b)) = (
                by_seg.get(&(xb, xs)).and_then(|v| v.first().copied()),
                by_seg.get(&(yb, ys)).and_then(|v| v.first().copied()),
            ) else {
                continue;
            };
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            parent[ra] = rb;
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
