//! LIMIT, boundary coverage: each relational comparison of a decision is true at its boundary.
//!
//! Labels: one per comparison `A op B` (`<`, `<=`, `>`, `>=`; equalities are their own
//! boundary and get none), true where `A - B` is -1 for `<`, 0 for `<=` and `>=`, 1 for `>`:
//! the closest values that still make the comparison true (LAnnotate's `mk_limit`, with
//! δ = 0). The difference is not computed (it can overflow where the program computes
//! nothing): `(A < B) && (A + 1 == B)`, `(A > B) && (A == B + 1)`, `(A <= B) && (A == B)`,
//! where the comparison holding keeps `+ 1` in range. Comparisons with a floating-point side
//! get none.
//! Example: `if (x < 10)` gives `pc_label((x < 10) && (x + 1 == 10), 1, "LIMIT");`.

use crate::expr::{BinOp, Ty};
use crate::{Definition, Labels, Objective};
use crate::{Decision, LabelSpec};

pub const DEFINITION: Definition = Definition {
    name: "LIMIT",
    description: "limit (boundary) coverage: each comparison true at its boundary value (1 per <, <=, >, >=)",
    labels: Labels::Decision { labels: |d, _| labels(d), whole: false, hyperlabels: None },
    hyperlabels: false,
    objective: Objective::Other,
};

pub fn labels(d: &Decision) -> Vec<LabelSpec> {
    let Some(e) = &d.expr else {
        return Vec::new();
    };
    e.comparisons_in_context()
        .into_iter()
        .filter_map(|(a, op, b, ctx)| {
            if a.ty() == Ty::Float || b.ty() == Ty::Float {
                return None;
            }
            let (x, y) = (a.operand(), b.operand());
            let boundary = match op {
                BinOp::Lt => format!("{x} + 1 == {y}"),
                BinOp::Le | BinOp::Ge => format!("{x} == {y}"),
                BinOp::Gt => format!("{x} == {y} + 1"),
                _ => return None,
            };
            let cond = format!("{x} {} {y}", op.c());
            let label = format!("({cond}) && ({boundary})");
            // The label reads the comparison where the program may not (after a false `&&`
            // operand) and divides where the program does: guard both when it could trap.
            let mut guards = Vec::new();
            if a.may_trap() || b.may_trap() {
                guards.extend(ctx);
            }
            for g in a.guards().into_iter().chain(b.guards()) {
                if !guards.contains(&g) {
                    guards.push(g);
                }
            }
            Some(LabelSpec::new(
                crate::expr::guarded(&guards, &label),
                DEFINITION.name,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::expr::{BinOp, Expr, Ty};

    #[test]
    fn one_label_per_ordering_comparison() {
        let e = Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Lt, Expr::lval("x", Ty::Int), Expr::int("10")),
            Expr::bin(BinOp::Eq, Expr::lval("y", Ty::Int), Expr::int("0")),
        );
        let mut d = crate::Decision::new(crate::Cond::Atom(e.text()));
        d.expr = Some(e);
        let l = super::labels(&d);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].predicate, "(x < 10) && (x + 1 == 10)");
    }
}
