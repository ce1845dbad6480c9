//! Output records (serde) and their text renderings; the only module with serde derives.

pub mod acsl;
pub mod build;
pub mod counts;
pub mod labels;
pub mod ledger;
pub mod sites;
pub mod summary;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::frontend::FrontendStats;
use crate::ir::{DiagnosticKind, Program};

/// What `covprune parse --json` prints.
#[derive(Debug, Serialize)]
pub struct ParseReport {
    pub file: String,
    /// Function definitions found (lowered + skipped).
    pub functions: usize,
    pub lowered: usize,
    pub skipped: Vec<SkippedDto>,
    /// Fallbacks (unmodelled constructs) by kind.
    pub fallbacks: BTreeMap<String, usize>,
    /// Syntax errors: ERROR and MISSING nodes of the parse tree.
    pub errors: usize,
    pub globals: usize,
    pub externals: usize,
    pub lines: usize,
    pub time_ms: TimeDto,
}

#[derive(Debug, Serialize)]
pub struct SkippedDto {
    pub name: String,
    pub loc: String,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct TimeDto {
    pub preprocess: u128,
    pub parse: u128,
    pub lower: u128,
    pub total: u128,
}

impl ParseReport {
    pub fn new(file: &str, program: &Program, stats: &FrontendStats) -> ParseReport {
        let mut fallbacks: BTreeMap<String, usize> = BTreeMap::new();
        for d in &program.diagnostics {
            if let DiagnosticKind::Fallback(k) = d.kind {
                *fallbacks.entry(k.name().to_string()).or_default() += 1;
            }
        }
        let mut skipped: Vec<SkippedDto> = program
            .skipped
            .iter()
            .map(|s| SkippedDto {
                name: s.name.clone(),
                loc: program.fmt_loc(s.loc),
                reason: s.reason.clone(),
            })
            .collect();
        skipped.sort_by(|a, b| (&a.loc, &a.name).cmp(&(&b.loc, &b.name)));
        ParseReport {
            file: file.to_string(),
            functions: program.functions.len() + program.skipped.len(),
            lowered: program.functions.len(),
            skipped,
            fallbacks,
            errors: stats.parse_errors,
            globals: program.globals.len(),
            externals: program.externals.len(),
            lines: stats.lines,
            time_ms: TimeDto {
                preprocess: stats.preprocess_ms,
                parse: stats.parse_ms,
                lower: stats.lower_ms,
                total: stats.preprocess_ms + stats.parse_ms + stats.lower_ms,
            },
        }
    }

    /// A human-readable summary, stable for tests when `with_times` is false.
    pub fn to_text(&self, with_times: bool) -> String {
        let mut out = String::new();
        let pct = if self.functions == 0 {
            100.0
        } else {
            100.0 * self.lowered as f64 / self.functions as f64
        };
        out.push_str(&format!("file:        {}\n", self.file));
        out.push_str(&format!(
            "functions:   {} ({} lowered, {:.1}%)\n",
            self.functions, self.lowered, pct
        ));
        out.push_str(&format!("globals:     {}\n", self.globals));
        out.push_str(&format!("externals:   {}\n", self.externals));
        out.push_str(&format!("parse errors: {}\n", self.errors));
        let total: usize = self.fallbacks.values().sum();
        out.push_str(&format!("fallbacks:   {total}\n"));
        for (k, n) in &self.fallbacks {
            out.push_str(&format!("  {k:<22} {n}\n"));
        }
        if !self.skipped.is_empty() {
            out.push_str("skipped functions:\n");
            for s in &self.skipped {
                out.push_str(&format!("  {} ({}): {}\n", s.name, s.loc, s.reason));
            }
        }
        if with_times {
            out.push_str(&format!(
                "time:        {} ms (preprocess {}, parse {}, lower {})\n",
                self.time_ms.total, self.time_ms.preprocess, self.time_ms.parse, self.time_ms.lower
            ));
        }
        out
    }
}

/// One line per diagnostic, sorted by location: `file:line:col: kind: message [in function]`.
pub fn diagnostics_text(program: &Program) -> String {
    let mut diags: Vec<&crate::ir::Diagnostic> = program.diagnostics.iter().collect();
    diags.sort_by(|a, b| (a.loc, &a.message).cmp(&(b.loc, &b.message)));
    let mut out = String::new();
    for d in diags {
        let kind = match d.kind {
            DiagnosticKind::Fallback(k) => format!("fallback {}", k.name()),
            DiagnosticKind::ParseError => "syntax error".to_string(),
            DiagnosticKind::SkippedFunction => "skipped".to_string(),
        };
        let func = d
            .function
            .as_ref()
            .map(|f| format!(" [in {f}]"))
            .unwrap_or_default();
        out.push_str(&format!(
            "{}: {kind}: {}{func}\n",
            program.fmt_loc(d.loc),
            d.message
        ));
    }
    out
}

/// The `prune` summary: the paper's Figure 6 row, overall and per criterion (the counts of
/// [`counts`]).
#[derive(Clone, Debug, Default, Serialize)]
pub struct PruneSummary {
    /// Over all criteria together: every relation counts.
    pub labels: usize,
    pub infeasible: usize,
    pub duplicate_step2: usize,
    pub duplicate_step3: usize,
    pub subsumed: usize,
    pub unknown: usize,
    /// infeasible + duplicate_step2 + duplicate_step3 + subsumed.
    pub pruned: usize,
    pub seconds_step1: f64,
    pub seconds_step2: f64,
    pub seconds_step3: f64,
    /// Solver questions asked in steps 1, 2 and 3.
    pub queries: [u64; 3],
    pub step3_refuted_by_models: u64,
    pub step3_by_transitivity: u64,
    pub total_ms: u128,
    /// One row per criterion, then `all` when there are several.
    pub criteria: Vec<counts::Counts>,
    /// Functions whose budget ran out, with the labels each left unknown for it, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub over_budget: Vec<OverBudget>,
    /// Functions the prover could not analyse, with why: their labels stay unknown.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedFunction>,
}

/// A function whose budget of time or memory (`--function-budget-s`, the questions' time
/// limit, the solver's memory bound) left labels undecided.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct OverBudget {
    pub function: String,
    /// Its labels left unknown for the budget.
    pub labels: usize,
    /// Those labels per reason (`function budget exhausted`, `timeout`, ...).
    pub reasons: BTreeMap<String, usize>,
}

