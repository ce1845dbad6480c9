//! `covprune project witness -o OUT`: `witness` for every file a `project` run annotated, each
//! runner linked with the code of the project's other files (compiled from the compilation
//! database into a scratch directory), the tests written under `OUT/witnesses/`, and the
//! settled share of what the project's tests leave uncovered, per criterion.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use super::error::{Error, Result};
use super::measure::SettledRow;
use super::project::Manifest;
use crate::frontend::preprocess::PreprocessOptions;
use crate::measure::{self, Settled};
use crate::report::{labels, ledger};

/// The folder of `OUT` the tests go to (each file's in its sources' place below it).
pub const WITNESSES: &str = "witnesses";

#[derive(Debug, Clone)]
pub struct ProjectWitnessOptions {
    /// The output directory of `covprune project`.
    pub out_dir: PathBuf,
    /// The C compiler (default `cc`).
    pub cc: Option<String>,
    pub per_function: usize,
    pub function_ms: u64,
    pub run_ms: u64,
    pub jobs: usize,
    pub progress: bool,
}

#[derive(Debug, Serialize)]
pub struct ProjectWitnessReport {
    pub root: String,
    /// Files of the database compiled for the runners' link.
    pub objects: usize,
    /// Files of the database that did not compile here (their functions stay undefined).
    pub not_compiled: Vec<NotCompiled>,
    pub files: Vec<FileWitness>,
    /// Per criterion, all files added up (`all` last): what the tests leave uncovered,
    /// proved infeasible, shown feasible by a test `witness` wrote, or neither.
    pub settled: Vec<SettledRow>,
    /// Where the tests are, and the build snippets that add them to the project's suite.
    pub tests_dir: String,
    pub snippets: Vec<String>,
    pub seconds: f64,
}

#[derive(Debug, Serialize)]
pub struct NotCompiled {
    pub file: String,
    pub why: String,
}

#[derive(Debug, Serialize)]
pub struct FileWitness {
    pub file: String,
    /// The tests' folder.
    pub out: String,
    pub grey_zone: usize,
    pub shown_feasible: usize,
    pub tests: Vec<String>,
    pub crash_tests: usize,
    pub findings: usize,
    /// Tests built on their own (the recording runtime, the project's other files) and run.
    pub tests_checked: usize,
    /// Of those, the ones that did not build or did not cover a label they show.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tests_broken: Vec<crate::witness::check::Broken>,
    /// Why the file was not witnessed (no ledger, or its runner did not build).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub seconds: f64,
}

impl ProjectWitnessReport {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{}: {} files compiled for the runners' link\n",
            self.root, self.objects
        );
        for n in &self.not_compiled {
            out.push_str(&format!("  not compiled: {}: {}\n", n.file, n.why));
        }
        out.push_str(&format!(
            "\n{:<32} {:>6} {:>6} {:>6} {:>8} {:>8} {:>8}\n",
            "file", "grey", "shown", "tests", "checked", "crashes", "seconds"
        ));
        for f in &self.files {
            match &f.error {
                Some(why) => out.push_str(&format!("{:<32} not witnessed: {why}\n", f.file)),
                None => out.push_str(&format!(
                    "{:<32} {:>6} {:>6} {:>6} {:>8} {:>8} {:>8.1}\n",
                    f.file,
                    f.grey_zone,
                    f.shown_feasible,
                    f.tests.len(),
                    f.tests_checked - f.tests_broken.len(),
                    f.crash_tests,
                    f.seconds
                )),
            }
            for b in &f.tests_broken {
                out.push_str(&format!("  {}: {}\n", b.test, b.why));
            }
        }
        let rows: Vec<Settled> = self.settled.iter().map(|r| r.counts.clone()).collect();
        out.push('\n');
        out.push_str(&measure::settled_text(&rows));
        out.push_str(&format!("tests in {}\n", self.tests_dir));
        for s in &self.snippets {
            out.push_str(&format!("  to add them to the suite: {s}\n"));
        }
        out
    }

    /// A file not witnessed is an error of the run (exit 2), after everything is written.
    pub fn error(&self) -> Option<Error> {
        let bad: Vec<String> = self
            .files
            .iter()
            .filter_map(|f| f.error.as_ref().map(|e| format!("{}: {e}", f.file)))
            .chain(self.files.iter().flat_map(|f| {
                f.tests_broken
                    .iter()
                    .map(move |b| format!("{}: {}: {}", f.file, b.test, b.why))
            }))
            .collect();
        (!bad.is_empty()).then(|| {
            Error::BadInput(anyhow::anyhow!(
                "not as claimed ({}):\n  {}",
                crate::console::count(bad.len() as u64, "problem"),
                bad.join("\n  ")
            ))
        })
    }
}

