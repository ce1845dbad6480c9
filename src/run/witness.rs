//! `witness`: for the labels in the grey zone (not proved infeasible, covered by no test:
//! unknown ones, and duplicate or subsumed ones, whose feasibility is as undecided), calls
//! built from models of them are run ([`crate::witness`]); a label a run covers is shown
//! feasible. The tests that cover them are written to the directory the user names as LTest
//! drivers (`TC_n.c`, numbered after those an earlier run left there), and the ledger and the
//! labels file record, for each such label, the test that covers it. Labels the labels file
//! marks covered (by a `measure` run of the user's tests, or by earlier witnesses) are not
//! asked again. Every run is checked against the ledger's claims as `measure` checks a test's
//! (a label proved infeasible covered; a duplicate or subsumed label apart from its partners
//! on a run that ended): a contradiction is a soundness alarm, the tests are written (to
//! reproduce it) and the ledger and labels file are left as they were. A run that crashes or
//! trips a sanitizer is a finding (a bug of the program, or a call outside what its callers
//! do): every such run is reported with its label, its call and the sanitizer's first line,
//! and a kept test whose run crashed is written as `CRASH_n.c`, apart from the tests a suite can
//! take.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::error::{write_failed, Error, Result};
use crate::frontend::PreprocessOptions;
use crate::prune::witness::{self as models, ModelLimits};
use crate::prune::{PruneConfig, Status};
use crate::report::{labels, ledger};

/// The first line of every test `witness` writes: what it may replace in the output directory.
const MARK: &str = "/* A witness written by covprune";

#[derive(Clone, Debug)]
pub struct WitnessOptions {
    /// The annotated C file, pruned (its ledger beside it, or `ledger`).
    pub file: PathBuf,
    /// Where the tests go (created if needed; it may hold only tests an earlier run wrote).
    pub out: PathBuf,
    pub ledger: Option<PathBuf>,
    pub labels: Option<PathBuf>,
    pub preprocess: PreprocessOptions,
    /// Labels asked per function, at most.
    pub per_function: usize,
    /// Time for one function's models.
    pub function_ms: u64,
    /// Time for one run.
    pub run_ms: u64,
    /// Worker threads (0: the machine's cores).
    pub jobs: usize,
    /// Draw progress bars (on a terminal).
    pub progress: bool,
    /// More inputs of the runner's link, after its own (objects, archives, `-l` flags): the
    /// code of the functions the file calls but does not define.
    pub link: Vec<String>,
}

impl WitnessOptions {
    /// The default of `per_function`.
    pub const PER_FUNCTION: usize = 500;
    /// The default of `function_ms`.
    pub const FUNCTION_MS: u64 = 20_000;
    /// The default of `run_ms`.
    pub const RUN_MS: u64 = 2_000;
}

#[derive(Debug, Serialize)]
pub struct WitnessReport {
    pub file: String,
    pub out: String,
    /// The grey zone: labels not proved infeasible that the labels file does not mark covered.
    pub grey_zone: usize,
    /// Of those, in functions a call can be written for.
    pub asked: usize,
    /// Calls made (distinct): from models, from the palette of values, with outlier tables,
    /// with their structs filled in, with two pointers into one buffer and with a failing
    /// allocation.
    pub calls: usize,
    /// Of those, from the palette of values.
    pub varied: usize,
    /// Of those, with outlier tables.
    pub outliers: usize,
    /// Of those, with their structs' pointer fields filled in (the program's functions in
    /// function-pointer fields, zeroed buffers behind null data pointers), without a failing
    /// allocation.
    pub filled: usize,
    /// Of those, with two pointers into one buffer, without a failing allocation.
    pub aliased: usize,
    /// Of those, with a failing allocation.
    pub failing_allocation: usize,
    /// Why the calls with a failing allocation were not made, if they were not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failing_allocation_not_built: Option<String>,
    /// Runs stopped by the time limit.
    pub timed_out: usize,
    /// Tests kept (written as `TC_n.c`, or `CRASH_n.c` for those whose run crashed).
    pub tests: usize,
    /// Of those, whose run crashed or tripped a sanitizer.
    pub crash_tests: usize,
    /// Runs that crashed or tripped a sanitizer, one per function and what happened, in call
    /// order.
    pub findings: Vec<Finding>,
    /// Unknown labels a kept test covers: shown feasible.
    pub shown_feasible: usize,
    /// Functions no call is written for, with why and how many labels of the grey zone they
    /// hold.
    pub unsupported: Vec<Unsupported>,
    pub seconds: f64,
}

