//! `project`: every translation unit of a compilation database annotated into an output tree
//! (the sources' tree kept), then pruned with the verdict cache, one ledger per file and one
//! summary for the whole project; and `cache stats|clear`. A file that fails (C the front end
//! refuses, a preprocessor error) is reported and the others go on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::annotate::{annotate, AnnotateOptions};
use super::error::Result;
use super::prune::{pool_error, prepare, CacheUse, Execution, PruneOptions, PruneOutcome};
use crate::cache::{CacheStats, VerdictCache};
use crate::console::print_err;
use crate::frontend::{preprocess, PreprocessOptions};
use crate::ir::import::Imports;
use crate::prune::link::{
    defined_twice, externals_for, imports_for, interface_of, project_exports, Interface,
};
use crate::prune::pool;
use crate::prune::PruneConfig;
use crate::report::PruneSummary;
use crate::vc::ExternalEffects;

#[derive(Clone, Debug)]
pub struct ProjectOptions {
    /// `compile_commands.json`, or the directory holding it.
    pub database: PathBuf,
    /// Globs a file must match (its path relative to the sources' root, or absolute) to be
    /// taken; none: every C file of the database.
    pub files: Vec<String>,
    /// How each file is annotated (its `file` and `out_dir` are set per file).
    pub annotate: AnnotateOptions,
    pub out_dir: PathBuf,
    pub config: PruneConfig,
    pub execution: Execution,
    /// The verdict cache's directory (none: prove everything).
    pub cache: Option<PathBuf>,
    pub progress: bool,
    /// Print no notes on stderr.
    pub quiet: bool,
    /// Prove only shard K of N of each file's functions (`project merge` joins them).
    pub shard: Option<(usize, usize)>,
    /// Prune each file knowing what the other files' functions it calls may write (else
    /// each file alone, as per-file runs do).
    pub cross_file: bool,
    /// Also encode small functions of other files in place of their calls (with
    /// `cross_file`).
    pub inline_across_files: bool,
    /// Which files' statics are open to code outside them (tests that include the source).
    pub open_statics: super::inclusion::OpenStatics,
}

#[derive(Debug, Serialize)]
pub struct ProjectReport {
    pub database: String,
    /// The directory the files' paths are relative to.
    pub root: String,
    pub out_dir: String,
    pub files: Vec<FileReport>,
    /// Files that could not be annotated or pruned, with why.
    pub failures: Vec<FileFailure>,
    /// The files' times are what the workers spent on each; the total's is the wall clock.
    pub total: PruneSummary,
    pub cache: Option<CacheUse>,
    /// The shard this run proved, when it proved one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<(usize, usize)>,
}

#[derive(Debug, Serialize)]
pub struct FileReport {
    /// Relative to the root.
    pub file: String,
    pub annotated: String,
    /// The ledger (none for a file without labels).
    pub ledger: Option<String>,
    pub summary: PruneSummary,
    pub cache: Option<CacheUse>,
    /// The shard file a `--shard` run wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard_file: Option<String>,
    /// Its static functions and variables were taken as reached from outside it: no claim
    /// rests on "all their callers are in this file".
    pub statics_open: bool,
    /// The database's entries that include this file's source (relative to the root).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub included_by: Vec<String>,
    /// Labels in code the file's configuration compiles out (not objectives).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compiled_out: Vec<crate::report::sites::CompiledOutLabels>,
}

#[derive(Debug, Serialize)]
pub struct FileFailure {
    pub file: String,
    pub error: String,
}

