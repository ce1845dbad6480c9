//! How a command fails, and the process exit code each failure gives (documented in the
//! README): the CLI maps an [`Error`] to an [`Exit`] and nothing else.

/// The exit codes of `covprune`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 0: the command did what it was asked.
    Success,
    /// 1: findings, where a command promises it (`audit --fail-on-findings`).
    Findings,
    /// 2: bad input or usage (missing file, C that does not parse, a malformed or stale labels
    /// file or ledger, an unknown criterion or option value).
    BadInput,
    /// 3: soundness alarm: a test contradicts a claim of the ledger, or a labels file marks
    /// covered a label proved infeasible.
    SoundnessAlarm,
    /// 4: the annotation changed the program's behaviour (`measure`: a test on which the
    /// annotated program and the original differ), so its coverage is not the original's.
    BehaviourChanged,
    /// 70: an internal error (a bug, or a prover worker that could not be run).
    Internal,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Findings => 1,
            Exit::BadInput => 2,
            Exit::SoundnessAlarm => 3,
            Exit::BehaviourChanged => 4,
            Exit::Internal => 70,
        }
    }

    /// The exit of a code another covprune process (a pool worker) ended with.
    pub fn from_code(code: u8) -> Exit {
        match code {
            0 => Exit::Success,
            1 => Exit::Findings,
            2 => Exit::BadInput,
            3 => Exit::SoundnessAlarm,
            4 => Exit::BehaviourChanged,
            _ => Exit::Internal,
        }
    }
}

/// A failed command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0:#}")]
    BadInput(anyhow::Error),
    #[error("soundness alarm: {0}")]
    SoundnessAlarm(String),
    #[error("{0}")]
    BehaviourChanged(String),
    #[error("internal error: {0:#}")]
    Internal(anyhow::Error),
    /// A pool worker stopped with this exit and already said why.
    #[error("a prover worker stopped")]
    Worker(Exit),
}

impl Error {
    pub fn exit(&self) -> Exit {
        match self {
            Error::BadInput(_) => Exit::BadInput,
            Error::SoundnessAlarm(_) => Exit::SoundnessAlarm,
            Error::BehaviourChanged(_) => Exit::BehaviourChanged,
            Error::Internal(_) => Exit::Internal,
            Error::Worker(e) => *e,
        }
    }

    /// Whether the message is still to be printed (a worker printed its own).
    pub fn is_reported(&self) -> bool {
        matches!(self, Error::Worker(_))
    }

    pub fn internal(e: impl Into<anyhow::Error>) -> Error {
        Error::Internal(e.into())
    }
}

/// Errors of reading and checking input are bad input; the few internal failures are made
/// with [`Error::internal`].
impl From<anyhow::Error> for Error {
    fn from(e: anyhow::Error) -> Error {
        Error::BadInput(e)
    }
}

macro_rules! bad_input_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Error {
                Error::BadInput(e.into())
            }
        }
    )*};
}

bad_input_from!(
    crate::report::ledger::LedgerError,
    crate::prune::journal::JournalError,
    crate::frontend::FrontendError,
    crate::report::labels::LabelsError,
    crate::cache::CacheError
);

/// Writing a result failed (a full disk, a directory that cannot be written).
pub fn write_failed(path: &std::path::Path, e: impl std::fmt::Display) -> Error {
    Error::BadInput(anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

pub type Result<T> = std::result::Result<T, Error>;
