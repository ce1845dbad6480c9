//! `exclude`: a coverage report of another tool (gcovr's JSON, an lcov tracefile, an llvm-cov
//! export, a mutation report) written again with the branches (and MC/DC conditions) covprune
//! proved infeasible excluded and the mutants it proved equivalent ignored, a sidecar justifying each excluded item, and raw and cleaned coverage. A
//! proved-infeasible item the report shows covered is a soundness alarm: exit 3, nothing
//! written.

use std::path::{Path, PathBuf};

use covprune_encoders::{Criterion, Objective};
use serde::Serialize;

use super::error::{write_failed, Error, Result};
use super::project::Manifest;
use crate::exclude::{self, FileProofs, Mapping};
use crate::report::{ledger, sites::SitesRecord};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Gcovr,
    Lcov,
    LlvmCov,
    Mutation,
}

#[derive(Clone, Debug)]
pub struct ExcludeOptions {
    /// Annotated files (their ledgers and sites records beside them).
    pub files: Vec<PathBuf>,
    /// The output directory of `covprune project`: every file it annotated.
    pub project: Option<PathBuf>,
    pub format: Format,
    pub report: PathBuf,
    pub out: PathBuf,
    /// Where the justification of each excluded item goes (default: OUT with
    /// `.covprune-excluded.json`).
    pub justify: Option<PathBuf>,
    /// Write the report again even when none of its files is an annotated file's original
    /// (else that is refused: the report is of another program).
    pub allow_unmatched: bool,
}

#[derive(Debug, Serialize)]
pub struct ExcludeReport {
    pub report: String,
    pub wrote: Option<String>,
    pub justification: Option<String>,
    /// What the inputs cannot give (a report whose items no label given can describe).
    pub warnings: Vec<String>,
    #[serde(flatten)]
    pub mapping: Mapping,
}

impl ExcludeReport {
    pub fn to_text(&self) -> String {
        let m = &self.mapping;
        let mut out = String::new();
        for (i, c) in m.counted().iter().enumerate() {
            // `what: raw c/t p%, cleaned c/t p% (n why)`
            let (what, why) = match c.item {
                exclude::Item::Mutant => ("mutation score", "ignored as proved equivalent"),
                exclude::Item::Branch => ("branches", "excluded as proved infeasible"),
                exclude::Item::McdcCondition => {
                    ("MC/DC conditions", "excluded as proved infeasible")
                }
            };
            out.push_str(&format!(
                "{what}: raw {}/{} {}, cleaned {}/{} {} ({} {why})\n",
                c.raw.covered,
                c.raw.total,
                crate::console::percent(c.raw.percent()),
                c.cleaned.covered,
                c.cleaned.total,
                crate::console::percent(c.cleaned.percent()),
                c.excluded,
            ));
            // The warnings say what the first line's figures cannot show.
            if i == 0 {
                for w in &self.warnings {
                    out.push_str(&format!("warning: {w}\n"));
                }
            }
        }
        if !m.left.is_empty() {
            let proved: usize = m.left.iter().map(|l| l.proved).sum();
            out.push_str(&format!(
                "left as they were: {} holding {}:\n",
                crate::console::count(m.left.len() as u64, "line"),
                crate::console::count(proved as u64, "proved outcome")
            ));
            for l in &m.left {
                out.push_str(&format!("  {}:{}: {}\n", l.file, l.line, l.why));
            }
        }
        if !m.unmatched_files.is_empty() {
            out.push_str(&format!(
                "{} of the report's files have no annotated file here (left as they are): {}\n",
                m.unmatched_files.len(),
                m.unmatched_files.join(", ")
            ));
        }
        for a in &m.alarms {
            out.push_str(&format!(
                "SOUNDNESS ALARM: {}:{} ({}): {}\n",
                a.file,
                a.line,
                crate::console::label_ids(&a.labels),
                a.what
            ));
        }
        if let Some(w) = &self.wrote {
            out.push_str(&format!("wrote {w}\n"));
        }
        if let Some(j) = &self.justification {
            out.push_str(&format!("wrote {j}\n"));
        }
        out
    }

