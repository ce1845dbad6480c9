//! The asker: one function's questions to the solver, with its encoding, its budget (time or
//! resource units) and the share of it that questions with memory may spend.

use std::time::Instant;

use super::budget::Budget;
use super::faults::Faults;
use super::{Outcome, Reason, RunStats};
use crate::smt::{Backend, Memory, Query, Verdict};
use crate::vc::cone::{
    needed_facts, needed_facts_choosing, Cone, FactIndex, FloatChoice, MemoryReads,
    QUESTION_FP_WORK,
};
use crate::vc::encode::{Fact, LabelVc, LoopCandidate};
use crate::vc::ranges;
use crate::vc::term::{Terms, T};

/// What one function's questions share: the encoding's terms and facts, the solver, the
/// function's budget and its counters.
pub(super) struct Asker<'a> {
    pub(super) backend: Box<dyn Backend>,
    pub(super) terms: Terms,
    pub(super) facts: &'a [Fact],
    pub(super) exactness: &'a crate::vc::encode::Exactness,
    pub(super) index: FactIndex,
    pub(super) budget: Budget,
    /// What the questions with memory may spend before one of them proves something.
    pub(super) memory: Share,
    /// What step 1's questions asked again with floating-point definitions may spend before
    /// one of them proves something.
    pub(super) floats: Share,
    pub(super) stats: RunStats,
    pub(super) faults: &'a Faults,
}

/// A question's outcome and, on a model, the values of the terms it observes.
type Answer = (Outcome, Option<Vec<Option<u128>>>);

/// The questions with the function's memory written out byte by byte may spend this share of
/// the budget (a 32nd) until one of them proves something; after that, the whole budget.
/// They rarely prove, and cost much: with a quarter, on SQLite CC at the benchmark's limits
/// they spent 62% of the solver's units for 17 of 35,295 proved, and on the Siemens programs
/// and the four OpenSSL files (CC, MCC, GACC, WM, default limits) 50% for 8 of 18,569, each
/// of those first proofs within 0.2% of the share (2026-11-27). The budget they leave goes to
/// the cheap questions. With a sixteenth, each question getting at most what is left of the
/// share ([`Share::units_cap`]), they still spent 40% of the functions' own units on
/// SQLite CC (302 of 754 s of nominal solver time, for 8 proofs); with a 32nd, 30% (168 of
/// 552 s, 8 proofs), and the memory harness (its four 40-program sets, on the wall clock)
/// proves the same 493 labels as with a sixteenth, where a 64th lost 17 of them (2026-11-28).
pub(super) const MEMORY_SHARE_DIVISOR: u64 = 32;

/// A question with the function's memory written out byte by byte gets this many times a
/// question's resource units (the time limit stays the backstop), until one of the function's
/// runs out of them; the share bounds what these questions spend in all. At the default
/// limits, the memory harness's 40 programs with their external code left 31 of 246 labels on
/// a limit with a quarter of the units, 12 with the whole (satisfiable questions whose models
/// take 5 to 10 million units), 4 with twice and 2 with three times; on 200 programs, 13 of
/// 1,327 with three times (2026-11-25). Real code pays in time: `artifacts/memory-units-scale.md`.
pub(super) const MEMORY_QUESTION_UNITS_SCALE: u32 = 3;

/// The solver of one encoding's questions, named `name` in `--dump-smt` files, and the maker of
/// its loop facts' own solver (`NAME-loops`), called only when the encoding has candidates
/// ([`Asker::new`]).
pub(super) fn backends<'c>(
    solver: &'c crate::smt::SolverConfig,
    dump: Option<&'c std::path::Path>,
    name: &str,
) -> (Box<dyn Backend>, impl FnOnce() -> Box<dyn Backend> + 'c) {
    let loops = format!("{name}-loops");
    (crate::smt::backend(solver, dump, name), move || {
        crate::smt::backend(solver, dump, &loops)
    })
}

