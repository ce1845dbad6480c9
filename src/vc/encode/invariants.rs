//! Loop facts: bounds proposed for the values a loop carries, at the head where the encoding
//! havocs them, each with the obligation that makes it inductive.
//!
//! At a havocked loop head, every SSA local the loop writes is a fresh value. For such a local
//! of an integer or floating-point type, a few bounds are proposed ([`LoopCandidate`]): not
//! negative (signed integers, and floats: `!(v < 0.0)`), nothing strictly between 0 and 1
//! (floats the function never assigns nor steps by a fraction: a sum of counts, so that
//! `N > 0` gives `log(N) >= 0`), and the least and greatest of the constants the function
//! assigns it or the loop is entered with (integers). A bound is a
//! fact of every run when it holds on each way into the head: on the edges that enter the loop
//! (under the head's reach condition, of the value the loop is entered with) and on the cut
//! back edges that end an iteration there (under the edge's condition, of the value the
//! iteration leaves), assuming the bounds of every head. The encoding only states that
//! obligation; the prover decides which candidates are proved together (`prune`'s loop facts,
//! a Houdini fixpoint) and adds only those as facts.
//!
//! Soundness: let `I` be the conjunction of a set of candidates whose obligations are all valid
//! under `I` and the encoding's facts. Take a run and the first time it arrives at a head node
//! with a bound of `I` false. It arrives along an edge into the node's block: a loop entry,
//! whose value the encoding computes from the nodes before, or a back edge cut to that node
//! ([`crate::cfg::unroll::Peeled::cut_head`]), ending an iteration that started at the node.
//! The run so far is a model of the encoding's facts in which every head it visited before
//! holds `I`; every other head value is free but for the fact that keeps a counter on one side
//! of its entry value ([`super::loops::counter_step`]), and the bounds proposed for one value
//! hold together with that fact for some value whatever the entry value is ([`int_bounds`];
//! NaN meets every bound on a float and that fact). So the run extends to a model of the
//! facts and `I`, where the valid obligation gives the bound at the arrival: a contradiction.
//! `I` holds at every head a run visits. A cut edge into a block with no head node to go back
//! to breaks every candidate of that block.

use super::*;
use crate::vc::term::FpCmpOp;

/// A bound on the value a loop carries at its head, to be proved inductive.
#[derive(Clone, Debug)]
pub struct LoopCandidate {
    /// What its fixpoint assumes of it while proving it: the bound on `value`, or what of it
    /// the obligations need (a cell bound's instances at the nest's own accesses).
    pub assumed: T,
    /// The head's fresh value of the local.
    pub value: T,
    /// Valid when the bound holds on every way into the head (given the bounds proved with
    /// it): each way's condition implies the bound of the value it brings.
    pub obligation: T,
    /// Which of the prover's fixpoints asks it.
    pub group: CandidateGroup,
    /// The facts it gives once proved: the bound, or a cell bound's instances one by one.
    pub proved: Vec<Fact>,
}

/// The loop bounds proved together, one group after the other, each group's proved bounds
/// facts of the next; bounds on array cells ([`super::cells`]) after the scalars' of their
/// kind, each kind with its own share of the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CandidateGroup {
    /// Bounds on integers, asked together.
    Integer,
    /// Bounds on integer cells, asked together.
    IntegerCells,
    /// Floats not negative, asked one at a time.
    FloatSign,
    /// Float cells not negative, asked one at a time.
    FloatSignCells,
    /// Floats never strictly between 0 and 1, asked one at a time once the signs are known
    /// (a sum of whole numbers stays whole only while none is negative).
    FloatWhole,
    /// Float cells never strictly between 0 and 1, asked one at a time.
    FloatWholeCells,
}

impl CandidateGroup {
    pub const ALL: [CandidateGroup; 6] = [
        CandidateGroup::Integer,
        CandidateGroup::IntegerCells,
        CandidateGroup::FloatSign,
        CandidateGroup::FloatSignCells,
        CandidateGroup::FloatWhole,
        CandidateGroup::FloatWholeCells,
    ];

    /// Are its bounds asked together (integers), or one at a time?
    pub fn together(self) -> bool {
        matches!(self, CandidateGroup::Integer | CandidateGroup::IntegerCells)
    }

