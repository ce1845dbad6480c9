//! The expression trees that mutation and boundary criteria work on: C expressions as written,
//! with the little type knowledge needed to write mutants that still compile, and the guards
//! that keep a label's evaluation from trapping.

/// What the annotator knows of an expression's type. `Unknown` makes criteria skip mutants
/// that would not compile for some types (e.g. `p + 1` → `p * 1` on a pointer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Int,
    Float,
    Pointer,
    /// Structures, arrays, functions: no arithmetic mutant applies.
    Other,
    Unknown,
}

impl Ty {
    pub fn is_arith(self) -> bool {
        matches!(self, Ty::Int | Ty::Float)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
}

impl BinOp {
    /// Whether `l op r` may trap by itself, its operands aside (C's one rule, which the
    /// annotator's checks on syntax call too): `/` and `%` unless the divisor is a positive
    /// integer literal, any shift, and `+`, `-`, `*` (a signed overflow, pointer arithmetic out
    /// of its object) unless both operands are literals or the operation is on floating values.
    pub fn may_trap(self, both_literal: bool, by_positive_literal: bool, float: bool) -> bool {
        match self {
            BinOp::Div | BinOp::Mod => !by_positive_literal,
            BinOp::Shl | BinOp::Shr => true,
            BinOp::Add | BinOp::Sub | BinOp::Mul => !float && !both_literal,
            _ => false,
        }
    }

    pub fn from_c(op: &str) -> Option<BinOp> {
        Some(match op {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            "%" => BinOp::Mod,
            "<<" => BinOp::Shl,
            ">>" => BinOp::Shr,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "==" => BinOp::Eq,
            "!=" => BinOp::Ne,
            "&&" => BinOp::And,
            "||" => BinOp::Or,
            "&" => BinOp::BitAnd,
            "|" => BinOp::BitOr,
            "^" => BinOp::BitXor,
            _ => return None,
        })
    }

    pub fn c(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
        }
    }

    pub fn is_relational(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        )
    }

    pub fn is_arith(self) -> bool {
        matches!(
            self,
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Plus,
    Not,
    BitNot,
}

impl UnOp {
    pub fn c(self) -> &'static str {
        match self {
            UnOp::Neg => "-",
            UnOp::Plus => "+",
            UnOp::Not => "!",
            UnOp::BitNot => "~",
        }
    }
}

/// A comparison `A op B` found in an expression, with the condition under which the program
/// evaluates it (None: whenever the expression is evaluated).
pub type Comparison<'a> = (&'a Expr, BinOp, &'a Expr, Option<String>);

/// Where an operator is written in the source: the byte range of its token (`+`, `+=`, `++`);
/// None for an operator the normal form adds. Where it is written does not change what an
/// expression means: any two compare equal.
#[derive(Clone, Copy, Debug, Default)]
pub struct Written(pub Option<(usize, usize)>);

impl PartialEq for Written {
    fn eq(&self, _: &Written) -> bool {
        true
    }
}

impl Eq for Written {}

/// A side-effect-free C expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    Bin(BinOp, Box<Expr>, Box<Expr>, Written),
    Un(UnOp, Box<Expr>),
    /// A variable, field, array cell or dereference; `inner` are the expressions it reads to
    /// find the object (indices), which mutation visits too.
    Lval {
        text: String,
        ty: Ty,
        inner: Vec<Expr>,
    },
    /// A literal constant.
    Const {
        text: String,
        ty: Ty,
    },
    /// Text around one expression: `( e )`, or a cast `(T) e` with the cast's type.
    Wrap {
        pre: String,
        e: Box<Expr>,
        post: String,
        ty: Option<Ty>,
    },
    /// `c ? a : b`: the program evaluates `a` only where `c` holds and `b` only where it
    /// does not.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Anything else, kept as text (`sizeof`, `&x`, ...); `guards` are the conditions under
    /// which evaluating it cannot trap.
    Opaque {
        text: String,
        ty: Ty,
        guards: Vec<String>,
    },
}

impl Expr {
    pub fn lval(text: &str, ty: Ty) -> Expr {
        Expr::Lval {
            text: text.to_string(),
            ty,
            inner: Vec::new(),
        }
    }

    pub fn int(text: &str) -> Expr {
        Expr::Const {
            text: text.to_string(),
            ty: Ty::Int,
        }
    }

