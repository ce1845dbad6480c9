//! Command-line interface (clap): parses arguments, runs a command, maps errors to exit codes.
//!
//! Exit codes: 0 success; 2 bad input or usage (missing file, preprocessing failure, not C,
//! unknown function). Later commands add 1 (findings) and 3 (soundness alarm).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::cfg::{callgraph::CallGraph, Cfg};
use crate::console::{print_err, print_out};
use crate::frontend::{self, PreprocessOptions};
use crate::report::ParseReport;

#[derive(Parser, Debug)]
#[command(
    name = "covprune",
    version,
    about = "Finds and prunes polluting test objectives (infeasible, duplicate, subsumed labels) in C programs"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Parse and lower a C file; print front-end statistics.
    Parse {
        file: PathBuf,
        #[command(flatten)]
        cc: CcFlags,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Also list every diagnostic (fallbacks, syntax errors, skipped functions).
        #[arg(short, long)]
        verbose: bool,
    },
    /// Print the control-flow graph of one function as Graphviz DOT.
    Cfg {
        file: PathBuf,
        #[arg(long)]
        function: String,
        #[command(flatten)]
        cc: CcFlags,
    },
    /// Print the lowered IR of every function (or one).
    Ir {
        file: PathBuf,
        #[arg(long)]
        function: Option<String>,
        #[command(flatten)]
        cc: CcFlags,
    },
    /// Print the call graph: direct calls with call-site counts, linkage, address-taken functions.
    Callgraph {
        file: PathBuf,
        #[command(flatten)]
        cc: CcFlags,
    },
    /// Prove labels of an annotated file polluting; update its .labels file and write a ledger.
    Prune(PruneArgs),
    /// Join the shard files of `prune --shard K/N` runs: write the ledger and the .labels file
    /// as one unsharded run would.
    Merge(MergeArgs),
    /// Run a test suite on an annotated program: raw and cleaned coverage per criterion, and
    /// the soundness alarm (exit code 3) when a test contradicts a claim of the ledger.
    Measure(MeasureArgs),
    /// How redundant each criterion is: counts per criterion and function, duplicate classes,
    /// subsumers, the criterion × criterion matrix; DOT, HTML and SARIF reports.
    Audit(AuditArgs),
    /// Insert test objectives (labels) for coverage criteria: writes DIR/STEM_labels.c and
    /// DIR/STEM_labels.labels.
    Annotate(AnnotateArgs),
    /// Write the labels of an annotated file as ACSL annotations for Frama-C's WP: step 1
    /// asks `!(p)` at each label, step 2 asks `p` (writes STEM.acsl.c).
    ExportAcsl(ExportAcslArgs),
    /// List the coverage criteria.
    Criteria,
}

#[derive(Args, Debug)]
pub struct ExportAcslArgs {
    /// The annotated C file (`pc_label(cond, id, "TAG");` statements).
    pub file: PathBuf,
    /// 1: `check !(p)` (proved: infeasible); 2: `check p` (proved: always true when reached).
    #[arg(long, default_value_t = 1)]
    pub step: u8,
    /// Output file (default: the file's name with `.acsl.c`).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Write `assert` instead of `check`: WP then assumes each assertion in the goals after it.
    #[arg(long)]
    pub assert: bool,
    /// Keep `# LINE "FILE"` markers (by default they are blanked, so that the verifier reports
    /// lines of the exported file).
    #[arg(long)]
    pub keep_line_markers: bool,
    /// Print the obligations (id, line, tag, name) as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct AnnotateArgs {
    pub file: PathBuf,
    /// Comma-separated criteria (see `covprune criteria`).
    #[arg(long, value_delimiter = ',', required = true)]
    pub criteria: Vec<String>,
    /// Output directory (default: the file's directory).
    #[arg(short = 'o', long = "out")]
    pub out_dir: Option<PathBuf>,
    /// MCC: decisions with more atoms than this get no labels.
    #[arg(long, default_value_t = 10)]
    pub mcc_max_atoms: usize,
    /// NCC: the number of atoms combined.
    #[arg(long = "ncc-n", alias = "n", default_value_t = 2)]
    pub ncc_n: usize,
    /// PCT: the number of a function's predicates taken into account (labels grow as 2^n).
    #[arg(long, default_value_t = 4)]
    pub pct_max_predicates: usize,
    /// WM, WM-S: mutation operator groups, e.g. `AOR,ROR`, or `-ABS,-AOR` to remove groups.
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pub mutators: Vec<String>,
    /// Print per-criterion label counts as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub cc: CcFlags,
}

#[derive(Args, Debug)]
pub struct PruneArgs {
    /// The annotated C file (`pc_label(cond, id, "TAG");` statements).
    pub file: PathBuf,
    /// The LTest-style labels file (default: the file's name with `.labels`, if it exists).
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// Steps to run: 1 infeasible, 2 always-true duplicates, 3 subsumption and duplicates.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    pub steps: Vec<u8>,
    /// Step 3: do not use solver models to rule out pairs before asking (for measurement).
    #[arg(long)]
    pub no_model_filter: bool,
    /// Time limit of each proof obligation, in milliseconds.
    #[arg(long, default_value_t = 2000)]
    pub timeout_ms: u32,
    /// Deterministic resource limit of each obligation (0: none); makes results reproducible.
    #[arg(long, default_value_t = 0)]
    pub rlimit: u32,
    /// Worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
    /// Wall-clock budget per function in seconds (0: none); labels left when it runs out stay
    /// unknown.
    #[arg(long, default_value_t = 120)]
    pub function_budget_s: u64,
    /// Treat every call as opaque (by default small callees are encoded in place).
    #[arg(long)]
    pub no_inline: bool,
    /// Do not draw a progress bar (it is drawn only on a terminal anyway).
    #[arg(long)]
    pub no_progress: bool,
    /// Report each function's encoding and every slow obligation on stderr.
    #[arg(short, long)]
    pub verbose: bool,
    /// `main`: whole-program runs from `main` with initialised globals (default: any
    /// externally visible function, any arguments and globals).
    #[arg(long)]
    pub entry: Option<String>,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
    /// Memory bound of the solver, in MB (0: none); a query over it is unknown ("max. memory
    /// exceeded"). Z3 compares it with the whole process's allocation.
    #[arg(long, default_value_t = 0)]
    pub max_memory_mb: u32,
    /// Skip what the journal (STEM.covprune.journal) of an interrupted run already holds.
    #[arg(long)]
    pub resume: bool,
    /// Prove only shard K of N of the functions (e.g. `2/3`) and write STEM.shard-K-of-N.json
    /// for `covprune merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Record each label's solver time in the ledger (which then differs run to run).
    #[arg(long)]
    pub timings: bool,
    /// Prove in this process. By default a supervisor runs the prover as a child process and,
    /// should the solver crash it, restarts it from the journal without the functions that
    /// were in flight (their remaining labels stay unknown).
    #[arg(long)]
    pub in_process: bool,
    /// Print nothing (used when `audit` prunes first).
    #[arg(long, hide = true)]
    pub quiet: bool,
    #[command(flatten)]
    pub cc: CcFlags,
}

