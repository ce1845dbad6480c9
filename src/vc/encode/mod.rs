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
//!   occurrence is ([`function::merge_occurrences`]).
//! - Memory: non-address-taken scalar locals are SSA values. Objects reached by name only
//!   ([`super::regions`]: locals whose address is never taken, and globals under the rules
//!   there) each live in a byte-addressed memory of their own, at offset 0, so that writes to
//!   other objects never appear in their reads, and reads at constant offsets fold to the value
//!   written. Every other object (address-taken locals and globals, string literals, what
//!   pointers reach) lives in one shared byte-addressed memory at a symbolic, non-null, aligned
//!   base address, disjoint from the other objects of the function. Pointer parameters and
//!   initial memory are unconstrained.
//! - Calls: a callee that may write memory (program function by summary, unknown external,
//!   indirect call) makes the shared memory fresh (but for the root's locals no pointer outside
//!   the program reaches yet, [`exposure`]), and the memories of the globals it may write by
//!   name ([`super::regions::GlobalWrites`]); the result is a fresh value. `memset`, `memcpy`
//!   and `memmove` with a small constant size write their bytes exactly.
//! - Division by zero, out-of-range shifts, `long double` and fallbacks give fresh values;
//!   `float` and `double` are IEEE-754 bit patterns (`float`).

mod calls;
mod cells;
mod errno;
mod eval;
mod exposure;
mod float;
mod function;
mod invariants;
mod loops;
mod memory;

pub use function::{encode, encode_until};
pub use invariants::{CandidateGroup, LoopCandidate};

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
    /// The reference encoding, for tests and benchmarks (an oracle the engine is checked
    /// against, not an option of any command): the plainest sound one. Every object in the
    /// shared memory (no regions, no memories of their own, no whole-file facts on globals),
    /// every call not inlined writing the whole memory (no summaries, no exposure, `errno`
    /// not apart, no exact library calls or results), callees inlined up to the depth
    /// whatever their size, loops havocked at their heads with no peeling, loop facts or
    /// cells.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reference: bool,
    /// Deliberately unsound, for tests only: the planted faults of the other claim paths.
    #[serde(default, skip_serializing_if = "super::plants::Plants::is_none")]
    pub plants: super::plants::Plants,
    /// Effects of functions defined in other files of the project, by name (`project`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub externals: BTreeMap<String, super::ExternalEffects>,
    /// For tests only: the encoder sleeps this long (milliseconds) at every block, so that a
    /// small function outlasts its budget (the prune configuration's faults).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub block_delay_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
            plants: Default::default(),
            reference: false,
            externals: BTreeMap::new(),
            block_delay_ms: 0,
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
/// A memory read may stand for a symbol (a bound on an array cell is about the bytes read).
/// A fact that defines the result of a floating-point operation has that operation's `work`
/// ([`crate::vc::cone::QUESTION_FP_WORK`] bounds what one question takes in); every other 0.
#[derive(Clone, Debug)]
pub struct Fact {
    pub about: Vec<T>,
    pub needs_all: bool,
    pub fact: T,
    pub work: u32,
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
    /// The root's entry state as a caller sets it up: what a concrete call needs.
    pub entry: EntryState,
    /// Functions some encoded direct call of which was not inlined (too big, past the
    /// inlining budget, too deep, recursive): their executions there are not in the encoding.
    pub opaque_calls: BTreeSet<String>,
    /// Which symbols stand for the entry state and which for over-approximations.
    pub exactness: Exactness,
    /// Bounds on the values loops carry, each a fact once proved inductive
    /// ([`invariants`]).
    pub loop_candidates: Vec<LoopCandidate>,
}

/// The entry state of the encoded function, as terms a model gives values to: each
/// parameter's value (`None` for one living in memory), the shared memory at entry, and, for
/// each global the encoding reads at entry, the memory holding it and its address there (a
/// global with a memory of its own is at offset 0 of it).
#[derive(Clone, Debug, Default)]
pub struct EntryState {
    pub params: Vec<Option<T>>,
    pub mem0: Option<T>,
    pub globals: BTreeMap<GlobalId, (T, T)>,
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
    /// The memory of a region of [`super::pointsto`]: a class of address-taken locals, string
    /// literals and allocated blocks that only the encoding's own pointers reach (never an
    /// object).
    Region(u32),
}

