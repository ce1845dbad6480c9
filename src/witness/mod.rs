//! Witnesses that run: calls built from models of labels no proof settles
//! ([`crate::prune::witness`]) are compiled into one runner with the annotated program, under
//! AddressSanitizer and UndefinedBehaviorSanitizer (a sanitizer stops the run at the first
//! error it sees), and each is run on its own, bounded in time. A label a run reports covered
//! before it ends, crashes or is stopped was covered by a real execution of the program from
//! the call's inputs: it is feasible, and the call is its test. A run that does not cover a
//! label says nothing of it.
//!
//! The tests kept are chosen greedily in call order: a test is kept when it covers a label no
//! earlier kept test covers.

pub mod aliases;
pub mod allocations;
pub mod bases;
pub mod check;
pub mod driver;
pub mod hooks;
pub mod objects;
pub mod outliers;
pub mod replay;
pub mod rounds;
pub mod values;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rayon::prelude::*;

use crate::ir::Program;
use crate::measure::{RunOutcome, TestRun};
use crate::prune::witness::{Call, Origin};

/// The sanitizers' settings of every run of a call: a failed allocation returns null, as the
/// C library's does; a sanitizer that finds an error aborts, so that the run reads as a crash.
pub const ASAN_OPTIONS: &str = "detect_leaks=0:allocator_may_return_null=1:abort_on_error=1";
pub const UBSAN_OPTIONS: &str = "halt_on_error=1:abort_on_error=1";

/// How the runner is built and run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub cc: String,
    /// Flags for the compiler (`-I`, `-D`), before the runner's source.
    pub flags: Vec<String>,
    /// Inputs of the link after the runner's own (objects, archives, `-l`, `-L`).
    pub link: Vec<String>,
    /// The annotated file is already preprocessed ([`driver::preprocessed`]).
    pub preprocessed: bool,
    /// Per run.
    pub timeout: Duration,
}

/// The runs of a set of calls, one per call in the order given, as `measure` records a test's:
/// how it ended (a sanitizer's stop is a crash) and the labels it covered.
#[derive(Clone, Debug, Default)]
pub struct Runs {
    pub runs: Vec<TestRun>,
}

