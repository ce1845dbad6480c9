//! Inputs for witnesses that run: for a label nothing proved, a model of its question (reached,
//! predicate true, with the function's memory written out) read as a concrete call of its
//! function: each parameter's value, the bytes a pointer parameter points to, and the values
//! of the globals the function reads at entry. A model is only a guess at such a call (the
//! encoding over-approximates loops and calls): whether the call covers the label is for a
//! real run to say (the `witness` module).
//!
//! What a call can set is what a test of the function could: its arguments, the data behind
//! its pointer arguments, and the file's external, non-constant globals. Only bytes that hold
//! no pointer are set: a pointer in the data a pointer argument reaches is left null, one in a
//! global keeps its value. `static` globals keep what the program gave them, since no test
//! outside the file can set them (the engine's whole-file facts assume as much).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::asker::Asker;
use super::budget::Budget;
use super::faults::Faults;
use super::{Prover, PruneConfig};
use crate::ir::{CType, Function, GlobalId, Linkage, Program};
use crate::vc::cone::FloatChoice;
use crate::vc::encode::{encode_until, EntryState};
use crate::vc::term::{BvOp, CmpOp, Terms, T};

/// Bytes a pointer argument's buffer holds: the argument points [`BUFFER_BEFORE`] bytes in, so
/// that it can be read at negative indices too (as a pointer into an array is).
pub const BUFFER_BYTES: u64 = 384;
pub const BUFFER_BEFORE: u64 = 128;
/// Fillers of the bytes of buffers a model leaves zero, one more call each: letters (text
/// without delimiters), and bytes with the high bit set (negative `char`s).
const FILLS: &[fn(usize) -> u8] = &[|k| b'a' + (k % 26) as u8, |k| 0x80 | (k % 0x7f) as u8];
/// The last bytes of a buffer no filler touches.
const FILL_END: usize = 16;
/// Integer arguments are first asked within these bounds (indices, sizes and counts that stay
/// within the buffers), then, when no model is found there, anywhere.
const SMALL: (i128, i128) = (-128, 255);
/// Pointer fields of the struct a pointer argument points to whose targets a model gives:
/// the first ones, in field order.
pub const MAX_LINKED: usize = 8;
/// Largest global a call sets (bytes); bigger ones keep their initial value.
pub const MAX_GLOBAL_BYTES: u64 = 1024;

/// One argument of a call.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arg {
    /// A scalar, as the bits of its type (integers and IEEE-754 floats alike).
    Bits(u128),
    /// A pointer [`BUFFER_BEFORE`] bytes into a buffer of [`BUFFER_BYTES`] holding these.
    Buffer(Vec<u8>),
    /// A buffer as [`Arg::Buffer`] whose pointer fields (at these offsets from the argument)
    /// point [`BUFFER_BEFORE`] bytes into buffers of their own, holding what the model read
    /// through them ([`MAX_LINKED`] at most: one level of a linked structure).
    Linked {
        data: Vec<u8>,
        children: Vec<(u64, Vec<u8>)>,
    },
    /// A null pointer.
    Null,
    /// A pointer `offset` bytes past an earlier argument's (`of`, a buffer): two pointers
    /// into one object, as `begin` and `end`, or the same one twice.
    Alias { of: usize, offset: u64 },
}

/// Bytes written at an offset.
pub type Run = (u64, Vec<u8>);

/// Where a call's values come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Origin {
    /// A model of its target label.
    Model,
    /// Its scalar arguments from the palette of values (the `witness` module's), the rest
    /// from a model's call.
    Palette,
    /// Small counts with one extreme value in its buffers of numbers (the `witness` module's
    /// outlier tables).
    Outliers,
    /// A model's call with every pointer field it left null pointing at a zeroed buffer of
    /// its own (the `witness` module's filled structs).
    Filled,
    /// A model's call with one pointer argument pointing into another's buffer (the `witness`
    /// module's aliases).
    Aliases,
}

/// A concrete call of a function, from a model of one of its labels.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Call {
    pub function: String,
    /// The label whose model gave the call (for a call of another origin, one it is for).
    pub target: u64,
    pub args: Vec<Arg>,
    /// Globals set before the call: runs of bytes, each at its offset in the global.
    pub globals: Vec<(GlobalId, Vec<Run>)>,
    pub origin: Origin,
    /// Which of the call's allocations (`malloc`, `calloc`, `realloc`; counted from 0) returns
    /// null (a call the `witness` module makes again with it failing).
    pub fail_allocation: Option<u32>,
    /// The function-pointer fields of what its pointer arguments point to are set to the
    /// program's functions of their types (the `witness` module's hooks), not left null.
    pub hooks: bool,
}

