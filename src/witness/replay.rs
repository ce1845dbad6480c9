//! Replays of the reference prover's refutations ([`crate::prune::reference`]): the calls
//! each broken claim's model gives are run for real, and a claim is refuted when a run breaks
//! it: an infeasible label covered by any run (one that crashed too: it covered the label
//! before), a duplicate or a subsumption broken by a run that ended.

use std::path::Path;

use crate::ir::Program;
use crate::measure::RunOutcome;
use crate::prune::reference::{breaks, Answer, Checked, Claim};

use super::{run, RunOptions, WitnessError};

/// A claim that a real run refutes: the claim, and the run that does.
#[derive(Clone, Debug)]
pub struct Refuted {
    pub function: String,
    pub label: u64,
    pub claim: Claim,
    /// The run's name: which call of which function, from a model of which label.
    pub run: String,
}

/// What the replays of the broken claims of `checked` found: the claims refuted, and the
/// number of calls run.
pub fn replay(
    program: &Program,
    annotated: &Path,
    checked: &[Checked],
    opts: &RunOptions,
    work: &Path,
) -> Result<(Vec<Refuted>, usize), WitnessError> {
    let calls: Vec<_> = checked
        .iter()
        .filter_map(|c| match &c.answer {
            Answer::Broken(cs) => Some(cs.iter().cloned()),
            _ => None,
        })
        .flatten()
        .collect();
    let runs = run(program, annotated, &calls, opts, work, &|_| {})?;
    // Every run is a run of the program the claims are about: each is checked against every
    // claim, not only the one whose model made it.
    let mut refuted = Vec::new();
    let mut done = std::collections::BTreeSet::new();
    for r in &runs.runs {
        let ended = matches!(r.outcome, RunOutcome::Exited(_));
        for (k, c) in checked.iter().enumerate() {
            let counts = ended || c.claim == Claim::Infeasible;
            if counts && breaks(&|l| r.covered.contains(&l), c.label, c.claim) && done.insert(k) {
                refuted.push(Refuted {
                    function: c.function.clone(),
                    label: c.label,
                    claim: c.claim,
                    run: r.name.clone(),
                });
            }
        }
    }
    Ok((refuted, calls.len()))
}