#[derive(Debug, Serialize)]
pub struct Finding {
    pub function: String,
    /// The label whose model (or palette) the call was made for.
    pub label: u64,
    /// The call, as its run is named.
    pub call: String,
    /// The signal, and the sanitizer's first line when one stopped the run.
    pub what: String,
    /// The test written for it (`CRASH_n.c`), when it covered a label no other test did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// `FILE:LINE` of the label in the original program (from the labels file), when known.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub origin: String,
}

#[derive(Debug, Serialize)]
pub struct Unsupported {
    pub function: String,
    pub why: String,
    pub labels: usize,
}

impl WitnessReport {
    /// SARIF 2.1.0 of the findings: each run that crashed or tripped a sanitizer, at the line
    /// of the label its call was made for (relative names from `root`).
    pub fn sarif(&self, root: &Path, version: &str) -> serde_json::Value {
        let results: Vec<serde_json::Value> = self
            .findings
            .iter()
            .map(|f| {
                let (file, line) = match f.origin.rsplit_once(':') {
                    Some((file, l)) => (file.to_string(), l.parse::<usize>().unwrap_or(1)),
                    None => (self.file.clone(), 1),
                };
                serde_json::json!({
                    "ruleId": "covprune/crash",
                    "ruleIndex": 0,
                    "level": "error",
                    "message": {"text": format!(
                        "a call of {} built for {} {}: {}{}",
                        f.function,
                        crate::console::label_id(f.label),
                        f.call,
                        f.what,
                        f.test.as_ref().map_or_else(String::new, |t| format!(" (replay: {t})"))
                    )},
                    "locations": [{"physicalLocation": {
                        "artifactLocation": crate::audit::sarif_location(&file),
                        "region": {"startLine": line.max(1)}
                    }}],
                })
            })
            .collect();
        crate::audit::sarif_log(
            root,
            version,
            &[(
                "covprune/crash",
                "Run that crashed",
                "A call built by `covprune witness` crashed or tripped a sanitizer: a bug of the program, or a call outside what its callers do.",
            )],
            results,
        )
    }

    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if !self.findings.is_empty() {
            out.push_str(&format!(
                "{}: {}: runs that crashed or tripped a sanitizer (a bug, or a call outside what the program's callers do)\n",
                self.file,
                crate::console::count(self.findings.len() as u64, "finding")
            ));
            for f in &self.findings {
                out.push_str(&format!(
                    "  {} (l{}): {}{}\n    {}\n",
                    f.function,
                    f.label,
                    f.what,
                    f.test
                        .as_ref()
                        .map(|t| format!(", reproduced by {}/{t}", self.out))
                        .unwrap_or_default(),
                    f.call
                ));
            }
        }
        out.push_str(&format!(
            "{}\ngrey zone (not proved infeasible, covered by no test): {} labels; in functions a call can be written for: {}\ncalls: {} from models, {} from the palette of values, {} with outlier tables, {} with their structs' pointer fields filled in, {} with two pointers into one buffer, {} with a failing allocation ({} stopped by the time limit)\nshown feasible by a test: {} labels, {} tests written to {}\n",
            self.file,
            self.grey_zone,
            self.asked,
            self.calls - self.varied - self.outliers - self.filled - self.aliased - self.failing_allocation,
            self.varied,
            self.outliers,
            self.filled,
            self.aliased,
            self.failing_allocation,
            self.timed_out,
            self.shown_feasible,
            self.tests,
            self.out
        ));
        if self.crash_tests > 0 {
            out.push_str(&format!(
                "  of those, {} crashed (written as CRASH_n.c, apart from the TC_n.c a suite can take)\n",
                self.crash_tests
            ));
        }
        if let Some(why) = &self.failing_allocation_not_built {
            out.push_str(&format!("  no calls with a failing allocation: {why}\n"));
        }
        for u in &self.unsupported {
            let whose = if u.function.is_empty() {
                "labels outside any function".to_string()
            } else {
                u.function.clone()
            };
            out.push_str(&format!(
                "  no calls for {whose} ({} labels): {}\n",
                u.labels, u.why
            ));
        }
        out
    }
}