impl ProjectReport {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{} files of {} (root {}), annotated into {}\n",
            self.files.len() + self.failures.len(),
            self.database,
            self.root,
            self.out_dir
        );
        out.push_str(&format!(
            "{:<32} {:>7} {:>10} {:>9} {:>8} {:>8} {:>8} {:>9}\n",
            "file", "labels", "infeasible", "duplicate", "subsumed", "unknown", "reused", "cpu (s)"
        ));
        // The files' times are what the workers spent on each (they overlap): CPU seconds,
        // summed in the total row; the wall clock is printed apart.
        let line = |name: &str, s: &PruneSummary, reused: String| {
            format!(
                "{:<32} {:>7} {:>10} {:>9} {:>8} {:>8} {:>8} {:>9.1}\n",
                name,
                s.labels,
                s.infeasible,
                s.duplicate_step2 + s.duplicate_step3,
                s.subsumed,
                s.unknown,
                reused,
                s.total_ms as f64 / 1000.0
            )
        };
        let reused = |c: &Option<CacheUse>| {
            c.map_or_else(
                || "-".to_string(),
                |c| format!("{}/{}", c.reused, c.reused + c.proved),
            )
        };
        for f in &self.files {
            out.push_str(&line(&f.file, &f.summary, reused(&f.cache)));
        }
        let cpu = PruneSummary {
            total_ms: self.files.iter().map(|f| f.summary.total_ms).sum(),
            ..self.total.clone()
        };
        out.push_str(&line("total", &cpu, reused(&self.cache)));
        out.push_str(&format!(
            "wall clock: {:.1} s\n",
            self.total.total_ms as f64 / 1000.0
        ));
        out.push_str("\nper criterion, all files:\n");
        out.push_str(&self.total.to_text());
        for f in self.files.iter().filter(|f| !f.included_by.is_empty()) {
            out.push_str(&format!(
                "{}: included by {}: {}\n",
                f.file,
                f.included_by.join(", "),
                if f.statics_open {
                    "its statics are taken as called from outside it"
                } else {
                    "its statics are taken as called only from it (--open-statics none)"
                }
            ));
        }
        for f in &self.files {
            if let Some(note) = crate::report::sites::compiled_out_note(&f.file, &f.compiled_out) {
                out.push_str(&note);
                out.push('\n');
            }
        }
        for f in &self.failures {
            out.push_str(&format!("failed: {}: {}\n", f.file, f.error));
        }
        if let Some((k, n)) = self.shard {
            out.push_str(&format!(
                "shard {k}/{n}: wrote one shard file per file; once the {n} shards' files are in {}: covprune project merge -o {}\n",
                self.out_dir, self.out_dir
            ));
        }
        out
    }
}

/// The file `project` leaves in its output directory for `project measure`: where the sources
/// are and, per file, its annotated copy and ledger (paths relative to the output directory,
/// so that it can be moved).
pub const MANIFEST: &str = "covprune-project.json";

#[derive(Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub database: String,
    pub root: String,
    pub files: Vec<ManifestFile>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ManifestFile {
    /// Relative to the root.
    pub file: String,
    pub annotated: String,
    pub ledger: Option<String>,
}

impl Manifest {
    fn of(report: &ProjectReport, out_dir: &Path) -> Manifest {
        let out = out_dir
            .canonicalize()
            .unwrap_or_else(|_| out_dir.to_path_buf());
        let relative = |p: &str| {
            let p = Path::new(p);
            let abs = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
            abs.strip_prefix(&out)
                .map_or(abs.clone(), Path::to_path_buf)
                .display()
                .to_string()
        };
        Manifest {
            database: report.database.clone(),
            root: report.root.clone(),
            files: report
                .files
                .iter()
                .map(|f| ManifestFile {
                    file: f.file.clone(),
                    annotated: relative(&f.annotated),
                    ledger: f.ledger.as_deref().map(relative),
                })
                .collect(),
        }
    }

    /// The manifest of output directory `out_dir`.
    pub fn read(out_dir: &Path) -> Result<Manifest> {
        let path = out_dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            anyhow::anyhow!(
                "{}: {e} (is {} the output directory of `covprune project`?)",
                path.display(),
                out_dir.display()
            )
        })?;
        Ok(serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}: malformed: {e}", path.display()))?)
    }
}

/// The deepest directory holding every file.
fn common_root(files: &[PathBuf]) -> PathBuf {
    let mut root: Option<PathBuf> = None;
    for f in files {
        let dir = f.parent().unwrap_or(Path::new("/")).to_path_buf();
        root = Some(match root {
            None => dir,
            Some(r) => {
                let mut r = r;
                while !dir.starts_with(&r) {
                    if !r.pop() {
                        break;
                    }
                }
                r
            }
        });
    }
    root.unwrap_or_else(|| PathBuf::from("/"))
}

