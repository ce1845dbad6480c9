//! covprune: finds and prunes polluting test objectives (infeasible, duplicate, subsumed labels)
//! in C programs. See the README's "Architecture" section for the pipeline and its invariants.

pub mod annotate;
pub mod audit;
pub mod cache;
pub mod cfg;
pub mod cli;
pub mod console;
pub mod exclude;
pub mod frontend;
pub mod hyper;
pub mod ir;
pub mod libc;
pub mod measure;
pub mod prune;
pub mod report;
pub mod run;
pub mod smt;
pub mod vc;
pub mod witness;
