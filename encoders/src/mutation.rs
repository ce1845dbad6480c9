//! The mutation engine shared by WM and WM-S: walks an expression in LAnnotate's visitor order
//! (a node's own mutants, then its operands left to right) and writes one weak-mutation label
//! per mutant, `(mutant) != (original)`, guarded so that evaluating it cannot trap.

use crate::expr::{guarded, BinOp, Expr, Ty, UnOp};
use crate::{LabelSpec, Replacement};

/// Mutation operator groups. The first four are LAnnotate's; the rest complete the
/// "sufficient" set used by WM-S.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mutator {
    /// Arithmetic operator replacement (and `-e` → `e`, `<<` ↔ `>>`).
    Aor,
    /// Relational operator replacement.
    Ror,
    /// Logical connector replacement (`&&` ↔ `||`).
    Cor,
    /// Absolute value insertion: the kill condition `x < 0` of each arithmetic lvalue.
    Abs,
    /// Unary operator insertion: `-x`, `!x`, `~x` for each arithmetic lvalue.
    Uoi,
    /// Operand deletion: `a op b` → `a`, `b`.
    Odl,
    /// Constant replacement: `c` → `c + 1`, `c - 1`, `0`.
    Crp,
    /// Bitwise connector replacement (`&`, `|`, `^`).
    Lcr,
}

impl Mutator {
    pub const ALL: &'static [Mutator] = &[
        Mutator::Aor,
        Mutator::Ror,
        Mutator::Cor,
        Mutator::Abs,
        Mutator::Uoi,
        Mutator::Odl,
        Mutator::Crp,
        Mutator::Lcr,
    ];
    /// LAnnotate's WM groups.
    pub const LANNOTATE: &'static [Mutator] =
        &[Mutator::Aor, Mutator::Ror, Mutator::Cor, Mutator::Abs];

    pub fn name(self) -> &'static str {
        match self {
            Mutator::Aor => "AOR",
            Mutator::Ror => "ROR",
            Mutator::Cor => "COR",
            Mutator::Abs => "ABS",
            Mutator::Uoi => "UOI",
            Mutator::Odl => "ODL",
            Mutator::Crp => "CRP",
            Mutator::Lcr => "LCR",
        }
    }

    pub fn from_name(s: &str) -> Option<Mutator> {
        Mutator::ALL
            .iter()
            .copied()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// Which operator table applies: LAnnotate's (WM) or the sufficient set (WM-S).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    LAnnotate,
    Sufficient,
}

/// Arithmetic replacements of LAnnotate's table (`l_wm.ml`): each operator's three others.
fn aor_lannotate(op: BinOp) -> &'static [BinOp] {
    use BinOp::*;
    match op {
        Div => &[Mul, Add, Sub],
        Mul => &[Div, Add, Sub],
        Add => &[Mul, Div, Sub],
        Sub => &[Mul, Div, Add],
        Shl => &[Shr],
        Shr => &[Shl],
        _ => &[],
    }
}

fn ror_lannotate(op: BinOp) -> &'static [BinOp] {
    use BinOp::*;
    match op {
        Lt => &[Le, Gt, Ge],
        Gt => &[Lt, Le, Ge],
        Le => &[Lt, Gt, Ge],
        Ge => &[Lt, Le, Gt],
        Eq => &[Ne],
        Ne => &[Eq],
        _ => &[],
    }
}

const RELATIONAL: [BinOp; 6] = [
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::Eq,
    BinOp::Ne,
];

/// Weak-mutation labels of one expression, tagged `"{criterion} {GROUP}"`.
pub fn labels(e: &Expr, flavor: Flavor, enabled: &[Mutator], criterion: &str) -> Vec<LabelSpec> {
    let mut out = Vec::new();
    visit(e, flavor, enabled, criterion, None, &mut out);
    out
}

/// `(g) && (p)`: a label of a node that could trap and that the program evaluates only under
/// `g` (the right operand of `&&`/`||`): its label must not read what the program does not
/// (`p->f` in `p && p->f > 0`).
fn under(ctx: Option<&str>, p: String) -> String {
    match ctx {
        Some(g) => format!("({g}) && ({p})"),
        None => p,
    }
}

