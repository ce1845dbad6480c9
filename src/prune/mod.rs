//! Pruning: turns every label into proof obligations over its function's encoding and decides
//! them in parallel, one encoding per function for all its questions.
//!
//! - Step 1: `reach(l) ∧ p_l` unsatisfiable ⇒ `l` is infeasible.
//! - Step 2: `reach(l) ∧ ¬p_l` unsatisfiable ⇒ `l` is always true when reached; such labels of
//!   one co-reached group are duplicates of one representative (lowest id).
//! - Step 3: in a co-reached group, `reach ∧ p_i ∧ ¬p_j` unsatisfiable ⇒ `i` subsumes `j`. Models
//!   returned by the solver refute pairs before they are asked; implications that follow by
//!   transitivity are not asked. Strongly connected components of the implication graph are
//!   duplicates; a surviving label implied by another surviving label is subsumed.
//!
//! Obligations never lean on each other: each is checked against the encoding alone.

pub mod cache_key;
pub mod contexts;
pub mod groups;
pub mod journal;
pub mod pool;
pub mod shard;
pub mod status;
pub mod unreached;

pub use status::{Reason, Status};

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::ir::{BlockId, Callee, Function, Loc, Program, StmtKind};
use crate::smt::{Backend, Memory, Query, Session, SolverConfig, Verdict};
use crate::vc::cone::{needed_facts, FactIndex, MemoryReads};
use crate::vc::encode::{encode, encode_until, EncodeConfig, Fact, LabelVc};
use crate::vc::term::{Terms, T};
use crate::vc::Summaries;

/// Largest group for which step 3 compares every ordered pair.
const MAX_STEP3_GROUP: usize = 120;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PruneConfig {
    pub solver: SolverConfig,
    pub encode: EncodeConfig,
    /// Worker threads (0: one per core).
    pub jobs: usize,
    /// Wall-clock budget per function, in seconds (0: none); labels left when it runs out
    /// stay unknown.
    pub function_budget_s: u64,
    /// Report each function as it finishes (name, labels, infeasible, time) on stderr.
    pub trace: bool,
    /// Which steps run (step 1 always runs: later steps need its results).
    pub steps: BTreeSet<u8>,
    /// Step 3: use solver models to refute pairs before asking (on by default).
    pub model_filter: bool,
    /// Write every question as an SMT-LIB 2 file in this directory.
    #[serde(default)]
    pub dump_smt: Option<std::path::PathBuf>,
    /// Decide the labels of functions whose callers are all known in every calling context
    /// too ([`contexts`]).
    #[serde(default = "default_true")]
    pub contexts: bool,
    /// Prune a label as subsumed only by a subsumer shown feasible: a witness, a run from an
    /// entry whose callers are unknown that covers it whatever the encoding's unknowns are
    /// ([`keep_partners_feasible`]). Off by default: few labels after loops or calls can be
    /// witnessed.
    #[serde(default)]
    pub witnessed_subsumers: bool,
}

fn default_true() -> bool {
    true
}

impl Default for PruneConfig {
    fn default() -> Self {
        PruneConfig {
            solver: SolverConfig::default(),
            encode: EncodeConfig::default(),
            jobs: 0,
            function_budget_s: 0,
            trace: false,
            steps: BTreeSet::from([1]),
            model_filter: true,
            dump_smt: None,
            contexts: true,
            witnessed_subsumers: false,
        }
    }
}

impl PruneConfig {
    /// The options that change answers (not `jobs`, not `trace`), as text: what a journal's
    /// fingerprint covers besides the input.
    pub fn answer_key(&self) -> String {
        #[derive(Serialize)]
        struct Key<'a> {
            solver: &'a SolverConfig,
            encode: &'a EncodeConfig,
            function_budget_s: u64,
            steps: &'a BTreeSet<u8>,
            model_filter: bool,
            contexts: bool,
            witnessed_subsumers: bool,
        }
        serde_json::to_string(&Key {
            solver: &self.solver,
            encode: &self.encode,
            function_budget_s: self.function_budget_s,
            steps: &self.steps,
            model_filter: self.model_filter,
            contexts: self.contexts,
            witnessed_subsumers: self.witnessed_subsumers,
        })
        .expect("the configuration serialises")
    }
}

/// Called with the number of questions just decided, from any worker thread.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

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
}

/// Questions asked by one step, and the time they took.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct StepStats {
    pub queries: u64,
    pub ms: u128,
}

impl StepStats {
    fn add(&mut self, other: &StepStats) {
        self.queries += other.queries;
        self.ms += other.ms;
    }
}

