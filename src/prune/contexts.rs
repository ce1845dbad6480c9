//! Calling contexts: the labels of a function whose every caller is known are decided again in
//! each inlined copy of it (in its callers' encodings, and their callers' in turn), and a claim
//! made in every context holds.
//!
//! Soundness: every execution of a function `g` whose callers are all known starts at one of
//! its call sites. A copy of `g` inlined at a site `s` in a caller `c` and encoded as part of
//! `c` (with `c`'s own arguments and globals arbitrary) over-approximates every execution of `g`
//! entered through `s`. So a fact proved in the copy at `s`, or, when `c`'s callers are known
//! too, in the copies at every call of `c` followed by `s`, holds for every execution of `g`
//! through `s`; holding through every site, it holds for every execution of `g`. A site whose
//! copy was not encoded (too big, too deep, in unreached code) proves nothing.
//!
//! Labels of a function with several copies are also related over whole activations of the
//! encoded function ([`run_level_implications`]), where those activations hold every
//! execution of the function; the soundness argument is beside it.

use std::collections::{BTreeMap, BTreeSet};

use super::asker::Asker;
use super::budget::{Budget, BUDGET_BACKSTOP};
use super::copies::{callers_all_known, CopyResult, MAX_CONTEXT_DEPTH};
use super::step1::group_observation;
use super::steps23::{step2, step3, Step3Group};
use super::{Outcome, Prover, Reason, RunStats};
use crate::cfg::callgraph::direct_callees;
use crate::console::print_err;
use crate::ir::{Callee, Function, Program};
use crate::vc::encode::{encode_until, CallSite, InlinedCopy, LabelVc};
use crate::vc::term::T;

/// The copies' questions of one function get at most this share of its budget (a 64th), on
/// top of it: they may not slow the function's own questions. On SQLite CC at the benchmark's
/// limits (8 s per function), with a sixteenth, the copies took a third of the run's time
/// (492 of 1,543 s) for 8 more labels pruned than without them (2026-11-28).
const COPY_BUDGET_DIVISOR: u64 = 64;
/// ... and otherwise this many milliseconds of nominal solver time, whatever the function's own
/// questions cost. The budget is a constant, not a share of that cost (as it was until
/// 2026-11-25), because the cost is not a property of the input: a run resumed from its journal
/// does not ask again what the journal holds, and a question answered by an earlier model costs
/// nothing, so a budget drawn from it gave a resumed run other calling-context proofs than the
/// whole run (tests/pool.rs). On Siemens nearly every function's share was this floor anyway,
/// and the copies' proofs are a bonus over the function's own.
const COPY_BUDGET_MS: u64 = 1000;
/// Each question about a copy gets this share of a question's limit (a quarter): a context
/// question is worth asking when it is easy.
const COPY_QUESTION_DIVISOR: u32 = 4;

/// The copies' budget: [`COPY_BUDGET_MS`], at most a 64th of the function's budget; in
/// resource units when questions have a resource limit (the same for every run of the same
/// input), else in wall time.
fn copy_budget(config: &super::PruneConfig, start: std::time::Instant) -> Budget {
    let ms = at_most_a_share(config, COPY_BUDGET_MS);
    let per_ms = config.solver.units_per_ms();
    if per_ms > 0 {
        Budget::of_units(ms.saturating_mul(per_ms), per_ms, start)
    } else {
        Budget::of_wall(std::time::Duration::from_millis(ms), start)
    }
}

/// `ms`, at most a [`COPY_BUDGET_DIVISOR`]th of the function's budget (if it has one): what
/// the copies' questions, and the function's own labels asked again among them, may spend.
fn at_most_a_share(config: &super::PruneConfig, ms: u64) -> u64 {
    let whole_ms = config.function_budget_s.saturating_mul(1000);
    if whole_ms == 0 {
        ms
    } else {
        ms.min((whole_ms / COPY_BUDGET_DIVISOR).max(1))
    }
}

