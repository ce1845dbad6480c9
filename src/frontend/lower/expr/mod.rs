//! Lowering of C expressions: typing with explicit conversions, and hoisting of side effects,
//! calls, `&&`, `||` and `?:` into statements and branches.

mod calls;
mod hoist;
mod places;

use tree_sitter::Node;

use super::{Lowerer, Symbol};
use crate::frontend::literals::{decode_literal, parse_number, Number};
use crate::frontend::syntax::has_effects;
use crate::ir::consteval;
use crate::ir::types::{conditional_type, float_common, promote, usual_arithmetic};
use crate::ir::*;

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

    /// Lowers an expression without array/function decay (for `sizeof`, `&` and subscripts),
    /// recording its type.
    pub(super) fn expr_raw(&mut self, node: Node) -> Expr {
        let e = self.expr_of_kind(node);
        self.typed(node, &e.ty);
        e
    }

    fn expr_of_kind(&mut self, node: Node) -> Expr {
        match node.kind() {
            "number_literal" => self.number_literal(node),
            "char_literal" => self.char_literal(node),
            "string_literal" | "concatenated_string" => self.string_literal(node),
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
            "cast_expression" => self.cast_expression(node),
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

    /// A character constant: `int`, multi-character and wide ones packed as GCC packs them.
    fn char_literal(&mut self, node: Node) -> Expr {
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

    /// A string literal, or adjacent ones concatenated.
    fn string_literal(&mut self, node: Node) -> Expr {
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

    /// `(T)v`: `v` converted to `T` (a `va_arg` value is fresh).
    fn cast_expression(&mut self, node: Node) -> Expr {
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
        if v.kind() == "call_expression" && self.callee_name(v).as_deref() == Some("__cp_va_arg") {
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
                Some(Number::Float(v, k)) => float_literal(v, k),
                None => return Expr::fresh(FallbackKind::UnsupportedExpr, CType::INT),
            };
            return self.unary(UnOp::Neg, v);
        }
        match parse_number(&text) {
            Some(Number::Int(v, k)) => Expr::int_const(v, k),
            Some(Number::Float(v, k)) => float_literal(v, k),
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

/// A floating literal, or a fresh value of its type where its value was not read.
fn float_literal(v: Option<f64>, k: FloatKind) -> Expr {
    match v {
        Some(v) => Expr::new(ExprKind::FloatConst(v), CType::Float(k)),
        None => Expr::fresh(FallbackKind::UnsupportedExpr, CType::Float(k)),
    }
}
