//! What `measure` reads before the suite runs, each checked: the tests and where they run, the
//! labels file, the ledger's claims, and whether the annotated program's behaviour is compared
//! with the original's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::super::error::Result;
use super::{labels_of_program, BehaviourCheck, MeasureOptions, NotRun, AUTO_CHECK_MAX_TESTS};
use crate::hyper::Hyperlabel;
use crate::measure::{self, Claim, TestSpec};
use crate::report::labels::{self, LabelsFile};
use crate::report::ledger::{self, HyperClaim};
use crate::report::{OverBudget, SkippedFunction};

/// The tests that can run, those that cannot (with why), and the directory they run in.
pub(super) struct Suite {
    pub(super) tests: Vec<TestSpec>,
    pub(super) not_run: Vec<NotRun>,
    pub(super) cwd: PathBuf,
}

pub(super) fn read_suite(opts: &MeasureOptions) -> Result<Suite> {
    if !opts.tests.exists() {
        return Err(
            anyhow::anyhow!("{}: no such tests file or directory", opts.tests.display()).into(),
        );
    }
    let tests_dir = if opts.tests.is_dir() {
        opts.tests.clone()
    } else {
        super::super::dir_of(&opts.tests)
    };
    let cwd = opts.cwd.clone().unwrap_or(tests_dir);
    if !cwd.is_dir() {
        return Err(
            anyhow::anyhow!("{}: no such directory to run the tests in", cwd.display()).into(),
        );
    }
    let (tests, not_runnable): (Vec<_>, Vec<_>) = measure::read_tests(&opts.tests, opts.form, &cwd)
        .map_err(anyhow::Error::from)?
        .into_iter()
        .partition(|t| !matches!(t, TestSpec::NotRunnable { .. }));
    let not_run: Vec<NotRun> = not_runnable
        .into_iter()
        .filter_map(|t| match t {
            TestSpec::NotRunnable { name, why } => Some(NotRun { test: name, why }),
            _ => None,
        })
        .collect();
    if tests.is_empty() {
        return Err(anyhow::anyhow!(
            "{}: no test can run ({})",
            opts.tests.display(),
            not_run.first().map_or("", |n| n.why.as_str())
        )
        .into());
    }
    Ok(Suite {
        tests,
        not_run,
        cwd,
    })
}

/// The labels file (read, or made from the program's labels), the hyperlabels, and what the
/// ledger claims of them; every file the run writes checked writable.
pub(super) struct Labelled {
    pub(super) path: PathBuf,
    pub(super) file: LabelsFile,
    pub(super) hyper_path: PathBuf,
    pub(super) hyperlabels: Vec<Hyperlabel>,
    pub(super) ledger_path: Option<PathBuf>,
    pub(super) claims: BTreeMap<u64, Claim>,
    /// The labels the ledger says a `witness` test covered.
    pub(super) shown: BTreeSet<u64>,
    pub(super) hyper_claims: BTreeMap<u64, HyperClaim>,
    pub(super) skipped: Vec<SkippedFunction>,
    pub(super) over_budget: Vec<OverBudget>,
}