pub fn witness(opts: &WitnessOptions) -> Result<WitnessReport> {
    let t0 = Instant::now();
    let (ledger_path, labels_path, mut labels_file, mut ledger) = read_claims(opts)?;
    let earlier = prepare_out(&opts.out)?;
    super::check_writable(&ledger_path)?;
    if labels_file.is_some() {
        super::check_writable(&labels_path)?;
    }

    let mut program = super::load(&opts.file, &opts.preprocess)?.program;
    if ledger.view.open_statics {
        program.open_statics();
    }
    let GreyZone {
        grey,
        targets,
        unsupported,
    } = grey_zone(&program, &ledger, labels_file.as_ref());
    let asked: usize = targets.values().flatten().collect::<BTreeSet<_>>().len();
    let config = PruneConfig::of_view(ledger.view);
    let limits = ModelLimits {
        per_function: opts.per_function,
        function_ms: opts.function_ms,
    };
    let jobs = super::jobs::Jobs::resolve(opts.jobs, true);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(Error::internal)?;
    let work = tempfile::tempdir().map_err(Error::internal)?;
    // The runner is built in a scratch directory.
    let (flags, mut link) = super::build_flags(&opts.preprocess, &opts.file)?;
    link.splice(0..0, opts.link.iter().cloned());
    let text = std::fs::read_to_string(&opts.file)
        .map_err(|e| Error::BadInput(anyhow::anyhow!("{}: {e}", opts.file.display())))?;
    let run_opts = crate::witness::RunOptions {
        cc: opts.preprocess.cc.clone().unwrap_or_else(|| "cc".into()),
        flags,
        link,
        preprocessed: crate::witness::driver::preprocessed(&text),
        timeout: Duration::from_millis(opts.run_ms),
    };
    let strategy = crate::witness::rounds::Strategy {
        program: &program,
        file: &opts.file,
        config: &config,
        limits,
        run: &run_opts,
        pool: &pool,
        work: work.path(),
        progress: opts.progress,
    };
    let crate::witness::rounds::Rounds {
        calls,
        runs,
        varied,
        outliers,
        hooked,
        aliased,
        failing,
        not_built,
    } = crate::witness::rounds::rounds(&strategy, &targets).map_err(|e| match e {
        crate::witness::WitnessError::Build { .. } => Error::BadInput(e.into()),
        other => Error::internal(other),
    })?;
    let wanted: BTreeSet<u64> = grey.iter().map(|(id, _)| *id).collect();
    let (kept, by_label) = crate::witness::choose(&runs, &wanted);

    // Kept test `n` is numbered after the tests an earlier run left.
    let number = |n: usize| earlier + n + 1;
    // Every test kept, then the check of every run against the ledger's claims, as `measure`
    // checks a test suite's.
    let include = include_path(&opts.out, &opts.file);
    let crash = |k: usize| match &runs.runs[k].outcome {
        crate::measure::RunOutcome::Crashed(what) => Some(what.clone()),
        _ => None,
    };
    let names: Vec<PathBuf> = kept
        .iter()
        .enumerate()
        .map(|(n, &k)| crate::witness::test_file(number(n), crash(k).is_some()))
        .collect();
    for (n, &k) in kept.iter().enumerate() {
        let text = test_text(
            &include,
            &program,
            &calls[k],
            number(n),
            &run_opts,
            crash(k),
        );
        let path = opts.out.join(&names[n]);
        labels::write_atomic(&path, text).map_err(|e| write_failed(&path, e))?;
    }
    let findings = findings_of(&calls, &runs, &kept, &names, labels_file.as_ref());
    let alarms = crate::measure::alarms(&ledger::claims_from_ledger(&ledger), &runs.runs);
    if let Some(a) = alarms.first() {
        return Err(Error::SoundnessAlarm(format!(
            "l{} ({}): {} ({} alarms); tests written to {}, ledger unchanged",
            a.label,
            a.claim,
            a.what,
            alarms.len(),
            opts.out.display()
        )));
    }

    for l in &mut ledger.labels {
        if let Some(&n) = by_label.get(&l.id) {
            l.witness = Some(names[n].display().to_string());
        }
    }
    labels::write_atomic(&ledger_path, ledger.to_json())
        .map_err(|e| write_failed(&ledger_path, e))?;
    if let Some(lf) = &mut labels_file {
        mark_witnessed(lf, &by_label, &number);
        labels::write_atomic(&labels_path, lf.to_text())
            .map_err(|e| write_failed(&labels_path, e))?;
    }
    Ok(WitnessReport {
        file: super::file_name(&opts.file),
        out: opts.out.display().to_string(),
        grey_zone: grey.len(),
        asked,
        calls: calls.len(),
        varied,
        outliers,
        filled: hooked,
        aliased,
        failing_allocation: failing,
        failing_allocation_not_built: not_built,
        timed_out: runs.timed_out(),
        tests: kept.len(),
        crash_tests: kept.iter().filter(|&&k| crash(k).is_some()).count(),
        findings,
        shown_feasible: by_label.len(),
        unsupported: unsupported
            .into_iter()
            .map(|(function, (why, labels))| Unsupported {
                function,
                why,
                labels,
            })
            .collect(),
        seconds: (t0.elapsed().as_millis() / 100) as f64 / 10.0,
    })
}