#[derive(Args, Debug)]
pub struct MeasureArgs {
    /// The annotated C file (with its `main`, or included by the test drivers).
    pub file: PathBuf,
    /// A file with one test per line (program arguments, optionally `< INPUT`), or a
    /// directory of C test drivers.
    #[arg(long)]
    pub tests: PathBuf,
    /// The labels file to update (default: the file's name with `.labels`).
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// The ledger whose claims are checked (default: STEM.covprune.json, if it exists).
    #[arg(long)]
    pub ledger: Option<PathBuf>,
    /// Other translation units of the program, built as they are (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub sources: Vec<PathBuf>,
    /// A test running longer than this is stopped and reported.
    #[arg(long, default_value_t = 10_000)]
    pub test_timeout_ms: u64,
    /// Write a Mutation Testing Elements report of the WM labels to this file.
    #[arg(long)]
    pub elements: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub cc: CcFlags,
}

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// The annotated C file (pruned first if it has no ledger yet).
    pub file: PathBuf,
    /// The ledger (default: STEM.covprune.json).
    #[arg(long)]
    pub ledger: Option<PathBuf>,
    /// The labels file, for the original source lines (default: STEM.labels).
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write the subsumption graph as Graphviz DOT (one cluster per function).
    #[arg(long)]
    pub dot: Option<PathBuf>,
    /// Write a self-contained HTML report (source with statuses, tables, graph as SVG).
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Write SARIF 2.1.0 with the actionable findings (dead code, constant conditions,
    /// equivalent mutants).
    #[arg(long)]
    pub sarif: Option<PathBuf>,
    #[command(flatten)]
    pub cc: CcFlags,
}

/// Tests contradicted claims of the ledger: exit code 3.
#[derive(Debug, thiserror::Error)]
#[error("soundness alarm: {0} contradiction(s) between the tests and the ledger (listed above)")]
pub struct SoundnessAlarm(pub usize);

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard files written by `covprune prune --shard K/N` (all N of them).
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// The labels file to update (default: the annotated file's name with `.labels`).
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
    /// Record each label's solver time in the ledger.
    #[arg(long)]
    pub timings: bool,
    #[command(flatten)]
    pub cc: CcFlags,
}

/// Flags passed to the C preprocessor.
#[derive(Args, Debug, Clone, Default)]
pub struct CcFlags {
    /// The C compiler used to preprocess (default `cc`).
    #[arg(long, value_name = "CC")]
    pub cc: Option<String>,
    /// Add a directory to the include path.
    #[arg(short = 'I', value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
    /// Define a macro (`NAME` or `NAME=VALUE`).
    #[arg(short = 'D', value_name = "MACRO")]
    pub defines: Vec<String>,
    /// Include a file before the source (`-include FILE` is accepted too).
    #[arg(long = "include", value_name = "FILE")]
    pub force_includes: Vec<PathBuf>,
    /// The C standard (e.g. gnu89, c99, gnu11).
    #[arg(long = "std", value_name = "STD")]
    pub std: Option<String>,
    /// A directory holding compile_commands.json: take the file's flags from it.
    #[arg(short = 'p', value_name = "DIR")]
    pub build_dir: Option<PathBuf>,
    /// A compilation database: take the file's flags from its entry.
    #[arg(long = "compile-commands", value_name = "FILE")]
    pub compile_commands: Option<PathBuf>,
}

impl CcFlags {
    /// The flags as command-line arguments again.
    pub fn to_args(&self) -> Vec<String> {
        let mut a = Vec::new();
        if let Some(cc) = &self.cc {
            a.push(format!("--cc={cc}"));
        }
        a.extend(
            self.include_dirs
                .iter()
                .map(|d| format!("-I{}", d.display())),
        );
        a.extend(self.defines.iter().map(|d| format!("-D{d}")));
        a.extend(
            self.force_includes
                .iter()
                .map(|f| format!("--include={}", f.display())),
        );
        if let Some(s) = &self.std {
            a.push(format!("--std={s}"));
        }
        if let Some(p) = &self.build_dir {
            a.push(format!("-p{}", p.display()));
        }
        if let Some(p) = &self.compile_commands {
            a.push(format!("--compile-commands={}", p.display()));
        }
        a
    }

    pub fn to_options(&self) -> PreprocessOptions {
        PreprocessOptions {
            cc: self.cc.clone(),
            include_dirs: self.include_dirs.clone(),
            defines: self.defines.clone(),
            force_includes: self.force_includes.clone(),
            std: self.std.clone(),
            compile_commands: self
                .compile_commands
                .clone()
                .or_else(|| self.build_dir.clone()),
        }
    }
}

/// GCC spells some flags with one dash (`-include FILE`); clap wants two.
pub fn normalize_args(args: impl IntoIterator<Item = String>) -> Vec<String> {
    args.into_iter()
        .map(|a| match a.as_str() {
            "-include" => "--include".to_string(),
            _ => a,
        })
        .collect()
}

/// The command line, for the supervisor to run the same command in a child process.
static ARGV: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// A child process ended with this exit code and already said why.
#[derive(Debug, thiserror::Error)]
#[error("exit code {0}")]
struct ChildExit(u8);

/// Runs the command line; returns the process exit code.
pub fn run(args: Vec<String>) -> ExitCode {
    let args = normalize_args(args);
    let _ = ARGV.set(args.clone());
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match execute(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(ChildExit(code)) = e.downcast_ref::<ChildExit>() {
                return ExitCode::from(*code);
            }
            print_err(&format!("covprune: error: {e:#}"));
            if e.downcast_ref::<SoundnessAlarm>().is_some() {
                ExitCode::from(3)
            } else {
                ExitCode::from(2)
            }
        }
    }
}

fn load(file: &Path, cc: &CcFlags) -> anyhow::Result<frontend::Loaded> {
    if !file.exists() {
        anyhow::bail!("{}: no such file", file.display());
    }
    Ok(frontend::load(file, &cc.to_options())?)
}

