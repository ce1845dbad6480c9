//! Floating-point questions refuted by ranges: the values of a question's floating-point
//! terms bounded over boxes of its free floats, the boxes split until each one makes some
//! conjunct certainly false (the question is then unsatisfiable) or the budget is spent.
//!
//! Each term's range is computed with the program's own arithmetic: rounding to nearest is
//! monotone (`a <= b` implies `fl(a) <= fl(b)`), so the least and greatest results of an
//! addition over two ranges are the host's sums of their least and of their greatest
//! values, and those of a product or quotient are among its four corners, each correctly
//! rounded by the host as the program's operation rounds it. A range also says whether the
//! term may be NaN; where an operation may meet `inf - inf`, `0 * inf`, `inf / inf` or a
//! divisor that may be zero, its range is every value and NaN. Anything else (a memory read,
//! a fresh value, a conversion from an integer of unknown value) is a free float of the box;
//! a boolean the ranges cannot tell is unknown. Dropping what the ranges cannot read only
//! loses constraints: a box is refuted only when a conjunct is false at every point of it.
//!
//! The SMT encoding of the same questions bit-blasts every operation; ranges decide in
//! milliseconds the questions whose bounds are about values, not bits (a series of six
//! terms that stays above 0.39 for every argument the function accepts).

use std::collections::HashMap;

mod arith;
mod compile;

#[cfg(test)]
use arith::apply;
pub use arith::{binary, compare, unary, Range, Tri};
use arith::{key, of_key, round, INF};
use compile::{Compiler, Landmarks};

use super::fp::{format, value};
use super::term::{BvOp, FpCmpOp, FpOp, FpUnOp, Node, Sort, Terms, T};

/// At most this many evaluations of a question's terms (one per box) before it is left to
/// the solver.
pub const MAX_BOXES: usize = 8192;

/// One step of a question's evaluation; operands are earlier steps.
#[derive(Clone, Debug)]
enum Step {
    Free(usize),
    Const(Range),
    Bin(u32, FpOp, usize, usize),
    Un(u32, FpUnOp, usize),
    Neg(usize),
    Abs(usize),
    Resize(u32, usize),
    Choose(usize, usize, usize),
    /// A symbol defined by cases: the value of the first case whose condition holds, any
    /// value when none is known to.
    Join(Vec<(usize, usize)>),
    IsNan(usize),
    Bool(Tri),
    Not(usize),
    And(Vec<usize>),
    Or(Vec<usize>),
    Cmp(FpCmpOp, usize, usize),
    /// An integer: known or not.
    Int(Option<u128>),
    IntIte(usize, usize, usize),
    /// The bits `lo..lo + width` of an integer, or its sign extension from `width` bits.
    IntBits {
        arg: usize,
        lo: u32,
        width: u32,
    },
    IntSignExt {
        arg: usize,
        from: u32,
        to: u32,
    },
    IntEq(usize, usize),
}

#[derive(Clone, Copy, Debug)]
enum Value {
    F(Range),
    B(Tri),
    I(Option<u128>),
}

/// A question compiled for the ranges: its steps, its conjuncts, and its free values (each
/// float with its width, each boolean symbol with [`BOOL`]).
struct Program {
    steps: Vec<Step>,
    conjuncts: Vec<usize>,
    free: Vec<u32>,
    /// The free values each conjunct depends on.
    depends: Vec<Vec<usize>>,
    /// The question's floating-point constants and their negations, where boxes split.
    landmarks: Landmarks,
}

