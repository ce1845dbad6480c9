//! Encodes one IR function as a formula: loop-cut CFG, passive SSA, a reachability condition per
//! block, byte-addressed memory, and, for every label, its reach condition and predicate.
//!
//! Soundness rules, each applied where the code meets it:
//! - Loops: at the head of every loop, everything the loop may write gets a fresh value; back
//!   edges end the path. An irreducible loop (entered other than through its head) havocs
//!   everything at its heads. Small loops, and loops with a small constant bound on their trip
//!   count, first have their first iterations encoded exactly as copies of their body
//!   ([`crate::cfg::unroll`]); the loop itself, havocked at its head, follows them and stands
//!   for every later iteration. A label occurs once per copy and is covered when any
//!   occurrence is ([`merge_occurrences`]).
//! - Memory: non-address-taken scalar locals are SSA values. Objects reached by name only
//!   ([`super::regions`]: locals whose address is never taken, and globals under the rules
//!   there) each live in a byte-addressed memory of their own, at offset 0, so that writes to
//!   other objects never appear in their reads, and reads at constant offsets fold to the value
//!   written. Every other object (address-taken locals and globals, string literals, what
//!   pointers reach) lives in one shared byte-addressed memory at a symbolic, non-null, aligned
//!   base address, disjoint from the other objects of the function. Pointer parameters and
//!   initial memory are unconstrained.
//! - Calls: a callee that may write memory (program function by summary, unknown external,
//!   indirect call) makes the shared memory fresh, and the memories of the globals it may
//!   write by name ([`super::regions::GlobalWrites`]); the result is a fresh value.
//! - Division by zero, out-of-range shifts, floating point and fallbacks give fresh values.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::pointsto::{PointsTo, Writes};
use super::regions::{GlobalWrites, Regions};
use super::term::{BvOp, CmpOp, Sort, Terms, T};
use super::Summaries;
use crate::cfg::unroll::{self, Peeled};
use crate::ir::*;

/// Largest object copied or initialised byte by byte; beyond it, memory is havocked instead.
const MAX_BYTEWISE: u64 = 256;
/// Largest zero-initialised object written byte by byte.
const MAX_ZERO_INIT: u64 = 1024;
/// Above this many memory objects, pairwise disjointness is asserted for the first ones only.
const MAX_DISJOINT_OBJECTS: usize = 300;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct EncodeConfig {
    /// Whole-program view: `main` starts with initialised globals.
    pub entry_main: bool,
    /// Encode small callees in place of their calls.
    pub inline: bool,
    /// Functions called from exactly one place: when the function being encoded inlines one of
    /// them directly, the labels of the inlined copy are recorded too (in context).
    pub context_callees: BTreeSet<String>,
    /// Functions whose every caller is known: the labels of each of their inlined copies are
    /// recorded with the calls that lead there ([`FunctionVc::copies`]), to be decided in
    /// that calling context.
    #[serde(default)]
    pub context_functions: BTreeSet<String>,
    /// Deliberately unsound, for tests only: every object gets a memory of its own, as if no
    /// pointer could reach it. The soundness harness must catch the false claims it makes.
    #[serde(default)]
    pub alias_blind: bool,
    /// Deliberately unsound, for tests only: the region analysis forgets that unknown code may
    /// keep the pointers it is given. The soundness harness must catch the false claims it makes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub escape_blind: bool,
    /// Effects of functions defined in other files of the project, by name (`project`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub externals: BTreeMap<String, super::ExternalEffects>,
}

impl Default for EncodeConfig {
    fn default() -> Self {
        EncodeConfig {
            entry_main: false,
            inline: true,
            context_callees: BTreeSet::new(),
            context_functions: BTreeSet::new(),
            alias_blind: false,
            escape_blind: false,
            externals: BTreeMap::new(),
        }
    }
}

/// The encoding of one label: reached at a state where `reach` holds; covered if also `pred`.
#[derive(Clone, Debug)]
pub struct LabelVc {
    pub id: u64,
    pub block: BlockId,
    pub reach: T,
    pub pred: T,
}

/// A call on the way from the encoded function down to an inlined copy: the calling function,
/// and the block and statement index of the call in it.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct CallSite {
    pub caller: String,
    pub block: u32,
    pub stmt: u32,
}

/// The labels of one inlined copy of a function, encoded in the context of the calls that
/// lead to it (`path[0]` is a call in the encoded function).
#[derive(Clone, Debug)]
pub struct InlinedCopy {
    pub path: Vec<CallSite>,
    pub function: String,
    pub labels: Vec<LabelVc>,
}

/// A background fact and the symbols it is about: it is needed by a question only when its
/// symbols occur in that question's cone of influence (any of them, or all for `needs_all`).
#[derive(Clone, Debug)]
pub struct Fact {
    pub about: Vec<T>,
    pub needs_all: bool,
    pub fact: T,
}

/// A function encoded once, to be asked many questions.
pub struct FunctionVc {
    pub terms: Terms,
    /// Background facts (object layout, passive SSA definitions).
    pub facts: Vec<Fact>,
    pub labels: Vec<LabelVc>,
    /// Labels of called-once callees, encoded in their inlined copy in this function.
    pub context_labels: Vec<LabelVc>,
    /// Labels of every inlined copy of a function of [`EncodeConfig::context_functions`].
    pub copies: Vec<InlinedCopy>,
    /// The objects the encoding touched, by memory: each with a memory of its own, and those
    /// in the shared memory (names as `function.local`, `global`, `"string"`; sorted), for `-v`.
    pub own_objects: Vec<String>,
    pub shared_objects: Vec<String>,
    /// The values of the root function's parameters at its entry, in order (a parameter
    /// living in memory has none): what a caller chooses, for witnesses of coverage.
    pub inputs: Vec<T>,
    /// Functions some encoded direct call of which was not inlined (too big, past the
    /// inlining budget, too deep, recursive): their executions there are not in the encoding.
    pub opaque_calls: BTreeSet<String>,
    /// Which symbols stand for the entry state and which for over-approximations.
    pub exactness: Exactness,
}

/// The encoding's symbols sorted by what they stand for, so that a model can be told to be a
/// real run. A symbol is either part of the encoded function's entry state (parameters and
/// other locals at entry, the initial memories, objects' and functions' addresses), defined
/// by facts from other terms (φ, reached), or an over-approximation: everything else (a havoc
/// at a loop cut or a call, a call's result, a fresh value for what is not modelled). A model
/// of a term none of whose symbols is an over-approximation is a run from its entry state:
/// every step on the way is encoded exactly.
#[derive(Default)]
pub struct Exactness {
    entry: HashSet<T>,
    defined: HashMap<T, Vec<T>>,
}

