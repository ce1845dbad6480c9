//! Verification conditions: our own term language (`term`), the per-function encoding
//! (`encode`), and the memory-effect summaries of calls that the encoding relies on.
//!
//! Architecture invariant: nothing here imports z3; `smt` translates terms.

pub mod cone;
pub mod encode;
pub mod fp;
pub mod plants;
pub mod pointsto;
pub mod ranges;
pub mod regions;
pub mod term;

use std::collections::{BTreeMap, BTreeSet, HashSet};

use regions::GlobalWrites;
use serde::{Deserialize, Serialize};

use crate::cfg::callgraph::{close_over_calls, direct_callees};
use crate::ir::{Callee, Function, GlobalId, Linkage, Program, StmtKind};

/// What a function defined in another file of the project may write, from that file's own
/// summary (`project` computes it): memory its callers can see, and which globals by name
/// (`None`: any). Sound because that summary is: it was closed over that file's call graph
/// with every function it does not define taken as writing anything (so a call back into
/// this file counts in full), and a global of the same name here is taken as the one written
/// (a name that is another file's static only adds a havoc).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternalEffects {
    pub writes_memory: bool,
    pub globals: Option<BTreeSet<String>>,
}

/// Which calls may write memory: the mod summary of program functions (fixpoint over the call
/// graph) and a table for library functions. Unknown externals may write anything.
pub struct Summaries {
    program_writes: HashSet<String>,
    defined: HashSet<String>,
    /// The globals each program function may write, itself or through its callees.
    global_writes: BTreeMap<String, GlobalWrites>,
    /// Functions of other files of the project ([`ExternalEffects`]): those that may write
    /// memory, and the globals of this unit each may write.
    external_writes: HashSet<String>,
    external_globals: BTreeMap<String, GlobalWrites>,
    pub regions: regions::Regions,
    pub pointers: pointsto::ProgramPointers,
}

impl Summaries {
    /// The summaries of `program`'s functions; calls to functions it does not define take
    /// their effects from `externals` (other files' summaries) when named there, else from
    /// the library table, else may write anything.
    pub fn new(program: &Program, externals: &BTreeMap<String, ExternalEffects>) -> Summaries {
        let defined: HashSet<String> = program.functions.iter().map(|f| f.name.clone()).collect();
        let global_ids = |names: &Option<BTreeSet<String>>| match names {
            None => GlobalWrites::All,
            Some(names) => GlobalWrites::Some(
                program
                    .globals
                    .iter()
                    .enumerate()
                    .filter(|(_, g)| names.contains(&g.name))
                    .map(|(i, _)| GlobalId(i as u32))
                    .collect(),
            ),
        };
        let external_globals: BTreeMap<String, GlobalWrites> = externals
            .iter()
            .map(|(n, e)| (n.clone(), global_ids(&e.globals)))
            .collect();
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
        let writes_no_memory = crate::libc::writes_no_memory;
        let outside_memory = |n: &str| {
            externals
                .get(n)
                .map_or(!writes_no_memory(n), |e| e.writes_memory)
        };
        let program_writes =
            close_over_calls(own_memory, |a, b| *a |= *b, |n| Some(outside_memory(n)))
                .into_iter()
                .filter_map(|(name, w)| w.then_some(name))
                .collect();
        let global_writes = close_over_calls(own_globals, GlobalWrites::add, |n| {
            match external_globals.get(n) {
                Some(w) => Some(w.clone()),
                None => (!writes_no_memory(n)).then_some(GlobalWrites::All),
            }
        });
        Summaries {
            program_writes,
            defined,
            global_writes,
            external_writes: externals
                .iter()
                .filter(|(_, e)| e.writes_memory)
                .map(|(n, _)| n.clone())
                .collect(),
            external_globals,
            regions: regions::Regions::new(program),
            pointers: pointsto::ProgramPointers::new(program),
        }
    }

    /// The effects of `program`'s functions of external linkage, for other files' calls.
    /// Functions the front end skipped are not named: other files keep taking them as unknown.
    pub fn exported(&self, program: &Program) -> BTreeMap<String, ExternalEffects> {
        program
            .functions
            .iter()
            .filter(|f| f.linkage == Linkage::External)
            .map(|f| {
                let globals = match self.global_writes(&f.name) {
                    GlobalWrites::All => None,
                    GlobalWrites::Some(ids) => Some(
                        ids.iter()
                            .filter_map(|g| program.globals.get(g.0 as usize))
                            .map(|g| g.name.clone())
                            .collect(),
                    ),
                };
                let effects = ExternalEffects {
                    writes_memory: self.writes_memory(&f.name),
                    globals,
                };
                (f.name.clone(), effects)
            })
            .collect()
    }

    /// The globals a call to `name` may write. Code outside the program may write any global
    /// (by name, or by calling back into the program), unless it writes no memory at all.
    pub fn global_writes(&self, name: &str) -> GlobalWrites {
        match self.global_writes.get(name) {
            Some(w) => w.clone(),
            None if self.external_globals.contains_key(name) => self.external_globals[name].clone(),
            None if crate::libc::writes_no_memory(name) => GlobalWrites::none(),
            None => GlobalWrites::All,
        }
    }

    /// Is a call of `name` a call of the C library's function of that name (not one of this
    /// program's functions, lowered or skipped, nor one of another file of the project)?
    pub fn is_library(&self, name: &str) -> bool {
        self.pointers.is_library(name) && !self.external_globals.contains_key(name)
    }

    /// May a call to `name` change memory visible to its caller?
    pub fn writes_memory(&self, name: &str) -> bool {
        if self.defined.contains(name) {
            return self.program_writes.contains(name);
        }
        if self.external_globals.contains_key(name) {
            return self.external_writes.contains(name);
        }
        !crate::libc::writes_no_memory(name)
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
            StmtKind::Assume(_) | StmtKind::Label { .. } | StmtKind::Sequence(_) => None,
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