/// The database's C files that `globs` select (all when there are none).
fn select(files: Vec<PathBuf>, root: &Path, globs: &[String]) -> Result<Vec<PathBuf>> {
    if globs.is_empty() {
        return Ok(files);
    }
    let mut builder = globset::GlobSetBuilder::new();
    for g in globs {
        let glob = globset::Glob::new(g).map_err(|e| anyhow::anyhow!("--files {g}: {e}"))?;
        builder.add(glob);
    }
    let set = builder
        .build()
        .map_err(|e| anyhow::anyhow!("--files: {e}"))?;
    Ok(files
        .into_iter()
        .filter(|f| set.is_match(f) || f.strip_prefix(root).is_ok_and(|r| set.is_match(r)))
        .collect())
}

pub fn project(opts: &ProjectOptions) -> Result<ProjectReport> {
    crate::frontend::preprocess::keep_texts_for_this_run();
    let db_file = preprocess::database_file(&opts.database);
    if !db_file.exists() {
        return Err(anyhow::anyhow!("{}: no such file", db_file.display()).into());
    }
    let db_file = db_file.canonicalize().unwrap_or(db_file);
    let all = preprocess::database_files(&db_file)?;
    // The sources' tree: from the database's directory when it holds them all (a project's
    // top directory), else from their deepest common directory (an out-of-tree build).
    let db_dir = db_file.parent().map(Path::to_path_buf).unwrap_or_default();
    let root = if all.iter().all(|f| f.starts_with(&db_dir)) {
        db_dir
    } else {
        common_root(&all)
    };
    let files = select(all.clone(), &root, &opts.files)?;
    if files.is_empty() {
        return Err(anyhow::anyhow!(
            "no C file of {} matches {}",
            db_file.display(),
            if opts.files.is_empty() {
                "(the database has none)".to_string()
            } else {
                opts.files.join(", ")
            }
        )
        .into());
    }
    std::fs::create_dir_all(&opts.out_dir)
        .map_err(|e| super::error::write_failed(&opts.out_dir, e))?;
    // Sources other entries include (tests reaching a file's statics).
    let included = super::inclusion::included_sources(&db_file, &all, &opts.annotate.preprocess);
    let included_by = |rel: &Path| -> Vec<PathBuf> {
        let file = root.join(rel);
        let file = file.canonicalize().unwrap_or(file);
        included.get(&file).cloned().unwrap_or_default()
    };
    let statics_open = |rel: &Path| match opts.open_statics {
        super::inclusion::OpenStatics::All => true,
        super::inclusion::OpenStatics::None => false,
        super::inclusion::OpenStatics::Auto => !included_by(rel).is_empty(),
    };
    let mut reports = Vec::new();
    let mut failures = Vec::new();
    let mut fail = |name: String, e: super::Error| {
        if !opts.quiet {
            print_err(&format!("error: {name}: {e}\n"));
        }
        failures.push(FileFailure {
            file: name,
            error: e.to_string(),
        });
    };
    // Every file annotated first, then each file's summaries of the functions it exports, so
    // that each file is pruned knowing what the other files' functions it calls may write.
    let (loaded, failed) = annotate_all(opts, &db_file, &files, &root);
    for (name, e) in failed {
        fail(name, e);
    }
    let interfaces: Vec<&Interface> = loaded.iter().filter_map(|(_, _, i)| i.as_ref()).collect();
    let ambiguous = defined_twice(interfaces.iter().copied());
    let exports = project_exports(interfaces.iter().copied(), &ambiguous);
    // Every file's run prepared (inputs checked, cache looked up), then all proved from one
    // queue, then each file's ledger written.
    let started = std::time::Instant::now();
    let mut runs = Vec::new();
    for (rel, a, interface) in &loaded {
        let name = rel.display().to_string();
        if a.labels == 0 {
            reports.push(file_report(
                rel,
                a,
                None,
                PruneSummary::default(),
                None,
                None,
            ));
            continue;
        }
        let (externals, imports) = match interface {
            Some(i) => {
                let imports = imports_for(i, &interfaces, &exports, &ambiguous);
                (externals_for(i, &imports, &exports), imports)
            }
            None => Default::default(),
        };
        match prepare(&prune_options(
            opts,
            a,
            externals,
            imports,
            statics_open(rel),
        )) {
            Ok(run) => {
                if !opts.quiet {
                    for (unit, why) in &run.refused {
                        print_err(&format!(
                            "note: {name}: the functions of {unit} are not encoded in place: {why}\n"
                        ));
                    }
                }
                runs.push((rel, a, run))
            }
            Err(e) => fail(name, e),
        }
    }
    let labels: u64 = runs.iter().map(|(_, _, r)| r.labels).sum();
    let bar = crate::console::Progress::new(labels, "proving", opts.progress);
    bar.inc(runs.iter().map(|(_, _, r)| r.reused_labels()).sum());
    let proved = prove_all(
        &opts.execution,
        opts.quiet,
        runs.iter_mut().map(|(_, _, run)| run).collect(),
        &|n| bar.inc(n),
    )?;
    bar.finish();
    for ((rel, a, run), (busy_ms, results)) in runs.into_iter().zip(proved) {
        match results.and_then(|r| run.conclude(r, busy_ms)) {
            Ok(outcome) => reports.push(report_of(rel, a, outcome)),
            Err(e) => fail(rel.display().to_string(), e),
        }
    }
    reports.sort_by(|a, b| a.file.cmp(&b.file));
    let mut total = PruneSummary::total(reports.iter().map(|r| &r.summary));
    total.total_ms = started.elapsed().as_millis();
    let cache = opts.cache.as_ref().map(|_| cache_use(&reports));
    for r in &mut reports {
        let rel = PathBuf::from(&r.file);
        r.statics_open = statics_open(&rel);
        r.included_by = included_by(&rel)
            .iter()
            .map(|u| u.strip_prefix(&root).unwrap_or(u).display().to_string())
            .collect();
    }
    let report = ProjectReport {
        database: db_file.display().to_string(),
        root: root.display().to_string(),
        out_dir: opts.out_dir.display().to_string(),
        files: reports,
        failures,
        total,
        cache,
        shard: opts.shard,
    };
    write_manifest(&report, &opts.out_dir)?;
    Ok(report)
}

