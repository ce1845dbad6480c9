//! One function's proof: encode it, ask step 1 for every label, steps 2 and 3 group by
//! group, then the labels of its inlined copies in their calling contexts.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use super::asker::{Asker, Share};
use super::budget::Budget;
use super::labels::{label_stmts, unencoded_labels, Asked, FunctionLabels, GroupModels};
use super::shares::{self, ShareResult};
use super::{
    contexts, groups, FunctionResult, Hooks, Occurrence, Outcome, Progress, Prover, PruneConfig,
    Reason, RunStats, ANCHOR_BASE,
};
use crate::console::print_err;
use crate::ir::{Callee, Function, Program, StmtKind};
use crate::vc::encode::{encode, encode_until, FunctionVc, LabelVc};
use crate::vc::Summaries;

/// A function whose encoding outlasted its budget: every label unknown, nothing asked.
pub(super) fn unencoded_function(f: &Function, config: &PruneConfig) -> FunctionResult {
    unasked_function(f, config, Outcome::Unknown(Reason::FunctionBudget))
}

/// A function no run enters ([`unreached::never_entered`]): every label infeasible, nothing
/// asked.
pub(super) fn unentered_function(f: &Function, config: &PruneConfig) -> FunctionResult {
    unasked_function(f, config, Outcome::Infeasible)
}

/// Every label of `f` with the same outcome, nothing asked.
pub(super) fn unasked_function(
    f: &Function,
    config: &PruneConfig,
    outcome: Outcome,
) -> FunctionResult {
    let stmts = label_stmts(f);
    let occurrences = unencoded_labels(f)
        .into_iter()
        .map(|(id, block)| {
            let (loc, tag, text) = stmts.get(&id).cloned().unwrap_or_default();
            Occurrence {
                id,
                function: f.name.clone(),
                block: block.0,
                loc,
                tag,
                text,
                outcome: outcome.clone(),
                time_ms: 0,
            }
        })
        .collect();
    unasked_result(f, occurrences, config)
}

/// The result of a function whose step-1 outcomes are all that is known of it (nothing
/// grouped, related or decided in context).
pub(super) fn unasked_result(
    f: &Function,
    occurrences: Vec<Occurrence>,
    config: &PruneConfig,
) -> FunctionResult {
    FunctionResult {
        function: f.name.clone(),
        occurrences,
        context_infeasible: BTreeSet::new(),
        groups: Vec::new(),
        copies: Vec::new(),
        run_implications: BTreeMap::new(),
        run_infeasible: BTreeSet::new(),
        call_sites: BTreeMap::new(),
        witnessed: config.witnessed_subsumers.then(BTreeSet::new),
        stats: RunStats::default(),
    }
}

/// A function the process died on: its step-1 answers from the journal are kept, and the rest
/// stays unknown without asking the solver again.
pub(super) fn crashed_function(
    program: &Program,
    f: &Function,
    sums: &Summaries,
    config: &PruneConfig,
    hooks: &Hooks,
) -> FunctionResult {
    let vc = encode(program, f, sums, &config.encode);
    let stmts = label_stmts(f);
    let occurrences = vc
        .labels
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let (loc, tag, text) = stmts.get(&l.id).cloned().unwrap_or_default();
            Occurrence {
                id: l.id,
                function: f.name.clone(),
                block: l.block.0,
                loc,
                tag,
                text,
                outcome: hooks
                    .prior
                    .and_then(|p| p.step1.get(&(f.name.clone(), k)).cloned())
                    .unwrap_or(Outcome::Unknown(Reason::SolverDied)),
                time_ms: 0,
            }
        })
        .collect();
    unasked_result(f, occurrences, config)
}

