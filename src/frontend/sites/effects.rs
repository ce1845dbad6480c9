//! What a call may read and write, so that the annotator knows when evaluating a call before
//! the rest of its statement (into a temporary that labels can read) changes nothing the
//! program does.
//!
//! Frama-C evaluates every call of a statement into a temporary first, and LAnnotate mutates
//! the rest of the statement over those temporaries (`x = f(a) > y` gives mutants of
//! `tmp > y`). The annotated copy does the same only where the order cannot matter: C leaves
//! the order between a call and the other operands of its expression unspecified, and a
//! hoisted call runs before all of them, so every other operand must be something the call
//! cannot change, and two hoisted calls must not touch what the other touches.
//!
//! The effects of a function defined in the file come from its lowered form, where macros are
//! expanded and every variable is resolved: the globals (and `static` locals) it reads and
//! writes, whether it reads or writes through a pointer, and, transitively, those of the
//! functions it calls. A call to anything else (an external function, a function pointer,
//! inline assembly) may read and write anything, except for a short list of C library
//! functions that compute from their arguments only (`<math.h>`, `abs`, `<ctype.h>`): the
//! only state those touch is `errno` and the locale tables, which the hoisting leaves as C
//! allows (a program that reads `errno` between two math calls of one expression depends on
//! an order the language does not fix).

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{Callee, Expr, ExprKind, Function, LValue, Program, StmtKind, Terminator, VarRef};

/// What evaluating something may read and write outside the caller's private variables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// May read and write anything.
    pub top: bool,
    /// May read anything (an unconstrained value of the lowered form hides what it read).
    pub reads_all: bool,
    pub reads: BTreeSet<String>,
    pub writes: BTreeSet<String>,
    pub reads_memory: bool,
    pub writes_memory: bool,
}

impl Effects {
    pub fn top() -> Effects {
        Effects {
            top: true,
            ..Effects::default()
        }
    }

    pub fn absorb(&mut self, other: &Effects) {
        self.top |= other.top;
        self.reads_all |= other.reads_all;
        self.reads_memory |= other.reads_memory;
        self.writes_memory |= other.writes_memory;
        self.reads.extend(other.reads.iter().cloned());
        self.writes.extend(other.writes.iter().cloned());
    }

    fn writes_anything(&self) -> bool {
        self.top || self.writes_memory || !self.writes.is_empty()
    }

    fn touches_anything(&self) -> bool {
        self.top
            || self.reads_all
            || self.reads_memory
            || self.writes_memory
            || !self.reads.is_empty()
            || !self.writes.is_empty()
    }

    /// Something `self` writes may be what `other` reads or writes.
    fn disturbs(&self, other: &Effects) -> bool {
        if !self.writes_anything() || !other.touches_anything() {
            return false;
        }
        if self.top || self.writes_memory || other.top || other.reads_all {
            return true;
        }
        // A pointer may point into any global.
        if other.reads_memory || other.writes_memory {
            return true;
        }
        self.writes
            .iter()
            .any(|w| other.reads.contains(w) || other.writes.contains(w))
    }

    /// Evaluating one before the other, in either order, gives the same result.
    pub fn commutes_with(&self, other: &Effects) -> bool {
        !self.disturbs(other) && !other.disturbs(self)
    }
}

/// The effects of calling each function of a program, and of calling anything by name.
#[derive(Clone, Debug, Default)]
pub struct CallEffects {
    defined: BTreeMap<String, Effects>,
}

impl CallEffects {
    pub fn of(program: Option<&Program>) -> CallEffects {
        let Some(program) = program else {
            return CallEffects {
                defined: BTreeMap::new(),
            };
        };
        // Each function's own effects and the functions it calls, then a fixpoint over calls.
        let mut own: BTreeMap<String, (Effects, BTreeSet<String>)> = BTreeMap::new();
        for f in &program.functions {
            own.insert(f.name.clone(), own_effects(program, f));
        }
        for s in &program.skipped {
            own.insert(s.name.clone(), (Effects::top(), BTreeSet::new()));
        }
        let defined = crate::cfg::callgraph::close_over_calls(
            own,
            |acc, e| acc.absorb(e),
            |c| (!crate::libc::computes_from_arguments(c)).then(Effects::top),
        );
        CallEffects { defined }
    }

    /// The effects of a call of `name` (None: a call through a pointer), arguments aside.
    pub fn call(&self, name: Option<&str>) -> Effects {
        match name {
            Some(n) => match self.defined.get(n) {
                Some(e) => e.clone(),
                None if crate::libc::computes_from_arguments(n) => Effects::default(),
                None => Effects::top(),
            },
            None => Effects::top(),
        }
    }
}

/// A variable as effects name it: globals by name, `static` locals by function and name.
fn var_key(program: &Program, f: &Function, v: VarRef) -> Option<String> {
    match v {
        VarRef::Global(g) => program.globals.get(g.0 as usize).map(|g| g.name.clone()),
        VarRef::Local(l) => {
            let local = f.local(l);
            local
                .is_static
                .then(|| crate::ir::static_local_name(&f.name, &local.name))
        }
    }
}

