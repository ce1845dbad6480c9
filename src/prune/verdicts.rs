//! What proving yields: each function's raw results (label occurrences, co-reached groups,
//! implications, calling-context facts) and how they combine into one verdict per label.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::copies::{Contexts, CopyResult};
use super::{Reason, Status};
use crate::ir::Loc;

#[derive(Clone, Debug)]
pub struct LabelVerdict {
    pub id: u64,
    pub status: Status,
    /// The step that decided the status.
    pub step: Option<u8>,
    pub time_ms: u128,
    pub function: String,
    pub loc: Loc,
    pub tag: String,
    pub text: String,
}

/// Counts and timings of a run, for summaries and benchmarks.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunStats {
    pub step1: StepStats,
    pub step2: StepStats,
    pub step3: StepStats,
    /// Step-3 pairs refuted by a model without asking the solver.
    pub refuted_by_models: u64,
    /// Step-3 pairs settled by transitivity.
    pub by_transitivity: u64,
    /// Bounds proposed at loop heads, proved inductive, and the questions that decided them.
    #[serde(default)]
    pub loop_facts: super::loop_facts::LoopFactStats,
    /// Step-1 questions asked again with floating-point results defined, and their proofs.
    #[serde(default)]
    pub float_questions: u64,
    #[serde(default)]
    pub float_proofs: u64,
    /// Questions given to the ranges of their floating-point terms, and those they refuted.
    #[serde(default)]
    pub range_questions: u64,
    #[serde(default)]
    pub range_proofs: u64,
}

/// Questions asked by one step, and the time they took.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct StepStats {
    pub queries: u64,
    pub ms: u128,
}

impl StepStats {
    pub(super) fn add(&mut self, other: &StepStats) {
        self.queries += other.queries;
        self.ms += other.ms;
    }
}

impl RunStats {
    pub(super) fn add(&mut self, other: &RunStats) {
        self.step1.add(&other.step1);
        self.step2.add(&other.step2);
        self.step3.add(&other.step3);
        self.refuted_by_models += other.refuted_by_models;
        self.by_transitivity += other.by_transitivity;
        self.loop_facts.add(&other.loop_facts);
        self.float_questions += other.float_questions;
        self.float_proofs += other.float_proofs;
        self.range_questions += other.range_questions;
        self.range_proofs += other.range_proofs;
    }
}

/// One occurrence of a label in the IR (an id may occur more than once, e.g. in a macro
/// expanded twice: the label is infeasible only if every occurrence is).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Occurrence {
    pub id: u64,
    pub function: String,
    /// The block of the occurrence in its function (what inlined copies are matched on).
    #[serde(default)]
    pub block: u32,
    pub loc: Loc,
    pub tag: String,
    pub text: String,
    pub outcome: Outcome,
    pub time_ms: u128,
}

/// A step-1 answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    Infeasible,
    Unknown(Reason),
}

/// What steps 2 and 3 found in one co-reached group.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GroupResult {
    /// Members (single-occurrence, not infeasible), in execution order.
    pub members: Vec<u64>,
    pub always_true: BTreeSet<u64>,
    /// Proven implications `i ⇒ j` (after merging always-true labels).
    pub implications: BTreeSet<(u64, u64)>,
    /// The group joins a caller's labels with those of a called-once callee, encoded inline
    /// at its call: it supersedes the callee's own group for those labels.
    pub in_context: bool,
}

/// Everything the engine found in one function: what journals and shard files hold.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FunctionResult {
    pub function: String,
    pub occurrences: Vec<Occurrence>,
    /// Labels of called-once callees proven unreachable or false in their only context.
    pub context_infeasible: BTreeSet<u64>,
    pub groups: Vec<GroupResult>,
    /// What the inlined copies of functions decided in their calling contexts proved here.
    #[serde(default)]
    pub copies: Vec<CopyResult>,
    /// Implications between labels of a function decided in its calling contexts that hold
    /// over every activation of this function, which holds all of that function's executions
    /// (covering one label at any copy covers the other at some copy), by function.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub run_implications: BTreeMap<String, BTreeSet<(u64, u64)>>,
    /// Labels of functions decided in their calling contexts that no activation of this
    /// function covers at any copy, while its activations hold all their executions.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub run_infeasible: BTreeSet<u64>,
    /// The call sites of this function and of the functions in `copies` whose callers are
    /// all known (what [`Contexts`] needs to tell that every context is covered).
    #[serde(default)]
    pub call_sites: BTreeMap<String, Vec<crate::vc::encode::CallSite>>,
    /// With [`PruneConfig::witnessed_subsumers`]: the subsumers of this function's groups
    /// that a witness in its own encoding showed feasible (its callers being unknown). `None`
    /// when the run does not ask for witnessed subsumers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witnessed: Option<BTreeSet<u64>>,
    pub stats: RunStats,
}

