//! Loop facts: which of the bounds an encoding proposes at its loop heads
//! ([`crate::vc::encode::LoopCandidate`]) are inductive, proved together before any question
//! and then facts of every question.
//!
//! A Houdini fixpoint: assume every live candidate's bound and ask whether some obligation can
//! fail. Unsatisfiable: the live set is inductive, each bound a fact of every run (the
//! soundness argument is in [`crate::vc::encode`]'s `invariants`). A model: the candidates
//! whose obligation it makes false are dropped, and the rest asked again (each round drops one
//! at least, so it ends). Integer bounds are settled first, asked together: a solver that
//! gives up, or a model that drops nothing, ends them with no fact. Floating-point ones come
//! next, with the integer facts proved, asked one at a time (see [`fixpoint`]): one the solver
//! cannot decide is dropped alone; signs first, then "never strictly between 0 and 1" with the
//! signs proved (each group a fixpoint of its own, with its own share of the budget).
//! Dropping a candidate is always sound; only a proved set is kept.

use super::budget::Budget;
use crate::smt::{Backend, Memory, Query, Verdict};
use crate::vc::cone::{needed_facts, FactIndex, MemoryReads, QUESTION_FP_WORK};
use crate::vc::encode::{CandidateGroup, Fact, LoopCandidate};
use crate::vc::term::Terms;

/// Each group's fixpoint may spend this part of the function's budget (a thirty-second), then
/// gives up with no fact: the labels' own questions come first.
const BUDGET_DIVISOR: u64 = 32;

/// With a deterministic budget, a question about array cells (memory read byte by byte) may
/// spend at most this part of the function's budget (a 128th: at the default limits, half a
/// question's units). On the Siemens programs at the default limits, print_tokens' cell
/// bounds were proved in none of their encodings, their questions running to the end of a
/// question's units (1 to 1.6 s each, a third of a CC run), and tot_info's were proved with
/// 750,000 units (2026-12-07).
const CELL_QUESTION_DIVISOR: u64 = 128;

/// Loop facts of one encoding: proposed, proved, and the questions asked for them.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct LoopFactStats {
    pub proposed: u64,
    pub proved: u64,
    pub queries: u64,
}

impl LoopFactStats {
    pub(super) fn add(&mut self, other: &LoopFactStats) {
        self.proposed += other.proposed;
        self.proved += other.proved;
        self.queries += other.queries;
    }
}

/// Proves what it can of `candidates` (integer bounds, then floating-point ones, group by
/// group: [`CandidateGroup`]) within `budget`, and adds the proved bounds to `facts`. With
/// `unproved` (planted faults for the soundness harnesses), the candidates of the groups it
/// names are added unproved.
pub(super) fn prove(
    backend: &mut dyn Backend,
    terms: &mut Terms,
    facts: &mut Vec<Fact>,
    candidates: &[LoopCandidate],
    budget: &Budget,
    unproved: &dyn Fn(CandidateGroup) -> bool,
) -> LoopFactStats {
    let mut stats = LoopFactStats {
        proposed: candidates.len() as u64,
        ..LoopFactStats::default()
    };
    // The values proved not negative: a sum stays whole only while nothing negative is
    // added, so a value not proved so gets no "whole" candidate asked (on InfoTbl, the column
    // sums' two cost more than the row sums' five).
    let mut not_negative = std::collections::BTreeSet::new();
    for g in CandidateGroup::ALL {
        let group: Vec<&LoopCandidate> = candidates
            .iter()
            .filter(|c| c.group == g)
            .filter(|c| !g.whole() || not_negative.contains(&c.value))
            .collect();
        let proved = if unproved(g) {
            group
        } else {
            fixpoint(backend, terms, facts, group, budget, &mut stats)
        };
        stats.proved += proved.len() as u64;
        if g.sign() {
            not_negative.extend(proved.iter().map(|c| c.value));
        }
        facts.extend(proved.iter().flat_map(|c| c.proved.iter().cloned()));
    }
    stats
}

