//! The arguments of each command, as clap parses them, and the flag groups several commands
//! share (preprocessing, solver limits, criteria).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use covprune_encoders::{Criterion, Limits};

use crate::run::{self, PreprocessOptions};

#[derive(Args, Debug)]
pub struct ProjectArgs {
    #[command(subcommand)]
    pub action: Option<ProjectAction>,
    /// A directory holding compile_commands.json.
    #[arg(
        short = 'p',
        value_name = "DIR",
        required_unless_present = "compile_commands"
    )]
    pub build_dir: Option<PathBuf>,
    /// The compilation database.
    #[arg(
        long = "compile-commands",
        value_name = "FILE",
        conflicts_with = "build_dir"
    )]
    pub compile_commands: Option<PathBuf>,
    /// Only the files matching these globs (relative to the sources' root, or absolute;
    /// comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_name = "GLOB")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub criteria: CriteriaFlags,
    /// The output directory: the annotated files, their labels files and ledgers, in the
    /// sources' tree.
    #[arg(short = 'o', long = "out", required = true)]
    pub out_dir: Option<PathBuf>,
    #[command(flatten)]
    pub limits: SolverFlags,
    /// The verdict cache's directory (default: $COVPRUNE_CACHE_DIR, else
    /// $XDG_CACHE_HOME/covprune, else ~/.cache/covprune).
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    pub cache: Option<PathBuf>,
    /// Prove everything; neither read nor write the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Prune each file alone, as per-file runs do (by default a call to a function another
    /// file defines takes that function's write summary instead of "may write anything").
    #[arg(long)]
    pub no_cross_file: bool,
    /// Also encode the small functions (at most 40 blocks) of other files in place of their
    /// calls, as a file's own small callees are: their return values and writes exact
    /// instead of summarised. Costs time, and an edit of such a function proves again its
    /// callers in every file.
    #[arg(long, conflicts_with = "no_cross_file")]
    pub inline_across_files: bool,
    /// Whose static functions and variables code outside their file may call and touch:
    /// `auto`, the files another entry of the database includes (unit tests that `#include`
    /// the library's source); `all`, every file (tests built outside the database do it too);
    /// `none`, no file (claims may rest on "all callers are in this file").
    #[arg(long, value_enum, default_value_t = OpenStaticsArg::Auto)]
    pub open_statics: OpenStaticsArg,
    /// Prune a label as subsumed only by a subsumer shown feasible by a witness (as `prune
    /// --witnessed-subsumers`).
    #[arg(long)]
    pub witnessed_subsumers: bool,
    /// Prove only shard K of N of every file's functions (e.g. `2/3`), writing a shard file
    /// beside each annotated file; `covprune project merge -o OUT` joins them.
    #[arg(long, value_name = "K/N", value_parser = run::prune::parse_shard)]
    pub shard: Option<(usize, usize)>,
    /// Do not draw progress bars.
    #[arg(long)]
    pub no_progress: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// More preprocessing flags for every file (after the database's).
    #[command(flatten)]
    pub cc: ProjectCcFlags,
}

#[derive(Subcommand, Debug)]
pub enum ProjectAction {
    /// Rebuild the project annotated by `project` with its own commands (`make check`) in a
    /// copy of its tree where the annotated files replace the originals and the recording
    /// runtime is linked in; coverage per file and in total, every claim checked.
    Measure(ProjectMeasureArgs),
    /// Witnesses for every file `project` annotated: `witness` on each, its runner linked with
    /// the project's other files (compiled from the compilation database in a scratch
    /// directory); tests in OUT/witnesses, with snippets adding them to a CMake or Meson
    /// suite; the settled share of what the tests `project measure` ran leave uncovered.
    Witness(ProjectWitnessArgs),
    /// Join the shard files that `project --shard K/N` runs left in OUT (all N of them) into
    /// the ledgers and the summary of one unsharded run.
    Merge(ProjectMergeArgs),
}