/// Turns the functions' raw results (of one run, or of several shards) into verdicts.
pub fn combine(results: Vec<FunctionResult>) -> (Vec<LabelVerdict>, RunStats) {
    let mut stats = RunStats::default();
    let mut by_id: BTreeMap<u64, Vec<Occurrence>> = BTreeMap::new();
    let mut groups = Vec::new();
    let mut context_infeasible = BTreeSet::new();
    let ctx = Contexts::new(results.iter().map(|r| (&r.call_sites, r.copies.as_slice())));
    // With witnessed subsumers asked for: every label some encoding witnessed.
    let witnessed: Option<BTreeSet<u64>> =
        results.iter().any(|r| r.witnessed.is_some()).then(|| {
            results
                .iter()
                .flat_map(|r| r.witnessed.iter().flatten())
                .chain(
                    results
                        .iter()
                        .flat_map(|r| r.copies.iter().flat_map(|c| &c.witnessed)),
                )
                .copied()
                .collect()
        });
    // Run-level implications, by function: each holds over all the function's executions.
    let mut run_level: BTreeMap<String, BTreeSet<(u64, u64)>> = BTreeMap::new();
    for r in &results {
        for (g, pairs) in &r.run_implications {
            run_level.entry(g.clone()).or_default().extend(pairs);
        }
    }
    let mut run_infeasible: BTreeSet<u64> = BTreeSet::new();
    for r in results {
        context_infeasible.extend(r.context_infeasible);
        run_infeasible.extend(r.run_infeasible);
        stats.add(&r.stats);
        for mut occ in r.occurrences {
            // Infeasible in every calling context is infeasible.
            let key = (occ.id, occ.block);
            if occ.outcome != Outcome::Infeasible
                && ctx.everywhere(&occ.function, &|c| c.infeasible.contains(&key))
            {
                occ.outcome = Outcome::Infeasible;
            }
            by_id.entry(occ.id).or_default().push(occ);
        }
        for mut g in r.groups {
            if !g.in_context {
                add_context_facts(&ctx, &r.function, &mut g);
                if let Some(pairs) = run_level.get(&r.function) {
                    g.implications.extend(
                        pairs
                            .iter()
                            .filter(|(a, b)| g.members.contains(a) && g.members.contains(b)),
                    );
                }
            }
            groups.push(g);
        }
    }
    let mut verdicts: BTreeMap<u64, LabelVerdict> = by_id
        .into_iter()
        .map(|(id, occs)| {
            let all_infeasible = occs
                .iter()
                .all(|o| matches!(o.outcome, Outcome::Infeasible));
            let time_ms = occs.iter().map(|o| o.time_ms).sum();
            let first = &occs[0];
            let status = if all_infeasible {
                Status::Infeasible
            } else {
                let reason = occs
                    .iter()
                    .find_map(|o| match &o.outcome {
                        Outcome::Unknown(r) => Some(r.clone()),
                        Outcome::Infeasible => None,
                    })
                    .unwrap_or(Reason::Satisfiable);
                Status::unknown(reason)
            };
            (
                id,
                LabelVerdict {
                    id,
                    step: matches!(status, Status::Infeasible).then_some(1),
                    status,
                    time_ms,
                    function: first.function.clone(),
                    loc: first.loc,
                    tag: first.tag.clone(),
                    text: first.text.clone(),
                },
            )
        })
        .collect();
    // A called-once function's label false in its only calling context is infeasible, and so
    // is a label covered in no activation of a function that holds all its executions.
    for id in context_infeasible.iter().chain(&run_infeasible) {
        if let Some(v) = verdicts.get_mut(id) {
            v.status = Status::Infeasible;
            v.step = Some(1);
        }
    }
    // Labels related in their caller's context leave their own function's groups.
    let in_context: BTreeSet<u64> = groups
        .iter()
        .filter(|g: &&GroupResult| g.in_context)
        .flat_map(|g| g.members.iter().copied())
        .chain(context_infeasible.iter().copied())
        .collect();
    for g in groups.iter_mut().filter(|g| !g.in_context) {
        g.members.retain(|id| !in_context.contains(id));
        g.always_true.retain(|id| !in_context.contains(id));
        g.implications
            .retain(|(a, b)| !in_context.contains(a) && !in_context.contains(b));
    }
    let before_groups: BTreeMap<u64, Status> = verdicts
        .iter()
        .map(|(id, v)| (*id, v.status.clone()))
        .collect();
    for g in &groups {
        apply_group(g, &mut verdicts);
    }
    keep_partners_feasible(
        &mut verdicts,
        &before_groups,
        &|id, f| ctx.suspect(f, id),
        witnessed.as_ref(),
    );
    (verdicts.into_values().collect(), stats)
}

