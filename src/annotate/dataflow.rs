//! Labels of the data-flow criteria (ADC, AUC) from the def-use facts of the sites
//! (`frontend::sites::dataflow`): a ghost flag per definition, declared at its function's
//! entry (1 for a parameter's value at entry, else 0); before a statement that defines a
//! variable, the flags of the variable's definitions are cleared and the statement's own is
//! set; before a statement that uses it, one label per definition of the variable reads that
//! definition's flag (before the statement's own definitions are made). The label is covered
//! when the use runs with that definition the last one made.
//!
//! A set flag holds [`SET`], not 1: a program whose buffer overflow tramples the flags (they
//! are locals beside its arrays) leaves a value no text write gives, which reads as unset, so
//! that the overflow cannot cover a pair.

use std::collections::BTreeMap;

use covprune_encoders::dataflow::DefUse;

use super::{label_stmt, Writer};
use crate::frontend::sites::Sites;

/// Where the ghosts go and what each statement reads and writes of them.
#[derive(Default)]
pub(super) struct DefUsePlan {
    criteria: Vec<DefUse>,
    /// Per function: its ghosts and their values at entry.
    entry: BTreeMap<usize, Vec<(usize, bool)>>,
    /// Per statement: for each variable it uses, the ghosts of the variable's definitions.
    uses: BTreeMap<usize, Vec<Vec<usize>>>,
    /// Per statement: for each definition it makes, the variable's ghosts and its own.
    defs: BTreeMap<usize, Vec<(Vec<usize>, usize)>>,
    /// Per (criterion, ghost): the ids of its pairs' labels, in order.
    pairs: BTreeMap<(usize, usize), Vec<u64>>,
    ghosts: usize,
}

/// The value of a set flag: bytes no text write gives (two are not printable).
const SET: u32 = 0x7E1A_0C93;

fn ghost(g: usize) -> String {
    format!("__cp_d{g}")
}

fn value(set: bool) -> u32 {
    if set {
        SET
    } else {
        0
    }
}

impl DefUsePlan {
    pub(super) fn new(
        criteria: Vec<DefUse>,
        sites: &Sites,
        skipped: &mut Vec<(usize, String)>,
    ) -> Self {
        let mut plan = DefUsePlan {
            criteria,
            ..DefUsePlan::default()
        };
        if plan.criteria.is_empty() {
            return plan;
        }
        for f in &sites.def_uses {
            skipped.extend(f.left.iter().cloned());
            for v in &f.variables {
                let first = plan.ghosts + 1;
                let ghosts: Vec<usize> = (first..first + v.defs.len()).collect();
                plan.ghosts += v.defs.len();
                for (d, &g) in v.defs.iter().zip(&ghosts) {
                    plan.entry
                        .entry(f.function)
                        .or_default()
                        .push((g, d.is_none()));
                    if let Some(stmt) = d {
                        plan.defs
                            .entry(*stmt)
                            .or_default()
                            .push((ghosts.clone(), g));
                    }
                }
                for &u in &v.uses {
                    plan.uses.entry(u).or_default().push(ghosts.clone());
                }
            }
        }
        plan
    }

    /// The text before statement `i` (line `line`): its uses' labels, then its definitions.
    pub(super) fn before(&mut self, i: usize, line: usize, w: &mut Writer) -> String {
        let mut text = String::new();
        for (k, du) in self.criteria.iter().enumerate() {
            for ghosts in self.uses.get(&i).into_iter().flatten() {
                for &g in ghosts {
                    let spec = du.pair_label(&format!("{} == {SET}", ghost(g)));
                    let id = w.new_id(&spec.tag, line);
                    text.push_str(&label_stmt(&spec, id, 0));
                    self.pairs.entry((k, g)).or_default().push(id);
                }
            }
        }
        for (all, own) in self.defs.get(&i).into_iter().flatten() {
            for &g in all {
                text.push_str(&format!("{} = {}; ", ghost(g), value(g == *own)));
            }
        }
        text
    }

    /// The ghosts' declaration at function `f`'s entry, if it has any.
    pub(super) fn declaration(&self, f: usize) -> Option<String> {
        let ghosts = self.entry.get(&f)?;
        let decls: Vec<String> = ghosts
            .iter()
            .map(|(g, at_entry)| format!("{} = {}", ghost(*g), value(*at_entry)))
            .collect();
        // Unused for the compiler when every use is in `#if` branches it drops.
        Some(format!(
            " int __attribute__((unused)) {};",
            decls.join(", ")
        ))
    }

    /// The functions with ghosts.
    pub(super) fn functions(&self) -> Vec<usize> {
        self.entry.keys().copied().collect()
    }

    /// The hyperlabels, criterion by criterion, definition by definition.
    pub(super) fn hyperlabels(&self, w: &mut Writer) {
        for (k, du) in self.criteria.iter().enumerate() {
            for g in 1..=self.ghosts {
                let ids = self.pairs.get(&(k, g)).cloned().unwrap_or_default();
                for h in du.hyperlabels(ids.len()) {
                    w.next_hyper += 1;
                    w.out
                        .hyperlabels
                        .push(format!("{}) {},", w.next_hyper, h.text(&ids)));
                }
            }
        }
    }
}
