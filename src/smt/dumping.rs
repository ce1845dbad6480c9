//! A backend that writes every question it is asked as an SMT-LIB 2 file, with the answer, to
//! replay with any solver.

use std::path::PathBuf;

use super::{smtlib, Backend, Query, Verdict};

/// A backend that also writes every question it is asked, with the answer, as an SMT-LIB 2
/// file `DIR/PREFIX.NNNNN.smt2`.
pub struct Dumping<B> {
    inner: B,
    dir: PathBuf,
    prefix: String,
    asked: usize,
}

impl<B: Backend> Dumping<B> {
    pub fn new(inner: B, dir: PathBuf, prefix: &str) -> Dumping<B> {
        let prefix = prefix
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        Dumping {
            inner,
            dir,
            prefix,
            asked: 0,
        }
    }
}

impl<B: Backend> Backend for Dumping<B> {
    fn check(&mut self, q: &Query) -> Verdict {
        let verdict = self.inner.check(q);
        self.asked += 1;
        let answer = match &verdict {
            Verdict::Proved => "unsat".to_string(),
            Verdict::Refuted(_) => "sat".to_string(),
            Verdict::Unknown(r) => format!("unknown ({r})"),
        };
        let path = self
            .dir
            .join(format!("{}.{:05}.smt2", self.prefix, self.asked));
        // A dump that cannot be written costs the dump, not the answer.
        let _ = std::fs::write(path, smtlib::query(q, &answer));
        verdict
    }

    fn work(&self) -> u64 {
        self.inner.work()
    }

    fn reused_models(&self) -> u64 {
        self.inner.reused_models()
    }

    fn repeated_questions(&self) -> u64 {
        self.inner.repeated_questions()
    }

    fn set_model_reuse(&mut self, on: bool) {
        self.inner.set_model_reuse(on);
    }

    fn profile(&self) -> super::Profile {
        self.inner.profile()
    }
}
