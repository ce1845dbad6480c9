//! The solver seam's answers on small formulas.

use super::*;
use crate::vc::term::{BvOp, CmpOp, Sort};

#[test]
fn proves_and_refutes_bitvector_facts() {
    let mut t = Terms::default();
    let x = t.var(Sort::Bv(8), "x");
    let one = t.bv(8, 1);
    let y = t.bin(BvOp::Add, x, one);
    // x + 1 == x is impossible
    let same = t.eq(y, x);
    let mut s = Session::new(&SolverConfig::default());
    assert_eq!(s.check(&t, same, &[]), Verdict::Proved);
    // x + 1 <u x happens exactly for x == 255
    let wrap = t.cmp(CmpOp::Ult, y, x);
    match s.check(&t, wrap, &[x]) {
        Verdict::Refuted(v) => assert_eq!(v, vec![Some(255)]),
        other => panic!("expected a model, got {other:?}"),
    }
}

#[test]
fn memory_reads_back_what_was_stored() {
    let mut t = Terms::default();
    let mem = t.var(Sort::Mem, "m");
    let a = t.var(Sort::Bv(64), "a");
    let v = t.var(Sort::Bv(32), "v");
    let m2 = t.store_value(mem, a, v);
    let r = t.load(m2, a, 4);
    let eq = t.eq(r, v);
    let ne = t.not(eq);
    let mut s = Session::new(&SolverConfig::default());
    assert_eq!(s.check(&t, ne, &[]), Verdict::Proved);
}

#[test]
fn a_question_an_earlier_model_satisfies_is_answered_by_it() {
    let mut t = Terms::default();
    let x = t.var(Sort::Bv(8), "x");
    let y = t.var(Sort::Bv(8), "y");
    let ten = t.bv(8, 10);
    let x_is_ten = t.eq(x, ten);
    let mut s = Session::new(&SolverConfig::default());
    s.set_model_reuse(true);
    assert!(matches!(s.check(&t, x_is_ten, &[]), Verdict::Refuted(_)));
    assert_eq!(s.reused_models(), 0);
    // `x > 5` holds in that model (x = 10), whatever `y` is: answered without a check,
    // with the model's value of x.
    let five = t.bv(8, 5);
    let x_above_five = t.cmp(CmpOp::Ult, five, x);
    assert_eq!(
        s.check(&t, x_above_five, &[x]),
        Verdict::Refuted(vec![Some(10)])
    );
    assert_eq!(s.reused_models(), 1);
    // `x < 3` does not hold there: asked, and found satisfiable by the solver.
    let three = t.bv(8, 3);
    let x_below_three = t.cmp(CmpOp::Ult, x, three);
    match s.check(&t, x_below_three, &[x]) {
        Verdict::Refuted(v) => assert!(v[0].is_some_and(|v| v < 3)),
        other => panic!("expected a model, got {other:?}"),
    }
    assert_eq!(s.reused_models(), 1);
    // An unsatisfiable question is never answered by a model: `x = 10 ∧ x ≠ 10`.
    let not_ten = t.not(x_is_ten);
    let both = t.and2(x_is_ten, not_ten);
    assert_eq!(s.check(&t, both, &[]), Verdict::Proved);
    // Nor is one whose context a model breaks: `y = x + 1 ∧ y = 0 ∧ x = 10`.
    let one = t.bv(8, 1);
    let x1 = t.bin(BvOp::Add, x, one);
    let def = t.eq(y, x1);
    let zero = t.bv(8, 0);
    let y_zero = t.eq(y, zero);
    let goal = t.and2(y_zero, x_is_ten);
    assert_eq!(s.check_with(&t, &[def], goal, &[]), Verdict::Proved);
    assert_eq!(s.reused_models(), 1);
    // Nor one that a fact kept from an earlier question contradicts there: `y = 0` alone
    // holds in the first model (y left free, completed as 0), but `y = x + 1` is kept
    // asserted; the check finds x = 255.
    match s.check(&t, y_zero, &[x]) {
        Verdict::Refuted(v) => assert_eq!(v, vec![Some(255)]),
        other => panic!("expected a model, got {other:?}"),
    }
    assert_eq!(s.reused_models(), 1);
}

