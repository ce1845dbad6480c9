//! `measure`: builds the annotated program, runs the test suite, computes raw and cleaned
//! coverage against the ledger's claims, checks every claim against the runs (the soundness
//! alarm), and records the covered labels in the labels file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::{write_failed, Error, Result};
use crate::frontend::PreprocessOptions;
use crate::measure::{self, Alarm, BuildOptions, Coverage, Difference, LineForm, RunOutcome};
use crate::report::labels::{self, LabelsFile};
use crate::report::ledger;

mod inputs;
mod report;

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
    /// How the lines of a tests file are taken (words, or `/bin/sh` lines).
    pub form: LineForm,
    /// Where tests run and their paths resolve (default: the tests file's directory).
    pub cwd: Option<PathBuf>,
    /// Link flags (`-lm`, `-L DIR`, ...), after the objects.
    pub link: Vec<String>,
    pub check_behaviour: BehaviourCheck,
    /// The original program (default: the one the build record beside the file names).
    pub original: Option<PathBuf>,
    /// Cleaned coverage thresholds, in %: per criterion, or for all labels (`None`).
    pub fail_under: Vec<(Option<String>, f64)>,
    /// Draw a progress bar of the tests run (on a terminal only).
    pub progress: bool,
}

impl MeasureOptions {
    /// The default of `test_timeout_ms`.
    pub const TEST_TIMEOUT_MS: u64 = 10_000;
}

/// Reads `--fail-under`: `PCT` (all labels) or `CRIT=PCT`, comma-separated.
pub fn parse_fail_under(spec: &str) -> Result<Vec<(Option<String>, f64)>> {
    spec.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|part| {
            let (crit, pct) = match part.split_once('=') {
                Some((c, p)) => (Some(c.trim().to_string()), p.trim()),
                None => (None, part),
            };
            let v: f64 = pct
                .trim_end_matches('%')
                .parse()
                .ok()
                .filter(|v: &f64| (0.0..=100.0).contains(v))
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "--fail-under: `{part}` is not a percentage from 0 to 100 (PCT or CRIT=PCT)"
                    )
                })?;
            Ok((crit, v))
        })
        .collect()
}

/// Whether the original program is run beside the annotated one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BehaviourCheck {
    /// When the original is known and the suite has at most [`AUTO_CHECK_MAX_TESTS`] tests.
    #[default]
    Auto,
    On,
    Off,
}

/// At most this many uncovered objectives are listed in the text report.
const UNCOVERED_SHOWN: usize = 50;

/// Above this many tests, the behaviour check (which doubles the runs) is asked for, not made.
pub const AUTO_CHECK_MAX_TESTS: usize = 10_000;

#[derive(Debug, Serialize)]
pub struct MeasureReport {
    pub file: String,
    /// Labels in code the annotation's configuration compiles out (not objectives).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compiled_out: Vec<crate::report::sites::CompiledOutLabels>,
    pub tests: usize,
    /// Lines of the tests file that cannot run (as `sh` could not run them): not counted.
    pub not_run: Vec<NotRun>,
    pub crashed: Vec<String>,
    pub timed_out: Vec<String>,
    pub claims_checked: usize,
    /// No ledger was read (the file was not pruned): nothing is pruned, cleaned is raw.
    pub unpruned: bool,
    /// The time limit of each test, in milliseconds.
    pub test_timeout_ms: u64,
    pub coverage: Vec<CoverageRow>,
    /// Per criterion, what the suite leaves uncovered: proved infeasible, shown feasible by a
    /// `witness` test, or neither.
    pub settled: Vec<SettledRow>,
    /// Hyperlabel coverage per criterion (when a `.hyperlabels` file is beside the program).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hyperlabels: Vec<HyperRowReport>,
    /// Subsumed labels whose subsumers no test covers, with those subsumers, by id.
    pub pending: Vec<PendingLabel>,
    /// The objectives left (kept labels) that no test covers, by id.
    pub uncovered: Vec<Uncovered>,
    /// The `--fail-under` thresholds the cleaned coverage is below.
    pub below_threshold: Vec<BelowThreshold>,
    /// Functions the ledger's run did not analyse: their labels stay unknown.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<crate::report::SkippedFunction>,
    /// Functions whose budget ran out in the ledger's run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub over_budget: Vec<crate::report::OverBudget>,
    pub alarms: Vec<Alarm>,
    /// The annotated program run beside the original, when it was.
    pub behaviour: Option<BehaviourReport>,
    /// Why the behaviour was not checked, when it was not.
    pub behaviour_unchecked: Option<String>,
    /// The labels file written (none under an alarm or a behaviour difference).
    #[serde(skip)]
    pub wrote: Option<String>,
    #[serde(skip)]
    table: Vec<Coverage>,
}