impl Exactness {
    /// Does `root` depend on the entry state only (through terms and the facts that define
    /// its φ symbols), with no over-approximating symbol on the way?
    pub fn exact(&self, terms: &Terms, root: T) -> bool {
        let mut seen: HashSet<T> = HashSet::new();
        let mut todo = vec![root];
        while let Some(t) = todo.pop() {
            if !seen.insert(t) {
                continue;
            }
            match terms.node(t) {
                super::term::Node::Var { .. } => {
                    if self.entry.contains(&t) {
                        continue;
                    }
                    match self.defined.get(&t) {
                        Some(facts) => todo.extend(facts.iter().copied()),
                        None => return false,
                    }
                }
                node => node.push_operands(&mut todo),
            }
        }
        true
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum MemObj {
    /// A local of one activation: the root function is instance 0, each inlined call gets its
    /// own.
    Local(u32, LocalId),
    Global(GlobalId),
    Str(u32),
    /// The memory of a region of [`super::pointsto`]: a class of address-taken locals and
    /// string literals that only the encoding's own pointers reach (never an object).
    Region(u32),
}

#[derive(Clone)]
struct State {
    /// SSA value of each local (`None` for locals living in memory).
    vars: Vec<Option<T>>,
    /// The shared memory.
    mem: T,
    /// Memories of the objects reached by name only that this path has written (the others
    /// hold their initial memory, [`Enc::own_initial`]).
    own: BTreeMap<MemObj, T>,
}

/// Inlining limits: small, non-recursive callees are encoded in place of their call, so that
/// their effects and return values are exact instead of fresh.
const MAX_INLINE_DEPTH: usize = 2;
pub const MAX_INLINE_BLOCKS: usize = 40;
/// Functions decided in their calling contexts ([`EncodeConfig::context_functions`]) are
/// inlined up to this size: each copy answers questions of its own.
const MAX_CONTEXT_INLINE_BLOCKS: usize = 120;
const INLINE_BUDGET_STMTS: usize = 1500;

struct Enc<'a> {
    prog: &'a Program,
    /// The function whose body is being encoded: the root, or a callee inlined at a call.
    f: &'a Function,
    in_memory: Vec<bool>,
    /// Locals of `f` with a memory of their own (in memory, and reached by name only).
    own_memory: Vec<bool>,
    alias_blind: bool,
    /// Globals reached by name only in this encoding.
    named_globals: BTreeSet<GlobalId>,
    /// Every object a statement wrote in a memory of its own: with the keys of `own_init` (those
    /// read), the objects `-v` lists. Havocs at loop heads and calls do not count.
    own_seen: BTreeSet<MemObj>,
    /// The function of each activation (the root is 0).
    instance_fns: Vec<&'a Function>,
    /// The initial memory of each object with a memory of its own.
    own_init: HashMap<MemObj, T>,
    /// Activation of `f`: 0 for the root, a new number for each inlined call.
    instance: u32,
    sums: &'a Summaries,
    functions: HashMap<&'a str, &'a Function>,
    inline_stack: Vec<&'a str>,
    inline_budget: usize,
    /// Functions some encoded direct call of which was not inlined.
    opaque_calls: BTreeSet<String>,
    exactness: Exactness,
    n_instances: u32,
    /// Labels are recorded in the root function's own body, and in called-once callees
    /// inlined directly into it (into `context_labels`).
    record_labels: bool,
    context_callees: &'a BTreeSet<String>,
    context_labels: Vec<LabelVc>,
    /// The current activation is a called-once callee inlined directly into the root.
    in_called_once_copy: bool,
    context_functions: &'a BTreeSet<String>,
    /// The calls from the root down to the current activation.
    call_path: Vec<CallSite>,
    /// The copy (index into `copies`) the current activation's labels go to, if recorded.
    copy: Option<usize>,
    copies: Vec<InlinedCopy>,
    /// The statement being encoded, within `cur_block` (calls record it).
    cur_stmt: u32,
    t: Terms,
    facts: Vec<Fact>,
    bases: HashMap<MemObj, T>,
    objects: Vec<(T, u64, u64)>,
    func_addrs: HashMap<String, T>,
    labels: Vec<LabelVc>,
    /// The block being encoded (labels record it).
    cur_block: BlockId,
    /// The block being encoded runs at most once per run of the root: it is on no cycle of
    /// its function, and every call on the way down to the current activation is too (see
    /// [`Enc::declare_uninitialised`]).
    cur_once: bool,
    /// Every call on the way down to the current activation runs at most once per run of the
    /// root.
    outer_once: bool,
    /// The root's parameters at entry ([`FunctionVc::inputs`]).
    inputs: Vec<T>,
    /// Which regions address-taken locals, string literals and dereferences are in.
    pts: PointsTo,
    /// When to give the encoding up ([`encode_until`]), and whether it was.
    deadline: Option<std::time::Instant>,
    out_of_time: bool,
}

/// The locals of `f` with a memory of their own: in memory and reached by name only.
fn own_memory_locals(f: &Function, in_memory: &[bool], alias_blind: bool) -> Vec<bool> {
    let named = if alias_blind {
        vec![true; f.locals.len()]
    } else {
        Regions::named_only_locals(f)
    };
    in_memory.iter().zip(named).map(|(m, n)| *m && n).collect()
}

fn memory_locals(f: &Function) -> Vec<bool> {
    f.locals
        .iter()
        .map(|l| l.address_taken || l.ty.is_aggregate() || matches!(l.ty, CType::Unknown))
        .collect()
}

pub fn encode(prog: &Program, f: &Function, sums: &Summaries, config: &EncodeConfig) -> FunctionVc {
    encode_until(prog, f, sums, config, None).expect("an encoding without a deadline ends")
}

/// [`encode`], given up when `deadline` passes (checked after the points-to analysis and at
/// every block encoded): `None` then, and no part of the encoding is returned. A partial one
/// would be unsound to ask: the labels of the blocks it did not reach would read as
/// unreachable.
pub fn encode_until(
    prog: &Program,
    f: &Function,
    sums: &Summaries,
    config: &EncodeConfig,
    deadline: Option<std::time::Instant>,
) -> Option<FunctionVc> {
    let in_memory = memory_locals(f);
    let named_globals = (0..prog.globals.len() as u32)
        .map(GlobalId)
        .filter(|g| {
            config.alias_blind
                || sums
                    .regions
                    .global_is_named_only(prog, *g, &f.name, config.entry_main)
        })
        .collect();
    let own_memory = own_memory_locals(f, &in_memory, config.alias_blind);
    let pts = if config.alias_blind {
        PointsTo::inactive()
    } else {
        let elsewhere = config.externals.keys().cloned().collect();
        PointsTo::of(prog, &sums.pointers, f, &elsewhere, config.escape_blind)
    };
    if deadline.is_some_and(|d| std::time::Instant::now() > d) {
        return None;
    }
    let mut e = Enc {
        prog,
        f,
        in_memory,
        own_memory,
        alias_blind: config.alias_blind,
        named_globals,
        own_init: HashMap::new(),
        own_seen: BTreeSet::new(),
        instance_fns: vec![f],
        instance: 0,
        sums,
        functions: prog
            .functions
            .iter()
            .map(|g| (g.name.as_str(), g))
            .collect(),
        inline_stack: vec![f.name.as_str()],
        inline_budget: if config.inline {
            INLINE_BUDGET_STMTS
        } else {
            0
        },
        opaque_calls: BTreeSet::new(),
        exactness: Exactness::default(),
        n_instances: 1,
        record_labels: true,
        context_callees: &config.context_callees,
        context_labels: Vec::new(),
        in_called_once_copy: false,
        context_functions: &config.context_functions,
        call_path: Vec::new(),
        copy: None,
        copies: Vec::new(),
        cur_stmt: 0,
        t: Terms::default(),
        facts: Vec::new(),
        bases: HashMap::new(),
        objects: Vec::new(),
        func_addrs: HashMap::new(),
        labels: Vec::new(),
        cur_block: f.entry,
        cur_once: true,
        outer_once: true,
        inputs: Vec::new(),
        pts,
        deadline,
        out_of_time: false,
    };
    e.run(config);
    if e.out_of_time {
        return None;
    }
    e.layout_constraints();
    // The objects of each region, by name; the others with a base are in the shared memory.
    let mut members: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut shared = Vec::new();
    for &o in e.bases.keys() {
        match e.region_of_object(o) {
            Some(r) => members.entry(r).or_default().push(e.object_name(o)),
            None => shared.push(o),
        }
    }
    let name_all = |objs: Vec<MemObj>| -> Vec<String> {
        let mut v: Vec<String> = objs
            .into_iter()
            .map(|o| match o {
                MemObj::Region(r) => {
                    let mut names = members.get(&r).cloned().unwrap_or_default();
                    names.sort();
                    names.dedup();
                    format!("[{}]", names.join(" "))
                }
                _ => e.object_name(o),
            })
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let own_objects = name_all(e.own_init.keys().chain(&e.own_seen).copied().collect());
    let shared_objects = name_all(shared);
    // A label in a peeled loop, or in a callee inlined there, occurs once per copy.
    let labels = merge_occurrences(&mut e.t, e.labels);
    let context_labels = merge_occurrences(&mut e.t, e.context_labels);
    let copies = merge_copies(&mut e.t, e.copies);
    Some(FunctionVc {
        terms: e.t,
        facts: e.facts,
        labels,
        context_labels,
        copies,
        own_objects,
        shared_objects,
        inputs: e.inputs,
        opaque_calls: e.opaque_calls,
        exactness: e.exactness,
    })
}

/// One occurrence per label (and block), in first-occurrence order: a label encoded several
/// times (in the peeled copies of a loop, or in several inlined copies of a callee at one call
/// site) is reached when any occurrence is, and covered when any occurrence is reached with its
/// predicate true. So its questions are about whole runs: infeasible when no occurrence can be
/// covered; always true when a run that reaches it covers it; and one label implies another
/// when every run covering the first covers the second, which is what coverage means.
fn merge_occurrences(t: &mut Terms, labels: Vec<LabelVc>) -> Vec<LabelVc> {
    group_in_order(labels, |l| (l.id, l.block))
        .into_iter()
        .map(|((id, block), mut occs)| {
            if occs.len() == 1 {
                return occs.pop().expect("one occurrence");
            }
            let reaches: Vec<T> = occs.iter().map(|l| l.reach).collect();
            let covered: Vec<T> = occs.iter().map(|l| t.and2(l.reach, l.pred)).collect();
            LabelVc {
                id,
                block,
                reach: t.or(&reaches),
                pred: t.or(&covered),
            }
        })
        .collect()
}

/// One copy per call path: a call in a peeled loop is inlined once per copy of the loop, and
/// the copies of one call site are one calling context (their labels merged as in
/// [`merge_occurrences`]).
fn merge_copies(t: &mut Terms, copies: Vec<InlinedCopy>) -> Vec<InlinedCopy> {
    group_in_order(copies, |c| c.path.clone())
        .into_iter()
        .map(|(_, same_path)| {
            let mut rest = same_path.into_iter();
            let mut copy = rest.next().expect("a group has a copy");
            copy.labels.extend(rest.flat_map(|c| c.labels));
            copy.labels = merge_occurrences(t, std::mem::take(&mut copy.labels));
            copy
        })
        .collect()
}

/// `items` grouped by `key`, the groups in the order their keys first occur.
fn group_in_order<K: Eq + std::hash::Hash + Clone, V>(
    items: Vec<V>,
    key: impl Fn(&V) -> K,
) -> Vec<(K, Vec<V>)> {
    let mut groups: Vec<(K, Vec<V>)> = Vec::new();
    let mut at: HashMap<K, usize> = HashMap::new();
    for item in items {
        let k = key(&item);
        match at.get(&k) {
            Some(&g) => groups[g].1.push(item),
            None => {
                at.insert(k.clone(), groups.len());
                groups.push((k, vec![item]));
            }
        }
    }
    groups
}

/// The sign of the step when `src`, assigned to local `l` of type `ty`, is `l + c` or `l - c`
/// for a constant `c > 0` computed in `ty` itself, a signed integer type at least as wide as
/// `int`: such a step cannot wrap without signed overflow, which is undefined behaviour, and
/// claims hold for executions without it. So a loop whose every write to `l` steps it one
/// way keeps `l` on that side of its value at loop entry, at every iteration: the fact the
/// loop head adds to the fresh value of `l`. (A narrower type is promoted, and converting the
/// sum back may wrap without undefined behaviour; so may an unsigned type: neither counts.)
fn counter_step(src: &Expr, l: LocalId, ty: &CType) -> Option<i8> {
    let CType::Int(k) = ty else { return None };
    if !k.is_signed() || k.bits() < 32 || &src.ty != ty {
        return None;
    }
    // A cast to the same type changes nothing.
    let strip = |e: &'_ Expr| -> Expr {
        let mut e = e.clone();
        while let ExprKind::Cast(inner) = &e.kind {
            if inner.ty != *ty {
                break;
            }
            e = (**inner).clone();
        }
        e
    };
    let src = strip(src);
    let ExprKind::Binary(op, a, b) = &src.kind else {
        return None;
    };
    let is_l = |e: &Expr| matches!(&strip(e).kind, ExprKind::Read(LValue::Var(VarRef::Local(x))) if *x == l);
    let constant = |e: &Expr| match strip(e).kind {
        ExprKind::Const(c) if c != 0 => Some(c),
        _ => None,
    };
    let c = match op {
        BinOp::Add if is_l(a) => constant(b)?,
        BinOp::Add if is_l(b) => constant(a)?,
        BinOp::Sub if is_l(a) => -constant(b)?,
        _ => return None,
    };
    Some(if c > 0 { 1 } else { -1 })
}

/// Loops whose trip count is bounded by at most this many are peeled that many times (then
/// their tail is never entered, and the loop is encoded exactly).
const MAX_EXACT_TRIPS: i128 = 8;
/// Other loops of at most this many blocks are peeled once.
const MAX_PEEL_ONCE_BLOCKS: usize = 16;
/// Peeling adds at most this many nodes to a function's graph. Enough for a small function to
/// peel a nest of two bounded loops entirely (a loop of 4 trips inside another is 25 copies of
/// the inner body); a nest peeled only inside has its outer head havoc what the nest computed.
/// History on the calling-context harness (200 programs): a floor of 64 nodes and a cap of
/// half the function up to 128 proved 90.5% of the infeasible labels and pruned 74.7% of the
/// redundant ones; a floor of 160 and a cap of 256, 91.7% and 80.5% (zlib CC: the same ledgers
/// in the same time, its loops being rarely bounded). With the floor of 160, a function of 88
/// blocks with two nests of two 3-trip loops peeled one nest whole and only the inner loop of
/// the other (seed 147), whose havocked outer loop left satisfiable a label that no run
/// covers, and a feasible label was pruned as subsumed by it; with 256 for every function:
/// 95.0% instead of 94.3% of the infeasible labels, in the same time.
const MAX_PEELED_EXTRA_NODES: usize = 256;

/// The most iterations the loop headed by `h` can run, when its head tests `i < e` or
/// `i <= e` for a local `i` that every predecessor outside the loop sets to a constant and
/// that the loop only increases ([`counter_step`]), and `e` has a constant upper bound
/// ([`upper_bound`]); `None` otherwise or above [`MAX_EXACT_TRIPS`]. A heuristic for how many
/// iterations to peel: a wrong answer costs precision, never soundness.
fn exact_trips(f: &Function, forest: &crate::cfg::loops::LoopForest, h: BlockId) -> Option<u8> {
    let body = forest.body(h)?;
    let Terminator::Branch {
        cond,
        then_bb,
        else_bb,
    } = &f.block(h).term
    else {
        return None;
    };
    if !body.contains(then_bb) || body.contains(else_bb) {
        return None;
    }
    let ExprKind::Binary(op @ (BinOp::Lt | BinOp::Le), a, e) = &strip_casts(cond).kind else {
        return None;
    };
    let ExprKind::Read(LValue::Var(VarRef::Local(i))) = strip_casts(a).kind else {
        return None;
    };
    let ty = &f.local(i).ty;
    let writes_i =
        |s: &Stmt| matches!(written_place(s), Some(LValue::Var(VarRef::Local(x))) if *x == i);
    for b in body {
        for s in &f.block(*b).stmts {
            if writes_i(s) {
                let StmtKind::Assign { src, .. } = &s.kind else {
                    return None;
                };
                if counter_step(src, i, ty) != Some(1) {
                    return None;
                }
            }
        }
    }
    let mut start: Option<i128> = None;
    for (p, blk) in f.blocks.iter().enumerate() {
        let p = BlockId(p as u32);
        if body.contains(&p) || !f.successors(p).contains(&h) {
            continue;
        }
        let last = blk.stmts.iter().rev().find(|s| writes_i(s))?;
        let StmtKind::Assign { src, .. } = &last.kind else {
            return None;
        };
        let c = strip_casts(src).as_const()?;
        start = Some(start.map_or(c, |s: i128| s.min(c)));
    }
    let trips = upper_bound(e)? - start? + i128::from(*op == BinOp::Le);
    (1..=MAX_EXACT_TRIPS)
        .contains(&trips)
        .then_some(trips as u8)
}

/// The copies to peel for a loop that runs at most `trips` times: one more than its
/// iterations, since the head's test after the last iteration must be exact too (in the tail,
/// the head's state is havocked before the test).
fn copies_for_trips(trips: u8) -> u8 {
    trips + 1
}

/// The place a statement assigns (an assignment, a havoc, a zero-initialisation, a call's
/// result); other effects (calls' writes through memory) are not places.
fn written_place(s: &Stmt) -> Option<&LValue> {
    match &s.kind {
        StmtKind::Assign { dst, .. } | StmtKind::Havoc { dst, .. } | StmtKind::ZeroInit { dst } => {
            Some(dst)
        }
        StmtKind::Call { dst, .. } => dst.as_ref(),
        StmtKind::HavocMemory(_) | StmtKind::Assume(_) | StmtKind::Label { .. } => None,
    }
}

/// `e` without the conversions around it.
fn strip_casts(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast(inner) => strip_casts(inner),
        _ => e,
    }
}

