//! The pointer fields of the structs a call's pointer arguments point to, filled in. A model
//! leaves every function pointer zero, so a call through such a field (a table of hooks:
//! `allocate`, `deallocate`) would jump to null. A test points each one at a function of the
//! same type whose address the program itself takes (its own hooks: `{ malloc, free,
//! realloc }`), so the call runs on as the program's own callers make it run. And a model
//! points a data-pointer field at a buffer only when its label needs it: a second call points
//! every null one at a zeroed buffer of its own (an empty string, an empty node), so the code
//! behind `if (item->child)` runs too.

use std::collections::BTreeMap;

use super::bases::remade;

use crate::cfg::callgraph::addresses_taken;
use crate::ir::{CType, FuncType, Function, Program};
use crate::prune::witness::{Arg, Call, Origin, BUFFER_BEFORE, BUFFER_BYTES};

/// Calls of earlier rounds made again with the hooks set, per function.
const BASES: usize = 2;

/// The functions a function-pointer field may be set to: those whose address the program takes
/// (not `main`, which a test renames), with their types. Built once per round of calls.
pub struct Hooks {
    taken: BTreeMap<String, FuncType>,
}

/// Whether a function of type `have` can be called through a pointer of type `want`.
fn same_type(have: &FuncType, want: &FuncType) -> bool {
    have.ret == want.ret && have.params == want.params && have.variadic == want.variadic
}

/// The function-pointer fields of `ty` at `at` (through nested structs and arrays), below
/// `end` bytes.
fn fields(program: &Program, ty: &CType, at: u64, end: u64, out: &mut Vec<(u64, FuncType)>) {
    let layout = program.layout();
    match ty {
        CType::Record(id) => {
            if let Some(r) = program.records.get(id.0 as usize).filter(|r| r.complete) {
                for f in r.fields.iter().filter(|f| f.bits.is_none()) {
                    fields(program, &f.ty, at + f.offset, end, out);
                }
            }
        }
        CType::Array(elem, Some(n)) => {
            if let Some(size) = layout.size_of(elem).filter(|s| *s > 0) {
                for k in 0..*n {
                    if at + k * size >= end {
                        break;
                    }
                    fields(program, elem, at + k * size, end, out);
                }
            }
        }
        CType::Pointer(inner) => {
            if let CType::Function(ft) = inner.as_ref() {
                if at + 8 <= end {
                    out.push((at, ft.as_ref().clone()));
                }
            }
        }
        _ => {}
    }
}

impl Hooks {
    pub fn of(program: &Program) -> Hooks {
        let taken = addresses_taken(program)
            .into_iter()
            .filter(|(name, _)| name != "main")
            .filter_map(|(name, ty)| {
                let ft = match ty {
                    CType::Function(ft) => ft,
                    CType::Pointer(inner) => match *inner {
                        CType::Function(ft) => ft,
                        _ => return None,
                    },
                    _ => return None,
                };
                Some((name, *ft))
            })
            .collect();
        Hooks { taken }
    }

    /// For a pointer argument to `to`, with `end` bytes from where it points: each of the
    /// pointee's function-pointer fields that a function of its type fits, as (offset, name);
    /// the first such function by name.
    pub fn of_pointee(&self, program: &Program, to: &CType, end: u64) -> Vec<(u64, String)> {
        let mut slots = Vec::new();
        fields(program, to, 0, end, &mut slots);
        slots
            .into_iter()
            .filter_map(|(at, want)| {
                self.taken
                    .iter()
                    .find(|(_, have)| same_type(have, &want))
                    .map(|(name, _)| (at, name.clone()))
            })
            .collect()
    }

    /// Whether a call of `f` has function-pointer fields to set: one of its pointer parameters
    /// points to a struct with a field a function the program takes the address of fits.
    pub fn has_slots(&self, program: &Program, f: &Function) -> bool {
        f.params.iter().any(|p| match &f.local(*p).ty {
            CType::Pointer(to) => !self
                .of_pointee(program, to, BUFFER_BYTES - BUFFER_BEFORE)
                .is_empty(),
            _ => false,
        })
    }
}

/// The pointer parameters of `f` that point to structs with pointer fields to fill, with
/// those fields' offsets.
fn linked_params(program: &Program, f: &Function) -> BTreeMap<usize, Vec<u64>> {
    f.params
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match &f.local(*p).ty {
            CType::Pointer(to) => {
                let offsets = crate::prune::witness::linked_offsets(program, to);
                (!offsets.is_empty()).then_some((i, offsets))
            }
            _ => None,
        })
        .collect()
}