#[derive(Clone)]
struct State {
    /// SSA value of each local (`None` for locals living in memory).
    vars: Vec<Option<T>>,
    /// The shared memory; while `errno` holds a value, but for `errno`'s bytes.
    mem: T,
    /// `errno`'s value after a call wrote it, kept apart from `mem` ([`errno`]).
    errno: Option<T>,
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
/// The reference encoding inlines every callee up to [`MAX_INLINE_DEPTH`], within this many
/// statements in all.
const REFERENCE_INLINE_BUDGET_STMTS: usize = 20_000;

struct Enc<'a> {
    prog: &'a Program,
    /// The function whose body is being encoded: the root, or a callee inlined at a call.
    f: &'a Function,
    in_memory: Vec<bool>,
    /// Locals of `f` with a memory of their own (in memory, and reached by name only).
    own_memory: Vec<bool>,
    alias_blind: bool,
    /// Planted faults (tests only).
    plants: super::plants::Plants,
    /// The reference encoding ([`EncodeConfig::reference`]).
    reference: bool,
    /// Globals reached by name only in this encoding.
    named_globals: BTreeSet<GlobalId>,
    /// Every object a statement wrote in a memory of its own: with the keys of `own_init` (those
    /// read), the objects `-v` lists. Havocs at loop heads and calls do not count.
    own_seen: BTreeSet<MemObj>,
    /// The function of each activation (the root is 0).
    instance_fns: Vec<&'a Function>,
    /// The initial memory of each object with a memory of its own.
    own_init: HashMap<MemObj, T>,
    /// Globals with a memory of their own that hold their initialiser at entry
    /// ([`super::regions::Regions::keeps_initialiser`]).
    initialised: BTreeSet<GlobalId>,
    /// Globals with a memory of their own whose values at entry are known to be among a few
    /// ([`super::regions::Regions::static_values`]).
    static_values: BTreeMap<GlobalId, super::regions::StaticValues>,
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
    /// `errno`'s address, made when a call first writes it ([`errno`]).
    errno_addr: Option<T>,
    /// The program leaves `errno` to the library: no global of its own has that name.
    errno_apart: bool,
    func_addrs: HashMap<String, T>,
    /// The result of each floating-point operation with its NaN made any NaN (see
    /// `float::fp_result`).
    fp_results: HashMap<T, T>,
    /// The symbol defined as each floating-point operation's result (see `float::fp_define`).
    fp_defs: HashMap<T, T>,
    /// The weight of the floating-point operations defined so far (see `float::FP_WORK`).
    fp_work: u32,
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
    /// The root's entry state ([`FunctionVc::entry`]; its globals are filled in at the end).
    entry: EntryState,
    /// Which regions address-taken locals, string literals and dereferences are in.
    pts: PointsTo,
    /// The root's locals no outside code can reach yet, per call ([`exposure`]).
    exposure: exposure::Exposure,
    /// When to give the encoding up ([`encode_until`]), and whether it was.
    deadline: Option<std::time::Instant>,
    out_of_time: bool,
    /// [`EncodeConfig::block_delay_ms`].
    block_delay_ms: u64,
    /// Loop bounds proposed so far, and those of bodies encoded whole ([`invariants`]).
    loop_candidates_proposed: usize,
    float_candidates_proposed: usize,
    loop_candidates: Vec<LoopCandidate>,
}