/// A pruned file's row: its ledger and summary, or the shard file it wrote.
fn report_of(rel: &Path, a: &Annotated, outcome: PruneOutcome) -> FileReport {
    match outcome {
        PruneOutcome::Whole(r) => file_report(rel, a, Some(r.ledger), r.summary, r.cache, None),
        PruneOutcome::Shard(s) => file_report(
            rel,
            a,
            None,
            PruneSummary::default(),
            None,
            Some(s.shard_file),
        ),
    }
}

/// The verdict cache's use, all files added up.
fn cache_use(reports: &[FileReport]) -> CacheUse {
    reports
        .iter()
        .filter_map(|r| r.cache)
        .fold(CacheUse::default(), |a, c| CacheUse {
            reused: a.reused + c.reused,
            proved: a.proved + c.proved,
            stored: a.stored + c.stored,
        })
}

/// Annotates every file, then, across files, reads each annotated one for its interface: the
/// files ready to prune (relative path, annotation, interface), and those that failed, with why.
type Loaded = Vec<(PathBuf, Annotated, Option<Interface>)>;

fn annotate_all(
    opts: &ProjectOptions,
    db_file: &Path,
    files: &[PathBuf],
    root: &Path,
) -> (Loaded, Vec<(String, super::Error)>) {
    let mut failed = Vec::new();
    let mut annotated = Vec::new();
    for file in files {
        let rel = file.strip_prefix(root).unwrap_or(file).to_path_buf();
        match annotate_one(opts, db_file, file, &rel) {
            Ok(a) => annotated.push((rel, a)),
            Err(e) => failed.push((rel.display().to_string(), e)),
        }
    }
    let mut loaded = Vec::new();
    for (rel, a) in annotated {
        let unit = rel.display().to_string();
        let interface = match opts.cross_file {
            true => super::load(&a.path, &a.preprocess)
                .map(|l| Some(interface_of(&l.program, &unit, opts.inline_across_files))),
            false => Ok(None),
        };
        match interface {
            Ok(p) => loaded.push((rel, a, p)),
            Err(e) => failed.push((rel.display().to_string(), e)),
        }
    }
    (loaded, failed)
}

