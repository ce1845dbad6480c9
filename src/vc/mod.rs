//! Verification conditions: our own term language (`term`), the per-function encoding
//! (`encode`), and the memory-effect summaries of calls that the encoding relies on.
//!
//! Architecture invariant: nothing here imports z3; `smt` translates terms.

pub mod cone;
pub mod encode;
pub mod term;

use std::collections::HashSet;

use crate::ir::{Callee, LValue, Program, StmtKind, VarRef};

/// Which calls may write memory: the mod summary of program functions (fixpoint over the call
/// graph) and a table for library functions. Unknown externals may write anything.
pub struct Summaries {
    program_writes: HashSet<String>,
    defined: HashSet<String>,
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
        Summaries {
            program_writes: writes,
            defined,
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