/// Proves the labels of function `f` (its own, and those of called-once callees in the
/// `context` of their call here), in a solver context of its own.
pub(super) fn prove_function(
    prover: &Prover,
    f: &Function,
    context: &[(String, Vec<u64>)],
    progress: Progress,
    hooks: &Hooks,
) -> FunctionResult {
    let config = &prover.config;
    crate::smt::in_fresh_context(|| {
        let t0 = Instant::now();
        let Some(mut vc) = encode_within(prover, f, t0) else {
            let r = unencoded_function(f, config);
            progress(r.occurrences.len() as u64);
            return r;
        };
        let encode_ms = t0.elapsed().as_millis();
        let labels = labels_of(prover, f, context, &vc.labels, &vc.context_labels);
        let mut asker = function_asker(
            prover,
            f,
            vc.terms,
            (
                &mut vc.facts,
                loops_for(&labels, &vc.loop_candidates),
                &vc.exactness,
            ),
            t0,
        );
        let every_label: Vec<usize> = (0..labels.own.len()).collect();
        let every_group: Vec<usize> = (0..labels.groups.len()).collect();
        let ask = Asked {
            labels: &every_label,
            groups: &every_group,
            encode_ms,
            share: None,
        };
        let share = ask_own(&mut asker, &labels, &ask, config, progress, hooks);
        let own = Own {
            inputs: &vc.inputs,
            opaque_calls: &vc.opaque_calls,
        };
        finish_here(prover, &mut asker, &labels, &own, vec![share], t0)
            .unwrap_or_else(|| unencoded_function(f, config))
    })
}

/// Proves share `share` of function `f`'s own questions ([`shares`](super::shares)), in a
/// solver context of its own, with the function's budget and its part of the memory
/// questions' share of it.
pub(super) fn prove_share(
    prover: &Prover,
    f: &Function,
    context: &[(String, Vec<u64>)],
    share: usize,
    progress: Progress,
    hooks: &Hooks,
) -> ShareResult {
    let config = &prover.config;
    crate::smt::in_fresh_context(|| {
        let t0 = Instant::now();
        let Some(mut vc) = encode_within(prover, f, t0) else {
            return ShareResult {
                function: f.name.clone(),
                share,
                occurrences: Vec::new(),
                context_infeasible: BTreeSet::new(),
                groups: Vec::new(),
                stats: RunStats::default(),
                unencoded: true,
                crashed: false,
            };
        };
        let encode_ms = t0.elapsed().as_millis();
        let labels = labels_of(prover, f, context, &vc.labels, &vc.context_labels);
        let shares = shares::shares_of(f);
        let part = shares::assign(&labels, shares, share);
        // Each share has the function's budget, and its part of what questions with memory
        // may spend before one of them proves something.
        let mut asker = function_asker(
            prover,
            f,
            vc.terms,
            (
                &mut vc.facts,
                loops_for(&labels, &vc.loop_candidates),
                &vc.exactness,
            ),
            t0,
        );
        let part_budget = Budget::new(config, t0).part(part.weight, part.total);
        asker.memory = Share::of(&part_budget);
        asker.floats = Share::of(&part_budget);
        let ask = Asked {
            labels: &part.labels,
            groups: &part.groups,
            encode_ms,
            share: Some((share, shares)),
        };
        ask_own(&mut asker, &labels, &ask, config, progress, hooks)
    })
}

/// Finishes function `f` once every share of its own questions is in: its callees' copies
/// in their calling contexts and the witnesses, in a solver context of its own.
pub(super) fn finish_function(
    prover: &Prover,
    f: &Function,
    context: &[(String, Vec<u64>)],
    shares: Vec<ShareResult>,
) -> FunctionResult {
    let config = &prover.config;
    crate::smt::in_fresh_context(|| {
        let t0 = Instant::now();
        let Some(mut vc) = encode_within(prover, f, t0) else {
            return unencoded_function(f, config);
        };
        let labels = labels_of(prover, f, context, &vc.labels, &vc.context_labels);
        // The finish asks questions of this encoding only to witness subsumers.
        let loops: &[crate::vc::encode::LoopCandidate] = match config.witnessed_subsumers {
            true => loops_for(&labels, &vc.loop_candidates),
            false => &[],
        };
        let mut asker = function_asker(
            prover,
            f,
            vc.terms,
            (&mut vc.facts, loops, &vc.exactness),
            t0,
        );
        let own = Own {
            inputs: &vc.inputs,
            opaque_calls: &vc.opaque_calls,
        };
        finish_here(prover, &mut asker, &labels, &own, shares, t0)
            .unwrap_or_else(|| unencoded_function(f, config))
    })
}

