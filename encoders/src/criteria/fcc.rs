//! FCC, function call coverage: every call site to each function of the file is executed; one
//! hyperlabel per (caller, callee) pair is covered when any of its call sites is.
//!
//! Labels: `pc_label(1, id, "FCC");` before each statement that calls a function defined in the
//! file (a call under `&&`, `||` or `?:`, which may not run when its statement does, gets none);
//! the annotator writes the hyperlabel `<l3+l7|; ;>` per pair.
//! Reference: LAnnotate `l_function.ml` `compute_hl`.

use crate::LabelSpec;
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "FCC",
    description: "function call coverage (hyperlabels): each call site, and each caller/callee pair",
    labels: Labels::Call(labels),
    hyperlabels: true,
    objective: Objective::Other,
};

pub fn labels() -> Vec<LabelSpec> {
    vec![LabelSpec::new("1".into(), DEFINITION.name)]
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_label_per_call_site() {
        assert_eq!(super::labels().len(), 1);
    }
}