/// The calls from `f` down to an inlined copy, and the copied function.
pub type Copied = (Vec<CallSite>, String);

/// Encodes `f` again with the copies of the functions decided in context recorded (and
/// inlined with the larger size cap), and decides them under a budget of their own. Returns
/// what the copies proved and which copies were encoded; adds the questions to `stats`.
///
/// `recheck` holds `f`'s own labels its own encoding left satisfiable, and `own_opaque` the
/// functions that encoding did not inline somewhere: when this encoding inlines one of them,
/// those labels are asked again here ([`recheck_own_labels`]).
pub(super) fn prove_copies(
    prover: &Prover,
    f: &Function,
    recheck: &BTreeSet<u64>,
    own_opaque: &BTreeSet<String>,
    stats: &mut RunStats,
) -> (DecidedCopies, Vec<Copied>) {
    let nothing = || DecidedCopies {
        copies: Vec::new(),
        run_level: BTreeMap::new(),
        run_infeasible: BTreeSet::new(),
        own_infeasible: BTreeSet::new(),
    };
    let start = std::time::Instant::now();
    let program = prover.program;
    if !reaches_within(program, f, &prover.context_functions, 2) {
        return (nothing(), Vec::new());
    }
    let mut config = prover.config.clone();
    config.encode.context_functions = prover.context_functions.clone();
    config.solver.timeout_ms = (config.solver.timeout_ms / COPY_QUESTION_DIVISOR).max(1);
    config.solver.rlimit = config.solver.rlimit.div_ceil(COPY_QUESTION_DIVISOR);
    // The copies' encoding gets at most the copies' share of the function's budget.
    let deadline = (prover.config.function_budget_s > 0).then(|| {
        start
            + std::time::Duration::from_millis(
                (prover.config.function_budget_s.saturating_mul(1000) / COPY_BUDGET_DIVISOR).max(1),
            )
    });
    let Some(mut vc) = encode_until(program, f, &prover.sums, &config.encode, deadline) else {
        return (nothing(), Vec::new());
    };
    let encoded = start.elapsed();
    let copied: Vec<Copied> = vc
        .copies
        .iter()
        .map(|c| (c.path.clone(), c.function.clone()))
        .collect();
    if vc.copies.is_empty() {
        return (nothing(), copied);
    }
    // Its own file names: these questions are asked of another encoding of `f`.
    let (backend, loops) = super::asker::backends(
        &config.solver,
        config.dump_smt.as_deref(),
        &format!("{}-contexts", f.name),
    );
    let budget = copy_budget(&prover.config, start);
    let mut asker = Asker::new(
        backend,
        vc.terms,
        (&mut vc.facts, &vc.loop_candidates, loops),
        &vc.exactness,
        budget,
        &config.faults,
    );
    let budget_units = asker.budget.units;
    let cg = &prover.cg;
    let may_stop = |c: &Callee| match c {
        Callee::Direct(n) => cg.may_not_return(n),
        Callee::Indirect(_) => true,
    };
    let single = |id: u64| prover.occurrences.get(&id) == Some(&1);
    let entry_free = !callers_all_known(program, cg, &f.name, prover.config.encode.entry_main);
    let free_inputs: &[T] = if entry_free { &vc.inputs } else { &[] };
    let sites = &prover.sites;
    // A call on the way to `g` that was not inlined somewhere hides executions of `g`.
    let complete = |g: &str| {
        complete_paths(sites, &f.name, g, MAX_CONTEXT_DEPTH).filter(|paths| {
            !vc.opaque_calls.contains(g)
                && paths
                    .iter()
                    .flat_map(|p| p.iter().skip(1))
                    .all(|s| !vc.opaque_calls.contains(&s.caller))
        })
    };
    let mut decided = decide_copies(
        &mut asker,
        &vc.copies,
        &CopyQuestions {
            program,
            may_stop: &may_stop,
            single: &single,
            steps: &config.steps,
            model_filter: config.model_filter,
            free_inputs,
            entry_free,
            units_per_ms: config.solver.units_per_ms(),
            complete_paths: &complete,
        },
    );
    if own_opaque.iter().any(|g| !vc.opaque_calls.contains(g)) && !recheck.is_empty() {
        let ms = at_most_a_share(&prover.config, RECHECK_BUDGET_MS);
        asker.budget = own_budget(&asker, config.solver.units_per_ms(), ms);
        decided.own_infeasible = recheck_own_labels(&mut asker, &vc.labels, recheck);
    }
    if config.trace {
        let results = &decided.copies;
        print_err(&format!(
            "covprune: {}: {} copies of {} labels ({} decided, {} labels witnessed, {} run-level implications, {} own labels proved with more calls inlined), encoded in {} ms, decided in {} ms; questions {}/{}/{}; solver work {} units of {:?}",
            f.name,
            vc.copies.len(),
            vc.copies.iter().map(|c| c.labels.len()).sum::<usize>(),
            results.len(),
            results.iter().map(|r| r.witnessed.len()).sum::<usize>(),
            decided.run_level.values().map(|s| s.len()).sum::<usize>(),
            decided.own_infeasible.len(),
            encoded.as_millis(),
            start.elapsed().saturating_sub(encoded).as_millis(),
            asker.stats.step1.queries,
            asker.stats.step2.queries,
            asker.stats.step3.queries,
            asker.backend.work(),
            budget_units,
        ));
    }
    stats.add(&asker.stats);
    (decided, copied)
}

