//! Answers by question: a question asked again in one session gets its first answer without
//! a check. Steps ask the same question more than once: for condition coverage's `c` and `!c`
//! at one place, step 2 of the one is step 1 of the other, memory question included.
//!
//! Whether a formula is satisfiable does not depend on the limits it is asked with: proofs and
//! "satisfiable" are kept by goal, facts and memory (a satisfiable one without its model, so
//! that a repeat observes no values: `None` for each observed term), an unknown with its
//! limits too, and claims nothing.

use std::collections::HashMap;

use super::{Memory, Query, Verdict};
use crate::vc::term::T;

#[derive(Clone, Hash, PartialEq, Eq)]
struct TruthKey {
    goal: T,
    context: Vec<T>,
    memory: Memory,
}

/// A question as this memory knows it: built once per question, looked up, then kept.
#[derive(Hash, PartialEq, Eq)]
pub(super) struct Key {
    truth: TruthKey,
    units_scale: u32,
    units_cap: Option<u64>,
}

#[derive(Default)]
pub(super) struct Answers {
    truths: HashMap<TruthKey, Verdict>,
    unknowns: HashMap<Key, Verdict>,
    /// Questions answered here.
    pub(super) repeated: u64,
}

impl Answers {
    pub(super) fn key(q: &Query) -> Key {
        Key {
            truth: TruthKey {
                goal: q.goal,
                context: q.context.to_vec(),
                memory: q.memory,
            },
            units_scale: q.units_scale,
            units_cap: q.units_cap,
        }
    }

    /// The answer the question `key` got before, if any; `observed`: how many terms it
    /// observes (a repeated "satisfiable" gives `None` for each).
    pub(super) fn get(&mut self, key: &Key, observed: usize) -> Option<Verdict> {
        let found = match self.truths.get(&key.truth) {
            Some(Verdict::Refuted(_)) => Some(Verdict::Refuted(vec![None; observed])),
            Some(v) => Some(v.clone()),
            None => self.unknowns.get(key).cloned(),
        };
        if found.is_some() {
            self.repeated += 1;
        }
        found
    }

    /// Keeps `v`, the answer to the question `key`.
    pub(super) fn keep(&mut self, key: Key, v: &Verdict) {
        match v {
            Verdict::Proved => {
                self.truths.insert(key.truth, Verdict::Proved);
            }
            Verdict::Refuted(_) => {
                self.truths.insert(key.truth, Verdict::Refuted(Vec::new()));
            }
            Verdict::Unknown(_) => {
                self.unknowns.insert(key, v.clone());
            }
        }
    }
}
