//! Steps 2 and 3, group by group: labels always true when reached (duplicates of one
//! representative), then implications between the labels of a co-reached group, with models
//! ruling pairs out before they are asked and transitivity sparing questions.

use std::collections::BTreeSet;
use std::time::Instant;

use super::asker::Asker;
use super::labels::{FunctionLabels, GroupModels};
use super::{GroupResult, Outcome, PruneConfig, MAX_STEP3_GROUP};
use crate::vc::encode::LabelVc;
use crate::vc::term::T;

/// Steps 2 and 3 of the co-reached groups `gis` of the function (indices into its groups;
/// every one, or a share's), not of their labels proved infeasible by step 1, `infeasible`;
/// the labels of called-once callees get their step 1 here, in their only context. Returns
/// those proved infeasible there, and each group's result, in the order of `gis`.
pub(super) fn ask(
    asker: &mut Asker,
    labels: &FunctionLabels,
    gis: &[usize],
    models: &[GroupModels],
    config: &PruneConfig,
    infeasible: &BTreeSet<u64>,
) -> (BTreeSet<u64>, Vec<GroupResult>) {
    // Labels of called-once callees get their step 1 here too, in their only context.
    let mut context_infeasible = BTreeSet::new();
    for id in gis
        .iter()
        .flat_map(|&gi| &labels.groups[gi])
        .copied()
        .filter(|id| labels.is_context(*id))
    {
        let Some(l) = labels.label(id) else { continue };
        if asker.over_budget() {
            break;
        }
        let (o, _) = asker.ask_step1_observing(l, &[], None, &[]);
        if matches!(o, Outcome::Infeasible) {
            context_infeasible.insert(id);
        }
    }
    let mut results = Vec::new();
    for &gi in gis {
        let group = &labels.groups[gi];
        let in_context = group.iter().any(|id| labels.is_context(*id));
        let members: Vec<u64> = group
            .iter()
            .copied()
            .filter(|id| !infeasible.contains(id) && !context_infeasible.contains(id))
            .collect();
        // The group's models so far, with those step 2 finds.
        let mut group_models = models[gi].clone();
        let mut always_true = BTreeSet::new();
        if config.steps.contains(&2) {
            let t2 = Instant::now();
            (always_true, _) = step2(
                asker,
                group,
                &members,
                &mut group_models,
                |id| labels.label(id),
                config.model_filter,
            );
            asker.stats.step2.ms += t2.elapsed().as_millis();
        }
        let mut implications = BTreeSet::new();
        if config.steps.contains(&3) {
            let t3 = Instant::now();
            // Always-true labels are merged into their representative for step 3.
            let rep2 = always_true.iter().next().copied();
            let survivors: Vec<u64> = members
                .iter()
                .copied()
                .filter(|id| Some(*id) == rep2 || !always_true.contains(id))
                .collect();
            if survivors.len() >= 2 && survivors.len() <= MAX_STEP3_GROUP {
                implications = step3(
                    asker,
                    &Step3Group {
                        survivors: &survivors,
                        group,
                        models: &group_models,
                        labels: &labels.all,
                    },
                    config.model_filter,
                );
            }
            asker.stats.step3.ms += t3.elapsed().as_millis();
        }
        results.push(GroupResult {
            members,
            always_true,
            implications,
            in_context,
        });
    }
    (context_infeasible, results)
}

/// Step 2 on the `members` of one co-reached `group`: those always true when reached. A
/// model of the group (every member reached) where a member is false spares its question;
/// with the model filter on, the models step 2 finds join `models`. Also says whether the
/// budget cut it short.
pub(super) fn step2<'l>(
    asker: &mut Asker,
    group: &[u64],
    members: &[u64],
    models: &mut GroupModels,
    label: impl Fn(u64) -> Option<&'l LabelVc>,
    model_filter: bool,
) -> (BTreeSet<u64>, bool) {
    let observe = observed_predicates(group, &label, model_filter);
    let mut always_true = BTreeSet::new();
    for &id in members {
        let Some(l) = label(id) else { continue };
        let position = group.iter().position(|x| *x == id);
        let refuted = !observe.is_empty()
            && position.is_some_and(|p| {
                models
                    .iter()
                    .any(|m| m.get(p).copied().flatten() == Some(0))
            });
        if refuted {
            continue;
        }
        if asker.over_budget() {
            return (always_true, true);
        }
        let (proved, model) = asker.ask_always_true(l, &observe);
        if proved {
            always_true.insert(id);
        }
        if let Some(m) = model.filter(|m| !observe.is_empty() && m.len() == group.len()) {
            models.push(m);
        }
    }
    (always_true, false)
}

