//! `project measure`: the project that `project` annotated, rebuilt by its own test commands
//! in a copy of its sources where every annotated file stands in its original's place, with a
//! build directory of its own and the recording runtime compiled and linked in; raw and
//! cleaned coverage per file and in total, every ledger's claims checked against the runs (the
//! soundness alarm), and each file's labels file updated with what was covered and by which
//! test. Tests that `ctest` or `meson test` can list run one by one, so that claims are checked
//! per test. What did not happen is an error, and then no labels file is written: an annotated
//! file was built into no program the commands ran, a command failed, or the user's source or
//! build directory changed while the commands ran.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::error::{write_failed, Error, Result};
use super::measure::{CoverageRow, PendingLabel, SettledRow};
use super::project::Manifest;
use crate::measure::layout::Layout;
use crate::measure::project::{self as build, PlacedFile};
use crate::measure::{self, Alarm, Claim, Coverage, RunOutcome, TestRun};
use crate::report::labels::{self, LabelsFile};
use crate::report::ledger;

#[derive(Clone, Debug)]
pub struct ProjectMeasureOptions {
    /// The output directory of `covprune project` (it holds the manifest).
    pub out_dir: PathBuf,
    /// Shell commands that build and test the project, run in order.
    pub commands: Vec<String>,
    /// Where the commands run: relative to the database's directory, or absolute inside the
    /// sources' tree (default: the database's directory).
    pub cwd: Option<PathBuf>,
    /// The compiler `$CC` names (default `cc`).
    pub cc: Option<String>,
    pub timeout: Duration,
    /// Build here and keep the tree (default: a scratch directory, removed).
    pub keep_build: Option<PathBuf>,
}

impl ProjectMeasureOptions {
    /// The default of `timeout`, in milliseconds.
    pub const TEST_TIMEOUT_MS: u64 = 3_600_000;
}

#[derive(Debug, Serialize)]
pub struct ProjectMeasureReport {
    pub root: String,
    /// How the project was built again: `CMake`, `Meson`, `autotools` (configured afresh in
    /// the copy) or `in place` (the tree copied as it is).
    pub layout: String,
    /// The build tree, when it was kept.
    pub build: Option<String>,
    pub commands: Vec<CommandRow>,
    pub files: Vec<FileCoverage>,
    /// Per criterion, all files added up (`all` last).
    pub total: Vec<CoverageRow>,
    /// Per criterion, all files built added up (`all` last): what the tests leave uncovered,
    /// proved infeasible, shown feasible by a `witness` test, or neither.
    pub settled: Vec<SettledRow>,
    /// The labels files written (none under an alarm, a failed command, a change to the
    /// user's trees; none for a file no program the commands ran was built from).
    pub wrote: Vec<String>,
    /// Files of the user's source or build directory that changed while the commands ran.
    pub touched: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct CommandRow {
    /// `cmd1`, `cmd2`, ...: how the labels files name it among a label's covering tests.
    pub name: String,
    pub command: String,
    pub outcome: RunOutcome,
    pub seconds: f64,
    /// What it printed last, when it did not succeed.
    pub tail: Option<String>,
    /// The compiler's errors in annotated files, each with its line in the annotated file and
    /// in the original, when it did not succeed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compiler_errors: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct FileCoverage {
    pub file: String,
    /// Some program the commands ran was built from the annotated file (else its coverage is
    /// left out of the total and its labels file is not written).
    pub built: bool,
    pub coverage: Vec<CoverageRow>,
    pub settled: Vec<SettledRow>,
    pub pending: Vec<PendingLabel>,
    /// The objectives left that no test covers.
    pub uncovered: Vec<super::measure::Uncovered>,
    pub alarms: Vec<Alarm>,
    /// Labels in code the file's configuration compiles out (not objectives).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compiled_out: Vec<crate::report::sites::CompiledOutLabels>,
}

impl ProjectMeasureReport {
    /// The markdown summary's figures: the total rows, every measured file's objectives no
    /// test covers, the alarms.
    /// The files linked into no program the commands ran.
    fn unbuilt(&self) -> Vec<&str> {
        self.files
            .iter()
            .filter(|f| !f.built)
            .map(|f| f.file.as_str())
            .collect()
    }

