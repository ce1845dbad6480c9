//! The ranges' arithmetic: the range of each IEEE-754 operation's results over ranges of its
//! operands, rounding as the program rounds (to nearest, ties to even), and the keys that
//! order a format's values.

use crate::vc::term::{FpCmpOp, FpOp, FpUnOp};

/// The values a floating-point term may take: an interval of numbers (none when it is only
/// NaN; `-0` and `+0` are the same number) and whether it may be NaN.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub num: Option<(f64, f64)>,
    pub nan: bool,
}

pub(super) const INF: f64 = f64::INFINITY;

impl Range {
    pub const ANY: Range = Range {
        num: Some((-INF, INF)),
        nan: true,
    };
    pub(super) const NAN: Range = Range {
        num: None,
        nan: true,
    };

    pub(super) fn point(v: f64) -> Range {
        if v.is_nan() {
            Range::NAN
        } else {
            Range {
                num: Some((v, v)),
                nan: false,
            }
        }
    }

    pub(super) fn hull(self, other: Range) -> Range {
        let num = match (self.num, other.num) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, None) | (None, x) => x,
        };
        Range {
            num,
            nan: self.nan || other.nan,
        }
    }
}

/// Rounds `v` to the format of `width` bits (to nearest, ties to even).
pub(super) fn round(width: u32, v: f64) -> f64 {
    if width == 32 {
        f64::from(v as f32)
    } else {
        v
    }
}

/// `x op y` in the format of `width` bits, rounded once.
pub(super) fn apply(width: u32, op: FpOp, x: f64, y: f64) -> f64 {
    if width == 32 {
        let (x, y) = (x as f32, y as f32);
        f64::from(match op {
            FpOp::Add => x + y,
            FpOp::Sub => x - y,
            FpOp::Mul => x * y,
            FpOp::Div => x / y,
        })
    } else {
        match op {
            FpOp::Add => x + y,
            FpOp::Sub => x - y,
            FpOp::Mul => x * y,
            FpOp::Div => x / y,
        }
    }
}

/// The range of `x op y` for `x` in `a` and `y` in `b`.
pub fn binary(width: u32, op: FpOp, a: Range, b: Range) -> Range {
    let (Some((al, ah)), Some((bl, bh))) = (a.num, b.num) else {
        return Range::NAN;
    };
    let nan = a.nan || b.nan;
    let corners = |ops: &[(f64, f64)]| -> Option<(f64, f64)> {
        let mut lo = INF;
        let mut hi = -INF;
        for &(x, y) in ops {
            let r = apply(width, op, x, y);
            if r.is_nan() {
                return None;
            }
            lo = lo.min(r);
            hi = hi.max(r);
        }
        Some((lo, hi))
    };
    let (num, nan) = match op {
        FpOp::Add | FpOp::Sub => {
            // `y` enters with its sign flipped for a difference.
            let (bl, bh) = match op {
                FpOp::Add => (bl, bh),
                _ => (-bh, -bl),
            };
            let opposite = (al == -INF && bh == INF) || (ah == INF && bl == -INF);
            let lo = apply(width, FpOp::Add, al, bl);
            let hi = apply(width, FpOp::Add, ah, bh);
            if lo.is_nan() || hi.is_nan() {
                (None, true)
            } else {
                (Some((lo, hi)), nan || opposite)
            }
        }
        FpOp::Mul => {
            let zero_a = al <= 0.0 && 0.0 <= ah;
            let zero_b = bl <= 0.0 && 0.0 <= bh;
            let inf_a = al == -INF || ah == INF;
            let inf_b = bl == -INF || bh == INF;
            let zero_times_inf = (zero_a && inf_b) || (zero_b && inf_a);
            match corners(&[(al, bl), (al, bh), (ah, bl), (ah, bh)]) {
                Some(r) => (Some(r), nan || zero_times_inf),
                None => (None, true),
            }
        }
        FpOp::Div => {
            if bl <= 0.0 && 0.0 <= bh {
                (None, true)
            } else {
                let inf_over_inf = (al == -INF || ah == INF) && (bl == -INF || bh == INF);
                match corners(&[(al, bl), (al, bh), (ah, bl), (ah, bh)]) {
                    Some(r) => (Some(r), nan || inf_over_inf),
                    None => (None, true),
                }
            }
        }
    };
    match num {
        Some(num) => Range {
            num: Some(num),
            nan,
        },
        None => Range::ANY,
    }
}

/// The range of a square root or an integral rounding of `x` in `a`.
pub fn unary(width: u32, op: FpUnOp, a: Range) -> Range {
    let Some((lo, hi)) = a.num else {
        return Range::NAN;
    };
    let f = |v: f64| match op {
        FpUnOp::Sqrt => round(width, v.sqrt()),
        FpUnOp::Floor => v.floor(),
        FpUnOp::Ceil => v.ceil(),
        FpUnOp::Trunc => v.trunc(),
        FpUnOp::Round => v.round(),
    };
    if op == FpUnOp::Sqrt {
        if hi < 0.0 {
            return Range::NAN;
        }
        return Range {
            num: Some((f(lo.max(0.0)), f(hi))),
            nan: a.nan || lo < 0.0,
        };
    }
    Range {
        num: Some((f(lo), f(hi))),
        nan: a.nan,
    }
}

/// A boolean the ranges may not tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tri {
    True,
    False,
    Unknown,
}

impl Tri {
    pub(super) fn not(self) -> Tri {
        match self {
            Tri::True => Tri::False,
            Tri::False => Tri::True,
            Tri::Unknown => Tri::Unknown,
        }
    }
}

/// The comparison `x op y` for `x` in `a` and `y` in `b` (false with a NaN operand).
pub fn compare(op: FpCmpOp, a: Range, b: Range) -> Tri {
    let (Some((al, ah)), Some((bl, bh))) = (a.num, b.num) else {
        return Tri::False;
    };
    let sure = !a.nan && !b.nan;
    let (always, never) = match op {
        FpCmpOp::Lt => (ah < bl, al >= bh),
        FpCmpOp::Le => (ah <= bl, al > bh),
        FpCmpOp::Eq => (al == ah && bl == bh && al == bl, ah < bl || bh < al),
    };
    if never {
        Tri::False
    } else if always && sure {
        Tri::True
    } else {
        Tri::Unknown
    }
}

/// The key of a float in the total order of its format (`-0` just below `+0`).
pub(super) fn key(width: u32, v: f64) -> u64 {
    let (bits, top) = match width {
        32 => (u64::from((v as f32).to_bits()), 1u64 << 31),
        _ => (v.to_bits(), 1u64 << 63),
    };
    if bits & top != 0 {
        (top - 1) - (bits & (top - 1))
    } else {
        bits | top
    }
}

/// The float of a key ([`key`]).
pub(super) fn of_key(width: u32, k: u64) -> f64 {
    let top = if width == 32 { 1u64 << 31 } else { 1u64 << 63 };
    let bits = if k & top != 0 {
        k & (top - 1)
    } else {
        ((top - 1) - k) | top
    };
    crate::vc::fp::value(width, u128::from(bits))
}