fn execute(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Parse {
            file,
            cc,
            json,
            verbose,
        } => {
            let loaded = load(&file, &cc)?;
            let report =
                ParseReport::new(&file.display().to_string(), &loaded.program, &loaded.stats);
            if verbose {
                print_err(&crate::report::diagnostics_text(&loaded.program));
            }
            if json {
                print_out(&format!("{}\n", serde_json::to_string_pretty(&report)?));
            } else {
                print_out(&report.to_text(true));
            }
        }
        Command::Cfg { file, function, cc } => {
            let loaded = load(&file, &cc)?;
            let program = &loaded.program;
            let Some(f) = program.function(&function) else {
                anyhow::bail!(
                    "{}: no lowered function named `{function}`{}",
                    file.display(),
                    skipped_note(program, &function)
                );
            };
            let cg = CallGraph::build(program);
            let cfg = Cfg::build(f, &|n| cg.may_not_return(n));
            print_out(&crate::cfg::to_dot(program, f, &cfg));
        }
        Command::Ir { file, function, cc } => {
            let loaded = load(&file, &cc)?;
            let program = &loaded.program;
            let mut out = String::new();
            match function {
                Some(name) => {
                    let Some(f) = program.function(&name) else {
                        anyhow::bail!(
                            "{}: no lowered function named `{name}`{}",
                            file.display(),
                            skipped_note(program, &name)
                        );
                    };
                    out.push_str(&crate::ir::display::function_to_string(program, f));
                }
                None => {
                    for f in &program.functions {
                        out.push_str(&crate::ir::display::function_to_string(program, f));
                        out.push('\n');
                    }
                }
            }
            print_out(&out);
        }
        Command::Prune(args) => prune(args)?,
        Command::Merge(args) => merge(args)?,
        Command::Measure(args) => measure(args)?,
        Command::Audit(args) => audit(args)?,
        Command::Criteria => {
            let mut out = String::new();
            for c in covprune_encoders::Criterion::ALL {
                out.push_str(&format!("{:<5} {}\n", c.name(), c.description()));
            }
            print_out(&out);
        }
        Command::Annotate(args) => annotate(args)?,
        Command::ExportAcsl(args) => export_acsl(args)?,
        Command::Callgraph { file, cc } => {
            let loaded = load(&file, &cc)?;
            let program = &loaded.program;
            let cg = CallGraph::build(program);
            let mut out = String::new();
            let mut names: Vec<&str> = program.functions.iter().map(|f| f.name.as_str()).collect();
            names.sort_unstable();
            for name in names {
                let Some(node) = cg.node(name) else { continue };
                let mut flags = Vec::new();
                if node.linkage == crate::ir::Linkage::Internal {
                    flags.push("static");
                }
                if node.address_taken {
                    flags.push("address-taken");
                }
                if cg.never_returns.contains(name) {
                    flags.push("never-returns");
                } else if cg.may_not_return(name) {
                    flags.push("may-stop");
                }
                out.push_str(&format!(
                    "{name} [{}] call sites: {}\n",
                    flags.join(", "),
                    cg.call_sites(name)
                ));
                for (callee, n) in cg.callees(name) {
                    out.push_str(&format!("  -> {callee} x{n}\n"));
                }
            }
            print_out(&out);
        }
    }
    Ok(())
}

/// The inputs of a prune run, read and checked before anything is proved, so that bad input
/// leaves every file untouched.
struct PruneInputs {
    loaded: frontend::Loaded,
    labels_path: Option<PathBuf>,
    labels_file: Option<crate::report::labels::LabelsFile>,
    /// Ids of the labels file that the compiled program lacks.
    file_only: Vec<u64>,
}

fn prune_inputs(file: &Path, labels: Option<PathBuf>, cc: &CcFlags) -> anyhow::Result<PruneInputs> {
    use crate::report::labels;
    use std::collections::BTreeSet;
    let loaded = load(file, cc)?;
    let program = &loaded.program;
    let labels_path = labels.or_else(|| {
        let p = file.with_extension("labels");
        p.exists().then_some(p)
    });
    let labels_file = match &labels_path {
        Some(p) => Some(labels::read(p)?),
        None => None,
    };
    let ir_ids: BTreeSet<u64> = program
        .functions
        .iter()
        .flat_map(|f| f.labels())
        .filter_map(|(_, s)| match &s.kind {
            crate::ir::StmtKind::Label { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    let mut file_only: Vec<u64> = Vec::new();
    if let (Some(lf), Some(lp)) = (&labels_file, &labels_path) {
        let file_ids: BTreeSet<u64> = lf.rows.iter().map(|r| r.id).collect();
        if let Some(missing) = ir_ids.difference(&file_ids).next() {
            anyhow::bail!(
                "{} does not match {}: label {missing} of the program is missing from it",
                lp.display(),
                file.display()
            );
        }
        // Labels of the file that the compiled program lacks sit in code the preprocessor
        // dropped or in functions that were not lowered: they stay unknown.
        file_only = file_ids.difference(&ir_ids).copied().collect();
    }
    if ir_ids.is_empty() && file_only.is_empty() {
        anyhow::bail!(
            "{}: no pc_label(...) statement found (annotate the file first)",
            file.display()
        );
    }
    Ok(PruneInputs {
        loaded,
        labels_path,
        labels_file,
        file_only,
    })
}

/// `K/N` with 1 <= K <= N.
fn parse_shard(s: &str) -> anyhow::Result<(usize, usize)> {
    let bad = || anyhow::anyhow!("--shard takes K/N with 1 <= K <= N (got `{s}`)");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

/// A shard's results, for `covprune merge`.
#[derive(serde::Serialize, serde::Deserialize)]
struct ShardFile {
    schema: String,
    /// The annotated file, as given to `prune`.
    file: PathBuf,
    fingerprint: String,
    /// The annotated file's bytes, hashed: merge refuses a file changed since.
    source_hash: String,
    shard: (usize, usize),
    results: Vec<crate::prune::FunctionResult>,
}

const SHARD_SCHEMA: &str = "covprune-shard/1";

/// Set in the environment of the prover child process.
const WORKER_ENV: &str = "COVPRUNE_WORKER";
/// Restarts after crashes before giving up.
const MAX_RESTARTS: usize = 20;

/// The journal's fingerprint (input and answer-changing options) and path.
fn journal_of(
    args: &PruneArgs,
    shard: Option<(usize, usize)>,
) -> anyhow::Result<(String, PathBuf)> {
    let source = std::fs::read(&args.file)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", args.file.display()))?;
    let steps: std::collections::BTreeSet<u8> = args.steps.iter().copied().chain([1]).collect();
    let options = format!(
        "steps={:?} timeout={} rlimit={} mem={} inline={} entry={:?} filter={} budget={}",
        steps,
        args.timeout_ms,
        args.rlimit,
        args.max_memory_mb,
        !args.no_inline,
        args.entry,
        !args.no_model_filter,
        args.function_budget_s
    );
    let stem = args.file.with_extension("");
    let shard_tag = shard.map_or_else(String::new, |(k, n)| format!(".shard-{k}-of-{n}"));
    Ok((
        crate::prune::journal::fingerprint(&source, &options),
        PathBuf::from(format!("{}{shard_tag}.covprune.journal", stem.display())),
    ))
}

/// The value of `COVPRUNE_WORKER` for a pool worker: it proves the functions whose indices it
/// reads on stdin, and answers on stdout.
const SERVE: &str = "serve";

/// The prover's configuration from the command line.
fn prune_config(args: &PruneArgs) -> crate::prune::PruneConfig {
    crate::prune::PruneConfig {
        solver: crate::smt::SolverConfig {
            timeout_ms: args.timeout_ms,
            rlimit: args.rlimit,
            max_memory_mb: args.max_memory_mb,
        },
        encode: crate::vc::encode::EncodeConfig {
            entry_main: args.entry.is_some(),
            inline: !args.no_inline,
            ..Default::default()
        },
        jobs: args.jobs,
        function_budget_s: args.function_budget_s,
        trace: args.verbose,
        steps: args.steps.iter().copied().chain([1]).collect(),
        model_filter: !args.no_model_filter,
    }
}

/// A pool worker: loads the program as the supervisor did, then proves function after
/// function as told (`INDEX` lines on stdin), appending to the shared journal. It answers
/// `p N` for N labels decided (progress) and `d INDEX` when a function's result is in the
/// journal; it ends at `end`, and at once when stdin closes without it (the supervisor died).
fn serve(args: &PruneArgs, shard: Option<(usize, usize)>) -> anyhow::Result<()> {
    use std::io::{BufRead, Write};
    let inputs = prune_inputs(&args.file, args.labels.clone(), &args.cc)?;
    let program = &inputs.loaded.program;
    let mut config = prune_config(args);
    config.jobs = 1;
    let (fingerprint, journal_path) = journal_of(args, shard)?;
    let (journal, prior) = crate::prune::journal::Journal::join(&journal_path, &fingerprint)?;
    let prover = crate::prune::Prover::new(program, &config);
    let hooks = crate::prune::Hooks {
        journal: Some(&journal),
        prior: Some(&prior),
        shard,
    };
    let out = std::sync::Mutex::new(std::io::stdout());
    // A supervisor gone is no error: the journal keeps what is proved.
    let say = |line: String| {
        if let Ok(mut o) = out.lock() {
            let _ = writeln!(o, "{line}").and_then(|_| o.flush());
        }
    };
    // Stdin is read aside: `end` closes it normally; an end of file without it means the
    // supervisor died (killed), and the worker goes too rather than write on unwatched.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if line == "end" {
                return;
            }
            if tx.send(line).is_err() {
                return;
            }
        }
        std::process::exit(1);
    });
    for line in rx {
        let Ok(i) = line.trim().parse::<usize>() else {
            anyhow::bail!("worker: expected a function index, got `{line}`");
        };
        if i >= program.functions.len() {
            anyhow::bail!("worker: no function {i}");
        }
        prover.prove_one(i, &|n| say(format!("p {n}")), &hooks);
        say(format!("d {i}"));
    }
    Ok(())
}

