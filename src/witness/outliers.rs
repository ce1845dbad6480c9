//! Calls with outlier tables: for the labels no earlier round covered, in functions that take a
//! pointer to numbers (integers or floating-point values wider than a byte), calls whose
//! buffers of numbers hold small counts (0 to 3) but for one element, among the first
//! [`SPREAD`], that holds one of the type's extremes; integer arguments are small counts too
//! (0 to 4: sizes and indices that stay within the buffers), floating-point ones from the
//! palette of values ([`super::values`]).
//!
//! Numeric code sums, scales and normalises arrays, and its tests feed it tables of ordinary
//! sizes. An extreme among small values is where a floating-point sum absorbs the small ones
//! (2^63 + 5 is 2^63 in a double, so a total is no longer the sum of its parts), an integer
//! sum overflows, a normalisation divides by what it did not expect: the corners no model
//! reaches when the engine sees `log` or a loop past its peeled iterations as unknown. The
//! tables are drawn, [`PER_FUNCTION`] per function, from a generator seeded by the function's
//! name: the same calls in every run. As with every witness, only a run that covers a label
//! says anything.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{CType, FloatKind, IntKind, Program};
use crate::prune::witness::{Arg, Call, Origin, BUFFER_BEFORE, BUFFER_BYTES};

/// Calls per function.
pub const PER_FUNCTION: usize = 128;
/// The extreme value goes in one of the first this many elements of a buffer.
pub const SPREAD: u64 = 16;
/// Integer arguments are drawn from 0 to this.
const MAX_COUNT: u64 = 4;
/// Elements other than the outlier are drawn from 0 to this.
const MAX_ELEMENT: u64 = 3;

/// A buffer of numbers: elements of an integer or floating-point type wider than a byte.
fn number(ty: &CType) -> Option<&CType> {
    match ty.pointee()? {
        t @ CType::Int(k) if k.bits() > 8 => Some(t),
        t @ CType::Float(FloatKind::Float | FloatKind::Double) => Some(t),
        _ => None,
    }
}