/// The limits of `witness` and `project witness`.
#[derive(Args, Debug)]
pub struct WitnessLimitFlags {
    /// Labels of the grey zone asked for a model per function, at most.
    #[arg(long, default_value_t = run::witness::WitnessOptions::PER_FUNCTION)]
    pub per_function: usize,
    /// Wall-clock budget of one function's encoding and models, in seconds.
    #[arg(long = "function-budget-s", value_name = "SECONDS", default_value_t = Seconds(run::witness::WitnessOptions::FUNCTION_MS))]
    pub function_budget_ms: Seconds,
    /// Time limit of one run of a call, in seconds.
    #[arg(long = "run-timeout-s", value_name = "SECONDS", default_value_t = Seconds(run::witness::WitnessOptions::RUN_MS))]
    pub run_timeout_ms: Seconds,
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
}

#[derive(Args, Debug)]
pub struct ProjectWitnessArgs {
    /// The output directory of `covprune project`.
    #[arg(short = 'o', long = "out")]
    pub out_dir: PathBuf,
    /// The C compiler (default `cc`).
    #[arg(long, value_name = "CC")]
    pub cc: Option<String>,
    #[command(flatten)]
    pub limits: WitnessLimitFlags,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ProjectMergeArgs {
    /// The output directory the shard runs wrote into.
    #[arg(short = 'o', long = "out")]
    pub out_dir: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ProjectMeasureArgs {
    /// The output directory of `covprune project`.
    #[arg(short = 'o', long = "out")]
    pub out_dir: PathBuf,
    /// A shell command that builds and tests the project (repeatable: run in order).
    #[arg(long = "test-cmd", value_name = "CMD")]
    pub test_cmds: Vec<String>,
    /// A file of test commands, one shell command a line (`#` starts a comment line).
    #[arg(long, value_name = "FILE")]
    pub tests: Option<PathBuf>,
    /// Where the commands run: relative to the database's directory (default: there).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The compiler `$CC` names; wrappers also stand for cc, gcc and clang on PATH.
    #[arg(long, value_name = "CC")]
    pub cc: Option<String>,
    /// Time limit of each command, in seconds.
    #[arg(long = "test-timeout-s", value_name = "SECONDS", default_value_t = Seconds(run::project_measure::ProjectMeasureOptions::TEST_TIMEOUT_MS))]
    pub test_timeout_ms: Seconds,
    /// Build in this (new or empty) directory and keep it.
    #[arg(long, value_name = "DIR")]
    pub keep_build: Option<PathBuf>,
    #[command(flatten)]
    pub markdown: MarkdownFlags,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Preprocessing flags added to every file of a project.
#[derive(Args, Debug, Clone, Default)]
pub struct ProjectCcFlags {
    /// The C compiler used to preprocess (default: the database's).
    #[arg(long, value_name = "CC")]
    pub cc: Option<String>,
    /// Add a directory to the include path.
    #[arg(short = 'I', value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
    /// Define a macro (`NAME` or `NAME=VALUE`).
    #[arg(short = 'D', value_name = "MACRO")]
    pub defines: Vec<String>,
}

#[derive(Args, Debug)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub action: CacheAction,
    /// The cache's directory (default as for `project`).
    #[arg(long, value_name = "DIR", global = true)]
    pub cache: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum CacheAction {
    /// How many results the cache holds, its size, and how often it was used.
    Stats,
    /// Remove every stored result.
    Clear,
}

#[derive(Args, Debug)]
pub struct ExportAcslArgs {
    /// The annotated C file (`pc_label(cond, id, "TAG");` statements).
    pub file: PathBuf,
    /// 1: `check !(p)` (proved: infeasible); 2: `check p` (proved: always true when reached).
    #[arg(long, default_value_t = 1)]
    pub step: u8,
    /// Output file (default: the file's name with `.acsl.c`).
    #[arg(short = 'o', long = "out", value_name = "FILE")]
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
    /// The C source file (left as it is).
    pub file: PathBuf,
    #[command(flatten)]
    pub criteria: CriteriaFlags,
    /// Output directory (default: the file's directory).
    #[arg(short = 'o', long = "out")]
    pub out_dir: Option<PathBuf>,
    /// Replace the output's labels file even when it records measured coverage.
    #[arg(long)]
    pub force: bool,
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
    #[arg(long, value_delimiter = ',', default_value = "1,2,3", value_parser = parse_step)]
    pub steps: Vec<u8>,
    /// Step 3: do not use solver models to rule out pairs before asking (for measurement).
    #[arg(long)]
    pub no_model_filter: bool,
    /// Decide the labels of functions whose callers are all known without their calling
    /// contexts (only with arbitrary arguments; for measurement).
    #[arg(long)]
    pub no_contexts: bool,
    /// Prune a label as subsumed only by a subsumer shown feasible by a witness (a run from an
    /// entry with unknown callers that covers it whatever the encoding leaves unknown), so
    /// that no pruned label is left with only infeasible subsumers; fewer labels are pruned.
    #[arg(long)]
    pub witnessed_subsumers: bool,
    #[command(flatten)]
    pub limits: SolverFlags,
    /// Take the file's static functions and variables as called and touched from outside it
    /// (a test that `#include`s the file reaches them): no claim then rests on "all callers
    /// are in this file".
    #[arg(long)]
    pub open_statics: bool,
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
    #[arg(long, value_name = "K/N", value_parser = run::prune::parse_shard)]
    pub shard: Option<(usize, usize)>,
    /// Record each label's solver time in the ledger (which then differs run to run).
    #[arg(long)]
    pub timings: bool,
    /// Write every solver question as an SMT-LIB 2 file in DIR (FUNCTION.NNNNN.smt2, and
    /// FUNCTION-contexts.NNNNN.smt2 for its callees' labels in their calling contexts, with
    /// covprune's answer in a comment), to replay with any solver.
    #[arg(long, value_name = "DIR")]
    pub dump_smt: Option<PathBuf>,
    /// Keep function results in the verdict cache in DIR and reuse those it holds (`covprune
    /// cache` inspects it): a re-run proves only the functions whose inputs changed.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Prove in this process. By default a supervisor runs the prover as a child process and,
    /// should the solver crash it, restarts it from the journal without the functions that
    /// were in flight (their remaining labels stay unknown).
    #[arg(long)]
    pub in_process: bool,
    #[command(flatten)]
    pub cc: CcFlags,
}

#[derive(Args, Debug)]
pub struct MeasureArgs {
    /// The annotated C file (with its `main`, or included by the test drivers).
    pub file: PathBuf,
    /// A file with one test per line (the program's arguments split as `sh` splits them, with
    /// `< IN`, `> OUT`, `2> ERR`, `2>&1`), or a directory of C test drivers.
    #[arg(long)]
    pub tests: PathBuf,
    /// Each line of the tests file is run by /bin/sh with the program in $PROG (`exec "$PROG"`
    /// is put in front of a line that does not mention it): SIR `universe` files as they are.
    #[arg(long)]
    pub tests_sh: bool,
    /// The directory tests run in and their paths resolve from (default: the tests file's).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The labels file to update (default: the file's name with `.labels`).
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// The ledger whose claims are checked (default: STEM.covprune.json, if it exists).
    #[arg(long)]
    pub ledger: Option<PathBuf>,
    /// Other translation units of the program, built as they are (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub sources: Vec<PathBuf>,
    /// Link with a library (`-l m`, `-lm`).
    #[arg(short = 'l', value_name = "NAME")]
    pub libs: Vec<String>,
    /// Add a directory to the library path.
    #[arg(short = 'L', value_name = "DIR")]
    pub lib_dirs: Vec<PathBuf>,
    /// More link flags, split like a shell splits them (e.g. "-pthread -Wl,--as-needed").
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    pub ldflags: Vec<String>,
    /// Run every test on the original program too (named by the build record `annotate`
    /// writes, or --original) and fail with exit code 4 where the annotated program behaves
    /// differently. On by default when the original is known and the suite has at most 10,000
    /// tests.
    #[arg(long, conflicts_with = "no_check_behaviour")]
    pub check_behaviour: bool,
    /// Do not run the original program.
    #[arg(long)]
    pub no_check_behaviour: bool,
    /// The original program (default: the one the build record beside FILE names).
    #[arg(long, value_name = "FILE")]
    pub original: Option<PathBuf>,
    /// A test running longer than this, in seconds (e.g. `0.5`), is stopped and reported.
    #[arg(long = "test-timeout-s", value_name = "SECONDS", default_value_t = Seconds(run::measure::MeasureOptions::TEST_TIMEOUT_MS))]
    pub test_timeout_ms: Seconds,
    /// Write a Mutation Testing Elements report of the WM labels to this file.
    #[arg(long)]
    pub elements: Option<PathBuf>,
    /// Exit with code 1 when the cleaned coverage is below this: `PCT` for all labels, or
    /// `CRIT=PCT` per criterion, comma-separated (e.g. `CC=90,MCC=75`).
    #[arg(long, value_name = "SPEC")]
    pub fail_under: Option<String>,
    #[command(flatten)]
    pub markdown: MarkdownFlags,
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
    /// Exit with code 1 when there are actionable findings (the SARIF results).
    #[arg(long)]
    pub fail_on_findings: bool,
    #[command(flatten)]
    pub markdown: MarkdownFlags,
    #[command(flatten)]
    pub cc: CcFlags,
}

#[derive(Args, Debug)]
pub struct WitnessArgs {
    /// The annotated C file, pruned.
    pub file: PathBuf,
    /// The directory the tests are written to (new, empty, or holding only tests an earlier
    /// run wrote: the new ones are numbered after them).
    #[arg(short = 'o', long, value_name = "DIR")]
    pub out: PathBuf,
    /// The ledger (default: STEM.covprune.json).
    #[arg(long)]
    pub ledger: Option<PathBuf>,
    /// The labels file (default: STEM.labels, if it exists).
    #[arg(long)]
    pub labels: Option<PathBuf>,
    #[command(flatten)]
    pub limits: WitnessLimitFlags,
    /// Link the runner with this object, archive or `-lNAME` too (repeatable): the code of
    /// the functions the file calls but other files define.
    #[arg(long, value_name = "OBJ")]
    pub link: Vec<String>,
    /// Write SARIF 2.1.0 with the findings (runs that crashed or tripped a sanitizer).
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub cc: CcFlags,
}

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

/// The markdown summary of a run (`measure`, `project measure`, `audit`, `exclude`).
#[derive(Args, Debug, Clone, Default)]
pub struct MarkdownFlags {
    /// Also write a markdown summary to paste into a pull request: per criterion (or kind of
    /// item) raw and cleaned coverage, what no test covers with links to its lines, alarms.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// A summary an earlier run wrote: the new one says what changed since.
    #[arg(long, value_name = "FILE", requires = "markdown")]
    pub markdown_since: Option<PathBuf>,
}

impl MarkdownFlags {
    /// Reads the previous summary before anything runs (a bad one is refused first).
    pub fn previous(&self) -> run::Result<Option<crate::report::summary::Summary>> {
        self.markdown_since
            .as_deref()
            .map(crate::report::summary::Summary::read)
            .transpose()
            .map_err(|e| run::Error::BadInput(anyhow::anyhow!(e)))
    }

    /// Writes `summary` when asked, compared with `previous`.
    pub fn write(
        &self,
        summary: &crate::report::summary::Summary,
        previous: Option<&crate::report::summary::Summary>,
    ) -> run::Result<()> {
        let Some(path) = &self.markdown else {
            return Ok(());
        };
        crate::report::labels::write_atomic(path, summary.to_markdown(previous))
            .map_err(|e| run::error::write_failed(path, e))
    }
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
            database_entry: None,
        }
    }

    /// The options for an annotated file: these flags, then those its build record holds.
    pub fn options_for(&self, file: &std::path::Path) -> run::Result<PreprocessOptions> {
        run::options_for(file, &self.to_options())
    }
}

/// The criteria to annotate and their parameters (`annotate`, `project`).
#[derive(Args, Debug, Clone)]
pub struct CriteriaFlags {
    /// Comma-separated criteria (see `covprune criteria`).
    #[arg(long, value_delimiter = ',', required = true, value_parser = parse_criterion)]
    pub criteria: Vec<Criterion>,
    /// MCC: decisions with more atoms than this get no labels.
    #[arg(long, default_value_t = Limits::default().mcc_max_atoms)]
    pub mcc_max_atoms: usize,
    /// NCC: the number of atoms combined.
    #[arg(long = "ncc-n", alias = "n", default_value_t = Limits::default().ncc_n)]
    pub ncc_n: usize,
    /// PCT: the number of a function's predicates taken into account (labels grow as 2^n).
    #[arg(long, default_value_t = Limits::default().pct_max_predicates)]
    pub pct_max_predicates: usize,
    /// WM, WM-S: mutation operator groups, e.g. `AOR,ROR`, or `-ABS,-AOR` to remove groups.
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pub mutators: Vec<String>,
}

impl CriteriaFlags {
    /// The annotation options for `file`, written to `out_dir`.
    pub fn annotate_options(
        self,
        file: PathBuf,
        out_dir: Option<PathBuf>,
        preprocess: PreprocessOptions,
        force: bool,
    ) -> run::annotate::AnnotateOptions {
        run::annotate::AnnotateOptions {
            file,
            criteria: self.criteria,
            out_dir,
            mcc_max_atoms: self.mcc_max_atoms,
            ncc_n: self.ncc_n,
            pct_max_predicates: self.pct_max_predicates,
            mutators: self.mutators,
            preprocess,
            force,
        }
    }
}

/// The prover's limits and parallelism (`prune`, `project`).
#[derive(Args, Debug, Clone)]
pub struct SolverFlags {
    /// Time limit of each proof obligation, in seconds (e.g. `0.3`).
    #[arg(long = "timeout-s", value_name = "SECONDS", default_value_t = Seconds(run::prune::DEFAULT_TIMEOUT_MS.into()), value_parser = parse_seconds_u32)]
    pub timeout_ms: Seconds,
    /// Deterministic resource limit of each obligation (Z3 rlimit units; 0: none, the time limit
    /// decides). With it, the time limit is only a backstop (5x), so that ledgers are the same
    /// run to run and for any --jobs. Default: 5,000,000 for the default 2 s, scaled with
    /// --timeout-s; questions with the function's memory written out get three times it
    /// (until one runs out).
    #[arg(long)]
    pub rlimit: Option<u32>,
    /// Parallel workers (default: one per core): worker processes, or threads with
    /// `prune --in-process`.
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
    /// Wall-clock budget per function in seconds (0: none), or per share of a function with more
    /// than 150 labels (its questions split between workers); labels left when it runs out stay
    /// unknown.
    #[arg(long, default_value_t = run::prune::DEFAULT_FUNCTION_BUDGET_S)]
    pub function_budget_s: u64,
}

impl SolverFlags {
    /// The default configuration with these limits (and the solver's memory bound).
    pub fn config(&self, max_memory_mb: u32) -> run::prune::Config {
        run::prune::Config {
            solver: run::prune::SolverConfig {
                timeout_ms: self.timeout_ms.millis_u32(),
                rlimit: self
                    .rlimit
                    .unwrap_or_else(|| run::prune::rlimit_for(self.timeout_ms.millis_u32())),
                max_memory_mb,
                ..run::prune::SolverConfig::default()
            },
            jobs: self.jobs,
            function_budget_s: self.function_budget_s,
            ..run::prune::Config::default()
        }
    }
}

/// A duration flag's value, in milliseconds: written and shown in seconds, fractions allowed
/// (`2`, `0.5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seconds(pub u64);

impl Seconds {
    /// The value as a solver limit (flags read with [`parse_seconds_u32`] fit).
    pub fn millis_u32(self) -> u32 {
        u32::try_from(self.0).unwrap_or(u32::MAX)
    }
}

impl std::str::FromStr for Seconds {
    type Err = String;

