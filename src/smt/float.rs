//! Floating-point terms in Z3's theory of IEEE-754 floats. Terms carry bit patterns
//! ([`crate::vc::fp`]): each operand is reinterpreted as a float of its width, and each float
//! result goes back to its pattern, a NaN to the one canonical pattern.

use z3::ast::{Ast, Bool, Dynamic, Float, RoundingMode, BV};

use crate::vc::fp::{canonical_nan, format};
use crate::vc::term::{FpCmpOp, FpOp, FpUnOp, Node, T};

use super::bv_const;

fn sort(width: u32) -> z3::Sort {
    let (e, s) = format(width);
    z3::Sort::float(e, s)
}

/// The float whose IEEE-754 pattern is `bits`.
fn of_bits(bits: &BV) -> Float {
    let s = sort(bits.get_size());
    let ctx = bits.get_ctx();
    // SAFETY: the context, the vector and the sort are live Z3 objects of one context; the
    // call returns a new term of that context, which `wrap` takes a reference to.
    unsafe {
        let raw =
            z3_sys::Z3_mk_fpa_to_fp_bv(ctx.get_z3_context(), bits.get_z3_ast(), s.get_z3_sort())
                .expect("Z3 builds the reinterpretation of a bit pattern");
        Float::wrap(ctx, raw)
    }
}

/// The float nearest to the integer `v` (signed or not) in the format of `width` bits.
fn of_int(v: &BV, signed: bool, width: u32) -> Float {
    let s = sort(width);
    let rm = RoundingMode::round_nearest_ties_to_even();
    let ctx = v.get_ctx();
    // SAFETY: as in `of_bits`; the rounding mode is a live term of the same context.
    unsafe {
        let make = if signed {
            z3_sys::Z3_mk_fpa_to_fp_signed
        } else {
            z3_sys::Z3_mk_fpa_to_fp_unsigned
        };
        let raw = make(
            ctx.get_z3_context(),
            rm.get_z3_ast(),
            v.get_z3_ast(),
            s.get_z3_sort(),
        )
        .expect("Z3 builds the conversion of an integer");
        Float::wrap(ctx, raw)
    }
}

/// The pattern of `f`, the canonical pattern for every NaN.
fn pattern(f: &Float, width: u32) -> Dynamic {
    let nan = bv_const(width, canonical_nan(width));
    Dynamic::from_ast(&f.is_nan().ite(&nan, &f.to_ieee_bv()))
}

/// The Z3 term of a floating-point node, its operands' patterns given by `bv`.
pub(super) fn build(node: &Node, mut bv: impl FnMut(T) -> BV) -> Dynamic {
    let rne = RoundingMode::round_nearest_ties_to_even();
    match *node {
        Node::FpBin(op, a, b) => {
            let (x, y) = (bv(a), bv(b));
            let w = x.get_size();
            let (x, y) = (of_bits(&x), of_bits(&y));
            let r = match op {
                FpOp::Add => x.add_with_rounding_mode(&y, &rne),
                FpOp::Sub => x.sub_with_rounding_mode(&y, &rne),
                FpOp::Mul => x.mul_with_rounding_mode(&y, &rne),
                FpOp::Div => x.div_with_rounding_mode(&y, &rne),
            };
            pattern(&r, w)
        }
        Node::FpUn(op, a) => {
            let x = bv(a);
            let w = x.get_size();
            let x = of_bits(&x);
            let r = match op {
                FpUnOp::Sqrt => x.sqrt_with_rounding_mode(&rne),
                FpUnOp::Floor => {
                    x.round_to_integral_with_rounding_mode(&RoundingMode::round_towards_negative())
                }
                FpUnOp::Ceil => {
                    x.round_to_integral_with_rounding_mode(&RoundingMode::round_towards_positive())
                }
                FpUnOp::Trunc => {
                    x.round_to_integral_with_rounding_mode(&RoundingMode::round_towards_zero())
                }
                FpUnOp::Round => x.round_to_integral_with_rounding_mode(
                    &RoundingMode::round_nearest_ties_to_away(),
                ),
            };
            pattern(&r, w)
        }
        Node::FpCmp(op, a, b) => {
            let (x, y) = (of_bits(&bv(a)), of_bits(&bv(b)));
            let r: Bool = match op {
                FpCmpOp::Lt => x.lt(&y),
                FpCmpOp::Le => x.le(&y),
                FpCmpOp::Eq => x.eq_fpa(&y),
            };
            Dynamic::from_ast(&r)
        }
        Node::FpOfInt { signed, width, arg } => pattern(&of_int(&bv(arg), signed, width), width),
        Node::FpToInt { signed, width, arg } => {
            let x = of_bits(&bv(arg));
            let rtz = RoundingMode::round_towards_zero();
            Dynamic::from_ast(&if signed {
                x.to_sbv_with_rounding_mode(&rtz, width)
            } else {
                x.to_ubv_with_rounding_mode(&rtz, width)
            })
        }
        Node::FpResize { width, arg } => {
            let x = of_bits(&bv(arg));
            pattern(&x.to_fp_with_rounding_mode(&rne, &sort(width)), width)
        }
        _ => unreachable!("not a floating-point node: {node:?}"),
    }
}
