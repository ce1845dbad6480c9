//! Output records (serde) and their text renderings; the only module with serde derives.

pub mod acsl;
pub mod build;
pub mod labels;
pub mod ledger;

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

/// The `prune` summary: the paper's Figure 6 row, overall and per criterion tag.
#[derive(Debug, Default, Serialize)]
pub struct PruneSummary {
    pub labels: usize,
    pub infeasible: usize,
    pub duplicate_step2: usize,
    pub duplicate_step3: usize,
    pub subsumed: usize,
    pub unknown: usize,
    /// Every label with a claim (infeasible, duplicate or subsumed by any label).
    pub pruned: usize,
    /// Of those, pruned within their own criterion (see [`TagRow::pruned_within`]).
    pub pruned_within: usize,
    pub seconds_step1: f64,
    pub seconds_step2: f64,
    pub seconds_step3: f64,
    /// Solver questions asked in steps 1, 2 and 3.
    pub queries: [u64; 3],
    pub step3_refuted_by_models: u64,
    pub step3_by_transitivity: u64,
    pub total_ms: u128,
    pub per_tag: BTreeMap<String, TagRow>,
    /// Functions whose budget ran out, with the labels each left unknown for it, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub over_budget: Vec<OverBudget>,
}

/// A function whose budget (`--function-budget-s`) ran out before its labels were decided.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct OverBudget {
    pub function: String,
    /// Its labels left unknown with the reason "function budget exhausted".
    pub labels: usize,
}

#[derive(Debug, Default, Serialize)]
pub struct TagRow {
    pub labels: usize,
    pub infeasible: usize,
    pub duplicate_step2: usize,
    pub duplicate_step3: usize,
    pub subsumed: usize,
    /// Pruned within the criterion: infeasible, or duplicate or subsumed through labels of
    /// the same criterion (what `measure` calls polluting).
    pub pruned_within: usize,
    /// Duplicate or subsumed only through labels of other criteria: redundant when those are
    /// kept too, still objectives of this criterion alone.
    pub pruned_across: usize,
}

impl TagRow {
    fn pruned(&self) -> usize {
        self.infeasible + self.duplicate_step2 + self.duplicate_step3 + self.subsumed
    }

    fn add(&mut self, v: &crate::prune::LabelVerdict) {
        use crate::prune::Status;
        self.labels += 1;
        match (&v.status, v.step) {
            (Status::Infeasible, _) => self.infeasible += 1,
            (Status::Duplicate { .. }, Some(2)) => self.duplicate_step2 += 1,
            (Status::Duplicate { .. }, _) => self.duplicate_step3 += 1,
            (Status::Subsumed { .. }, _) => self.subsumed += 1,
            (Status::Unknown { .. }, _) => {}
        }
    }
}

impl PruneSummary {
    pub fn new(
        verdicts: &[crate::prune::LabelVerdict],
        stats: &crate::prune::RunStats,
        total_ms: u128,
    ) -> PruneSummary {
        let mut all = TagRow::default();
        let mut per_tag: BTreeMap<String, TagRow> = BTreeMap::new();
        let labels: Vec<(u64, String)> = verdicts.iter().map(|v| (v.id, v.tag.clone())).collect();
        let claims = crate::measure::claims_of_statuses(verdicts.iter().map(|v| (v.id, &v.status)));
        let within = crate::measure::polluting_within_criteria(&labels, &claims);
        let mut over_budget: BTreeMap<&str, usize> = BTreeMap::new();
        for v in verdicts {
            if matches!(
                v.status.reason(),
                Some(crate::prune::Reason::FunctionBudget)
            ) {
                *over_budget.entry(v.function.as_str()).or_default() += 1;
            }
            all.add(v);
            let tag = v.tag.split(' ').next().unwrap_or("").to_string();
            let row = per_tag.entry(tag).or_default();
            row.add(v);
            if within.contains(&v.id) {
                row.pruned_within += 1;
                all.pruned_within += 1;
            } else if claims.contains_key(&v.id) {
                row.pruned_across += 1;
                all.pruned_across += 1;
            }
        }
        PruneSummary {
            labels: all.labels,
            infeasible: all.infeasible,
            duplicate_step2: all.duplicate_step2,
            duplicate_step3: all.duplicate_step3,
            subsumed: all.subsumed,
            unknown: all.labels - all.pruned(),
            pruned: all.pruned(),
            pruned_within: all.pruned_within,
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
            per_tag,
            over_budget: over_budget
                .into_iter()
                .map(|(function, labels)| OverBudget {
                    function: function.to_string(),
                    labels,
                })
                .collect(),
        }
    }

