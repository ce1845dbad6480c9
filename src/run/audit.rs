//! `audit`: reads the ledger (pruning first, with the default options, when there is none),
//! computes the redundancy report and writes the DOT, HTML and SARIF pictures asked for.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::{write_failed, Error, Result};
use super::prune::{Execution, PruneOptions};
use crate::frontend::PreprocessOptions;
use crate::report::labels;

#[derive(Clone, Debug)]
pub struct AuditOptions {
    pub file: PathBuf,
    pub ledger: Option<PathBuf>,
    pub labels: Option<PathBuf>,
    pub dot: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub sarif: Option<PathBuf>,
    pub preprocess: PreprocessOptions,
}

#[derive(Debug, Serialize)]
pub struct AuditReport {
    pub file: String,
    #[serde(flatten)]
    pub audit: crate::audit::Audit,
    /// Actionable findings (the SARIF results: dead code, constant conditions, equivalent
    /// mutants).
    pub findings: usize,
    /// Coverage per criterion by the test suite, when the labels file holds a `measure` run's
    /// (labels only `witness` tests cover are not the suite's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Vec<super::measure::CoverageRow>>,
    /// Per criterion, what the suite leaves uncovered: proved infeasible, shown feasible by a
    /// `witness` test, or neither (when `measure` recorded coverage).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub settled: Vec<super::measure::SettledRow>,
    /// The same with the `witness` tests' labels covered too, when they cover any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage_with_witnesses: Option<Vec<super::measure::CoverageRow>>,
    /// Hyperlabels per criterion, when a `.hyperlabels` file is beside the program: how many,
    /// proved uncoverable, and covered by the last `measure`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hyperlabels: Vec<crate::hyper::report::HyperRow>,
    /// Labels in code the annotation's configuration compiles out (not objectives).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compiled_out: Vec<crate::report::sites::CompiledOutLabels>,
    /// The objectives the suite leaves uncovered, when `measure` recorded coverage.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uncovered: Vec<super::measure::Uncovered>,
}

impl AuditReport {
    pub fn to_text(&self) -> String {
        let mut out = format!("{}\n{}", self.file, self.audit.to_text());
        if let Some(note) = crate::report::sites::compiled_out_note(&self.file, &self.compiled_out)
        {
            out.push_str(&note);
            out.push('\n');
        }
        if let Some(rows) = &self.coverage {
            let table: Vec<crate::measure::Coverage> =
                rows.iter().map(|r| r.counts.clone()).collect();
            out.push_str(
                "\ncoverage by the test suite, measured by `measure` (from the labels file):\n",
            );
            out.push_str(&crate::measure::coverage_text(&table));
        }
        if !self.settled.is_empty() {
            let rows: Vec<crate::measure::Settled> =
                self.settled.iter().map(|r| r.counts.clone()).collect();
            out.push_str(&crate::measure::settled_text(&rows));
        }
        if let Some(rows) = &self.coverage_with_witnesses {
            let table: Vec<crate::measure::Coverage> =
                rows.iter().map(|r| r.counts.clone()).collect();
            out.push_str("\nwith the tests `witness` wrote too:\n");
            out.push_str(&crate::measure::coverage_text(&table));
        }
        for h in &self.hyperlabels {
            out.push_str(&format!(
                "{} hyperlabels: {}, pruned {} (uncoverable {}, duplicate {}, subsumed {}), covered {} (last measure)\n",
                h.criterion,
                h.hyperlabels,
                h.pruned(),
                h.uncoverable,
                h.duplicate,
                h.subsumed,
                h.covered
            ));
        }
        out
    }

