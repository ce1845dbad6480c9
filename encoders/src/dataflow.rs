//! ADC and AUC, the data-flow criteria all-defs and all-uses: a definition of a variable and a
//! use of it form a pair, covered by a run that reaches the use with that definition the last
//! one made (a path from the definition to the use without another definition of the
//! variable: HTOL's sequence `def -[no redefinition]-> use`).
//!
//! The sequence is observed with a ghost flag per definition (an `int` of the function, set from
//! the definition on, cleared once another definition of the variable is made): the pair's
//! label tests the flag, `pc_label(flag == SET, id, "AUC")`, before the statement that uses the
//! variable, read before that
//! statement's own definitions. AUC's hyperlabels are the pairs, one each (`<lK|; ;>`); ADC's
//! are, per definition, the disjunction of its pairs (`<lK+lM|; ;>`): some use reached.
//! Which definitions and uses there are, and where, is the annotator's (it reads C).
//! Reference: HTOL (all-defs, all-uses); LAnnotate's DUC/ADC/AUC hyperlabels over sequences.

use crate::{Criterion, HyperSpec, LabelSpec};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefUse {
    AllDefs,
    AllUses,
}

impl DefUse {
    pub fn tag(self) -> &'static str {
        match self {
            DefUse::AllDefs => Criterion::Adc.name(),
            DefUse::AllUses => Criterion::Auc.name(),
        }
    }

    /// The label of a pair: `set` tests the flag of its definition.
    pub fn pair_label(self, set: &str) -> LabelSpec {
        LabelSpec::new(set.to_string(), self.tag())
    }

    /// The hyperlabels over one definition's pair labels (indices into them, in order).
    pub fn hyperlabels(self, pairs: usize) -> Vec<HyperSpec> {
        match self {
            DefUse::AllDefs if pairs > 0 => vec![HyperSpec {
                members: (0..pairs).collect(),
                guard: " ".into(),
                disjunction: true,
            }],
            DefUse::AllDefs => Vec::new(),
            DefUse::AllUses => (0..pairs)
                .map(|k| HyperSpec {
                    members: vec![k],
                    guard: " ".into(),
                    disjunction: false,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_defs_is_a_disjunction_per_definition_and_all_uses_a_hyperlabel_per_pair() {
        let d = DefUse::AllDefs.hyperlabels(3);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].members, [0, 1, 2]);
        assert!(d[0].disjunction);
        assert!(DefUse::AllDefs.hyperlabels(0).is_empty());
        assert_eq!(DefUse::AllUses.hyperlabels(2).len(), 2);
        assert_eq!(DefUse::AllUses.pair_label("__cp_d1").predicate, "__cp_d1");
    }
}
