//! `measure`: builds the annotated program, runs the test suite, computes raw and cleaned
//! coverage against the ledger's claims, checks every claim against the runs (the soundness
//! alarm), and records the covered labels in the labels file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::{write_failed, Error, Result};
use crate::frontend::PreprocessOptions;
use crate::measure::{self, Alarm, BuildOptions, Coverage, RunOutcome};
use crate::report::labels::{self, LabelsFile};
use crate::report::ledger;

#[derive(Clone, Debug)]
pub struct MeasureOptions {
    pub file: PathBuf,
    /// A file with one test per line, or a directory of C test drivers.
    pub tests: PathBuf,
    /// The labels file to update (default: the file's name with `.labels`).
    pub labels: Option<PathBuf>,
    /// The ledger whose claims are checked (default: `STEM.covprune.json`, if it exists).
    pub ledger: Option<PathBuf>,
    /// Other translation units of the program.
    pub sources: Vec<PathBuf>,
    pub test_timeout_ms: u64,
    /// Write a Mutation Testing Elements report of the WM labels here.
    pub elements: Option<PathBuf>,
    pub preprocess: PreprocessOptions,
}

#[derive(Debug, Serialize)]
pub struct MeasureReport {
    pub file: String,
    pub tests: usize,
    pub crashed: Vec<String>,
    pub timed_out: Vec<String>,
    pub claims_checked: usize,
    pub coverage: Vec<CoverageRow>,
    /// Subsumed labels whose subsumers no test covers, with those subsumers, by id.
    pub pending: Vec<PendingLabel>,
    pub alarms: Vec<Alarm>,
    /// The labels file written (none under an alarm).
    #[serde(skip)]
    pub wrote: Option<String>,
    #[serde(skip)]
    table: Vec<Coverage>,
}

/// A pruned label still waiting for a test: subsumed, but neither it nor any subsumer covered.
#[derive(Debug, Serialize)]
pub struct PendingLabel {
    pub label: u64,
    pub subsumed_by: Vec<u64>,
}

#[derive(Debug, Serialize)]
pub struct CoverageRow {
    #[serde(flatten)]
    pub counts: Coverage,
    pub raw_percent: Option<f64>,
    pub cleaned_percent: Option<f64>,
    pub upper_bound_percent: Option<f64>,
}

impl MeasureReport {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{}: {} tests ({} crashed, {} timed out), {} claims of the ledger checked\n",
            self.file,
            self.tests,
            self.crashed.len(),
            self.timed_out.len(),
            self.claims_checked
        );
        out.push_str(&measure::coverage_text(&self.table));
        if !self.pending.is_empty() {
            out.push_str(&format!(
                "{} subsumed label(s) pending (kept in the cleaned ratio: no test covers them or their subsumers):\n",
                self.pending.len()
            ));
            for p in &self.pending {
                let by: Vec<String> = p.subsumed_by.iter().map(u64::to_string).collect();
                out.push_str(&format!(
                    "  label {} (subsumed by {})\n",
                    p.label,
                    by.join(", ")
                ));
            }
        }
        for name in self.crashed.iter().chain(&self.timed_out) {
            out.push_str(&format!("test {name} did not end normally\n"));
        }
        if let Some(w) = &self.wrote {
            out.push_str(&format!("wrote {w}\n"));
        }
        out
    }

    /// The alarms as lines for stderr.
    pub fn alarm_text(&self) -> String {
        self.alarms
            .iter()
            .map(|a| {
                format!(
                    "soundness alarm: label {} claimed {}: {}\n",
                    a.label, a.claim, a.what
                )
            })
            .collect()
    }

    /// The error a run with alarms ends with (exit code 3), after its report is printed.
    pub fn alarm_error(&self) -> Option<Error> {
        (!self.alarms.is_empty()).then(|| {
            Error::SoundnessAlarm(format!(
                "{} contradiction(s) between the tests and the ledger (listed above)",
                self.alarms.len()
            ))
        })
    }
}

/// The labels of the program, when there is no labels file.
fn labels_of_program(program: &crate::ir::Program) -> LabelsFile {
    let mut lf = LabelsFile::default();
    let mut seen = BTreeSet::new();
    for f in &program.functions {
        for (_, s) in f.labels() {
            if let crate::ir::StmtKind::Label { id, tag, .. } = &s.kind {
                if seen.insert(*id) {
                    lf.rows.push(labels::LabelRow::unknown(*id, tag, ""));
                }
            }
        }
    }
    lf.rows.sort_by_key(|r| r.id);
    lf
}