    pub fn summary(&self) -> crate::report::summary::Summary {
        let unbuilt = self.unbuilt();
        let mut notes = Vec::new();
        if !unbuilt.is_empty() {
            notes.push(format!(
                "Linked into no program the commands ran, not measured: {}.",
                unbuilt.join(", ")
            ));
        }
        let mut uncovered: Vec<_> = self
            .files
            .iter()
            .flat_map(|f| f.uncovered.iter().map(super::measure::Uncovered::place))
            .collect();
        uncovered.sort();
        crate::report::summary::Summary {
            title: format!(
                "project measure {} ({})",
                // The project's name, not where this machine keeps it.
                std::path::Path::new(&self.root)
                    .file_name()
                    .map_or_else(|| self.root.clone(), |n| n.to_string_lossy().into_owned()),
                crate::console::count(self.commands.len() as u64, "test command")
            ),
            rows: self.total.iter().map(Into::into).collect(),
            uncovered,
            alarms: self
                .files
                .iter()
                .flat_map(|f| {
                    f.alarms.iter().map(move |a| {
                        format!(
                            "{} {} claimed {}: {}",
                            f.file,
                            crate::console::label_id(a.label),
                            a.claim,
                            a.what
                        )
                    })
                })
                .collect(),
            notes,
            ..Default::default()
        }
    }

    pub fn to_text(&self) -> String {
        let mut out = format!("build: {}\n", self.layout);
        let width = self
            .commands
            .iter()
            .map(|c| c.name.len())
            .max()
            .unwrap_or(0);
        for c in &self.commands {
            out.push_str(&format!(
                "{:<width$} {:>8.1} s  {:<16} {}\n",
                c.name,
                c.seconds,
                c.outcome.to_string(),
                c.command
            ));
            if let Some(t) = &c.tail {
                for line in t.lines() {
                    out.push_str(&format!("    | {line}\n"));
                }
            }
            for e in &c.compiler_errors {
                out.push_str(&format!("  {e}\n"));
            }
        }
        let pct = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}%"));
        out.push_str(&format!(
            "\n{:<32} {:>7} {:>8} {:>7} {:>6} {:>8} {:>8}\n",
            "file", "labels", "covered", "raw", "kept", "covered", "cleaned"
        ));
        let line = |name: &str, rows: &[CoverageRow]| {
            let all = rows.last().map(|r| &r.counts).cloned().unwrap_or_default();
            format!(
                "{:<32} {:>7} {:>8} {:>7} {:>6} {:>8} {:>8}\n",
                name,
                all.labels,
                all.covered,
                pct(all.raw()),
                all.kept,
                all.kept_covered,
                pct(all.cleaned())
            )
        };
        for f in &self.files {
            let name = if f.built {
                f.file.clone()
            } else {
                format!("{} (not built)", f.file)
            };
            out.push_str(&line(&name, &f.coverage));
        }
        out.push_str(&line("total", &self.total));
        out.push_str("\nper criterion, all files:\n");
        let rows: Vec<Coverage> = self.total.iter().map(|r| r.counts.clone()).collect();
        out.push_str(&measure::coverage_text(&rows));
        let rows: Vec<measure::Settled> = self.settled.iter().map(|r| r.counts.clone()).collect();
        out.push_str(&measure::settled_text(&rows));
        for f in &self.files {
            for p in &f.pending {
                let by: Vec<String> = p
                    .subsumed_by
                    .iter()
                    .map(|&b| crate::console::label_id(b))
                    .collect();
                out.push_str(&format!(
                    "pending: {} {}: subsumed by {}, none covered\n",
                    f.file,
                    crate::console::label_id(p.label),
                    by.join(" ")
                ));
            }
        }
        for f in &self.files {
            if let Some(note) = crate::report::sites::compiled_out_note(&f.file, &f.compiled_out) {
                out.push_str(&note);
                out.push('\n');
            }
        }
        for f in &self.files {
            for a in &f.alarms {
                out.push_str(&format!(
                    "SOUNDNESS ALARM: {} {} ({}): {}\n",
                    f.file,
                    crate::console::label_id(a.label),
                    a.claim,
                    a.what
                ));
            }
        }
        let unbuilt = self.unbuilt();
        if !unbuilt.is_empty() {
            out.push_str(&format!(
                "linked into no program the commands ran, so not measured (left out of the total, labels files untouched): {}\n",
                unbuilt.join(", ")
            ));
        }
        for t in &self.touched {
            out.push_str(&format!(
                "changed in your tree while the commands ran: {t}\n"
            ));
        }
        if let Some(b) = &self.build {
            out.push_str(&format!("build tree kept in {b}\n"));
        }
        out
    }