/// What the pool's workers share.
struct PoolState<'a> {
    program: &'a crate::ir::Program,
    /// Function indices not yet handed out, biggest first.
    queue: std::sync::Mutex<std::collections::VecDeque<usize>>,
    journal: &'a crate::prune::journal::Journal,
    bar: &'a crate::console::Progress,
    restarts: std::sync::atomic::AtomicUsize,
    failure: std::sync::Mutex<Option<anyhow::Error>>,
}

/// Proves with `--jobs N` worker processes of this binary, each with its own solver, handed
/// one function at a time (biggest first) through a pipe; their results meet in one journal.
/// A worker that dies (a solver crash, an abort, a signal) costs only the function it was
/// proving: it is marked crashed in the journal (its step-1 answers so far are kept, the rest
/// stays unknown) and a new worker takes the dead one's place.
fn prove_in_workers(
    jobs: usize,
    program: &crate::ir::Program,
    order: &[usize],
    journal: crate::prune::journal::Journal,
    bar: &crate::console::Progress,
    journal_path: &Path,
    fingerprint: &str,
) -> anyhow::Result<Vec<crate::prune::FunctionResult>> {
    let jobs = match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .clamp(1, order.len().max(1));
    let state = PoolState {
        program,
        queue: std::sync::Mutex::new(order.iter().copied().collect()),
        journal: &journal,
        bar,
        restarts: std::sync::atomic::AtomicUsize::new(0),
        failure: std::sync::Mutex::new(None),
    };
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                if let Err(e) = drive_worker(&state) {
                    let mut failure = state.failure.lock().unwrap_or_else(|p| p.into_inner());
                    failure.get_or_insert(e);
                    // The others stop at their next function.
                    state
                        .queue
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .clear();
                }
            });
        }
    });
    if let Some(e) = state
        .failure
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
    {
        return Err(e);
    }
    drop(journal);
    // Every function's result is in the journal now.
    let done = crate::prune::journal::Journal::read(journal_path, fingerprint)?;
    let mut results = Vec::with_capacity(order.len());
    for &i in order {
        let name = &program.functions[i].name;
        let r = done.done.get(name).ok_or_else(|| {
            anyhow::anyhow!(
                "the workers ended without a result for {name} (see {})",
                journal_path.display()
            )
        })?;
        results.push(r.clone());
    }
    results.sort_by(|a, b| a.function.cmp(&b.function));
    Ok(results)
}

/// Runs one worker process after another (a new one when one dies) until the queue is empty.
fn drive_worker(state: &PoolState) -> anyhow::Result<()> {
    use std::io::{BufRead, Write};
    let argv = ARGV.get().cloned().unwrap_or_default();
    let exe = std::env::current_exe()?;
    let next = || {
        state
            .queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front()
    };
    let mut pending = next();
    while pending.is_some() {
        let mut child = std::process::Command::new(&exe)
            .args(argv.iter().skip(1))
            .env(WORKER_ENV, SERVE)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()?;
        let mut to_child = child.stdin.take().expect("piped stdin");
        let mut from_child = std::io::BufReader::new(child.stdout.take().expect("piped stdout"));
        // Hand out functions until the queue is empty or the worker dies.
        let mut died = false;
        while let Some(i) = pending {
            if writeln!(to_child, "{i}")
                .and_then(|_| to_child.flush())
                .is_err()
            {
                died = true;
                break;
            }
            let done = format!("d {i}");
            let mut line = String::new();
            loop {
                line.clear();
                match from_child.read_line(&mut line) {
                    Ok(n) if n > 0 => {}
                    _ => {
                        died = true;
                        break;
                    }
                }
                let l = line.trim_end();
                if let Some(n) = l.strip_prefix("p ").and_then(|n| n.parse().ok()) {
                    state.bar.inc(n);
                } else if l == done {
                    break;
                }
            }
            if died {
                break;
            }
            pending = next();
        }
        if !died {
            let _ = writeln!(to_child, "end").and_then(|_| to_child.flush());
        }
        drop(to_child);
        let status = child.wait()?;
        if !died {
            if !status.success() {
                anyhow::bail!("a prover worker ended with {status}");
            }
            return Ok(());
        }
        if let Some(c @ (2 | 3)) = status.code() {
            // The worker said why (bad input, journal mismatch): not a crash.
            return Err(ChildExit(c as u8).into());
        }
        let i = pending.expect("a function was in flight");
        let name = &state.program.functions[i].name;
        print_err(&format!(
            "covprune: the prover died ({status}) while proving {name}; going on without it\n"
        ));
        state.journal.crashed(name);
        let restarts = state
            .restarts
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if restarts + 1 >= MAX_RESTARTS {
            anyhow::bail!(
                "the prover died {MAX_RESTARTS} times; giving up (the journal keeps its answers)"
            );
        }
        // A new worker reads the crash from the journal and gives the function's result
        // without asking the solver again.
    }
    Ok(())
}

