//! A stable, human-readable text dump of the IR, used by `covprune ir` and by snapshot tests.

use super::*;
use std::fmt::Write;

/// Prints expressions and statements with names resolved against one function and the program.
pub struct Printer<'a> {
    pub program: &'a Program,
    pub function: Option<&'a Function>,
}

impl Printer<'_> {
    fn var(&self, v: VarRef) -> String {
        match v {
            VarRef::Local(id) => match self.function {
                Some(f) => format!("{}.{}", f.local(id).name, id.0),
                None => format!("local.{}", id.0),
            },
            VarRef::Global(id) => format!("@{}", self.program.globals[id.0 as usize].name),
        }
    }

    fn field_name(&self, rec: RecordId, idx: u32) -> String {
        self.program
            .records
            .get(rec.0 as usize)
            .and_then(|r| r.fields.get(idx as usize))
            .map_or_else(
                || format!("#{idx}"),
                |f| {
                    if f.name.is_empty() {
                        "<anon>".to_string()
                    } else {
                        f.name.clone()
                    }
                },
            )
    }

    pub fn lvalue(&self, lv: &LValue) -> String {
        match lv {
            LValue::Var(v) => self.var(*v),
            LValue::Deref(e) => format!("*{}", self.expr_atom(e)),
            LValue::Field(base, rec, idx) => {
                format!("{}.{}", self.lvalue(base), self.field_name(*rec, *idx))
            }
            LValue::Index(base, i) => format!("{}[{}]", self.lvalue(base), self.expr(i)),
        }
    }

    fn expr_atom(&self, e: &Expr) -> String {
        match e.kind {
            ExprKind::Binary(..) | ExprKind::Cond(..) => format!("({})", self.expr(e)),
            _ => self.expr(e),
        }
    }

    pub fn expr(&self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Const(v) => format!("{v}"),
            ExprKind::FloatConst(v) => format!("{v:?}"),
            ExprKind::Str(i) => format!("str#{i}"),
            ExprKind::Read(lv) => self.lvalue(lv),
            ExprKind::AddrOf(lv) => format!("&{}", self.lvalue(lv)),
            ExprKind::FuncAddr(n) => format!("&{n}()"),
            ExprKind::Unary(op, a) => {
                let s = match op {
                    UnOp::Neg => "-",
                    UnOp::BitNot => "~",
                    UnOp::LogNot => "!",
                };
                format!("{s}{}", self.expr_atom(a))
            }
            ExprKind::Binary(op, a, b) => {
                format!(
                    "{} {} {}",
                    self.expr_atom(a),
                    op.symbol(),
                    self.expr_atom(b)
                )
            }
            ExprKind::Cast(a) => format!("({}){}", e.ty, self.expr_atom(a)),
            ExprKind::Cond(c, a, b) => format!(
                "{} ? {} : {}",
                self.expr_atom(c),
                self.expr_atom(a),
                self.expr_atom(b)
            ),
            ExprKind::Fresh(k) => format!("fresh<{}>:{}", k.name(), e.ty),
        }
    }

    pub fn stmt(&self, s: &Stmt) -> String {
        match &s.kind {
            StmtKind::Assign { dst, src } => {
                format!("{} := {}", self.lvalue(dst), self.expr(src))
            }
            StmtKind::Havoc { dst, reason } => match reason {
                Some(r) => format!("havoc {} ({})", self.lvalue(dst), r.name()),
                None => format!("havoc {}", self.lvalue(dst)),
            },
            StmtKind::ZeroInit { dst } => format!("zero {}", self.lvalue(dst)),
            StmtKind::Assume(e) => format!("assume {}", self.expr(e)),
            StmtKind::Call { dst, callee, args } => {
                let mut out = String::new();
                if let Some(d) = dst {
                    let _ = write!(out, "{} := ", self.lvalue(d));
                }
                match callee {
                    Callee::Direct(n) => out.push_str(n),
                    Callee::Indirect(e) => {
                        let _ = write!(out, "(*{})", self.expr_atom(e));
                    }
                }
                let args: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                let _ = write!(out, "({})", args.join(", "));
                format!("call {out}")
            }
            StmtKind::Label { id, tag, pred, .. } => {
                format!("label {id} \"{tag}\": {}", self.expr(pred))
            }
            StmtKind::HavocMemory(k) => format!("havoc memory ({})", k.name()),
            StmtKind::Sequence(SequenceMark::Position {
                id,
                pos,
                len,
                var,
                cond,
            }) => format!(
                "sequence {id} position {pos}/{len} of {var}: {}",
                self.expr(cond)
            ),
            StmtKind::Sequence(SequenceMark::Break { var }) => format!("sequence break of {var}"),
        }
    }

    pub fn terminator(&self, t: &Terminator) -> String {
        match t {
            Terminator::Goto(b) => format!("goto bb{}", b.0),
            Terminator::Branch {
                cond,
                then_bb,
                else_bb,
            } => format!(
                "if {} then bb{} else bb{}",
                self.expr(cond),
                then_bb.0,
                else_bb.0
            ),
            Terminator::Switch {
                scrutinee,
                cases,
                default,
            } => {
                let mut out = format!("switch {} [", self.expr(scrutinee));
                for c in cases {
                    if c.lo == c.hi {
                        let _ = write!(out, "{} => bb{}, ", c.lo, c.target.0);
                    } else {
                        let _ = write!(out, "{}..={} => bb{}, ", c.lo, c.hi, c.target.0);
                    }
                }
                let _ = write!(out, "default => bb{}]", default.0);
                out
            }
            Terminator::Return(Some(e)) => format!("return {}", self.expr(e)),
            Terminator::Return(None) => "return".to_string(),
            Terminator::NoReturn => "noreturn".to_string(),
            Terminator::Unreachable => "unreachable".to_string(),
        }
    }
}

/// The whole function: signature, locals, then every block with its statements and terminator.
pub fn function_to_string(program: &Program, f: &Function) -> String {
    let p = Printer {
        program,
        function: Some(f),
    };
    let mut out = String::new();
    let params: Vec<String> = f
        .params
        .iter()
        .map(|id| format!("{} {}.{}", f.local(*id).ty, f.local(*id).name, id.0))
        .collect();
    let _ = writeln!(
        out,
        "fn {}({}) -> {}{}",
        f.name,
        params.join(", "),
        f.ty.ret,
        if f.linkage == Linkage::Internal {
            " [static]"
        } else {
            ""
        }
    );
    for (i, l) in f.locals.iter().enumerate() {
        if l.is_param {
            continue;
        }
        let mut flags = String::new();
        if l.address_taken {
            flags.push_str(" [addr]");
        }
        if l.is_static {
            flags.push_str(" [static]");
        }
        if l.volatile {
            flags.push_str(" [volatile]");
        }
        let _ = writeln!(out, "  local {} {}.{}{}", l.ty, l.name, i, flags);
    }
    for (i, b) in f.blocks.iter().enumerate() {
        let head = if b.loop_head { " (loop head)" } else { "" };
        let entry = if BlockId(i as u32) == f.entry {
            " (entry)"
        } else {
            ""
        };
        let _ = writeln!(out, "  bb{i}{entry}{head}: line {}", b.loc.line);
        for s in &b.stmts {
            let _ = writeln!(out, "    {}", p.stmt(s));
        }
        let _ = writeln!(out, "    {}", p.terminator(&b.term));
    }
    out
}