/// A label is pruned as a duplicate or subsumed only with a named partner not claimed
/// infeasible (an infeasible label implies everything, vacuously, and leaves nothing to
/// cover). Groups see every infeasible claim before they are applied, so this re-checks them,
/// and also drops the partners proved infeasible in some calling contexts but not all
/// (`suspect`: likely infeasible everywhere, without a proof). With `witnessed` (the labels
/// some witness showed feasible), a subsumer must be one of them, or a duplicate of one:
/// then no pruned label is left with only infeasible subsumers. A label left without any
/// partner keeps its status from before the groups.
pub(super) fn keep_partners_feasible(
    verdicts: &mut BTreeMap<u64, LabelVerdict>,
    before_groups: &BTreeMap<u64, Status>,
    suspect: &dyn Fn(u64, &str) -> bool,
    witnessed: Option<&BTreeSet<u64>>,
) {
    let infeasible: BTreeSet<u64> = verdicts
        .iter()
        .filter(|(_, v)| v.status == Status::Infeasible)
        .map(|(id, _)| *id)
        .collect();
    // A duplicate's witness is its representative's: they are covered by the same runs.
    let shown_feasible: Option<BTreeSet<u64>> = witnessed.map(|w| {
        let mut shown = w.clone();
        for (id, v) in verdicts.iter() {
            if let Status::Duplicate { of } = v.status {
                if w.contains(id) {
                    shown.insert(of);
                }
            }
        }
        shown
    });
    // A duplicate is covered exactly when its representative is: only a subsumer can leave
    // a feasible label with nothing to cover.
    let unfit: BTreeSet<u64> = verdicts
        .iter()
        .filter(|(id, v)| {
            infeasible.contains(id)
                || suspect(**id, &v.function)
                || shown_feasible.as_ref().is_some_and(|w| !w.contains(id))
        })
        .map(|(id, _)| *id)
        .collect();
    for (id, v) in verdicts.iter_mut() {
        let restore = match &mut v.status {
            Status::Duplicate { of } => infeasible.contains(of),
            Status::Subsumed { by } => {
                by.retain(|b| !unfit.contains(b));
                by.is_empty()
            }
            _ => false,
        };
        if restore {
            if let Some(s) = before_groups.get(id) {
                v.status = s.clone();
                v.step = None;
            }
        }
    }
}

/// Adds to a group of `function`'s own labels what holds in every calling context of the
/// function: labels always true when reached, and implications.
pub(super) fn add_context_facts(ctx: &Contexts, function: &str, g: &mut GroupResult) {
    if !ctx.covers(function) {
        return;
    }
    for &m in &g.members {
        if !g.always_true.contains(&m) && ctx.everywhere(function, &|c| c.always_true.contains(&m))
        {
            g.always_true.insert(m);
        }
    }
    for &a in &g.members {
        for &b in &g.members {
            if a != b
                && !g.implications.contains(&(a, b))
                && ctx.everywhere(function, &|c| c.implies(a, b))
            {
                g.implications.insert((a, b));
            }
        }
    }
    // The always-true labels are equivalent when reached: what one implies, all imply (the
    // function's own step 3 asked only the lowest of its own).
    let implied_by_always_true: Vec<u64> = g
        .implications
        .iter()
        .filter(|(a, _)| g.always_true.contains(a))
        .map(|(_, b)| *b)
        .collect();
    for b in implied_by_always_true {
        for &x in &g.always_true {
            if x != b {
                g.implications.insert((x, b));
            }
        }
    }
}

