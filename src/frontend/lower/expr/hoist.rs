//! Side effects hoisted out of expressions: operands spilled before later effects,
//! `&&`, `||` and `?:` lowered to branches, assignments and increments as statements.

use super::*;

impl Lowerer<'_> {
    /// When a later operand has side effects, C does not say whether this operand is read
    /// before or after them; we read it before, into a temporary, as a left-to-right compiler
    /// would.
    pub(super) fn spill_if_later_effects(&mut self, e: Expr, later: Node) -> Expr {
        if e.as_const().is_some()
            || matches!(
                e.kind,
                ExprKind::FuncAddr(_) | ExprKind::Str(_) | ExprKind::AddrOf(_)
            )
            || !has_effects(later)
            || self.fs.is_none()
            || e.ty.is_aggregate()
            || e.ty == CType::Void
        {
            return e;
        }
        let ty = e.ty.clone();
        let t = self.new_temp(ty.clone());
        let loc = self.loc(later);
        self.assign_local(t, e, loc);
        Expr::read(LValue::Var(VarRef::Local(t)), ty)
    }

    pub(super) fn binary_expression(&mut self, node: Node) -> Expr {
        let op = node
            .child_by_field_name("operator")
            .map(|o| self.node_text(o))
            .unwrap_or("");
        let (Some(l), Some(r)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ) else {
            return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
        };
        if let Some(ty) = self.misparsed_cast_type(l) {
            if matches!(op, "-" | "+" | "*" | "&") {
                return self.misparsed_cast(ty, op, r);
            }
        }
        if op == "&&" || op == "||" {
            return self.logical_value(node);
        }
        let Some(bop) = binop_of(op) else {
            self.fallback(node, FallbackKind::UnsupportedExpr, "unknown operator");
            return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
        };
        let a = self.expr(l);
        let a = self.spill_if_later_effects(a, r);
        let b = self.expr(r);
        self.binary(bop, a, b)
    }

    /// `(T)` where `T` is a typedef name: tree-sitter-c, which does not know typedefs, parses
    /// `(T)-1`, `(T)*p` and `(T)&x` as binary operations and `(T)(x)` as a call.
    pub(in crate::frontend::lower) fn misparsed_cast_type(&mut self, node: Node) -> Option<CType> {
        if node.kind() != "parenthesized_expression" || node.named_child_count() != 1 {
            return None;
        }
        let inner = node.named_child(0)?;
        if inner.kind() == "call_expression" {
            // `(__typeof__(e))(x)`: tree-sitter reads the type as a call of `__typeof__`; the
            // type is `e`'s, which is not evaluated.
            let name = self.callee_name(inner)?;
            if !matches!(name.as_str(), "typeof" | "__typeof__" | "__typeof") {
                return None;
            }
            let args = inner.child_by_field_name("arguments")?;
            if args.named_child_count() != 1 {
                return None;
            }
            let e = args.named_child(0)?;
            let ty = self.speculative(|l| l.expr_raw(e).ty);
            return (ty != CType::Unknown).then_some(ty);
        }
        if inner.kind() != "identifier" {
            return None;
        }
        self.typedef_type(self.node_text(inner))
    }

    /// Rebuilds `(T) op R` as C reads it: the cast and the unary `op` apply to the leftmost
    /// operand of `R`, and `R`'s own (tighter) binary operators apply after.
    pub(super) fn misparsed_cast(&mut self, ty: CType, op: &str, right: Node) -> Expr {
        if right.kind() == "binary_expression" {
            let (Some(rl), Some(rr)) = (
                right.child_by_field_name("left"),
                right.child_by_field_name("right"),
            ) else {
                return Expr::fresh(FallbackKind::UnsupportedExpr, ty);
            };
            let rop = right
                .child_by_field_name("operator")
                .map(|o| self.node_text(o))
                .unwrap_or("");
            let Some(bop) = binop_of(rop) else {
                return Expr::fresh(FallbackKind::UnsupportedExpr, ty);
            };
            if matches!(rop, "&&" | "||") {
                // Not produced by the grammar for this shape; stay safe.
                self.fallback(right, FallbackKind::UnsupportedExpr, "ambiguous cast");
                return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
            }
            let a = self.misparsed_cast(ty, op, rl);
            let a = self.spill_if_later_effects(a, rr);
            let b = self.expr(rr);
            return self.binary(bop, a, b);
        }
        let operand = match op {
            "&" => self.address_of(right),
            "*" => {
                let p = self.expr(right);
                let d = self.deref(p);
                self.rv(d)
            }
            "-" => {
                let a = self.expr(right);
                self.unary(UnOp::Neg, a)
            }
            _ => {
                let a = self.expr(right);
                self.promote_expr(a)
            }
        };
        let operand = self.rv(operand);
        if ty == CType::Unknown {
            return Expr::fresh(FallbackKind::UnknownType, ty);
        }
        fold(self.convert(operand, &ty))
    }

    /// `a && b` / `a || b` for their value: branches that set a temporary to 0 or 1.
    pub(super) fn logical_value(&mut self, node: Node) -> Expr {
        if self.fs.is_none() || !self.in_function_code() {
            // Constant expressions (array sizes, enumerators) at file scope.
            return self.pure_expr(node);
        }
        let t = self.new_temp(CType::INT);
        let loc = self.loc(node);
        let (tb, fb, join) = (
            self.new_block(loc),
            self.new_block(loc),
            self.new_block(loc),
        );
        self.cond(node, tb, fb);
        for (b, v) in [(tb, 1), (fb, 0)] {
            self.start_block(b);
            self.assign_local(t, Expr::int_const(v, IntKind::Int), loc);
            self.jump(join);
        }
        self.start_block(join);
        Expr::read(LValue::Var(VarRef::Local(t)), CType::INT)
    }

    /// True when effects and branches can be emitted (inside a function body, not in a
    /// static initializer or a file-scope constant).
    pub(super) fn in_function_code(&self) -> bool {
        self.fs
            .as_ref()
            .is_some_and(|f| !f.blocks.is_empty() && !f.const_context)
    }

    /// `c ? a : b` for its value, through branches (GNU `c ?: b` evaluates `c` once).
    pub(super) fn conditional(&mut self, node: Node) -> Expr {
        let (Some(c), Some(alt)) = (
            node.child_by_field_name("condition"),
            node.child_by_field_name("alternative"),
        ) else {
            return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
        };
        let cons = node.child_by_field_name("consequence");
        if self.fs.is_none() || !self.in_function_code() {
            return self.pure_expr(node);
        }
        let loc = self.loc(node);
        // Types of both arms decide the result type; find them without evaluating.
        let tty = match cons {
            Some(n) => self.speculative(|l| l.expr(n).ty),
            None => self.speculative(|l| l.expr(c).ty),
        };
        let fty = self.speculative(|l| l.expr(alt).ty);
        let rty = conditional_type(&tty, &fty);
        let t = (rty != CType::Void).then(|| self.new_temp(rty.clone()));
        let (tb, fb, join) = (
            self.new_block(loc),
            self.new_block(loc),
            self.new_block(loc),
        );
        match cons {
            Some(cons) => {
                self.cond(c, tb, fb);
                self.start_block(tb);
                let v = self.expr(cons);
                self.assign_temp(t, v, &rty, loc);
            }
            None => {
                let v = self.expr(c);
                let v = self.spill_always(v, loc);
                let cv = self.as_condition(v.clone());
                self.branch(cv, tb, fb);
                self.start_block(tb);
                self.assign_temp(t, v, &rty, loc);
            }
        }
        self.jump(join);
        self.start_block(fb);
        let v = self.expr(alt);
        self.assign_temp(t, v, &rty, loc);
        self.jump(join);
        self.start_block(join);
        match t {
            Some(t) => Expr::read(LValue::Var(VarRef::Local(t)), rty),
            None => Expr::new(ExprKind::Const(0), CType::Void),
        }
    }

    pub(super) fn spill_always(&mut self, e: Expr, loc: Loc) -> Expr {
        if e.as_const().is_some() {
            return e;
        }
        let ty = e.ty.clone();
        let t = self.new_temp(ty.clone());
        self.assign_local(t, e, loc);
        Expr::read(LValue::Var(VarRef::Local(t)), ty)
    }

    pub(super) fn assign_temp(&mut self, t: Option<LocalId>, v: Expr, ty: &CType, loc: Loc) {
        if let Some(t) = t {
            let v = self.convert(v, ty);
            self.assign_local(t, v, loc);
        }
    }

    /// Lowers a side-effect-free expression keeping `&&`, `||` and `?:` as operators: label
    /// predicates and file-scope constants. The caller checked that there are no side effects.
    pub(in crate::frontend::lower) fn pure_expr(&mut self, node: Node) -> Expr {
        match node.kind() {
            "parenthesized_expression" => match node.named_child(0) {
                Some(i) if i.kind() != "compound_statement" => self.pure_expr(i),
                _ => self.expr(node),
            },
            "binary_expression" => {
                let op = node
                    .child_by_field_name("operator")
                    .map(|o| self.node_text(o))
                    .unwrap_or("");
                let (Some(l), Some(r)) = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                ) else {
                    return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
                };
                let Some(bop) = binop_of(op) else {
                    return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
                };
                let a = self.pure_expr(l);
                let b = self.pure_expr(r);
                self.binary(bop, a, b)
            }
            "unary_expression" => self.unary_expression(node, Self::pure_expr),
            "conditional_expression" => {
                let (Some(c), Some(alt)) = (
                    node.child_by_field_name("condition"),
                    node.child_by_field_name("alternative"),
                ) else {
                    return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
                };
                let cv = self.pure_expr(c);
                let tv = match node.child_by_field_name("consequence") {
                    Some(n) => self.pure_expr(n),
                    None => cv.clone(),
                };
                let fv = self.pure_expr(alt);
                let rty = conditional_type(&tv.ty, &fv.ty);
                if rty == CType::Void {
                    return Expr::new(ExprKind::Const(0), CType::Void);
                }
                let cv = self.as_condition(cv);
                let tv = self.convert(tv, &rty);
                let fv = self.convert(fv, &rty);
                fold(Expr::new(
                    ExprKind::Cond(Box::new(cv), Box::new(tv), Box::new(fv)),
                    rty,
                ))
            }
            "cast_expression" => {
                let ty = node
                    .child_by_field_name("type")
                    .map_or(CType::Unknown, |t| self.type_descriptor(t));
                let Some(v) = node.child_by_field_name("value") else {
                    return Expr::fresh(FallbackKind::UnsupportedExpr, ty);
                };
                let e = self.pure_expr(v);
                if ty == CType::Unknown {
                    return Expr::fresh(FallbackKind::UnknownType, ty);
                }
                fold(self.convert(e, &ty))
            }
            _ => self.expr(node),
        }
    }

    pub(super) fn assignment(&mut self, node: Node, want_value: bool) -> Expr {
        let (Some(left), Some(right)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ) else {
            return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
        };
        let op = node
            .child_by_field_name("operator")
            .map(|o| self.node_text(o))
            .unwrap_or("=");
        let loc = self.loc(node);
        let Some((lv, lty)) = self.lvalue(left) else {
            let v = self.expr(right);
            return v;
        };
        let src = if op == "=" {
            let r = self.expr(right);
            if lty.is_aggregate() && r.ty == lty {
                r
            } else {
                self.convert(r, &lty)
            }
        } else {
            let bop = binop_of(op.trim_end_matches('=')).unwrap_or(BinOp::Add);
            let cur = self.read_place(lv.clone(), lty.clone());
            let cur = self.spill_if_later_effects(cur, right);
            let r = self.expr(right);
            let v = self.binary(bop, cur, r);
            self.convert(v, &lty)
        };
        self.emit(
            StmtKind::Assign {
                dst: lv.clone(),
                src,
            },
            loc,
        );
        if want_value {
            self.read_place(lv, lty)
        } else {
            Expr::new(ExprKind::Const(0), CType::Void)
        }
    }

    pub(super) fn update(&mut self, node: Node, want_value: bool) -> Expr {
        let Some(arg) = node.child_by_field_name("argument") else {
            return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
        };
        let op = node
            .child_by_field_name("operator")
            .map(|o| self.node_text(o))
            .unwrap_or("++");
        let prefix = node
            .child(0)
            .is_some_and(|c| c.kind() == "++" || c.kind() == "--");
        let loc = self.loc(node);
        let Some((lv, lty)) = self.lvalue(arg) else {
            return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
        };
        let old = self.read_place(lv.clone(), lty.clone());
        let old = if want_value && !prefix {
            self.spill_always(old, loc)
        } else {
            old
        };
        let one = Expr::int_const(1, IntKind::Int);
        let bop = if op == "++" { BinOp::Add } else { BinOp::Sub };
        let new = if lty.is_arithmetic() || lty.is_pointer() {
            let v = self.binary(bop, old.clone(), one);
            self.convert(v, &lty)
        } else {
            Expr::fresh(FallbackKind::UnsupportedExpr, lty.clone())
        };
        self.emit(
            StmtKind::Assign {
                dst: lv.clone(),
                src: new,
            },
            loc,
        );
        if !want_value {
            Expr::new(ExprKind::Const(0), CType::Void)
        } else if prefix {
            self.read_place(lv, lty)
        } else {
            old
        }
    }

    /// Lowers an expression whose value is not used (expression statements, `for` updates).
    pub(in crate::frontend::lower) fn discard(&mut self, node: Node) {
        match node.kind() {
            "assignment_expression" => {
                self.assignment(node, false);
            }
            "update_expression" => {
                self.update(node, false);
            }
            "call_expression" => {
                self.call(node, false);
            }
            "comma_expression" => {
                if let Some(l) = node.child_by_field_name("left") {
                    self.discard(l);
                }
                if let Some(r) = node.child_by_field_name("right") {
                    self.discard(r);
                }
            }
            "parenthesized_expression" => {
                if let Some(inner) = node.named_child(0) {
                    if inner.kind() == "compound_statement" {
                        self.statement_expression(inner);
                    } else {
                        self.discard(inner);
                    }
                }
            }
            "argument_list" => {
                let mut c = node.walk();
                let args: Vec<Node> = node.named_children(&mut c).collect();
                for a in args {
                    self.discard(a);
                }
            }
            "cast_expression" => {
                if let Some(v) = node.child_by_field_name("value") {
                    if v.kind() == "call_expression"
                        && self.callee_name(v).as_deref() == Some("__cp_va_arg")
                    {
                        return;
                    }
                    self.discard(v);
                }
            }
            "gnu_asm_expression" => self.inline_asm(node),
            "identifier" | "number_literal" | "string_literal" | "char_literal" => {}
            _ => {
                let _ = self.expr(node);
            }
        }
    }
}
