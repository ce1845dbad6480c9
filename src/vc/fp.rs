//! IEEE-754 floating point in the term language. A `float` or `double` value is its bit
//! pattern (a 32- or 64-bit vector), as in memory, so that loads, stores, copies and phis need
//! nothing new; the floating-point terms read patterns and give patterns. Arithmetic,
//! conversions and the square root round to nearest, ties to even (the default environment of
//! C on x86-64: `FLT_EVAL_METHOD` 0, no flush to zero, no contraction into fused
//! multiply-adds). A NaN result is one fixed pattern ([`canonical_nan`]); the encoder replaces
//! it by any NaN, since the payload and sign of a NaN the hardware makes are not modelled.
//!
//! The constructors fold constant operands with the host's IEEE-754 arithmetic (Rust's `f32`
//! and `f64`), which rounds the same way.

use super::term::{BvOp, FpCmpOp, FpOp, FpUnOp, Node, Sort, Terms, T};

/// Is `width` a modelled floating-point format (binary32 or binary64)? `long double` is not.
pub fn is_format(width: u32) -> bool {
    width == 32 || width == 64
}

/// Exponent bits and significand bits (with the hidden bit) of the format of `width` bits.
pub fn format(width: u32) -> (u32, u32) {
    match width {
        32 => (8, 24),
        64 => (11, 53),
        _ => panic!("no floating-point format of {width} bits"),
    }
}

/// The pattern of NaN results: the quiet NaN with a zero payload and a clear sign.
pub fn canonical_nan(width: u32) -> u128 {
    let (e, s) = format(width);
    ((1u128 << (e + 1)) - 1) << (s - 2)
}

/// The pattern of `v` in the format of `width` bits (rounded to nearest for binary32).
pub fn bits_of(width: u32, v: f64) -> u128 {
    match width {
        32 => pattern32(v as f32),
        _ => pattern64(v),
    }
}

fn pattern32(v: f32) -> u128 {
    if v.is_nan() {
        canonical_nan(32)
    } else {
        u128::from(v.to_bits())
    }
}

fn pattern64(v: f64) -> u128 {
    if v.is_nan() {
        canonical_nan(64)
    } else {
        u128::from(v.to_bits())
    }
}

/// A constant pattern's value (binary32 values widen exactly).
pub fn value(width: u32, bits: u128) -> f64 {
    match width {
        32 => f64::from(f32::from_bits(bits as u32)),
        _ => f64::from_bits(bits as u64),
    }
}

/// Applies an operation in the format of `width` bits: binary32 operations are computed in
/// `f32`, so that they round once, in their own format.
fn in_format(width: u32, f32op: impl Fn(f32) -> f32, f64op: impl Fn(f64) -> f64, x: u128) -> u128 {
    match width {
        32 => pattern32(f32op(f32::from_bits(x as u32))),
        _ => pattern64(f64op(f64::from_bits(x as u64))),
    }
}

impl Terms {
    /// `a op b` on two patterns of one format.
    pub fn fp_bin(&mut self, op: FpOp, a: T, b: T) -> T {
        let w = self.width(a);
        if let (Some(x), Some(y)) = (self.as_const(a), self.as_const(b)) {
            let r = match w {
                32 => {
                    let (x, y) = (f32::from_bits(x as u32), f32::from_bits(y as u32));
                    pattern32(match op {
                        FpOp::Add => x + y,
                        FpOp::Sub => x - y,
                        FpOp::Mul => x * y,
                        FpOp::Div => x / y,
                    })
                }
                _ => {
                    let (x, y) = (f64::from_bits(x as u64), f64::from_bits(y as u64));
                    pattern64(match op {
                        FpOp::Add => x + y,
                        FpOp::Sub => x - y,
                        FpOp::Mul => x * y,
                        FpOp::Div => x / y,
                    })
                }
            };
            return self.bv(w, r);
        }
        self.intern(Node::FpBin(op, a, b), Sort::Bv(w))
    }

    /// The square root or an integral rounding of a pattern.
    pub fn fp_un(&mut self, op: FpUnOp, a: T) -> T {
        let w = self.width(a);
        if let Some(x) = self.as_const(a) {
            let r = match op {
                FpUnOp::Sqrt => in_format(w, f32::sqrt, f64::sqrt, x),
                FpUnOp::Floor => in_format(w, f32::floor, f64::floor, x),
                FpUnOp::Ceil => in_format(w, f32::ceil, f64::ceil, x),
                FpUnOp::Trunc => in_format(w, f32::trunc, f64::trunc, x),
                FpUnOp::Round => in_format(w, f32::round, f64::round, x),
            };
            return self.bv(w, r);
        }
        self.intern(Node::FpUn(op, a), Sort::Bv(w))
    }