pub(super) fn read_labels(opts: &MeasureOptions, program: &crate::ir::Program) -> Result<Labelled> {
    let labels_path = opts
        .labels
        .clone()
        .unwrap_or_else(|| opts.file.with_extension("labels"));
    let labels_exist = labels_path.exists();
    let labels_file = if labels_exist {
        let lf = labels::read(&labels_path)?;
        super::super::prune::check_labels_match(program, &lf, &labels_path, &opts.file)?;
        lf
    } else {
        labels_of_program(program)
    };
    for (crit, _) in &opts.fail_under {
        if let Some(c) = crit {
            if !labels_file
                .rows
                .iter()
                .any(|r| crate::report::counts::criterion_of(&r.tag) == c)
            {
                return Err(anyhow::anyhow!(
                    "--fail-under {c}: {} has no labels of that criterion",
                    opts.file.display()
                )
                .into());
            }
        }
    }
    if labels_file.rows.is_empty() {
        return Err(anyhow::anyhow!(
            "{} has no labels: measure an annotated file (`covprune annotate {} --criteria ... -o DIR`)",
            opts.file.display(),
            opts.file.display()
        )
        .into());
    }
    // What this run writes, checked before the suite runs.
    super::super::check_writable(&labels_path)?;
    let hyper_path = crate::hyper::path_of(&opts.file);
    let hyperlabels = if hyper_path.exists() {
        super::super::check_writable(&hyper_path)?;
        crate::hyper::read(&hyper_path).map_err(|e| anyhow::anyhow!(e))?
    } else {
        Vec::new()
    };
    if let Some(path) = &opts.elements {
        super::super::check_writable(path)?;
    }
    let ledger_path = opts.ledger.clone().or_else(|| {
        let p = super::super::ledger_path_of(&opts.file);
        p.exists().then_some(p)
    });
    let (claims, shown, hyper_claims, (skipped, over_budget)) = match &ledger_path {
        Some(p) => {
            let ids: Vec<u64> = labels_file.rows.iter().map(|r| r.id).collect();
            let ledger = ledger::read_bound(p, &opts.file, labels_exist.then_some(&ids[..]))?;
            (
                measure::claims_from_ledger(&ledger),
                ledger::witnessed(&ledger.labels),
                ledger::hyper_claims(&ledger),
                ledger::undecided_functions(
                    ledger
                        .labels
                        .iter()
                        .map(|l| (l.function.as_str(), &l.status)),
                ),
            )
        }
        None => Default::default(),
    };
    Ok(Labelled {
        path: labels_path,
        file: labels_file,
        hyper_path,
        hyperlabels,
        ledger_path,
        claims,
        shown,
        hyper_claims,
        skipped,
        over_budget,
    })
}

/// The original program: the one given, or the one the build record beside the file names;
/// gone, it is an error unless the check is off.
pub(super) fn original_of(opts: &MeasureOptions) -> Result<Option<PathBuf>> {
    let record = crate::report::build::read_beside(&opts.file).map_err(anyhow::Error::from)?;
    let original = opts
        .original
        .clone()
        .or_else(|| record.as_ref().map(|r| r.original.clone()));
    if let Some(o) = original
        .as_ref()
        .filter(|_| opts.check_behaviour != BehaviourCheck::Off)
    {
        if !o.is_file() {
            return Err(anyhow::anyhow!(
                "the original program {} is gone (needed to check the annotation; --no-check-behaviour skips it)",
                o.display()
            )
            .into());
        }
    }
    Ok(original)
}

/// The program the suite's runs are compared with, or why they are not.
pub(super) fn behaviour_check(
    opts: &MeasureOptions,
    tests: &[TestSpec],
    original: &Option<PathBuf>,
) -> Result<(Option<PathBuf>, Option<String>)> {
    let only_drivers = tests.iter().all(|t| matches!(t, TestSpec::Driver { .. }));
    Ok(match (opts.check_behaviour, original) {
        (BehaviourCheck::Off, _) => (None, Some("--no-check-behaviour".to_string())),
        (_, _) if only_drivers => (
            None,
            Some("test drivers include the annotated file itself".to_string()),
        ),
        (BehaviourCheck::On, None) => {
            return Err(anyhow::anyhow!(
                "--check-behaviour needs the original program: give --original FILE (no build record beside {})",
                opts.file.display()
            )
            .into())
        }
        (BehaviourCheck::Auto, None) => (
            None,
            Some("the original program is unknown (give --original FILE)".to_string()),
        ),
        (BehaviourCheck::Auto, Some(_)) if tests.len() > AUTO_CHECK_MAX_TESTS => (
            None,
            Some(format!(
                "{} tests, over {AUTO_CHECK_MAX_TESTS} (--check-behaviour runs them on the original too)",
                tests.len()
            )),
        ),
        (_, Some(o)) => (Some(o.clone()), None),
    })
}
