//! What the engine concludes about a label: its status, with its partners (the representative
//! of a duplicate, the subsumers of a subsumed label) or the reason nothing was proved. The one
//! spelling of a label's status: the ledger, the journal, `audit` and `measure` all use it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A label's status after a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Status {
    /// No run covers the label (proved).
    Infeasible,
    /// Covered by exactly the runs that cover the representative `of`.
    Duplicate { of: u64 },
    /// Covered whenever any of `by` is covered.
    Subsumed { by: Vec<u64> },
    /// Nothing proved, for this reason.
    Unknown { reason: Reason },
}

impl Status {
    pub fn unknown(reason: Reason) -> Status {
        Status::Unknown { reason }
    }

    /// The status's name in the ledger: `infeasible`, `duplicate`, `subsumed`, `unknown`.
    pub fn name(&self) -> &'static str {
        match self {
            Status::Infeasible => "infeasible",
            Status::Duplicate { .. } => "duplicate",
            Status::Subsumed { .. } => "subsumed",
            Status::Unknown { .. } => "unknown",
        }
    }

    /// Proved polluting (infeasible, duplicate or subsumed).
    pub fn is_polluting(&self) -> bool {
        !matches!(self, Status::Unknown { .. })
    }

    pub fn reason(&self) -> Option<&Reason> {
        match self {
            Status::Unknown { reason } => Some(reason),
            _ => None,
        }
    }
}

/// Why a question, or a label, has no proof. Written in the ledger as the text of
/// [`fmt::Display`], read back by [`std::str::FromStr`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The solver found a run that covers the label (or breaks the relation).
    Satisfiable,
    /// The question's wall-clock limit ran out (Z3 says `timeout` or `canceled`).
    Timeout,
    /// The question's deterministic resource limit (`rlimit`) ran out.
    ResourceLimit,
    /// The watchdog stopped a check that overran its time limit by far.
    Interrupted,
    /// The solver's memory bound was reached.
    Memory,
    /// The function's budget ran out before the question was asked.
    FunctionBudget,
    /// The question needed the function's memory, and the questions with memory had spent
    /// their share of the budget without proving anything.
    MemoryShare,
    /// The prover process died (a solver crash) while proving the label's function.
    SolverDied,
    /// The front end did not lower the function holding the label.
    NotAnalysed { function: String, why: String },
    /// The label is in the labels file but not in the compiled program.
    NotCompiled,
    /// Any other answer of the solver, as it gave it.
    Solver(String),
}

const MEMORY_SHARE: &str = "memory questions' share of the function budget spent";
const NOT_ANALYSED: &str = "function not analysed: ";
const NOT_COMPILED: &str =
    "not in the compiled program (inactive preprocessor branch or function not lowered)";

impl Reason {
    /// The reason of a solver's `unknown`, from the solver's own words.
    pub fn from_solver(text: &str) -> Reason {
        match text {
            "timeout" | "canceled" => Reason::Timeout,
            "max. resource limit exceeded" => Reason::ResourceLimit,
            "interrupted" => Reason::Interrupted,
            "max. memory exceeded" | "out of memory" => Reason::Memory,
            other => Reason::Solver(other.to_string()),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Satisfiable => f.write_str("satisfiable"),
            Reason::Timeout => f.write_str("timeout"),
            Reason::ResourceLimit => f.write_str("resource limit"),
            Reason::Interrupted => f.write_str("interrupted"),
            Reason::Memory => f.write_str("memory"),
            Reason::FunctionBudget => f.write_str("function budget exhausted"),
            Reason::MemoryShare => f.write_str(MEMORY_SHARE),
            Reason::SolverDied => f.write_str("the solver process died on this function"),
            Reason::NotAnalysed { function, why } => write!(f, "{NOT_ANALYSED}{function} ({why})"),
            Reason::NotCompiled => f.write_str(NOT_COMPILED),
            Reason::Solver(s) => write!(f, "solver: {s}"),
        }
    }
}

impl std::str::FromStr for Reason {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Reason, Self::Err> {
        Ok(match s {
            "satisfiable" => Reason::Satisfiable,
            "timeout" => Reason::Timeout,
            "resource limit" => Reason::ResourceLimit,
            "interrupted" => Reason::Interrupted,
            "memory" => Reason::Memory,
            "function budget exhausted" => Reason::FunctionBudget,
            MEMORY_SHARE => Reason::MemoryShare,
            "the solver process died on this function" => Reason::SolverDied,
            NOT_COMPILED => Reason::NotCompiled,
            _ => {
                if let Some(rest) = s.strip_prefix(NOT_ANALYSED) {
                    if let Some((function, why)) =
                        rest.strip_suffix(')').and_then(|r| r.split_once(" ("))
                    {
                        return Ok(Reason::NotAnalysed {
                            function: function.to_string(),
                            why: why.to_string(),
                        });
                    }
                }
                Reason::Solver(s.strip_prefix("solver: ").unwrap_or(s).to_string())
            }
        })
    }
}

impl Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Reason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Reason, D::Error> {
        let text = String::deserialize(d)?;
        Ok(text.parse().unwrap_or_else(|never| match never {}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_read_back_as_they_were_written() {
        let all = [
            Reason::Satisfiable,
            Reason::Timeout,
            Reason::ResourceLimit,
            Reason::Interrupted,
            Reason::Memory,
            Reason::FunctionBudget,
            Reason::SolverDied,
            Reason::NotAnalysed {
                function: "f".into(),
                why: "syntax error (x)".into(),
            },
            Reason::NotCompiled,
            Reason::Solver("incomplete quantifiers".into()),
        ];
        for r in all {
            let text = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<Reason>(&text).unwrap(), r, "{text}");
        }
    }

    #[test]
    fn statuses_carry_their_partners_in_the_ledger_form() {
        let s = Status::Subsumed { by: vec![4, 6] };
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"status":"subsumed","by":[4,6]}"#
        );
        let u: Status = serde_json::from_str(r#"{"status":"unknown","reason":"timeout"}"#).unwrap();
        assert_eq!(u, Status::unknown(Reason::Timeout));
        assert!(serde_json::from_str::<Status>(r#"{"status":"proved"}"#).is_err());
    }
}
