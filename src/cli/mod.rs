//! Command-line interface (clap): parses arguments into the application layer's options
//! ([`crate::run`]), prints what it returns as text or JSON, and turns its errors into the exit
//! codes of [`Exit`] (0 success, 1 findings, 2 bad input, 3 soundness alarm, 70 internal).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod args;
mod commands;
mod options;

pub use args::*;
use options::{project_options, prune_options};

use crate::console::{print_err, print_out};
use crate::run::{self, Exit};

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
        /// The C file.
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
        /// The C file.
        file: PathBuf,
        /// The function whose graph is printed.
        #[arg(long)]
        function: String,
        #[command(flatten)]
        cc: CcFlags,
    },
    /// Print the lowered IR of every function (or one).
    Ir {
        /// The C file.
        file: PathBuf,
        /// Only this function.
        #[arg(long)]
        function: Option<String>,
        #[command(flatten)]
        cc: CcFlags,
    },
    /// Print the call graph: direct calls with call-site counts, linkage, address-taken functions.
    Callgraph {
        /// The C file.
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
    /// For the grey zone (labels no test covers, not proved infeasible): run calls built from
    /// models of them; write the calls that cover some as LTest drivers (DIR/TC_n.c) and record
    /// in the ledger and the .labels file which test shows each feasible.
    Witness(WitnessArgs),
    /// Insert test objectives (labels) for coverage criteria: writes DIR/STEM_labels.c and
    /// DIR/STEM_labels.labels.
    Annotate(AnnotateArgs),
    /// Write the labels of an annotated file as ACSL annotations for Frama-C's WP: step 1
    /// asks `!(p)` at each label, step 2 asks `p` (writes STEM.acsl.c).
    ExportAcsl(ExportAcslArgs),
    /// List the coverage criteria.
    Criteria,
    /// Write the recording runtime `measure` builds annotated programs with
    /// (DIR/covprune_runtime.h to `-include`, DIR/covprune_runtime.c to link), for builds
    /// run by hand; with COVPRUNE_RECORD=FILE a run appends each label it reaches and covers.
    Runtime {
        /// The directory to write into (made when missing).
        #[arg(short = 'o', long = "out")]
        out: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Annotate and prune every C file of a compilation database: the annotated tree in OUT,
    /// a ledger per file, one summary; results are kept in the verdict cache, so that a
    /// re-run proves only the functions whose inputs changed. `project measure` then runs the
    /// project's own tests on the annotated tree.
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Project(ProjectArgs),
    /// Inspect or empty the verdict cache.
    Cache(CacheArgs),
    /// Write another tool's coverage report again with what covprune proved infeasible
    /// excluded (gcovr JSON, lcov tracefile, llvm-cov export, Mutation Testing Elements report),
    /// a sidecar justifying each item, and raw and cleaned coverage; exit 3 when the report
    /// shows a proved-infeasible branch taken.
    Exclude(ExcludeArgs),
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

/// Runs the command line (or, in a pool worker, the worker's side); returns the exit code.
pub fn run(args: Vec<String>) -> ExitCode {
    let json = args.iter().skip(1).any(|a| a == "--json");
    let outcome = if run::prune::is_worker() {
        run::prune::serve_worker().map(|()| Exit::Success)
    } else {
        match Cli::try_parse_from(normalize_args(args)) {
            Ok(cli) => execute(cli.command),
            Err(e) => {
                let _ = e.print();
                if !e.use_stderr() {
                    return ExitCode::from(0);
                }
                if json {
                    // The error's first line, as clap prints it.
                    let text = e.to_string();
                    let first = text.lines().next().unwrap_or_default();
                    print_json_error(first.trim_start_matches("error: "), Exit::BadInput);
                }
                return ExitCode::from(Exit::BadInput.code());
            }
        }
    };
    match outcome {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(e) => {
            if !e.is_reported() {
                print_err(&format!("error: {e}"));
            }
            if json && !crate::console::printed_out() {
                print_json_error(&e.to_string(), e.exit());
            }
            ExitCode::from(e.exit().code())
        }
    }
}

/// Under `--json`, a failure is a JSON document on stdout too: `{"error": ..., "exit": N}`.
fn print_json_error(message: &str, exit: Exit) {
    let v = serde_json::json!({"error": message, "exit": exit.code()});
    print_out(&format!(
        "{}\n",
        serde_json::to_string_pretty(&v).expect("serialises")
    ));
}

/// Prints a report as pretty JSON or as its text.
fn show<R: serde::Serialize>(report: &R, json: bool, text: impl FnOnce(&R) -> String) {
    if json {
        let v = serde_json::to_string_pretty(report).expect("reports serialise");
        print_out(&format!("{v}\n"));
    } else {
        print_out(&text(report));
    }
}

fn execute(command: Command) -> run::Result<Exit> {
    match command {
        Command::Parse {
            file,
            cc,
            json,
            verbose,
        } => {
            let (report, diagnostics) = run::inspect::parse(&file, &cc.options_for(&file)?)?;
            if verbose {
                print_err(&diagnostics);
            }
            show(&report, json, |r| r.to_text(true));
        }
        Command::Cfg { file, function, cc } => {
            print_out(&run::inspect::cfg(
                &file,
                &function,
                &cc.options_for(&file)?,
            )?);
        }
        Command::Ir { file, function, cc } => {
            print_out(&run::inspect::ir(
                &file,
                function.as_deref(),
                &cc.options_for(&file)?,
            )?);
        }
        Command::Callgraph { file, cc } => {
            print_out(&run::inspect::callgraph(&file, &cc.options_for(&file)?)?);
        }
        Command::Criteria => print_out(&run::inspect::criteria()),
        Command::Runtime { out, json } => {
            let report = run::inspect::runtime(&out)?;
            show(&report, json, run::inspect::RuntimeReport::to_text);
        }
        Command::Project(ProjectArgs {
            action: Some(ProjectAction::Measure(args)),
            ..
        }) => return commands::project_measure(args),
        Command::Project(ProjectArgs {
            action: Some(ProjectAction::Witness(args)),
            ..
        }) => {
            let report = run::project_witness::project_witness(
                &run::project_witness::ProjectWitnessOptions {
                    out_dir: args.out_dir,
                    cc: args.cc,
                    per_function: args.limits.per_function,
                    function_ms: args.limits.function_budget_ms.0,
                    run_ms: args.limits.run_timeout_ms.0,
                    jobs: args.limits.jobs,
                    progress: !args.json,
                },
            )?;
            show(
                &report,
                args.json,
                run::project_witness::ProjectWitnessReport::to_text,
            );
            if let Some(error) = report.error() {
                return Err(error);
            }
        }
        Command::Project(ProjectArgs {
            action: Some(ProjectAction::Merge(args)),
            ..
        }) => {
            let report = run::project::project_merge(&args.out_dir)?;
            show(&report, args.json, run::project::ProjectReport::to_text);
            if !report.failures.is_empty() {
                return Ok(Exit::BadInput);
            }
        }
        Command::Project(args) => {
            let json = args.json;
            let report = run::project::project(&project_options(args)?)?;
            show(&report, json, run::project::ProjectReport::to_text);
            if !report.failures.is_empty() {
                return Ok(Exit::BadInput);
            }
        }
        Command::Cache(args) => {
            let dir = args.cache.unwrap_or_else(crate::cache::default_dir);
            match args.action {
                CacheAction::Stats => {
                    let stats = run::project::cache_stats(&dir)?;
                    show(&stats, args.json, crate::cache::CacheStats::to_text);
                }
                CacheAction::Clear => {
                    let (removed, stats) = run::project::cache_clear(&dir)?;
                    show(&stats, args.json, |s| {
                        format!("removed {removed} results from {}\n", s.path)
                    });
                }
            }
        }
        Command::Prune(args) => {
            let json = args.json;
            let outcome = run::prune::prune(&prune_options(args)?)?;
            show(&outcome, json, run::prune::PruneOutcome::to_text);
        }
        Command::Merge(args) => {
            let report = run::prune::merge(&run::prune::MergeOptions {
                shards: args.shards,
                labels: args.labels,
                preprocess: args.cc.to_options(),
                timings: args.timings,
            })?;
            let outcome = run::prune::PruneOutcome::Whole(report);
            show(&outcome, args.json, run::prune::PruneOutcome::to_text);
        }
        Command::Measure(args) => return commands::measure(args),
        Command::Witness(args) => return commands::witness(args),
        Command::Audit(args) => return commands::audit(args),
        Command::Exclude(args) => return commands::exclude(args),
        Command::Annotate(args) => {
            let preprocess = args.cc.to_options();
            let options =
                args.criteria
                    .annotate_options(args.file, args.out_dir, preprocess, args.force);
            let report = run::annotate::annotate(&options)?;
            show(&report, args.json, run::annotate::AnnotateReport::to_text);
        }
        Command::ExportAcsl(args) => {
            let report = run::inspect::export_acsl(&run::inspect::ExportOptions {
                file: args.file,
                step: args.step,
                output: args.output,
                assert: args.assert,
                keep_line_markers: args.keep_line_markers,
            })?;
            for (id, why) in &report.skipped_labels {
                print_err(&format!("l{id} not exported: {why}\n"));
            }
            show(&report, args.json, run::inspect::ExportReport::to_text);
        }
    }
    Ok(Exit::Success)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    /// Flags left out mean what the engine's default configuration does.
    #[test]
    fn default_flags_are_the_default_configuration() {
        let Command::Prune(args) = Cli::parse_from(["covprune", "prune", "f.c"]).command else {
            panic!("prune parses as prune");
        };
        let given = prune_options(args).unwrap().config;
        let default = run::prune::Config::default();
        assert_eq!(given.answer_key(), default.answer_key());
        assert_eq!(given.jobs, default.jobs);
    }

    /// Every command and argument says what it is in `--help`; every output flag is `-o/--out`.
    #[test]
    fn every_argument_is_described_and_outputs_are_dash_o() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                let id = a.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                if a.get_help().is_none() {
                    missing.push(format!("{path} {id}: no description"));
                }
                if a.get_long() == Some("out") && a.get_short() != Some('o') {
                    missing.push(format!("{path} --out: no -o"));
                }
                if a.get_long() == Some("output") {
                    missing.push(format!("{path} --output: not --out"));
                }
            }
            for sub in cmd.get_subcommands() {
                if sub.get_about().is_none() {
                    missing.push(format!("{path} {}: no description", sub.get_name()));
                }
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "covprune", &mut missing);
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }
}