/// Asking `f`'s own labels again gets a budget of its own, after the copies', of this many
/// milliseconds of nominal solver time, at most a 64th of the function's budget, as the
/// copies' (on SQLite CC at the benchmark's limits, 8 s per function, these questions proved
/// none of the function's labels).
const RECHECK_BUDGET_MS: u64 = 1000;

/// The labels of `recheck` that are false or unreached at every occurrence in this encoding
/// of the function (`own`: its own labels here). The encoding is the function's, from any
/// entry state, with more calls inlined than in its own encoding: an over-approximation of
/// its executions as that one is, only a closer one, so a label it proves false is infeasible
/// (a call left opaque there stands for the callee's whole behaviour; inlined here, the
/// callee's code says what it returns).
fn recheck_own_labels(
    asker: &mut Asker,
    own: &[LabelVc],
    recheck: &BTreeSet<u64>,
) -> BTreeSet<u64> {
    let mut proved = BTreeSet::new();
    for &id in recheck {
        let occurrences: Vec<&LabelVc> = own.iter().filter(|l| l.id == id).collect();
        if occurrences.is_empty() {
            continue;
        }
        let mut all_false = true;
        for l in occurrences {
            if asker.over_budget() {
                return proved;
            }
            let (outcome, _) = asker.ask_step1_observing(l, &[], None, &[]);
            if !matches!(outcome, Outcome::Infeasible) {
                all_false = false;
                break;
            }
        }
        if all_false {
            proved.insert(id);
        }
    }
    proved
}

/// Does `f` call one of `targets`, directly or through at most `depth - 1` other calls?
fn reaches_within(
    program: &Program,
    f: &Function,
    targets: &BTreeSet<String>,
    depth: usize,
) -> bool {
    if targets.is_empty() || depth == 0 {
        return false;
    }
    direct_callees(f).iter().any(|c| {
        targets.contains(c)
            || program
                .function(c)
                .is_some_and(|g| g.name != f.name && reaches_within(program, g, targets, depth - 1))
    })
}

