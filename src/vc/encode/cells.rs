//! Loop facts about array cells: a bound on every cell a loop nest has visited so far, proved
//! inductive like the bounds on scalars ([`super::invariants`]) and carried to the reads of the
//! same cells after the nest.
//!
//! A *site* is a place read or written in a loop nest that writes it or leaves on a test of it
//! (`p[i * c + j]`, `xs[i]`), whose address is computed from SSA locals only: one counter per
//! loop of the nest (the local of the address that loop writes, started at one constant), the
//! others written nowhere in the nest. At the head of the nest's `k`-th loop the cells visited
//! so far are those of the counters' values before the current ones in lexicographic order,
//! each inner counter over `[start, bound)` (its loop's test, `j < c`); the candidate says each
//! of them satisfies a bound (not negative; for floats also never strictly between 0 and 1),
//! under the head's reach condition:
//!
//! `reach(h) ∧ (m before the counters at h) ⇒ bound(cell(m) in h's memory)` for every `m`.
//!
//! The obligation, on each way into the head (entering it, or a cut back edge), is that
//! implication for the way's state, at a fresh index tuple `m` (a Skolem constant: valid for it
//! is valid for all) taken apart from the tuples of the nest's own accesses, and at each of
//! those: a cell an iteration visits is then the very term its access read, and the solver
//! needs no arithmetic on indices. What the fixpoint assumes of the candidate is the implication
//! at the head for the same tuples (instances of a universal statement, each true when it is).
//! Once proved, its instance at each access after the nest (the same array indexed the same
//! way, perhaps by counters of its own) is a fact about the bytes that access reads. So a nest
//! that stores sums not negative in `xs[i]`, or leaves when a count `p[i * c + j]` is negative,
//! proves every cell it went over not negative, and the reads of `xs[i]` or `p[i * c + j]` in
//! later loops, with `i` below the counter the nest ended with, get the bound.
//!
//! Soundness: the argument of [`super::invariants`], with one difference for heads a run does
//! not reach: a cell's memory at a head need not be fresh there (a nest that only reads it), so
//! no choice of the head's values need make the bound hold; the reach condition does, being
//! false at a head off the run's path. An instance at an access is stated on the memory the
//! access reads only where that memory is the head's, or a join of memories one of which is,
//! under the joins' conditions that choose it, and only when the address's other locals hold
//! their values at the head. Guesses (the sites, the counters, their starts, the inner bounds)
//! only decide what is proposed: a wrong one gives an obligation that fails.

use super::invariants::Bound;
use super::loops::HavocSet;
use super::*;
use crate::cfg::loops::LoopForest;
use crate::vc::term::Node;

/// At most this many sites per function: each gives a candidate per bound and loop head, and
/// their questions read memory byte by byte.
const MAX_SITES: usize = 4;

/// At most this many candidates per frame, besides the scalars' ([`super::invariants`]).
const MAX_CANDIDATES: usize = 16;

/// At most this many reads of one site's place get the site's bound (each an instance).
const MAX_READS: usize = 16;

/// A place accessed in a loop nest, the nest's counters and what the cells are bounded by.
pub(super) struct Site {
    place: LValue,
    ty: CType,
    /// The nest's loops, outermost first.
    loops: Vec<NestLoop>,
    bounds: Vec<Bound>,
    signed: bool,
    /// The blocks of the nest's outermost loop.
    body: BTreeSet<BlockId>,
    /// The address's locals that are not counters.
    others: Vec<LocalId>,
}

/// A loop of a site's nest.
struct NestLoop {
    head: BlockId,
    /// The local the loop steps (written in it, and in no loop inside it).
    counter: LocalId,
    /// The one constant the function assigns the counter.
    start: i128,
    /// The bound its loop's test compares the counter with (none for the outermost).
    bound: Option<Expr>,
}

/// The sites of one frame, and what the encoding gathers for them.
#[derive(Default)]
pub(super) struct Cells {
    sites: Vec<Site>,
    /// Per site, the Skolem index tuple (made at the first head).
    skolem: Vec<Option<Vec<T>>>,
    /// Per site, the accesses to its place.
    accesses: Vec<Vec<Accessed>>,
    pending: Vec<CellPending>,
}

/// An access to a site's place: the counters' values there and, for one after the nest, its
/// state and the place it accesses (whose counters may be other locals).
struct Accessed {
    tuple: Vec<T>,
    after: Option<(State, LValue)>,
}

