//! The sites of a function's loops whose array cells get bounds: each place a loop nest writes
//! or tests a value read from, its nest's counters and what bounds them.

use super::*;

impl Cells {
    /// The sites of `f`'s loops: each place in each nest that writes it or tests a value
    /// read from it, in the blocks' order (the source's).
    pub(in crate::vc::encode) fn of(
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

    pub(in crate::vc::encode) fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }
}

impl Site {
    /// When `lv` is this site's place but for its counters, which may be other locals (the
    /// same array indexed the same way by another nest): the locals in the counters' stead.
    pub(super) fn counters_of(&self, lv: &LValue) -> Option<Vec<LocalId>> {
        let mut map: Vec<Option<LocalId>> = vec![None; self.loops.len()];
        if !self.same_place(&self.place, lv, &mut map) {
            return None;
        }
        map.into_iter().collect()
    }

    pub(super) fn same_place(&self, a: &LValue, b: &LValue, map: &mut [Option<LocalId>]) -> bool {
        match (a, b) {
            (LValue::Deref(x), LValue::Deref(y)) => self.same_expr(x, y, map),
            (LValue::Index(x, i), LValue::Index(y, j)) => x == y && self.same_expr(i, j, map),
            _ => false,
        }
    }

    pub(super) fn same_expr(&self, a: &Expr, b: &Expr, map: &mut [Option<LocalId>]) -> bool {
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

impl<'a> Access<'a> {
    pub(super) fn visit(self, on: &mut impl FnMut(crate::ir::visit::Item<'a>)) {
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