    /// The summary of several runs (the files of a project): every count and time summed.
    pub fn total<'a>(runs: impl IntoIterator<Item = &'a PruneSummary>) -> PruneSummary {
        let mut t = PruneSummary::default();
        for r in runs {
            t.labels += r.labels;
            t.infeasible += r.infeasible;
            t.duplicate_step2 += r.duplicate_step2;
            t.duplicate_step3 += r.duplicate_step3;
            t.subsumed += r.subsumed;
            t.unknown += r.unknown;
            t.pruned += r.pruned;
            t.pruned_within += r.pruned_within;
            t.seconds_step1 += r.seconds_step1;
            t.seconds_step2 += r.seconds_step2;
            t.seconds_step3 += r.seconds_step3;
            for (a, b) in t.queries.iter_mut().zip(r.queries) {
                *a += b;
            }
            t.step3_refuted_by_models += r.step3_refuted_by_models;
            t.step3_by_transitivity += r.step3_by_transitivity;
            t.total_ms += r.total_ms;
            for (tag, row) in &r.per_tag {
                let sum = t.per_tag.entry(tag.clone()).or_default();
                sum.labels += row.labels;
                sum.infeasible += row.infeasible;
                sum.duplicate_step2 += row.duplicate_step2;
                sum.duplicate_step3 += row.duplicate_step3;
                sum.subsumed += row.subsumed;
                sum.pruned_within += row.pruned_within;
                sum.pruned_across += row.pruned_across;
            }
        }
        t
    }

    /// One row per criterion, as in the paper's Figure 6 (step times are summed over workers).
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{:<9} {:>7} {:>10} {:>8} {:>8} {:>8} {:>12} {:>8}\n",
            "criterion",
            "labels",
            "infeasible",
            "dup(s2)",
            "dup(s3)",
            "subsumed",
            "pruned",
            "+across"
        );
        let row = |name: &str, r: &TagRow| {
            let pct = if r.labels == 0 {
                0.0
            } else {
                100.0 * r.pruned_within as f64 / r.labels as f64
            };
            format!(
                "{:<9} {:>7} {:>10} {:>8} {:>8} {:>8} {:>6} {:>4.0}% {:>8}\n",
                name,
                r.labels,
                r.infeasible,
                r.duplicate_step2,
                r.duplicate_step3,
                r.subsumed,
                r.pruned_within,
                pct,
                r.pruned_across
            )
        };
        for (tag, r) in &self.per_tag {
            out.push_str(&row(tag, r));
        }
        if self.per_tag.len() > 1 {
            let all = TagRow {
                labels: self.labels,
                infeasible: self.infeasible,
                duplicate_step2: self.duplicate_step2,
                duplicate_step3: self.duplicate_step3,
                subsumed: self.subsumed,
                // Across all criteria, every relation is within the set.
                pruned_within: self.pruned,
                pruned_across: 0,
            };
            out.push_str(&row("all", &all));
        }
        if self.pruned > self.pruned_within {
            out.push_str(
                "pruned: polluting within the label's own criterion (what `measure` counts); +across: duplicate or subsumed only through labels of other criteria\n",
            );
        }
        out.push_str(&format!(
            "time: step 1 {:.1} s, step 2 {:.1} s, step 3 {:.1} s; {} ms wall\n",
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