/// A constant no value of `e` exceeds, for constants, masks by a non-negative constant and
/// remainders by a positive constant.
fn upper_bound(e: &Expr) -> Option<i128> {
    match &e.kind {
        ExprKind::Const(c) => Some(*c),
        ExprKind::Cast(inner) => upper_bound(inner),
        ExprKind::Binary(BinOp::BitAnd, a, b) => [a, b]
            .iter()
            .filter_map(|x| strip_casts(x).as_const())
            .filter(|c| *c >= 0)
            .min(),
        ExprKind::Binary(BinOp::Rem, _, b) => {
            strip_casts(b).as_const().filter(|c| *c > 0).map(|c| c - 1)
        }
        _ => None,
    }
}

/// Width in bits of a scalar value of type `ty` (pointers are 64-bit).
pub fn width_of(ty: &CType) -> u32 {
    match ty {
        CType::Int(k) => k.bits(),
        CType::Float(f) => f.size() as u32 * 8,
        CType::Void => 8,
        _ => 64,
    }
}

fn is_signed(ty: &CType) -> bool {
    matches!(ty, CType::Int(k) if k.is_signed())
}

impl<'a> Enc<'a> {
    fn fact(&mut self, about: &[T], fact: T) {
        self.facts.push(Fact {
            about: about.to_vec(),
            needs_all: false,
            fact,
        });
    }

    fn fresh(&mut self, width: u32, hint: &str) -> T {
        self.t.var(Sort::Bv(width), hint)
    }

    fn fresh_of(&mut self, ty: &CType, hint: &str) -> T {
        let w = width_of(ty);
        self.fresh(w, hint)
    }

    fn local_width(&self, id: LocalId) -> u32 {
        width_of(&self.f.local(id).ty)
    }

    fn base(&mut self, obj: MemObj) -> T {
        if let Some(&b) = self.bases.get(&obj) {
            return b;
        }
        let (ty, hint) = match obj {
            MemObj::Local(_, l) => (
                Some(self.f.local(l).ty.clone()),
                self.f.local(l).name.clone(),
            ),
            MemObj::Global(g) => {
                let g = &self.prog.globals[g.0 as usize];
                (Some(g.ty.clone()), g.name.clone())
            }
            MemObj::Str(i) => (None, format!("str{i}")),
            MemObj::Region(r) => (None, format!("region{r}")),
        };
        let layout = self.prog.layout();
        let (size, align) = match (&ty, obj) {
            (_, MemObj::Str(i)) => (self.prog.strings[i as usize].len() as u64, 1),
            (Some(ty), _) => (
                layout.size_of(ty).unwrap_or(1).max(1),
                layout.align_of(ty).unwrap_or(1).max(1),
            ),
            (None, _) => (1, 1),
        };
        let b = self.t.var(Sort::Bv(64), &format!("&{hint}"));
        // String literals may share storage (equal ones, or one the tail of another).
        if !matches!(obj, MemObj::Str(_) | MemObj::Region(_)) {
            self.t.register_object(b, size);
        }
        self.exactness.entry.insert(b);
        self.objects.push((b, size, align));
        self.bases.insert(obj, b);
        b
    }

    /// Objects are non-null, do not wrap around, are aligned and do not overlap.
    fn layout_constraints(&mut self) {
        let objects = self.objects.clone();
        for &(b, size, align) in &objects {
            let zero = self.t.bv(64, 0);
            let is_null = self.t.eq(b, zero);
            let non_null = self.t.not(is_null);
            let limit = self.t.bv(64, u128::from(u64::MAX - size));
            let no_wrap = self.t.cmp(CmpOp::Ule, b, limit);
            self.fact(&[b], non_null);
            self.fact(&[b], no_wrap);
            if align > 1 && align.is_power_of_two() {
                let m = self.t.bv(64, u128::from(align - 1));
                let low = self.t.bin(BvOp::And, b, m);
                let aligned = self.t.eq(low, zero);
                self.fact(&[b], aligned);
            }
        }
        let n = objects.len().min(MAX_DISJOINT_OBJECTS);
        for i in 0..n {
            for j in i + 1..n {
                let (bi, si, _) = objects[i];
                let (bj, sj, _) = objects[j];
                let si_t = self.t.bv(64, u128::from(si));
                let sj_t = self.t.bv(64, u128::from(sj));
                let end_i = self.t.bin(BvOp::Add, bi, si_t);
                let end_j = self.t.bin(BvOp::Add, bj, sj_t);
                let before = self.t.cmp(CmpOp::Ule, end_i, bj);
                let after = self.t.cmp(CmpOp::Ule, end_j, bi);
                let disjoint = self.t.or2(before, after);
                self.facts.push(Fact {
                    about: vec![bi, bj],
                    needs_all: true,
                    fact: disjoint,
                });
            }
        }
    }

    // ----- the function -------------------------------------------------------------------

