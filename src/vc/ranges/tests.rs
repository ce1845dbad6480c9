//! Tests of the ranges: each operation's range against its results on random operands, and
//! refuted questions against every point near their constants.

use super::*;
use crate::vc::fp::bits_of;

/// A 64-bit xorshift generator: the same draws on every run.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SPECIAL: [f64; 20] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -2.5,
    3.0,
    1e-10,
    1e300,
    -1e300,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    INF,
    -INF,
    16_777_217.0,
    -0.1,
    f64::NAN,
];

/// A value of the format of `width` bits: a special one, one near a special one, or any
/// pattern.
fn value(d: &mut Draws, width: u32) -> f64 {
    let v = match d.below(3) {
        0 => SPECIAL[d.below(SPECIAL.len())],
        1 => SPECIAL[d.below(SPECIAL.len())] * (1.0 + (d.below(1000) as f64 - 500.0) * 1e-3),
        _ => f64::from_bits(d.next()),
    };
    round(width, v)
}

/// A range of the format's numbers, maybe with NaN, and a value drawn from it.
fn range(d: &mut Draws, width: u32) -> Range {
    let (a, b) = loop {
        let (a, b) = (value(d, width), value(d, width));
        if !a.is_nan() && !b.is_nan() {
            break (a, b);
        }
    };
    Range {
        num: Some((a.min(b), a.max(b))),
        nan: d.below(4) == 0,
    }
}

fn member(d: &mut Draws, r: Range, width: u32) -> f64 {
    let (lo, hi) = r.num.expect("numbers");
    if r.nan && d.below(8) == 0 {
        return f64::NAN;
    }
    let special = SPECIAL[d.below(SPECIAL.len())];
    match d.below(5) {
        0 => lo,
        1 => hi,
        2 if holds(r, special) => round(width, special),
        _ => {
            let (a, b) = (key(width, lo), key(width, hi));
            of_key(width, a + d.next() % (b - a + 1))
        }
    }
}

fn holds(r: Range, v: f64) -> bool {
    r.num.is_some_and(|(lo, hi)| lo <= v && v <= hi)
}

fn within(r: Range, v: f64) -> bool {
    if v.is_nan() {
        r.nan
    } else {
        holds(r, v)
    }
}

#[test]
fn keys_follow_the_order_of_values_in_both_formats() {
    for width in [32, 64] {
        let values = [-INF, -1e30, -1.0, -1e-30, -0.0, 0.0, 1e-30, 1.0, 1e30, INF];
        let keys: Vec<u64> = values
            .iter()
            .map(|&v| key(width, round(width, v)))
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{width}: {keys:?}");
        for &v in &values {
            let v = round(width, v);
            assert_eq!(of_key(width, key(width, v)).to_bits(), v.to_bits());
        }
    }
}

#[test]
fn the_range_of_an_operation_holds_each_of_its_results() {
    let mut d = Draws(0x9e37_79b9_7f4a_7c15);
    let ops = [FpOp::Add, FpOp::Sub, FpOp::Mul, FpOp::Div];
    let unary_ops = [
        FpUnOp::Sqrt,
        FpUnOp::Floor,
        FpUnOp::Ceil,
        FpUnOp::Trunc,
        FpUnOp::Round,
    ];
    for width in [32, 64] {
        for _ in 0..20_000 {
            let (a, b) = (range(&mut d, width), range(&mut d, width));
            let op = ops[d.below(4)];
            let r = binary(width, op, a, b);
            let uop = unary_ops[d.below(5)];
            let u = unary(width, uop, a);
            for _ in 0..8 {
                let (x, y) = (member(&mut d, a, width), member(&mut d, b, width));
                let v = apply(width, op, x, y);
                assert!(within(r, v), "{x:e} {op:?} {y:e} = {v:e}, outside {r:?}");
                let v = match uop {
                    FpUnOp::Sqrt => round(width, x.sqrt()),
                    FpUnOp::Floor => x.floor(),
                    FpUnOp::Ceil => x.ceil(),
                    FpUnOp::Trunc => x.trunc(),
                    FpUnOp::Round => x.round(),
                };
                assert!(within(u, v), "{uop:?} {x:e} = {v:e}, outside {u:?}");
                for cop in [FpCmpOp::Lt, FpCmpOp::Le, FpCmpOp::Eq] {
                    let held = match cop {
                        FpCmpOp::Lt => x < y,
                        FpCmpOp::Le => x <= y,
                        FpCmpOp::Eq => x == y,
                    };
                    let said = compare(cop, a, b);
                    let wrong = if held { Tri::False } else { Tri::True };
                    assert!(said != wrong, "{x:e} {cop:?} {y:e}: {said:?}");
                }
            }
        }
    }
}