/// What the copies of one encoding need besides the solver.
pub struct CopyQuestions<'a> {
    pub program: &'a Program,
    pub may_stop: &'a dyn Fn(&Callee) -> bool,
    pub single: &'a dyn Fn(u64) -> bool,
    pub steps: &'a BTreeSet<u8>,
    pub model_filter: bool,
    /// The encoded function's parameters when its callers are not all known (empty
    /// otherwise): the inputs of witness questions.
    pub free_inputs: &'a [T],
    /// The encoded function's callers are not all known: any entry state is theirs to give,
    /// and a model that is a run from it ([`super::Asker::exact`]) witnesses a label.
    pub entry_free: bool,
    /// Solver units per millisecond (0: wall-clock budgets), for the witnesses' budget.
    pub units_per_ms: u64,
    /// Every call path from the encoded function to a function, when the encoded function's
    /// activations hold all of that function's executions ([`complete_paths`]) and no call on
    /// the way was left opaque in the encoding; `None` otherwise. Run-level implications are
    /// asked only for such functions.
    pub complete_paths: &'a dyn Fn(&str) -> Option<BTreeSet<Vec<CallSite>>>,
}

/// What the copies of one encoding proved: each copy's result, and the implications that hold
/// over every activation of the encoded function ([`run_level_implications`]).
pub struct DecidedCopies {
    pub copies: Vec<CopyResult>,
    pub run_level: RunLevelImplications,
    /// Labels covered at no copy of any activation ([`run_level_implications`]).
    pub run_infeasible: BTreeSet<u64>,
    /// Labels of the encoded function itself that its own encoding left satisfiable and this
    /// one, with more calls inlined, proves false or unreached at every occurrence
    /// ([`recheck_own_labels`]).
    pub own_infeasible: BTreeSet<u64>,
}

/// Witness questions get a budget of their own, after the copies', of this many milliseconds
/// of nominal solver time: with the inputs fixed they are mostly propagation, and a partner
/// that no witness backs cannot prune another label.
const WITNESS_BUDGET_MS: u64 = 1000;

/// The witnesses' budget, from now on.
pub(super) fn witness_budget(asker: &Asker, per_ms: u64) -> Budget {
    own_budget(asker, per_ms, WITNESS_BUDGET_MS)
}

/// A budget of `ms` milliseconds of nominal solver time, from now on.
fn own_budget(asker: &Asker, per_ms: u64, ms: u64) -> Budget {
    let start = std::time::Instant::now();
    if per_ms > 0 {
        Budget {
            start,
            wall: Some(std::time::Duration::from_millis(
                ms * u64::from(BUDGET_BACKSTOP),
            )),
            units: Some(asker.backend.work() + ms * per_ms),
        }
    } else {
        Budget::of_wall(std::time::Duration::from_millis(ms), start)
    }
}

