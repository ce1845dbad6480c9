//! AUC, all-uses: each definition of a local variable reaches each of its uses. The labels and
//! hyperlabels are [`crate::dataflow`]'s.

use crate::dataflow::DefUse;
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "AUC",
    description: "all-uses (hyperlabels): each definition of a local variable reaches each of its uses",
    labels: Labels::DefUse(DefUse::AllUses),
    hyperlabels: true,
    objective: Objective::Other,
};