    /// The error the run ends with after its report: alarms (exit 3), else a command that
    /// did not succeed (exit 2).
    pub fn error(&self) -> Option<Error> {
        let alarms: usize = self.files.iter().map(|f| f.alarms.len()).sum();
        if alarms > 0 {
            return Some(Error::SoundnessAlarm(format!(
                "{} between the test commands and the ledgers (listed above)",
                crate::console::count(alarms as u64, "contradiction")
            )));
        }
        if !self.touched.is_empty() {
            return Some(Error::BadInput(anyhow::anyhow!(
                "the commands changed {} of your source or build directory (listed above): they must build and test in the directory they start in; no labels file was written",
                crate::console::count(self.touched.len() as u64, "file")
            )));
        }
        if self.files.iter().all(|f| !f.built) {
            return Some(Error::BadInput(anyhow::anyhow!(
                "no program the commands ran was built from an annotated file: did they build and run the tests? (a compiler called by an absolute path, or paths into your own tree, build the originals instead); no labels file was written"
            )));
        }
        let failed = self
            .commands
            .iter()
            .filter(|c| c.outcome != RunOutcome::Exited(0))
            .count();
        let compile = self.commands.iter().find_map(|c| c.compiler_errors.first());
        (failed > 0).then(|| match compile {
            Some(e) => Error::BadInput(anyhow::anyhow!(
                "the annotated build does not compile: {e}; no labels file was written"
            )),
            None => Error::BadInput(anyhow::anyhow!(
                "{} did not succeed in the annotated build (their last lines are above); no labels file was written",
                crate::console::count(failed as u64, "test command")
            )),
        })
    }
}

/// The rows of a table by criterion, `all` last, as in every coverage table.
fn all_last<R>(mut rows: BTreeMap<String, R>) -> Vec<R> {
    let all = rows.remove("all");
    let mut out: Vec<R> = rows.into_values().collect();
    out.extend(all);
    out
}

/// Adds a file's settled rows to the project's, by criterion.
fn add_settled(total: &mut BTreeMap<String, measure::Settled>, rows: &[measure::Settled]) {
    for row in rows {
        total
            .entry(row.criterion.clone())
            .or_insert_with(|| measure::Settled {
                criterion: row.criterion.clone(),
                ..measure::Settled::default()
            })
            .add(row);
    }
}

/// One file of the project as measured: its labels, claims and highest id (its base is its
/// [`PlacedFile`]'s).
struct Measured {
    file: String,
    labels_path: PathBuf,
    labels: LabelsFile,
    claims: BTreeMap<u64, Claim>,
    /// The labels the ledger says a `witness` test covered.
    shown: BTreeSet<u64>,
    max_id: u64,
}