/// Decides the labels of every inlined copy: step 1 for each, steps 2 and 3 within the
/// function's co-reached groups. Copies are asked smallest first, each with what the copies
/// before it left of the budget; the one the budget cuts short reports the labels its step 1
/// proved at every occurrence, and the copies after it nothing.
pub(super) fn decide_copies(
    asker: &mut Asker,
    copies: &[InlinedCopy],
    q: &CopyQuestions,
) -> DecidedCopies {
    let mut groups_of: BTreeMap<&str, Vec<Vec<u64>>> = BTreeMap::new();
    // A label satisfiable in one copy needs that copy's callers' contexts to be proved
    // anyway: its other copies here are not asked (fewer questions; a proof may be missed).
    let mut failed: BTreeSet<(String, u64, u32)> = BTreeSet::new();
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut out: Vec<CopyResult> = Vec::new();
    // Fewer labels first (in encoding order among equals): a large copy asked first would
    // leave the small ones nothing.
    let mut order: Vec<&InlinedCopy> = copies.iter().collect();
    order.sort_by_key(|c| c.labels.len());
    for copy in order {
        if asker.over_budget() {
            break;
        }
        let Some(g) = q.program.functions.iter().find(|f| f.name == copy.function) else {
            continue;
        };
        let groups = groups_of.entry(g.name.as_str()).or_insert_with(|| {
            super::groups::co_reached(g, q.may_stop)
                .into_iter()
                .map(|grp| {
                    grp.into_iter()
                        .map(|p| p.id)
                        .filter(|id| (q.single)(*id))
                        .collect()
                })
                .collect()
        });
        // Group members this copy holds once.
        let once = |id: u64| copy.labels.iter().filter(|l| l.id == id).count() == 1;
        let groups: Vec<Vec<u64>> = groups
            .iter()
            .map(|grp| grp.iter().copied().filter(|id| once(*id)).collect())
            .collect();
        // Fault injection for the run-level tests: the copies' budget is spent before any copy
        // is decided, as hard copies can spend it (the groups are known: run-level questions
        // are asked).
        if asker.faults.copies_undecided {
            if asker.faults.undecided_copies_hold {
                // The planted fault: a copy the budget left undecided reports every label
                // infeasible.
                out.push(CopyResult {
                    path: copy.path.clone(),
                    function: copy.function.clone(),
                    infeasible: copy.labels.iter().map(|l| (l.id, l.block.0)).collect(),
                    satisfiable: BTreeSet::new(),
                    always_true: BTreeSet::new(),
                    implications: BTreeSet::new(),
                    witnessed: BTreeSet::new(),
                });
                continue;
            }
            break;
        }
        let (r, models) = decide_copy(asker, copy, &groups, q, &mut failed);
        candidates.extend(models.into_iter().map(|(label, values)| Candidate {
            result: out.len(),
            label,
            values,
        }));
        out.push(r);
    }
    let (run_level, run_infeasible) = run_level_implications(asker, copies, &groups_of, &out, q);
    // Witnesses come last, from what the budget leaves: a proof of infeasibility in a copy
    // is worth more than a witness, which only lets a label stand as a partner.
    if !candidates.is_empty() {
        asker.budget = witness_budget(asker, q.units_per_ms);
    }
    // Witnesses matter for labels some copy proved infeasible (see [`Contexts::suspect`]):
    // those first, and those with a model first, as they take one question and not two.
    let proved: BTreeSet<(&str, u64)> = out
        .iter()
        .flat_map(|r| {
            r.infeasible
                .iter()
                .map(|(id, _)| (r.function.as_str(), *id))
        })
        .collect();
    let key = |c: &Candidate| {
        let proved_here = proved.contains(&(out[c.result].function.as_str(), c.label.id));
        (!proved_here, c.values.is_none())
    };
    candidates.sort_by_key(key);
    for c in candidates {
        // One witness per label of a function is enough.
        let function = &out[c.result].function;
        if out
            .iter()
            .any(|r| &r.function == function && r.witnessed.contains(&c.label.id))
        {
            continue;
        }
        if asker.over_budget() {
            break;
        }
        let witnessed = match c.values {
            Some(values) => {
                (q.entry_free && asker.exact(&c.label))
                    || asker.witnessed(&c.label, q.free_inputs, &values)
            }
            None => asker.witness(&c.label, q.free_inputs, q.entry_free),
        };
        if witnessed {
            out[c.result].witnessed.insert(c.label.id);
        }
    }
    DecidedCopies {
        copies: out,
        run_level,
        run_infeasible,
        own_infeasible: BTreeSet::new(),
    }
}

/// Implications over whole activations, by the function whose labels they relate.
pub type RunLevelImplications = BTreeMap<String, BTreeSet<(u64, u64)>>;

/// Run-level implications get a budget of their own, after the copies', of this many
/// milliseconds of nominal solver time.
const RUN_LEVEL_BUDGET_MS: u64 = 1000;