/// How models take in floating-point operations, one round of calls each: a round's calls
/// are for the labels no run of an earlier round covered. First the operations nearest the
/// function's entry, up to 16 of work ([`FloatChoice`]): a call covers a float label when the
/// model follows the arguments through the operations that lead to it, and on small functions
/// these are all of them (more makes the questions run to their limits: on tot_info's grey
/// labels, 57 shown feasible with 16, 10 with 32). Then none: every float result any value,
/// whose models are other calls (tot_info: 5 labels more, loops that run to their bound).
pub const ROUNDS: [FloatChoice; 2] = [FloatChoice::FromEntry(16), FloatChoice::Nearest(0)];

/// Limits of the models' questions.
#[derive(Clone, Copy, Debug)]
pub struct ModelLimits {
    /// Labels asked per function, at most.
    pub per_function: usize,
    /// Time for one function's encoding and questions.
    pub function_ms: u64,
}

/// Why a function gets no calls.
pub fn unsupported(f: &Function) -> Option<&'static str> {
    if f.name == "main" {
        return Some("`main` is run by the program's own tests");
    }
    if f.linkage == Linkage::Internal {
        return Some("a static function: only its callers in the file reach it");
    }
    if f.ty.variadic {
        return Some("variadic");
    }
    for p in &f.params {
        match &f.local(*p).ty {
            CType::Int(_) | CType::Pointer(_) => {}
            CType::Float(k) if k.size() <= 8 => {}
            _ => return Some("a parameter of a type a call cannot be written for"),
        }
    }
    None
}

/// Which bytes of a value of `ty` (from `at` on, in `mask`) hold a pointer, or something the
/// engine does not know the layout of: a call leaves them alone.
fn mark_pointers(program: &Program, ty: &CType, at: u64, mask: &mut [bool]) {
    let layout = program.layout();
    let everything = mask.len() as u64;
    match ty {
        CType::Int(_) | CType::Float(_) | CType::Void => {}
        CType::Array(elem, n) => match (layout.size_of(elem).unwrap_or(0), n) {
            (0, _) | (_, None) => mark(mask, at, everything),
            (size, Some(n)) => {
                for k in 0..*n {
                    if at + k * size >= everything {
                        break;
                    }
                    mark_pointers(program, elem, at + k * size, mask);
                }
            }
        },
        CType::Record(id) => match program.records.get(id.0 as usize) {
            Some(r) if r.complete => {
                for f in &r.fields {
                    if f.bits.is_none() {
                        mark_pointers(program, &f.ty, at + f.offset, mask);
                    }
                }
            }
            _ => mark(mask, at, everything),
        },
        CType::Pointer(_) | CType::Function(_) | CType::Unknown => {
            mark(mask, at, layout.size_of(ty).unwrap_or(8));
        }
    }
}

/// Marks `n` bytes of `mask` from `from` on (those inside it).
fn mark(mask: &mut [bool], from: u64, n: u64) {
    for b in from..from.saturating_add(n) {
        if let Some(m) = mask.get_mut(b as usize) {
            *m = true;
        }
    }
}

/// The pointer bytes of `n` bytes holding values of `ty` one after another.
pub fn pointer_mask(program: &Program, ty: &CType, n: u64) -> Vec<bool> {
    let mut mask = vec![false; n as usize];
    let stride = program.layout().size_of(ty).unwrap_or(0);
    if stride == 0 {
        return vec![!matches!(ty, CType::Void | CType::Int(_)); n as usize];
    }
    let mut at = 0;
    while at < n {
        mark_pointers(program, ty, at, &mut mask);
        at += stride;
    }
    mask
}

/// Can a test set global `g` before a call (and should it)?
pub fn settable_global(program: &Program, g: GlobalId) -> bool {
    let glob = &program.globals[g.0 as usize];
    glob.linkage == Linkage::External
        && !glob.is_extern_decl
        && !glob.is_const
        && !glob.volatile
        && program
            .layout()
            .size_of(&glob.ty)
            .is_some_and(|s| s > 0 && s <= MAX_GLOBAL_BYTES)
}