/// `x * y != y * x` for 16-bit `x` and `y`: unsatisfiable, a proof Z3 must work for
/// (bit-blasting), so that resource limits decide whether it is found.
fn products_differ(t: &mut Terms) -> T {
    let x = t.var(Sort::Bv(16), "x");
    let y = t.var(Sort::Bv(16), "y");
    let xy = t.bin(BvOp::Mul, x, y);
    let yx = t.bin(BvOp::Mul, y, x);
    let same = t.eq(xy, yx);
    t.not(same)
}

#[test]
fn a_question_scaled_up_gets_more_resource_units() {
    let mut t = Terms::default();
    let differ = products_differ(&mut t);
    let ask = |rlimit: u32, units_scale: u32, units_cap: Option<u64>| {
        let mut s = Session::new(&SolverConfig {
            timeout_ms: 60_000,
            rlimit,
            ..SolverConfig::default()
        });
        let v = Backend::check(
            &mut s,
            &Query {
                terms: &t,
                context: &[],
                goal: differ,
                observe: &[],
                memory: Memory::Bytes,
                units_scale,
                units_cap,
            },
        );
        (v, s.work())
    };
    let (v, needed) = ask(u32::MAX / 4, 1, None);
    assert_eq!(v, Verdict::Proved);
    let half = u32::try_from(needed / 2).unwrap();
    assert!(half > 0);
    assert!(matches!(ask(half, 1, None).0, Verdict::Unknown(_)));
    assert_eq!(ask(half, 3, None).0, Verdict::Proved);
    // A cap below what the proof needs holds the scaled question back.
    assert!(matches!(
        ask(half, 3, Some(u64::from(half))).0,
        Verdict::Unknown(_)
    ));
    assert_eq!(ask(half, 3, Some(needed * 2)).0, Verdict::Proved);
}

#[test]
fn a_question_asked_again_is_answered_without_a_check() {
    let mut t = Terms::default();
    let x = t.var(Sort::Bv(8), "x");
    let ten = t.bv(8, 10);
    let x_is_ten = t.eq(x, ten);
    let not_ten = t.not(x_is_ten);
    let contradiction = t.and2(x_is_ten, not_ten);
    let mut s = Session::new(&SolverConfig::default());
    let ask = |s: &mut Session, goal: T, context: &[T], units_scale: u32, observe: &[T]| {
        Backend::check(
            s,
            &Query {
                terms: &t,
                context,
                goal,
                observe,
                memory: Memory::Bytes,
                units_scale,
                units_cap: None,
            },
        )
    };
    assert_eq!(ask(&mut s, contradiction, &[], 1, &[]), Verdict::Proved);
    assert_eq!(s.repeated_questions(), 0);
    assert_eq!(ask(&mut s, contradiction, &[], 1, &[]), Verdict::Proved);
    assert_eq!(s.repeated_questions(), 1);
    // A proof holds whatever the limits; other facts make another question.
    assert_eq!(ask(&mut s, contradiction, &[], 4, &[]), Verdict::Proved);
    assert_eq!(s.repeated_questions(), 2);
    assert_eq!(
        ask(&mut s, contradiction, &[x_is_ten], 1, &[]),
        Verdict::Proved
    );
    assert_eq!(s.repeated_questions(), 2);
    // Satisfiable is kept too, without its model: a repeat observes no values.
    assert_eq!(
        ask(&mut s, x_is_ten, &[], 1, &[x]),
        Verdict::Refuted(vec![Some(10)])
    );
    assert_eq!(
        ask(&mut s, x_is_ten, &[], 3, &[x]),
        Verdict::Refuted(vec![None])
    );
    assert_eq!(s.repeated_questions(), 3);
}

#[test]
fn an_unknown_is_kept_with_its_limits_and_a_proof_without_them() {
    let mut t = Terms::default();
    let differ = products_differ(&mut t);
    let query = |units_scale: u32| Query {
        terms: &t,
        context: &[],
        goal: differ,
        observe: &[],
        memory: Memory::Bytes,
        units_scale,
        units_cap: None,
    };
    let mut probe = Session::new(&SolverConfig {
        timeout_ms: 60_000,
        rlimit: u32::MAX / 4,
        ..SolverConfig::default()
    });
    assert_eq!(Backend::check(&mut probe, &query(1)), Verdict::Proved);
    let half = u32::try_from(probe.work() / 2).unwrap();
    let mut s = Session::new(&SolverConfig {
        timeout_ms: 60_000,
        rlimit: half,
        ..SolverConfig::default()
    });
    assert!(matches!(
        Backend::check(&mut s, &query(1)),
        Verdict::Unknown(_)
    ));
    assert!(matches!(
        Backend::check(&mut s, &query(1)),
        Verdict::Unknown(_)
    ));
    assert_eq!(s.repeated_questions(), 1);
    // With more units it is asked, and proved; then the proof answers the smaller limit too.
    assert_eq!(Backend::check(&mut s, &query(20)), Verdict::Proved);
    assert_eq!(Backend::check(&mut s, &query(1)), Verdict::Proved);
    assert_eq!(s.repeated_questions(), 2);
}

