//! Evaluation of integer constant expressions over the IR, with C's wrapping and conversions.
//!
//! Used for array sizes, enumerators, case labels and folding. Anything that is not a constant,
//! or would trap (division by zero, out-of-range shift), gives `None`: the caller keeps the
//! expression symbolic instead of inventing a value.

use super::{BinOp, CType, Expr, ExprKind, UnOp};

pub fn eval(e: &Expr) -> Option<i128> {
    match &e.kind {
        ExprKind::Const(v) => Some(*v),
        ExprKind::Cast(inner) => {
            let v = eval(inner)?;
            match &e.ty {
                CType::Int(k) => Some(k.wrap(v)),
                CType::Pointer(_) => Some(v),
                _ => None,
            }
        }
        ExprKind::Unary(op, a) => {
            let k = e.ty.int_kind()?;
            let v = eval(a)?;
            Some(k.wrap(match op {
                UnOp::Neg => v.checked_neg()?,
                UnOp::BitNot => !v,
                UnOp::LogNot => i128::from(v == 0),
            }))
        }
        ExprKind::Binary(op, a, b) => {
            let k = e.ty.int_kind()?;
            let x = eval(a)?;
            // Short-circuit operators do not evaluate (and so cannot trap on) the right operand.
            match op {
                BinOp::LogAnd if x == 0 => return Some(0),
                BinOp::LogOr if x != 0 => return Some(1),
                _ => {}
            }
            let y = eval(b)?;
            let r = match op {
                BinOp::Add => x.checked_add(y)?,
                BinOp::Sub => x.checked_sub(y)?,
                BinOp::Mul => x.checked_mul(y)?,
                BinOp::Div => {
                    if y == 0 {
                        return None;
                    }
                    x.checked_div(y)?
                }
                BinOp::Rem => {
                    if y == 0 {
                        return None;
                    }
                    x.checked_rem(y)?
                }
                BinOp::Shl | BinOp::Shr => {
                    let width = i128::from(k.bits());
                    if y < 0 || y >= width {
                        return None;
                    }
                    if *op == BinOp::Shl {
                        // Shifting a negative value left is undefined: not a constant for us.
                        if x < 0 && k.is_signed() {
                            return None;
                        }
                        x.checked_shl(y as u32)?
                    } else {
                        x >> y
                    }
                }
                BinOp::BitAnd => x & y,
                BinOp::BitOr => x | y,
                BinOp::BitXor => x ^ y,
                BinOp::Lt => i128::from(x < y),
                BinOp::Le => i128::from(x <= y),
                BinOp::Gt => i128::from(x > y),
                BinOp::Ge => i128::from(x >= y),
                BinOp::Eq => i128::from(x == y),
                BinOp::Ne => i128::from(x != y),
                BinOp::LogAnd => i128::from(y != 0),
                BinOp::LogOr => i128::from(y != 0),
                BinOp::PtrAdd | BinOp::PtrDiff => return None,
            };
            // Operands were converted to a common kind already, so comparing their values as
            // mathematical integers is exact for signed and unsigned kinds alike.
            Some(k.wrap(r))
        }
        ExprKind::Cond(c, a, b) => {
            if eval(c)? != 0 {
                eval(a)
            } else {
                eval(b)
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::IntKind;

    fn c(v: i128, k: IntKind) -> Box<Expr> {
        Box::new(Expr::int_const(v, k))
    }

    #[test]
    fn unsigned_arithmetic_wraps() {
        let e = Expr::new(
            ExprKind::Binary(BinOp::Sub, c(0, IntKind::UInt), c(1, IntKind::UInt)),
            CType::Int(IntKind::UInt),
        );
        assert_eq!(eval(&e), Some(4_294_967_295));
    }

    #[test]
    fn division_by_zero_is_not_a_constant() {
        let e = Expr::new(
            ExprKind::Binary(BinOp::Div, c(1, IntKind::Int), c(0, IntKind::Int)),
            CType::INT,
        );
        assert_eq!(eval(&e), None);
    }
}
