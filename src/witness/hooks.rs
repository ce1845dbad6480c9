//! Function-pointer fields of the structs a call's pointer arguments point to. A model leaves
//! every pointer byte zero, so a call through such a field (a table of hooks: `allocate`,
//! `deallocate`) would jump to null. A test points each one at a function of the same type
//! whose address the program itself takes (its own hooks: `{ malloc, free, realloc }`), so the
//! call runs on as the program's own callers make it run.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{visit, CType, Expr, ExprKind, FuncType, Function, Program};
use crate::prune::witness::{Call, Origin, BUFFER_BEFORE, BUFFER_BYTES};

/// Calls of earlier rounds made again with the hooks set, per function.
const BASES: usize = 2;

/// The functions whose address the program takes, by name, with their types.
fn address_taken(program: &Program) -> BTreeMap<String, FuncType> {
    let mut out = BTreeMap::new();
    let mut record = |item: visit::Item| {
        if let visit::Item::Expr(Expr {
            kind: ExprKind::FuncAddr(name),
            ty,
        }) = item
        {
            let ft = match ty {
                CType::Function(ft) => Some(ft.as_ref()),
                CType::Pointer(inner) => match inner.as_ref() {
                    CType::Function(ft) => Some(ft.as_ref()),
                    _ => None,
                },
                _ => None,
            };
            if let Some(ft) = ft {
                out.entry(name.clone()).or_insert_with(|| ft.clone());
            }
        }
    };
    for f in &program.functions {
        visit::function(f, &mut record);
    }
    for g in &program.globals {
        for s in &g.init {
            visit::stmt(s, &mut record);
        }
    }
    out
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

/// For a pointer argument to `to`, with `end` bytes from where it points: each of the
/// pointee's function-pointer fields that a function of its type fits, as (offset, name); the
/// first such function by name.
pub fn of_pointee(program: &Program, to: &CType, end: u64) -> Vec<(u64, String)> {
    let mut slots = Vec::new();
    fields(program, to, 0, end, &mut slots);
    if slots.is_empty() {
        return Vec::new();
    }
    let taken = address_taken(program);
    slots
        .into_iter()
        .filter_map(|(at, want)| {
            taken
                .iter()
                .find(|(name, have)| name.as_str() != "main" && same_type(have, &want))
                .map(|(name, _)| (at, name.clone()))
        })
        .collect()
}

/// Whether a call of `f` has function-pointer fields to set: one of its pointer parameters
/// points to a struct with a field a function the program takes the address of fits.
pub fn has_slots(program: &Program, f: &Function) -> bool {
    f.params.iter().any(|p| match &f.local(*p).ty {
        CType::Pointer(to) => !of_pointee(program, to, BUFFER_BYTES - BUFFER_BEFORE).is_empty(),
        _ => false,
    })
}

/// The calls for the labels `left` (by the function whose calls reach them) with the hooks
/// set: per function that has fields to set, up to [`BASES`] of the calls models gave in
/// `earlier` rounds for those labels (else any of its model calls), made again with them set.
pub fn calls(program: &Program, earlier: &[Call], left: &BTreeMap<String, Vec<u64>>) -> Vec<Call> {
    let mut out = Vec::new();
    for (name, ids) in left {
        if !program
            .function(name)
            .is_some_and(|f| has_slots(program, f))
        {
            continue;
        }
        let wanted: BTreeSet<u64> = ids.iter().copied().collect();
        let of_f: Vec<&Call> = earlier
            .iter()
            .filter(|c| {
                c.function == *name
                    && c.origin == Origin::Model
                    && c.fail_allocation.is_none()
                    && !c.hooks
            })
            .collect();
        let mut bases: Vec<&Call> = Vec::new();
        for c in of_f
            .iter()
            .filter(|c| wanted.contains(&c.target))
            .chain(of_f.iter())
        {
            if bases.len() < BASES && !bases.contains(c) {
                bases.push(c);
            }
        }
        out.extend(bases.into_iter().map(|b| Call {
            hooks: true,
            ..b.clone()
        }));
    }
    out.sort();
    out.dedup();
    out
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
        assert_eq!(
            of_pointee(&p, to, 256),
            vec![(16, "malloc".to_string()), (24, "free".to_string())]
        );
        // Fields past the end are left alone.
        assert_eq!(of_pointee(&p, to, 24), vec![(16, "malloc".to_string())]);
    }
}