fn prune(args: PruneArgs) -> anyhow::Result<()> {
    if let Some(step) = args.steps.iter().find(|s| !(1..=3).contains(*s)) {
        anyhow::bail!("there is no step {step} (steps are 1, 2 and 3)");
    }
    if let Some(e) = &args.entry {
        if e != "main" {
            anyhow::bail!("--entry takes `main` (got `{e}`)");
        }
    }
    let shard = args.shard.as_deref().map(parse_shard).transpose()?;
    let worker = std::env::var(WORKER_ENV).ok();
    if worker.as_deref() == Some(SERVE) {
        return serve(&args, shard);
    }
    // Worker processes run this executable: only when it is covprune itself (not a program
    // that calls `cli::run` as a library).
    let is_covprune = std::env::current_exe()
        .ok()
        .and_then(|e| e.file_stem().map(|s| s == "covprune"))
        .unwrap_or(false);
    let in_workers = !args.in_process && is_covprune && worker.is_none();
    let inputs = prune_inputs(&args.file, args.labels.clone(), &args.cc)?;
    let program = &inputs.loaded.program;
    // The journal: what this run proves is kept as it is found; --resume reuses it.
    let (fingerprint, journal_path) = journal_of(&args, shard)?;
    let stem = args.file.with_extension("");
    let t0 = std::time::Instant::now();
    let (journal, prior) =
        crate::prune::journal::Journal::open(&journal_path, &fingerprint, args.resume)?;
    if args.resume && !args.json && !args.quiet {
        print_err(&format!(
            "resuming: {} step-1 answers and {} functions from {}\n",
            prior.step1.len(),
            prior.done.len(),
            journal_path.display()
        ));
    }
    let order = crate::prune::prove_order(program, shard);
    let total: u64 = order
        .iter()
        .map(|&i| program.functions[i].labels().count() as u64)
        .sum();
    let bar = crate::console::Progress::new(
        total,
        "proving",
        !args.no_progress && !args.json && !args.quiet,
    );
    let results = if in_workers {
        prove_in_workers(
            args.jobs,
            program,
            &order,
            journal,
            &bar,
            &journal_path,
            &fingerprint,
        )
    } else {
        let hooks = crate::prune::Hooks {
            journal: Some(&journal),
            prior: Some(&prior),
            shard,
        };
        Ok(crate::prune::prove(
            program,
            &prune_config(&args),
            &|n| bar.inc(n),
            &hooks,
        ))
    };
    bar.finish();
    let results = results?;
    if let Some((k, n)) = shard {
        let total: u64 = results.iter().map(|r| r.occurrences.len() as u64).sum();
        let out = PathBuf::from(format!("{}.shard-{k}-of-{n}.json", stem.display()));
        let file = ShardFile {
            schema: SHARD_SCHEMA.into(),
            file: args.file.clone(),
            fingerprint,
            source_hash: crate::prune::journal::fingerprint(&std::fs::read(&args.file)?, ""),
            shard: (k, n),
            results,
        };
        crate::report::labels::write_atomic(&out, &(serde_json::to_string(&file)? + "\n"))?;
        if args.json {
            print_out(&format!(
                "{}\n",
                serde_json::json!({"shard": [k, n], "functions": file.results.len(), "labels": total, "shard_file": out.display().to_string()})
            ));
        } else if !args.quiet {
            print_out(&format!(
                "shard {k}/{n}: {} functions, {total} label occurrences; wrote {}\n",
                file.results.len(),
                out.display()
            ));
        }
        return Ok(());
    }
    let (verdicts, run_stats) = crate::prune::combine(results);
    finish(
        &args.file,
        inputs,
        verdicts,
        &run_stats,
        t0.elapsed().as_millis(),
        if args.quiet { None } else { Some(args.json) },
        args.timings,
    )
}

fn merge(args: MergeArgs) -> anyhow::Result<()> {
    let mut shards: Vec<ShardFile> = Vec::new();
    for p in &args.shards {
        let text = std::fs::read_to_string(p)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", p.display()))?;
        let s: ShardFile = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{} is not a covprune shard file: {e}", p.display()))?;
        if s.schema != SHARD_SCHEMA {
            anyhow::bail!("{}: unknown schema {}", p.display(), s.schema);
        }
        shards.push(s);
    }
    let first = &shards[0];
    let n = first.shard.1;
    for s in &shards {
        if s.fingerprint != first.fingerprint || s.file != first.file || s.shard.1 != n {
            anyhow::bail!("the shard files come from different runs (file, options or N differ)");
        }
    }
    let mut ks: Vec<usize> = shards.iter().map(|s| s.shard.0).collect();
    ks.sort_unstable();
    ks.dedup();
    if ks != (1..=n).collect::<Vec<_>>() {
        anyhow::bail!("shards {ks:?} of {n} given: every shard 1..={n} is needed, once");
    }
    let file = first.file.clone();
    let inputs = prune_inputs(&file, args.labels.clone(), &args.cc)?;
    if crate::prune::journal::fingerprint(&std::fs::read(&file)?, "") != first.source_hash {
        anyhow::bail!("{} changed since the shards were proved", file.display());
    }
    let t0 = std::time::Instant::now();
    let mut results: Vec<crate::prune::FunctionResult> =
        shards.into_iter().flat_map(|s| s.results).collect();
    results.sort_by(|a, b| a.function.cmp(&b.function));
    let (verdicts, run_stats) = crate::prune::combine(results);
    finish(
        &file,
        inputs,
        verdicts,
        &run_stats,
        t0.elapsed().as_millis(),
        Some(args.json),
        args.timings,
    )
}

