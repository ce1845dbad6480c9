//! `prune` and `merge`: read and check the inputs, prove (in this process or in the worker
//! pool, whole or one shard), then write the ledger and the labels file and return the run's
//! report. Bad input is refused before anything is written.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{write_failed, Error, Result};
use crate::cache::VerdictCache;
use crate::console::print_err;
use crate::frontend::PreprocessOptions;
use crate::ir::import::{Imports, Refused};
use crate::ir::Program;
use crate::prune::journal::{self, Journal};
use crate::prune::shard::{self, ShardFile};
use crate::prune::{self as engine, pool, PruneConfig, Reason};
use crate::report::labels::{self, LabelsFile};
use crate::report::ledger;
use crate::report::PruneSummary;

mod merge;
mod written;

pub use crate::prune::pool::is_worker;
pub use crate::prune::shard::parse as parse_shard;
pub use crate::prune::PruneConfig as Config;
pub use crate::smt::SolverConfig;
pub use merge::{merge, MergeOptions};
use written::{finish, labels_of_skipped_functions};

pub use crate::prune::config::DEFAULT_FUNCTION_BUDGET_S;
pub use crate::prune::faults::Faults;
pub use crate::smt::{rlimit_for, DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS};

/// Where the prover runs.
#[derive(Clone, Debug)]
pub enum Execution {
    /// Threads of this process.
    InProcess,
    /// Worker processes of `exe` (this executable, whatever its name): a solver crash costs
    /// only the function it was proving.
    Pool { exe: PathBuf },
}

#[derive(Clone, Debug)]
pub struct PruneOptions {
    /// The annotated C file.
    pub file: PathBuf,
    /// The labels file (default: the file's name with `.labels`, if it exists).
    pub labels: Option<PathBuf>,
    pub preprocess: PreprocessOptions,
    pub config: PruneConfig,
    /// Skip what the journal of an interrupted run holds.
    pub resume: bool,
    /// Prove only shard K of N of the functions.
    pub shard: Option<(usize, usize)>,
    /// Record solver times in the ledger.
    pub timings: bool,
    pub execution: Execution,
    /// Draw a progress bar (on a terminal).
    pub progress: bool,
    /// Print no notes on stderr (warnings are printed).
    pub quiet: bool,
    /// The verdict cache's directory: functions whose results it holds are not proved again,
    /// and the results proved are stored in it.
    pub cache: Option<PathBuf>,
    /// Functions of other files merged into the program (`project`).
    pub imports: Imports,
}

/// The result of `prune`: the whole run's, or one shard's.
#[derive(Debug, Serialize)]
#[serde(untagged)]
// One outcome per run: boxing the larger variant would save nothing.
#[allow(clippy::large_enum_variant)]
pub enum PruneOutcome {
    Whole(PruneReport),
    Shard(ShardReport),
}

#[derive(Debug, Serialize)]
pub struct PruneReport {
    pub file: String,
    pub ledger: String,
    pub labels_file: String,
    #[serde(flatten)]
    pub summary: PruneSummary,
    /// Functions the front end skipped, with the labels left unknown in each.
    pub skipped_functions: Vec<SkippedFunction>,
    /// What the verdict cache gave and took (runs with a cache only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheUse>,
    /// The `.hyperlabels` file beside the program: per criterion, its hyperlabels and how
    /// many were pruned (none without the file).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hyperlabels: Vec<crate::hyper::report::PrunedRow>,
    /// Labels in code the annotation's configuration compiles out (not objectives).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compiled_out: Vec<crate::report::sites::CompiledOutLabels>,
}

/// Functions whose results a run took from the verdict cache, proved, and stored.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct CacheUse {
    pub reused: usize,
    pub proved: usize,
    pub stored: usize,
}

#[derive(Debug, Serialize)]
pub struct SkippedFunction {
    pub name: String,
    pub loc: String,
    pub reason: String,
    pub labels: usize,
}

#[derive(Debug, Serialize)]
pub struct ShardReport {
    pub shard: (usize, usize),
    pub functions: usize,
    pub labels: u64,
    pub shard_file: String,
}