/// A candidate while the body is encoded.
pub(super) struct CellPending {
    node: usize,
    block: BlockId,
    site: usize,
    /// The loop of the nest the head is (its depth, 1 for the outermost).
    depth: usize,
    bound: Bound,
    reach: T,
    head: State,
    /// The ways into the head: each one's condition and state.
    ways: Vec<(T, State)>,
}

impl Cells {
    /// The sites of `f`'s loops: each place in each nest that writes it or tests a value
    /// read from it, in the blocks' order (the source's).
    pub(super) fn of(
        f: &Function,
        forest: &LoopForest,
        havoc_sets: &HashMap<BlockId, HavocSet>,
        int_constants: &BTreeMap<LocalId, Vec<i128>>,
        in_memory: &[bool],
        kind: impl Fn(&LValue) -> Option<(CType, Vec<Bound>, bool)>,
    ) -> Cells {
        let mut out = Cells::default();
        let mut seen: Vec<(LValue, BlockId)> = Vec::new();
        let mut blocks = forest.order.clone();
        blocks.sort();
        for b in blocks {
            if forest.heads_containing(b).is_empty() {
                continue;
            }
            // The nest of a place is its outermost loop's: each place once in each.
            let outermost = forest
                .heads_containing(b)
                .iter()
                .max_by_key(|h| forest.body(**h).map_or(0, |s| s.len()))
                .copied()
                .expect("a block in a loop");
            let blk = f.block(b);
            let accesses = blk.stmts.iter().map(Access::Stmt);
            for access in accesses.chain([Access::Term(&blk.term)]) {
                let mut places: Vec<&LValue> = Vec::new();
                access.visit(&mut |item| {
                    if let crate::ir::visit::Item::Place {
                        place,
                        address_only: false,
                    } = item
                    {
                        if matches!(place, LValue::Deref(_) | LValue::Index(..)) {
                            places.push(place);
                        }
                    }
                });
                for place in places {
                    let key = (place.clone(), outermost);
                    if seen.contains(&key) || out.sites.len() >= MAX_SITES {
                        continue;
                    }
                    seen.push(key);
                    let Some((ty, bounds, signed)) = kind(place) else {
                        continue;
                    };
                    let Some(locals) = address_locals(place, in_memory) else {
                        continue;
                    };
                    let loops = nest(
                        f,
                        forest,
                        havoc_sets,
                        b,
                        &locals,
                        (int_constants, in_memory),
                    );
                    let Some(loops) = loops else {
                        continue;
                    };
                    let body = forest.body(loops[0].head).cloned().unwrap_or_default();
                    if !writes_or_tests(f, &body, place) {
                        continue;
                    }
                    let others = locals
                        .iter()
                        .copied()
                        .filter(|l| !loops.iter().any(|c| c.counter == *l))
                        .collect();
                    out.sites.push(Site {
                        others,
                        place: place.clone(),
                        ty,
                        loops,
                        bounds,
                        signed,
                        body,
                    });
                }
            }
        }
        out.skolem = out.sites.iter().map(|_| None).collect();
        out.accesses = out.sites.iter().map(|_| Vec::new()).collect();
        out
    }

    pub(super) fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }
}

impl Site {
    /// When `lv` is this site's place but for its counters, which may be other locals (the
    /// same array indexed the same way by another nest): the locals in the counters' stead.
    fn counters_of(&self, lv: &LValue) -> Option<Vec<LocalId>> {
        let mut map: Vec<Option<LocalId>> = vec![None; self.loops.len()];
        if !self.same_place(&self.place, lv, &mut map) {
            return None;
        }
        map.into_iter().collect()
    }

    fn same_place(&self, a: &LValue, b: &LValue, map: &mut [Option<LocalId>]) -> bool {
        match (a, b) {
            (LValue::Deref(x), LValue::Deref(y)) => self.same_expr(x, y, map),
            (LValue::Index(x, i), LValue::Index(y, j)) => x == y && self.same_expr(i, j, map),
            _ => false,
        }
    }

