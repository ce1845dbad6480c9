//! The reference prover: an oracle for tests and benchmarks, not a mode of any command. It
//! checks the claims of a run of the engine with the plainest sound encoding
//! ([`crate::vc::encode::EncodeConfig::reference`]) and whole questions: every fact of the
//! encoding with the goal, asked of a solver that keeps nothing from one question to the next
//! (no cones, no ranges, no loop facts, no cheap questions, no models of earlier questions, no
//! calling contexts, no transitivity).
//!
//! A label is covered in one pass of its function's encoding when one of its occurrences is
//! reached with its predicate true. Each claim is asked as the pass that breaks it:
//! - `l` infeasible: a pass covering `l`;
//! - `l` a duplicate of `m`: a pass covering one of them and not the other;
//! - `l` subsumed by `m`: a pass covering `m` and not `l`.
//!
//! A run that breaks a claim covers the label the claim is about in some visit of its
//! function: from the last entry of the innermost loop head on that visit (the encoding's
//! havoc there stands for any state) to the next cut or return, the encoding holds a pass
//! that breaks the claim the same way (a label the run never covers is covered in none of
//! its passes). So an unsatisfiable question confirms the claim. A satisfiable one refutes it
//! only as far as the encoding is exact: its model is turned into a concrete call of the
//! function ([`super::witness`]) that a real run must replay before the claim is called false.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::witness::{plan, Call};
use super::{LabelVerdict, PruneConfig, Status};
use crate::ir::Program;
use crate::smt::{Memory, Query, Verdict};
use crate::vc::encode::{encode_until, LabelVc};
use crate::vc::term::{Terms, T};
use crate::vc::Summaries;

/// What a claim says of label `label`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Claim {
    Infeasible,
    DuplicateOf(u64),
    SubsumedBy(u64),
}

impl std::fmt::Display for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Claim::Infeasible => write!(f, "infeasible"),
            Claim::DuplicateOf(m) => write!(f, "duplicate of {m}"),
            Claim::SubsumedBy(m) => write!(f, "subsumed by {m}"),
        }
    }
}

/// The claims of a run's verdicts, each with its label and the label's function.
pub fn claims(verdicts: &[LabelVerdict]) -> Vec<(String, u64, Claim)> {
    let mut out = Vec::new();
    for v in verdicts {
        match &v.status {
            Status::Infeasible => out.push((v.function.clone(), v.id, Claim::Infeasible)),
            Status::Duplicate { of } => {
                out.push((v.function.clone(), v.id, Claim::DuplicateOf(*of)))
            }
            Status::Subsumed { by } => out.extend(
                by.iter()
                    .map(|b| (v.function.clone(), v.id, Claim::SubsumedBy(*b))),
            ),
            Status::Unknown { .. } => {}
        }
    }
    out.sort();
    out
}

/// The reference's answer on one claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The question is unsatisfiable: the claim holds.
    Holds,
    /// A pass breaks the claim; its model as concrete calls of the function (none when no
    /// call can be written for it: a static function, `main`, a parameter of another type).
    Broken(Vec<Call>),
    /// The solver gave no answer within its limits, or the function's encoding outlasted
    /// its time.
    Unknown,
    /// The claim's labels do not occur together in the encoding of the label's function (a
    /// partner in another function, or a label only inlined copies hold).
    NotTogether,
}

/// One claim checked.
#[derive(Clone, Debug)]
pub struct Checked {
    pub function: String,
    pub label: u64,
    pub claim: Claim,
    pub answer: Answer,
}

/// The configuration the reference proves with: `config`'s limits and view, the reference
/// encoding, no calling contexts, a solver that keeps nothing between questions.
pub fn reference_config(config: &PruneConfig) -> PruneConfig {
    let mut c = config.clone();
    c.encode.reference = true;
    c.encode.context_callees.clear();
    c.encode.context_functions.clear();
    c.encode.plants = Default::default();
    c.encode.alias_blind = false;
    c.encode.escape_blind = false;
    c.contexts = false;
    c.solver.incremental = false;
    c
}

/// Checks `claims` (from [`claims`]) of `program` with the reference, each function's
/// encoding and questions within `function_budget` (its encoding alone may spend it all).
/// A claim about a function no call can be written for (a static one) is also asked in the
/// encodings of the functions that call it, two calls deep at most, with its copies there:
/// only for models to replay (such a pass is one of the runs the claim is about, not all).
pub fn check(
    program: &Program,
    config: &PruneConfig,
    claims: &[(String, u64, Claim)],
    function_budget: Duration,
) -> Vec<Checked> {
    let config = reference_config(config);
    let sums = Summaries::new(program, &config.encode.externals);
    let mut out: Vec<Checked> = claims
        .iter()
        .map(|(f, l, c)| Checked {
            function: f.clone(),
            label: *l,
            claim: *c,
            answer: Answer::NotTogether,
        })
        .collect();
    let mut by_function: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (k, (f, _, _)) in claims.iter().enumerate() {
        by_function.entry(f.as_str()).or_default().push(k);
    }
    for (name, ks) in &by_function {
        let Some(f) = program.function(name) else {
            continue;
        };
        let answers = ask(
            program,
            &sums,
            &config,
            f,
            &BTreeSet::new(),
            &out,
            ks,
            function_budget,
        );
        for (k, a) in ks.iter().zip(answers) {
            out[*k].answer = a;
        }
    }
    // Claims on functions no call can be written for, asked again in their callers.
    let cg = crate::cfg::callgraph::CallGraph::build(program);
    for f in &program.functions {
        if super::witness::unsupported(f).is_some() {
            continue;
        }
        let below = callees_within(&cg, &f.name, 2);
        let ks: Vec<usize> = (0..out.len())
            .filter(|&k| {
                below.contains(&out[k].function)
                    && out[k].answer != Answer::Holds
                    && program
                        .function(&out[k].function)
                        .is_some_and(|g| super::witness::unsupported(g).is_some())
            })
            .collect();
        if ks.is_empty() {
            continue;
        }
        let copied: BTreeSet<String> = ks.iter().map(|&k| out[k].function.clone()).collect();
        let answers = ask(
            program,
            &sums,
            &config,
            f,
            &copied,
            &out,
            &ks,
            function_budget,
        );
        for (k, a) in ks.iter().zip(answers) {
            if let Answer::Broken(more) = a {
                out[*k].answer = match std::mem::replace(&mut out[*k].answer, Answer::Unknown) {
                    Answer::Broken(mut calls) => {
                        calls.extend(more);
                        Answer::Broken(calls)
                    }
                    _ => Answer::Broken(more),
                };
            }
        }
    }
    out
}