impl PruneOutcome {
    pub fn to_text(&self) -> String {
        match self {
            PruneOutcome::Whole(r) => format!(
                "{}\n{}{}{}wrote {} and {}\n",
                r.file,
                r.summary.to_text(),
                r.hyperlabels
                    .iter()
                    .map(crate::hyper::report::PrunedRow::to_text)
                    .collect::<String>(),
                crate::report::sites::compiled_out_note(&r.file, &r.compiled_out)
                    .map(|n| n + "\n")
                    .unwrap_or_default(),
                r.labels_file,
                r.ledger
            ),
            PruneOutcome::Shard(s) => format!(
                "shard {}/{}: {} functions, {} label occurrences; wrote {}\n",
                s.shard.0, s.shard.1, s.functions, s.labels, s.shard_file
            ),
        }
    }
}

/// What a pool worker needs to load the program as the supervisor did.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct WorkerInput {
    file: PathBuf,
    labels: Option<PathBuf>,
    preprocess: PreprocessOptions,
    #[serde(default, skip_serializing_if = "Imports::is_empty")]
    imports: Imports,
    #[serde(default)]
    open_statics: bool,
}

/// The inputs of a run, read and checked before anything is proved.
pub(super) struct Inputs {
    program: Program,
    /// The annotated file's bytes, read once: what the journal, shard and ledger hash.
    source: Vec<u8>,
    labels_path: Option<PathBuf>,
    labels_file: Option<LabelsFile>,
    /// Ids of the labels file that the compiled program lacks.
    file_only: Vec<u64>,
    /// Other files whose functions were not merged, with why.
    refused: Vec<(String, Refused)>,
    /// The `.hyperlabels` file beside the program, read before anything is proved.
    hyperlabels: Option<Vec<crate::hyper::Hyperlabel>>,
}

/// Checks a labels file against the program (see [`LabelsFile::check_against`]).
pub fn check_labels_match(
    program: &crate::ir::Program,
    lf: &LabelsFile,
    lp: &Path,
    file: &Path,
) -> Result<Vec<u64>> {
    lf.check_against(program).map_err(|e| {
        anyhow::anyhow!("{} does not match {}: {e}", lp.display(), file.display()).into()
    })
}

pub(super) fn read_inputs(
    file: &Path,
    labels: Option<PathBuf>,
    preprocess: &PreprocessOptions,
    imports: &Imports,
    open_statics: bool,
) -> Result<Inputs> {
    let mut program = super::load(file, preprocess)?.program;
    // A bundle refused (a name clash) is left out: its calls stay calls of unknown code.
    let refused = imports.merge_into(&mut program);
    if open_statics {
        program.open_statics();
    }
    let source = read_file(file)?;
    let labels_path = labels.or_else(|| {
        let p = file.with_extension("labels");
        p.exists().then_some(p)
    });
    let labels_file = match &labels_path {
        Some(p) => Some(labels::read(p)?),
        None => None,
    };
    let ir_ids: BTreeSet<u64> = program.label_ids().collect();
    let file_only: Vec<u64> = match (&labels_file, &labels_path) {
        (Some(lf), Some(lp)) => check_labels_match(&program, lf, lp, file)?,
        _ => labels_of_skipped_functions(file, &source, &program),
    };
    if ir_ids.is_empty() && file_only.is_empty() {
        return Err(anyhow::anyhow!(
            "{}: no pc_label(...) statement found (annotate the file first)",
            file.display()
        )
        .into());
    }
    let hyper_path = crate::hyper::path_of(file);
    let hyperlabels = if hyper_path.exists() {
        Some(crate::hyper::read(&hyper_path).map_err(|e| anyhow::anyhow!(e))?)
    } else {
        None
    };
    Ok(Inputs {
        program,
        source,
        labels_path,
        labels_file,
        file_only,
        refused,
        hyperlabels,
    })
}

/// The journal of a run (its path and fingerprint): the input's bytes, the options that
/// change answers and the functions merged from other files.
fn journal_of(
    file: &Path,
    source: &[u8],
    config: &PruneConfig,
    imports: &Imports,
    shard: Option<(usize, usize)>,
) -> (PathBuf, String) {
    let shard_tag = shard.map_or_else(String::new, |(k, n)| format!(".shard-{k}-of-{n}"));
    (
        PathBuf::from(format!(
            "{}{shard_tag}.covprune.journal",
            file.with_extension("").display()
        )),
        journal::fingerprint(source, &answer_key_with(config, imports)),
    )
}

/// The options that change answers, and the functions merged from other files (none for a
/// file pruned alone: its fingerprint is as before imports existed).
fn answer_key_with(config: &PruneConfig, imports: &Imports) -> String {
    let mut key = config.answer_key();
    if !imports.is_empty() {
        key.push('\n');
        key.push_str(&serde_json::to_string(imports).unwrap_or_default());
    }
    key
}