/// The value of `t` with the free variables' patterns in `env` (booleans as 0 and 1), for
/// the terms these tests build.
fn concrete(terms: &Terms, t: T, env: &HashMap<T, u128>) -> u128 {
    let f = |x: T| f64::from_bits(concrete(terms, x, env) as u64);
    let pattern = |v: f64| bits_of(64, v);
    match terms.node(t).clone() {
        Node::True => 1,
        Node::False => 0,
        Node::Bv { value, .. } => value,
        Node::Var { .. } => env[&t],
        Node::Not(a) => 1 - concrete(terms, a, env),
        Node::And(xs) => xs.iter().all(|&x| concrete(terms, x, env) == 1) as u128,
        Node::Or(xs) => xs.iter().any(|&x| concrete(terms, x, env) == 1) as u128,
        Node::FpBin(op, a, b) => pattern(apply(64, op, f(a), f(b))),
        Node::FpCmp(op, a, b) => u128::from(match op {
            FpCmpOp::Lt => f(a) < f(b),
            FpCmpOp::Le => f(a) <= f(b),
            FpCmpOp::Eq => f(a) == f(b),
        }),
        Node::BvBin(BvOp::Xor, a, b) => concrete(terms, a, env) ^ concrete(terms, b, env),
        other => panic!("no concrete value for {other:?}"),
    }
}

fn constant(t: &mut Terms, v: f64) -> T {
    t.bv(64, bits_of(64, v))
}

/// tot_info's `LGamma` after its reflection branch: `x - 1` is not below zero, and the sum
/// of its series is what the logarithm then reads.
fn series(t: &mut Terms, x: T) -> (T, T) {
    let one = constant(t, 1.0);
    let zero = constant(t, 0.0);
    let mut x = t.fp_bin(FpOp::Sub, x, one);
    let below = t.fp_cmp(FpCmpOp::Lt, x, zero);
    let fact = t.not(below);
    let cof = [
        76.18009173,
        -86.50532033,
        24.01409822,
        -1.231739516,
        0.120858003e-2,
        -0.536382e-5,
    ];
    let mut ser = one;
    for c in cof {
        x = t.fp_bin(FpOp::Add, x, one);
        let c = constant(t, c);
        let term = t.fp_bin(FpOp::Div, c, x);
        ser = t.fp_bin(FpOp::Add, ser, term);
    }
    (fact, ser)
}

