//! The call graph: direct calls with call-site counts, address-taken functions, linkage, and
//! which calls may stop a run (never or maybe not returning).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use petgraph::graph::{DiGraph, NodeIndex};

pub use crate::ir::direct_callees;
use crate::ir::{visit, CType, Callee, Expr, ExprKind, Linkage, Program, StmtKind, Terminator};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuncNode {
    pub name: String,
    /// True when the function is defined (lowered or skipped) in this unit.
    pub defined: bool,
    pub linkage: Linkage,
    pub address_taken: bool,
}

pub struct CallGraph {
    pub graph: DiGraph<FuncNode, u32>,
    index: HashMap<String, NodeIndex>,
    /// Functions that never return to their caller.
    pub never_returns: BTreeSet<String>,
    /// Functions that may stop the run instead of returning (includes `never_returns`).
    pub may_stop: BTreeSet<String>,
    /// Every function whose address the program takes (defined here or not), and every one a
    /// function that could not be lowered mentions.
    pub address_taken: BTreeSet<String>,
}

impl CallGraph {
    pub fn build(program: &Program) -> CallGraph {
        let mut graph = DiGraph::new();
        let mut index = HashMap::new();
        let mut address_taken: BTreeSet<String> = addresses_taken(program).into_keys().collect();
        // A function that could not be lowered may call, or take the address of, any function
        // it mentions: those have callers the graph does not see.
        for s in &program.skipped {
            address_taken.extend(s.mentions.iter().cloned());
        }
        let mut add = |graph: &mut DiGraph<FuncNode, u32>, name: &str, defined: bool, linkage| {
            *index.entry(name.to_string()).or_insert_with(|| {
                graph.add_node(FuncNode {
                    name: name.to_string(),
                    defined,
                    linkage,
                    address_taken: address_taken.contains(name),
                })
            })
        };
        for f in &program.functions {
            add(&mut graph, &f.name, true, f.linkage);
        }
        for s in &program.skipped {
            add(&mut graph, &s.name, true, Linkage::External);
        }
        let mut calls: BTreeMap<(String, String), u32> = BTreeMap::new();
        for f in &program.functions {
            for b in &f.blocks {
                for s in &b.stmts {
                    if let StmtKind::Call {
                        callee: Callee::Direct(n),
                        ..
                    } = &s.kind
                    {
                        *calls.entry((f.name.clone(), n.clone())).or_default() += 1;
                    }
                }
            }
        }
        for ((from, to), n) in &calls {
            let a = add(&mut graph, from, true, Linkage::External);
            let b = add(&mut graph, to, false, Linkage::External);
            graph.add_edge(a, b, *n);
        }
        let mut cg = CallGraph {
            graph,
            index,
            never_returns: BTreeSet::new(),
            may_stop: BTreeSet::new(),
            address_taken,
        };
        cg.never_returns = program
            .functions
            .iter()
            .filter(|f| f.ty.noreturn)
            .map(|f| f.name.clone())
            .chain(crate::libc::NEVER_RETURNS.iter().map(|s| s.to_string()))
            .collect();
        cg.may_stop = cg.compute_may_stop(program);
        cg
    }

    /// Fixpoint: a function may stop the run if it never returns, contains a never-returning
    /// end or an indirect call, or calls something that may stop; unknown externals may stop.
    fn compute_may_stop(&self, program: &Program) -> BTreeSet<String> {
        let never = &self.never_returns;
        let own = program
            .functions
            .iter()
            .map(|f| {
                let stops = never.contains(&f.name)
                    || f.blocks
                        .iter()
                        .any(|b| matches!(b.term, Terminator::NoReturn))
                    || crate::ir::calls_indirectly(f);
                (f.name.clone(), (stops, direct_callees(f)))
            })
            .collect();
        let unknown_may_stop = |n: &str| never.contains(n) || !crate::libc::always_returns(n);
        let mut may: BTreeSet<String> =
            close_over_calls(own, |a, b| *a |= *b, |n| Some(unknown_may_stop(n)))
                .into_iter()
                .filter_map(|(name, stops)| stops.then_some(name))
                .collect();
        // Functions that are not lowered (externals, skipped), and the never-returning ones.
        let lowered: BTreeSet<&str> = program.functions.iter().map(|f| f.name.as_str()).collect();
        for n in self.graph.node_weights() {
            if !lowered.contains(n.name.as_str()) && unknown_may_stop(&n.name) {
                may.insert(n.name.clone());
            }
        }
        may.extend(never.iter().cloned());
        may
    }