/// What steps 2 and 3 observe in a model: the predicates of the whole `group`, in its order,
/// with the model filter on and every member's label at hand; else nothing.
fn observed_predicates<'l>(
    group: &[u64],
    label: impl Fn(u64) -> Option<&'l LabelVc>,
    model_filter: bool,
) -> Vec<T> {
    let preds: Vec<T> = group
        .iter()
        .filter_map(|id| label(*id).map(|l| l.pred))
        .collect();
    if model_filter && preds.len() == group.len() {
        preds
    } else {
        Vec::new()
    }
}

/// One co-reached group as step 3 sees it.
pub(super) struct Step3Group<'a> {
    /// The members left after steps 1 and 2, compared pairwise.
    pub(super) survivors: &'a [u64],
    /// The whole group, in the order models observe it.
    pub(super) group: &'a [u64],
    /// Models found so far, as values of the group's predicates.
    pub(super) models: &'a [Vec<Option<u128>>],
    pub(super) labels: &'a [LabelVc],
}

/// Step 3 on one group: the proven implications `i ⇒ j` among its survivors.
pub(super) fn step3(asker: &mut Asker, g: &Step3Group, model_filter: bool) -> BTreeSet<(u64, u64)> {
    let (survivors, group, labels) = (g.survivors, g.group, g.labels);
    let n = survivors.len();
    let pos_in_group = |id: u64| group.iter().position(|x| *x == id);
    let lab = |id: u64| labels.iter().find(|l| l.id == id);
    // known[i][j]: Some(true) proven, Some(false) refuted, None not yet known.
    let mut known = vec![vec![None::<bool>; n]; n];
    let refute_with = |values: &[Option<u128>], known: &mut Vec<Vec<Option<bool>>>| {
        for a in 0..n {
            for b in 0..n {
                if a == b || known[a][b].is_some() {
                    continue;
                }
                let (Some(pa), Some(pb)) = (pos_in_group(survivors[a]), pos_in_group(survivors[b]))
                else {
                    continue;
                };
                if values.get(pa).copied().flatten() == Some(1)
                    && values.get(pb).copied().flatten() == Some(0)
                {
                    known[a][b] = Some(false);
                }
            }
        }
    };
    if model_filter {
        for m in g.models {
            refute_with(m, &mut known);
        }
    }
    let observe = observed_predicates(group, lab, model_filter);
    for a in 0..n {
        for b in 0..n {
            if a == b {
                continue;
            }
            if known[a][b].is_some() {
                if known[a][b] == Some(false) {
                    asker.stats.refuted_by_models += 1;
                }
                continue;
            }
            // Transitivity: a ⇒ k ⇒ b.
            if (0..n).any(|k| known[a][k] == Some(true) && known[k][b] == Some(true)) {
                known[a][b] = Some(true);
                asker.stats.by_transitivity += 1;
                continue;
            }
            if asker.over_budget() {
                return BTreeSet::new();
            }
            let (Some(la), Some(lb)) = (lab(survivors[a]), lab(survivors[b])) else {
                continue;
            };
            // The later of the two locations: its reach condition implies the earlier one's.
            let later = if pos_in_group(survivors[a]) > pos_in_group(survivors[b]) {
                la.reach
            } else {
                lb.reach
            };
            let nb = asker.terms.not(lb.pred);
            let goal = asker.terms.and(&[later, la.pred, nb]);
            asker.stats.step3.queries += 1;
            let (o, model) = asker.decide(goal, &observe);
            match o {
                Outcome::Infeasible => known[a][b] = Some(true),
                Outcome::Unknown(_) => {
                    known[a][b] = Some(false);
                    if let Some(m) = model {
                        if model_filter {
                            refute_with(&m, &mut known);
                        }
                    }
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    for a in 0..n {
        for b in 0..n {
            if a != b && known[a][b] == Some(true) {
                out.insert((survivors[a], survivors[b]));
            }
        }
    }
    out
}
