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

mod asker;
mod budget;
pub mod cache_key;
pub mod config;
pub mod contexts;
pub mod copies;
pub mod faults;
mod function;
pub mod groups;
pub mod journal;
mod labels;
pub mod link;
mod loop_facts;
pub mod pool;
pub mod reference;
pub mod shard;
pub mod shares;
pub mod status;
mod step1;
mod steps23;
pub mod unreached;
mod verdicts;
pub mod witness;

pub use config::PruneConfig;
use function::{
    crashed_function, finish_function, prove_function, prove_share, unentered_function,
};
use shares::{Part, ShareResult};
pub use status::{Reason, Status};
pub(crate) use verdicts::implication_classes;
pub use verdicts::{
    combine, FunctionResult, GroupResult, LabelVerdict, Occurrence, Outcome, RunStats, StepStats,
};

use std::collections::{BTreeMap, BTreeSet};

use crate::console::print_err;
use crate::ir::{Callee, Program, StmtKind};
use crate::vc::Summaries;
use rayon::prelude::*;

/// Largest group for which step 3 compares every ordered pair.
pub(super) const MAX_STEP3_GROUP: usize = 120;

/// Called with the number of questions just decided, from any worker thread.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

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
    combine(prove(program, config, progress, &Hooks::default()).functions)
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

/// The parts of functions a run proves, by function index: the functions to prove, by name,
/// each in its parts ([`shares::parts_of`]); a shard `(k, n)` takes every n-th part, so that
/// the shares of one big function are spread over shards too.
pub fn parts_in_shard(
    program: &Program,
    shard: Option<(usize, usize)>,
) -> BTreeMap<usize, Vec<Part>> {
    let chosen = to_prove(program);
    let mut functions: Vec<(&str, usize)> = program
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| chosen.contains(&f.name))
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    functions.sort_unstable();
    let mut out: BTreeMap<usize, Vec<Part>> = BTreeMap::new();
    let parts = functions.into_iter().flat_map(|(_, i)| {
        shares::parts_of(&program.functions[i])
            .into_iter()
            .map(move |p| (i, p))
    });
    for (j, (i, part)) in parts.enumerate() {
        if shard.is_none_or(|(k, n)| j % n == k - 1) {
            out.entry(i).or_default().push(part);
        }
    }
    out
}

/// Does a run with `parts` of function `f` finish it (it proves the whole function, or every
/// share of it)?
pub fn finishes(f: &crate::ir::Function, parts: &[Part]) -> bool {
    parts == shares::parts_of(f).as_slice()
}

/// What a run proved: functions, and shares of functions it does not finish (those of a
/// shard run whose other shares other shards prove; `merge` finishes them).
#[derive(Default)]
pub struct Proved {
    pub functions: Vec<FunctionResult>,
    pub shares: Vec<ShareResult>,
}