/// The labels of an encoding of `f` in `context` (its own, and those of the callees inlined
/// there), in their co-reached groups.
fn labels_of<'a>(
    prover: &Prover,
    f: &'a Function,
    context: &[(String, Vec<u64>)],
    own: &'a [LabelVc],
    inlined: &[LabelVc],
) -> FunctionLabels<'a> {
    let groups = co_reached_groups(prover, f, context, inlined);
    FunctionLabels::new(f, own, inlined, groups)
}

/// The loop candidates worth proving for the questions of an encoding with `labels`: none
/// when it has no label to ask (its callees' copies are asked in encodings of their own).
fn loops_for<'c>(
    labels: &FunctionLabels,
    candidates: &'c [crate::vc::encode::LoopCandidate],
) -> &'c [crate::vc::encode::LoopCandidate] {
    match labels.all.is_empty() {
        true => &[],
        false => candidates,
    }
}

/// Encodes `f` within its budget (which bounds the encoding too: one that outlasts it is
/// given up, unasked).
fn encode_within(prover: &Prover, f: &Function, t0: Instant) -> Option<FunctionVc> {
    let config = &prover.config;
    let deadline = (config.function_budget_s > 0)
        .then(|| t0 + std::time::Duration::from_secs(config.function_budget_s));
    let Some(vc) = encode_until(prover.program, f, &prover.sums, &config.encode, deadline) else {
        if config.trace {
            print_err(&format!(
                "covprune: {}: encoding given up after {} ms, over the function's budget",
                f.name,
                t0.elapsed().as_millis()
            ));
        }
        return None;
    };
    if config.trace {
        let names = |v: &[String]| match v.is_empty() {
            true => "none".to_string(),
            false => v.join(", "),
        };
        print_err(&format!(
            "covprune: {}: encoded {} blocks, {} terms, {} labels in {} ms",
            f.name,
            f.blocks.len(),
            vc.terms.len(),
            vc.labels.len(),
            t0.elapsed().as_millis()
        ));
        print_err(&format!(
            "covprune: {}: memories of their own: {}; shared memory: {}",
            f.name,
            names(&vc.own_objects),
            names(&vc.shared_objects)
        ));
    }
    Some(vc)
}

/// The asker of one encoding of `f`, with the function's budget from `t0` on.
fn function_asker<'a>(
    prover: &'a Prover,
    f: &Function,
    terms: crate::vc::term::Terms,
    (facts, candidates, exactness): (
        &'a mut Vec<crate::vc::encode::Fact>,
        &[crate::vc::encode::LoopCandidate],
        &'a crate::vc::encode::Exactness,
    ),
    t0: Instant,
) -> Asker<'a> {
    let config = &prover.config;
    let (backend, loops) =
        super::asker::backends(&config.solver, config.dump_smt.as_deref(), &f.name);
    let budget = Budget::new(config, t0);
    Asker::new(
        backend,
        terms,
        (facts, candidates, loops),
        exactness,
        budget,
        &config.faults,
    )
}

/// What the finish reads of the function's own encoding.
struct Own<'a> {
    inputs: &'a [crate::vc::term::T],
    opaque_calls: &'a BTreeSet<String>,
}