pub fn measure(opts: &MeasureOptions) -> Result<MeasureReport> {
    let tests = measure::read_tests(&opts.tests).map_err(anyhow::Error::from)?;
    let loaded = super::load(&opts.file, &opts.preprocess)?;
    let labels_path = opts
        .labels
        .clone()
        .unwrap_or_else(|| opts.file.with_extension("labels"));
    let labels_exist = labels_path.exists();
    let mut labels_file = if labels_exist {
        labels::read(&labels_path)?
    } else {
        labels_of_program(&loaded.program)
    };
    let ledger_path = opts.ledger.clone().or_else(|| {
        let p = super::prune::ledger_path_of(&opts.file);
        p.exists().then_some(p)
    });
    let claims = match &ledger_path {
        Some(p) => {
            let ids: Vec<u64> = labels_file.rows.iter().map(|r| r.id).collect();
            let ledger = ledger::read_bound(p, &opts.file, labels_exist.then_some(&ids[..]))?;
            measure::claims_from_ledger(&ledger)
        }
        None => Default::default(),
    };
    // The program is built in a scratch directory: paths of the flags made absolute.
    let absolute = |p: &PathBuf| p.canonicalize().unwrap_or_else(|_| p.clone());
    let mut pre = opts.preprocess.clone();
    pre.include_dirs = pre.include_dirs.iter().map(absolute).collect();
    pre.force_includes = pre.force_includes.iter().map(absolute).collect();
    let build = BuildOptions {
        cc: opts.preprocess.cc.clone(),
        flags: crate::frontend::preprocess::user_flags(&pre),
        sources: opts.sources.clone(),
    };
    let work = tempfile::tempdir().map_err(Error::internal)?;
    let tests_dir = if opts.tests.is_dir() {
        opts.tests.clone()
    } else {
        super::dir_of(&opts.tests)
    };
    let runs = measure::run_tests(
        &opts.file,
        &tests,
        &build,
        std::time::Duration::from_millis(opts.test_timeout_ms),
        work.path(),
        &tests_dir,
    )
    .map_err(anyhow::Error::from)?;
    let covered: BTreeSet<u64> = runs
        .iter()
        .flat_map(|r| r.covered.iter().copied())
        .collect();
    let label_list: Vec<(u64, String)> = labels_file
        .rows
        .iter()
        .map(|r| (r.id, r.tag.clone()))
        .collect();
    let table = measure::coverage(&label_list, &claims, &covered);
    let pending = label_list
        .iter()
        .filter_map(|(id, _)| {
            measure::pending_subsumed(*id, &claims, &covered).map(|by| PendingLabel {
                label: *id,
                subsumed_by: by.to_vec(),
            })
        })
        .collect();
    let alarms = measure::alarms(&claims, &runs);
    // The labels file, LReplay style: covered labels and the tests that covered them.
    for row in &mut labels_file.rows {
        let by: Vec<&str> = runs
            .iter()
            .filter(|r| r.covered.contains(&row.id))
            .map(|r| r.name.as_str())
            .collect();
        if !by.is_empty() {
            row.status = "covered".into();
            row.drivers = by.join(" ");
        }
    }
    let wrote = if alarms.is_empty() {
        labels::write_atomic(&labels_path, &labels_file.to_text())
            .map_err(|e| write_failed(&labels_path, e))?;
        Some(labels_path.display().to_string())
    } else {
        None
    };
    if let Some(path) = &opts.elements {
        let rows: Vec<(u64, String, String)> = labels_file
            .rows
            .iter()
            .map(|r| (r.id, r.tag.clone(), r.origin_loc.clone()))
            .collect();
        let sources = original_sources(&opts.file, &rows);
        let report = measure::elements_report(&rows, &claims, &runs, &sources);
        let text = serde_json::to_string_pretty(&report).map_err(Error::internal)? + "\n";
        labels::write_atomic(path, &text).map_err(|e| write_failed(path, e))?;
    }
    let names = |pred: &dyn Fn(&RunOutcome) -> bool| -> Vec<String> {
        runs.iter()
            .filter(|r| pred(&r.outcome))
            .map(|r| r.name.clone())
            .collect()
    };
    Ok(MeasureReport {
        file: super::file_name(&opts.file),
        tests: runs.len(),
        crashed: names(&|o| matches!(o, RunOutcome::Crashed(_))),
        timed_out: names(&|o| *o == RunOutcome::TimedOut),
        claims_checked: claims.len(),
        coverage: table
            .iter()
            .map(|c| CoverageRow {
                counts: c.clone(),
                raw_percent: c.raw(),
                cleaned_percent: c.cleaned(),
                upper_bound_percent: c.upper_bound(),
            })
            .collect(),
        pending,
        alarms,
        wrote,
        table,
    })
}

/// The original sources the labels file names (beside the annotated file or one level up).
fn original_sources(file: &Path, rows: &[(u64, String, String)]) -> BTreeMap<String, String> {
    let mut sources = BTreeMap::new();
    let dir = file.parent().unwrap_or(Path::new("."));
    for (_, _, origin) in rows {
        let name = origin.rsplit_once(':').map_or(origin.as_str(), |(f, _)| f);
        if !name.is_empty() && !sources.contains_key(name) {
            for cand in [dir.join(name), dir.join("..").join(name)] {
                if let Ok(t) = std::fs::read_to_string(&cand) {
                    sources.insert(name.to_string(), t);
                    break;
                }
            }
        }
    }
    sources
}