/// The mutant's text, an integer `+`, `-`, `*` or negation of its own computed modulo 2^64
/// and converted back to its type: the program does not compute the mutant, so the label must
/// not overflow where the program does not (the value is the one the wrapped operation gives).
/// The type is written `__typeof__(0 + e)`, which no parser can read as a type name.
fn mutant_text(m: &Expr) -> String {
    let literal = |e: &Expr| matches!(e, Expr::Const { .. });
    match m {
        // Multiplying by 0 or 1, adding 0 or subtracting 0 cannot overflow.
        Expr::Bin(BinOp::Mul, l, r, _)
            if [l, r].iter().any(|e| matches!(e.int_value(), Some(0 | 1))) =>
        {
            m.text()
        }
        Expr::Bin(BinOp::Add, l, r, _) if [l, r].iter().any(|e| e.int_value() == Some(0)) => {
            m.text()
        }
        Expr::Bin(BinOp::Sub, _, r, _) if r.int_value() == Some(0) => m.text(),
        Expr::Bin(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), l, r, _)
            if m.ty() == Ty::Int && !(literal(l) && literal(r)) =>
        {
            let (l, r, o) = (l.text(), r.text(), op.c());
            format!(
                "(__typeof__(0 + ({l}) {o} ({r})))((unsigned long long)({l}) {o} (unsigned long long)({r}))"
            )
        }
        Expr::Un(UnOp::Neg, e) if e.ty() == Ty::Int && !literal(e) => {
            let e = e.text();
            format!("(__typeof__(0 + -({e})))(0ULL - (unsigned long long)({e}))")
        }
        _ => m.text(),
    }
}

/// The label for one mutant of `orig`: guarded by what both sides need not to trap.
fn kill(mutant: &Expr, orig: &Expr, group: Mutator, criterion: &str) -> LabelSpec {
    let mut guards = orig.guards();
    for g in mutant.guards() {
        if !guards.contains(&g) {
            guards.push(g);
        }
    }
    let p = format!("({}) != ({})", mutant_text(mutant), orig.text());
    let mut label = LabelSpec::new(
        guarded(&guards, &p),
        &format!("{criterion} {}", group.name()),
    );
    if let (Expr::Bin(from, _, _, at), Expr::Bin(to, _, _, _)) = (orig, mutant) {
        if from != to {
            label.replacement = Some(Replacement {
                from: *from,
                to: *to,
                at: at.0,
            });
        }
    }
    label
}

fn visit(
    e: &Expr,
    flavor: Flavor,
    on: &[Mutator],
    crit: &str,
    ctx: Option<&str>,
    out: &mut Vec<LabelSpec>,
) {
    let start = out.len();
    visit_node(e, flavor, on, crit, out);
    // A mutant of `l && r` or `l || r` itself (`l || r`, `r` alone) may evaluate `r` where
    // the program does not: if `r` could trap, its labels hold only where the program
    // evaluates `r`. That condition reads `l`, so it goes inside the context's (`p &&
    // (!(p->a) && ...)`, never `!(p->a) && (p && ...)`).
    if let Expr::Bin(op @ (BinOp::And | BinOp::Or), l, r, _) = e {
        if r.may_trap() {
            let left = if *op == BinOp::And {
                l.text()
            } else {
                format!("!({})", l.text())
            };
            for lab in &mut out[start..] {
                lab.predicate = under(Some(&left), std::mem::take(&mut lab.predicate));
            }
        }
    }
    // Where the node cannot trap, its labels keep LAnnotate's meaning (read on every
    // arrival); where it can, only where the program evaluates it.
    if e.may_trap() {
        for l in &mut out[start..] {
            l.predicate = under(ctx, std::mem::take(&mut l.predicate));
        }
    }
    match e {
        Expr::Bin(op @ (BinOp::And | BinOp::Or), l, r, _) => {
            visit(l, flavor, on, crit, ctx, out);
            let left = if *op == BinOp::And {
                l.text()
            } else {
                format!("!({})", l.text())
            };
            let inner = under(ctx, left);
            visit(r, flavor, on, crit, Some(&inner), out);
        }
        Expr::Bin(_, l, r, _) => {
            visit(l, flavor, on, crit, ctx, out);
            visit(r, flavor, on, crit, ctx, out);
        }
        // LAnnotate's visitor stops at a cast (`(double)k` gives nothing), but not at one of
        // a conditional: CIL computes `c ? a : b` into a temporary first and converts that.
        Expr::Wrap {
            ty: Some(_),
            e: inner,
            ..
        } if flavor == Flavor::LAnnotate && !matches!(**inner, Expr::Cond(..)) => {}
        Expr::Un(_, inner) | Expr::Wrap { e: inner, .. } => {
            visit(inner, flavor, on, crit, ctx, out)
        }
        // Frama-C turns `c ? a : b` into `if (c) tmp = a; else tmp = b;`: the labels of a
        // branch are reached only where the program takes it.
        Expr::Cond(c, a, b) => {
            visit(c, flavor, on, crit, ctx, out);
            let cond = c.text();
            for (branch, taken) in [(a, format!("({cond})")), (b, format!("!({cond})"))] {
                let guard = under(ctx, taken);
                let from = out.len();
                visit(branch, flavor, on, crit, None, out);
                for l in &mut out[from..] {
                    l.predicate = under(Some(&guard), std::mem::take(&mut l.predicate));
                }
            }
        }
        // LAnnotate's visitor stops at an lvalue (`a[i + 1]` gives only `a[i + 1] < 0`);
        // the sufficient set also mutates what the lvalue's address reads.
        Expr::Lval { inner, .. } if flavor == Flavor::Sufficient => {
            for i in inner {
                visit(i, flavor, on, crit, ctx, out);
            }
        }
        _ => {}
    }
}