    /// The markdown summary's figures: the suite's coverage when `measure` recorded it (else
    /// what is pruned), the objectives left uncovered, and notes on findings, functions left
    /// unknown, witness tests and compiled-out labels.
    pub fn summary(&self) -> crate::report::summary::Summary {
        use crate::console::count;
        let mut notes = Vec::new();
        let rows = match &self.coverage {
            Some(rows) => rows.iter().map(Into::into).collect(),
            None => {
                notes.push(
                    "No `measure` run is recorded in the labels file: coverage is not known."
                        .to_string(),
                );
                self.audit
                    .criteria
                    .iter()
                    .map(|c| crate::report::summary::Row {
                        criterion: c.name.clone(),
                        labels: c.labels,
                        pruned: c.pruned,
                        kept: c.labels - c.pruned,
                        covered: 0,
                        kept_covered: 0,
                        raw_percent: None,
                        cleaned_percent: None,
                    })
                    .collect()
            }
        };
        if let Some(rows) = &self.coverage_with_witnesses {
            let cleaned: Vec<String> = rows
                .iter()
                .map(|r| {
                    format!(
                        "{} {}",
                        r.counts.criterion,
                        crate::console::percent(r.cleaned_percent)
                    )
                })
                .collect();
            notes.push(format!(
                "With the tests `witness` wrote too, cleaned coverage is {}.",
                cleaned.join(", ")
            ));
        }
        if self.findings > 0 {
            notes.push(format!(
                "{} (dead code, constant conditions, equivalent mutants): `covprune audit --sarif` lists them.",
                count(self.findings as u64, "finding")
            ));
        }
        for f in &self.audit.skipped {
            notes.push(format!(
                "Not analysed: `{}` ({} left unknown): {}.",
                f.function,
                count(f.labels as u64, "label"),
                f.why
            ));
        }
        for f in &self.audit.over_budget {
            let why: Vec<String> = f.reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
            notes.push(format!(
                "Out of budget: `{}` ({} left unknown: {}).",
                f.function,
                count(f.labels as u64, "label"),
                why.join(", ")
            ));
        }
        if let Some(note) = crate::report::sites::compiled_out_note(&self.file, &self.compiled_out)
        {
            notes.push(note.trim().to_string());
        }
        crate::report::summary::Summary {
            title: format!("audit {}", self.file),
            rows,
            uncovered: self
                .uncovered
                .iter()
                .map(super::measure::Uncovered::place)
                .collect(),
            notes,
            ..Default::default()
        }
    }
}