/// Implications between the labels of a function `g` over whole activations of the encoded
/// function `f`: covering `a` at any of `g`'s copies implies covering `b` at some copy (the
/// same or another, before or after). Asked only where `f`'s activations hold every execution
/// of `g` and every path from `f` to `g` has its copy here ([`complete_paths`]), and only for
/// labels of one co-reached group of `g`.
///
/// Soundness: a test covers a label when some execution of it makes the predicate true. Every
/// execution of `g` lies in an activation of `f` whose stack from `f` down is one of the
/// enumerated paths, each with its copy here; the encoding over-approximates the activation up
/// to the execution that covers `a` (a copy in a loop's havocked iteration stands for that
/// iteration), and in it every occurrence of `b` is one of the activation's executions. So
/// "covered `a` at some copy and `b` at none" unsatisfiable means no activation covers `a`
/// without covering `b`, and no test does either.
///
/// An implication whose `a` is covered by no activation holds vacuously and would prune `b`
/// with nothing left to cover, so `a`'s implications are asked only once the encoding shows a
/// run covering `a` (a copy's model, or the question "covered `a` at some copy"). When that
/// question is unsatisfiable, `a` is infeasible by the same argument: it is returned in the
/// second set. An unknown answer leaves `a` with no implication. (Before 2026-11-25 a copy the
/// budget left undecided could hide an infeasible `a`: seed 19 of the context harness pruned a
/// feasible label as subsumed by an infeasible one this way.)
fn run_level_implications(
    asker: &mut Asker,
    copies: &[InlinedCopy],
    groups_of: &BTreeMap<&str, Vec<Vec<u64>>>,
    decided: &[CopyResult],
    q: &CopyQuestions,
) -> (RunLevelImplications, BTreeSet<u64>) {
    let mut out = BTreeMap::new();
    let mut infeasible = BTreeSet::new();
    // Only where a function's labels occur more than once (several copies, or a copy in a
    // peeled loop): with one occurrence each, the copies' own step 3 asks the same.
    // (function, its co-reached groups, its inlined copies)
    type Candidate<'a> = (&'a str, &'a Vec<Vec<u64>>, Vec<&'a InlinedCopy>);
    let mut candidates: Vec<Candidate> = Vec::new();
    for (&g, groups) in groups_of {
        let mine: Vec<&InlinedCopy> = copies.iter().filter(|c| c.function == g).collect();
        let repeated = mine.len() > 1
            || mine.iter().any(|c| {
                let ids: BTreeSet<u64> = c.labels.iter().map(|l| l.id).collect();
                ids.len() < c.labels.len()
            });
        if !repeated || groups.iter().all(|grp| grp.len() < 2) {
            continue;
        }
        let Some(paths) = (q.complete_paths)(g) else {
            continue;
        };
        let encoded: BTreeSet<&Vec<CallSite>> = mine.iter().map(|c| &c.path).collect();
        if paths.iter().all(|p| encoded.contains(p)) {
            candidates.push((g, groups, mine));
        }
    }
    if candidates.is_empty() {
        return (out, infeasible);
    }
    asker.budget = own_budget(asker, q.units_per_ms, RUN_LEVEL_BUDGET_MS);
    for (g, groups, mine) in candidates {
        // Covered somewhere in the activation: some occurrence reached with its predicate true.
        let mut covered: BTreeMap<u64, T> = BTreeMap::new();
        for &id in groups.iter().flatten() {
            let occurrences: Vec<T> = mine
                .iter()
                .flat_map(|c| c.labels.iter().filter(|l| l.id == id))
                .map(|l| asker.terms.and2(l.reach, l.pred))
                .collect();
            covered.insert(id, asker.terms.or(&occurrences));
        }
        // Vacuous or already known in every copy: not asked.
        let results: Vec<&CopyResult> = decided.iter().filter(|r| r.function == g).collect();
        let all_decided = results.len() == mine.len();
        let everywhere =
            |f: &dyn Fn(&CopyResult) -> bool| all_decided && results.iter().all(|r| f(r));
        let mut found = BTreeSet::new();
        for group in groups {
            for &a in group {
                if everywhere(&|r| r.infeasible_id(a)) {
                    continue;
                }
                // Not vacuous: some activation covers `a` in the encoding.
                if !results.iter().any(|r| r.satisfiable.contains(&a)) {
                    if asker.over_budget() {
                        return (out, infeasible);
                    }
                    asker.stats.step1.queries += 1;
                    match asker.decide(covered[&a], &[]).0 {
                        Outcome::Infeasible => {
                            infeasible.insert(a);
                            continue;
                        }
                        Outcome::Unknown(Reason::Satisfiable) => {}
                        Outcome::Unknown(_) => continue,
                    }
                }
                for &b in group {
                    if a == b || everywhere(&|r| r.implies(a, b)) {
                        continue;
                    }
                    if asker.over_budget() {
                        return (out, infeasible);
                    }
                    let ncb = asker.terms.not(covered[&b]);
                    let goal = asker.terms.and2(covered[&a], ncb);
                    asker.stats.step3.queries += 1;
                    if matches!(asker.decide(goal, &[]).0, Outcome::Infeasible) {
                        found.insert((a, b));
                    }
                }
            }
        }
        if !found.is_empty() {
            out.insert(g.to_string(), found);
        }
    }
    (out, infeasible)
}

