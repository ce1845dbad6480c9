//! Memory regions: which objects of an encoding are reached by name only, so that each can live
//! in a memory of its own instead of the shared byte-addressed one, and which globals a call may
//! write.
//!
//! Soundness argument (claims hold for executions without undefined behaviour, DESIGN.md):
//! - An access through a pointer (`*p`, `p->f`, `p[i]`) can reach an object only if a pointer to
//!   it exists. Inside a program without undefined behaviour, a pointer to an object exists only
//!   if its address was taken (`&x`, or an array decaying to a pointer) somewhere that can see
//!   it, and accesses through a pointer to one object never reach another (C11 6.5.6p8).
//! - A local whose address is never taken is therefore reached by its name only, in its own
//!   activation. So is a global whose address is never taken in the program when nothing
//!   outside the program can name it: it has internal linkage, or the run starts at `main` of a
//!   program that defines it (`--entry main`).
//! - A global with external linkage, in the unit-testing view, may be pointed to by arguments
//!   built elsewhere (another file may take its address). It is reached by name only in an
//!   encoding whose code (the function and every function it may call directly) dereferences no
//!   pointer at all; calls that may write it are havocked by [`GlobalWrites`].
//! - Anything else (address-taken objects, string literals, what pointers reach, volatile
//!   objects) stays in the shared memory, where distinct objects have distinct symbolic bases.
//!
//! An object with a memory of its own is written only by statements naming it, and by calls
//! whose [`GlobalWrites`] include it (globals only: no callee can name a caller's local).

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::ir::*;

/// The globals a call may write: some by name, or any (unknown code, indirect calls).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobalWrites {
    All,
    Some(BTreeSet<GlobalId>),
}

impl GlobalWrites {
    pub fn none() -> GlobalWrites {
        GlobalWrites::Some(BTreeSet::new())
    }

    pub fn contains(&self, g: GlobalId) -> bool {
        match self {
            GlobalWrites::All => true,
            GlobalWrites::Some(s) => s.contains(&g),
        }
    }

    pub fn add(&mut self, other: &GlobalWrites) {
        match (&mut *self, other) {
            (GlobalWrites::All, _) => {}
            (_, GlobalWrites::All) => *self = GlobalWrites::All,
            (GlobalWrites::Some(a), GlobalWrites::Some(b)) => a.extend(b.iter().copied()),
        }
    }
}

/// The global a place is rooted at, when it is reached by name.
pub fn named_global(lv: &LValue) -> Option<GlobalId> {
    match lv {
        LValue::Var(VarRef::Global(g)) => Some(*g),
        LValue::Var(VarRef::Local(_)) | LValue::Deref(_) => None,
        LValue::Field(b, _, _) | LValue::Index(b, _) => named_global(b),
    }
}

/// The local a place is rooted at, when it is reached by name.
pub fn named_local(lv: &LValue) -> Option<LocalId> {
    match lv {
        LValue::Var(VarRef::Local(l)) => Some(*l),
        LValue::Var(VarRef::Global(_)) | LValue::Deref(_) => None,
        LValue::Field(b, _, _) | LValue::Index(b, _) => named_local(b),
    }
}

/// Calls `on_place(place, address_only)` for every place an expression mentions.
fn places_of_expr(e: &Expr, on_place: &mut impl FnMut(&LValue, bool)) {
    match &e.kind {
        ExprKind::Read(lv) => places_of_lvalue(lv, false, on_place),
        ExprKind::AddrOf(lv) => places_of_lvalue(lv, true, on_place),
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => places_of_expr(a, on_place),
        ExprKind::Binary(_, a, b) => {
            places_of_expr(a, on_place);
            places_of_expr(b, on_place);
        }
        ExprKind::Cond(c, a, b) => {
            places_of_expr(c, on_place);
            places_of_expr(a, on_place);
            places_of_expr(b, on_place);
        }
        ExprKind::Const(_)
        | ExprKind::FloatConst(_)
        | ExprKind::Str(_)
        | ExprKind::FuncAddr(_)
        | ExprKind::Fresh(_) => {}
    }
}

fn places_of_lvalue(lv: &LValue, address_only: bool, on_place: &mut impl FnMut(&LValue, bool)) {
    on_place(lv, address_only);
    match lv {
        LValue::Var(_) => {}
        LValue::Deref(e) => places_of_expr(e, on_place),
        LValue::Field(b, _, _) => places_of_lvalue(b, address_only, on_place),
        LValue::Index(b, i) => {
            places_of_lvalue(b, address_only, on_place);
            places_of_expr(i, on_place);
        }
    }
}