impl RunStats {
    fn add(&mut self, other: &RunStats) {
        self.step1.add(&other.step1);
        self.step2.add(&other.step2);
        self.step3.add(&other.step3);
        self.refuted_by_models += other.refuted_by_models;
        self.by_transitivity += other.by_transitivity;
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
    pub copies: Vec<contexts::CopyResult>,
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
    /// all known (what [`contexts::Contexts`] needs to tell that every context is covered).
    #[serde(default)]
    pub call_sites: BTreeMap<String, Vec<crate::vc::encode::CallSite>>,
    /// With [`PruneConfig::witnessed_subsumers`]: the subsumers of this function's groups
    /// that a witness in its own encoding showed feasible (its callers being unknown). `None`
    /// when the run does not ask for witnessed subsumers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witnessed: Option<BTreeSet<u64>>,
    pub stats: RunStats,
}

/// Runs step 1 on every label of the program; results sorted by label id.
pub fn step1(program: &Program, config: &PruneConfig) -> Vec<LabelVerdict> {
    let mut c = config.clone();
    c.steps = BTreeSet::from([1]);
    run(program, &c, &|_| {}).0
}

/// The number of label occurrences (for progress bars).
pub fn count_labels(program: &Program) -> u64 {
    program
        .functions
        .iter()
        .map(|f| f.labels().count() as u64)
        .sum()
}

/// Runs the configured steps; results sorted by label id.
pub fn run(
    program: &Program,
    config: &PruneConfig,
    progress: Progress,
) -> (Vec<LabelVerdict>, RunStats) {
    combine(prove(program, config, progress, &Hooks::default()))
}

/// What a run keeps beyond its answers: a journal to append results to as they are found,
/// results of an earlier run to reuse (`--resume`), and the shard of functions to prove.
#[derive(Default)]
pub struct Hooks<'a> {
    pub journal: Option<&'a journal::Journal>,
    pub prior: Option<&'a journal::Prior>,
    /// `(k, n)`: prove only the k-th of n shards (1-based) of the functions with labels.
    pub shard: Option<(usize, usize)>,
}

/// The functions whose encodings have questions: those with labels, and the callers (two
/// levels up, as far as the encoder inlines) of functions with labels whose callers are all
/// known, which decide those labels in their contexts.
fn to_prove(program: &Program) -> BTreeSet<String> {
    let cg = crate::cfg::callgraph::CallGraph::build(program);
    let with_labels: BTreeSet<&str> = program
        .functions
        .iter()
        .filter(|f| f.labels().next().is_some())
        .map(|f| f.name.as_str())
        .collect();
    let known_callers = |g: &str| cg.node(g).is_some_and(|n| n.defined && !n.address_taken);
    // Functions merged from other files are proved in their own files.
    let callers_of = |targets: &BTreeSet<&str>| -> BTreeSet<&str> {
        program
            .functions
            .iter()
            .filter(|f| !program.imported.contains(&f.name))
            .filter(|f| {
                crate::cfg::callgraph::direct_callees(f)
                    .iter()
                    .any(|c| targets.contains(c.as_str()))
            })
            .map(|f| f.name.as_str())
            .collect()
    };
    let decided: BTreeSet<&str> = with_labels
        .iter()
        .copied()
        .filter(|g| known_callers(g))
        .collect();
    let level1 = callers_of(&decided);
    let level2 = callers_of(&level1);
    with_labels
        .into_iter()
        .chain(level1)
        .chain(level2)
        .map(str::to_string)
        .collect()
}

/// The functions a shard proves: every n-th one of the functions to prove, by name.
pub fn in_shard(program: &Program, shard: Option<(usize, usize)>) -> BTreeSet<String> {
    let mut names: Vec<String> = to_prove(program).into_iter().collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .enumerate()
        .filter(|(i, _)| shard.is_none_or(|(k, n)| i % n == k - 1))
        .map(|(_, n)| n.to_string())
        .collect()
}

/// Proves the configured steps function by function (in parallel, biggest first), and
/// returns each function's raw results, sorted by function name.
pub fn prove(
    program: &Program,
    config: &PruneConfig,
    progress: Progress,
    hooks: &Hooks,
) -> Vec<FunctionResult> {
    let prover = Prover::new(program, config);
    // (Worker processes name them one by one, as they are handed them.)
    if config.trace && !prover.never_entered.is_empty() {
        let names: Vec<&str> = prover.never_entered.iter().map(String::as_str).collect();
        eprintln!(
            "covprune: {} functions no run enters: {}",
            names.len(),
            names.join(", ")
        );
    }
    let order = prover.order(hooks.shard);
    let work = || -> Vec<FunctionResult> {
        order
            .par_iter()
            .map(|&i| prover.prove_one(i, progress, hooks))
            .collect()
    };
    let mut results = if config.jobs > 0 {
        match rayon::ThreadPoolBuilder::new()
            .num_threads(config.jobs)
            .build()
        {
            Ok(pool) => pool.install(work),
            Err(_) => work(),
        }
    } else {
        work()
    };
    results.sort_by(|a, b| a.function.cmp(&b.function));
    results
}

/// What every function's proof shares: summaries, the call graph, the called-once contexts.
/// Built once per process; worker processes build the same one from the same input.
pub struct Prover<'p> {
    program: &'p Program,
    sums: Summaries,
    cg: crate::cfg::callgraph::CallGraph,
    config: PruneConfig,
    /// How many times each label id occurs: ids that occur more than once take no part in
    /// steps 2 and 3.
    occurrences: BTreeMap<u64, usize>,
    context: BTreeMap<String, Vec<(String, Vec<u64>)>>,
    /// Call sites of the functions whose callers are all known ([`contexts::call_sites`]).
    sites: BTreeMap<String, Vec<crate::vc::encode::CallSite>>,
    /// Those of them with labels: decided in their calling contexts.
    context_functions: BTreeSet<String>,
    /// Functions no run can enter ([`unreached::never_entered`]).
    never_entered: BTreeSet<String>,
}

