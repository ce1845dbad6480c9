//! Verification conditions: our own term language (`term`), the per-function encoding
//! (`encode`), and the memory-effect summaries of calls that the encoding relies on.
//!
//! Architecture invariant: nothing here imports z3; `smt` translates terms.

pub mod cone;
pub mod encode;
pub mod regions;
pub mod term;

use std::collections::{BTreeMap, BTreeSet, HashSet};

use regions::GlobalWrites;

use crate::cfg::callgraph::{close_over_calls, direct_callees};
use crate::ir::{Callee, Function, Program, StmtKind};

/// Which calls may write memory: the mod summary of program functions (fixpoint over the call
/// graph) and a table for library functions. Unknown externals may write anything.
pub struct Summaries {
    program_writes: HashSet<String>,
    defined: HashSet<String>,
    /// The globals each program function may write, itself or through its callees.
    global_writes: BTreeMap<String, GlobalWrites>,
    pub regions: regions::Regions,
}

impl Summaries {
    pub fn new(program: &Program) -> Summaries {
        let defined: HashSet<String> = program.functions.iter().map(|f| f.name.clone()).collect();
        let mut own_memory = BTreeMap::new();
        let mut own_globals = BTreeMap::new();
        for f in &program.functions {
            let (memory, globals) = own_writes(f);
            let callees = direct_callees(f);
            own_memory.insert(f.name.clone(), (memory, callees.clone()));
            own_globals.insert(f.name.clone(), (globals, callees));
        }
        // A function that could not be lowered may write anything.
        for s in &program.skipped {
            own_memory.insert(s.name.clone(), (true, BTreeSet::new()));
            own_globals.insert(s.name.clone(), (GlobalWrites::All, BTreeSet::new()));
        }
        let writes_no_memory = |n: &str| crate::libc::WRITES_NO_MEMORY.contains(&n);
        let program_writes =
            close_over_calls(own_memory, |a, b| *a |= *b, |n| Some(!writes_no_memory(n)))
                .into_iter()
                .filter_map(|(name, w)| w.then_some(name))
                .collect();
        let global_writes = close_over_calls(own_globals, GlobalWrites::add, |n| {
            (!writes_no_memory(n)).then_some(GlobalWrites::All)
        });
        Summaries {
            program_writes,
            defined,
            global_writes,
            regions: regions::Regions::new(program),
        }
    }

    /// The globals a call to `name` may write. Code outside the program may write any global
    /// (by name, or by calling back into the program), unless it writes no memory at all.
    pub fn global_writes(&self, name: &str) -> GlobalWrites {
        match self.global_writes.get(name) {
            Some(w) => w.clone(),
            None if crate::libc::WRITES_NO_MEMORY.contains(&name) => GlobalWrites::none(),
            None => GlobalWrites::All,
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

/// What a function writes itself, direct calls aside: whether it writes memory its callers can
/// see (anything but its own locals), and which globals it writes by name. An indirect call or
/// an unmodelled effect may write anything.
fn own_writes(f: &Function) -> (bool, GlobalWrites) {
    let mut memory = false;
    let mut globals = GlobalWrites::none();
    for s in f.blocks.iter().flat_map(|b| &b.stmts) {
        let dst = match &s.kind {
            StmtKind::Assign { dst, .. }
            | StmtKind::Havoc { dst, .. }
            | StmtKind::ZeroInit { dst } => Some(dst),
            StmtKind::Call { dst, callee, .. } => {
                if let Callee::Indirect(_) = callee {
                    memory = true;
                    globals = GlobalWrites::All;
                }
                dst.as_ref()
            }
            StmtKind::HavocMemory(_) => {
                memory = true;
                globals = GlobalWrites::All;
                None
            }
            StmtKind::Assume(_) | StmtKind::Label { .. } => None,
        };
        if let Some(d) = dst {
            memory |= regions::named_local(d).is_none();
            if let Some(g) = regions::named_global(d) {
                globals.add(&GlobalWrites::Some([g].into()));
            }
        }
    }
    (memory, globals)
}