    /// The markdown summary's figures: a row per kind of item the report counts (raw and
    /// cleaned), the items no test covers, the excluded ones with their proofs, the alarms.
    pub fn summary(&self) -> crate::report::summary::Summary {
        use crate::report::summary::{Kind, Place, Row};
        let m = &self.mapping;
        let rows = m
            .counted()
            .iter()
            .map(|c| Row {
                criterion: match c.item {
                    exclude::Item::Mutant => "mutants",
                    exclude::Item::Branch => "branches",
                    exclude::Item::McdcCondition => "MC/DC conditions",
                }
                .to_string(),
                labels: c.raw.total,
                pruned: c.excluded,
                kept: c.cleaned.total,
                covered: c.raw.covered,
                kept_covered: c.cleaned.covered,
                raw_percent: c.raw.percent(),
                cleaned_percent: c.cleaned.percent(),
            })
            .collect();
        let kind = |item| match item {
            exclude::Item::Branch => "branch",
            exclude::Item::McdcCondition => "MC/DC condition",
            exclude::Item::Mutant => "mutant",
        };
        // Links relative to where the command runs (a repository's root), as a code host
        // opens them.
        let cwd = std::env::current_dir().unwrap_or_default();
        let shown = |file: &str| {
            Path::new(file)
                .strip_prefix(&cwd)
                .map_or_else(|_| file.to_string(), |p| p.display().to_string())
        };
        let place = |file: &str, line: usize, item, text: String| Place {
            file: shown(file),
            line: Some(line),
            criterion: kind(item).to_string(),
            text,
            label: 0,
            why: String::new(),
        };
        let mut notes = self
            .warnings
            .iter()
            .map(|w| format!("Warning: {w}."))
            .collect::<Vec<_>>();
        if !m.unmatched_files.is_empty() {
            notes.push(format!(
                "Left as they are (no annotated file): {}.",
                m.unmatched_files.join(", ")
            ));
        }
        if !m.left.is_empty() {
            notes.push(format!(
                "Lines holding proofs left as they were: {}.",
                m.left
                    .iter()
                    .map(|l| format!("{}:{} ({})", l.file, l.line, l.why))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
        crate::report::summary::Summary {
            title: format!("exclude {}", self.report),
            kind: Kind::Report,
            rows,
            uncovered: m
                .uncovered
                .iter()
                .map(|u| place(&u.file, u.line, u.item, u.key.clone()))
                .collect(),
            excluded: m
                .excluded
                .iter()
                .map(|e| Place {
                    why: format!("{} {}", crate::console::label_ids(&e.labels), e.proof),
                    ..place(&e.file, e.line, e.item, e.predicates.join(" / "))
                })
                .collect(),
            alarms: m
                .alarms
                .iter()
                .map(|a| format!("{}:{}: {}", a.file, a.line, a.what))
                .collect(),
            notes,
        }
    }
}

/// The proofs of an annotated file: its ledger and sites record, refused unless the ledger
/// was proved on the annotated file as it is and the original is still the one annotated.
fn proofs_of(annotated: &Path) -> Result<FileProofs> {
    let ledger_path = super::ledger_path_of(annotated);
    if !ledger_path.exists() {
        return Err(anyhow::anyhow!(
            "{}: no ledger (prune {} first, or name the annotated file)",
            ledger_path.display(),
            annotated.display()
        )
        .into());
    }
    let ledger = ledger::read_bound(&ledger_path, annotated, None)?;
    let sites = SitesRecord::read_beside(annotated).map_err(|e| anyhow::anyhow!(e))?;
    sites
        .check_original(annotated)
        .map_err(|e| anyhow::anyhow!(e))?;
    Ok(FileProofs::of(&ledger, &sites))
}

/// The warning when no label of the annotated files is of a kind the report's items are:
/// branches and MC/DC conditions take condition outcomes (CC), mutants take weak-mutation
/// labels (WM, WM-S).
fn receivable_warning(format: Format, proofs: &[FileProofs]) -> Option<String> {
    let (have, report, objective) = match format {
        Format::Mutation => (
            proofs.iter().map(|p| p.mutant_labels).sum::<usize>(),
            "a mutation report's mutants",
            Objective::Mutant,
        ),
        Format::Gcovr | Format::Lcov | Format::LlvmCov => (
            proofs.iter().map(|p| p.outcome_labels).sum(),
            "a branch report's branches and conditions",
            Objective::ConditionOutcome,
        ),
    };
    let criteria: Vec<&str> = Criterion::ALL
        .iter()
        .filter(|c| c.objective() == objective)
        .map(|c| c.name())
        .collect();
    let criteria = criteria.join(" or ");
    (have == 0).then(|| {
        format!(
            "the annotated files have no {criteria} labels, and only those describe {report}: nothing can be excluded (add {criteria} to annotate's --criteria and prune again)"
        )
    })
}

pub fn exclude(opts: &ExcludeOptions) -> Result<ExcludeReport> {
    let mut files = opts.files.clone();
    if let Some(dir) = &opts.project {
        let manifest = Manifest::read(dir)?;
        files.extend(
            manifest
                .files
                .iter()
                .filter(|f| f.ledger.is_some())
                .map(|f| dir.join(&f.annotated)),
        );
    }
    if files.is_empty() {
        return Err(anyhow::anyhow!(
            "no annotated file: name them, or give --project OUT of `covprune project`"
        )
        .into());
    }
    let proofs = files
        .iter()
        .map(|f| proofs_of(f))
        .collect::<Result<Vec<_>>>()?;
    let text = std::fs::read_to_string(&opts.report)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", opts.report.display()))?;
    let same = |a: &Path, b: &Path| {
        a.canonicalize()
            .ok()
            .is_some_and(|x| Some(x) == b.canonicalize().ok())
    };
    let justify = opts
        .justify
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.covprune-excluded.json", opts.out.display())));
    for out in [&opts.out, &justify] {
        if same(out, &opts.report) {
            return Err(anyhow::anyhow!(
                "{}: the output would overwrite the report it reads",
                out.display()
            )
            .into());
        }
        super::check_writable(out)?;
    }
    let (written, mapping) = match opts.format {
        Format::Gcovr => exclude::gcov::gcovr(&text, &proofs),
        Format::Lcov => exclude::gcov::lcov(&text, &proofs),
        Format::LlvmCov => exclude::llvm::export(&text, &proofs),
        Format::Mutation => exclude::mutation::elements(&text, &proofs),
    }
    .map_err(|e| anyhow::anyhow!("{}: {e}", opts.report.display()))?;
    if mapping.matched_files == 0 && !opts.allow_unmatched {
        let names = &mapping.unmatched_files;
        return Err(anyhow::anyhow!(
            "{}: none of its {} ({}) is the original of an annotated file given; it reports on another program (--allow-unmatched writes it again as it is)",
            opts.report.display(),
            crate::console::count(names.len() as u64, "file"),
            if names.is_empty() { "none".to_string() } else { names.join(", ") }
        )
        .into());
    }
    let mut report = ExcludeReport {
        report: opts.report.display().to_string(),
        wrote: None,
        justification: None,
        warnings: receivable_warning(opts.format, &proofs)
            .into_iter()
            .collect(),
        mapping,
    };
    if !report.mapping.alarms.is_empty() {
        return Ok(report);
    }
    crate::report::labels::write_atomic(&opts.out, written)
        .map_err(|e| write_failed(&opts.out, e))?;
    let sidecar = serde_json::to_string_pretty(&report.mapping).map_err(Error::internal)? + "\n";
    crate::report::labels::write_atomic(&justify, sidecar)
        .map_err(|e| write_failed(&justify, e))?;
    report.wrote = Some(opts.out.display().to_string());
    report.justification = Some(justify.display().to_string());
    Ok(report)
}

impl ExcludeReport {
    /// Alarms end the run with exit 3 (the report is not written; a markdown summary asked for
    /// is, with the alarms).
    pub fn error(&self) -> Option<Error> {
        (!self.mapping.alarms.is_empty()).then(|| {
            Error::SoundnessAlarm(format!(
                "{} where the report shows a proved-infeasible branch taken (listed above); the report is not written",
                crate::console::count(self.mapping.alarms.len() as u64, "line")
            ))
        })
    }
}