/// For labels the compiled program lacks: the function the front end skipped that holds each
/// (the last function starting at or before the label's line is a skipped one), as `NAME
/// (why)`. Warns on stderr once per such function.
fn skipped_function_of_labels(
    file: &Path,
    program: &crate::ir::Program,
    ids: &[u64],
) -> std::collections::BTreeMap<u64, String> {
    let mut out = std::collections::BTreeMap::new();
    if ids.is_empty() || program.skipped.is_empty() {
        return out;
    }
    let Ok(text) = std::fs::read(file) else {
        return out;
    };
    // The annotated file itself, among the files its line markers name.
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
    let is_main = |id: crate::ir::FileId| {
        program.files.get(id.0 as usize).is_some_and(|f| {
            Path::new(f)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                == name
        })
    };
    // (start line, Some(skipped index)) for every function of the main file.
    let mut starts: Vec<(u32, Option<usize>)> = program
        .functions
        .iter()
        .filter(|f| is_main(f.loc.file))
        .map(|f| (f.loc.line, None))
        .chain(
            program
                .skipped
                .iter()
                .enumerate()
                .filter(|(_, f)| is_main(f.loc.file))
                .map(|(i, f)| (f.loc.line, Some(i))),
        )
        .collect();
    starts.sort();
    let mut warned = std::collections::BTreeSet::new();
    for call in crate::frontend::sites::label_calls(&text) {
        let Ok(id) = call.id.trim().parse::<u64>() else {
            continue;
        };
        if !ids.contains(&id) {
            continue;
        }
        let line = 1 + text[..call.range.0].iter().filter(|b| **b == b'\n').count() as u32;
        let holder = starts.iter().rev().find(|(l, _)| *l <= line);
        if let Some((_, Some(k))) = holder {
            let f = &program.skipped[*k];
            out.insert(id, format!("{} ({})", f.name, f.reason));
            if warned.insert(*k) {
                crate::console::print_err(&format!(
                    "warning: {}:{}: function {} not analysed ({}): its labels stay unknown",
                    file.display(),
                    f.loc.line,
                    f.name,
                    f.reason
                ));
            }
        }
    }
    out
}

/// Writes the ledger and the labels file of a run, and prints its summary.
fn finish(
    file: &Path,
    inputs: PruneInputs,
    mut verdicts: Vec<crate::prune::LabelVerdict>,
    run_stats: &crate::prune::RunStats,
    total_ms: u128,
    output: Option<bool>,
    timings: bool,
) -> anyhow::Result<()> {
    use crate::prune::Status;
    use crate::report::{labels, ledger::Ledger};
    let PruneInputs {
        loaded,
        labels_path,
        mut labels_file,
        file_only,
    } = inputs;
    let program = &loaded.program;
    let not_analysed = skipped_function_of_labels(file, program, &file_only);
    for id in &file_only {
        let reason = match not_analysed.get(id) {
            Some(why) => format!("function not analysed: {why}"),
            None => {
                "not in the compiled program (inactive preprocessor branch or function not lowered)"
                    .into()
            }
        };
        verdicts.push(crate::prune::LabelVerdict {
            id: *id,
            status: Status::Unknown(reason),
            step: None,
            time_ms: 0,
            function: String::new(),
            loc: crate::ir::Loc::default(),
            tag: labels_file
                .as_ref()
                .and_then(|f| f.rows.iter().find(|r| r.id == *id))
                .map(|r| r.tag.clone())
                .unwrap_or_default(),
            text: String::new(),
        });
    }
    verdicts.sort_by_key(|v| v.id);

    // A label a test covered cannot be infeasible: refuse to write a contradiction.
    if let Some(lf) = &labels_file {
        let covered: std::collections::BTreeSet<u64> = lf
            .rows
            .iter()
            .filter(|r| r.status == "covered")
            .map(|r| r.id)
            .collect();
        if let Some(v) = verdicts
            .iter()
            .find(|v| v.status == Status::Infeasible && covered.contains(&v.id))
        {
            anyhow::bail!(
                "soundness alarm: label {} is marked covered in the labels file but was proved infeasible; nothing written",
                v.id
            );
        }
    }
    let file_name = file
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let ledger = Ledger::new(&file_name, program, &verdicts, timings);
    let stem = file.with_extension("");
    let ledger_path = PathBuf::from(format!("{}.covprune.json", stem.display()));
    labels::write_atomic(
        &ledger_path,
        &(serde_json::to_string_pretty(&ledger)? + "\n"),
    )?;

    let lf = labels_file.get_or_insert_with(labels::LabelsFile::default);
    // Rows by id (files of a million labels: no linear search per label).
    let mut row_of: std::collections::HashMap<u64, usize> =
        lf.rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    for v in &verdicts {
        let current = if v.loc.line > 0 {
            format!("{file_name}:{}", v.loc.line)
        } else {
            String::new()
        };
        let i = *row_of.entry(v.id).or_insert_with(|| {
            lf.rows
                .push(labels::LabelRow::unknown(v.id, &v.tag, &current));
            lf.rows.len() - 1
        });
        let row = &mut lf.rows[i];
        if v.status == Status::Infeasible {
            row.status = "uncoverable".into();
            row.emitter = "covprune".into();
            row.current_loc = current;
            // Times differ run to run: only with --timings, so that outputs are reproducible.
            row.exec_time = if timings {
                format!("{:.3}", v.time_ms as f64 / 1000.0)
            } else {
                "0.".into()
            };
        }
        let col = crate::report::ledger::pollution_column(&v.status);
        if row.extra.is_empty() {
            row.extra.push(col);
        } else {
            row.extra[0] = col;
        }
    }
    lf.rows.sort_by_key(|r| r.id);
    let out_labels = labels_path.unwrap_or_else(|| file.with_extension("labels"));
    labels::write_atomic(&out_labels, &lf.to_text())?;

    let summary = crate::report::PruneSummary::new(&verdicts, run_stats, total_ms);
    let Some(json) = output else {
        return Ok(());
    };
    if json {
        let mut v = serde_json::to_value(&summary)?;
        v["file"] = serde_json::json!(file_name);
        v["ledger"] = serde_json::json!(ledger_path.display().to_string());
        v["labels_file"] = serde_json::json!(out_labels.display().to_string());
        // Functions the front end skipped, with the labels left unknown in each.
        let skipped: Vec<serde_json::Value> = program
            .skipped
            .iter()
            .map(|f| {
                let prefix = format!("function not analysed: {} (", f.name);
                let labels = verdicts
                    .iter()
                    .filter(|v| {
                        matches!(&v.status, crate::prune::Status::Unknown(r) if r.starts_with(&prefix))
                    })
                    .count();
                serde_json::json!({
                    "name": f.name,
                    "loc": program.fmt_loc(f.loc),
                    "reason": f.reason,
                    "labels": labels,
                })
            })
            .collect();
        v["skipped_functions"] = serde_json::json!(skipped);
        print_out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
    } else {
        let mut out = format!("{file_name}\n{}", summary.to_text());
        out.push_str(&format!(
            "wrote {} and {}\n",
            out_labels.display(),
            ledger_path.display()
        ));
        print_out(&out);
    }
    Ok(())
}