/// The low `width` bits set.
fn mask(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// The values of the integer `t` (signed or not) as a closed interval.
fn int_range(terms: &Terms, signed: bool, t: T) -> (i128, i128) {
    let w = terms.width(t);
    let full = |signed: bool, w: u32| -> (i128, i128) {
        if w >= 127 {
            (i128::MIN, i128::MAX)
        } else if signed {
            (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
        } else {
            (0, (1i128 << w) - 1)
        }
    };
    if let Some(c) = terms.as_const(t) {
        let v = if signed {
            super::term::to_signed(c, w)
        } else {
            c as i128
        };
        return (v, v);
    }
    match *terms.node(t) {
        Node::ZeroExt { arg, .. } => full(false, terms.width(arg)),
        Node::SignExt { arg, .. } if signed => full(true, terms.width(arg)),
        _ => full(signed, w),
    }
}

/// The width that marks a free boolean symbol (its side's values are 0 and 1).
const BOOL: u32 = 1;

/// A free value's values in a box: the numbers whose keys lie from `lo` to `hi` (none when
/// `lo > hi`), and NaN or not; a boolean's are 0 and 1.
#[derive(Clone, Copy, Debug)]
struct Side {
    lo: u64,
    hi: u64,
    nan: bool,
}

impl Side {
    fn whole(width: u32) -> Side {
        if width == BOOL {
            return Side {
                lo: 0,
                hi: 1,
                nan: false,
            };
        }
        Side {
            lo: key(width, -INF),
            hi: key(width, INF),
            nan: true,
        }
    }
    fn range(&self, width: u32) -> Range {
        Range {
            num: (self.lo <= self.hi).then(|| (of_key(width, self.lo), of_key(width, self.hi))),
            nan: self.nan,
        }
    }
    /// The parts of the side, if it has more than one value: NaN apart from the numbers,
    /// then the negative numbers, the zeros and the positive ones, then the landmark nearest
    /// the middle alone between the numbers below and above it, then halves. Also says
    /// whether the split is one of the first three kinds (not a halving).
    fn split(&self, width: u32, landmarks: &Landmarks) -> Option<(Vec<Side>, bool)> {
        let numbers = self.lo <= self.hi;
        if self.nan && numbers {
            let parts = vec![
                Side {
                    nan: false,
                    ..*self
                },
                Side {
                    lo: 1,
                    hi: 0,
                    nan: true,
                },
            ];
            return Some((parts, true));
        }
        if !numbers || self.lo == self.hi {
            return None;
        }
        let part = |lo: u64, hi: u64| Side { lo, hi, ..*self };
        if width == BOOL {
            return Some((vec![part(0, 0), part(1, 1)], true));
        }
        // Zeros first (a sign is where comparisons with zero change).
        let (minus, plus) = (key(width, -0.0), key(width, 0.0));
        if self.lo < minus && minus <= self.hi {
            return Some((vec![part(self.lo, minus - 1), part(minus, self.hi)], true));
        }
        if self.lo <= plus && plus < self.hi {
            return Some((vec![part(self.lo, plus), part(plus + 1, self.hi)], true));
        }
        // A constant of the question, or its negation, is where its comparisons and sums
        // change: alone, so that each side of it is a part of its own.
        let mid = self.lo + (self.hi - self.lo) / 2;
        let landmark = landmarks
            .keys(width)
            .iter()
            .copied()
            .filter(|&k| self.lo <= k && k <= self.hi)
            .min_by_key(|&k| k.abs_diff(mid));
        if let Some(k) = landmark {
            let mut parts = Vec::with_capacity(3);
            if self.lo < k {
                parts.push(part(self.lo, k - 1));
            }
            parts.push(part(k, k));
            if k < self.hi {
                parts.push(part(k + 1, self.hi));
            }
            return Some((parts, true));
        }
        Some((vec![part(self.lo, mid), part(mid + 1, self.hi)], false))
    }

    /// How many values the side has, NaN counting for all of them.
    fn size(&self) -> u64 {
        if self.nan && self.lo <= self.hi {
            u64::MAX
        } else {
            self.hi.saturating_sub(self.lo)
        }
    }
}

impl Program {
    fn compile(terms: &Terms, context: &[T], goal: T) -> Program {
        let mut conjuncts: Vec<T> = Vec::new();
        let flatten = |t: T, out: &mut Vec<T>| {
            let mut stack = vec![t];
            while let Some(t) = stack.pop() {
                match terms.node(t) {
                    Node::And(xs) => stack.extend(xs.iter().copied()),
                    _ => out.push(t),
                }
            }
        };
        for &c in context {
            flatten(c, &mut conjuncts);
        }
        flatten(goal, &mut conjuncts);
        // Facts `v = e` on a symbol define it: its range is that of `e`.
        let mut defs: HashMap<T, T> = HashMap::new();
        let mut kept = Vec::new();
        for &c in &conjuncts {
            if let Node::Eq(a, b) = *terms.node(c) {
                let var = |x: T| {
                    matches!(
                        terms.node(x),
                        Node::Var {
                            sort: Sort::Bv(_) | Sort::Mem,
                            ..
                        }
                    )
                };
                if var(a) && !defs.contains_key(&a) {
                    defs.insert(a, b);
                    continue;
                }
                if var(b) && !defs.contains_key(&b) {
                    defs.insert(b, a);
                    continue;
                }
            }
            kept.push(c);
        }
        // Facts `c -> v = e` (a join's φ: `e = v` or one of `d` when `c` is the conjunction
        // of the negations of `d`) define `v` as `e` where every one of `d` is false.
        let mut joins: HashMap<T, Vec<(Vec<T>, T)>> = HashMap::new();
        kept.retain(|&k| {
            let Node::Or(xs) = terms.node(k) else {
                return true;
            };
            for (i, &e) in xs.iter().enumerate() {
                let Node::Eq(a, b) = *terms.node(e) else {
                    continue;
                };
                for (v, d) in [(a, b), (b, a)] {
                    let bv_var = matches!(
                        terms.node(v),
                        Node::Var {
                            sort: Sort::Bv(_),
                            ..
                        }
                    );
                    if bv_var && !defs.contains_key(&v) {
                        let mut others = xs.clone();
                        others.remove(i);
                        joins.entry(v).or_default().push((others, d));
                        return false;
                    }
                }
            }
            true
        });
        // Conjuncts that are boolean symbols, or their negations, fix those symbols.
        let mut fixed: HashMap<T, bool> = HashMap::new();
        for &k in &kept {
            match *terms.node(k) {
                Node::Var {
                    sort: Sort::Bool, ..
                } => {
                    fixed.insert(k, true);
                }
                Node::Not(v) if matches!(terms.node(v), Node::Var { .. }) => {
                    fixed.insert(v, false);
                }
                _ => {}
            }
        }
        let mut c = Compiler {
            terms,
            defs,
            joins,
            fixed,
            floats: HashMap::new(),
            bools: HashMap::new(),
            ints: HashMap::new(),
            defining: Vec::new(),
            steps: Vec::new(),
            free: Vec::new(),
            free_of: HashMap::new(),
        };
        let roots: Vec<usize> = kept
            .into_iter()
            .filter(|&t| terms.uses_floats(t))
            .map(|t| c.boolean(t))
            .collect();
        let depends = roots.iter().map(|&r| frees_below(&c.steps, r)).collect();
        let constants: Vec<f64> = c
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Const(Range {
                    num: Some((a, b)), ..
                }) if a == b && a.is_finite() && *a != 0.0 => Some(*a),
                _ => None,
            })
            .flat_map(|v| [v, -v])
            .collect();
        let landmarks = Landmarks::of(&constants);
        Program {
            steps: c.steps,
            conjuncts: roots,
            free: c.free,
            depends,
            landmarks,
        }
    }

    /// The values of every step over a box.
    fn eval(&self, sides: &[Side], out: &mut Vec<Value>) {
        out.clear();
        for step in &self.steps {
            let f = |i: usize| match out[i] {
                Value::F(r) => r,
                _ => Range::ANY,
            };
            let b = |i: usize| match out[i] {
                Value::B(t) => t,
                _ => Tri::Unknown,
            };
            let int = |i: usize| match out[i] {
                Value::I(v) => v,
                _ => None,
            };
            let v = match step {
                Step::Free(i) if self.free[*i] == BOOL => Value::B(match sides[*i] {
                    Side { lo: 1, .. } => Tri::True,
                    Side { hi: 0, .. } => Tri::False,
                    _ => Tri::Unknown,
                }),
                Step::Free(i) => Value::F(sides[*i].range(self.free[*i])),
                Step::Const(r) => Value::F(*r),
                Step::Bin(w, op, x, y) => Value::F(binary(*w, *op, f(*x), f(*y))),
                Step::Un(w, op, x) => Value::F(unary(*w, *op, f(*x))),
                Step::Neg(x) => {
                    let r = f(*x);
                    Value::F(Range {
                        num: r.num.map(|(lo, hi)| (-hi, -lo)),
                        nan: r.nan,
                    })
                }
                Step::Abs(x) => {
                    let r = f(*x);
                    let num = r.num.map(|(lo, hi)| {
                        if lo >= 0.0 {
                            (lo, hi)
                        } else if hi <= 0.0 {
                            (-hi, -lo)
                        } else {
                            (0.0, hi.max(-lo))
                        }
                    });
                    Value::F(Range { num, nan: r.nan })
                }
                Step::Resize(w, x) => {
                    let r = f(*x);
                    Value::F(Range {
                        num: r.num.map(|(lo, hi)| (round(*w, lo), round(*w, hi))),
                        nan: r.nan,
                    })
                }
                Step::Choose(c, x, y) => Value::F(match b(*c) {
                    Tri::True => f(*x),
                    Tri::False => f(*y),
                    Tri::Unknown => f(*x).hull(f(*y)),
                }),
                Step::Join(cases) => Value::F(
                    cases
                        .iter()
                        .find(|(c, _)| b(*c) == Tri::True)
                        .map_or(Range::ANY, |(_, e)| f(*e)),
                ),
                Step::IsNan(x) => {
                    let r = f(*x);
                    Value::B(match (r.num, r.nan) {
                        (_, false) => Tri::False,
                        (None, true) => Tri::True,
                        _ => Tri::Unknown,
                    })
                }
                Step::Bool(t) => Value::B(*t),
                Step::Not(x) => Value::B(b(*x).not()),
                Step::And(xs) => Value::B(xs.iter().fold(Tri::True, |acc, &x| match (acc, b(x)) {
                    (Tri::False, _) | (_, Tri::False) => Tri::False,
                    (Tri::True, Tri::True) => Tri::True,
                    _ => Tri::Unknown,
                })),
                Step::Or(xs) => Value::B(xs.iter().fold(Tri::False, |acc, &x| match (acc, b(x)) {
                    (Tri::True, _) | (_, Tri::True) => Tri::True,
                    (Tri::False, Tri::False) => Tri::False,
                    _ => Tri::Unknown,
                })),
                Step::Cmp(op, x, y) => Value::B(compare(*op, f(*x), f(*y))),
                Step::Int(v) => Value::I(*v),
                Step::IntIte(c, x, y) => Value::I(match (b(*c), int(*x), int(*y)) {
                    (Tri::True, v, _) | (Tri::False, _, v) => v,
                    (Tri::Unknown, Some(v), Some(w)) if v == w => Some(v),
                    _ => None,
                }),
                Step::IntBits { arg, lo, width } => {
                    Value::I(int(*arg).map(|v| (v >> lo) & mask(*width)))
                }
                Step::IntSignExt { arg, from, to } => Value::I(int(*arg).map(|v| {
                    if v >> (from - 1) & 1 == 1 {
                        (v | !mask(*from)) & mask(*to)
                    } else {
                        v
                    }
                })),
                Step::IntEq(x, y) => Value::B(match (int(*x), int(*y)) {
                    (Some(v), Some(w)) => {
                        if v == w {
                            Tri::True
                        } else {
                            Tri::False
                        }
                    }
                    _ => Tri::Unknown,
                }),
            };
            out.push(v);
        }
    }
}