/// How each observed value maps back to the call.
enum Slot {
    /// A scalar parameter: one term.
    Scalar,
    /// A pointer parameter: the pointer, then the bytes it points to (`true` in the mask:
    /// a pointer's, left zero), then for each linked field ([`Linked`]) its value and the
    /// bytes it points to.
    Pointer {
        mask: Vec<bool>,
        linked: Vec<Linked>,
    },
    /// A parameter the model cannot give (one living in memory): zero.
    Zero,
}

/// A pointer field of the struct a pointer argument points to, at `offset` from the argument:
/// the model's value of it, then the bytes it points to ([`BUFFER_BYTES`] - [`BUFFER_BEFORE`]
/// of them, `mask` as a buffer's).
struct Linked {
    offset: u64,
    mask: Vec<bool>,
}

/// The pointer fields of `to` (a struct) that a call can point at buffers of their own:
/// data pointers to types of known size, the first [`MAX_LINKED`], with their masks.
fn linked_fields(program: &Program, to: &CType) -> Vec<Linked> {
    let CType::Record(id) = to else {
        return Vec::new();
    };
    let Some(r) = program.records.get(id.0 as usize).filter(|r| r.complete) else {
        return Vec::new();
    };
    let layout = program.layout();
    r.fields
        .iter()
        .filter(|f| f.bits.is_none() && f.offset + 8 <= BUFFER_BYTES - BUFFER_BEFORE)
        .filter_map(|f| match &f.ty {
            CType::Pointer(inner)
                if !matches!(inner.as_ref(), CType::Function(_))
                    && layout.size_of(inner).is_some_and(|s| s > 0) =>
            {
                Some(Linked {
                    offset: f.offset,
                    mask: pointer_mask(program, inner, BUFFER_BYTES - BUFFER_BEFORE),
                })
            }
            _ => None,
        })
        .take(MAX_LINKED)
        .collect()
}

/// The offsets of the pointer fields of `to` (a struct) that a call can point at buffers of
/// their own ([`linked_fields`]).
pub fn linked_offsets(program: &Program, to: &CType) -> Vec<u64> {
    linked_fields(program, to)
        .iter()
        .map(|l| l.offset)
        .collect()
}

/// The terms to observe in a model for a call of `f`, and how to read them back.
pub(super) struct Plan {
    pub(super) observe: Vec<T>,
    /// Every integer argument within [`SMALL`].
    small: T,
    slots: Vec<Slot>,
    /// Each global set, with the mask of its bytes that hold pointers (not observed).
    globals: Vec<(GlobalId, Vec<bool>)>,
}

