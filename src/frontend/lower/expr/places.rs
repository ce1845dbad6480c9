//! Places: lvalues (fields, subscripts, dereferences), reads of them, addresses taken, and
//! temporaries.

use super::*;

impl Lowerer<'_> {
    pub(super) fn is_volatile(&self, v: VarRef) -> bool {
        match v {
            VarRef::Local(id) => self
                .fs
                .as_ref()
                .and_then(|f| f.locals.get(id.0 as usize))
                .is_some_and(|l| l.volatile),
            VarRef::Global(id) => self.prog.globals[id.0 as usize].volatile,
        }
    }

    pub(super) fn read_place(&mut self, lv: LValue, ty: CType) -> Expr {
        if let LValue::Var(v) = &lv {
            if self.is_volatile(*v) {
                return Expr::fresh(FallbackKind::UnsupportedExpr, ty);
            }
        }
        // A bit-field narrower than `int` promotes to `int` whatever its declared type (GCC,
        // C11 6.3.1.1p2): `unsigned b : 5; b - 10 < 0` is true.
        if let LValue::Field(_, rid, idx) = &lv {
            let bits = self
                .prog
                .records
                .get(rid.0 as usize)
                .and_then(|r| r.fields.get(*idx as usize))
                .and_then(|f| f.bits);
            if let (Some((_, width)), CType::Int(k)) = (bits, &ty) {
                if width < 32 && *k != IntKind::Int {
                    let read = Expr::read(lv, ty);
                    return Expr::new(ExprKind::Cast(Box::new(read)), CType::INT);
                }
            }
        }
        Expr::read(lv, ty)
    }

    pub(super) fn deref(&mut self, p: Expr) -> Expr {
        match &p.ty {
            CType::Pointer(t) => match &**t {
                // `*fp` of a function pointer designates the function: still the pointer.
                CType::Function(_) => p,
                CType::Void => Expr::new(ExprKind::Const(0), CType::Void),
                t => {
                    let t = t.clone();
                    Expr::read(LValue::Deref(Box::new(p)), t)
                }
            },
            _ => Expr::fresh(FallbackKind::UnsupportedExpr, CType::Unknown),
        }
    }

    pub(super) fn address_of(&mut self, arg: Node) -> Expr {
        // `&*p` is `p`.
        if arg.kind() == "pointer_expression"
            && arg
                .child_by_field_name("operator")
                .is_some_and(|o| self.node_text(o) == "*")
        {
            if let Some(inner) = arg.child_by_field_name("argument") {
                return self.expr(inner);
            }
        }
        let inner = self.expr_raw(arg);
        match inner.kind {
            ExprKind::FuncAddr(name) => {
                Expr::new(ExprKind::FuncAddr(name), CType::ptr_to(inner.ty))
            }
            ExprKind::Read(lv) => {
                self.mark_address_taken(&lv);
                Expr::new(ExprKind::AddrOf(lv), CType::ptr_to(inner.ty))
            }
            ExprKind::Str(i) => Expr::new(ExprKind::Str(i), CType::ptr_to(inner.ty)),
            _ => {
                // `&` of something that is not a place we know (a volatile read, a fallback).
                Expr::fresh(FallbackKind::UnsupportedExpr, CType::ptr_to(inner.ty))
            }
        }
    }

    /// The place an lvalue expression designates, and its type.
    pub(in crate::frontend::lower) fn lvalue(&mut self, node: Node) -> Option<(LValue, CType)> {
        let place = self.place_of_kind(node)?;
        self.types
            .record_place((node.start_byte(), node.end_byte()), &place.1);
        Some(place)
    }

    fn place_of_kind(&mut self, node: Node) -> Option<(LValue, CType)> {
        match node.kind() {
            "identifier" => match self.lookup(self.node_text(node)).cloned() {
                Some(Symbol::Var(v, ty)) => Some((LValue::Var(v), ty)),
                _ => {
                    self.fallback(node, FallbackKind::UndeclaredIdentifier, "not a variable");
                    None
                }
            },
            "parenthesized_expression" => {
                let inner = node.named_child(0)?;
                if inner.kind() == "compound_statement" {
                    return self.spill_to_place(node);
                }
                self.lvalue(inner)
            }
            "field_expression" => {
                let arg = node.child_by_field_name("argument")?;
                self.field_place(node, arg)
            }
            "subscript_expression" => {
                let arg = node.child_by_field_name("argument")?;
                self.subscript_place(node, arg)
            }
            "pointer_expression" => {
                let arg = node.child_by_field_name("argument")?;
                let p = self.expr(arg);
                let CType::Pointer(t) = &p.ty else {
                    self.fallback(node, FallbackKind::UnsupportedExpr, "* of a non-pointer");
                    return None;
                };
                let t = (**t).clone();
                Some((LValue::Deref(Box::new(p)), t))
            }
            "compound_literal_expression"
            | "call_expression"
            | "conditional_expression"
            | "assignment_expression"
            | "cast_expression"
            | "comma_expression" => self.spill_to_place(node),
            _ => {
                self.fallback(node, FallbackKind::UnsupportedExpr, "not an lvalue");
                None
            }
        }
    }

    /// The member place `arg.field` / `arg->field` of the field expression `node`.
    pub(super) fn field_place(&mut self, node: Node, arg: Node) -> Option<(LValue, CType)> {
        let field = node.child_by_field_name("field")?;
        let arrow = node
            .child_by_field_name("operator")
            .is_some_and(|o| self.node_text(o) == "->");
        let (base, bty) = if arrow {
            let p = self.expr(arg);
            let CType::Pointer(t) = &p.ty else {
                self.fallback(node, FallbackKind::UnsupportedExpr, "-> on a non-pointer");
                return None;
            };
            let t = (**t).clone();
            (LValue::Deref(Box::new(p)), t)
        } else {
            self.lvalue(arg)?
        };
        let CType::Record(rid) = bty else {
            self.fallback(node, FallbackKind::UnknownType, "member of a non-record");
            return None;
        };
        let name = self.node_text(field);
        match self.find_field(rid, name) {
            Some(path) => {
                let mut lv = base;
                let mut ty = CType::Unknown;
                for (r, idx) in path {
                    ty = self.prog.records[r.0 as usize].fields[idx as usize]
                        .ty
                        .clone();
                    lv = LValue::Field(Box::new(lv), r, idx);
                }
                Some((lv, ty))
            }
            None => {
                self.fallback(node, FallbackKind::UnknownType, "unknown member");
                None
            }
        }
    }

    /// The element place `arg[index]` of the subscript expression `node`.
    pub(super) fn subscript_place(&mut self, node: Node, arg: Node) -> Option<(LValue, CType)> {
        let index = node.child_by_field_name("index")?;
        let base = self.expr_raw(arg);
        if let (CType::Array(elem, _), ExprKind::Read(_)) = (&base.ty, &base.kind) {
            let elem = (**elem).clone();
            let ExprKind::Read(lv) = base.kind else {
                return None;
            };
            let i = self.expr(index);
            let i = self.convert(i, &CType::LONG);
            return Some((LValue::Index(Box::new(lv), Box::new(i)), elem));
        }
        let base = self.spill_if_later_effects(base, index);
        let base = self.rv(base);
        let i = self.expr(index);
        let p = self.binary(BinOp::Add, base, i);
        let CType::Pointer(t) = &p.ty else {
            self.fallback(
                node,
                FallbackKind::UnsupportedExpr,
                "subscript of a non-pointer",
            );
            return None;
        };
        let t = (**t).clone();
        Some((LValue::Deref(Box::new(p)), t))
    }

    /// `(T)(x)[i]` and `(T)(x).f`: tree-sitter-c reads a cast to a typedef name followed by a
    /// parenthesized operand as a call, then applies the postfix to the "call". C applies the
    /// postfix first. Returns the cast type and the operand.
    pub(super) fn misparsed_cast_postfix<'t>(
        &mut self,
        node: Node<'t>,
    ) -> Option<(CType, Node<'t>)> {
        let arg = node.child_by_field_name("argument")?;
        if arg.kind() != "call_expression" {
            return None;
        }
        let ty = self.misparsed_cast_type(arg.child_by_field_name("function")?)?;
        let args = arg.child_by_field_name("arguments")?;
        if args.named_child_count() != 1 {
            return None;
        }
        Some((ty, args.named_child(0)?))
    }

    /// Evaluates an rvalue into a fresh temporary and returns the temporary as a place (for
    /// members of values: `f().x`, `(c ? a : b).x`).
    pub(super) fn spill_to_place(&mut self, node: Node) -> Option<(LValue, CType)> {
        let e = self.expr_raw(node);
        if let ExprKind::Read(lv) = e.kind {
            return Some((lv, e.ty));
        }
        self.fs.as_ref()?;
        let ty = e.ty.clone();
        let t = self.new_temp(ty.clone());
        let loc = self.loc(node);
        self.assign_local(t, e, loc);
        Some((LValue::Var(VarRef::Local(t)), ty))
    }

    /// Path of (record, field index) pairs to a member, through anonymous members.
    pub(super) fn find_field(&self, rid: RecordId, name: &str) -> Option<Vec<(RecordId, u32)>> {
        let rec = self.prog.records.get(rid.0 as usize)?;
        for (i, f) in rec.fields.iter().enumerate() {
            if f.name == name {
                return Some(vec![(rid, i as u32)]);
            }
        }
        for (i, f) in rec.fields.iter().enumerate() {
            if let (true, CType::Record(inner)) = (f.name.is_empty(), &f.ty) {
                if let Some(mut rest) = self.find_field(*inner, name) {
                    rest.insert(0, (rid, i as u32));
                    return Some(rest);
                }
            }
        }
        None
    }

    pub(in crate::frontend::lower) fn new_temp(&mut self, ty: CType) -> LocalId {
        self.new_local("tmp", ty, false)
    }
}
