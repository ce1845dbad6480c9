//! Pruning: turns every label into proof obligations over its function's encoding and decides
//! them in parallel. Step 1: `reach(l) ∧ p_l` unsatisfiable ⇒ the label is infeasible.
//!
//! Obligations never lean on each other: each is checked against the encoding alone.

use std::collections::BTreeMap;
use std::time::Instant;

use rayon::prelude::*;

use crate::ir::{Function, Loc, Program, StmtKind};
use crate::smt::{Session, SolverConfig, Verdict};
use crate::vc::cone::{needed_facts, FactIndex};
use crate::vc::encode::{encode, EncodeConfig};
use crate::vc::Summaries;

#[derive(Clone, Debug, Default)]
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
}

/// Called with the number of labels just decided, from any worker thread.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// What the engine concluded about a label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// No run covers the label (proved).
    Infeasible,
    /// Nothing proved; the reason says why (`feasible`, `timeout`, `not lowered`, ...).
    Unknown(String),
}

#[derive(Clone, Debug)]
pub struct LabelVerdict {
    pub id: u64,
    pub status: Status,
    /// The step that decided the status (1 for infeasible).
    pub step: Option<u8>,
    pub time_ms: u128,
    pub function: String,
    pub loc: Loc,
    pub tag: String,
    pub text: String,
}

/// One occurrence of a label in the IR (an id may occur more than once, e.g. in a macro
/// expanded twice: the label is infeasible only if every occurrence is).
struct Occurrence {
    id: u64,
    function: String,
    loc: Loc,
    tag: String,
    text: String,
    outcome: Outcome,
    time_ms: u128,
}

enum Outcome {
    Infeasible,
    Unknown(String),
}

/// Runs step 1 on every label of the program; results sorted by label id.
pub fn step1(program: &Program, config: &PruneConfig) -> Vec<LabelVerdict> {
    step1_with_progress(program, config, &|_| {})
}

/// The number of label occurrences step 1 will decide (for progress bars).
pub fn count_labels(program: &Program) -> u64 {
    program
        .functions
        .iter()
        .map(|f| f.labels().count() as u64)
        .sum()
}

pub fn step1_with_progress(
    program: &Program,
    config: &PruneConfig,
    progress: Progress,
) -> Vec<LabelVerdict> {
    let sums = Summaries::new(program);
    let mut functions: Vec<&Function> = program
        .functions
        .iter()
        .filter(|f| f.labels().next().is_some())
        .collect();
    // Biggest first, so that the longest encodings do not start last.
    functions.sort_by_key(|f| std::cmp::Reverse(f.blocks.len()));
    let run = || -> Vec<Vec<Occurrence>> {
        functions
            .par_iter()
            .map(|f| prove_function(program, f, &sums, config, progress))
            .collect()
    };
    let per_function = if config.jobs > 0 {
        match rayon::ThreadPoolBuilder::new()
            .num_threads(config.jobs)
            .build()
        {
            Ok(pool) => pool.install(run),
            Err(_) => run(),
        }
    } else {
        run()
    };
    let mut by_id: BTreeMap<u64, Vec<Occurrence>> = BTreeMap::new();
    for occ in per_function.into_iter().flatten() {
        by_id.entry(occ.id).or_default().push(occ);
    }
    by_id
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
                    .unwrap_or_default();
                Status::Unknown(reason)
            };
            LabelVerdict {
                id,
                step: matches!(status, Status::Infeasible).then_some(1),
                status,
                time_ms,
                function: first.function.clone(),
                loc: first.loc,
                tag: first.tag.clone(),
                text: first.text.clone(),
            }
        })
        .collect()
}

/// Decides one step-1 question. Memory makes queries expensive, so a question that reads memory
/// is first asked with every memory read unconstrained (cheap; unsat there is a proof), and only
/// if that is satisfiable asked again with the byte-level memory, under a quarter of the time
/// limit.
fn decide(
    session: &mut Session,
    terms: &crate::vc::term::Terms,
    facts: &[crate::vc::encode::Fact],
    index: &FactIndex,
    goal: crate::vc::term::T,
    solver: &SolverConfig,
) -> Outcome {
    let facts_of = |ids: Vec<usize>| -> Vec<crate::vc::term::T> {
        ids.into_iter().map(|i| facts[i].fact).collect()
    };
    let (ids, reads_memory) = needed_facts(terms, facts, index, &[goal], true);
    let light = facts_of(ids);
    let first = if reads_memory {
        session.check_abstract(terms, &light, goal)
    } else {
        session.check_with(terms, &light, goal, &[])
    };
    match first {
        Verdict::Proved => return Outcome::Infeasible,
        Verdict::Refuted(_) if !reads_memory => return Outcome::Unknown("feasible".into()),
        Verdict::Unknown(r) if !reads_memory => return Outcome::Unknown(r),
        _ => {}
    }
    let (ids, _) = needed_facts(terms, facts, index, &[goal], false);
    let full = facts_of(ids);
    match session.check_with_timeout(terms, &full, goal, solver.timeout_ms / 4) {
        Verdict::Proved => Outcome::Infeasible,
        Verdict::Refuted(_) => Outcome::Unknown("feasible".into()),
        Verdict::Unknown(r) => Outcome::Unknown(r),
    }
}

fn prove_function(
    program: &Program,
    f: &Function,
    sums: &Summaries,
    config: &PruneConfig,
    progress: Progress,
) -> Vec<Occurrence> {
    let t0 = Instant::now();
    let vc = encode(program, f, sums, &config.encode);
    let mut session = Session::new(&config.solver);
    let index = FactIndex::new(&vc.facts);
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
    }
    let budget = (config.function_budget_s > 0)
        .then(|| std::time::Duration::from_secs(config.function_budget_s));
    let mut terms = vc.terms;
    // Label statements in order, to recover their tags, texts and locations.
    let stmts: Vec<(u64, Loc, String, String)> = f
        .blocks
        .iter()
        .flat_map(|b| &b.stmts)
        .filter_map(|s| match &s.kind {
            StmtKind::Label { id, tag, text, .. } => Some((*id, s.loc, tag.clone(), text.clone())),
            _ => None,
        })
        .collect();
    let mut out = Vec::with_capacity(vc.labels.len());
    for (k, l) in vc.labels.iter().enumerate() {
        let t = Instant::now();
        let goal = terms.and2(l.reach, l.pred);
        let outcome = if budget.is_some_and(|b| t0.elapsed() > b) {
            Outcome::Unknown("function budget exhausted".into())
        } else {
            decide(&mut session, &terms, &vc.facts, &index, goal, &config.solver)
        };
        progress(1);
        if config.trace && t.elapsed().as_millis() > 1000 {
            eprintln!(
                "covprune: {}: label {} took {} ms",
                f.name,
                l.id,
                t.elapsed().as_millis()
            );
        }
        let (loc, tag, text) = stmts
            .iter()
            .find(|(id, ..)| *id == l.id)
            .map(|(_, loc, tag, text)| (*loc, tag.clone(), text.clone()))
            .unwrap_or_default();
        let _ = k;
        out.push(Occurrence {
            id: l.id,
            function: f.name.clone(),
            loc,
            tag,
            text,
            outcome,
            time_ms: t.elapsed().as_millis() + if out.is_empty() { encode_ms } else { 0 },
        });
    }
    out
}