/// Proves every prepared run's functions: from one queue of worker processes (each run's
/// unit, if it has any), or in this process one run after another. Per run, the time its
/// proofs took and their results.
fn prove_all(
    execution: &Execution,
    quiet: bool,
    mut runs: Vec<&mut super::prune::Prepared>,
    done: &(dyn Fn(u64) + Sync),
) -> Result<Vec<(u128, Result<crate::prune::Proved>)>> {
    Ok(match execution {
        Execution::Pool { exe } => {
            // Per run: whether it has a unit in the pool (runs with nothing to prove have
            // none), or why its unit could not be made.
            let mut units = Vec::new();
            let mut has_unit = Vec::new();
            for run in runs.iter_mut() {
                has_unit.push(run.unit().map(|unit| {
                    let some = unit.is_some();
                    units.extend(unit);
                    some
                }));
                run.release();
            }
            let workers = runs.first().map_or(1, |r| r.config.jobs);
            if !quiet {
                let functions: usize = units.iter().map(pool::Unit::functions).sum();
                print_err(&format!(
                    "proving {functions} functions of {} files with {workers} workers\n",
                    units.len()
                ));
            }
            // One outcome per unit, in the order of the units: the runs that have one, in order.
            let mut outcomes = pool::prove_units(exe, workers, units, done)
                .map_err(pool_error)?
                .into_iter();
            has_unit
                .into_iter()
                .map(|has| match has {
                    Err(e) => (0, Err(e)),
                    Ok(false) => (0, Ok(crate::prune::Proved::default())),
                    Ok(true) => match outcomes.next() {
                        Some(o) => (u128::from(o.busy_ms), o.results.map_err(pool_error)),
                        None => (
                            0,
                            Err(super::Error::internal(anyhow::anyhow!(
                                "the pool gave fewer outcomes than it had units"
                            ))),
                        ),
                    },
                })
                .collect()
        }
        Execution::InProcess => runs
            .into_iter()
            .map(|run| {
                let t0 = std::time::Instant::now();
                let results = run.prove_in_process(done);
                (t0.elapsed().as_millis(), Ok(results))
            })
            .collect(),
    })
}

fn write_manifest(report: &ProjectReport, out_dir: &Path) -> Result<()> {
    let manifest = out_dir.join(MANIFEST);
    let text = serde_json::to_string_pretty(&Manifest::of(report, out_dir))
        .map_err(super::Error::internal)?;
    crate::report::labels::write_atomic(&manifest, text + "\n")
        .map_err(|e| super::error::write_failed(&manifest, e))
}

/// The shard files beside an annotated file (`STEM.shard-K-of-N.json`), sorted.
fn shard_files_of(annotated: &Path) -> Vec<PathBuf> {
    let stem = annotated
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let prefix = format!("{stem}.shard-");
    let mut out: Vec<PathBuf> = std::fs::read_dir(super::dir_of(annotated))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with(&prefix) && n.ends_with(".json")
            })
        })
        .collect();
    out.sort();
    out
}

