//! Output records (serde) and their text renderings; the only module with serde derives.

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