    /// Does it bound a float's sign, or a float's being whole?
    pub fn sign(self) -> bool {
        matches!(
            self,
            CandidateGroup::FloatSign | CandidateGroup::FloatSignCells
        )
    }

    /// Does it bound array cells ([`super::cells`])? Their questions read memory byte by byte.
    pub fn cells(self) -> bool {
        matches!(
            self,
            CandidateGroup::IntegerCells
                | CandidateGroup::FloatSignCells
                | CandidateGroup::FloatWholeCells
        )
    }

    pub fn whole(self) -> bool {
        matches!(
            self,
            CandidateGroup::FloatWhole | CandidateGroup::FloatWholeCells
        )
    }
}

/// At most this many candidates per encoding: each one is a few more terms in the prover's
/// fixpoint, which asks all of them in one question per round.
const MAX_CANDIDATES: usize = 64;

/// Functions of more blocks than this get no candidates: each of the fixpoint's questions
/// holds the whole function. On zlib's `inflate` (700 blocks, 64 candidates) they more than
/// doubled the time of the run and decided no label.
const MAX_BLOCKS: usize = 100;

/// At most this many floating-point values get candidates (one or two each): the prover asks
/// those one at a time, each a question that bit-blasts the float operations of its loop
/// nearest it ([`crate::vc::cone::QUESTION_FP_WORK`]). tot_info's `InfoTbl`, annotated for
/// WM, proposes bounds for 9 of its locals' values at its loops' heads before those of its row
/// sums (with 4, their `sum < 0` and `N < 0` labels stayed unproved).
const MAX_FLOAT_CANDIDATES: usize = 12;

/// The shape of a proposed bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Bound {
    /// `c <= v` (signed or unsigned as the local's type).
    AtLeast(i128),
    /// `v <= c`.
    AtMost(i128),
    /// `!(v < 0.0)`: not negative (NaN included).
    NotNegative,
    /// `!(0.0 < v && v < 1.0)`: nothing strictly between 0 and 1 (NaN included), as a sum of
    /// whole numbers not negative is.
    ZeroOrAtLeastOne,
}

/// A candidate while the body is encoded: its head node, local and bound, and the
/// implications gathered from the ways into the head so far.
pub(super) struct Pending {
    node: usize,
    block: BlockId,
    local: LocalId,
    bound: Bound,
    signed: bool,
    value: T,
    ways: Vec<T>,
}

/// What the candidates of one function's loop heads are made from, gathered in one pass over
/// its statements when the function has loops.
pub(super) struct Sources {
    /// The locals the labels read ([`locals_labels_read`]).
    read_by_labels: BTreeSet<LocalId>,
    /// The integer constants the function assigns each local.
    pub(super) int_constants: BTreeMap<LocalId, Vec<i128>>,
    /// The floating-point locals likely not negative at a loop head: those the function
    /// assigns a constant not negative (`0.0`, `-0.0` included, NaN not), accumulators started
    /// there, and those it steps up by such a constant (`++x`, `x += 0.5`), counters.
    float_starts: BTreeSet<LocalId>,
    /// The floating-point locals assigned or stepped by a constant that is not a whole number
    /// (`x = 0.5`, `x += 0.25`): sums of whole numbers are the others.
    fractions: BTreeSet<LocalId>,
}