    fn from_str(s: &str) -> Result<Seconds, String> {
        parse_seconds(s).map(Seconds)
    }
}

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_multiple_of(1000) {
            write!(f, "{}", self.0 / 1000)
        } else {
            write!(f, "{}", self.0 as f64 / 1000.0)
        }
    }
}

/// A duration flag: seconds, fractions allowed (`2`, `0.5`), more than 0; in milliseconds.
fn parse_seconds(s: &str) -> Result<u64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1e9 => Ok(((v * 1000.0).round() as u64).max(1)),
        _ => Err(format!(
            "`{s}` is not a duration in seconds (a number above 0, e.g. 2 or 0.5)"
        )),
    }
}

fn parse_seconds_u32(s: &str) -> Result<Seconds, String> {
    let ms = parse_seconds(s)?;
    u32::try_from(ms)
        .map(|_| Seconds(ms))
        .map_err(|_| format!("`{s}` seconds is too long (at most 4,000,000)"))
}

/// A step of `prune --steps`.
fn parse_step(s: &str) -> Result<u8, String> {
    match s.trim().parse::<u8>() {
        Ok(n @ 1..=3) => Ok(n),
        _ => Err(format!("there is no step {s} (steps are 1, 2 and 3)")),
    }
}

/// A criterion of `--criteria`, by name (`covprune criteria` lists them).
fn parse_criterion(name: &str) -> Result<Criterion, String> {
    Criterion::from_name(name).ok_or_else(|| {
        let valid: Vec<&str> = Criterion::ALL.iter().map(|c| c.name()).collect();
        format!("unknown criterion `{name}` (valid: {})", valid.join(", "))
    })
}