/// The share of a budget that one costly kind of question may spend before its first proof
/// ([`MEMORY_SHARE_DIVISOR`]): in resource units when the budget is, else in wall time. Two
/// kinds have one each: the questions with the function's memory written out, and step 1's
/// questions asked again with floating-point definitions (on the Siemens programs at the
/// default limits, these proved 1 label in 221 questions and took more than half of
/// tot_info's time: 2026-12-07).
pub(super) struct Share {
    pub(super) cap_units: Option<u64>,
    pub(super) cap_wall: Option<std::time::Duration>,
    pub(super) spent_units: u64,
    pub(super) spent_wall: std::time::Duration,
    pub(super) asked: u64,
    /// Questions that proved something: after the first, only the budget bounds them.
    pub(super) proved: u64,
    /// Questions that ran out of their limits, and the units they spent: after the first,
    /// the next ones get a question's own resource units, not
    /// [`MEMORY_QUESTION_UNITS_SCALE`] times them.
    pub(super) unknown: u64,
    pub(super) unknown_units: u64,
}

impl Share {
    pub(super) fn of(budget: &Budget) -> Share {
        Share {
            cap_units: budget.units.map(|u| u / MEMORY_SHARE_DIVISOR),
            cap_wall: match budget.units {
                Some(_) => None,
                None => budget.wall.map(|w| w / MEMORY_SHARE_DIVISOR as u32),
            },
            spent_units: 0,
            spent_wall: std::time::Duration::ZERO,
            asked: 0,
            proved: 0,
            unknown: 0,
            unknown_units: 0,
        }
    }

    pub(super) fn spent(&self) -> bool {
        self.proved == 0
            && (self.cap_units.is_some_and(|c| self.spent_units >= c)
                || self.cap_wall.is_some_and(|c| self.spent_wall >= c))
    }

    /// At most how many resource units the next question with memory may spend: what is left
    /// of the share until one of them proves something (then only the budget bounds them).
    /// The share then bounds what they spend in all, not only what they may start with.
    pub(super) fn units_cap(&self) -> Option<u64> {
        match self.cap_units {
            Some(c) if self.proved == 0 => Some(c.saturating_sub(self.spent_units).max(1)),
            _ => None,
        }
    }

    /// The resource units of the next question with memory, in questions' units.
    pub(super) fn units_scale(&self) -> u32 {
        if self.unknown > 0 {
            1
        } else {
            MEMORY_QUESTION_UNITS_SCALE
        }
    }

    pub(super) fn record(&mut self, units: u64, wall: std::time::Duration, verdict: &Verdict) {
        self.asked += 1;
        self.spent_units = self.spent_units.saturating_add(units);
        self.spent_wall = self.spent_wall.saturating_add(wall);
        if *verdict == Verdict::Proved {
            self.proved += 1;
        }
        if matches!(verdict, Verdict::Unknown(_)) {
            self.unknown += 1;
            self.unknown_units = self.unknown_units.saturating_add(units);
        }
    }
}

impl<'a> Asker<'a> {
    /// The asker of one encoding (its terms, facts, loop candidates and exactness) with
    /// `budget`. The loop candidates it proves inductive first ([`super::loop_facts`]) join
    /// the facts; they are asked of a solver of their own (`loop_backend`, made only when there
    /// are candidates): the fixpoint's questions span every loop of the function, and the
    /// facts a solver keeps from them would weigh on every later question.
    pub(super) fn new(
        backend: Box<dyn Backend>,
        mut terms: Terms,
        (facts, candidates, loop_backend): (
            &'a mut Vec<Fact>,
            &[LoopCandidate],
            impl FnOnce() -> Box<dyn Backend>,
        ),
        exactness: &'a crate::vc::encode::Exactness,
        budget: Budget,
        faults: &'a Faults,
    ) -> Self {
        let loop_facts = if candidates.is_empty() {
            super::loop_facts::LoopFactStats::default()
        } else {
            super::loop_facts::prove(
                &mut *loop_backend(),
                &mut terms,
                facts,
                candidates,
                &budget,
                &|g| faults.unproved(g),
            )
        };
        let facts: &'a [Fact] = facts;
        Asker {
            backend,
            terms,
            facts,
            exactness,
            index: FactIndex::new(facts),
            memory: Share::of(&budget),
            floats: Share::of(&budget),
            budget,
            stats: RunStats {
                loop_facts,
                ..RunStats::default()
            },
            faults,
        }
    }
}

