//! Calls and the expressions that are almost calls: builtins, `sizeof`, `offsetof`, compound
//! literals, GNU statement expressions and inline assembly.

use super::*;

/// GCC builtins without effects on memory: their value is unconstrained (not modelled).
const PURE_BUILTINS: &[&str] = &[
    "__builtin_constant_p",
    "__builtin_clz",
    "__builtin_clzl",
    "__builtin_clzll",
    "__builtin_ctz",
    "__builtin_ctzl",
    "__builtin_ctzll",
    "__builtin_popcount",
    "__builtin_popcountl",
    "__builtin_popcountll",
    "__builtin_parity",
    "__builtin_ffs",
    "__builtin_ffsl",
    "__builtin_bswap16",
    "__builtin_bswap32",
    "__builtin_bswap64",
    "__builtin_types_compatible_p",
    "__builtin_object_size",
    "__builtin_dynamic_object_size",
    "__builtin_isnan",
    "__builtin_isinf",
    "__builtin_isinf_sign",
    "__builtin_isfinite",
    "__builtin_huge_val",
    "__builtin_huge_valf",
    "__builtin_inf",
    "__builtin_inff",
    "__builtin_nan",
    "__builtin_nanf",
    "__builtin_fabs",
    "__builtin_frame_address",
    "__builtin_return_address",
    "__builtin_classify_type",
    "__builtin_signbit",
];