/// The pool worker's side of a run (the process was started with `COVPRUNE_WORKER=serve`).
pub fn serve_worker() -> Result<()> {
    pool::serve::<WorkerInput>(|input| {
        read_inputs(
            &input.file,
            input.labels.clone(),
            &input.preprocess,
            &input.imports,
            input.open_statics,
        )
        .map(|i| i.program)
        .map_err(|e| anyhow::anyhow!("{e}"))
    })
    .map_err(Error::BadInput)
}

pub fn prune(opts: &PruneOptions) -> Result<PruneOutcome> {
    let mut run = prepare(opts)?;
    let bar = crate::console::Progress::new(run.labels, "proving", opts.progress);
    // Shown while the bar is, not after: a run that ends leaves nothing to resume.
    bar.note(&format!(
        "(interrupted, `--resume` continues from {})",
        run.journal_path.display()
    ));
    bar.inc(run.reused_labels());
    let results = match &opts.execution {
        Execution::Pool { exe } => match run.unit()? {
            None => Ok(engine::Proved::default()),
            Some(unit) => pool::prove_units(exe, run.config.jobs, vec![unit], &|n| bar.inc(n))
                .map_err(pool_error)
                .and_then(|mut o| o.remove(0).results.map_err(pool_error)),
        },
        Execution::InProcess => Ok(run.prove_in_process(&|n| bar.inc(n))),
    };
    bar.finish();
    let elapsed_ms = run.t0.elapsed().as_millis();
    run.conclude(results?, elapsed_ms)
}

/// A pool's failure as the run's: a worker that refused its input exits as it said.
pub(crate) fn pool_error(e: pool::PoolError) -> Error {
    match e {
        pool::PoolError::WorkerExit(code) => Error::Worker(super::error::Exit::from_code(code)),
        other => Error::internal(other),
    }
}

/// A run read, checked and looked up in the verdict cache, its journal open: what is left is
/// to prove `order` ([`Prepared::unit`] for the worker pool, or in this process) and to
/// [`Prepared::conclude`].
pub(crate) struct Prepared {
    opts: PruneOptions,
    pub(crate) config: PruneConfig,
    /// The inputs (none once [`Prepared::release`]d: read again to conclude).
    inputs: Option<Inputs>,
    source_hash: String,
    journal_path: PathBuf,
    fingerprint: String,
    /// None once handed to the pool.
    journal: Option<Journal>,
    prior: journal::Prior,
    /// The functions to prove, biggest first.
    order: Vec<usize>,
    cache: Option<Cached>,
    /// Label occurrences of the functions to prove (cached ones included).
    pub(crate) labels: u64,
    pub(crate) t0: std::time::Instant,
    /// Other files whose functions were not merged into the program, with why.
    pub(crate) refused: Vec<(String, Refused)>,
}

/// Reads and checks a run's inputs, opens its journal and takes from the functions to prove
/// those the verdict cache holds.
pub(crate) fn prepare(opts: &PruneOptions) -> Result<Prepared> {
    let mut config = opts.config.clone();
    config.steps.insert(1);
    config.jobs = super::jobs::Jobs::resolve(config.jobs, !opts.quiet);
    let inputs = read_inputs(
        &opts.file,
        opts.labels.clone(),
        &opts.preprocess,
        &opts.imports,
        opts.config.open_statics,
    )?;
    let program = &inputs.program;
    // What the run writes at its end, checked before it proves anything.
    if opts.shard.is_none() {
        super::check_writable(&super::ledger_path_of(&opts.file))?;
        super::check_writable(
            &inputs
                .labels_path
                .clone()
                .unwrap_or_else(|| opts.file.with_extension("labels")),
        )?;
        if inputs.hyperlabels.is_some() {
            super::check_writable(&crate::hyper::path_of(&opts.file))?;
        }
    }
    let (journal_path, fingerprint) = journal_of(
        &opts.file,
        &inputs.source,
        &config,
        &opts.imports,
        opts.shard,
    );
    let t0 = std::time::Instant::now();
    let (journal, prior) = Journal::open(&journal_path, &fingerprint, opts.resume)?;
    if opts.resume && !opts.quiet {
        print_err(&format!(
            "resuming: {} step-1 answers and {} functions from {}\n",
            prior.step1.len(),
            prior.done.len(),
            journal_path.display()
        ));
    }
    let mut order = engine::prove_order(program, opts.shard);
    let labels: u64 = order
        .iter()
        .map(|&i| program.functions[i].labels().count() as u64)
        .sum();
    let cache = match &opts.cache {
        Some(dir) => Some(Cached::look_up(dir, program, &config, &mut order)?),
        None => None,
    };
    Ok(Prepared {
        opts: opts.clone(),
        config,
        refused: inputs.refused.clone(),
        source_hash: ledger::source_hash(&inputs.source),
        inputs: Some(inputs),
        journal_path,
        fingerprint,
        journal: Some(journal),
        prior,
        order,
        cache,
        labels,
        t0,
    })
}

