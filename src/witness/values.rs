//! Calls from a palette of values: for the labels no model's run covered, the calls of their
//! functions again with each scalar argument taken from a fixed palette (zeros of both signs,
//! small integers and halves, powers of ten, tiny values of both signs, the type's extremes,
//! subnormals, infinities, NaN),
//! the rest of the call (buffers, globals) as a model gave it.
//!
//! A model is only as good as the encoding: where a label's way goes through what the engine
//! leaves unknown (a library function such as `log` or `sin`, a loop past its peeled
//! iterations), its values are a guess that the run rarely follows. The palette holds the
//! values that such code is written about (signs, zero, one, the edges of a type), so a run
//! from it often reaches what no model does; as with every witness, only a run that covers a
//! label says anything.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{CType, FloatKind, IntKind, Program};
use crate::prune::witness::{Arg, Call, Origin};

/// Calls per function, at most: all combinations of the palette over its scalar arguments
/// when there are no more, else each scalar argument varied alone.
pub const PER_FUNCTION: usize = 1024;
/// Calls of earlier rounds whose scalar arguments are varied, per function.
const BASES: usize = 2;

const FLOATS: &[f64] = &[
    0.0,
    -0.0,
    0.5,
    -0.5,
    1.0,
    -1.0,
    1.5,
    -1.5,
    2.0,
    -2.0,
    2.5,
    -2.5,
    3.5,
    -3.5,
    10.0,
    -10.0,
    100.0,
    -100.0,
    1e-300,
    -1e-300,
    1e300,
    -1e300,
    f64::MAX,
    -f64::MAX,
    5e-324,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
];

const INTS: &[i128] = &[0, 1, -1, 2, -2, 3, 4, 7, 8, 16, 100, -100, 255, 256, 1000];

/// The palette of a scalar type, as the bits of its values, each once.
pub fn palette(ty: &CType) -> Vec<u128> {
    let mut out: Vec<u128> = Vec::new();
    let mut push = |b: u128| {
        if !out.contains(&b) {
            out.push(b);
        }
    };
    match ty {
        CType::Int(IntKind::Bool) => {
            push(0);
            push(1);
        }
        CType::Int(k) => {
            let w = k.bits();
            let mask = if w >= 128 {
                u128::MAX
            } else {
                (1u128 << w) - 1
            };
            let (min, max) = if k.is_signed() {
                (1u128 << (w - 1), mask >> 1)
            } else {
                (0, mask)
            };
            for v in INTS {
                let b = (*v as u128) & mask;
                // A negative value of an unsigned type is its largest ones; keep small ones.
                if k.is_signed() || *v >= 0 {
                    push(b);
                }
            }
            push(max);
            push(min);
            push(max.wrapping_sub(1) & mask);
        }
        CType::Float(FloatKind::Float) => {
            for v in FLOATS {
                push(u128::from((*v as f32).to_bits()));
            }
            push(u128::from(f32::MAX.to_bits()));
            push(u128::from((-f32::MAX).to_bits()));
            push(u128::from(1e-45f32.to_bits()));
        }
        CType::Float(_) => {
            for v in FLOATS {
                push(u128::from(v.to_bits()));
            }
        }
        _ => {}
    }
    out
}

/// The calls from the palette for the labels `left` (by the function whose calls reach them,
/// as [`crate::prune::witness::entries`] gives them), varying the calls `earlier` rounds made:
/// per function, those made for labels still left (else any of its calls; else one with every
/// scalar zero and zeroed buffers), at most [`BASES`] of them, at most [`PER_FUNCTION`]
/// calls. Calls in `earlier` are not made again.
pub fn calls(program: &Program, earlier: &[Call], left: &BTreeMap<String, Vec<u64>>) -> Vec<Call> {
    let made: BTreeSet<&Call> = earlier.iter().collect();
    let mut out: Vec<Call> = Vec::new();
    for (name, ids) in left {
        let Some(f) = program.function(name) else {
            continue;
        };
        let Some(&first) = ids.first() else {
            continue;
        };
        let tys: Vec<&CType> = f.params.iter().map(|p| &f.local(*p).ty).collect();
        let scalars: Vec<(usize, Vec<u128>)> = tys
            .iter()
            .enumerate()
            .map(|(i, ty)| (i, palette(ty)))
            .filter(|(_, p)| !p.is_empty())
            .collect();
        if scalars.is_empty() {
            continue;
        }
        let wanted: BTreeSet<u64> = ids.iter().copied().collect();
        let of_f: Vec<&Call> = earlier.iter().filter(|c| c.function == *name).collect();
        // Calls that differ only in their scalars are one base.
        let mut keys = BTreeSet::new();
        let mut bases: Vec<Call> = of_f
            .iter()
            .filter(|c| wanted.contains(&c.target))
            .chain(of_f.iter())
            .filter(|c| {
                let mut key = (**c).clone();
                for (i, _) in &scalars {
                    key.args[*i] = Arg::Bits(0);
                }
                keys.insert((key.args, key.globals))
            })
            .map(|c| (*c).clone())
            .collect();
        if bases.is_empty() {
            bases.push(Call {
                function: name.clone(),
                target: first,
                args: tys
                    .iter()
                    .map(|ty| match ty {
                        CType::Pointer(_) => Arg::Buffer(Vec::new()),
                        _ => Arg::Bits(0),
                    })
                    .collect(),
                globals: Vec::new(),
                origin: Origin::Palette,
                fail_allocation: None,
                hooks: false,
            });
        }
        let grid: usize = scalars
            .iter()
            .map(|(_, p)| p.len())
            .try_fold(1usize, |n, k| n.checked_mul(k))
            .unwrap_or(usize::MAX);
        let mut mine: Vec<Call> = Vec::new();
        let mut seen: BTreeSet<Call> = BTreeSet::new();
        for base in bases.iter().take(BASES) {
            let mut base = base.clone();
            base.origin = Origin::Palette;
            let varied: Vec<Vec<u128>> = if grid <= PER_FUNCTION {
                combinations(&scalars)
            } else {
                one_at_a_time(&base, &scalars)
            };
            for values in varied {
                if mine.len() >= PER_FUNCTION {
                    break;
                }
                let mut call = base.clone();
                for ((i, _), v) in scalars.iter().zip(values) {
                    call.args[*i] = Arg::Bits(v);
                }
                if made.contains(&call) || !seen.insert(call.clone()) {
                    continue;
                }
                mine.push(call);
            }
        }
        out.extend(mine);
    }
    out
}