#[test]
fn float_questions_get_ieee_answers_beside_bitvector_ones() {
    use crate::vc::fp::bits_of;
    use crate::vc::term::{FpCmpOp, FpOp};
    let mut t = Terms::default();
    let x = t.var(Sort::Bv(64), "x");
    let mut s = Session::new(&SolverConfig::default());
    // A bit-vector question first, on the session's own solver.
    let zero = t.bv(64, 0);
    let x_zero = t.eq(x, zero);
    assert!(matches!(s.check(&t, x_zero, &[]), Verdict::Refuted(_)));
    // x != x holds for NaN only: satisfiable, with a NaN pattern.
    let eq = t.fp_cmp(FpCmpOp::Eq, x, x);
    let nan = t.not(eq);
    match s.check(&t, nan, &[x]) {
        Verdict::Refuted(v) => {
            let bits = v[0].expect("a value of x") as u64;
            assert!(f64::from_bits(bits).is_nan(), "{bits:#x}");
        }
        other => panic!("expected a NaN, got {other:?}"),
    }
    // x < x never holds; 2x < x with x >= 0 neither (infinities and NaN included).
    let lt = t.fp_cmp(FpCmpOp::Lt, x, x);
    assert_eq!(s.check(&t, lt, &[]), Verdict::Proved);
    let two = t.bv(64, bits_of(64, 2.0));
    let twice = t.fp_bin(FpOp::Mul, x, two);
    let below = t.fp_cmp(FpCmpOp::Lt, twice, x);
    let nonneg = t.fp_cmp(FpCmpOp::Le, zero, x);
    let both = t.and2(nonneg, below);
    assert_eq!(s.check(&t, both, &[]), Verdict::Proved);
    // Without x >= 0, a negative x does it.
    assert!(matches!(s.check(&t, below, &[]), Verdict::Refuted(_)));
    // The bit-vector questions still get their answers after the float ones.
    let one = t.bv(64, 1);
    let succ = t.bin(BvOp::Add, x, one);
    let same = t.eq(succ, x);
    assert_eq!(s.check(&t, same, &[]), Verdict::Proved);
}

#[test]
fn a_read_at_an_address_read_from_memory_is_left_to_arrays_and_stays_exact() {
    let mut t = Terms::default();
    let mem = t.var(Sort::Mem, "m");
    let (cell, obj) = (t.var(Sort::Bv(64), "cell"), t.var(Sort::Bv(64), "obj"));
    // q = *cell; *q = 7; then the 8 bytes at obj are zeroed; the byte at q.
    let q = t.load(mem, cell, 8);
    let seven = t.bv(8, 7);
    let mut m = t.store(mem, q, seven);
    let zero = t.bv(8, 0);
    for k in 0..8 {
        let off = t.bv(64, k);
        let a = t.bin(BvOp::Add, obj, off);
        m = t.store(m, a, zero);
    }
    let byte = t.select(m, q);
    // The question is hard for the default resource limit, with cases as with arrays.
    let config = SolverConfig {
        rlimit: 0,
        timeout_ms: 60_000,
        ..SolverConfig::default()
    };
    let mut s = Session::new(&config);
    let translated = s.translate(&t, byte).to_string();
    assert!(translated.starts_with("(select"), "{translated}");
    // The byte is 0 if q is among obj's bytes, else 7.
    let eight = t.bv(64, 8);
    let q_off = t.bin(BvOp::Sub, q, obj);
    let q_inside = t.cmp(CmpOp::Ult, q_off, eight);
    let is_zero = t.eq(byte, zero);
    let is_seven = t.eq(byte, seven);
    let expected = t.ite(q_inside, is_zero, is_seven);
    let wrong = t.not(expected);
    assert_eq!(s.check(&t, wrong, &[]), Verdict::Proved);
    // It is not always 7.
    let not_seven = t.not(is_seven);
    assert!(matches!(s.check(&t, not_seven, &[]), Verdict::Refuted(_)));
}
