//! Walks over what IR statements, terminators and functions mention: every expression they
//! evaluate (sub-expressions, and those inside places, included) and every place they read,
//! write or take the address of.

use super::{Callee, Expr, ExprKind, Function, LValue, Stmt, StmtKind, Terminator};

/// One thing a walk meets.
#[derive(Clone, Copy, Debug)]
pub enum Item<'a> {
    Expr(&'a Expr),
    /// A place (each level of a field/index chain is met), and whether only its address is
    /// taken (`&x`, an array decaying to a pointer) rather than the place read or written.
    Place {
        place: &'a LValue,
        address_only: bool,
    },
}

pub fn function<'a>(f: &'a Function, on: &mut impl FnMut(Item<'a>)) {
    for b in &f.blocks {
        for s in &b.stmts {
            stmt(s, on);
        }
        terminator(&b.term, on);
    }
}

pub fn stmt<'a>(s: &'a Stmt, on: &mut impl FnMut(Item<'a>)) {
    match &s.kind {
        StmtKind::Assign { dst, src } => {
            place(dst, false, on);
            expr(src, on);
        }
        StmtKind::Havoc { dst, .. } | StmtKind::ZeroInit { dst } => place(dst, false, on),
        StmtKind::Assume(e) | StmtKind::Label { pred: e, .. } => expr(e, on),
        StmtKind::Call { dst, callee, args } => {
            if let Some(d) = dst {
                place(d, false, on);
            }
            if let Callee::Indirect(e) = callee {
                expr(e, on);
            }
            for a in args {
                expr(a, on);
            }
        }
        // Marks for hyperlabel questions only, which make them statements before analysis.
        StmtKind::HavocMemory(_) | StmtKind::Sequence(_) => {}
    }
}

pub fn terminator<'a>(t: &'a Terminator, on: &mut impl FnMut(Item<'a>)) {
    match t {
        Terminator::Branch { cond: e, .. }
        | Terminator::Switch { scrutinee: e, .. }
        | Terminator::Return(Some(e)) => expr(e, on),
        Terminator::Goto(_)
        | Terminator::Return(None)
        | Terminator::NoReturn
        | Terminator::Unreachable => {}
    }
}

pub fn expr<'a>(e: &'a Expr, on: &mut impl FnMut(Item<'a>)) {
    on(Item::Expr(e));
    match &e.kind {
        ExprKind::Read(lv) => place(lv, false, on),
        ExprKind::AddrOf(lv) => place(lv, true, on),
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => expr(a, on),
        ExprKind::Binary(_, a, b) => {
            expr(a, on);
            expr(b, on);
        }
        ExprKind::Cond(c, a, b) => {
            expr(c, on);
            expr(a, on);
            expr(b, on);
        }
        ExprKind::Const(_)
        | ExprKind::FloatConst(_)
        | ExprKind::Str(_)
        | ExprKind::FuncAddr(_)
        | ExprKind::Fresh(_) => {}
    }
}

pub fn place<'a>(lv: &'a LValue, address_only: bool, on: &mut impl FnMut(Item<'a>)) {
    on(Item::Place {
        place: lv,
        address_only,
    });
    match lv {
        LValue::Var(_) => {}
        LValue::Deref(e) => expr(e, on),
        LValue::Field(b, _, _) => place(b, address_only, on),
        LValue::Index(b, i) => {
            place(b, address_only, on);
            expr(i, on);
        }
    }
}