/// Every place a function's statements and terminators mention.
fn places_of_function(f: &Function, on_place: &mut impl FnMut(&LValue, bool)) {
    for b in &f.blocks {
        for s in &b.stmts {
            places_of_stmt(s, on_place);
        }
        match &b.term {
            Terminator::Branch { cond: e, .. }
            | Terminator::Switch { scrutinee: e, .. }
            | Terminator::Return(Some(e)) => places_of_expr(e, on_place),
            _ => {}
        }
    }
}

fn places_of_stmt(s: &Stmt, on_place: &mut impl FnMut(&LValue, bool)) {
    match &s.kind {
        StmtKind::Assign { dst, src } => {
            places_of_lvalue(dst, false, on_place);
            places_of_expr(src, on_place);
        }
        StmtKind::Havoc { dst, .. } | StmtKind::ZeroInit { dst } => {
            places_of_lvalue(dst, false, on_place)
        }
        StmtKind::Assume(e) | StmtKind::Label { pred: e, .. } => places_of_expr(e, on_place),
        StmtKind::Call { dst, callee, args } => {
            if let Some(d) = dst {
                places_of_lvalue(d, false, on_place);
            }
            if let Callee::Indirect(e) = callee {
                places_of_expr(e, on_place);
            }
            for a in args {
                places_of_expr(a, on_place);
            }
        }
        StmtKind::HavocMemory(_) => {}
    }
}

/// The program-wide facts the region rules need.
pub struct Regions {
    /// Globals whose address is taken somewhere (in a function or an initialiser).
    address_taken: HashSet<GlobalId>,
    /// Functions that dereference a pointer, themselves or through a direct callee.
    derefs: HashSet<String>,
}

impl Regions {
    pub fn new(prog: &Program) -> Regions {
        let mut address_taken = HashSet::new();
        let mut own_deref: HashSet<String> = HashSet::new();
        let mut note = |lv: &LValue, address_only: bool, deref: &mut bool| {
            if address_only {
                if let Some(g) = named_global(lv) {
                    address_taken.insert(g);
                }
            }
            if matches!(lv, LValue::Deref(_)) {
                *deref = true;
            }
        };
        for g in &prog.globals {
            let mut d = false;
            for s in &g.init {
                places_of_stmt(s, &mut |lv, a| note(lv, a, &mut d));
            }
        }
        for f in &prog.functions {
            let mut d = false;
            places_of_function(f, &mut |lv, a| note(lv, a, &mut d));
            if d {
                own_deref.insert(f.name.clone());
            }
        }
        // Closure over direct calls.
        let callees: HashMap<&str, Vec<&str>> = prog
            .functions
            .iter()
            .map(|f| {
                let cs = f
                    .blocks
                    .iter()
                    .flat_map(|b| &b.stmts)
                    .filter_map(|s| match &s.kind {
                        StmtKind::Call {
                            callee: Callee::Direct(n),
                            ..
                        } => Some(n.as_str()),
                        _ => None,
                    })
                    .collect();
                (f.name.as_str(), cs)
            })
            .collect();
        let mut derefs = own_deref;
        loop {
            let before = derefs.len();
            for (f, cs) in &callees {
                if !derefs.contains(*f) && cs.iter().any(|c| derefs.contains(*c)) {
                    derefs.insert(f.to_string());
                }
            }
            if derefs.len() == before {
                break;
            }
        }
        Regions {
            address_taken,
            derefs,
        }
    }

    /// Is global `g` reached by name only in the encoding of `root`?
    pub fn global_is_named_only(
        &self,
        prog: &Program,
        g: GlobalId,
        root: &str,
        entry_main: bool,
    ) -> bool {
        let gl = &prog.globals[g.0 as usize];
        if gl.volatile || self.address_taken.contains(&g) || matches!(gl.ty, CType::Unknown) {
            return false;
        }
        let closed = gl.linkage == Linkage::Internal || (entry_main && !gl.is_extern_decl);
        closed || !self.derefs.contains(root)
    }

    /// The locals of `f` reached by name only (whose address is never taken).
    pub fn named_only_locals(f: &Function) -> Vec<bool> {
        let mut addressed = vec![false; f.locals.len()];
        places_of_function(f, &mut |lv, address_only| {
            if address_only {
                if let Some(l) = named_local(lv) {
                    addressed[l.0 as usize] = true;
                }
            }
        });
        f.locals
            .iter()
            .zip(addressed)
            .map(|(l, a)| !a && !l.address_taken && !l.volatile)
            .collect()
    }
}
