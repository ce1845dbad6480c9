//! Calls with a failing allocation: C lets `malloc`, `calloc` and `realloc` return null on any
//! call, and code tests for it (`if (p == NULL) ...`); no call a model gives takes that way,
//! since a real run's allocations succeed. For the labels left after the other rounds, in
//! functions that allocate (themselves or through the functions they call), the calls models
//! gave for them are made again with their `k`-th allocation failing, for each `k` below
//! [`FAILURES`] (not in a program that defines an allocator of its own). The runner and the tests replace the three functions in the annotated file by
//! wrappers that count allocations and fail the chosen one ([`super::driver`]), so that a test
//! covers its labels without a sanitizer or a memory limit.

use std::collections::{BTreeMap, BTreeSet};

use super::bases::remade;
use crate::cfg::callgraph::{close_over_calls, direct_callees, CallGraph};
use crate::ir::{calls_indirectly, Program};
use crate::prune::witness::Call;

/// The library functions whose calls the wrappers replace.
pub const ALLOCATORS: &[&str] = &["malloc", "calloc", "realloc"];
/// Which allocation of a call fails: the first, the second, ... up to this many.
pub const FAILURES: u32 = 8;
/// Calls of earlier rounds made again, per function.
const BASES: usize = 2;

/// The functions that allocate: those that call an allocator, call a function that allocates,
/// or call through a pointer while the program takes the address of an allocator or of a
/// function that allocates (a table of hooks such as `{ malloc, free, realloc }`).
fn allocating(program: &Program) -> BTreeSet<String> {
    let close = |through_pointers: bool| -> BTreeSet<String> {
        let own = program
            .functions
            .iter()
            .map(|f| {
                let callees = direct_callees(f);
                let calls_allocator = callees.iter().any(|c| ALLOCATORS.contains(&c.as_str()));
                (
                    f.name.clone(),
                    (
                        calls_allocator || (through_pointers && calls_indirectly(f)),
                        callees,
                    ),
                )
            })
            .collect();
        close_over_calls(own, |a, b| *a |= *b, |_| None)
            .into_iter()
            .filter_map(|(name, allocates)| allocates.then_some(name))
            .collect()
    };
    let direct = close(false);
    let pointers_allocate = CallGraph::build(program)
        .address_taken
        .iter()
        .any(|n| ALLOCATORS.contains(&n.as_str()) || direct.contains(n));
    if pointers_allocate {
        close(true)
    } else {
        direct
    }
}

/// The calls for the labels `left` (by the function whose calls reach them) with a failing
/// allocation: per function that allocates, up to [`BASES`] of the calls of `earlier` rounds
/// ([`remade`]; `covered`: how many labels each one's run covered), each
/// with its first, second, ... allocation failing.
pub fn calls(
    program: &Program,
    earlier: &[Call],
    covered: &[usize],
    left: &BTreeMap<String, Vec<u64>>,
) -> Vec<Call> {
    // A program with an allocator of its own: its failures are its code's, and the wrappers'
    // macros would rename its definition.
    if ALLOCATORS.iter().any(|a| program.function(a).is_some()) {
        return Vec::new();
    }
    let allocating = allocating(program);
    let table = super::hooks::Hooks::of(program);
    let accept = |c: &Call| c.fail_allocation.is_none();
    remade(earlier, covered, left, BASES, accept, |name, bases| {
        let Some(f) = program.function(name).filter(|_| allocating.contains(name)) else {
            return Vec::new();
        };
        // Through a table of hooks, an allocation is reached only with the table set.
        let hooks = table.has_slots(program, f);
        let mut out = Vec::new();
        for base in bases {
            for k in 0..FAILURES {
                let mut call = base.clone();
                call.fail_allocation = Some(k);
                call.hooks = hooks;
                out.push(call);
            }
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::witness::{Arg, Origin};

    /// A call a model of label `target` gave, of `function`.
    fn model_call(function: &str, target: u64) -> Call {
        Call {
            function: function.into(),
            target,
            args: vec![Arg::Bits(3)],
            globals: Vec::new(),
            origin: Origin::Model,
            fail_allocation: None,
            hooks: false,
        }
    }

    #[test]
    fn functions_that_allocate_get_their_calls_again_with_each_allocation_failing() {
        let p = crate::frontend::test_program(
            "#include <stdlib.h>\n\
             static int *make(int n) { return malloc(sizeof(int) * n); }\n\
             int use(int n) { int *p = make(n); if (!p) return -1; free(p); return 0; }\n\
             int pure(int n) { return n + 1; }\n",
        );
        let earlier = vec![model_call("use", 1), model_call("pure", 2)];
        let left = BTreeMap::from([("use".to_string(), vec![1]), ("pure".to_string(), vec![2])]);
        let calls = calls(&p, &earlier, &[], &left);
        // `use` allocates through `make`; `pure` does not.
        assert_eq!(calls.len(), FAILURES as usize);
        assert!(calls
            .iter()
            .all(|c| c.function == "use" && c.args == earlier[0].args));
        let ks: Vec<u32> = calls.iter().filter_map(|c| c.fail_allocation).collect();
        assert_eq!(ks, (0..FAILURES).collect::<Vec<_>>());
    }

    #[test]
    fn calls_through_a_table_of_allocators_allocate() {
        let p = crate::frontend::test_program(
            "typedef unsigned long size_t;\n\
             void *malloc(size_t n);\n\
             void free(void *p);\n\
             typedef struct { void *(*allocate)(size_t); void (*release)(void *); } hooks;\n\
             static hooks global = { malloc, free };\n\
             int use(int n) { int *p = global.allocate(sizeof(int) * n); if (!p) return -1; global.release(p); return 0; }\n",
        );
        let call = model_call("use", 1);
        let left = BTreeMap::from([("use".to_string(), vec![1])]);
        assert_eq!(calls(&p, &[call], &[], &left).len(), FAILURES as usize);
        // Without an allocator's address in the program, a call through a pointer allocates
        // nothing.
        let p = crate::frontend::test_program(
            "static int twice(int x) { return 2 * x; }\n\
             static int (*op)(int) = twice;\n\
             int use(int n) { return op(n) > 4; }\n",
        );
        let call = model_call("use", 1);
        assert!(calls(&p, &[call], &[], &left).is_empty());
    }

    #[test]
    fn a_program_with_its_own_allocator_gets_no_such_calls() {
        let p = crate::frontend::test_program(
            "typedef unsigned long size_t;
             static char pool[64];
             void *malloc(size_t n) { return n <= sizeof pool ? pool : 0; }
             int use(int n) { char *p = malloc((size_t)n); return p != 0; }
",
        );
        let call = model_call("use", 1);
        let left = BTreeMap::from([("use".to_string(), vec![1])]);
        assert!(calls(&p, &[call], &[], &left).is_empty());
    }
}