/// Every combination of the palettes, the first argument's value changing slowest.
fn combinations(scalars: &[(usize, Vec<u128>)]) -> Vec<Vec<u128>> {
    let mut out: Vec<Vec<u128>> = vec![Vec::new()];
    for (_, p) in scalars {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                p.iter().map(move |v| {
                    let mut next = prefix.clone();
                    next.push(*v);
                    next
                })
            })
            .collect();
    }
    out
}

/// The base call's scalar values with one of them taken from its palette, for each in turn.
fn one_at_a_time(base: &Call, scalars: &[(usize, Vec<u128>)]) -> Vec<Vec<u128>> {
    let own: Vec<u128> = scalars
        .iter()
        .map(|(i, _)| match base.args.get(*i) {
            Some(Arg::Bits(b)) => *b,
            _ => 0,
        })
        .collect();
    let mut out = Vec::new();
    for (k, (_, p)) in scalars.iter().enumerate() {
        for v in p {
            let mut values = own.clone();
            values[k] = *v;
            out.push(values);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_palette_holds_each_types_edges_once() {
        let int = palette(&CType::Int(IntKind::Int));
        for v in [0i32, 1, -1, 1000, i32::MAX, i32::MIN, i32::MAX - 1] {
            assert!(int.contains(&u128::from(v as u32)), "{v}");
        }
        let uchar = palette(&CType::Int(IntKind::UChar));
        assert_eq!(uchar.iter().filter(|b| **b == 255).count(), 1);
        assert!(uchar.iter().all(|b| *b <= 255));
        let double = palette(&CType::Float(FloatKind::Double));
        let values: Vec<f64> = double.iter().map(|b| f64::from_bits(*b as u64)).collect();
        assert!(values.iter().any(|v| v.is_nan()));
        assert!(values.contains(&f64::NEG_INFINITY));
        // Tiny values of both signs: their reciprocals are huge (`1.0 / a` of tot_info's `gser`).
        assert!(values.contains(&1e-300) && values.contains(&-1e-300));
        // Both zeros: they compare equal but are different values.
        assert!(double.contains(&0) && double.contains(&u128::from((-0.0f64).to_bits())));
        let float = palette(&CType::Float(FloatKind::Float));
        let set: BTreeSet<u128> = float.iter().copied().collect();
        assert_eq!(set.len(), float.len());
        assert!(float.contains(&u128::from(f32::MAX.to_bits())));
        assert!(palette(&CType::Int(IntKind::Bool)) == vec![0, 1]);
    }

    #[test]
    fn small_signatures_get_every_combination_and_big_ones_each_argument_alone() {
        let p = crate::frontend::test_program(
            "int two(double a, int n, char *s) { return a > n && s; }\n\
             int four(int a, int b, int c, int d) { return a + b + c + d; }\n",
        );
        let base = Call {
            function: "two".into(),
            target: 1,
            args: vec![Arg::Bits(7), Arg::Bits(9), Arg::Buffer(vec![b'x'])],
            globals: Vec::new(),
            origin: Origin::Model,
            fail_allocation: None,
            hooks: false,
        };
        let left = BTreeMap::from([("two".to_string(), vec![1]), ("four".to_string(), vec![2])]);
        let calls = calls(&p, std::slice::from_ref(&base), &left);
        let two: Vec<&Call> = calls.iter().filter(|c| c.function == "two").collect();
        let n_double = palette(&CType::Float(FloatKind::Double)).len();
        let n_int = palette(&CType::Int(IntKind::Int)).len();
        assert_eq!(two.len(), n_double * n_int);
        // The buffer is the model's; the scalars are the palette's.
        assert!(two
            .iter()
            .all(|c| c.origin == Origin::Palette && c.args[2] == Arg::Buffer(vec![b'x'])));
        assert!(two.iter().any(
            |c| c.args[0] == Arg::Bits(u128::from(f64::INFINITY.to_bits()))
                && c.args[1] == Arg::Bits(u128::from(i32::MIN as u32))
        ));
        // No model call of `four`: zeros varied one argument at a time (15^4 is too many).
        let four: Vec<&Call> = calls.iter().filter(|c| c.function == "four").collect();
        assert_eq!(four.len(), 4 * (n_int - 1) + 1);
        assert!(four
            .iter()
            .all(|c| c.args.iter().filter(|a| **a != Arg::Bits(0)).count() <= 1));
    }
}