fn measure(args: MeasureArgs) -> anyhow::Result<()> {
    use crate::measure::{self, BuildOptions};
    use crate::report::labels;
    let tests = measure::read_tests(&args.tests)?;
    let loaded = load(&args.file, &args.cc)?;
    let labels_path = args
        .labels
        .clone()
        .unwrap_or_else(|| args.file.with_extension("labels"));
    let mut labels_file = if labels_path.exists() {
        labels::read(&labels_path)?
    } else {
        // No labels file: the labels of the program.
        let mut lf = labels::LabelsFile::default();
        let mut seen = std::collections::BTreeSet::new();
        for f in &loaded.program.functions {
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
    };
    let ledger_path = args.ledger.clone().or_else(|| {
        let p = PathBuf::from(format!(
            "{}.covprune.json",
            args.file.with_extension("").display()
        ));
        p.exists().then_some(p)
    });
    let claims = match &ledger_path {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", p.display()))?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| anyhow::anyhow!("{} is not a ledger: {e}", p.display()))?;
            measure::claims_from_ledger(&v)
        }
        None => Default::default(),
    };
    // The program is built in a scratch directory: paths of the flags made absolute.
    let absolute = |p: &PathBuf| p.canonicalize().unwrap_or_else(|_| p.clone());
    let mut opts = args.cc.to_options();
    opts.include_dirs = opts.include_dirs.iter().map(absolute).collect();
    opts.force_includes = opts.force_includes.iter().map(absolute).collect();
    let flags = crate::frontend::preprocess::user_flags(&opts);
    let build = BuildOptions {
        cc: args.cc.cc.clone(),
        flags,
        sources: args.sources.clone(),
    };
    let work = tempfile::tempdir()?;
    let tests_dir = if args.tests.is_dir() {
        args.tests.clone()
    } else {
        args.tests
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    };
    let runs = measure::run_tests(
        &args.file,
        &tests,
        &build,
        std::time::Duration::from_millis(args.test_timeout_ms),
        work.path(),
        &tests_dir,
    )?;
    let covered: std::collections::BTreeSet<u64> = runs
        .iter()
        .flat_map(|r| r.covered.iter().copied())
        .collect();
    let label_list: Vec<(u64, String)> = labels_file
        .rows
        .iter()
        .map(|r| (r.id, r.tag.clone()))
        .collect();
    let table = measure::coverage(&label_list, &claims, &covered);
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
    if alarms.is_empty() {
        labels::write_atomic(&labels_path, &labels_file.to_text())?;
    }
    if let Some(path) = &args.elements {
        let rows: Vec<(u64, String, String)> = labels_file
            .rows
            .iter()
            .map(|r| (r.id, r.tag.clone(), r.origin_loc.clone()))
            .collect();
        let mut sources = std::collections::BTreeMap::new();
        let dir = args.file.parent().unwrap_or(Path::new("."));
        for (_, _, origin) in &rows {
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
        let report = measure::elements_report(&rows, &claims, &runs, &sources);
        labels::write_atomic(path, &(serde_json::to_string_pretty(&report)? + "\n"))?;
    }
    let crashed: Vec<&str> = runs
        .iter()
        .filter(|r| matches!(r.outcome, measure::RunOutcome::Crashed(_)))
        .map(|r| r.name.as_str())
        .collect();
    let timed_out: Vec<&str> = runs
        .iter()
        .filter(|r| r.outcome == measure::RunOutcome::TimedOut)
        .map(|r| r.name.as_str())
        .collect();
    let file_name = args
        .file
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    if args.json {
        let criteria: Vec<serde_json::Value> = table
            .iter()
            .map(|c| {
                let mut v = serde_json::to_value(c).unwrap_or_default();
                v["raw_percent"] = serde_json::json!(c.raw());
                v["cleaned_percent"] = serde_json::json!(c.cleaned());
                v["upper_bound_percent"] = serde_json::json!(c.upper_bound());
                v
            })
            .collect();
        let v = serde_json::json!({
            "file": file_name,
            "tests": runs.len(),
            "crashed": crashed,
            "timed_out": timed_out,
            "claims_checked": claims.len(),
            "coverage": criteria,
            "alarms": alarms,
        });
        print_out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
    } else {
        let mut out = format!(
            "{file_name}: {} tests ({} crashed, {} timed out), {} claims of the ledger checked\n",
            runs.len(),
            crashed.len(),
            timed_out.len(),
            claims.len()
        );
        out.push_str(&measure::coverage_text(&table));
        for name in crashed.iter().chain(&timed_out) {
            out.push_str(&format!("test {name} did not end normally\n"));
        }
        if alarms.is_empty() {
            out.push_str(&format!("wrote {}\n", labels_path.display()));
        }
        print_out(&out);
    }
    if !alarms.is_empty() {
        let mut msg = String::new();
        for a in &alarms {
            msg.push_str(&format!(
                "soundness alarm: label {} claimed {}: {}\n",
                a.label, a.claim, a.what
            ));
        }
        print_err(&msg);
        return Err(SoundnessAlarm(alarms.len()).into());
    }
    Ok(())
}

fn audit(args: AuditArgs) -> anyhow::Result<()> {
    use crate::report::labels;
    let stem = args.file.with_extension("");
    let ledger_path = args
        .ledger
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.covprune.json", stem.display())));
    if !ledger_path.exists() {
        if !args.file.exists() {
            anyhow::bail!("{}: no such file", args.file.display());
        }
        // No ledger yet: prune first, with the default options.
        let mut argv = vec![
            "covprune".to_string(),
            "prune".into(),
            args.file.display().to_string(),
            "--no-progress".into(),
            "--in-process".into(),
            "--quiet".into(),
        ];
        argv.extend(args.cc.to_args());
        let cli = Cli::try_parse_from(argv)?;
        execute(cli.command)?;
    }
    let text = std::fs::read_to_string(&ledger_path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", ledger_path.display()))?;
    let ledger: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{} is not a ledger: {e}", ledger_path.display()))?;
    let rows = crate::audit::rows_of(&ledger);
    let report = crate::audit::audit(&rows);
    // Where each label comes from: the original file and line (labels file), else the
    // annotated file.
    let labels_path = args
        .labels
        .clone()
        .unwrap_or_else(|| args.file.with_extension("labels"));
    let mut origin: std::collections::BTreeMap<u64, (String, usize)> = Default::default();
    if labels_path.exists() {
        for r in labels::read(&labels_path)?.rows {
            if let Some((f, l)) = r.origin_loc.rsplit_once(':') {
                if let Ok(l) = l.trim().parse() {
                    origin.insert(r.id, (f.trim().to_string(), l));
                }
            }
        }
    }
    if let Some(p) = &args.dot {
        labels::write_atomic(p, &crate::audit::dot(&rows, true))?;
    }
    if let Some(p) = &args.sarif {
        let v = crate::audit::sarif(&rows, &origin, env!("CARGO_PKG_VERSION"));
        labels::write_atomic(p, &(serde_json::to_string_pretty(&v)? + "\n"))?;
    }
    let title = args
        .file
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    if let Some(p) = &args.html {
        // The original source when it is at hand, else the annotated file.
        let dir = args.file.parent().unwrap_or(Path::new("."));
        let original = origin.values().next().map(|(f, _)| f.clone());
        let found = original.as_ref().and_then(|f| {
            [dir.join(f), dir.join("..").join(f)]
                .into_iter()
                .find_map(|c| std::fs::read_to_string(c).ok())
        });
        let (source, line_of) = match found {
            Some(src) => (src, origin.iter().map(|(id, (_, l))| (*id, *l)).collect()),
            None => {
                let lines = ledger["labels"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|l| {
                        let id = l["id"].as_u64()?;
                        let line = l["loc"].as_str()?.rsplit_once(':')?.1.parse().ok()?;
                        Some((id, line))
                    })
                    .collect();
                (
                    String::from_utf8_lossy(&std::fs::read(&args.file)?).into_owned(),
                    lines,
                )
            }
        };
        let svg = crate::audit::svg(&rows).unwrap_or_default();
        let page = crate::audit::html(&title, &report, &rows, &source, &line_of, &svg);
        labels::write_atomic(p, &page)?;
    }
    if args.json {
        let mut v = serde_json::to_value(&report)?;
        v["file"] = serde_json::json!(title);
        print_out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
    } else {
        print_out(&format!("{title}\n{}", report.to_text()));
    }
    Ok(())
}

fn export_acsl(args: ExportAcslArgs) -> anyhow::Result<()> {
    use crate::report::acsl;
    if !(1..=2).contains(&args.step) {
        anyhow::bail!(
            "--step takes 1 or 2 (step 3 compares labels pairwise and has no one-assertion form)"
        );
    }
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", args.file.display()))?;
    let exported = acsl::export(
        &text,
        &acsl::AcslOptions {
            step: args.step,
            assert: args.assert,
            keep_line_markers: args.keep_line_markers,
        },
    );
    if exported.obligations.is_empty() {
        anyhow::bail!(
            "{} has no pc_label statements to export",
            args.file.display()
        );
    }
    let out = args.output.clone().unwrap_or_else(|| {
        PathBuf::from(format!("{}.acsl.c", args.file.with_extension("").display()))
    });
    crate::report::labels::write_atomic(&out, &exported.text)?;
    for (id, why) in &exported.skipped {
        print_err(&format!("covprune: label {id} not exported: {why}\n"));
    }
    if args.json {
        print_out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({
                "file": args.file.display().to_string(),
                "output": out.display().to_string(),
                "step": args.step,
                "obligations": exported.obligations,
                "skipped": exported.skipped.len(),
            }))?
        ));
    } else {
        print_out(&format!(
            "wrote {}: {} obligations (step {}: {} {}), {} labels not exported\n",
            out.display(),
            exported.obligations.len(),
            args.step,
            if args.assert { "assert" } else { "check" },
            if args.step == 1 { "!(p)" } else { "p" },
            exported.skipped.len()
        ));
    }
    Ok(())
}