/// Asks step 1 of the labels and steps 2 and 3 of the groups in `ask`.
fn ask_own(
    asker: &mut Asker,
    labels: &FunctionLabels,
    ask: &Asked,
    config: &PruneConfig,
    progress: Progress,
    hooks: &Hooks,
) -> ShareResult {
    let t0 = Instant::now();
    let profile0 = asker.backend.profile();
    // Models seen so far, per group: each a vector of predicate values of the members.
    let mut models: Vec<GroupModels> = vec![Vec::new(); labels.groups.len()];
    let (occurrences, infeasible) = super::step1::ask(
        asker,
        labels,
        ask,
        &mut models,
        hooks,
        progress,
        config.model_filter,
    );
    asker.stats.step1.ms = t0.elapsed().as_millis();
    let units_step1 = asker.backend.work();
    let t23 = Instant::now();
    let (context_infeasible, groups) =
        super::steps23::ask(asker, labels, ask.groups, &models, config, &infeasible);
    if config.trace {
        let f = &labels.function.name;
        let what = match ask.share {
            Some((k, n)) => format!("{f} (share {} of {n})", k + 1),
            None => f.clone(),
        };
        // Where the time went: in the solver's checks, its models, the rest of its questions
        // (translation), and outside them (choosing facts, bookkeeping).
        let p = asker.backend.profile();
        let spent = crate::smt::Profile {
            total: p.total.saturating_sub(profile0.total),
            solver: p.solver.saturating_sub(profile0.solver),
            models: p.models.saturating_sub(profile0.models),
        };
        let (solver_ms, models_ms, translation_ms) = spent.split_ms();
        let elapsed = t0.elapsed();
        print_err(&format!(
            "covprune: {what}: asked in {} ms (step 1 {} ms and {} units, steps 2-3 {} ms and {} units; checks {solver_ms} ms, models {models_ms} ms, translation {translation_ms} ms, outside the solver {} ms); questions {}/{}/{} ({} answered by earlier models, {} asked before); questions with memory {} ({} proved, {} units, {} on a limit with {} units{}); loop facts {} of {} proved ({} questions); with floats defined {} ({} proved{}); by ranges {} ({} proved){}",
            elapsed.as_millis(),
            asker.stats.step1.ms,
            units_step1,
            t23.elapsed().as_millis(),
            asker.backend.work() - units_step1,
            elapsed.saturating_sub(spent.total).as_millis(),
            asker.stats.step1.queries,
            asker.stats.step2.queries,
            asker.stats.step3.queries,
            asker.backend.reused_models(),
            asker.backend.repeated_questions(),
            asker.memory.asked,
            asker.memory.proved,
            asker.memory.spent_units,
            asker.memory.unknown,
            asker.memory.unknown_units,
            if asker.memory.spent() {
                ", their share spent"
            } else {
                ""
            },
            asker.stats.loop_facts.proved,
            asker.stats.loop_facts.proposed,
            asker.stats.loop_facts.queries,
            asker.stats.float_questions,
            asker.stats.float_proofs,
            if asker.floats.spent() {
                ", their share spent"
            } else {
                ""
            },
            asker.stats.range_questions,
            asker.stats.range_proofs,
            if asker.over_budget() {
                " (budget exhausted)"
            } else {
                ""
            }
        ));
    }
    ShareResult {
        function: labels.function.name.clone(),
        share: ask.share.map_or(0, |(k, _)| k),
        occurrences: ask.labels.iter().copied().zip(occurrences).collect(),
        context_infeasible,
        groups: ask.groups.iter().copied().zip(groups).collect(),
        stats: std::mem::take(&mut asker.stats),
        unencoded: false,
        crashed: false,
    }
}