/// The labels of the mutants of `e` itself (not of its operands).
fn visit_node(e: &Expr, flavor: Flavor, on: &[Mutator], crit: &str, out: &mut Vec<LabelSpec>) {
    match e {
        Expr::Bin(op, l, r, _) => binary_mutants(e, (*op, l, r), flavor, on, crit, out),
        Expr::Un(op, inner) => {
            if on.contains(&Mutator::Aor) && *op == UnOp::Neg && inner.ty().is_arith() {
                out.push(kill(inner, e, Mutator::Aor, crit));
            }
        }
        Expr::Lval { ty, text, .. } => lval_mutants(e, (*ty, text), flavor, on, crit, out),
        Expr::Wrap { .. } | Expr::Cond(..) => {}
        Expr::Const { .. } | Expr::Opaque { .. } => {}
    }
}

/// The mutants of the binary operation `e`, `l op r`: its operator replaced (COR, AOR, ROR,
/// LCR), an operand deleted (ODL), a constant operand replaced (CRP).
fn binary_mutants(
    e: &Expr,
    (op, l, r): (BinOp, &Expr, &Expr),
    flavor: Flavor,
    on: &[Mutator],
    crit: &str,
    out: &mut Vec<LabelSpec>,
) {
    let op = &op;
    let full = flavor == Flavor::Sufficient;
    let (lt, rt) = (l.ty(), r.ty());
    let swap = |new: BinOp| Expr::bin(new, l.clone(), r.clone());
    // Replacing `+`/`-` needs arithmetic operands (pointer arithmetic stays as it is);
    // `*`, `/`, `%` and shifts only take arithmetic operands anyway.
    let arith_ok = lt.is_arith() && rt.is_arith()
        || matches!(op, BinOp::Mul | BinOp::Div | BinOp::Shl | BinOp::Shr);
    let ints = lt == Ty::Int && rt == Ty::Int;
    if on.contains(&Mutator::Cor) && matches!(op, BinOp::And | BinOp::Or) {
        let other = if *op == BinOp::And {
            BinOp::Or
        } else {
            BinOp::And
        };
        out.push(kill(&swap(other), e, Mutator::Cor, crit));
    }
    if on.contains(&Mutator::Aor)
        && arith_ok
        && (op.is_arith() || matches!(op, BinOp::Shl | BinOp::Shr))
    {
        let table: Vec<BinOp> = if full && op.is_arith() {
            [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Mod]
                .into_iter()
                .filter(|o| o != op && (*o != BinOp::Mod || ints))
                .collect()
        } else {
            aor_lannotate(*op).to_vec()
        };
        for new in table {
            out.push(kill(&swap(new), e, Mutator::Aor, crit));
        }
    }
    if on.contains(&Mutator::Ror) && op.is_relational() {
        ror_mutants(e, (*op, l, r), full, crit, out);
    }
    if full
        && on.contains(&Mutator::Lcr)
        && matches!(op, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor)
    {
        for new in [BinOp::BitAnd, BinOp::BitOr, BinOp::BitXor] {
            if new != *op {
                out.push(kill(&swap(new), e, Mutator::Lcr, crit));
            }
        }
    }
    if full && on.contains(&Mutator::Odl) {
        let deletable = (op.is_arith()
            || matches!(
                op,
                BinOp::And
                    | BinOp::Or
                    | BinOp::BitAnd
                    | BinOp::BitOr
                    | BinOp::BitXor
                    | BinOp::Shl
                    | BinOp::Shr
            ))
            && lt.is_arith()
            && rt.is_arith();
        if deletable {
            out.push(kill(l, e, Mutator::Odl, crit));
            out.push(kill(r, e, Mutator::Odl, crit));
        }
    }
    if full && on.contains(&Mutator::Crp) {
        crp_mutants(e, (*op, l, r), crit, out);
    }
}