fn annotate(args: AnnotateArgs) -> anyhow::Result<()> {
    use covprune_encoders::Criterion;
    let AnnotateArgs {
        file,
        criteria,
        out_dir,
        json,
        ..
    } = &args;
    let file = file.as_path();
    let mut chosen = Vec::new();
    for name in criteria {
        match Criterion::from_name(name) {
            Some(c) if !chosen.contains(&c) => chosen.push(c),
            Some(_) => {}
            None => {
                let valid: Vec<&str> = Criterion::ALL.iter().map(|c| c.name()).collect();
                anyhow::bail!("unknown criterion `{name}` (valid: {})", valid.join(", "));
            }
        }
    }
    if !file.exists() {
        anyhow::bail!("{}: no such file", file.display());
    }
    let source =
        std::fs::read(file).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
    if source.contains(&0) {
        anyhow::bail!(
            "{} does not look like C: it contains NUL bytes",
            file.display()
        );
    }
    let mutators =
        covprune_encoders::parse_mutators(&args.mutators).map_err(|e| anyhow::anyhow!(e))?;
    // The file must be C that the front end accepts, so that labels can be proved later; its
    // lowered form types the expressions that mutation changes.
    let loaded = frontend::load(file, &args.cc.to_options())?;
    let limits = covprune_encoders::Limits {
        mcc_max_atoms: args.mcc_max_atoms,
        ncc_n: args.ncc_n.max(1),
        pct_max_predicates: args.pct_max_predicates,
        mutators,
    };
    let macros = frontend::preprocess::conditional_macros(file, &args.cc.to_options());
    let annotated = crate::annotate::annotate_with_macros(
        &source,
        Some(&loaded.program),
        &macros,
        &chosen,
        &limits,
    );
    let dir = out_dir.clone().unwrap_or_else(|| {
        file.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    });
    std::fs::create_dir_all(&dir)?;
    let stem = file
        .file_stem()
        .map_or_else(|| "out".into(), |s| s.to_string_lossy().into_owned());
    let c_path = dir.join(format!("{stem}_labels.c"));
    let l_path = dir.join(format!("{stem}_labels.labels"));
    let origin = file
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    std::fs::write(&c_path, &annotated.text)?;
    crate::report::labels::write_atomic(
        &l_path,
        &crate::annotate::labels_file(&annotated, &origin),
    )?;
    let h_path = dir.join(format!("{stem}_labels.hyperlabels"));
    if chosen.iter().any(|c| c.has_hyperlabels()) {
        crate::report::labels::write_atomic(
            &h_path,
            &crate::annotate::hyperlabels_file(&annotated),
        )?;
    }
    let counts = annotated.counts();
    if *json {
        let per: serde_json::Map<String, serde_json::Value> = chosen
            .iter()
            .map(|c| {
                (
                    c.name().to_string(),
                    serde_json::json!(annotated.count_of(*c)),
                )
            })
            .collect();
        let v = serde_json::json!({
            "file": origin,
            "labels": annotated.labels.len(),
            "criteria": per,
            "decisions": annotated.decisions,
            "skipped_decisions": annotated.skipped.len(),
            "functions": annotated.functions,
            "annotated": c_path.display().to_string(),
            "labels_file": l_path.display().to_string(),
            "hyperlabels": annotated.hyperlabels.len(),
        });
        print_out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
    } else {
        let mut out = format!("{origin}: {} labels", annotated.labels.len());
        for (tag, n) in &counts {
            out.push_str(&format!(", {tag} {n}"));
        }
        out.push_str(&format!(
            " ({} decisions, {} left without labels)\nwrote {} and {}\n",
            annotated.decisions,
            annotated.skipped.len(),
            c_path.display(),
            l_path.display()
        ));
        print_out(&out);
    }
    Ok(())
}

fn skipped_note(program: &crate::ir::Program, name: &str) -> String {
    program
        .skipped
        .iter()
        .find(|s| s.name == name)
        .map(|s| format!(" (it was skipped: {})", s.reason))
        .unwrap_or_default()
}
