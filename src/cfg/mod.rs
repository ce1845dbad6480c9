//! Control-flow graphs (petgraph) of IR functions, with explicit exit and interruption sinks.
//!
//! Every block is a node; `Return` edges go to the exit sink; a block ending in a call that never
//! returns goes to the interruption sink, and so does every call that may not return (an unknown
//! external, an indirect call), so that later analyses (dominators, co-reached groups) see every
//! way a run can stop.

pub mod callgraph;
pub mod loops;
pub mod unroll;

/// The lowered function `name` of the C text `src`, for the tests of this module's analyses.
#[cfg(test)]
pub(crate) fn test_function(src: &str, name: &str) -> Function {
    crate::frontend::test_program(src)
        .function(name)
        .unwrap()
        .clone()
}

use std::fmt::Write;

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use crate::ir::display::Printer;
use crate::ir::{BlockId, Callee, Function, Program, StmtKind, Terminator};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CfgNode {
    Block(BlockId),
    /// Normal function exit (after `return`).
    Exit,
    /// Where runs stop without returning: `exit`, `abort`, `longjmp`, a call that may not return.
    Interrupt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CfgEdge {
    Goto,
    True,
    False,
    /// A switch case (index into the terminator's cases) or its default (`None`).
    Case(Option<usize>),
    Return,
    NoReturn,
    /// A call inside the block may stop the run here.
    MayInterrupt,
}

pub struct Cfg {
    pub graph: DiGraph<CfgNode, CfgEdge>,
    pub entry: NodeIndex,
    pub exit: NodeIndex,
    pub interrupt: NodeIndex,
    /// Node of each block, indexed by block id.
    pub block_nodes: Vec<NodeIndex>,
}

impl Cfg {
    /// Builds the graph of `f`. `may_not_return(callee)` says whether a direct call may stop the
    /// run (see [`callgraph::CallGraph::may_not_return`]); indirect calls always may.
    pub fn build(f: &Function, may_not_return: &dyn Fn(&str) -> bool) -> Cfg {
        let mut graph = DiGraph::new();
        let block_nodes: Vec<NodeIndex> = (0..f.blocks.len())
            .map(|i| graph.add_node(CfgNode::Block(BlockId(i as u32))))
            .collect();
        let exit = graph.add_node(CfgNode::Exit);
        let interrupt = graph.add_node(CfgNode::Interrupt);
        for (i, b) in f.blocks.iter().enumerate() {
            let from = block_nodes[i];
            let node = |id: BlockId| block_nodes[id.0 as usize];
            let interrupts = b.stmts.iter().any(|s| match &s.kind {
                StmtKind::Call { callee, .. } => match callee {
                    Callee::Direct(n) => may_not_return(n),
                    Callee::Indirect(_) => true,
                },
                _ => false,
            });
            match &b.term {
                Terminator::Goto(t) => {
                    graph.add_edge(from, node(*t), CfgEdge::Goto);
                }
                Terminator::Branch {
                    then_bb, else_bb, ..
                } => {
                    graph.add_edge(from, node(*then_bb), CfgEdge::True);
                    graph.add_edge(from, node(*else_bb), CfgEdge::False);
                }
                Terminator::Switch { cases, default, .. } => {
                    for (k, c) in cases.iter().enumerate() {
                        graph.add_edge(from, node(c.target), CfgEdge::Case(Some(k)));
                    }
                    graph.add_edge(from, node(*default), CfgEdge::Case(None));
                }
                Terminator::Return(_) => {
                    graph.add_edge(from, exit, CfgEdge::Return);
                }
                Terminator::NoReturn => {
                    graph.add_edge(from, interrupt, CfgEdge::NoReturn);
                }
                Terminator::Unreachable => {}
            }
            if interrupts && !matches!(b.term, Terminator::NoReturn) {
                graph.add_edge(from, interrupt, CfgEdge::MayInterrupt);
            }
        }
        Cfg {
            entry: block_nodes[f.entry.0 as usize],
            graph,
            exit,
            interrupt,
            block_nodes,
        }
    }

    /// Blocks reachable from the entry, in block order.
    pub fn reachable_blocks(&self) -> Vec<BlockId> {
        let mut dfs = petgraph::visit::Dfs::new(&self.graph, self.entry);
        let mut out = Vec::new();
        while let Some(n) = dfs.next(&self.graph) {
            if let CfgNode::Block(b) = self.graph[n] {
                out.push(b);
            }
        }
        out.sort();
        out
    }

    /// Edges whose target dominates their source: the back edges of natural loops.
    pub fn back_edges(&self) -> Vec<(BlockId, BlockId)> {
        let doms = petgraph::algo::dominators::simple_fast(&self.graph, self.entry);
        let mut out = Vec::new();
        for e in self.graph.edge_references() {
            let (s, t) = (e.source(), e.target());
            let (CfgNode::Block(sb), CfgNode::Block(tb)) = (self.graph[s], self.graph[t]) else {
                continue;
            };
            if doms.dominators(s).is_some_and(|mut ds| ds.any(|d| d == t)) {
                out.push((sb, tb));
            }
        }
        out.sort();
        out
    }
}

/// The CFG of `f` as Graphviz DOT, each block listing its statements.
pub fn to_dot(program: &Program, f: &Function, cfg: &Cfg) -> String {
    let p = Printer {
        program,
        function: Some(f),
    };
    let esc = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", esc(&f.name));
    let _ = writeln!(out, "  node [shape=box fontname=monospace];");
    for n in cfg.graph.node_indices() {
        match cfg.graph[n] {
            CfgNode::Block(b) => {
                let blk = f.block(b);
                let mut label = format!("bb{} (line {})\\l", b.0, blk.loc.line);
                for s in &blk.stmts {
                    let _ = write!(label, "{}\\l", esc(&p.stmt(s)));
                }
                let _ = write!(label, "{}\\l", esc(&p.terminator(&blk.term)));
                let _ = writeln!(out, "  n{} [label=\"{}\"];", n.index(), label);
            }
            CfgNode::Exit => {
                let _ = writeln!(out, "  n{} [label=\"exit\" shape=oval];", n.index());
            }
            CfgNode::Interrupt => {
                let _ = writeln!(out, "  n{} [label=\"interrupt\" shape=oval];", n.index());
            }
        }
    }
    for e in cfg.graph.edge_references() {
        let label = match e.weight() {
            CfgEdge::Goto | CfgEdge::Return => String::new(),
            CfgEdge::True => "T".into(),
            CfgEdge::False => "F".into(),
            CfgEdge::Case(Some(k)) => format!("case {k}"),
            CfgEdge::Case(None) => "default".into(),
            CfgEdge::NoReturn => "noreturn".into(),
            CfgEdge::MayInterrupt => "may stop".into(),
        };
        let style = if *e.weight() == CfgEdge::MayInterrupt {
            " style=dashed"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  n{} -> n{} [label=\"{}\"{}];",
            e.source().index(),
            e.target().index(),
            label,
            style
        );
    }
    out.push_str("}\n");
    out
}
