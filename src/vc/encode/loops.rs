//! Loops in the encoding: exact trip counts, peeling, and the havoc of what a loop writes at
//! its head (with monotone counters kept bounded).

use super::*;

/// The sign of the step when `src`, assigned to local `l` of type `ty`, is `l + c` or `l - c`
/// for a constant `c > 0` computed in `ty` itself, a signed integer type at least as wide as
/// `int`: such a step cannot wrap without signed overflow, which is undefined behaviour, and
/// claims hold for executions without it. So a loop whose every write to `l` steps it one
/// way keeps `l` on that side of its value at loop entry, at every iteration: the fact the
/// loop head adds to the fresh value of `l`. (A narrower type is promoted, and converting the
/// sum back may wrap without undefined behaviour; so may an unsigned type: neither counts.)
pub(super) fn counter_step(src: &Expr, l: LocalId, ty: &CType) -> Option<i8> {
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

/// The direction of the step when `src`, assigned to floating-point local `l`, is `l + c` or
/// `l - c` for a constant `c` not negative (`0.0`, `-0.0`, an integer constant converted, as
/// in `++x`), with only conversions between floating-point types around `l` and the result.
/// Rounding is monotone and `l` is a number of its own type, so `l + c` is not below `l`
/// (nor `l - c` above it) unless it is NaN, which stays NaN: a loop whose every write to `l`
/// steps it one way keeps `l` on that side of its value at entry, NaN aside (`!(l < entry)`).
/// A conversion to an integer type on the way (`(int)x + 1`) is no such step.
pub(super) fn float_step(src: &Expr, l: LocalId, ty: &CType) -> Option<i8> {
    fn is_float(t: &CType) -> bool {
        matches!(t, CType::Float(_))
    }
    fn strip(mut e: &Expr) -> &Expr {
        while let ExprKind::Cast(inner) = &e.kind {
            if !is_float(&e.ty) || !is_float(&inner.ty) {
                break;
            }
            e = inner;
        }
        e
    }
    if !is_float(ty) {
        return None;
    }
    let is_l = |e: &Expr| matches!(&strip(e).kind, ExprKind::Read(LValue::Var(VarRef::Local(x))) if *x == l);
    // A constant not negative: a floating-point one, or an integer one converted.
    let up = |e: &Expr| {
        let e = strip(e);
        match &e.kind {
            ExprKind::FloatConst(c) => *c >= 0.0,
            ExprKind::Cast(inner) if is_float(&e.ty) => {
                matches!(inner.ty, CType::Int(_))
                    && matches!(inner.kind, ExprKind::Const(c) if c >= 0)
            }
            _ => false,
        }
    };
    let ExprKind::Binary(op, a, b) = &strip(src).kind else {
        return None;
    };
    match op {
        BinOp::Add if (is_l(a) && up(b)) || (is_l(b) && up(a)) => Some(1),
        BinOp::Sub if is_l(a) && up(b) => Some(-1),
        _ => None,
    }
}

/// Loops whose trip count is bounded by at most this many are peeled that many times (then
/// their tail is never entered, and the loop is encoded exactly).
pub(super) const MAX_EXACT_TRIPS: i128 = 8;

/// Other loops of at most this many blocks are peeled once.
pub(super) const MAX_PEEL_ONCE_BLOCKS: usize = 16;

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
pub(super) const MAX_PEELED_EXTRA_NODES: usize = 256;

/// The most iterations the loop headed by `h` can run, when its head tests `i < e` or
/// `i <= e` for a local `i` that every predecessor outside the loop sets to a constant and
/// that the loop only increases ([`counter_step`]), and `e` has a constant upper bound
/// ([`upper_bound`]); `None` otherwise or above [`MAX_EXACT_TRIPS`]. A heuristic for how many
/// iterations to peel: a wrong answer costs precision, never soundness.
pub(super) fn exact_trips(
    f: &Function,
    forest: &crate::cfg::loops::LoopForest,
    h: BlockId,
) -> Option<u8> {
    let body = forest.body(h)?;
    // The test every iteration runs: the head's, or that of the first block the head leads
    // to without a choice (an annotated loop's head is followed by its labels' block).
    let mut test = h;
    for _ in 0..body.len() {
        match f.block(test).term {
            Terminator::Goto(next) if next != h && body.contains(&next) => test = next,
            _ => break,
        }
    }
    let Terminator::Branch {
        cond,
        then_bb,
        else_bb,
    } = &f.block(test).term
    else {
        return None;
    };
    if !body.contains(then_bb) || body.contains(else_bb) {
        return None;
    }
    let ExprKind::Binary(op @ (BinOp::Lt | BinOp::Le), a, e) = &cond.strip_casts().kind else {
        return None;
    };
    let ExprKind::Read(LValue::Var(VarRef::Local(i))) = a.strip_casts().kind else {
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
        let c = src.strip_casts().as_const()?;
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
pub(super) fn copies_for_trips(trips: u8) -> u8 {
    trips + 1
}

/// The place a statement assigns (an assignment, a havoc, a zero-initialisation, a call's
/// result); other effects (calls' writes through memory) are not places.
pub(super) fn written_place(s: &Stmt) -> Option<&LValue> {
    match &s.kind {
        StmtKind::Assign { dst, .. } | StmtKind::Havoc { dst, .. } | StmtKind::ZeroInit { dst } => {
            Some(dst)
        }
        StmtKind::Call { dst, .. } => dst.as_ref(),
        StmtKind::HavocMemory(_)
        | StmtKind::Assume(_)
        | StmtKind::Label { .. }
        | StmtKind::Sequence(_) => None,
    }
}

/// `e` without the conversions around it.
/// A constant no value of `e` exceeds, for constants, masks by a non-negative constant and
/// remainders by a positive constant.
pub(super) fn upper_bound(e: &Expr) -> Option<i128> {
    match &e.kind {
        ExprKind::Const(c) => Some(*c),
        ExprKind::Cast(inner) => upper_bound(inner),
        ExprKind::Binary(BinOp::BitAnd, a, b) => [a, b]
            .iter()
            .filter_map(|x| x.strip_casts().as_const())
            .filter(|c| *c >= 0)
            .min(),
        ExprKind::Binary(BinOp::Rem, _, b) => {
            b.strip_casts().as_const().filter(|c| *c > 0).map(|c| c - 1)
        }
        _ => None,
    }
}

#[derive(Debug)]
pub(super) struct HavocSet {
    /// SSA locals written.
    pub(super) locals: BTreeSet<LocalId>,
    /// The shared memory may be written.
    pub(super) memory: bool,
    /// `errno` may be written, apart from the shared memory ([`Enc::writes_errno_only`]).
    pub(super) errno: bool,
    /// Locals with a memory of their own written (by name).
    pub(super) own_locals: BTreeSet<LocalId>,
    /// Regions ([`super::pointsto`]) that may be written.
    pub(super) regions: BTreeSet<u32>,
    /// Globals with a memory of their own that may be written.
    pub(super) globals: GlobalWrites,
    /// SSA locals the loop only ever steps by a constant of one sign: each with the sign
    /// (`1`: only increased, `-1`: only decreased). See [`counter_step`] and [`float_step`].
    pub(super) monotone: BTreeMap<LocalId, i8>,
}

impl Enc<'_> {
    /// Forgets at a loop head what the loop may write (`set`): its regions, its SSA locals (a
    /// counter stepped one way stays on that side of its value at entry), the shared memory or
    /// `errno`, locals with a memory of their own and globals. Returns each havocked local
    /// with its value at entry.
    pub(super) fn havoc_loop_head(
        &mut self,
        set: &HavocSet,
        st: &mut State,
    ) -> Vec<(LocalId, Option<T>)> {
        let f = self.f;
        let entering: Vec<(LocalId, Option<T>)> = set
            .locals
            .iter()
            .map(|&l| (l, st.vars[l.0 as usize]))
            .collect();
        for &r in &set.regions {
            let m = self.t.var(Sort::Mem, "region_loop");
            st.own.insert(MemObj::Region(r), m);
        }
        for &(l, at_entry) in &entering {
            let w = self.local_width(l);
            let fresh = self.fresh(w, "loop");
            // A counter only stepped one way by the loop stays on that side of its value at
            // entry (see `counter_step`; a float one, or NaN: `float_step`).
            if let (Some(&sign), Some(entry)) = (set.monotone.get(&l), at_entry) {
                let (lo, hi) = if sign > 0 {
                    (entry, fresh)
                } else {
                    (fresh, entry)
                };
                let bound = match f.local(l).ty {
                    CType::Float(_) if crate::vc::fp::is_format(w) => {
                        let below = self.t.fp_cmp(crate::vc::term::FpCmpOp::Lt, hi, lo);
                        Some(self.t.not(below))
                    }
                    CType::Float(_) => None,
                    _ => Some(self.t.cmp(CmpOp::Sle, lo, hi)),
                };
                if let Some(bound) = bound {
                    self.fact(&[fresh], bound);
                }
            }
            st.vars[l.0 as usize] = Some(fresh);
        }
        if set.memory {
            st.mem = self.t.var(Sort::Mem, "mem_loop");
            st.errno = None;
        } else if set.errno {
            self.write_errno(st);
        }
        for &l in &set.own_locals {
            let m = self.t.var(Sort::Mem, "own_loop");
            st.own.insert(MemObj::Local(self.instance, l), m);
        }
        self.havoc_globals(&set.globals, st);
        entering
    }

    /// For each loop head: the SSA locals and whether memory the loop may write (everything
    /// at the head of an irreducible cycle). See [`crate::cfg::loops`] for why it is sound.
    pub(super) fn loop_havoc_sets(
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
    pub(super) fn peel_counts(
        &self,
        forest: &crate::cfg::loops::LoopForest,
    ) -> BTreeMap<BlockId, u8> {
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
    /// one sign ([`counter_step`], [`float_step`]), with that sign.
    pub(super) fn monotone_counters<'b>(
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
                    StmtKind::Assign { src, .. } => {
                        let ty = &self.f.local(dst).ty;
                        counter_step(src, dst, ty).or_else(|| float_step(src, dst, ty))
                    }
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

    pub(super) fn writes_of(&mut self, blk: &Block, set: &mut HavocSet) {
        for s in &blk.stmts {
            match &s.kind {
                StmtKind::Call { callee, args, dst } => {
                    if let Some(blocks) = self.writes_errno_only(callee, dst.as_ref()) {
                        set.errno = true;
                        set.regions.extend(blocks);
                    } else {
                        let w = self.call_writes(callee, args);
                        set.memory |= w.external;
                        set.regions.extend(w.regions);
                        set.globals.add(&self.callee_global_writes(callee));
                    }
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
}

impl Default for HavocSet {
    fn default() -> Self {
        HavocSet {
            locals: BTreeSet::new(),
            memory: false,
            errno: false,
            own_locals: BTreeSet::new(),
            regions: BTreeSet::new(),
            globals: GlobalWrites::none(),
            monotone: BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::loops::LoopForest;

    /// The trips of each loop of `name` in `source`, by loop head (in block order).
    fn trips(source: &str, name: &str) -> Vec<Option<u8>> {
        let program = crate::frontend::test_program(source);
        let f = program.function(name).expect("the function");
        let forest = LoopForest::of(f);
        (0..f.blocks.len() as u32)
            .map(BlockId)
            .filter(|h| forest.body(*h).is_some())
            .map(|h| exact_trips(f, &forest, h))
            .collect()
    }

    #[test]
    fn counted_loops_have_exact_trips_and_others_none() {
        assert_eq!(
            trips(
                "int f(void) { int s = 0; for (int i = 0; i < 3; i++) s += i; return s; }",
                "f"
            ),
            [Some(3)]
        );
        assert_eq!(
            trips(
                "int f(void) { int s = 0; for (int i = 2; i <= 5; i++) s += i; return s; }",
                "f"
            ),
            [Some(4)]
        );
        // An upper bound: a counter stepped twice a trip runs fewer trips than this.
        assert_eq!(
            trips(
                "int f(void) { int s = 0; for (int i = 0; i < 6; i++) { i++; s++; } return s; }",
                "f"
            ),
            [Some(6)]
        );
        // A bound the function does not fix, a counter set back, too many trips.
        assert_eq!(
            trips(
                "int f(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; return s; }",
                "f"
            ),
            [None]
        );
        assert_eq!(
            trips("int f(int n) { int s = 0; for (int i = 0; i < 6; i++) { if (n) i = 0; s++; } return s; }", "f"),
            [None]
        );
        assert_eq!(
            trips(
                "int f(void) { int s = 0; for (int i = 0; i < 100; i++) s++; return s; }",
                "f"
            ),
            [None]
        );
        // The annotated form: the test after the labels of its condition, in a block of its
        // own, with the loop left by a `break`.
        assert_eq!(
            trips(
                "int f(void) { int s = 0; for (int i = 0; ; ++i) { pc_label(i < 6, 1, \"CC\"); if (!(i < 6)) break; s += i; } return s; }",
                "f"
            ),
            [Some(6)]
        );
        assert_eq!(copies_for_trips(3), 4);
    }
}