    /// An IEEE-754 comparison of two patterns of one format.
    pub fn fp_cmp(&mut self, op: FpCmpOp, a: T, b: T) -> T {
        let w = self.width(a);
        if let (Some(x), Some(y)) = (self.as_const(a), self.as_const(b)) {
            let (x, y) = (value(w, x), value(w, y));
            return self.bool_const(match op {
                FpCmpOp::Lt => x < y,
                FpCmpOp::Le => x <= y,
                FpCmpOp::Eq => x == y,
            });
        }
        self.intern(Node::FpCmp(op, a, b), Sort::Bool)
    }

    /// The integer `a` (signed or not) rounded to the format of `width` bits.
    pub fn fp_of_int(&mut self, signed: bool, width: u32, a: T) -> T {
        let aw = self.width(a);
        if let Some(x) = self.as_const(a) {
            let r = if signed {
                let v = super::term::to_signed(x, aw);
                match width {
                    32 => pattern32(v as f32),
                    _ => pattern64(v as f64),
                }
            } else {
                match width {
                    32 => pattern32(x as f32),
                    _ => pattern64(x as f64),
                }
            };
            return self.bv(width, r);
        }
        self.intern(
            Node::FpOfInt {
                signed,
                width,
                arg: a,
            },
            Sort::Bv(width),
        )
    }

    /// The pattern `a` rounded towards zero to an integer of `width` bits; the caller makes
    /// sure that the value fits ([`Terms::fp_fits_int`]), the result being meaningless where
    /// it does not.
    pub fn fp_to_int(&mut self, signed: bool, width: u32, a: T) -> T {
        let aw = self.width(a);
        if let Some(x) = self.as_const(a) {
            let v = value(aw, x).trunc();
            let (lo, hi) = int_range(signed, width);
            if v >= lo && v < hi {
                return self.bv_i(width, v as i128);
            }
        }
        self.intern(
            Node::FpToInt {
                signed,
                width,
                arg: a,
            },
            Sort::Bv(width),
        )
    }

    /// Does the pattern `a`, rounded towards zero, fit in an integer of `width` bits? (False
    /// for NaN and infinities: converting those is undefined in C.)
    pub fn fp_fits_int(&mut self, signed: bool, width: u32, a: T) -> T {
        let w = self.width(a);
        let (lo, hi) = int_range(signed, width);
        let t = self.fp_un(FpUnOp::Trunc, a);
        let lo = self.bv(w, bits_of(w, lo));
        let hi = self.bv(w, bits_of(w, hi));
        let above = self.fp_cmp(FpCmpOp::Le, lo, t);
        let below = self.fp_cmp(FpCmpOp::Lt, t, hi);
        self.and2(above, below)
    }

    /// The pattern `a` rounded to the format of `width` bits.
    pub fn fp_resize(&mut self, width: u32, a: T) -> T {
        let aw = self.width(a);
        if aw == width {
            return a;
        }
        if let Some(x) = self.as_const(a) {
            return self.bv(width, bits_of(width, value(aw, x)));
        }
        self.intern(Node::FpResize { width, arg: a }, Sort::Bv(width))
    }

    /// Is the pattern `a` a NaN (exponent all ones, significand not zero)?
    pub fn fp_is_nan(&mut self, a: T) -> T {
        let w = self.width(a);
        let (e, s) = format(w);
        let exp = self.extract(w - 2, s - 1, a);
        let ones = self.bv(e, (1u128 << e) - 1);
        let all_ones = self.eq(exp, ones);
        let frac = self.extract(s - 2, 0, a);
        let zero = self.bv(s - 1, 0);
        let frac_zero = self.eq(frac, zero);
        let frac_nonzero = self.not(frac_zero);
        self.and2(all_ones, frac_nonzero)
    }

    /// Is the pattern `a` an infinity of either sign (exponent all ones, significand zero)?
    pub fn fp_is_inf(&mut self, a: T) -> T {
        let w = self.width(a);
        let abs = self.fp_abs(a);
        let inf = self.bv(w, bits_of(w, f64::INFINITY));
        self.eq(abs, inf)
    }

    /// `-a`: the pattern with its sign flipped (exact, NaN included).
    pub fn fp_neg(&mut self, a: T) -> T {
        let w = self.width(a);
        let sign = self.bv(w, 1u128 << (w - 1));
        self.bin(BvOp::Xor, a, sign)
    }

