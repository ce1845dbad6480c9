//! Lowering of C expressions: typing with explicit conversions, and hoisting of side effects,
//! calls, `&&`, `||` and `?:` into statements and branches.

use tree_sitter::Node;

use super::{Lowerer, Symbol};
use crate::frontend::literals::{decode_literal, parse_number, Number};
use crate::frontend::syntax::has_effects;
use crate::ir::consteval;
use crate::ir::types::{conditional_type, float_common, promote, usual_arithmetic};
use crate::ir::*;

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

impl<'s> Lowerer<'s> {
    // ----- entry points -------------------------------------------------------------------

    /// Lowers an expression for its value (arrays and functions decayed to pointers).
    pub(super) fn expr(&mut self, node: Node) -> Expr {
        let e = self.expr_raw(node);
        self.rv(e)
    }

    /// Lowers an expression that must be an integer constant, without emitting anything.
    pub(super) fn lower_const_expr(&mut self, node: Node) -> Expr {
        self.speculative(|l| l.expr(node))
    }

    /// Runs `f` and then undoes every statement, block and local it created: for `sizeof`,
    /// `typeof` and constant expressions, whose operands are not evaluated.
    pub(super) fn speculative<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        if self.fs.is_none() {
            // At file scope (array sizes, enumerators, bit-field widths) lower into a scratch
            // function that is thrown away.
            self.fs = Some(super::FnState::scratch(String::new()));
            let loc = Loc::default();
            let b = self.new_block(loc);
            self.start_block(b);
            let r = f(self);
            self.fs = None;
            return r;
        }
        let saved = self.fs.as_ref().map(|fs| {
            let cur = fs.cur.map(|b| {
                let blk = &fs.blocks[b.0 as usize];
                (b, blk.stmts.len(), blk.term.clone())
            });
            (fs.blocks.len(), fs.locals.len(), fs.cur, cur)
        });
        let r = f(self);
        if let (Some(fs), Some((n_blocks, n_locals, cur, cur_state))) = (self.fs.as_mut(), saved) {
            fs.blocks.truncate(n_blocks);
            fs.locals.truncate(n_locals);
            fs.cur = cur;
            if let Some((b, n_stmts, term)) = cur_state {
                let blk = &mut fs.blocks[b.0 as usize];
                blk.stmts.truncate(n_stmts);
                blk.term = term;
            }
        }
        r
    }

    /// Array-to-pointer and function-to-pointer conversions (C11 6.3.2.1).
    pub(super) fn rv(&mut self, e: Expr) -> Expr {
        match (&e.ty, e.kind) {
            (CType::Array(elem, _), ExprKind::Read(lv)) => {
                self.mark_address_taken(&lv);
                Expr::new(ExprKind::AddrOf(lv), CType::Pointer(elem.clone()))
            }
            (CType::Array(elem, _), ExprKind::Str(i)) => {
                Expr::new(ExprKind::Str(i), CType::Pointer(elem.clone()))
            }
            (CType::Function(_), kind) => Expr::new(kind, CType::ptr_to(e.ty.clone())),
            (_, kind) => Expr::new(kind, e.ty),
        }
    }

    pub(super) fn mark_address_taken(&mut self, lv: &LValue) {
        if let (LValue::Var(VarRef::Local(id)), Some(fs)) = (lv, self.fs.as_mut()) {
            if let Some(l) = fs.locals.get_mut(id.0 as usize) {
                l.address_taken = true;
            }
        }
        if let LValue::Field(base, _, _) | LValue::Index(base, _) = lv {
            self.mark_address_taken(base);
        }
    }

    // ----- conversions --------------------------------------------------------------------

    /// Converts `e` to `ty` as assignment or a cast would.
    pub(super) fn convert(&mut self, e: Expr, ty: &CType) -> Expr {
        if &e.ty == ty {
            return e;
        }
        match ty {
            CType::Void => Expr::new(e.kind, CType::Void),
            CType::Int(k) => {
                if let Some(v) = e.as_const() {
                    if e.ty.is_integer() || e.ty.is_pointer() {
                        return Expr::int_const(v, *k);
                    }
                }
                Expr::new(ExprKind::Cast(Box::new(e)), ty.clone())
            }
            CType::Pointer(_) | CType::Float(_) => {
                if e.ty == CType::Unknown {
                    return Expr::fresh(FallbackKind::UnknownType, ty.clone());
                }
                Expr::new(ExprKind::Cast(Box::new(e)), ty.clone())
            }
            // Records and arrays convert only to themselves; anything else is a value we do not
            // model (a GNU cast to union, a mistyped operand).
            _ => Expr::fresh(FallbackKind::UnsupportedExpr, ty.clone()),
        }
    }

    fn promote_expr(&mut self, e: Expr) -> Expr {
        match e.ty {
            CType::Int(k) => {
                let p = promote(k);
                self.convert(e, &CType::Int(p))
            }
            _ => e,
        }
    }

    /// `e != 0` as an `int` condition; comparisons and `!` are already conditions.
    pub(super) fn as_condition(&mut self, e: Expr) -> Expr {
        let already = match &e.kind {
            ExprKind::Binary(op, ..) => {
                op.is_comparison() || matches!(op, BinOp::LogAnd | BinOp::LogOr)
            }
            ExprKind::Unary(UnOp::LogNot, _) => true,
            _ => false,
        };
        if already && e.ty == CType::INT {
            return e;
        }
        if let Some(v) = e.as_const() {
            return Expr::int_const(i128::from(v != 0), IntKind::Int);
        }
        let zero = match &e.ty {
            CType::Float(_) => Expr::new(ExprKind::FloatConst(0.0), e.ty.clone()),
            CType::Pointer(_) => Expr::new(ExprKind::Const(0), e.ty.clone()),
            CType::Int(k) => Expr::int_const(0, promote(*k)),
            _ => return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT),
        };
        let e = self.promote_expr(e);
        Expr::new(
            ExprKind::Binary(BinOp::Ne, Box::new(e), Box::new(zero)),
            CType::INT,
        )
    }

    /// Builds `a op b` with C's typing, for every binary operator but `&&`/`||` in program code.
    pub(super) fn binary(&mut self, op: BinOp, a: Expr, b: Expr) -> Expr {
        let a = self.rv(a);
        let b = self.rv(b);
        let result = self.binary_typed(op, a, b);
        fold(result)
    }

    fn binary_typed(&mut self, op: BinOp, a: Expr, b: Expr) -> Expr {
        use BinOp::*;
        match op {
            LogAnd | LogOr => {
                let a = self.as_condition(a);
                let b = self.as_condition(b);
                return Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), CType::INT);
            }
            Add | Sub if a.ty.is_pointer() || b.ty.is_pointer() => {
                return self.pointer_arith(op, a, b);
            }
            _ => {}
        }
        if a.ty == CType::Unknown || b.ty == CType::Unknown {
            let ty = if op.is_comparison() {
                CType::INT
            } else {
                CType::Unknown
            };
            return Expr::fresh(FallbackKind::UnknownType, ty);
        }
        if op.is_comparison() {
            if a.ty.is_pointer() || b.ty.is_pointer() {
                let pty = if a.ty.is_pointer() {
                    a.ty.clone()
                } else {
                    b.ty.clone()
                };
                let a = self.convert(a, &pty);
                let b = self.convert(b, &pty);
                return Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), CType::INT);
            }
            if let (CType::Int(x), CType::Int(y)) = (&a.ty, &b.ty) {
                let k = CType::Int(usual_arithmetic(*x, *y));
                let a = self.convert(a, &k);
                let b = self.convert(b, &k);
                return Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), CType::INT);
            }
            if a.ty.is_arithmetic() && b.ty.is_arithmetic() {
                let ft = float_common(&a.ty, &b.ty);
                let a = self.convert(a, &ft);
                let b = self.convert(b, &ft);
                return Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), CType::INT);
            }
            return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
        }
        match op {
            Shl | Shr => {
                let (CType::Int(x), CType::Int(y)) = (&a.ty, &b.ty) else {
                    return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
                };
                let (px, py) = (CType::Int(promote(*x)), CType::Int(promote(*y)));
                let a = self.convert(a, &px);
                let b = self.convert(b, &py);
                Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), px)
            }
            _ => {
                if let (CType::Int(x), CType::Int(y)) = (&a.ty, &b.ty) {
                    let k = CType::Int(usual_arithmetic(*x, *y));
                    let a = self.convert(a, &k);
                    let b = self.convert(b, &k);
                    return Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), k);
                }
                if a.ty.is_arithmetic() && b.ty.is_arithmetic() {
                    let ft = float_common(&a.ty, &b.ty);
                    let a = self.convert(a, &ft);
                    let b = self.convert(b, &ft);
                    return Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), ft);
                }
                Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT)
            }
        }
    }

    fn pointer_arith(&mut self, op: BinOp, a: Expr, b: Expr) -> Expr {
        match (op, a.ty.is_pointer(), b.ty.is_pointer()) {
            (BinOp::Sub, true, true) => {
                let pty = a.ty.clone();
                let b = self.convert(b, &pty);
                Expr::new(
                    ExprKind::Binary(BinOp::PtrDiff, Box::new(a), Box::new(b)),
                    CType::LONG,
                )
            }
            (_, true, false) | (BinOp::Add, false, true) => {
                let (p, i) = if a.ty.is_pointer() { (a, b) } else { (b, a) };
                if !i.ty.is_integer() {
                    return Expr::fresh(FallbackKind::UnsupportedExpr, p.ty.clone());
                }
                let mut i = self.convert(i, &CType::LONG);
                if op == BinOp::Sub {
                    i = fold(Expr::new(
                        ExprKind::Unary(UnOp::Neg, Box::new(i)),
                        CType::LONG,
                    ));
                }
                let ty = p.ty.clone();
                Expr::new(
                    ExprKind::Binary(BinOp::PtrAdd, Box::new(p), Box::new(i)),
                    ty,
                )
            }
            _ => Expr::fresh(FallbackKind::UnsupportedExpr, CType::LONG),
        }
    }

    /// `-e`, `~e`, `!e`, `+e`, with the operand lowered by `operand` (program code or pure).
    fn unary_expression(&mut self, node: Node, operand: fn(&mut Self, Node) -> Expr) -> Expr {
        let op = node
            .child_by_field_name("operator")
            .map(|o| self.node_text(o))
            .unwrap_or("");
        let Some(arg) = node.child_by_field_name("argument") else {
            return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
        };
        let a = operand(self, arg);
        match op {
            "-" => self.unary(UnOp::Neg, a),
            "~" => self.unary(UnOp::BitNot, a),
            "!" => self.unary(UnOp::LogNot, a),
            _ => self.promote_expr(a), // unary plus
        }
    }

    fn unary(&mut self, op: UnOp, a: Expr) -> Expr {
        let a = self.rv(a);
        match op {
            UnOp::LogNot => {
                let c = self.as_condition(a);
                fold(Expr::new(
                    ExprKind::Unary(UnOp::LogNot, Box::new(c)),
                    CType::INT,
                ))
            }
            _ => match a.ty {
                CType::Int(_) => {
                    let a = self.promote_expr(a);
                    let ty = a.ty.clone();
                    fold(Expr::new(ExprKind::Unary(op, Box::new(a)), ty))
                }
                CType::Float(_) if op == UnOp::Neg => {
                    let ty = a.ty.clone();
                    Expr::new(ExprKind::Unary(op, Box::new(a)), ty)
                }
                _ => Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT),
            },
        }
    }

    // ----- expressions --------------------------------------------------------------------

    /// Lowers an expression without array/function decay (for `sizeof`, `&` and subscripts).
    pub(super) fn expr_raw(&mut self, node: Node) -> Expr {
        match node.kind() {
            "number_literal" => self.number_literal(node),
            "char_literal" => {
                let bytes = decode_literal(&self.text[node.byte_range()]);
                let text = self.node_text(node);
                let wide = text.starts_with('L') || text.starts_with('u') || text.starts_with('U');
                let v = if wide || bytes.len() > 1 {
                    // Multi-character and wide constants: GCC packs bytes big-endian.
                    bytes
                        .iter()
                        .fold(0i128, |acc, b| (acc << 8) | i128::from(*b))
                } else {
                    // Plain char is signed: '\xff' is -1.
                    i128::from(bytes.first().copied().unwrap_or(0) as i8)
                };
                Expr::int_const(v, IntKind::Int)
            }
            "string_literal" | "concatenated_string" => {
                let mut bytes = Vec::new();
                if node.kind() == "string_literal" {
                    bytes.extend(decode_literal(&self.text[node.byte_range()]));
                } else {
                    let mut c = node.walk();
                    for part in node.named_children(&mut c) {
                        if part.kind() == "string_literal" {
                            bytes.extend(decode_literal(&self.text[part.byte_range()]));
                        }
                    }
                }
                self.string_expr(bytes)
            }
            "true" => Expr::int_const(1, IntKind::Int),
            "false" => Expr::int_const(0, IntKind::Int),
            "null" => Expr::new(ExprKind::Const(0), CType::ptr_to(CType::Void)),
            "identifier" => self.identifier(node),
            "parenthesized_expression" => {
                let Some(inner) = node.named_child(0) else {
                    return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
                };
                if inner.kind() == "compound_statement" {
                    return self.statement_expression(inner);
                }
                self.expr_raw(inner)
            }
            "extension_expression" => match node.named_child(0) {
                Some(inner) => self.expr_raw(inner),
                None => Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT),
            },
            "binary_expression" => self.binary_expression(node),
            "unary_expression" => self.unary_expression(node, Self::expr),
            "pointer_expression" => {
                let op = node
                    .child_by_field_name("operator")
                    .map(|o| self.node_text(o))
                    .unwrap_or("");
                let Some(arg) = node.child_by_field_name("argument") else {
                    return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT);
                };
                if op == "&" {
                    return self.address_of(arg);
                }
                let p = self.expr(arg);
                self.deref(p)
            }
            "field_expression" | "subscript_expression" => {
                if let Some((ty, operand)) = self.misparsed_cast_postfix(node) {
                    let place = if node.kind() == "field_expression" {
                        self.field_place(node, operand)
                    } else {
                        self.subscript_place(node, operand)
                    };
                    let Some((lv, pty)) = place else {
                        return Expr::fresh(FallbackKind::UnsupportedExpr, ty);
                    };
                    let v = self.read_place(lv, pty);
                    let v = self.rv(v);
                    return fold(self.convert(v, &ty));
                }
                match self.lvalue(node) {
                    Some((lv, ty)) => self.read_place(lv, ty),
                    None => Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT),
                }
            }
            "assignment_expression" => self.assignment(node, true),
            "update_expression" => self.update(node, true),
            "call_expression" => self
                .call(node, true)
                .unwrap_or_else(|| Expr::new(ExprKind::Const(0), CType::Void)),
            "comma_expression" => {
                if let Some(l) = node.child_by_field_name("left") {
                    self.discard(l);
                }
                match node.child_by_field_name("right") {
                    Some(r) => self.expr_raw(r),
                    None => Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT),
                }
            }
            "conditional_expression" => self.conditional(node),
            "cast_expression" => {
                if self.cast_of_variable(node) {
                    // `(x)-y` with `x` a variable parses as a cast of `-y`; the shape of the tree
                    // around it is wrong too, so do not guess a meaning.
                    self.fatal(node, "ambiguous `(name)` cast of a variable");
                    return Expr::fresh(FallbackKind::UnsupportedExpr, CType::Unknown);
                }
                let ty = node
                    .child_by_field_name("type")
                    .map_or(CType::Unknown, |t| self.type_descriptor(t));
                let Some(v) = node.child_by_field_name("value") else {
                    return Expr::fresh(FallbackKind::UnsupportedExpr, ty);
                };
                if v.kind() == "call_expression"
                    && self.callee_name(v).as_deref() == Some("__cp_va_arg")
                {
                    // `__builtin_va_arg(ap, T)`, rewritten by the source preparation.
                    if let Some(args) = v.child_by_field_name("arguments") {
                        self.discard(args);
                    }
                    self.fallback(node, FallbackKind::VaArg, "va_arg value not modelled");
                    return Expr::fresh(FallbackKind::VaArg, ty);
                }
                let e = self.expr(v);
                if ty == CType::Unknown {
                    return Expr::fresh(FallbackKind::UnknownType, ty);
                }
                fold(self.convert(e, &ty))
            }
            "sizeof_expression" => self.sizeof(node),
            "alignof_expression" => {
                let ty = node
                    .child_by_field_name("type")
                    .map_or(CType::Unknown, |t| self.type_descriptor(t));
                match self.layout().align_of(&ty) {
                    Some(a) => Expr::int_const(i128::from(a), IntKind::ULong),
                    None => Expr::fresh(FallbackKind::UnknownType, CType::ULONG),
                }
            }
            "offsetof_expression" => self.offsetof(node),
            "compound_literal_expression" => self.compound_literal(node),
            "gnu_asm_expression" => {
                self.inline_asm(node);
                Expr::fresh(FallbackKind::InlineAsm, CType::INT)
            }
            "generic_expression" => {
                self.fallback(node, FallbackKind::UnsupportedExpr, "_Generic not modelled");
                Expr::fresh(FallbackKind::UnsupportedExpr, CType::Unknown)
            }
            _ => {
                self.fallback(
                    node,
                    FallbackKind::UnsupportedExpr,
                    "unsupported expression",
                );
                Expr::fresh(FallbackKind::UnsupportedExpr, CType::Unknown)
            }
        }
    }

    /// A cast whose "type" is a bare name that is a variable, not a type.
    fn cast_of_variable(&self, node: Node) -> bool {
        let Some(desc) = node.child_by_field_name("type") else {
            return false;
        };
        if desc.child_by_field_name("declarator").is_some() {
            return false;
        }
        desc.child_by_field_name("type").is_some_and(|t| {
            t.kind() == "type_identifier"
                && matches!(self.lookup(self.node_text(t)), Some(Symbol::Var(..)))
        })
    }

    fn string_expr(&mut self, mut bytes: Vec<u8>) -> Expr {
        bytes.push(0);
        let n = bytes.len() as u64;
        self.prog.strings.push(bytes);
        Expr::new(
            ExprKind::Str(self.prog.strings.len() as u32 - 1),
            CType::Array(Box::new(CType::Int(IntKind::Char)), Some(n)),
        )
    }

    fn number_literal(&mut self, node: Node) -> Expr {
        let text = self.node_text(node).replace('\'', "");
        // tree-sitter-c folds a leading minus into the literal in some positions.
        if let Some(rest) = text.strip_prefix('-') {
            let v = match parse_number(rest.trim_start()) {
                Some(Number::Int(v, k)) => Expr::int_const(v, k),
                Some(Number::Float(v, k)) => Expr::new(ExprKind::FloatConst(v), CType::Float(k)),
                None => return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT),
            };
            return self.unary(UnOp::Neg, v);
        }
        match parse_number(&text) {
            Some(Number::Int(v, k)) => Expr::int_const(v, k),
            Some(Number::Float(v, k)) => Expr::new(ExprKind::FloatConst(v), CType::Float(k)),
            None => {
                self.fallback(node, FallbackKind::UnsupportedExpr, "unreadable number");
                Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT)
            }
        }
    }

    fn identifier(&mut self, node: Node) -> Expr {
        let name = self.node_text(node);
        match self.lookup(name).cloned() {
            Some(Symbol::Var(v, ty)) => {
                if self.is_volatile(v) {
                    return Expr::fresh(FallbackKind::UnsupportedExpr, ty);
                }
                Expr::read(LValue::Var(v), ty)
            }
            Some(Symbol::EnumConst(v, ty)) => Expr::new(ExprKind::Const(v), ty),
            Some(Symbol::Func(f)) => {
                let ty = self
                    .funcs
                    .get(&f)
                    .map_or(CType::Unknown, |s| CType::Function(Box::new(s.ty.clone())));
                Expr::new(ExprKind::FuncAddr(f), ty)
            }
            Some(Symbol::Typedef(_)) | None => {
                if matches!(name, "__func__" | "__FUNCTION__" | "__PRETTY_FUNCTION__") {
                    let fname = self.fs.as_ref().map(|f| f.name.clone()).unwrap_or_default();
                    return self.string_expr(fname.into_bytes());
                }
                if let Some(f) = self.funcs.get(name) {
                    return Expr::new(
                        ExprKind::FuncAddr(name.to_string()),
                        CType::Function(Box::new(f.ty.clone())),
                    );
                }
                self.fallback(
                    node,
                    FallbackKind::UndeclaredIdentifier,
                    "undeclared identifier",
                );
                Expr::fresh(FallbackKind::UndeclaredIdentifier, CType::INT)
            }
        }
    }

    fn is_volatile(&self, v: VarRef) -> bool {
        match v {
            VarRef::Local(id) => self
                .fs
                .as_ref()
                .and_then(|f| f.locals.get(id.0 as usize))
                .is_some_and(|l| l.volatile),
            VarRef::Global(id) => self.prog.globals[id.0 as usize].volatile,
        }
    }

    fn read_place(&mut self, lv: LValue, ty: CType) -> Expr {
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

    fn deref(&mut self, p: Expr) -> Expr {
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

    fn address_of(&mut self, arg: Node) -> Expr {
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
    pub(super) fn lvalue(&mut self, node: Node) -> Option<(LValue, CType)> {
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
    fn field_place(&mut self, node: Node, arg: Node) -> Option<(LValue, CType)> {
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
    fn subscript_place(&mut self, node: Node, arg: Node) -> Option<(LValue, CType)> {
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
    fn misparsed_cast_postfix<'t>(&mut self, node: Node<'t>) -> Option<(CType, Node<'t>)> {
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
    fn spill_to_place(&mut self, node: Node) -> Option<(LValue, CType)> {
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
    fn find_field(&self, rid: RecordId, name: &str) -> Option<Vec<(RecordId, u32)>> {
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

    pub(super) fn new_temp(&mut self, ty: CType) -> LocalId {
        self.new_local("tmp", ty, false)
    }

    /// When a later operand has side effects, C does not say whether this operand is read
    /// before or after them; we read it before, into a temporary, as a left-to-right compiler
    /// would.
    fn spill_if_later_effects(&mut self, e: Expr, later: Node) -> Expr {
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

    fn binary_expression(&mut self, node: Node) -> Expr {
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
    pub(super) fn misparsed_cast_type(&mut self, node: Node) -> Option<CType> {
        if node.kind() != "parenthesized_expression" || node.named_child_count() != 1 {
            return None;
        }
        let inner = node.named_child(0)?;
        if inner.kind() != "identifier" {
            return None;
        }
        self.typedef_type(self.node_text(inner))
    }

    /// Rebuilds `(T) op R` as C reads it: the cast and the unary `op` apply to the leftmost
    /// operand of `R`, and `R`'s own (tighter) binary operators apply after.
    fn misparsed_cast(&mut self, ty: CType, op: &str, right: Node) -> Expr {
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
    fn logical_value(&mut self, node: Node) -> Expr {
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
    fn in_function_code(&self) -> bool {
        self.fs
            .as_ref()
            .is_some_and(|f| !f.blocks.is_empty() && !f.const_context)
    }

    /// `c ? a : b` for its value, through branches (GNU `c ?: b` evaluates `c` once).
    fn conditional(&mut self, node: Node) -> Expr {
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

    fn spill_always(&mut self, e: Expr, loc: Loc) -> Expr {
        if e.as_const().is_some() {
            return e;
        }
        let ty = e.ty.clone();
        let t = self.new_temp(ty.clone());
        self.assign_local(t, e, loc);
        Expr::read(LValue::Var(VarRef::Local(t)), ty)
    }

    fn assign_temp(&mut self, t: Option<LocalId>, v: Expr, ty: &CType, loc: Loc) {
        if let Some(t) = t {
            let v = self.convert(v, ty);
            self.assign_local(t, v, loc);
        }
    }

    /// Lowers a side-effect-free expression keeping `&&`, `||` and `?:` as operators: label
    /// predicates and file-scope constants. The caller checked that there are no side effects.
    pub(super) fn pure_expr(&mut self, node: Node) -> Expr {
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

    fn assignment(&mut self, node: Node, want_value: bool) -> Expr {
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

    fn update(&mut self, node: Node, want_value: bool) -> Expr {
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
    pub(super) fn discard(&mut self, node: Node) {
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

    pub(super) fn callee_name(&self, call: Node) -> Option<String> {
        let f = call.child_by_field_name("function")?;
        (f.kind() == "identifier").then(|| self.node_text(f).to_string())
    }

    /// Lowers a call; returns its value when `want_value` and the callee returns one.
    pub(super) fn call(&mut self, node: Node, want_value: bool) -> Option<Expr> {
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
                            super::FuncSym {
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
    fn builtin_call(&mut self, node: Node, name: &str, args: &[Node]) -> Option<Option<Expr>> {
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

    fn sizeof(&mut self, node: Node) -> Expr {
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

    fn offsetof(&mut self, node: Node) -> Expr {
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

    fn compound_literal(&mut self, node: Node) -> Expr {
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
    pub(super) fn statement_expression(&mut self, block: Node) -> Expr {
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
    pub(super) fn inline_asm(&mut self, node: Node) {
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

fn binop_of(op: &str) -> Option<BinOp> {
    Some(match op {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Rem,
        "<<" => BinOp::Shl,
        ">>" => BinOp::Shr,
        "&" => BinOp::BitAnd,
        "|" => BinOp::BitOr,
        "^" => BinOp::BitXor,
        "<" => BinOp::Lt,
        "<=" => BinOp::Le,
        ">" => BinOp::Gt,
        ">=" => BinOp::Ge,
        "==" => BinOp::Eq,
        "!=" => BinOp::Ne,
        "&&" => BinOp::LogAnd,
        "||" => BinOp::LogOr,
        _ => return None,
    })
}

/// Folds an operation on constants into a constant.
pub(super) fn fold(e: Expr) -> Expr {
    match &e.kind {
        ExprKind::Unary(..) | ExprKind::Binary(..) | ExprKind::Cast(..) | ExprKind::Cond(..) => {
            match (consteval::eval(&e), &e.ty) {
                (Some(v), CType::Int(k)) => Expr::int_const(v, *k),
                _ => e,
            }
        }
        _ => e,
    }
}