/// `project --open-statics`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OpenStaticsArg {
    Auto,
    All,
    None,
}

impl From<OpenStaticsArg> for run::inclusion::OpenStatics {
    fn from(a: OpenStaticsArg) -> Self {
        match a {
            OpenStaticsArg::Auto => run::inclusion::OpenStatics::Auto,
            OpenStaticsArg::All => run::inclusion::OpenStatics::All,
            OpenStaticsArg::None => run::inclusion::OpenStatics::None,
        }
    }
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["gcovr", "lcov", "llvm_cov", "mutation"])))]
pub struct ExcludeArgs {
    /// Annotated files (each pruned: its ledger and sites record beside it).
    pub files: Vec<PathBuf>,
    /// The output directory of `covprune project`: all the files it annotated.
    #[arg(long, value_name = "OUT")]
    pub project: Option<PathBuf>,
    /// A gcovr JSON report (`gcovr --json`): proved branches get `"gcovr/excluded": true`.
    #[arg(long, value_name = "FILE")]
    pub gcovr: Option<PathBuf>,
    /// An lcov tracefile (`lcov --capture`, branch coverage on): proved branches' BRDA records
    /// dropped, BRF/BRH counted again.
    #[arg(long, value_name = "FILE")]
    pub lcov: Option<PathBuf>,
    /// An llvm-cov export (`llvm-cov export`, JSON): proved branch sides and MC/DC conditions
    /// left out of its summaries and listed under `covprune/excluded` in each file.
    #[arg(long, value_name = "FILE")]
    pub llvm_cov: Option<PathBuf>,
    /// A mutation report (Mutation Testing Elements JSON, as Mull writes it): mutants proved
    /// equivalent marked `Ignored`, with the reason.
    #[arg(long, value_name = "FILE")]
    pub mutation: Option<PathBuf>,
    /// The report to write (same format).
    #[arg(short = 'o', long = "out")]
    pub out: PathBuf,
    /// The justification of each excluded item (default: OUT.covprune-excluded.json).
    #[arg(long, value_name = "FILE")]
    pub justify: Option<PathBuf>,
    /// Write the report again even when none of its files is an annotated file's original
    /// (refused by default: such a report is of another program).
    #[arg(long)]
    pub allow_unmatched: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub markdown: MarkdownFlags,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_seconds_with_fractions() {
        assert_eq!(parse_seconds("2"), Ok(2000));
        assert_eq!(parse_seconds("0.5"), Ok(500));
        assert_eq!(parse_seconds("0.0001"), Ok(1));
        assert!(parse_seconds("0").is_err());
        assert!(parse_seconds("-1").is_err());
        assert!(parse_seconds("2s").is_err());
        assert!(parse_seconds_u32("5000000").is_err());
        for ms in [1, 500, 2000, 3_600_000] {
            let shown = Seconds(ms).to_string();
            assert_eq!(shown.parse::<Seconds>(), Ok(Seconds(ms)), "{shown}");
        }
        assert_eq!(Seconds(2000).to_string(), "2");
        assert_eq!(Seconds(500).to_string(), "0.5");
    }
}
