//! Faults a test injects into a run to reach the paths that hard inputs reach (a function
//! whose encoding outlasts its budget, a question that spends it, a crashing solver). They are
//! read once from the environment where a command starts, in debug builds only (release
//! builds inject none), and travel in the configuration, so that worker processes inject the
//! same ones; the engine never reads the environment.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Faults {
    /// The encoder sleeps this long at every block (milliseconds), so that a small function
    /// outlasts its budget (`COVPRUNE_TEST_ENCODE_BLOCK_MS`).
    pub encode_block_ms: u64,
    /// A question with memory spends the function's whole budget
    /// (`COVPRUNE_TEST_MEMORY_QUESTION_SPENDS_BUDGET`).
    pub memory_question_spends_budget: bool,
    /// A question with memory spends the memory questions' whole share
    /// (`COVPRUNE_TEST_MEMORY_QUESTION_SPENDS_SHARE`).
    pub memory_question_spends_share: bool,
    /// The copies' budget is spent before any copy is decided
    /// (`COVPRUNE_TEST_COPIES_UNDECIDED`).
    pub copies_undecided: bool,
    /// A worker process aborts, as a crashing solver would, while proving this function the
    /// first time (`COVPRUNE_TEST_ABORT_IN`).
    pub abort_in: Option<String>,
    /// Every bound proposed at a loop head is a fact, unproved: a planted unsound encoding
    /// that the soundness harness must catch (`COVPRUNE_TEST_UNPROVED_LOOP_FACTS`).
    pub unproved_loop_facts: bool,
    /// Bounds on floating-point values proposed at a loop head are facts, unproved
    /// (`COVPRUNE_TEST_UNPROVED_FLOAT_LOOP_FACTS`).
    pub unproved_float_loop_facts: bool,
    /// Bounds on array cells proposed at a nest's heads are facts, unproved
    /// (`COVPRUNE_TEST_UNPROVED_CELL_FACTS`).
    pub unproved_cell_facts: bool,
    /// With `copies_undecided`, a copy the budget left undecided reports every label of it
    /// infeasible: a planted unsound shortcut that the context harness must catch
    /// (`COVPRUNE_TEST_UNDECIDED_COPIES_HOLD`).
    pub undecided_copies_hold: bool,
    /// The floating-point ranges take a box they leave undecided as refuted: a planted
    /// unsound proof that the float harness must catch (`COVPRUNE_TEST_RANGES_UNDECIDED_REFUTE`).
    pub ranges_undecided_refute: bool,
    /// Worker processes append `PID JOURNAL FUNCTION` here for each function they prove
    /// (`COVPRUNE_TEST_WORKER_LOG`).
    pub worker_log: Option<PathBuf>,
}

impl Faults {
    /// The faults the environment asks for (none in release builds).
    pub fn from_env() -> Faults {
        if !cfg!(debug_assertions) {
            return Faults::default();
        }
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        Faults {
            encode_block_ms: var("COVPRUNE_TEST_ENCODE_BLOCK_MS")
                .and_then(|v| v.to_str()?.parse().ok())
                .unwrap_or(0),
            memory_question_spends_budget: var("COVPRUNE_TEST_MEMORY_QUESTION_SPENDS_BUDGET")
                .is_some(),
            memory_question_spends_share: var("COVPRUNE_TEST_MEMORY_QUESTION_SPENDS_SHARE")
                .is_some(),
            copies_undecided: var("COVPRUNE_TEST_COPIES_UNDECIDED").is_some(),
            abort_in: var("COVPRUNE_TEST_ABORT_IN").map(|v| v.to_string_lossy().into_owned()),
            unproved_loop_facts: var("COVPRUNE_TEST_UNPROVED_LOOP_FACTS").is_some(),
            unproved_float_loop_facts: var("COVPRUNE_TEST_UNPROVED_FLOAT_LOOP_FACTS").is_some(),
            unproved_cell_facts: var("COVPRUNE_TEST_UNPROVED_CELL_FACTS").is_some(),
            undecided_copies_hold: var("COVPRUNE_TEST_UNDECIDED_COPIES_HOLD").is_some(),
            ranges_undecided_refute: var("COVPRUNE_TEST_RANGES_UNDECIDED_REFUTE").is_some(),
            worker_log: var("COVPRUNE_TEST_WORKER_LOG").map(PathBuf::from),
        }
    }
}

impl Faults {
    /// Are the loop bounds of group `g` planted unproved?
    pub fn unproved(&self, g: crate::vc::encode::CandidateGroup) -> bool {
        self.unproved_loop_facts
            || self.unproved_cell_facts && g.cells()
            || self.unproved_float_loop_facts && !g.together() && !g.cells()
    }
}