    /// `|a|`: the pattern with its sign cleared (exact, NaN included).
    pub fn fp_abs(&mut self, a: T) -> T {
        let w = self.width(a);
        let rest = self.bv(w, (1u128 << (w - 1)) - 1);
        self.bin(BvOp::And, a, rest)
    }

    /// A NaN of any sign and payload, from a fresh sign bit and significand (a zero
    /// significand, which would be an infinity, stands for 1).
    pub fn fp_any_nan(&mut self, width: u32, sign: T, frac: T) -> T {
        let (e, s) = format(width);
        let zero = self.bv(s - 1, 0);
        let one = self.bv(s - 1, 1);
        let is_zero = self.eq(frac, zero);
        let frac = self.ite(is_zero, one, frac);
        let ones = self.bv(e, (1u128 << e) - 1);
        let high = self.concat(sign, ones);
        self.concat(high, frac)
    }
}

/// The integers of `width` bits as a half-open interval of reals (`lo <= v < hi`), both
/// powers of two (or zero), so exact in either format.
fn int_range(signed: bool, width: u32) -> (f64, f64) {
    if signed {
        (-(2f64.powi(width as i32 - 1)), 2f64.powi(width as i32 - 1))
    } else {
        (0.0, 2f64.powi(width as i32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_fold_as_the_hardware_rounds() {
        let mut t = Terms::default();
        let tenth = t.bv(64, bits_of(64, 0.1));
        let fifth = t.bv(64, bits_of(64, 0.2));
        let sum = t.fp_bin(FpOp::Add, tenth, fifth);
        let three_tenths = t.bv(64, bits_of(64, 0.3));
        // 0.1 + 0.2 is not 0.3 in binary64.
        let eq = t.fp_cmp(FpCmpOp::Eq, sum, three_tenths);
        assert_eq!(t.as_bool(eq), Some(false));
        // In binary32 it is.
        let (a, b, c) = (
            t.bv(32, bits_of(32, 0.1)),
            t.bv(32, bits_of(32, 0.2)),
            t.bv(32, bits_of(32, 0.3)),
        );
        let s = t.fp_bin(FpOp::Add, a, b);
        let eq = t.fp_cmp(FpCmpOp::Eq, s, c);
        assert_eq!(t.as_bool(eq), Some(true));
        // 0/0 is the canonical NaN, unequal to itself; -0 equals +0.
        let zero = t.bv(64, 0);
        let nan = t.fp_bin(FpOp::Div, zero, zero);
        assert_eq!(t.as_const(nan), Some(canonical_nan(64)));
        let eq = t.fp_cmp(FpCmpOp::Eq, nan, nan);
        assert_eq!(t.as_bool(eq), Some(false));
        let is_nan = t.fp_is_nan(nan);
        assert_eq!(t.as_bool(is_nan), Some(true));
        let minus_zero = t.fp_neg(zero);
        assert_eq!(t.as_const(minus_zero), Some(1u128 << 63));
        let eq = t.fp_cmp(FpCmpOp::Eq, minus_zero, zero);
        assert_eq!(t.as_bool(eq), Some(true));
    }

    #[test]
    fn conversions_fold_only_where_defined() {
        let mut t = Terms::default();
        let minus_seven = t.bv_i(32, -7);
        let f = t.fp_of_int(true, 64, minus_seven);
        assert_eq!(t.as_const(f), Some(bits_of(64, -7.0)));
        let as_unsigned = t.fp_of_int(false, 64, minus_seven);
        assert_eq!(t.as_const(as_unsigned), Some(bits_of(64, 4294967289.0)));
        let x = t.bv(64, bits_of(64, -2.75));
        let i = t.fp_to_int(true, 32, x);
        assert_eq!(t.as_const(i), Some(((-2i128) as u128) & 0xffff_ffff));
        // 2^31 does not fit in an int: no folding, and the guard is false.
        let big = t.bv(64, bits_of(64, 2147483648.0));
        let i = t.fp_to_int(true, 32, big);
        assert_eq!(t.as_const(i), None);
        let fits = t.fp_fits_int(true, 32, big);
        assert_eq!(t.as_bool(fits), Some(false));
        let narrowed = t.fp_resize(32, x);
        assert_eq!(t.as_const(narrowed), Some(bits_of(32, -2.75)));
        // 16777217 rounds to 16777216 in binary32 (ties to even).
        let odd = t.bv_i(32, 16_777_217);
        let f = t.fp_of_int(true, 32, odd);
        assert_eq!(t.as_const(f), Some(bits_of(32, 16_777_216.0)));
    }
}