/// `value` as the bytes of `ty` (little-endian).
fn bytes_of(ty: &CType, value: Value) -> Vec<u8> {
    match ty {
        CType::Float(FloatKind::Float) => (value.as_f64() as f32).to_le_bytes().to_vec(),
        CType::Float(_) => value.as_f64().to_le_bytes().to_vec(),
        CType::Int(k) => {
            let w = (k.bits() / 8) as usize;
            let v: i128 = match value {
                Value::Small(n) => i128::from(n),
                Value::Max => {
                    if k.is_signed() {
                        (1i128 << (k.bits() - 1)) - 1
                    } else {
                        (1i128 << k.bits()) - 1
                    }
                }
                Value::Min => {
                    if k.is_signed() {
                        -(1i128 << (k.bits() - 1))
                    } else {
                        0
                    }
                }
                Value::MaxButOne => {
                    if k.is_signed() {
                        (1i128 << (k.bits() - 1)) - 2
                    } else {
                        (1i128 << k.bits()) - 2
                    }
                }
            };
            v.to_le_bytes()[..w].to_vec()
        }
        _ => Vec::new(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Value {
    Small(u64),
    Max,
    Min,
    MaxButOne,
}

impl Value {
    fn as_f64(self) -> f64 {
        match self {
            Value::Small(n) => n as f64,
            Value::Max => f64::MAX,
            Value::Min => -f64::MAX,
            Value::MaxButOne => 1e300,
        }
    }
}

const EXTREMES: [Value; 3] = [Value::Max, Value::Min, Value::MaxButOne];

/// A 64-bit xorshift generator: small, and the same sequence on every machine.
struct Draw(u64);

impl Draw {
    /// Seeded by `name` (FNV-1a), never zero.
    fn new(name: &str) -> Draw {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        Draw(h | 1)
    }
    fn next(&mut self) -> u64 {
        let mut s = self.0;
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        self.0 = s;
        s
    }
    /// From 0 to `n` - 1.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A buffer for a pointer to `elem`: small counts from the argument on, one of them (among the
/// first [`SPREAD`]) an extreme; zero before it.
fn table(draw: &mut Draw, elem: &CType) -> Vec<u8> {
    let size = bytes_of(elem, Value::Small(0)).len() as u64;
    let mut out = vec![0u8; BUFFER_BEFORE as usize];
    let n = (BUFFER_BYTES - BUFFER_BEFORE) / size;
    let outlier = draw.below(SPREAD.min(n));
    let extreme = EXTREMES[draw.below(EXTREMES.len() as u64) as usize];
    for k in 0..n {
        let v = if k == outlier {
            extreme
        } else {
            Value::Small(draw.below(MAX_ELEMENT + 1))
        };
        out.extend(bytes_of(elem, v));
    }
    out
}

/// The outlier tables for the labels `left` (by the function whose calls reach them), in the
/// functions that take a buffer of numbers. Other pointer arguments and the globals are those
/// of a call `earlier` rounds made for one of those labels (else of any of the function's
/// calls; else empty buffers and no globals). Calls in `earlier` are not made again.
pub fn calls(program: &Program, earlier: &[Call], left: &BTreeMap<String, Vec<u64>>) -> Vec<Call> {
    let made: BTreeSet<&Call> = earlier.iter().collect();
    let mut out = Vec::new();
    for (name, ids) in left {
        let Some(&first) = ids.first() else {
            continue;
        };
        let Some(f) = program.function(name) else {
            continue;
        };
        let tys: Vec<&CType> = f.params.iter().map(|p| &f.local(*p).ty).collect();
        if !tys.iter().any(|ty| number(ty).is_some()) {
            continue;
        }
        // The palette of each floating-point parameter (empty for the others).
        let palettes: Vec<Vec<u128>> = tys
            .iter()
            .map(|ty| match ty {
                CType::Float(_) => super::values::palette(ty),
                _ => Vec::new(),
            })
            .collect();
        let wanted: BTreeSet<u64> = ids.iter().copied().collect();
        let base = earlier
            .iter()
            .filter(|c| c.function == *name)
            .find(|c| wanted.contains(&c.target))
            .or_else(|| earlier.iter().find(|c| c.function == *name));
        let mut draw = Draw::new(name);
        let mut seen = BTreeSet::new();
        for _ in 0..PER_FUNCTION {
            let args: Vec<Arg> = tys
                .iter()
                .enumerate()
                .map(|(i, ty)| {
                    if let Some(elem) = number(ty) {
                        return Arg::Buffer(table(&mut draw, elem));
                    }
                    match ty {
                        CType::Int(IntKind::Bool) => Arg::Bits(u128::from(draw.below(2))),
                        CType::Int(_) => Arg::Bits(u128::from(draw.below(MAX_COUNT + 1))),
                        CType::Float(_) => {
                            let p = &palettes[i];
                            Arg::Bits(p[draw.below(p.len() as u64) as usize])
                        }
                        _ => base
                            .and_then(|b| b.args.get(i).cloned())
                            .unwrap_or(Arg::Buffer(Vec::new())),
                    }
                })
                .collect();
            let call = Call {
                function: name.clone(),
                target: first,
                args,
                globals: base.map(|b| b.globals.clone()).unwrap_or_default(),
                origin: Origin::Outliers,
                fail_allocation: None,
                hooks: false,
            };
            if !made.contains(&call) && seen.insert(call.clone()) {
                out.push(call);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_with_buffers_of_numbers_get_small_tables_with_one_extreme() {
        let p = crate::frontend::test_program(
            "long total(int n, const long *v) { long s = 0; for (int i = 0; i < n; i++) s += v[i]; return s; }\n\
             int text(const char *s, int n) { return s[n]; }\n",
        );
        let left = BTreeMap::from([
            ("total".to_string(), vec![1]),
            ("text".to_string(), vec![2]),
        ]);
        let calls = calls(&p, &[], &left);
        assert!(calls.iter().all(|c| c.function == "total"), "{calls:?}");
        assert_eq!(calls.len(), PER_FUNCTION);
        for c in &calls {
            assert_eq!(c.origin, Origin::Outliers);
            let Arg::Bits(n) = c.args[0] else {
                panic!("{c:?}")
            };
            assert!(n <= u128::from(MAX_COUNT));
            let Arg::Buffer(b) = &c.args[1] else {
                panic!("{c:?}")
            };
            assert!(b[..BUFFER_BEFORE as usize].iter().all(|x| *x == 0));
            let elems: Vec<i64> = b[BUFFER_BEFORE as usize..]
                .chunks(8)
                .map(|e| i64::from_le_bytes(e.try_into().unwrap()))
                .collect();
            let big: Vec<usize> = (0..elems.len())
                .filter(|k| !(0..=MAX_ELEMENT as i64).contains(&elems[*k]))
                .collect();
            assert_eq!(big.len(), 1, "{elems:?}");
            assert!((big[0] as u64) < SPREAD);
            assert!([i64::MAX, i64::MIN, i64::MAX - 1].contains(&elems[big[0]]));
        }
        // The same calls in every run.
        assert_eq!(calls, super::calls(&p, &[], &left));
    }
}