pub fn audit(opts: &AuditOptions) -> Result<AuditReport> {
    let ledger_path = opts
        .ledger
        .clone()
        .unwrap_or_else(|| super::ledger_path_of(&opts.file));
    if !ledger_path.exists() {
        if !opts.file.exists() {
            return Err(anyhow::anyhow!("{}: no such file", opts.file.display()).into());
        }
        // No ledger yet: prune first, with the default options.
        super::prune::prune(&PruneOptions {
            file: opts.file.clone(),
            labels: None,
            preprocess: opts.preprocess.clone(),
            config: super::prune::Config::default(),
            resume: false,
            shard: None,
            timings: false,
            execution: Execution::InProcess,
            progress: false,
            quiet: true,
            cache: None,
            imports: Default::default(),
        })?;
    }
    let (_, labels_file, ledger) =
        super::labels_and_ledger(&opts.file, opts.labels.as_deref(), &ledger_path)?;
    let rows = &ledger.labels;
    let report = crate::audit::audit(rows);
    // Where each label comes from: the original file and line (labels file), else the
    // annotated file.
    let mut origin: BTreeMap<u64, (String, usize)> = BTreeMap::new();
    for r in labels_file.iter().flat_map(|lf| &lf.rows) {
        if let Some((f, l)) = r.origin_loc.rsplit_once(':') {
            if let Ok(l) = l.trim().parse() {
                origin.insert(r.id, (f.trim().to_string(), l));
            }
        }
    }
    let write =
        |p: &Path, text: &str| labels::write_atomic(p, text).map_err(|e| write_failed(p, e));
    if let Some(p) = &opts.dot {
        write(p, &crate::audit::dot(rows, true))?;
    }
    let root = origin_root(&opts.file)?;
    let sarif = crate::audit::sarif(rows, &origin, &root, env!("CARGO_PKG_VERSION"));
    let findings = sarif["runs"][0]["results"].as_array().map_or(0, Vec::len);
    if let Some(p) = &opts.sarif {
        write(
            p,
            &(serde_json::to_string_pretty(&sarif).map_err(Error::internal)? + "\n"),
        )?;
    }
    let claims = crate::measure::claims_from_ledger(&ledger);
    // Coverage, when a `measure` run recorded it in the labels file.
    let measured = labels_file
        .as_ref()
        .filter(|lf| lf.rows.iter().any(|r| r.is_measured()));
    let coverage = measured.map(|lf| recorded_coverage(lf, &ledger, &claims));
    let hyper_path = crate::hyper::path_of(&opts.file);
    let hyperlabels = if hyper_path.exists() {
        let hls = crate::hyper::read(&hyper_path).map_err(|e| anyhow::anyhow!(e))?;
        let tags: BTreeMap<u64, String> = rows.iter().map(|l| (l.id, l.tag.clone())).collect();
        crate::hyper::report::rows_of_file(
            &hls,
            &tags,
            &crate::report::ledger::hyper_claims(&ledger),
        )
    } else {
        Vec::new()
    };
    let title = super::file_name(&opts.file);
    if let Some(p) = &opts.html {
        let page = html_page(
            opts,
            &title,
            &report,
            rows,
            &origin,
            &root,
            coverage.as_ref(),
        )?;
        write(p, &page)?;
    }
    // What the suite leaves uncovered: proved infeasible, covered by a `witness` test (the
    // ledger names it, or only a witness driver covers it in the labels file), or neither.
    let settled = match (measured, &coverage) {
        (Some(lf), Some((_, covered, _, _))) => {
            let list: Vec<(u64, String)> = lf.rows.iter().map(|r| (r.id, r.tag.clone())).collect();
            let mut shown = crate::report::ledger::witnessed(rows);
            shown.extend(
                lf.rows
                    .iter()
                    .filter(|r| r.status == "covered" && !covered.contains(&r.id))
                    .map(|r| r.id),
            );
            crate::measure::settled(&list, &claims, covered, &shown)
                .iter()
                .map(super::measure::SettledRow::of)
                .collect()
        }
        _ => Vec::new(),
    };
    let uncovered = match (measured, &coverage) {
        (Some(lf), Some((_, covered, _, _))) => {
            super::measure::uncovered_in(lf, &claims, covered, &opts.file)
        }
        _ => Vec::new(),
    };
    Ok(AuditReport {
        uncovered,
        settled,
        file: title,
        audit: report,
        findings,
        coverage_with_witnesses: coverage
            .as_ref()
            .and_then(|(_, _, _, w)| w.as_ref())
            .map(|table| table.iter().map(super::measure::CoverageRow::of).collect()),
        coverage: coverage
            .map(|(table, _, _, _)| table.iter().map(super::measure::CoverageRow::of).collect()),
        hyperlabels,
        compiled_out: crate::report::sites::compiled_out_beside(&opts.file),
    })
}

/// What a `measure` run recorded in the labels file: the suite's coverage, the labels it
/// covers, each label's covering tests, and the coverage with the witnesses' tests too when
/// they add some.
type Recorded = (
    Vec<crate::measure::Coverage>,
    std::collections::BTreeSet<u64>,
    BTreeMap<u64, String>,
    Option<Vec<crate::measure::Coverage>>,
);