pub(super) fn plan(program: &Program, f: &Function, entry: &EntryState, terms: &mut Terms) -> Plan {
    let layout = program.layout();
    let mut observe = Vec::new();
    let mut slots = Vec::new();
    // Every integer argument within [`SMALL`].
    let mut bounds = Vec::new();
    let byte_at = |terms: &mut Terms, mem: T, at: T, k: i64, observe: &mut Vec<T>| {
        let off = terms.bv(64, u128::from(k as u64));
        let addr = if k == 0 {
            at
        } else {
            terms.bin(BvOp::Add, at, off)
        };
        observe.push(terms.select(mem, addr));
    };
    for (i, p) in f.params.iter().enumerate() {
        let ty = &f.local(*p).ty;
        match (entry.params.get(i).copied().flatten(), ty) {
            (Some(v), CType::Pointer(to)) => {
                observe.push(v);
                let mask = match (entry.mem0, to.as_ref()) {
                    (_, CType::Function(_)) | (None, _) => vec![true; BUFFER_BYTES as usize],
                    (Some(mem0), to) => {
                        // Whole elements before the argument, as an array holds them.
                        let stride = layout.size_of(to).filter(|s| *s > 0).unwrap_or(1);
                        let pre = BUFFER_BEFORE.div_ceil(stride) * stride;
                        let whole = pointer_mask(program, to, pre + BUFFER_BYTES - BUFFER_BEFORE);
                        let mask = whole[(pre - BUFFER_BEFORE) as usize..].to_vec();
                        for (k, pointer) in mask.iter().enumerate() {
                            if !pointer {
                                let k = k as i64 - BUFFER_BEFORE as i64;
                                byte_at(terms, mem0, v, k, &mut observe);
                            }
                        }
                        mask
                    }
                };
                let linked = match entry.mem0 {
                    Some(_) => linked_fields(program, to),
                    None => Vec::new(),
                }
                .into_iter()
                .inspect(|l| {
                    let mem0 = entry.mem0.expect("linked fields only with a memory");
                    let off = terms.bv(64, u128::from(l.offset));
                    let at = terms.bin(BvOp::Add, v, off);
                    let child = terms.load(mem0, at, 8);
                    observe.push(child);
                    for (k, pointer) in l.mask.iter().enumerate() {
                        if !pointer {
                            byte_at(terms, mem0, child, k as i64, &mut observe);
                        }
                    }
                })
                .collect();
                slots.push(Slot::Pointer { mask, linked });
            }
            (Some(v), ty) => {
                observe.push(v);
                slots.push(Slot::Scalar);
                if let CType::Int(k) = ty {
                    let w = k.bits();
                    if (16..=64).contains(&w) {
                        let (lo, le) = if k.is_signed() {
                            (SMALL.0, CmpOp::Sle)
                        } else {
                            (0, CmpOp::Ule)
                        };
                        let lo = terms.bv_i(w, lo);
                        let hi = terms.bv_i(w, SMALL.1);
                        bounds.push(terms.cmp(le, lo, v));
                        bounds.push(terms.cmp(le, v, hi));
                    }
                }
            }
            (None, _) => slots.push(Slot::Zero),
        }
    }
    let small = terms.and(&bounds);
    let mut globals = Vec::new();
    for (&g, &(mem, at)) in &entry.globals {
        if !settable_global(program, g) {
            continue;
        }
        let ty = &program.globals[g.0 as usize].ty;
        let size = layout.size_of(ty).unwrap_or(0);
        let mask = pointer_mask(program, ty, size);
        if mask.iter().all(|p| *p) {
            continue;
        }
        for (k, pointer) in mask.iter().enumerate() {
            if !pointer {
                byte_at(terms, mem, at, k as i64, &mut observe);
            }
        }
        globals.push((g, mask));
    }
    Plan {
        observe,
        small,
        slots,
        globals,
    }
}

impl Plan {
    /// The calls a model gives: one, and when it makes a pointer argument null, a second with
    /// a buffer there holding what the model read through it (the encoding lets a pointer
    /// argument hold any address and be read or written through; a null one stops the run
    /// at its first access). Then, when a call has buffers, the same call with the bytes of
    /// its buffers the model left zero filled ([`FILLS`]): a model of a label inside a loop
    /// sees the data the loop reads only as a havoc, so these runs go further.
    pub(super) fn calls(&self, f: &Function, target: u64, values: &[Option<u128>]) -> Vec<Call> {
        let first = self.call(f, target, values, false, None);
        let null = first.args.iter().any(|a| matches!(a, Arg::Null));
        let buffers = self.slots.iter().any(|s| matches!(s, Slot::Pointer { .. }));
        let mut out = vec![first];
        if null {
            out.push(self.call(f, target, values, true, None));
        }
        if buffers {
            for fill in FILLS {
                out.push(self.call(f, target, values, true, Some(*fill)));
            }
        }
        out
    }

