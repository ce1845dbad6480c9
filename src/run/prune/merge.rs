//! `merge`: the shard files of one `prune --shard K/N` run joined into the ledger and labels
//! file the whole run writes.

use std::path::PathBuf;

use super::written::finish;
use super::{read_inputs, PruneReport};
use crate::frontend::PreprocessOptions;
use crate::ir::import::Imports;
use crate::prune::{self as engine, shard, PruneConfig};
use crate::report::ledger;
use crate::run::error::{Error, Result};

#[derive(Clone, Debug)]
pub struct MergeOptions {
    pub shards: Vec<PathBuf>,
    pub labels: Option<PathBuf>,
    pub preprocess: PreprocessOptions,
    pub timings: bool,
}

/// Joins the shard files of one run into the ledger and labels file the whole run writes.
pub fn merge(opts: &MergeOptions) -> Result<PruneReport> {
    let shards = shard::read_all(&opts.shards)?;
    let file = shards[0].file.clone();
    let source_hash = shards[0].source_hash.clone();
    let inputs = read_inputs(
        &file,
        opts.labels.clone(),
        &opts.preprocess,
        &Imports::default(),
        false,
    )?;
    if ledger::source_hash(&inputs.source) != source_hash {
        return Err(
            anyhow::anyhow!("{} changed since the shards were proved", file.display()).into(),
        );
    }
    let t0 = std::time::Instant::now();
    let view = shards[0].view;
    let config = shards[0]
        .config
        .clone()
        .unwrap_or_else(|| PruneConfig::of_view(view));
    if shards.iter().any(|s| s.view != view) {
        return Err(anyhow::anyhow!(
            "the shards were proved with different entries or --open-statics"
        )
        .into());
    }
    let (mut results, mut shares) = (Vec::new(), Vec::new());
    for s in shards {
        results.extend(s.results);
        shares.extend(s.shares);
    }
    let results = engine::finish_shards(&inputs.program, &config, results, shares)
        .map_err(Error::BadInput)?;
    let (verdicts, run_stats) = engine::combine(results);
    finish(
        &file,
        inputs,
        verdicts,
        &run_stats,
        t0.elapsed().as_millis(),
        (opts.timings, &config),
    )
}