impl Lowerer<'_> {
    pub(in crate::frontend::lower) fn callee_name(&self, call: Node) -> Option<String> {
        let f = call.child_by_field_name("function")?;
        (f.kind() == "identifier").then(|| self.node_text(f).to_string())
    }

    /// Lowers a call; returns its value when `want_value` and the callee returns one.
    pub(in crate::frontend::lower) fn call(
        &mut self,
        node: Node,
        want_value: bool,
    ) -> Option<Expr> {
        let fnode = node.child_by_field_name("function")?;
        let args_node = node.child_by_field_name("arguments");
        let mut arg_nodes: Vec<Node> = Vec::new();
        if let Some(a) = args_node {
            let mut c = a.walk();
            arg_nodes = a
                .named_children(&mut c)
                .filter(|n| n.kind() != "comment")
                .collect();
        }
        let loc = self.loc(node);
        if let Some(ty) = self.misparsed_cast_type(fnode) {
            // `(T)(x)`: a cast, not a call.
            let mut value = None;
            for a in &arg_nodes {
                if let Some(prev) = value.take() {
                    let _: Expr = prev;
                }
                value = Some(self.expr(*a));
            }
            let v = value.unwrap_or_else(|| Expr::fresh(FallbackKind::UnsupportedExpr, ty.clone()));
            if ty == CType::Void {
                return None;
            }
            return Some(fold(self.convert(v, &ty)));
        }
        let name = self.callee_name(node);
        if let Some(n) = name.as_deref() {
            // `pc_label_bindings(pred, id, tag, ...)` (CACC, RACC) is a label whose extra
            // arguments only record values for hyperlabels.
            if n == "pc_label" || n == "pc_label_bindings" {
                self.label_call(node, &arg_nodes);
                return None;
            }
            if n == "pc_label_sequence" || n == "pc_label_sequence_condition" {
                self.sequence_call(node, n == "pc_label_sequence", &arg_nodes);
                return None;
            }
            if let Some(v) = self.builtin_call(node, n, &arg_nodes) {
                return v;
            }
        }
        // Resolve the callee: a named function (declared or implicitly declared) or a pointer.
        let (callee, fty) = match name.as_deref().map(|n| (n, self.lookup(n).cloned())) {
            Some((n, None)) | Some((n, Some(Symbol::Func(_)))) => {
                let fty = match self.funcs.get(n) {
                    Some(f) => f.ty.clone(),
                    None => {
                        // An implicit declaration: `int n()` (C89 3.3.2.2).
                        let ft = FuncType {
                            ret: CType::INT,
                            params: Vec::new(),
                            variadic: false,
                            prototyped: false,
                            noreturn: false,
                        };
                        self.funcs.insert(
                            n.to_string(),
                            crate::frontend::lower::FuncSym {
                                ty: ft.clone(),
                                linkage: Linkage::External,
                                defined: false,
                            },
                        );
                        ft
                    }
                };
                (Callee::Direct(n.to_string()), fty)
            }
            _ => {
                let f = self.expr(fnode);
                match (&f.kind, f.ty.func().cloned()) {
                    (ExprKind::FuncAddr(n), Some(ft)) => (Callee::Direct(n.clone()), ft),
                    (_, Some(ft)) => {
                        let f = self.spill_if_later_effects(f, args_node.unwrap_or(fnode));
                        (Callee::Indirect(f), ft)
                    }
                    _ => {
                        self.fallback(
                            node,
                            FallbackKind::UnsupportedExpr,
                            "call of a non-function",
                        );
                        let ft = FuncType {
                            ret: CType::Unknown,
                            params: Vec::new(),
                            variadic: true,
                            prototyped: false,
                            noreturn: false,
                        };
                        (Callee::Indirect(f), ft)
                    }
                }
            }
        };
        let mut args = Vec::new();
        for (i, a) in arg_nodes.iter().enumerate() {
            let e = self.expr(*a);
            let e = match arg_nodes.get(i + 1..) {
                Some(rest) if rest.iter().any(|n| has_effects(*n)) => {
                    let later = rest[0];
                    self.spill_if_later_effects(e, later)
                }
                _ => e,
            };
            let e = if fty.prototyped && i < fty.params.len() {
                let pty = fty.params[i].clone();
                if pty.is_aggregate() && e.ty == pty {
                    e
                } else {
                    self.convert(e, &pty)
                }
            } else {
                // Default argument promotions.
                match &e.ty {
                    CType::Int(k) => {
                        let p = promote(*k);
                        self.convert(e, &CType::Int(p))
                    }
                    CType::Float(FloatKind::Float) => {
                        self.convert(e, &CType::Float(FloatKind::Double))
                    }
                    _ => e,
                }
            };
            args.push(e);
        }
        let ret = fty.ret.clone();
        let dst = (want_value && ret != CType::Void).then(|| self.new_temp(ret.clone()));
        let never_returns = fty.noreturn
            || matches!(&callee, Callee::Direct(n) if crate::libc::NEVER_RETURNS.contains(&n.as_str()));
        self.emit(
            StmtKind::Call {
                dst: dst.map(|t| LValue::Var(VarRef::Local(t))),
                callee,
                args,
            },
            loc,
        );
        if never_returns {
            self.terminate(Terminator::NoReturn);
        }
        dst.map(|t| Expr::read(LValue::Var(VarRef::Local(t)), ret))
    }

    /// GCC builtins with a meaning of their own. `None` when `name` is an ordinary function;
    /// `Some(value)` otherwise.
    pub(super) fn builtin_call(
        &mut self,
        node: Node,
        name: &str,
        args: &[Node],
    ) -> Option<Option<Expr>> {
        match name {
            "__builtin_expect" | "__builtin_expect_with_probability" => {
                let v = args.first().map(|a| self.expr(*a));
                for a in args.iter().skip(1) {
                    self.discard(*a);
                }
                Some(v.map(|v| self.convert(v, &CType::LONG)))
            }
            "__builtin_unreachable" => {
                self.terminate(Terminator::Unreachable);
                Some(None)
            }
            "__builtin_assume_aligned" => {
                let v = args.first().map(|a| self.expr(*a));
                for a in args.iter().skip(1) {
                    self.discard(*a);
                }
                Some(v)
            }
            "__builtin_prefetch" | "__builtin_va_end" => {
                for a in args {
                    self.discard(*a);
                }
                Some(None)
            }
            _ if PURE_BUILTINS.contains(&name) => {
                for a in args {
                    self.discard(*a);
                }
                self.fallback(node, FallbackKind::Builtin, "builtin value not modelled");
                let ty = if name.contains("huge_val")
                    || name.contains("inf")
                    || name.contains("nan")
                    || name == "__builtin_fabs"
                {
                    CType::Float(FloatKind::Double)
                } else if name.contains("address") {
                    CType::ptr_to(CType::Void)
                } else if name.contains("object_size") {
                    CType::ULONG
                } else if name.contains("bswap64") || name.ends_with("ll") || name.ends_with('l') {
                    CType::Int(IntKind::Long)
                } else {
                    CType::INT
                };
                Some(Some(Expr::fresh(FallbackKind::Builtin, ty)))
            }
            _ => None,
        }
    }

    pub(super) fn sizeof(&mut self, node: Node) -> Expr {
        let ty = if let Some(t) = node.child_by_field_name("type") {
            self.type_descriptor(t)
        } else if let Some(v) = node.child_by_field_name("value") {
            // `sizeof(T)` with a typedef name parses as a parenthesized identifier.
            let inner = if v.kind() == "parenthesized_expression" {
                v.named_child(0)
            } else {
                None
            };
            match inner
                .filter(|i| i.kind() == "identifier")
                .and_then(|i| self.typedef_type(self.node_text(i)))
            {
                Some(t) => t,
                None => self.speculative(|l| l.expr_raw(v).ty),
            }
        } else {
            CType::Unknown
        };
        match self.layout().size_of(&ty) {
            Some(s) if !matches!(ty, CType::Array(_, None)) => {
                Expr::int_const(i128::from(s), IntKind::ULong)
            }
            _ => {
                self.fallback(node, FallbackKind::UnknownType, "size not known");
                Expr::fresh(FallbackKind::UnknownType, CType::ULONG)
            }
        }
    }

    pub(super) fn offsetof(&mut self, node: Node) -> Expr {
        let ty = node
            .child_by_field_name("type")
            .map_or(CType::Unknown, |t| self.type_descriptor(t));
        let member = node
            .child_by_field_name("member")
            .map(|m| self.node_text(m).to_string());
        if let (CType::Record(rid), Some(m)) = (&ty, member) {
            if self.prog.records[rid.0 as usize].complete {
                if let Some(path) = self.find_field(*rid, &m) {
                    let off: u64 = path
                        .iter()
                        .map(|(r, i)| self.prog.records[r.0 as usize].fields[*i as usize].offset)
                        .sum();
                    return Expr::int_const(i128::from(off), IntKind::ULong);
                }
            }
        }
        self.fallback(node, FallbackKind::UnknownType, "offsetof not resolved");
        Expr::fresh(FallbackKind::UnknownType, CType::ULONG)
    }

    pub(super) fn compound_literal(&mut self, node: Node) -> Expr {
        let mut ty = node
            .child_by_field_name("type")
            .map_or(CType::Unknown, |t| self.type_descriptor(t));
        let value = node.child_by_field_name("value");
        if self.fs.is_none() || !self.in_function_code() {
            self.fallback(
                node,
                FallbackKind::NonConstInit,
                "compound literal at file scope",
            );
            return Expr::fresh(FallbackKind::NonConstInit, ty);
        }
        if let (CType::Array(elem, None), Some(v)) = (&ty, value) {
            let n = v.named_child_count() as u64;
            ty = CType::Array(elem.clone(), Some(n));
        }
        let t = self.new_temp(ty.clone());
        let lv = LValue::Var(VarRef::Local(t));
        self.mark_address_taken(&lv);
        if let Some(v) = value {
            self.initialize(lv.clone(), &ty, v);
        }
        Expr::read(lv, ty)
    }

    /// A GNU statement expression: its value is that of its last expression statement.
    pub(in crate::frontend::lower) fn statement_expression(&mut self, block: Node) -> Expr {
        if self.fs.is_none() || !self.in_function_code() {
            self.fallback(
                block,
                FallbackKind::UnsupportedExpr,
                "statement expression outside a function",
            );
            return Expr::fresh(FallbackKind::UnsupportedExpr, CType::Unknown);
        }
        self.push_scope();
        let mut c = block.walk();
        let items: Vec<Node> = block
            .named_children(&mut c)
            .filter(|n| n.kind() != "comment")
            .collect();
        let mut value = Expr::new(ExprKind::Const(0), CType::Void);
        for (i, item) in items.iter().enumerate() {
            if i + 1 == items.len() && item.kind() == "expression_statement" {
                if let Some(e) = item.named_child(0) {
                    let v = self.expr(e);
                    value = if v.ty == CType::Void || v.ty.is_aggregate() {
                        v
                    } else {
                        let loc = self.loc(*item);
                        self.spill_always(v, loc)
                    };
                }
            } else {
                self.block_item(*item);
            }
        }
        self.pop_scope();
        value
    }

    /// Inline assembly: its outputs get unconstrained values and, since it may touch memory,
    /// so does all memory.
    pub(in crate::frontend::lower) fn inline_asm(&mut self, node: Node) {
        self.fallback(
            node,
            FallbackKind::InlineAsm,
            "inline assembly not modelled",
        );
        let loc = self.loc(node);
        if let Some(outs) = node.child_by_field_name("output_operands") {
            let mut c = outs.walk();
            let ops: Vec<Node> = outs.named_children(&mut c).collect();
            for op in ops {
                if let Some(v) = op.child_by_field_name("value") {
                    if let Some((lv, _)) = self.lvalue(v) {
                        self.emit(
                            StmtKind::Havoc {
                                dst: lv,
                                reason: Some(FallbackKind::InlineAsm),
                            },
                            loc,
                        );
                    }
                }
            }
        }
        if let Some(ins) = node.child_by_field_name("input_operands") {
            let mut c = ins.walk();
            let ops: Vec<Node> = ins.named_children(&mut c).collect();
            for op in ops {
                if let Some(v) = op.child_by_field_name("value") {
                    let _ = self.speculative(|l| l.expr(v));
                }
            }
        }
        self.emit(StmtKind::HavocMemory(FallbackKind::InlineAsm), loc);
    }
}
