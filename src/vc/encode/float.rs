//! Floating point in the encoding: `float` and `double` values as IEEE-754 bit patterns
//! ([`crate::vc::fp`]), with C's arithmetic, comparisons and conversions, and the results of
//! the math functions [`crate::libc::math_function`] knows. `long double` values stay fresh.

use super::*;
use crate::libc::{math_function, Math};
use crate::vc::fp;
use crate::vc::term::{FpCmpOp, FpOp, FpUnOp};

/// How much floating-point work one function's encoding defines, in weights of operations
/// (an addition, subtraction, conversion or rounding 1, a multiplication 4, a division or
/// square root 8); operations beyond it give fresh values. Each operation's result is a
/// symbol defined by a fact, and a question takes in only the definitions nearest to it, up
/// to [`crate::vc::cone::QUESTION_FP_WORK`]: this bound only keeps the encoding's size in
/// check.
const FP_WORK: u32 = 4096;

/// The width of a modelled floating-point type (`float`, `double`), if `ty` is one.
fn format_of(ty: &CType) -> Option<u32> {
    match ty {
        CType::Float(_) => Some(width_of(ty)).filter(|w| fp::is_format(*w)),
        _ => None,
    }
}

impl Enc<'_> {
    /// The result of a floating-point operation of `weight` whose value is `exact`: `exact`
    /// itself when it is a constant, else a symbol defined equal to it by a fact of that work
    /// (the same symbol for the same operation on the same operands), or a fresh value once
    /// the function's work is spent. A question may leave the definition out
    /// ([`crate::vc::cone::needed_facts`]): the symbol is then any value, so it is neither of
    /// the entry state nor exactly defined ([`super::Exactness`]).
    fn fp_define(&mut self, exact: T, weight: u32) -> T {
        if self.t.as_const(exact).is_some() {
            return exact;
        }
        if let Some(&v) = self.fp_defs.get(&exact) {
            return v;
        }
        let w = self.t.width(exact);
        if self.fp_work + weight > FP_WORK {
            return self.fresh(w, "float_work");
        }
        self.fp_work += weight;
        let v = self.fresh(w, "float_op");
        let fact = self.t.eq(v, exact);
        self.facts.push(Fact {
            about: vec![v],
            needs_all: false,
            fact,
            work: weight,
        });
        self.fp_defs.insert(exact, v);
        v
    }

    /// A floating-point result whose NaN stands for any NaN: the sign and payload of the NaN
    /// an operation makes are the hardware's, which the encoding does not model.
    /// The same operation on the same operands gives the same NaN (the hardware is
    /// deterministic): one choice per result term.
    fn fp_result(&mut self, r: T) -> T {
        let w = self.t.width(r);
        if self
            .t
            .as_const(r)
            .is_some_and(|c| c != fp::canonical_nan(w))
        {
            return r;
        }
        if let Some(&v) = self.fp_results.get(&r) {
            return v;
        }
        let (_, s) = fp::format(w);
        let sign = self.fresh(1, "nan_sign");
        let frac = self.fresh(s - 1, "nan_payload");
        let any = self.t.fp_any_nan(w, sign, frac);
        let nan = self.t.fp_is_nan(r);
        let v = self.t.ite(nan, any, r);
        self.fp_results.insert(r, v);
        v
    }

    /// A floating-point constant of type `ty`.
    pub(super) fn float_const(&mut self, v: f64, ty: &CType) -> T {
        match format_of(ty) {
            Some(w) => self.t.bv(w, fp::bits_of(w, v)),
            None => self.fresh_of(ty, "long_double"),
        }
    }

    /// `-a` on a floating-point operand.
    pub(super) fn float_neg(&mut self, a: &Expr, ty: &CType, st: &mut State) -> T {
        match (format_of(&a.ty), format_of(ty)) {
            (Some(w), Some(v)) if w == v => {
                let x = self.eval(a, st);
                self.t.fp_neg(x)
            }
            _ => self.fresh_of(ty, "float"),
        }
    }

    /// `a op b` with floating-point operands of one type (the lowering converts them).
    pub(super) fn float_binary(
        &mut self,
        op: BinOp,
        a: &Expr,
        b: &Expr,
        ty: &CType,
        st: &mut State,
    ) -> T {
        let fop = match op {
            BinOp::Add => FpOp::Add,
            BinOp::Sub => FpOp::Sub,
            BinOp::Mul => FpOp::Mul,
            BinOp::Div => FpOp::Div,
            _ => return self.fresh_of(ty, "float"),
        };
        match (format_of(&a.ty), format_of(&b.ty), format_of(ty)) {
            (Some(x), Some(y), Some(r)) if x == y && y == r => {
                let x = self.eval(a, st);
                let y = self.eval(b, st);
                let v = self.t.fp_bin(fop, x, y);
                let weight = match fop {
                    FpOp::Add | FpOp::Sub => 1,
                    FpOp::Mul => 4,
                    FpOp::Div => 8,
                };
                let r = self.fp_result(v);
                let known = self.fp_defs.contains_key(&r);
                let out = self.fp_define(r, weight);
                if !known && self.t.as_const(out).is_none() {
                    let signs = self.binary_signs(fop, x, y, out);
                    self.fact(&[out], signs);
                }
                out
            }
            _ => self.fresh_of(ty, "float"),
        }
    }

    /// `!(v < 0)`: +0, -0, a positive number, +∞ or NaN.
    fn not_negative(&mut self, v: T) -> T {
        let zero = self.t.bv(self.t.width(v), 0);
        let lt = self.t.fp_cmp(FpCmpOp::Lt, v, zero);
        self.t.not(lt)
    }

    /// `!(v > 0)`: +0, -0, a negative number, -∞ or NaN.
    fn not_positive(&mut self, v: T) -> T {
        let zero = self.t.bv(self.t.width(v), 0);
        let gt = self.t.fp_cmp(FpCmpOp::Lt, zero, v);
        self.t.not(gt)
    }

    /// What IEEE-754 fixes of the sign of `r = x op y` whatever the rounding, as a fact of no
    /// work: a question that leaves the operation's definition out
    /// ([`crate::vc::cone::needed_facts`]) still knows that a sum of values not negative is not
    /// negative. A zero result satisfies both bounds, whatever its sign, and NaN satisfies
    /// them too, so only the signs of nonzero results matter: a sum or difference keeps the
    /// sign its operands share, a product or quotient has the sign their signs give, but a
    /// quotient by a zero is an infinity of the zero's sign, so a quotient's rule asks for a
    /// divisor that is not zero. A quotient also gets its size ([`Self::quotient_size`]).
    fn binary_signs(&mut self, op: FpOp, x: T, y: T, r: T) -> T {
        let (nn_x, np_x) = (self.not_negative(x), self.not_positive(x));
        let (nn_y, np_y) = (self.not_negative(y), self.not_positive(y));
        let (nn_r, np_r) = (self.not_negative(r), self.not_positive(r));
        let (up, down) = match op {
            FpOp::Add => (self.t.and2(nn_x, nn_y), self.t.and2(np_x, np_y)),
            FpOp::Sub => (self.t.and2(nn_x, np_y), self.t.and2(np_x, nn_y)),
            FpOp::Mul => {
                let (a, b) = (self.t.and2(nn_x, nn_y), self.t.and2(np_x, np_y));
                let (c, d) = (self.t.and2(nn_x, np_y), self.t.and2(np_x, nn_y));
                (self.t.or2(a, b), self.t.or2(c, d))
            }
            FpOp::Div => {
                let w = self.t.width(y);
                let zero = self.t.bv(w, 0);
                let pos_y = self.t.fp_cmp(FpCmpOp::Lt, zero, y);
                let neg_y = self.t.fp_cmp(FpCmpOp::Lt, y, zero);
                let (a, b) = (self.t.and2(nn_x, pos_y), self.t.and2(np_x, neg_y));
                let (c, d) = (self.t.and2(nn_x, neg_y), self.t.and2(np_x, pos_y));
                (self.t.or2(a, b), self.t.or2(c, d))
            }
        };
        let up = self.t.implies(up, nn_r);
        let down = self.t.implies(down, np_r);
        let signs = self.t.and2(up, down);
        match op {
            FpOp::Div => {
                let size = self.quotient_size(x, y, r);
                self.t.and2(signs, size)
            }
            _ => signs,
        }
    }

    /// What IEEE-754 fixes of the size of `r = x / y` whatever the rounding: not below 1 in
    /// magnitude when `|x| >= |y|` and `y` is not zero, not above 1 when `|x| <= |y|` (1 is a
    /// floating-point number, so rounding does not cross it; NaN, from `0 / 0` or `inf / inf`,
    /// satisfies both).
    fn quotient_size(&mut self, x: T, y: T, r: T) -> T {
        let w = self.t.width(r);
        let (abs_x, abs_y, abs_r) = (self.t.fp_abs(x), self.t.fp_abs(y), self.t.fp_abs(r));
        let (zero, one) = (self.t.bv(w, 0), self.t.bv(w, fp::bits_of(w, 1.0)));
        let y_zero = self.t.fp_cmp(FpCmpOp::Eq, y, zero);
        let y_nonzero = self.t.not(y_zero);
        let bigger = self.t.fp_cmp(FpCmpOp::Le, abs_y, abs_x);
        let bigger = self.t.and2(bigger, y_nonzero);
        let below_one = self.t.fp_cmp(FpCmpOp::Lt, abs_r, one);
        let not_below = self.t.not(below_one);
        let at_least = self.t.implies(bigger, not_below);
        let smaller = self.t.fp_cmp(FpCmpOp::Le, abs_x, abs_y);
        let above_one = self.t.fp_cmp(FpCmpOp::Lt, one, abs_r);
        let not_above = self.t.not(above_one);
        let at_most = self.t.implies(smaller, not_above);
        self.t.and2(at_least, at_most)
    }

    /// The comparison `a op b` of floating-point operands of one type: false when either is
    /// NaN, but for `!=`.
    pub(super) fn float_compare(&mut self, op: BinOp, a: &Expr, b: &Expr, st: &mut State) -> T {
        match (format_of(&a.ty), format_of(&b.ty)) {
            (Some(x), Some(y)) if x == y => {
                let x = self.eval(a, st);
                let y = self.eval(b, st);
                match op {
                    BinOp::Lt => self.t.fp_cmp(FpCmpOp::Lt, x, y),
                    BinOp::Le => self.t.fp_cmp(FpCmpOp::Le, x, y),
                    BinOp::Gt => self.t.fp_cmp(FpCmpOp::Lt, y, x),
                    BinOp::Ge => self.t.fp_cmp(FpCmpOp::Le, y, x),
                    BinOp::Eq => self.t.fp_cmp(FpCmpOp::Eq, x, y),
                    _ => {
                        let eq = self.t.fp_cmp(FpCmpOp::Eq, x, y);
                        self.t.not(eq)
                    }
                }
            }
            _ => self.t.var(Sort::Bool, "float_cmp"),
        }
    }

    /// Is the floating-point value `v` non-zero (true for NaN, as in C)?
    pub(super) fn float_truth(&mut self, v: T) -> T {
        let zero = self.t.bv(self.t.width(v), 0);
        let is_zero = self.t.fp_cmp(FpCmpOp::Eq, v, zero);
        self.t.not(is_zero)
    }

    /// C conversions from or to a floating-point type (C11 6.3.1.4, 6.3.1.5): rounding to
    /// nearest; a value out of the target integer's range (undefined) gives a fresh value.
    pub(super) fn float_convert(&mut self, v: T, from: &CType, to: &CType) -> T {
        let w = width_of(to);
        let r = match (from, to, format_of(from), format_of(to)) {
            (CType::Float(_), CType::Float(_), Some(_), Some(tw)) => {
                let r = self.t.fp_resize(tw, v);
                self.fp_result(r)
            }
            (CType::Int(k), CType::Float(_), _, Some(tw)) => self.t.fp_of_int(k.is_signed(), tw, v),
            (CType::Float(_), CType::Int(IntKind::Bool), Some(_), _) => {
                let nz = self.float_truth(v);
                self.bool_to_int(nz, 8)
            }
            (CType::Float(_), CType::Int(k), Some(_), _) => {
                let fits = self.t.fp_fits_int(k.is_signed(), w, v);
                let i = self.t.fp_to_int(k.is_signed(), w, v);
                let junk = self.fresh(w, "float_out_of_range");
                self.t.ite(fits, i, junk)
            }
            _ => return self.fresh(w, "float_conv"),
        };
        let known = self.fp_defs.contains_key(&r);
        let out = self.fp_define(r, 1);
        // A conversion keeps the sign (a zero may change its own), as a fact of no work (see
        // [`Self::binary_signs`]).
        if !known && self.t.as_const(out).is_none() {
            let signs = match (from, format_of(to)) {
                (CType::Int(k), Some(_)) => {
                    let zero = self.t.bv(self.t.width(v), 0);
                    let nn_r = self.not_negative(out);
                    if k.is_signed() {
                        let np_r = self.not_positive(out);
                        let ge = self.t.cmp(CmpOp::Sle, zero, v);
                        let le = self.t.cmp(CmpOp::Sle, v, zero);
                        let up = self.t.implies(ge, nn_r);
                        let down = self.t.implies(le, np_r);
                        Some(self.t.and2(up, down))
                    } else {
                        Some(nn_r)
                    }
                }
                (CType::Float(_), Some(_)) if format_of(from).is_some() => {
                    let (nn_v, np_v) = (self.not_negative(v), self.not_positive(v));
                    let (nn_r, np_r) = (self.not_negative(out), self.not_positive(out));
                    let up = self.t.implies(nn_v, nn_r);
                    let down = self.t.implies(np_v, np_r);
                    Some(self.t.and2(up, down))
                }
                _ => None,
            };
            if let Some(signs) = signs {
                self.fact(&[out], signs);
            }
        }
        out
    }

    /// The result of a call to a math function the library defines, when its argument and
    /// the destination have the function's type; `None` for any other call.
    pub(super) fn math_call(
        &mut self,
        name: &str,
        args: &[Expr],
        dst_ty: &CType,
        st: &mut State,
    ) -> Option<T> {
        let (m, w) = math_function(name)?;
        let [arg] = args else { return None };
        if format_of(&arg.ty) != Some(w) || format_of(dst_ty) != Some(w) {
            return None;
        }
        let x = self.eval(arg, st);
        let op = match m {
            Math::Fabs => return Some(self.t.fp_abs(x)),
            Math::Exp => return Some(self.exp_of(x, w)),
            Math::Log => return Some(self.log_of(x, w)),
            Math::Sin => return Some(self.periodic_of(x, w, true)),
            Math::Cos => return Some(self.periodic_of(x, w, false)),
            Math::Sqrt => FpUnOp::Sqrt,
            Math::Floor => FpUnOp::Floor,
            Math::Ceil => FpUnOp::Ceil,
            Math::Trunc => FpUnOp::Trunc,
            Math::Round => FpUnOp::Round,
        };
        let weight = if op == FpUnOp::Sqrt { 8 } else { 1 };
        let r = self.t.fp_un(op, x);
        let r = self.fp_result(r);
        Some(self.fp_define(r, weight))
    }

    /// `log(x)`: a fresh value, NaN for a NaN or a value below zero, not negative from 1 up
    /// (+∞ included), not positive from ±0 up to 1 ([`Math::Log`]).
    fn log_of(&mut self, x: T, w: u32) -> T {
        let r = self.fresh(w, "log");
        let zero = self.t.bv(w, 0);
        let one = self.t.bv(w, fp::bits_of(w, 1.0));
        let x_nan = self.t.fp_is_nan(x);
        let below_zero = self.t.fp_cmp(FpCmpOp::Lt, x, zero);
        let undefined = self.t.or2(x_nan, below_zero);
        let r_nan = self.t.fp_is_nan(r);
        let nan = self.t.implies(undefined, r_nan);
        let from_one = self.t.fp_cmp(FpCmpOp::Le, one, x);
        let r_nonneg = self.t.fp_cmp(FpCmpOp::Le, zero, r);
        let up = self.t.implies(from_one, r_nonneg);
        let from_zero = self.t.fp_cmp(FpCmpOp::Le, zero, x);
        let below_one = self.t.fp_cmp(FpCmpOp::Lt, x, one);
        let unit = self.t.and2(from_zero, below_one);
        let r_nonpos = self.t.fp_cmp(FpCmpOp::Le, r, zero);
        let down = self.t.implies(unit, r_nonpos);
        let fact = self.t.and(&[nan, up, down]);
        self.fact(&[r], fact);
        r
    }

    /// `sin(x)` (`sine`) or `cos(x)`: a fresh value, NaN exactly for a NaN or an infinity,
    /// else within [-1, 1]; a sine is no bigger than its argument in magnitude
    /// ([`Math::Sin`]).
    fn periodic_of(&mut self, x: T, w: u32, sine: bool) -> T {
        let r = self.fresh(w, if sine { "sin" } else { "cos" });
        let x_nan = self.t.fp_is_nan(x);
        let x_inf = self.t.fp_is_inf(x);
        let undefined = self.t.or2(x_nan, x_inf);
        let r_nan = self.t.fp_is_nan(r);
        let one = self.t.bv(w, fp::bits_of(w, 1.0));
        let abs_r = self.t.fp_abs(r);
        let mut bounds = vec![self.t.fp_cmp(FpCmpOp::Le, abs_r, one)];
        if sine {
            let abs_x = self.t.fp_abs(x);
            bounds.push(self.t.fp_cmp(FpCmpOp::Le, abs_r, abs_x));
        }
        let bounded = self.t.and(&bounds);
        let fact = self.t.ite(undefined, r_nan, bounded);
        self.fact(&[r], fact);
        r
    }

    /// `exp(x)`: a fresh value, NaN exactly for a NaN, never negative otherwise (+0 for
    /// -infinity).
    fn exp_of(&mut self, x: T, w: u32) -> T {
        let r = self.fresh(w, "exp");
        let x_nan = self.t.fp_is_nan(x);
        let r_nan = self.t.fp_is_nan(r);
        let zero = self.t.bv(w, 0);
        let nonneg = self.t.fp_cmp(FpCmpOp::Le, zero, r);
        let fact = self.t.ite(x_nan, r_nan, nonneg);
        self.fact(&[r], fact);
        r
    }
}
