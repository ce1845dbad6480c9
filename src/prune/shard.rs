//! Shard files (`STEM.shard-K-of-N.json`, schema `covprune-shard/3`): the raw results of one
//! `prune --shard K/N` run, and the checks that a set of them is one whole run to merge.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::shares::ShareResult;
use super::FunctionResult;

pub const SCHEMA: &str = "covprune-shard/3";

/// A shard's results, for `covprune merge`.
#[derive(Serialize, Deserialize)]
pub struct ShardFile {
    pub schema: String,
    /// The annotated file, as given to `prune`.
    pub file: PathBuf,
    /// The journal fingerprint of the run (input and answer-changing options).
    pub fingerprint: String,
    /// The annotated file's bytes, hashed: merge refuses a file changed since.
    pub source_hash: String,
    pub shard: (usize, usize),
    /// The runs the claims hold for (the ledger's view).
    #[serde(default)]
    pub view: super::config::View,
    /// The run's configuration, for what `merge` still asks (the hyperlabels' questions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<super::config::PruneConfig>,
    pub results: Vec<FunctionResult>,
    /// Shares of big functions whose other shares other shards prove: `merge` finishes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shares: Vec<ShareResult>,
}

/// `K/N` with 1 <= K <= N.
pub fn parse(s: &str) -> anyhow::Result<(usize, usize)> {
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

/// Where shard K of N of the annotated file `file` goes.
pub fn path_of(file: &Path, (k, n): (usize, usize)) -> PathBuf {
    PathBuf::from(format!(
        "{}.shard-{k}-of-{n}.json",
        file.with_extension("").display()
    ))
}

/// Reads shard files and checks that they are the N shards of one run, each once.
pub fn read_all(paths: &[PathBuf]) -> anyhow::Result<Vec<ShardFile>> {
    let mut shards: Vec<ShardFile> = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(p)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", p.display()))?;
        let s: ShardFile = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{} is not a covprune shard file: {e}", p.display()))?;
        if s.schema != SCHEMA {
            anyhow::bail!("{}: unknown schema {}", p.display(), s.schema);
        }
        shards.push(s);
    }
    let Some(first) = shards.first() else {
        anyhow::bail!("no shard files given");
    };
    let n = first.shard.1;
    for s in &shards {
        if s.fingerprint != first.fingerprint || s.file != first.file || s.shard.1 != n {
            anyhow::bail!("the shard files come from different runs (file, options or N differ)");
        }
    }
    let mut ks: Vec<usize> = shards.iter().map(|s| s.shard.0).collect();
    ks.sort_unstable();
    ks.dedup();
    if ks != (1..=n).collect::<Vec<_>>() || ks.len() != shards.len() {
        anyhow::bail!("shards {ks:?} of {n} given: every shard 1..={n} is needed, once");
    }
    Ok(shards)
}