impl Sources {
    /// The sources of `f`'s candidates; `None` for a function of more than [`MAX_BLOCKS`].
    pub(super) fn of(f: &Function) -> Option<Sources> {
        if f.blocks.len() > MAX_BLOCKS {
            return None;
        }
        let mut sources = Sources {
            read_by_labels: locals_labels_read(f),
            int_constants: BTreeMap::new(),
            float_starts: BTreeSet::new(),
            fractions: BTreeSet::new(),
        };
        for s in f.blocks.iter().flat_map(|b| &b.stmts) {
            let StmtKind::Assign {
                dst: LValue::Var(VarRef::Local(d)),
                src,
            } = &s.kind
            else {
                continue;
            };
            let whole = |c: f64| c.fract() == 0.0;
            match &src.strip_casts().kind {
                ExprKind::Const(c) => sources.int_constants.entry(*d).or_default().push(*c),
                ExprKind::FloatConst(c) => {
                    if *c >= 0.0 {
                        sources.float_starts.insert(*d);
                    }
                    if !whole(*c) {
                        sources.fractions.insert(*d);
                    }
                }
                ExprKind::Binary(BinOp::Add, a, b) if matches!(f.local(*d).ty, CType::Float(_)) => {
                    let is_d = |e: &Expr| {
                        matches!(&e.strip_casts().kind,
                            ExprKind::Read(LValue::Var(VarRef::Local(x))) if x == d)
                    };
                    // A constant not negative, perhaps an integer one converted (`++x`).
                    let up = |e: &Expr| match e.strip_casts().kind {
                        ExprKind::FloatConst(c) => c >= 0.0,
                        ExprKind::Const(c) => c >= 0,
                        _ => false,
                    };
                    if (is_d(a) && up(b)) || (is_d(b) && up(a)) {
                        sources.float_starts.insert(*d);
                    }
                    let fraction = |e: &Expr| match e.strip_casts().kind {
                        ExprKind::FloatConst(c) => !whole(c),
                        _ => false,
                    };
                    if fraction(a) || fraction(b) {
                        sources.fractions.insert(*d);
                    }
                }
                _ => {}
            }
        }
        Some(sources)
    }
}

impl Enc<'_> {
    /// The bound `b` of value `v` (compared signed or not as `signed` says).
    pub(super) fn bound_of(&mut self, b: Bound, signed: bool, v: T) -> T {
        let w = self.t.width(v);
        let le = if signed { CmpOp::Sle } else { CmpOp::Ule };
        match b {
            Bound::AtLeast(c) => {
                let c = self.t.bv_i(w, c);
                self.t.cmp(le, c, v)
            }
            Bound::AtMost(c) => {
                let c = self.t.bv_i(w, c);
                self.t.cmp(le, v, c)
            }
            Bound::NotNegative => {
                let zero = self.t.bv(w, 0);
                let lt = self.t.fp_cmp(FpCmpOp::Lt, v, zero);
                self.t.not(lt)
            }
            Bound::ZeroOrAtLeastOne => {
                let zero = self.t.bv(w, 0);
                let one = self.t.bv(w, crate::vc::fp::bits_of(w, 1.0));
                let above_zero = self.t.fp_cmp(FpCmpOp::Lt, zero, v);
                let below_one = self.t.fp_cmp(FpCmpOp::Lt, v, one);
                let between = self.t.and2(above_zero, below_one);
                self.t.not(between)
            }
        }
    }

    /// Proposes bounds for the locals head node `n` (block `h`, a natural loop when `natural`)
    /// has just havocked, from the function's `sources` (`None`: no candidates): `entry[i]` is
    /// the value local `entry[i].0` entered the head with (under `pc`), `st` the state after
    /// the havoc, `monotone` the locals the loop only steps one way (each with the fact that
    /// it stays on that side of its value at entry).
    ///
    /// The bounds of one value, and any subset of them, hold together with that fact for some
    /// value whatever the value at entry is: a counter stepped up gets lower bounds only, one
    /// stepped down upper bounds only, and a lower bound never exceeds an upper one. So a head
    /// no run reaches can always meet them, which the soundness argument needs.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn propose_loop_facts(
        &mut self,
        (n, h, natural): (usize, BlockId, bool),
        sources: Option<&Sources>,
        entry: &[(LocalId, Option<T>)],
        monotone: &BTreeMap<LocalId, i8>,
        pc: T,
        st: &State,
        pending: &mut Vec<Pending>,
    ) {
        let Some(sources) = sources.filter(|_| natural) else {
            return;
        };
        let f = self.f;
        for &(l, at_entry) in entry {
            if !sources.read_by_labels.contains(&l) {
                continue;
            }
            let (Some(at_entry), Some(value)) = (at_entry, st.vars[l.0 as usize]) else {
                continue;
            };
            let w = self.t.width(value);
            let (bounds, signed) = match &f.local(l).ty {
                // An accumulator started at a constant not negative: each float question
                // bit-blasts the operations in its cone, so only the likely ones are asked.
                CType::Float(_)
                    if crate::vc::fp::is_format(w) && sources.float_starts.contains(&l) =>
                {
                    if self.float_candidates_proposed >= MAX_FLOAT_CANDIDATES {
                        continue;
                    }
                    self.float_candidates_proposed += 1;
                    let mut bounds = vec![Bound::NotNegative];
                    if !sources.fractions.contains(&l) {
                        bounds.push(Bound::ZeroOrAtLeastOne);
                    }
                    (bounds, false)
                }
                CType::Int(k) => {
                    let signed = k.is_signed();
                    let entry_const = self.t.as_const(at_entry).map(|c| as_signed(c, w, signed));
                    let assigned = sources.int_constants.get(&l).into_iter().flatten();
                    let consts = assigned.copied().chain(entry_const);
                    let bounds = int_bounds(consts, w, signed, monotone.get(&l).copied());
                    (bounds, signed)
                }
                _ => continue,
            };
            for bound in bounds {
                if self.loop_candidates_proposed >= MAX_CANDIDATES {
                    return;
                }
                let at = self.bound_of(bound, signed, at_entry);
                let way = self.t.implies(pc, at);
                pending.push(Pending {
                    node: n,
                    block: h,
                    local: l,
                    bound,
                    signed,
                    value,
                    ways: vec![way],
                });
                self.loop_candidates_proposed += 1;
            }
        }
    }

    /// The cut edge from node `n` to block `t`, taken under `cond` with state `st`: a way
    /// back into the head node it goes to, for that node's candidates; `broken` gets `t`
    /// when the edge has no head node to go back to.
    pub(super) fn loop_back_edge(
        &mut self,
        (peeled, n, t): (&Peeled, usize, BlockId),
        cond: T,
        st: &State,
        pending: &mut [Pending],
        broken: &mut BTreeSet<BlockId>,
    ) {
        let Some(head) = peeled.cut_head(n, t) else {
            broken.insert(t);
            return;
        };
        for p in pending.iter_mut().filter(|p| p.node == head) {
            let Some(v) = st.vars[p.local.0 as usize] else {
                broken.insert(t);
                continue;
            };
            let at = self.bound_of(p.bound, p.signed, v);
            let way = self.t.implies(cond, at);
            p.ways.push(way);
        }
    }

    /// The candidates of a body encoded whole, but those of `broken` blocks.
    pub(super) fn settle_loop_facts(&mut self, pending: Vec<Pending>, broken: &BTreeSet<BlockId>) {
        for p in pending {
            if broken.contains(&p.block) {
                continue;
            }
            let fact = self.bound_of(p.bound, p.signed, p.value);
            let obligation = self.t.and(&p.ways);
            self.loop_candidates.push(LoopCandidate {
                assumed: fact,
                value: p.value,
                obligation,
                group: match p.bound {
                    Bound::AtLeast(_) | Bound::AtMost(_) => CandidateGroup::Integer,
                    Bound::NotNegative => CandidateGroup::FloatSign,
                    Bound::ZeroOrAtLeastOne => CandidateGroup::FloatWhole,
                },
                proved: vec![Fact {
                    about: vec![p.value],
                    needs_all: false,
                    fact,
                    work: 0,
                }],
            });
        }
    }
}