/// The ledger (its path, which must exist) and the labels file, if any; a ledger of runs from
/// `main` is refused (witnesses call functions directly).
type Claims = (PathBuf, PathBuf, Option<labels::LabelsFile>, ledger::Ledger);

fn read_claims(opts: &WitnessOptions) -> Result<Claims> {
    let ledger_path = opts
        .ledger
        .clone()
        .unwrap_or_else(|| super::ledger_path_of(&opts.file));
    if !opts.file.exists() {
        return Err(anyhow::anyhow!("{}: no such file", opts.file.display()).into());
    }
    if !ledger_path.exists() {
        return Err(anyhow::anyhow!(
            "{}: no ledger (prune {} first)",
            ledger_path.display(),
            opts.file.display()
        )
        .into());
    }
    let (labels_path, labels_file, ledger) =
        super::labels_and_ledger(&opts.file, opts.labels.as_deref(), &ledger_path)?;
    if ledger.view.entry_main {
        return Err(anyhow::anyhow!(
            "{}: its claims are about runs from main (--entry main); witnesses call functions directly",
            ledger_path.display()
        )
        .into());
    }
    Ok((ledger_path, labels_path, labels_file, ledger))
}

/// The labels to witness: not proved infeasible, not covered by a test of the user's (a
/// `measure` run marked those), and of them those in functions a call can be written for, by
/// function; the other functions with why and how many labels they hold.
struct GreyZone {
    grey: Vec<(u64, String)>,
    targets: BTreeMap<String, Vec<u64>>,
    unsupported: BTreeMap<String, (String, usize)>,
}

fn grey_zone(
    program: &crate::ir::Program,
    ledger: &ledger::Ledger,
    labels_file: Option<&labels::LabelsFile>,
) -> GreyZone {
    // Labels a test of the user's already covers (a `measure` run marked them) need no
    // witness.
    let covered: BTreeSet<u64> = labels_file
        .into_iter()
        .flat_map(|lf| &lf.rows)
        .filter(|r| r.status == "covered")
        .map(|r| r.id)
        .collect();
    let grey: Vec<(u64, String)> = ledger
        .labels
        .iter()
        .filter(|l| l.status != Status::Infeasible && !covered.contains(&l.id))
        .map(|l| (l.id, l.function.clone()))
        .collect();
    let mut by_function: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (id, function) in &grey {
        by_function.entry(function.clone()).or_default().push(*id);
    }
    let (targets, not_asked) = models::entries(program, &by_function);
    let unsupported: BTreeMap<String, (String, usize)> = not_asked
        .into_iter()
        .map(|(f, why)| {
            let n = by_function.get(&f).map_or(0, Vec::len);
            (f, (why.to_string(), n))
        })
        .collect();
    GreyZone {
        grey,
        targets,
        unsupported,
    }
}