/// Turns a group's always-true labels and implications into duplicate and subsumed statuses.
pub(super) fn apply_group(g: &GroupResult, verdicts: &mut BTreeMap<u64, LabelVerdict>) {
    // A label proven infeasible (perhaps by another function's analysis) takes no part: an
    // infeasible label subsumes everything vacuously.
    let live = |id: &u64| {
        verdicts
            .get(id)
            .is_some_and(|v| v.status != Status::Infeasible)
    };
    let g = &GroupResult {
        members: g.members.iter().copied().filter(live).collect(),
        always_true: g.always_true.iter().copied().filter(live).collect(),
        implications: g
            .implications
            .iter()
            .copied()
            .filter(|(a, b)| live(a) && live(b))
            .collect(),
        in_context: g.in_context,
    };
    // Step 2: always-true labels are duplicates of the lowest one.
    let rep2 = g.always_true.iter().next().copied();
    if let Some(rep) = rep2 {
        for &id in g.always_true.iter().skip(1) {
            if let Some(v) = verdicts.get_mut(&id) {
                v.status = Status::Duplicate { of: rep };
                v.step = Some(2);
            }
        }
    }
    // Step 3 over the survivors: SCCs of the implication graph are duplicates.
    let survivors: Vec<u64> = g
        .members
        .iter()
        .copied()
        .filter(|id| Some(*id) == rep2 || !g.always_true.contains(id))
        .collect();
    if survivors.len() < 2 {
        return;
    }
    let (rep_of, subsumed) = implication_classes(
        &survivors,
        &g.implications.iter().copied().collect::<Vec<_>>(),
    );
    for (&id, &rep) in &rep_of {
        if id != rep {
            if let Some(v) = verdicts.get_mut(&id) {
                v.status = Status::Duplicate { of: rep };
                v.step = Some(3);
            }
        }
    }
    for (j, by) in subsumed {
        if let Some(v) = verdicts.get_mut(&j) {
            v.status = Status::Subsumed { by };
            v.step = Some(3);
        }
    }
}

/// Over `nodes` and the implications `(a, b)` (a implies b) among them: each node's class
/// representative (the lowest id of its strongly connected component), and each
/// representative implied by other classes with their representatives. The condensed graph is
/// acyclic, so every subsumed class keeps a non-subsumed subsumer.
pub(crate) fn implication_classes(
    nodes: &[u64],
    implications: &[(u64, u64)],
) -> (BTreeMap<u64, u64>, BTreeMap<u64, Vec<u64>>) {
    let mut graph = petgraph::graph::DiGraph::<u64, ()>::new();
    let idx: BTreeMap<u64, petgraph::graph::NodeIndex> =
        nodes.iter().map(|&id| (id, graph.add_node(id))).collect();
    for &(i, j) in implications {
        if let (Some(&a), Some(&b)) = (idx.get(&i), idx.get(&j)) {
            graph.add_edge(a, b, ());
        }
    }
    let mut rep_of: BTreeMap<u64, u64> = BTreeMap::new();
    for scc in petgraph::algo::tarjan_scc(&graph) {
        let ids: Vec<u64> = scc.iter().map(|n| graph[*n]).collect();
        let rep = ids.iter().copied().min().unwrap_or_default();
        for &id in &ids {
            rep_of.insert(id, rep);
        }
    }
    let mut subsumed: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for (a, b) in implications {
        if let (Some(&ra), Some(&rb)) = (rep_of.get(a), rep_of.get(b)) {
            if ra != rb {
                subsumed.entry(rb).or_default().insert(ra);
            }
        }
    }
    (
        rep_of,
        subsumed
            .into_iter()
            .map(|(j, by)| (j, by.into_iter().collect()))
            .collect(),
    )
}
