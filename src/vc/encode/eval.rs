//! Evaluation in the encoding: statements, expressions as bit-vector terms (C's conversions,
//! comparisons, arithmetic with its undefined cases), and the edges a terminator takes.

use super::*;

impl Enc<'_> {
    /// Encodes one statement; returns the path condition after it.
    pub(super) fn stmt(&mut self, s: &Stmt, st: &mut State, pc: T) -> T {
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
                    let bytes = crate::libc::byte_write(n)
                        .filter(|_| self.sums.is_library(n) && !self.reference);
                    if let Some(p) = bytes.and_then(|op| self.byte_write_call(op, args, st)) {
                        if let Some(d) = dst {
                            let dty = self.lvalue_type(d);
                            self.write(d, &dty, p, st);
                        }
                        return pc;
                    }
                }
                // A math function's or an allocator's result, from its arguments before the
                // call's effects.
                let result = match (callee, dst) {
                    (Callee::Direct(n), Some(d)) if !self.reference => {
                        let dty = self.lvalue_type(d);
                        match self.math_call(n, args, &dty, st) {
                            Some(v) => Some(v),
                            None => self.allocation_call(n, args, &dty, st),
                        }
                    }
                    _ => None,
                };
                self.call_effects(callee, args, dst.as_ref(), st);
                if let Some(d) = dst {
                    let dty = self.lvalue_type(d);
                    match result {
                        Some(v) => self.write(d, &dty, v, st),
                        None => self.havoc_object(d, &dty, st),
                    }
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
            StmtKind::Sequence(_) => {}
            StmtKind::HavocMemory(_) => {
                st.mem = self.t.var(Sort::Mem, "mem_havoc");
                st.errno = None;
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

    /// The value of a pure IR expression, as a bitvector of its type's width.
    pub(super) fn eval(&mut self, e: &Expr, st: &mut State) -> T {
        let w = width_of(&e.ty);
        match &e.kind {
            ExprKind::Const(v) => self.t.bv_i(w, *v),
            ExprKind::FloatConst(v) => self.float_const(*v, &e.ty),
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
                    return match op {
                        UnOp::Neg => self.float_neg(a, &e.ty, st),
                        _ => self.fresh(w, "float"),
                    };
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

    pub(super) fn bool_to_int(&mut self, c: T, w: u32) -> T {
        let one = self.t.bv(w, 1);
        let zero = self.t.bv(w, 0);
        self.t.ite(c, one, zero)
    }

    /// The truth of an expression used as a condition (non-zero).
    pub(super) fn eval_bool(&mut self, e: &Expr, st: &mut State) -> T {
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
                let v = self.eval(e, st);
                if matches!(e.ty, CType::Float(_)) {
                    return match self.t.width(v) {
                        32 | 64 => self.float_truth(v),
                        _ => self.t.var(Sort::Bool, "float_cond"),
                    };
                }
                let w = self.t.width(v);
                let zero = self.t.bv(w, 0);
                let is_zero = self.t.eq(v, zero);
                self.t.not(is_zero)
            }
        }
    }

    pub(super) fn compare(&mut self, op: BinOp, a: &Expr, b: &Expr, st: &mut State) -> T {
        if matches!(a.ty, CType::Float(_)) || matches!(b.ty, CType::Float(_)) {
            return self.float_compare(op, a, b, st);
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

    pub(super) fn binary(
        &mut self,
        op: BinOp,
        a: &Expr,
        b: &Expr,
        ty: &CType,
        st: &mut State,
    ) -> T {
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
            return self.float_binary(op, a, b, ty, st);
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
    pub(super) fn convert(&mut self, v: T, from: &CType, to: &CType) -> T {
        let w = width_of(to);
        match (from, to) {
            (CType::Float(_), _) | (_, CType::Float(_)) => self.float_convert(v, from, to),
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
    pub(super) fn edges(&mut self, term: &Terminator, st: &State, pc: T) -> Vec<(BlockId, T)> {
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
