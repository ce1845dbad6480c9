//! Cone of influence: the background facts a question needs. A label early in a big function
//! only needs the definitions of the symbols its reach condition and predicate mention (and,
//! transitively, theirs), so each query stays proportional to what it is about.

use std::collections::{HashMap, HashSet, VecDeque};

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

/// How much floating-point work one question takes in, in the weights of
/// [`Fact::work`](super::encode::Fact): an addition, subtraction, conversion or rounding 1, a
/// multiplication 4, a division or square root 8. Each operation becomes a bit-level circuit
/// (thousands of gates for a `double` multiplication): with every operation of tot_info's
/// continued fraction `gcf` taken in, each of its questions ran to its time limit.
pub const QUESTION_FP_WORK: u32 = 8;

/// The facts a question needs ([`needed_facts`]).
pub struct Cone {
    /// The facts, by index, sorted.
    pub ids: Vec<usize>,
    /// How the question reads memory.
    pub reads: MemoryReads,
    /// Some definition of a floating-point result in the cone was left out.
    pub floats_left_out: bool,
}

/// Which definitions of floating-point results a cone takes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatChoice {
    /// Those nearest the question, up to this much work.
    Nearest(u32),
    /// Those first in the function's encoding (nearest its entry), up to this much work: a
    /// model then follows the values of the entry's floats through the first operations.
    FromEntry(u32),
}

/// The facts needed to decide a question about `roots`. With `abstract_memory`, memory reads
/// are left out of the cone (the caller treats each as an unconstrained byte). The cone is
/// walked breadth first from the roots, so that the definitions of floating-point results
/// taken in, up to `fp_work` ([`QUESTION_FP_WORK`] or 0), are those nearest the question; a
/// definition left out leaves its result any value, which over-approximates the program (a
/// proof is still a proof).
pub fn needed_facts(
    terms: &Terms,
    facts: &[Fact],
    index: &FactIndex,
    roots: &[T],
    abstract_memory: bool,
    fp_work: u32,
) -> Cone {
    let mut work = 0;
    walk(terms, facts, index, roots, abstract_memory, &mut |_, w| {
        within(&mut work, w, fp_work)
    })
}

/// Adds `w` to `work` when the sum stays within `cap`; says whether it did.
fn within(work: &mut u32, w: u32, cap: u32) -> bool {
    let sum = work.saturating_add(w);
    let fits = sum <= cap;
    if fits {
        *work = sum;
    }
    fits
}

/// [`needed_facts`] with the floating-point definitions chosen by `choice`.
pub fn needed_facts_choosing(
    terms: &Terms,
    facts: &[Fact],
    index: &FactIndex,
    roots: &[T],
    abstract_memory: bool,
    choice: FloatChoice,
) -> Cone {
    match choice {
        FloatChoice::Nearest(w) => needed_facts(terms, facts, index, roots, abstract_memory, w),
        FloatChoice::FromEntry(fp_work) => {
            // Every definition the whole cone reaches, then those first in the encoding.
            let mut reached: Vec<usize> = Vec::new();
            walk(terms, facts, index, roots, abstract_memory, &mut |fi, _| {
                reached.push(fi);
                true
            });
            reached.sort_unstable();
            let mut work = 0;
            let chosen: HashSet<usize> = reached
                .into_iter()
                .filter(|&fi| within(&mut work, facts[fi].work, fp_work))
                .collect();
            walk(terms, facts, index, roots, abstract_memory, &mut |fi, _| {
                chosen.contains(&fi)
            })
        }
    }
}

/// The cone of `roots`; `take(fact, work)` says whether a definition of a floating-point
/// result (a fact with work) is taken in.
fn walk(
    terms: &Terms,
    facts: &[Fact],
    index: &FactIndex,
    roots: &[T],
    abstract_memory: bool,
    take: &mut dyn FnMut(usize, u32) -> bool,
) -> Cone {
    let mut floats_left_out = false;
    let mut reads = MemoryReads::None;
    let mut seen: HashSet<T> = HashSet::new();
    let mut vars: HashSet<T> = HashSet::new();
    let mut included: HashSet<usize> = HashSet::new();
    let mut queue: VecDeque<T> = roots.iter().copied().collect();
    let mut operands: Vec<T> = Vec::new();
    while let Some(t) = queue.pop_front() {
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
            // Facts about the read itself (a loop fact's bound on an array cell).
            for &fi in index.by_var.get(&t).into_iter().flatten() {
                if included.insert(fi) {
                    queue.push_back(facts[fi].fact);
                }
            }
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
                    if f.work > 0 && !take(fi, f.work) {
                        floats_left_out = true;
                        continue;
                    }
                    included.insert(fi);
                    queue.push_back(f.fact);
                }
            }
            continue;
        }
        node.push_operands(&mut operands);
        queue.extend(operands.drain(..));
    }
    let mut ids: Vec<usize> = included.into_iter().collect();
    ids.sort_unstable();
    Cone {
        ids,
        reads,
        floats_left_out,
    }
}
