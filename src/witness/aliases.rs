//! Calls with two pointer arguments into one buffer. A model gives each pointer argument a
//! buffer of its own, so code that compares them (`if (a == b)`) or walks from one to the other
//! (`begin` and `end`, `input_end - p < 6`) never sees them related. For the labels left, the
//! calls of earlier rounds are made again with a later pointer argument pointing at an earlier
//! one of the same type, [`OFFSETS`] bytes past it.

use std::collections::BTreeMap;

use super::bases::remade;

use crate::ir::{CType, Function, Program};
use crate::prune::witness::{Arg, Call, Origin, BUFFER_BEFORE, BUFFER_BYTES};

/// How far past the earlier argument the later one points: the same object, then small
/// distances (a short token, two of them, a longer run).
pub const OFFSETS: [u64; 4] = [0, 6, 12, 32];
/// Calls of earlier rounds made again, per function.
const BASES: usize = 2;
/// Pairs of arguments per function.
const PAIRS: usize = 3;

/// The pairs `(i, j)`, `i < j`, of `f`'s pointer parameters to the same type.
fn pairs(f: &Function) -> Vec<(usize, usize)> {
    let pointee = |i: usize| match &f.local(f.params[i]).ty {
        CType::Pointer(to) if !matches!(to.as_ref(), CType::Function(_)) => Some(to.as_ref()),
        _ => None,
    };
    let mut out = Vec::new();
    for j in 0..f.params.len() {
        for i in 0..j {
            if pointee(i).is_some() && pointee(i) == pointee(j) {
                out.push((i, j));
            }
        }
    }
    out.truncate(PAIRS);
    out
}

/// The calls for the labels `left` (by the function whose calls reach them) with two pointer
/// arguments into one buffer: per function with pointer parameters of one type, up to
/// [`BASES`] of the calls of `earlier` rounds ([`remade`]; `covered`: how many
/// labels each one's run covered), made again for each pair whose earlier argument is a
/// buffer, with the later one at each of [`OFFSETS`] into it.
pub fn calls(
    program: &Program,
    earlier: &[Call],
    covered: &[usize],
    left: &BTreeMap<String, Vec<u64>>,
) -> Vec<Call> {
    let accept = |c: &Call| c.fail_allocation.is_none() && c.origin != Origin::Aliases;
    remade(earlier, covered, left, BASES, accept, |name, bases| {
        let pairs = program.function(name).map(pairs).unwrap_or_default();
        let mut out = Vec::new();
        for b in bases {
            for &(i, j) in &pairs {
                if !matches!(b.args.get(i), Some(Arg::Buffer(_) | Arg::Linked { .. })) {
                    continue;
                }
                for offset in OFFSETS
                    .into_iter()
                    .filter(|o| *o < BUFFER_BYTES - BUFFER_BEFORE)
                {
                    let mut call = b.clone();
                    call.args[j] = Arg::Alias { of: i, offset };
                    call.origin = Origin::Aliases;
                    out.push(call);
                }
            }
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_of_one_type_are_made_to_point_into_one_buffer() {
        let p = crate::frontend::test_program(
            "int same(const char *a, int n, const char *b) { return a == b ? n : 0; }\n\
             int apart(const char *a, const int *b) { return a != 0 && b != 0; }\n",
        );
        let call = |function: &str| Call {
            function: function.into(),
            target: 1,
            args: vec![Arg::Buffer(vec![1]), Arg::Bits(2), Arg::Buffer(vec![3])],
            globals: Vec::new(),
            origin: Origin::Model,
            fail_allocation: None,
            hooks: false,
        };
        let earlier = vec![call("same"), call("apart")];
        let left = BTreeMap::from([
            ("same".to_string(), vec![1]),
            ("apart".to_string(), vec![1]),
        ]);
        let calls = calls(&p, &earlier, &[1, 1], &left);
        // `apart`'s pointers differ in type: no call.
        assert!(calls.iter().all(|c| c.function == "same"));
        let offsets: Vec<Arg> = calls.iter().map(|c| c.args[2].clone()).collect();
        assert_eq!(
            offsets,
            OFFSETS
                .iter()
                .map(|&offset| Arg::Alias { of: 0, offset })
                .collect::<Vec<_>>()
        );
        assert!(calls
            .iter()
            .all(|c| c.origin == Origin::Aliases && c.args[..2] == earlier[0].args[..2]));
    }
}