impl Prepared {
    /// Label occurrences the verdict cache answered.
    pub(crate) fn reused_labels(&self) -> u64 {
        self.cache.as_ref().map_or(0, |c| {
            c.hits.iter().map(|r| r.occurrences.len() as u64).sum()
        })
    }

    /// The run's share of a worker pool: none when there is nothing to prove. Its journal
    /// goes with it. Call before [`Prepared::release`].
    pub(crate) fn unit(&mut self) -> Result<Option<pool::Unit>> {
        let (Some(inputs), Some(journal)) = (&self.inputs, self.journal.take()) else {
            return Err(Error::internal(anyhow::anyhow!(
                "the run's unit was asked for twice"
            )));
        };
        if self.order.is_empty() {
            return Ok(None);
        }
        let job = pool::Job {
            input: WorkerInput {
                file: self.opts.file.clone(),
                labels: self.opts.labels.clone(),
                preprocess: self.opts.preprocess.clone(),
                imports: self.opts.imports.clone(),
                open_statics: self.config.open_statics,
            },
            config: self.config.clone(),
            shard: self.opts.shard,
            journal: self.journal_path.clone(),
            fingerprint: self.fingerprint.clone(),
        };
        pool::Unit::new(&job, &inputs.program, &self.order, journal)
            .map(Some)
            .map_err(Error::internal)
    }

    /// Drops the program until [`Prepared::conclude`] reads it again (a project holds one
    /// run per file while its pool proves them all).
    pub(crate) fn release(&mut self) {
        self.inputs = None;
    }

    /// Proves the functions in this process's threads.
    pub(crate) fn prove_in_process(&mut self, progress: engine::Progress) -> engine::Proved {
        let Some(inputs) = &self.inputs else {
            return engine::Proved::default();
        };
        let mut prior = std::mem::take(&mut self.prior);
        // Results the cache holds come out as those of an earlier run would.
        let hits = self.cache.as_mut().map(|c| std::mem::take(&mut c.hits));
        let hit_names: BTreeSet<String> =
            hits.iter().flatten().map(|r| r.function.clone()).collect();
        for r in hits.into_iter().flatten() {
            prior.done.entry(r.function.clone()).or_insert(r);
        }
        let hooks = engine::Hooks {
            journal: self.journal.as_ref(),
            prior: Some(&prior),
            shard: self.opts.shard,
        };
        let mut all = engine::prove(&inputs.program, &self.config, progress, &hooks);
        // Split them again: the cache's hits are added back when concluding, as for the pool.
        let (hits, proved): (Vec<_>, Vec<_>) = std::mem::take(&mut all.functions)
            .into_iter()
            .partition(|r| hit_names.contains(&r.function));
        if let Some(c) = self.cache.as_mut() {
            c.hits = hits;
        }
        all.functions = proved;
        all
    }