fn recorded_coverage(
    lf: &labels::LabelsFile,
    ledger: &crate::report::ledger::Ledger,
    claims: &BTreeMap<u64, crate::measure::Claim>,
) -> Recorded {
    let list: Vec<(u64, String)> = lf.rows.iter().map(|r| (r.id, r.tag.clone())).collect();
    let with_witnesses: std::collections::BTreeSet<u64> = lf
        .rows
        .iter()
        .filter(|r| r.status == "covered")
        .map(|r| r.id)
        .collect();
    // A label whose only covering test is the `witness` test the ledger names (its driver
    // number alone) is not the suite's.
    let witness_only = |id: &u64| {
        let number = |t: &str| {
            t.strip_prefix("TC_")
                .or_else(|| t.strip_prefix("CRASH_"))
                .and_then(|t| t.strip_suffix(".c"))
                .map(str::to_string)
        };
        let row = lf.rows.iter().find(|r| r.id == *id);
        ledger
            .labels
            .iter()
            .find(|l| l.id == *id)
            .and_then(|l| l.witness.as_deref())
            .and_then(number)
            .is_some_and(|n| row.is_some_and(|r| r.drivers.split_whitespace().all(|d| d == n)))
    };
    let covered: std::collections::BTreeSet<u64> = with_witnesses
        .iter()
        .filter(|id| !witness_only(id))
        .copied()
        .collect();
    let witnessed = (covered.len() < with_witnesses.len())
        .then(|| crate::measure::coverage(&list, claims, &with_witnesses));
    let drivers: BTreeMap<u64, String> = lf
        .rows
        .iter()
        .map(|r| (r.id, r.drivers.trim().to_string()))
        .collect();
    (
        crate::measure::coverage(&list, claims, &covered),
        covered,
        drivers,
        witnessed,
    )
}

/// The audit's HTML page: the original source when it is at hand (else the annotated file),
/// each label's predicate as the source writes it, and the recorded coverage.
fn html_page(
    opts: &AuditOptions,
    title: &str,
    report: &crate::audit::Audit,
    rows: &[crate::audit::Row],
    origin: &BTreeMap<u64, (String, usize)>,
    root: &Path,
    coverage: Option<&Recorded>,
) -> Result<String> {
    // The original source when it is at hand, else the annotated file.
    let dir = opts.file.parent().unwrap_or(Path::new("."));
    let original_name = origin.values().next().map(|(f, _)| f.clone());
    let found = original_name.as_ref().and_then(|f| {
        [root.join(f), dir.join(f), dir.join("..").join(f)]
            .into_iter()
            .find_map(|c| std::fs::read(c).ok())
            .map(|bytes| crate::frontend::text_of_bytes(&bytes))
    });
    let (source, line_of) = match found {
        Some(src) => (src, origin.iter().map(|(id, (_, l))| (*id, *l)).collect()),
        None => {
            let lines = rows
                .iter()
                .filter_map(|l| {
                    let line = l.loc.rsplit_once(':')?.1.parse().ok()?;
                    Some((l.id, line))
                })
                .collect();
            let text = std::fs::read(&opts.file)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", opts.file.display()))?;
            (String::from_utf8_lossy(&text).into_owned(), lines)
        }
    };
    let graphs = crate::audit::svgs(rows);
    // Each label's predicate as the source writes it (conditions the annotation evaluates
    // into temporaries written out), where the annotated file says.
    let written = std::fs::read(&opts.file)
        .map(|t| crate::frontend::sites::source_predicates(&t))
        .unwrap_or_default();
    let shown: Vec<_> = rows
        .iter()
        .cloned()
        .map(|mut r| {
            if let Some(text) = written.get(&r.id.to_string()) {
                r.predicate = text.clone();
            }
            r
        })
        .collect();
    Ok(crate::audit::html(
        title,
        report,
        &shown,
        &source,
        &line_of,
        &graphs,
        coverage.map(|(table, covered, drivers, _)| crate::audit::HtmlCoverage {
            table,
            covered,
            drivers,
        }),
    ))
}

/// The original's directory (from the build record `annotate` wrote), where the labels file's
/// origins are; else the annotated file's: SARIF's `SRCROOT`.
pub fn origin_root(file: &Path) -> Result<std::path::PathBuf> {
    let original = crate::report::build::read_beside(file)
        .map_err(anyhow::Error::from)?
        .map(|r| r.original);
    let root = original
        .as_deref()
        .and_then(Path::parent)
        .map_or_else(|| super::dir_of(file), Path::to_path_buf);
    Ok(root.canonicalize().unwrap_or(root))
}