/// A function not analysed (a syntax error, a construct the front end does not lower).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct SkippedFunction {
    pub function: String,
    pub why: String,
    /// Its labels, all left unknown.
    pub labels: usize,
}

impl PruneSummary {
    pub fn new(
        verdicts: &[crate::prune::LabelVerdict],
        stats: &crate::prune::RunStats,
        total_ms: u128,
    ) -> PruneSummary {
        let facts: Vec<counts::Fact> = verdicts
            .iter()
            .map(|v| counts::Fact::of_status(v.id, &v.tag, &v.status, v.step))
            .collect();
        let criteria = counts::per_criterion(&facts);
        let all = counts::together(&facts);
        let (skipped, over_budget) =
            ledger::undecided_functions(verdicts.iter().map(|v| (v.function.as_str(), &v.status)));
        PruneSummary {
            labels: all.labels,
            infeasible: all.infeasible,
            duplicate_step2: all.duplicate_step2,
            duplicate_step3: all.duplicate_step3,
            subsumed: all.subsumed,
            unknown: all.unknown,
            pruned: all.pruned,
            seconds_step1: stats.step1.ms as f64 / 1000.0,
            seconds_step2: stats.step2.ms as f64 / 1000.0,
            seconds_step3: stats.step3.ms as f64 / 1000.0,
            queries: [
                stats.step1.queries,
                stats.step2.queries,
                stats.step3.queries,
            ],
            step3_refuted_by_models: stats.refuted_by_models,
            step3_by_transitivity: stats.by_transitivity,
            total_ms,
            criteria,
            over_budget,
            skipped,
        }
    }

    /// The summary of several runs (the files of a project): every count and time summed.
    pub fn total<'a>(runs: impl IntoIterator<Item = &'a PruneSummary>) -> PruneSummary {
        let mut t = PruneSummary::default();
        let mut rows: BTreeMap<String, counts::Counts> = BTreeMap::new();
        let mut all = counts::Counts::named("all");
        for r in runs {
            t.labels += r.labels;
            t.infeasible += r.infeasible;
            t.duplicate_step2 += r.duplicate_step2;
            t.duplicate_step3 += r.duplicate_step3;
            t.subsumed += r.subsumed;
            t.unknown += r.unknown;
            t.pruned += r.pruned;
            t.seconds_step1 += r.seconds_step1;
            t.seconds_step2 += r.seconds_step2;
            t.seconds_step3 += r.seconds_step3;
            for (a, b) in t.queries.iter_mut().zip(r.queries) {
                *a += b;
            }
            t.step3_refuted_by_models += r.step3_refuted_by_models;
            t.step3_by_transitivity += r.step3_by_transitivity;
            t.total_ms += r.total_ms;
            for row in r.criteria.iter().filter(|c| c.name != "all") {
                rows.entry(row.name.clone())
                    .or_insert_with(|| counts::Counts::named(&row.name))
                    .sum(row);
            }
            all.sum(&counts::Counts {
                labels: r.labels,
                infeasible: r.infeasible,
                duplicate_step2: r.duplicate_step2,
                duplicate_step3: r.duplicate_step3,
                subsumed: r.subsumed,
                unknown: r.unknown,
                pruned: r.pruned,
                ..counts::Counts::named("all")
            });
            t.over_budget.extend(r.over_budget.iter().cloned());
            t.skipped.extend(r.skipped.iter().cloned());
        }
        let several = rows.len() > 1;
        t.criteria = rows.into_values().collect();
        if several {
            t.criteria.push(all);
        }
        t
    }

    /// One row per criterion, as in the paper's Figure 6 (step times are summed over workers),
    /// then the functions left undecided.
    pub fn to_text(&self) -> String {
        let mut out = counts::counts_text(&self.criteria, "criterion", 9);
        if self.criteria.iter().any(|c| c.across > 0) {
            out.push_str("pruned: infeasible, duplicate or subsumed within the criterion; +across: redundant only through labels of other criteria (kept)\n");
        }
        out.push_str(&ledger::undecided_text(&self.skipped, &self.over_budget));
        out.push_str(&format!(
            "cpu time (summed over workers): step 1 {:.1} s, step 2 {:.1} s, step 3 {:.1} s; wall clock {} ms\n",
            self.seconds_step1, self.seconds_step2, self.seconds_step3, self.total_ms
        ));
        out.push_str(&format!(
            "queries: {} / {} / {}; step 3 pairs ruled out by models: {}, by transitivity: {}\n",
            self.queries[0],
            self.queries[1],
            self.queries[2],
            self.step3_refuted_by_models,
            self.step3_by_transitivity
        ));
        out
    }
}
