//! The calling contexts of a function whose every caller is known: its call sites, what the
//! proof of each inlined copy of it found, and whether a fact holds in every context (the
//! soundness argument is [`super::contexts`]').

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::cfg::callgraph::CallGraph;
use crate::ir::{Callee, Program, StmtKind};
use crate::vc::encode::CallSite;

/// Functions with more call sites than this are decided without their contexts.
pub const MAX_CONTEXTS: usize = 32;
/// How many calls up a fact is looked for (the encoder inlines two levels).
pub(super) const MAX_CONTEXT_DEPTH: usize = 3;

/// The call sites of every function whose callers are all known: defined in the program,
/// never address-taken, and either internal (`static`) or, under `--entry main`, not `main`.
/// Functions with no call site, or more than [`MAX_CONTEXTS`], are left out, and so are the
/// sites in functions no run enters (`never_entered`): no execution starts there.
pub fn call_sites(
    program: &Program,
    cg: &CallGraph,
    entry_main: bool,
    never_entered: &BTreeSet<String>,
) -> BTreeMap<String, Vec<CallSite>> {
    let known_callers = |name: &str| callers_all_known(program, cg, name, entry_main);
    let mut out: BTreeMap<String, Vec<CallSite>> = BTreeMap::new();
    for f in program
        .functions
        .iter()
        .filter(|f| !never_entered.contains(&f.name))
    {
        for (b, blk) in f.blocks.iter().enumerate() {
            for (i, s) in blk.stmts.iter().enumerate() {
                if let StmtKind::Call {
                    callee: Callee::Direct(name),
                    ..
                } = &s.kind
                {
                    if known_callers(name) {
                        out.entry(name.clone()).or_default().push(CallSite {
                            caller: f.name.clone(),
                            block: b as u32,
                            stmt: i as u32,
                        });
                    }
                }
            }
        }
    }
    out.retain(|_, sites| sites.len() <= MAX_CONTEXTS);
    out
}

/// Are all the callers of `name` in the program: defined and lowered here, never
/// address-taken, and either internal (`static`) or, under `--entry main`, not `main`?
pub fn callers_all_known(program: &Program, cg: &CallGraph, name: &str, entry_main: bool) -> bool {
    cg.node(name).is_some_and(|n| {
        n.defined
            && !n.address_taken
            && (n.linkage == crate::ir::Linkage::Internal || entry_main && name != "main")
    }) && program.functions.iter().any(|f| f.name == name)
}

/// What one inlined copy of a function proved about its labels.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CopyResult {
    /// The calls from the encoded function down to the copy.
    pub path: Vec<CallSite>,
    pub function: String,
    /// Labels `(id, block)` false or unreached at every occurrence in this copy.
    pub infeasible: BTreeSet<(u64, u32)>,
    /// Labels the solver found a run to (a model) at some occurrence in this copy.
    #[serde(default)]
    pub satisfiable: BTreeSet<u64>,
    /// Labels (of one occurrence) always true when reached in this copy.
    pub always_true: BTreeSet<u64>,
    /// Proven `i ⇒ j` between co-reached labels of this copy.
    pub implications: BTreeSet<(u64, u64)>,
    /// Labels covered, in this copy, by some choice of the root's parameters whatever the
    /// encoding's other unknowns ([`super::Asker`]'s witness question): truly feasible.
    #[serde(default)]
    pub witnessed: BTreeSet<u64>,
}

impl CopyResult {
    pub(super) fn infeasible_id(&self, id: u64) -> bool {
        self.infeasible.iter().any(|(i, _)| *i == id)
    }

    /// Does covering `a` in this copy imply covering `b` (both co-reached in the function)?
    pub fn implies(&self, a: u64, b: u64) -> bool {
        self.infeasible_id(a)
            || self.always_true.contains(&b)
            || self.implications.contains(&(a, b))
    }
}

/// The copies of every function proved in a run, and the call sites of the functions whose
/// callers are all known.
pub struct Contexts {
    sites: BTreeMap<String, Vec<CallSite>>,
    copies: BTreeMap<Vec<CallSite>, CopyResult>,
}

