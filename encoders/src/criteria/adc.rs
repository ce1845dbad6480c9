//! ADC, all-defs: each definition of a local variable reaches one of its uses. The labels and
//! hyperlabels are [`crate::dataflow`]'s.

use crate::dataflow::DefUse;
use crate::{Definition, Labels, Objective};

pub const DEFINITION: Definition = Definition {
    name: "ADC",
    description: "all-defs (hyperlabels): each definition of a local variable reaches one of its uses",
    labels: Labels::DefUse(DefUse::AllDefs),
    hyperlabels: true,
    objective: Objective::Other,
};
