//! The batch-engine recipe run for real: a one-node Slurm cluster started by
//! `benchmarks/slurm/one-node-cluster.sh` (Debian's `slurm-wlm` and `munge`; its state, key,
//! logs and free ports of its own), then `benchmarks/slurm/shard-array.sh`: a job array of
//! `prune --shard K/3` over tritype (CC, and RACC's hyperlabels) and `merge`, whose ledger,
//! labels file and hyperlabels file must equal one unsharded run's byte for byte.

use std::path::Path;
use std::process::Command;

mod common;

/// Stops the cluster however the test ends.
struct Cluster<'a>(&'a Path);

impl Drop for Cluster<'_> {
    fn drop(&mut self) {
        let _ = Command::new("benchmarks/slurm/one-node-cluster.sh")
            .arg(self.0)
            .arg("stop")
            .status();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_slurm_job_array_of_shards_merges_into_the_unsharded_result() {
    common::require("sbatch");
    common::require("munge");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("slurm");
    let (ctld, slurmd) = (free_port(), free_port());
    let _cluster = Cluster(&state);
    let up = Command::new("benchmarks/slurm/one-node-cluster.sh")
        .arg(&state)
        .env("SLURMCTLD_PORT", ctld.to_string())
        .env("SLURMD_PORT", slurmd.to_string())
        .output()
        .expect("the cluster script runs");
    let logs = || {
        ["slurmctld.log", "slurmd.log", "munged.log"]
            .iter()
            .map(|l| std::fs::read_to_string(state.join(l)).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        up.status.success(),
        "the one-node cluster did not start (apt-get install slurm-wlm munge): {}\n{}",
        String::from_utf8_lossy(&up.stderr),
        logs()
    );
    let out = dir.path().join("out");
    let run = Command::new("benchmarks/slurm/shard-array.sh")
        .arg("benchmarks/programs/tritype.c")
        .arg("3")
        .arg(&out)
        .arg("CC,RACC")
        .env("SLURM_CONF", state.join("slurm.conf"))
        .env("COVPRUNE", env!("CARGO_BIN_EXE_covprune"))
        .output()
        .expect("the array script runs");
    let report = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{report}\n{}\n{}",
        String::from_utf8_lossy(&run.stderr),
        logs()
    );
    // Three array tasks, each its shard file, and the merged result as one run's.
    assert!(
        report.contains("| tritype.c | CC,RACC | 3 | 3 |") && report.ends_with("| yes | yes |\n"),
        "{report}"
    );
}