    fn run(&mut self, config: &EncodeConfig) {
        let f = self.f;
        let mem0 = self.t.var(Sort::Mem, "mem0");
        self.exactness.entry.insert(mem0);
        let mut init = self.initial_state(mem0, BTreeMap::new());
        self.inputs = f
            .params
            .iter()
            .filter_map(|p| init.vars[p.0 as usize])
            .collect();
        let tru = self.t.tru();
        if config.entry_main && f.name == "main" {
            for g in &self.prog.globals {
                for s in &g.init {
                    self.stmt(s, &mut init, tru);
                }
            }
        }
        let _returns = self.encode_body(init, tru);
    }

    /// The state at entry of the current frame: parameters and other SSA locals fresh.
    fn initial_state(&mut self, mem: T, own: BTreeMap<MemObj, T>) -> State {
        let f = self.f;
        let mut st = State {
            vars: Vec::with_capacity(f.locals.len()),
            mem,
            own,
        };
        for (i, l) in f.locals.iter().enumerate() {
            if self.in_memory[i] {
                st.vars.push(None);
            } else {
                let v = self.fresh_of(&l.ty, &l.name);
                self.exactness.entry.insert(v);
                st.vars.push(Some(v));
            }
        }
        st
    }

    /// Encodes the current frame's body from `init` under path condition `entry_pc`; returns
    /// the (path condition, state, returned value) of every `return` reached.
    fn encode_body(&mut self, init: State, entry_pc: T) -> Vec<(T, State, Option<T>)> {
        let f = self.f;
        let forest = crate::cfg::loops::LoopForest::of(f);
        let havoc_sets = self.loop_havoc_sets(&forest);
        let peeled = Peeled::new(f, &forest, &self.peel_counts(&forest));
        let mut returns = Vec::new();
        let mut init = Some(init);
        // Outgoing edges of encoded nodes: target node -> [(condition, state)].
        let mut incoming: HashMap<usize, Vec<(T, State)>> = HashMap::new();
        let mut visited: HashSet<BlockId> = HashSet::new();
        for &n in &peeled.order {
            if self.past_deadline() {
                // The whole encoding is dropped (see `encode_until`).
                self.out_of_time = true;
                break;
            }
            let b = peeled.block(n);
            self.cur_block = b;
            let (mut pc, mut st) = if n == peeled.entry() {
                match init.take() {
                    Some(st) => (entry_pc, st),
                    None => continue,
                }
            } else {
                match incoming.remove(&n) {
                    Some(ins) => self.merge(b, ins),
                    None => continue,
                }
            };
            visited.insert(b);
            self.cur_once = self.outer_once
                && forest.heads_containing(b).is_empty()
                && !forest.in_irreducible(b);
            // The exact copies of a peeled loop's first iterations keep their state; the loop
            // itself (its tail) stands for every later iteration and forgets what it writes.
            let havoc = havoc_sets.get(&b).filter(|_| !peeled.is_exact_head(n));
            if let Some(set) = havoc {
                for &r in &set.regions {
                    let m = self.t.var(Sort::Mem, "region_loop");
                    st.own.insert(MemObj::Region(r), m);
                }
                for &l in &set.locals {
                    let w = self.local_width(l);
                    let at_entry = st.vars[l.0 as usize];
                    let fresh = self.fresh(w, "loop");
                    // A counter only stepped one way by the loop stays on that side of its
                    // value at entry (see `counter_step`).
                    if let (Some(&sign), Some(entry)) = (set.monotone.get(&l), at_entry) {
                        let (lo, hi) = if sign > 0 {
                            (entry, fresh)
                        } else {
                            (fresh, entry)
                        };
                        let bound = self.t.cmp(CmpOp::Sle, lo, hi);
                        self.fact(&[fresh], bound);
                    }
                    st.vars[l.0 as usize] = Some(fresh);
                }
                if set.memory {
                    st.mem = self.t.var(Sort::Mem, "mem_loop");
                }
                for &l in &set.own_locals {
                    let m = self.t.var(Sort::Mem, "own_loop");
                    st.own.insert(MemObj::Local(self.instance, l), m);
                }
                self.havoc_globals(&set.globals, &mut st);
            }
            let blk = f.block(b);
            for (i, s) in blk.stmts.iter().enumerate() {
                self.cur_stmt = i as u32;
                pc = self.stmt(s, &mut st, pc);
            }
            if let Terminator::Return(v) = &blk.term {
                let value = v.as_ref().map(|e| self.eval(e, &mut st));
                returns.push((pc, st.clone(), value));
            }
            for (target, cond) in self.edges(&blk.term, &st, pc) {
                // Retreating edges are cut, but in the exact copies of a peeled loop.
                if let Some(m) = peeled.step(n, target) {
                    incoming.entry(m).or_default().push((cond, st.clone()));
                }
            }
        }
        if self.record_labels {
            // Labels in blocks never reached from the entry are unreachable.
            for (i, blk) in f.blocks.iter().enumerate() {
                let b = BlockId(i as u32);
                if visited.contains(&b) {
                    continue;
                }
                for s in &blk.stmts {
                    if let StmtKind::Label { id, .. } = &s.kind {
                        let fls = self.t.fls();
                        self.push_label(LabelVc {
                            id: *id,
                            block: b,
                            reach: fls,
                            pred: fls,
                        });
                    }
                }
            }
        }
        returns
    }

    /// A readable name of a memory object.
    fn object_name(&self, o: MemObj) -> String {
        match o {
            MemObj::Local(i, l) => {
                let f = self.instance_fns[i as usize];
                format!("{}.{}", f.name, f.local(l).name)
            }
            MemObj::Global(g) => self.prog.globals[g.0 as usize].name.clone(),
            MemObj::Str(i) => format!("string {i}"),
            MemObj::Region(r) => format!("region {r}"),
        }
    }

    /// The region an object with a base lives in, if not the shared memory.
    fn region_of_object(&self, o: MemObj) -> Option<u32> {
        match o {
            MemObj::Local(i, l) => self
                .pts
                .region_of_local(&self.instance_fns[i as usize].name, l),
            MemObj::Str(i) => self.pts.region_of_string(i),
            MemObj::Global(_) | MemObj::Region(_) => None,
        }
    }

    /// The activation `instance` is the root function's own.
    fn instance_is_root(&self, instance: u32) -> bool {
        instance == 0
    }

    /// Records a label: the root's own, or one of an inlined copy (of a called-once callee
    /// inlined directly, and of a function decided in its calling contexts).
    fn push_label(&mut self, l: LabelVc) {
        if self.instance_is_root(self.instance) {
            self.labels.push(l);
            return;
        }
        if let Some(k) = self.copy {
            self.copies[k].labels.push(l.clone());
        }
        if self.in_called_once_copy {
            self.context_labels.push(l);
        }
    }

