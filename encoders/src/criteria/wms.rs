//! WM-S, weak mutation with the "sufficient" operator set of the paper's experiments (Offutt
//! et al. 1996): every relational operator replaced by the five others (ROR), every arithmetic
//! operator by the others including `%` on integers (AOR), `&&` ↔ `||` (COR), `&`/`|`/`^`
//! (LCR), absolute-value kill conditions (ABS), unary operator insertion `-x`, `!x`, `~x`
//! (UOI), operand deletion `a op b` → `a`, `b` (ODL) and constant replacement `c` → `c+1`,
//! `c-1`, `0` (CRP).
//!
//! Labels: `(mutant) != (original)` per mutant, tagged `WM-S <GROUP>`, at the same places as
//! WM, with the same guards against traps.
//! Example: `type = type + 1` gives, among others, `(type + (1 + 1)) != (type + 1)` (CRP),
//! `(type) != (type + 1)` and `(1) != (type + 1)` (ODL), `(-type) != (type)` (UOI): the
//! paper's Figure 1 labels l11–l14 up to writing.
//! Reference: the LClean paper (ICSE 2018), section 6; A. J. Offutt et al., "An
//! experimental determination of sufficient mutant operators", TOSEM 1996.

use crate::expr::Expr;
use crate::{Definition, Labels, Objective};
use crate::mutation::{self, Flavor};
use crate::{LabelSpec, Limits};

pub const DEFINITION: Definition = Definition {
    name: "WM-S",
    description: "weak mutation, sufficient operator set: ROR, AOR, COR, LCR, ABS, UOI, ODL, CRP",
    labels: Labels::Expression { labels, returned: return_label },
    hyperlabels: false,
    objective: Objective::Mutant,
};

pub fn labels(e: &Expr, limits: &Limits) -> Vec<LabelSpec> {
    mutation::labels(e, Flavor::Sufficient, &limits.mutators, DEFINITION.name)
}

pub fn return_label(value: &str, limits: &Limits) -> Option<LabelSpec> {
    limits
        .mutators
        .contains(&crate::Mutator::Abs)
        .then(|| LabelSpec::new(format!("({value}) < 0"), "WM-S ABS"))
}

#[cfg(test)]
mod tests {
    use crate::expr::{BinOp, Expr, Ty};
    use crate::Limits;

    #[test]
    fn relational_operators_get_five_replacements() {
        let e = Expr::bin(
            BinOp::Eq,
            Expr::lval("a", Ty::Int),
            Expr::lval("b", Ty::Int),
        );
        let l = super::labels(&e, &Limits::default());
        let ror = l.iter().filter(|l| l.tag == "WM-S ROR").count();
        assert_eq!(ror, 5);
        // and per lvalue: ABS + 3 UOI
        assert_eq!(l.len(), 5 + 2 * 4);
    }
}