/// The locals whose values `f`'s label predicates read: directly, or through a local they
/// read that is assigned from them (a temporary holding an operand). A bound on any other
/// local would be in no label's question but through its reach condition, and each candidate
/// makes the fixpoint's questions bigger.
fn locals_labels_read(f: &Function) -> BTreeSet<LocalId> {
    let reads = |e: &Expr, out: &mut BTreeSet<LocalId>| {
        crate::ir::visit::expr(e, &mut |item| {
            if let crate::ir::visit::Item::Place {
                place: LValue::Var(VarRef::Local(l)),
                address_only: false,
            } = item
            {
                out.insert(*l);
            }
        })
    };
    let stmts = || f.blocks.iter().flat_map(|b| &b.stmts);
    let mut out = BTreeSet::new();
    for s in stmts() {
        if let StmtKind::Label { pred, .. } = &s.kind {
            reads(pred, &mut out);
        }
    }
    let direct = out.clone();
    for s in stmts() {
        if let StmtKind::Assign {
            dst: LValue::Var(VarRef::Local(d)),
            src,
        } = &s.kind
        {
            if direct.contains(d) {
                reads(src, &mut out);
            }
        }
    }
    out
}

/// The bounds proposed for an integer of `w` bits: not negative (signed), and the least and
/// greatest of `consts` that fit the type; only lower bounds for a counter stepped up
/// (`step` 1), only upper ones for one stepped down; no lower bound above the upper one.
fn int_bounds(
    consts: impl Iterator<Item = i128>,
    w: u32,
    signed: bool,
    step: Option<i8>,
) -> Vec<Bound> {
    let (lo, hi) = if signed {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    };
    let fit: Vec<i128> = consts.filter(|c| (lo..=hi).contains(c)).collect();
    let (min, max) = (fit.iter().min().copied(), fit.iter().max().copied());
    let mut lower: Vec<i128> = Vec::new();
    if signed && max.is_none_or(|m| m >= 0) {
        lower.push(0);
    }
    lower.extend(min.filter(|&m| m != 0 && m != lo));
    let upper: Vec<i128> = max.filter(|&m| m != hi).into_iter().collect();
    let mut out = Vec::new();
    if step != Some(-1) {
        out.extend(lower.into_iter().map(Bound::AtLeast));
    }
    if step != Some(1) {
        out.extend(upper.into_iter().map(Bound::AtMost));
    }
    out
}