/// The functions `name` calls, directly or through others, at most `depth` calls down.
fn callees_within(
    cg: &crate::cfg::callgraph::CallGraph,
    name: &str,
    depth: usize,
) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut frontier = vec![name.to_string()];
    for _ in 0..depth {
        let mut next = Vec::new();
        for caller in &frontier {
            for (callee, _) in cg.callees(caller) {
                if seen.insert(callee.clone()) {
                    next.push(callee);
                }
            }
        }
        frontier = next;
    }
    seen
}

/// The answers on claims `ks` of `checked` in the encoding of `f`, with the labels of the
/// copies of the functions in `copied` inlined there.
#[allow(clippy::too_many_arguments)]
fn ask(
    program: &Program,
    sums: &Summaries,
    config: &PruneConfig,
    f: &crate::ir::Function,
    copied: &BTreeSet<String>,
    checked: &[Checked],
    ks: &[usize],
    function_budget: Duration,
) -> Vec<Answer> {
    let deadline = Instant::now() + function_budget;
    let mut encode = config.encode.clone();
    encode.context_functions = copied.clone();
    let Some(mut vc) = encode_until(program, f, sums, &encode, Some(deadline)) else {
        return vec![Answer::Unknown; ks.len()];
    };
    let writable = super::witness::unsupported(f).is_none();
    let plan = writable.then(|| plan(program, f, &vc.entry, &mut vc.terms));
    let facts: Vec<T> = vc.facts.iter().map(|x| x.fact).collect();
    let mut backend = crate::smt::backend(&config.solver, None, &f.name);
    backend.set_model_reuse(false);
    let labels: Vec<LabelVc> = vc
        .labels
        .iter()
        .chain(vc.copies.iter().flat_map(|c| &c.labels))
        .cloned()
        .collect();
    let observe: Vec<T> = plan.as_ref().map_or(Vec::new(), |p| p.observe.clone());
    let mut answers = Vec::with_capacity(ks.len());
    for &k in ks {
        let (label, claim) = (checked[k].label, checked[k].claim);
        let Some(goal) = claim_goal(&mut vc.terms, &labels, label, claim) else {
            answers.push(Answer::NotTogether);
            continue;
        };
        if Instant::now() >= deadline {
            answers.push(Answer::Unknown);
            continue;
        }
        let q = Query {
            terms: &vc.terms,
            context: &facts,
            goal,
            observe: &observe,
            memory: Memory::Bytes,
            units_scale: 1,
            units_cap: None,
        };
        answers.push(match backend.check(&q) {
            Verdict::Proved if copied.is_empty() => Answer::Holds,
            Verdict::Proved => Answer::Unknown,
            Verdict::Refuted(values) => Answer::Broken(match &plan {
                Some(p) if values.len() == observe.len() => p.calls(f, label, &values),
                _ => Vec::new(),
            }),
            Verdict::Unknown(_) => Answer::Unknown,
        });
    }
    answers
}

/// `l` covered in a pass: one of its occurrences reached with its predicate true. None when
/// `l` does not occur.
fn covered(t: &mut Terms, labels: &[LabelVc], l: u64) -> Option<T> {
    let pairs: Vec<(T, T)> = labels
        .iter()
        .filter(|o| o.id == l)
        .map(|o| (o.reach, o.pred))
        .collect();
    let occurrences: Vec<T> = pairs.into_iter().map(|(r, p)| t.and2(r, p)).collect();
    (!occurrences.is_empty()).then(|| t.or(&occurrences))
}

/// The pass that breaks `claim` on `label` (see the module's doc).
fn claim_goal(t: &mut Terms, labels: &[LabelVc], label: u64, claim: Claim) -> Option<T> {
    let l = covered(t, labels, label)?;
    Some(match claim {
        Claim::Infeasible => l,
        Claim::DuplicateOf(m) => {
            let m = covered(t, labels, m)?;
            let not_m = t.not(m);
            let not_l = t.not(l);
            let a = t.and2(l, not_m);
            let b = t.and2(m, not_l);
            t.or2(a, b)
        }
        Claim::SubsumedBy(m) => {
            let m = covered(t, labels, m)?;
            let not_l = t.not(l);
            t.and2(m, not_l)
        }
    })
}

/// Does a run covering exactly `covered` break `claim` on `label`?
pub fn breaks(covered: &dyn Fn(u64) -> bool, label: u64, claim: Claim) -> bool {
    match claim {
        Claim::Infeasible => covered(label),
        Claim::DuplicateOf(m) => covered(label) != covered(m),
        Claim::SubsumedBy(m) => covered(m) && !covered(label),
    }
}
