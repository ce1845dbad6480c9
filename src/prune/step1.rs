//! Step 1: is each label reachable with its predicate true? Cheap questions first (exact, or
//! with memory reads unconstrained) for every label, then the costly ones with the function's
//! memory written out, so that a function whose budget runs out has still asked every label
//! the first.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use super::asker::Asker;
use super::labels::{Asked, FunctionLabels, GroupModels};
use super::{Hooks, Occurrence, Outcome, Progress, Reason};
use crate::vc::term::T;

/// Asks step 1 of the function's labels in `ask` (every one, or a share's) or takes its
/// answer from an earlier run's journal, journals each answer; returns their occurrences with
/// their outcomes, in the order of `ask.labels`, and the ids proved infeasible. `models`
/// gathers the models found, per co-reached group.
pub(super) fn ask(
    asker: &mut Asker,
    labels: &FunctionLabels,
    ask: &Asked,
    models: &mut [GroupModels],
    hooks: &Hooks,
    progress: Progress,
    model_filter: bool,
) -> (Vec<Occurrence>, BTreeSet<u64>) {
    let (ks, encode_ms) = (ask.labels, ask.encode_ms);
    // Cheap questions first: every label is asked its cheap question (exact, or with memory
    // reads unconstrained) before any label is asked the costly one with the function's
    // memory, so that a function whose budget runs out has still asked every label the first.
    let mut outcomes: Vec<Option<Outcome>> = vec![None; labels.own.len()];
    let mut spent_ms: Vec<u128> = vec![0; labels.own.len()];
    let mut with_memory: Vec<usize> = Vec::new();
    let settle = |k: usize, outcome: Outcome, outcomes: &mut Vec<Option<Outcome>>| {
        if let Some(j) = hooks.journal {
            j.step1(&labels.function.name, k, &outcome);
        }
        progress(1);
        outcomes[k] = Some(outcome);
    };
    for &k in ks {
        let l = &labels.own[k];
        let t = Instant::now();
        if let Some(o) = hooks
            .prior
            .and_then(|p| p.step1.get(&(labels.function.name.clone(), k)).cloned())
        {
            // Found by an earlier run (`--resume`).
            progress(1);
            outcomes[k] = Some(o);
        } else if asker.over_budget() {
            settle(k, Outcome::Unknown(Reason::FunctionBudget), &mut outcomes);
        } else {
            let (observe, group_models) = group_observation(
                l.id,
                &labels.groups,
                &labels.group_of,
                |id| labels.label(id).map(|x| x.pred),
                model_filter,
                models,
            );
            match asker.ask_step1_cheaply(l, &observe, group_models) {
                Some(o) => settle(k, o, &mut outcomes),
                None => with_memory.push(k),
            }
        }
        spent_ms[k] += t.elapsed().as_millis();
    }
    for k in with_memory {
        let t = Instant::now();
        let outcome = if asker.over_budget() {
            Outcome::Unknown(Reason::FunctionBudget)
        } else {
            asker.ask_step1_with_memory(&labels.own[k])
        };
        settle(k, outcome, &mut outcomes);
        spent_ms[k] += t.elapsed().as_millis();
    }
    let mut occurrences = Vec::with_capacity(ks.len());
    let mut infeasible: BTreeSet<u64> = BTreeSet::new();
    for &k in ks {
        let l = &labels.own[k];
        let outcome = outcomes[k]
            .take()
            .expect("every label asked is settled by one of the two passes");
        if matches!(outcome, Outcome::Infeasible) {
            infeasible.insert(l.id);
        }
        let (loc, tag, text) = labels.stmts.get(&l.id).cloned().unwrap_or_default();
        occurrences.push(Occurrence {
            id: l.id,
            function: labels.function.name.clone(),
            block: l.block.0,
            loc,
            tag,
            text,
            outcome,
            time_ms: spent_ms[k] + if k == 0 { encode_ms } else { 0 },
        });
    }
    (occurrences, infeasible)
}

/// What step 1 observes in a model of label `id`: the predicates of its co-reached group
/// (with the model filter on), and that group's models, which keep a model only when it
/// covers the whole group.
pub(super) fn group_observation<'m>(
    id: u64,
    groups: &[Vec<u64>],
    group_of: &BTreeMap<u64, usize>,
    pred_of: impl Fn(u64) -> Option<T>,
    model_filter: bool,
    models: &'m mut [GroupModels],
) -> (Vec<T>, Option<&'m mut GroupModels>) {
    let observe: Vec<T> = match group_of.get(&id) {
        Some(&gi) if model_filter => groups[gi].iter().filter_map(|id| pred_of(*id)).collect(),
        _ => Vec::new(),
    };
    let group_models = group_of
        .get(&id)
        .filter(|&&gi| observe.len() == groups[gi].len())
        .map(|&gi| &mut models[gi]);
    (observe, group_models)
}