    /// Stores the results proved in the cache, then writes the shard file, or the ledger and
    /// the labels file; `elapsed_ms` is the time the report gives.
    pub(crate) fn conclude(self, proved: engine::Proved, elapsed_ms: u128) -> Result<PruneOutcome> {
        let engine::Proved {
            functions: mut results,
            shares,
        } = proved;
        let Prepared {
            opts,
            config,
            inputs,
            source_hash,
            fingerprint,
            journal,
            cache,
            ..
        } = self;
        drop(journal);
        name_functions_over_budget(&opts.file, &results, config.function_budget_s);
        let cache_use = match cache {
            Some(c) => Some(c.store(&mut results)?),
            None => None,
        };
        if let Some(shard) = opts.shard {
            let labels: u64 = results
                .iter()
                .map(|r| r.occurrences.len() as u64)
                .chain(shares.iter().map(|s| s.occurrences.len() as u64))
                .sum();
            let out = shard::path_of(&opts.file, shard);
            let file = ShardFile {
                schema: shard::SCHEMA.into(),
                file: opts.file.clone(),
                fingerprint,
                source_hash,
                shard,
                view: ledger::View::of(&config),
                config: Some(config.clone()),
                results,
                shares,
            };
            let text = serde_json::to_string(&file).map_err(Error::internal)? + "\n";
            labels::write_atomic(&out, &text).map_err(|e| write_failed(&out, e))?;
            return Ok(PruneOutcome::Shard(ShardReport {
                shard,
                functions: file.results.len(),
                labels,
                shard_file: out.display().to_string(),
            }));
        }
        let inputs = match inputs {
            Some(i) => i,
            None => {
                let i = read_inputs(
                    &opts.file,
                    opts.labels.clone(),
                    &opts.preprocess,
                    &opts.imports,
                    opts.config.open_statics,
                )?;
                if ledger::source_hash(&i.source) != source_hash {
                    return Err(anyhow::anyhow!(
                        "{} changed while it was proved",
                        opts.file.display()
                    )
                    .into());
                }
                i
            }
        };
        let (verdicts, run_stats) = engine::combine(results);
        let mut report = finish(
            &opts.file,
            inputs,
            verdicts,
            &run_stats,
            elapsed_ms,
            (opts.timings, &config),
        )?;
        report.cache = cache_use;
        Ok(PruneOutcome::Whole(report))
    }
}

/// Names on stderr, in order, each function whose budget ran out before all its labels were
/// asked (the ledger gives the reason per label).
fn name_functions_over_budget(file: &Path, results: &[engine::FunctionResult], budget_s: u64) {
    let mut over: Vec<(&str, usize)> = results
        .iter()
        .filter_map(|r| {
            let n = r
                .occurrences
                .iter()
                .filter(|o| matches!(o.outcome, engine::Outcome::Unknown(Reason::FunctionBudget)))
                .count();
            (n > 0).then_some((r.function.as_str(), n))
        })
        .collect();
    over.sort();
    for (function, n) in over {
        print_err(&format!(
            "{}: {function}: over its budget of {budget_s} s; {} left unknown",
            file.display(),
            crate::console::count(n as u64, "label")
        ));
    }
}

/// The verdict cache during one run: the results it held for the run's functions, and the
/// keys to store the others under.
struct Cached {
    cache: VerdictCache,
    keys: BTreeMap<String, String>,
    hits: Vec<engine::FunctionResult>,
}

impl Cached {
    /// Opens the cache in `dir` and takes out of `order` the functions whose results it holds.
    fn look_up(
        dir: &Path,
        program: &Program,
        config: &PruneConfig,
        order: &mut Vec<usize>,
    ) -> Result<Cached> {
        let cache = VerdictCache::open(dir)?;
        let keys = engine::Prover::new(program, config).cache_keys(&config.answer_key());
        let mut hits = Vec::new();
        let mut misses = Vec::new();
        for &i in order.iter() {
            let name = &program.functions[i].name;
            match cache.get(&keys[name], name)? {
                Some(r) => hits.push(r),
                None => misses.push(i),
            }
        }
        *order = misses;
        Ok(Cached { cache, keys, hits })
    }

    /// Stores the results proved in this run, then adds the cached ones to `results` (sorted
    /// by function, as provers return them). A function whose prover died is not stored: the
    /// crash is an accident of that process, and proving again may give more. (Questions
    /// that ran out of time are stored as they ended: a run with other limits has other keys.)
    fn store(mut self, results: &mut Vec<engine::FunctionResult>) -> Result<CacheUse> {
        let lasting = |r: &engine::FunctionResult| {
            !r.occurrences
                .iter()
                .any(|o| matches!(o.outcome, engine::Outcome::Unknown(Reason::SolverDied)))
        };
        let stored: Vec<(&str, &engine::FunctionResult)> = results
            .iter()
            .filter(|r| lasting(r))
            .filter_map(|r| self.keys.get(&r.function).map(|k| (k.as_str(), r)))
            .collect();
        self.cache.put_all(&stored)?;
        let used = CacheUse {
            reused: self.hits.len(),
            proved: results.len(),
            stored: stored.len(),
        };
        self.cache
            .count_use(used.reused as u64, used.proved as u64)?;
        results.append(&mut self.hits);
        results.sort_by(|a, b| a.function.cmp(&b.function));
        Ok(used)
    }
}

fn read_file(file: &Path) -> Result<Vec<u8>> {
    std::fs::read(file).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()).into())
}