/// Every call path from `root` down to `g` (outermost call first), when every execution of `g`
/// lies in an activation of `root` along one of them: walking up from `g` through the call
/// sites of functions whose callers are all known (`sites`), within `depth` calls and without
/// recursion, every path ends at `root`. `None` when some path ends elsewhere (another entry,
/// or a function whose callers are not all listed) or goes deeper.
pub fn complete_paths(
    sites: &BTreeMap<String, Vec<CallSite>>,
    root: &str,
    g: &str,
    depth: usize,
) -> Option<BTreeSet<Vec<CallSite>>> {
    if depth == 0 || g == root {
        return None;
    }
    let mut out = BTreeSet::new();
    for s in sites.get(g).filter(|s| !s.is_empty())? {
        if s.caller == root {
            out.insert(vec![s.clone()]);
            continue;
        }
        if s.caller == g {
            return None;
        }
        for mut p in complete_paths(sites, root, &s.caller, depth - 1)? {
            if p.iter().any(|x| x.caller == g) {
                return None;
            }
            p.push(s.clone());
            out.insert(p);
        }
    }
    Some(out)
}

/// A label of a copy that is a partner of steps 2 and 3 (a group member), with the
/// parameters' values in a model of it if it was asked there.
type ModelOfInputs = (LabelVc, Option<Vec<Option<u128>>>);

/// A label some copy found a model of, with the model's values of the encoded function's
/// parameters: a witness to try.
struct Candidate {
    /// Index of the copy's result.
    result: usize,
    label: LabelVc,
    /// The parameters' values in a model of the label in this copy, if it was asked here.
    values: Option<Vec<Option<u128>>>,
}

