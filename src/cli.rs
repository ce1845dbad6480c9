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

/// Runs the command line; returns the process exit code.
pub fn run(args: Vec<String>) -> ExitCode {
    let cli = match Cli::try_parse_from(normalize_args(args)) {
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
            print_err(&format!("covprune: error: {e:#}"));
            ExitCode::from(2)
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

fn skipped_note(program: &crate::ir::Program, name: &str) -> String {
    program
        .skipped
        .iter()
        .find(|s| s.name == name)
        .map(|s| format!(" (it was skipped: {})", s.reason))
        .unwrap_or_default()
}