/// The function's result from the answers to its own questions (`shares`): then the
/// witnesses of its subsumers, in `asker`'s encoding, and its callees' copies in their
/// calling contexts, in an encoding of their own. `None` when a share was not encoded.
fn finish_here(
    prover: &Prover,
    asker: &mut Asker,
    labels: &FunctionLabels,
    own: &Own,
    shares: Vec<ShareResult>,
    t0: Instant,
) -> Option<FunctionResult> {
    let (program, config, cg) = (prover.program, &prover.config, &prover.cg);
    let f = labels.function;
    let shares::Combined {
        mut occurrences,
        context_infeasible,
        groups: results,
        stats,
    } = shares::combine_shares(shares)?;
    asker.stats = stats;
    // Subsumers witnessed here, once the function's own questions are asked (a witness only
    // lets a label stand as a partner; it proves nothing polluting).
    let witnessed = config.witnessed_subsumers.then(|| {
        let callers_known =
            super::copies::callers_all_known(program, cg, &f.name, config.encode.entry_main);
        if callers_known {
            // Its callers choose its arguments: only its copies in their contexts witness.
            return BTreeSet::new();
        }
        let subsumers: BTreeSet<u64> = results
            .iter()
            .flat_map(|g| g.implications.iter().map(|(a, _)| *a))
            .collect();
        let per_ms = config.solver.units_per_ms();
        asker.budget = contexts::witness_budget(asker, per_ms);
        subsumers
            .into_iter()
            .filter(|id| {
                let Some(l) = labels.label(*id) else {
                    return false;
                };
                !asker.over_budget() && asker.witness(l, own.inputs, true)
            })
            .collect()
    });
    // The labels of inlined copies, in their calling contexts: in an encoding of their own,
    // so that this function's own questions are asked the same with or without contexts.
    // Own labels left satisfiable are asked again there when it inlines more calls: it can
    // only add proofs.
    let t_copies = Instant::now();
    let recheck: BTreeSet<u64> = occurrences
        .iter()
        .filter(|o| o.outcome == Outcome::Unknown(Reason::Satisfiable))
        .map(|o| o.id)
        .collect();
    let (decided, copied) =
        contexts::prove_copies(prover, f, &recheck, own.opaque_calls, &mut asker.stats);
    for o in occurrences.iter_mut() {
        if decided.own_infeasible.contains(&o.id) {
            o.outcome = Outcome::Infeasible;
        }
    }
    let mut relevant: BTreeSet<&str> = BTreeSet::from([f.name.as_str()]);
    for (path, function) in &copied {
        relevant.insert(function.as_str());
        relevant.extend(path.iter().map(|s| s.caller.as_str()));
    }
    let call_sites = relevant
        .into_iter()
        .filter_map(|n| prover.sites.get(n).map(|s| (n.to_string(), s.clone())))
        .collect();
    if config.trace {
        let st = &asker.stats;
        print_err(&format!(
            "covprune: {}: done in {} ms (calling contexts {} ms); questions {}/{}/{}{}",
            f.name,
            t0.elapsed().as_millis(),
            t_copies.elapsed().as_millis(),
            st.step1.queries,
            st.step2.queries,
            st.step3.queries,
            match &witnessed {
                Some(w) => format!("; {} subsumers witnessed", w.len()),
                None => String::new(),
            },
        ));
    }
    Some(FunctionResult {
        function: f.name.clone(),
        occurrences,
        context_infeasible,
        groups: results,
        copies: decided.copies,
        run_implications: decided.run_level,
        run_infeasible: decided.run_infeasible,
        call_sites,
        witnessed,
        stats: std::mem::take(&mut asker.stats),
    })
}

/// The co-reached groups of `f`'s single-occurrence labels (with steps 2 or 3; the model
/// filter of step 1 needs them already); the call of each called-once callee stands for the
/// callee's entry labels, encoded inline there.
fn co_reached_groups(
    prover: &Prover,
    f: &Function,
    context: &[(String, Vec<u64>)],
    inlined: &[LabelVc],
) -> Vec<Vec<u64>> {
    // Co-reached groups of single-occurrence labels (needed by the model filter already).
    let (config, cg) = (&prover.config, &prover.cg);
    let single = |id: u64| prover.occurrences.get(&id) == Some(&1);
    let want_groups = config.steps.contains(&2) || config.steps.contains(&3);
    if want_groups {
        let may_stop = |c: &Callee| match c {
            Callee::Direct(n) => cg.may_not_return(n),
            Callee::Indirect(_) => true,
        };
        // The call of each called-once callee is an anchor: the callee's entry labels, encoded
        // inline there, take its place in the group.
        let mut anchors = Vec::new();
        for (b, blk) in f.blocks.iter().enumerate() {
            for (i, s) in blk.stmts.iter().enumerate() {
                if let StmtKind::Call {
                    callee: Callee::Direct(name),
                    ..
                } = &s.kind
                {
                    if let Some(k) = context.iter().position(|(g, _)| g == name) {
                        anchors.push(groups::Point {
                            id: ANCHOR_BASE + k as u64,
                            block: crate::ir::BlockId(b as u32),
                            index: i,
                        });
                    }
                }
            }
        }
        let in_inline_copy = |id: &u64| inlined.iter().any(|l| l.id == *id);
        groups::co_reached_with(f, &may_stop, &anchors)
            .into_iter()
            .map(|g| {
                g.into_iter()
                    .flat_map(|p| match p.id.checked_sub(ANCHOR_BASE) {
                        Some(k) => context[k as usize]
                            .1
                            .iter()
                            .copied()
                            .filter(in_inline_copy)
                            .collect::<Vec<_>>(),
                        None => vec![p.id],
                    })
                    .filter(|id| single(*id))
                    .collect::<Vec<_>>()
            })
            .filter(|g: &Vec<u64>| g.len() >= 2 || config.steps.contains(&2))
            .collect()
    } else {
        Vec::new()
    }
}