    pub fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::Bin(op, Box::new(l), Box::new(r), Written::default())
    }

    /// `l op r` with its operator's token at `at` in the source.
    pub fn bin_at(op: BinOp, l: Expr, r: Expr, at: (usize, usize)) -> Expr {
        Expr::Bin(op, Box::new(l), Box::new(r), Written(Some(at)))
    }

    /// Every operator position in the tree, to move them with the text they point into (or
    /// forget them, for a tree of text that is not the file's).
    pub fn positions_mut(&mut self, f: &mut dyn FnMut(&mut Written)) {
        match self {
            Expr::Bin(_, l, r, at) => {
                f(at);
                l.positions_mut(f);
                r.positions_mut(f);
            }
            Expr::Un(_, e) | Expr::Wrap { e, .. } => e.positions_mut(f),
            Expr::Cond(c, a, b) => {
                c.positions_mut(f);
                a.positions_mut(f);
                b.positions_mut(f);
            }
            Expr::Lval { inner, .. } => inner.iter_mut().for_each(|e| e.positions_mut(f)),
            Expr::Const { .. } | Expr::Opaque { .. } => {}
        }
    }

    /// Evaluating it could trap in some state: it dereferences, indexes, divides by anything
    /// but a positive integer literal, shifts, adds, subtracts, multiplies or negates
    /// anything but floating values or literals (a signed overflow, pointer arithmetic out of
    /// its object), or is opaque text.
    pub fn may_trap(&self) -> bool {
        let literal = |e: &Expr| matches!(e, Expr::Const { .. });
        match self {
            Expr::Bin(op, l, r, _) => {
                let by_literal =
                    matches!(&**r, Expr::Const { text, .. } if is_positive_int_literal(text));
                let op_traps =
                    op.may_trap(literal(l) && literal(r), by_literal, self.ty() == Ty::Float);
                op_traps || l.may_trap() || r.may_trap()
            }
            Expr::Un(UnOp::Neg, e) => (e.ty() != Ty::Float && !literal(e)) || e.may_trap(),
            Expr::Un(_, e) | Expr::Wrap { e, .. } => e.may_trap(),
            Expr::Lval { text, inner, .. } => {
                !inner.is_empty() || text.contains("->") || text.contains('*') || text.contains('[')
            }
            Expr::Const { .. } => false,
            Expr::Cond(c, a, b) => c.may_trap() || a.may_trap() || b.may_trap(),
            Expr::Opaque { .. } => true,
        }
    }

    pub fn ty(&self) -> Ty {
        match self {
            Expr::Bin(op, l, r, _) => {
                let (a, b) = (l.ty(), r.ty());
                match op {
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => match (a, b) {
                        (Ty::Int, Ty::Int) => Ty::Int,
                        (Ty::Float, t) | (t, Ty::Float) if t.is_arith() => Ty::Float,
                        (Ty::Pointer, Ty::Pointer) if *op == BinOp::Sub => Ty::Int,
                        (Ty::Pointer, Ty::Int) | (Ty::Int, Ty::Pointer) => Ty::Pointer,
                        _ => Ty::Unknown,
                    },
                    _ => Ty::Int,
                }
            }
            Expr::Un(op, e) => match op {
                UnOp::Neg | UnOp::Plus => e.ty(),
                _ => Ty::Int,
            },
            Expr::Lval { ty, .. } | Expr::Const { ty, .. } | Expr::Opaque { ty, .. } => *ty,
            Expr::Wrap { e, ty, .. } => ty.unwrap_or_else(|| e.ty()),
            Expr::Cond(_, a, b) => match (a.ty(), b.ty()) {
                (x, y) if x == y => x,
                (Ty::Float, t) | (t, Ty::Float) if t.is_arith() => Ty::Float,
                _ => Ty::Unknown,
            },
        }
    }

    /// The expression as C text (operators re-spelled, operands parenthesised where needed).
    pub fn text(&self) -> String {
        match self {
            Expr::Bin(op, l, r, _) => format!("{} {} {}", l.operand(), op.c(), r.operand()),
            Expr::Un(op, e) => format!("{}{}", op.c(), e.operand()),
            Expr::Lval { text, .. } | Expr::Const { text, .. } => text.clone(),
            Expr::Wrap { pre, e, post, .. } => format!("{pre}{}{post}", e.text()),
            Expr::Opaque { text, .. } => text.clone(),
            Expr::Cond(c, a, b) => format!("{} ? {} : {}", c.operand(), a.operand(), b.operand()),
        }
    }

    /// The text as an operand of an operator.
    pub fn operand(&self) -> String {
        match self {
            // An implicit conversion has no text of its own.
            Expr::Wrap { pre, post, e, .. } if pre.is_empty() && post.is_empty() => e.operand(),
            Expr::Lval { .. } | Expr::Wrap { .. } => self.text(),
            Expr::Const { text, .. } if !text.starts_with('-') => self.text(),
            _ => format!("({})", self.text()),
        }
    }

    /// The expression under its implicit conversions (which have no text).
    pub fn without_conversion(&self) -> &Expr {
        match self {
            Expr::Wrap { pre, post, e, .. } if pre.is_empty() && post.is_empty() => {
                e.without_conversion()
            }
            e => e,
        }
    }

    /// The value of an integer literal, if this is one (decimal, hex or octal, any suffix).
    pub fn int_value(&self) -> Option<i128> {
        let Expr::Const { text, ty: Ty::Int } = self.without_conversion() else {
            return None;
        };
        let t = text.trim_end_matches(['u', 'U', 'l', 'L']);
        if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            i128::from_str_radix(h, 16).ok()
        } else if t.len() > 1 && t.starts_with('0') {
            i128::from_str_radix(&t[1..], 8).ok()
        } else {
            t.parse().ok()
        }
    }

    /// Conditions under which evaluating the expression cannot trap, inner ones first: the
    /// divisor of each `/` and `%` is not zero, and each shift count is in range.
    pub fn guards(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_guards(&mut out);
        out
    }

    fn collect_guards(&self, out: &mut Vec<String>) {
        match self {
            Expr::Bin(op, l, r, _) => {
                l.collect_guards(out);
                r.collect_guards(out);
                let g = match op {
                    BinOp::Div | BinOp::Mod if r.int_value().is_none_or(|v| v == 0) => {
                        Some(format!("{} != 0", r.operand()))
                    }
                    BinOp::Shl | BinOp::Shr
                        if r.int_value().is_none_or(|v| !(0..32).contains(&v)) =>
                    {
                        Some(format!(
                            "{c} >= 0 && {c} < 8 * (int)sizeof(+{l})",
                            c = r.operand(),
                            l = l.operand()
                        ))
                    }
                    _ => None,
                };
                if let Some(g) = g {
                    if !out.contains(&g) {
                        out.push(g);
                    }
                }
            }
            Expr::Un(_, e) | Expr::Wrap { e, .. } => e.collect_guards(out),
            Expr::Lval { inner, .. } => inner.iter().for_each(|e| e.collect_guards(out)),
            Expr::Opaque { guards, .. } => {
                for g in guards {
                    if !out.contains(g) {
                        out.push(g.clone());
                    }
                }
            }
            Expr::Const { .. } => {}
            // A branch traps only where the program takes it.
            Expr::Cond(c, a, b) => {
                c.collect_guards(out);
                let cond = c.text();
                for (branch, taken) in [(a, format!("!({cond})")), (b, format!("({cond})"))] {
                    for g in branch.guards() {
                        let g = format!("{taken} || ({g})");
                        if !out.contains(&g) {
                            out.push(g);
                        }
                    }
                }
            }
        }
    }

    /// Relational comparisons `A op B` in the expression, left to right.
    pub fn comparisons(&self) -> Vec<(&Expr, BinOp, &Expr)> {
        let mut out = Vec::new();
        self.collect_comparisons(&mut out);
        out
    }

    fn collect_comparisons<'a>(&'a self, out: &mut Vec<(&'a Expr, BinOp, &'a Expr)>) {
        let mut with = Vec::new();
        self.collect_in_context(None, &mut with);
        out.extend(with.into_iter().map(|(a, op, b, _)| (a, op, b)));
    }

    /// Relational comparisons, left to right, each with the condition under which the
    /// program evaluates it (the right operands of `&&`/`||` it sits in), if any.
    pub fn comparisons_in_context(&self) -> Vec<Comparison<'_>> {
        let mut out = Vec::new();
        self.collect_in_context(None, &mut out);
        out
    }

    fn collect_in_context<'a>(&'a self, ctx: Option<&str>, out: &mut Vec<Comparison<'a>>) {
        match self {
            Expr::Bin(op @ (BinOp::And | BinOp::Or), l, r, _) => {
                l.collect_in_context(ctx, out);
                let left = if *op == BinOp::And {
                    format!("({})", l.text())
                } else {
                    format!("!({})", l.text())
                };
                let inner = match ctx {
                    Some(c) => format!("{c} && {left}"),
                    None => left,
                };
                r.collect_in_context(Some(&inner), out);
            }
            Expr::Bin(op, l, r, _) => {
                if op.is_relational() {
                    out.push((l, *op, r, ctx.map(str::to_string)));
                }
                l.collect_in_context(ctx, out);
                r.collect_in_context(ctx, out);
            }
            Expr::Un(_, e) | Expr::Wrap { e, .. } => e.collect_in_context(ctx, out),
            Expr::Lval { inner, .. } => inner.iter().for_each(|e| e.collect_in_context(ctx, out)),
            Expr::Cond(c, a, b) => {
                c.collect_in_context(ctx, out);
                let cond = c.text();
                for (branch, taken) in [(a, format!("({cond})")), (b, format!("!({cond})"))] {
                    let inner = match ctx {
                        Some(g) => format!("{g} && {taken}"),
                        None => taken,
                    };
                    branch.collect_in_context(Some(&inner), out);
                }
            }
            Expr::Const { .. } | Expr::Opaque { .. } => {}
        }
    }
}