    /// The call of a model; `no_null`: a null pointer argument gets a buffer; `fill`: the
    /// bytes of buffers the model left zero get `fill(k)` (k: the byte's index), but for the
    /// last [`FILL_END`], which stay zero (a string there ends).
    fn call(
        &self,
        f: &Function,
        target: u64,
        values: &[Option<u128>],
        no_null: bool,
        fill: Option<fn(usize) -> u8>,
    ) -> Call {
        let mut at = 0;
        let mut next = || {
            let v = values.get(at).copied().flatten().unwrap_or(0);
            at += 1;
            v
        };
        let mut args = Vec::with_capacity(self.slots.len());
        for slot in &self.slots {
            args.push(match slot {
                Slot::Scalar => Arg::Bits(next()),
                Slot::Zero => Arg::Bits(0),
                Slot::Pointer { mask, linked } => {
                    let p = next();
                    let limit = mask.len().saturating_sub(FILL_END);
                    let data: Vec<u8> = mask
                        .iter()
                        .enumerate()
                        .map(|(k, pointer)| {
                            if *pointer {
                                return 0;
                            }
                            match (next() as u8, fill) {
                                (0, Some(fill)) if k < limit => fill(k),
                                (b, _) => b,
                            }
                        })
                        .collect();
                    // Each linked field's target, when the model's value of it is not null.
                    let children: Vec<(u64, Vec<u8>)> = linked
                        .iter()
                        .filter_map(|l| {
                            let target = next();
                            // The buffer's bytes, the field pointing BUFFER_BEFORE in.
                            let mut bytes = vec![0u8; BUFFER_BEFORE as usize];
                            bytes.extend(l.mask.iter().map(|pointer| {
                                if *pointer {
                                    0
                                } else {
                                    next() as u8
                                }
                            }));
                            (target != 0).then_some((l.offset, bytes))
                        })
                        .collect();
                    match (p == 0 && !no_null, children.is_empty()) {
                        (true, _) => Arg::Null,
                        (false, true) => Arg::Buffer(data),
                        (false, false) => Arg::Linked { data, children },
                    }
                }
            });
        }
        let globals = self
            .globals
            .iter()
            .map(|(g, mask)| {
                // Runs of bytes that hold no pointer, each with its offset.
                let mut runs: Vec<Run> = Vec::new();
                for (k, pointer) in mask.iter().enumerate() {
                    if *pointer {
                        continue;
                    }
                    let b = next() as u8;
                    match runs.last_mut() {
                        Some((at, bytes)) if *at + bytes.len() as u64 == k as u64 => bytes.push(b),
                        _ => runs.push((k as u64, vec![b])),
                    }
                }
                (*g, runs)
            })
            .collect();
        Call {
            function: f.name.clone(),
            target,
            args,
            globals,
            origin: Origin::Model,
            fail_allocation: None,
            hooks: false,
        }
    }
}

/// How deep in the calls from an entry a static function's labels are looked for (the
/// encoding inlines calls this deep).
const CALL_DEPTH: usize = 2;

/// Where the labels of `unknown` (by function) are asked: a function a call can be written for
/// asks its own, and those of the static functions it calls (directly or through static
/// functions, [`CALL_DEPTH`] deep), whose copies its encoding holds. Returns the labels asked
/// per entry function (a static function's in each entry reaching it), and the functions none
/// is asked for, with why.
pub fn entries(
    program: &Program,
    unknown: &BTreeMap<String, Vec<u64>>,
) -> (BTreeMap<String, Vec<u64>>, BTreeMap<String, &'static str>) {
    let cg = crate::cfg::callgraph::CallGraph::build(program);
    let mut asked: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut reached: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for f in &program.functions {
        if unsupported(f).is_some() {
            continue;
        }
        let mut ids: Vec<u64> = unknown.get(&f.name).cloned().unwrap_or_default();
        let mut frontier = vec![f.name.clone()];
        let mut seen = std::collections::BTreeSet::from([f.name.clone()]);
        for _ in 0..CALL_DEPTH {
            let mut next = Vec::new();
            for caller in &frontier {
                for (callee, _) in cg.callees(caller) {
                    let Some(g) = program.function(&callee) else {
                        continue;
                    };
                    if g.linkage != Linkage::Internal || !seen.insert(callee.clone()) {
                        continue;
                    }
                    if let Some(more) = unknown.get(&callee) {
                        ids.extend(more);
                        reached.insert(g.name.as_str());
                    }
                    next.push(callee);
                }
            }
            frontier = next;
        }
        if !ids.is_empty() {
            asked.insert(f.name.clone(), ids);
        }
    }
    let mut not_asked = BTreeMap::new();
    for name in unknown.keys() {
        let why = match program.function(name) {
            Some(f) => match unsupported(f) {
                Some(_) if f.linkage == Linkage::Internal && reached.contains(name.as_str()) => {
                    continue
                }
                Some(_) if f.linkage == Linkage::Internal => {
                    "a static function no function a call can be written for reaches"
                }
                Some(why) => why,
                None => continue,
            },
            // Labels in inactive preprocessor branches have no function.
            None if name.is_empty() => "not in the compiled program",
            None => "not analysed",
        };
        not_asked.insert(name.clone(), why);
    }
    (asked, not_asked)
}