fn own_effects(program: &Program, f: &Function) -> (Effects, BTreeSet<String>) {
    let mut e = Effects::default();
    let mut callees = BTreeSet::new();
    for b in &f.blocks {
        for s in &b.stmts {
            match &s.kind {
                StmtKind::Assign { dst, src } => {
                    access(program, f, dst, Access::Write, &mut e);
                    read(program, f, src, &mut e);
                }
                StmtKind::Havoc { dst, .. } | StmtKind::ZeroInit { dst } => {
                    access(program, f, dst, Access::Write, &mut e)
                }
                StmtKind::Assume(x) => read(program, f, x, &mut e),
                StmtKind::Call { dst, callee, args } => {
                    if let Some(d) = dst {
                        access(program, f, d, Access::Write, &mut e);
                    }
                    for a in args {
                        read(program, f, a, &mut e);
                    }
                    match callee {
                        Callee::Direct(n) => {
                            callees.insert(n.clone());
                        }
                        Callee::Indirect(_) => e.top = true,
                    }
                }
                StmtKind::Label { .. } | StmtKind::Sequence(_) => {}
                StmtKind::HavocMemory(_) => e.top = true,
            }
        }
        match &b.term {
            Terminator::Branch { cond, .. } => read(program, f, cond, &mut e),
            Terminator::Switch { scrutinee, .. } => read(program, f, scrutinee, &mut e),
            Terminator::Return(Some(x)) => read(program, f, x, &mut e),
            _ => {}
        }
    }
    (e, callees)
}

/// How a place is used.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
    /// Only its address is computed (`&p->f`).
    Address,
}

/// Records an access to a place: a variable by name, anything through a pointer as memory;
/// what computing the place's address reads is read.
fn access(program: &Program, f: &Function, lv: &LValue, how: Access, e: &mut Effects) {
    match lv {
        LValue::Var(v) => {
            if let Some(k) = var_key(program, f, *v) {
                match how {
                    Access::Read => e.reads.insert(k),
                    Access::Write => e.writes.insert(k),
                    Access::Address => false,
                };
            }
        }
        LValue::Deref(p) => {
            match how {
                Access::Read => e.reads_memory = true,
                Access::Write => e.writes_memory = true,
                Access::Address => {}
            }
            read(program, f, p, e);
        }
        LValue::Field(base, _, _) => access(program, f, base, how, e),
        LValue::Index(base, i) => {
            access(program, f, base, how, e);
            read(program, f, i, e);
        }
    }
}

fn read(program: &Program, f: &Function, x: &Expr, e: &mut Effects) {
    match &x.kind {
        ExprKind::Const(_) | ExprKind::FloatConst(_) | ExprKind::Str(_) | ExprKind::FuncAddr(_) => {
        }
        ExprKind::Read(lv) => access(program, f, lv, Access::Read, e),
        ExprKind::AddrOf(lv) => access(program, f, lv, Access::Address, e),
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => read(program, f, a, e),
        ExprKind::Binary(_, a, b) => {
            read(program, f, a, e);
            read(program, f, b, e);
        }
        ExprKind::Cond(c, a, b) => {
            read(program, f, c, e);
            read(program, f, a, e);
            read(program, f, b, e);
        }
        // What the front end did not model may have read anything.
        ExprKind::Fresh(_) => e.reads_all = true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effects_of(src: &str) -> CallEffects {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.c");
        std::fs::write(&path, src).unwrap();
        let loaded = crate::frontend::load(&path, &Default::default()).unwrap();
        CallEffects::of(Some(&loaded.program))
    }

    #[test]
    fn transitive_globals_and_memory() {
        let fx = effects_of(
            "int g, h; int *p;\n\
             static int reads_g(void) { return g + 1; }\n\
             static void writes_h(void) { h = 2; }\n\
             static int calls_both(void) { writes_h(); return reads_g(); }\n\
             static void through_pointer(void) { *p = 1; }\n\
             extern int unknown(int);\n\
             static int calls_unknown(int x) { return unknown(x); }\n\
             static int counter(void) { static int n; return n++; }\n",
        );
        let r = fx.call(Some("reads_g"));
        assert!(!r.writes_anything() && r.reads.contains("g"));
        let w = fx.call(Some("writes_h"));
        assert!(w.writes.contains("h") && !w.writes_memory);
        assert!(r.commutes_with(&w));
        let both = fx.call(Some("calls_both"));
        assert!(both.reads.contains("g") && both.writes.contains("h"));
        assert!(!both.commutes_with(&w), "both write h");
        let mem = fx.call(Some("through_pointer"));
        assert!(mem.writes_memory && !mem.commutes_with(&r));
        assert!(fx.call(Some("calls_unknown")).top);
        assert!(fx.call(None).top);
        let c = fx.call(Some("counter"));
        assert!(!c.writes.is_empty(), "{c:?}");
        assert!(
            !c.commutes_with(&c),
            "a call with state does not commute with itself"
        );
        let log = fx.call(Some("log"));
        assert!(log.commutes_with(&Effects::top()));
        assert!(fx.call(Some("sqrtf")).commutes_with(&both));
    }
}
