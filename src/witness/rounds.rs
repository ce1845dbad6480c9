//! The witness strategy: rounds of calls, each for the labels the earlier rounds' runs left
//! uncovered. One round of models per way of taking in floating-point operations
//! ([`crate::prune::witness::ROUNDS`]), then one of calls from the palette of values
//! ([`super::values`]), one of outlier tables ([`super::outliers`]), one of calls with their
//! structs' pointer fields filled in ([`super::hooks`]), one of calls with two pointers into
//! one buffer ([`super::aliases`]), then one of calls with a failing allocation
//! ([`super::allocations`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{RunOptions, Runs, WitnessError};
use crate::console::Progress;
use crate::ir::Program;
use crate::prune::witness::{self as prune_models, Call, ModelLimits, Origin};
use crate::prune::PruneConfig;

/// What the rounds run on, and with what.
pub struct Strategy<'a> {
    pub program: &'a Program,
    /// The annotated file.
    pub file: &'a Path,
    pub config: &'a PruneConfig,
    pub limits: ModelLimits,
    pub run: &'a RunOptions,
    pub pool: &'a rayon::ThreadPool,
    /// A scratch directory: one directory per round.
    pub work: &'a Path,
    /// Draw progress bars (on a terminal).
    pub progress: bool,
}

/// Every call made and its run, with how many came from each source.
pub struct Rounds {
    pub calls: Vec<Call>,
    pub runs: Runs,
    /// Calls from the palette of values.
    pub varied: usize,
    /// Calls from outlier tables.
    pub outliers: usize,
    /// Calls with their structs filled in ([`super::hooks`]).
    pub hooked: usize,
    /// Calls with two pointers into one buffer.
    pub aliased: usize,
    /// Calls with a failing allocation.
    pub failing: usize,
    /// Why the calls with a failing allocation could not be built, when they could not.
    pub not_built: Option<String>,
}

/// How many labels each call's run covered (the runs are the calls', in their order).
fn reach(runs: &Runs) -> Vec<usize> {
    runs.runs.iter().map(|r| r.covered.len()).collect()
}

/// Runs the rounds for `targets` (labels by function). A runner that does not build is an
/// error, but for the failing allocations' (their wrappers may clash with what the program
/// declares or defines of the allocators): those calls are not made.
pub fn rounds(s: &Strategy, targets: &BTreeMap<String, Vec<u64>>) -> Result<Rounds, WitnessError> {
    let mut calls: Vec<Call> = Vec::new();
    let mut runs = Runs::default();
    let (mut varied, mut outliers, mut hooked, mut aliased, mut failing) = (0, 0, 0, 0, 0);
    let mut not_built = None;
    let palette = prune_models::ROUNDS.len();
    let allocations = palette + 4;
    for round in 0..=allocations {
        let covered: BTreeSet<u64> = runs
            .runs
            .iter()
            .flat_map(|r| r.covered.iter().copied())
            .collect();
        let left: BTreeMap<String, Vec<u64>> = targets
            .iter()
            .map(|(f, ids)| {
                (
                    f.clone(),
                    ids.iter()
                        .copied()
                        .filter(|id| !covered.contains(id))
                        .collect::<Vec<u64>>(),
                )
            })
            .filter(|(_, ids)| !ids.is_empty())
            .collect();
        let mut new = match prune_models::ROUNDS.get(round) {
            Some(&floats) => {
                let what = if round == 0 {
                    "models".to_string()
                } else {
                    format!("models, round {}", round + 1)
                };
                let bar = Progress::counting(left.len() as u64, &what, "functions", s.progress);
                let new = s.pool.install(|| {
                    prune_models::calls(s.program, s.config, &left, s.limits, floats, &|n| {
                        bar.inc(n)
                    })
                });
                bar.finish();
                new
            }
            None if round == palette => super::values::calls(s.program, &calls, &left),
            None if round == palette + 1 => super::outliers::calls(s.program, &calls, &left),
            None if round == palette + 2 => {
                super::hooks::calls(s.program, &calls, &reach(&runs), &left)
            }
            None if round == palette + 3 => {
                super::aliases::calls(s.program, &calls, &reach(&runs), &left)
            }
            None => super::allocations::calls(s.program, &calls, &reach(&runs), &left),
        };
        let earlier: BTreeSet<&Call> = calls.iter().collect();
        new.retain(|c| !earlier.contains(c));
        let bar = Progress::counting(new.len() as u64, "runs", "calls", s.progress);
        let round_dir = s.work.join(format!("round{}", round + 1));
        std::fs::create_dir_all(&round_dir)?;
        let more = s
            .pool
            .install(|| super::run(s.program, s.file, &new, s.run, &round_dir, &|n| bar.inc(n)));
        bar.finish();
        let more = match more {
            Ok(more) => more,
            Err(e @ WitnessError::Build { .. }) if round == allocations => {
                not_built = Some(e.to_string());
                continue;
            }
            Err(e) => return Err(e),
        };
        varied += new.iter().filter(|c| c.origin == Origin::Palette).count();
        outliers += new.iter().filter(|c| c.origin == Origin::Outliers).count();
        hooked += new
            .iter()
            .filter(|c| (c.hooks || c.origin == Origin::Filled) && c.fail_allocation.is_none())
            .count();
        aliased += new
            .iter()
            .filter(|c| c.origin == Origin::Aliases && c.fail_allocation.is_none())
            .count();
        failing += new.iter().filter(|c| c.fail_allocation.is_some()).count();
        calls.extend(new);
        runs.runs.extend(more.runs);
    }
    Ok(Rounds {
        calls,
        runs,
        varied,
        outliers,
        hooked,
        aliased,
        failing,
        not_built,
    })
}