impl Runs {
    /// Runs stopped by the time limit.
    pub fn timed_out(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| r.outcome == RunOutcome::TimedOut)
            .count()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WitnessError {
    #[error("cannot build the witnesses' runner with {cc}: {why}")]
    Build { cc: String, why: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// How the runner and everything linked with it are compiled.
pub const SANITIZED: &[&str] = &[
    "-w",
    "-g",
    "-O0",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
];

/// `source` compiled alone (no flags of the program) into an object beside it in `work`.
pub fn compile_apart(cc: &str, source: &Path, work: &Path) -> Result<PathBuf, WitnessError> {
    let object = work.join(format!(
        "{}.o",
        source.file_stem().unwrap_or_default().to_string_lossy()
    ));
    let out = Command::new(cc)
        .args(SANITIZED)
        .arg("-c")
        .arg(source)
        .arg("-o")
        .arg(&object)
        .output()
        .map_err(|e| WitnessError::Build {
            cc: cc.to_string(),
            why: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(WitnessError::Build {
            cc: cc.to_string(),
            why: String::from_utf8_lossy(&out.stderr)
                .chars()
                .take(4000)
                .collect(),
        });
    }
    Ok(object)
}

/// Compiles `calls` with the annotated file `annotated` in `work` (a scratch directory) and
/// runs each; `done(1)` as each run ends.
pub fn run(
    program: &Program,
    annotated: &Path,
    calls: &[Call],
    opts: &RunOptions,
    work: &Path,
    done: &(dyn Fn(u64) + Sync),
) -> Result<Runs, WitnessError> {
    if calls.is_empty() {
        return Ok(Runs::default());
    }
    let annotated = annotated.canonicalize()?;
    let bodies: Vec<String> = calls
        .iter()
        .enumerate()
        .map(|(k, c)| driver::test_function(program, c, k))
        .collect();
    let source = work.join("covprune_witnesses.c");
    std::fs::write(
        &source,
        driver::runner(
            &annotated.display().to_string(),
            &bodies,
            calls.iter().any(|c| c.fail_allocation.is_some()),
            opts.preprocessed,
        ),
    )?;
    let runtime = work.join("covprune_runtime.c");
    std::fs::write(&runtime, driver::runtime())?;
    // The runner's own code is compiled without the program's flags: a project's include
    // folders may replace the C library's headers (gnulib's `unistd.h` wants its config.h).
    let runtime = compile_apart(&opts.cc, &runtime, work)?;
    let exe = work.join("covprune_witnesses");
    let mut args: Vec<String> = SANITIZED.iter().map(|a| a.to_string()).collect();
    if let Some(dir) = annotated.parent() {
        args.push(format!("-I{}", dir.display()));
    }
    args.extend(opts.flags.iter().cloned());
    args.push(source.display().to_string());
    args.push(runtime.display().to_string());
    args.push("-o".into());
    args.push(exe.display().to_string());
    args.extend(opts.link.iter().cloned());
    args.push("-lm".into());
    let out = Command::new(&opts.cc)
        .args(&args)
        .current_dir(work)
        .output()
        .map_err(|e| WitnessError::Build {
            cc: opts.cc.clone(),
            why: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(WitnessError::Build {
            cc: opts.cc.clone(),
            why: String::from_utf8_lossy(&out.stderr)
                .chars()
                .take(4000)
                .collect(),
        });
    }
    let runs = calls
        .par_iter()
        .enumerate()
        .map(|(k, call)| {
            let r = run_one(&exe, k, call, work, opts.timeout);
            done(1);
            r
        })
        .collect::<std::io::Result<Vec<TestRun>>>()?;
    Ok(Runs { runs })
}

/// Runs test `k` of the runner (`call`) in a directory of its own.
fn run_one(
    exe: &Path,
    k: usize,
    call: &Call,
    work: &Path,
    timeout: Duration,
) -> std::io::Result<TestRun> {
    let dir = work.join(format!("run{k}"));
    std::fs::create_dir_all(&dir)?;
    let out_path = dir.join("covered");
    let err_path = dir.join("stderr");
    let mut child = Command::new(exe)
        .arg(k.to_string())
        .current_dir(&dir)
        .env("ASAN_OPTIONS", ASAN_OPTIONS)
        .env("UBSAN_OPTIONS", UBSAN_OPTIONS)
        .env("COVPRUNE_WITNESS_OUT", &out_path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(&err_path)?))
        .spawn()?;
    let outcome = match crate::measure::wait_within(&mut child, timeout)? {
        RunOutcome::Crashed(signal) => {
            let said = std::fs::read_to_string(&err_path).unwrap_or_default();
            RunOutcome::Crashed(match sanitizer_line(&said) {
                Some(line) => format!("{signal}: {line}"),
                None => signal,
            })
        }
        o => o,
    };
    let text = std::fs::read_to_string(&out_path).unwrap_or_default();
    let covered = text
        .lines()
        .filter_map(|l| l.trim().parse::<u64>().ok())
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(TestRun {
        name: format!(
            "call {k} of {} ({} l{}{})",
            call.function,
            match call.origin {
                Origin::Model => "a model of",
                Origin::Palette => "the palette's values, for",
                Origin::Outliers => "an outlier table, for",
                Origin::Filled => "a model with its structs filled in, of",
                Origin::Aliases => "a model with two pointers into one buffer, of",
            },
            call.target,
            call.fail_allocation
                .map(|n| format!(", allocation {n} failing"))
                .unwrap_or_default()
        ),
        outcome,
        reached: BTreeSet::new(),
        covered,
        crashed_in_label: None,
        bindings: Default::default(),
        sequences: BTreeSet::new(),
    })
}

/// The first line of a sanitizer's report in a run's standard error (AddressSanitizer's
/// `ERROR:` line, UBSan's `runtime error:`), without the process id and the file's path.
fn sanitizer_line(stderr: &str) -> Option<String> {
    let line = stderr.lines().find(|l| {
        l.contains("ERROR: AddressSanitizer")
            || l.contains("ERROR: LeakSanitizer")
            || l.contains("runtime error:")
    })?;
    let line = match line.find("ERROR: ") {
        Some(i) => &line[i + "ERROR: ".len()..],
        None => line
            .split_once(": runtime error: ")
            .map_or(line, |(_, r)| r),
    };
    let line = line.split(" on address ").next().unwrap_or(line);
    Some(line.trim().chars().take(200).collect())
}

/// The tests kept, in call order: each covers a label of `wanted` that no earlier kept test
/// covers. Returns, per kept test, its call's index; and each wanted label covered, with the
/// kept test (its position in the first list) that covers it first.
pub fn choose(runs: &Runs, wanted: &BTreeSet<u64>) -> (Vec<usize>, BTreeMap<u64, usize>) {
    let mut kept = Vec::new();
    let mut by_label: BTreeMap<u64, usize> = BTreeMap::new();
    for (k, run) in runs.runs.iter().enumerate() {
        let new: Vec<u64> = run
            .covered
            .iter()
            .filter(|id| wanted.contains(id) && !by_label.contains_key(id))
            .copied()
            .collect();
        if new.is_empty() {
            continue;
        }
        for id in new {
            by_label.insert(id, kept.len());
        }
        kept.push(k);
    }
    (kept, by_label)
}

/// The file name of kept test `n` (numbered from 1): `TC_n.c`, LTest's form; `CRASH_n.c` for a
/// test whose run crashed or tripped a sanitizer, kept apart from the tests a suite can take.
pub fn test_file(n: usize, crashed: bool) -> PathBuf {
    PathBuf::from(format!("{}_{n}.c", if crashed { "CRASH" } else { "TC" }))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_sanitizers_first_line_without_its_addresses() {
        let asan = "=================================================================\n==123==ERROR: AddressSanitizer: global-buffer-overflow on address 0x55d0 at pc 0x1 bp 0x2 sp 0x3\nREAD of size 4";
        assert_eq!(
            super::sanitizer_line(asan).as_deref(),
            Some("AddressSanitizer: global-buffer-overflow")
        );
        let ubsan = "t.c:12:9: runtime error: index 5 out of bounds for type 'int [4]'\n";
        assert_eq!(
            super::sanitizer_line(ubsan).as_deref(),
            Some("index 5 out of bounds for type 'int [4]'")
        );
        assert_eq!(super::sanitizer_line("Segmentation fault\n"), None);
    }
}
