//! Cone of influence: the background facts a question needs. A label early in a big function
//! only needs the definitions of the symbols its reach condition and predicate mention (and,
//! transitively, theirs), so each query stays proportional to what it is about.

use std::collections::{HashMap, HashSet};

use super::encode::Fact;
use super::term::{Node, Terms, T};

/// Which facts mention which symbol.
pub struct FactIndex {
    by_var: HashMap<T, Vec<usize>>,
}

impl FactIndex {
    pub fn new(facts: &[Fact]) -> FactIndex {
        let mut by_var: HashMap<T, Vec<usize>> = HashMap::new();
        for (i, f) in facts.iter().enumerate() {
            for v in &f.about {
                by_var.entry(*v).or_default().push(i);
            }
        }
        FactIndex { by_var }
    }
}

/// How a question reads memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryReads {
    None,
    /// Only reads of initial memories (no write before them) at constant addresses: reading
    /// each as an unconstrained byte loses nothing, since distinct terms are distinct cells.
    InitialAtConstants,
    Other,
}

/// The facts (by index, sorted) needed to decide a question about `roots`, and how the
/// question reads memory. With `abstract_memory`, memory reads are left out of the cone (the
/// caller treats each as an unconstrained byte).
pub fn needed_facts(
    terms: &Terms,
    facts: &[Fact],
    index: &FactIndex,
    roots: &[T],
    abstract_memory: bool,
) -> (Vec<usize>, MemoryReads) {
    let mut reads = MemoryReads::None;
    let mut seen: HashSet<T> = HashSet::new();
    let mut vars: HashSet<T> = HashSet::new();
    let mut included: HashSet<usize> = HashSet::new();
    let mut stack: Vec<T> = roots.to_vec();
    while let Some(t) = stack.pop() {
        if !seen.insert(t) {
            continue;
        }
        let node = terms.node(t);
        if let Node::Select { mem, addr } = *node {
            let exact = matches!(terms.node(mem), Node::Var { .. })
                && terms.as_const(addr).is_some()
                && !index.by_var.contains_key(&mem);
            reads = match (reads, exact) {
                (MemoryReads::Other, _) | (_, false) => MemoryReads::Other,
                _ => MemoryReads::InitialAtConstants,
            };
            if abstract_memory {
                continue;
            }
        }
        if let Node::Var { .. } = node {
            vars.insert(t);
            if let Some(fs) = index.by_var.get(&t) {
                for &fi in fs {
                    if included.contains(&fi) {
                        continue;
                    }
                    let f = &facts[fi];
                    if f.needs_all && !f.about.iter().all(|v| vars.contains(v)) {
                        continue;
                    }
                    included.insert(fi);
                    stack.push(f.fact);
                }
            }
            continue;
        }
        node.push_operands(&mut stack);
    }
    let mut out: Vec<usize> = included.into_iter().collect();
    out.sort_unstable();
    (out, reads)
}