/// The free values below step `root`, sorted.
fn frees_below(steps: &[Step], root: usize) -> Vec<usize> {
    let mut seen = vec![false; root + 1];
    let mut stack = vec![root];
    let mut out = Vec::new();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        match &steps[i] {
            Step::Free(f) => out.push(*f),
            Step::Const(_) | Step::Bool(_) | Step::Int(_) => {}
            Step::IntIte(c, x, y) => stack.extend([*c, *x, *y]),
            Step::IntBits { arg, .. } | Step::IntSignExt { arg, .. } => stack.push(*arg),
            Step::IntEq(x, y) => stack.extend([*x, *y]),
            Step::Bin(_, _, x, y) | Step::Cmp(_, x, y) => stack.extend([*x, *y]),
            Step::Un(_, _, x)
            | Step::Neg(x)
            | Step::Abs(x)
            | Step::Resize(_, x)
            | Step::Not(x)
            | Step::IsNan(x) => stack.push(*x),
            Step::Choose(c, x, y) => stack.extend([*c, *x, *y]),
            Step::Join(cases) => stack.extend(cases.iter().flat_map(|&(c, e)| [c, e])),
            Step::And(xs) | Step::Or(xs) => stack.extend(xs.iter().copied()),
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// How good a split of a free value is: the parts refuted, not a halving, the undecided
/// conjuncts that use the value, its size.
type Score = (usize, bool, usize, u64);

/// Is `goal` unsatisfiable with the facts `context`, by ranges? `true` is a proof; `false`
/// says nothing. At most `max_boxes` boxes are evaluated.
pub fn refutes(terms: &Terms, context: &[T], goal: T, max_boxes: usize) -> bool {
    refutes_planted(terms, context, goal, max_boxes, false)
}

/// [`refutes`]; with `undecided_refutes`, a planted fault for the soundness harnesses: a box
/// that some conjunct leaves undecided counts as refuted too.
pub fn refutes_planted(
    terms: &Terms,
    context: &[T],
    goal: T,
    max_boxes: usize,
    undecided_refutes: bool,
) -> bool {
    let p = Program::compile(terms, context, goal);
    if p.conjuncts.is_empty() {
        return false;
    }
    let whole: Vec<Side> = p.free.iter().map(|&w| Side::whole(w)).collect();
    let all: Vec<usize> = (0..p.conjuncts.len()).collect();
    let mut stack = vec![(whole, all)];
    let mut values = Vec::with_capacity(p.steps.len());
    let mut boxes = 0;
    while let Some((sides, open)) = stack.pop() {
        boxes += 1;
        if boxes > max_boxes {
            return false;
        }
        p.eval(&sides, &mut values);
        let mut unknown = Vec::new();
        let mut refuted = false;
        for &c in &open {
            match values[p.conjuncts[c]] {
                Value::B(Tri::False) => {
                    refuted = true;
                    break;
                }
                Value::B(Tri::True) => {}
                _ if undecided_refutes => {
                    refuted = true;
                    break;
                }
                _ => unknown.push(c),
            }
        }
        if refuted {
            continue;
        }
        // The free values an undecided conjunct depends on (those that split are candidates).
        let mut candidates: Vec<usize> = unknown
            .iter()
            .flat_map(|&c| p.depends[c].iter().copied())
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        // The free value whose parts are refuted the most (a look ahead: the parts of each
        // candidate are evaluated); among equals, one whose split is at NaN, a zero or a
        // constant rather than a halving (halving one value while another is still whole
        // digs where nothing is refuted), then the one more undecided conjuncts depend on,
        // then the widest.
        let mut chosen: Option<(usize, Vec<Side>, Score)> = None;
        for &f in &candidates {
            let Some((parts, structural)) = sides[f].split(p.free[f], &p.landmarks) else {
                continue;
            };
            let mut refuted = 0;
            for part in &parts {
                let mut trial = sides.clone();
                trial[f] = *part;
                boxes += 1;
                p.eval(&trial, &mut values);
                if unknown
                    .iter()
                    .any(|&c| matches!(values[p.conjuncts[c]], Value::B(Tri::False)))
                {
                    refuted += 1;
                }
            }
            let uses = unknown
                .iter()
                .filter(|&&c| p.depends[c].contains(&f))
                .count();
            let score = (refuted, structural, uses, sides[f].size());
            if chosen.as_ref().is_none_or(|(_, _, best)| score > *best) {
                chosen = Some((f, parts, score));
            }
        }
        let Some((f, parts, _)) = chosen else {
            return false;
        };
        for part in parts {
            let mut next = sides.clone();
            next[f] = part;
            stack.push((next, unknown.clone()));
        }
    }
    true
}

#[cfg(test)]
mod tests;