/// `arg` with a zeroed buffer behind each of the pointer fields at `offsets` it leaves null.
fn filled(arg: &Arg, offsets: &[u64]) -> Arg {
    let (data, mut children) = match arg {
        Arg::Buffer(data) => (data.clone(), Vec::new()),
        Arg::Linked { data, children } => (data.clone(), children.clone()),
        other => return other.clone(),
    };
    for &at in offsets {
        if !children.iter().any(|(o, _)| *o == at) {
            children.push((at, vec![0; BUFFER_BEFORE as usize]));
        }
    }
    children.sort();
    Arg::Linked { data, children }
}

/// The calls for the labels `left` (by the function whose calls reach them) with their structs
/// filled in: per function whose pointer arguments point to structs with pointer fields, up to
/// [`BASES`] of the calls of `earlier` rounds ([`remade`]; `covered`: how many labels each
/// one's run covered), made again with the function-pointer fields set ([`Call::hooks`]), and
/// made again with the null data-pointer fields pointing at zeroed buffers too
/// ([`Origin::Filled`]).
pub fn calls(
    program: &Program,
    earlier: &[Call],
    covered: &[usize],
    left: &BTreeMap<String, Vec<u64>>,
) -> Vec<Call> {
    let table = Hooks::of(program);
    let accept = |c: &Call| c.origin != Origin::Filled && c.fail_allocation.is_none() && !c.hooks;
    remade(earlier, covered, left, BASES, accept, |name, bases| {
        let Some(f) = program.function(name) else {
            return Vec::new();
        };
        let hooks = table.has_slots(program, f);
        let linked = linked_params(program, f);
        let mut out = Vec::new();
        for b in bases {
            if hooks {
                out.push(Call {
                    hooks: true,
                    ..b.clone()
                });
            }
            if !linked.is_empty() {
                let args = b
                    .args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| match linked.get(&i) {
                        Some(offsets) => filled(a, offsets),
                        None => a.clone(),
                    })
                    .collect();
                out.push(Call {
                    args,
                    origin: Origin::Filled,
                    hooks,
                    ..b.clone()
                });
            }
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_of_hooks_gets_the_functions_of_its_types_the_program_takes_the_address_of() {
        let p = crate::frontend::test_program(
            "typedef unsigned long size_t;\n\
             void *malloc(size_t n);\n\
             void free(void *p);\n\
             typedef struct { void *(*allocate)(size_t); void (*release)(void *); int (*other)(int); } hooks;\n\
             typedef struct { const char *text; size_t length; hooks h; } buffer;\n\
             static hooks global = { malloc, free, 0 };\n\
             int use(buffer *b) { char *p = b->h.allocate(b->length); if (!p) return -1; b->h.release(p); return 0; }\n",
        );
        let f = p.function("use").unwrap();
        let CType::Pointer(to) = &f.local(f.params[0]).ty else {
            panic!("a pointer parameter");
        };
        // `text` and `length` take 16 bytes; `other` has no function of its type.
        let table = Hooks::of(&p);
        assert_eq!(
            table.of_pointee(&p, to, 256),
            vec![(16, "malloc".to_string()), (24, "free".to_string())]
        );
        // Fields past the end are left alone.
        assert_eq!(
            table.of_pointee(&p, to, 24),
            vec![(16, "malloc".to_string())]
        );
    }

    #[test]
    fn a_call_is_made_again_with_its_hooks_set_and_with_its_null_pointer_fields_filled() {
        let p = crate::frontend::test_program(
            "typedef unsigned long size_t;\n\
             void *malloc(size_t n);\n\
             struct node { struct node *next; char *name; void *(*allocate)(size_t); };\n\
             static void *(*keep)(size_t) = malloc;\n\
             int depth(struct node *n) { return n->next ? 1 + (n->name != 0) : 0; }\n",
        );
        let base = Call {
            function: "depth".into(),
            target: 1,
            args: vec![Arg::Buffer(vec![7; 24])],
            globals: Vec::new(),
            origin: Origin::Model,
            fail_allocation: None,
            hooks: false,
        };
        let left = BTreeMap::from([("depth".to_string(), vec![1])]);
        let calls = calls(&p, std::slice::from_ref(&base), &[1], &left);
        assert_eq!(calls.len(), 2, "{calls:?}");
        // The hooks alone, then the null fields filled too (both pointer fields, at 0 and 8).
        assert!(calls[0].hooks && calls[0].origin == Origin::Model);
        assert_eq!(calls[0].args, base.args);
        assert!(calls[1].hooks && calls[1].origin == Origin::Filled);
        let Arg::Linked { data, children } = &calls[1].args[0] else {
            panic!("{:?}", calls[1].args[0]);
        };
        assert_eq!(data, &vec![7; 24]);
        let offsets: Vec<u64> = children.iter().map(|(o, _)| *o).collect();
        assert_eq!(offsets, vec![0, 8]);
    }
}