pub fn project_measure(opts: &ProjectMeasureOptions) -> Result<ProjectMeasureReport> {
    if opts.commands.is_empty() {
        return Err(anyhow::anyhow!("no test command: give --test-cmd CMD or --tests FILE").into());
    }
    let manifest = Manifest::read(&opts.out_dir)?;
    if manifest.files.is_empty() {
        return Err(anyhow::anyhow!(
            "{}: the project has no annotated file",
            opts.out_dir.display()
        )
        .into());
    }
    let root = PathBuf::from(&manifest.root);
    let db_dir = Path::new(&manifest.database)
        .parent()
        .map_or_else(|| root.clone(), Path::to_path_buf);
    if !root.is_dir() {
        return Err(anyhow::anyhow!("the sources' root {} is gone", root.display()).into());
    }
    let layout = Layout::detect(&db_dir);
    let files = read_files(opts, &manifest, &root)?;
    let (_scratch, work) = work_dir(opts)?;
    let placed: Vec<PlacedFile> = files.iter().map(|(p, _)| p.clone()).collect();
    let skip = [opts.out_dir.clone()];
    let staged = build::stage(
        &build::Stage {
            layout: &layout,
            root: &root,
            db_dir: &db_dir,
            skip: &skip,
            files: &placed,
            cc_name: opts.cc.as_deref().unwrap_or("cc"),
        },
        &work,
    )
    .map_err(anyhow::Error::from)?;
    let cwd = match &opts.cwd {
        Some(c) if c.is_absolute() => staged.in_copy(c).ok_or_else(|| {
            anyhow::anyhow!(
                "--cwd {}: not in the project's sources or build directory",
                c.display()
            )
        })?,
        Some(c) => staged.build.join(c),
        None => staged.build.clone(),
    };
    if !cwd.is_dir() {
        return Err(anyhow::anyhow!(
            "{}: no such directory in the project's tree to run the commands in",
            cwd.display()
        )
        .into());
    }
    // The user's trees, as they are before the commands run.
    let watched: Vec<PathBuf> = [root.clone(), db_dir.clone()]
        .into_iter()
        .chain(layout.source().map(Path::to_path_buf))
        .collect();
    let unwatched = [opts.out_dir.clone(), work.clone()];
    let before = build::fingerprint(&watched, &unwatched);
    let (commands, runs, present) = run_commands(opts, &staged, &cwd, &manifest)?;
    let touched = build::changes(&before, &build::fingerprint(&watched, &unwatched));
    let mut reports = Vec::new();
    let mut total: BTreeMap<String, Coverage> = BTreeMap::new();
    let mut total_settled: BTreeMap<String, measure::Settled> = BTreeMap::new();
    let mut any_alarm = false;
    for (placed, m) in &files {
        let file_runs = runs_of_file(&runs, placed.base, m.max_id);
        let covered: BTreeSet<u64> = file_runs
            .iter()
            .flat_map(|r| r.covered.iter().copied())
            .collect();
        let label_list: Vec<(u64, String)> = m
            .labels
            .rows
            .iter()
            .map(|r| (r.id, r.tag.clone()))
            .collect();
        let built = present.contains(&placed.base);
        let table = measure::coverage(&label_list, &m.claims, &covered);
        for row in table.iter().filter(|_| built) {
            total
                .entry(row.criterion.clone())
                .or_insert_with(|| Coverage {
                    criterion: row.criterion.clone(),
                    ..Coverage::default()
                })
                .add(row);
        }
        let settled = measure::settled(&label_list, &m.claims, &covered, &m.shown);
        if built {
            add_settled(&mut total_settled, &settled);
        }
        let pending = super::measure::pending_labels(&label_list, &m.claims, &covered);
        let alarms = measure::alarms(&m.claims, &file_runs);
        any_alarm |= !alarms.is_empty();
        reports.push((
            FileCoverage {
                file: m.file.clone(),
                built,
                coverage: table.iter().map(CoverageRow::of).collect(),
                settled: settled.iter().map(SettledRow::of).collect(),
                pending,
                uncovered: if built {
                    super::measure::uncovered_in(&m.labels, &m.claims, &covered, &placed.annotated)
                } else {
                    Vec::new()
                },
                alarms,
                compiled_out: crate::report::sites::compiled_out_beside(&placed.annotated),
            },
            file_runs,
        ));
    }
    // The labels files, LReplay style, only when every command succeeded, no claim was
    // contradicted and the user's trees were left alone; each of a file built into a program
    // the commands ran (a file no test links keeps its labels file as it was).
    let mut wrote = Vec::new();
    let all_ran = commands.iter().all(|c| c.outcome == RunOutcome::Exited(0));
    if !any_alarm && all_ran && touched.is_empty() {
        for ((_, m), (fc, file_runs)) in files.iter().zip(&reports) {
            if !fc.built {
                continue;
            }
            let mut lf = m.labels.clone();
            super::measure::mark_covered(&mut lf, file_runs);
            labels::write_atomic(&m.labels_path, lf.to_text())
                .map_err(|e| write_failed(&m.labels_path, e))?;
            wrote.push(m.labels_path.display().to_string());
        }
    }
    let total = all_last(total);
    let total_settled = all_last(total_settled);
    Ok(ProjectMeasureReport {
        root: manifest.root,
        layout: layout.name().to_string(),
        build: opts
            .keep_build
            .as_ref()
            .map(|_| staged.tree.display().to_string()),
        commands,
        files: reports.into_iter().map(|(f, _)| f).collect(),
        total: total.iter().map(CoverageRow::of).collect(),
        settled: total_settled.iter().map(SettledRow::of).collect(),
        wrote,
        touched,
    })
}