#[derive(Debug, Serialize)]
pub struct HyperRowReport {
    #[serde(flatten)]
    pub counts: crate::hyper::report::HyperRow,
    pub raw_percent: Option<f64>,
    pub cleaned_percent: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct NotRun {
    pub test: String,
    pub why: String,
}

/// The annotated program beside the original on the same tests.
#[derive(Debug, Serialize)]
pub struct BehaviourReport {
    pub original: String,
    pub compared: usize,
    /// Tests whose behaviour the program itself leaves undefined: the original's exit status
    /// differs between its `-O0` and `-O2` builds (only the output is compared), or an output
    /// differs between two runs of the same program (not compared).
    pub undefined: usize,
    pub differences: Vec<DifferenceRow>,
}

#[derive(Debug, Serialize)]
pub struct DifferenceRow {
    #[serde(flatten)]
    pub difference: Difference,
    /// Where the label it crashed in is: the annotated file's line, and the original's.
    pub label_line: Option<String>,
}

/// A kept label no test covers: what is left to test.
#[derive(Debug, Serialize)]
pub struct Uncovered {
    pub label: u64,
    pub tag: String,
    /// `FILE:LINE` of the original program (from the labels file), when known.
    pub origin: String,
    /// `FILE:LINE:COLUMN` of the label in the annotated file.
    pub at: String,
    /// The predicate as the source writes it (conditions the annotation evaluates into
    /// temporaries written out).
    pub source: String,
    /// The predicate as the annotated file writes it.
    pub predicate: String,
}

/// A criterion whose cleaned coverage is below its `--fail-under` threshold.
#[derive(Debug, Serialize)]
pub struct BelowThreshold {
    pub criterion: String,
    pub cleaned_percent: f64,
    pub threshold_percent: f64,
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

impl CoverageRow {
    pub fn of(c: &Coverage) -> CoverageRow {
        CoverageRow {
            counts: c.clone(),
            raw_percent: c.raw(),
            cleaned_percent: c.cleaned(),
            upper_bound_percent: c.upper_bound(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct SettledRow {
    #[serde(flatten)]
    pub counts: measure::Settled,
    pub settled_percent: Option<f64>,
}

impl SettledRow {
    pub fn of(s: &measure::Settled) -> SettledRow {
        SettledRow {
            counts: s.clone(),
            settled_percent: s.percent(),
        }
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

/// How the program under test is built, in a scratch directory: the file's flags and the
/// libraries its compilation database and the options link.
fn build_options(opts: &MeasureOptions) -> Result<BuildOptions> {
    let (flags, mut link) = super::build_flags(&opts.preprocess, &opts.file)?;
    link.extend(opts.link.iter().cloned());
    Ok(BuildOptions {
        cc: opts.preprocess.cc.clone(),
        flags,
        sources: opts.sources.clone(),
        link,
    })
}

/// How the annotated program behaved beside the original `original`, each difference with
/// the line of the label it follows.
fn behaviour_report(
    original: &Path,
    suite: &measure::SuiteRuns,
    program: &crate::ir::Program,
    labels_file: &labels::LabelsFile,
    file: &Path,
) -> BehaviourReport {
    let lines = label_lines(program, labels_file, file);
    BehaviourReport {
        original: shown_path(original),
        compared: suite.runs.len(),
        undefined: suite.undefined.len(),
        differences: suite
            .differences
            .iter()
            .map(|d| DifferenceRow {
                label_line: d.label.and_then(|l| lines.get(&l).cloned()),
                difference: d.clone(),
            })
            .collect(),
    }
}

pub fn measure(opts: &MeasureOptions) -> Result<MeasureReport> {
    let inputs::Suite {
        tests,
        not_run,
        cwd,
    } = inputs::read_suite(opts)?;
    let loaded = super::load(&opts.file, &opts.preprocess)?;
    let inputs::Labelled {
        path: labels_path,
        file: mut labels_file,
        hyper_path,
        hyperlabels,
        ledger_path,
        claims,
        shown,
        hyper_claims,
        skipped,
        over_budget,
    } = inputs::read_labels(opts, &loaded.program)?;
    let original = inputs::original_of(opts)?;
    let (compare_with, behaviour_unchecked) = inputs::behaviour_check(opts, &tests, &original)?;
    let build = build_options(opts)?;
    let work = tempfile::tempdir().map_err(Error::internal)?;
    let bar =
        crate::console::Progress::counting(tests.len() as u64, "testing", "tests", opts.progress);
    let suite = measure::run_tests(
        &opts.file,
        &tests,
        &build,
        &measure::SuitePlace {
            work: work.path(),
            cwd: &cwd,
            timeout: std::time::Duration::from_millis(opts.test_timeout_ms),
            progress: &bar,
        },
        compare_with.as_deref(),
    )
    .map_err(anyhow::Error::from)?;
    let behaviour = compare_with
        .as_ref()
        .map(|o| behaviour_report(o, &suite, &loaded.program, &labels_file, &opts.file));
    let runs = suite.runs;
    let changed = behaviour
        .as_ref()
        .is_some_and(|b| !b.differences.is_empty());
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
    let settled = measure::settled(&label_list, &claims, &covered, &shown);
    let pending = pending_labels(&label_list, &claims, &covered);
    let uncovered =
        uncovered_objectives(&loaded.program, &labels_file, &claims, &covered, &opts.file);
    let below_threshold = below(&table, &opts.fail_under)?;
    let mut alarms = measure::alarms(&claims, &runs);
    let tags: BTreeMap<u64, String> = label_list.iter().cloned().collect();
    let hyper = crate::hyper::report::measure(
        &hyperlabels,
        &tags,
        &hyper_claims,
        &crate::hyper::report::run_covers(&runs),
    );
    for (id, claim, what) in &hyper.alarms {
        alarms.push(measure::Alarm {
            label: *id,
            claim: format!("hyperlabel {claim}"),
            test: String::new(),
            what: format!("hyperlabel {id}: {what}"),
        });
    }
    mark_covered(&mut labels_file, &runs);
    let wrote = if alarms.is_empty() && !changed {
        labels::write_atomic(&labels_path, labels_file.to_text())
            .map_err(|e| write_failed(&labels_path, e))?;
        if !hyperlabels.is_empty() {
            let text = crate::hyper::report::with_statuses(&hyperlabels, &hyper.statuses);
            labels::write_atomic(&hyper_path, text).map_err(|e| write_failed(&hyper_path, e))?;
        }
        Some(labels_path.display().to_string())
    } else {
        None
    };
    if let Some(path) = &opts.elements {
        write_elements(
            path,
            opts,
            &labels_file,
            original.as_deref(),
            &claims,
            &runs,
        )?;
    }
    let names = |pred: &dyn Fn(&RunOutcome) -> bool| -> Vec<String> {
        runs.iter()
            .filter(|r| pred(&r.outcome))
            .map(|r| r.name.clone())
            .collect()
    };
    Ok(MeasureReport {
        file: super::file_name(&opts.file),
        compiled_out: crate::report::sites::compiled_out_beside(&opts.file),
        tests: runs.len(),
        not_run,
        crashed: names(&|o| matches!(o, RunOutcome::Crashed(_))),
        timed_out: names(&|o| *o == RunOutcome::TimedOut),
        claims_checked: claims.len(),
        unpruned: ledger_path.is_none(),
        test_timeout_ms: opts.test_timeout_ms,
        coverage: table.iter().map(CoverageRow::of).collect(),
        settled: settled.iter().map(SettledRow::of).collect(),
        hyperlabels: hyper
            .rows
            .into_iter()
            .map(|counts| HyperRowReport {
                raw_percent: counts.raw(),
                cleaned_percent: counts.cleaned(),
                counts,
            })
            .collect(),
        pending,
        uncovered,
        below_threshold,
        skipped,
        over_budget,
        alarms,
        behaviour,
        behaviour_unchecked,
        wrote,
        table,
    })
}

/// The Mutation Testing Elements report of the WM labels, written to `path`.
fn write_elements(
    path: &Path,
    opts: &MeasureOptions,
    labels_file: &LabelsFile,
    original: Option<&Path>,
    claims: &BTreeMap<u64, measure::Claim>,
    runs: &[measure::TestRun],
) -> Result<()> {
    let rows: Vec<(u64, String, String)> = labels_file
        .rows
        .iter()
        .map(|r| (r.id, r.tag.clone(), r.origin_loc.clone()))
        .collect();
    let sources = original_sources(&opts.file, original, &rows);
    let report = measure::elements_report(&rows, claims, runs, &sources);
    let text = serde_json::to_string_pretty(&report).map_err(Error::internal)? + "\n";
    labels::write_atomic(path, &text).map_err(|e| write_failed(path, e))
}

/// The kept labels (see [`crate::report::counts`]; pending ones included) no run covers, with
/// their places and predicates in the annotated file.
fn uncovered_objectives(
    program: &crate::ir::Program,
    labels_file: &LabelsFile,
    claims: &BTreeMap<u64, measure::Claim>,
    covered: &BTreeSet<u64>,
    file: &Path,
) -> Vec<Uncovered> {
    let name = super::file_name(file);
    let mut at: BTreeMap<u64, (String, String)> = BTreeMap::new();
    for f in &program.functions {
        for (_, s) in f.labels() {
            if let crate::ir::StmtKind::Label { id, text, .. } = &s.kind {
                at.entry(*id).or_insert_with(|| {
                    (format!("{name}:{}:{}", s.loc.line, s.loc.col), text.clone())
                });
            }
        }
    }
    let mut list = uncovered_in(labels_file, claims, covered, file);
    for u in &mut list {
        let (loc, predicate) = at.remove(&u.label).unwrap_or_default();
        if u.source.is_empty() {
            u.source = predicate.clone();
        }
        u.at = loc;
        u.predicate = predicate;
    }
    list
}

/// The kept labels no run covers, by the labels file and the annotated file's own text (for
/// a file measured as part of a project: no place in the annotated file).
pub(crate) fn uncovered_in(
    labels_file: &LabelsFile,
    claims: &BTreeMap<u64, measure::Claim>,
    covered: &BTreeSet<u64>,
    annotated: &Path,
) -> Vec<Uncovered> {
    let kept = measure::objectives(
        labels_file.rows.iter().map(|r| (r.id, r.tag.as_str())),
        claims,
        covered,
    );
    let shown = std::fs::read(annotated)
        .map(|t| crate::frontend::sites::source_predicates(&t))
        .unwrap_or_default();
    labels_file
        .rows
        .iter()
        .filter(|r| kept.contains(&r.id) && !covered.contains(&r.id))
        .map(|r| {
            let source = shown.get(&r.id.to_string()).cloned().unwrap_or_default();
            Uncovered {
                label: r.id,
                tag: r.tag.clone(),
                origin: r.origin_loc.clone(),
                at: String::new(),
                predicate: source.clone(),
                source,
            }
        })
        .collect()
}

/// The thresholds the cleaned coverage is below; a threshold for a criterion the program has
/// no labels of is bad input.
fn below(table: &[Coverage], thresholds: &[(Option<String>, f64)]) -> Result<Vec<BelowThreshold>> {
    let mut out = Vec::new();
    for (crit, min) in thresholds {
        let name = crit.as_deref().unwrap_or("all");
        let row = table.iter().find(|r| r.criterion == name).ok_or_else(|| {
            anyhow::anyhow!("--fail-under {name}: the program has no labels of that criterion")
        })?;
        let cleaned = row.cleaned().unwrap_or(100.0);
        if cleaned < *min {
            out.push(BelowThreshold {
                criterion: name.to_string(),
                cleaned_percent: (cleaned * 10.0).round() / 10.0,
                threshold_percent: *min,
            });
        }
    }
    Ok(out)
}

/// The subsumed labels that neither the runs nor any of their subsumers covered.
pub(super) fn pending_labels(
    labels: &[(u64, String)],
    claims: &BTreeMap<u64, measure::Claim>,
    covered: &BTreeSet<u64>,
) -> Vec<PendingLabel> {
    labels
        .iter()
        .filter_map(|(id, _)| {
            measure::pending_subsumed(*id, claims, covered).map(|by| PendingLabel {
                label: *id,
                subsumed_by: by.to_vec(),
            })
        })
        .collect()
}

/// The labels file, LReplay style: covered labels, with the tests that covered them.
pub(super) fn mark_covered(labels_file: &mut LabelsFile, runs: &[measure::TestRun]) {
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
}

/// A path as the user would write it: relative to the current directory when under it.
fn shown_path(p: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    let abs = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    cwd.and_then(|d| {
        abs.strip_prefix(d.canonicalize().ok()?)
            .ok()
            .map(Path::to_path_buf)
    })
    .unwrap_or(abs)
    .display()
    .to_string()
}

/// Where each label is: `ANNOTATED:LINE` (from `ORIGINAL:LINE` when the labels file says).
fn label_lines(
    program: &crate::ir::Program,
    labels_file: &LabelsFile,
    file: &Path,
) -> BTreeMap<u64, String> {
    let name = super::file_name(file);
    let mut out = BTreeMap::new();
    for f in &program.functions {
        for (_, s) in f.labels() {
            if let crate::ir::StmtKind::Label { id, .. } = &s.kind {
                out.entry(*id)
                    .or_insert_with(|| format!("{name}:{}", s.loc.line));
            }
        }
    }
    for r in &labels_file.rows {
        if let Some(at) = out.get_mut(&r.id) {
            if !r.origin_loc.is_empty() {
                at.push_str(&format!(", from {}", r.origin_loc));
            }
        }
    }
    out
}

/// The original sources the labels file names: the original program (from the build record
/// or `--original`) wherever it lives, else files beside the annotated one or one level up.
fn original_sources(
    file: &Path,
    original: Option<&Path>,
    rows: &[(u64, String, String)],
) -> BTreeMap<String, String> {
    let mut sources = BTreeMap::new();
    let dir = file.parent().unwrap_or(Path::new("."));
    let original_dir = original.and_then(Path::parent);
    for (_, _, origin) in rows {
        let name = origin.rsplit_once(':').map_or(origin.as_str(), |(f, _)| f);
        if name.is_empty() || sources.contains_key(name) {
            continue;
        }
        let mut candidates = Vec::new();
        if let Some(o) = original.filter(|o| o.file_name().is_some_and(|n| n == name)) {
            candidates.push(o.to_path_buf());
        }
        candidates.extend(original_dir.map(|d| d.join(name)));
        candidates.push(dir.join(name));
        candidates.push(dir.join("..").join(name));
        for cand in candidates {
            if let Ok(bytes) = std::fs::read(&cand) {
                sources.insert(name.to_string(), crate::frontend::text_of_bytes(&bytes));
                break;
            }
        }
    }
    sources
}