impl<'p> Prover<'p> {
    pub fn new(program: &'p Program, config: &PruneConfig) -> Self {
        let sums = Summaries::new(program, &config.encode.externals);
        let cg = crate::cfg::callgraph::CallGraph::build(program);
        let mut occurrences: BTreeMap<u64, usize> = BTreeMap::new();
        for f in &program.functions {
            for (_, s) in f.labels() {
                if let StmtKind::Label { id, .. } = &s.kind {
                    *occurrences.entry(*id).or_default() += 1;
                }
            }
        }
        let single = |id: u64| occurrences.get(&id) == Some(&1);
        let context = if config.steps.contains(&2) || config.steps.contains(&3) {
            called_once_contexts(program, &cg, config, &single)
        } else {
            BTreeMap::new()
        };
        let mut config = config.clone();
        config.encode.context_callees = context
            .values()
            .flat_map(|v| v.iter().map(|(g, _)| g.clone()))
            .collect();
        let never_entered = unreached::never_entered(program, &cg, config.encode.entry_main);
        let sites = if config.contexts {
            contexts::call_sites(program, &cg, config.encode.entry_main, &never_entered)
        } else {
            BTreeMap::new()
        };
        let context_functions = program
            .functions
            .iter()
            .filter(|f| sites.contains_key(&f.name) && f.labels().next().is_some())
            .map(|f| f.name.clone())
            .collect();
        Prover {
            program,
            sums,
            cg,
            config,
            occurrences,
            context,
            sites,
            context_functions,
            never_entered,
        }
    }

    /// The functions to prove (indices into the program's functions), biggest first so that
    /// the longest encodings do not start last.
    pub fn order(&self, shard: Option<(usize, usize)>) -> Vec<usize> {
        prove_order(self.program, shard)
    }

    /// Proves function `i` of the program, or takes its result from the journal of an earlier
    /// run; journals it.
    pub fn prove_one(&self, i: usize, progress: Progress, hooks: &Hooks) -> FunctionResult {
        let (program, config) = (self.program, &self.config);
        let f = &program.functions[i];
        if let Some(done) = hooks.prior.and_then(|p| p.done.get(&f.name)) {
            progress(done.occurrences.len() as u64);
            return done.clone();
        }
        let no_context = Vec::new();
        let ctx = self.context.get(&f.name).unwrap_or(&no_context);
        if hooks.prior.is_some_and(|p| p.crashed.contains(&f.name)) {
            let r = crashed_function(program, f, &self.sums, config, hooks);
            progress(r.occurrences.len() as u64);
            if let Some(j) = hooks.journal {
                j.function_done(&r);
            }
            return r;
        }
        let r = if self.never_entered.contains(&f.name) && config.steps.contains(&1) {
            if config.trace {
                eprintln!(
                    "covprune: {}: no run enters it: its labels are infeasible",
                    f.name
                );
            }
            let r = unentered_function(f, config);
            progress(r.occurrences.len() as u64);
            r
        } else {
            prove_function(self, f, ctx, progress, hooks)
        };
        if let Some(j) = hooks.journal {
            j.function_done(&r);
        }
        r
    }
}

/// The functions a run proves (indices into the program's functions): those to prove in the
/// shard, biggest first.
pub fn prove_order(program: &Program, shard: Option<(usize, usize)>) -> Vec<usize> {
    let chosen = in_shard(program, shard);
    let mut order: Vec<usize> = (0..program.functions.len())
        .filter(|&i| chosen.contains(&program.functions[i].name))
        .collect();
    let f = |i: usize| &program.functions[i];
    order.sort_by_key(|&i| (std::cmp::Reverse(f(i).blocks.len()), f(i).name.clone()));
    order
}