/// ROR's mutants of the comparison `e`, `l op r`: every other relational operator
/// (LAnnotate's table unless `full`).
fn ror_mutants(
    e: &Expr,
    (op, l, r): (BinOp, &Expr, &Expr),
    full: bool,
    crit: &str,
    out: &mut Vec<LabelSpec>,
) {
    let op = &op;
    let (lt, rt) = (l.ty(), r.ty());
    let swap = |new: BinOp| Expr::bin(new, l.clone(), r.clone());
    let table: Vec<BinOp> = if full {
        RELATIONAL.into_iter().filter(|o| o != op).collect()
    } else {
        ror_lannotate(*op).to_vec()
    };
    // `p == q` compares a pointer with any pointer (`FILENAME == NULL`, NULL being
    // `(void *)0`); an ordered comparison needs compatible types. Its mutants
    // compare both as `char` pointers, the addresses they are.
    let pointers = matches!(op, BinOp::Eq | BinOp::Ne) && (lt == Ty::Pointer || rt == Ty::Pointer);
    let as_bytes = |e: &Expr| Expr::Wrap {
        pre: "(const volatile char *)(".into(),
        e: Box::new(e.clone()),
        post: ")".into(),
        ty: Some(Ty::Pointer),
    };
    for new in table {
        let mutant = if pointers && !matches!(new, BinOp::Eq | BinOp::Ne) {
            Expr::bin(new, as_bytes(l), as_bytes(r))
        } else {
            swap(new)
        };
        out.push(kill(&mutant, e, Mutator::Ror, crit));
    }
}

/// CRP's mutants of `e`, `l op r`: a constant operand `k` replaced by `k + 1`, `k - 1`, `0`.
fn crp_mutants(e: &Expr, (op, l, r): (BinOp, &Expr, &Expr), crit: &str, out: &mut Vec<LabelSpec>) {
    let op = &op;
    let (lt, rt) = (l.ty(), r.ty());
    for (side, c) in [(0, l), (1, r)] {
        // `p == 0` compares with the null pointer: `p == 1` is no C without a cast.
        // Only a constant compared with a number is replaced (an operand of a
        // type not known, such as a member function pointer, may be a pointer).
        let other = if side == 0 { rt } else { lt };
        if op.is_relational() && !other.is_arith() {
            continue;
        }
        let Some(v) = c.int_value() else { continue };
        let Expr::Const { text, .. } = c.without_conversion() else {
            continue;
        };
        let mut repl = vec![format!("({text} + 1)"), format!("({text} - 1)")];
        if v != 0 {
            repl.push("0".into());
        }
        for t in repl {
            let k = Expr::int(&t);
            let m = if side == 0 {
                Expr::bin(*op, k, r.clone())
            } else {
                Expr::bin(*op, l.clone(), k)
            };
            out.push(kill(&m, e, Mutator::Crp, crit));
        }
    }
}