impl Asker<'_> {
    /// Step 1 on one label: is `reach ∧ pred` unsatisfiable? With the label's co-reached group
    /// (`observe`: the members' predicates, `models`: that group's models so far), a model
    /// found is kept, as the members' values, for step 3; on a model, the values of `inputs`
    /// are returned too.
    pub(super) fn ask_step1_observing(
        &mut self,
        l: &LabelVc,
        observe: &[T],
        models: Option<&mut Vec<Vec<Option<u128>>>>,
        inputs: &[T],
    ) -> (Outcome, Option<Vec<Option<u128>>>) {
        let goal = self.terms.and2(l.reach, l.pred);
        self.stats.step1.queries += 1;
        let all: Vec<T> = observe.iter().chain(inputs).copied().collect();
        let (o, model) = self.decide(goal, &all);
        let Some(mut m) = model.filter(|m| m.len() == all.len()) else {
            return (o, None);
        };
        let input_values = m.split_off(observe.len());
        if let Some(models) = models {
            if !observe.is_empty() {
                models.push(m);
            }
        }
        (o, (!inputs.is_empty()).then_some(input_values))
    }

    /// [`Asker::ask_step1_observing`] with the label's cheap question only ([`Asker::decide_cheaply`]);
    /// `None` when only its question with memory can decide.
    pub(super) fn ask_step1_cheaply(
        &mut self,
        l: &LabelVc,
        observe: &[T],
        models: Option<&mut Vec<Vec<Option<u128>>>>,
    ) -> Option<Outcome> {
        let goal = self.terms.and2(l.reach, l.pred);
        self.stats.step1.queries += 1;
        let (mut answer, floats_left_out) = self.cheap_question(goal, observe, 0);
        // Floating-point results are any values in the cheap question. When that leaves it
        // undecided, it is asked again with the definitions of the results nearest it
        // ([`QUESTION_FP_WORK`]), which only a proof is taken from: their circuits make
        // questions slow, and most are satisfiable either way.
        let proved = matches!(answer, Some((Outcome::Infeasible, _)));
        if !proved && floats_left_out && !self.over_budget() && !self.floats.spent() {
            let (units_before, t) = (self.backend.work(), Instant::now());
            let (exact, _) = self.cheap_question(goal, &[], QUESTION_FP_WORK);
            self.stats.float_questions += 1;
            let verdict = match exact {
                Some((Outcome::Infeasible, _)) => Verdict::Proved,
                _ => Verdict::Refuted(Vec::new()),
            };
            self.floats
                .record(self.backend.work() - units_before, t.elapsed(), &verdict);
            if verdict == Verdict::Proved {
                self.stats.float_proofs += 1;
                answer = exact;
            }
        }
        let (o, model) = answer?;
        if let (Some(m), Some(models)) = (model.filter(|m| m.len() == observe.len()), models) {
            if !observe.is_empty() {
                models.push(m);
            }
        }
        Some(o)
    }

    /// Step 1's question with the function's memory ([`Asker::decide_with_memory`]).
    pub(super) fn ask_step1_with_memory(&mut self, l: &LabelVc) -> Outcome {
        let goal = self.terms.and2(l.reach, l.pred);
        self.decide_with_memory(goal)
    }

    /// Step 2 on one label: is it always true when reached (`reach ∧ ¬pred` unsatisfiable)?
    /// With its co-reached group's predicates (`observe`), a model found is returned as
    /// their values.
    pub(super) fn ask_always_true(
        &mut self,
        l: &LabelVc,
        observe: &[T],
    ) -> (bool, Option<Vec<Option<u128>>>) {
        let np = self.terms.not(l.pred);
        let goal = self.terms.and2(l.reach, np);
        self.stats.step2.queries += 1;
        let (o, model) = self.decide(goal, observe);
        (matches!(o, Outcome::Infeasible), model)
    }

    /// Is label `l` covered whatever the encoding's unknowns are, once `inputs` (the root's
    /// parameters, which its callers choose freely) take `values` (from a model of the
    /// label)? That is, is `reach ∧ pred` false unsatisfiable with them fixed? The encoding
    /// over-approximates every run, so the real run from those inputs is one of the runs that
    /// all cover the label: a witness that the label is feasible, as far as the root's entry
    /// is. A "no" proves nothing.
    pub(super) fn witnessed(&mut self, l: &LabelVc, inputs: &[T], values: &[Option<u128>]) -> bool {
        let goal = self.terms.and2(l.reach, l.pred);
        let mut fixed = Vec::with_capacity(inputs.len());
        for (&x, v) in inputs.iter().zip(values) {
            // An input the model leaves out is not fixed: certain for all its values.
            if let Some(v) = v {
                let w = self.terms.width(x);
                let c = self.terms.bv(w, *v);
                fixed.push(self.terms.eq(x, c));
            }
        }
        let uncovered = self.terms.not(goal);
        fixed.push(uncovered);
        let question = self.terms.and(&fixed);
        self.stats.step1.queries += 1;
        matches!(self.decide(question, &[]).0, Outcome::Infeasible)
    }

    /// Asks for a model of `l` with the values of `inputs`, then whether it is a run
    /// ([`Asker::exact`], when `entry_free`) or those values witness it
    /// ([`Asker::witnessed`]).
    pub(super) fn witness(&mut self, l: &LabelVc, inputs: &[T], entry_free: bool) -> bool {
        match self.ask_step1_observing(l, &[], None, inputs) {
            (Outcome::Unknown(Reason::Satisfiable), values) => {
                (entry_free && self.exact(l))
                    || values.is_some_and(|v| self.witnessed(l, inputs, &v))
            }
            _ => false,
        }
    }

    /// A model of label `l` (reached, predicate true; and `assume`) with the function's memory
    /// written out and the definitions of floating-point results `floats` chooses, as the
    /// values of `observe` (terms of the entry state): the inputs of a concrete call that may
    /// cover it. `None` when the solver finds none within its limits.
    pub(super) fn model_of(
        &mut self,
        l: &LabelVc,
        observe: &[T],
        assume: Option<T>,
        floats: FloatChoice,
    ) -> Option<Vec<Option<u128>>> {
        let mut goal = self.terms.and2(l.reach, l.pred);
        if let Some(a) = assume {
            goal = self.terms.and2(goal, a);
        }
        let mut roots = vec![goal];
        roots.extend_from_slice(observe);
        let cone =
            needed_facts_choosing(&self.terms, self.facts, &self.index, &roots, false, floats);
        let context: Vec<T> = cone.ids.into_iter().map(|i| self.facts[i].fact).collect();
        let q = Query {
            terms: &self.terms,
            context: &context,
            goal,
            observe,
            memory: Memory::Bytes,
            units_scale: 1,
            units_cap: None,
        };
        match self.backend.check(&q) {
            Verdict::Refuted(v) if v.len() == observe.len() => Some(v),
            _ => None,
        }
    }

    /// Is a model of `l` (reached, predicate true) a run that covers it? So when `l`'s
    /// reachability and predicate depend on the entry state alone, with no over-approximation
    /// on the way ([`crate::vc::encode::Exactness`]), and callers may choose any entry state
    /// (the encoded function's callers are not all known; it is then as feasible as step 1
    /// takes its entry to be: arguments, memory and globals arbitrary).
    pub(super) fn exact(&mut self, l: &LabelVc) -> bool {
        let goal = self.terms.and2(l.reach, l.pred);
        self.exactness.exact(&self.terms, goal)
    }

    pub(super) fn over_budget(&self) -> bool {
        self.budget.exhausted(self.backend.work())
    }

    /// Decides one question. Memory makes queries expensive, so a question that reads memory
    /// is first asked with every memory read unconstrained (cheap; unsat there is a proof),
    /// and only if that is satisfiable asked again with the byte-level memory, within the
    /// memory questions' share of the budget ([`Share`]). Returns the verdict and, when
    /// the full question was satisfiable, the model's values of `observe`.
    pub(super) fn decide(
        &mut self,
        goal: T,
        observe: &[T],
    ) -> (Outcome, Option<Vec<Option<u128>>>) {
        match self.decide_cheaply(goal, observe) {
            Some(answer) => answer,
            None => (self.decide_with_memory(goal), None),
        }
    }

    /// The cheap part of [`Asker::decide`]: the question itself when its memory reads are
    /// exact as unconstrained bytes, else the question with every read unconstrained, which
    /// decides only when it proves. `None`: only [`Asker::decide_with_memory`] can tell.
    pub(super) fn decide_cheaply(&mut self, goal: T, observe: &[T]) -> Option<Answer> {
        self.cheap_question(goal, observe, 0).0
    }

    /// [`Asker::decide_cheaply`] with the floating-point work `fp_work` ([`needed_facts`]);
    /// also says whether the question left a definition of a floating-point result out. A
    /// question about floating-point values is first given to the ranges
    /// ([`Asker::refuted_by_ranges`]), which take every definition in.
    fn cheap_question(&mut self, goal: T, observe: &[T], fp_work: u32) -> (Option<Answer>, bool) {
        if fp_work == 0 && self.terms.uses_floats(goal) && self.refuted_by_ranges(goal) {
            return (Some((Outcome::Infeasible, None)), false);
        }
        self.cheap_solver_question(goal, observe, fp_work)
    }

    /// Is `goal` unsatisfiable by the ranges of its floating-point terms
    /// ([`crate::vc::ranges`]), with the facts of its cone, every definition of a
    /// floating-point result and of a memory included?
    fn refuted_by_ranges(&mut self, goal: T) -> bool {
        let facts = self.facts;
        let cone = needed_facts(&self.terms, facts, &self.index, &[goal], false, u32::MAX);
        let context: Vec<T> = cone.ids.into_iter().map(|i| facts[i].fact).collect();
        self.stats.range_questions += 1;
        let plant = self.faults.ranges_undecided_refute;
        let refuted =
            ranges::refutes_planted(&self.terms, &context, goal, ranges::MAX_BOXES, plant);
        if refuted {
            self.stats.range_proofs += 1;
        }
        refuted
    }

    /// [`Asker::cheap_question`] asked of the solver.
    fn cheap_solver_question(
        &mut self,
        goal: T,
        observe: &[T],
        fp_work: u32,
    ) -> (Option<Answer>, bool) {
        let facts = self.facts;
        let facts_of =
            |ids: Vec<usize>| -> Vec<T> { ids.into_iter().map(|i| facts[i].fact).collect() };
        // Reads of initial memory at constant addresses (globals, fields of objects with a
        // memory of their own) lose nothing when read as unconstrained bytes: one question.
        // Models are read only from questions that hold the facts of the observed terms too:
        // otherwise their values would be arbitrary, and rule out pairs that step 3 needs.
        if !observe.is_empty() {
            let mut roots = vec![goal];
            roots.extend_from_slice(observe);
            let Cone {
                ids,
                reads,
                floats_left_out,
            } = needed_facts(&self.terms, facts, &self.index, &roots, true, fp_work);
            if reads != MemoryReads::Other {
                let answer = self.ask_once(goal, &facts_of(ids), reads, observe);
                return (Some(answer), floats_left_out);
            }
        }
        let Cone {
            ids,
            reads,
            floats_left_out,
        } = needed_facts(&self.terms, facts, &self.index, &[goal], true, fp_work);
        if reads != MemoryReads::Other {
            let answer = self.ask_once(goal, &facts_of(ids), reads, &[]);
            return (Some(answer), floats_left_out);
        }
        let light = facts_of(ids);
        let q = Query {
            terms: &self.terms,
            context: &light,
            goal,
            observe: &[],
            memory: Memory::Abstract,
            units_scale: 1,
            units_cap: None,
        };
        let proved = self.backend.check(&q) == Verdict::Proved;
        (
            proved.then_some((Outcome::Infeasible, None)),
            floats_left_out,
        )
    }

    /// The question with the function's memory written out byte by byte: asked when
    /// [`Asker::decide_cheaply`] could not decide, while the memory questions' share of the
    /// budget lasts. It gets [`MEMORY_QUESTION_UNITS_SCALE`] times a question's resource
    /// units: the share bounds what these questions spend in all.
    pub(super) fn decide_with_memory(&mut self, goal: T) -> Outcome {
        if self.memory.spent() {
            return Outcome::Unknown(Reason::MemoryShare);
        }
        let (units_before, t) = (self.backend.work(), Instant::now());
        let facts = self.facts;
        let cone = needed_facts(&self.terms, facts, &self.index, &[goal], false, 0);
        let full: Vec<T> = cone.ids.into_iter().map(|i| facts[i].fact).collect();
        let q = Query {
            terms: &self.terms,
            context: &full,
            goal,
            observe: &[],
            memory: Memory::Bytes,
            units_scale: self.memory.units_scale(),
            units_cap: self.memory.units_cap(),
        };
        let verdict = self.backend.check(&q);
        // Fault injection for the budget tests: this question spent the function's whole
        // budget, as a hard one can.
        if self.faults.memory_question_spends_budget {
            self.budget = Budget::of_wall(std::time::Duration::ZERO, self.budget.start);
        }
        self.memory
            .record(self.backend.work() - units_before, t.elapsed(), &verdict);
        // Fault injection for the share's test: this question spent the memory questions'
        // whole share.
        if self.faults.memory_question_spends_share {
            self.memory.spent_units = self.memory.cap_units.unwrap_or(u64::MAX);
            self.memory.spent_wall = self.memory.cap_wall.unwrap_or(std::time::Duration::MAX);
        }
        match verdict {
            Verdict::Proved => Outcome::Infeasible,
            Verdict::Refuted(_) => Outcome::Unknown(Reason::Satisfiable),
            Verdict::Unknown(r) => Outcome::Unknown(Reason::from_solver(&r)),
        }
    }

    /// One question whose memory reads, if any, are exact as unconstrained bytes; on a model,
    /// the values of `observe`.
    pub(super) fn ask_once(
        &mut self,
        goal: T,
        context: &[T],
        reads: MemoryReads,
        observe: &[T],
    ) -> (Outcome, Option<Vec<Option<u128>>>) {
        let memory = if reads == MemoryReads::None {
            Memory::Bytes
        } else {
            Memory::Abstract
        };
        let q = Query {
            terms: &self.terms,
            context,
            goal,
            observe,
            memory,
            units_scale: 1,
            units_cap: None,
        };
        match self.backend.check(&q) {
            Verdict::Proved => (Outcome::Infeasible, None),
            Verdict::Refuted(v) => (Outcome::Unknown(Reason::Satisfiable), Some(v)),
            Verdict::Unknown(r) => (Outcome::Unknown(Reason::from_solver(&r)), None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_with_memory_get_their_scaled_units_until_one_runs_out() {
        let budget = Budget::of_wall(std::time::Duration::from_secs(8), Instant::now());
        let mut share = Share::of(&budget);
        let tick = std::time::Duration::from_millis(1);
        assert_eq!(share.units_scale(), MEMORY_QUESTION_UNITS_SCALE);
        share.record(10, tick, &Verdict::Refuted(vec![]));
        share.record(10, tick, &Verdict::Proved);
        assert_eq!(share.units_scale(), MEMORY_QUESTION_UNITS_SCALE);
        share.record(10, tick, &Verdict::Unknown("canceled".into()));
        assert_eq!(share.units_scale(), 1);
        share.record(10, tick, &Verdict::Proved);
        assert_eq!(share.units_scale(), 1);
        assert_eq!((share.asked, share.proved), (4, 2));
    }

    #[test]
    fn questions_with_memory_get_at_most_what_is_left_of_the_share_until_one_proves() {
        let budget = Budget::of_units(MEMORY_SHARE_DIVISOR * 1_000, 1, Instant::now());
        let mut share = Share::of(&budget);
        let tick = std::time::Duration::from_millis(1);
        assert_eq!(share.units_cap(), Some(1_000));
        share.record(300, tick, &Verdict::Refuted(vec![]));
        assert_eq!(share.units_cap(), Some(700));
        share.record(700, tick, &Verdict::Unknown("canceled".into()));
        assert!(share.spent());
        share.record(5, tick, &Verdict::Proved);
        assert!(!share.spent());
        assert_eq!(share.units_cap(), None);
    }
}
