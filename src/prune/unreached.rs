//! Functions no run can enter: every label in them is infeasible, with no question asked.
//!
//! Soundness: a function whose callers are all known ([`callers_all_known`]: defined and lowered
//! here, never address-taken, `static` or, under `--entry main`, not `main`) runs only when one
//! of the function definitions that call it runs. The unit's text is read for the calls
//! ([`crate::ir::FunctionUses`], from the syntax tree, after preprocessing): a function named
//! anywhere but in a direct call or its own declarations counts as entered from outside, and so
//! does a caller the front end could not lower. The functions some run may enter are then those
//! reachable through direct calls from the functions entered from outside; the others, and
//! labels anywhere in them, are never reached. A call written in unreachable code of a live
//! function still counts as a call (an over-approximation that keeps its callee live).

use std::collections::{BTreeMap, BTreeSet};

use super::copies::callers_all_known;
use crate::cfg::callgraph::CallGraph;
use crate::ir::Program;

/// The lowered functions of `program` no run can enter, by name.
pub fn never_entered(program: &Program, cg: &CallGraph, entry_main: bool) -> BTreeSet<String> {
    let lowered: BTreeSet<&str> = program.functions.iter().map(|f| f.name.as_str()).collect();
    // callees[c]: the functions whose text calls them from the definition of `c`.
    let mut callees: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, uses) in &program.function_uses {
        for caller in &uses.called_from {
            callees
                .entry(caller.as_str())
                .or_default()
                .push(name.as_str());
        }
    }
    let entered_from_outside = |name: &str| {
        !lowered.contains(name)
            || !callers_all_known(program, cg, name, entry_main)
            || program.function_uses.get(name).is_none_or(|u| u.referenced)
    };
    // Every caller named in the text that is not a lowered function is entered from outside.
    let mut live: BTreeSet<&str> = program
        .function_uses
        .values()
        .flat_map(|u| u.called_from.iter().map(String::as_str))
        .chain(lowered.iter().copied())
        .filter(|n| entered_from_outside(n))
        .collect();
    let mut todo: Vec<&str> = live.iter().copied().collect();
    while let Some(f) = todo.pop() {
        for &g in callees.get(f).into_iter().flatten() {
            if live.insert(g) {
                todo.push(g);
            }
        }
    }
    lowered
        .into_iter()
        .filter(|n| !live.contains(n))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unentered(src: &str, entry_main: bool) -> Vec<String> {
        let program = crate::frontend::test_program(src);
        let cg = CallGraph::build(&program);
        never_entered(&program, &cg, entry_main)
            .into_iter()
            .collect()
    }

    const SRC: &str = "static int s(int x) { return x; }\n\
        int e(int x) { return x + 1; }\n\
        int g(int x) { return e(x); }\n\
        static int r(int x) { return x ? r(x - 1) : 0; }\n\
        static int t(int x) { return r(x); }\n\
        int main(void) { return g(1); }\n";

    #[test]
    fn only_internal_functions_are_unentered_without_an_entry() {
        assert_eq!(unentered(SRC, false), ["r", "s", "t"]);
    }

    #[test]
    fn under_entry_main_only_what_main_reaches_is_entered() {
        // g and e are reached from main; nothing else is.
        assert_eq!(unentered(SRC, true), ["r", "s", "t"]);
        let without_main = SRC.replace("int main(void) { return g(1); }\n", "");
        assert_eq!(unentered(&without_main, true), ["e", "g", "r", "s", "t"]);
    }

    #[test]
    fn a_use_outside_a_function_or_an_address_keeps_a_function_entered() {
        // `sizeof(a())` parses as the size of a type named `a`: a use all the same.
        let src = "static int a(void) { return 1; }\n\
            static int b(void) { return 2; }\n\
            static int c(void) { return 3; }\n\
            int ga = sizeof(a());\n\
            static int (*pb)(void) = &b;\n\
            int use(void) { return pb(); }\n";
        assert_eq!(unentered(src, false), ["c"]);
    }
}
