//! The prune configuration: what a run asks and with which limits, one default for every
//! caller.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::faults::Faults;
use crate::smt::SolverConfig;
use crate::vc::encode::EncodeConfig;

/// The budget of each function, in seconds.
pub const DEFAULT_FUNCTION_BUDGET_S: u64 = 120;

/// What a run asks and with which limits. Its default is what `prune` does without options
/// (steps 1 to 3, the default time and resource limits, a budget per function); `audit`,
/// `project` and the engine's tests start from it too.
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
    /// Treat the file's static functions and variables as external: code outside the file (a
    /// test that `#include`s it) may call them with any arguments and read or write them, so
    /// that no claim rests on "all their callers are in this file".
    #[serde(default)]
    pub open_statics: bool,
    /// Faults tests inject (none by default; not part of the answers' key).
    #[serde(default)]
    pub faults: Faults,
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
            function_budget_s: DEFAULT_FUNCTION_BUDGET_S,
            trace: false,
            steps: BTreeSet::from([1, 2, 3]),
            model_filter: true,
            dump_smt: None,
            contexts: true,
            witnessed_subsumers: false,
            open_statics: false,
            faults: Faults::default(),
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
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            open_statics: bool,
        }
        serde_json::to_string(&Key {
            solver: &self.solver,
            encode: &self.encode,
            function_budget_s: self.function_budget_s,
            steps: &self.steps,
            model_filter: self.model_filter,
            contexts: self.contexts,
            witnessed_subsumers: self.witnessed_subsumers,
            open_statics: self.open_statics,
        })
        .expect("the configuration serialises")
    }
}

/// The runs a ledger's claims hold for. By default, every run of any external function with
/// any arguments and globals; the file's static functions only as its own code calls them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct View {
    /// Whole-program runs from `main` only (`--entry main`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub entry_main: bool,
    /// Static functions too, called by code outside the file (`--open-statics`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub open_statics: bool,
}

impl PruneConfig {
    /// The default configuration, for the runs `view` names.
    pub fn of_view(view: View) -> PruneConfig {
        let mut c = PruneConfig::default();
        c.encode.entry_main = view.entry_main;
        c.open_statics = view.open_statics;
        c
    }
}

impl View {
    pub fn is_default(&self) -> bool {
        *self == View::default()
    }

    pub fn of(config: &PruneConfig) -> View {
        View {
            entry_main: config.encode.entry_main,
            open_statics: config.open_statics,
        }
    }
}