    fn same_expr(&self, a: &Expr, b: &Expr, map: &mut [Option<LocalId>]) -> bool {
        if a.ty != b.ty {
            return false;
        }
        match (&a.kind, &b.kind) {
            (
                ExprKind::Read(LValue::Var(VarRef::Local(x))),
                ExprKind::Read(LValue::Var(VarRef::Local(y))),
            ) => match self.loops.iter().position(|l| l.counter == *x) {
                Some(t) => *map[t].get_or_insert(*y) == *y,
                None => x == y,
            },
            (ExprKind::Cast(x), ExprKind::Cast(y)) => self.same_expr(x, y, map),
            (ExprKind::Unary(o, x), ExprKind::Unary(p, y)) => o == p && self.same_expr(x, y, map),
            (ExprKind::Binary(o, x1, x2), ExprKind::Binary(p, y1, y2)) => {
                o == p && self.same_expr(x1, y1, map) && self.same_expr(x2, y2, map)
            }
            _ => a == b,
        }
    }
}

/// Where a place is accessed: a statement, or a block's terminator (its test).
#[derive(Clone, Copy)]
pub(super) enum Access<'a> {
    Stmt(&'a Stmt),
    Term(&'a Terminator),
}

impl<'a> Access<'a> {
    fn visit(self, on: &mut impl FnMut(crate::ir::visit::Item<'a>)) {
        match self {
            Access::Stmt(s) => crate::ir::visit::stmt(s, on),
            Access::Term(t) => crate::ir::visit::terminator(t, on),
        }
    }
}

/// Does a block of `body` write `place`, or leave the nest on a test of it or of a local
/// assigned from it? Only such a nest can bound its cells.
fn writes_or_tests(f: &Function, body: &BTreeSet<BlockId>, place: &LValue) -> bool {
    let reads_place = |e: &Expr| {
        let mut found = false;
        crate::ir::visit::expr(e, &mut |item| {
            if let crate::ir::visit::Item::Place { place: p, .. } = item {
                found |= p == place;
            }
        });
        found
    };
    let mut holders: BTreeSet<LocalId> = BTreeSet::new();
    for s in body.iter().flat_map(|b| &f.block(*b).stmts) {
        if let StmtKind::Assign { dst, src } = &s.kind {
            if dst == place {
                return true;
            }
            if let LValue::Var(VarRef::Local(l)) = dst {
                if reads_place(src) {
                    holders.insert(*l);
                }
            }
        }
    }
    body.iter().any(|b| match &f.block(*b).term {
        Terminator::Branch {
            cond,
            then_bb,
            else_bb,
        } if !body.contains(then_bb) || !body.contains(else_bb) => {
            let mut found = reads_place(cond);
            crate::ir::visit::expr(cond, &mut |item| {
                if let crate::ir::visit::Item::Place {
                    place: LValue::Var(VarRef::Local(l)),
                    ..
                } = item
                {
                    found |= holders.contains(l);
                }
            });
            found
        }
        _ => false,
    })
}

/// The SSA locals the address of `lv` reads, when it reads nothing else (no memory).
fn address_locals(lv: &LValue, in_memory: &[bool]) -> Option<BTreeSet<LocalId>> {
    let mut out = BTreeSet::new();
    match lv {
        LValue::Deref(e) => expr_locals(e, in_memory, &mut out)?,
        LValue::Index(b, i) if matches!(**b, LValue::Var(_)) => {
            expr_locals(i, in_memory, &mut out)?
        }
        _ => return None,
    }
    Some(out)
}

/// Adds the SSA locals integer expression `e` reads to `out`; `None` when it reads anything
/// else (memory, a float).
fn expr_locals(e: &Expr, in_memory: &[bool], out: &mut BTreeSet<LocalId>) -> Option<()> {
    match &e.kind {
        ExprKind::Read(LValue::Var(VarRef::Local(l))) if !in_memory[l.0 as usize] => {
            out.insert(*l);
            Some(())
        }
        ExprKind::Const(_) => Some(()),
        ExprKind::Cast(a) | ExprKind::Unary(UnOp::Neg, a) => expr_locals(a, in_memory, out),
        ExprKind::Binary(op, a, b) if !op.is_comparison() => {
            if matches!(a.ty, CType::Float(_)) || matches!(b.ty, CType::Float(_)) {
                return None;
            }
            expr_locals(a, in_memory, out)?;
            expr_locals(b, in_memory, out)
        }
        _ => None,
    }
}

/// The nest of the loops around block `b` that step the address's locals: innermost first,
/// each loop must write exactly one of them not already a counter (its counter), until a loop
/// writes none; then outermost first, with each counter's start (the one constant the
/// function assigns it) and each inner loop's bound (from a test `counter < bound` in it, the
/// bound reading locals the nest does not write). `None` if any of it is missing.
fn nest(
    f: &Function,
    forest: &LoopForest,
    havoc_sets: &HashMap<BlockId, HavocSet>,
    b: BlockId,
    locals: &BTreeSet<LocalId>,
    (int_constants, in_memory): (&BTreeMap<LocalId, Vec<i128>>, &[bool]),
) -> Option<Vec<NestLoop>> {
    // The SSA locals each loop writes, as its head's havoc has them.
    let written_in = |h: BlockId| havoc_sets.get(&h).map(|set| &set.locals);
    let mut heads: Vec<(usize, BlockId)> = forest
        .heads_containing(b)
        .iter()
        .map(|&h| (forest.body(h).map_or(usize::MAX, |s| s.len()), h))
        .collect();
    heads.sort();
    let mut chain: Vec<(BlockId, LocalId)> = Vec::new();
    for (_, h) in heads {
        forest.body(h)?;
        let written = written_in(h)?;
        let new: Vec<LocalId> = locals
            .iter()
            .copied()
            .filter(|l| written.contains(l) && !chain.iter().any(|(_, c)| c == l))
            .collect();
        match new.len() {
            0 => break,
            1 => chain.push((h, new[0])),
            _ => return None,
        }
    }
    let written = written_in(chain.last()?.0)?;
    // The address's other locals are the same at every head of the nest.
    if locals
        .iter()
        .any(|l| written.contains(l) && !chain.iter().any(|(_, c)| c == l))
    {
        return None;
    }
    chain.reverse();
    let mut out = Vec::new();
    for (depth, &(h, counter)) in chain.iter().enumerate() {
        let starts = int_constants.get(&counter)?;
        let start = *starts.first()?;
        if starts.iter().any(|&s| s != start) || !matches!(f.local(counter).ty, CType::Int(_)) {
            return None;
        }
        let bound = if depth == 0 {
            None
        } else {
            Some(loop_bound(f, forest.body(h)?, counter, written, in_memory)?)
        };
        out.push(NestLoop {
            head: h,
            counter,
            start,
            bound,
        });
    }
    Some(out)
}

/// The bound a test of loop `body` compares `counter` with (`counter < x`, `x > counter`,
/// either negated), when `x` reads only SSA locals not in `written`.
fn loop_bound(
    f: &Function,
    body: &BTreeSet<BlockId>,
    counter: LocalId,
    written: &BTreeSet<LocalId>,
    in_memory: &[bool],
) -> Option<Expr> {
    let is_counter = |e: &Expr| {
        matches!(&e.strip_casts().kind,
            ExprKind::Read(LValue::Var(VarRef::Local(l))) if *l == counter)
    };
    let invariant = |e: &Expr| {
        let mut ls = BTreeSet::new();
        expr_locals(e, in_memory, &mut ls).is_some() && ls.iter().all(|l| !written.contains(l))
    };
    for b in body {
        let Terminator::Branch { cond, .. } = &f.block(*b).term else {
            continue;
        };
        let mut c = cond.strip_casts();
        while let ExprKind::Unary(UnOp::LogNot, inner) = &c.kind {
            c = inner.strip_casts();
        }
        let found = match &c.kind {
            ExprKind::Binary(BinOp::Lt, a, x) if is_counter(a) && invariant(x) => Some(x),
            ExprKind::Binary(BinOp::Gt, x, a) if is_counter(a) && invariant(x) => Some(x),
            _ => None,
        };
        if let Some(x) = found {
            return Some((**x).clone());
        }
    }
    None
}

impl Enc<'_> {
    /// The sites of the current frame's loops, given its candidates' `sources` (none without).
    pub(super) fn cells_of(
        &self,
        forest: &LoopForest,
        havoc_sets: &HashMap<BlockId, HavocSet>,
        sources: Option<&super::invariants::Sources>,
    ) -> Cells {
        let Some(sources) = sources else {
            return Cells::default();
        };
        // The bounds a cell of a place's type may have, and whether it is a signed integer.
        let kind = |place: &LValue| {
            let ty = self.lvalue_type(place);
            let (bounds, signed) = match ty {
                CType::Int(k) if k.is_signed() => (vec![Bound::AtLeast(0)], true),
                CType::Float(_) if crate::vc::fp::is_format(width_of(&ty)) => {
                    (vec![Bound::NotNegative, Bound::ZeroOrAtLeastOne], false)
                }
                _ => return None,
            };
            Some((ty, bounds, signed))
        };
        Cells::of(
            self.f,
            forest,
            havoc_sets,
            &sources.int_constants,
            &self.in_memory,
            kind,
        )
    }

    /// Proposes the bounds of the sites whose nest has head block `h` (node `n`), with the
    /// state `entering` the head was entered with (under `reach`) and `st` after its havoc.
    pub(super) fn propose_cell_facts(
        &mut self,
        cells: &mut Cells,
        (n, h): (usize, BlockId),
        reach: T,
        entering: &State,
        st: &State,
    ) {
        for si in 0..cells.sites.len() {
            let Some(depth) = cells.sites[si].loops.iter().position(|l| l.head == h) else {
                continue;
            };
            let depth = depth + 1;
            if cells.skolem[si].is_none() {
                let m = cells.sites[si]
                    .loops
                    .iter()
                    .map(|l| {
                        let w = self.local_width(l.counter);
                        self.fresh(w, "cell")
                    })
                    .collect();
                cells.skolem[si] = Some(m);
            }
            for k in 0..cells.sites[si].bounds.len() {
                if cells.pending.len() >= MAX_CANDIDATES {
                    return;
                }
                let bound = cells.sites[si].bounds[k];
                cells.pending.push(CellPending {
                    node: n,
                    block: h,
                    site: si,
                    depth,
                    bound,
                    reach,
                    head: st.clone(),
                    ways: vec![(reach, entering.clone())],
                });
            }
        }
    }

    /// Records the counters' values at a statement or test that reads or writes a site's
    /// place.
    pub(super) fn note_cell_reads(&mut self, cells: &mut Cells, access: Access, st: &State) {
        for si in 0..cells.sites.len() {
            if cells.accesses[si].len() >= MAX_READS {
                continue;
            }
            let site = &cells.sites[si];
            let mut found: Vec<(&LValue, Vec<LocalId>)> = Vec::new();
            access.visit(&mut |item| {
                if let crate::ir::visit::Item::Place { place: p, .. } = item {
                    if let Some(counters) = site.counters_of(p) {
                        found.push((p, counters));
                    }
                }
            });
            for (place, counters) in found {
                let values: Option<Vec<T>> =
                    counters.iter().map(|l| st.vars[l.0 as usize]).collect();
                let Some(v) = values else { continue };
                let inside = site.body.contains(&self.cur_block);
                let seen = cells.accesses[si]
                    .iter()
                    .any(|a| a.tuple == v && a.after.is_none() == inside);
                if !seen && cells.accesses[si].len() < MAX_READS {
                    let after = (!inside).then(|| (st.clone(), place.clone()));
                    cells.accesses[si].push(Accessed { tuple: v, after });
                }
            }
        }
    }

    /// The cut edge from node `n` under `cond` with state `st`, back into head node `head`.
    pub(super) fn cell_back_edge(&mut self, cells: &mut Cells, head: usize, cond: T, st: &State) {
        for p in cells.pending.iter_mut().filter(|p| p.node == head) {
            p.ways.push((cond, st.clone()));
        }
    }

    /// The candidates of bodies encoded whole, but those of `broken` blocks.
    pub(super) fn settle_cell_facts(&mut self, cells: Cells, broken: &BTreeSet<BlockId>) {
        let Cells {
            sites,
            skolem,
            accesses,
            pending,
        } = cells;
        for p in pending {
            if broken.contains(&p.block) {
                continue;
            }
            let site = &sites[p.site];
            let skolem_m = skolem[p.site].clone().expect("made at the head");
            // The instances: at the Skolem tuple and the nest's own accesses (what the
            // obligations need), then at every other access (what later questions need).
            let inside: Vec<&Vec<T>> = accesses[p.site]
                .iter()
                .filter(|a| a.after.is_none())
                .map(|a| &a.tuple)
                .collect();
            let mut own = vec![self.cells_bounded(site, p.bound, &p.head, p.depth, &skolem_m)];
            for r in &inside {
                own.push(self.cells_bounded(site, p.bound, &p.head, p.depth, r));
            }
            let own = self.t.and(&own);
            let assumed = self.t.implies(p.reach, own);
            let home = self.home(&site.place);
            let value = self.memory_for(home, &site.ty, &p.head);
            let mut memory = Vec::new();
            leaves_of(&self.t, value, is_var, &mut memory);
            // Once proved, the instance of each access after the nest is a fact of its own,
            // about the bytes the access reads (as the access reads them when it can be
            // said so, else as the head's memory holds them, and then about that memory).
            let mut proved = Vec::new();
            for (r, at) in accesses[p.site]
                .iter()
                .filter_map(|a| Some((&a.tuple, a.after.as_ref()?)))
            {
                let as_read = self.cell_as_read(site, p.bound, (&p.head, p.depth), r, at);
                let (at, mut about) = match as_read {
                    Some(at) => (at, Vec::new()),
                    None => {
                        let at = self.cells_bounded(site, p.bound, &p.head, p.depth, r);
                        (at, memory.clone())
                    }
                };
                leaves_of(&self.t, at, is_read, &mut about);
                let fact = self.t.implies(p.reach, at);
                proved.push(Fact {
                    about,
                    needs_all: false,
                    fact,
                    work: 0,
                });
            }
            let obligation = self.cell_obligation(site, &p, &skolem_m, &inside);
            self.loop_candidates.push(LoopCandidate {
                assumed,
                value,
                obligation,
                group: match p.bound {
                    Bound::NotNegative => CandidateGroup::FloatSignCells,
                    Bound::ZeroOrAtLeastOne => CandidateGroup::FloatWholeCells,
                    Bound::AtLeast(_) | Bound::AtMost(_) => CandidateGroup::IntegerCells,
                },
                proved,
            });
        }
    }

    /// `m` is a cell the nest visited before state `st` at its `depth`-th loop's head:
    /// lexicographically before the counters, inner indices within their loops' bounds.
    fn cells_before(&mut self, site: &Site, st: &State, depth: usize, m: &[T]) -> T {
        let mut scratch = st.clone();
        let (lt, le) = if site_counters_signed(self.f, site) {
            (CmpOp::Slt, CmpOp::Sle)
        } else {
            (CmpOp::Ult, CmpOp::Ule)
        };
        // Each index from its counter's start, and below its loop's bound.
        let (mut from, mut within) = (Vec::new(), Vec::new());
        for (u, l) in site.loops.iter().enumerate() {
            let w = self.local_width(l.counter);
            let s = self.t.bv_i(w, l.start);
            from.push(self.t.cmp(le, s, m[u]));
            let below = match &l.bound {
                Some(x) => {
                    let v = self.eval(x, &mut scratch);
                    let v = self.t.resize(v, w, is_signed(&x.ty));
                    self.t.cmp(lt, m[u], v)
                }
                None => self.t.tru(),
            };
            within.push(self.t.and2(from[u], below));
        }
        // Counters are SSA locals: each has a value in every state.
        let counters: Vec<T> = site
            .loops
            .iter()
            .map(|l| st.vars[l.counter.0 as usize].expect("an SSA local has a value"))
            .collect();
        let mut alternatives = Vec::new();
        for t in 0..depth {
            let mut conj = Vec::new();
            for (m_u, c_u) in m.iter().zip(&counters).take(t) {
                conj.push(self.t.eq(*m_u, *c_u));
            }
            conj.push(from[t]);
            conj.push(self.t.cmp(lt, m[t], counters[t]));
            conj.extend(within.iter().skip(t + 1).copied());
            alternatives.push(self.t.and(&conj));
        }
        self.t.or(&alternatives)
    }

    /// The obligation of candidate `p`: on each way into its head, its bound at the Skolem
    /// tuple `skolem_m` apart from the nest's accesses' tuples `inside`, and at each of those
    /// (a cell an iteration visits is then the term its access read, with no arithmetic on
    /// indices to reason about).
    fn cell_obligation(
        &mut self,
        site: &Site,
        p: &CellPending,
        skolem_m: &[T],
        inside: &[&Vec<T>],
    ) -> T {
        let apart: Vec<T> = inside
            .iter()
            .map(|r| {
                let same: Vec<T> = r
                    .iter()
                    .zip(skolem_m)
                    .map(|(a, b)| self.t.eq(*a, *b))
                    .collect();
                let same = self.t.and(&same);
                self.t.not(same)
            })
            .collect();
        let apart = self.t.and(&apart);
        let mut ways = Vec::new();
        for (cond, st) in &p.ways {
            let at = self.cells_bounded(site, p.bound, st, p.depth, skolem_m);
            let mut parts = vec![self.t.implies(apart, at)];
            for r in inside {
                parts.push(self.cells_bounded(site, p.bound, st, p.depth, r));
            }
            let all = self.t.and(&parts);
            ways.push(self.t.implies(*cond, all));
        }
        self.t.and(&ways)
    }

    /// The instance at an access after the nest, with state `at`, as the access reads the
    /// cell: when the memory it reads is the head's, or a join of memories one of which is
    /// the head's (then under the joins' conditions that choose it), the cell it reads is the
    /// head's (`None` when it is not so).
    fn cell_as_read(
        &mut self,
        site: &Site,
        bound: Bound,
        (head, depth): (&State, usize),
        m: &[T],
        (at, place): &(State, LValue),
    ) -> Option<T> {
        let home = self.home(&site.place);
        let at_head = self.memory_for(home, &site.ty, head);
        let read_from = self.memory_for(home, &site.ty, at);
        // The address's other locals hold the values they held at the head.
        let same = |l: &LocalId| at.vars[l.0 as usize] == head.vars[l.0 as usize];
        if !site.others.iter().all(same) {
            return None;
        }
        let chosen = chooses(&mut self.t, read_from, at_head)?;
        let before = self.cells_before(site, head, depth, m);
        let mut at = at.clone();
        let cell = self.read(place, &site.ty, &mut at);
        let holds = self.bound_of(bound, site.signed, cell);
        let given = self.t.and2(chosen, before);
        Some(self.t.implies(given, holds))
    }

    /// Every cell the nest visited before state `st` (at its `depth`-th loop's head) meets
    /// `bound`, for the index tuple `m`.
    fn cells_bounded(&mut self, site: &Site, bound: Bound, st: &State, depth: usize, m: &[T]) -> T {
        let before = self.cells_before(site, st, depth, m);
        let mut at = st.clone();
        for (u, l) in site.loops.iter().enumerate() {
            at.vars[l.counter.0 as usize] = Some(m[u]);
        }
        let cell = self.read(&site.place, &site.ty, &mut at);
        let holds = self.bound_of(bound, site.signed, cell);
        self.t.implies(before, holds)
    }
}

/// Are the counters of `site` compared signed (their types are)?
fn site_counters_signed(f: &Function, site: &Site) -> bool {
    site.loops
        .iter()
        .all(|l| matches!(&f.local(l.counter).ty, CType::Int(k) if k.is_signed()))
}

/// The condition under which memory `m`, a tree of `ite` joins, is memory `leaf`; `None`
/// when no branch of it is.
fn chooses(t: &mut Terms, m: T, leaf: T) -> Option<T> {
    if m == leaf {
        return Some(t.tru());
    }
    let Node::Ite(c, a, b) = *t.node(m) else {
        return None;
    };
    let (ca, cb) = (chooses(t, a, leaf), chooses(t, b, leaf));
    if ca.is_none() && cb.is_none() {
        return None;
    }
    let fls = t.fls();
    let when_a = t.and2(c, ca.unwrap_or(fls));
    let not_c = t.not(c);
    let when_b = t.and2(not_c, cb.unwrap_or(fls));
    Some(t.or2(when_a, when_b))
}

/// The nodes of term `t` that `pick` chooses, not looking inside them, once each, in the
/// order met: its variables, or its memory reads (each byte read).
fn leaves_of(terms: &Terms, t: T, pick: fn(&Node) -> bool, out: &mut Vec<T>) {
    let mut todo = vec![t];
    let mut seen = HashSet::new();
    let mut ops = Vec::new();
    while let Some(x) = todo.pop() {
        if !seen.insert(x) {
            continue;
        }
        let node = terms.node(x);
        if pick(node) {
            out.push(x);
            continue;
        }
        node.push_operands(&mut ops);
        todo.append(&mut ops);
    }
}

fn is_var(n: &Node) -> bool {
    matches!(n, Node::Var { .. })
}

fn is_read(n: &Node) -> bool {
    matches!(n, Node::Select { .. })
}