    /// The callee to inline at a direct call, if it is small, lowered and not recursive here.
    fn inlinable(&self, name: &str) -> Option<&'a Function> {
        let callee = *self.functions.get(name)?;
        let size: usize = callee.blocks.iter().map(|b| b.stmts.len() + 1).sum();
        let max_blocks = if self.context_functions.contains(name) {
            MAX_CONTEXT_INLINE_BLOCKS
        } else {
            MAX_INLINE_BLOCKS
        };
        let ok = self.inline_stack.len() <= MAX_INLINE_DEPTH
            && self.pts.may_inline(name)
            && !self.inline_stack.contains(&name)
            && callee.blocks.len() <= max_blocks
            && size <= self.inline_budget;
        ok.then_some(callee)
    }

    /// Encodes `callee` in place of a call: returns the path condition after the call (false
    /// if it never returns) and sets `dst` to its returned value.
    fn inline_call(
        &mut self,
        callee: &'a Function,
        args: &[Expr],
        dst: Option<&LValue>,
        st: &mut State,
        pc: T,
    ) -> T {
        let size: usize = callee.blocks.iter().map(|b| b.stmts.len() + 1).sum();
        self.inline_budget = self.inline_budget.saturating_sub(size);
        let arg_values: Vec<(T, CType)> = args
            .iter()
            .map(|a| (self.eval(a, st), a.ty.clone()))
            .collect();
        // Switch to the callee's frame.
        let in_memory = memory_locals(callee);
        let own_memory = own_memory_locals(callee, &in_memory, self.alias_blind);
        let saved = (
            self.f,
            std::mem::replace(&mut self.in_memory, in_memory),
            self.instance,
            self.record_labels,
            self.cur_block,
            std::mem::replace(&mut self.own_memory, own_memory),
            (self.cur_stmt, self.in_called_once_copy, self.copy),
            (self.cur_once, self.outer_once),
        );
        self.outer_once = self.cur_once;
        self.call_path.push(CallSite {
            caller: self.f.name.clone(),
            block: self.cur_block.0,
            stmt: self.cur_stmt,
        });
        self.f = callee;
        self.instance = self.n_instances;
        self.n_instances += 1;
        self.instance_fns.push(callee);
        self.in_called_once_copy =
            self.instance_is_root(saved.2) && self.context_callees.contains(&callee.name);
        self.copy = self.context_functions.contains(&callee.name).then(|| {
            self.copies.push(InlinedCopy {
                path: self.call_path.clone(),
                function: callee.name.clone(),
                labels: Vec::new(),
            });
            self.copies.len() - 1
        });
        self.record_labels = self.in_called_once_copy || self.copy.is_some();
        self.inline_stack.push(callee.name.as_str());
        let mut init = self.initial_state(st.mem, st.own.clone());
        for (k, pid) in callee.params.iter().enumerate() {
            let pty = callee.local(*pid).ty.clone();
            let value = match arg_values.get(k) {
                Some((v, aty)) => self.convert(*v, aty, &pty),
                None => self.fresh_of(&pty, "missing_arg"),
            };
            let lv = LValue::Var(VarRef::Local(*pid));
            self.write(&lv, &pty, value, &mut init);
        }
        let returns = self.encode_body(init, pc);
        let callee_instance = self.instance;
        let ret_ty = callee.ty.ret.clone();
        self.inline_stack.pop();
        self.f = saved.0;
        self.in_memory = saved.1;
        self.instance = saved.2;
        self.record_labels = saved.3;
        self.cur_block = saved.4;
        self.own_memory = saved.5;
        (self.cur_stmt, self.in_called_once_copy, self.copy) = saved.6;
        (self.cur_once, self.outer_once) = saved.7;
        self.call_path.pop();
        if returns.is_empty() {
            return self.t.fls();
        }
        let w = width_of(&ret_ty);
        // The callee's own locals die with its activation.
        let mut returns = returns;
        for (_, s, _) in &mut returns {
            s.own
                .retain(|o, _| !matches!(o, MemObj::Local(i, _) if *i == callee_instance));
        }
        let values: Vec<(T, T)> = returns
            .iter()
            .map(|(c, _, v)| {
                let v = match v {
                    Some(v) => self.t.resize(*v, w, is_signed(&ret_ty)),
                    None => self.fresh(w, "no_return_value"),
                };
                (*c, v)
            })
            .collect();
        let (after, value) = if values.len() == 1 {
            values[0]
        } else {
            let conds: Vec<T> = values.iter().map(|x| x.0).collect();
            let after = self.reached_by(&conds, "returned");
            (after, self.join(&values, Sort::Bv(w), "ret"))
        };
        let ins: Vec<(T, &State)> = returns.iter().map(|(c, s, _)| (*c, s)).collect();
        let (mem, own) = self.join_memories(&ins, "mem_ret");
        st.mem = mem;
        st.own = own;
        if let Some(d) = dst {
            let dty = self.lvalue_type(d);
            if dty.is_aggregate() || ret_ty.is_aggregate() {
                self.havoc_object(d, &dty, st);
            } else {
                let v = self.convert(value, &ret_ty, &dty);
                self.write(d, &dty, v, st);
            }
        }
        after
    }

    /// Joins the states of the incoming edges: one reachability symbol and one φ symbol per
    /// differing value, defined by implications from each edge (passive form).
    fn merge(&mut self, b: BlockId, ins: Vec<(T, State)>) -> (T, State) {
        if ins.len() == 1 {
            let (c, s) = ins.into_iter().next().expect("one incoming edge");
            return (c, s);
        }
        let conds: Vec<T> = ins.iter().map(|(c, _)| *c).collect();
        let reach = self.reached_by(&conds, &format!("reach_bb{}", b.0));
        let n_vars = ins[0].1.vars.len();
        let mut out = ins[0].1.clone();
        for v in 0..n_vars {
            // Locals in memory have no SSA value, in every state alike.
            let vals: Vec<(T, T)> = ins
                .iter()
                .filter_map(|(c, s)| s.vars[v].map(|val| (*c, val)))
                .collect();
            if vals.is_empty() {
                continue;
            }
            let w = self.local_width(LocalId(v as u32));
            out.vars[v] = Some(self.join(&vals, Sort::Bv(w), "phi"));
        }
        let refs: Vec<(T, &State)> = ins.iter().map(|(c, s)| (*c, s)).collect();
        let (mem, own) = self.join_memories(&refs, "mem_phi");
        out.mem = mem;
        out.own = own;
        (reach, out)
    }

    /// Joins the memories of several states, each reached under its condition: one φ term
    /// per memory that differs between them (an object a state has not written holds its
    /// initial memory there).
    fn join_memories(&mut self, ins: &[(T, &State)], hint: &str) -> (T, BTreeMap<MemObj, T>) {
        let mems: Vec<(T, T)> = ins.iter().map(|(c, s)| (*c, s.mem)).collect();
        let mem = self.join(&mems, Sort::Mem, hint);
        let keys: BTreeSet<MemObj> = ins
            .iter()
            .flat_map(|(_, s)| s.own.keys().copied())
            .collect();
        let mut own = BTreeMap::new();
        for k in keys {
            let vals: Vec<(T, T)> = ins
                .iter()
                .map(|(c, s)| {
                    (
                        *c,
                        s.own
                            .get(&k)
                            .copied()
                            .unwrap_or_else(|| self.own_initial(k)),
                    )
                })
                .collect();
            let m = self.join(&vals, Sort::Mem, "own_phi");
            own.insert(k, m);
        }
        (mem, own)
    }

    /// The value that is each `(condition, value)`'s value under its condition: that value
    /// when all are the same, else an `ite` term for memories and a φ symbol defined by
    /// implications (passive form) for the rest.
    fn join(&mut self, vals: &[(T, T)], sort: Sort, hint: &str) -> T {
        if vals.iter().all(|(_, v)| *v == vals[0].1) {
            return vals[0].1;
        }
        if sort == Sort::Mem {
            // Memories join as `ite` terms, so that a read through the join is cases over
            // the writes on each way in (`smt::Session::read_byte`), with no array equality.
            // The conditions of the edges into a block exclude each other (one path runs),
            // so the term is the φ; where the block is not reached its value is unused.
            let mut acc = vals[vals.len() - 1].1;
            for (c, v) in vals[..vals.len() - 1].iter().rev() {
                acc = self.t.ite(*c, *v, acc);
            }
            return acc;
        }
        let phi = self.t.var(sort, hint);
        let mut definition = Vec::with_capacity(vals.len());
        for (c, v) in vals {
            let eq = self.t.eq(phi, *v);
            let imp = self.t.implies(*c, eq);
            self.fact(&[phi], imp);
            definition.push(imp);
        }
        self.exactness.defined.insert(phi, definition);
        phi
    }

    /// A symbol true exactly when one of `conds` holds.
    fn reached_by(&mut self, conds: &[T], hint: &str) -> T {
        let any = self.t.or(conds);
        let r = self.t.var(Sort::Bool, hint);
        let a = self.t.implies(r, any);
        let b = self.t.implies(any, r);
        self.fact(&[r], a);
        self.fact(&[r], b);
        self.exactness.defined.insert(r, vec![a, b]);
        r
    }

    /// The memory an object reached by name only holds before any write of this encoding.
    fn own_initial(&mut self, o: MemObj) -> T {
        if let Some(&m) = self.own_init.get(&o) {
            return m;
        }
        let m = self.t.var(Sort::Mem, "own_init");
        self.exactness.entry.insert(m);
        self.own_init.insert(o, m);
        m
    }

    /// The object with a memory of its own that a place belongs to, if any.
    fn home(&mut self, lv: &LValue) -> Option<MemObj> {
        match lv {
            LValue::Var(VarRef::Local(l)) if self.own_memory[l.0 as usize] => {
                Some(MemObj::Local(self.instance, *l))
            }
            LValue::Var(VarRef::Local(l)) => self
                .pts
                .region_of_local(&self.f.name, *l)
                .map(MemObj::Region),
            LValue::Var(VarRef::Global(g)) => {
                self.named_globals.contains(g).then_some(MemObj::Global(*g))
            }
            LValue::Deref(e) => self
                .pts
                .region_of_pointer(&self.f.name, e)
                .map(MemObj::Region),
            LValue::Field(b, _, _) | LValue::Index(b, _) => self.home(b),
        }
    }

    /// Is `lv` an object alone in its memory (not a region's object, which has a base)?
    fn has_own_memory(&mut self, lv: &LValue) -> bool {
        matches!(self.home(lv), Some(MemObj::Local(..) | MemObj::Global(_)))
    }

    /// The memory holding a place.
    fn memory_of(&mut self, home: Option<MemObj>, st: &State) -> T {
        match home {
            None => st.mem,
            Some(o) => match st.own.get(&o) {
                Some(&m) => m,
                None => self.own_initial(o),
            },
        }
    }

    fn set_memory(&mut self, home: Option<MemObj>, st: &mut State, m: T) {
        match home {
            None => st.mem = m,
            Some(o) => {
                self.own_seen.insert(o);
                st.own.insert(o, m);
            }
        }
    }

    /// The globals with a memory of their own in `w` get fresh memories.
    fn havoc_globals(&mut self, w: &GlobalWrites, st: &mut State) {
        let gs: Vec<GlobalId> = self
            .named_globals
            .iter()
            .copied()
            .filter(|g| w.contains(*g))
            .collect();
        for g in gs {
            let m = self.t.var(Sort::Mem, "own_call");
            st.own.insert(MemObj::Global(g), m);
        }
    }

    /// The locals of the current frame with a memory of their own.
    fn frame_own_locals(&self) -> impl Iterator<Item = LocalId> + '_ {
        self.own_memory
            .iter()
            .enumerate()
            .filter(|(_, own)| **own)
            .map(|(i, _)| LocalId(i as u32))
    }

    /// For each loop head: the SSA locals and whether memory the loop may write (everything
    /// at the head of an irreducible cycle). See [`crate::cfg::loops`] for why it is sound.
    fn loop_havoc_sets(
        &mut self,
        forest: &crate::cfg::loops::LoopForest,
    ) -> HashMap<BlockId, HavocSet> {
        let f = self.f;
        let mut out = HashMap::new();
        for h in forest.heads() {
            let mut set = HavocSet::default();
            match forest.body(h) {
                Some(body) => {
                    for b in body {
                        self.writes_of(f.block(*b), &mut set);
                    }
                    set.monotone = self.monotone_counters(body, &set.locals);
                }
                None => {
                    // The regions the whole function may write.
                    for blk in &f.blocks {
                        self.writes_of(blk, &mut set);
                    }
                    set.memory = true;
                    set.globals = GlobalWrites::All;
                    set.locals = (0..f.locals.len())
                        .filter(|&i| !self.in_memory[i])
                        .map(|i| LocalId(i as u32))
                        .collect();
                    set.own_locals = self.frame_own_locals().collect();
                }
            }
            out.insert(h, set);
        }
        out
    }

    /// How many first iterations of each natural loop to encode exactly ([`Peeled`]): as many
    /// as the loop can run when its trip count has a small constant bound ([`exact_trips`]),
    /// else one for a small loop, so that the facts known at loop entry hold in the first
    /// iteration. Loops are taken bounded ones first, then the smallest, while the peeled graph
    /// grows by at most [`MAX_PEELED_EXTRA_NODES`]. Only a matter of precision and cost: any
    /// choice is sound.
    fn peel_counts(&self, forest: &crate::cfg::loops::LoopForest) -> BTreeMap<BlockId, u8> {
        let f = self.f;
        let base = forest.order.len();
        let cap = base + MAX_PEELED_EXTRA_NODES;
        let mut candidates: Vec<(bool, usize, BlockId, u8)> = Vec::new();
        for h in forest.heads() {
            let Some(body) = forest.body(h) else { continue };
            match exact_trips(f, forest, h) {
                Some(trips) => candidates.push((false, body.len(), h, copies_for_trips(trips))),
                None if body.len() <= MAX_PEEL_ONCE_BLOCKS => {
                    candidates.push((true, body.len(), h, 1))
                }
                None => {}
            }
        }
        candidates.sort();
        let mut chosen = BTreeMap::new();
        for (_, _, h, k) in candidates {
            chosen.insert(h, k);
            if unroll::size_with(forest, &chosen) > cap {
                chosen.remove(&h);
            }
        }
        chosen
    }

    /// The SSA locals of `written` that every write in the loop `body` steps by a constant of
    /// one sign ([`counter_step`]), with that sign.
    fn monotone_counters<'b>(
        &self,
        body: impl IntoIterator<Item = &'b BlockId>,
        written: &BTreeSet<LocalId>,
    ) -> BTreeMap<LocalId, i8> {
        let mut sign: BTreeMap<LocalId, Option<i8>> = BTreeMap::new();
        for b in body {
            for s in &self.f.block(*b).stmts {
                let Some(LValue::Var(VarRef::Local(dst))) = written_place(s) else {
                    continue;
                };
                let dst = *dst;
                let step = match &s.kind {
                    StmtKind::Assign { src, .. } => counter_step(src, dst, &self.f.local(dst).ty),
                    _ => None,
                };
                let entry = sign.entry(dst).or_insert(step);
                if *entry != step {
                    *entry = None;
                }
            }
        }
        sign.into_iter()
            .filter(|(l, _)| written.contains(l))
            .filter_map(|(l, s)| s.map(|s| (l, s)))
            .collect()
    }

    fn writes_of(&mut self, blk: &Block, set: &mut HavocSet) {
        for s in &blk.stmts {
            match &s.kind {
                StmtKind::Call { callee, args, .. } => {
                    let w = self.call_writes(callee, args);
                    set.memory |= w.external;
                    set.regions.extend(w.regions);
                    set.globals.add(&self.callee_global_writes(callee));
                }
                StmtKind::HavocMemory(_) => {
                    set.memory = true;
                    set.globals = GlobalWrites::All;
                    set.own_locals.extend(self.frame_own_locals());
                }
                _ => {}
            }
            match written_place(s) {
                Some(LValue::Var(VarRef::Local(l))) if !self.in_memory[l.0 as usize] => {
                    set.locals.insert(*l);
                }
                Some(d) => match self.home(d) {
                    Some(MemObj::Local(_, l)) => {
                        set.own_locals.insert(l);
                    }
                    Some(MemObj::Global(g)) => set.globals.add(&GlobalWrites::Some([g].into())),
                    Some(MemObj::Region(r)) => {
                        set.regions.insert(r);
                    }
                    Some(MemObj::Str(_)) | None => set.memory = true,
                },
                None => {}
            }
        }
    }

    fn callee_writes_memory(&self, callee: &Callee) -> bool {
        match callee {
            Callee::Direct(n) => self.sums.writes_memory(n),
            Callee::Indirect(_) => true,
        }
    }

    /// The memories a call not encoded in place may write: the shared one, and regions. Both
    /// the program's summary and the region analysis bound it; each is sound alone.
    fn call_writes(&mut self, callee: &Callee, args: &[Expr]) -> Writes {
        if !self.callee_writes_memory(callee) {
            return Writes::default();
        }
        self.pts.call_writes(&self.f.name, callee, args)
    }

    fn callee_global_writes(&self, callee: &Callee) -> GlobalWrites {
        match callee {
            Callee::Direct(n) => self.sums.global_writes(n),
            Callee::Indirect(_) => GlobalWrites::All,
        }
    }

    // ----- statements ---------------------------------------------------------------------

    /// Encodes one statement; returns the path condition after it.
    fn stmt(&mut self, s: &Stmt, st: &mut State, pc: T) -> T {
        match &s.kind {
            StmtKind::Assign { dst, src } => {
                let dty = self.lvalue_type(dst);
                if dty.is_aggregate() {
                    match &src.kind {
                        ExprKind::Read(src_lv) => self.copy_object(dst, src_lv, &dty, st),
                        _ => self.havoc_object(dst, &dty, st),
                    }
                } else {
                    let v = self.eval(src, st);
                    self.write(dst, &dty, v, st);
                }
            }
            StmtKind::Havoc { dst, reason } => {
                if reason.is_none() && self.declare_uninitialised(dst) {
                    return pc;
                }
                let dty = self.lvalue_type(dst);
                self.havoc_object(dst, &dty, st);
            }
            StmtKind::ZeroInit { dst } => {
                let dty = self.lvalue_type(dst);
                self.zero_object(dst, &dty, st);
            }
            StmtKind::Assume(e) => {
                let c = self.eval_bool(e, st);
                return self.t.and2(pc, c);
            }
            StmtKind::Call { dst, callee, args } => {
                if let Callee::Direct(n) = callee {
                    if let Some(f) = self.inlinable(n) {
                        return self.inline_call(f, args, dst.as_ref(), st, pc);
                    }
                    self.opaque_calls.insert(n.clone());
                }
                let writes = self.call_writes(callee, args);
                if writes.external {
                    st.mem = self.t.var(Sort::Mem, "mem_call");
                }
                for r in writes.regions {
                    let m = self.t.var(Sort::Mem, "region_call");
                    st.own.insert(MemObj::Region(r), m);
                }
                let w = self.callee_global_writes(callee);
                self.havoc_globals(&w, st);
                if let Some(d) = dst {
                    let dty = self.lvalue_type(d);
                    self.havoc_object(d, &dty, st);
                }
            }
            StmtKind::Label { .. } if !self.record_labels => {}
            StmtKind::Label { id, pred, .. } => {
                let p = self.eval_bool(pred, st);
                self.push_label(LabelVc {
                    id: *id,
                    block: self.cur_block,
                    reach: pc,
                    pred: p,
                });
            }
            StmtKind::HavocMemory(_) => {
                st.mem = self.t.var(Sort::Mem, "mem_havoc");
                self.havoc_globals(&GlobalWrites::All, st);
                let frame: Vec<LocalId> = self.frame_own_locals().collect();
                for l in frame {
                    let m = self.t.var(Sort::Mem, "own_havoc");
                    st.own.insert(MemObj::Local(self.instance, l), m);
                }
            }
        }
        pc
    }

    fn copy_object(&mut self, dst: &LValue, src: &LValue, ty: &CType, st: &mut State) {
        let size = self.prog.layout().size_of(ty);
        match size {
            Some(n) if n <= MAX_BYTEWISE => {
                let da = self.addr(dst, st);
                let sa = self.addr(src, st);
                let (dh, sh) = (self.home(dst), self.home(src));
                let src_mem = self.memory_of(sh, st);
                let mut m = self.memory_of(dh, st);
                for k in 0..n {
                    let off = self.t.bv(64, u128::from(k));
                    let from = self.t.bin(BvOp::Add, sa, off);
                    let byte = self.t.select(src_mem, from);
                    let to = self.t.bin(BvOp::Add, da, off);
                    m = self.t.store(m, to, byte);
                }
                self.set_memory(dh, st, m);
            }
            _ => {
                let m = self.t.var(Sort::Mem, "mem_copy");
                let home = self.home(dst);
                self.set_memory(home, st, m);
            }
        }
    }

    fn past_deadline(&self) -> bool {
        // Tests slow the encoder down to reach a deadline with a small function (debug builds).
        #[cfg(debug_assertions)]
        if let Some(ms) = std::env::var("COVPRUNE_TEST_ENCODE_BLOCK_MS")
            .ok()
            .and_then(|v| v.parse().ok())
        {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        self.out_of_time || self.deadline.is_some_and(|d| std::time::Instant::now() > d)
    }

    /// An uninitialised declaration of a local in memory that runs at most once per run of the
    /// root needs no havoc: the memory it reads at the object's address already holds
    /// arbitrary bytes. Why: the object's address is a symbol of its activation alone, so in a
    /// real run no write before the declaration is at that address (the object did not exist
    /// yet, and the declaration runs once, so no earlier iteration wrote it either); every
    /// byte there in the memory at the declaration comes from the memory at the root's entry
    /// (or after a havoc), which is free. A model takes the run's indeterminate bytes there.
    /// Writing fresh bytes one by one instead gives the same runs, at one case per byte in
    /// every later read of that memory. Locals with a memory of their own keep the fresh
    /// memory (it costs nothing), and so do scalars kept as SSA values.
    fn declare_uninitialised(&self, dst: &LValue) -> bool {
        let LValue::Var(VarRef::Local(l)) = dst else {
            return false;
        };
        self.cur_once
            && self.in_memory[l.0 as usize]
            && !self.own_memory[l.0 as usize]
            && !self.alias_blind
    }

    fn havoc_object(&mut self, dst: &LValue, ty: &CType, st: &mut State) {
        if !ty.is_aggregate() {
            let v = self.fresh_of(ty, "havoc");
            self.write(dst, ty, v, st);
            return;
        }
        // A whole object with a memory of its own: that memory is all it holds.
        if let (LValue::Var(_), Some(home @ (MemObj::Local(..) | MemObj::Global(_)))) =
            (dst, self.home(dst))
        {
            let m = self.t.var(Sort::Mem, "own_havoc");
            self.set_memory(Some(home), st, m);
            return;
        }
        match self.prog.layout().size_of(ty) {
            Some(n) if n <= MAX_BYTEWISE => {
                let a = self.addr(dst, st);
                let home = self.home(dst);
                let mut m = self.memory_of(home, st);
                for k in 0..n {
                    let off = self.t.bv(64, u128::from(k));
                    let to = self.t.bin(BvOp::Add, a, off);
                    let byte = self.fresh(8, "havoc_byte");
                    m = self.t.store(m, to, byte);
                }
                self.set_memory(home, st, m);
            }
            _ => {
                let m = self.t.var(Sort::Mem, "mem_havoc_obj");
                let home = self.home(dst);
                self.set_memory(home, st, m);
            }
        }
    }

    fn zero_object(&mut self, dst: &LValue, ty: &CType, st: &mut State) {
        if !ty.is_aggregate() {
            let w = width_of(ty);
            let z = self.t.bv(w, 0);
            self.write(dst, ty, z, st);
            return;
        }
        match self.prog.layout().size_of(ty) {
            Some(n) if n <= MAX_ZERO_INIT => {
                let a = self.addr(dst, st);
                let home = self.home(dst);
                let mut m = self.memory_of(home, st);
                let zero = self.t.bv(8, 0);
                for k in 0..n {
                    let off = self.t.bv(64, u128::from(k));
                    let to = self.t.bin(BvOp::Add, a, off);
                    m = self.t.store(m, to, zero);
                }
                self.set_memory(home, st, m);
            }
            _ => {
                let m = self.t.var(Sort::Mem, "mem_zero_big");
                let home = self.home(dst);
                self.set_memory(home, st, m);
            }
        }
    }

    // ----- places -------------------------------------------------------------------------

    fn lvalue_type(&self, lv: &LValue) -> CType {
        match lv {
            LValue::Var(VarRef::Local(l)) => self.f.local(*l).ty.clone(),
            LValue::Var(VarRef::Global(g)) => self.prog.globals[g.0 as usize].ty.clone(),
            LValue::Deref(e) => e.ty.pointee().cloned().unwrap_or(CType::Unknown),
            LValue::Field(_, r, i) => self
                .prog
                .records
                .get(r.0 as usize)
                .and_then(|r| r.fields.get(*i as usize))
                .map_or(CType::Unknown, |f| f.ty.clone()),
            LValue::Index(b, _) => match self.lvalue_type(b) {
                CType::Array(e, _) => *e,
                _ => CType::Unknown,
            },
        }
    }

    fn is_ssa(&self, lv: &LValue) -> Option<LocalId> {
        match lv {
            LValue::Var(VarRef::Local(l)) if !self.in_memory[l.0 as usize] => Some(*l),
            _ => None,
        }
    }

    /// The address of a place in memory.
    fn addr(&mut self, lv: &LValue, st: &mut State) -> T {
        match lv {
            // An object with a memory of its own starts at offset 0 of it.
            LValue::Var(_) if self.has_own_memory(lv) => self.t.bv(64, 0),
            LValue::Var(VarRef::Local(l)) => self.base(MemObj::Local(self.instance, *l)),
            LValue::Var(VarRef::Global(g)) => self.base(MemObj::Global(*g)),
            LValue::Deref(e) => self.eval(e, st),
            LValue::Field(b, r, i) => {
                let base = self.addr(b, st);
                let off = self
                    .prog
                    .records
                    .get(r.0 as usize)
                    .and_then(|r| r.fields.get(*i as usize))
                    .map_or(0, |f| f.offset);
                let o = self.t.bv(64, u128::from(off));
                self.t.bin(BvOp::Add, base, o)
            }
            LValue::Index(b, i) => {
                let base = self.addr(b, st);
                let elem = match self.lvalue_type(b) {
                    CType::Array(e, _) => *e,
                    _ => CType::Unknown,
                };
                let Some(size) = self.prog.layout().size_of(&elem) else {
                    return self.fresh(64, "addr_unknown_elem");
                };
                let iv = self.eval(i, st);
                let signed = is_signed(&i.ty);
                let i64v = self.t.resize(iv, 64, signed);
                let s = self.t.bv(64, u128::from(size));
                let off = self.t.bin(BvOp::Mul, i64v, s);
                self.t.bin(BvOp::Add, base, off)
            }
        }
    }

    fn bitfield(&self, lv: &LValue) -> Option<(u32, u32)> {
        match lv {
            LValue::Field(_, r, i) => self
                .prog
                .records
                .get(r.0 as usize)
                .and_then(|r| r.fields.get(*i as usize))
                .and_then(|f| f.bits),
            _ => None,
        }
    }

    fn read(&mut self, lv: &LValue, ty: &CType, st: &mut State) -> T {
        if let Some(l) = self.is_ssa(lv) {
            let w = width_of(ty);
            return match st.vars[l.0 as usize] {
                Some(v) => self.t.resize(v, w, is_signed(ty)),
                None => self.fresh(w, "read"),
            };
        }
        if ty.is_aggregate() || matches!(ty, CType::Unknown | CType::Function(_)) {
            // An aggregate as a value (passed or returned by value): not modelled.
            return self.fresh(64, "aggregate");
        }
        let addr = self.addr(lv, st);
        let home = self.home(lv);
        let mem = self.memory_of(home, st);
        let w = width_of(ty);
        if let Some((bit, width)) = self.bitfield(lv) {
            let unit = self.t.load(mem, addr, w / 8);
            let hi = (bit + width - 1).min(w - 1);
            let raw = self.t.extract(hi, bit.min(hi), unit);
            return self.t.resize(raw, w, is_signed(ty));
        }
        self.t.load(mem, addr, w / 8)
    }

    fn write(&mut self, lv: &LValue, ty: &CType, v: T, st: &mut State) {
        if let Some(l) = self.is_ssa(lv) {
            let w = self.local_width(l);
            let v = self.t.resize(v, w, is_signed(ty));
            st.vars[l.0 as usize] = Some(v);
            return;
        }
        let home = self.home(lv);
        if ty.is_aggregate() || matches!(ty, CType::Unknown | CType::Function(_)) {
            let m = self.t.var(Sort::Mem, "mem_unknown_write");
            self.set_memory(home, st, m);
            return;
        }
        let addr = self.addr(lv, st);
        let mem = self.memory_of(home, st);
        let w = width_of(ty);
        let v = self.t.resize(v, w, is_signed(ty));
        if let Some((bit, width)) = self.bitfield(lv) {
            if bit + width > w {
                let m = self.t.var(Sort::Mem, "mem_bitfield");
                self.set_memory(home, st, m);
                return;
            }
            let unit = self.t.load(mem, addr, w / 8);
            let field_mask = (if width >= 128 {
                u128::MAX
            } else {
                (1u128 << width) - 1
            }) << bit;
            let keep = self.t.bv(w, !field_mask);
            let kept = self.t.bin(BvOp::And, unit, keep);
            let sh = self.t.bv(w, u128::from(bit));
            let shifted = self.t.bin(BvOp::Shl, v, sh);
            let fm = self.t.bv(w, field_mask);
            let placed = self.t.bin(BvOp::And, shifted, fm);
            let merged = self.t.bin(BvOp::Or, kept, placed);
            let m = self.t.store_value(mem, addr, merged);
            self.set_memory(home, st, m);
            return;
        }
        let m = self.t.store_value(mem, addr, v);
        self.set_memory(home, st, m);
    }

    // ----- expressions --------------------------------------------------------------------

    /// The value of a pure IR expression, as a bitvector of its type's width.
    fn eval(&mut self, e: &Expr, st: &mut State) -> T {
        let w = width_of(&e.ty);
        match &e.kind {
            ExprKind::Const(v) => self.t.bv_i(w, *v),
            ExprKind::FloatConst(_) => self.fresh(w, "float"),
            ExprKind::Str(i) => self.base(MemObj::Str(*i)),
            ExprKind::Read(lv) => self.read(lv, &e.ty, st),
            ExprKind::AddrOf(lv) => self.addr(lv, st),
            ExprKind::FuncAddr(name) => {
                if let Some(&a) = self.func_addrs.get(name) {
                    return a;
                }
                let a = self.t.var(Sort::Bv(64), &format!("&{name}"));
                self.exactness.entry.insert(a);
                let zero = self.t.bv(64, 0);
                let null = self.t.eq(a, zero);
                let nn = self.t.not(null);
                self.fact(&[a], nn);
                self.func_addrs.insert(name.clone(), a);
                a
            }
            ExprKind::Unary(op, a) => {
                if matches!(e.ty, CType::Float(_)) || matches!(a.ty, CType::Float(_)) {
                    return self.fresh(w, "float");
                }
                match op {
                    UnOp::Neg => {
                        let x = self.eval(a, st);
                        let x = self.t.resize(x, w, is_signed(&a.ty));
                        self.t.neg(x)
                    }
                    UnOp::BitNot => {
                        let x = self.eval(a, st);
                        let x = self.t.resize(x, w, is_signed(&a.ty));
                        self.t.bvnot(x)
                    }
                    UnOp::LogNot => {
                        let c = self.eval_bool(a, st);
                        let nc = self.t.not(c);
                        self.bool_to_int(nc, w)
                    }
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, &e.ty, st),
            ExprKind::Cast(a) => {
                let x = self.eval(a, st);
                self.convert(x, &a.ty, &e.ty)
            }
            ExprKind::Cond(c, a, b) => {
                let cv = self.eval_bool(c, st);
                let av = self.eval(a, st);
                let bv = self.eval(b, st);
                let av = self.t.resize(av, w, is_signed(&a.ty));
                let bv = self.t.resize(bv, w, is_signed(&b.ty));
                self.t.ite(cv, av, bv)
            }
            ExprKind::Fresh(_) => self.fresh(w, "fresh"),
        }
    }

    fn bool_to_int(&mut self, c: T, w: u32) -> T {
        let one = self.t.bv(w, 1);
        let zero = self.t.bv(w, 0);
        self.t.ite(c, one, zero)
    }

    /// The truth of an expression used as a condition (non-zero).
    fn eval_bool(&mut self, e: &Expr, st: &mut State) -> T {
        match &e.kind {
            ExprKind::Binary(op, a, b) if op.is_comparison() => self.compare(*op, a, b, st),
            ExprKind::Binary(BinOp::LogAnd, a, b) => {
                let x = self.eval_bool(a, st);
                let y = self.eval_bool(b, st);
                self.t.and2(x, y)
            }
            ExprKind::Binary(BinOp::LogOr, a, b) => {
                let x = self.eval_bool(a, st);
                let y = self.eval_bool(b, st);
                self.t.or2(x, y)
            }
            ExprKind::Unary(UnOp::LogNot, a) => {
                let x = self.eval_bool(a, st);
                self.t.not(x)
            }
            ExprKind::Const(v) => self.t.bool_const(*v != 0),
            _ => {
                if matches!(e.ty, CType::Float(_)) {
                    return self.t.var(Sort::Bool, "float_cond");
                }
                let v = self.eval(e, st);
                let w = self.t.width(v);
                let zero = self.t.bv(w, 0);
                let is_zero = self.t.eq(v, zero);
                self.t.not(is_zero)
            }
        }
    }

    fn compare(&mut self, op: BinOp, a: &Expr, b: &Expr, st: &mut State) -> T {
        if matches!(a.ty, CType::Float(_)) || matches!(b.ty, CType::Float(_)) {
            return self.t.var(Sort::Bool, "float_cmp");
        }
        let x = self.eval(a, st);
        let y = self.eval(b, st);
        let w = self.t.width(x).max(self.t.width(y));
        let signed = is_signed(&a.ty);
        let x = self.t.resize(x, w, signed);
        let y = self.t.resize(y, w, is_signed(&b.ty));
        let (lt, le) = if signed {
            (CmpOp::Slt, CmpOp::Sle)
        } else {
            (CmpOp::Ult, CmpOp::Ule)
        };
        match op {
            BinOp::Lt => self.t.cmp(lt, x, y),
            BinOp::Le => self.t.cmp(le, x, y),
            BinOp::Gt => self.t.cmp(lt, y, x),
            BinOp::Ge => self.t.cmp(le, y, x),
            BinOp::Eq => self.t.eq(x, y),
            _ => {
                let eq = self.t.eq(x, y);
                self.t.not(eq)
            }
        }
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, ty: &CType, st: &mut State) -> T {
        let w = width_of(ty);
        if op.is_comparison() || matches!(op, BinOp::LogAnd | BinOp::LogOr) {
            let e = Expr::new(
                ExprKind::Binary(op, Box::new(a.clone()), Box::new(b.clone())),
                ty.clone(),
            );
            let c = self.eval_bool(&e, st);
            return self.bool_to_int(c, w);
        }
        if matches!(ty, CType::Float(_))
            || matches!(a.ty, CType::Float(_))
            || matches!(b.ty, CType::Float(_))
        {
            return self.fresh(w, "float");
        }
        match op {
            BinOp::PtrAdd => {
                let p = self.eval(a, st);
                let i = self.eval(b, st);
                let i = self.t.resize(i, 64, is_signed(&b.ty));
                let elem = a.ty.pointee().cloned().unwrap_or(CType::Unknown);
                let Some(size) = self.prog.layout().size_of(&elem) else {
                    return self.fresh(64, "ptr_unknown_elem");
                };
                let s = self.t.bv(64, u128::from(size));
                let off = self.t.bin(BvOp::Mul, i, s);
                return self.t.bin(BvOp::Add, p, off);
            }
            BinOp::PtrDiff => {
                let p = self.eval(a, st);
                let q = self.eval(b, st);
                let elem = a.ty.pointee().cloned().unwrap_or(CType::Unknown);
                let d = self.t.bin(BvOp::Sub, p, q);
                return match self.prog.layout().size_of(&elem) {
                    Some(0) | None => self.fresh(w, "ptrdiff"),
                    Some(1) => self.t.resize(d, w, true),
                    Some(size) => {
                        let s = self.t.bv(64, u128::from(size));
                        let q = self.t.bin(BvOp::SDiv, d, s);
                        self.t.resize(q, w, true)
                    }
                };
            }
            _ => {}
        }
        let signed = is_signed(ty);
        let x = self.eval(a, st);
        let x = self.t.resize(x, w, is_signed(&a.ty));
        let yv = self.eval(b, st);
        match op {
            BinOp::Shl | BinOp::Shr => {
                // The amount keeps its own (promoted) type; out of range gives a fresh value.
                let bw = self.t.width(yv);
                let limit = self.t.bv(bw, u128::from(w));
                let in_range = if is_signed(&b.ty) {
                    let zero = self.t.bv(bw, 0);
                    let nonneg = self.t.cmp(CmpOp::Sle, zero, yv);
                    let below = self.t.cmp(CmpOp::Slt, yv, limit);
                    self.t.and2(nonneg, below)
                } else {
                    self.t.cmp(CmpOp::Ult, yv, limit)
                };
                let amount = self.t.resize(yv, w, false);
                let bop = match (op, signed) {
                    (BinOp::Shl, _) => BvOp::Shl,
                    (_, true) => BvOp::AShr,
                    _ => BvOp::LShr,
                };
                let shifted = self.t.bin(bop, x, amount);
                let junk = self.fresh(w, "bad_shift");
                self.t.ite(in_range, shifted, junk)
            }
            BinOp::Div | BinOp::Rem => {
                let y = self.t.resize(yv, w, is_signed(&b.ty));
                let bop = match (op, signed) {
                    (BinOp::Div, true) => BvOp::SDiv,
                    (BinOp::Div, false) => BvOp::UDiv,
                    (_, true) => BvOp::SRem,
                    _ => BvOp::URem,
                };
                let q = self.t.bin(bop, x, y);
                let zero = self.t.bv(w, 0);
                let by_zero = self.t.eq(y, zero);
                let junk = self.fresh(w, "div_by_zero");
                self.t.ite(by_zero, junk, q)
            }
            _ => {
                let y = self.t.resize(yv, w, is_signed(&b.ty));
                let bop = match op {
                    BinOp::Add => BvOp::Add,
                    BinOp::Sub => BvOp::Sub,
                    BinOp::Mul => BvOp::Mul,
                    BinOp::BitAnd => BvOp::And,
                    BinOp::BitOr => BvOp::Or,
                    _ => BvOp::Xor,
                };
                self.t.bin(bop, x, y)
            }
        }
    }

    /// C conversion of a value from one scalar type to another (C11 6.3).
    fn convert(&mut self, v: T, from: &CType, to: &CType) -> T {
        let w = width_of(to);
        match (from, to) {
            (CType::Float(_), _) | (_, CType::Float(_)) => self.fresh(w, "float_conv"),
            (_, CType::Int(IntKind::Bool)) => {
                let vw = self.t.width(v);
                let zero = self.t.bv(vw, 0);
                let is_zero = self.t.eq(v, zero);
                let nz = self.t.not(is_zero);
                self.bool_to_int(nz, 8)
            }
            (CType::Int(k), CType::Int(_) | CType::Pointer(_)) => {
                self.t.resize(v, w, k.is_signed())
            }
            (CType::Pointer(_), CType::Int(_) | CType::Pointer(_)) => self.t.resize(v, w, false),
            (_, CType::Void) => self.t.bv(8, 0),
            _ => self.fresh(w, "conv"),
        }
    }

    /// Conditions of the edges leaving a block.
    fn edges(&mut self, term: &Terminator, st: &State, pc: T) -> Vec<(BlockId, T)> {
        let mut st = st.clone();
        match term {
            Terminator::Goto(t) => vec![(*t, pc)],
            Terminator::Branch {
                cond,
                then_bb,
                else_bb,
            } => {
                let c = self.eval_bool(cond, &mut st);
                let nc = self.t.not(c);
                let tc = self.t.and2(pc, c);
                let ec = self.t.and2(pc, nc);
                vec![(*then_bb, tc), (*else_bb, ec)]
            }
            Terminator::Switch {
                scrutinee,
                cases,
                default,
            } => {
                let v = self.eval(scrutinee, &mut st);
                let w = self.t.width(v);
                let signed = is_signed(&scrutinee.ty);
                let le = if signed { CmpOp::Sle } else { CmpOp::Ule };
                let mut by_target: Vec<(BlockId, Vec<T>)> = Vec::new();
                let mut all = Vec::new();
                for c in cases {
                    let lo = self.t.bv_i(w, c.lo);
                    let hi = self.t.bv_i(w, c.hi);
                    let a = self.t.cmp(le, lo, v);
                    let b = self.t.cmp(le, v, hi);
                    let inr = self.t.and2(a, b);
                    all.push(inr);
                    match by_target.iter_mut().find(|(t, _)| *t == c.target) {
                        Some((_, v)) => v.push(inr),
                        None => by_target.push((c.target, vec![inr])),
                    }
                }
                let any = self.t.or(&all);
                let none = self.t.not(any);
                let mut out = Vec::new();
                for (target, conds) in by_target {
                    let c = self.t.or(&conds);
                    out.push((target, self.t.and2(pc, c)));
                }
                let dc = self.t.and2(pc, none);
                out.push((*default, dc));
                out
            }
            Terminator::Return(_) | Terminator::NoReturn | Terminator::Unreachable => Vec::new(),
        }
    }
}

#[derive(Debug)]
struct HavocSet {
    /// SSA locals written.
    locals: BTreeSet<LocalId>,
    /// The shared memory may be written.
    memory: bool,
    /// Locals with a memory of their own written (by name).
    own_locals: BTreeSet<LocalId>,
    /// Regions ([`super::pointsto`]) that may be written.
    regions: BTreeSet<u32>,
    /// Globals with a memory of their own that may be written.
    globals: GlobalWrites,
    /// SSA locals the loop only ever steps by a constant of one sign: each with the sign
    /// (`1`: only increased, `-1`: only decreased). See [`counter_step`].
    monotone: BTreeMap<LocalId, i8>,
}

impl Default for HavocSet {
    fn default() -> Self {
        HavocSet {
            locals: BTreeSet::new(),
            memory: false,
            own_locals: BTreeSet::new(),
            regions: BTreeSet::new(),
            globals: GlobalWrites::none(),
            monotone: BTreeMap::new(),
        }
    }
}
