//! Floating-point terms in Z3's theory of IEEE-754 floats, and the solvers of the questions
//! that have them. Terms carry bit patterns ([`crate::vc::fp`]): each operand is reinterpreted
//! as a float of its width, and each float result goes back to its pattern, a NaN to the one
//! canonical pattern.

use z3::ast::{Ast, Bool, Dynamic, Float, RoundingMode, BV};
use z3::Solver;

use crate::vc::fp::{canonical_nan, format};
use crate::vc::term::{FpCmpOp, FpOp, FpUnOp, Node, Terms, T};

use super::{bv_const, set_limits, Kept, Session};

/// The solvers of questions with floating-point terms, what they keep asserted, and their
/// time limit; swapped with the session's own while such a question is asked.
pub(super) struct FloatSide {
    solver: Solver,
    abstract_solver: Solver,
    alone_solver: Solver,
    kept: Kept,
    abstract_kept: Kept,
    timeout_ms: u32,
}

impl FloatSide {
    /// Sets the limits of the next checks, with the side's own time limit.
    pub(super) fn set_limits(&self, rlimit: u32, max_memory_mb: u32) {
        let solvers = [&self.solver, &self.abstract_solver, &self.alone_solver];
        set_limits(&solvers, self.timeout_ms, rlimit, max_memory_mb);
    }
}

/// A solver for questions with floating-point terms: Z3's tactic for them (`qffp`: floats
/// turned into bit-vector circuits, with arrays where memory is read), each check solved anew
/// in a scope of its own. (Z3's incremental core reasons about floats far more slowly: 1.3 s
/// against 0.1 s for `2a < a` with `a >= 0` in binary64; so did the generic tactic for
/// bit-vectors and arrays after `fpa2bv`: 29 s against 2 s for seven additions in a row in
/// tot_info's `LGamma`.)
fn float_solver() -> Solver {
    z3::Tactic::new("qffp").solver()
}

impl Session {
    /// Asks a question with `ask` on the side it belongs to: one that uses floating point
    /// goes to [`float_solver`]s. The solver for bit-vectors and arrays does not know floats (it
    /// answers as if their operations were uninterpreted), and the float solvers, which solve
    /// each check anew, would make the function's other questions slow. Z3's resource counter
    /// barely counts the float solvers' work (it saw 100 units per millisecond where bit-vector
    /// questions count thousands), so the nominal time limit bounds their checks: the answers
    /// of questions with floats may depend on the machine's speed.
    pub(super) fn on_its_side(
        &mut self,
        terms: &Terms,
        context: &[T],
        goal: T,
        ask: impl FnOnce(&mut Session) -> super::Verdict,
    ) -> super::Verdict {
        let floats = context.iter().chain([&goal]).any(|&t| terms.uses_floats(t));
        if floats {
            self.swap_floats();
        }
        let v = ask(self);
        if floats {
            self.swap_floats();
        }
        v
    }

    /// Swaps the float side's solvers, kept facts and time limit in (or back out), making it
    /// at its first use.
    fn swap_floats(&mut self) {
        let (nominal, rlimit, memory) = (
            self.nominal_timeout_ms,
            self.current_rlimit,
            self.max_memory_mb,
        );
        let side = self.floats.get_or_insert_with(|| {
            let side = FloatSide {
                solver: float_solver(),
                abstract_solver: float_solver(),
                alone_solver: float_solver(),
                kept: Kept::default(),
                abstract_kept: Kept::default(),
                timeout_ms: nominal,
            };
            let solvers = [&side.solver, &side.abstract_solver, &side.alone_solver];
            set_limits(&solvers, nominal, rlimit, memory);
            side
        });
        std::mem::swap(&mut self.solver, &mut side.solver);
        std::mem::swap(&mut self.abstract_solver, &mut side.abstract_solver);
        std::mem::swap(&mut self.alone_solver, &mut side.alone_solver);
        std::mem::swap(&mut self.kept, &mut side.kept);
        std::mem::swap(&mut self.abstract_kept, &mut side.abstract_kept);
        std::mem::swap(&mut self.timeout_ms, &mut side.timeout_ms);
        self.in_floats = !self.in_floats;
    }
}

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