/// Each annotated file of the manifest placed in the project's numbering (its labels after
/// those of the files before it), with its labels file and the claims of its ledger.
fn read_files(
    opts: &ProjectMeasureOptions,
    manifest: &Manifest,
    root: &Path,
) -> Result<Vec<(PlacedFile, Measured)>> {
    let mut files = Vec::new();
    let mut base = 0u64;
    for f in &manifest.files {
        let annotated = opts.out_dir.join(&f.annotated);
        let labels_path = annotated.with_extension("labels");
        let labels = labels::read(&labels_path)?;
        let ids: Vec<u64> = labels.rows.iter().map(|r| r.id).collect();
        let (claims, shown) = match &f.ledger {
            Some(l) => {
                let ledger = ledger::read_bound(&opts.out_dir.join(l), &annotated, Some(&ids))?;
                (
                    measure::claims_from_ledger(&ledger),
                    ledger::witnessed(&ledger.labels),
                )
            }
            None => Default::default(),
        };
        let max_id = ids.iter().copied().max().unwrap_or(0);
        files.push((
            PlacedFile {
                original: root.join(&f.file),
                annotated,
                base,
            },
            Measured {
                file: f.file.clone(),
                labels_path,
                labels,
                claims,
                shown,
                max_id,
            },
        ));
        base += max_id;
    }
    Ok(files)
}

/// Where the copy is built: `--keep-build`'s directory (new or empty), else a scratch one
/// (returned too: it lives as long as the run).
fn work_dir(opts: &ProjectMeasureOptions) -> Result<(Option<tempfile::TempDir>, PathBuf)> {
    Ok(match &opts.keep_build {
        Some(dir) => {
            if dir.exists() && std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_some()) {
                return Err(anyhow::anyhow!(
                    "--keep-build {}: not an empty directory",
                    dir.display()
                )
                .into());
            }
            std::fs::create_dir_all(dir).map_err(|e| write_failed(dir, e))?;
            (None, dir.canonicalize().map_err(|e| write_failed(dir, e))?)
        }
        None => {
            let scratch = tempfile::tempdir().map_err(Error::internal)?;
            let path = scratch.path().to_path_buf();
            (Some(scratch), path)
        }
    })
}