#[test]
fn a_series_bounded_for_every_argument_is_refuted_below_its_bound_only() {
    let mut t = Terms::default();
    let x = t.var(Sort::Bv(64), "x");
    let (fact, ser) = series(&mut t, x);
    let zero = constant(&mut t, 0.0);
    let negative = t.fp_cmp(FpCmpOp::Lt, ser, zero);
    assert!(refutes(&t, &[fact], negative, MAX_BOXES));
    // 2.50662827465 * ser < 1 needs ser below 0.399: never.
    let (k, one) = (constant(&mut t, 2.50662827465), constant(&mut t, 1.0));
    let scaled = t.fp_bin(FpOp::Mul, k, ser);
    let small = t.fp_cmp(FpCmpOp::Lt, scaled, one);
    assert!(refutes(&t, &[fact], small, MAX_BOXES));
    // The series is above 1 for every argument, but below 2 for large ones.
    let two = constant(&mut t, 2.0);
    let below_two = t.fp_cmp(FpCmpOp::Lt, ser, two);
    assert!(!refutes(&t, &[fact], below_two, MAX_BOXES));
    // Without the fact, `x = 0` makes a term's divisor zero.
    assert!(!refutes(&t, &[], negative, MAX_BOXES));
    // Definitions by facts are followed as the encoding writes them.
    let v = t.var(Sort::Bv(64), "float_op");
    let def = t.eq(v, ser);
    let v_negative = t.fp_cmp(FpCmpOp::Lt, v, zero);
    assert!(refutes(&t, &[fact, def], v_negative, MAX_BOXES));
    assert!(!refutes(&t, &[fact], v_negative, MAX_BOXES));
}

/// gser's loop in QGamma's context: `x > 0`, `x < a + 1` and a loop value `ap` not below
/// `a`; `ap + 1 < 0` is refuted by splitting `a` and `ap` exactly at -1, the negation of the
/// question's constant, and `x` at zero before `a` is halved.
#[test]
fn boxes_split_at_the_questions_constants() {
    let mut t = Terms::default();
    let (a, x, ap) = (
        t.var(Sort::Bv(64), "a"),
        t.var(Sort::Bv(64), "x"),
        t.var(Sort::Bv(64), "ap"),
    );
    let (zero, one) = (constant(&mut t, 0.0), constant(&mut t, 1.0));
    let x_le_0 = t.fp_cmp(FpCmpOp::Le, x, zero);
    let a1 = t.fp_bin(FpOp::Add, a, one);
    let below = t.fp_cmp(FpCmpOp::Lt, ap, a);
    let facts = [t.not(x_le_0), t.fp_cmp(FpCmpOp::Lt, x, a1), t.not(below)];
    let ap1 = t.fp_bin(FpOp::Add, ap, one);
    let goal = t.fp_cmp(FpCmpOp::Lt, ap1, zero);
    // In 256 boxes (more than 512 with halves alone).
    assert!(refutes(&t, &facts, goal, 256));
    // `ap + 1 <= 1` holds for `a = ap = -0.5`, `x = 0.25`.
    let at_most_one = t.fp_cmp(FpCmpOp::Le, ap1, one);
    assert!(!refutes(&t, &facts, at_most_one, MAX_BOXES));
}

#[test]
fn nan_and_signed_zeros_keep_their_questions_open() {
    let mut t = Terms::default();
    let (x, y) = (t.var(Sort::Bv(64), "x"), t.var(Sort::Bv(64), "y"));
    let zero = constant(&mut t, 0.0);
    let one = constant(&mut t, 1.0);
    // x and y not below zero (NaN is not), so x + y is not below zero...
    let nx = t.fp_cmp(FpCmpOp::Lt, x, zero);
    let ny = t.fp_cmp(FpCmpOp::Lt, y, zero);
    let facts = [t.not(nx), t.not(ny)];
    let sum = t.fp_bin(FpOp::Add, x, y);
    let sum_negative = t.fp_cmp(FpCmpOp::Lt, sum, zero);
    assert!(refutes(&t, &facts, sum_negative, MAX_BOXES));
    // ...but it may fail to be at least zero: NaN.
    let sum_nonneg = t.fp_cmp(FpCmpOp::Le, zero, sum);
    let not_nonneg = t.not(sum_nonneg);
    assert!(!refutes(&t, &facts, not_nonneg, MAX_BOXES));
    // x == 0 holds for -0, and 1 / -0 is -inf.
    let is_zero = t.fp_cmp(FpCmpOp::Eq, x, zero);
    let inv = t.fp_bin(FpOp::Div, one, x);
    let inv_negative = t.fp_cmp(FpCmpOp::Lt, inv, zero);
    assert!(!refutes(&t, &[is_zero], inv_negative, MAX_BOXES));
    // -x is +0 or -0 there: never below zero, never above.
    let neg = t.fp_neg(x);
    let neg_negative = t.fp_cmp(FpCmpOp::Lt, neg, zero);
    assert!(refutes(&t, &[is_zero], neg_negative, MAX_BOXES));
}