/// `project merge`: joins, file by file, the shard files that `project --shard K/N` runs left
/// in `out_dir` into the ledgers one unsharded run writes; the summary as `project` prints it.
pub fn project_merge(out_dir: &Path) -> Result<ProjectReport> {
    let manifest = Manifest::read(out_dir)?;
    let db = PathBuf::from(&manifest.database);
    let mut reports = Vec::new();
    let mut failures = Vec::new();
    for f in &manifest.files {
        let annotated = out_dir.join(&f.annotated);
        let shards = shard_files_of(&annotated);
        let merged = if shards.is_empty() {
            let labels = crate::report::labels::read(&annotated.with_extension("labels"))?;
            if labels.rows.is_empty() {
                Ok(None)
            } else {
                Err(anyhow::anyhow!("no shard file beside {}", annotated.display()).into())
            }
        } else {
            let preprocess = PreprocessOptions {
                compile_commands: Some(db.clone()),
                ..PreprocessOptions::default()
            };
            super::options_for(&annotated, &preprocess).and_then(|preprocess| {
                super::prune::merge(&super::prune::MergeOptions {
                    shards,
                    labels: None,
                    preprocess,
                    timings: false,
                })
                .map(Some)
            })
        };
        match merged {
            Ok(r) => reports.push(FileReport {
                file: f.file.clone(),
                annotated: annotated.display().to_string(),
                ledger: r.as_ref().map(|r| r.ledger.clone()),
                summary: r.map(|r| r.summary).unwrap_or_default(),
                cache: None,
                shard_file: None,
                statics_open: false,
                included_by: Vec::new(),
                compiled_out: crate::report::sites::compiled_out_beside(&annotated),
            }),
            Err(e) => failures.push(FileFailure {
                file: f.file.clone(),
                error: e.to_string(),
            }),
        }
    }
    let report = ProjectReport {
        database: manifest.database.clone(),
        root: manifest.root.clone(),
        out_dir: out_dir.display().to_string(),
        total: PruneSummary::total(reports.iter().map(|r| &r.summary)),
        files: reports,
        failures,
        cache: None,
        shard: None,
    };
    write_manifest(&report, out_dir)?;
    Ok(report)
}

/// A file of the project annotated into its place in the output tree.
struct Annotated {
    path: PathBuf,
    labels: usize,
    /// Its preprocessing options (the database's entry, the build record beside it).
    preprocess: PreprocessOptions,
    /// Labels in code its configuration compiles out, as `annotate` counted them.
    compiled_out: Vec<crate::report::sites::CompiledOutLabels>,
}

fn annotate_one(opts: &ProjectOptions, db: &Path, file: &Path, rel: &Path) -> Result<Annotated> {
    let preprocess = PreprocessOptions {
        compile_commands: Some(db.to_path_buf()),
        ..opts.annotate.preprocess.clone()
    };
    let out_dir = opts.out_dir.join(rel.parent().unwrap_or(Path::new("")));
    let annotated = annotate(&AnnotateOptions {
        file: file.to_path_buf(),
        out_dir: Some(out_dir),
        preprocess: preprocess.clone(),
        ..opts.annotate.clone()
    })?;
    let path = PathBuf::from(&annotated.annotated);
    Ok(Annotated {
        preprocess: super::options_for(&path, &preprocess)?,
        path,
        labels: annotated.labels,
        compiled_out: annotated.compiled_out,
    })
}

/// How one annotated file of the project is pruned, other files' functions known by
/// `externals`.
fn prune_options(
    opts: &ProjectOptions,
    annotated: &Annotated,
    externals: BTreeMap<String, ExternalEffects>,
    imports: Imports,
    open_statics: bool,
) -> PruneOptions {
    let mut config = opts.config.clone();
    config.encode.externals = externals;
    config.open_statics = open_statics;
    PruneOptions {
        file: annotated.path.clone(),
        labels: None,
        preprocess: annotated.preprocess.clone(),
        config,
        resume: false,
        shard: opts.shard,
        timings: false,
        execution: opts.execution.clone(),
        progress: false,
        quiet: true,
        cache: opts.cache.clone(),
        imports,
    }
}

fn file_report(
    rel: &Path,
    annotated: &Annotated,
    ledger: Option<String>,
    summary: PruneSummary,
    cache: Option<CacheUse>,
    shard_file: Option<String>,
) -> FileReport {
    FileReport {
        file: rel.display().to_string(),
        annotated: annotated.path.display().to_string(),
        ledger,
        summary,
        cache,
        shard_file,
        statics_open: false,
        included_by: Vec::new(),
        compiled_out: annotated.compiled_out.clone(),
    }
}

/// `cache stats`.
pub fn cache_stats(dir: &Path) -> Result<CacheStats> {
    Ok(VerdictCache::open(dir)?.stats()?)
}

/// `cache clear`: returns the stats after clearing, and how many results were removed.
pub fn cache_clear(dir: &Path) -> Result<(u64, CacheStats)> {
    let cache = VerdictCache::open(dir)?;
    let removed = cache.clear()?;
    Ok((removed, cache.stats()?))
}