/// The largest subset of `live` the fixpoint proves inductive (empty when it gives up).
/// Integer bounds are asked together, each round's model dropping every bound it breaks;
/// floating-point ones one at a time (a float question bit-blasts every operation in its
/// cone: all of a function's loops at once run to the time limit where one loop at a time
/// takes milliseconds), a bound the solver cannot decide dropped alone.
fn fixpoint<'c>(
    backend: &mut dyn Backend,
    terms: &mut Terms,
    facts: &[Fact],
    mut live: Vec<&'c LoopCandidate>,
    budget: &Budget,
    stats: &mut LoopFactStats,
) -> Vec<&'c LoopCandidate> {
    if live.is_empty() {
        return live;
    }
    let together = live[0].group.together();
    let index = FactIndex::new(facts);
    let cells_cap = budget.units.map(|u| (u / CELL_QUESTION_DIVISOR).max(1));
    let (work0, t0) = (backend.work(), std::time::Instant::now());
    // In resource units when the budget has them (deterministic), else on the wall clock; the
    // function's whole budget (its wall-clock backstop) bounds it too.
    let spent = |backend: &dyn Backend| {
        budget.exhausted(0)
            || match (budget.units, budget.wall) {
                (Some(u), _) => backend.work() - work0 > u / BUDGET_DIVISOR,
                (None, Some(w)) => t0.elapsed() > w / BUDGET_DIVISOR as u32,
                (None, None) => false,
            }
    };
    // Each round drops a candidate at least, or ends.
    loop {
        let bounds: Vec<_> = live.iter().map(|c| c.assumed).collect();
        // The candidates are assumed in the goal, not as context: the solver keeps its
        // context asserted for later questions, and a dropped candidate must not stay.
        let assumed = terms.and(&bounds);
        let asked: Vec<Vec<usize>> = if together {
            vec![(0..live.len()).collect()]
        } else {
            (0..live.len()).map(|i| vec![i]).collect()
        };
        let mut holds = vec![true; live.len()];
        for part in asked {
            if spent(backend) {
                return Vec::new();
            }
            let obligations: Vec<_> = part.iter().map(|&i| live[i].obligation).collect();
            // A cell bound's obligation reads memory written in the loop: byte by byte.
            let exact = part.iter().any(|&i| live[i].group.cells());
            let all_hold = terms.and(&obligations);
            let some_fails = terms.not(all_hold);
            let goal = terms.and2(assumed, some_fails);
            stats.queries += 1;
            let reads = match exact {
                true => Reads::Exact { cap: cells_cap },
                false => Reads::Unconstrained,
            };
            match ask(backend, terms, facts, &index, goal, &obligations, reads) {
                Verdict::Proved => {}
                Verdict::Refuted(values) if values.len() == part.len() => {
                    for (&i, v) in part.iter().zip(values) {
                        holds[i] = v == Some(1);
                    }
                    if part.iter().all(|&i| holds[i]) {
                        // A model that breaks nothing: no way to go on.
                        return Vec::new();
                    }
                }
                _ if together => return Vec::new(),
                _ => holds[part[0]] = false,
            }
        }
        if holds.iter().all(|h| *h) {
            return live;
        }
        live = live
            .into_iter()
            .zip(holds)
            .filter(|(_, h)| *h)
            .map(|(c, _)| c)
            .collect();
        if live.is_empty() {
            return live;
        }
    }
}

/// How a loop fact's question reads memory: every read an unconstrained byte, or byte by byte
/// (a cell bound's obligation reads memory written in the loop), within `cap` resource units.
#[derive(Clone, Copy)]
enum Reads {
    Unconstrained,
    Exact { cap: Option<u64> },
}

/// Asks whether `goal` is satisfiable, with the facts its cone needs, memory reads
/// unconstrained bytes unless exact so (an over-approximation, whose "unsatisfiable" is a
/// proof); on a model, the values of `observe`. When the cone holds floating-point
/// operations, it is first asked with their results any value but for their signs (no
/// circuit for them), and only a proof is taken from that question: a counter stepped up
/// from a value not negative needs no more. With `exact`, memory is read byte by byte, and
/// the facts on the memories read are in the cone.
fn ask(
    backend: &mut dyn Backend,
    terms: &Terms,
    facts: &[Fact],
    index: &FactIndex,
    goal: crate::vc::term::T,
    observe: &[crate::vc::term::T],
    reads: Reads,
) -> Verdict {
    let exact = matches!(reads, Reads::Exact { .. });
    if exact {
        // A proof with memory read as unconstrained bytes is a proof, and a cheaper one.
        let unconstrained = Reads::Unconstrained;
        if let Verdict::Proved = ask(backend, terms, facts, index, goal, &[], unconstrained) {
            return Verdict::Proved;
        }
    }
    let mut roots = vec![goal];
    roots.extend_from_slice(observe);
    let cheap = needed_facts(terms, facts, index, &roots, !exact, 0);
    if cheap.floats_left_out {
        if let Verdict::Proved = check(backend, terms, facts, cheap, goal, &[], reads) {
            return Verdict::Proved;
        }
    }
    let cone = needed_facts(terms, facts, index, &roots, !exact, QUESTION_FP_WORK);
    check(backend, terms, facts, cone, goal, observe, reads)
}

/// Asks `goal` with the facts of `cone`.
fn check(
    backend: &mut dyn Backend,
    terms: &Terms,
    facts: &[Fact],
    cone: crate::vc::cone::Cone,
    goal: crate::vc::term::T,
    observe: &[crate::vc::term::T],
    reads: Reads,
) -> Verdict {
    let crate::vc::cone::Cone {
        ids,
        reads: cone_reads,
        ..
    } = cone;
    let context: Vec<_> = ids.into_iter().map(|i| facts[i].fact).collect();
    let (exact, cap) = match reads {
        Reads::Exact { cap } => (true, cap),
        Reads::Unconstrained => (false, None),
    };
    let memory = if exact || cone_reads == MemoryReads::None {
        Memory::Bytes
    } else {
        Memory::Abstract
    };
    backend.check(&Query {
        terms,
        context: &context,
        goal,
        observe,
        memory,
        units_scale: 1,
        units_cap: cap,
    })
}