/// The constant `c` of a `w`-bit term as the type's value.
fn as_signed(c: u128, w: u32, signed: bool) -> i128 {
    let c = c as i128;
    if signed && w < 128 && c >= 1i128 << (w - 1) {
        c - (1i128 << w)
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidates(source: &str, name: &str) -> FunctionVc {
        let program = &crate::frontend::test_program(source);
        let f = program.function(name).unwrap();
        let sums = Summaries::new(program, &BTreeMap::new());
        encode(program, f, &sums, &EncodeConfig::default())
    }

    #[test]
    fn bounds_of_one_value_hold_together_and_with_a_counters_step() {
        let all = |v: &[i128], signed, step| int_bounds(v.iter().copied(), 32, signed, step);
        assert_eq!(
            all(&[0, 1], true, None),
            [Bound::AtLeast(0), Bound::AtMost(1)]
        );
        // A greatest constant below zero: no "not negative".
        assert_eq!(
            all(&[-1], true, None),
            [Bound::AtLeast(-1), Bound::AtMost(-1)]
        );
        assert_eq!(
            all(&[-3, 5], true, Some(1)),
            [Bound::AtLeast(0), Bound::AtLeast(-3)]
        );
        assert_eq!(all(&[-3, 5], true, Some(-1)), [Bound::AtMost(5)]);
        assert_eq!(all(&[], true, None), [Bound::AtLeast(0)]);
        assert_eq!(
            all(&[2, 7], false, None),
            [Bound::AtLeast(2), Bound::AtMost(7)]
        );
        // Constants out of the type's range are left out.
        assert_eq!(all(&[1 << 40], false, None), []);
    }

    #[test]
    fn loop_carried_scalars_labels_read_get_bounds_and_others_none() {
        // A flag, a counter, an accumulator and a double the labels read; `t` they do not.
        let vc = candidates(
            "int f(int n, int *a) { int done = 0, s = 0, t = 0; double d = 0.0; int i = 0;\n\
             while (!done && i < n) { if (a[i] < 0) done = 1; s += 2; t += a[i]; d += 1.0; i++; }\n\
             pc_label(done + s + i < 0, 1, \"T\"); pc_label(d < 0.0, 2, \"T\");\n\
             return s + t + done + (int)d; }",
            "f",
        );
        assert!(vc.loop_candidates.iter().all(|c| c.obligation != c.assumed));
        // The loop is peeled once: its bounds are at the head of its tail. done: >= 0, <= 1;
        // s and i (stepped up): >= 0; d: not negative, and never between 0 and 1. `a[i]` is
        // tested, but the test does not leave the loop: no bound on its cells.
        let of = |g| vc.loop_candidates.iter().filter(|c| c.group == g).count();
        assert_eq!(of(CandidateGroup::FloatSign), 1);
        assert_eq!(of(CandidateGroup::FloatWhole), 1);
        assert_eq!(vc.loop_candidates.len(), 6, "{:?}", vc.loop_candidates);
        // No loop, no candidate.
        let vc = candidates("int g(int x) { pc_label(x < 0, 1, \"T\"); return x; }", "g");
        assert!(vc.loop_candidates.is_empty());
    }
}
