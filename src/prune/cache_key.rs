//! The verdict cache's keys: for each function, a digest of everything its result
//! ([`FunctionResult`](super::FunctionResult)) is computed from, so that a cached result is
//! reused only where proving again would ask the same questions of the same encoding.
//!
//! What a function's result depends on, and so what its key holds:
//! - the tool's version, the digest of the sources it was built from (`build.rs`), and the
//!   options that change answers ([`PruneConfig::answer_key`]), other files' summaries included;
//! - what the whole translation unit declares: how many files, records, globals with their
//!   initialisers, external declarations, string literals, functions the front end skipped
//!   (their names and what they mention);
//! - the lowered form of the function and of every function it reaches through direct calls
//!   (inlined in place, summarised, or encoded as a copy in its calling context), source
//!   positions included (they are in the result);
//! - for each of those functions, what the call graph says of it from the outside: its node
//!   (linkage, address taken), its number of call sites, whether it may stop the run, its call
//!   sites when it is decided in its calling contexts, whether it is a context callee or
//!   function, and the called-once contexts it holds as a caller;
//! - how many times each of their label ids occurs in the program.
//!
//! Indirect calls are havocs in the encoding, so the functions they may reach are not part of
//! the key. Anything a function's result could read that is not listed here would make a
//! cached result stale: the key errs on the side of holding too much (a change anywhere in
//! the unit's declarations invalidates every function of the unit).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use super::Prover;
use crate::ir::{Program, StmtKind};

/// Changes whenever the result format or the key's material changes.
const KEY_SCHEMA: &str = "covprune-verdict-key/1";

impl Prover<'_> {
    /// The cache key of every function of the program, by name (`answer_key` is the user's
    /// configuration's, see [`super::PruneConfig::answer_key`]).
    pub fn cache_keys(&self, answer_key: &str) -> BTreeMap<String, String> {
        let program = self.program;
        let unit = unit_digest(program);
        let by_name = crate::ir::index_by_name(&program.functions);
        program
            .functions
            .iter()
            .map(|f| {
                let mut h = Sha256::new();
                for part in [
                    KEY_SCHEMA,
                    env!("CARGO_PKG_VERSION"),
                    // The build's own sources: no result crosses a change of the prover.
                    env!("COVPRUNE_SOURCE_DIGEST"),
                    answer_key,
                    &unit,
                    // Whose result this is: functions that call each other reach the same
                    // functions, and would otherwise share one key (and one cache row, where
                    // each run's result replaced the other's: gzip's `treat_file` and
                    // `treat_dir` were proved again on every warm run).
                    &f.name,
                ] {
                    h.update(part.as_bytes());
                    h.update([0]);
                }
                for i in self.reached(&f.name, &by_name) {
                    h.update(self.function_material(&program.functions[i]).as_bytes());
                    h.update([0]);
                }
                (f.name.clone(), hex(&h.finalize()))
            })
            .collect()
    }

    /// The functions `name` reaches through direct calls, itself included, sorted by name.
    fn reached(&self, name: &str, by_name: &BTreeMap<&str, usize>) -> BTreeSet<usize> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![name.to_string()];
        while let Some(n) = todo.pop() {
            let Some(&i) = by_name.get(n.as_str()) else {
                continue;
            };
            if seen.insert(i) {
                todo.extend(self.cg.callees(&n).into_iter().map(|(c, _)| c));
            }
        }
        seen
    }

    /// What the key holds of one reached function.
    fn function_material(&self, f: &crate::ir::Function) -> String {
        let name = f.name.as_str();
        let mut out = format!("{f:?}\n");
        let _ = writeln!(
            out,
            "node {:?} sites {} may-stop {} callees {:?}",
            self.cg.node(name),
            self.cg.call_sites(name),
            self.cg.may_not_return(name),
            self.cg.callees(name)
        );
        let _ = writeln!(
            out,
            "context-sites {:?} context-function {} context-callee {} contexts {:?}",
            self.sites.get(name),
            self.context_functions.contains(name),
            self.config.encode.context_callees.contains(name),
            self.context.get(name)
        );
        let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
        for (_, s) in f.labels() {
            if let StmtKind::Label { id, .. } = &s.kind {
                counts.insert(*id, self.occurrences.get(id).copied().unwrap_or(0));
            }
        }
        let _ = writeln!(out, "occurrences {counts:?}");
        let _ = writeln!(out, "never-entered {}", self.never_entered.contains(name));
        out
    }
}

/// What the whole unit declares (see the module's documentation).
fn unit_digest(program: &Program) -> String {
    let mut h = Sha256::new();
    let skipped: Vec<(&str, &BTreeSet<String>)> = program
        .skipped
        .iter()
        .map(|s| (s.name.as_str(), &s.mentions))
        .collect();
    for part in [
        // Where the files are does not change a result (locations hold file indices, and
        // ledgers name files afresh): a project moved or annotated elsewhere keeps its keys.
        format!("{} files", program.files.len()),
        format!("{:?}", program.records),
        format!("{:?}", program.globals),
        format!("{:?}", program.externals),
        format!("{:?}", program.strings),
        format!("{skipped:?}"),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::PruneConfig;

    fn program_of(src: &str) -> Program {
        crate::frontend::test_program(src)
    }

    fn keys(src: &str) -> BTreeMap<String, String> {
        let program = program_of(src);
        let config = PruneConfig {
            steps: BTreeSet::from([1, 2, 3]),
            ..PruneConfig::default()
        };
        let prover = Prover::new(&program, &config);
        prover.cache_keys(&config.answer_key())
    }

    const BASE: &str = "static int leaf(int x) { return x + 1; }
static int mid(int x) { if (x > 3) return leaf(x); return 0; }
int top(int x) { pc_label(x > 0, 1, \"CC\"); return mid(x); }
int other(int y) { pc_label(y < 0, 2, \"CC\"); return y * 2; }
";

    #[test]
    fn an_edit_changes_the_keys_of_the_function_and_of_its_callers_only() {
        let before = keys(BASE);
        let after = keys(&BASE.replace("return x + 1;", "return x + 2;"));
        assert_eq!(before.len(), 4);
        for changed in ["leaf", "mid", "top"] {
            assert_ne!(before[changed], after[changed], "{changed} reaches leaf");
        }
        assert_eq!(before["other"], after["other"], "other does not reach leaf");
    }

    #[test]
    fn functions_that_call_each_other_have_keys_of_their_own() {
        let keys = keys(
            "int even(int n);
int odd(int n) { pc_label(n > 0, 1, \"CC\"); return n == 0 ? 0 : even(n - 1); }
int even(int n) { pc_label(n > 0, 2, \"CC\"); return n == 0 ? 1 : odd(n - 1); }
",
        );
        assert_eq!(keys.len(), 2);
        assert_ne!(keys["odd"], keys["even"]);
    }

    #[test]
    fn keys_are_stable_and_change_with_the_options_and_the_declarations() {
        assert_eq!(keys(BASE), keys(BASE));
        let with_global = keys(&format!("int g;\n{BASE}").replacen('\n', " ", 1));
        assert_ne!(keys(BASE)["other"], with_global["other"]);
        let program = program_of(BASE);
        let config = PruneConfig::default();
        let prover = Prover::new(&program, &config);
        let mut other = config.clone();
        other.solver.rlimit += 1;
        assert_ne!(
            prover.cache_keys(&config.answer_key())["other"],
            prover.cache_keys(&other.answer_key())["other"]
        );
    }
}