    pub fn node(&self, name: &str) -> Option<&FuncNode> {
        self.index.get(name).map(|i| &self.graph[*i])
    }

    /// Number of direct call sites of `name` in the program.
    pub fn call_sites(&self, name: &str) -> u32 {
        let Some(&i) = self.index.get(name) else {
            return 0;
        };
        self.graph
            .edges_directed(i, petgraph::Direction::Incoming)
            .map(|e| *e.weight())
            .sum()
    }

    /// Direct callees of `name` with their call-site counts, sorted by name.
    pub fn callees(&self, name: &str) -> Vec<(String, u32)> {
        let Some(&i) = self.index.get(name) else {
            return Vec::new();
        };
        let mut v: Vec<(String, u32)> = self
            .graph
            .edges_directed(i, petgraph::Direction::Outgoing)
            .map(|e| {
                (
                    self.graph[petgraph::visit::EdgeRef::target(&e)]
                        .name
                        .clone(),
                    *e.weight(),
                )
            })
            .collect();
        v.sort();
        v
    }

    pub fn may_not_return(&self, name: &str) -> bool {
        self.may_stop.contains(name)
    }

    /// True for a function only reached through one direct call site: defined here, static,
    /// never address-taken (the single-call-site rule of co-reached groups).
    pub fn called_once_internally(&self, name: &str) -> bool {
        self.node(name)
            .is_some_and(|n| n.defined && n.linkage == Linkage::Internal && !n.address_taken)
            && self.call_sites(name) == 1
    }

    /// Recursive groups (strongly connected components with a cycle), each sorted.
    pub fn recursive_groups(&self) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = petgraph::algo::tarjan_scc(&self.graph)
            .into_iter()
            .filter(|scc| scc.len() > 1 || self.graph.find_edge(scc[0], scc[0]).is_some())
            .map(|scc| {
                let mut v: Vec<String> = scc.iter().map(|i| self.graph[*i].name.clone()).collect();
                v.sort();
                v
            })
            .collect();
        out.sort();
        out
    }
}

/// The functions whose address the program's code or its globals' initialisers take, each
/// with the type of its first such expression.
pub fn addresses_taken(program: &Program) -> BTreeMap<String, CType> {
    let mut out = BTreeMap::new();
    let mut record = |item: visit::Item| {
        if let visit::Item::Expr(Expr {
            kind: ExprKind::FuncAddr(n),
            ty,
        }) = item
        {
            out.entry(n.clone()).or_insert_with(|| ty.clone());
        }
    };
    for f in &program.functions {
        visit::function(f, &mut record);
    }
    for g in &program.globals {
        for s in &g.init {
            visit::stmt(s, &mut record);
        }
    }
    out
}

/// Closes a per-function fact over direct calls: `own` holds each function's own value and the
/// functions it calls directly; each value absorbs its callees' (`outside` gives the value of a
/// callee `own` does not hold, `None` for nothing) until nothing changes.
pub fn close_over_calls<V: Clone + PartialEq>(
    own: BTreeMap<String, (V, BTreeSet<String>)>,
    absorb: impl Fn(&mut V, &V),
    outside: impl Fn(&str) -> Option<V>,
) -> BTreeMap<String, V> {
    let mut values: BTreeMap<String, V> = own
        .iter()
        .map(|(n, (v, _))| (n.clone(), v.clone()))
        .collect();
    loop {
        let mut changed = false;
        for (name, (_, callees)) in &own {
            let mut acc = values[name].clone();
            for c in callees {
                match values.get(c) {
                    Some(v) => absorb(&mut acc, v),
                    None => {
                        if let Some(v) = outside(c) {
                            absorb(&mut acc, &v);
                        }
                    }
                }
            }
            if acc != values[name] {
                values.insert(name.clone(), acc);
                changed = true;
            }
        }
        if !changed {
            return values;
        }
    }
}
