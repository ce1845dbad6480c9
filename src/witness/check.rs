//! The written tests checked as a team would take them: each `TC_n.c` compiled on its own
//! (not inside the runner), with the file's flags, the recording runtime and the code of the
//! project's other files, run, and its record compared with the labels the ledger says it
//! shows feasible. A test that does not build, or does not cover one of its labels, is
//! named.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rayon::prelude::*;

use crate::measure::RunOutcome;

/// How the tests are built: the compiler, the file's flags and what is linked after the test.
pub struct TestBuild<'a> {
    pub cc: &'a str,
    pub flags: &'a [String],
    pub link: &'a [String],
    /// Scratch space.
    pub work: &'a Path,
}

/// A test that did not do what the ledger says.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Broken {
    pub test: String,
    pub why: String,
}

/// Checks each test of `claimed` (test file name in `dir` → the labels it shows) and returns
/// the ones that failed; a test's run is limited to `timeout`.
pub fn check(
    build: &TestBuild,
    dir: &Path,
    claimed: &BTreeMap<String, BTreeSet<u64>>,
    timeout: Duration,
) -> std::io::Result<Vec<Broken>> {
    let rt = build.work.join("covprune-check-runtime");
    std::fs::create_dir_all(&rt)?;
    std::fs::write(
        rt.join("covprune_runtime.h"),
        crate::measure::runtime::HEADER,
    )?;
    std::fs::write(
        rt.join("covprune_runtime.c"),
        crate::measure::runtime::SOURCE,
    )?;
    // The runtime apart from the project's flags (its include folders may replace the C
    // library's headers).
    let rt_object = super::compile_apart(build.cc, &rt.join("covprune_runtime.c"), &rt)
        .map_err(std::io::Error::other)?;
    let results: Vec<Option<Broken>> = claimed
        .par_iter()
        .map(|(test, labels)| one(build, &rt, &rt_object, dir, test, labels, timeout))
        .collect::<std::io::Result<_>>()?;
    Ok(results.into_iter().flatten().collect())
}

fn one(
    build: &TestBuild,
    rt: &Path,
    rt_object: &Path,
    dir: &Path,
    test: &str,
    labels: &BTreeSet<u64>,
    timeout: Duration,
) -> std::io::Result<Option<Broken>> {
    let stem = test.trim_end_matches(".c");
    let slot = build.work.join(format!("check-{stem}"));
    std::fs::create_dir_all(&slot)?;
    let exe = slot.join(stem);
    let out = Command::new(build.cc)
        .args(super::SANITIZED)
        .arg("-include")
        .arg(rt.join("covprune_runtime.h"))
        .args(build.flags)
        .arg(dir.join(test))
        .arg(rt_object)
        .arg("-o")
        .arg(&exe)
        .args(build.link)
        .arg("-lm")
        .output()?;
    let broken = |why: String| {
        Ok(Some(Broken {
            test: test.to_string(),
            why,
        }))
    };
    if !out.status.success() {
        let first = String::from_utf8_lossy(&out.stderr)
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or("the compiler failed")
            .trim()
            .to_string();
        return broken(format!("does not build: {first}"));
    }
    let record: PathBuf = slot.join("record");
    let mut child = Command::new(&exe)
        .env("COVPRUNE_RECORD", &record)
        .env("ASAN_OPTIONS", super::ASAN_OPTIONS)
        .env("UBSAN_OPTIONS", super::UBSAN_OPTIONS)
        .current_dir(&slot)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let outcome = crate::measure::wait_within(&mut child, timeout)?;
    let text = std::fs::read_to_string(&record).unwrap_or_default();
    let covered = crate::measure::runtime::parse_record(&text).covered;
    let missed: Vec<String> = labels
        .iter()
        .filter(|l| !covered.contains(l))
        .map(|l| format!("l{l}"))
        .collect();
    if !missed.is_empty() {
        return broken(format!(
            "does not cover {} (it {})",
            missed.join(" "),
            match outcome {
                RunOutcome::Exited(c) => format!("exited {c}"),
                RunOutcome::Crashed(s) => format!("crashed: {s}"),
                RunOutcome::TimedOut => "timed out".into(),
            }
        ));
    }
    Ok(None)
}