impl Contexts {
    /// From the call sites and the copies each function's proof recorded.
    pub fn new<'a>(
        results: impl IntoIterator<Item = (&'a BTreeMap<String, Vec<CallSite>>, &'a [CopyResult])>,
    ) -> Contexts {
        let mut sites = BTreeMap::new();
        let mut copies = BTreeMap::new();
        for (call_sites, copied) in results {
            for (name, s) in call_sites {
                sites.insert(name.clone(), s.clone());
            }
            for c in copied {
                copies.insert(c.path.clone(), c.clone());
            }
        }
        Contexts { sites, copies }
    }

    /// Could a fact about `function` hold by its contexts (are its callers all known, and
    /// was some copy of a function decided)?
    pub fn covers(&self, function: &str) -> bool {
        !self.copies.is_empty() && self.sites.get(function).is_some_and(|s| !s.is_empty())
    }

    /// Does `fact` hold for every execution of `function`, by its calling contexts?
    pub fn everywhere(&self, function: &str, fact: &dyn Fn(&CopyResult) -> bool) -> bool {
        if self.copies.is_empty() {
            return false;
        }
        match self.sites.get(function) {
            Some(sites) if !sites.is_empty() => sites
                .iter()
                .all(|s| self.holds_through(vec![s.clone()], fact)),
            _ => false,
        }
    }

    /// Is label `id` of `function` no fit partner to prune another label by (see
    /// [`super::keep_partners_feasible`])? It is when some copy proved it infeasible and no
    /// copy witnessed its coverage: likely infeasible where it was not proved too. A run the
    /// solver finds in another copy is no evidence, when it goes through the encoding's
    /// unknowns (a loop's havocked state, an opaque call' result) and may not exist; a
    /// witness is (see [`CopyResult::witnessed`]). A subsumer that is infeasible leaves the
    /// label it prunes with nothing to cover.
    pub fn suspect(&self, function: &str, id: u64) -> bool {
        let mine = || self.copies.values().filter(|c| c.function == function);
        mine().any(|c| c.infeasible_id(id)) && !mine().any(|c| c.witnessed.contains(&id))
    }

    /// Does `fact` hold for every execution through the calls of `path` (outermost first)?
    fn holds_through(&self, path: Vec<CallSite>, fact: &dyn Fn(&CopyResult) -> bool) -> bool {
        if self.copies.get(&path).is_some_and(fact) {
            return true;
        }
        if path.len() >= MAX_CONTEXT_DEPTH || path.iter().skip(1).any(|s| s == &path[0]) {
            return false;
        }
        let outer = &path[0].caller;
        match self.sites.get(outer) {
            Some(sites) if !sites.is_empty() => sites.iter().all(|s| {
                let mut longer = vec![s.clone()];
                longer.extend(path.iter().cloned());
                self.holds_through(longer, fact)
            }),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(function: &str, caller: &str, infeasible: &[u64], witnessed: &[u64]) -> CopyResult {
        CopyResult {
            path: vec![CallSite {
                caller: caller.into(),
                block: 0,
                stmt: 0,
            }],
            function: function.into(),
            infeasible: infeasible.iter().map(|&id| (id, 0)).collect(),
            satisfiable: witnessed.iter().copied().collect(),
            always_true: BTreeSet::new(),
            implications: BTreeSet::new(),
            witnessed: witnessed.iter().copied().collect(),
        }
    }

    fn contexts(copies: Vec<CopyResult>) -> Contexts {
        Contexts {
            sites: BTreeMap::new(),
            copies: copies.into_iter().map(|c| (c.path.clone(), c)).collect(),
        }
    }

    #[test]
    fn a_label_proved_infeasible_somewhere_is_a_partner_only_once_witnessed() {
        let proved_in_one = contexts(vec![copy("h", "a", &[7], &[]), copy("h", "b", &[], &[])]);
        assert!(proved_in_one.suspect("h", 7));
        assert!(!proved_in_one.suspect("h", 8));
        assert!(!proved_in_one.suspect("g", 7));
        let witnessed_in_another =
            contexts(vec![copy("h", "a", &[7], &[]), copy("h", "b", &[], &[7])]);
        assert!(!witnessed_in_another.suspect("h", 7));
    }

    #[test]
    fn a_run_found_through_unknowns_is_no_evidence() {
        // Satisfiable in copy b, but not witnessed there (say, after a loop).
        let mut b = copy("h", "b", &[], &[]);
        b.satisfiable.insert(7);
        let reached_unwitnessed = contexts(vec![copy("h", "a", &[7], &[]), b]);
        assert!(reached_unwitnessed.suspect("h", 7));
    }
}