/// The text of kept test `number`: the call as a standalone driver, with the crash of its run
/// said in it.
fn test_text(
    include: &str,
    program: &crate::ir::Program,
    call: &models::Call,
    number: usize,
    run_opts: &crate::witness::RunOptions,
    crashed: Option<String>,
) -> String {
    let mut text =
        crate::witness::driver::standalone(include, program, call, number, run_opts.preprocessed);
    if let Some(what) = crashed {
        let first = text.find('\n').map_or(text.len(), |i| i + 1);
        text.insert_str(
            first,
            &format!("/* Its run crashed: {}. */\n", what.replace("*/", "* /")),
        );
    }
    text
}

/// Every crash of a run, once per function and signal, with the test kept for it if any.
fn findings_of(
    calls: &[models::Call],
    runs: &crate::witness::Runs,
    kept: &[usize],
    names: &[PathBuf],
    labels_file: Option<&labels::LabelsFile>,
) -> Vec<Finding> {
    let mut findings: Vec<Finding> = Vec::new();
    for (k, call) in calls.iter().enumerate() {
        let crate::measure::RunOutcome::Crashed(what) = &runs.runs[k].outcome else {
            continue;
        };
        let what = what.clone();
        let test = kept
            .iter()
            .position(|&j| j == k)
            .map(|n| names[n].display().to_string());
        match findings
            .iter_mut()
            .find(|f| f.function == call.function && f.what == what)
        {
            Some(f) if f.test.is_none() && test.is_some() => f.test = test,
            Some(_) => {}
            None => findings.push(Finding {
                function: call.function.clone(),
                label: call.target,
                call: runs.runs[k].name.clone(),
                what,
                test,
                origin: labels_file
                    .and_then(|lf| lf.rows.iter().find(|r| r.id == call.target))
                    .map(|r| r.origin_loc.clone())
                    .unwrap_or_default(),
            }),
        }
    }
    findings
}

/// Marks covered, by their test's number, the labels a kept test shows feasible.
fn mark_witnessed(
    lf: &mut labels::LabelsFile,
    by_label: &BTreeMap<u64, usize>,
    number: &dyn Fn(usize) -> usize,
) {
    for row in &mut lf.rows {
        if let Some(&n) = by_label.get(&row.id) {
            row.status = "covered".into();
            let driver = number(n).to_string();
            if !row.drivers.split_whitespace().any(|d| d == driver) {
                row.drivers = if row.drivers.trim().is_empty() {
                    driver
                } else {
                    format!("{} {driver}", row.drivers.trim())
                };
            }
        }
    }
}

/// Creates the output directory, or checks that it holds only tests an earlier `witness` run
/// wrote (their first line says so), which stay: anything else is refused, so that the tests
/// of a run are never mixed with files of the user's. Returns how many tests it holds (the
/// new ones are numbered after them).
fn prepare_out(out: &Path) -> Result<usize> {
    if !out.exists() {
        std::fs::create_dir_all(out).map_err(|e| write_failed(out, e))?;
        return Ok(0);
    }
    let entries = std::fs::read_dir(out).map_err(|e| write_failed(out, e))?;
    let mut ours = 0;
    for e in entries {
        let p = e.map_err(|e| write_failed(out, e))?.path();
        let number = p.file_name().and_then(|n| n.to_str()).and_then(|n| {
            n.strip_prefix("TC_")
                .or_else(|| n.strip_prefix("CRASH_"))?
                .strip_suffix(".c")?
                .parse::<usize>()
                .ok()
        });
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        match number {
            Some(n) if text.starts_with(MARK) => ours = ours.max(n),
            _ => {
                return Err(anyhow::anyhow!(
                    "{}: holds {}, which covprune did not write: name an empty or new directory",
                    out.display(),
                    p.display()
                )
                .into())
            }
        }
    }
    Ok(ours)
}

/// How a test in `out` includes the annotated `file`: a relative path when both are under one
/// directory, else the absolute one.
fn include_path(out: &Path, file: &Path) -> String {
    let (Ok(o), Ok(f)) = (out.canonicalize(), file.canonicalize()) else {
        return file.display().to_string();
    };
    let oc: Vec<_> = o.components().collect();
    let fc: Vec<_> = f.components().collect();
    let common = oc.iter().zip(&fc).take_while(|(a, b)| a == b).count();
    if common <= 1 {
        return f.display().to_string();
    }
    let mut rel = PathBuf::new();
    for _ in common..oc.len() {
        rel.push("..");
    }
    for c in &fc[common..] {
        rel.push(c);
    }
    rel.display().to_string()
}