/// Turns the functions' raw results (of one run, or of several shards) into verdicts.
pub fn combine(results: Vec<FunctionResult>) -> (Vec<LabelVerdict>, RunStats) {
    let mut stats = RunStats::default();
    let mut by_id: BTreeMap<u64, Vec<Occurrence>> = BTreeMap::new();
    let mut groups = Vec::new();
    let mut context_infeasible = BTreeSet::new();
    let ctx = contexts::Contexts::new(&results);
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
fn keep_partners_feasible(
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
fn add_context_facts(ctx: &contexts::Contexts, function: &str, g: &mut GroupResult) {
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
fn apply_group(g: &GroupResult, verdicts: &mut BTreeMap<u64, LabelVerdict>) {
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
    let mut graph = petgraph::graph::DiGraph::<u64, ()>::new();
    let idx: BTreeMap<u64, petgraph::graph::NodeIndex> = survivors
        .iter()
        .map(|&id| (id, graph.add_node(id)))
        .collect();
    for &(i, j) in &g.implications {
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
            if id != rep {
                if let Some(v) = verdicts.get_mut(&id) {
                    v.status = Status::Duplicate { of: rep };
                    v.step = Some(3);
                }
            }
        }
    }
    // A representative implied by another class's representative is subsumed. The condensed
    // graph is acyclic, so every subsumed label keeps a non-subsumed subsumer.
    let reps: BTreeSet<u64> = rep_of.values().copied().collect();
    for &j in &reps {
        let by: BTreeSet<u64> = g
            .implications
            .iter()
            .filter(|(a, b)| rep_of.get(b) == Some(&j) && rep_of.get(a) != Some(&j))
            .filter_map(|(a, _)| rep_of.get(a).copied())
            .collect();
        if !by.is_empty() {
            if let Some(v) = verdicts.get_mut(&j) {
                v.status = Status::Subsumed {
                    by: by.into_iter().collect(),
                };
                v.step = Some(3);
            }
        }
    }
}

/// Pseudo ids of anchors (entry of a function, call of a called-once function) in groups.
const ANCHOR_BASE: u64 = u64::MAX - (1 << 20);

/// For each caller, its called-once callees and their labels co-reached with their entry (run
/// exactly once per call): those join the group of the call site (paper, section 3.1).
/// A callee qualifies when it has one direct call site, is not address-taken, and cannot be
/// called from outside (static, or the program starts at `main`).
fn called_once_contexts(
    program: &Program,
    cg: &crate::cfg::callgraph::CallGraph,
    config: &PruneConfig,
    single: &dyn Fn(u64) -> bool,
) -> BTreeMap<String, Vec<(String, Vec<u64>)>> {
    let may_stop = |c: &Callee| match c {
        Callee::Direct(n) => cg.may_not_return(n),
        Callee::Indirect(_) => true,
    };
    let mut out: BTreeMap<String, Vec<(String, Vec<u64>)>> = BTreeMap::new();
    for g in &program.functions {
        let eligible = cg.called_once_internally(&g.name)
            || config.encode.entry_main
                && g.name != "main"
                && cg.call_sites(&g.name) == 1
                && cg
                    .node(&g.name)
                    .is_some_and(|n| n.defined && !n.address_taken);
        if !eligible || g.labels().next().is_none() {
            continue;
        }
        let Some(caller) = program
            .functions
            .iter()
            .find(|f| cg.callees(&f.name).iter().any(|(c, _)| *c == g.name))
        else {
            continue;
        };
        if caller.name == g.name {
            continue;
        }
        let entry = groups::Point {
            id: ANCHOR_BASE,
            block: g.entry,
            index: 0,
        };
        let entry_group: Vec<u64> = groups::co_reached_with(g, &may_stop, &[entry])
            .into_iter()
            .find(|grp| grp.iter().any(|p| p.id == ANCHOR_BASE))
            .unwrap_or_default()
            .into_iter()
            .map(|p| p.id)
            .filter(|id| *id != ANCHOR_BASE && single(*id))
            .collect();
        if !entry_group.is_empty() {
            out.entry(caller.name.clone())
                .or_default()
                .push((g.name.clone(), entry_group));
        }
    }
    out
}

/// What one function's questions share: the encoding's terms and facts, the solver, the
/// function's budget and its counters.
struct Asker<'a> {
    backend: Box<dyn Backend>,
    terms: Terms,
    facts: &'a [Fact],
    exactness: &'a crate::vc::encode::Exactness,
    index: FactIndex,
    budget: Budget,
    /// What the questions with memory may spend before one of them proves something.
    memory: MemoryShare,
    stats: RunStats,
}

/// The questions with the function's memory written out byte by byte may spend this share of
/// the budget (a quarter) until one of them proves something; after that, the whole budget.
/// On memory-heavy code they rarely prove and often run out of their limits: on four
/// fortieths of SQLite, 2,777 such questions took 70% of the time and proved nothing, while
/// the cheap questions the budget then left unasked found 130 more implications
/// (2026-11-25). Where memory questions do prove (Siemens, OpenSSL, the memory harness), the
/// first proof comes early and lifts the cap.
const MEMORY_SHARE_DIVISOR: u64 = 4;

/// A question with the function's memory written out byte by byte gets this many times a
/// question's resource units (the time limit stays the backstop), until one of the function's
/// runs out of them; the share bounds what these questions spend in all. At the default
/// limits, the memory harness's 40 programs with their external code left 31 of 246 labels on
/// a limit with a quarter of the units, 12 with the whole (satisfiable questions whose models
/// take 5 to 10 million units), 4 with twice and 2 with three times; on 200 programs, 13 of
/// 1,327 with three times (2026-11-25). Real code pays in time: `artifacts/memory-units-scale.md`.
const MEMORY_QUESTION_UNITS_SCALE: u32 = 3;

/// The share of a budget that questions with memory may spend before their first proof
/// ([`MEMORY_SHARE_DIVISOR`]): in resource units when the budget is, else in wall time.
struct MemoryShare {
    cap_units: Option<u64>,
    cap_wall: Option<std::time::Duration>,
    spent_units: u64,
    spent_wall: std::time::Duration,
    /// A question with memory proved something: only the budget bounds them now.
    earned: bool,
    /// A question with memory ran out of its limits: the next ones get a question's own
    /// resource units, not [`MEMORY_QUESTION_UNITS_SCALE`] times them.
    ran_out: bool,
    asked: u64,
    proved: u64,
}

impl MemoryShare {
    fn of(budget: &Budget) -> MemoryShare {
        MemoryShare {
            cap_units: budget.units.map(|u| u / MEMORY_SHARE_DIVISOR),
            cap_wall: match budget.units {
                Some(_) => None,
                None => budget.wall.map(|w| w / MEMORY_SHARE_DIVISOR as u32),
            },
            spent_units: 0,
            spent_wall: std::time::Duration::ZERO,
            earned: false,
            ran_out: false,
            asked: 0,
            proved: 0,
        }
    }

    fn spent(&self) -> bool {
        !self.earned
            && (self.cap_units.is_some_and(|c| self.spent_units >= c)
                || self.cap_wall.is_some_and(|c| self.spent_wall >= c))
    }

    /// The resource units of the next question with memory, in questions' units.
    fn units_scale(&self) -> u32 {
        if self.ran_out {
            1
        } else {
            MEMORY_QUESTION_UNITS_SCALE
        }
    }

    fn record(&mut self, units: u64, wall: std::time::Duration, verdict: &Verdict) {
        let proved = *verdict == Verdict::Proved;
        self.ran_out |= matches!(verdict, Verdict::Unknown(_));
        self.asked += 1;
        self.spent_units = self.spent_units.saturating_add(units);
        self.spent_wall = self.spent_wall.saturating_add(wall);
        if proved {
            self.proved += 1;
            self.earned = true;
        }
    }
}

/// A function's budget: deterministic (resource units of the solver) when questions have a
/// resource limit, with the wall clock as a backstop; the wall clock alone otherwise.
struct Budget {
    start: Instant,
    wall: Option<std::time::Duration>,
    units: Option<u64>,
}

/// With a deterministic budget, the wall-clock backstop is this many times the nominal one.
const BUDGET_BACKSTOP: u32 = 3;

impl Budget {
    /// A deterministic budget of `units`, with the wall-clock backstop.
    fn of_units(units: u64, per_ms: u64, start: Instant) -> Budget {
        let nominal = std::time::Duration::from_millis(units / per_ms.max(1));
        Budget {
            start,
            wall: Some(nominal * BUDGET_BACKSTOP),
            units: Some(units),
        }
    }

    /// A wall-clock budget.
    fn of_wall(wall: std::time::Duration, start: Instant) -> Budget {
        Budget {
            start,
            wall: Some(wall),
            units: None,
        }
    }

    fn new(config: &PruneConfig, start: Instant) -> Budget {
        let s = config.function_budget_s;
        if s == 0 {
            return Budget {
                start,
                wall: None,
                units: None,
            };
        }
        let per_ms = config.solver.units_per_ms();
        if per_ms > 0 {
            Budget::of_units(s * 1000 * per_ms, per_ms, start)
        } else {
            Budget::of_wall(std::time::Duration::from_secs(s), start)
        }
    }
}

impl Asker<'_> {
    /// Step 1 on one label: is `reach ∧ pred` unsatisfiable? With the label's co-reached group
    /// (`observe`: the members' predicates, `models`: that group's models so far), a model
    /// found is kept, as the members' values, for step 3; on a model, the values of `inputs`
    /// are returned too.
    fn ask_step1_observing(
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
    fn ask_step1_cheaply(
        &mut self,
        l: &LabelVc,
        observe: &[T],
        models: Option<&mut Vec<Vec<Option<u128>>>>,
    ) -> Option<Outcome> {
        let goal = self.terms.and2(l.reach, l.pred);
        self.stats.step1.queries += 1;
        let (o, model) = self.decide_cheaply(goal, observe)?;
        if let (Some(m), Some(models)) = (model.filter(|m| m.len() == observe.len()), models) {
            if !observe.is_empty() {
                models.push(m);
            }
        }
        Some(o)
    }

    /// Step 1's question with the function's memory ([`Asker::decide_with_memory`]).
    fn ask_step1_with_memory(&mut self, l: &LabelVc) -> Outcome {
        let goal = self.terms.and2(l.reach, l.pred);
        self.decide_with_memory(goal)
    }

    /// Step 2 on one label: is it always true when reached (`reach ∧ ¬pred` unsatisfiable)?
    fn ask_always_true(&mut self, l: &LabelVc) -> bool {
        let np = self.terms.not(l.pred);
        let goal = self.terms.and2(l.reach, np);
        self.stats.step2.queries += 1;
        matches!(self.decide(goal, &[]).0, Outcome::Infeasible)
    }

    /// Is label `l` covered whatever the encoding's unknowns are, once `inputs` (the root's
    /// parameters, which its callers choose freely) take `values` (from a model of the
    /// label)? That is, is `reach ∧ pred` false unsatisfiable with them fixed? The encoding
    /// over-approximates every run, so the real run from those inputs is one of the runs that
    /// all cover the label: a witness that the label is feasible, as far as the root's entry
    /// is. A "no" proves nothing.
    fn witnessed(&mut self, l: &LabelVc, inputs: &[T], values: &[Option<u128>]) -> bool {
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
    fn witness(&mut self, l: &LabelVc, inputs: &[T], entry_free: bool) -> bool {
        match self.ask_step1_observing(l, &[], None, inputs) {
            (Outcome::Unknown(Reason::Satisfiable), values) => {
                (entry_free && self.exact(l))
                    || values.is_some_and(|v| self.witnessed(l, inputs, &v))
            }
            _ => false,
        }
    }

    /// Is a model of `l` (reached, predicate true) a run that covers it? So when `l`'s
    /// reachability and predicate depend on the entry state alone, with no over-approximation
    /// on the way ([`crate::vc::encode::Exactness`]), and callers may choose any entry state
    /// (the encoded function's callers are not all known; it is then as feasible as step 1
    /// takes its entry to be: arguments, memory and globals arbitrary).
    fn exact(&mut self, l: &LabelVc) -> bool {
        let goal = self.terms.and2(l.reach, l.pred);
        self.exactness.exact(&self.terms, goal)
    }

    fn over_budget(&self) -> bool {
        self.budget.units.is_some_and(|u| self.backend.work() > u)
            || self
                .budget
                .wall
                .is_some_and(|w| self.budget.start.elapsed() > w)
    }

    /// Decides one question. Memory makes queries expensive, so a question that reads memory
    /// is first asked with every memory read unconstrained (cheap; unsat there is a proof),
    /// and only if that is satisfiable asked again with the byte-level memory, within the
    /// memory questions' share of the budget ([`MemoryShare`]). Returns the verdict and, when
    /// the full question was satisfiable, the model's values of `observe`.
    fn decide(&mut self, goal: T, observe: &[T]) -> (Outcome, Option<Vec<Option<u128>>>) {
        match self.decide_cheaply(goal, observe) {
            Some(answer) => answer,
            None => (self.decide_with_memory(goal), None),
        }
    }

    /// The cheap part of [`Asker::decide`]: the question itself when its memory reads are
    /// exact as unconstrained bytes, else the question with every read unconstrained, which
    /// decides only when it proves. `None`: only [`Asker::decide_with_memory`] can tell.
    fn decide_cheaply(
        &mut self,
        goal: T,
        observe: &[T],
    ) -> Option<(Outcome, Option<Vec<Option<u128>>>)> {
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
            let (ids, reads) = needed_facts(&self.terms, facts, &self.index, &roots, true);
            if reads != MemoryReads::Other {
                return Some(self.ask_once(goal, &facts_of(ids), reads, observe));
            }
        }
        let (ids, reads) = needed_facts(&self.terms, facts, &self.index, &[goal], true);
        if reads != MemoryReads::Other {
            return Some(self.ask_once(goal, &facts_of(ids), reads, &[]));
        }
        let light = facts_of(ids);
        let q = Query {
            terms: &self.terms,
            context: &light,
            goal,
            observe: &[],
            memory: Memory::Abstract,
            units_scale: 1,
        };
        (self.backend.check(&q) == Verdict::Proved).then_some((Outcome::Infeasible, None))
    }

    /// The question with the function's memory written out byte by byte: asked when
    /// [`Asker::decide_cheaply`] could not decide, while the memory questions' share of the
    /// budget lasts. It gets [`MEMORY_QUESTION_UNITS_SCALE`] times a question's resource
    /// units: the share bounds what these questions spend in all.
    fn decide_with_memory(&mut self, goal: T) -> Outcome {
        if self.memory.spent() {
            return Outcome::Unknown(Reason::MemoryShare);
        }
        let (units_before, t) = (self.backend.work(), Instant::now());
        let facts = self.facts;
        let (ids, _) = needed_facts(&self.terms, facts, &self.index, &[goal], false);
        let full: Vec<T> = ids.into_iter().map(|i| facts[i].fact).collect();
        let q = Query {
            terms: &self.terms,
            context: &full,
            goal,
            observe: &[],
            memory: Memory::Bytes,
            units_scale: self.memory.units_scale(),
        };
        let verdict = self.backend.check(&q);
        // Fault injection for the budget tests (debug builds only): this question spent the
        // function's whole budget, as a hard one can.
        #[cfg(debug_assertions)]
        if std::env::var_os("COVPRUNE_TEST_MEMORY_QUESTION_SPENDS_BUDGET").is_some() {
            self.budget = Budget::of_wall(std::time::Duration::ZERO, self.budget.start);
        }
        self.memory
            .record(self.backend.work() - units_before, t.elapsed(), &verdict);
        // Fault injection for the share's test (debug builds only): this question spent the
        // memory questions' whole share.
        #[cfg(debug_assertions)]
        if std::env::var_os("COVPRUNE_TEST_MEMORY_QUESTION_SPENDS_SHARE").is_some() {
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
    fn ask_once(
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
        };
        match self.backend.check(&q) {
            Verdict::Proved => (Outcome::Infeasible, None),
            Verdict::Refuted(v) => (Outcome::Unknown(Reason::Satisfiable), Some(v)),
            Verdict::Unknown(r) => (Outcome::Unknown(Reason::from_solver(&r)), None),
        }
    }
}

/// Location, tag and text of each label of a function (its first statement, for an id written
/// more than once).
fn label_stmts(f: &Function) -> BTreeMap<u64, (Loc, String, String)> {
    let mut out = BTreeMap::new();
    for s in f.blocks.iter().flat_map(|b| &b.stmts) {
        if let StmtKind::Label { id, tag, text, .. } = &s.kind {
            out.entry(*id)
                .or_insert_with(|| (s.loc, tag.clone(), text.clone()));
        }
    }
    out
}

/// The models seen so far of one co-reached group, each as the values of its members'
/// predicates.
type GroupModels = Vec<Vec<Option<u128>>>;

/// What step 1 observes in a model of label `id`: the predicates of its co-reached group
/// (with the model filter on), and that group's models, which keep a model only when it
/// covers the whole group.
fn group_observation<'m>(
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

/// The label statements of `f`, each once per block, in block order.
fn unencoded_labels(f: &Function) -> Vec<(u64, BlockId)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (b, blk) in f.blocks.iter().enumerate() {
        for s in &blk.stmts {
            if let StmtKind::Label { id, .. } = &s.kind {
                if seen.insert((*id, b)) {
                    out.push((*id, BlockId(b as u32)));
                }
            }
        }
    }
    out
}

/// A function whose encoding outlasted its budget: every label unknown, nothing asked.
fn unencoded_function(f: &Function, config: &PruneConfig) -> FunctionResult {
    unasked_function(f, config, Outcome::Unknown(Reason::FunctionBudget))
}

/// A function no run enters ([`unreached::never_entered`]): every label infeasible, nothing
/// asked.
fn unentered_function(f: &Function, config: &PruneConfig) -> FunctionResult {
    unasked_function(f, config, Outcome::Infeasible)
}

/// Every label of `f` with the same outcome, nothing asked.
fn unasked_function(f: &Function, config: &PruneConfig, outcome: Outcome) -> FunctionResult {
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
fn unasked_result(
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
fn crashed_function(
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
fn prove_function(
    prover: &Prover,
    f: &Function,
    context: &[(String, Vec<u64>)],
    progress: Progress,
    hooks: &Hooks,
) -> FunctionResult {
    crate::smt::in_fresh_context(|| prove_function_here(prover, f, context, progress, hooks))
}

fn prove_function_here(
    prover: &Prover,
    f: &Function,
    context: &[(String, Vec<u64>)],
    progress: Progress,
    hooks: &Hooks,
) -> FunctionResult {
    let (program, config, cg) = (prover.program, &prover.config, &prover.cg);
    let single = |id: u64| prover.occurrences.get(&id) == Some(&1);
    let t0 = Instant::now();
    // The budget bounds the encoding too: one that outlasts it is given up, unasked.
    let deadline = (config.function_budget_s > 0)
        .then(|| t0 + std::time::Duration::from_secs(config.function_budget_s));
    let Some(vc) = encode_until(program, f, &prover.sums, &config.encode, deadline) else {
        if config.trace {
            eprintln!(
                "covprune: {}: encoding given up after {} ms, over the function's budget",
                f.name,
                t0.elapsed().as_millis()
            );
        }
        let r = unencoded_function(f, config);
        progress(r.occurrences.len() as u64);
        return r;
    };
    let session = Session::new(&config.solver);
    let backend: Box<dyn Backend> = match &config.dump_smt {
        Some(dir) => Box::new(crate::smt::Dumping::new(session, dir.clone(), &f.name)),
        None => Box::new(session),
    };
    let encode_ms = t0.elapsed().as_millis();
    if config.trace {
        eprintln!(
            "covprune: {}: encoded {} blocks, {} terms, {} labels in {} ms",
            f.name,
            f.blocks.len(),
            vc.terms.len(),
            vc.labels.len(),
            encode_ms
        );
        eprintln!(
            "covprune: {}: memories of their own: {}; shared memory: {}",
            f.name,
            if vc.own_objects.is_empty() {
                "none".to_string()
            } else {
                vc.own_objects.join(", ")
            },
            if vc.shared_objects.is_empty() {
                "none".to_string()
            } else {
                vc.shared_objects.join(", ")
            }
        );
    }
    let budget = Budget::new(config, t0);
    let mut asker = Asker {
        backend,
        terms: vc.terms,
        facts: &vc.facts,
        exactness: &vc.exactness,
        index: FactIndex::new(&vc.facts),
        memory: MemoryShare::of(&budget),
        budget,
        stats: RunStats::default(),
    };
    let stmts = label_stmts(f);
    // Co-reached groups of single-occurrence labels (needed by the model filter already).
    let want_groups = config.steps.contains(&2) || config.steps.contains(&3);
    let groups: Vec<Vec<u64>> = if want_groups {
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
        let in_inline_copy = |id: &u64| vc.context_labels.iter().any(|l| l.id == *id);
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
    };
    let is_context = |id: u64| !vc.labels.iter().any(|l| l.id == id);
    let all_labels: Vec<LabelVc> = vc
        .labels
        .iter()
        .chain(&vc.context_labels)
        .cloned()
        .collect();
    // The first encoding of each label, by id (a map: functions may hold thousands of labels).
    let mut by_id: HashMap<u64, &LabelVc> = HashMap::with_capacity(all_labels.len());
    for l in &all_labels {
        by_id.entry(l.id).or_insert(l);
    }
    let label_of = |id: u64| -> Option<&LabelVc> { by_id.get(&id).copied() };
    let group_of: BTreeMap<u64, usize> = groups
        .iter()
        .enumerate()
        .flat_map(|(gi, g)| g.iter().map(move |id| (*id, gi)))
        .collect();
    // Models seen so far, per group: each a vector of predicate values of the members.
    let mut models: Vec<Vec<Vec<Option<u128>>>> = vec![Vec::new(); groups.len()];

    // ----- step 1 -----
    // Cheap questions first: every label is asked its cheap question (exact, or with memory
    // reads unconstrained) before any label is asked the costly one with the function's
    // memory, so that a function whose budget runs out has still asked every label the first.
    let t1 = Instant::now();
    let mut outcomes: Vec<Option<Outcome>> = vec![None; vc.labels.len()];
    let mut spent_ms: Vec<u128> = vec![0; vc.labels.len()];
    let mut with_memory: Vec<usize> = Vec::new();
    let settle = |k: usize, outcome: Outcome, outcomes: &mut Vec<Option<Outcome>>| {
        if let Some(j) = hooks.journal {
            j.step1(&f.name, k, &outcome);
        }
        progress(1);
        outcomes[k] = Some(outcome);
    };
    for (k, l) in vc.labels.iter().enumerate() {
        let t = Instant::now();
        if let Some(o) = hooks
            .prior
            .and_then(|p| p.step1.get(&(f.name.clone(), k)).cloned())
        {
            // Found by an earlier run (`--resume`).
            progress(1);
            outcomes[k] = Some(o);
        } else if asker.over_budget() {
            settle(k, Outcome::Unknown(Reason::FunctionBudget), &mut outcomes);
        } else {
            let (observe, group_models) = group_observation(
                l.id,
                &groups,
                &group_of,
                |id| label_of(id).map(|x| x.pred),
                config.model_filter,
                &mut models,
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
            asker.ask_step1_with_memory(&vc.labels[k])
        };
        settle(k, outcome, &mut outcomes);
        spent_ms[k] += t.elapsed().as_millis();
    }
    let mut occurrences = Vec::with_capacity(vc.labels.len());
    let mut infeasible: BTreeSet<u64> = BTreeSet::new();
    for ((k, l), outcome) in vc.labels.iter().enumerate().zip(outcomes) {
        let outcome = outcome.expect("every label is settled by one of the two passes");
        if matches!(outcome, Outcome::Infeasible) {
            infeasible.insert(l.id);
        }
        let (loc, tag, text) = stmts.get(&l.id).cloned().unwrap_or_default();
        occurrences.push(Occurrence {
            id: l.id,
            function: f.name.clone(),
            block: l.block.0,
            loc,
            tag,
            text,
            outcome,
            time_ms: spent_ms[k] + if k == 0 { encode_ms } else { 0 },
        });
    }
    asker.stats.step1.ms = t1.elapsed().as_millis();
    // What each part of the function's work spent of its budget, for `-v`.
    let units_step1 = asker.backend.work();
    let t23 = Instant::now();

    // ----- steps 2 and 3, group by group -----
    // Labels of called-once callees get their step 1 here too, in their only context.
    let mut context_infeasible = BTreeSet::new();
    for id in groups
        .iter()
        .flatten()
        .copied()
        .filter(|id| is_context(*id))
    {
        let Some(l) = label_of(id) else { continue };
        if asker.over_budget() {
            break;
        }
        let (o, _) = asker.ask_step1_observing(l, &[], None, &[]);
        if matches!(o, Outcome::Infeasible) {
            context_infeasible.insert(id);
        }
    }
    let mut results = Vec::new();
    for (gi, group) in groups.iter().enumerate() {
        let in_context = group.iter().any(|id| is_context(*id));
        let members: Vec<u64> = group
            .iter()
            .copied()
            .filter(|id| !infeasible.contains(id) && !context_infeasible.contains(id))
            .collect();
        let mut always_true = BTreeSet::new();
        if config.steps.contains(&2) {
            let t2 = Instant::now();
            for &id in &members {
                let Some(l) = label_of(id) else { continue };
                if asker.over_budget() {
                    break;
                }
                if asker.ask_always_true(l) {
                    always_true.insert(id);
                }
            }
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
                    &mut asker,
                    &Step3Group {
                        survivors: &survivors,
                        group,
                        models: &models[gi],
                        labels: &all_labels,
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
    let units_steps23 = asker.backend.work() - units_step1;
    let ms_steps23 = t23.elapsed().as_millis();
    // Subsumers witnessed here, once the function's own questions are asked (a witness only
    // lets a label stand as a partner; it proves nothing polluting).
    let witnessed = config.witnessed_subsumers.then(|| {
        let callers_known =
            contexts::callers_all_known(program, cg, &f.name, config.encode.entry_main);
        if callers_known {
            // Its callers choose its arguments: only its copies in their contexts witness.
            return BTreeSet::new();
        }
        let subsumers: BTreeSet<u64> = results
            .iter()
            .flat_map(|g| g.implications.iter().map(|(a, _)| *a))
            .collect();
        let per_ms = config.solver.units_per_ms();
        asker.budget = contexts::witness_budget(&asker, per_ms);
        subsumers
            .into_iter()
            .filter(|id| {
                let Some(l) = label_of(*id) else { return false };
                !asker.over_budget() && asker.witness(l, &vc.inputs, true)
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
        contexts::prove_copies(prover, f, &recheck, &vc.opaque_calls, &mut asker.stats);
    for o in occurrences.iter_mut() {
        if decided.own_infeasible.contains(&o.id) {
            o.outcome = Outcome::Infeasible;
        }
    }
    let ms_copies = t_copies.elapsed().as_millis();
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
        eprintln!(
            "covprune: {}: done in {} ms (encoding {} ms, step 1 {} ms and {} units, steps 2-3 {} ms and {} units, calling contexts {} ms); questions {}/{}/{} ({} answered by earlier models, {} asked before); questions with memory {} ({} proved, {} units{}); solver work {} units{}{}",
            f.name,
            t0.elapsed().as_millis(),
            encode_ms,
            st.step1.ms,
            units_step1,
            ms_steps23,
            units_steps23,
            ms_copies,
            st.step1.queries,
            st.step2.queries,
            st.step3.queries,
            asker.backend.reused_models(),
            asker.backend.repeated_questions(),
            asker.memory.asked,
            asker.memory.proved,
            asker.memory.spent_units,
            if asker.memory.spent() {
                ", their share spent"
            } else {
                ""
            },
            asker.backend.work(),
            match &witnessed {
                Some(w) => format!("; {} subsumers witnessed", w.len()),
                None => String::new(),
            },
            if asker.over_budget() {
                " (budget exhausted)"
            } else {
                ""
            }
        );
    }
    FunctionResult {
        function: f.name.clone(),
        occurrences,
        context_infeasible,
        groups: results,
        copies: decided.copies,
        run_implications: decided.run_level,
        run_infeasible: decided.run_infeasible,
        call_sites,
        witnessed,
        stats: asker.stats,
    }
}

/// One co-reached group as step 3 sees it.
struct Step3Group<'a> {
    /// The members left after steps 1 and 2, compared pairwise.
    survivors: &'a [u64],
    /// The whole group, in the order models observe it.
    group: &'a [u64],
    /// Models found so far, as values of the group's predicates.
    models: &'a [Vec<Option<u128>>],
    labels: &'a [LabelVc],
}

/// Step 3 on one group: the proven implications `i ⇒ j` among its survivors.
fn step3(asker: &mut Asker, g: &Step3Group, model_filter: bool) -> BTreeSet<(u64, u64)> {
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
    let observe: Vec<T> = group
        .iter()
        .filter_map(|id| lab(*id).map(|l| l.pred))
        .collect();
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
            let obs: &[T] = if model_filter && observe.len() == group.len() {
                &observe
            } else {
                &[]
            };
            let (o, model) = asker.decide(goal, obs);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_with_memory_get_their_scaled_units_until_one_runs_out() {
        let budget = Budget::of_wall(std::time::Duration::from_secs(8), Instant::now());
        let mut share = MemoryShare::of(&budget);
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
}