/// Draws a term over `vars` of at most `depth` operations.
fn expression(t: &mut Terms, d: &mut Draws, vars: &[T], depth: u32) -> T {
    match d.below(if depth == 0 { 2 } else { 5 }) {
        0 => vars[d.below(vars.len())],
        1 => {
            let v = SPECIAL[d.below(SPECIAL.len() - 1)];
            constant(t, v)
        }
        2 => {
            let a = expression(t, d, vars, depth - 1);
            t.fp_neg(a)
        }
        _ => {
            let ops = [FpOp::Add, FpOp::Sub, FpOp::Mul, FpOp::Div];
            let op = ops[d.below(4)];
            let a = expression(t, d, vars, depth - 1);
            let b = expression(t, d, vars, depth - 1);
            t.fp_bin(op, a, b)
        }
    }
}

fn comparison(t: &mut Terms, d: &mut Draws, a: T, b: T) -> T {
    let c = match d.below(3) {
        0 => t.fp_cmp(FpCmpOp::Lt, a, b),
        1 => t.fp_cmp(FpCmpOp::Le, a, b),
        _ => t.fp_cmp(FpCmpOp::Eq, a, b),
    };
    if d.below(3) == 0 {
        t.not(c)
    } else {
        c
    }
}

#[test]
fn no_point_satisfies_a_question_the_ranges_refute() {
    let mut d = Draws(0x2545_f491_4f6c_dd1d);
    let mut refuted = 0;
    for _ in 0..1500 {
        let mut t = Terms::default();
        let vars = [t.var(Sort::Bv(64), "x"), t.var(Sort::Bv(64), "y")];
        let mut facts = Vec::new();
        let mut points: Vec<f64> = SPECIAL.to_vec();
        for &v in &vars {
            for _ in 0..d.below(3) {
                let c = value(&mut d, 64);
                points.push(c);
                let c = constant(&mut t, c);
                let (a, b) = if d.below(2) == 0 { (v, c) } else { (c, v) };
                facts.push(comparison(&mut t, &mut d, a, b));
            }
        }
        let lhs = expression(&mut t, &mut d, &vars, 3);
        let rhs = expression(&mut t, &mut d, &vars, 1);
        let goal = comparison(&mut t, &mut d, lhs, rhs);
        if !refutes(&t, &facts, goal, 512) {
            continue;
        }
        refuted += 1;
        // Every pair of the constants (and their neighbours) and random values.
        let mut near = Vec::new();
        for &p in &points {
            if !p.is_nan() {
                near.extend([p, p.next_up(), p.next_down()]);
            }
        }
        near.push(f64::NAN);
        let mut env = HashMap::new();
        for i in 0..near.len() * near.len() + 2000 {
            let (x, y) = if i < near.len() * near.len() {
                (near[i % near.len()], near[i / near.len()])
            } else {
                (value(&mut d, 64), value(&mut d, 64))
            };
            env.insert(vars[0], bits_of(64, x));
            env.insert(vars[1], bits_of(64, y));
            let all = facts.iter().chain([&goal]);
            let holds = all.clone().all(|&c| concrete(&t, c, &env) == 1);
            assert!(!holds, "x = {x:e}, y = {y:e} satisfies a refuted question");
        }
    }
    // The draws refute some questions, so the check above checks something.
    assert!(refuted > 100, "only {refuted} questions refuted");
}