/// Calls from models of the labels `targets` asks, by function (each function's labels in the
/// order given, at most [`ModelLimits::per_function`] of them), with the floating-point
/// operations `floats` chooses ([`ROUNDS`]), functions in parallel on the current thread
/// pool; `done(1)` as each function is. The targets come from [`entries`].
pub fn calls(
    program: &Program,
    config: &PruneConfig,
    targets: &BTreeMap<String, Vec<u64>>,
    limits: ModelLimits,
    floats: FloatChoice,
    done: &(dyn Fn(u64) + Sync),
) -> Vec<Call> {
    let prover = Prover::new(program, config);
    let todo: Vec<(&Function, &Vec<u64>)> = targets
        .iter()
        .filter_map(|(name, ids)| Some((program.function(name)?, ids)))
        .collect();
    let mut out: Vec<Call> = todo
        .par_iter()
        .flat_map_iter(|(f, ids)| {
            let calls = crate::smt::in_fresh_context(|| calls_of(&prover, f, ids, limits, floats));
            done(1);
            calls
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

fn calls_of(
    prover: &Prover,
    f: &Function,
    ids: &[u64],
    limits: ModelLimits,
    floats: FloatChoice,
) -> Vec<Call> {
    let t0 = Instant::now();
    let deadline = t0 + Duration::from_millis(limits.function_ms);
    let config = &prover.config;
    // With the copies of static callees, whose labels are asked here too.
    let mut encode = config.encode.clone();
    encode.context_functions = prover.context_functions.clone();
    let Some(mut vc) = encode_until(prover.program, f, &prover.sums, &encode, Some(deadline))
    else {
        return Vec::new();
    };
    let plan = plan(prover.program, f, &vc.entry, &mut vc.terms);
    let (backend, loops) = super::asker::backends(&config.solver, None, &f.name);
    let budget = Budget::of_wall(Duration::from_millis(limits.function_ms), t0);
    let faults = Faults::default();
    let mut asker = Asker::new(
        backend,
        vc.terms,
        (&mut vc.facts, &vc.loop_candidates, loops),
        &vc.exactness,
        budget,
        &faults,
    );
    // Each label's first encoding: its own, in a called-once callee, or in a static callee's
    // copy.
    let mut by_id: std::collections::HashMap<u64, &crate::vc::encode::LabelVc> =
        std::collections::HashMap::new();
    for l in vc
        .labels
        .iter()
        .chain(&vc.context_labels)
        .chain(vc.copies.iter().flat_map(|c| &c.labels))
    {
        by_id.entry(l.id).or_insert(l);
    }
    let mut out = Vec::new();
    for id in ids.iter().take(limits.per_function) {
        if asker.over_budget() {
            break;
        }
        let Some(l) = by_id.get(id) else {
            continue;
        };
        let small = asker.model_of(l, &plan.observe, Some(plan.small), floats);
        if let Some(values) = small.or_else(|| asker.model_of(l, &plan.observe, None, floats)) {
            out.extend(plan.calls(f, *id, &values));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_sets_every_byte_but_the_pointers() {
        let p = crate::frontend::test_program(
            "struct node { int count; struct node *next; char tag[4]; };\n\
             struct node head; int plain[2]; static int hidden; const int fixed = 1;\n\
             int f(struct node *n) { return n->count + head.count + plain[0] + hidden + fixed; }\n\
             static int g(int x) { return x; }\n\
             int main(void) { return g(0); }\n",
        );
        let f = p.function("f").unwrap();
        let CType::Pointer(node) = &f.local(f.params[0]).ty else {
            panic!("a pointer parameter")
        };
        // int (0..4), padding (4..8), the link (8..16), tag (16..20), padding (20..24); twice.
        let mask = pointer_mask(&p, node, 48);
        let pointers: Vec<usize> = (0..48).filter(|k| mask[*k]).collect();
        let expected: Vec<usize> = (8..16).chain(32..40).collect();
        assert_eq!(pointers, expected);
        let global =
            |name: &str| GlobalId(p.globals.iter().position(|g| g.name == name).unwrap() as u32);
        assert!(settable_global(&p, global("head")));
        assert!(settable_global(&p, global("plain")));
        assert!(!settable_global(&p, global("hidden")));
        assert!(!settable_global(&p, global("fixed")));
        assert_eq!(unsupported(f), None);
        assert!(unsupported(p.function("g").unwrap()).is_some());
        assert!(unsupported(p.function("main").unwrap()).is_some());
    }
}
