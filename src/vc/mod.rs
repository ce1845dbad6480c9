//! Verification conditions: our own term language (`term`), the per-function encoding
//! (`encode`), and the memory-effect summaries of calls that the encoding relies on.
//!
//! Architecture invariant: nothing here imports z3; `smt` translates terms.

pub mod cone;
pub mod encode;
pub mod regions;
pub mod term;

use std::collections::{HashMap, HashSet};

use regions::GlobalWrites;

use crate::ir::{Callee, LValue, Program, StmtKind, VarRef};

/// Which calls may write memory: the mod summary of program functions (fixpoint over the call
/// graph) and a table for library functions. Unknown externals may write anything.
pub struct Summaries {
    program_writes: HashSet<String>,
    defined: HashSet<String>,
    /// The globals each program function may write, itself or through its callees.
    global_writes: HashMap<String, GlobalWrites>,
    pub regions: regions::Regions,
}

impl Summaries {
    pub fn new(program: &Program) -> Summaries {
        let defined: HashSet<String> = program.functions.iter().map(|f| f.name.clone()).collect();
        let skipped: HashSet<&str> = program.skipped.iter().map(|s| s.name.as_str()).collect();
        let mut writes: HashSet<String> = skipped.iter().map(|s| s.to_string()).collect();
        loop {
            let mut changed = false;
            for f in &program.functions {
                if writes.contains(&f.name) {
                    continue;
                }
                let w = f
                    .blocks
                    .iter()
                    .flat_map(|b| &b.stmts)
                    .any(|s| match &s.kind {
                        StmtKind::Assign { dst, .. }
                        | StmtKind::Havoc { dst, .. }
                        | StmtKind::ZeroInit { dst } => !own_local(dst),
                        StmtKind::Call { callee, dst, .. } => {
                            dst.as_ref().is_some_and(|d| !own_local(d))
                                || match callee {
                                    Callee::Direct(n) => {
                                        writes.contains(n)
                                            || (!defined.contains(n)
                                                && !crate::libc::WRITES_NO_MEMORY
                                                    .contains(&n.as_str()))
                                    }
                                    Callee::Indirect(_) => true,
                                }
                        }
                        StmtKind::HavocMemory(_) => true,
                        StmtKind::Assume(_) | StmtKind::Label { .. } => false,
                    });
                if w {
                    writes.insert(f.name.clone());
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let global_writes = global_writes(program, &defined);
        Summaries {
            program_writes: writes,
            defined,
            global_writes,
            regions: regions::Regions::new(program),
        }
    }

    /// The globals a call to `name` may write. Code outside the program may write any global
    /// (by name, or by calling back into the program), unless it writes no memory at all.
    pub fn global_writes(&self, name: &str) -> GlobalWrites {
        if self.defined.contains(name) {
            return self
                .global_writes
                .get(name)
                .cloned()
                .unwrap_or(GlobalWrites::All);
        }
        if crate::libc::WRITES_NO_MEMORY.contains(&name) {
            GlobalWrites::none()
        } else {
            GlobalWrites::All
        }
    }

    /// May a call to `name` change memory visible to its caller?
    pub fn writes_memory(&self, name: &str) -> bool {
        if self.defined.contains(name) {
            return self.program_writes.contains(name);
        }
        !crate::libc::WRITES_NO_MEMORY.contains(&name)
    }
}

/// A store to the function's own local variable (or a field or element of it) is invisible to
/// callers once the function returns.
fn own_local(lv: &LValue) -> bool {
    match lv {
        LValue::Var(VarRef::Local(_)) => true,
        LValue::Var(VarRef::Global(_)) | LValue::Deref(_) => false,
        LValue::Field(b, _, _) | LValue::Index(b, _) => own_local(b),
    }
}

/// The globals each program function may write by name, closed over direct calls; an indirect
/// call, an unknown external or an unmodelled effect may write any.
fn global_writes(program: &Program, defined: &HashSet<String>) -> HashMap<String, GlobalWrites> {
    let skipped: HashSet<&str> = program.skipped.iter().map(|s| s.name.as_str()).collect();
    let mut own: HashMap<String, (GlobalWrites, Vec<String>)> = HashMap::new();
    for f in &program.functions {
        let mut w = GlobalWrites::none();
        let mut callees = Vec::new();
        for s in f.blocks.iter().flat_map(|b| &b.stmts) {
            let dst = match &s.kind {
                StmtKind::Assign { dst, .. }
                | StmtKind::Havoc { dst, .. }
                | StmtKind::ZeroInit { dst } => Some(dst),
                StmtKind::Call { dst, callee, .. } => {
                    match callee {
                        Callee::Direct(n)
                            if defined.contains(n) && !skipped.contains(n.as_str()) =>
                        {
                            callees.push(n.clone())
                        }
                        Callee::Direct(n)
                            if crate::libc::WRITES_NO_MEMORY.contains(&n.as_str()) => {}
                        _ => w = GlobalWrites::All,
                    }
                    dst.as_ref()
                }
                StmtKind::HavocMemory(_) => {
                    w = GlobalWrites::All;
                    None
                }
                StmtKind::Assume(_) | StmtKind::Label { .. } => None,
            };
            if let Some(g) = dst.and_then(regions::named_global) {
                w.add(&GlobalWrites::Some([g].into()));
            }
        }
        own.insert(f.name.clone(), (w, callees));
    }
    let mut out: HashMap<String, GlobalWrites> = own
        .iter()
        .map(|(n, (w, _))| (n.clone(), w.clone()))
        .collect();
    loop {
        let mut changed = false;
        for (name, (_, callees)) in &own {
            let mut w = out[name].clone();
            for c in callees {
                match out.get(c) {
                    Some(cw) => w.add(cw),
                    None => w = GlobalWrites::All,
                }
            }
            if w != out[name] {
                out.insert(name.clone(), w);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    out
}