/// Proves the configured steps function by function (in parallel, biggest first), and
/// returns each function's raw results, sorted by function name (and the shares of those it
/// does not finish).
pub fn prove(program: &Program, config: &PruneConfig, progress: Progress, hooks: &Hooks) -> Proved {
    let prover = Prover::new(program, config);
    // (Worker processes name them one by one, as they are handed them.)
    if config.trace && !prover.never_entered.is_empty() {
        let names: Vec<&str> = prover.never_entered.iter().map(String::as_str).collect();
        print_err(&format!(
            "covprune: {} functions no run enters: {}",
            names.len(),
            names.join(", ")
        ));
    }
    // Big functions in shares ([`shares`]), then each finished once its shares are in, when
    // this run proves all of them.
    let parts = parts_in_shard(program, hooks.shard);
    let order = biggest_first(program, parts.keys().copied());
    let items: Vec<(usize, Part)> = order
        .iter()
        .flat_map(|&i| parts[&i].iter().map(move |&p| (i, p)))
        .collect();
    let work = || -> Proved {
        let answers: Vec<(usize, Result<FunctionResult, ShareResult>)> = items
            .par_iter()
            .map(|&(i, part)| match part {
                Part::Share(k) => (i, Err(prover.prove_share(i, k, progress, hooks))),
                _ => (i, Ok(prover.prove_one(i, progress, hooks))),
            })
            .collect();
        let mut proved = Proved::default();
        let mut split: BTreeMap<usize, Vec<ShareResult>> = BTreeMap::new();
        for (i, r) in answers {
            match r {
                Ok(r) => proved.functions.push(r),
                Err(s) => split.entry(i).or_default().push(s),
            }
        }
        let mut to_finish = Vec::new();
        for (i, shares) in split {
            if finishes(&program.functions[i], &parts[&i]) {
                to_finish.push((i, shares));
            } else {
                proved.shares.extend(shares);
            }
        }
        proved.functions.par_extend(
            to_finish
                .into_par_iter()
                .map(|(i, shares)| prover.finish_one(i, shares, progress, hooks)),
        );
        proved
    };
    let mut proved = if config.jobs > 0 {
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
    proved.functions.sort_by(|a, b| a.function.cmp(&b.function));
    proved
        .shares
        .sort_by(|a, b| (&a.function, a.share).cmp(&(&b.function, b.share)));
    proved
}

/// Joins what shard runs proved (`merge`): each function's result once (a cached one may come
/// with several shards), and the functions whose shares the shards proved finished here.
/// Every share of such a function must be in.
pub fn finish_shards(
    program: &Program,
    config: &PruneConfig,
    functions: Vec<FunctionResult>,
    shares: Vec<ShareResult>,
) -> anyhow::Result<Vec<FunctionResult>> {
    let mut by_name: BTreeMap<String, FunctionResult> = BTreeMap::new();
    for r in functions {
        by_name.entry(r.function.clone()).or_insert(r);
    }
    let mut split: BTreeMap<String, BTreeMap<usize, ShareResult>> = BTreeMap::new();
    for s in shares {
        if !by_name.contains_key(&s.function) {
            split
                .entry(s.function.clone())
                .or_default()
                .insert(s.share, s);
        }
    }
    let mut to_finish = Vec::new();
    for (name, shares) in split {
        let Some(i) = program.functions.iter().position(|f| f.name == name) else {
            anyhow::bail!("the shard files name a function `{name}` the program does not have");
        };
        let n = shares::shares_of(&program.functions[i]);
        if shares.keys().copied().ne(0..n) {
            anyhow::bail!(
                "the shard files hold {} of the {n} shares of `{name}`: every shard is needed",
                shares.len()
            );
        }
        to_finish.push((i, shares.into_values().collect::<Vec<_>>()));
    }
    if !to_finish.is_empty() {
        let prover = Prover::new(program, config);
        let finished: Vec<FunctionResult> = to_finish
            .into_par_iter()
            .map(|(i, shares)| prover.finish_one(i, shares, &|_| {}, &Hooks::default()))
            .collect();
        for r in finished {
            by_name.insert(r.function.clone(), r);
        }
    }
    Ok(by_name.into_values().collect())
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
    /// Call sites of the functions whose callers are all known ([`copies::call_sites`]).
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
        config.encode.block_delay_ms = config.faults.encode_block_ms;
        config.encode.context_callees = context
            .values()
            .flat_map(|v| v.iter().map(|(g, _)| g.clone()))
            .collect();
        let never_entered = unreached::never_entered(program, &cg, config.encode.entry_main);
        let sites = if config.contexts {
            copies::call_sites(program, &cg, config.encode.entry_main, &never_entered)
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

    /// Is function `i`'s result known without asking its questions (proved by an earlier run,
    /// crashed in one, or entered by no run)?
    fn settled(&self, i: usize, prior: Option<&journal::Prior>) -> bool {
        let name = &self.program.functions[i].name;
        prior.is_some_and(|p| p.done.contains_key(name) || p.crashed.contains(name))
            || self.never_entered.contains(name) && self.config.steps.contains(&1)
    }

    /// Proves share `k` of function `i`'s own questions ([`shares`]), or takes it from the
    /// journal of an earlier run; journals it. Nothing is asked of a function whose result is
    /// known without it: its finish gives that.
    pub fn prove_share(
        &self,
        i: usize,
        k: usize,
        progress: Progress,
        hooks: &Hooks,
    ) -> ShareResult {
        let f = &self.program.functions[i];
        if self.settled(i, hooks.prior) {
            // Journaled all the same: a run that does not finish the function hands its
            // shares on (a crash, to the finish in `merge`).
            let r = ShareResult {
                function: f.name.clone(),
                share: k,
                occurrences: Vec::new(),
                context_infeasible: BTreeSet::new(),
                groups: Vec::new(),
                stats: RunStats::default(),
                unencoded: false,
                crashed: hooks.prior.is_some_and(|p| p.crashed.contains(&f.name)),
            };
            if let Some(j) = hooks.journal {
                j.share_done(&r);
            }
            return r;
        }
        if let Some(done) = hooks.prior.and_then(|p| p.shares.get(&(f.name.clone(), k))) {
            progress(done.occurrences.len() as u64);
            return done.clone();
        }
        let no_context = Vec::new();
        let ctx = self.context.get(&f.name).unwrap_or(&no_context);
        let r = prove_share(self, f, ctx, k, progress, hooks);
        if let Some(j) = hooks.journal {
            j.share_done(&r);
        }
        r
    }

    /// Function `i`'s result from its `shares`, once all are in (or as [`Prover::prove_one`]
    /// gives it when it is known without them); journals it.
    pub fn finish_one(
        &self,
        i: usize,
        shares: Vec<ShareResult>,
        progress: Progress,
        hooks: &Hooks,
    ) -> FunctionResult {
        if self.settled(i, hooks.prior) {
            return self.prove_one(i, progress, hooks);
        }
        let f = &self.program.functions[i];
        let no_context = Vec::new();
        let ctx = self.context.get(&f.name).unwrap_or(&no_context);
        let r = if shares.len() == shares::shares_of(f) && !shares.iter().any(|s| s.crashed) {
            finish_function(self, f, ctx, shares)
        } else {
            // A share missing from the journal, or one whose worker died (in a shard run
            // that handed it on): the function's labels stay unknown.
            crashed_function(self.program, f, &self.sums, &self.config, hooks)
        };
        if let Some(j) = hooks.journal {
            j.function_done(&r);
        }
        r
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
                print_err(&format!(
                    "covprune: {}: no run enters it: its labels are infeasible",
                    f.name
                ));
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
    biggest_first(program, parts_in_shard(program, shard).into_keys())
}

/// `functions` (indices into the program's functions), biggest first so that the longest
/// encodings do not start last, then by name.
fn biggest_first(program: &Program, functions: impl IntoIterator<Item = usize>) -> Vec<usize> {
    let mut order: Vec<usize> = functions.into_iter().collect();
    let f = |i: usize| &program.functions[i];
    order.sort_by_key(|&i| (std::cmp::Reverse(f(i).blocks.len()), f(i).name.clone()));
    order
}

/// Pseudo ids of anchors (entry of a function, call of a called-once function) in groups.
pub(super) const ANCHOR_BASE: u64 = u64::MAX - (1 << 20);

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
