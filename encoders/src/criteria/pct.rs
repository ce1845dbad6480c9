//! PCT, predicate-complete coverage: at every statement of a function, every valuation of the
//! function's predicates (its decisions' atoms).
//!
//! Labels: for a function with predicates p1..pn (distinct atoms in source order, at most
//! `--pct-max-predicates`, default 4, because the count grows as m·2^n), the 2^n conjunctions
//! of `pi` or `!(pi)` before each statement. Predicates that read a local variable of the
//! function are left out (they are not in scope at every statement).
//! Example: predicates `x > 0`, `y == 0` give 4 labels per statement, `(x > 0) && ((y == 0))`
//! and so on.
//! Reference: Ball, "A theory of predicate-complete test coverage and generation", FMCO 2004.

use crate::{combinations, LabelSpec, Limits};
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "PCT",
    description: "predicate-complete coverage: every valuation of a function's predicates at each statement",
    labels: Labels::FunctionStatements(labels),
    hyperlabels: false,
    objective: Objective::Other,
};

pub fn labels(preds: &[String], limits: &Limits) -> Vec<LabelSpec> {
    let chosen: Vec<&str> = preds
        .iter()
        .take(limits.pct_max_predicates)
        .map(String::as_str)
        .collect();
    if chosen.is_empty() {
        return Vec::new();
    }
    combinations(&chosen)
        .into_iter()
        .map(|p| LabelSpec::new(p, DEFINITION.name))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::Limits;

    #[test]
    fn all_valuations_of_the_capped_predicates() {
        let preds: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        assert_eq!(super::labels(&preds, &Limits::default()).len(), 16);
        let limits = Limits {
            pct_max_predicates: 2,
            ..Limits::default()
        };
        assert_eq!(super::labels(&preds, &limits).len(), 4);
    }
}