/// Runs the commands in the copy, each test of a command that lists its tests one by one:
/// their rows, their runs, and the files whose labels a program they ran was built from.
fn run_commands(
    opts: &ProjectMeasureOptions,
    staged: &build::StagedTree,
    cwd: &Path,
    manifest: &Manifest,
) -> Result<(Vec<CommandRow>, Vec<TestRun>, BTreeSet<u64>)> {
    let mut commands = Vec::new();
    let mut runs: Vec<TestRun> = Vec::new();
    let mut present = BTreeSet::new();
    let mut k = 0;
    for (c, command) in opts.commands.iter().enumerate() {
        let one_by_one = build::listed_tests(command, cwd, staged);
        let each: Vec<(String, String)> = match one_by_one {
            Some(tests) => tests
                .into_iter()
                .map(|(test, cmd)| (format!("cmd{}:{test}", c + 1), cmd))
                .collect(),
            None => vec![(format!("cmd{}", c + 1), command.clone())],
        };
        for (name, cmd) in each {
            let mut done =
                build::run_command(staged, k, &cmd, cwd, opts.timeout).map_err(Error::internal)?;
            k += 1;
            // The labels file's drivers column is a list of words.
            done.run.name = name.split_whitespace().collect::<Vec<_>>().join("_");
            present.extend(done.present.iter().copied());
            commands.push(CommandRow {
                name: done.run.name.clone(),
                command: cmd,
                outcome: done.run.outcome.clone(),
                seconds: done.seconds,
                tail: (done.run.outcome != RunOutcome::Exited(0))
                    .then(|| crate::measure::shell::tail(&done.log, 15)),
                compiler_errors: if done.run.outcome == RunOutcome::Exited(0) {
                    Vec::new()
                } else {
                    compiler_errors(&done.log, manifest)
                },
            });
            runs.push(done.run);
        }
    }
    Ok((commands, runs, present))
}

/// Each run seen from the file whose labels are `base + 1 ..= base + max_id`: its ids back in
/// the file's own numbering.
fn runs_of_file(runs: &[TestRun], base: u64, max_id: u64) -> Vec<TestRun> {
    let local = |ids: &BTreeSet<u64>| -> BTreeSet<u64> {
        // `base + 1 ..= base + max_id`, empty for a file without labels.
        ids.range(base + 1..base + 1 + max_id)
            .map(|g| g - base)
            .collect()
    };
    runs.iter()
        .map(|r| TestRun {
            name: r.name.clone(),
            outcome: r.outcome.clone(),
            reached: local(&r.reached),
            covered: local(&r.covered),
            crashed_in_label: r
                .crashed_in_label
                .filter(|g| *g > base && *g <= base + max_id)
                .map(|g| g - base),
            bindings: r
                .bindings
                .range(base + 1..base + 1 + max_id)
                .map(|(g, e)| (g - base, e.clone()))
                .collect(),
            // Hyperlabels are not measured across a project.
            sequences: BTreeSet::new(),
        })
        .collect()
}

/// The compiler's errors in a command's log that name an annotated file
/// (`src/f.c:12:5: error: ...`), each with its line in the original, at most five.
fn compiler_errors(log: &Path, manifest: &Manifest) -> Vec<String> {
    let text = String::from_utf8_lossy(&std::fs::read(log).unwrap_or_default()).into_owned();
    let header = crate::annotate::HEADER.lines().count();
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((place, message)) = line.split_once(": error: ") else {
            continue;
        };
        let mut parts = place.rsplitn(3, ':');
        let (Some(_col), Some(at), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let Ok(at) = at.parse::<usize>() else {
            continue;
        };
        let Some(f) = manifest
            .files
            .iter()
            .find(|f| path == f.file || path.ends_with(&format!("/{}", f.file)))
        else {
            continue;
        };
        let original = if at > header {
            format!("line {} of the original", at - header)
        } else {
            "in the label header".to_string()
        };
        out.push(format!(
            "{}: line {at} of the annotated file ({original}): error: {message}",
            f.file
        ));
        if out.len() == 5 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::project::ManifestFile;

    #[test]
    fn compiler_errors_in_annotated_files_name_the_original_line() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        std::fs::write(
            &log,
            "[ 50%] Building C object CMakeFiles/j.dir/src/parse.c.o\n\
             /tmp/x/tree/src/parse.c:40:9: error: unused variable 'v' [-Werror=unused-variable]\n\
             /usr/include/stdio.h:3:1: error: elsewhere\n\
             make: *** [all] Error 2\n",
        )
        .unwrap();
        let manifest = Manifest {
            database: String::new(),
            root: String::new(),
            files: vec![ManifestFile {
                file: "src/parse.c".into(),
                annotated: "src/parse_labels.c".into(),
                ledger: None,
            }],
        };
        assert_eq!(
            compiler_errors(&log, &manifest),
            ["src/parse.c: line 40 of the annotated file (line 33 of the original): error: unused variable 'v' [-Werror=unused-variable]"]
        );
    }
}
