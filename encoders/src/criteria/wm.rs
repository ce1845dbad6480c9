//! WM, weak mutation with LAnnotate's operator groups: AOR, ROR, COR, ABS (`--mutators`
//! selects groups, `-X` removes one).
//!
//! Labels: for each mutant, `(mutant) != (original)` on the mutated node, tagged `WM <GROUP>`;
//! ABS gives the kill condition `x < 0` of each arithmetic lvalue read. Visited: assignment
//! right-hand sides (`x op= e` and `x++` as `x = x op e`, `x = x + 1`), decision conditions,
//! `return` and `switch` expressions; not initialisers or call arguments (as LAnnotate). The
//! returned value gets one ABS label per function, LAnnotate's `__retres < 0`, written at each
//! `return e;` under one id.
//! Example: `t = t + 1` gives `(t * 1) != (t + 1)`, `(t / 1) != (t + 1)`, `(t - 1) != (t +
//! 1)` (AOR) and `t < 0` (ABS).
//! As in LAnnotate, ABS applies to pointer lvalues too (`p < 0`, always false but valid C for
//! gcc and clang), and the visitor stops at casts, including the implicit conversions CIL
//! writes as casts (a `char` compared with an `int`, an `int` operand of a `double` product,
//! a value converted to the type it is assigned or returned as). A call's value is mutated
//! through a temporary evaluated before the statement (`x = f(a) > y` gives mutants of
//! `__cp_v1 > y`), as Frama-C's normal form does, where the annotator can show that the order
//! cannot matter; `?:` branches are mutated under the condition that selects them.
//! Differences from LAnnotate, by design: a label that divides (or shifts) by a value that can
//! be zero (or out of range) is guarded, `d != 0 && (...)`, because LAnnotate's own labels
//! crash the program under test there (LTEST.md, "Hazard observed"); pointer arithmetic and
//! operands of unknown type are not mutated (the mutant would not compile); a `return` whose
//! value has side effects gets no return-value site. Not labelled yet (LAnnotate labels them
//! after Frama-C's normalisation): statements whose call may change what the rest of the
//! statement reads (`bump() + counter`), side effects inside expressions (`a[i++] = c`,
//! `x = y = 0`, `--x < 0`), the values of calls in conditions (hoisted as truth values
//! there), `?:` beside calls, and function-like macros (`isspace(c)`, `Abs(x)`) seen as calls.
//! Reference: LAnnotate `l_wm.ml` `traitExp`.

use crate::expr::Expr;
use crate::{Definition, Labels, Objective};
use crate::mutation::{self, Flavor, Mutator};
use crate::{LabelSpec, Limits};

pub const DEFINITION: Definition = Definition {
    name: "WM",
    description: "weak mutation, LAnnotate's groups AOR, ROR, COR, ABS (--mutators to choose)",
    labels: Labels::Expression { labels, returned: return_label },
    hyperlabels: false,
    objective: Objective::Mutant,
};

fn enabled(limits: &Limits) -> Vec<Mutator> {
    Mutator::LANNOTATE
        .iter()
        .copied()
        .filter(|m| limits.mutators.contains(m))
        .collect()
}

pub fn labels(e: &Expr, limits: &Limits) -> Vec<LabelSpec> {
    mutation::labels(e, Flavor::LAnnotate, &enabled(limits), DEFINITION.name)
}

pub fn return_label(value: &str, limits: &Limits) -> Option<LabelSpec> {
    enabled(limits)
        .contains(&Mutator::Abs)
        .then(|| LabelSpec::new(format!("({value}) < 0"), "WM ABS"))
}

#[cfg(test)]
mod tests {
    use crate::expr::{BinOp, Expr, Ty};
    use crate::{parse_mutators, Limits};

    #[test]
    fn assignment_of_an_increment() {
        let e = Expr::bin(BinOp::Add, Expr::lval("t", Ty::Int), Expr::int("1"));
        let l = super::labels(&e, &Limits::default());
        assert_eq!(l.len(), 4);
        assert_eq!(l[0].predicate, "(t * 1) != (t + 1)");
        assert_eq!(l[3].predicate, "t < 0");
    }

    #[test]
    fn mutator_selection_removes_groups() {
        let e = Expr::bin(BinOp::Add, Expr::lval("t", Ty::Int), Expr::int("1"));
        let limits = Limits {
            mutators: parse_mutators(&["-ABS".into()]).unwrap(),
            ..Limits::default()
        };
        assert_eq!(super::labels(&e, &limits).len(), 3);
        assert!(super::return_label("x", &limits).is_none());
    }
}