pub fn project_witness(opts: &ProjectWitnessOptions) -> Result<ProjectWitnessReport> {
    let t0 = Instant::now();
    let manifest = Manifest::read(&opts.out_dir)?;
    let root = PathBuf::from(&manifest.root);
    let db = PathBuf::from(&manifest.database);
    let cc = opts.cc.clone().unwrap_or_else(|| "cc".into());
    let entries =
        crate::frontend::preprocess::database_entries(&db).map_err(anyhow::Error::from)?;
    let work = tempfile::tempdir().map_err(Error::internal)?;
    let units: Vec<crate::witness::objects::Unit> = entries
        .iter()
        .filter(|e| e.file.extension().is_some_and(|x| x == "c"))
        .map(|e| {
            let (flags, link) = crate::frontend::preprocess::entry_build_flags(&e.args, &e.dir);
            crate::witness::objects::Unit {
                file: e.file.clone(),
                dir: e.dir.clone(),
                flags,
                link,
            }
        })
        .collect();
    let objects =
        crate::witness::objects::compile(&cc, &units, work.path()).map_err(Error::internal)?;
    // Absolute, so that the snippets name the tests wherever they are included from.
    let out_dir = opts
        .out_dir
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("{}: {e}", opts.out_dir.display()))?;
    let tests_root = out_dir.join(WITNESSES);
    let mut files = Vec::new();
    let mut total: BTreeMap<String, Settled> = BTreeMap::new();
    for (k, f) in manifest.files.iter().enumerate() {
        let t = Instant::now();
        let original = root.join(&f.file);
        let original = original.canonicalize().unwrap_or(original);
        let annotated = out_dir.join(&f.annotated);
        let out = tests_root.join(Path::new(&f.file).with_extension(""));
        let mut row = FileWitness {
            file: f.file.clone(),
            out: out.display().to_string(),
            grey_zone: 0,
            shown_feasible: 0,
            tests: Vec::new(),
            crash_tests: 0,
            findings: 0,
            tests_checked: 0,
            tests_broken: Vec::new(),
            error: None,
            seconds: 0.0,
        };
        if f.ledger.is_none() {
            // A file without labels has no ledger, and nothing to witness.
            let labels = labels::read(&annotated.with_extension("labels"))?;
            if !labels.rows.is_empty() {
                row.error = Some("no ledger (the file was not pruned)".into());
            }
            files.push(row);
            continue;
        }
        let archive = objects
            .archive_without(&original, &work.path().join(format!("project-{k}.a")))
            .map_err(Error::internal)?;
        let mut link: Vec<String> = archive.iter().map(|a| a.display().to_string()).collect();
        link.extend(objects.link.iter().cloned());
        let user = PreprocessOptions {
            cc: opts.cc.clone(),
            ..PreprocessOptions::default()
        };
        let preprocess = super::options_for(&annotated, &user)?;
        let result = super::witness::witness(&super::witness::WitnessOptions {
            file: annotated.clone(),
            out: out.clone(),
            ledger: None,
            labels: None,
            preprocess: preprocess.clone(),
            per_function: opts.per_function,
            function_ms: opts.function_ms,
            run_ms: opts.run_ms,
            jobs: opts.jobs,
            progress: opts.progress,
            link: link.clone(),
        });
        match result {
            Ok(w) => {
                row.grey_zone = w.grey_zone;
                row.shown_feasible = w.shown_feasible;
                row.crash_tests = w.crash_tests;
                row.findings = w.findings.len();
                row.tests = written_tests(&out)?;
                let (flags, _) = super::build_flags(&preprocess, &annotated)?;
                let build = crate::witness::check::TestBuild {
                    cc: &cc,
                    flags: &flags,
                    link: &link,
                    work: work.path(),
                };
                (row.tests_checked, row.tests_broken) =
                    check_written(&build, &annotated, &out, opts.run_ms)?;
            }
            Err(Error::SoundnessAlarm(what)) => {
                return Err(Error::SoundnessAlarm(format!("{}: {what}", f.file)))
            }
            Err(e) => row.error = Some(e.to_string()),
        }
        row.seconds = t.elapsed().as_secs_f64();
        for s in settled_of(&annotated)? {
            total
                .entry(s.criterion.clone())
                .or_insert_with(|| Settled {
                    criterion: s.criterion.clone(),
                    ..Settled::default()
                })
                .add(&s);
        }
        files.push(row);
    }
    let all = total.remove("all");
    let mut settled: Vec<Settled> = total.into_values().collect();
    settled.extend(all);
    let written: Vec<super::project_snippets::Written> = files
        .iter()
        .map(|f| super::project_snippets::Written {
            file: &f.file,
            out: &f.out,
            tests: &f.tests,
        })
        .collect();
    let snippets = super::project_snippets::write(&tests_root, &written, &entries, &manifest)?;
    Ok(ProjectWitnessReport {
        root: manifest.root.clone(),
        objects: objects.objects.len(),
        not_compiled: objects
            .failed
            .iter()
            .map(|(f, why)| NotCompiled {
                file: f.display().to_string(),
                why: why.clone(),
            })
            .collect(),
        files,
        settled: settled.iter().map(SettledRow::of).collect(),
        tests_dir: tests_root.display().to_string(),
        snippets,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// Each test the ledger of `annotated` names, built on its own and run (5 times a witness
/// run's time limit): how many were checked, and those that failed.
fn check_written(
    build: &crate::witness::check::TestBuild,
    annotated: &Path,
    out: &Path,
    run_ms: u64,
) -> Result<(usize, Vec<crate::witness::check::Broken>)> {
    let claimed = claimed_tests(annotated)?;
    let timeout = std::time::Duration::from_millis(run_ms.max(1) * 5);
    let broken =
        crate::witness::check::check(build, out, &claimed, timeout).map_err(Error::internal)?;
    Ok((claimed.len(), broken))
}

/// The tests (not crash tests) the ledger of `annotated` names, each with the labels it shows.
fn claimed_tests(annotated: &Path) -> Result<BTreeMap<String, BTreeSet<u64>>> {
    let ledger = ledger::read(&super::ledger_path_of(annotated))?;
    let mut out: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for l in &ledger.labels {
        if let Some(t) = l.witness.as_ref().filter(|t| t.starts_with("TC_")) {
            out.entry(t.clone()).or_default().insert(l.id);
        }
    }
    Ok(out)
}

/// The tests a folder holds (`TC_n.c`, `CRASH_n.c`), sorted by number.
fn written_tests(dir: &Path) -> Result<Vec<String>> {
    let mut tests: Vec<(usize, String)> = match std::fs::read_dir(dir) {
        Ok(d) => d
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let n = name
                    .strip_prefix("TC_")
                    .or_else(|| name.strip_prefix("CRASH_"))
                    .and_then(|n| n.strip_suffix(".c"))
                    .and_then(|n| n.parse().ok())?;
                Some((n, name))
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    tests.sort();
    Ok(tests.into_iter().map(|(_, n)| n).collect())
}

/// The settled share of one annotated file: the labels file's coverage (a `project measure`
/// run's; the labels only a witness test covers are not the suite's) and its ledger's claims
/// and witnesses.
fn settled_of(annotated: &Path) -> Result<Vec<Settled>> {
    let labels_path = annotated.with_extension("labels");
    let ledger_path = super::ledger_path_of(annotated);
    if !labels_path.exists() || !ledger_path.exists() {
        return Ok(Vec::new());
    }
    let lf = labels::read(&labels_path)?;
    let ids: Vec<u64> = lf.rows.iter().map(|r| r.id).collect();
    let ledger = ledger::read_bound(&ledger_path, annotated, Some(&ids))?;
    let shown = ledger::witnessed(&ledger.labels);
    let covered: BTreeSet<u64> = lf
        .rows
        .iter()
        .filter(|r| r.status == "covered" && !shown.contains(&r.id))
        .map(|r| r.id)
        .collect();
    let list: Vec<(u64, String)> = lf.rows.iter().map(|r| (r.id, r.tag.clone())).collect();
    Ok(measure::settled(
        &list,
        &measure::claims_from_ledger(&ledger),
        &covered,
        &shown,
    ))
}