/// The mutants of the lvalue `e` of class `ty`: ABS's `e < 0`, UOI's `-e`, `!e`, `~e`.
fn lval_mutants(
    e: &Expr,
    (ty, text): (Ty, &str),
    flavor: Flavor,
    on: &[Mutator],
    crit: &str,
    out: &mut Vec<LabelSpec>,
) {
    let full = flavor == Flavor::Sufficient;
    let ty = &ty;
    // LAnnotate writes `p < 0` for pointers too: false for every pointer (an ordered
    // comparison with the null pointer), and a warning under `-Wextra`. The label
    // is kept, written as the constant it is.
    let pointer = flavor == Flavor::LAnnotate && *ty == Ty::Pointer;
    if on.contains(&Mutator::Abs) && (ty.is_arith() || pointer) {
        out.push(LabelSpec::new(
            if pointer {
                "0".to_string()
            } else {
                format!("{text} < 0")
            },
            &format!("{crit} {}", Mutator::Abs.name()),
        ));
    }
    if full && on.contains(&Mutator::Uoi) && ty.is_arith() {
        let mut ops = vec![UnOp::Neg, UnOp::Not];
        if *ty == Ty::Int {
            ops.push(UnOp::BitNot);
        }
        for op in ops {
            out.push(kill(
                &Expr::Un(op, Box::new(e.clone())),
                e,
                Mutator::Uoi,
                crit,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(a: &str, b: &str) -> Expr {
        Expr::bin(BinOp::Le, Expr::lval(a, Ty::Int), Expr::int(b))
    }

    #[test]
    fn lannotate_order_on_a_comparison() {
        let l = labels(&le("a", "0"), Flavor::LAnnotate, Mutator::LANNOTATE, "WM");
        let got: Vec<(&str, &str)> = l
            .iter()
            .map(|l| (l.predicate.as_str(), l.tag.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("(a < 0) != (a <= 0)", "WM ROR"),
                ("(a > 0) != (a <= 0)", "WM ROR"),
                ("(a >= 0) != (a <= 0)", "WM ROR"),
                ("a < 0", "WM ABS"),
            ]
        );
    }

    #[test]
    fn division_mutants_are_guarded() {
        // s + x * i: the `/` mutant divides by `x * i`.
        let xi = Expr::bin(
            BinOp::Mul,
            Expr::lval("x", Ty::Int),
            Expr::lval("i", Ty::Int),
        );
        let e = Expr::bin(BinOp::Add, Expr::lval("s", Ty::Int), xi);
        let l = labels(&e, Flavor::LAnnotate, &[Mutator::Aor], "WM");
        assert_eq!(l.len(), 6);
        assert_eq!(
            l[1].predicate,
            "(x * i) != 0 && ((s / (x * i)) != (s + (x * i)))"
        );
    }

    #[test]
    fn a_mutant_inside_a_guarded_operand_reads_nothing_before_the_guard() {
        // p && (p->a != x || p->b != y): every label that reads through `p` tests `p` first.
        let ne =
            |f: &str, v: &str| Expr::bin(BinOp::Ne, Expr::lval(f, Ty::Int), Expr::lval(v, Ty::Int));
        let inner = Expr::bin(BinOp::Or, ne("p->a", "x"), ne("p->b", "y"));
        let e = Expr::bin(BinOp::And, Expr::lval("p", Ty::Pointer), inner);
        for flavor in [Flavor::LAnnotate, Flavor::Sufficient] {
            let l = labels(&e, flavor, Mutator::ALL, "WM");
            assert!(l.iter().any(|l| l.tag == "WM COR"));
            for l in l.iter().filter(|l| l.predicate.contains("p->")) {
                let t = l.predicate.trim_start_matches('(');
                assert!(
                    t.starts_with("p) && ") || t.starts_with("p && "),
                    "{} {}",
                    l.tag,
                    l.predicate
                );
            }
        }
    }

    #[test]
    fn pointer_arithmetic_is_not_mutated() {
        let e = Expr::bin(BinOp::Add, Expr::lval("p", Ty::Pointer), Expr::int("1"));
        // Only the constant may change (`p + 2` is still valid C).
        let l = labels(&e, Flavor::Sufficient, Mutator::ALL, "WM-S");
        assert!(l.iter().all(|l| l.tag == "WM-S CRP"), "{l:?}");
    }

    #[test]
    fn a_null_pointer_constant_is_not_replaced() {
        for ty in [Ty::Pointer, Ty::Unknown] {
            let e = Expr::bin(BinOp::Eq, Expr::lval("p", ty), Expr::int("0"));
            let l = labels(&e, Flavor::Sufficient, Mutator::ALL, "WM-S");
            assert!(l.iter().all(|l| l.tag != "WM-S CRP"), "{l:?}");
            assert!(l.iter().any(|l| l.tag == "WM-S ROR"), "{l:?}");
        }
        let e = Expr::bin(BinOp::Eq, Expr::lval("n", Ty::Int), Expr::int("0"));
        let l = labels(&e, Flavor::Sufficient, Mutator::ALL, "WM-S");
        assert!(l.iter().any(|l| l.tag == "WM-S CRP"), "{l:?}");
    }

    #[test]
    fn sufficient_set_on_an_increment() {
        // t + 1 (from `t = t + 1`): AOR 4, ODL 2, CRP 3 (2, 0 and 0 + 0 ... ), ABS 1, UOI 3.
        let e = Expr::bin(BinOp::Add, Expr::lval("t", Ty::Int), Expr::int("1"));
        let l = labels(&e, Flavor::Sufficient, Mutator::ALL, "WM-S");
        let count = |g: &str| l.iter().filter(|l| l.tag == format!("WM-S {g}")).count();
        assert_eq!(
            (
                count("AOR"),
                count("ODL"),
                count("CRP"),
                count("ABS"),
                count("UOI")
            ),
            (4, 2, 3, 1, 3)
        );
        // The mutant's own addition wraps: `t + 2` overflows where `t + 1` does not.
        assert!(l.iter().any(|l| l.predicate
            == "((__typeof__(0 + (t) + ((1 + 1))))((unsigned long long)(t) + (unsigned long long)((1 + 1)))) != (t + 1)"));
        assert!(l.iter().any(|l| l.predicate == "(t) != (t + 1)"));
    }
}