/// `g1 && g2 && (p)`, or `p` without guards.
pub fn guarded(guards: &[String], p: &str) -> String {
    if guards.is_empty() {
        p.to_string()
    } else {
        format!("{} && ({p})", guards.join(" && "))
    }
}

/// An integer literal of C (decimal, octal or hexadecimal, any suffix) whose value is not 0:
/// dividing by it cannot trap, since a literal is never negative.
pub fn is_positive_int_literal(text: &str) -> bool {
    let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
    let (body, radix) = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => (hex, 16),
        None => (digits, 10),
    };
    !body.is_empty() && body.chars().all(|c| c.is_digit(radix)) && body.chars().any(|c| c != '0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dividing_by_a_positive_literal_cannot_trap() {
        for t in ["4", "100u", "0x10", "07", "1UL"] {
            assert!(is_positive_int_literal(t), "{t}");
        }
        for t in ["0", "0x0", "00", "0u", "1.5", "x", "", "0x"] {
            assert!(!is_positive_int_literal(t), "{t}");
        }
        let by = |op, r: &str| Expr::bin(op, Expr::lval("x", Ty::Int), Expr::int(r));
        assert!(!by(BinOp::Mod, "100").may_trap());
        assert!(!by(BinOp::Div, "4").may_trap());
        assert!(by(BinOp::Div, "0").may_trap());
        assert!(by(BinOp::Div, "y").may_trap());
        assert!(by(BinOp::Shl, "1").may_trap());
    }

    #[test]
    fn text_parenthesises_nested_operators() {
        let e = Expr::bin(
            BinOp::Add,
            Expr::lval("s", Ty::Int),
            Expr::bin(
                BinOp::Mul,
                Expr::lval("x", Ty::Int),
                Expr::lval("i", Ty::Int),
            ),
        );
        assert_eq!(e.text(), "s + (x * i)");
        assert_eq!(e.ty(), Ty::Int);
    }

    #[test]
    fn divisions_and_shifts_are_guarded() {
        let e = Expr::bin(
            BinOp::Div,
            Expr::lval("a", Ty::Int),
            Expr::bin(
                BinOp::Shl,
                Expr::lval("b", Ty::Int),
                Expr::lval("k", Ty::Int),
            ),
        );
        assert_eq!(
            e.guards(),
            vec![
                "k >= 0 && k < 8 * (int)sizeof(+b)".to_string(),
                "(b << k) != 0".to_string()
            ]
        );
        let by_constant = Expr::bin(BinOp::Div, Expr::lval("a", Ty::Int), Expr::int("2"));
        assert!(by_constant.guards().is_empty());
    }

    #[test]
    fn pointer_arithmetic_is_typed() {
        let p = Expr::bin(BinOp::Add, Expr::lval("p", Ty::Pointer), Expr::int("1"));
        assert_eq!(p.ty(), Ty::Pointer);
        let d = Expr::bin(
            BinOp::Sub,
            Expr::lval("p", Ty::Pointer),
            Expr::lval("q", Ty::Pointer),
        );
        assert_eq!(d.ty(), Ty::Int);
    }
}