/// Decides one copy's labels within the asker's budget. A copy the budget cuts short in step 1
/// holds the labels proved at every occurrence (none of their occurrences left unasked), and
/// no result of steps 2 and 3; one cut short in step 2 or 3 holds step 1's.
fn decide_copy(
    asker: &mut Asker,
    copy: &InlinedCopy,
    groups: &[Vec<u64>],
    q: &CopyQuestions,
    failed: &mut BTreeSet<(String, u64, u32)>,
) -> (CopyResult, Vec<ModelOfInputs>) {
    let label_of = |id: u64| copy.labels.iter().find(|l| l.id == id);
    let group_of: BTreeMap<u64, usize> = groups
        .iter()
        .enumerate()
        .flat_map(|(gi, g)| g.iter().map(move |id| (*id, gi)))
        .collect();
    let mut models: Vec<Vec<Vec<Option<u128>>>> = vec![Vec::new(); groups.len()];
    // Step 1: a key is infeasible when every occurrence of it here is.
    let mut proved: BTreeMap<(u64, u32), bool> = BTreeMap::new();
    let mut satisfiable = BTreeSet::new();
    // Group members with the root's parameters' values in a model: witnesses to try (only
    // partners of steps 2 and 3 need one).
    let mut models_of_inputs = Vec::new();
    // Occurrences the budget left unasked: their keys are not proved.
    let mut unasked: BTreeSet<(u64, u32)> = BTreeSet::new();
    for (i, l) in copy.labels.iter().enumerate() {
        if asker.over_budget() {
            unasked.extend(copy.labels[i..].iter().map(|l| (l.id, l.block.0)));
            break;
        }
        let key = (copy.function.clone(), l.id, l.block.0);
        if failed.contains(&key) {
            proved.insert((l.id, l.block.0), false);
            // Not asked here (satisfiable in an earlier copy), but maybe witnessed here.
            if group_of.contains_key(&l.id) {
                models_of_inputs.push((l.clone(), None));
            }
            continue;
        }
        let (observe, group_models) = group_observation(
            l.id,
            groups,
            &group_of,
            |id| label_of(id).map(|x| x.pred),
            q.model_filter,
            &mut models,
        );
        let inputs: &[T] = if group_of.contains_key(&l.id) {
            q.free_inputs
        } else {
            &[]
        };
        let (o, inputs) = asker.ask_step1_observing(l, &observe, group_models, inputs);
        if let Some(values) = inputs {
            models_of_inputs.push((l.clone(), Some(values)));
        }
        let ok = matches!(o, Outcome::Infeasible);
        if !ok {
            failed.insert(key);
        }
        if matches!(o, Outcome::Unknown(super::Reason::Satisfiable)) {
            satisfiable.insert(l.id);
        }
        *proved.entry((l.id, l.block.0)).or_insert(true) &= ok;
    }
    let infeasible: BTreeSet<(u64, u32)> = proved
        .into_iter()
        .filter_map(|(k, ok)| (ok && !unasked.contains(&k)).then_some(k))
        .collect();
    let step1_only = |infeasible, satisfiable| CopyResult {
        path: copy.path.clone(),
        function: copy.function.clone(),
        infeasible,
        satisfiable,
        always_true: BTreeSet::new(),
        implications: BTreeSet::new(),
        witnessed: BTreeSet::new(),
    };
    if !unasked.is_empty() {
        return (step1_only(infeasible, satisfiable), models_of_inputs);
    }
    let is_infeasible = |id: u64| infeasible.iter().any(|(i, _)| *i == id);
    let mut always_true = BTreeSet::new();
    let mut implications = BTreeSet::new();
    for (gi, group) in groups.iter().enumerate() {
        let members: Vec<u64> = group
            .iter()
            .copied()
            .filter(|id| !is_infeasible(*id))
            .collect();
        let mut here = BTreeSet::new();
        let mut group_models = models[gi].clone();
        if q.steps.contains(&2) {
            let cut_short;
            (here, cut_short) = step2(
                asker,
                group,
                &members,
                &mut group_models,
                label_of,
                q.model_filter,
            );
            if cut_short {
                return (step1_only(infeasible, satisfiable), models_of_inputs);
            }
        }
        if q.steps.contains(&3) {
            let rep2 = here.iter().next().copied();
            let survivors: Vec<u64> = members
                .iter()
                .copied()
                .filter(|id| Some(*id) == rep2 || !here.contains(id))
                .collect();
            if survivors.len() >= 2 && survivors.len() <= super::MAX_STEP3_GROUP {
                if asker.over_budget() {
                    return (step1_only(infeasible, satisfiable), models_of_inputs);
                }
                let found = step3(
                    asker,
                    &Step3Group {
                        survivors: &survivors,
                        group,
                        models: &group_models,
                        labels: &copy.labels,
                    },
                    q.model_filter,
                );
                // Step 3 asked the lowest always-true label for all of them: they are
                // equivalent when reached.
                for &(a, b) in &found {
                    if Some(a) == rep2 {
                        for &x in &here {
                            implications.insert((x, b));
                        }
                    }
                }
                implications.extend(found);
            }
        }
        always_true.extend(here);
    }
    let result = CopyResult {
        always_true,
        implications,
        ..step1_only(infeasible, satisfiable)
    };
    (result, models_of_inputs)
}

#[cfg(test)]
mod tests;
