//! From parsed arguments to the application layer's options: one configuration built from
//! the defaults and the flags given.

use std::path::PathBuf;

use super::args::{ProjectArgs, PruneArgs};
use crate::run::{self, PreprocessOptions};

pub(super) fn project_options(args: ProjectArgs) -> run::Result<run::project::ProjectOptions> {
    let database = args
        .compile_commands
        .or(args.build_dir)
        .expect("clap requires -p or --compile-commands");
    let mut config = args.limits.config(0);
    config.faults = run::prune::Faults::from_env();
    config.witnessed_subsumers = args.witnessed_subsumers;
    let execution = match std::env::current_exe() {
        Ok(exe) => run::prune::Execution::Pool { exe },
        Err(_) => run::prune::Execution::InProcess,
    };
    let preprocess = PreprocessOptions {
        cc: args.cc.cc,
        include_dirs: args.cc.include_dirs,
        defines: args.cc.defines,
        ..PreprocessOptions::default()
    };
    Ok(run::project::ProjectOptions {
        database,
        files: args.files,
        // `project` annotates its own output tree again on every run.
        annotate: args
            .criteria
            .annotate_options(PathBuf::new(), None, preprocess, true),
        out_dir: args.out_dir.expect("clap requires -o"),
        config,
        execution,
        cache: (!args.no_cache).then(|| args.cache.unwrap_or_else(crate::cache::default_dir)),
        progress: !args.no_progress && !args.json,
        quiet: args.json,
        shard: args.shard,
        cross_file: !args.no_cross_file,
        inline_across_files: args.inline_across_files,
        open_statics: args.open_statics.into(),
    })
}

/// The application layer's prune options from the command line.
pub(super) fn prune_options(args: PruneArgs) -> run::Result<run::prune::PruneOptions> {
    if let Some(e) = &args.entry {
        if e != "main" {
            return Err(anyhow::anyhow!("--entry takes `main` (got `{e}`)").into());
        }
    }
    let execution = if args.in_process {
        run::prune::Execution::InProcess
    } else {
        // The pool runs this executable, found by the system whatever its name.
        match std::env::current_exe() {
            Ok(exe) => run::prune::Execution::Pool { exe },
            Err(_) => run::prune::Execution::InProcess,
        }
    };
    let mut config = args.limits.config(args.max_memory_mb);
    config.faults = run::prune::Faults::from_env();
    config.encode.entry_main = args.entry.is_some();
    config.encode.inline = !args.no_inline;
    config.trace = args.verbose;
    config.steps = args.steps.iter().copied().collect();
    config.model_filter = !args.no_model_filter;
    config.contexts = !args.no_contexts;
    config.witnessed_subsumers = args.witnessed_subsumers;
    config.open_statics = args.open_statics;
    if let Some(dir) = &args.dump_smt {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
        // Workers run elsewhere in the tree: the directory as an absolute path.
        config.dump_smt = Some(dir.canonicalize().unwrap_or_else(|_| dir.clone()));
    }
    let preprocess = args.cc.options_for(&args.file)?;
    Ok(run::prune::PruneOptions {
        file: args.file,
        preprocess,
        labels: args.labels,
        config,
        resume: args.resume,
        shard: args.shard,
        timings: args.timings,
        execution,
        progress: !args.no_progress && !args.json,
        quiet: args.json,
        cache: args.cache,
        imports: Default::default(),
    })
}
