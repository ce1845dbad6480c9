//! The peer of the `all` benchmark: Frama-C's WP asked the same step-1 obligations as
//! covprune, installed from Debian's packages when missing, with a why3 configuration of its
//! own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

/// Frama-C's WP (Debian's frama-c-base, why3, z3), with a why3 configuration of its own.
pub(crate) struct Peer {
    why3_config: PathBuf,
    version: String,
}

impl Peer {
    /// Finds Frama-C, installing it with apt-get when it is missing; configures why3.
    pub(crate) fn setup(out: &Path) -> Result<Peer> {
        let have = |c: &str| {
            std::process::Command::new(c)
                .arg("-version")
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !have("frama-c") {
            eprintln!("peer: installing frama-c-base why3 z3 with apt-get");
            let ok = std::process::Command::new("apt-get")
                .args(["install", "-y", "frama-c-base", "why3", "z3"])
                .status()
                .is_ok_and(|s| s.success());
            if !ok || !have("frama-c") {
                bail!("Frama-C is missing and `apt-get install -y frama-c-base why3 z3` did not install it");
            }
        }
        let why3_config = std::env::temp_dir().join("covprune-why3.conf");
        let st = std::process::Command::new("why3")
            .args(["config", "detect"])
            .env("WHY3CONFIG", &why3_config)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .context("why3 config detect")?;
        if !st.success() {
            bail!("`why3 config detect` failed");
        }
        let version = std::process::Command::new("frama-c")
            .arg("-version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        let _ = out;
        eprintln!("peer: Frama-C {version}, WP with Z3 through why3");
        Ok(Peer {
            why3_config,
            version,
        })
    }

    /// Exports the step-1 obligations of `annotated` as ACSL checks and asks WP: a label is
    /// proved when every goal of its name is valid.
    pub(crate) fn step1(
        &self,
        exe: &Path,
        annotated: &Path,
        jobs: usize,
        timeout_s: u32,
        max: Duration,
        ours: &BTreeSet<u64>,
    ) -> Result<Value> {
        let dir = annotated.parent().unwrap_or(Path::new("."));
        let acsl = annotated.with_extension("acsl.c");
        let out = std::process::Command::new(exe)
            .arg("export-acsl")
            .arg(annotated)
            .args(["--step", "1", "--json", "-o"])
            .arg(&acsl)
            .output()?;
        if !out.status.success() {
            bail!(
                "export-acsl failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let exported: Value = serde_json::from_slice(&out.stdout)?;
        let ids: BTreeSet<u64> = exported["obligations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| o["id"].as_u64())
            .collect();
        let t = Instant::now();
        let log_path = acsl.with_extension("wp.log");
        let log_file = std::fs::File::create(&log_path)?;
        let mut child = {
            use std::os::unix::process::CommandExt;
            std::process::Command::new("frama-c")
                .current_dir(dir)
                .env("WHY3CONFIG", &self.why3_config)
                // The corpus is GNU C11 (`_Noreturn`, `__builtin_bswap32`).
                .args(["-c11", "-machdep", "gcc_x86_64"])
                .args(["-wp", "-wp-model", "Typed", "-wp-prover", "z3"])
                .args(["-wp-timeout", &timeout_s.to_string()])
                .args(["-wp-par", &jobs.to_string()])
                // Only the label checks: not the preconditions of library calls.
                .args(["-wp-prop", "@check", "-wp-no-rte", "-wp-cache", "none"])
                // An annotation Frama-C cannot type is dropped (and counted), not fatal.
                .args(["-kernel-warn-key", "annot-error=active"])
                .arg(&acsl)
                .stdout(log_file.try_clone()?)
                .stderr(log_file)
                // Its own process group, so that a stop takes why3's server and provers too.
                .process_group(0)
                .spawn()?
        };
        let mut stopped = false;
        let status = loop {
            if let Some(s) = child.try_wait()? {
                break Some(s);
            }
            if t.elapsed() > max {
                // `--`: a negative number after it is a process group, not a signal.
                let _ = std::process::Command::new("kill")
                    .args(["-s", "KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                stopped = true;
                break None;
            }
            std::thread::sleep(Duration::from_millis(500));
        };
        let wall = t.elapsed().as_secs_f64();
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        if let Some(status) = status.filter(|s| !s.success()) {
            let tail: Vec<&str> = log.lines().rev().take(8).collect();
            bail!(
                "frama-c failed ({status}): {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            );
        }
        // `[wp] [Qed] Goal typed_f_check_covprune_l12 : Valid` (one goal per place the label
        // is written: `_2`, `_3`, ... for the next ones).
        let mut goals: BTreeMap<u64, Vec<bool>> = BTreeMap::new();
        for l in log.lines() {
            let Some(rest) = l.split(" Goal ").nth(1) else {
                continue;
            };
            let Some((name, status)) = rest.split_once(" : ") else {
                continue;
            };
            let Some(tail) = name.split("_check_covprune_l").nth(1) else {
                continue;
            };
            let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(id) = digits.parse::<u64>() {
                goals
                    .entry(id)
                    .or_default()
                    .push(status.trim_start().starts_with("Valid"));
            }
        }
        let proved: BTreeSet<u64> = goals
            .iter()
            .filter(|(_, v)| v.iter().all(|b| *b))
            .map(|(id, _)| *id)
            .collect();
        let ours_exported: BTreeSet<u64> = ours.intersection(&ids).copied().collect();
        // Which ones, to look at: a label proved by one tool only is a finding of one side.
        let only_covprune: Vec<u64> = ours_exported.difference(&proved).copied().collect();
        let only_peer: Vec<u64> = proved.difference(&ours_exported).copied().collect();
        Ok(json!({
            "tool": format!("Frama-C {} WP (Typed, Z3 4.8.12 via why3, {timeout_s} s, -wp-par {jobs})", self.version),
            "obligations": ids.len(),
            "goals_seen": goals.len(),
            "proved": proved.len(),
            "covprune_proved": ours_exported.len(),
            "both": proved.intersection(&ours_exported).count(),
            "only_covprune": only_covprune.len(),
            "only_peer": only_peer.len(),
            "only_covprune_ids": only_covprune,
            "only_peer_ids": only_peer,
            "wall_s": wall,
            // Stopped at its time cap: the counts are of the goals it answered by then.
            "stopped_after_s": if stopped { json!(max.as_secs()) } else { Value::Null },
        }))
    }
}