/// The locals of `f` with a memory of their own: in memory and reached by name only.
fn own_memory_locals(
    f: &Function,
    in_memory: &[bool],
    (alias_blind, reference): (bool, bool),
) -> Vec<bool> {
    if reference {
        return vec![false; f.locals.len()];
    }
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
            work: 0,
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
        self.entry.params = f.params.iter().map(|p| init.vars[p.0 as usize]).collect();
        self.entry.mem0 = Some(mem0);
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
            errno: None,
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
        let mut havoc_sets = self.loop_havoc_sets(&forest);
        if self.reference {
            // Every loop head forgets the whole memory, and no counter keeps a side.
            for set in havoc_sets.values_mut() {
                set.memory = true;
                set.monotone.clear();
            }
        }
        let sources = if havoc_sets.is_empty() || self.reference {
            None
        } else {
            invariants::Sources::of(f)
        };
        let mut cells = self.cells_of(&forest, &havoc_sets, sources.as_ref());
        let peel = if self.reference {
            BTreeMap::new()
        } else {
            self.peel_counts(&forest)
        };
        let peeled = Peeled::new(f, &forest, &peel);
        let mut returns = Vec::new();
        let mut init = Some(init);
        // Outgoing edges of encoded nodes: target node -> [(condition, state)].
        let mut incoming: HashMap<usize, Vec<(T, State)>> = HashMap::new();
        let mut visited: HashSet<BlockId> = HashSet::new();
        let (mut pending, mut broken) = (Vec::new(), BTreeSet::new());
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
                let entering_state = (!cells.is_empty()).then(|| st.clone());
                let head_pc = pc;
                let entering = self.havoc_loop_head(set, &mut st);
                let natural = forest.body(b).is_some();
                let monotone = &set.monotone;
                let at = (n, b, natural);
                let from = sources.as_ref();
                self.propose_loop_facts(at, from, &entering, monotone, head_pc, &st, &mut pending);
                if let Some(e) = entering_state.filter(|_| natural) {
                    self.propose_cell_facts(&mut cells, (n, b), head_pc, &e, &st);
                }
            }
            let blk = f.block(b);
            for (i, s) in blk.stmts.iter().enumerate() {
                self.cur_stmt = i as u32;
                if !cells.is_empty() {
                    self.note_cell_reads(&mut cells, cells::Access::Stmt(s), &st);
                }
                pc = self.stmt(s, &mut st, pc);
            }
            if !cells.is_empty() {
                self.note_cell_reads(&mut cells, cells::Access::Term(&blk.term), &st);
            }
            if let Terminator::Return(v) = &blk.term {
                let value = v.as_ref().map(|e| self.eval(e, &mut st));
                returns.push((pc, st.clone(), value));
            }
            for (target, cond) in self.edges(&blk.term, &st, pc) {
                // Retreating edges are cut, but in the exact copies of a peeled loop.
                match peeled.step(n, target) {
                    Some(m) => incoming.entry(m).or_default().push((cond, st.clone())),
                    None => {
                        let p = (&peeled, n, target);
                        self.loop_back_edge(p, cond, &st, &mut pending, &mut broken);
                        if let Some(head) = peeled.cut_head(n, target) {
                            self.cell_back_edge(&mut cells, head, cond, &st);
                        }
                    }
                }
            }
        }
        self.settle_loop_facts(pending, &broken);
        self.settle_cell_facts(cells, &broken);
        if self.record_labels {
            self.label_unreached(&visited);
        }
        returns
    }

    /// Labels in blocks never reached from the entry are unreachable.
    fn label_unreached(&mut self, visited: &HashSet<BlockId>) {
        let f = self.f;
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

    /// The locals of the current frame with a memory of their own.
    fn frame_own_locals(&self) -> impl Iterator<Item = LocalId> + '_ {
        self.own_memory
            .iter()
            .enumerate()
            .filter(|(_, own)| **own)
            .map(|(i, _)| LocalId(i as u32))
    }

    // ----- statements ---------------------------------------------------------------------

    fn past_deadline(&self) -> bool {
        // Tests slow the encoder down to reach a deadline with a small function.
        if self.block_delay_ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(self.block_delay_ms));
        }
        self.out_of_time || self.deadline.is_some_and(|d| std::time::Instant::now() > d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_label_occurrence_is_encoded_with_its_block_and_the_inputs_are_the_parameters() {
        let source = "int f(int x, int y) {\n  pc_label(x > 0, 1, \"CC\");\n  if (x > y) {\n    pc_label(y < 0, 2, \"CC\");\n  }\n  return x;\n}\n";
        let program = &crate::frontend::test_program(source);
        let f = program.function("f").unwrap();
        let sums = Summaries::new(program, &BTreeMap::new());
        let vc = encode(program, f, &sums, &EncodeConfig::default());
        let ids: Vec<u64> = vc.labels.iter().map(|l| l.id).collect();
        assert_eq!(ids, [1, 2]);
        assert_ne!(vc.labels[0].block, vc.labels[1].block);
        assert_eq!(vc.inputs.len(), 2);
        assert!(vc.context_labels.is_empty() && vc.copies.is_empty());
        // Nothing is left unknown in this function: every encoded term is exact.
        assert!(vc
            .labels
            .iter()
            .all(|l| vc.exactness.exact(&vc.terms, l.pred)));
    }
}
